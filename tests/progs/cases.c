// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cases.c - the case runner shared by the test programs (cases.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cases.h"

bool case_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

bool case_wanted(const struct runner *r, size_t i)
{
	const char *name = r->name(i);

	if (r->only && !case_listed(r->only, name))
		return false;
	return !r->exclude || !case_listed(r->exclude, name);
}

size_t cases_wanted(const struct runner *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ncases; i++)
		n += case_wanted(r, i);
	return n;
}

const char *case_unknown(const struct runner *r, const char *list)
{
	static char tok[256];
	const char *p = list, *end;
	size_t i, len;

	while (p && *p) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		for (i = 0; i < r->ncases; i++)
			if (strlen(r->name(i)) == len && !strncmp(r->name(i), p, len))
				break;
		if (len && i == r->ncases) {
			snprintf(tok, sizeof(tok), "%.*s", (int)len, p);
			return tok;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

void cases_list(const struct runner *r)
{
	size_t i;

	for (i = 0; i < r->ncases; i++)
		printf("%s\n", r->name(i));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cases_run(struct runner *r)
{
	char why[CASE_WHY];
	const char *name;
	enum case_verdict v;
	double t0;
	size_t i;

	for (i = 0; i < r->ncases; i++) {
		if (!case_wanted(r, i))
			continue;
		name = r->name(i);
		why[0] = 0;
		t0 = now_s();
		v = r->run(i, why, sizeof(why));
		r->ran++;
		switch (v) {
		case CASE_PASS:
			printf("%s: pass\n", name);
			r->passed++;
			break;
		case CASE_SKIP:
			printf("%s: skip %s\n", name, why);
			r->skipped++;
			break;
		case CASE_FAIL:
			printf("%s: FAIL %s\n", name, why);
			r->failed++;
			break;
		case CASE_FAILED:
			r->failed++;
			break;
		}
		fflush(stdout);
		if (r->timed)
			fprintf(stderr, "(%s: %.1f s)\n", name, now_s() - t0);
	}
}
