// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc.c - sroce_rc_test: XRC.  Side A has an XRC send QP; side B an XRC
 * domain with two XRC SRQs, each with its own CQ and PD, and an XRC
 * receive QP.  Every request names its SRQ: SENDs and WRITEs with
 * immediate land in that SRQ's receive buffers and complete on that SRQ's
 * CQ, for B's receive QP; WRITEs, READs and atomics reach memory of that
 * SRQ's PD, and only that PD.  Every byte is checked, with the bytes
 * around it, and every completion.  The error cases: an SRQ number nobody
 * has, an SRQ of another XRC domain, an SRQ destroyed, memory of another
 * PD than the SRQ's; an SRQ number wider than 24 bits; receives posted to
 * the receive QP; a domain closed while in use.
 */

#include <fcntl.h>

#include "rc.h"

enum { NSRQ = 2, XLEN = 3 * 4096 + 100 };

/* B's side: the domain, its SRQs, their CQs and PDs, the receive QP. */
struct xtgt {
	struct ibv_xrcd *xrcd;
	struct ibv_pd *pd[NSRQ];
	struct ibv_cq *cq[NSRQ];
	struct ibv_srq *srq[NSRQ];
	uint32_t srqn[NSRQ];
	struct ep rq;		/* the XRC receive QP, d = devs[1] */
};

static int need_xrc(void)
{
	if (!(devs[0].attr.device_cap_flags & IBV_DEVICE_XRC) ||
	    !(devs[1].attr.device_cap_flags & IBV_DEVICE_XRC))
		return skipf("no XRC (IBV_DEVICE_XRC)");
	return 0;
}

static int xrcd_new(struct dev *d, struct ibv_xrcd **xrcd)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	*xrcd = track(R_XRCD, ibv_open_xrcd(d->ctx, &a));
	CHECK(*xrcd, "ibv_open_xrcd(%s): %s", d->name, strerror(errno));
	return 0;
}

static int xsrq_new(struct dev *d, struct ibv_xrcd *xrcd, struct ibv_pd *pd, struct ibv_cq *cq,
		    struct ibv_srq **srq, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};
	int err;

	*srq = track(R_SRQ, ibv_create_srq_ex(d->ctx, &a));
	CHECK(*srq, "ibv_create_srq_ex(%s, XRC): %s", d->name, strerror(errno));
	err = ibv_get_srq_num(*srq, srqn);
	CHECK(!err, "ibv_get_srq_num: %s", estr(err));
	return 0;
}

/* A's XRC send QP, with its send CQ, in RESET. */
static int xini_new(struct ep *e, const struct qp_conf *c)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = devs[0].pd,
		.cap = { .max_send_wr = c->cap.max_send_wr, .max_send_sge = 1 },
	};

	memset(e, 0, sizeof(*e));
	e->d = &devs[0];
	e->psn = c->psn_a;
	e->scq = cq_new(e->d, c->cqe, NULL);
	if (!e->scq)
		return -1;
	a.send_cq = e->scq;
	e->qp = track(R_QP, ibv_create_qp_ex(e->d->ctx, &a));
	CHECK(e->qp, "ibv_create_qp_ex(%s, XRC_SEND): %s", e->d->name, strerror(errno));
	return 0;
}

/* B's domain, SRQs (SRQ i in PD i: the device's, then a new one) and receive QP. */
static int xtgt_new(struct xtgt *t, const struct qp_conf *c)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct dev *d = &devs[1];
	int i;

	memset(t, 0, sizeof(*t));
	TRY(xrcd_new(d, &t->xrcd));
	t->pd[0] = d->pd;
	t->pd[1] = track(R_PD, ibv_alloc_pd(d->ctx));
	CHECK(t->pd[1], "ibv_alloc_pd(%s): %s", d->name, strerror(errno));
	for (i = 0; i < NSRQ; i++) {
		t->cq[i] = cq_new(d, c->cqe, NULL);
		if (!t->cq[i])
			return -1;
		TRY(xsrq_new(d, t->xrcd, t->pd[i], t->cq[i], &t->srq[i], &t->srqn[i]));
	}
	CHECK(t->srqn[0] != t->srqn[1], "two XRC SRQs, one number (%u)", t->srqn[0]);
	a.xrcd = t->xrcd;
	t->rq.d = d;
	t->rq.psn = c->psn_b;
	t->rq.qp = track(R_QP, ibv_create_qp_ex(d->ctx, &a));
	CHECK(t->rq.qp, "ibv_create_qp_ex(%s, XRC_RECV): %s", d->name, strerror(errno));
	return 0;
}

/* The send QP to RTS aimed at the receive QP, which goes to RTR. */
static int xconnect(struct ep *ini, struct xtgt *t, const struct qp_conf *c)
{
	struct peer_info to_ini = info_of(ini), to_tgt = info_of(&t->rq);
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu,
		.dest_qp_num = to_tgt.qpn,
		.rq_psn = to_tgt.psn,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = { .dgid = to_tgt.gid, .sgid_index = (uint8_t)ini->d->gidx,
				 .hop_limit = 64 },
		},
	};

	TRY(qp_to_init(&t->rq, c));
	TRY(qp_to_rtr(&t->rq, &to_ini, c));
	TRY(qp_to_init(ini, c));
	/* An initiator receives nothing: no responder attributes. */
	TRY(qp_modify(ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		      IBV_QP_RQ_PSN));
	TRY(qp_to_rts(ini, c));
	vlog("XRC: A QP %u -> B QP %u, SRQs %u and %u", ini->qp->qp_num, t->rq.qp->qp_num,
	     t->srqn[0], t->srqn[1]);
	return 0;
}

static int xup(struct ep *ini, struct xtgt *t, struct qp_conf *c)
{
	TRY(need_xrc());
	conf_init(c);
	TRY(xini_new(ini, c));
	TRY(xtgt_new(t, c));
	return xconnect(ini, t, c);
}

/* A buffer on B registered in @pd. */
static int buf_in_pd(struct buf *b, struct ibv_pd *pd, size_t len, unsigned int access)
{
	return buf_reg_in(b, &devs[1], pd, len, len + GUARD, access);
}

static int srq_recv(struct ibv_srq *srq, uint64_t wr_id, const struct buf *b, size_t len)
{
	struct ibv_sge s = sge_of(b, 0, len);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad = NULL;
	int err = ibv_post_srq_recv(srq, &wr, &bad);

	CHECK(!err, "ibv_post_srq_recv(wr_id %llu): %s", (unsigned long long)wr_id, estr(err));
	return 0;
}

/* A request of @ini for SRQ @srqn; the op's fields as post_op() takes them. */
static int xpost(const struct ep *ini, uint64_t wr_id, struct op *o, uint32_t srqn)
{
	o->srqn = srqn;
	return post_op(ini, wr_id, o);
}

/* A receive completion of B's receive QP on @cq. */
static int want_xrecv(struct xtgt *t, struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op,
		      uint32_t len, int imm, uint32_t imm_data, const char *what)
{
	struct want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			  .qp_num = t->rq.qp->qp_num, .byte_len = len, .imm = imm,
			  .imm_data = imm_data };

	return expect_wc(cq, &w, what);
}

/* SENDs to each SRQ: its buffer, its CQ; nothing on the other. */
static int xsends(struct ep *a, struct xtgt *t, struct buf *src, struct buf rb[NSRQ])
{
	struct ibv_sge s;
	struct op o;
	int i;

	for (i = 0; i < NSRQ; i++) {
		pattern(src->p, XLEN, 10 + i);
		buf_clear(&rb[i]);
		TRY(srq_recv(t->srq[i], 100 + i, &rb[i], XLEN));
		s = sge_of(src, 0, XLEN);
		o = (struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 };
		TRY(xpost(a, 1 + i, &o, t->srqn[i]));
		TRY(want_send(a, 1 + i, IBV_WC_SEND, "XRC SEND"));
		TRY(want_xrecv(t, t->cq[i], 100 + i, IBV_WC_RECV, XLEN, 0, 0,
			       "XRC SEND: the named SRQ's receive, on its CQ"));
		TRY(check_buf(&rb[i], 0, src->p, XLEN, "XRC SEND: the named SRQ's buffer"));
		TRY(expect_empty(t->cq[1 - i], 50, "XRC SEND: the other SRQ's CQ"));
	}
	/* A SEND with immediate data to SRQ 1, which takes it from SRQ 1. */
	pattern(src->p, 100, 77);
	buf_clear(&rb[1]);
	TRY(srq_recv(t->srq[1], 200, &rb[1], XLEN));
	s = sge_of(src, 0, 100);
	o = (struct op){ .op = IBV_WR_SEND_WITH_IMM, .sg = &s, .nsge = 1, .imm = htonl(0xabcd) };
	TRY(xpost(a, 3, &o, t->srqn[1]));
	TRY(want_send(a, 3, IBV_WC_SEND, "XRC SEND with immediate"));
	TRY(want_xrecv(t, t->cq[1], 200, IBV_WC_RECV, 100, 1, htonl(0xabcd),
		       "XRC SEND with immediate"));
	return check_buf(&rb[1], 0, src->p, 100, "XRC SEND with immediate");
}

/* WRITE, WRITE with immediate and READ into memory of SRQ 1's PD. */
static int xrdma(struct ep *a, struct xtgt *t, struct buf *src, struct buf *loc, struct buf *rem,
		 struct buf *rb)
{
	struct ibv_sge s;
	struct op o;

	pattern(src->p, XLEN, 20);
	buf_clear(rem);
	s = sge_of(src, 0, XLEN);
	o = (struct op){ .op = IBV_WR_RDMA_WRITE, .sg = &s, .nsge = 1,
			 .raddr = addr_of(rem, 5), .rkey = rem->mr->rkey };
	TRY(xpost(a, 10, &o, t->srqn[1]));
	TRY(want_send(a, 10, IBV_WC_RDMA_WRITE, "XRC RDMA WRITE"));
	TRY(check_buf(rem, 5, src->p, XLEN, "XRC RDMA WRITE"));
	TRY(expect_empty(t->cq[1], 50, "XRC RDMA WRITE: no receive consumed"));

	pattern(src->p, 1000, 21);
	buf_clear(rem);
	buf_clear(rb);
	TRY(srq_recv(t->srq[1], 300, rb, 64));
	s = sge_of(src, 0, 1000);
	o = (struct op){ .op = IBV_WR_RDMA_WRITE_WITH_IMM, .sg = &s, .nsge = 1, .imm = htonl(7),
			 .raddr = addr_of(rem, 0), .rkey = rem->mr->rkey };
	TRY(xpost(a, 11, &o, t->srqn[1]));
	TRY(want_send(a, 11, IBV_WC_RDMA_WRITE, "XRC RDMA WRITE with immediate"));
	TRY(want_xrecv(t, t->cq[1], 300, IBV_WC_RECV_RDMA_WITH_IMM, 1000, 1, htonl(7),
		       "XRC RDMA WRITE with immediate"));
	TRY(check_buf(rem, 0, src->p, 1000, "XRC RDMA WRITE with immediate"));
	TRY(check_fill(rb->p, 64 + GUARD, "XRC RDMA WRITE with immediate: the receive buffer"));

	pattern(rem->p + 3, XLEN, 22);
	buf_clear(loc);
	s = sge_of(loc, 0, XLEN);
	o = (struct op){ .op = IBV_WR_RDMA_READ, .sg = &s, .nsge = 1,
			 .raddr = addr_of(rem, 3), .rkey = rem->mr->rkey };
	TRY(xpost(a, 12, &o, t->srqn[1]));
	TRY(want_send(a, 12, IBV_WC_RDMA_READ, "XRC RDMA READ"));
	return check_buf(loc, 0, rem->p + 3, XLEN, "XRC RDMA READ");
}

/* Compare-and-swap and fetch-and-add on a word of SRQ 0's PD. */
static int xatomics(struct ep *a, struct xtgt *t, struct buf *loc, struct buf *rem)
{
	const uint64_t v0 = 0x0102030405060708ull, v1 = 0x1111222233334444ull;
	struct ibv_sge s;
	struct op o;

	if (!has_atomics())
		return skipf("no atomics (atomic_cap)");
	buf_clear(rem);
	store64(rem->p + 8, v0);
	buf_clear(loc);
	s = sge_of(loc, 0, 8);
	o = (struct op){ .op = IBV_WR_ATOMIC_CMP_AND_SWP, .sg = &s, .nsge = 1,
			 .raddr = addr_of(rem, 8), .rkey = rem->mr->rkey, .cmp = v0, .swp = v1 };
	TRY(xpost(a, 20, &o, t->srqn[0]));
	TRY(want_send(a, 20, IBV_WC_COMP_SWAP, "XRC compare-and-swap"));
	TRY(check_result(loc, 0, v0, "XRC compare-and-swap"));
	CHECK(load64(rem->p + 8) == v1, "XRC compare-and-swap: the word is 0x%llx, not 0x%llx",
	      (unsigned long long)load64(rem->p + 8), (unsigned long long)v1);
	s = sge_of(loc, 8, 8);
	o = (struct op){ .op = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg = &s, .nsge = 1,
			 .raddr = addr_of(rem, 8), .rkey = rem->mr->rkey, .cmp = 5 };
	TRY(xpost(a, 21, &o, t->srqn[0]));
	TRY(want_send(a, 21, IBV_WC_FETCH_ADD, "XRC fetch-and-add"));
	TRY(check_result(loc, 1, v1, "XRC fetch-and-add"));
	CHECK(load64(rem->p + 8) == v1 + 5, "XRC fetch-and-add: the word is 0x%llx",
	      (unsigned long long)load64(rem->p + 8));
	return check_fill(rem->p, 8, "XRC atomics: the bytes before the word");
}

/* SENDs, WRITEs, READs and atomics over XRC, every byte checked. */
int case_xrc(void)
{
	struct buf src, loc, rb[NSRQ], rem0, rem1, rb1;
	struct qp_conf c;
	struct xtgt t;
	struct ep a;
	int i;

	TRY(xup(&a, &t, &c));
	TRY(buf_new(&src, &devs[0], XLEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&loc, &devs[0], XLEN, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < NSRQ; i++)
		TRY(buf_in_pd(&rb[i], t.pd[i], XLEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_in_pd(&rb1, t.pd[1], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_in_pd(&rem0, t.pd[0], 64, mr_access_all()));
	TRY(buf_in_pd(&rem1, t.pd[1], XLEN + 8, mr_access_all()));
	TRY(xsends(&a, &t, &src, rb));
	TRY(xrdma(&a, &t, &src, &loc, &rem1, &rb1));
	return xatomics(&a, &t, &loc, &rem0);
}

/*
 * One request of a new pair that B must refuse: A's work request completes
 * with @st, B's receive QP goes to ERR and nothing reaches @cq.
 */
static int xrefused(const char *what, enum ibv_wc_status st, uint32_t srqn_add,
		    bool other_pd, bool other_domain, bool destroyed)
{
	struct xtgt t, t2;
	struct buf src, rem, rb;
	struct ibv_sge s;
	struct qp_conf c;
	uint32_t srqn;
	struct ep a;
	struct op o;

	TRY(xup(&a, &t, &c));
	TRY(buf_new(&src, &devs[0], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_in_pd(&rb, t.pd[0], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_in_pd(&rem, t.pd[other_pd ? 1 : 0], 64, mr_access_all()));
	TRY(srq_recv(t.srq[0], 100, &rb, 64));
	srqn = t.srqn[0] + srqn_add;
	if (other_domain) {
		TRY(xtgt_new(&t2, &c));
		srqn = t2.srqn[0];
	}
	if (destroyed) {
		srqn = t.srqn[1];
		CHECK(!release_early(t.srq[1]), "ibv_destroy_srq (an unused XRC SRQ) failed");
	}
	pattern(src.p, 64, 1);
	s = sge_of(&src, 0, 64);
	if (other_pd)
		o = (struct op){ .op = IBV_WR_RDMA_WRITE, .sg = &s, .nsge = 1,
				 .raddr = addr_of(&rem, 0), .rkey = rem.mr->rkey };
	else
		o = (struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 };
	TRY(xpost(&a, 1, &o, srqn));
	TRY(want_err(&a, a.scq, 1, st, what));
	TRY(expect_state(&t.rq, IBV_QPS_ERR, what));
	TRY(expect_empty(t.cq[0], 50, what));
	TRY(check_fill(rb.p, 64 + GUARD, what));
	return check_fill(rem.p, 64 + GUARD, what);
}

/* What B refuses, and what the verbs refuse. */
int case_xrc_errors(void)
{
	struct ibv_recv_wr wr = { .wr_id = 1 }, *bad = NULL;
	struct qp_conf c;
	struct ibv_sge s;
	struct xtgt t;
	struct buf src;
	struct op o;
	struct ep a;
	int err;

	TRY(xrefused("XRC SEND to an SRQ number nobody has", IBV_WC_REM_INV_REQ_ERR, 1000,
		     false, false, false));
	TRY(xrefused("XRC SEND to an SRQ of another XRC domain", IBV_WC_REM_INV_REQ_ERR, 0,
		     false, true, false));
	TRY(xrefused("XRC SEND to a destroyed SRQ", IBV_WC_REM_INV_REQ_ERR, 0, false, false,
		     true));
	TRY(xrefused("XRC WRITE to memory of another PD than the SRQ's", IBV_WC_REM_ACCESS_ERR, 0,
		     true, false, false));

	/* No XRCETH holds it: refused before anything is sent. */
	TRY(xup(&a, &t, &c));
	TRY(buf_new(&src, &devs[0], 8, IBV_ACCESS_LOCAL_WRITE));
	s = sge_of(&src, 0, 8);
	o = (struct op){ .op = IBV_WR_SEND, .sg = &s, .nsge = 1 };
	TRY(xpost(&a, 1, &o, 1u << 24));
	TRY(want_err(&a, a.scq, 1, IBV_WC_LOC_QP_OP_ERR, "XRC SEND to SRQ number 2^24"));
	TRY(expect_empty(t.cq[0], 50, "XRC SEND to SRQ number 2^24"));

	TRY(xup(&a, &t, &c));
	err = ibv_post_recv(t.rq.qp, &wr, &bad);
	CHECK(err, "ibv_post_recv on an XRC receive QP succeeded");
	err = ibv_close_xrcd(t.xrcd);
	CHECK(err == EBUSY, "ibv_close_xrcd of a domain with SRQs and a QP: %s, not EBUSY",
	      estr(err));
	return 0;
}
