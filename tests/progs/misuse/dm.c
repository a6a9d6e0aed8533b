// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dm.c - sroce_misuse: device memory through the ioctl ABI (DM_ALLOC,
 * DM_FREE, REG_DM_MR) and its mapping (SROCE_DM_MMAP_PGOFF()).
 */

#include "misuse.h"

static int dm_alloc(struct ctx *x, uint64_t len, uint32_t align, uint32_t *h)
{
	struct ioc c;
	int err;

	ioc_init(&c, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
	ioc_obj(&c, UVERBS_ATTR_ALLOC_DM_HANDLE, 0);
	ioc_in(&c, UVERBS_ATTR_ALLOC_DM_LENGTH, &len, sizeof(len));
	ioc_u32(&c, UVERBS_ATTR_ALLOC_DM_ALIGNMENT, align);
	err = ioc_send(x->fd, &c);
	if (!err)
		*h = (uint32_t)ioc_find(&c, UVERBS_ATTR_ALLOC_DM_HANDLE)->data;
	return err;
}

static int dm_free(struct ctx *x, uint32_t h)
{
	return ioc_destroy(x, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE, h, NULL, 0);
}

static int dm_mr(struct ctx *x, uint32_t pd, uint32_t dm, uint64_t off, uint64_t len,
		 uint32_t access, uint32_t *h)
{
	uint32_t lkey = 0, rkey = 0;
	struct ioc c;
	int err;

	ioc_init(&c, UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG);
	ioc_obj(&c, UVERBS_ATTR_REG_DM_MR_HANDLE, 0);
	ioc_in(&c, UVERBS_ATTR_REG_DM_MR_OFFSET, &off, sizeof(off));
	ioc_in(&c, UVERBS_ATTR_REG_DM_MR_LENGTH, &len, sizeof(len));
	ioc_obj(&c, UVERBS_ATTR_REG_DM_MR_PD_HANDLE, pd);
	ioc_u32(&c, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, access);
	ioc_obj(&c, UVERBS_ATTR_REG_DM_MR_DM_HANDLE, dm);
	ioc_out(&c, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &lkey, sizeof(lkey));
	ioc_out(&c, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, &rkey, sizeof(rkey));
	err = ioc_send(x->fd, &c);
	if (!err)
		*h = (uint32_t)ioc_find(&c, UVERBS_ATTR_REG_DM_MR_HANDLE)->data;
	return err;
}

static int mr_destroy(struct ctx *x, uint32_t h)
{
	return ioc_destroy(x, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, h, NULL, 0);
}

/* The byte offset of DM @h's mapping. */
static off_t dm_off(uint32_t h)
{
	return (off_t)(SROCE_DM_MMAP_PGOFF(h) * (uint64_t)sysconf(_SC_PAGESIZE));
}

/* Every byte of @p is @v. */
static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

/* SROCE_METHOD_DM_QUERY (for ibv_import_dm()): the length, and its refusals. */
static void dm_query_checks(struct ctx *x, struct ctx *y, uint32_t h, uint64_t len)
{
	struct sroce_dm_query_resp r = { .length = ~0ULL };
	struct ioc c;

	ioc_init(&c, UVERBS_OBJECT_DM, SROCE_METHOD_DM_QUERY);
	ioc_obj(&c, SROCE_ATTR_QUERY_DM_HANDLE, h);
	ioc_out(&c, SROCE_ATTR_QUERY_DM_RESP, &r, sizeof(r));
	expect("DM_QUERY", ioc_send(x->fd, &c), 0);
	if (!case_failed && r.length != len)
		bad("DM_QUERY answered %llu bytes, not %llu", (unsigned long long)r.length,
		    (unsigned long long)len);
	expect("DM_QUERY of another context's DM", ioc_send(y->fd, &c), ENOENT);
	ioc_find(&c, SROCE_ATTR_QUERY_DM_HANDLE)->data = h + 1000;
	expect("DM_QUERY of an unknown handle", ioc_send(x->fd, &c), ENOENT);
	ioc_find(&c, SROCE_ATTR_QUERY_DM_HANDLE)->data = h;
	ioc_find(&c, SROCE_ATTR_QUERY_DM_RESP)->len = 4;
	expect("DM_QUERY, response too short", ioc_send(x->fd, &c), EINVAL);
	ioc_drop(&c, SROCE_ATTR_QUERY_DM_RESP);
	expect("DM_QUERY without its response", ioc_send(x->fd, &c), EINVAL);
}

/*
 * Bad lengths and alignments; mappings at the wrong size or offset or in
 * another context; regions past the end or not zero-based (an empty one
 * is taken, as hardware takes it); freeing
 * memory with a region in it; a freed DM's mapping keeping its bytes, the
 * DM itself no longer mappable, and its handle (the lowest free one, as
 * ib_core hands them out) given to new memory, zeroed, while the old
 * mapping is still written; the per-device
 * limit (SROCE_DM_MAX, then ENOMEM); and a context closed with device
 * memory mapped and a region in it.
 */
void c_dm(void)
{
	const uint32_t zb = IB_UVERBS_ACCESS_ZERO_BASED | IB_UVERBS_ACCESS_LOCAL_WRITE;
	struct ctx x = ctx_open(), y = ctx_open();
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static uint32_t hs[SROCE_DM_MAX + 1];
	uint32_t pd = pd_new(&x), h = 0, h2 = 0, mr = 0;
	unsigned int i, n;
	uint8_t *p, *q;
	int err;

	expect("DM_ALLOC of 0 bytes", dm_alloc(&x, 0, 0, &h), EINVAL);
	expect("DM_ALLOC past SROCE_DM_MAX_SIZE", dm_alloc(&x, SROCE_DM_MAX_SIZE + 1ULL, 0, &h),
	       EINVAL);
	expect("DM_ALLOC aligned past a page", dm_alloc(&x, 64, 30, &h), EINVAL);
	expect("DM_ALLOC of 3 pages less 10 bytes", dm_alloc(&x, 3 * pg - 10, 3, &h), 0);
	if (case_failed)
		goto out;
	dm_query_checks(&x, &y, h, 3 * pg - 10);
	map_fails("a DM mapping of one page of three", x.fd, pg,
		  PROT_READ | PROT_WRITE, dm_off(h), EINVAL);
	map_fails("a DM mapping one page in", x.fd, 2 * pg,
		  PROT_READ | PROT_WRITE, dm_off(h) + (off_t)pg, EINVAL);
	map_fails("another context's DM", y.fd, 3 * pg,
		  PROT_READ | PROT_WRITE, dm_off(h), EINVAL);
	p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, x.fd, dm_off(h));
	if (p == MAP_FAILED) {
		bad("mapping the DM: %s", strerror(errno));
		goto out;
	}
	if (!all(p, 3 * pg, 0))
		bad("new device memory is not zeroed");
	memset(p, 0x5a, 3 * pg);
	expect("REG_DM_MR past the end", dm_mr(&x, pd, h, 3 * pg - 14, 8, zb, &mr), EINVAL);
	expect("REG_DM_MR not zero-based", dm_mr(&x, pd, h, 0, 100,
						 IB_UVERBS_ACCESS_LOCAL_WRITE, &mr), EINVAL);
	expect("REG_DM_MR of 0 bytes (taken, as by hardware)", dm_mr(&x, pd, h, 0, 0, zb, &mr), 0);
	expect("DESTROY of the empty region", mr_destroy(&x, mr), 0);
	expect("REG_DM_MR", dm_mr(&x, pd, h, 4, 100, zb, &mr), 0);
	expect("DM_FREE with a region in it", dm_free(&x, h), EBUSY);
	expect("DESTROY of the region", mr_destroy(&x, mr), 0);
	expect("DM_FREE, still mapped", dm_free(&x, h), 0);
	if (!all(p, 3 * pg, 0x5a))
		bad("a freed DM's mapping lost its bytes");
	map_fails("mapping a freed DM", x.fd, 3 * pg,
		  PROT_READ | PROT_WRITE, dm_off(h), EINVAL);
	expect("DM_ALLOC while a freed DM is mapped", dm_alloc(&x, pg, 0, &h2), 0);
	if (case_failed)
		goto out;
	q = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, x.fd, dm_off(h2));
	if (q == MAP_FAILED) {
		bad("mapping the new DM: %s", strerror(errno));
		goto out;
	}
	memset(p, 0xa5, 3 * pg);
	if (h2 != h)
		bad("the new DM got handle %u, not the freed %u", h2, h);
	if (!all(q, pg, 0))
		bad("device memory under a handle handed out again is not new");
	munmap(p, 3 * pg);
	munmap(q, pg);
	expect("DM_FREE", dm_free(&x, h2), 0);

	/* The device's limit, less nothing: no other DM exists now. */
	for (n = 0; n < SROCE_DM_MAX + 1; n++) {
		err = dm_alloc(&x, 64, 0, &hs[n]);
		if (err)
			break;
	}
	if (n != SROCE_DM_MAX || err != -ENOMEM)
		bad("%u DMs allocated, then %s; want %u, then ENOMEM", n, strerror(-err),
		    SROCE_DM_MAX);
	for (i = 0; i < n; i++)
		expect("DM_FREE", dm_free(&x, hs[i]), 0);

	/* Left for the context's teardown: mapped, with a region in it. */
	expect("DM_ALLOC", dm_alloc(&x, pg, 0, &h), 0);
	expect("REG_DM_MR", dm_mr(&x, pd, h, 0, pg, zb, &mr), 0);
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, x.fd, dm_off(h));
	if (p == MAP_FAILED) {
		bad("mapping the DM: %s", strerror(errno));
		goto out;
	}
	ctx_close(&x);
	/* The mapping outlives its context; unmapping frees the memory. */
	memset(p, 0x11, pg);
	munmap(p, pg);
	ctx_close(&y);
	return;
out:
	ctx_close(&x);
	ctx_close(&y);
}
