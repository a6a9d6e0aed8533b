// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ioctl.c - sroce's additions to the uverbs ioctl interface, for importing
 * a uverbs file (ibv_import_device(), ibv_import_dm()): a process that
 * did not open the file itself, or a second context over a duplicated
 * one, learns what GET_CONTEXT told the opener (QUERY_CONTEXT's driver
 * attribute), and the length of device memory it imports by handle
 * (SROCE_METHOD_DM_QUERY); and tag matching's list operations
 * (SROCE_METHOD_SRQ_TM_OP, tm.c).  The IDs and layouts are
 * uapi/rdma/sroce-abi.h's.
 */
#define UVERBS_MODULE_NAME sroce
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>

#include "sroce.h"

static int UVERBS_HANDLER(SROCE_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 SROCE_ATTR_QUERY_DM_HANDLE);
	struct sroce_dm_query_resp resp = {};

	if (IS_ERR(ibdm))
		return PTR_ERR(ibdm);
	resp.length = ibdm->length;
	return uverbs_copy_to_struct_or_zero(attrs, SROCE_ATTR_QUERY_DM_RESP,
					     &resp, sizeof(resp));
}

DECLARE_UVERBS_NAMED_METHOD(SROCE_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(SROCE_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SROCE_ATTR_QUERY_DM_RESP,
						UVERBS_ATTR_STRUCT(struct sroce_dm_query_resp,
								   length),
						UA_MANDATORY));

ADD_UVERBS_METHODS(sroce_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(SROCE_METHOD_DM_QUERY));

static int UVERBS_HANDLER(SROCE_METHOD_SRQ_TM_OP)(struct uverbs_attr_bundle *attrs)
{
	struct ib_srq *ibsrq = uverbs_attr_get_obj(attrs, SROCE_ATTR_TM_OP_SRQ);
	struct sroce_tm_op_resp resp = {};
	struct sroce_tm_op op;
	int err;

	if (IS_ERR(ibsrq))
		return PTR_ERR(ibsrq);
	err = uverbs_copy_from_or_zero(&op, attrs, SROCE_ATTR_TM_OP_REQ);
	if (err)
		return err;
	err = sroce_tm_op(to_ssrq(ibsrq), &op, &resp);
	if (err)
		return err;
	return uverbs_copy_to_struct_or_zero(attrs, SROCE_ATTR_TM_OP_RESP,
					     &resp, sizeof(resp));
}

DECLARE_UVERBS_NAMED_METHOD(SROCE_METHOD_SRQ_TM_OP,
			    UVERBS_ATTR_IDR(SROCE_ATTR_TM_OP_SRQ,
					    UVERBS_OBJECT_SRQ,
					    UVERBS_ACCESS_WRITE, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(SROCE_ATTR_TM_OP_REQ,
					       UVERBS_ATTR_STRUCT(struct sroce_tm_op,
								  sge),
					       UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SROCE_ATTR_TM_OP_RESP,
						UVERBS_ATTR_STRUCT(struct sroce_tm_op_resp,
								   reserved),
						UA_MANDATORY));

ADD_UVERBS_METHODS(sroce_srq_methods, UVERBS_OBJECT_SRQ,
		   &UVERBS_METHOD(SROCE_METHOD_SRQ_TM_OP));

#define SROCE_QUERY_CONTEXT_RESP \
	UVERBS_ATTR_STRUCT(struct sroce_alloc_ucontext_resp, reserved)

ADD_UVERBS_ATTRIBUTES_SIMPLE(sroce_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(SROCE_ATTR_QUERY_CONTEXT_RESP,
						 SROCE_QUERY_CONTEXT_RESP,
						 UA_OPTIONAL));

/* ib_device.driver_def of every sroce device. */
const struct uapi_definition sroce_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &sroce_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &sroce_dm_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_SRQ, &sroce_srq_methods),
	{},
};

/**
 * sroce_query_ucontext() - ib_device_ops.query_ucontext: the driver part
 *	of QUERY_CONTEXT
 * @ibuc: the context
 * @attrs: the command; SROCE_ATTR_QUERY_CONTEXT_RESP, if the caller asks
 *	for it, gets what GET_CONTEXT answered
 *
 * Context: Process context.
 * Return: 0, or -EFAULT.
 */
int sroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs)
{
	struct sroce_alloc_ucontext_resp resp;

	if (!uverbs_attr_is_valid(attrs, SROCE_ATTR_QUERY_CONTEXT_RESP))
		return 0;
	sroce_ucontext_resp(&resp);
	return uverbs_copy_to_struct_or_zero(attrs,
					     SROCE_ATTR_QUERY_CONTEXT_RESP,
					     &resp, sizeof(resp));
}
