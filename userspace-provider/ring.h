/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ring.h - the provider's side of the shared rings of uapi/rdma/sroce-abi.h
 * ("Shared rings: layout" and "ownership and memory order" there).
 *
 * A ring is a mapping of the uverbs file: a struct sroce_ring_hdr with the
 * producer and consumer indices, then num_slots slots.  Indices run freely
 * over all 32 bits; the slot of index n is n & (num_slots - 1), and
 * producer - consumer (modulo 2^32) is the number of filled slots, which is
 * at most num_slots.  Each side writes exactly one index, its "own"; the
 * other is its "peer" index.  The process is the producer of send, receive
 * and shared receive queues, and the consumer of completion queues.
 *
 * Memory order.  The only ordering that matters is between this process
 * and the kernel; threads of the process serialise with the lock of the
 * queue that owns the ring (every helper below that touches an index must
 * be called under it).  Two pairings make the ring safe:
 *
 *  1. Publishing filled slots.  The producer writes a slot's contents with
 *     plain stores, then stores its index with release semantics
 *     (sroce_ring_publish()); the consumer loads that index with acquire
 *     semantics (sroce_ring_load_peer()) before it reads any slot below
 *     it.  The release/acquire pair makes every slot store that precedes
 *     the publication visible to the reader of the new index, so a consumer
 *     never sees a half-written WQE or CQE.
 *
 *  2. Giving slots back.  The consumer finishes reading slots, then stores
 *     its index with release semantics; the producer loads it with acquire
 *     semantics before it reuses any slot the index has passed.  This
 *     orders the consumer's last reads of a slot before the producer's
 *     first writes to it, so a slot is never overwritten while the other
 *     side may still be reading it.
 *
 * On the provider's side, pairing 1 is sroce_ring_publish() after filling
 * WQEs (send, receive, SRQ) and sroce_ring_load_peer() before reading CQEs;
 * pairing 2 is sroce_ring_publish() after copying CQEs out and
 * sroce_ring_load_peer() before filling WQEs (sroce_ring_room()).  The
 * kernel mirrors both with smp_load_acquire()/smp_store_release().  The
 * process never needs an atomic load of its own index: it is the only
 * writer, so it keeps a private copy (struct sroce_ring.head) and the
 * shared word is only a report to the kernel.  Nothing else orders the
 * two sides: no fences, no read-modify-write operations, no locks shared
 * with the kernel.  The send doorbell (a write(2) after publishing) only
 * tells the kernel when to look; it carries no ordering of its own that
 * the code relies on.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/sroce-abi.h>

/* The index words are shared as __u32 and accessed as C11 atomics. */
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(__u32) &&
	       __alignof__(_Atomic uint32_t) == __alignof__(__u32),
	       "an atomic u32 must overlay a __u32 index");
_Static_assert(sizeof(struct sroce_ring_hdr) == SROCE_RING_DATA_OFFSET,
	       "sroce ABI: ring header size");
_Static_assert(offsetof(struct sroce_ring_hdr, producer) == 0 &&
	       offsetof(struct sroce_ring_hdr, consumer) == 128,
	       "sroce ABI: ring index offsets");
_Static_assert(sizeof(struct sroce_ring_info) == 24,
	       "sroce ABI: sroce_ring_info size");

/* Which index of a ring this process writes. */
enum sroce_ring_role {
	SROCE_RING_PRODUCER,	/* SQ, RQ, SRQ: the process fills slots */
	SROCE_RING_CONSUMER,	/* CQ: the process empties slots */
};

/**
 * struct sroce_ring - one mapped ring, as the provider sees it
 * @base: start of the mapping; NULL when the queue has no ring
 * @map_size: bytes mapped at @base
 * @own: the shared index this process writes
 * @peer: the shared index the kernel writes
 * @mask: num_slots - 1
 * @num_slots: slots in the ring, a power of two
 * @slot_size: bytes from one slot to the next
 * @head: private copy of *@own, the next index this process will publish
 *	as producer or read as consumer
 *
 * All fields but @head are constant while the ring is mapped; @head and the
 * slots this process owns are protected by the lock of the queue owning the
 * ring.
 */
struct sroce_ring {
	uint8_t			*base;
	size_t			map_size;
	_Atomic uint32_t	*own;
	_Atomic uint32_t	*peer;
	uint32_t		mask;
	uint32_t		num_slots;
	uint32_t		slot_size;
	uint32_t		head;
};

/*
 * Filled slots between two free-running indices.  Unsigned subtraction is
 * exact across the 2^32 wrap as long as at most num_slots <= 2^31 are
 * outstanding, which the ring guarantees.
 */
static inline uint32_t sroce_ring_used(uint32_t producer, uint32_t consumer)
{
	return producer - consumer;
}

/* Slot of index @n; any n, the ring masks it. */
static inline void *sroce_ring_slot(const struct sroce_ring *ring, uint32_t n)
{
	return ring->base + SROCE_RING_DATA_OFFSET +
	       (size_t)(n & ring->mask) * ring->slot_size;
}

/* Acquire-load of the kernel's index (pairings 1 and 2 in the comment). */
static inline uint32_t sroce_ring_load_peer(const struct sroce_ring *ring)
{
	return atomic_load_explicit(ring->peer, memory_order_acquire);
}

/*
 * Release-store of this process's index: everything written to the slots
 * below @index (producer) or read from the slots before it (consumer)
 * happens before the kernel sees it.  Must hold the queue's lock.
 */
static inline void sroce_ring_publish(struct sroce_ring *ring, uint32_t index)
{
	ring->head = index;
	atomic_store_explicit(ring->own, index, memory_order_release);
}

/*
 * Producer: may slot head + @pending be filled, with @pending slots already
 * filled but not yet published, and at most @limit (<= num_slots) slots
 * outstanding?  The acquire load of the consumer index orders the kernel's
 * last reads of the slot before our writes to it.  Must hold the lock.
 */
static inline bool sroce_ring_room(const struct sroce_ring *ring,
				   uint32_t pending, uint32_t limit)
{
	uint32_t consumer = sroce_ring_load_peer(ring);

	return sroce_ring_used(ring->head + pending, consumer) < limit;
}

/*
 * Consumer: filled slots from head on.  The acquire load of the producer
 * index makes those slots' contents visible.  Must hold the lock.
 */
static inline uint32_t sroce_ring_ready(const struct sroce_ring *ring)
{
	return sroce_ring_used(sroce_ring_load_peer(ring), ring->head);
}

int sroce_ring_check(const struct sroce_ring_info *info,
		     uint32_t min_slot_size);
int sroce_ring_map(struct sroce_ring *ring, const struct sroce_ring_info *info,
		   uint32_t min_slot_size, enum sroce_ring_role role,
		   int cmd_fd);
void sroce_ring_unmap(struct sroce_ring *ring);
void sroce_ring_resync(struct sroce_ring *ring);

#endif /* SROCE_RING_H */
