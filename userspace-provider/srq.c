// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queue lifetime.  Posting is rq.c's, on the ring
 * mapped here.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

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

	ret = ibv_cmd_create_srq(ibpd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free_srq;

	ret = sroce_rq_init(&srq->rq, &resp.drv.ring, attr->attr.max_wr,
			    attr->attr.max_sge, ibpd->context->cmd_fd,
			    sroce_pd_single_threaded(ibpd));
	if (ret)
		goto err_destroy_srq;

	sroce_pd_hold(ibpd);
	return &srq->ibv_srq;

err_destroy_srq:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free_srq:
	free(srq);
	errno = ret;
	return NULL;
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
