// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tm.c - tag matching: the model of rdma-core's
 * Documentation/tag_matching.md, by the rules uapi/rdma/sroce-abi.h sets
 * down under "Tag matching".
 *
 * A tag-matching SRQ keeps a list of tagged buffers, oldest first, under
 * its queue's lock, which is already what serialises the QPs that share
 * it.  The process adds and deletes entries with SROCE_METHOD_SRQ_TM_OP
 * (ioctl.c), each executed before the call returns.  The responder brings
 * the first packet of each message here: a matched message goes into its
 * entry's buffer, header stripped; any other into an SRQ buffer, whole.
 * A matched rendezvous request makes the QP read the sender's buffer with
 * an RDMA READ and then send it a FIN: work requests the device queues
 * itself on the QP's send queue (SROCE_SWQE_TM), which take no slot of the
 * process's ring and complete here, on the SRQ's CQ, never on the QP's.
 */
#include "sroce.h"

/* A handle: the entry's index in its low bits, its generation above. */
#define SROCE_TM_INDEX_BITS 8
static_assert(SROCE_TM_MAX_TAGS == 1 << SROCE_TM_INDEX_BITS);

/* The FIN a rendezvous's READ is followed by: its header, sent back. */
#define SROCE_TM_FIN_LEN (sizeof(struct sroce_tmh) + sizeof(struct sroce_rvh))

/**
 * struct sroce_tm_entry - a tagged buffer
 * @node: in sroce_tm.listed while @listed, else in sroce_tm.free
 * @listed: takes messages
 * @gen: counts the times the entry left the list, so that the handle of
 *	an earlier use names nothing
 * @recv_wr_id: the wr_id of its receive completions
 * @tag: the tag it takes ...
 * @mask: ... compared in these bits
 * @num_sge: 0 or 1
 * @sge: the buffer
 */
struct sroce_tm_entry {
	struct list_head node;
	bool listed;
	u32 gen;
	u64 recv_wr_id;
	u64 tag;
	u64 mask;
	u32 num_sge;
	struct sroce_sge sge;
};

/**
 * struct sroce_tm - a tag-matching SRQ's list; guarded by its rq.lock
 * @entries: @num entries
 * @num: max_num_tags the SRQ was created with
 * @listed: entries that take messages, oldest first
 * @free: the others
 * @unexp: tagged messages delivered unexpected
 * @sw_unexp: the count of them the process last reported; no message is
 *	matched while it is not @unexp
 */
struct sroce_tm {
	struct sroce_tm_entry *entries;
	u32 num;
	struct list_head listed;
	struct list_head free;
	u32 unexp;
	u32 sw_unexp;
};

static struct sroce_cq *sroce_tm_cq(struct sroce_srq *srq)
{
	return to_scq(srq->ibsrq.ext.cq);
}

/**
 * sroce_tm_srq_init() - make an SRQ being created a tag-matching one
 * @srq: the SRQ
 * @max_num_tags: entries its list holds
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL for a size of 0 or past SROCE_TM_MAX_TAGS, -ENOMEM.
 */
int sroce_tm_srq_init(struct sroce_srq *srq, u32 max_num_tags)
{
	struct sroce_tm *tm;
	u32 i;

	if (!max_num_tags || max_num_tags > SROCE_TM_MAX_TAGS)
		return -EINVAL;
	tm = kzalloc(sizeof(*tm), SROCE_GFP_OBJ);
	if (!tm)
		return -ENOMEM;
	tm->entries = kvcalloc(max_num_tags, sizeof(*tm->entries),
			       SROCE_GFP_SIZED);
	if (!tm->entries) {
		kfree(tm);
		return -ENOMEM;
	}
	tm->num = max_num_tags;
	INIT_LIST_HEAD(&tm->listed);
	INIT_LIST_HEAD(&tm->free);
	for (i = 0; i < max_num_tags; i++)
		list_add_tail(&tm->entries[i].node, &tm->free);
	srq->tm = tm;
	return 0;
}

/**
 * sroce_tm_srq_free() - free what sroce_tm_srq_init() allocated
 * @srq: an SRQ no QP uses any more
 *
 * Context: Process context.
 */
void sroce_tm_srq_free(struct sroce_srq *srq)
{
	if (!srq->tm)
		return;
	kvfree(srq->tm->entries);
	kfree(srq->tm);
	srq->tm = NULL;
}

static u32 sroce_tm_handle(const struct sroce_tm *tm,
			   const struct sroce_tm_entry *e)
{
	return e->gen << SROCE_TM_INDEX_BITS | (u32)(e - tm->entries);
}

static void sroce_tm_unlist(struct sroce_tm *tm, struct sroce_tm_entry *e)
{
	e->listed = false;
	e->gen++;
	list_move_tail(&e->node, &tm->free);
}

/* The flags every operation's completion carries. */
static u32 sroce_tm_sync_flags(const struct sroce_tm *tm)
{
	return tm->unexp != tm->sw_unexp ? SROCE_WC_TM_SYNC_REQ : 0;
}

/* An operation's completion: if asked for, or if it failed. */
static void sroce_tm_op_done(struct sroce_srq *srq, const struct sroce_tm_op *op,
			     u32 opcode, u32 status)
{
	struct ib_wc wc = {
		.wr_id = op->wr_id,
		.status = status,
		.opcode = opcode,
	};
	struct sroce_wc_tm info = { .flags = sroce_tm_sync_flags(srq->tm) };

	lockdep_assert_held(&srq->rq.lock);
	if (status == IB_WC_SUCCESS && !(op->flags & SROCE_TM_OP_SIGNALED))
		return;
	sroce_cq_post_tm(sroce_tm_cq(srq), &wc, false, &info);
}

static int sroce_tm_add(struct sroce_srq *srq, const struct sroce_tm_op *op,
			struct sroce_tm_op_resp *resp)
{
	struct sroce_tm *tm = srq->tm;
	struct sroce_tm_entry *e;

	e = list_first_entry_or_null(&tm->free, struct sroce_tm_entry, node);
	if (!e)
		return -ENOMEM;
	e->recv_wr_id = op->recv_wr_id;
	e->tag = op->tag;
	e->mask = op->mask;
	e->num_sge = op->num_sge;
	e->sge = op->num_sge ? op->sge : (struct sroce_sge){};
	e->listed = true;
	list_move_tail(&e->node, &tm->listed);
	resp->handle = sroce_tm_handle(tm, e);
	sroce_tm_op_done(srq, op, SROCE_WC_TM_ADD, IB_WC_SUCCESS);
	return 0;
}

/* A handle no longer listed (a message took it) completes in error. */
static int sroce_tm_del(struct sroce_srq *srq, const struct sroce_tm_op *op)
{
	struct sroce_tm *tm = srq->tm;
	u32 i = op->handle & (SROCE_TM_MAX_TAGS - 1);
	struct sroce_tm_entry *e;

	if (i >= tm->num)
		return -EINVAL;
	e = &tm->entries[i];
	if (!e->listed || sroce_tm_handle(tm, e) != op->handle) {
		sroce_tm_op_done(srq, op, SROCE_WC_TM_DEL, SROCE_WC_TM_ERR);
		return 0;
	}
	sroce_tm_unlist(tm, e);
	sroce_tm_op_done(srq, op, SROCE_WC_TM_DEL, IB_WC_SUCCESS);
	return 0;
}

static bool sroce_tm_op_valid(const struct sroce_tm_op *op)
{
	if (op->reserved || op->sge.length > SROCE_MAX_MSG_SZ ||
	    (op->flags & ~(u32)(SROCE_TM_OP_SIGNALED | SROCE_TM_OP_SYNC_CNT)))
		return false;
	switch (op->opcode) {
	case SROCE_TM_OP_ADD:
		return op->num_sge <= SROCE_TM_MAX_SGE;
	case SROCE_TM_OP_DEL:
	case SROCE_TM_OP_SYNC:
		return !op->num_sge;
	default:
		return false;
	}
}

/**
 * sroce_tm_op() - execute one tag-matching list operation
 *	(SROCE_METHOD_SRQ_TM_OP)
 * @srq: the SRQ
 * @op: the operation, copied from the process
 * @resp: filled for the process
 *
 * Context: Process context. Takes srq->rq.lock.
 * Return: 0 (a DEL of an entry no longer listed completes in error, but
 * the call succeeds); -EINVAL for a malformed operation or an SRQ that is
 * not a tag-matching one; -ENOMEM when the list is full.
 */
int sroce_tm_op(struct sroce_srq *srq, const struct sroce_tm_op *op,
		struct sroce_tm_op_resp *resp)
{
	unsigned long flags;
	int err = 0;

	if (!srq->tm || !sroce_tm_op_valid(op))
		return -EINVAL;
	spin_lock_irqsave(&srq->rq.lock, flags);
	if (op->flags & SROCE_TM_OP_SYNC_CNT)
		srq->tm->sw_unexp = op->unexpected_cnt;
	switch (op->opcode) {
	case SROCE_TM_OP_ADD:
		err = sroce_tm_add(srq, op, resp);
		break;
	case SROCE_TM_OP_DEL:
		err = sroce_tm_del(srq, op);
		break;
	default:
		sroce_tm_op_done(srq, op, SROCE_WC_TM_SYNC, IB_WC_SUCCESS);
		break;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

/* The oldest entry that takes @tag, while the process is in step. */
static struct sroce_tm_entry *sroce_tm_find(struct sroce_tm *tm, u64 tag)
{
	struct sroce_tm_entry *e;

	if (tm->unexp != tm->sw_unexp)
		return NULL;
	list_for_each_entry(e, &tm->listed, node)
		if (!((e->tag ^ tag) & e->mask))
			return e;
	return NULL;
}

/* Post a receive completion of @qp's on its SRQ's CQ. */
static void sroce_tm_post(struct sroce_qp *qp, struct ib_wc *wc,
			  bool solicited, const struct sroce_wc_tm *info)
{
	wc->qp = &qp->ibqp;
	wc->port_num = SROCE_PORT;
	sroce_cq_post_tm(sroce_tm_cq(qp->srq), wc, solicited, info);
}

/* The match of a message whose data comes later. */
static void sroce_tm_post_match(struct sroce_qp *qp, u64 wr_id)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = SROCE_WC_TM_RECV,
	};
	struct sroce_wc_tm info = {
		.flags = SROCE_WC_TM_MATCH,
		.tag = qp->resp.tm.tag,
		.priv = qp->resp.tm.priv,
	};

	sroce_tm_post(qp, &wc, false, &info);
}

/* The entry's buffer becomes the receive work request of the message. */
static void sroce_tm_use_entry(struct sroce_qp *qp,
			       const struct sroce_tm_entry *e)
{
	struct sroce_rwqe *wqe = &qp->resp.wqe;

	wqe->wr_id = e->recv_wr_id;
	wqe->num_sge = e->num_sge;
	wqe->sge[0] = e->sge;
	wqe->length = e->num_sge ? e->sge.length : 0;
}

/*
 * A rendezvous request an entry can take: one packet, with both headers,
 * within the size announced, and a QP that can send the READ now (RTS,
 * READ credits, room for the device's own work requests).
 */
static bool sroce_tm_rndv_takeable(struct sroce_qp *qp,
				   const struct sroce_pkt *pkt)
{
	lockdep_assert_held(&qp->sq.lock);
	return (pkt->info->flags & SROCE_OPF_START) &&
	       (pkt->info->flags & SROCE_OPF_END) &&
	       pkt->paylen >= SROCE_TM_FIN_LEN &&
	       pkt->paylen <= SROCE_TM_MAX_RNDV_HDR &&
	       READ_ONCE(qp->state) == IB_QPS_RTS && qp->max_rd_atomic &&
	       qp->sq.num_tm < SROCE_TM_QP_WQES &&
	       qp->sq.prod - qp->sq.cons < qp->sq.num_slots;
}

/* Queue a work request of the device's own; the requester sends it. */
static struct sroce_swqe *sroce_tm_queue(struct sroce_qp *qp, u32 opcode,
					 u32 *idx)
{
	struct sroce_swqe *w;

	lockdep_assert_held(&qp->sq.lock);
	*idx = qp->sq.prod++;
	qp->sq.num_tm++;
	w = sroce_sq_wqe(qp, *idx);
	memset(w, 0, sizeof(*w));
	w->opcode = opcode;
	w->flags = SROCE_SWQE_TM;
	return w;
}

/*
 * A matched rendezvous request: the READ of the sender's buffer into the
 * entry's, with the FIN to send after it kept in the READ's inline room.
 * An entry too small takes the request itself instead, to complete with
 * SROCE_WC_TM_RNDV_INCOMPLETE.
 */
static enum sroce_rq_taken sroce_tm_rndv(struct sroce_qp *qp,
					 const struct sroce_pkt *pkt,
					 struct sroce_tm_entry *e)
{
	struct sroce_rvh rvh;
	struct sroce_tmh fin;
	struct sroce_swqe *w;
	u32 idx, len;

	if (sroce_pkt_read(pkt, 0, &fin, sizeof(fin)) ||
	    sroce_pkt_read(pkt, sizeof(fin), &rvh, sizeof(rvh)))
		rvh.len = cpu_to_be32(U32_MAX);	/* too short: incomplete */
	len = be32_to_cpu(rvh.len);
	sroce_tm_use_entry(qp, e);
	if (len > qp->resp.wqe.length) {
		qp->resp.tm.kind = SROCE_TM_RECV_RNDV_INCOMPLETE;
		return SROCE_RQ_TAKEN;
	}
	w = sroce_tm_queue(qp, IB_WR_RDMA_READ, &idx);
	w->wr_id = e->recv_wr_id;
	w->length = len;
	w->num_sge = len ? 1 : 0;
	w->rdma.remote_addr = be64_to_cpu(rvh.va);
	w->rdma.rkey = be32_to_cpu(rvh.rkey);
	*sroce_sq_sges(qp, idx) = e->sge;
	sroce_sq_sges(qp, idx)->length = len;
	fin.opcode = SROCE_TMH_FIN;
	memcpy(sroce_sq_inline(qp, idx), &fin, sizeof(fin));
	memcpy(sroce_sq_inline(qp, idx) + sizeof(fin), &rvh, sizeof(rvh));
	sroce_tm_post_match(qp, e->recv_wr_id);
	qp->resp.tm.kind = SROCE_TM_RECV_PLAIN;
	return SROCE_RQ_HANDLED;
}

/* An eager message an entry took; a long one reports its match now. */
static enum sroce_rq_taken sroce_tm_eager(struct sroce_qp *qp,
					  const struct sroce_pkt *pkt,
					  struct sroce_tm_entry *e)
{
	sroce_tm_use_entry(qp, e);
	qp->resp.tm.skip = sizeof(struct sroce_tmh);
	if (pkt->info->flags & SROCE_OPF_END) {
		qp->resp.tm.kind = SROCE_TM_RECV_EAGER;
		return SROCE_RQ_TAKEN;
	}
	qp->resp.tm.kind = SROCE_TM_RECV_EAGER_SPLIT;
	sroce_tm_post_match(qp, e->recv_wr_id);
	return SROCE_RQ_TAKEN;
}

/*
 * Under the SRQ's lock (and, for a rendezvous request, the send queue's):
 * the entry that takes the message, or an SRQ buffer.
 */
static enum sroce_rq_taken sroce_tm_take_locked(struct sroce_qp *qp,
						const struct sroce_pkt *pkt,
						u8 op)
{
	struct sroce_srq *srq = qp->srq;
	struct sroce_resp_tm *t = &qp->resp.tm;
	struct sroce_tm_entry *e = NULL;
	enum sroce_rq_taken taken;

	lockdep_assert_held(&srq->rq.lock);
	if (op == SROCE_TMH_EAGER ||
	    (op == SROCE_TMH_RNDV && sroce_tm_rndv_takeable(qp, pkt)))
		e = sroce_tm_find(srq->tm, t->tag);
	if (e) {
		taken = op == SROCE_TMH_RNDV ? sroce_tm_rndv(qp, pkt, e) :
					       sroce_tm_eager(qp, pkt, e);
		sroce_tm_unlist(srq->tm, e);
		return taken;
	}
	taken = sroce_srq_take_locked(srq, &qp->resp.wqe);
	if (taken != SROCE_RQ_TAKEN && taken != SROCE_RQ_BAD_WQE)
		return taken;
	if (op == SROCE_TMH_EAGER || op == SROCE_TMH_RNDV) {
		t->kind = SROCE_TM_RECV_UNEXPECTED;
		srq->tm->unexp++;
	} else {
		t->kind = op == SROCE_TMH_NO_TAG ? SROCE_TM_RECV_NO_TAG :
						   SROCE_TM_RECV_PLAIN;
	}
	return taken;
}

/*
 * A rendezvous request: the send queue's lock too, around the SRQ's, so
 * that the entry is taken and its READ queued in one step.
 */
static enum sroce_rq_taken sroce_tm_take_rndv(struct sroce_qp *qp,
					      const struct sroce_pkt *pkt)
{
	enum sroce_rq_taken taken;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	spin_lock(&qp->srq->rq.lock);
	taken = sroce_tm_take_locked(qp, pkt, SROCE_TMH_RNDV);
	spin_unlock(&qp->srq->rq.lock);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return taken;
}

/**
 * sroce_tm_take() - what receives a message arriving through a
 *	tag-matching SRQ
 * @qp: an RC QP of a tag-matching SRQ, between messages
 * @pkt: the message's first packet
 *
 * Sets qp->resp.tm and, unless the message needs no buffer, qp->resp.wqe:
 * an entry's buffer or an SRQ one.  A message that needs a buffer there is
 * none for takes nothing and counts nothing: it will come again.
 *
 * Context: Softirq or process context, bottom halves off. Caller holds
 * qp->resp.lock; takes the SRQ's lock, and for a rendezvous request the
 * send queue's before it.
 * Return: as sroce_rq_take(), or SROCE_RQ_HANDLED for a rendezvous request
 * whose READ is queued.
 */
enum sroce_rq_taken sroce_tm_take(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt)
{
	struct sroce_srq *srq = qp->srq;
	enum sroce_rq_taken taken;
	unsigned long flags;
	struct sroce_tmh tmh;

	qp->resp.tm = (struct sroce_resp_tm){};
	if (!(pkt->info->flags & SROCE_OPF_SEND) || pkt->paylen < sizeof(tmh))
		return sroce_rq_take(&srq->rq, srq, &qp->resp.wqe);
	if (sroce_pkt_read(pkt, 0, &tmh, sizeof(tmh)))
		return sroce_rq_take(&srq->rq, srq, &qp->resp.wqe);
	qp->resp.tm.tag = be64_to_cpu(tmh.tag);
	qp->resp.tm.priv = be32_to_cpu(tmh.app_ctx);
	if (tmh.opcode == SROCE_TMH_RNDV) {
		taken = sroce_tm_take_rndv(qp, pkt);
	} else {
		spin_lock_irqsave(&srq->rq.lock, flags);
		taken = sroce_tm_take_locked(qp, pkt, tmh.opcode);
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	if (taken == SROCE_RQ_HANDLED)
		sroce_qp_sched_req(qp);
	else if (qp->resp.tm.kind != SROCE_TM_RECV_EAGER &&
		 qp->resp.tm.kind != SROCE_TM_RECV_EAGER_SPLIT &&
		 qp->resp.tm.kind != SROCE_TM_RECV_RNDV_INCOMPLETE &&
		 (taken == SROCE_RQ_TAKEN || taken == SROCE_RQ_BAD_WQE))
		sroce_srq_check_limit(srq);
	return taken;
}

/**
 * sroce_tm_recv_post() - complete the receive work request of the message
 *	in progress on a QP of a tag-matching SRQ
 * @qp: the QP
 * @wc: the completion, but for what tag matching says; its qp and wr_id
 *	are set
 * @solicited: the message asked for a solicited event
 *
 * Context: Any context. Caller holds qp->resp.lock.
 */
void sroce_tm_recv_post(struct sroce_qp *qp, struct ib_wc *wc, bool solicited)
{
	struct sroce_resp_tm *t = &qp->resp.tm;
	struct sroce_wc_tm info = {};

	switch (t->kind) {
	case SROCE_TM_RECV_NO_TAG:
		wc->opcode = SROCE_WC_TM_NO_TAG;
		break;
	case SROCE_TM_RECV_UNEXPECTED:
	case SROCE_TM_RECV_EAGER_SPLIT:
		wc->opcode = SROCE_WC_TM_RECV;
		if (t->kind == SROCE_TM_RECV_EAGER_SPLIT)
			info.flags = SROCE_WC_TM_DATA_VALID;
		break;
	case SROCE_TM_RECV_EAGER:
	case SROCE_TM_RECV_RNDV_INCOMPLETE:
		wc->opcode = SROCE_WC_TM_RECV;
		info = (struct sroce_wc_tm){
			.flags = SROCE_WC_TM_MATCH,
			.tag = t->tag,
			.priv = t->priv,
		};
		if (t->kind == SROCE_TM_RECV_EAGER)
			info.flags |= SROCE_WC_TM_DATA_VALID;
		else if (wc->status == IB_WC_SUCCESS)
			wc->status = SROCE_WC_TM_RNDV_INCOMPLETE;
		break;
	default:
		break;
	}
	*t = (struct sroce_resp_tm){};
	sroce_tm_post(qp, wc, solicited, &info);
}

/* After the READ: the FIN, from what the READ's inline room kept. */
static void sroce_tm_queue_fin(struct sroce_qp *qp, u32 read_idx)
{
	struct sroce_swqe *w;
	u32 idx;

	w = sroce_tm_queue(qp, IB_WR_SEND, &idx);
	w->flags |= SROCE_SEND_INLINE;
	w->length = SROCE_TM_FIN_LEN;
	memcpy(sroce_sq_inline(qp, idx), sroce_sq_inline(qp, read_idx),
	       SROCE_TM_FIN_LEN);
	sroce_qp_sched_req(qp);
}

/**
 * sroce_tm_swqe_done() - a work request the device queued itself retired
 *	or flushed
 * @qp: the QP
 * @idx: its index, already behind qp->sq.cons
 *
 * A rendezvous READ that succeeded queues the FIN and completes its entry
 * with SROCE_WC_TM_DATA_VALID; one that failed completes it in error.  A
 * FIN's outcome is not reported (it fails the QP like any other).
 *
 * Context: Any context. Caller holds qp->sq.lock.
 */
void sroce_tm_swqe_done(struct sroce_qp *qp, u32 idx)
{
	struct sroce_swqe *w = sroce_sq_wqe(qp, idx);
	struct sroce_wc_tm info = {};
	struct ib_wc wc = {
		.wr_id = w->wr_id,
		.status = w->status,
		.opcode = SROCE_WC_TM_RECV,
	};

	lockdep_assert_held(&qp->sq.lock);
	qp->sq.num_tm--;
	if (w->opcode != IB_WR_RDMA_READ)
		return;
	if (w->status == IB_WC_SUCCESS) {
		sroce_tm_queue_fin(qp, idx);
		wc.byte_len = w->length;
		info.flags = SROCE_WC_TM_DATA_VALID;
	}
	sroce_tm_post(qp, &wc, false, &info);
}
