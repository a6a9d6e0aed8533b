// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * comp.c - the completer: what RC responses (ACKs, NAKs, READ responses,
 * atomic acknowledgements) and timeouts do to the send queue, and the
 * in-order retirement of work requests into completions.
 *
 * It runs in softirq when a response arrives and from the QP's timers,
 * under qp->sq.lock.  A response is only accepted for a PSN the requester
 * has sent (below req.max_psn: during a go-back, responses to the first
 * transmission still count) and not yet seen acknowledged.  Work requests
 * complete strictly in order (sroce_comp_retire()); a READ or an atomic
 * only completes on its own responses, never implicitly.
 *
 * The responder of the peer never sends an ACK ahead of a READ response it
 * still owes (owed.c), so an ACK or NAK for a PSN past an unfinished READ
 * means the READ's responses were lost: the READ is asked again from its
 * first missing packet.
 */
#include <linux/moduleparam.h>

#include "hdr.h"
#include "opcode.h"
#include "sroce.h"
#include "trace.h"

/*
 * What a response or a timeout comes to.  The completer counts a dropped
 * response, and runs the requester, once it has dropped the lock.
 */
enum sroce_comp_verdict {
	SROCE_COMP_NOTHING,	/* handled; nothing more to do */
	SROCE_COMP_KICK,	/* handled; run the requester if it waits */
	SROCE_COMP_FAIL,	/* the QP failed (sroce_qp_fail_wqe()) */
	SROCE_COMP_DUP,		/* for a PSN already acknowledged: dropped */
	SROCE_COMP_DROP,	/* a response nothing explains: dropped */
	SROCE_COMP_FAULT,	/* for memory being faulted in: dropped, and
				 * the requester goes back to it (odp.c)
				 */
};

/*
 * A floor under every QP's local ACK timeout, as some RoCE NICs apply one:
 * applications such as ibv_rc_pingpong fix the timeout at 67 ms, shorter
 * than a virtual machine on a busy host may stall.  Read at every arming;
 * the QP's own attribute (query_qp) is left as it was set.
 */
static unsigned int min_ack_timeout;
module_param(min_ack_timeout, uint, 0644);
MODULE_PARM_DESC(min_ack_timeout,
		 "floor under RC QPs' local ACK timeout, as a timeout code (4.096 us * 2^code, 0-31; default 0: none)");

/**
 * sroce_comp_timeout() - the local ACK timeout in jiffies
 * @qp: the QP (timeout attribute non-zero)
 *
 * Context: Any context.
 * Return: 4.096 us * 2^timeout, or the min_ack_timeout floor when that is
 * longer; at least one jiffy.
 */
unsigned long sroce_comp_timeout(struct sroce_qp *qp)
{
	unsigned int code = max_t(unsigned int, qp->timeout,
				  min(READ_ONCE(min_ack_timeout), 31U));

	return nsecs_to_jiffies(4096ULL << code) + 1;
}

/**
 * sroce_comp_arm() - start the local ACK timeout from now
 * @qp: the QP (timeout attribute non-zero)
 *
 * The timer is touched only if it is stopped or would expire later than
 * the new deadline; timer_reduce() tells that without a lock when it is
 * already due earlier, the common case when every message restarts the
 * timeout (struct sroce_comp).
 *
 * Context: Any context. Caller holds qp->sq.lock.
 */
void sroce_comp_arm(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->comp.deadline = jiffies + sroce_comp_timeout(qp);
	qp->comp.armed = true;
	timer_reduce(&qp->retrans_timer, qp->comp.deadline);
}

/*
 * Stop the local ACK timeout.  The timer may still expire; its handler
 * then finds nothing armed.
 */
static void sroce_comp_disarm(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->comp.armed = false;
}

/* RNR NAK timer codes in units of 10 us (IBTA table 45, by its pattern). */
static unsigned int sroce_rnr_10us(u8 code)
{
	if (!code)
		return 65536;
	if (code == 1)
		return 1;
	return (2 + (code & 1)) << ((code - 2) / 2);
}

static enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		/* User QPs only: libibverbs' number (6.2+: the kernel's). */
		return (enum ib_wc_opcode)SROCE_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		/* Likewise. */
		return (enum ib_wc_opcode)SROCE_WC_FLUSH;
	default:
		return IB_WC_SEND;
	}
}

static void sroce_comp_post(struct sroce_qp *qp, struct sroce_swqe *w)
{
	struct ib_wc wc = {
		.wr_id = w->wr_id,
		.status = w->status,
		.opcode = sroce_wc_opcode(w->opcode),
		.qp = &qp->ibqp,
	};

	if (w->status == IB_WC_SUCCESS && !(w->flags & SROCE_SEND_SIGNALED))
		return;
	if (w->status == IB_WC_SUCCESS && sroce_wr_is_rd_atomic(w->opcode))
		wc.byte_len = w->length;
	sroce_cq_post(qp->scq, &wc, false);
}

/**
 * sroce_sq_give_back() - give a user ring the slots of the work requests
 *	just retired
 * @qp: the QP
 * @old: qp->sq.cons before they were
 *
 * Those the device queued itself (SROCE_SWQE_TM) had no slot there.
 *
 * Context: Any context. Caller holds qp->sq.lock.
 */
void sroce_sq_give_back(struct sroce_qp *qp, u32 old)
{
	u32 n = qp->sq.cons - old, idx;

	lockdep_assert_held(&qp->sq.lock);
	if (!qp->sq.ring.buf || !n)
		return;
	if (qp->sq.num_tm)
		for (idx = old; idx != qp->sq.cons; idx++)
			if (sroce_sq_wqe(qp, idx)->flags & SROCE_SWQE_TM)
				n--;
	qp->sq.ring.cons += n;
	sroce_ring_publish_cons(&qp->sq.ring);
}

/**
 * sroce_comp_retire() - complete, in order, the work requests whose outcome
 *	is known
 * @qp: the QP
 *
 * Gives their slots back, then posts their completions (unsignaled
 * successes complete silently) and, in SQD, raises IB_EVENT_SQ_DRAINED
 * once nothing sent is outstanding.
 *
 * Context: Any context. Caller holds qp->sq.lock.
 */
void sroce_comp_retire(struct sroce_qp *qp)
{
	u32 old = qp->sq.cons, idx;

	lockdep_assert_held(&qp->sq.lock);
	while (qp->sq.cons != qp->sq.prod &&
	       sroce_sq_wqe(qp, qp->sq.cons)->state == SROCE_WQE_DONE)
		qp->sq.cons++;
	/* Retiring a work request refused when fetched passes the requester. */
	if (qp->req.idx - qp->sq.cons > qp->sq.prod - qp->sq.cons)
		qp->req.idx = qp->sq.cons;
	/*
	 * A user ring's slots go back before the completions appear: a
	 * process may post again the moment it polls a send's completion
	 * (ibv_rc_pingpong does, into a one-deep send queue), and must find
	 * the slot free.  The work requests' private copies stay ours until
	 * the lock is dropped, as fetching into them takes it.
	 */
	sroce_sq_give_back(qp, old);
	for (idx = old; idx != qp->sq.cons; idx++) {
		if (sroce_sq_wqe(qp, idx)->flags & SROCE_SWQE_TM)
			sroce_tm_swqe_done(qp, idx);
		else
			sroce_comp_post(qp, sroce_sq_wqe(qp, idx));
	}
	if (READ_ONCE(qp->state) == IB_QPS_SQD && !qp->comp.drained &&
	    qp->sq.cons == qp->req.idx) {
		qp->comp.drained = true;
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
	}
}

/* Progress: the retry counters start over and the timer restarts. */
static void sroce_comp_progress(struct sroce_qp *qp, u32 next_psn)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->comp.psn = next_psn;
	qp->comp.went_back = false;
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	if (qp->comp.psn == qp->req.max_psn)
		sroce_comp_disarm(qp);
	else if (qp->timeout)
		sroce_comp_arm(qp);
}

/*
 * Mark done the SEND and WRITE work requests all of whose packets are
 * acknowledged by @psn (inclusive).  Returns the first sent work request
 * that is not done: one partly acknowledged, or a READ or atomic waiting
 * for its responses; NULL when nothing sent is outstanding.
 */
static struct sroce_swqe *sroce_comp_ack_upto(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *w;
	u32 idx;

	for (idx = qp->sq.cons; idx != qp->sq.prod; idx++) {
		w = sroce_sq_wqe(qp, idx);
		if (w->state == SROCE_WQE_DONE)
			continue;
		if (w->state == SROCE_WQE_POSTED)
			return NULL;
		if (sroce_wr_is_rd_atomic(w->opcode) ||
		    sroce_psn_diff(w->last_psn, psn) > 0)
			return w;
		w->state = SROCE_WQE_DONE;
		w->status = IB_WC_SUCCESS;
	}
	return NULL;
}

/* Ask the requester to go back to @psn, for @why. */
static enum sroce_comp_verdict sroce_comp_retry(struct sroce_qp *qp, u32 psn,
						enum sroce_retry_why why)
{
	struct sroce_swqe *w;

	lockdep_assert_held(&qp->sq.lock);
	if (!qp->comp.retry_left) {
		w = sroce_sq_wqe(qp, qp->sq.cons);
		sroce_qp_fail_wqe(qp, w, IB_WC_RETRY_EXC_ERR, 0);
		return SROCE_COMP_FAIL;
	}
	qp->comp.retry_left--;
	qp->comp.went_back = true;
	qp->req.retry = true;
	qp->req.retry_psn = psn;
	qp->req.retry_why = why;
	return SROCE_COMP_KICK;
}

/*
 * The responder says that packets were lost (a gap in its responses, a
 * sequence-error NAK): go back to @psn, unless a go-back is already under
 * way with nothing acknowledged since (see sroce_comp.went_back).
 */
static enum sroce_comp_verdict sroce_comp_go_back(struct sroce_qp *qp, u32 psn,
						  enum sroce_retry_why why)
{
	lockdep_assert_held(&qp->sq.lock);
	if (qp->comp.went_back)
		return SROCE_COMP_NOTHING;
	return sroce_comp_retry(qp, psn, why);
}

/* A work request fails on the responder's word. */
static enum sroce_comp_verdict sroce_comp_remote_error(struct sroce_qp *qp,
						       struct sroce_swqe *w,
						       u32 status)
{
	sroce_qp_fail_wqe(qp, w, status, 0);
	return SROCE_COMP_FAIL;
}

/*
 * A response past the first packet of @w, the first READ or atomic not
 * done, says the responder took every request before @w: the completer
 * moves on to @w (the SENDs and WRITEs before it are done already,
 * sroce_comp_ack_upto()), and that progress starts the retries over, as
 * for any work request completed.
 */
static void sroce_comp_upto_rd_atomic(struct sroce_qp *qp,
				      const struct sroce_swqe *w)
{
	if (sroce_psn_diff(w->first_psn, qp->comp.psn) > 0)
		sroce_comp_progress(qp, w->first_psn);
}

static enum sroce_comp_verdict sroce_comp_ack(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *w = sroce_comp_ack_upto(qp, psn);

	if (w && sroce_wr_is_rd_atomic(w->opcode) &&
	    sroce_psn_diff(psn, w->first_psn) >= 0) {
		/* Acknowledged past a READ/atomic: its responses are lost. */
		sroce_comp_upto_rd_atomic(qp, w);
		return sroce_comp_go_back(qp, qp->comp.psn,
					  SROCE_RETRY_ACK_PAST_RD);
	}
	sroce_comp_progress(qp, sroce_psn_add(psn, 1));
	return SROCE_COMP_KICK;
}

/*
 * A NAK for @psn says the responder received everything before it: the
 * SENDs and WRITEs before it are done, and the completer moves on to @psn
 * (the first work request not done is @w).  Not past a READ or atomic
 * whose responses have not all arrived, though: they were lost, or are
 * late, and the NAK does not carry them.  Returns where the requester must
 * go back to: @psn, or the first response still missing.
 */
static u32 sroce_comp_nak_upto(struct sroce_qp *qp, struct sroce_swqe *w,
			       u32 psn)
{
	if (sroce_wr_is_rd_atomic(w->opcode) &&
	    sroce_psn_diff(psn, w->first_psn) > 0) {
		sroce_comp_upto_rd_atomic(qp, w);
		return qp->comp.psn;
	}
	if (sroce_psn_diff(psn, qp->comp.psn) > 0)
		sroce_comp_progress(qp, psn);
	return psn;
}

/* A NAK of @syndrome for @psn was received: counted as @c, and traced. */
static void sroce_comp_nak_rcvd(struct sroce_qp *qp, u8 syndrome, u32 psn,
				enum sroce_counter c)
{
	sroce_count(sroce_qp_dev(qp), c);
	trace_sroce_nak_rcvd(qp, syndrome, psn);
}

static enum sroce_comp_verdict sroce_comp_rnr(struct sroce_qp *qp, u32 psn,
					      u8 code)
{
	struct sroce_swqe *w;
	u32 usecs;

	sroce_comp_nak_rcvd(qp, SROCE_AETH_RNR_NAK | code, psn,
			    SROCE_CNT_RNR_NAKS_RCVD);
	w = sroce_comp_ack_upto(qp, sroce_psn_add(psn, SROCE_24BIT_MASK));
	if (!w)
		return SROCE_COMP_NOTHING;
	psn = sroce_comp_nak_upto(qp, w, psn);
	if (qp->rnr_retry != 7) {
		if (!qp->comp.rnr_left)
			return sroce_comp_remote_error(qp, w,
						       IB_WC_RNR_RETRY_EXC_ERR);
		qp->comp.rnr_left--;
	}
	/*
	 * The responder answered: the request got there and the answer came
	 * back, so the transport retries start over.  A local ACK timeout
	 * that fired while this NAK was on its way (a round trip longer than
	 * the timeout) is not held against the QP round after round; only
	 * rnr_retry bounds how long the receiver may stay not ready.
	 */
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.psn = psn;
	qp->comp.rnr_wait = true;
	qp->req.retry = true;
	qp->req.retry_psn = psn;
	qp->req.retry_why = SROCE_RETRY_RNR;
	sroce_comp_disarm(qp);
	usecs = sroce_rnr_10us(code) * 10;
	trace_sroce_rnr_wait(qp, usecs);
	mod_timer(&qp->rnr_timer, jiffies + usecs_to_jiffies(usecs) + 1);
	return SROCE_COMP_NOTHING;
}

static enum sroce_comp_verdict sroce_comp_nak(struct sroce_qp *qp, u32 psn,
					      u8 code)
{
	static const u32 status[] = {
		[SROCE_NAK_INVALID_REQ] = IB_WC_REM_INV_REQ_ERR,
		[SROCE_NAK_REM_ACCESS] = IB_WC_REM_ACCESS_ERR,
		[SROCE_NAK_REM_OP] = IB_WC_REM_OP_ERR,
		[SROCE_NAK_INVALID_RD] = IB_WC_REM_INV_RD_REQ_ERR,
	};
	struct sroce_swqe *w;

	w = sroce_comp_ack_upto(qp, sroce_psn_add(psn, SROCE_24BIT_MASK));
	if (!w)
		return SROCE_COMP_NOTHING;
	if (code == SROCE_NAK_PSN_SEQ_ERR) {
		sroce_comp_nak_rcvd(qp, SROCE_AETH_NAK | code, psn,
				    SROCE_CNT_SEQ_NAKS_RCVD);
		/* Packets sent behind an RNR-NAKed one: the RNR retry covers
		 * them, they must not spend the transport retries.
		 */
		if (qp->comp.rnr_wait)
			return SROCE_COMP_NOTHING;
		return sroce_comp_go_back(qp, sroce_comp_nak_upto(qp, w, psn),
					  SROCE_RETRY_SEQ_NAK);
	}
	sroce_comp_nak_rcvd(qp, SROCE_AETH_NAK | code, psn,
			    SROCE_CNT_ERR_NAKS_RCVD);
	return sroce_comp_remote_error(qp, w, code < ARRAY_SIZE(status) &&
				       status[code] ? status[code] :
				       IB_WC_REM_OP_ERR);
}

static enum sroce_comp_verdict sroce_comp_aeth(struct sroce_qp *qp,
					       struct sroce_pkt *pkt)
{
	u8 syndrome = sroce_aeth_syndrome(sroce_pkt_aeth(pkt));

	switch (syndrome & SROCE_AETH_TYPE_MASK) {
	case SROCE_AETH_ACK:
		return sroce_comp_ack(qp, pkt->psn);
	case SROCE_AETH_RNR_NAK:
		return sroce_comp_rnr(qp, pkt->psn,
				      syndrome & SROCE_AETH_CODE_MASK);
	case SROCE_AETH_NAK:
		return sroce_comp_nak(qp, pkt->psn,
				      syndrome & SROCE_AETH_CODE_MASK);
	default:
		return SROCE_COMP_DROP;
	}
}

/*
 * The READ (@read) or atomic work request a response is for.  NULL when it
 * is for none of that kind (*@v is then SROCE_COMP_DROP), or when
 * responses before it are missing: it is dropped (counted), and *@v says
 * what asking again for the first missing one comes to.
 */
static struct sroce_swqe *
sroce_comp_rd_atomic_target(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    bool read, enum sroce_comp_verdict *v)
{
	u32 psn = pkt->psn;
	struct sroce_swqe *w;

	*v = SROCE_COMP_DROP;
	w = sroce_comp_ack_upto(qp, sroce_psn_add(psn, SROCE_24BIT_MASK));
	if (!w || !sroce_wr_is_rd_atomic(w->opcode) ||
	    sroce_psn_diff(psn, w->first_psn) < 0)
		return NULL;
	/*
	 * In order: the next response of @w, or its first, which also
	 * acknowledges what was sent before it.  Past @w: a later READ's or
	 * atomic's, and @w's were lost.
	 */
	if (sroce_psn_diff(psn, w->last_psn) > 0 ||
	    (psn != qp->comp.psn && psn != w->first_psn)) {
		/* A gap in the responses: ask again from the first missing. */
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_GAP);
		/* Never @w's first packet, which is no gap: past it. */
		sroce_comp_upto_rd_atomic(qp, w);
		*v = sroce_comp_go_back(qp, qp->comp.psn, SROCE_RETRY_GAP);
		return NULL;
	}
	if (read ? !sroce_wr_is_read_answered(w->opcode) :
		   !sroce_wr_is_atomic(w->opcode))
		return NULL;
	*v = SROCE_COMP_NOTHING;
	return w;
}

static bool sroce_comp_read_shape_ok(struct sroce_qp *qp,
				     const struct sroce_swqe *w,
				     struct sroce_pkt *pkt, u32 offset)
{
	u32 flags = pkt->info->flags, want;

	if (pkt->psn == w->first_psn && pkt->psn == w->last_psn)
		want = SROCE_OPF_ONLY;
	else if (pkt->psn == w->first_psn)
		want = SROCE_OPF_FIRST;
	else if (pkt->psn == w->last_psn)
		want = SROCE_OPF_LAST;
	else
		want = SROCE_OPF_MIDDLE;
	if (!(flags & want) || !(flags & SROCE_OPF_READ))
		return false;
	/* An ATOMIC WRITE's or a FLUSH's answer carries no data. */
	if (w->opcode == SROCE_WR_ATOMIC_WRITE || w->opcode == SROCE_WR_FLUSH)
		return !pkt->paylen;
	if (flags & SROCE_OPF_END)
		return pkt->paylen == w->length - offset;
	return pkt->paylen == qp->pmtu;
}

/*
 * A response whose data would land in on-demand memory of ours that is
 * not there (a fault is queued): as if it were lost, the requester goes
 * back to it, and sends the request again once the memory is there
 * (sroce_sge_prepare() holds it until then, so this cannot repeat faster
 * than faults resolve).  Not the network's doing: no retry is spent, and
 * a go-back already under way does not stand in for this one, which may
 * be that go-back's own answer.
 */
static enum sroce_comp_verdict sroce_comp_fault(struct sroce_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->comp.went_back = true;
	qp->req.retry = true;
	qp->req.retry_psn = psn;
	qp->req.retry_why = SROCE_RETRY_PAGE_FAULT;
	return SROCE_COMP_FAULT;
}

/*
 * The data of @w's response at @psn has been copied to @w's SGEs, with
 * @err the copy's result; its last response completes @w.
 */
static enum sroce_comp_verdict
sroce_comp_rd_atomic_placed(struct sroce_qp *qp, struct sroce_swqe *w,
			    u32 psn, int err)
{
	if (err == -EAGAIN)
		return sroce_comp_fault(qp, psn);
	if (err)
		return sroce_comp_remote_error(qp, w, IB_WC_LOC_PROT_ERR);
	if (psn == w->last_psn) {
		w->state = SROCE_WQE_DONE;
		w->status = IB_WC_SUCCESS;
		qp->req.rd_atomic--;
	}
	sroce_comp_progress(qp, sroce_psn_add(psn, 1));
	return SROCE_COMP_KICK;
}

/* @w's SGEs, by its slot number, which like its index names its slot. */
static const struct sroce_sge *sroce_comp_sges(struct sroce_qp *qp,
					       struct sroce_swqe *w)
{
	return sroce_sq_sges(qp, w - qp->sq.wqe);
}

static enum sroce_comp_verdict sroce_comp_read(struct sroce_qp *qp,
					       struct sroce_pkt *pkt)
{
	enum sroce_comp_verdict v;
	struct sroce_swqe *w;
	u32 offset;
	int err;

	w = sroce_comp_rd_atomic_target(qp, pkt, true, &v);
	if (!w)
		return v;
	offset = ((pkt->psn - w->first_psn) & SROCE_24BIT_MASK) * qp->pmtu;
	if (!sroce_comp_read_shape_ok(qp, w, pkt, offset))
		return SROCE_COMP_DROP;
	err = sroce_pkt_to_sge(qp, qp->ibqp.pd, sroce_comp_sges(qp, w),
			       w->num_sge, offset, pkt, 0, pkt->paylen);
	return sroce_comp_rd_atomic_placed(qp, w, pkt->psn, err);
}

/* An atomic's one response: always its last. */
static enum sroce_comp_verdict sroce_comp_atomic(struct sroce_qp *qp,
						 struct sroce_pkt *pkt)
{
	enum sroce_comp_verdict v;
	struct sroce_swqe *w;
	u64 orig;
	int err;

	w = sroce_comp_rd_atomic_target(qp, pkt, false, &v);
	if (!w)
		return v;
	orig = be64_to_cpu(sroce_pkt_atmack(pkt)->orig);
	err = sroce_sge_copy(qp, qp->ibqp.pd, sroce_comp_sges(qp, w),
			     w->num_sge, 0, &orig, sizeof(orig), SROCE_TO_MR);
	return sroce_comp_rd_atomic_placed(qp, w, pkt->psn, err);
}

static enum sroce_comp_verdict sroce_comp_dispatch(struct sroce_qp *qp,
						   struct sroce_pkt *pkt)
{
	u8 op = pkt->opcode & SROCE_OP_MASK;

	lockdep_assert_held(&qp->sq.lock);
	if (sroce_psn_diff(pkt->psn, qp->comp.psn) < 0)
		return SROCE_COMP_DUP;
	if (sroce_psn_diff(pkt->psn, qp->req.max_psn) >= 0)
		return SROCE_COMP_DROP;
	if (op == SROCE_OP_ACK)
		return sroce_comp_aeth(qp, pkt);
	/* A response's AETH must say ACK. */
	if ((pkt->info->flags & SROCE_OPF_AETH) &&
	    (sroce_aeth_syndrome(sroce_pkt_aeth(pkt)) & SROCE_AETH_TYPE_MASK))
		return SROCE_COMP_DROP;
	if (op == SROCE_OP_ATOMIC_ACK)
		return sroce_comp_atomic(qp, pkt);
	return sroce_comp_read(qp, pkt);
}

static void sroce_comp_finish(struct sroce_qp *qp, enum sroce_comp_verdict v)
{
	if (v == SROCE_COMP_KICK)
		sroce_qp_sched_req(qp);
}

static enum sroce_counter sroce_comp_drop_counter(enum sroce_comp_verdict v)
{
	if (v == SROCE_COMP_DUP)
		return SROCE_CNT_RX_DUP_RESP;
	if (v == SROCE_COMP_FAULT)
		return SROCE_CNT_RX_DROP_PAGE_FAULT;
	return SROCE_CNT_RX_DROP_RESP;
}

/**
 * sroce_comp_rcv() - a response for an RC or XRC initiator QP's requester
 * @pkt: the packet, validated by rx.c
 *
 * Context: Softirq, or process context with BH disabled.
 */
void sroce_comp_rcv(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;
	enum sroce_comp_verdict v;
	unsigned long flags;

	if (qp->ibqp.qp_type != IB_QPT_RC &&
	    qp->ibqp.qp_type != IB_QPT_XRC_INI) {
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_QP_TYPE);
		return;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	if (qp->dead) {
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		/* Being destroyed: counted as the responder counts it. */
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_QP_STATE);
		return;
	}
	sroce_count(pkt->sdev, SROCE_CNT_RX_RC_UC_PACKETS);
	v = sroce_comp_dispatch(qp, pkt);
	if (v == SROCE_COMP_DUP || v == SROCE_COMP_DROP ||
	    v == SROCE_COMP_FAULT) {
		sroce_drop_pkt(pkt, sroce_comp_drop_counter(v));
		v = v == SROCE_COMP_FAULT ? SROCE_COMP_KICK : SROCE_COMP_NOTHING;
	}
	/* Wake the requester only if it waits for us. */
	if (v == SROCE_COMP_KICK && !qp->req.stalled && !qp->req.retry)
		v = SROCE_COMP_NOTHING;
	sroce_comp_retire(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_comp_finish(qp, v);
}

static enum sroce_comp_verdict sroce_comp_timeout_locked(struct sroce_qp *qp)
{
	u8 state = READ_ONCE(qp->state);

	lockdep_assert_held(&qp->sq.lock);
	if (!qp->comp.armed)
		return SROCE_COMP_NOTHING;
	if (qp->dead || (state != IB_QPS_RTS && state != IB_QPS_SQD) ||
	    qp->comp.psn == qp->req.max_psn || qp->comp.rnr_wait) {
		sroce_comp_disarm(qp);
		return SROCE_COMP_NOTHING;
	}
	/*
	 * Restarted since the timer was set (progress, a go-back), or the
	 * timer was set for an earlier deadline: it waits on.
	 */
	if (time_before(jiffies, qp->comp.deadline)) {
		mod_timer(&qp->retrans_timer, qp->comp.deadline);
		return SROCE_COMP_NOTHING;
	}
	/*
	 * A go-back the requester has not started yet (it had no CPU: a
	 * stalled guest's clock jumps, and timeouts would spend retry_cnt
	 * before anything was sent again), or a requester waiting for a page
	 * fault of its own memory: not the responder's silence, no retry
	 * spent.
	 */
	if (qp->req.retry || qp->req.faulting) {
		sroce_comp_arm(qp);
		return SROCE_COMP_NOTHING;
	}
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_TIMEOUTS);
	trace_sroce_ack_timeout(qp);
	return sroce_comp_retry(qp, qp->comp.psn, SROCE_RETRY_TIMEOUT);
}

/**
 * sroce_comp_retrans_timer() - the local ACK timeout expired
 * @t: qp->retrans_timer
 *
 * Without progress since it was armed, the requester goes back to the
 * oldest unacknowledged packet, or the oldest work request fails with
 * IB_WC_RETRY_EXC_ERR once retry_cnt retries are spent.
 *
 * Context: Softirq (timer).
 */
void sroce_comp_retrans_timer(struct timer_list *t)
{
	struct sroce_qp *qp = sroce_timer_container(qp, t, retrans_timer);
	enum sroce_comp_verdict v;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	v = sroce_comp_timeout_locked(qp);
	if (v == SROCE_COMP_KICK)
		sroce_comp_arm(qp);
	sroce_comp_retire(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_comp_finish(qp, v);
}

/**
 * sroce_comp_rnr_timer() - an RNR NAK's wait is over
 * @t: qp->rnr_timer
 *
 * Context: Softirq (timer).
 */
void sroce_comp_rnr_timer(struct timer_list *t)
{
	struct sroce_qp *qp = sroce_timer_container(qp, t, rnr_timer);
	unsigned long flags;

	trace_sroce_rnr_timer(qp);
	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->comp.rnr_wait = false;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_qp_sched_req(qp);
}
