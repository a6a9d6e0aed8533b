#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=56 cost=170 nvdimm=64
#
# A scripted peer: tests/progs/sroce_peer makes a victim RC (or UC) QP on
# sroce2 and plays the other end of its connection itself, packet by
# packet, from a plain UDP socket on port 4791 in the other namespace (no
# sroce device there, so the port is free).  Each scenario sends exactly
# the sequence it wants (duplicates, gaps, bad keys, opcodes out of
# sequence, a READ overtaking a replay, ...) and checks exactly what sroce
# answers.  The req_* scenarios make the victim the requester: the peer
# checks every request it sends (a resend byte for byte the first one, and
# timed) and answers with crafted ACKs, NAKs, silence, READ and atomic
# responses.  The uc_* scenarios make the victim a UC QP, which must answer
# nothing and lose only the messages whose packets went missing.  Each
# scenario checks the victim's completions, QP state and
# async events, and sroce2's counters (the list is in
# tests/progs/peer/peer.h, the rules in victim.c).  req_ack_timeout raises
# the module parameter min_ack_timeout for a while and restores it.
#
#   namespace sroce-h1                    namespace sroce-h2
#   sroce_peer's socket                   [ sroce2 ]  victim QPs
#     UDP 4791                                 |
#   [ st-v1 ] 10.6.0.1 ============== 10.6.0.2 [ st-v2 ]
#             fd00:6::1              fd00:6::2
#
# Passing means every scenario printed "pass", one line each, over IPv4
# and over IPv6; no oops/WARN, nothing leaked (t_main checks both).  The
# guest has an emulated NVDIMM (nvdimm=64), the persistent memory of the
# flush_pmem scenario.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

PEER_TIMEOUT=600

# The persistent memory the flush_pmem scenario flushes: the guest's
# emulated NVDIMM (nvdimm= above: scripts/vm/run-guest.sh -n), label-less,
# made a device-DAX namespace (a mapping sroce can pin; fsdax pages cannot
# be pinned for long).
PEER_DAX=/dev/dax0.0
ns_listed() { ndctl list -N 2>/dev/null | grep -q '"namespace0.0"'; }
peer_pmem() {
	[ -e "$PEER_DAX" ] && return 0
	run modprobe -a nfit nd_pmem dax_pmem device_dax
	wait_for 10 ns_listed
	run ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M
	wait_for 10 test -e "$PEER_DAX"
}

# topo_peer: topo_two_hosts with sroce on st-v2 only.
topo_peer() {
	two_hosts_wire
	pin_neighbours st-v1 "$H1"
	pin_neighbours st-v2 "$H2"
	peer_pmem
	sroce_load
	run n2 rdma link add sroce2 type sroce netdev st-v2
	wait_for 10 gid_present sroce2 ::ffff:10.6.0.2
	wait_for 10 gid_present sroce2 fd00:6::2
}

# peer_scenarios VICTIM_IP PEER_IP: every scenario of sroce_peer (or those
# named in SROCE_PEER_SCENARIOS, comma-separated, to chase one), each must
# pass, all of them reported.
peer_scenarios() {
	local prog=$SROCE_PROGS/sroce_peer gid want n rc=0 only=()
	[ -x "$prog" ] || fail "$prog not built (make -C tests/progs)"
	gid=$(gid_index sroce2 "$1") || fail "sroce2 has no RoCE v2 GID for $1"
	want=$("$prog" -l | wc -l)
	if [ -n "${SROCE_PEER_SCENARIOS:-}" ]; then
		only=(-s "$SROCE_PEER_SCENARIOS")
		want=$(tr ',' '\n' <<<"$SROCE_PEER_SCENARIOS" | grep -c .)
	fi
	# From the initial namespace, where sroce2's sysfs counters are
	# (ip netns exec mounts a /sys without them); the peer's socket alone
	# goes into $H1.
	printf '+ %s\n' "$prog -d sroce2 -g $gid -t $1 -a $2 -N /run/netns/$H1 -P $PEER_DAX ${only[*]}" >&2
	timeout -k 5 "$PEER_TIMEOUT" "$prog" -d sroce2 -g "$gid" -t "$1" -a "$2" \
		-N "/run/netns/$H1" -P "$PEER_DAX" "${only[@]}" >/tmp/peer.out 2>/tmp/peer.err || rc=$?
	cat /tmp/peer.out
	sed 's/^/  stderr| /' /tmp/peer.err
	[ $rc != 124 ] || fail "sroce_peer timed out after ${PEER_TIMEOUT}s"
	if grep -q ': FAIL' /tmp/peer.out; then
		# The reasons too: the summary line is all CI shows.
		fail "sroce_peer: $(grep -c ': FAIL' /tmp/peer.out) failed: $(grep ': FAIL' /tmp/peer.out | head -3 | tr '\n' ' ')"
	fi
	[ $rc = 0 ] || fail "sroce_peer exited with status $rc"
	n=$(grep -cE '^[a-z0-9_]+: pass$' /tmp/peer.out || true)
	[ "$n" = "$want" ] || fail "sroce_peer: $n scenarios passed, expected $want"
}

test_ipv4() {
	topo_peer
	peer_scenarios 10.6.0.2 10.6.0.1
}

test_ipv6() {
	topo_peer
	peer_scenarios fd00:6::2 fd00:6::1
}

t_main
