// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * import.c - sroce_rc_test: importing a uverbs file (ibv_import_device())
 * and its objects by handle: a PD, an MR and device memory.
 */
#include "rc.h"

/* The imported context's objects, given back at the end. */
struct imported {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_dm *dm;
};

static void unimport_all(struct imported *im)
{
	if (im->dm)
		ibv_unimport_dm(im->dm);
	if (im->mr)
		ibv_unimport_mr(im->mr);
	if (im->pd)
		ibv_unimport_pd(im->pd);
	*im = (struct imported){};
}

/* Bytes of @a's device memory written through @to, read through @from. */
static int dm_across(struct ibv_dm *to, struct ibv_dm *from, size_t len, uint32_t seed,
		     const char *what)
{
	uint8_t want[4096], got[4096];
	int err;

	pattern(want, len, seed);
	memset(got, 0, sizeof(got));
	err = ibv_memcpy_to_dm(to, 0, want, len);
	CHECK(!err, "%s: ibv_memcpy_to_dm: %s", what, estr(err));
	err = ibv_memcpy_from_dm(got, from, 0, len);
	CHECK(!err, "%s: ibv_memcpy_from_dm: %s", what, estr(err));
	return check_bytes(got, want, len, what);
}

/*
 * A second context over a dup of device A's uverbs file, and A's PD, a
 * memory region and device memory imported into it by handle: the MR has
 * the original's keys and length; a QP created in the imported PD WRITEs
 * from and READs into the original buffer through the imported MR, every
 * byte checked; device memory written through one mapping reads back
 * through the other.  Unknown handles are refused; after the objects are
 * given back (unimported) the originals still work.
 */
int case_import(void)
{
	struct dev imp = devs[0];
	struct imported im = {};
	struct buf src, dst, isrc;
	struct ibv_alloc_dm_attr da = { .length = 4096 };
	struct ibv_dm *dm = NULL;
	struct peer_info to_a, to_b;
	struct qp_conf c;
	struct pair p;
	int fd, ret;

	conf_init(&c);
	c.access = mr_access_all();
	TRY(buf_new(&src, &devs[0], 70000, mr_access_all()));
	TRY(buf_new(&dst, &devs[1], 70000, mr_access_all()));
	fd = dup(devs[0].ctx->cmd_fd);
	CHECK(fd >= 0, "dup: %s", strerror(errno));
	imp.ctx = track(R_CTX, ibv_import_device(fd));
	if (!imp.ctx && (errno == EOPNOTSUPP || errno == EPROTONOSUPPORT)) {
		close(fd);
		return skipf("%s cannot import a device", devs[0].name);
	}
	CHECK(imp.ctx, "ibv_import_device: %s", strerror(errno));
	CHECK(imp.ctx->num_comp_vectors == devs[0].ctx->num_comp_vectors,
	      "imported context: %d completion vectors, the original %d",
	      imp.ctx->num_comp_vectors, devs[0].ctx->num_comp_vectors);
	im.pd = ibv_import_pd(imp.ctx, devs[0].pd->handle);
	CHECK(im.pd, "ibv_import_pd: %s", strerror(errno));
	imp.pd = im.pd;
	im.mr = ibv_import_mr(im.pd, src.mr->handle);
	CHECK(im.mr, "ibv_import_mr: %s", strerror(errno));
	CHECK(im.mr->lkey == src.mr->lkey && im.mr->rkey == src.mr->rkey &&
	      im.mr->length == src.mr->length,
	      "imported MR: lkey 0x%x rkey 0x%x length %zu, the original 0x%x 0x%x %zu",
	      im.mr->lkey, im.mr->rkey, im.mr->length, src.mr->lkey, src.mr->rkey,
	      src.mr->length);
	errno = 0;
	CHECK(!ibv_import_mr(im.pd, 0x7ffffff0), "ibv_import_mr of an unknown handle succeeded");
	CHECK(errno, "ibv_import_mr of an unknown handle failed without errno");

	/* A QP of the imported context, through the imported PD and MR. */
	TRY(ep_create_on(&p.a, &imp, 0, &c));
	TRY(ep_create(&p.b, 1, &c));
	to_a = info_of(&p.a);
	to_b = info_of(&p.b);
	TRY(ep_connect(&p.b, &to_a, &c));
	TRY(ep_connect(&p.a, &to_b, &c));
	isrc = src;
	isrc.mr = im.mr;
	pattern(src.p, 70000, 7);
	TRY(post_rdma(&p.a, 1, IBV_WR_RDMA_WRITE, &isrc, 0, &dst, 0, 70000, 0));
	TRY(want_send(&p.a, 1, IBV_WC_RDMA_WRITE, "WRITE through the imported MR"));
	TRY(check_buf(&dst, 0, src.p, 70000, "WRITE through the imported MR"));
	pattern(dst.p + 100, 5000, 8);
	TRY(post_rdma(&p.a, 2, IBV_WR_RDMA_READ, &isrc, 300, &dst, 100, 5000, 0));
	TRY(want_send(&p.a, 2, IBV_WC_RDMA_READ, "READ into the imported MR"));
	TRY(check_bytes(src.p + 300, dst.p + 100, 5000, "READ into the imported MR"));

	if (devs[0].max_dm_size >= da.length) {
		dm = track(R_DM, ibv_alloc_dm(devs[0].ctx, &da));
		CHECK(dm, "ibv_alloc_dm: %s", strerror(errno));
		im.dm = ibv_import_dm(imp.ctx, dm->handle);
		CHECK(im.dm, "ibv_import_dm: %s", strerror(errno));
		TRY(dm_across(dm, im.dm, da.length, 9, "device memory, original to imported"));
		TRY(dm_across(im.dm, dm, da.length, 10, "device memory, imported to original"));
		errno = 0;
		CHECK(!ibv_import_dm(imp.ctx, dm->handle + 1000),
		      "ibv_import_dm of an unknown handle succeeded");
		CHECK(errno, "ibv_import_dm of an unknown handle failed without errno");
	}

	/* Given back: the QP goes first, then the imported objects. */
	ret = release_early(p.a.qp);
	CHECK(!ret, "ibv_destroy_qp (imported context): %s", estr(ret));
	unimport_all(&im);
	if (dm)
		TRY(dm_across(dm, dm, da.length, 11, "device memory after the import is gone"));
	TRY(pair_up(&p, &c));
	pattern(src.p, 4096, 12);
	TRY(post_rdma(&p.a, 3, IBV_WR_RDMA_WRITE, &src, 0, &dst, 0, 4096, 0));
	TRY(want_send(&p.a, 3, IBV_WC_RDMA_WRITE, "WRITE through the original MR after"));
	return check_bytes(dst.p, src.p, 4096, "WRITE through the original MR after");
}
