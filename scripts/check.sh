#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make check": every group (or those named) on the kernel sroce was built
# for (scripts/run-tests.sh), and, when no group was named, the core tier
# on each further kernel in SROCE_CORE_KVERS (scripts/check-kernel.sh) at
# the same time, each in its own guest; then one summary line over all of
# it, last.  The further kernels' output is shown when the first run is
# over, not mixed into it (build/test-results-KVER.out).
#
# usage: check.sh [GROUP...]
# SROCE_KVER: the kernel of the first run (make exports KVER);
# SROCE_CORE_KVERS, SROCE_CORE_GROUPS, SROCE_CORE_TESTS: the further
# kernels, and the tier (those tests of those groups; empty: all).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rc=0
dirs=("$root/build/test-results")
kvers=()

# core_tier KVER: the core tier on KVER, in one guest (one lane), its
# output in test-results-KVER.out, its status check-kernel.sh's; a run
# that ran nothing (its build failed) is one failure that says so.
core_tier() {
	local k=$1 d=$root/build/test-results-$1 s=0
	rm -rf "$d"
	mkdir -p "$root/build"
	SROCE_LANES=1 SROCE_TESTS=${SROCE_CORE_TESTS:-} \
		"$root/scripts/check-kernel.sh" "$k" $SROCE_CORE_GROUPS >"$d.out" 2>&1 || s=$?
	if [ ! -s "$d/results.tsv" ]; then
		mkdir -p "$d"
		printf 'FAIL\tcore-tier\t%s\t0\tnothing ran (%s)\n' "$k" "${d#"$root"/}.out" >>"$d/results.tsv"
		echo "FAIL core-tier/$k: nothing ran (${d#"$root"/}.out)" >>"$d.out"
	fi
	return "$s"
}

pids=()
if [ $# -eq 0 ]; then
	for k in ${SROCE_CORE_KVERS:-}; do
		[ "$k" != "${SROCE_KVER:-}" ] || continue
		core_tier "$k" &
		pids+=($!)
		kvers+=("$k")
		dirs+=("$root/build/test-results-$k")
	done
fi
"$root/scripts/run-tests.sh" "$@" || rc=1
for i in "${!kvers[@]}"; do
	wait "${pids[$i]}" || rc=1
	echo "--- core tier on ${kvers[$i]}: ${SROCE_CORE_TESTS:-$SROCE_CORE_GROUPS}"
	cat "$root/build/test-results-${kvers[$i]}.out"
done

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
