#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Boot one throw-away QEMU guest (Debian's own kernel, software emulation,
# the host root read-only over 9p) and run XFER/job.sh inside it.
#
# usage: run-guest.sh -x XFER_DIR [-t TIMEOUT_S] [-m MEM_MB] [-c CPUS]
#                     [-n NVDIMM_MB] [-a "EXTRA KERNEL ARGS"]
#                     [-q "EXTRA QEMU ARGS"]
#
# -n gives the guest an emulated NVDIMM of that size beside its memory:
# persistent memory as the ACPI NFIT describes it, label-less (one raw
# namespace), backed by a sparse file XFER_DIR/nvdimm.img made anew.
#
# XFER_DIR must hold job.sh; the guest writes job.log, job.rc and whatever
# the job leaves there.  The console goes to XFER_DIR/console.log.
# Exit status: the job's own status; 124 if the guest timed out; 125 if it
# stopped without a verdict (panic, oops with panic_on_warn, boot failure).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"

xfer= timeout_s=1200 mem=3072 cpus=2 nvdimm=0 append= qextra=
while getopts "x:t:m:c:n:a:q:" o; do
	case $o in
	x) xfer=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	n) nvdimm=$OPTARG ;;
	a) append=$OPTARG ;;
	q) qextra=$OPTARG ;;
	*) echo "usage: $0 -x XFER_DIR [-t s] [-m MB] [-c n] [-n MB] [-a args] [-q args]" >&2; exit 2 ;;
	esac
done
[ -n "$xfer" ] && [ -f "$xfer/job.sh" ] || { echo "run-guest: XFER_DIR/job.sh required" >&2; exit 2; }
xfer=$(cd "$xfer" && pwd)
rm -f "$xfer/job.rc" "$xfer/job.log" "$xfer/booted" "$xfer/console.log" "$xfer/.watch" "$xfer/hung"

# The guest's root: the host's, or another Debian root (SROCE_GUEST_ROOT,
# e.g. build/trixie-root or the packaging test's), whose kernel modules
# the initramfs takes; it needs an empty directory where the source tree
# is (scripts/vm/mkinitrd.sh).
guest_root=${SROCE_GUEST_ROOT:-/}
if [ "$guest_root" != / ]; then
	: "${SROCE_MODROOT:=$guest_root}"
	# Its own modules are where the guest looks: no bind mount.
	modmount=
else
	modmount=${SROCE_MODROOT:-}
fi
SROCE_MODROOT=${SROCE_MODROOT:-} "$here/mkinitrd.sh" "$SROCE_KVER" "$SROCE_INITRD.$$"
mv "$SROCE_INITRD.$$" "$SROCE_INITRD"

# The source tree, shared once more on its own: the guest mounts tmpfs over
# /tmp and /run, which would hide a checkout living there.
src=$(cd "$here/../.." && pwd)
case $src in
*[[:space:]]*) echo "run-guest: the source path must not contain spaces: $src" >&2; exit 2 ;;
esac

# panic_on_warn/oops=panic: any WARN or oops ends the guest, so it cannot be
# missed; panic=-1 with -no-reboot turns the panic into a QEMU exit.
# no_timer_check: on a loaded host the emulated IO-APIC timer check can
# fail and panic the boot ("IO-APIC + timer doesn't work!").
# log_buf_len: sroce's debug lines (dyndbg, tests/lib.sh) from a long ULP
# test must not push the test's begin marker out of the kernel log, where
# the harness looks for bad lines after it.
# mitigations=off: the CPU model has no eIBRS, so the kernel turns every
# indirect call and return into a retpoline thunk, which QEMU emulates
# slowly: one-byte reads from /dev/zero ran twice as fast without (200,000
# of them: 1.0-1.4 s against 2.4-3.2 s, 2026-11-29).  The guest runs only
# the tests.
cmdline="console=ttyS0 quiet panic=-1 panic_on_warn=1 oops=panic no_timer_check log_buf_len=32M"
cmdline+=" mitigations=off"
cmdline+=" sroce.src=$src $append"
# More of it from the environment (make check-debug: no5lvl).
[ -z "${SROCE_GUEST_APPEND:-}" ] || cmdline+=" $SROCE_GUEST_APPEND"
# A kernel whose modules are not the host's (make check-debug): stage 2
# mounts them over /lib/modules.
[ -z "$modmount" ] || cmdline+=" sroce.modules=$modmount/lib/modules"

# The CPU: QEMU's "max" without ERMS, AVX and AVX2.  With ERMS the kernel
# copies and clears with "rep movsb", which QEMU's emulation runs a byte at
# a time: reading 3 GB from /dev/zero took 8.7 s instead of 1.6, and a pipe
# through md5sum 2.5 times as long.  AVX2 makes glibc's string functions
# slower to emulate than their SSE2 forms.  SROCE_GUEST_CPU overrides it.
cpu=${SROCE_GUEST_CPU:-max,erms=off,avx=off,avx2=off}

# The guest's monitor, for watch_hang's NMI.
mon=$(mktemp -u /tmp/sroce-mon.XXXXXX)

# watch_hang: the host's watch over the tests' own watchdog (_t_watch in
# tests/lib.sh).  While a test runs, XFER/.watch holds how many seconds
# its watchdog gives it and its name; the file's time is the host's.  A
# file SROCE_HANG_MARGIN (120) seconds older than that means the guest no
# longer runs user space: an NMI then panics it (unknown_nmi_panic, set by
# guest-stage2.sh), and its console gets the stack of where each CPU was.
# XFER/hung says so for scripts/run-tests.sh.
watch_hang() {
	local secs what m now margin=${SROCE_HANG_MARGIN:-120}
	while sleep 10; do
		read -r secs what 2>/dev/null <"$xfer/.watch" || continue
		m=$(stat -c %Y "$xfer/.watch" 2>/dev/null) || continue
		now=$(date +%s)
		[[ $secs =~ ^[0-9]+$ ]] && [ "$now" -gt $((m + secs + margin)) ] || continue
		echo "$what did not end in $((now - m))s and the guest's watchdog did not act: the host sent the guest an NMI" >"$xfer/hung"
		echo "run-guest: $(cat "$xfer/hung")" >&2
		monitor nmi
		# A guest the NMI did not stop is stopped a minute later.
		sleep 60
		echo "run-guest: the guest outlived the NMI: stopping it" >&2
		monitor quit
		return 0
	done
}

# monitor COMMAND: COMMAND to the guest's monitor.
monitor() {
	python3 - "$mon" "$1" <<'EOF' || echo "run-guest: the guest's monitor did not take '$1'" >&2
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
time.sleep(1)
EOF
}

# The NVDIMM (-n): in a memory hotplug slot, its memory a shared mapping
# of the file, as QEMU's docs/nvdimm.txt sets one up.
memarg=$mem
if [ "$nvdimm" != 0 ]; then
	rm -f "$xfer/nvdimm.img"
	truncate -s "${nvdimm}M" "$xfer/nvdimm.img"
	memarg="$mem,slots=1,maxmem=$((mem + nvdimm))M"
	qextra+=" -machine pc,nvdimm=on"
	qextra+=" -object memory-backend-file,id=nv0,share=on,mem-path=$xfer/nvdimm.img,size=${nvdimm}M"
	qextra+=" -device nvdimm,id=nvdimm0,memdev=nv0"
fi

rc=0
watch_hang &
watcher=$!
# shellcheck disable=SC2086 # qextra is a list of words on purpose
timeout --kill-after=10 "$timeout_s" \
	qemu-system-x86_64 -accel tcg -cpu "$cpu" -smp "$cpus" -m "$memarg" \
	-nodefaults -display none -no-reboot \
	-monitor "unix:$mon,server=on,wait=off" \
	-serial "file:$xfer/console.log" \
	-kernel "$SROCE_VMLINUZ" -initrd "$SROCE_INITRD" -append "$cmdline" \
	-fsdev "local,id=hostroot,path=$guest_root,security_model=none,readonly=on,multidevs=remap" \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev "local,id=xfer,path=$xfer,security_model=none" \
	-device virtio-9p-pci,fsdev=xfer,mount_tag=xfer \
	-fsdev "local,id=src,path=$src,security_model=none,readonly=on" \
	-device virtio-9p-pci,fsdev=src,mount_tag=src \
	$qextra || rc=$?
[ "$nvdimm" = 0 ] || rm -f "$xfer/nvdimm.img"
pkill -P "$watcher" 2>/dev/null || true
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
rm -f "$mon"

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "run-guest: guest timed out after ${timeout_s}s" >&2
	exit 124
fi
if [ ! -f "$xfer/job.rc" ]; then
	echo "run-guest: guest stopped without a verdict (qemu status $rc)" >&2
	exit 125
fi
exit "$(cat "$xfer/job.rc")"
