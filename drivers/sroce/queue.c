// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * queue.c - ring memory and its mapping into processes.
 *
 * A user ring's memory belongs to its mmap entry, not to the object: the
 * object removes the entry when it is destroyed, and the memory goes when
 * the last mapping of it goes too (sroce_mmap_free()), so a process that
 * still has a destroyed queue mapped only ever touches memory of its own.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "queue.h"

static_assert(sizeof(struct sroce_ring_hdr) == SROCE_RING_DATA_OFFSET);

static int sroce_ring_map(struct sroce_ring *r, struct ib_ucontext *uctx,
			  struct sroce_ring_info *info)
{
	struct sroce_mmap *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->buf = r->buf;
	err = rdma_user_mmap_entry_insert(uctx, &m->rdma, r->size);
	if (err) {
		kfree(m);
		return err;
	}
	r->mmap = m;
	info->mmap_offset = rdma_user_mmap_get_offset(&m->rdma);
	info->mmap_size = r->size;
	info->num_slots = r->num_slots;
	info->slot_size = r->slot_size;
	info->reserved = 0;
	return 0;
}

/**
 * sroce_ring_alloc() - allocate an empty ring
 * @r: the ring, zeroed by the caller
 * @uctx: the user context to map it into, or NULL for a kernel ring
 * @num_slots: slots, a power of two
 * @slot_size: bytes per slot, a multiple of 16
 * @info: for user rings, filled with what the process needs to map it
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL for a bad geometry, or -ENOMEM.
 */
int sroce_ring_alloc(struct sroce_ring *r, struct ib_ucontext *uctx,
		     u32 num_slots, u32 slot_size,
		     struct sroce_ring_info *info)
{
	size_t size;
	int err;

	might_sleep();
	if (!is_power_of_2(num_slots) || !slot_size || slot_size % 16)
		return -EINVAL;
	size = SROCE_RING_DATA_OFFSET + (size_t)num_slots * slot_size;
	if (size > U32_MAX - PAGE_SIZE)
		return -EINVAL;
	r->num_slots = num_slots;
	r->slot_size = slot_size;
	if (!uctx) {
		r->size = size;
		r->buf = kvzalloc(size, GFP_KERNEL);
		return r->buf ? 0 : -ENOMEM;
	}
	r->size = PAGE_ALIGN(size);
	r->buf = vmalloc_user(r->size);
	if (!r->buf)
		return -ENOMEM;
	err = sroce_ring_map(r, uctx, info);
	if (err) {
		vfree(r->buf);
		r->buf = NULL;
	}
	return err;
}

/**
 * sroce_ring_free() - release a ring
 * @r: the ring; the kernel must not touch its memory afterwards
 *
 * A user ring's memory lives on until the process unmaps it.
 *
 * Context: Process context.
 */
void sroce_ring_free(struct sroce_ring *r)
{
	if (r->mmap)
		rdma_user_mmap_entry_remove(&r->mmap->rdma);
	else
		kvfree(r->buf);
	r->buf = NULL;
	r->mmap = NULL;
}

/**
 * sroce_mmap() - ib_device_ops.mmap: map a ring into the process
 * @uctx: the process's context
 * @vma: the mapping asked for; its offset names the ring
 *
 * Context: Process context, mmap lock held.
 * Return: 0, or -EINVAL if the offset names no ring of this context or the
 * size differs from the ring's.
 */
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct sroce_mmap *m;
	int err;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct sroce_mmap, rdma);
	err = remap_vmalloc_range(vma, m->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

/**
 * sroce_mmap_free() - ib_device_ops.mmap_free: the last reference to a
 *	ring mapping is gone
 * @entry: the entry
 *
 * Context: Process context.
 */
void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct sroce_mmap *m = container_of(entry, struct sroce_mmap, rdma);

	vfree(m->buf);
	kfree(m);
}
