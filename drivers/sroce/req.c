// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * req.c - the requester: turns send work requests into request packets.
 *
 * It runs from the send doorbell of a user QP, in the system call
 * (sroce_req_kick()), and from the QP's req_work, never in two places at
 * once (qp->req_runner, runner.h); what it shares with the completer
 * (which runs in softirq when responses arrive) is guarded by qp->sq.lock.
 * Each packet is decided and built under the lock and sent after it is
 * dropped, so the receive path (for loopback, called from the send itself)
 * can take the QP's locks.
 *
 * One step decides the next packet: take new user WQEs, go back if the
 * completer asked for a retry, then check the limits (SQ drain, fences,
 * outstanding READ/atomic credits, the window of unacknowledged packets)
 * and the pacer's schedule (cc.c: a paced QP stops here until the pacer's
 * timer runs it again), and build the packet for the work request's kind.
 * A work request whose packets are all sent is SENT (RC: the completer
 * finishes it) or DONE (UC, UD: nothing acknowledges it).
 */
#include <linux/skbuff.h>

#include "hdr.h"
#include "opcode.h"
#include "sroce.h"
#include "trace.h"

/* Packets one run of the work sends before it yields. */
#define SROCE_REQ_BUDGET 64

enum sroce_req_step {
	SROCE_REQ_PACKET,	/* a packet was built */
	SROCE_REQ_IDLE,		/* nothing to send */
	SROCE_REQ_STALLED,	/* waiting for the completer */
	SROCE_REQ_PACED,	/* waiting for the pacer (cc.c) */
	SROCE_REQ_FAULTING,	/* waiting for a page fault (odp.c) */
	SROCE_REQ_FAILED,	/* the QP failed */
};

/**
 * struct sroce_req_out - what one step produced
 * @skb: the packet
 * @av: its destination (copied: the WQE may be retired before it is sent)
 */
struct sroce_req_out {
	struct sk_buff *skb;
	struct sroce_av av;
};

static u32 sroce_req_npkts(struct sroce_qp *qp, const struct sroce_swqe *w)
{
	if (sroce_wr_is_atomic(w->opcode))
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(w->length, qp->pmtu));
}

/*
 * A request packet: sroce_tx_alloc() and, for an XRC initiator, the
 * XRCETH naming the remote SRQ of @w.
 */
static struct sk_buff *sroce_req_alloc(struct sroce_qp *qp,
				       const struct sroce_swqe *w, u8 opcode,
				       u32 paylen, u32 dqpn, bool ackreq,
				       bool se, void **hdrs, void **payload)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	struct sroce_xrceth *xrceth;
	struct sk_buff *skb;

	skb = sroce_tx_alloc(sroce_qp_dev(qp), qp, opcode, paylen, dqpn,
			     qp->req.psn, ackreq, se, hdrs, payload);
	if (skb && (info->flags & SROCE_OPF_XRCETH)) {
		xrceth = *hdrs + info->off_xrceth;
		xrceth->srqn = cpu_to_be32(w->xrc_srqn & SROCE_24BIT_MASK);
	}
	return skb;
}

static u8 sroce_req_send_opcode(const struct sroce_swqe *w, bool first,
				bool last)
{
	bool imm = w->opcode == IB_WR_SEND_WITH_IMM;
	bool inv = w->opcode == IB_WR_SEND_WITH_INV;

	if (first && last)
		return imm ? SROCE_OP_SEND_ONLY_IMM :
		       inv ? SROCE_OP_SEND_ONLY_INV : SROCE_OP_SEND_ONLY;
	if (first)
		return SROCE_OP_SEND_FIRST;
	if (last)
		return imm ? SROCE_OP_SEND_LAST_IMM :
		       inv ? SROCE_OP_SEND_LAST_INV : SROCE_OP_SEND_LAST;
	return SROCE_OP_SEND_MIDDLE;
}

static u8 sroce_req_opcode(struct sroce_qp *qp, const struct sroce_swqe *w,
			   bool first, bool last)
{
	bool imm = w->opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	u8 op;

	if (w->opcode == IB_WR_SEND || w->opcode == IB_WR_SEND_WITH_IMM ||
	    w->opcode == IB_WR_SEND_WITH_INV) {
		op = sroce_req_send_opcode(w, first, last);
	} else {
		if (first && last)
			op = imm ? SROCE_OP_WRITE_ONLY_IMM : SROCE_OP_WRITE_ONLY;
		else if (first)
			op = SROCE_OP_WRITE_FIRST;
		else if (last)
			op = imm ? SROCE_OP_WRITE_LAST_IMM : SROCE_OP_WRITE_LAST;
		else
			op = SROCE_OP_WRITE_MIDDLE;
	}
	return sroce_qp_transport(qp) | op;
}

/* @n packets were sent from req.psn on. */
static void sroce_req_advance(struct sroce_qp *qp, u32 n)
{
	qp->req.psn = sroce_psn_add(qp->req.psn, n);
	if (sroce_psn_diff(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;
}

static void sroce_req_arm_timer(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	if (!qp->timeout || !sroce_qp_reliable(qp) || qp->comp.armed)
		return;
	sroce_comp_arm(qp);
}

/* A local error on @w: it completes with @status and the QP fails. */
static enum sroce_req_step sroce_req_fail(struct sroce_qp *qp,
					  struct sroce_swqe *w, u32 status)
{
	sroce_qp_fail_wqe(qp, w, status, IB_EVENT_QP_FATAL);
	return SROCE_REQ_FAILED;
}

static int sroce_req_copy_payload(struct sroce_qp *qp, u32 idx,
				  struct sroce_swqe *w, u32 offset,
				  void *payload, u32 len)
{
	if (w->flags & SROCE_SEND_INLINE) {
		memcpy(payload, sroce_sq_inline(qp, idx) + offset, len);
		return 0;
	}
	return sroce_sge_copy(qp, qp->ibqp.pd, sroce_sq_sges(qp, idx),
			      w->num_sge, offset,
			      payload, len, SROCE_FROM_MR);
}

/*
 * Whether a packet's payload goes out as the pages of the sender's memory
 * (sroce_sge_attach()) rather than a copy.  Only for reliable transports,
 * whose work request completes after the peer acknowledged the packet:
 * UC and UD complete when the packet is sent, and the application may
 * rewrite the buffer while the packet still waits in a queue.  A small
 * payload is cheaper to copy than to reference page by page.  A kernel
 * ULP's memory that cannot be referenced page by page (slab, vmalloc)
 * costs an skb before the copy.
 */
static bool sroce_req_zcopy(struct sroce_qp *qp, const struct sroce_swqe *w,
			    u32 paylen)
{
	return sroce_qp_reliable(qp) && !(w->flags & SROCE_SEND_INLINE) &&
	       paylen >= SROCE_ZCOPY_MIN;
}

/*
 * The packet carrying @paylen bytes of @w from @offset: the pages attached
 * where they can be, else a copy.  Return: the packet, or NULL with @err
 * set (-ENOMEM: try again later).
 */
static struct sk_buff *sroce_req_data_skb(struct sroce_qp *qp,
					  struct sroce_swqe *w, u8 opcode,
					  u32 offset, u32 paylen, u32 dqpn,
					  bool ackreq, bool se, void **hdrs,
					  int *err)
{
	struct sk_buff *skb;
	void *payload;

	if (sroce_req_zcopy(qp, w, paylen)) {
		skb = sroce_req_alloc(qp, w, opcode, paylen, dqpn, ackreq, se,
				      hdrs, NULL);
		if (!skb)
			goto no_mem;
		*err = sroce_sge_attach(qp, qp->ibqp.pd,
					sroce_sq_sges(qp, qp->req.idx),
					w->num_sge, offset, skb, paylen);
		if (!*err)
			*err = sroce_tx_seal(skb);
		if (!*err)
			return skb;
		kfree_skb(skb);
		if (*err != -EOPNOTSUPP)
			return NULL;
	}
	skb = sroce_req_alloc(qp, w, opcode, paylen, dqpn, ackreq, se, hdrs,
			      &payload);
	if (!skb)
		goto no_mem;
	*err = sroce_req_copy_payload(qp, qp->req.idx, w, offset, payload,
				      paylen);
	if (!*err)
		return skb;
	kfree_skb(skb);
	return NULL;

no_mem:
	*err = -ENOMEM;
	return NULL;
}

/* Fill the extension headers of a SEND or WRITE packet. */
static void sroce_req_fill_hdrs(struct sroce_qp *qp, struct sroce_swqe *w,
				u8 opcode, u8 *hdrs)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	struct sroce_immdt *immdt;
	struct sroce_deth *deth;
	struct sroce_reth *reth;
	struct sroce_ieth *ieth;

	if (info->flags & SROCE_OPF_RETH) {
		reth = (void *)(hdrs + info->off_reth);
		reth->va = cpu_to_be64(w->rdma.remote_addr);
		reth->rkey = cpu_to_be32(w->rdma.rkey);
		reth->length = cpu_to_be32(w->length);
	}
	if (info->flags & SROCE_OPF_IMMDT) {
		immdt = (void *)(hdrs + info->off_immdt);
		immdt->imm = w->imm;
	}
	if (info->flags & SROCE_OPF_IETH) {
		ieth = (void *)(hdrs + info->off_immdt);
		ieth->rkey = cpu_to_be32(w->inv_rkey);
	}
	if (info->flags & SROCE_OPF_DETH) {
		deth = (void *)(hdrs + info->off_deth);
		deth->qkey = cpu_to_be32(w->ud.remote_qkey);
		deth->sqpn = cpu_to_be32(qp->ibqp.qp_num);
	}
}

/* The next packet of a SEND or RDMA WRITE, any transport. */
static enum sroce_req_step sroce_req_send_write(struct sroce_qp *qp,
						struct sroce_swqe *w,
						struct sroce_req_out *out)
{
	bool ud = sroce_qp_transport(qp) == SROCE_TRANSPORT_UD;
	u32 offset = qp->req.offset, dqpn, paylen, mtu = qp->pmtu;
	bool first = !offset, last, ackreq;
	u8 opcode;
	void *hdrs;
	int err;

	if (ud) {
		/* A UD message is one packet of at most the port's MTU. */
		mtu = max_t(u32, IB_MTU_256,
			    READ_ONCE(sroce_qp_dev(qp)->active_mtu));
		mtu = ib_mtu_enum_to_int(mtu);
		if (w->length > mtu) {
			/* It completes in error; the QP goes on. */
			w->status = IB_WC_LOC_LEN_ERR;
			w->state = SROCE_WQE_DONE;
			qp->req.idx++;
			return SROCE_REQ_PACKET;
		}
	}
	paylen = min(w->length - offset, mtu);
	last = offset + paylen == w->length;
	opcode = sroce_req_opcode(qp, w, first, last);
	ackreq = sroce_qp_reliable(qp) &&
		 (last || qp->req.since_ackreq + 1 >= SROCE_ACKREQ_EVERY);
	dqpn = ud ? w->ud.remote_qpn : qp->dest_qpn;
	out->skb = sroce_req_data_skb(qp, w, opcode, offset, paylen, dqpn,
				      ackreq,
				      last && (w->flags & SROCE_SEND_SOLICITED),
				      &hdrs, &err);
	if (err == -ENOMEM)
		return SROCE_REQ_STALLED;
	if (err == -EAGAIN)
		return SROCE_REQ_FAULTING;
	if (err)
		return sroce_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
	sroce_req_fill_hdrs(qp, w, opcode, hdrs);
	out->av = ud ? w->ud.av : qp->av;
	if (first) {
		w->first_psn = qp->req.psn;
		w->last_psn = sroce_psn_add(w->first_psn,
					    sroce_req_npkts(qp, w) - 1);
		w->state = SROCE_WQE_SENDING;
	}
	qp->req.since_ackreq = ackreq ? 0 : qp->req.since_ackreq + 1;
	sroce_req_advance(qp, 1);
	qp->req.offset = offset + paylen;
	if (last) {
		w->state = sroce_qp_reliable(qp) ? SROCE_WQE_SENT :
						   SROCE_WQE_DONE;
		qp->req.idx++;
		qp->req.offset = 0;
	}
	return SROCE_REQ_PACKET;
}

/*
 * Before a READ or atomic asks for an answer: on-demand memory of ours the
 * answer lands in (@len bytes of @w's list from @offset) is made present
 * first, so that the answer does not come back to missing pages.
 * Return: SROCE_REQ_PACKET to go on, or the step to end with.
 */
static enum sroce_req_step sroce_req_prepare(struct sroce_qp *qp,
					     struct sroce_swqe *w, u32 offset,
					     u32 len)
{
	int err;

	err = sroce_sge_prepare(qp, sroce_sq_sges(qp, qp->req.idx),
				w->num_sge, offset, len);
	if (err == -EAGAIN)
		return SROCE_REQ_FAULTING;
	if (err)
		return sroce_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
	return SROCE_REQ_PACKET;
}

/* A READ request for what is left of @w from req.offset. */
static enum sroce_req_step sroce_req_read(struct sroce_qp *qp,
					  struct sroce_swqe *w,
					  struct sroce_req_out *out)
{
	u8 opcode = sroce_qp_transport(qp) | SROCE_OP_READ_REQ;
	u32 offset = qp->req.offset, left = w->length - offset;
	enum sroce_req_step step;
	struct sroce_reth *reth;
	void *hdrs, *payload;
	u32 npkts;

	step = sroce_req_prepare(qp, w, offset, left);
	if (step != SROCE_REQ_PACKET)
		return step;
	out->skb = sroce_req_alloc(qp, w, opcode, 0, qp->dest_qpn, true, false,
				   &hdrs, &payload);
	if (!out->skb)
		return SROCE_REQ_STALLED;
	reth = hdrs + sroce_opcode(opcode)->off_reth;
	reth->va = cpu_to_be64(w->rdma.remote_addr + offset);
	reth->rkey = cpu_to_be32(w->rdma.rkey);
	reth->length = cpu_to_be32(left);
	out->av = qp->av;
	npkts = max_t(u32, 1, DIV_ROUND_UP(left, qp->pmtu));
	if (!offset) {
		w->first_psn = qp->req.psn;
		w->last_psn = sroce_psn_add(w->first_psn, npkts - 1);
	}
	if (w->state == SROCE_WQE_POSTED)
		qp->req.rd_atomic++;
	w->state = SROCE_WQE_SENT;
	sroce_req_advance(qp, npkts);
	qp->req.since_ackreq = 0;
	qp->req.idx++;
	qp->req.offset = 0;
	return SROCE_REQ_PACKET;
}

/*
 * @w, an atomic or an ATOMIC WRITE, went out in one packet at req.psn:
 * it holds a READ credit (taken on its first transmission) until its
 * answer comes.
 */
static enum sroce_req_step sroce_req_one_credit(struct sroce_qp *qp,
						struct sroce_swqe *w,
						struct sroce_req_out *out)
{
	out->av = qp->av;
	w->first_psn = qp->req.psn;
	w->last_psn = qp->req.psn;
	if (w->state == SROCE_WQE_POSTED)
		qp->req.rd_atomic++;
	w->state = SROCE_WQE_SENT;
	sroce_req_advance(qp, 1);
	qp->req.since_ackreq = 0;
	qp->req.idx++;
	return SROCE_REQ_PACKET;
}

static enum sroce_req_step sroce_req_atomic(struct sroce_qp *qp,
					    struct sroce_swqe *w,
					    struct sroce_req_out *out)
{
	u8 opcode = sroce_qp_transport(qp) |
		    (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ? SROCE_OP_CMP_SWAP :
							    SROCE_OP_FETCH_ADD);
	enum sroce_req_step step;
	struct sroce_atmeth *atm;
	void *hdrs, *payload;

	step = sroce_req_prepare(qp, w, 0, sizeof(u64));
	if (step != SROCE_REQ_PACKET)
		return step;
	out->skb = sroce_req_alloc(qp, w, opcode, 0, qp->dest_qpn, true, false,
				   &hdrs, &payload);
	if (!out->skb)
		return SROCE_REQ_STALLED;
	atm = hdrs + sroce_opcode(opcode)->off_atmeth;
	atm->va = cpu_to_be64(w->atomic.remote_addr);
	atm->rkey = cpu_to_be32(w->atomic.rkey);
	if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
		atm->swap_add = cpu_to_be64(w->atomic.swap);
		atm->compare = cpu_to_be64(w->atomic.compare_add);
	} else {
		atm->swap_add = cpu_to_be64(w->atomic.compare_add);
	}
	return sroce_req_one_credit(qp, w, out);
}

/*
 * An ATOMIC WRITE: its RETH and 8 bytes in one packet, which takes a READ
 * credit like an atomic and is answered by an empty READ response.
 */
static enum sroce_req_step sroce_req_atomic_write(struct sroce_qp *qp,
						  struct sroce_swqe *w,
						  struct sroce_req_out *out)
{
	u8 opcode = sroce_qp_transport(qp) | SROCE_OP_ATOMIC_WRITE;
	struct sroce_reth *reth;
	void *hdrs, *payload;

	out->skb = sroce_req_alloc(qp, w, opcode, sizeof(w->atomic_write.data),
				   qp->dest_qpn, true, false, &hdrs, &payload);
	if (!out->skb)
		return SROCE_REQ_STALLED;
	reth = hdrs + sroce_opcode(opcode)->off_reth;
	reth->va = cpu_to_be64(w->atomic_write.remote_addr);
	reth->rkey = cpu_to_be32(w->atomic_write.rkey);
	reth->length = cpu_to_be32(sizeof(w->atomic_write.data));
	memcpy(payload, w->atomic_write.data, sizeof(w->atomic_write.data));
	return sroce_req_one_credit(qp, w, out);
}

/*
 * A FLUSH: its FETH and RETH (the range, or the region's key alone for
 * SROCE_FLUSH_MR) in one packet without data, which takes a READ credit
 * and is answered by an empty READ response.
 */
static enum sroce_req_step sroce_req_flush(struct sroce_qp *qp,
					   struct sroce_swqe *w,
					   struct sroce_req_out *out)
{
	u8 opcode = sroce_qp_transport(qp) | SROCE_OP_FLUSH;
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	struct sroce_feth *feth;
	struct sroce_reth *reth;
	void *hdrs, *payload;

	out->skb = sroce_req_alloc(qp, w, opcode, 0, qp->dest_qpn, true, false,
				   &hdrs, &payload);
	if (!out->skb)
		return SROCE_REQ_STALLED;
	feth = hdrs + info->off_feth;
	feth->bits = cpu_to_be32(FIELD_PREP(SROCE_FETH_PLT, w->flush.type) |
				 FIELD_PREP(SROCE_FETH_SEL, w->flush.level));
	reth = hdrs + info->off_reth;
	reth->va = cpu_to_be64(w->flush.remote_addr);
	reth->rkey = cpu_to_be32(w->flush.rkey);
	reth->length = cpu_to_be32(w->flush.length);
	return sroce_req_one_credit(qp, w, out);
}

/*
 * A local operation (REG_MR, LOCAL_INV, BIND_MW) takes effect when the
 * requester reaches it; it sends nothing and completes in order.
 */
static enum sroce_req_step sroce_req_local(struct sroce_qp *qp,
					   struct sroce_swqe *w)
{
	int err;

	switch (w->opcode) {
	case IB_WR_REG_MR:
		err = sroce_mr_reg(qp, w->reg.mr, w->reg.key, w->reg.access);
		break;
	case IB_WR_LOCAL_INV:
		err = sroce_mr_invalidate(qp, qp->ibqp.pd, w->inv_rkey);
		break;
	default:
		err = sroce_mw_bind(qp, w);
		if (err)
			return sroce_req_fail(qp, w, IB_WC_MW_BIND_ERR);
		break;
	}
	if (err)
		return sroce_req_fail(qp, w, IB_WC_LOC_PROT_ERR);
	w->status = IB_WC_SUCCESS;
	w->state = SROCE_WQE_DONE;
	qp->req.idx++;
	return SROCE_REQ_PACKET;
}

/*
 * Was @w sent, wholly or in part?  A work request refused when it was
 * fetched is DONE in error and, like a POSTED one, never reached the wire;
 * nothing after either has been sent.
 */
static bool sroce_req_was_sent(const struct sroce_swqe *w)
{
	if (w->state == SROCE_WQE_DONE)
		return w->status == IB_WC_SUCCESS;
	return w->state != SROCE_WQE_POSTED;
}

/*
 * Put the requester at @psn, a PSN it has sent (below req.max_psn) or the
 * one after all it has sent.  The work requests keep their state: those
 * sent stay SENT, so the completer can still finish them on responses to
 * their first transmission, and READs and atomics stay counted in
 * req.rd_atomic.  Sending one again rebuilds the same packets with the
 * same PSNs.
 */
static void sroce_req_goto(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *w = NULL;
	u32 idx;

	lockdep_assert_held(&qp->sq.lock);
	for (idx = qp->sq.cons; idx != qp->sq.prod; idx++) {
		w = sroce_sq_wqe(qp, idx);
		if (!sroce_req_was_sent(w))
			break;
		if (w->state != SROCE_WQE_DONE &&
		    sroce_psn_diff(psn, w->last_psn) <= 0)
			break;
	}
	qp->req.idx = idx;
	qp->req.since_ackreq = 0;
	if (idx == qp->sq.prod || !sroce_req_was_sent(w)) {
		/* All that was sent is acknowledged: go on with new ones. */
		qp->req.psn = qp->req.max_psn;
		qp->req.offset = 0;
		return;
	}
	if (sroce_psn_diff(psn, w->first_psn) < 0)
		psn = w->first_psn;
	qp->req.psn = psn;
	qp->req.offset = ((psn - w->first_psn) & SROCE_24BIT_MASK) * qp->pmtu;
}

/*
 * The completer asked to go back to retry_psn: the work request holding it
 * is sent again from that packet on, and every later one from its start.
 */
static void sroce_req_rewind(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	qp->req.retry = false;
	sroce_req_goto(qp, qp->req.retry_psn);
	sroce_count(sroce_qp_dev(qp), SROCE_CNT_RETRANSMITS);
	trace_sroce_retransmit(qp, qp->req.psn, qp->req.max_psn,
			       qp->req.retry_why);
	/* The local ACK timeout runs from the resend, not from the request. */
	if (qp->timeout)
		sroce_comp_arm(qp);
}

/*
 * During a go-back, responses to the first transmission can acknowledge
 * packets the requester has not sent again yet: it skips ahead to the
 * oldest one not acknowledged instead of sending them once more.
 */
static void sroce_req_skip_acked(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->sq.lock);
	if (sroce_qp_reliable(qp) &&
	    sroce_psn_diff(qp->comp.psn, qp->req.psn) > 0)
		sroce_req_goto(qp, qp->comp.psn);
}

/* May the work request at req.idx send its next packet now? */
static bool sroce_req_may_send(struct sroce_qp *qp, struct sroce_swqe *w)
{
	bool fresh = w->state == SROCE_WQE_POSTED && !qp->req.offset;

	if (fresh && READ_ONCE(qp->state) == IB_QPS_SQD)
		return false;
	if (!sroce_qp_reliable(qp))
		return true;
	if (qp->comp.rnr_wait)
		return false;
	if (fresh && (w->flags & SROCE_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	if (fresh && sroce_wr_is_rd_atomic(w->opcode) &&
	    qp->req.rd_atomic >= qp->max_rd_atomic)
		return false;
	return sroce_psn_diff(qp->req.psn, qp->comp.psn) < SROCE_MAX_INFLIGHT;
}

static enum sroce_req_step sroce_req_step(struct sroce_qp *qp,
					  struct sroce_req_out *out)
{
	u8 state = READ_ONCE(qp->state);
	struct sroce_swqe *w;

	lockdep_assert_held(&qp->sq.lock);
	if (qp->dead || (state != IB_QPS_RTS && state != IB_QPS_SQD))
		return SROCE_REQ_IDLE;
	/* A batch of new WQEs per step: never a whole ring under the lock. */
	if (qp->sq.ring.buf &&
	    sroce_sq_fetch(qp, sroce_ring_load_prod(&qp->sq.ring)) < 0) {
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
		return SROCE_REQ_FAILED;
	}
	if (qp->req.retry)
		sroce_req_rewind(qp);
	else
		sroce_req_skip_acked(qp);
	if (qp->req.idx == qp->sq.prod)
		return SROCE_REQ_IDLE;
	w = sroce_sq_wqe(qp, qp->req.idx);
	if (w->state == SROCE_WQE_DONE) {
		/* Refused when fetched: the QP fails (it has already). */
		if (w->status != IB_WC_SUCCESS) {
			sroce_qp_error(qp, IB_EVENT_QP_FATAL);
			return SROCE_REQ_FAILED;
		}
		/* A local operation a go-back reaches again sends nothing. */
		if (sroce_wr_is_local(w->opcode)) {
			qp->req.idx++;
			return SROCE_REQ_PACKET;
		}
		/*
		 * Being sent again, and finished meanwhile by a response to a
		 * later packet (a READ's implies the SENDs before it arrived):
		 * go on after it.
		 */
		sroce_req_goto(qp, sroce_psn_add(w->last_psn, 1));
		return SROCE_REQ_PACKET;
	}
	if (!sroce_req_may_send(qp, w))
		return SROCE_REQ_STALLED;
	if (!sroce_wr_is_local(w->opcode) &&
	    !sroce_cc_may_send(qp, SROCE_CC_REQ))
		return SROCE_REQ_PACED;
	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		return sroce_req_read(qp, w, out);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return sroce_req_atomic(qp, w, out);
	case SROCE_WR_ATOMIC_WRITE:
		return sroce_req_atomic_write(qp, w, out);
	case SROCE_WR_FLUSH:
		return sroce_req_flush(qp, w, out);
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		return sroce_req_local(qp, w);
	default:
		return sroce_req_send_write(qp, w, out);
	}
}

/* One step under the lock; the packet goes out after it. */
static enum sroce_req_step sroce_req_once(struct sroce_qp *qp)
{
	struct sroce_req_out out = {};
	enum sroce_req_step step;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	step = sroce_req_step(qp, &out);
	qp->req.stalled = step == SROCE_REQ_STALLED;
	qp->req.faulting = step == SROCE_REQ_FAULTING;
	if (out.skb) {
		sroce_req_arm_timer(qp);
		sroce_cc_sent(qp, out.skb->len);
	}
	/* UC and UD requests, and local operations, finish here. */
	sroce_comp_retire(qp);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (out.skb)
		sroce_net_xmit(sroce_qp_dev(qp), qp, &out.av, out.skb);
	return step;
}

/*
 * The runner's passes, SROCE_REQ_BUDGET steps at most in all, until a pass
 * finds nothing to send and no other was asked for.  True when it stops
 * with work left: the budget spent, or a packet built by the last step.
 */
static bool sroce_req_passes(struct sroce_qp *qp)
{
	enum sroce_req_step step;
	int budget = SROCE_REQ_BUDGET;

	do {
		sroce_runner_pass(&qp->req_runner);
		step = SROCE_REQ_PACKET;
		while (budget > 0 && step == SROCE_REQ_PACKET) {
			step = sroce_req_once(qp);
			budget--;
		}
	} while (budget > 0 && step != SROCE_REQ_FAILED &&
		 sroce_runner_asked(&qp->req_runner));
	return step == SROCE_REQ_PACKET || budget <= 0;
}

/*
 * Run the requester here, unless it is running elsewhere: then that runner
 * goes round once more (runner.h).  A runner that stops with work left
 * leaves it to the work item.
 */
static void sroce_req_run(struct sroce_qp *qp)
{
	bool left;

	if (!sroce_runner_start(&qp->req_runner))
		return;
	do {
		left = sroce_req_passes(qp);
		sroce_runner_stop(&qp->req_runner);
		if (left) {
			sroce_qp_sched_req(qp);
			return;
		}
	} while (sroce_runner_resume(&qp->req_runner));
}

/**
 * sroce_req_kick() - run the requester in the caller's context
 * @qp: the QP
 *
 * For the doorbell of a user QP: the packets go out before the system call
 * returns, up to a budget; the work item sends the rest.  A QP the pacer
 * holds to a rate (cc.c) is left to the work item altogether: its packets
 * go out one by one as its schedule allows, and when two of them left from
 * two CPUs (the system call's and the pacer's work), the second could
 * overtake the first on the way to the wire.
 *
 * Context: Process context with interrupts enabled.
 */
void sroce_req_kick(struct sroce_qp *qp)
{
	if (READ_ONCE(qp->dead))
		return;
	if (READ_ONCE(qp->cc.pace_kbps))
		sroce_qp_sched_req(qp);
	else
		sroce_req_run(qp);
}

/**
 * sroce_req_work() - the requester's work item
 * @work: qp->req_work; the work holds a QP reference
 *
 * Context: Process context (sroce_wq).
 */
void sroce_req_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, req_work);

	sroce_req_run(qp);
	sroce_qp_put(qp);
}
