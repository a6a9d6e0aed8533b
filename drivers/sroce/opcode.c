// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * opcode.c - the opcode table: for each transport the operations it
 * allows, each operation's headers and place in a message, and the header
 * offsets, computed once at module load from the order the IBTA gives
 * (after the BTH: DETH, XRCETH, FETH, RETH or AtomicETH, AETH,
 * AtomicAckETH, then ImmDt or IETH).
 */
#include <linux/bug.h>
#include <linux/kernel.h>

#include "hdr.h"
#include "opcode.h"

struct sroce_op_rule {
	const char *name;
	u32 flags;
};

#define REQ_SEND (SROCE_OPF_REQ | SROCE_OPF_SEND | SROCE_OPF_PAYLOAD)
#define REQ_WRITE (SROCE_OPF_REQ | SROCE_OPF_WRITE | SROCE_OPF_PAYLOAD)
#define RESP_READ (SROCE_OPF_RESP | SROCE_OPF_READ | SROCE_OPF_PAYLOAD)

/* The operations, by BTH opcode bits 4:0. */
static const struct sroce_op_rule sroce_op_rules[SROCE_OP_MASK + 1] = {
	[SROCE_OP_SEND_FIRST] = { "SEND_FIRST", REQ_SEND | SROCE_OPF_FIRST },
	[SROCE_OP_SEND_MIDDLE] = { "SEND_MIDDLE", REQ_SEND | SROCE_OPF_MIDDLE },
	[SROCE_OP_SEND_LAST] = { "SEND_LAST", REQ_SEND | SROCE_OPF_LAST },
	[SROCE_OP_SEND_LAST_IMM] = { "SEND_LAST_IMM",
		REQ_SEND | SROCE_OPF_LAST | SROCE_OPF_IMMDT },
	[SROCE_OP_SEND_ONLY] = { "SEND_ONLY", REQ_SEND | SROCE_OPF_ONLY },
	[SROCE_OP_SEND_ONLY_IMM] = { "SEND_ONLY_IMM",
		REQ_SEND | SROCE_OPF_ONLY | SROCE_OPF_IMMDT },
	[SROCE_OP_WRITE_FIRST] = { "WRITE_FIRST",
		REQ_WRITE | SROCE_OPF_FIRST | SROCE_OPF_RETH },
	[SROCE_OP_WRITE_MIDDLE] = { "WRITE_MIDDLE",
		REQ_WRITE | SROCE_OPF_MIDDLE },
	[SROCE_OP_WRITE_LAST] = { "WRITE_LAST", REQ_WRITE | SROCE_OPF_LAST },
	[SROCE_OP_WRITE_LAST_IMM] = { "WRITE_LAST_IMM",
		REQ_WRITE | SROCE_OPF_LAST | SROCE_OPF_IMMDT },
	[SROCE_OP_WRITE_ONLY] = { "WRITE_ONLY",
		REQ_WRITE | SROCE_OPF_ONLY | SROCE_OPF_RETH },
	[SROCE_OP_WRITE_ONLY_IMM] = { "WRITE_ONLY_IMM",
		REQ_WRITE | SROCE_OPF_ONLY | SROCE_OPF_RETH | SROCE_OPF_IMMDT },
	[SROCE_OP_READ_REQ] = { "READ_REQ", SROCE_OPF_REQ | SROCE_OPF_READ |
		SROCE_OPF_ONLY | SROCE_OPF_RETH },
	[SROCE_OP_READ_RESP_FIRST] = { "READ_RESP_FIRST",
		RESP_READ | SROCE_OPF_FIRST | SROCE_OPF_AETH },
	[SROCE_OP_READ_RESP_MIDDLE] = { "READ_RESP_MIDDLE",
		RESP_READ | SROCE_OPF_MIDDLE },
	[SROCE_OP_READ_RESP_LAST] = { "READ_RESP_LAST",
		RESP_READ | SROCE_OPF_LAST | SROCE_OPF_AETH },
	[SROCE_OP_READ_RESP_ONLY] = { "READ_RESP_ONLY",
		RESP_READ | SROCE_OPF_ONLY | SROCE_OPF_AETH },
	[SROCE_OP_ACK] = { "ACK", SROCE_OPF_RESP | SROCE_OPF_ONLY |
		SROCE_OPF_AETH },
	[SROCE_OP_ATOMIC_ACK] = { "ATOMIC_ACK", SROCE_OPF_RESP |
		SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | SROCE_OPF_AETH |
		SROCE_OPF_ATMACK },
	[SROCE_OP_CMP_SWAP] = { "CMP_SWAP", SROCE_OPF_REQ | SROCE_OPF_ATOMIC |
		SROCE_OPF_ONLY | SROCE_OPF_ATMETH },
	[SROCE_OP_FETCH_ADD] = { "FETCH_ADD", SROCE_OPF_REQ |
		SROCE_OPF_ATOMIC | SROCE_OPF_ONLY | SROCE_OPF_ATMETH },
	[SROCE_OP_SEND_LAST_INV] = { "SEND_LAST_INV",
		REQ_SEND | SROCE_OPF_LAST | SROCE_OPF_IETH },
	[SROCE_OP_SEND_ONLY_INV] = { "SEND_ONLY_INV",
		REQ_SEND | SROCE_OPF_ONLY | SROCE_OPF_IETH },
	[SROCE_OP_FLUSH] = { "FLUSH", SROCE_OPF_REQ | SROCE_OPF_FLUSH |
		SROCE_OPF_ONLY | SROCE_OPF_RETH },
	[SROCE_OP_ATOMIC_WRITE] = { "ATOMIC_WRITE", SROCE_OPF_REQ |
		SROCE_OPF_ATOMIC_WRITE | SROCE_OPF_ONLY | SROCE_OPF_RETH |
		SROCE_OPF_PAYLOAD },
};

/* Which operations each transport allows. */
static bool sroce_transport_allows(u8 transport, u8 op)
{
	switch (transport) {
	case SROCE_TRANSPORT_RC:
	case SROCE_TRANSPORT_XRC:
		return op <= SROCE_OP_FETCH_ADD || op == SROCE_OP_SEND_LAST_INV ||
		       op == SROCE_OP_SEND_ONLY_INV || op == SROCE_OP_FLUSH ||
		       op == SROCE_OP_ATOMIC_WRITE;
	case SROCE_TRANSPORT_UC:
		return op <= SROCE_OP_WRITE_ONLY_IMM;
	case SROCE_TRANSPORT_UD:
		return op == SROCE_OP_SEND_ONLY || op == SROCE_OP_SEND_ONLY_IMM;
	default:
		return false;
	}
}

struct sroce_opcode_info sroce_opcodes[256];

static u8 sroce_hdr_put(u8 *off, u32 flags, u32 flag, u8 len, u8 *slot)
{
	if (!(flags & flag))
		return *off;
	*slot = *off;
	*off += len;
	return *off;
}

static void sroce_opcode_fill(struct sroce_opcode_info *info, u32 flags)
{
	u8 off = sizeof(struct sroce_bth);

	info->flags = flags | SROCE_OPF_VALID;
	sroce_hdr_put(&off, flags, SROCE_OPF_DETH, sizeof(struct sroce_deth),
		      &info->off_deth);
	sroce_hdr_put(&off, flags, SROCE_OPF_XRCETH,
		      sizeof(struct sroce_xrceth), &info->off_xrceth);
	sroce_hdr_put(&off, flags, SROCE_OPF_FLUSH, sizeof(struct sroce_feth),
		      &info->off_feth);
	sroce_hdr_put(&off, flags, SROCE_OPF_RETH, sizeof(struct sroce_reth),
		      &info->off_reth);
	sroce_hdr_put(&off, flags, SROCE_OPF_ATMETH,
		      sizeof(struct sroce_atmeth), &info->off_atmeth);
	sroce_hdr_put(&off, flags, SROCE_OPF_AETH, sizeof(struct sroce_aeth),
		      &info->off_aeth);
	sroce_hdr_put(&off, flags, SROCE_OPF_ATMACK,
		      sizeof(struct sroce_atmack), &info->off_atmack);
	sroce_hdr_put(&off, flags, SROCE_OPF_IMMDT | SROCE_OPF_IETH,
		      sizeof(struct sroce_immdt), &info->off_immdt);
	info->hdr_len = off;
}

/**
 * sroce_opcode_init() - build the opcode table
 *
 * Context: Process context (module init).
 */
void sroce_opcode_init(void)
{
	static const u8 transports[] = {
		SROCE_TRANSPORT_RC, SROCE_TRANSPORT_UC, SROCE_TRANSPORT_UD,
		SROCE_TRANSPORT_XRC,
	};
	const struct sroce_op_rule *rule;
	u32 flags;
	int t, op;

	for (t = 0; t < ARRAY_SIZE(transports); t++) {
		for (op = 0; op <= SROCE_OP_MASK; op++) {
			rule = &sroce_op_rules[op];
			if (!rule->name || !sroce_transport_allows(transports[t], op))
				continue;
			flags = rule->flags;
			if (transports[t] == SROCE_TRANSPORT_UD)
				flags |= SROCE_OPF_DETH;
			/* XRC requests name their SRQ; responses do not. */
			if (transports[t] == SROCE_TRANSPORT_XRC &&
			    (flags & SROCE_OPF_REQ))
				flags |= SROCE_OPF_XRCETH;
			sroce_opcodes[transports[t] | op].name = rule->name;
			sroce_opcode_fill(&sroce_opcodes[transports[t] | op], flags);
		}
	}
}
