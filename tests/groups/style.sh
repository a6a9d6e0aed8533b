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
	(cd "$SROCE_ROOT" && ls drivers/sroce/*.[ch] include/sroce/*.h uapi/rdma/*.h tests/kmod/*.c |
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

test_checkpatch() {
	local out
	extract_tools
	out=$(cd "$SROCE_ROOT" && kernel_sources | xargs "$tools/checkpatch.pl" --strict --no-tree \
		--terse --show-types -f 2>&1) || true
	echo "$out"
	! grep -E ': (ERROR|WARNING|CHECK):' <<<"$out" || fail "checkpatch findings"
}

test_kernel_doc() {
	local out
	extract_tools
	out=$(cd "$SROCE_ROOT" && kernel_sources | grep -v '^uapi/' |
		xargs "$tools/kernel-doc" -none -v 2>&1) || true
	echo "$out"
	! grep -E ': (warning|error):|^(Warning|Error)' <<<"$out" || fail "kernel-doc findings"
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
