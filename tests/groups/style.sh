#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=host order=0
#
# Build gates, on the host: the kernel sources compile with W=1 and sparse
# (C=2) without a single warning, pass checkpatch --strict and kernel-doc,
# and the provider builds warning-free with clang -Weverything and sparse
# and passes its host-side ABI checks.
. "$(dirname "$0")/../lib.sh"

tools=$SROCE_ROOT/build/tools
kernel_sources() {
	(cd "$SROCE_ROOT" && ls drivers/sroce/*.[ch] include/sroce/*.h uapi/rdma/*.h tests/kmod/*.[ch] |
		grep -v '\.mod\.c$')
}

# checkpatch.pl and kernel-doc come from Debian's linux-source package.
extract_tools() {
	[ -x "$tools/checkpatch.pl" ] && [ -x "$tools/kernel-doc" ] && return 0
	local tarball
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
	[ -n "$tarball" ] || fail "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source-6.1)"
	local top
	top=$(basename "$tarball" .tar.xz)
	mkdir -p "$tools"
	tar -xJf "$tarball" -C "$tools" --strip-components=2 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" "$top/scripts/kernel-doc"
}

test_kbuild_w1_sparse() {
	local kver out
	kver=$("$SROCE_ROOT/scripts/kver.sh")
	# C=2 runs sparse on every source, whether or not it is rebuilt.
	out=$(make -C "/lib/modules/$kver/build" M="$SROCE_ROOT" W=1 C=2 modules 2>&1) ||
		{ echo "$out"; fail "build failed"; }
	echo "$out"
	! grep -E 'warning:|error:' <<<"$out" || fail "compiler or sparse warnings"
	grep -q 'CHECK .*drivers/sroce/net.c' <<<"$out" || fail "sparse did not run"
}

# A checker that cannot run fails its test as findings do: xargs exits 123
# when a run of the checker exited 1 to 125 (checkpatch does so on
# findings, and only then), 124 when one exited 255 (perl's die), 125
# when one was killed, 126 or 127 when it could not be started.  Without
# findings each checker exits 0 and says nothing but what it is told to
# (checkpatch --terse nothing, kernel-doc -v its "info:" lines); anything
# else it says fails the test.  And each must first find the flaw planted
# in a canary file, so that a checker that runs but checks nothing fails.

# canary NAME WANT TEXT CHECKER...: CHECKER run on a file holding TEXT
# must print WANT.
canary() {
	local name=$1 want=$2 text=$3 dir out rc=0
	shift 3
	dir=$(mktemp -d)
	printf '%s' "$text" >"$dir/canary.c"
	out=$("$@" "$dir/canary.c" 2>&1) || rc=$?
	rm -rf "$dir"
	grep -qF -- "$want" <<<"$out" ||
		fail "$name missed the flaw in its canary file (expected '$want'; status $rc, said: $(head -n 3 <<<"$out" | tr '\n' ' '))"
}

test_checkpatch() {
	local out rc=0 cmd
	extract_tools
	cmd=("$tools/checkpatch.pl" --strict --no-tree --terse --show-types -f)
	canary checkpatch TRAILING_WHITESPACE $'// SPDX-License-Identifier: GPL-2.0\nint canary; \n' "${cmd[@]}"
	[ -n "$(kernel_sources)" ] || fail "no kernel sources listed"
	out=$(cd "$SROCE_ROOT" && kernel_sources | xargs "${cmd[@]}" 2>&1) || rc=$?
	echo "$out"
	! grep -E ': (ERROR|WARNING|CHECK):' <<<"$out" || fail "checkpatch findings"
	[ "$rc" = 0 ] && [ -z "$out" ] ||
		fail "checkpatch did not run cleanly (xargs status $rc): $(grep -m1 . <<<"$out")"
}

test_kernel_doc() {
	local out rc=0 odd
	extract_tools
	canary kernel-doc "not described in 'canary'" \
		$'// SPDX-License-Identifier: GPL-2.0\n/**\n * canary() - a function\n */\nint canary(int a);\n' \
		"$tools/kernel-doc" -none -v
	[ -n "$(kernel_sources)" ] || fail "no kernel sources listed"
	out=$(cd "$SROCE_ROOT" && kernel_sources | grep -v '^uapi/' |
		xargs "$tools/kernel-doc" -none -v 2>&1) || rc=$?
	echo "$out"
	! grep -E ': (warning|error):|^(Warning|Error)' <<<"$out" || fail "kernel-doc findings"
	odd=$(awk '/./ && !/^[^ :]+:[0-9]+: info: / { print; exit }' <<<"$out")
	[ "$rc" = 0 ] && [ -z "$odd" ] ||
		fail "kernel-doc did not run cleanly (xargs status $rc): ${odd:-no output}"
}

test_provider_style() {
	run make -C "$SROCE_ROOT/userspace-provider" check-style
}

test_provider_abi() {
	run make -C "$SROCE_ROOT/userspace-provider" check
}

test_test_programs() {
	run make -C "$SROCE_ROOT/tests/progs" -B
}

t_main
