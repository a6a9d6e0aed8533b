// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_memcpy_bw: one core's memcpy bandwidth, the ceiling a one-copy
 * RDMA device can approach (make bench, tests/bench/guest.sh).
 *
 * usage: sroce_memcpy_bw SIZE SECONDS
 *
 * Copies SIZE bytes from one buffer to another, over and over, for about
 * SECONDS seconds, and prints one line:
 *
 *   memcpy SIZE BYTES_PER_SECOND
 *
 * Both buffers are touched first, so page faults are not counted.  With a
 * 64 KiB SIZE the buffers stay in the caches, as perftest's do (it reuses
 * one buffer per QP); a large SIZE measures memory bandwidth instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

int main(int argc, char **argv)
{
	size_t size;
	double secs, start, elapsed;
	unsigned long long bytes = 0;
	unsigned char *src, *dst;
	unsigned int i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SIZE SECONDS\n", argv[0]);
		return 2;
	}
	size = strtoull(argv[1], NULL, 0);
	secs = strtod(argv[2], NULL);
	if (size == 0 || secs <= 0) {
		fprintf(stderr, "%s: SIZE and SECONDS must be positive\n", argv[0]);
		return 2;
	}
	src = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	dst = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (!src || !dst) {
		perror("aligned_alloc");
		return 1;
	}
	memset(src, 0x5a, size);
	memset(dst, 0, size);

	start = mono_seconds();
	do {
		/* A batch between clock reads: the clock is slow under emulation. */
		for (i = 0; i < 16; i++) {
			memcpy(dst, src, size);
			/* Keep the copy from being optimised away. */
			__asm__ volatile("" : : "r"(dst) : "memory");
			bytes += size;
		}
		elapsed = mono_seconds() - start;
	} while (elapsed < secs);

	if (dst[size - 1] != 0x5a) {
		fprintf(stderr, "%s: the copy did not happen\n", argv[0]);
		return 1;
	}
	printf("memcpy %zu %.0f\n", size, (double)bytes / elapsed);
	free(src);
	free(dst);
	return 0;
}
