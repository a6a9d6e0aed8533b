// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring.c - mapping and checking the shared rings (see ring.h for the
 * memory-order contract, uapi/rdma/sroce-abi.h for the layout).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ring.h"

/* Slots are 16-byte granular (struct sroce_ring_info.slot_size). */
#define SROCE_SLOT_ALIGN 16u

/**
 * sroce_ring_check() - does a ring the kernel describes fit the ABI?
 * @info: ring description from a create or resize response
 * @min_slot_size: bytes the provider needs in every slot (its largest
 *	element with the queue's granted limits)
 *
 * A ring with num_slots 0 is "no ring" and is not checked here; callers
 * decide whether that is allowed.
 *
 * Return: 0, or EPROTO when the kernel broke the ABI: num_slots not a power
 * of two, slot_size not a multiple of 16 or below @min_slot_size, or
 * mmap_size too small for the header and every slot.
 */
int sroce_ring_check(const struct sroce_ring_info *info,
		     uint32_t min_slot_size)
{
	uint64_t need;

	if (!info->num_slots || (info->num_slots & (info->num_slots - 1)))
		return EPROTO;
	if (!info->slot_size || info->slot_size % SROCE_SLOT_ALIGN ||
	    info->slot_size < min_slot_size)
		return EPROTO;

	/* Cannot overflow: both factors are below 2^32. */
	need = SROCE_RING_DATA_OFFSET +
	       (uint64_t)info->num_slots * info->slot_size;
	if (info->mmap_size < need)
		return EPROTO;
	return 0;
}

/* Point @own/@peer into the header at @base according to @role. */
static void ring_set_indices(struct sroce_ring *ring,
			     enum sroce_ring_role role)
{
	struct sroce_ring_hdr *hdr = (struct sroce_ring_hdr *)(void *)ring->base;
	_Atomic uint32_t *producer = (_Atomic uint32_t *)(void *)&hdr->producer;
	_Atomic uint32_t *consumer = (_Atomic uint32_t *)(void *)&hdr->consumer;

	if (role == SROCE_RING_PRODUCER) {
		ring->own = producer;
		ring->peer = consumer;
	} else {
		ring->own = consumer;
		ring->peer = producer;
	}
}

/**
 * sroce_ring_map() - check and map a ring described by the kernel
 * @ring: zeroed, or previously unmapped; filled on success
 * @info: ring description from a create or resize response
 * @min_slot_size: see sroce_ring_check()
 * @role: which index this process writes
 * @cmd_fd: the context's uverbs file
 *
 * Takes the indices as the kernel initialised them, which need not be 0
 * (a resized CQ starts with the CQEs it took over), but requires
 * 0 <= producer - consumer <= num_slots.
 *
 * Return: 0; EPROTO for a ring that breaks the ABI; EOVERFLOW for an
 * offset off_t cannot hold; mmap(2)'s errno.
 * @ring is untouched on failure.
 */
int sroce_ring_map(struct sroce_ring *ring, const struct sroce_ring_info *info,
		   uint32_t min_slot_size, enum sroce_ring_role role,
		   int cmd_fd)
{
	struct sroce_ring r = {};
	uint32_t producer, consumer;
	void *base;
	int ret;

	ret = sroce_ring_check(info, min_slot_size);
	if (ret)
		return ret;
	if ((uint64_t)(off_t)info->mmap_offset != info->mmap_offset)
		return EOVERFLOW;	/* 32-bit off_t */

	base = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    cmd_fd, (off_t)info->mmap_offset);
	if (base == MAP_FAILED)
		return errno;

	r.base = base;
	r.map_size = info->mmap_size;
	r.num_slots = info->num_slots;
	r.mask = info->num_slots - 1;
	r.slot_size = info->slot_size;
	ring_set_indices(&r, role);

	r.head = atomic_load_explicit(r.own, memory_order_acquire);
	if (role == SROCE_RING_PRODUCER) {
		producer = r.head;
		consumer = sroce_ring_load_peer(&r);
	} else {
		producer = sroce_ring_load_peer(&r);
		consumer = r.head;
	}
	if (sroce_ring_used(producer, consumer) > r.num_slots) {
		munmap(base, r.map_size);
		return EPROTO;
	}

	*ring = r;
	return 0;
}

/**
 * sroce_ring_unmap() - drop a ring's mapping; no-op for a ring never mapped
 * @ring: ring from sroce_ring_map(), or zeroed
 *
 * Call only once the kernel no longer uses the ring through this process
 * (after the object is destroyed or its ring replaced).
 */
void sroce_ring_unmap(struct sroce_ring *ring)
{
	if (ring->base)
		munmap(ring->base, ring->map_size);
	memset(ring, 0, sizeof(*ring));
}

/**
 * sroce_ring_resync() - take this process's index back from the mapping
 * @ring: mapped ring; the caller holds its queue's lock
 *
 * For the rare moments when the kernel may have rewritten the index this
 * process owns (a QP moved to RESET) and the private copy must follow.
 */
void sroce_ring_resync(struct sroce_ring *ring)
{
	if (ring->base)
		ring->head = atomic_load_explicit(ring->own,
						  memory_order_acquire);
}
