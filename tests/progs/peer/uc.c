// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uc.c - sroce_peer: the scenarios with the victim a UC QP (uc_*).
 */

#include "peer.h"

/* --- UC: the victim a UC QP ------------------------------------------------- */

/*
 * On UC nothing goes back: no ACK, no NAK, whatever comes (every request
 * the peer sends asks for an ACK, and every scenario ends by checking that
 * the peer received nothing).  A lost packet loses its message and nothing
 * else: the responder drops the rest of the message (rx_drop_uc) and starts
 * over at the next First or Only, whatever its PSN (IBTA's UC rules, as
 * rdma_rxe and hardware follow them).  Errors that fail an RC QP (bad
 * keys, a message too long) drop the message on UC and leave the QP in RTS.
 */

/*
 * Send a UC SEND of @len bytes of @data (or, with @write, an RDMA WRITE of
 * them to the victim's buffer at @off, R_Key @rkey) from PSN @psn, one
 * packet per PMTU, except those whose bit is set in @lost.
 */
static int uc_msg(bool write, uint32_t psn, const uint8_t *data, uint32_t len, uint32_t off,
		  uint32_t rkey, unsigned int lost)
{
	uint32_t n = len ? (len + PMTU - 1) / PMTU : 1, i, plen;
	struct req r;

	for (i = 0; i < n; i++) {
		plen = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		r = rq_send(msg_op(write, i, n), psn_add(psn, i), data + i * PMTU, plen);
		if (write && !i) {
			r.va = va_of(off);
			r.rkey = rkey;
			r.dmalen = len;
		}
		if (!(lost & (1u << i)))
			TRY(req_send(&r));
	}
	return 0;
}

/* The victim's buffer at @off comes to hold @len bytes of @data (a WRITE). */
static int wait_landed(uint32_t off, const uint8_t *data, uint32_t len, const char *what)
{
	long end = now_ms() + opt.timeout_ms;

	while (memcmp(vic.buf + off, data, len)) {
		CHECK(now_ms() < end, "%s: not in memory within %d ms", what, opt.timeout_ms);
		usleep(1000);
	}
	return 0;
}

/* The victim's buffer at @off still holds what @keep saved of it. */
static int unchanged(uint32_t off, const uint8_t *keep, uint32_t len, const char *what)
{
	CHECK(!memcmp(vic.buf + off, keep, len), "%s: the victim's memory changed", what);
	return 0;
}

/*
 * uc_lost_middle - a three-packet SEND loses its Middle: its Last is
 * dropped, nothing completes; the next SEND (an Only) takes the receive the
 * broken one had begun, and a whole three-packet SEND after it arrives
 * whole.  The PSNs wrap from 0xffffff to 0.
 */
int sc_uc_lost_middle(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300;
	const uint8_t *data = (const uint8_t *)msg;	/* 2348 of its bytes */

	TRY(uc_msg(false, p, data, len, 0, 0, 1u << 1));
	TRY(expect_no_wc("a SEND whose Middle was lost"));
	TRY(uc_msg(false, psn_add(p, 3), msg[3], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "the SEND after"));
	TRY(check_recv(0, msg[3], 100, "the SEND after the broken one"));
	TRY(uc_msg(false, psn_add(p, 4), data, len, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "a whole SEND"));
	TRY(check_recv(1, data, len, "a whole three-packet SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_interrupted - messages cut short by the loss of their tails (no
 * packet sroce gets is dropped, so no counter moves): a SEND's Middle and
 * Last lost, the next SEND (its PSN three ahead) lands in the receive the
 * lost one had begun; a WRITE's Middle and Last lost, its First's bytes may
 * stay but no byte past them is written, and the SEND after it is whole.
 * Last, a First and, at the very next PSN, an Only (no requester sends
 * that, the opcodes are out of sequence): the Only is a new message.
 */
int sc_uc_interrupted(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300, woff = 64 * 1024;
	const uint8_t *data = (const uint8_t *)msg;
	uint8_t keep[2 * PMTU];

	TRY(uc_msg(false, p, data, len, 0, 0, 6));
	TRY(uc_msg(false, psn_add(p, 3), msg[3], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND after a cut one"));
	TRY(check_recv(0, msg[3], 100, "a SEND after a cut SEND"));
	memcpy(keep, vic.buf + woff + PMTU, sizeof(keep));
	TRY(uc_msg(true, psn_add(p, 4), data, len, woff, vic.mr->rkey, 6));
	TRY(uc_msg(false, psn_add(p, 7), data, len, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "a SEND after a cut WRITE"));
	TRY(check_recv(1, data, len, "a SEND after a cut WRITE"));
	TRY(unchanged(woff + PMTU, keep, sizeof(keep), "the lost packets of a WRITE"));
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 10), data, len, 0, 0, 6));
	TRY(uc_msg(false, psn_add(p, 11), msg[2], 200, 0, 0, 0));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 200, false, 0, "an Only after a First"));
	TRY(check_recv(2, msg[2], 200, "an Only right after a First"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_lost_first - a three-packet RDMA WRITE loses its First (and with it
 * the RETH): its Middle and Last are dropped, memory untouched.  One that
 * loses its Middle: the First's bytes land, the Last is dropped.  Each time
 * a one-packet WRITE elsewhere, waited for, shows sroce has taken what came
 * before.  Sent whole, the WRITE lands whole.
 */
int sc_uc_lost_first(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300, off = 8192, off2 = 16384;
	const uint8_t *data = (const uint8_t *)msg;
	uint32_t rkey = vic.mr->rkey;
	uint8_t keep[3 * PMTU];

	memcpy(keep, vic.buf + off, sizeof(keep));
	TRY(uc_msg(true, p, data, len, off, rkey, 1u << 0));
	TRY(uc_msg(true, psn_add(p, 3), msg[3], 64, off2, rkey, 0));
	TRY(wait_landed(off2, msg[3], 64, "a WRITE after one that lost its First"));
	TRY(unchanged(off, keep, sizeof(keep), "a WRITE that lost its First"));
	TRY(uc_msg(true, psn_add(p, 4), data, len, off, rkey, 1u << 1));
	TRY(uc_msg(true, psn_add(p, 7), msg[2], 64, off2, rkey, 0));
	TRY(wait_landed(off2, msg[2], 64, "a WRITE after one that lost its Middle"));
	TRY(unchanged(off + PMTU, keep + PMTU, len - PMTU, "a WRITE that lost its Middle"));
	TRY(uc_msg(true, psn_add(p, 8), data, len, off, rkey, 0));
	TRY(wait_landed(off, data, len, "a whole three-packet WRITE"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_no_recv - messages that need a receive WQE when none is posted: a
 * SEND, a WRITE with immediate (not written either) and a two-packet SEND
 * (its First dropped for want of a receive, its Last as the rest of a
 * broken message) are dropped, no RNR NAK, the QP stays in RTS with no
 * async event.  Once receives are posted, the next SEND and WRITE with
 * immediate complete.
 */
int sc_uc_no_recv(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 4096, off2 = 8192, imm = htonl(0x5eed0001);
	const uint8_t *data = (const uint8_t *)msg;
	long long uc0, norecv0;
	uint8_t keep[16];
	struct req r;

	memcpy(keep, vic.buf + off, sizeof(keep));
	TRY(cnt_get("rx_drop_uc", &uc0));
	TRY(cnt_get("rx_drop_no_recv", &norecv0));
	TRY(uc_msg(false, p, msg[0], 128, 0, 0, 0));
	r = rq_rdma(UC(OP_WRITE_ONLY_IMM), psn_add(p, 1), va_of(off), vic.mr->rkey, 16);
	r.data = msg[1];
	r.len = 16;
	r.imm = imm;
	TRY(req_send(&r));
	TRY(uc_msg(false, psn_add(p, 2), data, PMTU + 200, 0, 0, 0));
	/* Dropped, all of them, before a receive is posted. */
	TRY(cnt_wait("rx_drop_no_recv", norecv0 + 3, "three messages with no receive posted"));
	TRY(cnt_wait("rx_drop_uc", uc0 + 1, "the Last of a SEND with no receive posted"));
	TRY(expect_no_wc("three messages with no receive posted"));
	TRY(expect_no_event("three messages with no receive posted"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(post_recv(recv_len));
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 4), msg[0], 128, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 128, false, 0, "a SEND, receives posted"));
	TRY(check_recv(0, msg[0], 128, "a SEND once receives are posted"));
	r.psn = psn_add(p, 5);
	r.va = va_of(off2);
	TRY(req_send(&r));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 16, true, imm,
		      "a WRITE with immediate, receives posted"));
	CHECK(!memcmp(vic.buf + off2, msg[1], 16), "the WRITE with immediate did not land");
	return unchanged(off, keep, sizeof(keep), "a WRITE with immediate and no receive");
}

/*
 * uc_bad_access - WRITEs a UC responder must refuse: an R_Key nobody has
 * (as an Only, and as a First whose Last follows), an MR without remote
 * write, a range running past its MR's end.  Each message is dropped,
 * memory untouched, no completion, no async event, the QP stays in RTS;
 * the SEND and the WRITE after them are taken.
 */
int sc_uc_bad_access(const struct vconf *c)
{
	uint32_t p = c->epsn, rkey = vic.mr->rkey, bad = vic.mr->rkey ^ 0x80;
	uint8_t keep[2 * PMTU], rokeep[64], endkeep[32];
	struct req r;

	memcpy(keep, vic.buf, sizeof(keep));
	memcpy(endkeep, vic.buf + MR_SIZE - 32, sizeof(endkeep));
	memcpy(rokeep, vic.robuf, sizeof(rokeep));
	TRY(uc_msg(true, p, msg[1], 64, 0, bad, 0));
	TRY(uc_msg(true, psn_add(p, 1), msg[1], PMTU + 200, 0, bad, 0));
	r = rq_rdma(UC(OP_WRITE_ONLY), psn_add(p, 3), (uintptr_t)vic.robuf, vic.ro->rkey, 64);
	r.data = msg[1];
	r.len = 64;
	TRY(req_send(&r));
	TRY(uc_msg(true, psn_add(p, 4), msg[1], 64, MR_SIZE - 32, rkey, 0));
	TRY(uc_msg(false, psn_add(p, 5), msg[2], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND after bad WRITEs"));
	TRY(unchanged(0, keep, sizeof(keep), "WRITEs with an R_Key nobody has"));
	CHECK(!memcmp(vic.robuf, rokeep, sizeof(rokeep)), "a WRITE to a read-only MR landed");
	TRY(unchanged(MR_SIZE - 32, endkeep, sizeof(endkeep), "a WRITE past the MR's end"));
	TRY(uc_msg(true, psn_add(p, 6), msg[1], 64, 0, rkey, 0));
	TRY(wait_landed(0, msg[1], 64, "a WRITE after bad WRITEs"));
	TRY(expect_no_event("WRITEs with bad keys"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_send_too_long - a SEND longer than its 64-byte receive: the receive
 * completes with a local length error (so the application learns a message
 * was lost; rdma_rxe drops it silently and keeps the receive), nothing is
 * written past the 64 bytes, the rest of the message is dropped, the QP
 * stays in RTS with no async event.  Once as an Only, once as a
 * three-packet SEND; a SEND that fits then completes.
 */
int sc_uc_send_too_long(const struct vconf *c)
{
	uint32_t p = c->epsn, i;
	const uint8_t *data = (const uint8_t *)msg;

	TRY(uc_msg(false, p, msg[0], 200, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "a SEND Only too long"));
	TRY(uc_msg(false, psn_add(p, 1), data, 2 * PMTU + 300, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "a long SEND too long"));
	for (i = 0; i < 2 * RECV_SLOT; i++)
		CHECK(!vic.rbuf[i], "a SEND too long wrote byte %u of the receive buffers", i);
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 4), msg[2], 50, 0, 0, 0));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 50, false, 0, "a SEND that fits"));
	TRY(check_recv(2, msg[2], 50, "a SEND that fits"));
	TRY(expect_no_event("SENDs too long"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_dup_only - UC has no duplicate detection: an Only is a new message
 * whatever its PSN, so a SEND Only the wire duplicated is delivered twice
 * (as rdma_rxe delivers it); the next SEND takes the third receive.
 */
int sc_uc_dup_only(const struct vconf *c)
{
	uint32_t p = c->epsn;

	TRY(uc_msg(false, p, msg[0], 80, 0, 0, 0));
	TRY(uc_msg(false, p, msg[0], 80, 0, 0, 0));
	TRY(uc_msg(false, psn_add(p, 1), msg[1], 90, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 80, false, 0, "a SEND Only"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 80, false, 0, "the same SEND Only again"));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 90, false, 0, "the next SEND"));
	TRY(check_recv(0, msg[0], 80, "a SEND Only"));
	TRY(check_recv(1, msg[0], 80, "the same SEND Only again"));
	TRY(check_recv(2, msg[1], 90, "the next SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_foreign_opcodes - packets for the UC QP with opcodes it cannot take:
 * an RC SEND and a UD SEND (another transport: rx_drop_qp_type), a READ
 * and a CmpSwap in UC's opcode space (no such UC opcodes: rx_drop_opcode).
 * None of them moves the expected PSN: a UC SEND with the same PSN is
 * taken.
 */
int sc_uc_foreign_opcodes(const struct vconf *c)
{
	static const uint8_t ops[] = { OP_SEND_ONLY, 0x64 /* UD SEND Only */, UC(OP_READ_REQ),
				       UC(OP_CMP_SWAP) };
	uint32_t p = c->epsn, i;
	struct req r;

	for (i = 0; i < sizeof(ops); i++) {
		r = rq_send(ops[i], p, msg[0], 64);
		TRY(req_send(&r));
	}
	TRY(uc_msg(false, p, msg[1], 64, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "a UC SEND after others"));
	TRY(check_recv(0, msg[1], 64, "a UC SEND after foreign opcodes"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_req_messages - the victim as a UC requester: a three-packet SEND, a
 * one-packet and a three-packet RDMA WRITE go out with UC opcodes, PSNs in
 * sequence (wrapping), the right bytes and RETHs, AckReq never set, and
 * complete with no ACK from the peer; nothing is ever sent again.  READs
 * and atomics cannot be posted on UC.
 */
int sc_uc_req_messages(const struct vconf *c)
{
	uint32_t p = c->sq_psn, len = 2 * PMTU + 300;
	static const enum ibv_wr_opcode no[] = { IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)vic.buf, .length = 8, .lkey = vic.mr->lkey };
	unsigned int i;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, len, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 100, 0));
	TRY(post_send_wr(3, IBV_WR_RDMA_WRITE, 8192, len, 0));
	TRY(expect_msg(false, p, 0, 0, len, "a UC SEND"));
	TRY(expect_msg(true, psn_add(p, 3), 0, 4096, 100, "a UC WRITE"));
	TRY(expect_msg(true, psn_add(p, 4), 0, 8192, len, "a three-packet UC WRITE"));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "a UC SEND"));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "a UC WRITE"));
	TRY(expect_swc(3, IBV_WC_RDMA_WRITE, 0, "a three-packet UC WRITE"));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		wr.wr_id = 10 + i;
		wr.opcode = no[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = REMOTE_VA;
		wr.wr.rdma.rkey = REMOTE_RKEY;
		wr.wr.atomic.remote_addr = REMOTE_VA;
		wr.wr.atomic.rkey = REMOTE_RKEY;
		CHECK(ibv_post_send(vic.qp, &wr, &bad), "ibv_post_send of opcode %d on UC succeeded",
		      no[i]);
	}
	return expect_state(IBV_QPS_RTS);
}

/*
 * cnp - a congestion notification packet for the victim QP (BTH opcode
 * 0x81, 16 reserved bytes) from its peer: its reaction point takes it
 * (rp_cnp_handled) and cuts its rate (rp_rate_cuts); one cut short (8
 * bytes) is rx_drop_short.  Neither is answered nor moves the QP: a SEND
 * is taken.
 */
int sc_cnp(const struct vconf *c)
{
	static const uint8_t zero[16];
	struct req r = rq_send(OP_CNP, 0, zero, sizeof(zero));

	r.ackreq = false;
	TRY(req_send(&r));
	r.len = 8;
	TRY(req_send(&r));
	r = rq_send(OP_SEND_ONLY, c->epsn, msg[0], 32);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, c->epsn, 1, "a SEND after CNPs"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 32, false, 0, "a SEND after CNPs"));
	return expect_state(IBV_QPS_RTS);
}
