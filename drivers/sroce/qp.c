// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs: creation and their queues, lookups and references,
 * queries, and destruction.  The state machine of modify_qp, errors on
 * the data path and flushing are in qp_state.c.
 *
 * XRC: an initiator QP has a send queue only; a target QP (created by the
 * core for the process, without driver data) has no queue at all and
 * receives into the XRC SRQs its requests name (xrc.c).
 *
 * Lifetime.  A QP is published under its number (sroce_dev.qp_pool) when
 * it is complete; the number maps to the QP's handle (struct
 * sroce_qp_handle), which holds its references.  The receive path finds
 * the handle under RCU and takes a reference (sroce_qp_get_rcu()); every
 * scheduled work item holds one too.  Destruction: mark dead under both QP
 * locks (nothing new is scheduled or armed after that), unpublish, stop
 * the timers and work, drop the creation reference and wait for the last
 * one, unbind the type 2 memory windows bound through the QP (mw.c), free
 * the queues, and leave the handle to be freed after a grace period
 * (a lookup that found it before it was unpublished may still read its
 * count).  The core frees the struct.  A user QP's destroy waits for no
 * grace period: a process holding 10,000 QPs exits in a second or two.  A
 * kernel QP's unpolled completions are taken out of its CQs, and its
 * destroy waits for one, for the ULP's softirq completion handlers
 * (sroce_destroy_qp()).
 */
#include <linux/hash.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "hdr.h"
#include "sroce.h"

static u32 sroce_sq_slot_size(u32 max_sge, u32 max_inline)
{
	u32 body = max(max_sge * (u32)sizeof(struct sroce_sge), max_inline);

	return ALIGN(sizeof(struct sroce_send_wqe) + body, 64);
}

/*
 * Inline bytes a send queue grants when @max_inline were asked for: all
 * the room a slot has past the WQE header (its SGEs' room may be larger),
 * up to SROCE_MAX_INLINE; for a kernel QP none if none were asked for
 * (ULPs that post no inline data are spared the kernel copy's memory).
 * HCAs and rdma_rxe grant such room too, and programs count on it: UCX's
 * rc_verbs asks for 64 bytes and sends short messages of up to what it
 * gets, less its header; librdmacm's rdma_xclient asks for none and sends
 * its 16 bytes inline.
 */
static u32 sroce_sq_inline_room(u32 max_sge, u32 max_inline, bool is_user)
{
	if (!max_inline && !is_user)
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

/*
 * A QP of a tag-matching SRQ queues work requests of its own (tm.c): its
 * send queue has SROCE_TM_QP_WQES slots more than its ring, and inline
 * room for a FIN.
 */
static bool sroce_init_tm(const struct ib_qp_init_attr *init)
{
	return init->srq && to_ssrq(init->srq)->tm;
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
	case IB_QPT_XRC_INI:
		/* A kernel work request cannot name the remote SRQ. */
		if (!is_user)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		if (!init->xrcd)
			return -EINVAL;
		/* No queues: what the caller asked for is not used. */
		memset(&init->cap, 0, sizeof(init->cap));
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* Tag matching is defined for RC only. */
	if (sroce_init_tm(init) && init->qp_type != IB_QPT_RC)
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
	u32 max_inline = init->cap.max_inline_data;
	int err;

	spin_lock_init(&sq->lock);
	sq->num_slots = slots;
	if (sroce_init_tm(init)) {
		sq->num_slots = roundup_pow_of_two(slots + SROCE_TM_QP_WQES);
		max_inline = max_t(u32, max_inline, sizeof(struct sroce_tmh) +
						    sizeof(struct sroce_rvh));
	}
	sq->max_sge = max(init->cap.max_send_sge, 1U);
	sq->max_inline = sroce_sq_inline_room(sq->max_sge, max_inline, !!uctx);
	sq->wqe = kvcalloc(sq->num_slots, sizeof(*sq->wqe), SROCE_GFP_SIZED);
	sq->sges = kvcalloc((size_t)sq->num_slots * sq->max_sge,
			    sizeof(*sq->sges), SROCE_GFP_SIZED);
	if (sq->max_inline)
		sq->inline_data = kvzalloc((size_t)sq->num_slots *
					   sq->max_inline, SROCE_GFP_SIZED);
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
	atomic_set(&qp->mw2_bound, 0);
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->resp.lock);
	qp->state = IB_QPS_RESET;
	qp->is_user = is_user;
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->resp.pd = qp->ibqp.pd;
	if (init->qp_type == IB_QPT_XRC_TGT) {
		qp->xrcd = init->xrcd;
		qp->is_user = to_sxrcd(init->xrcd)->is_user;
	}
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->pmtu = 256;
	INIT_WORK(&qp->req_work, sroce_req_work);
	INIT_WORK(&qp->resp.work, sroce_resp_work);
	INIT_WORK(&qp->fault.work, sroce_odp_fault_work);
	timer_setup(&qp->retrans_timer, sroce_comp_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, sroce_comp_rnr_timer, 0);
	sroce_cc_qp_init(qp);
}

static int sroce_qp_alloc_queues(struct sroce_qp *qp,
				 struct ib_qp_init_attr *init,
				 struct ib_ucontext *uctx,
				 struct sroce_create_qp_resp *resp)
{
	int err;

	err = sroce_sq_alloc(qp, init, uctx, &resp->sq);
	if (err)
		return err;
	if (!qp->srq && init->qp_type != IB_QPT_XRC_INI &&
	    init->qp_type != IB_QPT_XRC_TGT) {
		err = sroce_rq_alloc(&qp->rq, init->cap.max_recv_wr,
				     init->cap.max_recv_sge, uctx, &resp->rq);
		if (err)
			return err;
	}
	sroce_resp_reset(qp);
	return dst_cache_init(&qp->dst_cache, SROCE_GFP_OBJ);
}

static int sroce_qp_handle_new(struct sroce_qp *qp)
{
	struct sroce_qp_handle *h = kmalloc(sizeof(*h), SROCE_GFP_OBJ);

	if (!h)
		return -ENOMEM;
	refcount_set(&h->ref, 1);
	h->qp = qp;
	qp->handle = h;
	init_completion(&qp->released);
	return 0;
}

/*
 * Drop the creation reference, wait for the last one, and free the handle
 * once the lookups that may have found it are over.  The QP is unpublished.
 */
static void sroce_qp_handle_release(struct sroce_qp *qp)
{
	sroce_qp_put(qp);
	wait_for_completion(&qp->released);
	kfree_rcu(qp->handle, rcu);
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
	/* An XRC target's send queue is never used: it has none to report. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return;
	init->cap.max_send_wr = qp->sq.ring.buf ? qp->sq.ring.num_slots :
						  qp->sq.num_slots;
	init->cap.max_send_sge = qp->sq.max_sge;
	init->cap.max_inline_data = qp->sq.max_inline;
	if (sroce_qp_has_rq(qp)) {
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
		err = sroce_pool_insert(&sdev->qp_pool, qp->handle, SROCE_GSI_QPN,
					SROCE_GFP_OBJ);
		qpn = SROCE_GSI_QPN;
	} else {
		err = sroce_pool_add(&sdev->qp_pool, qp->handle, &qpn,
				     SROCE_GFP_OBJ);
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
 *	and XRC target QPs
 *
 * RC, UC and UD; for kernel callers the GSI QP (number 1); for processes
 * XRC initiator QPs (no receive queue); XRC target QPs (no queues; the
 * core creates them for processes too, as kernel QPs in an XRC domain).
 * Queue sizes are rounded up to powers of two.
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
	err = sroce_qp_handle_new(qp);
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
	/* The QP is in RESET: a packet that found it only drops its ref. */
	sroce_pool_remove(&sdev->qp_pool, qp->ibqp.qp_num);
err_free_queues:
	sroce_qp_handle_release(qp);
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
	struct sroce_qp_handle *h = sroce_pool_lookup_rcu(&sdev->qp_pool, qpn);

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "QP lookup outside RCU");
	return h ? sroce_qp_handle_get(h) : NULL;
}

/**
 * sroce_qp_handle_get() - take a reference to the QP of a handle
 * @h: the handle, found under RCU (the pool, a multicast member)
 *
 * Context: Any context; the caller holds rcu_read_lock().
 * Return: the QP, or NULL if it is being destroyed.
 */
struct sroce_qp *sroce_qp_handle_get(struct sroce_qp_handle *h)
{
	return refcount_inc_not_zero(&h->ref) ? h->qp : NULL;
}

/**
 * sroce_qp_put() - drop a QP reference
 * @qp: the QP
 *
 * Context: Any context.
 */
void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->handle->ref))
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
	sroce_qp_get(qp);
	if (!queue_work(sroce_wq, &qp->req_work))
		sroce_qp_put(qp);
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
	attr->rate_limit = READ_ONCE(qp->cc.limit_kbps);
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    qp->sq.cons != qp->sq.prod;
	if (sroce_qp_connected(qp))
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
	u32 sq_prod, sq_cons, head_state, epsn;
	u32 rq_prod, rq_cons;
	bool have_rq, have_wqe;
	struct sroce_req req;
	struct sroce_comp comp;
	struct sroce_cc_res cc;
};

/*
 * The QP's own receive queue: the producer index as the consumer reads it
 * (published by the process, or by post_recv), and the consumer's.
 */
static void sroce_qp_res_rq(struct sroce_qp *qp, struct sroce_qp_res *r)
{
	lockdep_assert_held(&qp->resp.lock);
	r->have_rq = sroce_qp_has_rq(qp);
	if (!r->have_rq)
		return;
	r->rq_prod = sroce_ring_load_prod(&qp->rq.ring);
	r->rq_cons = qp->rq.ring.cons;
}

static void sroce_qp_res_snapshot(struct sroce_qp *qp, struct sroce_qp_res *r)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	r->sq_prod = qp->sq.prod;
	r->sq_cons = qp->sq.cons;
	r->req = qp->req;
	r->comp = qp->comp;
	r->head_state = qp->sq.cons == qp->sq.prod ? U32_MAX :
			sroce_sq_wqe(qp, qp->sq.cons)->state;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	spin_lock_bh(&qp->resp.lock);
	r->epsn = qp->resp.epsn;
	r->have_wqe = qp->resp.have_wqe;
	sroce_qp_res_rq(qp, r);
	spin_unlock_bh(&qp->resp.lock);
	sroce_cc_res(qp, &r->cc);
}

/* The rates: paced to, limited to, DCQCN's current and target, alpha. */
static int sroce_qp_res_put_cc(struct sk_buff *msg,
			       const struct sroce_qp_res *r)
{
	if (rdma_nl_put_driver_u32(msg, "rate_kbps", r->cc.pace_kbps) ||
	    rdma_nl_put_driver_u32(msg, "rate_limit_kbps", r->cc.limit_kbps) ||
	    rdma_nl_put_driver_u32(msg, "cc_rate_kbps", r->cc.rc_kbps) ||
	    rdma_nl_put_driver_u32(msg, "cc_target_kbps", r->cc.rt_kbps) ||
	    rdma_nl_put_driver_u32(msg, "cc_alpha", r->cc.alpha))
		return -EMSGSIZE;
	return 0;
}

/* The receive side's part of the QP's entry. */
static int sroce_qp_res_put_rq(struct sk_buff *msg,
			       const struct sroce_qp_res *r)
{
	if (rdma_nl_put_driver_u32(msg, "recv_in_progress", r->have_wqe))
		return -EMSGSIZE;
	if (!r->have_rq)
		return 0;
	if (rdma_nl_put_driver_u32(msg, "rq_prod", r->rq_prod) ||
	    rdma_nl_put_driver_u32(msg, "rq_cons", r->rq_cons))
		return -EMSGSIZE;
	return 0;
}

/**
 * sroce_fill_res_qp_entry() - ib_device_ops.fill_res_qp_entry
 * @msg: the netlink message being built
 * @ibqp: the QP
 *
 * The requester's and completer's positions, for "rdma res show qp -dd":
 * what to look at when a QP seems stuck.  Beside the state and PSNs the
 * core shows: the send queue's indices and the send work requests
 * outstanding between them (posted, or for a user QP fetched from its
 * ring, and not yet completed), where the
 * requester and completer stand, the retries left, and the receive
 * queue's indices (a QP on an SRQ has none of its own) and whether a
 * receive is being filled; and its rates (cc.c), in kb/s: rate_kbps, what
 * the pacer holds it to (0: not paced), rate_limit_kbps (0: none), and
 * DCQCN's cc_rate_kbps and cc_target_kbps (the maximum while not cut) with
 * cc_alpha in 1/1024ths.
 *
 * Context: Process context. Takes qp->sq.lock, qp->resp.lock, qp->cc.lock.
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
	    rdma_nl_put_driver_u32(msg, "sq_wrs", r.sq_prod - r.sq_cons) ||
	    rdma_nl_put_driver_u32(msg, "req_idx", r.req.idx) ||
	    rdma_nl_put_driver_u32_hex(msg, "req_psn", r.req.psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "max_psn", r.req.max_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "comp_psn", r.comp.psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "epsn", r.epsn) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic", r.req.rd_atomic) ||
	    rdma_nl_put_driver_u32(msg, "retry_left", r.comp.retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_left", r.comp.rnr_left) ||
	    rdma_nl_put_driver_u32(msg, "head_wqe_state", r.head_state) ||
	    rdma_nl_put_driver_u32(msg, "stalled", r.req.stalled) ||
	    rdma_nl_put_driver_u32(msg, "retry", r.req.retry) ||
	    rdma_nl_put_driver_u32(msg, "rnr_wait", r.comp.rnr_wait) ||
	    sroce_qp_res_put_rq(msg, &r) || sroce_qp_res_put_cc(msg, &r)) {
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
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	sroce_cc_qp_stop(qp);
	if (cancel_work_sync(&qp->req_work))
		sroce_qp_put(qp);
	if (cancel_work_sync(&qp->event_work))
		sroce_qp_put(qp);
	if (cancel_work_sync(&qp->resp.work))
		sroce_qp_put(qp);
	sroce_odp_fault_cancel(qp);
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
	sroce_qp_handle_release(qp);
	if (!qp->is_user) {
		sroce_cq_clean_qp(qp->scq, ibqp);
		if (qp->rcq != qp->scq)
			sroce_cq_clean_qp(qp->rcq, ibqp);
		/*
		 * A ULP's completion handler running in softirq (net/smc's
		 * tasklet) may still work on entries of the QP it polled
		 * before the clean: let it finish before the core frees the
		 * QP.  Kernel ULPs destroy few QPs; processes, which may
		 * destroy thousands, poll their own rings and skip this.
		 */
		synchronize_rcu();
	}
	sroce_mw_qp_destroyed(qp);
	sroce_resp_reset(qp);
	sroce_qp_free_queues(qp);
	mutex_destroy(&qp->modify_lock);
	sroce_obj_destroyed(SROCE_OBJ_QP);
	sroce_dbg_qp(qp, "destroyed\n");
	return 0;
}
