#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install, from Debian's archive, what building and testing sroce needs.
# Does nothing when everything is present, so every make target can call it.
#
# usage: deps.sh [--check] [--packaging] [KVER...]
#   --check      only report what is missing
#   --packaging  also what building the Debian packages and their test
#                need (make packages, make check-packages)
#   KVER     a kernel to build for and boot in the guest besides Debian's
#            default one: its image and headers, and pahole (dwarves) for
#            its BTF.  A release Debian 12's own suites do not carry
#            (6.12.95+deb12-amd64, Debian 13's series) comes from
#            bookworm-backports, which is then added to apt's sources.
#            Apt's default pinning (backports at priority 100) is kept:
#            nothing else is upgraded from there, and 6.1 stays the
#            default kernel (scripts/kver.sh).
set -euo pipefail

check_only=0 packaging=0
while [ $# -gt 0 ]; do
	case $1 in
	--check) check_only=1 ;;
	--packaging) packaging=1 ;;
	*) break ;;
	esac
	shift
done

pkgs=(
	# build
	build-essential kmod pkg-config linux-headers-amd64 sparse clang
	libibverbs-dev librdmacm-dev libnl-3-dev libnl-route-3-dev
	# style gates: checkpatch.pl and kernel-doc come from the source package
	linux-source-6.1 xz-utils
	# the test guest: Debian's own kernel, booted under QEMU
	linux-image-amd64 qemu-system-x86 busybox-static cpio file
	# tools the tests run inside the guest (it sees this root read-only)
	iproute2 rdma-core ibverbs-utils ibverbs-providers rdmacm-utils
	perftest python3 python3-pyverbs
	# kernel ULPs over sroce: NVMe-oF, NFS over RDMA
	nvme-cli fio nfs-kernel-server
	# the wire audit (interop group): dumpcap and tshark's RoCEv2 dissector
	tshark wireshark-common
	# persistent memory for FLUSH (peer group): the guest's NVDIMM made a
	# device-DAX namespace
	ndctl
	# RDMA middleware and kernel ULPs above sroce: the apps group
	# (Documentation/middleware/), UCX also in the ud group and libfabric in
	# the rc group; Open MPI and MPICH coexist through alternatives, the
	# tests call each one's tools by their full names
	qperf ucx-utils libucx0 libfabric-bin
	openmpi-bin libopenmpi-dev mpich libmpich-dev netpipe-openmpi
	targetcli-fb open-iscsi dbus-daemon
	# make bench: the bandwidth plot
	python3-matplotlib
	# make check-debug: building the debug kernel from linux-source-6.1
	bc bison flex libelf-dev libssl-dev
)
[ "$packaging" = 0 ] ||
	pkgs+=(debhelper dh-dkms dpkg-dev fakeroot debootstrap dkms)
for k in "$@"; do
	[ -z "$k" ] || pkgs+=("linux-image-$k" "linux-headers-$k" dwarves)
done

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
		grep -qx installed; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$check_only" = 1 ]; then
	echo "missing packages: ${missing[*]}"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

# candidate PACKAGE: succeeds if apt can install PACKAGE.
candidate() {
	apt-cache policy "$1" 2>/dev/null | grep -q '^ *Candidate: [^(]'
}

# A kernel the configured suites lack: add bookworm-backports (once).
add_backports() {
	local p lacking=
	for p in "${missing[@]}"; do
		case $p in
		linux-image-* | linux-headers-*) candidate "$p" || lacking=$p ;;
		esac
	done
	[ -n "$lacking" ] || return 0
	grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ &&
		return 0
	echo "deps: $lacking is not in the configured suites: adding bookworm-backports"
	printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
		'Suites: bookworm-backports' 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
		>/etc/apt/sources.list.d/bookworm-backports.sources
	apt-get update -q
}

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
add_backports
apt-get install -y -q --no-install-recommends "${missing[@]}"
