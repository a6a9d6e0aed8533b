// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * atomic_write.c - sroce_rc_test: the ATOMIC WRITE cases (IBTA 1.5,
 * ibv_wr_atomic_write): 8 bytes stored in one piece at an aligned remote
 * address, answered like a READ, counted against max_rd_atomic.
 */

#include "rc.h"

/* IB_UVERBS_DEVICE_ATOMIC_WRITE (Linux 6.2 uapi; rdma-core 44 has no name). */
#define CAP_ATOMIC_WRITE (1ULL << 40)

bool has_atomic_write(void)
{
	return (devs[0].caps_ex & CAP_ATOMIC_WRITE) &&
	       (devs[1].caps_ex & CAP_ATOMIC_WRITE);
}

/* Post one ATOMIC WRITE of @val at @rem + @roff, signaled, as @wr_id. */
static int post_atomic_write(const struct ep *e, uint64_t wr_id, const struct buf *rem,
			     size_t roff, uint64_t val)
{
	int err;

	ibv_wr_start(e->qpx);
	e->qpx->wr_id = wr_id;
	e->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(e->qpx, rem->mr->rkey, addr_of(rem, roff), &val);
	err = ibv_wr_complete(e->qpx);
	CHECK(!err, "ibv_wr_complete (atomic write): %s", estr(err));
	return 0;
}

static int aw_pair(struct pair *p, struct buf *rem, unsigned int rem_access)
{
	struct qp_conf c;

	if (!has_atomic_write())
		return skipf("no ATOMIC WRITE (device_cap_flags_ex bit 40)");
	conf_init(&c);
	c.wr_api = true;
	TRY(pair_up(p, &c));
	return buf_new(rem, &devs[1], 4096, rem_access);
}

/*
 * The word lands whole, in memory order, and nothing around it moves; an
 * RDMA WRITE before it in the same batch has landed when it completes; a
 * run of them, more than max_rd_atomic, completes in order and the last
 * one's value stays.
 */
int case_atomic_write(void)
{
	enum { N = 64 };
	const uint64_t v0 = 0x0102030405060708ull;
	struct buf src, dst, rem;
	struct pair p;
	uint64_t v;
	int err, i;

	TRY(aw_pair(&p, &rem, mr_access_all()));
	TRY(post_atomic_write(&p.a, 1, &rem, 8, v0));
	TRY(want_send(&p.a, 1, IBV_WC_ATOMIC_WRITE, "atomic write"));
	CHECK(!memcmp(rem.p + 8, &v0, 8), "atomic write: the target holds 0x%llx, not 0x%llx",
	      (unsigned long long)load64(rem.p + 8), (unsigned long long)v0);
	TRY(check_fill(rem.p, 8, "atomic write"));
	TRY(check_fill(rem.p + 16, 4096 - 16 + GUARD, "atomic write"));

	/*
	 * Data, then its flag right after it (one batch): when the flag's
	 * completion comes, both are there, and nothing else moved.
	 */
	TRY(buf_new(&src, &devs[0], 1024, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 1024, mr_access_all()));
	pattern(src.p, 1016, 7);
	v = 0x0000000100000001ull;
	memcpy(src.p + 1016, &v, 8);	/* what dst must hold: data, flag */
	ibv_wr_start(p.a.qpx);
	p.a.qpx->wr_id = 2;
	p.a.qpx->wr_flags = 0;
	ibv_wr_rdma_write(p.a.qpx, dst.mr->rkey, addr_of(&dst, 0));
	ibv_wr_set_sge(p.a.qpx, src.mr->lkey, addr_of(&src, 0), 1016);
	p.a.qpx->wr_id = 3;
	p.a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p.a.qpx, dst.mr->rkey, addr_of(&dst, 1016), &v);
	err = ibv_wr_complete(p.a.qpx);
	CHECK(!err, "ibv_wr_complete (write, then atomic write): %s", estr(err));
	TRY(want_send(&p.a, 3, IBV_WC_ATOMIC_WRITE, "atomic write after a write"));
	TRY(check_buf(&dst, 0, src.p, 1024, "a write and the atomic write after it"));

	/* More than max_rd_atomic at once: each waits for a credit. */
	for (i = 0; i < N; i++)
		TRY(post_atomic_write(&p.a, 10 + i, &rem, 24, v0 + i));
	for (i = 0; i < N; i++)
		TRY(want_send(&p.a, 10 + i, IBV_WC_ATOMIC_WRITE, "a run of atomic writes"));
	CHECK(load64(rem.p + 24) == v0 + N - 1, "a run of atomic writes: the target holds 0x%llx",
	      (unsigned long long)load64(rem.p + 24));
	CHECK(!memcmp(rem.p + 8, &v0, 8), "a run of atomic writes moved the first one's word");
	TRY(check_fill(rem.p + 16, 8, "a run of atomic writes"));
	return check_fill(rem.p + 32, 4096 - 32 + GUARD, "a run of atomic writes");
}

/*
 * Refused by the responder, the QP failing, memory untouched: an
 * unaligned address (Invalid Request NAK), a region without remote write
 * (Remote Access NAK).
 */
int case_atomic_write_errors(void)
{
	struct buf rem;
	struct pair p;

	TRY(aw_pair(&p, &rem, mr_access_all()));
	TRY(post_atomic_write(&p.a, 1, &rem, 12, ~0ull));
	TRY(want_err(&p.a, p.a.scq, 1, IBV_WC_REM_INV_REQ_ERR, "atomic write, unaligned"));
	TRY(expect_state(&p.a, IBV_QPS_ERR, "atomic write, unaligned"));
	TRY(check_fill(rem.p, 4096 + GUARD, "atomic write, unaligned"));

	TRY(aw_pair(&p, &rem, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	TRY(post_atomic_write(&p.a, 2, &rem, 8, ~0ull));
	TRY(want_err(&p.a, p.a.scq, 2, IBV_WC_REM_ACCESS_ERR, "atomic write, no remote write"));
	TRY(expect_state(&p.a, IBV_QPS_ERR, "atomic write, no remote write"));
	return check_fill(rem.p, 4096 + GUARD, "atomic write, no remote write");
}
