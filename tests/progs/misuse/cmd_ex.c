// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_ex.c - sroce_misuse: command cases, extended write() commands.
 */

#include "misuse.h"

/* ==== command cases: extended write commands ======================================== */

/* Malformed extended headers; EX_QUERY_DEVICE of every wrong shape. */
void c_ex_query(void)
{
	struct ib_uverbs_ex_query_device_resp r;
	struct ib_uverbs_ex_query_device q = {};
	struct {
		struct ib_uverbs_ex_query_device q;
		uint64_t more;
	} lq = { .more = 3 };
	struct ex_hdrs e;
	uint64_t drv = 0;
	int fd = ctx_open_raw();
	struct ctx x;

	expect("EX_QUERY_DEVICE before GET_CONTEXT",
	       CMD_EX(fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, r, 0), EINVAL);
	close(fd);
	x = ctx_open();
	expect("EX_QUERY_DEVICE", ex_query_device(&x, &r), 0);
	if (!case_failed && (!r.base.max_cqe || !r.base.max_qp ||
			     r.response_length < offsetof(typeof(r), odp_caps)))
		bad("EX_QUERY_DEVICE: max_cqe %u max_qp %u response_length %u", r.base.max_cqe,
		    r.base.max_qp, r.response_length);
#define EXQ(what, want, ...) do {						\
		e = ex_hdrs(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, sizeof(q), &r, sizeof(r), 0, 0); \
		__VA_ARGS__;							\
		expect(what, ex_write(x.fd, &e, &q, sizeof(q)), want);		\
	} while (0)
	/* ib_core checks no minimum sizes for extended commands: it
	 * zero-extends a short request and cuts a short response
	 */
	EXQ("response of 8 bytes (cut)", 0, e.h.out_words = 1; memset(&r, 0xee, sizeof(r)));
	if (!case_failed && r.base.max_cqe != 0xeeeeeeeeu)
		bad("the kernel wrote past an 8-byte response");
	EXQ("request of 0 bytes", EINVAL, e.h.in_words = 0);
	EXQ("cmd_hdr_reserved set", EINVAL, e.x.cmd_hdr_reserved = 1);
	EXQ("a response length without a response", EINVAL, e.x.response = 0);
	EXQ("no response at all (accepted, the answer dropped)", 0, e.x.response = 0; e.h.out_words = 0);
	EXQ("response at a kernel address", EFAULT, e.x.response = KERNEL_ADDR);
	EXQ("response at an unmapped address", EFAULT, e.x.response = 0x1000);
	EXQ("in_words past the write", EINVAL, e.h.in_words = 2);
	EXQ("driver data words past the write", EINVAL, e.x.provider_in_words = 1);
	EXQ("driver response words (sroce defines none)", EINVAL, e.x.provider_out_words = 1);
	EXQ("unknown extended command 100", EOPNOTSUPP, e.h.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | 100);
	EXQ("command with unknown flag bits", EINVAL, e.h.command |= 0x40000000u);
#undef EXQ
	e = ex_hdrs(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, sizeof(q), &r, sizeof(r), sizeof(drv), 0);
	{
		struct {
			struct ib_uverbs_ex_query_device q;
			uint64_t drv;
		} qd = { .drv = drv };

		expect("zero driver data (sroce defines none)", ex_write(x.fd, &e, &qd, sizeof(qd)),
		       EINVAL);
	}
	expect("write shorter than both headers", write(x.fd, &e, 12) < 0 ? -errno : 0, EINVAL);
	q.comp_mask = 1;
	expect("comp_mask set", CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, r, 0), EINVAL);
	q.comp_mask = 0;
	q.reserved = 1;
	expect("reserved set", CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, q, r, 0), EINVAL);
	expect("longer request, unknown bytes set",
	       CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, lq, r, 0), EOPNOTSUPP);
	lq.more = 0;
	expect("longer request with a zero tail",
	       CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, lq, r, 0), 0);
	ctx_close(&x);
}

/* EX_CREATE_CQ: flags, comp_mask, reserved, sizes, driver data. */
void c_ex_cq(void)
{
	struct ctx x = ctx_open();
	uint32_t maxcqe = max_cqe(&x);
	struct ib_uverbs_ex_create_cq c;
	struct ex_cq_resp r;
	struct {
		struct ib_uverbs_ex_create_cq core;
		uint64_t drv;
	} d;
	struct ex_hdrs e;

#define EXC(what, want, ...) do {						\
		c = ex_cq_req(4);						\
		__VA_ARGS__;							\
		expect(what, ex_cq_create(&x, &c, &r), want);			\
	} while (0)
	/* TIMESTAMP_COMPLETION is taken: a CQ with timestamps (rc's cases). */
	EXC("flag IGNORE_OVERRUN", EOPNOTSUPP, c.flags = IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN);
	EXC("unknown flag 1 << 20", EOPNOTSUPP, c.flags = 1u << 20);
	EXC("comp_mask set", EINVAL, c.comp_mask = 1);
	EXC("reserved set", EINVAL, c.reserved = 1);
	EXC("0 entries", EINVAL, c.cqe = 0);
	EXC("max_cqe + 1 entries", EINVAL, c.cqe = maxcqe + 1);
	EXC("-1 entries", EINVAL, c.cqe = 0xffffffffu);
	EXC("vector 1000", EINVAL, c.comp_vector = 1000);
	EXC("channel that is stdin", EBADF, c.comp_channel = 0);
	EXC("channel fd 1000", EBADF, c.comp_channel = 1000);
	expect("no CQ left by the refused creates", ioc_count(&x, UVERBS_OBJECT_CQ), 0);
	EXC("a good CQ", 0);
	if (!case_failed && (r.core.base.cqe < 4 || r.drv.ring.num_slots != r.core.base.cqe + 1 ||
			     !r.drv.ring.mmap_size))
		bad("EX_CREATE_CQ: %u entries, a ring of %u", r.core.base.cqe, r.drv.ring.num_slots);
	expect("DESTROY_CQ", cq_destroy(&x, r.core.base.cq_handle), 0);

	memset(&d, 0, sizeof(d));
	d.core = ex_cq_req(4);
	d.drv = 1ull << 32;	/* struct sroce_create_cq_req's reserved field */
	e = ex_hdrs(IB_USER_VERBS_EX_CMD_CREATE_CQ, sizeof(d.core), &r, sizeof(r.core), sizeof(d.drv),
		    sizeof(r.drv));
	expect("driver request with its reserved field set", ex_write(x.fd, &e, &d, sizeof(d)),
	       EINVAL);
	e.x.response = 0x1000;
	d.drv = 0;
	expect("response at an unmapped address", ex_write(x.fd, &e, &d, sizeof(d)), EFAULT);
	e = ex_hdrs(IB_USER_VERBS_EX_CMD_CREATE_CQ, sizeof(d.core), &r, sizeof(r.core), 0, 0);
	expect("no room for the driver response", ex_write(x.fd, &e, &d.core, sizeof(d.core)), 0);
	expect("DESTROY_CQ", cq_destroy(&x, r.core.base.cq_handle), 0);
	e.h.out_words = 1;
	memset(&r, 0xee, sizeof(r));
	expect("response of 8 bytes (cut)", ex_write(x.fd, &e, &d.core, sizeof(d.core)), 0);
	if (!case_failed && r.core.comp_mask != 0xeeeeeeeeu)
		bad("the kernel wrote past an 8-byte response");
	expect("DESTROY_CQ", cq_destroy(&x, r.core.base.cq_handle), 0);
	expect("no CQ left", ioc_count(&x, UVERBS_OBJECT_CQ), 0);
#undef EXC
	ctx_close(&x);
}

/* EX_CREATE_QP and EX_MODIFY_QP: create flags, comp_mask, the extension. */
void c_ex_qp(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x);
	struct cq cq = cq_new(&x, 8);
	struct ib_uverbs_ex_create_qp c;
	struct ex_qp_resp r;
	struct ib_uverbs_ex_modify_qp m;
	struct ib_uverbs_ex_modify_qp_resp mr;
	struct {
		struct ib_uverbs_ex_modify_qp m;
		uint64_t more;
	} lm;
	struct ex_hdrs e;
	struct qp qp;

#define EXQP(what, want, ...) do {						\
		c = ex_qp_req(pd, cq.handle);					\
		__VA_ARGS__;							\
		expect(what, ex_qp_create(&x, &c, &r), want);			\
	} while (0)
	EXQP("create flag BLOCK_MULTICAST_LOOPBACK", EOPNOTSUPP, c.create_flags = 1u << 1);
	EXQP("create flag SCATTER_FCS", EOPNOTSUPP, c.create_flags = 1u << 8);
	EXQP("create flag CVLAN_STRIPPING", EOPNOTSUPP, c.create_flags = 1u << 9);
	EXQP("create flag PCI_WRITE_END_PADDING", EOPNOTSUPP, c.create_flags = 1u << 11);
	EXQP("create flag 1 << 30", EINVAL, c.create_flags = 1u << 30);
	EXQP("comp_mask 1 << 5", EINVAL, c.comp_mask = 1u << 5);
	EXQP("reserved set", EINVAL, c.reserved = 1);
	EXQP("a bad RWQ indirection table (no such objects)", EINVAL,
	     c.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE; c.rwq_ind_tbl_handle = BAD_HANDLE);
	EXQP("the PD as RWQ indirection table", EINVAL,
	     c.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE; c.rwq_ind_tbl_handle = pd);
	EXQP("type 77", EINVAL, c.qp_type = 77);
	EXQP("max_send_sge 33", EINVAL, c.max_send_sge = 33);
	EXQP("bad PD", ENOENT, c.pd_handle = BAD_HANDLE);
	expect("no QP left by the refused creates", ioc_count(&x, UVERBS_OBJECT_QP), 0);
	EXQP("a good QP", 0);
	if (!case_failed && (!r.drv.sq.num_slots || !r.drv.rq.num_slots ||
			     r.core.response_length < sizeof(r.core)))
		bad("EX_CREATE_QP: rings of %u and %u slots, response_length %u",
		    r.drv.sq.num_slots, r.drv.rq.num_slots, r.core.response_length);
	memset(&qp, 0, sizeof(qp));
	qp.handle = r.core.base.qp_handle;
	qp.qpn = r.core.base.qpn;
	qp.type = QPT_RC;

#define EXM(what, want, ...) do {						\
		memset(&m, 0, sizeof(m));					\
		m.base.qp_handle = qp.handle;					\
		m.base.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;	\
		m.base.qp_state = QPS_INIT;					\
		m.base.port_num = 1;						\
		e = ex_hdrs(IB_USER_VERBS_EX_CMD_MODIFY_QP, sizeof(m), &mr, sizeof(mr), 0, 0); \
		__VA_ARGS__;							\
		expect(what, ex_write(x.fd, &e, &m, sizeof(m)), want);		\
	} while (0)
	EXM("rate limit, RESET to INIT", EINVAL, m.base.attr_mask |= 1u << 25; m.rate_limit = 1000);
	EXM("mask bit 26", EOPNOTSUPP, m.base.attr_mask |= 1u << 26);
	EXM("mask bit 31", EOPNOTSUPP, m.base.attr_mask |= 1u << 31);
	EXM("bad QP", ENOENT, m.base.qp_handle = BAD_HANDLE);
	EXM("the CQ as the QP", EINVAL, m.base.qp_handle = cq.handle);
	EXM("port 2", EINVAL, m.base.port_num = 2);
	EXM("a response without a length", EINVAL, e.h.out_words = 0);
	if (qp_state(&x, qp.handle) != QPS_RESET)
		bad("a refused EX_MODIFY_QP changed the state");
	memset(&lm, 0, sizeof(lm));
	lm.m.base.qp_handle = qp.handle;
	lm.m.base.attr_mask = M_STATE;
	lm.m.base.qp_state = QPS_RESET;
	lm.more = 1;
	expect("longer request, unknown bytes set",
	       CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_MODIFY_QP, lm, mr, 0), EOPNOTSUPP);
	e = ex_hdrs(IB_USER_VERBS_EX_CMD_MODIFY_QP, sizeof(lm.m), &mr, sizeof(mr), sizeof(lm.more), 0);
	expect("non-zero driver data", ex_write(x.fd, &e, &lm, sizeof(lm)), EINVAL);
	EXM("to INIT", 0);
	if (qp_state(&x, qp.handle) != QPS_INIT)
		bad("EX_MODIFY_QP to INIT left state %d", qp_state(&x, qp.handle));
	expect("to RTR", qp_to_rtr(&x, &qp, qp.qpn), 0);
	expect("to RTS", qp_to_rts(&x, &qp, 14), 0);
	EXM("rate limit 999 kb/s in RTS (the least is 1000)", EINVAL,
	    m.base.attr_mask = 1u << 25; m.rate_limit = 999);
	EXM("rate limit 100000001 kb/s in RTS (the most is 100000000)", EINVAL,
	    m.base.attr_mask = 1u << 25; m.rate_limit = 100000001);
	EXM("rate limit 1000 kb/s in RTS", 0, m.base.attr_mask = 1u << 25; m.rate_limit = 1000);
	EXM("rate limit 0 (none) in RTS", 0, m.base.attr_mask = 1u << 25; m.rate_limit = 0);
	EXM("rate limit, RTS to SQD", EINVAL,
	    m.base.attr_mask = M_STATE | (1u << 25); m.base.qp_state = QPS_SQD; m.rate_limit = 1000);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	EXM("after destroy", ENOENT);
#undef EXM
#undef EXQP
	ctx_close(&x);
}

/*
 * Extended commands sroce has no verbs for (flows, WQs, RWQ indirection
 * tables, CQ moderation): ib_core leaves them out of sroce's command table,
 * so they fail with EOPNOTSUPP whatever their shape, well-formed or not.
 */
void c_ex_unsupported(void)
{
	static const struct {
		const char *name;
		uint32_t cmd;
	} ex[] = {
		{ "EX_CREATE_FLOW", IB_USER_VERBS_EX_CMD_CREATE_FLOW },
		{ "EX_DESTROY_FLOW", IB_USER_VERBS_EX_CMD_DESTROY_FLOW },
		{ "EX_CREATE_WQ", IB_USER_VERBS_EX_CMD_CREATE_WQ },
		{ "EX_MODIFY_WQ", IB_USER_VERBS_EX_CMD_MODIFY_WQ },
		{ "EX_DESTROY_WQ", IB_USER_VERBS_EX_CMD_DESTROY_WQ },
		{ "EX_CREATE_RWQ_IND_TBL", IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL },
		{ "EX_DESTROY_RWQ_IND_TBL", IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL },
		{ "EX_MODIFY_CQ", IB_USER_VERBS_EX_CMD_MODIFY_CQ },
	};
	struct ctx x = ctx_open();
	struct cq cq = cq_new(&x, 8);
	uint8_t req[64] = {}, resp[64];
	struct ib_uverbs_ex_modify_cq mc = { .cq_handle = cq.handle, .attr_mask = 1,
					     .attr = { .cq_count = 4, .cq_period = 10 } };
	char what[80];
	size_t i;

	for (i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		snprintf(what, sizeof(what), "%s", ex[i].name);
		expect(what, cmd_ex(x.fd, ex[i].cmd, req, 32, resp, 16, 0), EOPNOTSUPP);
		snprintf(what, sizeof(what), "%s, a malformed extended header", ex[i].name);
		expect(what, cmd_write(x.fd, IB_USER_VERBS_CMD_FLAG_EXTENDED | ex[i].cmd, req, 16, 0),
		       EOPNOTSUPP);
	}
	expect("EX_MODIFY_CQ of a real CQ",
	       CMD_EX(x.fd, IB_USER_VERBS_EX_CMD_MODIFY_CQ, mc, resp, 0), EOPNOTSUPP);
	expect("the CQ still there", cq_arm(&x, cq.handle), 0);
	ctx_close(&x);
}
