#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=57
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
#   - each fuzz datagram sroce2 received was dropped and counted in an
#     rx_drop_* counter (a CNP in rp_cnp_ignored) or taken by a UD QP (rx_ud_recv: the sink, whose
#     Q_Key the fuzzer knows, or the GSI QP with the GSI Q_Key): the sum of
#     those counters moved by exactly the fuzz datagrams received plus the
#     real UD datagrams (rping's CM MADs); see fuzz_accounting for the one
#     bounded exception;
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
# completer of those QPs: rx_drop_dup, rx_dup_resp, rx_drop_resp,
# rx_drop_gap, rx_drop_uc and rx_drop_seq belong to the real traffic alone.
FUZZ_DROPS="rx_drop_short rx_drop_header rx_drop_icrc rx_drop_opcode rx_drop_no_qp rx_drop_qp_type rx_drop_qp_state rx_drop_address rx_drop_pkey rx_drop_qkey rx_drop_no_recv rx_drop_mcast rp_cnp_ignored"

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
	[fuzz_uc6]=21 [fuzz_sink6]=22 [fuzz_all6]=23 [fuzz_none6]=24 [real6]=25
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
	acct_filter 15 ipv6 real6 match ip6 src fd00:6::1/128 $p6
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

# fuzz_accounting: the comparisons described at the top, from the
# snapshots b1/b2 (before), a1/a2 (after) and w (the wire, before).
fuzz_accounting() {
	local k c d2=0 delta sent rcvd real real_ud sink_got ud_got late=0
	local -A n
	acct_snap n
	for k in "${!ACCT_ACT[@]}"; do n[$k]=$((n[$k] - w[$k])); done
	for k in "${!ACCT_ACT[@]}"; do echo "wire $k ${n[$k]}"; done | sort
	for c in "${!a2[@]}"; do
		delta=$((a2[$c] - b2[$c]))
		[ "$delta" = 0 ] || echo "sroce2 $c +$delta"
	done | sort
	for c in retransmits timeouts; do
		echo "sroce1 $c +$((a1[$c] - b1[$c]))"
	done

	# Everything the fuzzer sent reached st-v2 (nothing is lost on a veth).
	sent=$(awk '/^sent/ { print $2 }' /tmp/fuzz.out)
	rcvd=$((n[fuzz_uc4] + n[fuzz_sink4] + n[fuzz_all4] + n[fuzz_none4] +
		n[fuzz_uc6] + n[fuzz_sink6] + n[fuzz_all6] + n[fuzz_none6]))
	[ "$sent" -ge "$SROCE_FUZZ_PACKETS" ] || fail "the fuzzer sent $sent datagrams, not $SROCE_FUZZ_PACKETS"
	[ "$rcvd" = "$sent" ] || fail "the fuzzer sent $sent datagrams, st-v2 saw $rcvd"

	# Everything for a joined address reached sroce2.
	rcvd=$((n[fuzz_uc4] + n[fuzz_sink4] + n[fuzz_all4] + n[fuzz_uc6] + n[fuzz_sink6] + n[fuzz_all6]))
	real=$((n[real4] + n[real_ud4] + n[real6]))
	delta=$((a2[rx_packets] - b2[rx_packets]))
	log "sroce2 received $delta datagrams: $rcvd from the fuzzer, $real from sroce1"
	[ "$delta" = $((rcvd + real)) ] ||
		fail "sroce2 rx_packets moved by $delta, but $rcvd fuzz + $real real datagrams reached it"

	# Each of them dropped and counted, or taken by a UD QP.
	for c in $FUZZ_DROPS; do
		d2=$((d2 + a2[$c] - b2[$c]))
	done
	ud_got=$((a2[rx_ud_recv] - b2[rx_ud_recv]))
	real_ud=${n[real_ud4]}
	sink_got=$(awk '/^received/ { print $2 }' /tmp/sink.out)
	log "fuzz drops counted $d2, UD datagrams taken $ud_got ($sink_got by the sink; $real_ud were rping's)"
	[ "$sink_got" -le "$ud_got" ] || fail "the sink got $sink_got datagrams, rx_ud_recv says $ud_got"
	# The one thing the real traffic can add to these counters: a
	# retransmitted request or a repeated response that arrives after its
	# QP is gone (rx_drop_no_qp) or in error (rx_drop_qp_state).  Without a
	# retransmission on either side there is none.
	delta=$((d2 + ud_got - rcvd - real_ud))
	if [ $((a1[retransmits] - b1[retransmits] + a2[retransmits] - b2[retransmits])) = 0 ]; then
		[ "$delta" = 0 ] ||
			fail "counted $((d2 + ud_got)) fuzz outcomes for $rcvd fuzz datagrams (+$real_ud real UD): off by $delta"
	else
		late=$((a2[rx_drop_no_qp] - b2[rx_drop_no_qp] + a2[rx_drop_qp_state] - b2[rx_drop_qp_state]))
		log "retransmissions happened: $delta late real packets allowed (at most $late)"
		[ "$delta" -ge 0 ] && [ "$delta" -le "$late" ] ||
			fail "counted $((d2 + ud_got)) fuzz outcomes for $rcvd fuzz datagrams (+$real_ud real UD): off by $delta"
	fi
	log "every fuzz datagram accounted for"
}

t_main
