// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce_linger.so - keep a finished ibverbs program's QPs alive a while.
 *
 * usage: LD_PRELOAD=.../libsroce_linger.so SROCE_LINGER_MS=3000 ibv_rc_pingpong ...
 *
 * ibv_rc_pingpong (and its kin) destroys its QP and exits as soon as its
 * own work is done.  On a wire that loses packets that is too soon for
 * the other end: if the acknowledgement of the other end's last SEND was
 * lost, the SEND is sent again to a QP that no longer exists and fails
 * with "transport retry counter exceeded", although every byte arrived.
 * Hardware and rdma_rxe behave the same; the tools simply have no closing
 * handshake.  With this library preloaded, ibv_destroy_qp() first waits
 * SROCE_LINGER_MS milliseconds (default 3000) so that the responder, which
 * lives in the kernel and answers duplicates without the program, can
 * acknowledge such a resend; then it destroys the QP as asked.
 *
 * The definition below is unversioned, which the dynamic linker accepts
 * for the program's reference to ibv_destroy_qp@IBVERBS_1.1; the real one
 * is found with dlvsym().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

typedef int (*destroy_qp_fn)(struct ibv_qp *qp);

static void linger(void)
{
	const char *s = getenv("SROCE_LINGER_MS");
	long ms = s ? strtol(s, NULL, 10) : 3000;
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&t, &t))
		;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static destroy_qp_fn real;

	if (!real)
		real = (destroy_qp_fn)dlvsym(RTLD_NEXT, "ibv_destroy_qp", "IBVERBS_1.1");
	if (!real) {
		fprintf(stderr, "sroce_linger: no ibv_destroy_qp@IBVERBS_1.1: %s\n", dlerror());
		abort();
	}
	linger();
	return real(qp);
}
