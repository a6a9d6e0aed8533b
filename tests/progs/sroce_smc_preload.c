// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsroce_smc.so - run an unmodified TCP program over SMC (net/smc).
 *
 *   LD_PRELOAD=libsroce_smc.so PROGRAM ...
 *
 * Every TCP socket the program asks for (AF_INET or AF_INET6,
 * SOCK_STREAM, protocol 0 or IPPROTO_TCP) is made an AF_SMC socket of the
 * same address family instead (SMCPROTO_SMC for IPv4, SMCPROTO_SMC6 for
 * IPv6), the way smc-tools' smc_run does; Debian 12 does not package
 * smc-tools.  The program keeps using the TCP socket API: AF_SMC takes
 * TCP's addresses and options, and falls back to TCP by itself when the
 * peer or the network cannot do SMC.  Other sockets are left alone.  If
 * the kernel has no AF_SMC (smc.ko not loaded), socket() fails with its
 * error rather than quietly giving TCP.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0
#define SMCPROTO_SMC6 1

int socket(int domain, int type, int protocol)
{
	static int (*real_socket)(int, int, int);

	if (!real_socket)
		real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	if ((domain == AF_INET || domain == AF_INET6) &&
	    (type & 0xf) == SOCK_STREAM &&
	    (protocol == 0 || protocol == IPPROTO_TCP))
		return real_socket(AF_SMC, type,
				   domain == AF_INET6 ? SMCPROTO_SMC6 : SMCPROTO_SMC);
	return real_socket(domain, type, protocol);
}
