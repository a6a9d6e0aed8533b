#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The demo ("make run"), inside the guest: sroce moving data, step by step,
# each step's command and what it printed, trimmed to what matters, then a
# summary.  The guest plays two hosts:
#
#   1. two network namespaces joined by a veth pair, one sroce device each:
#      the verbs tools (ibv_rc_pingpong, sroce_rc_test's byte-checked
#      cases, ib_write_bw, ib_read_lat, rping -V), "rdma resource" while
#      traffic runs and "rdma statistic" before and after;
#   2. the two ends of a veth pair in the initial namespace, where the
#      kernel's NVMe over Fabrics opens its connections: a namespace
#      exported by one, formatted and used as a disk by the other;
#   3. rdma_rxe (initial namespace) against sroce (its own namespace):
#      the same pingpong across the wire.
#
# Every step checks what it shows; the first that fails ends the demo,
# and the summary names it.  Exit status 0 only if every step passed.
# tests/groups/demo.sh runs this script and checks its summary.
set -eo pipefail
. "$SROCE_ROOT/tests/lib.sh"
. "$SROCE_ROOT/tests/lib-rdma.sh"
. "$SROCE_ROOT/tests/lib-nvme.sh"

DEMO_STEPS=(load two_hosts pingpong verified write_bw read_lat rping resources
	statistics nvme rxe teardown)
DEMO_DONE=()	# "name<TAB>seconds<TAB>result", one per passed step
DEMO_STEP=	# the step running
DEMO_T0=$SECONDS
DEMO_TMP=/tmp/sroce-demo
mkdir -p "$DEMO_TMP"

say() { printf '\n### %s\n' "$*"; }
# show CMD...: the command, then its output.
show() { printf '$ %s\n' "$*"; "$@"; }
# note TEXT: a line of the summary for the step running.
note() { DEMO_NOTE=$*; }

# step NAME: run demo_NAME, timed; the summary keeps its note.
step() {
	local t0=$SECONDS
	DEMO_STEP=$1 DEMO_NOTE=
	"demo_$1"
	DEMO_DONE+=("$1"$'\t'"$((SECONDS - t0))"$'\t'"$DEMO_NOTE")
	DEMO_STEP=
}

# demo_exit: the summary, also when a step fails (fail exits the shell).
demo_exit() {
	local rc=$? d name secs what
	set +e
	rdma_cleanup >/dev/null 2>&1
	[ -z "$DEMO_STEP" ] || [ "$rc" != 0 ] || rc=1
	say "Summary"
	for d in "${DEMO_DONE[@]}"; do
		IFS=$'\t' read -r name secs what <<<"$d"
		printf 'PASS  %-11s %4ss  %s\n' "$name" "$secs" "$what"
	done
	if [ -n "$DEMO_STEP" ] || [ "$rc" != 0 ]; then
		if [ -n "$DEMO_QUIET" ]; then
			echo "--- the output of: $DEMO_QUIET"
			tail -n 60 "$DEMO_TMP/quiet.log"
		fi
		printf 'FAIL  %-11s        (exit status %s; its output is above)\n' \
			"${DEMO_STEP:-?}" "$rc"
		t_reset >/dev/null 2>&1
		echo "demo: FAILED at step ${DEMO_STEP:-?} after $((SECONDS - DEMO_T0)) s"
		exit "$rc"
	fi
	echo "demo: all ${#DEMO_DONE[@]} steps passed in $((SECONDS - DEMO_T0)) s"
	exit 0
}
trap demo_exit EXIT

# topology: lib-rdma's topologies install their own EXIT trap; keep ours,
# which calls theirs.
topology() {
	rdma_topo "$@" >"$DEMO_TMP/topo.log" 2>&1 || { cat "$DEMO_TMP/topo.log"; fail "topology $1"; }
	trap demo_exit EXIT
}

# nonzero DEV: DEV's counters that are not zero, "name value" a line.
nonzero() {
	rdma statistic show link "$1/1" |
		awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) print "  " $i, $(i + 1) }'
}

# quiet CMD...: CMD with its output kept in $DEMO_TMP/quiet.log, shown only
# if it fails (by demo_exit, when it fails the way lib.sh's fail does: by
# exiting).
DEMO_QUIET=
quiet() {
	DEMO_QUIET=$*
	"$@" >"$DEMO_TMP/quiet.log" 2>&1
	DEMO_QUIET=
}

# result_line LOG SIZE: perftest's result line for message size SIZE.
result_line() {
	grep -E "^ *$2 +[0-9]+ " "$1" | tail -n 1
}

# --- 1. two hosts ------------------------------------------------------------------

demo_load() {
	say "Kernel $(uname -r): load sroce"
	sroce_load
	show modinfo -F description "$SROCE_KO"
	note "sroce.ko on $(uname -r)"
}

demo_two_hosts() {
	say "Two hosts: namespaces $H1 and $H2 joined by a veth pair, one sroce device each"
	echo "$ ip netns exec $H1 rdma link add sroce1 type sroce netdev st-v1   (and sroce2 in $H2)"
	topology two_hosts
	show rdma link show
	echo "host1\$ ibv_devinfo -d sroce1"
	n1 ibv_devinfo -d sroce1 | grep -E 'hca_id|transport|state|active_mtu|link_layer'
	echo "GID index of each host's IPv4 address: sroce1 $RDMA_GID1 ($RDMA_IP1), sroce2 $RDMA_GID2 ($RDMA_IP2)"
	DEMO_STATS_BEFORE=$(nonzero sroce1)
	note "sroce1 ($RDMA_IP1) and sroce2 ($RDMA_IP2), ports ACTIVE"
}

demo_pingpong() {
	say "ibv_rc_pingpong: 100 round trips of 16 KiB over RC, host 2 to host 1"
	echo "host1\$ ibv_rc_pingpong -d sroce1 -g $RDMA_GID1 -c -n 100 -s 16384 &"
	echo "host2\$ ibv_rc_pingpong -d sroce2 -g $RDMA_GID2 -c -n 100 -s 16384 $RDMA_IP1"
	quiet pingpong pingpong ibv_rc_pingpong
	sed 's/^/  client| /' "$CLI_LOG" | grep -E 'bytes in|iters in'
	note "$(grep -oE '[0-9.]+ Mbit/sec' "$CLI_LOG"), $(grep -oE '[0-9.]+ usec/iter' "$CLI_LOG")"
}

demo_verified() {
	local cases=send,send_sge,rdma_write,rdma_write_imm,rdma_read,rdma_read_sge,atomic_cas,atomic_faa
	say "Every byte checked: SEND, RDMA WRITE, RDMA READ and atomics between the hosts"
	echo "(ibv_rc_pingpong -c checks one byte per page; sroce_rc_test checks each byte it moves)"
	echo "$ sroce_rc_test -d sroce1 -D sroce2 -g $RDMA_GID1 -G $RDMA_GID2 -t $cases"
	: >"$DEMO_TMP/skips"
	SROCE_T_SKIPS=$DEMO_TMP/skips RC_CASES_TIMEOUT=240 quiet rc_cases -t "$cases"
	sed 's/^/  /' /tmp/rc_cases
	[ "$(grep -c ': pass' /tmp/rc_cases)" = 8 ] || fail "sroce_rc_test: not every case passed"
	note "8 of 8 sroce_rc_test cases, every byte compared"
}

# perftest TOOL SIZE ITERS: TOOL between the hosts, shown with its header
# and result line; the result line in PERF_LINE.
perftest() {
	local tool=$1 size=$2 n=$3
	echo "host1\$ $tool -d sroce1 -x $RDMA_GID1 -s $size -n $n &"
	echo "host2\$ $tool -d sroce2 -x $RDMA_GID2 -s $size -n $n $RDMA_IP1"
	quiet tool_pair "$tool" 18515 -x "$tool" -F -s "$size" -n "$n"
	grep -E '#bytes' "$CLI_LOG" | head -n 1
	PERF_LINE=$(result_line "$CLI_LOG" "$size") || fail "$tool printed no result"
	echo "$PERF_LINE"
}

demo_write_bw() {
	say "ib_write_bw: RDMA WRITE bandwidth, 64 KiB messages"
	perftest ib_write_bw 65536 2000
	note "64 KiB RDMA WRITE: $(awk '{ print $4 }' <<<"$PERF_LINE") MB/s average (emulated guest)"
}

# perftest turns TSC cycles into microseconds with a clock rate it
# measures first; on a loaded emulated host that now and then fails and it
# prints "inf": such a run measured nothing, and is tried again (three
# runs in all, as make bench does).
demo_read_lat() {
	local try typ
	say "ib_read_lat: RDMA READ latency, 2-byte messages"
	for try in 1 2 3; do
		perftest ib_read_lat 2 1000
		typ=$(awk '{ print $5 }' <<<"$PERF_LINE")
		[[ $typ =~ ^[0-9.]+$ ]] && break
		echo "(run $try: perftest's clock failed, t_typical $typ; again)"
	done
	note "2-byte RDMA READ: $typ us typical (emulated guest)"
}

demo_rping() {
	say "rping -V: rdma_cm connection, 100 pings, each read back and compared"
	echo "host1\$ rping -s -a $RDMA_IP1 -C 100 &"
	echo "host2\$ rping -c -a $RDMA_IP1 -V -v -C 100"
	quiet rping_pair 100
	grep -m 2 'ping data' "$CLI_LOG" | sed 's/^/  client| /'
	echo "  client| ... ($(pings "$CLI_LOG" "") distinct pings, none mismatched)"
	note "100 of 100 pings verified"
}

demo_resources() {
	local pid cli
	say "rdma resource: the QPs of a transfer while it runs"
	"${RDMA_NS1[@]}" ib_write_bw -d sroce1 -x "$RDMA_GID1" -F -s 65536 -D 4 \
		>"$DEMO_TMP/res.srv" 2>&1 &
	pid=$!
	RDMA_BG_PIDS+=("$pid")
	wait_for 20 _tcp_listening 18515
	"${RDMA_NS2[@]}" ib_write_bw -d sroce2 -x "$RDMA_GID2" -F -s 65536 -D 4 "$RDMA_IP1" \
		>"$DEMO_TMP/res.cli" 2>&1 &
	cli=$!
	RDMA_BG_PIDS+=("$cli")
	echo "host1\$ ib_write_bw -d sroce1 -x $RDMA_GID1 -s 65536 -D 4 &"
	echo "host2\$ ib_write_bw -d sroce2 -x $RDMA_GID2 -s 65536 -D 4 $RDMA_IP1 &"
	(wait_for 30 rc_qps_busy) || {
		rdma resource show qp
		cat "$DEMO_TMP/res.srv" "$DEMO_TMP/res.cli"
		fail "the transfer's two RC QPs not connected within 30 s"
	}
	echo "\$ rdma resource show qp    (the RC ones)"
	rc_qps | tee "$DEMO_TMP/qps"
	DEMO_QPS=$(wc -l <"$DEMO_TMP/qps")
	wait "$cli" || { cat "$DEMO_TMP/res.cli"; fail "ib_write_bw -D 4 (client) failed"; }
	wait "$pid" || { cat "$DEMO_TMP/res.srv"; fail "ib_write_bw -D 4 (server) failed"; }
	note "$DEMO_QPS RC QPs seen connected during the transfer"
}

# rc_qps: the RC QPs of sroce1 and sroce2 connected (RTR: perftest's
# server of a WRITE test never sends; RTS), a line each.
rc_qps() { rdma resource show qp | grep -E '^link sroce[12]/1 .* type RC state RT[RS] ' || true; }
rc_qps_busy() { [ "$(rc_qps | wc -l)" -ge 2 ]; }

demo_statistics() {
	local tx
	say "rdma statistic: sroce1's counters that moved (all were 0 before the first step)"
	[ -z "$DEMO_STATS_BEFORE" ] || fail "sroce1's counters were not all 0 at the start: $DEMO_STATS_BEFORE"
	echo "\$ rdma statistic show link sroce1/1    (those not 0)"
	nonzero sroce1
	tx=$(counter sroce1 tx_packets)
	[ "$tx" -gt 1000 ] || fail "sroce1 sent only $tx packets"
	note "sroce1: $tx packets sent, $(counter sroce1 rx_packets) received, $(counter sroce1 retransmits) retransmitted"
}

# --- 2. NVMe over Fabrics ----------------------------------------------------------

demo_nvme() {
	local sum1 sum2
	say "NVMe over Fabrics: host 1 exports a disk, host 2 formats and uses it"
	echo "(Linux 6.1's nvmet-rdma and nvme-rdma open their connections in the initial"
	echo " namespace: here the two hosts are sroce1 on st-w1 and sroce2 on st-w2, the two"
	echo " ends of a veth pair there, whose traffic crosses the pair)"
	t_reset >/dev/null
	quiet topo_wire
	quiet nvme_modules
	quiet nullb_create nullb0 256
	quiet target_create /dev/nullb0 10.7.0.1
	echo "$ (configfs) nvmet subsystem $NQN, namespace 1 = /dev/nullb0, rdma port 10.7.0.1:4420"
	show nvme connect -t rdma -a 10.7.0.1 -s 4420 -n "$NQN" --host-traddr=10.7.0.2 --keep-alive-tmo=30
	wait_for 30 host_disk
	DEMO_DISK=$(host_disk)
	echo "host 2 sees $DEMO_DISK: $(lsblk -dno SIZE,MODEL "$DEMO_DISK" | xargs)"
	show mkfs.ext4 -q -F "$DEMO_DISK"
	mkdir -p "$DEMO_TMP/mnt"
	show mount "$DEMO_DISK" "$DEMO_TMP/mnt"
	show dd if=/dev/urandom of="$DEMO_TMP/file" bs=1M count=32 status=none
	show cp "$DEMO_TMP/file" "$DEMO_TMP/mnt/file"
	sum1=$(sha256sum <"$DEMO_TMP/file" | cut -d' ' -f1)
	show umount "$DEMO_TMP/mnt"
	echo "(unmounted, so that the read below comes from the target, not the page cache)"
	show mount -o ro "$DEMO_DISK" "$DEMO_TMP/mnt"
	echo "$ sha256sum $DEMO_TMP/mnt/file"
	sum2=$(sha256sum <"$DEMO_TMP/mnt/file" | cut -d' ' -f1)
	echo "written $sum1"
	echo "read    $sum2"
	[ "$sum1" = "$sum2" ] || fail "the file read back differs from the one written"
	show umount "$DEMO_TMP/mnt"
	show nvme disconnect -n "$NQN"
	wait_for 30 eval '! host_ctrl'
	echo "sroce2 (the NVMe host's device): $(nonzero sroce2 | grep -E 'tx_packets|rx_packets' | xargs)"
	note "ext4 on $DEMO_DISK, 32 MiB file read back, sha256 equal"
	nvme_reset
	t_reset >/dev/null
}

# --- 3. against rdma_rxe -----------------------------------------------------------

demo_rxe() {
	say "The same pingpong against Linux's rdma_rxe: rxe0 serves, sroce0 connects"
	echo "(rxe0 on st-i0 in the initial namespace, sroce0 on st-i1 in namespace $INTEROP_NS)"
	topology interop_rxe_server
	echo "$ ibv_rc_pingpong -d rxe0 -g $RDMA_GID1 -c -n 100 -s 16384 &"
	echo "$ ip netns exec $INTEROP_NS ibv_rc_pingpong -d sroce0 -g $RDMA_GID2 -c -n 100 -s 16384 $RDMA_IP1"
	quiet pingpong pingpong_rxe ibv_rc_pingpong
	sed 's/^/  client| /' "$CLI_LOG" | grep -E 'bytes in|iters in'
	echo "sroce0: $(nonzero sroce0 | grep -E 'tx_packets|rx_packets' | xargs)"
	note "rxe0 <-> sroce0: $(grep -oE '[0-9.]+ Mbit/sec' "$CLI_LOG")"
}

demo_teardown() {
	say "Teardown: devices deleted, every sroce object released, module unloaded"
	rdma_cleanup
	trap demo_exit EXIT
	t_reset || fail "sroce did not release everything"
	sroce_loaded && fail "sroce is still loaded"
	show rdma link show
	note "no objects left, sroce unloaded"
}

for s in "${DEMO_STEPS[@]}"; do
	step "$s"
done
