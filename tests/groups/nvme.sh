#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=40 cost=80
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
. "$(dirname "$0")/../lib-nvme.sh"

# fio through NVMe-oF runs for minutes when the emulated guest shares the
# machine with others.
[ "$SROCE_TEST_TIMEOUT" -ge 900 ] || SROCE_TEST_TIMEOUT=900

# Everything the tests build, torn down before the device goes.
t_group_reset() { nvme_reset; }
# No controller reset, reconnect or timeout the test did not cause
# (tests/lib.sh): nvme-rdma would hide a transport fault behind them.
t_group_check() { ulp_recovery_check; }

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
	# The recovery this test causes, and no other: one error recovery
	# when the port goes (the target disconnects every queue), reconnect
	# attempts refused while it is away ("Connect rejected", "rdma
	# connection establishment failed", "Failed reconnect attempt N": as
	# many as fit in its absence), and the controller set up again once.
	# No command may time out, no work request fail, and the target log
	# no error (tests/lib.sh, ULP_ALLOW).
	ULP_ALLOW="nvme_error_recovery=1 nvme_reset=1 nvme_reconnect_failed=any nvme_connect_error=any"
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
