// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * post.c - work requests in: kernel post_send/post_recv, and fetching what
 * a process wrote into its rings.
 *
 * Every send work request ends up, validated, in the QP's kernel-private
 * array of struct sroce_swqe, whichever side posted it; the requester and
 * completer only ever look there.  From user rings, each WQE is copied out
 * once and only the copy is checked and used.
 *
 * Receive work requests stay in their ring (kernel QPs use the same ring
 * format as user QPs) until the responder takes one (sroce_rq_take()),
 * which copies it out and checks the copy.
 */
#include "hdr.h"
#include "sroce.h"

static bool sroce_opcode_allowed(struct sroce_qp *qp, u32 opcode)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
		return type == IB_QPT_RC || type == IB_QPT_UC ||
		       type == IB_QPT_XRC_INI;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
		return type == IB_QPT_RC || type == IB_QPT_XRC_INI;
	case IB_WR_REG_MR:
		return !qp->is_user && (type == IB_QPT_RC || type == IB_QPT_UC);
	case IB_WR_BIND_MW:
		return qp->is_user && type == IB_QPT_RC;
	case SROCE_WR_ATOMIC_WRITE:
		return (qp->is_user || SROCE_KERNEL_ATOMIC_WRITE) &&
		       (type == IB_QPT_RC || type == IB_QPT_XRC_INI);
	case SROCE_WR_FLUSH:
		return (qp->is_user || SROCE_KERNEL_FLUSH) &&
		       (type == IB_QPT_RC || type == IB_QPT_XRC_INI);
	default:
		return false;
	}
}

static bool sroce_opcode_takes_inline(u32 opcode)
{
	return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
	       opcode == IB_WR_SEND_WITH_INV || opcode == IB_WR_RDMA_WRITE ||
	       opcode == IB_WR_RDMA_WRITE_WITH_IMM;
}

/* A FLUSH's placement type (one or both) and level. */
static bool sroce_flush_args_ok(const struct sroce_swqe *w)
{
	return w->flush.type &&
	       !(w->flush.type & ~(SROCE_FLUSH_GLOBAL |
				   SROCE_FLUSH_PERSISTENT)) &&
	       w->flush.level <= SROCE_FLUSH_MR;
}

/* Checks common to work requests from the kernel and from rings. */
static int sroce_swqe_check(struct sroce_qp *qp, struct sroce_swqe *w,
			    u64 length)
{
	if (!sroce_opcode_allowed(qp, w->opcode))
		return -EINVAL;
	if (sroce_wr_is_local(w->opcode) &&
	    (length || (w->flags & SROCE_SEND_INLINE)))
		return -EINVAL;
	/* Its 8 bytes travel in the WQE itself. */
	if (w->opcode == SROCE_WR_ATOMIC_WRITE) {
		if (w->num_sge || (w->flags & SROCE_SEND_INLINE))
			return -EINVAL;
		length = sizeof(w->atomic_write.data);
	}
	/* It names memory of the responder's only. */
	if (w->opcode == SROCE_WR_FLUSH &&
	    (w->num_sge || (w->flags & SROCE_SEND_INLINE) ||
	     !sroce_flush_args_ok(w)))
		return -EINVAL;
	if (length > SROCE_MAX_MSG_SZ)
		return -EMSGSIZE;
	if (w->flags & SROCE_SEND_INLINE) {
		if (!sroce_opcode_takes_inline(w->opcode) ||
		    length > qp->sq.max_inline)
			return -EINVAL;
	} else if (w->num_sge > qp->sq.max_sge) {
		return -EINVAL;
	}
	if (sroce_wr_is_atomic(w->opcode) && length != sizeof(u64))
		return -EINVAL;
	w->length = length;
	w->state = SROCE_WQE_POSTED;
	w->status = IB_WC_SUCCESS;
	return 0;
}

static int sroce_swqe_from_kernel_ud(struct sroce_qp *qp, struct sroce_swqe *w,
				     const struct ib_ud_wr *ud)
{
	if (!ud->ah)
		return -EINVAL;
	w->ud.av = to_sah(ud->ah)->av;
	w->ud.remote_qpn = ud->remote_qpn & SROCE_24BIT_MASK;
	/* A Q_Key with the high bit set means the QP's own (the MAD layer
	 * sends with IB_QP_SET_QKEY).
	 */
	w->ud.remote_qkey = ud->remote_qkey & SROCE_QKEY_PRIVILEGED ?
			    READ_ONCE(qp->qkey) : ud->remote_qkey;
	return 0;
}

static void sroce_swqe_from_kernel_op(struct sroce_swqe *w,
				      const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->atomic.compare_add = atomic_wr(wr)->compare_add;
		w->atomic.swap = atomic_wr(wr)->swap;
		w->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		w->reg.mr = to_smr(reg_wr(wr)->mr);
		w->reg.key = reg_wr(wr)->key;
		w->reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_LOCAL_INV:
	case IB_WR_SEND_WITH_INV:
		w->inv_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
}

/* The data of a kernel work request: its SGEs, or inline bytes copied in. */
static u64 sroce_swqe_kernel_data(struct sroce_qp *qp, u32 idx,
				  const struct ib_send_wr *wr)
{
	struct sroce_sge *sge = sroce_sq_sges(qp, idx);
	u8 *data = sroce_sq_inline(qp, idx);
	u64 length = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	if (wr->send_flags & IB_SEND_INLINE) {
		if (length > qp->sq.max_inline)
			return length;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(data, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			data += wr->sg_list[i].length;
		}
		return length;
	}
	for (i = 0; i < wr->num_sge && i < qp->sq.max_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return length;
}

static_assert((int)SROCE_IB_WR_ATOMIC_WRITE == SROCE_WR_ATOMIC_WRITE);
static_assert((int)SROCE_IB_WC_ATOMIC_WRITE == SROCE_WC_ATOMIC_WRITE);

/*
 * A kernel ATOMIC WRITE (Linux 6.2 on): the remote word named as a WRITE
 * names it (struct ib_rdma_wr), its 8 bytes the work request's data (its
 * SGEs, or inline), which from here on travel in the WQE itself, as a
 * user QP's do: read at posting, like inline data.
 */
static int sroce_swqe_kernel_atomic_write(struct sroce_qp *qp, u32 idx,
					  struct sroce_swqe *w,
					  const struct ib_send_wr *wr,
					  u64 *length)
{
	u8 *data = w->atomic_write.data;

	if (*length != sizeof(w->atomic_write.data) ||
	    ((w->flags & SROCE_SEND_INLINE) && *length > qp->sq.max_inline))
		return -EINVAL;
	w->atomic_write.remote_addr = rdma_wr(wr)->remote_addr;
	w->atomic_write.rkey = rdma_wr(wr)->rkey;
	if (w->flags & SROCE_SEND_INLINE)
		memcpy(data, sroce_sq_inline(qp, idx), *length);
	else if (sroce_sge_copy(qp, qp->ibqp.pd, sroce_sq_sges(qp, idx),
				w->num_sge, 0, data, *length, SROCE_FROM_MR))
		return -EINVAL;
	w->num_sge = 0;
	w->flags &= ~SROCE_SEND_INLINE;
	*length = 0;
	return 0;
}

static_assert((int)SROCE_IB_WR_FLUSH == SROCE_WR_FLUSH);
static_assert((int)SROCE_IB_WC_FLUSH == SROCE_WC_FLUSH);

/*
 * A kernel FLUSH (Linux 6.2 on).  The kernel's work requests have no
 * fields for it: it names the remote range as a WRITE names its memory
 * (struct ib_rdma_wr) with the length of its SGEs, which are not read,
 * and asks for global visibility of that range, as rdma_rxe reads the
 * same work request.
 */
static int sroce_swqe_kernel_flush(struct sroce_swqe *w,
				   const struct ib_send_wr *wr, u64 *length)
{
	if ((w->flags & SROCE_SEND_INLINE) || *length > U32_MAX)
		return -EINVAL;
	w->flush.remote_addr = rdma_wr(wr)->remote_addr;
	w->flush.rkey = rdma_wr(wr)->rkey;
	w->flush.length = *length;
	w->flush.type = SROCE_FLUSH_GLOBAL;
	w->flush.level = SROCE_FLUSH_RANGE;
	w->num_sge = 0;
	*length = 0;
	return 0;
}

static int sroce_post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	u32 idx = qp->sq.prod;
	struct sroce_swqe *w = sroce_sq_wqe(qp, idx);
	u64 length;
	int err;

	lockdep_assert_held(&qp->sq.lock);
	if (idx - qp->sq.cons >= qp->sq.num_slots)
		return -ENOMEM;
	if (wr->num_sge > qp->sq.max_sge && !(wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags & (IB_SEND_FENCE | IB_SEND_SIGNALED |
				     IB_SEND_SOLICITED | IB_SEND_INLINE);
	if (qp->sq_sig_all)
		w->flags |= SROCE_SEND_SIGNALED;
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		w->imm = wr->ex.imm_data;
	w->num_sge = wr->send_flags & IB_SEND_INLINE ? 0 : wr->num_sge;
	sroce_swqe_from_kernel_op(w, wr);
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		err = sroce_swqe_from_kernel_ud(qp, w, ud_wr(wr));
		if (err)
			return err;
	}
	length = sroce_swqe_kernel_data(qp, idx, wr);
	if (w->opcode == SROCE_WR_ATOMIC_WRITE &&
	    sroce_opcode_allowed(qp, w->opcode)) {
		err = sroce_swqe_kernel_atomic_write(qp, idx, w, wr, &length);
		if (err)
			return err;
	}
	if (w->opcode == SROCE_WR_FLUSH && sroce_opcode_allowed(qp, w->opcode)) {
		err = sroce_swqe_kernel_flush(w, wr, &length);
		if (err)
			return err;
	}
	err = sroce_swqe_check(qp, w, length);
	if (err)
		return err;
	qp->sq.prod++;
	return 0;
}

/*
 * Post a kernel caller's chain under the send queue's lock.  The state is
 * checked there before and read again after queuing (into *@state), so
 * that a failure that raced with the post is seen by one side or the
 * other (see sroce_qp.state).
 */
static int sroce_post_send_kernel(struct sroce_qp *qp,
				  const struct ib_send_wr *wr,
				  const struct ib_send_wr **bad_wr, u32 *state)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->sq.lock, flags);
	*state = READ_ONCE(qp->state);
	if (*state != IB_QPS_RTS && *state != IB_QPS_SQD &&
	    *state != IB_QPS_ERR) {
		*bad_wr = wr;
		err = -EINVAL;
		goto out_unlock;
	}
	for (; wr; wr = wr->next) {
		err = sroce_post_one_send(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	*state = READ_ONCE(qp->state);
out_unlock:
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return err;
}

/*
 * The send doorbell of a user QP.  The process wrote its WQEs before the
 * system call; the barrier orders them before the state is read, against
 * sroce_qp_error(), whose flush reads the ring after the state moved.
 */
static void sroce_sq_doorbell(struct sroce_qp *qp)
{
	u32 state;

	smp_mb(); /* the process's WQEs before the state; see above */
	state = READ_ONCE(qp->state);
	if (state == IB_QPS_ERR)
		sroce_qp_flush_sq(qp);
	else if (state == IB_QPS_RTS || state == IB_QPS_SQD)
		sroce_req_kick(qp);
}

/**
 * sroce_post_send() - ib_device_ops.post_send
 * @ibqp: the QP
 * @wr: kernel QPs: the work requests; user QPs: NULL, the send doorbell
 * @bad_wr: set to the first work request not posted
 *
 * Work requests are accepted in RTS and SQD, and in ERR, where they are
 * completed with IB_WC_WR_FLUSH_ERR (ib_drain_sq() relies on it): at once
 * for a user QP's doorbell, from the QP's event work for a kernel caller.
 * The doorbell of a user QP never fails: WQEs wait until the QP sends.
 *
 * Context: Any context, interrupts may be off, for kernel QPs; process
 * context for the doorbell of a user QP. Takes qp->sq.lock.
 * Return: 0; -EINVAL for a kernel QP in another state, a bad work request,
 * or work requests on a user QP; -ENOMEM when the send queue is full.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	u32 state;
	int err;

	/* An XRC target QP has no send queue. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return wr ? -EINVAL : 0;
	}
	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		sroce_sq_doorbell(qp);
		return 0;
	}
	err = sroce_post_send_kernel(qp, wr, bad_wr, &state);
	if (state == IB_QPS_ERR)
		sroce_qp_sched_flush(qp);
	else
		sroce_qp_sched_req(qp);
	return err;
}

/* The opcode-specific fields of a user WQE, already copied out. */
static int sroce_swqe_user_op(struct sroce_qp *qp, struct sroce_swqe *w,
			      const struct sroce_send_wqe *u)
{
	switch (w->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->rdma.remote_addr = u->wr.rdma.remote_addr;
		w->rdma.rkey = u->wr.rdma.rkey;
		return u->wr.rdma.reserved ? -EINVAL : 0;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->atomic.remote_addr = u->wr.atomic.remote_addr;
		w->atomic.compare_add = u->wr.atomic.compare_add;
		w->atomic.swap = u->wr.atomic.swap;
		w->atomic.rkey = u->wr.atomic.rkey;
		return u->wr.atomic.reserved ? -EINVAL : 0;
	case SROCE_WR_ATOMIC_WRITE:
		w->atomic_write.remote_addr = u->wr.atomic_write.remote_addr;
		memcpy(w->atomic_write.data, u->wr.atomic_write.data,
		       sizeof(w->atomic_write.data));
		w->atomic_write.rkey = u->wr.atomic_write.rkey;
		return u->wr.atomic_write.reserved ? -EINVAL : 0;
	case SROCE_WR_FLUSH:
		w->flush.remote_addr = u->wr.flush.remote_addr;
		w->flush.rkey = u->wr.flush.rkey;
		w->flush.length = u->wr.flush.length;
		w->flush.type = u->wr.flush.type;
		w->flush.level = u->wr.flush.level;
		return memchr_inv(u->wr.flush.reserved, 0,
				  sizeof(u->wr.flush.reserved)) ? -EINVAL : 0;
	case IB_WR_BIND_MW:
		w->bind.mw_rkey = u->wr.bind_mw.mw_rkey;
		w->bind.new_rkey = u->wr.bind_mw.new_rkey;
		w->bind.addr = u->wr.bind_mw.addr;
		w->bind.length = u->wr.bind_mw.length;
		w->bind.mr_lkey = u->wr.bind_mw.mr_lkey;
		w->bind.access = u->wr.bind_mw.access;
		return 0;
	case IB_WR_LOCAL_INV:
	case IB_WR_SEND_WITH_INV:
		w->inv_rkey = u->invalidate_rkey;
		return 0;
	default:
		break;
	}
	if (qp->ibqp.qp_type != IB_QPT_UD)
		return 0;
	if (u->wr.ud.reserved ||
	    !sroce_ah_lookup(sroce_qp_dev(qp), u->wr.ud.ah_num, qp->ibqp.pd,
			     &w->ud.av))
		return -EINVAL;
	w->ud.remote_qpn = u->wr.ud.remote_qpn & SROCE_24BIT_MASK;
	w->ud.remote_qkey = u->wr.ud.remote_qkey & SROCE_QKEY_PRIVILEGED ?
			    READ_ONCE(qp->qkey) : u->wr.ud.remote_qkey;
	return 0;
}

/* The data of a user WQE: SGEs or inline bytes, copied out of the slot. */
static int sroce_swqe_user_data(struct sroce_qp *qp, u32 idx,
				struct sroce_swqe *w, const u8 *slot,
				const struct sroce_send_wqe *u, u64 *length)
{
	struct sroce_sge *sge = sroce_sq_sges(qp, idx);
	const u8 *body = slot + sizeof(*u);
	u32 i;

	*length = 0;
	if (w->flags & SROCE_SEND_INLINE) {
		if (u->num_sge || u->inline_len > qp->sq.max_inline)
			return -EINVAL;
		memcpy(sroce_sq_inline(qp, idx), body, u->inline_len);
		*length = u->inline_len;
		return 0;
	}
	if (u->inline_len || u->num_sge > qp->sq.max_sge)
		return -EINVAL;
	memcpy(sge, body, u->num_sge * sizeof(*sge));
	for (i = 0; i < u->num_sge; i++)
		*length += sge[i].length;
	return 0;
}

/*
 * Copy the user WQE at @ring_idx out of the ring into send queue slot @idx
 * and check the copy.
 */
static int sroce_fetch_one(struct sroce_qp *qp, u32 ring_idx, u32 idx,
			   struct sroce_swqe *w)
{
	const u8 *slot = sroce_ring_slot(&qp->sq.ring, ring_idx);
	struct sroce_send_wqe u;
	u64 length;
	int err;

	memcpy(&u, slot, sizeof(u));
	memset(w, 0, sizeof(*w));
	w->wr_id = u.wr_id;
	w->opcode = u.opcode;
	w->flags = u.send_flags;
	w->num_sge = u.num_sge;
	if (u.opcode == IB_WR_SEND_WITH_IMM ||
	    u.opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		w->imm = u.imm_data;
	if (qp->sq_sig_all)
		w->flags |= SROCE_SEND_SIGNALED;
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		w->xrc_srqn = u.xrc_remote_srqn;
	else if (u.xrc_remote_srqn)
		return -EINVAL;
	if (w->xrc_srqn > SROCE_24BIT_MASK ||
	    (u.send_flags & ~(SROCE_SEND_FENCE | SROCE_SEND_SIGNALED |
			      SROCE_SEND_SOLICITED | SROCE_SEND_INLINE)))
		return -EINVAL;
	err = sroce_swqe_user_data(qp, idx, w, slot, &u, &length);
	if (!err)
		err = sroce_swqe_user_op(qp, w, &u);
	if (!err)
		err = sroce_swqe_check(qp, w, length);
	return err;
}

/*
 * A WQE refused when fetched: it completes in error, in order.  Its flags
 * are the process's, unchecked: only the one that makes it complete is
 * kept (a stray SROCE_SWQE_TM would make it the device's own).
 */
static void sroce_fetch_refused(struct sroce_swqe *w)
{
	w->status = IB_WC_LOC_QP_OP_ERR;
	w->state = SROCE_WQE_DONE;
	w->flags = SROCE_SEND_SIGNALED;
}

/**
 * sroce_sq_fetch() - take work requests a process published in its send
 *	ring
 * @qp: a user QP
 * @end: the producer index read from the ring, once, by the caller; the
 *	fetch goes no further
 *
 * At most SROCE_LOCK_BATCH work requests per call.  A work request that
 * fails validation is taken, marked to complete with IB_WC_LOC_QP_OP_ERR,
 * and ends the call; the caller fails the QP.  An impossible @end (past a
 * full ring, or behind work requests already fetched) takes nothing.
 *
 * Context: Any context. Caller holds qp->sq.lock.
 * Return: work requests taken, or -EINVAL for a refused one or an
 * impossible @end.
 */
int sroce_sq_fetch(struct sroce_qp *qp, u32 end)
{
	struct sroce_sq *sq = &qp->sq;
	struct sroce_swqe *w;
	int n = 0;
	int err;

	lockdep_assert_held(&sq->lock);
	/*
	 * The producer may only move forward from what was fetched
	 * (sq->ring_next), and no further than a full ring past the consumer:
	 * one that went back would make the loop below run up to 2^32 times.
	 * The send queue has room for a full ring besides the work requests
	 * the device queued itself (SROCE_SWQE_TM), so the last test only
	 * guards that arithmetic.
	 */
	if (!sroce_ring_count_valid(&sq->ring, end, sq->ring.cons) ||
	    end - sq->ring.cons < sq->ring_next - sq->ring.cons)
		return -EINVAL;
	while (sq->ring_next != end && n < SROCE_LOCK_BATCH &&
	       sq->prod - sq->cons < sq->num_slots) {
		w = sroce_sq_wqe(qp, sq->prod);
		err = sroce_fetch_one(qp, sq->ring_next, sq->prod, w);
		sq->ring_next++;
		sq->prod++;
		if (err) {
			sroce_fetch_refused(w);
			return -EINVAL;
		}
		n++;
	}
	return n;
}

/* Write one receive work request into the ring at its producer index. */
static int sroce_rq_put(struct sroce_rq *rq, const struct ib_recv_wr *wr)
{
	struct sroce_recv_wqe *slot;
	struct sroce_sge *sge;
	int i;

	lockdep_assert_held(&rq->lock);
	if (wr->num_sge > rq->max_sge)
		return -EINVAL;
	if (rq->ring.prod - sroce_ring_load_cons(&rq->ring) >=
	    rq->ring.num_slots)
		return -ENOMEM;
	slot = sroce_ring_slot(&rq->ring, rq->ring.prod);
	slot->wr_id = wr->wr_id;
	slot->num_sge = wr->num_sge;
	slot->reserved = 0;
	sge = (struct sroce_sge *)(slot + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	rq->ring.prod++;
	return 0;
}

static int sroce_rq_post(struct sroce_rq *rq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&rq->lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_rq_put(rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	sroce_ring_publish_prod(&rq->ring);
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}

/* The receive doorbell of a user QP; the barrier as in the send doorbell. */
static void sroce_rq_doorbell(struct sroce_qp *qp)
{
	smp_mb(); /* the process's WQEs before the state */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_qp_flush_rq(qp);
}

/**
 * sroce_post_recv() - ib_device_ops.post_recv
 * @ibqp: the QP: a kernel QP without an SRQ; or a user QP, with @wr NULL,
 *	the receive doorbell
 * @wr: the work requests
 * @bad_wr: set to the first work request not posted
 *
 * Accepted from INIT on; in ERR they complete with IB_WC_WR_FLUSH_ERR: at
 * once for a user QP's doorbell, from the QP's event work for a kernel
 * caller.
 *
 * Context: Any context, interrupts may be off, for kernel QPs; process
 * context for the doorbell of a user QP. Takes qp->rq.lock.
 * Return: 0; -EINVAL in RESET, for a bad work request, on a user QP or a
 * QP without a receive queue of its own (on an SRQ, XRC); -ENOMEM when the
 * queue is full.
 */
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	if (qp->is_user && !wr) {
		sroce_rq_doorbell(qp);
		return 0;
	}
	if (qp->is_user || !sroce_qp_has_rq(qp) ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_rq_post(&qp->rq, wr, bad_wr);
	/*
	 * The work requests are published before the state is read, against
	 * sroce_qp_error(), whose flush reads the ring after the state moved:
	 * one side or the other sees them.
	 */
	smp_mb(); /* the work requests before the state; see above */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_qp_sched_flush(qp);
	return err;
}

/**
 * sroce_post_srq_recv() - ib_device_ops.post_srq_recv
 * @ibsrq: a kernel SRQ
 * @wr: the work requests
 * @bad_wr: set to the first work request not posted
 *
 * Context: Any context, interrupts may be off. Takes the SRQ's lock.
 * Return: 0; -EINVAL for a bad work request or a user SRQ; -ENOMEM when
 * the queue is full.
 */
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->rq.is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return sroce_rq_post(&srq->rq, wr, bad_wr);
}

/**
 * sroce_rq_count() - receive work requests waiting in a queue
 * @rq: the queue
 *
 * Context: Any context.
 * Return: the count; 0 if the producer index is impossible.
 */
u32 sroce_rq_count(struct sroce_rq *rq)
{
	u32 prod = sroce_ring_load_prod(&rq->ring);

	if (!sroce_ring_count_valid(&rq->ring, prod, rq->ring.cons))
		return 0;
	return prod - rq->ring.cons;
}

static int sroce_rq_copy_out(struct sroce_rq *rq, struct sroce_rwqe *wqe)
{
	const struct sroce_recv_wqe *slot = sroce_ring_slot(&rq->ring,
							    rq->ring.cons);
	struct sroce_recv_wqe hdr;
	u64 length = 0;
	u32 i;

	memcpy(&hdr, slot, sizeof(hdr));
	wqe->wr_id = hdr.wr_id;
	if (hdr.num_sge > rq->max_sge || hdr.reserved)
		return -EINVAL;
	memcpy(wqe->sge, slot + 1, hdr.num_sge * sizeof(wqe->sge[0]));
	wqe->num_sge = hdr.num_sge;
	for (i = 0; i < hdr.num_sge; i++)
		length += wqe->sge[i].length;
	if (length > SROCE_MAX_MSG_SZ)
		return -EINVAL;
	wqe->length = length;
	return 0;
}

/**
 * sroce_rq_skip() - take the next receive work request of a QP's own queue
 *	without copying it out, to flush it
 * @rq: the queue
 * @wr_id: set to its wr_id
 *
 * Context: Any context. Caller holds the QP's resp.lock.
 * Return: true if one was taken; false for an empty queue or an impossible
 * producer index.
 */
bool sroce_rq_skip(struct sroce_rq *rq, u64 *wr_id)
{
	const struct sroce_recv_wqe *slot;
	u32 prod = sroce_ring_load_prod(&rq->ring);

	if (!sroce_ring_count_valid(&rq->ring, prod, rq->ring.cons) ||
	    prod == rq->ring.cons)
		return false;
	slot = sroce_ring_slot(&rq->ring, rq->ring.cons);
	*wr_id = READ_ONCE(slot->wr_id);
	rq->ring.cons++;
	sroce_ring_publish_cons(&rq->ring);
	return true;
}

static enum sroce_rq_taken sroce_rq_take_locked(struct sroce_rq *rq,
						struct sroce_rwqe *wqe)
{
	u32 prod = sroce_ring_load_prod(&rq->ring);
	int err;

	if (!sroce_ring_count_valid(&rq->ring, prod, rq->ring.cons))
		return SROCE_RQ_BAD_PROD;
	if (prod == rq->ring.cons)
		return SROCE_RQ_EMPTY;
	err = sroce_rq_copy_out(rq, wqe);
	rq->ring.cons++;
	sroce_ring_publish_cons(&rq->ring);
	return err ? SROCE_RQ_BAD_WQE : SROCE_RQ_TAKEN;
}

/**
 * sroce_srq_take_locked() - take the next receive work request of an SRQ
 *	whose lock the caller holds
 * @srq: the SRQ
 * @wqe: where the work request is copied and checked
 *
 * Context: Any context. Caller holds srq->rq.lock; the caller checks the
 * SRQ's limit (sroce_srq_check_limit()) after dropping it.
 * Return: as sroce_rq_take().
 */
enum sroce_rq_taken sroce_srq_take_locked(struct sroce_srq *srq,
					  struct sroce_rwqe *wqe)
{
	lockdep_assert_held(&srq->rq.lock);
	return sroce_rq_take_locked(&srq->rq, wqe);
}

/**
 * sroce_rq_take() - take the next receive work request of a queue
 * @rq: a QP's receive queue, or @srq's
 * @srq: the SRQ, or NULL for a QP's own queue
 * @wqe: where the work request is copied and checked
 *
 * Context: Any context. The receiving QP's resp.lock is held; an SRQ's
 * lock is taken here.
 * Return: SROCE_RQ_TAKEN; SROCE_RQ_EMPTY; SROCE_RQ_BAD_WQE when the work
 * request is invalid (it is taken all the same, and @wqe->wr_id is valid
 * for a completion); SROCE_RQ_BAD_PROD when the queue's producer index is
 * impossible (nothing is taken).
 */
enum sroce_rq_taken sroce_rq_take(struct sroce_rq *rq, struct sroce_srq *srq,
				  struct sroce_rwqe *wqe)
{
	enum sroce_rq_taken taken;
	unsigned long flags;

	if (!srq)
		return sroce_rq_take_locked(rq, wqe);
	spin_lock_irqsave(&rq->lock, flags);
	taken = sroce_rq_take_locked(rq, wqe);
	spin_unlock_irqrestore(&rq->lock, flags);
	if (taken == SROCE_RQ_TAKEN || taken == SROCE_RQ_BAD_WQE)
		sroce_srq_check_limit(srq);
	return taken;
}
