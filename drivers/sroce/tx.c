// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tx.c - building packets: the BTH, room for the opcode's extension
 * headers, the payload and its pad, the payload either in the linear area
 * or in page fragments the caller attaches (mem.c).  The IP and UDP
 * headers and the ICRC are added when the packet is sent (net.c).
 */
#include <linux/mm.h>
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
 * @payload: set to where @paylen bytes of payload go; or NULL: the
 *	caller attaches them as page fragments (sroce_sge_attach()) and then
 *	closes the packet with sroce_tx_seal()
 *
 * Context: Any context.
 * Return: the packet, data from the BTH to the (unfilled) ICRC, or to the
 * end of the headers when @payload is NULL; or NULL.
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
	u32 len = info->hdr_len;

	if (payload)
		len += paylen + pad + SROCE_ICRC_SIZE;
	skb = sroce_net_alloc_skb(sdev, len);
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
	*hdrs = bth;
	if (payload) {
		memset(skb->data + info->hdr_len + paylen, 0,
		       pad + SROCE_ICRC_SIZE);
		*payload = skb->data + info->hdr_len;
	}
	return skb;
}

/**
 * sroce_tx_seal() - close a packet whose payload is in page fragments
 * @skb: from sroce_tx_alloc() without a payload buffer, the payload
 *	attached
 *
 * The pad and the ICRC field go in one more fragment, zeroed, of memory
 * sroce owns: net.c writes the ICRC there when the packet leaves the host.
 *
 * Context: Any context.
 * Return: 0, or -ENOMEM.
 */
int sroce_tx_seal(struct sk_buff *skb)
{
	const struct sroce_bth *bth = (const struct sroce_bth *)skb->data;
	u32 len = sroce_bth_padcnt(bth) + SROCE_ICRC_SIZE;
	struct page *page;
	void *tail;

	tail = netdev_alloc_frag(len);
	if (!tail)
		return -ENOMEM;
	memset(tail, 0, len);
	page = virt_to_head_page(tail);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   tail - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}
