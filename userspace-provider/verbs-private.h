/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * verbs-private.h - our own declarations of libibverbs' private provider
 * ABI, version IBVERBS_PRIVATE_34 ("PABI 34").
 *
 * libibverbs loads providers named lib<name>-rdmav34.so and lets them
 * register through verbs_register_driver_34().  Everything a provider needs
 * for that lives in rdma-core's build-tree headers (driver.h, kern-abi.h,
 * cmd_ioctl.h, cmd_write.h), which distributions do not install, so this
 * file declares the subset sroce uses.  It is written from the layouts
 * documented in provider-abi.md (section numbers below refer to it), which
 * were read off rdma-core v44.0 (Debian 12 ships 44.0-2, no libibverbs
 * patches) and Debian's libibverbs.so.1 binary.
 *
 * Validity: a binary is valid only for the rdma-core release it was built
 * against.  Everything here except struct verbs_qp holds for v36.0 ...
 * v56.x: PABI 34 itself covers v34 ... v56, but v35 and v36 each inserted
 * ops into the sorted ops table below without renaming the ABI, so on
 * v34/v35 every op after the insertion point would be read from the wrong
 * slot.  sroce.c keeps a reference to an IBVERBS_1.14 symbol (new in v36.0)
 * so that the dynamic linker refuses the provider on those releases; v57 and
 * later renamed the ABI, so they neither look for *-rdmav34.so nor export
 * IBVERBS_PRIVATE_34.  struct verbs_qp, however, embeds the public struct
 * ibv_qp_ex, which grew inside PABI 34 (v44.0 and v45.0 each appended a
 * member) with no symbol version to show it, so its layout is that of the
 * installed headers and nothing at load time can check it (see struct
 * verbs_qp below).  The build-time window check lives in
 * scripts/rdma-core-version.sh.
 *
 * None of these structures is copied as a whole: libibverbs reads and
 * writes named members at its own compiled offsets, so only the offsets
 * must agree.  They are pinned by the static assertions at the end of this
 * file (x86_64 LP64 values; other LP64 targets give the same numbers).
 *
 * Public structures (struct ibv_device, ibv_context, verbs_context, ibv_pd,
 * ibv_mr ...) come from the installed <infiniband/verbs.h>; the uverbs
 * command structures (struct ib_uverbs_*) from the kernel UAPI header
 * <rdma/ib_user_verbs.h>.
 *
 * When adding an op or a command: declare only what is used, take the
 * prototype from the v36.0 ... v56.x range (provider-abi.md section 3.1
 * lists the few signatures that changed inside it) and add the matching
 * size/offset assertion.
 */
#ifndef SROCE_VERBS_PRIVATE_H
#define SROCE_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

/*
 * Device matching (provider-abi.md 1.2, 4.1).  Unchanged v33 ... v64.
 */

/* Values of verbs_match_ent.kind. */
enum {
	VERBS_MATCH_SENTINEL	= 0,	/* all-zero entry ends a table */
	VERBS_MATCH_PCI		= 1,	/* vendor/device ids */
	VERBS_MATCH_MODALIAS	= 2,	/* fnmatch() pattern in u.modalias */
	VERBS_MATCH_DRIVER_ID	= 3,	/* enum rdma_driver_id in u.driver_id */
};

struct verbs_match_ent {
	void			*driver_data;
	union {
		const char	*modalias;
		uint64_t	driver_id;
	} u;
	uint16_t		vendor;
	uint16_t		device;
	uint8_t			kind;
};

/*
 * Name matching: libibverbs runs every MODALIAS pattern against
 * "rdma_device:N<ibdev name>" as well, so this pattern is a name-prefix
 * match.  Upstream discourages it, but a parentless soft device has no
 * modalias and an out-of-tree driver has no driver id of its own.
 */
#define VERBS_NAME_PATTERN(prefix) "rdma_device:*N" prefix "*"

/*
 * libibverbs' per-device sysfs/netlink record.  Its layout shifted in v35
 * (num_ports) and it is not needed by sroce, so it stays opaque.
 */
struct verbs_sysfs_dev;

/*
 * Provider registration (provider-abi.md 4.2).  Unchanged v33 ... v64.
 * libibverbs keeps the pointer passed to verbs_register_driver_34(), so the
 * table must live as long as the library: a static const object.
 */
struct verbs_device_ops {
	const char *name;			/* used in messages only */

	uint32_t match_min_abi_version;		/* uverbs_abi_ver range */
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers; /* NULL */

	/* Optional; if set it overrides the match_table result. */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	/* Owns cmd_fd: closes it on failure. */
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	/* Must return zero-filled memory. */
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Layout-compatible with ccan's struct list_node, which libibverbs uses. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/*
 * The provider's device embeds this as its first member (provider-abi.md
 * 4.3); libibverbs fills everything after alloc_device() returns.
 * Unchanged v33 ... v64.
 */
struct verbs_device {
	struct ibv_device device;		/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;			/* set by ibv_cmd_get_context */
};

/*
 * Memory regions (provider-abi.md 4.7).  The dereg_mr op receives the
 * verbs_mr that contains the ibv_mr returned by reg_mr, so a provider's MR
 * must embed this, not a bare ibv_mr.  Unchanged v33 ... v64.
 */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr		ibv_mr;
	enum ibv_mr_type	mr_type;
	int			access;
};

/*
 * Completion queues (provider-abi.md 4.7).  ibv_cmd_create_cq_ex() takes
 * this union, and an ibv_cq_ex starts with the members of an ibv_cq, so one
 * provider CQ serves both create_cq and create_cq_ex.  Unchanged v33 ... v64.
 */
struct verbs_cq {
	union {
		struct ibv_cq		cq;
		struct ibv_cq_ex	cq_ex;
	};
};

/*
 * XRC domains and SRQs (driver.h's; unchanged v33 ... v58).
 * ibv_cmd_open_xrcd() fills handle and comp_mask (VERBS_XRCD_HANDLE);
 * ibv_cmd_create_srq_ex() fills srq_type, xrcd, cq and srq_num.  An XRC
 * SRQ must be a verbs_srq: libibverbs reads srq_num from it.
 */
struct verbs_xrcd {
	struct ibv_xrcd		xrcd;
	uint32_t		comp_mask;
	uint32_t		handle;
};

struct verbs_srq {
	struct ibv_srq		srq;
	enum ibv_srq_type	srq_type;
	struct verbs_xrcd	*xrcd;
	struct ibv_cq		*cq;
	uint32_t		srq_num;
};

/* Values of verbs_qp.comp_mask. */
enum {
	VERBS_QP_XRCD		= 1 << 0,	/* xrcd is valid */
	VERBS_QP_EX		= 1 << 1,	/* qp_ex is valid */
};

/*
 * Queue pairs (provider-abi.md 4.7).  libibverbs' ibv_qp_to_qp_ex() casts
 * every struct ibv_qp to this and tests comp_mask, so every provider QP
 * embeds a verbs_qp, not a bare ibv_qp, with comp_mask 0 unless the QP
 * offers the ibv_wr_* API.  ibv_cmd_create_qp_ex() writes comp_mask too.
 *
 * The public struct ibv_qp_ex is 344 bytes in rdma-core v36 ... v43, 352 in
 * v44 and 360 in v45 ... v56, so comp_mask and xrcd move with the release:
 * this declaration takes the installed <infiniband/verbs.h>, which makes it
 * right for the release the provider is built against and for no other.  A
 * binary is therefore valid only for the rdma-core it was built against;
 * the Makefile's window check cannot see this, and the dynamic linker
 * cannot either (no symbol version changed).  Under another release
 * libibverbs would read and write comp_mask at its own offset, inside or
 * past this struct: undefined behaviour, not a clean failure.
 */
struct verbs_qp {
	union {
		struct ibv_qp		qp;
		struct ibv_qp_ex	qp_ex;
	};
	uint32_t		comp_mask;	/* VERBS_QP_* */
	struct verbs_xrcd	*xrcd;		/* XRC receive QPs' domain */
};

/*
 * The provider's op table (provider-abi.md 4.6).
 *
 * All 76 slots, in the strictly sorted order libibverbs uses; slot n is at
 * byte 8 * n.  verbs_set_ops() copies only the non-NULL members, so unset
 * ops keep libibverbs' defaults, which fail with EOPNOTSUPP.  This exact
 * table holds from v36.0 through v58.x (the member order was compared with
 * the v36.0, v44.0 and v56.4 sources); v34 had 73 slots and v35 75.
 */
struct verbs_context_ops {
	/*  0 */ int (*advise_mr)(struct ibv_pd *pd,
				  enum ibv_advise_mr_advice advice,
				  uint32_t flags, struct ibv_sge *sg_list,
				  uint32_t num_sges);
	/*  1 */ struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
					    struct ibv_alloc_dm_attr *attr);
	/*  2 */ struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd,
					    enum ibv_mw_type type);
	/*  3 */ struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	/*  4 */ struct ibv_pd *(*alloc_parent_domain)(
			struct ibv_context *context,
			struct ibv_parent_domain_init_attr *attr);
	/*  5 */ struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	/*  6 */ struct ibv_td *(*alloc_td)(struct ibv_context *context,
					    struct ibv_td_init_attr *init_attr);
	/*  7 */ void (*async_event)(struct ibv_context *context,
				     struct ibv_async_event *event);
	/*  8 */ int (*attach_counters_point_flow)(
			struct ibv_counters *counters,
			struct ibv_counter_attach_attr *attr,
			struct ibv_flow *flow);
	/*  9 */ int (*attach_mcast)(struct ibv_qp *qp,
				     const union ibv_gid *gid, uint16_t lid);
	/* 10 */ int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
				struct ibv_mw_bind *mw_bind);
	/* 11 */ int (*close_xrcd)(struct ibv_xrcd *xrcd);
	/* 12 */ void (*cq_event)(struct ibv_cq *cq);
	/* 13 */ struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
					     struct ibv_ah_attr *attr);
	/* 14 */ struct ibv_counters *(*create_counters)(
			struct ibv_context *context,
			struct ibv_counters_init_attr *init_attr);
	/* 15 */ struct ibv_cq *(*create_cq)(struct ibv_context *context,
					     int cqe,
					     struct ibv_comp_channel *channel,
					     int comp_vector);
	/* 16 */ struct ibv_cq_ex *(*create_cq_ex)(
			struct ibv_context *context,
			struct ibv_cq_init_attr_ex *init_attr);
	/* 17 */ struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
						 struct ibv_flow_attr *attr);
	/* 18 */ struct ibv_flow_action *(*create_flow_action_esp)(
			struct ibv_context *context,
			struct ibv_flow_action_esp_attr *attr);
	/* 19 */ struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
					     struct ibv_qp_init_attr *attr);
	/* 20 */ struct ibv_qp *(*create_qp_ex)(
			struct ibv_context *context,
			struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	/* 21 */ struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
			struct ibv_context *context,
			struct ibv_rwq_ind_table_init_attr *init_attr);
	/* 22 */ struct ibv_srq *(*create_srq)(
			struct ibv_pd *pd,
			struct ibv_srq_init_attr *srq_init_attr);
	/* 23 */ struct ibv_srq *(*create_srq_ex)(
			struct ibv_context *context,
			struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	/* 24 */ struct ibv_wq *(*create_wq)(
			struct ibv_context *context,
			struct ibv_wq_init_attr *wq_init_attr);
	/* 25 */ int (*dealloc_mw)(struct ibv_mw *mw);
	/* 26 */ int (*dealloc_pd)(struct ibv_pd *pd);
	/* 27 */ int (*dealloc_td)(struct ibv_td *td);
	/* 28 */ int (*dereg_mr)(struct verbs_mr *vmr);
	/* 29 */ int (*destroy_ah)(struct ibv_ah *ah);
	/* 30 */ int (*destroy_counters)(struct ibv_counters *counters);
	/* 31 */ int (*destroy_cq)(struct ibv_cq *cq);
	/* 32 */ int (*destroy_flow)(struct ibv_flow *flow);
	/* 33 */ int (*destroy_flow_action)(struct ibv_flow_action *action);
	/* 34 */ int (*destroy_qp)(struct ibv_qp *qp);
	/* 35 */ int (*destroy_rwq_ind_table)(
			struct ibv_rwq_ind_table *rwq_ind_table);
	/* 36 */ int (*destroy_srq)(struct ibv_srq *srq);
	/* 37 */ int (*destroy_wq)(struct ibv_wq *wq);
	/* 38 */ int (*detach_mcast)(struct ibv_qp *qp,
				     const union ibv_gid *gid, uint16_t lid);
	/* 39 */ void (*free_context)(struct ibv_context *context);
	/* 40 */ int (*free_dm)(struct ibv_dm *dm);
	/* 41 */ int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	/* 42 */ struct ibv_dm *(*import_dm)(struct ibv_context *context,
					     uint32_t dm_handle);
	/* 43 */ struct ibv_mr *(*import_mr)(struct ibv_pd *pd,
					     uint32_t mr_handle);
	/* 44 */ struct ibv_pd *(*import_pd)(struct ibv_context *context,
					     uint32_t pd_handle);
	/* 45 */ int (*modify_cq)(struct ibv_cq *cq,
				  struct ibv_modify_cq_attr *attr);
	/* 46 */ int (*modify_flow_action_esp)(
			struct ibv_flow_action *action,
			struct ibv_flow_action_esp_attr *attr);
	/* 47 */ int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
				  int attr_mask);
	/* 48 */ int (*modify_qp_rate_limit)(
			struct ibv_qp *qp,
			struct ibv_qp_rate_limit_attr *attr);
	/* 49 */ int (*modify_srq)(struct ibv_srq *srq,
				   struct ibv_srq_attr *srq_attr,
				   int srq_attr_mask);
	/* 50 */ int (*modify_wq)(struct ibv_wq *wq,
				  struct ibv_wq_attr *wq_attr);
	/* 51 */ struct ibv_qp *(*open_qp)(struct ibv_context *context,
					   struct ibv_qp_open_attr *attr);
	/* 52 */ struct ibv_xrcd *(*open_xrcd)(
			struct ibv_context *context,
			struct ibv_xrcd_init_attr *xrcd_init_attr);
	/* 53 */ int (*poll_cq)(struct ibv_cq *cq, int num_entries,
				struct ibv_wc *wc);
	/* 54 */ int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
				  struct ibv_recv_wr **bad_wr);
	/* 55 */ int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
				  struct ibv_send_wr **bad_wr);
	/* 56 */ int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
				     struct ibv_ops_wr **bad_op);
	/* 57 */ int (*post_srq_recv)(struct ibv_srq *srq,
				      struct ibv_recv_wr *recv_wr,
				      struct ibv_recv_wr **bad_recv_wr);
	/* 58 */ int (*query_device_ex)(
			struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
	/* 59 */ int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	/* 60 */ int (*query_port)(struct ibv_context *context,
				   uint8_t port_num,
				   struct ibv_port_attr *port_attr);
	/* 61 */ int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
				 int attr_mask,
				 struct ibv_qp_init_attr *init_attr);
	/* 62 */ int (*query_qp_data_in_order)(struct ibv_qp *qp,
					       enum ibv_wr_opcode op,
					       uint32_t flags);
	/* 63 */ int (*query_rt_values)(struct ibv_context *context,
					struct ibv_values_ex *values);
	/* 64 */ int (*query_srq)(struct ibv_srq *srq,
				  struct ibv_srq_attr *srq_attr);
	/* 65 */ int (*read_counters)(struct ibv_counters *counters,
				      uint64_t *counters_value,
				      uint32_t ncounters, uint32_t flags);
	/* 66 */ struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd,
					     struct ibv_dm *dm,
					     uint64_t dm_offset, size_t length,
					     unsigned int access);
	/* 67 */ struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd,
						 uint64_t offset,
						 size_t length, uint64_t iova,
						 int fd, int access);
	/* 68 */ struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr,
					  size_t length, uint64_t hca_va,
					  int access);
	/* 69 */ int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	/* 70 */ int (*rereg_mr)(struct verbs_mr *vmr, int flags,
				 struct ibv_pd *pd, void *addr, size_t length,
				 int access);
	/* 71 */ int (*resize_cq)(struct ibv_cq *cq, int cqe);
	/* 72 */ int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	/* 73 */ void (*unimport_dm)(struct ibv_dm *dm);
	/* 74 */ void (*unimport_mr)(struct ibv_mr *mr);
	/* 75 */ void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Write-style command wrappers (provider-abi.md 4.8).
 *
 * rdma-core's generic command buffers are "uverbs header + kernel core
 * struct".  Providers append their private request after that prefix and
 * their private response after the bare kernel response struct, and pass
 * the whole buffers with their full sizes.  libibverbs takes the driver
 * part as everything beyond its own idea of the prefix size, and on the
 * legacy write() path it builds the header and core struct in place, in
 * the prefix of our buffer; so the prefix must be present and have exactly
 * the library's size.  Fields are accessed by libibverbs only; we declare
 * just the two named parts.
 *
 * The kernel core structs end in a flexible driver_data[] marker, which is
 * why the driver part follows them directly.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_get_context	core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_alloc_pd	core_payload;
};

/* libibverbs writes port_num into this on the write() fallback path. */
struct ibv_query_port {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_query_port	core_payload;
};

/*
 * Extended write commands carry a second, 16-byte header (kern-abi.h's
 * struct ex_hdr is both headers together).
 */
struct ibv_create_cq_ex {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_ex_cmd_hdr	ex_hdr;
	struct ib_uverbs_ex_create_cq	core_payload;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_create_cq	core_payload;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_resize_cq	core_payload;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_create_qp	core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_modify_qp	core_payload;
};

struct ibv_modify_qp_ex {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_ex_cmd_hdr	ex_hdr;
	struct ib_uverbs_ex_modify_qp	core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_query_qp	core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_create_srq	core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_modify_srq	core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_query_srq	core_payload;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_create_xsrq	core_payload;
};

struct ibv_open_xrcd {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_open_xrcd	core_payload;
};

struct ibv_open_qp {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_open_qp	core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_reg_mr		core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_rereg_mr	core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_alloc_mw	core_payload;
};

/*
 * Functions exported by libibverbs.so.1 under IBVERBS_PRIVATE_34
 * (provider-abi.md 3, 3.1); linking with -libverbs binds these names to
 * that version.  The signatures are identical in v36.0 ... v56.x.  Unless
 * noted, int returns are 0 or a positive errno.
 */

/* Keeps the pointer: @ops must stay valid while the library is loaded. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * Allocates @alloc_size zeroed bytes holding a verbs_context at byte offset
 * (uintptr_t)@context_offset and initialises it with cmd_fd.  Takes
 * ownership of @cmd_fd (closed on failure); returns NULL with errno set on
 * failure.  @driver_id goes into every ioctl header and must equal the
 * kernel device's driver_id or the kernel refuses the ioctl.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Undoes _verbs_init_and_alloc_context() except the final free(). */
void verbs_uninit_context(struct verbs_context *context);

/*
 * ioctl commands (cmd_ioctl.h; unchanged v26 ... v64).  A command is a
 * struct ibv_command_buffer whose ioctl header's attribute array follows
 * it directly; next_attr walks that array as attributes are filled, up to
 * last_attr.  A driver passes its own buffer as the "link" of a core
 * command (ibv_cmd_query_context()), whose attributes libibverbs appends
 * to the core ones; or runs a driver method with execute_ioctl().  sroce
 * fills its buffers with the helpers below (cmd_ioctl.h's macros, which
 * declare variable-length arrays, are not reproduced).
 */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;
};

/*
 * A command buffer with room for three attributes, the most a sroce
 * method takes (SROCE_METHOD_SRQ_TM_OP).
 */
struct sroce_cmdbuf {
	struct ibv_command_buffer cmd;
	struct ib_uverbs_attr attrs[3];
};

static inline struct ibv_command_buffer *
sroce_cmdbuf_init(struct sroce_cmdbuf *b, uint16_t object_id,
		  uint16_t method_id, unsigned int num_attrs)
{
	*b = (struct sroce_cmdbuf){
		.cmd = {
			.hdr = { .object_id = object_id, .method_id = method_id },
			.uhw_in_idx = 0xff,
			.uhw_out_idx = 0xff,
		},
	};
	b->cmd.next_attr = b->cmd.hdr.attrs;
	b->cmd.last_attr = b->cmd.hdr.attrs + num_attrs;
	return &b->cmd;
}

/* The next attribute of @cmd, mandatory, with id @attr_id. */
static inline struct ib_uverbs_attr *
sroce_cmd_next_attr(struct ibv_command_buffer *cmd, uint16_t attr_id)
{
	struct ib_uverbs_attr *attr = cmd->next_attr++;

	*attr = (struct ib_uverbs_attr){
		.attr_id = attr_id,
		.flags = UVERBS_ATTR_F_MANDATORY,
	};
	return attr;
}

/* An out attribute: the kernel writes up to @len bytes at @ptr. */
static inline void sroce_cmd_out_ptr(struct ibv_command_buffer *cmd,
				     uint16_t attr_id, void *ptr, size_t len)
{
	struct ib_uverbs_attr *attr = sroce_cmd_next_attr(cmd, attr_id);

	attr->data = (uintptr_t)ptr;
	attr->len = (uint16_t)len;
}

/*
 * An in attribute: @len bytes at @ptr, which the kernel protocol wants
 * inline in the attribute when they fit in its data word.
 */
static inline void sroce_cmd_in_ptr(struct ibv_command_buffer *cmd,
				    uint16_t attr_id, const void *ptr,
				    size_t len)
{
	struct ib_uverbs_attr *attr = sroce_cmd_next_attr(cmd, attr_id);

	attr->len = (uint16_t)len;
	if (len <= sizeof(attr->data))
		memcpy(&attr->data, ptr, len);
	else
		attr->data = (uintptr_t)ptr;
}

/* An in attribute naming an object by its handle. */
static inline void sroce_cmd_in_obj(struct ibv_command_buffer *cmd,
				    uint16_t attr_id, uint32_t handle)
{
	sroce_cmd_next_attr(cmd, attr_id)->data = handle;
}

/* Runs @cmd (and what it links); 0 or a positive errno. */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);

/*
 * QUERY_CONTEXT with @driver's attributes appended: sets the context's
 * num_comp_vectors and the device's core_support; for importing a uverbs
 * file.
 */
int ibv_cmd_query_context(struct ibv_context *context,
			  struct ibv_command_buffer *driver);

/* Fills handle, lkey, rkey, length, context, pd and mr_type of @vmr. */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);

/* Installs the non-NULL members of @ops; may be called repeatedly. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);

/* @resp and @resp_size may be NULL when the raw response is not needed. */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

/* Fills pd->handle and pd->context. */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);

int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* Fills handle, lkey, rkey, context, mr_type and access of @vmr. */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);

/*
 * @flags: IBV_REREG_MR_CHANGE_*; updates lkey and rkey of @vmr from the
 * response (and its context with a new PD).
 */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);

/* Fills context, pd, rkey, handle and type of @mw. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/*
 * Device memory (provider-abi.md 4.7).  verbs_dm is unchanged v33 ... v64;
 * the command buffer is libibverbs' own (NULL: no driver attributes).
 * ibv_cmd_alloc_dm() fills dm->handle and the ibv_dm's context, handle and
 * comp_mask; ibv_cmd_reg_dm_mr() the MR's handle, context, keys, length,
 * pd, addr (NULL: DM regions are zero-based) and mr_type.
 */
struct verbs_dm {
	struct ibv_dm		dm;
	uint32_t		handle;
};

struct ibv_command_buffer;

int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);

/* Fills ah->handle and ah->context; there is no driver request. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* Multicast: the generic commands, no driver data; RoCE ignores @lid. */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/*
 * Fill handle, cqe and context; libibverbs' ibv_create_cq() and
 * ibv_create_cq_ex() run verbs_init_cq() on the result themselves.
 * @cmd_flags of _ex: CREATE_CQ_CMD_FLAGS_* (none used, 0).
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
/* Sets cq->cqe from the response. */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Waits until every event reported for the CQ has been acknowledged. */
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * Fill the ibv_qp (handle, qp_num, state RESET, pd, cqs, srq, context) and
 * write the caps the kernel granted back into @attr->cap / @attr_ex->cap
 * (on the ioctl path the core response struct is not filled, so read caps
 * from there).  _ex also sets qp->comp_mask to 0 (VERBS_QP_XRCD with an
 * XRCD) and accepts comp_mask PD | XRCD | SEND_OPS_FLAGS only.
 */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
/* Waits until every event reported for the QP has been acknowledged. */
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/* Writes the granted max_wr and max_sge back into @attr->attr. */
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/*
 * Basic, XRC or tag-matching (@attr_ex->srq_type, comp_mask TYPE | XRCD |
 * CQ | TM); sends a TM SRQ's tm_cap.max_num_tags, on the ioctl and the
 * CREATE_XSRQ write paths alike.
 */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);

/* XRC domains, shared through @attr->fd's inode if it is not -1. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);

/* Another handle on an XRC receive QP of @attr->xrcd, by number. */
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

/*
 * Layout guards (provider-abi.md 4.9 and the sizes in 4.3 ... 4.8).
 */
#define VERBS_OPS_SLOT(member, n)					\
	_Static_assert(offsetof(struct verbs_context_ops, member) ==	\
		       (n) * sizeof(void (*)(void)),			\
		       "verbs_context_ops: " #member " not in slot " #n)

/* Public structures the private ones embed or are placed against. */
_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device size");
_Static_assert(sizeof(struct ibv_mr) == 48, "ibv_mr size");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context size");
_Static_assert(offsetof(struct verbs_context, context) == 320,
	       "verbs_context: ibv_context must be the last member");

_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent size");
_Static_assert(offsetof(struct verbs_match_ent, kind) == 20,
	       "verbs_match_ent.kind offset");

_Static_assert(sizeof(struct verbs_device_ops) == 72,
	       "verbs_device_ops size");
_Static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40,
	       "verbs_device_ops.alloc_context offset");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56,
	       "verbs_device_ops.alloc_device offset");

_Static_assert(offsetof(struct verbs_device, ops) == sizeof(struct ibv_device),
	       "verbs_device.ops must follow the embedded ibv_device");
_Static_assert(offsetof(struct verbs_device, core_support) == 704,
	       "verbs_device.core_support offset");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device size");

_Static_assert(offsetof(struct verbs_mr, mr_type) == sizeof(struct ibv_mr),
	       "verbs_mr.mr_type must follow the embedded ibv_mr");
_Static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr size");

_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	       "verbs_context_ops must have 76 slots");
_Static_assert(sizeof(struct verbs_context_ops) == 608,
	       "verbs_context_ops size");
VERBS_OPS_SLOT(advise_mr, 0);
VERBS_OPS_SLOT(alloc_pd, 5);
VERBS_OPS_SLOT(dealloc_pd, 26);
VERBS_OPS_SLOT(free_context, 39);		/* 0x138 */
VERBS_OPS_SLOT(import_dm, 42);			/* inserted in v35 */
VERBS_OPS_SLOT(query_device_ex, 58);		/* 0x1d0 */
VERBS_OPS_SLOT(query_port, 60);
VERBS_OPS_SLOT(query_qp_data_in_order, 62);	/* inserted in v36 */
VERBS_OPS_SLOT(reg_mr, 68);			/* 0x220 */
VERBS_OPS_SLOT(unimport_pd, 75);		/* 0x258 */
VERBS_OPS_SLOT(attach_mcast, 9);
VERBS_OPS_SLOT(create_ah, 13);
VERBS_OPS_SLOT(create_cq, 15);
VERBS_OPS_SLOT(create_cq_ex, 16);
VERBS_OPS_SLOT(create_qp, 19);
VERBS_OPS_SLOT(create_qp_ex, 20);
VERBS_OPS_SLOT(create_srq, 22);
VERBS_OPS_SLOT(dereg_mr, 28);
VERBS_OPS_SLOT(destroy_ah, 29);
VERBS_OPS_SLOT(destroy_cq, 31);
VERBS_OPS_SLOT(destroy_qp, 34);
VERBS_OPS_SLOT(destroy_srq, 36);
VERBS_OPS_SLOT(detach_mcast, 38);
VERBS_OPS_SLOT(modify_qp, 47);
VERBS_OPS_SLOT(modify_srq, 49);
VERBS_OPS_SLOT(poll_cq, 53);
VERBS_OPS_SLOT(post_recv, 54);
VERBS_OPS_SLOT(post_send, 55);
VERBS_OPS_SLOT(post_srq_ops, 56);
VERBS_OPS_SLOT(post_srq_recv, 57);
VERBS_OPS_SLOT(query_qp, 61);
VERBS_OPS_SLOT(query_srq, 64);
VERBS_OPS_SLOT(req_notify_cq, 69);
VERBS_OPS_SLOT(resize_cq, 71);

_Static_assert(sizeof(struct ibv_cq) == 128, "ibv_cq size");
_Static_assert(sizeof(struct ibv_cq_ex) == 288, "ibv_cq_ex size");
_Static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq size");
_Static_assert(sizeof(struct ibv_qp) == 160, "ibv_qp size");
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0,
	       "ibv_qp_ex must start with its ibv_qp");
_Static_assert(offsetof(struct verbs_qp, comp_mask) ==
	       sizeof(struct ibv_qp_ex),
	       "verbs_qp.comp_mask must follow the embedded ibv_qp_ex");
/*
 * The layout provider-abi.md 4.7 records for v44; the Makefile passes the
 * major version being built against.  Other releases differ on purpose
 * (see struct verbs_qp).
 */
#if defined(SROCE_RDMA_CORE_MAJOR) && SROCE_RDMA_CORE_MAJOR == 44
_Static_assert(sizeof(struct ibv_qp_ex) == 352, "v44 ibv_qp_ex size");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 352,
	       "v44 verbs_qp.comp_mask offset");
_Static_assert(offsetof(struct verbs_qp, xrcd) == 360,
	       "v44 verbs_qp.xrcd offset");
_Static_assert(sizeof(struct verbs_qp) == 368, "v44 verbs_qp size");
#endif

_Static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8, "uverbs header size");
_Static_assert(sizeof(struct ibv_get_context) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_get_context), "ibv_get_context size");
_Static_assert(sizeof(struct ibv_get_context) == 16, "ibv_get_context size");
_Static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8,
	       "get_context response size");
_Static_assert(sizeof(struct ibv_alloc_pd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_alloc_pd), "ibv_alloc_pd size");
_Static_assert(sizeof(struct ibv_alloc_pd) == 16, "ibv_alloc_pd size");
_Static_assert(sizeof(struct ib_uverbs_alloc_pd_resp) == 4,
	       "alloc_pd response size");
_Static_assert(sizeof(struct ibv_query_port) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_query_port), "ibv_query_port size");
_Static_assert(sizeof(struct ibv_query_port) == 24, "ibv_query_port size");
_Static_assert(sizeof(struct ib_uverbs_ex_query_device_resp) == 304,
	       "ex_query_device response size");

#define VERBS_CMD_SIZE(wrapper, core, total)				\
	_Static_assert(sizeof(struct wrapper) ==			\
		       sizeof(struct ib_uverbs_cmd_hdr) +		\
		       sizeof(struct core) &&				\
		       sizeof(struct wrapper) == (total),		\
		       #wrapper " size")
VERBS_CMD_SIZE(ibv_create_cq, ib_uverbs_create_cq, 40);
VERBS_CMD_SIZE(ibv_resize_cq, ib_uverbs_resize_cq, 24);
VERBS_CMD_SIZE(ibv_create_qp, ib_uverbs_create_qp, 64);
VERBS_CMD_SIZE(ibv_modify_qp, ib_uverbs_modify_qp, 120);
VERBS_CMD_SIZE(ibv_query_qp, ib_uverbs_query_qp, 24);
VERBS_CMD_SIZE(ibv_create_srq, ib_uverbs_create_srq, 40);
VERBS_CMD_SIZE(ibv_modify_srq, ib_uverbs_modify_srq, 24);
VERBS_CMD_SIZE(ibv_query_srq, ib_uverbs_query_srq, 24);
VERBS_CMD_SIZE(ibv_reg_mr, ib_uverbs_reg_mr, 48);
VERBS_CMD_SIZE(ibv_create_xsrq, ib_uverbs_create_xsrq, 56);
VERBS_CMD_SIZE(ibv_open_xrcd, ib_uverbs_open_xrcd, 24);
VERBS_CMD_SIZE(ibv_open_qp, ib_uverbs_open_qp, 40);
_Static_assert(sizeof(struct verbs_xrcd) == 16, "verbs_xrcd size");
_Static_assert(offsetof(struct verbs_srq, srq_num) == 152 &&
	       sizeof(struct verbs_srq) == 160, "verbs_srq layout");
_Static_assert(sizeof(struct ib_uverbs_ex_cmd_hdr) == 16,
	       "uverbs extended header size");
_Static_assert(offsetof(struct ibv_create_cq_ex, core_payload) == 24 &&
	       sizeof(struct ibv_create_cq_ex) == 56, "ibv_create_cq_ex size");
_Static_assert(offsetof(struct ibv_modify_qp_ex, core_payload) == 24 &&
	       sizeof(struct ibv_modify_qp_ex) == 144, "ibv_modify_qp_ex size");

/* Core responses; driver data follows each directly. */
_Static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8,
	       "create_cq response size");
_Static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16,
	       "ex_create_cq response size");
_Static_assert(sizeof(struct ib_uverbs_resize_cq_resp) == 8,
	       "resize_cq response size");
_Static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32,
	       "create_qp response size");
_Static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 16,
	       "create_srq response size");
_Static_assert(sizeof(struct ib_uverbs_create_ah_resp) == 4,
	       "create_ah response size");
_Static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12,
	       "reg_mr response size");
_Static_assert(sizeof(struct ib_uverbs_ex_modify_qp_resp) == 8,
	       "ex_modify_qp response size");

_Static_assert(offsetof(struct ibv_command_buffer, hdr) == 32 &&
	       sizeof(struct ibv_command_buffer) == 56 &&
	       offsetof(struct sroce_cmdbuf, attrs) ==
	       offsetof(struct ibv_command_buffer, hdr.attrs),
	       "ibv_command_buffer layout");

#endif /* SROCE_VERBS_PRIVATE_H */
