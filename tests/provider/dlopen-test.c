// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dlopen-test.c - load the sroce provider as libibverbs does and check what
 * its constructor registers.  Needs no RDMA device.
 *
 * Usage: dlopen-test /abs/path/libsroce-rdmav34.so
 * Build: see check-provider.sh (links -libverbs and exports
 *        verbs_register_driver_34 from the executable).
 *
 * The executable defines verbs_register_driver_34() itself.  It comes first
 * in the global lookup scope, so the provider's constructor calls this
 * definition, which records the ops table and passes it on to the real one
 * in libibverbs.so.1 (IBVERBS_PRIVATE_34); the provider therefore really
 * registers with the installed library.  dlopen() uses RTLD_NOW like
 * libibverbs, so any unresolved symbol or missing symbol version fails the
 * load.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/sroce-abi.h>

#include "verbs-private.h"

#define NAME_PATTERN	"rdma_device:*N" SROCE_DEVICE_NAME_PREFIX "*"
#define SROCE_DEV0	SROCE_DEVICE_NAME_PREFIX "0"

static const struct verbs_device_ops *registered;
static unsigned int nr_registered;
static int failures;

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	static const char sym[] = "verbs_register_driver_34";
	static const char ver[] = "IBVERBS_PRIVATE_34";
	void (*real)(const struct verbs_device_ops *ops);

	registered = ops;
	nr_registered++;

	real = (void (*)(const struct verbs_device_ops *))
		dlvsym(RTLD_NEXT, sym, ver);
	if (!real) {
		printf("FAIL: libibverbs.so.1 lacks %s@%s\n", sym, ver);
		exit(1);
	}
	real(ops);
}

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static int is_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--)
		if (*b++)
			return 0;
	return 1;
}

static void check_match_table(const struct verbs_match_ent *tab)
{
	const char *pat = tab[0].u.modalias;

	expect(tab[0].kind == VERBS_MATCH_MODALIAS,
	       "first match entry is a MODALIAS pattern");
	expect(pat && !strcmp(pat, NAME_PATTERN), "pattern is " NAME_PATTERN);
	expect(pat && !fnmatch(pat, "rdma_device:N" SROCE_DEV0, 0),
	       "pattern matches device " SROCE_DEV0);
	expect(pat && fnmatch(pat, "rdma_device:Nrxe0", 0) == FNM_NOMATCH,
	       "pattern does not match rxe0");
	expect(is_zero(&tab[1], sizeof(tab[1])),
	       "second entry is the all-zero sentinel");
}

static void check_ops(const struct verbs_device_ops *ops)
{
	struct verbs_device *vdev;

	expect(ops->name && !strcmp(ops->name, "sroce"), "name is \"sroce\"");
	expect(ops->match_min_abi_version == SROCE_UVERBS_ABI_VERSION &&
	       ops->match_max_abi_version == SROCE_UVERBS_ABI_VERSION,
	       "uverbs ABI range is exactly SROCE_UVERBS_ABI_VERSION");
	expect(!ops->static_providers && !ops->match_device,
	       "no static_providers or match_device");
	expect(ops->alloc_context && ops->import_context &&
	       ops->alloc_device && ops->uninit_device,
	       "alloc_context, import_context, alloc_device and uninit_device are set");
	expect(!!ops->match_table, "match table is set");
	if (ops->match_table)
		check_match_table(ops->match_table);

	if (!ops->alloc_device || !ops->uninit_device)
		return;
	vdev = ops->alloc_device(NULL);
	expect(vdev && is_zero(vdev, sizeof(*vdev)),
	       "alloc_device returns a zeroed verbs_device");
	if (vdev)
		ops->uninit_device(vdev);
}

int main(int argc, char **argv)
{
	void *handle;

	if (argc != 2) {
		fprintf(stderr, "usage: %s /abs/path/libsroce-rdmav34.so\n",
			argv[0]);
		return 2;
	}

	handle = dlopen(argv[1], RTLD_NOW);
	if (!handle) {
		printf("FAIL: dlopen(RTLD_NOW): %s\n", dlerror());
		return 1;
	}
	expect(1, "dlopen(RTLD_NOW) resolved every symbol and version");
	expect(nr_registered == 1,
	       "constructor registered exactly once with libibverbs");

	/* A second load only takes a reference; libibverbs does the same. */
	expect(dlopen(argv[1], RTLD_NOW) == handle && nr_registered == 1,
	       "loading again does not register again");

	if (registered)
		check_ops(registered);

	/* No dlclose(): libibverbs keeps the registered ops pointer. */
	puts(failures ? "dlopen-test: FAILED" : "dlopen-test: passed");
	return failures ? 1 : 0;
}
