// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queue lifetime, basic, XRC and tag-matching, and
 * the operations on a tag-matching SRQ's list of tagged buffers
 * (ibv_post_srq_ops()).  Posting receive WQEs is rq.c's, on the ring
 * mapped here; a tag-matching SRQ's ring takes the messages no tag takes.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/*
 * create_srq_ex attributes the provider honours; PD is required.  The
 * tag-matching capabilities only from a module with SROCE_FEATURE_TM.
 */
#define SROCE_SRQ_COMP_MASK						\
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |		\
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)
#define SROCE_SRQ_COMP_MASK_TM	IBV_SRQ_INIT_ATTR_TM

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

/* May a context with @features create an SRQ of @type? */
static bool srq_type_ok(uint32_t features, enum ibv_srq_type type)
{
	if (type == IBV_SRQT_BASIC)
		return true;
	if (type == IBV_SRQT_XRC)
		return features & SROCE_FEATURE_XRC;
	if (type == IBV_SRQT_TM)
		return features & SROCE_FEATURE_TM;
	return false;
}

/*
 * Return: 0, or EOPNOTSUPP for what the provider cannot serve.  The
 * attributes each type needs (XRCD and CQ; CQ and max_num_tags) are
 * libibverbs' to check, and the limits the kernel's.
 */
static int srq_check_attr_ex(struct ibv_context *ibctx,
			     const struct ibv_srq_init_attr_ex *attr)
{
	uint32_t features = to_sctx(ibctx)->features;
	uint32_t comp_mask = SROCE_SRQ_COMP_MASK;

	if (features & SROCE_FEATURE_TM)
		comp_mask |= SROCE_SRQ_COMP_MASK_TM;
	if (attr->comp_mask & ~comp_mask ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return 0;
	return srq_type_ok(features, attr->srq_type) ? 0 : EOPNOTSUPP;
}

/**
 * sroce_srq_create_ex() - create_srq_ex op
 * @ibctx: context
 * @attr: comp_mask PD (a parent domain as in sroce_srq_create()), TYPE
 *	(basic, XRC or tag-matching), for XRC the XRCD and the CQ its
 *	completions go to, for tag matching the CQ and TM (tm_cap's
 *	max_num_tags, which libibverbs passes to the kernel; max_ops bounds
 *	nothing here, every operation completes in its call); the granted
 *	max_wr and max_sge are written back
 *
 * Context: takes no lock.
 * Return: the new SRQ (an XRC SRQ's number: sroce_srq_get_num()), or NULL
 * with errno set (EOPNOTSUPP for unknown attributes, or XRC or tag
 * matching from a module without them; EPROTO as for sroce_srq_create()).
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

/*
 * The ABI's form of the tag-matching operation @wr (struct sroce_tm_op;
 * opcodes and flags are ibv's numbers, sroce.h checks).
 * Return: 0, or EINVAL for an opcode sroce does not know or an ADD with
 * more SGEs than a tagged buffer holds.
 */
static int srq_tm_op_build(const struct ibv_ops_wr *wr, struct sroce_tm_op *op)
{
	const struct ibv_sge *sge;

	*op = (struct sroce_tm_op){
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.flags = (uint32_t)wr->flags,
		.unexpected_cnt = wr->tm.unexpected_cnt,
	};
	switch (op->opcode) {
	case SROCE_TM_OP_ADD:
		if (wr->tm.add.num_sge < 0 ||
		    wr->tm.add.num_sge > SROCE_TM_MAX_SGE)
			return EINVAL;
		op->recv_wr_id = wr->tm.add.recv_wr_id;
		op->tag = wr->tm.add.tag;
		op->mask = wr->tm.add.mask;
		op->num_sge = (uint32_t)wr->tm.add.num_sge;
		if (op->num_sge) {
			sge = wr->tm.add.sg_list;
			op->sge = (struct sroce_sge){
				.addr = sge->addr,
				.length = sge->length,
				.lkey = sge->lkey,
			};
		}
		return 0;
	case SROCE_TM_OP_DEL:
		op->handle = wr->tm.handle;
		return 0;
	case SROCE_TM_OP_SYNC:
		return 0;
	default:
		return EINVAL;
	}
}

/*
 * SROCE_METHOD_SRQ_TM_OP: the kernel carries out @op on @ibsrq's list
 * before it returns; an ADD's handle comes back in *@handle.
 */
static int srq_tm_op_exec(struct ibv_srq *ibsrq, const struct sroce_tm_op *op,
			  uint32_t *handle)
{
	struct sroce_tm_op_resp resp = {};
	struct ibv_command_buffer *cmd;
	struct sroce_cmdbuf buf;
	int ret;

	cmd = sroce_cmdbuf_init(&buf, UVERBS_OBJECT_SRQ, SROCE_METHOD_SRQ_TM_OP,
				3);
	sroce_cmd_in_obj(cmd, SROCE_ATTR_TM_OP_SRQ, ibsrq->handle);
	sroce_cmd_in_ptr(cmd, SROCE_ATTR_TM_OP_REQ, op, sizeof(*op));
	sroce_cmd_out_ptr(cmd, SROCE_ATTR_TM_OP_RESP, &resp, sizeof(resp));
	ret = execute_ioctl(ibsrq->context, cmd);
	if (ret)
		return ret;
	*handle = resp.handle;
	return 0;
}

/**
 * sroce_srq_post_ops() - post_srq_ops op: add and delete tagged buffers,
 *	report the unexpected messages handled (ibv_post_srq_ops())
 * @ibsrq: a tag-matching SRQ
 * @wr: list of operations: IBV_WR_TAG_ADD (its buffer in at most
 *	SROCE_TM_MAX_SGE SGEs; the handle to delete it by is written back
 *	to tm.handle), IBV_WR_TAG_DEL, IBV_WR_TAG_SYNC
 * @bad_op: set to the first operation not carried out when one fails
 *
 * Each operation is one system call, done when it returns: nothing is
 * outstanding afterwards, and a completion (IBV_OPS_SIGNALED) is already
 * on the SRQ's CQ.  The SRQ's lock is held across the list so that
 * another thread's operations do not come in between, say between a sync
 * and the adds that follow it; its receive WQEs wait meanwhile, as a CQ's
 * pollers wait out a resize.
 *
 * Context: any thread; takes and releases the SRQ's lock.
 * Return: 0; EINVAL for an SRQ that is not tag-matching or an operation
 * the provider or kernel refuses; ENOMEM when the list is full; the
 * kernel's errno otherwise.
 */
int sroce_srq_post_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		       struct ibv_ops_wr **bad_op)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_tm_op op;
	uint32_t handle = 0;
	int ret = 0;

	if (srq->vsrq.srq_type != IBV_SRQT_TM) {
		*bad_op = wr;
		return EINVAL;
	}

	sroce_spin_lock(&srq->rq.lock);
	for (; wr; wr = wr->next) {
		ret = srq_tm_op_build(wr, &op);
		if (!ret)
			ret = srq_tm_op_exec(ibsrq, &op, &handle);
		if (ret) {
			*bad_op = wr;
			break;
		}
		if (op.opcode == SROCE_TM_OP_ADD)
			wr->tm.handle = handle;
	}
	sroce_spin_unlock(&srq->rq.lock);
	return ret;
}
