// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queues: a receive ring (struct sroce_rq) that any
 * number of QPs consume, serialised by its lock, and the limit event.  XRC
 * SRQs are also found by number (xrc.c) and complete on a CQ of their own;
 * so do tag-matching SRQs, which also keep a list of tagged buffers (tm.c).
 */
#include "sroce.h"

static u32 sroce_srq_slot_size(u32 max_sge)
{
	return ALIGN(sizeof(struct sroce_recv_wqe) +
		     max_sge * sizeof(struct sroce_sge), 16);
}

static void sroce_srq_event_fn(struct work_struct *work)
{
	struct sroce_srq *srq = container_of(work, struct sroce_srq,
					     event_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/*
 * Basic SRQs; XRC SRQs, with their domain and CQ; tag-matching SRQs, with
 * their CQ, for processes only (the kernel has no verb to manage tags).
 */
static int sroce_srq_check_type(const struct ib_srq_init_attr *init,
				const struct ib_udata *udata)
{
	switch (init->srq_type) {
	case IB_SRQT_BASIC:
		return 0;
	case IB_SRQT_XRC:
		return init->ext.xrc.xrcd && init->ext.cq ? 0 : -EINVAL;
	case IB_SRQT_TM:
		if (!udata)
			return -EOPNOTSUPP;
		return init->ext.cq ? 0 : -EINVAL;
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * sroce_create_srq() - ib_device_ops.create_srq
 * @ibsrq: the SRQ, allocated by the core
 * @init: size and limit; attr is updated with what the SRQ really got
 * @udata: user SRQs: struct sroce_create_srq_resp out; NULL for kernel SRQs
 *
 * Basic, XRC and tag-matching SRQs; an XRC SRQ needs its XRC domain and
 * CQ, and gets a number (ibsrq->ext.xrc.srq_num) for initiators to name it
 * by; a tag-matching SRQ (user only) needs its CQ, and gets a list of
 * max_num_tags tagged buffers (tm.c).
 *
 * Context: Process context. May sleep.
 * Return: 0, -EOPNOTSUPP for other types (and kernel tag-matching SRQs),
 * -EINVAL for bad sizes or an XRC or tag-matching SRQ without what it
 * needs, -ENOMEM past max_srq or without memory, or
 * -EFAULT.
 */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_create_srq_resp resp = {};
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	int err;

	might_sleep();
	err = sroce_srq_check_type(init, udata);
	if (err)
		return err;
	if (!attr->max_wr || attr->max_wr > sdev->attr.max_srq_wr ||
	    attr->max_sge > sdev->attr.max_srq_sge ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	err = sroce_udata_none(udata);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_srq) > sdev->attr.max_srq) {
		err = -ENOMEM;
		goto err_dec_count;
	}
	spin_lock_init(&srq->rq.lock);
	INIT_WORK(&srq->event_work, sroce_srq_event_fn);
	srq->rq.max_sge = max(attr->max_sge, 1U);
	srq->rq.is_user = !!udata;
	srq->limit = attr->srq_limit;
	srq->serial = atomic64_inc_return(&sdev->srq_serial);
	err = sroce_ring_alloc(&srq->rq.ring, sroce_udata_uctx(udata),
			       roundup_pow_of_two(attr->max_wr),
			       sroce_srq_slot_size(srq->rq.max_sge),
			       &resp.ring);
	if (err)
		goto err_dec_count;
	attr->max_wr = srq->rq.ring.num_slots;
	attr->max_sge = srq->rq.max_sge;
	if (init->srq_type == IB_SRQT_TM) {
		err = sroce_tm_srq_init(srq,
					init->ext.tag_matching.max_num_tags);
		if (err)
			goto err_free_ring;
	}
	if (init->srq_type == IB_SRQT_XRC) {
		err = sroce_xrc_srq_publish(srq);
		if (err)
			goto err_free_tm;
	}
	if (udata) {
		err = sroce_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_unpublish;
	}
	sroce_obj_created(SROCE_OBJ_SRQ);
	return 0;

err_unpublish:
	if (init->srq_type == IB_SRQT_XRC)
		sroce_xrc_srq_unpublish(srq);
err_free_tm:
	sroce_tm_srq_free(srq);
err_free_ring:
	sroce_ring_free(&srq->rq.ring);
err_dec_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

/**
 * sroce_modify_srq() - ib_device_ops.modify_srq
 * @ibsrq: the SRQ
 * @attr: the new limit
 * @mask: IB_SRQ_LIMIT; resizing (IB_SRQ_MAX_WR) is not supported
 * @udata: no driver data
 *
 * Context: Process context.
 * Return: 0, -EOPNOTSUPP for a resize, -EINVAL for a limit past the size or
 * an unknown mask bit.
 */
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err;

	err = sroce_udata_none(udata);
	if (err)
		return err;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.ring.num_slots)
			return -EINVAL;
		WRITE_ONCE(srq->limit, attr->srq_limit);
		sroce_srq_check_limit(srq);
	}
	return 0;
}

/**
 * sroce_query_srq() - ib_device_ops.query_srq
 * @ibsrq: the SRQ
 * @attr: filled
 *
 * Context: Process context.
 * Return: 0.
 */
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.ring.num_slots;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/**
 * sroce_destroy_srq() - ib_device_ops.destroy_srq
 * @ibsrq: the SRQ; no QP uses it any more (the core checks).  An XRC SRQ
 *	is unpublished first, and waited for until no target QP holds it.
 * @udata: unused
 *
 * Context: Process context. May sleep.
 * Return: 0.
 */
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (ibsrq->srq_type == IB_SRQT_XRC)
		sroce_xrc_srq_unpublish(srq);
	cancel_work_sync(&srq->event_work);
	sroce_tm_srq_free(srq);
	sroce_ring_free(&srq->rq.ring);
	atomic_dec(&to_sdev(ibsrq->device)->num_srq);
	sroce_obj_destroyed(SROCE_OBJ_SRQ);
	return 0;
}

/**
 * sroce_srq_check_limit() - raise IB_EVENT_SRQ_LIMIT_REACHED once the
 *	queue holds fewer work requests than the armed limit
 * @srq: the SRQ
 *
 * The limit disarms itself (becomes 0) when it fires.
 *
 * Context: Any context.
 */
void sroce_srq_check_limit(struct sroce_srq *srq)
{
	u32 limit = READ_ONCE(srq->limit);

	if (!limit || sroce_rq_count(&srq->rq) >= limit)
		return;
	if (cmpxchg(&srq->limit, limit, 0) == limit)
		queue_work(sroce_wq, &srq->event_work);
}
