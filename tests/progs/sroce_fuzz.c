// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_fuzz - hostile RoCEv2 datagrams for a RoCEv2 device.
 *
 * usage: sroce_fuzz -t IPV4 -a IPV4 [-T IPV6 -A IPV6] [-m GROUP]... [-i IF]
 *                   [-n N] [-s SEED] [-q QPN,...] [-Q FILE] [-k QKEY,...]
 *                   [-r RKEY,...] [-b PERCENT] [-M PMTU] [-u MTU] [-p PPS] [-v]
 *        sroce_fuzz -c    (check the ICRC code against known packets)
 *
 * Sends N datagrams (default 1000000) to UDP port 4791 of the target
 * through ordinary UDP sockets (sendmmsg batches): to the IPv4 target -t
 * from our address -a, to the IPv6 target -T from -A, and to each
 * multicast group -m (IPv4 or IPv6, sent out of interface -i).  The
 * payloads come from a PRNG seeded with -s (printed; the same seed and
 * options replay the same packets), from these generators, mixed:
 *
 *   sweep     first, once: every opcode 0x00-0xff built well formed, then
 *             truncated at every length from 0 up to its headers plus 8
 *             bytes, each truncated packet with a correct ICRC over what
 *             is left
 *   random    random bytes of random length (half with a correct ICRC)
 *   opcode    a well-formed packet of a random opcode 0x00-0xff (half of
 *             them one sroce implements), with every extension header the
 *             opcode implies (RDETH, DETH, XRCETH, RETH, AtomicETH, FETH,
 *             AETH, AtomicAckETH, ImmDt, IETH) and field values biased
 *             toward the interesting ones: QPNs 0, 1, 0xffffff, the live
 *             QPNs of -q/-Q and their neighbours; PSNs at the edges of
 *             the 24-bit space; RETH lengths zero, huge, unaligned;
 *             R_Keys of -r; Q_Keys of -k and the GSI one; pad counts that
 *             do not match the payload; BTH versions other than 0; P_Keys
 *             0, 0x7fff, 0xffff and others
 *   cnp       congestion notification packets (opcode 0x81), some with
 *             non-zero reserved bytes
 *   flip      an opcode packet with 1-8 bits flipped
 *   truncate  an opcode packet cut short at a random length
 *   extend    an opcode packet with random bytes appended
 *
 * Each packet ends with an ICRC computed the way the receiver does (over
 * the IP pseudo-header with the variant fields masked, the UDP header, the
 * BTH with byte 4 masked and the rest), which requires knowing the IP
 * header the kernel builds: unconnected sockets with "don't fragment" get
 * IP ID 0 from Linux, so every covered field is known.  -b percent of the
 * packets (default 10) get a deliberately wrong ICRC instead.
 *
 * -Q FILE names a file of QPNs (whitespace separated, decimal or 0x hex)
 * re-read whenever it changes, so a test can feed the QPNs of QPs created
 * while the fuzzer runs.  -p caps the rate at PPS datagrams a second
 * (default: as fast as the sockets take them): a receiver slower than the
 * sender (a debug kernel) would otherwise build a queue of fuzz datagrams
 * that the real traffic waits behind for minutes.
 *
 * At the end it prints "sent N", the count of each class ("class NAME N"),
 * of each destination ("dest ADDR N") and of bad ICRCs ("icrc_bad N");
 * exit status 0, or 1 if a datagram could not be sent at all (then
 * "send_errors N" says how many).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "roce_wire.h"

#define BATCH 64
#define MAX_PKT 9000
#define MAX_KEYS 256
#define MAX_DESTS 16
#define GSI_QKEY 0x80010000u

/* A destination, and the pseudo-header the ICRC of packets to it starts with. */
struct dest {
	const char *name;
	int family;
	struct sockaddr_storage sa;
	socklen_t salen;
	int sock;
	struct roce_pseudo ph;	/* what the ICRC of packets to it starts with */
	unsigned long long sent;
};

/* --- the PRNG (xorshift64*), seeded from -s --------------------------------- */

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rnd32(void) { return (uint32_t)(rnd64() >> 32); }
static uint32_t below(uint32_t n) { return n ? (uint32_t)(((uint64_t)rnd32() * n) >> 32) : 0; }
static bool chance(unsigned int percent) { return below(100) < percent; }

static void rnd_bytes(uint8_t *p, size_t n)
{
	while (n--)
		*p++ = (uint8_t)rnd32();
}

/* --- options and what the test told us about the target --------------------- */

static struct {
	unsigned long long count;
	uint64_t seed;
	unsigned int bad_icrc;
	unsigned int pmtu;
	unsigned int mtu;
	const char *qpn_file;
	const char *ifname;
	unsigned int pps;
	bool verbose;
} opt = {
	.count = 1000000,
	.bad_icrc = 10,
	.pmtu = 1024,
	.mtu = 1500,
};

struct keys {
	uint32_t v[MAX_KEYS];
	unsigned int n;
};

static struct keys qpns, qpns_cmdline, qkeys, rkeys;

static void keys_parse(struct keys *k, const char *s)
{
	char *end;

	while (*s && k->n < MAX_KEYS) {
		while (*s == ',' || *s == ' ' || *s == '\n' || *s == '\t')
			s++;
		if (!*s)
			break;
		k->v[k->n] = (uint32_t)strtoul(s, &end, 0);
		if (end == s)
			break;
		k->n++;
		s = end;
	}
}

static time_t qpn_file_mtime;

/* The live QPNs: the command line's and those in -Q FILE, if it changed. */
static void qpns_refresh(void)
{
	char buf[8192];
	struct stat st;
	size_t n;
	FILE *f;

	if (!opt.qpn_file || stat(opt.qpn_file, &st) || st.st_mtime == qpn_file_mtime)
		return;
	f = fopen(opt.qpn_file, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	qpn_file_mtime = st.st_mtime;
	qpns = qpns_cmdline;
	keys_parse(&qpns, buf);
	if (opt.verbose)
		fprintf(stderr, "sroce_fuzz: %u live QPNs\n", qpns.n);
}

/* --- field values, biased toward the interesting ones ----------------------- */

static uint32_t pick_key(const struct keys *k, uint32_t fallback)
{
	return k->n ? k->v[below(k->n)] : fallback;
}

static uint32_t pick_qpn(void)
{
	switch (below(10)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return 0xffffff;
	case 3: return rnd32() & 0xffffff;
	case 4: return (chance(50) ? pick_key(&qpns, 17) + 1 : pick_key(&qpns, 17) - 1) & 0xffffff;
	case 5: return below(64);
	default: return pick_key(&qpns, 1) & 0xffffff;
	}
}

static uint32_t pick_psn(void)
{
	static const uint32_t edge[] = { 0, 1, 0x7fffff, 0x800000, 0xfffffe, 0xffffff };

	switch (below(4)) {
	case 0: return edge[below(6)];
	case 1: return below(256);
	default: return rnd32() & 0xffffff;
	}
}

static uint16_t pick_pkey(void)
{
	static const uint16_t v[] = { 0xffff, 0x7fff, 0x0000, 0x8000, 0x8001, 0xfffe };

	if (chance(80))
		return 0xffff;
	return chance(70) ? v[below(6)] : (uint16_t)rnd32();
}

static uint32_t pick_qkey(void)
{
	static const uint32_t v[] = { GSI_QKEY, 0, 0xffffffff, 0x80000000, 0x11111111 };

	if (chance(60))
		return pick_key(&qkeys, GSI_QKEY);
	return chance(60) ? v[below(5)] : rnd32();
}

static uint32_t pick_rkey(void)
{
	static const uint32_t v[] = { 0, 0xffffffff, 0x100, 0x80000000 };

	if (chance(40))
		return pick_key(&rkeys, rnd32());
	return chance(50) ? v[below(4)] : rnd32();
}

static uint64_t pick_va(void)
{
	static const uint64_t v[] = { 0, 1, 7, 0x1000, 0xfffffffffffffff8ull,
				      0xffffffffffffffffull, 0x7ffffffff000ull,
				      0x8000000000000000ull };

	return chance(50) ? v[below(8)] : rnd64() & (chance(50) ? ~7ull : ~0ull);
}

static uint32_t pick_dmalen(void)
{
	static const uint32_t v[] = { 0, 1, 3, 8, 0x7fffffff, 0x80000000, 0xffffffff,
				      0xfffffff8, 1u << 30, 1u << 31 };

	switch (below(4)) {
	case 0: return v[below(10)];
	case 1: return opt.pmtu * below(5) + below(3);
	case 2: return below(1 << 20);
	default: return rnd32();
	}
}

/* --- well-formed packets ------------------------------------------------------ */

enum { H_RDETH = 1, H_DETH = 2, H_XRCETH = 4, H_RETH = 8, H_ATMETH = 16,
       H_FETH = 32, H_AETH = 64, H_ATMACK = 128, H_IMM = 256, H_IETH = 512,
       H_PAYLOAD = 1024, H_CNP = 2048, H_JUNK = 4096 };

/* The extension headers (and whether data follows) an opcode implies. */
static unsigned int op_headers(uint8_t opcode)
{
	static const unsigned int by_op[32] = {
		[0x00] = H_PAYLOAD, [0x01] = H_PAYLOAD, [0x02] = H_PAYLOAD,
		[0x03] = H_PAYLOAD | H_IMM, [0x04] = H_PAYLOAD,
		[0x05] = H_PAYLOAD | H_IMM,
		[0x06] = H_RETH | H_PAYLOAD, [0x07] = H_PAYLOAD, [0x08] = H_PAYLOAD,
		[0x09] = H_PAYLOAD | H_IMM, [0x0a] = H_RETH | H_PAYLOAD,
		[0x0b] = H_RETH | H_IMM | H_PAYLOAD, [0x0c] = H_RETH,
		[0x0d] = H_AETH | H_PAYLOAD, [0x0e] = H_PAYLOAD,
		[0x0f] = H_AETH | H_PAYLOAD, [0x10] = H_AETH | H_PAYLOAD,
		[0x11] = H_AETH, [0x12] = H_AETH | H_ATMACK,
		[0x13] = H_ATMETH, [0x14] = H_ATMETH, [0x15] = H_JUNK,
		[0x16] = H_IETH | H_PAYLOAD, [0x17] = H_IETH | H_PAYLOAD,
		[0x18] = H_JUNK, [0x19] = H_JUNK, [0x1a] = H_JUNK, [0x1b] = H_JUNK,
		[0x1c] = H_FETH | H_RETH, [0x1d] = H_RETH | H_PAYLOAD,
		[0x1e] = H_JUNK, [0x1f] = H_JUNK,
	};
	unsigned int h = by_op[opcode & 0x1f];

	switch (opcode & 0xe0) {
	case 0x00:		/* RC */
	case 0x20:		/* UC */
		return h;
	case 0x40:		/* RD */
		return h | H_RDETH | H_DETH;
	case 0x60:		/* UD */
		return h | H_DETH;
	case 0x80:
		return opcode == OP_CNP ? H_CNP : H_JUNK;
	case 0xa0:		/* XRC */
		return h | H_XRCETH;
	default:
		return H_JUNK;
	}
}

/* Opcodes sroce implements: RC, UC and UD SEND/WRITE/READ/atomics. */
static uint8_t pick_opcode(void)
{
	static const uint8_t valid[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
		0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
		0x17, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29,
		0x2a, 0x2b, 0x64, 0x65, 0x64, 0x65, 0x64, 0x65,
	};

	if (chance(50))
		return valid[below(sizeof(valid))];
	return (uint8_t)rnd32();
}

static unsigned int max_payload;	/* UDP payload bytes that fit the MTU */

static unsigned int pick_paylen(unsigned int room)
{
	unsigned int n;

	switch (below(8)) {
	case 0: n = 0; break;
	case 1: n = 1 + below(4); break;
	case 2: n = opt.pmtu; break;
	case 3: n = opt.pmtu + 1 + below(8); break;
	case 4: n = below(room + 1); break;
	default: n = below(65); break;
	}
	return n > room ? room : n;
}

/*
 * Build a well-formed packet of @opcode in @p; returns its length, ICRC
 * included (not yet computed).
 */
static size_t build_opcode(uint8_t *p, uint8_t opcode)
{
	unsigned int h = op_headers(opcode), pay = 0, pad;
	uint8_t *q = p + BTH_LEN;

	p[0] = opcode;
	pad = 0;
	p[2] = 0;
	/* BTH: SE M PadCnt TVer | P_Key | byte 4 | DestQP | A | PSN */
	p[4] = chance(80) ? 0 : (uint8_t)rnd32();
	if (opcode == OP_CNP)
		p[4] = 0x40;		/* BECN */
	put32(p + 4, (uint32_t)p[4] << 24 | pick_qpn());
	put32(p + 8, (chance(50) ? 0x80000000u : 0) |
		     (chance(95) ? 0 : rnd32() & 0x7f000000) | pick_psn());
	if (opcode == OP_CNP && chance(70))
		put32(p + 8, 0);
	if (h & H_RDETH)
		q = put32(q, chance(80) ? below(4) : rnd32());
	if (h & H_DETH) {
		q = put32(q, pick_qkey());
		q = put32(q, (chance(90) ? 0 : (uint32_t)below(256) << 24) |
			     (chance(50) ? 1 : rnd32() & 0xffffff));
	}
	if (h & H_XRCETH)
		q = put32(q, rnd32() & (chance(80) ? 0xffffff : ~0u));
	if (h & H_FETH)
		q = put32(q, chance(70) ? below(64) : rnd32());
	if (h & H_RETH) {
		q = put64(q, pick_va());
		q = put32(q, pick_rkey());
		q = put32(q, pick_dmalen());
	}
	if (h & H_ATMETH) {
		q = put64(q, pick_va());
		q = put32(q, pick_rkey());
		q = put64(q, rnd64());
		q = put64(q, rnd64());
	}
	if (h & H_AETH) {
		static const uint8_t syn[] = { 0x1f, 0x00, 0x20, 0x3f, 0x60, 0x61,
					       0x62, 0x63, 0x64, 0x65, 0x40, 0x80 };
		uint8_t s = chance(60) ? syn[below(sizeof(syn))] : (uint8_t)rnd32();

		q = put32(q, (uint32_t)s << 24 | (rnd32() & 0xffffff));
	}
	if (h & H_ATMACK)
		q = put64(q, rnd64());
	if (h & H_IMM)
		q = put32(q, rnd32());
	if (h & H_IETH)
		q = put32(q, pick_rkey());
	if (h & H_CNP) {
		memset(q, 0, 16);
		if (chance(20))
			rnd_bytes(q, 16);
		q += 16;
	}
	if (h & H_JUNK) {
		unsigned int n = below(40);

		rnd_bytes(q, n);
		q += n;
	}
	if (h & H_PAYLOAD)
		pay = pick_paylen(max_payload - (unsigned int)(q - p) - 3 - ICRC_LEN);
	else if (chance(5))
		pay = 1 + below(16);	/* data where none belongs */
	rnd_bytes(q, pay);
	q += pay;
	pad = chance(70) ? (-pay) & 3 : below(4);
	if (pad && (size_t)(q - p) + pad + ICRC_LEN <= max_payload) {
		memset(q, chance(90) ? 0 : 0xa5, pad);
		q += pad;
	} else {
		pad = 0;
	}
	/* byte 1: SE, M, PadCnt, TVer (non-zero now and then) */
	p[1] = (uint8_t)((chance(30) ? 0x80 : 0) | (chance(10) ? 0x40 : 0) |
			 (chance(90) ? pad : below(4)) << 4 |
			 (chance(95) ? 0 : 1 + below(15)));
	/* P_Key */
	p[2] = 0;
	{
		uint16_t pk = pick_pkey();

		p[2] = pk >> 8;
		p[3] = pk & 0xff;
	}
	return (size_t)(q - p) + ICRC_LEN;
}

/* --- the generators ------------------------------------------------------------ */

enum cls { C_SWEEP, C_RANDOM, C_OPCODE, C_CNP, C_FLIP, C_TRUNCATE, C_EXTEND, C_MAX };
static const char *const cls_name[C_MAX] = {
	"sweep", "random", "opcode", "cnp", "flip", "truncate", "extend",
};
static unsigned long long cls_sent[C_MAX], icrc_bad, send_errors;

struct pkt {
	uint8_t data[MAX_PKT];
	size_t len;
	bool icrc_done;		/* the generator already decided the ICRC */
};

static void seal(struct pkt *k, const struct dest *d, bool allow_bad)
{
	if (k->icrc_done || k->len < BTH_LEN + ICRC_LEN)
		return;
	roce_put_icrc(k->data, k->len, roce_icrc(&d->ph, k->data, k->len));
	if (allow_bad && chance(opt.bad_icrc)) {
		k->data[k->len - 1 - below(4)] ^= (uint8_t)(1 + below(255));
		icrc_bad++;
	}
}

static enum cls generate(struct pkt *k, const struct dest *d)
{
	unsigned int r = below(100), i, n;

	k->icrc_done = false;
	if (r < 10) {
		k->len = below(chance(70) ? 64 : max_payload + 1);
		rnd_bytes(k->data, k->len);
		if (chance(50))
			k->icrc_done = true;	/* whatever the bytes say */
		seal(k, d, false);
		return C_RANDOM;
	}
	if (r < 14) {
		k->len = build_opcode(k->data, OP_CNP);
		seal(k, d, true);
		return C_CNP;
	}
	k->len = build_opcode(k->data, pick_opcode());
	if (r < 60) {
		seal(k, d, true);
		return C_OPCODE;
	}
	if (r < 75) {
		seal(k, d, false);
		n = 1 + below(8);
		for (i = 0; i < n; i++) {
			/* mostly in the headers, where the decisions are made */
			size_t at = chance(70) && k->len > 48 ? below(48) : below((uint32_t)k->len);

			k->data[at] ^= (uint8_t)(1u << below(8));
		}
		if (chance(80)) {	/* a sender that computes a right ICRC over bad bits */
			k->icrc_done = false;
			seal(k, d, false);
		}
		k->icrc_done = true;
		return C_FLIP;
	}
	if (r < 90) {
		k->len = below((uint32_t)k->len);
		if (chance(70))
			seal(k, d, false);
		k->icrc_done = true;
		return C_TRUNCATE;
	}
	n = 1 + below(chance(80) ? 16 : 512);
	if (k->len + n > max_payload)
		n = max_payload - (unsigned int)k->len;
	rnd_bytes(k->data + k->len, n);
	k->len += n;
	seal(k, d, true);
	return C_EXTEND;
}

/* --- sending ---------------------------------------------------------------------- */

static struct dest dests[MAX_DESTS];
static unsigned int ndests;
static struct sockaddr_storage src4, src6;

static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(ROCE_PORT);
		*len = sizeof(*a4);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(ROCE_PORT);
		*len = sizeof(*a6);
		return AF_INET6;
	}
	fprintf(stderr, "sroce_fuzz: '%s' is not an IP address\n", s);
	exit(2);
}

static bool is_mcast(const struct dest *d)
{
	if (d->family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)&d->sa)->sin_addr.s_addr));
	return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)&d->sa)->sin6_addr);
}

static void __attribute__((noreturn)) die_errno(const char *what)
{
	fprintf(stderr, "sroce_fuzz: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* One socket per destination, bound to our address, "don't fragment". */
static void dest_open(struct dest *d)
{
	const struct sockaddr_storage *src = d->family == AF_INET ? &src4 : &src6;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	unsigned int ifindex = opt.ifname ? if_nametoindex(opt.ifname) : 0;
	int one = 1, zero = 0, v;

	if (src->ss_family != d->family) {
		fprintf(stderr, "sroce_fuzz: %s: no source address of its family (-a/-A)\n", d->name);
		exit(2);
	}
	d->sock = socket(d->family, SOCK_DGRAM, 0);
	if (d->sock < 0)
		die_errno("socket");
	if (bind(d->sock, (const struct sockaddr *)src,
		 d->family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
		die_errno("bind to the source address");
	if (getsockname(d->sock, (struct sockaddr *)&bound, &blen))
		die_errno("getsockname");
	if (d->family == AF_INET) {
		v = IP_PMTUDISC_DO;
		if (setsockopt(d->sock, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v)))
			die_errno("IP_MTU_DISCOVER");
		if (is_mcast(d)) {
			struct ip_mreqn mr = { .imr_ifindex = (int)ifindex };

			mr.imr_address = ((const struct sockaddr_in *)src)->sin_addr;
			if (setsockopt(d->sock, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)) ||
			    setsockopt(d->sock, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, sizeof(zero)))
				die_errno("IP_MULTICAST_IF");
		}
	} else {
		if (setsockopt(d->sock, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)))
			die_errno("IPV6_DONTFRAG");
		if (is_mcast(d) &&
		    ((ifindex && setsockopt(d->sock, IPPROTO_IPV6, IPV6_MULTICAST_IF,
					    &ifindex, sizeof(ifindex))) ||
		     setsockopt(d->sock, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof(zero))))
			die_errno("IPV6_MULTICAST_IF");
	}
	if (d->family == AF_INET)
		roce_pseudo_init(&d->ph, AF_INET, &((const struct sockaddr_in *)src)->sin_addr,
				 &((const struct sockaddr_in *)&d->sa)->sin_addr,
				 ((struct sockaddr_in *)&bound)->sin_port);
	else
		roce_pseudo_init(&d->ph, AF_INET6, &((const struct sockaddr_in6 *)src)->sin6_addr,
				 &((const struct sockaddr_in6 *)&d->sa)->sin6_addr,
				 ((struct sockaddr_in6 *)&bound)->sin6_port);
}

static void dest_add(const char *s)
{
	struct dest *d;

	if (ndests == MAX_DESTS) {
		fprintf(stderr, "sroce_fuzz: too many destinations\n");
		exit(2);
	}
	d = &dests[ndests++];
	d->name = s;
	d->family = parse_addr(s, &d->sa, &d->salen);
}

/* Unicast destinations get most packets; each multicast group a share. */
static struct dest *pick_dest(void)
{
	unsigned int i, nuni = 0, uni[MAX_DESTS];

	for (i = 0; i < ndests; i++)
		if (!is_mcast(&dests[i]))
			uni[nuni++] = i;
	if (nuni && (nuni == ndests || chance(85)))
		return &dests[uni[below(nuni)]];
	return &dests[below(ndests)];
}

static struct pkt pkts[BATCH];
static struct mmsghdr msgs[BATCH];
static struct iovec iovs[BATCH];

/* Send @n packets to @d; a datagram the kernel refuses is counted and skipped. */
static unsigned int send_batch(struct dest *d, unsigned int n)
{
	unsigned int i, done = 0;
	int r;

	for (i = 0; i < n; i++) {
		iovs[i].iov_base = pkts[i].data;
		iovs[i].iov_len = pkts[i].len;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_name = &d->sa;
		msgs[i].msg_hdr.msg_namelen = d->salen;
		msgs[i].msg_hdr.msg_iov = &iovs[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (done < n) {
		r = sendmmsg(d->sock, msgs + done, n - done, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(1000);
				continue;
			}
			if (send_errors++ < 5)
				fprintf(stderr, "sroce_fuzz: to %s, %zu bytes: %s\n", d->name,
					pkts[done].len, strerror(errno));
			done++;		/* this one is lost; go on with the rest */
			continue;
		}
		done += (unsigned int)r;
		d->sent += (unsigned int)r;
	}
	return n;
}

/* With -p, wait until @sent datagrams since @t0 are within the rate. */
static void pace(const struct timespec *t0, unsigned long long sent)
{
	struct timespec now;
	double due, spent;

	if (!opt.pps)
		return;
	due = (double)sent / opt.pps;
	clock_gettime(CLOCK_MONOTONIC, &now);
	spent = (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
	if (due > spent)
		usleep((useconds_t)((due - spent) * 1e6));
}

/* The sweep: each opcode, cut at every length up to its headers + 8 bytes. */
static unsigned long long sweep(void)
{
	unsigned long long total = 0;
	unsigned int op, cut, nb = 0;
	struct pkt full;
	struct dest *d = &dests[0];
	size_t hdr;

	for (op = 0; op < 256; op++) {
		full.len = build_opcode(full.data, (uint8_t)op);
		hdr = full.len > 72 ? 72 : full.len;
		for (cut = 0; cut <= hdr && total < opt.count; cut++) {
			memcpy(pkts[nb].data, full.data, cut);
			pkts[nb].len = cut;
			pkts[nb].icrc_done = false;
			seal(&pkts[nb], d, false);
			nb++;
			total++;
			if (nb == BATCH) {
				send_batch(d, nb);
				nb = 0;
			}
		}
	}
	if (nb)
		send_batch(d, nb);
	cls_sent[C_SWEEP] = total;
	return total;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: sroce_fuzz -t IPV4 -a IPV4 [-T IPV6 -A IPV6] [-m GROUP]... [-i IF]\n"
		"                  [-n N] [-s SEED] [-q QPN,...] [-Q FILE] [-k QKEY,...]\n"
		"                  [-r RKEY,...] [-b PERCENT] [-M PMTU] [-u MTU] [-p PPS] [-v]\n"
		"       sroce_fuzz -c\n");
	exit(2);
}

/* The number @s, which must lie in [@min, @max]; anything else ends in usage(). */
static unsigned long long num_arg(const char *s, unsigned long long min,
				  unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "sroce_fuzz: '%s' is not a number from %llu to %llu\n", s, min,
			max);
		usage();
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long total = 0;
	const char *a4 = NULL, *a6 = NULL;
	bool seeded = false;
	socklen_t sl;
	struct timespec t0, t1;
	unsigned int i, n;
	int c;

	roce_crc_init();
	while ((c = getopt(argc, argv, "t:a:T:A:m:i:n:s:q:Q:k:r:b:M:u:p:vc")) != -1) {
		switch (c) {
		case 't': case 'T': case 'm': dest_add(optarg); break;
		case 'a': a4 = optarg; break;
		case 'A': a6 = optarg; break;
		case 'i': opt.ifname = optarg; break;
		case 'n': opt.count = num_arg(optarg, 0, ~0ull); break;
		case 's': opt.seed = num_arg(optarg, 0, ~0ull); seeded = true; break;
		case 'q': keys_parse(&qpns_cmdline, optarg); break;
		case 'Q': opt.qpn_file = optarg; break;
		case 'k': keys_parse(&qkeys, optarg); break;
		case 'r': keys_parse(&rkeys, optarg); break;
		case 'b': opt.bad_icrc = (unsigned int)num_arg(optarg, 0, 100); break;
		case 'M': opt.pmtu = (unsigned int)num_arg(optarg, 256, 4096); break;
		case 'u': opt.mtu = (unsigned int)num_arg(optarg, 576, MAX_PKT); break;
		case 'p': opt.pps = (unsigned int)num_arg(optarg, 0, 10000000); break;
		case 'v': opt.verbose = true; break;
		case 'c': return roce_icrc_selftest();
		default: usage();
		}
	}
	if (!ndests || optind != argc)
		usage();
	if (a4 && parse_addr(a4, &src4, &sl) != AF_INET)
		usage();
	if (a6 && parse_addr(a6, &src6, &sl) != AF_INET6)
		usage();
	((struct sockaddr_in *)&src4)->sin_port = 0;
	((struct sockaddr_in6 *)&src6)->sin6_port = 0;
	if (roce_icrc_selftest())
		return 1;
	for (i = 0; i < ndests; i++)
		dest_open(&dests[i]);
	/* IPv6 has the longer header: one limit keeps every packet under the MTU. */
	max_payload = opt.mtu - 40 - 8;
	if (max_payload > MAX_PKT - 512)
		max_payload = MAX_PKT - 512;
	if (!seeded) {
		clock_gettime(CLOCK_REALTIME, &t0);
		opt.seed = (uint64_t)t0.tv_nsec ^ (uint64_t)t0.tv_sec << 20 ^ (uint64_t)getpid();
	}
	printf("seed %llu (replay with -s %llu)\n", (unsigned long long)opt.seed,
	       (unsigned long long)opt.seed);
	fflush(stdout);
	rng_state = opt.seed * 0x9e3779b97f4a7c15ull + 1;
	qpns = qpns_cmdline;
	qpns_refresh();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	total = sweep();
	while (total < opt.count) {
		struct dest *d = pick_dest();

		if ((total & 4095) < BATCH)
			qpns_refresh();
		n = opt.count - total < BATCH ? (unsigned int)(opt.count - total) : BATCH;
		for (i = 0; i < n; i++)
			cls_sent[generate(&pkts[i], d)]++;
		send_batch(d, n);
		total += n;
		pace(&t0, total);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("sent %llu in %.1f s\n", total - send_errors,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 0; i < C_MAX; i++)
		printf("class %s %llu\n", cls_name[i], cls_sent[i]);
	printf("icrc_bad %llu\n", icrc_bad);
	for (i = 0; i < ndests; i++)
		printf("dest %s %llu\n", dests[i].name, dests[i].sent);
	printf("send_errors %llu\n", send_errors);
	return send_errors ? 1 : 0;
}
