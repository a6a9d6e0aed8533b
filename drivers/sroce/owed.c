// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * owed.c - what the responder owes its requester, sent in PSN order: the
 * responder resources (one per READ or atomic request the peer may have
 * outstanding, max_dest_rd_atomic of them, taken in turn), the READ
 * responses built from them packet by packet, the atomic ACKs, and the
 * ACK or NAK held back behind them.
 *
 * resp.c executes requests in the receive path, under qp->resp.lock, and
 * owes here what cannot go at once (sroce_resp_queue_res(),
 * sroce_resp_ack()).  Once it has dropped the lock, the receive path sends
 * a few owed packets itself (sroce_resp_flush_owed()); the responder's
 * work sends the rest from process context.  A duplicate READ or atomic is
 * answered again from its resource, never executed twice.
 */
#include "hdr.h"
#include "opcode.h"
#include "sroce.h"
#include "trace.h"

/* Owed response packets the responder's work sends per run. */
#define SROCE_RESP_WORK_BUDGET 64
/* ... and sroce_resp_kick() before it hands the rest to that work. */
#define SROCE_RESP_KICK_BUDGET 16

/**
 * sroce_resp_ack_skb() - build an ACK-family packet: an ACK or NAK, or an
 *	atomic ACK
 * @qp: the RC QP answering
 * @syndrome: the AETH syndrome
 * @psn: the PSN it answers
 * @atomic: an atomic ACK, carrying @orig
 * @orig: the value the atomic operation found
 *
 * Context: Any context.
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *sroce_resp_ack_skb(struct sroce_qp *qp, u8 syndrome,
				   u32 psn, bool atomic, u64 orig)
{
	u8 opcode = sroce_qp_transport(qp) |
		    (atomic ? SROCE_OP_ATOMIC_ACK : SROCE_OP_ACK);
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	struct sroce_atmack *atmack;
	struct sroce_aeth *aeth;
	void *hdrs, *payload;
	struct sk_buff *skb;

	skb = sroce_tx_alloc(sroce_qp_dev(qp), qp, opcode, 0, qp->dest_qpn,
			     psn, false, false, &hdrs, &payload);
	if (!skb)
		return NULL;
	aeth = hdrs + info->off_aeth;
	aeth->smsn = sroce_aeth_pack(syndrome, qp->resp.msn);
	if (atomic) {
		atmack = hdrs + info->off_atmack;
		atmack->orig = cpu_to_be64(orig);
	}
	return skb;
}

/* A NAK that fails the QP: any but a sequence-error NAK (RNR is no NAK). */
static bool sroce_resp_nak_fatal(u8 syndrome)
{
	return (syndrome & SROCE_AETH_TYPE_MASK) == SROCE_AETH_NAK &&
	       syndrome != (SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR);
}

/*
 * Whether a new ACK/NAK replaces the one held back: an ACK replaces an ACK;
 * a NAK replaces an ACK; an ACK replaces a sequence or RNR NAK once it
 * acknowledges the PSN that NAK was about (the packet asked for arrived
 * meanwhile: sending the NAK would make the requester resend for nothing).
 * A fatal NAK replaces any other, and none replaces it: the QP is going to
 * the error state, where it answers nothing more, and the requester must
 * hear why (a sequence NAK instead would have it resend into silence until
 * its retries ran out).
 */
static bool sroce_resp_ack_replaces(const struct sroce_resp_ack *p,
				    u8 syndrome, u32 psn)
{
	if (!p->valid)
		return true;
	if (sroce_resp_nak_fatal(p->syndrome))
		return false;
	if (sroce_resp_nak_fatal(syndrome) ||
	    (p->syndrome & SROCE_AETH_TYPE_MASK) == SROCE_AETH_ACK)
		return true;
	if ((syndrome & SROCE_AETH_TYPE_MASK) != SROCE_AETH_ACK)
		return false;
	return sroce_psn_diff(psn, p->psn) >= 0;
}

/**
 * sroce_resp_ack() - send an ACK or NAK now, or hold it back behind owed
 *	responses
 * @qp: the RC QP answering
 * @syndrome: the AETH syndrome
 * @psn: the PSN it answers
 * @out: where a packet to send now is queued; the caller sends it once it
 *	has dropped qp->resp.lock
 *
 * While responses are owed, one ACK or NAK is held back (resp.pending) and
 * sent after them; a newer one replaces it or not as
 * sroce_resp_ack_replaces() says.
 *
 * Context: Softirq, or BH disabled. Caller holds qp->resp.lock.
 */
void sroce_resp_ack(struct sroce_qp *qp, u8 syndrome, u32 psn,
		    struct sk_buff_head *out)
{
	struct sroce_resp_ack *p = &qp->resp.pending;
	struct sk_buff *skb;

	lockdep_assert_held(&qp->resp.lock);
	if (qp->resp.queued || qp->resp.owed_busy) {
		if (sroce_resp_ack_replaces(p, syndrome, psn)) {
			p->valid = true;
			p->syndrome = syndrome;
			p->psn = psn;
		}
		return;
	}
	skb = sroce_resp_ack_skb(qp, syndrome, psn, false, 0);
	if (skb)
		__skb_queue_tail(out, skb);
}

/**
 * sroce_resp_nak_sent() - count and trace a NAK the responder decided on
 * @qp: the RC QP answering
 * @syndrome: the NAK's AETH syndrome (an RNR NAK or a NAK)
 * @psn: the PSN it answers
 *
 * Called when the NAK is decided, whether it leaves at once or is held
 * back behind owed responses (and perhaps replaced by an ACK there): its
 * counter is seq_naks_sent, rnr_naks_sent or err_naks_sent.
 *
 * Context: Any context.
 */
void sroce_resp_nak_sent(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	enum sroce_counter c = SROCE_CNT_ERR_NAKS_SENT;

	if ((syndrome & SROCE_AETH_TYPE_MASK) == SROCE_AETH_RNR_NAK)
		c = SROCE_CNT_RNR_NAKS_SENT;
	else if (syndrome == (SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR))
		c = SROCE_CNT_SEQ_NAKS_SENT;
	sroce_count(sroce_qp_dev(qp), c);
	trace_sroce_nak_sent(qp, syndrome, psn);
}

static void sroce_resp_sched(struct sroce_qp *qp)
{
	if (READ_ONCE(qp->dead))
		return;
	sroce_qp_get(qp);
	if (!queue_work(sroce_resp_wq, &qp->resp.work))
		sroce_qp_put(qp);
}

static void sroce_resp_res_sent(struct sroce_qp *qp,
				struct sroce_resp_res *res)
{
	res->queued = false;
	res->replay = false;
	qp->resp.queued--;
}

/**
 * sroce_resp_newest() - the responder resource taken @i before the newest
 * @qp: an RC QP with resources
 * @i: how many resources back
 *
 * Resources are taken in turn, in PSN order, so from the newest back they
 * hold ever older requests, and those not yet used (SROCE_RES_NONE) come
 * last.
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: the resource.
 */
struct sroce_resp_res *sroce_resp_newest(struct sroce_qp *qp, u32 i)
{
	u32 n = qp->resp.num_res;

	return &qp->resp.res[(qp->resp.res_next + n - 1 - i % n) % n];
}

/**
 * sroce_resp_new_res() - the next responder resource, in turn
 * @qp: the RC QP
 *
 * A requester keeps no more READs and atomics outstanding than there are
 * resources, so the one whose turn it is has been answered in full, and
 * the requester has all of it: a replay still queued there (a duplicate of
 * the old request came in while the first answer was on its way) is one
 * nobody waits for, and the new request takes its place.
 *
 * Context: Softirq, or BH disabled. Caller holds qp->resp.lock.
 * Return: the resource; NULL if the first answer itself is still being
 * sent (the requester went over the limit), or the QP has no resources.
 */
struct sroce_resp_res *sroce_resp_new_res(struct sroce_qp *qp)
{
	u32 n = qp->resp.num_res;
	struct sroce_resp_res *res;

	lockdep_assert_held(&qp->resp.lock);
	if (!n)
		return NULL;
	res = &qp->resp.res[qp->resp.res_next % n];
	if (res->queued && !res->replay)
		return NULL;
	if (res->queued)
		sroce_resp_res_sent(qp, res);
	qp->resp.res_next = (qp->resp.res_next + 1) % n;
	return res;
}

/**
 * sroce_resp_unnew_res() - give back the resource sroce_resp_new_res()
 *	just returned, unused: its request did not execute (odp.c's faults)
 * @qp: the RC QP
 *
 * Context: Softirq, or BH disabled. Caller holds qp->resp.lock.
 */
void sroce_resp_unnew_res(struct sroce_qp *qp)
{
	u32 n = qp->resp.num_res;

	lockdep_assert_held(&qp->resp.lock);
	qp->resp.res_next = (qp->resp.res_next + n - 1) % n;
}

/**
 * sroce_resp_queue_res() - owe @res's answer
 * @qp: the RC QP
 * @res: one of its resources, its answer set up
 * @replay: the answer is for a duplicate of the request, not the first
 *	time; an answer already owed stays as it was queued: a first answer
 *	a duplicate re-aims (sroce_resp_replay_read()) is still one its
 *	requester waits for, which no new request may take over
 *	(sroce_resp_new_res())
 *
 * Context: Softirq, or BH disabled. Caller holds qp->resp.lock.
 */
void sroce_resp_queue_res(struct sroce_qp *qp,
			  struct sroce_resp_res *res, bool replay)
{
	if (!res->queued) {
		res->queued = true;
		res->replay = replay;
		qp->resp.queued++;
	}
}

static u32 sroce_resp_read_npkts(struct sroce_qp *qp, u32 len)
{
	return max_t(u32, 1, DIV_ROUND_UP(len, qp->pmtu));
}

/**
 * sroce_resp_read_start() - set up @res's READ answer
 * @qp: the RC QP
 * @res: the READ's resource
 * @psn: the PSN of the answer's first packet
 * @va: the first address to read
 * @len: bytes to send
 *
 * Context: Softirq, or BH disabled. Caller holds qp->resp.lock.
 */
void sroce_resp_read_start(struct sroce_qp *qp,
			   struct sroce_resp_res *res, u32 psn, u64 va,
			   u32 len)
{
	res->cur_psn = psn;
	res->end_psn = sroce_psn_add(psn, sroce_resp_read_npkts(qp, len) - 1);
	res->va = va;
	res->resid = len;
}

/*
 * The oldest resource with a response still owed.  Owed answers are those
 * of the newest requests, mostly: the search goes back from the newest
 * until it has seen every resource owed one.
 */
static struct sroce_resp_res *sroce_resp_oldest(struct sroce_qp *qp)
{
	struct sroce_resp_res *best = NULL, *res;
	u32 i, seen = 0;

	for (i = 0; i < qp->resp.num_res && seen < qp->resp.queued; i++) {
		res = sroce_resp_newest(qp, i);
		if (!res->queued)
			continue;
		seen++;
		if (!best || sroce_psn_diff(res->cur_psn, best->cur_psn) < 0)
			best = res;
	}
	return best;
}

static u8 sroce_resp_read_opcode(const struct sroce_qp *qp,
				 const struct sroce_resp_res *res)
{
	bool first = res->cur_psn == res->first_psn;
	bool last = res->cur_psn == res->end_psn;
	u8 op;

	if (first && last)
		op = SROCE_OP_READ_RESP_ONLY;
	else if (first)
		op = SROCE_OP_READ_RESP_FIRST;
	else if (last)
		op = SROCE_OP_READ_RESP_LAST;
	else
		op = SROCE_OP_READ_RESP_MIDDLE;
	return sroce_qp_transport(qp) | op;
}

/*
 * The region a READ response's @paylen bytes come from, referenced; NULL
 * when there is none for the key and range any more (or, for an XRC
 * target, the SRQ whose PD names it is gone).
 */
static struct sroce_mr *sroce_resp_read_mr(struct sroce_qp *qp,
					   struct sroce_resp_res *res,
					   u32 paylen)
{
	struct sroce_mr *mr;

	/* An XRC target reads with the PD of the SRQ the READ named. */
	if (!sroce_xrc_res_hold(qp, res))
		return NULL;
	mr = sroce_rkey_get(qp, res->rkey, res->va, paylen,
			    IB_ACCESS_REMOTE_READ);
	sroce_xrc_resp_release(qp);
	return mr;
}

/* The payload of a READ response from @mr: its pages, or a copy. */
static int sroce_resp_read_payload(struct sroce_qp *qp, struct sroce_mr *mr,
				   u64 va, struct sk_buff *skb, void *payload,
				   u32 paylen)
{
	int err;

	if (payload)
		return sroce_mr_copy(qp, mr, va, payload, paylen,
				     SROCE_FROM_MR);
	err = sroce_mr_attach(mr, va, skb, paylen);
	return err ? err : sroce_tx_seal(skb);
}

/*
 * A READ response packet with @paylen bytes from @mr (NULL: none), its
 * pages attached if @attach; NULL when out of memory, else an ERR_PTR of
 * the payload's error.
 */
static struct sk_buff *sroce_resp_read_build(struct sroce_qp *qp,
					     struct sroce_resp_res *res,
					     struct sroce_mr *mr, u32 paylen,
					     bool attach)
{
	u8 opcode = sroce_resp_read_opcode(qp, res);
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	void *hdrs, *payload = NULL;
	struct sroce_aeth *aeth;
	struct sk_buff *skb;
	int err = 0;

	skb = sroce_tx_alloc(sroce_qp_dev(qp), qp, opcode, paylen,
			     qp->dest_qpn, res->cur_psn, false, false, &hdrs,
			     attach ? NULL : &payload);
	if (!skb)
		return NULL;
	if (info->flags & SROCE_OPF_AETH) {
		aeth = hdrs + info->off_aeth;
		aeth->smsn = sroce_aeth_pack(SROCE_AETH_ACK |
					     SROCE_AETH_ACK_UNLIMITED,
					     qp->resp.msn);
	}
	if (mr)
		err = sroce_resp_read_payload(qp, mr, res->va, skb, payload,
					      paylen);
	if (err) {
		kfree_skb(skb);
		return ERR_PTR(err);
	}
	return skb;
}

/*
 * The next packet of a READ response; NULL when out of memory, an
 * ERR_PTR: -EAGAIN while its on-demand memory is being faulted in,
 * -EACCES when the memory went away.  The payload goes as the region's
 * pages where it can (sroce_mr_attach()): the requester's READ completes
 * only once it has the packet.  A ULP's page that cannot be referenced on
 * its own is found out only in the attempt, and then copied.
 */
static struct sk_buff *sroce_resp_read_skb(struct sroce_qp *qp,
					   struct sroce_resp_res *res)
{
	u32 paylen = min(res->resid, qp->pmtu);
	struct sroce_mr *mr = NULL;
	struct sk_buff *skb;
	bool attach;

	if (paylen) {
		mr = sroce_resp_read_mr(qp, res, paylen);
		if (!mr)
			return ERR_PTR(-EACCES);
	}
	attach = mr && sroce_mr_attachable(mr, res->va, paylen);
	skb = sroce_resp_read_build(qp, res, mr, paylen, attach);
	if (attach && PTR_ERR(skb) == -EOPNOTSUPP)
		skb = sroce_resp_read_build(qp, res, mr, paylen, false);
	/* Being faulted in, or the memory went away under the READ. */
	if (IS_ERR(skb) && PTR_ERR(skb) != -EAGAIN)
		skb = ERR_PTR(-EACCES);
	if (mr)
		sroce_mr_put(mr);
	return skb;
}

/*
 * The next packet of @res's READ answer; NULL when out of memory, while
 * its on-demand memory is faulted in (odp.c), or when the answer is given
 * up (*@stale).  Memory that went away under a first
 * answer fails the QP with a remote access NAK.  Under a replay it does
 * not: its owner deregistered or invalidated it after the first answer,
 * on its peer's word that the READ was over, so the duplicate is a stale
 * copy (held back by the network, or sent just before the answer came)
 * that no requester waits for, and the replay is dropped, counted.  Were
 * one waiting after all, its ACK timer would go off and say so there.
 */
static struct sk_buff *sroce_resp_read_next(struct sroce_qp *qp,
					    struct sroce_resp_res *res,
					    bool *stale)
{
	struct sk_buff *skb = sroce_resp_read_skb(qp, res);

	*stale = false;
	/* The fault's work sends the rest once the memory is there. */
	if (PTR_ERR(skb) == -EAGAIN)
		return NULL;
	if (IS_ERR(skb) && res->replay) {
		sroce_resp_res_sent(qp, res);
		sroce_drop(sroce_qp_dev(qp), qp->ibqp.qp_num, res->cur_psn,
			   SROCE_CNT_STALE_READ_REPLAYS);
		*stale = true;
		return NULL;
	}
	if (IS_ERR(skb)) {
		sroce_resp_res_sent(qp, res);
		sroce_resp_nak_sent(qp, SROCE_AETH_NAK | SROCE_NAK_REM_ACCESS,
				    res->cur_psn);
		skb = sroce_resp_ack_skb(qp, SROCE_AETH_NAK |
					 SROCE_NAK_REM_ACCESS, res->cur_psn,
					 false, 0);
		sroce_qp_error(qp, IB_EVENT_QP_ACCESS_ERR);
		return skb;
	}
	if (!skb)
		return NULL;
	res->va += min(res->resid, qp->pmtu);
	res->resid -= min(res->resid, qp->pmtu);
	if (res->cur_psn == res->end_psn)
		sroce_resp_res_sent(qp, res);
	res->cur_psn = sroce_psn_add(res->cur_psn, 1);
	return skb;
}

/* Build the next owed packet; NULL when nothing is owed. */
static struct sk_buff *sroce_resp_next_owed(struct sroce_qp *qp)
{
	struct sroce_resp_ack *p = &qp->resp.pending;
	struct sroce_resp_res *res;
	struct sk_buff *skb;
	bool stale;

	lockdep_assert_held(&qp->resp.lock);
	while ((res = sroce_resp_oldest(qp))) {
		if (res->type == SROCE_RES_ATOMIC) {
			sroce_resp_res_sent(qp, res);
			return sroce_resp_ack_skb(qp, SROCE_AETH_ACK |
						  SROCE_AETH_ACK_UNLIMITED,
						  res->first_psn, true,
						  res->orig);
		}
		/* READ data waits for the pacer; what is owed after it too. */
		if (!sroce_cc_may_send(qp, SROCE_CC_RESP)) {
			qp->resp.paced = true;
			return NULL;
		}
		skb = sroce_resp_read_next(qp, res, &stale);
		if (!stale)
			return skb;
	}
	if (!p->valid)
		return NULL;
	p->valid = false;
	return sroce_resp_ack_skb(qp, p->syndrome, p->psn, false, 0);
}

/**
 * sroce_resp_flush_owed() - send owed packets in PSN order
 * @qp: the RC QP
 * @budget: packets to send at most; what is left goes to the responder's
 *	work
 *
 * One sender at a time (resp.owed_busy): a packet is built under the lock
 * and sent after it, so two senders could reorder the wire.  ACKs made
 * meanwhile are held back and sent here, after the responses owed before
 * them.  Every packet sent here counts against the QP's rate (cc.c); when
 * the pacer holds READ data back, the pacer runs the responder's work
 * again.
 *
 * Context: Softirq or process context; the caller does not hold
 * qp->resp.lock. Takes it (with _bh).
 */
void sroce_resp_flush_owed(struct sroce_qp *qp, int budget)
{
	struct sk_buff *skb;
	bool more;

	spin_lock_bh(&qp->resp.lock);
	if (qp->resp.owed_busy || qp->dead) {
		spin_unlock_bh(&qp->resp.lock);
		return;
	}
	qp->resp.owed_busy = true;
	qp->resp.paced = false;
	while (budget-- > 0 && (skb = sroce_resp_next_owed(qp))) {
		sroce_cc_sent(qp, skb->len);
		spin_unlock_bh(&qp->resp.lock);
		sroce_net_xmit(sroce_qp_dev(qp), qp, &qp->av, skb);
		spin_lock_bh(&qp->resp.lock);
	}
	qp->resp.owed_busy = false;
	more = !qp->resp.paced && (qp->resp.queued || qp->resp.pending.valid);
	spin_unlock_bh(&qp->resp.lock);
	if (more)
		sroce_resp_sched(qp);
}

/**
 * sroce_resp_kick() - send what the pacer held back, now that it may go
 * @qp: the RC QP
 *
 * Sends a few owed packets at once, in the caller's context, and leaves
 * the rest to the responder's work (sroce_resp_flush_owed()).  The pacer's
 * timer calls it: a work item queued from there waits for the CPU behind
 * the receive softirqs that CPU runs, and every millisecond it waits past
 * the pacer's catch-up allowance is lost to the QP's rate (cc.c).
 *
 * Context: Softirq or process context; the caller does not hold
 * qp->resp.lock.
 */
void sroce_resp_kick(struct sroce_qp *qp)
{
	sroce_resp_flush_owed(qp, SROCE_RESP_KICK_BUDGET);
}

/**
 * sroce_resp_work() - send owed responses: READ data, held-back atomic
 *	ACKs and ACK/NAKs, in PSN order
 * @work: qp->resp.work; the work holds a QP reference
 *
 * Context: Process context (sroce_resp_wq, on the CPU that queued it).
 */
void sroce_resp_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, resp.work);

	sroce_resp_flush_owed(qp, SROCE_RESP_WORK_BUDGET);
	sroce_qp_put(qp);
}

/**
 * sroce_resp_size_res() - give an RC QP's responder @n resources
 * @qp: the QP
 * @n: its max_dest_rd_atomic, 1 to SROCE_MAX_RD_ATOMIC
 *
 * One resource per READ or atomic request the requester may have
 * outstanding: each keeps its request to answer it, and to answer it again
 * for a duplicate.  The array is sized when max_dest_rd_atomic is set
 * (INIT to RTR, or SQD to SQD), charged to the caller.  The newest of the
 * resources there were move to the new array, in turn; answers still owed
 * by older ones, which a smaller depth leaves out, are given up.
 *
 * Context: Process context. May sleep. Caller holds qp->modify_lock.
 * Return: 0, or -ENOMEM.
 */
int sroce_resp_size_res(struct sroce_qp *qp, u32 n)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res, *old;
	u32 keep, i;

	might_sleep();
	lockdep_assert_held(&qp->modify_lock);
	if (n == resp->num_res)
		return 0;
	res = kcalloc(n, sizeof(*res), SROCE_GFP_SIZED);
	if (!res)
		return -ENOMEM;
	spin_lock_bh(&resp->lock);
	keep = min(n, resp->num_res);
	for (i = 0; i < keep; i++)
		res[keep - 1 - i] = *sroce_resp_newest(qp, i);
	for (i = keep; i < resp->num_res; i++)
		if (sroce_resp_newest(qp, i)->queued)
			resp->queued--;
	old = resp->res;
	resp->res = res;
	resp->num_res = n;
	resp->res_next = keep % n;
	spin_unlock_bh(&resp->lock);
	kfree(old);
	return 0;
}
