#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=12 cost=95
#
# "make run" (scripts/demo.sh) boots a guest and runs scripts/demo-guest.sh
# in it; these tests run that same guest script and hold it to what the
# demo promises:
#
#   make_run       every step passes and the summary lists them, in order,
#                  with what each measured or checked; the script exits 0
#                  and leaves nothing behind (t_reset checks)
#   names_failure  with the sroce provider out of libibverbs' reach
#                  (SROCE_PROVIDER, which tests/lib.sh gives it), the
#                  demo stops at the first step that needs it
#                  ("two_hosts": ibv_devinfo), exits non-zero and its
#                  summary names that step
#
# Cost: about 3 minutes in an emulated guest (make_run's steps: two
# topologies, NVMe-oF with ext4 on a 256 MiB disk, rdma_rxe), 20 s for
# names_failure.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-nvme.sh"

DEMO=$SROCE_ROOT/scripts/demo-guest.sh
# The demo's steps, in the order the issue that asked for it lists them.
STEPS="load two_hosts pingpong verified write_bw read_lat rping resources statistics nvme rxe teardown"

[ "$SROCE_TEST_TIMEOUT" -ge 900 ] || SROCE_TEST_TIMEOUT=900

# What a demo that failed midway may leave, before the device goes.
t_group_reset() { nvme_reset; }

# demo_run LOG [env assignments...]: the guest script, its output in LOG
# (shown), its exit status in DEMO_RC.
demo_run() {
	local out=$1
	shift
	DEMO_RC=0
	env "$@" bash "$DEMO" >"$out" 2>&1 || DEMO_RC=$?
	cat "$out"
}

test_make_run() {
	local out=/tmp/demo.out s got
	demo_run "$out"
	[ "$DEMO_RC" = 0 ] || fail "the demo exited with status $DEMO_RC"
	got=$(sed -n '/^### Summary/,$p' "$out" | awk '$1 == "PASS" { printf "%s ", $2 }')
	[ "$got" = "$STEPS " ] || fail "the summary's steps: '$got', expected '$STEPS '"
	grep -q '^FAIL' "$out" && fail "the summary has a FAIL line"
	grep -qx "demo: all 12 steps passed in [0-9]* s" "$out" || fail "no closing line"
	# What the steps claim, from their own summary lines.
	for s in 'pingpong .*Mbit/sec' 'verified .*8 of 8 sroce_rc_test cases' \
		'write_bw .*64 KiB RDMA WRITE: [0-9.]+ MB/s' 'read_lat .*2-byte RDMA READ: [0-9.]+ us' \
		'rping .*100 of 100 pings verified' 'resources .*[2-9] RC QPs seen connected' \
		'statistics .*sroce1: [0-9]+ packets sent' 'nvme .*sha256 equal' \
		'rxe .*rxe0 <-> sroce0: [0-9.]+ Mbit/sec'; do
		grep -Eq "^PASS +$s" "$out" || fail "no summary line matching '$s'"
	done
	# The checksums the NVMe step compared.
	[ "$(grep -cE '^(written|read   ) [0-9a-f]{64}$' "$out")" = 2 ] || fail "the NVMe step showed no checksums"
	[ "$(awk '/^written /{ print $2 }' "$out")" = "$(awk '/^read    /{ print $2 }' "$out")" ] ||
		fail "the checksums differ"
}

test_names_failure() {
	local out=/tmp/demo-fail.out
	demo_run "$out" SROCE_PROVIDER=/nonexistent/libsroce
	[ "$DEMO_RC" != 0 ] || fail "the demo passed without its provider"
	grep -Eq '^FAIL +two_hosts ' "$out" || fail "the summary does not name the step that failed"
	grep -q '^demo: FAILED at step two_hosts' "$out" || fail "no closing line naming the step"
	[ "$(sed -n '/^### Summary/,$p' "$out" | awk '$1 == "PASS" { printf "%s ", $2 }')" = "load " ] ||
		fail "the summary should list only load as passed"
}

t_main
