/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce.h - objects of the sroce libibverbs provider.
 *
 * Every provider object embeds the libibverbs object it stands for, and
 * libibverbs only ever sees a pointer to that embedded member; to_s*()
 * converts back.  Queues own a mapped ring (ring.h) and the lock that
 * serialises this process's threads on it.
 *
 * Files: sroce.c context, device, PD, MR, AH and the ops table; domain.c
 * thread domains and parent domains; cq.c completion queues; qp.c queue
 * pair lifetime; sq.c send WQEs, post_send and the doorbell; rq.c receive
 * WQEs for QPs and SRQs; srq.c shared receive queue lifetime and the
 * tag-matching operations of ibv_post_srq_ops(); wr.c the
 * ibv_qp_ex (ibv_wr_*) send API; ring.c ring mapping; dm.c device memory
 * and the memory regions over it.
 */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>

#include "ring.h"
#include "verbs-private.h"

#define sroce_container_of(ptr, type, member)				\
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Reinterpret a __be32 as the plain __u32 the ABI stores (sparse). */
#ifdef __CHECKER__
#define sroce_force __attribute__((force))
#else
#define sroce_force
#endif

/* One per kernel device matched by this provider. */
struct sroce_device {
	struct verbs_device	vdev;		/* must be first */
};

/* One per ibv_open_device(). */
struct sroce_context {
	struct verbs_context	vctx;
	uint32_t		features;	/* GET_CONTEXT features mask */
};

/*
 * The lock of a queue, for this process's threads.  A queue the
 * application promised to use from one thread at a time (created in a
 * parent domain with a thread domain, or a CQ created
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED) has @single set, once, before the
 * queue is handed out, and is never locked (ibv_alloc_td(3)).
 */
struct sroce_spin {
	pthread_spinlock_t	spin;
	bool			single;
};

static inline int sroce_spin_init(struct sroce_spin *l, bool single)
{
	l->single = single;
	return pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
}

static inline void sroce_spin_destroy(struct sroce_spin *l)
{
	pthread_spin_destroy(&l->spin);
}

static inline void sroce_spin_lock(struct sroce_spin *l)
{
	if (!l->single)
		pthread_spin_lock(&l->spin);
}

static inline void sroce_spin_unlock(struct sroce_spin *l)
{
	if (!l->single)
		pthread_spin_unlock(&l->spin);
}

/* A thread domain: @users counts the parent domains that name it. */
struct sroce_td {
	struct ibv_td		ibv_td;
	atomic_uint		users;
};

/*
 * A protection domain, or a parent domain (@pd set: the PD it stands for,
 * whose kernel handle it carries as its own; domain.c).  @users counts a
 * PD's parent domains, and a parent domain's objects (QPs, SRQs, CQs, MRs,
 * MWs, AHs; the kernel counts a PD's); neither can be freed while it has
 * users.
 */
struct sroce_pd {
	struct ibv_pd		ibv_pd;
	struct sroce_pd		*pd;		/* parent domain: its PD */
	struct sroce_td		*td;		/* parent domain: its TD, or NULL */
	atomic_uint		users;
};

struct sroce_ah {
	struct ibv_ah		ibv_ah;
	uint32_t		ah_num;		/* names it in UD send WQEs */
};

/*
 * A completion queue, from create_cq or create_cq_ex.  @lock protects the
 * ring's consumer side, the mapping itself (resize_cq replaces it) and the
 * ibv_cq_ex poll state; it is held from a successful start_poll to
 * end_poll.  @ring.base is NULL only after a resize whose new ring could
 * not be mapped (the CQ is then lost: polls fail).
 */
struct sroce_cq {
	struct verbs_cq		vcq;
	struct sroce_spin	lock;
	struct sroce_ring	ring;		/* consumer side */
	struct ibv_pd		*parent;	/* cq_ex: its parent domain */
	uint32_t		poll_next;	/* cq_ex: index after @cur */
	struct ibv_wc		cur;		/* cq_ex: copy of current CQE */
	bool			timestamps;	/* slots carry sroce_cqe_ts */
	bool			tm_info;	/* slots carry sroce_cqe_tm */
	struct sroce_cqe_ts	cur_ts;		/* cq_ex: @cur's times */
	struct sroce_cqe_tm	cur_tm;		/* cq_ex: @cur's TM header */
};

/*
 * A send queue.  @lock protects @ring.head, the slots this process owns and
 * the ibv_wr_* batch, and is held from wr_start to wr_complete/wr_abort.
 * The limits are what the kernel granted at create time, checked against
 * the ring then (max_wr <= num_slots; a slot holds a WQE with max_sge SGEs
 * or max_inline bytes).
 */
struct sroce_sq {
	struct sroce_spin	lock;
	struct sroce_ring	ring;		/* producer side */
	uint32_t		max_wr;		/* outstanding WQEs allowed */
	uint32_t		max_sge;
	uint32_t		max_inline;
	/* ibv_wr_* batch */
	uint32_t		wr_count;	/* WQEs built, not published */
	int			wr_err;		/* first error, 0 if none */
	struct sroce_send_wqe	*wr_wqe;	/* WQE being built, or NULL */
	bool			wr_ud_set;	/* UD address given for it */
	bool			wr_xrc_set;	/* XRC SRQ given for it */
};

/*
 * A receive queue of a QP or an SRQ.  @lock protects @ring.head and the
 * slots this process owns.  No ring (@ring.base NULL) when the QP uses an
 * SRQ or has no receive queue.
 */
struct sroce_rq {
	struct sroce_spin	lock;
	struct sroce_ring	ring;		/* producer side */
	uint32_t		max_wr;		/* outstanding WQEs allowed */
	uint32_t		max_sge;
};

/* Every QP is a verbs_qp: libibverbs' ibv_qp_to_qp_ex() casts to it. */
struct sroce_qp {
	struct verbs_qp		vqp;
	struct sroce_sq		sq;
	struct sroce_rq		rq;
};

/*
 * Every SRQ is a verbs_srq: libibverbs reads an XRC SRQ's number there,
 * and records the type (IBV_SRQT_TM for tag matching).  @rq.lock also
 * serialises a tag-matching SRQ's operations (sroce_srq_post_ops()).
 */
struct sroce_srq {
	struct verbs_srq	vsrq;
	struct sroce_rq		rq;
};

/*
 * GET_CONTEXT with the driver-private parts of uapi/rdma/sroce-abi.h
 * appended directly after the generic prefix (see verbs-private.h).
 */
struct sroce_get_context_cmd {
	struct ibv_get_context			ibv_cmd;
	struct sroce_alloc_ucontext_req		drv;
};

struct sroce_get_context_resp {
	struct ib_uverbs_get_context_resp	ibv_resp;
	struct sroce_alloc_ucontext_resp	drv;
};

/*
 * Responses carrying driver data: the core response, then the ABI's
 * struct directly after it.  The requests of these commands carry no driver
 * data, so they are the bare wrappers of verbs-private.h.
 */
struct sroce_uresp_create_cq {
	struct ib_uverbs_create_cq_resp		ibv_resp;
	struct sroce_create_cq_resp		drv;
};

struct sroce_uresp_create_cq_ex {
	struct ib_uverbs_ex_create_cq_resp	ibv_resp;
	struct sroce_create_cq_resp		drv;
};

/* The extended CREATE_CQ with its driver request (timestamps). */
struct sroce_create_cq_ex_cmd {
	struct ibv_create_cq_ex			ibv_cmd;
	struct sroce_create_cq_req		drv;
};

/* REG_MR and REREG_MR with the FLUSH rights (struct sroce_reg_mr_req). */
struct sroce_reg_mr_cmd {
	struct ibv_reg_mr			ibv_cmd;
	struct sroce_reg_mr_req			drv;
};

struct sroce_rereg_mr_cmd {
	struct ibv_rereg_mr			ibv_cmd;
	struct sroce_reg_mr_req			drv;
};

struct sroce_uresp_resize_cq {
	struct ib_uverbs_resize_cq_resp		ibv_resp;
	struct sroce_create_cq_resp		drv;
};

struct sroce_uresp_create_qp {
	struct ib_uverbs_create_qp_resp		ibv_resp;
	struct sroce_create_qp_resp		drv;
};

struct sroce_uresp_create_srq {
	struct ib_uverbs_create_srq_resp	ibv_resp;
	struct sroce_create_srq_resp		drv;
};

struct sroce_uresp_create_ah {
	struct ib_uverbs_create_ah_resp		ibv_resp;
	struct sroce_create_ah_resp		drv;
};

/* The send doorbell: POST_SEND with no work requests (sq.c). */
struct sroce_doorbell_cmd {
	struct ib_uverbs_cmd_hdr		hdr;
	struct ib_uverbs_post_send		core;
};

/* The receive doorbell: a POST_RECV write command with no work requests. */
struct sroce_recv_doorbell_cmd {
	struct ib_uverbs_cmd_hdr		hdr;
	struct ib_uverbs_post_recv		core;
};

/* The ABI's sizes, also asserted by the module (drivers/sroce/verbs.c). */
_Static_assert(sizeof(struct sroce_alloc_ucontext_req) == 8,
	       "sroce ABI: sroce_alloc_ucontext_req size");
_Static_assert(sizeof(struct sroce_alloc_ucontext_resp) == 16,
	       "sroce ABI: sroce_alloc_ucontext_resp size");
_Static_assert(sizeof(struct sroce_sge) == 16, "sroce ABI: sroce_sge size");
_Static_assert(sizeof(struct sroce_send_wqe) == 64,
	       "sroce ABI: sroce_send_wqe size");
_Static_assert(offsetof(struct sroce_send_wqe, wr) == 32,
	       "sroce ABI: sroce_send_wqe.wr offset");
_Static_assert(sizeof(struct sroce_recv_wqe) == 16,
	       "sroce ABI: sroce_recv_wqe size");
_Static_assert(sizeof(struct sroce_create_cq_resp) == 24,
	       "sroce ABI: sroce_create_cq_resp size");
_Static_assert(sizeof(struct sroce_reg_mr_req) == 8,
	       "sroce ABI: sroce_reg_mr_req size");
_Static_assert(sizeof(struct sroce_create_cq_req) == 8,
	       "sroce ABI: sroce_create_cq_req size");
_Static_assert(sizeof(struct sroce_cqe_ts) == 16,
	       "sroce ABI: sroce_cqe_ts size");
_Static_assert(sizeof(struct sroce_create_qp_resp) == 48,
	       "sroce ABI: sroce_create_qp_resp size");
_Static_assert(sizeof(struct sroce_create_srq_resp) == 24,
	       "sroce ABI: sroce_create_srq_resp size");
_Static_assert(sizeof(struct sroce_create_ah_resp) == 8,
	       "sroce ABI: sroce_create_ah_resp size");
_Static_assert(sizeof(struct sroce_tm_op) == 72,
	       "sroce ABI: sroce_tm_op size");
_Static_assert(sizeof(struct sroce_tm_op_resp) == 8,
	       "sroce ABI: sroce_tm_op_resp size");
_Static_assert(sizeof(struct sroce_cqe_tm) == 16,
	       "sroce ABI: sroce_cqe_tm size");
_Static_assert(sizeof(struct sroce_tmh) == 16 &&
	       sizeof(struct sroce_tmh) == sizeof(struct ibv_tmh),
	       "sroce ABI: sroce_tmh size");
_Static_assert(sizeof(struct sroce_rvh) == 16 &&
	       sizeof(struct sroce_rvh) == sizeof(struct ibv_rvh),
	       "sroce ABI: sroce_rvh size");

/* Driver data must follow the core part with no padding in between. */
#define SROCE_DRV_AFTER(type, core, total)				\
	_Static_assert(offsetof(struct type, drv) == sizeof(core) &&	\
		       sizeof(struct type) == (total),			\
		       #type ": driver data must follow the core part")
SROCE_DRV_AFTER(sroce_get_context_cmd, struct ibv_get_context, 24);
SROCE_DRV_AFTER(sroce_get_context_resp,
		struct ib_uverbs_get_context_resp, 24);
SROCE_DRV_AFTER(sroce_uresp_create_cq, struct ib_uverbs_create_cq_resp, 32);
SROCE_DRV_AFTER(sroce_uresp_create_cq_ex,
		struct ib_uverbs_ex_create_cq_resp, 40);
SROCE_DRV_AFTER(sroce_create_cq_ex_cmd, struct ibv_create_cq_ex, 64);
SROCE_DRV_AFTER(sroce_reg_mr_cmd, struct ibv_reg_mr, 56);
SROCE_DRV_AFTER(sroce_rereg_mr_cmd, struct ibv_rereg_mr, 64);
SROCE_DRV_AFTER(sroce_uresp_resize_cq, struct ib_uverbs_resize_cq_resp, 32);
SROCE_DRV_AFTER(sroce_uresp_create_qp, struct ib_uverbs_create_qp_resp, 80);
SROCE_DRV_AFTER(sroce_uresp_create_srq,
		struct ib_uverbs_create_srq_resp, 40);
SROCE_DRV_AFTER(sroce_uresp_create_ah, struct ib_uverbs_create_ah_resp, 12);
_Static_assert(sizeof(struct sroce_recv_doorbell_cmd) == 32 &&
	       offsetof(struct sroce_recv_doorbell_cmd, core) == 8,
	       "POST_RECV doorbell command size");
_Static_assert(sizeof(struct sroce_doorbell_cmd) == 32 &&
	       offsetof(struct sroce_doorbell_cmd, core) == 8,
	       "POST_SEND doorbell command size");

/*
 * CQ slots hold struct ib_uverbs_wc and poll_cq hands them out as struct
 * ibv_wc: the same 48 bytes (ib_uverbs_wc's last two bytes are ibv_wc's
 * tail padding).
 */
#define SROCE_WC_FIELD(field, uv_field)					\
	_Static_assert(offsetof(struct ibv_wc, field) ==		\
		       offsetof(struct ib_uverbs_wc, uv_field) &&	\
		       sizeof(((struct ibv_wc *)0)->field) ==		\
		       sizeof(((struct ib_uverbs_wc *)0)->uv_field),	\
		       "ibv_wc." #field " must overlay ib_uverbs_wc")
SROCE_WC_FIELD(wr_id, wr_id);
SROCE_WC_FIELD(status, status);
SROCE_WC_FIELD(opcode, opcode);
SROCE_WC_FIELD(vendor_err, vendor_err);
SROCE_WC_FIELD(byte_len, byte_len);
SROCE_WC_FIELD(imm_data, ex.imm_data);
SROCE_WC_FIELD(qp_num, qp_num);
SROCE_WC_FIELD(src_qp, src_qp);
SROCE_WC_FIELD(wc_flags, wc_flags);
SROCE_WC_FIELD(pkey_index, pkey_index);
SROCE_WC_FIELD(slid, slid);
SROCE_WC_FIELD(sl, sl);
SROCE_WC_FIELD(dlid_path_bits, dlid_path_bits);
_Static_assert(sizeof(struct ibv_wc) == sizeof(struct ib_uverbs_wc) &&
	       sizeof(struct ibv_wc) == 48, "ibv_wc and ib_uverbs_wc size");

/*
 * Send WQE opcodes and flags, and CQE wc_flags, are libibverbs' numbers,
 * passed through unchanged (CQE opcode and status are ibv_wc_* by the ABI).
 */
#define SROCE_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
SROCE_SAME(IBV_WC_GRH, SROCE_WC_GRH);
SROCE_SAME(IBV_WC_WITH_IMM, SROCE_WC_WITH_IMM);
SROCE_SAME(IBV_WC_IP_CSUM_OK, SROCE_WC_IP_CSUM_OK);
SROCE_SAME(IBV_WC_WITH_INV, SROCE_WC_WITH_INV);
SROCE_SAME(IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE);
SROCE_SAME(IBV_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
SROCE_SAME(IBV_WR_SEND, IB_UVERBS_WR_SEND);
SROCE_SAME(IBV_WR_SEND_WITH_IMM, IB_UVERBS_WR_SEND_WITH_IMM);
SROCE_SAME(IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ);
SROCE_SAME(IBV_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
SROCE_SAME(IBV_WR_ATOMIC_FETCH_AND_ADD, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
SROCE_SAME(IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV);
SROCE_SAME(IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW);
SROCE_SAME(IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV);
SROCE_SAME(IBV_SEND_FENCE, SROCE_SEND_FENCE);
SROCE_SAME(IBV_SEND_SIGNALED, SROCE_SEND_SIGNALED);
SROCE_SAME(IBV_SEND_SOLICITED, SROCE_SEND_SOLICITED);
SROCE_SAME(IBV_SEND_INLINE, SROCE_SEND_INLINE);

/*
 * Tag matching: operations and their flags go to the kernel as given,
 * and its completions and headers come back in libibverbs' numbering.
 */
SROCE_SAME(IBV_WR_TAG_ADD, SROCE_TM_OP_ADD);
SROCE_SAME(IBV_WR_TAG_DEL, SROCE_TM_OP_DEL);
SROCE_SAME(IBV_WR_TAG_SYNC, SROCE_TM_OP_SYNC);
SROCE_SAME(IBV_OPS_SIGNALED, SROCE_TM_OP_SIGNALED);
SROCE_SAME(IBV_OPS_TM_SYNC, SROCE_TM_OP_SYNC_CNT);
SROCE_SAME(IBV_WC_TM_ADD, SROCE_WC_TM_ADD);
SROCE_SAME(IBV_WC_TM_DEL, SROCE_WC_TM_DEL);
SROCE_SAME(IBV_WC_TM_SYNC, SROCE_WC_TM_SYNC);
SROCE_SAME(IBV_WC_TM_RECV, SROCE_WC_TM_RECV);
SROCE_SAME(IBV_WC_TM_NO_TAG, SROCE_WC_TM_NO_TAG);
SROCE_SAME(IBV_WC_TM_ERR, SROCE_WC_TM_ERR);
SROCE_SAME(IBV_WC_TM_RNDV_INCOMPLETE, SROCE_WC_TM_RNDV_INCOMPLETE);
SROCE_SAME(IBV_WC_TM_SYNC_REQ, SROCE_WC_TM_SYNC_REQ);
SROCE_SAME(IBV_WC_TM_MATCH, SROCE_WC_TM_MATCH);
SROCE_SAME(IBV_WC_TM_DATA_VALID, SROCE_WC_TM_DATA_VALID);
SROCE_SAME(IBV_TMH_NO_TAG, SROCE_TMH_NO_TAG);
SROCE_SAME(IBV_TMH_RNDV, SROCE_TMH_RNDV);
SROCE_SAME(IBV_TMH_FIN, SROCE_TMH_FIN);
SROCE_SAME(IBV_TMH_EAGER, SROCE_TMH_EAGER);

static inline struct sroce_device *to_sdev(struct ibv_device *ibdev)
{
	return sroce_container_of(ibdev, struct sroce_device, vdev.device);
}

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return sroce_container_of(ibctx, struct sroce_context, vctx.context);
}

/* Device memory (dm.c): @buf maps its @length bytes (@map_len, whole pages). */
struct sroce_dm {
	struct verbs_dm		vdm;
	uint8_t			*buf;
	size_t			map_len;
	uint64_t		length;
};

static inline struct sroce_dm *to_sdm(struct ibv_dm *ibdm)
{
	return sroce_container_of(ibdm, struct sroce_dm, vdm.dm);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *ibpd)
{
	return sroce_container_of(ibpd, struct sroce_pd, ibv_pd);
}

static inline struct sroce_td *to_std(struct ibv_td *ibtd)
{
	return sroce_container_of(ibtd, struct sroce_td, ibv_td);
}

static inline struct sroce_ah *to_sah(struct ibv_ah *ibah)
{
	return sroce_container_of(ibah, struct sroce_ah, ibv_ah);
}

/* Also for an ibv_cq_ex: it starts with the members of an ibv_cq. */
static inline struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return sroce_container_of(ibcq, struct sroce_cq, vcq.cq);
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return sroce_container_of(ibqp, struct sroce_qp, vqp.qp);
}

static inline struct sroce_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return sroce_container_of(ibsrq, struct sroce_srq, vsrq.srq);
}

/* cq.c */
struct ibv_cq *sroce_cq_create(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *sroce_cq_create_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int sroce_cq_destroy(struct ibv_cq *ibcq);
int sroce_cq_poll(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int sroce_cq_resize(struct ibv_cq *ibcq, int cqe);

/* dm.c */
struct ibv_dm *sroce_dm_alloc(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr);
int sroce_dm_free(struct ibv_dm *ibdm);
struct ibv_dm *sroce_dm_import(struct ibv_context *ibctx, uint32_t dm_handle);
void sroce_dm_unimport(struct ibv_dm *ibdm);
struct ibv_mr *sroce_dm_reg_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			       uint64_t offset, size_t length,
			       unsigned int access);

/* domain.c */
struct ibv_td *sroce_td_alloc(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr);
int sroce_td_dealloc(struct ibv_td *ibtd);
struct ibv_pd *sroce_parent_domain_alloc(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr);
int sroce_parent_domain_dealloc(struct sroce_pd *pd);
void sroce_pd_hold(struct ibv_pd *ibpd);
void sroce_pd_put(struct ibv_pd *ibpd);
bool sroce_pd_single_threaded(struct ibv_pd *ibpd);

/* qp.c */
struct ibv_qp *sroce_qp_create(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_qp_create_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
int sroce_qp_modify(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_qp_modify_rate_limit(struct ibv_qp *ibqp,
			       struct ibv_qp_rate_limit_attr *attr);
int sroce_qp_query(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int sroce_qp_destroy(struct ibv_qp *ibqp);
struct ibv_qp *sroce_qp_open(struct ibv_context *ibctx,
			     struct ibv_qp_open_attr *attr);

/* sq.c */
int sroce_sq_init(struct sroce_sq *sq, const struct sroce_ring_info *info,
		  const struct ibv_qp_cap *cap, int cmd_fd, bool single);
void sroce_sq_uninit(struct sroce_sq *sq);
bool sroce_sq_opcode_ok(enum ibv_qp_type qp_type, unsigned int opcode);
bool sroce_sq_inline_ok(unsigned int opcode);
bool sroce_sq_local_op(unsigned int opcode);
void sroce_sq_set_bind(struct sroce_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info);
void sroce_cq_discard_qp(struct ibv_cq *ibcq, uint32_t qp_num);
int sroce_sq_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mw_bind);
int sroce_sq_set_sges(const struct sroce_sq *sq, struct sroce_send_wqe *wqe,
		      const struct ibv_sge *sg_list, size_t num_sge);
void sroce_sq_clear_inline(struct sroce_send_wqe *wqe);
int sroce_sq_add_inline(const struct sroce_sq *sq, struct sroce_send_wqe *wqe,
			const void *addr, size_t length);
bool sroce_sq_state_ok(const struct ibv_qp *ibqp);
int sroce_sq_doorbell(struct sroce_qp *qp);
int sroce_sq_post(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);

/* rq.c */
int sroce_rq_init(struct sroce_rq *rq, const struct sroce_ring_info *info,
		  uint32_t max_wr, uint32_t max_sge, int cmd_fd, bool single);
void sroce_rq_uninit(struct sroce_rq *rq);
int sroce_rq_post(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);
int sroce_srq_post(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);

/* srq.c */
struct ibv_srq *sroce_srq_create(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr);
int sroce_srq_modify(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int sroce_srq_query(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int sroce_srq_destroy(struct ibv_srq *ibsrq);
struct ibv_srq *sroce_srq_create_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int sroce_srq_get_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int sroce_srq_post_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr,
		       struct ibv_ops_wr **bad_op);

/* wr.c */
int sroce_wr_check_ops(const struct sroce_context *ctx,
		       enum ibv_qp_type qp_type, uint64_t send_ops_flags);
void sroce_wr_init(struct sroce_qp *qp, uint64_t send_ops_flags);

/* xrc.c */
struct ibv_xrcd *sroce_xrcd_open(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr);
int sroce_xrcd_close(struct ibv_xrcd *ibxrcd);

#endif /* SROCE_PROVIDER_H */
