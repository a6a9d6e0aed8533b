// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_kwr_test.c - every kind of work request a kernel ULP posts, run
 * between two RC QPs from kernel context, with the data and every
 * completion checked.
 *
 *   insmod sroce_kwr_test.ko dev=sroce0 [peer=sroce0] [ipv6=1]
 *
 * One QP lives on @dev ("a", the requester), the other on @peer ("b", the
 * side whose memory is registered); the same device gives loopback, two
 * devices in two network namespaces give a wire.  The QPs are connected
 * to each other's RoCEv2 GID (IPv4, or with ipv6=1 a global IPv6 one).
 * Each case builds a fresh pair, because the error cases leave theirs in
 * the error state.
 *
 * Every case prints "sroce_kwr_test: <case>: pass" or
 * "sroce_kwr_test: <case>: FAIL <why>"; the module refuses to load (-EIO)
 * if any case failed, so the harness can test the insmod status and read
 * the log for the details.  On success it stays loaded until rmmod.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kmod_dev.h"

static char *dev = "sroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "device of the requesting QP");

static char *peer;
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "device of the responding QP (default: dev)");

static bool ipv6;
module_param(ipv6, bool, 0444);
MODULE_PARM_DESC(ipv6, "connect through global IPv6 GIDs, not IPv4 ones");

static unsigned int timeout_ms = 30000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "how long to wait for one completion");

#define KWR_QP_WR	64
#define KWR_SGE		4
#define KWR_FR_PAGES	256

static int failures;

/* Report a failed check of case @name; returns @ok. */
static __printf(3, 4) bool check(const char *name, bool ok,
				 const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (ok)
		return true;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("%s: FAIL %pV\n", name, &vaf);
	va_end(args);
	failures++;
	return false;
}

/*
 * One end: a device, PD, CQ and RC QP, and its GID.  The CQ is polled
 * directly, or with @armable also armed, its events counted by
 * kwr_cq_event().
 */
struct kwr_end {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool armable;
	u32 sgid_index;
	union ib_gid gid;
};

struct kwr_pair {
	struct kwr_end a;	/* requester */
	struct kwr_end b;	/* responder: its memory is the target */
};

static struct ib_device *dev_a, *dev_b;

static bool kwr_link_local(const struct in6_addr *a)
{
	return (a->s6_addr32[0] & htonl(0xffc00000)) == htonl(0xfe800000);
}

/* A GID of the kind asked for: IPv4-mapped, or global IPv6. */
static bool kwr_gid_wanted(const struct ib_gid_attr *gattr)
{
	const struct in6_addr *a = (const struct in6_addr *)gattr->gid.raw;

	if (gattr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return false;
	if (!ipv6)
		return ipv6_addr_v4mapped(a);
	return !ipv6_addr_v4mapped(a) && !kwr_link_local(a);
}

static int kwr_find_gid(struct kwr_end *e)
{
	int i, len = e->ibdev->port_data[1].immutable.gid_tbl_len;
	const struct ib_gid_attr *gattr;

	for (i = 0; i < len; i++) {
		gattr = rdma_get_gid_attr(e->ibdev, 1, i);
		if (IS_ERR(gattr))
			continue;
		if (kwr_gid_wanted(gattr)) {
			e->sgid_index = i;
			e->gid = gattr->gid;
			rdma_put_gid_attr(gattr);
			return 0;
		}
		rdma_put_gid_attr(gattr);
	}
	return -ENOENT;
}

static void kwr_end_destroy(struct kwr_end *e)
{
	if (!IS_ERR_OR_NULL(e->qp))
		ib_destroy_qp(e->qp);
	if (!IS_ERR_OR_NULL(e->cq) && e->armable)
		ib_destroy_cq(e->cq);
	else if (!IS_ERR_OR_NULL(e->cq))
		ib_free_cq(e->cq);
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	memset(e, 0, sizeof(*e));
}

/* Completion events of armable CQs, counted by kwr_cq_event(). */
static atomic_t kwr_cq_events = ATOMIC_INIT(0);

static void kwr_cq_event(struct ib_cq *cq, void *ctx)
{
	atomic_inc(&kwr_cq_events);
}

static struct ib_cq *kwr_cq_create(struct kwr_end *e)
{
	struct ib_cq_init_attr attr = { .cqe = 2 * KWR_QP_WR };

	if (e->armable)
		return ib_create_cq(e->ibdev, kwr_cq_event, NULL, e, &attr);
	return ib_alloc_cq(e->ibdev, NULL, 2 * KWR_QP_WR, 0, IB_POLL_DIRECT);
}

static int kwr_end_create(struct kwr_end *e, struct ib_device *ibdev,
			  unsigned int pd_flags, bool armable)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = KWR_QP_WR,
			.max_recv_wr = KWR_QP_WR,
			.max_send_sge = KWR_SGE,
			.max_recv_sge = KWR_SGE,
		},
	};
	int err;

	e->ibdev = ibdev;
	e->armable = armable;
	err = kwr_find_gid(e);
	if (err)
		return err;
	e->pd = ib_alloc_pd(ibdev, pd_flags);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->cq = kwr_cq_create(e);
	if (IS_ERR(e->cq))
		return PTR_ERR(e->cq);
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp))
		return PTR_ERR(e->qp);
	return 0;
}

/* The right to FLUSH for global visibility (Linux 6.2 on). */
#ifdef KWR_HAVE_FLUSH
#define KWR_FLUSH_ACCESS IB_ACCESS_FLUSH_GLOBAL
#else
#define KWR_FLUSH_ACCESS 0
#endif

/* Bring @e's QP to RTS, connected to @to's. */
static int kwr_connect_one(struct kwr_end *e, struct kwr_end *to)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC | KWR_FLUSH_ACCESS,
	};
	int err;

	err = ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = to->qp->qp_num;
	attr.rq_psn = 0x1234 + to->qp->qp_num;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &to->gid, 0, e->sgid_index, 64, 0);
	err = ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0x1234 + e->qp->qp_num;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	return ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static void kwr_pair_destroy(struct kwr_pair *p)
{
	kwr_end_destroy(&p->a);
	kwr_end_destroy(&p->b);
}

/*
 * A connected pair; b's PD with @b_pd_flags, b's CQ armable with
 * @b_armable.  Reports failures as @name.
 */
static bool kwr_pair_setup(const char *name, struct kwr_pair *p,
			   unsigned int b_pd_flags, bool b_armable)
{
	int err;

	memset(p, 0, sizeof(*p));
	err = kwr_end_create(&p->a, dev_a, 0, false);
	if (!err)
		err = kwr_end_create(&p->b, dev_b, b_pd_flags, b_armable);
	if (!err)
		err = kwr_connect_one(&p->a, &p->b);
	if (!err)
		err = kwr_connect_one(&p->b, &p->a);
	if (!check(name, !err, "setting up the QP pair: %d", err)) {
		kwr_pair_destroy(p);
		return false;
	}
	return true;
}

static bool kwr_pair_create(const char *name, struct kwr_pair *p,
			    unsigned int b_pd_flags)
{
	return kwr_pair_setup(name, p, b_pd_flags, false);
}

/* The next completion of @e, or false after timeout_ms. */
static bool kwr_poll(struct kwr_end *e, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	int n;

	for (;;) {
		n = ib_poll_cq(e->cq, 1, wc);
		if (n == 1)
			return true;
		if (n < 0 || time_after(jiffies, end))
			return false;
		usleep_range(50, 200);
	}
}

/* Expect the next completion of @e to be @opcode with @status. */
static bool kwr_expect(const char *name, struct kwr_end *e, const char *side,
		       u64 wr_id, enum ib_wc_opcode opcode,
		       enum ib_wc_status status, struct ib_wc *out)
{
	struct ib_wc wc;

	if (!check(name, kwr_poll(e, &wc), "%s: no completion for wr %llu",
		   side, wr_id))
		return false;
	if (out)
		*out = wc;
	if (!check(name, wc.status == status, "%s: wr %llu: status %s, expected %s",
		   side, wc.wr_id, ib_wc_status_msg(wc.status),
		   ib_wc_status_msg(status)) ||
	    !check(name, wc.wr_id == wr_id, "%s: wr_id %llu, expected %llu",
		   side, wc.wr_id, wr_id))
		return false;
	/* Only successful completions carry an opcode. */
	return status != IB_WC_SUCCESS ||
	       check(name, wc.opcode == opcode, "%s: wr %llu: opcode %d, expected %d",
		     side, wr_id, wc.opcode, opcode);
}

/* --- buffers ------------------------------------------------------------ */

/* Kernel memory addressed through the PD's local_dma_lkey. */
struct kwr_buf {
	void *va;
	u64 dma;
	size_t len;
	struct ib_device *ibdev;
};

static bool kwr_buf_alloc(const char *name, struct kwr_buf *buf,
			  struct ib_device *ibdev, size_t len)
{
	buf->ibdev = ibdev;
	buf->len = len;
	buf->va = kzalloc(len, GFP_KERNEL);
	if (!check(name, buf->va, "no memory for %zu bytes", len))
		return false;
	buf->dma = ib_dma_map_single(ibdev, buf->va, len, DMA_BIDIRECTIONAL);
	if (!check(name, !ib_dma_mapping_error(ibdev, buf->dma),
		   "mapping %zu bytes", len)) {
		kfree(buf->va);
		buf->va = NULL;
		return false;
	}
	return true;
}

static void kwr_buf_free(struct kwr_buf *buf)
{
	if (!buf->va)
		return;
	ib_dma_unmap_single(buf->ibdev, buf->dma, buf->len, DMA_BIDIRECTIONAL);
	kfree(buf->va);
	buf->va = NULL;
}

static u8 kwr_pattern(size_t i, u8 seed)
{
	return (u8)(i * 7 + seed + (i >> 8));
}

static void kwr_fill(void *p, size_t len, u8 seed)
{
	u8 *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = kwr_pattern(i, seed);
}

/* Index of the first byte of @p that breaks the pattern from @from on. */
static ssize_t kwr_mismatch(const void *p, size_t len, u8 seed, size_t from)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != kwr_pattern(from + i, seed))
			return i;
	return -1;
}

static struct ib_sge kwr_sge(struct kwr_end *e, const struct kwr_buf *buf,
			     size_t off, u32 len)
{
	return (struct ib_sge){
		.addr = buf->dma + off,
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

static int kwr_post_recv(struct kwr_end *e, u64 wr_id, struct ib_sge *sge,
			 int num_sge)
{
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
	};

	return ib_post_recv(e->qp, &wr, NULL);
}

static int kwr_post(struct kwr_end *e, struct ib_send_wr *wr)
{
	return ib_post_send(e->qp, wr, NULL);
}

/* One-sided @opcode from a over @sge to (@raddr, @rkey) at b. */
static int kwr_post_rdma(struct kwr_end *e, u64 wr_id, enum ib_wr_opcode op,
			 struct ib_sge *sge, int num_sge, u64 raddr, u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = op,
			.sg_list = sge,
			.num_sge = num_sge,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return kwr_post(e, &wr.wr);
}

/* --- fast-registration regions ------------------------------------------ */

/* A fast-registration region of b over pages the test owns. */
struct kwr_fr {
	struct ib_mr *mr;
	struct page **pages;
	unsigned int npages;
	unsigned int order;
	struct scatterlist *sg;
	int nents;
	bool mapped;
};

static void kwr_fr_free(struct kwr_fr *fr, struct ib_device *ibdev)
{
	unsigned int i;

	if (fr->mapped)
		ib_dma_unmap_sg(ibdev, fr->sg, fr->nents, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(fr->mr))
		ib_dereg_mr(fr->mr);
	for (i = 0; fr->pages && i < fr->npages; i++)
		if (fr->pages[i])
			__free_pages(fr->pages[i], fr->order);
	kfree(fr->pages);
	kfree(fr->sg);
	memset(fr, 0, sizeof(*fr));
}

/*
 * @npages separate blocks of 2^@order pages, as one scatterlist: the first
 * entry starts @first_off into its block, the last ends @last_short
 * before the end of its block; the region is allocated from @pd for
 * @max_pages pages of @page_size.
 */
static bool kwr_fr_alloc(const char *name, struct kwr_fr *fr,
			 struct ib_pd *pd, unsigned int npages,
			 unsigned int order, unsigned int first_off,
			 unsigned int last_short, unsigned int max_pages)
{
	size_t block = PAGE_SIZE << order;
	unsigned int i, off, len;

	memset(fr, 0, sizeof(*fr));
	fr->npages = npages;
	fr->order = order;
	fr->pages = kcalloc(npages, sizeof(*fr->pages), GFP_KERNEL);
	fr->sg = kcalloc(npages, sizeof(*fr->sg), GFP_KERNEL);
	if (!check(name, fr->pages && fr->sg, "no memory"))
		goto err;
	sg_init_table(fr->sg, npages);
	for (i = 0; i < npages; i++) {
		fr->pages[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, order);
		if (!check(name, fr->pages[i], "no pages"))
			goto err;
		off = i == 0 ? first_off : 0;
		len = block - off - (i == npages - 1 ? last_short : 0);
		sg_set_page(&fr->sg[i], fr->pages[i], len, off);
	}
	fr->nents = ib_dma_map_sg(pd->device, fr->sg, npages,
				  DMA_BIDIRECTIONAL);
	if (!check(name, fr->nents > 0, "mapping the scatterlist"))
		goto err;
	fr->mapped = true;
	fr->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_pages);
	if (!check(name, !IS_ERR(fr->mr), "ib_alloc_mr: %d",
		   PTR_ERR_OR_ZERO(fr->mr)))
		goto err;
	return true;

err:
	kwr_fr_free(fr, pd->device);
	return false;
}

/* Map the pages into the region with pages of @page_size. */
static bool kwr_fr_map(const char *name, struct kwr_fr *fr,
		       unsigned int page_size)
{
	int n = ib_map_mr_sg(fr->mr, fr->sg, fr->nents, NULL, page_size);

	return check(name, n == fr->nents, "ib_map_mr_sg mapped %d of %d",
		     n, fr->nents);
}

/* Post IB_WR_REG_MR for the region on @e (signaled, @wr_id). */
static int kwr_fr_post_reg(struct kwr_end *e, struct kwr_fr *fr, u64 wr_id,
			   int access)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_REG_MR,
		},
		.mr = fr->mr,
		.key = fr->mr->rkey,
		.access = access,
	};

	return kwr_post(e, &wr.wr);
}

/* Register and wait for the completion. */
static bool kwr_fr_reg(const char *name, struct kwr_end *e,
		       struct kwr_fr *fr, int access)
{
	int err = kwr_fr_post_reg(e, fr, 900, access);

	return check(name, !err, "posting REG_MR: %d", err) &&
	       kwr_expect(name, e, "b", 900, IB_WC_REG_MR, IB_WC_SUCCESS,
			  NULL);
}

static int kwr_post_local_inv(struct kwr_end *e, u64 wr_id, u32 rkey)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = rkey,
	};

	return kwr_post(e, &wr);
}

/*
 * Does region memory [@off, @off + @len) (the scatterlist's bytes in
 * order) hold the pattern of @seed?
 */
static bool kwr_fr_holds(const char *name, struct kwr_fr *fr, size_t off,
			 size_t len, u8 seed)
{
	size_t done = 0, n;
	unsigned int k;
	ssize_t bad;

	for (k = 0; k < fr->npages && done < len; k++) {
		if (off >= fr->sg[k].length) {
			off -= fr->sg[k].length;
			continue;
		}
		n = min_t(size_t, len - done, fr->sg[k].length - off);
		bad = kwr_mismatch((u8 *)sg_virt(&fr->sg[k]) + off, n, seed,
				   done);
		if (!check(name, bad < 0, "region byte %zu differs",
			   done + bad))
			return false;
		done += n;
		off = 0;
	}
	return check(name, done == len, "region shorter than %zu bytes", len);
}

#define KWR_RW_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/*
 * Write @len bytes from a to the region at @off, check them in b's pages,
 * then read them back into a fresh buffer of a and check that.
 */
static bool kwr_write_read_fr(const char *name, struct kwr_pair *p,
			      struct kwr_fr *fr, size_t off, u32 len, u8 seed)
{
	struct kwr_buf src = {}, dst = {};
	struct ib_sge sge;
	bool ok = false;
	ssize_t bad;
	int err;

	if (!kwr_buf_alloc(name, &src, p->a.ibdev, len) ||
	    !kwr_buf_alloc(name, &dst, p->a.ibdev, len))
		goto out;
	kwr_fill(src.va, len, seed);
	sge = kwr_sge(&p->a, &src, 0, len);
	err = kwr_post_rdma(&p->a, 1, IB_WR_RDMA_WRITE, &sge, 1,
			    fr->mr->iova + off, fr->mr->rkey);
	if (!check(name, !err, "posting RDMA_WRITE: %d", err) ||
	    !kwr_expect(name, &p->a, "a", 1, IB_WC_RDMA_WRITE, IB_WC_SUCCESS,
			NULL) ||
	    !kwr_fr_holds(name, fr, off, len, seed))
		goto out;
	sge = kwr_sge(&p->a, &dst, 0, len);
	err = kwr_post_rdma(&p->a, 2, IB_WR_RDMA_READ, &sge, 1,
			    fr->mr->iova + off, fr->mr->rkey);
	if (!check(name, !err, "posting RDMA_READ: %d", err) ||
	    !kwr_expect(name, &p->a, "a", 2, IB_WC_RDMA_READ, IB_WC_SUCCESS,
			NULL))
		goto out;
	bad = kwr_mismatch(dst.va, len, seed, 0);
	ok = check(name, bad < 0, "READ byte %zd differs", bad);
out:
	kwr_buf_free(&src);
	kwr_buf_free(&dst);
	return ok;
}

/* a writes 64 bytes to (@raddr, @rkey) and expects @status. */
static bool kwr_write_expect(const char *name, struct kwr_pair *p, u64 raddr,
			     u32 rkey, u32 len, enum ib_wc_status status)
{
	struct kwr_buf src = {};
	struct ib_sge sge;
	bool ok = false;
	int err;

	if (!kwr_buf_alloc(name, &src, p->a.ibdev, len))
		return false;
	kwr_fill(src.va, len, 9);
	sge = kwr_sge(&p->a, &src, 0, len);
	err = kwr_post_rdma(&p->a, 3, IB_WR_RDMA_WRITE, &sge, 1, raddr, rkey);
	if (check(name, !err, "posting RDMA_WRITE: %d", err))
		ok = kwr_expect(name, &p->a, "a", 3, IB_WC_RDMA_WRITE, status,
				NULL);
	kwr_buf_free(&src);
	return ok;
}

/* --- the cases ------------------------------------------------------------ */

/* SEND and SEND_WITH_IMM, gathered from 3 SGEs, scattered into 2. */
static void test_send_recv(void)
{
	const char *t = "send_recv";
	struct kwr_buf sbuf = {}, rbuf = {};
	struct ib_sge ssge[3], rsge[2];
	struct ib_send_wr wr = {};
	struct kwr_pair p;
	struct ib_wc wc;
	ssize_t bad;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_buf_alloc(t, &sbuf, p.a.ibdev, 4100) ||
	    !kwr_buf_alloc(t, &rbuf, p.b.ibdev, 8192))
		goto out;
	kwr_fill(sbuf.va, 4100, 1);
	ssge[0] = kwr_sge(&p.a, &sbuf, 0, 1000);
	ssge[1] = kwr_sge(&p.a, &sbuf, 1000, 2000);
	ssge[2] = kwr_sge(&p.a, &sbuf, 3000, 1100);
	rsge[0] = kwr_sge(&p.b, &rbuf, 0, 100);
	rsge[1] = kwr_sge(&p.b, &rbuf, 100, 8000);
	err = kwr_post_recv(&p.b, 10, rsge, 2);
	if (!err)
		err = kwr_post_recv(&p.b, 11, rsge, 2);
	if (!check(t, !err, "posting receives: %d", err))
		goto out;

	wr.wr_id = 20;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = ssge;
	wr.num_sge = 3;
	err = kwr_post(&p.a, &wr);
	if (!check(t, !err, "posting SEND: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 20, IB_WC_SEND, IB_WC_SUCCESS, NULL) ||
	    !kwr_expect(t, &p.b, "b", 10, IB_WC_RECV, IB_WC_SUCCESS, &wc) ||
	    !check(t, wc.byte_len == 4100, "received %u bytes", wc.byte_len) ||
	    !check(t, !(wc.wc_flags & IB_WC_WITH_IMM), "IMM on a SEND"))
		goto out;
	bad = kwr_mismatch(rbuf.va, 4100, 1, 0);
	if (!check(t, bad < 0, "received byte %zd differs", bad))
		goto out;

	wr.wr_id = 21;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(0xabcd1234);
	wr.num_sge = 1;
	err = kwr_post(&p.a, &wr);
	if (!check(t, !err, "posting SEND_WITH_IMM: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 21, IB_WC_SEND, IB_WC_SUCCESS, NULL) ||
	    !kwr_expect(t, &p.b, "b", 11, IB_WC_RECV, IB_WC_SUCCESS, &wc) ||
	    !check(t, wc.byte_len == 1000, "received %u bytes", wc.byte_len) ||
	    !check(t, (wc.wc_flags & IB_WC_WITH_IMM) &&
		   wc.ex.imm_data == cpu_to_be32(0xabcd1234),
		   "immediate data flags %#x value %#x", wc.wc_flags,
		   be32_to_cpu(wc.ex.imm_data)))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_pair_destroy(&p);
	kwr_buf_free(&sbuf);
	kwr_buf_free(&rbuf);
}

/*
 * The DMA region behind IB_PD_UNSAFE_GLOBAL_RKEY (get_dma_mr): WRITE,
 * WRITE_WITH_IMM and READ by kernel virtual address.
 */
static void test_dma_mr(void)
{
	const char *t = "dma_mr";
	struct kwr_buf src = {}, dst = {}, target = {};
	struct kwr_pair p;
	struct ib_sge sge;
	struct ib_wc wc;
	u32 len = 10000;
	u32 rkey;
	ssize_t bad;
	int err;

	if (!kwr_pair_create(t, &p, IB_PD_UNSAFE_GLOBAL_RKEY))
		return;
	rkey = p.b.pd->unsafe_global_rkey;
	if (!check(t, rkey, "no global rkey") ||
	    !kwr_buf_alloc(t, &src, p.a.ibdev, len) ||
	    !kwr_buf_alloc(t, &dst, p.a.ibdev, len) ||
	    !kwr_buf_alloc(t, &target, p.b.ibdev, len))
		goto out;
	kwr_fill(src.va, len, 2);
	sge = kwr_sge(&p.a, &src, 0, len);
	err = kwr_post_rdma(&p.a, 30, IB_WR_RDMA_WRITE, &sge, 1, target.dma,
			    rkey);
	if (!check(t, !err, "posting RDMA_WRITE: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 30, IB_WC_RDMA_WRITE, IB_WC_SUCCESS,
			NULL))
		goto out;
	bad = kwr_mismatch(target.va, len, 2, 0);
	if (!check(t, bad < 0, "written byte %zd differs", bad))
		goto out;

	/* WRITE_WITH_IMM consumes a receive and reports the immediate. */
	kwr_fill(src.va, len, 3);
	err = kwr_post_recv(&p.b, 31, NULL, 0);
	if (!check(t, !err, "posting a receive: %d", err))
		goto out;
	{
		struct ib_rdma_wr wr = {
			.wr = {
				.wr_id = 32,
				.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
				.sg_list = &sge,
				.num_sge = 1,
				.ex.imm_data = cpu_to_be32(77),
			},
			.remote_addr = target.dma,
			.rkey = rkey,
		};

		err = kwr_post(&p.a, &wr.wr);
	}
	if (!check(t, !err, "posting RDMA_WRITE_WITH_IMM: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 32, IB_WC_RDMA_WRITE, IB_WC_SUCCESS,
			NULL) ||
	    !kwr_expect(t, &p.b, "b", 31, IB_WC_RECV_RDMA_WITH_IMM,
			IB_WC_SUCCESS, &wc) ||
	    !check(t, (wc.wc_flags & IB_WC_WITH_IMM) &&
		   wc.ex.imm_data == cpu_to_be32(77) && wc.byte_len == len,
		   "flags %#x imm %u byte_len %u", wc.wc_flags,
		   be32_to_cpu(wc.ex.imm_data), wc.byte_len))
		goto out;
	bad = kwr_mismatch(target.va, len, 3, 0);
	if (!check(t, bad < 0, "written byte %zd differs", bad))
		goto out;

	sge = kwr_sge(&p.a, &dst, 0, len);
	err = kwr_post_rdma(&p.a, 33, IB_WR_RDMA_READ, &sge, 1, target.dma,
			    rkey);
	if (!check(t, !err, "posting RDMA_READ: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 33, IB_WC_RDMA_READ, IB_WC_SUCCESS,
			NULL))
		goto out;
	bad = kwr_mismatch(dst.va, len, 3, 0);
	if (!check(t, bad < 0, "read byte %zd differs", bad))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_pair_destroy(&p);
	kwr_buf_free(&src);
	kwr_buf_free(&dst);
	kwr_buf_free(&target);
}

/*
 * Fast registration of a scatterlist as ULPs build them: @npages blocks of
 * 2^@order pages mapped with pages of @page_size, the first entry starting
 * @first_off in, the last ending @last_short early; then WRITE and READ
 * across all of it.
 */
static void test_fastreg(const char *t, unsigned int npages,
			 unsigned int order, unsigned int page_size,
			 unsigned int first_off, unsigned int last_short)
{
	struct kwr_pair p;
	struct kwr_fr fr;
	u64 len;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, npages, order, first_off,
			  last_short, npages << order))
		goto out_pair;
	len = ((u64)npages * (PAGE_SIZE << order)) - first_off - last_short;
	if (!kwr_fr_map(t, &fr, page_size) ||
	    !check(t, fr.mr->length == len && fr.mr->iova ==
		   (u64)(uintptr_t)sg_virt(&fr.sg[0]),
		   "mapped length %llu iova %#llx", fr.mr->length,
		   fr.mr->iova) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS) ||
	    !kwr_write_read_fr(t, &p, &fr, 0, len, 4) ||
	    !kwr_write_read_fr(t, &p, &fr, 17, len - 40, 5))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/* LOCAL_INV ends remote access; the key then rotates and works again. */
static void test_local_inv_and_rotate(void)
{
	const char *t = "local_inv_key_rotation";
	struct kwr_pair p;
	struct kwr_fr fr;
	u32 old_rkey;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 4, 0, 0, 0, 4))
		goto out_pair;
	if (!kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS) ||
	    !kwr_write_read_fr(t, &p, &fr, 0, 4 * PAGE_SIZE, 6))
		goto out;
	old_rkey = fr.mr->rkey;

	/* REG_MR on a region that is still valid fails. */
	err = kwr_fr_post_reg(&p.b, &fr, 40, KWR_RW_ACCESS);
	if (!check(t, !err, "posting REG_MR again: %d", err) ||
	    !kwr_expect(t, &p.b, "b", 40, IB_WC_REG_MR, IB_WC_LOC_PROT_ERR,
			NULL))
		goto out;
	/* b's QP is in error now: start over with a new pair. */
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 4, 0, 0, 0, 4))
		goto out_pair;
	if (!kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS))
		goto out;
	old_rkey = fr.mr->rkey;
	err = kwr_post_local_inv(&p.b, 41, old_rkey);
	if (!check(t, !err, "posting LOCAL_INV: %d", err) ||
	    !kwr_expect(t, &p.b, "b", 41, IB_WC_LOCAL_INV, IB_WC_SUCCESS,
			NULL))
		goto out;

	/* A new key byte, a new mapping, registered again. */
	ib_update_fast_reg_key(fr.mr, ib_inc_rkey(fr.mr->rkey));
	if (!check(t, fr.mr->rkey != old_rkey &&
		   (fr.mr->rkey >> 8) == (old_rkey >> 8),
		   "key %#x after %#x", fr.mr->rkey, old_rkey) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS) ||
	    !kwr_write_read_fr(t, &p, &fr, 100, 3 * PAGE_SIZE, 7))
		goto out;
	/* The old key is dead: remote access error, a's QP fails. */
	if (!kwr_write_expect(t, &p, fr.mr->iova, old_rkey, 64,
			      IB_WC_REM_ACCESS_ERR))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/* A write after LOCAL_INV is refused. */
static void test_write_after_local_inv(void)
{
	const char *t = "write_after_local_inv";
	struct kwr_pair p;
	struct kwr_fr fr;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 2, 0, 0, 0, 2))
		goto out_pair;
	if (!kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS))
		goto out;
	err = kwr_post_local_inv(&p.b, 50, fr.mr->rkey);
	if (!check(t, !err, "posting LOCAL_INV: %d", err) ||
	    !kwr_expect(t, &p.b, "b", 50, IB_WC_LOCAL_INV, IB_WC_SUCCESS,
			NULL) ||
	    !kwr_write_expect(t, &p, fr.mr->iova, fr.mr->rkey, 64,
			      IB_WC_REM_ACCESS_ERR))
		goto out;
	/* Not a byte moved. */
	if (!check(t, !memchr_inv(sg_virt(&fr.sg[0]), 0, 64),
		   "the refused write changed memory"))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/* SEND_WITH_INV: the receiver's completion names the key, which is dead. */
static void test_send_with_inv(void)
{
	const char *t = "send_with_inv";
	struct kwr_buf sbuf = {}, rbuf = {};
	struct ib_send_wr wr = {};
	struct ib_sge sge, rsge;
	struct kwr_pair p;
	struct kwr_fr fr;
	struct ib_wc wc;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 2, 0, 0, 0, 2))
		goto out_pair;
	if (!kwr_buf_alloc(t, &sbuf, p.a.ibdev, 256) ||
	    !kwr_buf_alloc(t, &rbuf, p.b.ibdev, 256) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS) ||
	    !kwr_write_read_fr(t, &p, &fr, 0, 2 * PAGE_SIZE, 8))
		goto out;
	rsge = kwr_sge(&p.b, &rbuf, 0, 256);
	err = kwr_post_recv(&p.b, 60, &rsge, 1);
	if (!check(t, !err, "posting a receive: %d", err))
		goto out;
	kwr_fill(sbuf.va, 200, 10);
	sge = kwr_sge(&p.a, &sbuf, 0, 200);
	wr.wr_id = 61;
	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.ex.invalidate_rkey = fr.mr->rkey;
	err = kwr_post(&p.a, &wr);
	if (!check(t, !err, "posting SEND_WITH_INV: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 61, IB_WC_SEND, IB_WC_SUCCESS, NULL) ||
	    !kwr_expect(t, &p.b, "b", 60, IB_WC_RECV, IB_WC_SUCCESS, &wc) ||
	    !check(t, (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		   wc.ex.invalidate_rkey == fr.mr->rkey && wc.byte_len == 200,
		   "flags %#x invalidated %#x (key %#x) byte_len %u",
		   wc.wc_flags, wc.ex.invalidate_rkey, fr.mr->rkey,
		   wc.byte_len) ||
	    !check(t, kwr_mismatch(rbuf.va, 200, 10, 0) < 0,
		   "received data differs") ||
	    !kwr_write_expect(t, &p, fr.mr->iova, fr.mr->rkey, 64,
			      IB_WC_REM_ACCESS_ERR))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	kwr_buf_free(&sbuf);
	kwr_buf_free(&rbuf);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/* CMP_AND_SWP and FETCH_AND_ADD on a fast-registration region. */
static void test_atomics(void)
{
	const char *t = "atomics";
	struct kwr_buf res = {};
	struct kwr_pair p;
	struct kwr_fr fr;
	struct ib_sge sge;
	u64 *target;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 1, 0, 0, 0, 1))
		goto out_pair;
	target = (u64 *)sg_virt(&fr.sg[0]) + 1;
	*target = 5;
	if (!kwr_buf_alloc(t, &res, p.a.ibdev, 8) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS | IB_ACCESS_REMOTE_ATOMIC))
		goto out;
	sge = kwr_sge(&p.a, &res, 0, 8);
	{
		struct ib_atomic_wr wr = {
			.wr = {
				.wr_id = 70,
				.opcode = IB_WR_ATOMIC_CMP_AND_SWP,
				.sg_list = &sge,
				.num_sge = 1,
			},
			.remote_addr = fr.mr->iova + 8,
			.compare_add = 5,
			.swap = 7,
			.rkey = fr.mr->rkey,
		};

		err = kwr_post(&p.a, &wr.wr);
		if (!check(t, !err, "posting CMP_AND_SWP: %d", err) ||
		    !kwr_expect(t, &p.a, "a", 70, IB_WC_COMP_SWAP,
				IB_WC_SUCCESS, NULL) ||
		    !check(t, *(u64 *)res.va == 5 && READ_ONCE(*target) == 7,
			   "compare-and-swap returned %llu, memory %llu",
			   *(u64 *)res.va, READ_ONCE(*target)))
			goto out;
		wr.wr.wr_id = 71;
		wr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		wr.compare_add = 10;
		err = kwr_post(&p.a, &wr.wr);
		if (!check(t, !err, "posting FETCH_AND_ADD: %d", err) ||
		    !kwr_expect(t, &p.a, "a", 71, IB_WC_FETCH_ADD,
				IB_WC_SUCCESS, NULL) ||
		    !check(t, *(u64 *)res.va == 7 && READ_ONCE(*target) == 17,
			   "fetch-and-add returned %llu, memory %llu",
			   *(u64 *)res.va, READ_ONCE(*target)))
			goto out;
	}
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	kwr_buf_free(&res);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/*
 * ATOMIC WRITE (Linux 6.2 on): its 8 bytes, from an SGE, land in one
 * piece on a fast-registration region's word, the words around it
 * untouched, twice; an unaligned word is refused by the responder.
 */
#ifdef KWR_HAVE_ATOMIC_WRITE
static bool kwr_atomic_write(const char *t, struct kwr_pair *p,
			     struct kwr_fr *fr, struct kwr_buf *src,
			     u64 wr_id, unsigned int off, int flags,
			     enum ib_wc_status status)
{
	struct ib_sge sge = kwr_sge(&p->a, src, 0, 8);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_ATOMIC_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED | flags,
		},
		.remote_addr = fr->mr->iova + off,
		.rkey = fr->mr->rkey,
	};
	int err = kwr_post(&p->a, &wr.wr);

	return check(t, !err, "posting ATOMIC_WRITE: %d", err) &&
	       kwr_expect(t, &p->a, "a", wr_id, IB_WC_ATOMIC_WRITE, status,
			  NULL);
}

static void test_atomic_write(void)
{
	const char *t = "atomic_write";
	struct kwr_buf src = {};
	struct kwr_pair p;
	struct kwr_fr fr;
	u64 *word;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 1, 0, 0, 0, 1))
		goto out_pair;
	word = (u64 *)sg_virt(&fr.sg[0]);
	word[0] = 1;
	word[1] = 2;
	word[2] = 3;
	if (!kwr_buf_alloc(t, &src, p.a.ibdev, 8) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS))
		goto out;
	*(u64 *)src.va = 0x1122334455667788ULL;
	if (!kwr_atomic_write(t, &p, &fr, &src, 80, 8, 0, IB_WC_SUCCESS) ||
	    !check(t, READ_ONCE(word[1]) == 0x1122334455667788ULL &&
		   word[0] == 1 && word[2] == 3,
		   "ATOMIC_WRITE left %llx %llx %llx", word[0],
		   READ_ONCE(word[1]), word[2]))
		goto out;
	*(u64 *)src.va = 0xa1a2a3a4a5a6a7a8ULL;
	if (!kwr_atomic_write(t, &p, &fr, &src, 81, 8, 0, IB_WC_SUCCESS) ||
	    !check(t, READ_ONCE(word[1]) == 0xa1a2a3a4a5a6a7a8ULL,
		   "a second ATOMIC_WRITE left %llx", READ_ONCE(word[1])))
		goto out;
	if (!kwr_atomic_write(t, &p, &fr, &src, 82, 4, 0,
			      IB_WC_REM_INV_REQ_ERR) ||
	    !check(t, word[0] == 1 && READ_ONCE(word[1]) == 0xa1a2a3a4a5a6a7a8ULL,
		   "an unaligned ATOMIC_WRITE moved memory: %llx %llx",
		   word[0], READ_ONCE(word[1])))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	kwr_buf_free(&src);
	return;
out_pair:
	kwr_pair_destroy(&p);
}
#else
static void test_atomic_write(void)
{
	pr_info("atomic_write: skip: this kernel has no IB_WR_ATOMIC_WRITE (Linux 6.2 on)\n");
}
#endif

/*
 * FLUSH (Linux 6.2 on): the kernel's work request names the remote range
 * as a WRITE does, the length its SGE's (not read).  After a WRITE (its
 * bytes checked in the responder's pages and read back), a FLUSH of that
 * range and one of a part of it complete; one of a region without the
 * right to be flushed is refused with a remote access error.
 */
#ifdef KWR_HAVE_FLUSH
static bool kwr_flush(const char *t, struct kwr_pair *p, struct kwr_fr *fr,
		      struct kwr_buf *any, u64 wr_id, unsigned int off,
		      u32 len, enum ib_wc_status status)
{
	struct ib_sge sge = kwr_sge(&p->a, any, 0, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_FLUSH,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = fr->mr->iova + off,
		.rkey = fr->mr->rkey,
	};
	int err = kwr_post(&p->a, &wr.wr);

	return check(t, !err, "posting FLUSH: %d", err) &&
	       kwr_expect(t, &p->a, "a", wr_id, IB_WC_FLUSH, status, NULL);
}

static void test_flush(void)
{
	const char *t = "flush";
	struct kwr_fr fr, bare = {};
	struct kwr_buf any = {};
	struct kwr_pair p;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 2, 0, 0, 0, 2))
		goto out_pair;
	if (!kwr_fr_alloc(t, &bare, p.b.pd, 1, 0, 0, 0, 1))
		goto out_fr;
	if (!kwr_buf_alloc(t, &any, p.a.ibdev, 2 * PAGE_SIZE) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS | IB_ACCESS_FLUSH_GLOBAL) ||
	    !kwr_fr_map(t, &bare, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &bare, KWR_RW_ACCESS) ||
	    !kwr_write_read_fr(t, &p, &fr, 100, PAGE_SIZE, 9) ||
	    !kwr_flush(t, &p, &fr, &any, 90, 100, PAGE_SIZE, IB_WC_SUCCESS) ||
	    !kwr_flush(t, &p, &fr, &any, 91, 0, 2 * PAGE_SIZE,
		       IB_WC_SUCCESS) ||
	    !kwr_fr_holds(t, &fr, 100, PAGE_SIZE, 9) ||
	    !kwr_flush(t, &p, &bare, &any, 92, 0, 64, IB_WC_REM_ACCESS_ERR))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_buf_free(&any);
	kwr_fr_free(&bare, dev_b);
out_fr:
	kwr_fr_free(&fr, dev_b);
out_pair:
	kwr_pair_destroy(&p);
}
#else
static void test_flush(void)
{
	pr_info("flush: skip: this kernel has no IB_WR_FLUSH (Linux 6.2 on)\n");
}
#endif

/* Remote rights and bounds are enforced; refused writes move nothing. */
static void test_remote_access_errors(void)
{
	const char *t = "remote_access_errors";
	struct kwr_pair p;
	struct kwr_fr fr;

	/* Registered for remote read only: a write is refused. */
	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 2, 0, 0, 0, 2))
		goto out_pair;
	if (!kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, IB_ACCESS_LOCAL_WRITE |
			IB_ACCESS_REMOTE_READ) ||
	    !kwr_write_expect(t, &p, fr.mr->iova, fr.mr->rkey, 64,
			      IB_WC_REM_ACCESS_ERR) ||
	    !check(t, !memchr_inv(sg_virt(&fr.sg[0]), 0, 64),
		   "a refused write changed memory"))
		goto out;
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);

	/* Past the end of the region: refused. */
	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_fr_alloc(t, &fr, p.b.pd, 2, 0, 0, 0, 2))
		goto out_pair;
	if (!kwr_fr_map(t, &fr, PAGE_SIZE) ||
	    !kwr_fr_reg(t, &p.b, &fr, KWR_RW_ACCESS) ||
	    !kwr_write_expect(t, &p, fr.mr->iova + 2 * PAGE_SIZE - 32,
			      fr.mr->rkey, 64, IB_WC_REM_ACCESS_ERR) ||
	    !check(t, !memchr_inv(sg_virt(&fr.sg[1]), 0, PAGE_SIZE),
		   "a refused write changed memory"))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	return;
out_pair:
	kwr_pair_destroy(&p);
}

/* Local protection: a bad lkey, and REG_MR of another PD's region. */
static void test_local_errors(void)
{
	const char *t = "local_errors";
	struct ib_send_wr wr = {};
	struct kwr_buf buf = {};
	struct ib_pd *other = NULL;
	struct ib_sge sge;
	struct kwr_pair p;
	struct kwr_fr fr = {};
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_buf_alloc(t, &buf, p.a.ibdev, 64))
		goto out;
	sge = kwr_sge(&p.a, &buf, 0, 64);
	sge.lkey ^= 0x5a00;
	wr.wr_id = 80;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	err = kwr_post(&p.a, &wr);
	if (!check(t, !err, "posting SEND: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 80, IB_WC_SEND, IB_WC_LOC_PROT_ERR,
			NULL))
		goto out;
	kwr_pair_destroy(&p);

	if (!kwr_pair_create(t, &p, 0))
		goto out;
	other = ib_alloc_pd(p.b.ibdev, 0);
	if (!check(t, !IS_ERR(other), "ib_alloc_pd: %ld", PTR_ERR(other))) {
		other = NULL;
		goto out;
	}
	if (!kwr_fr_alloc(t, &fr, other, 1, 0, 0, 0, 1) ||
	    !kwr_fr_map(t, &fr, PAGE_SIZE))
		goto out;
	err = kwr_fr_post_reg(&p.b, &fr, 81, KWR_RW_ACCESS);
	if (!check(t, !err, "posting REG_MR: %d", err) ||
	    !kwr_expect(t, &p.b, "b", 81, IB_WC_REG_MR, IB_WC_LOC_PROT_ERR,
			NULL))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_fr_free(&fr, dev_b);
	kwr_pair_destroy(&p);
	if (other)
		ib_dealloc_pd(other);
	kwr_buf_free(&buf);
}

/* --- posting to an ERR QP from any context ------------------------------ */

/* A receive posted from an irq_work: hardirq, as a completion handler. */
struct kwr_irq_post {
	struct irq_work work;
	struct kwr_end *e;
	struct ib_sge *sge;
	u64 wr_id;
	int err;
	bool hardirq;
};

static void kwr_irq_post_fn(struct irq_work *work)
{
	struct kwr_irq_post *p = container_of(work, struct kwr_irq_post, work);

	p->hardirq = in_hardirq();
	p->err = kwr_post_recv(p->e, p->wr_id, p->sge, 1);
}

/*
 * ib_post_recv() and ib_post_send() may be called in any context: from a
 * completion handler in hardirq, or with interrupts off.  On a QP in ERR
 * the work requests complete with IB_WC_WR_FLUSH_ERR.  sroce once flushed
 * a receive posted to an ERR QP on the spot, taking a lock with
 * spin_lock_bh(), which hardirq context and disabled interrupts forbid.
 */
static void test_post_err_any_context(void)
{
	const char *t = "post_err_any_context";
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kwr_irq_post ip = {};
	struct ib_send_wr wr = {};
	struct kwr_buf buf = {};
	unsigned long flags;
	struct ib_sge sge;
	struct kwr_pair p;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_buf_alloc(t, &buf, p.a.ibdev, 64))
		goto out;
	err = ib_modify_qp(p.a.qp, &attr, IB_QP_STATE);
	if (!check(t, !err, "to ERR: %d", err))
		goto out;
	sge = kwr_sge(&p.a, &buf, 0, 64);
	ip.e = &p.a;
	ip.sge = &sge;
	ip.wr_id = 90;
	init_irq_work(&ip.work, kwr_irq_post_fn);
	irq_work_queue(&ip.work);
	irq_work_sync(&ip.work);
	if (!check(t, ip.hardirq, "the irq_work did not run in hardirq") ||
	    !check(t, !ip.err, "post_recv in hardirq: %d", ip.err) ||
	    !kwr_expect(t, &p.a, "a", 90, IB_WC_RECV, IB_WC_WR_FLUSH_ERR,
			NULL))
		goto out;
	local_irq_save(flags);
	err = kwr_post_recv(&p.a, 91, &sge, 1);
	local_irq_restore(flags);
	if (!check(t, !err, "post_recv with interrupts off: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 91, IB_WC_RECV, IB_WC_WR_FLUSH_ERR,
			NULL))
		goto out;
	wr.wr_id = 92;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	local_irq_save(flags);
	err = kwr_post(&p.a, &wr);
	local_irq_restore(flags);
	if (!check(t, !err, "post_send with interrupts off: %d", err) ||
	    !kwr_expect(t, &p.a, "a", 92, IB_WC_SEND, IB_WC_WR_FLUSH_ERR,
			NULL))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_pair_destroy(&p);
	kwr_buf_free(&buf);
}

/* --- modify_qp racing a failure ----------------------------------------- */

#define KWR_RACE_ROUNDS 300

/*
 * Whether b's CQ, armed with @flags, raises a completion event for a SEND
 * from a (@se: solicited) out of @buf[0] into @buf[1], as @want says;
 * false with the failure reported.  An expected
 * event must come within timeout_ms, an unexpected one within 100 ms.
 */
static bool kwr_arm_round(const char *t, struct kwr_pair *p, struct kwr_buf buf[2],
			  enum ib_cq_notify_flags flags, bool se, bool want)
{
	unsigned long end = jiffies + msecs_to_jiffies(want ? timeout_ms : 100);
	struct ib_sge sge = kwr_sge(&p->a, &buf[0], 0, 64);
	struct ib_sge rsge = kwr_sge(&p->b, &buf[1], 0, 64);
	struct ib_send_wr wr = {
		.wr_id = 1,
		.opcode = IB_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.send_flags = se ? IB_SEND_SOLICITED : 0,
	};
	int err, got;

	err = kwr_post_recv(&p->b, 2, &rsge, 1);
	atomic_set(&kwr_cq_events, 0);
	if (!err)
		err = ib_req_notify_cq(p->b.cq, flags);
	if (!err)
		err = kwr_post(&p->a, &wr);
	if (!check(t, !err, "arming %#x, posting: %d", flags, err) ||
	    !kwr_expect(t, &p->a, "a", 1, IB_WC_SEND, IB_WC_SUCCESS, NULL) ||
	    !kwr_expect(t, &p->b, "b", 2, IB_WC_RECV, IB_WC_SUCCESS, NULL))
		return false;
	while (!atomic_read(&kwr_cq_events) && time_before(jiffies, end))
		usleep_range(500, 1000);
	got = atomic_read(&kwr_cq_events);
	return check(t, !!got == want, "armed %#x, a%s SEND: %d events, expected %s",
		     flags, se ? " solicited" : "n unsolicited", got, want ? "1" : "none");
}

/*
 * Arming a CQ: IB_CQ_NEXT_COMP reports any completion; IB_CQ_SOLICITED a
 * solicited or unsuccessful one (the flushed receives of a QP moved to
 * ERR included); both bits, IB_CQ_SOLICITED_MASK, as net/smc arms its
 * receive CQ, any completion, as hardware reads it.
 */
static void test_cq_arm(void)
{
	const char *t = "cq_arm";
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kwr_buf buf[2] = {};
	struct ib_sge rsge;
	struct kwr_pair p;
	struct ib_wc wc;
	int err;

	if (!kwr_pair_setup(t, &p, 0, true))
		return;
	if (!kwr_buf_alloc(t, &buf[0], p.a.ibdev, 64) ||
	    !kwr_buf_alloc(t, &buf[1], p.b.ibdev, 64) ||
	    !kwr_arm_round(t, &p, buf, IB_CQ_NEXT_COMP, false, true) ||
	    !kwr_arm_round(t, &p, buf, IB_CQ_SOLICITED_MASK, false, true) ||
	    !kwr_arm_round(t, &p, buf, IB_CQ_SOLICITED, false, false) ||
	    !kwr_arm_round(t, &p, buf, IB_CQ_SOLICITED, true, true))
		goto out;
	rsge = kwr_sge(&p.b, &buf[1], 0, 64);
	err = kwr_post_recv(&p.b, 3, &rsge, 1);
	atomic_set(&kwr_cq_events, 0);
	if (!err)
		err = ib_req_notify_cq(p.b.cq, IB_CQ_SOLICITED);
	if (!err)
		err = ib_modify_qp(p.b.qp, &attr, IB_QP_STATE);
	if (!check(t, !err, "a receive, arming, moving to ERR: %d", err) ||
	    !kwr_expect(t, &p.b, "b", 3, IB_WC_RECV, IB_WC_WR_FLUSH_ERR, &wc))
		goto out;
	/* The event may follow the entry: irq_work calls the handler. */
	msleep(100);
	if (!check(t, atomic_read(&kwr_cq_events) == 1,
		   "armed solicited, a flushed receive: %d events, expected 1",
		   atomic_read(&kwr_cq_events)))
		goto out;
	pr_info("%s: pass\n", t);
out:
	kwr_pair_destroy(&p);
	kwr_buf_free(&buf[0]);
	kwr_buf_free(&buf[1]);
}

static int kwr_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int err = ib_query_qp(qp, &attr, IB_QP_STATE, &init);

	return err ?: attr.qp_state;
}

/* Back to RTS from whatever state a round left a's QP in. */
static int kwr_reconnect(struct kwr_pair *p)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int err = ib_modify_qp(p->a.qp, &attr, IB_QP_STATE);

	return err ?: kwr_connect_one(&p->a, &p->b);
}

/*
 * One round: a SEND with a bad lkey, which the requester fails the QP
 * over, and after @delay_us a move from RTS to SQD and back.  Whatever the
 * order, the SEND completes with its error and the QP ends in ERR: a move
 * that comes after the failure is refused, one that comes first leaves
 * the SEND waiting in SQD until the QP is back in RTS.
 */
static bool kwr_race_round(const char *t, struct kwr_pair *p,
			   struct ib_sge *bad, u64 wr_id, unsigned int delay_us,
			   unsigned int *refused)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_SQD };
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_SEND,
		.sg_list = bad,
		.num_sge = 1,
	};
	int err, state;

	err = kwr_post(&p->a, &wr);
	if (!check(t, !err, "round %llu: posting: %d", wr_id, err))
		return false;
	udelay(delay_us);
	err = ib_modify_qp(p->a.qp, &attr, IB_QP_STATE);
	if (!err) {
		attr.qp_state = IB_QPS_RTS;
		err = ib_modify_qp(p->a.qp, &attr, IB_QP_STATE);
	}
	if (err)
		(*refused)++;
	if (!kwr_expect(t, &p->a, "a", wr_id, IB_WC_SEND, IB_WC_LOC_PROT_ERR,
			NULL))
		return false;
	state = kwr_qp_state(p->a.qp);
	return check(t, state == IB_QPS_ERR,
		     "round %llu (%u us): the SEND failed but the QP is in state %d (modify: %d)",
		     wr_id, delay_us, state, err);
}

static void test_modify_races_error(void)
{
	const char *t = "modify_races_error";
	unsigned int i, refused = 0;
	struct kwr_buf buf = {};
	struct ib_sge bad;
	struct kwr_pair p;
	int err;

	if (!kwr_pair_create(t, &p, 0))
		return;
	if (!kwr_buf_alloc(t, &buf, p.a.ibdev, 64))
		goto out;
	bad = kwr_sge(&p.a, &buf, 0, 64);
	bad.lkey ^= 0x5a00;
	for (i = 0; i < KWR_RACE_ROUNDS; i++) {
		if (!kwr_race_round(t, &p, &bad, 100 + i, i % 100, &refused))
			goto out;
		err = kwr_reconnect(&p);
		if (!check(t, !err, "round %u: back to RTS: %d", i, err))
			goto out;
	}
	pr_info("%s: %u rounds, %u moves refused after the failure\n", t,
		KWR_RACE_ROUNDS, refused);
	pr_info("%s: pass\n", t);
out:
	kwr_pair_destroy(&p);
	kwr_buf_free(&buf);
}

static struct ib_device *kwr_get_device(const char *name)
{
	struct ib_device *ibdev = kmod_dev_get(name);

	if (!ibdev) {
		pr_err("device: FAIL no device %s\n", name);
		return NULL;
	}
	if (!ibdev->ops.owner || strcmp(module_name(ibdev->ops.owner),
					"sroce")) {
		pr_err("device: FAIL %s is not an sroce device\n", name);
		ib_device_put(ibdev);
		return NULL;
	}
	return ibdev;
}

/* Say which GID a QP on @ibdev will use. */
static void kwr_describe(const char *role, struct ib_device *ibdev)
{
	struct kwr_end e = { .ibdev = ibdev };

	if (kwr_find_gid(&e))
		pr_info("%s: %s has no %s RoCE v2 GID\n", role, ibdev->name,
			ipv6 ? "global IPv6" : "IPv4");
	else
		pr_info("%s: %s GID %u %pI6\n", role, ibdev->name,
			e.sgid_index, e.gid.raw);
}

static int __init sroce_kwr_test_init(void)
{
	dev_a = kwr_get_device(dev);
	if (!dev_a)
		return -ENODEV;
	dev_b = kwr_get_device(peer ?: dev);
	if (!dev_b) {
		ib_device_put(dev_a);
		return -ENODEV;
	}
	kwr_describe("requester", dev_a);
	kwr_describe("responder", dev_b);
	test_send_recv();
	test_cq_arm();
	test_dma_mr();
	test_fastreg("fastreg_pages", 8, 0, PAGE_SIZE, 0, 0);
	test_fastreg("fastreg_sg_offsets", 5, 0, PAGE_SIZE, 1000, 500);
	test_fastreg("fastreg_16k_pages", 3, 2, 4 * PAGE_SIZE, 0, 0);
	test_fastreg("fastreg_1m", KWR_FR_PAGES, 0, PAGE_SIZE, 0, 0);
	test_local_inv_and_rotate();
	test_write_after_local_inv();
	test_send_with_inv();
	test_atomics();
	test_atomic_write();
	test_flush();
	test_remote_access_errors();
	test_local_errors();
	test_post_err_any_context();
	test_modify_races_error();
	ib_device_put(dev_b);
	ib_device_put(dev_a);
	pr_info("%d failed\n", failures);
	return failures ? -EIO : 0;
}

static void __exit sroce_kwr_test_exit(void)
{
}

module_init(sroce_kwr_test_init);
module_exit(sroce_kwr_test_exit);

MODULE_DESCRIPTION("Kernel work-request tests for sroce devices");
MODULE_LICENSE("Dual BSD/GPL");
