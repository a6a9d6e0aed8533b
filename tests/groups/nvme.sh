#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=40
#
# NVMe over Fabrics on sroce: the kernel's nvmet-rdma target (configured
# through configfs) and nvme-rdma host (nvme connect -t rdma), with fio
# writing and verifying data (verify=crc32c) through a null_blk namespace
# and a file-backed one; disconnect and reconnect with the data read back;
# the target's port removed while the host has I/O in flight, and put back.
#
# nvmet-rdma and nvme-rdma on Linux 6.1 open their rdma_cm IDs in the
# initial network namespace only, so the two-device test puts both devices
# there, each on one end of a veth pair, with policy routing that sends the
# traffic between their addresses over the wire instead of delivering it
# locally (topo_wire, tests/lib.sh).
. "$(dirname "$0")/../lib.sh"

# fio through NVMe-oF runs for minutes when the emulated guest shares the
# machine with others.
[ "$SROCE_TEST_TIMEOUT" -ge 900 ] || SROCE_TEST_TIMEOUT=900

NQN=sroce-nvme-test
NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb

# --- target and host ---------------------------------------------------------

nvme_modules() {
	run modprobe -a nvmet-rdma nvme-rdma
	run modprobe null_blk nr_devices=0
	mountpoint -q /sys/kernel/config || run mount -t configfs none /sys/kernel/config
}

# nullb_create NAME MIB: a memory-backed null_blk disk /dev/NAME.
nullb_create() {
	mkdir "$NULLB/$1"
	echo 1 >"$NULLB/$1/memory_backed"
	echo "$2" >"$NULLB/$1/size"
	echo 1 >"$NULLB/$1/power"
	wait_for 10 test -b "/dev/$1"
}

# target_create PATH ADDR [ADRFAM]: subsystem $NQN with PATH (a block
# device, or a file read and written through the page cache) as namespace
# 1, served on port 1 at ADDR:4420.
target_create() {
	local s=$NVMET/subsystems/$NQN p=$NVMET/ports/1
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo "$1" >"$s/namespaces/1/device_path"
	[ -b "$1" ] || echo 1 >"$s/namespaces/1/buffered_io"
	echo 1 >"$s/namespaces/1/enable"
	mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo "${3:-ipv4}" >"$p/addr_adrfam"
	echo "$2" >"$p/addr_traddr"
	echo 4420 >"$p/addr_trsvcid"
	port_link
}

port_link() { ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN"; }
port_unlink() { rm "$NVMET/ports/1/subsystems/$NQN"; }

# The host's controller for $NQN (nvme0, ...), empty if none.
host_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] &&
			{ basename "$c"; return 0; }
	done
	return 1
}

ctrl_state_is() { [ "$(cat "/sys/class/nvme/$(host_ctrl)/state")" = "$1" ]; }

# The block device of namespace 1 of $NQN on the host: the subsystem's
# disk with native multipath (Debian's default; the per-path nvmeXcYnZ
# are hidden), the controller's without.
host_disk() {
	local d n
	for d in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		for n in "$d"/nvme*n1; do
			case ${n##*/} in nvme*c*n1 | 'nvme*n1') continue ;; esac
			[ -b "/dev/${n##*/}" ] && { echo "/dev/${n##*/}"; return 0; }
		done
	done
	return 1
}

# host_connect ADDR [connect options]: connect and wait for the disk.
host_connect() {
	local addr=$1
	shift
	# A generous keep-alive: the guest is emulated and may share the machine.
	run nvme connect -t rdma -a "$addr" -s 4420 -n "$NQN" --keep-alive-tmo=30 "$@"
	wait_for 30 host_disk
	log "connected: $(host_ctrl) $(host_disk)"
}

host_disconnect() {
	run nvme disconnect -n "$NQN"
	wait_for 30 eval '! host_ctrl'
}

# fio_verify NAME DISK [fio options]: random writes and reads of mixed
# sizes over 24 MiB, every block checked with crc32c.
fio_verify() {
	local name=$1 disk=$2 out
	shift 2
	out=$(fio --name="$name" --filename="$disk" --ioengine=libaio --direct=1 \
		--rw=randrw --bsrange=4k-128k --size=24m --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@" 2>&1) ||
		{ printf '%s\n' "$out"; fail "fio $name failed"; }
	printf '%s\n' "$out" | grep -E 'err=|READ:|WRITE:|verify'
	rdma statistic show | grep -oE '^link [^ ]+|(tx_packets|retransmits|timeouts|rx_drop_[a-z_]+) [1-9][0-9]*' | tr '\n' ' '
	echo
	printf '%s\n' "$out" | has 'err= 0' || fail "fio $name reported errors"
}

# Everything this group builds, torn down before the device goes (t_reset
# calls this first).
t_group_reset() {
	local l d
	t_in_guest || return 0
	pkill -9 fio 2>/dev/null || true
	nvme disconnect-all >/dev/null 2>&1 || true
	if [ -d "$NVMET" ]; then
		for l in "$NVMET"/ports/*/subsystems/*; do
			[ -L "$l" ] && rm "$l"
		done
		for d in "$NVMET"/ports/*; do
			[ -d "$d" ] && rmdir "$d"
		done
		for d in "$NVMET"/subsystems/*/namespaces/*; do
			[ -d "$d" ] || continue
			echo 0 >"$d/enable"
			rmdir "$d"
		done
		for d in "$NVMET"/subsystems/*; do
			[ -d "$d" ] && rmdir "$d"
		done
	fi
	for d in "$NULLB"/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	modprobe -r nvme-rdma nvmet-rdma null_blk 2>/dev/null || true
	rm -f /tmp/sroce-nvme.img
	return 0
}

# --- tests -------------------------------------------------------------------

test_null_blk() {
	topo_loopback
	nvme_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 10.5.0.1
	host_connect 10.5.0.1
	fio_verify null_blk "$(host_disk)"
	host_disconnect
}

test_file_backed() {
	topo_loopback
	nvme_modules
	run truncate -s 64M /tmp/sroce-nvme.img
	target_create /tmp/sroce-nvme.img 10.5.0.1
	host_connect 10.5.0.1
	fio_verify file "$(host_disk)"
	host_disconnect
	# What the host wrote is in the file itself.
	[ "$(od -An -N4096 -tx1 /tmp/sroce-nvme.img | tr -d ' \n' | tr -d 0)" ] ||
		fail "nothing reached the backing file"
}

# Data written before a disconnect is read back after a new connection.
test_reconnect() {
	local disk sum
	topo_loopback
	nvme_modules
	nullb_create nullb0 64
	target_create /dev/nullb0 10.5.0.1
	host_connect 10.5.0.1
	disk=$(host_disk)
	run dd if=/dev/urandom of=/tmp/sroce-nvme.img bs=1M count=8 status=none
	run dd if=/tmp/sroce-nvme.img of="$disk" bs=1M oflag=direct status=none
	sum=$(sha256sum </tmp/sroce-nvme.img)
	host_disconnect
	host_connect 10.5.0.1
	disk=$(host_disk)
	[ "$(dd if="$disk" bs=1M count=8 iflag=direct status=none | sha256sum)" = "$sum" ] ||
		fail "data differs after reconnecting"
	fio_verify after_reconnect "$disk" --size=8m
	host_disconnect
}

# The target's port goes away under I/O: the host reconnects once it is
# back, and no byte is wrong.
test_port_removal() {
	local disk fio_pid rc=0
	topo_loopback
	nvme_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 10.5.0.1
	host_connect 10.5.0.1 --reconnect-delay=1 --ctrl-loss-tmo=120
	disk=$(host_disk)
	fio --name=under_removal --filename="$disk" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=16k --size=32m --iodepth=8 --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --output=/tmp/fio-removal.log &
	fio_pid=$!
	sleep 2
	run port_unlink
	wait_for 60 eval '! ctrl_state_is live'
	log "host controller: $(cat "/sys/class/nvme/$(host_ctrl)/state")"
	sleep 3
	run port_link
	wait_for 120 ctrl_state_is live
	wait "$fio_pid" || rc=$?
	cat /tmp/fio-removal.log
	[ "$rc" = 0 ] || fail "fio failed across the port removal (exit $rc)"
	has 'err= 0' </tmp/fio-removal.log || fail "fio reported errors"
	fio_verify after_removal "$disk" --size=8m
	host_disconnect
}

# Target on sroce1, host on sroce2, the traffic over the veth between them.
test_two_devices() {
	topo_wire
	nvme_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 10.7.0.1
	host_connect 10.7.0.1 --host-traddr=10.7.0.2
	fio_verify two_devices "$(host_disk)"
	host_disconnect
	# The traffic went over the wire, sent by the host's device.
	[ "$(cat /sys/class/net/st-w2/statistics/tx_packets)" -gt 1000 ] ||
		fail "almost nothing crossed the veth"
	rdma statistic show link sroce2/1 | grep -o 'tx_packets [0-9]*'
	[ "$(rdma statistic show link sroce2/1 | sed -n 's/.*tx_packets \([0-9]*\).*/\1/p')" -gt 1000 ] ||
		fail "the host's device sent almost nothing"
}

t_main
