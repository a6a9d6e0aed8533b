// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_state.c - a queue pair's state: the state machine of modify_qp,
 * failures on the data path, async events, and flushing.  Creation,
 * lookups and destruction are in qp.c.
 *
 * modify_qp moves a QP with both of its locks held; the data path only
 * ever fails it, from any context, through sroce_qp_error(), which moves
 * it to ERR at once with a compare-and-exchange and leaves flushing and
 * the async event to the QP's event work, in process context.  A move by
 * modify_qp is a compare-and-exchange too, from the state it checked: if
 * the data path failed the QP meanwhile, the move is refused and the QP
 * stays ERR.  Flushing takes a queue's lock for at most SROCE_LOCK_BATCH
 * work requests at a time, and never for more than the queue held when it
 * began (a process can move its producer index forward forever).
 */
#include "hdr.h"
#include "sroce.h"
#include "trace.h"

/* Beside async events (bit = enum ib_event_type), qp->events asks for: */
#define SROCE_QP_EV_FLUSH	BIT(31)

static void sroce_qp_sched_event(struct sroce_qp *qp, u32 bits)
{
	atomic_or(bits, &qp->events);
	if (READ_ONCE(qp->dead))
		return;
	sroce_qp_get(qp);
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
	trace_sroce_qp_state(qp, old, IB_QPS_ERR, event, _RET_IP_);
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

/**
 * sroce_qp_event_work() - the QP's event work: flushes its queues and
 *	raises its async events, as qp->events asks
 * @work: qp->event_work; the work holds a QP reference
 *
 * Context: Process context (sroce_wq).
 */
void sroce_qp_event_work(struct work_struct *work)
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
	if (moved)
		trace_sroce_qp_state(qp, cur, next, SROCE_QP_CAUSE_MODIFY, 0);
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
	u32 prod, old;

	lockdep_assert_held(&qp->modify_lock);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	if (cancel_work_sync(&qp->resp.work))
		sroce_qp_put(qp);
	spin_lock_bh(&qp->resp.lock);
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->sq.ring.buf) {
		prod = sroce_ring_load_prod(&qp->sq.ring);
		if (sroce_ring_count_valid(&qp->sq.ring, prod, qp->sq.ring.cons))
			qp->sq.ring_next = prod;
		qp->sq.ring.cons = qp->sq.ring_next;
		sroce_ring_publish_cons(&qp->sq.ring);
	}
	qp->sq.cons = qp->sq.prod;
	qp->sq.num_tm = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->req.idx = qp->sq.prod;
	old = READ_ONCE(qp->state);
	WRITE_ONCE(qp->state, IB_QPS_RESET);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	trace_sroce_qp_state(qp, old, IB_QPS_RESET, SROCE_QP_CAUSE_MODIFY, 0);
	if (sroce_qp_has_rq(qp))
		sroce_rq_discard(&qp->rq);
	sroce_resp_reset(qp);
	spin_unlock_bh(&qp->resp.lock);
	sroce_cc_reset(qp);
}

/*
 * A rate limit (in kb/s, 0: none) paces what an RC, UC or UD QP sends
 * (cc.c), whatever its state; ib_modify_qp_is_ok() knows it for raw packet
 * QPs only, so sroce checks it itself.
 */
static int sroce_qp_check_rate_limit(struct sroce_qp *qp, u32 kbps)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	if (type != IB_QPT_RC && type != IB_QPT_UC && type != IB_QPT_UD)
		return -EOPNOTSUPP;
	if (kbps && (kbps < SROCE_CC_LIMIT_MIN_KBPS ||
		     kbps > SROCE_CC_LIMIT_MAX_KBPS))
		return -EINVAL;
	return 0;
}

/*
 * ib_core's table of transitions admits a rate limit only for raw packet
 * QPs, from RTR to RTS and from RTS to RTS; sroce paces RC, UC and UD QPs
 * and takes their limit in the same two transitions.
 */
static bool sroce_qp_rate_limit_ok(enum ib_qp_state cur, enum ib_qp_state next)
{
	return next == IB_QPS_RTS && (cur == IB_QPS_RTR || cur == IB_QPS_RTS);
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
	/*
	 * IB_ACCESS_ON_DEMAND means nothing for a QP, but applications pass
	 * their regions' flags (pyverbs' ODP tests do), and hardware takes
	 * them: kept, and shown by query_qp.  The FLUSH rights are the QP's
	 * own (a FLUSH needs them of both the QP and the region); rdma_cm
	 * asks for them on 6.2 and later, where the device announces FLUSH.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_ON_DEMAND |
				       SROCE_MR_FLUSH_RIGHTS)))
		return -EINVAL;
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;
	if (mask & IB_QP_RATE_LIMIT)
		return sroce_qp_check_rate_limit(qp, attr->rate_limit);
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
	if (sroce_qp_connected(qp))
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
 * Return: 0, or -EINVAL (also for a wrong IB_QP_CUR_STATE; when the data
 * path failed the QP while the transition was being made: it stays ERR;
 * for a rate limit out of range, or given other than from RTR or RTS to
 * RTS); -EOPNOTSUPP for path migration and for the rate limit of a QP
 * that is not RC, UC or UD.
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
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type,
				mask & ~IB_QP_RATE_LIMIT))
		goto out_unlock;
	if ((mask & IB_QP_RATE_LIMIT) && !sroce_qp_rate_limit_ok(cur, next))
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
	if (mask & IB_QP_RATE_LIMIT)
		sroce_cc_set_limit(qp, attr->rate_limit);
	if (mask & IB_QP_STATE)
		err = sroce_qp_transition(qp, cur, next, attr, mask);
out_unlock:
	mutex_unlock(&qp->modify_lock);
	return err;
}

/*
 * A work request whose outcome is known completes with it; others flush.
 * Those the device queued itself complete through tm.c.
 */
static void sroce_flush_one_send(struct sroce_qp *qp, u32 idx)
{
	struct sroce_swqe *wqe = sroce_sq_wqe(qp, idx);
	bool done = wqe->state == SROCE_WQE_DONE;
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = done ? wqe->status : IB_WC_WR_FLUSH_ERR,
		.qp = &qp->ibqp,
	};

	if (wqe->flags & SROCE_SWQE_TM) {
		wqe->status = wc.status;
		sroce_tm_swqe_done(qp, idx);
		return;
	}
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
	sroce_sq_give_back(qp, idx);
	for (; n; n--, idx++)
		sroce_flush_one_send(qp, idx);
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
		if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
			sroce_xrc_fail_wqe(qp, &wc);
		} else if (qp->resp.have_wqe) {
			qp->resp.have_wqe = false;
			wc.wr_id = qp->resp.wqe.wr_id;
			sroce_cq_post(qp->rcq, &wc, false);
		}
		if (sroce_qp_has_rq(qp))
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
