// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring.c - sroce_misuse: ring cases, corrupt indices and WQEs in the
 * rings the process shares with the kernel.
 */

#include "misuse.h"

/* ==== ring cases ==================================================================== */

/* Producer index far past the ring. */
void r_sq_prod_huge(void)
{
	struct world w;

	world_open(&w, QPT_RC);
	set_prod(&w.a.sq, w.a.sq.n + 5);
	expect("doorbell", sq_doorbell(&w.x, w.a.handle), 0);
	if (!qp_wait_state(&w.x, w.a.handle, QPS_ERR, 20000))
		bad("QP not in ERR after an impossible producer index");
	if (!async_wait(&w.x, EV_QP_FATAL, 10000))
		bad("no QP_FATAL event");
	/* the other QP of the process is unaffected */
	if (qp_state(&w.x, w.b.handle) != QPS_RTS)
		bad("the peer QP changed state");
	world_close(&w);
}

/*
 * The producer index moved backwards, behind WQEs the kernel already took
 * (they wait for an ACK that cannot come: the peer is a QP number nobody
 * has).
 */
void r_sq_prod_backwards(void)
{
	struct world w;
	struct sroce_sge s;
	struct sroce_send_wqe sw = send_wqe(1);
	int i;

	world_open(&w, QPT_RC);
	/* a goes to a QP number nobody has: its sends stay outstanding */
	expect("to ERR", qp_set_state(&w.x, w.a.handle, QPS_ERR), 0);
	expect("to RESET", qp_set_state(&w.x, w.a.handle, QPS_RESET), 0);
	w.a.sq.mine = 0;
	rhdr(&w.a.sq)->producer = 0;
	w.ca.ring.mine = rhdr(&w.ca.ring)->producer;
	set_cons(&w.ca.ring, w.ca.ring.mine);
	/* the kernel's consumer caught up with our producer on RESET */
	w.a.sq.mine = rhdr(&w.a.sq)->consumer;
	set_prod(&w.a.sq, w.a.sq.mine);
	qp_connect(&w.x, &w.a, 0xabcde, 18);
	s = sge_of(&w, 0, 64);
	sw.num_sge = 1;
	for (i = 0; i < 4; i++) {
		sw.wr_id = 100 + (uint64_t)i;
		sq_put(&w.a, &sw, &s, 1);
	}
	expect("doorbell", sq_doorbell(&w.x, w.a.handle), 0);
	usleep(200000);
	/* now two back: behind what the kernel already fetched */
	set_prod(&w.a.sq, w.a.sq.mine - 2);
	expect("doorbell after the producer went back", sq_doorbell(&w.x, w.a.handle), 0);
	if (!qp_wait_state(&w.x, w.a.handle, QPS_ERR, 20000))
		bad("QP not in ERR after the producer index went backwards (state %d)",
		    qp_state(&w.x, w.a.handle));
	world_close(&w);
}

/* One bad WQE; each must fail the QP with the given status. */
struct bad_wqe {
	const char *name;
	int status;
	void (*make)(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		     uint32_t *nsge, uint8_t *slot_tail);
};

static void bw_opcode(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		      uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->opcode = 0xff;
}

/* REG_MR (a kernel-only opcode) */
static void bw_opcode_reg_mr(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			     uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->opcode = 0x20;	/* IB_WR_REG_MR in the kernel's numbering */
}

static void bw_num_sge(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		       uint32_t *n, uint8_t *t)
{
	(void)t;
	sg[0] = sge_of(w, 0, 8);
	sw->num_sge = w->a.max_send_sge + 1;
	*n = 1;
}

static void bw_num_sge_huge(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			    uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->num_sge = 0xffffffffu;
}

static void bw_lkey(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		    uint32_t *n, uint8_t *t)
{
	(void)t;
	sg[0] = sge_of(w, 0, 8);
	sg[0].lkey = 0xdeadbe00;
	sw->num_sge = 1;
	*n = 1;
}

/* L_Key 0 is the kernel's local DMA key: never a process's */
static void bw_lkey0(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		     uint32_t *n, uint8_t *t)
{
	(void)t; (void)w;
	sg[0].addr = KERNEL_ADDR;
	sg[0].length = 64;
	sg[0].lkey = 0;
	sw->num_sge = 1;
	*n = 1;
}

static void bw_length(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		      uint32_t *n, uint8_t *t)
{
	(void)t;
	sg[0] = sge_of(w, BUF_SIZE - 8, 64);
	sw->num_sge = 1;
	*n = 1;
}

static void bw_length_huge(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			   uint32_t *n, uint8_t *t)
{
	(void)t;
	sg[0] = sge_of(w, 0, 0xffffffffu);
	sg[1] = sge_of(w, 0, 0xffffffffu);
	sw->num_sge = 2;
	*n = 2;
}

static void bw_wrap(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		    uint32_t *n, uint8_t *t)
{
	(void)t;
	sg[0] = sge_of(w, 0, 64);
	sg[0].addr = ~0ull - 15;
	sw->num_sge = 1;
	*n = 1;
}

static void bw_inline(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		      uint32_t *n, uint8_t *t)
{
	(void)sg; (void)n; (void)t;
	sw->send_flags |= SROCE_SEND_INLINE;
	sw->inline_len = w->a.max_inline + 1;
}

static void bw_inline_huge(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			   uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->send_flags |= SROCE_SEND_INLINE;
	sw->inline_len = 0xfffffff0u;
}

static void bw_inline_and_sge(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			      uint32_t *n, uint8_t *t)
{
	(void)t;
	sw->send_flags |= SROCE_SEND_INLINE;
	sw->inline_len = 8;
	sg[0] = sge_of(w, 0, 8);
	sw->num_sge = 1;
	*n = 1;
}

static void bw_flags(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		     uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->send_flags |= 1u << 20;
}

static void bw_xrc_srqn_on_rc(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			uint32_t *n, uint8_t *t)
{
	(void)w; (void)sg; (void)n; (void)t;
	sw->xrc_remote_srqn = 1;	/* on an RC QP */
}

static void bw_atomic_len(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			  uint32_t *n, uint8_t *t)
{
	(void)t;
	sw->opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	sw->wr.atomic.remote_addr = (uintptr_t)w->buf;
	sw->wr.atomic.rkey = w->mr.rkey;
	sg[0] = sge_of(w, 0, 4096);
	sw->num_sge = 1;
	*n = 1;
}

static void bw_local_inv_data(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
			      uint32_t *n, uint8_t *t)
{
	(void)t;
	sw->opcode = IB_UVERBS_WR_LOCAL_INV;
	sw->invalidate_rkey = w->mr.rkey;
	sg[0] = sge_of(w, 0, 8);
	sw->num_sge = 1;
	*n = 1;
}

/* An ATOMIC WRITE's 8 bytes travel in the WQE: an SGE is not its data. */
static void bw_atomic_write_sge(struct world *w, struct sroce_send_wqe *sw,
				struct sroce_sge *sg, uint32_t *n, uint8_t *t)
{
	(void)t;
	sw->opcode = SROCE_WR_ATOMIC_WRITE;
	sw->wr.atomic_write.remote_addr = (uintptr_t)w->buf;
	sw->wr.atomic_write.rkey = w->mr.rkey;
	sg[0] = sge_of(w, 0, 8);
	sw->num_sge = 1;
	*n = 1;
}

static void bw_atomic_write_inline(struct world *w, struct sroce_send_wqe *sw,
				   struct sroce_sge *sg, uint32_t *n, uint8_t *t)
{
	(void)sg; (void)n; (void)t;
	sw->opcode = SROCE_WR_ATOMIC_WRITE;
	sw->wr.atomic_write.remote_addr = (uintptr_t)w->buf;
	sw->wr.atomic_write.rkey = w->mr.rkey;
	sw->send_flags |= SROCE_SEND_INLINE;
	sw->inline_len = 8;
}

static void bw_atomic_write_reserved(struct world *w, struct sroce_send_wqe *sw,
				     struct sroce_sge *sg, uint32_t *n, uint8_t *t)
{
	(void)sg; (void)n; (void)t;
	sw->opcode = SROCE_WR_ATOMIC_WRITE;
	sw->wr.atomic_write.remote_addr = (uintptr_t)w->buf;
	sw->wr.atomic_write.rkey = w->mr.rkey;
	sw->wr.atomic_write.reserved = 1;
}

static void bw_garbage(struct world *w, struct sroce_send_wqe *sw, struct sroce_sge *sg,
		       uint32_t *n, uint8_t *t)
{
	uint64_t wr_id = sw->wr_id;
	uint8_t *p = (uint8_t *)sw;
	size_t i;

	(void)w; (void)sg; (void)n; (void)t;
	for (i = 0; i < sizeof(*sw); i++)
		p[i] = (uint8_t)rand();
	sw->wr_id = wr_id;
	sw->opcode |= 0x1000;	/* at least one field certainly wrong */
	sw->send_flags |= SROCE_SEND_SIGNALED;
}

static const struct bad_wqe bad_wqes[] = {
	{ "opcode 0xff", WC_LOC_QP_OP_ERR, bw_opcode },
	{ "REG_MR (kernel only)", WC_LOC_QP_OP_ERR, bw_opcode_reg_mr },
	{ "num_sge max + 1", WC_LOC_QP_OP_ERR, bw_num_sge },
	{ "num_sge -1", WC_LOC_QP_OP_ERR, bw_num_sge_huge },
	{ "unknown lkey", WC_LOC_PROT_ERR, bw_lkey },
	{ "lkey 0 on a kernel address", WC_LOC_PROT_ERR, bw_lkey0 },
	{ "SGE past its region", WC_LOC_PROT_ERR, bw_length },
	{ "two 4 GiB SGEs", WC_LOC_QP_OP_ERR, bw_length_huge },
	{ "SGE wrapping the address space", WC_LOC_PROT_ERR, bw_wrap },
	{ "inline data past max_inline", WC_LOC_QP_OP_ERR, bw_inline },
	{ "inline_len 2^32 - 16", WC_LOC_QP_OP_ERR, bw_inline_huge },
	{ "inline data and SGEs", WC_LOC_QP_OP_ERR, bw_inline_and_sge },
	{ "unknown send flag", WC_LOC_QP_OP_ERR, bw_flags },
	{ "XRC SRQ number on an RC QP", WC_LOC_QP_OP_ERR, bw_xrc_srqn_on_rc },
	{ "atomic of 4096 bytes", WC_LOC_QP_OP_ERR, bw_atomic_len },
	{ "LOCAL_INV with data", WC_LOC_QP_OP_ERR, bw_local_inv_data },
	{ "ATOMIC WRITE with an SGE", WC_LOC_QP_OP_ERR, bw_atomic_write_sge },
	{ "ATOMIC WRITE with inline data", WC_LOC_QP_OP_ERR, bw_atomic_write_inline },
	{ "ATOMIC WRITE with reserved set", WC_LOC_QP_OP_ERR, bw_atomic_write_reserved },
	{ "garbage header", WC_LOC_QP_OP_ERR, bw_garbage },
};

/* Every bad WQE on a fresh RC pair: error completion, QP in ERR, event. */
void r_bad_send_wqes(void)
{
	size_t k;

	for (k = 0; k < sizeof(bad_wqes) / sizeof(bad_wqes[0]); k++) {
		const struct bad_wqe *b = &bad_wqes[k];
		struct sroce_sge sg[4] = {};
		struct sroce_send_wqe sw = send_wqe(0xbad0 + k);
		uint8_t tail[8];
		uint32_t n = 0;
		struct world w;
		struct ib_uverbs_wc wc;
		int got;

		world_open(&w, QPT_RC);
		/* one good SEND first: the QP works until the bad WQE */
		if (!world_send_ok(&w, 100, 1))
			bad("%s: the good send before it failed", b->name);
		b->make(&w, &sw, sg, &n, tail);
		sq_put(&w.a, &sw, sg, n);
		/* a good WQE behind it is flushed, not run */
		sw = send_wqe(0x600d);
		sg[0] = sge_of(&w, 0, 8);
		sw.num_sge = 1;
		sq_put(&w.a, &sw, sg, 1);
		expect(b->name, sq_doorbell(&w.x, w.a.handle), 0);
		got = cq_wait(&w.ca, 0xbad0 + k, 20000);
		if (got != b->status)
			bad("%s: completion status %d, expected %d", b->name, got, b->status);
		if (!qp_wait_state(&w.x, w.a.handle, QPS_ERR, 20000))
			bad("%s: QP not in ERR", b->name);
		got = cq_wait(&w.ca, 0x600d, 20000);
		if (got != WC_WR_FLUSH_ERR)
			bad("%s: the WQE behind it completed with %d, not flushed",
			    b->name, got);
		/* no stray receive completion at the peer */
		if (cq_poll(&w.cb, &wc, 50) && wc.status == WC_SUCCESS)
			bad("%s: the peer received something", b->name);
		world_close(&w);
		if (case_failed)
			return;
	}
}

/* UD send WQEs naming an AH that is not there, or not the QP's PD's. */
void r_ud_bad_ah(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), pd2 = pd_new(&x), ah, num, ah2, num2;
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct mr mr = mr_new(&x, pd, buf, sizeof(buf));
	struct cq cq = cq_new(&x, 64);
	struct qp qp;
	struct sroce_send_wqe sw;
	struct sroce_sge s = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr.lkey };
	uint32_t tries[3];
	int k, got;

	if (ah_create(&x, pd, (uint8_t)gid_index, 1, 1, &ah, &num) ||
	    ah_create(&x, pd2, (uint8_t)gid_index, 1, 1, &ah2, &num2))
		setup_die("CREATE_AH");
	expect("DESTROY_AH", ah_destroy(&x, ah), 0);
	tries[0] = num;		/* destroyed */
	tries[1] = 0xdead;	/* never existed */
	tries[2] = num2;	/* another PD's */
	for (k = 0; k < 3; k++) {
		qp = qp_new(&x, QPT_UD, pd, cq.handle, cq.handle, -1);
		qp_connect(&x, &qp, 0, 0);
		sw = send_wqe(0xa0 + (uint64_t)k);
		sw.num_sge = 1;
		sw.wr.ud.ah_num = tries[k];
		sw.wr.ud.remote_qpn = qp.qpn;
		sw.wr.ud.remote_qkey = 0x11111111;
		sq_put(&qp, &sw, &s, 1);
		expect("doorbell", sq_doorbell(&x, qp.handle), 0);
		got = cq_wait(&cq, 0xa0 + (uint64_t)k, 20000);
		if (got != WC_LOC_QP_OP_ERR)
			bad("AH try %d: status %d, expected LOC_QP_OP_ERR", k, got);
		if (!qp_wait_state(&x, qp.handle, QPS_ERR, 20000))
			bad("AH try %d: QP not in ERR", k);
		expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	}
	ctx_close(&x);
}

/* Receive WQEs that are bad when a message comes for them. */
void r_bad_recv_wqes(void)
{
	int k;

	for (k = 0; k < 5; k++) {
		struct world w;
		struct sroce_sge s, r[4];
		struct sroce_send_wqe sw = send_wqe(0x5e0 + (uint64_t)k);
		struct sroce_recv_wqe rw = { .wr_id = 0x4ec0 + (uint64_t)k, .num_sge = 1 };
		int got, want = WC_LOC_QP_OP_ERR;
		const char *what[] = { "num_sge max + 1", "reserved set", "unknown lkey",
				       "SGE past its region", "producer past the ring" };

		world_open(&w, QPT_RC);
		r[0] = sge_of(&w, 32768, 64);
		switch (k) {
		case 0: rw.num_sge = w.b.max_recv_sge + 1; break;
		case 1: rw.reserved = 1; break;
		case 2: r[0].lkey = 0x77777700; want = WC_LOC_PROT_ERR; break;
		case 3: r[0].addr = (uintptr_t)w.buf + BUF_SIZE - 16; want = WC_LOC_PROT_ERR; break;
		default: break;
		}
		memcpy(rslot(&w.b.rq, 0), &rw, sizeof(rw));
		memcpy((uint8_t *)rslot(&w.b.rq, 0) + sizeof(rw), r, sizeof(r[0]));
		set_prod(&w.b.rq, k == 4 ? w.b.rq.n * 3 : 1);
		s = sge_of(&w, 0, 64);
		sw.num_sge = 1;
		sq_put(&w.a, &sw, &s, 1);
		expect("doorbell", sq_doorbell(&w.x, w.a.handle), 0);
		if (k < 4) {
			got = cq_wait(&w.cb, rw.wr_id, 20000);
			if (got != want)
				bad("receive %s: status %d, expected %d", what[k], got, want);
		}
		if (!qp_wait_state(&w.x, w.b.handle, QPS_ERR, 20000))
			bad("receive %s: the receiving QP not in ERR", what[k]);
		got = cq_wait(&w.ca, sw.wr_id, 20000);
		if (got == WC_SUCCESS || got < 0)
			bad("receive %s: the sender's completion %d", what[k], got);
		world_close(&w);
	}
}

/* An SRQ ring full of garbage; a UD message comes for it. */
void r_srq_garbage(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), ah, num, i;
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct mr mr = mr_new(&x, pd, buf, sizeof(buf));
	struct cq cq = cq_new(&x, 64), cq2 = cq_new(&x, 64);
	struct srq srq = srq_new(&x, pd);
	struct qp rx = qp_new(&x, QPT_UD, pd, cq.handle, cq.handle, srq.handle);
	struct qp tx = qp_new(&x, QPT_UD, pd, cq2.handle, cq2.handle, -1);
	struct sroce_send_wqe sw = send_wqe(0x77);
	struct sroce_sge s = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr.lkey };
	struct ib_uverbs_wc wc;
	bool err_seen = false;

	qp_connect(&x, &rx, 0, 0);
	qp_connect(&x, &tx, 0, 0);
	if (ah_create(&x, pd, (uint8_t)gid_index, 1, 1, &ah, &num))
		setup_die("CREATE_AH");
	for (i = 0; i < srq.ring.size - SROCE_RING_DATA_OFFSET; i++)
		srq.ring.base[SROCE_RING_DATA_OFFSET + i] = (uint8_t)rand();
	for (i = 0; i < srq.ring.n; i++)
		((struct sroce_recv_wqe *)rslot(&srq.ring, i))->reserved = 1;
	set_prod(&srq.ring, srq.ring.n);
	sw.num_sge = 1;
	sw.wr.ud.ah_num = num;
	sw.wr.ud.remote_qpn = rx.qpn;
	sw.wr.ud.remote_qkey = 0x11111111;
	for (i = 0; i < 4; i++)
		sq_put(&tx, &sw, &s, 1);
	expect("doorbell", sq_doorbell(&x, tx.handle), 0);
	for (i = 0; i < 4; i++)
		if (cq_wait(&cq2, 0x77, 20000) != WC_SUCCESS)
			bad("UD send %u did not complete", i);
	while (cq_poll(&cq, &wc, 2000))
		if (wc.status == WC_SUCCESS)
			bad("a garbage SRQ WQE received a message");
		else
			err_seen = true;
	if (!err_seen)
		bad("no error completion from the garbage SRQ");
	/* the SRQ producer far ahead: the next message finds an impossible ring */
	set_prod(&srq.ring, 0x80000000u);
	sq_put(&tx, &sw, &s, 1);
	expect("doorbell", sq_doorbell(&x, tx.handle), 0);
	if (cq_wait(&cq2, 0x77, 20000) != WC_SUCCESS)
		bad("UD send after the SRQ producer moved did not complete");
	if (!qp_wait_state(&x, rx.handle, QPS_ERR, 20000))
		bad("the receiving QP not in ERR (state %d)", qp_state(&x, rx.handle));
	expect("DESTROY_QP", qp_destroy(&x, rx.handle), 0);
	expect("DESTROY_SRQ", srq_destroy(&x, srq.handle), 0);
	ctx_close(&x);
}

/* CQ consumer index wild: the CQ reports an error, not the kernel. */
void r_cq_cons_wild(void)
{
	struct world w;
	/* consumer minus producer: ahead of the producer, or further
	 * behind it than the ring is long
	 */
	uint32_t deltas[] = { 5, 0x80000000u, (uint32_t)-1000 };
	int k;

	for (k = 0; k < 3; k++) {
		struct sroce_sge s, r;
		struct sroce_send_wqe sw = send_wqe(2);

		world_open(&w, QPT_RC);
		if (!world_send_ok(&w, 64, 1))
			bad("the first send failed");
		set_cons(&w.ca.ring, rhdr(&w.ca.ring)->producer + deltas[k]);
		set_cons(&w.cb.ring, rhdr(&w.cb.ring)->producer + deltas[k]);
		s = sge_of(&w, 0, 8);
		r = sge_of(&w, 32768, 8);
		sw.num_sge = 1;
		rq_put(&w.b.rq, 2, &r, 1);
		sq_put(&w.a, &sw, &s, 1);
		expect("doorbell", sq_doorbell(&w.x, w.a.handle), 0);
		if (!async_wait(&w.x, EV_CQ_ERR, 20000))
			bad("consumer %#x past the producer: no CQ_ERR event", deltas[k]);
		expect("RESIZE_CQ with an impossible consumer",
		       cq_resize(&w.x, w.ca.handle, 128, NULL), EINVAL);
		expect("REQ_NOTIFY_CQ", cq_arm(&w.x, w.ca.handle), 0);
		world_close(&w);
	}
}

/* RESIZE_CQ: the old ring stays the process's, the new one works. */
void r_cq_resize(void)
{
	struct world w;
	struct sroce_ring_info info;
	struct ring old;

	world_open(&w, QPT_RC);
	if (!world_send_ok(&w, 64, 1))
		bad("the first send failed");
	expect("RESIZE_CQ to 1 under entries", cq_resize(&w.x, w.cb.handle, 1, &info), 0);
	old = w.cb.ring;
	if (ring_map(&w.x, &info, &w.cb.ring))
		bad("mapping the new ring: %s", strerror(errno));
	memset(old.base, 0xee, old.size);
	munmap(old.base, old.size);
	w.cb.ring.mine = 0;
	if (!world_send_ok(&w, 64, 2))
		bad("send after the resize failed");
	world_close(&w);
}

/* A QP reset while its ring holds garbage and impossible indices. */
void r_reset_wild(void)
{
	struct world w;

	world_open(&w, QPT_RC);
	memset(w.a.sq.base + SROCE_RING_DATA_OFFSET, 0xff, w.a.sq.size - SROCE_RING_DATA_OFFSET);
	memset(w.a.rq.base + SROCE_RING_DATA_OFFSET, 0xff, w.a.rq.size - SROCE_RING_DATA_OFFSET);
	set_prod(&w.a.sq, 0xdeadbeef);
	set_prod(&w.a.rq, 0xdeadbeef);
	set_cons(&w.a.sq, 0x1111);
	expect("to ERR with wild indices", qp_set_state(&w.x, w.a.handle, QPS_ERR), 0);
	expect("send doorbell in ERR", sq_doorbell(&w.x, w.a.handle), 0);
	expect("receive doorbell in ERR", rq_doorbell(&w.x, w.a.handle), 0);
	expect("to RESET with wild indices", qp_set_state(&w.x, w.a.handle, QPS_RESET), 0);
	world_close(&w);
}

/* A QP in ERR whose producer runs ahead: each doorbell flushes a ring's
 * worth at most, and the CQ overflows cleanly.
 */
void r_err_doorbells(void)
{
	struct world w;
	struct sroce_send_wqe sw = send_wqe(9);
	int i;

	world_open(&w, QPT_RC);
	expect("to ERR", qp_set_state(&w.x, w.a.handle, QPS_ERR), 0);
	for (i = 0; i < 200; i++) {
		sq_put(&w.a, &sw, NULL, 0);
		if (i % 8 == 7)
			expect("doorbell in ERR", sq_doorbell(&w.x, w.a.handle), 0);
	}
	for (i = 0; i < 50; i++) {
		set_prod(&w.a.sq, (uint32_t)rand());
		expect("doorbell in ERR, random producer", sq_doorbell(&w.x, w.a.handle), 0);
	}
	world_close(&w);
}
