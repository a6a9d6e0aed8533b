#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=58 cost=45
#
# Hostile userspace (issue 8): tests/progs/sroce_misuse opens sroce's uverbs
# file itself and sends invalid commands through all three uverbs entry
# points: write() commands, extended write() commands and the
# RDMA_VERBS_IOCTL ioctl (bad headers, attributes, handles, sizes, flags,
# addresses, reserved fields, driver data, double destroy, use after
# destroy, bad mmaps) and corrupts the rings of its own QPs, CQs and SRQs (wild indices, bad
# WQEs, a thread scribbling while another rings doorbells).  Only that
# process may suffer: every command gets a clean errno, every corrupt queue
# fails alone; the kernel logs nothing at warning level or above, a
# well-behaved process running at the same time passes, sroce's object
# counts come back, and the module unloads.
#
#     [ sroce0 ]   misuse program and well-behaved traffic, loopback
#         |
#     [ st-d0 ]  dummy, 10.5.0.1/24 (topo_loopback)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

MISUSE=$SROCE_PROGS/sroce_misuse
# The case lists of sroce_misuse: commands, and rings.
MISUSE_CMD_CASES=get_context,headers,pd,cq,qp_create,qp_modify,post,srq,mr,mw_ah,mmap,dm,cross_context
MISUSE_CMD_CASES+=,ioctl_hdr,ioctl_device,ioctl_cq,ioctl_qp,ioctl_srq,tm,ioctl_events,ioctl_objects,ioctl_write,ex_query,ex_cq,ex_qp,ex_unsupported
MISUSE_RING_CASES=sq_prod_huge,sq_prod_backwards,bad_send_wqes,ud_bad_ah,bad_recv_wqes,srq_garbage,cq_cons_wild,cq_resize,reset_wild,err_doorbells,flush_race,cq_resize_race,scribble

# kmsg_mark NAME: a line in the kernel log to look from.
kmsg_mark() { echo "sroce-misuse: mark $1" >/dev/kmsg; }

# kmsg_quiet NAME: since the mark, the kernel logged nothing at warning
# level or above (sroce's ratelimited debug lines are level 7).
kmsg_quiet() {
	local loud
	loud=$(kmsg_loud_since "sroce-misuse: mark $1\$")
	[ -z "$loud" ] || fail "the kernel logged at warning level or above: $(head -n 3 <<<"$loud")"
}

# objects_back BASELINE: sroce's object counts return to BASELINE (what
# "sroce_objects" printed before) within 30 s.
objects_same() { [ "$(sroce_objects)" = "$1" ]; }
objects_back() {
	local deadline=$((SECONDS + 30))
	until objects_same "$1"; do
		[ $SECONDS -lt $deadline ] || fail "objects not back: before: $(echo $1) now: $(sroce_objects | tr '\n' ' ')"
		sleep 0.5
	done
}

# misuse NAME CASES [ARGS...]: run sroce_misuse's CASES; every one must pass.
misuse() {
	local name=$1 cases=$2 rc=0 n want
	shift 2
	[ -x "$MISUSE" ] || fail "$MISUSE not built (make -C tests/progs)"
	want=$(tr ',' '\n' <<<"$cases" | grep -c .)
	printf '+ %s\n' "$MISUSE -d $RDMA_DEV1 -g $RDMA_GID1 -t $cases $*" >&2
	timeout -k 5 150 "$MISUSE" -d "$RDMA_DEV1" -g "$RDMA_GID1" -t "$cases" "$@" \
		>"/tmp/$name.out" 2>&1 || rc=$?
	cat "/tmp/$name.out"
	[ $rc != 124 ] || fail "$name: sroce_misuse timed out"
	! grep -q ': FAIL' "/tmp/$name.out" || fail "$name: $(grep -m1 ': FAIL' "/tmp/$name.out")"
	[ $rc = 0 ] || fail "$name: sroce_misuse exited with status $rc: $(tail -n 1 "/tmp/$name.out")"
	n=$(grep -cE '^[a-z0-9_]+: pass$' "/tmp/$name.out" || true)
	[ "$n" = "$want" ] || fail "$name: $n cases passed, expected $want"
}

# good_loop: well-behaved traffic in rounds until /tmp/good.stop appears:
# each round an ibv_rc_pingpong pair (200 exchanges of 4 KiB, with -c,
# which checks one byte per page) on a port of its own.  A failed round
# leaves /tmp/good.fail with both ends' output; /tmp/good.rounds counts the
# rounds that passed.
good_loop() {
	local i=0 port spid
	echo 0 >/tmp/good.rounds
	while [ ! -e /tmp/good.stop ]; do
		port=$((18600 + i % 50))
		i=$((i + 1))
		ibv_rc_pingpong -d "$RDMA_DEV1" -g "$RDMA_GID1" -p "$port" -c -n 200 -s 4096 \
			>/tmp/good.srv 2>&1 &
		spid=$!
		if ! wait_for 60 _tcp_listening "$port" ||
			! timeout -k 5 300 ibv_rc_pingpong -d "$RDMA_DEV2" -g "$RDMA_GID2" -p "$port" -c \
				-n 200 -s 4096 "$RDMA_IP1" >/tmp/good.cli 2>&1 ||
			! wait "$spid" || ! grep -q '^200 iters in' /tmp/good.cli ||
			grep -qi 'invalid data' /tmp/good.srv /tmp/good.cli; then
			{ echo "round $i failed"; cat /tmp/good.srv /tmp/good.cli; } >/tmp/good.fail
			kill "$spid" 2>/dev/null
			return 1
		fi
		echo "$i" >/tmp/good.rounds
	done
}

# Every case of sroce_misuse (one test, to stay within the group's time
# budget) beside a well-behaved process: ibv_rc_pingpong rounds
# (good_loop) run for as long as sroce_misuse goes through every case, and
# every round must pass; then sroce_rc_test's data cases, which check every
# byte, on the same device.
test_misuse_beside_good_traffic() {
	local before loop
	rdma_topo loopback
	before=$(sroce_objects)
	kmsg_mark beside
	rm -f /tmp/good.stop /tmp/good.fail
	good_loop &
	loop=$!
	RDMA_BG_PIDS+=("$loop")
	wait_for 120 grep -q '^[1-9]' /tmp/good.rounds
	misuse all "$MISUSE_CMD_CASES,$MISUSE_RING_CASES" -s 8
	touch /tmp/good.stop
	wait "$loop" || { cat /tmp/good.fail 2>/dev/null; fail "well-behaved traffic failed beside the misuse"; }
	echo "well-behaved rounds passed beside the misuse: $(cat /tmp/good.rounds)"
	[ "$(cat /tmp/good.rounds)" -ge 2 ] || fail "fewer than 2 well-behaved rounds ran"
	rc_cases -t send,rdma_write,rdma_read -m 1024
	objects_back "$before"
	kmsg_quiet beside
}

# tracefs: where it is mounted, mounting it if need be.
tracefs() {
	local t
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -e "$t/kprobe_events" ] && { echo "$t"; return 0; }
	done
	mount -t tracefs nodev /sys/kernel/tracing && echo /sys/kernel/tracing
}

# kprobe_remove TRACEFS: no test kprobe left behind.
kprobe_remove() {
	echo 0 >"$1/events/sroce_test/fetch/enable" 2>/dev/null || true
	echo '-:sroce_test/fetch' >>"$1/kprobe_events" 2>/dev/null || true
}

# The send queue's lock disables interrupts: it is held for a batch of
# work requests at a time (64, SROCE_LOCK_BATCH), never for a whole ring.
# A kprobe counts the calls of sroce_sq_fetch(), one per hold, while one
# doorbell of a QP in ERR fetches and flushes 16384 WQEs with their 16384
# completions; before issue 19 that was one call, one hold.
test_send_queue_lock_holds() {
	local tr n
	rdma_topo loopback
	tr=$(tracefs) || fail "no tracefs"
	kprobe_remove "$tr"
	trap 'kprobe_remove "$tr"' EXIT
	echo 'p:sroce_test/fetch sroce:sroce_sq_fetch' >>"$tr/kprobe_events" ||
		fail "cannot place a kprobe on sroce_sq_fetch"
	: >"$tr/trace"
	echo 1 >"$tr/events/sroce_test/fetch/enable"
	misuse lock_holds sq_full_flush
	echo 0 >"$tr/events/sroce_test/fetch/enable"
	n=$(grep -c ' fetch: ' "$tr/trace" || true)
	echo "sroce_sq_fetch ran $n times for 16384 send WQEs"
	[ "$n" -ge 256 ] ||
		fail "16384 send WQEs were taken in $n holds of the send queue's lock, expected 256 or more (64 each)"
}

# SIGKILL in the middle of the scribble: the kernel tears the context
# down under a scribbled ring with work in flight; a good pingpong works
# afterwards, the objects come back and the module unloads.
test_kill9() {
	local before pid i
	rdma_topo loopback
	before=$(sroce_objects)
	kmsg_mark kill9
	"$MISUSE" -d "$RDMA_DEV1" -g "$RDMA_GID1" -K >/tmp/kill9.out 2>&1 &
	pid=$!
	RDMA_BG_PIDS+=("$pid")
	for i in $(seq 300); do
		has scribbling </tmp/kill9.out && break
		kill -0 "$pid" 2>/dev/null || { cat /tmp/kill9.out; fail "sroce_misuse -K exited early"; }
		sleep 0.2
	done
	has scribbling </tmp/kill9.out || fail "sroce_misuse -K never started scribbling"
	sleep 3
	kill -0 "$pid" 2>/dev/null || { cat /tmp/kill9.out; fail "sroce_misuse -K died by itself"; }
	run kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	cat /tmp/kill9.out
	objects_back "$before"
	pingpong rc_pingpong ibv_rc_pingpong
	objects_back "$before"
	kmsg_quiet kill9
	run rdma link delete sroce0
	sroce_wait_no_objects 30
	run rmmod sroce
	! sroce_loaded || fail "sroce still loaded after rmmod"
}

t_main
