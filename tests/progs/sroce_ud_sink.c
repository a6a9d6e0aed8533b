// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_ud_sink - a UD QP that takes whatever arrives, for the fuzz group.
 *
 * usage: sroce_ud_sink DEV QKEY [GROUP...]
 *
 * Creates a UD QP on port 1 of DEV with Q_Key QKEY, attaches it to each
 * multicast GROUP (an IPv4 or IPv6 address; the MGID is the IPv4-mapped or
 * the IPv6 address), keeps 128 receives of 4136 bytes (the GRH and the
 * largest path MTU) posted, and prints "qpn N" and "ready".  Every
 * completion is counted and the receive posted again.  On SIGTERM or
 * SIGINT it polls what is left and prints "received N ok N error N
 * flushed N" (an error completion still consumed a datagram; a flushed one,
 * after the QP went to error, did not) and exits 0; any verbs failure
 * exits 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

#define NRECV 128
#define BUFSZ (40 + 4096)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *bufs;

static void post_recv(unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(bufs + (size_t)i * BUFSZ),
		.length = BUFSZ,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv: %s", strerror(errno));
}

static void mgid_of(const char *s, union ibv_gid *gid)
{
	struct in_addr a4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &a4, 4);
	} else if (inet_pton(AF_INET6, s, gid->raw) != 1) {
		die("'%s' is not an IP address", s);
	}
}

int main(int argc, char **argv)
{
	unsigned long long ok = 0, err = 0, flushed = 0;
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_qp_attr attr;
	struct ibv_wc wc[32];
	struct ibv_pd *pd;
	struct ibv_cq *cq, *ev_cq;
	union ibv_gid gid;
	void *ev_ctx;
	uint32_t qkey;
	int i, n;

	if (argc < 3)
		die("usage: %s DEV QKEY [GROUP...]", argv[0]);
	qkey = (uint32_t)strtoul(argv[2], NULL, 0);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!pd || !ch)
		die("ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	cq = ibv_create_cq(ctx, NRECV * 2, NULL, ch, 0);
	bufs = calloc(NRECV, BUFSZ);
	if (!cq || !bufs)
		die("ibv_create_cq: %s", strerror(errno));
	mr = ibv_reg_mr(pd, bufs, (size_t)NRECV * BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 } });
	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = qkey;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("modify to INIT: %s", strerror(errno));
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		die("modify to RTR: %s", strerror(errno));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("modify to RTS: %s", strerror(errno));
	for (i = 0; i < NRECV; i++)
		post_recv((unsigned int)i);
	for (i = 3; i < argc; i++) {
		mgid_of(argv[i], &gid);
		if (ibv_attach_mcast(qp, &gid, 0))
			die("ibv_attach_mcast %s: %s", argv[i], strerror(errno));
	}
	if (ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	printf("qpn %u\nready\n", qp->qp_num);
	fflush(stdout);

	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		bool last = stop;

		if (!last && poll(&pfd, 1, 200) > 0) {
			if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
				die("ibv_get_cq_event: %s", strerror(errno));
			ibv_ack_cq_events(ev_cq, 1);
			if (ibv_req_notify_cq(cq, 0))
				die("ibv_req_notify_cq: %s", strerror(errno));
		}
		while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
			for (i = 0; i < n; i++) {
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
					flushed++;	/* the QP went to error: no datagram */
					continue;
				}
				if (wc[i].status == IBV_WC_SUCCESS)
					ok++;
				else
					err++;
				post_recv((unsigned int)wc[i].wr_id);
			}
		}
		if (n < 0)
			die("ibv_poll_cq failed");
		if (last)
			break;
	}
	printf("received %llu ok %llu error %llu flushed %llu\n", ok + err, ok, err,
	       flushed);
	for (i = 3; i < argc; i++) {
		mgid_of(argv[i], &gid);
		ibv_detach_mcast(qp, &gid, 0);
	}
	if (ibv_destroy_qp(qp) || ibv_dereg_mr(mr) || ibv_destroy_cq(cq) ||
	    ibv_destroy_comp_channel(ch) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("teardown: %s", strerror(errno));
	free(bufs);
	return 0;
}
