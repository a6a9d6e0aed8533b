// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * resp.c - the responder: executes incoming requests (SEND, RDMA WRITE,
 * RDMA READ, atomics) against the QP's receive queue and registered
 * memory, and decides their answers (ACK, NAK, READ responses, atomic
 * ACKs).
 *
 * Requests are handled in softirq as they arrive, under qp->resp.lock;
 * the packets they produce are collected and sent after the lock is
 * dropped.  READ responses, possibly many packets, are owed, and sent
 * after the lock is dropped or by the responder's work from process
 * context; while any response is owed, atomic ACKs and ACK/NAKs are held
 * back and sent after it, so that the requester sees responses in PSN
 * order.  owed.c keeps the responder resources and sends what is owed.
 *
 * RC packet handling: PSN check (ahead: one sequence-error NAK per gap;
 * behind: a duplicate, re-acknowledged or replayed from the responder
 * resources, never executed twice), opcode sequence, then the operation.
 * A request that cannot be executed is NAKed and fails the QP (an RNR NAK
 * only makes the requester wait).
 *
 * An XRC target QP is an RC responder whose requests each name, in their
 * XRCETH, the XRC SRQ they receive into: its queue, its CQ and its PD
 * stand in for the QP's own while the request is handled (xrc.c).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "hdr.h"
#include "opcode.h"
#include "sroce.h"

/* resp.last_opcode between messages. */
#define SROCE_NO_OPCODE 0xff

/* Owed response packets the receive path sends itself (owed.c). */
#define SROCE_RESP_INLINE_BUDGET 16

/* Bytes of network header UD receive buffers start with. */
#define SROCE_GRH_BYTES 40

enum sroce_resp_verdict {
	SROCE_RESP_DONE,	/* executed */
	SROCE_RESP_RNR,		/* no receive WQE: RNR NAK */
	SROCE_RESP_NAK_INVALID,	/* NAK invalid request, QP fails */
	SROCE_RESP_NAK_ACCESS,	/* NAK remote access error, QP fails */
	SROCE_RESP_NAK_OP,	/* NAK remote operational error, QP fails */
	SROCE_RESP_DROP,	/* silently dropped (UC, UD) */
	SROCE_RESP_PAGE_FAULT,	/* on-demand memory not present: RNR NAK (RC),
				 * dropped (UC); a fault is queued (odp.c)
				 */
};

static u8 sroce_resp_op(const struct sroce_pkt *pkt)
{
	return pkt->opcode & SROCE_OP_MASK;
}

static bool sroce_resp_is_xrc(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* The SRQ receive work requests come from: the QP's, or the XRC SRQ held. */
static struct sroce_srq *sroce_resp_srq(struct sroce_qp *qp)
{
	return sroce_resp_is_xrc(qp) ? qp->resp.xsrq : qp->srq;
}

/* Complete the receive WQE in progress: on the QP's CQ, or its SRQ's. */
static void sroce_resp_post(struct sroce_qp *qp, struct ib_wc *wc,
			    bool solicited)
{
	struct sroce_cq *cq = qp->rcq;

	if (sroce_resp_is_xrc(qp))
		cq = to_scq(qp->resp.xsrq->ibsrq.ext.cq);
	wc->qp = &qp->ibqp;
	wc->wr_id = qp->resp.wqe.wr_id;
	qp->resp.have_wqe = false;
	if (sroce_qp_tm(qp))
		sroce_tm_recv_post(qp, wc, solicited);
	else
		sroce_cq_post(cq, wc, solicited);
}

/* The receive WQE in progress, if any, completes with @status. */
static void sroce_resp_fail_recv(struct sroce_qp *qp, u32 status)
{
	struct ib_wc wc = { .status = status, .opcode = IB_WC_RECV };

	if (sroce_resp_is_xrc(qp))
		sroce_xrc_fail_wqe(qp, &wc);
	else if (qp->resp.have_wqe)
		sroce_resp_post(qp, &wc, false);
}

/*
 * The receive WQE of the message in progress, or a new one (which, through
 * a tag-matching SRQ, may be a tagged buffer, or none at all:
 * SROCE_RQ_HANDLED).  A receive WQE the process wrote wrong, or an
 * impossible producer index, fails the QP on every transport: RC NAKs and
 * fails it on its way out (sroce_resp_nak()); UC and UD, which send
 * nothing back, fail it here.
 */
static enum sroce_rq_taken sroce_resp_get_wqe(struct sroce_qp *qp,
					      const struct sroce_pkt *pkt)
{
	struct sroce_srq *srq = sroce_resp_srq(qp);
	enum sroce_rq_taken taken;

	if (qp->resp.have_wqe)
		return SROCE_RQ_TAKEN;
	if (sroce_qp_tm(qp))
		taken = sroce_tm_take(qp, pkt);
	else
		taken = sroce_rq_take(srq ? &srq->rq : &qp->rq, srq,
				      &qp->resp.wqe);
	if ((taken == SROCE_RQ_BAD_WQE || taken == SROCE_RQ_BAD_PROD) &&
	    !sroce_qp_reliable(qp))
		sroce_qp_error(qp, IB_EVENT_QP_FATAL);
	if (taken == SROCE_RQ_TAKEN || taken == SROCE_RQ_BAD_WQE) {
		qp->resp.have_wqe = true;
		qp->resp.offset = 0;
		if (sroce_resp_is_xrc(qp))
			sroce_xrc_wqe_taken(qp);
	}
	return taken;
}

/*
 * A SEND or a WRITE with immediate needs a receive WQE: without one it is
 * RNR NAKed; an invalid one (or queue) completes in error, if it was taken,
 * and the request is NAKed.  A message tag matching took whole needs none
 * (resp.have_wqe stays false).
 */
static enum sroce_resp_verdict sroce_resp_need_wqe(struct sroce_qp *qp,
						   const struct sroce_pkt *pkt)
{
	switch (sroce_resp_get_wqe(qp, pkt)) {
	case SROCE_RQ_TAKEN:
	case SROCE_RQ_HANDLED:
		return SROCE_RESP_DONE;
	case SROCE_RQ_EMPTY:
		return SROCE_RESP_RNR;
	default:
		sroce_resp_fail_recv(qp, IB_WC_LOC_QP_OP_ERR);
		return SROCE_RESP_NAK_OP;
	}
}

/* Payload length must fit the packet's place in its message. */
static bool sroce_resp_len_ok(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u32 flags = pkt->info->flags;

	if (flags & (SROCE_OPF_FIRST | SROCE_OPF_MIDDLE))
		return pkt->paylen == qp->pmtu;
	if (flags & SROCE_OPF_LAST)
		return pkt->paylen && pkt->paylen <= qp->pmtu;
	return pkt->paylen <= qp->pmtu;
}

static bool sroce_resp_seq_ok(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 last = qp->resp.last_opcode, op = sroce_resp_op(pkt);
	u32 flags = pkt->info->flags;

	if (last == SROCE_OP_SEND_FIRST || last == SROCE_OP_SEND_MIDDLE)
		return (flags & SROCE_OPF_SEND) &&
		       (flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST));
	if (last == SROCE_OP_WRITE_FIRST || last == SROCE_OP_WRITE_MIDDLE)
		return (flags & SROCE_OPF_WRITE) &&
		       (flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST));
	return (flags & SROCE_OPF_START) || op == SROCE_OP_READ_REQ;
}

static void sroce_resp_next_opcode(struct sroce_qp *qp,
				   const struct sroce_pkt *pkt)
{
	qp->resp.last_opcode = pkt->info->flags & SROCE_OPF_END ?
			       SROCE_NO_OPCODE : sroce_resp_op(pkt);
}

/* Complete the receive WQE of a message that ended. */
static void sroce_resp_complete(struct sroce_qp *qp, struct sroce_pkt *pkt,
				u32 opcode, u32 byte_len)
{
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = opcode,
		.byte_len = byte_len,
		.port_num = SROCE_PORT,
	};

	if (pkt->info->flags & SROCE_OPF_IMMDT) {
		wc.ex.imm_data = sroce_pkt_immdt(pkt)->imm;
		wc.wc_flags |= IB_WC_WITH_IMM;
	}
	if (pkt->info->flags & SROCE_OPF_IETH) {
		wc.ex.invalidate_rkey = be32_to_cpu(sroce_pkt_ieth(pkt)->rkey);
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	sroce_resp_post(qp, &wc, sroce_bth_se(pkt->bth));
}

/* A SEND with Invalidate revokes its key once the message is in. */
static bool sroce_resp_invalidate(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	return !sroce_mr_invalidate(qp, qp->resp.pd,
				    be32_to_cpu(sroce_pkt_ieth(pkt)->rkey));
}

/*
 * A SEND's data.  A tagged buffer does not get the tag-matching header the
 * message starts with (resp.tm.skip bytes of its first packet).
 */
static enum sroce_resp_verdict sroce_resp_send(struct sroce_qp *qp,
					       struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	enum sroce_resp_verdict v;
	u32 skip, len;
	int err;

	v = sroce_resp_need_wqe(qp, pkt);
	if (v != SROCE_RESP_DONE || !resp->have_wqe)
		return v;
	skip = min(resp->tm.skip, pkt->paylen);
	len = pkt->paylen - skip;
	if (resp->offset + len > resp->wqe.length) {
		sroce_resp_fail_recv(qp, IB_WC_LOC_LEN_ERR);
		return SROCE_RESP_NAK_INVALID;
	}
	err = sroce_pkt_to_sge(qp, resp->pd, resp->wqe.sge, resp->wqe.num_sge,
			       resp->offset, pkt, skip, len);
	if (err == -EAGAIN)
		return SROCE_RESP_PAGE_FAULT;
	if (err) {
		sroce_resp_fail_recv(qp, IB_WC_LOC_PROT_ERR);
		return SROCE_RESP_NAK_OP;
	}
	resp->offset += len;
	resp->tm.skip = 0;
	if ((pkt->info->flags & SROCE_OPF_IETH) &&
	    !sroce_resp_invalidate(qp, pkt)) {
		sroce_resp_fail_recv(qp, IB_WC_LOC_PROT_ERR);
		return SROCE_RESP_NAK_INVALID;
	}
	if (pkt->info->flags & SROCE_OPF_END)
		sroce_resp_complete(qp, pkt, IB_WC_RECV, resp->offset);
	return SROCE_RESP_DONE;
}

/* Check, for the start of an RDMA WRITE, its RETH against our memory. */
static enum sroce_resp_verdict sroce_resp_write_start(struct sroce_qp *qp,
						      struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = sroce_pkt_reth(pkt);
	struct sroce_resp *resp = &qp->resp;
	u32 len = be32_to_cpu(reth->length);
	struct sroce_mr *mr;

	if (len > SROCE_MAX_MSG_SZ ||
	    ((pkt->info->flags & SROCE_OPF_ONLY) && pkt->paylen != len))
		return SROCE_RESP_NAK_INVALID;
	if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_WRITE))
		return SROCE_RESP_NAK_ACCESS;
	resp->write_va = be64_to_cpu(reth->va);
	resp->write_rkey = be32_to_cpu(reth->rkey);
	resp->write_resid = len;
	resp->write_len = len;
	if (!len)
		return SROCE_RESP_DONE;
	mr = sroce_rkey_get(qp, resp->write_rkey, resp->write_va, len,
			    IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	sroce_mr_put(mr);
	return SROCE_RESP_DONE;
}

static enum sroce_resp_verdict sroce_resp_write_data(struct sroce_qp *qp,
						     struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_mr *mr;
	int err;

	if (pkt->paylen > resp->write_resid)
		return SROCE_RESP_NAK_INVALID;
	if (!pkt->paylen)
		return SROCE_RESP_DONE;
	mr = sroce_rkey_get(qp, resp->write_rkey, resp->write_va, pkt->paylen,
			    IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	err = sroce_pkt_to_mr(qp, mr, resp->write_va, pkt);
	sroce_mr_put(mr);
	if (err == -EAGAIN)
		return SROCE_RESP_PAGE_FAULT;
	if (err)
		return SROCE_RESP_NAK_ACCESS;
	resp->write_va += pkt->paylen;
	resp->write_resid -= pkt->paylen;
	return SROCE_RESP_DONE;
}

static enum sroce_resp_verdict sroce_resp_write(struct sroce_qp *qp,
						struct sroce_pkt *pkt)
{
	u32 flags = pkt->info->flags;
	enum sroce_resp_verdict v;

	/* WRITE with immediate needs a receive WQE: check before anything. */
	if (flags & SROCE_OPF_IMMDT) {
		v = sroce_resp_need_wqe(qp, pkt);
		if (v != SROCE_RESP_DONE)
			return v;
	}
	if (flags & SROCE_OPF_START) {
		v = sroce_resp_write_start(qp, pkt);
		if (v != SROCE_RESP_DONE)
			return v;
	}
	v = sroce_resp_write_data(qp, pkt);
	if (v != SROCE_RESP_DONE)
		return v;
	if ((flags & SROCE_OPF_END) && qp->resp.write_resid)
		return SROCE_RESP_NAK_INVALID;
	if ((flags & SROCE_OPF_END) && (flags & SROCE_OPF_IMMDT))
		sroce_resp_complete(qp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
				    qp->resp.write_len);
	return SROCE_RESP_DONE;
}

static bool sroce_resp_mem_ok(struct sroce_qp *qp, u32 rkey, u64 va, u64 len,
			      u32 access)
{
	struct sroce_mr *mr;

	if (!(READ_ONCE(qp->access) & access))
		return false;
	if (!len)
		return true;
	mr = sroce_rkey_get(qp, rkey, va, len, access);
	if (mr)
		sroce_mr_put(mr);
	return mr;
}

/*
 * What a READ asking for @len bytes at @va under @rkey must pass, new or
 * replayed: its length, the QP's remote read access, the key's memory.
 */
static enum sroce_resp_verdict sroce_resp_read_check(struct sroce_qp *qp,
						     u32 rkey, u64 va, u32 len)
{
	if (len > SROCE_MAX_MSG_SZ)
		return SROCE_RESP_NAK_INVALID;
	if (!sroce_resp_mem_ok(qp, rkey, va, len, IB_ACCESS_REMOTE_READ))
		return SROCE_RESP_NAK_ACCESS;
	return SROCE_RESP_DONE;
}

static enum sroce_resp_verdict sroce_resp_read(struct sroce_qp *qp,
					       struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = sroce_pkt_reth(pkt);
	u32 len = be32_to_cpu(reth->length), rkey = be32_to_cpu(reth->rkey);
	u64 va = be64_to_cpu(reth->va);
	struct sroce_resp_res *res;
	enum sroce_resp_verdict v;

	v = sroce_resp_read_check(qp, rkey, va, len);
	if (v != SROCE_RESP_DONE)
		return v;
	res = sroce_resp_new_res(qp);
	if (!res)
		return SROCE_RESP_NAK_INVALID;
	res->type = SROCE_RES_READ;
	res->first_psn = pkt->psn;
	res->rkey = rkey;
	if (sroce_resp_is_xrc(qp)) {
		res->xrc_srqn = qp->resp.xsrq->ibsrq.ext.xrc.srq_num;
		res->xrc_serial = qp->resp.xsrq->serial;
	}
	res->req_va = va;
	res->req_len = len;
	sroce_resp_read_start(qp, res, pkt->psn, va, len);
	res->last_psn = res->end_psn;
	qp->resp.msn++;
	qp->resp.epsn = sroce_psn_add(res->last_psn, 1);
	sroce_resp_queue_res(qp, res, false);
	return SROCE_RESP_DONE;
}

/*
 * An atomic (or ATOMIC WRITE) that did not execute: NAKed, or for memory
 * being faulted in RNR-NAKed, and sent again; its resource is given back
 * then, so that the one it took stays the newest but one.
 */
static enum sroce_resp_verdict sroce_resp_atomic_err(struct sroce_qp *qp,
						     int err)
{
	if (err == -EAGAIN) {
		sroce_resp_unnew_res(qp);
		return SROCE_RESP_PAGE_FAULT;
	}
	return err == -EINVAL ? SROCE_RESP_NAK_INVALID : SROCE_RESP_NAK_ACCESS;
}

static enum sroce_resp_verdict sroce_resp_atomic(struct sroce_qp *qp,
						 struct sroce_pkt *pkt,
						 struct sk_buff_head *out)
{
	const struct sroce_atmeth *atm = sroce_pkt_atmeth(pkt);
	u64 va = be64_to_cpu(atm->va);
	u32 rkey = be32_to_cpu(atm->rkey);
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	struct sk_buff *skb;
	u64 orig;
	int err;

	if (va & 7)
		return SROCE_RESP_NAK_INVALID;
	if (!sroce_resp_mem_ok(qp, rkey, va, sizeof(u64),
			       IB_ACCESS_REMOTE_ATOMIC))
		return SROCE_RESP_NAK_ACCESS;
	res = sroce_resp_new_res(qp);
	if (!res)
		return SROCE_RESP_NAK_INVALID;
	mr = sroce_rkey_get(qp, rkey, va, sizeof(u64), IB_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	err = sroce_mr_atomic(qp, mr, va,
			      sroce_resp_op(pkt) == SROCE_OP_CMP_SWAP ?
			      SROCE_ATOMIC_CMP_SWAP : SROCE_ATOMIC_FETCH_ADD,
			      be64_to_cpu(sroce_resp_op(pkt) == SROCE_OP_CMP_SWAP ?
					  atm->compare : atm->swap_add),
			      be64_to_cpu(atm->swap_add), &orig);
	sroce_mr_put(mr);
	if (err)
		return sroce_resp_atomic_err(qp, err);
	res->type = SROCE_RES_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	/* Its place among the answers owed (sroce_resp_oldest()). */
	res->cur_psn = pkt->psn;
	res->orig = orig;
	qp->resp.msn++;
	if (qp->resp.queued) {
		sroce_resp_queue_res(qp, res, false);
		return SROCE_RESP_DONE;
	}
	skb = sroce_resp_ack_skb(qp, SROCE_AETH_ACK | SROCE_AETH_ACK_UNLIMITED,
				 pkt->psn, true, orig);
	if (skb)
		__skb_queue_tail(out, skb);
	return SROCE_RESP_DONE;
}

/*
 * An executed ATOMIC WRITE or FLUSH (@type) at @psn: its resource owes an
 * empty READ response, sent after the answers owed before it; the MSN
 * and the expected PSN move on.
 */
static enum sroce_resp_verdict sroce_resp_owe_empty(struct sroce_qp *qp,
						    struct sroce_resp_res *res,
						    enum sroce_res_type type,
						    u32 psn)
{
	res->type = type;
	res->first_psn = psn;
	res->last_psn = psn;
	sroce_resp_read_start(qp, res, psn, 0, 0);
	qp->resp.msn++;
	qp->resp.epsn = sroce_psn_add(psn, 1);
	sroce_resp_queue_res(qp, res, false);
	return SROCE_RESP_DONE;
}

/*
 * An ATOMIC WRITE: its 8 bytes stored in one piece at an aligned address
 * the QP may write, under a responder resource like a READ's, answered by
 * a READ response without data (owed like one: after the answers owed
 * before it, and again from the resource for a duplicate, without storing
 * again).
 */
static enum sroce_resp_verdict sroce_resp_atomic_write(struct sroce_qp *qp,
						       struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = sroce_pkt_reth(pkt);
	u32 rkey = be32_to_cpu(reth->rkey);
	u64 va = be64_to_cpu(reth->va), val, orig;
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	int err;

	if (be32_to_cpu(reth->length) != sizeof(val) ||
	    pkt->paylen != sizeof(val) || (va & 7))
		return SROCE_RESP_NAK_INVALID;
	if (!sroce_resp_mem_ok(qp, rkey, va, sizeof(val),
			       IB_ACCESS_REMOTE_WRITE))
		return SROCE_RESP_NAK_ACCESS;
	res = sroce_resp_new_res(qp);
	if (!res)
		return SROCE_RESP_NAK_INVALID;
	mr = sroce_rkey_get(qp, rkey, va, sizeof(val), IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	if (sroce_pkt_read(pkt, 0, &val, sizeof(val))) {
		sroce_mr_put(mr);
		return SROCE_RESP_NAK_INVALID;
	}
	err = sroce_mr_atomic(qp, mr, va, SROCE_ATOMIC_WRITE, 0, val, &orig);
	sroce_mr_put(mr);
	if (err)
		return sroce_resp_atomic_err(qp, err);
	return sroce_resp_owe_empty(qp, res, SROCE_RES_ATOMIC_WRITE, pkt->psn);
}

/* The rights, of the QP and of the region, a FLUSH's placement type needs. */
static u32 sroce_flush_rights(u8 type)
{
	return (type & SROCE_FLUSH_GLOBAL ? SROCE_MR_FLUSH_GLOBAL : 0) |
	       (type & SROCE_FLUSH_PERSISTENT ? SROCE_MR_FLUSH_PERSISTENT : 0);
}

/*
 * The region a FLUSH names, referenced, and the range it flushes: its
 * RETH's (SROCE_FLUSH_RANGE), or the whole region (SROCE_FLUSH_MR, whose
 * RETH's address and length mean nothing).
 */
static struct sroce_mr *sroce_resp_flush_mr(struct sroce_qp *qp,
					    struct sroce_pkt *pkt, u8 level,
					    u32 rights, u64 *va, u64 *len)
{
	const struct sroce_reth *reth = sroce_pkt_reth(pkt);
	u32 rkey = be32_to_cpu(reth->rkey);

	if (level == SROCE_FLUSH_MR)
		return sroce_rkey_get_whole(qp, rkey, rights, va, len);
	*va = be64_to_cpu(reth->va);
	*len = be32_to_cpu(reth->length);
	return sroce_rkey_get(qp, rkey, *va, *len, rights);
}

/*
 * A FLUSH: the placement type and level known, the QP and the region
 * granting the rights the type needs (a type of neither bit needs none,
 * as rdma_rxe sends for kernel ULPs), the range within the region; then
 * the memory flushed (sroce_mr_flush()), under a responder resource like
 * an ATOMIC WRITE's and answered the same way.  A duplicate is answered
 * again from the resource without flushing again.
 */
static enum sroce_resp_verdict sroce_resp_flush(struct sroce_qp *qp,
						struct sroce_pkt *pkt)
{
	u32 bits = be32_to_cpu(sroce_pkt_feth(pkt)->bits), rights;
	u8 type = FIELD_GET(SROCE_FETH_PLT, bits);
	u8 level = FIELD_GET(SROCE_FETH_SEL, bits);
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	u64 va, len;

	if ((type & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
	    level > SROCE_FLUSH_MR)
		return SROCE_RESP_NAK_INVALID;
	rights = sroce_flush_rights(type);
	if ((READ_ONCE(qp->access) & rights) != rights)
		return SROCE_RESP_NAK_ACCESS;
	mr = sroce_resp_flush_mr(qp, pkt, level, rights, &va, &len);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	res = sroce_resp_new_res(qp);
	if (!res) {
		sroce_mr_put(mr);
		return SROCE_RESP_NAK_INVALID;
	}
	sroce_mr_flush(mr, va, len, type);
	sroce_mr_put(mr);
	return sroce_resp_owe_empty(qp, res, SROCE_RES_FLUSH, pkt->psn);
}

/*
 * Whether a duplicate READ at @psn asks for what @res's request asked from
 * that PSN on: a requester that lost part of an answer asks again for the
 * rest, from the PSN of the first packet it lacks, with the same R_Key,
 * its VA moved on by the bytes of the packets before (its length cut by as
 * many).  Another R_Key, another VA or more than the rest is no duplicate
 * of this request.  A part of the rest is allowed (rdma_rxe's requester
 * and sroce's ask for all of it); nothing at all only if the rest is
 * nothing.
 */
static bool sroce_resp_replay_matches(struct sroce_qp *qp,
				      const struct sroce_resp_res *res,
				      u32 psn, u32 rkey, u64 va, u32 len)
{
	u64 skip = (u64)sroce_psn_diff(psn, res->first_psn) * qp->pmtu;
	u32 rest;

	if (rkey != res->rkey || skip > res->req_len)
		return false;
	rest = res->req_len - skip;
	return va == res->req_va + skip && len <= rest && (len || !rest);
}

/*
 * A duplicate READ within @res's PSNs: answer it again, from its PSN, if
 * it matches the request (an XRC target's: names the same SRQ) and passes
 * the checks a new READ gets now (an XRC target's SRQ still there).  One
 * that does not match is dropped unanswered (rejected_read_replays), as a
 * duplicate no resource holds is: the requester has moved on past its
 * PSN, so a NAK there would refer to nothing it waits for.  One the
 * checks refuse finds the memory, or the QP's right to read it, gone
 * since the first answer, and is given up like a replay whose memory goes
 * away while it is being sent (stale_read_replays,
 * sroce_resp_read_next()).  Either way @res and its answer in progress,
 * if any, are left as they are.
 */
static void sroce_resp_replay_read(struct sroce_qp *qp,
				   struct sroce_resp_res *res,
				   struct sroce_pkt *pkt)
{
	const struct sroce_reth *reth = sroce_pkt_reth(pkt);
	enum sroce_resp_verdict v = SROCE_RESP_NAK_ACCESS;
	u32 len = be32_to_cpu(reth->length);
	u64 va = be64_to_cpu(reth->va);

	if (!sroce_resp_replay_matches(qp, res, pkt->psn,
				       be32_to_cpu(reth->rkey), va, len) ||
	    (sroce_resp_is_xrc(qp) && sroce_pkt_xrc_srqn(pkt) != res->xrc_srqn)) {
		sroce_drop_pkt(pkt, SROCE_CNT_REJECTED_READ_REPLAYS);
		return;
	}
	if (sroce_xrc_res_hold(qp, res))
		v = sroce_resp_read_check(qp, res->rkey, va, len);
	sroce_xrc_resp_release(qp);
	if (v != SROCE_RESP_DONE) {
		sroce_drop_pkt(pkt, SROCE_CNT_STALE_READ_REPLAYS);
		return;
	}
	sroce_resp_read_start(qp, res, pkt->psn, va, len);
	sroce_resp_queue_res(qp, res, true);
}

/* A request older than the expected PSN: answer it again, do not redo it. */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 struct sk_buff_head *out)
{
	struct sroce_resp_res *res;
	u32 i, flags = pkt->info->flags;

	sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_DUP);
	if (!(flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC |
		       SROCE_OPF_ATOMIC_WRITE | SROCE_OPF_FLUSH))) {
		if (sroce_bth_ackreq(pkt->bth))
			sroce_resp_ack(qp, SROCE_AETH_ACK |
				       SROCE_AETH_ACK_UNLIMITED,
				       sroce_psn_add(qp->resp.epsn,
						     SROCE_24BIT_MASK), out);
		return;
	}
	for (i = 0; i < qp->resp.num_res; i++) {
		res = sroce_resp_newest(qp, i);
		/* Every older one holds earlier PSNs. */
		if (res->type == SROCE_RES_NONE ||
		    sroce_psn_diff(pkt->psn, res->last_psn) > 0)
			return;
		if (res->type == SROCE_RES_NONE ||
		    sroce_psn_diff(pkt->psn, res->first_psn) < 0 ||
		    sroce_psn_diff(pkt->psn, res->last_psn) > 0)
			continue;
		if ((flags & SROCE_OPF_READ) && res->type == SROCE_RES_READ) {
			sroce_resp_replay_read(qp, res, pkt);
		} else if ((flags & SROCE_OPF_ATOMIC) &&
			   res->type == SROCE_RES_ATOMIC) {
			sroce_resp_queue_res(qp, res, true);
		} else if (((flags & SROCE_OPF_ATOMIC_WRITE) &&
			    res->type == SROCE_RES_ATOMIC_WRITE) ||
			   ((flags & SROCE_OPF_FLUSH) &&
			    res->type == SROCE_RES_FLUSH)) {
			sroce_resp_read_start(qp, res, res->first_psn, 0, 0);
			sroce_resp_queue_res(qp, res, true);
		}
		return;
	}
}

static void sroce_resp_nak(struct sroce_qp *qp, enum sroce_resp_verdict v,
			   u32 psn, struct sk_buff_head *out)
{
	static const u8 code[] = {
		[SROCE_RESP_NAK_INVALID] = SROCE_NAK_INVALID_REQ,
		[SROCE_RESP_NAK_ACCESS] = SROCE_NAK_REM_ACCESS,
		[SROCE_RESP_NAK_OP] = SROCE_NAK_REM_OP,
	};

	sroce_resp_nak_sent(qp, SROCE_AETH_NAK | code[v], psn);
	sroce_resp_ack(qp, SROCE_AETH_NAK | code[v], psn, out);
	sroce_resp_fail_recv(qp, v == SROCE_RESP_NAK_ACCESS ?
			     IB_WC_REM_ACCESS_ERR : IB_WC_REM_INV_REQ_ERR);
	sroce_qp_error(qp, v == SROCE_RESP_NAK_ACCESS ? IB_EVENT_QP_ACCESS_ERR :
							IB_EVENT_QP_REQ_ERR);
}

static enum sroce_resp_verdict sroce_resp_execute_op(struct sroce_qp *qp,
						     struct sroce_pkt *pkt,
						     struct sk_buff_head *out)
{
	u32 flags = pkt->info->flags;

	if (!sroce_resp_seq_ok(qp, pkt))
		return SROCE_RESP_NAK_INVALID;
	if ((flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE)) &&
	    !sroce_resp_len_ok(qp, pkt))
		return SROCE_RESP_NAK_INVALID;
	if (flags & SROCE_OPF_SEND)
		return sroce_resp_send(qp, pkt);
	if (flags & SROCE_OPF_WRITE)
		return sroce_resp_write(qp, pkt);
	if (flags & SROCE_OPF_READ)
		return sroce_resp_read(qp, pkt);
	if (flags & SROCE_OPF_ATOMIC_WRITE)
		return sroce_resp_atomic_write(qp, pkt);
	if (flags & SROCE_OPF_FLUSH)
		return sroce_resp_flush(qp, pkt);
	return sroce_resp_atomic(qp, pkt, out);
}

/*
 * Execute a new request.  An XRC target's request must name an SRQ of its
 * XRC domain, the one the message's receive WQE came from if it has one;
 * the SRQ is held while the request executes.
 */
static enum sroce_resp_verdict sroce_resp_execute(struct sroce_qp *qp,
						  struct sroce_pkt *pkt,
						  struct sk_buff_head *out)
{
	enum sroce_resp_verdict v;

	if (!sroce_resp_is_xrc(qp))
		return sroce_resp_execute_op(qp, pkt, out);
	if (!sroce_xrc_resp_hold(qp, sroce_pkt_xrc_srqn(pkt), 0))
		return SROCE_RESP_NAK_INVALID;
	if (qp->resp.have_wqe &&
	    qp->resp.wqe_srq_serial != qp->resp.xsrq->serial)
		v = SROCE_RESP_NAK_INVALID;
	else
		v = sroce_resp_execute_op(qp, pkt, out);
	sroce_xrc_resp_release(qp);
	return v;
}

/* After an executed request: the expected PSN, MSN and the ACK. */
static void sroce_resp_advance(struct sroce_qp *qp, struct sroce_pkt *pkt,
			       struct sk_buff_head *out)
{
	u32 flags = pkt->info->flags;

	sroce_resp_next_opcode(qp, pkt);
	if (flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC_WRITE | SROCE_OPF_FLUSH))
		return;		/* the PSN and MSN moved with the resource */
	qp->resp.epsn = sroce_psn_add(pkt->psn, 1);
	if (flags & SROCE_OPF_ATOMIC)
		return;
	if (flags & SROCE_OPF_END)
		qp->resp.msn++;
	if (sroce_bth_ackreq(pkt->bth))
		sroce_resp_ack(qp, SROCE_AETH_ACK | SROCE_AETH_ACK_UNLIMITED,
			       pkt->psn, out);
}

static void sroce_resp_rc(struct sroce_qp *qp, struct sroce_pkt *pkt,
			  struct sk_buff_head *out)
{
	struct sroce_resp *resp = &qp->resp;
	s32 d = sroce_psn_diff(pkt->psn, resp->epsn);
	enum sroce_resp_verdict v;
	u8 syndrome;

	if (d < 0)
		return sroce_resp_duplicate(qp, pkt, out);
	if (d > 0) {
		if (resp->nak_sent) {
			/* One NAK per gap; the rest is dropped silently. */
			sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_SEQ);
			return;
		}
		resp->nak_sent = true;
		sroce_resp_nak_sent(qp, SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR,
				    resp->epsn);
		sroce_resp_ack(qp, SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR,
			       resp->epsn, out);
		return;
	}
	resp->nak_sent = false;
	v = sroce_resp_execute(qp, pkt, out);
	if (v == SROCE_RESP_DONE)
		return sroce_resp_advance(qp, pkt, out);
	if (v == SROCE_RESP_RNR || v == SROCE_RESP_PAGE_FAULT) {
		syndrome = SROCE_AETH_RNR_NAK | READ_ONCE(qp->min_rnr_timer);
		sroce_resp_nak_sent(qp, syndrome, pkt->psn);
		sroce_resp_ack(qp, syndrome, pkt->psn, out);
		/* Packets behind it are dropped silently until it is resent. */
		resp->nak_sent = true;
		return;
	}
	sroce_resp_nak(qp, v, pkt->psn, out);
}

static enum sroce_counter sroce_resp_uc_drop_counter(enum sroce_resp_verdict v)
{
	if (v == SROCE_RESP_RNR)
		return SROCE_CNT_RX_DROP_NO_RECV;
	if (v == SROCE_RESP_PAGE_FAULT)
		return SROCE_CNT_RX_DROP_PAGE_FAULT;
	return SROCE_CNT_RX_DROP_UC;
}

/* UC: no ACKs; a lost packet loses its message, nothing else. */
static void sroce_resp_uc(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	enum sroce_resp_verdict v;
	u32 flags = pkt->info->flags;

	if (pkt->psn != resp->epsn || !sroce_resp_seq_ok(qp, pkt)) {
		resp->last_opcode = SROCE_NO_OPCODE;
		resp->offset = 0;
		if (!(flags & SROCE_OPF_START)) {
			resp->epsn = sroce_psn_add(pkt->psn, 1);
			sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_UC);
			return;
		}
	}
	resp->epsn = sroce_psn_add(pkt->psn, 1);
	v = sroce_resp_len_ok(qp, pkt) ? SROCE_RESP_DONE : SROCE_RESP_DROP;
	if (v == SROCE_RESP_DONE)
		v = flags & SROCE_OPF_SEND ? sroce_resp_send(qp, pkt) :
					     sroce_resp_write(qp, pkt);
	if (v == SROCE_RESP_DONE) {
		sroce_resp_next_opcode(qp, pkt);
		return;
	}
	/* Nothing is NAKed on UC: the message is dropped, the WQE kept. */
	sroce_drop_pkt(pkt, sroce_resp_uc_drop_counter(v));
	resp->last_opcode = SROCE_NO_OPCODE;
	resp->offset = 0;
}

/* The 40 bytes before a UD message: the GRH, or an IPv4 header after 20
 * zero bytes (struct rdma_network_hdr).
 */
static void sroce_resp_grh(struct sk_buff *skb, u8 *grh)
{
	memset(grh, 0, SROCE_GRH_BYTES);
	if (skb->protocol == htons(ETH_P_IP))
		memcpy(grh + 20, ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
}

/*
 * The sender's MAC and, for a datagram that arrived on one of the netdev's
 * VLANs, the VLAN: ib_core uses it to find the GID a reply must come from
 * (ib_init_ah_attr_from_wc()).
 */
static void sroce_resp_l2(struct sroce_pkt *pkt, struct ib_wc *wc)
{
	struct sk_buff *skb = pkt->skb;
	struct net_device *ndev;

	if (skb->dev && is_vlan_dev(skb->dev)) {
		wc->vlan_id = vlan_dev_vlan_id(skb->dev);
		wc->wc_flags |= IB_WC_WITH_VLAN;
	}
	if (skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN) {
		ether_addr_copy(wc->smac, eth_hdr(skb)->h_source);
		return;
	}
	rcu_read_lock();
	ndev = rcu_dereference(pkt->sdev->ndev);
	if (ndev)
		ether_addr_copy(wc->smac, ndev->dev_addr);
	rcu_read_unlock();
}

static void sroce_resp_ud_complete(struct sroce_qp *qp, struct sroce_pkt *pkt,
				   u32 sqpn)
{
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = SROCE_GRH_BYTES + pkt->paylen,
		.src_qp = sqpn,
		.port_num = SROCE_PORT,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			    IB_WC_WITH_SMAC,
		.network_hdr_type = pkt->skb->protocol == htons(ETH_P_IP) ?
				    RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6,
	};

	sroce_resp_l2(pkt, &wc);
	if (pkt->info->flags & SROCE_OPF_IMMDT) {
		wc.ex.imm_data = sroce_pkt_immdt(pkt)->imm;
		wc.wc_flags |= IB_WC_WITH_IMM;
	}
	sroce_resp_post(qp, &wc, sroce_bth_se(pkt->bth));
}

static void sroce_resp_ud(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	const struct sroce_deth *deth = sroce_pkt_deth(pkt);
	enum sroce_rq_taken taken;
	u8 grh[SROCE_GRH_BYTES];
	int err;

	if (be32_to_cpu(deth->qkey) != READ_ONCE(qp->qkey)) {
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_QKEY);
		return;
	}
	taken = sroce_resp_get_wqe(qp, pkt);
	if (taken == SROCE_RQ_EMPTY || taken == SROCE_RQ_BAD_PROD) {
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_NO_RECV);
		return;
	}
	if (taken == SROCE_RQ_BAD_WQE ||
	    SROCE_GRH_BYTES + pkt->paylen > qp->resp.wqe.length) {
		sroce_count(pkt->sdev, SROCE_CNT_RX_UD_RECV);
		sroce_resp_fail_recv(qp, taken == SROCE_RQ_BAD_WQE ?
				     IB_WC_LOC_QP_OP_ERR : IB_WC_LOC_LEN_ERR);
		return;
	}
	sroce_resp_grh(pkt->skb, grh);
	err = sroce_sge_copy(qp, qp->resp.pd, qp->resp.wqe.sge,
			     qp->resp.wqe.num_sge, 0, grh, SROCE_GRH_BYTES,
			     SROCE_TO_MR);
	if (!err)
		err = sroce_pkt_to_sge(qp, qp->resp.pd, qp->resp.wqe.sge,
				       qp->resp.wqe.num_sge, SROCE_GRH_BYTES,
				       pkt, 0, pkt->paylen);
	/* On-demand memory being faulted in: the datagram is lost. */
	if (err == -EAGAIN) {
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_PAGE_FAULT);
		return;
	}
	sroce_count(pkt->sdev, SROCE_CNT_RX_UD_RECV);
	if (err) {
		sroce_resp_fail_recv(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	sroce_resp_ud_complete(qp, pkt,
			       be32_to_cpu(deth->sqpn) & SROCE_24BIT_MASK);
}

static void sroce_resp_xmit(struct sroce_qp *qp, struct sk_buff_head *out)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(out)))
		sroce_net_xmit(sroce_qp_dev(qp), qp, &qp->av, skb);
}

/**
 * sroce_resp_rcv() - a request for a QP's responder
 * @pkt: the packet, validated by rx.c
 *
 * Context: Softirq, or process context with BH disabled.
 */
void sroce_resp_rcv(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;
	bool comm_est = false, owed;
	struct sk_buff_head out;

	__skb_queue_head_init(&out);
	spin_lock(&qp->resp.lock);
	if (qp->dead) {
		spin_unlock(&qp->resp.lock);
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_QP_STATE);
		return;
	}
	if (READ_ONCE(qp->state) == IB_QPS_RTR && !qp->resp.comm_est) {
		qp->resp.comm_est = true;
		comm_est = true;
	}
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
	case IB_QPT_XRC_TGT:
		sroce_count(pkt->sdev, SROCE_CNT_RX_RC_UC_PACKETS);
		sroce_resp_rc(qp, pkt, &out);
		break;
	case IB_QPT_UC:
		sroce_count(pkt->sdev, SROCE_CNT_RX_RC_UC_PACKETS);
		sroce_resp_uc(qp, pkt);
		break;
	default:
		sroce_resp_ud(qp, pkt);
		break;
	}
	owed = qp->resp.queued || qp->resp.pending.valid;
	spin_unlock(&qp->resp.lock);
	sroce_resp_xmit(qp, &out);
	if (owed)
		sroce_resp_flush_owed(qp, SROCE_RESP_INLINE_BUDGET);
	if (comm_est)
		sroce_qp_event(qp, IB_EVENT_COMM_EST);
}

/**
 * sroce_resp_reset() - forget the responder's progress (RESET, destroy)
 * @qp: the QP
 *
 * A receive WQE in progress is dropped without a completion, as every
 * other work request on a reset.
 *
 * Context: Any context. Caller holds qp->resp.lock, or the QP is dead.
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	resp->have_wqe = false;
	resp->offset = 0;
	resp->tm = (struct sroce_resp_tm){};
	resp->msn = 0;
	resp->nak_sent = false;
	resp->comm_est = false;
	resp->last_wqe = false;
	resp->last_opcode = SROCE_NO_OPCODE;
	resp->write_resid = 0;
	resp->res_next = 0;
	resp->queued = 0;
	resp->owed_busy = false;
	resp->pending.valid = false;
	if (resp->res)
		memset(resp->res, 0, resp->num_res * sizeof(*resp->res));
}
