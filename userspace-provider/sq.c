// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sq.c - send queues: building struct sroce_send_wqe in the send ring,
 * ibv_post_send(), and the doorbell that makes the kernel look at the ring.
 * wr.c builds the same WQEs through the ibv_wr_* API with the helpers
 * exported here.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sroce.h"

/* send_flags a WQE may carry (enum sroce_send_flags). */
#define SQ_SEND_FLAGS							\
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |	\
	 IBV_SEND_INLINE)

#define WR_BIT(op)	(1u << (op))

/* Opcodes each QP type may post. */
#define SQ_UD_OPS	(WR_BIT(IBV_WR_SEND) | WR_BIT(IBV_WR_SEND_WITH_IMM))
#define SQ_UC_OPS	(SQ_UD_OPS | WR_BIT(IBV_WR_RDMA_WRITE) |	\
			 WR_BIT(IBV_WR_RDMA_WRITE_WITH_IMM) |		\
			 WR_BIT(IBV_WR_LOCAL_INV))
#define SQ_RC_OPS	(SQ_UC_OPS | WR_BIT(IBV_WR_RDMA_READ) |		\
			 WR_BIT(IBV_WR_ATOMIC_CMP_AND_SWP) |		\
			 WR_BIT(IBV_WR_ATOMIC_FETCH_AND_ADD) |		\
			 WR_BIT(IBV_WR_BIND_MW) | WR_BIT(IBV_WR_SEND_WITH_INV))
#define SQ_XRC_OPS	(SQ_RC_OPS & ~WR_BIT(IBV_WR_BIND_MW))

/* Opcodes that may carry inline data. */
#define SQ_INLINE_OPS	(SQ_UD_OPS | WR_BIT(IBV_WR_RDMA_WRITE) |	\
			 WR_BIT(IBV_WR_RDMA_WRITE_WITH_IMM) |		\
			 WR_BIT(IBV_WR_SEND_WITH_INV))

/* Opcodes that move no data: they must have no SGEs. */
#define SQ_LOCAL_OPS	(WR_BIT(IBV_WR_LOCAL_INV) | WR_BIT(IBV_WR_BIND_MW))

/* Bytes a slot needs for a WQE with @max_sge SGEs or @max_inline bytes. */
static uint64_t sq_slot_need(const struct ibv_qp_cap *cap)
{
	uint64_t sges = (uint64_t)cap->max_send_sge * sizeof(struct sroce_sge);
	uint64_t data = cap->max_inline_data;

	return sizeof(struct sroce_send_wqe) + (sges > data ? sges : data);
}

/**
 * sroce_sq_init() - set up a QP's send queue from the create response
 * @sq: zeroed send queue
 * @info: the send ring from struct sroce_create_qp_resp
 * @cap: the limits the kernel granted (after ibv_cmd_create_qp*())
 * @cmd_fd: the context's uverbs file
 * @single: the QP is used from one thread at a time (struct sroce_spin)
 *
 * A ring of 0 slots is allowed only with max_send_wr 0 (no send queue).
 *
 * Return: 0; EPROTO when the ring cannot hold what the kernel granted; an
 * errno from pthread_spin_init() or mmap(2).
 */
int sroce_sq_init(struct sroce_sq *sq, const struct sroce_ring_info *info,
		  const struct ibv_qp_cap *cap, int cmd_fd, bool single)
{
	uint64_t need = sq_slot_need(cap);
	int ret;

	if (cap->max_send_wr > info->num_slots || need > UINT32_MAX)
		return EPROTO;

	ret = sroce_spin_init(&sq->lock, single);
	if (ret)
		return ret;

	if (info->num_slots) {
		ret = sroce_ring_map(&sq->ring, info, (uint32_t)need,
				     SROCE_RING_PRODUCER, cmd_fd);
		if (ret)
			goto err_destroy_lock;
	}

	sq->max_wr = cap->max_send_wr;
	sq->max_sge = cap->max_send_sge;
	sq->max_inline = cap->max_inline_data;
	return 0;

err_destroy_lock:
	sroce_spin_destroy(&sq->lock);
	return ret;
}

/* Undoes sroce_sq_init(); the kernel must be done with the ring. */
void sroce_sq_uninit(struct sroce_sq *sq)
{
	sroce_ring_unmap(&sq->ring);
	sroce_spin_destroy(&sq->lock);
}

/* May a QP of @qp_type post @opcode (enum ibv_wr_opcode)? */
bool sroce_sq_opcode_ok(enum ibv_qp_type qp_type, unsigned int opcode)
{
	uint32_t ops;

	switch ((unsigned int)qp_type) {
	case IBV_QPT_RC:
		ops = SQ_RC_OPS;
		break;
	case IBV_QPT_UC:
		ops = SQ_UC_OPS;
		break;
	case IBV_QPT_UD:
		ops = SQ_UD_OPS;
		break;
	case IBV_QPT_XRC_SEND:
		ops = SQ_XRC_OPS;
		break;
	default:
		return false;
	}
	return opcode < 32 && (ops & WR_BIT(opcode));
}

/* Does @opcode move no data (LOCAL_INV, BIND_MW)? */
bool sroce_sq_local_op(unsigned int opcode)
{
	return opcode < 32 && (SQ_LOCAL_OPS & WR_BIT(opcode));
}

/**
 * sroce_sq_set_bind() - fill the bind_mw part of a BIND_MW WQE
 * @wqe: WQE being built
 * @mw: the window
 * @rkey: the key the window is to have
 * @info: the region, range and rights
 *
 * A zero length (unbinding a type 1 window) may come without a region.
 */
void sroce_sq_set_bind(struct sroce_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->wr.bind_mw.mw_rkey = mw->rkey;
	wqe->wr.bind_mw.new_rkey = rkey;
	wqe->wr.bind_mw.addr = info->addr;
	wqe->wr.bind_mw.length = info->length;
	wqe->wr.bind_mw.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind_mw.access = info->mw_access_flags;
}

/* May @opcode carry inline data? */
bool sroce_sq_inline_ok(unsigned int opcode)
{
	return opcode < 32 && (SQ_INLINE_OPS & WR_BIT(opcode));
}

/**
 * sroce_sq_set_sges() - make @wqe gather from an SGE list
 * @sq: send queue owning @wqe
 * @wqe: WQE being built in a slot this process owns
 * @sg_list: SGEs
 * @num_sge: entries in @sg_list
 *
 * Replaces any data the WQE had.  max_sge SGEs fit a slot (checked when
 * the ring was mapped).
 *
 * Return: 0, or EINVAL for more than the QP's max_send_sge.
 */
int sroce_sq_set_sges(const struct sroce_sq *sq, struct sroce_send_wqe *wqe,
		      const struct ibv_sge *sg_list, size_t num_sge)
{
	struct sroce_sge *sge = (struct sroce_sge *)(void *)(wqe + 1);
	size_t i;

	if (num_sge > sq->max_sge)
		return EINVAL;

	for (i = 0; i < num_sge; i++)
		sge[i] = (struct sroce_sge){
			.addr = sg_list[i].addr,
			.length = sg_list[i].length,
			.lkey = sg_list[i].lkey,
		};
	wqe->num_sge = (uint32_t)num_sge;
	wqe->inline_len = 0;
	wqe->send_flags &= ~(uint32_t)SROCE_SEND_INLINE;
	return 0;
}

/* Make @wqe an inline WQE with no data yet, replacing any it had. */
void sroce_sq_clear_inline(struct sroce_send_wqe *wqe)
{
	wqe->send_flags |= SROCE_SEND_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = 0;
}

/**
 * sroce_sq_add_inline() - append inline data to @wqe
 * @sq: send queue owning @wqe
 * @wqe: inline WQE being built (sroce_sq_clear_inline() first)
 * @addr: data to copy now
 * @length: bytes at @addr
 *
 * Return: 0, or EINVAL when the WQE would exceed the QP's max_inline_data
 * (which fits a slot, checked when the ring was mapped).
 */
int sroce_sq_add_inline(const struct sroce_sq *sq, struct sroce_send_wqe *wqe,
			const void *addr, size_t length)
{
	uint8_t *data = (uint8_t *)(void *)(wqe + 1);

	if (length > sq->max_inline - wqe->inline_len)
		return EINVAL;
	if (!length)
		return 0;

	memcpy(data + wqe->inline_len, addr, length);
	wqe->inline_len += (uint32_t)length;
	return 0;
}

/**
 * sroce_sq_doorbell() - tell the kernel to look at the send ring
 * @qp: QP whose new WQEs are published
 *
 * A POST_SEND write command with no work requests, as the ABI header
 * specifies.  No lock needed: it carries nothing but the QP handle.
 *
 * Context: a system call; call without holding the SQ lock.
 * Return: 0 or a positive errno.
 */
int sroce_sq_doorbell(struct sroce_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct sroce_doorbell_cmd cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->vqp.qp.handle,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};
	ssize_t n;

	do
		n = write(qp->vqp.qp.context->cmd_fd, &cmd, sizeof(cmd));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(cmd))
		return 0;
	return n < 0 ? errno : EIO;
}

/* The ibv_send_wr checks that do not depend on where it goes. */
static int sq_check_wr(const struct sroce_qp *qp,
		       const struct ibv_send_wr *wr)
{
	enum ibv_qp_type qp_type = qp->vqp.qp.qp_type;

	if (!sroce_sq_opcode_ok(qp_type, wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~(unsigned int)SQ_SEND_FLAGS)
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    !sroce_sq_inline_ok(wr->opcode))
		return EINVAL;
	if (qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (sroce_sq_local_op(wr->opcode) &&
	    (wr->num_sge || (wr->send_flags & IBV_SEND_INLINE)))
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW && (!wr->bind_mw.mw ||
	    (wr->bind_mw.bind_info.length && !wr->bind_mw.bind_info.mr)))
		return EINVAL;
	return 0;
}

/* The WQE header: everything but the data. */
static void sq_fill_header(const struct sroce_qp *qp,
			   struct sroce_send_wqe *wqe,
			   const struct ibv_send_wr *wr)
{
	*wqe = (struct sroce_send_wqe){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags & ~(unsigned int)IBV_SEND_INLINE,
	};
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_SEND_WITH_INV ||
	    wr->opcode == IBV_WR_LOCAL_INV)
		wqe->invalidate_rkey = wr->invalidate_rkey;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;

	switch ((unsigned int)wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		sroce_sq_set_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		break;
	default:	/* SEND, SEND_WITH_IMM, SEND_WITH_INV, LOCAL_INV */
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			wqe->wr.ud.ah_num = to_sah(wr->wr.ud.ah)->ah_num;
			wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	}
}

/* Gather the WR's inline data from its SGE addresses into the slot. */
static int sq_copy_inline(const struct sroce_sq *sq,
			  struct sroce_send_wqe *wqe,
			  const struct ibv_send_wr *wr)
{
	int i, ret;

	sroce_sq_clear_inline(wqe);
	for (i = 0; i < wr->num_sge; i++) {
		ret = sroce_sq_add_inline(sq, wqe,
					  (const void *)(uintptr_t)wr->sg_list[i].addr,
					  wr->sg_list[i].length);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Build @wr as the @pending-th unpublished WQE.
 * Context: the SQ lock is held.
 */
static int sq_build_wqe(struct sroce_qp *qp, uint32_t pending,
			const struct ibv_send_wr *wr)
{
	struct sroce_sq *sq = &qp->sq;
	struct sroce_send_wqe *wqe;
	int ret;

	if (!sq->ring.base)
		return EINVAL;	/* the QP has no send queue */
	if (!sroce_ring_room(&sq->ring, pending, sq->max_wr))
		return ENOMEM;
	ret = sq_check_wr(qp, wr);
	if (ret)
		return ret;

	wqe = sroce_ring_slot(&sq->ring, sq->ring.head + pending);
	sq_fill_header(qp, wqe, wr);
	if (wr->send_flags & IBV_SEND_INLINE)
		return sq_copy_inline(sq, wqe, wr);
	return sroce_sq_set_sges(sq, wqe, wr->sg_list, (size_t)wr->num_sge);
}

/**
 * sroce_sq_state_ok() - may sends be posted in the QP's state?
 * @ibqp: the QP; libibverbs keeps ibqp->state as the last ibv_modify_qp()
 *	set it (an asynchronous error only ever moves it to ERR, where
 *	posting is allowed too: the work requests are flushed)
 *
 * Return: false in RESET, INIT and RTR.
 */
bool sroce_sq_state_ok(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

/**
 * sroce_sq_post() - post_send op
 * @ibqp: QP
 * @wr: list of work requests
 * @bad_wr: set to the first WR not posted when one is refused
 *
 * Builds one WQE per WR in the send ring, publishes them with one release
 * store of the producer index and rings the doorbell once.  A refused WR
 * (ENOMEM: the send queue is full; EINVAL: bad opcode for the QP type,
 * flags, SGE count, inline size or missing AH) and those after it are not
 * published; those before it are, and the doorbell is rung for them.
 *
 * Context: any thread; takes and releases the SQ lock, then makes one
 * system call (the doorbell) if anything was published.
 * Return: 0 or a positive errno.  If only the doorbell fails, every WR
 * was published, *@bad_wr is NULL and the error is the doorbell's.
 */
int sroce_sq_post(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_sq *sq = &qp->sq;
	uint32_t n = 0;
	int ret = 0;

	/* Sends before RTS are an immediate error, as the verbs require. */
	if (!sroce_sq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	sroce_spin_lock(&sq->lock);
	for (; wr; wr = wr->next, n++) {
		ret = sq_build_wqe(qp, n, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (n)
		sroce_ring_publish(&sq->ring, sq->ring.head + n);
	sroce_spin_unlock(&sq->lock);

	if (!n)
		return ret;
	if (ret) {
		sroce_sq_doorbell(qp);
		return ret;
	}
	ret = sroce_sq_doorbell(qp);
	if (ret)
		*bad_wr = NULL;
	return ret;
}

/**
 * sroce_sq_bind_mw() - bind_mw op (ibv_bind_mw(), type 1 windows)
 * @ibqp: RC QP in RTS
 * @mw: type 1 window of the QP's PD
 * @mw_bind: work request id, send flags, region, range and rights
 *
 * Posts a BIND_MW work request giving the window the next key (its low
 * byte incremented), and on success stores that key in mw->rkey, as
 * ibv_bind_mw(3) specifies: the caller may hand it out at once, and
 * requests that use it are ordered after the bind on this QP.  Whether the
 * bind succeeded is reported by its completion (IBV_WC_MW_BIND_ERR if the
 * region cannot grant the range or rights).
 *
 * Context: as sroce_sq_post().
 * Return: 0 or a positive errno (EINVAL for a type 2 window or a non-RC
 * QP; otherwise as sroce_sq_post()).
 */
int sroce_sq_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr *bad_wr;
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || ibqp->qp_type != IBV_QPT_RC)
		return EINVAL;
	ret = sroce_sq_post(ibqp, &wr, &bad_wr);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
