// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main.c - module init and exit: each subsystem set up in order and taken
 * down in reverse.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "opcode.h"
#include "sroce.h"

/*
 * Requester and event work of every QP.  Unbound, so work runs
 * on any CPU, and WQ_MEM_RECLAIM, because storage ULPs (NVMe-oF, NFS) need
 * it to make progress while the system reclaims memory.
 */
struct workqueue_struct *sroce_wq;

/*
 * The responder's work (READ responses and ACKs past the inline budget).
 * Per-CPU, not unbound: it is queued from the receive softirq that sent
 * the first responses, and must send the rest from that CPU, or the two
 * halves of one response stream enter the network from two CPUs (two
 * transmit queues; two backlogs on a veth) and overtake each other.
 */
struct workqueue_struct *sroce_resp_wq;

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_dev_newlink,
};

static int __init sroce_init(void)
{
	int err;

	sroce_opcode_init();
	err = sroce_selftest();
	if (err)
		return err;
	err = sroce_counters_init();
	if (err)
		return err;
	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!sroce_wq) {
		err = -ENOMEM;
		goto err_uninit_counters;
	}
	sroce_resp_wq = alloc_workqueue("sroce_resp",
					SROCE_WQ_PERCPU | WQ_MEM_RECLAIM, 0);
	if (!sroce_resp_wq) {
		err = -ENOMEM;
		goto err_destroy_wq;
	}
	err = sroce_net_init();
	if (err)
		goto err_destroy_resp_wq;
	rdma_link_register(&sroce_link_ops);
	pr_info("loaded\n");
	return 0;

err_destroy_resp_wq:
	destroy_workqueue(sroce_resp_wq);
err_destroy_wq:
	destroy_workqueue(sroce_wq);
err_uninit_counters:
	sroce_counters_uninit();
	return err;
}

static void __exit sroce_exit(void)
{
	/* Waits for a "rdma link add" in progress; none can start after. */
	rdma_link_unregister(&sroce_link_ops);
	sroce_dev_unregister_all();
	sroce_net_uninit();
	destroy_workqueue(sroce_resp_wq);
	destroy_workqueue(sroce_wq);
	sroce_counters_uninit();
	pr_info("unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce authors");
MODULE_DESCRIPTION("Software RoCEv2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
