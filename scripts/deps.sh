#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install, from Debian's archive, what building and testing sroce needs.
# Does nothing when everything is present, so every make target can call it.
#
# usage: deps.sh [--check]     --check: only report what is missing
set -euo pipefail

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
	# make bench: the bandwidth plot
	python3-matplotlib
	# make check-debug: building the debug kernel from linux-source-6.1
	bc bison flex libelf-dev libssl-dev
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
		grep -qx installed; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "${1:-}" = --check ]; then
	echo "missing packages: ${missing[*]}"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
