/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * compat.h - the one place where kernel API differences live.
 *
 * Force-included into every sroce source by Kbuild; no source file includes
 * it and no source file tests LINUX_VERSION_CODE.  Each entry is keyed on a
 * SROCE_HAVE_* macro that Kbuild defines from a probe of the headers being
 * built against (the probe list is in drivers/sroce/Kbuild), never on a
 * version number, because distributions backport API changes (the UDP
 * tunnel change below reached 7.0 and 7.1 distribution kernels).  Each entry
 * names the kernel version and the upstream change that moved the API, and
 * wraps it in an sroce_-named helper that the core files call instead.
 *
 * Supported: Linux 6.1 (Debian 12), 6.12 (Debian 13) and 7.x (built and
 * booted up to 7.3: Documentation/testing.rst).  The floor is enforced
 * once, by drivers/sroce/Kbuild.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/bits.h>
#include <linux/err.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/limits.h>
#include <linux/net.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <net/flow.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

/*
 * 6.2 ("RDMA: Extend RDMA user ABI to support atomic write"): the device
 * capability bit that announces ATOMIC WRITE to uverbs, a fixed ABI value
 * that the 6.1 headers do not name.  Probe: SROCE_HAVE_UVERBS_ATOMIC_WRITE.
 */
#ifdef SROCE_HAVE_UVERBS_ATOMIC_WRITE
#define SROCE_DEVICE_ATOMIC_WRITE IB_UVERBS_DEVICE_ATOMIC_WRITE
#else
#define SROCE_DEVICE_ATOMIC_WRITE BIT_ULL(40)
#endif

/*
 * 6.2 (the same series): kernel work requests may be IB_WR_ATOMIC_WRITE,
 * completing as IB_WC_ATOMIC_WRITE, which must be the values of sroce's
 * own SROCE_WR_ATOMIC_WRITE and SROCE_WC_ATOMIC_WRITE (sroce-abi.h; post.c
 * asserts it).  Before, only user QPs have it.  Probe:
 * SROCE_HAVE_WR_ATOMIC_WRITE.
 */
#ifdef SROCE_HAVE_WR_ATOMIC_WRITE
#define SROCE_KERNEL_ATOMIC_WRITE true
#define SROCE_IB_WR_ATOMIC_WRITE IB_WR_ATOMIC_WRITE
#define SROCE_IB_WC_ATOMIC_WRITE IB_WC_ATOMIC_WRITE
#else
#define SROCE_KERNEL_ATOMIC_WRITE false
#define SROCE_IB_WR_ATOMIC_WRITE SROCE_WR_ATOMIC_WRITE
#define SROCE_IB_WC_ATOMIC_WRITE SROCE_WC_ATOMIC_WRITE
#endif

/*
 * 6.2 ("RDMA: Extend RDMA user ABI to support flush"): the device
 * capabilities that announce FLUSH's two placement types to uverbs, and
 * the access rights a region needs for them, fixed ABI values that the
 * 6.1 headers do not name.  Before, uverbs refuses the rights at REG_MR,
 * and the provider hands them over in sroce's own driver data
 * (struct sroce_reg_mr_req).  Probe: SROCE_HAVE_UVERBS_FLUSH.
 */
#ifdef SROCE_HAVE_UVERBS_FLUSH
#define SROCE_DEVICE_FLUSH_GLOBAL IB_UVERBS_DEVICE_FLUSH_GLOBAL
#define SROCE_DEVICE_FLUSH_PERSISTENT IB_UVERBS_DEVICE_FLUSH_PERSISTENT
static_assert((int)IB_UVERBS_ACCESS_FLUSH_GLOBAL == (int)SROCE_MR_FLUSH_GLOBAL);
static_assert((int)IB_UVERBS_ACCESS_FLUSH_PERSISTENT ==
	      (int)SROCE_MR_FLUSH_PERSISTENT);
#else
#define SROCE_DEVICE_FLUSH_GLOBAL BIT_ULL(38)
#define SROCE_DEVICE_FLUSH_PERSISTENT BIT_ULL(39)
#endif

/*
 * 6.2 (the same series): kernel work requests may be IB_WR_FLUSH,
 * completing as IB_WC_FLUSH, the values of sroce's SROCE_WR_FLUSH and
 * SROCE_WC_FLUSH (post.c asserts it); kernel regions may carry the rights
 * IB_ACCESS_FLUSH_GLOBAL and IB_ACCESS_FLUSH_PERSISTENT, the values of
 * SROCE_MR_FLUSH_*.  Before, only user QPs flush, and only user regions
 * (through the driver data) take the rights.  Probe: SROCE_HAVE_WR_FLUSH.
 */
#ifdef SROCE_HAVE_WR_FLUSH
#define SROCE_KERNEL_FLUSH true
#define SROCE_IB_WR_FLUSH IB_WR_FLUSH
#define SROCE_IB_WC_FLUSH IB_WC_FLUSH
static_assert((int)IB_ACCESS_FLUSH_GLOBAL == (int)SROCE_MR_FLUSH_GLOBAL);
static_assert((int)IB_ACCESS_FLUSH_PERSISTENT == (int)SROCE_MR_FLUSH_PERSISTENT);
#else
#define SROCE_KERNEL_FLUSH false
#define SROCE_IB_WR_FLUSH SROCE_WR_FLUSH
#define SROCE_IB_WC_FLUSH SROCE_WC_FLUSH
#endif

/*
 * 7.2 ("udp_tunnel: pass struct sock to setup_udp_tunnel_sock() and
 * udp_tunnel_sock_release()"): the tunnel helpers take the struct sock
 * instead of the struct socket.  Probe: SROCE_HAVE_UDP_TUNNEL_SK.
 */
static inline void sroce_udp_tunnel_setup(struct net *net, struct socket *sock,
					  struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void sroce_udp_tunnel_release(struct socket *sock)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * 6.11 (dd6d7f8574d7, "RDMA: Pass entire uverbs attr bundle to create cq
 * function"): the last argument of ib_device_ops.create_cq is the uverbs
 * attribute bundle, not the udata; the udata is the bundle's driver_udata,
 * and a kernel CQ comes with no bundle at all.  sroce_create_cq() takes a
 * struct sroce_create_cq_arg and gets its udata (NULL for a kernel CQ) from
 * sroce_create_cq_udata().  Probe: SROCE_HAVE_CREATE_CQ_ATTRS.
 */
#ifdef SROCE_HAVE_CREATE_CQ_ATTRS
#include <rdma/uverbs_ioctl.h>
#define sroce_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
sroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define sroce_create_cq_arg ib_udata
struct ib_udata;
static inline struct ib_udata *sroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * 6.16 ("timers: Rename from_timer() to timer_container_of()"): the old
 * name is gone in 7.x.  Probe: SROCE_HAVE_TIMER_CONTAINER_OF.
 */
#ifdef SROCE_HAVE_TIMER_CONTAINER_OF
#define sroce_timer_container(var, timer, field) \
	timer_container_of(var, timer, field)
#else
#define sroce_timer_container(var, timer, field) from_timer(var, timer, field)
#endif

/*
 * 6.13 ("hrtimers: Introduce hrtimer_setup() to replace hrtimer_init()"):
 * the callback is passed in; hrtimer_init() is gone in 7.x.  Probe:
 * SROCE_HAVE_HRTIMER_SETUP.
 */
static inline void sroce_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock, enum hrtimer_mode mode)
{
#ifdef SROCE_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * 6.15 added a per-netdev instance lock, taken for "ops-locked" netdevs
 * (netdev_need_ops_lock()) inside rtnl_lock, and held around the netdev
 * notifiers of such netdevs.  7.x's __ethtool_get_link_ksettings() takes
 * that lock, or rtnl_lock for the others, itself: called from a netdev
 * notifier it deadlocked on rtnl_lock (deleting the netdev of a link hung
 * "ip" on 7.3).  netif_get_link_ksettings() is the form for callers that
 * hold them, as sroce's do: the notifier, and sroce_net_bind(), which
 * takes the instance lock between rtnl_lock and sroce_bind_lock, the
 * notifier's order.  Probes: SROCE_HAVE_NETDEV_LOCK_OPS,
 * SROCE_HAVE_NETIF_GET_LINK_KSETTINGS.
 */
#ifdef SROCE_HAVE_NETDEV_LOCK_OPS
#include <net/netdev_lock.h>
static inline void sroce_netdev_lock_ops(struct net_device *ndev)
{
	netdev_lock_ops(ndev);
}

static inline void sroce_netdev_unlock_ops(struct net_device *ndev)
{
	netdev_unlock_ops(ndev);
}
#else
static inline void sroce_netdev_lock_ops(struct net_device *ndev) { }
static inline void sroce_netdev_unlock_ops(struct net_device *ndev) { }
#endif

static inline int sroce_get_link_ksettings(struct net_device *ndev,
					   struct ethtool_link_ksettings *ks)
{
#ifdef SROCE_HAVE_NETIF_GET_LINK_KSETTINGS
	return netif_get_link_ksettings(ndev, ks);
#else
	return __ethtool_get_link_ksettings(ndev, ks);
#endif
}

/*
 * 6.17 ("workqueue: Add new WQ_PERCPU flag"): a workqueue says whether it
 * is bound to CPUs, and 7.x (by 7.3) warns at alloc_workqueue() when it
 * says neither WQ_PERCPU nor WQ_UNBOUND -- a panic under panic_on_warn.
 * sroce_resp_wq is per-CPU (a response stream stays on the CPU that
 * started it).  Probe: SROCE_HAVE_WQ_PERCPU.
 */
#ifdef SROCE_HAVE_WQ_PERCPU
#define SROCE_WQ_PERCPU WQ_PERCPU
#else
#define SROCE_WQ_PERCPU 0
#endif

/*
 * 6.17: ib_device_ops.reg_user_mr takes a DMA handle (for TLP processing
 * hints) before the udata.  sroce allocates no DMA handles, so none can
 * reach it; one that did would be refused.  device.c points the op at
 * sroce_reg_user_mr_op.  Probe: SROCE_HAVE_REG_USER_MR_DMAH.
 */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
#ifdef SROCE_HAVE_REG_USER_MR_DMAH
struct ib_dmah;
static inline struct ib_mr *
sroce_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
		     int access, struct ib_dmah *dmah, struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return sroce_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#else
#define sroce_reg_user_mr_op sroce_reg_user_mr
#endif

/*
 * 7.1: the op that resizes a CQ is ib_device_ops.resize_user_cq, with an
 * unsigned size; resize_cq is gone.  device.c sets the op with
 * SROCE_OP_RESIZE_CQ.  Probe: SROCE_HAVE_RESIZE_USER_CQ.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
#ifdef SROCE_HAVE_RESIZE_USER_CQ
static inline int sroce_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
				       struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return sroce_resize_cq(ibcq, cqe, udata);
}

#define SROCE_OP_RESIZE_CQ .resize_user_cq = sroce_resize_user_cq
#else
#define SROCE_OP_RESIZE_CQ .resize_cq = sroce_resize_cq
#endif

/*
 * 7.2 (umem moved into ib_core): user memory is pinned with
 * ib_umem_get_va(), an inline over ib_umem_get_attr_or_va(); ib_umem_get()
 * is gone.  Probe: SROCE_HAVE_UMEM_GET_VA.
 */
static inline struct ib_umem *sroce_umem_get(struct ib_device *ibdev,
					     unsigned long addr, size_t size,
					     int access)
{
#ifdef SROCE_HAVE_UMEM_GET_VA
	return ib_umem_get_va(ibdev, addr, size, access);
#else
	return ib_umem_get(ibdev, addr, size, access);
#endif
}

/*
 * After 6.12 (7.3 has it): struct flowi4 carries the DSCP (flowi4_dscp)
 * instead of the old TOS bits (flowi4_tos).  Each kernel gets the
 * packet's traffic class in the form its own route lookups use.
 * Probe: SROCE_HAVE_FLOWI4_DSCP.
 */
static inline void sroce_flowi4_set_tos(struct flowi4 *fl4, u8 tos)
{
#ifdef SROCE_HAVE_FLOWI4_DSCP
	fl4->flowi4_dscp = inet_dsfield_to_dscp(tos);
#else
	fl4->flowi4_tos = RT_TOS(tos);
#endif
}

/*
 * ib_device_get_by_name() is neither declared nor exported by 7.3 (6.12
 * has it).  Without it sroce cannot refuse a taken name before it sets a
 * device up; ib_register_device() refuses it then (-ENFILE), which
 * sroce_dev_newlink() reports as the name being in use either way.
 * Probe: SROCE_HAVE_DEVICE_GET_BY_NAME.
 */
static inline bool sroce_ib_name_taken(const char *name)
{
#ifdef SROCE_HAVE_DEVICE_GET_BY_NAME
	struct ib_device *other = ib_device_get_by_name(name,
							RDMA_DRIVER_UNKNOWN);

	if (other)
		ib_device_put(other);
	return other;
#else
	return false;
#endif
}

/*
 * 6.10 ("tracing/treewide: Remove second parameter of __assign_str()"):
 * the source string of a __string() field is named once, in
 * TP_STRUCT__entry, and __assign_str(dst) copies it; 6.1's
 * __assign_str(dst, src) names it again.  trace.h's events call
 * sroce_assign_str(dst, src).  Probe: SROCE_HAVE_ASSIGN_STR_DST.
 */
#ifdef SROCE_HAVE_ASSIGN_STR_DST
#define sroce_assign_str(dst, src) __assign_str(dst)
#else
#define sroce_assign_str(dst, src) __assign_str(dst, src)
#endif

/*
 * 6.16 ("RDMA/umem: Store ODP access mask information in PFN"): an ODP
 * umem keeps its pages in an HMM DMA map (umem_odp->map.pfn_list, the
 * access in each entry's HMM_PFN_* bits) instead of a dma_list whose low
 * bits said ODP_READ/ODP_WRITE.  sroce has no DMA device, so on either
 * form a page present is a kernel address.  sroce_odp_page_va() is the
 * kernel address of page @idx of @odp if it is mapped, and writable when
 * @write, or NULL; sroce_odp_access_mask() is what
 * ib_umem_odp_map_dma_and_lock() takes to map pages readable, or also
 * writable (HMM_PFN_WRITE, or nothing for read; before: the ODP_*_BITs).
 * Probe: SROCE_HAVE_ODP_HMM_DMA_MAP.
 */
#include <linux/hmm.h>
#include <rdma/ib_umem_odp.h>
static inline void *sroce_odp_page_va(struct ib_umem_odp *odp,
				      unsigned long idx, bool write)
{
#ifdef SROCE_HAVE_ODP_HMM_DMA_MAP
	unsigned long pfn = READ_ONCE(odp->map.pfn_list[idx]);

	if (!(pfn & HMM_PFN_VALID) || (write && !(pfn & HMM_PFN_WRITE)))
		return NULL;
	return page_address(hmm_pfn_to_page(pfn));
#else
	dma_addr_t dma = READ_ONCE(odp->dma_list[idx]);

	if (!dma || (write && !(dma & ODP_WRITE_ALLOWED_BIT)))
		return NULL;
	return (void *)(uintptr_t)(dma & ODP_DMA_ADDR_MASK);
#endif
}

static inline u64 sroce_odp_access_mask(bool write)
{
#ifdef SROCE_HAVE_ODP_HMM_DMA_MAP
	return write ? HMM_PFN_WRITE : 0;
#else
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
#endif
}

#endif /* SROCE_COMPAT_H */
