// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mem.c - every access to registered memory: checking an access against a
 * region, copying into and out of a region or a scatter/gather list, and
 * atomic operations.
 *
 * All data movement goes through sroce_mr_copy() (one region, by address)
 * and sroce_sge_copy() (a scatter/gather list), so that new kinds of memory
 * (fast registration, on-demand paging) slot in under one interface.  The
 * regions themselves, their keys and lookups are mr.c's.
 */
#include <linux/highmem.h>
#include <linux/libnvdimm.h>
#include <linux/skbuff.h>

#include "sroce.h"

/* What sroce_mr_check() reads of a region. */
struct sroce_mr_view {
	bool valid;
	u32 access;
	u64 iova;
	u64 length;
};

/*
 * Only a fast-registration region's view changes on the data path: the
 * lock is taken for those alone; the others' never changes after
 * publication.
 */
static struct sroce_mr_view sroce_mr_view(struct sroce_mr *mr)
{
	struct sroce_mr_view v;
	unsigned long flags;

	if (mr->type != SROCE_MR_FAST_REG)
		return (struct sroce_mr_view){ mr->valid, mr->access, mr->iova,
					       mr->length };
	spin_lock_irqsave(&mr->lock, flags);
	v = (struct sroce_mr_view){ mr->valid, mr->access, mr->iova,
				    mr->length };
	spin_unlock_irqrestore(&mr->lock, flags);
	return v;
}

/**
 * sroce_mr_check() - may this access use this region?
 * @mr: the region
 * @pd: the PD of the QP making the access
 * @iova: the first address accessed
 * @len: bytes accessed
 * @access: IB_ACCESS_* needed (0 for a local read)
 *
 * Context: Any context.
 * Return: 0, or -EACCES for another PD, missing rights or an invalid
 * region, -ERANGE for addresses outside the region.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   u32 access)
{
	struct sroce_mr_view v;

	if (mr->ibmr.pd != pd)
		return -EACCES;
	v = sroce_mr_view(mr);
	if (!v.valid || (v.access & access) != access)
		return -EACCES;
	if (iova < v.iova || iova - v.iova > v.length ||
	    len > v.length - (iova - v.iova))
		return -ERANGE;
	return 0;
}

static void sroce_copy_chunk(void *mem, void *buf, u32 len,
			     enum sroce_copy_dir dir)
{
	if (dir == SROCE_TO_MR)
		memcpy(mem, buf, len);
	else
		memcpy(buf, mem, len);
}

static void sroce_mr_copy_user(struct sroce_mr *mr, u64 iova, void *buf,
			       u32 len, enum sroce_copy_dir dir)
{
	u64 off = iova - mr->iova + mr->page_offset;
	unsigned long idx = off >> PAGE_SHIFT;
	unsigned int poff = off & ~PAGE_MASK;
	unsigned int chunk;
	void *va;

	while (len) {
		chunk = min_t(u32, len, PAGE_SIZE - poff);
		va = kmap_local_page(mr->pages[idx]);
		sroce_copy_chunk(va + poff, buf, chunk, dir);
		kunmap_local(va);
		buf += chunk;
		len -= chunk;
		poff = 0;
		idx++;
	}
}

/*
 * The kernel virtual address of @iova in a fast-registration region, and
 * how many bytes from it lie in the same page.  The page index is bounded
 * by the page array's size, so a mapping changed under a racing access
 * yields wrong bytes at worst, never memory outside the array.
 */
static void *sroce_mr_fr_addr(struct sroce_mr *mr, u64 iova, u32 *room)
{
	u64 page_size = 1ULL << mr->fr_page_shift;
	u64 base = mr->iova & ~(page_size - 1);
	u64 off = iova - base;
	u64 idx = off >> mr->fr_page_shift;

	lockdep_assert_held(&mr->lock);
	if (iova < base || idx >= mr->fr_npages)
		return NULL;
	*room = page_size - (off & (page_size - 1));
	return (void *)(uintptr_t)(mr->fr_pages[idx] + (off & (page_size - 1)));
}

/*
 * Hand @len bytes of a fast-registration region from @iova to @fn, piece
 * by piece (@va, @chunk bytes within one page of the region), under the
 * region's lock.  Its pages belong to a kernel ULP, which may free them
 * once an invalidation completes: holding the lock, a walk either
 * finishes before the invalidation or finds the region invalid.  (At most
 * a packet's worth is walked at a time.)  Stops at @fn's first error.
 */
static int sroce_mr_walk_fr(struct sroce_mr *mr, u64 iova, u32 len,
			    int (*fn)(void *va, u32 chunk, void *arg),
			    void *arg)
{
	unsigned long flags;
	u32 chunk, room;
	int err = 0;
	void *va;

	spin_lock_irqsave(&mr->lock, flags);
	if (!mr->valid)
		err = -EACCES;
	while (!err && len) {
		va = sroce_mr_fr_addr(mr, iova, &room);
		if (!va) {
			err = -ERANGE;
			break;
		}
		chunk = min(len, room);
		err = fn(va, chunk, arg);
		iova += chunk;
		len -= chunk;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/* Where a copy through sroce_mr_walk_fr() stands: the kernel buffer. */
struct sroce_fr_copy {
	void *buf;
	enum sroce_copy_dir dir;
};

static int sroce_fr_copy_chunk(void *va, u32 chunk, void *arg)
{
	struct sroce_fr_copy *c = arg;

	sroce_copy_chunk(va, c->buf, chunk, c->dir);
	c->buf += chunk;
	return 0;
}

static int sroce_mr_copy_fr(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
			    enum sroce_copy_dir dir)
{
	struct sroce_fr_copy c = { .buf = buf, .dir = dir };

	return sroce_mr_walk_fr(mr, iova, len, sroce_fr_copy_chunk, &c);
}

/**
 * sroce_mr_copy() - move data into or out of a region
 * @qp: the QP the copy is for (an on-demand region queues a fault there)
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: the first address
 * @buf: kernel buffer
 * @len: bytes
 * @dir: which way
 *
 * Context: Any context.
 * Return: 0; for a fast-registration region -EACCES if it has been
 * invalidated since the check, -ERANGE if its mapping has no such page;
 * for an on-demand region -EAGAIN while a page is being faulted in,
 * -EFAULT where the process has no memory (sroce_odp_copy()).
 */
int sroce_mr_copy(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		  void *buf, u32 len, enum sroce_copy_dir dir)
{
	if (!len)
		return 0;
	if (mr->type == SROCE_MR_FAST_REG)
		return sroce_mr_copy_fr(mr, iova, buf, len, dir);
	if (mr->type == SROCE_MR_ODP)
		return sroce_odp_copy(qp, mr, iova, buf, len, dir);
	if (mr->type == SROCE_MR_DMA)
		sroce_copy_chunk((void *)(uintptr_t)iova, buf, len, dir);
	else if (mr->type == SROCE_MR_DM)
		sroce_copy_chunk(mr->dm_buf + (iova - mr->iova), buf, len, dir);
	else
		sroce_mr_copy_user(mr, iova, buf, len, dir);
	return 0;
}

/**
 * sroce_mr_flush() - what a FLUSH does to a region's memory
 * @mr: the region; the caller checked the range and the rights the
 *	placement type needs with sroce_mr_check()
 * @iova: the first address
 * @len: bytes
 * @type: enum sroce_flush_type
 *
 * Every store the responder made before is visible to every CPU once the
 * barrier is passed (global visibility: nothing of sroce's is cached
 * elsewhere).  Persistence also writes the range's CPU cache lines back to
 * the persistent memory under them, which a region has only when it has
 * SROCE_MR_FLUSH_PERSISTENT (sroce_mr_flush_rights_ok(): pinned pages of
 * persistent memory).
 *
 * Context: Any context.
 */
void sroce_mr_flush(struct sroce_mr *mr, u64 iova, u64 len, u8 type)
{
	u64 off = iova - mr->iova + mr->page_offset;
	unsigned long idx = off >> PAGE_SHIFT;
	unsigned int poff = off & ~PAGE_MASK;
	unsigned int chunk;
	void *va;

	/* Earlier requests' stores before the answer that reports them. */
	smp_mb();
	if (!(type & SROCE_FLUSH_PERSISTENT) || mr->type != SROCE_MR_USER)
		return;
	while (len && idx < mr->npages) {
		chunk = min_t(u64, len, PAGE_SIZE - poff);
		va = kmap_local_page(mr->pages[idx]);
		arch_wb_cache_pmem(va + poff, chunk);
		kunmap_local(va);
		len -= chunk;
		poff = 0;
		idx++;
	}
	/* The write-backs done (CLWB/CLFLUSHOPT are weakly ordered). */
	wmb();
}

/**
 * sroce_atomic_do() - an atomic operation on an aligned word
 * @p: the word
 * @op: which operation
 * @compare_add: the compare value, or the addend
 * @swap: the swap value, or the value an atomic write stores
 *
 * Context: Any context.
 * Return: what was there (0 for an atomic write).
 */
u64 sroce_atomic_do(u64 *p, enum sroce_atomic_op op, u64 compare_add, u64 swap)
{
	switch (op) {
	case SROCE_ATOMIC_CMP_SWAP:
		return cmpxchg64(p, compare_add, swap);
	case SROCE_ATOMIC_FETCH_ADD:
		return atomic64_fetch_add(compare_add, (atomic64_t *)p);
	default:
		atomic64_set_release((atomic64_t *)p, swap);
		return 0;
	}
}

/**
 * sroce_mr_atomic() - an atomic operation on a region's memory
 * @qp: the QP it is for (an on-demand region queues a fault there)
 * @mr: the region; the caller checked the 8 bytes with sroce_mr_check()
 * @iova: the 8-byte aligned address
 * @op: which operation
 * @compare_add: the compare value, or the addend
 * @swap: the swap value, or the value an atomic write stores
 * @orig: the value before the operation (0 for an atomic write)
 *
 * The operation is a CPU atomic instruction on the memory, so it is atomic
 * against every other sroce atomic on any QP and against the CPU's own.
 * An atomic write is one 8-byte store with release order: whoever sees it
 * sees what the QP placed in memory before it.
 *
 * Context: Any context.
 * Return: 0, -EINVAL for an unaligned address; for a fast-registration
 * region -EACCES if it has been invalidated since the check, -ERANGE
 * outside its mapping; for an on-demand region as sroce_mr_copy().
 */
int sroce_mr_atomic(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		    enum sroce_atomic_op op, u64 compare_add, u64 swap,
		    u64 *orig)
{
	u64 off = iova - mr->iova + mr->page_offset;
	unsigned long flags;
	void *va = NULL;
	int err = 0;
	u32 room;
	u64 *p;

	if (iova & 7)
		return -EINVAL;
	if (mr->type == SROCE_MR_ODP)
		return sroce_odp_atomic(qp, mr, iova, op, compare_add, swap,
					orig);
	if (mr->type == SROCE_MR_FAST_REG) {
		/* As sroce_mr_walk_fr(): not after an invalidation. */
		spin_lock_irqsave(&mr->lock, flags);
		p = mr->valid ? sroce_mr_fr_addr(mr, iova, &room) : NULL;
		if (!mr->valid)
			err = -EACCES;
		else if (!p || room < sizeof(*p))
			err = -ERANGE;
		else
			*orig = sroce_atomic_do(p, op, compare_add, swap);
		spin_unlock_irqrestore(&mr->lock, flags);
		return err;
	}
	if (mr->type == SROCE_MR_DMA) {
		p = (u64 *)(uintptr_t)iova;
	} else if (mr->type == SROCE_MR_DM) {
		/* The region may begin at any offset in the memory. */
		p = mr->dm_buf + (iova - mr->iova);
		if ((uintptr_t)p & 7)
			return -EINVAL;
	} else {
		va = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
		p = va + (off & ~PAGE_MASK);
	}
	*orig = sroce_atomic_do(p, op, compare_add, swap);
	if (va)
		kunmap_local(va);
	return 0;
}

static int sroce_sge_copy_one(struct sroce_qp *qp, struct ib_pd *pd,
			      const struct sroce_sge *sge, u32 off, void *buf,
			      u32 len, enum sroce_copy_dir dir)
{
	u32 access = dir == SROCE_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	struct sroce_mr *mr;
	int err;

	if (sge->lkey == SROCE_LOCAL_DMA_LKEY && !qp->is_user) {
		sroce_copy_chunk((void *)(uintptr_t)(sge->addr + off), buf, len,
				 dir);
		return 0;
	}
	mr = sroce_mr_get(sroce_qp_dev(qp), sge->lkey);
	if (!mr)
		return -EINVAL;
	err = sroce_mr_check(mr, pd, sge->addr + off, len, access);
	if (!err)
		err = sroce_mr_copy(qp, mr, sge->addr + off, buf, len, dir);
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_sge_copy() - move data into or out of a scatter/gather list
 * @qp: the QP whose work request the list belongs to
 * @pd: the PD its keys must belong to: the QP's, or for the receive work
 *	requests of an XRC target, resp.pd
 * @sge: the list
 * @num_sge: entries in @sge
 * @offset: bytes of the list to skip first
 * @buf: kernel buffer
 * @len: bytes to move
 * @dir: which way
 *
 * Every key is looked up and checked (PD, local write access for
 * SROCE_TO_MR, bounds); the reserved local DMA lkey is honoured for kernel
 * QPs only.
 *
 * Context: Any context.
 * Return: 0, -EINVAL for a bad key, -EACCES or -ERANGE for a violation,
 * -EMSGSIZE if the list is shorter than @offset + @len; -EAGAIN or -EFAULT
 * for on-demand memory (sroce_mr_copy()).
 */
int sroce_sge_copy(struct sroce_qp *qp, struct ib_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u32 offset,
		   void *buf, u32 len, enum sroce_copy_dir dir)
{
	u32 i, chunk;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min(len, sge[i].length - offset);
		err = sroce_sge_copy_one(qp, pd, &sge[i], offset, buf, chunk,
					 dir);
		if (err)
			return err;
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? -EMSGSIZE : 0;
}

/* Pages of a user region that @len bytes from @iova touch. */
static unsigned long sroce_mr_span(const struct sroce_mr *mr, u64 iova,
				   u32 len)
{
	u64 off = iova - mr->iova + mr->page_offset;

	return ((off & ~PAGE_MASK) + len + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/**
 * sroce_mr_attachable() - may these bytes of a region go out as its pages?
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: the first address
 * @len: bytes
 *
 * Pinned user memory and a kernel ULP's memory (DMA and fast-registration
 * regions) are attached, from SROCE_ZCOPY_MIN bytes on (fewer are cheaper
 * to copy); on-demand pages can be unmapped under a packet, and device
 * memory is not in pages.  Of a ULP's memory only pages that may be
 * referenced on their own are taken (sroce_kva_attach()): the answer for
 * those is known only when they are attached.
 *
 * Context: Any context.
 * Return: true if sroce_mr_attach() may take them into an skb with no
 * fragments yet.
 */
bool sroce_mr_attachable(const struct sroce_mr *mr, u64 iova, u32 len)
{
	if (len < SROCE_ZCOPY_MIN)
		return false;
	if (mr->type == SROCE_MR_USER)
		return sroce_mr_span(mr, iova, len) < MAX_SKB_FRAGS;
	return mr->type == SROCE_MR_DMA || mr->type == SROCE_MR_FAST_REG;
}

/* One more page fragment, referenced, at the end of @skb's payload. */
static void sroce_skb_add_page(struct sk_buff *skb, struct page *page,
			       unsigned int poff, unsigned int len)
{
	get_page(page);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, poff, len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/*
 * Attach @len bytes of kernel memory from @va on, page by page.  Only a
 * page of the kernel's linear map that may be referenced on its own
 * (sendpage_ok(): not slab memory, not a page being freed) is taken: a
 * ULP may hand sroce any memory, a kmalloc() buffer or a vmalloc() one
 * among them, and those the caller copies instead.
 */
static int sroce_kva_attach(unsigned long va, struct sk_buff *skb, u32 len)
{
	unsigned int poff, chunk;
	struct page *page;

	while (len) {
		poff = offset_in_page(va);
		chunk = min_t(u32, len, PAGE_SIZE - poff);
		if (skb_shinfo(skb)->nr_frags + 1 >= MAX_SKB_FRAGS ||
		    !virt_addr_valid((void *)va))
			return -EOPNOTSUPP;
		page = virt_to_page((void *)va);
		if (!sendpage_ok(page))
			return -EOPNOTSUPP;
		sroce_skb_add_page(skb, page, poff, chunk);
		va += chunk;
		len -= chunk;
	}
	return 0;
}

static int sroce_fr_attach_chunk(void *va, u32 chunk, void *arg)
{
	return sroce_kva_attach((unsigned long)va, arg, chunk);
}

/*
 * A fast-registration region's pages, under its lock as for a copy
 * (sroce_mr_walk_fr()): attached before an invalidation, they are
 * referenced, and the ULP freeing them after it does not free them under
 * the packet.
 */
static int sroce_mr_attach_fr(struct sroce_mr *mr, u64 iova,
			      struct sk_buff *skb, u32 len)
{
	return sroce_mr_walk_fr(mr, iova, len, sroce_fr_attach_chunk, skb);
}

static int sroce_mr_attach_user(struct sroce_mr *mr, u64 iova,
				struct sk_buff *skb, u32 len)
{
	u64 off = iova - mr->iova + mr->page_offset;
	unsigned long idx = off >> PAGE_SHIFT;
	unsigned int poff = off & ~PAGE_MASK;
	unsigned int chunk;

	if (skb_shinfo(skb)->nr_frags + sroce_mr_span(mr, iova, len) >=
	    MAX_SKB_FRAGS)
		return -EOPNOTSUPP;
	while (len) {
		chunk = min_t(u32, len, PAGE_SIZE - poff);
		sroce_skb_add_page(skb, mr->pages[idx], poff, chunk);
		len -= chunk;
		poff = 0;
		idx++;
	}
	return 0;
}

/**
 * sroce_mr_attach() - attach bytes of a user region to a packet as page
 *	fragments, referencing each page
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: the first address
 * @skb: the packet, its payload so far in fragments (sroce_tx_alloc()
 *	without a payload buffer)
 * @len: bytes
 *
 * The pages stay until the skb is freed, however soon the region is
 * deregistered and unpinned (or invalidated and its pages freed by the
 * ULP); until then their contents are the payload, so the work request
 * the packet belongs to must not complete before the peer has it.  One
 * fragment is always left for sroce_tx_seal().
 *
 * Context: Any context.
 * Return: 0; -EOPNOTSUPP if the region's memory cannot be attached (a
 * user region's: nothing attached; a ULP's: maybe some, the caller frees
 * the skb) or the skb has too few fragments left; for a fast-registration
 * region -EACCES or -ERANGE as sroce_mr_copy().
 */
int sroce_mr_attach(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		    u32 len)
{
	/* The owner can write them under the packet: not ours. */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	switch (mr->type) {
	case SROCE_MR_USER:
		return sroce_mr_attach_user(mr, iova, skb, len);
	case SROCE_MR_DMA:
		return sroce_kva_attach(iova, skb, len);
	case SROCE_MR_FAST_REG:
		return sroce_mr_attach_fr(mr, iova, skb, len);
	default:
		return -EOPNOTSUPP;
	}
}

static int sroce_sge_attach_one(struct sroce_qp *qp, struct ib_pd *pd,
				const struct sroce_sge *sge, u32 off,
				struct sk_buff *skb, u32 len)
{
	struct sroce_mr *mr;
	int err;

	if (sge->lkey == SROCE_LOCAL_DMA_LKEY)
		return qp->is_user ? -EOPNOTSUPP :
			sroce_kva_attach(sge->addr + off, skb, len);
	mr = sroce_mr_get(sroce_qp_dev(qp), sge->lkey);
	if (!mr)
		return -EINVAL;
	err = sroce_mr_check(mr, pd, sge->addr + off, len, 0);
	if (!err)
		err = sroce_mr_attach(mr, sge->addr + off, skb, len);
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_sge_attach() - send bytes of a scatter/gather list without copying
 *	them: the pages under them become fragments of the packet
 * @qp: the QP whose work request the list belongs to
 * @pd: the PD its keys must belong to
 * @sge: the list
 * @num_sge: entries in @sge
 * @offset: bytes of the list to skip first
 * @skb: the packet, its payload so far in fragments (sroce_tx_alloc()
 *	without a payload buffer)
 * @len: bytes to attach
 *
 * Each key is looked up and checked as for sroce_sge_copy(), then its
 * bytes attached by sroce_mr_attach(), whose rules apply; for a kernel QP
 * the local DMA lkey's bytes are attached as a DMA region's.
 *
 * Context: Any context.
 * Return: 0; -EOPNOTSUPP where memory that cannot be attached is named or
 * the fragments run out (the caller copies instead; @skb has some of the
 * bytes attached and is to be freed); otherwise as sroce_sge_copy().
 */
int sroce_sge_attach(struct sroce_qp *qp, struct ib_pd *pd,
		     const struct sroce_sge *sge, u32 num_sge, u32 offset,
		     struct sk_buff *skb, u32 len)
{
	u32 i, chunk;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min(len, sge[i].length - offset);
		err = sroce_sge_attach_one(qp, pd, &sge[i], offset, skb, chunk);
		if (err)
			return err;
		len -= chunk;
		offset = 0;
	}
	return len ? -EMSGSIZE : 0;
}

/**
 * sroce_sge_prepare() - make sure on-demand memory in a list is present
 *	before an answer is asked to land there
 * @qp: the QP whose READ or atomic the list belongs to
 * @sge: the list
 * @num_sge: entries in @sge
 * @offset: bytes of the list to skip first
 * @len: bytes from there
 *
 * Only on-demand regions are looked at (a key that fails its checks fails
 * when the answer is copied), and no key at all while the device has none
 * (a region registered before the request was posted is counted).
 *
 * Context: Any context.
 * Return: 0, or -EAGAIN or -EFAULT as sroce_odp_prepare().
 */
int sroce_sge_prepare(struct sroce_qp *qp, const struct sroce_sge *sge,
		      u32 num_sge, u32 offset, u32 len)
{
	struct sroce_mr *mr;
	u32 i, chunk;
	int err = 0;

	if (!atomic_read(&sroce_qp_dev(qp)->num_odp_mr))
		return 0;
	for (i = 0; i < num_sge && len && !err; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min(len, sge[i].length - offset);
		mr = sge[i].lkey == SROCE_LOCAL_DMA_LKEY ? NULL :
		     sroce_mr_get(sroce_qp_dev(qp), sge[i].lkey);
		if (mr && mr->type == SROCE_MR_ODP &&
		    !sroce_mr_check(mr, qp->ibqp.pd, sge[i].addr + offset,
				    chunk, IB_ACCESS_LOCAL_WRITE))
			err = sroce_odp_prepare(qp, mr, sge[i].addr + offset,
						chunk);
		if (mr)
			sroce_mr_put(mr);
		len -= chunk;
		offset = 0;
	}
	return err;
}
