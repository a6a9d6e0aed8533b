// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce.c - libibverbs provider for the sroce software RoCEv2 device:
 * device, context, PD, MR and AH, and the one ops table.
 *
 * Control verbs are generic uverbs commands (ibv_cmd_*) carried by
 * libibverbs, plus the driver-private data of uapi/rdma/sroce-abi.h.  The
 * data path bypasses the kernel through rings mapped from the uverbs file
 * (ring.h; cq.c, sq.c, rq.c, wr.c); only the send doorbell and CQ arming
 * are system calls.  Ops left NULL in sroce_ctx_ops fail with EOPNOTSUPP.
 * The provider registers itself from an ELF constructor and exports no
 * symbols (sroce.map).
 *
 * Errors: ops returning int return 0 or a positive errno; ops returning a
 * pointer return NULL with errno set (libibverbs' conventions).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sroce.h"

/*
 * libibverbs copies the driver id given at context creation into every
 * ioctl header, and the kernel refuses ioctls whose id differs from the
 * device's; the module reports RDMA_DRIVER_UNKNOWN.
 */
_Static_assert(SROCE_DRIVER_ID == RDMA_DRIVER_UNKNOWN,
	       "driver id must match the kernel device's");

/*
 * The kernel reports the firmware version as one number; print it as
 * major.minor.sub from bits 47:32, 31:16 and 15:0 (the usual uverbs
 * convention, also used by ibv_devinfo's other soft providers).
 */
static void format_fw_ver(char *buf, size_t size, uint64_t raw)
{
	unsigned int major = (unsigned int)(raw >> 32) & 0xffff;
	unsigned int minor = (unsigned int)(raw >> 16) & 0xffff;
	unsigned int sub = (unsigned int)raw & 0xffff;

	snprintf(buf, size, "%u.%u.%u", major, minor, sub);
}

/**
 * sroce_query_rt_values() - query_rt_values op (ibv_query_rt_values_ex())
 * @ibctx: context
 * @values: comp_mask in: what to read; out: what was read
 *
 * The device clock is CLOCK_MONOTONIC_RAW in nanoseconds, the clock of
 * the completion timestamps (cq.c); as HCAs report it, the whole count is
 * in raw_clock.tv_nsec (one cycle per nanosecond), tv_sec 0.
 *
 * Return: 0, or a positive errno.
 */
static int sroce_query_rt_values(struct ibv_context *ibctx,
				 struct ibv_values_ex *values)
{
	struct timespec now;
	uint32_t want = values->comp_mask;

	(void)ibctx;
	values->comp_mask = 0;
	if (want & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC_RAW, &now))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec =
			(long)((uint64_t)now.tv_sec * 1000000000u +
			       (uint64_t)now.tv_nsec);
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

/**
 * sroce_query_device_ex() - query_device_ex op; also serves ibv_query_device()
 * @ibctx: context
 * @input: extension input; libibverbs rejects a non-zero comp_mask
 * @attr: filled from the kernel's QUERY_DEVICE response, and with the
 *	packet pacing capabilities the ABI defines (sroce-abi.h)
 * @attr_size: size of @attr the caller knows about
 *
 * Return: 0 or a positive errno.
 */
static int sroce_query_device_ex(struct ibv_context *ibctx,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	format_fw_ver(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		      resp.base.fw_ver);
	if (attr_size >= offsetof(struct ibv_device_attr_ex,
				  packet_pacing_caps) +
			 sizeof(attr->packet_pacing_caps)) {
		attr->packet_pacing_caps.qp_rate_limit_min =
			SROCE_RATE_LIMIT_MIN_KBPS;
		attr->packet_pacing_caps.qp_rate_limit_max =
			SROCE_RATE_LIMIT_MAX_KBPS;
		attr->packet_pacing_caps.supported_qpts =
			1 << IBV_QPT_RC | 1 << IBV_QPT_UC | 1 << IBV_QPT_UD;
	}
	return 0;
}

/**
 * sroce_query_port() - query_port op
 * @ibctx: context
 * @port_num: port number, from 1
 * @attr: zeroed by libibverbs, filled from the kernel's response
 *
 * Return: 0 or a positive errno.
 */
static int sroce_query_port(struct ibv_context *ibctx, uint8_t port_num,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port_num, attr, &cmd, sizeof(cmd));
}

/**
 * sroce_alloc_pd() - alloc_pd op
 * @ibctx: context
 *
 * Return: the new PD, or NULL with errno set.
 */
static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd = {};
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	if (ret)
		goto err_free_pd;

	return &pd->ibv_pd;

err_free_pd:
	free(pd);
	errno = ret;
	return NULL;
}

/**
 * sroce_dealloc_pd() - dealloc_pd op, for PDs and parent domains
 * @ibpd: PD from sroce_alloc_pd(), or parent domain from
 *	sroce_parent_domain_alloc()
 *
 * The PD is kept if a parent domain names it (EBUSY) or if the kernel
 * refuses (it is still in use); a parent domain is kept while objects
 * created in it exist (EBUSY).
 *
 * Return: 0 or a positive errno.
 */
static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);
	int ret;

	if (pd->pd)
		return sroce_parent_domain_dealloc(pd);
	if (atomic_load(&pd->users))
		return EBUSY;
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_spd(ibpd));
	return 0;
}

/**
 * sroce_import_pd() - import_pd op: a PD of the context's uverbs file by
 *	handle (ibv_import_pd(), with an imported context)
 * @ibctx: the context
 * @pd_handle: the PD's handle in the file
 *
 * The kernel checks the handle in every command that names the PD.
 *
 * Return: the PD, or NULL with errno set.
 */
static struct ibv_pd *sroce_import_pd(struct ibv_context *ibctx,
				      uint32_t pd_handle)
{
	struct sroce_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

/**
 * sroce_unimport_pd() - unimport_pd op: forget an imported PD, which
 *	stays in the kernel for its other users
 * @ibpd: PD from sroce_import_pd()
 */
static void sroce_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

/**
 * sroce_import_mr() - import_mr op: an MR of the PD's uverbs file by
 *	handle; its keys and length come from the kernel (QUERY_MR)
 * @ibpd: its PD (imported or not)
 * @mr_handle: the MR's handle in the file
 *
 * Return: the MR, or NULL with errno set.
 */
static struct ibv_mr *sroce_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(ibpd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/**
 * sroce_unimport_mr() - unimport_mr op: forget an imported MR
 * @ibmr: MR from sroce_import_mr()
 */
static void sroce_unimport_mr(struct ibv_mr *ibmr)
{
	free(sroce_container_of(ibmr, struct verbs_mr, ibv_mr));
}

/*
 * The FLUSH rights (IBV_ACCESS_FLUSH_GLOBAL, _PERSISTENT: rdma-core 45 on)
 * go to the kernel in sroce's driver data, which every kernel takes, and
 * not in the command's access flags, which a kernel before 6.2 refuses.  A
 * module without SROCE_FEATURE_FLUSH gets them where they were, and
 * refuses them.
 */
static void mr_split_access(struct ibv_context *ibctx, int *access,
			    struct sroce_reg_mr_req *drv)
{
	if (!(to_sctx(ibctx)->features & SROCE_FEATURE_FLUSH))
		return;
	drv->flush_access = (uint32_t)*access & SROCE_MR_FLUSH_RIGHTS;
	*access &= ~SROCE_MR_FLUSH_RIGHTS;
}

/**
 * sroce_reg_mr() - reg_mr op
 * @ibpd: PD
 * @addr: start of the region in this process
 * @length: bytes
 * @hca_va: address the region has in work requests (normally @addr)
 * @access: enum ibv_access_flags
 *
 * The kernel pins the pages (or, with IBV_ACCESS_ON_DEMAND, pages them in
 * as accesses need them; NULL and SIZE_MAX: the whole address space) and
 * resolves lkey/rkey; the provider keeps no state of its own (WQEs carry
 * the keys, the kernel checks them).  IBV_ACCESS_FLUSH_PERSISTENT takes
 * persistent memory (EINVAL otherwise).
 *
 * Return: the new MR, or NULL with errno set.
 */
static struct ibv_mr *sroce_reg_mr(struct ibv_pd *ibpd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct sroce_reg_mr_cmd cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	mr_split_access(ibpd->context, &access, &cmd.drv);
	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr,
			     &cmd.ibv_cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		goto err_free_mr;

	sroce_pd_hold(ibpd);
	return &vmr->ibv_mr;

err_free_mr:
	free(vmr);
	errno = ret;
	return NULL;
}

/**
 * sroce_advise_mr() - advise_mr op: prefetch on-demand memory
 * @ibpd: PD of the regions
 * @advice: IBV_ADVISE_MR_ADVICE_PREFETCH, _PREFETCH_WRITE or
 *	_PREFETCH_NO_FAULT
 * @flags: IBV_ADVISE_MR_FLAG_FLUSH or 0; the kernel prefetches before it
 *	returns either way
 * @sg_list: ranges in on-demand regions of @ibpd
 * @num_sge: entries in @sg_list
 *
 * Return: 0 or a positive errno.
 */
static int sroce_advise_mr(struct ibv_pd *ibpd,
			   enum ibv_advise_mr_advice advice, uint32_t flags,
			   struct ibv_sge *sg_list, uint32_t num_sge)
{
	return ibv_cmd_advise_mr(ibpd, advice, flags, sg_list, num_sge);
}

/**
 * sroce_dereg_mr() - dereg_mr op
 * @vmr: MR from sroce_reg_mr() or sroce_dm_reg_mr()
 *
 * Return: 0, or a positive errno with the MR kept.
 */
static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	struct ibv_pd *ibpd = vmr->ibv_mr.pd;
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	sroce_pd_put(ibpd);
	free(vmr);
	return 0;
}

/**
 * sroce_rereg_mr() - rereg_mr op
 * @vmr: MR from sroce_reg_mr()
 * @flags: IBV_REREG_MR_CHANGE_TRANSLATION, _PD, _ACCESS
 * @pd: the new PD (IBV_REREG_MR_CHANGE_PD)
 * @addr: the new start (IBV_REREG_MR_CHANGE_TRANSLATION), also its address
 *	in work requests
 * @length: the new length (IBV_REREG_MR_CHANGE_TRANSLATION)
 * @access: the new enum ibv_access_flags (IBV_REREG_MR_CHANGE_ACCESS)
 *
 * The kernel builds the region anew under the same lkey and rkey; work
 * requests posted before and naming the old range or PD fail.  It refuses
 * (EBUSY) while memory windows are bound to the region.
 *
 * Return: 0, or a positive errno with the MR unchanged.
 */
static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ibv_pd *old_pd = vmr->ibv_mr.pd;
	struct ib_uverbs_rereg_mr_resp resp;
	struct sroce_rereg_mr_cmd cmd = {};
	int ret;

	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		mr_split_access(vmr->ibv_mr.context, &access, &cmd.drv);
	ret = ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
			       (uintptr_t)addr, access, pd, &cmd.ibv_cmd,
			       sizeof(cmd), &resp, sizeof(resp));
	if (!ret && (flags & IBV_REREG_MR_CHANGE_PD)) {
		sroce_pd_hold(pd);
		sroce_pd_put(old_pd);
	}
	return ret;
}

/**
 * sroce_alloc_mw() - alloc_mw op
 * @ibpd: PD
 * @type: IBV_MW_TYPE_1 or IBV_MW_TYPE_2
 *
 * Return: the new window (unbound), or NULL with errno set.
 */
static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *ibpd,
				     enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		goto err_free_mw;

	sroce_pd_hold(ibpd);
	return mw;

err_free_mw:
	free(mw);
	errno = ret;
	return NULL;
}

/**
 * sroce_dealloc_mw() - dealloc_mw op
 * @mw: window from sroce_alloc_mw(), bound or not
 *
 * Return: 0, or a positive errno with the window kept.
 */
static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	struct ibv_pd *ibpd = mw->pd;
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	sroce_pd_put(ibpd);
	free(mw);
	return 0;
}

/**
 * sroce_create_ah() - create_ah op
 * @ibpd: PD
 * @attr: address vector
 *
 * Keeps the ah_num the kernel returns: UD send WQEs name the AH by it.
 *
 * Return: the new AH, or NULL with errno set.
 */
static struct ibv_ah *sroce_create_ah(struct ibv_pd *ibpd,
				      struct ibv_ah_attr *attr)
{
	struct sroce_uresp_create_ah resp = {};
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free_ah;

	ah->ah_num = resp.drv.ah_num;
	sroce_pd_hold(ibpd);
	return &ah->ibv_ah;

err_free_ah:
	free(ah);
	errno = ret;
	return NULL;
}

/**
 * sroce_destroy_ah() - destroy_ah op
 * @ibah: AH from sroce_create_ah()
 *
 * Return: 0, or a positive errno with the AH kept.
 */
static int sroce_destroy_ah(struct ibv_ah *ibah)
{
	struct ibv_pd *ibpd = ibah->pd;
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	sroce_pd_put(ibpd);
	free(to_sah(ibah));
	return 0;
}

/**
 * sroce_free_context() - free_context op, the end of ibv_close_device()
 * @ibctx: context from sroce_alloc_context()
 */
static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/*
 * Alphabetical, like struct verbs_context_ops.  The data-path ops (poll_cq,
 * post_recv, post_send, post_srq_recv) make no system call except the send
 * doorbell; arming a CQ is the generic REQ_NOTIFY_CQ command.  Tag-matching
 * operations (post_srq_ops) are one system call each.
 */
static const struct verbs_context_ops sroce_ctx_ops = {
	.advise_mr = sroce_advise_mr,
	.alloc_dm = sroce_dm_alloc,
	.alloc_mw = sroce_alloc_mw,
	.alloc_parent_domain = sroce_parent_domain_alloc,
	.alloc_pd = sroce_alloc_pd,
	.alloc_td = sroce_td_alloc,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = sroce_sq_bind_mw,
	.close_xrcd = sroce_xrcd_close,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_cq_create,
	.create_cq_ex = sroce_cq_create_ex,
	.create_qp = sroce_qp_create,
	.create_qp_ex = sroce_qp_create_ex,
	.create_srq = sroce_srq_create,
	.create_srq_ex = sroce_srq_create_ex,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_td = sroce_td_dealloc,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_cq_destroy,
	.destroy_qp = sroce_qp_destroy,
	.destroy_srq = sroce_srq_destroy,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
	.free_dm = sroce_dm_free,
	.get_srq_num = sroce_srq_get_num,
	.import_dm = sroce_dm_import,
	.import_mr = sroce_import_mr,
	.import_pd = sroce_import_pd,
	.modify_qp = sroce_qp_modify,
	.modify_qp_rate_limit = sroce_qp_modify_rate_limit,
	.modify_srq = sroce_srq_modify,
	.open_qp = sroce_qp_open,
	.open_xrcd = sroce_xrcd_open,
	.poll_cq = sroce_cq_poll,
	.post_recv = sroce_rq_post,
	.post_send = sroce_sq_post,
	.post_srq_ops = sroce_srq_post_ops,
	.post_srq_recv = sroce_srq_post,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.query_qp = sroce_qp_query,
	.query_rt_values = sroce_query_rt_values,
	.query_srq = sroce_srq_query,
	.reg_dm_mr = sroce_dm_reg_mr,
	.reg_mr = sroce_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.rereg_mr = sroce_rereg_mr,
	.resize_cq = sroce_cq_resize,
	.unimport_dm = sroce_dm_unimport,
	.unimport_mr = sroce_unimport_mr,
	.unimport_pd = sroce_unimport_pd,
};

/*
 * GET_CONTEXT: announce the ABI this provider speaks and learn the module's
 * ABI and features.  Response bytes an older module does not send stay 0.
 */
static int get_context(struct sroce_context *ctx)
{
	struct sroce_get_context_cmd cmd = {
		.drv.provider_abi = SROCE_UVERBS_ABI_VERSION,
	};
	struct sroce_get_context_resp resp = {};
	int ret;

	ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		return ret;

	if (resp.drv.abi_version != SROCE_UVERBS_ABI_VERSION)
		return EPROTO;

	ctx->features = resp.drv.features;
	return 0;
}

/*
 * QUERY_CONTEXT, for an imported uverbs file: what GET_CONTEXT told the
 * context that opened it (sroce-abi.h: SROCE_ATTR_QUERY_CONTEXT_RESP).
 */
static int query_context(struct sroce_context *ctx)
{
	struct sroce_alloc_ucontext_resp resp = {};
	struct ibv_command_buffer *cmd;
	struct sroce_cmdbuf buf;
	int ret;

	cmd = sroce_cmdbuf_init(&buf, UVERBS_OBJECT_DEVICE,
				UVERBS_METHOD_QUERY_CONTEXT, 1);
	sroce_cmd_out_ptr(cmd, SROCE_ATTR_QUERY_CONTEXT_RESP, &resp,
			  sizeof(resp));
	ret = ibv_cmd_query_context(&ctx->vctx.context, cmd);
	if (ret)
		return ret;
	if (resp.abi_version != SROCE_UVERBS_ABI_VERSION)
		return EPROTO;
	ctx->features = resp.features;
	return 0;
}

/* Where vctx sits in sroce_context, as the pointer value libibverbs wants. */
#define SROCE_VCTX_OFFSET						\
	((struct verbs_context *)(uintptr_t)				\
	 offsetof(struct sroce_context, vctx))

/*
 * A context over @cmd_fd (owned from here on, closed on failure), which
 * @learn tells the module's ABI and features: GET_CONTEXT for a file just
 * opened, QUERY_CONTEXT for one imported.
 */
static struct verbs_context *
sroce_context_new(struct ibv_device *ibdev, int cmd_fd,
		  int (*learn)(struct sroce_context *ctx))
{
	struct sroce_context *ctx;
	int ret;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
					    SROCE_VCTX_OFFSET, SROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	ret = learn(ctx);
	if (ret)
		goto err_uninit_context;

	verbs_set_ops(&ctx->vctx, &sroce_ctx_ops);
	return &ctx->vctx;

err_uninit_context:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

/**
 * sroce_alloc_context() - verbs_device_ops.alloc_context, for ibv_open_device()
 * @ibdev: device claimed through sroce_match_table
 * @cmd_fd: open uverbs file; owned from here on, closed on failure
 * @private_data: provider-specific open attributes; sroce defines none
 *
 * Return: the new context, or NULL with errno set.
 */
static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	(void)private_data;
	return sroce_context_new(ibdev, cmd_fd, get_context);
}

/**
 * sroce_import_context() - verbs_device_ops.import_context, for
 *	ibv_import_device(): a context over a uverbs file already open
 * @ibdev: device claimed through sroce_match_table
 * @cmd_fd: the file (a dup of it, which libibverbs made); owned from here
 *	on, closed on failure
 *
 * The file's kernel context is the one its opener made: its ABI and
 * features come from QUERY_CONTEXT, and its objects can be imported by
 * handle.
 *
 * Return: the new context, or NULL with errno set.
 */
static struct verbs_context *sroce_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	return sroce_context_new(ibdev, cmd_fd, query_context);
}

/**
 * sroce_alloc_device() - verbs_device_ops.alloc_device
 * @sysfs_dev: libibverbs' record of the kernel device (not used)
 *
 * Return: a zeroed device, or NULL with errno set.
 */
static struct verbs_device *
sroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct sroce_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->vdev;
}

/**
 * sroce_uninit_device() - verbs_device_ops.uninit_device
 * @vdev: device from sroce_alloc_device(), after its last reference
 */
static void sroce_uninit_device(struct verbs_device *vdev)
{
	free(to_sdev(&vdev->device));
}

/*
 * Claim devices by name ("sroce0" ...): the module reports no driver id
 * (RDMA_DRIVER_UNKNOWN) and its devices have no parent, hence no modalias.
 */
static const struct verbs_match_ent sroce_match_table[] = {
	{
		.u.modalias = VERBS_NAME_PATTERN(SROCE_DEVICE_NAME_PREFIX),
		.kind = VERBS_MATCH_MODALIAS,
	},
	{}
};

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.alloc_context = sroce_alloc_context,
	.import_context = sroce_import_context,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
};

/*
 * Load-time floor.  ibv_query_qp_data_in_order() appeared in rdma-core
 * v36.0 under symbol version IBVERBS_1.14, together with the last slot of
 * the 76-entry ops table this provider is built against.  Holding its
 * address records IBVERBS_1.14 as a requirement of this object, so the
 * dynamic linker refuses to load it into a v34/v35 libibverbs (same PABI
 * name, shorter ops table) instead of letting ops land in wrong slots.
 * There is no such guard for the other direction: struct verbs_qp follows
 * the ibv_qp_ex of the headers built against, so a binary is valid only
 * for that rdma-core release (verbs-private.h).
 */
static int (*const sroce_abi_floor)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				    uint32_t flags)
	__attribute__((used)) = ibv_query_qp_data_in_order;

static void __attribute__((constructor)) sroce_register_driver(void)
{
	verbs_register_driver_34(&sroce_dev_ops);
}
