// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw.c - sroce_rc_test: the memory window cases.
 */

#include "rc.h"

/* --- cases: memory windows --------------------------------------------------- */

enum { MW_BUF = 8192, MW_OFF = 1024, MW_LEN = 4096 };

/* A type 2 window over [MW_OFF, MW_OFF + MW_LEN) of a victim's buffer. */
struct mw2 {
	struct buf vbuf;
	struct ibv_mw *mw;
	uint32_t rkey;		/* its key once bound */
	uint32_t x_qpn;		/* the number of the QP it was bound through */
};

static int mw2_bind(const struct ep *x, struct mw2 *m)
{
	struct ibv_send_wr wr = { .wr_id = 50, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct want w = w_ok(50, IBV_WC_BIND_MW, x);
	int err;

	m->rkey = ibv_inc_rkey(m->mw->rkey);
	wr.bind_mw.mw = m->mw;
	wr.bind_mw.rkey = m->rkey;
	wr.bind_mw.bind_info.mr = m->vbuf.mr;
	wr.bind_mw.bind_info.addr = addr_of(&m->vbuf, MW_OFF);
	wr.bind_mw.bind_info.length = MW_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	err = ibv_post_send(x->qp, &wr, &bad);
	CHECK(!err, "ibv_post_send(BIND_MW, type 2 window): %s", estr(err));
	return expect_wc(x->scq, &w, "binding a type 2 window");
}

/* @e's RDMA @op of the whole window, to or from @loc at 0. */
static int mw2_rdma(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		    const struct buf *loc, const struct mw2 *m)
{
	struct ibv_sge s = sge_of(loc, 0, MW_LEN);
	struct op o = { .op = op, .sg = &s, .nsge = 1, .raddr = addr_of(&m->vbuf, MW_OFF),
			.rkey = m->rkey };

	return post_op(e, wr_id, &o);
}

static int qp_reset(struct ep *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return qp_modify(e, &a, IBV_QP_STATE);
}

/* An intruder's QP on the victim's device that has @qpn, found within opt.qpn_wrap tries. */
static int mw2_take_qpn(struct ep *y, struct dev *d, uint32_t qpn, const struct qp_conf *c)
{
	int i, err;

	for (i = 0; i < opt.qpn_wrap; i++) {
		TRY(ep_create_on(y, d, 1, c));
		if (y->qp->qp_num == qpn) {
			vlog("intruder: QP number %u is back after %d creations", qpn, i + 1);
			return 0;
		}
		err = release_early(y->qp);
		CHECK(!err, "ibv_destroy_qp(intruder's QP %u): %s", y->qp->qp_num, estr(err));
	}
	return failf("QP number %u did not come back within %d creations (-Q)", qpn,
		     opt.qpn_wrap);
}

/*
 * With contexts and PDs of its own, an intruder gets the number of the QP
 * the window was bound through, connects it to a QP of its own, and tries
 * RDMA READ and WRITE through the window: both fail with a remote access
 * error.  The QPs allow remote reads and writes, so only the window's
 * check can refuse them.
 */
static int mw2_intrude(const struct mw2 *m)
{
	static struct dev in[2];
	struct peer_info to_y, to_z;
	struct qp_conf c;
	struct buf iloc;
	struct pair q;
	int s;

	for (s = 0; s < 2; s++)
		TRY(dev_open(&in[s], devs[s].name, devs[s].gidx));
	conf_init(&c);
	for (s = 0; s < 2; s++) {
		c.scq[s] = c.rcq[s] = cq_new(&in[s], c.cqe, NULL);
		if (!c.scq[s])
			return -1;
	}
	TRY(mw2_take_qpn(&q.b, &in[1], m->x_qpn, &c));
	TRY(ep_create_on(&q.a, &in[0], 0, &c));
	TRY(buf_new(&iloc, &in[0], MW_LEN, IBV_ACCESS_LOCAL_WRITE));
	to_y = info_of(&q.a);
	to_z = info_of(&q.b);
	TRY(ep_connect(&q.b, &to_y, &c));
	TRY(ep_connect(&q.a, &to_z, &c));
	TRY(mw2_rdma(&q.a, 1, IBV_WR_RDMA_READ, &iloc, m));
	TRY(want_err(&q.a, q.a.scq, 1, IBV_WC_REM_ACCESS_ERR,
		     "intruder's RDMA READ through the window of a destroyed QP"));
	TRY(check_fill(iloc.p, MW_LEN + GUARD, "intruder's RDMA READ through the window"));
	/* Both ends start over for the WRITE. */
	TRY(qp_reset(&q.a));
	TRY(qp_reset(&q.b));
	TRY(ep_connect(&q.b, &to_y, &c));
	TRY(ep_connect(&q.a, &to_z, &c));
	pattern(iloc.p, MW_LEN, 53);
	TRY(mw2_rdma(&q.a, 2, IBV_WR_RDMA_WRITE, &iloc, m));
	return want_err(&q.a, q.a.scq, 2, IBV_WC_REM_ACCESS_ERR,
			"intruder's RDMA WRITE through the window of a destroyed QP");
}

/*
 * A type 2 window serves only the QP it was bound through, and dies with
 * it.  The victim (B's context) binds a window over part of a patterned
 * buffer through its QP X; A's QP reads and writes through it; X is
 * destroyed.  With -Q (QP numbers on B's device come back within that many
 * creations, as with sroce's max_qpn lowered), an intruder takes X's
 * number and tries the window (mw2_intrude()), and the victim's memory
 * must be unchanged to the byte.  In every case the victim can then
 * deregister the region, which the window no longer holds, and deallocate
 * the window.  rxe (Linux 6.1) fails it: its bound type 2 window holds a
 * reference on the QP, and ibv_destroy_qp waited 50 s for it and then
 * WARNed in __rxe_cleanup (2026-11-26, the test guest panicked on it).
 */
int case_mw2_qp_gone(void)
{
	static uint8_t want[MW_BUF + GUARD];
	struct buf aloc;
	struct qp_conf c;
	struct mw2 m;
	struct pair p;
	int err;

	if (!(devs[1].attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B))
		return skipf("%s offers no type 2 memory windows", devs[1].name);
	conf_init(&c);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&m.vbuf, &devs[1], MW_BUF, mr_access_all() | IBV_ACCESS_MW_BIND));
	pattern(m.vbuf.p, MW_BUF, 51);
	m.mw = track(R_MW, ibv_alloc_mw(devs[1].pd, IBV_MW_TYPE_2));
	CHECK(m.mw, "ibv_alloc_mw(type 2): %s", strerror(errno));
	TRY(mw2_bind(&p.b, &m));
	TRY(buf_new(&aloc, &devs[0], MW_LEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(mw2_rdma(&p.a, 1, IBV_WR_RDMA_READ, &aloc, &m));
	TRY(want_send(&p.a, 1, IBV_WC_RDMA_READ, "RDMA READ through the window"));
	TRY(check_buf(&aloc, 0, m.vbuf.p + MW_OFF, MW_LEN, "RDMA READ through the window"));
	pattern(aloc.p, MW_LEN, 52);
	memcpy(want, m.vbuf.p, sizeof(want));
	memcpy(want + MW_OFF, aloc.p, MW_LEN);
	TRY(mw2_rdma(&p.a, 2, IBV_WR_RDMA_WRITE, &aloc, &m));
	TRY(want_send(&p.a, 2, IBV_WC_RDMA_WRITE, "RDMA WRITE through the window"));
	TRY(check_bytes(m.vbuf.p, want, sizeof(want), "RDMA WRITE through the window"));

	m.x_qpn = p.b.qp->qp_num;
	err = release_early(p.b.qp);
	CHECK(!err, "ibv_destroy_qp(QP %u, a type 2 window bound through it): %s", m.x_qpn,
	      estr(err));
	if (opt.qpn_wrap)
		TRY(mw2_intrude(&m));
	TRY(check_bytes(m.vbuf.p, want, sizeof(want), "the victim's memory"));
	err = release_early(m.vbuf.mr);
	CHECK(!err, "ibv_dereg_mr of the region under the window, its QP destroyed: %s",
	      estr(err));
	err = release_early(m.mw);
	CHECK(!err, "ibv_dealloc_mw of the window, its QP destroyed: %s", estr(err));
	return 0;
}
