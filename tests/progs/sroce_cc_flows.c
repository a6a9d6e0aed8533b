// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_cc_flows - bulk flows from one device to another, every byte
 * checked, their throughput over time measured: the cc group's traffic.
 *
 * usage: sroce_cc_flows -d DEV1 -D DEV2 [-g GID1] [-G GID2] [-n FLOWS]
 *                       [-t SECONDS] [-m write|send|read|ud] [-s SIZE]
 *                       [-q DEPTH] [-r RATE_KBPS] [-i INTERVAL_MS]
 *                       [-o CSV] [-T TIMEOUT] [-S STAGGER_S]
 *
 * One process opens DEV1 and DEV2 (in the shared RDMA namespace mode every
 * device is visible from every network namespace), connects FLOWS QP pairs
 * between them (default 1, at most 16) and moves data from DEV1's side to
 * DEV2's for SECONDS (default 20), keeping every flow's send queue DEPTH
 * work requests deep (default 16; 64 for ud).  Flow I starts I x STAGGER_S
 * seconds after the first (default 0), so that each finds the others
 * going.  The modes:
 *
 *   write  RDMA WRITE WITH IMMEDIATE of SIZE bytes (default 64 KiB) from
 *          DEV1 into a ring of 2 x DEPTH slots on DEV2; the immediate data
 *          is the message's number, and each receive completion has the
 *          slot it names checked.  A slot is written again only once its
 *          last message was checked.
 *   send   SENDs of SIZE bytes into 2 x DEPTH receives, each checked.
 *   read   the QP on DEV2 issues RDMA READs of SIZE bytes from a ring of
 *          DEPTH slots in DEV1's memory (filled by the process before each
 *          READ is posted) and checks what each READ brought: the data
 *          still flows from DEV1 to DEV2, as READ responses.
 *   ud     UD SENDs of SIZE bytes (default and at most the path MTU) from
 *          DEV1 to DEV2, 2 x DEPTH receives posted; datagrams may be lost,
 *          every one that arrives is checked, and must be one that was
 *          sent.
 *
 * Each message is a pattern of its flow and number: word 0 holds the flow
 * (bits 48-63) and the message's number (bits 0-47), every further 64-bit
 * word a hash of flow, number and word index, so that a corrupted byte
 * always shows and a stale, misplaced or other flow's packet shows but
 * for a chance of 2^-64 a word.
 *
 * GID1 and GID2 are GID indices, or IPv4 or IPv6 addresses whose RoCE v2
 * GID to use (default: index 1).  The path MTU is the smaller of the two
 * ports' active MTUs.  RC QPs get a local ACK timeout of 4.096 us x
 * 2^TIMEOUT (-T, default 17: 0.54 s, longer than any queue of the cc
 * group's bottleneck) and 7 retries, so that RC rides out the drops of an
 * overloaded queue under emulation.
 *
 * -r RATE_KBPS prints DEV1's packet pacing capabilities ("pacing ...",
 * from ibv_query_device_ex) and sets each flow's rate limit on the QP that
 * sends the data -- DEV1's QP, the READ responder in read mode -- with
 * ibv_modify_qp_rate_limit(); failing that fails the run.
 *
 * The delivered bytes of each flow (counted when checked) are kept per
 * interval of INTERVAL_MS (default 500), over the whole intervals that fit
 * in SECONDS (the measurement); -o writes them as CSV
 * ("time_s,flow,bytes": the interval's end, the flow, the bytes checked
 * in it).  Once every flow has delivered a message it prints "running".
 * After SECONDS it stops posting, waits for what is in flight (checked
 * too, but counted as "drained", outside the measurement), and prints:
 *
 *   flow I bytes B mbps M      per flow, over the whole measurement
 *   total_mbps M               all flows, over the whole measurement
 *   last_half_mbps M           all flows, over its last half
 *   jain J                     Jain's fairness index of the flows' bytes
 *                              in the last half: (sum x)^2 / (n sum x^2)
 *   min_share S                the smallest flow's bytes in the last half
 *                              over an equal share of them
 *   drained B                  bytes checked after the measurement
 *   sent N received M reordered R  (ud) datagrams sent, arrived, and
 *                              arrived with a number not above the last
 *
 * A wrong byte, a completion in error, an asynchronous error event, a
 * datagram that was never sent, or a flow with nothing checked for 30 s
 * exits 1 with "FAIL: ...".
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define MAX_FLOWS 16
#define STALL_S 30
#define UD_QUIET_S 2		/* ud: the drain ends after this long with no datagram */
#define GRH 40
#define QKEY 0x11111111
#define RECV_BIT (1ull << 31)

enum mode { WRITE, SEND, READ, UD };

static const char *const mode_names[] = { "write", "send", "read", "ud" };

struct end {
	const char *name;
	const char *gid_arg;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	struct ibv_device_attr attr;
};

struct flow {
	struct ibv_qp *qp1, *qp2;	/* on DEV1 and on DEV2 */
	struct ibv_qp *req;		/* the one that posts: qp2 in read mode */
	struct ibv_ah *ah;		/* ud: DEV1's address of qp2 */
	uint64_t posted;		/* messages posted */
	uint64_t verified;		/* checked at DEV2 (ud: arrived) */
	unsigned int inflight;		/* work requests on the send queue */
	uint64_t bytes;			/* checked during the measurement */
	uint64_t drained;		/* checked after it */
	double start;			/* when it may post its first */
	double last_progress;
	uint64_t last_seq;		/* ud: the last number that arrived */
	uint64_t reordered;		/* ud */
};

static enum mode mode = WRITE;
static struct end ends[2];
static struct flow flows[MAX_FLOWS];
static int nflows = 1;
static unsigned int depth;
static unsigned int slots;		/* receive (write/send/ud) or READ slots per flow */
static size_t size;
static size_t rslot;			/* bytes of one slot on DEV2 */
static unsigned int rd_atomic;
static int ack_timeout = 17;
static double t0, t_end;
static unsigned int nint, interval_ms = 500, stagger_s;
static uint64_t *ibytes;		/* [interval][flow] */
static bool stopping, running;
static double last_rx;			/* ud: the last datagram's arrival */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the pattern ---------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

static uint64_t word(unsigned int flow, uint64_t seq, size_t k)
{
	if (!k)
		return (uint64_t)flow << 48 | (seq & 0xffffffffffffull);
	return mix(mix((uint64_t)flow << 48 ^ seq) ^ (uint64_t)k * 0x9e3779b97f4a7c15ull);
}

static void fill(uint8_t *p, unsigned int flow, uint64_t seq)
{
	uint64_t *w = (uint64_t *)p;
	size_t k;

	for (k = 0; k < size / 8; k++)
		w[k] = word(flow, seq, k);
}

/* Say what a wrong message holds, in the output and the kernel log. */
static __attribute__((noreturn))
void wrong_data(unsigned int fi, uint64_t seq, unsigned int s, size_t k,
		const uint64_t *w)
{
	char msg[384];
	int fd;

	snprintf(msg, sizeof(msg),
		 "flow %u (QP %u -> %u), %s message %llu in slot %u: word %zu (byte %zu) is %#llx, expected %#llx; word 0 is %#llx (flow %llu message %llu)",
		 fi, flows[fi].qp1->qp_num, flows[fi].qp2->qp_num, mode_names[mode],
		 (unsigned long long)seq, s, k, k * 8, (unsigned long long)w[k],
		 (unsigned long long)word(fi, seq, k), (unsigned long long)w[0],
		 (unsigned long long)(w[0] >> 48),
		 (unsigned long long)(w[0] & 0xffffffffffffull));
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd >= 0) {
		dprintf(fd, "sroce_cc_flows: wrong data: %s\n", msg);
		close(fd);
	}
	die("%s", msg);
}

static void check(unsigned int fi, uint64_t seq, unsigned int s, const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t k;

	for (k = 0; k < size / 8; k++)
		if (w[k] != word(fi, seq, k))
			wrong_data(fi, seq, s, k, w);
}

/* --- buffers: DEPTH slots per flow on DEV1, SLOTS per flow on DEV2 -------- */

static uint8_t *slot1(unsigned int fi, uint64_t seq)
{
	return ends[0].buf + ((size_t)fi * depth + seq % depth) * size;
}

static uint8_t *slot2(unsigned int fi, unsigned int s)
{
	return ends[1].buf + ((size_t)fi * slots + s) * rslot;
}

/* --- setting up ----------------------------------------------------------- */

static int find_gid(struct end *e)
{
	union ibv_gid want = { .raw = { [10] = 0xff, [11] = 0xff } }, g;
	char t[64];
	int i;

	if (inet_pton(AF_INET, e->gid_arg, &want.raw[12]) != 1 &&
	    inet_pton(AF_INET6, e->gid_arg, want.raw) != 1)
		die("-g/-G: not an index nor an IP address: %s", e->gid_arg);
	for (i = 0; i < 256; i++) {
		char path[256];
		FILE *f;

		if (ibv_query_gid(e->ctx, 1, i, &g) || memcmp(&g, &want, sizeof(g)))
			continue;
		/* The RoCE v2 entry of the address (each has a v1 twin). */
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d",
			 e->name, i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(t, sizeof(t), f) && !strncmp(t, "RoCE v2", 7)) {
			fclose(f);
			return i;
		}
		fclose(f);
	}
	die("%s: no RoCE v2 GID for %s", e->name, e->gid_arg);
}

static void open_end(struct end *e, size_t len, int cqe)
{
	struct ibv_port_attr port;
	int access = IBV_ACCESS_LOCAL_WRITE;

	e->ctx = open_device(e->name);
	if (ibv_query_device(e->ctx, &e->attr) || ibv_query_port(e->ctx, 1, &port))
		die("%s: query: %s", e->name, strerror(errno));
	if (port.state != IBV_PORT_ACTIVE)
		die("%s: port 1 is not ACTIVE", e->name);
	e->mtu = port.active_mtu;
	if (strchr(e->gid_arg, '.') || strchr(e->gid_arg, ':'))
		e->gid_index = find_gid(e);
	else
		e->gid_index = atoi(e->gid_arg);
	if (ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid))
		die("%s: GID %d: %s", e->name, e->gid_index, strerror(errno));
	if (mode == WRITE)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (mode == READ)
		access |= IBV_ACCESS_REMOTE_READ;
	e->ch = ibv_create_comp_channel(e->ctx);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->ch && e->pd ? ibv_create_cq(e->ctx, cqe, NULL, e->ch, 0) : NULL;
	e->buf = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
	e->mr = e->cq && e->buf ? ibv_reg_mr(e->pd, e->buf, len, access) : NULL;
	if (!e->mr)
		die("%s: setting up: %s", e->name, strerror(errno));
	memset(e->buf, 0xa5, len);
	fcntl(e->ch->fd, F_SETFL, fcntl(e->ch->fd, F_GETFL) | O_NONBLOCK);
	fcntl(e->ctx->async_fd, F_SETFL,
	      fcntl(e->ctx->async_fd, F_GETFL) | O_NONBLOCK);
}

static struct ibv_qp *create_qp(struct end *e, bool sends, bool recvs)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq,
		.qp_type = mode == UD ? IBV_QPT_UD : IBV_QPT_RC,
		.cap = { .max_send_wr = sends ? depth : 1,
			 .max_recv_wr = recvs ? slots : 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(e->pd, &a);

	if (!qp)
		die("%s: ibv_create_qp: %s", e->name, strerror(errno));
	return qp;
}

static enum ibv_mtu path_mtu(void)
{
	return ends[0].mtu < ends[1].mtu ? ends[0].mtu : ends[1].mtu;
}

static void connect_rc(struct ibv_qp *qp, struct end *e, struct end *peer,
		       uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			(mode == WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
			(mode == READ ? IBV_ACCESS_REMOTE_READ : 0),
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu();
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = (uint8_t)rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = (uint8_t)rd_atomic;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("%s: connecting QP %u: %s", e->name, qp->qp_num, strerror(err));
}

static void connect_ud(struct ibv_qp *qp, struct end *e)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	err = err ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (err)
		die("%s: bringing UD QP %u up: %s", e->name, qp->qp_num, strerror(err));
}

static struct ibv_ah *create_ah(void)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = ends[1].gid, .sgid_index = (uint8_t)ends[0].gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_ah *ah = ibv_create_ah(ends[0].pd, &aa);

	if (!ah)
		die("%s: ibv_create_ah: %s", ends[0].name, strerror(errno));
	return ah;
}

/* -r: DEV1's pacing capabilities, then each flow's limit on DEV1's QP. */
static void set_rate_limits(uint32_t kbps)
{
	struct ibv_device_attr_ex ax;
	int err, i;

	err = ibv_query_device_ex(ends[0].ctx, NULL, &ax);
	if (err)
		die("%s: ibv_query_device_ex: %s", ends[0].name, strerror(err));
	printf("pacing %s qp_rate_limit_min %u qp_rate_limit_max %u supported_qpts %#x\n",
	       ends[0].name, ax.packet_pacing_caps.qp_rate_limit_min,
	       ax.packet_pacing_caps.qp_rate_limit_max,
	       ax.packet_pacing_caps.supported_qpts);
	for (i = 0; i < nflows; i++) {
		struct ibv_qp_rate_limit_attr ra = { .rate_limit = kbps };

		err = ibv_modify_qp_rate_limit(flows[i].qp1, &ra);
		if (err)
			die("%s: ibv_modify_qp_rate_limit(QP %u, %u kbps): %s",
			    ends[0].name, flows[i].qp1->qp_num, kbps, strerror(err));
		printf("rate_limit flow %d qp %u kbps %u\n", i, flows[i].qp1->qp_num, kbps);
	}
	fflush(stdout);
}

static void setup(uint32_t rate_kbps)
{
	size_t len1, len2;
	int i, cqe1, cqe2;

	slots = mode == READ ? depth : 2 * depth;
	rslot = size + (mode == UD ? GRH : 0);
	len1 = (size_t)nflows * depth * size;
	len2 = (size_t)nflows * slots * rslot;
	cqe1 = nflows * (int)depth + 1;
	cqe2 = nflows * (int)slots + 1;
	open_end(&ends[0], len1, cqe1);
	open_end(&ends[1], len2, cqe2);
	if (mode == UD && size > 128u << path_mtu())
		die("ud: -s %zu is more than the path MTU, %u", size, 128u << path_mtu());
	rd_atomic = 16;
	if (mode == READ) {
		if ((unsigned int)ends[0].attr.max_qp_rd_atom < rd_atomic)
			rd_atomic = (unsigned int)ends[0].attr.max_qp_rd_atom;
		if ((unsigned int)ends[1].attr.max_qp_init_rd_atom < rd_atomic)
			rd_atomic = (unsigned int)ends[1].attr.max_qp_init_rd_atom;
		if (!rd_atomic)
			die("the devices offer no READ depth");
	}
	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		f->qp1 = create_qp(&ends[0], mode != READ, false);
		f->qp2 = create_qp(&ends[1], mode == READ, mode != READ);
		f->req = mode == READ ? f->qp2 : f->qp1;
		if (mode == UD) {
			connect_ud(f->qp1, &ends[0]);
			connect_ud(f->qp2, &ends[1]);
			f->ah = create_ah();
		} else {
			connect_rc(f->qp1, &ends[0], &ends[1], f->qp2->qp_num);
			connect_rc(f->qp2, &ends[1], &ends[0], f->qp1->qp_num);
		}
	}
	printf("flows %d mode %s size %zu depth %u path_mtu %u %s gid %d -> %s gid %d\n",
	       nflows, mode_names[mode], size, depth, 128u << path_mtu(),
	       ends[0].name, ends[0].gid_index, ends[1].name, ends[1].gid_index);
	fflush(stdout);
	if (rate_kbps)
		set_rate_limits(rate_kbps);
}

/* --- posting -------------------------------------------------------------- */

static void post_recv(unsigned int fi, unsigned int s)
{
	struct flow *f = &flows[fi];
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot2(fi, s), .length = (uint32_t)rslot,
		.lkey = ends[1].mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)fi << 32 | RECV_BIT | s,
		/* write: the immediate needs a receive, the data none */
		.sg_list = &sge, .num_sge = mode == WRITE ? 0 : 1,
	}, *bad;
	int err = ibv_post_recv(f->qp2, &wr, &bad);

	if (err)
		die("flow %u: ibv_post_recv on QP %u: %s", fi, f->qp2->qp_num, strerror(err));
}

/* Post one message: the next one, flow @fi's number f->posted. */
static void post_one(unsigned int fi)
{
	struct flow *f = &flows[fi];
	uint64_t seq = f->posted;
	unsigned int s = (unsigned int)(seq % slots);
	uint8_t *src = slot1(fi, seq);
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = (uint32_t)size,
		.lkey = ends[0].mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)fi << 32 | s,
		.sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	fill(src, fi, seq);
	switch (mode) {
	case WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl((uint32_t)seq);
		wr.wr.rdma.remote_addr = (uintptr_t)slot2(fi, s);
		wr.wr.rdma.rkey = ends[1].mr->rkey;
		break;
	case SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case READ:
		/* Into DEV2's slot, from the DEV1 slot just filled. */
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)slot2(fi, s);
		sge.lkey = ends[1].mr->lkey;
		wr.wr.rdma.remote_addr = (uintptr_t)src;
		wr.wr.rdma.rkey = ends[0].mr->rkey;
		break;
	case UD:
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = f->ah;
		wr.wr.ud.remote_qpn = f->qp2->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		break;
	}
	err = ibv_post_send(f->req, &wr, &bad);
	if (err)
		die("flow %u: ibv_post_send on QP %u: %s", fi, f->req->qp_num, strerror(err));
	f->posted++;
	f->inflight++;
}

/*
 * Keep the send queue full.  write and send: a receive slot is used again
 * only once its last message was checked (posted - verified < slots).
 */
static void post_more(unsigned int fi)
{
	struct flow *f = &flows[fi];

	if (now() < f->start)
		return;
	while (!stopping && f->inflight < depth &&
	       (mode == UD || mode == READ || f->posted - f->verified < slots))
		post_one(fi);
}

/* --- completions ---------------------------------------------------------- */

static void delivered(unsigned int fi, size_t bytes)
{
	struct flow *f = &flows[fi];
	double t = now();
	unsigned int i, iv;

	f->verified++;
	f->last_progress = t;
	if (t < t_end) {
		iv = (unsigned int)((t - t0) * 1000 / interval_ms);
		if (iv >= nint)		/* rounding, at the very end */
			iv = nint - 1;
		f->bytes += bytes;
		ibytes[(size_t)iv * nflows + fi] += bytes;
	} else {
		f->drained += bytes;
	}
	if (!running) {
		for (i = 0; i < (unsigned int)nflows && flows[i].verified; i++)
			;
		if (i == (unsigned int)nflows) {
			running = true;
			printf("running\n");
			fflush(stdout);
		}
	}
}

static void wc_error(const struct ibv_wc *wc, const char *where)
{
	die("%s: completion of QP %u (wr_id %#llx, opcode %d): %s (vendor error %#x)",
	    where, wc->qp_num, (unsigned long long)wc->wr_id, wc->opcode,
	    ibv_wc_status_str(wc->status), wc->vendor_err);
}

/* A completion on DEV1: a send of a write, send or ud flow. */
static void wc_dev1(const struct ibv_wc *wc)
{
	unsigned int fi = (unsigned int)(wc->wr_id >> 32);
	struct flow *f = &flows[fi];
	enum ibv_wc_opcode want = mode == WRITE ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;

	if (wc->status != IBV_WC_SUCCESS)
		wc_error(wc, ends[0].name);
	if (mode == READ || fi >= (unsigned int)nflows || wc->opcode != want ||
	    wc->qp_num != f->qp1->qp_num || wc->wr_id & RECV_BIT || !f->inflight)
		die("%s: unexpected completion: QP %u wr_id %#llx opcode %d",
		    ends[0].name, wc->qp_num, (unsigned long long)wc->wr_id, wc->opcode);
	f->inflight--;
}

/* ud: a datagram; its number is in its first word. */
static void wc_ud(unsigned int fi, const struct ibv_wc *wc)
{
	struct flow *f = &flows[fi];
	unsigned int s = (unsigned int)(wc->wr_id & 0xffff);
	const uint8_t *p = slot2(fi, s) + GRH;
	uint64_t w0 = *(const uint64_t *)p, seq = w0 & 0xffffffffffffull;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len != GRH + size ||
	    !(wc->wc_flags & IBV_WC_GRH) || wc->src_qp != f->qp1->qp_num)
		die("flow %u: datagram of %u bytes (opcode %d, flags %#x) from QP %u; expected %zu from QP %u",
		    fi, wc->byte_len, wc->opcode, wc->wc_flags, wc->src_qp,
		    GRH + size, f->qp1->qp_num);
	if (w0 >> 48 != fi || seq >= f->posted)
		die("flow %u: a datagram that was never sent: word 0 %#llx (%llu sent)",
		    fi, (unsigned long long)w0, (unsigned long long)f->posted);
	check(fi, seq, s, p);
	if (f->verified && seq <= f->last_seq)
		f->reordered++;
	f->last_seq = seq;
	last_rx = now();
	delivered(fi, size);
	post_recv(fi, s);
}

/* A completion on DEV2: a receive, or (read) a READ. */
static void wc_dev2(const struct ibv_wc *wc)
{
	unsigned int fi = (unsigned int)(wc->wr_id >> 32);
	unsigned int s = (unsigned int)(wc->wr_id & 0xffff);
	struct flow *f = &flows[fi];
	uint64_t seq;

	if (wc->status != IBV_WC_SUCCESS)
		wc_error(wc, ends[1].name);
	if (fi >= (unsigned int)nflows || wc->qp_num != f->qp2->qp_num ||
	    !(wc->wr_id & RECV_BIT) != (mode == READ))
		die("%s: unexpected completion: QP %u wr_id %#llx opcode %d",
		    ends[1].name, wc->qp_num, (unsigned long long)wc->wr_id, wc->opcode);
	if (mode == UD) {
		wc_ud(fi, wc);
		return;
	}
	/* RC: in order; the next one to check is number f->verified. */
	seq = f->verified;
	if (s != seq % slots)
		die("flow %u: message %llu completed in slot %u, expected %u",
		    fi, (unsigned long long)seq, s, (unsigned int)(seq % slots));
	switch (mode) {
	case WRITE:
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    ntohl(wc->imm_data) != (uint32_t)seq || wc->byte_len != size)
			die("flow %u: message %llu: WRITE's receive completion has opcode %d flags %#x immediate %u length %u; expected immediate %u length %zu",
			    fi, (unsigned long long)seq, wc->opcode, wc->wc_flags,
			    ntohl(wc->imm_data), wc->byte_len, (uint32_t)seq, size);
		/* The immediate names the slot: the message it carries. */
		s = ntohl(wc->imm_data) % slots;
		break;
	case SEND:
		if (wc->opcode != IBV_WC_RECV || wc->byte_len != size)
			die("flow %u: message %llu: receive completion opcode %d length %u, expected %zu",
			    fi, (unsigned long long)seq, wc->opcode, wc->byte_len, size);
		break;
	case READ:
		if (wc->opcode != IBV_WC_RDMA_READ || !f->inflight)
			die("flow %u: READ %llu: completion opcode %d",
			    fi, (unsigned long long)seq, wc->opcode);
		f->inflight--;
		break;
	case UD:
		break;
	}
	check(fi, seq, s, slot2(fi, s));
	delivered(fi, size);
	if (mode == WRITE || mode == SEND)
		post_recv(fi, s);
}

/* Poll both CQs; how many completions. */
static int poll_cqs(void)
{
	struct ibv_wc wc[32];
	int e, i, n, total = 0;

	for (e = 0; e < 2; e++) {
		n = ibv_poll_cq(ends[e].cq, 32, wc);
		if (n < 0)
			die("%s: ibv_poll_cq: %d", ends[e].name, n);
		for (i = 0; i < n; i++)
			(e ? wc_dev2 : wc_dev1)(&wc[i]);
		total += n;
	}
	for (i = 0; i < nflows; i++)
		post_more((unsigned int)i);
	return total;
}

static void async_events(void)
{
	struct ibv_async_event ev;
	int e;

	for (e = 0; e < 2; e++)
		while (!ibv_get_async_event(ends[e].ctx, &ev)) {
			enum ibv_event_type t = ev.event_type;

			ibv_ack_async_event(&ev);
			if (t != IBV_EVENT_PORT_ACTIVE && t != IBV_EVENT_GID_CHANGE &&
			    t != IBV_EVENT_LID_CHANGE && t != IBV_EVENT_PKEY_CHANGE &&
			    t != IBV_EVENT_SM_CHANGE && t != IBV_EVENT_CLIENT_REREGISTER)
				die("%s: asynchronous event: %s", ends[e].name,
				    ibv_event_type_str(t));
		}
}

static void wait_events(int ms)
{
	struct pollfd fds[4];
	struct ibv_cq *cq;
	void *cq_ctx;
	int e;

	for (e = 0; e < 2; e++) {
		if (ibv_req_notify_cq(ends[e].cq, 0))
			die("%s: ibv_req_notify_cq: %s", ends[e].name, strerror(errno));
		fds[2 * e] = (struct pollfd){ .fd = ends[e].ch->fd, .events = POLLIN };
		fds[2 * e + 1] = (struct pollfd){ .fd = ends[e].ctx->async_fd,
						  .events = POLLIN };
	}
	/* What came between the last poll and the arming. */
	if (poll_cqs())
		return;
	if (poll(fds, 4, ms) <= 0)
		return;
	for (e = 0; e < 2; e++)
		if ((fds[2 * e].revents & POLLIN) &&
		    !ibv_get_cq_event(ends[e].ch, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
}

static bool finished(double t)
{
	int i;

	for (i = 0; i < nflows; i++) {
		if (flows[i].inflight)
			return false;
		if (mode != UD && flows[i].verified != flows[i].posted)
			return false;
	}
	return mode != UD || t - last_rx >= UD_QUIET_S;
}

static void check_stalls(double t)
{
	int i;

	for (i = 0; i < nflows; i++) {
		struct flow *f = &flows[i];

		if (t > f->start && t - f->last_progress > STALL_S)
			die("flow %d: nothing delivered for %d s (%llu posted, %llu checked, %u in flight)",
			    i, STALL_S, (unsigned long long)f->posted,
			    (unsigned long long)f->verified, f->inflight);
	}
}

static void run(void)
{
	double t;
	int i;
	unsigned int s;

	for (i = 0; i < nflows; i++)
		if (mode != READ)
			for (s = 0; s < slots; s++)
				post_recv((unsigned int)i, s);
	t0 = now();
	t_end = t0 + (double)nint * interval_ms / 1000;
	last_rx = t0;
	for (i = 0; i < nflows; i++) {
		flows[i].start = t0 + (double)i * stagger_s;
		flows[i].last_progress = flows[i].start;
		post_more((unsigned int)i);
	}
	for (;;) {
		t = now();
		if (!stopping && t >= t_end)
			stopping = true;
		if (stopping && finished(t))
			break;
		check_stalls(t);
		if (!poll_cqs()) {
			async_events();
			wait_events(100);
		}
	}
}

/* --- the report ----------------------------------------------------------- */

static void report(const char *csv)
{
	double secs = (double)nint * interval_ms / 1000;
	double half_secs = (double)(nint - nint / 2) * interval_ms / 1000;
	double sum = 0, sum2 = 0, min = -1, total = 0, drained = 0, x;
	unsigned int iv;
	int i;

	for (i = 0; i < nflows; i++) {
		printf("flow %d bytes %llu mbps %.2f\n", i,
		       (unsigned long long)flows[i].bytes,
		       (double)flows[i].bytes * 8 / secs / 1e6);
		total += (double)flows[i].bytes;
		drained += (double)flows[i].drained;
		x = 0;
		for (iv = nint / 2; iv < nint; iv++)
			x += (double)ibytes[(size_t)iv * nflows + i];
		sum += x;
		sum2 += x * x;
		if (min < 0 || x < min)
			min = x;
	}
	printf("total_mbps %.2f\n", total * 8 / secs / 1e6);
	printf("last_half_mbps %.2f\n", sum * 8 / half_secs / 1e6);
	printf("jain %.4f\n", sum2 > 0 ? sum * sum / (nflows * sum2) : 0);
	printf("min_share %.4f\n", sum > 0 ? min / (sum / nflows) : 0);
	printf("drained %.0f\n", drained);
	if (mode == UD) {
		uint64_t sent = 0, got = 0, re = 0;

		for (i = 0; i < nflows; i++) {
			sent += flows[i].posted;
			got += flows[i].verified;
			re += flows[i].reordered;
		}
		printf("sent %llu received %llu reordered %llu\n",
		       (unsigned long long)sent, (unsigned long long)got,
		       (unsigned long long)re);
	}
	if (csv) {
		FILE *f = fopen(csv, "w");

		if (!f)
			die("%s: %s", csv, strerror(errno));
		fprintf(f, "time_s,flow,bytes\n");
		for (iv = 0; iv < nint; iv++)
			for (i = 0; i < nflows; i++)
				fprintf(f, "%.3f,%d,%llu\n",
					(double)(iv + 1) * interval_ms / 1000, i,
					(unsigned long long)ibytes[(size_t)iv * nflows + i]);
		if (fclose(f))
			die("%s: %s", csv, strerror(errno));
	}
	fflush(stdout);
}

static void teardown(void)
{
	int e, i;

	for (i = 0; i < nflows; i++) {
		if (flows[i].ah && ibv_destroy_ah(flows[i].ah))
			die("ibv_destroy_ah: %s", strerror(errno));
		if (ibv_destroy_qp(flows[i].qp1) || ibv_destroy_qp(flows[i].qp2))
			die("ibv_destroy_qp: %s", strerror(errno));
	}
	for (e = 0; e < 2; e++) {
		struct end *x = &ends[e];

		if (ibv_dereg_mr(x->mr) || ibv_destroy_cq(x->cq) ||
		    ibv_destroy_comp_channel(x->ch) || ibv_dealloc_pd(x->pd) ||
		    ibv_close_device(x->ctx))
			die("%s: destroying: %s", x->name, strerror(errno));
		free(x->buf);
	}
}

static __attribute__((noreturn)) void usage(const char *prog)
{
	die("usage: %s -d DEV1 -D DEV2 [-g GID1] [-G GID2] [-n FLOWS] [-t SECONDS] [-m write|send|read|ud] [-s SIZE] [-q DEPTH] [-r RATE_KBPS] [-i INTERVAL_MS] [-o CSV] [-T TIMEOUT] [-S STAGGER_S]",
	    prog);
}

int main(int argc, char **argv)
{
	unsigned int seconds = 20, rate_kbps = 0;
	const char *csv = NULL;
	int opt;

	ends[0].gid_arg = ends[1].gid_arg = "1";
	while ((opt = getopt(argc, argv, "d:D:g:G:n:t:m:s:q:r:i:o:T:S:")) != -1) {
		switch (opt) {
		case 'd': ends[0].name = optarg; break;
		case 'D': ends[1].name = optarg; break;
		case 'g': ends[0].gid_arg = optarg; break;
		case 'G': ends[1].gid_arg = optarg; break;
		case 'n': nflows = atoi(optarg); break;
		case 't': seconds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm':
			for (mode = 0; mode <= UD && strcmp(optarg, mode_names[mode]); mode++)
				;
			if (mode > UD)
				usage(argv[0]);
			break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'q': depth = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': rate_kbps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'i': interval_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'o': csv = optarg; break;
		case 'T': ack_timeout = atoi(optarg); break;
		case 'S': stagger_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (!ends[0].name || !ends[1].name || optind != argc)
		usage(argv[0]);
	if (!depth)
		depth = mode == UD ? 64 : 16;
	if (nflows < 1 || nflows > MAX_FLOWS || depth > 1024 || !interval_ms ||
	    ack_timeout < 1 || ack_timeout > 31)
		die("bad arguments: -n 1..%d, -q 1..1024, -i > 0, -T 1..31", MAX_FLOWS);
	nint = seconds * 1000 / interval_ms;
	if (nint < 2)
		die("-t %u with -i %u: fewer than two intervals", seconds, interval_ms);
	if ((nflows - 1) * stagger_s >= seconds)
		die("-S %u: flow %d would start after the end", stagger_s, nflows - 1);
	ibytes = calloc((size_t)nint * nflows, sizeof(*ibytes));
	if (!ibytes)
		die("out of memory");
	if (!strcmp(ends[0].name, ends[1].name))
		die("DEV1 and DEV2 must differ");
	if (mode != UD && !size)
		size = 65536;
	if (mode == UD && !size) {
		/* The path MTU: the ports are opened in setup(); ask here. */
		struct ibv_context *c1 = open_device(ends[0].name);
		struct ibv_context *c2 = open_device(ends[1].name);
		struct ibv_port_attr p1, p2;

		if (ibv_query_port(c1, 1, &p1) || ibv_query_port(c2, 1, &p2))
			die("ibv_query_port: %s", strerror(errno));
		size = 128u << (p1.active_mtu < p2.active_mtu ? p1.active_mtu : p2.active_mtu);
		ibv_close_device(c1);
		ibv_close_device(c2);
	}
	if (size < 8 || size % 8 || size > (16u << 20))
		die("-s: a multiple of 8 from 8 to 16 MiB");
	setup(rate_kbps);
	run();
	async_events();
	report(csv);
	teardown();
	return 0;
}
