# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Which guest kernel the harness boots, and where its build products live.
# Sourced by the VM scripts; every value can be overridden from the
# environment.

_sroce_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The guest runs the kernel sroce is built for (make check KVER=...
# exports it), by default Debian's default kernel (scripts/kver.sh: sroce.ko
# must be built against exactly that ABI, CONFIG_MODVERSIONS).
[ -n "${SROCE_KVER:-}" ] || SROCE_KVER=$("$_sroce_root/scripts/kver.sh" 2>/dev/null)
: "${SROCE_KVER:?no kernel with image and headers installed (run scripts/deps.sh)}"
: "${SROCE_VMLINUZ:=/boot/vmlinuz-$SROCE_KVER}"
: "${SROCE_BUILD:=$_sroce_root/build}"
: "${SROCE_INITRD:=$SROCE_BUILD/vm/initrd-$SROCE_KVER.img}"
mkdir -p "$(dirname "$SROCE_INITRD")"
export SROCE_KVER SROCE_VMLINUZ SROCE_BUILD SROCE_INITRD
