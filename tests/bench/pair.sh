#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The two-guest side of "make bench": sroce and rdma_rxe over a wire
# between two guests (scripts/vm/run-pair.sh boots them; both run this,
# SROCE_PAIR_ROLE a or b), alternating devices as tests/bench/guest.sh
# does, the same device in both guests at a time:
#
#   guest a: perftest servers            guest b: perftest clients
#   eth0 10.8.0.1/24  ===================  eth0 10.8.0.2/24
#        virtio-net on a QEMU socket netdev, one emulated CPU each
#
# Every packet crosses the virtual NIC with its ICRC, unlike loopback.
# eth0's MTU is 9000 for IB MTU 4096 and 1500 for IB MTU 1024.  Each run
# first measures the wire itself with no RDMA device (plain UDP datagrams
# of one packet each, KIND udp): the ceiling of every driver on it.  Guest b
# writes the samples, in guest.sh's format, workloads named wire_*, to
# $BENCH_OUT/samples.tsv; both write their tools' output to
# $BENCH_OUT/logs/.  The guests wait for each other through files in
# /run/pair.  sroce gets the 1 s floor under its ACK timeout that the
# two-guest tests give it (tests/lib-pair.sh: a one-CPU guest stalls now
# and then for longer than perftest's 67 ms timeout); rdma_rxe has no
# such parameter.
#
# Environment: BENCH_OUT, BENCH_RUNS, BENCH_SECS, BENCH_KINDS (sroce rxe
# only), as guest.sh.

export SROCE_ROOT=${SROCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export SROCE_RESULTS=${BENCH_OUT:-/run/xfer/bench}/tmp
. "$SROCE_ROOT/tests/lib.sh"
. "$SROCE_ROOT/tests/lib-rdma.sh"
set -u

OUT=${BENCH_OUT:-/run/xfer/bench}
RUNS=${BENCH_RUNS:-3}
SECS=${BENCH_SECS:-3}
KINDS=${BENCH_KINDS:-"sroce rxe"}
ROLE=${SROCE_PAIR_ROLE:?run by scripts/vm/run-pair.sh}
SYNC=/run/pair
TOOL_TIMEOUT=180
SERVER=10.8.0.1
RUN=0 KIND= DEV= GID= STEP=0

mkdir -p "$OUT/logs"
SAMPLES=$OUT/samples.tsv
: >"$SAMPLES"

# meet NAME [TEXT]: leave NAME for the other guest, wait for its NAME (up
# to 10 minutes); prints its TEXT.  Names are numbered, so no step can
# meet a file another one left.
meet() {
	local other name=$STEP.$1 i
	STEP=$((STEP + 1))
	[ "$ROLE" = a ] && other=b || other=a
	echo "${2:-ok}" >"$SYNC/$name.$ROLE.tmp"
	mv "$SYNC/$name.$ROLE.tmp" "$SYNC/$name.$ROLE"
	for i in $(seq 3000); do
		[ -e "$SYNC/$name.$other" ] && { cat "$SYNC/$name.$other"; return 0; }
		sleep 0.2
	done
	log "guest $other never reached $name"
	exit 1
}

sample() { # workload metric value
	printf '%s\t%s\t%s\t%s\t%s\n' "$RUN" "$KIND" "$1" "$2" "$3" >>"$SAMPLES"
	log "run $RUN $KIND $1: $2 = $3"
}

# eth_up MTU: eth0 at MTU with this guest's address; sets N, this guest's
# host number.
eth_up() {
	local o mac
	[ "$ROLE" = a ] && N=1 o=2 || N=2 o=1
	mac=52:54:00:5e:00:0$([ $o = 1 ] && echo a || echo b)
	modprobe virtio_net
	wait_for 10 ip link show eth0
	run ip addr flush dev eth0
	run ip link set eth0 mtu "$1"
	run ip addr add "10.8.0.$N/24" dev eth0
	run ip link set eth0 up
	run ip neigh replace "10.8.0.$o" lladdr "$mac" dev eth0 nud permanent
}

# wire_up KIND MTU: eth0 at MTU with this guest's address, KIND's device
# on it; sets DEV and GID.
wire_up() {
	KIND=$1
	eth_up "$2"
	case $KIND in
	sroce)
		modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
		run insmod "$SROCE_KO"
		echo 18 >/sys/module/sroce/parameters/min_ack_timeout
		run rdma link add sroce0 type sroce netdev eth0
		DEV=sroce0
		export RDMAV_DRIVERS=$SROCE_ROOT/userspace-provider/libsroce
		;;
	rxe)
		run modprobe rdma_rxe
		run rdma link add rxe0 type rxe netdev eth0
		DEV=rxe0
		unset RDMAV_DRIVERS
		;;
	esac
	wait_for 10 gid_present "$DEV" "::ffff:10.8.0.$N"
	GID=$(gid_index "$DEV" "10.8.0.$N")
}

wire_down() {
	run rdma link delete "$DEV"
	case $KIND in
	sroce) wait_for 30 rmmod sroce ;;
	rxe) wait_for 30 rmmod rdma_rxe ;;
	esac
	DEV= KIND=
}

# bw NAME TOOL SIZE ARGS...: one bandwidth run over the wire, server in a,
# client in b; b records bandwidth and message rate as guest.sh does.
bw() {
	local name=$1 tool=$2 size=$3 log line pid i rc=0
	shift 3
	log=$OUT/logs/run$RUN-$KIND-$name.$ROLE
	if [ "$ROLE" = a ]; then
		timeout -k 5 $TOOL_TIMEOUT "$tool" -d "$DEV" -x "$GID" -F -s "$size" \
			-D "$SECS" "$@" >"$log" 2>&1 </dev/null &
		pid=$!
		for i in $(seq 150); do
			ss -Hltn 'sport = :18515' | has . && break
			sleep 0.2
		done
		meet "$name.listening" >/dev/null
		meet "$name.done" >/dev/null
		wait $pid || log "$name: the server ended with status $?"
		return
	fi
	meet "$name.listening" >/dev/null
	timeout -k 5 $TOOL_TIMEOUT "$tool" -d "$DEV" -x "$GID" -F -s "$size" \
		-D "$SECS" "$@" "$SERVER" >"$log" 2>&1 </dev/null || rc=$?
	line=$(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ { print; exit }' "$log")
	if [ $rc = 0 ] && [ -n "$line" ] && awk '$4 > 0 { ok = 1 } END { exit !ok }' <<<"$line"; then
		sample "$name" bw_MBps "$(awk '{ print $4 }' <<<"$line")"
		sample "$name" rate_Mpps "$(awk '{ print $5 }' <<<"$line")"
	else
		log "$name on $DEV failed (exit $rc): $(grep . "$log" | tail -n 1)"
		sample "$name" bw_MBps nan
	fi
	meet "$name.done" >/dev/null
}

# udp NAME SIZE: the wire itself, no RDMA device: SIZE-byte UDP datagrams,
# one RoCEv2 packet's worth each, sent from a as fast as its socket takes
# them for the bandwidth runs' time; b records what arrived (KIND udp).
# The sender's copy from user memory, which a driver sending from pinned
# pages does not make, costs a few per cent of a CPU at these rates
# (memcpy_64k): this is the most any RoCE driver gets across, within that.
udp() {
	local name=$1 size=$2 log out rc=0
	KIND=udp
	log=$OUT/logs/run$RUN-udp-$name.$ROLE
	if [ "$ROLE" = a ]; then
		meet "$name.listening" >/dev/null
		timeout -k 5 $TOOL_TIMEOUT "$SROCE_PROGS/sroce_udp_blast" send \
			10.8.0.2 18516 "$size" "$SECS" >"$log" 2>&1 ||
			log "$name: the sender failed: $(tail -n 1 "$log")"
		meet "$name.done" >/dev/null
	else
		timeout -k 5 $TOOL_TIMEOUT "$SROCE_PROGS/sroce_udp_blast" recv \
			18516 60 >"$log" 2>&1 </dev/null &
		local pid=$!
		wait_for 10 grep -q listening "$log"
		meet "$name.listening" >/dev/null
		wait $pid || rc=$?
		out=$(awk '$1 == "received" { printf "%.1f", $5 / 1e6 }' "$log")
		if [ $rc = 0 ] && [ -n "$out" ]; then
			sample "$name" bw_MBps "$out"
		else
			log "$name failed (exit $rc): $(tail -n 1 "$log")"
			sample "$name" bw_MBps nan
		fi
		meet "$name.done" >/dev/null
	fi
	KIND=
}

t_reset >/dev/null 2>&1
for RUN in $(seq "$RUNS"); do
	# A UDP datagram as large as the bandwidth runs' middle packets: BTH,
	# a full IB MTU of payload and the ICRC (4112 and 1040 bytes).
	eth_up 9000
	udp wire_udp 4112
	eth_up 1500
	udp wire_udp_m1024 1040
	for kind in $KINDS; do
		case $kind in sroce | rxe) ;; *) continue ;; esac
		for mtu in 9000 1500; do
			log "=== run $RUN: $kind, eth0 mtu $mtu"
			wire_up "$kind" "$mtu"
			meet "up.$kind.$mtu" >/dev/null
			if [ $mtu = 9000 ]; then
				sfx=
			else
				sfx=_m1024
			fi
			bw "wire_write_bw_64k$sfx" ib_write_bw 65536
			bw "wire_read_bw_64k$sfx" ib_read_bw 65536
			bw "wire_send_bw_64k$sfx" ib_send_bw 65536
			meet "down.$kind.$mtu" >/dev/null
			wire_down
		done
	done
done
log "pair bench done"
