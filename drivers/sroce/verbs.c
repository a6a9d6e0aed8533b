// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs.c - thin verb entry points: check what the caller passed, copy
 * driver data in and out of userspace, account the object.  Objects with
 * behaviour of their own get a file of their own; these have none yet.
 */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* The ABI's sizes, also asserted by the provider (uapi/rdma/sroce-abi.h). */
static_assert(sizeof(struct sroce_alloc_ucontext_req) == 8);
static_assert(sizeof(struct sroce_alloc_ucontext_resp) == 16);
static_assert(sizeof(struct sroce_dm_query_resp) == 8);
static_assert(sizeof(struct sroce_create_cq_req) == 8);
static_assert(sizeof(struct sroce_cqe_ts) == 16);
static_assert(sizeof(struct sroce_tmh) == 16);
static_assert(sizeof(struct sroce_rvh) == 16);
static_assert(sizeof(struct sroce_tm_op) == 72);
static_assert(sizeof(struct sroce_tm_op_resp) == 8);
static_assert(sizeof(struct sroce_cqe_tm) == 16);

/**
 * sroce_udata_uctx() - the user context a verb's driver data comes from
 * @udata: the driver data, or NULL for kernel callers
 *
 * Context: Process context.
 * Return: the context, or NULL for kernel callers.
 */
struct ib_ucontext *sroce_udata_uctx(struct ib_udata *udata)
{
	if (!udata)
		return NULL;
	return &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
					  ibuc)->ibuc;
}

/*
 * sroce_udata_zero_from() - are the driver request's bytes from @off on
 * zero?  Unlike ib_is_udata_cleared(), which answers "no" for memory it
 * cannot read, this tells a bad pointer (-EFAULT) from non-zero bytes (1).
 * Returns 0 if they are all zero (or there are none).
 */
static int sroce_udata_zero_from(struct ib_udata *udata, size_t off)
{
	u8 buf[64];

	while (off < udata->inlen) {
		size_t n = min(udata->inlen - off, sizeof(buf));

		if (copy_from_user(buf, udata->inbuf + off, n))
			return -EFAULT;
		if (memchr_inv(buf, 0, n))
			return 1;
		off += n;
	}
	return 0;
}

/**
 * sroce_udata_in() - copy a verb's driver request from userspace
 * @udata: the driver data
 * @req: where it goes, zeroed by the caller
 * @size: sroce's size of the request
 *
 * A shorter request is zero-extended (an older provider); a longer one is
 * accepted only if the bytes sroce does not know are zero (a newer provider
 * asking for nothing new).
 *
 * Context: Process context.
 * Return: 0, -EOPNOTSUPP for unknown non-zero bytes, or -EFAULT (also for
 * unknown bytes sroce cannot read).
 */
int sroce_udata_in(struct ib_udata *udata, void *req, size_t size)
{
	size_t len = min(udata->inlen, size);
	int ret;

	ret = sroce_udata_zero_from(udata, size);
	if (ret < 0)
		return ret;
	if (ret)
		return -EOPNOTSUPP;
	return ib_copy_from_udata(req, udata, len);
}

/**
 * sroce_udata_out() - copy a verb's driver response to userspace
 * @udata: the driver data
 * @resp: the response
 * @size: sroce's size of the response; an older provider takes a prefix
 *
 * Context: Process context.
 * Return: 0 or -EFAULT.
 */
int sroce_udata_out(struct ib_udata *udata, const void *resp, size_t size)
{
	return ib_copy_to_udata(udata, (void *)resp, min(udata->outlen, size));
}

/**
 * sroce_udata_none() - refuse driver data for a verb that defines none
 * @udata: the driver data, or NULL for kernel callers
 *
 * Context: Process context.
 * Return: 0, -EINVAL for non-zero driver data, or -EFAULT for driver data
 * sroce cannot read.
 */
int sroce_udata_none(struct ib_udata *udata)
{
	int ret;

	if (!udata)
		return 0;
	ret = sroce_udata_zero_from(udata, 0);
	if (ret < 0)
		return ret;
	return ret ? -EINVAL : 0;
}

/**
 * sroce_ucontext_resp() - what GET_CONTEXT (and QUERY_CONTEXT, ioctl.c)
 *	tell the provider: the module's ABI and the features it offers
 * @resp: filled
 *
 * Context: Any context.
 */
void sroce_ucontext_resp(struct sroce_alloc_ucontext_resp *resp)
{
	*resp = (struct sroce_alloc_ucontext_resp){
		.abi_version = SROCE_UVERBS_ABI_VERSION,
		.features = SROCE_FEATURE_ATOMIC_WRITE |
			    SROCE_FEATURE_CQ_TIMESTAMPS | SROCE_FEATURE_DM |
			    SROCE_FEATURE_XRC | SROCE_FEATURE_FLUSH |
			    SROCE_FEATURE_TM,
	};
}

/**
 * sroce_alloc_ucontext() - ib_device_ops.alloc_ucontext
 * @ibuc: the context, allocated by the core
 * @udata: struct sroce_alloc_ucontext_req in, sroce_alloc_ucontext_resp out
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL for non-zero reserved fields or an unknown provider
 * ABI, or -EFAULT.
 */
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_alloc_ucontext_resp resp;
	struct sroce_alloc_ucontext_req req = {};
	int err;

	might_sleep();
	sroce_ucontext_resp(&resp);
	err = sroce_udata_in(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.reserved)
		return -EINVAL;
	if (req.provider_abi && req.provider_abi != SROCE_UVERBS_ABI_VERSION)
		return -EINVAL;
	err = sroce_udata_out(udata, &resp, sizeof(resp));
	if (err)
		return err;
	sroce_obj_created(SROCE_OBJ_UCONTEXT);
	return 0;
}

/**
 * sroce_dealloc_ucontext() - ib_device_ops.dealloc_ucontext
 * @ibuc: the context; every object created through it is already gone
 *
 * Context: Process context.
 */
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	sroce_obj_destroyed(SROCE_OBJ_UCONTEXT);
}

/**
 * sroce_disassociate_ucontext() - ib_device_ops.disassociate_ucontext
 * @ibuc: a context whose device is being unregistered while the process
 *	still holds it open
 *
 * Implementing this op lets ib_core unregister a device under open
 * contexts: it zaps the context's mappings, destroys its objects through
 * the normal destroy ops and leaves the process with a file on which every
 * command fails.  A context owns no kernel activity of its own that would
 * need stopping here.
 *
 * Context: Process context.
 */
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * sroce_alloc_pd() - ib_device_ops.alloc_pd
 * @ibpd: the PD, allocated by the core
 * @udata: NULL for kernel callers; no driver data from userspace
 *
 * Context: Process context. May sleep.
 * Return: 0, -ENOMEM past the device's max_pd, or -EINVAL for driver data.
 */
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	int err;

	might_sleep();
	err = sroce_udata_none(udata);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_pd) > sdev->attr.max_pd) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	sroce_obj_created(SROCE_OBJ_PD);
	return 0;
}

/**
 * sroce_dealloc_pd() - ib_device_ops.dealloc_pd
 * @ibpd: the PD
 * @udata: unused
 *
 * uverbs destroys a user PD only once no object uses it; a kernel ULP must
 * destroy the PD's objects first itself: ib_core does not check, and
 * writes to the freed PD when a forgotten MR goes (KASAN caught a test
 * module doing that).
 *
 * Context: Process context.
 * Return: 0.
 */
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	atomic_dec(&sdev->num_pd);
	sroce_obj_destroyed(SROCE_OBJ_PD);
	return 0;
}
