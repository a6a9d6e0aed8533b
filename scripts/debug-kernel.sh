#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the debug kernel of "make check-debug" from Debian's own source
# (linux-source-6.1, the same release as the stock guest kernel): KASAN,
# lockdep (PROVE_LOCKING), kmemleak, debug objects and fault injection on
# top of x86_64_defconfig, with what the test suite and the guest need
# (scripts/debug-kernel/debug.config).  The build is cached: it is redone
# only when the source package or the config fragment changes.
#
# Output, under $SROCE_DEBUG_KERNEL (default build/debug-kernel):
#   obj/                 the build tree (KDIR for sroce.ko)
#   obj/arch/x86/boot/bzImage
#   mods/lib/modules/R/  the modules, depmod'ed (R: the kernel release)
#   release              R
#   build-seconds        how long the last full build took
#
# usage: debug-kernel.sh [-p]   (-p: print the release and exit 0 if the
#                                cached build is current, 1 if not)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SROCE_DEBUG_KERNEL:-$root/build/debug-kernel}
tarball=${SROCE_KSRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
fragment=$root/scripts/debug-kernel/debug.config
jobs=${SROCE_JOBS:-$(nproc)}

say() { echo "debug-kernel: $*"; }
die() { echo "debug-kernel: $*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball missing (apt-get install linux-source-6.1)"

# What the cached build was made from.
key=$( (stat -c '%s %Y' "$tarball"; cat "$fragment") | sha256sum | cut -c1-16)
current() {
	[ "$(cat "$out/key" 2>/dev/null)" = "$key" ] &&
		[ -f "$out/obj/arch/x86/boot/bzImage" ] &&
		[ -d "$out/mods/lib/modules/$(cat "$out/release" 2>/dev/null)" ]
}
if [ "${1:-}" = -p ]; then
	current || exit 1
	cat "$out/release"
	exit 0
fi
if current; then
	say "cached build is current: $(cat "$out/release")"
	exit 0
fi

mkdir -p "$out"
rm -f "$out/key"
if [ ! -f "$out/src/Makefile" ]; then
	say "extracting $tarball"
	rm -rf "$out/src" "$out/src.tmp"
	mkdir -p "$out/src.tmp"
	tar -xf "$tarball" -C "$out/src.tmp" --strip-components=1
	mv "$out/src.tmp" "$out/src"
fi

kmake() { make -C "$out/src" O="$out/obj" -j"$jobs" "$@"; }

say "configuring (x86_64_defconfig + $(basename "$fragment"))"
mkdir -p "$out/obj"
kmake -s x86_64_defconfig
"$out/src/scripts/kconfig/merge_config.sh" -m -O "$out/obj" \
	"$out/obj/.config" "$fragment" >"$out/merge.log" 2>&1 ||
	die "merge_config failed, see $out/merge.log"
kmake -s olddefconfig

# Every option the fragment turns on must have survived olddefconfig (a
# missing dependency silently drops it).
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$fragment" | while read -r want; do
	grep -qx "$want" "$out/obj/.config" || echo "$want"
done)
[ -z "$missing" ] || die "options not set after olddefconfig: $(echo $missing)"

say "building with $jobs jobs (this takes long the first time)"
start=$(date +%s)
kmake bzImage modules >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log" >&2; die "build failed, see $out/build.log"; }
release=$(kmake -s kernelrelease)
rm -rf "$out/mods"
kmake -s INSTALL_MOD_PATH="$out/mods" INSTALL_MOD_STRIP=1 modules_install >>"$out/build.log" 2>&1 ||
	die "modules_install failed, see $out/build.log"
# modules_install points build/ at the source tree; sroce builds in obj/.
rm -f "$out/mods/lib/modules/$release/build" "$out/mods/lib/modules/$release/source"
ln -s "$out/obj" "$out/mods/lib/modules/$release/build"
echo $(($(date +%s) - start)) >"$out/build-seconds"
echo "$release" >"$out/release"
echo "$key" >"$out/key"
say "built $release in $(cat "$out/build-seconds") s"
