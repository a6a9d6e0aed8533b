// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * errors.c - sroce_rc_test: the error cases, completed in error and
 * refused at once.
 */

#include "rc.h"

/* --- cases: errors ------------------------------------------------------------ */

/*
 * After an error completion the QP is in ERR and the WR after the failed
 * one is flushed.
 */
static int err_then_flush(struct pair *p, enum ibv_wc_status st, const char *what)
{
	TRY(want_err(&p->a, p->a.scq, 1, st, what));
	TRY(want_err(&p->a, p->a.scq, 2, IBV_WC_WR_FLUSH_ERR, what));
	return expect_state(&p->a, IBV_QPS_ERR, what);
}

static int err_pair(struct pair *p, struct buf *loc, struct buf *rem, unsigned int rem_access)
{
	struct qp_conf c;

	conf_init(&c);
	TRY(pair_up(p, &c));
	TRY(buf_new(loc, &devs[0], 8192, IBV_ACCESS_LOCAL_WRITE));
	return buf_new(rem, &devs[1], 4096, rem_access);
}

/* RDMA @op of @len bytes at @raddr with @rkey, then a valid one (flushed). */
static int post_bad_rdma(struct pair *p, enum ibv_wr_opcode op, struct buf *loc,
			 uint64_t raddr, uint32_t rkey, size_t len, struct buf *rem)
{
	struct ibv_sge s = sge_of(loc, 0, len);

	TRY(post_op(&p->a, 1, &(struct op){ .op = op, .sg = &s, .nsge = 1, .raddr = raddr,
					    .rkey = rkey }));
	return post_rdma(&p->a, 2, op, loc, 0, rem, 0, 8, 0);
}

int case_err_rkey(void)
{
	struct buf loc, rem;
	struct pair p;
	uint32_t bad;

	TRY(err_pair(&p, &loc, &rem, mr_access_all()));
	bad = rem.mr->rkey ^ 0x5a5a00;
	TRY(post_bad_rdma(&p, IBV_WR_RDMA_WRITE, &loc, addr_of(&rem, 0), bad, 100, &rem));
	TRY(err_then_flush(&p, IBV_WC_REM_ACCESS_ERR, "RDMA write with a wrong rkey"));
	TRY(check_fill(rem.p, 4096 + GUARD, "RDMA write with a wrong rkey"));
	TRY(err_pair(&p, &loc, &rem, mr_access_all()));
	bad = rem.mr->rkey ^ 0x5a5a00;
	TRY(post_bad_rdma(&p, IBV_WR_RDMA_READ, &loc, addr_of(&rem, 0), bad, 100, &rem));
	return err_then_flush(&p, IBV_WC_REM_ACCESS_ERR, "RDMA read with a wrong rkey");
}

/* Reads that reach past either end of an MR of exactly 4096 bytes. */
int case_err_read_range(void)
{
	static const struct { long off; size_t len; const char *what; } t[] = {
		{ 0, 4097, "read of 4097 bytes from a 4096-byte MR" },
		{ 4096, 1, "read of 1 byte just past the MR's end" },
		{ 4090, 8, "read across the MR's end" },
		{ -4, 8, "read starting before the MR" },
	};
	struct buf loc, rem;
	struct qp_conf c;
	struct pair p;
	size_t i;

	conf_init(&c);
	TRY(buf_new(&loc, &devs[0], 8192, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_reg(&rem, &devs[1], 8192, 4096, mr_access_all()));
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		TRY(pair_up(&p, &c));
		TRY(post_bad_rdma(&p, IBV_WR_RDMA_READ, &loc, addr_of(&rem, 0) + t[i].off,
				  rem.mr->rkey, t[i].len, &rem));
		TRY(err_then_flush(&p, IBV_WC_REM_ACCESS_ERR, t[i].what));
	}
	/* The whole MR, exactly, is fine. */
	TRY(pair_up(&p, &c));
	TRY(post_rdma(&p.a, 1, IBV_WR_RDMA_READ, &loc, 0, &rem, 0, 4096, 0));
	return want_send(&p.a, 1, IBV_WC_RDMA_READ, "read of the whole MR");
}

/*
 * A write to an MR without remote write access: REM_ACCESS_ERR, nothing
 * written; reading the same MR works.  A write to a QP whose access flags
 * lack remote write fails too; IBTA has the responder NAK it as an Invalid
 * Request (an operation the QP does not support), some devices report a
 * remote access error: either is taken, success is not.
 */
int case_err_write_access(void)
{
	struct buf loc, rem;
	struct qp_conf c;
	struct pair p;
	struct ibv_wc wc;
	int r;

	TRY(err_pair(&p, &loc, &rem, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	TRY(post_bad_rdma(&p, IBV_WR_RDMA_WRITE, &loc, addr_of(&rem, 0), rem.mr->rkey, 64, &rem));
	TRY(err_then_flush(&p, IBV_WC_REM_ACCESS_ERR, "write to an MR without remote write"));
	TRY(check_fill(rem.p, 4096 + GUARD, "write to an MR without remote write"));
	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(read_one(&p, &loc, &rem, 0, 64, 3));

	conf_init(&c);
	c.access = IBV_ACCESS_REMOTE_READ;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&rem, &devs[1], 4096, mr_access_all()));
	TRY(post_rdma(&p.a, 1, IBV_WR_RDMA_WRITE, &loc, 0, &rem, 0, 64, 0));
	r = poll_wc(p.a.scq, &wc, opt.poll_ms, "write to a QP without remote write");
	if (r < 0)
		return r;
	CHECK(!r, "write to a QP without remote write: no completion within %d ms", opt.poll_ms);
	CHECK(wc.wr_id == 1 && wc.qp_num == p.a.qp->qp_num, "write to a QP without remote write: %s",
	      wc_desc(&wc));
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR || wc.status == IBV_WC_REM_ACCESS_ERR,
	      "write to a QP without remote write: %s", wc_desc(&wc));
	TRY(check_fill(rem.p, 4096 + GUARD, "write to a QP without remote write"));
	return expect_state(&p.a, IBV_QPS_ERR, "write to a QP without remote write");
}

/* rnr_retry 7 retries forever: a receive posted late still gets the message. */
int case_rnr_infinite(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	c.rnr_retry = 7;
	c.min_rnr_timer = 1;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 3000, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 3000, IBV_ACCESS_LOCAL_WRITE));
	pattern(src.p, 3000, 3);
	TRY(post_send_buf(&p.a, 1, IBV_WR_SEND, &src, 3000, 0));
	TRY(expect_empty(p.a.scq, 1000, "send to a QP without receives, infinite RNR retry"));
	TRY(expect_state(&p.a, IBV_QPS_RTS, "while RNR-retrying"));
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 3000));
	TRY(want_recv(&p.b, 1, 3000, "late receive"));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "send completed after RNR retries"));
	return check_buf(&dst, 0, src.p, 3000, "send completed after RNR retries");
}

int case_rnr_exceeded(void)
{
	struct qp_conf c;
	struct buf src;
	struct pair p;
	char what[64];
	int r;

	for (r = 0; r <= 1; r++) {
		snprintf(what, sizeof(what), "send without a receive, rnr_retry %d", r);
		conf_init(&c);
		c.rnr_retry = (uint8_t)r;
		c.min_rnr_timer = 1;
		TRY(pair_up(&p, &c));
		TRY(buf_new(&src, &devs[0], 100, IBV_ACCESS_LOCAL_WRITE));
		TRY(post_send_buf(&p.a, 1, IBV_WR_SEND, &src, 100, 0));
		TRY(want_err(&p.a, p.a.scq, 1, IBV_WC_RNR_RETRY_EXC_ERR, what));
		TRY(expect_state(&p.a, IBV_QPS_ERR, what));
		/* RNR is no error on the responder's side. */
		TRY(expect_state(&p.b, IBV_QPS_RTS, what));
		TRY(expect_empty(p.b.rcq, 0, what));
	}
	return 0;
}

/* A peer that does not answer: retry_cnt 1, timeout 14 (67 ms). */
int case_retry_exceeded(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	c.unreach = true;
	c.retry_cnt = 1;
	c.timeout = 14;
	TRY(pair_up(&p, &c));
	vlog("  A sends to %s", gid_str(&unreach_gid));
	TRY(buf_new(&src, &devs[0], 100, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 100, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 100));
	TRY(post_send_buf(&p.a, 1, IBV_WR_SEND, &src, 100, 0));
	TRY(want_err(&p.a, p.a.scq, 1, IBV_WC_RETRY_EXC_ERR, "send to nobody"));
	TRY(expect_state(&p.a, IBV_QPS_ERR, "send to nobody"));
	return expect_empty(p.b.rcq, 0, "send to nobody");
}

/* A QP moved to ERR flushes every outstanding WR, and every send posted later. */
int case_flush(void)
{
	enum { K = 4 };
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	int i;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 100, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[0], 100 * (K + 1), IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < K; i++) {
		TRY(post_recv_buf(&p.a, 10 + i, &dst, i * 100, 100));
		/* B has no receive: these stay outstanding (RNR, retried forever). */
		TRY(post_send_buf(&p.a, 1 + i, IBV_WR_SEND, &src, 100, 0));
	}
	TRY(expect_empty(p.a.scq, QUIET_MS, "sends to a QP without receives"));
	TRY(qp_to_err(&p.a));
	for (i = 0; i < K; i++)
		TRY(want_err(&p.a, p.a.scq, 1 + i, IBV_WC_WR_FLUSH_ERR, "outstanding send, QP to ERR"));
	for (i = 0; i < K; i++)
		TRY(want_err(&p.a, p.a.rcq, 10 + i, IBV_WC_WR_FLUSH_ERR, "outstanding receive, QP to ERR"));
	TRY(post_send_buf(&p.a, 5, IBV_WR_SEND, &src, 100, 0));
	TRY(want_err(&p.a, p.a.scq, 5, IBV_WC_WR_FLUSH_ERR, "send posted in ERR"));
	TRY(expect_empty(p.a.scq, 50, "after the flush"));
	TRY(expect_empty(p.a.rcq, 0, "after the flush"));
	return expect_empty(p.b.rcq, 0, "after the flush");
}

/*
 * A receive posted to a QP in ERR completes at once, flushed.
 *
 * rxe deviation: a user QP's receive queue is a ring shared with the kernel
 * and ibv_post_recv never enters the kernel, which looks at the ring only
 * when a packet arrives: a receive posted in ERR is never flushed.
 */
int case_flush_recv_in_err(void)
{
	struct qp_conf c;
	struct pair p;
	struct buf dst;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&dst, &devs[0], 100, IBV_ACCESS_LOCAL_WRITE));
	TRY(qp_to_err(&p.a));
	TRY(expect_empty(p.a.rcq, 50, "QP moved to ERR without WRs"));
	TRY(post_recv_buf(&p.a, 14, &dst, 0, 100));
	TRY(want_err(&p.a, p.a.rcq, 14, IBV_WC_WR_FLUSH_ERR, "receive posted in ERR"));
	return expect_empty(p.a.rcq, 50, "after the flush");
}

/*
 * A message longer than the receive buffer: LOC_LEN_ERR there, REM_INV_REQ_ERR here.
 *
 * rxe deviation: rxe's copy_data() fails the oversized message with EINVAL
 * instead of ENOSPC, so the responder takes it for a malformed WQE: the
 * receive completes with IBV_WC_LOC_QP_OP_ERR, the send with IBV_WC_REM_OP_ERR.
 */
int case_recv_too_small(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 100));
	TRY(post_send_buf(&p.a, 1, IBV_WR_SEND, &src, 101, 0));
	TRY(want_err(&p.b, p.b.rcq, 1, IBV_WC_LOC_LEN_ERR, "receive buffer too small"));
	TRY(want_err(&p.a, p.a.scq, 1, IBV_WC_REM_INV_REQ_ERR, "message too long for the receive"));
	TRY(expect_state(&p.a, IBV_QPS_ERR, "message too long for the receive"));
	TRY(expect_state(&p.b, IBV_QPS_ERR, "receive buffer too small"));
	return check_fill(dst.p + 100, 4096 + GUARD - 100, "receive buffer too small");
}

/* --- cases: immediate errors, nothing posted ---------------------------------- */

static bool cap_equal(const struct ibv_qp_cap *a, const struct ibv_qp_cap *b)
{
	return a->max_send_wr == b->max_send_wr && a->max_recv_wr == b->max_recv_wr &&
	       a->max_send_sge == b->max_send_sge && a->max_recv_sge == b->max_recv_sge &&
	       a->max_inline_data == b->max_inline_data;
}

/* ibv_create_qp reports the QP's actual capabilities: those ibv_query_qp reports. */
static int qp_caps_one(struct ep *e, const struct ibv_qp_cap *req)
{
	struct ibv_qp_cap q;
	struct qp_conf c;

	conf_init(&c);
	c.cap = *req;
	TRY(ep_create(e, 0, &c));
	TRY(query_cap(e, &q));
	CHECK(cap_equal(&e->cap, &q),
	      "asked for wr %u/%u, sge %u/%u, inline %u: ibv_create_qp reported wr %u/%u, sge %u/%u, inline %u; ibv_query_qp wr %u/%u, sge %u/%u, inline %u",
	      req->max_send_wr, req->max_recv_wr, req->max_send_sge, req->max_recv_sge,
	      req->max_inline_data, e->cap.max_send_wr, e->cap.max_recv_wr, e->cap.max_send_sge,
	      e->cap.max_recv_sge, e->cap.max_inline_data, q.max_send_wr, q.max_recv_wr,
	      q.max_send_sge, q.max_recv_sge, q.max_inline_data);
	return 0;
}

/* A QP beyond the device's limits is refused. */
static int qp_caps_refused(const struct ibv_qp_cap *req, const char *what)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	cq = cq_new(&devs[0], 4, NULL);
	if (!cq)
		return -1;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = *req;
	qp = ibv_create_qp(devs[0].pd, &ia);
	if (qp)
		ibv_destroy_qp(qp);
	CHECK(!qp, "%s: ibv_create_qp succeeded", what);
	return 0;
}

/*
 * rxe deviation: rxe's create reports the requested max_send_wr and
 * max_recv_wr, not the rounded-up ring size it allocates (rxe_queue_init),
 * which ibv_query_qp reports and ibv_post_send honours.
 */
int case_qp_caps(void)
{
	const struct ibv_device_attr *da = &devs[0].attr;
	struct ibv_qp_cap req[] = {
		{ 1, 1, 1, 1, 0 },
		{ 100, 33, 2, 3, 0 },
		{ 256, 256, 1, 1, 0 },
		{ (uint32_t)da->max_qp_wr, (uint32_t)da->max_qp_wr, (uint32_t)da->max_sge,
		  (uint32_t)da->max_sge, 0 },
	};
	struct ibv_qp_cap big = { (uint32_t)da->max_qp_wr + 1, 1, 1, 1, 0 };
	struct ep e;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(req); i++)
		TRY(qp_caps_one(&e, &req[i]));
	TRY(qp_caps_refused(&big, "max_send_wr = max_qp_wr + 1"));
	big = (struct ibv_qp_cap){ 1, (uint32_t)da->max_qp_wr + 1, 1, 1, 0 };
	TRY(qp_caps_refused(&big, "max_recv_wr = max_qp_wr + 1"));
	big = (struct ibv_qp_cap){ 1, 1, (uint32_t)da->max_sge + 1, 1, 0 };
	TRY(qp_caps_refused(&big, "max_send_sge = max_sge + 1"));
	big = (struct ibv_qp_cap){ 1, 1, 1, (uint32_t)da->max_sge + 1, 0 };
	return qp_caps_refused(&big, "max_recv_sge = max_sge + 1");
}

/* A sends @len bytes of a fresh pattern from @src (@dst cleared): its completion, nothing else. */
static int good_send_after(struct pair *p, struct buf *src, struct buf *dst, uint64_t id,
			   size_t len, const char *what)
{
	buf_clear(dst);
	pattern(src->p, len, (uint32_t)id);
	TRY(post_send_buf(&p->a, id, IBV_WR_SEND, src, len, 0));
	TRY(want_send(&p->a, id, IBV_WC_SEND, what));
	TRY(expect_empty(p->a.scq, 50, what));
	return 0;
}

/*
 * Posting to the SQ of a QP in RESET, INIT or RTR is an immediate error and
 * nothing is queued: once the QP is in RTS only the valid send arrives.
 * Posting a receive in RESET is an immediate error too.
 *
 * rxe deviation: rxe's provider does not look at the QP state in
 * ibv_post_send; it queues the WQE, then its doorbell system call fails
 * (EINVAL) and bad_wr is left NULL; the queued WQE is executed once the QP
 * reaches RTS.  Its ibv_post_recv in RESET fails, but with bad_wr NULL.
 */
int case_post_bad_state(void)
{
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr;
	struct peer_info to_a, to_b;
	struct buf src, dst;
	struct ibv_sge s, rs;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	TRY(pair_create(&p, &c));
	to_a = info_of(&p.a);
	to_b = info_of(&p.b);
	TRY(ep_connect(&p.b, &to_a, &c));
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 50, &dst, 0, 4096));
	s = sge_of(&src, 0, 101);
	wr_fill(&wr, 1, &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 });
	TRY(expect_post_send_fails(&p.a, &wr, &wr, 0, "post_send in RESET"));
	rs = sge_of(&src, 0, 4096);
	rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
	TRY(expect_post_recv_fails(&p.a, &rwr, &rwr, 0, "post_recv in RESET"));
	TRY(qp_to_init(&p.a, &c));
	s.length = 102;
	wr.wr_id = 2;
	TRY(expect_post_send_fails(&p.a, &wr, &wr, 0, "post_send in INIT"));
	TRY(qp_to_rtr(&p.a, &to_b, &c));
	s.length = 103;
	wr.wr_id = 3;
	TRY(expect_post_send_fails(&p.a, &wr, &wr, 0, "post_send in RTR"));
	TRY(qp_to_rts(&p.a, &c));
	TRY(expect_empty(p.b.rcq, QUIET_MS, "after posts refused before RTS"));
	TRY(expect_empty(p.a.scq, 0, "after posts refused before RTS"));
	TRY(good_send_after(&p, &src, &dst, 4, 777, "the first valid send in RTS"));
	TRY(want_recv(&p.b, 50, 777, "the first valid send in RTS"));
	TRY(check_buf(&dst, 0, src.p, 777, "the first valid send in RTS"));
	/* Had the receive refused in RESET been queued, it would take this send. */
	TRY(post_recv_buf(&p.a, 8, &src, 0, 4096));
	TRY(post_send_buf(&p.b, 9, IBV_WR_SEND, &dst, 10, 0));
	TRY(want_recv(&p.a, 8, 10, "a send from B after a receive refused in RESET"));
	return want_send(&p.b, 9, IBV_WC_SEND, "a send from B");
}

/* [good, too many SGEs, good]: the first is posted, the rest not. */
int case_post_too_many_sge(void)
{
	enum { MAXS = 64 };
	struct ibv_send_wr w[3];
	struct ibv_sge s[MAXS + 1], g;
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	int n, i;

	conf_init(&c);
	c.cap.max_send_sge = (uint32_t)min_int(devs[0].attr.max_sge, 4);
	TRY(pair_up(&p, &c));
	n = (int)p.a.cap.max_send_sge + 1;
	CHECK(n <= MAXS, "max_send_sge %d too large for this test", n - 1);
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 8192, IBV_ACCESS_LOCAL_WRITE));
	pattern(src.p, 4096, 1);
	for (i = 0; i < n; i++)
		s[i] = sge_of(&src, (size_t)i, 1);
	g = sge_of(&src, 0, 100);
	wr_fill(&w[0], 1, &(struct op){ .op = IBV_WR_SEND, .sg = &g, .nsge = 1 });
	wr_fill(&w[1], 2, &(struct op){ .op = IBV_WR_SEND, .sg = s, .nsge = n });
	wr_fill(&w[2], 3, &(struct op){ .op = IBV_WR_SEND, .sg = &g, .nsge = 1 });
	w[0].next = &w[1];
	w[1].next = &w[2];
	TRY(post_recv_buf(&p.b, 60, &dst, 0, 4096));
	TRY(post_recv_buf(&p.b, 61, &dst, 4096, 4096));
	TRY(expect_post_send_fails(&p.a, &w[0], &w[1], EINVAL, "a send with max_send_sge + 1 SGEs"));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "the WR before the bad one"));
	TRY(want_recv(&p.b, 60, 100, "the WR before the bad one"));
	TRY(expect_empty(p.b.rcq, QUIET_MS, "the WRs from the bad one on"));
	TRY(expect_empty(p.a.scq, 0, "the WRs from the bad one on"));
	TRY(good_send_after(&p, &src, &dst, 4, 55, "a valid send after the refused one"));
	return want_recv(&p.b, 61, 55, "a valid send after the refused one");
}

int case_post_inline_too_big(void)
{
	static uint8_t data[8192];
	struct ibv_send_wr wr;
	struct buf src, dst;
	struct ibv_sge s;
	struct qp_conf c;
	struct pair p;
	uint32_t max;

	TRY(probe_inline(&devs[0], &max));
	conf_init(&c);
	c.cap.max_inline_data = max;
	TRY(pair_up(&p, &c));
	max = p.a.cap.max_inline_data;
	CHECK(max < sizeof(data), "max_inline_data %u too large for this test", max);
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 8192, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 70, &dst, 0, 8192));
	s = (struct ibv_sge){ .addr = (uintptr_t)data, .length = max + 1, .lkey = 0xbad };
	wr_fill(&wr, 1, &(struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1,
				      .flags = IBV_SEND_INLINE });
	TRY(expect_post_send_fails(&p.a, &wr, &wr, EINVAL, "inline send of max_inline_data + 1"));
	TRY(expect_empty(p.b.rcq, QUIET_MS, "inline send refused"));
	TRY(good_send_after(&p, &src, &dst, 2, 33, "a valid send after the refused one"));
	return want_recv(&p.b, 70, 33, "a valid send after the refused one");
}

/* [good, too many SGEs, good] receives: the first is posted, the rest not. */
int case_post_recv_too_many_sge(void)
{
	enum { MAXS = 64 };
	struct ibv_recv_wr w[3];
	struct ibv_sge s[MAXS + 1], g[2];
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	int n, i;

	conf_init(&c);
	c.cap.max_recv_sge = (uint32_t)min_int(devs[1].attr.max_sge, 4);
	TRY(pair_up(&p, &c));
	n = (int)p.b.cap.max_recv_sge + 1;
	CHECK(n <= MAXS, "max_recv_sge %d too large for this test", n - 1);
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 4 * 4096, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < n; i++)
		s[i] = sge_of(&dst, 2 * 4096 + (size_t)i * 16, 16);
	g[0] = sge_of(&dst, 0, 4096);
	g[1] = sge_of(&dst, 4096, 4096);
	w[0] = (struct ibv_recv_wr){ .wr_id = 70, .sg_list = &g[0], .num_sge = 1, .next = &w[1] };
	w[1] = (struct ibv_recv_wr){ .wr_id = 71, .sg_list = s, .num_sge = n, .next = &w[2] };
	w[2] = (struct ibv_recv_wr){ .wr_id = 72, .sg_list = &g[1], .num_sge = 1 };
	TRY(expect_post_recv_fails(&p.b, &w[0], &w[1], EINVAL, "a receive with max_recv_sge + 1 SGEs"));
	/* Two sends: the first takes receive 70, the second finds none (RNR) ... */
	TRY(good_send_after(&p, &src, &dst, 1, 300, "send into the receive before the bad one"));
	TRY(want_recv(&p.b, 70, 300, "the receive before the bad one"));
	TRY(post_send_buf(&p.a, 2, IBV_WR_SEND, &src, 200, 0));
	TRY(expect_empty(p.b.rcq, QUIET_MS, "the receives from the bad one on"));
	TRY(expect_empty(p.a.scq, 0, "the receives from the bad one on"));
	/* ... until one is posted. */
	TRY(post_recv_buf(&p.b, 73, &dst, 3 * 4096, 4096));
	TRY(want_recv(&p.b, 73, 200, "a receive posted after the refused ones"));
	TRY(want_send(&p.a, 2, IBV_WC_SEND, "a receive posted after the refused ones"));
	TRY(check_bytes(dst.p + 3 * 4096, src.p, 200, "a receive posted after the refused ones"));
	return check_fill(dst.p + 2 * 4096, 4096, "the refused receive's buffers");
}
