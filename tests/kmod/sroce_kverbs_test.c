// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_kverbs_test.c - exercises an sroce device through the kernel verbs
 * API that kernel ULPs use, from kernel context.
 *
 *   insmod sroce_kverbs_test.ko dev=sroce0 [expect_ipv4=10.5.0.1]
 *          [expect_mtu=1024] [expect_max_pd=65536]
 *
 * Every case prints "sroce_kverbs_test: <case>: pass" or
 * "sroce_kverbs_test: <case>: FAIL <why>"; the module refuses to load
 * (-EIO) if any case failed, so the harness can test the insmod status and
 * read the log for the details.  On success it stays loaded until rmmod.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/module.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kmod_dev.h"

static char *dev = "sroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "sroce device to test");

static char *expect_ipv4;
module_param(expect_ipv4, charp, 0444);
MODULE_PARM_DESC(expect_ipv4, "IPv4 address that must appear as a RoCEv2 GID");

static int expect_mtu;
module_param(expect_mtu, int, 0444);
MODULE_PARM_DESC(expect_mtu, "expected active MTU in bytes (0: any)");

static int expect_max_pd;
module_param(expect_max_pd, int, 0444);
MODULE_PARM_DESC(expect_max_pd, "expected max_pd (0: any non-zero)");

static int failures;

/* Report a failed check of case @name; returns @ok. */
static __printf(3, 4) bool check(const char *name, bool ok,
				 const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (ok)
		return true;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("%s: FAIL %pV\n", name, &vaf);
	va_end(args);
	failures++;
	return false;
}

static void report_pass(const char *name)
{
	pr_info("%s: pass\n", name);
}

static void test_device_attrs(struct ib_device *ibdev)
{
	const struct ib_device_attr *attr = &ibdev->attrs;
	const char *t = "device_attrs";

	if (!check(t, ibdev->node_type == RDMA_NODE_IB_CA, "node type %d",
		   ibdev->node_type) ||
	    !check(t, ibdev->phys_port_cnt == 1, "%u ports",
		   ibdev->phys_port_cnt) ||
	    !check(t, attr->kernel_cap_flags & IBK_ALLOW_USER_UNREG,
		   "rdma link delete not allowed") ||
	    !check(t, attr->max_pd > 0, "max_pd is 0") ||
	    !check(t, !expect_max_pd || attr->max_pd == expect_max_pd,
		   "max_pd %d, expected %d", attr->max_pd, expect_max_pd) ||
	    !check(t, rdma_protocol_roce_udp_encap(ibdev, 1),
		   "port 1 is not RoCEv2"))
		return;
	report_pass(t);
}

static void test_query_port(struct ib_device *ibdev)
{
	const char *t = "query_port";
	struct ib_port_attr attr;
	int err, mtu;

	err = ib_query_port(ibdev, 1, &attr);
	if (!check(t, !err, "ib_query_port: %d", err))
		return;
	mtu = ib_mtu_enum_to_int(attr.active_mtu);
	if (!check(t, attr.state == IB_PORT_ACTIVE, "state %d", attr.state) ||
	    !check(t, attr.max_mtu == IB_MTU_4096, "max_mtu %d",
		   attr.max_mtu) ||
	    !check(t, !expect_mtu || mtu == expect_mtu,
		   "active_mtu %d, expected %d", mtu, expect_mtu) ||
	    !check(t, rdma_port_get_link_layer(ibdev, 1) ==
		   IB_LINK_LAYER_ETHERNET, "link layer is not Ethernet"))
		return;
	err = ib_query_port(ibdev, 2, &attr);
	if (!check(t, err == -EINVAL, "port 2 gave %d", err))
		return;
	report_pass(t);
}

static void test_query_pkey(struct ib_device *ibdev)
{
	const char *t = "query_pkey";
	u16 pkey = 0;
	int err;

	err = ib_query_pkey(ibdev, 1, 0, &pkey);
	if (!check(t, !err && pkey == 0xffff, "err %d pkey %#x", err, pkey))
		return;
	err = ib_query_pkey(ibdev, 1, 1, &pkey);
	if (!check(t, err, "index 1 accepted"))
		return;
	report_pass(t);
}

static bool gid_is_ipv4(const union ib_gid *gid, __be32 addr)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw) &&
	       !memcmp(&gid->raw[12], &addr, 4);
}

/* Every GID is RoCE v2; a link-local one and @expect_ipv4 are there. */
static void test_query_gid(struct ib_device *ibdev)
{
	bool found_ll = false, found_v4 = !expect_ipv4, all_v2 = true;
	int i, len = ibdev->port_data[1].immutable.gid_tbl_len;
	const struct ib_gid_attr *gattr;
	const char *t = "query_gid";
	__be32 want = 0;

	if (expect_ipv4 &&
	    !check(t, in4_pton(expect_ipv4, -1, (u8 *)&want, -1, NULL),
		   "bad expect_ipv4 %s", expect_ipv4))
		return;
	for (i = 0; i < len; i++) {
		gattr = rdma_get_gid_attr(ibdev, 1, i);
		if (IS_ERR(gattr))
			continue;
		all_v2 &= gattr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP;
		found_ll |= gattr->gid.raw[0] == 0xfe &&
			    gattr->gid.raw[1] == 0x80;
		found_v4 |= expect_ipv4 && gid_is_ipv4(&gattr->gid, want);
		rdma_put_gid_attr(gattr);
	}
	if (!check(t, all_v2, "a GID is not RoCE v2") ||
	    !check(t, found_ll, "no link-local GID") ||
	    !check(t, found_v4, "no GID for %s", expect_ipv4))
		return;
	report_pass(t);
}

static void test_alloc_pd(struct ib_device *ibdev)
{
	const char *t = "alloc_pd";
	struct ib_pd *pds[16];
	long err = 0;
	int i, n;

	for (n = 0; n < ARRAY_SIZE(pds); n++) {
		pds[n] = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(pds[n])) {
			err = PTR_ERR(pds[n]);
			break;
		}
		if (!check(t, pds[n]->local_dma_lkey == ibdev->local_dma_lkey,
			   "PD lkey %#x", pds[n]->local_dma_lkey))
			break;
	}
	for (i = 0; i < n; i++)
		ib_dealloc_pd(pds[i]);
	if (!check(t, n == ARRAY_SIZE(pds), "PD %d: %ld", n, err))
		return;
	report_pass(t);
}

static int __init sroce_kverbs_test_init(void)
{
	struct ib_device *ibdev;

	ibdev = kmod_dev_get(dev);
	if (!ibdev) {
		pr_err("device: FAIL no device %s\n", dev);
		return -ENODEV;
	}
	if (!ibdev->ops.owner || strcmp(module_name(ibdev->ops.owner),
					"sroce")) {
		pr_err("device: FAIL %s is not an sroce device\n", dev);
		ib_device_put(ibdev);
		return -ENODEV;
	}
	test_device_attrs(ibdev);
	test_query_port(ibdev);
	test_query_pkey(ibdev);
	test_query_gid(ibdev);
	test_alloc_pd(ibdev);
	ib_device_put(ibdev);
	pr_info("%d failed\n", failures);
	return failures ? -EIO : 0;
}

static void __exit sroce_kverbs_test_exit(void)
{
}

module_init(sroce_kverbs_test_init);
module_exit(sroce_kverbs_test_exit);

MODULE_DESCRIPTION("Kernel verbs tests for sroce devices");
MODULE_LICENSE("Dual BSD/GPL");
