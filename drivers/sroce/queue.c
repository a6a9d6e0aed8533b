// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * queue.c - ring memory and its mapping into processes (and device
 * memory's: dm.c).
 *
 * A user ring's memory belongs to its mmap entry, not to the object: the
 * object removes the entry when it is destroyed, and the memory goes when
 * the last mapping of it goes too (sroce_mmap_free()), so a process that
 * still has a destroyed queue mapped only ever touches memory of its own.
 *
 * Every ring is charged to the memory cgroup of its creator.  A user
 * ring's pages are allocated one by one for that and mapped into the
 * kernel with vmap(): vmalloc_user() takes no allocation flags (it charges
 * nobody), and the vmalloc functions that take both allocation flags and
 * VM_USERMAP are not exported.  The vmap() area is marked VM_USERMAP,
 * which is what remap_vmalloc_range() requires of it.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sroce.h"

static_assert(sizeof(struct sroce_ring_hdr) == SROCE_RING_DATA_OFFSET);

/* Free the first @n pages of @m and the page array. */
static void sroce_mmap_put_pages(struct sroce_mmap *m, u32 n)
{
	while (n--)
		__free_page(m->pages[n]);
	kvfree(m->pages);
	m->pages = NULL;
}

/* @size bytes (whole pages) of zeroed, charged memory, mappable by users. */
static int sroce_mmap_get_pages(struct sroce_mmap *m, size_t size)
{
	u32 i, n = size >> PAGE_SHIFT;

	m->pages = kvcalloc(n, sizeof(*m->pages), SROCE_GFP_SIZED);
	if (!m->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->pages[i] = alloc_page(SROCE_GFP_SIZED | __GFP_ZERO);
		if (!m->pages[i])
			goto err;
		cond_resched();
	}
	m->buf = vmap(m->pages, n, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!m->buf)
		goto err;
	m->num_pages = n;
	return 0;

err:
	sroce_mmap_put_pages(m, i);
	return -ENOMEM;
}

/**
 * sroce_mmap_release() - free memory from sroce_mmap_alloc()
 * @m: the memory; no mmap entry owns it (never inserted, or its entry's
 *	last reference is gone)
 *
 * Context: Process context.
 */
void sroce_mmap_release(struct sroce_mmap *m)
{
	vunmap(m->buf);
	sroce_mmap_put_pages(m, m->num_pages);
	kfree(m);
}

/**
 * sroce_mmap_alloc() - zeroed memory a process can map, charged to it
 * @size: bytes, a whole number of pages
 *
 * The caller inserts it as an mmap entry of a user context, which then owns
 * it (sroce_mmap_free()), or releases it (sroce_mmap_release()).
 *
 * Context: Process context. May sleep.
 * Return: the memory, or NULL without memory.
 */
struct sroce_mmap *sroce_mmap_alloc(size_t size)
{
	struct sroce_mmap *m;

	m = kzalloc(sizeof(*m), SROCE_GFP_OBJ);
	if (!m)
		return NULL;
	if (sroce_mmap_get_pages(m, size)) {
		kfree(m);
		return NULL;
	}
	return m;
}

/* A user ring: its memory, owned by a new mmap entry of @uctx. */
static int sroce_ring_alloc_user(struct sroce_ring *r,
				 struct ib_ucontext *uctx,
				 struct sroce_ring_info *info)
{
	struct sroce_mmap *m;
	int err;

	m = sroce_mmap_alloc(r->size);
	if (!m)
		return -ENOMEM;
	err = rdma_user_mmap_entry_insert(uctx, &m->rdma, r->size);
	if (err) {
		sroce_mmap_release(m);
		return err;
	}
	r->buf = m->buf;
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

	might_sleep();
	if (!is_power_of_2(num_slots) || !slot_size || slot_size % 16)
		return -EINVAL;
	size = SROCE_RING_DATA_OFFSET + (size_t)num_slots * slot_size;
	if (size > U32_MAX - PAGE_SIZE)
		return -EINVAL;
	r->num_slots = num_slots;
	r->slot_size = slot_size;
	if (uctx) {
		r->size = PAGE_ALIGN(size);
		return sroce_ring_alloc_user(r, uctx, info);
	}
	r->size = size;
	r->buf = kvzalloc(size, SROCE_GFP_SIZED);
	return r->buf ? 0 : -ENOMEM;
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
 * sroce_mmap() - ib_device_ops.mmap: map a ring or device memory into the
 *	process
 * @uctx: the process's context
 * @vma: the mapping asked for; its offset names the ring or memory
 *
 * Context: Process context, mmap lock held.
 * Return: 0, or -EINVAL if the offset names nothing of this context or the
 * size differs from what it names.
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
 *	ring's or device memory's mapping is gone
 * @entry: the entry
 *
 * Context: Process context.
 */
void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	sroce_mmap_release(container_of(entry, struct sroce_mmap, rdma));
}
