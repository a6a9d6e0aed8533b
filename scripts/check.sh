#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make check": every group (or those named) on the kernel sroce was built
# for (scripts/run-tests.sh), then, when no group was named, the core tier
# on each further kernel in SROCE_CORE_KVERS (scripts/check-kernel.sh),
# and one summary line over all of it, last.
#
# usage: check.sh [GROUP...]
# SROCE_KVER: the kernel of the first run (make exports KVER);
# SROCE_CORE_KVERS, SROCE_CORE_GROUPS, SROCE_CORE_TESTS: the further
# kernels, and the tier (those tests of those groups; empty: all).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rc=0
dirs=("$root/build/test-results")
"$root/scripts/run-tests.sh" "$@" || rc=1

if [ $# -eq 0 ]; then
	for k in ${SROCE_CORE_KVERS:-}; do
		[ "$k" != "${SROCE_KVER:-}" ] || continue
		echo "--- core tier on $k: ${SROCE_CORE_TESTS:-$SROCE_CORE_GROUPS}"
		rm -rf "$root/build/test-results-$k"
		SROCE_TESTS=${SROCE_CORE_TESTS:-} \
			"$root/scripts/check-kernel.sh" "$k" $SROCE_CORE_GROUPS || rc=1
		dirs+=("$root/build/test-results-$k")
		# A build that failed ran nothing: one failure that says so.
		if [ ! -s "$root/build/test-results-$k/results.tsv" ]; then
			mkdir -p "$root/build/test-results-$k"
			printf 'FAIL\tcore-tier\t%s\t0\tnothing ran (the build for it failed)\n' "$k" \
				>>"$root/build/test-results-$k/results.tsv"
			echo "FAIL core-tier/$k: nothing ran (the build for it failed)"
			rc=1
		fi
	done
fi

[ ${#dirs[@]} -gt 1 ] || exit "$rc"
passed=0 failed=0
for d in "${dirs[@]}"; do
	[ -f "$d/results.tsv" ] || continue
	passed=$((passed + $(awk -F'\t' '$1 == "PASS"' "$d/results.tsv" | wc -l)))
	failed=$((failed + $(awk -F'\t' '$1 == "FAIL"' "$d/results.tsv" | wc -l)))
done
echo "--- all kernels: ${dirs[*]##*/}"
echo "$passed passed, $failed failed"
exit "$rc"
