#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run test groups on a second kernel, beside the default one, without
# touching the source tree's build: sroce.ko and the test kernel modules
# are built for KVER in a copy of their sources (build/kernels/KVER), the
# guest boots KVER, and the results go to build/test-results-KVER (the
# default kernel's stay in build/test-results).  "make check" runs the
# core tier this way on every kernel in CORE_KVERS (6.12), "make
# check-core KVER=..." on one.
#
# usage: check-kernel.sh KVER [GROUP... | --all]
#        (default: the core tier, SROCE_CORE_GROUPS; --all: every guest
#        and two-guest group, in run-tests.sh's order)
# KDIR: the kernel's build tree (default /lib/modules/KVER/build, else
# /usr/src/linux-headers-KVER).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: check-kernel.sh KVER [GROUP...]}
shift
[ $# -gt 0 ] || set -- ${SROCE_CORE_GROUPS:?no groups named and SROCE_CORE_GROUPS unset}
# --all: every group that runs in guests (the host's run on any kernel).
if [ "$1" = --all ]; then
	set -- $(grep -l '^# sroce-test: where=\(guest\|pair\)' "$root"/tests/groups/*.sh |
		xargs -n1 basename | sed 's/\.sh$//')
fi
kdir=${KDIR:-/lib/modules/$kver/build}
[ -e "$kdir/Makefile" ] || [ -n "${KDIR:-}" ] || kdir=/usr/src/linux-headers-$kver
tree=$root/build/kernels/$kver

[ -f "/boot/vmlinuz-$kver" ] ||
	{ echo "check-kernel: /boot/vmlinuz-$kver missing (scripts/deps.sh $kver)" >&2; exit 1; }
[ -e "$kdir/Makefile" ] ||
	{ echo "check-kernel: no kernel build tree at $kdir (scripts/deps.sh $kver)" >&2; exit 1; }

# The copy keeps the sources' times (tar), so kbuild rebuilds only what
# changed since the last run.
mkdir -p "$tree"
(cd "$root" && find Kbuild drivers/sroce include uapi tests/kmod -type f \
	\( -name Kbuild -o -name '*.[ch]' \) ! -name '*.mod.c' -print0 |
	tar cf - --null -T -) | tar xf - -C "$tree"
echo "check-kernel: building sroce.ko for $kver in ${tree#"$root"/}"
make -C "$kdir" M="$tree" W=1 modules >"$tree/build.log" 2>&1 ||
	{ tail -n 30 "$tree/build.log"; echo "check-kernel: build failed ($tree/build.log)" >&2; exit 1; }
if grep -q 'warning:' "$tree/build.log"; then
	grep 'warning:' "$tree/build.log"
	echo "check-kernel: the build for $kver warns ($tree/build.log)" >&2
	exit 1
fi

echo "check-kernel: kernel $kver: $*"
SROCE_KVER=$kver SROCE_KO_TREE=$tree SROCE_RESULTS_DIR=$root/build/test-results-$kver \
	exec "$root/scripts/run-tests.sh" "$@"
