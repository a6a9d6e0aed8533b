#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The tests a group declares, read from the group's text, never by running
# it: a group script that stops early, or never gets to t_main, cannot hide
# a test from whoever counts the results (tests/lib.sh t_main,
# tests/guest-main.sh, scripts/run-tests.sh, scripts/vm/merge-pair-results.py).
#
# usage: declared.sh GROUP...      "GROUP<TAB>TEST" lines, in file order,
#                                  each test once
#        declared.sh -a GROUP...   the same, every declaration (a test
#                                  declared twice twice), SROCE_TESTS or not
#        declared.sh -u GROUP...   the names in SROCE_TESTS that are no
#                                  test of any GROUP, one a line
#
# A line of tests/groups/GROUP.sh (or of GROUP, if it names a file) that
# begins "test_NAME()" declares test NAME.  Without -a, only the tests
# SROCE_TESTS selects: its words (separated by blanks or commas) are test
# names, matched whole; empty or unset selects every test.
set -u

here=$(cd "$(dirname "$0")" && pwd)
mode=selected
case ${1:-} in
-a) mode=all; shift ;;
-u) mode=unknown; shift ;;
esac
files=()
for g in "$@"; do
	case $g in
	*/*|*.sh) f=$g ;;
	*) f=$here/groups/$g.sh ;;
	esac
	[ -f "$f" ] || { echo "declared.sh: no group '$g' ($f)" >&2; exit 2; }
	files+=("$f")
done
[ ${#files[@]} -gt 0 ] || { echo "usage: declared.sh [-a|-u] GROUP..." >&2; exit 2; }

awk -v mode="$mode" -v sel="${SROCE_TESTS:-}" '
BEGIN {
	n = split(sel, w, /[[:space:],]+/)
	nw = 0
	for (i = 1; i <= n; i++)
		if (w[i] != "" && !(w[i] in want)) {
			want[w[i]] = 1
			order[++nw] = w[i]
		}
}
FNR == 1 {
	g = FILENAME
	sub(/.*\//, "", g)
	sub(/\.sh$/, "", g)
}
/^test_[A-Za-z0-9_]+\(\)/ {
	t = $0
	sub(/^test_/, "", t)
	sub(/\(\).*/, "", t)
	have[t] = 1
	if (mode == "unknown" || (mode != "all" && seen[g, t]++))
		next
	if (mode == "all" || nw == 0 || (t in want))
		printf "%s\t%s\n", g, t
}
END {
	if (mode == "unknown")
		for (i = 1; i <= nw; i++)
			if (!(order[i] in have))
				print order[i]
}' "${files[@]}"
