/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hdr.h - RoCEv2 wire headers (InfiniBand transport headers carried in UDP
 * to port 4791).  Every multi-byte field is big-endian and typed __be so
 * sparse catches a missing conversion; the ICRC alone is little-endian.
 * Layouts: Documentation/design.rst and the IBTA spec, vol. 1 chapter 9.
 */
#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include <linux/build_bug.h>
#include <linux/types.h>

/**
 * struct sroce_bth - Base Transport Header, first in every packet
 * @opcode: transport (bits 7:5) and operation (bits 4:0)
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5:4), TVer (bits 3:0)
 * @pkey: partition key
 * @qpn: FECN/BECN/reserved (bits 31:24), destination QP (bits 23:0)
 * @apsn: AckReq (bit 31), reserved (bits 30:24), PSN (bits 23:0)
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
};

static_assert(sizeof(struct sroce_bth) == 12);

/* The invariant CRC that closes every packet. */
#define SROCE_ICRC_SIZE 4

#endif /* SROCE_HDR_H */
