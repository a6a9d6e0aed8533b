/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kmod_dev.h - find an RDMA device by name from a test module.
 *
 * ib_device_get_by_name() is not exported by every kernel the tests run on
 * (7.3 has none), so the test modules look a device up the way any ULP
 * sees devices: an ib_client whose add() is called for every registered
 * device while the client registers.  One lookup at a time (module init).
 */
#ifndef SROCE_KMOD_DEV_H
#define SROCE_KMOD_DEV_H

#include <linux/string.h>
#include <rdma/ib_verbs.h>

static const char *kmod_dev_wanted;
static struct ib_device *kmod_dev_found;

/* Context: process context, under ib_core's client registration. */
static int kmod_dev_add(struct ib_device *ibdev)
{
	if (!kmod_dev_found && !strcmp(dev_name(&ibdev->dev), kmod_dev_wanted) &&
	    ib_device_try_get(ibdev))
		kmod_dev_found = ibdev;
	/* No client data: remove() is not called for this device. */
	return -EOPNOTSUPP;
}

static void kmod_dev_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client kmod_dev_client = {
	.name = "sroce_test_lookup",
	.add = kmod_dev_add,
	.remove = kmod_dev_remove,
};

/**
 * kmod_dev_get() - look up a registered RDMA device by name
 * @name: the device's name
 *
 * Context: Process context. May sleep.
 * Return: the device, with a registration reference (ib_device_put() it),
 * or NULL if none is called @name.
 */
static struct ib_device *kmod_dev_get(const char *name)
{
	kmod_dev_wanted = name;
	kmod_dev_found = NULL;
	if (ib_register_client(&kmod_dev_client))
		return NULL;
	ib_unregister_client(&kmod_dev_client);
	return kmod_dev_found;
}

#endif /* SROCE_KMOD_DEV_H */
