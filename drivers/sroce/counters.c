// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * counters.c - per-device event counters for ib_core's hw_counters, and
 * module-wide object accounting exposed in debugfs for leak checks.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"

#define SROCE_COUNTER(id, label) \
	[SROCE_CNT_##id] = { .name = #label },
static const struct rdma_stat_desc sroce_counter_descs[] = {
	SROCE_LIST_EACH(SROCE_COUNTERS)
};

#undef SROCE_COUNTER

static_assert(ARRAY_SIZE(sroce_counter_descs) == SROCE_CNT_MAX);

static const char * const sroce_obj_names[] = {
	[SROCE_OBJ_DEV] = "dev",
	[SROCE_OBJ_UCONTEXT] = "ucontext",
	[SROCE_OBJ_PD] = "pd",
	[SROCE_OBJ_NETNS_SOCKETS] = "netns_sockets",
	[SROCE_OBJ_CQ] = "cq",
	[SROCE_OBJ_QP] = "qp",
	[SROCE_OBJ_SRQ] = "srq",
	[SROCE_OBJ_MR] = "mr",
	[SROCE_OBJ_AH] = "ah",
	[SROCE_OBJ_MW] = "mw",
	[SROCE_OBJ_MCAST] = "mcast",
	[SROCE_OBJ_DM] = "dm",
	[SROCE_OBJ_XRCD] = "xrcd",
};

static_assert(ARRAY_SIZE(sroce_obj_names) == SROCE_OBJ_MAX);

static const char * const sroce_gcnt_names[] = {
	[SROCE_GCNT_RX_NO_DEVICE] = "rx_no_device",
};

static_assert(ARRAY_SIZE(sroce_gcnt_names) == SROCE_GCNT_MAX);

static atomic_long_t sroce_objs[SROCE_OBJ_MAX];
static atomic_long_t sroce_gcnt[SROCE_GCNT_MAX];
static struct dentry *sroce_debugfs;

/**
 * sroce_obj_created() - account one new object of a kind
 * @kind: what was created
 *
 * Context: Any context.
 */
void sroce_obj_created(enum sroce_obj kind)
{
	atomic_long_inc(&sroce_objs[kind]);
	pr_debug("%s created\n", sroce_obj_names[kind]);
}

/**
 * sroce_obj_destroyed() - account the end of one object of a kind
 * @kind: what was destroyed
 *
 * Context: Any context.
 */
void sroce_obj_destroyed(enum sroce_obj kind)
{
	atomic_long_dec(&sroce_objs[kind]);
	pr_debug("%s destroyed\n", sroce_obj_names[kind]);
}

/**
 * sroce_global_count() - count an event that belongs to no device
 * @c: the counter
 *
 * Context: Any context.
 */
void sroce_global_count(enum sroce_global_counter c)
{
	atomic_long_inc(&sroce_gcnt[c]);
}

/**
 * sroce_stats_alloc() - allocate a device's per-CPU counters, zeroed
 *
 * Context: Process context. May sleep.
 * Return: the counters, or NULL without memory.
 */
struct sroce_stats __percpu *sroce_stats_alloc(void)
{
	return alloc_percpu(struct sroce_stats);
}

/**
 * sroce_stats_free() - free counters from sroce_stats_alloc()
 * @stats: the counters, or NULL
 *
 * Context: Any context.
 */
void sroce_stats_free(struct sroce_stats __percpu *stats)
{
	free_percpu(stats);
}

static u64 sroce_stats_sum(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdev->stats, cpu)->cnt[c];
	return sum;
}

/**
 * sroce_alloc_hw_port_stats() - ib_device_ops.alloc_hw_port_stats
 * @ibdev: the device
 * @port_num: the port
 *
 * Context: Process context. May sleep.
 * Return: the stats descriptor the core fills through sroce_get_hw_stats().
 */
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_descs,
					  ARRAY_SIZE(sroce_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * sroce_get_hw_stats() - ib_device_ops.get_hw_stats
 * @ibdev: the device
 * @stats: where the values go
 * @port_num: the port
 * @index: the counter asked for; all of them are updated
 *
 * Context: Process context.
 * Return: the number of counters updated.
 */
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int c;

	for (c = 0; c < SROCE_CNT_MAX; c++)
		stats->value[c] = sroce_stats_sum(sdev, c);
	return SROCE_CNT_MAX;
}

static int sroce_objects_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < SROCE_OBJ_MAX; i++)
		seq_printf(m, "%s %ld\n", sroce_obj_names[i],
			   atomic_long_read(&sroce_objs[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_objects);

static int sroce_global_counters_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < SROCE_GCNT_MAX; i++)
		seq_printf(m, "%s %ld\n", sroce_gcnt_names[i],
			   atomic_long_read(&sroce_gcnt[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_global_counters);

/**
 * sroce_counters_init() - create the debugfs view of the module's counters
 *
 * Context: Process context (module init).
 * Return: 0.
 *
 * A missing debugfs is not an error: the counters still count.
 */
int sroce_counters_init(void)
{
	sroce_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("objects", 0444, sroce_debugfs, NULL,
			    &sroce_objects_fops);
	debugfs_create_file("counters", 0444, sroce_debugfs, NULL,
			    &sroce_global_counters_fops);
	return 0;
}

/**
 * sroce_counters_uninit() - remove what sroce_counters_init() created
 *
 * Context: Process context (module exit).
 */
void sroce_counters_uninit(void)
{
	debugfs_remove_recursive(sroce_debugfs);
}
