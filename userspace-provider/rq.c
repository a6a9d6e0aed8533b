// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rq.c - receive queues of QPs and SRQs: struct sroce_recv_wqe and its SGEs
 * written into the receive ring and published with the producer index.  No
 * doorbell: the kernel looks at the ring when a message arrives; only a QP
 * in the ERR state rings the receive doorbell, so the kernel flushes what
 * was posted after the error.
 */
#include <errno.h>
#include <unistd.h>

#include "sroce.h"

/**
 * sroce_rq_init() - set up a receive queue from a create response
 * @rq: zeroed receive queue
 * @info: the receive ring
 * @max_wr: WQEs the kernel granted
 * @max_sge: SGEs per WQE the kernel granted
 * @cmd_fd: the context's uverbs file
 * @single: the queue is used from one thread at a time (struct sroce_spin)
 *
 * A ring of 0 slots is allowed only with @max_wr 0 (no receive queue).
 *
 * Return: 0; EPROTO when the ring cannot hold what the kernel granted; an
 * errno from pthread_spin_init() or mmap(2).
 */
int sroce_rq_init(struct sroce_rq *rq, const struct sroce_ring_info *info,
		  uint32_t max_wr, uint32_t max_sge, int cmd_fd, bool single)
{
	uint64_t need = sizeof(struct sroce_recv_wqe) +
			(uint64_t)max_sge * sizeof(struct sroce_sge);
	int ret;

	if (max_wr > info->num_slots || need > UINT32_MAX)
		return EPROTO;

	ret = sroce_spin_init(&rq->lock, single);
	if (ret)
		return ret;

	if (info->num_slots) {
		ret = sroce_ring_map(&rq->ring, info, (uint32_t)need,
				     SROCE_RING_PRODUCER, cmd_fd);
		if (ret)
			goto err_destroy_lock;
	}

	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	return 0;

err_destroy_lock:
	sroce_spin_destroy(&rq->lock);
	return ret;
}

/* Undoes sroce_rq_init(); the kernel must be done with the ring. */
void sroce_rq_uninit(struct sroce_rq *rq)
{
	sroce_ring_unmap(&rq->ring);
	sroce_spin_destroy(&rq->lock);
}

/*
 * Write @wr as the @pending-th unpublished WQE.
 * Context: the RQ lock is held.
 */
static int rq_build_wqe(struct sroce_rq *rq, uint32_t pending,
			const struct ibv_recv_wr *wr)
{
	struct sroce_recv_wqe *wqe;
	struct sroce_sge *sge;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	if (!sroce_ring_room(&rq->ring, pending, rq->max_wr))
		return ENOMEM;

	wqe = sroce_ring_slot(&rq->ring, rq->ring.head + pending);
	*wqe = (struct sroce_recv_wqe){
		.wr_id = wr->wr_id,
		.num_sge = (uint32_t)wr->num_sge,
	};
	sge = (struct sroce_sge *)(void *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++)
		sge[i] = (struct sroce_sge){
			.addr = wr->sg_list[i].addr,
			.length = wr->sg_list[i].length,
			.lkey = wr->sg_list[i].lkey,
		};
	return 0;
}

/*
 * Post a list of receive WRs to @rq: every WR up to the first refused one
 * is published with one release store of the producer index.
 */
static int rq_post(struct sroce_rq *rq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	uint32_t n = 0;
	int ret = 0;

	sroce_spin_lock(&rq->lock);
	for (; wr; wr = wr->next, n++) {
		ret = rq->ring.base ? rq_build_wqe(rq, n, wr) : EINVAL;
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (n)
		sroce_ring_publish(&rq->ring, rq->ring.head + n);
	sroce_spin_unlock(&rq->lock);
	return ret;
}

/*
 * The receive doorbell, a POST_RECV write command with no work requests:
 * a QP in ERR flushes the receive WQEs posted since the error.
 */
static int rq_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct sroce_recv_doorbell_cmd cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_RECV,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core = {
			.response = (uintptr_t)&resp,
			.qp_handle = ibqp->handle,
			.wqe_size = sizeof(struct ib_uverbs_recv_wr),
		},
	};
	ssize_t n;

	do
		n = write(ibqp->context->cmd_fd, &cmd, sizeof(cmd));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(cmd))
		return 0;
	return n < 0 ? errno : EIO;
}

/**
 * sroce_rq_post() - post_recv op
 * @ibqp: QP
 * @wr: list of work requests
 * @bad_wr: set to the first WR not posted when one is refused
 *
 * Context: any thread; takes and releases the RQ lock; no system call
 * unless the QP is in ERR (the receive doorbell).
 * Return: 0; ENOMEM when the receive queue is full; EINVAL in RESET, for
 * too many SGEs or a QP without its own receive queue (it uses an SRQ).
 */
int sroce_rq_post(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	int ret;

	/* Receives may be posted from INIT on, not in RESET. */
	if (ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = rq_post(&to_sqp(ibqp)->rq, wr, bad_wr);
	if (!ret && ibqp->state == IBV_QPS_ERR)
		ret = rq_doorbell(ibqp);
	return ret;
}

/**
 * sroce_srq_post() - post_srq_recv op
 * @ibsrq: SRQ
 * @wr: list of work requests
 * @bad_wr: set to the first WR not posted when one is refused
 *
 * Context: any thread; takes and releases the SRQ lock; no system call.
 * Return: 0; ENOMEM when the SRQ is full; EINVAL for too many SGEs.
 */
int sroce_srq_post(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	return rq_post(&to_ssrq(ibsrq)->rq, wr, bad_wr);
}
