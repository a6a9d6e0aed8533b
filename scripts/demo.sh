#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make run": boot a guest and run the demo in it (scripts/demo-guest.sh):
# two hosts with a sroce device each move data, checked, by every step,
# and a summary closes it.  Exits non-zero, naming the step, if one fails.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
xfer=$root/build/demo
rm -rf "$xfer"
mkdir -p "$xfer"
cat >"$xfer/job.sh" <<EOF
export SROCE_ROOT=$root SROCE_RESULTS=/run/xfer
exec bash $root/scripts/demo-guest.sh
EOF
echo "booting a guest (software emulation; this takes a little while)..."
: >"$xfer/job.log"
tail -n +1 -F "$xfer/job.log" 2>/dev/null &
tailer=$!
rc=0
"$root/scripts/vm/run-guest.sh" -x "$xfer" -t 900 || rc=$?
sleep 1
kill "$tailer" 2>/dev/null || true
if [ "$rc" != 0 ]; then
	echo "demo failed (status $rc): the summary above names the step;" \
		"full output in $xfer/job.log, guest console in $xfer/console.log" >&2
	exit "$rc"
fi
echo "demo finished; full output in $xfer/job.log"
