#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest side of "make bench" (scripts/bench.sh boots the guest and runs
# this): sroce and Linux's rdma_rxe measured on the same workloads in the
# same guest, alternating (sroce, rxe, sroce, rxe, ...), one device at a
# time: rdma_rxe binds UDP 4791 in the initial namespace when it loads, and
# nvmet-rdma/nvme-rdma on Linux 6.1 work only there, so each device in turn
# has the initial namespace to itself.
#
#     [ sroce0 ] or [ rxe0 ]
#            |
#     [ st-d0 ]  dummy, MTU 9000 (IB MTU 4096), 10.5.0.1/24
#
# Both ends of every workload use the one device (loopback).  Nothing here
# asserts a speed: a workload that fails is recorded as failed and the
# bench goes on.
#
# Environment (all optional):
#   BENCH_OUT      where results go (default /run/xfer/bench)
#   BENCH_RUNS     runs of each device (default 3)
#   BENCH_SECS     seconds of each bandwidth measurement (default 3)
#   BENCH_LAT_N    iterations of each latency measurement (default 1000)
#   BENCH_FIO_SECS seconds of each fio measurement (default 10)
#   BENCH_SWEEP    message sizes of the ib_write_bw sweep (for the plot)
#   BENCH_SCALE    QP counts of the scale workload (default "4 1000 10000")
#   BENCH_KINDS    the devices, in the order of each run (default "sroce rxe");
#                  "sroce-base" is sroce built from BENCH_BASE_KO
#   BENCH_BASE_KO  another build of sroce.ko, to measure a change against
#                  the one before it in one guest
#   BENCH_SKIP     workload groups to leave out: perf scale sweep nvme memcpy
#
# Results: $BENCH_OUT/samples.tsv, one measurement a line:
#   run <TAB> device <TAB> workload <TAB> metric <TAB> value
# (value "nan" for a failed measurement), $BENCH_OUT/meta.tsv (key <TAB>
# value: kernel, CPU, dates), and every tool's output in $BENCH_OUT/logs/.

export SROCE_ROOT=${SROCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export SROCE_RESULTS=${BENCH_OUT:-/run/xfer/bench}/tmp
. "$SROCE_ROOT/tests/lib.sh"
. "$SROCE_ROOT/tests/lib-rdma.sh"
. "$SROCE_ROOT/tests/lib-nvme.sh"
set -u

OUT=${BENCH_OUT:-/run/xfer/bench}
RUNS=${BENCH_RUNS:-3}
SECS=${BENCH_SECS:-3}
LAT_N=${BENCH_LAT_N:-1000}
FIO_SECS=${BENCH_FIO_SECS:-10}
SWEEP=${BENCH_SWEEP:-"256 1024 4096 16384 65536 262144 1048576"}
SCALE=${BENCH_SCALE:-"4 1000 10000"}
KINDS=${BENCH_KINDS:-"sroce rxe"}
SKIP=${BENCH_SKIP:-}
TOOL_TIMEOUT=180
ADDR=10.5.0.1
PROVIDER=$SROCE_ROOT/userspace-provider/libsroce
NQN=sroce-bench

mkdir -p "$OUT/logs"
SAMPLES=$OUT/samples.tsv
: >"$SAMPLES"
RUN=0 DEV= KIND=

skipped() { [[ " $SKIP " == *" $1 "* ]]; }

sample() { # workload metric value
	printf '%s\t%s\t%s\t%s\t%s\n' "$RUN" "$KIND" "$1" "$2" "$3" >>"$SAMPLES"
	log "run $RUN $KIND $1: $2 = $3"
}

meta() { printf '%s\t%s\n' "$1" "$2" >>"$OUT/meta.tsv"; }

# --- the devices -------------------------------------------------------------

netdev_up() {
	run ip link add st-d0 mtu 9000 type dummy
	run ip addr add "$ADDR/24" dev st-d0
	run ip link set st-d0 up
}

# dev_up KIND: the device of KIND alone on st-d0; sets DEV and GID.
dev_up() {
	KIND=$1
	netdev_up
	case $KIND in
	sroce | sroce-base)
		modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
		# No dyndbg=+p, unlike the tests: no debug lines on the data path.
		if [ "$KIND" = sroce ]; then
			run insmod "$SROCE_KO"
		else
			run insmod "${BENCH_BASE_KO:?sroce-base needs BENCH_BASE_KO}"
		fi
		run rdma link add sroce0 type sroce netdev st-d0
		DEV=sroce0
		export RDMAV_DRIVERS=$PROVIDER
		;;
	rxe)
		run modprobe rdma_rxe
		run rdma link add rxe0 type rxe netdev st-d0
		DEV=rxe0
		unset RDMAV_DRIVERS
		;;
	esac
	wait_for 10 gid_present "$DEV" "::ffff:$ADDR"
	GID=$(gid_index "$DEV" "$ADDR")
	log "$DEV up, GID index $GID, $(ibv_devinfo -d "$DEV" | grep -o 'active_mtu:.*' | tr -s '\t ' ' ')"
}

dev_down() {
	run rdma link delete "$DEV"
	run ip link del st-d0
	case $KIND in
	sroce | sroce-base) wait_for 30 rmmod sroce ;;
	rxe) wait_for 30 rmmod rdma_rxe ;;
	esac
	DEV= KIND=
}

# --- perftest ----------------------------------------------------------------

# perf_pair NAME TOOL ARGS...: TOOL as server and client on $DEV; the
# client's output in $PERF_LOG.  Fails (returns 1) without stopping the
# bench.
perf_pair() {
	local name=$1 tool=$2 log=$OUT/logs/run$RUN-$KIND-$1 spid rc=0 i
	shift 2
	PERF_LOG=$log.cli
	timeout -k 5 $TOOL_TIMEOUT "$tool" -d "$DEV" -x "$GID" -F "$@" \
		>"$log.srv" 2>&1 </dev/null &
	spid=$!
	for i in $(seq 150); do
		ss -Hltn 'sport = :18515' | has . && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.2
	done
	timeout -k 5 $TOOL_TIMEOUT "$tool" -d "$DEV" -x "$GID" -F "$@" "$ADDR" \
		>"$PERF_LOG" 2>&1 </dev/null || rc=$?
	if [ $rc != 0 ]; then
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
		log "$name on $DEV failed (client exit $rc): $(grep . "$PERF_LOG" | tail -n 1)"
		perf_keep "$log"
		return 1
	fi
	if ! wait $spid; then
		log "$name on $DEV: the server failed: $(grep . "$log.srv" | tail -n 1)"
		perf_keep "$log"
		return 1
	fi
}

# perf_keep LOG: keep a failed attempt's logs (a retry reuses the names).
perf_keep() {
	local n=1
	while [ -e "$1.failed$n.cli" ]; do n=$((n + 1)); done
	cp "$1.cli" "$1.failed$n.cli"
	cp "$1.srv" "$1.failed$n.srv"
	dmesg | tail -n 20 >"$1.failed$n.dmesg"
}

# The result line of perftest's output: the first line starting with the
# message size.
perf_line() { awk -v s="$1" '$1 == s && $2 ~ /^[0-9]+$/ { print; exit }' "$PERF_LOG"; }

# cpu_busy: the guest's busy CPU time so far, all CPUs, in USER_HZ ticks
# (/proc/stat: everything but idle and iowait).
cpu_busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# cpu_cost TICKS LINE: guest CPU seconds per GiB moved: TICKS of busy CPU
# over the whole perftest run (both ends, the kernel threads and
# interrupts; setup and teardown included, the same for every device)
# for the bytes of the measured window (perftest's MB/s, of 2^20 bytes,
# times its -D seconds).
cpu_cost() {
	awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v s="$SECS" '$4 > 0 {
		printf "%.3f", t / hz / ($4 * s / 1024) }' <<<"$2"
}

# bw NAME TOOL SIZE ARGS...: bandwidth (MB/s as perftest counts), message
# rate (Mpps) and CPU cost (cpu_cost).  A run that fails is tried again,
# and so is one whose clock failed: perftest converts TSC cycles to time,
# and on a loaded emulated host now and then prints a bandwidth of 0 for a
# run that did complete messages.  No message completed at all is a result
# (0).
bw() {
	local name=$1 tool=$2 size=$3 line try cost busy
	shift 3
	for try in 1 2 3; do
		busy=$(cpu_busy)
		perf_pair "$name" "$tool" -s "$size" -D "$SECS" "$@" &&
			line=$(perf_line "$size") && [ -n "$line" ] || continue
		busy=$(($(cpu_busy) - busy))
		if awk '$2 > 0 && !($4 > 0) { exit 1 }' <<<"$line"; then
			sample "$name" bw_MBps "$(awk '{ print $4 }' <<<"$line")"
			sample "$name" rate_Mpps "$(awk '{ print $5 }' <<<"$line")"
			cost=$(cpu_cost "$busy" "$line")
			[ -z "$cost" ] || sample "$name" cpu_s_per_GiB "$cost"
			return
		fi
		log "$name on $DEV: perftest's clock failed ($line), again"
	done
	sample "$name" bw_MBps nan
}

# lat NAME TOOL: 2-byte latency, perftest's t_typical (its median), t_avg
# and 99th percentile, in microseconds.  perftest prints "inf" when its clock
# calibration fails under emulation (on a loaded host, now and then): such
# a run measured nothing and is tried again, up to three times in all.
lat() {
	local name=$1 tool=$2 line typ avg p99 try
	for try in 1 2 3; do
		perf_pair "$name" "$tool" -s 2 -n "$LAT_N" && line=$(perf_line 2) &&
			[ -n "$line" ] || continue
		typ=$(awk '{ print $5 }' <<<"$line")
		avg=$(awk '{ print $6 }' <<<"$line")
		p99=$(awk '{ print $8 }' <<<"$line")
		if [[ $typ =~ ^[0-9.]+$ && $avg =~ ^[0-9.]+$ && $p99 =~ ^[0-9.]+$ ]]; then
			sample "$name" lat_us "$typ"
			sample "$name" lat_avg_us "$avg"
			sample "$name" lat_p99_us "$p99"
			return
		fi
		log "$name on $DEV: perftest's clock failed (t_typical $typ), again"
	done
	sample "$name" lat_us nan
}

perf_all() {
	local q
	bw write_bw_64k ib_write_bw 65536
	bw read_bw_64k ib_read_bw 65536
	bw send_bw_64k ib_send_bw 65536
	# The path MTU of a 1500-byte Ethernet.
	bw write_bw_64k_m1024 ib_write_bw 65536 -m 1024
	bw read_bw_64k_m1024 ib_read_bw 65536 -m 1024
	bw send_bw_64k_m1024 ib_send_bw 65536 -m 1024
	for q in 1 4 16 64; do
		bw write_rate_64_q$q ib_write_bw 64 -q $q
	done
	lat send_lat_2 ib_send_lat
	lat write_lat_2 ib_write_lat
	lat read_lat_2 ib_read_lat
}

# scale QPS: QPS RC QPs (QPS/2 connections, both ends here) created and
# connected, then a 64-byte WRITE outstanding on every connection
# (sroce_qp_scale): seconds to set up, memory per QP (the fall of MemFree,
# and beside it the growth of slab and vmalloc), the message rate, and
# seconds to destroy every QP.
scale() {
	local qps=$1 name=scale_$1 log=$OUT/logs/run$RUN-$KIND-scale_$1 line v
	if ! line=$(timeout -k 5 $((TOOL_TIMEOUT * 5)) "$SROCE_PROGS/sroce_qp_scale" \
		-d "$DEV" -g "$GID" -n $((qps / 2)) -s "$SECS" 2>"$log.err"); then
		log "$name on $DEV failed: $(tail -n 1 "$log.err")"
		sample "$name" rate_Mpps nan
		return
	fi
	echo "$line" >"$log"
	for v in setup_s mem_per_qp_b kmem_per_qp_b rate_Mpps teardown_s; do
		sample "$name" $v "$(grep -o "$v=[0-9.-]*" <<<"$line" | cut -d= -f2)"
	done
}

scale_all() {
	local q
	for q in $SCALE; do
		scale $q
	done
}

sweep() {
	local s
	for s in $SWEEP; do
		bw "write_bw_sweep_$s" ib_write_bw "$s"
	done
}

# --- NVMe over Fabrics ---------------------------------------------------------

# A null_blk disk (not memory-backed: the backend costs next to nothing)
# exported by nvmet-rdma on $ADDR:4420 and connected to by nvme-rdma.
nvme_up() {
	local s=$NVMET/subsystems/$NQN p=$NVMET/ports/1
	run modprobe -a nvmet-rdma nvme-rdma
	run modprobe null_blk nr_devices=0
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$NULLB/nullb0"
	echo 1024 >"$NULLB/nullb0/size"
	echo 1 >"$NULLB/nullb0/power"
	wait_for 10 test -b /dev/nullb0
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo /dev/nullb0 >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable"
	mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo "$ADDR" >"$p/addr_traddr"
	echo 4420 >"$p/addr_trsvcid"
	ln -s "$s" "$p/subsystems/$NQN"
	run nvme connect -t rdma -a "$ADDR" -s 4420 -n "$NQN" --keep-alive-tmo=30 ||
		return 1
	wait_for 30 host_disk
}

nvme_down() {
	local d
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	wait_for 30 eval '! host_disk'
	rm -f "$NVMET/ports/1/subsystems/$NQN"
	rmdir "$NVMET/ports/1" 2>/dev/null
	for d in "$NVMET/subsystems/$NQN/namespaces/1"; do
		[ -d "$d" ] || continue
		echo 0 >"$d/enable"
		rmdir "$d"
	done
	rmdir "$NVMET/subsystems/$NQN" 2>/dev/null
	rmdir "$NULLB/nullb0" 2>/dev/null
	modprobe -r nvme-rdma nvmet-rdma null_blk
}

# fio_read NAME DISK ARGS...: IOPS and bandwidth (MiB/s) of a read job.
fio_read() {
	local name=$1 disk=$2 json=$OUT/logs/run$RUN-$KIND-$1.json vals
	shift 2
	if timeout -k 10 $((FIO_SECS + 120)) fio --name="$name" --filename="$disk" \
		--ioengine=libaio --direct=1 --time_based --ramp_time=2 \
		--runtime="$FIO_SECS" --output-format=json --output="$json" "$@" &&
	   vals=$(/usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
if j["error"]:
    sys.exit(1)
print(j["read"]["iops"], j["read"]["bw"] / 1024)' "$json"); then
		sample "$name" iops "${vals% *}"
		sample "$name" bw_MiBps "${vals#* }"
	else
		log "fio $name on $DEV failed"
		sample "$name" iops nan
	fi
}

nvme_all() {
	local disk
	if ! nvme_up; then
		log "NVMe-oF over $DEV did not come up"
		sample nvme_randread_4k_qd32 iops nan
		sample nvme_seqread_128k_qd16 bw_MiBps nan
		nvme_down
		return
	fi
	disk=$(host_disk)
	log "NVMe-oF over $DEV: $disk"
	fio_read nvme_randread_4k_qd32 "$disk" --rw=randread --bs=4k --iodepth=32
	fio_read nvme_seqread_128k_qd16 "$disk" --rw=read --bs=128k --iodepth=16
	nvme_down
}

# --- the bench -----------------------------------------------------------------

memcpy_all() {
	local line
	KIND=cpu
	line=$("$SROCE_PROGS/sroce_memcpy_bw" 65536 2) &&
		sample memcpy_64k bw_MBps "$(awk '{ printf "%.1f", $3 / 1048576 }' <<<"$line")"
	line=$("$SROCE_PROGS/sroce_memcpy_bw" 67108864 2) &&
		sample memcpy_64m bw_MBps "$(awk '{ printf "%.1f", $3 / 1048576 }' <<<"$line")"
	KIND=
}

t_reset >/dev/null 2>&1
rm -f "$OUT/meta.tsv"
meta kernel "$(uname -r)"
meta kernel_version "$(uname -v)"
meta cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
meta cpus "$(nproc)"
meta mem_kib "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
meta perftest "$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
meta fio "$(fio --version)"
meta runs "$RUNS"
meta secs "$SECS"
meta lat_n "$LAT_N"
meta fio_secs "$FIO_SECS"
meta sweep "$SWEEP"
meta scale "$SCALE"
meta kinds "$KINDS"
meta start "$(date -u +%FT%TZ)"

for RUN in $(seq "$RUNS"); do
	skipped memcpy || memcpy_all
	for kind in $KINDS; do
		log "=== run $RUN: $kind"
		dev_up "$kind"
		skipped perf || perf_all
		skipped scale || scale_all
		skipped sweep || sweep
		skipped nvme || nvme_all
		dev_down
	done
done
meta end "$(date -u +%FT%TZ)"
bad=$(dmesg | grep -E "$SROCE_BAD_KMSG" | head -n 5)
if [ -n "$bad" ]; then
	meta kernel_log_bad "$(echo "$bad" | head -n 1)"
	printf 'kernel log:\n%s\n' "$bad"
	exit 1
fi
log "bench done"
