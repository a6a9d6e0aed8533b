/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * util.h - what every test program may use, verbs or not: die(), the
 * monotonic clock in seconds, and the byte pattern the socket-level tests
 * (RDS, SMC-R's TCP) send and check.
 */
#ifndef SROCE_TEST_UTIL_H
#define SROCE_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((format(printf, 1, 2), noreturn))
void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* CLOCK_MONOTONIC in seconds. */
static inline double mono_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fill @p with message @seq's bytes: a pattern of its own per message. */
static inline void fill_pattern(uint8_t *p, size_t len, unsigned int seq)
{
	uint32_t x = 0x9e3779b9u * (seq + 1);
	size_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

#endif
