// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_misuse - a hostile provider: it opens the uverbs character device
 * of an sroce device itself, speaks the uverbs ABIs directly with sroce's
 * driver data (uapi/rdma/sroce-abi.h), and then misbehaves: invalid
 * commands, and corrupt rings.  Commands go through all three entry points
 * of the file: write() commands (<rdma/ib_user_verbs.h>), extended write()
 * commands (IB_USER_VERBS_CMD_FLAG_EXTENDED, struct ib_uverbs_ex_cmd_hdr),
 * and the RDMA_VERBS_IOCTL ioctl (<rdma/rdma_user_ioctl_cmds.h>, objects
 * and methods of <rdma/ib_user_ioctl_cmds.h>), whose requests the ioc_*
 * helpers build attribute by attribute.
 *
 * usage: sroce_misuse -d DEV -g GIDIDX [-t CASE,...] [-x CASE,...]
 *                     [-s SECONDS] [-l] [-K]
 *
 * Every case opens its own context (a fresh uverbs file) and ends by
 * closing it, so the kernel also tears down whatever the case left in
 * whatever state it left it.  Command cases check the exact errno of each
 * bad command (or, where several answers are right, the documented set);
 * ring cases check that a corrupt ring only fails the queue it belongs to:
 * error completions, the QP in ERR, an async event.  Each case prints
 * "case: pass" or "case: FAIL why"; the exit status is 1 if any failed, 2
 * on a usage or setup error.
 *
 * -s is how long the racing scribble case runs (default 8 s).  -K runs
 * only that case, forever, after printing "scribbling": the test group
 * kills it with SIGKILL in the middle.  -l lists the cases.
 *
 * The loopback QPs talk to each other through the device's GID GIDIDX.
 */

#include "misuse.h"

const char *dev_name;
int gid_index = -1;
uint8_t gid[16];
char uverbs_path[300];
int scribble_secs = 8;
const char *cur_case;
int case_failed;

/* ==== the table ==================================================================== */

struct tcase {
	const char *name;
	void (*fn)(void);
};

static const struct tcase cases[] = {
	{ "get_context", c_get_context },
	{ "headers", c_headers },
	{ "pd", c_pd },
	{ "cq", c_cq },
	{ "qp_create", c_qp_create },
	{ "qp_modify", c_qp_modify },
	{ "post", c_post },
	{ "srq", c_srq },
	{ "mr", c_mr },
	{ "mw_ah", c_mw_ah },
	{ "mmap", c_mmap },
	{ "dm", c_dm },
	{ "cross_context", c_cross_context },
	{ "ioctl_hdr", c_ioctl_hdr },
	{ "ioctl_device", c_ioctl_device },
	{ "ioctl_cq", c_ioctl_cq },
	{ "ioctl_qp", c_ioctl_qp },
	{ "ioctl_srq", c_ioctl_srq },
	{ "tm", c_tm },
	{ "ioctl_events", c_ioctl_events },
	{ "ioctl_objects", c_ioctl_objects },
	{ "ioctl_write", c_ioctl_write },
	{ "ex_query", c_ex_query },
	{ "ex_cq", c_ex_cq },
	{ "ex_qp", c_ex_qp },
	{ "ex_unsupported", c_ex_unsupported },
	{ "sq_prod_huge", r_sq_prod_huge },
	{ "sq_prod_backwards", r_sq_prod_backwards },
	{ "bad_send_wqes", r_bad_send_wqes },
	{ "ud_bad_ah", r_ud_bad_ah },
	{ "bad_recv_wqes", r_bad_recv_wqes },
	{ "srq_garbage", r_srq_garbage },
	{ "cq_cons_wild", r_cq_cons_wild },
	{ "cq_resize", r_cq_resize },
	{ "reset_wild", r_reset_wild },
	{ "err_doorbells", r_err_doorbells },
	{ "flush_race", r_flush_race },
	{ "cq_resize_race", r_cq_resize_race },
	{ "sq_full_flush", r_sq_full_flush },
	{ "scribble", r_scribble_timed },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const char *case_name(size_t k)
{
	return cases[k].name;
}

/* Each case opens its own context and prints its own FAIL lines (bad()). */
static enum case_verdict case_run(size_t k, char *why, size_t len)
{
	(void)why;
	(void)len;
	cur_case = cases[k].name;
	case_failed = 0;
	cases[k].fn();
	return case_failed ? CASE_FAILED : CASE_PASS;
}

/* The uverbs device of @dev and its GID @gid_index. */
static void find_device(void)
{
	char path[512], line[128];
	struct dirent *e;
	DIR *d = opendir("/sys/class/infiniband_verbs");
	FILE *f;
	unsigned int g[8];
	int i;

	if (!d)
		setup_die("no /sys/class/infiniband_verbs");
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && !strcmp(strtok(line, "\n"), dev_name))
			snprintf(uverbs_path, sizeof(uverbs_path), "/dev/infiniband/%s", e->d_name);
		fclose(f);
	}
	closedir(d);
	if (!uverbs_path[0])
		setup_die("no uverbs device for %s", dev_name);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/%d", dev_name, gid_index);
	f = fopen(path, "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "%x:%x:%x:%x:%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
		   &g[6], &g[7]) != 8)
		setup_die("cannot read %s", path);
	fclose(f);
	for (i = 0; i < 8; i++) {
		gid[2 * i] = (uint8_t)(g[i] >> 8);
		gid[2 * i + 1] = (uint8_t)g[i];
	}
}

int main(int argc, char **argv)
{
	struct runner r = { .ncases = NCASES, .name = case_name, .run = case_run };
	bool forever = false;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:t:x:s:lK")) != -1) {
		switch (opt) {
		case 'd': dev_name = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 't': r.only = optarg; break;
		case 'x': r.exclude = optarg; break;
		case 's': scribble_secs = atoi(optarg); break;
		case 'K': forever = true; break;
		case 'l':
			cases_list(&r);
			return 0;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDIDX [-t CASE,...] [-x CASE,...] "
				"[-s SECONDS] [-l] [-K]\n", argv[0]);
			return 2;
		}
	}
	if (!dev_name || gid_index < 0) {
		fprintf(stderr, "%s: -d and -g are required\n", argv[0]);
		return 2;
	}
	srand(4791);
	signal(SIGPIPE, SIG_IGN);
	find_device();
	if (forever) {
		cur_case = "scribble_forever";
		r_scribble(true);
		return 1;
	}
	cases_run(&r);
	printf("%u cases, %u failed\n", r.ran, r.failed);
	return r.failed ? 1 : 0;
}
