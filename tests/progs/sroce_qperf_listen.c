// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce_qperf_listen.so - make qperf 0.4.11's server listen before it
 * tells its client where.
 *
 * usage: LD_PRELOAD=.../libsroce_qperf_listen.so qperf
 *
 * For each test, qperf 0.4.11's server (Debian 12's) binds an RDMA CM ID,
 * sends the bound port to its client over TCP, and only then calls
 * rdma_listen() (cm_open_server(); fixed upstream after 0.4.11 by "Fix
 * rdmacm race").  A client whose connect request comes in between is
 * rejected by the server's CM for want of a listener (REJ reason 8) and
 * fails with "unexpected event from RDMA CM: Event rejected": on CI twice
 * in a row at the same test of one run (2026-12-05).  Preloaded into the
 * server, this library has rdma_bind_addr() listen as soon as it has
 * bound, and the server's own rdma_listen() on that ID then succeed
 * without listening twice (which the kernel refuses).  qperf's server
 * binds only the IDs it listens on.
 *
 * The definitions below are unversioned, which the dynamic linker accepts
 * for the program's references to the RDMACM_1.0 symbols; the real ones
 * are found with dlvsym().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdma/rdma_cma.h>

typedef int (*bind_fn)(struct rdma_cm_id *id, struct sockaddr *addr);
typedef int (*listen_fn)(struct rdma_cm_id *id, int backlog);

/* The ID listened on early, whose own rdma_listen() is still to come. */
static struct rdma_cm_id *early;

static void *real_fn(const char *name)
{
	void *fn = dlvsym(RTLD_NEXT, name, "RDMACM_1.0");

	if (!fn) {
		fprintf(stderr, "sroce_qperf_listen: no %s@RDMACM_1.0: %s\n", name, dlerror());
		abort();
	}
	return fn;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	static bind_fn bind_real;
	static listen_fn listen_real;
	int ret;

	if (!bind_real) {
		bind_real = (bind_fn)real_fn("rdma_bind_addr");
		listen_real = (listen_fn)real_fn("rdma_listen");
	}
	ret = bind_real(id, addr);
	if (ret)
		return ret;
	ret = listen_real(id, 0);
	if (!ret)
		early = id;
	return ret;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static listen_fn listen_real;

	if (id == early) {
		early = NULL;
		return 0;
	}
	if (!listen_real)
		listen_real = (listen_fn)real_fn("rdma_listen");
	return listen_real(id, backlog);
}
