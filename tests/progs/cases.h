/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cases.h - the case runner shared by the test programs that run named
 * cases one after the other: sroce_misuse, sroce_peer, sroce_rc_test and
 * sroce_ud_test.
 *
 * A program keeps its own table of cases (name first, then whatever its
 * cases need) and hands the runner two functions over it: the name of
 * case i, and how to run case i.  The runner selects the cases by the
 * comma-separated lists the program's options name (-t CASE,... runs only
 * those, -x CASE,... all but those; sroce_peer's -s is its -t), lists them
 * (-l), runs them in table order and prints one verdict line for each:
 *
 *	NAME: pass
 *	NAME: skip WHY
 *	NAME: FAIL WHY
 *
 * which the test groups (tests/groups/, tests/lib-rdma.sh) grep for:
 * keep these lines as they are.  It counts the verdicts; each program
 * prints its own summary line, if any, and picks its exit status from the
 * counts.
 *
 * Plain C and libc only: sroce_misuse, which speaks the uverbs ABI
 * itself, links it without libibverbs.
 */
#ifndef SROCE_TEST_CASES_H
#define SROCE_TEST_CASES_H

#include <stdbool.h>
#include <stddef.h>

/* What running one case comes to. */
enum case_verdict {
	CASE_PASS,
	CASE_SKIP,	/* "NAME: skip WHY" */
	CASE_FAIL,	/* "NAME: FAIL WHY" */
	CASE_FAILED,	/* failed, and the case printed its own FAIL lines */
};

/* The length of a case's reason, "WHY" above, with its NUL. */
#define CASE_WHY 1024

struct runner {
	size_t ncases;
	const char *(*name)(size_t i);
	/* Run case i; for CASE_SKIP and CASE_FAIL, say why in @why. */
	enum case_verdict (*run)(size_t i, char *why, size_t len);
	const char *only;	/* comma-separated: only these (NULL: every case) */
	const char *exclude;	/* comma-separated: not these */
	bool timed;		/* "(NAME: S.s s)" on stderr after each case */
	/* what cases_run() counted */
	unsigned int ran, passed, skipped, failed;
};

/* @name is one of the names in the comma-separated @list. */
bool case_listed(const char *list, const char *name);

/* Case @i is selected: in r->only (if any) and not in r->exclude. */
bool case_wanted(const struct runner *r, size_t i);

/* How many cases are selected. */
size_t cases_wanted(const struct runner *r);

/* The first name in the comma-separated @list that is no case, or NULL. */
const char *case_unknown(const struct runner *r, const char *list);

/* Print every case's name, one a line (-l). */
void cases_list(const struct runner *r);

/* Run the selected cases in table order, each with its verdict line. */
void cases_run(struct runner *r);

#endif
