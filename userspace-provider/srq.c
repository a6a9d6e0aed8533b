// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queue lifetime, basic and XRC.  Posting is rq.c's,
 * on the ring mapped here.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/* create_srq_ex attributes the provider honours; PD is required. */
#define SROCE_SRQ_COMP_MASK						\
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |		\
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/*
 * Map the ring of an SRQ the kernel created in @ibpd (@ret: the create
 * command's result).  On failure the SRQ is destroyed again if the kernel
 * created it, and freed.
 * Return: 0, or the error, with errno set to it.
 */
static int srq_create_finish(struct sroce_srq *srq, int ret,
			     struct ibv_pd *ibpd,
			     const struct ibv_srq_attr *attr,
			     const struct sroce_create_srq_resp *drv)
{
	if (ret)
		goto err_free_srq;
	ret = sroce_rq_init(&srq->rq, &drv->ring, attr->max_wr, attr->max_sge,
			    ibpd->context->cmd_fd,
			    sroce_pd_single_threaded(ibpd));
	if (ret)
		goto err_destroy_srq;
	sroce_pd_hold(ibpd);
	return 0;

err_destroy_srq:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free_srq:
	free(srq);
	errno = ret;
	return ret;
}

/**
 * sroce_srq_create() - create_srq op
 * @ibpd: PD, or parent domain (with a thread domain: the SRQ takes no
 *	locks)
 * @attr: attributes; the granted max_wr and max_sge are written back
 *
 * Context: takes no lock; libibverbs fills the rest of the ibv_srq.
 * Return: the new SRQ, or NULL with errno set (EPROTO when the ring the
 * kernel described cannot hold what it granted; the SRQ is then destroyed
 * again).
 */
struct ibv_srq *sroce_srq_create(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr)
{
	struct sroce_uresp_create_srq resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (srq_create_finish(srq, ret, ibpd, &attr->attr, &resp.drv))
		return NULL;
	return &srq->vsrq.srq;
}

/* Return: 0, or EOPNOTSUPP for what the provider cannot serve. */
static int srq_check_attr_ex(struct ibv_context *ibctx,
			     const struct ibv_srq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)SROCE_SRQ_COMP_MASK ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ||
	    attr->srq_type == IBV_SRQT_BASIC)
		return 0;
	if (attr->srq_type != IBV_SRQT_XRC ||
	    !(to_sctx(ibctx)->features & SROCE_FEATURE_XRC))
		return EOPNOTSUPP;	/* tag matching; XRC of an old module */
	return 0;
}

/**
 * sroce_srq_create_ex() - create_srq_ex op
 * @ibctx: context
 * @attr: comp_mask PD (a parent domain as in sroce_srq_create()), TYPE
 *	(basic or XRC), and for XRC the XRCD and the CQ its completions go
 *	to; the granted max_wr and max_sge are written back
 *
 * Context: takes no lock.
 * Return: the new SRQ (an XRC SRQ's number: sroce_srq_get_num()), or NULL
 * with errno set (EOPNOTSUPP for tag matching, unknown attributes or a
 * module without XRC; EPROTO as for sroce_srq_create()).
 */
struct ibv_srq *sroce_srq_create_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct sroce_uresp_create_srq resp = {};
	struct ibv_create_xsrq cmd = {};
	struct sroce_srq *srq;
	int ret;

	ret = srq_check_attr_ex(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (srq_create_finish(srq, ret, attr->pd, &attr->attr, &resp.drv))
		return NULL;
	/* What libibverbs' ibv_create_srq() fills in, and this path not. */
	srq->vsrq.srq.pd = attr->pd;
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.events_completed = 0;
	return &srq->vsrq.srq;
}

/**
 * sroce_srq_get_num() - get_srq_num op: the number XRC initiators name an
 *	XRC SRQ by
 * @ibsrq: SRQ
 * @srq_num: set to the number
 *
 * Return: 0, or EINVAL for an SRQ that is not XRC.
 */
int sroce_srq_get_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/**
 * sroce_srq_modify() - modify_srq op
 * @ibsrq: SRQ
 * @attr: new max_wr (IBV_SRQ_MAX_WR) and/or srq_limit (IBV_SRQ_LIMIT)
 * @attr_mask: enum ibv_srq_attr_mask
 *
 * The ring cannot change (MODIFY_SRQ returns no new one), so the kernel may
 * refuse IBV_SRQ_MAX_WR; its error is returned as is.  If it accepts, the
 * new max_wr bounds the posted WQEs from then on, never beyond the ring.
 *
 * Context: takes and releases the SRQ lock after a successful resize.
 * Return: 0 or a positive errno.
 */
int sroce_srq_modify(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct sroce_rq *rq = &to_ssrq(ibsrq)->rq;
	struct ibv_modify_srq cmd = {};
	int ret;

	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_SRQ_MAX_WR))
		return ret;

	sroce_spin_lock(&rq->lock);
	rq->max_wr = attr->max_wr < rq->ring.num_slots ?
		     attr->max_wr : rq->ring.num_slots;
	sroce_spin_unlock(&rq->lock);
	return 0;
}

/**
 * sroce_srq_query() - query_srq op
 * @ibsrq: SRQ
 * @attr: filled with max_wr, max_sge and srq_limit
 *
 * Return: 0 or a positive errno.
 */
int sroce_srq_query(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

/**
 * sroce_srq_destroy() - destroy_srq op
 * @ibsrq: SRQ
 *
 * The kernel destroys the SRQ first; only then is its ring unmapped.
 *
 * Return: 0, or a positive errno with the SRQ kept.
 */
int sroce_srq_destroy(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	sroce_pd_put(ibsrq->pd);
	sroce_rq_uninit(&srq->rq);
	free(srq);
	return 0;
}
