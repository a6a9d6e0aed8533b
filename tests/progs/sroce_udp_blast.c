// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_udp_blast: what a wire carries of UDP datagrams the size of one
 * RoCEv2 packet, with no RDMA device at all: the ceiling any RoCE driver
 * meets on it (make bench's two-guest wire, tests/bench/pair.sh).
 *
 * usage: sroce_udp_blast send ADDRESS PORT SIZE SECONDS
 *        sroce_udp_blast recv PORT SECONDS
 *
 * The sender sends SIZE-byte datagrams to ADDRESS:PORT as fast as the
 * socket takes them (sendmmsg, a batch per call) for SECONDS, then prints
 *
 *   sent DATAGRAMS BYTES
 *
 * The receiver waits up to SECONDS for the first datagram, then counts
 * until none has come for a second, and prints what arrived between the
 * first batch of datagrams and the last (the rate leaves the first batch
 * out: its arrival starts the clock):
 *
 *   received DATAGRAMS BYTES SECONDS BYTES_PER_SECOND
 *
 * Datagrams the wire or a queue dropped are not counted: the rate is
 * what was delivered.  Both exit 1 on an error, the receiver also when
 * nothing arrived.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "util.h"

#define BATCH 32
#define MAX_SIZE 65507

static int blast_send(const char *addr, int port, size_t size, double secs)
{
	static char buf[MAX_SIZE];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	unsigned long long n = 0;
	double end;
	int fd, i, sent;

	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		die("not an IPv4 address: %s", addr);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket: %m");
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)))
		die("connect %s:%d: %m", addr, port);
	memset(buf, 0x5a, size);
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	end = mono_seconds() + secs;
	while (mono_seconds() < end) {
		sent = sendmmsg(fd, msgs, BATCH, 0);
		/* A full queue or an ICMP error from a receiver not up yet. */
		if (sent < 0)
			continue;
		n += sent;
	}
	printf("sent %llu %llu\n", n, n * size);
	return 0;
}

/* One buffer per datagram of a batch: recvmmsg, one system call a batch. */
struct blast_rx {
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char buf[BATCH][MAX_SIZE];
};

static int blast_recv(int port, double secs)
{
	static struct blast_rx rx;
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	unsigned long long n = 0, bytes = 0, first_bytes = 0;
	double first = 0, last = 0;
	int fd, i, got, rcvbuf = 4 << 20;
	struct pollfd pfd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket: %m");
	/* Capped by net.core.rmem_max; a larger queue only rides out jitter. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)))
		die("bind port %d: %m", port);
	for (i = 0; i < BATCH; i++) {
		rx.iov[i].iov_base = rx.buf[i];
		rx.iov[i].iov_len = MAX_SIZE;
		rx.msgs[i].msg_hdr.msg_iov = &rx.iov[i];
		rx.msgs[i].msg_hdr.msg_iovlen = 1;
	}
	printf("listening\n");
	fflush(stdout);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, n ? 1000 : (int)(secs * 1000)) <= 0)
			break;
		got = recvmmsg(fd, rx.msgs, BATCH, MSG_DONTWAIT, NULL);
		if (got < 0)
			die("recvmmsg: %m");
		last = mono_seconds();
		for (i = 0; i < got; i++)
			bytes += rx.msgs[i].msg_len;
		if (!n) {
			first = last;
			first_bytes = bytes;
		}
		n += got;
	}
	if (!n)
		die("no datagram arrived on port %d in %g s", port, secs);
	if (bytes == first_bytes)
		die("%llu datagrams arrived on port %d, in one batch", n, port);
	/* The first batch's arrival starts the clock: it is not counted. */
	printf("received %llu %llu %.3f %.0f\n", n, bytes, last - first,
	       (double)(bytes - first_bytes) / (last - first));
	return 0;
}

int main(int argc, char **argv)
{
	size_t size;

	if (argc == 6 && !strcmp(argv[1], "send")) {
		size = strtoul(argv[4], NULL, 0);
		if (size == 0 || size > MAX_SIZE)
			die("SIZE must be 1 to %d", MAX_SIZE);
		return blast_send(argv[2], atoi(argv[3]), size,
				  strtod(argv[5], NULL));
	}
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return blast_recv(atoi(argv[2]), strtod(argv[3], NULL));
	fprintf(stderr, "usage: %s send ADDRESS PORT SIZE SECONDS\n"
			"       %s recv PORT SECONDS\n", argv[0], argv[0]);
	return 2;
}
