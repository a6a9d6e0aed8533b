// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_pd_limit DEV [IN_USE] - allocate protection domains from userspace
 * until the device refuses, and check that it refuses exactly at the
 * max_pd it reports (less IN_USE PDs that exist already, e.g. the kernel's
 * own), with ENOMEM; then free them all.
 */
#include "common.h"

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd **pds;
	int i, n, err, in_use = 0;

	if (argc != 2 && argc != 3)
		die("usage: %s DEV [IN_USE]", argv[0]);
	if (argc == 3)
		in_use = atoi(argv[2]);
	ctx = open_device(argv[1]);
	err = ibv_query_device(ctx, &attr);
	if (err)
		die("ibv_query_device: %s", strerror(err));
	if (attr.max_pd <= 0)
		die("max_pd is %d", attr.max_pd);
	pds = calloc(attr.max_pd + 1, sizeof(*pds));
	if (!pds)
		die("out of memory");
	for (n = 0; n <= attr.max_pd; n++) {
		pds[n] = ibv_alloc_pd(ctx);
		if (!pds[n])
			break;
	}
	err = errno;
	printf("allocated %d PDs, max_pd %d, then: %s\n", n, attr.max_pd,
	       n <= attr.max_pd ? strerror(err) : "no error");
	for (i = 0; i < n; i++)
		if (ibv_dealloc_pd(pds[i]))
			die("ibv_dealloc_pd: %s", strerror(errno));
	if (n != attr.max_pd - in_use)
		die("allocated %d PDs, device reports max_pd %d with %d in use",
		    n, attr.max_pd, in_use);
	if (err != ENOMEM)
		die("PD past the limit failed with %s, expected ENOMEM",
		    strerror(err));
	free(pds);
	ibv_close_device(ctx);
	return 0;
}
