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
 *  GET_CONTEXT  request:  struct sroce_alloc_ucontext_req
 *               response: struct sroce_alloc_ucontext_resp
 *
 * All other commands the module implements today (QUERY_DEVICE, QUERY_PORT,
 * ALLOC_PD, DEALLOC_PD) carry no driver-private data; the module rejects a
 * non-empty private request with EINVAL.
 *
 * The firmware version that QUERY_DEVICE reports (fw_ver) packs the module's
 * version as major << 32 | minor << 16 | patch.
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
 * Shared rings
 * ------------
 * Queue rings mapped into the process (for the kernel-bypass data path) are
 * not part of this ABI version yet; when they are added they are announced by
 * a feature bit and their layout and memory-order contract are written here.
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>

/* Reported as ib_device_ops.uverbs_abi_ver. */
#define SROCE_UVERBS_ABI_VERSION 1

/* ib_device_ops.driver_id: there is no id for out-of-tree drivers. */
#define SROCE_DRIVER_ID 0 /* RDMA_DRIVER_UNKNOWN */

/* Device names the provider claims: "sroce" followed by anything. */
#define SROCE_DEVICE_NAME_PREFIX "sroce"

/**
 * enum sroce_feature - capabilities announced in the GET_CONTEXT response
 * @SROCE_FEATURE_NONE: placeholder; no optional feature exists yet.
 */
enum sroce_feature {
	SROCE_FEATURE_NONE = 0,
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
 * @features: mask of enum sroce_feature the module offers this context
 * @reserved: zero
 */
struct sroce_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 features;
	__aligned_u64 reserved;
};

#endif /* SROCE_ABI_H */
