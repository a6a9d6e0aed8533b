#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Boot two throw-away guests joined by a virtual wire and run the same job
# in both (scripts/vm/run-guest.sh does each guest).
#
# usage: run-pair.sh -x XFER_DIR [-t TIMEOUT_S]
#
#   guest a                                        guest b
#   eth0 (virtio-net, 52:54:00:5e:00:0a) ===== eth0 (52:54:00:5e:00:0b)
#        QEMU -netdev socket: a listens on 127.0.0.1:PORT, b connects
#
# XFER_DIR must hold job.sh.  Each guest gets its own results share,
# XFER_DIR/a and XFER_DIR/b (job.sh is copied into both, and runs with
# SROCE_PAIR_ROLE=a or b in the environment), and both mount XFER_DIR/sync
# as /run/pair: the files there are how the two jobs wait for each other
# (tests/lib-pair.sh).  Console logs: XFER_DIR/{a,b}/console.log.
# Exit status: 0 if both jobs succeeded; else the first non-zero status of
# a, b (124 timeout, 125 no verdict, as run-guest.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

xfer= timeout_s=1800
while getopts "x:t:" o; do
	case $o in
	x) xfer=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	*) echo "usage: $0 -x XFER_DIR [-t s]" >&2; exit 2 ;;
	esac
done
[ -n "$xfer" ] && [ -f "$xfer/job.sh" ] || { echo "run-pair: XFER_DIR/job.sh required" >&2; exit 2; }
xfer=$(cd "$xfer" && pwd)

rm -rf "$xfer/a" "$xfer/b" "$xfer/sync"
mkdir -p "$xfer/a" "$xfer/b" "$xfer/sync"
for r in a b; do
	{
		echo "export SROCE_PAIR_ROLE=$r"
		echo "mkdir -p /run/pair"
		echo "mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 pair /run/pair || exit 125"
		cat "$xfer/job.sh"
	} >"$xfer/$r/job.sh"
done

# A free TCP port on the loopback for the wire.
port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')

share="-fsdev local,id=pair,path=$xfer/sync,security_model=none -device virtio-9p-pci,fsdev=pair,mount_tag=pair"
# One emulated CPU on a loaded host can fail the kernel's early check of
# the timer interrupt ("IO-APIC + timer doesn't work!", a panic at boot):
# the check proves nothing here, skip it.
kargs=no_timer_check
# The guests share the host's two cores: one CPU each.
"$here/run-guest.sh" -x "$xfer/a" -t "$timeout_s" -c 1 -a "$kargs" -q \
	"-netdev socket,id=wire,listen=127.0.0.1:$port -device virtio-net-pci,netdev=wire,mac=52:54:00:5e:00:0a $share" \
	>"$xfer/a/run-guest.log" 2>&1 &
pa=$!
# b connects: wait until a's QEMU listens.
for _ in $(seq 300); do
	ss -Hltn "sport = :$port" | grep -q . && break
	kill -0 "$pa" 2>/dev/null || break
	sleep 0.1
done
"$here/run-guest.sh" -x "$xfer/b" -t "$timeout_s" -c 1 -a "$kargs" -q \
	"-netdev socket,id=wire,connect=127.0.0.1:$port -device virtio-net-pci,netdev=wire,mac=52:54:00:5e:00:0b $share" \
	>"$xfer/b/run-guest.log" 2>&1 &
pb=$!
ra=0 rb=0
wait "$pa" || ra=$?
wait "$pb" || rb=$?
cat "$xfer/a/run-guest.log" "$xfer/b/run-guest.log" >&2
[ "$ra" = 0 ] || exit "$ra"
exit "$rb"
