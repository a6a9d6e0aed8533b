// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * resp.c - sroce_peer: the scenarios with the victim as the responder.
 */

#include "peer.h"

/* --- the scenarios ------------------------------------------------------------ */

uint8_t msg[4][2 * PMTU];	/* what the peer's SENDs and WRITEs carry */

static struct req rq(uint8_t op, uint32_t psn)
{
	struct req r = { .op = op, .psn = psn, .ackreq = true, .padcnt = -1 };

	return r;
}

struct req rq_send(uint8_t op, uint32_t psn, const uint8_t *data, uint32_t len)
{
	struct req r = rq(op, psn);

	r.data = data;
	r.len = len;
	return r;
}

struct req rq_rdma(uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen)
{
	struct req r = rq(op, psn);

	r.va = va;
	r.rkey = rkey;
	r.dmalen = dmalen;
	return r;
}

uint64_t va_of(uint32_t off)
{
	return (uintptr_t)vic.buf + off;
}

/*
 * read_replay_new_read - the regression of commit 37109d8 ("resp: a new
 * READ/atomic takes a resource whose answer is only a replay").
 *
 * max_dest_rd_atomic 1.  READ R1 is answered in full; the peer then sends
 * a duplicate of R1 (as a requester whose ACK timer fired while the answer
 * was on its way does) and, right behind it in the same sendmmsg(), READ
 * R2 from the PSN after R1's last response.  The requester has R1 in full,
 * so R2 is within the one READ it may have outstanding, and the responder
 * must take it (IBTA 9.7.5.1.4: the responder need not finish a
 * duplicate's replay the requester no longer waits for; 9.5.3: it accepts
 * new requests up to its max_dest_rd_atomic).  So the answer must be R1's
 * replay (possibly cut short, only R1's PSNs and bytes, each at most once)
 * and R2 in full with the right bytes, PSNs and MSN 2, never a NAK.
 * Before 37109d8 sroce's one resource still held the queued replay when R2
 * arrived: it NAKed R2 "invalid request" and failed the QP.
 *
 * R1 is 256 KiB (256 response packets), not less: the replay must still be
 * going on when R2 arrives, and sroce sends most of it from a work that
 * may run on the other CPU while the peer's sendmmsg() hands over R2; with
 * 64 packets the replay sometimes ended first.  And the requester must have
 * R1 in full first: sent right after R1's first response packet, R2 would
 * be a second READ outstanding, over the limit, and "NAK invalid request"
 * a legal answer.
 */
int sc_read_replay_new_read(const struct vconf *c)
{
	enum { N1 = 256, N2 = 8 };
	const uint32_t len1 = N1 * PMTU, len2 = N2 * PMTU, off2 = len1;
	uint32_t p = c->epsn, p2 = psn_add(p, N1), next1 = 0, next2 = 0, seen1 = 0, seen2 = 0;
	bool got1[N1] = { false }, got2[N2] = { false };
	struct req two[2];
	struct rsp r;
	int k;

	two[0] = rq_rdma(OP_READ_REQ, p, va_of(0), vic.mr->rkey, len1);
	TRY(req_send(&two[0]));
	TRY(expect_read(p, 0, len1, 1, false, "R1"));
	two[1] = rq_rdma(OP_READ_REQ, p2, va_of(off2), vic.mr->rkey, len2);
	TRY(req_send_n(two, 2));
	while (seen2 < N2) {
		TRY(rsp_expect(&r, seen2 ? "R2" : "R1's duplicate and R2"));
		CHECK(r.op != OP_ACK, "NAK/ACK instead of READ data: %s", rsp_str(&r));
		if (psn_index(r.psn, p, N1) >= 0) {
			TRY(take_read_pkt(&r, p, N1, 0, len1, 1, false, got1, &next1,
					  "R1's replay"));
			seen1++;
			continue;
		}
		TRY(take_read_pkt(&r, p2, N2, off2, len2, 2, false, got2, &next2, "R2"));
		seen2++;
	}
	/*
	 * Replay packets sent from the other CPU before R2 was taken may still
	 * be on their way: the veth hands each CPU's backlog on by itself, so
	 * they can arrive behind R2's.  They too must be R1's, each once.
	 */
	while ((k = rsp_recv(&r, opt.quiet_ms)) > 0) {
		TRY(take_read_pkt(&r, p, N1, 0, len1, 1, false, got1, &next1,
				  "after R2, R1's replay"));
		seen1++;
	}
	TRY(k);
	fprintf(stderr, "read_replay_new_read: R1's replay sent %u of %u packets\n", seen1, N1);
	return expect_state(IBV_QPS_RTS);
}

/*
 * atomics_behind_read - a READ of 448 packets with a CmpSwap and a
 * FetchAdd right behind it (one sendmmsg()): the responder answers in
 * PSN order (IBTA 9.7.5: responses are returned in the order of their
 * requests), the READ's data in full, then the CmpSwap's atomic ACK, then
 * the FetchAdd's.  An atomic answered while an earlier READ is still being
 * sent is held behind it, ordered by its PSN; sroce gave it none (the
 * resource's cur_psn stayed 0, or what an older READ left there), so both
 * atomic ACKs went out in the middle of the READ's data, and a requester
 * goes back and spends a retry on each such gap.  The READ's last packet
 * and the ACKs behind it go out from one sender, in order, so the order is
 * the responder's (the READ's earlier packets may cross on the veth:
 * take_read_pkt()).
 *
 * Each packet carries the MSN of the newest request taken when it was
 * built (rdma_rxe does the same): the READ's First its own, its Last that
 * of the FetchAdd when the atomics came while it was being sent, which is
 * what this scenario is about.  When they came after it (the READ answered
 * in full first), it tries again, three times at most.
 *
 * The responder sends its owed packets one sender at a time, but from
 * the receive softirq, its work and its pacer, which can run on either
 * CPU, and each CPU's veth backlog is handed on by itself: a READ packet
 * sent from one CPU could arrive behind an atomic ACK sent later from the
 * other (seen once on CI: the CmpSwap's ACK 161 packets in).  So the
 * scenario runs pinned to one CPU, where the requests arrive and the
 * senders run (the receive softirq; the responder's work, queued on the
 * CPU that queues it; the pacer's timer, armed there), and the victim QP
 * is limited to 4 Mbit/s: the READ's answer takes about a second, packets
 * 2 ms apart, no backlog builds up, and the atomics surely come while it
 * is owed (unpaced, the responder's work, woken on the peer's CPU, sent
 * all of it before the peer could send the atomics).
 */
static int atomics_behind_read_once(uint32_t p, uint32_t msn0, bool *raced)
{
	enum { N = 448 };
	const uint32_t len = N * PMTU, off = len;
	uint64_t *m = (uint64_t *)(vic.buf + off), v0 = 0x0123456789abcdefull,
		 v1 = 0x1111000022220000ull, add = 0x300000003ull;
	uint32_t next = 0, i, msn;
	bool got[N] = { false };
	struct req three[3];
	struct rsp r;

	*m = v0;
	*raced = false;
	three[0] = rq_rdma(OP_READ_REQ, p, va_of(0), vic.mr->rkey, len);
	three[1] = rq(OP_CMP_SWAP, psn_add(p, N));
	three[1].va = va_of(off);
	three[1].rkey = vic.mr->rkey;
	three[1].compare = v0;
	three[1].swap_add = v1;
	three[2] = rq(OP_FETCH_ADD, psn_add(p, N + 1));
	three[2].va = va_of(off);
	three[2].rkey = vic.mr->rkey;
	three[2].swap_add = add;
	TRY(req_send_n(three, 3));
	for (i = 0; i < N; i++) {
		TRY(rsp_expect(&r, "the READ's data"));
		CHECK(r.op != OP_ATOMIC_ACK,
		      "an atomic ACK before the READ's data, %u of %u packets in: %s", i, N,
		      rsp_str(&r));
		msn = msn0 + 1;
		if (psn_index(r.psn, p, N) == N - 1 && r.msn > msn0 + 1 && r.msn <= msn0 + 3) {
			msn = r.msn;
			*raced = msn == msn0 + 3;
		}
		TRY(take_read_pkt(&r, p, N, 0, len, msn, false, got, &next,
				  "the READ ahead of two atomics"));
	}
	TRY(expect_atomic_ack(psn_add(p, N), v0, msn0 + 2, msn0 + 3,
			      "the CmpSwap behind the READ"));
	TRY(expect_atomic_ack(psn_add(p, N + 1), v1, msn0 + 3, msn0 + 3,
			      "the FetchAdd behind the CmpSwap"));
	CHECK(*m == v1 + add, "after CmpSwap and FetchAdd memory holds 0x%llx",
	      (unsigned long long)*m);
	return 0;
}

/* Run the calling thread on the CPU it is on; @old gets what it had. */
static int pin_to_this_cpu(cpu_set_t *old)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	CHECK(cpu >= 0, "sched_getcpu: %s", strerror(errno));
	CHECK(!sched_getaffinity(0, sizeof(*old), old), "sched_getaffinity: %s",
	      strerror(errno));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(!sched_setaffinity(0, sizeof(one), &one), "sched_setaffinity(CPU %d): %s", cpu,
	      strerror(errno));
	return 0;
}

int sc_atomics_behind_read(const struct vconf *c)
{
	uint32_t try, p = c->epsn;
	bool raced = false;
	cpu_set_t old;
	int err = 0;

	TRY(pin_to_this_cpu(&old));
	for (try = 0; try < 3 && !raced && !err; try++) {
		err = atomics_behind_read_once(p, 3 * try, &raced);
		p = psn_add(p, 450);
	}
	CHECK(!sched_setaffinity(0, sizeof(old), &old), "sched_setaffinity: %s",
	      strerror(errno));
	TRY(err);
	CHECK(raced, "the atomics never came while the READ was being answered (%u tries)", try);
	if (try > 1)
		fprintf(stderr, "atomics_behind_read: the atomics came in time at try %u\n", try);
	return expect_state(IBV_QPS_RTS);
}

/*
 * fatal_nak_behind_seq_nak - with max_dest_rd_atomic 1, a READ of 448
 * packets, and while its answer is being sent, a WRITE from a PSN ahead
 * (a gap: the responder owes a sequence NAK, held behind the READ's data)
 * then the READ that fills the gap: a second READ outstanding, over the
 * limit, which the responder must refuse with a NAK invalid request
 * (IBTA 9.7.5.2.2) and fail the QP.  The victim QP is limited to
 * 1 Mbit/s, so the first READ's answer takes over 3 s, and all three go
 * in one sendmmsg(): the second READ must arrive while most of the
 * answer is owed.  Unpaced, a loaded emulated guest (IPv6, 2026-12-05)
 * sent all 448 packets and the sequence NAK before it took the second
 * READ, although the three came in one sendmmsg() (the responder's work,
 * woken on the sender's CPU, may run between its messages).  That NAK
 * replaces the sequence NAK held back: a responder in the error state
 * answers nothing more, so a sequence NAK would have its requester resend
 * into silence until its retries ran out and report a transport retry
 * error instead of the cause.  The first READ's data comes first (any of
 * it; each packet once, data checked), then the NAK, for the PSN of the
 * refused READ, with MSN 1.
 */
int sc_fatal_nak_behind_seq_nak(const struct vconf *c)
{
	enum { N = 448 };
	const uint32_t len = N * PMTU;
	uint32_t p = c->epsn, p2 = psn_add(p, N), next = 0;
	bool got[N] = { false };
	struct req three[3];
	struct rsp r;

	three[0] = rq_rdma(OP_READ_REQ, p, va_of(0), vic.mr->rkey, len);
	three[1] = rq_rdma(OP_WRITE_ONLY, psn_add(p2, 1), va_of(len), vic.mr->rkey, 64);
	three[1].data = msg[3];
	three[1].len = 64;
	three[2] = rq_rdma(OP_READ_REQ, p2, va_of(0), vic.mr->rkey, PMTU);
	TRY(req_send_n(three, 3));
	for (;;) {
		TRY(rsp_expect(&r, "the first READ's data, then a NAK"));
		if (r.op == OP_ACK)
			break;
		TRY(take_read_pkt(&r, p, N, 0, len, 1, false, got, &next,
				  "the first READ's data"));
	}
	CHECK(r.syn == NAK_INVALID_REQ && r.psn == p2 && r.msn == 1,
	      "got %s, want NAK invalid request psn 0x%06x msn 1 (the READ over the limit)",
	      rsp_str(&r), p2);
	CHECK(memcmp(vic.buf + len, msg[3], 64), "the WRITE past the gap landed");
	TRY(expect_event(IBV_EVENT_QP_REQ_ERR));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(0);
}

/*
 * reaimed_read_over_limit - with max_dest_rd_atomic 1, a READ R1 of 448
 * packets; once its first packet is back, a duplicate of R1 from its
 * third PSN (as a requester that lost a packet asks for the rest), and
 * right behind it READ R2: a second READ outstanding, over the limit.
 * The duplicate re-aims R1's first answer, which its requester still
 * waits for; R2 must not take R1's resource from it but be refused, NAK
 * invalid request, the QP failing (IBTA 9.7.5.2.2).  A responder that
 * gave the resource to R2 would answer R2 and never finish R1, and its
 * requester would end in a retry error instead of learning the cause.
 * R1's packets may come twice (from the first answer and the re-aimed
 * one, from the third PSN on), each with the right bytes.  If R1's
 * answer was already complete when the duplicate came (R2 then takes its
 * resource, as it may), it tries again, three times at most.
 */
static int reaimed_read_once(uint32_t p, uint32_t msn, bool *refused)
{
	enum { N = 448 };
	const uint32_t len = N * PMTU;
	uint32_t p2 = psn_add(p, N), next = 0, next2 = 0, seen = 0;
	bool got[N] = { false }, r2 = false;
	struct req one, two[2];
	struct rsp r;
	int i;

	*refused = false;
	one = rq_rdma(OP_READ_REQ, p, va_of(0), vic.mr->rkey, len);
	two[0] = rq_rdma(OP_READ_REQ, psn_add(p, 2), va_of(2 * PMTU), vic.mr->rkey,
			 len - 2 * PMTU);
	two[1] = rq_rdma(OP_READ_REQ, p2, va_of(len), vic.mr->rkey, PMTU);
	TRY(req_send(&one));
	TRY(rsp_expect(&r, "R1's first packet"));
	TRY(take_read_pkt(&r, p, N, 0, len, msn, false, got, &next, "R1"));
	seen++;
	TRY(req_send_n(two, 2));
	for (;;) {
		TRY(rsp_expect(&r, "R1's data, then a NAK"));
		if (r.op == OP_ACK)
			break;
		i = psn_index(r.psn, p, N);
		if (i < 0) {
			/* R2's answer: fine only if R1's was complete first. */
			CHECK(seen == N, "R2 answered, over the limit, while R1 still lacked %u of %u packets: %s",
			      N - seen, N, rsp_str(&r));
			TRY(take_read_pkt(&r, p2, 1, len, PMTU, msn + 1, false, &r2, &next2, "R2"));
			return 0;
		}
		if (got[i]) {
			CHECK(i >= 2, "R1's psn 0x%06x came twice", r.psn);
			got[i] = false;		/* the re-aimed answer's copy */
		} else {
			seen++;
		}
		TRY(take_read_pkt(&r, p, N, 0, len, msn, false, got, &next, "R1"));
	}
	CHECK(r.syn == NAK_INVALID_REQ && r.psn == p2 && r.msn == msn,
	      "got %s, want NAK invalid request psn 0x%06x msn %u (R2, over the limit)",
	      rsp_str(&r), p2, msn);
	*refused = true;
	return 0;
}

int sc_reaimed_read_over_limit(const struct vconf *c)
{
	uint32_t try, p = c->epsn;
	bool refused = false;

	for (try = 0; try < 3 && !refused; try++) {
		TRY(reaimed_read_once(p, 2 * try + 1, &refused));
		p = psn_add(p, 449);
	}
	CHECK(refused, "R1's answer was complete before its duplicate came, %u tries", try);
	/* Each try's duplicate, and the one NAK. */
	snprintf(cnt_want, sizeof(cnt_want), "rx_drop_dup=%u err_naks_sent=1", try);
	if (try > 1)
		fprintf(stderr, "reaimed_read_over_limit: the duplicate came in time at try %u\n",
			try);
	TRY(expect_event(IBV_EVENT_QP_REQ_ERR));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(0);
}

/*
 * dup_send - a SEND repeated with its old PSN (its ACK was lost) is
 * acknowledged again, with the PSN of the newest request the responder
 * has (9.7.5.1.1: a duplicate SEND/WRITE is not executed again but
 * answered with an ACK), and not delivered again: one receive completion;
 * the next SEND (with immediate) takes the second receive WQE.
 */
int sc_dup_send(const struct vconf *c)
{
	uint32_t p = c->epsn, imm = htonl(0x1234abcd);
	struct req r = rq_send(OP_SEND_ONLY, p, msg[0], 100);

	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "a SEND"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND"));
	TRY(check_recv(0, msg[0], 100, "a SEND"));
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "the duplicate SEND"));
	TRY(expect_no_wc("the duplicate SEND"));
	r = rq_send(OP_SEND_ONLY_IMM, psn_add(p, 1), msg[1], 300);
	r.imm = imm;
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2, "the SEND after the duplicate"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 300, true, imm, "the SEND after"));
	TRY(check_recv(1, msg[1], 300, "the SEND after the duplicate"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_middle - a Middle packet of a multi-packet SEND comes again while
 * the SEND is still in progress (the wire duplicated it): the copy's PSN
 * is behind the expected one, so it is a duplicate (9.7.5.1.1): not placed
 * again, the message neither grows nor shifts, and its Last completes it
 * whole.  A duplicate is acknowledged when it asks to be (AckReq), as
 * sroce acknowledges any SEND/WRITE duplicate, with the newest PSN it has
 * taken and the MSN of the last complete message; the first copy here
 * does not ask (as a requester sends a Middle), the second does.
 */
int sc_dup_middle(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300;
	const uint8_t *data = (const uint8_t *)msg;	/* 2348 of its bytes */
	struct req r;

	r = rq_send(OP_SEND_FIRST, p, data, PMTU);
	r.ackreq = false;
	TRY(req_send(&r));
	r = rq_send(OP_SEND_MIDDLE, psn_add(p, 1), data + PMTU, PMTU);
	r.ackreq = false;
	TRY(req_send(&r));
	TRY(req_send(&r));
	TRY(expect_quiet("a First, a Middle and the Middle again, none with AckReq"));
	r.ackreq = true;
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 0, "the Middle again, with AckReq"));
	TRY(expect_no_wc("the Middle twice again"));
	r = rq_send(OP_SEND_LAST, psn_add(p, 2), data + 2 * PMTU, len - 2 * PMTU);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 1, "the Last"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "the SEND"));
	TRY(check_recv(0, data, len, "the SEND with a duplicate Middle"));
	CHECK(vic.rbuf[len] == 0, "the SEND wrote past its %u bytes", len);
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read - a duplicate READ is answered again from the saved request
 * (9.7.5.1.4), from the PSN the duplicate carries: a duplicate of the
 * whole READ gets the whole response again, First to Last; one from the
 * middle of its PSN range (the requester lost the response's tail and asks
 * for the rest, its RETH moved on by as many bytes) gets the rest, from
 * that PSN, continuing the response (Middle .. Last, as rdma_rxe answers
 * too).  Neither moves the expected PSN: the next SEND is new.
 */
int sc_dup_read(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 4 * PMTU;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(4096), vic.mr->rkey, len);

	TRY(req_send(&r));
	TRY(expect_read(p, 4096, len, 1, false, "a READ"));
	r = rq_rdma(OP_READ_REQ, psn_add(p, 2), va_of(4096 + 2 * PMTU), vic.mr->rkey, 2 * PMTU);
	TRY(req_send(&r));
	TRY(expect_read(psn_add(p, 2), 4096 + 2 * PMTU, 2 * PMTU, 1, true,
			"a duplicate READ from its third PSN"));
	r = rq_rdma(OP_READ_REQ, p, va_of(4096), vic.mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, 4096, len, 1, false, "a duplicate of the whole READ"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 4), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 2, "a SEND after the duplicates"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "a SEND after the READs"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_stale - a READ of memory its owner deregisters once the READ
 * is answered, then a duplicate of it (a copy the network held back): the
 * duplicate gets no answer (the memory is gone, and a requester with the
 * whole answer waits for none; stale_read_replays), no NAK, and the QP
 * stays up: the next SEND is taken and ACKed.
 */
int sc_dup_read_stale(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 32768, len = 2 * PMTU;
	struct ibv_mr *mr;
	struct req r;

	mr = ibv_reg_mr(vic.pd, vic.buf + off, 8192,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	r = rq_rdma(OP_READ_REQ, p, va_of(off), mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr: %s", strerror(errno));
	TRY(req_send(&r));
	TRY(expect_quiet_ms("a duplicate READ of memory deregistered since", 300));
	TRY(expect_state(IBV_QPS_RTS));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2, "a SEND after the duplicate"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_mismatch - duplicates of a READ (4 packets, its PSNs wrapping
 * past 0xffffff) that do not ask for the rest of it from their PSN, with
 * its R_Key and its VA moved on by the packets before: from its third PSN
 * with a VA past its end (memory the READ never asked for, which the QP
 * may read); from its second PSN with the VA of its third;
 * from its first PSN for twice its length; its very request under another
 * R_Key (of a region the QP may read too).  None is answered, none NAKed
 * (the requester has moved past their PSNs), each is counted in
 * rejected_read_replays; the READ itself is left as it was: a duplicate
 * asking for part of the rest (from its second PSN, 1124 bytes) gets
 * exactly that, Middle then Last, and the next SEND is new.  Before this
 * check, sroce answered each from the duplicate's VA and length under the
 * READ's own R_Key, and the part with the READ's PSNs to its end.
 */
int sc_dup_read_mismatch(const struct vconf *c)
{
	static const char *const what[] = {
		"a duplicate READ from its third PSN with a VA past the READ's end",
		"a duplicate READ from its second PSN with the VA of its third",
		"a duplicate READ for twice the READ's length",
		"a duplicate READ under another R_Key",
	};
	uint32_t p = c->epsn, off = 4096, len = 4 * PMTU, part = PMTU + 100, i;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, len), bad[4];

	bad[0] = rq_rdma(OP_READ_REQ, psn_add(p, 2), va_of(off + 64 * PMTU), vic.mr->rkey,
			 2 * PMTU);
	bad[1] = rq_rdma(OP_READ_REQ, psn_add(p, 1), va_of(off + 2 * PMTU), vic.mr->rkey,
			 2 * PMTU);
	bad[2] = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, 2 * len);
	bad[3] = rq_rdma(OP_READ_REQ, p, va_of(off), vic.ro->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	for (i = 0; i < 4; i++) {
		TRY(req_send(&bad[i]));
		TRY(expect_quiet_ms(what[i], 300));
		TRY(expect_state(IBV_QPS_RTS));
	}
	r = rq_rdma(OP_READ_REQ, psn_add(p, 1), va_of(off + PMTU), vic.mr->rkey, part);
	TRY(req_send(&r));
	TRY(expect_read(psn_add(p, 1), off + PMTU, part, 1, true,
			"a duplicate READ for part of the rest from its second PSN"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 4), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 2, "a SEND after the duplicates"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_no_access - a READ is answered, then the victim takes its QP's
 * remote read access away (modify_qp RTS to RTS, IBV_QP_ACCESS_FLAGS) and
 * the READ comes again: the duplicate is not answered (that would read
 * memory the QP no longer lets be read), nor NAKed: it is given up as a
 * stale replay (stale_read_replays), as one whose memory is gone, and the
 * QP stays up and takes the next SEND.  A new READ then gets what any
 * READ without the access gets: NAK remote access error, the QP in the
 * error state.  Before this check, sroce answered the duplicate in full.
 */
int sc_dup_read_no_access(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 16384, len = 2 * PMTU;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, len);
	struct ibv_qp_attr a = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_ATOMIC };

	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	TRY(qp_modify(&a, IBV_QP_ACCESS_FLAGS, "RTS without remote read"));
	TRY(req_send(&r));
	TRY(expect_quiet_ms("a duplicate READ after remote read was taken away", 300));
	TRY(expect_state(IBV_QPS_RTS));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2, "a SEND after the duplicate"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	r = rq_rdma(OP_READ_REQ, psn_add(p, 3), va_of(off), vic.mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_ack(NAK_REM_ACCESS, psn_add(p, 3), 2, "a new READ without remote read"));
	TRY(expect_event(IBV_EVENT_QP_ACCESS_ERR));
	return expect_state(IBV_QPS_ERR);
}

/*
 * seq_gap - a request with a PSN ahead of the expected one means packets
 * were lost: the responder sends one NAK "PSN sequence error" carrying
 * the expected PSN (9.7.5.1.2), drops silently whatever else comes ahead
 * in that gap (one NAK per gap: rx_drop_seq), and takes the expected PSN
 * normally when it comes.  A later gap gets a NAK of its own.
 */
int sc_seq_gap(const struct vconf *c)
{
	uint32_t p = c->epsn, i;
	struct req r;

	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 200);
	TRY(req_send(&r));
	TRY(expect_ack(NAK_PSN_SEQ, p, 0, "a SEND two PSNs ahead"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 3), msg[3], 200);
	TRY(req_send(&r));
	TRY(expect_quiet("a second SEND in the gap"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 200);
	TRY(req_send(&r));
	TRY(expect_quiet("the first SEND in the gap again"));
	TRY(expect_no_wc("SENDs in the gap"));
	for (i = 0; i < 4; i++) {
		r = rq_send(OP_SEND_ONLY, psn_add(p, i), msg[i], 200 + i);
		TRY(req_send(&r));
		TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, i), i + 1, "a SEND in order"));
		TRY(expect_wc(i, IBV_WC_SUCCESS, IBV_WC_RECV, 200 + i, false, 0, "a SEND in order"));
		TRY(check_recv(i, msg[i], 200 + i, "a SEND in order"));
	}
	r = rq_rdma(OP_WRITE_ONLY, psn_add(p, 6), va_of(0), vic.mr->rkey, 16);
	r.data = msg[0];
	r.len = 16;
	TRY(req_send(&r));
	TRY(expect_ack(NAK_PSN_SEQ, psn_add(p, 4), 4, "a WRITE ahead after the gap closed"));
	r.psn = psn_add(p, 4);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 5, "the expected WRITE"));
	CHECK(!memcmp(vic.buf, msg[0], 16), "the WRITE did not land");
	return expect_state(IBV_QPS_RTS);
}

/*
 * A fatal error NAK: the request at @psn NAKed with @syn, the QP in the
 * error state with async event @ev (9.7.5.2.x: class B/C/D errors), its
 * posted receives from @flushed on flushed.
 */
static int expect_fatal(const struct req *r, uint8_t syn, enum ibv_event_type ev,
			uint32_t flushed, const char *what)
{
	TRY(req_send(r));
	TRY(expect_ack(syn, r->psn, 0, what));
	TRY(expect_event(ev));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(flushed);
}

/* write_bad_rkey - RDMA WRITE with an R_Key nobody has: NAK remote access error. */
int sc_write_bad_rkey(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, va_of(0), vic.mr->rkey ^ 0x80, 64);

	r.data = msg[1];
	r.len = 64;
	TRY(expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0, "a WRITE, bad R_Key"));
	CHECK(memcmp(vic.buf, msg[1], 64), "the WRITE with a bad R_Key landed");
	return 0;
}

/* read_past_end - RDMA READ running 512 bytes past its MR: NAK remote access error. */
int sc_read_past_end(const struct vconf *c)
{
	struct req r = rq_rdma(OP_READ_REQ, c->epsn, va_of(MR_SIZE - 512), vic.mr->rkey, PMTU);

	return expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0,
			    "a READ past the end of the MR");
}

/* write_no_remote_write - RDMA WRITE to an MR registered without remote write. */
int sc_write_no_remote_write(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, (uintptr_t)vic.robuf, vic.ro->rkey, 64);

	r.data = msg[1];
	r.len = 64;
	TRY(expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0,
			 "a WRITE to a read-only MR"));
	CHECK(memcmp(vic.robuf, msg[1], 64), "the WRITE to a read-only MR landed");
	return 0;
}

/*
 * write_middle_alone - RDMA WRITE Middle with no First before it: an
 * opcode out of sequence, NAK invalid request (9.7.5.2.x, class C).
 */
int sc_write_middle_alone(const struct vconf *c)
{
	struct req r = rq_send(OP_WRITE_MIDDLE, c->epsn, msg[0], PMTU);

	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE Middle with no First");
}

/* send_last_alone - SEND Last after nothing: NAK invalid request. */
int sc_send_last_alone(const struct vconf *c)
{
	struct req r = rq_send(OP_SEND_LAST, c->epsn, msg[0], 64);

	TRY(expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0, "a SEND Last alone"));
	return expect_no_wc("the flushed receive");
}

/*
 * write_len_mismatch - RDMA WRITE Only whose RETH says 64 bytes but which
 * carries 60: a length error, NAK invalid request (9.7.5.2.x).
 */
int sc_write_len_mismatch(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, va_of(0), vic.mr->rkey, 64);

	r.data = msg[1];
	r.len = 60;
	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE Only shorter than its RETH");
}

/*
 * write_first_pad - RDMA WRITE First with a PMTU of data but PadCnt 3: its
 * payload is then 1021 bytes, and a First packet must carry exactly the
 * PMTU (9.7.5.2.x): NAK invalid request.
 */
int sc_write_first_pad(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_FIRST, c->epsn, va_of(0), vic.mr->rkey, 2 * PMTU);

	r.data = msg[1];
	r.len = PMTU - 3;
	r.padcnt = 3;
	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE First with a pad");
}

/*
 * send_too_long - a SEND of 200 bytes into a 64-byte receive: the
 * responder's length error (9.7.5.2.x, class C: "NAK invalid request"),
 * the receive WQE completes with a local length error (table 75, "Local
 * Length Error: the receive buffer is smaller than the incoming SEND"),
 * the QP goes to the error state and the second receive flushes.
 */
int sc_send_too_long(const struct vconf *c)
{
	struct req r = rq_send(OP_SEND_ONLY, c->epsn, msg[0], 200);

	TRY(req_send(&r));
	TRY(expect_ack(NAK_INVALID_REQ, c->epsn, 0, "a SEND longer than the receive"));
	TRY(expect_wc(0, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "the too short receive"));
	TRY(expect_event(IBV_EVENT_QP_REQ_ERR));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(1);
}

/*
 * rnr - a SEND with no receive WQE posted: RNR NAK carrying the QP's
 * min_rnr_timer in its syndrome (9.7.5.2.8), PSN of the SEND, MSN
 * unchanged; the QP stays in RTS; what follows is dropped silently until
 * the SEND is resent; resent once a receive is posted, it is taken.  A
 * later SEND finding the queue empty again gets a second RNR NAK.
 */
int sc_rnr(const struct vconf *c)
{
	uint32_t p = c->epsn;
	uint8_t rnr = AETH_TYPE_RNR | c->min_rnr_timer;
	struct req r = rq_send(OP_SEND_ONLY, p, msg[0], 128);
	struct req r1 = rq_send(OP_SEND_ONLY, psn_add(p, 1), msg[1], 129);
	struct req r2 = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 130);

	TRY(req_send(&r));
	TRY(expect_ack(rnr, p, 0, "a SEND with no receive posted"));
	TRY(req_send(&r1));
	TRY(expect_quiet("a SEND behind the RNR NAK"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(post_recv(recv_len));
	TRY(post_recv(recv_len));
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "the SEND resent"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 128, false, 0, "the SEND resent"));
	TRY(check_recv(0, msg[0], 128, "the SEND resent"));
	TRY(req_send(&r1));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2, "the next SEND"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 129, false, 0, "the next SEND"));
	TRY(req_send(&r2));
	TRY(expect_ack(rnr, psn_add(p, 2), 2, "a SEND with the queue empty again"));
	return expect_state(IBV_QPS_RTS);
}

/* An ATOMIC WRITE of the 8 bytes @val at @off, at @psn. */
static struct req rq_atomic_write(uint32_t psn, uint32_t off, const uint64_t *val)
{
	struct req r = rq_rdma(OP_ATOMIC_WRITE, psn, va_of(off), vic.mr->rkey, 8);

	r.data = (const uint8_t *)val;
	r.len = 8;
	return r;
}

/* The answer to an ATOMIC WRITE: a READ Response Only without data. */
static int expect_atomic_write_ack(uint32_t psn, uint32_t msn, const char *what)
{
	struct rsp r;

	TRY(rsp_expect(&r, what));
	CHECK(r.op == OP_READ_RESP_ONLY && r.psn == psn && r.syn == AETH_ACK_UNLIMITED &&
	      r.msn == msn && !r.len,
	      "%s: got %s, want an empty READ Response Only psn 0x%06x msn %u", what,
	      rsp_str(&r), psn, msn);
	return 0;
}

/*
 * atomic_write - an ATOMIC WRITE (IBTA 1.5) stores its 8 bytes whole and
 * is answered with a READ Response Only carrying no data; a duplicate is
 * answered again from its responder resource and not executed again
 * (memory changed meanwhile stays changed), also behind a newer one; then
 * what must be refused, with a NAK invalid request that fails the QP: an
 * RETH length other than 8 (the QP survives nothing after it, so this
 * comes last).
 */
int sc_atomic_write(const struct vconf *c)
{
	const uint32_t off = 4096;
	uint64_t *m = (uint64_t *)(vic.buf + off), v1 = 0x0102030405060708ull,
		 v2 = 0x1112131415161718ull, mine = 0x5a5a5a5a5a5a5a5aull;
	uint32_t p = c->epsn;
	struct req w1, w2, bad;

	*m = 0;
	m[1] = 0;
	w1 = rq_atomic_write(p, off, &v1);
	TRY(req_send(&w1));
	TRY(expect_atomic_write_ack(p, 1, "an ATOMIC WRITE"));
	CHECK(!memcmp(m, &v1, 8) && !m[1], "after an ATOMIC WRITE memory holds 0x%llx 0x%llx",
	      (unsigned long long)m[0], (unsigned long long)m[1]);
	*m = mine;
	TRY(req_send(&w1));
	TRY(expect_atomic_write_ack(p, 1, "a duplicate ATOMIC WRITE"));
	CHECK(*m == mine, "the duplicate ATOMIC WRITE ran again: 0x%llx", (unsigned long long)*m);
	w2 = rq_atomic_write(psn_add(p, 1), off + 8, &v2);
	TRY(req_send(&w2));
	TRY(expect_atomic_write_ack(psn_add(p, 1), 2, "a second ATOMIC WRITE"));
	CHECK(!memcmp(m + 1, &v2, 8), "after a second ATOMIC WRITE memory holds 0x%llx",
	      (unsigned long long)m[1]);
	TRY(req_send(&w1));
	/* Replays carry the current MSN (as in sc_atomics). */
	TRY(expect_atomic_write_ack(p, 2, "the first ATOMIC WRITE again, behind the second"));
	CHECK(*m == mine, "the older duplicate ran again: 0x%llx", (unsigned long long)*m);
	bad = rq_atomic_write(psn_add(p, 2), off, &v2);
	bad.dmalen = 4;
	TRY(req_send(&bad));
	TRY(expect_ack(NAK_INVALID_REQ, psn_add(p, 2), 2, "an ATOMIC WRITE of RETH length 4"));
	CHECK(*m == mine, "a refused ATOMIC WRITE changed memory: 0x%llx", (unsigned long long)*m);
	TRY(expect_event(IBV_EVENT_QP_REQ_ERR));
	return expect_state(IBV_QPS_ERR);
}

/* A FLUSH with FETH @feth of @len bytes at @off of the victim's MR. */
static struct req rq_flush(uint32_t psn, uint32_t feth, uint32_t off, uint32_t len)
{
	struct req r = rq_rdma(OP_FLUSH, psn, va_of(off), vic.mr->rkey, len);

	r.feth = feth;
	return r;
}

/*
 * flush - a FLUSH (IBTA 1.5) is answered like an ATOMIC WRITE, with a READ
 * Response Only carrying no data: of a range after a WRITE without an ACK
 * request (the WRITE's bytes are in memory when the answer comes); of the
 * whole region, whose RETH address and length are not looked at (0 and a
 * length past the region's end here); a duplicate is answered again from
 * its resource, also behind a newer one, with the current MSN.  The QP
 * has both FLUSH rights, the region only the one of global visibility.
 */
int sc_flush(const struct vconf *c)
{
	const uint32_t off = 12288;
	uint32_t p = c->epsn;
	struct req w = rq_rdma(OP_WRITE_ONLY, p, va_of(off), vic.mr->rkey, 256);
	struct req f1 = rq_flush(psn_add(p, 1), FETH_GLOBAL, off, 256);
	struct req f2 = rq_flush(psn_add(p, 2), FETH_GLOBAL | FETH_LEVEL_MR, 0, MR_SIZE * 2);

	f2.va = 0;
	w.data = msg[2];
	w.len = 256;
	w.ackreq = false;
	TRY(req_send(&w));
	TRY(req_send(&f1));
	TRY(expect_atomic_write_ack(f1.psn, 2, "a FLUSH of a range after a WRITE"));
	CHECK(!memcmp(vic.buf + off, msg[2], 256), "the WRITE before the FLUSH is not in memory");
	TRY(req_send(&f2));
	TRY(expect_atomic_write_ack(f2.psn, 3, "a FLUSH of the whole region"));
	TRY(req_send(&f1));
	TRY(expect_atomic_write_ack(f1.psn, 3, "a duplicate FLUSH behind a newer one"));
	TRY(req_send(&f2));
	TRY(expect_atomic_write_ack(f2.psn, 3, "a duplicate FLUSH"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * flush_persistent - the right of persistence is refused to a region of
 * ordinary memory (EINVAL); a FLUSH asking for persistence of a region
 * that has only the right of global visibility: NAK remote access error,
 * the QP fails.
 */
int sc_flush_persistent(const struct vconf *c)
{
	struct req r = rq_flush(c->epsn, FETH_GLOBAL | FETH_PERSISTENT, 0, 64);
	struct ibv_mr *mr = ibv_reg_mr(vic.pd, vic.buf, 4096,
				       IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT);
	int err = errno;

	if (mr)
		ibv_dereg_mr(mr);
	CHECK(!mr && err == EINVAL,
	      "registering ordinary memory with the persistence right: %s, want EINVAL",
	      mr ? "it succeeded" : strerror(err));
	return expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0,
			    "a FLUSH for persistence of a region without the right");
}

/*
 * flush_pmem - persistence of persistent memory (a device-DAX mapping,
 * -P): a WRITE into it, then a FLUSH for global visibility and persistence
 * of its range (the WRITE's bytes there when the answer comes), and one
 * for persistence of the whole region, each answered by an empty READ
 * Response Only.
 */
int sc_flush_pmem(const struct vconf *c)
{
	const uint32_t off = 8192;
	uint32_t p = c->epsn;
	struct req w, f1, f2;

	CHECK(vic.pm, "no persistent memory to flush (sroce_peer -P DAX_DEVICE)");
	memset(vic.pmbuf + off, 0, 512);
	w = rq_rdma(OP_WRITE_ONLY, p, (uintptr_t)vic.pmbuf + off, vic.pm->rkey, 512);
	w.data = msg[3];
	w.len = 512;
	w.ackreq = false;
	f1 = rq_rdma(OP_FLUSH, psn_add(p, 1), (uintptr_t)vic.pmbuf + off, vic.pm->rkey, 512);
	f1.feth = FETH_GLOBAL | FETH_PERSISTENT;
	f2 = rq_rdma(OP_FLUSH, psn_add(p, 2), 0, vic.pm->rkey, 0);
	f2.feth = FETH_PERSISTENT | FETH_LEVEL_MR;
	TRY(req_send(&w));
	TRY(req_send(&f1));
	TRY(expect_atomic_write_ack(f1.psn, 2, "a FLUSH for persistence of a range"));
	CHECK(!memcmp(vic.pmbuf + off, msg[3], 512),
	      "the WRITE before the FLUSH is not in persistent memory");
	TRY(req_send(&f2));
	TRY(expect_atomic_write_ack(f2.psn, 3, "a FLUSH for persistence of the whole region"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * flush_bad_level - a FLUSH of selectivity level 2 (reserved): NAK invalid
 * request, the QP fails.
 */
int sc_flush_bad_level(const struct vconf *c)
{
	struct req r = rq_flush(c->epsn, FETH_GLOBAL | 0x20, 0, 64);

	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a FLUSH of a reserved selectivity level");
}

/*
 * atomics - CmpSwap and FetchAdd are answered with an atomic ACK carrying
 * the value before the operation (9.7.5.1.x); a CmpSwap whose compare
 * fails leaves memory alone; a duplicate atomic is answered from the saved
 * result and not executed again (9.7.5.1.4: C9-? atomics are not
 * idempotent), while both are within the max_dest_rd_atomic (2) saved
 * ones.  The MSN of a replayed answer: sroce puts the current MSN there,
 * rdma_rxe the one of the first answer; both are accepted for the older
 * duplicate.
 */
int sc_atomics(const struct vconf *c)
{
	const uint32_t off = 8192;
	uint64_t *m = (uint64_t *)(vic.buf + off), v0 = 0x1111222233334444ull,
		 v1 = 0x5555666677778888ull, add = 0x100000001ull;
	uint32_t p = c->epsn;
	struct req cs, cs2, fa;

	*m = v0;
	cs = rq(OP_CMP_SWAP, p);
	cs.va = va_of(off);
	cs.rkey = vic.mr->rkey;
	cs.compare = v0;
	cs.swap_add = v1;
	TRY(req_send(&cs));
	TRY(expect_atomic_ack(p, v0, 1, 1, "CmpSwap"));
	CHECK(*m == v1, "after CmpSwap memory holds 0x%llx", (unsigned long long)*m);
	cs2 = cs;
	cs2.psn = psn_add(p, 1);
	cs2.swap_add = 0xdeadull;	/* compare v0 fails now */
	TRY(req_send(&cs2));
	TRY(expect_atomic_ack(psn_add(p, 1), v1, 2, 2, "a failing CmpSwap"));
	CHECK(*m == v1, "a failing CmpSwap changed memory to 0x%llx", (unsigned long long)*m);
	fa = rq(OP_FETCH_ADD, psn_add(p, 2));
	fa.va = va_of(off);
	fa.rkey = vic.mr->rkey;
	fa.swap_add = add;
	TRY(req_send(&fa));
	TRY(expect_atomic_ack(psn_add(p, 2), v1, 3, 3, "FetchAdd"));
	CHECK(*m == v1 + add, "after FetchAdd memory holds 0x%llx", (unsigned long long)*m);
	TRY(req_send(&fa));
	TRY(expect_atomic_ack(psn_add(p, 2), v1, 3, 3, "a duplicate FetchAdd"));
	CHECK(*m == v1 + add, "the duplicate FetchAdd ran again: 0x%llx", (unsigned long long)*m);
	cs2.swap_add = 0xbeefull;
	cs2.compare = v1 + add;		/* would succeed if it ran again */
	TRY(req_send(&cs2));
	TRY(expect_atomic_ack(psn_add(p, 1), v1, 3, 2, "a duplicate CmpSwap"));
	CHECK(*m == v1 + add, "the duplicate CmpSwap ran again: 0x%llx", (unsigned long long)*m);
	return expect_state(IBV_QPS_RTS);
}
