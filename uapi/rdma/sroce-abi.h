/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sroce-abi.h - the ABI between the sroce kernel module and its userspace
 * provider (libsroce-rdmav34.so).
 *
 * This one file is included verbatim by both sides: by the module through
 * its Kbuild include path and by the provider through its build flags.  It
 * is the ABI's documentation; nothing here may change without the other
 * side changing in the same commit.
 *
 * Rules every structure here follows:
 *  - only fixed-width __u8/__u16/__u32/__aligned_u64 fields, naturally
 *    aligned, explicit padding, sizes a multiple of 8, so that 32- and
 *    64-bit processes see one layout (each size is pinned by static
 *    assertions on both sides: drivers/sroce/verbs.c and
 *    userspace-provider/sroce.h);
 *  - every reserved or pad field is sent as zero and the kernel rejects a
 *    request whose reserved fields are not zero (EINVAL), so they can be
 *    given a meaning later;
 *  - no kernel pointer ever crosses the boundary, not even inside a union;
 *  - responses may grow at the end: the kernel copies
 *    min(its size, the caller's buffer) and the provider zero-fills what an
 *    older module did not send.
 *
 * Commands
 * --------
 * The provider drives the device through the generic uverbs commands of
 * <rdma/ib_user_verbs.h> and <rdma/ib_user_ioctl_cmds.h>.  Where a command
 * carries driver-private data, it is one of the structures below, appended
 * after the core command ("udata" in the kernel):
 *
 *  GET_CONTEXT   request:  struct sroce_alloc_ucontext_req
 *                response: struct sroce_alloc_ucontext_resp
 *  CREATE_CQ     request:  struct sroce_create_cq_req (optional)
 *                response: struct sroce_create_cq_resp
 *  RESIZE_CQ     response: struct sroce_create_cq_resp (the new ring)
 *  CREATE_QP     response: struct sroce_create_qp_resp
 *  CREATE_SRQ    response: struct sroce_create_srq_resp
 *  CREATE_AH     response: struct sroce_create_ah_resp
 *
 * Every other command carries no driver data, and the module rejects a
 * non-empty private request.
 *
 * Two additions to the uverbs ioctl interface, in the driver's attribute
 * and method namespace (UVERBS_ID_NS_SHIFT), serve importing a uverbs
 * file another context opened (ibv_import_device(), ibv_import_dm()):
 *
 *  QUERY_CONTEXT (UVERBS_OBJECT_DEVICE), optional out attribute
 *                SROCE_ATTR_QUERY_CONTEXT_RESP:
 *                struct sroce_alloc_ucontext_resp, as GET_CONTEXT gave
 *  SROCE_METHOD_DM_QUERY (UVERBS_OBJECT_DM): in SROCE_ATTR_QUERY_DM_HANDLE,
 *                the DM's handle; out SROCE_ATTR_QUERY_DM_RESP,
 *                struct sroce_dm_query_resp
 *
 * and one serves tag matching (ibv_post_srq_ops()):
 *
 *  SROCE_METHOD_SRQ_TM_OP (UVERBS_OBJECT_SRQ): in SROCE_ATTR_TM_OP_SRQ,
 *                the handle of a tag-matching SRQ; in SROCE_ATTR_TM_OP_REQ,
 *                struct sroce_tm_op; out SROCE_ATTR_TM_OP_RESP,
 *                struct sroce_tm_op_resp
 *
 * Version and feature negotiation
 * -------------------------------
 * The uverbs ABI version (SROCE_UVERBS_ABI_VERSION) is what the kernel
 * reports in sysfs/netlink and what libibverbs compares with the provider's
 * accepted range before it loads the provider for a device.  It changes only
 * when an existing layout changes incompatibly.  Additions are announced
 * instead by SROCE_FEATURE_* bits in the GET_CONTEXT response, so a newer
 * provider keeps working on an older module and the other way round.
 *
 * The firmware version that QUERY_DEVICE reports (fw_ver) packs the module's
 * version as major << 32 | minor << 16 | patch.
 *
 * Shared rings: layout
 * --------------------
 * Send queues, receive queues, shared receive queues and completion queues
 * of user objects are rings in kernel memory that the process maps with
 * mmap(2) on its uverbs file, at the offset and size the create command
 * returns (struct sroce_ring_info).  A mapping is:
 *
 *   offset 0    struct sroce_ring_hdr: the producer index, then the consumer
 *               index, each alone in its own 128-byte line
 *   offset 256  num_slots slots of slot_size bytes; slot i of the ring holds
 *               the element with index n when i == n % num_slots
 *
 * num_slots is a power of two.  Indices are free-running 32-bit counters
 * (they wrap at 2^32, never at num_slots): the ring is empty when
 * producer == consumer and full when producer - consumer == num_slots.
 *
 * Elements: a send queue holds struct sroce_send_wqe, a receive queue or
 * shared receive queue struct sroce_recv_wqe, each followed in its slot by
 * its scatter/gather list or inline data; a completion queue holds
 * struct ib_uverbs_wc (<rdma/ib_user_verbs.h>, the layout of struct ibv_wc)
 * whose opcode and status take the values of enum ibv_wc_opcode and enum
 * ibv_wc_status, whose wc_flags take those of enum sroce_wc_flags
 * (numbered as enum ibv_wc_flags), and whose sl, in UD receive completions,
 * the RoCE packet type (enum sroce_wc_sl); in a CQ created with
 * SROCE_CQ_TIMESTAMPS a struct sroce_cqe_ts follows it in the slot, and in
 * one created with SROCE_CQ_TM_INFO a struct sroce_cqe_tm follows those.
 * Completions of tag-matching operations have qp_num 0.
 *
 * Shared rings: ownership and memory order
 * ----------------------------------------
 *   ring                   producer (writes slots,    consumer
 *                          advances producer)
 *   send queue             process                    kernel
 *   receive queue, SRQ     process                    kernel
 *   completion queue       kernel                     process
 *
 * The producer fills a slot completely, then publishes it by storing the
 * new producer index with release semantics.  The consumer loads the
 * producer index with acquire semantics before it reads any slot below it,
 * and stores the consumer index with release semantics only after it has
 * finished reading the slots it gives back.  Nothing else orders the two
 * sides.  In the kernel these are smp_load_acquire()/smp_store_release();
 * in the provider, C11 atomic_load_explicit(memory_order_acquire) and
 * atomic_store_explicit(memory_order_release).  Slots between the consumer
 * and producer indices belong to the consumer, which may also write them
 * (the provider marks the completions of a reset QP there); the producer
 * does not look at them again.  Several threads of one process using one
 * ring serialise among themselves; the kernel never takes a lock that
 * userspace holds.
 *
 * When the kernel gives back a slot:
 *   send queue    when the work request completes (with or without a CQE);
 *                 so producer - consumer counts outstanding work requests.
 *                 The consumer index moves before the work request's CQE
 *                 is published: a process that has polled a send CQE finds
 *                 its slot free already
 *   receive queue when the kernel starts to use the work request (it works
 *                 on its own copy from then on)
 *   SRQ           likewise
 *
 * The kernel trusts nothing the process writes.  It keeps its own copy of
 * every index it owns (the shared copy is only a report), reads the other
 * side's index once per batch and requires
 * 0 <= producer - consumer <= num_slots (and, for a send queue, that the
 * producer never moves back behind WQEs the kernel already took), copies
 * each element out of the ring before looking at it, and validates every
 * field of the copy.  A process that breaks the rules only breaks its own
 * queue pair or queue; it cannot make the kernel read or write outside the
 * ring or outside its own registered memory.  What it gets:
 *
 *   send WQE that fails validation   the WQE completes with
 *                                    IBV_WC_LOC_QP_OP_ERR (a bad lkey or
 *                                    an SGE outside its region, when the
 *                                    data is read: IBV_WC_LOC_PROT_ERR),
 *                                    the QP goes to ERR, later WQEs flush
 *   impossible send producer index   the QP goes to ERR, IB_EVENT_QP_FATAL
 *   receive WQE that fails           when a message needs it: the WQE
 *   validation, impossible receive   completes with IBV_WC_LOC_QP_OP_ERR
 *   or SRQ producer index            (or _LOC_PROT_ERR), the receiving QP
 *                                    goes to ERR (RC: the sender gets a
 *                                    NAK; UC, UD: IB_EVENT_QP_FATAL)
 *   impossible CQ consumer index     the CQ counts as full: completions
 *                                    are lost, IB_EVENT_CQ_ERR once, the
 *                                    QPs feeding the CQ go to ERR
 *                                    (IB_EVENT_QP_FATAL), and RESIZE_CQ
 *                                    fails with EINVAL
 *
 * Doorbells and MODIFY_QP still answer 0 for such a QP; the kernel logs
 * nothing about it above debug level.
 *
 * The kernel never writes an index the process owns, and the process
 * never writes one the kernel owns.  Both indices start equal (at 0) when
 * a ring is created, and again in the new ring RESIZE_CQ returns, which
 * holds the unpolled entries from consumer 0 on.  MODIFY_QP to RESET
 * discards every send WQE published until then (the kernel's consumer index
 * catches up with the producer's) and every receive WQE.
 *
 * Sizes: a ring has at least as many slots as the work requests (or CQEs)
 * the create command reports, and a slot holds the element header followed
 * by max_sge SGEs (or, in a send queue, max_inline_data bytes if that is
 * larger).  A CQ asked for N entries reports the power of two above N,
 * less one, and its ring has that power of two of slots, every one usable:
 * one more than it reports.  SRQs cannot be resized: MODIFY_SRQ with
 * IB_SRQ_MAX_WR fails with EOPNOTSUPP.
 *
 * Doorbells.  Work is submitted without a system call, with two
 * exceptions.  After publishing send WQEs the process rings the send
 * doorbell: a POST_SEND write command on its uverbs file with wr_count 0,
 * sge_count 0, wqe_size sizeof(struct ib_uverbs_send_wr) and a response
 * buffer of struct ib_uverbs_post_send_resp.  It never fails because of the
 * QP's state: WQEs published before RTS wait and are sent once the QP gets
 * there.  Receive WQEs need no doorbell, the kernel looks when a message
 * arrives; but a QP in the ERR state only completes (flushes) receive WQEs
 * posted after the error when the receive doorbell rings: a POST_RECV
 * write command with wr_count 0 (likewise formed).  A doorbell of an ERR
 * QP flushes what the ring holds when it rings, at most one ring's worth:
 * WQEs published while it runs wait for the next one.  Requests for completion
 * events (REQ_NOTIFY_CQ) and everything else are ordinary commands.  A
 * kernel-bypass queue pair takes work only through its rings: POST_SEND or
 * POST_RECV commands carrying work requests are refused with EINVAL.
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Reported as ib_device_ops.uverbs_abi_ver. */
#define SROCE_UVERBS_ABI_VERSION 1

/* ib_device_ops.driver_id: there is no id for out-of-tree drivers. */
#define SROCE_DRIVER_ID 0 /* RDMA_DRIVER_UNKNOWN */

/* Device names the provider claims: "sroce" followed by anything. */
#define SROCE_DEVICE_NAME_PREFIX "sroce"

/*
 * Per-QP rate limits (IB_QP_RATE_LIMIT, ibv_modify_qp_rate_limit()), in
 * kb/s: 0 removes the limit; any other value must lie in this range.  The
 * provider reports the range as its packet pacing capabilities, for RC, UC
 * and UD QPs.  The burst size and typical packet size of
 * ibv_modify_qp_rate_limit() are hints sroce does not take: the pacer
 * keeps a QP to its rate, whatever its packet sizes, and lets one that fell
 * behind (idle, or woken late) catch up 2 ms or 16 KiB, whichever is more.
 */
#define SROCE_RATE_LIMIT_MIN_KBPS 1000
#define SROCE_RATE_LIMIT_MAX_KBPS 100000000

/**
 * enum sroce_features - capabilities announced in the GET_CONTEXT
 *	response's features mask; a provider ignores bits it does not know
 * @SROCE_FEATURE_ATOMIC_WRITE: RC send queues take SROCE_WR_ATOMIC_WRITE
 * @SROCE_FEATURE_CQ_TIMESTAMPS: CREATE_CQ takes SROCE_CQ_TIMESTAMPS
 * @SROCE_FEATURE_DM: device memory: DM_ALLOC, its mapping at
 *	SROCE_DM_MMAP_PGOFF(), REG_DM_MR
 * @SROCE_FEATURE_XRC: XRC domains, XRC SRQs, XRC initiator QPs (a send
 *	ring, no receive ring; struct sroce_send_wqe's xrc_remote_srqn) and
 *	XRC target QPs (created without driver data: no ring)
 * @SROCE_FEATURE_FLUSH: RC and XRC send queues take SROCE_WR_FLUSH;
 *	REG_MR and REREG_MR take struct sroce_reg_mr_req
 * @SROCE_FEATURE_TM: tag matching: CREATE_SRQ of type IB_SRQT_TM,
 *	SROCE_METHOD_SRQ_TM_OP, CREATE_CQ's SROCE_CQ_TM_INFO (see "Tag
 *	matching" below)
 */
enum sroce_features {
	SROCE_FEATURE_ATOMIC_WRITE = 1 << 0,
	SROCE_FEATURE_CQ_TIMESTAMPS = 1 << 1,
	SROCE_FEATURE_DM = 1 << 2,
	SROCE_FEATURE_XRC = 1 << 3,
	SROCE_FEATURE_FLUSH = 1 << 4,
	SROCE_FEATURE_TM = 1 << 5,
};

/*
 * Device memory (ibv_alloc_dm()).  Kernel memory the device owns, zeroed,
 * charged to the allocating process, up to SROCE_DM_MAX_SIZE bytes each
 * (query_device_ex's max_dm_size) and SROCE_DM_MAX per device.  DM_ALLOC
 * carries no driver data; the process maps the memory, page-rounded, with
 * mmap(2) on its uverbs file at the page offset SROCE_DM_MMAP_PGOFF() of
 * the handle DM_ALLOC returned (times the page size).  A mapping keeps its
 * pages after DM_FREE; a new DM that gets the handle again is new memory,
 * mapped at the same offset.  The memory lives until the last mapping and
 * the last memory region over it are gone; DM_FREE fails with EBUSY while
 * regions are over it.  Regions (REG_DM_MR) are zero-based, as the core
 * requires: address 0 is the region's offset in the DM.  The process
 * copies into and out of the mapping itself (ibv_memcpy_to_dm()); the
 * provider takes offsets and lengths that are multiples of 4, as hardware
 * does.
 * Ordering: a store to the mapping is seen by a work request posted after
 * it (the doorbell is a system call, or the ring's release store).
 */
#define SROCE_DM_MAX_SIZE 0x100000U /* 1 MiB */
#define SROCE_DM_MAX 256
#define SROCE_DM_SLOT_PAGES 256
#define SROCE_DM_MMAP_PGOFF_BASE 0x1000000ULL
#define SROCE_DM_MMAP_PGOFF(handle) \
	(SROCE_DM_MMAP_PGOFF_BASE + (__u64)(handle) * SROCE_DM_SLOT_PAGES)

/*
 * The device clock that completion timestamps count: CLOCK_MONOTONIC_RAW,
 * in nanoseconds (query_device_ex's hca_core_clock, in kHz).
 */
#define SROCE_CLOCK_KHZ 1000000

/*
 * Opcodes the 6.1 kernel's uverbs headers do not name, numbered as
 * libibverbs (and later kernels' ib_user_verbs.h) number them:
 * IBV_WR_ATOMIC_WRITE in a send WQE, IBV_WC_ATOMIC_WRITE in its completion.
 */
#define SROCE_WR_ATOMIC_WRITE 15
#define SROCE_WC_ATOMIC_WRITE 9

/*
 * FLUSH (IBTA 1.5): IBV_WR_FLUSH in a send WQE, IBV_WC_FLUSH in its
 * completion; the placement types (ibv_placement_type) and selectivity
 * levels (ibv_selectivity_level) of struct sroce_send_wqe's wr.flush; the
 * access rights a region needs to be flushed remotely (IBV_ACCESS_FLUSH_*),
 * one per placement type asked for.  A region has
 * SROCE_MR_FLUSH_PERSISTENT only over persistent memory.
 */
#define SROCE_WR_FLUSH 14
#define SROCE_WC_FLUSH 8

enum sroce_flush_type {
	SROCE_FLUSH_GLOBAL = 1 << 0,
	SROCE_FLUSH_PERSISTENT = 1 << 1,
};

enum sroce_flush_level {
	SROCE_FLUSH_RANGE = 0,
	SROCE_FLUSH_MR = 1,
};

enum sroce_mr_flush_rights {
	SROCE_MR_FLUSH_GLOBAL = 1 << 8,
	SROCE_MR_FLUSH_PERSISTENT = 1 << 9,
	SROCE_MR_FLUSH_RIGHTS = SROCE_MR_FLUSH_GLOBAL |
				SROCE_MR_FLUSH_PERSISTENT,
};

/**
 * struct sroce_reg_mr_req - REG_MR and REREG_MR, provider to kernel (with
 *	SROCE_FEATURE_FLUSH)
 * @flush_access: SROCE_MR_FLUSH_* rights the region gets besides the
 *	command's access flags (a kernel before 6.2 refuses them there); no
 *	other bits.  REREG_MR takes them with IB_MR_REREG_ACCESS only.
 * @reserved: zero
 *
 * An empty request asks for no rights beyond the command's.
 */
struct sroce_reg_mr_req {
	__u32 flush_access;
	__u32 reserved;
};

/**
 * struct sroce_alloc_ucontext_req - GET_CONTEXT, provider to kernel
 * @provider_abi: SROCE_UVERBS_ABI_VERSION the provider was built with
 * @reserved: must be zero
 *
 * An empty request (a provider that sends nothing) is accepted too.
 */
struct sroce_alloc_ucontext_req {
	__u32 provider_abi;
	__u32 reserved;
};

/**
 * struct sroce_alloc_ucontext_resp - GET_CONTEXT, kernel to provider
 * @abi_version: SROCE_UVERBS_ABI_VERSION of the module
 * @features: capabilities the module offers this context (enum
 *	sroce_features; a provider ignores bits it does not know)
 * @reserved: zero
 */
struct sroce_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 features;
	__aligned_u64 reserved;
};

/* The driver's uverbs ioctl attributes and methods (see Commands above). */
enum sroce_ioctl_query_context_attrs {
	SROCE_ATTR_QUERY_CONTEXT_RESP = (1U << UVERBS_ID_NS_SHIFT),
};

enum sroce_ioctl_dm_methods {
	SROCE_METHOD_DM_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum sroce_ioctl_dm_query_attrs {
	SROCE_ATTR_QUERY_DM_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	SROCE_ATTR_QUERY_DM_RESP,
};

enum sroce_ioctl_srq_methods {
	SROCE_METHOD_SRQ_TM_OP = (1U << UVERBS_ID_NS_SHIFT),
};

enum sroce_ioctl_tm_op_attrs {
	SROCE_ATTR_TM_OP_SRQ = (1U << UVERBS_ID_NS_SHIFT),
	SROCE_ATTR_TM_OP_REQ,
	SROCE_ATTR_TM_OP_RESP,
};

/**
 * struct sroce_dm_query_resp - SROCE_METHOD_DM_QUERY, kernel to provider
 * @length: bytes of the device memory (its mapping is this, page-rounded,
 *	at SROCE_DM_MMAP_PGOFF() of its handle)
 */
struct sroce_dm_query_resp {
	__aligned_u64 length;
};

/*
 * Shared rings.
 */

/* Offset of the first slot in a ring mapping. */
#define SROCE_RING_DATA_OFFSET 256

/**
 * struct sroce_ring_hdr - the indices at the start of every ring mapping
 * @producer: written by the producer (release), read by the consumer
 *	(acquire)
 * @reserved0: keeps @consumer in another 128-byte line
 * @consumer: written by the consumer (release), read by the producer
 *	(acquire)
 * @reserved1: pads the header to SROCE_RING_DATA_OFFSET
 */
struct sroce_ring_hdr {
	__u32 producer;
	__u32 reserved0[31];
	__u32 consumer;
	__u32 reserved1[31];
};

/**
 * struct sroce_ring_info - where a ring is and how it is laid out
 * @mmap_offset: the offset to pass to mmap(2) on the uverbs file
 * @mmap_size: bytes to map (the header and every slot, page-rounded)
 * @num_slots: slots in the ring, a power of two; 0 when the object has no
 *	such ring (the receive queue of a QP attached to an SRQ)
 * @slot_size: bytes from one slot to the next, a multiple of 16
 * @reserved: zero
 */
struct sroce_ring_info {
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 num_slots;
	__u32 slot_size;
	__u32 reserved;
};

/**
 * struct sroce_sge - one scatter/gather element of a work request
 * @addr: virtual address in the memory region of @lkey
 * @length: bytes
 * @lkey: the local key of a memory region of the queue pair's PD
 */
struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* wc_flags of completion ring entries, numbered as enum ibv_wc_flags. */
enum sroce_wc_flags {
	SROCE_WC_GRH = 1 << 0,
	SROCE_WC_WITH_IMM = 1 << 1,
	SROCE_WC_IP_CSUM_OK = 1 << 2,
	SROCE_WC_WITH_INV = 1 << 3,
	SROCE_WC_TM_SYNC_REQ = 1 << 4,
	SROCE_WC_TM_MATCH = 1 << 5,
	SROCE_WC_TM_DATA_VALID = 1 << 6,
};

/*
 * The sl field of a UD receive completion (UD and the kernel's GSI QP)
 * carries the received packet's RoCE type, as RoCE HCAs fill it for
 * userspace: bits 2:0 the network header (SROCE_WC_SL_IPV6 or
 * SROCE_WC_SL_IPV4), bit 3 (SROCE_WC_SL_UDP) set for RoCEv2, whose frames
 * carry a UDP header; so 0xa for RoCEv2 over IPv4 and 0x9 over IPv6.  It
 * says where the receiving GID is in the 40 bytes before the data: for
 * IPv4 the IPv4 header fills the last 20 of them (the destination address
 * is the last 4 bytes) and the first 20 are zero; for IPv6 the IPv6 header
 * fills all 40.  UCX's ud_verbs transport, for one, drops a datagram whose
 * destination it cannot find there.  Such completions always have
 * SROCE_WC_GRH.  Other completions have sl 0.
 */
enum sroce_wc_sl {
	SROCE_WC_SL_IPV6 = 0x1,
	SROCE_WC_SL_IPV4 = 0x2,
	SROCE_WC_SL_UDP = 0x8,
};

/* Flags of struct sroce_send_wqe, numbered as enum ibv_send_flags. */
enum sroce_send_flags {
	SROCE_SEND_FENCE = 1 << 0,
	SROCE_SEND_SIGNALED = 1 << 1,
	SROCE_SEND_SOLICITED = 1 << 2,
	SROCE_SEND_INLINE = 1 << 3,
};

/**
 * struct sroce_send_wqe - a send work request in a send queue slot
 * @wr_id: returned in the completion
 * @opcode: enum ib_uverbs_wr_opcode
 * @send_flags: enum sroce_send_flags
 * @num_sge: SGEs following this header, at most the QP's max_send_sge; 0
 *	with SROCE_SEND_INLINE
 * @inline_len: with SROCE_SEND_INLINE, bytes of data following this header,
 *	at most the QP's max_inline_data; else 0
 * @imm_data: immediate data of the _WITH_IMM opcodes, network byte order
 * @invalidate_rkey: the rkey to invalidate of SEND_WITH_INV and LOCAL_INV
 * @xrc_remote_srqn: XRC initiator QPs: the number of the remote XRC SRQ
 *	the work request is for (24 bits); zero for other QPs
 * @wr: opcode-specific fields
 * @wr.rdma: RDMA_WRITE(_WITH_IMM), RDMA_READ: the remote buffer
 * @wr.atomic: ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD: the remote 8-byte
 *	word (8-byte aligned), the compare or add operand, the swap operand
 * @wr.atomic_write: SROCE_WR_ATOMIC_WRITE (RC, with
 *	SROCE_FEATURE_ATOMIC_WRITE): the remote 8-byte word (8-byte aligned,
 *	in a region with remote write access), the 8 bytes stored there in
 *	one piece, in memory order; num_sge 0, not inline
 * @wr.flush: SROCE_WR_FLUSH (RC and XRC, with SROCE_FEATURE_FLUSH): the
 *	remote range [remote_addr, remote_addr + length) (SROCE_FLUSH_RANGE)
 *	or the whole region of rkey (SROCE_FLUSH_MR: address and length are
 *	sent but not checked), the placement type (enum sroce_flush_type:
 *	one or both bits) and level (enum sroce_flush_level); num_sge 0, not
 *	inline.  It completes when the responder has made every write it
 *	executed before globally visible (persistent); sroce's responder
 *	executes requests in order, so with SROCE_SEND_FENCE or not, the
 *	writes posted before it on the QP are covered.
 * @wr.ud: UD sends: the address handle (struct sroce_create_ah_resp's
 *	ah_num, of this context and the QP's PD), the destination QP number
 *	and Q_Key
 * @wr.bind_mw: BIND_MW (RC): a key of the window (ibv_mw.rkey; only its
 *	index, the upper 24 bits, is used), the rkey the window gets (same
 *	index), the range [addr, addr + length) of the memory region of
 *	mr_lkey it opens (length 0 unbinds a type 1 window and needs no
 *	region), and the IBV_ACCESS_REMOTE_* rights (IBV_ACCESS_LOCAL_WRITE
 *	and IBV_ACCESS_MW_BIND are ignored, other bits refused)
 *
 * Opcodes a QP takes: UD: SEND, SEND_WITH_IMM; UC: also RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM, LOCAL_INV; RC: also RDMA_READ, ATOMIC_CMP_AND_SWP,
 * ATOMIC_FETCH_AND_ADD, BIND_MW, SEND_WITH_INV, SROCE_WR_ATOMIC_WRITE,
 * SROCE_WR_FLUSH; XRC initiator: those of RC but BIND_MW.
 * LOCAL_INV, BIND_MW, SROCE_WR_ATOMIC_WRITE and SROCE_WR_FLUSH take no
 * SGEs and no inline data (num_sge 0, not inline).
 *
 * The slot holds this 64-byte header, then either num_sge struct sroce_sge
 * or inline_len bytes of data.
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 inline_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	};
	__u32 xrc_remote_srqn;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__u8 data[8];
			__u32 rkey;
			__u32 reserved;
		} atomic_write;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;
			__u8 level;
			__u8 reserved[6];
		} flush;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__u32 mw_rkey;
			__u32 new_rkey;
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;
		} bind_mw;
	} wr;
};

/**
 * struct sroce_recv_wqe - a receive work request in a receive queue or
 *	SRQ slot
 * @wr_id: returned in the completion
 * @num_sge: SGEs following this header, at most the queue's max_sge
 * @reserved: zero
 */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* Flags of struct sroce_create_cq_req. */
enum sroce_cq_req_flags {
	SROCE_CQ_TIMESTAMPS = 1 << 0,
	SROCE_CQ_TM_INFO = 1 << 1,
};

/**
 * struct sroce_create_cq_req - CREATE_CQ (either form), provider to kernel
 * @flags: enum sroce_cq_req_flags; SROCE_CQ_TIMESTAMPS (with
 *	SROCE_FEATURE_CQ_TIMESTAMPS) makes every slot a struct ib_uverbs_wc
 *	followed by a struct sroce_cqe_ts; SROCE_CQ_TM_INFO (with
 *	SROCE_FEATURE_TM) adds a struct sroce_cqe_tm after them
 * @reserved: zero
 *
 * An empty request asks for nothing: slots hold a struct ib_uverbs_wc.
 */
struct sroce_create_cq_req {
	__u32 flags;
	__u32 reserved;
};

/**
 * struct sroce_cqe_ts - the times of a completion, after its struct
 *	ib_uverbs_wc in a CQ created with SROCE_CQ_TIMESTAMPS
 * @clock_ns: the device clock (SROCE_CLOCK_KHZ) when the kernel wrote the
 *	completion
 * @realtime_ns: CLOCK_REALTIME in nanoseconds at that moment
 *
 * Both are written before the producer index that publishes the slot.
 */
struct sroce_cqe_ts {
	__aligned_u64 clock_ns;
	__aligned_u64 realtime_ns;
};

/**
 * struct sroce_create_cq_resp - CREATE_CQ and RESIZE_CQ, kernel to provider
 * @ring: the completion ring; slots hold struct ib_uverbs_wc (and, with
 *	SROCE_CQ_TIMESTAMPS, struct sroce_cqe_ts after it)
 */
struct sroce_create_cq_resp {
	struct sroce_ring_info ring;
};

/**
 * struct sroce_create_qp_resp - CREATE_QP, kernel to provider
 * @sq: the send ring; slots hold struct sroce_send_wqe and its SGEs or data
 * @rq: the receive ring (num_slots 0 with an SRQ); slots hold struct
 *	sroce_recv_wqe and its SGEs
 */
struct sroce_create_qp_resp {
	struct sroce_ring_info sq;
	struct sroce_ring_info rq;
};

/**
 * struct sroce_create_srq_resp - CREATE_SRQ, kernel to provider
 * @ring: the receive ring; slots hold struct sroce_recv_wqe and its SGEs
 */
struct sroce_create_srq_resp {
	struct sroce_ring_info ring;
};

/**
 * struct sroce_create_ah_resp - CREATE_AH, kernel to provider
 * @ah_num: what UD send WQEs of this context name the address handle by
 * @reserved: zero
 */
struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/*
 * Tag matching (with SROCE_FEATURE_TM; rdma-core's
 * Documentation/tag_matching.md describes the model).
 *
 * A tag-matching SRQ (CREATE_SRQ, type IB_SRQT_TM, max_num_tags at most
 * SROCE_TM_MAX_TAGS) has a receive ring like any SRQ, whose buffers take
 * the messages no tag takes, and a list of tagged buffers the process
 * manages with SROCE_METHOD_SRQ_TM_OP, one operation per call, executed
 * before the call returns (so an operation is never outstanding, and
 * max_ops only bounds nothing).  Only RC QPs may use it; their receive
 * completions, like the operations', go to the SRQ's CQ.
 *
 * A message arriving at a QP of the SRQ starts with a struct sroce_tmh
 * (16 bytes; a shorter message has none):
 *  - SROCE_TMH_NO_TAG: into an SRQ buffer, whole (the header too);
 *    completion SROCE_WC_TM_NO_TAG;
 *  - SROCE_TMH_EAGER and SROCE_TMH_RNDV: matched against the list in the
 *    order the buffers were added, an entry taking a tag t when
 *    (t & mask) == (tag & mask).  Matched, the entry leaves the list: an
 *    eager payload (what follows the header) goes into its buffer, one
 *    completion SROCE_WC_TM_RECV with SROCE_WC_TM_MATCH |
 *    SROCE_WC_TM_DATA_VALID (a message of several packets: one with
 *    SROCE_WC_TM_MATCH when its first packet arrives, one with
 *    SROCE_WC_TM_DATA_VALID when its last has), both with the entry's
 *    recv_wr_id.  A rendezvous request (header, struct sroce_rvh, at most
 *    SROCE_TM_MAX_RNDV_HDR bytes in all, one packet) completes with
 *    SROCE_WC_TM_MATCH at once; the QP then reads the sender's buffer
 *    into the entry's with an RDMA READ, sends the sender the rendezvous
 *    header back with opcode SROCE_TMH_FIN (a 32-byte SEND), and
 *    completes with SROCE_WC_TM_DATA_VALID and byte_len the bytes read.
 *    An entry too small for the rendezvous length gets the message itself
 *    and completes with status SROCE_WC_TM_RNDV_INCOMPLETE and
 *    SROCE_WC_TM_MATCH.  Not matched (or a rendezvous of more than one
 *    packet, or one arriving while the QP cannot send): unexpected, into
 *    an SRQ buffer whole, completion SROCE_WC_TM_RECV without either flag,
 *    and the SRQ's unexpected count grows by one;
 *  - any other opcode (SROCE_TMH_FIN among them), or no header: into an
 *    SRQ buffer, completion IB_WC_RECV, as on an ordinary SRQ.
 * Completions with SROCE_WC_TM_MATCH carry the message's tag and app_ctx
 * in struct sroce_cqe_tm (in a CQ created with SROCE_CQ_TM_INFO); other
 * completions have 0 there (an unexpected message's header is in its
 * buffer).
 *
 * Ordering: while the count of unexpected messages the process last
 * reported (an operation with SROCE_TM_OP_SYNC) differs from the SRQ's,
 * no message is matched: each is unexpected.  Every operation's
 * completion has SROCE_WC_TM_SYNC_REQ while the counts differ.
 */
#define SROCE_TM_MAX_TAGS 256
#define SROCE_TM_MAX_SGE 1
#define SROCE_TM_MAX_RNDV_HDR 64

/* The struct sroce_tmh opcodes, numbered as enum ibv_tmh_op. */
enum sroce_tmh_op {
	SROCE_TMH_NO_TAG = 0,
	SROCE_TMH_RNDV = 1,
	SROCE_TMH_FIN = 2,
	SROCE_TMH_EAGER = 3,
};

/**
 * struct sroce_tmh - the tag-matching header a message starts with (as
 *	struct ibv_tmh)
 * @opcode: enum sroce_tmh_op
 * @reserved: ignored
 * @app_ctx: returned as the completion's priv
 * @tag: the tag
 */
struct sroce_tmh {
	__u8 opcode;
	__u8 reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

/**
 * struct sroce_rvh - the rendezvous header after a struct sroce_tmh (as
 *	struct ibv_rvh): the sender's buffer, in a region with remote read
 *	access
 * @va: its address
 * @rkey: its key
 * @len: its bytes
 */
struct sroce_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
};

/* Operations of struct sroce_tm_op, numbered as enum ibv_ops_wr_opcode. */
enum sroce_tm_opcode {
	SROCE_TM_OP_ADD = 0,
	SROCE_TM_OP_DEL = 1,
	SROCE_TM_OP_SYNC = 2,
};

/* Flags of struct sroce_tm_op, numbered as enum ibv_ops_flags. */
enum sroce_tm_op_flags {
	SROCE_TM_OP_SIGNALED = 1 << 0,
	SROCE_TM_OP_SYNC_CNT = 1 << 1,
};

/**
 * struct sroce_tm_op - SROCE_METHOD_SRQ_TM_OP, provider to kernel
 * @wr_id: the operation's completion's wr_id
 * @recv_wr_id: ADD: the wr_id of the buffer's receive completions
 * @tag: ADD: the tag
 * @mask: ADD: the bits of @tag that must match
 * @opcode: enum sroce_tm_opcode
 * @flags: enum sroce_tm_op_flags: SROCE_TM_OP_SIGNALED asks for a
 *	completion (SROCE_WC_TM_ADD, _DEL, _SYNC on the SRQ's CQ; a DEL of an
 *	entry no longer listed always completes, with status SROCE_WC_TM_ERR);
 *	SROCE_TM_OP_SYNC_CNT reports @unexpected_cnt
 * @unexpected_cnt: the unexpected messages the process has handled
 * @handle: DEL: what the ADD returned
 * @num_sge: ADD: 0 or SROCE_TM_MAX_SGE
 * @reserved: zero
 * @sge: ADD with @num_sge 1: the buffer, in a region of the SRQ's PD
 */
struct sroce_tm_op {
	__aligned_u64 wr_id;
	__aligned_u64 recv_wr_id;
	__aligned_u64 tag;
	__aligned_u64 mask;
	__u32 opcode;
	__u32 flags;
	__u32 unexpected_cnt;
	__u32 handle;
	__u32 num_sge;
	__u32 reserved;
	struct sroce_sge sge;
};

/**
 * struct sroce_tm_op_resp - SROCE_METHOD_SRQ_TM_OP, kernel to provider
 * @handle: ADD: names the entry to DEL
 * @reserved: zero
 *
 * The call fails with EINVAL for a malformed operation or an SRQ that is
 * not a tag-matching one, ENOMEM when the list is full (ADD).
 */
struct sroce_tm_op_resp {
	__u32 handle;
	__u32 reserved;
};

/*
 * Completion opcodes and statuses of tag matching, numbered as enum
 * ibv_wc_opcode and enum ibv_wc_status.
 */
#define SROCE_WC_TM_ADD 130
#define SROCE_WC_TM_DEL 131
#define SROCE_WC_TM_SYNC 132
#define SROCE_WC_TM_RECV 133
#define SROCE_WC_TM_NO_TAG 134
#define SROCE_WC_TM_ERR 22
#define SROCE_WC_TM_RNDV_INCOMPLETE 23

/**
 * struct sroce_cqe_tm - a completion's tag-matching header, in a CQ created
 *	with SROCE_CQ_TM_INFO: after the struct ib_uverbs_wc, and after its
 *	struct sroce_cqe_ts if the CQ has one
 * @tag: the message's tag
 * @priv: the header's app_ctx
 * @reserved: zero
 */
struct sroce_cqe_tm {
	__aligned_u64 tag;
	__u32 priv;
	__u32 reserved;
};

#endif /* SROCE_ABI_H */
