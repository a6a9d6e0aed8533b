// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_tcp_test - an ordinary TCP program that checks every byte.
 *
 *   sroce_tcp_test -s ADDR PORT                  server: one connection
 *   sroce_tcp_test [-n BYTES] [-W] ADDR PORT     client
 *
 * Plain TCP sockets, nothing else: the apps group runs it over SMC through
 * libsroce_smc.so (LD_PRELOAD).  The client sends BYTES (16 MiB by
 * default) in chunks of sizes from 1 byte to 1 MiB, each with its own
 * pattern; the server checks every byte of a chunk and sends it back, and
 * the client checks the echo and prints "tcp: N bytes each way in M
 * chunks, every byte checked".  With -W it then keeps the connection open
 * until its standard input ends, for the caller to look at the connection.  The server exits 0 when the client has closed after a
 * whole number of chunks.  Any wrong byte or short transfer: "FAIL: ...",
 * exit 1.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>

#include "util.h"

#define MAX_CHUNK (1u << 20)

static size_t chunk_size(unsigned int seq)
{
	static const size_t sizes[] = {
		1, 100, 1448, 4096, 8191, 65536, 100000, 262144, MAX_CHUNK,
	};

	return sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void check(const uint8_t *got, uint8_t *want, size_t len, unsigned int seq,
		  const char *who)
{
	size_t i;

	fill_pattern(want, len, seq);
	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			die("%s: chunk %u (%zu bytes): byte %zu is 0x%02x, expected 0x%02x",
			    who, seq, len, i, got[i], want[i]);
}

/* Reads exactly @len bytes; returns 0 at a clean EOF before the first. */
static size_t read_all(int fd, uint8_t *p, size_t len, const char *who)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("%s: read: %s", who, strerror(errno));
		if (n == 0) {
			if (got)
				die("%s: connection closed after %zu of %zu bytes", who, got, len);
			return 0;
		}
		got += (size_t)n;
	}
	return got;
}

static void write_all(int fd, const uint8_t *p, size_t len, const char *who)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("%s: write: %s", who, n ? strerror(errno) : "wrote nothing");
		p += n;
		len -= (size_t)n;
	}
}

static struct addrinfo *resolve(const char *addr, const char *port, int passive)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | (passive ? AI_PASSIVE : 0) };
	struct addrinfo *ai;
	int err = getaddrinfo(addr, port, &hints, &ai);

	if (err)
		die("%s port %s: %s", addr, port, gai_strerror(err));
	return ai;
}

static int serve(const char *addr, const char *port)
{
	struct addrinfo *ai = resolve(addr, port, 1);
	uint8_t *buf = malloc(MAX_CHUNK), *want = malloc(MAX_CHUNK);
	unsigned long long total = 0;
	unsigned int seq;
	int one = 1, lfd, fd;

	if (!buf || !want)
		die("out of memory");
	lfd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 1))
		die("bind/listen %s port %s: %s", addr, port, strerror(errno));
	printf("listening on %s port %s\n", addr, port);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	for (seq = 0;; seq++) {
		size_t len = chunk_size(seq);

		if (!read_all(fd, buf, len, "server"))
			break;
		check(buf, want, len, seq, "server");
		write_all(fd, buf, len, "server");
		total += len;
	}
	printf("server: %llu bytes in %u chunks, every byte checked and echoed\n", total, seq);
	close(fd);
	close(lfd);
	freeaddrinfo(ai);
	return 0;
}

static int client(const char *addr, const char *port, unsigned long long bytes,
		  int hold)
{
	struct addrinfo *ai = resolve(addr, port, 0);
	uint8_t *buf = malloc(MAX_CHUNK), *want = malloc(MAX_CHUNK);
	unsigned long long total = 0;
	unsigned int seq;
	int fd;

	if (!buf || !want)
		die("out of memory");
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		die("connect %s port %s: %s", addr, port, strerror(errno));
	for (seq = 0; total < bytes; seq++) {
		size_t len = chunk_size(seq);

		fill_pattern(buf, len, seq);
		write_all(fd, buf, len, "client");
		if (!read_all(fd, buf, len, "client"))
			die("client: the server closed the connection after %llu bytes", total);
		check(buf, want, len, seq, "client");
		total += len;
	}
	printf("tcp: %llu bytes each way in %u chunks, every byte checked\n", total, seq);
	fflush(stdout);
	if (hold) {
		char c;

		while (read(0, &c, 1) > 0 || errno == EINTR)
			;
	}
	close(fd);
	freeaddrinfo(ai);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long bytes = 16ull << 20;
	int opt, server = 0, hold = 0;

	while ((opt = getopt(argc, argv, "sn:W")) != -1) {
		switch (opt) {
		case 's':
			server = 1;
			break;
		case 'n':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'W':
			hold = 1;
			break;
		default:
			die("usage: sroce_tcp_test [-s] [-n BYTES] [-W] ADDR PORT");
		}
	}
	if (argc - optind != 2)
		die("usage: sroce_tcp_test [-s] [-n BYTES] [-W] ADDR PORT");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (server)
		return serve(argv[optind], argv[optind + 1]);
	return client(argv[optind], argv[optind + 1], bytes, hold);
}
