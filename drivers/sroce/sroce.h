/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce.h - core structures of the sroce software RoCEv2 device, and the
 * cross-file API, grouped by the file that implements it.
 *
 * Locks, outermost first (Documentation/design.rst has the full table):
 *   rtnl_lock            taken by the netdev notifier and by sroce_net_bind()
 *   sroce_bind_lock      (net.c) device <-> netdev binding, the netdev table
 *   sroce_net.lock       (net.c) one namespace's sockets and their users
 *   sroce_mcast.lock     (mcast.c) a device's multicast groups
 *   sroce_devices_lock   (device.c) the list of all devices, for rmmod
 *   sroce_qp.modify_lock (qp.c, qp_state.c) serialises modify_qp and
 *                        query_qp
 *   sroce_resp.lock      (resp.c, owed.c) the responder; softirq, _bh
 *                        elsewhere
 *   sroce_sq.lock        (req.c, comp.c) requester and completer; irqsave
 *   sroce_rq.lock        (post.c) kernel receive queue producers, SRQ
 *                        consumers, a tag-matching SRQ's list (tm.c);
 *                        irqsave
 *   sroce_cq.lock        (cq.c) completion queue producer and kernel
 *                        consumers; irqsave
 * sroce_devices_lock and sroce_bind_lock are never held across a call into
 * ib_core that waits for a device unregistration.  No sroce lock is held
 * when a ULP's completion or event handler runs.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/irq_work.h>
#include <linux/netdevice.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <net/inet_ecn.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/sroce-abi.h>

#include "cc.h"
#include "counters.h"
#include "hdr.h"
#include "opcode.h"
#include "pool.h"
#include "queue.h"
#include "runner.h"

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

/*
 * Allocation flags for what a verb allocates on its caller's behalf: all
 * of it is charged to the caller's memory cgroup.  SROCE_GFP_OBJ for
 * memory of a fixed size per object; SROCE_GFP_SIZED where the caller
 * chooses the size (queue depths, SGE counts, inline size, region
 * length): such an allocation fails with -ENOMEM at the cgroup's limit,
 * without a warning and without waking the OOM killer.
 */
#define SROCE_GFP_OBJ GFP_KERNEL_ACCOUNT
#define SROCE_GFP_SIZED (GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/* QP numbers sroce hands out; 0 and 1 are the special QPs. */
#define SROCE_QPN_MIN 16
#define SROCE_QPN_MAX 0xffffff
#define SROCE_GSI_QPN 1

enum sroce_limits {
	SROCE_MAX_PD = 1 << 16,		/* protection domains per device */
	SROCE_GID_TBL_LEN = 128,	/* GIDs the core may fill per port */
	SROCE_MAX_MSG_SZ = 1U << 31,	/* largest message, in bytes */
	SROCE_MAX_QP = 1 << 16,		/* queue pairs per device */
	SROCE_MAX_QP_WR = 1 << 14,	/* work requests per queue */
	SROCE_MAX_SGE = 32,		/* SGEs per work request */
	SROCE_MAX_INLINE = 512,		/* bytes of inline data */
	SROCE_MAX_CQ = 1 << 16,		/* completion queues per device */
	/*
	 * Entries per completion queue (its ring has one slot more).
	 * libfabric's ofi_rxm asks its verbs provider for a CQ of 2^18
	 * entries by default (queue depths times FI_UNIVERSE_SIZE, 256).
	 */
	SROCE_MAX_CQE = (1 << 20) - 1,
	SROCE_MAX_MR = 1 << 20,		/* memory regions per device */
	SROCE_MAX_MW = 1 << 20,		/* memory windows per device */
	SROCE_MAX_FR_PAGES = 512,	/* pages of a fast-registration MR */
	SROCE_MAX_SRQ = 1 << 16,	/* shared receive queues per device */
	SROCE_MAX_AH = 1 << 16,		/* address handles per device */
	SROCE_MAX_MCAST_GRP = 1024,	/* multicast groups per device */
	SROCE_MAX_MCAST_QP_ATTACH = 32,	/* QPs attached to one group */
	/* QP attachments to multicast groups, per device */
	SROCE_MAX_TOTAL_MCAST_QP_ATTACH = 4096,
	SROCE_MAX_RD_ATOMIC = 128,	/* READ/atomic requests in flight */
	SROCE_LOCAL_CA_ACK_DELAY = 15,	/* 4.096 us * 2^15 */
	SROCE_MAX_INFLIGHT = 128,	/* unacknowledged packets per QP */
	SROCE_ACKREQ_EVERY = 32,	/* packets between AckReq bits */
	/*
	 * Work requests fetched, flushed or completed per hold of a queue's
	 * lock, which may have interrupts off: never a whole ring at once.
	 */
	SROCE_LOCK_BATCH = 64,
	/*
	 * Work requests a QP of a tag-matching SRQ may have queued itself
	 * (rendezvous READs and FINs, tm.c), in send queue slots beyond the
	 * ring's.
	 */
	SROCE_TM_QP_WQES = 16,
};

/**
 * struct sroce_mcast - a device's multicast groups (mcast.c)
 * @lock: serialises attaching and detaching; guards @groups, every group's
 *	member list and the counts; taken inside rtnl_lock and sroce_bind_lock
 *	(joining an IP group needs rtnl, and the netdev binding must hold still)
 * @groups: struct sroce_mcast_grp by MGID; the receive path reads it under
 *	RCU
 * @num_grp: groups, bounded by SROCE_MAX_MCAST_GRP
 * @num_attach: QP attachments over every group, bounded by
 *	SROCE_MAX_TOTAL_MCAST_QP_ATTACH
 */
struct sroce_mcast {
	struct mutex lock; /* attach and detach; see above */
	DECLARE_HASHTABLE(groups, 5);
	u32 num_grp;
	u32 num_attach;
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
 * @net: the namespace of @ndev while bound (not referenced: it outlives
 *	every netdev in it); read under RCU like @ndev
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
 * @link_mbps: the netdev's link speed in Mb/s (1000 when it has none): the
 *	reaction point's maximum rate; same rules as @port_state
 * @num_pd: protection domains allocated, bounded by @attr.max_pd
 * @num_cq: completion queues allocated, bounded by @attr.max_cq
 * @num_srq: shared receive queues allocated, bounded by @attr.max_srq
 * @num_dm: device memory allocations, bounded by SROCE_DM_MAX
 * @num_odp_mr: on-demand regions alive (odp.c): while there are none, a
 *	READ or atomic looks up none of its local keys before it is sent
 * @xsrq_pool: XRC SRQ number -> struct sroce_srq (xrc.c), bounded by
 *	@attr.max_srq
 * @srq_serial: the last SRQ serial handed out (struct sroce_srq, @serial)
 * @qp_pool: QP number -> struct sroce_qp
 * @qp_serial: the last QP serial handed out (struct sroce_qp, @serial)
 * @mr_pool: memory key index -> struct sroce_mr
 * @mw_pool: memory key index -> struct sroce_mw
 * @ah_pool: user address handle number -> struct sroce_ah
 * @mcast: multicast groups and the QPs attached to them
 * @stats: per-CPU event counters, see counters.h
 * @attr: what query_device reports; set at creation, then read-only
 * @cc: congestion control parameters (enum sroce_cc_param); written by
 *	sysfs (cc_params.c) and read with WRITE_ONCE()/READ_ONCE()
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct list_head list;
	struct hlist_node bind_node;
	struct net_device __rcu *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	struct sroce_net *snet;
	bool bound;
	bool registered;
	u32 port_state;
	u32 active_mtu;
	u16 port_speed;
	u8 port_width;
	u32 link_mbps;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_srq;
	atomic_t num_dm;
	atomic_t num_odp_mr;
	struct sroce_pool xsrq_pool;
	atomic64_t srq_serial;
	struct sroce_pool qp_pool;
	atomic64_t qp_serial;
	struct sroce_pool mr_pool;
	struct sroce_pool mw_pool;
	struct sroce_pool ah_pool;
	struct sroce_mcast mcast;
	struct sroce_stats __percpu *stats;
	struct ib_device_attr attr;
	u32 cc[SROCE_CC_NR_PARAMS];
};

/**
 * sroce_cc_param() - a congestion control parameter of a device
 * @sdev: the device
 * @p: which
 *
 * Context: Any context.
 * Return: its value, in the units cc.h gives.
 */
static inline u32 sroce_cc_param(const struct sroce_dev *sdev,
				 enum sroce_cc_param p)
{
	return READ_ONCE(sdev->cc[p]);
}

/**
 * sroce_cc_tos() - the IP TOS/traffic class a packet goes out with
 * @sdev: the device sending
 * @tos: the address's traffic class
 *
 * ECN-capable, ECT(0), while the device's reaction point is on: it will
 * act on the CNPs that marks bring back.
 *
 * Context: Any context.
 * Return: @tos with the ECN field set.
 */
static inline u8 sroce_cc_tos(const struct sroce_dev *sdev, u8 tos)
{
	if (!sroce_cc_param(sdev, SROCE_CC_RP_ENABLE))
		return tos;
	return (tos & ~INET_ECN_MASK) | INET_ECN_ECT_0;
}

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

/**
 * struct sroce_av - where packets of an address handle or a connected QP go
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @tos: traffic class (IPv4 TOS, IPv6 traffic class)
 * @ttl: hop limit
 * @flow_label: IPv6 flow label, 20 bits
 * @sgid_index: the source GID's index, for queries
 * @saddr: source address; IPv4 as an IPv4-mapped IPv6 address
 * @daddr: destination address, likewise
 * @dmac: the destination MAC the core resolved, for queries (sroce itself
 *	routes through the IP stack)
 * @ifindex: the netdev of the source GID, which packets leave through: the
 *	device's own, or one of its VLANs (0 if unknown: the device's own)
 */
struct sroce_av {
	u8 network_type;
	u8 tos;
	u8 ttl;
	u8 sgid_index;
	u32 flow_label;
	int ifindex;
	struct in6_addr saddr;
	struct in6_addr daddr;
	u8 dmac[ETH_ALEN];
};

/**
 * struct sroce_ah_num - what a user AH's number maps to (sroce_dev.ah_pool)
 * @av: a copy of the AH's destination
 * @pd: the AH's PD, compared with the sending QP's, never dereferenced
 * @rcu: frees the entry after the send paths copying it out are done
 *
 * The core frees the AH when destroy_ah returns; this outlives it by a
 * grace period (kfree_rcu()), so destroy_ah need not wait for one.
 */
struct sroce_ah_num {
	struct sroce_av av;
	const struct ib_pd *pd;
	struct rcu_head rcu;
};

/**
 * struct sroce_ah - an address handle
 * @ibah: the core's AH; the core allocates this struct around it
 * @av: the destination
 * @ah_num: for user AHs, the number user UD WQEs name it by (in
 *	sroce_dev.ah_pool); 0 for kernel AHs
 * @num: for user AHs, what @ah_num maps to
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	u32 ah_num;
	struct sroce_ah_num *num;
};

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the core's CQ; the core allocates this struct around it
 * @lock: protects the ring's producer side, @notify, @overflow and, for
 *	kernel CQs, the consumer side; any context, irqsave
 * @ring: the entries: struct ib_wc for kernel CQs, struct ib_uverbs_wc for
 *	user CQs (shared with the process), followed by struct sroce_cqe_ts
 *	with @timestamps
 * @is_user: a user CQ
 * @timestamps: a user CQ whose entries carry their times (SROCE_CQ_TIMESTAMPS)
 * @tm_info: a user CQ whose entries carry a tag-matching header
 *	(SROCE_CQ_TM_INFO)
 * @notify: armed for the next completion (IB_CQ_NEXT_COMP) or the next
 *	solicited one (IB_CQ_SOLICITED); 0 when not armed
 * @overflow: an entry was lost for lack of room; IB_EVENT_CQ_ERR raised
 * @notify_work: calls the completion handler outside every sroce lock
 * @event_work: raises IB_EVENT_CQ_ERR and fails the QPs feeding the CQ,
 *	from process context
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* the producer; kernel consumers too */
	struct sroce_ring ring;
	bool is_user;
	bool timestamps;
	bool tm_info;
	u8 notify;
	bool overflow;
	struct irq_work notify_work;
	struct work_struct event_work;
};

/**
 * struct sroce_rq - a receive queue: of a QP, or the queue of an SRQ
 * @lock: serialises kernel producers (post_recv); irqsave
 * @ring: struct sroce_recv_wqe slots, each followed by its SGEs; shared
 *	with the process for user queues
 * @max_sge: SGEs a WQE may carry
 * @is_user: the process produces; the kernel only consumes
 */
struct sroce_rq {
	spinlock_t lock; /* kernel producers; SRQ consumers */
	struct sroce_ring ring;
	u32 max_sge;
	bool is_user;
};

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the core's SRQ; the core allocates this struct around it
 * @rq: the queue; its consumer side is serialised by @rq.lock too, since
 *	several QPs consume
 * @limit: srq_limit; IB_EVENT_SRQ_LIMIT_REACHED when the queue falls below
 *	it, then disarmed (0)
 * @event_work: raises the limit event from process context
 * @serial: this SRQ among all the device has had, from 1; never reused
 *	while the device lives, unlike an XRC SRQ's number
 * @ref: XRC SRQs: references; one from creation, one per lookup by number
 *	(xrc.c)
 * @released: XRC SRQs: completed when @ref reaches zero
 * @tm: tag-matching SRQs: the tagged buffers (tm.c), guarded by @rq.lock;
 *	NULL for other SRQs
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_rq rq;
	struct sroce_tm *tm;
	u32 limit;
	struct work_struct event_work;
	u64 serial;
	refcount_t ref;
	struct completion released;
};

/**
 * struct sroce_xrcd - an XRC domain: XRC SRQs and XRC target QPs in it
 *	serve each other
 * @ibxrcd: the core's XRCD; the core allocates this struct around it
 * @is_user: a process's (opened through uverbs); its target QPs receive
 *	into that process's SRQs only
 */
struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
	bool is_user;
};

enum sroce_mr_type {
	SROCE_MR_DMA,		/* kernel virtual addresses, the whole space */
	SROCE_MR_USER,		/* pinned user memory */
	SROCE_MR_FAST_REG,	/* kernel pages, registered by IB_WR_REG_MR */
	SROCE_MR_DM,		/* device memory (dm.c), zero-based */
	SROCE_MR_ODP,		/* user memory paged in on demand (odp.c) */
};

/*
 * Memory keys: (index << 8) | key byte.  Memory regions take indices below
 * SROCE_MW_INDEX_BASE, memory windows from it on, so a key says which it
 * names; index 0 is never used.
 */
#define SROCE_MW_INDEX_BASE BIT(23)

/**
 * struct sroce_mr - a memory region
 * @ibmr: the core's MR, allocated by sroce
 * @ref: references; lookups take one, the region lives until the last
 * @released: completed when @ref reaches zero
 * @rcu: frees the region after lookups that found it are done
 * @type: enum sroce_mr_type
 * @key: the key lookups must match: lkey = rkey; for a fast-registration
 *	region the key its last IB_WR_REG_MR made valid
 * @valid: accesses are allowed: always, except for a fast-registration
 *	region between invalidation and the next IB_WR_REG_MR
 * @access: IB_ACCESS_* flags
 * @iova: the first address the region covers
 * @length: bytes it covers
 * @umem: pinned user memory (SROCE_MR_USER)
 * @pages: the pages of @umem in order (SROCE_MR_USER)
 * @npages: entries in @pages
 * @page_offset: offset of @iova in the first page
 * @fr_pages: SROCE_MR_FAST_REG: kernel virtual address of each page of the
 *	last ib_map_mr_sg()
 * @fr_max: entries @fr_pages holds
 * @fr_npages: entries @fr_pages uses
 * @fr_page_shift: log2 of the page size of the mapping
 * @dm_map: SROCE_MR_DM: the device memory's mapping, whose mmap entry the
 *	region holds a reference on, so the memory outlives it
 * @dm_buf: SROCE_MR_DM: kernel address of the region's address 0
 * @mw_binds: memory windows bound to the region; it cannot be
 *	deregistered (or reregistered) while there are any
 * @dying: deregistration (or reregistration) has begun: no new binds
 * @replaced: reregistration published another region under the key; this
 *	one only waits for its references to go
 * @odp: SROCE_MR_ODP: the on-demand umem, or an implicit region's root
 * @odp_start: SROCE_MR_ODP: the user address of @iova (0: implicit)
 * @odp_children: SROCE_MR_ODP, implicit: the child umems, by user address
 *	>> SROCE_ODP_CHILD_SHIFT; added under @odp_grow, never removed
 *	before deregistration, read under @lock
 * @odp_nchildren: entries in @odp_children (under @odp_grow)
 * @odp_grow: serialises adding children; process context
 * @odp_bad_start: SROCE_MR_ODP: the start of the last range a fault
 *	failed on (odp.c)
 * @odp_bad_end: and its end; equal to @odp_bad_start: none
 * @lock: guards @mw_binds and @dying, and @key, @valid, @access, @iova and
 *	@length of a fast-registration region, which REG_MR and invalidations
 *	change on the data path; any context, irqsave; those fields of other
 *	regions never change after publication.  For an on-demand region it
 *	is held across every copy and atomic and around the unmapping of an
 *	invalidation, and guards the bad range.  Nests inside
 *	struct sroce_mw's lock and inside ib_core's umem_mutex.
 */
struct sroce_mr {
	struct ib_mr ibmr;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;
	enum sroce_mr_type type;
	u32 key;
	bool valid;
	u32 access;
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	unsigned int page_offset;
	u64 *fr_pages;
	u32 fr_max;
	u32 fr_npages;
	u32 fr_page_shift;
	struct sroce_mmap *dm_map;
	void *dm_buf;
	u32 mw_binds;
	bool dying;
	bool replaced;
	struct ib_umem_odp *odp;
	u64 odp_start;
	struct xarray odp_children;
	u32 odp_nchildren;
	struct mutex odp_grow; /* adding implicit children */
	u64 odp_bad_start;
	u64 odp_bad_end;
	spinlock_t lock; /* fast-registration state, binds, ODP; see above */
};

/**
 * struct sroce_odp_fault - the one page fault a QP may have queued (odp.c)
 * @work: resolves it in process context; holds a QP reference
 * @busy: bit 0: queued or running; taken by test_and_set_bit_lock(), so
 *	the fields below are the taker's until it is cleared
 * @mr: the region, referenced while queued
 * @uva: the first user address missing
 * @len: bytes from it
 * @write: fault the pages in writable
 */
struct sroce_odp_fault {
	struct work_struct work;
	unsigned long busy;
	struct sroce_mr *mr;
	u64 uva;
	u64 len;
	bool write;
};

/**
 * struct sroce_mw - a memory window
 * @ibmw: the core's MW; the core allocates this struct around it
 * @ref: references; lookups take one
 * @released: completed when @ref reaches zero
 * @key: the rkey it answers to; the index stays, binds may change the low
 *	byte
 * @valid: bound
 * @mr: the region it is bound to, referenced while bound
 * @addr: the first address it opens
 * @length: bytes it opens
 * @access: IB_ACCESS_REMOTE_* it grants
 * @qp_serial: type 2: the serial of the QP it is bound through, the only
 *	one it serves (a QP number comes back after its QP is destroyed; a
 *	serial never does)
 * @lock: guards everything above but @ref; any context, irqsave
 */
struct sroce_mw {
	struct ib_mw ibmw;
	refcount_t ref;
	struct completion released;
	spinlock_t lock; /* the binding */
	u32 key;
	bool valid;
	struct sroce_mr *mr;
	u64 addr;
	u64 length;
	u32 access;
	u64 qp_serial;
};

/* Where a work request's data is, in sroce's own terms. */
enum sroce_copy_dir {
	SROCE_TO_MR,		/* write into the memory */
	SROCE_FROM_MR,		/* read from the memory */
};

/**
 * struct sroce_swqe - a send work request, validated, and its progress
 * @wr_id: returned in the completion
 * @opcode: enum ib_wr_opcode
 * @flags: enum sroce_send_flags
 * @num_sge: SGEs (sroce_sq.sges), or 0 with SROCE_SEND_INLINE
 * @length: bytes of data (sum of SGE lengths, or inline bytes)
 * @imm: immediate data, network byte order
 * @rdma: RDMA_WRITE(_WITH_IMM), RDMA_READ: remote address and key
 * @atomic: atomics: remote address, operands, key
 * @atomic_write: SROCE_WR_ATOMIC_WRITE: remote address, the 8 bytes, key
 * @flush: SROCE_WR_FLUSH: remote range and key, placement type and level
 * @ud: UD sends: destination, QP number, Q_Key
 * @xrc_srqn: XRC initiator QPs: the remote XRC SRQ the request is for
 * @bind: BIND_MW: the window, its new key, the range, region and rights
 * @reg: REG_MR (kernel QPs): the region, its new key and rights
 * @inv_rkey: LOCAL_INV, SEND_WITH_INV: the key to invalidate
 * @state: enum sroce_wqe_state
 * @first_psn: PSN of the first packet (READ: of the request)
 * @last_psn: PSN of the last packet (READ: of the last response)
 * @status: enum ib_wc_status, once the outcome is known
 */
struct sroce_swqe {
	u64 wr_id;
	u32 opcode;
	u32 flags;
	u32 num_sge;
	u32 length;
	__be32 imm;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			u64 remote_addr;
			u8 data[8];
			u32 rkey;
		} atomic_write;
		struct {
			u64 remote_addr;
			u32 rkey;
			u32 length;
			u8 type;
			u8 level;
		} flush;
		struct {
			struct sroce_av av;
			u32 remote_qpn;
			u32 remote_qkey;
		} ud;
		struct {
			u32 mw_rkey;
			u32 new_rkey;
			u64 addr;
			u64 length;
			u32 mr_lkey;
			u32 access;
		} bind;
		struct {
			struct sroce_mr *mr;
			u32 key;
			u32 access;
		} reg;
	};
	u32 inv_rkey;
	u32 xrc_srqn;
	u8 state;
	u32 first_psn;
	u32 last_psn;
	u32 status;
};

/*
 * sroce_swqe.flags bit of a work request the device queued itself (tag
 * matching's rendezvous READ and FIN, tm.c): it has no slot in a user
 * ring and completes through tm.c, never on the send CQ.  Never set by a
 * caller: posted and fetched flags are masked to enum sroce_send_flags.
 */
#define SROCE_SWQE_TM BIT(31)

enum sroce_wqe_state {
	SROCE_WQE_POSTED,	/* not yet started */
	SROCE_WQE_SENDING,	/* some packets sent */
	SROCE_WQE_SENT,		/* every packet sent, outcome pending */
	SROCE_WQE_DONE,		/* outcome known, waiting to be retired */
};

/* Kinds of send work request, by enum ib_wr_opcode. */
static inline bool sroce_wr_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Answered by READ responses: a READ, or an ATOMIC WRITE or a FLUSH (no
 * data back).
 */
static inline bool sroce_wr_is_read_answered(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == SROCE_WR_ATOMIC_WRITE ||
	       opcode == SROCE_WR_FLUSH;
}

/* Counted against max_rd_atomic, completed only by its own responses. */
static inline bool sroce_wr_is_rd_atomic(u32 opcode)
{
	return sroce_wr_is_read_answered(opcode) || sroce_wr_is_atomic(opcode);
}

/* Takes effect when the requester reaches it; sends nothing. */
static inline bool sroce_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_LOCAL_INV ||
	       opcode == IB_WR_BIND_MW;
}

/**
 * struct sroce_sq - a send queue
 * @lock: protects everything below, the requester and the completer;
 *	any context, irqsave
 * @ring: user QPs: the ring shared with the process (kernel consumes)
 * @wqe: num_slots validated work requests and their progress
 * @sges: num_slots * max_sge SGEs of @wqe
 * @inline_data: num_slots * max_inline bytes of inline data of @wqe
 * @num_slots: size of @wqe, a power of two
 * @max_sge: SGEs per work request
 * @max_inline: inline bytes per work request
 * @prod: work requests posted (kernel) or fetched from @ring (user), and
 *	those the device queued itself (SROCE_SWQE_TM)
 * @cons: work requests retired
 * @ring_next: user QPs: the ring index of the next work request to fetch.
 *	The ring's own consumer index (@ring.cons) counts those retired; both
 *	run behind @prod and @cons by the SROCE_SWQE_TM work requests, of
 *	which @num_tm are between @cons and @prod
 * @num_tm: work requests the device queued and has not retired, at most
 *	SROCE_TM_QP_WQES
 */
struct sroce_sq {
	spinlock_t lock; /* the send queue, requester and completer */
	struct sroce_ring ring;
	struct sroce_swqe *wqe;
	struct sroce_sge *sges;
	u8 *inline_data;
	u32 num_slots;
	u32 max_sge;
	u32 max_inline;
	u32 prod;
	u32 cons;
	u32 ring_next;
	u32 num_tm;
};

/**
 * enum sroce_retry_why - why the completer asked the requester to go back
 * @SROCE_RETRY_TIMEOUT: the local ACK timeout expired
 * @SROCE_RETRY_SEQ_NAK: a PSN sequence error NAK
 * @SROCE_RETRY_GAP: a READ or atomic response past responses missing
 * @SROCE_RETRY_ACK_PAST_RD: an ACK past a READ or atomic whose responses
 *	have not all arrived: they were lost
 * @SROCE_RETRY_RNR: an RNR NAK; the resend waits for its timer
 * @SROCE_RETRY_PAGE_FAULT: a READ or atomic response for memory of ours
 *	that was not present (odp.c): sent again once it is; no retry spent
 */
enum sroce_retry_why {
	SROCE_RETRY_TIMEOUT,
	SROCE_RETRY_SEQ_NAK,
	SROCE_RETRY_GAP,
	SROCE_RETRY_ACK_PAST_RD,
	SROCE_RETRY_RNR,
	SROCE_RETRY_PAGE_FAULT,
};

/**
 * struct sroce_req - requester progress (sroce_sq.lock)
 * @idx: the work request being sent
 * @psn: the next PSN to send
 * @max_psn: the PSN after the highest one ever sent: below it, from
 *	sroce_comp.psn, packets are on the wire.  After a go-back @psn is
 *	behind it, and responses to the first transmission may still arrive
 *	and be accepted up to here.
 * @offset: bytes of @idx already sent
 * @rd_atomic: READ and atomic requests outstanding
 * @since_ackreq: packets sent since the last one with AckReq
 * @retry: the completer asked to go back to @retry_psn
 * @retry_psn: where to go back to
 * @retry_why: enum sroce_retry_why, for the sroce_retransmit tracepoint
 * @stalled: the requester stopped for the completer (window, credits,
 *	fence, RNR wait), which must run it again when that changes
 * @faulting: the requester stopped for a page fault of its own memory
 *	(odp.c), which runs it again when resolved; the local ACK timeout
 *	spends no retry meanwhile
 */
struct sroce_req {
	u32 idx;
	u32 psn;
	u32 max_psn;
	u32 offset;
	u32 rd_atomic;
	u32 since_ackreq;
	bool retry;
	u32 retry_psn;
	u8 retry_why;
	bool stalled;
	bool faulting;
};

/**
 * struct sroce_comp - completer progress (sroce_sq.lock)
 * @psn: the oldest PSN not yet acknowledged
 * @retry_left: retries left after a timeout or sequence error
 * @rnr_left: retries left after an RNR NAK (rnr_retry 7: forever)
 * @rnr_wait: waiting out an RNR NAK's timer
 * @went_back: the requester was asked to go back (a retry spent) and
 *	nothing has been acknowledged since.  Until something is, a gap in
 *	the responses or a sequence-error NAK asks for no other go-back and
 *	spends no retry: the one under way resends what they say is missing.
 *	Packets sent from several CPUs arrive out of order (veth, multi-queue
 *	NICs), and a lossy wire makes the responder NAK again and again behind
 *	an unanswered READ (a NAK acknowledges nothing past it): a burst of
 *	them must cost one retry, not one each.  Only the local ACK timeout
 *	goes back again without progress.
 * @drained: IB_EVENT_SQ_DRAINED raised for the current SQD period
 * @armed: the local ACK timeout runs, to expire at @deadline
 * @deadline: in jiffies, when @armed
 *
 * The oldest work request not yet complete is sroce_sq.cons.
 *
 * The local ACK timeout is @armed and @deadline, not the timer itself:
 * restarting or stopping it per acknowledged message changes only these
 * two, and the timer (sroce_qp.retrans_timer) is moved only when it would
 * expire after @deadline (sroce_comp_arm()).  A timer that expires before
 * @deadline, or when nothing is @armed, is re-armed or left stopped by its
 * handler; the timeout is the same as if the timer followed every change.
 */
struct sroce_comp {
	u32 psn;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	bool went_back;
	bool drained;
	bool armed;
	unsigned long deadline;
};

/**
 * struct sroce_rwqe - a receive work request, copied out of its queue
 * @wr_id: returned in the completion
 * @num_sge: SGEs in @sge
 * @length: sum of the SGE lengths
 * @sge: the SGEs
 */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct sroce_sge sge[SROCE_MAX_SGE];
};

enum sroce_res_type {
	SROCE_RES_NONE,
	SROCE_RES_READ,
	SROCE_RES_ATOMIC,
	SROCE_RES_ATOMIC_WRITE,	/* answered as a READ of nothing */
	SROCE_RES_FLUSH,	/* likewise */
};

/**
 * struct sroce_resp_res - a responder resource: one READ, atomic, ATOMIC
 *	WRITE or FLUSH request kept for replying and for replaying duplicates
 * @type: enum sroce_res_type
 * @first_psn: the request's PSN
 * @last_psn: READ: the PSN of the last response packet
 * @req_va: READ: the request's VA
 * @req_len: READ: the request's length
 * @va: READ: remote address of the next response's data
 * @rkey: READ: the key of the memory read
 * @resid: READ: bytes still to send
 * @cur_psn: READ: PSN of the next response packet
 * @end_psn: READ: PSN of the answer's last packet: @last_psn, or one
 *	before it for a duplicate asking for only part of the rest
 * @orig: atomic: the value before the operation
 * @xrc_srqn: XRC target QPs, READ: the SRQ the request named, whose PD
 *	the memory read is checked against
 * @xrc_serial: ... and its serial, so that another SRQ given the same
 *	number is not taken for it
 * @queued: a response remains to be sent by the responder's work
 * @replay: what is queued answers a duplicate of the request, not its
 *	first transmission
 */
struct sroce_resp_res {
	u8 type;
	bool queued;
	bool replay;
	u32 first_psn;
	u32 last_psn;
	u64 req_va;
	u32 req_len;
	u64 va;
	u32 rkey;
	u32 resid;
	u32 cur_psn;
	u32 end_psn;
	u64 orig;
	u32 xrc_srqn;
	u64 xrc_serial;
};

/**
 * struct sroce_resp_ack - an ACK or NAK held back behind queued responses
 * @valid: one is held
 * @syndrome: its AETH syndrome
 * @psn: its PSN
 */
struct sroce_resp_ack {
	bool valid;
	u8 syndrome;
	u32 psn;
};

/**
 * enum sroce_tm_recv - what a message received through a tag-matching SRQ
 *	is to it
 * @SROCE_TM_RECV_PLAIN: no tag-matching header (or a FIN): an ordinary
 *	receive
 * @SROCE_TM_RECV_NO_TAG: SROCE_TMH_NO_TAG, into an SRQ buffer
 * @SROCE_TM_RECV_UNEXPECTED: a tagged message no entry took, into an SRQ
 *	buffer
 * @SROCE_TM_RECV_EAGER: an eager message an entry took, whole in one packet
 * @SROCE_TM_RECV_EAGER_SPLIT: likewise, in several packets: its match was
 *	reported when the first arrived
 * @SROCE_TM_RECV_RNDV_INCOMPLETE: a rendezvous request an entry took whose
 *	buffer is too small for the data: the request goes into it instead
 */
enum sroce_tm_recv {
	SROCE_TM_RECV_PLAIN,
	SROCE_TM_RECV_NO_TAG,
	SROCE_TM_RECV_UNEXPECTED,
	SROCE_TM_RECV_EAGER,
	SROCE_TM_RECV_EAGER_SPLIT,
	SROCE_TM_RECV_RNDV_INCOMPLETE,
};

/**
 * struct sroce_resp_tm - the message in progress, to tag matching
 * @kind: enum sroce_tm_recv
 * @skip: bytes of header the next packet's payload starts with that do
 *	not go into the buffer (a matched eager message's first packet)
 * @tag: its tag-matching header's tag
 * @priv: ... and app_ctx
 */
struct sroce_resp_tm {
	u8 kind;
	u32 skip;
	u64 tag;
	u32 priv;
};

/**
 * struct sroce_resp - responder progress (sroce_resp.lock)
 * @lock: protects this and the consumer side of the QP's receive queue;
 *	taken in softirq by the receive path, with _bh elsewhere
 * @epsn: the PSN expected next
 * @msn: messages completed
 * @nak_sent: a PSN sequence error NAK went out for the current gap
 * @last_opcode: the previous request's opcode, to check the sequence
 * @have_wqe: @wqe holds the receive work request being filled
 * @wqe: the receive work request of the message in progress
 * @offset: bytes placed into @wqe so far
 * @write_va: RDMA WRITE in progress: the next address
 * @write_rkey: ... its key
 * @write_resid: ... bytes still expected
 * @write_len: ... its whole length
 * @comm_est: IB_EVENT_COMM_EST raised since the QP entered RTR
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED raised since the QP was reset
 * @res: the responder resources, one per READ/atomic request the peer
 *	may have outstanding (max_dest_rd_atomic), used in turn; NULL until
 *	max_dest_rd_atomic is set (sroce_resp_size_res())
 * @num_res: entries in @res
 * @res_next: where the next READ/atomic request goes
 * @queued: resources with responses still to send
 * @owed_busy: someone is sending owed responses (only one may, or packets
 *	built in order could leave out of order)
 * @paced: the last sender of owed responses stopped for the pacer, whose
 *	timer runs @work again
 * @pending: the newest ACK/NAK held back while @queued is non-zero, so
 *	that responses leave in PSN order
 * @work: sends queued responses from process context
 * @pd: the PD memory keys of requests and of receive work requests must
 *	belong to: the QP's; for an XRC target QP, which has none, the PD of
 *	@xsrq while it is held, else NULL (which no key belongs to)
 * @xsrq: XRC target QPs: the XRC SRQ the request in hand names, referenced
 *	while it is handled (xrc.c); NULL between requests
 * @wqe_srqn: XRC target QPs: the number of the SRQ @wqe came from
 * @wqe_srq_serial: ... and its serial
 * @tm: QPs of a tag-matching SRQ: what the message in progress is to tag
 *	matching (tm.c)
 */
struct sroce_resp {
	spinlock_t lock; /* the responder and the receive consumer */
	u32 epsn;
	u32 msn;
	bool nak_sent;
	u8 last_opcode;
	bool have_wqe;
	struct sroce_rwqe wqe;
	u32 offset;
	u64 write_va;
	u32 write_rkey;
	u32 write_resid;
	u32 write_len;
	bool comm_est;
	bool last_wqe;
	struct sroce_resp_res *res;
	u32 num_res;
	u32 res_next;
	u32 queued;
	bool owed_busy;
	bool paced;
	struct sroce_resp_ack pending;
	struct work_struct work;
	struct ib_pd *pd;
	struct sroce_srq *xsrq;
	u32 wqe_srqn;
	u64 wqe_srq_serial;
	struct sroce_resp_tm tm;
};

/**
 * struct sroce_qp_handle - what a QP number maps to (sroce_dev.qp_pool)
 * @ref: the QP's references: one from creation, one per lookup by the
 *	receive path, one per scheduled work item
 * @qp: the QP; read only by a holder of a reference
 * @rcu: frees the handle a grace period after the QP is destroyed
 *
 * The core frees struct sroce_qp as soon as destroy_qp returns, while a
 * lookup under RCU may still be looking at what the number mapped to.
 * What it looks at is the handle, freed only after a grace period: a
 * lookup that comes too late finds @ref zero and never reads @qp, so
 * destroy_qp need not wait for a grace period itself.
 */
struct sroce_qp_handle {
	refcount_t ref;
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the core's QP; the core allocates this struct around it
 * @handle: its number's handle, holding its references
 * @released: completed when the references in @handle reach zero
 * @modify_lock: serialises modify_qp and query_qp; process context
 * @state: enum ib_qp_state.  modify_qp moves it under @modify_lock with
 *	both @resp.lock and @sq.lock held (sroce_qp_set_state(),
 *	sroce_qp_reset()); the data path only ever moves it to ERR, through
 *	sroce_qp_error(), from any context and under either lock or none, by a
 *	compare-and-exchange that leaves RESET and ERR alone.  So under either
 *	lock it can change only to ERR, and ERR is left only by a modify_qp to
 *	RESET.  Read with READ_ONCE().  sroce_qp_error() moves it before it
 *	schedules the flush, and the flush takes each queue's lock, so a
 *	producer that reads it under that lock after queuing (or after a full
 *	barrier, for the receive ring) never leaves a work request unflushed.
 * @dead: being destroyed; nothing new is scheduled or armed, no window
 *	bound; written under both locks
 * @serial: this QP among all the device has had, from 1; never reused
 *	while the device lives, unlike the QP number (mw.c)
 * @mw2_bound: type 2 windows bound through the QP and not yet unbound
 *	through it; a window deallocated while bound is not subtracted, so
 *	this is an upper bound (mw.c); atomic
 * @is_user: the queues are shared with a process.  An XRC target QP has
 *	no queues; it is a user QP when its XRC domain is a process's, and
 *	then the SRQs it receives into are that process's too
 * @xrcd: XRC target QPs: the XRC domain whose SRQs it receives into
 * @scq: the send CQ
 * @rcq: the receive CQ
 * @srq: the SRQ the QP receives from, or NULL
 * @sq: the send queue
 * @rq: the receive queue (unused with @srq)
 * @req: requester progress
 * @comp: completer progress
 * @resp: responder progress
 * @av: where the packets of an RC or UC QP go (IB_QP_AV)
 * @dest_qpn: the peer QP (IB_QP_DEST_QPN)
 * @qkey: UD Q_Key (IB_QP_QKEY).  This, @min_rnr_timer and @access, the
 *	attributes a QP in RTS may change, are written by modify_qp with
 *	WRITE_ONCE() and read by the data path with READ_ONCE(); the others
 *	change only in states where the data path does not use them
 * @pmtu: path MTU in bytes (IB_QP_PATH_MTU)
 * @sq_psn: initial send PSN (IB_QP_SQ_PSN)
 * @timeout: local ACK timeout code (IB_QP_TIMEOUT)
 * @retry_cnt: (IB_QP_RETRY_CNT)
 * @rnr_retry: (IB_QP_RNR_RETRY)
 * @min_rnr_timer: RNR timer code this QP's responder NAKs with
 * @max_rd_atomic: READ/atomic requests the requester may have outstanding
 * @max_dest_rd_atomic: those the responder keeps resources for
 * @access: IB_ACCESS_REMOTE_* the responder allows (IB_QP_ACCESS_FLAGS)
 * @sport: UDP source port of this QP's packets
 * @num_mcast: multicast groups the QP is attached to (UD; sroce_mcast.lock)
 * @sq_sig_all: every send work request completes with a CQE
 * @req_runner: lets one caller at a time run the requester, and none of
 *	their requests be lost (runner.h, req.c)
 * @req_work: runs the requester
 * @event_work: flushes and raises @events from process context
 * @events: pending work for @event_work: a bit per enum ib_event_type,
 *	and SROCE_QP_EV_FLUSH (qp_state.c)
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR NAK wait
 * @dst_cache: route to @av.daddr
 * @cc: the reaction point and pacer (cc.c)
 * @fault: the page fault the QP waits for (odp.c)
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_qp_handle *handle;
	struct completion released;
	struct mutex modify_lock; /* modify_qp, query_qp */
	u32 state;
	bool dead;
	bool is_user;
	u64 serial;
	atomic_t mw2_bound;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	struct ib_xrcd *xrcd;
	struct sroce_sq sq;
	struct sroce_rq rq;
	struct sroce_req req;
	struct sroce_comp comp;
	struct sroce_resp resp;
	struct sroce_av av;
	u32 dest_qpn;
	u32 qkey;
	u32 pmtu;
	u32 sq_psn;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u32 access;
	u16 sport;
	u32 num_mcast;
	bool sq_sig_all;
	struct sroce_runner req_runner;
	struct work_struct req_work;
	struct work_struct event_work;
	atomic_t events;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct dst_cache dst_cache;
	struct sroce_qp_cc cc;
	struct sroce_odp_fault fault;
};

/**
 * struct sroce_pkt - a received packet being processed
 * @sdev: the device it arrived on
 * @skb: the packet; data starts at the BTH; the headers are linear, the
 *	payload anywhere (read it through pkt.c)
 * @qp: the destination QP, referenced
 * @bth: the BTH
 * @info: what its opcode means
 * @opcode: BTH opcode
 * @psn: BTH PSN
 * @payoff: offset of the payload from skb->data; 0 until the packet is
 *	parsed
 * @paylen: bytes of payload, pad excluded
 */
struct sroce_pkt {
	struct sroce_dev *sdev;
	struct sk_buff *skb;
	struct sroce_qp *qp;
	struct sroce_bth *bth;
	const struct sroce_opcode_info *info;
	u8 opcode;
	u32 psn;
	u32 payoff;
	u32 paylen;
};

/*
 * A received packet's extension headers, at the offsets its opcode's entry
 * in the opcode table gives.  Each is there only when the opcode says so
 * (SROCE_OPF_RETH ...); the IETH takes the place of the immediate data.
 */
static inline const void *sroce_pkt_hdr(const struct sroce_pkt *pkt, u8 off)
{
	return (const u8 *)pkt->bth + off;
}

static inline const struct sroce_reth *
sroce_pkt_reth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_reth);
}

static inline const struct sroce_feth *
sroce_pkt_feth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_feth);
}

static inline const struct sroce_atmeth *
sroce_pkt_atmeth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_atmeth);
}

static inline const struct sroce_aeth *
sroce_pkt_aeth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_aeth);
}

static inline const struct sroce_atmack *
sroce_pkt_atmack(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_atmack);
}

static inline const struct sroce_deth *
sroce_pkt_deth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_deth);
}

static inline const struct sroce_xrceth *
sroce_pkt_xrceth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_xrceth);
}

/* The XRC SRQ an XRC request is for. */
static inline u32 sroce_pkt_xrc_srqn(const struct sroce_pkt *pkt)
{
	return be32_to_cpu(sroce_pkt_xrceth(pkt)->srqn) & SROCE_24BIT_MASK;
}

static inline const struct sroce_immdt *
sroce_pkt_immdt(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_immdt);
}

static inline const struct sroce_ieth *
sroce_pkt_ieth(const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(pkt, pkt->info->off_immdt);
}

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

static inline struct sroce_xrcd *to_sxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct sroce_xrcd, ibxrcd);
}

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

/**
 * struct sroce_dm - device memory (dm.c)
 * @ibdm: the core's DM, allocated by sroce
 * @map: the memory; its mmap entry in @uctx owns it
 * @uctx: the context it was allocated in and is mapped into
 * @pgoff: the page offset of its mapping, SROCE_DM_MMAP_PGOFF() of its
 *	handle
 */
struct sroce_dm {
	struct ib_dm ibdm;
	struct sroce_mmap *map;
	struct ib_ucontext *uctx;
	u64 pgoff;
};

static inline struct sroce_dm *to_sdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct sroce_dm, ibdm);
}

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline struct sroce_dev *sroce_qp_dev(struct sroce_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/* The BTH transport of what a QP sends. */
static inline u8 sroce_qp_transport(const struct sroce_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return SROCE_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return SROCE_TRANSPORT_XRC;
	default:
		return SROCE_TRANSPORT_RC;
	}
}

/* RC and both XRC halves: acknowledged, retried, in order. */
static inline bool sroce_qp_reliable(const struct sroce_qp *qp)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	return type == IB_QPT_RC || type == IB_QPT_XRC_INI ||
	       type == IB_QPT_XRC_TGT;
}

/* Connected to one peer QP: RC, UC and both XRC halves. */
static inline bool sroce_qp_connected(const struct sroce_qp *qp)
{
	return sroce_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC;
}

/*
 * A receive queue of its own: not a QP on an SRQ, nor an XRC QP (the
 * initiator receives nothing, the target into the SRQs its requests name).
 */
static inline bool sroce_qp_has_rq(const struct sroce_qp *qp)
{
	return qp->rq.ring.buf;
}

/*
 * A send queue's slots.  Work request indices (sroce_sq.prod and .cons,
 * sroce_req.idx) run freely; a slot is an index modulo the queue's
 * power-of-two size.  Each slot has its struct sroce_swqe, max_sge SGEs
 * and max_inline bytes of inline data.
 */
static inline u32 sroce_sq_slot(const struct sroce_qp *qp, u32 idx)
{
	return idx & (qp->sq.num_slots - 1);
}

static inline struct sroce_swqe *sroce_sq_wqe(struct sroce_qp *qp, u32 idx)
{
	return &qp->sq.wqe[sroce_sq_slot(qp, idx)];
}

static inline struct sroce_sge *sroce_sq_sges(struct sroce_qp *qp, u32 idx)
{
	return &qp->sq.sges[(size_t)sroce_sq_slot(qp, idx) * qp->sq.max_sge];
}

static inline u8 *sroce_sq_inline(struct sroce_qp *qp, u32 idx)
{
	return &qp->sq.inline_data[(size_t)sroce_sq_slot(qp, idx) *
				   qp->sq.max_inline];
}

#define sroce_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define sroce_dbg_qp(qp, fmt, ...)					\
	do {								\
		struct sroce_qp *__qp = (qp);				\
									\
		ibdev_dbg(__qp->ibqp.device, "qp#%u %s: " fmt,		\
			  __qp->ibqp.qp_num, __func__, ##__VA_ARGS__);	\
	} while (0)

extern struct workqueue_struct *sroce_wq;
extern struct workqueue_struct *sroce_resp_wq;

/* ah.c */
int sroce_av_from_attr(struct sroce_dev *sdev, struct sroce_av *av,
		       const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
bool sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		     struct sroce_av *av);

/* comp.c */
void sroce_comp_rcv(struct sroce_pkt *pkt);
void sroce_comp_retrans_timer(struct timer_list *t);
void sroce_comp_rnr_timer(struct timer_list *t);
void sroce_comp_retire(struct sroce_qp *qp);
void sroce_sq_give_back(struct sroce_qp *qp, u32 old);
unsigned long sroce_comp_timeout(struct sroce_qp *qp);
void sroce_comp_arm(struct sroce_qp *qp);

/* cq.c */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct sroce_create_cq_arg *arg);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
void sroce_cq_clean_qp(struct sroce_cq *cq, struct ib_qp *ibqp);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
bool sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc,
		   bool solicited);

/**
 * struct sroce_wc_tm - what a completion says to tag matching (tm.c)
 * @flags: SROCE_WC_TM_* wc_flags, in the process's numbering
 * @tag: the message's tag (struct sroce_cqe_tm)
 * @priv: its app_ctx
 */
struct sroce_wc_tm {
	u32 flags;
	u64 tag;
	u32 priv;
};

bool sroce_cq_post_tm(struct sroce_cq *cq, const struct ib_wc *wc,
		      bool solicited, const struct sroce_wc_tm *tm);

/* dm.c */
struct ib_dm *sroce_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int sroce_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct sroce_mmap *sroce_dm_map_get(struct ib_dm *ibdm);
void sroce_dm_map_put(struct sroce_mmap *m);

/* device.c */
int sroce_dev_newlink(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_unregister_all(void);
void sroce_dev_port_update(struct sroce_dev *sdev, struct net_device *ndev);

/* mcast.c */
void sroce_mcast_init(struct sroce_dev *sdev);
void sroce_mcast_uninit(struct sroce_dev *sdev);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_qp_detach_all(struct sroce_qp *qp);
void sroce_mcast_rx(struct sroce_pkt *pkt);

/* mr.c */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
bool sroce_mr_bind_get(struct sroce_mr *mr);
void sroce_mr_bind_put(struct sroce_mr *mr);
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_reg(struct sroce_qp *qp, struct sroce_mr *mr, u32 key,
		 u32 access);
int sroce_mr_invalidate(struct sroce_qp *qp, struct ib_pd *pd, u32 rkey);
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, u32 access);
struct sroce_mr *sroce_rkey_get_whole(struct sroce_qp *qp, u32 rkey,
				      u32 access, u64 *iova, u64 *len);
int sroce_mr_flush_rights_ok(struct sroce_mr *mr, u32 access);
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* mem.c */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   u32 access);
int sroce_mr_copy(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		  void *buf, u32 len, enum sroce_copy_dir dir);
void sroce_mr_flush(struct sroce_mr *mr, u64 iova, u64 len, u8 type);
/* The operations sroce_mr_atomic() does. */
enum sroce_atomic_op {
	SROCE_ATOMIC_CMP_SWAP,
	SROCE_ATOMIC_FETCH_ADD,
	SROCE_ATOMIC_WRITE,
};

u64 sroce_atomic_do(u64 *p, enum sroce_atomic_op op, u64 compare_add,
		    u64 swap);
int sroce_mr_atomic(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		    enum sroce_atomic_op op, u64 compare_add, u64 swap,
		    u64 *orig);
int sroce_sge_prepare(struct sroce_qp *qp, const struct sroce_sge *sge,
		      u32 num_sge, u32 offset, u32 len);
int sroce_sge_copy(struct sroce_qp *qp, struct ib_pd *pd,
		   const struct sroce_sge *sge, u32 num_sge, u32 offset,
		   void *buf, u32 len, enum sroce_copy_dir dir);
/* Payloads from this size on go out as the sender's pages, not a copy. */
#define SROCE_ZCOPY_MIN 1024
bool sroce_mr_attachable(const struct sroce_mr *mr, u64 iova, u32 len);
int sroce_mr_attach(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		    u32 len);
int sroce_sge_attach(struct sroce_qp *qp, struct ib_pd *pd,
		     const struct sroce_sge *sge, u32 num_sge, u32 offset,
		     struct sk_buff *skb, u32 len);

/* ioctl.c */
extern const struct uapi_definition sroce_uapi_defs[];
int sroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs);

/* odp.c */
int sroce_odp_mr_init(struct sroce_mr *mr, struct ib_device *ibdev,
		      u64 start, int access);
void sroce_odp_mr_release(struct sroce_mr *mr);
u64 sroce_odp_mapped_pages(struct sroce_mr *mr);
int sroce_odp_copy(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		   void *buf, u32 len, enum sroce_copy_dir dir);
int sroce_odp_atomic(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		     enum sroce_atomic_op op, u64 compare_add, u64 swap,
		     u64 *orig);
int sroce_odp_prepare(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		      u64 len);
int sroce_odp_fault(struct sroce_mr *mr, u64 uva, u64 len, bool write,
		    bool fault);
void sroce_odp_fault_queue(struct sroce_qp *qp, struct sroce_mr *mr, u64 uva,
			   u64 len, bool write);
void sroce_odp_fault_work(struct work_struct *work);
void sroce_odp_fault_cancel(struct sroce_qp *qp);
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

/* mw.c */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_swqe *w);
int sroce_mw_invalidate(struct sroce_qp *qp, u32 rkey);
struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp, u32 rkey, u64 va,
				  u64 len, u32 access);
void sroce_mw_qp_destroyed(struct sroce_qp *qp);

/* net.c */
extern struct mutex sroce_bind_lock;
int sroce_net_init(void);
void sroce_net_uninit(void);
int sroce_net_bind(struct sroce_dev *sdev, struct net_device *ndev);
void sroce_net_unbind(struct sroce_dev *sdev);
bool sroce_net_mark_registered(struct sroce_dev *sdev);
int sroce_net_xmit(struct sroce_dev *sdev, struct sroce_qp *qp,
		   const struct sroce_av *av, struct sk_buff *skb);
struct sk_buff *sroce_net_alloc_skb(struct sroce_dev *sdev, unsigned int len);

/* qp.c */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct sroce_qp *sroce_qp_get_rcu(struct sroce_dev *sdev, u32 qpn);
struct sroce_qp *sroce_qp_handle_get(struct sroce_qp_handle *h);
void sroce_qp_put(struct sroce_qp *qp);
void sroce_qp_sched_req(struct sroce_qp *qp);

/* Another reference to a QP the caller holds one to. */
static inline void sroce_qp_get(struct sroce_qp *qp)
{
	refcount_inc(&qp->handle->ref);
}

/* qp_state.c */
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
void sroce_qp_error(struct sroce_qp *qp, enum ib_event_type event);
void sroce_qp_fail_wqe(struct sroce_qp *qp, struct sroce_swqe *w, u32 status,
		       enum ib_event_type event);
void sroce_qp_sched_flush(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type event);
void sroce_qp_event_work(struct work_struct *work);
void sroce_qp_flush_sq(struct sroce_qp *qp);
void sroce_qp_flush_rq(struct sroce_qp *qp);

/* owed.c */
struct sk_buff *sroce_resp_ack_skb(struct sroce_qp *qp, u8 syndrome, u32 psn,
				   bool atomic, u64 orig);
void sroce_resp_ack(struct sroce_qp *qp, u8 syndrome, u32 psn,
		    struct sk_buff_head *out);
void sroce_resp_nak_sent(struct sroce_qp *qp, u8 syndrome, u32 psn);
struct sroce_resp_res *sroce_resp_newest(struct sroce_qp *qp, u32 i);
struct sroce_resp_res *sroce_resp_new_res(struct sroce_qp *qp);
void sroce_resp_unnew_res(struct sroce_qp *qp);
void sroce_resp_queue_res(struct sroce_qp *qp, struct sroce_resp_res *res,
			  bool replay);
void sroce_resp_read_start(struct sroce_qp *qp, struct sroce_resp_res *res,
			   u32 psn, u64 va, u32 len);
void sroce_resp_flush_owed(struct sroce_qp *qp, int budget);
void sroce_resp_kick(struct sroce_qp *qp);
void sroce_resp_work(struct work_struct *work);
int sroce_resp_size_res(struct sroce_qp *qp, u32 n);

/* post.c */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int sroce_sq_fetch(struct sroce_qp *qp, u32 end);

/* What sroce_rq_take() found in a receive queue. */
enum sroce_rq_taken {
	SROCE_RQ_TAKEN,		/* a work request, copied out and valid */
	SROCE_RQ_EMPTY,		/* none posted */
	SROCE_RQ_BAD_WQE,	/* one taken but invalid: only its wr_id counts */
	SROCE_RQ_BAD_PROD,	/* an impossible producer index: none taken */
	SROCE_RQ_HANDLED,	/* none needed: tag matching took the message
				 * whole (a rendezvous request, tm.c)
				 */
};

enum sroce_rq_taken sroce_rq_take(struct sroce_rq *rq, struct sroce_srq *srq,
				  struct sroce_rwqe *wqe);
enum sroce_rq_taken sroce_srq_take_locked(struct sroce_srq *srq,
					  struct sroce_rwqe *wqe);
bool sroce_rq_skip(struct sroce_rq *rq, u64 *wr_id);
u32 sroce_rq_count(struct sroce_rq *rq);

/* req.c */
void sroce_req_work(struct work_struct *work);
void sroce_req_kick(struct sroce_qp *qp);

/* resp.c */
void sroce_resp_rcv(struct sroce_pkt *pkt);
void sroce_resp_reset(struct sroce_qp *qp);

/* pkt.c */
int sroce_pkt_read(const struct sroce_pkt *pkt, u32 off, void *buf, u32 len);
int sroce_pkt_to_sge(struct sroce_qp *qp, struct ib_pd *pd,
		     const struct sroce_sge *sge, u32 num_sge, u32 offset,
		     const struct sroce_pkt *pkt, u32 off, u32 len);
int sroce_pkt_to_mr(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		    const struct sroce_pkt *pkt);

/* rx.c */
void sroce_rx(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rx_local(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rx_to_qp(struct sroce_pkt *pkt);

/* selftest.c */
int sroce_selftest(void);

/* srq.c */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
void sroce_srq_check_limit(struct sroce_srq *srq);

/* xrc.c */
int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_xrc_srq_publish(struct sroce_srq *srq);
void sroce_xrc_srq_unpublish(struct sroce_srq *srq);
bool sroce_xrc_resp_hold(struct sroce_qp *qp, u32 srqn, u64 serial);
bool sroce_xrc_res_hold(struct sroce_qp *qp, const struct sroce_resp_res *res);
void sroce_xrc_resp_release(struct sroce_qp *qp);
void sroce_xrc_wqe_taken(struct sroce_qp *qp);
void sroce_xrc_fail_wqe(struct sroce_qp *qp, struct ib_wc *wc);

/* tm.c */
int sroce_tm_srq_init(struct sroce_srq *srq, u32 max_num_tags);
void sroce_tm_srq_free(struct sroce_srq *srq);
int sroce_tm_op(struct sroce_srq *srq, const struct sroce_tm_op *op,
		struct sroce_tm_op_resp *resp);
enum sroce_rq_taken sroce_tm_take(struct sroce_qp *qp,
				  const struct sroce_pkt *pkt);
void sroce_tm_recv_post(struct sroce_qp *qp, struct ib_wc *wc, bool solicited);
void sroce_tm_swqe_done(struct sroce_qp *qp, u32 idx);

/* A QP whose messages go through tag matching. */
static inline bool sroce_qp_tm(const struct sroce_qp *qp)
{
	return qp->srq && qp->srq->tm;
}

/* trace.c */
void sroce_drop_pkt(const struct sroce_pkt *pkt, enum sroce_counter why);
void sroce_drop(struct sroce_dev *sdev, u32 qpn, u32 psn,
		enum sroce_counter why);

/* tx.c */
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev, struct sroce_qp *qp,
			       u8 opcode, u32 paylen, u32 dqpn, u32 psn,
			       bool ackreq, bool se, void **hdrs,
			       void **payload);
int sroce_tx_seal(struct sk_buff *skb);

/* verbs.c */
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_ucontext_resp(struct sroce_alloc_ucontext_resp *resp);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_udata_in(struct ib_udata *udata, void *req, size_t size);
int sroce_udata_out(struct ib_udata *udata, const void *resp, size_t size);
int sroce_udata_none(struct ib_udata *udata);
struct ib_ucontext *sroce_udata_uctx(struct ib_udata *udata);

#endif /* SROCE_H */
