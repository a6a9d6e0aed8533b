#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=36 cost=90
#
# sroce's tracepoints (Documentation/tracing.rst) against its counters.
# Every sroce event is enabled through tracefs around a known exchange,
# and the events must be what the counters say happened, exactly:
#
#   rc_events    sroce_rc_test's send_imm case on one device (SEND with
#                immediate of 0, 1 and 65537 bytes at path MTU 1024, each
#                acknowledged): sroce_tx events = tx_packets + tx_errors,
#                sroce_rx events = rx_packets, the sroce_drop events of
#                each reason = that counter's increase; the opcodes are
#                SEND_ONLY_IMM, SEND_FIRST, SEND_MIDDLE, SEND_LAST_IMM and
#                ACK (without a retransmission, 2 + 1 + 63 + 1 SEND packets
#                each way); both QPs of each pair go RESET -> INIT -> RTR
#                -> RTS.
#   rnr_events   the rnr_exceeded case: RNR NAKs sent and received, each
#                with its counter, the RNR wait and its timer, the go-back
#                after it (reason rnr_nak) and the requester's QP failing.
#   drop_events  malformed datagrams from a UDP socket (two hosts): zeros
#                that fail the ICRC and 8-byte runts, over IPv4 and IPv6;
#                each a sroce_rx without a BTH and a sroce_drop whose
#                reason is its counter, rx_drop_icrc or rx_drop_short.
#   res_details  "rdma resource show ... -dd" of an ibv_rc_pingpong server
#                waiting for its client: the CQ's ring (a power of two,
#                one more than its cqe), producer, consumer and state, the
#                region's driver attributes (its address only to
#                CAP_NET_ADMIN), the QP's receive queue (the
#                receives the server posted) and send queue.
#
# The events are disabled again after each test (t_group_reset too).
# Cost: about 40 s in all in an emulated guest (each test sets up its
# topology; the exchanges themselves take a few seconds).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

RC_CASES_TIMEOUT=300

TRACE_OUT=/tmp/sroce-trace.txt
TRACE_BUF_SAVE=/tmp/sroce-trace-buffer-kb

t_group_reset() {
	local d
	sroce_events_off
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		if [ -s "$TRACE_BUF_SAVE" ] && [ -w "$d/buffer_size_kb" ]; then
			cat "$TRACE_BUF_SAVE" >"$d/buffer_size_kb"
			rm -f "$TRACE_BUF_SAVE"
		fi
	done
	return 0
}

# trace_on: an empty buffer, room for every event, every sroce event on.
trace_on() {
	tracefs_find || fail "no tracefs"
	[ -d "$TRACEFS/events/sroce" ] || fail "no sroce events in $TRACEFS/events"
	# The size to restore: before its first use the file reads "7
	# (expanded: 1408)", of which only the number that counts is written.
	[ -s "$TRACE_BUF_SAVE" ] || sed -E 's/.*expanded: ([0-9]+).*/\1/; s/ .*//' \
		"$TRACEFS/buffer_size_kb" >"$TRACE_BUF_SAVE"
	echo 8192 >"$TRACEFS/buffer_size_kb"
	echo 1 >"$TRACEFS/tracing_on"
	: >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/sroce/enable"
}

# trace_off: every sroce event off, the buffer in $TRACE_OUT; no event
# may have been lost.
trace_off() {
	local hdr
	echo 0 >"$TRACEFS/events/sroce/enable"
	cat "$TRACEFS/trace" >"$TRACE_OUT"
	hdr=$(grep -m1 'entries-in-buffer/entries-written' "$TRACE_OUT" || true)
	echo "trace: $(grep -c ' sroce_' "$TRACE_OUT" || true) sroce events; $hdr"
	[[ $hdr =~ ([0-9]+)/([0-9]+) ]] || fail "no buffer summary in the trace"
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] ||
		fail "the trace buffer lost events ($hdr)"
}

# events EVENT DEV [PATTERN]: how many EVENT lines of DEV the trace holds
# (that also match PATTERN, an extended regexp).
events() {
	grep -E " $1: $2 " "$TRACE_OUT" | grep -cE -- "${3:-.}" || true
}

# stats DEV FILE: DEV's counters into FILE, a "name value" line each.
stats() {
	rdma statistic show link "$1/1" | tr -s '[:space:]' '\n' | tail -n +3 | paste -d ' ' - - >"$2"
	[ -s "$2" ] || fail "no counters of $1"
}

# delta NAME: NAME's increase from /tmp/stats.0 to /tmp/stats.1.
delta() {
	local a b
	a=$(awk -v k="$1" '$1 == k { print $2 }' /tmp/stats.0)
	b=$(awk -v k="$1" '$1 == k { print $2 }' /tmp/stats.1)
	[ -n "$a" ] && [ -n "$b" ] || fail "no counter $1"
	echo $((b - a))
}

# check_counts DEV: the packet and drop events of DEV against its counters.
check_counts() {
	local dev=$1 c want got
	want=$(($(delta tx_packets) + $(delta tx_errors)))
	got=$(events sroce_tx "$dev")
	echo "$dev: sroce_tx $got, tx_packets + tx_errors $want"
	[ "$got" = "$want" ] || fail "$got sroce_tx events, but tx_packets + tx_errors rose by $want"
	want=$(delta rx_packets)
	got=$(events sroce_rx "$dev")
	echo "$dev: sroce_rx $got, rx_packets $want"
	[ "$got" = "$want" ] || fail "$got sroce_rx events, but rx_packets rose by $want"
	[ "$want" -gt 0 ] || fail "nothing was received"
	for c in $(awk '$1 ~ /^rx_drop_|^rx_dup_resp$|_read_replays$|^tx_errors$/ { print $1 }' /tmp/stats.1); do
		want=$(delta "$c")
		got=$(events sroce_drop "$dev" " reason=$c\$")
		[ "$got" = "$want" ] || fail "$got sroce_drop events with reason $c, but $c rose by $want"
	done
	want=$(($(delta rp_cnp_ignored) + $(delta rp_cnp_handled)))
	got=$(events sroce_cnp "$dev")
	[ "$got" = "$want" ] || fail "$got sroce_cnp events, but rp_cnp_ignored + rp_cnp_handled rose by $want"
	want=$(delta retransmits)
	got=$(events sroce_retransmit "$dev")
	[ "$got" = "$want" ] || fail "$got sroce_retransmit events, but retransmits rose by $want"
	want=$(delta timeouts)
	got=$(events sroce_ack_timeout "$dev")
	[ "$got" = "$want" ] || fail "$got sroce_ack_timeout events, but timeouts rose by $want"
	for c in seq rnr err; do
		check_naks "$dev" "$c" sent
		check_naks "$dev" "$c" rcvd
	done
}

# check_naks DEV seq|rnr|err sent|rcvd: the NAK events of a kind against
# their counter.
check_naks() {
	local pat want got
	case $2 in
	seq) pat=' psn_seq_err code=' ;;
	rnr) pat=' rnr timer=' ;;
	*) pat=' (invalid_req|rem_access|rem_op|invalid_rd) code=' ;;
	esac
	want=$(delta "$2_naks_$3")
	got=$(events "sroce_nak_$3" "$1" "$pat")
	[ "$got" = "$want" ] || fail "$got sroce_nak_$3 events of kind $2, but $2_naks_$3 rose by $want"
}

# rc_case_traced CASE: sroce_rc_test's CASE on sroce0 with every event on,
# the counters before and after in /tmp/stats.0 and /tmp/stats.1.
rc_case_traced() {
	[ "$RDMA_KIND" = sroce ] || skip "the tracepoints are sroce's"
	rdma_topo loopback
	stats sroce0 /tmp/stats.0
	trace_on
	rc_cases -t "$1" -m 1024
	trace_off
	stats sroce0 /tmp/stats.1
	has "^$1: pass$" </tmp/rc_cases || fail "$1 did not pass"
}

# qp_states: every QP that went RESET -> INIT went on to RTR and RTS;
# prints how many did.
qp_states() {
	local q n=0
	for q in $(grep -E ' sroce_qp_state: sroce0 .* RESET -> INIT ' "$TRACE_OUT" |
		   grep -oE 'qpn=[0-9]+' | sort -u); do
		grep -qE " sroce_qp_state: sroce0 $q INIT -> RTR cause=modify_qp" "$TRACE_OUT" ||
			fail "QP $q went to INIT, never to RTR"
		grep -qE " sroce_qp_state: sroce0 $q RTR -> RTS cause=modify_qp" "$TRACE_OUT" ||
			fail "QP $q went to RTR, never to RTS"
		n=$((n + 1))
	done
	echo "$n"
}

test_rc_events() {
	local op n
	rc_case_traced send_imm
	check_counts sroce0
	for op in SEND_ONLY_IMM SEND_FIRST SEND_MIDDLE SEND_LAST_IMM ACK; do
		[ "$(events sroce_tx sroce0 " RC $op ")" -gt 0 ] || fail "no $op sent"
		[ "$(events sroce_rx sroce0 " RC $op ")" -gt 0 ] || fail "no $op received"
	done
	! grep -E ' sroce_rx: sroce0 ' "$TRACE_OUT" | grep -qvE ' sqpn=-1 ' ||
		fail "an RC packet's sroce_rx names a source QP"
	if [ "$(delta retransmits)" = 0 ]; then
		for op in SEND_ONLY_IMM:2 SEND_FIRST:1 SEND_MIDDLE:63 SEND_LAST_IMM:1; do
			n=$(events sroce_tx sroce0 " RC ${op%:*} ")
			[ "$n" = "${op#*:}" ] || fail "$n ${op%:*} packets sent, expected ${op#*:}"
			n=$(events sroce_rx sroce0 " RC ${op%:*} ")
			[ "$n" = "${op#*:}" ] || fail "$n ${op%:*} packets received, expected ${op#*:}"
		done
	fi
	n=$(qp_states)
	[ "$n" -ge 2 ] || fail "$n QPs went RESET -> INIT -> RTR -> RTS, expected both of the pair"
}

test_rnr_events() {
	local n
	rc_case_traced rnr_exceeded
	check_counts sroce0
	[ "$(delta rnr_naks_sent)" -gt 0 ] || fail "no RNR NAK was sent"
	[ "$(events sroce_rnr_wait sroce0)" -gt 0 ] || fail "no sroce_rnr_wait"
	[ "$(events sroce_rnr_timer sroce0)" -gt 0 ] || fail "no sroce_rnr_timer"
	n=$(events sroce_retransmit sroce0 ' reason=rnr_nak$')
	[ "$n" -gt 0 ] || fail "no go-back after an RNR wait"
	# rnr_retry 1: the one resend after the wait leaves no RNR retry.
	[ "$(events sroce_retransmit sroce0 ' left=0 reason=rnr_nak$')" = "$n" ] ||
		fail "a go-back after an RNR wait does not show rnr_retry 1 spent (left=0)"
	[ "$(events sroce_qp_state sroce0 ' RTS -> ERR cause=no_event ')" -ge 2 ] ||
		fail "the requesters' failures are not traced"
}

test_drop_events() {
	[ "$RDMA_KIND" = sroce ] || skip "the tracepoints are sroce's"
	topo_two_hosts
	stats sroce1 /tmp/stats.0
	trace_on
	run n2 python3 -c "$MALFORMED_PY" 10.6.0.1
	run n2 python3 -c "$MALFORMED_PY" fd00:6::1
	wait_for 10 rx_packets_rose sroce1 6
	trace_off
	stats sroce1 /tmp/stats.1
	check_counts sroce1
	[ "$(delta rx_drop_icrc)" = 4 ] || fail "rx_drop_icrc rose by $(delta rx_drop_icrc), not 4"
	[ "$(delta rx_drop_short)" = 2 ] || fail "rx_drop_short rose by $(delta rx_drop_short), not 2"
	[ "$(events sroce_rx sroce1 ' none - psn=0 len=0$')" = 6 ] ||
		fail "the malformed datagrams' sroce_rx events do not say they had no BTH"
	[ "$(events sroce_rx sroce2)" = 0 ] || fail "sroce2 traced packets it never got"
}

# rx_packets_rose DEV N: DEV's rx_packets is N above /tmp/stats.0's.
rx_packets_rose() {
	local a b
	a=$(awk '$1 == "rx_packets" { print $2 }' /tmp/stats.0)
	b=$(counter "$1" rx_packets)
	[ $((b - a)) -ge "$2" ]
}

# res_entry cq|mr|qp: "key value" lines of the resource of that kind the
# ibv_rc_pingpong server owns (rdma -j -dd: the driver's attributes too).
res_entry() {
	"${RES_AS[@]}" rdma -j -dd res show "$1" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("comm") == "ibv_rc_pingpong":
        for k, v in e.items():
            print(k, v)
        sys.exit(0)
sys.exit(1)'
}

# RES_AS: a command prefix res_entry runs rdma through (none: as root).
RES_AS=()
# As nobody, without capabilities.
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all)

# attr FILE KEY: KEY's value in a res_entry listing.
attr() {
	awk -v k="$2" '$1 == k { print $2; f = 1 } END { exit !f }' "$1" ||
		fail "no $2 in $(basename "$1"): $(tr '\n' ' ' <"$1")"
}

# server_ready N: the server's QP shows N receives posted and none taken,
# and its CQ is armed.
server_ready() {
	res_entry qp >/tmp/res.qp &&
		[ "$(awk '$1 == "drv_rq_prod" { print $2 }' /tmp/res.qp)" = "$1" ] &&
		[ "$(awk '$1 == "drv_rq_cons" { print $2 }' /tmp/res.qp)" = 0 ] &&
		res_entry cq | grep -qx 'drv_armed next'
}

# An ibv_rc_pingpong server waiting for its client has made a CQ of 101
# entries (its receive depth, 100, plus one), armed it (-e), registered
# a 4096-byte buffer, created an RC QP and posted 100 receives.
test_res_details() {
	local pid cqe slots
	[ "$RDMA_KIND" = sroce ] || skip "the driver attributes are sroce's"
	rdma_topo loopback
	ibv_rc_pingpong -d sroce0 -g "$RDMA_GID1" -r 100 -s 4096 -e >/tmp/pp.srv 2>&1 &
	pid=$!
	RDMA_BG_PIDS+=("$pid")
	(wait_for 30 server_ready 100) || {
		echo "--- the server's QP and CQ as last seen, and its output:"
		cat /tmp/res.qp
		res_entry cq || true
		rdma -dd res show qp link sroce0/1 || true
		cat /tmp/pp.srv
		fail "the server's QP never showed 100 receives posted and an armed CQ"
	}
	res_entry cq >/tmp/res.cq || fail "no CQ of the server's"
	res_entry mr >/tmp/res.mr || fail "no MR of the server's"
	sed 's/^/  qp: /' /tmp/res.qp
	sed 's/^/  cq: /' /tmp/res.cq
	sed 's/^/  mr: /' /tmp/res.mr

	cqe=$(attr /tmp/res.cq cqe)
	slots=$(attr /tmp/res.cq drv_ring_slots)
	[ "$slots" = $((cqe + 1)) ] || fail "CQ ring of $slots slots for cqe $cqe"
	[ $((slots & (slots - 1))) = 0 ] && [ "$slots" -ge 102 ] ||
		fail "CQ ring of $slots slots: not the power of two above 101"
	[ "$(attr /tmp/res.cq drv_prod)" = 0 ] && [ "$(attr /tmp/res.cq drv_cons)" = 0 ] ||
		fail "CQ indices not 0 before any completion"
	[ "$(attr /tmp/res.cq drv_armed)" = next ] || fail "CQ armed: $(attr /tmp/res.cq drv_armed)"
	[ "$(attr /tmp/res.cq drv_overflow)" = 0 ] || fail "CQ overflowed"
	[ "$(attr /tmp/res.cq drv_ring)" = user ] || fail "CQ ring: $(attr /tmp/res.cq drv_ring)"

	[ "$(attr /tmp/res.mr drv_type)" = user ] || fail "MR type: $(attr /tmp/res.mr drv_type)"
	[ "$(attr /tmp/res.mr drv_length)" = 4096 ] || fail "MR length: $(attr /tmp/res.mr drv_length)"
	[ "$(attr /tmp/res.mr mrlen)" = 4096 ] || fail "core's MR length: $(attr /tmp/res.mr mrlen)"
	[ "$(attr /tmp/res.mr drv_iova)" != 0 ] || fail "MR at address 0"
	[ "$(attr /tmp/res.mr drv_pages)" = 1 ] || fail "MR of $(attr /tmp/res.mr drv_pages) pages"
	[ $(($(attr /tmp/res.mr drv_access) & 1)) = 1 ] || fail "MR without local write"
	[ "$(attr /tmp/res.mr drv_valid)" = 1 ] || fail "MR not valid"
	[ "$(attr /tmp/res.mr drv_mw_binds)" = 0 ] || fail "MR with windows bound"
	# A region's address only to CAP_NET_ADMIN, as ib_core's keys: a
	# process without it sees the region's details less the address.
	RES_AS=("${NOBODY[@]}")
	res_entry mr >/tmp/res.mr.nobody || fail "nobody sees no MR of the server's"
	RES_AS=()
	sed 's/^/  mr (as nobody): /' /tmp/res.mr.nobody
	[ "$(attr /tmp/res.mr.nobody drv_length)" = 4096 ] || fail "nobody sees no MR length"
	! grep -qE '^(drv_iova|lkey|rkey) ' /tmp/res.mr.nobody ||
		fail "a process without CAP_NET_ADMIN sees the MR's address or keys"

	[ "$(attr /tmp/res.qp state)" = INIT ] || fail "QP state: $(attr /tmp/res.qp state)"
	[ "$(attr /tmp/res.qp drv_sq_wrs)" = 0 ] || fail "QP with send WRs outstanding"
	[ "$(attr /tmp/res.qp drv_recv_in_progress)" = 0 ] || fail "QP filling a receive"
	attr /tmp/res.qp drv_retry_left >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

t_main
