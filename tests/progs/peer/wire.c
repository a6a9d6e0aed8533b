// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wire.c - sroce_peer: the failure of the running scenario, and the
 * peer: a UDP socket on port 4791 in another namespace, the packets it
 * builds (headers and ICRC) and the checks of those sroce sends.
 */

#include "peer.h"

#define PKEY 0xffff

char why[1024];

/* What a scenario computed the counters must do, over its table entry's. */
char cnt_want[128];

/* Record why the scenario failed (the first reason wins); returns -1. */
int __attribute__((format(printf, 1, 2))) failf(const char *fmt, ...)
{
	va_list ap;

	if (why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & 0xffffff;
}

struct peer peer;

/*
 * The ICRC code ready, and right (non-zero if not).  roce_wire.h's table
 * is each file's own: this one's, whose functions compute the ICRCs.
 */
int wire_init(void)
{
	roce_crc_init();
	return roce_icrc_selftest();
}

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
void peer_open(const char *ip, const char *victim_ip)
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

uint8_t tport;

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

bool op_has_reth(uint8_t op)
{
	op = op_base(op);
	return op == OP_WRITE_FIRST || op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM ||
	       op == OP_READ_REQ || op == OP_ATOMIC_WRITE || op == OP_FLUSH;
}

bool op_has_imm(uint8_t op)
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
	if (op_base(r->op) == OP_FLUSH)
		q = put32(q, r->feth);
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
int req_send_n(const struct req *r, unsigned int n)
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

int req_send(const struct req *r)
{
	return req_send_n(r, 1);
}

/*
 * What every packet from sroce must have, request or response: TVer 0, the
 * P_Key, the peer's QPN and, over IPv6, the right ICRC.
 */
int hdr_check(const uint8_t *p, size_t n, uint16_t sport)
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

long now_ms(void)
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

long rt_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ms(&t);
}

/*
 * The next datagram from sroce within @ms into @raw (@cap bytes): 1 with
 * its length in @n and its UDP source port in @sport, or 0 if none came.
 */
int dgram_recv(uint8_t *raw, size_t cap, size_t *n, uint16_t *sport, int ms)
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
int rsp_recv(struct rsp *r, int ms)
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

const char *rsp_str(const struct rsp *r)
{
	static char s[128];

	snprintf(s, sizeof(s), "op 0x%02x psn 0x%06x syndrome 0x%02x msn %u (%u bytes)", r->op,
		 r->psn, r->syn, r->msn, r->len);
	return s;
}

/* The next packet must come, within the timeout. */
int rsp_expect(struct rsp *r, const char *what)
{
	int k = rsp_recv(r, opt.timeout_ms);

	TRY(k);
	CHECK(k, "no answer to %s within %d ms", what, opt.timeout_ms);
	return 0;
}

/* Nothing more from sroce for opt.quiet_ms. */
int expect_quiet_ms(const char *after, int ms)
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

int expect_quiet(const char *after)
{
	return expect_quiet_ms(after, opt.quiet_ms);
}

/* An ACK-family packet: opcode ACK with syndrome @syn, PSN @psn, MSN @msn. */
int expect_ack(uint8_t syn, uint32_t psn, uint32_t msn, const char *what)
{
	struct rsp r;

	TRY(rsp_expect(&r, what));
	CHECK(r.op == OP_ACK && r.syn == syn && r.psn == psn && r.msn == msn,
	      "%s: got %s, want ACK syndrome 0x%02x psn 0x%06x msn %u", what, rsp_str(&r), syn, psn,
	      msn);
	return 0;
}

int expect_atomic_ack(uint32_t psn, uint64_t orig, uint32_t msn, uint32_t msn_alt,
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
uint8_t read_op(uint32_t i, uint32_t n)
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
int psn_index(uint32_t psn, uint32_t first, uint32_t n)
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
int take_read_pkt(const struct rsp *r, uint32_t first, uint32_t n, uint32_t off,
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
int expect_read(uint32_t first, uint32_t off, uint32_t total, uint32_t msn, bool mid,
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
