// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq.c - completion queues: a ring the kernel fills with struct
 * ib_uverbs_wc and the process empties without a system call, through
 * ibv_poll_cq() or the ibv_cq_ex start/next/end_poll API.  Arming
 * (req_notify_cq) is the plain REQ_NOTIFY_CQ command, in sroce.c's ops.
 *
 * A slot is the struct ib_uverbs_wc, then a struct sroce_cqe_ts if the CQ
 * has timestamps, then a struct sroce_cqe_tm if it has tag-matching
 * headers; the kernel's slot_size may be larger.  Completions are handed
 * out as the kernel wrote them: tag-matching opcodes, statuses and
 * wc_flags pass through like any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

/* Everything an ib_uverbs_wc carries; no flow tags. */
#define SROCE_CQ_WC_FLAGS	IBV_WC_STANDARD_FLAGS
/* What struct sroce_cqe_ts adds, from a module with SROCE_CQ_TIMESTAMPS. */
#define SROCE_CQ_WC_TS_FLAGS						\
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |				\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* What struct sroce_cqe_tm adds, from a module with SROCE_FEATURE_TM. */
#define SROCE_CQ_WC_TM_FLAGS	IBV_WC_EX_WITH_TM_INFO

/*
 * The status the provider writes over a CQE it has discarded (a QP's, when
 * the QP is reset): the slot is this process's until given back, so it may
 * write it; pollers skip such CQEs.  No enum ibv_wc_status is this large.
 */
#define SROCE_CQE_DISCARDED	UINT32_MAX

/* create_cq_ex attributes the provider honours. */
#define SROCE_CQ_COMP_MASK						\
	(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)
#define SROCE_CQ_FLAGS		IBV_CREATE_CQ_ATTR_SINGLE_THREADED

/* A CQ that takes its lock unless @single (struct sroce_spin). */
static struct sroce_cq *cq_alloc(bool single)
{
	struct sroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = sroce_spin_init(&cq->lock, single);
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	return cq;
}

static void cq_free(struct sroce_cq *cq)
{
	sroce_spin_destroy(&cq->lock);
	free(cq);
}

/* Where a slot's struct sroce_cqe_tm is: after the CQE and its times. */
static size_t cq_tm_offset(const struct sroce_cq *cq)
{
	size_t off = sizeof(struct ib_uverbs_wc);

	if (cq->timestamps)
		off += sizeof(struct sroce_cqe_ts);
	return off;
}

static int cq_map(struct sroce_cq *cq, struct ibv_context *ibctx,
		  const struct sroce_create_cq_resp *drv)
{
	uint32_t slot = (uint32_t)cq_tm_offset(cq);

	if (cq->tm_info)
		slot += sizeof(struct sroce_cqe_tm);
	return sroce_ring_map(&cq->ring, &drv->ring, slot, SROCE_RING_CONSUMER,
			      ibctx->cmd_fd);
}

/*
 * The rest of a creation once the kernel's create command has run (@ret,
 * its result): map the ring the kernel described.  On failure the CQ is
 * destroyed again if the kernel created it, and freed.
 * Return: 0, or the error, with errno set to it.
 */
static int cq_create_finish(struct sroce_cq *cq, int ret,
			    struct ibv_context *ibctx,
			    const struct sroce_create_cq_resp *drv)
{
	if (ret)
		goto err_free_cq;
	ret = cq_map(cq, ibctx, drv);
	if (ret)
		goto err_destroy_cq;
	return 0;

err_destroy_cq:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free_cq:
	cq_free(cq);
	errno = ret;
	return ret;
}

/**
 * sroce_cq_create() - create_cq op
 * @ibctx: context
 * @cqe: minimum number of CQEs
 * @channel: completion channel, or NULL
 * @comp_vector: completion vector
 *
 * Context: takes no lock; libibverbs initialises the returned ibv_cq.
 * Return: the new CQ, or NULL with errno set (EPROTO: the kernel described
 * a ring that breaks the ABI; the CQ is destroyed again).
 */
struct ibv_cq *sroce_cq_create(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct sroce_uresp_create_cq resp = {};
	struct ibv_create_cq cmd = {};
	struct sroce_cq *cq;
	int ret;

	cq = cq_alloc(false);
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (cq_create_finish(cq, ret, ibctx, &resp.drv))
		return NULL;
	return &cq->vcq.cq;
}

/**
 * sroce_cq_destroy() - destroy_cq op
 * @ibcq: CQ from sroce_cq_create() or sroce_cq_create_ex()
 *
 * The ring is unmapped only once the kernel has destroyed the CQ, so the
 * kernel never writes into a mapping this process has given up.
 *
 * Return: 0, or a positive errno with the CQ kept.
 */
int sroce_cq_destroy(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	if (cq->parent)
		sroce_pd_put(cq->parent);
	sroce_ring_unmap(&cq->ring);
	cq_free(cq);
	return 0;
}

/**
 * sroce_cq_poll() - poll_cq op
 * @ibcq: CQ
 * @num_entries: room in @wc
 * @wc: receives up to @num_entries completions, oldest first
 *
 * Copies CQEs from the consumer index up to the producer index (loaded with
 * acquire), skipping discarded ones, then gives the slots back by
 * publishing the consumer index (release), as ring.h describes.  A CQE is
 * a struct ib_uverbs_wc already in libibverbs' numbering (the ABI says
 * so), so it is copied unchanged.
 *
 * Context: any thread; takes and releases the CQ's lock.
 * Return: number of completions returned (0 if none), or -1 if the CQ lost
 * its ring in a failed resize.
 */
int sroce_cq_poll(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring *ring = &cq->ring;
	const struct ib_uverbs_wc *cqe;
	uint32_t ready, n, i;

	if (num_entries <= 0)
		return 0;

	sroce_spin_lock(&cq->lock);
	if (!ring->base) {
		sroce_spin_unlock(&cq->lock);
		return -1;
	}

	ready = sroce_ring_ready(ring);
	for (i = 0, n = 0; i < ready && n < (uint32_t)num_entries; i++) {
		cqe = sroce_ring_slot(ring, ring->head + i);
		if (cqe->status != SROCE_CQE_DISCARDED)
			memcpy(&wc[n++], cqe, sizeof(wc[0]));
	}
	if (i)
		sroce_ring_publish(ring, ring->head + i);

	sroce_spin_unlock(&cq->lock);
	return (int)n;
}

/**
 * sroce_cq_discard_qp() - drop the unpolled CQEs of a QP
 * @ibcq: CQ
 * @qp_num: the QP, just moved to RESET
 *
 * Applications reset a QP to reuse it and expect the completions of its
 * old life (flushes, mostly) to be gone, as on other RDMA devices.  After
 * the move the kernel produces no CQE for the QP, so every one there is is
 * below the producer index now.  The completions of tag-matching
 * operations carry qp_num 0, which no QP has, so they are never dropped
 * here; nothing else looks at a CQE's qp_num.
 *
 * Context: takes and releases the CQ's lock.
 */
void sroce_cq_discard_qp(struct ibv_cq *ibcq, uint32_t qp_num)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ring *ring = &cq->ring;
	struct ib_uverbs_wc *cqe;
	uint32_t ready, i;

	sroce_spin_lock(&cq->lock);
	ready = ring->base ? sroce_ring_ready(ring) : 0;
	for (i = 0; i < ready; i++) {
		cqe = sroce_ring_slot(ring, ring->head + i);
		if (cqe->qp_num == qp_num)
			cqe->status = SROCE_CQE_DISCARDED;
	}
	sroce_spin_unlock(&cq->lock);
}

/**
 * sroce_cq_resize() - resize_cq op
 * @ibcq: CQ
 * @cqe: new minimum number of CQEs
 *
 * The kernel builds a new ring, moves the unpolled CQEs into it and returns
 * it; the provider switches to it and unmaps the old one.  The lock keeps
 * pollers out meanwhile, so the consumer index the kernel reads during the
 * command is final.
 *
 * Context: takes the CQ's lock across the command (a system call).
 * Return: 0, or a positive errno.  If the kernel resized but the new ring
 * cannot be mapped, the CQ has lost its ring: polls fail from then on.
 */
int sroce_cq_resize(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_uresp_resize_cq resp = {};
	struct ibv_resize_cq cmd = {};
	struct sroce_ring old;
	int ret;

	sroce_spin_lock(&cq->lock);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out_unlock;

	old = cq->ring;
	ret = cq_map(cq, ibcq->context, &resp.drv);
	if (ret)
		memset(&cq->ring, 0, sizeof(cq->ring));
	sroce_ring_unmap(&old);

out_unlock:
	sroce_spin_unlock(&cq->lock);
	return ret;
}

/*
 * The ibv_cq_ex polling API.  start_poll takes the lock and holds it until
 * end_poll; CQEs are copied into cq->cur and given back all at once by
 * end_poll.  cq->poll_next is the index after the current CQE, so after
 * next_poll found nothing it is already where end_poll must publish.
 */

static struct sroce_cq *cqx_to_scq(struct ibv_cq_ex *ibcqx)
{
	return to_scq(ibv_cq_ex_to_cq(ibcqx));
}

/*
 * Make the first CQE from @index on that is not discarded current; then
 * poll_next is the index after it, or @producer if there is none.
 * Return: 0, or ENOENT if there is none.
 */
static int cqx_load(struct sroce_cq *cq, uint32_t index, uint32_t producer)
{
	const struct ib_uverbs_wc *cqe;

	for (; sroce_ring_used(producer, index); index++) {
		cqe = sroce_ring_slot(&cq->ring, index);
		if (cqe->status == SROCE_CQE_DISCARDED)
			continue;
		memcpy(&cq->cur, cqe, sizeof(cq->cur));
		if (cq->timestamps)
			memcpy(&cq->cur_ts, cqe + 1, sizeof(cq->cur_ts));
		if (cq->tm_info)
			memcpy(&cq->cur_tm,
			       (const uint8_t *)cqe + cq_tm_offset(cq),
			       sizeof(cq->cur_tm));
		cq->poll_next = index + 1;
		cq->vcq.cq_ex.status = cq->cur.status;
		cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
		return 0;
	}
	cq->poll_next = index;
	return ENOENT;
}

/* Context: takes the CQ's lock, kept on success until cqx_end_poll(). */
static int cqx_start_poll(struct ibv_cq_ex *ibcqx,
			  struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = cqx_to_scq(ibcqx);

	if (attr->comp_mask)
		return EINVAL;

	sroce_spin_lock(&cq->lock);
	if (!cq->ring.base) {
		sroce_spin_unlock(&cq->lock);
		return EIO;
	}
	if (cqx_load(cq, cq->ring.head, sroce_ring_load_peer(&cq->ring))) {
		/* Give back the discarded CQEs passed over. */
		sroce_ring_publish(&cq->ring, cq->poll_next);
		sroce_spin_unlock(&cq->lock);
		return ENOENT;
	}
	return 0;
}

/* Context: the CQ's lock is held (since cqx_start_poll()). */
static int cqx_next_poll(struct ibv_cq_ex *ibcqx)
{
	struct sroce_cq *cq = cqx_to_scq(ibcqx);

	return cqx_load(cq, cq->poll_next, sroce_ring_load_peer(&cq->ring));
}

/* Context: releases the CQ's lock taken by cqx_start_poll(). */
static void cqx_end_poll(struct ibv_cq_ex *ibcqx)
{
	struct sroce_cq *cq = cqx_to_scq(ibcqx);

	sroce_ring_publish(&cq->ring, cq->poll_next);
	sroce_spin_unlock(&cq->lock);
}

/*
 * The readers of the completion being polled (cq->cur), one per field:
 * static TYPE cqx_read_FIELD(struct ibv_cq_ex *).
 */
#define CQX_READER(type, field)					\
	static type cqx_read_##field(struct ibv_cq_ex *ibcqx)	\
	{							\
		return cqx_to_scq(ibcqx)->cur.field;		\
	}

/*
 * Every reader, X(FLAG, TYPE, FIELD): FLAG is the wc_flags bit that asks
 * for it, 0 for the readers every extended CQ has.
 */
#define CQX_READERS(X)						\
	X(0, enum ibv_wc_opcode, opcode)			\
	X(0, uint32_t, vendor_err)				\
	X(0, unsigned int, wc_flags)				\
	X(IBV_WC_EX_WITH_BYTE_LEN, uint32_t, byte_len)		\
	X(IBV_WC_EX_WITH_IMM, __be32, imm_data)			\
	X(IBV_WC_EX_WITH_QP_NUM, uint32_t, qp_num)		\
	X(IBV_WC_EX_WITH_SRC_QP, uint32_t, src_qp)		\
	X(IBV_WC_EX_WITH_SLID, uint32_t, slid)			\
	X(IBV_WC_EX_WITH_SL, uint8_t, sl)			\
	X(IBV_WC_EX_WITH_DLID_PATH_BITS, uint8_t, dlid_path_bits)

#define CQX_DEFINE_READER(flag, type, field) CQX_READER(type, field)
#define CQX_INSTALL_READER(flag, type, field)			\
	if (!(flag) || (wc_flags & (flag)))			\
		cqx->read_##field = cqx_read_##field;

CQX_READERS(CQX_DEFINE_READER)

/* The device clock (SROCE_CLOCK_KHZ) when the kernel wrote the CQE. */
static uint64_t cqx_read_completion_ts(struct ibv_cq_ex *ibcqx)
{
	return cqx_to_scq(ibcqx)->cur_ts.clock_ns;
}

static uint64_t cqx_read_completion_wallclock_ns(struct ibv_cq_ex *ibcqx)
{
	return cqx_to_scq(ibcqx)->cur_ts.realtime_ns;
}

/*
 * The tag-matching header of a message's completion; the kernel writes
 * zeros for other completions (those of operations, DATA_VALID-only ones).
 */
static void cqx_read_tm_info(struct ibv_cq_ex *ibcqx,
			     struct ibv_wc_tm_info *tm_info)
{
	const struct sroce_cqe_tm *tm = &cqx_to_scq(ibcqx)->cur_tm;

	tm_info->tag = tm->tag;
	tm_info->priv = tm->priv;
}

/* Install the polling API and the readers for what @wc_flags asked for. */
static void cqx_init_ops(struct ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = cqx_start_poll;
	cqx->next_poll = cqx_next_poll;
	cqx->end_poll = cqx_end_poll;
	CQX_READERS(CQX_INSTALL_READER)
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = cqx_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns =
			cqx_read_completion_wallclock_ns;
	if (wc_flags & IBV_WC_EX_WITH_TM_INFO)
		cqx->read_tm_info = cqx_read_tm_info;
}

/*
 * Return: 0; EOPNOTSUPP for attributes the provider cannot serve; EINVAL
 * for a parent domain that is none, or is another context's.
 */
static int cqx_check_attr(struct ibv_context *ibctx,
			  const struct ibv_cq_init_attr_ex *attr)
{
	uint64_t wc_flags = SROCE_CQ_WC_FLAGS;

	if (to_sctx(ibctx)->features & SROCE_FEATURE_CQ_TIMESTAMPS)
		wc_flags |= SROCE_CQ_WC_TS_FLAGS;
	if (to_sctx(ibctx)->features & SROCE_FEATURE_TM)
		wc_flags |= SROCE_CQ_WC_TM_FLAGS;
	if (attr->wc_flags & ~wc_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(uint32_t)SROCE_CQ_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)SROCE_CQ_FLAGS))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_spd(attr->parent_domain)->pd))
		return EINVAL;
	return 0;
}

/* Will the CQ be used from one thread at a time (struct sroce_spin)? */
static bool cqx_single_threaded(const struct ibv_cq_init_attr_ex *attr)
{
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return true;
	return (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	       sroce_pd_single_threaded(attr->parent_domain);
}

/**
 * sroce_cq_create_ex() - create_cq_ex op
 * @ibctx: context
 * @attr: attributes; wc_flags must be within IBV_WC_STANDARD_FLAGS, the
 *	two completion timestamps and IBV_WC_EX_WITH_TM_INFO, flags at most
 *	IBV_CREATE_CQ_ATTR_SINGLE_THREADED; a parent domain
 *	(IBV_CQ_INIT_ATTR_MASK_PD) only gives its thread domain
 *
 * A CQ asked for a completion timestamp gets slots with the times after
 * each CQE (SROCE_CQ_TIMESTAMPS): the device clock, CLOCK_MONOTONIC_RAW in
 * nanoseconds (hca_core_clock SROCE_CLOCK_KHZ), and CLOCK_REALTIME.  One
 * asked for IBV_WC_EX_WITH_TM_INFO gets the tag-matching header of each
 * message after those (SROCE_CQ_TM_INFO), for ibv_wc_read_tm_info().
 *
 * A CQ created single-threaded, or in a parent domain with a thread
 * domain, takes no lock when polled.
 *
 * Context: takes no lock; libibverbs initialises the returned CQ.
 * Return: the new CQ, or NULL with errno set (EOPNOTSUPP for attributes
 * above, EINVAL for a parent domain that is none, EPROTO for a ring that
 * breaks the ABI).
 */
struct ibv_cq_ex *sroce_cq_create_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct sroce_uresp_create_cq_ex resp = {};
	struct sroce_create_cq_ex_cmd cmd = {};
	struct ibv_cq_init_attr_ex core_attr;
	struct sroce_cq *cq;
	int ret;

	ret = cqx_check_attr(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	cq = cq_alloc(cqx_single_threaded(attr));
	if (!cq)
		return NULL;
	if (attr->wc_flags & SROCE_CQ_WC_TS_FLAGS) {
		cq->timestamps = true;
		cmd.drv.flags |= SROCE_CQ_TIMESTAMPS;
	}
	if (attr->wc_flags & SROCE_CQ_WC_TM_FLAGS) {
		cq->tm_info = true;
		cmd.drv.flags |= SROCE_CQ_TM_INFO;
	}

	/* The kernel's CQ has no PD: ibv_cmd_create_cq_ex() refuses one. */
	core_attr = *attr;
	core_attr.comp_mask &= ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_PD;
	ret = ibv_cmd_create_cq_ex(ibctx, &core_attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (cq_create_finish(cq, ret, ibctx, &resp.drv))
		return NULL;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->parent = attr->parent_domain;
		sroce_pd_hold(cq->parent);
	}
	cqx_init_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;
}
