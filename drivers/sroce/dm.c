// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dm.c - device memory (ibv_alloc_dm()): memory the device owns, which the
 * process maps and copies into and out of itself, and which memory regions
 * over it (mr.c, SROCE_MR_DM) open to work requests and to the network.
 *
 * The memory belongs to its mmap entry, as a ring's does (queue.c):
 * freeing the device memory removes the entry, which goes once the last
 * region over it is gone (each region holds a reference on it), and a
 * process that still maps the memory keeps the pages it mapped.
 * DM_ALLOC carries no driver data to return an mmap offset in, so the
 * entry sits at one the process computes from the handle DM_ALLOC returns
 * (SROCE_DM_MMAP_PGOFF()); a handle freed and handed out again maps the
 * new memory there.
 */
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

static int sroce_dm_check(const struct ib_dm_alloc_attr *attr)
{
	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->length || attr->length > SROCE_DM_MAX_SIZE)
		return -EINVAL;
	/* Whole pages meet any alignment up to a page (log2 of it). */
	if (attr->alignment > PAGE_SHIFT)
		return -EINVAL;
	return 0;
}

/* The page offset of the mapping of the DM with handle @id; 0: none fits. */
static u64 sroce_dm_pgoff(int id)
{
	u64 pgoff = SROCE_DM_MMAP_PGOFF((u32)id);

	if (id < 0 || pgoff + SROCE_DM_SLOT_PAGES - 1 > U32_MAX)
		return 0;
	return pgoff;
}

/**
 * sroce_alloc_dm() - ib_device_ops.alloc_dm
 * @ibdev: the device
 * @uctx: the process's context
 * @attr: the length (1 to SROCE_DM_MAX_SIZE bytes), the log2 of the
 *	alignment asked for (a page at most), no flags
 * @attrs: the command; its handle names the mapping's page offset
 *
 * Allocates zeroed, charged memory the process maps at
 * SROCE_DM_MMAP_PGOFF() of the DM's handle.
 *
 * Context: Process context. May sleep.
 * Return: the device memory, or an ERR_PTR: -EOPNOTSUPP for flags,
 * -EINVAL for a bad length or alignment, -ENOMEM without memory or past
 * SROCE_DM_MAX, -ENOSPC for a handle past the offsets sroce maps at.
 */
struct ib_dm *sroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	size_t size = PAGE_ALIGN(attr->length);
	struct ib_uobject *uobj;
	struct sroce_dm *dm;
	int err;

	err = sroce_dm_check(attr);
	if (err)
		return ERR_PTR(err);
	uobj = uverbs_attr_get_uobject(attrs, UVERBS_ATTR_ALLOC_DM_HANDLE);
	if (IS_ERR(uobj))
		return ERR_CAST(uobj);
	if (atomic_inc_return(&sdev->num_dm) > SROCE_DM_MAX) {
		err = -ENOMEM;
		goto err_uncount;
	}
	dm = kzalloc(sizeof(*dm), SROCE_GFP_OBJ);
	if (!dm) {
		err = -ENOMEM;
		goto err_uncount;
	}
	dm->uctx = uctx;
	dm->pgoff = sroce_dm_pgoff(uobj->id);
	if (!dm->pgoff) {
		err = -ENOSPC;
		goto err_free_dm;
	}
	dm->map = sroce_mmap_alloc(size);
	if (!dm->map) {
		err = -ENOMEM;
		goto err_free_dm;
	}
	err = rdma_user_mmap_entry_insert_exact(uctx, &dm->map->rdma, size,
						dm->pgoff);
	if (err)
		goto err_release_map;
	sroce_obj_created(SROCE_OBJ_DM);
	return &dm->ibdm;

err_release_map:
	sroce_mmap_release(dm->map);
err_free_dm:
	kfree(dm);
err_uncount:
	atomic_dec(&sdev->num_dm);
	return ERR_PTR(err);
}

/**
 * sroce_dealloc_dm() - ib_device_ops.dealloc_dm
 * @ibdm: the device memory; the core has checked no region is over it
 * @attrs: unused
 *
 * Its mapping keeps the pages it maps until it is unmapped.
 *
 * Context: Process context.
 * Return: 0.
 */
int sroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct sroce_dm *dm = to_sdm(ibdm);

	rdma_user_mmap_entry_remove(&dm->map->rdma);
	atomic_dec(&to_sdev(ibdm->device)->num_dm);
	sroce_obj_destroyed(SROCE_OBJ_DM);
	kfree(dm);
	return 0;
}

/**
 * sroce_dm_map_get() - the memory of device memory, referenced
 * @ibdm: the device memory, not being freed
 *
 * For a region over it (sroce_reg_dm_mr()), which keeps the memory until
 * sroce_dm_map_put().
 *
 * Context: Process context.
 * Return: the memory, or NULL if its entry is already removed.
 */
struct sroce_mmap *sroce_dm_map_get(struct ib_dm *ibdm)
{
	struct sroce_dm *dm = to_sdm(ibdm);
	struct rdma_user_mmap_entry *entry;

	entry = rdma_user_mmap_entry_get_pgoff(dm->uctx, dm->pgoff);
	return entry ? container_of(entry, struct sroce_mmap, rdma) : NULL;
}

/**
 * sroce_dm_map_put() - drop sroce_dm_map_get()'s reference
 * @m: the memory
 *
 * Context: Process context (the last reference frees the memory).
 */
void sroce_dm_map_put(struct sroce_mmap *m)
{
	rdma_user_mmap_entry_put(&m->rdma);
}
