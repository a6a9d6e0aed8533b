/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * roce_wire.h - RoCEv2 on the wire for the test programs that build
 * packets themselves (sroce_fuzz, sroce_peer): big-endian field access,
 * the opcodes and AETH syndromes they use, and the ICRC
 * (Documentation: /work/shared/docs/wire-format.md sections 4, 6 and 8).
 *
 * The ICRC covers a pseudo-header: the IP header with its variant fields
 * (TOS/traffic class, TTL/hop limit, header checksum, flow label) set to
 * all ones, the UDP header with its checksum set to all ones, and the BTH
 * with byte 4 set to all ones; then the rest of the packet up to the ICRC.
 * The register starts where eight 0xff bytes (the masked LRH) leave an
 * all-ones CRC-32 register; the complement is stored little-endian.
 */
#ifndef SROCE_TEST_ROCE_WIRE_H
#define SROCE_TEST_ROCE_WIRE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define ROCE_PORT 4791
#define ICRC_LEN 4
#define BTH_LEN 12
#define RETH_LEN 16
#define AETH_LEN 4
#define ATMETH_LEN 28
#define ATMACK_LEN 8
#define FETH_LEN 4
#define IMM_LEN 4

/* RC opcodes (transport 0x00). */
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03, OP_SEND_ONLY = 0x04, OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06, OP_WRITE_MIDDLE = 0x07, OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09, OP_WRITE_ONLY = 0x0a, OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ_REQ = 0x0c, OP_READ_RESP_FIRST = 0x0d, OP_READ_RESP_MIDDLE = 0x0e,
	OP_READ_RESP_LAST = 0x0f, OP_READ_RESP_ONLY = 0x10, OP_ACK = 0x11,
	OP_ATOMIC_ACK = 0x12, OP_CMP_SWAP = 0x13, OP_FETCH_ADD = 0x14,
	OP_FLUSH = 0x1c, OP_ATOMIC_WRITE = 0x1d,
};

/*
 * FLUSH (IBTA 1.5): its FETH (before the RETH) holds the placement type in
 * bits 3:0 (global visibility, persistence) and the selectivity level in
 * bits 5:4 (a range, or the whole region).  The region's and the QP's
 * rights, one per placement type, are IBV_ACCESS_FLUSH_GLOBAL and
 * IBV_ACCESS_FLUSH_PERSISTENT in rdma-core 45 and later.
 */
#define FETH_GLOBAL 0x1
#define FETH_PERSISTENT 0x2
#define FETH_LEVEL_MR 0x10
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)

/* Congestion notification packet (RoCEv2): BTH, 16 reserved bytes, ICRC. */
#define OP_CNP 0x81

/* AETH syndromes (bits 31:24 of the AETH). */
#define AETH_ACK_UNLIMITED 0x1f
#define AETH_TYPE_MASK 0x60
#define AETH_TYPE_ACK 0x00
#define AETH_TYPE_RNR 0x20
#define AETH_TYPE_NAK 0x60
#define NAK_PSN_SEQ 0x60
#define NAK_INVALID_REQ 0x61
#define NAK_REM_ACCESS 0x62
#define NAK_REM_OP 0x63

static inline uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
	return p + 4;
}

static inline uint8_t *put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* --- the ICRC: CRC-32, reflected polynomial 0xedb88320 ----------------------- */

static uint32_t roce_crc_table[256];

static inline void roce_crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		roce_crc_table[i] = c;
	}
}

static inline uint32_t roce_crc_update(uint32_t reg, const uint8_t *p, size_t n)
{
	while (n--)
		reg = roce_crc_table[(reg ^ *p++) & 0xff] ^ (reg >> 8);
	return reg;
}

/*
 * What the ICRC of datagrams between two addresses starts with: the masked
 * IP header (lengths filled in per packet) and the UDP source port.  The
 * destination port is always 4791.
 */
struct roce_pseudo {
	int family;
	uint8_t ip[40];
	unsigned int iplen;
	uint16_t sport;		/* network order */
};

/*
 * Fill @ph for datagrams from @src to @dst (struct in_addr or struct
 * in6_addr, by @family) with UDP source port @sport (network order).  IPv4
 * packets are assumed to carry DF and IP ID 0, which is what Linux gives
 * an unconnected UDP socket with IP_PMTUDISC_DO; set ip[4..5] otherwise.
 */
static inline void roce_pseudo_init(struct roce_pseudo *ph, int family, const void *src,
				    const void *dst, uint16_t sport)
{
	uint8_t *h = ph->ip;

	memset(ph, 0, sizeof(*ph));
	ph->family = family;
	ph->sport = sport;
	if (family == AF_INET) {
		ph->iplen = 20;
		h[0] = 0x45;
		h[1] = 0xff;			/* TOS */
		h[6] = 0x40;			/* DF, ID 0 */
		h[8] = 0xff;			/* TTL */
		h[9] = IPPROTO_UDP;
		h[10] = h[11] = 0xff;		/* header checksum */
		memcpy(h + 12, src, 4);
		memcpy(h + 16, dst, 4);
	} else {
		ph->iplen = 40;
		h[0] = 0x6f;			/* version 6; traffic class, */
		h[1] = h[2] = h[3] = 0xff;	/* flow label masked */
		h[6] = IPPROTO_UDP;
		h[7] = 0xff;			/* hop limit */
		memcpy(h + 8, src, 16);
		memcpy(h + 24, dst, 16);
	}
}

/*
 * The ICRC of a UDP payload @p of @len bytes (BTH .. ICRC) described by
 * @ph.  Needs len >= BTH + ICRC.
 */
static inline uint32_t roce_icrc(const struct roce_pseudo *ph, const uint8_t *p, size_t len)
{
	uint8_t hdr[40 + 8 + BTH_LEN];
	unsigned int n = ph->iplen;
	uint16_t plen;
	uint32_t reg;

	memcpy(hdr, ph->ip, n);
	if (ph->family == AF_INET) {
		plen = htons((uint16_t)(20 + 8 + len));
		memcpy(hdr + 2, &plen, 2);
	} else {
		plen = htons((uint16_t)(8 + len));
		memcpy(hdr + 4, &plen, 2);
	}
	memcpy(hdr + n, &ph->sport, 2);
	hdr[n + 2] = ROCE_PORT >> 8;
	hdr[n + 3] = ROCE_PORT & 0xff;
	plen = htons((uint16_t)(8 + len));
	memcpy(hdr + n + 4, &plen, 2);
	hdr[n + 6] = 0xff;
	hdr[n + 7] = 0xff;
	n += 8;
	memcpy(hdr + n, p, BTH_LEN);
	hdr[n + 4] = 0xff;
	n += BTH_LEN;
	reg = roce_crc_update(0xffffffffu, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	reg = roce_crc_update(reg, hdr, n);
	reg = roce_crc_update(reg, p + BTH_LEN, len - BTH_LEN - ICRC_LEN);
	return ~reg;
}

static inline void roce_put_icrc(uint8_t *p, size_t len, uint32_t icrc)
{
	p[len - 4] = icrc & 0xff;
	p[len - 3] = (icrc >> 8) & 0xff;
	p[len - 2] = (icrc >> 16) & 0xff;
	p[len - 1] = icrc >> 24;
}

static inline uint32_t roce_get_icrc(const uint8_t *p, size_t len)
{
	return (uint32_t)p[len - 4] | (uint32_t)p[len - 3] << 8 |
	       (uint32_t)p[len - 2] << 16 | (uint32_t)p[len - 1] << 24;
}

/*
 * Known answers (wire-format.md section 6: an RC ACK captured from
 * rdma_rxe over IPv4, and the same over IPv6).  Prints one line; returns
 * non-zero if the code is wrong.  Call roce_crc_init() first.
 */
static inline int roce_icrc_selftest(void)
{
	static const uint8_t v4[] = {
		0x45, 0x00, 0x00, 0x30, 0x14, 0x99, 0x40, 0x00, 0x40, 0x11,
		0x12, 0x14, 10, 7, 0, 1, 10, 7, 0, 2 };
	static const uint8_t pay[] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x23,
		0xea, 0xa2, 0x1f, 0x00, 0x00, 0x01, 0, 0, 0, 0 };
	struct in6_addr s6, d6;
	struct roce_pseudo ph;
	uint32_t got;
	int bad = 0;

	roce_pseudo_init(&ph, AF_INET, v4 + 12, v4 + 16, htons(0xc121));
	ph.ip[4] = 0x14;	/* this capture came from rxe: IP ID 0x1499 */
	ph.ip[5] = 0x99;
	got = roce_icrc(&ph, pay, sizeof(pay));
	if (got != 0x97a449ba) {
		fprintf(stderr, "ICRC self-test IPv4: got %08x, want 97a449ba\n", got);
		bad = 1;
	}
	inet_pton(AF_INET6, "fd00::1", &s6);
	inet_pton(AF_INET6, "fd00::2", &d6);
	roce_pseudo_init(&ph, AF_INET6, &s6, &d6, htons(0xc121));
	got = roce_icrc(&ph, pay, sizeof(pay));
	if (got != 0xcceb9dd8) {
		fprintf(stderr, "ICRC self-test IPv6: got %08x, want cceb9dd8\n", got);
		bad = 1;
	}
	printf("icrc selftest: %s\n", bad ? "FAIL" : "pass");
	return bad;
}

#endif
