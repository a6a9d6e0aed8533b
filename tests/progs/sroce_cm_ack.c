// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce_cm_ack.so - give an rdma_cm program's RC QPs a chosen local ACK
 * timeout.
 *
 * usage: LD_PRELOAD=.../libsroce_cm_ack.so SROCE_CM_ACK_TIMEOUT=14 rping ...
 *
 * rdma_cm gives a RoCE connection a packet lifetime of its own choosing
 * and the QP a local ACK timeout near half a second from it; a program
 * can ask for another one (rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)),
 * but rping and its kin do not.  On a wire that loses packets on purpose
 * (tests/groups/faults.sh) every lost packet of a ping-pong is a lost
 * last packet, which only the timeout recovers: 100 pings over a wire
 * losing 5 % took 108 s.  With this library
 * preloaded, the program's IDs ask for SROCE_CM_ACK_TIMEOUT (4.096 us
 * times 2 to that power; 14 is 67 ms, what sroce_rc_test's cases use)
 * before the route is resolved (the active side: the packet lifetime
 * follows it) and before a connection is accepted (the passive side);
 * the recovery itself is the transport's as ever.
 *
 * The definitions below are unversioned, which the dynamic linker accepts
 * for the program's references to the RDMACM_1.0 symbols; the real ones
 * are found with dlvsym().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/rdma_cma.h>

typedef int (*resolve_route_fn)(struct rdma_cm_id *id, int timeout_ms);
typedef int (*accept_fn)(struct rdma_cm_id *id, struct rdma_conn_param *param);

static void *real(const char *name)
{
	void *fn = dlvsym(RTLD_NEXT, name, "RDMACM_1.0");

	if (!fn) {
		fprintf(stderr, "sroce_cm_ack: no %s@RDMACM_1.0: %s\n", name, dlerror());
		abort();
	}
	return fn;
}

/* Ask for the timeout on @id, if one is set and the ID is RC. */
static void ask(struct rdma_cm_id *id)
{
	const char *s = getenv("SROCE_CM_ACK_TIMEOUT");
	uint8_t t;

	if (!s || !*s || id->qp_type != IBV_QPT_RC)
		return;
	t = (uint8_t)strtoul(s, NULL, 10);
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t))) {
		perror("sroce_cm_ack: rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)");
		abort();
	}
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	static resolve_route_fn fn;

	if (!fn)
		fn = (resolve_route_fn)real("rdma_resolve_route");
	ask(id);
	return fn(id, timeout_ms);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static accept_fn fn;

	if (!fn)
		fn = (accept_fn)real("rdma_accept");
	ask(id);
	return fn(id, param);
}
