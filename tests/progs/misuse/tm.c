// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tm.c - sroce_misuse: tag matching's commands, raw.  A tag-matching SRQ
 * of impossible sizes; QPs that may not use one; and
 * SROCE_METHOD_SRQ_TM_OP with every field of struct sroce_tm_op wrong in
 * turn, on the wrong objects, with its attributes short or missing; a
 * list filled past its size; an SRQ destroyed with entries listed.
 */

#include "misuse.h"

/* SRQ_CREATE of a tag-matching SRQ on @cq, @tags entries; its handle. */
static int tm_srq(struct ctx *x, uint32_t pd, uint32_t cq, uint32_t tags, uint32_t *h)
{
	struct ioc_srq q;
	int err;

	ioc_srq_build(&q, pd);
	ioc_find(&q.c, UVERBS_ATTR_CREATE_SRQ_TYPE)->data = IB_UVERBS_SRQT_TM;
	ioc_obj(&q.c, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, cq);
	ioc_u32(&q.c, UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS, tags);
	err = ioc_send(x->fd, &q.c);
	*h = ioc_srq_handle(&q);
	return err;
}

/* An ADD of 64 bytes for tag 1, signaled; keys are checked only on use. */
static struct sroce_tm_op tm_add_op(void)
{
	return (struct sroce_tm_op){
		.wr_id = 1,
		.recv_wr_id = 2,
		.tag = 1,
		.mask = ~0ULL,
		.opcode = SROCE_TM_OP_ADD,
		.flags = SROCE_TM_OP_SIGNALED,
		.num_sge = 1,
		.sge = { .addr = 0x10000, .length = 64, .lkey = 0x1234 },
	};
}

/* SROCE_METHOD_SRQ_TM_OP on SRQ @h, built (not sent). */
static void tm_op_build(struct ioc *c, uint32_t h, struct sroce_tm_op *op,
			struct sroce_tm_op_resp *r)
{
	ioc_init(c, UVERBS_OBJECT_SRQ, SROCE_METHOD_SRQ_TM_OP);
	ioc_obj(c, SROCE_ATTR_TM_OP_SRQ, h);
	ioc_in(c, SROCE_ATTR_TM_OP_REQ, op, sizeof(*op));
	ioc_out(c, SROCE_ATTR_TM_OP_RESP, r, sizeof(*r));
}

static int tm_op_send(struct ctx *x, uint32_t h, struct sroce_tm_op *op,
		      struct sroce_tm_op_resp *r)
{
	struct ioc c;

	tm_op_build(&c, h, op, r);
	return ioc_send(x->fd, &c);
}

void c_tm(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), h = 0, h2 = 0, first, i;
	struct cq cq = cq_new(&x, 512);
	struct srq basic = srq_new(&x, pd);
	struct sroce_tm_op_resp r;
	struct sroce_tm_op op;
	struct ioc c;
	struct qp qp;

	expect("a TM SRQ of no entries", tm_srq(&x, pd, cq.handle, 0, &h), EINVAL);
	expect("a TM SRQ past SROCE_TM_MAX_TAGS",
	       tm_srq(&x, pd, cq.handle, SROCE_TM_MAX_TAGS + 1, &h), EINVAL);
	expect("a TM SRQ of 8 entries", tm_srq(&x, pd, cq.handle, 8, &h), 0);
	if (case_failed)
		goto out;
	expect("a UD QP on a TM SRQ",
	       qp_create(&x, QPT_UD, pd, cq.handle, cq.handle, h, &default_caps, &qp), EOPNOTSUPP);
	expect("a UC QP on a TM SRQ",
	       qp_create(&x, QPT_UC, pd, cq.handle, cq.handle, h, &default_caps, &qp), EOPNOTSUPP);

#define TMOP(what, want, srq, ...) do {					\
		op = tm_add_op();						\
		__VA_ARGS__;							\
		expect(what, tm_op_send(&x, srq, &op, &r), want);		\
	} while (0)
	TMOP("TM_OP: reserved field set", EINVAL, h, op.reserved = 1);
	TMOP("TM_OP: unknown flag", EINVAL, h, op.flags |= 1u << 2);
	TMOP("TM_OP: opcode 3", EINVAL, h, op.opcode = 3);
	TMOP("TM_OP: opcode -1", EINVAL, h, op.opcode = 0xffffffffu);
	TMOP("TM_OP: ADD of two SGEs", EINVAL, h, op.num_sge = 2);
	TMOP("TM_OP: ADD of 2^31 + 1 bytes", EINVAL, h, op.sge.length = 0x80000001u);
	TMOP("TM_OP: DEL with an SGE", EINVAL, h, op.opcode = SROCE_TM_OP_DEL);
	TMOP("TM_OP: SYNC with an SGE", EINVAL, h, op.opcode = SROCE_TM_OP_SYNC);
	TMOP("TM_OP: DEL of entry 200 of 8", EINVAL, h,
	     op.opcode = SROCE_TM_OP_DEL; op.num_sge = 0; op.handle = 200);
	TMOP("TM_OP on a basic SRQ", EINVAL, basic.handle);
	TMOP("TM_OP on a CQ's handle", EINVAL, cq.handle);
	TMOP("TM_OP on an unknown handle", ENOENT, BAD_HANDLE);
	op = tm_add_op();
	tm_op_build(&c, h, &op, &r);
	ioc_find(&c, SROCE_ATTR_TM_OP_REQ)->len = 40;
	expect("TM_OP, request too short", ioc_send(x.fd, &c), EINVAL);
	tm_op_build(&c, h, &op, &r);
	ioc_find(&c, SROCE_ATTR_TM_OP_RESP)->len = 4;
	expect("TM_OP, response too short", ioc_send(x.fd, &c), EINVAL);
	tm_op_build(&c, h, &op, &r);
	ioc_drop(&c, SROCE_ATTR_TM_OP_RESP);
	expect("TM_OP without its response", ioc_send(x.fd, &c), EINVAL);

	/* Fill the list, past it; entries die with the SRQ. */
	op = tm_add_op();
	expect("TM_OP: ADD", tm_op_send(&x, h, &op, &r), 0);
	first = r.handle;
	for (i = 1; i < 8; i++) {
		op = tm_add_op();
		op.tag = i + 1;
		expect("TM_OP: ADD up to the list's size", tm_op_send(&x, h, &op, &r), 0);
	}
	op = tm_add_op();
	expect("TM_OP: ADD to a full list", tm_op_send(&x, h, &op, &r), ENOMEM);
	op = (struct sroce_tm_op){ .opcode = SROCE_TM_OP_DEL, .handle = first };
	expect("TM_OP: DEL", tm_op_send(&x, h, &op, &r), 0);
	/* Its handle names nothing now: an error completion, not an error. */
	expect("TM_OP: DEL again", tm_op_send(&x, h, &op, &r), 0);
	op = tm_add_op();
	expect("TM_OP: ADD after the DEL", tm_op_send(&x, h, &op, &r), 0);
	if (!case_failed && r.handle == first)
		bad("an ADD after a DEL got the deleted entry's handle 0x%x again", first);
	expect("a second TM SRQ", tm_srq(&x, pd, cq.handle, SROCE_TM_MAX_TAGS, &h2), 0);
	expect("SRQ_DESTROY of a TM SRQ with entries listed", ioc_srq_destroy(&x, h), 0);
	expect("TM_OP on a destroyed SRQ", tm_op_send(&x, h, &op, &r), ENOENT);
	expect("SRQ_DESTROY of the second", ioc_srq_destroy(&x, h2), 0);
#undef TMOP
out:
	expect("SRQ_DESTROY of the basic SRQ", srq_destroy(&x, basic.handle), 0);
	expect("no SRQ left", ioc_count(&x, UVERBS_OBJECT_SRQ), 0);
	ctx_close(&x);
}
