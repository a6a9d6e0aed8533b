#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=55 cost=490
#
# Network faults: tc netem impairs the wire between two sroce devices —
# packets lost, reordered behind a delay, duplicated, corrupted, all of it
# at once, and acknowledgements held back past the local ACK timeout — and
# RC traffic must still deliver every byte right and complete every work
# request: sroce_rc_test's data cases (each checks the data byte for byte
# and every completion; tests/progs/rc/), ibv_rc_pingpong -c,
# rping -V, and NVMe-oF with fio verify=crc32c.  UD and UC traffic may lose
# messages, as those transports allow, but never deliver a wrong one
# (sroce_ud_test's lossy cases).  Each test also reads the
# devices' counters to show that the fault really happened and was dealt
# with the way it should be (a test on a link netem left alone would prove
# nothing).
#
# The RC tests run across two namespaces (topo_two_hosts), the NVMe-oF one
# on the initial namespace's veth pair (topo_wire: nvmet-rdma and nvme-rdma
# on Linux 6.1 live there only).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"
. "$(dirname "$0")/../lib-nvme.sh"

# Retransmission under emulation is slow: minutes per test.
[ "$SROCE_TEST_TIMEOUT" -ge 1800 ] || SROCE_TEST_TIMEOUT=1800
RC_CASES_TIMEOUT=1500
# rdma_cm gives rping's QP a local ACK timeout near a second (the packet
# lifetime it assumes for RoCE): every lost packet costs that much.
RDMA_TOOL_TIMEOUT=600

# The cases that move data (the error-path cases expect exact completions
# a lossy wire may legitimately delay; the rc group runs them).
FAULT_CASES=send,send_imm,send_sge,send_unsignaled,rdma_write,rdma_write_imm,rdma_read,rdma_read_sge,atomic_cas,atomic_faa,wr_api,fill_sq,many_qps,xrc,odp

# faults_trace's events off too, should its test have been killed.
t_group_reset() {
	nvme_reset
	sroce_events_off
}
# The RC transport resends what the wire loses; nothing of it may reach
# NVMe-oF (test_nvme): no controller reset, reconnect or timeout
# (tests/lib.sh).  The other tests run no kernel ULP.
t_group_check() { ulp_recovery_check; }

# impair DEV NS SPEC...: netem SPEC on DEV's egress (NS: its namespace, or
# "-" for the initial one), DEV's neighbours pinned first.  The queue is
# deep enough that netem itself never drops: every loss is the one asked
# for.
impair() {
	local dev=$1 ns=$2
	shift 2
	pin_neighbours "$dev" "$ns"
	if [ "$ns" = - ]; then
		run tc qdisc replace dev "$dev" root netem limit 100000 "$@"
	else
		run tc -n "$ns" qdisc replace dev "$dev" root netem limit 100000 "$@"
	fi
}

# impair_both SPEC...: the same impairment both ways between sroce1 and sroce2.
impair_both() {
	impair st-v1 "$H1" "$@"
	impair st-v2 "$H2" "$@"
}

# sum NAME: NAME's counter on sroce1 and sroce2 together.
sum() { echo $(($(counter sroce1 "$1") + $(counter sroce2 "$1"))); }

show_counters() {
	local d
	for d in sroce1 sroce2; do
		echo "$d: $(rdma statistic show link "$d/1" | grep -oE '(tx_packets|rx_[a-z_]+|retransmits|timeouts|[a-z]+_naks_[a-z]+) [1-9][0-9]*' | tr '\n' ' ')"
	done
}

# unreliable_cases: UD datagrams and UC messages over the same wire
# (sroce_ud_test's lossy cases with -L): each one that arrives must be one
# that was sent, whole and unchanged (a UC message never part of one or
# pieces of two); they may be lost, or arrive twice, as the unreliable
# transports allow, but at least half must arrive.
unreliable_cases() {
	local prog=$SROCE_PROGS/sroce_ud_test rc=0
	[ -x "$prog" ] || fail "$prog not built (make -C tests/progs)"
	printf '+ %s\n' "$prog -d $RDMA_DEV1 -D $RDMA_DEV2 -g $RDMA_GID1 -G $RDMA_GID2 -t lossy_ud,lossy_uc -L" >&2
	timeout -k 5 600 "${RDMA_NS1[@]}" "$prog" -d "$RDMA_DEV1" -D "$RDMA_DEV2" \
		-g "$RDMA_GID1" -G "$RDMA_GID2" -t lossy_ud,lossy_uc -L >/tmp/lossy 2>&1 || rc=$?
	cat /tmp/lossy
	[ $rc != 124 ] || fail "sroce_ud_test timed out"
	if grep -q ': FAIL' /tmp/lossy; then
		fail "sroce_ud_test: $(grep ': FAIL' /tmp/lossy | tr '\n' ' ')"
	fi
	[ $rc = 0 ] || fail "sroce_ud_test exited with status $rc"
	[ "$(grep -cE '^lossy_u[dc]: pass' /tmp/lossy)" = 2 ] ||
		fail "sroce_ud_test: lossy_ud and lossy_uc did not both pass"
}

# faults_trace: sroce's go-back, NAK and QP state events (rare, cheap)
# recorded from here on; if the test fails, the last of them go in its log
# with the devices' counters (faults_evidence): which QP spent its
# retries, on what, with how many left.  Replaces the EXIT trap rdma_topo
# set, and runs it.
faults_trace() {
	local e
	tracefs_find || return 0
	echo 2048 >"$TRACEFS/buffer_size_kb"
	: >"$TRACEFS/trace"
	for e in sroce_qp_state sroce_retransmit sroce_ack_timeout sroce_nak_sent sroce_nak_rcvd \
		 sroce_rnr_wait; do
		echo 1 >"$TRACEFS/events/sroce/$e/enable"
	done
	trap 'faults_evidence $?; rdma_cleanup' EXIT
}

faults_evidence() {
	echo 0 >"$TRACEFS/events/sroce/enable"
	[ "$1" = 0 ] || [ "$1" = 4 ] && return 0
	echo "the devices' counters that are not zero:"
	show_counters 2>&1 || true
	echo "the last go-back, NAK and QP state events:"
	grep -v '^#' "$TRACEFS/trace" | tail -n 80
}

# faulty_traffic: the verified RC traffic, each program failing the test
# on a wrong byte, a missing or wrong completion, or a timeout; then UD
# and UC.
faulty_traffic() {
	faults_trace
	rc_cases -t "$FAULT_CASES" -m 1024
	unreliable_cases
	# Each end keeps its QP 3 s after its last iteration: on a lossy wire
	# the other end may have to resend its last SEND (lib-rdma.sh).
	PP_LINGER=3000 pingpong rc_pingpong ibv_rc_pingpong
	# The client keeps its rdma_cm ID until CM has resent a lost DREQ
	# twice (lib-rdma.sh; without it faults/loss failed once: the server
	# never saw the disconnect).  Both ends' QPs wait 67 ms for an ACK,
	# as sroce_rc_test's do, not rdma_cm's half second: a ping-pong's
	# every lost packet is a last one, which only the timeout recovers.
	RPING_LINGER=10000 RPING_ACK_TIMEOUT=14 rping_pair 100
	show_counters
}

# expect_some NAME...: the sum of these counters is not zero.
expect_some() {
	local n=0 c
	for c in "$@"; do
		n=$((n + $(sum "$c")))
	done
	[ "$n" -gt 0 ] || fail "no sign of the fault: $* all zero"
	log "$*: $n"
}

test_loss() {
	rdma_topo two_hosts
	impair_both loss 5%
	faulty_traffic
	expect_some retransmits
}

# A quarter of the packets jump the queue ahead of others held 10 ms.
test_reorder() {
	rdma_topo two_hosts
	impair_both delay 10ms reorder 25% 50%
	faulty_traffic
	expect_some seq_naks_sent
}

test_duplicate() {
	rdma_topo two_hosts
	impair_both duplicate 5%
	faulty_traffic
	expect_some rx_drop_dup rx_dup_resp
}

# A bit flipped somewhere in 1% of the packets: the ICRC (or the IP header
# checksum) catches every one; a corrupted packet is a lost one.
test_corrupt() {
	rdma_topo two_hosts
	impair_both corrupt 1%
	faulty_traffic
	expect_some rx_drop_icrc rx_drop_header rx_drop_short rx_drop_opcode rx_drop_no_qp
}

# Every fault at once.  (ibv_rc_pingpong failed here once, on a loaded
# host, with RETRY_EXC_ERR on the server's SEND, before faulty_traffic kept
# each end's QP after its last iteration; faults/loss later showed the
# likely cause: the last SEND's ACK lost, and its resend finding the
# peer's QP already destroyed.)
test_all_at_once() {
	rdma_topo two_hosts
	impair_both loss 2% duplicate 2% corrupt 1% delay 5ms reorder 10% 50%
	faulty_traffic
	expect_some retransmits
}

# Every response held back 100 ms, past the local ACK timeout the test sets
# (-a 14: 67 ms, whatever SROCE_RC_ACK_TIMEOUT says): the requester goes
# back and sends again while the responses to the first transmission are
# still coming.  Those must be taken (they acknowledge what they
# acknowledge), not thrown away as unexpected: rx_drop_resp stays 0 on the
# requester.  Dropped may be only true duplicates (rx_dup_resp) and READ
# or atomic responses beyond responses still missing (rx_drop_gap: a
# go-back-N requester takes nothing past a gap; it asks again from the
# first missing one).
test_late_acks() {
	rdma_topo two_hosts
	impair st-v2 "$H2" delay 100ms
	rc_cases -t "$FAULT_CASES" -m 1024 -a 14
	show_counters
	[ "$(counter sroce1 timeouts)" -gt 0 ] || fail "no local ACK timeout: the responses were not late"
	[ "$(counter sroce1 rx_drop_resp)" = 0 ] ||
		fail "sroce1 dropped $(counter sroce1 rx_drop_resp) responses it should have accepted"
}

# NVMe-oF, target on sroce1 and host on sroce2, over a wire that loses,
# reorders, duplicates and corrupts.
test_nvme() {
	topo_wire
	impair st-w1 - loss 1% duplicate 1% corrupt 0.5% delay 2ms reorder 10% 50%
	impair st-w2 - loss 1% duplicate 1% corrupt 0.5% delay 2ms reorder 10% 50%
	nvme_modules
	nullb_create nullb0 128
	target_create /dev/nullb0 10.7.0.1
	host_connect 10.7.0.1 --host-traddr=10.7.0.2
	fio_verify faults "$(host_disk)"
	host_disconnect
	expect_some retransmits
}

t_main
