#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=42 cost=85
#
# SCSI RDMA Protocol on sroce: the kernel's SRP target (ib_srpt, a LIO
# fabric, configured through configfs directly) and SRP initiator (ib_srp),
# logging in through rdma_cm, which is how SRP runs over RoCE: ib_srpt
# listens on the rdma_cm port written to its discovery_auth/rdma_cm_port,
# ib_srp connects when "dest=IP:PORT" is written to its add_target.  The
# LUN is a memory-backed null_blk disk (LIO's iblock backstore) or a file
# (fileio); the initiator's new SCSI disk carries fio random reads and
# writes checked with crc32c; data written before a logout is read back
# after a new login.
#
# Names LIO and SRP use for the two ends, from GID 0 of each device (the
# link-local GID derived from the netdev's MAC):
#   target port (configfs WWN)   "0x" + the 32 hex digits of the target
#                                device's GID 0
#   initiator port (ACL name)    "0x" + 16 zeros (ib_srp's initiator_ext)
#                                + the interface ID of the initiator
#                                device's GID 0
#   target port ID (add_target)  id_ext and ioc_guid both ib_srpt's
#                                srpt_service_guid (the node GUID of the
#                                first device it saw)
#
# ib_srpt and ib_srp on Linux 6.1 open their rdma_cm IDs in the initial
# network namespace only, so the two-device test puts target and initiator
# on topo_wire's veth pair (tests/lib.sh).
. "$(dirname "$0")/../lib.sh"

# fio through SRP runs for minutes when the emulated guest shares the
# machine with others, and each of ib_srp's recoveries (below) costs
# tens of seconds.
[ "$SROCE_TEST_TIMEOUT" -ge 1800 ] || SROCE_TEST_TIMEOUT=1800

LIO=/sys/kernel/config/target
SRPT=$LIO/srpt
SRP_PORT=5555
IMG=/tmp/sroce-srp.img

# --- target and initiator ----------------------------------------------------

srp_modules() {
	run modprobe -a target_core_iblock target_core_file ib_srpt ib_srp sd_mod
	run modprobe null_blk nr_devices=0
	mountpoint -q /sys/kernel/config || run mount -t configfs none /sys/kernel/config
}

# gid0_hex DEV: GID 0 of DEV's port 1 as 32 hex digits.
gid0_hex() { tr -d ':\n' <"/sys/class/infiniband/$1/ports/1/gids/0"; }

# target_wwn DEV: the configfs name ib_srpt gives DEV's port 1.
target_wwn() { echo "0x$(gid0_hex "$1")"; }

# initiator_port_id DEV: the SRP initiator port ID ib_srp sends from DEV.
initiator_port_id() {
	local g
	g=$(gid0_hex "$1")
	echo "0x0000000000000000${g:16}"
}

# backstore_create PATH: a LIO backstore for PATH (a block device, or a
# file written through the page cache); prints its configfs directory.
backstore_create() {
	local d
	if [ -b "$1" ]; then
		d=$LIO/core/iblock_0/sroce_srp
		mkdir -p "$d"
		echo "udev_path=$1" >"$d/control"
	else
		d=$LIO/core/fileio_0/sroce_srp
		mkdir -p "$d"
		echo "fd_dev_name=$1,fd_dev_size=$(stat -c %s "$1"),fd_buffered_io=1" >"$d/control"
	fi
	echo 1 >"$d/enable"
	echo "$d"
}

# target_create PATH TDEV IDEV: PATH exported as LUN 0 on TDEV's SRP
# target port to the initiator port on IDEV, ib_srpt listening on
# $SRP_PORT.
target_create() {
	local store tpg acl
	store=$(backstore_create "$1")
	[ -d "$SRPT" ] || mkdir "$SRPT"
	echo "$SRP_PORT" >"$SRPT/discovery_auth/rdma_cm_port"
	tpg=$SRPT/$(target_wwn "$2")/tpgt_1
	acl=$tpg/acls/$(initiator_port_id "$3")
	log "target port $(target_wwn "$2"), initiator port $(initiator_port_id "$3")"
	# One level at a time: "lun" and "acls" are configfs default groups,
	# which "mkdir -p" cannot step through.
	[ -d "${tpg%/*}" ] || mkdir "${tpg%/*}"
	mkdir "$tpg"
	mkdir "$tpg/lun/lun_0"
	ln -s "$store" "$tpg/lun/lun_0/sroce_srp"
	mkdir "$acl"
	mkdir "$acl/lun_0"
	ln -s "$tpg/lun/lun_0" "$acl/lun_0/sroce_srp"
	echo 1 >"$tpg/enable"
}

# srp_hosts: the SCSI hosts ib_srp created (host0, ...).
srp_hosts() {
	local h found=1
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] || continue
		basename "$h"
		found=0
	done
	return $found
}

# srp_disk: the block device of the SRP target's LUN on the initiator.
srp_disk() {
	local h b
	for h in $(srp_hosts); do
		for b in /sys/class/scsi_host/"$h"/device/target*/*/block/*; do
			[ -b "/dev/${b##*/}" ] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# add_target FILE OPTS: write OPTS to ib_srp's add_target FILE.  A target
# port logged out a moment ago can still be on ib_srp's list (its removal
# work drops it last, after the SCSI host, the rdma_cm ID, the QP and the
# CQs are gone), and then the write fails with EEXIST ("Already connected
# to target port"): that one is tried again for up to 10 s.
add_target() {
	local file=$1 opts=$2 err i
	for i in $(seq 50); do
		err=$( { echo "$opts" >"$file"; } 2>&1 ) && {
			[ "$i" = 1 ] || log "add_target taken at try $i"
			return 0
		}
		case $err in
		*"File exists"*) sleep 0.2 ;;
		*) break ;;
		esac
	done
	fail "ib_srp refused the login ($err): $(dmesg | tail -n 5)"
}

# initiator_login IDEV ADDR [SRC]: log in from IDEV to the target at
# ADDR:$SRP_PORT and wait for the disk.
initiator_login() {
	local guid opts
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	guid=${guid#0x}
	opts="id_ext=$guid,ioc_guid=$guid,dest=$2:$SRP_PORT${3:+,src=$3}"
	log "add_target on srp-$1-1: $opts"
	# Where srp_recovery_check starts counting: the test's first login.
	[ -n "${SRP_T0:-}" ] || SRP_T0=$(cut -d' ' -f1 /proc/uptime)
	add_target "/sys/class/infiniband_srp/srp-$1-1/add_target" "$opts"
	wait_for 60 srp_disk
	# What initiator_logout waits to see go must be there to begin with.
	srp_cqs >/dev/null || fail "rdma resource shows no CQ of ib_srp's"
	log "logged in: $(srp_hosts) $(srp_disk), $(($(cat "/sys/block/$(basename "$(srp_disk)")/size") / 2048)) MiB"
}

# srp_cqs: the completion queues ib_srp owns (rdma resource names a
# kernel owner in brackets).
srp_cqs() {
	rdma resource show cq | grep -F 'comm [ib_srp]'
}

# initiator_logout: remove every SRP target port; wait for its SCSI host
# to go, and for its channels: ib_srp removes the host first and then
# disconnects, drains and destroys the QPs and frees the CQs (a transport
# that cannot flush its QPs hangs here).
initiator_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	wait_for 60 eval '! srp_hosts'
	wait_for 60 eval '! srp_cqs'
}

# fio_verify NAME DISK [fio options]: random writes and reads of mixed
# sizes over 24 MiB, every block checked with crc32c.
fio_verify() {
	local name=$1 disk=$2 out
	shift 2
	out=$(fio --name="$name" --filename="$disk" --ioengine=libaio --direct=1 \
		--rw=randrw --bsrange=4k-128k --size=24m --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--verify_state_save=0 "$@" 2>&1) ||
		{ printf '%s\n' "$out"; fail "fio $name failed"; }
	printf '%s\n' "$out" | grep -E 'err=|READ:|WRITE:|verify'
	rdma statistic show | grep -oE '^link [^ ]+|(tx_packets|retransmits|timeouts|rx_drop_[a-z_]+|rx_dup_resp|stale_read_replays|[a-z]+_naks_[a-z]+) [1-9][0-9]*' | tr '\n' ' '
	echo
	printf '%s\n' "$out" | has 'err= 0' || fail "fio $name reported errors"
	srp_recovery_check
}

# srp_recovery_check: ib_srp's error recovery since the test began (SCSI
# aborts, a channel lost and logged in again).  It hides transport
# failures from fio, which sees every command succeed on a retry, so it
# is counted here, and any of it fails the test (SROCE_SRP_STRICT=0:
# only reported).
srp_recovery_check() {
	local n
	# By time, not from the test's marker: sroce's debug lines can push
	# the marker out of the kernel log's ring.
	n=$(dmesg | awk -v t0="$SRP_T0" '
		{ t = substr($0, 2, index($0, "]") - 2) + 0 }
		t >= t0 && /SRP abort called|reconnect succeeded|failed with status 12$/ { n++ }
		END { print n + 0 }')
	log "ib_srp error recovery: $n events"
	[ "${SROCE_SRP_STRICT:-1}" = 1 ] && [ "$n" -gt 0 ] &&
		fail "ib_srp had to recover $n times: the transport failed under it"
	return 0
}

# write_logout_login_check IDEV ADDR [SRC]: 8 MiB of random data written
# through the disk, a logout and a new login, the same bytes read back.
write_logout_login_check() {
	local disk sum
	disk=$(srp_disk)
	run dd if=/dev/urandom of=/tmp/sroce-srp.data bs=1M count=8 status=none
	run dd if=/tmp/sroce-srp.data of="$disk" bs=1M oflag=direct status=none
	sum=$(sha256sum </tmp/sroce-srp.data)
	initiator_logout
	log "logged out"
	initiator_login "$@"
	disk=$(srp_disk)
	[ "$(dd if="$disk" bs=1M count=8 iflag=direct status=none | sha256sum)" = "$sum" ] ||
		fail "data differs after logging in again"
}

# Everything this group builds, torn down before the device goes (t_reset
# calls this first): initiator, then target, then backstores.
t_group_reset() {
	local d l
	t_in_guest || return 0
	pkill -9 fio 2>/dev/null || true
	if [ -d /sys/class/srp_remote_ports ]; then
		for d in /sys/class/srp_remote_ports/port-*; do
			[ -e "$d/delete" ] && echo 1 >"$d/delete"
		done
		# Not wait_for: its fail would end the runner, which calls this.
		for _ in $(seq 300); do
			srp_hosts >/dev/null || break
			sleep 0.2
		done
		srp_hosts >/dev/null && echo "SRP hosts left: $(srp_hosts | tr '\n' ' ')"
	fi
	modprobe -r ib_srp 2>/dev/null || true
	if [ -d "$SRPT" ]; then
		for d in "$SRPT"/0x*/tpgt_*; do
			[ -d "$d" ] || continue
			echo 0 >"$d/enable"
			for l in "$d"/acls/*/lun_*/* "$d"/lun/lun_*/*; do
				[ -L "$l" ] && rm "$l"
			done
			for l in "$d"/acls/*/lun_* "$d"/acls/* "$d"/lun/lun_*; do
				[ -d "$l" ] && rmdir "$l"
			done
			rmdir "$d"
		done
		for d in "$SRPT"/0x*; do
			[ -d "$d" ] && rmdir "$d"
		done
		echo 0 >"$SRPT/discovery_auth/rdma_cm_port"
		rmdir "$SRPT"
	fi
	for d in "$LIO"/core/*_*/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$LIO"/core/*_*; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$NULLB"/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	modprobe -r ib_srpt target_core_iblock target_core_file null_blk 2>/dev/null || true
	rm -f "$IMG" /tmp/sroce-srp.data
	return 0
}

# --- tests -------------------------------------------------------------------

test_null_blk() {
	topo_loopback
	srp_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 sroce0 sroce0
	initiator_login sroce0 10.5.0.1
	fio_verify null_blk "$(srp_disk)"
	initiator_logout
}

# A file backstore: what the initiator wrote is in the file itself.
test_file_backed() {
	local disk
	topo_loopback
	srp_modules
	run truncate -s 64M "$IMG"
	target_create "$IMG" sroce0 sroce0
	initiator_login sroce0 10.5.0.1
	disk=$(srp_disk)
	fio_verify file "$disk"
	run dd if=/dev/urandom of=/tmp/sroce-srp.data bs=1M count=4 status=none
	run dd if=/tmp/sroce-srp.data of="$disk" bs=1M seek=32 oflag=direct status=none
	initiator_logout
	[ "$(dd if="$IMG" bs=1M skip=32 count=4 status=none | sha256sum)" = \
	  "$(sha256sum </tmp/sroce-srp.data)" ] || fail "the backing file does not hold what was written"
}

# Data written before a logout is read back after a new login.
test_reconnect() {
	topo_loopback
	srp_modules
	nullb_create nullb0 64
	target_create /dev/nullb0 sroce0 sroce0
	initiator_login sroce0 10.5.0.1
	write_logout_login_check sroce0 10.5.0.1
	fio_verify after_reconnect "$(srp_disk)" --size=8m
	initiator_logout
}

# The login through an IPv6 address.
test_ipv6() {
	topo_loopback
	srp_modules
	nullb_create nullb0 64
	target_create /dev/nullb0 sroce0 sroce0
	initiator_login sroce0 '[fd00:5::1]'
	fio_verify ipv6 "$(srp_disk)" --size=8m
	initiator_logout
}

# Target on sroce1, initiator on sroce2, the traffic over the veth between
# them.
test_two_devices() {
	topo_wire
	srp_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 sroce1 sroce2
	initiator_login sroce2 10.7.0.1 10.7.0.2
	fio_verify two_devices "$(srp_disk)"
	write_logout_login_check sroce2 10.7.0.1 10.7.0.2
	initiator_logout
	# The traffic went over the wire, sent by the initiator's device.
	[ "$(cat /sys/class/net/st-w2/statistics/tx_packets)" -gt 1000 ] ||
		fail "almost nothing crossed the veth"
	rdma statistic show link sroce2/1 | grep -o 'tx_packets [0-9]*'
	[ "$(rdma statistic show link sroce2/1 | sed -n 's/.*tx_packets \([0-9]*\).*/\1/p')" -gt 1000 ] ||
		fail "the initiator's device sent almost nothing"
}

t_main
