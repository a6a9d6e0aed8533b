// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dm.c - device memory: ibv_alloc_dm() and ibv_free_dm(), the process's
 * mapping of the memory, ibv_memcpy_to_dm()/ibv_memcpy_from_dm(), and
 * memory regions over it (ibv_reg_dm_mr()).
 *
 * The memory is the kernel's (drivers/sroce/dm.c), mapped here at the
 * offset SROCE_DM_MMAP_PGOFF() gives for the DM's handle; copies are
 * plain memcpy() on that mapping.  A work request posted after a copy sees
 * it: posting publishes the WQE with a release store and rings the
 * doorbell with a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sroce.h"

/*
 * What hardware device memory takes, so that programs written for it work
 * here and the other way round: offsets and lengths that are multiples of
 * 4, and the range within the allocation.
 */
static int sroce_dm_range(const struct sroce_dm *dm, uint64_t offset,
			  size_t length)
{
	if (offset % 4 || length % 4 || offset > dm->length ||
	    length > dm->length - offset)
		return EINVAL;
	return 0;
}

static int sroce_dm_copy_to(struct ibv_dm *ibdm, uint64_t offset,
			    const void *src, size_t length)
{
	struct sroce_dm *dm = to_sdm(ibdm);
	int ret = sroce_dm_range(dm, offset, length);

	if (!ret)
		memcpy(dm->buf + offset, src, length);
	return ret;
}

static int sroce_dm_copy_from(void *dst, struct ibv_dm *ibdm,
			      uint64_t offset, size_t length)
{
	struct sroce_dm *dm = to_sdm(ibdm);
	int ret = sroce_dm_range(dm, offset, length);

	if (!ret)
		memcpy(dst, dm->buf + offset, length);
	return ret;
}

/* Map @dm's memory, and copy through that; 0 or a positive errno. */
static int sroce_dm_map(struct sroce_dm *dm, int cmd_fd)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	void *buf;

	dm->map_len = (size_t)((dm->length + page - 1) / page * page);
	buf = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   cmd_fd, (off_t)(SROCE_DM_MMAP_PGOFF(dm->vdm.handle) * page));
	if (buf == MAP_FAILED)
		return errno;
	dm->buf = buf;
	dm->vdm.dm.memcpy_to_dm = sroce_dm_copy_to;
	dm->vdm.dm.memcpy_from_dm = sroce_dm_copy_from;
	return 0;
}

/**
 * sroce_dm_alloc() - alloc_dm op
 * @ibctx: the context
 * @attr: length (1 to SROCE_DM_MAX_SIZE), log_align_req (a page at most),
 *	no comp_mask bits
 *
 * Return: the device memory, zeroed and mapped, or NULL with errno set:
 * EOPNOTSUPP from a module without device memory, EINVAL for a bad
 * attribute, or the kernel's error.
 */
struct ibv_dm *sroce_dm_alloc(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr)
{
	struct sroce_dm *dm;
	int ret;

	if (!(to_sctx(ibctx)->features & SROCE_FEATURE_DM)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask || !attr->length ||
	    attr->length > SROCE_DM_MAX_SIZE) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, NULL);
	if (ret)
		goto err_free;
	dm->length = attr->length;
	ret = sroce_dm_map(dm, ibctx->cmd_fd);
	if (ret)
		goto err_free_dm;
	return &dm->vdm.dm;

err_free_dm:
	ibv_cmd_free_dm(&dm->vdm);
err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/**
 * sroce_dm_free() - free_dm op
 * @ibdm: device memory from sroce_dm_alloc()
 *
 * Return: 0, or a positive errno (EBUSY with regions in it) with the
 * memory kept, still mapped.
 */
int sroce_dm_free(struct ibv_dm *ibdm)
{
	struct sroce_dm *dm = to_sdm(ibdm);
	int ret;

	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->buf, dm->map_len);
	free(dm);
	return 0;
}

/* SROCE_METHOD_DM_QUERY: the length of the device memory @handle. */
static int sroce_dm_query(struct ibv_context *ibctx, uint32_t handle,
			  uint64_t *length)
{
	struct sroce_dm_query_resp resp = {};
	struct ibv_command_buffer *cmd;
	struct sroce_cmdbuf buf;
	int ret;

	cmd = sroce_cmdbuf_init(&buf, UVERBS_OBJECT_DM, SROCE_METHOD_DM_QUERY,
				2);
	sroce_cmd_in_obj(cmd, SROCE_ATTR_QUERY_DM_HANDLE, handle);
	sroce_cmd_out_ptr(cmd, SROCE_ATTR_QUERY_DM_RESP, &resp, sizeof(resp));
	ret = execute_ioctl(ibctx, cmd);
	if (ret)
		return ret;
	*length = resp.length;
	return 0;
}

/**
 * sroce_dm_import() - import_dm op: device memory of the context's uverbs
 *	file by handle (ibv_import_dm()), mapped here too
 * @ibctx: the context (typically imported: ibv_import_device())
 * @dm_handle: the memory's handle in the file
 *
 * Return: the device memory, or NULL with errno set: EOPNOTSUPP from a
 * module without device memory, or the kernel's error (ENOENT for no such
 * handle).
 */
struct ibv_dm *sroce_dm_import(struct ibv_context *ibctx, uint32_t dm_handle)
{
	struct sroce_dm *dm;
	int ret;

	if (!(to_sctx(ibctx)->features & SROCE_FEATURE_DM)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	ret = sroce_dm_query(ibctx, dm_handle, &dm->length);
	if (ret)
		goto err_free;
	dm->vdm.handle = dm_handle;
	dm->vdm.dm.context = ibctx;
	dm->vdm.dm.handle = dm_handle;
	ret = sroce_dm_map(dm, ibctx->cmd_fd);
	if (ret)
		goto err_free;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/**
 * sroce_dm_unimport() - unimport_dm op: forget imported device memory,
 *	which stays for its other users; this mapping goes
 * @ibdm: device memory from sroce_dm_import()
 */
void sroce_dm_unimport(struct ibv_dm *ibdm)
{
	struct sroce_dm *dm = to_sdm(ibdm);

	munmap(dm->buf, dm->map_len);
	free(dm);
}

/**
 * sroce_dm_reg_mr() - reg_dm_mr op
 * @ibpd: the PD
 * @ibdm: device memory from sroce_dm_alloc()
 * @offset: where in it the region begins
 * @length: bytes
 * @access: enum ibv_access_flags, with IBV_ACCESS_ZERO_BASED
 *
 * The region's address 0 is @offset in the device memory; it is
 * deregistered as any other (sroce.c).
 *
 * Return: the region, or NULL with errno set.
 */
struct ibv_mr *sroce_dm_reg_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			       uint64_t offset, size_t length,
			       unsigned int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dm_mr(ibpd, &to_sdm(ibdm)->vdm, offset, length,
				access, vmr, NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	sroce_pd_hold(ibpd);
	return &vmr->ibv_mr;
}
