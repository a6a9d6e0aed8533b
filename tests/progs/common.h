/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* common.h - helpers shared by the test programs. */
#ifndef SROCE_TEST_COMMON_H
#define SROCE_TEST_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "util.h"

/* Open the RDMA device called @name, or die. */
static inline struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open %s (no such device, or no provider)", name);
	return ctx;
}

/*
 * Counter @name of @dev's port 1 (sysfs hw_counters, what rdma statistic
 * shows); -1 if it cannot be read.
 */
static inline long long hw_counter_of(struct ibv_context *dev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(dev->device), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

#endif
