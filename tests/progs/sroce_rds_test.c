// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_rds_test - exchange verified messages over RDS on RDMA (rds_rdma).
 *
 *   sroce_rds_test ADDR_A ADDR_B [COUNT]
 *   sroce_rds_test --counters
 *
 * Two AF_RDS sockets in one process, A bound to ADDR_A and B to ADDR_B,
 * both forced onto the InfiniBand/RoCE transport (SO_RDS_TRANSPORT), so the
 * messages go through rds_rdma's RDMA connection even between addresses of
 * one machine.  A sends COUNT messages of sizes from 1 byte to 64 KiB, each
 * with its own pattern; B checks the sender, the size and every byte, and
 * sends it back; A checks the echo.  Prints "rds: N messages, M bytes,
 * verified" on success; exits 1 with "FAIL: ..." otherwise.
 *
 * --counters prints RDS's counters (RDS_INFO_COUNTERS: the core's, then
 * those of each loaded transport), one "name value" a line, as rds-info -c
 * would: the test groups read conn_reset from it (tests/lib.sh).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/rds.h>

#include "common.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define PORT_A 18634
#define PORT_B 18635
#define MAX_MSG (64 * 1024)
#define WAIT_MS 60000

/* Message @seq's size: small, around page and fragment sizes, and large. */
static size_t msg_size(unsigned int seq)
{
	static const size_t sizes[] = {
		1, 7, 64, 1000, 4095, 4096, 4097, 8192, 12345, 16384,
		32768, 40000, MAX_MSG,
	};

	return sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];
}

static int rds_socket(const char *addr, unsigned short port,
		      struct sockaddr_in *sin)
{
	int trans = RDS_TRANS_IB, got = -1;
	socklen_t len = sizeof(got);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		die("socket(AF_RDS): %s (is rds_rdma loaded?)", strerror(errno));
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)))
		die("SO_RDS_TRANSPORT=IB: %s", strerror(errno));
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		die("bad IPv4 address %s", addr);
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)))
		die("bind %s:%u on the IB transport: %s (no RDMA device there?)",
		    addr, port, strerror(errno));
	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &got, &len) ||
	    got != RDS_TRANS_IB)
		die("socket on %s is not on the IB transport (%d)", addr, got);
	return fd;
}

static void send_to(int fd, const struct sockaddr_in *to, const void *buf,
		    size_t len)
{
	ssize_t n;

	for (;;) {
		n = sendto(fd, buf, len, 0, (const struct sockaddr *)to,
			   sizeof(*to));
		if (n == (ssize_t)len)
			return;
		/* The connection is still being set up, or the send
		 * buffer is full: wait for room and try again.
		 */
		if (n < 0 && (errno == ENOBUFS || errno == EAGAIN)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			poll(&p, 1, 100);
			continue;
		}
		die("sendto %zu bytes: %s", len, n < 0 ? strerror(errno) : "short");
	}
}

/* Receive one message from @from into @buf; returns its length. */
static size_t recv_from(int fd, const struct sockaddr_in *from, void *buf)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sockaddr_in src;
	socklen_t slen = sizeof(src);
	ssize_t n;
	int r;

	r = poll(&p, 1, WAIT_MS);
	if (r <= 0)
		die("no message within %d ms", WAIT_MS);
	n = recvfrom(fd, buf, MAX_MSG, 0, (struct sockaddr *)&src, &slen);
	if (n < 0)
		die("recvfrom: %s", strerror(errno));
	if (src.sin_addr.s_addr != from->sin_addr.s_addr ||
	    src.sin_port != from->sin_port)
		die("message from %s:%u, expected %s:%u",
		    inet_ntoa(src.sin_addr), ntohs(src.sin_port),
		    inet_ntoa(from->sin_addr), ntohs(from->sin_port));
	return (size_t)n;
}

static void check(const char *who, unsigned int seq, const uint8_t *got,
		  size_t got_len, const uint8_t *want, size_t want_len)
{
	size_t i;

	if (got_len != want_len)
		die("%s: message %u has %zu bytes, expected %zu", who, seq,
		    got_len, want_len);
	for (i = 0; i < want_len; i++)
		if (got[i] != want[i])
			die("%s: message %u differs at byte %zu", who, seq, i);
}

/* Print RDS's counters, one "name value" a line. */
static void print_counters(void)
{
	struct rds_info_counter *c;
	socklen_t len = 0;
	int fd, each, i;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0)
		die("socket(AF_RDS): %s (is rds loaded?)", strerror(errno));
	/* A length of 0 asks for the length needed (ENOSPC). */
	if (getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL, &len) >= 0 ||
	    errno != ENOSPC)
		die("RDS_INFO_COUNTERS: no length (%s)", strerror(errno));
	/* Room for counters a transport loaded since then may add. */
	len += 64 * sizeof(*c);
	c = malloc(len);
	if (!c)
		die("no memory");
	each = getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, c, &len);
	if (each < 0)
		die("RDS_INFO_COUNTERS: %s", strerror(errno));
	if ((size_t)each != sizeof(*c))
		die("RDS_INFO_COUNTERS: items of %d bytes, expected %zu", each,
		    sizeof(*c));
	for (i = 0; i < (int)(len / sizeof(*c)); i++)
		printf("%.*s %llu\n", (int)sizeof(c[i].name), c[i].name,
		       (unsigned long long)c[i].value);
	free(c);
	close(fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, sb;
	unsigned int count = 200, seq;
	uint8_t *want, *buf;
	unsigned long long bytes = 0;
	size_t len, n;
	int a, b;

	if (argc == 2 && !strcmp(argv[1], "--counters")) {
		print_counters();
		return 0;
	}
	if (argc < 3 || argc > 4)
		die("usage: %s ADDR_A ADDR_B [COUNT] | --counters", argv[0]);
	if (argc == 4)
		count = (unsigned int)strtoul(argv[3], NULL, 0);
	want = malloc(MAX_MSG);
	buf = malloc(MAX_MSG);
	if (!want || !buf)
		die("no memory");
	a = rds_socket(argv[1], PORT_A, &sa);
	b = rds_socket(argv[2], PORT_B, &sb);
	for (seq = 0; seq < count; seq++) {
		len = msg_size(seq);
		fill_pattern(want, len, seq);
		send_to(a, &sb, want, len);
		n = recv_from(b, &sa, buf);
		check("B", seq, buf, n, want, len);
		send_to(b, &sa, buf, n);
		memset(buf, 0, n);
		n = recv_from(a, &sb, buf);
		check("A (echo)", seq, buf, n, want, len);
		bytes += 2 * len;
	}
	printf("rds: %u messages, %llu bytes, verified\n", 2 * count, bytes);
	return 0;
}
