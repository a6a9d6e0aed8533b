// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq.c - completion queues.
 *
 * The kernel is the producer of every CQ.  A kernel CQ's ring holds struct
 * ib_wc and is consumed by poll_cq; a user CQ's ring holds struct
 * ib_uverbs_wc (in libibverbs' numbering) and is consumed by the process.
 *
 * Completion handlers run from an irq_work, outside every sroce lock, as a
 * hardware CQ's interrupt would call them: the handler may post or poll on
 * the very QP and CQ that completed.
 */
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "sroce.h"

static_assert(sizeof(struct ib_uverbs_wc) % 16 == 0);

static_assert(sizeof(struct sroce_cqe_ts) % 16 == 0);

static_assert(sizeof(struct sroce_cqe_tm) % 16 == 0);

static u32 sroce_cq_slot_size(const struct sroce_cq *cq)
{
	if (!cq->is_user)
		return ALIGN(sizeof(struct ib_wc), 16);
	return sizeof(struct ib_uverbs_wc) +
	       (cq->timestamps ? sizeof(struct sroce_cqe_ts) : 0) +
	       (cq->tm_info ? sizeof(struct sroce_cqe_tm) : 0);
}

/*
 * A user CQ's request: nothing, or struct sroce_create_cq_req.
 * Return: 0, -EOPNOTSUPP for flags sroce does not know, -EINVAL for a
 * reserved field set, or -EFAULT.
 */
static int sroce_cq_user_req(struct sroce_cq *cq, struct ib_udata *udata)
{
	struct sroce_create_cq_req req = {};
	int err;

	err = sroce_udata_in(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.reserved)
		return -EINVAL;
	if (req.flags & ~(u32)(SROCE_CQ_TIMESTAMPS | SROCE_CQ_TM_INFO))
		return -EOPNOTSUPP;
	cq->timestamps = req.flags & SROCE_CQ_TIMESTAMPS;
	cq->tm_info = req.flags & SROCE_CQ_TM_INFO;
	return 0;
}

static void sroce_cq_notify_fn(struct irq_work *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, notify_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * Every QP that completes into @cq fails with IB_EVENT_QP_FATAL: the CQ
 * lost a completion, so their outcomes can no longer all be reported, and
 * a consumer must not go on believing a completion it never sees is still
 * to come.  RoCE HCAs do the same on a CQ overrun.
 */
static void sroce_cq_fail_qps(struct sroce_cq *cq)
{
	struct sroce_dev *sdev = to_sdev(cq->ibcq.device);
	struct sroce_qp_handle *h;
	struct sroce_qp *qp;
	unsigned long qpn;

	rcu_read_lock();
	xa_for_each(&sdev->qp_pool.xa, qpn, h) {
		qp = sroce_qp_handle_get(h);
		if (!qp)
			continue;
		if (qp->scq == cq || qp->rcq == cq)
			sroce_qp_error(qp, IB_EVENT_QP_FATAL);
		sroce_qp_put(qp);
	}
	rcu_read_unlock();
}

/* A completion was lost: IB_EVENT_CQ_ERR, then the QPs feeding the CQ fail. */
static void sroce_cq_event_fn(struct work_struct *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, event_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	sroce_cq_fail_qps(cq);
}

static int sroce_cq_check_size(int cqe)
{
	return cqe >= 1 && cqe <= SROCE_MAX_CQE ? 0 : -EINVAL;
}

/*
 * The ring of a CQ asked for @cqe entries: the power of two above @cqe.
 * The CQ reports one entry less (3 for 2, 7 for 4: what RoCE HCAs and
 * rdma_rxe report), and holds every slot.  Programs written against
 * hardware size CQs loosely, a little under what they post, and rely on
 * getting more than they asked for.
 */
static u32 sroce_cq_slots(int cqe)
{
	return roundup_pow_of_two(cqe + 1);
}

/**
 * sroce_create_cq() - ib_device_ops.create_cq
 * @ibcq: the CQ, allocated by the core
 * @attr: size, completion vector and flags
 * @arg: for a user CQ, its udata (struct sroce_create_cq_req in, optional;
 *	struct sroce_create_cq_resp out), or the uverbs attribute bundle
 *	holding it (include/sroce/compat.h); NULL for a kernel CQ
 *
 * The CQ gets the power of two above @attr->cqe entries and reports one
 * less in ibcq->cqe (sroce_cq_slots()).
 *
 * Context: Process context. May sleep.
 * A user CQ's entries carry their times (struct sroce_cqe_ts) if its
 * request says SROCE_CQ_TIMESTAMPS or @attr has
 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION.
 *
 * Return: 0, -EINVAL for a bad size or a reserved field set, -EOPNOTSUPP
 * for flags (any, for a kernel CQ), -ENOMEM past max_cq or without memory,
 * or -EFAULT.
 */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct sroce_create_cq_arg *arg)
{
	struct ib_udata *udata = sroce_create_cq_udata(arg);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_create_cq_resp resp = {};
	struct sroce_cq *cq = to_scq(ibcq);
	u32 slots;
	int err;

	might_sleep();
	/* Timestamps are for user CQs: struct ib_wc has no room for them. */
	if ((attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) ||
	    (attr->flags && !udata))
		return -EOPNOTSUPP;
	err = sroce_cq_check_size(attr->cqe);
	if (err)
		return err;
	if (udata) {
		err = sroce_cq_user_req(cq, udata);
		if (err)
			return err;
		/* libibverbs asks so for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP. */
		if (attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
			cq->timestamps = true;
	}
	if (atomic_inc_return(&sdev->num_cq) > sdev->attr.max_cq) {
		err = -ENOMEM;
		goto err_dec_count;
	}
	cq->is_user = !!udata;
	spin_lock_init(&cq->lock);
	init_irq_work(&cq->notify_work, sroce_cq_notify_fn);
	INIT_WORK(&cq->event_work, sroce_cq_event_fn);
	slots = sroce_cq_slots(attr->cqe);
	err = sroce_ring_alloc(&cq->ring, sroce_udata_uctx(udata), slots,
			       sroce_cq_slot_size(cq), &resp.ring);
	if (err)
		goto err_dec_count;
	ibcq->cqe = slots - 1;
	if (udata) {
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_free_ring;
	}
	sroce_obj_created(SROCE_OBJ_CQ);
	return 0;

err_free_ring:
	sroce_ring_free(&cq->ring);
err_dec_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

/**
 * sroce_destroy_cq() - ib_device_ops.destroy_cq
 * @ibcq: the CQ; no QP uses it any more (the core checks)
 * @udata: unused
 *
 * Context: Process context. May sleep.
 * Return: 0.
 */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	irq_work_sync(&cq->notify_work);
	cancel_work_sync(&cq->event_work);
	sroce_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	sroce_obj_destroyed(SROCE_OBJ_CQ);
	return 0;
}

/* The consumer index: a user CQ's as the process published it, read once. */
static u32 sroce_cq_cons(struct sroce_cq *cq)
{
	return cq->is_user ? sroce_ring_load_cons(&cq->ring) : cq->ring.cons;
}

/* Entries not yet consumed below @cons; -1 if @cons is impossible. */
static int sroce_cq_count_from(struct sroce_cq *cq, u32 cons)
{
	lockdep_assert_held(&cq->lock);
	if (!sroce_ring_count_valid(&cq->ring, cq->ring.prod, cons))
		return -1;
	return cq->ring.prod - cons;
}

static int sroce_cq_count(struct sroce_cq *cq)
{
	return sroce_cq_count_from(cq, sroce_cq_cons(cq));
}

static u32 sroce_wc_flags_to_user(int flags)
{
	return (flags & IB_WC_GRH ? SROCE_WC_GRH : 0) |
	       (flags & IB_WC_WITH_IMM ? SROCE_WC_WITH_IMM : 0) |
	       (flags & IB_WC_WITH_INVALIDATE ? SROCE_WC_WITH_INV : 0) |
	       (flags & IB_WC_IP_CSUM_OK ? SROCE_WC_IP_CSUM_OK : 0);
}

/*
 * The sl of a user CQE: for a datagram received, its RoCE packet type
 * (enum sroce_wc_sl), which is what RoCE HCAs put there for userspace and
 * what UCX reads; a kernel CQE has the type in network_hdr_type instead.
 */
static u8 sroce_wc_sl_to_user(const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return 0;
	return SROCE_WC_SL_UDP |
	       (wc->network_hdr_type == RDMA_NETWORK_IPV4 ? SROCE_WC_SL_IPV4 :
							    SROCE_WC_SL_IPV6);
}

/* The times of a completion being written (struct sroce_cqe_ts). */
static void sroce_cqe_stamp(struct sroce_cqe_ts *ts)
{
	ts->clock_ns = ktime_get_raw_ns();
	ts->realtime_ns = ktime_get_real_ns();
}

/* A user completion's tag-matching header, after its times if any. */
static void sroce_cqe_tm(const struct sroce_cq *cq, void *slot,
			 const struct sroce_wc_tm *tm)
{
	struct sroce_cqe_tm *cqe_tm;

	if (!cq->tm_info)
		return;
	cqe_tm = slot + sizeof(struct ib_uverbs_wc) +
		 (cq->timestamps ? sizeof(struct sroce_cqe_ts) : 0);
	*cqe_tm = (struct sroce_cqe_tm){
		.tag = tm ? tm->tag : 0,
		.priv = tm ? tm->priv : 0,
	};
}

static void sroce_cq_write(struct sroce_cq *cq, void *slot,
			   const struct ib_wc *wc, const struct sroce_wc_tm *tm)
{
	struct ib_uverbs_wc *uwc = slot;

	if (!cq->is_user) {
		memcpy(slot, wc, sizeof(*wc));
		return;
	}
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	uwc->ex.imm_data = wc->ex.imm_data;
	/* Tag-matching list operations complete on no QP. */
	uwc->qp_num = wc->qp ? wc->qp->qp_num : 0;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = sroce_wc_flags_to_user(wc->wc_flags) |
			(tm ? tm->flags : 0);
	uwc->pkey_index = wc->pkey_index;
	uwc->sl = sroce_wc_sl_to_user(wc);
	uwc->port_num = SROCE_PORT;
	if (cq->timestamps)
		sroce_cqe_stamp(slot + sizeof(*uwc));
	sroce_cqe_tm(cq, slot, tm);
}

static void sroce_cq_overflow(struct sroce_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	sroce_count(to_sdev(cq->ibcq.device), SROCE_CNT_CQ_OVERFLOWS);
	if (cq->overflow)
		return;
	cq->overflow = true;
	queue_work(sroce_wq, &cq->event_work);
}

/**
 * sroce_cq_post_tm() - add a completion that may say something to tag
 *	matching
 * @cq: the CQ
 * @wc: the completion, in kernel terms (its qp is set, but for the
 *	completions of tag-matching list operations)
 * @solicited: the completion is of a solicited message
 * @tm: its tag-matching flags and header, for a user CQ; or NULL
 *
 * Wakes the completion handler if the CQ is armed for it: for any
 * completion, or for a solicited one, which an unsuccessful completion
 * always is (flushed ones included: ULPs armed for solicited completions
 * wait for the flush of their receives to be reported, as RDS does when
 * it shuts a connection down).  A full CQ loses
 * the entry (counted in cq_overflows); the first loss raises
 * IB_EVENT_CQ_ERR and moves every QP feeding the CQ to ERR with
 * IB_EVENT_QP_FATAL, from process context.
 *
 * Context: Any context. Takes cq->lock.
 * Return: true if the entry was added.
 */
bool sroce_cq_post_tm(struct sroce_cq *cq, const struct ib_wc *wc,
		      bool solicited, const struct sroce_wc_tm *tm)
{
	unsigned long flags;
	bool notify = false;
	int count;

	spin_lock_irqsave(&cq->lock, flags);
	count = sroce_cq_count(cq);
	if (count < 0 || count >= cq->ring.num_slots) {
		sroce_cq_overflow(cq);
		spin_unlock_irqrestore(&cq->lock, flags);
		return false;
	}
	sroce_cq_write(cq, sroce_ring_slot(&cq->ring, cq->ring.prod), wc, tm);
	cq->ring.prod++;
	if (cq->is_user)
		sroce_ring_publish_prod(&cq->ring);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (notify)
		irq_work_queue(&cq->notify_work);
	return true;
}

/**
 * sroce_cq_post() - add a completion
 * @cq: the CQ
 * @wc: the completion, in kernel terms (its qp is set)
 * @solicited: the completion is of a solicited message
 *
 * As sroce_cq_post_tm(), with nothing for tag matching.
 *
 * Context: Any context. Takes cq->lock.
 * Return: true if the entry was added.
 */
bool sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc,
		   bool solicited)
{
	return sroce_cq_post_tm(cq, wc, solicited, NULL);
}

/**
 * sroce_poll_cq() - ib_device_ops.poll_cq, for kernel CQs
 * @ibcq: the CQ
 * @num: room in @wc
 * @wc: filled with completions, oldest first
 *
 * Context: Any context. Takes cq->lock.
 * Return: completions returned, or -EINVAL for a user CQ (its process
 * polls the ring).
 */
int sroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n;

	if (cq->is_user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num && cq->ring.cons != cq->ring.prod; n++) {
		memcpy(&wc[n], sroce_ring_slot(&cq->ring, cq->ring.cons),
		       sizeof(*wc));
		cq->ring.cons++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * sroce_cq_clean_qp() - take a destroyed kernel QP's completions out of a
 *	kernel CQ
 * @cq: the CQ, or NULL
 * @ibqp: the QP, which completes nothing any more
 *
 * Unpolled entries of the QP would hand the ULP a wc.qp that the core
 * frees once destroy_qp returns: hardware drivers remove them at destroy,
 * and ULPs count on it (net/smc's completion tasklet, run after the link
 * is gone, read its freed link through one).  The other entries keep
 * their order.  The walk is bounded by the ring, kernel memory.
 *
 * Context: Any context. Takes cq->lock.
 */
void sroce_cq_clean_qp(struct sroce_cq *cq, struct ib_qp *ibqp)
{
	struct ib_wc *wc;
	unsigned long flags;
	u32 r, w;

	if (!cq || cq->is_user)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	for (r = w = cq->ring.cons; r != cq->ring.prod; r++) {
		wc = sroce_ring_slot(&cq->ring, r);
		if (wc->qp == ibqp)
			continue;
		if (w != r)
			memcpy(sroce_ring_slot(&cq->ring, w), wc, sizeof(*wc));
		w++;
	}
	cq->ring.prod = w;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * sroce_req_notify_cq() - ib_device_ops.req_notify_cq
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, and maybe
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * A request with both bits (IB_CQ_SOLICITED_MASK itself, as net/smc arms
 * its receive CQ) arms for the next completion, the wider of the two, as
 * hardware drivers read it: only IB_CQ_SOLICITED alone arms for solicited
 * and unsuccessful completions.
 *
 * Context: Any context. Takes cq->lock.
 * Return: 0, or 1 with IB_CQ_REPORT_MISSED_EVENTS if entries are waiting.
 */
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_NEXT_COMP ? IB_CQ_NEXT_COMP :
			     flags & IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && sroce_cq_count(cq) > 0)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* What "rdma res show cq -dd" shows of a CQ, read under its lock. */
struct sroce_cq_res {
	u32 slots, prod, cons;
	u8 notify;
	bool overflow;
};

static void sroce_cq_res_snapshot(struct sroce_cq *cq, struct sroce_cq_res *r)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	r->slots = cq->ring.num_slots;
	r->prod = cq->ring.prod;
	r->cons = sroce_cq_cons(cq);
	r->notify = cq->notify;
	r->overflow = cq->overflow;
	spin_unlock_irqrestore(&cq->lock, flags);
}

static const char *sroce_cq_armed(u8 notify)
{
	switch (notify) {
	case IB_CQ_NEXT_COMP:
		return "next";
	case IB_CQ_SOLICITED:
		return "solicited";
	default:
		return "no";
	}
}

/**
 * sroce_fill_res_cq_entry() - ib_device_ops.fill_res_cq_entry
 * @msg: the netlink message being built
 * @ibcq: the CQ
 *
 * For "rdma res show cq -dd", beside the size the core shows (cqe, one
 * less than the ring): the ring's slots, its producer and consumer
 * indices (a user CQ's consumer as its process last published it),
 * whether the CQ is armed and for what, whether it has overflowed, and
 * whose ring it is.
 *
 * Context: Process context. Takes cq->lock.
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_cq_res r;
	struct nlattr *table;

	sroce_cq_res_snapshot(cq, &r);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "ring_slots", r.slots) ||
	    rdma_nl_put_driver_u32(msg, "prod", r.prod) ||
	    rdma_nl_put_driver_u32(msg, "cons", r.cons) ||
	    rdma_nl_put_driver_string(msg, "armed", sroce_cq_armed(r.notify)) ||
	    rdma_nl_put_driver_u32(msg, "overflow", r.overflow) ||
	    rdma_nl_put_driver_string(msg, "ring",
				      cq->is_user ? "user" : "kernel")) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* Move the unconsumed entries of @cq into @ring, which then replaces it. */
static int sroce_cq_swap_ring(struct sroce_cq *cq, struct sroce_ring *ring)
{
	u32 cons = sroce_cq_cons(cq), i;
	int count;

	/* One reading of the consumer index, for the count and the copy. */
	count = sroce_cq_count_from(cq, cons);
	if (count < 0 || count > ring->num_slots)
		return -EINVAL;
	for (i = 0; i < count; i++)
		memcpy(sroce_ring_slot(ring, i),
		       sroce_ring_slot(&cq->ring, cons + i),
		       cq->ring.slot_size);
	ring->prod = count;
	ring->cons = 0;
	if (cq->is_user)
		sroce_ring_publish_prod(ring);
	swap(*ring, cq->ring);
	return 0;
}

/**
 * sroce_resize_cq() - ib_device_ops.resize_cq
 * @ibcq: the CQ
 * @cqe: the new size
 * @udata: user CQs: struct sroce_create_cq_resp out, the new ring, whose
 *	indices restart at zero with the unpolled entries moved in
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL for a bad size or one smaller than the entries
 * waiting, -ENOMEM, or -EFAULT.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	struct sroce_ring ring = {};
	unsigned long flags;
	u32 slots;
	int err;

	might_sleep();
	err = sroce_cq_check_size(cqe);
	if (err)
		return err;
	slots = sroce_cq_slots(cqe);
	err = sroce_ring_alloc(&ring, sroce_udata_uctx(udata), slots,
			       cq->ring.slot_size, &resp.ring);
	if (err)
		return err;
	if (udata) {
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto out_free;
	}
	spin_lock_irqsave(&cq->lock, flags);
	err = sroce_cq_swap_ring(cq, &ring);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (!err)
		ibcq->cqe = slots - 1;
out_free:
	/* The old ring after a swap, the unused new one otherwise. */
	sroce_ring_free(&ring);
	return err;
}
