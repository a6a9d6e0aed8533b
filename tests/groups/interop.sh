#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=38 cost=495
#
# Wire interoperability with Linux's rdma_rxe: rxe0 in the initial
# namespace and sroce0 in namespace sroce-peer, joined by a veth pair
# (rdma_interop in tests/lib-rdma.sh draws it).  Every tool runs in both
# directions: each test_*_rxe_server has rxe as the server (end 1) and sroce
# as the client, each test_*_sroce_server the reverse, so sroce is requester
# and responder, active and passive side of rdma_cm, in turn.
#
# Each tool's case checks what the tool itself can check: the counts of
# iterations, pings or messages on both ends, rping -V its pings' data; the
# pingpongs' -c looks at one byte per page only.  Every byte is checked by
# sroce_rc_test's cases (test_rc_data_*): SEND, WRITE, READ and atomics,
# each device the requester in turn, over IPv4 and IPv6.
#
# NVMe-oF across rxe and sroce cannot run in one guest on 6.1 (nvmet-rdma,
# nvme-rdma and rxe all need the initial namespace, where rxe and sroce
# cannot both hold UDP 4791): group twohost runs it across two guests.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

# Each tool under emulation takes seconds to tens of seconds.
[ "$SROCE_TEST_TIMEOUT" -ge 1500 ] || SROCE_TEST_TIMEOUT=1500

# --- the libibverbs pingpongs ---------------------------------------------------

# pingpong (tests/lib-rdma.sh): 100 exchanges with -c (the server checks
# one byte per page of the last message); -s below overrides its 16 KiB.
# RC with one packet and with many per message (16 KiB at path MTU 1024),
# through a completion channel, through the ibv_wr_* API; UC; SRQ; UD.
pingpongs() {
	pingpong rc_pingpong ibv_rc_pingpong -s 16384
	pingpong rc_pingpong_small ibv_rc_pingpong -s 1000
	pingpong rc_pingpong_events ibv_rc_pingpong -s 16384 -e
	pingpong rc_pingpong_wr_api ibv_rc_pingpong -s 16384 -N
	pingpong srq_pingpong ibv_srq_pingpong -s 4096 -q 4
	pingpong uc_pingpong ibv_uc_pingpong -s 16384
	# UD: one packet per message; 1024 is the path MTU on a 1500-byte link.
	pingpong ud_pingpong ibv_ud_pingpong -s 1024
}

test_pingpong_rxe_server() {
	rdma_topo interop_rxe_server
	pingpongs
}

test_pingpong_sroce_server() {
	rdma_topo interop_sroce_server
	pingpongs
}

# --- perftest ---------------------------------------------------------------------
#
# Short runs; only that both ends complete is checked, never the numbers.

# perf NAME TOOL ARGS...: the client must print its result line.  Values
# may be "inf": under emulation perftest's clock calibration can fail
# ("Correlation coefficient r^2 < 0.9") and then it prints inf latencies.
#
# Every QP gets a local ACK timeout of 1.07 s (-u 18) instead of perftest's
# 67 ms.  When ACKs come later than the timeout (the debug kernel's guest;
# netem's delay reproduces it on the stock one), rdma_rxe's requester goes
# back while the ACKs of the first transmission arrive, and can then resend
# messages one PSN off, a Last at a PSN it never sent: sroce rightly NAKs
# that with Invalid Request and rxe's QP fails (Documentation/interop.rst,
# "rxe resends a message one PSN off").  How sroce takes late ACKs is
# faults/late_acks's business; here the wire between the two devices is.
perf() {
	local name=$1 tool=$2
	shift 2
	tool_pair "$name" 18515 -x "$tool" -F -u 18 "$@"
	grep -Eq '^ *[0-9]+ +[0-9]+ +([0-9.]+|inf)' "$CLI_LOG" || fail "$name: the client printed no result line"
}

# perftest gives each QP max_rd_atomic = the other end's out_reads (its
# device's max_qp_rd_atom unless -o says otherwise) without clamping it to
# the local device's own limit.  "-o $PERF_OUTS" runs the READ and atomic
# tests here at a depth below both devices' (128 each); test_rd_depth_*
# below runs them at perftest's default, the other device's whole depth.
PERF_OUTS=16

perftests() {
	local t
	for t in ib_send_bw ib_write_bw; do
		perf "$t" "$t" -n 100 -s 4096
	done
	perf ib_read_bw ib_read_bw -n 100 -s 4096 -o "$PERF_OUTS"
	perf ib_atomic_bw ib_atomic_bw -n 100 -o "$PERF_OUTS"
	perf "ib_write_bw -q 4" ib_write_bw -n 100 -s 4096 -q 4
	perf "ib_send_bw -c UC" ib_send_bw -n 100 -s 4096 -c UC
	perf "ib_send_bw -c UD" ib_send_bw -n 100 -s 1024 -c UD
	for t in ib_send_lat ib_write_lat; do
		perf "$t" "$t" -n 100
	done
	for t in ib_read_lat ib_atomic_lat; do
		perf "$t" "$t" -n 100 -o "$PERF_OUTS"
	done
}

test_perftest_rxe_server() {
	rdma_topo interop_rxe_server
	perftests
}

test_perftest_sroce_server() {
	rdma_topo interop_sroce_server
	perftests
}

# --- READ and atomic depth: perftest's defaults ---------------------------------------
#
# Without -o, each end's requester asks for the other device's whole
# max_qp_rd_atom: rxe's 128 from sroce's QP, sroce's from rxe's, and each
# responder answers that many READs or atomics at once.  With sroce at 16,
# rxe as the server made the sroce client fail "Failed to modify QP to
# RTS" (issue 20); sroce now offers and honours rxe's 128.
rd_depth_perftests() {
	perf "ib_read_bw (default depth)" ib_read_bw -n 200 -s 4096
	perf "ib_atomic_bw (default depth)" ib_atomic_bw -n 200
}

test_rd_depth_rxe_server() {
	rdma_topo interop_rxe_server
	rd_depth_perftests
}

test_rd_depth_sroce_server() {
	rdma_topo interop_sroce_server
	rd_depth_perftests
}

# --- rdma_cm: rping, ucmatose, udaddy ------------------------------------------------

# ucmatose: RC connections through rdma_cm, 10 messages each way on each.
ucmatose_pair() {
	srv_start ucmatose ucmatose -b "$RDMA_IP1" -c 2 -C 10
	srv_wait_cm 7471
	cli_run ucmatose ucmatose -s "$RDMA_IP1" -b "$RDMA_IP2" -c 2 -C 10
	srv_finish
	grep -q '^test complete' "$CLI_LOG" || fail "ucmatose: the client did not complete"
	grep -q '^test complete' "$SRV_LOG" || fail "ucmatose: the server did not complete"
	grep -q 'receiving data transfers' "$CLI_LOG" || fail "ucmatose: the client received nothing"
}

# udaddy: UD through rdma_cm's address and route resolution and SIDR.
udaddy_pair() {
	srv_start udaddy udaddy -b "$RDMA_IP1" -c 2 -C 10
	srv_wait_cm 7174
	cli_run udaddy udaddy -s "$RDMA_IP1" -b "$RDMA_IP2" -c 2 -C 10
	srv_finish
	grep -q '^test complete' "$CLI_LOG" || fail "udaddy: the client did not complete"
	grep -q '^test complete' "$SRV_LOG" || fail "udaddy: the server did not complete"
}

rdma_cm_tools() {
	rping_pair 200 "$RDMA_IP1"
	ucmatose_pair
	udaddy_pair
}

test_rdma_cm_rxe_server() {
	rdma_topo interop_rxe_server
	rdma_cm_tools
}

test_rdma_cm_sroce_server() {
	rdma_topo interop_sroce_server
	rdma_cm_tools
}

# rdma_cm over IPv6, on devices whose GSI QP has sent nothing before.
test_rping_ipv6_rxe_server() {
	rdma_topo interop_rxe_server
	rping_pair 200 "$RDMA_IP6_1"
}

test_rping_ipv6_sroce_server() {
	rdma_topo interop_sroce_server
	rping_pair 200 "$RDMA_IP6_1"
}

# IPv4 and then IPv6 through one GSI QP.  A sroce bug once failed it: the
# route cache of a QP was used for UD and GSI QPs too, so once QP1 had sent
# to an IPv4 peer, its IPv6 MADs left with that IPv4 route and never
# arrived (RDMA_CM_EVENT_UNREACHABLE, -110).  Fixed by "sroce.ko: UD QPs
# look every route up" (Documentation/interop.rst).
test_rping_ipv4_then_ipv6() {
	rdma_topo interop_sroce_server
	rping_pair 200 "$RDMA_IP1"
	rping_pair 200 "$RDMA_IP6_1"
}

# --- every byte: sroce_rc_test's data cases ---------------------------------------
#
# The tools above check little of the data they move: ibv_*_pingpong -c
# looks at the first byte of each page of the last message only
# (Documentation/interop.rst), perftest at none, rping -V at one 64-byte
# string a ping.  sroce_rc_test (tests/progs/rc/) checks every
# byte: each message is a pattern seeded by its number (a xorshift stream:
# each byte depends on its offset and its message, so a packet placed
# wrong, lost, or left from an earlier message shows), the receiving or
# reading buffer is filled with 0xa5 first and compared byte for byte after
# the completion, the bytes around it must still be 0xa5, and every
# completion is checked.  One process opens both devices and connects QP
# pairs between them; side A, end 1 of the topology, is the requester:
# rxe0 in the *_rxe_requester tests (sroce receives the SENDs and WRITEs
# and answers the READs and atomics), sroce0 in the *_sroce_requester ones.
# At path MTU 1024 (and "send" also at 256 and 512): SENDs of 0 B to 1 MiB
# (1024 packets), 4095 and 65537 bytes ending mid-packet; with immediate
# data; gathered from 16 SGEs and scattered into 16; WRITEs and READs of
# 1 B to 1 MiB at offsets 0 and 3, with immediate; READs into SGEs, eight
# outstanding, a stream of 16 of 128 KiB on two responder resources; both
# atomics.  Every QP gets a 1.07 s local ACK timeout (-a 18), as the
# perftests above do and for the same reason (rxe's requester after late
# ACKs).
INTEROP_DATA_CASES=send,send_imm,send_sge,rdma_write,rdma_write_imm,rdma_read,rdma_read_sge,read_stream,atomic_cas,atomic_faa

# wire_bytes: bytes sent and received by st-i0, rxe's end of the veth.
wire_bytes() {
	local tx rx
	read -r tx </sys/class/net/st-i0/statistics/tx_bytes
	read -r rx </sys/class/net/st-i0/statistics/rx_bytes
	echo "$tx $rx"
}

# rc_data: the data cases must all pass (rc_cases lets a skip by), and
# their data must have crossed the veth: over 3 MB each way (4.6 MB of
# SENDs and WRITEs one way, 3.3 MB of READ responses the other).
rc_data() {
	local tx0 rx0 tx rx
	read -r tx0 rx0 <<<"$(wire_bytes)"
	rc_cases -t "$INTEROP_DATA_CASES" -m 1024 -a 18
	! grep -q ': skip' /tmp/rc_cases || fail "sroce_rc_test skipped: $(grep -m 1 ': skip' /tmp/rc_cases)"
	read -r tx rx <<<"$(wire_bytes)"
	echo "st-i0: $((tx - tx0)) bytes sent, $((rx - rx0)) received"
	if [ $((tx - tx0)) -le 3000000 ] || [ $((rx - rx0)) -le 3000000 ]; then
		fail "the data did not cross the veth: st-i0 sent $((tx - tx0)) bytes, received $((rx - rx0))"
	fi
}

test_rc_data_rxe_requester() {
	rdma_topo interop_rxe_server
	rc_data
}

test_rc_data_sroce_requester() {
	rdma_topo interop_sroce_server
	rc_data
}

test_rc_data_ipv6_rxe_requester() {
	rdma_topo interop_rxe_server
	rdma_ipv6
	rc_data
}

test_rc_data_ipv6_sroce_requester() {
	rdma_topo interop_sroce_server
	rdma_ipv6
	rc_data
}

# --- wire audit ------------------------------------------------------------------------
#
# A capture of the veth (dumpcap, inside sroce's namespace) while sroce and
# rxe exchange every operation both support, each device in both roles:
# (Only rdma_cm over IPv6 runs here, not over IPv4: see
# test_rping_ipv4_then_ipv6.)
#   - tests/wire/roce_check.py recomputes every packet's ICRC (rxe's and
#     sroce's) on its own, and checks the header fields of sroce's packets;
#     it must also catch a bit flipped in a copy of the capture;
#   - tshark's InfiniBand dissector (RoCEv2 on UDP 4791) must decode every
#     packet without a malformed mark, warning or error, and read the same
#     opcodes from sroce as roce_check.py (roce_check.py --tshark; the one
#     note tolerated is the zero UDP checksum over IPv6, which RoCEv2 and
#     rxe send too: Documentation/testing.rst).

# interop_swap: exchange ends 1 and 2 of the interop topology.
interop_swap() {
	local d=$RDMA_DEV1 g=$RDMA_GID1 i=$RDMA_IP1 i6=$RDMA_IP6_1 ns=("${RDMA_NS1[@]}")
	RDMA_DEV1=$RDMA_DEV2 RDMA_GID1=$RDMA_GID2 RDMA_IP1=$RDMA_IP2 RDMA_IP6_1=$RDMA_IP6_2
	RDMA_NS1=("${RDMA_NS2[@]}")
	RDMA_DEV2=$d RDMA_GID2=$g RDMA_IP2=$i RDMA_IP6_2=$i6
	RDMA_NS2=("${ns[@]}")
}

# The audit's traffic from one side's point of view: both ends send in the
# pingpongs; the client (end 2) issues WRITE, READ and atomics, the server
# answers.  Odd sizes exercise PadCnt.
audit_traffic() {
	local PP_ITERS=10
	pingpong rc_pingpong ibv_rc_pingpong -s 4000
	pingpong rc_pingpong_small ibv_rc_pingpong -s 1001
	pingpong uc_pingpong ibv_uc_pingpong -s 4000
	pingpong ud_pingpong ibv_ud_pingpong -s 1000
	perf ib_write_bw ib_write_bw -n 20 -s 4093
	perf ib_write_lat ib_write_lat -n 20 -s 3
	perf ib_read_bw ib_read_bw -n 20 -s 4095 -o "$PERF_OUTS"
	perf ib_read_lat ib_read_lat -n 20 -s 5 -o "$PERF_OUTS"
	perf ib_atomic_bw ib_atomic_bw -n 20 -o "$PERF_OUTS"
	perf "ib_atomic_bw CMP_AND_SWAP" ib_atomic_bw -n 20 -A CMP_AND_SWAP -o "$PERF_OUTS"
}

# Opcodes sroce (10.7.0.2, fd00:7::2) must have sent during the audit: RC
# SEND First/Middle/Last/Only, WRITE First/Middle/Last/Only, READ Request,
# READ Response First/Middle/Last/Only, ACK, Atomic ACK, CmpSwap, FetchAdd;
# UC SEND First/Middle/Last; UD SEND Only.
AUDIT_OPS=0x00,0x01,0x02,0x04,0x06,0x07,0x08,0x0a,0x0c,0x0d,0x0e,0x0f,0x10,0x11,0x12,0x13,0x14,0x20,0x21,0x22,0x64

# Flip one bit in the last byte before the ICRC of the first RoCEv2 packet
# (UDP to 4791 over IPv4 or IPv6, untagged Ethernet) of a copy of the
# capture; print that packet's number.
CORRUPT_PCAP='
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, n = 24, 0
while off + 16 <= len(d):
    incl = struct.unpack("<I", d[off + 8:off + 12])[0]
    pkt, n = off + 16, n + 1
    et = d[pkt + 12:pkt + 14]
    l3 = pkt + 14
    if et == b"\x08\x00" and d[l3 + 9] == 17:
        udp = l3 + (d[l3] & 15) * 4
    elif et == b"\x86\xdd" and d[l3 + 6] == 17:
        udp = l3 + 40
    else:
        udp = None
    if udp and struct.unpack(">H", d[udp + 2:udp + 4])[0] == 4791:
        d[pkt + incl - 5] ^= 0x10
        open(sys.argv[2], "wb").write(d)
        print(n)
        sys.exit(0)
    off = pkt + incl
sys.exit("no RoCEv2 packet")
'

test_wire_audit() {
	local chk=$SROCE_ROOT/tests/wire/roce_check.py n
	run /usr/bin/python3 "$chk" --selftest
	rdma_topo interop_sroce_server
	capture_start "$INTEROP_NS" st-i1
	audit_traffic
	rping_pair 200 "$RDMA_IP6_1"
	interop_swap
	audit_traffic
	capture_stop

	# roce_check.py and, through it (--tshark), tshark's dissector.
	cp "$WIRE_CAP" "$SROCE_RESULTS/interop-wire-audit.pcap"
	run /usr/bin/python3 "$chk" --tshark --src 10.7.0.2 --src fd00:7::2 --pmtu 1024 \
		--require "$AUDIT_OPS" "$WIRE_CAP"

	# The checker must notice one flipped bit.
	n=$(/usr/bin/python3 -c "$CORRUPT_PCAP" "$WIRE_CAP" /tmp/corrupt.pcap)
	if /usr/bin/python3 "$chk" /tmp/corrupt.pcap >/tmp/corrupt.out; then
		cat /tmp/corrupt.out
		fail "roce_check.py did not notice a flipped bit in packet $n"
	fi
	has "BAD: packet $n: .*ICRC" </tmp/corrupt.out || fail "roce_check.py: $(head -n 1 /tmp/corrupt.out)"
}

t_main
