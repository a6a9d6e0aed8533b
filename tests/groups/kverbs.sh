#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=35 cost=30
#
# The kernel verbs a ULP uses, from kernel context: tests/kmod/
# sroce_kwr_test.ko connects two RC QPs and runs SEND/IMM, completion
# events of a CQ armed each way (IB_CQ_SOLICITED_MASK too, as net/smc
# arms), WRITE/IMM and READ through the DMA region, fast registration of
# scatterlists (separate pages, offsets, 16 KiB pages, 1 MiB), LOCAL_INV,
# key rotation, SEND_WITH_INV, atomics, ATOMIC WRITE and FLUSH (Linux
# 6.2 on; on 6.1, which has no such kernel work requests, they are the
# two cases that skip), and the remote and local
# protection errors, checking every byte and completion; work requests
# posted to an ERR QP from hardirq and with interrupts off, and modify_qp
# racing a failure.  On one device and across two namespaces, over IPv4
# and IPv6 GIDs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

# Cases the module runs; each prints "<case>: pass", but atomic_write and
# flush "<case>: skip: ..." on a kernel before 6.2.
KWR_CASES=17
kwr_skips_allowed() {
	[ "$(printf '%s\n' 6.2 "$(uname -r)" | sort -V | head -n 1)" != 6.2 ] && echo 2 || echo 0
}

# kwr_run TAG PARAM...: load the module with PARAMs; every case must pass.
kwr_run() {
	local tag=$1 rc=0 log
	shift
	echo "sroce-kwr: $tag" >/dev/kmsg
	run insmod "$SROCE_KWR_KO" "$@" || rc=$?
	log=$(dmesg | sed -n "\#sroce-kwr: $tag\$#,\$p" | grep 'sroce_kwr_test: ' || true)
	printf '%s\n' "$log"
	[ $rc = 0 ] || fail "$tag: $(printf '%s\n' "$log" | grep -c ': FAIL') case(s) failed"
	local skips
	skips=$(printf '%s\n' "$log" | grep -Ec 'sroce_kwr_test: (atomic_write|flush): skip: ' || true)
	[ "$skips" -le "$(kwr_skips_allowed)" ] ||
		fail "$tag: atomic_write or flush skipped on Linux $(uname -r), which has IB_WR_ATOMIC_WRITE and IB_WR_FLUSH"
	[ "$(printf '%s\n' "$log" | grep -c ': pass$')" = "$((KWR_CASES - skips))" ] ||
		fail "$tag: not every case ran"
	run rmmod sroce_kwr_test
}

test_loopback() {
	topo_loopback
	kwr_run loopback dev=sroce0
}

test_loopback_ipv6() {
	topo_loopback
	kwr_run loopback-ipv6 dev=sroce0 ipv6=1
}

test_two_hosts() {
	topo_two_hosts
	kwr_run two-hosts dev=sroce1 peer=sroce2
}

test_two_hosts_ipv6() {
	topo_two_hosts
	kwr_run two-hosts-ipv6 dev=sroce1 peer=sroce2 ipv6=1
}

# FLUSH on the wire (Linux 6.2 on): the module's cases between sroce1 and
# sroce2 across the veth, captured; tests/wire/roce_check.py checks every
# packet (each FETH's reserved bits, level and placement type among its
# fields) and requires FLUSH requests and their empty READ Response Only
# answers.  tshark 4.0 does not know the opcode, so it is not asked.
# About 20 s.
test_flush_wire() {
	[ "$(kwr_skips_allowed)" = 0 ] ||
		skip "Linux $(uname -r) has no kernel FLUSH (IB_WR_FLUSH: 6.2 on)"
	topo_two_hosts
	capture_start "$H1" st-v1
	kwr_run flush-wire dev=sroce1 peer=sroce2
	capture_stop
	cp "$WIRE_CAP" "$SROCE_RESULTS/kverbs-flush.pcap"
	run /usr/bin/python3 "$SROCE_ROOT/tests/wire/roce_check.py" --src 10.6.0.1 \
		--src 10.6.0.2 --require 0x1c,0x10 "$WIRE_CAP"
}

t_main
