// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr.c - the ibv_qp_ex send API (ibv_wr_start ... ibv_wr_complete) for QPs
 * created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
 *
 * wr_start takes the SQ lock and keeps it until wr_complete or wr_abort.
 * Each builder (wr_send, wr_rdma_write ...) starts a WQE in the next
 * unpublished slot; the setters complete it.  Nothing is published before
 * wr_complete, which publishes the whole batch with one release store of
 * the producer index and rings the doorbell once.  The builders and setters
 * cannot report errors, so the first one is kept in sq->wr_err; from then
 * on nothing more is built, and wr_complete drops the batch and returns
 * it, as ibv_wr_post(3) specifies.
 */
#include <errno.h>

#include "sroce.h"

/* Bits of enum ibv_qp_create_send_ops_flags each QP type supports. */
#define WR_UD_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define WR_UC_OPS	(WR_UD_OPS | IBV_QP_EX_WITH_RDMA_WRITE |	\
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			 IBV_QP_EX_WITH_LOCAL_INV)
#define WR_RC_OPS	(WR_UC_OPS | IBV_QP_EX_WITH_RDMA_READ |		\
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		\
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
			 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV)
#define WR_XRC_OPS	(WR_RC_OPS & ~(uint64_t)IBV_QP_EX_WITH_BIND_MW)

/*
 * FLUSH: ibv_wr_flush() and IBV_QP_EX_WITH_FLUSH came with rdma-core 45,
 * its wr_flush slot right after wr_atomic_write in struct ibv_qp_ex.
 */
#if defined(SROCE_RDMA_CORE_MAJOR) && SROCE_RDMA_CORE_MAJOR >= 45
#define WR_HAVE_FLUSH 1
#define WR_FLUSH_OPS ((uint64_t)IBV_QP_EX_WITH_FLUSH)
#else
#define WR_HAVE_FLUSH 0
#define WR_FLUSH_OPS ((uint64_t)0)
#endif

/* wr_flags a WQE takes; IBV_SEND_INLINE is decided by the data setter. */
#define WR_SEND_FLAGS							\
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED)

/**
 * sroce_wr_check_ops() - can a QP of @qp_type offer @send_ops_flags?
 * @ctx: the QP's context, for the features its module offers
 * @qp_type: RC, UC, UD or XRC send
 * @send_ops_flags: enum ibv_qp_create_send_ops_flags
 *
 * Return: 0, or EOPNOTSUPP for operations sroce does not have (TSO,
 * anything newer; atomic write or flush from a module without it) or that
 * the QP type cannot carry.
 */
int sroce_wr_check_ops(const struct sroce_context *ctx,
		       enum ibv_qp_type qp_type, uint64_t send_ops_flags)
{
	uint64_t ops;

	switch ((unsigned int)qp_type) {
	case IBV_QPT_RC:
		ops = WR_RC_OPS;
		if (ctx->features & SROCE_FEATURE_ATOMIC_WRITE)
			ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
		if (ctx->features & SROCE_FEATURE_FLUSH)
			ops |= WR_FLUSH_OPS;
		break;
	case IBV_QPT_UC:
		ops = WR_UC_OPS;
		break;
	case IBV_QPT_UD:
		ops = WR_UD_OPS;
		break;
	case IBV_QPT_XRC_SEND:
		ops = WR_XRC_OPS;
		if (ctx->features & SROCE_FEATURE_ATOMIC_WRITE)
			ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
		if (ctx->features & SROCE_FEATURE_FLUSH)
			ops |= WR_FLUSH_OPS;
		break;
	default:
		return EOPNOTSUPP;
	}
	return (send_ops_flags & ~ops) ? EOPNOTSUPP : 0;
}

static struct sroce_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return to_sqp(&qpx->qp_base);
}

static void wr_fail(struct sroce_sq *sq, int err)
{
	if (!sq->wr_err)
		sq->wr_err = err;
}

/*
 * Close the WQE being built: a UD WQE must have been given an address, an
 * XRC WQE its remote SRQ.
 */
static void wr_end_wqe(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;

	if (sq->wr_wqe && qp->vqp.qp.qp_type == IBV_QPT_UD && !sq->wr_ud_set)
		wr_fail(sq, EINVAL);
	if (sq->wr_wqe && qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND &&
	    !sq->wr_xrc_set)
		wr_fail(sq, EINVAL);
	sq->wr_wqe = NULL;
}

/*
 * Start a WQE for @opcode in the next unpublished slot, from the wr_id and
 * wr_flags the caller set in the ibv_qp_ex.
 * Return: the WQE, or NULL once the batch has failed.
 */
static struct sroce_send_wqe *wr_begin(struct ibv_qp_ex *qpx,
				       unsigned int opcode)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_sq *sq = &qp->sq;
	struct sroce_send_wqe *wqe;

	wr_end_wqe(qp);
	if (sq->wr_err)
		return NULL;
	if (!sq->ring.base || qpx->wr_flags & ~(unsigned int)(WR_SEND_FLAGS |
							     IBV_SEND_INLINE)) {
		wr_fail(sq, EINVAL);
		return NULL;
	}
	if (!sroce_ring_room(&sq->ring, sq->wr_count, sq->max_wr)) {
		wr_fail(sq, ENOMEM);
		return NULL;
	}

	wqe = sroce_ring_slot(&sq->ring, sq->ring.head + sq->wr_count);
	*wqe = (struct sroce_send_wqe){
		.wr_id = qpx->wr_id,
		.opcode = opcode,
		.send_flags = qpx->wr_flags & WR_SEND_FLAGS,
	};
	sq->wr_count++;
	sq->wr_wqe = wqe;
	sq->wr_ud_set = false;
	sq->wr_xrc_set = false;
	return wqe;
}

/* The WQE a setter applies to, or NULL (recording EINVAL if none). */
static struct sroce_send_wqe *wr_current(struct ibv_qp_ex *qpx)
{
	struct sroce_sq *sq = &qpx_to_sqp(qpx)->sq;

	if (!sq->wr_wqe)
		wr_fail(sq, EINVAL);
	return sq->wr_err ? NULL : sq->wr_wqe;
}

/* Context: takes the SQ lock, kept until wr_complete() or wr_abort(). */
static void wr_start(struct ibv_qp_ex *qpx)
{
	struct sroce_sq *sq = &qpx_to_sqp(qpx)->sq;

	sroce_spin_lock(&sq->lock);
	sq->wr_count = 0;
	sq->wr_err = sroce_sq_state_ok(&qpx->qp_base) ? 0 : EINVAL;
	sq->wr_wqe = NULL;
}

/* Context: releases the SQ lock taken by wr_start(). */
static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct sroce_sq *sq = &qpx_to_sqp(qpx)->sq;

	sq->wr_count = 0;
	sq->wr_wqe = NULL;
	sroce_spin_unlock(&sq->lock);
}

/*
 * Publish the batch and ring the doorbell, or drop it all and return the
 * first error.
 * Context: releases the SQ lock taken by wr_start(), then rings the
 * doorbell (a system call) if anything was published.
 */
static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct sroce_qp *qp = qpx_to_sqp(qpx);
	struct sroce_sq *sq = &qp->sq;
	uint32_t n;
	int ret;

	wr_end_wqe(qp);
	ret = sq->wr_err;
	n = ret ? 0 : sq->wr_count;
	if (n)
		sroce_ring_publish(&sq->ring, sq->ring.head + n);
	wr_abort(qpx);

	return n ? sroce_sq_doorbell(qp) : ret;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_begin(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_data = imm_data;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->invalidate_rkey = invalidate_rkey;
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->invalidate_rkey = invalidate_rkey;
}

/*
 * Either window type; as with the other builders the caller keeps track
 * of the key (ibv_bind_mw() is the call that updates mw->rkey).
 */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (!mw || (info->length && !info->mr)) {
		wr_fail(&qpx_to_sqp(qpx)->sq, EINVAL);
		return;
	}
	sroce_sq_set_bind(wqe, mw, rkey, info);
}

static void wr_set_rdma(struct sroce_send_wqe *wqe, uint32_t rkey,
			uint64_t remote_addr)
{
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

/* A WRITE or READ without immediate data: the remote address is all. */
static void wr_rdma(struct ibv_qp_ex *qpx, unsigned int opcode,
		    uint32_t rkey, uint64_t remote_addr)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, opcode);

	if (wqe)
		wr_set_rdma(wqe, rkey, remote_addr);
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (!wqe)
		return;
	wr_set_rdma(wqe, rkey, remote_addr);
	wqe->imm_data = imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_set_atomic(struct sroce_send_wqe *wqe, uint32_t rkey,
			  uint64_t remote_addr, uint64_t compare_add,
			  uint64_t swap)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (wqe)
		wr_set_atomic(wqe, rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx,
					      IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (wqe)
		wr_set_atomic(wqe, rkey, remote_addr, add, 0);
}

/*
 * An ATOMIC WRITE: its 8 bytes go in the WQE (struct sroce_send_wqe's
 * wr.atomic_write), copied now, as ibv_wr_atomic_write() allows; it takes
 * no SGE.
 */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, SROCE_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->wr.atomic_write.remote_addr = remote_addr;
	wqe->wr.atomic_write.rkey = rkey;
	memcpy(wqe->wr.atomic_write.data, atomic_wr,
	       sizeof(wqe->wr.atomic_write.data));
}

#if WR_HAVE_FLUSH
/*
 * A FLUSH of the responder's range (IBV_FLUSH_RANGE) or region
 * (IBV_FLUSH_MR); it takes no SGE.  The module checks the placement type
 * and level; the length must fit the RETH's 32 bits.
 */
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
		     uint64_t remote_addr, size_t len, uint8_t type,
		     uint8_t level)
{
	struct sroce_send_wqe *wqe = wr_begin(qpx, SROCE_WR_FLUSH);

	if (!wqe)
		return;
	if (len > UINT32_MAX) {
		wr_fail(&qpx_to_sqp(qpx)->sq, EINVAL);
		return;
	}
	wqe->wr.flush.remote_addr = remote_addr;
	wqe->wr.flush.rkey = rkey;
	wqe->wr.flush.length = (uint32_t)len;
	wqe->wr.flush.type = type;
	wqe->wr.flush.level = level;
}
#endif

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct sroce_send_wqe *wqe = wr_current(qpx);
	struct sroce_sq *sq = &qpx_to_sqp(qpx)->sq;

	if (!wqe)
		return;
	if (sroce_sq_local_op(wqe->opcode) ||
	    wqe->opcode == SROCE_WR_ATOMIC_WRITE ||
	    wqe->opcode == SROCE_WR_FLUSH) {
		wr_fail(sq, EINVAL);
		return;
	}
	wr_fail(sq, sroce_sq_set_sges(sq, wqe, sg_list, num_sge));
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr,
		.length = length,
		.lkey = lkey,
	};

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct sroce_send_wqe *wqe = wr_current(qpx);
	struct sroce_sq *sq = &qpx_to_sqp(qpx)->sq;
	size_t i;

	if (!wqe)
		return;
	if (!sroce_sq_inline_ok(wqe->opcode)) {
		wr_fail(sq, EINVAL);
		return;
	}

	sroce_sq_clear_inline(wqe);
	for (i = 0; i < num_buf && !sq->wr_err; i++)
		wr_fail(sq, sroce_sq_add_inline(sq, wqe, buf_list[i].addr,
						buf_list[i].length));
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
			       size_t length)
{
	const struct ibv_data_buf buf = {
		.addr = addr,
		.length = length,
	};

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_send_wqe *wqe = wr_current(qpx);
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		wr_fail(&qp->sq, EINVAL);
		return;
	}

	wqe->wr.ud.ah_num = to_sah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
	qp->sq.wr_ud_set = true;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct sroce_send_wqe *wqe = wr_current(qpx);
	struct sroce_qp *qp = qpx_to_sqp(qpx);

	if (!wqe)
		return;
	wqe->xrc_remote_srqn = remote_srqn;
	qp->sq.wr_xrc_set = true;
}

/**
 * sroce_wr_init() - install the ibv_qp_ex API on a new QP
 * @qp: QP whose send_ops_flags passed sroce_wr_check_ops()
 * @send_ops_flags: the operations asked for; only their builders are set
 */
void sroce_wr_init(struct sroce_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = wr_set_ud_addr;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = wr_atomic_write;
#if WR_HAVE_FLUSH
	if (send_ops_flags & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = wr_flush;
#endif
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = wr_bind_mw;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = wr_send_inv;
}
