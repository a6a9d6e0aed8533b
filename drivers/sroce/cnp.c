// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cnp.c - the notification point: a packet that arrives marked CE (a
 * congested hop set the IP header's ECN field to 11) is answered with a
 * Congestion Notification Packet to the QP that sent it, whose reaction
 * point (cc.c on an sroce peer) then slows down.
 *
 * A CNP (RoCEv2 annex, A17.9.3) is a BTH with opcode 0x81, BECN set, the
 * P_Key, the destination QP and PSN 0, then 16 reserved bytes and the
 * ICRC.  It goes to the peer of a connected QP, or for UD to the address
 * and source QP the datagram came from; at most one per QP per
 * min_time_between_cnps, with the DSCP cnp_dscp.  Multicast datagrams and
 * the GSI QP's are not answered.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>

#include "hdr.h"
#include "icrc.h"
#include "opcode.h"
#include "sroce.h"

/* Not more often than min_time_between_cnps for this QP. */
static bool sroce_cnp_due(struct sroce_qp *qp, u32 usecs)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;
	bool due;
	u64 now;

	spin_lock_irqsave(&cc->lock, flags);
	now = ktime_get_ns();
	due = now - cc->cnp_ns >= (u64)usecs * NSEC_PER_USEC || !cc->cnp_ns;
	if (due)
		cc->cnp_ns = now;
	spin_unlock_irqrestore(&cc->lock, flags);
	return due;
}

/* Back to where a datagram came from: its source address. */
static void sroce_cnp_av_reply(const struct sk_buff *skb, struct sroce_av *av)
{
	memset(av, 0, sizeof(*av));
	av->ttl = 64;
	av->ifindex = skb->dev ? skb->dev->ifindex : 0;
	if (skb->protocol == htons(ETH_P_IP)) {
		av->network_type = RDMA_NETWORK_IPV4;
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &av->saddr);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &av->daddr);
	} else {
		av->network_type = RDMA_NETWORK_IPV6;
		av->saddr = ipv6_hdr(skb)->daddr;
		av->daddr = ipv6_hdr(skb)->saddr;
	}
}

static struct sk_buff *sroce_cnp_build(struct sroce_dev *sdev, u32 dqpn)
{
	unsigned int len = sizeof(struct sroce_bth) + SROCE_CNP_PAYLOAD +
			   SROCE_ICRC_SIZE;
	struct sroce_bth *bth;
	struct sk_buff *skb;

	skb = sroce_net_alloc_skb(sdev, len);
	if (!skb)
		return NULL;
	memset(skb->data, 0, len);
	bth = (struct sroce_bth *)skb->data;
	bth->opcode = SROCE_OPCODE_CNP;
	bth->pkey = cpu_to_be16(SROCE_DEFAULT_PKEY);
	bth->qpn = cpu_to_be32(SROCE_BTH_BECN | (dqpn & SROCE_24BIT_MASK));
	return skb;
}

static bool sroce_cnp_ce(const struct sk_buff *skb)
{
	u8 dsfield = skb->protocol == htons(ETH_P_IP) ?
		     ipv4_get_dsfield(ip_hdr(skb)) :
		     ipv6_get_dsfield(ipv6_hdr(skb));

	return INET_ECN_is_ce(dsfield);
}

/**
 * sroce_cnp_rx_ce() - the notification point, for a packet its QP takes
 * @pkt: a packet that passed the receive path's checks for pkt->qp
 *
 * A packet marked CE is counted in np_ecn_marked_roce_packets and, while
 * the device's notification point is on, answered with a CNP unless one
 * went to the same QP less than min_time_between_cnps ago; each CNP sent
 * is counted in np_cnp_sent.
 *
 * Context: Softirq, or process context with BH disabled; no QP lock held.
 */
void sroce_cnp_rx_ce(struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = pkt->sdev;
	struct sroce_qp *qp = pkt->qp;
	struct sroce_av av;
	struct sk_buff *skb;
	u32 dqpn;

	if (!sroce_cnp_ce(pkt->skb))
		return;
	sroce_count(sdev, SROCE_CNT_NP_ECN_MARKED);
	if (!sroce_cc_param(sdev, SROCE_CC_NP_ENABLE) ||
	    sroce_bth_qpn(pkt->bth) == SROCE_MULTICAST_QPN)
		return;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_XRC_TGT:
		av = qp->av;
		dqpn = qp->dest_qpn;
		break;
	case IB_QPT_UD:
		sroce_cnp_av_reply(pkt->skb, &av);
		dqpn = be32_to_cpu(sroce_pkt_deth(pkt)->sqpn);
		break;
	default:
		return;
	}
	if (!sroce_cnp_due(qp, sroce_cc_param(sdev,
					      SROCE_CC_MIN_TIME_BETWEEN_CNPS)))
		return;
	av.tos = sroce_cc_param(sdev, SROCE_CC_CNP_DSCP) << 2;
	skb = sroce_cnp_build(sdev, dqpn);
	if (!skb) {
		sroce_drop(sdev, qp->ibqp.qp_num, 0, SROCE_CNT_TX_ERRORS);
		return;
	}
	if (!sroce_net_xmit(sdev, qp, &av, skb))
		sroce_count(sdev, SROCE_CNT_NP_CNP_SENT);
}
