// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * send.c - sroce_rc_test: the SEND cases.
 */

#include "rc.h"

/* --- cases: SEND ---------------------------------------------------------------- */

static const size_t send_sizes[] = { 0, 1, 4095, 4096, 65537, MIB };

/* A sends @len bytes to B's posted receive; both completions and the data check out. */
static int send_one(struct pair *p, struct buf *src, struct buf *dst, size_t len,
		    uint64_t id, uint32_t imm, const char *what)
{
	enum ibv_wr_opcode op = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	struct want w = imm ? w_recv_imm(id, &p->b, (uint32_t)len, IBV_WC_RECV, imm) :
			      w_recv(id, &p->b, (uint32_t)len);

	buf_clear(dst);
	pattern(src->p, len, (uint32_t)id);
	TRY(post_recv_buf(&p->b, id, dst, 0, dst->len));
	TRY(post_send_buf(&p->a, id, op, src, len, imm));
	TRY(expect_wc(p->b.rcq, &w, what));
	TRY(want_send(&p->a, id, IBV_WC_SEND, what));
	return check_buf(dst, 0, src->p, len, what);
}

static bool mtu_usable(enum ibv_mtu m)
{
	return m <= devs[0].port.active_mtu && m <= devs[1].port.active_mtu;
}

int case_send(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	enum ibv_mtu m;
	size_t i;
	char what[64];

	CHECK(!opt.send_mtu || mtu_usable(opt.send_mtu),
	      "the ports' active MTUs (%d, %d) are below the %d asked for (-M)",
	      128 << devs[0].port.active_mtu, 128 << devs[1].port.active_mtu, 128 << opt.send_mtu);
	TRY(buf_new(&src, &devs[0], MIB, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], MIB, IBV_ACCESS_LOCAL_WRITE));
	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++) {
		if (!mtu_usable(m))
			continue;
		conf_init(&c);
		c.mtu = m;
		TRY(pair_up(&p, &c));
		vlog("  MTU %d", 128 << m);
		for (i = 0; i < ARRAY_SIZE(send_sizes); i++) {
			snprintf(what, sizeof(what), "send %zu bytes at MTU %d", send_sizes[i], 128 << m);
			TRY(send_one(&p, &src, &dst, send_sizes[i], i + 1, 0, what));
		}
	}
	return 0;
}

int case_send_imm(void)
{
	static const size_t sizes[] = { 0, 1, 65537 };
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	size_t i;
	char what[64];

	TRY(buf_new(&src, &devs[0], 65537, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 65537, IBV_ACCESS_LOCAL_WRITE));
	conf_init(&c);
	TRY(pair_up(&p, &c));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "send_imm %zu bytes", sizes[i]);
		TRY(send_one(&p, &src, &dst, sizes[i], i + 1, htobe32(0x12345678u + (uint32_t)i), what));
	}
	return 0;
}

/* Gather from @ns SGEs (separate MRs, odd lengths), scatter over @nr receive SGEs with gaps. */
int case_send_sge(void)
{
	enum { MAXS = 16 };
	struct buf src[MAXS], dst, all;
	struct ibv_sge ss[MAXS], rs[MAXS];
	size_t total = 0, per, stride, off, got, k;
	struct qp_conf c;
	struct pair p;
	int ns, nr, i;

	conf_init(&c);
	ns = c.cap.max_send_sge = (uint32_t)min_int(devs[0].attr.max_sge, MAXS);
	nr = c.cap.max_recv_sge = (uint32_t)min_int(devs[1].attr.max_sge, MAXS);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&all, &devs[0], (size_t)MAXS * 3000, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < ns; i++) {
		size_t len = 1 + ((size_t)i * 1231 + 700) % 3000;

		TRY(buf_new(&src[i], &devs[0], len, IBV_ACCESS_LOCAL_WRITE));
		pattern(src[i].p, len, 100 + i);
		memcpy(all.p + total, src[i].p, len);
		ss[i] = sge_of(&src[i], 0, len);
		total += len;
	}
	per = total / nr + 7;
	stride = (per + 5 + 64 + 63) & ~(size_t)63;
	TRY(buf_new(&dst, &devs[1], (size_t)nr * stride, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < nr; i++)
		rs[i] = sge_of(&dst, (size_t)i * stride + 5, per);
	TRY(post_recv(&p.b, 1, rs, nr));
	TRY(post_op(&p.a, 1, &(struct op){ .op = IBV_WR_SEND, .sg = ss, .nsge = ns }));
	TRY(want_recv(&p.b, 1, (uint32_t)total, "send from SGEs"));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "send from SGEs"));
	vlog("  %d send SGEs, %d receive SGEs, %zu bytes", ns, nr, total);
	for (i = 0, got = 0; i < nr; i++, got += k) {
		off = (size_t)i * stride;
		k = total - got < per ? total - got : per;
		TRY(check_fill(dst.p + off, 5, "scatter: before an SGE"));
		TRY(check_bytes(dst.p + off + 5, all.p + got, k, "scatter"));
		TRY(check_fill(dst.p + off + 5 + k, stride - 5 - k, "scatter: after an SGE"));
	}
	if (ns < 2 || nr < 2)
		return skipf("max_sge %d and %d: no list to gather from or scatter to",
			     devs[0].attr.max_sge, devs[1].attr.max_sge);
	return 0;
}

/* Inline data is copied at post time: the source is overwritten right after. */
static int send_inline_one(struct pair *p, struct buf *dst, uint8_t *src, size_t len, int nsge,
			   uint64_t id)
{
	uint8_t copy[4096];
	struct ibv_sge s[2];
	char what[64];
	size_t half = len / 2;

	snprintf(what, sizeof(what), "inline send of %zu bytes in %d SGEs", len, nsge);
	pattern(src, len, (uint32_t)id);
	memcpy(copy, src, len);
	/* The lkey is not checked for inline data: a bogus one must do. */
	s[0] = (struct ibv_sge){ .addr = (uintptr_t)src, .length = (uint32_t)(nsge == 2 ? half : len),
				 .lkey = 0xbad };
	s[1] = (struct ibv_sge){ .addr = (uintptr_t)src + half, .length = (uint32_t)(len - half),
				 .lkey = 0xbad };
	buf_clear(dst);
	TRY(post_recv_buf(&p->b, id, dst, 0, dst->len));
	TRY(post_op(&p->a, id, &(struct op){ .op = IBV_WR_SEND, .sg = s, .nsge = len ? nsge : 0,
					     .flags = IBV_SEND_INLINE }));
	memset(src, 0x3c, len);
	TRY(want_recv(&p->b, id, (uint32_t)len, what));
	TRY(want_send(&p->a, id, IBV_WC_SEND, what));
	return check_buf(dst, 0, copy, len, what);
}

int case_send_inline(void)
{
	uint8_t src[4096];
	struct qp_conf c;
	struct pair p;
	struct buf dst;
	uint32_t max;
	size_t sizes[4], i;

	TRY(probe_inline(&devs[0], &max));
	if (!max)
		return skipf("no inline data (a QP with 1 byte of it is refused with EINVAL)");
	if (max > sizeof(src))
		max = sizeof(src);
	conf_init(&c);
	c.cap.max_inline_data = max;
	c.cap.max_send_sge = devs[0].attr.max_sge >= 2 ? 2 : 1;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	sizes[0] = 0;
	sizes[1] = max ? 1 : 0;
	sizes[2] = max / 2;
	sizes[3] = max;
	vlog("  max_inline_data %u", max);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		TRY(send_inline_one(&p, &dst, src, sizes[i], 1, i + 1));
	if (c.cap.max_send_sge < 2)
		return skipf("max_sge 1: no inline send gathered from two SGEs");
	if (max >= 2)
		TRY(send_inline_one(&p, &dst, src, max, 2, 10));
	return 0;
}

/* A receive CQ armed for solicited completions only wakes up for those. */
int case_send_solicited(void)
{
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	c.events = true;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 64 * 3, IBV_ACCESS_LOCAL_WRITE));
	TRY(arm(p.b.rcq, 1));
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 64));
	TRY(post_recv_buf(&p.b, 2, &dst, 64, 64));
	TRY(post_recv_buf(&p.b, 3, &dst, 128, 64));
	TRY(post_send_buf(&p.a, 1, IBV_WR_SEND, &src, 10, 0));
	TRY(want_recv(&p.b, 1, 10, "unsolicited send"));
	TRY(want_send(&p.a, 1, IBV_WC_SEND, "unsolicited send"));
	TRY(expect_no_event(p.b.ch, "unsolicited send to a CQ armed for solicited only"));
	TRY(post_op(&p.a, 2, &(struct op){ .op = IBV_WR_SEND, .sg = &(struct ibv_sge){
				addr_of(&src, 0), 20, src.mr->lkey }, .nsge = 1,
				.flags = IBV_SEND_SOLICITED }));
	TRY(expect_event(p.b.ch, p.b.rcq, "solicited send"));
	TRY(want_recv(&p.b, 2, 20, "solicited send"));
	TRY(want_send(&p.a, 2, IBV_WC_SEND, "solicited send"));
	/* Armed for any completion, an unsolicited one raises an event. */
	TRY(arm(p.b.rcq, 0));
	TRY(post_send_buf(&p.a, 3, IBV_WR_SEND, &src, 30, 0));
	TRY(expect_event(p.b.ch, p.b.rcq, "unsolicited send to a CQ armed for any completion"));
	TRY(want_recv(&p.b, 3, 30, "unsolicited send"));
	return want_send(&p.a, 3, IBV_WC_SEND, "unsolicited send");
}

/*
 * An unsuccessful completion counts as solicited: a receive CQ armed for
 * solicited completions only wakes up for a receive flushed when its QP
 * goes to ERR (RDS on Linux 6.12.95 waits for that event to reap its
 * receives before it tears a connection down).  ibv_req_notify_cq(3): "A
 * CQE is solicited if it is a receive completion for a message with the
 * Solicited Event header bit set, or if the status is not successful."
 *
 * rxe deviation: rxe_cq_post() looks at the Solicited Event bit alone, so
 * the flushed receive raises no event.
 */
int case_flush_solicited(void)
{
	struct buf dst;
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	c.events = true;
	TRY(pair_up(&p, &c));
	TRY(buf_new(&dst, &devs[1], 64, IBV_ACCESS_LOCAL_WRITE));
	TRY(post_recv_buf(&p.b, 1, &dst, 0, 64));
	TRY(arm(p.b.rcq, 1));
	TRY(expect_no_event(p.b.ch, "nothing completed yet"));
	TRY(qp_to_err(&p.b));
	TRY(expect_event(p.b.ch, p.b.rcq, "receive flushed, CQ armed for solicited only"));
	TRY(want_err(&p.b, p.b.rcq, 1, IBV_WC_WR_FLUSH_ERR, "receive flushed"));
	return expect_empty(p.b.rcq, 0, "after the flush");
}

/* Rounds of 8 unsignaled sends and a signaled one, more of them than the SQ holds. */
int case_send_unsignaled(void)
{
	enum { BATCH = 9, LEN = 100 };
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	int round, rounds, i;
	uint64_t id;

	conf_init(&c);
	c.cap.max_send_wr = 16;
	TRY(pair_up(&p, &c));
	rounds = min_int((int)p.a.cap.max_send_wr / BATCH + 2, 64);
	TRY(buf_new(&src, &devs[0], BATCH * LEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], BATCH * LEN, IBV_ACCESS_LOCAL_WRITE));
	for (round = 0; round < rounds; round++) {
		buf_clear(&dst);
		pattern(src.p, BATCH * LEN, round);
		for (i = 0; i < BATCH; i++)
			TRY(post_recv_buf(&p.b, round * 100 + i, &dst, i * LEN, LEN));
		for (i = 0; i < BATCH; i++) {
			struct ibv_sge s = sge_of(&src, i * LEN, LEN);

			TRY(post_op(&p.a, round * 100 + i, &(struct op){ .op = IBV_WR_SEND,
				.sg = &s, .nsge = 1, .unsignaled = i < BATCH - 1 }));
		}
		for (i = 0; i < BATCH; i++)
			TRY(want_recv(&p.b, round * 100 + i, LEN, "unsignaled sends: receive"));
		id = round * 100 + BATCH - 1;
		TRY(want_send(&p.a, id, IBV_WC_SEND, "the signaled send after unsignaled ones"));
		TRY(expect_empty(p.a.scq, 50, "unsignaled sends"));
		TRY(check_buf(&dst, 0, src.p, BATCH * LEN, "unsignaled sends"));
	}
	return 0;
}
