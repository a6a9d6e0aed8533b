// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_hold DEV - hold a device open (a context and a PD) and wait until
 * the device goes away under it.  Prints "ready" once it holds the device.
 * When the device is removed the process must get IBV_EVENT_DEVICE_FATAL,
 * after which every verb fails; the program checks that, cleans up and
 * exits 0.  Any other outcome exits 1.
 */
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct ibv_async_event ev;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;

	if (argc != 2)
		die("usage: %s DEV", argv[0]);
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	printf("ready\n");
	fflush(stdout);

	for (;;) {
		if (ibv_get_async_event(ctx, &ev))
			die("ibv_get_async_event: %s", strerror(errno));
		printf("event %s\n", ev.event_type == IBV_EVENT_DEVICE_FATAL ?
		       "IBV_EVENT_DEVICE_FATAL" :
		       ibv_event_type_str(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			break;
	}
	pd2 = ibv_alloc_pd(ctx);
	if (pd2)
		die("ibv_alloc_pd succeeded on a removed device");
	printf("alloc_pd after removal: %s\n", strerror(errno));
	/* The PD is already gone in the kernel; freeing it must not hang. */
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("done\n");
	return 0;
}
