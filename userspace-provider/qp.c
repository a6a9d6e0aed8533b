// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pair lifetime: create (legacy and extended), open (XRC),
 * modify, query, destroy.  The send queue and receive queue rings are
 * mapped at create time (sq.c, rq.c) and unmapped after the kernel has
 * destroyed the QP.  An XRC send QP has a send ring only; an XRC receive
 * QP, created or opened, has no ring: it receives into the XRC SRQs its
 * peer's requests name.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/*
 * create_qp_ex attributes the provider honours; CREATE_FLAGS only with no
 * flag set.
 */
#define SROCE_QP_COMP_MASK						\
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |			\
	 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS)

/*
 * Return: 0, or EOPNOTSUPP for a QP type the provider does not serve (XRC
 * from a module without it; an XRC receive QP, which needs an XRC domain,
 * from the legacy create).
 */
static int qp_check_type(struct ibv_context *ibctx, enum ibv_qp_type qp_type,
			 bool ex)
{
	bool xrc = to_sctx(ibctx)->features & SROCE_FEATURE_XRC;

	if (qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC ||
	    qp_type == IBV_QPT_UD)
		return 0;
	if (qp_type == IBV_QPT_XRC_SEND && xrc)
		return 0;
	if (qp_type == IBV_QPT_XRC_RECV && xrc && ex)
		return 0;
	return EOPNOTSUPP;
}

/* A QP with no receive ring: on an SRQ, or XRC. */
static bool qp_no_rq(const struct ibv_qp *ibqp)
{
	return ibqp->srq || ibqp->qp_type == IBV_QPT_XRC_SEND ||
	       ibqp->qp_type == IBV_QPT_XRC_RECV;
}

/*
 * Map the rings the kernel created for a new QP of @ibctx, sized by the
 * limits it granted in @cap: none for what qp_no_rq() says, or for an XRC
 * receive QP's send queue (the kernel grants it none).  A QP of a thread
 * domain (@single) takes no locks.
 */
static int qp_init_queues(struct sroce_qp *qp, struct ibv_context *ibctx,
			  bool single, const struct ibv_qp_cap *cap,
			  const struct sroce_create_qp_resp *drv)
{
	static const struct sroce_ring_info no_ring;
	int cmd_fd = ibctx->cmd_fd;
	int ret;

	ret = sroce_sq_init(&qp->sq, &drv->sq, cap, cmd_fd, single);
	if (ret)
		return ret;

	if (qp_no_rq(&qp->vqp.qp))
		ret = sroce_rq_init(&qp->rq, &no_ring, 0, 0, cmd_fd, single);
	else
		ret = sroce_rq_init(&qp->rq, &drv->rq, cap->max_recv_wr,
				    cap->max_recv_sge, cmd_fd, single);
	if (ret)
		goto err_uninit_sq;
	return 0;

err_uninit_sq:
	sroce_sq_uninit(&qp->sq);
	return ret;
}

/*
 * A zeroed QP for a creation whose attributes checked out (@check 0);
 * NULL with errno set to @check when they did not, or to ENOMEM.
 */
static struct sroce_qp *qp_alloc(int check)
{
	if (check) {
		errno = check;
		return NULL;
	}
	return calloc(1, sizeof(struct sroce_qp));
}

/*
 * The rest of a creation once the kernel's create command has run (@ret,
 * its result): map the rings the kernel described.  On failure the QP is
 * destroyed again if the kernel created it, and freed.  @ibpd is NULL for
 * an XRC receive QP, which has none.
 * Return: 0, or the error, with errno set to it.
 */
static int qp_create_finish(struct sroce_qp *qp, int ret,
			    struct ibv_context *ibctx, struct ibv_pd *ibpd,
			    const struct ibv_qp_cap *cap,
			    const struct sroce_create_qp_resp *drv)
{
	if (ret)
		goto err_free_qp;
	ret = qp_init_queues(qp, ibctx,
			     ibpd && sroce_pd_single_threaded(ibpd), cap, drv);
	if (ret)
		goto err_destroy_qp;
	if (ibpd)
		sroce_pd_hold(ibpd);
	return 0;

err_destroy_qp:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free_qp:
	free(qp);
	errno = ret;
	return ret;
}

/**
 * sroce_qp_create() - create_qp op
 * @ibpd: PD, or parent domain (with a thread domain: the QP takes no
 *	locks)
 * @attr: attributes; the granted caps are written back to @attr->cap
 *
 * Context: takes no lock.
 * Return: the new QP, or NULL with errno set (EOPNOTSUPP for QP types other
 * than RC, UC, UD and XRC send; EPROTO when the rings the kernel described
 * cannot hold what it granted, the QP then being destroyed again).
 */
struct ibv_qp *sroce_qp_create(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr)
{
	struct sroce_uresp_create_qp resp = {};
	struct ibv_create_qp cmd = {};
	struct sroce_qp *qp;
	int ret;

	qp = qp_alloc(qp_check_type(ibpd->context, attr->qp_type, false));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (qp_create_finish(qp, ret, ibpd->context, ibpd, &attr->cap,
			     &resp.drv))
		return NULL;
	return &qp->vqp.qp;
}

/* Return: 0, or EOPNOTSUPP for what the provider cannot serve. */
static int qp_check_attr_ex(struct ibv_context *ibctx,
			    const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)SROCE_QP_COMP_MASK)
		return EOPNOTSUPP;
	if (qp_check_type(ibctx, attr->qp_type, true))
		return EOPNOTSUPP;
	/* An XRC receive QP lives in an XRC domain, every other in a PD. */
	if (attr->qp_type == IBV_QPT_XRC_RECV ?
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) :
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return sroce_wr_check_ops(to_sctx(ibctx), attr->qp_type,
					  attr->send_ops_flags);
	return 0;
}

/**
 * sroce_qp_create_ex() - create_qp_ex op, the way to the ibv_wr_* API
 * @ibctx: context
 * @attr: attributes: comp_mask PD (a parent domain as in
 *	sroce_qp_create()), or XRCD for an XRC receive QP, optionally
 *	SEND_OPS_FLAGS with the opcodes of wr.c; the granted caps are written
 *	back to @attr->cap
 *
 * With IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP offers struct ibv_qp_ex
 * (ibv_qp_to_qp_ex()).  This is what ties the binary to the rdma-core
 * release it was built against (struct verbs_qp, verbs-private.h).
 *
 * Context: takes no lock.
 * Return: the new QP, or NULL with errno set (EOPNOTSUPP for attributes,
 * QP types or send opcodes the provider does not support; EINVAL without
 * the PD or XRC domain the type needs; EPROTO as for sroce_qp_create()).
 */
struct ibv_qp *sroce_qp_create_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_uresp_create_qp resp = {};
	struct ibv_qp_init_attr_ex core_attr;
	struct ibv_create_qp cmd = {};
	struct sroce_qp *qp;
	int ret;

	qp = qp_alloc(qp_check_attr_ex(ibctx, attr));
	if (!qp)
		return NULL;

	/*
	 * ibv_cmd_create_qp_ex() refuses IBV_QP_INIT_ATTR_CREATE_FLAGS even
	 * with no flags set, which is all this provider accepts.
	 */
	core_attr = *attr;
	core_attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &core_attr, &cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	attr->cap = core_attr.cap;
	if (qp_create_finish(qp, ret, ibctx,
			     attr->qp_type == IBV_QPT_XRC_RECV ? NULL : attr->pd,
			     &attr->cap, &resp.drv))
		return NULL;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		sroce_wr_init(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;
}

/*
 * After a move to RESET the kernel may have rewritten the ring indices this
 * process owns (the ABI leaves it open); take them back from the mapping.
 */
static void qp_resync_rings(struct sroce_qp *qp)
{
	sroce_spin_lock(&qp->sq.lock);
	sroce_ring_resync(&qp->sq.ring);
	sroce_spin_unlock(&qp->sq.lock);

	sroce_spin_lock(&qp->rq.lock);
	sroce_ring_resync(&qp->rq.ring);
	sroce_spin_unlock(&qp->rq.lock);
}

/*
 * The rate limit travels in the extended command only (the legacy one
 * stops at the standard attributes); everything else in the legacy one,
 * as before.
 */
static int qp_modify_cmd(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int attr_mask)
{
	struct ib_uverbs_ex_modify_qp_resp resp;
	struct ibv_modify_qp_ex cmd_ex = {};
	struct ibv_modify_qp cmd = {};

	if (!(attr_mask & IBV_QP_RATE_LIMIT))
		return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd,
					 sizeof(cmd));
	return ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &cmd_ex,
				    sizeof(cmd_ex), &resp, sizeof(resp));
}

/**
 * sroce_qp_modify_rate_limit() - modify_qp_rate_limit op
 * @ibqp: an RC, UC or UD QP
 * @attr: the limit in kb/s (0: none), between SROCE_RATE_LIMIT_MIN_KBPS
 *	and SROCE_RATE_LIMIT_MAX_KBPS; the burst and packet size hints are
 *	not used (sroce-abi.h)
 *
 * Return: 0, EINVAL for a limit out of range or a comp_mask this provider
 * does not know, or another positive errno from the kernel.
 */
int sroce_qp_modify_rate_limit(struct ibv_qp *ibqp,
			       struct ibv_qp_rate_limit_attr *attr)
{
	struct ibv_qp_attr qp_attr = { .rate_limit = attr->rate_limit };

	if (attr->comp_mask)
		return EINVAL;
	return qp_modify_cmd(ibqp, &qp_attr, IBV_QP_RATE_LIMIT);
}

/**
 * sroce_qp_modify() - modify_qp op
 * @ibqp: QP
 * @attr: new attributes
 * @attr_mask: enum ibv_qp_attr_mask, which of @attr to apply
 *
 * After a move to RESET the QP's unpolled completions are discarded
 * (sroce_cq_discard_qp()).
 *
 * Context: takes the SQ and RQ locks, then the CQs' locks, one after the
 * other, after a move to RESET.
 * Return: 0 or a positive errno.
 */
int sroce_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	int ret;

	ret = qp_modify_cmd(ibqp, attr, attr_mask);
	if (ret)
		return ret;

	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		qp_resync_rings(to_sqp(ibqp));
		if (ibqp->send_cq)
			sroce_cq_discard_qp(ibqp->send_cq, ibqp->qp_num);
		if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
			sroce_cq_discard_qp(ibqp->recv_cq, ibqp->qp_num);
	}
	return 0;
}

/**
 * sroce_qp_query() - query_qp op
 * @ibqp: QP
 * @attr: filled with the attributes asked for
 * @attr_mask: enum ibv_qp_attr_mask
 * @init_attr: filled with the creation attributes (caps as granted)
 *
 * Return: 0 or a positive errno.
 */
int sroce_qp_query(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/**
 * sroce_qp_destroy() - destroy_qp op
 * @ibqp: QP
 *
 * The kernel destroys the QP first; only then are its rings unmapped.
 *
 * Return: 0, or a positive errno with the QP kept.
 */
int sroce_qp_destroy(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	if (ibqp->qp_type != IBV_QPT_XRC_RECV)
		sroce_pd_put(ibqp->pd);
	sroce_rq_uninit(&qp->rq);
	sroce_sq_uninit(&qp->sq);
	free(qp);
	return 0;
}

/**
 * sroce_qp_open() - open_qp op: another handle on an XRC receive QP
 * @ibctx: context
 * @attr: comp_mask NUM | XRCD | TYPE (IBV_QPT_XRC_RECV), optionally
 *	CONTEXT: the QP's number and its XRC domain
 *
 * The handle has no ring, like the QP (qp.c's header); modify, query and
 * destroy act on it as on the QP it names, which lives while any handle
 * does.
 *
 * Context: takes no lock.
 * Return: the handle, or NULL with errno set (EOPNOTSUPP for a module
 * without XRC; the kernel's error).
 */
struct ibv_qp *sroce_qp_open(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct sroce_create_qp_resp no_rings = {};
	struct ibv_open_qp cmd = {};
	struct ibv_qp_cap cap = {};
	struct sroce_qp *qp;
	int ret;

	qp = qp_alloc(qp_check_type(ibctx, IBV_QPT_XRC_RECV, true));
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (qp_create_finish(qp, ret, ibctx, NULL, &cap, &no_rings))
		return NULL;
	return &qp->vqp.qp;
}
