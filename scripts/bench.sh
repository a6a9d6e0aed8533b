#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make bench": sroce against Linux's rdma_rxe, side by side in one guest.
# Builds everything, boots a QEMU guest that runs tests/bench/guest.sh
# (perftest, NVMe-oF with fio, memcpy; the devices alternating, one at a
# time), then renders what it measured:
#
#   the table               on the terminal
#   build/bench/bench.json  every sample, the medians, ratios and targets
#   build/bench/            the guest's raw samples and tool logs (xfer/bench)
#   Documentation/performance-results.rst and
#   Documentation/bench-bandwidth.png
#                           the generated part of Documentation/performance.rst
#                           (BENCH_DOC=0: left alone, written to build/bench/)
#
# Only ratios within one run mean anything: the guest is emulated (TCG) and
# shares the machine with others.  Nothing here asserts a speed; the exit
# status is non-zero only if the guest broke or a headline workload has no
# result for a device.
#
# Environment: BENCH_RUNS (3), BENCH_SECS (3), BENCH_LAT_N (1000),
# BENCH_FIO_SECS (10), BENCH_SWEEP, BENCH_SCALE, BENCH_KINDS, BENCH_BASE_KO,
# BENCH_SKIP
# (see tests/bench/guest.sh); BENCH_GUEST_TIMEOUT (seconds, default 7200);
# BENCH_DOC (1).  Then the same devices over a wire between two guests
# (tests/bench/pair.sh; BENCH_SKIP="wire" leaves it out).  With two
# BENCH_KINDS the report compares the first with the second (a change:
# BENCH_KINDS="sroce sroce-base"), and leaves Documentation/ alone unless
# they are sroce and rxe.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench
xfer=$out/xfer
timeout_s=${BENCH_GUEST_TIMEOUT:-7200}

cd "$root"
mkdir -p build
scripts/deps.sh
make all >"$out.build.log" 2>&1 || { tail -n 30 "$out.build.log"; echo "bench: build failed" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$xfer"
mv "$out.build.log" "$out/build.log"
{
	echo "export SROCE_ROOT=$root BENCH_OUT=/run/xfer/bench"
	for v in BENCH_RUNS BENCH_SECS BENCH_LAT_N BENCH_FIO_SECS BENCH_SWEEP BENCH_SCALE \
		BENCH_KINDS BENCH_BASE_KO BENCH_SKIP; do
		[ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
	done
	echo "bash $root/tests/bench/guest.sh"
} >"$xfer/job.sh"

commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: sroce $commit; guest log: $xfer/job.log (timeout ${timeout_s}s)"
rc=0
scripts/vm/run-guest.sh -x "$xfer" -t "$timeout_s" || rc=$?
if [ $rc != 0 ]; then
	echo "bench: the guest ended with status $rc; the last of its log:" >&2
	tail -n 20 "$xfer/job.log" >&2 || true
fi
[ -s "$xfer/bench/samples.tsv" ] || { echo "bench: no samples" >&2; exit 1; }

# The wire between two guests (tests/bench/pair.sh); its samples join the
# others.
if [[ " ${BENCH_SKIP:-} " != *" wire "* ]]; then
	pair=$out/pair
	mkdir -p "$pair"
	{
		echo "export SROCE_ROOT=$root BENCH_OUT=/run/xfer/bench"
		for v in BENCH_RUNS BENCH_SECS BENCH_KINDS; do
			[ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
		done
		echo "bash $root/tests/bench/pair.sh"
	} >"$pair/job.sh"
	echo "bench: the two-guest wire; guest logs: $pair/{a,b}/job.log"
	if scripts/vm/run-pair.sh -x "$pair" -t "$timeout_s"; then
		cat "$pair/b/bench/samples.tsv" >>"$xfer/bench/samples.tsv"
	else
		echo "bench: the two-guest run failed; the last of guest b's log:" >&2
		tail -n 20 "$pair/b/job.log" >&2 || true
		rc=1
	fi
fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

doc=${BENCH_DOC:-1}
rst=$out/performance-results.rst png=$out/bench-bandwidth.png
report_rc=0
read -ra kinds <<<"${BENCH_KINDS:-sroce rxe}"
[ ${#kinds[@]} = 2 ] || kinds=(sroce rxe)
# Documentation/ holds sroce against rxe, never a comparison of two builds.
[ "${kinds[*]}" = "sroce rxe" ] || doc=0
scripts/bench-report.py "$xfer/bench" --devices "${kinds[@]}" \
	--json "$out/bench.json" --plot "$png" --rst "$rst" \
	--meta "sroce_commit=$commit" --meta "host_load_start=$load_start" \
	--meta "host_load_end=$load_end" --meta "host_cpus=$(nproc)" \
	--meta "host_kernel=$(uname -r)" || report_rc=$?
if [ "$doc" = 1 ]; then
	cp "$rst" "$png" Documentation/
	echo "bench: report in Documentation/performance-results.rst and bench-bandwidth.png"
fi
echo "bench: JSON in $out/bench.json"
[ $rc = 0 ] && exit $report_rc
exit $rc
