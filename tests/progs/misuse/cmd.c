// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd.c - sroce_misuse: command cases, write() commands gone wrong.
 */

#include "misuse.h"

/* ==== command cases ================================================================= */

/* GET_CONTEXT with driver data of every wrong shape. */
void c_get_context(void)
{
	struct get_context_resp resp;
	struct get_context_cmd c = { .core.response = (uintptr_t)&resp };
	struct {
		struct ib_uverbs_get_context core;
		uint32_t drv[4];
	} big = { .core.response = (uintptr_t)&resp };
	struct {
		struct ib_uverbs_get_context core;
		uint32_t drv[1];
	} small = { .core.response = (uintptr_t)&resp, .drv = { 1 } };
	int fd;

	fd = ctx_open_raw();
	c.drv.provider_abi = 99;
	expect("unknown provider ABI", CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), EINVAL);
	c.drv.provider_abi = SROCE_UVERBS_ABI_VERSION;
	c.drv.reserved = 1;
	expect("reserved field set", CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), EINVAL);
	big.drv[0] = 1;
	big.drv[3] = 5;
	expect("longer request, unknown bytes set",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, big, sizeof(resp)), EOPNOTSUPP);
	c.drv.reserved = 0;
	c.core.response = 0x10;
	expect("response at an unmapped address",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), EFAULT);
	c.core.response = KERNEL_ADDR;
	expect("response at a kernel address",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), EFAULT);
	c.core.response = (uintptr_t)&resp;
	expect("response buffer too small for the core part",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, 4), ENOSPC);
	/* after all those failures the file still takes a good request */
	expect("a good request after the bad ones",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), 0);
	if (resp.drv.abi_version != SROCE_UVERBS_ABI_VERSION || resp.drv.reserved)
		bad("response: abi_version %u reserved %llu", resp.drv.abi_version,
		    (unsigned long long)resp.drv.reserved);
	close((int)resp.core.async_fd);
	expect("second GET_CONTEXT on one file",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp)), EINVAL);
	close(fd);

	/* accepted shapes: shorter request, zero tail, short response */
	fd = ctx_open_raw();
	expect("shorter driver request (zero-extended)",
	       cmd_write(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &small, sizeof(small.core) + 4,
			 sizeof(resp)), 0);
	close((int)resp.core.async_fd);
	close(fd);
	fd = ctx_open_raw();
	memset(big.drv, 0, sizeof(big.drv));
	big.drv[0] = SROCE_UVERBS_ABI_VERSION;
	expect("longer request with a zero tail",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, big, sizeof(resp)), 0);
	close((int)resp.core.async_fd);
	close(fd);
	fd = ctx_open_raw();
	memset(&resp, 0xee, sizeof(resp));
	expect("response without room for driver data",
	       CMD(fd, IB_USER_VERBS_CMD_GET_CONTEXT, c, sizeof(resp.core)), 0);
	if (resp.drv.abi_version != 0xeeeeeeee)
		bad("the kernel wrote past the response buffer");
	close((int)resp.core.async_fd);
	close(fd);
}

/* Malformed headers, unknown commands, commands before GET_CONTEXT. */
void c_headers(void)
{
	struct ib_uverbs_cmd_hdr h = { .command = IB_USER_VERBS_CMD_ALLOC_PD,
				       .in_words = 4, .out_words = 1 };
	uint8_t buf[64] = {};
	uint32_t pd;
	int fd = ctx_open_raw();
	struct ctx x = { .fd = fd, .async_fd = -1 };

	expect("ALLOC_PD before GET_CONTEXT", pd_alloc(&x, &pd), EINVAL);
	close(fd);
	x = ctx_open();
	expect("unknown command 200", cmd_write(x.fd, 200, buf, 16, 8), EOPNOTSUPP);
	expect("removed command POLL_CQ", cmd_write(x.fd, IB_USER_VERBS_CMD_POLL_CQ, buf, 16, 8),
	       EOPNOTSUPP);
	/* in_words that disagree with the write size */
	memcpy(buf, &h, sizeof(h));
	expect("in_words larger than the write",
	       write(x.fd, buf, 8) < 0 ? -errno : 0, EINVAL);
	expect("write shorter than a header",
	       write(x.fd, buf, 4) < 0 ? -errno : 0, EINVAL);
	h.in_words = 2;
	memcpy(buf, &h, sizeof(h));
	expect("request shorter than the command",
	       write(x.fd, buf, 8) < 0 ? -errno : 0, ENOSPC);
	ctx_close(&x);
}

/* PD: driver data, bad handles, double free, busy. */
void c_pd(void)
{
	struct ctx x = ctx_open();
	struct {
		struct ib_uverbs_alloc_pd core;
		uint64_t drv;
	} c = { .drv = 1 };
	uint32_t resp[2], pd;
	static uint8_t buf[4096] __attribute__((aligned(4096)));
	struct mr mr;

	c.core.response = (uintptr_t)resp;
	expect("ALLOC_PD with non-zero driver data",
	       CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_PD, c, 4), EINVAL);
	c.drv = 0;
	expect("ALLOC_PD with zero driver data", CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_PD, c, 4), 0);
	expect("DEALLOC_PD of it", pd_dealloc(&x, resp[0]), 0);
	expect("DEALLOC_PD twice", pd_dealloc(&x, resp[0]), ENOENT);
	expect("DEALLOC_PD of a bad handle", pd_dealloc(&x, BAD_HANDLE), ENOENT);
	pd = pd_new(&x);
	mr = mr_new(&x, pd, buf, sizeof(buf));
	expect("DEALLOC_PD with an MR on it", pd_dealloc(&x, pd), EBUSY);
	expect("DEREG_MR", mr_dereg(&x, mr.handle), 0);
	expect("DEALLOC_PD once free", pd_dealloc(&x, pd), 0);
	ctx_close(&x);
}

void c_cq(void)
{
	struct ctx x = ctx_open();
	struct cq cq;
	struct {
		struct ib_uverbs_create_cq core;
		uint64_t drv;
	} d = { .drv = 7 };
	struct create_cq_resp resp;
	uint32_t pd = pd_new(&x);
	struct qp qp;

	expect("CREATE_CQ of 0 entries", cq_create(&x, 0, 0, -1, &cq), EINVAL);
	expect("CREATE_CQ of max_cqe + 1", cq_create(&x, max_cqe(&x) + 1, 0, -1, &cq), EINVAL);
	expect("CREATE_CQ of 2^31", cq_create(&x, 1u << 31, 0, -1, &cq), EINVAL);
	expect("CREATE_CQ of -1", cq_create(&x, 0xffffffffu, 0, -1, &cq), EINVAL);
	expect("CREATE_CQ on vector 1000", cq_create(&x, 4, 1000, -1, &cq), EINVAL);
	expect("CREATE_CQ on channel fd 1000", cq_create(&x, 4, 0, 1000, &cq), EBADF);
	expect("CREATE_CQ on a channel that is stdin", cq_create(&x, 4, 0, 0, &cq), EBADF);
	d.core.response = (uintptr_t)&resp;
	d.core.cqe = 4;
	d.core.comp_channel = -1;
	/* Its driver data is struct sroce_create_cq_req: flags, reserved. */
	expect("CREATE_CQ with unknown request flags",
	       CMD(x.fd, IB_USER_VERBS_CMD_CREATE_CQ, d, sizeof(resp)), EOPNOTSUPP);
	d.drv = 1ull << 32;
	expect("CREATE_CQ with the request's reserved field set",
	       CMD(x.fd, IB_USER_VERBS_CMD_CREATE_CQ, d, sizeof(resp)), EINVAL);
	d.core.response = 0x20;
	d.drv = 0;
	expect("CREATE_CQ with an unwritable response",
	       CMD(x.fd, IB_USER_VERBS_CMD_CREATE_CQ, d, sizeof(resp)), EFAULT);

	cq = cq_new(&x, 8);
	expect("RESIZE_CQ to 0", cq_resize(&x, cq.handle, 0, NULL), EINVAL);
	expect("RESIZE_CQ to -1", cq_resize(&x, cq.handle, 0xffffffffu, NULL), EINVAL);
	expect("RESIZE_CQ of a bad handle", cq_resize(&x, BAD_HANDLE, 8, NULL), ENOENT);
	expect("REQ_NOTIFY_CQ of a bad handle", cq_arm(&x, BAD_HANDLE), ENOENT);
	qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, -1);
	expect("DESTROY_CQ while a QP uses it", cq_destroy(&x, cq.handle), EBUSY);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	expect("DESTROY_CQ", cq_destroy(&x, cq.handle), 0);
	expect("DESTROY_CQ twice", cq_destroy(&x, cq.handle), ENOENT);
	expect("REQ_NOTIFY_CQ after destroy", cq_arm(&x, cq.handle), ENOENT);
	expect("RESIZE_CQ after destroy", cq_resize(&x, cq.handle, 16, NULL), ENOENT);
	expect("DESTROY_CQ of a bad handle", cq_destroy(&x, BAD_HANDLE), ENOENT);
	/* the old mapping stays the process's own memory: writing is harmless */
	memset(cq.ring.base, 0xa5, cq.ring.size);
	if (munmap(cq.ring.base, cq.ring.size))
		bad("munmap after destroy: %s", strerror(errno));
	ctx_close(&x);
}

/* CREATE_QP with every wrong handle, type and size. */
void c_qp_create(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), pd2;
	struct cq cq = cq_new(&x, 8);
	struct srq srq = srq_new(&x, pd);
	struct qp qp;
	struct qp_caps c = default_caps;
	struct {
		struct ib_uverbs_create_qp core;
		uint64_t drv;
	} d = { .drv = 1 };
	uint8_t resp[128];

	expect("bad PD", qp_create(&x, QPT_RC, BAD_HANDLE, cq.handle, cq.handle, -1, &c, &qp), ENOENT);
	expect("bad send CQ", qp_create(&x, QPT_RC, pd, BAD_HANDLE, cq.handle, -1, &c, &qp), ENOENT);
	expect("bad recv CQ", qp_create(&x, QPT_RC, pd, cq.handle, BAD_HANDLE, -1, &c, &qp), ENOENT);
	expect("bad SRQ", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, BAD_HANDLE, &c, &qp), ENOENT);
	expect("a PD handle as the CQ", qp_create(&x, QPT_RC, pd, pd, cq.handle, -1, &c, &qp),
	       cq.handle == pd ? 0 : EINVAL);
	expect("type GSI from userspace", qp_create(&x, 1, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	expect("type SMI from userspace", qp_create(&x, 0, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	/* XRC_TGT (10) names its XRC domain where the PD goes */
	expect("type XRC_TGT with a PD for a domain",
	       qp_create(&x, 10, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	expect("type 77", qp_create(&x, 77, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c.send_wr = 1u << 20;
	expect("max_send_wr 2^20", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c = default_caps;
	c.recv_wr = 0xffffffffu;
	expect("max_recv_wr -1", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c = default_caps;
	c.send_sge = 33;
	expect("max_send_sge 33", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c = default_caps;
	c.recv_sge = 0x80000000u;
	expect("max_recv_sge 2^31", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c = default_caps;
	c.inline_data = 0xffffffffu;
	expect("max_inline_data -1", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	c = (struct qp_caps){ 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu };
	expect("every cap -1", qp_create(&x, QPT_UD, pd, cq.handle, cq.handle, -1, &c, &qp), EINVAL);
	/* with an SRQ the receive caps are ignored */
	c = default_caps;
	c.recv_wr = 0xffffffffu;
	c.recv_sge = 0xffffffffu;
	expect("receive caps -1 with an SRQ",
	       qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, srq.handle, &c, &qp), 0);
	if (!case_failed && (qp.drv.rq.num_slots || qp.drv.rq.mmap_size))
		bad("a QP on an SRQ got a receive ring");
	expect("DESTROY_SRQ while a QP uses it", srq_destroy(&x, srq.handle), EBUSY);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	c = (struct qp_caps){ 0, 0, 0, 0, 0 };
	expect("every cap 0", qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &c, &qp), 0);
	if (!case_failed && (!qp.drv.sq.num_slots || !qp.drv.rq.num_slots))
		bad("a QP of zero caps got an empty ring");
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);

	memset(&d.core, 0, sizeof(d.core));
	d.core.response = (uintptr_t)resp;
	d.core.pd_handle = pd;
	d.core.send_cq_handle = cq.handle;
	d.core.recv_cq_handle = cq.handle;
	d.core.max_send_wr = 4;
	d.core.max_recv_wr = 4;
	d.core.qp_type = QPT_RC;
	expect("non-zero driver data",
	       CMD(x.fd, IB_USER_VERBS_CMD_CREATE_QP, d, 32 + sizeof(struct sroce_create_qp_resp)),
	       EINVAL);
	pd2 = pd_new(&x);
	expect("DEALLOC_PD of an unused second PD", pd_dealloc(&x, pd2), 0);
	expect("QP on a freed PD", qp_create(&x, QPT_RC, pd2, cq.handle, cq.handle, -1, &default_caps, &qp),
	       ENOENT);
	ctx_close(&x);
}

/* MODIFY_QP: bad states, masks, attributes; use after destroy. */
void c_qp_modify(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x);
	struct cq cq = cq_new(&x, 8);
	struct qp qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, -1);
	struct qp ud = qp_new(&x, QPT_UD, pd, cq.handle, cq.handle, -1);
	struct ib_uverbs_modify_qp m;

#define MOD(what, want, ...) do {						\
		memset(&m, 0, sizeof(m));					\
		m.qp_handle = qp.handle;					\
		__VA_ARGS__;							\
		expect(what, qp_modify(&x, &m), want);				\
	} while (0)

	MOD("state 99", EINVAL, m.attr_mask = M_STATE; m.qp_state = 99);
	MOD("RESET to RTS", EINVAL, m.attr_mask = M_STATE; m.qp_state = QPS_RTS);
	MOD("RESET to INIT without pkey/port/access", EINVAL,
	    m.attr_mask = M_STATE; m.qp_state = QPS_INIT);
	MOD("RESET to INIT with a Q_Key (not an RC attribute)", EINVAL,
	    m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS | M_QKEY;
	    m.qp_state = QPS_INIT; m.port_num = 1);
	MOD("port 2", EINVAL, m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	    m.qp_state = QPS_INIT; m.port_num = 2);
	MOD("port 0", EINVAL, m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	    m.qp_state = QPS_INIT; m.port_num = 0);
	MOD("P_Key index 5", EINVAL, m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	    m.qp_state = QPS_INIT; m.port_num = 1; m.pkey_index = 5);
	MOD("access flags bit 30", EINVAL, m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	    m.qp_state = QPS_INIT; m.port_num = 1; m.qp_access_flags = 1u << 30);
	MOD("mask bits beyond the last attribute", EOPNOTSUPP,
	    m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS | (1u << 30);
	    m.qp_state = QPS_INIT; m.port_num = 1);
	/* a lie about the current state */
	MOD("cur_qp_state RTR while in RESET, to RTS", EINVAL,
	    m.attr_mask = M_STATE | M_CUR_STATE | M_SQ_PSN | M_TIMEOUT | M_RETRY |
			  M_RNR_RETRY | M_MAX_RD;
	    m.qp_state = QPS_RTS; m.cur_qp_state = QPS_RTR);
	if (qp_state(&x, qp.handle) != QPS_RESET)
		bad("the QP left RESET through a lie (state %d)", qp_state(&x, qp.handle));
	MOD("cur_qp_state 99", EINVAL, m.attr_mask = M_STATE | M_CUR_STATE;
	    m.qp_state = QPS_ERR; m.cur_qp_state = 99);
	expect("to INIT", qp_to_init(&x, &qp), 0);
	MOD("RTR with path MTU 0", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU | M_DEST_QPN |
	    M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR; dest_fill(&m.dest);
	    m.path_mtu = 0);
	MOD("RTR with path MTU 6", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU | M_DEST_QPN |
	    M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR; dest_fill(&m.dest);
	    m.path_mtu = 6);
	MOD("RTR with SGID index 200", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU | M_DEST_QPN |
	    M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR; dest_fill(&m.dest);
	    m.path_mtu = 3; m.dest.sgid_index = 200);
	MOD("RTR without a GRH", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU | M_DEST_QPN |
	    M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR; dest_fill(&m.dest);
	    m.path_mtu = 3; m.dest.is_global = 0);
	MOD("RTR with max_dest_rd_atomic 255", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU |
	    M_DEST_QPN | M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR;
	    dest_fill(&m.dest); m.path_mtu = 3; m.max_dest_rd_atomic = 255);
	MOD("RTR with min_rnr_timer 32", EINVAL, m.attr_mask = M_STATE | M_AV | M_MTU |
	    M_DEST_QPN | M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR;
	    dest_fill(&m.dest); m.path_mtu = 3; m.min_rnr_timer = 32);
	if (qp_state(&x, qp.handle) != QPS_INIT)
		bad("a refused modify changed the state");
	/*
	 * A destination QPN past 24 bits is cut to 24 bits (accepted).  PSNs
	 * past 24 bits are not tried: ib_core cuts them itself, but logs a
	 * warning each time, which this group counts as a failure.
	 */
	MOD("RTR with dest QPN 0xffffffff", 0, m.attr_mask = M_STATE | M_AV | M_MTU |
	    M_DEST_QPN | M_RQ_PSN | M_MAX_DEST_RD | M_MIN_RNR; m.qp_state = QPS_RTR;
	    dest_fill(&m.dest); m.path_mtu = 3; m.dest_qp_num = 0xffffffffu);
	MOD("RTS with timeout 32", EINVAL, m.attr_mask = M_STATE | M_SQ_PSN | M_TIMEOUT |
	    M_RETRY | M_RNR_RETRY | M_MAX_RD; m.qp_state = QPS_RTS; m.timeout = 32);
	MOD("RTS with retry_cnt 8", EINVAL, m.attr_mask = M_STATE | M_SQ_PSN | M_TIMEOUT |
	    M_RETRY | M_RNR_RETRY | M_MAX_RD; m.qp_state = QPS_RTS; m.retry_cnt = 8);
	MOD("RTS with rnr_retry 8", EINVAL, m.attr_mask = M_STATE | M_SQ_PSN | M_TIMEOUT |
	    M_RETRY | M_RNR_RETRY | M_MAX_RD; m.qp_state = QPS_RTS; m.rnr_retry = 8);
	MOD("RTS with max_rd_atomic 200", EINVAL, m.attr_mask = M_STATE | M_SQ_PSN |
	    M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_MAX_RD; m.qp_state = QPS_RTS;
	    m.max_rd_atomic = 200);
	MOD("RTS with an alternate path", EINVAL, m.attr_mask = M_STATE | M_SQ_PSN |
	    M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_MAX_RD | M_ALT_PATH; m.qp_state = QPS_RTS;
	    m.alt_port_num = 1; m.alt_dest = m.dest);
	MOD("RTS", 0, m.attr_mask = M_STATE | M_SQ_PSN | M_TIMEOUT | M_RETRY |
	    M_RNR_RETRY | M_MAX_RD; m.qp_state = QPS_RTS; m.sq_psn = 0xffffff; m.timeout = 14);
	MOD("RTS to INIT", EINVAL, m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	    m.qp_state = QPS_INIT; m.port_num = 1);
	MOD("to ERR", 0, m.attr_mask = M_STATE; m.qp_state = QPS_ERR);
	MOD("ERR to RTS", EINVAL, m.attr_mask = M_STATE; m.qp_state = QPS_RTS);
	MOD("ERR to RESET", 0, m.attr_mask = M_STATE; m.qp_state = QPS_RESET);
	memset(&m, 0, sizeof(m));
	m.qp_handle = ud.handle;
	m.attr_mask = M_STATE | M_PKEY | M_PORT | M_QKEY | M_ACCESS;
	m.qp_state = QPS_INIT;
	m.port_num = 1;
	expect("UD to INIT with access flags (not a UD attribute)", qp_modify(&x, &m), EINVAL);
	m.qp_handle = BAD_HANDLE;
	expect("MODIFY_QP of a bad handle", qp_modify(&x, &m), ENOENT);
	expect("DESTROY_QP", qp_destroy(&x, qp.handle), 0);
	expect("DESTROY_QP twice", qp_destroy(&x, qp.handle), ENOENT);
	expect("MODIFY_QP after destroy", qp_set_state(&x, qp.handle, QPS_ERR), ENOENT);
	expect("QUERY_QP after destroy", qp_state(&x, qp.handle), ENOENT);
	expect("send doorbell after destroy", sq_doorbell(&x, qp.handle), ENOENT);
	expect("receive doorbell after destroy", rq_doorbell(&x, qp.handle), ENOENT);
	/* the destroyed QP's rings stay the process's memory */
	memset(qp.sq.base, 0x5a, qp.sq.size);
	memset(qp.rq.base, 0x5a, qp.rq.size);
	munmap(qp.rq.base, qp.rq.size);
	ctx_close(&x);
	/* the SQ mapping outlives its file and context: still harmless */
	memset(qp.sq.base, 0x3c, qp.sq.size);
	munmap(qp.sq.base, qp.sq.size);
#undef MOD
}

/* POST_SEND/POST_RECV commands that carry work requests, or are malformed. */
void c_post(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x);
	struct cq cq = cq_new(&x, 8);
	struct qp qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, -1);
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_post_send core;
		struct ib_uverbs_send_wr wr;
		struct ib_uverbs_sge sge;
	} s = {};
	struct {
		struct ib_uverbs_post_recv core;
		struct ib_uverbs_recv_wr wr;
		struct ib_uverbs_sge sge;
	} r = {};

	s.core.response = (uintptr_t)&resp;
	s.core.qp_handle = qp.handle;
	s.core.wr_count = 1;
	s.core.sge_count = 1;
	s.core.wqe_size = sizeof(s.wr);
	s.wr.num_sge = 1;
	s.wr.opcode = IB_UVERBS_WR_SEND;
	s.sge.length = 8;
	expect("POST_SEND with a work request (kernel-bypass QP)",
	       CMD(x.fd, IB_USER_VERBS_CMD_POST_SEND, s, sizeof(resp)), EINVAL);
	s.core.wr_count = 0x40000000;
	expect("POST_SEND with wr_count 2^30",
	       CMD(x.fd, IB_USER_VERBS_CMD_POST_SEND, s, sizeof(resp)), ENOSPC);
	s.core.wr_count = 0;
	s.core.sge_count = 0;
	s.core.wqe_size = 8;
	expect("doorbell with wqe_size 8", CMD(x.fd, IB_USER_VERBS_CMD_POST_SEND, s.core, sizeof(resp)),
	       EINVAL);
	s.core.wqe_size = sizeof(s.wr);
	s.core.qp_handle = BAD_HANDLE;
	expect("doorbell of a bad QP", CMD(x.fd, IB_USER_VERBS_CMD_POST_SEND, s.core, sizeof(resp)),
	       ENOENT);
	s.core.qp_handle = qp.handle;
	expect("doorbell in RESET", sq_doorbell(&x, qp.handle), 0);
	r.core.response = (uintptr_t)&resp;
	r.core.qp_handle = qp.handle;
	r.core.wr_count = 1;
	r.core.sge_count = 1;
	r.core.wqe_size = sizeof(r.wr);
	r.wr.num_sge = 1;
	expect("POST_RECV with a work request (kernel-bypass QP)",
	       CMD(x.fd, IB_USER_VERBS_CMD_POST_RECV, r, sizeof(resp)), EINVAL);
	expect("receive doorbell in RESET", rq_doorbell(&x, qp.handle), 0);
	/* sroce enables no POST_SRQ_RECV command: user SRQs are rings only */
	expect("POST_SRQ_RECV (not enabled)",
	       CMD(x.fd, IB_USER_VERBS_CMD_POST_SRQ_RECV, r, sizeof(resp)), EOPNOTSUPP);
	ctx_close(&x);
}

void c_srq(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x);
	struct srq s;
	struct ib_uverbs_modify_srq m = {};

	expect("bad PD", srq_create(&x, BAD_HANDLE, 16, 2, 0, &s), ENOENT);
	expect("max_wr 0", srq_create(&x, pd, 0, 2, 0, &s), EINVAL);
	expect("max_wr -1", srq_create(&x, pd, 0xffffffffu, 2, 0, &s), EINVAL);
	expect("max_sge 33", srq_create(&x, pd, 16, 33, 0, &s), EINVAL);
	expect("max_sge -1", srq_create(&x, pd, 16, 0xffffffffu, 0, &s), EINVAL);
	expect("limit above max_wr", srq_create(&x, pd, 16, 2, 17, &s), EINVAL);
	s = srq_new(&x, pd);
	m.srq_handle = s.handle;
	m.attr_mask = 1;	/* IB_SRQ_MAX_WR */
	m.max_wr = 64;
	expect("MODIFY_SRQ resize", CMD(x.fd, IB_USER_VERBS_CMD_MODIFY_SRQ, m, 0), EOPNOTSUPP);
	m.attr_mask = 2;	/* IB_SRQ_LIMIT */
	m.srq_limit = 1000;
	expect("MODIFY_SRQ limit past the size", CMD(x.fd, IB_USER_VERBS_CMD_MODIFY_SRQ, m, 0), EINVAL);
	m.attr_mask = 0x80;
	expect("MODIFY_SRQ unknown mask bit", CMD(x.fd, IB_USER_VERBS_CMD_MODIFY_SRQ, m, 0), EINVAL);
	expect("DESTROY_SRQ", srq_destroy(&x, s.handle), 0);
	expect("DESTROY_SRQ twice", srq_destroy(&x, s.handle), ENOENT);
	m.attr_mask = 2;
	m.srq_limit = 1;
	expect("MODIFY_SRQ after destroy", CMD(x.fd, IB_USER_VERBS_CMD_MODIFY_SRQ, m, 0), ENOENT);
	memset(s.ring.base, 0xff, s.ring.size);
	munmap(s.ring.base, s.ring.size);
	ctx_close(&x);
}

void c_mr(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x);
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *buf = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *hole = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t b = (uintptr_t)buf;
	struct mr mr;
	struct ib_uverbs_rereg_mr_resp rresp;
	struct ib_uverbs_rereg_mr rr = { .response = (uintptr_t)&rresp };
	struct {
		struct ib_uverbs_reg_mr core;
		uint64_t drv;
	} d = { .drv = 3 };
	struct ib_uverbs_reg_mr_resp resp;

	if (buf == MAP_FAILED || ro == MAP_FAILED || hole == MAP_FAILED)
		setup_die("mmap");
	munmap(hole, (size_t)pg);
	expect("length 0", mr_reg(&x, pd, b, 0, b, ACC_LW, &mr), EINVAL);
	expect("start + length wraps", mr_reg(&x, pd, b, ~0ull - 100, b, ACC_LW, &mr), EINVAL);
	expect("iova + length wraps", mr_reg(&x, pd, b, (uint64_t)pg, ~0ull - 16, ACC_LW, &mr), EINVAL);
	expect("unmapped memory", mr_reg(&x, pd, (uintptr_t)hole, (uint64_t)pg, 0, ACC_LW, &mr), EFAULT);
	expect("kernel address", mr_reg(&x, pd, KERNEL_ADDR, (uint64_t)pg, 0, ACC_LW, &mr), EFAULT);
	expect("address 0", mr_reg(&x, pd, 0, (uint64_t)pg, 0, ACC_LW, &mr), EFAULT);
	expect("2^40 bytes from a 4-page buffer",
	       mr_reg(&x, pd, b, 1ull << 40, b, ACC_LW, &mr), EFAULT);
	expect("read-only memory, local write", mr_reg(&x, pd, (uintptr_t)ro, (uint64_t)pg, 0,
						       ACC_LW, &mr), EFAULT);
	/* bits 20-29 are optional flags a device may ignore; 30 is none */
	expect("access bit 30", mr_reg(&x, pd, b, (uint64_t)pg, b, 1u << 30, &mr), EINVAL);
	expect("remote write without local write", mr_reg(&x, pd, b, (uint64_t)pg, b, ACC_RW, &mr),
	       EINVAL);
	expect("bad PD", mr_reg(&x, BAD_HANDLE, b, (uint64_t)pg, b, ACC_LW, &mr), ENOENT);
	d.core.response = (uintptr_t)&resp;
	d.core.start = b;
	d.core.length = (uint64_t)pg;
	d.core.hca_va = b;
	d.core.pd_handle = pd;
	d.core.access_flags = ACC_LW;
	expect("non-zero driver data", CMD(x.fd, IB_USER_VERBS_CMD_REG_MR, d, sizeof(resp)), EINVAL);
	expect("read-only memory, read only", mr_reg(&x, pd, (uintptr_t)ro, (uint64_t)pg,
						     (uintptr_t)ro, 0, &mr), 0);
	expect("DEREG_MR", mr_dereg(&x, mr.handle), 0);
	expect("a good region", mr_reg(&x, pd, b, (uint64_t)pg * 4, 0, ACC_LW, &mr), 0);
	rr.mr_handle = mr.handle;
	rr.flags = 0x100;
	expect("REREG_MR unknown flag", CMD(x.fd, IB_USER_VERBS_CMD_REREG_MR, rr, sizeof(rresp)),
	       EOPNOTSUPP);
	rr.flags = 1;	/* IB_MR_REREG_TRANS */
	rr.start = (uintptr_t)hole;
	rr.length = (uint64_t)pg;
	expect("REREG_MR onto unmapped memory", CMD(x.fd, IB_USER_VERBS_CMD_REREG_MR, rr, sizeof(rresp)),
	       EFAULT);
	rr.start = b;
	rr.length = 0;
	expect("REREG_MR length 0", CMD(x.fd, IB_USER_VERBS_CMD_REREG_MR, rr, sizeof(rresp)), EINVAL);
	rr.flags = 2;	/* IB_MR_REREG_PD */
	rr.pd_handle = BAD_HANDLE;
	expect("REREG_MR to a bad PD", CMD(x.fd, IB_USER_VERBS_CMD_REREG_MR, rr, sizeof(rresp)), ENOENT);
	expect("DEREG_MR", mr_dereg(&x, mr.handle), 0);
	expect("DEREG_MR twice", mr_dereg(&x, mr.handle), ENOENT);
	expect("DEREG_MR of a bad handle", mr_dereg(&x, BAD_HANDLE), ENOENT);
	rr.flags = 4;	/* IB_MR_REREG_ACCESS */
	rr.access_flags = ACC_LW;
	expect("REREG_MR after dereg", CMD(x.fd, IB_USER_VERBS_CMD_REREG_MR, rr, sizeof(rresp)), ENOENT);
	ctx_close(&x);
	munmap(buf, (size_t)pg * 4);
	munmap(ro, (size_t)pg);
}

void c_mw_ah(void)
{
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), ah, num;
	struct ib_uverbs_alloc_mw_resp resp;
	struct ib_uverbs_alloc_mw c = { .response = (uintptr_t)&resp, .pd_handle = pd };
	struct ib_uverbs_dealloc_mw dm;

	c.mw_type = 3;
	expect("ALLOC_MW type 3", CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_MW, c, sizeof(resp)), EINVAL);
	c.mw_type = 0;
	expect("ALLOC_MW type 0", CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_MW, c, sizeof(resp)), EINVAL);
	c.mw_type = 1;
	c.pd_handle = BAD_HANDLE;
	expect("ALLOC_MW bad PD", CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_MW, c, sizeof(resp)), ENOENT);
	c.pd_handle = pd;
	expect("ALLOC_MW type 1", CMD(x.fd, IB_USER_VERBS_CMD_ALLOC_MW, c, sizeof(resp)), 0);
	dm.mw_handle = resp.mw_handle;
	expect("DEALLOC_MW", CMD(x.fd, IB_USER_VERBS_CMD_DEALLOC_MW, dm, 0), 0);
	expect("DEALLOC_MW twice", CMD(x.fd, IB_USER_VERBS_CMD_DEALLOC_MW, dm, 0), ENOENT);

	expect("CREATE_AH bad PD", ah_create(&x, BAD_HANDLE, (uint8_t)gid_index, 1, 1, &ah, NULL), ENOENT);
	expect("CREATE_AH SGID index 250", ah_create(&x, pd, 250, 1, 1, &ah, NULL), EINVAL);
	expect("CREATE_AH port 2", ah_create(&x, pd, (uint8_t)gid_index, 2, 1, &ah, NULL), EINVAL);
	expect("CREATE_AH without a GRH", ah_create(&x, pd, (uint8_t)gid_index, 1, 0, &ah, NULL), EINVAL);
	expect("CREATE_AH", ah_create(&x, pd, (uint8_t)gid_index, 1, 1, &ah, &num), 0);
	expect("DEALLOC_PD under an AH", pd_dealloc(&x, pd), EBUSY);
	expect("DESTROY_AH", ah_destroy(&x, ah), 0);
	expect("DESTROY_AH twice", ah_destroy(&x, ah), ENOENT);
	expect("DESTROY_AH of a bad handle", ah_destroy(&x, BAD_HANDLE), ENOENT);
	ctx_close(&x);
}

/* A shared mapping of @len bytes at @off of @fd, @prot, fails with @want. */
void map_fails_at(const char *what, int fd, size_t len, int prot, off_t off, int want,
		  int line)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		expect_one(what, 0, want, line);
	} else {
		expect_one(what, -errno, want, line);
	}
}

/* mmap with wrong offsets, sizes, protections; twice; after destroy. */
void c_mmap(void)
{
	struct ctx x = ctx_open(), y = ctx_open();
	struct cq cq = cq_new(&x, 8);
	struct sroce_ring_info *i = &cq.info;
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	map_fails("offset of no ring", x.fd, i->mmap_size,
		  PROT_READ, i->mmap_offset + (uint64_t)pg * 4096, EINVAL);
	map_fails("offset into the ring", x.fd, (size_t)pg,
		  PROT_READ, i->mmap_offset + (uint64_t)pg, EINVAL);
	map_fails("size larger than the ring", x.fd, i->mmap_size + (size_t)pg,
		  PROT_READ | PROT_WRITE, i->mmap_offset, EINVAL);
	if (i->mmap_size > (uint32_t)pg)
		map_fails("size smaller than the ring", x.fd, (size_t)pg,
			  PROT_READ, i->mmap_offset, EINVAL);
	map_fails("another context's ring", y.fd, i->mmap_size,
		  PROT_READ, i->mmap_offset, EINVAL);
	/* a second mapping of the same ring is the same memory */
	p = mmap(NULL, i->mmap_size, PROT_READ, MAP_SHARED, x.fd, (off_t)i->mmap_offset);
	if (p == MAP_FAILED) {
		bad("second mapping: %s", strerror(errno));
	} else {
		set_cons(&cq.ring, 0x1234);
		if (((struct sroce_ring_hdr *)p)->consumer != 0x1234)
			bad("two mappings of one ring differ");
		set_cons(&cq.ring, 0);
		munmap(p, i->mmap_size);
	}
	/* private mappings: accepted, or refused with EINVAL; either way the
	 * process only writes its own copy
	 */
	p = mmap(NULL, i->mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, x.fd,
		 (off_t)i->mmap_offset);
	if (p != MAP_FAILED) {
		memset(p, 0x77, i->mmap_size);
		munmap(p, i->mmap_size);
		if (rhdr(&cq.ring)->consumer == 0x77777777)
			bad("a private mapping wrote the shared ring");
	} else {
		expect("MAP_PRIVATE", -errno, EINVAL);
	}
	expect("DESTROY_CQ", cq_destroy(&x, cq.handle), 0);
	map_fails("mapping a destroyed CQ's ring", x.fd, i->mmap_size,
		  PROT_READ, i->mmap_offset, EINVAL);
	memset(cq.ring.base, 0xcc, cq.ring.size);
	ctx_close(&x);
	ctx_close(&y);
	/* the mapping survives its context; unmapping it frees the memory */
	memset(cq.ring.base, 0xdd, cq.ring.size);
	if (munmap(cq.ring.base, cq.ring.size))
		bad("munmap: %s", strerror(errno));
}

/* Objects of one context named by handles in another. */
void c_cross_context(void)
{
	struct ctx x = ctx_open(), y = ctx_open();
	uint32_t pd = pd_new(&x), pdy = pd_new(&y);
	struct cq cq = cq_new(&x, 8);
	struct qp qp = qp_new(&x, QPT_RC, pd, cq.handle, cq.handle, -1);
	struct qp q2;

	/* handles are per file: y's handle space has none of x's objects but
	 * its own PD (the same number, maybe: then it is y's PD)
	 */
	expect("y destroys x's QP handle", qp_destroy(&y, qp.handle), ENOENT);
	expect("y destroys x's CQ handle", cq_destroy(&y, cq.handle), ENOENT);
	expect("y creates a QP on x's CQ handle",
	       qp_create(&y, QPT_RC, pdy, cq.handle, cq.handle, -1, &default_caps, &q2), ENOENT);
	/* QUERY_QP answers the state: RESET is 0 */
	expect("x's QP still there", qp_state(&x, qp.handle), 0);
	ctx_close(&y);
	expect("x's QP after y closed", qp_state(&x, qp.handle), 0);
	ctx_close(&x);
}
