/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hdr.h - RoCEv2 wire headers: the InfiniBand transport headers carried in
 * UDP datagrams to port 4791.  Every multi-byte field is big-endian and
 * typed __be so sparse catches a missing conversion; only the ICRC is
 * little-endian.  Layouts: IBTA vol. 1 chapter 9 and annex A17.
 */
#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include <linux/bitfield.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <asm/byteorder.h>

/* 24-bit fields: QP numbers, PSNs, MSNs. */
#define SROCE_24BIT_MASK 0xffffffU

/**
 * struct sroce_bth - Base Transport Header, first in every packet
 * @opcode: transport (bits 7:5) and operation (bits 4:0)
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5:4), TVer (bits 3:0)
 * @pkey: partition key
 * @qpn: FECN (bit 31), BECN (bit 30), reserved, destination QP (bits 23:0)
 * @apsn: AckReq (bit 31), reserved, PSN (bits 23:0)
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
};

static_assert(sizeof(struct sroce_bth) == 12);

#define SROCE_BTH_SE		BIT(7)
#define SROCE_BTH_MIGREQ	BIT(6)
#define SROCE_BTH_PADCNT	GENMASK(5, 4)
#define SROCE_BTH_TVER		GENMASK(3, 0)
#define SROCE_BTH_BECN		BIT(30)
#define SROCE_BTH_ACKREQ	BIT(31)

/* RDMA Extended Transport Header: WRITE First/Only, READ Request. */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 length;
};

static_assert(sizeof(struct sroce_reth) == 16);

/*
 * FLUSH Extended Transport Header (IBTA 1.5): the placement type (bits
 * 3:0, enum sroce_flush_type) and the selectivity level (bits 5:4, enum
 * sroce_flush_level); the rest is reserved.
 */
struct sroce_feth {
	__be32 bits;
};

static_assert(sizeof(struct sroce_feth) == 4);

#define SROCE_FETH_PLT		GENMASK(3, 0)
#define SROCE_FETH_SEL		GENMASK(5, 4)

/* ACK Extended Transport Header: ACK, Atomic ACK, READ responses. */
struct sroce_aeth {
	__be32 smsn;	/* syndrome (bits 31:24), MSN (bits 23:0) */
};

static_assert(sizeof(struct sroce_aeth) == 4);

/* Atomic Extended Transport Header: CmpSwap, FetchAdd. */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

static_assert(sizeof(struct sroce_atmeth) == 28);

/* Atomic ACK Extended Transport Header: the original remote value. */
struct sroce_atmack {
	__be64 orig;
} __packed;

static_assert(sizeof(struct sroce_atmack) == 8);

/* Datagram Extended Transport Header: UD. */
struct sroce_deth {
	__be32 qkey;
	__be32 sqpn;	/* reserved (bits 31:24), source QP (bits 23:0) */
};

static_assert(sizeof(struct sroce_deth) == 8);

/* XRC Extended Transport Header: every XRC request. */
struct sroce_xrceth {
	__be32 srqn;	/* reserved (bits 31:24), XRC SRQ (bits 23:0) */
};

static_assert(sizeof(struct sroce_xrceth) == 4);

/* Immediate data, and Invalidate Extended Transport Header. */
struct sroce_immdt {
	__be32 imm;
};

struct sroce_ieth {
	__be32 rkey;
};

static_assert(sizeof(struct sroce_immdt) == 4);
static_assert(sizeof(struct sroce_ieth) == 4);

/* Congestion Notification Packet: BTH, then 16 reserved bytes. */
#define SROCE_CNP_PAYLOAD	16

/* The invariant CRC that closes every packet. */
#define SROCE_ICRC_SIZE		4

/* AETH syndromes (the byte above the MSN). */
enum sroce_aeth_syndrome {
	SROCE_AETH_TYPE_MASK	= 0x60,
	SROCE_AETH_ACK		= 0x00,	/* | credit code */
	SROCE_AETH_RNR_NAK	= 0x20,	/* | RNR timer code */
	SROCE_AETH_NAK		= 0x60,	/* | NAK code */
	SROCE_AETH_CODE_MASK	= 0x1f,
	SROCE_AETH_ACK_UNLIMITED = 0x1f, /* credits not used */
};

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR	= 0,
	SROCE_NAK_INVALID_REQ	= 1,
	SROCE_NAK_REM_ACCESS	= 2,
	SROCE_NAK_REM_OP	= 3,
	SROCE_NAK_INVALID_RD	= 4,
};

/* The Q_Key of QP1, and the bit that makes a WR's Q_Key the QP's. */
#define SROCE_GSI_QKEY		0x80010000U
#define SROCE_QKEY_PRIVILEGED	0x80000000U

/* Default P_Key, full membership. */
#define SROCE_DEFAULT_PKEY	0xffff

/* Multicast destination QP. */
#define SROCE_MULTICAST_QPN	0xffffffU

static inline u32 sroce_bth_qpn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SROCE_24BIT_MASK;
}

static inline u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_24BIT_MASK;
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_BTH_ACKREQ;
}

static inline unsigned int sroce_bth_padcnt(const struct sroce_bth *bth)
{
	return FIELD_GET(SROCE_BTH_PADCNT, bth->flags);
}

static inline unsigned int sroce_bth_tver(const struct sroce_bth *bth)
{
	return FIELD_GET(SROCE_BTH_TVER, bth->flags);
}

static inline bool sroce_bth_se(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_SE;
}

static inline u8 sroce_aeth_syndrome(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 sroce_aeth_msn(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & SROCE_24BIT_MASK;
}

static inline __be32 sroce_aeth_pack(u8 syndrome, u32 msn)
{
	return cpu_to_be32((u32)syndrome << 24 | (msn & SROCE_24BIT_MASK));
}

/*
 * PSN arithmetic: 24-bit sequence numbers compared by the sign of their
 * difference, which gives a window of 2^23 on either side.
 */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_24BIT_MASK;
}

#endif /* SROCE_HDR_H */
