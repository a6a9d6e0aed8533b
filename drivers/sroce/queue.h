/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * queue.h - rings: power-of-two arrays of slots with free-running producer
 * and consumer indices, shared with userspace for user objects (the layout,
 * ownership and memory-order contract are in uapi/rdma/sroce-abi.h) and
 * private to the kernel for kernel objects.
 *
 * The side that owns an index keeps the authoritative copy in kernel memory
 * (struct sroce_ring.prod or .cons) and publishes it into the shared header
 * with a release store; the other side's index is read from the shared
 * header with an acquire load and must be checked before use
 * (sroce_ring_count_valid()).
 */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

/**
 * struct sroce_mmap - a ring buffer or device memory mapped (or mappable)
 *	by a process
 * @rdma: the core's mmap entry; holds the offset userspace maps at
 * @buf: @pages mapped contiguously into the kernel (vmap(), VM_USERMAP);
 *	freed with them when the last mapping and the object are gone
 *	(sroce_mmap_free())
 * @pages: the zeroed pages, charged to the memory cgroup of the process
 *	that created the ring or memory
 * @num_pages: entries of @pages
 */
struct sroce_mmap {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct page **pages;
	u32 num_pages;
};

/**
 * struct sroce_ring - one ring
 * @buf: header (struct sroce_ring_hdr) then the slots
 * @size: bytes of @buf
 * @num_slots: slots, a power of two
 * @slot_size: bytes per slot
 * @prod: the kernel's copy of the producer index, when the kernel produces
 * @cons: the kernel's copy of the consumer index, when the kernel consumes
 * @mmap: for user rings, the mapping that owns @buf; NULL for kernel rings
 */
struct sroce_ring {
	void *buf;
	size_t size;
	u32 num_slots;
	u32 slot_size;
	u32 prod;
	u32 cons;
	struct sroce_mmap *mmap;
};

static inline struct sroce_ring_hdr *sroce_ring_hdr(const struct sroce_ring *r)
{
	return r->buf;
}

static inline void *sroce_ring_slot(const struct sroce_ring *r, u32 index)
{
	return r->buf + SROCE_RING_DATA_OFFSET +
	       (size_t)(index & (r->num_slots - 1)) * r->slot_size;
}

/* The producer index the other side published (acquire). */
static inline u32 sroce_ring_load_prod(const struct sroce_ring *r)
{
	/* Pairs with the producer's release: slots below it are complete. */
	return smp_load_acquire(&sroce_ring_hdr(r)->producer);
}

/* The consumer index the other side published (acquire). */
static inline u32 sroce_ring_load_cons(const struct sroce_ring *r)
{
	/* Pairs with the consumer's release: slots below it are free. */
	return smp_load_acquire(&sroce_ring_hdr(r)->consumer);
}

/* Publish the kernel's producer index (release). */
static inline void sroce_ring_publish_prod(struct sroce_ring *r)
{
	/* Slots below the index are written before the index is seen. */
	smp_store_release(&sroce_ring_hdr(r)->producer, r->prod);
}

/* Publish the kernel's consumer index (release). */
static inline void sroce_ring_publish_cons(struct sroce_ring *r)
{
	/* Slots below the index are read before they are given back. */
	smp_store_release(&sroce_ring_hdr(r)->consumer, r->cons);
}

/* True when prod - cons is a possible number of occupied slots. */
static inline bool sroce_ring_count_valid(const struct sroce_ring *r,
					  u32 prod, u32 cons)
{
	return prod - cons <= r->num_slots;
}

int sroce_ring_alloc(struct sroce_ring *r, struct ib_ucontext *uctx,
		     u32 num_slots, u32 slot_size,
		     struct sroce_ring_info *info);
void sroce_ring_free(struct sroce_ring *r);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);
struct sroce_mmap *sroce_mmap_alloc(size_t size);
void sroce_mmap_release(struct sroce_mmap *m);

#endif /* SROCE_QUEUE_H */
