// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * odp.c - sroce_rc_test: on-demand paging.  Regions registered with
 * IBV_ACCESS_ON_DEMAND over memory the process has never touched, over the
 * whole address space (implicit), over memory unmapped and mapped again
 * under traffic, past RLIMIT_MEMLOCK without CAP_IPC_LOCK, and the errors
 * for memory the process does not have.  Every byte is checked.
 */
#include "rc.h"

#include <linux/capability.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/* Where an implicit region's child umems meet (sroce: every 16 MiB). */
#define ODP_CHILD_SIZE (16u * MIB)

static unsigned int odp_access(void)
{
	return mr_access_all() | IBV_ACCESS_ON_DEMAND;
}

/* The device does on-demand paging for RC, implicit regions included. */
static int odp_caps(struct dev *d)
{
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			    IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			    IBV_ODP_SUPPORT_ATOMIC;
	struct ibv_device_attr_ex ax = {};
	int err;

	err = ibv_query_device_ex(d->ctx, NULL, &ax);
	CHECK(!err, "ibv_query_device_ex(%s): %s", d->name, estr(err));
	if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    (ax.odp_caps.per_transport_caps.rc_odp_caps & rc) != rc)
		return skipf("%s has no on-demand paging for RC", d->name);
	if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT))
		return skipf("%s has no implicit on-demand paging", d->name);
	return 0;
}

/* A counter of @d ("rdma statistic"), or -1 if it has none by that name. */
static long long odp_counter(const struct dev *d, const char *name)
{
	return hw_counter_of(d->ctx, name);
}

/* Fresh anonymous memory, never touched: none of its pages exist yet. */
static uint8_t *map_anon(size_t len)
{
	struct mapping *m = track(R_MAP, calloc(1, sizeof(*m)));
	void *p;

	if (!m)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	m->p = p;
	m->len = len;
	return p;
}

/* @b: @len bytes at @p, in an on-demand region of @d's PD. */
static int buf_odp(struct buf *b, struct dev *d, uint8_t *p, size_t len)
{
	CHECK(p, "mmap of %zu bytes: %s", len, strerror(errno));
	b->p = p;
	b->len = len;
	b->zero_based = false;
	b->mr = track(R_MR, ibv_reg_mr(d->pd, p, len, odp_access()));
	CHECK(b->mr, "ibv_reg_mr(%s, %zu bytes, on demand): %s", d->name, len,
	      strerror(errno));
	return 0;
}

/* @b: the memory at @p, through @mr (an implicit region). */
static void buf_in(struct buf *b, struct ibv_mr *mr, uint8_t *p, size_t len)
{
	b->p = p;
	b->len = len;
	b->zero_based = false;
	b->mr = mr;
}

static int check_zero(const uint8_t *p, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(!p[i], "%s: byte %zu is 0x%02x, not 0 (untouched memory)", what, i, p[i]);
	return 0;
}

/*
 * A WRITE from @loc to @rem, or a READ from @rem into @loc, of @len bytes
 * of a pattern written at the source first; the destination checked.
 */
static int odp_rdma(struct pair *p, enum ibv_wr_opcode op, struct buf *loc, size_t loff,
		    struct buf *rem, size_t roff, size_t len, uint64_t id, const char *what)
{
	bool write = op == IBV_WR_RDMA_WRITE;
	uint8_t *from = write ? loc->p + loff : rem->p + roff;
	uint8_t *to = write ? rem->p + roff : loc->p + loff;

	pattern(from, len, (uint32_t)id);
	TRY(post_rdma(&p->a, id, op, loc, loff, rem, roff, len, 0));
	TRY(want_send(&p->a, id, write ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ, what));
	return check_bytes(to, from, len, what);
}

static int odp_write(struct pair *p, struct buf *src, size_t soff, struct buf *dst,
		     size_t doff, size_t len, uint64_t id, const char *what)
{
	return odp_rdma(p, IBV_WR_RDMA_WRITE, src, soff, dst, doff, len, id, what);
}

static int odp_read(struct pair *p, struct buf *dst, size_t doff, struct buf *src,
		    size_t soff, size_t len, uint64_t id, const char *what)
{
	return odp_rdma(p, IBV_WR_RDMA_READ, dst, doff, src, soff, len, id, what);
}

/* SEND of @len bytes from @src at @soff into a receive at @dst, @doff. */
static int odp_send(struct pair *p, struct buf *src, size_t soff, struct buf *dst,
		    size_t doff, size_t len, uint64_t id, const char *what)
{
	struct ibv_sge s = sge_of(src, soff, len);
	struct op o = { .op = IBV_WR_SEND, .sg = &s, .nsge = 1 };

	pattern(src->p + soff, len, (uint32_t)id);
	TRY(post_recv_buf(&p->b, id, dst, doff, len));
	TRY(post_op(&p->a, id, &o));
	TRY(want_recv(&p->b, id, (uint32_t)len, what));
	TRY(want_send(&p->a, id, IBV_WC_SEND, what));
	return check_bytes(dst->p + doff, src->p + soff, len, what);
}

/* A CAS and a FAA on @rem at @roff, their results into @loc at @loff. */
static int odp_atomics(struct pair *p, struct buf *loc, size_t loff, struct buf *rem,
		       size_t roff, uint64_t id)
{
	store64(rem->p + roff, 0x1122334455667788ull);
	TRY(post_atomic(&p->a, id, IBV_WR_ATOMIC_CMP_AND_SWP, loc, loff, rem, roff,
			0x1122334455667788ull, 42));
	TRY(want_send(&p->a, id, IBV_WC_COMP_SWAP, "CAS on on-demand memory"));
	CHECK(load64(loc->p + loff) == 0x1122334455667788ull,
	      "CAS returned 0x%llx", (unsigned long long)load64(loc->p + loff));
	CHECK(load64(rem->p + roff) == 42, "CAS left 0x%llx",
	      (unsigned long long)load64(rem->p + roff));
	TRY(post_atomic(&p->a, id + 1, IBV_WR_ATOMIC_FETCH_AND_ADD, loc, loff + 8, rem,
			roff, 8, 0));
	TRY(want_send(&p->a, id + 1, IBV_WC_FETCH_ADD, "FAA on on-demand memory"));
	CHECK(load64(loc->p + loff + 8) == 42, "FAA returned 0x%llx",
	      (unsigned long long)load64(loc->p + loff + 8));
	CHECK(load64(rem->p + roff) == 50, "FAA left 0x%llx",
	      (unsigned long long)load64(rem->p + roff));
	return 0;
}

/*
 * Explicit on-demand regions over memory neither process has touched:
 * a multi-page SEND, WRITE and READ of 1 MiB (both ends' pages faulted in
 * as the packets need them: the responder RNR-NAKs, the requester waits),
 * and atomics, whose answer lands in an untouched page too.  The bytes
 * around what each operation wrote are still zero.
 */
int case_odp(void)
{
	const size_t len = 4 * MIB;
	long long f0 = odp_counter(&devs[0], "odp_faults");
	struct buf a, b;
	struct qp_conf c;
	struct pair p;

	TRY(odp_caps(&devs[0]));
	conf_init(&c);
	c.access = mr_access_all();
	TRY(pair_up(&p, &c));
	TRY(buf_odp(&a, &devs[0], map_anon(len), len));
	TRY(buf_odp(&b, &devs[1], map_anon(len), len));
	TRY(odp_send(&p, &a, 0, &b, 4096 + 5, 200000, 1, "SEND into untouched memory"));
	TRY(check_zero(b.p, 4096 + 5, "before the SEND"));
	TRY(odp_write(&p, &a, 256 * 1024, &b, MIB + 3, MIB, 2, "WRITE into untouched memory"));
	TRY(check_zero(b.p + 2 * MIB + 3, MIB, "after the WRITE"));
	/* READ into A's untouched second half, from B's untouched third MiB. */
	TRY(odp_read(&p, &a, 2 * MIB + 7, &b, 3 * MIB, MIB - 7, 3, "READ into untouched memory"));
	TRY(check_zero(a.p + 3 * MIB, MIB, "after the READ"));
	TRY(odp_atomics(&p, &a, len - 4096, &b, len - 64, 4));
	if (f0 >= 0)
		CHECK(odp_counter(&devs[0], "odp_faults") > f0,
		      "%s counted no page fault (odp_faults)", devs[0].name);
	return 0;
}

/*
 * One implicit region per device, over the whole address space: traffic
 * on memory from mmap and from the heap, and a WRITE and a READ across
 * the border of two of the region's 16 MiB pieces.
 */
int case_odp_implicit(void)
{
	const size_t len = 2 * ODP_CHILD_SIZE;
	struct ibv_mr *ma, *mb;
	struct buf a, b, ha, hb;
	struct qp_conf c;
	struct pair p;
	uint8_t *pa, *pb, *heap_a, *heap_b;
	size_t border_a, border_b;

	TRY(odp_caps(&devs[0]));
	conf_init(&c);
	c.access = mr_access_all();
	TRY(pair_up(&p, &c));
	ma = track(R_MR, ibv_reg_mr(devs[0].pd, NULL, SIZE_MAX, odp_access()));
	CHECK(ma, "implicit ibv_reg_mr(%s): %s", devs[0].name, strerror(errno));
	mb = track(R_MR, ibv_reg_mr(devs[1].pd, NULL, SIZE_MAX, odp_access()));
	CHECK(mb, "implicit ibv_reg_mr(%s): %s", devs[1].name, strerror(errno));
	pa = map_anon(len + ODP_CHILD_SIZE);
	pb = map_anon(len + ODP_CHILD_SIZE);
	CHECK(pa && pb, "mmap: %s", strerror(errno));
	buf_in(&a, ma, pa, len + ODP_CHILD_SIZE);
	buf_in(&b, mb, pb, len + ODP_CHILD_SIZE);
	/* Offsets of the first 16 MiB border in each mapping. */
	border_a = ODP_CHILD_SIZE - ((uintptr_t)pa & (ODP_CHILD_SIZE - 1));
	border_b = ODP_CHILD_SIZE - ((uintptr_t)pb & (ODP_CHILD_SIZE - 1));
	TRY(odp_write(&p, &a, border_a - 40000, &b, border_b - 30000, 70000, 1,
		      "WRITE across 16 MiB borders"));
	TRY(odp_read(&p, &a, border_a + MIB, &b, border_b - 5000, 90000, 2,
		     "READ across a 16 MiB border"));
	TRY(odp_send(&p, &a, 12345, &b, border_b + 2 * MIB, 100000, 3, "SEND, implicit"));
	heap_a = track(R_MEM, malloc(300000));
	heap_b = track(R_MEM, malloc(300000));
	CHECK(heap_a && heap_b, "out of memory");
	buf_in(&ha, ma, heap_a, 300000);
	buf_in(&hb, mb, heap_b, 300000);
	TRY(odp_write(&p, &ha, 0, &hb, 1, 299999, 4, "WRITE between heap buffers, implicit"));
	TRY(odp_atomics(&p, &ha, 1024, &hb, 2048, 5));
	return 0;
}

/*
 * A thread that takes the pages of a mapping away again and again: a
 * 64 KiB window of it every millisecond, the window moving on each time
 * (all of it at once, that often, would leave a packet no time between
 * its fault and its resend under emulation).
 */
struct zapper {
	uint8_t *p;
	size_t len;
	volatile bool stop;
	unsigned long zaps;
};

static void *zap_loop(void *arg)
{
	const size_t win = 65536;
	struct zapper *z = arg;
	size_t off = 0;

	while (!z->stop) {
		if (madvise(z->p + off, win, MADV_DONTNEED))
			break;
		z->zaps++;
		off = (off + 3 * win) % z->len;
		usleep(1000);
	}
	return NULL;
}

/* A shared memfd mapping of @len bytes: its data outlives MADV_DONTNEED. */
static uint8_t *map_memfd(size_t len)
{
	struct mapping *m = track(R_MAP, calloc(1, sizeof(*m)));
	int fd = memfd_create("sroce-odp", 0);
	void *p = MAP_FAILED;

	if (!m || fd < 0)
		return NULL;
	if (!ftruncate(fd, (off_t)len))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	m->p = p;
	m->len = len;
	return p;
}

/*
 * Memory of an on-demand region taken away and brought back under
 * traffic.  B's region is over a shared memfd mapping whose pages a
 * thread keeps unmapping (MADV_DONTNEED: the data stays in the file)
 * while A WRITEs and READs 64 KiB pieces of it, every byte checked; then
 * the mapping is replaced by new anonymous memory at the same address
 * (mmap MAP_FIXED over it), and a READ sees the new memory's bytes and a
 * WRITE lands in it.
 */
int case_odp_remap(void)
{
	const size_t len = MIB, piece = 65536;
	long long i0 = odp_counter(&devs[1], "odp_invalidations");
	struct zapper z = {};
	struct buf a, b;
	struct qp_conf c;
	struct pair p;
	pthread_t t;
	uint8_t *q;
	size_t off;
	int i, ret = 0;

	TRY(odp_caps(&devs[0]));
	conf_init(&c);
	c.access = mr_access_all();
	TRY(pair_up(&p, &c));
	TRY(buf_new(&a, &devs[0], len, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_odp(&b, &devs[1], map_memfd(len), len));
	z.p = b.p;
	z.len = len;
	CHECK(!pthread_create(&t, NULL, zap_loop, &z), "pthread_create");
	for (i = 0; i < 64 && !ret; i++) {
		off = (size_t)(i * 37) % (len / piece) * piece + (size_t)(i % 7);
		if (off + piece > len)
			off = len - piece;
		ret = i % 2 ? odp_read(&p, &a, 0, &b, off, piece, (uint64_t)i + 10,
				       "READ while the pages go") :
			      odp_write(&p, &a, 0, &b, off, piece, (uint64_t)i + 10,
					"WRITE while the pages go");
	}
	z.stop = true;
	pthread_join(t, NULL);
	TRY(ret);
	CHECK(z.zaps > 0, "the pages were never taken away");
	vlog("odp_remap: %lu MADV_DONTNEED rounds under 64 operations\n", z.zaps);
	/* Other memory at the same address. */
	q = mmap(b.p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0);
	CHECK(q == b.p, "mmap MAP_FIXED: %s", strerror(errno));
	TRY(odp_read(&p, &a, 0, &b, 4096, 3 * piece, 100, "READ of the new memory"));
	TRY(odp_write(&p, &a, 0, &b, len - piece, piece, 101, "WRITE into the new memory"));
	TRY(check_zero(b.p + 4096 + 3 * piece, len - piece - 4096 - 3 * piece,
		       "the new memory around them"));
	if (i0 >= 0)
		CHECK(odp_counter(&devs[1], "odp_invalidations") > i0,
		      "%s counted no invalidation", devs[1].name);
	return 0;
}

/* Drop CAP_IPC_LOCK, which lets root pin past RLIMIT_MEMLOCK. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	CHECK(!syscall(SYS_capget, &h, d), "capget: %s", strerror(errno));
	d[0].effective &= ~(1u << CAP_IPC_LOCK);
	d[0].permitted &= ~(1u << CAP_IPC_LOCK);
	d[0].inheritable &= ~(1u << CAP_IPC_LOCK);
	CHECK(!syscall(SYS_capset, &h, d), "capset: %s", strerror(errno));
	return 0;
}

/*
 * On-demand regions pin nothing: with RLIMIT_MEMLOCK at 1 MiB (and no
 * CAP_IPC_LOCK), a pinned region of 8 MiB is refused, and an on-demand
 * one of 64 MiB is registered and carries a WRITE and a READ at its far
 * end.
 */
int case_odp_memlock(void)
{
	const size_t big = 64 * MIB, pinned = 8 * MIB;
	struct rlimit rl = { .rlim_cur = MIB, .rlim_max = MIB };
	struct ibv_mr *mr;
	struct buf a, b;
	struct qp_conf c;
	struct pair p;
	uint8_t *q;

	TRY(odp_caps(&devs[0]));
	TRY(drop_ipc_lock());
	CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl), "setrlimit: %s", strerror(errno));
	/*
	 * uverbs refuses write() commands (the doorbells among them) from
	 * credentials other than the opener's: open the devices again.
	 */
	TRY(devs_open());
	conf_init(&c);
	c.access = mr_access_all();
	TRY(pair_up(&p, &c));
	q = map_anon(pinned);
	CHECK(q, "mmap: %s", strerror(errno));
	mr = ibv_reg_mr(devs[1].pd, q, pinned, IBV_ACCESS_LOCAL_WRITE);
	if (mr)
		ibv_dereg_mr(mr);
	CHECK(!mr, "a pinned region of 8 MiB was registered past RLIMIT_MEMLOCK (1 MiB)");
	TRY(buf_new(&a, &devs[0], 256 * 1024, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_odp(&b, &devs[1], map_anon(big), big));
	TRY(odp_write(&p, &a, 0, &b, big - 200000, 150000, 1, "WRITE at the end of 64 MiB"));
	TRY(odp_read(&p, &a, 0, &b, big / 2, 200000, 2, "READ from the middle of 64 MiB"));
	return 0;
}

/*
 * Memory the process does not have: a remote WRITE into an on-demand
 * region whose memory was unmapped is NAKed (REM_ACCESS_ERR at the
 * requester); a SEND from an unmapped address of an implicit region fails
 * locally (LOC_PROT_ERR).  ibv_advise_mr refuses a pinned region and an
 * unknown key, and prefetches (and maps without faulting) an on-demand one.
 */
int case_odp_errors(void)
{
	const size_t len = 256 * 1024;
	struct ibv_sge s;
	struct buf a, b, hole;
	struct ibv_mr *imp;
	struct qp_conf c;
	struct pair p;
	uint8_t *q;
	int err;

	TRY(odp_caps(&devs[0]));
	conf_init(&c);
	c.access = mr_access_all();
	TRY(pair_up(&p, &c));
	TRY(buf_new(&a, &devs[0], len, mr_access_all()));
	TRY(buf_odp(&b, &devs[1], map_anon(len), len));
	/* Prefetch: refused for the pinned region and an unknown key. */
	s = sge_of(&a, 0, 4096);
	err = ibv_advise_mr(devs[0].pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &s, 1);
	CHECK(err == EINVAL, "ibv_advise_mr on a pinned region: %s, not EINVAL", estr(err));
	s.lkey ^= 0x80000000u;
	err = ibv_advise_mr(devs[0].pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH, &s, 1);
	CHECK(err == ENOENT, "ibv_advise_mr with an unknown lkey: %s, not ENOENT", estr(err));
	s = sge_of(&b, 0, (uint32_t)len);
	err = ibv_advise_mr(devs[1].pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &s, 1);
	CHECK(!err, "ibv_advise_mr PREFETCH_WRITE: %s", estr(err));
	err = ibv_advise_mr(devs[1].pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0, &s, 1);
	CHECK(!err, "ibv_advise_mr PREFETCH_NO_FAULT: %s", estr(err));
	TRY(odp_write(&p, &a, 0, &b, 100, 5000, 1, "WRITE after a prefetch"));
	/* The region's memory unmapped: the next WRITE finds nothing. */
	CHECK(!munmap(b.p, len), "munmap: %s", strerror(errno));
	pattern(a.p, 4096, 2);
	TRY(post_rdma(&p.a, 2, IBV_WR_RDMA_WRITE, &a, 0, &b, 0, 4096, 0));
	TRY(want_err(&p.a, p.a.scq, 2, IBV_WC_REM_ACCESS_ERR,
		     "WRITE into unmapped on-demand memory"));
	TRY(expect_state(&p.a, IBV_QPS_ERR, "the requester after the NAK"));
	/* A fresh pair: a SEND from a hole of an implicit region. */
	TRY(pair_up(&p, &c));
	imp = track(R_MR, ibv_reg_mr(devs[0].pd, NULL, SIZE_MAX, odp_access()));
	CHECK(imp, "implicit ibv_reg_mr: %s", strerror(errno));
	q = map_anon(2 * 4096);
	CHECK(q, "mmap: %s", strerror(errno));
	CHECK(!munmap(q + 4096, 4096), "munmap: %s", strerror(errno));
	buf_in(&hole, imp, q, 2 * 4096);
	TRY(buf_new(&b, &devs[1], len, mr_access_all()));
	TRY(post_recv_buf(&p.b, 3, &b, 0, 8192));
	TRY(post_send_buf(&p.a, 3, IBV_WR_SEND, &hole, 8192, 0));
	TRY(want_err(&p.a, p.a.scq, 3, IBV_WC_LOC_PROT_ERR,
		     "SEND from an unmapped page of an implicit region"));
	if (odp_counter(&devs[0], "odp_fault_errors") >= 0)
		CHECK(odp_counter(&devs[0], "odp_fault_errors") > 0,
		      "%s counted no failed fault", devs[0].name);
	return 0;
}
