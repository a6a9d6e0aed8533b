// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * selftest.c - checks of sroce's own tables and arithmetic, run at module
 * load; a failure refuses the load.  Vectors: ICRCs of packets captured
 * from Linux's rdma_rxe (RC ACK over IPv4, and the same over IPv6), header
 * lengths from the IBTA's header tables, PSN wraparound.
 */
#include <linux/kernel.h>

#include "hdr.h"
#include "icrc.h"
#include "opcode.h"
#include "sroce.h"

static const u8 sroce_st_ip4[] = {
	0x45, 0x00, 0x00, 0x30, 0x14, 0x99, 0x40, 0x00, 0x40, 0x11,
	0x12, 0x14, 0x0a, 0x07, 0x00, 0x01, 0x0a, 0x07, 0x00, 0x02,
};

static const u8 sroce_st_ip6[] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40,
	0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
};

/* IPv6 header with traffic class 0x02, flow label 0xabcde, hop limit 17. */
static const u8 sroce_st_ip6_rewritten[] = {
	0x60, 0x2a, 0xbc, 0xde, 0x00, 0x1c, 0x11, 0x11,
	0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
};

/* UDP, BTH (RC ACK), AETH. */
static const u8 sroce_st_roce[] = {
	0xc1, 0x21, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00,
	0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x23, 0xea, 0xa2,
	0x1f, 0x00, 0x00, 0x01,
};

static bool sroce_st_icrc(const u8 *ip, unsigned int ip_len, u32 want)
{
	__le32 icrc = sroce_icrc_buf(ip, ip_len, sroce_st_roce,
				     sizeof(sroce_st_roce));

	return le32_to_cpu(icrc) == want;
}

static bool sroce_st_hdr_len(u8 opcode, u8 len)
{
	return sroce_opcode(opcode)->hdr_len == len;
}

static bool sroce_st_opcodes(void)
{
	return sroce_st_hdr_len(SROCE_OP_SEND_ONLY, 12) &&
	       sroce_st_hdr_len(SROCE_OP_SEND_ONLY_IMM, 16) &&
	       sroce_st_hdr_len(SROCE_OP_WRITE_ONLY, 28) &&
	       sroce_st_hdr_len(SROCE_OP_WRITE_ONLY_IMM, 32) &&
	       sroce_st_hdr_len(SROCE_OP_READ_REQ, 28) &&
	       sroce_st_hdr_len(SROCE_OP_READ_RESP_FIRST, 16) &&
	       sroce_st_hdr_len(SROCE_OP_READ_RESP_MIDDLE, 12) &&
	       sroce_st_hdr_len(SROCE_OP_ACK, 16) &&
	       sroce_st_hdr_len(SROCE_OP_ATOMIC_ACK, 24) &&
	       sroce_st_hdr_len(SROCE_OP_CMP_SWAP, 40) &&
	       sroce_st_hdr_len(SROCE_OP_SEND_ONLY_INV, 16) &&
	       sroce_st_hdr_len(SROCE_TRANSPORT_UD | SROCE_OP_SEND_ONLY, 20) &&
	       sroce_st_hdr_len(SROCE_TRANSPORT_UD | SROCE_OP_SEND_ONLY_IMM, 24) &&
	       sroce_st_hdr_len(SROCE_TRANSPORT_UC | SROCE_OP_WRITE_FIRST, 28) &&
	       !(sroce_opcode(SROCE_TRANSPORT_UC | SROCE_OP_READ_REQ)->flags &
		 SROCE_OPF_VALID) &&
	       !(sroce_opcode(SROCE_TRANSPORT_UD | SROCE_OP_SEND_FIRST)->flags &
		 SROCE_OPF_VALID) &&
	       !(sroce_opcode(0x15)->flags & SROCE_OPF_VALID);
}

static bool sroce_st_psn(void)
{
	return sroce_psn_diff(0, 0xffffff) == 1 &&
	       sroce_psn_diff(0xffffff, 0) == -1 &&
	       sroce_psn_diff(0x400000, 0) == 0x400000 &&
	       sroce_psn_add(0xffffff, 2) == 1;
}

/**
 * sroce_selftest() - check the tables before the module goes live
 *
 * Context: Process context (module init).
 * Return: 0, or -EINVAL if a check failed (logged).
 */
int sroce_selftest(void)
{
	static const struct {
		const char *name;
		bool (*fn)(void);
	} tests[] = {
		{ "opcodes", sroce_st_opcodes },
		{ "psn", sroce_st_psn },
	};
	int i, failed = 0;

	if (!sroce_st_icrc(sroce_st_ip4, sizeof(sroce_st_ip4), 0x97a449ba) ||
	    !sroce_st_icrc(sroce_st_ip6, sizeof(sroce_st_ip6), 0xcceb9dd8) ||
	    !sroce_st_icrc(sroce_st_ip6_rewritten,
			   sizeof(sroce_st_ip6_rewritten), 0xcceb9dd8)) {
		pr_err("selftest icrc: FAIL\n");
		failed++;
	} else {
		pr_debug("selftest icrc: pass\n");
	}
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (tests[i].fn()) {
			pr_debug("selftest %s: pass\n", tests[i].name);
		} else {
			pr_err("selftest %s: FAIL\n", tests[i].name);
			failed++;
		}
	}
	return failed ? -EINVAL : 0;
}
