// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tx.c - building packets: the BTH, room for the opcode's extension
 * headers, the payload and its pad.  The IP and UDP headers and the ICRC
 * are added when the packet is sent (net.c).
 */
#include <linux/skbuff.h>

#include "hdr.h"
#include "opcode.h"
#include "sroce.h"

/**
 * sroce_tx_alloc() - allocate a packet and fill its BTH
 * @sdev: the device sending
 * @qp: the QP sending (unused for now; kept for pacing and counters)
 * @opcode: BTH opcode
 * @paylen: bytes of payload
 * @dqpn: destination QP
 * @psn: PSN
 * @ackreq: set AckReq
 * @se: set Solicited Event
 * @hdrs: set to the BTH; extension headers are at the opcode's offsets
 *	from it, zeroed
 * @payload: set to where @paylen bytes of payload go
 *
 * Context: Any context.
 * Return: the packet, data from the BTH to the (unfilled) ICRC, or NULL.
 */
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev, struct sroce_qp *qp,
			       u8 opcode, u32 paylen, u32 dqpn, u32 psn,
			       bool ackreq, bool se, void **hdrs,
			       void **payload)
{
	const struct sroce_opcode_info *info = sroce_opcode(opcode);
	u32 pad = (-paylen) & 3;
	struct sroce_bth *bth;
	struct sk_buff *skb;

	skb = sroce_net_alloc_skb(sdev, info->hdr_len + paylen + pad +
				  SROCE_ICRC_SIZE);
	if (!skb)
		return NULL;
	bth = (struct sroce_bth *)skb->data;
	memset(bth, 0, info->hdr_len);
	bth->opcode = opcode;
	bth->flags = FIELD_PREP(SROCE_BTH_PADCNT, pad) | SROCE_BTH_MIGREQ |
		     (se ? SROCE_BTH_SE : 0);
	bth->pkey = cpu_to_be16(SROCE_DEFAULT_PKEY);
	bth->qpn = cpu_to_be32(dqpn & SROCE_24BIT_MASK);
	bth->apsn = cpu_to_be32((psn & SROCE_24BIT_MASK) |
				(ackreq ? SROCE_BTH_ACKREQ : 0));
	memset(skb->data + info->hdr_len + paylen, 0, pad + SROCE_ICRC_SIZE);
	*hdrs = bth;
	*payload = skb->data + info->hdr_len;
	return skb;
}
