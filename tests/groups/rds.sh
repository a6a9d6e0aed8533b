#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=50 cost=20
#
# RDS over RDMA (rds_rdma): tests/progs/sroce_rds_test exchanges messages
# from 1 byte to 64 KiB between two AF_RDS sockets forced onto the
# InfiniBand/RoCE transport, every byte checked both ways.  rds_rdma on
# Linux 6.1 binds in the initial namespace only, so the sockets sit on two
# devices there with the traffic over a veth (topo_wire, tests/lib.sh); on
# one device the messages go through one RDS connection to itself.
. "$(dirname "$0")/../lib.sh"

t_group_reset() {
	t_in_guest || return 0
	# RDS keeps its connections until the module goes.
	modprobe -r rds_rdma rds 2>/dev/null || true
	return 0
}

# No connection dropped and made again (tests/lib.sh): RDS resends what
# was not acknowledged on the new one, which would hide a transport fault.
t_group_check() { ulp_recovery_check; }

# tx_packets of device $1.
tx_packets() {
	rdma statistic show link "$1/1" | sed -n 's/.* tx_packets \([0-9]*\) .*/\1/p'
}

test_loopback() {
	local before
	topo_loopback
	run modprobe rds_rdma
	before=$(tx_packets sroce0)
	run "$SROCE_PROGS/sroce_rds_test" 10.5.0.1 10.5.0.1 100
	[ $(($(tx_packets sroce0) - before)) -ge 200 ] ||
		fail "sroce0 did not carry the messages"
}

test_two_devices() {
	local b1 b2
	topo_wire
	run modprobe rds_rdma
	b1=$(tx_packets sroce1)
	b2=$(tx_packets sroce2)
	run "$SROCE_PROGS/sroce_rds_test" 10.7.0.1 10.7.0.2 200
	[ $(($(tx_packets sroce1) - b1)) -ge 200 ] &&
		[ $(($(tx_packets sroce2) - b2)) -ge 200 ] ||
		fail "the devices did not carry the messages"
	[ "$(cat /sys/class/net/st-w1/statistics/tx_packets)" -ge 200 ] ||
		fail "the messages did not cross the veth"
}

t_main
