#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Where sroce's requester spends its time, for one perftest workload on a
# loopback sroce0 (IB MTU 4096): the ftrace function_graph tracer on the
# requester's entry points (the user doorbell and its work item), a few
# seconds into the run, summed per function.  Runs in a guest:
#
#   mkdir -p /tmp/prof && cat >/tmp/prof/job.sh <<EOF
#   bash $PWD/tests/bench/profile.sh ib_write_bw -s 65536 -D 10
#   EOF
#   scripts/vm/run-guest.sh -x /tmp/prof -t 900; less /tmp/prof/job.log
#
# Prints one line per function: total microseconds, calls, average, name
# (a caller's time includes its callees'; each traced call adds about a
# microsecond under emulation, so short functions look longer than they
# are).  The raw trace is left in /run/xfer/profile.trace.
#
# Sampling profilers mislead here: QEMU's TCG has no NMI, so perf's
# cpu-clock samples land where interrupts are enabled again
# (_raw_spin_unlock_irqrestore), not where the time went.
#
# Environment: PROFILE_DEPTH (graph depth, default 5), PROFILE_SECS (trace
# window, default 2), PROFILE_FUNCS (graph roots, default the requester's),
# PROFILE_KO (the module to profile, default the build's sroce.ko).

export SROCE_ROOT=${SROCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export SROCE_RESULTS=/tmp/profile-results
. "$SROCE_ROOT/tests/lib.sh"
. "$SROCE_ROOT/tests/lib-rdma.sh"
set -eu

[ $# -ge 1 ] || { echo "usage: $0 PERFTEST_TOOL ARGS..." >&2; exit 2; }
T=/sys/kernel/tracing
ADDR=10.5.0.1
OUT=/run/xfer/profile.trace
DEPTH=${PROFILE_DEPTH:-5}
SECS=${PROFILE_SECS:-2}
FUNCS=${PROFILE_FUNCS:-"sroce_req_kick sroce_req_work"}

run ip link add st-d0 mtu 9000 type dummy
run ip addr add "$ADDR/24" dev st-d0
run ip link set st-d0 up
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
run insmod "${PROFILE_KO:-$SROCE_KO}"
run rdma link add sroce0 type sroce netdev st-d0
wait_for 10 gid_present sroce0 "::ffff:$ADDR"
GID=$(gid_index sroce0 "$ADDR")

echo 0 >$T/tracing_on
echo 8192 >$T/buffer_size_kb
echo function_graph >$T/current_tracer
echo 1 >$T/options/funcgraph-tail
echo 0 >$T/options/funcgraph-irqs
echo "$DEPTH" >$T/max_graph_depth
: >$T/set_graph_function
for f in $FUNCS; do
	echo "$f" >>$T/set_graph_function
done

timeout 300 "$@" -d sroce0 -x "$GID" -F >/tmp/profile.srv 2>&1 &
srv=$!
for _ in $(seq 150); do
	ss -Hltn 'sport = :18515' | has . && break
	sleep 0.2
done
timeout 300 "$@" -d sroce0 -x "$GID" -F "$ADDR" >/tmp/profile.cli 2>&1 &
cli=$!
sleep 5
echo >$T/trace
echo 1 >$T/tracing_on
sleep "$SECS"
echo 0 >$T/tracing_on
cp $T/trace "$OUT"
wait $cli || echo "the client failed: $(tail -n 1 /tmp/profile.cli)"
wait $srv || true
echo nop >$T/current_tracer
tail -n 3 /tmp/profile.cli

# "  1.234 us  |  func();" and "  5.678 us  |  } /* func */" lines.
awk -F'|' '
match($1, /[0-9]+\.[0-9]+ us/) {
	v = substr($1, RSTART, RLENGTH - 3) + 0
	f = $2
	if (match(f, /\/\* [^ ]+/))
		name = substr(f, RSTART + 3, RLENGTH - 3)
	else {
		name = f
		gsub(/[ ();]/, "", name)
	}
	sum[name] += v
	n[name]++
}
END {
	for (k in sum)
		printf "%10.0f us %8d calls %9.2f us  %s\n", sum[k], n[k], sum[k] / n[k], k
}' "$OUT" | sort -rn | head -n 40
rdma link delete sroce0
ip link del st-d0
rmmod sroce
