#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=45 cost=45
#
# NFS over RDMA: the kernel NFS server (nfsd, with nfs-kernel-server's
# exportfs and rpc.mountd) listening for RPC-over-RDMA on port 20049, and
# the kernel client mounting with "proto=rdma,port=20049" (NFSv4.2); files
# of several sizes written through the mount, read back after the client's
# cache is dropped, and compared with what the server stored.  On one
# device, and across two devices (topo_wire, tests/lib.sh: the RPC-over-
# RDMA transports bind in the initial namespace).
. "$(dirname "$0")/../lib.sh"

[ "$SROCE_TEST_TIMEOUT" -ge 900 ] || SROCE_TEST_TIMEOUT=900

EXPORT=/run/sroce-export
MNT=/run/sroce-mnt

# The server: state directories on tmpfs (the guest's root is read-only),
# $EXPORT (its own tmpfs) exported to everyone as the NFSv4 root, nfsd with
# NFSv4 only and an RDMA listener.
nfs_server() {
	run modprobe -a nfsd rpcrdma
	mountpoint -q /var/lib/nfs || run mount -t tmpfs tmpfs /var/lib/nfs
	mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab
	mountpoint -q /var/lib/nfs/rpc_pipefs ||
		run mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs
	mountpoint -q /proc/fs/nfsd || run mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p "$EXPORT" "$MNT"
	mountpoint -q "$EXPORT" || run mount -t tmpfs -o size=256m tmpfs "$EXPORT"
	run exportfs -o rw,no_root_squash,insecure,fsid=0 "*:$EXPORT"
	run rpc.mountd -N 2 -N 3 --no-udp
	echo '-3 +4 +4.1 +4.2' >/proc/fs/nfsd/versions
	run rpc.nfsd -N 3 --no-udp 4
	echo 'rdma 20049' >/proc/fs/nfsd/portlist
	has 'rdma 20049' </proc/fs/nfsd/portlist || fail "nfsd has no RDMA listener"
}

# nfs_mount SERVER [CLIENTADDR]: mount $EXPORT over RDMA at $MNT.
nfs_mount() {
	run mount -t nfs4 -o "vers=4.2,proto=rdma,port=20049${2:+,clientaddr=$2}" \
		"$1:/" "$MNT"
	grep " $MNT " /proc/mounts
	grep " $MNT " /proc/mounts | has 'proto=rdma' || fail "the mount is not over RDMA"
}

t_group_reset() {
	t_in_guest || return 0
	umount -f "$MNT" 2>/dev/null || true
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -9 rpc.mountd 2>/dev/null || true
	umount /proc/fs/nfsd 2>/dev/null || true
	umount "$EXPORT" 2>/dev/null || true
	umount /var/lib/nfs/rpc_pipefs 2>/dev/null || true
	umount /var/lib/nfs 2>/dev/null || true
	modprobe -r rpcrdma nfsv4 nfs nfsd 2>/dev/null || true
	return 0
}

# No reconnect, RPC sent twice or RPC timeout (tests/lib.sh): the client
# would hide a transport fault behind them.  t_group_check reads the kernel
# log; the client's statistics, which go with the mount, nfs_recovery_check
# reads before each unmount.
t_group_check() { ulp_recovery_check; }

# Write files of several sizes through the mount; after dropping the
# client's caches, read them back and compare them with the server's copy.
nfs_files() {
	local size f sum
	for size in 1 4096 65537 1048576 9437184; do
		f=f-$size
		run head -c "$size" /dev/urandom >"/tmp/$f"
		run cp "/tmp/$f" "$MNT/$f"
	done
	run sync
	echo 3 >/proc/sys/vm/drop_caches
	for size in 1 4096 65537 1048576 9437184; do
		f=f-$size
		sum=$(sha256sum <"/tmp/$f")
		[ "$(sha256sum <"$MNT/$f")" = "$sum" ] || fail "$f read back through NFS differs"
		[ "$(sha256sum <"$EXPORT/$f")" = "$sum" ] || fail "$f on the server differs"
	done
	log "files of 1 B to 9 MiB written, read back and compared"
}

test_loopback() {
	topo_loopback
	nfs_server
	nfs_mount 10.5.0.1
	nfs_files
	nfs_recovery_check "$MNT"
	run umount "$MNT"
}

test_two_devices() {
	topo_wire
	nfs_server
	nfs_mount 10.7.0.1 10.7.0.2
	nfs_files
	nfs_recovery_check "$MNT"
	run umount "$MNT"
	[ "$(cat /sys/class/net/st-w2/statistics/tx_packets)" -gt 1000 ] ||
		fail "almost nothing crossed the veth"
}

t_main
