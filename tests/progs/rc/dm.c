// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dm.c - sroce_rc_test: device memory (ibv_alloc_dm): copies into and out
 * of it, zero-based regions over it (ibv_reg_dm_mr) as the local memory of
 * SENDs, receives, READs and atomics and as the remote memory of WRITEs,
 * READs and atomics, and what it refuses.  Every byte is read back through
 * ibv_memcpy_from_dm() and checked, with the bytes around it.
 */

#include "rc.h"

/* The device memory of both devices; sizes, offsets: the cases below. */
enum { DM_LEN = 3 * 4096 + 100, R_OFF = 4096, R_LEN = 8192 };

static int need_dm(void)
{
	if (!devs[0].max_dm_size || !devs[1].max_dm_size)
		return skipf("no device memory (max_dm_size 0)");
	CHECK(devs[0].max_dm_size >= DM_LEN && devs[1].max_dm_size >= DM_LEN,
	      "max_dm_size %llu/%llu, less than these cases need (%d)",
	      (unsigned long long)devs[0].max_dm_size, (unsigned long long)devs[1].max_dm_size,
	      DM_LEN);
	return 0;
}

static int dm_new(struct ibv_dm **dm, struct dev *d, size_t len)
{
	struct ibv_alloc_dm_attr a = { .length = len };

	*dm = track(R_DM, ibv_alloc_dm(d->ctx, &a));
	CHECK(*dm, "ibv_alloc_dm(%s, %zu bytes): %s", d->name, len, strerror(errno));
	return 0;
}

/* @b: a zero-based region of @len bytes at @off in @dm. */
static int dm_reg(struct buf *b, struct dev *d, struct ibv_dm *dm, size_t off, size_t len,
		  unsigned int access)
{
	b->p = NULL;
	b->len = len;
	b->zero_based = true;
	b->mr = track(R_MR, ibv_reg_dm_mr(d->pd, dm, off, len, access | IBV_ACCESS_ZERO_BASED));
	CHECK(b->mr, "ibv_reg_dm_mr(%s, offset %zu, %zu bytes): %s", d->name, off, len,
	      strerror(errno));
	return 0;
}

/*
 * The @n bytes at @off in @dm, of @dm_len bytes, are @want (NULL: zeros).
 * The copy out is of all of it: copies take offsets and lengths that are
 * multiples of 4, as hardware device memory does, and @dm_len is one.
 */
static int dm_check(struct ibv_dm *dm, size_t dm_len, size_t off, const uint8_t *want,
		    size_t n, const char *what)
{
	uint8_t *got = track(R_MEM, malloc(dm_len)), *zero = NULL;
	int err;

	CHECK(got, "out of memory");
	err = ibv_memcpy_from_dm(got, dm, 0, dm_len);
	CHECK(!err, "%s: ibv_memcpy_from_dm(%zu bytes): %s", what, dm_len, estr(err));
	if (!want) {
		zero = track(R_MEM, calloc(1, n));
		CHECK(zero, "out of memory");
	}
	return check_bytes(got + off, want ? want : zero, n, what);
}

static int dm_copy_in(struct ibv_dm *dm, size_t off, const uint8_t *src, size_t n)
{
	int err = ibv_memcpy_to_dm(dm, off, src, n);

	CHECK(!err, "ibv_memcpy_to_dm(offset %zu, %zu bytes): %s", off, n, estr(err));
	return 0;
}

static int send_sge(const struct ep *e, uint64_t wr_id, struct ibv_sge *s)
{
	struct op o = { .op = IBV_WR_SEND, .sg = s, .nsge = 1 };

	return post_op(e, wr_id, &o);
}

/*
 * Copies: new device memory reads as zeros; a copy lands where it was
 * put.  Then, with A's and B's memory behind regions that
 * begin R_OFF into it: a SEND from A's device memory into B's host memory,
 * an RDMA WRITE from host memory into B's at an odd address, a READ of
 * that back into A's device memory, a fetch-and-add and a compare-and-swap
 * on B's with their results in A's, and a receive into B's.
 */
int case_device_memory(void)
{
	uint8_t *pat = track(R_MEM, malloc(DM_LEN));
	struct buf ra, rb, ha, hb;
	struct ibv_dm *da, *db;
	struct qp_conf c;
	struct pair p;
	struct ibv_sge s;
	uint64_t v;

	TRY(need_dm());
	CHECK(pat, "out of memory");
	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(dm_new(&da, &devs[0], DM_LEN));
	TRY(dm_new(&db, &devs[1], DM_LEN));
	TRY(dm_check(da, DM_LEN, 0, NULL, DM_LEN, "new device memory"));
	pattern(pat, DM_LEN, 11);
	/* da[x] = pat[x - 4] for 4 <= x < DM_LEN - 4 from here on. */
	TRY(dm_copy_in(da, 4, pat, DM_LEN - 8));
	TRY(dm_check(da, DM_LEN, 4, pat, DM_LEN - 8, "a copy into device memory"));
	TRY(dm_check(da, DM_LEN, 0, NULL, 4, "before a copy into device memory"));
	TRY(dm_check(da, DM_LEN, DM_LEN - 4, NULL, 4, "after a copy into device memory"));

	TRY(dm_reg(&ra, &devs[0], da, R_OFF, R_LEN, mr_access_all()));
	TRY(dm_reg(&rb, &devs[1], db, R_OFF, R_LEN, mr_access_all()));
	TRY(buf_new(&ha, &devs[0], R_LEN, mr_access_all()));
	TRY(buf_new(&hb, &devs[1], R_LEN, mr_access_all()));

	TRY(post_recv_buf(&p.b, 1, &hb, 0, R_LEN));
	s = sge_of(&ra, 100, 5000);
	TRY(send_sge(&p.a, 1, &s));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "a SEND from device memory"));
	TRY(want_recv(&p.b, 1, 5000, "a SEND from device memory"));
	TRY(check_buf(&hb, 0, pat + R_OFF + 100 - 4, 5000, "a SEND from device memory"));

	pattern(ha.p, R_LEN, 12);
	TRY(post_rdma(&p.a, 2, IBV_WR_RDMA_WRITE, &ha, 0, &rb, 3, 6000, 0));
	TRY(want_send(&p.a, 2, IBV_WC_RDMA_WRITE, "an RDMA WRITE into device memory"));
	TRY(dm_check(db, DM_LEN, R_OFF + 3, ha.p, 6000, "an RDMA WRITE into device memory"));
	TRY(dm_check(db, DM_LEN, 0, NULL, R_OFF + 3, "before an RDMA WRITE into device memory"));
	TRY(dm_check(db, DM_LEN, R_OFF + 6003, NULL, DM_LEN - R_OFF - 6003,
		     "after an RDMA WRITE into device memory"));

	TRY(post_rdma(&p.a, 3, IBV_WR_RDMA_READ, &ra, 0, &rb, 3, 6000, 0));
	TRY(want_send(&p.a, 3, IBV_WC_RDMA_READ, "an RDMA READ between device memories"));
	TRY(dm_check(da, DM_LEN, R_OFF, ha.p, 6000, "an RDMA READ between device memories"));
	TRY(dm_check(da, DM_LEN, R_OFF + 6000, pat + R_OFF + 6000 - 4, 1000,
		     "after an RDMA READ between device memories"));

	if (has_atomics()) {
		TRY(post_atomic(&p.a, 4, IBV_WR_ATOMIC_FETCH_AND_ADD, &ra, 8000, &rb, 8000, 5, 0));
		TRY(want_send(&p.a, 4, IBV_WC_FETCH_ADD, "a fetch-and-add on device memory"));
		TRY(post_atomic(&p.a, 5, IBV_WR_ATOMIC_CMP_AND_SWP, &ra, 8008, &rb, 8000, 5,
				0x1122334455667788ull));
		TRY(want_send(&p.a, 5, IBV_WC_COMP_SWAP, "a compare-and-swap on device memory"));
		v = 0x1122334455667788ull;
		TRY(dm_check(db, DM_LEN, R_OFF + 8000, (uint8_t *)&v, 8, "atomics on device memory"));
		v = 0;
		TRY(dm_check(da, DM_LEN, R_OFF + 8000, (uint8_t *)&v, 8, "a fetch-and-add's result"));
		v = 5;
		TRY(dm_check(da, DM_LEN, R_OFF + 8008, (uint8_t *)&v, 8, "a compare-and-swap's result"));
		TRY(dm_check(db, DM_LEN, R_OFF + 8008, NULL, DM_LEN - R_OFF - 8008,
			     "after atomics on device memory"));
	}

	s = sge_of(&rb, 0, 4096);
	TRY(post_recv(&p.b, 6, &s, 1));
	TRY(post_send_buf(&p.a, 6, IBV_WR_SEND, &ha, 4096, 0));
	TRY(want_send(&p.a, 6, IBV_WC_SEND, "a receive into device memory"));
	TRY(want_recv(&p.b, 6, 4096, "a receive into device memory"));
	return dm_check(db, DM_LEN, R_OFF, ha.p, 4096, "a receive into device memory");
}

/*
 * Refused, with nothing moved: allocations of 0 bytes, of more than
 * max_dm_size and with an unknown comp_mask bit; copies at an offset or
 * of a length not a multiple of 4, or past the end; regions past the end or not zero-based;
 * freeing memory with a region in it (EBUSY, the memory still usable);
 * and on the wire an RDMA WRITE past a region's end (remote access error)
 * and a SEND whose local SGE runs past one (local protection error).
 */
int case_device_memory_misuse(void)
{
	struct ibv_alloc_dm_attr a = { .length = 0 };
	uint8_t src[64] = { 1, 2, 3 }, got[64];
	struct ibv_dm *dm, *db;
	struct ibv_mr *mr;
	struct buf rb, ha, r;
	struct qp_conf c;
	struct ibv_sge s;
	struct pair p;
	int err;

	TRY(need_dm());
	CHECK(!ibv_alloc_dm(devs[0].ctx, &a), "ibv_alloc_dm of 0 bytes succeeded");
	a.length = devs[0].max_dm_size + 1;
	CHECK(!ibv_alloc_dm(devs[0].ctx, &a), "ibv_alloc_dm past max_dm_size succeeded");
	a.length = 4096;
	a.comp_mask = 1u << 7;
	CHECK(!ibv_alloc_dm(devs[0].ctx, &a), "ibv_alloc_dm with comp_mask 0x80 succeeded");

	TRY(dm_new(&dm, &devs[0], 4096));
	err = ibv_memcpy_to_dm(dm, 2, src, 8);
	CHECK(err == EINVAL, "a copy at offset 2: %s, want EINVAL", estr(err));
	err = ibv_memcpy_to_dm(dm, 4, src, 6);
	CHECK(err == EINVAL, "a copy of 6 bytes: %s, want EINVAL", estr(err));
	err = ibv_memcpy_to_dm(dm, 4092, src, 8);
	CHECK(err == EINVAL, "a copy past the end: %s, want EINVAL", estr(err));
	err = ibv_memcpy_from_dm(got, dm, 4096, 4);
	CHECK(err == EINVAL, "a copy out past the end: %s, want EINVAL", estr(err));
	TRY(dm_check(dm, 4096, 0, NULL, 4096, "after refused copies"));
	CHECK(!ibv_reg_dm_mr(devs[0].pd, dm, 4000, 100, IBV_ACCESS_ZERO_BASED |
			     IBV_ACCESS_LOCAL_WRITE),
	      "ibv_reg_dm_mr past the end succeeded");
	CHECK(!ibv_reg_dm_mr(devs[0].pd, dm, 0, 100, IBV_ACCESS_LOCAL_WRITE),
	      "ibv_reg_dm_mr without IBV_ACCESS_ZERO_BASED succeeded");
	mr = ibv_reg_dm_mr(devs[0].pd, dm, 0, 100, IBV_ACCESS_ZERO_BASED);
	CHECK(mr, "ibv_reg_dm_mr: %s", strerror(errno));
	err = ibv_free_dm(dm);
	CHECK(err == EBUSY, "ibv_free_dm with a region in it: %s, want EBUSY", estr(err));
	TRY(dm_copy_in(dm, 8, src, sizeof(src)));
	TRY(dm_check(dm, 4096, 8, src, sizeof(src), "device memory a refused free kept"));
	err = ibv_dereg_mr(mr);
	CHECK(!err, "ibv_dereg_mr: %s", estr(err));
	err = release_early(dm);
	CHECK(!err, "ibv_free_dm once its region is gone: %s", estr(err));

	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(dm_new(&db, &devs[1], DM_LEN));
	TRY(dm_reg(&rb, &devs[1], db, R_OFF, R_LEN, mr_access_all()));
	TRY(buf_new(&ha, &devs[0], R_LEN, mr_access_all()));
	pattern(ha.p, R_LEN, 13);
	TRY(post_rdma(&p.a, 1, IBV_WR_RDMA_WRITE, &ha, 0, &rb, R_LEN - 4, 8, 0));
	TRY(want_err(&p.a, p.a.scq, 1, IBV_WC_REM_ACCESS_ERR, "a WRITE past a DM region"));
	TRY(dm_check(db, DM_LEN, 0, NULL, DM_LEN, "a WRITE past a DM region"));

	TRY(pair_up(&p, &c));
	TRY(dm_new(&dm, &devs[0], 4096));
	TRY(dm_reg(&r, &devs[0], dm, 0, 100, IBV_ACCESS_LOCAL_WRITE));
	s = sge_of(&r, 50, 51);
	TRY(send_sge(&p.a, 2, &s));
	return want_err(&p.a, p.a.scq, 2, IBV_WC_LOC_PROT_ERR, "a SEND past a DM region");
}
