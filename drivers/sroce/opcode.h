/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * opcode.h - what each BTH opcode means: which headers follow the BTH, what
 * kind of operation it is and where the packet sits in its message.  One
 * table (opcode.c) built from the IBTA's rules, with every header offset
 * computed from those rules rather than typed in.
 */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include <linux/types.h>

/* BTH opcode bits 7:5: the transport. */
enum sroce_transport {
	SROCE_TRANSPORT_RC = 0x00,
	SROCE_TRANSPORT_UC = 0x20,
	SROCE_TRANSPORT_RD = 0x40,
	SROCE_TRANSPORT_UD = 0x60,
	SROCE_TRANSPORT_CNP = 0x80,
	SROCE_TRANSPORT_XRC = 0xa0,
	SROCE_TRANSPORT_MASK = 0xe0,
};

/* BTH opcode bits 4:0: the operation. */
enum sroce_op {
	SROCE_OP_SEND_FIRST = 0x00,
	SROCE_OP_SEND_MIDDLE = 0x01,
	SROCE_OP_SEND_LAST = 0x02,
	SROCE_OP_SEND_LAST_IMM = 0x03,
	SROCE_OP_SEND_ONLY = 0x04,
	SROCE_OP_SEND_ONLY_IMM = 0x05,
	SROCE_OP_WRITE_FIRST = 0x06,
	SROCE_OP_WRITE_MIDDLE = 0x07,
	SROCE_OP_WRITE_LAST = 0x08,
	SROCE_OP_WRITE_LAST_IMM = 0x09,
	SROCE_OP_WRITE_ONLY = 0x0a,
	SROCE_OP_WRITE_ONLY_IMM = 0x0b,
	SROCE_OP_READ_REQ = 0x0c,
	SROCE_OP_READ_RESP_FIRST = 0x0d,
	SROCE_OP_READ_RESP_MIDDLE = 0x0e,
	SROCE_OP_READ_RESP_LAST = 0x0f,
	SROCE_OP_READ_RESP_ONLY = 0x10,
	SROCE_OP_ACK = 0x11,
	SROCE_OP_ATOMIC_ACK = 0x12,
	SROCE_OP_CMP_SWAP = 0x13,
	SROCE_OP_FETCH_ADD = 0x14,
	SROCE_OP_SEND_LAST_INV = 0x16,
	SROCE_OP_SEND_ONLY_INV = 0x17,
	SROCE_OP_FLUSH = 0x1c,
	SROCE_OP_ATOMIC_WRITE = 0x1d,
	SROCE_OP_MASK = 0x1f,
};

#define SROCE_OPCODE_CNP (SROCE_TRANSPORT_CNP | 0x01)

/**
 * enum sroce_opf - properties of an opcode
 * @SROCE_OPF_VALID: sroce knows and handles this opcode
 * @SROCE_OPF_DETH: a DETH follows the BTH
 * @SROCE_OPF_RETH: an RETH follows
 * @SROCE_OPF_ATMETH: an AtomicETH follows
 * @SROCE_OPF_AETH: an AETH follows
 * @SROCE_OPF_ATMACK: an AtomicAckETH follows
 * @SROCE_OPF_IMMDT: immediate data follows
 * @SROCE_OPF_IETH: an IETH (rkey to invalidate) follows
 * @SROCE_OPF_PAYLOAD: the packet carries (possibly zero bytes of) data
 * @SROCE_OPF_REQ: a request, handled by the responder
 * @SROCE_OPF_RESP: a response, handled by the completer
 * @SROCE_OPF_SEND: part of a SEND
 * @SROCE_OPF_WRITE: part of an RDMA WRITE
 * @SROCE_OPF_READ: a READ request or response
 * @SROCE_OPF_ATOMIC: an atomic request or acknowledgment
 * @SROCE_OPF_FIRST: first packet of a multi-packet message
 * @SROCE_OPF_MIDDLE: middle packet
 * @SROCE_OPF_LAST: last packet of a multi-packet message
 * @SROCE_OPF_ONLY: the message's only packet
 * @SROCE_OPF_ATOMIC_WRITE: an ATOMIC WRITE request (IBTA 1.5): an RETH and
 *	8 bytes, answered like a READ of nothing
 * @SROCE_OPF_XRCETH: an XRCETH follows (every XRC request): the SRQ the
 *	target QP receives into, and whose PD it checks keys against
 * @SROCE_OPF_FLUSH: a FLUSH request (IBTA 1.5): a FETH, then an RETH, no
 *	data, answered like a READ of nothing
 */
enum sroce_opf {
	SROCE_OPF_VALID = BIT(0),
	SROCE_OPF_DETH = BIT(1),
	SROCE_OPF_RETH = BIT(2),
	SROCE_OPF_ATMETH = BIT(3),
	SROCE_OPF_AETH = BIT(4),
	SROCE_OPF_ATMACK = BIT(5),
	SROCE_OPF_IMMDT = BIT(6),
	SROCE_OPF_IETH = BIT(7),
	SROCE_OPF_PAYLOAD = BIT(8),
	SROCE_OPF_REQ = BIT(9),
	SROCE_OPF_RESP = BIT(10),
	SROCE_OPF_SEND = BIT(11),
	SROCE_OPF_WRITE = BIT(12),
	SROCE_OPF_READ = BIT(13),
	SROCE_OPF_ATOMIC = BIT(14),
	SROCE_OPF_FIRST = BIT(15),
	SROCE_OPF_MIDDLE = BIT(16),
	SROCE_OPF_LAST = BIT(17),
	SROCE_OPF_ONLY = BIT(18),
	SROCE_OPF_ATOMIC_WRITE = BIT(19),
	SROCE_OPF_XRCETH = BIT(20),
	SROCE_OPF_FLUSH = BIT(21),
};

#define SROCE_OPF_START (SROCE_OPF_FIRST | SROCE_OPF_ONLY)
#define SROCE_OPF_END (SROCE_OPF_LAST | SROCE_OPF_ONLY)

/**
 * struct sroce_opcode_info - one opcode
 * @name: for debug output
 * @flags: enum sroce_opf
 * @hdr_len: bytes from the start of the BTH to the payload
 * @off_deth: offset of the DETH from the start of the BTH, if present
 * @off_xrceth: likewise for the XRCETH
 * @off_feth: likewise for the FETH
 * @off_reth: likewise for the RETH
 * @off_atmeth: likewise for the AtomicETH
 * @off_aeth: likewise for the AETH
 * @off_atmack: likewise for the AtomicAckETH
 * @off_immdt: likewise for the immediate data or the IETH
 */
struct sroce_opcode_info {
	const char *name;
	u32 flags;
	u8 hdr_len;
	u8 off_deth;
	u8 off_xrceth;
	u8 off_feth;
	u8 off_reth;
	u8 off_atmeth;
	u8 off_aeth;
	u8 off_atmack;
	u8 off_immdt;
};

extern struct sroce_opcode_info sroce_opcodes[256];

void sroce_opcode_init(void);

static inline const struct sroce_opcode_info *sroce_opcode(u8 opcode)
{
	return &sroce_opcodes[opcode];
}

#endif /* SROCE_OPCODE_H */
