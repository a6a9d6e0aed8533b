// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * req.c - sroce_peer: the scenarios with the victim as the requester (req_*).
 */

#include "peer.h"

#define RD_OFF (64 * 1024)		/* where the victim's READs land */
#define ATOMIC_OFF (128 * 1024)		/* where its atomics' results land */

uint8_t rdata[8 * PMTU];		/* what the peer's READ responses carry */

/* A request sroce sent the peer, parsed. */
struct inreq {
	uint8_t op;
	uint32_t psn;
	bool ackreq;
	uint64_t va, swap_add, compare;	/* RETH, AtomicETH */
	uint32_t rkey, dmalen;
	const uint8_t *data;
	uint32_t len;
	size_t n;			/* the datagram's length */
	uint8_t raw[MAX_PKT + 64];
};

/* A request of the victim's transport (UC: SENDs and WRITEs only). */
static bool op_is_request(uint8_t op)
{
	if (tport == UC_OPS)
		return op >= UC(OP_SEND_FIRST) && op <= UC(OP_WRITE_ONLY_IMM);
	return op <= OP_READ_REQ || op == OP_CMP_SWAP || op == OP_FETCH_ADD;
}

static const char *inreq_str(const struct inreq *r)
{
	static char s[128];

	snprintf(s, sizeof(s), "op 0x%02x psn 0x%06x%s (%u bytes)", r->op, r->psn,
		 r->ackreq ? " AckReq" : "", r->len);
	return s;
}

static int inreq_parse(struct inreq *r, uint16_t sport)
{
	const uint8_t *p = r->raw, *q = r->raw + BTH_LEN;
	unsigned int pad;
	size_t end;

	CHECK(r->n >= BTH_LEN + ICRC_LEN, "a %zu-byte datagram from sroce", r->n);
	r->op = p[0];
	r->psn = get32(p + 8) & 0xffffff;
	r->ackreq = p[8] & 0x80;
	CHECK(op_is_request(r->op), "sroce sent opcode 0x%02x (psn 0x%06x), not an %s request",
	      r->op, r->psn, tport ? "UC" : "RC");
	TRY(hdr_check(p, r->n, sport));
	CHECK(!(get32(p + 8) & 0x7f000000), "op 0x%02x psn 0x%06x: reserved BTH bits set", r->op,
	      r->psn);
	r->va = r->swap_add = r->compare = 0;
	r->rkey = r->dmalen = 0;
	if (op_has_reth(r->op)) {
		CHECK(r->n >= BTH_LEN + RETH_LEN + ICRC_LEN, "op 0x%02x too short for its RETH",
		      r->op);
		r->va = get64(q);
		r->rkey = get32(q + 8);
		r->dmalen = get32(q + 12);
		q += RETH_LEN;
	}
	if (r->op == OP_CMP_SWAP || r->op == OP_FETCH_ADD) {
		CHECK(r->n >= BTH_LEN + ATMETH_LEN + ICRC_LEN, "atomic request too short");
		r->va = get64(q);
		r->rkey = get32(q + 8);
		r->swap_add = get64(q + 12);
		r->compare = get64(q + 20);
		q += ATMETH_LEN;
	}
	if (op_has_imm(r->op))
		q += IMM_LEN;
	pad = (p[1] >> 4) & 3;
	end = r->n - ICRC_LEN;
	CHECK((size_t)(q - p) + pad <= end, "op 0x%02x psn 0x%06x: PadCnt %u past its end", r->op,
	      r->psn, pad);
	r->data = q;
	r->len = (uint32_t)(end - (size_t)(q - p) - pad);
	CHECK(!((r->len + pad) & 3), "op 0x%02x psn 0x%06x: payload and pad %u + %u bytes", r->op,
	      r->psn, r->len, pad);
	return 0;
}

/* The next request from sroce within @ms: 1, or 0 if none came. */
static int inreq_recv(struct inreq *r, int ms)
{
	uint16_t sport;
	int k = dgram_recv(r->raw, sizeof(r->raw), &r->n, &sport, ms);

	if (k <= 0)
		return k;
	TRY(inreq_parse(r, sport));
	vlog("  <- %s\n", inreq_str(r));
	return 1;
}

/* The next request must come within the timeout, opcode @op, PSN @psn. */
static int expect_inreq(struct inreq *r, uint8_t op, uint32_t psn, const char *what)
{
	int k = inreq_recv(r, opt.timeout_ms);

	TRY(k);
	CHECK(k, "%s: no request within %d ms (want op 0x%02x psn 0x%06x)", what, opt.timeout_ms,
	      op, psn);
	CHECK(r->op == op && r->psn == psn, "%s: got %s, want op 0x%02x psn 0x%06x", what,
	      inreq_str(r), op, psn);
	return 0;
}

/* The opcode of packet @i of @n of a SEND (or, with @write, an RDMA WRITE). */
uint8_t msg_op(bool write, uint32_t i, uint32_t n)
{
	uint8_t op;

	if (n == 1)
		op = write ? OP_WRITE_ONLY : OP_SEND_ONLY;
	else if (!i)
		op = write ? OP_WRITE_FIRST : OP_SEND_FIRST;
	else if (i == n - 1)
		op = write ? OP_WRITE_LAST : OP_SEND_LAST;
	else
		op = write ? OP_WRITE_MIDDLE : OP_SEND_MIDDLE;
	return op | tport;
}

/*
 * A SEND or RDMA WRITE message, or its tail from packet @from on (a
 * resend): the packets of PSNs @psn + @from .. in order, each with its
 * opcode, the bytes of the victim's buffer at @off, PMTU-sized but the
 * last, AckReq on the last only (RC; never on UC), a WRITE's RETH (REMOTE_VA, REMOTE_RKEY,
 * @len) on its First or Only.
 */
int expect_msg(bool write, uint32_t psn, uint32_t from, uint32_t off, uint32_t len,
	       const char *what)
{
	uint32_t n = len ? (len + PMTU - 1) / PMTU : 1, i, want;
	struct inreq r;
	uint8_t op;

	for (i = from; i < n; i++) {
		op = msg_op(write, i, n);
		TRY(expect_inreq(&r, op, psn_add(psn, i), what));
		want = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		CHECK(r.len == want && !memcmp(r.data, vic.buf + off + i * PMTU, want),
		      "%s: %s, want %u bytes of the victim's buffer at %u", what, inreq_str(&r),
		      want, off + i * PMTU);
		CHECK(r.ackreq == (!tport && i == n - 1), "%s: %s, AckReq %s on packet %u of %u",
		      what, inreq_str(&r), r.ackreq ? "set" : "clear", i + 1, n);
		if (write && !i)
			CHECK(r.va == REMOTE_VA && r.rkey == REMOTE_RKEY && r.dmalen == len,
			      "%s: RETH va 0x%llx rkey 0x%x len %u, want 0x%llx 0x%x %u", what,
			      (unsigned long long)r.va, r.rkey, r.dmalen,
			      (unsigned long long)REMOTE_VA, REMOTE_RKEY, len);
	}
	return 0;
}

/* A READ request at @psn for @len bytes from REMOTE_VA + @roff. */
static int expect_read_req(uint32_t psn, uint32_t roff, uint32_t len, const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, OP_READ_REQ, psn, what));
	CHECK(r.va == REMOTE_VA + roff && r.rkey == REMOTE_RKEY && r.dmalen == len && !r.len &&
	      r.ackreq,
	      "%s: READ psn 0x%06x va 0x%llx rkey 0x%x len %u (%u bytes, AckReq %d), want va "
	      "0x%llx rkey 0x%x len %u", what, r.psn, (unsigned long long)r.va, r.rkey, r.dmalen,
	      r.len, r.ackreq, (unsigned long long)(REMOTE_VA + roff), REMOTE_RKEY, len);
	return 0;
}

/* The peer answers: an ACK or NAK (@syn) for @psn. */
static int peer_ack(uint8_t syn, uint32_t psn, uint32_t msn)
{
	struct req r = { .op = OP_ACK, .psn = psn, .padcnt = -1, .syn = syn, .msn = msn };

	return req_send(&r);
}

/* The peer answers: READ response packet @op at @psn with @len bytes of rdata + @roff. */
static int peer_read_rsp(uint8_t op, uint32_t psn, uint32_t roff, uint32_t len, uint32_t msn)
{
	struct req r = { .op = op, .psn = psn, .padcnt = -1, .syn = AETH_ACK_UNLIMITED,
			 .msn = msn, .data = rdata + roff, .len = len };

	return req_send(&r);
}

static int peer_atomic_ack(uint32_t psn, uint64_t orig, uint32_t msn)
{
	struct req r = { .op = OP_ATOMIC_ACK, .psn = psn, .padcnt = -1,
			 .syn = AETH_ACK_UNLIMITED, .msn = msn, .orig = orig };

	return req_send(&r);
}

/* Post a signaled SEND/WRITE/READ of @len bytes of the victim's buffer at @off. */
int post_send_wr(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		 uint32_t roff)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)(vic.buf + off), .length = len,
			       .lkey = vic.mr->lkey };

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = REMOTE_VA + roff;
	wr.wr.rdma.rkey = REMOTE_RKEY;
	errno = ibv_post_send(vic.qp, &wr, &bad);
	CHECK(!errno, "ibv_post_send (wr_id %llu): %s", (unsigned long long)wr_id,
	      strerror(errno));
	return 0;
}

/* Post a signaled atomic whose result lands at ATOMIC_OFF. */
static int post_atomic_wr(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t compare_add,
			  uint64_t swap)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)(vic.buf + ATOMIC_OFF), .length = 8,
			       .lkey = vic.mr->lkey };

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = REMOTE_VA;
	wr.wr.atomic.rkey = REMOTE_RKEY;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	errno = ibv_post_send(vic.qp, &wr, &bad);
	CHECK(!errno, "ibv_post_send (atomic, wr_id %llu): %s", (unsigned long long)wr_id,
	      strerror(errno));
	return 0;
}

/* An atomic request at @psn with these operands. */
static int expect_atomic_req(uint8_t op, uint32_t psn, uint64_t swap_add, uint64_t compare,
			     const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, op, psn, what));
	CHECK(r.va == REMOTE_VA && r.rkey == REMOTE_RKEY && r.swap_add == swap_add &&
	      r.compare == compare && !r.len && r.ackreq,
	      "%s: atomic va 0x%llx rkey 0x%x swap/add 0x%llx compare 0x%llx (%u bytes)", what,
	      (unsigned long long)r.va, r.rkey, (unsigned long long)r.swap_add,
	      (unsigned long long)r.compare, r.len);
	return 0;
}

/* A send completion; SEND and WRITE completions carry byte_len 0 (sroce). */
int expect_swc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t byte_len, const char *what)
{
	return expect_wc(wr_id, IBV_WC_SUCCESS, op, byte_len, false, 0, what);
}

/* No async event for the victim QP (a requester's errors complete its WQE). */
int expect_no_event(const char *after)
{
	struct ibv_async_event ev;
	int n = 0;

	usleep(100 * 1000);
	while (!ibv_get_async_event(vic.ctx, &ev)) {
		vlog("  async event %s\n", ibv_event_type_str(ev.event_type));
		if (ev.element.qp == vic.qp && ev.event_type != IBV_EVENT_COMM_EST)
			n++;
		ibv_ack_async_event(&ev);
	}
	CHECK(!n, "after %s, %d async events for the victim QP", after, n);
	return 0;
}


/*
 * The requester failed: @wr_id completes with @st, the send work requests
 * @flush_from .. @flush_to - 1 posted behind it are flushed, the QP is in
 * the error state without an async event (the error is the completion's),
 * and a SEND posted now is flushed too.
 */
static int expect_req_failed(uint64_t wr_id, enum ibv_wc_status st, uint64_t flush_from,
			     uint64_t flush_to, const char *what)
{
	uint64_t i;

	TRY(expect_wc(wr_id, st, IBV_WC_SEND, 0, false, 0, what));
	for (i = flush_from; i < flush_to; i++)
		TRY(expect_wc(i, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false, 0,
			      "a send behind the failed one"));
	TRY(expect_state(IBV_QPS_ERR));
	TRY(expect_no_event(what));
	TRY(post_send_wr(99, IBV_WR_SEND, 0, 16, 0));
	return expect_wc(99, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false, 0,
			 "a SEND posted after the error");
}

/* The wait a timer code means: 4.096 us * 2^code, in ms. */
static double code_ms(unsigned int code)
{
	return 4.096e-3 * (double)(1u << code);
}

/*
 * The least gap a wait of @ms can show between two packets the peer
 * receives: the kernel's timers fire on a jiffy boundary (4 ms at HZ 250)
 * never before their time, but the first packet may reach the peer a
 * little late; 10% and 8 ms of slack.
 */
static long least_gap_ms(double ms)
{
	return (long)(ms * 0.9) - 8;
}

/*
 * Whether @r is @first again: the same bytes (the ICRC too over IPv6; over
 * IPv4 it covers the IP ID, which a UDP socket does not show).
 */
static bool same_request(const struct inreq *first, const struct inreq *r)
{
	size_t cmp = peer.family == AF_INET6 ? first->n : first->n - ICRC_LEN;

	return r->n == first->n && !memcmp(r->raw, first->raw, cmp);
}

/* The next request must be @first sent again. */
static int expect_copy(const struct inreq *first, const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, first->op, first->psn, what));
	CHECK(same_request(first, &r),
	      "%s: the resent packet (%zu bytes) differs from the first (%zu bytes)", what, r.n,
	      first->n);
	return 0;
}

/*
 * The next request must be @first sent again, arriving no sooner than
 * @least_ms after @t0 (rt_ms() time).  Returns its arrival time in *@t1.
 */
static int expect_resend(const struct inreq *first, long t0, long least_ms, long *t1,
			 const char *what)
{
	TRY(expect_copy(first, what));
	*t1 = peer.rx_ms;
	CHECK(*t1 - t0 >= least_ms, "%s: resent after %ld ms, want at least %ld", what, *t1 - t0,
	      least_ms);
	fprintf(stderr, "  %s: resent after %ld ms (at least %ld)\n", what, *t1 - t0, least_ms);
	return 0;
}

/*
 * Copies of @first that were on their way when the peer answered (a timer
 * that fired before the answer landed), until the quiet time passes with
 * none: counted in *@copies.  Each must come no sooner than @least_ms
 * after the one before (the first after @t0); anything else fails.
 */
static int drain_copies(const struct inreq *first, long t0, long least_ms, unsigned int *copies,
			const char *what)
{
	struct inreq r;
	int k;

	while ((k = inreq_recv(&r, opt.quiet_ms)) > 0) {
		CHECK(same_request(first, &r), "%s: got %s, want nothing or the same request again",
		      what, inreq_str(&r));
		CHECK(peer.rx_ms - t0 >= least_ms,
		      "%s: a copy %ld ms after the one before, want at least %ld", what,
		      peer.rx_ms - t0, least_ms);
		fprintf(stderr, "  %s: one more copy, %ld ms after the one before\n", what,
			peer.rx_ms - t0);
		t0 = peer.rx_ms;
		(*copies)++;
	}
	return k;
}

/*
 * req_ack_coalesced - a SEND, a 3-packet WRITE and a 2-packet SEND, the
 * PSNs wrapping past 0xffffff; one ACK for the last PSN acknowledges them
 * all (an ACK covers every PSN up to its own): three
 * completions, in order, and nothing sent again.
 */
int sc_req_ack_coalesced(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 3000, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 16384, 2048, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(true, psn_add(p, 1), 0, 4096, 3000, "WRITE 2"));
	TRY(expect_msg(false, psn_add(p, 4), 0, 16384, 2048, "SEND 3"));
	TRY(expect_no_wc("three messages not acknowledged"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 3));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "WRITE 2"));
	TRY(expect_swc(3, IBV_WC_SEND, 0, "SEND 3"));
	return expect_state(IBV_QPS_RTS);
}

#define MIN_ACK_TIMEOUT "/sys/module/sroce/parameters/min_ack_timeout"

static int param_read(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;

	if (f)
		fclose(f);
	CHECK(ok, "cannot read %s", path);
	return 0;
}

static int param_write(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	int ok = f && fprintf(f, "%d\n", v) > 0;

	if (f && fclose(f))
		ok = 0;
	CHECK(ok, "cannot write %d to %s: %s", v, path, strerror(errno));
	return 0;
}

/*
 * One SEND the peer leaves unanswered once: resent no sooner than @code
 * says.  A stall that delays the ACK past the next expiry brings more
 * copies, each no sooner than @code after the last: counted in *@copies
 * with the first resend.
 */
static int timeout_once(uint64_t wr_id, uint32_t psn, uint32_t off, unsigned int code,
			unsigned int *copies, const char *what)
{
	long least = least_gap_ms(code_ms(code)), t0, t1;
	struct inreq first;

	TRY(post_send_wr(wr_id, IBV_WR_SEND, off, 200, 0));
	TRY(expect_inreq(&first, OP_SEND_ONLY, psn, what));
	t0 = peer.rx_ms;
	CHECK(first.len == 200 && !memcmp(first.data, vic.buf + off, 200) && first.ackreq,
	      "%s: %s, want the 200 bytes at %u with AckReq", what, inreq_str(&first), off);
	TRY(expect_no_wc(what));
	TRY(expect_resend(&first, t0, least, &t1, what));
	(*copies)++;
	/* At once: the next timeout runs from the resend. */
	TRY(expect_no_wc_now(what));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn, (uint32_t)wr_id));
	TRY(expect_swc(wr_id, IBV_WC_SEND, 0, what));
	return drain_copies(&first, t1, least, copies, what);
}

static int req_ack_timeout(const struct vconf *c, int floor)
{
	struct ibv_qp_init_attr ia;
	unsigned int copies = 0;
	struct ibv_qp_attr a;

	TRY(timeout_once(1, c->sq_psn, 0, c->timeout, &copies, "a SEND left unanswered"));
	TRY(param_write(MIN_ACK_TIMEOUT, floor));
	TRY(timeout_once(2, psn_add(c->sq_psn, 1), 1024, (unsigned int)floor, &copies,
			 "a SEND left unanswered, min_ack_timeout above the QP's"));
	/* Each copy one timeout's. */
	snprintf(cnt_want, sizeof(cnt_want), "timeouts=%u retransmits=%u", copies, copies);
	errno = ibv_query_qp(vic.qp, &a, IBV_QP_TIMEOUT, &ia);
	CHECK(!errno, "ibv_query_qp: %s", strerror(errno));
	CHECK(a.timeout == c->timeout, "with min_ack_timeout %d the QP's timeout reads %u, want %u",
	      floor, a.timeout, c->timeout);
	return expect_state(IBV_QPS_RTS);
}

/*
 * req_ack_timeout - the peer takes a SEND and says nothing: the requester
 * sends the same packet again (same PSN, same bytes) once the local ACK
 * timeout (the QP's code 16: 268 ms) has run, not before; the
 * peer ACKs that and the SEND completes.  Then with the module parameter
 * min_ack_timeout (a floor under the code) at 18 (1.07 s), above the QP's
 * 16, the next SEND is resent no sooner than the floor says, while the
 * QP's own attribute still reads 16.  The parameter gets its old value
 * back, pass or fail.  Should a stalled guest let the timer fire again
 * before the peer's ACK lands, the extra copies must keep the same gap;
 * the counters must show one timeout and one retransmit per copy.
 */
int sc_req_ack_timeout(const struct vconf *c)
{
	int old, rc;

	TRY(param_read(MIN_ACK_TIMEOUT, &old));
	CHECK(old < c->timeout, "min_ack_timeout is %d, not below the QP's %u: cannot test", old,
	      c->timeout);
	rc = req_ack_timeout(c, 18);
	if (param_write(MIN_ACK_TIMEOUT, old))
		rc = -1;
	return rc;
}

/*
 * req_retry_exceeded - the peer never answers two SENDs: with retry_cnt 2
 * the requester sends them 3 times in all (each time from the first), then
 * the first completes with "transport retry counter exceeded", the second
 * is flushed, the QP is in the error state; three
 * local ACK timeouts, two go-backs.
 */
int sc_req_retry_exceeded(const struct vconf *c)
{
	uint32_t p = c->sq_psn, i;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 64, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 64, 0));
	for (i = 0; i <= c->retry_cnt; i++) {
		TRY(expect_msg(false, p, 0, 0, 64, i ? "SEND 1 resent" : "SEND 1"));
		TRY(expect_msg(false, psn_add(p, 1), 0, 1024, 64, i ? "SEND 2 resent" : "SEND 2"));
	}
	return expect_req_failed(1, IBV_WC_RETRY_EXC_ERR, 2, 3, "retries exhausted");
}

/*
 * req_nak_psn_seq - a SEND, a 4-packet WRITE and a SEND; the peer NAKs
 * "PSN sequence error" the WRITE's third packet: the NAK acknowledges what
 * came before it, so the first SEND completes, and the
 * requester resends from exactly that PSN: the WRITE's Middle and Last
 * (same bytes), then the second SEND.  One ACK then completes the rest.
 */
int sc_req_nak_psn_seq(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 4 * PMTU, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 16384, 50, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(true, psn_add(p, 1), 0, 4096, 4 * PMTU, "WRITE 2"));
	TRY(expect_msg(false, psn_add(p, 5), 0, 16384, 50, "SEND 3"));
	TRY(peer_ack(NAK_PSN_SEQ, psn_add(p, 3), 1));
	TRY(expect_msg(true, psn_add(p, 1), 2, 4096, 4 * PMTU, "WRITE 2 resent from its third"));
	TRY(expect_msg(false, psn_add(p, 5), 0, 16384, 50, "SEND 3 resent"));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1, acknowledged by the NAK"));
	TRY(expect_no_wc("the resend"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 3));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "WRITE 2"));
	TRY(expect_swc(3, IBV_WC_SEND, 0, "SEND 3"));
	return expect_state(IBV_QPS_RTS);
}

#define RNR_CODE 26	/* 81.92 ms */

/* RNR NAK @psn; the same packet must come back no sooner than the code says. */
static int rnr_once(const struct inreq *first, const char *what)
{
	long t0, t1;

	t0 = rt_ms();
	TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, first->psn, 0));
	return expect_resend(first, t0, least_gap_ms(81.92), &t1, what);
}

/*
 * req_rnr_nak - RNR NAKs with timer code 26 (81.92 ms, table 45): the
 * requester waits that long, then sends the SEND again; with
 * rnr_retry 2 the SEND succeeds after two RNR NAKs (an ACK); the next
 * SEND gets three, and its third fails it with "RNR retry counter
 * exceeded" (the count starts over on progress), the QP in the error state.
 */
int sc_req_rnr_nak(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	struct inreq r;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 128, 0));
	TRY(expect_inreq(&r, OP_SEND_ONLY, p, "SEND 1"));
	TRY(rnr_once(&r, "SEND 1 after an RNR NAK"));
	TRY(rnr_once(&r, "SEND 1 after a second RNR NAK"));
	TRY(expect_no_wc("two RNR NAKs"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 128, 0));
	TRY(expect_inreq(&r, OP_SEND_ONLY, psn_add(p, 1), "SEND 2"));
	TRY(rnr_once(&r, "SEND 2 after an RNR NAK"));
	TRY(rnr_once(&r, "SEND 2 after a second RNR NAK"));
	TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, psn_add(p, 1), 1));
	return expect_req_failed(2, IBV_WC_RNR_RETRY_EXC_ERR, 0, 0, "a third RNR NAK");
}

/*
 * req_rnr_late - a receiver not ready behind a round trip longer than the
 * local ACK timeout (code 18, 1.07 s; retry_cnt 3, rnr_retry 7): the peer
 * answers a SEND only after the timer has resent it, and then with an RNR
 * NAK.  Each RNR NAK shows the responder alive, so the transport retries
 * start over: the SEND goes through twice retry_cnt timeouts and still
 * completes when the peer ACKs.  A requester that kept the retries spent
 * fails it with "transport retry counter exceeded" at timeout retry_cnt + 1
 * (the peer then waits in vain for the next copy).
 *
 * Which copy a timeout sent, the device's timeouts counter tells (it moves
 * before the copy leaves), so the peer needs no clock: it NAKs the first
 * copy after each new timeout.  A stalled guest may let the timer fire
 * again before a NAK lands; that spends a retry of three, not the SEND, and
 * the counters the scenario checks come from what the peer saw: every copy
 * received is a retransmit, and the RNR NAKs received are the peer's.
 */
int sc_req_rnr_late(const struct vconf *c)
{
	long long base, naked, now;
	unsigned int naks = 0, copies = 0;
	uint32_t p = c->sq_psn;
	struct inreq first;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 128, 0));
	TRY(expect_inreq(&first, OP_SEND_ONLY, p, "SEND 1"));
	TRY(cnt_get("timeouts", &base));
	naked = base;
	for (;;) {
		TRY(expect_copy(&first, "SEND 1 after a timeout or an RNR NAK"));
		copies++;
		TRY(cnt_get("timeouts", &now));
		if (now - base >= 2 * c->retry_cnt)
			break;
		if (now > naked) {
			TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, p, 0));
			naks++;
			naked = now;
		}
	}
	fprintf(stderr, "  %lld timeouts, %u RNR NAKs, %u copies\n", now - base, naks, copies);
	TRY(expect_no_wc_now("late RNR NAKs"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1 after late RNR NAKs"));
	TRY(drain_copies(&first, peer.rx_ms, 0, &copies, "the ACK"));
	/*
	 * Each NAK and each timeout sends one copy, but a timer that fires
	 * while a NAK is on its way may share the NAK's copy.
	 */
	TRY(cnt_get("timeouts", &now));
	CHECK(now - base + naks >= copies && now - base <= copies,
	      "%lld timeouts, %u RNR NAKs and %u copies do not add up", now - base, naks, copies);
	snprintf(cnt_want, sizeof(cnt_want), "rnr_naks_rcvd=%u timeouts=%lld retransmits=%u", naks,
		 now - base, copies);
	return expect_state(IBV_QPS_RTS);
}

/*
 * A SEND, then a SEND or WRITE NAKed with @syn (a remote error NAK),
 * then a SEND: the first completes (the NAK acknowledges it),
 * the second with @st, the third is flushed; the QP in the error state.
 */
static int req_nak_fatal(const struct vconf *c, bool write, uint8_t syn, enum ibv_wc_status st)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 64, 0));
	TRY(post_send_wr(2, write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, 1024, 64, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 2048, 64, 0));
	TRY(expect_msg(false, p, 0, 0, 64, "SEND 1"));
	TRY(expect_msg(write, psn_add(p, 1), 0, 1024, 64, "the request NAKed"));
	TRY(expect_msg(false, psn_add(p, 2), 0, 2048, 64, "SEND 3"));
	TRY(peer_ack(syn, psn_add(p, 1), 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1, acknowledged by the NAK"));
	return expect_req_failed(2, st, 3, 4, "the NAK");
}

/* req_nak_remote_access - a WRITE NAKed "remote access error": IBV_WC_REM_ACCESS_ERR. */
int sc_req_nak_remote_access(const struct vconf *c)
{
	return req_nak_fatal(c, true, NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR);
}

/* req_nak_invalid_request - a SEND NAKed "invalid request": IBV_WC_REM_INV_REQ_ERR. */
int sc_req_nak_invalid_request(const struct vconf *c)
{
	return req_nak_fatal(c, false, NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR);
}

/* req_nak_remote_op - a SEND NAKed "remote operational error": IBV_WC_REM_OP_ERR. */
int sc_req_nak_remote_op(const struct vconf *c)
{
	return req_nak_fatal(c, false, NAK_REM_OP, IBV_WC_REM_OP_ERR);
}

/*
 * req_ack_unsent_psn - two SENDs outstanding (PSNs p, p+1).  ACKs for
 * PSNs the requester never sent (p+5, and p+2, the next it would send)
 * and one for p-1, before anything it has outstanding, are dropped
 * (a response outside the window of outstanding PSNs is ignored):
 * no completion, no resend, counted (rx_drop_resp, rx_dup_resp).  The ACK
 * for p completes the first SEND only, a repeat of it is a duplicate, and
 * the ACK for p+1 completes the second.
 */
int sc_req_ack_unsent_psn(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 100, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(false, psn_add(p, 1), 0, 1024, 100, "SEND 2"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 2));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 0xffffff), 0));
	TRY(expect_quiet_ms("ACKs for PSNs never sent or long acknowledged", 300));
	TRY(expect_no_wc("ACKs for PSNs never sent or long acknowledged"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_no_wc("the ACK of SEND 1"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_no_wc("the ACK of SEND 1 again"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2));
	TRY(expect_swc(2, IBV_WC_SEND, 0, "SEND 2"));
	return expect_state(IBV_QPS_RTS);
}

/* The READ's @len bytes landed at RD_OFF + @off, from rdata + @roff, and no more. */
static int check_read_landed(uint32_t off, uint32_t roff, uint32_t len, uint8_t after,
			     const char *what)
{
	CHECK(!memcmp(vic.buf + RD_OFF + off, rdata + roff, len), "%s: the READ's bytes differ",
	      what);
	CHECK(vic.buf[RD_OFF + off + len] == after, "%s: the byte after the READ changed", what);
	return 0;
}

/* Answer a READ at @psn of @len bytes from rdata + @roff, packets @from .. in order. */
static int peer_read_rsps(uint32_t psn, uint32_t from, uint32_t roff, uint32_t len,
			  uint32_t msn)
{
	uint32_t n = (len + PMTU - 1) / PMTU, i, l;

	for (i = from; i < n; i++) {
		l = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		TRY(peer_read_rsp(read_op(i, n), psn_add(psn, i), roff + i * PMTU, l, msn));
	}
	return 0;
}

/*
 * req_read_response - READs answered four ways (the victim's timeout code
 * 16, 268 ms):
 * A. 4 KiB answered First, Middle, Middle, Last: the bytes land, one
 *    completion (RDMA_READ, byte_len 4096).
 * B. 4 KiB whose first Middle is missing (First, then the second Middle):
 *    the requester drops the Middle beyond the gap (rx_drop_gap) and
 *    asks again from the missing PSN at once (a gap in READ responses
 *    means the missing ones were lost), its RETH moved on: VA + 1024,
 *    3072 bytes; answered Middle, Middle, Last from there.
 * C. 3000 bytes whose Last carries 900 bytes, not 952: sroce drops it
 *    (rx_drop_resp; a response whose length does not fit its READ is not
 *    one it can place), and asks again from that PSN when the ACK timer
 *    runs out: VA + 2048, 952 bytes; answered with a right Last.
 * D. 100 bytes answered with an Only of 120: dropped too, nothing written
 *    past the 100 bytes; asked again and answered right.
 */
int sc_req_read_response(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	uint8_t after[4];
	long t0;

	after[0] = vic.buf[RD_OFF + 4096];
	after[1] = vic.buf[RD_OFF + 8192 + 4096];
	after[2] = vic.buf[RD_OFF + 16384 + 3000];
	after[3] = vic.buf[RD_OFF + 24576 + 100];
	/* A */
	TRY(post_send_wr(1, IBV_WR_RDMA_READ, RD_OFF, 4096, 0));
	TRY(expect_read_req(p, 0, 4096, "READ A"));
	TRY(peer_read_rsps(p, 0, 0, 4096, 1));
	TRY(expect_swc(1, IBV_WC_RDMA_READ, 4096, "READ A"));
	TRY(check_read_landed(0, 0, 4096, after[0], "READ A"));
	/* B */
	p = psn_add(p, 4);
	TRY(post_send_wr(2, IBV_WR_RDMA_READ, RD_OFF + 8192, 4096, 1024));
	TRY(expect_read_req(p, 1024, 4096, "READ B"));
	TRY(peer_read_rsp(OP_READ_RESP_FIRST, p, 1024, PMTU, 2));
	TRY(peer_read_rsp(OP_READ_RESP_MIDDLE, psn_add(p, 2), 1024 + 2 * PMTU, PMTU, 2));
	TRY(expect_read_req(psn_add(p, 1), 1024 + PMTU, 3 * PMTU,
			    "READ B asked again from its missing Middle"));
	TRY(expect_no_wc("READ B's gap"));
	TRY(peer_read_rsps(p, 1, 1024, 4096, 2));
	TRY(expect_swc(2, IBV_WC_RDMA_READ, 4096, "READ B"));
	TRY(check_read_landed(8192, 1024, 4096, after[1], "READ B"));
	/* C */
	p = psn_add(p, 4);
	TRY(post_send_wr(3, IBV_WR_RDMA_READ, RD_OFF + 16384, 3000, 0));
	TRY(expect_read_req(p, 0, 3000, "READ C"));
	TRY(peer_read_rsp(OP_READ_RESP_FIRST, p, 0, PMTU, 3));
	TRY(peer_read_rsp(OP_READ_RESP_MIDDLE, psn_add(p, 1), PMTU, PMTU, 3));
	t0 = rt_ms();
	TRY(peer_read_rsp(OP_READ_RESP_LAST, psn_add(p, 2), 2 * PMTU, 900, 3));
	TRY(expect_read_req(psn_add(p, 2), 2 * PMTU, 3000 - 2 * PMTU,
			    "READ C asked again after a short Last"));
	fprintf(stderr, "  READ C asked again %ld ms after its short Last (timeout %.0f ms)\n",
		peer.rx_ms - t0, code_ms(c->timeout));
	TRY(expect_no_wc("READ C's short Last"));
	TRY(peer_read_rsp(OP_READ_RESP_LAST, psn_add(p, 2), 2 * PMTU, 3000 - 2 * PMTU, 3));
	TRY(expect_swc(3, IBV_WC_RDMA_READ, 3000, "READ C"));
	TRY(check_read_landed(16384, 0, 3000, after[2], "READ C"));
	/* D */
	p = psn_add(p, 3);
	TRY(post_send_wr(4, IBV_WR_RDMA_READ, RD_OFF + 24576, 100, 512));
	TRY(expect_read_req(p, 512, 100, "READ D"));
	TRY(peer_read_rsp(OP_READ_RESP_ONLY, p, 512, 120, 4));
	TRY(expect_read_req(p, 512, 100, "READ D asked again after a long Only"));
	TRY(expect_no_wc("READ D's long Only"));
	CHECK(vic.buf[RD_OFF + 24576 + 100] == after[3], "READ D's long Only wrote past its end");
	TRY(peer_read_rsp(OP_READ_RESP_ONLY, p, 512, 100, 4));
	TRY(expect_swc(4, IBV_WC_RDMA_READ, 100, "READ D"));
	TRY(check_read_landed(24576, 512, 100, after[3], "READ D"));
	return expect_state(IBV_QPS_RTS);
}

/* The 8 bytes at ATOMIC_OFF (an atomic's result) are @want. */
static int check_atomic_result(uint64_t want, const char *what)
{
	uint64_t v;

	memcpy(&v, vic.buf + ATOMIC_OFF, sizeof(v));
	CHECK(v == want, "%s: result 0x%llx, want 0x%llx", what, (unsigned long long)v,
	      (unsigned long long)want);
	return 0;
}

/*
 * req_atomic_response - a CmpSwap's operands go out in its AtomicETH (swap
 * first, then compare); the atomic ACK's original value lands in the
 * victim's buffer (in host order) and completes it (COMP_SWAP, byte_len
 * 8).  A FetchAdd answered with a plain ACK for its PSN, not an atomic
 * ACK: the ACK carries no original value, so the atomic's response was
 * lost (an implicit NAK) and sroce sends the FetchAdd again,
 * unchanged, completing it on the atomic ACK that answers the resend.
 */
int sc_req_atomic_response(const struct vconf *c)
{
	const uint64_t cmp = 0x0102030405060708ull, swp = 0x1112131415161718ull,
		       add = 0x0000000100000003ull, o1 = 0x2122232425262728ull,
		       o2 = 0x3132333435363738ull;
	uint32_t p = c->sq_psn;
	struct inreq r;

	memset(vic.buf + ATOMIC_OFF, 0xa5, 8);
	TRY(post_atomic_wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, cmp, swp));
	TRY(expect_atomic_req(OP_CMP_SWAP, p, swp, cmp, "CmpSwap"));
	TRY(expect_no_wc("a CmpSwap not answered"));
	TRY(peer_atomic_ack(p, o1, 1));
	TRY(expect_swc(1, IBV_WC_COMP_SWAP, 8, "CmpSwap"));
	TRY(check_atomic_result(o1, "CmpSwap"));
	TRY(post_atomic_wr(2, IBV_WR_ATOMIC_FETCH_AND_ADD, add, 0));
	TRY(expect_atomic_req(OP_FETCH_ADD, psn_add(p, 1), add, 0, "FetchAdd"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2));
	TRY(expect_inreq(&r, OP_FETCH_ADD, psn_add(p, 1), "FetchAdd after a plain ACK"));
	CHECK(r.swap_add == add && r.compare == 0 && r.va == REMOTE_VA,
	      "the FetchAdd resent with other operands");
	TRY(expect_no_wc("a FetchAdd answered with a plain ACK"));
	TRY(check_atomic_result(o1, "a FetchAdd answered with a plain ACK"));
	TRY(peer_atomic_ack(psn_add(p, 1), o2, 2));
	TRY(expect_swc(2, IBV_WC_FETCH_ADD, 8, "FetchAdd"));
	TRY(check_atomic_result(o2, "FetchAdd"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * req_implicit_ack_by_read_response - two SENDs (one packet, two packets)
 * and a 2 KiB READ; the peer answers only the READ (First, Last): a READ
 * response acknowledges every request before it (an implicit ACK), so
 * the SENDs complete, in order, and then the READ.
 */
int sc_req_implicit_ack_by_read_response(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	uint8_t after = vic.buf[RD_OFF + 2048];

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 2048, 1500, 0));
	TRY(post_send_wr(3, IBV_WR_RDMA_READ, RD_OFF, 2048, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(false, psn_add(p, 1), 0, 2048, 1500, "SEND 2"));
	TRY(expect_read_req(psn_add(p, 3), 0, 2048, "READ 3"));
	TRY(expect_no_wc("nothing answered"));
	TRY(peer_read_rsps(psn_add(p, 3), 0, 0, 2048, 3));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_swc(2, IBV_WC_SEND, 0, "SEND 2"));
	TRY(expect_swc(3, IBV_WC_RDMA_READ, 2048, "READ 3"));
	TRY(check_read_landed(0, 0, 2048, after, "READ 3"));
	return expect_state(IBV_QPS_RTS);
}
