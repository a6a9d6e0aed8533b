// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_traffic - verified RC traffic that a device is torn down under.
 *
 * usage: sroce_traffic -d DEV1 [-D DEV2] [-g GID1] [-G GID2]
 *                      [-q PAIRS] [-s SIZE] [-n ROUNDS] [-i]
 *
 * Each round opens DEV1 and DEV2 (the same device for loopback), connects
 * PAIRS RC QP pairs between them (even pairs send from DEV1 to DEV2, odd
 * ones the other way), and keeps every send queue full of SENDs of SIZE
 * bytes whose contents the receiver checks word by word.  Once every pair
 * has delivered a few messages it prints "running ROUND" and goes on until
 * the device goes away under it: a completion error, a failed post or
 * IBV_EVENT_DEVICE_FATAL.  It then requires DEVICE_FATAL on a context
 * (within 60 s of the first error), prints "fatal ROUND: <what it saw
 * first>", destroys everything (nothing may hang; the objects of a device
 * that survived must be destroyed without error), closes the devices and
 * prints "closed ROUND".
 *
 * GID1 and GID2 are GID indices, or IPv4 addresses whose RoCE v2 GID to
 * use (looked up each round: a re-created device may number them anew).
 *
 * With -i, each round starts when a line arrives on stdin (the test
 * re-creates the device first); otherwise rounds start at once.  ROUNDS 0
 * (the default with -i, else 1) means until stdin ends.  A wrong byte, a
 * stall of 60 s without progress or error, or a missing DEVICE_FATAL exits
 * 1 with "FAIL: ..."; after the last round it exits 0.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define DEPTH 8			/* SENDs in flight per pair */
#define MAX_PAIRS 16
#define RUNNING_AFTER 4		/* messages per pair before "running" */
#define STALL_S 60
#define FATAL_WAIT_S 60

struct end {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
	const char *gid_addr;	/* IPv4 address whose GID to use, or NULL */
	bool fatal;
};

struct pair {
	struct ibv_qp *sqp, *rqp;	/* sender's and receiver's QP */
	struct end *se, *re;
	uint64_t next_seq;		/* of the next SEND posted */
	uint64_t recv_seq;		/* expected in the next receive */
	unsigned int outstanding;
	uint64_t done;
};

static const char *dev_name[2];
static int npairs = 2;
static size_t size = 16384;
static struct end ends[2];
static int nends;
static struct pair pairs[MAX_PAIRS];
static char first_error[256];
/* Set by the first error: nothing more is posted, completions are still
 * checked (every one polled, in order).
 */
static bool stopping;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void note_error(const char *fmt, ...)
{
	va_list ap;

	stopping = true;
	if (first_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(first_error, sizeof(first_error), fmt, ap);
	va_end(ap);
}

/* Buffers: per pair, DEPTH send slots at the sender, DEPTH receive slots
 * at the receiver, each SIZE bytes, in the owning end's one MR.
 */
static bool async_events(void);

static uint8_t *slot(const struct pair *p, bool recv, unsigned int i)
{
	size_t idx = ((size_t)(p - pairs) * 2 + recv) * DEPTH + i;

	return (recv ? p->re : p->se)->buf + idx * size;
}

static uint64_t word(const struct pair *p, uint64_t seq, size_t i)
{
	return (uint64_t)(p - pairs) << 56 ^ seq << 20 ^ i;
}

static struct ibv_context *find_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* The index of @e's RoCE v2 GID for its IPv4 address e->gid_addr. */
static int find_gid(struct end *e)
{
	union ibv_gid want = { .raw = { [10] = 0xff, [11] = 0xff } };
	int i;

	if (inet_pton(AF_INET, e->gid_addr, &want.raw[12]) != 1)
		die("-g/-G: not an index nor an IPv4 address: %s", e->gid_addr);
	for (i = 0; i < 64; i++)
		if (!ibv_query_gid(e->ctx, 1, i, &e->gid) &&
		    !memcmp(&e->gid, &want, sizeof(want)))
			return i;
	return -1;
}

static void open_end(struct end *e, const char *name)
{
	size_t len = (size_t)npairs * 2 * DEPTH * size;
	struct ibv_port_attr port;
	int i;

	/* The test adds the device before the round; its port may still be
	 * coming up and its GIDs being filled in.
	 */
	for (i = 0; i < 200; i++) {
		e->ctx = find_device(name);
		if (e->ctx && e->gid_addr)
			e->gid_index = find_gid(e);
		if (e->ctx && !ibv_query_port(e->ctx, 1, &port) &&
		    port.state == IBV_PORT_ACTIVE && e->gid_index >= 0 &&
		    !ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid) &&
		    (e->gid.global.subnet_prefix || e->gid.global.interface_id))
			break;
		if (e->ctx)
			ibv_close_device(e->ctx);
		e->ctx = NULL;
		usleep(50000);
	}
	if (!e->ctx)
		die("%s: not there or not ACTIVE with GID %d after 10 s", name,
		    e->gid_index);
	e->ch = ibv_create_comp_channel(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->ch && e->pd ?
		ibv_create_cq(e->ctx, 2 * npairs * DEPTH, NULL, e->ch, 0) : NULL;
	e->buf = aligned_alloc(4096, len);
	e->mr = e->cq && e->buf ?
		ibv_reg_mr(e->pd, e->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!e->mr)
		die("%s: setting up: %s", name, strerror(errno));
	fcntl(e->ch->fd, F_SETFL, fcntl(e->ch->fd, F_GETFL) | O_NONBLOCK);
	fcntl(e->ctx->async_fd, F_SETFL,
	      fcntl(e->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	e->fatal = false;
}

static struct ibv_qp *create_qp(struct end *e)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &a);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void connect_qp(struct ibv_qp *qp, struct end *peer, uint32_t dqpn,
		       int sgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid;
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

/* wr_id: pair << 8 | receive << 7 | slot */
static int post_recv(struct pair *p, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(p, true, i), .length = (uint32_t)size,
		.lkey = p->re->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)(p - pairs) << 8 | 1 << 7 | i,
		.sg_list = &sge, .num_sge = 1,
	}, *bad;
	int err;

	if (stopping)
		return -1;
	err = ibv_post_recv(p->rqp, &wr, &bad);
	if (err)
		note_error("post_recv on QP %u: %s", p->rqp->qp_num,
			   strerror(err));
	return err;
}

static int post_send(struct pair *p)
{
	unsigned int i = p->next_seq % DEPTH;
	uint64_t *w = (uint64_t *)slot(p, false, i);
	struct ibv_sge sge = {
		.addr = (uintptr_t)w, .length = (uint32_t)size,
		.lkey = p->se->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)(p - pairs) << 8 | i,
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	size_t k;
	int err;

	if (stopping)
		return -1;
	for (k = 0; k < size / 8; k++)
		w[k] = word(p, p->next_seq, k);
	err = ibv_post_send(p->sqp, &wr, &bad);
	if (err) {
		note_error("post_send on QP %u: %s", p->sqp->qp_num,
			   strerror(err));
		return err;
	}
	p->next_seq++;
	p->outstanding++;
	return 0;
}

/*
 * A wrong message: say what the receive buffers hold, and mark the moment
 * in the kernel log, next to the test's own marks and sroce's lines.
 */
static void wrong_data(struct pair *p, const struct ibv_wc *wc, size_t k)
{
	unsigned int i = wc->wr_id & 0x7f, j;
	const uint64_t *w = (const uint64_t *)slot(p, true, i);
	char msg[512];
	int n, fd;

	n = snprintf(msg, sizeof(msg),
		     "pair %ld (QP %u -> %u): message %llu in receive slot %u: word %zu is %#llx, sent %#llx; slots hold",
		     (long)(p - pairs), p->sqp->qp_num, p->rqp->qp_num,
		     (unsigned long long)p->recv_seq, i, k,
		     (unsigned long long)w[k],
		     (unsigned long long)word(p, p->recv_seq, k));
	for (j = 0; j < DEPTH && n > 0 && (size_t)n < sizeof(msg); j++)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %llu",
			      (unsigned long long)(*(const uint64_t *)slot(p, true, j) >> 20 & 0xfffffffffULL));
	async_events();
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd >= 0) {
		dprintf(fd, "sroce_traffic: wrong data: %s (first error: %s)\n",
			msg, first_error[0] ? first_error : "none");
		close(fd);
	}
	die("%s; first error: %s", msg, first_error[0] ? first_error : "none");
}

static void check_recv(struct pair *p, const struct ibv_wc *wc)
{
	unsigned int i = wc->wr_id & 0x7f;
	const uint64_t *w = (const uint64_t *)slot(p, true, i);
	size_t k;

	if (wc->byte_len != size)
		die("pair %ld: message %llu has %u bytes, sent %zu",
		    (long)(p - pairs), (unsigned long long)p->recv_seq,
		    wc->byte_len, size);
	for (k = 0; k < size / 8; k++)
		if (w[k] != word(p, p->recv_seq, k))
			wrong_data(p, wc, k);
	p->recv_seq++;
	p->done++;
	post_recv(p, i);
}

/* Handle one completion (an error one stops the traffic). */
static void handle_wc(const struct ibv_wc *wc)
{
	unsigned int pi = (unsigned int)(wc->wr_id >> 8);
	struct pair *p;

	if (pi >= (unsigned int)npairs)
		die("completion with impossible wr_id %#llx (QP %u, status %s)",
		    (unsigned long long)wc->wr_id, wc->qp_num,
		    ibv_wc_status_str(wc->status));
	p = &pairs[pi];
	if (wc->status != IBV_WC_SUCCESS) {
		note_error("QP %u: %s completion %s", wc->qp_num,
			   wc->wr_id & 0x80 ? "receive" : "send",
			   ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->wr_id & 0x80) {
		if (wc->opcode != IBV_WC_RECV || wc->qp_num != p->rqp->qp_num)
			die("pair %u: bad receive completion (opcode %d QP %u)",
			    pi, wc->opcode, wc->qp_num);
		check_recv(p, wc);
		return;
	}
	if (wc->opcode != IBV_WC_SEND || wc->qp_num != p->sqp->qp_num)
		die("pair %u: bad send completion (opcode %d QP %u)", pi,
		    wc->opcode, wc->qp_num);
	p->outstanding--;
	post_send(p);
}

/*
 * Completions of both ends, every one polled handled; -1 once the traffic
 * stopped, else how many.
 */
static int drain(void)
{
	struct ibv_wc wc[16];
	int e, n, i, total = 0;

	for (e = 0; e < nends; e++) {
		if (ends[e].fatal)
			return -1;
		n = ibv_poll_cq(ends[e].cq, 16, wc);
		if (n < 0) {
			note_error("ibv_poll_cq on %s: %d", dev_name[e], n);
			return -1;
		}
		for (i = 0; i < n; i++)
			handle_wc(&wc[i]);
		total += n;
	}
	return stopping ? -1 : total;
}

/* Read pending async events; true once DEVICE_FATAL arrived on an end. */
static bool async_events(void)
{
	struct ibv_async_event ev;
	bool fatal = false;
	int e;

	for (e = 0; e < nends; e++) {
		while (!ibv_get_async_event(ends[e].ctx, &ev)) {
			if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
				ends[e].fatal = true;
				note_error("%s: IBV_EVENT_DEVICE_FATAL",
					   dev_name[e]);
			}
			ibv_ack_async_event(&ev);
		}
		fatal |= ends[e].fatal;
	}
	return fatal;
}

/* Wait for completion or async events on every end, up to @ms. */
static void wait_events(int ms)
{
	struct pollfd fds[4];
	struct ibv_cq *cq;
	void *cq_ctx;
	int e, n = 0;

	for (e = 0; e < nends; e++) {
		fds[n++] = (struct pollfd){ .fd = ends[e].ch->fd,
					    .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = ends[e].ctx->async_fd,
					    .events = POLLIN };
	}
	if (poll(fds, (nfds_t)n, ms) <= 0)
		return;
	for (e = 0; e < nends; e++) {
		if (!(fds[2 * e].revents & POLLIN))
			continue;
		if (!ibv_get_cq_event(ends[e].ch, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

static bool all_running(void)
{
	int i;

	for (i = 0; i < npairs; i++)
		if (pairs[i].done < RUNNING_AFTER)
			return false;
	return true;
}

static void traffic(int round)
{
	double last_progress = now(), deadline;
	bool running = false, err = false;
	int e, i, n;

	for (i = 0; i < npairs && !err; i++) {
		for (n = 0; n < DEPTH && !err; n++)
			err = post_recv(&pairs[i], (unsigned int)n) != 0;
		for (n = 0; n < DEPTH && !err; n++)
			err = post_send(&pairs[i]) != 0;
	}
	while (!err) {
		n = drain();
		if (n < 0 || async_events())
			break;
		if (n > 0) {
			last_progress = now();
			if (!running && all_running()) {
				running = true;
				say("running %d", round);
			}
			continue;
		}
		if (now() - last_progress > STALL_S)
			die("round %d: no progress and no error for %d s",
			    round, STALL_S);
		for (e = 0; e < nends; e++)
			if (ibv_req_notify_cq(ends[e].cq, 0))
				note_error("ibv_req_notify_cq on %s: %s",
					   dev_name[e], strerror(errno));
		n = drain();
		if (n < 0)
			break;
		if (n == 0)
			wait_events(200);
	}
	/* The device went away, or is going: DEVICE_FATAL must follow. */
	deadline = now() + FATAL_WAIT_S;
	while (!async_events()) {
		if (now() > deadline)
			die("round %d: '%s' but no IBV_EVENT_DEVICE_FATAL in %d s",
			    round, first_error, FATAL_WAIT_S);
		wait_events(200);
		drain();
	}
	if (!running)
		say("note: round %d ended before every pair ran", round);
}

static void teardown(int round)
{
	uint64_t total = 0;
	int e, i;

	/* A device that went away refuses its destroys (EIO); that of a
	 * surviving one must succeed.
	 */
	for (i = 0; i < npairs; i++) {
		total += pairs[i].done;
		if (ibv_destroy_qp(pairs[i].sqp) && !pairs[i].se->fatal)
			die("destroying a QP of a live device: %s",
			    strerror(errno));
		if (ibv_destroy_qp(pairs[i].rqp) && !pairs[i].re->fatal)
			die("destroying a QP of a live device: %s",
			    strerror(errno));
	}
	for (e = 0; e < nends; e++) {
		struct end *x = &ends[e];

		int err = ibv_dereg_mr(x->mr);

		err = ibv_destroy_cq(x->cq) ?: err;
		err = ibv_destroy_comp_channel(x->ch) ?: err;
		err = ibv_dealloc_pd(x->pd) ?: err;
		if (err && !x->fatal)
			die("destroying the objects of live %s: %s",
			    dev_name[e], strerror(err));
		if (ibv_close_device(x->ctx))
			die("ibv_close_device(%s): %s", dev_name[e],
			    strerror(errno));
		free(x->buf);
	}
	say("closed %d (%llu messages verified)", round,
	    (unsigned long long)total);
}

static void run_round(int round)
{
	struct pair *p;
	int e, i;

	first_error[0] = 0;
	stopping = false;
	for (e = 0; e < nends; e++)
		open_end(&ends[e], dev_name[e]);
	for (i = 0; i < npairs; i++) {
		p = &pairs[i];
		memset(p, 0, sizeof(*p));
		p->se = &ends[i % 2 ? nends - 1 : 0];
		p->re = &ends[i % 2 ? 0 : nends - 1];
		p->sqp = create_qp(p->se);
		p->rqp = create_qp(p->re);
	}
	for (i = 0; i < npairs; i++) {
		p = &pairs[i];
		connect_qp(p->sqp, p->re, p->rqp->qp_num, p->se->gid_index);
		connect_qp(p->rqp, p->se, p->sqp->qp_num, p->re->gid_index);
	}
	traffic(round);
	say("fatal %d: %s", round, first_error);
	teardown(round);
}

int main(int argc, char **argv)
{
	const char *gid[2] = { "1", NULL };
	int rounds = -1, round, opt, e;
	bool wait_stdin = false;
	char line[64];

	while ((opt = getopt(argc, argv, "d:D:g:G:q:s:n:i")) != -1) {
		switch (opt) {
		case 'd': dev_name[0] = optarg; break;
		case 'D': dev_name[1] = optarg; break;
		case 'g': gid[0] = optarg; break;
		case 'G': gid[1] = optarg; break;
		case 'q': npairs = atoi(optarg); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'n': rounds = atoi(optarg); break;
		case 'i': wait_stdin = true; break;
		default: die("usage: %s -d DEV1 [-D DEV2] [-g GID] [-G GID2] [-q PAIRS] [-s SIZE] [-n ROUNDS] [-i]",
			     argv[0]);
		}
	}
	if (rounds < 0)
		rounds = wait_stdin ? 0 : 1;
	if (!dev_name[0] || npairs < 1 || npairs > MAX_PAIRS ||
	    size < 8 || size % 8 || size > (1 << 22))
		die("bad arguments");
	nends = dev_name[1] && strcmp(dev_name[0], dev_name[1]) ? 2 : 1;
	if (!gid[1])
		gid[1] = gid[0];
	for (e = 0; e < nends; e++) {
		if (strchr(gid[e], '.'))
			ends[e].gid_addr = gid[e];
		else
			ends[e].gid_index = atoi(gid[e]);
	}
	for (round = 1; !rounds || round <= rounds; round++) {
		if (wait_stdin && !fgets(line, sizeof(line), stdin))
			break;
		run_round(round);
	}
	return 0;
}
