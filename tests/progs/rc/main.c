// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_rc_test - the RC transport, tested from one process.
 *
 * usage: sroce_rc_test -d DEV1 [-D DEV2] [-g GIDIDX] [-G GIDIDX2] [-m MTU]
 *                      [-M MTU] [-t CASE,...] [-x CASE,...] [-u IP] [-w POLL_MS]
 *                      [-T CASE_TIMEOUT_S] [-a ACK_TIMEOUT] [-Q QPNS] [-l] [-v]
 *
 * Opens two devices (or one device twice: loopback), and for each case
 * connects RC QP pairs directly: QPN, PSN and GID are exchanged in-process
 * and each QP is taken to INIT, RTR and RTS with a RoCE address vector
 * (GRH with the peer's GID, our GID index, hop limit 64).  Side A (DEV1)
 * is the requester, side B (DEV2) the responder, unless a case says
 * otherwise.  Every case checks the data byte for byte (and that nothing
 * around it was written) and every completion: status, opcode, byte_len,
 * immediate data, wr_id and qp_num.
 *
 * Each case runs in its own child process under a timeout and prints one
 * line: "case: pass", "case: skip why" or "case: FAIL why".  A case skips,
 * in whole or in part (it runs what it can, then reports the skip), only
 * for a capability a device does not advertise (ibv_query_device,
 * ibv_query_port, or for inline data the QP creation that refuses it with
 * EINVAL; for thread and parent domains, which nothing advertises, the
 * provider's EOPNOTSUPP); what the devices advertise is exercised, and a
 * failure there is a failure.  The exit status is 1 if any case failed, 2 on a usage error
 * or if the devices cannot even be set up (then one "setup: FAIL why" line
 * says why).
 *
 * -g/-G default to the first RoCE v2 GID holding an IPv4 address; -m is
 * the path MTU of every case except "send", which runs at every MTU up to
 * the ports' active MTU (-M: and fails if that is below MTU); -u names the address of a peer that does not
 * exist (default: our IPv4 GID with the last byte replaced by 254); -w is
 * how long a completion is waited for; -a is the local ACK timeout of the
 * QPs (the verbs' exponent: 4.096 us << ACK_TIMEOUT; default 14, 67 ms),
 * except in the cases that test the timeout itself; -Q says that QP numbers
 * on DEV2 come back within QPNS creations (sroce's max_qpn lowered), for
 * the case that needs a number reused (mw2_qp_gone); -l lists the cases.
 */

#include "rc.h"

struct options opt = {
	.gidx = { -1, -1 },
	.mtu = IBV_MTU_1024,
	.poll_ms = 20000,
	.case_timeout = 180,
	.ack_timeout = 14,	/* 4.096 us << 14: 67 ms */
};

/* --- the case table and the runner --------------------------------------------- */

static const struct tcase {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "send", case_send },
	{ "send_imm", case_send_imm },
	{ "send_sge", case_send_sge },
	{ "send_inline", case_send_inline },
	{ "send_solicited", case_send_solicited },
	{ "flush_solicited", case_flush_solicited },
	{ "send_unsignaled", case_send_unsignaled },
	{ "rdma_write", case_rdma_write },
	{ "rdma_write_imm", case_rdma_write_imm },
	{ "rdma_write_zero", case_rdma_write_zero },
	{ "rdma_read", case_rdma_read },
	{ "rdma_read_sge", case_rdma_read_sge },
	{ "read_stream", case_read_stream },
	{ "atomic_cas", case_atomic_cas },
	{ "atomic_faa", case_atomic_faa },
	{ "atomic_unaligned", case_atomic_unaligned },
	{ "atomic_unaligned_wr", case_atomic_unaligned_wr },
	{ "atomic_write", case_atomic_write },
	{ "atomic_write_errors", case_atomic_write_errors },
	{ "cq_timestamps", case_cq_timestamps },
	{ "device_memory", case_device_memory },
	{ "device_memory_misuse", case_device_memory_misuse },
	{ "wr_api", case_wr_api },
	{ "wr_api_sge_list", case_wr_api_sge_list },
	{ "wr_api_inline", case_wr_api_inline },
	{ "fill_sq", case_fill_sq },
	{ "sq_one_deep", case_sq_one_deep },
	{ "many_qps", case_many_qps },
	{ "err_rkey", case_err_rkey },
	{ "err_read_range", case_err_read_range },
	{ "err_write_access", case_err_write_access },
	{ "rnr_infinite", case_rnr_infinite },
	{ "rnr_exceeded", case_rnr_exceeded },
	{ "retry_exceeded", case_retry_exceeded },
	{ "flush", case_flush },
	{ "flush_recv_in_err", case_flush_recv_in_err },
	{ "recv_too_small", case_recv_too_small },
	{ "qp_caps", case_qp_caps },
	{ "post_bad_state", case_post_bad_state },
	{ "post_too_many_sge", case_post_too_many_sge },
	{ "post_inline_too_big", case_post_inline_too_big },
	{ "post_recv_too_many_sge", case_post_recv_too_many_sge },
	{ "mw2_qp_gone", case_mw2_qp_gone },
	{ "parent_domain", case_parent_domain },
	{ "parent_domain_busy", case_parent_domain_busy },
	{ "xrc", case_xrc },
	{ "xrc_errors", case_xrc_errors },
	{ "tm", case_tm },
	{ "tm_errors", case_tm_errors },
	{ "odp", case_odp },
	{ "odp_implicit", case_odp_implicit },
	{ "odp_remap", case_odp_remap },
	{ "odp_memlock", case_odp_memlock },
	{ "odp_errors", case_odp_errors },
	{ "import", case_import },
};

/* In the child: open, run, release; report "P", "S why" or "F why" on @fd. */
static void child(int (*fn)(void), int fd)
{
	char st;
	int ret;

	alarm((unsigned int)opt.case_timeout);
	why[0] = 0;
	ret = devs_open();
	if (!ret)
		ret = fn();
	if (release_all() && !ret)
		ret = -1;
	st = ret == 0 ? 'P' : ret == SKIP ? 'S' : 'F';
	if (write(fd, &st, 1) != 1 || write(fd, why, strlen(why)) < 0)
		_exit(3);
	_exit(0);
}

static int setup_only(void)
{
	struct qp_conf c;
	struct pair p;

	conf_init(&c);
	return pair_up(&p, &c);
}

/* Run @fn in a child process; returns 'P', 'S' or 'F' with the reason in @msg. */
static char run_isolated(int (*fn)(void), char *msg, size_t msglen)
{
	char buf[sizeof(why) + 1];
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		close(fds[0]);
		child(fn, fds[1]);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fds[0]);
	buf[got] = 0;
	waitpid(pid, &status, 0);
	if (got > 0) {
		snprintf(msg, msglen, "%s", buf + 1);
		return buf[0];
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(msg, msglen, "timed out after %d s", opt.case_timeout);
	else if (WIFSIGNALED(status))
		snprintf(msg, msglen, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(msg, msglen, "exited with status %d without a verdict", WEXITSTATUS(status));
	return 'F';
}

static const char *case_name(size_t i)
{
	return cases[i].name;
}

/* Each case runs in a child process (run_isolated()), under -T's timeout. */
static enum case_verdict case_run(size_t i, char *msg, size_t len)
{
	char st = run_isolated(cases[i].fn, msg, len);

	return st == 'P' ? CASE_PASS : st == 'S' ? CASE_SKIP : CASE_FAIL;
}

static struct runner runner = {
	.ncases = ARRAY_SIZE(cases),
	.name = case_name,
	.run = case_run,
	.timed = true,
};

/* Every name in @list is a case. */
static void check_list(const char *list)
{
	const char *bad = case_unknown(&runner, list);

	if (bad) {
		fprintf(stderr, "sroce_rc_test: no case '%s' (-l lists them)\n", bad);
		exit(2);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: sroce_rc_test -d DEV1 [-D DEV2] [-g GIDIDX] [-G GIDIDX2] [-m MTU]\n"
		"                     [-M MTU] [-t CASE,...] [-x CASE,...] [-u IP] [-w POLL_MS]\n"
		"                     [-T CASE_TIMEOUT_S] [-a ACK_TIMEOUT] [-Q QPNS] [-l] [-v]\n");
	exit(2);
}

static enum ibv_mtu mtu_of(const char *s)
{
	int m = atoi(s);

	switch (m) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	fprintf(stderr, "sroce_rc_test: bad MTU %s\n", s);
	exit(2);
}

/* The QPs' local ACK timeout, as the exponent the verbs take (1..31). */
static uint8_t ack_timeout_of(const char *s)
{
	int t = atoi(s);

	if (t < 1 || t > 31) {
		fprintf(stderr, "sroce_rc_test: bad ACK timeout %s (1..31)\n", s);
		exit(2);
	}
	return (uint8_t)t;
}

/* How many QP creations bring a number back (-Q): 1..65536. */
static int qpn_wrap_of(const char *s)
{
	int n = atoi(s);

	if (n < 1 || n > 65536) {
		fprintf(stderr, "sroce_rc_test: bad -Q %s (1..65536)\n", s);
		exit(2);
	}
	return n;
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "d:D:g:G:m:M:t:x:u:w:T:a:Q:lv")) != -1) {
		switch (c) {
		case 'd': opt.dev[0] = optarg; break;
		case 'D': opt.dev[1] = optarg; break;
		case 'g': opt.gidx[0] = atoi(optarg); break;
		case 'G': opt.gidx[1] = atoi(optarg); break;
		case 'm': opt.mtu = mtu_of(optarg); break;
		case 'M': opt.send_mtu = mtu_of(optarg); break;
		case 't': runner.only = optarg; break;
		case 'x': runner.exclude = optarg; break;
		case 'u': opt.unreach = optarg; break;
		case 'w': opt.poll_ms = atoi(optarg); break;
		case 'T': opt.case_timeout = atoi(optarg); break;
		case 'a': opt.ack_timeout = ack_timeout_of(optarg); break;
		case 'Q': opt.qpn_wrap = qpn_wrap_of(optarg); break;
		case 'v': opt.verbose = true; break;
		case 'l':
			cases_list(&runner);
			exit(0);
		default: usage();
		}
	}
	if (!opt.dev[0] || optind != argc)
		usage();
	if (!opt.dev[1])
		opt.dev[1] = opt.dev[0];
	if (opt.gidx[1] < 0)
		opt.gidx[1] = opt.gidx[0];
	check_list(runner.only);
	check_list(runner.exclude);
}

int main(int argc, char **argv)
{
	char msg[sizeof(why) + 64];

	parse(argc, argv);
	if (run_isolated(setup_only, msg, sizeof(msg)) != 'P') {
		printf("setup: FAIL %s\n", msg);
		return 2;
	}
	cases_run(&runner);
	return runner.failed ? 1 : 0;
}
