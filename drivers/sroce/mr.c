// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr.c - memory regions and every access to registered memory.
 *
 * All data movement goes through sroce_mr_copy() (one region, by address)
 * and sroce_sge_copy() (a scatter/gather list), so that new kinds of memory
 * (fast registration, on-demand paging) slot in under one interface.
 *
 * Keys are (index << 8) | key byte, the index naming the region in the
 * device's mr_pool; index 0 is never used, so no key is ever
 * SROCE_LOCAL_DMA_LKEY.  A lookup (sroce_mr_get()) takes a reference under
 * RCU; deregistration unpublishes the region, waits for the references to
 * go, and frees it after an RCU grace period.
 */
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return NULL;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	mr->access = access;
	mr->ibmr.pd = ibpd;
	return mr;
}

/* Publish a complete region under a new key. */
static int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	u32 index;
	int err;

	err = sroce_pool_add(&sdev->mr_pool, mr, &index, GFP_KERNEL);
	if (err)
		return err;
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	sroce_obj_created(SROCE_OBJ_MR);
	return 0;
}

/**
 * sroce_get_dma_mr() - ib_device_ops.get_dma_mr
 * @ibpd: the PD
 * @access: IB_ACCESS_* flags
 *
 * A region over all kernel virtual memory, for kernel PDs.
 *
 * Context: Process context. May sleep.
 * Return: the region, or an ERR_PTR.
 */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mr_alloc(ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SROCE_MR_DMA;
	mr->length = U64_MAX;
	err = sroce_mr_publish(to_sdev(ibpd->device), mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int sroce_mr_pin(struct sroce_mr *mr, struct ib_device *ibdev,
			u64 start, u64 length, int access)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(mr->umem))
		return PTR_ERR(mr->umem);
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ib_umem_release(mr->umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	mr->page_offset = ib_umem_offset(mr->umem);
	return 0;
}

static void sroce_mr_unpin(struct sroce_mr *mr)
{
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
}

/**
 * sroce_reg_user_mr() - ib_device_ops.reg_user_mr
 * @ibpd: the PD
 * @start: the first user address
 * @length: bytes
 * @iova: the address the region is known by (often @start)
 * @access: IB_ACCESS_* flags, already checked by the core
 * @udata: no driver data
 *
 * Context: Process context. May sleep.
 * Return: the region, or an ERR_PTR (-EFAULT for memory that cannot be
 * pinned, -ENOMEM also past RLIMIT_MEMLOCK or max_mr).
 */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_udata_none(udata);
	if (err)
		return ERR_PTR(err);
	if (!length || iova + length < iova)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SROCE_MR_USER;
	mr->iova = iova;
	mr->length = length;
	err = sroce_mr_pin(mr, ibpd->device, start, length, access);
	if (err)
		goto err_free;
	err = sroce_mr_publish(to_sdev(ibpd->device), mr);
	if (err)
		goto err_unpin;
	return &mr->ibmr;

err_unpin:
	sroce_mr_unpin(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * sroce_dereg_mr() - ib_device_ops.dereg_mr
 * @ibmr: the region
 * @udata: unused
 *
 * Unpublishes the key, then waits until no packet is using the region; a
 * reference is only ever held for the length of one copy.
 *
 * Context: Process context. May sleep.
 * Return: 0.
 */
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	sroce_pool_remove(&sdev->mr_pool, ibmr->lkey >> 8);
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	if (mr->type == SROCE_MR_USER)
		sroce_mr_unpin(mr);
	sroce_obj_destroyed(SROCE_OBJ_MR);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * sroce_mr_get() - find a region by key and take a reference
 * @sdev: the device
 * @key: an lkey or rkey
 *
 * Context: Any context.
 * Return: the region, or NULL if no live region has exactly this key.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = sroce_pool_lookup_rcu(&sdev->mr_pool, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * sroce_mr_put() - drop a reference from sroce_mr_get()
 * @mr: the region
 *
 * Context: Any context.
 */
void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
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
 * Return: 0, or -EACCES for another PD or missing rights, -ERANGE for
 * addresses outside the region.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   u32 access)
{
	if (mr->ibmr.pd != pd || (mr->access & access) != access)
		return -EACCES;
	if (iova < mr->iova || iova - mr->iova > mr->length ||
	    len > mr->length - (iova - mr->iova))
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

/**
 * sroce_mr_copy() - move data into or out of a region
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: the first address
 * @buf: kernel buffer
 * @len: bytes
 * @dir: which way
 *
 * Context: Any context.
 * Return: 0.
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir)
{
	if (!len)
		return 0;
	if (mr->type == SROCE_MR_DMA)
		sroce_copy_chunk((void *)(uintptr_t)iova, buf, len, dir);
	else
		sroce_mr_copy_user(mr, iova, buf, len, dir);
	return 0;
}

/**
 * sroce_mr_atomic() - an atomic operation on a region's memory
 * @mr: the region; the caller checked the 8 bytes with sroce_mr_check()
 * @iova: the 8-byte aligned address
 * @cmp_swap: compare-and-swap, else fetch-and-add
 * @compare_add: the compare value, or the addend
 * @swap: the swap value
 * @orig: the value before the operation
 *
 * The operation is a CPU atomic instruction on the memory, so it is atomic
 * against every other sroce atomic on any QP and against the CPU's own.
 *
 * Context: Any context.
 * Return: 0, or -EINVAL for an unaligned address.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, bool cmp_swap,
		    u64 compare_add, u64 swap, u64 *orig)
{
	u64 off = iova - mr->iova + mr->page_offset;
	void *va = NULL;
	u64 *p;

	if (iova & 7)
		return -EINVAL;
	if (mr->type == SROCE_MR_DMA) {
		p = (u64 *)(uintptr_t)iova;
	} else {
		va = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
		p = va + (off & ~PAGE_MASK);
	}
	if (cmp_swap)
		*orig = cmpxchg64(p, compare_add, swap);
	else
		*orig = atomic64_fetch_add(compare_add, (atomic64_t *)p);
	if (va)
		kunmap_local(va);
	return 0;
}

static int sroce_sge_copy_one(struct sroce_qp *qp, const struct sroce_sge *sge,
			      u32 off, void *buf, u32 len,
			      enum sroce_copy_dir dir)
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
	err = sroce_mr_check(mr, qp->ibqp.pd, sge->addr + off, len, access);
	if (!err)
		err = sroce_mr_copy(mr, sge->addr + off, buf, len, dir);
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_sge_copy() - move data into or out of a scatter/gather list
 * @qp: the QP whose work request the list belongs to
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
 * -EMSGSIZE if the list is shorter than @offset + @len.
 */
int sroce_sge_copy(struct sroce_qp *qp, const struct sroce_sge *sge,
		   u32 num_sge, u32 offset, void *buf, u32 len,
		   enum sroce_copy_dir dir)
{
	u32 i, chunk;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min(len, sge[i].length - offset);
		err = sroce_sge_copy_one(qp, &sge[i], offset, buf, chunk, dir);
		if (err)
			return err;
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? -EMSGSIZE : 0;
}
