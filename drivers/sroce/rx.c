// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rx.c - the receive path up to the QP: every check a packet must pass
 * before the responder or the completer sees it, each failure counted.
 *
 * Order: IP/UDP sanity, ICRC (not for packets an sroce device of this host
 * built and handed over without the IP stack: sroce_rx_local()), BTH
 * (version, opcode, lengths, pad), the destination QP (or, for QP 0xffffff,
 * every QP attached to the multicast group, mcast.c) and its transport,
 * state, P_Key and peer address.  Nothing is trusted before the check that
 * covers it: lengths come from the IP and UDP headers only after they agree,
 * the payload length only after the opcode's header length and the pad
 * count fit, and the contents only after the ICRC matches.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "hdr.h"
#include "icrc.h"
#include "opcode.h"
#include "sroce.h"
#include "trace.h"

static void sroce_rx_drop(struct sroce_pkt *pkt, enum sroce_counter why)
{
	sroce_drop_pkt(pkt, why);
	kfree_skb(pkt->skb);
}

/* IP and UDP headers: what the ICRC covers, consistent with the skb. */
static int sroce_rx_check_ip_udp(struct sk_buff *skb)
{
	const struct udphdr *uh = udp_hdr(skb);
	unsigned int iplen = skb_transport_offset(skb) -
			     skb_network_offset(skb);

	if (skb->protocol == htons(ETH_P_IP)) {
		if (iplen != sizeof(struct iphdr) || ip_hdr(skb)->ihl != 5)
			return -EINVAL;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		if (iplen != sizeof(struct ipv6hdr))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (ntohs(uh->len) != skb->len)
		return -EINVAL;
	return 0;
}

/*
 * A CNP: the notification point of a peer saw ECN marks on what we sent it
 * (BTH, 16 reserved bytes, ICRC).  Well formed, it goes on to the reaction
 * point of the QP it names (sroce_rx_cnp_qp()); the verdict is this
 * counter, for a CNP, until then.
 */
static enum sroce_counter sroce_rx_cnp(const struct sroce_pkt *pkt)
{
	if (pkt->skb->len < sizeof(struct sroce_bth) + SROCE_CNP_PAYLOAD +
			    SROCE_ICRC_SIZE)
		return SROCE_CNT_RX_DROP_SHORT;
	return SROCE_CNT_RP_CNP_IGNORED;
}

/*
 * The BTH, then the extension headers its opcode has, made linear; the
 * payload stays where it is (pkt.c reads it).  Pulling may move the
 * linear area, so the BTH is found again after it.
 */
static enum sroce_counter sroce_rx_parse(struct sroce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	unsigned int pad, len;

	if (skb->len < sizeof(struct sroce_bth) + SROCE_ICRC_SIZE)
		return SROCE_CNT_RX_DROP_SHORT;
	if (!pskb_may_pull(skb, sizeof(struct sroce_bth)))
		return SROCE_CNT_RX_DROP_HEADER;
	pkt->bth = (struct sroce_bth *)skb->data;
	pkt->opcode = pkt->bth->opcode;
	pkt->info = sroce_opcode(pkt->opcode);
	if (sroce_bth_tver(pkt->bth))
		return SROCE_CNT_RX_DROP_HEADER;
	if (pkt->opcode == SROCE_OPCODE_CNP)
		return sroce_rx_cnp(pkt);
	if (!(pkt->info->flags & SROCE_OPF_VALID))
		return SROCE_CNT_RX_DROP_OPCODE;
	pad = sroce_bth_padcnt(pkt->bth);
	len = pkt->info->hdr_len + pad + SROCE_ICRC_SIZE;
	if (skb->len < len)
		return SROCE_CNT_RX_DROP_SHORT;
	if (!pskb_may_pull(skb, pkt->info->hdr_len))
		return SROCE_CNT_RX_DROP_HEADER;
	pkt->bth = (struct sroce_bth *)skb->data;
	pkt->paylen = skb->len - len;
	if (!(pkt->info->flags & SROCE_OPF_PAYLOAD) && (pkt->paylen || pad))
		return SROCE_CNT_RX_DROP_HEADER;
	pkt->payoff = pkt->info->hdr_len;
	pkt->psn = sroce_bth_psn(pkt->bth);
	return SROCE_CNT_MAX;
}

static bool sroce_rx_icrc_ok(struct sk_buff *skb)
{
	__le32 want = sroce_icrc(skb);
	__le32 got;

	if (skb_copy_bits(skb, skb->len - SROCE_ICRC_SIZE, &got, sizeof(got)))
		return false;
	return want == got;
}

static bool sroce_rx_transport_ok(struct sroce_qp *qp, u8 opcode)
{
	u8 transport = opcode & SROCE_TRANSPORT_MASK;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == SROCE_TRANSPORT_RC;
	case IB_QPT_XRC_INI:	/* only sends requests */
		return transport == SROCE_TRANSPORT_XRC &&
		       (sroce_opcode(opcode)->flags & SROCE_OPF_RESP);
	case IB_QPT_XRC_TGT:	/* only answers them */
		return transport == SROCE_TRANSPORT_XRC &&
		       (sroce_opcode(opcode)->flags & SROCE_OPF_REQ);
	case IB_QPT_UC:
		return transport == SROCE_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return transport == SROCE_TRANSPORT_UD;
	default:
		return false;
	}
}

static bool sroce_rx_state_ok(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	u8 state = READ_ONCE(qp->state);

	if (pkt->info->flags & SROCE_OPF_RESP)
		return state == IB_QPS_RTS || state == IB_QPS_SQD ||
		       state == IB_QPS_SQE;
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

/* Connected QPs take packets from their peer's address only. */
static bool sroce_rx_peer_ok(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (!sroce_qp_connected(qp))
		return true;
	if (skb->protocol == htons(ETH_P_IP))
		return qp->av.daddr.s6_addr32[3] == ip_hdr(skb)->saddr &&
		       ipv6_addr_v4mapped(&qp->av.daddr);
	return ipv6_addr_equal(&qp->av.daddr, &ipv6_hdr(skb)->saddr);
}

static enum sroce_counter sroce_rx_check_qp(struct sroce_pkt *pkt)
{
	struct sroce_qp *qp = pkt->qp;
	u16 pkey = be16_to_cpu(pkt->bth->pkey);

	if (!sroce_rx_transport_ok(qp, pkt->opcode))
		return SROCE_CNT_RX_DROP_QP_TYPE;
	if (!sroce_rx_state_ok(qp, pkt))
		return SROCE_CNT_RX_DROP_QP_STATE;
	if ((pkey & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff))
		return SROCE_CNT_RX_DROP_PKEY;
	if (!sroce_rx_peer_ok(qp, pkt->skb))
		return SROCE_CNT_RX_DROP_ADDRESS;
	return SROCE_CNT_MAX;
}

static enum sroce_counter sroce_rx_validate(struct sroce_pkt *pkt, bool icrc)
{
	if (pkt->skb->len < sizeof(struct udphdr) + sizeof(struct sroce_bth) +
			    SROCE_ICRC_SIZE)
		return SROCE_CNT_RX_DROP_SHORT;
	/*
	 * The IP and UDP headers are in the linear area (the IP and UDP
	 * layers pulled them); what follows may be anywhere: nothing is
	 * copied to make it linear but the BTH (the ICRC's pseudo-header
	 * reads it) and its extension headers (sroce_rx_parse()).
	 */
	if (sroce_rx_check_ip_udp(pkt->skb) ||
	    !pskb_may_pull(pkt->skb, sizeof(struct udphdr) +
			   sizeof(struct sroce_bth)))
		return SROCE_CNT_RX_DROP_HEADER;
	if (icrc && !sroce_rx_icrc_ok(pkt->skb))
		return SROCE_CNT_RX_DROP_ICRC;
	__skb_pull(pkt->skb, sizeof(struct udphdr));
	return sroce_rx_parse(pkt);
}

/* A CNP's QP: one of the device's that sends, and from its peer. */
static bool sroce_rx_cnp_ok(struct sroce_qp *qp, struct sk_buff *skb)
{
	u8 state = READ_ONCE(qp->state);

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC &&
	    qp->ibqp.qp_type != IB_QPT_UD &&
	    qp->ibqp.qp_type != IB_QPT_XRC_INI)
		return false;
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	return sroce_rx_peer_ok(qp, skb);
}

/* The reaction point of the QP a CNP names; the counter it ends in. */
static enum sroce_counter sroce_rx_cnp_qp(struct sroce_pkt *pkt)
{
	enum sroce_counter why = SROCE_CNT_RP_CNP_IGNORED;
	struct sroce_qp *qp;

	rcu_read_lock();
	qp = sroce_qp_get_rcu(pkt->sdev, sroce_bth_qpn(pkt->bth));
	rcu_read_unlock();
	if (!qp)
		return why;
	if (sroce_rx_cnp_ok(qp, pkt->skb) && sroce_cc_cnp(qp))
		why = SROCE_CNT_RP_CNP_HANDLED;
	sroce_qp_put(qp);
	return why;
}

/**
 * sroce_rx_to_qp() - hand a validated packet to its QP's transport
 * @pkt: the packet; pkt->qp is the destination QP, referenced by the caller
 *
 * The packet is checked against the QP first (transport, state, P_Key,
 * peer address); a mismatch is counted and the packet left alone.  One
 * that passes and arrived marked CE goes by the notification point
 * (cnp.c) first.  The caller keeps the skb.
 *
 * Context: Softirq, or process context with BH disabled.
 */
void sroce_rx_to_qp(struct sroce_pkt *pkt)
{
	enum sroce_counter why = sroce_rx_check_qp(pkt);

	if (why != SROCE_CNT_MAX) {
		sroce_drop_pkt(pkt, why);
		return;
	}
	sroce_cnp_rx_ce(pkt);
	if (pkt->info->flags & SROCE_OPF_REQ)
		sroce_resp_rcv(pkt);
	else
		sroce_comp_rcv(pkt);
}

static void sroce_rx_one(struct sroce_dev *sdev, struct sk_buff *skb,
			 bool icrc)
{
	struct sroce_pkt pkt = { .sdev = sdev, .skb = skb };
	enum sroce_counter why;

	sroce_count(sdev, SROCE_CNT_RX_PACKETS);
	why = sroce_rx_validate(&pkt, icrc);
	trace_sroce_rx(&pkt);
	if (why == SROCE_CNT_RP_CNP_IGNORED) {
		sroce_count(sdev, sroce_rx_cnp_qp(&pkt));
		trace_sroce_cnp(&pkt);
		kfree_skb(skb);
		return;
	}
	if (why != SROCE_CNT_MAX)
		return sroce_rx_drop(&pkt, why);
	if (sroce_bth_qpn(pkt.bth) == SROCE_MULTICAST_QPN) {
		sroce_mcast_rx(&pkt);
		kfree_skb(skb);
		return;
	}
	rcu_read_lock();
	pkt.qp = sroce_qp_get_rcu(sdev, sroce_bth_qpn(pkt.bth));
	rcu_read_unlock();
	if (!pkt.qp)
		return sroce_rx_drop(&pkt, SROCE_CNT_RX_DROP_NO_QP);
	sroce_rx_to_qp(&pkt);
	sroce_qp_put(pkt.qp);
	kfree_skb(skb);
}

/**
 * sroce_rx() - receive one RoCEv2 datagram from the network
 * @sdev: the device whose netdev it arrived on (the caller holds a device
 *	reference)
 * @skb: the datagram, data at the UDP header, network and transport
 *	headers set; consumed
 *
 * Context: Softirq, or process context with BH disabled.
 */
void sroce_rx(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_rx_one(sdev, skb, true);
}

/**
 * sroce_rx_local() - receive a packet an sroce device of this host built
 * @sdev: the device owning its destination address (the caller holds a
 *	device reference)
 * @skb: as for sroce_rx(); its ICRC field is not filled in and not checked:
 *	the packet never left this host's memory (net.c)
 *
 * Context: Process context with BH disabled, or softirq.
 */
void sroce_rx_local(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_rx_one(sdev, skb, false);
}
