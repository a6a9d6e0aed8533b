#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=57 cost=100
#
# Hostile packets: tests/progs/sroce_fuzz sends SROCE_FUZZ_PACKETS (default
# below) random and mutated RoCEv2 datagrams at sroce2 while verified RC
# traffic runs between sroce1 and sroce2 and a UD QP (sroce_ud_sink) takes
# what reaches it.  The fuzzer sends from 10.6.0.3 / fd00:6::3, addresses
# of the peer namespace no QP is connected to, so its packets are told
# apart from the real traffic's (10.6.0.1) on the wire.
#
#   namespace sroce-h1                        namespace sroce-h2
#   [ sroce1 ]  sroce_fuzz                    [ sroce2 ]  sroce_ud_sink
#       |          | from .3 / ::3                |
#   [ st-v1 ] 10.6.0.1, 10.6.0.3 ====== 10.6.0.2 [ st-v2 ]  tc counts
#             fd00:6::1, fd00:6::3    fd00:6::2             ingress
#
# Passing means:
#   - sroce_rc_test's data cases, ibv_rc_pingpong -c and rping -V complete,
#     the data cases with every byte and completion right;
#   - every datagram that reached st-v2 from the fuzzer or from sroce1 on
#     UDP 4791 (counted by tc on ingress, by source and destination) was
#     received by sroce2 (rx_packets), less the ones to multicast groups
#     no socket joined, which the IP layer drops;
#   - each of them ended in exactly one counter of sroce2: a fuzz datagram
#     in an rx_drop_* counter (a CNP in rp_cnp_ignored, or in
#     rp_cnp_handled when it names the UD sink, which takes CNPs from
#     anyone) or taken by a UD QP (rx_ud_recv: the sink, whose Q_Key the
#     fuzzer knows, or the GSI QP with the GSI Q_Key), never by an RC/UC
#     QP (rx_rc_uc_packets), whose address checks stop it; a real datagram taken by its QP (rping's CM
#     MADs by the GSI QP) or, if it came after its QP was gone, in the
#     same drop counters as the fuzz.  The sum is exact (fuzz_accounting);
#     the real RC datagrams no QP took are bounded by what the
#     retransmissions of both ends explain, and are none without one;
#   - no oops/WARN/BUG, nothing leaked (t_main checks both).
#
# SROCE_FUZZ_SEED replays a run (the fuzzer prints the seed it used);
# SROCE_FUZZ_RATE caps the fuzzer at that many datagrams a second (make
# check-debug: on a kernel slower than the fuzzer, the queue of fuzz
# datagrams ahead of the real traffic grew to minutes).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

: "${SROCE_FUZZ_PACKETS:=1000000}"
: "${SROCE_FUZZ_SEED:=}"
: "${SROCE_FUZZ_RATE:=}"
[ "$SROCE_TEST_TIMEOUT" -ge 1500 ] || SROCE_TEST_TIMEOUT=1500
RC_CASES_TIMEOUT=900
RDMA_TOOL_TIMEOUT=600

FUZZ_CASES=send,send_imm,send_sge,rdma_write,rdma_write_imm,rdma_read,atomic_cas,atomic_faa,wr_api,many_qps
FUZZ_IP=10.6.0.3 FUZZ_IP6=fd00:6::3
SINK_QKEY=0x11111111
SINK_GROUPS="239.1.2.3 ff0e::1:2:3"
# Joined by every host (all-hosts, all-nodes): delivered to sroce2 too.
ALL_GROUPS="224.0.0.1 ff02::1"
# Joined by nobody: the IP layer of sroce-h2 drops them.
NO_GROUPS="239.9.9.9 ff0e::9"

# The drop counters a fuzz datagram can land in.  The fuzzer's address
# is no RC/UC QP's peer, so its packets never reach the responder or the
# completer of those QPs (rx_rc_uc_packets): rx_drop_dup, rx_dup_resp,
# rx_drop_resp, rx_drop_gap, rx_drop_uc and rx_drop_seq belong to the real
# traffic alone.  A real RC packet that arrives after its QP is gone or
# failed lands in these too (rx_drop_no_qp, rx_drop_qp_state).
FUZZ_DROPS="rx_drop_short rx_drop_header rx_drop_icrc rx_drop_opcode rx_drop_no_qp rx_drop_qp_type rx_drop_qp_state rx_drop_address rx_drop_pkey rx_drop_qkey rx_drop_no_recv rx_drop_mcast rp_cnp_ignored rp_cnp_handled"

# A veth hands each datagram to the receive backlog of the CPU that sent
# it; when softirq work is pushed to ksoftirqd (a loaded emulated guest) the
# fuzzer can outrun it, and a full backlog (1000 by default) drops.  Deep
# enough, nothing is lost between the fuzzer and st-v2.
BACKLOG_SAVE=/tmp/fuzz-netdev-max-backlog
deep_backlog() {
	sysctl -n net.core.netdev_max_backlog >"$BACKLOG_SAVE"
	run sysctl -qw net.core.netdev_max_backlog=200000
}
t_group_reset() {
	[ -s "$BACKLOG_SAVE" ] || return 0
	sysctl -qw net.core.netdev_max_backlog="$(cat "$BACKLOG_SAVE")"
	rm -f "$BACKLOG_SAVE"
}

# --- counting on the wire ----------------------------------------------------

# tc gact actions on st-v2's ingress, one per kind of datagram; ACCT_ACT
# maps the kind to the action's index.
declare -A ACCT_ACT=(
	[fuzz_uc4]=11 [fuzz_sink4]=12 [fuzz_all4]=13 [fuzz_none4]=14 [real4]=15 [real_ud4]=16
	[fuzz_uc6]=21 [fuzz_sink6]=22 [fuzz_all6]=23 [fuzz_none6]=24 [real6]=25 [real_ud6]=26
)

# acct_filter PRIO PROTO KIND MATCH...
acct_filter() {
	local prio=$1 proto=$2 kind=$3
	shift 3
	run tc -n "$H2" filter add dev st-v2 ingress prio "$prio" protocol "$proto" u32 "$@" \
		action gact pass index "${ACCT_ACT[$kind]}"
}

acct_setup() {
	run tc -n "$H2" qdisc add dev st-v2 clsact
	local p4="match ip dport 4791 0xffff" p6="match ip6 dport 4791 0xffff"
	# shellcheck disable=SC2086
	{
	acct_filter 1 ip fuzz_uc4 match ip src $FUZZ_IP/32 match ip dst 10.6.0.2/32 $p4
	acct_filter 2 ip fuzz_sink4 match ip src $FUZZ_IP/32 match ip dst 239.1.2.3/32 $p4
	acct_filter 3 ip fuzz_all4 match ip src $FUZZ_IP/32 match ip dst 224.0.0.1/32 $p4
	acct_filter 4 ip fuzz_none4 match ip src $FUZZ_IP/32 match ip dst 224.0.0.0/4 $p4
	# UD SEND Only (with immediate): 0x64/0x65 in the BTH at IP 20 + UDP 8.
	acct_filter 5 ip real_ud4 match ip src 10.6.0.1/32 $p4 match u8 0x64 0xfe at 28
	acct_filter 6 ip real4 match ip src 10.6.0.1/32 $p4
	acct_filter 11 ipv6 fuzz_uc6 match ip6 src $FUZZ_IP6/128 match ip6 dst fd00:6::2/128 $p6
	acct_filter 12 ipv6 fuzz_sink6 match ip6 src $FUZZ_IP6/128 match ip6 dst ff0e::1:2:3/128 $p6
	acct_filter 13 ipv6 fuzz_all6 match ip6 src $FUZZ_IP6/128 match ip6 dst ff02::1/128 $p6
	acct_filter 14 ipv6 fuzz_none6 match ip6 src $FUZZ_IP6/128 match ip6 dst ff00::/8 $p6
	acct_filter 15 ipv6 real_ud6 match ip6 src fd00:6::1/128 $p6 match u8 0x64 0xfe at 48
	acct_filter 16 ipv6 real6 match ip6 src fd00:6::1/128 $p6
	}
}

# acct_snap ARRAY: the datagrams of every kind seen so far, into the
# associative array ARRAY (one tc call: processes are dear under emulation).
acct_snap() {
	local -n _w=$1
	local k idx pkts
	declare -A by_index
	while read -r idx pkts; do
		by_index[$idx]=$pkts
	done <<<"$(tc -n "$H2" -s actions list action gact |
		awk '/ index / { for (i = 1; i < NF; i++) if ($i == "index") idx = $(i + 1) }
		     /Sent/ { for (i = 1; i < NF; i++) if ($(i + 1) == "pkt") print idx, $i }')"
	for k in "${!ACCT_ACT[@]}"; do
		[ -n "${by_index[${ACCT_ACT[$k]}]:-}" ] || fail "no tc count for $k"
		_w[$k]=${by_index[${ACCT_ACT[$k]}]}
	done
}

# hw DEV NAME: a counter of DEV, straight from sysfs.
hw() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

# snap ARRAY DEV: every counter of DEV into the associative array ARRAY.
snap() {
	local -n _a=$1
	local name val
	while IFS=: read -r name val; do
		_a[${name##*/}]=$val
	done <<<"$(grep -H . /sys/class/infiniband/"$2"/ports/1/hw_counters/*)"
}

# --- the fuzzer and the live QPs ---------------------------------------------

QPN_FILE=/tmp/fuzz-qpns

# qpn_feeder SINKQPN: keep QPN_FILE holding sroce2's QPNs (the real
# traffic's come and go) until killed.
qpn_feeder() {
	local list
	while :; do
		list=$(rdma res show qp link sroce2/1 2>/dev/null | grep -oE 'lqpn [0-9]+' | awk '{ print $2 }' | tr '\n' ' ')
		echo "1 $1 $list" >"$QPN_FILE.new" && mv "$QPN_FILE.new" "$QPN_FILE"
		sleep 2
	done
}

# settle DEV: until DEV's rx_packets stands still for 2 s (at most 60 s).
settle() {
	local last=-1 now i
	for i in $(seq 60); do
		now=$(hw "$1" rx_packets)
		[ "$now" = "$last" ] && return 0
		last=$now
		sleep 2
	done
	fail "$1 still receiving after 2 minutes"
}

# real_traffic: verified RC traffic between sroce1 and sroce2, the same as
# the faults group's.
real_traffic() {
	rc_cases -t "$FUZZ_CASES" -m 1024
	pingpong rc_pingpong ibv_rc_pingpong
	rping_pair 100
}

# --- the test ---------------------------------------------------------------

test_fuzz() {
	local sink_pid fuzz_pid feeder_pid qpn rc=0 rounds=0 k fuzz_opts=()
	local -A b1 b2 a1 a2 w
	rdma_topo two_hosts
	run ip -n "$H1" addr add "$FUZZ_IP/24" dev st-v1
	run ip -n "$H1" addr add "$FUZZ_IP6/64" dev st-v1 nodad
	acct_setup
	deep_backlog

	# shellcheck disable=SC2086
	ip netns exec "$H2" "$SROCE_PROGS/sroce_ud_sink" sroce2 "$SINK_QKEY" $SINK_GROUPS >/tmp/sink.out 2>/tmp/sink.err &
	sink_pid=$!
	RDMA_BG_PIDS+=("$sink_pid")
	wait_for 60 grep -q ready /tmp/sink.out
	qpn=$(awk '/^qpn/ { print $2 }' /tmp/sink.out)
	log "UD sink: QPN $qpn, Q_Key $SINK_QKEY, groups $SINK_GROUPS"
	qpn_feeder "$qpn" &
	feeder_pid=$!
	RDMA_BG_PIDS+=("$feeder_pid")
	# The first listing takes seconds on a slow (debug) kernel.
	wait_for 60 test -s "$QPN_FILE"

	snap b1 sroce1
	snap b2 sroce2
	acct_snap w

	[ -n "$SROCE_FUZZ_SEED" ] && fuzz_opts=(-s "$SROCE_FUZZ_SEED")
	[ -n "$SROCE_FUZZ_RATE" ] && fuzz_opts+=(-p "$SROCE_FUZZ_RATE")
	local groups=() g
	for g in $SINK_GROUPS $ALL_GROUPS $NO_GROUPS; do groups+=(-m "$g"); done
	printf '+ [fuzzer] sroce_fuzz -n %s %s\n' "$SROCE_FUZZ_PACKETS" "${fuzz_opts[*]}" >&2
	ip netns exec "$H1" "$SROCE_PROGS/sroce_fuzz" -t 10.6.0.2 -a "$FUZZ_IP" -T fd00:6::2 -A "$FUZZ_IP6" \
		"${groups[@]}" -i st-v1 -n "$SROCE_FUZZ_PACKETS" "${fuzz_opts[@]}" \
		-Q "$QPN_FILE" -q "$qpn" -k "$SINK_QKEY" -M 1024 -u 1500 \
		>/tmp/fuzz.out 2>/tmp/fuzz.err &
	fuzz_pid=$!
	RDMA_BG_PIDS+=("$fuzz_pid")

	# Real traffic for as long as the fuzzer runs, at least once.
	while [ $rounds = 0 ] || kill -0 "$fuzz_pid" 2>/dev/null; do
		rounds=$((rounds + 1))
		log "real traffic, round $rounds"
		real_traffic
	done
	wait "$fuzz_pid" || rc=$?
	sed 's/^/  fuzz| /' /tmp/fuzz.out /tmp/fuzz.err
	[ $rc = 0 ] || fail "sroce_fuzz exited with status $rc"
	kill "$feeder_pid" 2>/dev/null || true

	settle sroce2
	kill -TERM "$sink_pid"
	wait "$sink_pid" || fail "sroce_ud_sink failed: $(cat /tmp/sink.err)"
	cat /tmp/sink.out
	snap a1 sroce1
	snap a2 sroce2
	fuzz_accounting
}

# SROCE_MAX_INFLIGHT (drivers/sroce/sroce.h): the PSNs a requester has
# unacknowledged at most, so the packets one go-back sends again, and the
# responses it can bring back a second time.
max_inflight() {
	local v
	v=$(awk '$1 == "SROCE_MAX_INFLIGHT" && $2 == "=" { sub(/,.*/, "", $3); print $3 }' \
		"$SROCE_ROOT/drivers/sroce/sroce.h")
	[[ "$v" =~ ^[0-9]+$ ]] || fail "no SROCE_MAX_INFLIGHT in drivers/sroce/sroce.h"
	echo "$v"
}

# fuzz_accounting: the comparisons described at the top, from the
# snapshots b1/b2 (before), a1/a2 (after) and w (the wire, before).
#
# Every datagram sroce2 received ends in exactly one counter (counters.h),
# so over the run
#   sum(FUZZ_DROPS) + rx_ud_recv = fuzz + real_ud + lost
# where fuzz and real_ud (rping's CM MADs) are counted on the wire, and
# lost = real_rc - rx_rc_uc_packets are the real RC datagrams that reached
# sroce2 and no QP's responder or completer.  No slack: a fuzz datagram
# dropped without a count, counted twice, or a real one dropped without a
# count, is off by one.  What remains is why real datagrams were lost.  A
# real RC packet finds its QP gone or failed only if it was not needed: a
# copy sent again (the other copy did the work), an answer to such a copy,
# or a NAK.  sroce1 sends a request again only in a go-back (retransmits),
# at most max_inflight packets each; sroce1 answers a request of sroce2
# again only after a go-back of sroce2, at most max_inflight responses
# each; and NAKs are counted where sent.  So
#   0 <= lost <= max_inflight * (retransmits of sroce1 + of sroce2)
#                + seq_naks_sent + rnr_naks_sent of sroce1,
# none without a retransmission.  (A real packet the driver dropped in one
# of FUZZ_DROPS and sroce1 sent again looks, in counts, the same as a late
# copy: the bound limits how many there can be.)
fuzz_accounting() {
	local k c d2=0 delta sent rcvd real real_ud real_rc sink_got ud_got taken lost bound
	local -A n r1 r2
	acct_snap n
	for k in "${!ACCT_ACT[@]}"; do n[$k]=$((n[$k] - w[$k])); done
	for k in "${!ACCT_ACT[@]}"; do echo "wire $k ${n[$k]}"; done | sort
	for c in "${!a2[@]}"; do
		delta=$((a2[$c] - b2[$c]))
		[ "$delta" = 0 ] || echo "sroce2 $c +$delta"
	done | sort
	for c in "${!a1[@]}"; do r1[$c]=$((a1[$c] - b1[$c])); done
	for c in "${!a2[@]}"; do r2[$c]=$((a2[$c] - b2[$c])); done
	for c in retransmits timeouts seq_naks_sent rnr_naks_sent; do
		echo "sroce1 $c +${r1[$c]}"
	done

	# Everything the fuzzer sent reached st-v2 (nothing is lost on a veth).
	sent=$(awk '/^sent/ { print $2 }' /tmp/fuzz.out)
	rcvd=$((n[fuzz_uc4] + n[fuzz_sink4] + n[fuzz_all4] + n[fuzz_none4] +
		n[fuzz_uc6] + n[fuzz_sink6] + n[fuzz_all6] + n[fuzz_none6]))
	[ "$sent" -ge "$SROCE_FUZZ_PACKETS" ] || fail "the fuzzer sent $sent datagrams, not $SROCE_FUZZ_PACKETS"
	[ "$rcvd" = "$sent" ] || fail "the fuzzer sent $sent datagrams, st-v2 saw $rcvd"

	# Everything for a joined address reached sroce2.
	rcvd=$((n[fuzz_uc4] + n[fuzz_sink4] + n[fuzz_all4] + n[fuzz_uc6] + n[fuzz_sink6] + n[fuzz_all6]))
	real_ud=$((n[real_ud4] + n[real_ud6]))
	real_rc=$((n[real4] + n[real6]))
	real=$((real_ud + real_rc))
	log "sroce2 received ${r2[rx_packets]} datagrams: $rcvd from the fuzzer, $real from sroce1"
	[ "${r2[rx_packets]}" = $((rcvd + real)) ] ||
		fail "sroce2 rx_packets moved by ${r2[rx_packets]}, but $rcvd fuzz + $real real datagrams reached it"

	# Only sroce1's RC datagrams reach RC/UC QPs; those that did not are
	# in the drop counters beside the fuzz.
	[ -n "${r2[rx_rc_uc_packets]:-}" ] || fail "sroce2 has no rx_rc_uc_packets counter"
	taken=${r2[rx_rc_uc_packets]}
	lost=$((real_rc - taken))
	log "real RC datagrams: $real_rc reached sroce2, $taken taken by RC QPs, $lost not"
	[ "$lost" -ge 0 ] ||
		fail "RC/UC QPs took $taken datagrams, but only $real_rc came from sroce1: fuzz got past the address check?"

	# Each fuzz datagram dropped and counted, or taken by a UD QP; each real
	# one not taken by its QP counted beside them.
	for c in $FUZZ_DROPS; do
		d2=$((d2 + r2[$c]))
	done
	ud_got=${r2[rx_ud_recv]}
	sink_got=$(awk '/^received/ { print $2 }' /tmp/sink.out)
	log "fuzz drops counted $d2, UD datagrams taken $ud_got ($sink_got by the sink; $real_ud were rping's)"
	[ "$sink_got" -le "$ud_got" ] || fail "the sink got $sink_got datagrams, rx_ud_recv says $ud_got"
	delta=$((d2 + ud_got - rcvd - real_ud - lost))
	[ "$delta" = 0 ] ||
		fail "counted $((d2 + ud_got)) outcomes for $rcvd fuzz datagrams, $real_ud real UD and $lost lost real RC ones: off by $delta"

	# The lost real ones: late copies that retransmissions explain.
	bound=$(($(max_inflight) * (r1[retransmits] + r2[retransmits]) + r1[seq_naks_sent] + r1[rnr_naks_sent]))
	log "retransmissions: sroce1 ${r1[retransmits]}, sroce2 ${r2[retransmits]} go-backs; NAKs from sroce1 ${r1[seq_naks_sent]} + ${r1[rnr_naks_sent]}: up to $bound late real datagrams explained"
	[ "$lost" -le "$bound" ] ||
		fail "$lost real RC datagrams reached no QP, but the retransmissions explain at most $bound"
	log "every fuzz datagram accounted for"
}

t_main
