#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs inside the test guest (from the xfer share's job.sh): every group
# named on the command line, in order.  Each finished group leaves
# $SROCE_RESULTS/done-<group>; the host uses those to tell a group that
# finished from one during which the guest died.  A group script that
# exits non-zero fails <group>/group-script, and every test the group
# declares (tests/declared.sh) that recorded no result fails.  The exit
# status is 0 only if this script ran to its end.
set -u
: "${SROCE_ROOT:?}" "${SROCE_RESULTS:?}"
. "$SROCE_ROOT/tests/lib.sh"

# The boot's own log, kept apart from the groups': a bad line there is the
# kernel's or the guest setup's, reported once as boot/kernel-log.  The
# debug kernel announces its leak detector ("kmemleak: Kernel memory leak
# detector initialized"), which is not a finding.
dmesg >"$SROCE_RESULTS/dmesg-boot.log"
dmesg -c >/dev/null
bad=$(grep -vE 'kmemleak: (Kernel memory leak detector|Automatic memory scanning)' \
	"$SROCE_RESULTS/dmesg-boot.log" | kmsg_drop_known | grep -E "$SROCE_BAD_KMSG" | head -n 3)
if [ -n "$bad" ]; then
	SROCE_GROUP=boot _t_record FAIL kernel-log 0 "$(echo "$bad" | head -n 1)"
fi

# kmemleak (the debug kernel of make check-debug): what boot left is not
# ours; after each group, whatever became unreferenced during it is a leak.
# Its automatic scan every 10 minutes is turned off, so that none runs in
# the middle of a test: on a KASAN kernel under emulation a scan is
# suspected (not shown) of stalling the guest long enough to break timed
# tests.  The scans run between groups instead, timed in the group's log.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w "$kmemleak" ]; then
	echo scan=off >"$kmemleak"
	echo clear >"$kmemleak"
fi
kmemleak_check() { # group
	local n start=$SECONDS
	[ -w "$kmemleak" ] || return 0
	# Two scans: an object is reported only when two scans agree.
	echo scan >"$kmemleak"
	echo scan >"$kmemleak"
	echo "kmemleak: two scans after group $1 took $((SECONDS - start)) s" \
		>>"$SROCE_RESULTS/$1.log"
	cat "$kmemleak" >"$SROCE_RESULTS/kmemleak-$1.log"
	# Known reports (tests/lib.sh) are named in the group's log and kept.
	kmemleak_drop_known <"$SROCE_RESULTS/kmemleak-$1.log" \
		>"$SROCE_RESULTS/kmemleak-$1.unknown" 2>>"$SROCE_RESULTS/$1.log"
	n=$(grep -c '^unreferenced object' "$SROCE_RESULTS/kmemleak-$1.unknown")
	if [ "$n" -gt 0 ]; then
		SROCE_GROUP=$1 _t_record FAIL kmemleak 0 \
			"$n unreferenced objects (kmemleak-$1.log): $(grep -m1 -A12 'backtrace' "$SROCE_RESULTS/kmemleak-$1.unknown" | grep -m1 -E 'sroce|ib_|rdma|nvme|rds|srp|svc' | sed 's/^ *//')"
	elif ! grep -q '^unreferenced object' "$SROCE_RESULTS/kmemleak-$1.log"; then
		rm -f "$SROCE_RESULTS/kmemleak-$1.log"
	fi
	rm -f "$SROCE_RESULTS/kmemleak-$1.unknown"
	echo clear >"$kmemleak"
}

for g in "$@"; do
	echo "$g" >"$SROCE_RESULTS/current-group"
	rc=0
	bash "$SROCE_ROOT/tests/groups/$g.sh" || rc=$?
	if [ "$rc" != 0 ]; then
		SROCE_GROUP=$g _t_record FAIL group-script 0 "the group script exited with status $rc"
	fi
	_t_account "$g" "the group script ended without running it"
	kmemleak_check "$g"
	# Each test checked the log from its own start; what came before the
	# group's first test is checked here.
	bad=$(dmesg | sed '/sroce-test: begin /,$d' | kmsg_drop_known | grep -E "$SROCE_BAD_KMSG" | head -n 3)
	if [ -n "$bad" ]; then
		SROCE_GROUP=$g _t_record FAIL kernel-log 0 "$(echo "$bad" | head -n 1)"
	fi
	dmesg >>"$SROCE_RESULTS/dmesg-$g.log"
	dmesg -c >/dev/null
	touch "$SROCE_RESULTS/done-$g"
done
rm -f "$SROCE_RESULTS/current-group"
exit 0
