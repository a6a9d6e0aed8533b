// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_smc - the few things of smc-tools the apps group needs (Debian 12
 * does not package smc-tools), through the kernel's own netlink interfaces.
 *
 *   sroce_smc pnet PNETID NETDEV           give NETDEV (of this namespace)
 *                                          the PNET ID (smc_pnet -a -I)
 *   sroce_smc pnet PNETID - RDMADEV        give port 1 of RDMADEV the PNET
 *                                          ID (smc_pnet -a -D -P 1); only
 *                                          in the initial namespace
 *   sroce_smc ueid UEID                    add a user EID (smcr ueid add)
 *   sroce_smc flush                        empty this namespace's pnet
 *                                          table (in the initial one also
 *                                          the RDMA devices' PNET IDs) and
 *                                          the user EID table
 *   sroce_smc ss                           the SMC sockets of this
 *                                          namespace (smcss -R), one a line:
 *       STATE MODE LOCAL PEER [rdma DEV port N gid GID peer PEERGID]
 *                                          [fallback 0xREASON/0xPEER]
 *     MODE is SMCR, SMCD or TCP (fell back to TCP).
 *
 * Exits 1 with "FAIL: ..." when the kernel refuses.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>

#include "util.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMC_EID_LEN 32

struct msg {
	union {
		struct nlmsghdr nh;
		char buf[4096];
	};
};

static void put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + NLMSG_ALIGN(m->nh.nlmsg_len));

	if (NLMSG_ALIGN(m->nh.nlmsg_len) + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->buf))
		die("netlink message too long");
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void put_str(struct msg *m, uint16_t type, const char *s)
{
	put_attr(m, type, s, strlen(s) + 1);
}

static int nl_open(int proto)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);

	if (fd < 0)
		die("netlink socket: %s", strerror(errno));
	return fd;
}

static void nl_send(int fd, struct msg *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(fd, m->buf, m->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("netlink send: %s", strerror(errno));
}

/* One reply; returns its length. */
static ssize_t nl_recv(int fd, struct msg *m)
{
	ssize_t n = recv(fd, m->buf, sizeof(m->buf), 0);

	if (n < 0)
		die("netlink receive: %s", strerror(errno));
	return n;
}

static void genl_start(struct msg *m, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->nh.nlmsg_type = family;
	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nh.nlmsg_seq = 1;
	g = NLMSG_DATA(&m->nh);
	g->cmd = cmd;
	g->version = version;
}

/* The kernel's answer to a request sent with NLM_F_ACK: 0 or -errno. */
static int genl_ack(int fd)
{
	struct msg m;
	ssize_t n = nl_recv(fd, &m);
	struct nlmsghdr *nh = &m.nh;

	for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n))
		if (nh->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	die("netlink: no acknowledgement");
}

static uint16_t genl_family(int fd, const char *name)
{
	struct msg m;
	struct nlmsghdr *nh = &m.nh;
	ssize_t n;

	genl_start(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	m.nh.nlmsg_flags = NLM_F_REQUEST;
	put_str(&m, CTRL_ATTR_FAMILY_NAME, name);
	nl_send(fd, &m);
	n = nl_recv(fd, &m);
	for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
		struct nlattr *a;
		int len;

		if (nh->nlmsg_type == NLMSG_ERROR)
			die("generic netlink family %s: %s (is smc.ko loaded?)", name,
			    strerror(-((struct nlmsgerr *)NLMSG_DATA(nh))->error));
		len = (int)nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
		a = (struct nlattr *)((char *)NLMSG_DATA(nh) + GENL_HDRLEN);
		for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
		     len -= NLA_ALIGN(a->nla_len),
		     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
			if (a->nla_type == CTRL_ATTR_FAMILY_ID)
				return *(uint16_t *)((char *)a + NLA_HDRLEN);
	}
	die("generic netlink family %s: no id in the answer", name);
}

/* Whether this process runs in the initial network namespace (PID 1's). */
static int in_init_net(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) || stat("/proc/1/ns/net", &init))
		die("network namespace: %s", strerror(errno));
	return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
}

/*
 * One pnet table entry: NETDEV's PNET ID, or port 1 of RDMADEV's.  A netdev
 * entry belongs to the caller's namespace.  An RDMA device's PNET ID is
 * global, and Linux takes it only from the initial namespace: elsewhere
 * smc_pnet_enter() records the netdev half of a request, answers 0 and
 * drops the RDMA half, so this refuses that case itself.
 */
static void pnet_add(const char *pnetid, const char *netdev, const char *rdmadev)
{
	int fd = nl_open(NETLINK_GENERIC), err;
	uint16_t fam = genl_family(fd, SMCR_GENL_FAMILY_NAME);
	uint8_t port = 1;
	struct msg m;

	if (rdmadev && !in_init_net())
		die("pnet table: the PNET ID of %s can be set only from the initial network namespace",
		    rdmadev);
	genl_start(&m, fam, SMC_PNETID_ADD, SMCR_GENL_FAMILY_VERSION);
	put_str(&m, SMC_PNETID_NAME, pnetid);
	if (rdmadev) {
		put_str(&m, SMC_PNETID_IBNAME, rdmadev);
		put_attr(&m, SMC_PNETID_IBPORT, &port, 1);
	} else {
		put_str(&m, SMC_PNETID_ETHNAME, netdev);
	}
	nl_send(fd, &m);
	err = genl_ack(fd);
	if (err)
		die("pnet table: %s = %s%s: %s", pnetid, rdmadev ?: netdev,
		    rdmadev ? " port 1" : "", strerror(-err));
	printf("pnet table: %s = %s%s\n", pnetid, rdmadev ?: netdev, rdmadev ? " port 1" : "");
	close(fd);
}

static void ueid_add(const char *ueid)
{
	int fd = nl_open(NETLINK_GENERIC), err;
	uint16_t fam = genl_family(fd, SMC_GENL_FAMILY_NAME);
	char eid[SMC_EID_LEN + 1];
	struct msg m;

	if (strlen(ueid) > SMC_EID_LEN)
		die("a user EID has at most %d characters", SMC_EID_LEN);
	/* The kernel takes the EID blank-padded to its full length. */
	memset(eid, ' ', SMC_EID_LEN);
	memcpy(eid, ueid, strlen(ueid));
	eid[SMC_EID_LEN] = 0;
	genl_start(&m, fam, SMC_NETLINK_ADD_UEID, SMC_GENL_FAMILY_VERSION);
	put_attr(&m, SMC_NLA_EID_TABLE_ENTRY, eid, sizeof(eid));
	nl_send(fd, &m);
	err = genl_ack(fd);
	if (err && err != -EEXIST)
		die("user EID %s: %s", ueid, strerror(-err));
	printf("user EID: %s\n", ueid);
	close(fd);
}

static void flush(void)
{
	int fd = nl_open(NETLINK_GENERIC), err;
	uint16_t pnet = genl_family(fd, SMCR_GENL_FAMILY_NAME);
	uint16_t gen = genl_family(fd, SMC_GENL_FAMILY_NAME);
	struct msg m;

	genl_start(&m, pnet, SMC_PNETID_FLUSH, SMCR_GENL_FAMILY_VERSION);
	nl_send(fd, &m);
	err = genl_ack(fd);
	if (err)
		die("pnet table flush: %s", strerror(-err));
	genl_start(&m, gen, SMC_NETLINK_FLUSH_UEID, SMC_GENL_FAMILY_VERSION);
	nl_send(fd, &m);
	err = genl_ack(fd);
	if (err && err != -ENOENT)
		die("user EID flush: %s", strerror(-err));
	close(fd);
}

static const char *state_name(uint8_t s)
{
	static const char *const names[] = {
		"?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
		"FIN_WAIT2", "TIME_WAIT", "CLOSED", "CLOSE_WAIT", "LAST_ACK",
		"LISTEN", "CLOSING",
	};

	if (s < sizeof(names) / sizeof(names[0]))
		return names[s];
	/* SMC's own closing states */
	return "SMC_CLOSING";
}

/*
 * smc_diag reports AF_SMC as the family of every socket; an IPv4 address
 * fills the first word of the four, an IPv6 one more.
 */
static int addr_family(const __be32 *a, const __be32 *b)
{
	return a[1] | a[2] | a[3] | b[1] | b[2] | b[3] ? AF_INET6 : AF_INET;
}

static void addr_str(int family, const __be32 *a, __be16 port, char *out, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, a, ip, sizeof(ip));
	snprintf(out, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, ntohs(port));
}

static void show(struct nlmsghdr *nh)
{
	struct smc_diag_msg *r = NLMSG_DATA(nh);
	int len = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(*r));
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(sizeof(*r)));
	static const char *const modes[] = { "SMCR", "TCP", "SMCD" };
	int family = addr_family(r->id.idiag_src, r->id.idiag_dst);
	char loc[64], peer[64];

	addr_str(family, r->id.idiag_src, r->id.idiag_sport, loc, sizeof(loc));
	addr_str(family, r->id.idiag_dst, r->id.idiag_dport, peer, sizeof(peer));
	printf("%s %s %s %s", state_name(r->diag_state),
	       r->diag_mode < 3 ? modes[r->diag_mode] : "?", loc, peer);
	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		void *d = (char *)a + NLA_HDRLEN;

		if (a->nla_type == SMC_DIAG_LGRINFO &&
		    a->nla_len >= NLA_HDRLEN + sizeof(struct smc_diag_lgrinfo)) {
			struct smc_diag_lgrinfo *l = d;

			printf(" rdma %.*s port %u gid %.40s peer %.40s", IB_DEVICE_NAME_MAX,
			       (char *)l->lnk[0].ibname, l->lnk[0].ibport,
			       (char *)l->lnk[0].gid, (char *)l->lnk[0].peer_gid);
		} else if (a->nla_type == SMC_DIAG_FALLBACK &&
			   a->nla_len >= NLA_HDRLEN + sizeof(struct smc_diag_fallback)) {
			struct smc_diag_fallback *f = d;

			if (f->reason || f->peer_diagnosis)
				printf(" fallback 0x%08x/0x%08x", f->reason, f->peer_diagnosis);
		}
	}
	putchar('\n');
}

static void ss(void)
{
	int fd = nl_open(NETLINK_SOCK_DIAG), done = 0;
	struct {
		struct nlmsghdr nh;
		struct smc_diag_req req;
	} q;
	struct msg m;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	q.nh.nlmsg_seq = 1;
	q.req.diag_family = AF_SMC;
	q.req.diag_ext = (1 << (SMC_DIAG_CONNINFO - 1)) | (1 << (SMC_DIAG_LGRINFO - 1));
	if (send(fd, &q, sizeof(q), 0) < 0)
		die("sock_diag send: %s", strerror(errno));
	while (!done) {
		ssize_t n = nl_recv(fd, &m);
		struct nlmsghdr *nh = &m.nh;

		for (; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR)
				die("sock_diag for AF_SMC: %s (is smc_diag.ko loaded?)",
				    strerror(-((struct nlmsgerr *)NLMSG_DATA(nh))->error));
			show(nh);
		}
	}
	close(fd);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "pnet"))
		pnet_add(argv[2], argv[3], NULL);
	else if (argc == 5 && !strcmp(argv[1], "pnet") && !strcmp(argv[3], "-"))
		pnet_add(argv[2], NULL, argv[4]);
	else if (argc == 3 && !strcmp(argv[1], "ueid"))
		ueid_add(argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "flush"))
		flush();
	else if (argc == 2 && !strcmp(argv[1], "ss"))
		ss();
	else
		die("usage: sroce_smc pnet PNETID NETDEV | pnet PNETID - RDMADEV | ueid UEID | flush | ss");
	return 0;
}
