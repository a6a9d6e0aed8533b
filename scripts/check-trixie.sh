#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# sroce on Debian 13 and on the newest 7.x kernel, from the Debian 13 root
# scripts/trixie-root.sh keeps under build/trixie-root.
#
#   check-trixie.sh build        in the root: sroce.ko and the test modules
#                                for the newest 7.x and for trixie's 6.12,
#                                with W=1 and sparse (C=2), any warning
#                                fails; the provider against rdma-core 56,
#                                its host-side checks and check-style
#   check-trixie.sh k7 [GROUP...]
#                                the core tier (SROCE_CORE_GROUPS) on the
#                                7.x kernel, booted with this machine's
#                                Debian 12 userland
#   check-trixie.sh root [GROUP...]
#                                the core tier in a guest whose root is the
#                                Debian 13 root: trixie's 6.12, rdma-core
#                                56, its perftest and pyverbs
#
# The builds live in the root (/sroce), so that a guest booted from it
# finds them at the same path.  SROCE_GUEST_WRAPPER: a command each guest
# runs under (e.g. a lock).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tr=${SROCE_TRIXIE_ROOT:-$root/build/trixie-root}
export SROCE_TRIXIE_ROOT=$tr
mode=${1:?usage: check-trixie.sh build | k7 [GROUP...] | root [GROUP...]}
shift

"$root/scripts/trixie-root.sh" >/dev/null
k7=$(cat "$tr/.sroce-k7")
k612=$(cat "$tr/.sroce-k612")
in_root() { "$root/scripts/trixie-root.sh" -r "$@"; }

# copy_sources: the sources the builds need, into the root's /sroce/src.
copy_sources() {
	rm -rf "$tr/sroce/src"
	mkdir -p "$tr/sroce/src"
	(cd "$root" && {
		find Kbuild drivers/sroce include uapi tests/kmod -type f \
			\( -name Kbuild -o -name '*.[ch]' \) ! -name '*.mod.c'
		git ls-files userspace-provider tests/provider scripts/rdma-core-version.sh
	} | sort -u | tar cf - -T -) | tar xf - -C "$tr/sroce/src"
}

# code but Debian 13's sparse (0.6.4) meeting 7.x's headers: it cannot
# evaluate the static_assert that 7.x's MODULE_INFO() now makes (each
# MODULE_* or module_param line is then "bad constant expression").
# Everything else is printed.
sparse_findings() {
	local f l rest
	grep -E '(warning|error):' "$1" | while IFS=: read -r f l rest; do
		if [[ $rest == *"error: bad constant expression"* ]] &&
			sed -n "${l}p" "$tr/sroce/k/$2/$f" 2>/dev/null |
			grep -Eq '^(MODULE_[A-Z_]+|module_param(_[a-z_]+)?)\('; then
			continue
		fi
		echo "$f:$l:$rest"
	done
}

# build_module KVER: sroce.ko and the test modules for KVER, in the root's
# /sroce/k/KVER, with W=1 and sparse; prints the findings, fails on any.
build_module() {
	local k=$1 hdr log findings
	hdr=/usr/src/linux-headers-$k
	log=$tr/sroce/k/$k.log
	rm -rf "$tr/sroce/k/$k"
	mkdir -p "$tr/sroce/k/$k"
	(cd "$tr/sroce/src" && tar cf - Kbuild drivers include uapi tests/kmod) |
		tar xf - -C "$tr/sroce/k/$k"
	# Debian's headers package lacks the script 7.x's Makefile runs to
	# see whether sparse works; without it C=2 is silently dropped.
	local common
	common=$(readlink -f "$tr/$hdr/scripts" | sed "s|^$tr||")
	if [ ! -e "$tr$common/checker-valid.sh" ] && grep -qs checker-valid "$tr/$hdr/Makefile" \
		"$(dirname "$tr$common")/Makefile" "$tr${hdr%-amd64}-common/Makefile"; then
		printf '#!/bin/sh\n# Added by sroce: "1" when the checker runs.\necho "int x;" | "$@" - >/dev/null 2>&1 && echo 1\n' \
			>"$tr$common/checker-valid.sh"
		chmod 755 "$tr$common/checker-valid.sh"
	fi
	echo "check-trixie: sroce.ko for $k (W=1, C=2)"
	# Sparse 0.6.4 does not know __typeof_unqual__, which 7.x's headers
	# use whenever the checker runs; plain typeof stands in for it.
	if ! in_root make -C "$hdr" M="/sroce/k/$k" W=1 C=2 \
		CF=-D__typeof_unqual__=__typeof__ modules >"$log" 2>&1; then
		tail -n 30 "$log"
		echo "check-trixie: the build for $k failed ($log)" >&2
		return 1
	fi
	grep -q 'CHECK .*drivers/sroce/net.c' "$log" ||
		{ echo "check-trixie: sparse did not run for $k ($log)" >&2; return 1; }
	findings=$(sparse_findings "$log" "$k")
	if [ -n "$findings" ]; then
		echo "$findings"
		echo "check-trixie: warnings building for $k ($log)" >&2
		return 1
	fi
	echo "check-trixie: $k: no warning ($(grep -c 'bad constant expression' "$log") of sparse 0.6.4's MODULE_INFO reports left out)"
}

build_provider() {
	echo "check-trixie: the provider against $(in_root sh -c 'pkg-config --modversion libibverbs')"
	in_root make -s -C /sroce/src/userspace-provider clean
	in_root make -C /sroce/src/userspace-provider &&
		in_root make -C /sroce/src/userspace-provider check &&
		in_root make -C /sroce/src/userspace-provider check-style
}

case $mode in
build)
	copy_sources
	rc=0
	build_module "$k7" || rc=1
	build_module "$k612" || rc=1
	build_provider >"$tr/sroce/provider.log" 2>&1 || {
		tail -n 30 "$tr/sroce/provider.log"
		echo "check-trixie: the provider failed ($tr/sroce/provider.log)" >&2
		rc=1
	}
	grep -E '^(PASS|FAIL|check-provider|check-style)' "$tr/sroce/provider.log" | tail -n 25
	exit "$rc"
	;;
k7)
	[ $# -gt 0 ] || set -- ${SROCE_CORE_GROUPS:?}
	vmlinuz=$tr/boot/vmlinuz-$k7
	[ -f "$vmlinuz" ] || vmlinuz=$tr/lib/modules/$k7/vmlinuz
	SROCE_KVER=$k7 SROCE_VMLINUZ=$vmlinuz SROCE_MODROOT=$tr \
		SROCE_KO_TREE=$tr/sroce/k/$k7 \
		SROCE_RESULTS_DIR=$root/build/test-results-$k7 \
		exec ${SROCE_GUEST_WRAPPER:-} "$root/scripts/run-tests.sh" "$@"
	;;
root)
	[ $# -gt 0 ] || set -- ${SROCE_CORE_GROUPS:?}
	# The guest sees the source tree where the host has it.
	mkdir -p "$tr$root"
	SROCE_GUEST_ROOT=$tr SROCE_KVER=$k612 SROCE_VMLINUZ=$tr/boot/vmlinuz-$k612 \
		SROCE_KO_TREE=/sroce/k/$k612 \
		SROCE_PROVIDER=/sroce/src/userspace-provider/libsroce \
		SROCE_RESULTS_DIR=$root/build/test-results-trixie \
		exec ${SROCE_GUEST_WRAPPER:-} "$root/scripts/run-tests.sh" "$@"
	;;
*)
	echo "usage: check-trixie.sh build | k7 [GROUP...] | root [GROUP...]" >&2
	exit 2
	;;
esac
