// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tm.c - sroce_rc_test: tag matching (rdma-core's
 * Documentation/tag_matching.md).  Side A sends through an ordinary RC QP;
 * side B receives through a QP of a tag-matching SRQ, whose completions,
 * list operations' and receives' alike, come to one extended CQ with tag
 * information.  Every byte placed is checked with the bytes around it,
 * and every completion: its opcode, flags, length, tag and app_ctx.
 *
 * tm: eager messages of one packet and of several (two completions),
 * masks and the order entries are taken in, DEL (and DEL of an entry a
 * message took: IBV_WC_TM_ERR), unexpected messages (the whole message,
 * header included, in an SRQ buffer) and the synchronisation they force,
 * NO_TAG, messages with no header or a FIN header, rendezvous (the
 * receiver's RDMA READ of 64 KiB, the FIN the sender gets back, nothing on
 * the receiving QP's own send CQ), a rendezvous too large for its entry
 * (IBV_WC_TM_RNDV_INCOMPLETE), and a full list (ENOMEM).
 * tm_errors: what is refused (list operations on an ordinary SRQ, bad
 * opcodes and SGE counts, UC and UD QPs on a tag-matching SRQ, list
 * sizes of 0 and past the device's), and a rendezvous whose key the
 * sender never gave (the READ fails, the entry completes in error).
 */

#include <infiniband/tm_types.h>

#include "rc.h"

enum {
	TM_TAGS = 4,		/* the list's size: ENOMEM past it */
	TM_SRQ_BUFS = 8,	/* unexpected messages' buffers */
	TM_BUF = 8192,		/* each of them, and an entry's usual buffer */
	RNDV_LEN = 64 * 1024,	/* what a rendezvous moves */
	HDRS = sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh),
};

/* B's side: the tag-matching SRQ, its CQ, the QP. */
struct tm_rx {
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ep ep;
	uint32_t unexp;		/* unexpected messages seen: what SYNC reports */
};

/* A completion of the tag-matching CQ, everything the cases look at. */
struct tm_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	uint32_t qp_num;
	struct ibv_wc_tm_info tm;
};

static int need_tm(struct dev *d, struct ibv_tm_caps *caps)
{
	struct ibv_device_attr_ex ax = {};
	int err = ibv_query_device_ex(d->ctx, NULL, &ax);

	CHECK(!err, "ibv_query_device_ex(%s): %s", d->name, estr(err));
	if (!(ax.tm_caps.flags & IBV_TM_CAP_RC))
		return skipf("no tag matching on RC (tm_caps.flags)");
	*caps = ax.tm_caps;
	return 0;
}

static int tm_cq_new(struct dev *d, struct ibv_cq_ex **cqx)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};

	*cqx = ibv_create_cq_ex(d->ctx, &a);
	CHECK(*cqx, "ibv_create_cq_ex(%s, TM info): %s", d->name, strerror(errno));
	track(R_CQ, ibv_cq_ex_to_cq(*cqx));
	return 0;
}

static struct ibv_srq *tm_srq_new(struct dev *d, struct ibv_cq *cq, uint32_t tags)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 32, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			     IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = d->pd,
		.cq = cq,
		.tm_cap = { .max_num_tags = tags, .max_ops = 16 },
	};

	return ibv_create_srq_ex(d->ctx, &a);
}

/* A QP of type @type on @srq; NULL and errno on failure. */
static struct ibv_qp *tm_qp_new(struct dev *d, struct ibv_cq *scq, struct ibv_cq *rcq,
				struct ibv_srq *srq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = { .max_send_wr = 0, .max_send_sge = 0 },
		.qp_type = type,
	};

	return ibv_create_qp(d->pd, &a);
}

/*
 * A: an ordinary RC QP; B: the tag-matching SRQ (@tags entries) and its
 * QP, which has no send queue of its own to speak of: the rendezvous
 * READs and FINs are the device's.  Connected.
 */
static int tm_up(struct ep *a, struct tm_rx *b, struct qp_conf *c, uint32_t tags)
{
	struct peer_info to_a, to_b;
	struct dev *d = &devs[1];

	conf_init(c);
	TRY(ep_create(a, 0, c));
	memset(b, 0, sizeof(*b));
	TRY(tm_cq_new(d, &b->cqx));
	b->srq = track(R_SRQ, tm_srq_new(d, ibv_cq_ex_to_cq(b->cqx), tags));
	CHECK(b->srq, "ibv_create_srq_ex(%s, TM, %u tags): %s", d->name, tags, strerror(errno));
	b->ep.d = d;
	b->ep.psn = c->psn_b;
	b->ep.rcq = ibv_cq_ex_to_cq(b->cqx);
	b->ep.scq = cq_new(d, c->cqe, NULL);
	if (!b->ep.scq)
		return -1;
	b->ep.qp = track(R_QP, tm_qp_new(d, b->ep.scq, b->ep.rcq, b->srq, IBV_QPT_RC));
	CHECK(b->ep.qp, "ibv_create_qp(%s, RC on a TM SRQ): %s", d->name, strerror(errno));
	to_a = info_of(a);
	to_b = info_of(&b->ep);
	TRY(ep_connect(a, &to_b, c));
	return ep_connect(&b->ep, &to_a, c);
}

static int tm_poll(struct ibv_cq_ex *cqx, struct tm_wc *w, const char *what)
{
	TRY(cqx_start(cqx, what));
	w->wr_id = cqx->wr_id;
	w->status = cqx->status;
	w->opcode = ibv_wc_read_opcode(cqx);
	w->flags = ibv_wc_read_wc_flags(cqx);
	w->byte_len = ibv_wc_read_byte_len(cqx);
	w->qp_num = ibv_wc_read_qp_num(cqx);
	ibv_wc_read_tm_info(cqx, &w->tm);
	ibv_end_poll(cqx);
	vlog("  %s: wr_id %llu %s opcode %d flags 0x%x len %u qp %u tag 0x%llx priv 0x%x", what,
	     (unsigned long long)w->wr_id, ibv_wc_status_str(w->status), w->opcode, w->flags,
	     w->byte_len, w->qp_num, (unsigned long long)w->tm.tag, w->tm.priv);
	return 0;
}

/* The TM flags a completion may carry, the only ones compared. */
#define TM_FLAGS (IBV_WC_TM_SYNC_REQ | IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID)

/*
 * The next completion is @wr_id's, successful, with @op and exactly the
 * TM flags @flags; @len (-1: not checked), and tag and app_ctx @tag and
 * @priv (only a match carries them: 0 elsewhere).
 */
static int tm_want(struct tm_rx *b, uint64_t wr_id, enum ibv_wc_opcode op, unsigned int flags,
		   int64_t len, uint64_t tag, uint32_t priv, const char *what)
{
	uint32_t qpn = op >= IBV_WC_TM_ADD && op <= IBV_WC_TM_SYNC ? 0 : b->ep.qp->qp_num;
	struct tm_wc w;

	TRY(tm_poll(b->cqx, &w, what));
	CHECK(w.status == IBV_WC_SUCCESS, "%s: status %s", what, ibv_wc_status_str(w.status));
	CHECK(w.wr_id == wr_id, "%s: wr_id %llu, expected %llu", what,
	      (unsigned long long)w.wr_id, (unsigned long long)wr_id);
	CHECK(w.opcode == op, "%s: opcode %d, expected %d", what, w.opcode, op);
	CHECK((w.flags & TM_FLAGS) == flags, "%s: TM flags 0x%x, expected 0x%x", what,
	      w.flags & TM_FLAGS, flags);
	CHECK(len < 0 || w.byte_len == len, "%s: byte_len %u, expected %lld", what, w.byte_len,
	      (long long)len);
	CHECK(w.qp_num == qpn, "%s: qp_num %u, expected %u", what, w.qp_num, qpn);
	CHECK(w.tm.tag == tag && w.tm.priv == priv,
	      "%s: tag 0x%llx priv 0x%x, expected 0x%llx and 0x%x", what,
	      (unsigned long long)w.tm.tag, w.tm.priv, (unsigned long long)tag, priv);
	return 0;
}

/* The next completion is @wr_id's and failed with @st. */
static int tm_want_err(struct tm_rx *b, uint64_t wr_id, enum ibv_wc_status st, const char *what)
{
	struct tm_wc w;

	TRY(tm_poll(b->cqx, &w, what));
	CHECK(w.status == st && w.wr_id == wr_id, "%s: wr_id %llu status %s, expected %llu %s",
	      what, (unsigned long long)w.wr_id, ibv_wc_status_str(w.status),
	      (unsigned long long)wr_id, ibv_wc_status_str(st));
	return 0;
}

static int tm_empty(struct tm_rx *b, const char *what)
{
	struct ibv_poll_cq_attr pa = {};
	int ret;

	sleep_ms(QUIET_MS);
	ret = ibv_start_poll(b->cqx, &pa);
	if (ret == 0)
		ibv_end_poll(b->cqx);
	CHECK(ret == ENOENT, "%s: a completion (or %s) where none was due", what, estr(ret));
	return 0;
}

/* One list operation; its return value, and the ADD's handle in *@handle. */
static int tm_op(struct tm_rx *b, enum ibv_ops_wr_opcode opcode, unsigned int flags,
		 uint64_t wr_id, const struct buf *buf, size_t len, uint64_t tag, uint64_t mask,
		 uint64_t recv_wr_id, uint32_t *handle)
{
	struct ibv_sge s = buf ? sge_of(buf, 0, len) : (struct ibv_sge){};
	struct ibv_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = opcode,
		.flags = (int)flags,
		.tm = {
			.unexpected_cnt = b->unexp,
			.handle = handle ? *handle : 0,
			.add = { .recv_wr_id = recv_wr_id, .sg_list = &s, .num_sge = buf ? 1 : 0,
				 .tag = tag, .mask = mask },
		},
	};
	struct ibv_ops_wr *bad = NULL;
	int err = ibv_post_srq_ops(b->srq, &wr, &bad);

	if (!err && opcode == IBV_WR_TAG_ADD && handle)
		*handle = wr.tm.handle;
	if (err && bad != &wr)
		return -EPROTO;
	return err;
}

/* ADD @buf's first @len bytes for @tag/@mask, signaled; its completion. */
static int tm_add(struct tm_rx *b, const struct buf *buf, size_t len, uint64_t tag,
		  uint64_t mask, uint64_t recv_wr_id, uint32_t *handle, const char *what)
{
	int err = tm_op(b, IBV_WR_TAG_ADD, IBV_OPS_SIGNALED, 1000 + recv_wr_id, buf, len, tag,
			mask, recv_wr_id, handle);

	CHECK(!err, "%s: ibv_post_srq_ops(ADD tag 0x%llx): %s", what, (unsigned long long)tag,
	      estr(err));
	return tm_want(b, 1000 + recv_wr_id, IBV_WC_TM_ADD, 0, -1, 0, 0, what);
}

/* SYNC with the unexpected messages seen; no synchronisation wanted after. */
static int tm_sync(struct tm_rx *b, const char *what)
{
	int err = tm_op(b, IBV_WR_TAG_SYNC, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 77, NULL, 0, 0, 0,
			0, NULL);

	CHECK(!err, "%s: ibv_post_srq_ops(SYNC %u): %s", what, b->unexp, estr(err));
	return tm_want(b, 77, IBV_WC_TM_SYNC, 0, -1, 0, 0, what);
}

/* A message: a TMH (@op, @priv, @tag) and then @len bytes of pattern @seed. */
static void tm_msg(struct buf *src, uint8_t op, uint32_t priv, uint64_t tag, size_t len,
		   uint32_t seed)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(priv), .tag = htobe64(tag) };

	memcpy(src->p, &h, sizeof(h));
	pattern(src->p + sizeof(h), len, seed);
}

/* A sends the first @len bytes of @src; its completion. */
static int tm_send(struct ep *a, struct buf *src, size_t len, uint64_t wr_id, const char *what)
{
	TRY(post_send_buf(a, wr_id, IBV_WR_SEND, src, len, 0));
	return want_send(a, wr_id, IBV_WC_SEND, what);
}

/* The SRQ buffers unexpected messages go to, each cleared. */
static int tm_srq_bufs(struct tm_rx *b, struct buf *bufs, int n)
{
	struct ibv_recv_wr wr = { .num_sge = 1 }, *bad = NULL;
	struct ibv_sge s;
	int i, err;

	for (i = 0; i < n; i++) {
		TRY(buf_new(&bufs[i], b->ep.d, TM_BUF, IBV_ACCESS_LOCAL_WRITE));
		buf_clear(&bufs[i]);
		s = sge_of(&bufs[i], 0, TM_BUF);
		wr.wr_id = 500 + (uint64_t)i;
		wr.sg_list = &s;
		err = ibv_post_srq_recv(b->srq, &wr, &bad);
		CHECK(!err, "ibv_post_srq_recv(%d): %s", i, estr(err));
	}
	return 0;
}

/* Eager messages an entry takes: one packet, several, masks, order. */
static int tm_eager(struct ep *a, struct tm_rx *b, struct buf *src, struct buf *dst)
{
	size_t big = TM_BUF - 100;
	uint8_t want[TM_BUF];
	uint32_t h1, h2;

	buf_clear(dst);
	TRY(tm_add(b, dst, TM_BUF, 0x11, ~0ULL, 100, &h1, "eager: ADD"));
	tm_msg(src, IBV_TMH_EAGER, 0xabc, 0x11, 200, 1);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 200, 1, "eager: send"));
	TRY(tm_want(b, 100, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 200, 0x11,
		    0xabc, "eager: matched"));
	pattern(want, 200, 1);
	TRY(check_buf(dst, 0, want, 200, "eager: entry's buffer (no header)"));

	/* Several packets, a mask: the match first, the data when it is all in. */
	buf_clear(dst);
	TRY(tm_add(b, dst, TM_BUF, 0x2200, 0xff00, 101, &h1, "eager long: ADD"));
	tm_msg(src, IBV_TMH_EAGER, 0x1, 0x2277, big, 2);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + big, 2, "eager long: send"));
	TRY(tm_want(b, 101, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, -1, 0x2277, 0x1,
		    "eager long: the match"));
	TRY(tm_want(b, 101, IBV_WC_TM_RECV, IBV_WC_TM_DATA_VALID, (int64_t)big, 0, 0,
		    "eager long: the data"));
	pattern(want, big, 2);
	TRY(check_buf(dst, 0, want, big, "eager long: entry's buffer"));

	/* Two entries take the tag: the older one gets it; DEL the other. */
	buf_clear(dst);
	TRY(tm_add(b, dst, 1000, 0x33, ~0ULL, 102, &h1, "order: ADD 1"));
	TRY(tm_add(b, dst, TM_BUF, 0x33, ~0ULL, 103, &h2, "order: ADD 2"));
	tm_msg(src, IBV_TMH_EAGER, 0x2, 0x33, 64, 3);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 64, 3, "order: send"));
	TRY(tm_want(b, 102, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 64, 0x33, 0x2,
		    "order: the older entry"));
	pattern(want, 64, 3);
	TRY(check_buf(dst, 0, want, 64, "order: entry's buffer"));
	CHECK(!tm_op(b, IBV_WR_TAG_DEL, IBV_OPS_SIGNALED, 31, NULL, 0, 0, 0, 0, &h2),
	      "order: DEL refused");
	TRY(tm_want(b, 31, IBV_WC_TM_DEL, 0, -1, 0, 0, "order: DEL"));
	/* The taken entry's handle names nothing: an error, signaled or not. */
	CHECK(!tm_op(b, IBV_WR_TAG_DEL, 0, 32, NULL, 0, 0, 0, 0, &h1), "order: DEL 2 refused");
	return tm_want_err(b, 32, IBV_WC_TM_ERR, "order: DEL of a taken entry");
}

/*
 * Messages no entry takes, and what they do: the whole message in an SRQ
 * buffer; from the first tagged one on, no match until SYNC reports it.
 */
static int tm_unexpected(struct ep *a, struct tm_rx *b, struct buf *src, struct buf *dst,
			 struct buf *sbufs)
{
	uint32_t h;

	tm_msg(src, IBV_TMH_EAGER, 0x3, 0x44, 300, 4);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 300, 4, "unexpected: send"));
	TRY(tm_want(b, 500, IBV_WC_TM_RECV, 0, sizeof(struct ibv_tmh) + 300, 0, 0,
		    "unexpected: into an SRQ buffer"));
	TRY(check_buf(&sbufs[0], 0, src->p, sizeof(struct ibv_tmh) + 300,
		      "unexpected: SRQ buffer (header and all)"));
	/* An ADD that reports the old count (0) is told to synchronise ... */
	buf_clear(dst);
	CHECK(!tm_op(b, IBV_WR_TAG_ADD, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 40, dst, TM_BUF, 0x45,
		     ~0ULL, 104, &h), "stale ADD refused");
	TRY(tm_want(b, 40, IBV_WC_TM_ADD, IBV_WC_TM_SYNC_REQ, -1, 0, 0, "stale ADD"));
	/* ... and until it does, a message for the entry is unexpected too. */
	tm_msg(src, IBV_TMH_EAGER, 0x4, 0x45, 100, 5);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 100, 5, "out of step: send"));
	TRY(tm_want(b, 501, IBV_WC_TM_RECV, 0, sizeof(struct ibv_tmh) + 100, 0, 0,
		    "out of step: unexpected"));
	TRY(check_buf(&sbufs[1], 0, src->p, sizeof(struct ibv_tmh) + 100, "out of step: SRQ buffer"));
	TRY(check_fill(dst->p, TM_BUF + GUARD, "out of step: the entry's buffer"));
	b->unexp += 2;
	TRY(tm_sync(b, "SYNC"));
	tm_msg(src, IBV_TMH_EAGER, 0x5, 0x45, 100, 6);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 100, 6, "in step: send"));
	TRY(tm_want(b, 104, IBV_WC_TM_RECV, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 100, 0x45,
		    0x5, "in step: matched"));
	TRY(check_buf(dst, 0, src->p + sizeof(struct ibv_tmh), 100, "in step: entry's buffer"));

	/* NO_TAG: an SRQ buffer, its own opcode, the count unchanged. */
	tm_msg(src, IBV_TMH_NO_TAG, 0x6, 0x46, 50, 7);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 50, 7, "no tag: send"));
	TRY(tm_want(b, 502, IBV_WC_TM_NO_TAG, 0, sizeof(struct ibv_tmh) + 50, 0, 0, "no tag"));
	TRY(check_buf(&sbufs[2], 0, src->p, sizeof(struct ibv_tmh) + 50, "no tag: SRQ buffer"));
	/* A FIN header, and no header at all: ordinary receives. */
	tm_msg(src, IBV_TMH_FIN, 0x7, 0x47, 16, 8);
	TRY(tm_send(a, src, sizeof(struct ibv_tmh) + 16, 8, "FIN: send"));
	TRY(tm_want(b, 503, IBV_WC_RECV, 0, sizeof(struct ibv_tmh) + 16, 0, 0, "FIN: received"));
	TRY(check_buf(&sbufs[3], 0, src->p, sizeof(struct ibv_tmh) + 16, "FIN: SRQ buffer"));
	TRY(tm_send(a, src, 8, 9, "short: send"));
	TRY(tm_want(b, 504, IBV_WC_RECV, 0, 8, 0, 0, "short: received"));
	TRY(check_buf(&sbufs[4], 0, src->p, 8, "short: SRQ buffer"));
	/* Still in step: an ADD wants no synchronisation (then DEL it). */
	TRY(tm_add(b, dst, 100, 0x99, ~0ULL, 105, &h, "in step after NO_TAG: ADD"));
	CHECK(!tm_op(b, IBV_WR_TAG_DEL, IBV_OPS_SIGNALED, 41, NULL, 0, 0, 0, 0, &h),
	      "DEL refused");
	return tm_want(b, 41, IBV_WC_TM_DEL, 0, -1, 0, 0, "DEL");
}

/* A rendezvous request of A's: its headers, pointing at @data, in @src. */
static void tm_rndv_req(struct buf *src, const struct buf *data, uint32_t priv, uint64_t tag,
			uint32_t len)
{
	struct ibv_rvh r = {
		.va = htobe64(addr_of(data, 0)),
		.rkey = htobe32(data->mr->rkey),
		.len = htobe32(len),
	};

	tm_msg(src, IBV_TMH_RNDV, priv, tag, 0, 0);
	memcpy(src->p + sizeof(struct ibv_tmh), &r, sizeof(r));
	/* Meta-data after the headers, which only software would read. */
	pattern(src->p + HDRS, 16, 9);
}

/* Rendezvous: B reads A's buffer, A gets the FIN; and one too large. */
static int tm_rndv(struct ep *a, struct tm_rx *b, struct buf *src)
{
	struct buf data, dst, fin;
	struct ibv_tmh want_fin;
	uint32_t h;

	TRY(buf_new(&data, a->d, RNDV_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	pattern(data.p, RNDV_LEN, 10);
	TRY(buf_new(&dst, b->ep.d, RNDV_LEN, IBV_ACCESS_LOCAL_WRITE));
	buf_clear(&dst);
	TRY(buf_new(&fin, a->d, 256, IBV_ACCESS_LOCAL_WRITE));
	buf_clear(&fin);
	TRY(post_recv_buf(a, 600, &fin, 0, 256));
	TRY(tm_add(b, &dst, RNDV_LEN, 0x55, ~0ULL, 106, &h, "rendezvous: ADD"));
	tm_rndv_req(src, &data, 0x77, 0x55, RNDV_LEN);
	TRY(tm_send(a, src, HDRS + 16, 10, "rendezvous: request"));
	TRY(tm_want(b, 106, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, -1, 0x55, 0x77, "rendezvous: match"));
	TRY(tm_want(b, 106, IBV_WC_TM_RECV, IBV_WC_TM_DATA_VALID, RNDV_LEN, 0, 0,
		    "rendezvous: data"));
	TRY(check_buf(&dst, 0, data.p, RNDV_LEN, "rendezvous: entry's buffer"));
	{
		struct want w = w_recv(600, a, HDRS);

		TRY(expect_wc(a->rcq, &w, "rendezvous: A's FIN"));
	}
	memcpy(&want_fin, src->p, sizeof(want_fin));
	want_fin.opcode = IBV_TMH_FIN;
	memcpy(src->p, &want_fin, sizeof(want_fin));
	TRY(check_buf(&fin, 0, src->p, HDRS, "rendezvous: the FIN (the request's headers)"));
	TRY(expect_empty(b->ep.scq, QUIET_MS, "rendezvous: B's send CQ"));

	/* An entry smaller than the data: it gets the request, to finish in software. */
	buf_clear(&dst);
	TRY(tm_add(b, &dst, 1000, 0x56, ~0ULL, 107, &h, "short rendezvous: ADD"));
	tm_rndv_req(src, &data, 0x78, 0x56, RNDV_LEN);
	TRY(tm_send(a, src, HDRS + 16, 11, "short rendezvous: request"));
	{
		struct tm_wc w;

		TRY(tm_poll(b->cqx, &w, "short rendezvous"));
		CHECK(w.status == IBV_WC_TM_RNDV_INCOMPLETE && w.wr_id == 107 &&
		      (w.flags & TM_FLAGS) == IBV_WC_TM_MATCH && w.tm.tag == 0x56 && w.tm.priv == 0x78,
		      "short rendezvous: wr_id %llu %s flags 0x%x tag 0x%llx priv 0x%x",
		      (unsigned long long)w.wr_id, ibv_wc_status_str(w.status), w.flags,
		      (unsigned long long)w.tm.tag, w.tm.priv);
	}
	TRY(check_buf(&dst, 0, src->p, HDRS + 16, "short rendezvous: entry's buffer"));
	return expect_empty(a->rcq, QUIET_MS, "short rendezvous: no FIN");
}

/* A full list refuses an ADD (ENOMEM, bad_op), and takes one after a DEL. */
static int tm_full(struct tm_rx *b, struct buf *dst)
{
	uint32_t h[TM_TAGS + 1];
	int i, err;

	for (i = 0; i < TM_TAGS; i++)
		TRY(tm_add(b, dst, 64, 0x1000 + (uint64_t)i, ~0ULL, 200 + (uint64_t)i, &h[i],
			   "fill: ADD"));
	err = tm_op(b, IBV_WR_TAG_ADD, IBV_OPS_SIGNALED, 50, dst, 64, 0x2000, ~0ULL, 250,
		    &h[TM_TAGS]);
	CHECK(err == ENOMEM, "ADD to a full list: %s, expected ENOMEM", estr(err));
	CHECK(!tm_op(b, IBV_WR_TAG_DEL, IBV_OPS_SIGNALED, 51, NULL, 0, 0, 0, 0, &h[0]),
	      "DEL refused");
	TRY(tm_want(b, 51, IBV_WC_TM_DEL, 0, -1, 0, 0, "DEL from a full list"));
	return tm_add(b, dst, 64, 0x2000, ~0ULL, 251, &h[TM_TAGS], "ADD after the DEL");
}

int case_tm(void)
{
	struct buf src, dst, sbufs[TM_SRQ_BUFS];
	struct ibv_tm_caps caps;
	struct qp_conf c;
	struct tm_rx b;
	struct ep a;

	TRY(need_tm(&devs[1], &caps));
	CHECK(caps.max_num_tags >= TM_TAGS && caps.max_sge >= 1 &&
	      caps.max_rndv_hdr_size >= HDRS + 16,
	      "tm_caps: %u tags, %u SGEs, rendezvous headers of %u bytes", caps.max_num_tags,
	      caps.max_sge, caps.max_rndv_hdr_size);
	TRY(tm_up(&a, &b, &c, TM_TAGS));
	TRY(buf_new(&src, a.d, 4 * 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, b.ep.d, TM_BUF, IBV_ACCESS_LOCAL_WRITE));
	TRY(tm_srq_bufs(&b, sbufs, TM_SRQ_BUFS));
	TRY(tm_eager(&a, &b, &src, &dst));
	TRY(tm_unexpected(&a, &b, &src, &dst, sbufs));
	TRY(tm_rndv(&a, &b, &src));
	TRY(tm_full(&b, &dst));
	return tm_empty(&b, "at the end");
}

/* An SRQ or QP that must not be created; errno @err. */
static int tm_refused(void *obj, int err, const char *what)
{
	int e = errno;

	if (obj)
		return failf("%s: created", what);
	CHECK(e == err, "%s: %s, expected %s", what, strerror(e), strerror(err));
	return 0;
}

/* ibv_post_srq_ops() refuses @wr (the second of a chain if @first). */
static int tm_ops_refused(struct ibv_srq *srq, struct ibv_ops_wr *first, struct ibv_ops_wr *wr,
			  const char *what)
{
	struct ibv_ops_wr *bad = NULL;
	int err;

	if (first)
		first->next = wr;
	err = ibv_post_srq_ops(srq, first ? first : wr, &bad);
	CHECK(err == EINVAL && bad == wr, "%s: %s, bad_op %s", what, estr(err),
	      bad == wr ? "right" : "wrong");
	return 0;
}

/* Refusals, and a rendezvous whose key is wrong. */
int case_tm_errors(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_sge s2[2];
	struct ibv_ops_wr ok, wr;
	struct ibv_tm_caps caps;
	struct buf src, data, dst;
	struct ibv_srq *plain;
	struct ibv_cq *cq;
	struct qp_conf c;
	struct tm_rx b;
	struct ep a;
	struct dev *d = &devs[1];
	uint32_t h;

	TRY(need_tm(d, &caps));
	TRY(tm_up(&a, &b, &c, TM_TAGS));
	cq = ibv_cq_ex_to_cq(b.cqx);
	TRY(tm_refused(track(R_SRQ, tm_srq_new(d, cq, 0)), EINVAL, "a list of no entries"));
	TRY(tm_refused(track(R_SRQ, tm_srq_new(d, cq, caps.max_num_tags + 1)), EINVAL,
		       "a list past max_num_tags"));
	TRY(tm_refused(track(R_QP, tm_qp_new(d, b.ep.scq, cq, b.srq, IBV_QPT_UC)), EOPNOTSUPP,
		       "a UC QP on a tag-matching SRQ"));
	TRY(tm_refused(track(R_QP, tm_qp_new(d, b.ep.scq, cq, b.srq, IBV_QPT_UD)), EOPNOTSUPP,
		       "a UD QP on a tag-matching SRQ"));

	TRY(buf_new(&dst, d, TM_BUF, IBV_ACCESS_LOCAL_WRITE));
	s2[0] = sge_of(&dst, 0, 100);
	s2[1] = sge_of(&dst, 100, 100);
	ok = (struct ibv_ops_wr){ .wr_id = 60, .opcode = IBV_WR_TAG_SYNC,
				  .flags = IBV_OPS_SIGNALED };
	wr = (struct ibv_ops_wr){ .wr_id = 61, .opcode = IBV_WR_TAG_ADD,
				  .tm.add = { .sg_list = s2, .num_sge = 1, .tag = 1, .mask = ~0ULL } };
	plain = track(R_SRQ, ibv_create_srq(d->pd, &sa));
	CHECK(plain, "ibv_create_srq(%s): %s", d->name, strerror(errno));
	TRY(tm_ops_refused(plain, NULL, &wr, "an ADD on an ordinary SRQ"));
	wr.tm.add.num_sge = 2;
	TRY(tm_ops_refused(b.srq, &ok, &wr, "an ADD of two SGEs, after a SYNC"));
	/* The SYNC before it was executed. */
	TRY(tm_want(&b, 60, IBV_WC_TM_SYNC, 0, -1, 0, 0, "the SYNC before the refused ADD"));
	wr.tm.add.num_sge = 1;
	wr.opcode = (enum ibv_ops_wr_opcode)7;
	TRY(tm_ops_refused(b.srq, NULL, &wr, "opcode 7"));
	TRY(tm_empty(&b, "after the refusals"));

	/* A rendezvous with a key the sender never gave: B's READ fails. */
	TRY(buf_new(&src, a.d, 256, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&data, a.d, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	buf_clear(&dst);
	TRY(tm_add(&b, &dst, TM_BUF, 0x66, ~0ULL, 110, &h, "bad key: ADD"));
	tm_rndv_req(&src, &data, 0x1, 0x66, 4096);
	{
		struct ibv_rvh r;

		memcpy(&r, src.p + sizeof(struct ibv_tmh), sizeof(r));
		r.rkey = htobe32(be32toh(r.rkey) ^ 0x80);
		memcpy(src.p + sizeof(struct ibv_tmh), &r, sizeof(r));
	}
	/*
	 * A's responder refuses the READ and fails A's QP: the request's ACK,
	 * which races with the READ, may find it failed already (flushed).
	 */
	TRY(post_send_buf(&a, 12, IBV_WR_SEND, &src, HDRS, 0));
	{
		struct ibv_wc wc;

		CHECK(!poll_wc(a.scq, &wc, opt.poll_ms, "bad key: request"),
		      "bad key: request: no completion");
		CHECK(wc.wr_id == 12 && (wc.status == IBV_WC_SUCCESS ||
					 wc.status == IBV_WC_WR_FLUSH_ERR),
		      "bad key: request: %s", wc_desc(&wc));
	}
	TRY(tm_want(&b, 110, IBV_WC_TM_RECV, IBV_WC_TM_MATCH, -1, 0x66, 0x1, "bad key: match"));
	TRY(tm_want_err(&b, 110, IBV_WC_REM_ACCESS_ERR, "bad key: the entry"));
	TRY(check_fill(dst.p, TM_BUF + GUARD, "bad key: the entry's buffer"));
	return expect_state(&b.ep, IBV_QPS_ERR, "bad key: B's QP");
}
