// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma.c - sroce_rc_test: the RDMA WRITE, RDMA READ and atomic cases.
 */

#include "rc.h"

/* --- cases: RDMA WRITE and READ ----------------------------------------------- */

static const size_t rdma_sizes[] = { 1, 4095, 4096, 65537, MIB };

static int write_one(struct pair *p, struct buf *src, struct buf *dst, size_t off, size_t len,
		     uint64_t id)
{
	char what[64];

	snprintf(what, sizeof(what), "RDMA write of %zu bytes at offset %zu", len, off);
	buf_clear(dst);
	pattern(src->p, len, (uint32_t)id);
	TRY(post_rdma(&p->a, id, IBV_WR_RDMA_WRITE, src, 0, dst, off, len, 0));
	TRY(want_send(&p->a, id, IBV_WC_RDMA_WRITE, what));
	return check_buf(dst, off, src->p, len, what);
}

/* RDMA writes land where they are aimed and consume no receive. */
int case_rdma_write(void)
{
	struct buf src, dst, rb;
	struct qp_conf c;
	struct pair p;
	size_t i;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], MIB, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], MIB + 8, mr_access_all()));
	TRY(buf_new(&rb, &devs[1], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 777, &rb, 0, 64));
	for (i = 0; i < ARRAY_SIZE(rdma_sizes); i++)
		TRY(write_one(&p, &src, &dst, i % 2 ? 3 : 0, rdma_sizes[i], i + 1));
	TRY(expect_empty(p.b.rcq, 50, "RDMA writes"));
	TRY(post_send_buf(&p.a, 99, IBV_WR_SEND, &src, 8, 0));
	TRY(want_recv(&p.b, 777, 8, "send after RDMA writes: the receive posted before them"));
	return want_send(&p.a, 99, IBV_WC_SEND, "send after RDMA writes");
}

/* Write with immediate: data at the address, a receive consumed, its buffer untouched. */
int case_rdma_write_imm(void)
{
	static const size_t sizes[] = { 0, 1, 65537 };
	struct buf src, dst, rb;
	struct qp_conf c;
	struct pair p;
	struct want w;
	uint32_t imm;
	size_t i;
	char what[64];

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 65537, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 65537 + 8, mr_access_all()));
	TRY(buf_new(&rb, &devs[1], 256, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "RDMA write with immediate, %zu bytes", sizes[i]);
		imm = htobe32(0xfeed0000u + (uint32_t)i);
		buf_clear(&dst);
		pattern(src.p, sizes[i], (uint32_t)i + 7);
		/* A receive without SGEs is enough for a write with immediate. */
		if (i == 1)
			TRY(post_recv(&p.b, 50 + i, NULL, 0));
		else
			TRY(post_recv_buf(&p.b, 50 + i, &rb, 0, 256));
		TRY(post_rdma(&p.a, i, IBV_WR_RDMA_WRITE_WITH_IMM, &src, 0, &dst, 5, sizes[i], imm));
		w = w_recv_imm(50 + i, &p.b, (uint32_t)sizes[i], IBV_WC_RECV_RDMA_WITH_IMM, imm);
		TRY(expect_wc(p.b.rcq, &w, what));
		TRY(want_send(&p.a, i, IBV_WC_RDMA_WRITE, what));
		TRY(check_buf(&dst, 5, src.p, sizes[i], what));
		TRY(check_fill(rb.p, 256 + GUARD, "the receive buffer of a write with immediate"));
	}
	return 0;
}

/*
 * Zero-length RDMA: the responder checks neither R_Key nor address (IBTA
 * C9-88), so a bogus rkey and address must work, and nothing is written.
 */
int case_rdma_write_zero(void)
{
	struct buf src, dst;
	struct ibv_sge s;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 64, mr_access_all()));
	TRY(post_rdma(&p.a, 1, IBV_WR_RDMA_WRITE, &src, 0, &dst, 0, 0, 0));
	TRY(want_send(&p.a, 1, IBV_WC_RDMA_WRITE, "zero-length write, no SGE"));
	s = sge_of(&src, 0, 0);
	TRY(post_op(&p.a, 2, &(struct op){ .op = IBV_WR_RDMA_WRITE, .sg = &s, .nsge = 1,
		.raddr = addr_of(&dst, 0), .rkey = dst.mr->rkey }));
	TRY(want_send(&p.a, 2, IBV_WC_RDMA_WRITE, "zero-length write, one empty SGE"));
	TRY(post_op(&p.a, 3, &(struct op){ .op = IBV_WR_RDMA_WRITE, .raddr = 0x1000,
		.rkey = dst.mr->rkey ^ 0x5a5a00 }));
	TRY(want_send(&p.a, 3, IBV_WC_RDMA_WRITE, "zero-length write, bogus rkey and address"));
	TRY(post_op(&p.a, 4, &(struct op){ .op = IBV_WR_RDMA_READ, .raddr = 0x1000,
		.rkey = dst.mr->rkey ^ 0x5a5a00 }));
	TRY(want_send(&p.a, 4, IBV_WC_RDMA_READ, "zero-length read, bogus rkey and address"));
	TRY(check_fill(dst.p, 64 + GUARD, "zero-length writes"));
	TRY(expect_state(&p.a, IBV_QPS_RTS, "after zero-length RDMA"));
	TRY(write_one(&p, &src, &dst, 0, 8, 5));
	return expect_empty(p.b.rcq, 50, "zero-length writes");
}

int read_one(struct pair *p, struct buf *loc, struct buf *rem, size_t off, size_t len,
	     uint64_t id)
{
	char what[64];

	snprintf(what, sizeof(what), "RDMA read of %zu bytes at offset %zu", len, off);
	buf_clear(loc);
	pattern(rem->p + off, len, (uint32_t)id);
	TRY(post_rdma(&p->a, id, IBV_WR_RDMA_READ, loc, 0, rem, off, len, 0));
	TRY(want_send(&p->a, id, IBV_WC_RDMA_READ, what));
	return check_buf(loc, 0, rem->p + off, len, what);
}

int case_rdma_read(void)
{
	enum { NOUT = 8, OLEN = 8192 };
	struct buf loc, rem;
	struct qp_conf c;
	struct pair p;
	size_t i;

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&loc, &devs[0], MIB, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&rem, &devs[1], MIB + 8, mr_access_all()));
	TRY(read_one(&p, &loc, &rem, 0, 0, 100));
	for (i = 0; i < ARRAY_SIZE(rdma_sizes); i++)
		TRY(read_one(&p, &loc, &rem, i % 2 ? 3 : 0, rdma_sizes[i], i + 1));
	/* Several reads outstanding at once. */
	buf_clear(&loc);
	pattern(rem.p, NOUT * OLEN, 42);
	for (i = 0; i < NOUT; i++)
		TRY(post_rdma(&p.a, 200 + i, IBV_WR_RDMA_READ, &loc, i * OLEN, &rem, i * OLEN,
			      OLEN, 0));
	for (i = 0; i < NOUT; i++)
		TRY(want_send(&p.a, 200 + i, IBV_WC_RDMA_READ, "outstanding reads"));
	return check_buf(&loc, 0, rem.p, NOUT * OLEN, "outstanding reads");
}

/*
 * READs in a stream, more posted than may be outstanding, on two
 * responder resources: each new READ takes the resource of one the
 * requester has all of, while that resource may still be replaying its
 * answer for a duplicate (a local ACK timeout fired while the answer was
 * on its way).  A responder that refused the new READ as over the limit
 * failed the QP with an invalid-request NAK; ib_srpt saw that on sroce as
 * an RDMA READ failing with status 9 (srp/two_devices).  This case runs
 * the stream; how often a replay overlaps a new READ depends on timing
 * it does not control (sroce_peer's read_replay_new_read, group peer,
 * sends that overlap on purpose).
 */
int case_read_stream(void)
{
	enum { N = 16, SZ = 2 * MIB, LEN = SZ / N };
	struct buf loc, rem;
	struct qp_conf c;
	struct pair p;
	size_t i;

	conf_init(&c);
	c.rd_atom = 2;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&loc, &devs[0], SZ, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&rem, &devs[1], SZ, mr_access_all()));
	buf_clear(&loc);
	pattern(rem.p, SZ, 77);
	for (i = 0; i < N; i++)
		TRY(post_rdma(&p.a, 300 + i, IBV_WR_RDMA_READ, &loc, i * LEN, &rem, i * LEN,
			      LEN, 0));
	for (i = 0; i < N; i++)
		TRY(want_send(&p.a, 300 + i, IBV_WC_RDMA_READ, "a READ stream"));
	return check_buf(&loc, 0, rem.p, SZ, "a READ stream");
}

/* One read scattered into several SGEs in separate MRs. */
int case_rdma_read_sge(void)
{
	enum { MAXS = 8 };
	struct buf loc[MAXS], rem;
	struct ibv_sge s[MAXS];
	size_t len[MAXS], total = 0, got = 0;
	struct qp_conf c;
	struct pair p;
	int n, i;

	conf_init(&c);
	n = c.cap.max_send_sge = (uint32_t)min_int(devs[0].attr.max_sge, MAXS);
	TRY(pair_up(&p, &c));
	for (i = 0; i < n; i++) {
		len[i] = 1 + ((size_t)i * 2311 + 1500) % 5000;
		TRY(buf_new(&loc[i], &devs[0], len[i], IBV_ACCESS_LOCAL_WRITE));
		s[i] = sge_of(&loc[i], 0, len[i]);
		total += len[i];
	}
	TRY(buf_new(&rem, &devs[1], total, mr_access_all()));
	pattern(rem.p, total, 9);
	TRY(post_op(&p.a, 1, &(struct op){ .op = IBV_WR_RDMA_READ, .sg = s, .nsge = n,
		.raddr = addr_of(&rem, 0), .rkey = rem.mr->rkey }));
	TRY(want_send(&p.a, 1, IBV_WC_RDMA_READ, "read into SGEs"));
	vlog("  %d SGEs, %zu bytes", n, total);
	for (i = 0; i < n; i++) {
		TRY(check_buf(&loc[i], 0, rem.p + got, len[i], "read into SGEs"));
		got += len[i];
	}
	if (n < 2)
		return skipf("max_sge %d: no list to read into", devs[0].attr.max_sge);
	return 0;
}

/* --- cases: atomics ------------------------------------------------------------ */

/* Atomic target: 8-byte word at offset 8 of a 32-byte MR, FILL around it. */
static int atomic_setup(struct pair *p, struct buf *loc, size_t nloc, struct buf *rem)
{
	struct qp_conf c;

	if (!has_atomics())
		return skipf("no atomics (atomic_cap is IBV_ATOMIC_NONE)");
	conf_init(&c);
	TRY(pair_up(p, &c));
	TRY(buf_new(loc, &devs[0], nloc * 8, IBV_ACCESS_LOCAL_WRITE));
	return buf_new(rem, &devs[1], 32, mr_access_all());
}

static int check_atomic_target(const struct buf *rem, uint64_t want, const char *what)
{
	uint64_t v = load64(rem->p + 8);

	CHECK(v == want, "%s: target holds 0x%llx, expected 0x%llx", what, (unsigned long long)v,
	      (unsigned long long)want);
	TRY(check_fill(rem->p, 8, what));
	return check_fill(rem->p + 16, 16 + GUARD, what);
}

int check_result(const struct buf *loc, size_t i, uint64_t want, const char *what)
{
	uint64_t v = load64(loc->p + i * 8);

	CHECK(v == want, "%s: returned 0x%llx, expected the original 0x%llx", what,
	      (unsigned long long)v, (unsigned long long)want);
	return 0;
}

int case_atomic_cas(void)
{
	const uint64_t v0 = 0x1122334455667788ull, v1 = 0xa1a2a3a4a5a6a7a8ull;
	struct buf loc, rem;
	struct pair p;

	TRY(atomic_setup(&p, &loc, 2, &rem));
	store64(rem.p + 8, v0);
	TRY(post_atomic(&p.a, 1, IBV_WR_ATOMIC_CMP_AND_SWP, &loc, 0, &rem, 8, v0, v1));
	TRY(want_send(&p.a, 1, IBV_WC_COMP_SWAP, "compare-and-swap that matches"));
	TRY(check_result(&loc, 0, v0, "compare-and-swap that matches"));
	TRY(check_atomic_target(&rem, v1, "compare-and-swap that matches"));
	TRY(post_atomic(&p.a, 2, IBV_WR_ATOMIC_CMP_AND_SWP, &loc, 8, &rem, 8, v0, 0xdead));
	TRY(want_send(&p.a, 2, IBV_WC_COMP_SWAP, "compare-and-swap that does not match"));
	TRY(check_result(&loc, 1, v1, "compare-and-swap that does not match"));
	return check_atomic_target(&rem, v1, "compare-and-swap that does not match");
}

/* Many fetch-and-adds, posted in batches; the low word carries into the high one. */
int case_atomic_faa(void)
{
	enum { N = 256 };
	const uint64_t v0 = 0x00000000ffffff00ull;
	uint64_t sum = v0;
	struct buf loc, rem;
	struct pair p;
	int batch, i, j;

	TRY(atomic_setup(&p, &loc, N, &rem));
	store64(rem.p + 8, v0);
	batch = min_int((int)p.a.cap.max_send_wr, 64);
	for (i = 0; i < N; i += batch) {
		for (j = i; j < N && j < i + batch; j++)
			TRY(post_atomic(&p.a, j, IBV_WR_ATOMIC_FETCH_AND_ADD, &loc, (size_t)j * 8, &rem, 8,
					j + 1, 0));
		for (j = i; j < N && j < i + batch; j++)
			TRY(want_send(&p.a, j, IBV_WC_FETCH_ADD, "fetch-and-add"));
	}
	for (i = 0; i < N; i++) {
		TRY(check_result(&loc, i, sum, "fetch-and-add"));
		sum += i + 1;
	}
	return check_atomic_target(&rem, sum, "fetch-and-adds");
}

static int unaligned_done(struct pair *p, struct buf *rem, uint64_t v0, const char *what)
{
	TRY(want_err(&p->a, p->a.scq, 1, IBV_WC_REM_INV_REQ_ERR, what));
	TRY(expect_state(&p->a, IBV_QPS_ERR, what));
	CHECK(load64(rem->p + 8) == v0 && load64(rem->p + 16) == v0, "%s: memory changed", what);
	return 0;
}

/*
 * An atomic on an address that is not 8-byte aligned is NAKed by the
 * responder (Invalid Request): an error completion, not an immediate error.
 *
 * rxe deviation: rdma-core's rxe provider (validate_send_wr) rejects it in
 * ibv_post_send with EINVAL instead; atomic_unaligned_wr reaches rxe's
 * responder through the ibv_wr_* API, which does not check.
 */
int case_atomic_unaligned(void)
{
	const uint64_t v0 = 0x0102030405060708ull;
	struct buf loc, rem;
	struct pair p;

	TRY(atomic_setup(&p, &loc, 1, &rem));
	store64(rem.p + 8, v0);
	store64(rem.p + 16, v0);
	TRY(post_atomic(&p.a, 1, IBV_WR_ATOMIC_CMP_AND_SWP, &loc, 0, &rem, 12, 0, 1));
	return unaligned_done(&p, &rem, v0, "compare-and-swap at an unaligned address");
}

int case_atomic_unaligned_wr(void)
{
	const uint64_t v0 = 0x0102030405060708ull;
	struct buf loc, rem;
	struct qp_conf c;
	struct pair p;
	int err;

	if (!has_atomics())
		return skipf("no atomics (atomic_cap is IBV_ATOMIC_NONE)");
	conf_init(&c);
	c.wr_api = true;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&loc, &devs[0], 8, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&rem, &devs[1], 32, mr_access_all()));
	store64(rem.p + 8, v0);
	store64(rem.p + 16, v0);
	ibv_wr_start(p.a.qpx);
	p.a.qpx->wr_id = 1;
	p.a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(p.a.qpx, rem.mr->rkey, addr_of(&rem, 12), 1);
	ibv_wr_set_sge(p.a.qpx, loc.mr->lkey, addr_of(&loc, 0), 8);
	err = ibv_wr_complete(p.a.qpx);
	CHECK(!err, "ibv_wr_complete: %s", estr(err));
	return unaligned_done(&p, &rem, v0, "fetch-and-add (ibv_wr_*) at an unaligned address");
}
