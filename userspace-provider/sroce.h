/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce.h - objects of the sroce libibverbs provider.
 *
 * Every provider object embeds the libibverbs object it stands for, and
 * libibverbs only ever sees a pointer to that embedded member; to_s*()
 * converts back.  Objects grow their private state (mmapped rings, locks)
 * here as the data path moves into userspace.
 */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>

#include "verbs-private.h"

#define sroce_container_of(ptr, type, member)				\
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* One per kernel device matched by this provider. */
struct sroce_device {
	struct verbs_device	vdev;		/* must be first */
};

/* One per ibv_open_device(). */
struct sroce_context {
	struct verbs_context	vctx;
	uint32_t		features;	/* enum sroce_feature mask */
};

struct sroce_pd {
	struct ibv_pd		ibv_pd;
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

/* The ABI's sizes, also asserted by the module (drivers/sroce/verbs.c). */
_Static_assert(sizeof(struct sroce_alloc_ucontext_req) == 8,
	       "sroce ABI: sroce_alloc_ucontext_req size");
_Static_assert(sizeof(struct sroce_alloc_ucontext_resp) == 16,
	       "sroce ABI: sroce_alloc_ucontext_resp size");
_Static_assert(offsetof(struct sroce_get_context_cmd, drv) ==
	       sizeof(struct ibv_get_context),
	       "GET_CONTEXT driver request must follow the core command");
_Static_assert(sizeof(struct sroce_get_context_cmd) == 24,
	       "GET_CONTEXT request size");
_Static_assert(offsetof(struct sroce_get_context_resp, drv) ==
	       sizeof(struct ib_uverbs_get_context_resp),
	       "GET_CONTEXT driver response must follow the core response");
_Static_assert(sizeof(struct sroce_get_context_resp) == 24,
	       "GET_CONTEXT response size");

static inline struct sroce_device *to_sdev(struct ibv_device *ibdev)
{
	return sroce_container_of(ibdev, struct sroce_device, vdev.device);
}

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return sroce_container_of(ibctx, struct sroce_context, vctx.context);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *ibpd)
{
	return sroce_container_of(ibpd, struct sroce_pd, ibv_pd);
}

#endif /* SROCE_PROVIDER_H */
