#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=host order=0 cost=50
#
# Build gates, on the host: the kernel sources compile with W=1 and sparse
# (C=2) without a single warning, pass checkpatch --strict and kernel-doc,
# and the provider builds warning-free with clang -Weverything and sparse
# and passes its host-side ABI checks.  The documentation keeps up: every
# counter and module parameter is in Documentation/admin-guide.rst, and
# every relative link of README.md leads to a file that exists.
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

# --- the documentation keeps up with the code -----------------------------

# counter_names COUNTERS_H: the labels of SROCE_COUNTERS, one a line.  Fails
# if an entry of the list's block is not of the form it parses.
counter_names() {
	local block names
	block=$(awk '/^#define SROCE_COUNTERS \(/ { on = 1 }
		on { print } on && /\)\)[[:space:]]*(\\)?$/ { exit }' "$1")
	names=$(grep -o 'SROCE_COUNTER([A-Z0-9_]*, *[a-z0-9_]*)' <<<"$block" |
		sed 's/.*, *//; s/)$//')
	[ -n "$names" ] || fail "no SROCE_COUNTERS list found in $1"
	[ "$(wc -l <<<"$names")" = "$(grep -c 'SROCE_COUNTER(' <<<"$block")" ] ||
		fail "SROCE_COUNTERS in $1 has entries this check cannot read"
	printf '%s\n' "$names"
}

# param_names FILE...: the module parameters the C files declare.  Fails if
# a module_param line is not of a form it parses.
param_names() {
	local lines names
	lines=$(grep -hE '^[[:space:]]*module_param' "$@") || true
	[ -n "$lines" ] || return 0
	names=$(sed -n 's/.*module_param\(_named\|_array\|_cb\|_string\|_unsafe\)\{0,1\}([[:space:]]*\([a-z0-9_]*\),.*/\2/p' <<<"$lines")
	[ "$(wc -l <<<"$names")" = "$(wc -l <<<"$lines")" ] ||
		fail "module_param lines this check cannot read: $lines"
	printf '%s\n' "$names"
}

# undocumented DOC NAME...: the NAMEs DOC does not mention as ``NAME``.
undocumented() {
	local doc=$1 name
	shift
	for name in "$@"; do
		grep -qF -- "\`\`$name\`\`" "$doc" || echo "$name"
	done
}

# dead_links MARKDOWN ROOT: the relative link targets in MARKDOWN (inline
# links, "[text](target)") that name no file or directory under ROOT.
dead_links() {
	local target path
	{ grep -o '\]([^)[:space:]]*)' "$1" || true; } | sed 's/^](//; s/)$//' |
		while read -r target; do
			case $target in
			'' | '#'* | [a-zA-Z]*:*) continue ;;
			esac
			path=${target%%#*}
			[ -e "$2/$path" ] || echo "$target"
		done
}

# Every counter and module parameter is in the admin guide; every relative
# link in README.md leads somewhere.  Each check must first catch the flaws
# planted in a canary.
test_docs_current() {
	local dir guide=$SROCE_ROOT/Documentation/admin-guide.rst
	local counters params missing dead
	dir=$(mktemp -d)
	printf '[gone](no/such/file.rst) [ok](canary.md) [web](https://example.org/x)\n' >"$dir/canary.md"
	printf '``rx_packets`` and nothing else\n' >"$dir/guide.rst"
	printf '#define SROCE_COUNTERS (\t\\\n\tSROCE_COUNTER(RX_PACKETS, rx_packets) \\\n\tSROCE_COUNTER(TX_PACKETS, tx_packets))\n' >"$dir/counters.h"
	printf 'module_param(max_canary, uint, 0444);\nmodule_param_named(other, x, uint, 0644);\n' >"$dir/param.c"
	dead=$(dead_links "$dir/canary.md" "$dir")
	counters=$(counter_names "$dir/counters.h") || exit 1
	params=$(param_names "$dir/param.c") || exit 1
	missing=$(undocumented "$dir/guide.rst" $counters $params | tr '\n' ' ')
	rm -rf "$dir"
	[ "$dead" = no/such/file.rst ] ||
		fail "the link check missed its canary's dead link (found: '$dead')"
	[ "$missing" = "tx_packets max_canary other " ] ||
		fail "the admin guide check missed what its canary leaves out (found: '$missing')"

	counters=$(counter_names "$SROCE_ROOT/drivers/sroce/counters.h") || exit 1
	params=$(param_names "$SROCE_ROOT"/drivers/sroce/*.c) || exit 1
	[ -n "$params" ] || fail "no module parameters found"
	echo "$(wc -w <<<"$counters") counters, $(wc -w <<<"$params") module parameters:" $params
	missing=$(undocumented "$guide" $counters $params)
	dead=$(dead_links "$SROCE_ROOT/README.md" "$SROCE_ROOT")
	[ -z "$missing" ] || echo "not in Documentation/admin-guide.rst as \`\`NAME\`\`:" $missing
	[ -z "$dead" ] || echo "README.md links to files that do not exist:" $dead
	[ -z "$missing$dead" ] || fail "the documentation is behind the code"
}

t_main
