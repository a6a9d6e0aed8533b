// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc.c - XRC domains.  A domain is the kernel's object (opened by inode
 * when the application passes a file, so that processes share it); the
 * provider only wraps its handle.  XRC SRQs are srq.c's, XRC QPs qp.c's.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/**
 * sroce_xrcd_open() - open_xrcd op
 * @ibctx: context
 * @attr: comp_mask FD and OFLAGS: a file whose inode names the domain (-1:
 *	a domain of this process only), and O_CREAT/O_EXCL
 *
 * Context: takes no lock.
 * Return: the domain, or NULL with errno set (EOPNOTSUPP from a module
 * without XRC, or the kernel's error).
 */
struct ibv_xrcd *sroce_xrcd_open(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	if (!(to_sctx(ibctx)->features & SROCE_FEATURE_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

/**
 * sroce_xrcd_close() - close_xrcd op
 * @ibxrcd: domain from sroce_xrcd_open()
 *
 * Return: 0, or the kernel's error (EBUSY while SRQs or QPs of this
 * process use the domain) with the domain kept.
 */
int sroce_xrcd_close(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = sroce_container_of(ibxrcd,
						     struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}
