// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr.c - memory regions: registration, keys, lookups, deregistration and
 * fast registration.  Moving data into and out of registered memory is
 * mem.c's.
 *
 * Keys are (index << 8) | key byte, the index naming the region in the
 * device's mr_pool (memory windows have indices of their own, mw.c); index
 * 0 is never used, so no key is ever SROCE_LOCAL_DMA_LKEY.  A lookup
 * (sroce_mr_get()) takes a reference under RCU; deregistration unpublishes
 * the region, waits for the references to go, and frees it after an RCU
 * grace period.
 *
 * Fast-registration regions (kernel ULPs) are created empty, given pages by
 * ib_map_mr_sg() and made valid, under a key, by an IB_WR_REG_MR work
 * request; IB_WR_LOCAL_INV or a remote SEND with Invalidate makes them
 * invalid again.
 */
#include <linux/capability.h>
#include <linux/ioport.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/ib_umem.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "sroce.h"

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;

	mr = kzalloc(sizeof(*mr), SROCE_GFP_OBJ);
	if (!mr)
		return NULL;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	mr->access = access;
	mr->ibmr.pd = ibpd;
	mr->valid = true;
	return mr;
}

/* Publish a complete region under a new key. */
static int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	u32 index;
	int err;

	err = sroce_pool_add(&sdev->mr_pool, mr, &index, SROCE_GFP_OBJ);
	if (err)
		return err;
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	sroce_obj_created(SROCE_OBJ_MR);
	return 0;
}

/* Whether @page lies in memory the platform describes as persistent. */
static bool sroce_page_is_pmem(struct page *page)
{
	return region_intersects(page_to_phys(page), PAGE_SIZE, IORESOURCE_MEM,
				 IORES_DESC_PERSISTENT_MEMORY) ==
	       REGION_INTERSECTS;
}

/**
 * sroce_mr_flush_rights_ok() - may a region have the FLUSH rights asked?
 * @mr: the region, built but not published (a fast-registration region:
 *	being registered)
 * @access: the rights it is to have
 *
 * SROCE_MR_FLUSH_GLOBAL fits any region.  SROCE_MR_FLUSH_PERSISTENT only a
 * user region over pinned persistent memory, every page of it: a FLUSH
 * asking for persistence is answered only once the data is there.
 *
 * Context: Process context (a fast-registration region: any context).
 * Return: 0, or -EINVAL for persistence asked over memory that has none
 * (or that sroce cannot check: on-demand paging, device memory, the DMA
 * region, fast registration).
 */
int sroce_mr_flush_rights_ok(struct sroce_mr *mr, u32 access)
{
	unsigned long i;

	if (!(access & SROCE_MR_FLUSH_PERSISTENT))
		return 0;
	if (mr->type != SROCE_MR_USER)
		return -EINVAL;
	for (i = 0; i < mr->npages; i++)
		if (!sroce_page_is_pmem(mr->pages[i]))
			return -EINVAL;
	return 0;
}

/*
 * The rights a user region gets: the command's, and those of sroce's
 * driver data (struct sroce_reg_mr_req), which carries the FLUSH rights
 * that uverbs before 6.2 refuses in the command.
 */
static int sroce_mr_user_access(struct ib_udata *udata, int *access)
{
	struct sroce_reg_mr_req req = {};
	int err;

	if (!udata)
		return 0;
	err = sroce_udata_in(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.reserved || (req.flush_access & ~SROCE_MR_FLUSH_RIGHTS))
		return -EINVAL;
	*access |= req.flush_access;
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

	if (access & SROCE_MR_FLUSH_PERSISTENT)
		return ERR_PTR(-EINVAL);
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

	mr->umem = sroce_umem_get(ibdev, start, length, access);
	if (IS_ERR(mr->umem))
		return PTR_ERR(mr->umem);
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), SROCE_GFP_SIZED);
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

/* Give back what a user region holds: pinned pages, or on-demand memory. */
static void sroce_mr_unpin(struct sroce_mr *mr)
{
	if (mr->type == SROCE_MR_ODP) {
		sroce_odp_mr_release(mr);
		return;
	}
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
}

/*
 * A user region, not yet published: over pinned memory, or with
 * IB_ACCESS_ON_DEMAND over memory paged in as accesses need it (odp.c;
 * address 0 and length U64_MAX: the whole address space).
 */
static struct sroce_mr *sroce_user_mr_build(struct ib_pd *ibpd, u64 start,
					    u64 length, u64 iova, int access)
{
	bool odp = access & IB_ACCESS_ON_DEMAND;
	struct sroce_mr *mr;
	int err;

	if (!length || (iova + length < iova && !(odp && length == U64_MAX)))
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = odp ? SROCE_MR_ODP : SROCE_MR_USER;
	mr->iova = iova;
	mr->length = length;
	if (odp)
		err = sroce_odp_mr_init(mr, ibpd->device, start, access);
	else
		err = sroce_mr_pin(mr, ibpd->device, start, length, access);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	err = sroce_mr_flush_rights_ok(mr, access);
	if (err) {
		sroce_mr_unpin(mr);
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr;
}

/**
 * sroce_reg_user_mr() - ib_device_ops.reg_user_mr
 * @ibpd: the PD
 * @start: the first user address
 * @length: bytes
 * @iova: the address the region is known by (often @start)
 * @access: IB_ACCESS_* flags, already checked by the core
 * @udata: struct sroce_reg_mr_req (the FLUSH rights), or none
 *
 * With IB_ACCESS_ON_DEMAND nothing is pinned (odp.c); with it, address 0
 * and length U64_MAX register the whole address space (implicit on-demand
 * paging).
 *
 * Context: Process context. May sleep.
 * Return: the region, or an ERR_PTR (-EFAULT for memory that cannot be
 * pinned, -ENOMEM also past RLIMIT_MEMLOCK or max_mr, -EINVAL for
 * SROCE_MR_FLUSH_PERSISTENT over memory that is not persistent).
 */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_user_access(udata, &access);
	if (err)
		return ERR_PTR(err);
	mr = sroce_user_mr_build(ibpd, start, length, iova, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = sroce_mr_publish(to_sdev(ibpd->device), mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	sroce_mr_unpin(mr);
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * sroce_reg_dm_mr() - ib_device_ops.reg_dm_mr
 * @ibpd: the PD
 * @ibdm: the device memory (dm.c)
 * @attr: the offset and length in it (the core checked them against its
 *	length), IB_ACCESS_* flags with IB_ZERO_BASED (the core requires it)
 * @attrs: no driver attributes
 *
 * A zero-based region over part of device memory: its address 0 is
 * @attr->offset in the memory, which it keeps until it is deregistered.
 * An empty one is a region no access fits in (hardware takes those too).
 *
 * Context: Process context. May sleep.
 * Return: the region, or an ERR_PTR: -EINVAL for device memory being
 * freed, -ENOMEM without memory or past max_mr.
 */
struct ib_mr *sroce_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct sroce_mr *mr;
	int err;

	if (attr->access_flags & SROCE_MR_FLUSH_PERSISTENT)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(ibpd, attr->access_flags);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SROCE_MR_DM;
	mr->length = attr->length;
	mr->ibmr.length = attr->length;
	mr->dm_map = sroce_dm_map_get(ibdm);
	if (!mr->dm_map) {
		err = -EINVAL;
		goto err_free;
	}
	mr->dm_buf = mr->dm_map->buf + attr->offset;
	err = sroce_mr_publish(to_sdev(ibpd->device), mr);
	if (err)
		goto err_put_map;
	return &mr->ibmr;

err_put_map:
	sroce_dm_map_put(mr->dm_map);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * Begin the end of @mr unless windows are bound to it: from here on no
 * window can be bound.  Return: 0, or -EBUSY.
 */
static int sroce_mr_set_dying(struct sroce_mr *mr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->mw_binds)
		err = -EBUSY;
	else
		mr->dying = true;
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/**
 * sroce_mr_bind_get() - count a window being bound to @mr
 * @mr: the region, referenced by the caller
 *
 * Context: Any context. The caller may hold the window's lock.
 * Return: false if the region is being deregistered.
 */
bool sroce_mr_bind_get(struct sroce_mr *mr)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mr->lock, flags);
	ok = !mr->dying;
	if (ok)
		mr->mw_binds++;
	spin_unlock_irqrestore(&mr->lock, flags);
	return ok;
}

/**
 * sroce_mr_bind_put() - undo sroce_mr_bind_get() when the window unbinds
 * @mr: the region
 *
 * Context: Any context.
 */
void sroce_mr_bind_put(struct sroce_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->mw_binds--;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/**
 * sroce_dereg_mr() - ib_device_ops.dereg_mr
 * @ibmr: the region
 * @udata: unused
 *
 * Refuses while memory windows are bound to the region, as the verbs
 * require (process teardown retries after the windows are gone).
 * Otherwise unpublishes the key, then waits until no packet is using the
 * region; a reference is only ever held for the length of one copy.
 *
 * Context: Process context. May sleep.
 * Return: 0, or -EBUSY with windows bound.
 */
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);
	int err;

	err = sroce_mr_set_dying(mr);
	if (err)
		return err;
	if (!mr->replaced)
		sroce_pool_remove(&sdev->mr_pool, mr->key >> 8);
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	if (mr->type == SROCE_MR_USER || mr->type == SROCE_MR_ODP)
		sroce_mr_unpin(mr);
	else if (mr->type == SROCE_MR_DM)
		sroce_dm_map_put(mr->dm_map);
	kfree(mr->fr_pages);
	sroce_obj_destroyed(SROCE_OBJ_MR);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * sroce_rereg_user_mr() - ib_device_ops.rereg_user_mr
 * @ibmr: the region
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: IB_MR_REREG_TRANS: the first user address
 * @length: IB_MR_REREG_TRANS: bytes
 * @iova: IB_MR_REREG_TRANS: the address the region is known by
 * @access: IB_MR_REREG_ACCESS: IB_ACCESS_* flags, checked by the core
 * @ibpd: the PD the region is to have (its own unless IB_MR_REREG_PD)
 * @udata: IB_MR_REREG_ACCESS: struct sroce_reg_mr_req (the FLUSH rights),
 *	or none; else none
 *
 * Builds a new region with the new translation, PD and rights and the
 * unchanged rest (re-pinning the same memory if the translation stays),
 * and publishes it under the old region's keys, which applications expect
 * to stay; the core then deregisters the old region.  That stops taking
 * binds at once, so its deregistration cannot fail.  Packets already
 * using the old region finish on it (its memory stays pinned until then);
 * later ones find the new one.
 *
 * Context: Process context. May sleep.
 * Return: the new region, or an ERR_PTR: -EINVAL for a region that is not
 * a user region or unknown flags, -EBUSY while memory windows are bound,
 * or as sroce_reg_user_mr().  On error the old region is unchanged.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_mr *old = to_smr(ibmr);
	struct sroce_mr *new;
	unsigned long irqflags;
	int err;

	if (old->type != SROCE_MR_USER ||
	    (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
		       IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = old->umem->address;
		length = old->length;
		iova = old->iova;
	}
	if (flags & IB_MR_REREG_ACCESS) {
		err = sroce_mr_user_access(udata, &access);
	} else {
		access = old->access;
		err = sroce_udata_none(udata);
	}
	if (err)
		return ERR_PTR(err);
	err = sroce_mr_set_dying(old);
	if (err)
		return ERR_PTR(err);
	new = sroce_user_mr_build(ibpd, start, length, iova, access);
	if (IS_ERR(new)) {
		spin_lock_irqsave(&old->lock, irqflags);
		old->dying = false;
		spin_unlock_irqrestore(&old->lock, irqflags);
		return ERR_CAST(new);
	}
	new->key = old->key;
	new->ibmr.lkey = old->ibmr.lkey;
	new->ibmr.rkey = old->ibmr.rkey;
	sroce_pool_replace(&to_sdev(ibpd->device)->mr_pool, old->key >> 8, new);
	old->replaced = true;
	sroce_obj_created(SROCE_OBJ_MR);
	return &new->ibmr;
}

/**
 * sroce_mr_get() - find a region by key and take a reference
 * @sdev: the device
 * @key: an lkey or rkey
 *
 * Context: Any context.
 * Return: the region, or NULL if no live region has exactly this key (a
 * fast-registration region may still be invalid: sroce_mr_check() says).
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	if ((key >> 8) >= SROCE_MW_INDEX_BASE)
		return NULL;
	rcu_read_lock();
	mr = sroce_pool_lookup_rcu(&sdev->mr_pool, key >> 8);
	if (mr && (READ_ONCE(mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
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
 * sroce_alloc_mr() - ib_device_ops.alloc_mr: an empty fast-registration
 *	region
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG; sroce has no other kind
 * @max_num_sg: the most pages one mapping will have
 *
 * Context: Process context. May sleep.
 * Return: the region, invalid until an IB_WR_REG_MR, or an ERR_PTR.
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(ibpd, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = SROCE_MR_FAST_REG;
	mr->valid = false;
	mr->fr_max = max_num_sg;
	mr->fr_page_shift = PAGE_SHIFT;
	mr->fr_pages = kcalloc(max_num_sg, sizeof(*mr->fr_pages),
			       SROCE_GFP_SIZED);
	if (!mr->fr_pages) {
		err = -ENOMEM;
		goto err_free;
	}
	err = sroce_mr_publish(to_sdev(ibpd->device), mr);
	if (err)
		goto err_free_pages;
	return &mr->ibmr;

err_free_pages:
	kfree(mr->fr_pages);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->fr_npages == mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_npages++] = addr;
	return 0;
}

/**
 * sroce_map_mr_sg() - ib_device_ops.map_mr_sg: give a fast-registration
 *	region its pages
 * @ibmr: the region
 * @sg: the scatterlist; with no DMA device its addresses are kernel
 *	virtual addresses
 * @sg_nents: entries in @sg
 * @sg_offset: offset into the first entry
 *
 * Sets ibmr->iova, length and page size; the mapping is used once an
 * IB_WR_REG_MR makes the region valid.
 *
 * Context: Any context.
 * Return: the number of entries mapped.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);

	mr->fr_npages = 0;
	mr->fr_page_shift = ilog2(ibmr->page_size);
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
}

/**
 * sroce_mr_reg() - execute an IB_WR_REG_MR: make a fast-registration
 *	region valid under a key
 * @qp: the QP posting it
 * @mr: the region, of the QP's PD, invalid
 * @key: the new key; only its low byte may differ from the current one
 * @access: the rights
 *
 * Context: Any context. Caller holds qp->sq.lock.
 * Return: 0, or -EINVAL for another kind of region, PD or index, or a
 * region already valid.
 */
int sroce_mr_reg(struct sroce_qp *qp, struct sroce_mr *mr, u32 key,
		 u32 access)
{
	unsigned long flags;
	int err = 0;

	lockdep_assert_held(&qp->sq.lock);
	if (mr->type != SROCE_MR_FAST_REG || mr->ibmr.pd != qp->ibqp.pd ||
	    (key >> 8) != (mr->key >> 8) ||
	    sroce_mr_flush_rights_ok(mr, access))
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->valid) {
		err = -EINVAL;
	} else {
		mr->access = access;
		mr->iova = mr->ibmr.iova;
		mr->length = mr->ibmr.length;
		WRITE_ONCE(mr->key, key);
		mr->valid = true;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/**
 * sroce_mr_invalidate() - invalidate a key: IB_WR_LOCAL_INV, or a SEND with
 *	Invalidate received
 * @qp: the QP doing it
 * @pd: the PD the region must be in: the QP's, or for an XRC target QP
 *	resp.pd
 * @rkey: a fast-registration region's key, or a type 2 window's
 *
 * Context: Any context. Caller holds qp->sq.lock (local) or
 * qp->resp.lock (remote).
 * Return: 0, or -EINVAL if @rkey names no valid region of the QP's PD (or
 * window the QP may invalidate).
 */
int sroce_mr_invalidate(struct sroce_qp *qp, struct ib_pd *pd, u32 rkey)
{
	struct sroce_mr *mr;
	unsigned long flags;
	int err = 0;

	if ((rkey >> 8) >= SROCE_MW_INDEX_BASE)
		return sroce_mw_invalidate(qp, rkey);
	mr = sroce_mr_get(sroce_qp_dev(qp), rkey);
	if (!mr)
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->type != SROCE_MR_FAST_REG || mr->ibmr.pd != pd || !mr->valid)
		err = -EINVAL;
	else
		mr->valid = false;
	spin_unlock_irqrestore(&mr->lock, flags);
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_rkey_get() - the region a remote access by rkey reaches
 * @qp: the QP the access arrives on
 * @rkey: a region's or a window's key
 * @va: the first address
 * @len: bytes
 * @access: the IB_ACCESS_REMOTE_* right needed
 *
 * Checks the key, the PD (the responder's, resp.pd; a type 2 window: the
 * QP), validity, rights and bounds of the region or window.
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: the region to copy with, referenced (sroce_mr_put()), or NULL.
 */
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, u32 access)
{
	struct sroce_mr *mr;

	if ((rkey >> 8) >= SROCE_MW_INDEX_BASE)
		return sroce_mw_resolve(qp, rkey, va, len, access);
	mr = sroce_mr_get(sroce_qp_dev(qp), rkey);
	if (mr && sroce_mr_check(mr, qp->resp.pd, va, len, access)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/**
 * sroce_rkey_get_whole() - the region of an rkey, whatever the addresses
 * @qp: the QP the access arrives on
 * @rkey: a region's key (a window's finds nothing: a FLUSH of a whole
 *	region names the region)
 * @access: the rights needed
 * @iova: set to the region's first address
 * @len: set to its length
 *
 * Checks the key, the PD (resp.pd), validity and rights, as
 * sroce_rkey_get() does, but no range.
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: the region, referenced (sroce_mr_put()), or NULL.
 */
struct sroce_mr *sroce_rkey_get_whole(struct sroce_qp *qp, u32 rkey,
				      u32 access, u64 *iova, u64 *len)
{
	unsigned long flags;
	struct sroce_mr *mr;

	if ((rkey >> 8) >= SROCE_MW_INDEX_BASE)
		return NULL;
	mr = sroce_mr_get(sroce_qp_dev(qp), rkey);
	if (!mr)
		return NULL;
	spin_lock_irqsave(&mr->lock, flags);
	*iova = mr->iova;
	*len = mr->length;
	spin_unlock_irqrestore(&mr->lock, flags);
	if (sroce_mr_check(mr, qp->resp.pd, *iova, 0, access)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* What "rdma res show mr -dd" shows of a region, read under its lock. */
struct sroce_mr_res {
	u64 iova, length, pages;
	u32 access, fr_max, mw_binds;
	bool valid;
};

static void sroce_mr_res_snapshot(struct sroce_mr *mr, struct sroce_mr_res *r)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	r->iova = mr->iova;
	r->length = mr->length;
	r->access = mr->access;
	r->valid = mr->valid;
	r->mw_binds = mr->mw_binds;
	if (mr->type == SROCE_MR_FAST_REG)
		r->pages = mr->fr_npages;
	else if (mr->type == SROCE_MR_DM)
		r->pages = mr->dm_map->num_pages;
	else if (mr->type == SROCE_MR_ODP)
		r->pages = sroce_odp_mapped_pages(mr);
	else
		r->pages = mr->npages;
	r->fr_max = mr->fr_max;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/*
 * Whether the task asking "rdma resource" for details may see addresses:
 * ib_core shows a region's keys only to CAP_NET_ADMIN, checked against
 * the netlink request, which is handled in the asking task's context.
 * (ns_capable_noaudit() asks about the current task, as the unexported
 * has_capability_noaudit() of Linux 7.3 did.)
 */
static bool sroce_res_may_see_addresses(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
}

static const char *sroce_mr_type_name(enum sroce_mr_type type)
{
	switch (type) {
	case SROCE_MR_DMA:
		return "dma";
	case SROCE_MR_USER:
		return "user";
	case SROCE_MR_DM:
		return "dm";
	case SROCE_MR_ODP:
		return "odp";
	default:
		return "fast_reg";
	}
}

/**
 * sroce_fill_res_mr_entry() - ib_device_ops.fill_res_mr_entry
 * @msg: the netlink message being built
 * @ibmr: the region
 *
 * For "rdma res show mr -dd", beside what the core shows (its length, and
 * its keys to CAP_NET_ADMIN): the kind of region (dma: all kernel memory;
 * user: pinned user pages; fast_reg: registered by IB_WR_REG_MR; dm:
 * device memory, whose pages it counts; odp: user memory paged in on
 * demand, whose pages present now it counts), the
 * first address (to CAP_NET_ADMIN only, like the keys: a kernel region's
 * is a kernel address, a user region's tells another process's layout)
 * and the length it covers now (a fast-registration
 * region's last registration), its access flags, its pages (pinned, or of
 * the last ib_map_mr_sg()) and for fast registration how many it may
 * have, whether it is valid (a fast-registration region is not between an
 * invalidation and its next registration) and the memory windows bound
 * to it.
 *
 * Context: Process context. Takes mr->lock.
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_mr_res r;
	struct nlattr *table;

	sroce_mr_res_snapshot(mr, &r);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "type", sroce_mr_type_name(mr->type)) ||
	    (sroce_res_may_see_addresses() &&
	     rdma_nl_put_driver_u64_hex(msg, "iova", r.iova)) ||
	    rdma_nl_put_driver_u64(msg, "length", r.length) ||
	    rdma_nl_put_driver_u32_hex(msg, "access", r.access) ||
	    rdma_nl_put_driver_u64(msg, "pages", r.pages) ||
	    (mr->type == SROCE_MR_FAST_REG &&
	     rdma_nl_put_driver_u32(msg, "max_pages", r.fr_max)) ||
	    rdma_nl_put_driver_u32(msg, "valid", r.valid) ||
	    rdma_nl_put_driver_u32(msg, "mw_binds", r.mw_binds)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
