#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A Debian 13 (trixie) root under build/, made once with debootstrap and
# kept: the newest 7.x kernel headers from trixie-backports with gcc-14
# (7.x's objtool and modpost need trixie's glibc, so they cannot build on
# Debian 12), rdma-core 56's libibverbs for the provider, and trixie's
# 6.12 kernel, perftest and pyverbs for a guest booted from this root.
#
# usage: trixie-root.sh            make or update the root; print its path
#        trixie-root.sh -k         print the newest linux-headers-7.* release
#        trixie-root.sh -r CMD...  run CMD in the root (as root, chroot)
#
# SROCE_TRIXIE_ROOT: where (default build/trixie-root).  Needs root,
# debootstrap and Debian's archive (deb.debian.org).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${SROCE_TRIXIE_ROOT:-$root/build/trixie-root}
mirror=http://deb.debian.org/debian

# What the root holds (besides the kernels, added below): building the
# module and the provider, and running the tests from this root.
pkgs=(
	gcc gcc-14 clang make libc6-dev kmod sparse pkg-config libelf-dev
	libibverbs-dev librdmacm-dev libnl-3-dev libnl-route-3-dev
	iproute2 rdma-core ibverbs-utils ibverbs-providers rdmacm-utils
	perftest python3 python3-pyverbs procps util-linux mount
	# the wire audits of the core tier (kverbs/flush_wire): dumpcap
	tshark wireshark-common
	# the packaging test's tools
	dkms debhelper dpkg-dev fakeroot
)

# in_root CMD...: CMD in the root, with /proc (objtool reads it) mounted
# in a mount namespace of its own, so nothing stays mounted afterwards.
in_root() {
	unshare --mount --propagation private /bin/sh -c \
		'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$dir" \
		/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive HOME=/root "$@"
}

# newest_k7: the newest linux-headers-7.*-amd64 release apt offers.
newest_k7() {
	in_root apt-cache search --names-only '^linux-headers-7\.[0-9.]*\+deb13-amd64$' |
		sed -n 's/^linux-headers-\([^ ]*\) .*/\1/p' | sort -V | tail -n1
}

case ${1:-} in
-k)
	newest_k7
	exit
	;;
-r)
	shift
	in_root "$@"
	exit
	;;
esac

[ "$(id -u)" = 0 ] || { echo "trixie-root: needs root (debootstrap, chroot)" >&2; exit 1; }
if [ ! -x "$dir/usr/bin/apt-get" ]; then
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
	rm -rf "$dir.tmp"
	echo "trixie-root: debootstrap trixie into ${dir#"$root"/}"
	debootstrap --variant=minbase trixie "$dir.tmp" "$mirror" >"$root/build/trixie-debootstrap.log" 2>&1 ||
		{ tail -n 20 "$root/build/trixie-debootstrap.log"; exit 1; }
	mv "$dir.tmp" "$dir"
fi

printf '%s\n' 'Types: deb' "URIs: $mirror" 'Suites: trixie trixie-updates trixie-backports' \
	'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
	'Types: deb' "URIs: ${mirror%/debian}/debian-security" 'Suites: trixie-security' \
	'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
	>"$dir/etc/apt/sources.list.d/debian.sources"
rm -f "$dir/etc/apt/sources.list"
# The root's own services must not start while apt works in it.
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
chmod 755 "$dir/usr/sbin/policy-rc.d"

stamp=$dir/.sroce-packages
want=$(printf '%s\n' "${pkgs[@]}")
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ -n "${SROCE_TRIXIE_UPDATE:-}" ]; then
	in_root apt-get update -q
	in_root apt-get install -y -q --no-install-recommends "${pkgs[@]}"
	echo "$want" >"$stamp"
fi

# The kernels: the newest 7.x (trixie-backports) and trixie's own 6.12,
# each with its headers installed and its image unpacked into the root
# (/boot, /lib/modules: the guest boots it from here), not installed: a
# kernel package's hooks (initramfs, boot loader) have nothing to do in a
# chroot.
k7=$(newest_k7)
[ -n "$k7" ] || { echo "trixie-root: no linux-headers-7.* in trixie-backports" >&2; exit 1; }
k612=$(in_root apt-cache depends linux-image-amd64 |
	sed -n 's/^ *Depends: linux-image-\(6\.12[^ ]*\)$/\1/p' | head -n1)
[ -n "$k612" ] || { echo "trixie-root: no 6.12 kernel in trixie" >&2; exit 1; }
for k in "$k7" "$k612"; do
	[ -e "$dir/usr/src/linux-headers-$k/Makefile" ] ||
		in_root apt-get install -y -q --no-install-recommends "linux-headers-$k"
	# vmlinuz: in /boot up to 6.12, in the module directory in 7.x.
	if { [ ! -f "$dir/boot/vmlinuz-$k" ] && [ ! -f "$dir/lib/modules/$k/vmlinuz" ]; } ||
		[ ! -f "$dir/lib/modules/$k/modules.dep" ]; then
		# 7.x splits the image: vmlinuz in linux-binary-*, the
		# modules in linux-modules-*.
		debs=linux-image-$k
		for p in "linux-binary-$k" "linux-modules-$k"; do
			in_root apt-cache show "$p" >/dev/null 2>&1 && debs+=" $p"
		done
		rm -rf "$dir/tmp/kimg" && mkdir -p -m 777 "$dir/tmp/kimg"
		# apt warns that it downloads as root: that line is dropped, a
		# failed download is not.
		if ! in_root sh -c "cd /tmp/kimg && apt-get download -q $debs" \
			>"$dir/tmp/kimg.log" 2>&1; then
			cat "$dir/tmp/kimg.log" >&2
			echo "trixie-root: cannot download $debs" >&2
			exit 1
		fi
		grep -v 'unsandboxed as root' "$dir/tmp/kimg.log" || true
		rm -f "$dir/tmp/kimg.log"
		for f in "$dir"/tmp/kimg/*.deb; do
			# Into a merged-/usr root: keep /lib the symlink it is.
			dpkg-deb --fsys-tarfile "$f" | tar -x --keep-directory-symlink -C "$dir"
		done
		in_root depmod -a "$k"
		rm -rf "$dir/tmp/kimg"
	fi
done
printf '%s\n' "$k7" >"$dir/.sroce-k7"
printf '%s\n' "$k612" >"$dir/.sroce-k612"
echo "$dir"
