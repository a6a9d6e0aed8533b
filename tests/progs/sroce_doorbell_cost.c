// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_doorbell_cost: what one send doorbell costs by itself, the part of
 * every ibv_post_send() on sroce that moves no data (performance.rst).
 *
 * usage: sroce_doorbell_cost DEVICE ITERATIONS
 *
 * Rings the send doorbell of an RC QP in INIT ITERATIONS times: the
 * provider's own system call (a POST_SEND write command with no work
 * requests, uapi/rdma/sroce-abi.h), through ib_uverbs' dispatch into
 * sroce's post_send, which finds nothing it may send.  Then as many
 * getppid() calls, the cheapest system call, for scale.  Prints one line:
 *
 *   doorbell_us=US syscall_us=US
 *
 * (microseconds per call).  A device whose post_send refuses a QP in INIT
 * (rdma_rxe) makes it fail: the figure is sroce's alone.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "common.h"

struct doorbell {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core;
};

static struct ibv_qp *init_qp(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp;

	if (!cq)
		die("cannot create a PD and a CQ: %s", strerror(errno));
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (errno)
		die("ibv_modify_qp to INIT: %s", strerror(errno));
	return qp;
}

int main(int argc, char **argv)
{
	struct ib_uverbs_post_send_resp resp;
	struct doorbell cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core = {
			.response = (uintptr_t)&resp,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	double t0, t1, t2;
	long i, n;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0)
		die("usage: sroce_doorbell_cost DEVICE ITERATIONS");
	ctx = open_device(argv[1]);
	qp = init_qp(ctx);
	cmd.core.qp_handle = qp->handle;
	t0 = mono_seconds();
	for (i = 0; i < n; i++)
		if (write(ctx->cmd_fd, &cmd, sizeof(cmd)) != (ssize_t)sizeof(cmd))
			die("doorbell %ld of %ld: %s", i + 1, n, strerror(errno));
	t1 = mono_seconds();
	for (i = 0; i < n; i++)
		getppid();
	t2 = mono_seconds();
	printf("doorbell_us=%.3f syscall_us=%.3f\n",
	       (t1 - t0) * 1e6 / (double)n, (t2 - t1) * 1e6 / (double)n);
	return 0;
}
