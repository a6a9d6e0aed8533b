#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Runs inside the test guest (from the xfer share's job.sh): every group
# named on the command line, in order.  Each finished group leaves
# $SROCE_RESULTS/done-<group>; the host uses those to tell a group that
# finished from one during which the guest died.
set -u
: "${SROCE_ROOT:?}" "${SROCE_RESULTS:?}"
. "$SROCE_ROOT/tests/lib.sh"

for g in "$@"; do
	echo "$g" >"$SROCE_RESULTS/current-group"
	bash "$SROCE_ROOT/tests/groups/$g.sh"
	# Each test checked the log from its own start; what came before the
	# group's first test is checked here.
	bad=$(dmesg | sed '/sroce-test: begin /,$d' | grep -E "$SROCE_BAD_KMSG" | head -n 3)
	if [ -n "$bad" ]; then
		SROCE_GROUP=$g _t_record FAIL kernel-log 0 "$(echo "$bad" | head -n 1)"
	fi
	dmesg >>"$SROCE_RESULTS/dmesg-$g.log"
	dmesg -c >/dev/null
	touch "$SROCE_RESULTS/done-$g"
done
rm -f "$SROCE_RESULTS/current-group"
