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
 * An rdma_cm program (rping) has the closing handshake: once its
 * connection is disconnected (RDMA_CM_EVENT_DISCONNECTED: the peer
 * answered the DREQ, or sent its own, or CM gave up resending it) nothing
 * is left to resend either way, and the wait ends there.  The library
 * sees the event as the program takes it (rdma_get_cm_event); it is for
 * programs of one connection.
 *
 * The definitions below are unversioned, which the dynamic linker accepts
 * for the program's references to ibv_destroy_qp@IBVERBS_1.1 and
 * rdma_get_cm_event@RDMACM_1.0; the real ones are found with dlvsym().
 * A program without librdmacm never calls the second.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

typedef int (*destroy_qp_fn)(struct ibv_qp *qp);
typedef int (*get_cm_event_fn)(struct rdma_event_channel *ch, struct rdma_cm_event **ev);

/* The program took an RDMA_CM_EVENT_DISCONNECTED. */
static volatile int disconnected;

static void linger(void)
{
	const char *s = getenv("SROCE_LINGER_MS");
	long ms = s && *s ? strtol(s, NULL, 10) : 3000;
	const struct timespec tick = { .tv_nsec = 10 * 1000000L };

	for (; ms > 0 && !__atomic_load_n(&disconnected, __ATOMIC_ACQUIRE); ms -= 10)
		nanosleep(&tick, NULL);
}

int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{
	static get_cm_event_fn real;
	int ret;

	if (!real)
		real = (get_cm_event_fn)dlvsym(RTLD_NEXT, "rdma_get_cm_event", "RDMACM_1.0");
	if (!real) {
		fprintf(stderr, "sroce_linger: no rdma_get_cm_event@RDMACM_1.0: %s\n", dlerror());
		abort();
	}
	ret = real(ch, ev);
	if (!ret && (*ev)->event == RDMA_CM_EVENT_DISCONNECTED)
		__atomic_store_n(&disconnected, 1, __ATOMIC_RELEASE);
	return ret;
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
