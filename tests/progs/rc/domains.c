// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * domains.c - sroce_rc_test: thread domains and parent domains
 * (ibv_alloc_td(3), ibv_alloc_parent_domain(3)).
 */

#include "rc.h"

/* --- cases: parent domains -------------------------------------------------------- */

/* How often the parent domains' allocators were called (sroce: never). */
static unsigned int allocs, frees;

static void *count_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
			 uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)size, (void)alignment, (void)resource_type;
	allocs++;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void count_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type)
{
	(void)pd, (void)pd_context, (void)ptr, (void)resource_type;
	frees++;
}

/*
 * A parent domain of @d's PD, with thread domain @td (or none) and the
 * counting allocators; SKIP where the provider has no parent domains.
 */
static int parent_new(struct dev *d, struct ibv_td *td, struct ibv_pd **parent)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = d->pd,
		.td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = count_alloc,
		.free = count_free,
		.pd_context = d,
	};

	*parent = track(R_PD, ibv_alloc_parent_domain(d->ctx, &a));
	if (!*parent && errno == EOPNOTSUPP)
		return skipf("%s has no parent domains", d->name);
	CHECK(*parent, "ibv_alloc_parent_domain(%s%s): %s", d->name, td ? ", with a TD" : "",
	      strerror(errno));
	return 0;
}

static int td_new(struct dev *d, struct ibv_td **td)
{
	struct ibv_td_init_attr a = {};

	*td = track(R_TD, ibv_alloc_td(d->ctx, &a));
	if (!*td && errno == EOPNOTSUPP)
		return skipf("%s has no thread domains", d->name);
	CHECK(*td, "ibv_alloc_td(%s): %s", d->name, strerror(errno));
	return 0;
}

/* An extended CQ created in @parent (IBV_CQ_INIT_ATTR_MASK_PD). */
static int cqx_new(struct dev *d, struct ibv_pd *parent, struct ibv_cq_ex **cqx)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = parent,
	};

	*cqx = ibv_create_cq_ex(d->ctx, &a);
	CHECK(*cqx, "ibv_create_cq_ex(%s) in a parent domain: %s", d->name, strerror(errno));
	track(R_CQ, ibv_cq_ex_to_cq(*cqx));
	return 0;
}

/*
 * The next completion of @cqx, through the start/next/end_poll API, is
 * @wr_id's, successful, of opcode @op and (for receives) @len bytes.
 */
static int cqx_expect(struct ibv_cq_ex *cqx, uint64_t wr_id, enum ibv_wc_opcode op,
		      uint32_t len, const char *what)
{
	enum ibv_wc_status st;
	enum ibv_wc_opcode got;
	uint32_t got_len;
	uint64_t id;

	TRY(cqx_start(cqx, what));
	id = cqx->wr_id;
	st = cqx->status;
	got = ibv_wc_read_opcode(cqx);
	got_len = ibv_wc_read_byte_len(cqx);
	ibv_end_poll(cqx);
	CHECK(id == wr_id && st == IBV_WC_SUCCESS && got == op &&
	      (op != IBV_WC_RECV || got_len == len),
	      "%s: completion of wr_id %llu, status %s, opcode %d, %u bytes (expected wr_id %llu, success, opcode %d%s)",
	      what, (unsigned long long)id, ibv_wc_status_str(st), got, got_len,
	      (unsigned long long)wr_id, op, op == IBV_WC_RECV ? ", the bytes sent" : "");
	return 0;
}

struct domains {
	struct dev da, db;		/* devs[0] and [1], their PD a parent domain */
	struct ibv_td *td;		/* A's thread domain */
	struct ibv_cq_ex *cqx;		/* A's CQ, in its parent domain */
	struct pair p;
	struct qp_conf c;
};

/*
 * A QP pair whose every object is created in a parent domain: A's with a
 * thread domain (its QP and CQ take no locks in sroce's provider), B's
 * without.  Both share one CQ for sends and receives.
 */
static int domains_up(struct domains *s)
{
	struct peer_info to_a, to_b;
	struct ibv_cq_ex *cqx_b;

	s->da = devs[0];
	s->db = devs[1];
	TRY(td_new(&s->da, &s->td));
	TRY(parent_new(&devs[0], s->td, &s->da.pd));
	TRY(parent_new(&devs[1], NULL, &s->db.pd));
	TRY(cqx_new(&s->da, s->da.pd, &s->cqx));
	TRY(cqx_new(&s->db, s->db.pd, &cqx_b));
	conf_init(&s->c);
	s->c.scq[0] = s->c.rcq[0] = ibv_cq_ex_to_cq(s->cqx);
	s->c.scq[1] = s->c.rcq[1] = ibv_cq_ex_to_cq(cqx_b);
	s->c.wr_api = true;
	TRY(ep_create_on(&s->p.a, &s->da, 0, &s->c));
	TRY(ep_create_on(&s->p.b, &s->db, 1, &s->c));
	CHECK(s->p.a.qp->pd == s->da.pd, "A's QP names PD %p, not its parent domain %p",
	      (void *)s->p.a.qp->pd, (void *)s->da.pd);
	to_a = info_of(&s->p.a);
	to_b = info_of(&s->p.b);
	TRY(ep_connect(&s->p.b, &to_a, &s->c));
	return ep_connect(&s->p.a, &to_b, &s->c);
}

/*
 * Traffic between QPs, CQs and MRs created in parent domains: SENDs both
 * ways, an RDMA WRITE and an RDMA READ, every byte checked; A's
 * completions through the ibv_cq_ex polling API (lock-free under its
 * thread domain), B's through ibv_poll_cq.  The allocators are never
 * called: sroce's queue memory is the kernel's.
 */
int case_parent_domain(void)
{
	enum { LEN = 65537 };
	struct buf a_buf, b_buf;
	struct domains s;
	struct want w;

	allocs = frees = 0;
	TRY(domains_up(&s));
	TRY(buf_new(&a_buf, &s.da, LEN, mr_access_all()));
	TRY(buf_new(&b_buf, &s.db, LEN, mr_access_all()));
	CHECK(a_buf.mr->pd == s.da.pd, "A's MR names PD %p, not its parent domain %p",
	      (void *)a_buf.mr->pd, (void *)s.da.pd);

	/* A to B, then B to A. */
	buf_clear(&b_buf);
	pattern(a_buf.p, LEN, 1);
	TRY(post_recv_buf(&s.p.b, 1, &b_buf, 0, LEN));
	TRY(post_send_buf(&s.p.a, 2, IBV_WR_SEND, &a_buf, LEN, 0));
	TRY(cqx_expect(s.cqx, 2, IBV_WC_SEND, 0, "SEND from A's parent domain"));
	w = w_recv(1, &s.p.b, LEN);
	TRY(expect_wc(s.p.b.rcq, &w, "receive in B's parent domain"));
	TRY(check_buf(&b_buf, 0, a_buf.p, LEN, "SEND from A to B"));

	buf_clear(&a_buf);
	pattern(b_buf.p, LEN, 2);
	TRY(post_recv_buf(&s.p.a, 3, &a_buf, 0, LEN));
	TRY(post_send_buf(&s.p.b, 4, IBV_WR_SEND, &b_buf, LEN, 0));
	TRY(cqx_expect(s.cqx, 3, IBV_WC_RECV, LEN, "receive in A's parent domain"));
	TRY(check_buf(&a_buf, 0, b_buf.p, LEN, "SEND from B to A"));
	TRY(want_send(&s.p.b, 4, IBV_WC_SEND, "SEND from B's parent domain"));

	/* A writes into B's region, then reads it back into its own. */
	buf_clear(&b_buf);
	pattern(a_buf.p, LEN, 3);
	TRY(post_rdma(&s.p.a, 5, IBV_WR_RDMA_WRITE, &a_buf, 0, &b_buf, 0, LEN, 0));
	TRY(cqx_expect(s.cqx, 5, IBV_WC_RDMA_WRITE, 0, "RDMA WRITE into a parent domain's MR"));
	TRY(check_buf(&b_buf, 0, a_buf.p, LEN, "RDMA WRITE from A to B"));
	buf_clear(&a_buf);
	pattern(b_buf.p, LEN, 4);
	TRY(post_rdma(&s.p.a, 6, IBV_WR_RDMA_READ, &a_buf, 0, &b_buf, 0, LEN, 0));
	TRY(cqx_expect(s.cqx, 6, IBV_WC_RDMA_READ, 0, "RDMA READ from a parent domain's MR"));
	TRY(check_buf(&a_buf, 0, b_buf.p, LEN, "RDMA READ by A from B"));

	CHECK(!allocs && !frees, "the parent domains' allocators were called %u and %u times",
	      allocs, frees);
	return 0;
}

/* Releasing the tracked PD, parent domain or thread domain @p fails with @want (0: works). */
static int expect_release(void *p, int want, const char *what)
{
	int err = release_early(p);

	CHECK(err == want, "%s: %s, expected %s", what, estr(err), estr(want));
	return 0;
}

/*
 * What holds what: a PD and a thread domain cannot go while a parent
 * domain names them, nor a parent domain while objects created in it
 * exist (EBUSY each time, nothing lost); what is not a PD of this
 * context is refused (EINVAL), an unknown attribute too (EOPNOTSUPP).
 * Then everything goes, in order.
 */
int case_parent_domain_busy(void)
{
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_pd *parent;
	struct ibv_cq_ex *cqx;
	struct ibv_td *td;
	struct buf b;
	struct dev d;

	d = devs[0];
	TRY(td_new(&d, &td));
	TRY(parent_new(&devs[0], td, &parent));
	d.pd = parent;
	TRY(cqx_new(&d, parent, &cqx));
	TRY(buf_new(&b, &d, 4096, IBV_ACCESS_LOCAL_WRITE));

	errno = 0;
	CHECK(!ibv_alloc_td(devs[0].ctx, &ta) && errno == EOPNOTSUPP,
	      "ibv_alloc_td with an unknown comp_mask bit: %s, expected EOPNOTSUPP",
	      errno ? strerror(errno) : "a thread domain");
	pa.pd = parent;
	errno = 0;
	CHECK(!ibv_alloc_parent_domain(devs[0].ctx, &pa) && errno == EINVAL,
	      "a parent domain of a parent domain: %s, expected EINVAL",
	      errno ? strerror(errno) : "allocated");
	pa.pd = devs[1].pd;
	errno = 0;
	CHECK(!ibv_alloc_parent_domain(devs[0].ctx, &pa) && errno == EINVAL,
	      "a parent domain of another context's PD: %s, expected EINVAL",
	      errno ? strerror(errno) : "allocated");
	ca.parent_domain = devs[0].pd;
	errno = 0;
	CHECK(!ibv_create_cq_ex(devs[0].ctx, &ca) && errno == EINVAL,
	      "a CQ whose parent domain is a plain PD: %s, expected EINVAL",
	      errno ? strerror(errno) : "created");

	TRY(expect_release(devs[0].pd, EBUSY, "the PD of a parent domain"));
	TRY(expect_release(td, EBUSY, "the thread domain of a parent domain"));
	TRY(expect_release(parent, EBUSY, "a parent domain with a CQ and an MR"));
	TRY(expect_release(ibv_cq_ex_to_cq(cqx), 0, "the CQ of a parent domain"));
	TRY(expect_release(parent, EBUSY, "a parent domain with an MR"));
	TRY(expect_release(b.mr, 0, "the MR of a parent domain"));
	TRY(expect_release(parent, 0, "a parent domain without objects"));
	return expect_release(td, 0, "a thread domain without parent domains");
}
