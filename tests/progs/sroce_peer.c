// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_peer - plays the far end of an RC or UC connection packet by packet.
 *
 * usage: sroce_peer -d DEV -g GIDINDEX -t VICTIM_IP -a PEER_IP [-N NETNS]
 *                   [-s NAME[,NAME...]] [-q QUIET_MS] [-T TIMEOUT_MS] [-v]
 *        sroce_peer -l
 *
 * The victim is an RC (or UC) QP on the sroce device DEV, made through
 * libibverbs (PD, CQ, memory regions with known contents, receive WQEs as
 * the scenario wants), brought to RTS with its destination = PEER_IP (GID index
 * GIDINDEX is its own address, VICTIM_IP) and a QPN the peer claims, path
 * MTU 1024.  The peer is a plain UDP socket bound to PEER_IP port 4791,
 * opened inside the network namespace NETNS (a path such as
 * /run/netns/NAME; sroce itself holds UDP 4791 in its netdev's namespace,
 * so the peer must live elsewhere).  The peer builds every header and the
 * ICRC itself (roce_wire.h) and checks each packet sroce answers with:
 * opcode, PSN, destination QP, AETH syndrome and MSN, payload bytes; and,
 * over IPv6 where the whole pseudo-header is known, the ICRC (over IPv4
 * the IP ID sroce's packets carry is not visible to a UDP socket).
 *
 * Two halves.  In the first the victim is the responder: the peer sends
 * requests (duplicates, gaps, bad keys, opcodes out of sequence, ...) and
 * checks each packet sroce answers with, as above.  In the second (the
 * scenarios named req_*) the victim is the requester: it posts SENDs,
 * WRITEs, READs and atomics to the peer, which checks every request sroce
 * sends (opcode, PSN, AckReq, RETH or AtomicETH, payload bytes, a resend
 * byte for byte the same as the first transmission and no sooner than the
 * timer allows, by the socket's receive timestamps) and answers with the
 * ACKs, NAKs, READ responses and atomic ACKs the scenario wants: coalesced
 * ACKs, silence (local ACK timeout, retries exhausted), PSN sequence, RNR
 * and remote error NAKs, ACKs for PSNs never sent or long acknowledged,
 * READ responses with a gap or of the wrong length, a plain ACK for an
 * atomic, a READ response acknowledging the SENDs before it.  In the uc_*
 * scenarios the victim is a UC QP: messages cut short by lost packets,
 * no receive posted, bad keys, a SEND too long, a repeated Only, other
 * transports' opcodes (the peer checks that sroce answers none of them),
 * and the victim as a UC requester.
 *
 * Each scenario runs on a fresh victim QP and CQ and prints one line,
 * "NAME: pass" or "NAME: FAIL what differed".  Besides the packets it
 * checks the victim's completions, its QP state (ibv_query_qp) and async
 * events where the scenario makes them, and the device's counters
 * (sysfs hw_counters, what "rdma statistic show link DEV/1" prints): every
 * counter in cnt_names moves by exactly what the scenario says (zero when
 * it says nothing), rx_packets by the datagrams the peer sent and
 * tx_packets by the ones it received.  So the device must be idle but for
 * this program.  req_ack_timeout writes the module parameter
 * /sys/module/sroce/parameters/min_ack_timeout and puts its value back.
 * Exit status 0 if every scenario passed, 1 otherwise, 2 on
 * a usage or setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"
#include "roce_wire.h"

#define PMTU 1024
#define MR_SIZE (512 * 1024)
#define RO_SIZE 4096
#define RECV_SLOT 2048
#define RECV_SLOTS 16
#define MAX_PKT 2048
#define PKEY 0xffff

/* --- options and the failure of the scenario running ------------------------ */

static struct {
	const char *dev, *netns;
	int gid_index;
	int quiet_ms, timeout_ms;
	bool verbose;
} opt = { .gid_index = -1, .quiet_ms = 1000, .timeout_ms = 10000 };

static char why[1024];

/* What a scenario computed the counters must do, over its table entry's. */
static char cnt_want[128];

/* Record why the scenario failed (the first reason wins); returns -1. */
static int __attribute__((format(printf, 1, 2))) failf(const char *fmt, ...)
{
	va_list ap;

	if (why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

#define TRY(x) do { if ((x) < 0) return -1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) return failf(__VA_ARGS__); } while (0)

static void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & 0xffffff;
}

/* --- the victim's objects ---------------------------------------------------- */

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;		/* MR_SIZE, every remote access */
	struct ibv_mr *ro;		/* RO_SIZE, remote read only */
	struct ibv_mr *rmr;		/* receive buffers, local write */
	uint8_t *buf, *robuf, *rbuf;
	union ibv_gid peer_gid;
	/* per scenario */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t qpn;
} vic;

/* --- the peer: a UDP socket on port 4791 in another namespace --------------- */

static struct {
	int family;
	int sock;
	struct sockaddr_storage victim;	/* where requests go */
	socklen_t victim_len;
	uint8_t victim_addr[16], peer_addr[16];
	struct roce_pseudo tx;		/* ICRC of what the peer sends */
	uint32_t qpn;			/* the QPN the peer claims */
	unsigned long sent, rcvd;	/* datagrams, this scenario */
	unsigned long reordered;	/* READ responses that came out of order */
	long rx_ms;			/* when the last datagram arrived (rt_ms()) */
} peer;

static int parse_ip(const char *s, uint8_t *addr)
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return AF_INET6;
	die("'%s' is not an IP address", s);
	return 0;
}

/* Open the peer's socket in opt.netns (if given), bound to @ip port 4791. */
static void peer_open(const char *ip, const char *victim_ip)
{
	struct sockaddr_storage ss = { 0 };
	int self = -1, ns, v, fam;

	peer.family = parse_ip(ip, peer.peer_addr);
	fam = parse_ip(victim_ip, peer.victim_addr);
	if (fam != peer.family)
		die("-a and -t must be of one family");
	if (opt.netns) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		ns = open(opt.netns, O_RDONLY | O_CLOEXEC);
		if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
			die("entering %s: %s", opt.netns, strerror(errno));
		close(ns);
	}
	peer.sock = socket(peer.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (peer.sock < 0)
		die("socket: %s", strerror(errno));
	/* Room for every response of the longest READ, and a count of drops. */
	v = 32 << 20;
	if (setsockopt(peer.sock, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) &&
	    setsockopt(peer.sock, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
		die("SO_RCVBUF: %s", strerror(errno));
	v = 1;
	if (setsockopt(peer.sock, SOL_SOCKET, SO_RXQ_OVFL, &v, sizeof(v)))
		die("SO_RXQ_OVFL: %s", strerror(errno));
	/* When each datagram arrived, however late the peer reads it. */
	if (setsockopt(peer.sock, SOL_SOCKET, SO_TIMESTAMPNS, &v, sizeof(v)))
		die("SO_TIMESTAMPNS: %s", strerror(errno));
	if (peer.family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss, *t;

		a->sin_family = AF_INET;
		a->sin_port = htons(ROCE_PORT);
		memcpy(&a->sin_addr, peer.peer_addr, 4);
		/* DF: Linux then sends IP ID 0 from an unconnected socket. */
		v = IP_PMTUDISC_DO;
		if (setsockopt(peer.sock, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v)))
			die("IP_MTU_DISCOVER: %s", strerror(errno));
		t = (struct sockaddr_in *)&peer.victim;
		t->sin_family = AF_INET;
		t->sin_port = htons(ROCE_PORT);
		memcpy(&t->sin_addr, peer.victim_addr, 4);
		peer.victim_len = sizeof(*t);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss, *t;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ROCE_PORT);
		memcpy(&a->sin6_addr, peer.peer_addr, 16);
		v = 1;
		if (setsockopt(peer.sock, IPPROTO_IPV6, IPV6_DONTFRAG, &v, sizeof(v)))
			die("IPV6_DONTFRAG: %s", strerror(errno));
		/* RoCEv2 sends a zero UDP checksum, which UDPv6 drops by default. */
		if (setsockopt(peer.sock, IPPROTO_UDP, UDP_NO_CHECK6_RX, &v, sizeof(v)))
			die("UDP_NO_CHECK6_RX: %s", strerror(errno));
		t = (struct sockaddr_in6 *)&peer.victim;
		t->sin6_family = AF_INET6;
		t->sin6_port = htons(ROCE_PORT);
		memcpy(&t->sin6_addr, peer.victim_addr, 16);
		peer.victim_len = sizeof(*t);
	}
	if (bind(peer.sock, (struct sockaddr *)&ss,
		 peer.family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
		die("bind %s port %d: %s", ip, ROCE_PORT, strerror(errno));
	if (self >= 0) {
		if (setns(self, CLONE_NEWNET))
			die("back to our namespace: %s", strerror(errno));
		close(self);
	}
	roce_pseudo_init(&peer.tx, peer.family, peer.peer_addr, peer.victim_addr, htons(ROCE_PORT));
}

/*
 * A packet the peer sends: a request to the victim's responder, or a
 * response (ACK, NAK, READ response, atomic ACK) to its requester; the
 * opcode decides which fields are used.
 */
struct req {
	uint8_t op;
	uint32_t psn;
	bool ackreq;
	int padcnt;		/* -1: the right one for len */
	uint64_t va;		/* RETH, AtomicETH */
	uint32_t rkey;
	uint32_t dmalen;	/* RETH */
	uint64_t swap_add, compare;
	uint32_t imm;		/* network order, as it goes on the wire */
	uint8_t syn;		/* AETH */
	uint32_t msn;		/* AETH */
	uint64_t orig;		/* AtomicAckETH */
	const uint8_t *data;
	uint32_t len;
};

/*
 * The transport bits of the victim's opcodes, for the scenario running:
 * 0 (RC) or UC_OPS.  Requests are built from the RC opcode names; UC() is
 * the same operation on UC.
 */
#define UC_OPS 0x20
#define UC(op) ((uint8_t)((op) | UC_OPS))
static uint8_t tport;

/* The operation of an RC or UC opcode (UC's are RC's + 0x20). */
static uint8_t op_base(uint8_t op)
{
	return op < 0x40 ? op & 0x1f : op;
}

static bool op_has_aeth(uint8_t op)
{
	return op == OP_READ_RESP_FIRST || op == OP_READ_RESP_LAST || op == OP_READ_RESP_ONLY ||
	       op == OP_ACK || op == OP_ATOMIC_ACK;
}

static bool op_has_reth(uint8_t op)
{
	op = op_base(op);
	return op == OP_WRITE_FIRST || op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM ||
	       op == OP_READ_REQ;
}

static bool op_has_imm(uint8_t op)
{
	op = op_base(op);
	return op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM || op == OP_WRITE_LAST_IMM ||
	       op == OP_WRITE_ONLY_IMM;
}

/* Build @r into @p; returns the datagram's length, ICRC included. */
static size_t req_build(const struct req *r, uint8_t *p)
{
	unsigned int pad = r->padcnt >= 0 ? (unsigned int)r->padcnt : (-r->len) & 3;
	uint8_t *q = p + BTH_LEN;
	size_t len;

	p[0] = r->op;
	p[1] = (uint8_t)(pad << 4);
	p[2] = PKEY >> 8;
	p[3] = PKEY & 0xff;
	put32(p + 4, vic.qpn);
	put32(p + 8, (r->ackreq ? 0x80000000u : 0) | r->psn);
	if (op_has_aeth(r->op))
		q = put32(q, (uint32_t)r->syn << 24 | (r->msn & 0xffffff));
	if (r->op == OP_ATOMIC_ACK)
		q = put64(q, r->orig);
	if (op_has_reth(r->op)) {
		q = put64(q, r->va);
		q = put32(q, r->rkey);
		q = put32(q, r->dmalen);
	}
	if (r->op == OP_CMP_SWAP || r->op == OP_FETCH_ADD) {
		q = put64(q, r->va);
		q = put32(q, r->rkey);
		q = put64(q, r->swap_add);
		q = put64(q, r->compare);
	}
	if (op_has_imm(r->op)) {
		memcpy(q, &r->imm, 4);
		q += 4;
	}
	if (r->len)
		memcpy(q, r->data, r->len);
	q += r->len;
	memset(q, 0, pad);
	q += pad;
	len = (size_t)(q - p) + ICRC_LEN;
	roce_put_icrc(p, len, roce_icrc(&peer.tx, p, len));
	return len;
}

/* Send @n requests in one sendmmsg() (back to back on the wire). */
static int req_send_n(const struct req *r, unsigned int n)
{
	static uint8_t bufs[4][MAX_PKT];
	struct mmsghdr m[4];
	struct iovec iov[4];
	unsigned int i, done = 0;
	int k;

	if (n > 4)
		return failf("internal: %u requests at once", n);
	memset(m, 0, sizeof(m));
	for (i = 0; i < n; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = req_build(&r[i], bufs[i]);
		m[i].msg_hdr.msg_name = &peer.victim;
		m[i].msg_hdr.msg_namelen = peer.victim_len;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		vlog("  -> op 0x%02x psn 0x%06x syn 0x%02x len %u\n", r[i].op, r[i].psn,
		     op_has_aeth(r[i].op) ? r[i].syn : 0, r[i].len);
	}
	while (done < n) {
		k = sendmmsg(peer.sock, m + done, n - done, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return failf("sendmmsg: %s", strerror(errno));
		done += (unsigned int)k;
	}
	peer.sent += n;
	return 0;
}

static int req_send(const struct req *r)
{
	return req_send_n(r, 1);
}

/* A packet sroce sent the peer, parsed. */
struct rsp {
	uint8_t op;
	uint32_t psn;
	uint8_t syn;		/* AETH, if any */
	uint32_t msn;
	uint64_t orig;		/* AtomicAckETH */
	const uint8_t *data;
	uint32_t len;
	uint8_t raw[MAX_PKT + 64];
};

/*
 * What every packet from sroce must have, request or response: TVer 0, the
 * P_Key, the peer's QPN and, over IPv6, the right ICRC.
 */
static int hdr_check(const uint8_t *p, size_t n, uint16_t sport)
{
	struct roce_pseudo ph;

	CHECK((p[1] & 0x0f) == 0 && get32(p) % 65536 == PKEY,
	      "op 0x%02x with TVer %u, P_Key 0x%04x", p[0], p[1] & 0x0f, get32(p) & 0xffff);
	CHECK((get32(p + 4) & 0xffffff) == peer.qpn, "op 0x%02x to QP 0x%06x, not ours (0x%06x)",
	      p[0], get32(p + 4) & 0xffffff, peer.qpn);
	if (peer.family == AF_INET6) {
		roce_pseudo_init(&ph, AF_INET6, peer.victim_addr, peer.peer_addr, sport);
		CHECK(roce_icrc(&ph, p, n) == roce_get_icrc(p, n),
		      "ICRC of op 0x%02x psn 0x%06x is %08x, want %08x", p[0],
		      get32(p + 8) & 0xffffff, roce_get_icrc(p, n), roce_icrc(&ph, p, n));
	}
	return 0;
}

static int rsp_parse(struct rsp *r, size_t n, uint16_t sport)
{
	const uint8_t *p = r->raw;
	unsigned int hdr = BTH_LEN, pad;

	CHECK(n >= BTH_LEN + ICRC_LEN, "a %zu-byte datagram from sroce", n);
	r->op = p[0];
	r->psn = get32(p + 8) & 0xffffff;
	CHECK(r->op >= OP_READ_RESP_FIRST && r->op <= OP_ATOMIC_ACK,
	      "sroce sent opcode 0x%02x (psn 0x%06x), not a response", r->op, r->psn);
	TRY(hdr_check(p, n, sport));
	r->syn = 0;
	r->msn = 0;
	r->orig = 0;
	if (r->op != OP_READ_RESP_MIDDLE) {
		CHECK(n >= hdr + AETH_LEN + ICRC_LEN, "op 0x%02x too short for its AETH", r->op);
		r->syn = p[hdr];
		r->msn = get32(p + hdr) & 0xffffff;
		hdr += AETH_LEN;
	}
	if (r->op == OP_ATOMIC_ACK) {
		CHECK(n >= hdr + ATMACK_LEN + ICRC_LEN, "atomic ACK too short");
		r->orig = get64(p + hdr);
		hdr += ATMACK_LEN;
	}
	pad = (p[1] >> 4) & 3;
	CHECK(n >= hdr + pad + ICRC_LEN, "op 0x%02x psn 0x%06x: PadCnt %u past its end", r->op,
	      r->psn, pad);
	r->data = p + hdr;
	r->len = (uint32_t)(n - hdr - pad - ICRC_LEN);
	if (r->op == OP_ACK || r->op == OP_ATOMIC_ACK)
		CHECK(!r->len && !pad, "op 0x%02x with %u bytes of payload", r->op, r->len + pad);
	return 0;
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

/* The clock of the socket's receive timestamps (SO_TIMESTAMPNS), in ms. */
static long ts_ms(const struct timespec *t)
{
	return t->tv_sec * 1000L + t->tv_nsec / 1000000;
}

static long rt_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ms(&t);
}

/*
 * The next datagram from sroce within @ms into @raw (@cap bytes): 1 with
 * its length in @n and its UDP source port in @sport, or 0 if none came.
 */
static int dgram_recv(uint8_t *raw, size_t cap, size_t *n, uint16_t *sport, int ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_storage from;
	struct iovec iov = { .iov_base = raw, .iov_len = cap };
	struct timespec ts;
	struct msghdr mh = { .msg_name = &from, .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd pfd = { .fd = peer.sock, .events = POLLIN };
	long end = now_ms() + ms;
	struct cmsghdr *cm;
	uint32_t drops;
	ssize_t k;
	int e;

	for (;;) {
		e = poll(&pfd, 1, (int)(end - now_ms() > 0 ? end - now_ms() : 0));
		if (e < 0 && errno == EINTR)
			continue;
		if (e < 0)
			return failf("poll: %s", strerror(errno));
		if (!e)
			return 0;
		mh.msg_namelen = sizeof(from);
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		k = recvmsg(peer.sock, &mh, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return failf("recvmsg: %s", strerror(errno));
		peer.rx_ms = rt_ms();
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				peer.rx_ms = ts_ms(&ts);
			}
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SO_RXQ_OVFL)
				continue;
			memcpy(&drops, CMSG_DATA(cm), sizeof(drops));
			CHECK(!drops, "the peer's socket dropped %u datagrams (receive buffer full)",
			      drops);
		}
		peer.rcvd++;
		*n = (size_t)k;
		*sport = from.ss_family == AF_INET ? ((struct sockaddr_in *)&from)->sin_port :
						     ((struct sockaddr_in6 *)&from)->sin6_port;
		return 1;
	}
}

/* The next packet from sroce within @ms: 1, or 0 if none came. */
static int rsp_recv(struct rsp *r, int ms)
{
	uint16_t sport;
	size_t n;
	int k = dgram_recv(r->raw, sizeof(r->raw), &n, &sport, ms);

	if (k <= 0)
		return k;
	TRY(rsp_parse(r, n, sport));
	vlog("  <- op 0x%02x psn 0x%06x syn 0x%02x msn %u len %u\n", r->op, r->psn, r->syn,
	     r->msn, r->len);
	return 1;
}

static const char *rsp_str(const struct rsp *r)
{
	static char s[128];

	snprintf(s, sizeof(s), "op 0x%02x psn 0x%06x syndrome 0x%02x msn %u (%u bytes)", r->op,
		 r->psn, r->syn, r->msn, r->len);
	return s;
}

/* The next packet must come, within the timeout. */
static int rsp_expect(struct rsp *r, const char *what)
{
	int k = rsp_recv(r, opt.timeout_ms);

	TRY(k);
	CHECK(k, "no answer to %s within %d ms", what, opt.timeout_ms);
	return 0;
}

/* Nothing more from sroce for opt.quiet_ms. */
static int expect_quiet_ms(const char *after, int ms)
{
	uint8_t raw[MAX_PKT + 64];
	uint16_t sport;
	size_t n = 0;
	int k = dgram_recv(raw, sizeof(raw), &n, &sport, ms);

	TRY(k);
	CHECK(!k, "after %s, an unexpected datagram: op 0x%02x psn 0x%06x, %zu bytes", after,
	      n >= BTH_LEN ? raw[0] : 0, n >= BTH_LEN ? get32(raw + 8) & 0xffffff : 0, n);
	return 0;
}

static int expect_quiet(const char *after)
{
	return expect_quiet_ms(after, opt.quiet_ms);
}

/* An ACK-family packet: opcode ACK with syndrome @syn, PSN @psn, MSN @msn. */
static int expect_ack(uint8_t syn, uint32_t psn, uint32_t msn, const char *what)
{
	struct rsp r;

	TRY(rsp_expect(&r, what));
	CHECK(r.op == OP_ACK && r.syn == syn && r.psn == psn && r.msn == msn,
	      "%s: got %s, want ACK syndrome 0x%02x psn 0x%06x msn %u", what, rsp_str(&r), syn, psn,
	      msn);
	return 0;
}

static int expect_atomic_ack(uint32_t psn, uint64_t orig, uint32_t msn, uint32_t msn_alt,
			     const char *what)
{
	struct rsp r;

	TRY(rsp_expect(&r, what));
	CHECK(r.op == OP_ATOMIC_ACK && r.syn == AETH_ACK_UNLIMITED && r.psn == psn &&
	      (r.msn == msn || r.msn == msn_alt),
	      "%s: got %s, want an atomic ACK psn 0x%06x msn %u", what, rsp_str(&r), psn, msn);
	CHECK(r.orig == (uint64_t)orig, "%s: atomic ACK carries 0x%llx, want 0x%llx", what,
	      (unsigned long long)r.orig, (unsigned long long)orig);
	return 0;
}

/* The opcode of packet @i of @n of a READ response. */
static uint8_t read_op(uint32_t i, uint32_t n)
{
	if (n == 1)
		return OP_READ_RESP_ONLY;
	if (!i)
		return OP_READ_RESP_FIRST;
	return i == n - 1 ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
}

/*
 * Check one READ response packet against the request it answers: PSN
 * @first + @i, opcode @op, payload = the victim's memory at @off.
 */
static int check_read_pkt(const struct rsp *r, uint32_t first, uint32_t i, uint8_t op, uint32_t off, uint32_t total, uint32_t msn, const char *what)
{
	uint32_t want = total - i * PMTU < PMTU ? total - i * PMTU : PMTU;

	CHECK(r->psn == psn_add(first, i) && r->op == op,
	      "%s: got %s, want op 0x%02x psn 0x%06x", what, rsp_str(r), op, psn_add(first, i));
	CHECK(r->len == want, "%s: psn 0x%06x carries %u bytes, want %u", what, r->psn, r->len,
	      want);
	CHECK(!memcmp(r->data, vic.buf + off + i * PMTU, want),
	      "%s: psn 0x%06x carries the wrong bytes", what, r->psn);
	if (op != OP_READ_RESP_MIDDLE)
		CHECK(r->syn == AETH_ACK_UNLIMITED && r->msn == msn,
		      "%s: psn 0x%06x AETH syndrome 0x%02x msn %u, want 0x%02x msn %u", what, r->psn,
		      r->syn, r->msn, AETH_ACK_UNLIMITED, msn);
	return 0;
}

/* The index of @psn in [@first, @first + @n), or -1. */
static int psn_index(uint32_t psn, uint32_t first, uint32_t n)
{
	uint32_t i = (psn - first) & 0xffffff;

	return i < n ? (int)i : -1;
}

/*
 * One more READ response packet of a response expected as PSNs [@first,
 * @first + @n) over the victim's bytes at @off (@total bytes); @got marks
 * the packets seen (each may come once), @next is the index expected in
 * order.  @mid: the response continues an earlier one (a duplicate from
 * the middle of a READ's PSN range), so it starts with a Middle packet.
 * Packets may come out of order: a veth hands each packet to the receive
 * backlog of the CPU that sent it, and sroce sends a long response partly
 * from the receive path and partly from its work, which runs on the same
 * CPU but need not: a later request arriving on another CPU may send the
 * rest (counted in peer.reordered, and reported, not failed).
 */
static int take_read_pkt(const struct rsp *r, uint32_t first, uint32_t n, uint32_t off,
			 uint32_t total, uint32_t msn, bool mid, bool *got, uint32_t *next,
			 const char *what)
{
	int i = psn_index(r->psn, first, n);
	uint8_t op;

	CHECK(i >= 0, "%s: got %s, want psn 0x%06x..0x%06x", what, rsp_str(r), first,
	      psn_add(first, n - 1));
	CHECK(!got[i], "%s: psn 0x%06x came twice", what, r->psn);
	if ((uint32_t)i != *next)
		peer.reordered++;
	*next = (uint32_t)i + 1;
	got[i] = true;
	op = read_op((uint32_t)i, n);
	if (mid && !i)
		op = n == 1 ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
	return check_read_pkt(r, first, (uint32_t)i, op, off, total, msn, what);
}

/*
 * A READ response in full: @n packets from PSN @first, the bytes at offset
 * @off of the victim's MR (take_read_pkt()).
 */
static int expect_read(uint32_t first, uint32_t off, uint32_t total, uint32_t msn, bool mid,
		       const char *what)
{
	uint32_t n = total ? (total + PMTU - 1) / PMTU : 1, i, next = 0;
	bool got[n];
	struct rsp r;

	memset(got, 0, sizeof(got));
	for (i = 0; i < n; i++) {
		TRY(rsp_expect(&r, what));
		TRY(take_read_pkt(&r, first, n, off, total, msn, mid, got, &next, what));
	}
	return 0;
}

/* --- the victim ------------------------------------------------------------- */

/* What a scenario wants of its victim QP. */
struct vconf {
	bool uc;		/* a UC QP (else RC) */
	uint32_t epsn;		/* the victim's expected PSN (rq_psn) */
	uint32_t sq_psn;
	uint8_t rd_atomic;	/* max_dest_rd_atomic */
	uint8_t min_rnr_timer;
	unsigned int nrecv;	/* receive WQEs posted at the start */
	uint32_t recv_len;	/* their length (default RECV_SLOT) */
	/* the requester's attributes: if !req_attrs, timeout 14, retries 7 */
	bool req_attrs;
	uint8_t timeout;	/* local ACK timeout code */
	uint8_t retry_cnt, rnr_retry;
};

static uint32_t recv_posted;	/* receive WQEs posted so far (wr_id = slot) */
static uint32_t recv_len;

/* Pattern @seed over the victim's memory, zero its receive buffers. */
static void vic_fill(unsigned int seed)
{
	size_t i;

	for (i = 0; i < MR_SIZE; i++)
		vic.buf[i] = (uint8_t)(i * 7 + (i >> 10) * 13 + seed);
	for (i = 0; i < RO_SIZE; i++)
		vic.robuf[i] = (uint8_t)(i * 3 + seed);
	memset(vic.rbuf, 0, RECV_SLOT * RECV_SLOTS);
}

static void vic_open(void)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	int flags;

	vic.ctx = open_device(opt.dev);
	vic.pd = ibv_alloc_pd(vic.ctx);
	if (!vic.pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	if (posix_memalign((void **)&vic.buf, 4096, MR_SIZE) ||
	    posix_memalign((void **)&vic.robuf, 4096, RO_SIZE) ||
	    posix_memalign((void **)&vic.rbuf, 4096, RECV_SLOT * RECV_SLOTS))
		die("out of memory");
	vic.mr = ibv_reg_mr(vic.pd, vic.buf, MR_SIZE, acc);
	vic.ro = ibv_reg_mr(vic.pd, vic.robuf, RO_SIZE,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	vic.rmr = ibv_reg_mr(vic.pd, vic.rbuf, RECV_SLOT * RECV_SLOTS, IBV_ACCESS_LOCAL_WRITE);
	if (!vic.mr || !vic.ro || !vic.rmr)
		die("ibv_reg_mr: %s", strerror(errno));
	flags = fcntl(vic.ctx->async_fd, F_GETFL);
	if (fcntl(vic.ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		die("async fd: %s", strerror(errno));
	memset(&vic.peer_gid, 0, sizeof(vic.peer_gid));
	if (peer.family == AF_INET) {
		vic.peer_gid.raw[10] = vic.peer_gid.raw[11] = 0xff;
		memcpy(vic.peer_gid.raw + 12, peer.peer_addr, 4);
	} else {
		memcpy(vic.peer_gid.raw, peer.peer_addr, 16);
	}
}

static int post_recv(uint32_t len)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	uint32_t slot = recv_posted;

	if (slot >= RECV_SLOTS)
		return failf("internal: out of receive slots");
	sge.addr = (uintptr_t)(vic.rbuf + slot * RECV_SLOT);
	sge.length = len;
	sge.lkey = vic.rmr->lkey;
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (ibv_post_recv(vic.qp, &wr, &bad))
		return failf("ibv_post_recv: %s", strerror(errno));
	recv_posted++;
	return 0;
}

static int qp_modify(struct ibv_qp_attr *a, int mask, const char *what)
{
	errno = ibv_modify_qp(vic.qp, a, mask);
	if (errno)
		return failf("modify_qp to %s: %s", what, strerror(errno));
	return 0;
}

/* A fresh victim QP and CQ, in RTS, connected to the peer's claimed QPN. */
static int vic_up(const struct vconf *c)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = c->uc ? IBV_QPT_UC : IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = RECV_SLOTS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	unsigned int i;
	int mask;

	vic.cq = ibv_create_cq(vic.ctx, 64, NULL, NULL, 0);
	if (!vic.cq)
		return failf("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = vic.cq;
	vic.qp = ibv_create_qp(vic.pd, &ia);
	if (!vic.qp)
		return failf("ibv_create_qp: %s", strerror(errno));
	vic.qpn = vic.qp->qp_num;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = c->uc ? IBV_ACCESS_REMOTE_WRITE :
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	TRY(qp_modify(&a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		      "INIT"));
	recv_posted = 0;
	recv_len = c->recv_len ? c->recv_len : RECV_SLOT;
	for (i = 0; i < c->nrecv; i++)
		TRY(post_recv(recv_len));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = c->epsn;
	a.max_dest_rd_atomic = c->rd_atomic ? c->rd_atomic : 1;
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = vic.peer_gid;
	a.ah_attr.grh.sgid_index = (uint8_t)opt.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (!c->uc)	/* UC has neither READs, atomics nor RNR NAKs */
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	TRY(qp_modify(&a, mask, "RTR"));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	if (c->uc)	/* nor ACKs: no timeout, no retries */
		return qp_modify(&a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
	a.timeout = c->req_attrs ? c->timeout : 14;
	a.retry_cnt = c->req_attrs ? c->retry_cnt : 7;
	a.rnr_retry = c->req_attrs ? c->rnr_retry : 7;
	a.max_rd_atomic = 1;
	return qp_modify(&a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

/* Every async event of the victim, acknowledged; @want's type counted. */
static int async_drain(enum ibv_event_type want, int *seen)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(vic.ctx, &ev)) {
		vlog("  async event %s\n", ibv_event_type_str(ev.event_type));
		if (seen && ev.event_type == want && ev.element.qp == vic.qp)
			(*seen)++;
		ibv_ack_async_event(&ev);
	}
	return 0;
}

static void vic_down(void)
{
	async_drain(IBV_EVENT_COMM_EST, NULL);
	if (vic.qp)
		ibv_destroy_qp(vic.qp);
	if (vic.cq)
		ibv_destroy_cq(vic.cq);
	vic.qp = NULL;
	vic.cq = NULL;
}

/* The async event @want for the victim QP must come within the timeout. */
static int expect_event(enum ibv_event_type want)
{
	struct pollfd pfd = { .fd = vic.ctx->async_fd, .events = POLLIN };
	long end = now_ms() + opt.timeout_ms;
	int seen = 0;

	while (!seen && now_ms() < end) {
		poll(&pfd, 1, 100);
		async_drain(want, &seen);
	}
	CHECK(seen, "no %s event for the victim QP", ibv_event_type_str(want));
	return 0;
}

static int expect_state(enum ibv_qp_state want)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	errno = ibv_query_qp(vic.qp, &a, IBV_QP_STATE, &ia);
	CHECK(!errno, "ibv_query_qp: %s", strerror(errno));
	CHECK(a.qp_state == want, "victim QP in state %d, want %d", a.qp_state, want);
	return 0;
}

/* The next completion must come within the timeout and be this one. */
static int expect_wc(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
		     uint32_t byte_len, bool imm, uint32_t imm_data, const char *what)
{
	long end = now_ms() + opt.timeout_ms;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(vic.cq, 1, &wc)) == 0 && now_ms() < end)
		usleep(1000);
	CHECK(n >= 0, "ibv_poll_cq: %d", n);
	CHECK(n == 1, "%s: no completion within %d ms", what, opt.timeout_ms);
	CHECK(wc.wr_id == wr_id && wc.status == st,
	      "%s: completion wr_id %llu status %s, want wr_id %llu %s", what,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	      (unsigned long long)wr_id, ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS)
		return 0;
	CHECK(wc.opcode == op && wc.byte_len == byte_len,
	      "%s: completion opcode %d byte_len %u, want %d %u", what, wc.opcode, wc.byte_len, op,
	      byte_len);
	CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm && (!imm || wc.imm_data == imm_data),
	      "%s: completion immediate %s 0x%08x, want %s 0x%08x", what,
	      wc.wc_flags & IBV_WC_WITH_IMM ? "yes" : "no", ntohl(wc.imm_data), imm ? "yes" : "no",
	      ntohl(imm_data));
	return 0;
}

/* No completion now (without waiting: what could make one has not been sent). */
static int expect_no_wc_now(const char *after)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(vic.cq, 1, &wc);

	CHECK(n == 0, "after %s, an unexpected completion (wr_id %llu status %s)", after,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

static int expect_no_wc(const char *after)
{
	struct ibv_wc wc;
	int n;

	usleep(100 * 1000);
	n = ibv_poll_cq(vic.cq, 1, &wc);
	CHECK(n == 0, "after %s, an unexpected completion (wr_id %llu status %s)", after,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	return 0;
}

/* The receive in slot @slot holds @len bytes of @data. */
static int check_recv(uint32_t slot, const uint8_t *data, uint32_t len, const char *what)
{
	CHECK(!memcmp(vic.rbuf + slot * RECV_SLOT, data, len), "%s: the received bytes differ",
	      what);
	return 0;
}

/* The receive WQEs from @from on flush (the QP went to the error state). */
static int expect_flushed(uint32_t from)
{
	uint32_t i;

	for (i = from; i < recv_posted; i++)
		TRY(expect_wc(i, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, false, 0,
			      "a posted receive after the error"));
	return 0;
}

/* --- the device's counters --------------------------------------------------- */

/* The counters every scenario accounts for (other than rx/tx_packets). */
static const char *const cnt_names[] = {
	"rx_drop_dup", "rx_drop_seq", "seq_naks_sent", "rnr_naks_sent", "err_naks_sent",
	"rx_drop_short", "rx_drop_header", "rx_drop_icrc", "rx_drop_opcode", "rx_drop_no_qp",
	"rx_drop_qp_type", "rx_drop_qp_state", "rx_drop_address", "rx_drop_pkey",
	"rx_drop_resp", "rx_drop_gap", "rx_dup_resp", "retransmits", "timeouts", "seq_naks_rcvd",
	"rnr_naks_rcvd", "err_naks_rcvd", "rx_drop_uc", "rx_drop_no_recv", "rp_cnp_ignored",
	"stale_read_replays", "rejected_read_replays", "rx_packets", "tx_packets",
};
#define NCNT (sizeof(cnt_names) / sizeof(cnt_names[0]))

/* The device's counter @name. */
static int cnt_get(const char *name, long long *v)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", opt.dev,
		 name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lld", v) != 1) {
		if (f)
			fclose(f);
		return failf("cannot read %s", path);
	}
	fclose(f);
	return 0;
}

static int cnt_read(long long *v)
{
	unsigned int i;

	for (i = 0; i < NCNT; i++)
		TRY(cnt_get(cnt_names[i], &v[i]));
	return 0;
}

/*
 * Counter @name reaches @want within the timeout: sroce has taken the
 * packets that move it (when nothing else shows it).
 */
static int cnt_wait(const char *name, long long want, const char *what)
{
	long end = now_ms() + opt.timeout_ms;
	long long v;

	for (;;) {
		TRY(cnt_get(name, &v));
		if (v >= want)
			return 0;
		CHECK(now_ms() < end, "%s: %s at %lld after %d ms, want %lld", what, name, v,
		      opt.timeout_ms, want);
		usleep(1000);
	}
}

/* On stderr: every counter that moved, to tell why a scenario failed. */
static void cnt_dump(const long long *before, const long long *after)
{
	unsigned int i;

	fprintf(stderr, "counters moved:");
	for (i = 0; i < NCNT; i++)
		if (after[i] != before[i])
			fprintf(stderr, " %s+%lld", cnt_names[i], after[i] - before[i]);
	fprintf(stderr, " (peer sent %lu, received %lu)\n", peer.sent, peer.rcvd);
}

/*
 * Compare the counters with @before: each named in @want ("name=N ...")
 * moved by N, every other one in cnt_names by 0; rx_packets by what the
 * peer sent, tx_packets by what it received.
 */
static int cnt_check(const long long *before, const char *want)
{
	long long after[NCNT], w, d;
	const char *p;
	unsigned int i;
	size_t l;

	TRY(cnt_read(after));
	for (i = 0; i < NCNT; i++) {
		w = 0;
		l = strlen(cnt_names[i]);
		for (p = want; p && (p = strstr(p, cnt_names[i])); p += l)
			if ((p == want || p[-1] == ' ') && p[l] == '=')
				w = atoll(p + l + 1);
		if (!strcmp(cnt_names[i], "rx_packets"))
			w = (long long)peer.sent;
		if (!strcmp(cnt_names[i], "tx_packets"))
			w = (long long)peer.rcvd;
		d = after[i] - before[i];
		if (d != w)
			cnt_dump(before, after);
		CHECK(d == w, "counter %s moved by %lld, want %lld", cnt_names[i], d, w);
	}
	return 0;
}

/* --- the scenarios ------------------------------------------------------------ */

static uint8_t msg[4][2 * PMTU];	/* what the peer's SENDs and WRITEs carry */

static struct req rq(uint8_t op, uint32_t psn)
{
	struct req r = { .op = op, .psn = psn, .ackreq = true, .padcnt = -1 };

	return r;
}

static struct req rq_send(uint8_t op, uint32_t psn, const uint8_t *data, uint32_t len)
{
	struct req r = rq(op, psn);

	r.data = data;
	r.len = len;
	return r;
}

static struct req rq_rdma(uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen)
{
	struct req r = rq(op, psn);

	r.va = va;
	r.rkey = rkey;
	r.dmalen = dmalen;
	return r;
}

static uint64_t va_of(uint32_t off)
{
	return (uintptr_t)vic.buf + off;
}

/*
 * read_replay_new_read - the regression of commit 37109d8 ("resp: a new
 * READ/atomic takes a resource whose answer is only a replay").
 *
 * max_dest_rd_atomic 1.  READ R1 is answered in full; the peer then sends
 * a duplicate of R1 (as a requester whose ACK timer fired while the answer
 * was on its way does) and, right behind it in the same sendmmsg(), READ
 * R2 from the PSN after R1's last response.  The requester has R1 in full,
 * so R2 is within the one READ it may have outstanding, and the responder
 * must take it (IBTA 9.7.5.1.4: the responder need not finish a
 * duplicate's replay the requester no longer waits for; 9.5.3: it accepts
 * new requests up to its max_dest_rd_atomic).  So the answer must be R1's
 * replay (possibly cut short, only R1's PSNs and bytes, each at most once)
 * and R2 in full with the right bytes, PSNs and MSN 2, never a NAK.
 * Before 37109d8 sroce's one resource still held the queued replay when R2
 * arrived: it NAKed R2 "invalid request" and failed the QP.
 *
 * R1 is 256 KiB (256 response packets), not less: the replay must still be
 * going on when R2 arrives, and sroce sends most of it from a work that
 * may run on the other CPU while the peer's sendmmsg() hands over R2; with
 * 64 packets the replay sometimes ended first.  And the requester must have
 * R1 in full first: sent right after R1's first response packet, R2 would
 * be a second READ outstanding, over the limit, and "NAK invalid request"
 * a legal answer.
 */
static int sc_read_replay_new_read(const struct vconf *c)
{
	enum { N1 = 256, N2 = 8 };
	const uint32_t len1 = N1 * PMTU, len2 = N2 * PMTU, off2 = len1;
	uint32_t p = c->epsn, p2 = psn_add(p, N1), next1 = 0, next2 = 0, seen1 = 0, seen2 = 0;
	bool got1[N1] = { false }, got2[N2] = { false };
	struct req two[2];
	struct rsp r;

	two[0] = rq_rdma(OP_READ_REQ, p, va_of(0), vic.mr->rkey, len1);
	TRY(req_send(&two[0]));
	TRY(expect_read(p, 0, len1, 1, false, "R1"));
	two[1] = rq_rdma(OP_READ_REQ, p2, va_of(off2), vic.mr->rkey, len2);
	TRY(req_send_n(two, 2));
	while (seen2 < N2) {
		TRY(rsp_expect(&r, seen2 ? "R2" : "R1's duplicate and R2"));
		CHECK(r.op != OP_ACK, "NAK/ACK instead of READ data: %s", rsp_str(&r));
		if (psn_index(r.psn, p, N1) >= 0) {
			TRY(take_read_pkt(&r, p, N1, 0, len1, 1, false, got1, &next1,
					  "R1's replay"));
			seen1++;
			continue;
		}
		TRY(take_read_pkt(&r, p2, N2, off2, len2, 2, false, got2, &next2, "R2"));
		seen2++;
	}
	fprintf(stderr, "read_replay_new_read: R1's replay sent %u of %u packets\n", seen1, N1);
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_send - a SEND repeated with its old PSN (its ACK was lost) is
 * acknowledged again, with the PSN of the newest request the responder
 * has (9.7.5.1.1: a duplicate SEND/WRITE is not executed again but
 * answered with an ACK), and not delivered again: one receive completion;
 * the next SEND (with immediate) takes the second receive WQE.
 */
static int sc_dup_send(const struct vconf *c)
{
	uint32_t p = c->epsn, imm = htonl(0x1234abcd);
	struct req r = rq_send(OP_SEND_ONLY, p, msg[0], 100);

	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "a SEND"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND"));
	TRY(check_recv(0, msg[0], 100, "a SEND"));
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "the duplicate SEND"));
	TRY(expect_no_wc("the duplicate SEND"));
	r = rq_send(OP_SEND_ONLY_IMM, psn_add(p, 1), msg[1], 300);
	r.imm = imm;
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2, "the SEND after the duplicate"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 300, true, imm, "the SEND after"));
	TRY(check_recv(1, msg[1], 300, "the SEND after the duplicate"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_middle - a Middle packet of a multi-packet SEND comes again while
 * the SEND is still in progress (the wire duplicated it): the copy's PSN
 * is behind the expected one, so it is a duplicate (9.7.5.1.1): not placed
 * again, the message neither grows nor shifts, and its Last completes it
 * whole.  A duplicate is acknowledged when it asks to be (AckReq), as
 * sroce acknowledges any SEND/WRITE duplicate, with the newest PSN it has
 * taken and the MSN of the last complete message; the first copy here
 * does not ask (as a requester sends a Middle), the second does.
 */
static int sc_dup_middle(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300;
	const uint8_t *data = (const uint8_t *)msg;	/* 2348 of its bytes */
	struct req r;

	r = rq_send(OP_SEND_FIRST, p, data, PMTU);
	r.ackreq = false;
	TRY(req_send(&r));
	r = rq_send(OP_SEND_MIDDLE, psn_add(p, 1), data + PMTU, PMTU);
	r.ackreq = false;
	TRY(req_send(&r));
	TRY(req_send(&r));
	TRY(expect_quiet("a First, a Middle and the Middle again, none with AckReq"));
	r.ackreq = true;
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 0, "the Middle again, with AckReq"));
	TRY(expect_no_wc("the Middle twice again"));
	r = rq_send(OP_SEND_LAST, psn_add(p, 2), data + 2 * PMTU, len - 2 * PMTU);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 1, "the Last"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "the SEND"));
	TRY(check_recv(0, data, len, "the SEND with a duplicate Middle"));
	CHECK(vic.rbuf[len] == 0, "the SEND wrote past its %u bytes", len);
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read - a duplicate READ is answered again from the saved request
 * (9.7.5.1.4), from the PSN the duplicate carries: a duplicate of the
 * whole READ gets the whole response again, First to Last; one from the
 * middle of its PSN range (the requester lost the response's tail and asks
 * for the rest, its RETH moved on by as many bytes) gets the rest, from
 * that PSN, continuing the response (Middle .. Last, as rdma_rxe answers
 * too).  Neither moves the expected PSN: the next SEND is new.
 */
static int sc_dup_read(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 4 * PMTU;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(4096), vic.mr->rkey, len);

	TRY(req_send(&r));
	TRY(expect_read(p, 4096, len, 1, false, "a READ"));
	r = rq_rdma(OP_READ_REQ, psn_add(p, 2), va_of(4096 + 2 * PMTU), vic.mr->rkey, 2 * PMTU);
	TRY(req_send(&r));
	TRY(expect_read(psn_add(p, 2), 4096 + 2 * PMTU, 2 * PMTU, 1, true,
			"a duplicate READ from its third PSN"));
	r = rq_rdma(OP_READ_REQ, p, va_of(4096), vic.mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, 4096, len, 1, false, "a duplicate of the whole READ"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 4), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 2, "a SEND after the duplicates"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "a SEND after the READs"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_stale - a READ of memory its owner deregisters once the READ
 * is answered, then a duplicate of it (a copy the network held back): the
 * duplicate gets no answer (the memory is gone, and a requester with the
 * whole answer waits for none; stale_read_replays), no NAK, and the QP
 * stays up: the next SEND is taken and ACKed.
 */
static int sc_dup_read_stale(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 32768, len = 2 * PMTU;
	struct ibv_mr *mr;
	struct req r;

	mr = ibv_reg_mr(vic.pd, vic.buf + off, 8192,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	r = rq_rdma(OP_READ_REQ, p, va_of(off), mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr: %s", strerror(errno));
	TRY(req_send(&r));
	TRY(expect_quiet_ms("a duplicate READ of memory deregistered since", 300));
	TRY(expect_state(IBV_QPS_RTS));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2, "a SEND after the duplicate"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_mismatch - duplicates of a READ (4 packets, its PSNs wrapping
 * past 0xffffff) that do not ask for the rest of it from their PSN, with
 * its R_Key and its VA moved on by the packets before: from its third PSN
 * with a VA past its end (memory the READ never asked for, which the QP
 * may read); from its second PSN with the VA of its third;
 * from its first PSN for twice its length; its very request under another
 * R_Key (of a region the QP may read too).  None is answered, none NAKed
 * (the requester has moved past their PSNs), each is counted in
 * rejected_read_replays; the READ itself is left as it was: a duplicate
 * asking for part of the rest (from its second PSN, 1124 bytes) gets
 * exactly that, Middle then Last, and the next SEND is new.  Before this
 * check, sroce answered each from the duplicate's VA and length under the
 * READ's own R_Key, and the part with the READ's PSNs to its end.
 */
static int sc_dup_read_mismatch(const struct vconf *c)
{
	static const char *const what[] = {
		"a duplicate READ from its third PSN with a VA past the READ's end",
		"a duplicate READ from its second PSN with the VA of its third",
		"a duplicate READ for twice the READ's length",
		"a duplicate READ under another R_Key",
	};
	uint32_t p = c->epsn, off = 4096, len = 4 * PMTU, part = PMTU + 100, i;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, len), bad[4];

	bad[0] = rq_rdma(OP_READ_REQ, psn_add(p, 2), va_of(off + 64 * PMTU), vic.mr->rkey,
			 2 * PMTU);
	bad[1] = rq_rdma(OP_READ_REQ, psn_add(p, 1), va_of(off + 2 * PMTU), vic.mr->rkey,
			 2 * PMTU);
	bad[2] = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, 2 * len);
	bad[3] = rq_rdma(OP_READ_REQ, p, va_of(off), vic.ro->rkey, len);
	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	for (i = 0; i < 4; i++) {
		TRY(req_send(&bad[i]));
		TRY(expect_quiet_ms(what[i], 300));
		TRY(expect_state(IBV_QPS_RTS));
	}
	r = rq_rdma(OP_READ_REQ, psn_add(p, 1), va_of(off + PMTU), vic.mr->rkey, part);
	TRY(req_send(&r));
	TRY(expect_read(psn_add(p, 1), off + PMTU, part, 1, true,
			"a duplicate READ for part of the rest from its second PSN"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 4), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 2, "a SEND after the duplicates"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * dup_read_no_access - a READ is answered, then the victim takes its QP's
 * remote read access away (modify_qp RTS to RTS, IBV_QP_ACCESS_FLAGS) and
 * the READ comes again: the duplicate is not answered (that would read
 * memory the QP no longer lets be read), nor NAKed: it is given up as a
 * stale replay (stale_read_replays), as one whose memory is gone, and the
 * QP stays up and takes the next SEND.  A new READ then gets what any
 * READ without the access gets: NAK remote access error, the QP in the
 * error state.  Before this check, sroce answered the duplicate in full.
 */
static int sc_dup_read_no_access(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 16384, len = 2 * PMTU;
	struct req r = rq_rdma(OP_READ_REQ, p, va_of(off), vic.mr->rkey, len);
	struct ibv_qp_attr a = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_ATOMIC };

	TRY(req_send(&r));
	TRY(expect_read(p, off, len, 1, false, "a READ"));
	TRY(qp_modify(&a, IBV_QP_ACCESS_FLAGS, "RTS without remote read"));
	TRY(req_send(&r));
	TRY(expect_quiet_ms("a duplicate READ after remote read was taken away", 300));
	TRY(expect_state(IBV_QPS_RTS));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 64);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2, "a SEND after the duplicate"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "the SEND"));
	r = rq_rdma(OP_READ_REQ, psn_add(p, 3), va_of(off), vic.mr->rkey, len);
	TRY(req_send(&r));
	TRY(expect_ack(NAK_REM_ACCESS, psn_add(p, 3), 2, "a new READ without remote read"));
	TRY(expect_event(IBV_EVENT_QP_ACCESS_ERR));
	return expect_state(IBV_QPS_ERR);
}

/*
 * seq_gap - a request with a PSN ahead of the expected one means packets
 * were lost: the responder sends one NAK "PSN sequence error" carrying
 * the expected PSN (9.7.5.1.2), drops silently whatever else comes ahead
 * in that gap (one NAK per gap: rx_drop_seq), and takes the expected PSN
 * normally when it comes.  A later gap gets a NAK of its own.
 */
static int sc_seq_gap(const struct vconf *c)
{
	uint32_t p = c->epsn, i;
	struct req r;

	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 200);
	TRY(req_send(&r));
	TRY(expect_ack(NAK_PSN_SEQ, p, 0, "a SEND two PSNs ahead"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 3), msg[3], 200);
	TRY(req_send(&r));
	TRY(expect_quiet("a second SEND in the gap"));
	r = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 200);
	TRY(req_send(&r));
	TRY(expect_quiet("the first SEND in the gap again"));
	TRY(expect_no_wc("SENDs in the gap"));
	for (i = 0; i < 4; i++) {
		r = rq_send(OP_SEND_ONLY, psn_add(p, i), msg[i], 200 + i);
		TRY(req_send(&r));
		TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, i), i + 1, "a SEND in order"));
		TRY(expect_wc(i, IBV_WC_SUCCESS, IBV_WC_RECV, 200 + i, false, 0, "a SEND in order"));
		TRY(check_recv(i, msg[i], 200 + i, "a SEND in order"));
	}
	r = rq_rdma(OP_WRITE_ONLY, psn_add(p, 6), va_of(0), vic.mr->rkey, 16);
	r.data = msg[0];
	r.len = 16;
	TRY(req_send(&r));
	TRY(expect_ack(NAK_PSN_SEQ, psn_add(p, 4), 4, "a WRITE ahead after the gap closed"));
	r.psn = psn_add(p, 4);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 4), 5, "the expected WRITE"));
	CHECK(!memcmp(vic.buf, msg[0], 16), "the WRITE did not land");
	return expect_state(IBV_QPS_RTS);
}

/*
 * A fatal error NAK: the request at @psn NAKed with @syn, the QP in the
 * error state with async event @ev (9.7.5.2.x: class B/C/D errors), its
 * posted receives from @flushed on flushed.
 */
static int expect_fatal(const struct req *r, uint8_t syn, enum ibv_event_type ev,
			uint32_t flushed, const char *what)
{
	TRY(req_send(r));
	TRY(expect_ack(syn, r->psn, 0, what));
	TRY(expect_event(ev));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(flushed);
}

/* write_bad_rkey - RDMA WRITE with an R_Key nobody has: NAK remote access error. */
static int sc_write_bad_rkey(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, va_of(0), vic.mr->rkey ^ 0x80, 64);

	r.data = msg[1];
	r.len = 64;
	TRY(expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0, "a WRITE, bad R_Key"));
	CHECK(memcmp(vic.buf, msg[1], 64), "the WRITE with a bad R_Key landed");
	return 0;
}

/* read_past_end - RDMA READ running 512 bytes past its MR: NAK remote access error. */
static int sc_read_past_end(const struct vconf *c)
{
	struct req r = rq_rdma(OP_READ_REQ, c->epsn, va_of(MR_SIZE - 512), vic.mr->rkey, PMTU);

	return expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0,
			    "a READ past the end of the MR");
}

/* write_no_remote_write - RDMA WRITE to an MR registered without remote write. */
static int sc_write_no_remote_write(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, (uintptr_t)vic.robuf, vic.ro->rkey, 64);

	r.data = msg[1];
	r.len = 64;
	TRY(expect_fatal(&r, NAK_REM_ACCESS, IBV_EVENT_QP_ACCESS_ERR, 0,
			 "a WRITE to a read-only MR"));
	CHECK(memcmp(vic.robuf, msg[1], 64), "the WRITE to a read-only MR landed");
	return 0;
}

/*
 * write_middle_alone - RDMA WRITE Middle with no First before it: an
 * opcode out of sequence, NAK invalid request (9.7.5.2.x, class C).
 */
static int sc_write_middle_alone(const struct vconf *c)
{
	struct req r = rq_send(OP_WRITE_MIDDLE, c->epsn, msg[0], PMTU);

	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE Middle with no First");
}

/* send_last_alone - SEND Last after nothing: NAK invalid request. */
static int sc_send_last_alone(const struct vconf *c)
{
	struct req r = rq_send(OP_SEND_LAST, c->epsn, msg[0], 64);

	TRY(expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0, "a SEND Last alone"));
	return expect_no_wc("the flushed receive");
}

/*
 * write_len_mismatch - RDMA WRITE Only whose RETH says 64 bytes but which
 * carries 60: a length error, NAK invalid request (9.7.5.2.x).
 */
static int sc_write_len_mismatch(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_ONLY, c->epsn, va_of(0), vic.mr->rkey, 64);

	r.data = msg[1];
	r.len = 60;
	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE Only shorter than its RETH");
}

/*
 * write_first_pad - RDMA WRITE First with a PMTU of data but PadCnt 3: its
 * payload is then 1021 bytes, and a First packet must carry exactly the
 * PMTU (9.7.5.2.x): NAK invalid request.
 */
static int sc_write_first_pad(const struct vconf *c)
{
	struct req r = rq_rdma(OP_WRITE_FIRST, c->epsn, va_of(0), vic.mr->rkey, 2 * PMTU);

	r.data = msg[1];
	r.len = PMTU - 3;
	r.padcnt = 3;
	return expect_fatal(&r, NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR, 0,
			    "a WRITE First with a pad");
}

/*
 * send_too_long - a SEND of 200 bytes into a 64-byte receive: the
 * responder's length error (9.7.5.2.x, class C: "NAK invalid request"),
 * the receive WQE completes with a local length error (table 75, "Local
 * Length Error: the receive buffer is smaller than the incoming SEND"),
 * the QP goes to the error state and the second receive flushes.
 */
static int sc_send_too_long(const struct vconf *c)
{
	struct req r = rq_send(OP_SEND_ONLY, c->epsn, msg[0], 200);

	TRY(req_send(&r));
	TRY(expect_ack(NAK_INVALID_REQ, c->epsn, 0, "a SEND longer than the receive"));
	TRY(expect_wc(0, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "the too short receive"));
	TRY(expect_event(IBV_EVENT_QP_REQ_ERR));
	TRY(expect_state(IBV_QPS_ERR));
	return expect_flushed(1);
}

/*
 * rnr - a SEND with no receive WQE posted: RNR NAK carrying the QP's
 * min_rnr_timer in its syndrome (9.7.5.2.8), PSN of the SEND, MSN
 * unchanged; the QP stays in RTS; what follows is dropped silently until
 * the SEND is resent; resent once a receive is posted, it is taken.  A
 * later SEND finding the queue empty again gets a second RNR NAK.
 */
static int sc_rnr(const struct vconf *c)
{
	uint32_t p = c->epsn;
	uint8_t rnr = AETH_TYPE_RNR | c->min_rnr_timer;
	struct req r = rq_send(OP_SEND_ONLY, p, msg[0], 128);
	struct req r1 = rq_send(OP_SEND_ONLY, psn_add(p, 1), msg[1], 129);
	struct req r2 = rq_send(OP_SEND_ONLY, psn_add(p, 2), msg[2], 130);

	TRY(req_send(&r));
	TRY(expect_ack(rnr, p, 0, "a SEND with no receive posted"));
	TRY(req_send(&r1));
	TRY(expect_quiet("a SEND behind the RNR NAK"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(post_recv(recv_len));
	TRY(post_recv(recv_len));
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, p, 1, "the SEND resent"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 128, false, 0, "the SEND resent"));
	TRY(check_recv(0, msg[0], 128, "the SEND resent"));
	TRY(req_send(&r1));
	TRY(expect_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2, "the next SEND"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 129, false, 0, "the next SEND"));
	TRY(req_send(&r2));
	TRY(expect_ack(rnr, psn_add(p, 2), 2, "a SEND with the queue empty again"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * atomics - CmpSwap and FetchAdd are answered with an atomic ACK carrying
 * the value before the operation (9.7.5.1.x); a CmpSwap whose compare
 * fails leaves memory alone; a duplicate atomic is answered from the saved
 * result and not executed again (9.7.5.1.4: C9-? atomics are not
 * idempotent), while both are within the max_dest_rd_atomic (2) saved
 * ones.  The MSN of a replayed answer: sroce puts the current MSN there,
 * rdma_rxe the one of the first answer; both are accepted for the older
 * duplicate.
 */
static int sc_atomics(const struct vconf *c)
{
	const uint32_t off = 8192;
	uint64_t *m = (uint64_t *)(vic.buf + off), v0 = 0x1111222233334444ull,
		 v1 = 0x5555666677778888ull, add = 0x100000001ull;
	uint32_t p = c->epsn;
	struct req cs, cs2, fa;

	*m = v0;
	cs = rq(OP_CMP_SWAP, p);
	cs.va = va_of(off);
	cs.rkey = vic.mr->rkey;
	cs.compare = v0;
	cs.swap_add = v1;
	TRY(req_send(&cs));
	TRY(expect_atomic_ack(p, v0, 1, 1, "CmpSwap"));
	CHECK(*m == v1, "after CmpSwap memory holds 0x%llx", (unsigned long long)*m);
	cs2 = cs;
	cs2.psn = psn_add(p, 1);
	cs2.swap_add = 0xdeadull;	/* compare v0 fails now */
	TRY(req_send(&cs2));
	TRY(expect_atomic_ack(psn_add(p, 1), v1, 2, 2, "a failing CmpSwap"));
	CHECK(*m == v1, "a failing CmpSwap changed memory to 0x%llx", (unsigned long long)*m);
	fa = rq(OP_FETCH_ADD, psn_add(p, 2));
	fa.va = va_of(off);
	fa.rkey = vic.mr->rkey;
	fa.swap_add = add;
	TRY(req_send(&fa));
	TRY(expect_atomic_ack(psn_add(p, 2), v1, 3, 3, "FetchAdd"));
	CHECK(*m == v1 + add, "after FetchAdd memory holds 0x%llx", (unsigned long long)*m);
	TRY(req_send(&fa));
	TRY(expect_atomic_ack(psn_add(p, 2), v1, 3, 3, "a duplicate FetchAdd"));
	CHECK(*m == v1 + add, "the duplicate FetchAdd ran again: 0x%llx", (unsigned long long)*m);
	cs2.swap_add = 0xbeefull;
	cs2.compare = v1 + add;		/* would succeed if it ran again */
	TRY(req_send(&cs2));
	TRY(expect_atomic_ack(psn_add(p, 1), v1, 3, 2, "a duplicate CmpSwap"));
	CHECK(*m == v1 + add, "the duplicate CmpSwap ran again: 0x%llx", (unsigned long long)*m);
	return expect_state(IBV_QPS_RTS);
}

/* --- the victim as the requester ---------------------------------------------- */

/*
 * In the scenarios below the victim's send queue talks to the peer, which
 * plays the responder: it takes the requests sroce sends, checks each one
 * (opcode, PSN, AckReq, RETH or AtomicETH, payload bytes) and answers with
 * the ACKs, NAKs, READ responses and atomic ACKs the scenario wants.  The
 * peer's "memory" is only a claim: REMOTE_VA and REMOTE_RKEY go in the
 * victim's work requests, and the peer answers READs from rdata.
 */
#define REMOTE_VA 0x00007f1234560000ull
#define REMOTE_RKEY 0x00c0ffeeu
#define RD_OFF (64 * 1024)		/* where the victim's READs land */
#define ATOMIC_OFF (128 * 1024)		/* where its atomics' results land */

static uint8_t rdata[8 * PMTU];		/* what the peer's READ responses carry */

/* A request sroce sent the peer, parsed. */
struct inreq {
	uint8_t op;
	uint32_t psn;
	bool ackreq;
	uint64_t va, swap_add, compare;	/* RETH, AtomicETH */
	uint32_t rkey, dmalen;
	const uint8_t *data;
	uint32_t len;
	size_t n;			/* the datagram's length */
	uint8_t raw[MAX_PKT + 64];
};

/* A request of the victim's transport (UC: SENDs and WRITEs only). */
static bool op_is_request(uint8_t op)
{
	if (tport == UC_OPS)
		return op >= UC(OP_SEND_FIRST) && op <= UC(OP_WRITE_ONLY_IMM);
	return op <= OP_READ_REQ || op == OP_CMP_SWAP || op == OP_FETCH_ADD;
}

static const char *inreq_str(const struct inreq *r)
{
	static char s[128];

	snprintf(s, sizeof(s), "op 0x%02x psn 0x%06x%s (%u bytes)", r->op, r->psn,
		 r->ackreq ? " AckReq" : "", r->len);
	return s;
}

static int inreq_parse(struct inreq *r, uint16_t sport)
{
	const uint8_t *p = r->raw, *q = r->raw + BTH_LEN;
	unsigned int pad;
	size_t end;

	CHECK(r->n >= BTH_LEN + ICRC_LEN, "a %zu-byte datagram from sroce", r->n);
	r->op = p[0];
	r->psn = get32(p + 8) & 0xffffff;
	r->ackreq = p[8] & 0x80;
	CHECK(op_is_request(r->op), "sroce sent opcode 0x%02x (psn 0x%06x), not an %s request",
	      r->op, r->psn, tport ? "UC" : "RC");
	TRY(hdr_check(p, r->n, sport));
	CHECK(!(get32(p + 8) & 0x7f000000), "op 0x%02x psn 0x%06x: reserved BTH bits set", r->op,
	      r->psn);
	r->va = r->swap_add = r->compare = 0;
	r->rkey = r->dmalen = 0;
	if (op_has_reth(r->op)) {
		CHECK(r->n >= BTH_LEN + RETH_LEN + ICRC_LEN, "op 0x%02x too short for its RETH",
		      r->op);
		r->va = get64(q);
		r->rkey = get32(q + 8);
		r->dmalen = get32(q + 12);
		q += RETH_LEN;
	}
	if (r->op == OP_CMP_SWAP || r->op == OP_FETCH_ADD) {
		CHECK(r->n >= BTH_LEN + ATMETH_LEN + ICRC_LEN, "atomic request too short");
		r->va = get64(q);
		r->rkey = get32(q + 8);
		r->swap_add = get64(q + 12);
		r->compare = get64(q + 20);
		q += ATMETH_LEN;
	}
	if (op_has_imm(r->op))
		q += IMM_LEN;
	pad = (p[1] >> 4) & 3;
	end = r->n - ICRC_LEN;
	CHECK((size_t)(q - p) + pad <= end, "op 0x%02x psn 0x%06x: PadCnt %u past its end", r->op,
	      r->psn, pad);
	r->data = q;
	r->len = (uint32_t)(end - (size_t)(q - p) - pad);
	CHECK(!((r->len + pad) & 3), "op 0x%02x psn 0x%06x: payload and pad %u + %u bytes", r->op,
	      r->psn, r->len, pad);
	return 0;
}

/* The next request from sroce within @ms: 1, or 0 if none came. */
static int inreq_recv(struct inreq *r, int ms)
{
	uint16_t sport;
	int k = dgram_recv(r->raw, sizeof(r->raw), &r->n, &sport, ms);

	if (k <= 0)
		return k;
	TRY(inreq_parse(r, sport));
	vlog("  <- %s\n", inreq_str(r));
	return 1;
}

/* The next request must come within the timeout, opcode @op, PSN @psn. */
static int expect_inreq(struct inreq *r, uint8_t op, uint32_t psn, const char *what)
{
	int k = inreq_recv(r, opt.timeout_ms);

	TRY(k);
	CHECK(k, "%s: no request within %d ms (want op 0x%02x psn 0x%06x)", what, opt.timeout_ms,
	      op, psn);
	CHECK(r->op == op && r->psn == psn, "%s: got %s, want op 0x%02x psn 0x%06x", what,
	      inreq_str(r), op, psn);
	return 0;
}

/* The opcode of packet @i of @n of a SEND (or, with @write, an RDMA WRITE). */
static uint8_t msg_op(bool write, uint32_t i, uint32_t n)
{
	uint8_t op;

	if (n == 1)
		op = write ? OP_WRITE_ONLY : OP_SEND_ONLY;
	else if (!i)
		op = write ? OP_WRITE_FIRST : OP_SEND_FIRST;
	else if (i == n - 1)
		op = write ? OP_WRITE_LAST : OP_SEND_LAST;
	else
		op = write ? OP_WRITE_MIDDLE : OP_SEND_MIDDLE;
	return op | tport;
}

/*
 * A SEND or RDMA WRITE message, or its tail from packet @from on (a
 * resend): the packets of PSNs @psn + @from .. in order, each with its
 * opcode, the bytes of the victim's buffer at @off, PMTU-sized but the
 * last, AckReq on the last only (RC; never on UC), a WRITE's RETH (REMOTE_VA, REMOTE_RKEY,
 * @len) on its First or Only.
 */
static int expect_msg(bool write, uint32_t psn, uint32_t from, uint32_t off, uint32_t len,
		      const char *what)
{
	uint32_t n = len ? (len + PMTU - 1) / PMTU : 1, i, want;
	struct inreq r;
	uint8_t op;

	for (i = from; i < n; i++) {
		op = msg_op(write, i, n);
		TRY(expect_inreq(&r, op, psn_add(psn, i), what));
		want = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		CHECK(r.len == want && !memcmp(r.data, vic.buf + off + i * PMTU, want),
		      "%s: %s, want %u bytes of the victim's buffer at %u", what, inreq_str(&r),
		      want, off + i * PMTU);
		CHECK(r.ackreq == (!tport && i == n - 1), "%s: %s, AckReq %s on packet %u of %u",
		      what, inreq_str(&r), r.ackreq ? "set" : "clear", i + 1, n);
		if (write && !i)
			CHECK(r.va == REMOTE_VA && r.rkey == REMOTE_RKEY && r.dmalen == len,
			      "%s: RETH va 0x%llx rkey 0x%x len %u, want 0x%llx 0x%x %u", what,
			      (unsigned long long)r.va, r.rkey, r.dmalen,
			      (unsigned long long)REMOTE_VA, REMOTE_RKEY, len);
	}
	return 0;
}

/* A READ request at @psn for @len bytes from REMOTE_VA + @roff. */
static int expect_read_req(uint32_t psn, uint32_t roff, uint32_t len, const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, OP_READ_REQ, psn, what));
	CHECK(r.va == REMOTE_VA + roff && r.rkey == REMOTE_RKEY && r.dmalen == len && !r.len &&
	      r.ackreq,
	      "%s: READ psn 0x%06x va 0x%llx rkey 0x%x len %u (%u bytes, AckReq %d), want va "
	      "0x%llx rkey 0x%x len %u", what, r.psn, (unsigned long long)r.va, r.rkey, r.dmalen,
	      r.len, r.ackreq, (unsigned long long)(REMOTE_VA + roff), REMOTE_RKEY, len);
	return 0;
}

/* The peer answers: an ACK or NAK (@syn) for @psn. */
static int peer_ack(uint8_t syn, uint32_t psn, uint32_t msn)
{
	struct req r = { .op = OP_ACK, .psn = psn, .padcnt = -1, .syn = syn, .msn = msn };

	return req_send(&r);
}

/* The peer answers: READ response packet @op at @psn with @len bytes of rdata + @roff. */
static int peer_read_rsp(uint8_t op, uint32_t psn, uint32_t roff, uint32_t len, uint32_t msn)
{
	struct req r = { .op = op, .psn = psn, .padcnt = -1, .syn = AETH_ACK_UNLIMITED,
			 .msn = msn, .data = rdata + roff, .len = len };

	return req_send(&r);
}

static int peer_atomic_ack(uint32_t psn, uint64_t orig, uint32_t msn)
{
	struct req r = { .op = OP_ATOMIC_ACK, .psn = psn, .padcnt = -1,
			 .syn = AETH_ACK_UNLIMITED, .msn = msn, .orig = orig };

	return req_send(&r);
}

/* Post a signaled SEND/WRITE/READ of @len bytes of the victim's buffer at @off. */
static int post_send_wr(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
			uint32_t roff)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)(vic.buf + off), .length = len,
			       .lkey = vic.mr->lkey };

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = REMOTE_VA + roff;
	wr.wr.rdma.rkey = REMOTE_RKEY;
	errno = ibv_post_send(vic.qp, &wr, &bad);
	CHECK(!errno, "ibv_post_send (wr_id %llu): %s", (unsigned long long)wr_id,
	      strerror(errno));
	return 0;
}

/* Post a signaled atomic whose result lands at ATOMIC_OFF. */
static int post_atomic_wr(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t compare_add,
			  uint64_t swap)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)(vic.buf + ATOMIC_OFF), .length = 8,
			       .lkey = vic.mr->lkey };

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = REMOTE_VA;
	wr.wr.atomic.rkey = REMOTE_RKEY;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	errno = ibv_post_send(vic.qp, &wr, &bad);
	CHECK(!errno, "ibv_post_send (atomic, wr_id %llu): %s", (unsigned long long)wr_id,
	      strerror(errno));
	return 0;
}

/* An atomic request at @psn with these operands. */
static int expect_atomic_req(uint8_t op, uint32_t psn, uint64_t swap_add, uint64_t compare,
			     const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, op, psn, what));
	CHECK(r.va == REMOTE_VA && r.rkey == REMOTE_RKEY && r.swap_add == swap_add &&
	      r.compare == compare && !r.len && r.ackreq,
	      "%s: atomic va 0x%llx rkey 0x%x swap/add 0x%llx compare 0x%llx (%u bytes)", what,
	      (unsigned long long)r.va, r.rkey, (unsigned long long)r.swap_add,
	      (unsigned long long)r.compare, r.len);
	return 0;
}

/* A send completion; SEND and WRITE completions carry byte_len 0 (sroce). */
static int expect_swc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t byte_len, const char *what)
{
	return expect_wc(wr_id, IBV_WC_SUCCESS, op, byte_len, false, 0, what);
}

/* No async event for the victim QP (a requester's errors complete its WQE). */
static int expect_no_event(const char *after)
{
	struct ibv_async_event ev;
	int n = 0;

	usleep(100 * 1000);
	while (!ibv_get_async_event(vic.ctx, &ev)) {
		vlog("  async event %s\n", ibv_event_type_str(ev.event_type));
		if (ev.element.qp == vic.qp && ev.event_type != IBV_EVENT_COMM_EST)
			n++;
		ibv_ack_async_event(&ev);
	}
	CHECK(!n, "after %s, %d async events for the victim QP", after, n);
	return 0;
}


/*
 * The requester failed: @wr_id completes with @st, the send work requests
 * @flush_from .. @flush_to - 1 posted behind it are flushed, the QP is in
 * the error state without an async event (the error is the completion's),
 * and a SEND posted now is flushed too.
 */
static int expect_req_failed(uint64_t wr_id, enum ibv_wc_status st, uint64_t flush_from,
			     uint64_t flush_to, const char *what)
{
	uint64_t i;

	TRY(expect_wc(wr_id, st, IBV_WC_SEND, 0, false, 0, what));
	for (i = flush_from; i < flush_to; i++)
		TRY(expect_wc(i, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false, 0,
			      "a send behind the failed one"));
	TRY(expect_state(IBV_QPS_ERR));
	TRY(expect_no_event(what));
	TRY(post_send_wr(99, IBV_WR_SEND, 0, 16, 0));
	return expect_wc(99, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, 0, false, 0,
			 "a SEND posted after the error");
}

/* The wait a timer code means: 4.096 us * 2^code, in ms. */
static double code_ms(unsigned int code)
{
	return 4.096e-3 * (double)(1u << code);
}

/*
 * The least gap a wait of @ms can show between two packets the peer
 * receives: the kernel's timers fire on a jiffy boundary (4 ms at HZ 250)
 * never before their time, but the first packet may reach the peer a
 * little late; 10% and 8 ms of slack.
 */
static long least_gap_ms(double ms)
{
	return (long)(ms * 0.9) - 8;
}

/*
 * Whether @r is @first again: the same bytes (the ICRC too over IPv6; over
 * IPv4 it covers the IP ID, which a UDP socket does not show).
 */
static bool same_request(const struct inreq *first, const struct inreq *r)
{
	size_t cmp = peer.family == AF_INET6 ? first->n : first->n - ICRC_LEN;

	return r->n == first->n && !memcmp(r->raw, first->raw, cmp);
}

/* The next request must be @first sent again. */
static int expect_copy(const struct inreq *first, const char *what)
{
	struct inreq r;

	TRY(expect_inreq(&r, first->op, first->psn, what));
	CHECK(same_request(first, &r),
	      "%s: the resent packet (%zu bytes) differs from the first (%zu bytes)", what, r.n,
	      first->n);
	return 0;
}

/*
 * The next request must be @first sent again, arriving no sooner than
 * @least_ms after @t0 (rt_ms() time).  Returns its arrival time in *@t1.
 */
static int expect_resend(const struct inreq *first, long t0, long least_ms, long *t1,
			 const char *what)
{
	TRY(expect_copy(first, what));
	*t1 = peer.rx_ms;
	CHECK(*t1 - t0 >= least_ms, "%s: resent after %ld ms, want at least %ld", what, *t1 - t0,
	      least_ms);
	fprintf(stderr, "  %s: resent after %ld ms (at least %ld)\n", what, *t1 - t0, least_ms);
	return 0;
}

/*
 * Copies of @first that were on their way when the peer answered (a timer
 * that fired before the answer landed), until the quiet time passes with
 * none: counted in *@copies.  Each must come no sooner than @least_ms
 * after the one before (the first after @t0); anything else fails.
 */
static int drain_copies(const struct inreq *first, long t0, long least_ms, unsigned int *copies,
			const char *what)
{
	struct inreq r;
	int k;

	while ((k = inreq_recv(&r, opt.quiet_ms)) > 0) {
		CHECK(same_request(first, &r), "%s: got %s, want nothing or the same request again",
		      what, inreq_str(&r));
		CHECK(peer.rx_ms - t0 >= least_ms,
		      "%s: a copy %ld ms after the one before, want at least %ld", what,
		      peer.rx_ms - t0, least_ms);
		fprintf(stderr, "  %s: one more copy, %ld ms after the one before\n", what,
			peer.rx_ms - t0);
		t0 = peer.rx_ms;
		(*copies)++;
	}
	return k;
}

/*
 * req_ack_coalesced - a SEND, a 3-packet WRITE and a 2-packet SEND, the
 * PSNs wrapping past 0xffffff; one ACK for the last PSN acknowledges them
 * all (an ACK covers every PSN up to its own): three
 * completions, in order, and nothing sent again.
 */
static int sc_req_ack_coalesced(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 3000, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 16384, 2048, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(true, psn_add(p, 1), 0, 4096, 3000, "WRITE 2"));
	TRY(expect_msg(false, psn_add(p, 4), 0, 16384, 2048, "SEND 3"));
	TRY(expect_no_wc("three messages not acknowledged"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 3));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "WRITE 2"));
	TRY(expect_swc(3, IBV_WC_SEND, 0, "SEND 3"));
	return expect_state(IBV_QPS_RTS);
}

#define MIN_ACK_TIMEOUT "/sys/module/sroce/parameters/min_ack_timeout"

static int param_read(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;

	if (f)
		fclose(f);
	CHECK(ok, "cannot read %s", path);
	return 0;
}

static int param_write(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	int ok = f && fprintf(f, "%d\n", v) > 0;

	if (f && fclose(f))
		ok = 0;
	CHECK(ok, "cannot write %d to %s: %s", v, path, strerror(errno));
	return 0;
}

/*
 * One SEND the peer leaves unanswered once: resent no sooner than @code
 * says.  A stall that delays the ACK past the next expiry brings more
 * copies, each no sooner than @code after the last: counted in *@copies
 * with the first resend.
 */
static int timeout_once(uint64_t wr_id, uint32_t psn, uint32_t off, unsigned int code,
			unsigned int *copies, const char *what)
{
	long least = least_gap_ms(code_ms(code)), t0, t1;
	struct inreq first;

	TRY(post_send_wr(wr_id, IBV_WR_SEND, off, 200, 0));
	TRY(expect_inreq(&first, OP_SEND_ONLY, psn, what));
	t0 = peer.rx_ms;
	CHECK(first.len == 200 && !memcmp(first.data, vic.buf + off, 200) && first.ackreq,
	      "%s: %s, want the 200 bytes at %u with AckReq", what, inreq_str(&first), off);
	TRY(expect_no_wc(what));
	TRY(expect_resend(&first, t0, least, &t1, what));
	(*copies)++;
	/* At once: the next timeout runs from the resend. */
	TRY(expect_no_wc_now(what));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn, (uint32_t)wr_id));
	TRY(expect_swc(wr_id, IBV_WC_SEND, 0, what));
	return drain_copies(&first, t1, least, copies, what);
}

static int req_ack_timeout(const struct vconf *c, int floor)
{
	struct ibv_qp_init_attr ia;
	unsigned int copies = 0;
	struct ibv_qp_attr a;

	TRY(timeout_once(1, c->sq_psn, 0, c->timeout, &copies, "a SEND left unanswered"));
	TRY(param_write(MIN_ACK_TIMEOUT, floor));
	TRY(timeout_once(2, psn_add(c->sq_psn, 1), 1024, (unsigned int)floor, &copies,
			 "a SEND left unanswered, min_ack_timeout above the QP's"));
	/* Each copy one timeout's. */
	snprintf(cnt_want, sizeof(cnt_want), "timeouts=%u retransmits=%u", copies, copies);
	errno = ibv_query_qp(vic.qp, &a, IBV_QP_TIMEOUT, &ia);
	CHECK(!errno, "ibv_query_qp: %s", strerror(errno));
	CHECK(a.timeout == c->timeout, "with min_ack_timeout %d the QP's timeout reads %u, want %u",
	      floor, a.timeout, c->timeout);
	return expect_state(IBV_QPS_RTS);
}

/*
 * req_ack_timeout - the peer takes a SEND and says nothing: the requester
 * sends the same packet again (same PSN, same bytes) once the local ACK
 * timeout (the QP's code 16: 268 ms) has run, not before; the
 * peer ACKs that and the SEND completes.  Then with the module parameter
 * min_ack_timeout (a floor under the code) at 18 (1.07 s), above the QP's
 * 16, the next SEND is resent no sooner than the floor says, while the
 * QP's own attribute still reads 16.  The parameter gets its old value
 * back, pass or fail.  Should a stalled guest let the timer fire again
 * before the peer's ACK lands, the extra copies must keep the same gap;
 * the counters must show one timeout and one retransmit per copy.
 */
static int sc_req_ack_timeout(const struct vconf *c)
{
	int old, rc;

	TRY(param_read(MIN_ACK_TIMEOUT, &old));
	CHECK(old < c->timeout, "min_ack_timeout is %d, not below the QP's %u: cannot test", old,
	      c->timeout);
	rc = req_ack_timeout(c, 18);
	if (param_write(MIN_ACK_TIMEOUT, old))
		rc = -1;
	return rc;
}

/*
 * req_retry_exceeded - the peer never answers two SENDs: with retry_cnt 2
 * the requester sends them 3 times in all (each time from the first), then
 * the first completes with "transport retry counter exceeded", the second
 * is flushed, the QP is in the error state; three
 * local ACK timeouts, two go-backs.
 */
static int sc_req_retry_exceeded(const struct vconf *c)
{
	uint32_t p = c->sq_psn, i;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 64, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 64, 0));
	for (i = 0; i <= c->retry_cnt; i++) {
		TRY(expect_msg(false, p, 0, 0, 64, i ? "SEND 1 resent" : "SEND 1"));
		TRY(expect_msg(false, psn_add(p, 1), 0, 1024, 64, i ? "SEND 2 resent" : "SEND 2"));
	}
	return expect_req_failed(1, IBV_WC_RETRY_EXC_ERR, 2, 3, "retries exhausted");
}

/*
 * req_nak_psn_seq - a SEND, a 4-packet WRITE and a SEND; the peer NAKs
 * "PSN sequence error" the WRITE's third packet: the NAK acknowledges what
 * came before it, so the first SEND completes, and the
 * requester resends from exactly that PSN: the WRITE's Middle and Last
 * (same bytes), then the second SEND.  One ACK then completes the rest.
 */
static int sc_req_nak_psn_seq(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 4 * PMTU, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 16384, 50, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(true, psn_add(p, 1), 0, 4096, 4 * PMTU, "WRITE 2"));
	TRY(expect_msg(false, psn_add(p, 5), 0, 16384, 50, "SEND 3"));
	TRY(peer_ack(NAK_PSN_SEQ, psn_add(p, 3), 1));
	TRY(expect_msg(true, psn_add(p, 1), 2, 4096, 4 * PMTU, "WRITE 2 resent from its third"));
	TRY(expect_msg(false, psn_add(p, 5), 0, 16384, 50, "SEND 3 resent"));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1, acknowledged by the NAK"));
	TRY(expect_no_wc("the resend"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 3));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "WRITE 2"));
	TRY(expect_swc(3, IBV_WC_SEND, 0, "SEND 3"));
	return expect_state(IBV_QPS_RTS);
}

#define RNR_CODE 26	/* 81.92 ms */

/* RNR NAK @psn; the same packet must come back no sooner than the code says. */
static int rnr_once(const struct inreq *first, const char *what)
{
	long t0, t1;

	t0 = rt_ms();
	TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, first->psn, 0));
	return expect_resend(first, t0, least_gap_ms(81.92), &t1, what);
}

/*
 * req_rnr_nak - RNR NAKs with timer code 26 (81.92 ms, table 45): the
 * requester waits that long, then sends the SEND again; with
 * rnr_retry 2 the SEND succeeds after two RNR NAKs (an ACK); the next
 * SEND gets three, and its third fails it with "RNR retry counter
 * exceeded" (the count starts over on progress), the QP in the error state.
 */
static int sc_req_rnr_nak(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	struct inreq r;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 128, 0));
	TRY(expect_inreq(&r, OP_SEND_ONLY, p, "SEND 1"));
	TRY(rnr_once(&r, "SEND 1 after an RNR NAK"));
	TRY(rnr_once(&r, "SEND 1 after a second RNR NAK"));
	TRY(expect_no_wc("two RNR NAKs"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 128, 0));
	TRY(expect_inreq(&r, OP_SEND_ONLY, psn_add(p, 1), "SEND 2"));
	TRY(rnr_once(&r, "SEND 2 after an RNR NAK"));
	TRY(rnr_once(&r, "SEND 2 after a second RNR NAK"));
	TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, psn_add(p, 1), 1));
	return expect_req_failed(2, IBV_WC_RNR_RETRY_EXC_ERR, 0, 0, "a third RNR NAK");
}

/*
 * req_rnr_late - a receiver not ready behind a round trip longer than the
 * local ACK timeout (code 18, 1.07 s; retry_cnt 3, rnr_retry 7): the peer
 * answers a SEND only after the timer has resent it, and then with an RNR
 * NAK.  Each RNR NAK shows the responder alive, so the transport retries
 * start over: the SEND goes through twice retry_cnt timeouts and still
 * completes when the peer ACKs.  A requester that kept the retries spent
 * fails it with "transport retry counter exceeded" at timeout retry_cnt + 1
 * (the peer then waits in vain for the next copy).
 *
 * Which copy a timeout sent, the device's timeouts counter tells (it moves
 * before the copy leaves), so the peer needs no clock: it NAKs the first
 * copy after each new timeout.  A stalled guest may let the timer fire
 * again before a NAK lands; that spends a retry of three, not the SEND, and
 * the counters the scenario checks come from what the peer saw: every copy
 * received is a retransmit, and the RNR NAKs received are the peer's.
 */
static int sc_req_rnr_late(const struct vconf *c)
{
	long long base, naked, now;
	unsigned int naks = 0, copies = 0;
	uint32_t p = c->sq_psn;
	struct inreq first;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 128, 0));
	TRY(expect_inreq(&first, OP_SEND_ONLY, p, "SEND 1"));
	TRY(cnt_get("timeouts", &base));
	naked = base;
	for (;;) {
		TRY(expect_copy(&first, "SEND 1 after a timeout or an RNR NAK"));
		copies++;
		TRY(cnt_get("timeouts", &now));
		if (now - base >= 2 * c->retry_cnt)
			break;
		if (now > naked) {
			TRY(peer_ack(AETH_TYPE_RNR | RNR_CODE, p, 0));
			naks++;
			naked = now;
		}
	}
	fprintf(stderr, "  %lld timeouts, %u RNR NAKs, %u copies\n", now - base, naks, copies);
	TRY(expect_no_wc_now("late RNR NAKs"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1 after late RNR NAKs"));
	TRY(drain_copies(&first, peer.rx_ms, 0, &copies, "the ACK"));
	/*
	 * Each NAK and each timeout sends one copy, but a timer that fires
	 * while a NAK is on its way may share the NAK's copy.
	 */
	TRY(cnt_get("timeouts", &now));
	CHECK(now - base + naks >= copies && now - base <= copies,
	      "%lld timeouts, %u RNR NAKs and %u copies do not add up", now - base, naks, copies);
	snprintf(cnt_want, sizeof(cnt_want), "rnr_naks_rcvd=%u timeouts=%lld retransmits=%u", naks,
		 now - base, copies);
	return expect_state(IBV_QPS_RTS);
}

/*
 * A SEND, then a SEND or WRITE NAKed with @syn (a remote error NAK),
 * then a SEND: the first completes (the NAK acknowledges it),
 * the second with @st, the third is flushed; the QP in the error state.
 */
static int req_nak_fatal(const struct vconf *c, bool write, uint8_t syn, enum ibv_wc_status st)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 64, 0));
	TRY(post_send_wr(2, write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, 1024, 64, 0));
	TRY(post_send_wr(3, IBV_WR_SEND, 2048, 64, 0));
	TRY(expect_msg(false, p, 0, 0, 64, "SEND 1"));
	TRY(expect_msg(write, psn_add(p, 1), 0, 1024, 64, "the request NAKed"));
	TRY(expect_msg(false, psn_add(p, 2), 0, 2048, 64, "SEND 3"));
	TRY(peer_ack(syn, psn_add(p, 1), 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1, acknowledged by the NAK"));
	return expect_req_failed(2, st, 3, 4, "the NAK");
}

/* req_nak_remote_access - a WRITE NAKed "remote access error": IBV_WC_REM_ACCESS_ERR. */
static int sc_req_nak_remote_access(const struct vconf *c)
{
	return req_nak_fatal(c, true, NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR);
}

/* req_nak_invalid_request - a SEND NAKed "invalid request": IBV_WC_REM_INV_REQ_ERR. */
static int sc_req_nak_invalid_request(const struct vconf *c)
{
	return req_nak_fatal(c, false, NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR);
}

/* req_nak_remote_op - a SEND NAKed "remote operational error": IBV_WC_REM_OP_ERR. */
static int sc_req_nak_remote_op(const struct vconf *c)
{
	return req_nak_fatal(c, false, NAK_REM_OP, IBV_WC_REM_OP_ERR);
}

/*
 * req_ack_unsent_psn - two SENDs outstanding (PSNs p, p+1).  ACKs for
 * PSNs the requester never sent (p+5, and p+2, the next it would send)
 * and one for p-1, before anything it has outstanding, are dropped
 * (a response outside the window of outstanding PSNs is ignored):
 * no completion, no resend, counted (rx_drop_resp, rx_dup_resp).  The ACK
 * for p completes the first SEND only, a repeat of it is a duplicate, and
 * the ACK for p+1 completes the second.
 */
static int sc_req_ack_unsent_psn(const struct vconf *c)
{
	uint32_t p = c->sq_psn;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 1024, 100, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(false, psn_add(p, 1), 0, 1024, 100, "SEND 2"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 5), 2));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 2), 2));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 0xffffff), 0));
	TRY(expect_quiet_ms("ACKs for PSNs never sent or long acknowledged", 300));
	TRY(expect_no_wc("ACKs for PSNs never sent or long acknowledged"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_no_wc("the ACK of SEND 1"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, p, 1));
	TRY(expect_no_wc("the ACK of SEND 1 again"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2));
	TRY(expect_swc(2, IBV_WC_SEND, 0, "SEND 2"));
	return expect_state(IBV_QPS_RTS);
}

/* The READ's @len bytes landed at RD_OFF + @off, from rdata + @roff, and no more. */
static int check_read_landed(uint32_t off, uint32_t roff, uint32_t len, uint8_t after,
			     const char *what)
{
	CHECK(!memcmp(vic.buf + RD_OFF + off, rdata + roff, len), "%s: the READ's bytes differ",
	      what);
	CHECK(vic.buf[RD_OFF + off + len] == after, "%s: the byte after the READ changed", what);
	return 0;
}

/* Answer a READ at @psn of @len bytes from rdata + @roff, packets @from .. in order. */
static int peer_read_rsps(uint32_t psn, uint32_t from, uint32_t roff, uint32_t len,
			  uint32_t msn)
{
	uint32_t n = (len + PMTU - 1) / PMTU, i, l;

	for (i = from; i < n; i++) {
		l = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		TRY(peer_read_rsp(read_op(i, n), psn_add(psn, i), roff + i * PMTU, l, msn));
	}
	return 0;
}

/*
 * req_read_response - READs answered four ways (the victim's timeout code
 * 16, 268 ms):
 * A. 4 KiB answered First, Middle, Middle, Last: the bytes land, one
 *    completion (RDMA_READ, byte_len 4096).
 * B. 4 KiB whose first Middle is missing (First, then the second Middle):
 *    the requester drops the Middle beyond the gap (rx_drop_gap) and
 *    asks again from the missing PSN at once (a gap in READ responses
 *    means the missing ones were lost), its RETH moved on: VA + 1024,
 *    3072 bytes; answered Middle, Middle, Last from there.
 * C. 3000 bytes whose Last carries 900 bytes, not 952: sroce drops it
 *    (rx_drop_resp; a response whose length does not fit its READ is not
 *    one it can place), and asks again from that PSN when the ACK timer
 *    runs out: VA + 2048, 952 bytes; answered with a right Last.
 * D. 100 bytes answered with an Only of 120: dropped too, nothing written
 *    past the 100 bytes; asked again and answered right.
 */
static int sc_req_read_response(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	uint8_t after[4];
	long t0;

	after[0] = vic.buf[RD_OFF + 4096];
	after[1] = vic.buf[RD_OFF + 8192 + 4096];
	after[2] = vic.buf[RD_OFF + 16384 + 3000];
	after[3] = vic.buf[RD_OFF + 24576 + 100];
	/* A */
	TRY(post_send_wr(1, IBV_WR_RDMA_READ, RD_OFF, 4096, 0));
	TRY(expect_read_req(p, 0, 4096, "READ A"));
	TRY(peer_read_rsps(p, 0, 0, 4096, 1));
	TRY(expect_swc(1, IBV_WC_RDMA_READ, 4096, "READ A"));
	TRY(check_read_landed(0, 0, 4096, after[0], "READ A"));
	/* B */
	p = psn_add(p, 4);
	TRY(post_send_wr(2, IBV_WR_RDMA_READ, RD_OFF + 8192, 4096, 1024));
	TRY(expect_read_req(p, 1024, 4096, "READ B"));
	TRY(peer_read_rsp(OP_READ_RESP_FIRST, p, 1024, PMTU, 2));
	TRY(peer_read_rsp(OP_READ_RESP_MIDDLE, psn_add(p, 2), 1024 + 2 * PMTU, PMTU, 2));
	TRY(expect_read_req(psn_add(p, 1), 1024 + PMTU, 3 * PMTU,
			    "READ B asked again from its missing Middle"));
	TRY(expect_no_wc("READ B's gap"));
	TRY(peer_read_rsps(p, 1, 1024, 4096, 2));
	TRY(expect_swc(2, IBV_WC_RDMA_READ, 4096, "READ B"));
	TRY(check_read_landed(8192, 1024, 4096, after[1], "READ B"));
	/* C */
	p = psn_add(p, 4);
	TRY(post_send_wr(3, IBV_WR_RDMA_READ, RD_OFF + 16384, 3000, 0));
	TRY(expect_read_req(p, 0, 3000, "READ C"));
	TRY(peer_read_rsp(OP_READ_RESP_FIRST, p, 0, PMTU, 3));
	TRY(peer_read_rsp(OP_READ_RESP_MIDDLE, psn_add(p, 1), PMTU, PMTU, 3));
	t0 = rt_ms();
	TRY(peer_read_rsp(OP_READ_RESP_LAST, psn_add(p, 2), 2 * PMTU, 900, 3));
	TRY(expect_read_req(psn_add(p, 2), 2 * PMTU, 3000 - 2 * PMTU,
			    "READ C asked again after a short Last"));
	fprintf(stderr, "  READ C asked again %ld ms after its short Last (timeout %.0f ms)\n",
		peer.rx_ms - t0, code_ms(c->timeout));
	TRY(expect_no_wc("READ C's short Last"));
	TRY(peer_read_rsp(OP_READ_RESP_LAST, psn_add(p, 2), 2 * PMTU, 3000 - 2 * PMTU, 3));
	TRY(expect_swc(3, IBV_WC_RDMA_READ, 3000, "READ C"));
	TRY(check_read_landed(16384, 0, 3000, after[2], "READ C"));
	/* D */
	p = psn_add(p, 3);
	TRY(post_send_wr(4, IBV_WR_RDMA_READ, RD_OFF + 24576, 100, 512));
	TRY(expect_read_req(p, 512, 100, "READ D"));
	TRY(peer_read_rsp(OP_READ_RESP_ONLY, p, 512, 120, 4));
	TRY(expect_read_req(p, 512, 100, "READ D asked again after a long Only"));
	TRY(expect_no_wc("READ D's long Only"));
	CHECK(vic.buf[RD_OFF + 24576 + 100] == after[3], "READ D's long Only wrote past its end");
	TRY(peer_read_rsp(OP_READ_RESP_ONLY, p, 512, 100, 4));
	TRY(expect_swc(4, IBV_WC_RDMA_READ, 100, "READ D"));
	TRY(check_read_landed(24576, 512, 100, after[3], "READ D"));
	return expect_state(IBV_QPS_RTS);
}

/* The 8 bytes at ATOMIC_OFF (an atomic's result) are @want. */
static int check_atomic_result(uint64_t want, const char *what)
{
	uint64_t v;

	memcpy(&v, vic.buf + ATOMIC_OFF, sizeof(v));
	CHECK(v == want, "%s: result 0x%llx, want 0x%llx", what, (unsigned long long)v,
	      (unsigned long long)want);
	return 0;
}

/*
 * req_atomic_response - a CmpSwap's operands go out in its AtomicETH (swap
 * first, then compare); the atomic ACK's original value lands in the
 * victim's buffer (in host order) and completes it (COMP_SWAP, byte_len
 * 8).  A FetchAdd answered with a plain ACK for its PSN, not an atomic
 * ACK: the ACK carries no original value, so the atomic's response was
 * lost (an implicit NAK) and sroce sends the FetchAdd again,
 * unchanged, completing it on the atomic ACK that answers the resend.
 */
static int sc_req_atomic_response(const struct vconf *c)
{
	const uint64_t cmp = 0x0102030405060708ull, swp = 0x1112131415161718ull,
		       add = 0x0000000100000003ull, o1 = 0x2122232425262728ull,
		       o2 = 0x3132333435363738ull;
	uint32_t p = c->sq_psn;
	struct inreq r;

	memset(vic.buf + ATOMIC_OFF, 0xa5, 8);
	TRY(post_atomic_wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, cmp, swp));
	TRY(expect_atomic_req(OP_CMP_SWAP, p, swp, cmp, "CmpSwap"));
	TRY(expect_no_wc("a CmpSwap not answered"));
	TRY(peer_atomic_ack(p, o1, 1));
	TRY(expect_swc(1, IBV_WC_COMP_SWAP, 8, "CmpSwap"));
	TRY(check_atomic_result(o1, "CmpSwap"));
	TRY(post_atomic_wr(2, IBV_WR_ATOMIC_FETCH_AND_ADD, add, 0));
	TRY(expect_atomic_req(OP_FETCH_ADD, psn_add(p, 1), add, 0, "FetchAdd"));
	TRY(peer_ack(AETH_ACK_UNLIMITED, psn_add(p, 1), 2));
	TRY(expect_inreq(&r, OP_FETCH_ADD, psn_add(p, 1), "FetchAdd after a plain ACK"));
	CHECK(r.swap_add == add && r.compare == 0 && r.va == REMOTE_VA,
	      "the FetchAdd resent with other operands");
	TRY(expect_no_wc("a FetchAdd answered with a plain ACK"));
	TRY(check_atomic_result(o1, "a FetchAdd answered with a plain ACK"));
	TRY(peer_atomic_ack(psn_add(p, 1), o2, 2));
	TRY(expect_swc(2, IBV_WC_FETCH_ADD, 8, "FetchAdd"));
	TRY(check_atomic_result(o2, "FetchAdd"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * req_implicit_ack_by_read_response - two SENDs (one packet, two packets)
 * and a 2 KiB READ; the peer answers only the READ (First, Last): a READ
 * response acknowledges every request before it (an implicit ACK), so
 * the SENDs complete, in order, and then the READ.
 */
static int sc_req_implicit_ack_by_read_response(const struct vconf *c)
{
	uint32_t p = c->sq_psn;
	uint8_t after = vic.buf[RD_OFF + 2048];

	TRY(post_send_wr(1, IBV_WR_SEND, 0, 100, 0));
	TRY(post_send_wr(2, IBV_WR_SEND, 2048, 1500, 0));
	TRY(post_send_wr(3, IBV_WR_RDMA_READ, RD_OFF, 2048, 0));
	TRY(expect_msg(false, p, 0, 0, 100, "SEND 1"));
	TRY(expect_msg(false, psn_add(p, 1), 0, 2048, 1500, "SEND 2"));
	TRY(expect_read_req(psn_add(p, 3), 0, 2048, "READ 3"));
	TRY(expect_no_wc("nothing answered"));
	TRY(peer_read_rsps(psn_add(p, 3), 0, 0, 2048, 3));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "SEND 1"));
	TRY(expect_swc(2, IBV_WC_SEND, 0, "SEND 2"));
	TRY(expect_swc(3, IBV_WC_RDMA_READ, 2048, "READ 3"));
	TRY(check_read_landed(0, 0, 2048, after, "READ 3"));
	return expect_state(IBV_QPS_RTS);
}

/* --- UC: the victim a UC QP ------------------------------------------------- */

/*
 * On UC nothing goes back: no ACK, no NAK, whatever comes (every request
 * the peer sends asks for an ACK, and every scenario ends by checking that
 * the peer received nothing).  A lost packet loses its message and nothing
 * else: the responder drops the rest of the message (rx_drop_uc) and starts
 * over at the next First or Only, whatever its PSN (IBTA's UC rules, as
 * rdma_rxe and hardware follow them).  Errors that fail an RC QP (bad
 * keys, a message too long) drop the message on UC and leave the QP in RTS.
 */

/*
 * Send a UC SEND of @len bytes of @data (or, with @write, an RDMA WRITE of
 * them to the victim's buffer at @off, R_Key @rkey) from PSN @psn, one
 * packet per PMTU, except those whose bit is set in @lost.
 */
static int uc_msg(bool write, uint32_t psn, const uint8_t *data, uint32_t len, uint32_t off,
		  uint32_t rkey, unsigned int lost)
{
	uint32_t n = len ? (len + PMTU - 1) / PMTU : 1, i, plen;
	struct req r;

	for (i = 0; i < n; i++) {
		plen = len - i * PMTU < PMTU ? len - i * PMTU : PMTU;
		r = rq_send(msg_op(write, i, n), psn_add(psn, i), data + i * PMTU, plen);
		if (write && !i) {
			r.va = va_of(off);
			r.rkey = rkey;
			r.dmalen = len;
		}
		if (!(lost & (1u << i)))
			TRY(req_send(&r));
	}
	return 0;
}

/* The victim's buffer at @off comes to hold @len bytes of @data (a WRITE). */
static int wait_landed(uint32_t off, const uint8_t *data, uint32_t len, const char *what)
{
	long end = now_ms() + opt.timeout_ms;

	while (memcmp(vic.buf + off, data, len)) {
		CHECK(now_ms() < end, "%s: not in memory within %d ms", what, opt.timeout_ms);
		usleep(1000);
	}
	return 0;
}

/* The victim's buffer at @off still holds what @keep saved of it. */
static int unchanged(uint32_t off, const uint8_t *keep, uint32_t len, const char *what)
{
	CHECK(!memcmp(vic.buf + off, keep, len), "%s: the victim's memory changed", what);
	return 0;
}

/*
 * uc_lost_middle - a three-packet SEND loses its Middle: its Last is
 * dropped, nothing completes; the next SEND (an Only) takes the receive the
 * broken one had begun, and a whole three-packet SEND after it arrives
 * whole.  The PSNs wrap from 0xffffff to 0.
 */
static int sc_uc_lost_middle(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300;
	const uint8_t *data = (const uint8_t *)msg;	/* 2348 of its bytes */

	TRY(uc_msg(false, p, data, len, 0, 0, 1u << 1));
	TRY(expect_no_wc("a SEND whose Middle was lost"));
	TRY(uc_msg(false, psn_add(p, 3), msg[3], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "the SEND after"));
	TRY(check_recv(0, msg[3], 100, "the SEND after the broken one"));
	TRY(uc_msg(false, psn_add(p, 4), data, len, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "a whole SEND"));
	TRY(check_recv(1, data, len, "a whole three-packet SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_interrupted - messages cut short by the loss of their tails (no
 * packet sroce gets is dropped, so no counter moves): a SEND's Middle and
 * Last lost, the next SEND (its PSN three ahead) lands in the receive the
 * lost one had begun; a WRITE's Middle and Last lost, its First's bytes may
 * stay but no byte past them is written, and the SEND after it is whole.
 * Last, a First and, at the very next PSN, an Only (no requester sends
 * that, the opcodes are out of sequence): the Only is a new message.
 */
static int sc_uc_interrupted(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300, woff = 64 * 1024;
	const uint8_t *data = (const uint8_t *)msg;
	uint8_t keep[2 * PMTU];

	TRY(uc_msg(false, p, data, len, 0, 0, 6));
	TRY(uc_msg(false, psn_add(p, 3), msg[3], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND after a cut one"));
	TRY(check_recv(0, msg[3], 100, "a SEND after a cut SEND"));
	memcpy(keep, vic.buf + woff + PMTU, sizeof(keep));
	TRY(uc_msg(true, psn_add(p, 4), data, len, woff, vic.mr->rkey, 6));
	TRY(uc_msg(false, psn_add(p, 7), data, len, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, len, false, 0, "a SEND after a cut WRITE"));
	TRY(check_recv(1, data, len, "a SEND after a cut WRITE"));
	TRY(unchanged(woff + PMTU, keep, sizeof(keep), "the lost packets of a WRITE"));
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 10), data, len, 0, 0, 6));
	TRY(uc_msg(false, psn_add(p, 11), msg[2], 200, 0, 0, 0));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 200, false, 0, "an Only after a First"));
	TRY(check_recv(2, msg[2], 200, "an Only right after a First"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_lost_first - a three-packet RDMA WRITE loses its First (and with it
 * the RETH): its Middle and Last are dropped, memory untouched.  One that
 * loses its Middle: the First's bytes land, the Last is dropped.  Each time
 * a one-packet WRITE elsewhere, waited for, shows sroce has taken what came
 * before.  Sent whole, the WRITE lands whole.
 */
static int sc_uc_lost_first(const struct vconf *c)
{
	uint32_t p = c->epsn, len = 2 * PMTU + 300, off = 8192, off2 = 16384;
	const uint8_t *data = (const uint8_t *)msg;
	uint32_t rkey = vic.mr->rkey;
	uint8_t keep[3 * PMTU];

	memcpy(keep, vic.buf + off, sizeof(keep));
	TRY(uc_msg(true, p, data, len, off, rkey, 1u << 0));
	TRY(uc_msg(true, psn_add(p, 3), msg[3], 64, off2, rkey, 0));
	TRY(wait_landed(off2, msg[3], 64, "a WRITE after one that lost its First"));
	TRY(unchanged(off, keep, sizeof(keep), "a WRITE that lost its First"));
	TRY(uc_msg(true, psn_add(p, 4), data, len, off, rkey, 1u << 1));
	TRY(uc_msg(true, psn_add(p, 7), msg[2], 64, off2, rkey, 0));
	TRY(wait_landed(off2, msg[2], 64, "a WRITE after one that lost its Middle"));
	TRY(unchanged(off + PMTU, keep + PMTU, len - PMTU, "a WRITE that lost its Middle"));
	TRY(uc_msg(true, psn_add(p, 8), data, len, off, rkey, 0));
	TRY(wait_landed(off, data, len, "a whole three-packet WRITE"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_no_recv - messages that need a receive WQE when none is posted: a
 * SEND, a WRITE with immediate (not written either) and a two-packet SEND
 * (its First dropped for want of a receive, its Last as the rest of a
 * broken message) are dropped, no RNR NAK, the QP stays in RTS with no
 * async event.  Once receives are posted, the next SEND and WRITE with
 * immediate complete.
 */
static int sc_uc_no_recv(const struct vconf *c)
{
	uint32_t p = c->epsn, off = 4096, off2 = 8192, imm = htonl(0x5eed0001);
	const uint8_t *data = (const uint8_t *)msg;
	long long uc0, norecv0;
	uint8_t keep[16];
	struct req r;

	memcpy(keep, vic.buf + off, sizeof(keep));
	TRY(cnt_get("rx_drop_uc", &uc0));
	TRY(cnt_get("rx_drop_no_recv", &norecv0));
	TRY(uc_msg(false, p, msg[0], 128, 0, 0, 0));
	r = rq_rdma(UC(OP_WRITE_ONLY_IMM), psn_add(p, 1), va_of(off), vic.mr->rkey, 16);
	r.data = msg[1];
	r.len = 16;
	r.imm = imm;
	TRY(req_send(&r));
	TRY(uc_msg(false, psn_add(p, 2), data, PMTU + 200, 0, 0, 0));
	/* Dropped, all of them, before a receive is posted. */
	TRY(cnt_wait("rx_drop_no_recv", norecv0 + 3, "three messages with no receive posted"));
	TRY(cnt_wait("rx_drop_uc", uc0 + 1, "the Last of a SEND with no receive posted"));
	TRY(expect_no_wc("three messages with no receive posted"));
	TRY(expect_no_event("three messages with no receive posted"));
	TRY(expect_state(IBV_QPS_RTS));
	TRY(post_recv(recv_len));
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 4), msg[0], 128, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 128, false, 0, "a SEND, receives posted"));
	TRY(check_recv(0, msg[0], 128, "a SEND once receives are posted"));
	r.psn = psn_add(p, 5);
	r.va = va_of(off2);
	TRY(req_send(&r));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 16, true, imm,
		      "a WRITE with immediate, receives posted"));
	CHECK(!memcmp(vic.buf + off2, msg[1], 16), "the WRITE with immediate did not land");
	return unchanged(off, keep, sizeof(keep), "a WRITE with immediate and no receive");
}

/*
 * uc_bad_access - WRITEs a UC responder must refuse: an R_Key nobody has
 * (as an Only, and as a First whose Last follows), an MR without remote
 * write, a range running past its MR's end.  Each message is dropped,
 * memory untouched, no completion, no async event, the QP stays in RTS;
 * the SEND and the WRITE after them are taken.
 */
static int sc_uc_bad_access(const struct vconf *c)
{
	uint32_t p = c->epsn, rkey = vic.mr->rkey, bad = vic.mr->rkey ^ 0x80;
	uint8_t keep[2 * PMTU], rokeep[64], endkeep[32];
	struct req r;

	memcpy(keep, vic.buf, sizeof(keep));
	memcpy(endkeep, vic.buf + MR_SIZE - 32, sizeof(endkeep));
	memcpy(rokeep, vic.robuf, sizeof(rokeep));
	TRY(uc_msg(true, p, msg[1], 64, 0, bad, 0));
	TRY(uc_msg(true, psn_add(p, 1), msg[1], PMTU + 200, 0, bad, 0));
	r = rq_rdma(UC(OP_WRITE_ONLY), psn_add(p, 3), (uintptr_t)vic.robuf, vic.ro->rkey, 64);
	r.data = msg[1];
	r.len = 64;
	TRY(req_send(&r));
	TRY(uc_msg(true, psn_add(p, 4), msg[1], 64, MR_SIZE - 32, rkey, 0));
	TRY(uc_msg(false, psn_add(p, 5), msg[2], 100, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 100, false, 0, "a SEND after bad WRITEs"));
	TRY(unchanged(0, keep, sizeof(keep), "WRITEs with an R_Key nobody has"));
	CHECK(!memcmp(vic.robuf, rokeep, sizeof(rokeep)), "a WRITE to a read-only MR landed");
	TRY(unchanged(MR_SIZE - 32, endkeep, sizeof(endkeep), "a WRITE past the MR's end"));
	TRY(uc_msg(true, psn_add(p, 6), msg[1], 64, 0, rkey, 0));
	TRY(wait_landed(0, msg[1], 64, "a WRITE after bad WRITEs"));
	TRY(expect_no_event("WRITEs with bad keys"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_send_too_long - a SEND longer than its 64-byte receive: the receive
 * completes with a local length error (so the application learns a message
 * was lost; rdma_rxe drops it silently and keeps the receive), nothing is
 * written past the 64 bytes, the rest of the message is dropped, the QP
 * stays in RTS with no async event.  Once as an Only, once as a
 * three-packet SEND; a SEND that fits then completes.
 */
static int sc_uc_send_too_long(const struct vconf *c)
{
	uint32_t p = c->epsn, i;
	const uint8_t *data = (const uint8_t *)msg;

	TRY(uc_msg(false, p, msg[0], 200, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "a SEND Only too long"));
	TRY(uc_msg(false, psn_add(p, 1), data, 2 * PMTU + 300, 0, 0, 0));
	TRY(expect_wc(1, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, false, 0, "a long SEND too long"));
	for (i = 0; i < 2 * RECV_SLOT; i++)
		CHECK(!vic.rbuf[i], "a SEND too long wrote byte %u of the receive buffers", i);
	TRY(post_recv(recv_len));
	TRY(uc_msg(false, psn_add(p, 4), msg[2], 50, 0, 0, 0));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 50, false, 0, "a SEND that fits"));
	TRY(check_recv(2, msg[2], 50, "a SEND that fits"));
	TRY(expect_no_event("SENDs too long"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_dup_only - UC has no duplicate detection: an Only is a new message
 * whatever its PSN, so a SEND Only the wire duplicated is delivered twice
 * (as rdma_rxe delivers it); the next SEND takes the third receive.
 */
static int sc_uc_dup_only(const struct vconf *c)
{
	uint32_t p = c->epsn;

	TRY(uc_msg(false, p, msg[0], 80, 0, 0, 0));
	TRY(uc_msg(false, p, msg[0], 80, 0, 0, 0));
	TRY(uc_msg(false, psn_add(p, 1), msg[1], 90, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 80, false, 0, "a SEND Only"));
	TRY(expect_wc(1, IBV_WC_SUCCESS, IBV_WC_RECV, 80, false, 0, "the same SEND Only again"));
	TRY(expect_wc(2, IBV_WC_SUCCESS, IBV_WC_RECV, 90, false, 0, "the next SEND"));
	TRY(check_recv(0, msg[0], 80, "a SEND Only"));
	TRY(check_recv(1, msg[0], 80, "the same SEND Only again"));
	TRY(check_recv(2, msg[1], 90, "the next SEND"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_foreign_opcodes - packets for the UC QP with opcodes it cannot take:
 * an RC SEND and a UD SEND (another transport: rx_drop_qp_type), a READ
 * and a CmpSwap in UC's opcode space (no such UC opcodes: rx_drop_opcode).
 * None of them moves the expected PSN: a UC SEND with the same PSN is
 * taken.
 */
static int sc_uc_foreign_opcodes(const struct vconf *c)
{
	static const uint8_t ops[] = { OP_SEND_ONLY, 0x64 /* UD SEND Only */, UC(OP_READ_REQ),
				       UC(OP_CMP_SWAP) };
	uint32_t p = c->epsn, i;
	struct req r;

	for (i = 0; i < sizeof(ops); i++) {
		r = rq_send(ops[i], p, msg[0], 64);
		TRY(req_send(&r));
	}
	TRY(uc_msg(false, p, msg[1], 64, 0, 0, 0));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 64, false, 0, "a UC SEND after others"));
	TRY(check_recv(0, msg[1], 64, "a UC SEND after foreign opcodes"));
	return expect_state(IBV_QPS_RTS);
}

/*
 * uc_req_messages - the victim as a UC requester: a three-packet SEND, a
 * one-packet and a three-packet RDMA WRITE go out with UC opcodes, PSNs in
 * sequence (wrapping), the right bytes and RETHs, AckReq never set, and
 * complete with no ACK from the peer; nothing is ever sent again.  READs
 * and atomics cannot be posted on UC.
 */
static int sc_uc_req_messages(const struct vconf *c)
{
	uint32_t p = c->sq_psn, len = 2 * PMTU + 300;
	static const enum ibv_wr_opcode no[] = { IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)vic.buf, .length = 8, .lkey = vic.mr->lkey };
	unsigned int i;

	TRY(post_send_wr(1, IBV_WR_SEND, 0, len, 0));
	TRY(post_send_wr(2, IBV_WR_RDMA_WRITE, 4096, 100, 0));
	TRY(post_send_wr(3, IBV_WR_RDMA_WRITE, 8192, len, 0));
	TRY(expect_msg(false, p, 0, 0, len, "a UC SEND"));
	TRY(expect_msg(true, psn_add(p, 3), 0, 4096, 100, "a UC WRITE"));
	TRY(expect_msg(true, psn_add(p, 4), 0, 8192, len, "a three-packet UC WRITE"));
	TRY(expect_swc(1, IBV_WC_SEND, 0, "a UC SEND"));
	TRY(expect_swc(2, IBV_WC_RDMA_WRITE, 0, "a UC WRITE"));
	TRY(expect_swc(3, IBV_WC_RDMA_WRITE, 0, "a three-packet UC WRITE"));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		wr.wr_id = 10 + i;
		wr.opcode = no[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = REMOTE_VA;
		wr.wr.rdma.rkey = REMOTE_RKEY;
		wr.wr.atomic.remote_addr = REMOTE_VA;
		wr.wr.atomic.rkey = REMOTE_RKEY;
		CHECK(ibv_post_send(vic.qp, &wr, &bad), "ibv_post_send of opcode %d on UC succeeded",
		      no[i]);
	}
	return expect_state(IBV_QPS_RTS);
}

/*
 * cnp - a congestion notification packet for the victim QP (BTH opcode
 * 0x81, 16 reserved bytes): counted in rp_cnp_ignored, as sroce has no
 * congestion control to act on it yet; one cut short (8 bytes) is
 * rx_drop_short.  Neither is answered nor moves the QP: a SEND is taken.
 */
static int sc_cnp(const struct vconf *c)
{
	static const uint8_t zero[16];
	struct req r = rq_send(OP_CNP, 0, zero, sizeof(zero));

	r.ackreq = false;
	TRY(req_send(&r));
	r.len = 8;
	TRY(req_send(&r));
	r = rq_send(OP_SEND_ONLY, c->epsn, msg[0], 32);
	TRY(req_send(&r));
	TRY(expect_ack(AETH_ACK_UNLIMITED, c->epsn, 1, "a SEND after CNPs"));
	TRY(expect_wc(0, IBV_WC_SUCCESS, IBV_WC_RECV, 32, false, 0, "a SEND after CNPs"));
	return expect_state(IBV_QPS_RTS);
}

/* A requester scenario's attributes: timeout code, retry_cnt, rnr_retry. */
#define REQ_ATTRS(t, r, n) .req_attrs = true, .timeout = (t), .retry_cnt = (r), .rnr_retry = (n)

static const struct scenario {
	const char *name;
	int (*run)(const struct vconf *c);
	struct vconf conf;
	const char *counters;	/* "name=N ...": how they must move (or cnt_want) */
} scenarios[] = {
	{ "read_replay_new_read", sc_read_replay_new_read,
	  { .epsn = 0x1000, .rd_atomic = 1 }, "rx_drop_dup=1" },
	{ "dup_send", sc_dup_send, { .epsn = 0x2000, .nrecv = 2 }, "rx_drop_dup=1" },
	{ "dup_middle", sc_dup_middle, { .epsn = 0x2100, .nrecv = 1, .recv_len = 3 * PMTU },
	  "rx_drop_dup=2" },
	{ "dup_read", sc_dup_read, { .epsn = 0xfffffe, .rd_atomic = 2, .nrecv = 1 },
	  "rx_drop_dup=2" },
	{ "dup_read_stale", sc_dup_read_stale, { .epsn = 0x2200, .rd_atomic = 1, .nrecv = 1 },
	  "rx_drop_dup=1 stale_read_replays=1" },
	{ "dup_read_mismatch", sc_dup_read_mismatch,
	  { .epsn = 0xfffffe, .rd_atomic = 1, .nrecv = 1 }, "rx_drop_dup=5 rejected_read_replays=4" },
	{ "dup_read_no_access", sc_dup_read_no_access,
	  { .epsn = 0x2300, .rd_atomic = 1, .nrecv = 1 },
	  "rx_drop_dup=1 stale_read_replays=1 err_naks_sent=1" },
	{ "seq_gap", sc_seq_gap, { .epsn = 0x3000, .nrecv = 4 },
	  "seq_naks_sent=2 rx_drop_seq=2" },
	{ "write_bad_rkey", sc_write_bad_rkey, { .epsn = 0x4000, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "read_past_end", sc_read_past_end, { .epsn = 0x4100, .nrecv = 1 }, "err_naks_sent=1" },
	{ "write_no_remote_write", sc_write_no_remote_write, { .epsn = 0x4200, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_middle_alone", sc_write_middle_alone, { .epsn = 0x4300, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "send_last_alone", sc_send_last_alone, { .epsn = 0x4400, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_len_mismatch", sc_write_len_mismatch, { .epsn = 0x4500, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_first_pad", sc_write_first_pad, { .epsn = 0x4600, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "send_too_long", sc_send_too_long, { .epsn = 0x4700, .nrecv = 2, .recv_len = 64 },
	  "err_naks_sent=1" },
	{ "rnr", sc_rnr, { .epsn = 0x5000, .min_rnr_timer = 14 },
	  "rnr_naks_sent=2 rx_drop_seq=1" },
	{ "atomics", sc_atomics, { .epsn = 0xfffffe, .rd_atomic = 2 }, "rx_drop_dup=2" },
	{ "cnp", sc_cnp, { .epsn = 0x5100, .nrecv = 1 }, "rp_cnp_ignored=1 rx_drop_short=1" },
	/* the victim as the requester */
	{ "req_ack_coalesced", sc_req_ack_coalesced,
	  { .sq_psn = 0xfffffd, REQ_ATTRS(19, 7, 7) }, "" },
	{ "req_ack_timeout", sc_req_ack_timeout, { .sq_psn = 0x6000, REQ_ATTRS(16, 7, 7) },
	  NULL /* cnt_want: timeouts=retransmits=the copies the peer saw, 2 or more */ },
	{ "req_retry_exceeded", sc_req_retry_exceeded, { .sq_psn = 0x6100, REQ_ATTRS(12, 2, 7) },
	  "timeouts=3 retransmits=2" },
	{ "req_nak_psn_seq", sc_req_nak_psn_seq, { .sq_psn = 0xfffffe, REQ_ATTRS(19, 7, 7) },
	  "seq_naks_rcvd=1 retransmits=1" },
	{ "req_rnr_nak", sc_req_rnr_nak, { .sq_psn = 0x6200, REQ_ATTRS(19, 7, 2) },
	  "rnr_naks_rcvd=5 retransmits=4" },
	{ "req_rnr_late", sc_req_rnr_late, { .sq_psn = 0x6280, REQ_ATTRS(18, 3, 7) },
	  NULL /* cnt_want: rnr_naks_rcvd, timeouts, retransmits as the peer saw them */ },
	{ "req_nak_remote_access", sc_req_nak_remote_access,
	  { .sq_psn = 0x6300, REQ_ATTRS(19, 7, 7) }, "err_naks_rcvd=1" },
	{ "req_nak_invalid_request", sc_req_nak_invalid_request,
	  { .sq_psn = 0x6400, REQ_ATTRS(19, 7, 7) }, "err_naks_rcvd=1" },
	{ "req_nak_remote_op", sc_req_nak_remote_op, { .sq_psn = 0x6500, REQ_ATTRS(19, 7, 7) },
	  "err_naks_rcvd=1" },
	{ "req_ack_unsent_psn", sc_req_ack_unsent_psn, { .sq_psn = 0x6600, REQ_ATTRS(19, 7, 7) },
	  "rx_drop_resp=2 rx_dup_resp=2" },
	{ "req_read_response", sc_req_read_response, { .sq_psn = 0xfffffc, REQ_ATTRS(16, 7, 7) },
	  "retransmits=3 timeouts=2 rx_drop_resp=2 rx_drop_gap=1" },
	{ "req_atomic_response", sc_req_atomic_response,
	  { .sq_psn = 0x6700, REQ_ATTRS(19, 7, 7) }, "retransmits=1" },
	{ "req_implicit_ack_by_read_response", sc_req_implicit_ack_by_read_response,
	  { .sq_psn = 0x6800, REQ_ATTRS(19, 7, 7) }, "" },
	/* UC (receives of 3 KiB overlap the next slot: each is checked before the next fills) */
	{ "uc_lost_middle", sc_uc_lost_middle,
	  { .uc = true, .epsn = 0xfffffe, .nrecv = 2, .recv_len = 3 * PMTU }, "rx_drop_uc=1" },
	{ "uc_interrupted", sc_uc_interrupted,
	  { .uc = true, .epsn = 0x7100, .nrecv = 2, .recv_len = 3 * PMTU }, "" },
	{ "uc_lost_first", sc_uc_lost_first, { .uc = true, .epsn = 0x7200 }, "rx_drop_uc=3" },
	{ "uc_no_recv", sc_uc_no_recv, { .uc = true, .epsn = 0x7300 },
	  "rx_drop_no_recv=3 rx_drop_uc=1" },
	{ "uc_bad_access", sc_uc_bad_access, { .uc = true, .epsn = 0x7400, .nrecv = 1 },
	  "rx_drop_uc=5" },
	{ "uc_send_too_long", sc_uc_send_too_long,
	  { .uc = true, .epsn = 0x7500, .nrecv = 2, .recv_len = 64 }, "rx_drop_uc=4" },
	{ "uc_dup_only", sc_uc_dup_only, { .uc = true, .epsn = 0x7600, .nrecv = 3 }, "" },
	{ "uc_foreign_opcodes", sc_uc_foreign_opcodes, { .uc = true, .epsn = 0x7700, .nrecv = 1 },
	  "rx_drop_qp_type=2 rx_drop_opcode=2" },
	{ "uc_req_messages", sc_uc_req_messages, { .uc = true, .sq_psn = 0xfffffe }, "" },
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* Run scenario @idx on a fresh victim. */
static enum case_verdict run_scenario(size_t idx, char *msg, size_t len)
{
	const struct scenario *s = &scenarios[idx];
	long long before[NCNT];
	struct rsp junk;
	uint16_t jport;
	size_t jn;
	int rc;

	why[0] = 0;
	cnt_want[0] = 0;
	before[0] = -1;
	peer.qpn = 0x5e0000 + idx;
	tport = s->conf.uc ? UC_OPS : 0;
	vic_fill(idx);
	rc = vic_up(&s->conf);
	while (!rc && dgram_recv(junk.raw, sizeof(junk.raw), &jn, &jport, 0) > 0)
		;	/* nothing left over from an earlier scenario */
	why[0] = 0;
	peer.sent = peer.rcvd = peer.reordered = 0;
	if (!rc)
		rc = cnt_read(before);
	if (!rc) {
		vlog("%s: victim QPN 0x%06x, peer QPN 0x%06x\n", s->name, vic.qpn, peer.qpn);
		rc = s->run(&s->conf);
	}
	if (!rc)
		rc = expect_quiet("the scenario");
	if (!rc)
		rc = expect_no_wc("the scenario");
	if (!rc) {
		rc = cnt_check(before, cnt_want[0] ? cnt_want : s->counters);
	} else if (before[0] >= 0) {
		long long after[NCNT];

		if (!cnt_read(after))
			cnt_dump(before, after);
	}
	vic_down();
	if (peer.reordered)
		fprintf(stderr, "%s: %lu READ response packets came out of order\n", s->name,
			peer.reordered);
	if (!rc)
		return CASE_PASS;
	snprintf(msg, len, "%s", why[0] ? why : "(no reason recorded)");
	return CASE_FAIL;
}

static const char *scenario_name(size_t idx)
{
	return scenarios[idx].name;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: sroce_peer -d DEV -g GIDINDEX -t VICTIM_IP -a PEER_IP [-N NETNS]\n"
		"                  [-s NAME[,NAME...]] [-q QUIET_MS] [-T TIMEOUT_MS] [-v]\n"
		"       sroce_peer -l\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct runner r = { .ncases = NSCEN, .name = scenario_name, .run = run_scenario };
	const char *victim_ip = NULL, *peer_ip = NULL;
	unsigned int i, j;
	int c;

	while ((c = getopt(argc, argv, "d:g:t:a:N:s:q:T:lv")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 't': victim_ip = optarg; break;
		case 'a': peer_ip = optarg; break;
		case 'N': opt.netns = optarg; break;
		case 's': r.only = optarg; break;
		case 'q': opt.quiet_ms = atoi(optarg); break;
		case 'T': opt.timeout_ms = atoi(optarg); break;
		case 'v': opt.verbose = true; break;
		case 'l':
			cases_list(&r);
			return 0;
		default: usage();
		}
	}
	if (!opt.dev || opt.gid_index < 0 || !victim_ip || !peer_ip || optind != argc)
		usage();
	if (r.only && !cases_wanted(&r))
		die("no scenario in '%s' (-l lists them)", r.only);
	roce_crc_init();
	if (roce_icrc_selftest())
		return 2;
	for (i = 0; i < 4; i++)
		for (j = 0; j < sizeof(msg[i]); j++)
			msg[i][j] = (uint8_t)(j * (i + 3) + 0x40 * i + 1);
	for (j = 0; j < sizeof(rdata); j++)
		rdata[j] = (uint8_t)(j * 11 + (j >> 8) * 5 + 0x33);
	peer_open(peer_ip, victim_ip);
	vic_open();
	cases_run(&r);
	printf("%u scenarios, %u passed, %u failed\n", r.ran, r.passed, r.failed);
	return r.failed ? 1 : 0;
}
