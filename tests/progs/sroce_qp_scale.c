// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_qp_scale - many RC connections on one device: what they cost to
 * set up, in time and kernel memory, and the message rate with all of them
 * busy.  For "make bench" (tests/bench/guest.sh), any RDMA device.
 *
 * usage: sroce_qp_scale -d DEV -g GID_INDEX -n CONNECTIONS [-s SECONDS]
 *
 * Creates 2 x CONNECTIONS RC QPs (both ends of each connection on DEV,
 * like perftest's -q) and connects them in pairs; then, for SECONDS
 * (default 3), keeps one signaled 64-byte RDMA WRITE outstanding on every
 * connection, reposting as each completes.  Memory is what creating and
 * connecting took, divided by the QPs (CQs, PD and MR are shared and
 * small): the fall of MemFree in /proc/meminfo (everything: a driver that
 * maps pages it allocated itself into the kernel, as sroce does for its
 * rings, shows in neither Slab nor VmallocUsed), and beside it the growth
 * of Slab and VmallocUsed (the per-CPU free page lists make either noisy
 * for a few megabytes).  Every completion must succeed.  Prints one
 * line:
 *
 *   connections=N qps=2N setup_s=S mem_kib=M mem_per_qp_b=B kmem_kib=K
 *   kmem_per_qp_b=B rate_Mpps=R teardown_s=T
 */
#include <getopt.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define MSG 64
#define CQ_CAP 4096

struct scale {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	unsigned int nconn;
	unsigned int ncq;
	struct ibv_cq **cq;
	struct ibv_qp **qp;	/* 2 per connection: initiator, target */
};

/* MemFree, and Slab + VmallocUsed, in KiB. */
static void meminfo(long *free_kib, long *kmem_kib)
{
	char line[256];
	long v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	*free_kib = *kmem_kib = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemFree: %ld kB", &v) == 1)
			*free_kib = v;
		else if (sscanf(line, "Slab: %ld kB", &v) == 1 ||
			 sscanf(line, "VmallocUsed: %ld kB", &v) == 1)
			*kmem_kib += v;
	}
	fclose(f);
}

static struct ibv_cq *conn_cq(struct scale *s, unsigned int c)
{
	return s->cq[c / CQ_CAP];
}

static void create_all(struct scale *s)
{
	unsigned int i;

	s->ncq = (s->nconn + CQ_CAP - 1) / CQ_CAP;
	s->cq = calloc(s->ncq, sizeof(*s->cq));
	s->qp = calloc(2 * s->nconn, sizeof(*s->qp));
	if (!s->cq || !s->qp)
		die("out of memory");
	for (i = 0; i < s->ncq; i++) {
		s->cq[i] = ibv_create_cq(s->ctx, CQ_CAP, NULL, NULL, 0);
		if (!s->cq[i])
			die("ibv_create_cq(%d): %s", CQ_CAP, strerror(errno));
	}
	for (i = 0; i < 2 * s->nconn; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = conn_cq(s, i / 2),
			.recv_cq = conn_cq(s, i / 2),
			.cap = { .max_send_wr = 2, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		s->qp[i] = ibv_create_qp(s->pd, &a);
		if (!s->qp[i])
			die("ibv_create_qp #%u: %s", i, strerror(errno));
	}
}

static void connect_qp(struct scale *s, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = s->mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = s->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)s->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("connecting QP %u: %s", qp->qp_num, strerror(err));
}

static void post_write(struct scale *s, unsigned int c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = c, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)s->buf + MSG,
			     .rkey = s->mr->rkey },
	}, *bad;
	int err = ibv_post_send(s->qp[2 * c], &wr, &bad);

	if (err)
		die("ibv_post_send on connection %u: %s", c, strerror(err));
}

/* Completions per second with every connection busy, for @secs. */
static double run_rate(struct scale *s, double secs)
{
	struct ibv_wc wc[64];
	unsigned long done = 0;
	unsigned int c, i;
	double t0, t;
	int n;

	for (c = 0; c < s->nconn; c++)
		post_write(s, c);
	t0 = mono_seconds();
	do {
		for (i = 0; i < s->ncq; i++) {
			n = ibv_poll_cq(s->cq[i], 64, wc);
			if (n < 0)
				die("ibv_poll_cq: %d", n);
			while (n--) {
				if (wc[n].status != IBV_WC_SUCCESS)
					die("connection %lu: %s", (unsigned long)wc[n].wr_id,
					    ibv_wc_status_str(wc[n].status));
				done++;
				post_write(s, (unsigned int)wc[n].wr_id);
			}
		}
		t = mono_seconds();
	} while (t - t0 < secs);
	/* Let the last ones finish before the QPs go. */
	for (c = s->nconn; c;) {
		for (i = 0; i < s->ncq; i++) {
			n = ibv_poll_cq(s->cq[i], 64, wc);
			if (n < 0)
				die("ibv_poll_cq: %d", n);
			c -= (unsigned int)n;
			while (n--)
				if (wc[n].status != IBV_WC_SUCCESS)
					die("connection %lu: %s", (unsigned long)wc[n].wr_id,
					    ibv_wc_status_str(wc[n].status));
		}
		if (mono_seconds() - t > 60)
			die("%u writes did not complete in 60 s", c);
	}
	return done / (t - t0);
}

static void destroy_all(struct scale *s)
{
	unsigned int i;

	for (i = 0; i < 2 * s->nconn; i++)
		if (ibv_destroy_qp(s->qp[i]))
			die("ibv_destroy_qp #%u", i);
	for (i = 0; i < s->ncq; i++)
		if (ibv_destroy_cq(s->cq[i]))
			die("ibv_destroy_cq");
	free(s->qp);
	free(s->cq);
}

int main(int argc, char **argv)
{
	struct scale s = { .gid_index = -1 };
	struct ibv_port_attr port;
	const char *dev = NULL;
	double secs = 3, t0, setup, rate;
	long f0, f1, k0, k1, nqp;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:n:s:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': s.gid_index = atoi(optarg); break;
		case 'n': s.nconn = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': secs = atof(optarg); break;
		default: die("usage: %s -d DEV -g GID_INDEX -n CONNECTIONS [-s SECONDS]", argv[0]);
		}
	}
	if (!dev || s.gid_index < 0 || !s.nconn)
		die("usage: %s -d DEV -g GID_INDEX -n CONNECTIONS [-s SECONDS]", argv[0]);
	s.ctx = open_device(dev);
	if (ibv_query_port(s.ctx, 1, &port) ||
	    ibv_query_gid(s.ctx, 1, s.gid_index, &s.gid))
		die("%s: port 1 or GID %d: %s", dev, s.gid_index, strerror(errno));
	s.mtu = port.active_mtu;
	s.pd = ibv_alloc_pd(s.ctx);
	s.buf = calloc(1, 2 * MSG);
	if (!s.pd || !s.buf)
		die("ibv_alloc_pd: %s", strerror(errno));
	s.mr = ibv_reg_mr(s.pd, s.buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE);
	if (!s.mr)
		die("ibv_reg_mr: %s", strerror(errno));

	meminfo(&f0, &k0);
	t0 = mono_seconds();
	create_all(&s);
	for (unsigned int c = 0; c < s.nconn; c++) {
		connect_qp(&s, s.qp[2 * c], s.qp[2 * c + 1]->qp_num);
		connect_qp(&s, s.qp[2 * c + 1], s.qp[2 * c]->qp_num);
	}
	setup = mono_seconds() - t0;
	meminfo(&f1, &k1);
	rate = run_rate(&s, secs);
	t0 = mono_seconds();
	destroy_all(&s);
	nqp = 2 * (long)s.nconn;
	printf("connections=%u qps=%ld setup_s=%.3f mem_kib=%ld mem_per_qp_b=%ld kmem_kib=%ld kmem_per_qp_b=%ld rate_Mpps=%.6f teardown_s=%.3f\n",
	       s.nconn, nqp, setup, f0 - f1, (f0 - f1) * 1024 / nqp, k1 - k0,
	       (k1 - k0) * 1024 / nqp, rate / 1e6, mono_seconds() - t0);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	return 0;
}
