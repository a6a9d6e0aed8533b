/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce.h - core structures of the sroce software RoCEv2 device, and the
 * cross-file API, grouped by the file that implements it.
 *
 * Locks, outermost first (Documentation/design.rst has the full table):
 *   rtnl_lock            taken by the netdev notifier and by sroce_net_bind()
 *   sroce_bind_lock      (net.c) device <-> netdev binding, the netdev table
 *   sroce_net.lock       (net.c) one namespace's sockets and their users
 *   sroce_devices_lock   (device.c) the list of all devices, for rmmod
 * sroce_devices_lock is never held while calling into ib_core.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

#include "counters.h"

/* The device's only port. */
#define SROCE_PORT 1

/*
 * Bytes of headers around a path-MTU payload in the largest packet sroce
 * can send: IPv6 40, UDP 8, BTH 12, XRCETH 4, AtomicETH 28, ICRC 4.  The
 * same allowance ib_core's iboe_get_mtu() makes, so the active MTU sroce
 * reports and the path MTU rdma_cm computes agree.
 */
#define SROCE_MAX_HDR_OVERHEAD 96

/*
 * The reserved L_Key of kernel PDs (IBK_LOCAL_DMA_LKEY): an SGE carrying it
 * addresses kernel virtual memory directly, without a memory region.  Only
 * kernel QPs may use it; memory region keys never take this value.
 */
#define SROCE_LOCAL_DMA_LKEY 0

enum sroce_limits {
	SROCE_MAX_PD = 1 << 16,		/* protection domains per device */
	SROCE_GID_TBL_LEN = 128,	/* GIDs the core may fill per port */
	SROCE_MAX_MSG_SZ = 1U << 31,	/* largest message, in bytes */
};

/**
 * struct sroce_dev - one sroce ib_device, bound to one Ethernet netdev
 * @ibdev: the core's device; first member, ib_alloc_device() requires it
 * @list: entry in the device list (device.c), under sroce_devices_lock
 * @bind_node: entry in the netdev table while bound; written under
 *	sroce_bind_lock, read under RCU by the receive path
 * @ndev: the lower netdev while bound, NULL after; written under
 *	sroce_bind_lock, read under RCU or sroce_bind_lock
 * @ndev_tracker: tracks the reference sroce holds on @ndev while bound
 * @snet: the namespace's UDP sockets, one user reference held while bound
 * @bound: @ndev, @snet and @bind_node are valid (sroce_bind_lock)
 * @registered: ib_register_device() completed (sroce_bind_lock); from then
 *	on losing the netdev must unregister the device
 * @port_state: enum ib_port_state; written under sroce_bind_lock, read
 *	locklessly with READ_ONCE()
 * @active_mtu: enum ib_mtu derived from the netdev MTU, 0 when the netdev
 *	MTU is too small for any IB MTU; same rules as @port_state
 * @port_speed: enum ib_port_speed nearest the netdev's link speed; same
 *	rules as @port_state
 * @port_width: enum ib_port_width going with @port_speed
 * @num_pd: protection domains allocated, bounded by @attr.max_pd
 * @stats: per-CPU event counters, see counters.h
 * @attr: what query_device reports; set at creation, then read-only
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct list_head list;
	struct hlist_node bind_node;
	struct net_device __rcu *ndev;
	netdevice_tracker ndev_tracker;
	struct sroce_net *snet;
	bool bound;
	bool registered;
	u32 port_state;
	u32 active_mtu;
	u16 port_speed;
	u8 port_width;
	atomic_t num_pd;
	struct sroce_stats __percpu *stats;
	struct ib_device_attr attr;
};

/**
 * struct sroce_ucontext - one process's open device context
 * @ibuc: the core's context; the core allocates this struct around it
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the core's PD; the core allocates this struct around it
 */
struct sroce_pd {
	struct ib_pd ibpd;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

#define sroce_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

/* device.c */
int sroce_dev_newlink(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_unregister_all(void);
void sroce_dev_port_update(struct sroce_dev *sdev, struct net_device *ndev);

/* net.c */
extern struct mutex sroce_bind_lock;
int sroce_net_init(void);
void sroce_net_uninit(void);
int sroce_net_bind(struct sroce_dev *sdev, struct net_device *ndev);
void sroce_net_unbind(struct sroce_dev *sdev);
bool sroce_net_mark_registered(struct sroce_dev *sdev);

/* verbs.c */
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* SROCE_H */
