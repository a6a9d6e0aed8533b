// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc.c - eXtended Reliable Connections: XRC domains, the numbers XRC SRQs
 * are found by, and what an XRC target QP's responder needs of the SRQ each
 * request names in its XRCETH: the receive queue, its CQ and its PD.
 *
 * An XRC initiator QP is an RC requester whose requests carry the remote
 * SRQ's number (req.c); an XRC target QP is an RC responder with no queues
 * of its own (resp.c).  The target holds the SRQ a request names while it
 * handles the request (resp.xsrq, with resp.pd its PD): that SRQ must exist,
 * be in the target's XRC domain and, for the later packets of a message, be
 * the SRQ its receive work request came from.  Between packets the target
 * keeps only an SRQ's number and serial (resp.wqe_srqn, a READ resource's
 * xrc_srqn), never a reference: an SRQ destroyed in the middle of a message
 * is gone and the message fails, rather than the destruction waiting on a
 * peer.
 *
 * XRC SRQ lifetime: published under its number when complete; lookups take
 * a reference under RCU; destruction unpublishes, waits an RCU grace
 * period, drops the creation reference and waits for the last one (a
 * request in hand: never longer than one packet's handling).
 */
#include "sroce.h"

/**
 * sroce_alloc_xrcd() - ib_device_ops.alloc_xrcd
 * @ibxrcd: the XRC domain, allocated by the core
 * @udata: a process's domain: no driver data; NULL for kernel callers
 *
 * Context: Process context.
 * Return: 0, or -EINVAL/-EFAULT for driver data sroce does not define.
 */
int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	int err = sroce_udata_none(udata);

	if (err)
		return err;
	to_sxrcd(ibxrcd)->is_user = !!udata;
	sroce_obj_created(SROCE_OBJ_XRCD);
	return 0;
}

/**
 * sroce_dealloc_xrcd() - ib_device_ops.dealloc_xrcd
 * @ibxrcd: the XRC domain; no SRQ or QP is in it any more (the core counts)
 * @udata: unused
 *
 * Context: Process context.
 * Return: 0.
 */
int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	sroce_obj_destroyed(SROCE_OBJ_XRCD);
	return 0;
}

/**
 * sroce_xrc_srq_publish() - give a new XRC SRQ its number
 * @srq: the SRQ, complete; its number is set in ibsrq.ext.xrc.srq_num
 *
 * Context: Process context.
 * Return: 0, or -ENOMEM past max_srq XRC SRQs or without memory.
 */
int sroce_xrc_srq_publish(struct sroce_srq *srq)
{
	struct sroce_dev *sdev = to_sdev(srq->ibsrq.device);
	u32 srqn;
	int err;

	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	err = sroce_pool_add(&sdev->xsrq_pool, srq, &srqn, SROCE_GFP_OBJ);
	if (err)
		return err;
	srq->ibsrq.ext.xrc.srq_num = srqn;
	return 0;
}

static void sroce_xrc_srq_put(struct sroce_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

/**
 * sroce_xrc_srq_unpublish() - take an XRC SRQ's number back and wait until
 *	no target QP holds it
 * @srq: the SRQ
 *
 * Context: Process context. May sleep.
 */
void sroce_xrc_srq_unpublish(struct sroce_srq *srq)
{
	struct sroce_dev *sdev = to_sdev(srq->ibsrq.device);

	might_sleep();
	sroce_pool_remove(&sdev->xsrq_pool, srq->ibsrq.ext.xrc.srq_num);
	synchronize_rcu();
	sroce_xrc_srq_put(srq);
	wait_for_completion(&srq->released);
}

/* The XRC SRQ numbered @srqn, referenced, or NULL. */
static struct sroce_srq *sroce_xrc_srq_get(struct sroce_dev *sdev, u32 srqn)
{
	struct sroce_srq *srq;

	rcu_read_lock();
	srq = sroce_pool_lookup_rcu(&sdev->xsrq_pool, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

/**
 * sroce_xrc_resp_hold() - make an XRC SRQ the one the target's request in
 *	hand receives into and checks keys against
 * @qp: an XRC target QP
 * @srqn: the SRQ's number, from an XRCETH or a responder resource
 * @serial: the serial it must have, or 0 for any
 *
 * The SRQ must exist and be in @qp's XRC domain.  Undone by
 * sroce_xrc_resp_release() before qp->resp.lock is dropped.
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: true if it is held (resp.xsrq, resp.pd); false if there is no
 * such SRQ in the domain.
 */
bool sroce_xrc_resp_hold(struct sroce_qp *qp, u32 srqn, u64 serial)
{
	struct sroce_srq *srq;

	lockdep_assert_held(&qp->resp.lock);
	srq = sroce_xrc_srq_get(sroce_qp_dev(qp), srqn);
	if (!srq)
		return false;
	if (srq->ibsrq.ext.xrc.xrcd != qp->xrcd ||
	    srq->rq.is_user != qp->is_user ||
	    (serial && srq->serial != serial)) {
		sroce_xrc_srq_put(srq);
		return false;
	}
	qp->resp.xsrq = srq;
	qp->resp.pd = srq->ibsrq.pd;
	return true;
}

/**
 * sroce_xrc_res_hold() - hold the SRQ a READ's responder resource was for
 * @qp: the QP answering
 * @res: the resource
 *
 * For anything but an XRC target QP there is nothing to hold.  Undone by
 * sroce_xrc_resp_release().
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: false if the SRQ is gone (another may have its number).
 */
bool sroce_xrc_res_hold(struct sroce_qp *qp, const struct sroce_resp_res *res)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return true;
	return sroce_xrc_resp_hold(qp, res->xrc_srqn, res->xrc_serial);
}

/**
 * sroce_xrc_resp_release() - let go of the SRQ sroce_xrc_resp_hold() held
 * @qp: the QP; nothing is done if it holds none
 *
 * Context: Any context. Caller holds qp->resp.lock.
 */
void sroce_xrc_resp_release(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp.lock);
	if (!qp->resp.xsrq)
		return;
	sroce_xrc_srq_put(qp->resp.xsrq);
	qp->resp.xsrq = NULL;
	qp->resp.pd = NULL;
}

/**
 * sroce_xrc_wqe_taken() - note where the receive work request just taken
 *	from the held SRQ came from
 * @qp: an XRC target QP holding an SRQ
 *
 * Context: Any context. Caller holds qp->resp.lock.
 */
void sroce_xrc_wqe_taken(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp.lock);
	qp->resp.wqe_srqn = qp->resp.xsrq->ibsrq.ext.xrc.srq_num;
	qp->resp.wqe_srq_serial = qp->resp.xsrq->serial;
}

/**
 * sroce_xrc_fail_wqe() - complete an XRC target's receive work request in
 *	progress, in error, on the CQ of the SRQ it came from
 * @qp: an XRC target QP
 * @wc: the completion: status and opcode; wr_id and qp are filled in here
 *
 * If that SRQ is gone, so is the work request: nothing is completed.
 *
 * Context: Any context. Caller holds qp->resp.lock.
 */
void sroce_xrc_fail_wqe(struct sroce_qp *qp, struct ib_wc *wc)
{
	struct sroce_srq *srq;

	lockdep_assert_held(&qp->resp.lock);
	if (!qp->resp.have_wqe)
		return;
	qp->resp.have_wqe = false;
	srq = sroce_xrc_srq_get(sroce_qp_dev(qp), qp->resp.wqe_srqn);
	if (!srq)
		return;
	if (srq->serial == qp->resp.wqe_srq_serial) {
		wc->wr_id = qp->resp.wqe.wr_id;
		wc->qp = &qp->ibqp;
		sroce_cq_post(to_scq(srq->ibsrq.ext.cq), wc, false);
	}
	sroce_xrc_srq_put(srq);
}
