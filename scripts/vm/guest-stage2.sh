#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Stage 2 of a test guest, run as PID 1 from the host's root filesystem
# (read-only over 9p); bash keeps this file open, so mounting over its
# directory below does not disturb it.  Builds a writable scratch environment, mounts the
# writable "xfer" share that carries the job in and the results out, runs
# /xfer/job.sh and powers off.  The host reads the verdict from /xfer, never
# from the console.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The C locale, which glibc has built in.  Under C.UTF-8 every program
# that calls setlocale() opens the locale's dozen files from the 9p root,
# and each open is a round trip to QEMU: 169 requests to start "bash -c :",
# 57 with LANG=C; under emulation, with another guest beside it, a round
# trip takes about a millisecond.  (Python turns C into C.UTF-8 for itself,
# PEP 538.)
export HOME=/tmp LANG=C TERM=dumb

# Power off, and wait for it with the shell's own read on a FIFO in
# /dev: the power-off takes the 9p root away first, and an exec of sleep
# from it would fail, end PID 1 and panic the guest.
poweroff_now() {
	sync
	mkfifo /dev/.poweroff 2>/dev/null
	echo o >/proc/sysrq-trigger
	read -r -t 30 _ <>/dev/.poweroff
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts
for d in /tmp /run /var/tmp /dev/shm; do
	mount -t tmpfs -o mode=1777 tmpfs "$d"
done
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /run/xfer
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 xfer /run/xfer; then
	echo "sroce-guest: cannot mount the xfer share" >/dev/console
	poweroff_now
fi
# The source tree where the host has it, even under a tmpfs mounted above;
# cached like the host root (the initramfs's /init says why), as the host
# does not rebuild it under a running guest.
src=$(sed -n 's/.*sroce\.src=\([^ ]*\).*/\1/p' /proc/cmdline)
cache=$(sed -n 's/.*sroce\.cache=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p "$src" 2>/dev/null
# A root other than the host's (SROCE_GUEST_ROOT) got it from the initramfs
# already, to find this script: one share mounts once.
if ! mountpoint -q "$src" &&
	! mount -t 9p -o "trans=virtio,version=9p2000.L,ro,msize=262144,cache=${cache:-loose}" src "$src"; then
	echo "sroce-guest: cannot mount the source share at $src" >/dev/console
	poweroff_now
fi

# The debug kernel's modules (make check-debug) in place of the host's.
mods=$(sed -n 's/.*sroce\.modules=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$mods" ] && ! mount --bind "$mods" /lib/modules; then
	echo "sroce-guest: cannot mount the kernel's modules from $mods" >/dev/console
	poweroff_now
fi

hostname sroce-guest 2>/dev/null
ip link set lo up
echo 1 >/proc/sys/kernel/sysrq
# The job must not be able to hang the guest silently: the host has its
# own timeout, and a hung task is reported in the log it scans.
echo 60 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
# A kernel that stops scheduling (a CPU spinning with interrupts off, or
# waiting for one) hangs the tests' own watchdog too (_t_watch in
# tests/lib.sh): on CI (2026-12-04) a guest sat so for 30 minutes, to the
# run's deadline, and left nothing in the output.  The kernel's detectors
# turn that into a panic whose stacks the console keeps (every CPU's, for
# a soft lockup; the stalled ones', for an RCU stall; the blocked task's,
# for a hung task), and the host's NMI (scripts/vm/run-guest.sh) does
# where no detector fires.  Each of them is a failure already (the tests
# scan the kernel log for their words, SROCE_BAD_KMSG); panicking costs
# the rest of the group and shows where.  The console of a "quiet" boot
# prints errors only; at level 5 it prints the stacks too (default level,
# 4), not the info and debug lines the tests make.
for k in softlockup_panic softlockup_all_cpu_backtrace panic_on_rcu_stall unknown_nmi_panic hung_task_panic; do
	echo 1 >"/proc/sys/kernel/$k" 2>/dev/null
done
echo 5 >/proc/sys/kernel/printk

cd /run/xfer || poweroff_now
echo booted >/run/xfer/booted
bash /run/xfer/job.sh >/run/xfer/job.log 2>&1 </dev/null
echo $? >/run/xfer/job.rc
poweroff_now
