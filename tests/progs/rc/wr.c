// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr.c - sroce_rc_test: the cases of the ibv_wr_* API, and of many
 * work requests and many QPs.
 */

#include "rc.h"

/* --- case: the ibv_wr_* API --------------------------------------------------------- */

struct wr_bufs {
	struct buf src, dst, rem, loc;
};

static void wr_sge(struct ibv_qp_ex *x, const struct buf *b, size_t off, size_t len)
{
	ibv_wr_set_sge(x, b->mr->lkey, addr_of(b, off), (uint32_t)len);
}

static void wr_next(struct ibv_qp_ex *x, uint64_t id)
{
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
}

/* One chain: send, send_imm, write, write_imm, read, CAS, FAA. */
static void wr_chain(struct ibv_qp_ex *x, struct wr_bufs *b, bool atomics)
{
	uint32_t rk = b->rem.mr->rkey;

	wr_next(x, 1);
	ibv_wr_send(x);
	wr_sge(x, &b->src, 0, 1000);
	wr_next(x, 2);
	ibv_wr_send_imm(x, htobe32(0xabcd0002));
	wr_sge(x, &b->src, 1000, 300);
	wr_next(x, 3);
	ibv_wr_rdma_write(x, rk, addr_of(&b->rem, 0));
	wr_sge(x, &b->src, 2000, 5000);
	wr_next(x, 4);
	ibv_wr_rdma_write_imm(x, rk, addr_of(&b->rem, 8000), htobe32(0xabcd0004));
	wr_sge(x, &b->src, 8000, 300);
	wr_next(x, 5);
	ibv_wr_rdma_read(x, rk, addr_of(&b->rem, 10000));
	wr_sge(x, &b->loc, 0, 7000);
	if (!atomics)
		return;
	wr_next(x, 6);
	ibv_wr_atomic_cmp_swp(x, rk, addr_of(&b->rem, 20000), 0x1111, 0x2222);
	wr_sge(x, &b->loc, 8000, 8);
	wr_next(x, 7);
	ibv_wr_atomic_fetch_add(x, rk, addr_of(&b->rem, 20008), 5);
	wr_sge(x, &b->loc, 8008, 8);
}

static int wr_chain_check(struct pair *p, struct wr_bufs *b, bool atomics)
{
	static const enum ibv_wc_opcode ops[] = { IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD };
	struct want w;
	int i;

	for (i = 0; i < (atomics ? 7 : 5); i++)
		TRY(want_send(&p->a, i + 1, ops[i], "ibv_wr_* chain"));
	TRY(want_recv(&p->b, 1, 1000, "ibv_wr_send"));
	w = w_recv_imm(2, &p->b, 300, IBV_WC_RECV, htobe32(0xabcd0002));
	TRY(expect_wc(p->b.rcq, &w, "ibv_wr_send_imm"));
	w = w_recv_imm(3, &p->b, 300, IBV_WC_RECV_RDMA_WITH_IMM, htobe32(0xabcd0004));
	TRY(expect_wc(p->b.rcq, &w, "ibv_wr_rdma_write_imm"));
	TRY(check_bytes(b->dst.p, b->src.p, 1000, "ibv_wr_send"));
	TRY(check_bytes(b->dst.p + 4096, b->src.p + 1000, 300, "ibv_wr_send_imm"));
	TRY(check_bytes(b->rem.p, b->src.p + 2000, 5000, "ibv_wr_rdma_write"));
	TRY(check_bytes(b->rem.p + 8000, b->src.p + 8000, 300, "ibv_wr_rdma_write_imm"));
	TRY(check_bytes(b->loc.p, b->rem.p + 10000, 7000, "ibv_wr_rdma_read"));
	if (!atomics)
		return 0;
	TRY(check_result(&b->loc, 1000, 0x1111, "ibv_wr_atomic_cmp_swp"));
	TRY(check_result(&b->loc, 1001, 100, "ibv_wr_atomic_fetch_add"));
	CHECK(load64(b->rem.p + 20000) == 0x2222 && load64(b->rem.p + 20008) == 105,
	      "ibv_wr_* atomics: target words wrong");
	return 0;
}

/* ibv_wr_abort posts nothing; the QP still works afterwards. */
static int wr_abort_check(struct pair *p, struct wr_bufs *b)
{
	struct ibv_qp_ex *x = p->a.qpx;
	int err;

	TRY(post_recv_buf(&p->b, 99, &b->dst, 0, 4096));
	ibv_wr_start(x);
	wr_next(x, 20);
	ibv_wr_send(x);
	wr_sge(x, &b->src, 0, 11);
	ibv_wr_abort(x);
	TRY(expect_empty(p->b.rcq, QUIET_MS, "after ibv_wr_abort"));
	TRY(expect_empty(p->a.scq, 0, "after ibv_wr_abort"));
	ibv_wr_start(x);
	wr_next(x, 21);
	ibv_wr_send(x);
	wr_sge(x, &b->src, 0, 22);
	err = ibv_wr_complete(x);
	CHECK(!err, "ibv_wr_complete: %s", estr(err));
	TRY(want_send(&p->a, 21, IBV_WC_SEND, "send after ibv_wr_abort"));
	return want_recv(&p->b, 99, 22, "send after ibv_wr_abort");
}

int case_wr_api(void)
{
	struct wr_bufs b;
	struct qp_conf c;
	struct pair p;
	int i, err;

	conf_init(&c);
	c.wr_api = true;
	c.cap.max_send_sge = 2;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&b.src, &devs[0], 32768, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&b.loc, &devs[0], 16384, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&b.dst, &devs[1], 4 * 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&b.rem, &devs[1], 32768, mr_access_all()));
	pattern(b.src.p, 32768, 1);
	pattern(b.rem.p, 32768, 2);
	store64(b.rem.p + 20000, 0x1111);
	store64(b.rem.p + 20008, 100);
	for (i = 0; i < 3; i++)
		TRY(post_recv_buf(&p.b, i + 1, &b.dst, i * 4096, 4096));
	ibv_wr_start(p.a.qpx);
	wr_chain(p.a.qpx, &b, has_atomics());
	err = ibv_wr_complete(p.a.qpx);
	CHECK(!err, "ibv_wr_complete: %s", estr(err));
	TRY(wr_chain_check(&p, &b, has_atomics()));
	TRY(wr_abort_check(&p, &b));
	if (!has_atomics())
		return skipf("no atomics in the chain (atomic_cap is IBV_ATOMIC_NONE)");
	return 0;
}

/*
 * ibv_wr_set_sge_list: a send gathered from 3 SGEs of different lengths.
 *
 * rxe deviation: rdma-core 44's rxe provider sums num_sge times the first
 * SGE's length (fixed by rdma-core commit 406cd2ad0, v64): B receives 300
 * bytes instead of 700.
 */
int case_wr_api_sge_list(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	struct ibv_sge s[3];
	int err;

	conf_init(&c);
	c.wr_api = true;
	c.cap.max_send_sge = 3;
	if (devs[0].attr.max_sge < 3)
		return skipf("max_sge %d < 3", devs[0].attr.max_sge);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	pattern(src.p, 4096, 4);
	s[0] = sge_of(&src, 3000, 100);
	s[1] = sge_of(&src, 0, 200);
	s[2] = sge_of(&src, 1000, 400);
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 4096));
	ibv_wr_start(p.a.qpx);
	wr_next(p.a.qpx, 1);
	ibv_wr_send(p.a.qpx);
	ibv_wr_set_sge_list(p.a.qpx, 3, s);
	err = ibv_wr_complete(p.a.qpx);
	CHECK(!err, "ibv_wr_complete: %s", estr(err));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "ibv_wr_set_sge_list"));
	TRY(want_recv(&p.b, 1, 700, "ibv_wr_set_sge_list"));
	TRY(check_bytes(dst.p, src.p + 3000, 100, "ibv_wr_set_sge_list SGE 1"));
	TRY(check_bytes(dst.p + 100, src.p, 200, "ibv_wr_set_sge_list SGE 2"));
	TRY(check_bytes(dst.p + 300, src.p + 1000, 400, "ibv_wr_set_sge_list SGE 3"));
	return check_fill(dst.p + 700, 4096 + GUARD - 700, "ibv_wr_set_sge_list");
}

/* ibv_wr_set_inline_data{,_list}: copied at the call, sent as one message. */
static int wr_inline_one(struct pair *p, struct buf *dst, uint8_t *src, size_t len, bool list,
			 uint64_t id)
{
	struct ibv_qp_ex *x = p->a.qpx;
	struct ibv_data_buf bl[2] = { { src, len / 2 }, { src + len / 2, len - len / 2 } };
	uint8_t copy[4096];
	char what[80];
	int err;

	snprintf(what, sizeof(what), "ibv_wr_set_inline_data%s, %zu bytes", list ? "_list" : "", len);
	pattern(src, len, (uint32_t)id);
	memcpy(copy, src, len);
	buf_clear(dst);
	TRY(post_recv_buf(&p->b, id, dst, 0, dst->len));
	ibv_wr_start(x);
	wr_next(x, id);
	ibv_wr_send(x);
	if (list)
		ibv_wr_set_inline_data_list(x, 2, bl);
	else
		ibv_wr_set_inline_data(x, src, len);
	memset(src, 0x3c, len);
	err = ibv_wr_complete(x);
	CHECK(!err, "%s: ibv_wr_complete: %s", what, estr(err));
	TRY(want_send(&p->a, id, IBV_WC_SEND, what));
	TRY(want_recv(&p->b, id, (uint32_t)len, what));
	return check_buf(dst, 0, copy, len, what);
}

/*
 * rxe deviation: rdma-core's rxe provider (44, and still in 2026) does not
 * mark a WQE built with ibv_wr_set_inline_data* as inline (IBV_SEND_INLINE
 * is no ibv_wr_* flag: the setter is what makes it inline), so rxe's kernel
 * side takes it for an empty SGE list and fails it with
 * IBV_WC_LOC_QP_OP_ERR; and its ibv_wr_set_inline_data_list leaves the
 * length 0 (rdma-core commit 1e8ed0aff, v64).
 */
int case_wr_api_inline(void)
{
	uint8_t src[4096];
	struct qp_conf c;
	struct pair p;
	struct buf dst;
	uint32_t max;

	TRY(probe_inline(&devs[0], &max));
	if (!max)
		return skipf("no inline data (max_inline_data 0)");
	max = max < sizeof(src) ? max : sizeof(src);
	conf_init(&c);
	c.wr_api = true;
	c.cap.max_inline_data = max;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(wr_inline_one(&p, &dst, src, 1, false, 1));
	TRY(wr_inline_one(&p, &dst, src, max, false, 2));
	return wr_inline_one(&p, &dst, src, max, true, 3);
}

/* --- cases: many WRs, many QPs ---------------------------------------------- */

enum { FILL_LEN = 64 };

/* Post @n sends of FILL_LEN bytes from @src, one by one. */
static int fill_post(struct pair *p, struct buf *src, int n, int base)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_sge s = sge_of(src, (size_t)i * FILL_LEN, FILL_LEN);

		TRY(post_op(&p->a, base + i, &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 }));
	}
	return 0;
}

static int fill_complete(struct pair *p, struct buf *src, struct buf *dst, int n, int base)
{
	int i;

	for (i = 0; i < n; i++)
		TRY(post_recv_buf(&p->b, base + i, dst, (size_t)i * FILL_LEN, FILL_LEN));
	for (i = 0; i < n; i++)
		TRY(want_recv(&p->b, base + i, FILL_LEN, "a full SQ: receive"));
	for (i = 0; i < n; i++)
		TRY(want_send(&p->a, base + i, IBV_WC_SEND, "a full SQ: send"));
	return check_buf(dst, 0, src->p, (size_t)n * FILL_LEN, "a full SQ");
}

/*
 * Fill the SQ with sends that cannot complete yet (no receive posted: RNR,
 * retried forever); one more is an immediate ENOMEM.  Then post the
 * receives: all complete in order.  A WQE's slot is free again only once
 * its completion is polled, so the SQ takes a full load again after that.
 */
int case_fill_sq(void)
{
	struct ibv_send_wr wr;
	struct buf src, dst;
	struct ibv_sge s;
	struct qp_conf c;
	struct pair p;
	int n;

	conf_init(&c);
	c.cap.max_send_wr = c.cap.max_recv_wr = (uint32_t)min_int(devs[0].attr.max_qp_wr, 256);
	c.cqe = 4 * (int)c.cap.max_send_wr + 64;
	c.min_rnr_timer = 1;
	TRY(pair_up(&p, &c));
	/* What the QPs really hold (see qp_caps for rxe's create-time numbers). */
	TRY(query_cap(&p.a, &p.a.cap));
	TRY(query_cap(&p.b, &p.b.cap));
	n = (int)p.a.cap.max_send_wr;
	CHECK(n <= c.cqe && (int)p.b.cap.max_recv_wr >= n, "SQ of %d does not fit the CQ or RQ", n);
	vlog("  SQ depth %d", n);
	TRY(buf_new(&src, &devs[0], (size_t)n * FILL_LEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], (size_t)n * FILL_LEN, IBV_ACCESS_LOCAL_WRITE));
	pattern(src.p, (size_t)n * FILL_LEN, 5);
	TRY(fill_post(&p, &src, n, 0));
	s = sge_of(&src, 0, 1);
	wr_fill(&wr, 9999, &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 });
	TRY(expect_post_send_fails(&p.a, &wr, &wr, ENOMEM, "a send beyond a full SQ"));
	TRY(expect_empty(p.a.scq, QUIET_MS, "sends without receives (RNR)"));
	TRY(fill_complete(&p, &src, &dst, n, 0));
	buf_clear(&dst);
	pattern(src.p, (size_t)n * FILL_LEN, 6);
	TRY(fill_post(&p, &src, n, n));
	TRY(fill_complete(&p, &src, &dst, n, n));
	return expect_empty(p.a.scq, 0, "a full SQ");
}

enum { DEEP1_ROUND = 256, DEEP1_ROUNDS = 8, DEEP1_LEN = 64 };

/*
 * A one-deep SQ posted to again the moment each send's completion is
 * polled, as ibv_rc_pingpong does: the slot must be free by then, never
 * ENOMEM.  sroce once made a send's completion visible a moment before it
 * gave the user ring's slot back, and ibv_rc_pingpong failed with
 * "Couldn't post send" in a loaded guest.  A race: a failure shows the
 * window open; a pass does not prove it shut.
 */
int case_sq_one_deep(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct ibv_sge s;
	struct pair p;
	char what[64];
	int r, i;

	conf_init(&c);
	c.cap.max_send_wr = 1;
	c.cap.max_recv_wr = DEEP1_ROUND;
	c.cqe = 2 * DEEP1_ROUND;
	TRY(pair_up(&p, &c));
	TRY(query_cap(&p.a, &p.a.cap));
	vlog("  SQ depth %u", p.a.cap.max_send_wr);
	TRY(buf_new(&src, &devs[0], DEEP1_ROUND * DEEP1_LEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], DEEP1_ROUND * DEEP1_LEN, IBV_ACCESS_LOCAL_WRITE));
	for (r = 0; r < DEEP1_ROUNDS; r++) {
		pattern(src.p, DEEP1_ROUND * DEEP1_LEN, (uint32_t)r + 11);
		for (i = 0; i < DEEP1_ROUND; i++)
			TRY(post_recv_buf(&p.b, (uint64_t)i, &dst, (size_t)i * DEEP1_LEN,
					  DEEP1_LEN));
		for (i = 0; i < DEEP1_ROUND; i++) {
			s = sge_of(&src, (size_t)i * DEEP1_LEN, DEEP1_LEN);
			snprintf(what, sizeof(what), "one-deep SQ: send %d of round %d", i, r);
			TRY(post_op(&p.a, (uint64_t)i,
				    &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 }));
			TRY(want_send(&p.a, (uint64_t)i, IBV_WC_SEND, what));
		}
		for (i = 0; i < DEEP1_ROUND; i++)
			TRY(want_recv(&p.b, (uint64_t)i, DEEP1_LEN, "one-deep SQ: receive"));
		TRY(check_buf(&dst, 0, src.p, DEEP1_ROUND * DEEP1_LEN, "one-deep SQ"));
	}
	return 0;
}

enum { NQP = 16, QREG = 16384 };

struct mq {
	struct pair p[NQP];
	struct buf asrc, aloc, bdst, brem;
	struct ibv_cq *cq[2][2];	/* [side][send, recv] */
	int n;
};

static size_t mq_len(int q, int kind)
{
	return 1000 + (size_t)q * 37 + (size_t)kind * 1111;
}

static int mq_post(struct mq *m, int q)
{
	struct ep *a = &m->p[q].a, *b = &m->p[q].b;
	size_t o = (size_t)q * QREG;

	struct ibv_sge s = sge_of(&m->asrc, o, mq_len(q, 1));

	TRY(post_recv_buf(b, q << 8 | 1, &m->bdst, o, QREG));
	TRY(post_op(a, q << 8 | 1, &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 }));
	TRY(post_rdma(a, q << 8 | 2, IBV_WR_RDMA_WRITE, &m->asrc, o, &m->brem, o, mq_len(q, 2), 0));
	return post_rdma(a, q << 8 | 3, IBV_WR_RDMA_READ, &m->aloc, o, &m->brem,
			 o + QREG / 2, mq_len(q, 3), 0);
}

/* A completion on a shared CQ: right QP, in order per QP, right opcode. */
static int mq_check_wc(struct mq *m, const struct ibv_wc *wc, int side, int *seq)
{
	static const enum ibv_wc_opcode ops[] = { IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE,
						  IBV_WC_RDMA_READ };
	int q = (int)(wc->wr_id >> 8), k = (int)(wc->wr_id & 0xff);
	struct ep *e;
	struct want w;

	CHECK(q < m->n && k >= 1 && k <= (side ? 1 : 3), "many QPs: unknown wr_id: %s", wc_desc(wc));
	e = side ? &m->p[q].b : &m->p[q].a;
	CHECK(k == seq[q] + 1, "many QPs: QP %d completed wr %d after wr %d: %s", q, k, seq[q],
	      wc_desc(wc));
	seq[q] = k;
	w = side ? w_recv(wc->wr_id, e, (uint32_t)mq_len(q, 1)) : w_ok(wc->wr_id, ops[k], e);
	return check_wc(wc, &w, side ? "many QPs: receive" : "many QPs: requester");
}

static int mq_poll(struct mq *m, struct ibv_cq *cq, int side, int count)
{
	int seq[NQP] = { 0 }, i, r;
	struct ibv_wc wc;

	for (i = 0; i < count; i++) {
		r = poll_wc(cq, &wc, opt.poll_ms, "many QPs");
		if (r < 0)
			return r;
		CHECK(!r, "many QPs: only %d of %d completions within %d ms", i, count, opt.poll_ms);
		TRY(mq_check_wc(m, &wc, side, seq));
	}
	return 0;
}

static int mq_verify(struct mq *m)
{
	int q;

	for (q = 0; q < m->n; q++) {
		size_t o = (size_t)q * QREG;

		TRY(check_bytes(m->bdst.p + o, m->asrc.p + o, mq_len(q, 1), "many QPs: send"));
		TRY(check_bytes(m->brem.p + o, m->asrc.p + o, mq_len(q, 2), "many QPs: write"));
		TRY(check_bytes(m->aloc.p + o, m->brem.p + o + QREG / 2, mq_len(q, 3),
				"many QPs: read"));
	}
	return 0;
}

/* NQP QP pairs on shared CQs, all traffic posted before any of it is reaped. */
int case_many_qps(void)
{
	static struct mq m;
	struct qp_conf c;
	int q, s;

	m.n = min_int(NQP, min_int(devs[0].attr.max_qp, devs[1].attr.max_qp) / 2 - 2);
	CHECK(m.n >= 2, "max_qp too small");
	conf_init(&c);
	for (s = 0; s < 2; s++) {
		m.cq[s][0] = c.scq[s] = cq_new(&devs[s], 4 * NQP + 16, NULL);
		m.cq[s][1] = c.rcq[s] = cq_new(&devs[s], 4 * NQP + 16, NULL);
		if (!c.scq[s] || !c.rcq[s])
			return -1;
	}
	for (q = 0; q < m.n; q++)
		TRY(pair_up(&m.p[q], &c));
	TRY(buf_new(&m.asrc, &devs[0], NQP * QREG, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&m.aloc, &devs[0], NQP * QREG, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&m.bdst, &devs[1], NQP * QREG, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&m.brem, &devs[1], NQP * QREG, mr_access_all()));
	pattern(m.asrc.p, NQP * QREG, 11);
	pattern(m.brem.p, NQP * QREG, 12);
	for (q = 0; q < m.n; q++)
		TRY(mq_post(&m, q));
	TRY(mq_poll(&m, m.cq[0][0], 0, 3 * m.n));
	TRY(mq_poll(&m, m.cq[1][1], 1, m.n));
	TRY(expect_empty(m.cq[0][0], 50, "many QPs"));
	TRY(expect_empty(m.cq[1][1], 0, "many QPs"));
	TRY(mq_verify(&m));
	if (m.n < NQP)
		return skipf("%d QP pairs, not %d: max_qp is %d and %d", m.n, NQP,
			     devs[0].attr.max_qp, devs[1].attr.max_qp);
	return 0;
}
