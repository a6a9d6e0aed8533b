#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=pair order=50 cost=1200
#
# Two guests, two kernels, one virtual wire (tests/lib-pair.sh draws it;
# scripts/vm/run-pair.sh boots them): sroce in each, servers in guest a,
# clients in guest b.  RC (pingpong, perftest), UD (pingpong) and rdma_cm
# (rping, ucmatose, udaddy) across the wire, over IPv4 and IPv6, on a
# 9000-byte link at path MTU 4096 and on a 1500-byte link at 1024; guest b
# captures the wire and tests/wire/roce_check.py checks every packet's ICRC
# and that First/Middle packets carry exactly the path MTU.
#
# NVMe-oF between the two sroce devices (over IPv4 on the 1500-byte link,
# over IPv6 on the 9000-byte one), and across sroce and rdma_rxe both
# ways.  The latter runs here, not in the interop group:
# nvmet-rdma and nvme-rdma on 6.1 open their rdma_cm IDs in the initial
# namespace only, rxe on 6.1 works only there, and rxe and sroce cannot
# both hold UDP 4791 in one namespace, so the two ends need two kernels.
#
# The apps group's user-space stacks between the two kernels
# (tests/lib-apps.sh, pair_split): qperf, UCX (UCT, UCP, io_demo) and
# libfabric (verbs msg and dgram, rxm), each server in guest a and each
# client in guest b.
#
# SMC-R (net/smc) between the two guests over IPv4, one PNET ID in both:
# an unmodified TCP program over AF_SMC (tests/lib-smc.sh).  The cm
# group's small-CQ multicast runs in guest a while guest b loads the host.
#
# netem_all_at_once: faults/all_at_once's impairments (loss, duplication,
# corruption, reordering behind a delay) on this wire, both ways, under
# ibv_rc_pingpong -c, rping -V and NVMe-oF with fio verify.
#
# Both guests run this file; a test passes only if it passes in both
# (scripts/run-tests.sh merges their results).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"
. "$(dirname "$0")/../lib-pair.sh"
. "$(dirname "$0")/../lib-nvme.sh"
. "$(dirname "$0")/../lib-smc.sh"
. "$(dirname "$0")/../lib-apps.sh"

[ "$SROCE_TEST_TIMEOUT" -ge 1500 ] || SROCE_TEST_TIMEOUT=1500

WIRE_CAP=/tmp/twohost.pcap

# capture_start / capture_stop: guest b records the wire (eth0), unfiltered.
capture_start() {
	[ "$PAIR_ROLE" = b ] || return 0
	rm -f "$WIRE_CAP" /tmp/dumpcap.err
	printf '+ dumpcap -i eth0 -P &\n' >&2
	dumpcap -q -i eth0 -P -w "$WIRE_CAP" 2>/tmp/dumpcap.err </dev/null &
	CAP_PID=$!
	RDMA_BG_PIDS+=("$CAP_PID")
	wait_for 240 grep -q "Capturing on" /tmp/dumpcap.err
}

# A failed test in guest b keeps its capture: results/twohost-TEST.pcap.
pair_keep_evidence() {
	[ -s "$WIRE_CAP" ] && cp "$WIRE_CAP" "$SROCE_RESULTS/twohost-$SROCE_PAIR_TEST.pcap"
	return 0
}

# capture_check PMTU: stop the capture; every packet's ICRC and sroce's
# header fields must check out, First/Middle packets carry exactly PMTU.
capture_check() {
	[ "$PAIR_ROLE" = b ] || return 0
	kill -INT "$CAP_PID"
	wait "$CAP_PID" || { cat /tmp/dumpcap.err; fail "dumpcap failed"; }
	run /usr/bin/python3 "$SROCE_ROOT/tests/wire/roce_check.py" --pmtu "$1" --require "$2" \
		"$WIRE_CAP" | tail -n 20
}

# active_mtu: the port's active MTU as ibv_devinfo shows it.
active_mtu() { ibv_devinfo -d sroce0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p'; }

# pingpong NAME GID_A GID_B TOOL ARGS...: 100 exchanges, with -c (one byte
# per page checked: Documentation/interop.rst).
pingpong() {
	local name=$1 ga=$2 gb=$3 tool=$4
	shift 4
	pair_tool "$name" 18515 -g "$ga" "$gb" "$tool" -c -n 100 "$@"
	grep -q '100 iters in' "$PAIR_LOG" || fail "$name: did not finish 100 iterations"
	! grep -qi 'invalid data' "$PAIR_LOG" || fail "$name: the data arrived corrupted"
}

# across MTU PMTU 4|6: the RC, UD and rdma_cm traffic at one MTU over one
# address family.  One family per test, on devices created for it: sroce's
# QP1 reuses its cached IPv4 route for IPv6 (Documentation/interop.rst;
# fixed on branch ud), so IPv4 rdma_cm followed by IPv6 on one device fails.
across() {
	local mtu=$1 pmtu=$2 fam=$3 ga gb srv cli ops
	pair_topo "$mtu"
	[ "$(active_mtu)" = "$pmtu" ] || fail "active_mtu $(active_mtu) on a $mtu-byte link, expected $pmtu"
	if [ "$fam" = 4 ]; then
		ga=$RDMA_GID1 gb=$RDMA_GID2 srv=$RDMA_IP1 cli=$RDMA_IP2
	else
		ga=$RDMA_GID6_1 gb=$RDMA_GID6_2 srv=$RDMA_IP6_1 cli=$RDMA_IP6_2
	fi
	# The verbs tools trade QP numbers over TCP first, their servers
	# listening on the first passive address getaddrinfo() gives, 0.0.0.0:
	# that exchange goes over IPv4 whatever family the RDMA traffic uses.
	PAIR_SERVER_ADDR=$RDMA_IP1
	capture_start
	pair_sync capturing
	pingpong rc "$ga" "$gb" ibv_rc_pingpong -m "$pmtu" -s 16383
	pingpong ud "$ga" "$gb" ibv_ud_pingpong -s "$pmtu"
	pair_tool ib_write_bw 18515 -x "$ga" "$gb" ib_write_bw -F -n 100 -s 65536 -m "$pmtu"
	pair_tool ib_read_bw 18515 -x "$ga" "$gb" ib_read_bw -F -n 100 -s 65536 -m "$pmtu"
	pair_cm rping 7174 rping -s -a "$srv" -v -C 100 -- rping -c -a "$srv" -v -V -C 100
	grep -q 'ping data: rdma-ping-99:' "$PAIR_LOG" || fail "rping: ping 99 missing"
	pair_cm ucmatose 7471 ucmatose -b "$srv" -C 10 -- ucmatose -s "$srv" -b "$cli" -C 10
	grep -q '^test complete' "$PAIR_LOG" || fail "ucmatose did not complete"
	pair_cm udaddy 7174 udaddy -b "$srv" -C 10 -- udaddy -s "$srv" -b "$cli" -C 10
	grep -q '^test complete' "$PAIR_LOG" || fail "udaddy did not complete"
	pair_sync traffic_done
	# RC SEND First/Middle/Last, WRITE First/Middle/Last, READ Request and
	# Response First/Middle/Last, ACK; UD SEND Only.
	ops=0x00,0x01,0x02,0x06,0x07,0x08,0x0c,0x0d,0x0e,0x0f,0x11,0x64
	capture_check "$pmtu" "$ops"
}

# nvme_across KIND_A KIND_B [MTU [4|6]]: the NVMe-oF target (nvmet-rdma,
# a null_blk namespace) in guest a on KIND_A's device, the host
# (nvme-rdma) in guest b on KIND_B's, over IPv4 (default) or IPv6 on a
# link of MTU bytes (default 1500); fio writes and reads back 24 MiB with
# crc32c verification.
nvme_across() {
	pair_topo "${3:-1500}" "$1" "$2"
	nvme_fio "$1" "$2" "${4:-4}"
}

# nvme_fio KIND_A KIND_B 4|6 [fio options]: nvme_across's traffic on the
# topology drawn.
nvme_fio() {
	local srv=$RDMA_IP1 fam=ipv4
	if [ "$3" = 6 ]; then
		srv=$RDMA_IP6_1 fam=ipv6
	fi
	nvme_modules
	if [ "$PAIR_ROLE" = a ]; then
		nullb_create nullb0 128
		target_create /dev/nullb0 "$srv" "$fam"
		pair_signal target_ready
		PAIR_WAIT_TIMEOUT=1200 pair_wait host_done >/dev/null
	else
		pair_wait target_ready >/dev/null
		host_connect "$srv"
		fio_verify "nvme_$1_target_$2_host" "$(host_disk)" "${@:4}"
		host_disconnect
		pair_signal host_done
	fi
}

# No NVMe-oF controller reset, reconnect or timeout in either guest
# (tests/lib.sh), the netem test's included: the RC transport resends what
# the wire loses.  The other tests run no kernel ULP.
t_group_check() { ulp_recovery_check; }

pair_group_cleanup() {
	nvme_reset
	smc_reset
	tc qdisc del dev eth0 root 2>/dev/null || true
}

# pair_impair SPEC...: tc netem SPEC on this guest's end of the wire
# (eth0's egress); each guest impairs what it sends.  The queue is deep
# enough that netem itself never drops: every loss is the one asked for.
# The other guest is a permanent neighbour already (pair_topo).
pair_impair() {
	run tc qdisc replace dev eth0 root netem limit 100000 "$@"
}

# Every fault of faults/all_at_once on the wire between the two guests,
# two kernels apart, each guest impairing its own egress: ibv_rc_pingpong
# -c, rping -V (its QPs with the 67 ms ACK timeout faults.sh gives them)
# and NVMe-oF with fio verify must still deliver every byte and finish.
# Each end keeps its QP (pingpong) or rdma_cm ID (rping's client) a while
# after its last message, for the other end's resends (faults.sh says
# why).  Each guest's sroce0 must show the faults in its
# counters: a wire netem left alone would prove nothing.
test_netem_all_at_once() {
	local linger=(env LD_PRELOAD="$SROCE_PROGS/libsroce_linger.so") n=0 c
	local RPING_ACK_TIMEOUT=14 RPING_LINGER=10000 srv cli
	local RDMA_TOOL_TIMEOUT=600 TOOL_WRAP=("${linger[@]}" SROCE_LINGER_MS=3000)
	pair_topo 1500
	pair_impair loss 2% duplicate 2% corrupt 1% delay 5ms reorder 10% 50%
	PAIR_SERVER_ADDR=$RDMA_IP1
	pingpong rc "$RDMA_GID1" "$RDMA_GID2" ibv_rc_pingpong -m 1024 -s 16384
	TOOL_WRAP=()
	rping_env server
	srv=("${RPING_ENV[@]}")
	rping_env client
	cli=("${RPING_ENV[@]}")
	pair_cm rping 7174 "${srv[@]}" rping -s -a "$RDMA_IP1" -v -C 100 -- \
		"${cli[@]}" rping -c -a "$RDMA_IP1" -v -V -C 100
	[ "$(pings "$PAIR_LOG" "$([ "$PAIR_ROLE" = a ] && echo 'server ')")" = 100 ] ||
		fail "rping: not all 100 pings seen"
	! grep -qi mismatch "$PAIR_LOG" "$PAIR_LOG.err" || fail "rping: data mismatch"
	# 8 MiB, not 24: through this wire, beside another lane's guest, fio
	# moved 145 KiB/s (faults/nvme verifies 24 MiB through a lighter one).
	nvme_fio sroce sroce 4 --size=8m
	run tc -s qdisc show dev eth0
	rdma statistic show link sroce0/1
	for c in retransmits rx_drop_dup rx_dup_resp rx_drop_seq rx_drop_icrc; do
		n=$((n + $(counter sroce0 "$c")))
	done
	[ "$n" -gt 0 ] || fail "sroce0 shows no sign of the faults"
	log "sroce0: $n retransmissions and drops of duplicate, out-of-order or corrupt packets"
}

# SMC-R between the two kernels: each pairs eth0 with sroce0 under one
# PNET ID (one physical network); guest b's sroce_tcp_test moves 16 MiB
# each way to guest a's, every byte checked, while guest a's SMC socket
# table must show the connection as SMC-R on sroce0, and each guest's
# sroce0 must have carried the bytes both ways.
test_smc_ipv4() {
	local bytes=$((16 << 20)) tx rx need
	pair_topo 1500
	smc_setup SROCE eth0 sroce0
	tx=$(counter sroce0 tx_packets) rx=$(counter sroce0 rx_packets)
	if [ "$PAIR_ROLE" = a ]; then
		smc_server "$RDMA_IP1"
		pair_signal smc.listening
		pair_wait smc.checked >/dev/null
		smc_used "$RDMA_IP1" sroce0
		pair_signal smc.seen
		srv_finish
	else
		pair_wait smc.listening >/dev/null
		smc_client_start "$bytes" "$RDMA_IP1"
		pair_signal smc.checked
		pair_wait smc.seen >/dev/null
		smc_client_end
	fi
	tx=$(($(counter sroce0 tx_packets) - tx)) rx=$(($(counter sroce0 rx_packets) - rx))
	need=$((bytes / $(active_mtu)))
	log "sroce0 sent $tx and received $rx packets for $bytes bytes each way (at least $need each)"
	[ "$tx" -ge "$need" ] && [ "$rx" -ge "$need" ] ||
		fail "sroce0 carried $tx/$rx packets, fewer than $bytes bytes need: SMC did not use the RDMA device"
}

# The apps group's user-space stacks (tests/lib-apps.sh) between the two
# kernels, each server in guest a and each client in guest b
# (pair_split), held to their checks there and to the packets both
# guests' sroce0 carried: qperf's seven RC tests, UCX over UCT and UCP
# (io_demo's data check included) on IPv4 (qperf opens its connections
# over IPv4 only, io_demo cannot name an IPv6 server); libfabric's
# fi_pingpong -c on verbs msg and dgram and rxm on IPv6.  About 4
# minutes for the two.
test_stacks_ipv4() {
	pair_topo 1500
	pair_split
	RDMA_SRV_WAIT=120
	apps_qperf
	apps_ucx_uct
	apps_ucx_ucp
}

# libfabric's ofi_rxd is left out between the guests: its fi_pingpong
# stalled at 1 MiB in 2 runs of 14 there, for good (120 s), after the
# path between the guests lost about 1,500 of guest a's datagrams (sroce
# counted them sent, guest b's sroce never saw them; where they went is
# not known) - rxd, a reliable protocol over UD, did not recover.  It
# recovers from 1% random loss (netem) over sroce and over rdma_rxe
# alike; it runs between the namespaces in the apps group.
test_stacks_ipv6() {
	pair_topo 1500
	pair_split
	RDMA_SRV_WAIT=120
	apps_ipv6
	apps_libfabric no-rxd
}

# The cm group's mcast_small_cq (the rdma_verbs manual's multicast example
# done over: 4 datagrams into a CQ asked for 2 entries, 20 times in a row,
# tests/lib-rdma.sh) in guest a, between two namespaces of its own, while
# guest b keeps its CPUs busy: another guest loading the machine.
test_mcast_small_cq_loaded() {
	local i
	pair_topo 1500
	if [ "$PAIR_ROLE" = a ]; then
		rdma_two_hosts_up
		pair_sync mcast.load
		mcast_small_cq_run 239.1.2.4
		pair_signal mcast.done
	else
		for i in 1 2; do
			(while :; do :; done) &
			RDMA_BG_PIDS+=($!)
		done
		pair_sync mcast.load
		PAIR_WAIT_TIMEOUT=900 pair_wait mcast.done >/dev/null
	fi
}

test_nvme_rxe_target_sroce_host() { nvme_across rxe sroce; }
test_nvme_sroce_target_rxe_host() { nvme_across sroce rxe; }
test_nvme_sroce_both_ipv4() { nvme_across sroce sroce; }
test_nvme_sroce_both_ipv6_mtu9000() { nvme_across sroce sroce 9000 6; }

test_mtu9000_pmtu4096_ipv4() { across 9000 4096 4; }
test_mtu9000_pmtu4096_ipv6() { across 9000 4096 6; }
test_mtu1500_pmtu1024_ipv4() { across 1500 1024 4; }
test_mtu1500_pmtu1024_ipv6() { across 1500 1024 6; }

t_main
