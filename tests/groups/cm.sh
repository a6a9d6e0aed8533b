#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=34 cost=225
#
# The kernel's connection manager (rdma_cm) on top of sroce, proven with
# librdmacm's own example programs: ucmatose (RC), udaddy (UD),
# rdma_server/rdma_client (RC through the rdma_verbs helpers), rping -V
# (RC, data verified) and mckey (UD multicast, one sender and two
# receivers); on one device (loopback), across two namespaces joined by a
# veth pair, with IPv6 addresses, and over a VLAN lower device.  And
# mcast_small_cq: the project's own rdma_cm multicast program
# (tests/progs/sroce_mcast_cm) with a CQ asked for fewer entries than the
# datagrams it takes, 20 times under CPU load (about 60 s).
#
# SROCE_RC_DEV_KIND=rxe aims the loopback tests at Linux's rdma_rxe instead
# (tests/lib-rdma.sh): that is how these tests are proven.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

# Several tool pairs per test, each taking tens of seconds under emulation
# on a busy machine; every tool has its own, shorter timeout.
[ "$SROCE_TEST_TIMEOUT" -ge 900 ] || SROCE_TEST_TIMEOUT=900
# librdmacm opens every RDMA device before a server listens: slow here.
RDMA_SRV_WAIT=120

# ucmatose: 4 connections, 100 messages of 1000 bytes each way.
ucmatose_pair() {
	srv_start ucmatose stdbuf -oL ucmatose -b "$RDMA_IP1" -c 4 -C 100 -S 1000
	srv_wait_cm 7471
	cli_run ucmatose stdbuf -oL ucmatose -s "$RDMA_IP1" -c 4 -C 100 -S 1000
	srv_finish
	grep -q 'test complete' "$CLI_LOG" || fail "ucmatose: the client did not complete"
	grep -q 'test complete' "$SRV_LOG" || fail "ucmatose: the server did not complete"
	grep -q 'return status 0' "$CLI_LOG" || fail "ucmatose: client status $(grep 'return status' "$CLI_LOG")"
	grep -q 'return status 0' "$SRV_LOG" || fail "ucmatose: server status $(grep 'return status' "$SRV_LOG")"
}

# udaddy: 4 UD "connections" (address and route resolution, SIDR), 100
# datagrams each way on each.
udaddy_pair() {
	srv_start udaddy stdbuf -oL udaddy -b "$RDMA_IP1" -c 4 -C 100
	srv_wait_cm 7174
	cli_run udaddy stdbuf -oL udaddy -s "$RDMA_IP1" -c 4 -C 100
	srv_finish
	grep -q 'return status 0' "$CLI_LOG" || fail "udaddy: client status $(grep 'return status' "$CLI_LOG")"
	grep -q 'return status 0' "$SRV_LOG" || fail "udaddy: server status $(grep 'return status' "$SRV_LOG")"
	grep -q 'data transfers complete' "$CLI_LOG" || fail "udaddy: the client's transfers did not complete"
	grep -q 'data transfers complete' "$SRV_LOG" || fail "udaddy: the server's transfers did not complete"
}

# rdma_server / rdma_client: one RC connection, one message each way.
rdma_server_pair() {
	srv_start rdma_server stdbuf -oL rdma_server -s "$RDMA_IP1"
	srv_wait_cm 7471
	cli_run rdma_client stdbuf -oL rdma_client -s "$RDMA_IP1"
	srv_finish
	grep -q 'rdma_client: end 0' "$CLI_LOG" || fail "rdma_client did not end with 0"
	grep -q 'rdma_server: end 0' "$SRV_LOG" || fail "rdma_server did not end with 0"
}

# mckey_run GROUP: two receivers (end 1, and end 2 if the ends differ; else
# both on end 1) join GROUP; once both have joined, a sender on end 2 sends
# 20 datagrams to it; each receiver must receive all 20.
mckey_run() {
	local group=$1 r pids=() logs=() rc ip ns deadline
	for r in 1 2; do
		if [ "$r" = 2 ] && [ "$RDMA_DEV2" != "$RDMA_DEV1" ]; then
			ns=("${RDMA_NS2[@]}") ip=$RDMA_IP2
		else
			ns=("${RDMA_NS1[@]}") ip=$RDMA_IP1
		fi
		logs+=("/tmp/mckey.recv$r")
		printf '+ [receiver %s] %s &\n' "$r" "${ns[*]} mckey -m $group -b $ip -C 20" >&2
		timeout -k 5 "$RDMA_TOOL_TIMEOUT" "${ns[@]}" stdbuf -oL mckey -m "$group" -b "$ip" -C 20 \
			>"/tmp/mckey.recv$r" 2>&1 </dev/null &
		pids+=($!)
		RDMA_BG_PIDS+=($!)
	done
	# A receiver prints "receiving data transfers" once it has joined.
	deadline=$((SECONDS + 60))
	for r in 0 1; do
		until grep -q 'receiving data transfers' "${logs[$r]}"; do
			kill -0 "${pids[$r]}" 2>/dev/null || { cat "${logs[$r]}"; mckey_refused "${logs[$r]}"; fail "mckey receiver $((r + 1)) exited before joining"; }
			[ $SECONDS -lt $deadline ] || { cat "${logs[$r]}"; fail "mckey receiver $((r + 1)) did not join in 60 s"; }
			sleep 0.2
		done
	done
	cli_run mckey_send stdbuf -oL mckey -m "$group" -b "$RDMA_IP2" -s -C 20
	grep -q 'data transfers complete' "$CLI_LOG" || fail "mckey sender did not complete"
	for r in 0 1; do
		rc=0
		wait_pid_for 60 "${pids[$r]}" || rc=$?
		sed "s/^/  receiver $((r + 1))| /" "${logs[$r]}"
		[ $rc = 0 ] || fail "mckey receiver $((r + 1)) failed (status $rc)"
		grep -q 'data transfers complete' "${logs[$r]}" ||
			fail "mckey receiver $((r + 1)) did not receive all 20 datagrams"
	done
}

# wait_pid_for SECONDS PID: PID's exit status; 124 if it is still running.
wait_pid_for() {
	local deadline=$((SECONDS + $1))
	while kill -0 "$2" 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			kill "$2" 2>/dev/null
			wait "$2" 2>/dev/null
			return 124
		fi
		sleep 0.2
	done
	wait "$2"
}

cm_tools() {
	ucmatose_pair
	udaddy_pair
	rdma_server_pair
	rping_pair 200
}

test_cm() {
	rdma_topo loopback
	cm_tools
}

test_cm_two_hosts() {
	rdma_topo two_hosts
	cm_tools
}

test_cm_ipv6() {
	rdma_topo loopback
	rdma_ipv6 addrs
	cm_tools
}

test_cm_ipv6_two_hosts() {
	rdma_topo two_hosts
	rdma_ipv6 addrs
	cm_tools
}

test_mckey() {
	rdma_topo loopback
	mckey_run 239.1.2.3
	[ "$RDMA_KIND" = sroce ] || return 0
	[ "$(sroce_object_count mcast)" = 0 ] || fail "multicast groups left after mckey: $(sroce_object_count mcast)"
}

test_mckey_two_hosts() {
	rdma_topo two_hosts
	mckey_run 239.1.2.3
}

# mckey_refused LOG: skip the test if the receiver's join was refused by
# rdma_cm itself (MCKEY_REFUSED_SKIP set: see test_mckey_ipv6).
mckey_refused() {
	[ -n "${MCKEY_REFUSED_SKIP:-}" ] || return 0
	grep -q 'failure joining: Unknown error 524' "$1" || return 0
	skip "$MCKEY_REFUSED_SKIP"
}

# rdma_cm refuses to join an IPv6 multicast group on a RoCEv2 port
# (cma_iboe_join_multicast(): -ENOTSUPP, "Unknown error 524" from mckey)
# whatever the device, on 6.1 and still on 6.12 (2026-11-26); sroce never
# returns -ENOTSUPP, so that error at the join is rdma_cm's.  The test
# skips on exactly that refusal and runs wherever the kernel allows the
# join; UD multicast itself is tested through ibv_attach_mcast in the ud
# group.
test_mckey_ipv6() {
	MCKEY_REFUSED_SKIP="rdma_cm on Linux $(uname -r) does not join IPv6 multicast groups on RoCEv2 (-ENOTSUPP)"
	rdma_topo two_hosts
	rdma_ipv6 addrs
	mckey_run ff0e::1:2:3
}

test_mcast_small_cq() {
	rdma_topo two_hosts
	mcast_small_cq_run 239.1.2.4
}

test_cm_vlan() {
	rdma_topo two_hosts_vlan
	cm_tools
	mckey_run 239.1.2.3
}

t_main
