// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_ud_test - the UD transport's rules, tested from one process.
 *
 * usage: sroce_ud_test -d DEV1 [-D DEV2] -g GIDIDX [-G GIDIDX2] [-t CASE,...]
 *                      [-x CASE,...] [-p PSN] [-L] [-l]
 *
 * Side A (DEV1, GID index GIDIDX) sends, side B (DEV2, or DEV1 again:
 * loopback) receives.  Both GIDs must be of one family: IPv4-mapped or
 * IPv6; the multicast case picks its group in that family.  -t runs only
 * the cases listed, -x all but those.  Each case
 * prints "case: pass", "case: skip why" or "case: FAIL why"; the exit
 * status is 1 if any case failed, 2 on a usage or setup error.
 *
 * Cases:
 *   grh             messages of 1 byte up to the path MTU arrive behind the
 *                   40 bytes of GRH (IPv4: 20 zero bytes and the IPv4
 *                   header), with IBV_WC_GRH, the sender's QPN and the
 *                   right length; the addresses in the GRH are the GIDs
 *   roce_type       a datagram's receive completion carries in sl the
 *                   RoCE packet type as RoCE HCAs give it to userspace
 *                   (bit 3: RoCEv2, a UDP header; bits 2:0: 2 IPv4,
 *                   1 IPv6): 0xa over IPv4, 0x9 over IPv6.  UCX's
 *                   ud_verbs reads it to find the destination GID in the
 *                   GRH area and drops every datagram where it finds none
 *   small_cq        a CQ asked for 2 entries reports 3 (the power of two
 *                   above, less one, as RoCE HCAs and rdma_rxe report)
 *                   and holds 4 completions: B's UD QP on such a CQ gets
 *                   4 datagrams into 4 receives before it polls, and every
 *                   one completes, whole (the rdma_verbs manual's
 *                   multicast example: a CQ of 2, 4 receives)
 *   too_big         a send of path MTU + 1 bytes completes with
 *                   IBV_WC_LOC_LEN_ERR and nothing arrives
 *   qkey            a datagram with a Q_Key other than the receiver's is
 *                   dropped (no completion, the receive stays posted) and,
 *                   where the device has it, counted in rx_drop_qkey
 *   privileged_qkey a work request whose Q_Key has the high bit set sends
 *                   with the QP's own Q_Key instead
 *   mcast           two QPs of B attached to a group both receive what A
 *                   sends to QPN 0xffffff; once one is detached only the
 *                   other does, and once both are, neither; a QP still
 *                   attached cannot be destroyed
 *   lossy_ud        200 datagrams of 8 bytes up to the path MTU, in bursts
 *                   of 4, each carrying its number, its length and a
 *                   pattern of its number: every one that arrives must be
 *                   one that was sent, whole and unchanged, from A's QP;
 *                   without -L every one must arrive exactly once, with -L
 *                   (a lossy wire: the faults group) a datagram may be lost
 *                   or arrive twice, as UD allows, but at least half of
 *                   them must arrive
 *   lossy_uc        the same over a UC QP pair with SENDs of 8 to 3000
 *                   bytes (up to 3 packets at MTU 1024): a message that
 *                   arrives must be exactly one sent message, never part
 *                   of one or pieces of two; loss (and a repeat, counted)
 *                   only with -L
 *   uc_psn_gap      (UC, needs -p) the network drops the packet with PSN
 *                   -p (the test group sets up the drop): a 3-packet SEND
 *                   starting at PSN -p minus 1 is lost entirely, the next
 *                   SEND lands in the receive the lost one would have
 *                   used, and an RDMA WRITE with immediate after it
 *                   arrives as well; skipped without -p
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"

#define QKEY 0x11111111u
#define MCAST_QPN 0xffffffu
#define GRH_BYTES 40
#define MAX_MSG 4096
#define WAIT_MS 5000		/* how long a completion is waited for */
#define QUIET_MS 500		/* how long "nothing arrives" is watched */
#define NRECV 8
#define SKIP 1			/* a case's return value: skipped, "why" says why */

static struct {
	const char *dev[2];
	int gidx[2];
	long gap_psn;
	bool lossy;		/* -L: the wire may lose and repeat packets */
} opt = { .gidx = { -1, -1 }, .gap_psn = -1 };

static char why[512];

static int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gidx;
	int mtu;
};

static struct side sides[2];

struct ep {
	struct side *s;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* EP_BUF bytes: NRECV receive slots, then send areas */
};

#define SLOT (GRH_BYTES + MAX_MSG)
#define SEND_OFF (NRECV * SLOT)
#define LOSSY_BURST 4		/* messages in flight in the lossy cases */
/* An endpoint's buffer: the receive slots, then a send area per message
 * in flight, then one guard byte.
 */
#define EP_BUF (SEND_OFF + LOSSY_BURST * MAX_MSG + 1)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

static int side_open(struct side *s, const char *name, int gidx)
{
	s->ctx = open_device(name);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return failf("%s: ibv_alloc_pd: %s", name, strerror(errno));
	if (ibv_query_port(s->ctx, 1, &s->port))
		return failf("%s: ibv_query_port: %s", name, strerror(errno));
	if (ibv_query_gid(s->ctx, 1, gidx, &s->gid))
		return failf("%s: ibv_query_gid %d: %s", name, gidx, strerror(errno));
	s->gidx = gidx;
	s->mtu = 128 << s->port.active_mtu;
	return 0;
}

/* An endpoint whose one CQ is asked for @cqe entries. */
static int ep_new_cq(struct ep *e, struct side *s, uint32_t qkey, int cqe)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = NRECV, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	memset(e, 0, sizeof(*e));
	e->s = s;
	e->buf = calloc(1, EP_BUF);
	if (!e->buf)
		return failf("out of memory");
	e->mr = ibv_reg_mr(s->pd, e->buf, EP_BUF,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!e->mr)
		return failf("ibv_reg_mr: %s", strerror(errno));
	e->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!e->cq)
		return failf("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(s->pd, &ia);
	if (!e->qp)
		return failf("ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return failf("to INIT: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		return failf("to RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return failf("to RTS: %s", strerror(errno));
	return 0;
}

static int ep_new(struct ep *e, struct side *s, uint32_t qkey)
{
	return ep_new_cq(e, s, qkey, 2 * NRECV);
}

static void ep_free(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static int post_recv(struct ep *e, int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + slot * SLOT,
			       .length = SLOT, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(e->buf + slot * SLOT, 0xa5, SLOT);
	if (ibv_post_recv(e->qp, &wr, &bad))
		return failf("ibv_post_recv: %s", strerror(errno));
	return 0;
}

static int post_recvs(struct ep *e)
{
	int i;

	for (i = 0; i < NRECV; i++)
		if (post_recv(e, i))
			return -1;
	return 0;
}

static struct ibv_ah *ah_to(struct side *from, const union ibv_gid *dgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = from->gidx, .hop_limit = 64 },
	};

	return ibv_create_ah(from->pd, &aa);
}

static int post_send(struct ep *e, struct ibv_ah *ah, uint32_t qpn,
		     uint32_t qkey, uint32_t len, uint8_t seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + SEND_OFF,
			       .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1000 + seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	};
	struct ibv_send_wr *bad;
	uint32_t i;

	for (i = 0; i < len; i++)
		e->buf[SEND_OFF + i] = (uint8_t)(seed + i * 7);
	if (ibv_post_send(e->qp, &wr, &bad))
		return failf("ibv_post_send: %s", strerror(errno));
	return 0;
}

/* One completion within @ms: 1, or 0 if none came. */
static int poll_one(struct ep *e, struct ibv_wc *wc, int ms)
{
	long long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(e->cq, 1, wc);
		if (n < 0)
			return failf("ibv_poll_cq: %d", n);
		if (n)
			return 1;
		usleep(1000);
	} while (now_ms() < end);
	return 0;
}

static int expect_send_done(struct ep *e, enum ibv_wc_status want)
{
	struct ibv_wc wc;
	int n = poll_one(e, &wc, WAIT_MS);

	if (n < 0)
		return n;
	if (!n)
		return failf("no send completion");
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_SEND &&
	    wc.opcode != IBV_WC_RDMA_WRITE)
		return failf("send CQE has opcode %d", wc.opcode);
	if (wc.status != want)
		return failf("send completed with %s, expected %s",
			     ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
	return 0;
}

static int expect_nothing(struct ep *e, const char *what)
{
	struct ibv_wc wc;
	int n = poll_one(e, &wc, QUIET_MS);

	if (n < 0)
		return n;
	if (n)
		return failf("%s: unexpected completion (status %s, %u bytes)", what,
			     ibv_wc_status_str(wc.status), wc.byte_len);
	return 0;
}

/* The GRH (or, for IPv4, the IPv4 header in its last 20 bytes) names the
 * sender's and the receiver's GIDs.
 */
static int check_grh(const uint8_t *grh, const union ibv_gid *src,
		     const union ibv_gid *dst)
{
	static const uint8_t zero[20];

	if (gid_is_v4(src)) {
		if (memcmp(grh, zero, sizeof(zero)))
			return failf("IPv4: the first 20 bytes are not zero");
		if ((grh[20] >> 4) != 4)
			return failf("IPv4: no IPv4 header at byte 20 (0x%02x)", grh[20]);
		if (memcmp(grh + 32, src->raw + 12, 4) || memcmp(grh + 36, dst->raw + 12, 4))
			return failf("IPv4: wrong addresses in the header");
		return 0;
	}
	if ((grh[0] >> 4) != 6)
		return failf("IPv6: GRH version %d", grh[0] >> 4);
	if (memcmp(grh + 8, src->raw, 16) || memcmp(grh + 24, dst->raw, 16))
		return failf("IPv6: wrong GIDs in the GRH");
	return 0;
}

/* The last completion expect_recv() took. */
static struct ibv_wc last_recv;

/* A receive completion on @e carrying @len bytes seeded @seed from @from. */
static int expect_recv(struct ep *e, const struct ep *from, uint32_t len,
		       uint8_t seed, const union ibv_gid *dgid)
{
	struct ibv_wc wc;
	const uint8_t *p;
	uint32_t i;
	int n = poll_one(e, &wc, WAIT_MS);

	if (n < 0)
		return n;
	if (!n)
		return failf("%u-byte datagram not received", len);
	if (wc.status != IBV_WC_SUCCESS)
		return failf("receive completed with %s", ibv_wc_status_str(wc.status));
	if (wc.opcode != IBV_WC_RECV)
		return failf("receive CQE has opcode %d", wc.opcode);
	if (wc.byte_len != len + GRH_BYTES)
		return failf("byte_len %u, expected %u", wc.byte_len, len + GRH_BYTES);
	if (!(wc.wc_flags & IBV_WC_GRH))
		return failf("no IBV_WC_GRH");
	if (wc.src_qp != from->qp->qp_num)
		return failf("src_qp 0x%x, expected 0x%x", wc.src_qp, from->qp->qp_num);
	if (wc.qp_num != e->qp->qp_num)
		return failf("qp_num 0x%x, expected 0x%x", wc.qp_num, e->qp->qp_num);
	last_recv = wc;
	p = e->buf + wc.wr_id * SLOT;
	if (check_grh(p, &from->s->gid, dgid))
		return -1;
	for (i = 0; i < len; i++)
		if (p[GRH_BYTES + i] != (uint8_t)(seed + i * 7))
			return failf("byte %u of %u differs", i, len);
	if (GRH_BYTES + len < SLOT && p[GRH_BYTES + len] != 0xa5)
		return failf("written past the message");
	return post_recv(e, wc.wr_id);
}

/* A port counter, or -1 if the device has none of that name. */
static long long counter(const struct side *s, const char *name)
{
	return hw_counter_of(s->ctx, name);
}

struct pair {
	struct ep a, b;
	struct ibv_ah *ah;
};

static int pair_new(struct pair *p, uint32_t qkey_a, uint32_t qkey_b)
{
	memset(p, 0, sizeof(*p));
	if (ep_new(&p->a, &sides[0], qkey_a) || ep_new(&p->b, &sides[1], qkey_b) ||
	    post_recvs(&p->b))
		return -1;
	p->ah = ah_to(&sides[0], &sides[1].gid);
	if (!p->ah)
		return failf("ibv_create_ah: %s", strerror(errno));
	return 0;
}

static void pair_free(struct pair *p)
{
	if (p->ah)
		ibv_destroy_ah(p->ah);
	ep_free(&p->a);
	ep_free(&p->b);
}

static int case_grh(struct pair *p)
{
	uint32_t sizes[] = { 1, 2, 63, 256, 1000, 0 }, i;

	sizes[5] = sides[0].mtu < sides[1].mtu ? sides[0].mtu : sides[1].mtu;
	for (i = 0; i < 6; i++) {
		if (post_send(&p->a, p->ah, p->b.qp->qp_num, QKEY, sizes[i], i) ||
		    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
		    expect_recv(&p->b, &p->a, sizes[i], i, &sides[1].gid))
			return -1;
	}
	return 0;
}

static int case_roce_type(struct pair *p)
{
	uint8_t want = gid_is_v4(&sides[0].gid) ? 0xa : 0x9;
	int i;

	for (i = 0; i < 2; i++) {
		if (post_send(&p->a, p->ah, p->b.qp->qp_num, QKEY, 64, (uint8_t)i) ||
		    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
		    expect_recv(&p->b, &p->a, 64, (uint8_t)i, &sides[1].gid))
			return -1;
		if (last_recv.sl != want)
			return failf("sl 0x%x, expected 0x%x (RoCEv2 over %s)",
				     last_recv.sl, want,
				     gid_is_v4(&sides[0].gid) ? "IPv4" : "IPv6");
	}
	return 0;
}

/*
 * A CQ asked for 2 entries reports 3 and holds 4: four datagrams into four
 * receives arrive before anything is polled, and all four complete.
 */
static int case_small_cq(struct pair *p)
{
	struct ep b;
	int i, ret = -1;

	if (ep_new_cq(&b, &sides[1], QKEY, 2))
		goto out;
	if (b.cq->cqe != 3) {
		failf("a CQ asked for 2 entries reports %d, expected 3", b.cq->cqe);
		goto out;
	}
	for (i = 0; i < 4; i++)
		if (post_recv(&b, i))
			goto out;
	for (i = 0; i < 4; i++)
		if (post_send(&p->a, p->ah, b.qp->qp_num, QKEY, 100 + i, (uint8_t)i) ||
		    expect_send_done(&p->a, IBV_WC_SUCCESS))
			goto out;
	usleep(QUIET_MS * 1000);
	for (i = 0; i < 4; i++)
		if (expect_recv(&b, &p->a, 100 + i, (uint8_t)i, &sides[1].gid))
			goto out;
	ret = expect_nothing(&b, "after the four datagrams");
out:
	ep_free(&b);
	return ret;
}

static int case_too_big(struct pair *p)
{
	uint32_t len = sides[0].mtu + 1;

	if (len > MAX_MSG + 1)
		len = MAX_MSG + 1;
	if (post_send(&p->a, p->ah, p->b.qp->qp_num, QKEY, len, 9) ||
	    expect_send_done(&p->a, IBV_WC_LOC_LEN_ERR) ||
	    expect_nothing(&p->b, "after a too-big send"))
		return -1;
	return 0;
}

static int case_qkey(struct pair *p)
{
	long long before = counter(&sides[1], "rx_drop_qkey"), after;
	int i;

	/* More than NRECV: a dropped datagram must not use up a receive. */
	for (i = 0; i < NRECV + 2; i++)
		if (post_send(&p->a, p->ah, p->b.qp->qp_num, QKEY + 1, 64, i) ||
		    expect_send_done(&p->a, IBV_WC_SUCCESS))
			return -1;
	if (expect_nothing(&p->b, "wrong Q_Key"))
		return -1;
	after = counter(&sides[1], "rx_drop_qkey");
	if (before >= 0 && after - before != NRECV + 2)
		return failf("rx_drop_qkey went from %lld to %lld, expected +%d",
			     before, after, NRECV + 2);
	if (post_send(&p->a, p->ah, p->b.qp->qp_num, QKEY, 64, 3) ||
	    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
	    expect_recv(&p->b, &p->a, 64, 3, &sides[1].gid))
		return -1;
	return 0;
}

/* A's QP has B's Q_Key; the WR asks for the QP's own with the high bit. */
static int case_privileged_qkey(struct pair *p)
{
	if (post_send(&p->a, p->ah, p->b.qp->qp_num, 0x80000000u, 100, 5) ||
	    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
	    expect_recv(&p->b, &p->a, 100, 5, &sides[1].gid))
		return -1;
	return 0;
}

static int case_mcast(struct pair *p)
{
	union ibv_gid mgid = { .raw = { 0 } };
	struct ibv_ah *mah;
	struct ep b2;
	int ret = -1;

	if (gid_is_v4(&sides[0].gid)) {
		mgid.raw[10] = mgid.raw[11] = 0xff;
		mgid.raw[12] = 239; mgid.raw[13] = 7; mgid.raw[14] = 8; mgid.raw[15] = 9;
	} else {
		mgid.raw[0] = 0xff; mgid.raw[1] = 0x0e;
		mgid.raw[13] = 7; mgid.raw[14] = 8; mgid.raw[15] = 9;
	}
	if (ep_new(&b2, &sides[1], QKEY) || post_recvs(&b2))
		return -1;
	mah = ah_to(&sides[0], &mgid);
	if (!mah) {
		failf("ibv_create_ah to the group: %s", strerror(errno));
		goto out_b2;
	}
	if (ibv_attach_mcast(p->b.qp, &mgid, 0) || ibv_attach_mcast(b2.qp, &mgid, 0)) {
		failf("ibv_attach_mcast: %s", strerror(errno));
		goto out_ah;
	}
	/* Both receive. */
	if (post_send(&p->a, mah, MCAST_QPN, QKEY, 200, 1) ||
	    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
	    expect_recv(&p->b, &p->a, 200, 1, &mgid) ||
	    expect_recv(&b2, &p->a, 200, 1, &mgid))
		goto out_ah;
	if (ibv_destroy_qp(b2.qp) == 0) {
		b2.qp = NULL;
		failf("a QP attached to a group was destroyed");
		goto out_ah;
	}
	/* b2 leaves: only b receives. */
	if (ibv_detach_mcast(b2.qp, &mgid, 0)) {
		failf("ibv_detach_mcast: %s", strerror(errno));
		goto out_ah;
	}
	if (post_send(&p->a, mah, MCAST_QPN, QKEY, 400, 3) ||
	    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
	    expect_recv(&p->b, &p->a, 400, 3, &mgid) ||
	    expect_nothing(&b2, "detached QP"))
		goto out_ah;
	if (ibv_detach_mcast(b2.qp, &mgid, 0) == 0) {
		failf("detaching a QP that is not attached succeeded");
		goto out_ah;
	}
	if (ibv_detach_mcast(p->b.qp, &mgid, 0)) {
		failf("ibv_detach_mcast: %s", strerror(errno));
		goto out_ah;
	}
	/* Nobody is attached: nothing arrives. */
	if (post_send(&p->a, mah, MCAST_QPN, QKEY, 500, 4) ||
	    expect_send_done(&p->a, IBV_WC_SUCCESS) ||
	    expect_nothing(&p->b, "after the last detach"))
		goto out_ah;
	ret = 0;
out_ah:
	ibv_destroy_ah(mah);
out_b2:
	if (ret) {
		ibv_detach_mcast(p->b.qp, &mgid, 0);
		if (b2.qp)
			while (!ibv_detach_mcast(b2.qp, &mgid, 0))
				;
	}
	ep_free(&b2);
	return ret;
}

/* A UC QP on @e's device, in INIT. */
static int uc_create(struct ep *e)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = NRECV, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.send_cq = e->cq, .recv_cq = e->cq,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	e->qp = ibv_create_qp(e->s->pd, &ia);
	if (!e->qp)
		return failf("ibv_create_qp(UC): %s", strerror(errno));
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return failf("UC to INIT: %s", strerror(errno));
	return 0;
}

/* Connect @e to @peer, both directions starting at @psn, MTU 1024. */
static int uc_up(struct ep *e, struct ep *peer, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = psn,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->s->gid, .sgid_index = e->s->gidx,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return failf("UC to RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return failf("UC to RTS: %s", strerror(errno));
	return 0;
}

/* A UC receive completion: @len bytes seeded @seed at the start of a slot. */
static int uc_expect_recv(struct ep *e, uint32_t len, uint8_t seed, bool imm)
{
	struct ibv_wc wc;
	const uint8_t *p;
	uint32_t i;
	int n = poll_one(e, &wc, WAIT_MS);

	if (n < 0)
		return n;
	if (!n)
		return failf("%u-byte message (seed %u) not received", len, seed);
	if (wc.status != IBV_WC_SUCCESS)
		return failf("receive completed with %s", ibv_wc_status_str(wc.status));
	if (wc.opcode != (imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV))
		return failf("receive CQE has opcode %d", wc.opcode);
	if (imm && (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htonl(0x5eed)))
		return failf("no or wrong immediate data");
	if (wc.byte_len != len)
		return failf("byte_len %u, expected %u (seed %u)", wc.byte_len, len, seed);
	p = imm ? e->buf + SEND_OFF : e->buf + wc.wr_id * SLOT;
	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return failf("byte %u of the %u-byte message differs (expected seed %u)",
				     i, len, seed);
	return 0;
}

static int uc_post(struct ep *e, struct ep *peer, enum ibv_wr_opcode op,
		   uint32_t len, uint8_t seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + SEND_OFF,
			       .length = len, .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0x5eed),
		.wr.rdma = { .remote_addr = (uintptr_t)peer->buf + SEND_OFF,
			     .rkey = peer->mr->rkey },
	};
	struct ibv_send_wr *bad;
	uint32_t i;

	for (i = 0; i < len; i++)
		e->buf[SEND_OFF + i] = (uint8_t)(seed + i * 7);
	if (ibv_post_send(e->qp, &wr, &bad))
		return failf("ibv_post_send(UC): %s", strerror(errno));
	return expect_send_done(e, IBV_WC_SUCCESS);
}

/*
 * A UC QP pair: @a on side A, @b on side B, each with its own buffer, MR
 * (B's open to remote writes) and CQ, connected both ways from @psn.  The
 * caller frees both with ep_free(), also on failure.
 */
static int uc_pair(struct ep *a, struct ep *b, uint32_t psn)
{
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->s = &sides[0];
	b->s = &sides[1];
	if (sides[0].mtu < 1024 || sides[1].mtu < 1024)
		return failf("UC needs a path MTU of 1024");
	a->buf = calloc(1, EP_BUF);
	b->buf = calloc(1, EP_BUF);
	if (!a->buf || !b->buf)
		return failf("out of memory");
	a->mr = ibv_reg_mr(a->s->pd, a->buf, EP_BUF, IBV_ACCESS_LOCAL_WRITE);
	b->mr = ibv_reg_mr(b->s->pd, b->buf, EP_BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	a->cq = ibv_create_cq(a->s->ctx, 2 * NRECV, NULL, NULL, 0);
	b->cq = ibv_create_cq(b->s->ctx, 2 * NRECV, NULL, NULL, 0);
	if (!a->mr || !b->mr || !a->cq || !b->cq)
		return failf("MR/CQ: %s", strerror(errno));
	if (uc_create(a) || uc_create(b) || uc_up(a, b, psn) || uc_up(b, a, psn))
		return -1;
	return 0;
}

static int case_uc_psn_gap(struct pair *p)
{
	uint32_t psn = (uint32_t)opt.gap_psn - 1, len = 3000;
	long long before = counter(&sides[1], "rx_drop_uc"), after;
	struct ep a, b;
	int ret = -1;

	(void)p;
	if (opt.gap_psn < 1)
		return SKIP;
	if (uc_pair(&a, &b, psn))
		goto out;
	if (post_recv(&b, 0) || post_recv(&b, 1) || post_recv(&b, 2))
		goto out;
	/* PSN psn, psn + 1 (dropped), psn + 2: the whole message is lost. */
	if (uc_post(&a, &b, IBV_WR_SEND, len, 1))
		goto out;
	/* PSN psn + 3 ...: lands in the first receive. */
	if (uc_post(&a, &b, IBV_WR_SEND, len, 2) ||
	    uc_expect_recv(&b, len, 2, false))
		goto out;
	if (uc_post(&a, &b, IBV_WR_RDMA_WRITE_WITH_IMM, len, 3) ||
	    uc_expect_recv(&b, len, 3, true))
		goto out;
	if (expect_nothing(&b, "after the last message"))
		goto out;
	after = counter(&sides[1], "rx_drop_uc");
	if (before >= 0 && after <= before) {
		failf("rx_drop_uc did not count the rest of the lost message (%lld)", after);
		goto out;
	}
	ret = 0;
out:
	ep_free(&a);
	ep_free(&b);
	return ret;
}

/* --- the lossy cases ---------------------------------------------------------- */

#define LOSSY_N 200
#define LOSSY_QUIET_MS 400	/* a burst's stragglers are waited for this long */
#define LOSSY_UC_MAX 3000

/* One lossy run: messages from @tx to @rx, UD (through @ah) or UC. */
struct lossy {
	struct ep *tx, *rx;
	struct ibv_ah *ah;	/* UD only */
	bool ud;
	uint32_t max;		/* the longest message */
	uint32_t copies[LOSSY_N];	/* how often each message arrived */
};

static uint32_t lossy_len(const struct lossy *l, uint32_t k)
{
	return 8 + (k * 997u) % (l->max - 7);
}

static uint8_t lossy_byte(uint32_t k, uint32_t i)
{
	return (uint8_t)(k * 31 + i * 7 + 1);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Post message @k from send area @area (signaled). */
static int lossy_post(struct lossy *l, uint32_t k, uint32_t area)
{
	uint32_t len = lossy_len(l, k), i;
	uint8_t *p = l->tx->buf + SEND_OFF + area * MAX_MSG;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = len, .lkey = l->tx->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = k, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (l->ud) {
		wr.wr.ud.ah = l->ah;
		wr.wr.ud.remote_qpn = l->rx->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	for (i = 0; i < len; i++)
		p[i] = lossy_byte(k, i);
	memcpy(p, &k, 4);
	memcpy(p + 4, &len, 4);
	if (ibv_post_send(l->tx->qp, &wr, &bad))
		return failf("ibv_post_send of message %u: %s", k, strerror(errno));
	return 0;
}

/* A receive completion: one whole message that was sent; then repost. */
static int lossy_check(struct lossy *l, const struct ibv_wc *wc)
{
	const uint8_t *p = l->rx->buf + wc->wr_id * SLOT;
	uint32_t len = wc->byte_len, k, i;

	if (wc->status != IBV_WC_SUCCESS)
		return failf("a receive completed with %s", ibv_wc_status_str(wc->status));
	if (wc->opcode != IBV_WC_RECV)
		return failf("a receive completion has opcode %d", wc->opcode);
	if (l->ud) {
		if (len < GRH_BYTES + 8 || wc->src_qp != l->tx->qp->qp_num)
			return failf("a datagram of %u bytes from QP 0x%x", len, wc->src_qp);
		p += GRH_BYTES;
		len -= GRH_BYTES;
	}
	if (len < 8)
		return failf("a message of %u bytes", len);
	k = get32(p);
	if (k >= LOSSY_N || get32(p + 4) != len || len != lossy_len(l, k))
		return failf("a message of %u bytes says it is number %u of %u bytes", len, k,
			     get32(p + 4));
	for (i = 8; i < len; i++)
		if (p[i] != lossy_byte(k, i))
			return failf("byte %u of message %u (%u bytes) differs", i, k, len);
	l->copies[k]++;
	return post_recv(l->rx, (int)wc->wr_id);
}

/* Receive completions until @want more arrived or none for LOSSY_QUIET_MS. */
static int lossy_drain(struct lossy *l, unsigned int want)
{
	unsigned int got = 0;
	struct ibv_wc wc;
	int n;

	while (got < want) {
		n = poll_one(l->rx, &wc, LOSSY_QUIET_MS);
		if (n <= 0)
			return n;
		if (lossy_check(l, &wc))
			return -1;
		got++;
	}
	return 0;
}

static int lossy_run(struct lossy *l, const char *name)
{
	unsigned int delivered = 0, twice = 0, n, j;
	uint32_t k;

	for (k = 0; k < LOSSY_N; k += n) {
		n = LOSSY_N - k < LOSSY_BURST ? LOSSY_N - k : LOSSY_BURST;
		for (j = 0; j < n; j++)
			if (lossy_post(l, k + j, j))
				return -1;
		for (j = 0; j < n; j++)
			if (expect_send_done(l->tx, IBV_WC_SUCCESS))
				return -1;
		if (lossy_drain(l, n))
			return -1;
	}
	if (lossy_drain(l, ~0u))	/* late and repeated ones */
		return -1;
	for (k = 0; k < LOSSY_N; k++) {
		delivered += l->copies[k] > 0;
		twice += l->copies[k] > 1;
	}
	printf("%s: %u of %u messages arrived, %u more than once\n", name, delivered, LOSSY_N,
	       twice);
	if (!opt.lossy && (delivered != LOSSY_N || twice))
		return failf("on a clean wire %u of %u arrived, %u more than once", delivered,
			     LOSSY_N, twice);
	if (delivered < LOSSY_N / 2)
		return failf("only %u of %u messages arrived", delivered, LOSSY_N);
	return 0;
}

static int case_lossy_ud(struct pair *p)
{
	struct lossy *l = calloc(1, sizeof(*l));
	int ret;

	if (!l)
		return failf("out of memory");
	l->tx = &p->a;
	l->rx = &p->b;
	l->ah = p->ah;
	l->ud = true;
	l->max = (uint32_t)(sides[0].mtu < sides[1].mtu ? sides[0].mtu : sides[1].mtu);
	ret = lossy_run(l, "lossy_ud");
	free(l);
	return ret;
}

static int case_lossy_uc(struct pair *p)
{
	struct lossy *l = calloc(1, sizeof(*l));
	struct ep a, b;
	int ret = -1, i;

	(void)p;
	if (!l)
		return failf("out of memory");
	if (uc_pair(&a, &b, 0x800))
		goto out;
	for (i = 0; i < NRECV; i++)
		if (post_recv(&b, i))
			goto out;
	l->tx = &a;
	l->rx = &b;
	l->max = LOSSY_UC_MAX;
	ret = lossy_run(l, "lossy_uc");
out:
	ep_free(&a);
	ep_free(&b);
	free(l);
	return ret;
}

static const struct {
	const char *name;
	int (*run)(struct pair *p);
	uint32_t qkey_a;	/* A's own Q_Key; B's is QKEY */
} cases[] = {
	{ "grh", case_grh, QKEY + 5 },
	{ "roce_type", case_roce_type, QKEY + 5 },
	{ "small_cq", case_small_cq, QKEY + 5 },
	{ "too_big", case_too_big, QKEY + 5 },
	{ "qkey", case_qkey, QKEY + 5 },
	{ "privileged_qkey", case_privileged_qkey, QKEY },
	{ "mcast", case_mcast, QKEY + 5 },
	{ "lossy_ud", case_lossy_ud, QKEY },
	{ "lossy_uc", case_lossy_uc, QKEY },
	{ "uc_psn_gap", case_uc_psn_gap, QKEY },
};

static const char *case_name(size_t i)
{
	return cases[i].name;
}

/* Each case on a fresh pair of UD QPs, A's with the case's own Q_Key. */
static enum case_verdict case_run(size_t i, char *msg, size_t len)
{
	struct pair p;
	int ret;

	why[0] = 0;
	ret = pair_new(&p, cases[i].qkey_a, QKEY);
	if (!ret)
		ret = cases[i].run(&p);
	pair_free(&p);
	if (ret == SKIP) {
		snprintf(msg, len, "%s", "needs -p");
		return CASE_SKIP;
	}
	if (ret) {
		snprintf(msg, len, "%s", why);
		return CASE_FAIL;
	}
	return CASE_PASS;
}

int main(int argc, char **argv)
{
	struct runner r = { .ncases = sizeof(cases) / sizeof(cases[0]), .name = case_name,
			    .run = case_run };
	int c;

	while ((c = getopt(argc, argv, "d:D:g:G:t:x:p:Ll")) != -1) {
		switch (c) {
		case 'd': opt.dev[0] = optarg; break;
		case 'D': opt.dev[1] = optarg; break;
		case 'g': opt.gidx[0] = atoi(optarg); break;
		case 'G': opt.gidx[1] = atoi(optarg); break;
		case 't': r.only = optarg; break;
		case 'x': r.exclude = optarg; break;
		case 'p': opt.gap_psn = strtol(optarg, NULL, 0); break;
		case 'L': opt.lossy = true; break;
		case 'l':
			cases_list(&r);
			return 0;
		default:
			fprintf(stderr, "usage: %s -d DEV1 [-D DEV2] -g GIDIDX [-G GIDIDX2] [-t CASE,...] [-x CASE,...] [-p PSN] [-L] [-l]\n",
				argv[0]);
			return 2;
		}
	}
	if (!opt.dev[0] || opt.gidx[0] < 0) {
		fprintf(stderr, "%s: -d and -g are required\n", argv[0]);
		return 2;
	}
	if (!opt.dev[1])
		opt.dev[1] = opt.dev[0];
	if (opt.gidx[1] < 0)
		opt.gidx[1] = opt.gidx[0];
	if (side_open(&sides[0], opt.dev[0], opt.gidx[0]) ||
	    side_open(&sides[1], opt.dev[1], opt.gidx[1])) {
		printf("setup: FAIL %s\n", why);
		return 2;
	}
	if (gid_is_v4(&sides[0].gid) != gid_is_v4(&sides[1].gid)) {
		printf("setup: FAIL the GIDs are of different families\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cases_run(&r);
	return r.failed ? 1 : 0;
}
