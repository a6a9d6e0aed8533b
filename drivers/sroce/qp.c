// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs: creation, the state machine of modify_qp, queries,
 * errors and flushing, and destruction.
 *
 * Lifetime.  A QP is published under its number (sroce_dev.qp_pool) when
 * it is complete.  The receive path finds it under RCU and takes a
 * reference (sroce_qp_get_rcu()); every scheduled work item holds one too.
 * Destruction: mark dead under both QP locks (nothing new is scheduled or
 * armed after that), unpublish, wait an RCU grace period (no new lookup can
 * find it), stop the timers and work, drop the creation reference and wait
 * for the last one, unbind the type 2 memory windows bound through the QP
 * (mw.c), then free the queues.  The core frees the struct.
 *
 * State.  modify_qp moves a QP with both of its locks held; the data path
 * only ever fails it, from any context, through sroce_qp_error(), which
 * moves it to ERR at once with a compare-and-exchange and leaves flushing
 * and the async event to the QP's event work, in process context.  A
 * move by modify_qp is a compare-and-exchange too, from the state it
 * checked: if the data path failed the QP meanwhile, the move is refused
 * and the QP stays ERR.  Flushing takes a queue's lock for at most
 * SROCE_LOCK_BATCH work requests at a time, and never for more than the
 * queue held when it began (a process can move its producer index
 * forward forever).
 */
#include <linux/hash.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "hdr.h"
#include "sroce.h"

/* Beside async events (bit = enum ib_event_type), qp->events asks for: */
#define SROCE_QP_EV_FLUSH	BIT(31)

static u32 sroce_sq_slot_size(u32 max_sge, u32 max_inline)
{
	u32 body = max(max_sge * (u32)sizeof(struct sroce_sge), max_inline);

	return ALIGN(sizeof(struct sroce_send_wqe) + body, 64);
}

/*
 * Inline bytes a send queue grants when @max_inline were asked for: none
 * if none were, else all the room a slot has past the WQE header (its
 * SGEs' room may be larger), up to SROCE_MAX_INLINE.  HCAs and rdma_rxe
 * report such room too, and programs size their short messages by the
 * granted figure (UCX's rc_verbs asks for 64 bytes and sends short
 * messages of up to what it gets, less its header).
 */
static u32 sroce_sq_inline_room(u32 max_sge, u32 max_inline)
{
	if (!max_inline)
		return 0;
	return min_t(u32, SROCE_MAX_INLINE,
		     sroce_sq_slot_size(max_sge, max_inline) -
		     sizeof(struct sroce_send_wqe));
}

static u32 sroce_rq_slot_size(u32 max_sge)
{
	return ALIGN(sizeof(struct sroce_recv_wqe) +
		     max_sge * sizeof(struct sroce_sge), 16);
}

static int sroce_qp_check_cap(struct sroce_dev *sdev,
			      struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > sdev->attr.max_qp_wr ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > sdev->attr.max_qp_wr ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int sroce_qp_check_init(struct sroce_dev *sdev,
			       struct ib_qp_init_attr *init, bool is_user)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (is_user)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_GSI && init->port_num != SROCE_PORT)
		return -EINVAL;
	return sroce_qp_check_cap(sdev, init);
}

static int sroce_sq_alloc(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			  struct ib_ucontext *uctx, struct sroce_ring_info *info)
{
	struct sroce_sq *sq = &qp->sq;
	u32 slots = roundup_pow_of_two(max(init->cap.max_send_wr, 1U));
	int err;

	spin_lock_init(&sq->lock);
	sq->num_slots = slots;
	sq->max_sge = max(init->cap.max_send_sge, 1U);
	sq->max_inline = sroce_sq_inline_room(sq->max_sge,
					      init->cap.max_inline_data);
	sq->wqe = kvcalloc(slots, sizeof(*sq->wqe), SROCE_GFP_SIZED);
	sq->sges = kvcalloc((size_t)slots * sq->max_sge, sizeof(*sq->sges),
			    SROCE_GFP_SIZED);
	if (sq->max_inline)
		sq->inline_data = kvzalloc((size_t)slots * sq->max_inline,
					   SROCE_GFP_SIZED);
	if (!sq->wqe || !sq->sges || (sq->max_inline && !sq->inline_data))
		return -ENOMEM;
	if (!uctx)
		return 0;
	err = sroce_ring_alloc(&sq->ring, uctx, slots,
			       sroce_sq_slot_size(sq->max_sge, sq->max_inline),
			       info);
	return err;
}

static void sroce_sq_free(struct sroce_qp *qp)
{
	if (qp->sq.ring.buf)
		sroce_ring_free(&qp->sq.ring);
	kvfree(qp->sq.inline_data);
	kvfree(qp->sq.sges);
	kvfree(qp->sq.wqe);
}

static int sroce_rq_alloc(struct sroce_rq *rq, u32 max_wr, u32 max_sge,
			  struct ib_ucontext *uctx,
			  struct sroce_ring_info *info)
{
	u32 slots = roundup_pow_of_two(max(max_wr, 1U));

	spin_lock_init(&rq->lock);
	rq->max_sge = max(max_sge, 1U);
	rq->is_user = !!uctx;
	return sroce_ring_alloc(&rq->ring, uctx, slots,
				sroce_rq_slot_size(rq->max_sge), info);
}

static void sroce_qp_init_fields(struct sroce_qp *qp,
				 struct ib_qp_init_attr *init, bool is_user)
{
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	atomic_set(&qp->mw2_bound, 0);
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->resp.lock);
	qp->state = IB_QPS_RESET;
	qp->is_user = is_user;
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->pmtu = 256;
	INIT_WORK(&qp->req_work, sroce_req_work);
	INIT_WORK(&qp->resp.work, sroce_resp_work);
	timer_setup(&qp->retrans_timer, sroce_comp_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, sroce_comp_rnr_timer, 0);
}

static void sroce_qp_event_work(struct work_struct *work);

static int sroce_qp_alloc_queues(struct sroce_qp *qp,
				 struct ib_qp_init_attr *init,
				 struct ib_ucontext *uctx,
				 struct sroce_create_qp_resp *resp)
{
	int err;

	err = sroce_sq_alloc(qp, init, uctx, &resp->sq);
	if (err)
		return err;
	if (!qp->srq) {
		err = sroce_rq_alloc(&qp->rq, init->cap.max_recv_wr,
				     init->cap.max_recv_sge, uctx, &resp->rq);
		if (err)
			return err;
	}
	sroce_resp_reset(qp);
	return dst_cache_init(&qp->dst_cache, SROCE_GFP_OBJ);
}

static void sroce_qp_free_queues(struct sroce_qp *qp)
{
	dst_cache_destroy(&qp->dst_cache);
	kfree(qp->resp.res);
	if (qp->rq.ring.buf)
		sroce_ring_free(&qp->rq.ring);
	sroce_sq_free(qp);
}

static void sroce_qp_report_cap(struct sroce_qp *qp,
				struct ib_qp_init_attr *init)
{
	init->cap.max_send_wr = qp->sq.num_slots;
	init->cap.max_send_sge = qp->sq.max_sge;
	init->cap.max_inline_data = qp->sq.max_inline;
	if (!qp->srq) {
		init->cap.max_recv_wr = qp->rq.ring.num_slots;
		init->cap.max_recv_sge = qp->rq.max_sge;
	}
}

static int sroce_qp_publish(struct sroce_dev *sdev, struct sroce_qp *qp,
			    enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		err = sroce_pool_insert(&sdev->qp_pool, qp, SROCE_GSI_QPN,
					SROCE_GFP_OBJ);
		qpn = SROCE_GSI_QPN;
	} else {
		err = sroce_pool_add(&sdev->qp_pool, qp, &qpn, SROCE_GFP_OBJ);
	}
	if (err)
		return err;
	qp->ibqp.qp_num = qpn;
	qp->sport = IB_ROCE_UDP_ENCAP_VALID_PORT_MIN + hash_32(qpn, 14);
	return 0;
}

/**
 * sroce_create_qp() - ib_device_ops.create_qp
 * @ibqp: the QP, allocated by the core (qp_type, pd, CQs and SRQ set)
 * @init: the attributes; cap is updated with what the QP really got
 * @udata: user QPs: struct sroce_create_qp_resp out; NULL for kernel QPs
 *
 * RC, UC and UD, and for kernel callers the GSI QP (number 1).  Queue
 * sizes are rounded up to powers of two.
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL or -EOPNOTSUPP for attributes sroce cannot honour,
 * -ENOMEM past max_qp or without memory, -EBUSY for a second GSI QP, or
 * -EFAULT.
 */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct ib_ucontext *uctx = sroce_udata_uctx(udata);
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_create_qp_resp resp = {};
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	might_sleep();
	if (udata) {
		err = sroce_udata_none(udata);
		if (err)
			return err;
	}
	err = sroce_qp_check_init(sdev, init, !!udata);
	if (err)
		return err;
	sroce_qp_init_fields(qp, init, !!udata);
	qp->serial = atomic64_inc_return(&sdev->qp_serial);
	INIT_WORK(&qp->event_work, sroce_qp_event_work);
	err = sroce_qp_alloc_queues(qp, init, uctx, &resp);
	if (err)
		goto err_free_queues;
	err = sroce_qp_publish(sdev, qp, init->qp_type);
	if (err)
		goto err_free_queues;
	sroce_qp_report_cap(qp, init);
	if (udata) {
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_unpublish;
	}
	sroce_obj_created(SROCE_OBJ_QP);
	sroce_dbg_qp(qp, "created, type %d\n", init->qp_type);
	return 0;

err_unpublish:
	sroce_pool_remove(&sdev->qp_pool, qp->ibqp.qp_num);
	synchronize_rcu();
err_free_queues:
	sroce_qp_free_queues(qp);
	return err;
}

/**
 * sroce_qp_get_rcu() - find a QP by number and take a reference
 * @sdev: the device
 * @qpn: the QP number
 *
 * Context: Any context; the caller holds rcu_read_lock().
 * Return: the QP, or NULL.
 */
struct sroce_qp *sroce_qp_get_rcu(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp = sroce_pool_lookup_rcu(&sdev->qp_pool, qpn);

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "QP lookup outside RCU");
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	return qp;
}

/**
 * sroce_qp_put() - drop a QP reference
 * @qp: the QP
 *
 * Context: Any context.
 */
void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/**
 * sroce_qp_sched_req() - make the requester run
 * @qp: the QP
 *
 * The work item holds a reference while it is queued or running.
 *
 * Context: Any context.
 */
void sroce_qp_sched_req(struct sroce_qp *qp)
{
	if (READ_ONCE(qp->dead))
		return;
	refcount_inc(&qp->ref);
	if (!queue_work(sroce_wq, &qp->req_work))
		sroce_qp_put(qp);
}

static void sroce_qp_sched_event(struct sroce_qp *qp, u32 bits)
{
	atomic_or(bits, &qp->events);
	if (READ_ONCE(qp->dead))
		return;
	refcount_inc(&qp->ref);
	if (!queue_work(sroce_wq, &qp->event_work))
		sroce_qp_put(qp);
}

/**
 * sroce_qp_event() - raise an async event on a QP
 * @qp: the QP
 * @event: the event (below 31)
 *
 * The handler runs later from process context.
 *
 * Context: Any context, any sroce lock held.
 */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type event)
{
	sroce_qp_sched_event(qp, BIT(event));
}

/**
 * sroce_qp_error() - a QP fails on the data path
 * @qp: the QP
 * @event: the async event to raise (IB_EVENT_QP_FATAL, _REQ_ERR,
 *	_ACCESS_ERR), or 0 (never a QP event) for a flush only
 *
 * The QP is ERR from now on, unless it is in RESET (a failure that raced
 * with a reset is forgotten with the rest); its outstanding work requests
 * are flushed and the event raised by the event work.  A QP already in ERR
 * raises no second event, but is flushed again.
 *
 * Context: Any context, any sroce lock held.
 */
void sroce_qp_error(struct sroce_qp *qp, enum ib_event_type event)
{
	u32 old = READ_ONCE(qp->state);

	do {
		if (old == IB_QPS_RESET)
			return;
		if (old == IB_QPS_ERR) {
			sroce_qp_sched_flush(qp);
			return;
		}
		/* A full barrier: see sroce_qp.state. */
	} while (!try_cmpxchg(&qp->state, &old, IB_QPS_ERR));
	/* Where from: the one trace a failure in the field leaves. */
	sroce_dbg_qp(qp, "to ERR from %pS, event %d",
		     __builtin_return_address(0), event);
	sroce_qp_sched_event(qp, SROCE_QP_EV_FLUSH | (event ? BIT(event) : 0));
}

/**
 * sroce_qp_fail_wqe() - a send work request fails, and its QP with it
 * @qp: the QP
 * @w: the work request; it completes with @status, in order
 * @status: enum ib_wc_status
 * @event: as for sroce_qp_error()
 *
 * Context: Any context. Caller holds qp->sq.lock.
 */
void sroce_qp_fail_wqe(struct sroce_qp *qp, struct sroce_swqe *w, u32 status,
		       enum ib_event_type event)
{
	lockdep_assert_held(&qp->sq.lock);
	w->status = status;
	w->state = SROCE_WQE_DONE;
	sroce_qp_error(qp, event);
}

/**
 * sroce_qp_sched_flush() - flush the queues of an ERR QP from process
 *	context
 * @qp: the QP
 *
 * For work requests posted to an ERR QP where flushing them at once is not
 * allowed (a kernel caller may have interrupts off, or be in hardirq).
 *
 * Context: Any context.
 */
void sroce_qp_sched_flush(struct sroce_qp *qp)
{
	sroce_qp_sched_event(qp, SROCE_QP_EV_FLUSH);
}

static void sroce_qp_dispatch(struct sroce_qp *qp, u32 bits)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
	};
	int e;

	if (!qp->ibqp.event_handler)
		return;
	for (e = 0; e < 31; e++) {
		if (!(bits & BIT(e)))
			continue;
		ev.event = e;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

static void sroce_qp_event_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, event_work);
	u32 bits = atomic_xchg(&qp->events, 0);

	if (bits & SROCE_QP_EV_FLUSH) {
		sroce_qp_flush_sq(qp);
		sroce_qp_flush_rq(qp);
	}
	sroce_qp_dispatch(qp, bits & ~SROCE_QP_EV_FLUSH);
	sroce_qp_put(qp);
}

/*
 * Move the QP from @cur, the state modify_qp checked the transition from,
 * to @next.  -EINVAL if the data path failed it meanwhile (see the file
 * comment); a move to ERR then has nothing left to do.
 */
static int sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state cur,
			      enum ib_qp_state next)
{
	unsigned long flags;
	u32 old = cur;
	bool moved;

	lockdep_assert_held(&qp->modify_lock);
	spin_lock_bh(&qp->resp.lock);
	spin_lock_irqsave(&qp->sq.lock, flags);
	moved = try_cmpxchg(&qp->state, &old, next);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_unlock_bh(&qp->resp.lock);
	if (moved || (old == IB_QPS_ERR && next == IB_QPS_ERR))
		return 0;
	sroce_dbg_qp(qp, "%d to %d refused: the QP is %u now", cur, next, old);
	return -EINVAL;
}

/* Discard what a receive queue holds: the consumer catches up. */
static void sroce_rq_discard(struct sroce_rq *rq)
{
	u32 prod = sroce_ring_load_prod(&rq->ring);

	if (sroce_ring_count_valid(&rq->ring, prod, rq->ring.cons)) {
		rq->ring.cons = prod;
		sroce_ring_publish_cons(&rq->ring);
	}
}

/* RESET: forget every queued work request, without completions. */
static void sroce_qp_reset(struct sroce_qp *qp)
{
	unsigned long flags;
	u32 prod;

	lockdep_assert_held(&qp->modify_lock);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	if (cancel_work_sync(&qp->resp.work))
		sroce_qp_put(qp);
	spin_lock_bh(&qp->resp.lock);
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->sq.ring.buf) {
		prod = sroce_ring_load_prod(&qp->sq.ring);
		if (sroce_ring_count_valid(&qp->sq.ring, prod, qp->sq.cons))
			qp->sq.prod = prod;
		qp->sq.ring.cons = qp->sq.prod;
		sroce_ring_publish_cons(&qp->sq.ring);
	}
	qp->sq.cons = qp->sq.prod;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->req.idx = qp->sq.prod;
	WRITE_ONCE(qp->state, IB_QPS_RESET);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (!qp->srq)
		sroce_rq_discard(&qp->rq);
	sroce_resp_reset(qp);
	spin_unlock_bh(&qp->resp.lock);
}

static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SROCE_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	return 0;
}

/* Attributes kept as they are given. */
static void sroce_qp_apply_simple(struct sroce_qp *qp,
				  struct ib_qp_attr *attr, int mask)
{
	/* The three a QP in RTS may change: the data path reads them. */
	if (mask & IB_QP_QKEY)
		WRITE_ONCE(qp->qkey, attr->qkey);
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num & SROCE_24BIT_MASK;
	if (mask & IB_QP_PATH_MTU)
		qp->pmtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		WRITE_ONCE(qp->min_rnr_timer, attr->min_rnr_timer);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = max_t(u8, attr->max_rd_atomic, 1);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = max_t(u8, attr->max_dest_rd_atomic, 1);
	if (mask & IB_QP_ACCESS_FLAGS)
		WRITE_ONCE(qp->access, attr->qp_access_flags);
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & SROCE_24BIT_MASK;
}

static int sroce_qp_apply_av(struct sroce_qp *qp, struct ib_qp_attr *attr)
{
	struct sroce_av av;
	int err;

	err = sroce_av_from_attr(sroce_qp_dev(qp), &av, &attr->ah_attr);
	if (err)
		return err;
	qp->av = av;
	dst_cache_reset(&qp->dst_cache);
	return 0;
}

/* Entering RTR: the responder starts at rq_psn. */
static void sroce_qp_to_rtr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			    int mask)
{
	spin_lock_bh(&qp->resp.lock);
	if (mask & IB_QP_RQ_PSN)
		qp->resp.epsn = attr->rq_psn & SROCE_24BIT_MASK;
	if (qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC)
		qp->sport = rdma_get_udp_sport(qp->av.flow_label,
					       qp->ibqp.qp_num, qp->dest_qpn);
	spin_unlock_bh(&qp->resp.lock);
}

/* Entering RTS: the requester and completer start at sq_psn. */
static void sroce_qp_to_rts(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->req.psn = qp->sq_psn;
	qp->req.max_psn = qp->sq_psn;
	qp->comp.psn = qp->sq_psn;
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	qp->comp.went_back = false;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

static int sroce_qp_transition(struct sroce_qp *qp, enum ib_qp_state cur,
			       enum ib_qp_state next, struct ib_qp_attr *attr,
			       int mask)
{
	int err;

	switch (next) {
	case IB_QPS_RESET:
		sroce_qp_reset(qp);
		return 0;
	case IB_QPS_RTR:
		if (cur == IB_QPS_INIT)
			sroce_qp_to_rtr(qp, attr, mask);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			sroce_qp_to_rts(qp);
		break;
	case IB_QPS_SQD:
		qp->comp.drained = false;
		break;
	case IB_QPS_ERR:
		err = sroce_qp_set_state(qp, cur, IB_QPS_ERR);
		sroce_qp_flush_sq(qp);
		sroce_qp_flush_rq(qp);
		return err;
	default:
		break;
	}
	err = sroce_qp_set_state(qp, cur, next);
	if (!err && (next == IB_QPS_RTS || next == IB_QPS_SQD))
		sroce_qp_sched_req(qp);
	return err;
}

/**
 * sroce_modify_qp() - ib_device_ops.modify_qp
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which of @attr apply (enum ib_qp_attr_mask)
 * @udata: no driver data
 *
 * The transition and the mask are checked against the IBTA state machine
 * (ib_modify_qp_is_ok()) from the QP's real state and every attribute
 * against sroce's limits before anything changes; a current state given
 * with IB_QP_CUR_STATE must be the real one.  Moving to ERR flushes every
 * outstanding work request; moving to RESET discards them.
 *
 * Context: Process context. May sleep. Takes qp->modify_lock.
 * Return: 0, or -EINVAL (also for a wrong IB_QP_CUR_STATE, and when the
 * data path failed the QP while the transition was being made: it stays
 * ERR); -EOPNOTSUPP for path migration and rate limits.
 */
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	might_sleep();
	err = sroce_udata_none(udata);
	if (err)
		return err;
	mutex_lock(&qp->modify_lock);
	cur = READ_ONCE(qp->state);
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	/* The caller's idea of the current state is checked, never believed. */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out_unlock;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out_unlock;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out_unlock;
	if (mask & IB_QP_AV) {
		err = sroce_qp_apply_av(qp, attr);
		if (err)
			goto out_unlock;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		err = sroce_resp_size_res(qp, max_t(u32, attr->max_dest_rd_atomic,
						    1));
		if (err)
			goto out_unlock;
	}
	sroce_qp_apply_simple(qp, attr, mask);
	if (mask & IB_QP_STATE)
		err = sroce_qp_transition(qp, cur, next, attr, mask);
out_unlock:
	mutex_unlock(&qp->modify_lock);
	return err;
}

/**
 * sroce_query_qp() - ib_device_ops.query_qp
 * @ibqp: the QP
 * @attr: filled with the current attributes
 * @mask: what the caller wants (everything is filled)
 * @init: filled with the creation attributes
 *
 * Context: Process context. Takes qp->modify_lock.
 * Return: 0.
 */
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	mutex_lock(&qp->modify_lock);
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = ib_mtu_int_to_enum(qp->pmtu);
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->resp.epsn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->port_num = SROCE_PORT;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    qp->sq.cons != qp->sq.prod;
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
		sroce_av_to_attr(&qp->av, &attr->ah_attr);
	mutex_unlock(&qp->modify_lock);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = SROCE_PORT;
	sroce_qp_report_cap(qp, init);
	attr->cap = init->cap;
	return 0;
}

/* What "rdma res show qp -dd" shows of the transport's state. */
struct sroce_qp_res {
	u32 sq_prod, sq_cons, req_idx, req_psn, max_psn, comp_psn;
	u32 rd_atomic, retry_left, rnr_left, head_state, epsn;
	bool stalled, retry, rnr_wait;
};

static void sroce_qp_res_snapshot(struct sroce_qp *qp, struct sroce_qp_res *r)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	r->sq_prod = qp->sq.prod;
	r->sq_cons = qp->sq.cons;
	r->req_idx = qp->req.idx;
	r->req_psn = qp->req.psn;
	r->max_psn = qp->req.max_psn;
	r->comp_psn = qp->comp.psn;
	r->rd_atomic = qp->req.rd_atomic;
	r->retry_left = qp->comp.retry_left;
	r->rnr_left = qp->comp.rnr_left;
	r->stalled = qp->req.stalled;
	r->retry = qp->req.retry;
	r->rnr_wait = qp->comp.rnr_wait;
	r->head_state = qp->sq.cons == qp->sq.prod ? U32_MAX :
			sroce_sq_wqe(qp, qp->sq.cons)->state;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_lock_bh(&qp->resp.lock);
	r->epsn = qp->resp.epsn;
	spin_unlock_bh(&qp->resp.lock);
}

/**
 * sroce_fill_res_qp_entry() - ib_device_ops.fill_res_qp_entry
 * @msg: the netlink message being built
 * @ibqp: the QP
 *
 * The requester's and completer's positions, for "rdma res show qp -dd":
 * what to look at when a QP seems stuck.
 *
 * Context: Process context.
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qp_res r;
	struct nlattr *table;

	sroce_qp_res_snapshot(qp, &r);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "sq_prod", r.sq_prod) ||
	    rdma_nl_put_driver_u32(msg, "sq_cons", r.sq_cons) ||
	    rdma_nl_put_driver_u32(msg, "req_idx", r.req_idx) ||
	    rdma_nl_put_driver_u32_hex(msg, "req_psn", r.req_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "max_psn", r.max_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "comp_psn", r.comp_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "epsn", r.epsn) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic", r.rd_atomic) ||
	    rdma_nl_put_driver_u32(msg, "retry_left", r.retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_left", r.rnr_left) ||
	    rdma_nl_put_driver_u32(msg, "head_wqe_state", r.head_state) ||
	    rdma_nl_put_driver_u32(msg, "stalled", r.stalled) ||
	    rdma_nl_put_driver_u32(msg, "retry", r.retry) ||
	    rdma_nl_put_driver_u32(msg, "rnr_wait", r.rnr_wait)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* Stop everything that could still run on the QP; see the file comment. */
static void sroce_qp_make_dead(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_bh(&qp->resp.lock);
	spin_lock_irqsave(&qp->sq.lock, flags);
	WRITE_ONCE(qp->dead, true);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_unlock_bh(&qp->resp.lock);
	sroce_mcast_qp_detach_all(qp);
	sroce_pool_remove(&sroce_qp_dev(qp)->qp_pool, qp->ibqp.qp_num);
	synchronize_rcu();
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	if (cancel_work_sync(&qp->req_work))
		sroce_qp_put(qp);
	if (cancel_work_sync(&qp->event_work))
		sroce_qp_put(qp);
	if (cancel_work_sync(&qp->resp.work))
		sroce_qp_put(qp);
}

/**
 * sroce_destroy_qp() - ib_device_ops.destroy_qp
 * @ibqp: the QP; the core frees it on return
 * @udata: unused
 *
 * Outstanding work requests are dropped without completions (ULPs drain
 * first).  Waits, without a timeout, until nothing references the QP.
 * Type 2 memory windows bound through it are unbound.
 *
 * Context: Process context. May sleep.
 * Return: 0.
 */
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	might_sleep();
	sroce_qp_make_dead(qp);
	sroce_qp_put(qp);
	wait_for_completion(&qp->released);
	sroce_mw_qp_destroyed(qp);
	sroce_resp_reset(qp);
	sroce_qp_free_queues(qp);
	mutex_destroy(&qp->modify_lock);
	sroce_obj_destroyed(SROCE_OBJ_QP);
	sroce_dbg_qp(qp, "destroyed\n");
	return 0;
}

/* A work request whose outcome is known completes with it; others flush. */
static void sroce_flush_one_send(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	bool done = wqe->state == SROCE_WQE_DONE;
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = done ? wqe->status : IB_WC_WR_FLUSH_ERR,
		.qp = &qp->ibqp,
	};

	if (wc.status == IB_WC_SUCCESS && !(wqe->flags & SROCE_SEND_SIGNALED))
		return;
	sroce_cq_post(qp->scq, &wc, false);
}

/*
 * One hold of sq.lock: fetch and complete at most SROCE_LOCK_BATCH work
 * requests, a user ring's no further than @end.  True while there may be
 * more.
 */
static bool sroce_qp_flush_sq_batch(struct sroce_qp *qp, u32 end)
{
	int fetched = 0;
	u32 idx, n;

	lockdep_assert_held(&qp->sq.lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR)
		return false;
	if (qp->sq.ring.buf)
		fetched = sroce_sq_fetch(qp, end);
	sroce_comp_retire(qp);
	/* The slots go back before the completions appear, as in retiring. */
	idx = qp->sq.cons;
	n = min_t(u32, qp->sq.prod - idx, SROCE_LOCK_BATCH);
	qp->sq.cons = idx + n;
	if (qp->req.idx - qp->sq.cons > qp->sq.prod - qp->sq.cons)
		qp->req.idx = qp->sq.cons;
	if (qp->sq.ring.buf) {
		qp->sq.ring.cons = qp->sq.cons;
		sroce_ring_publish_cons(&qp->sq.ring);
	}
	for (; n; n--, idx++)
		sroce_flush_one_send(qp, sroce_sq_wqe(qp, idx));
	/* A refused WQE was taken too: it is still between cons and prod. */
	return qp->sq.cons != qp->sq.prod || fetched > 0;
}

/**
 * sroce_qp_flush_sq() - complete every outstanding send work request of an
 *	ERR QP with IB_WC_WR_FLUSH_ERR
 * @qp: the QP
 *
 * Work requests whose outcome is already known complete with it first.  A
 * user QP's ring is flushed up to the producer index it holds when the
 * flush begins: a process that keeps posting gets one ring's worth per
 * doorbell.  Does nothing unless the QP is ERR.
 *
 * Context: Process context; must not hold qp->sq.lock. Takes it.
 */
void sroce_qp_flush_sq(struct sroce_qp *qp)
{
	unsigned long flags;
	bool more;
	u32 end = 0;

	might_sleep();
	if (qp->sq.ring.buf)
		end = sroce_ring_load_prod(&qp->sq.ring);
	do {
		spin_lock_irqsave(&qp->sq.lock, flags);
		more = sroce_qp_flush_sq_batch(qp, end);
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		cond_resched();
	} while (more);
}

/*
 * One hold of resp.lock: complete at most @n of the QP's own receive work
 * requests with IB_WC_WR_FLUSH_ERR.  Returns how many there were.
 */
static u32 sroce_qp_flush_rq_batch(struct sroce_qp *qp, u32 n)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	u32 done;

	lockdep_assert_held(&qp->resp.lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR)
		return 0;
	for (done = 0; done < n; done++) {
		if (!sroce_rq_skip(&qp->rq, &wc.wr_id))
			break;
		sroce_cq_post(qp->rcq, &wc, false);
	}
	return done;
}

/**
 * sroce_qp_flush_rq() - complete every posted receive work request of an
 *	ERR QP with IB_WC_WR_FLUSH_ERR
 * @qp: the QP; a QP on an SRQ leaves the SRQ's requests alone and raises
 *	IB_EVENT_QP_LAST_WQE_REACHED
 *
 * As many work requests as the queue holds when the flush begins, at most
 * one ring's worth, whatever the process does to its producer index
 * meanwhile.  Does nothing unless the QP is ERR.
 *
 * Context: Process context. Takes qp->resp.lock.
 */
void sroce_qp_flush_rq(struct sroce_qp *qp)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	bool last_wqe = false;
	u32 left = 0, n, taken;

	might_sleep();
	spin_lock_bh(&qp->resp.lock);
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		last_wqe = qp->srq && !qp->resp.last_wqe;
		qp->resp.last_wqe = true;
		if (qp->resp.have_wqe) {
			qp->resp.have_wqe = false;
			wc.wr_id = qp->resp.wqe.wr_id;
			sroce_cq_post(qp->rcq, &wc, false);
		}
		if (!qp->srq)
			left = sroce_rq_count(&qp->rq);
	}
	spin_unlock_bh(&qp->resp.lock);
	while (left) {
		n = min_t(u32, left, SROCE_LOCK_BATCH);
		spin_lock_bh(&qp->resp.lock);
		taken = sroce_qp_flush_rq_batch(qp, n);
		spin_unlock_bh(&qp->resp.lock);
		left = taken == n ? left - n : 0;
		cond_resched();
	}
	/* The SRQ's requests stay for other QPs; this one takes no more. */
	if (last_wqe)
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}
