// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * icrc.c - the invariant CRC that closes every RoCEv2 packet.
 *
 * CRC-32 (reflected polynomial 0xedb88320, Linux's crc32_le) over a
 * pseudo-header and the packet: the IP header, the UDP header and the BTH,
 * each with the fields routers may rewrite set to all ones (IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit; UDP
 * checksum; BTH byte 4), then everything after the BTH up to the ICRC.  The
 * register starts where eight 0xff bytes (the masked LRH of native
 * InfiniBand) leave an all-ones register, and the complement of the result
 * is stored little-endian.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "hdr.h"
#include "icrc.h"

/* crc32_le(~0, eight 0xff bytes): the masked LRH, precomputed. */
#define SROCE_ICRC_SEED 0xdebb20e3U

#define SROCE_ICRC_PSEUDO_MAX (sizeof(struct ipv6hdr) + \
			       sizeof(struct udphdr) + sizeof(struct sroce_bth))

static unsigned int sroce_icrc_pseudo(u8 *buf, const u8 *ip,
				      unsigned int ip_len, const u8 *roce)
{
	unsigned int len = ip_len + sizeof(struct udphdr) +
			   sizeof(struct sroce_bth);

	memcpy(buf, ip, ip_len);
	memcpy(buf + ip_len, roce, len - ip_len);
	if (ip_len == sizeof(struct iphdr)) {
		buf[1] = 0xff;				/* TOS */
		buf[8] = 0xff;				/* TTL */
		buf[10] = 0xff;				/* checksum */
		buf[11] = 0xff;
	} else {
		buf[0] |= 0x0f;				/* traffic class, */
		buf[1] = 0xff;				/* flow label */
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff;				/* hop limit */
	}
	buf[ip_len + 6] = 0xff;				/* UDP checksum */
	buf[ip_len + 7] = 0xff;
	buf[ip_len + sizeof(struct udphdr) + 4] = 0xff;	/* BTH byte 4 */
	return len;
}

/**
 * sroce_icrc_buf() - the ICRC of a packet in flat buffers
 * @ip: the IP header (20 bytes for IPv4, without options, or 40 for IPv6)
 * @ip_len: its length
 * @roce: the UDP header, followed by the rest of the packet
 * @roce_len: bytes from the UDP header up to, not including, the ICRC; at
 *	least UDP header plus BTH
 *
 * Context: Any context.
 * Return: the ICRC as it goes on the wire.
 */
__le32 sroce_icrc_buf(const void *ip, unsigned int ip_len, const void *roce,
		      unsigned int roce_len)
{
	unsigned int skip = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u8 pseudo[SROCE_ICRC_PSEUDO_MAX];
	unsigned int len;
	u32 crc;

	len = sroce_icrc_pseudo(pseudo, ip, ip_len, roce);
	crc = crc32_le(SROCE_ICRC_SEED, pseudo, len);
	crc = crc32_le(crc, (const u8 *)roce + skip, roce_len - skip);
	return cpu_to_le32(~crc);
}

/**
 * sroce_icrc() - the ICRC of a packet in a linear skb
 * @skb: the packet; its network header is the IP header, its transport
 *	header the UDP header, and it ends with the 4-byte ICRC field
 *
 * Context: Any context.
 * Return: the ICRC the packet should carry.
 */
__le32 sroce_icrc(const struct sk_buff *skb)
{
	const u8 *ip = skb_network_header(skb);
	const u8 *udp = skb_transport_header(skb);

	return sroce_icrc_buf(ip, udp - ip, udp,
			      skb_tail_pointer(skb) - udp - SROCE_ICRC_SIZE);
}
