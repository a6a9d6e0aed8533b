// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * data.c - sroce_rc_test: buffers and their data, completions,
 * completion events, and posting work requests.
 */

#include "rc.h"

/*
 * A buffer of @len bytes plus GUARD, filled with FILL; the MR, in @pd of
 * @d, covers @reg_len.
 */
int buf_reg_in(struct buf *b, struct dev *d, struct ibv_pd *pd, size_t len, size_t reg_len,
	       unsigned int access)
{
	size_t alloc = (len + GUARD + 4095) & ~(size_t)4095;

	b->len = len;
	b->zero_based = false;
	b->p = track(R_MEM, aligned_alloc(4096, alloc));
	CHECK(b->p, "out of memory (%zu bytes)", alloc);
	memset(b->p, FILL, alloc);
	b->mr = track(R_MR, ibv_reg_mr(pd, b->p, reg_len, access));
	CHECK(b->mr, "ibv_reg_mr(%s, %zu bytes, access 0x%x): %s", d->name, reg_len, access,
	      strerror(errno));
	return 0;
}

/* As buf_reg_in(), in the device's PD. */
int buf_reg(struct buf *b, struct dev *d, size_t len, size_t reg_len, unsigned int access)
{
	return buf_reg_in(b, d, d->pd, len, reg_len, access);
}

int buf_new(struct buf *b, struct dev *d, size_t len, unsigned int access)
{
	return buf_reg(b, d, len, len + GUARD, access);
}

void buf_clear(struct buf *b)
{
	memset(b->p, FILL, b->len + GUARD);
}

uint64_t addr_of(const struct buf *b, size_t off)
{
	return b->zero_based ? off : (uintptr_t)(b->p + off);
}

struct ibv_sge sge_of(const struct buf *b, size_t off, size_t len)
{
	struct ibv_sge s = { .addr = addr_of(b, off), .length = (uint32_t)len, .lkey = b->mr->lkey };

	return s;
}

void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = (seed * 2654435761u) | 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

int check_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what)
{
	size_t i;

	if (!memcmp(got, want, n))
		return 0;
	for (i = 0; got[i] == want[i]; i++)
		;
	return failf("%s: data differs at byte %zu of %zu (0x%02x, expected 0x%02x)", what, i, n,
		     got[i], want[i]);
}

int check_fill(const uint8_t *p, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(p[i] == FILL, "%s: byte %zu of memory that must stay untouched was written (0x%02x)",
		      what, i, p[i]);
	return 0;
}

/* @b holds @want[0..n) at @off, and nothing else of it (nor its guard) was written. */
int check_buf(const struct buf *b, size_t off, const uint8_t *want, size_t n,
	      const char *what)
{
	TRY(check_fill(b->p, off, what));
	TRY(check_bytes(b->p + off, want, n, what));
	return check_fill(b->p + off + n, b->len + GUARD - off - n, what);
}

uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	__atomic_load((const uint64_t *)(const void *)p, &v, __ATOMIC_SEQ_CST);
	return v;
}

void store64(uint8_t *p, uint64_t v)
{
	__atomic_store((uint64_t *)(void *)p, &v, __ATOMIC_SEQ_CST);
}

static const char *wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	case IBV_WC_BIND_MW: return "BIND_MW";
	default: return "other";
	}
}

const char *wc_desc(const struct ibv_wc *wc)
{
	static char s[256];

	snprintf(s, sizeof(s), "{wr_id %llu, %s, opcode %s (%d), byte_len %u, flags 0x%x, imm 0x%x, qp %u, vendor_err 0x%x}",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc_opcode_name(wc->opcode), wc->opcode, wc->byte_len, wc->wc_flags,
		 be32toh(wc->imm_data), wc->qp_num, wc->vendor_err);
	return s;
}

/*
 * A completion did not come: before the QPs go, run $SROCE_RC_ON_TIMEOUT
 * (once per process), for the harness to record the device's view of them
 * ("rdma -dd res show qp": where each requester and completer stands).
 */
static void on_timeout(void)
{
	static bool done;
	const char *cmd = getenv("SROCE_RC_ON_TIMEOUT");
	int st;

	if (done || !cmd || !*cmd)
		return;
	done = true;
	fflush(stdout);
	fflush(stderr);
	st = system(cmd);
	if (st)
		fprintf(stderr, "SROCE_RC_ON_TIMEOUT: status %d\n", st);
}

int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms, const char *what)
{
	long long deadline = now_ms() + ms;
	int n, spins = 0;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		CHECK(n >= 0, "%s: ibv_poll_cq: %s", what, estr(n));
		if (n == 1) {
			vlog("  %s: %s", what, wc_desc(wc));
			return 0;
		}
		if (now_ms() > deadline)
			return 1;
		if (++spins > 100)
			sleep_ms(1);
	}
}

int check_wc(const struct ibv_wc *wc, const struct want *w, const char *what)
{
	const char *d = wc_desc(wc);

	CHECK(wc->status == w->status, "%s: status %s, expected %s: %s", what,
	      ibv_wc_status_str(wc->status), ibv_wc_status_str(w->status), d);
	CHECK(wc->wr_id == w->wr_id, "%s: wr_id %llu, expected %llu: %s", what,
	      (unsigned long long)wc->wr_id, (unsigned long long)w->wr_id, d);
	CHECK(wc->qp_num == w->qp_num, "%s: qp_num %u, expected %u: %s", what, wc->qp_num,
	      w->qp_num, d);
	/* Only wr_id, status, qp_num and vendor_err are valid in an error completion. */
	if (w->status != IBV_WC_SUCCESS)
		return 0;
	CHECK(wc->opcode == w->opcode, "%s: opcode %s, expected %s: %s", what,
	      wc_opcode_name(wc->opcode), wc_opcode_name(w->opcode), d);
	CHECK(w->byte_len < 0 || wc->byte_len == w->byte_len, "%s: byte_len %u, expected %lld: %s",
	      what, wc->byte_len, (long long)w->byte_len, d);
	CHECK(w->imm < 0 || !!(wc->wc_flags & IBV_WC_WITH_IMM) == w->imm,
	      "%s: IBV_WC_WITH_IMM is %s: %s", what, w->imm ? "missing" : "set", d);
	CHECK(w->imm <= 0 || wc->imm_data == w->imm_data, "%s: imm_data 0x%x, expected 0x%x: %s",
	      what, be32toh(wc->imm_data), be32toh(w->imm_data), d);
	return 0;
}

int expect_wc(struct ibv_cq *cq, const struct want *w, const char *what)
{
	struct ibv_wc wc;
	int ret;

	ret = poll_wc(cq, &wc, opt.poll_ms, what);
	if (ret < 0)
		return ret;
	if (ret)
		on_timeout();
	CHECK(!ret, "%s: no completion within %d ms (expected wr_id %llu, %s)", what, opt.poll_ms,
	      (unsigned long long)w->wr_id, ibv_wc_status_str(w->status));
	return check_wc(&wc, w, what);
}

/* Nothing shows up on @cq for @ms milliseconds. */
int expect_empty(struct ibv_cq *cq, int ms, const char *what)
{
	struct ibv_wc wc;
	int ret;

	ret = poll_wc(cq, &wc, ms, what);
	if (ret < 0)
		return ret;
	CHECK(ret, "%s: unexpected completion %s", what, wc_desc(&wc));
	return 0;
}

/* Expected completions: a requester's, a receive, an error. */
struct want w_ok(uint64_t wr_id, enum ibv_wc_opcode op, const struct ep *e)
{
	struct want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			  .qp_num = e->qp->qp_num, .byte_len = -1, .imm = -1 };

	return w;
}

struct want w_recv(uint64_t wr_id, const struct ep *e, uint32_t len)
{
	struct want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			  .qp_num = e->qp->qp_num, .byte_len = len, .imm = 0 };

	return w;
}

struct want w_recv_imm(uint64_t wr_id, const struct ep *e, uint32_t len,
		       enum ibv_wc_opcode op, uint32_t imm)
{
	struct want w = { .wr_id = wr_id, .status = IBV_WC_SUCCESS, .opcode = op,
			  .qp_num = e->qp->qp_num, .byte_len = len, .imm = 1, .imm_data = imm };

	return w;
}

static struct want w_err(uint64_t wr_id, enum ibv_wc_status st, const struct ep *e)
{
	struct want w = { .wr_id = wr_id, .status = st, .qp_num = e->qp->qp_num };

	return w;
}

/* Shorthands: expect one completion of each kind on the obvious CQ. */
int want_send(const struct ep *e, uint64_t wr_id, enum ibv_wc_opcode op, const char *what)
{
	struct want w = w_ok(wr_id, op, e);

	return expect_wc(e->scq, &w, what);
}

int want_recv(const struct ep *e, uint64_t wr_id, uint32_t len, const char *what)
{
	struct want w = w_recv(wr_id, e, len);

	return expect_wc(e->rcq, &w, what);
}

int want_err(const struct ep *e, struct ibv_cq *cq, uint64_t wr_id,
	     enum ibv_wc_status st, const char *what)
{
	struct want w = w_err(wr_id, st, e);

	return expect_wc(cq, &w, what);
}

/* --- completion events ------------------------------------------------------- */

int arm(struct ibv_cq *cq, int solicited_only)
{
	int err = ibv_req_notify_cq(cq, solicited_only);

	CHECK(!err, "ibv_req_notify_cq(solicited_only %d): %s", solicited_only, estr(err));
	return 0;
}

static int chan_readable(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n = poll(&pfd, 1, ms);

	CHECK(n >= 0, "poll(completion channel): %s", strerror(errno));
	return n ? 1 : 0;
}

int expect_event(struct ibv_comp_channel *ch, struct ibv_cq *want, const char *what)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int r;

	r = chan_readable(ch, opt.poll_ms);
	if (r < 0)
		return r;
	CHECK(r, "%s: no completion event within %d ms", what, opt.poll_ms);
	CHECK(!ibv_get_cq_event(ch, &cq, &cq_ctx), "%s: ibv_get_cq_event: %s", what, strerror(errno));
	ibv_ack_cq_events(cq, 1);
	CHECK(cq == want, "%s: event for another CQ", what);
	return 0;
}

int expect_no_event(struct ibv_comp_channel *ch, const char *what)
{
	int r = chan_readable(ch, QUIET_MS);

	if (r < 0)
		return r;
	CHECK(!r, "%s: unexpected completion event", what);
	return 0;
}

static const char *wr_opcode_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	case IBV_WR_BIND_MW: return "BIND_MW";
	default: return "other";
	}
}

void wr_fill(struct ibv_send_wr *wr, uint64_t wr_id, const struct op *o)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = o->sg;
	wr->num_sge = o->nsge;
	wr->opcode = o->op;
	wr->send_flags = o->flags | (o->unsignaled ? 0 : IBV_SEND_SIGNALED);
	wr->imm_data = o->imm;
	wr->qp_type.xrc.remote_srqn = o->srqn;
	if (o->op == IBV_WR_ATOMIC_CMP_AND_SWP || o->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = o->raddr;
		wr->wr.atomic.rkey = o->rkey;
		wr->wr.atomic.compare_add = o->cmp;
		wr->wr.atomic.swap = o->swp;
	} else {
		wr->wr.rdma.remote_addr = o->raddr;
		wr->wr.rdma.rkey = o->rkey;
	}
}

int post_op(const struct ep *e, uint64_t wr_id, const struct op *o)
{
	struct ibv_send_wr wr, *bad = NULL;
	int err;

	wr_fill(&wr, wr_id, o);
	err = ibv_post_send(e->qp, &wr, &bad);
	CHECK(!err, "ibv_post_send(wr_id %llu, %s, %d SGEs): %s", (unsigned long long)wr_id,
	      wr_opcode_name(o->op), o->nsge, estr(err));
	return 0;
}

int post_recv(const struct ep *e, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = nsge }, *bad = NULL;
	int err;

	err = ibv_post_recv(e->qp, &wr, &bad);
	CHECK(!err, "ibv_post_recv(wr_id %llu, %d SGEs): %s", (unsigned long long)wr_id, nsge,
	      estr(err));
	return 0;
}

int post_recv_buf(const struct ep *e, uint64_t wr_id, const struct buf *b, size_t off,
		  size_t len)
{
	struct ibv_sge s = sge_of(b, off, len);

	return post_recv(e, wr_id, &s, 1);
}

/* Send @len bytes of @src (at 0) as one message; num_sge is 0 for 0 bytes. */
int post_send_buf(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		  const struct buf *src, size_t len, uint32_t imm)
{
	struct ibv_sge s = sge_of(src, 0, len);
	struct op o = { .op = op, .sg = &s, .nsge = len ? 1 : 0, .imm = imm };

	return post_op(e, wr_id, &o);
}

/* RDMA READ/WRITE between @loc at @loff and @rem at @roff. */
int post_rdma(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
	      const struct buf *loc, size_t loff, const struct buf *rem, size_t roff,
	      size_t len, uint32_t imm)
{
	struct ibv_sge s = sge_of(loc, loff, len);
	struct op o = { .op = op, .sg = &s, .nsge = len ? 1 : 0, .imm = imm,
			.raddr = addr_of(rem, roff), .rkey = rem->mr->rkey };

	return post_op(e, wr_id, &o);
}

int post_atomic(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		const struct buf *loc, size_t loff, const struct buf *rem, size_t roff,
		uint64_t cmp, uint64_t swp)
{
	struct ibv_sge s = sge_of(loc, loff, 8);
	struct op o = { .op = op, .sg = &s, .nsge = 1, .raddr = addr_of(rem, roff),
			.rkey = rem->mr->rkey, .cmp = cmp, .swp = swp };

	return post_op(e, wr_id, &o);
}

/* ibv_post_send of @wr must fail at once, naming @want_bad, with @want_err. */
int expect_post_send_fails(const struct ep *e, struct ibv_send_wr *wr,
			   struct ibv_send_wr *want_bad, int want_err, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int err = ibv_post_send(e->qp, wr, &bad);

	CHECK(err, "%s: ibv_post_send succeeded", what);
	CHECK(!want_err || err == want_err, "%s: ibv_post_send failed with %s (%d), expected %s",
	      what, estr(err), err, strerror(want_err));
	CHECK(bad == want_bad, "%s: bad_wr does not point at the failing WR", what);
	return 0;
}

int expect_post_recv_fails(const struct ep *e, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr *want_bad, int want_err, const char *what)
{
	struct ibv_recv_wr *bad = NULL;
	int err = ibv_post_recv(e->qp, wr, &bad);

	CHECK(err, "%s: ibv_post_recv succeeded", what);
	CHECK(!want_err || err == want_err, "%s: ibv_post_recv failed with %s (%d), expected %s",
	      what, estr(err), err, strerror(want_err));
	CHECK(bad == want_bad, "%s: bad_wr does not point at the failing WR", what);
	return 0;
}

/* ibv_start_poll() on @cqx until a completion comes (opt.poll_ms at most). */
int cqx_start(struct ibv_cq_ex *cqx, const char *what)
{
	struct ibv_poll_cq_attr pa = {};
	long long end = now_ms() + opt.poll_ms;
	int ret;

	while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT && now_ms() < end)
		sleep_ms(1);
	CHECK(ret == 0, "%s: ibv_start_poll: %s", what,
	      ret == ENOENT ? "no completion in time" : estr(ret));
	return 0;
}
