// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * victim.c - sroce_peer: the victim, an RC or UC QP on the device made
 * through libibverbs, its completions and state, and the device's
 * counters.
 */

#include <sys/mman.h>

#include "peer.h"

struct victim vic;

static uint32_t recv_posted;	/* receive WQEs posted so far (wr_id = slot) */
uint32_t recv_len;

/* Pattern @seed over the victim's memory, zero its receive buffers. */
void vic_fill(unsigned int seed)
{
	size_t i;

	for (i = 0; i < MR_SIZE; i++)
		vic.buf[i] = (uint8_t)(i * 7 + (i >> 10) * 13 + seed);
	for (i = 0; i < RO_SIZE; i++)
		vic.robuf[i] = (uint8_t)(i * 3 + seed);
	memset(vic.rbuf, 0, RECV_SLOT * RECV_SLOTS);
}

/*
 * The persistent memory of -P, a device-DAX file, mapped and registered
 * with both FLUSH rights and remote write.
 */
static void vic_open_pmem(void)
{
	int fd = open(opt.pmem, O_RDWR);

	if (fd < 0)
		die("%s: %s", opt.pmem, strerror(errno));
	vic.pmbuf = mmap(NULL, PM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (vic.pmbuf == MAP_FAILED)
		die("mmap %s: %s", opt.pmem, strerror(errno));
	vic.pm = ibv_reg_mr(vic.pd, vic.pmbuf, PM_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT);
	if (!vic.pm)
		die("ibv_reg_mr of %s with the persistence right: %s", opt.pmem, strerror(errno));
}

void vic_open(void)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL;
	int flags;

	vic.ctx = open_device(opt.dev);
	vic.pd = ibv_alloc_pd(vic.ctx);
	if (!vic.pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	if (posix_memalign((void **)&vic.buf, 4096, MR_SIZE) ||
	    posix_memalign((void **)&vic.robuf, 4096, RO_SIZE) ||
	    posix_memalign((void **)&vic.rbuf, 4096, RECV_SLOT * RECV_SLOTS))
		die("out of memory");
	vic.mr = ibv_reg_mr(vic.pd, vic.buf, MR_SIZE, acc);
	vic.ro = ibv_reg_mr(vic.pd, vic.robuf, RO_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	vic.rmr = ibv_reg_mr(vic.pd, vic.rbuf, RECV_SLOT * RECV_SLOTS, IBV_ACCESS_LOCAL_WRITE);
	if (!vic.mr || !vic.ro || !vic.rmr)
		die("ibv_reg_mr: %s", strerror(errno));
	if (opt.pmem)
		vic_open_pmem();
	flags = fcntl(vic.ctx->async_fd, F_GETFL);
	if (fcntl(vic.ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		die("async fd: %s", strerror(errno));
	memset(&vic.peer_gid, 0, sizeof(vic.peer_gid));
	if (peer.family == AF_INET) {
		vic.peer_gid.raw[10] = vic.peer_gid.raw[11] = 0xff;
		memcpy(vic.peer_gid.raw + 12, peer.peer_addr, 4);
	} else {
		memcpy(vic.peer_gid.raw, peer.peer_addr, 16);
	}
}

int post_recv(uint32_t len)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	uint32_t slot = recv_posted;

	if (slot >= RECV_SLOTS)
		return failf("internal: out of receive slots");
	sge.addr = (uintptr_t)(vic.rbuf + slot * RECV_SLOT);
	sge.length = len;
	sge.lkey = vic.rmr->lkey;
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(vic.qp, &wr, &bad))
		return failf("ibv_post_recv: %s", strerror(errno));
	recv_posted++;
	return 0;
}

int qp_modify(struct ibv_qp_attr *a, int mask, const char *what)
{
	errno = ibv_modify_qp(vic.qp, a, mask);
	if (errno)
		return failf("modify_qp to %s: %s", what, strerror(errno));
	return 0;
}

/* The victim QP's rate limit: its READ responses are paced to it too. */
static int rate_limit(uint32_t kbps)
{
	struct ibv_qp_rate_limit_attr r = { .rate_limit = kbps };
	int err = ibv_modify_qp_rate_limit(vic.qp, &r);

	CHECK(!err, "ibv_modify_qp_rate_limit(%u kbit/s): %s", kbps, strerror(err));
	return 0;
}

/* A fresh victim QP and CQ, in RTS, connected to the peer's claimed QPN. */
int vic_up(const struct vconf *c)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = c->uc ? IBV_QPT_UC : IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = RECV_SLOTS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	unsigned int i;
	int mask;

	vic.cq = ibv_create_cq(vic.ctx, 64, NULL, NULL, 0);
	if (!vic.cq)
		return failf("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = vic.cq;
	vic.qp = ibv_create_qp(vic.pd, &ia);
	if (!vic.qp)
		return failf("ibv_create_qp: %s", strerror(errno));
	vic.qpn = vic.qp->qp_num;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = c->uc ? IBV_ACCESS_REMOTE_WRITE :
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC | ACCESS_FLUSH_GLOBAL |
			    ACCESS_FLUSH_PERSISTENT;
	TRY(qp_modify(&a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		      "INIT"));
	recv_posted = 0;
	recv_len = c->recv_len ? c->recv_len : RECV_SLOT;
	for (i = 0; i < c->nrecv; i++)
		TRY(post_recv(recv_len));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = c->epsn;
	a.max_dest_rd_atomic = c->rd_atomic ? c->rd_atomic : 1;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = vic.peer_gid;
	a.ah_attr.grh.sgid_index = (uint8_t)opt.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (!c->uc)	/* UC has neither READs, atomics nor RNR NAKs */
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	TRY(qp_modify(&a, mask, "RTR"));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	if (c->uc)	/* nor ACKs: no timeout, no retries */
		return qp_modify(&a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
	a.timeout = c->req_attrs ? c->timeout : 14;
	a.retry_cnt = c->req_attrs ? c->retry_cnt : 7;
	a.rnr_retry = c->req_attrs ? c->rnr_retry : 7;
	a.max_rd_atomic = 1;
	TRY(qp_modify(&a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS"));
	return c->rate_kbps ? rate_limit(c->rate_kbps) : 0;
}

/* Every async event of the victim, acknowledged; @want's type counted. */
static int async_drain(enum ibv_event_type want, int *seen)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(vic.ctx, &ev)) {
		vlog("  async event %s\n", ibv_event_type_str(ev.event_type));
		if (seen && ev.event_type == want && ev.element.qp == vic.qp)
			(*seen)++;
		ibv_ack_async_event(&ev);
	}
	return 0;
}

void vic_down(void)
{
	async_drain(IBV_EVENT_COMM_EST, NULL);
	if (vic.qp)
		ibv_destroy_qp(vic.qp);
	if (vic.cq)
		ibv_destroy_cq(vic.cq);
	vic.qp = NULL;
	vic.cq = NULL;
}

/* The async event @want for the victim QP must come within the timeout. */
int expect_event(enum ibv_event_type want)
{
	struct pollfd pfd = { .fd = vic.ctx->async_fd, .events = POLLIN };
	long end = now_ms() + opt.timeout_ms;
	int seen = 0;

	while (!seen && now_ms() < end) {
		poll(&pfd, 1, 100);
		async_drain(want, &seen);
	}
	CHECK(seen, "no %s event for the victim QP", ibv_event_type_str(want));
	return 0;
}

int expect_state(enum ibv_qp_state want)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	errno = ibv_query_qp(vic.qp, &a, IBV_QP_STATE, &ia);
	CHECK(!errno, "ibv_query_qp: %s", strerror(errno));
	CHECK(a.qp_state == want, "victim QP in state %d, want %d", a.qp_state, want);
	return 0;
}

/* The next completion must come within the timeout and be this one. */
int expect_wc(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
	      uint32_t byte_len, bool imm, uint32_t imm_data, const char *what)
{
	long end = now_ms() + opt.timeout_ms;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(vic.cq, 1, &wc)) == 0 && now_ms() < end)
		usleep(1000);
	CHECK(n >= 0, "ibv_poll_cq: %d", n);
	CHECK(n == 1, "%s: no completion within %d ms", what, opt.timeout_ms);
	CHECK(wc.wr_id == wr_id && wc.status == st,
	      "%s: completion wr_id %llu status %s, want wr_id %llu %s", what,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	      (unsigned long long)wr_id, ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS)
		return 0;
	CHECK(wc.opcode == op && wc.byte_len == byte_len,
	      "%s: completion opcode %d byte_len %u, want %d %u", what, wc.opcode, wc.byte_len, op,
	      byte_len);
	CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm && (!imm || wc.imm_data == imm_data),
	      "%s: completion immediate %s 0x%08x, want %s 0x%08x", what,
	      wc.wc_flags & IBV_WC_WITH_IMM ? "yes" : "no", ntohl(wc.imm_data), imm ? "yes" : "no",
	      ntohl(imm_data));
	return 0;
}

/* No completion now (without waiting: what could make one has not been sent). */
int expect_no_wc_now(const char *after)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(vic.cq, 1, &wc);

	CHECK(n == 0, "after %s, an unexpected completion (wr_id %llu status %s)", after,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

int expect_no_wc(const char *after)
{
	struct ibv_wc wc;
	int n;

	usleep(100 * 1000);
	n = ibv_poll_cq(vic.cq, 1, &wc);
	CHECK(n == 0, "after %s, an unexpected completion (wr_id %llu status %s)", after,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

/* The receive in slot @slot holds @len bytes of @data. */
int check_recv(uint32_t slot, const uint8_t *data, uint32_t len, const char *what)
{
	CHECK(!memcmp(vic.rbuf + slot * RECV_SLOT, data, len), "%s: the received bytes differ",
	      what);
	return 0;
}

/* The receive WQEs from @from on flush (the QP went to the error state). */
int expect_flushed(uint32_t from)
{
	uint32_t i;

	for (i = from; i < recv_posted; i++)
		TRY(expect_wc(i, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false, 0,
			      "a posted receive after the error"));
	return 0;
}

/* The device's counter @name. */
int cnt_get(const char *name, long long *v)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", opt.dev,
		 name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lld", v) != 1) {
		if (f)
			fclose(f);
		return failf("cannot read %s", path);
	}
	fclose(f);
	return 0;
}

int cnt_read(long long *v)
{
	unsigned int i;

	for (i = 0; i < NCNT; i++)
		TRY(cnt_get(cnt_names[i], &v[i]));
	return 0;
}

/*
 * Counter @name reaches @want within the timeout: sroce has taken the
 * packets that move it (when nothing else shows it).
 */
int cnt_wait(const char *name, long long want, const char *what)
{
	long end = now_ms() + opt.timeout_ms;
	long long v;

	for (;;) {
		TRY(cnt_get(name, &v));
		if (v >= want)
			return 0;
		CHECK(now_ms() < end, "%s: %s at %lld after %d ms, want %lld", what, name, v,
		      opt.timeout_ms, want);
		usleep(1000);
	}
}

/* On stderr: every counter that moved, to tell why a scenario failed. */
void cnt_dump(const long long *before, const long long *after)
{
	unsigned int i;

	fprintf(stderr, "counters moved:");
	for (i = 0; i < NCNT; i++)
		if (after[i] != before[i])
			fprintf(stderr, " %s+%lld", cnt_names[i], after[i] - before[i]);
	fprintf(stderr, " (peer sent %lu, received %lu)\n", peer.sent, peer.rcvd);
}

/*
 * Compare the counters with @before: each named in @want ("name=N ...")
 * moved by N, every other one in cnt_names by 0; rx_packets by what the
 * peer sent, tx_packets by what it received.
 */
int cnt_check(const long long *before, const char *want)
{
	long long after[NCNT], w, d;
	const char *p;
	unsigned int i;
	size_t l;

	TRY(cnt_read(after));
	for (i = 0; i < NCNT; i++) {
		w = 0;
		l = strlen(cnt_names[i]);
		for (p = want; p && (p = strstr(p, cnt_names[i])); p += l)
			if ((p == want || p[-1] == ' ') && p[l] == '=')
				w = atoll(p + l + 1);
		if (!strcmp(cnt_names[i], "rx_packets"))
			w = (long long)peer.sent;
		if (!strcmp(cnt_names[i], "tx_packets"))
			w = (long long)peer.rcvd;
		d = after[i] - before[i];
		if (d != w)
			cnt_dump(before, after);
		CHECK(d == w, "counter %s moved by %lld, want %lld", cnt_names[i], d, w);
	}
	return 0;
}
