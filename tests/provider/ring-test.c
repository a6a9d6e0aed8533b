// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring-test.c - host-side test of the provider's ring helpers
 * (userspace-provider/ring.h, ring.c).  Needs no RDMA device.
 *
 * Usage: ring-test
 * Build: see check-provider.sh (compiled together with ring.c).
 *
 * A memfd stands in for the uverbs file: sroce_ring_map() maps it exactly
 * as it maps a kernel ring, and a second mapping of the same memfd plays
 * the kernel's side, so slots and indices written on one side are read
 * through the other as they would be across the user/kernel boundary.
 *
 * Checks: index arithmetic and wraparound at 2^32, full/empty, slot
 * addressing, the indices taken over at map time, and refusal of ring
 * descriptions that break the ABI.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

#define NUM_SLOTS	8u
#define SLOT_SIZE	64u
#define MAP_SIZE	4096u
#define NEAR_WRAP	0xfffffffau	/* 6 below 2^32 */

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static struct sroce_ring_info info_of(uint32_t num_slots, uint32_t slot_size,
				      uint32_t mmap_size)
{
	return (struct sroce_ring_info){
		.mmap_offset = 0,
		.mmap_size = mmap_size,
		.num_slots = num_slots,
		.slot_size = slot_size,
	};
}

static void test_index_math(void)
{
	expect(sroce_ring_used(5, 5) == 0, "equal indices: empty");
	expect(sroce_ring_used(NUM_SLOTS, 0) == NUM_SLOTS,
	       "producer - consumer == num_slots: full");
	expect(sroce_ring_used(2, 0xfffffffeu) == 4,
	       "count is exact across the 2^32 wrap");
	expect(sroce_ring_used(0, 0xffffffffu) == 1,
	       "producer wrapped to 0, consumer at 2^32 - 1");
	expect(sroce_ring_used(0x80000000u, 0) == 0x80000000u,
	       "2^31 outstanding (largest power-of-two ring) counts right");
}

static void test_check(void)
{
	const uint32_t need = SROCE_RING_DATA_OFFSET + NUM_SLOTS * SLOT_SIZE;
	struct sroce_ring_info info;

	info = info_of(NUM_SLOTS, SLOT_SIZE, need);
	expect(sroce_ring_check(&info, SLOT_SIZE) == 0,
	       "check: exact mmap_size and slot size accepted");
	info = info_of(1, 16, MAP_SIZE);
	expect(sroce_ring_check(&info, 16) == 0, "check: one slot accepted");
	info = info_of(0, SLOT_SIZE, MAP_SIZE);
	expect(sroce_ring_check(&info, 16) == EPROTO,
	       "check: 0 slots refused");
	info = info_of(6, SLOT_SIZE, MAP_SIZE);
	expect(sroce_ring_check(&info, 16) == EPROTO,
	       "check: 6 slots (not a power of two) refused");
	info = info_of(0x80000001u, 16, MAP_SIZE);
	expect(sroce_ring_check(&info, 16) == EPROTO,
	       "check: 2^31 + 1 slots refused");
	info = info_of(NUM_SLOTS, 0, MAP_SIZE);
	expect(sroce_ring_check(&info, 0) == EPROTO,
	       "check: slot_size 0 refused");
	info = info_of(NUM_SLOTS, 40, MAP_SIZE);
	expect(sroce_ring_check(&info, 16) == EPROTO,
	       "check: slot_size 40 (not a multiple of 16) refused");
	info = info_of(NUM_SLOTS, 32, MAP_SIZE);
	expect(sroce_ring_check(&info, 48) == EPROTO,
	       "check: slot smaller than the element refused");
	info = info_of(NUM_SLOTS, SLOT_SIZE, need - 1);
	expect(sroce_ring_check(&info, SLOT_SIZE) == EPROTO,
	       "check: mmap_size one byte short refused");
	info = info_of(0x80000000u, 0x100u, 0xffffffffu);
	expect(sroce_ring_check(&info, 16) == EPROTO,
	       "check: slots beyond 4 GiB (no 32-bit overflow) refused");
}

/* A memfd of MAP_SIZE zero bytes, and the "kernel's" mapping of it. */
static int make_fd(void **kmap)
{
	int fd = memfd_create("sroce-ring-test", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, MAP_SIZE)) {
		perror("memfd");
		exit(1);
	}
	*kmap = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*kmap == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return fd;
}

static void set_indices(void *kmap, uint32_t producer, uint32_t consumer)
{
	struct sroce_ring_hdr *hdr = kmap;

	hdr->producer = producer;
	hdr->consumer = consumer;
}

static void test_map(void)
{
	struct sroce_ring_info info = info_of(NUM_SLOTS, SLOT_SIZE, MAP_SIZE);
	struct sroce_ring ring = {}, untouched = {};
	struct sroce_ring_hdr *hdr;
	uint8_t *base;
	void *kmap;
	int fd = make_fd(&kmap);

	hdr = kmap;
	set_indices(kmap, 3, 3 + NUM_SLOTS + 1);
	expect(sroce_ring_map(&ring, &info, 16, SROCE_RING_PRODUCER, fd) ==
	       EPROTO && !memcmp(&ring, &untouched, sizeof(ring)),
	       "map: consumer ahead of producer refused, ring untouched");
	set_indices(kmap, 3 + NUM_SLOTS + 1, 3);
	expect(sroce_ring_map(&ring, &info, 16, SROCE_RING_CONSUMER, fd) ==
	       EPROTO, "map: more than num_slots filled refused");
	expect(sroce_ring_map(&ring, &info, 16, SROCE_RING_PRODUCER, -1) ==
	       EBADF && !ring.base, "map: mmap error returned, ring untouched");

	set_indices(kmap, NEAR_WRAP + 2, NEAR_WRAP);
	expect(sroce_ring_map(&ring, &info, 16, SROCE_RING_PRODUCER, fd) == 0,
	       "map: producer role");
	base = ring.base;
	expect(ring.head == NEAR_WRAP + 2, "map: head taken from producer");
	expect((void *)ring.own == base && (uint8_t *)ring.peer == base + 128,
	       "map: producer owns header word 0, peer is at byte 128");
	expect(ring.mask == NUM_SLOTS - 1 && ring.slot_size == SLOT_SIZE,
	       "map: mask and slot size");
	expect(sroce_ring_slot(&ring, 0) == base + SROCE_RING_DATA_OFFSET,
	       "slot 0 at SROCE_RING_DATA_OFFSET");
	expect(sroce_ring_slot(&ring, 3) ==
	       base + SROCE_RING_DATA_OFFSET + 3 * SLOT_SIZE, "slot 3");
	expect(sroce_ring_slot(&ring, NUM_SLOTS + 3) == sroce_ring_slot(&ring, 3),
	       "index n + num_slots shares slot n");
	expect(sroce_ring_slot(&ring, 0xffffffffu) ==
	       base + SROCE_RING_DATA_OFFSET + (NUM_SLOTS - 1) * SLOT_SIZE,
	       "index 2^32 - 1 is the last slot");
	expect(sroce_ring_slot(&ring, 0xffffffffu + 1u) ==
	       sroce_ring_slot(&ring, 0), "index 2^32 wraps to slot 0");

	hdr->producer = 77;
	sroce_ring_resync(&ring);
	expect(ring.head == 77, "resync: head re-read from the mapping");
	sroce_ring_unmap(&ring);
	expect(!ring.base && !ring.own, "unmap clears the ring");

	set_indices(kmap, NEAR_WRAP + 2, NEAR_WRAP);
	expect(sroce_ring_map(&ring, &info, 16, SROCE_RING_CONSUMER, fd) == 0 &&
	       ring.head == NEAR_WRAP && (void *)ring.peer == ring.base &&
	       sroce_ring_ready(&ring) == 2,
	       "map: consumer role, head from consumer, 2 ready");
	sroce_ring_unmap(&ring);

	munmap(kmap, MAP_SIZE);
	close(fd);
}

/* Producer fills through one mapping, "kernel" consumes through another. */
static void fill(struct sroce_ring *prod, uint32_t first, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		*(uint32_t *)sroce_ring_slot(prod, prod->head + i) = first + i;
	sroce_ring_publish(prod, prod->head + count);
}

static void test_wrap(void)
{
	struct sroce_ring_info info = info_of(NUM_SLOTS, SLOT_SIZE, MAP_SIZE);
	struct sroce_ring prod = {}, cons = {};
	struct sroce_ring_hdr *hdr;
	uint32_t i, n, bad = 0;
	void *kmap;
	int fd = make_fd(&kmap);

	hdr = kmap;
	set_indices(kmap, NEAR_WRAP, NEAR_WRAP);
	if (sroce_ring_map(&prod, &info, 16, SROCE_RING_PRODUCER, fd) ||
	    sroce_ring_map(&cons, &info, 16, SROCE_RING_CONSUMER, fd)) {
		expect(0, "wrap: map both sides");
		return;
	}

	expect(sroce_ring_ready(&cons) == 0, "wrap: empty at start");
	for (n = 0; n < NUM_SLOTS && sroce_ring_room(&prod, n, NUM_SLOTS); n++)
		;
	expect(n == NUM_SLOTS && !sroce_ring_room(&prod, NUM_SLOTS, NUM_SLOTS),
	       "wrap: room for exactly num_slots, then full");
	expect(sroce_ring_room(&prod, 4, 5) && !sroce_ring_room(&prod, 5, 5),
	       "wrap: a limit below num_slots is honoured");

	fill(&prod, 100, NUM_SLOTS);
	expect(hdr->producer == NEAR_WRAP + NUM_SLOTS && hdr->producer == 2,
	       "wrap: producer published past 2^32 (now 2)");
	expect(!sroce_ring_room(&prod, 0, NUM_SLOTS), "wrap: full after fill");
	expect(sroce_ring_ready(&cons) == NUM_SLOTS,
	       "wrap: consumer sees num_slots ready across the wrap");

	for (i = 0; i < 5; i++)
		bad += *(uint32_t *)sroce_ring_slot(&cons, cons.head + i) !=
		       100 + i;
	sroce_ring_publish(&cons, cons.head + 5);
	expect(!bad, "wrap: consumer reads slots in order across the wrap");
	expect(hdr->consumer == NEAR_WRAP + 5, "wrap: consumer published");
	expect(sroce_ring_room(&prod, 4, NUM_SLOTS) &&
	       !sroce_ring_room(&prod, 5, NUM_SLOTS),
	       "wrap: producer sees exactly the 5 given-back slots");

	fill(&prod, 200, 5);
	for (i = 0; i < NUM_SLOTS; i++)
		bad += *(uint32_t *)sroce_ring_slot(&cons, cons.head + i) !=
		       (i < 3 ? 105 + i : 200 + i - 3);
	sroce_ring_publish(&cons, cons.head + NUM_SLOTS);
	expect(!bad && sroce_ring_ready(&cons) == 0 &&
	       hdr->consumer == hdr->producer && hdr->consumer == 7,
	       "wrap: second lap read in order, ring empty at index 7");

	sroce_ring_unmap(&prod);
	sroce_ring_unmap(&cons);
	munmap(kmap, MAP_SIZE);
	close(fd);
}

int main(void)
{
	test_index_math();
	test_check();
	test_map();
	test_wrap();

	puts(failures ? "ring-test: FAILED" : "ring-test: passed");
	return failures ? 1 : 0;
}
