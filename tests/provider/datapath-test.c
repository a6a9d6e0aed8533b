// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * datapath-test.c - host-side test of the provider's kernel-bypass data
 * path: post_send, post_recv, post_srq_recv, poll_cq, the ibv_cq_ex poll
 * API and the ibv_wr_* API, driven directly on provider objects whose
 * rings are memfd mappings.  Needs no RDMA device.
 *
 * Usage: datapath-test
 * Build: see check-provider.sh (includes cq.c, to reach its static
 *        ibv_cq_ex ops; linked with sq.c rq.c wr.c ring.c domain.c and
 *        -libverbs for the ibv_cmd_* those files reference, which this
 *        test never calls).
 *
 * A second mapping of each memfd plays the kernel: the test reads the WQEs
 * the provider wrote and decodes them field by field as
 * uapi/rdma/sroce-abi.h defines them, writes CQEs and moves the indices the
 * kernel owns.  The context's cmd_fd is a pipe, so every doorbell the
 * provider rings can be read back and checked byte for byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sroce.h"

/* For cq.c's static ibv_cq_ex ops; the other files are linked in. */
#include "cq.c"

#define MAP_SIZE	8192u

static int failures;
static int db_pipe[2];		/* doorbells: provider writes, test reads */

/*
 * Every test runs twice: on queues that lock, then on queues of a thread
 * domain (struct sroce_spin), whose locks the test itself holds from
 * creation to destruction.  A data path that took such a lock would spin
 * for ever; check-provider.sh runs this test under a timeout.
 */
static bool single;

static void hold_if_single(struct sroce_spin *l)
{
	if (single)
		pthread_spin_lock(&l->spin);
}

static void release_if_single(struct sroce_spin *l)
{
	if (single)
		pthread_spin_unlock(&l->spin);
}
static struct ibv_context ctx;	/* only cmd_fd is used */
/* The features a current module offers (sroce_wr_check_ops()). */
static struct sroce_context sctx = { .features = SROCE_FEATURE_ATOMIC_WRITE };

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/* A memfd ring with zeroed indices; *kmap is the "kernel's" view. */
static int make_ring(struct sroce_ring_info *info, uint32_t num_slots,
		     uint32_t slot_size, uint8_t **kmap)
{
	int fd = memfd_create("sroce-datapath-test", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, MAP_SIZE)) {
		perror("memfd");
		exit(1);
	}
	*kmap = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*kmap == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	*info = (struct sroce_ring_info){
		.mmap_size = MAP_SIZE,
		.num_slots = num_slots,
		.slot_size = slot_size,
	};
	return fd;
}

static struct sroce_ring_hdr *hdr_of(uint8_t *kmap)
{
	return (struct sroce_ring_hdr *)(void *)kmap;
}

static void *kslot(uint8_t *kmap, uint32_t slot_size, uint32_t n,
		   uint32_t num_slots)
{
	return kmap + SROCE_RING_DATA_OFFSET + (n % num_slots) * slot_size;
}

/* Doorbells rung since the last call; each one checked against the ABI. */
static int doorbells(uint32_t qp_handle)
{
	struct sroce_doorbell_cmd cmd;
	int n = 0;

	while (read(db_pipe[0], &cmd, sizeof(cmd)) == (ssize_t)sizeof(cmd)) {
		if (cmd.hdr.command != IB_USER_VERBS_CMD_POST_SEND ||
		    cmd.hdr.in_words != sizeof(cmd) / 4 ||
		    cmd.hdr.out_words !=
		    sizeof(struct ib_uverbs_post_send_resp) / 4 ||
		    !cmd.core.response || cmd.core.qp_handle != qp_handle ||
		    cmd.core.wr_count || cmd.core.sge_count ||
		    cmd.core.wqe_size != sizeof(struct ib_uverbs_send_wr))
			return -1;
		n++;
	}
	return n;
}

struct test_qp {
	struct sroce_qp		*qp;
	uint8_t			*sq_k;		/* kernel view of the SQ ring */
	uint8_t			*rq_k;		/* kernel view of the RQ ring */
	uint32_t		sq_slot;
	uint32_t		rq_slot;
};

#define SQ_SLOTS	4u
#define RQ_SLOTS	4u

static struct test_qp make_qp(enum ibv_qp_type qp_type, bool with_rq)
{
	const struct ibv_qp_cap cap = {
		.max_send_wr = SQ_SLOTS,
		.max_recv_wr = with_rq ? RQ_SLOTS : 0,
		.max_send_sge = 2,
		.max_recv_sge = 3,
		.max_inline_data = 40,
	};
	static const struct sroce_ring_info no_ring;
	struct sroce_ring_info sq, rq;
	struct test_qp t = { .sq_slot = 112, .rq_slot = 64 };
	int sq_fd, rq_fd;

	t.qp = calloc(1, sizeof(*t.qp));
	t.qp->vqp.qp.context = &ctx;
	t.qp->vqp.qp.qp_type = qp_type;
	t.qp->vqp.qp.state = IBV_QPS_RTS;	/* sends need RTS (or later) */
	t.qp->vqp.qp.handle = 42;
	sq_fd = make_ring(&sq, SQ_SLOTS, t.sq_slot, &t.sq_k);
	rq_fd = make_ring(&rq, RQ_SLOTS, t.rq_slot, &t.rq_k);
	if (sroce_sq_init(&t.qp->sq, &sq, &cap, sq_fd, single) ||
	    sroce_rq_init(&t.qp->rq, with_rq ? &rq : &no_ring,
			  cap.max_recv_wr, cap.max_recv_sge, rq_fd, single)) {
		puts("FAIL: setting up the test QP");
		exit(1);
	}
	hold_if_single(&t.qp->sq.lock);
	hold_if_single(&t.qp->rq.lock);
	close(sq_fd);
	close(rq_fd);
	return t;
}

static void free_qp(struct test_qp *t)
{
	release_if_single(&t->qp->sq.lock);
	release_if_single(&t->qp->rq.lock);
	sroce_rq_uninit(&t->qp->rq);
	sroce_sq_uninit(&t->qp->sq);
	free(t->qp);
	munmap(t->sq_k, MAP_SIZE);
	munmap(t->rq_k, MAP_SIZE);
}

static struct sroce_send_wqe *sq_wqe(struct test_qp *t, uint32_t n)
{
	return kslot(t->sq_k, t->sq_slot, n, SQ_SLOTS);
}

static void test_init_checks(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_send_sge = 2 };
	struct sroce_ring_info info;
	struct sroce_sq sq = {};
	uint8_t *kmap;
	int fd = make_ring(&info, 4, 112, &kmap);

	expect(sroce_sq_init(&sq, &info, &cap, fd, false) == EPROTO,
	       "init: max_send_wr above num_slots refused");
	cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_inline_data = 64 };
	expect(sroce_sq_init(&sq, &info, &cap, fd, false) == EPROTO,
	       "init: slot too small for max_inline_data refused");
	cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_send_sge = 4 };
	expect(sroce_sq_init(&sq, &info, &cap, fd, false) == EPROTO,
	       "init: slot too small for max_send_sge SGEs refused");
	cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_send_sge = 3,
				   .max_inline_data = 48 };
	expect(sroce_sq_init(&sq, &info, &cap, fd, false) == 0,
	       "init: 64 + max(3 * 16, 48) = 112-byte slot accepted");
	sroce_sq_uninit(&sq);
	munmap(kmap, MAP_SIZE);
	close(fd);
}

static void test_send_sge(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct ibv_sge sge[3] = {
		{ .addr = 0x1000, .length = 100, .lkey = 7 },
		{ .addr = 0x2000, .length = 200, .lkey = 8 },
		{ .addr = 0x3000, .length = 1, .lkey = 9 },
	};
	struct ibv_send_wr wr2 = {
		.wr_id = 2, .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_SEND,
	};
	struct ibv_send_wr wr1 = {
		.wr_id = 1, .next = &wr2, .sg_list = sge, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
		.imm_data = (sroce_force __be32)0x11223344u,
		.wr.rdma = { .remote_addr = 0xabcdef00u, .rkey = 0x55 },
	};
	struct ibv_send_wr *bad = NULL;
	struct sroce_send_wqe *w = sq_wqe(&t, 0);
	struct sroce_sge *s = (struct sroce_sge *)(void *)(w + 1);

	expect(sroce_sq_post(&t.qp->vqp.qp, &wr1, &bad) == EINVAL && bad == &wr2,
	       "post_send: 3 SGEs over max_send_sge 2 refused, bad_wr set");
	expect(hdr_of(t.sq_k)->producer == 1,
	       "post_send: the WR before the bad one is published");
	expect(doorbells(42) == 1, "post_send: doorbell rung once, well-formed");
	expect(w->wr_id == 1 && w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	       w->send_flags == (SROCE_SEND_SIGNALED | SROCE_SEND_FENCE) &&
	       w->num_sge == 2 && w->inline_len == 0 &&
	       w->imm_data == 0x11223344u && w->xrc_remote_srqn == 0 &&
	       w->wr.rdma.remote_addr == 0xabcdef00u && w->wr.rdma.rkey == 0x55 &&
	       w->wr.rdma.reserved == 0,
	       "post_send: RDMA_WRITE_WITH_IMM header as the ABI defines it");
	expect(s[0].addr == 0x1000 && s[0].length == 100 && s[0].lkey == 7 &&
	       s[1].addr == 0x2000 && s[1].length == 200 && s[1].lkey == 8,
	       "post_send: SGEs follow the 64-byte header");
	free_qp(&t);
}

static void test_send_inline_and_full(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	char a[] = "0123456789", b[] = "abcdefghijklmnopqrst";
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)a, .length = 10 },
		{ .addr = (uintptr_t)b, .length = 20 },
	};
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = sge, .num_sge = 2, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE,
	};
	struct ibv_send_wr *bad = NULL;
	struct sroce_send_wqe *w = sq_wqe(&t, 0);
	int i, ret = 0;

	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       w->send_flags == SROCE_SEND_INLINE && w->num_sge == 0 &&
	       w->inline_len == 30 && !memcmp(w + 1, a, 10) &&
	       !memcmp((char *)(w + 1) + 10, b, 20),
	       "post_send: inline data gathered into the slot");
	sge[1].length = 31;
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == EINVAL && bad == &wr &&
	       hdr_of(t.sq_k)->producer == 1,
	       "post_send: 41 inline bytes over max_inline_data 40 refused");
	wr.opcode = IBV_WR_RDMA_READ;
	sge[1].length = 1;
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: inline RDMA_READ refused");
	wr.send_flags = IBV_SEND_IP_CSUM;
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: unsupported send flag refused");

	wr.send_flags = 0;
	for (i = 0; i < 3 && !ret; i++)
		ret = sroce_sq_post(&t.qp->vqp.qp, &wr, &bad);
	expect(!ret && sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == ENOMEM &&
	       hdr_of(t.sq_k)->producer == SQ_SLOTS,
	       "post_send: ENOMEM with max_send_wr outstanding");
	hdr_of(t.sq_k)->consumer = 1;
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       sq_wqe(&t, 4) == sq_wqe(&t, 0) && sq_wqe(&t, 4)->wr_id == 9 &&
	       sq_wqe(&t, 4)->opcode == IB_UVERBS_WR_RDMA_READ,
	       "post_send: a given-back slot is reused for index 4");
	expect(doorbells(42) == 5, "post_send: one doorbell per call");
	free_qp(&t);
}

static void test_send_types(void)
{
	struct test_qp ud = make_qp(IBV_QPT_UD, true);
	struct test_qp uc = make_qp(IBV_QPT_UC, true);
	struct sroce_ah ah = { .ah_num = 31 };
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_SEND_WITH_IMM,
		.wr.ud = { .ah = &ah.ibv_ah, .remote_qpn = 0x123,
			   .remote_qkey = 0x11111111 },
	};
	struct ibv_send_wr *bad;
	struct sroce_send_wqe *w = sq_wqe(&ud, 0);

	expect(sroce_sq_post(&ud.qp->vqp.qp, &wr, &bad) == 0 &&
	       w->opcode == IB_UVERBS_WR_SEND_WITH_IMM && w->num_sge == 0 &&
	       w->wr.ud.ah_num == 31 && w->wr.ud.remote_qpn == 0x123 &&
	       w->wr.ud.remote_qkey == 0x11111111 && w->wr.ud.reserved == 0,
	       "post_send: UD address from the provider's AH");
	wr.wr.ud.ah = NULL;
	expect(sroce_sq_post(&ud.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: UD without AH refused");
	wr.opcode = IBV_WR_RDMA_WRITE;
	expect(sroce_sq_post(&ud.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: RDMA_WRITE on UD refused");
	wr.opcode = IBV_WR_RDMA_READ;
	expect(sroce_sq_post(&uc.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: RDMA_READ on UC refused");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	expect(sroce_sq_post(&uc.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_send: SEND_WITH_INV refused");
	expect(doorbells(42) == 1, "post_send: no doorbell when nothing posted");
	free_qp(&ud);
	free_qp(&uc);
}

static void test_atomic(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct ibv_sge sge = { .addr = 0x8000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = {
		.wr_id = 4, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x9000, .compare_add = 5,
			       .swap = 6, .rkey = 77 },
	};
	struct ibv_send_wr *bad;
	struct sroce_send_wqe *w = sq_wqe(&t, 0);

	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	       w->wr.atomic.remote_addr == 0x9000 &&
	       w->wr.atomic.compare_add == 5 && w->wr.atomic.swap == 6 &&
	       w->wr.atomic.rkey == 77 && w->wr.atomic.reserved == 0 &&
	       w->num_sge == 1,
	       "post_send: ATOMIC_CMP_AND_SWP fields");
	doorbells(42);
	free_qp(&t);
}

static void test_memory_windows(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct ibv_qp_ex *qpx = &t.qp->vqp.qp_ex;
	struct ibv_mr mr = { .lkey = 0x1234 };
	struct ibv_mw mw1 = { .rkey = 0x500, .type = IBV_MW_TYPE_1 };
	struct ibv_mw mw2 = { .rkey = 0x600, .type = IBV_MW_TYPE_2 };
	struct ibv_mw_bind bind = {
		.wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = &mr, .addr = 0x7000, .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_sge sge = { .addr = 0x8000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = {
		.wr_id = 10, .opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = 0x601,
	};
	struct ibv_send_wr *bad;
	struct sroce_send_wqe *w;

	w = sq_wqe(&t, 0);
	expect(sroce_sq_bind_mw(&t.qp->vqp.qp, &mw1, &bind) == 0 &&
	       mw1.rkey == 0x501 && w->opcode == IB_UVERBS_WR_BIND_MW &&
	       w->wr_id == 9 && w->send_flags == SROCE_SEND_SIGNALED &&
	       w->num_sge == 0 && w->wr.bind_mw.mw_rkey == 0x500 &&
	       w->wr.bind_mw.new_rkey == 0x501 &&
	       w->wr.bind_mw.addr == 0x7000 && w->wr.bind_mw.length == 4096 &&
	       w->wr.bind_mw.mr_lkey == 0x1234 &&
	       w->wr.bind_mw.access == IBV_ACCESS_REMOTE_WRITE &&
	       doorbells(42) == 1,
	       "bind_mw: type 1 posts BIND_MW and takes the next key");
	expect(sroce_sq_bind_mw(&t.qp->vqp.qp, &mw2, &bind) == EINVAL &&
	       mw2.rkey == 0x600 && doorbells(42) == 0,
	       "bind_mw: type 2 window refused");
	bind.bind_info.mr = NULL;
	expect(sroce_sq_bind_mw(&t.qp->vqp.qp, &mw1, &bind) == EINVAL &&
	       mw1.rkey == 0x501, "bind_mw: a range without a region refused");
	bind.bind_info.length = 0;
	w = sq_wqe(&t, 1);
	expect(sroce_sq_bind_mw(&t.qp->vqp.qp, &mw1, &bind) == 0 &&
	       mw1.rkey == 0x502 && w->wr.bind_mw.length == 0 &&
	       w->wr.bind_mw.mr_lkey == 0 && doorbells(42) == 1,
	       "bind_mw: zero length unbinds without a region");

	w = sq_wqe(&t, 2);
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       w->opcode == IB_UVERBS_WR_LOCAL_INV &&
	       w->invalidate_rkey == 0x601 && w->num_sge == 0 &&
	       doorbells(42) == 1, "post_send: LOCAL_INV carries the rkey");
	wr.sg_list = &sge;
	wr.num_sge = 1;
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == EINVAL && bad == &wr,
	       "post_send: LOCAL_INV with data refused");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	w = sq_wqe(&t, 3);
	expect(sroce_sq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       w->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
	       w->invalidate_rkey == 0x601 && w->num_sge == 1 &&
	       doorbells(42) == 1, "post_send: SEND_WITH_INV with data");

	hdr_of(t.sq_k)->consumer = 4;	/* the "kernel" is done with them */
	sroce_wr_init(t.qp, IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
		      IBV_QP_EX_WITH_SEND_WITH_INV);
	bind.bind_info.mr = &mr;
	bind.bind_info.length = 64;
	ibv_wr_start(qpx);
	qpx->wr_id = 11;
	qpx->wr_flags = 0;
	ibv_wr_bind_mw(qpx, &mw2, 0x6ab, &bind.bind_info);
	ibv_wr_local_inv(qpx, 0x6ab);
	ibv_wr_send_inv(qpx, 0x6ab);
	ibv_wr_set_sge(qpx, 1, 0x8000, 8);
	expect(ibv_wr_complete(qpx) == 0 && doorbells(42) == 1 &&
	       sq_wqe(&t, 4)->opcode == IB_UVERBS_WR_BIND_MW &&
	       sq_wqe(&t, 4)->wr.bind_mw.mw_rkey == 0x600 &&
	       sq_wqe(&t, 4)->wr.bind_mw.new_rkey == 0x6ab &&
	       sq_wqe(&t, 4)->wr.bind_mw.length == 64 &&
	       sq_wqe(&t, 5)->opcode == IB_UVERBS_WR_LOCAL_INV &&
	       sq_wqe(&t, 5)->invalidate_rkey == 0x6ab &&
	       sq_wqe(&t, 6)->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
	       sq_wqe(&t, 6)->invalidate_rkey == 0x6ab &&
	       sq_wqe(&t, 6)->num_sge == 1,
	       "wr: bind_mw, local_inv, send_inv");
	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x6ab);
	ibv_wr_set_sge(qpx, 1, 0x8000, 8);
	expect(ibv_wr_complete(qpx) == EINVAL && doorbells(42) == 0,
	       "wr: local_inv with data refused");
	free_qp(&t);
}

static void test_recv(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct test_qp nrq = make_qp(IBV_QPT_RC, false);
	struct ibv_sge sge[4] = {
		{ .addr = 0x100, .length = 1, .lkey = 2 },
		{ .addr = 0x200, .length = 3, .lkey = 4 },
	};
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = sge, .num_sge = 2 };
	struct ibv_recv_wr *bad = NULL;
	struct sroce_recv_wqe *w = kslot(t.rq_k, t.rq_slot, 0, RQ_SLOTS);
	struct sroce_sge *s = (struct sroce_sge *)(void *)(w + 1);
	int i, ret = 0;

	expect(sroce_rq_post(&t.qp->vqp.qp, &wr, &bad) == 0 &&
	       hdr_of(t.rq_k)->producer == 1 && w->wr_id == 5 &&
	       w->num_sge == 2 && w->reserved == 0 &&
	       s[0].addr == 0x100 && s[0].length == 1 && s[0].lkey == 2 &&
	       s[1].addr == 0x200 && s[1].length == 3 && s[1].lkey == 4,
	       "post_recv: WQE and SGEs as the ABI defines them");
	wr.num_sge = 4;
	expect(sroce_rq_post(&t.qp->vqp.qp, &wr, &bad) == EINVAL && bad == &wr,
	       "post_recv: 4 SGEs over max_recv_sge 3 refused");
	wr.num_sge = 0;
	for (i = 0; i < 3 && !ret; i++)
		ret = sroce_rq_post(&t.qp->vqp.qp, &wr, &bad);
	expect(!ret && sroce_rq_post(&t.qp->vqp.qp, &wr, &bad) == ENOMEM &&
	       hdr_of(t.rq_k)->producer == RQ_SLOTS,
	       "post_recv: ENOMEM when full");
	expect(sroce_rq_post(&nrq.qp->vqp.qp, &wr, &bad) == EINVAL,
	       "post_recv: QP without its own receive queue refused");
	expect(doorbells(42) == 0, "post_recv: no doorbell");
	free_qp(&t);
	free_qp(&nrq);
}

#define CQ_SLOTS 4u

static void kernel_cqe(uint8_t *kmap, uint32_t index, uint64_t wr_id)
{
	struct ib_uverbs_wc *wc = kslot(kmap, 64, index, CQ_SLOTS);

	*wc = (struct ib_uverbs_wc){
		.wr_id = wr_id,
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.byte_len = 1000 + (uint32_t)wr_id,
		.qp_num = 0x42,
		.wc_flags = IBV_WC_WITH_IMM,
		.sl = 3,
	};
	wc->ex.imm_data = (sroce_force __be32)0xcafe;
}

static struct sroce_cq *make_cq(uint8_t **kmap)
{
	struct sroce_ring_info info;
	struct sroce_cq *cq = calloc(1, sizeof(*cq));
	int fd = make_ring(&info, CQ_SLOTS, 64, kmap);

	sroce_spin_init(&cq->lock, single);
	hold_if_single(&cq->lock);
	hdr_of(*kmap)->producer = hdr_of(*kmap)->consumer = 0xfffffffeu;
	if (sroce_ring_map(&cq->ring, &info, sizeof(struct ib_uverbs_wc),
			   SROCE_RING_CONSUMER, fd)) {
		puts("FAIL: mapping the test CQ");
		exit(1);
	}
	close(fd);
	return cq;
}

static void free_cq(struct sroce_cq *cq, uint8_t *kmap)
{
	sroce_ring_unmap(&cq->ring);
	release_if_single(&cq->lock);
	sroce_spin_destroy(&cq->lock);
	free(cq);
	munmap(kmap, MAP_SIZE);
}

static void test_poll_cq(void)
{
	uint8_t *kmap;
	struct sroce_cq *cq = make_cq(&kmap);
	struct ibv_wc wc[4];
	uint32_t i;

	expect(sroce_cq_poll(&cq->vcq.cq, 4, wc) == 0, "poll_cq: empty");
	for (i = 0; i < 3; i++)
		kernel_cqe(kmap, 0xfffffffeu + i, 10 + i);
	hdr_of(kmap)->producer = 0xfffffffeu + 3;
	expect(sroce_cq_poll(&cq->vcq.cq, 2, wc) == 2 && wc[0].wr_id == 10 &&
	       wc[1].wr_id == 11 && wc[1].byte_len == 1011 &&
	       wc[1].opcode == IBV_WC_RECV && wc[1].qp_num == 0x42 &&
	       wc[1].wc_flags == IBV_WC_WITH_IMM && wc[1].sl == 3 &&
	       wc[1].imm_data == (sroce_force __be32)0xcafe,
	       "poll_cq: two CQEs copied as struct ibv_wc");
	expect(hdr_of(kmap)->consumer == 0, "poll_cq: consumer published at 0");
	expect(sroce_cq_poll(&cq->vcq.cq, 4, wc) == 1 && wc[0].wr_id == 12 &&
	       sroce_cq_poll(&cq->vcq.cq, 4, wc) == 0 &&
	       hdr_of(kmap)->consumer == 1,
	       "poll_cq: the rest, then empty, across the wrap");
	free_cq(cq, kmap);
}

static void test_poll_cq_ex(void)
{
	struct ibv_poll_cq_attr attr = {};
	uint8_t *kmap;
	struct sroce_cq *cq = make_cq(&kmap);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	uint32_t p = 0xfffffffeu;

	/* The ops create_cq_ex installs, without the create command. */
	cqx_init_ops(cqx, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM);
	expect(cqx->read_byte_len && cqx->read_imm_data && !cqx->read_sl &&
	       !cqx->read_completion_ts, "cq_ex: readers only for wc_flags");
	expect(ibv_start_poll(cqx, &attr) == ENOENT, "cq_ex: start on empty");
	kernel_cqe(kmap, p, 20);
	kernel_cqe(kmap, p + 1, 21);
	hdr_of(kmap)->producer = p + 2;
	expect(ibv_start_poll(cqx, &attr) == 0 && cqx->wr_id == 20 &&
	       cqx->status == IBV_WC_SUCCESS && ibv_wc_read_byte_len(cqx) == 1020 &&
	       ibv_wc_read_opcode(cqx) == IBV_WC_RECV,
	       "cq_ex: start_poll returns the first CQE");
	expect(ibv_next_poll(cqx) == 0 && cqx->wr_id == 21 &&
	       ibv_wc_read_imm_data(cqx) == (sroce_force __be32)0xcafe,
	       "cq_ex: next_poll returns the second");
	expect(ibv_next_poll(cqx) == ENOENT, "cq_ex: then ENOENT");
	expect(hdr_of(kmap)->consumer == p, "cq_ex: nothing given back yet");
	ibv_end_poll(cqx);
	expect(hdr_of(kmap)->consumer == p + 2 && cq->ring.head == p + 2,
	       "cq_ex: end_poll gives both back");
	kernel_cqe(kmap, p + 2, 22);
	hdr_of(kmap)->producer = p + 3;
	expect(ibv_start_poll(cqx, &attr) == 0 && cqx->wr_id == 22,
	       "cq_ex: next batch");
	ibv_end_poll(cqx);
	expect(hdr_of(kmap)->consumer == p + 3,
	       "cq_ex: end_poll right after start_poll gives one back");
	free_cq(cq, kmap);
}

/* A CQ with timestamps: the times after each CQE, through their readers. */
static void test_poll_cq_ex_ts(void)
{
	struct ibv_poll_cq_attr attr = {};
	uint8_t *kmap;
	struct sroce_cq *cq = make_cq(&kmap);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct sroce_cqe_ts *ts;
	uint32_t p = 0xfffffffeu, i;

	cq->timestamps = true;
	cqx_init_ops(cqx, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	expect(cqx->read_completion_ts && cqx->read_completion_wallclock_ns &&
	       !cqx->read_byte_len, "cq_ex: the timestamp readers when asked");
	for (i = 0; i < 2; i++) {
		kernel_cqe(kmap, p + i, 30 + i);
		ts = (struct sroce_cqe_ts *)((struct ib_uverbs_wc *)
					      kslot(kmap, 64, p + i, CQ_SLOTS) + 1);
		ts->clock_ns = 1000 + i;
		ts->realtime_ns = 2000000000000000000ull + i;
	}
	hdr_of(kmap)->producer = p + 2;
	expect(ibv_start_poll(cqx, &attr) == 0 && cqx->wr_id == 30 &&
	       ibv_wc_read_completion_ts(cqx) == 1000 &&
	       ibv_wc_read_completion_wallclock_ns(cqx) == 2000000000000000000ull,
	       "cq_ex: the first CQE's times");
	expect(ibv_next_poll(cqx) == 0 && cqx->wr_id == 31 &&
	       ibv_wc_read_completion_ts(cqx) == 1001 &&
	       ibv_wc_read_completion_wallclock_ns(cqx) == 2000000000000000001ull,
	       "cq_ex: the second CQE's times");
	ibv_end_poll(cqx);
	free_cq(cq, kmap);
}

/* A reset QP's CQEs are skipped by both polling APIs and given back. */
static void test_cq_discard(void)
{
	struct ibv_poll_cq_attr attr = {};
	uint8_t *kmap;
	struct sroce_cq *cq = make_cq(&kmap);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ib_uverbs_wc *k;
	struct ibv_wc wc[4];
	uint32_t p = 0xfffffffeu, i;

	cqx_init_ops(cqx, 0);
	for (i = 0; i < 4; i++)
		kernel_cqe(kmap, p + i, 30 + i);
	k = kslot(kmap, 64, p + 1, CQ_SLOTS);
	k->qp_num = 0x77;
	k = kslot(kmap, 64, p + 3, CQ_SLOTS);
	k->qp_num = 0x77;
	hdr_of(kmap)->producer = p + 4;
	sroce_cq_discard_qp(&cq->vcq.cq, 0x77);
	expect(sroce_cq_poll(&cq->vcq.cq, 4, wc) == 2 && wc[0].wr_id == 30 &&
	       wc[1].wr_id == 32 && hdr_of(kmap)->consumer == p + 4,
	       "discard: poll_cq skips the QP's CQEs and gives them back");

	for (i = 4; i < 7; i++)
		kernel_cqe(kmap, p + i, 30 + i);
	k = kslot(kmap, 64, p + 4, CQ_SLOTS);
	k->qp_num = 0x77;
	k = kslot(kmap, 64, p + 6, CQ_SLOTS);
	k->qp_num = 0x77;
	hdr_of(kmap)->producer = p + 7;
	sroce_cq_discard_qp(&cq->vcq.cq, 0x77);
	expect(ibv_start_poll(cqx, &attr) == 0 && cqx->wr_id == 35 &&
	       ibv_next_poll(cqx) == ENOENT,
	       "discard: cq_ex skips them too");
	ibv_end_poll(cqx);
	expect(hdr_of(kmap)->consumer == p + 7, "discard: cq_ex gives all back");

	kernel_cqe(kmap, p + 7, 37);
	k = kslot(kmap, 64, p + 7, CQ_SLOTS);
	k->qp_num = 0x77;
	hdr_of(kmap)->producer = p + 8;
	sroce_cq_discard_qp(&cq->vcq.cq, 0x77);
	expect(ibv_start_poll(cqx, &attr) == ENOENT &&
	       hdr_of(kmap)->consumer == p + 8,
	       "discard: start_poll on only discarded CQEs gives them back");
	free_cq(cq, kmap);
}

static void test_wr_api(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct ibv_qp_ex *qpx = &t.qp->vqp.qp_ex;
	struct sroce_sge *s;
	struct ibv_sge three[3] = {};
	char data[] = "hello";

	sroce_wr_init(t.qp, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	expect(qpx->wr_send && qpx->wr_rdma_write && !qpx->wr_rdma_read &&
	       !qpx->wr_set_ud_addr && !qpx->wr_bind_mw,
	       "wr: builders only for what was asked");

	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 3, 0x4000, 64);
	qpx->wr_id = 8;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 99, 0x5000);
	ibv_wr_set_inline_data(qpx, data, 5);
	expect(hdr_of(t.sq_k)->producer == 0,
	       "wr: nothing published before wr_complete");
	expect(ibv_wr_complete(qpx) == 0 && hdr_of(t.sq_k)->producer == 2 &&
	       doorbells(42) == 1, "wr: complete publishes 2, one doorbell");
	s = (struct sroce_sge *)(void *)(sq_wqe(&t, 0) + 1);
	expect(sq_wqe(&t, 0)->wr_id == 7 &&
	       sq_wqe(&t, 0)->opcode == IB_UVERBS_WR_SEND &&
	       sq_wqe(&t, 0)->send_flags == SROCE_SEND_SIGNALED &&
	       sq_wqe(&t, 0)->num_sge == 1 && s[0].lkey == 3 &&
	       s[0].addr == 0x4000 && s[0].length == 64,
	       "wr: SEND with an SGE (wr_flags INLINE left to the setter)");
	expect(sq_wqe(&t, 1)->wr_id == 8 &&
	       sq_wqe(&t, 1)->opcode == IB_UVERBS_WR_RDMA_WRITE &&
	       sq_wqe(&t, 1)->send_flags == SROCE_SEND_INLINE &&
	       sq_wqe(&t, 1)->inline_len == 5 &&
	       !memcmp(sq_wqe(&t, 1) + 1, "hello", 5) &&
	       sq_wqe(&t, 1)->wr.rdma.rkey == 99 &&
	       sq_wqe(&t, 1)->wr.rdma.remote_addr == 0x5000,
	       "wr: RDMA_WRITE with inline data");

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 3, three);
	ibv_wr_send(qpx);
	expect(ibv_wr_complete(qpx) == EINVAL && hdr_of(t.sq_k)->producer == 2 &&
	       doorbells(42) == 0, "wr: a bad setter fails the whole batch");

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	expect(hdr_of(t.sq_k)->producer == 2 && doorbells(42) == 0,
	       "wr: abort drops the batch");

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);
	expect(ibv_wr_complete(qpx) == ENOMEM && hdr_of(t.sq_k)->producer == 2,
	       "wr: overflowing the send queue fails the batch");
	free_qp(&t);
}

static void test_wr_atomic_write(void)
{
	struct test_qp t = make_qp(IBV_QPT_RC, true);
	struct ibv_qp_ex *qpx = &t.qp->vqp.qp_ex;
	const uint8_t val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	sroce_wr_init(t.qp, IBV_QP_EX_WITH_ATOMIC_WRITE);
	expect(qpx->wr_atomic_write && !qpx->wr_send,
	       "wr: the atomic write builder when asked for");
	ibv_wr_start(qpx);
	qpx->wr_id = 9;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, 77, 0x6008, val);
	expect(ibv_wr_complete(qpx) == 0 && hdr_of(t.sq_k)->producer == 1 &&
	       doorbells(42) == 1 && sq_wqe(&t, 0)->wr_id == 9 &&
	       sq_wqe(&t, 0)->opcode == SROCE_WR_ATOMIC_WRITE &&
	       sq_wqe(&t, 0)->send_flags == SROCE_SEND_SIGNALED &&
	       sq_wqe(&t, 0)->num_sge == 0 && sq_wqe(&t, 0)->inline_len == 0 &&
	       sq_wqe(&t, 0)->wr.atomic_write.rkey == 77 &&
	       sq_wqe(&t, 0)->wr.atomic_write.remote_addr == 0x6008 &&
	       !memcmp(sq_wqe(&t, 0)->wr.atomic_write.data, val, 8),
	       "wr: ATOMIC WRITE carries its 8 bytes in the WQE");
	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, 77, 0x6008, val);
	ibv_wr_set_sge(qpx, 3, 0x4000, 8);
	expect(ibv_wr_complete(qpx) == EINVAL && hdr_of(t.sq_k)->producer == 1 &&
	       doorbells(42) == 0, "wr: ATOMIC WRITE takes no SGE");
	free_qp(&t);
}

static void test_wr_ud(void)
{
	struct test_qp t = make_qp(IBV_QPT_UD, true);
	struct ibv_qp_ex *qpx = &t.qp->vqp.qp_ex;
	struct sroce_ah ah = { .ah_num = 5 };
	struct sroce_context old = {};

	expect(sroce_wr_check_ops(&sctx, IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE) ==
	       EOPNOTSUPP &&
	       sroce_wr_check_ops(&sctx, IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV) ==
	       EOPNOTSUPP &&
	       sroce_wr_check_ops(&sctx, IBV_QPT_UC, IBV_QP_EX_WITH_BIND_MW) ==
	       EOPNOTSUPP &&
	       sroce_wr_check_ops(&sctx, IBV_QPT_RC, IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_SEND_WITH_INV) == 0 &&
	       sroce_wr_check_ops(&sctx, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) == 0,
	       "wr: send_ops_flags checked per QP type");
	expect(sroce_wr_check_ops(&sctx, IBV_QPT_RC,
				  IBV_QP_EX_WITH_ATOMIC_WRITE) == 0 &&
	       sroce_wr_check_ops(&sctx, IBV_QPT_UC,
				  IBV_QP_EX_WITH_ATOMIC_WRITE) == EOPNOTSUPP &&
	       sroce_wr_check_ops(&old, IBV_QPT_RC,
				  IBV_QP_EX_WITH_ATOMIC_WRITE) == EOPNOTSUPP,
	       "wr: atomic write on RC, from a module that offers it");
	sroce_wr_init(t.qp, IBV_QP_EX_WITH_SEND);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	expect(ibv_wr_complete(qpx) == EINVAL && doorbells(42) == 0,
	       "wr: UD send without wr_set_ud_addr refused");
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, &ah.ibv_ah, 0x77, 0x1234);
	expect(ibv_wr_complete(qpx) == 0 && sq_wqe(&t, 0)->wr.ud.ah_num == 5 &&
	       sq_wqe(&t, 0)->wr.ud.remote_qpn == 0x77 &&
	       sq_wqe(&t, 0)->wr.ud.remote_qkey == 0x1234 && doorbells(42) == 1,
	       "wr: UD send with its address");
	free_qp(&t);
}

int main(void)
{
	if (pipe2(db_pipe, O_NONBLOCK | O_CLOEXEC)) {
		perror("pipe2");
		return 1;
	}
	ctx.cmd_fd = db_pipe[1];

	test_init_checks();
	for (int pass = 0; pass < 2; pass++) {
		single = pass == 1;
		test_send_sge();
		test_send_inline_and_full();
		test_send_types();
		test_atomic();
		test_memory_windows();
		test_recv();
		test_poll_cq();
		test_poll_cq_ex();
		test_poll_cq_ex_ts();
		test_cq_discard();
		test_wr_api();
		test_wr_atomic_write();
		test_wr_ud();
	}

	puts(failures ? "datapath-test: FAILED" : "datapath-test: passed");
	return failures ? 1 : 0;
}
