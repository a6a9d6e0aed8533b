// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cc_params.c - the congestion control parameters of a device, one sysfs
 * file each in /sys/class/infiniband/<device>/cc/.
 *
 * Files, because a user must be able to script them and the rdma tool has
 * no command that sets a driver's parameters over netlink.  Each holds one
 * decimal number within the range SROCE_CC_PARAMS gives it (cc.h); a write
 * out of range fails with EINVAL and changes nothing.  A new value applies
 * to the next packet, CNP or rate event of every QP of the device.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/sysfs.h>

#include "sroce.h"

struct sroce_cc_range {
	u32 def;
	u32 min;
	u32 max;
};

#define SROCE_CC_PARAM(id, name, d, lo, hi)				\
	[SROCE_CC_##id] = { .def = (d), .min = (lo), .max = (hi) },
static const struct sroce_cc_range sroce_cc_ranges[SROCE_CC_NR_PARAMS] = {
	SROCE_LIST_EACH(SROCE_CC_PARAMS)
};

#undef SROCE_CC_PARAM

static struct sroce_dev *sroce_cc_dev(struct device *dev)
{
	return rdma_device_to_drv_device(dev, struct sroce_dev, ibdev);
}

static enum sroce_cc_param sroce_cc_which(struct device_attribute *attr)
{
	return (uintptr_t)container_of(attr, struct dev_ext_attribute, attr)->var;
}

static ssize_t sroce_cc_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  sroce_cc_param(sroce_cc_dev(dev), sroce_cc_which(attr)));
}

static ssize_t sroce_cc_store(struct device *dev, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	enum sroce_cc_param p = sroce_cc_which(attr);
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	if (val < sroce_cc_ranges[p].min || val > sroce_cc_ranges[p].max)
		return -EINVAL;
	WRITE_ONCE(sroce_cc_dev(dev)->cc[p], val);
	return count;
}

#define SROCE_CC_PARAM(id, name, d, lo, hi)				\
	[SROCE_CC_##id] = {						\
		.attr = __ATTR(name, 0644, sroce_cc_show, sroce_cc_store), \
		.var = (void *)SROCE_CC_##id,				\
	},
static struct dev_ext_attribute sroce_cc_dev_attrs[SROCE_CC_NR_PARAMS] = {
	SROCE_LIST_EACH(SROCE_CC_PARAMS)
};

#undef SROCE_CC_PARAM

#define SROCE_CC_PARAM(id, name, d, lo, hi)				\
	[SROCE_CC_##id] = &sroce_cc_dev_attrs[SROCE_CC_##id].attr.attr,
static struct attribute *sroce_cc_attrs[SROCE_CC_NR_PARAMS + 1] = {
	SROCE_LIST_EACH(SROCE_CC_PARAMS)
};

#undef SROCE_CC_PARAM

/* ib_device_ops.device_group: the cc/ directory of the ib_device. */
const struct attribute_group sroce_cc_attr_group = {
	.name = "cc",
	.attrs = sroce_cc_attrs,
};

/**
 * sroce_cc_params_init() - a new device's parameters: the defaults
 * @sdev: the device, not yet registered
 *
 * Context: Any context.
 */
void sroce_cc_params_init(struct sroce_dev *sdev)
{
	int i;

	for (i = 0; i < SROCE_CC_NR_PARAMS; i++)
		sdev->cc[i] = sroce_cc_ranges[i].def;
}
