#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "make check-debug": the guest test groups on a KASAN + lockdep + kmemleak
# kernel built from Debian's linux-source-6.1 (scripts/debug-kernel.sh,
# cached under build/debug-kernel).  sroce.ko and the test kernel modules
# are built against that kernel for the run and rebuilt for the stock one
# afterwards.  Any KASAN/lockdep/DEBUG_OBJECTS report in the guest log
# fails the test it happened in (tests/lib.sh); kmemleak is scanned after
# every group (tests/guest-main.sh).
#
# usage: check-debug.sh [GROUP...]   (default: every guest group)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dk=${SROCE_DEBUG_KERNEL:-$root/build/debug-kernel}
export SROCE_DEBUG_KERNEL=$dk

"$root/scripts/debug-kernel.sh"
release=$("$root/scripts/debug-kernel.sh" -p)
echo "check-debug: kernel $release (built in $(cat "$dk/build-seconds") s)"

make -C "$root" provider progs
make -C "$root" module KDIR="$dk/obj"

export SROCE_KVER=$release
export SROCE_VMLINUZ=$dk/obj/arch/x86/boot/bzImage
export SROCE_MODROOT=$dk/mods
export SROCE_WHERE=guest
# Four-level paging: with QEMU's "-cpu max" the kernel runs on five, and
# once 6.1's KASAN reported a wild access at boot, in an interrupt taken
# during identify_cpu(), on a five-level direct-map address; the guest
# panicked before any test.  Most likely a false report: identify_cpu()
# rebuilds the CPU's feature bits, LA57 among them, which KASAN's idea of
# the address space follows.
export SROCE_GUEST_APPEND=${SROCE_GUEST_APPEND:-no5lvl}
# The fuzzer's million packets did not fit in the fuzz test's 25 minutes
# on the debug kernel (every packet is checked by KASAN at each step of
# the receive path); a tenth of them still covers every class.
export SROCE_FUZZ_PACKETS=${SROCE_FUZZ_PACKETS:-100000}
# Unpaced, the fuzzer outran the debug kernel's receive path: the backlog
# (deepened to 200000 by the test, so that nothing is dropped) held
# minutes of fuzz datagrams ahead of the real traffic, and a 1 MiB SEND
# waited past 120 s for its completion.  250 a second: 100000 take 7 min.
export SROCE_FUZZ_RATE=${SROCE_FUZZ_RATE:-250}
# A 1 MiB SEND at MTU 256 behind the fuzzer's flood took longer than
# sroce_rc_test's 20 s per completion on the debug kernel (fuzz, 2026-11-24).
export SROCE_RC_POLL_MS=${SROCE_RC_POLL_MS:-120000}
# Paced at 250/s, beside a second guest, a 1 MiB RDMA WRITE went seven
# 67 ms ACK timeouts without an ACK and ended in RETRY_EXC_ERR.  18 is
# 1.07 s: eight seconds without progress before a QP gives up.  (Not
# sroce's min_ack_timeout floor, as the pair groups do: peer and
# faults/late_acks measure the device's own timeout.)
export SROCE_RC_ACK_TIMEOUT=${SROCE_RC_ACK_TIMEOUT:-18}
# Lockdep turns itself off for the rest of the boot after its first report,
# and nvme and rds bring known ones, nvmet's and RDS's own (tests/lib.sh,
# kmsg_drop_known): those groups run last, so that they cannot blind
# lockdep to the others.
export SROCE_GROUPS_LAST=${SROCE_GROUPS_LAST:-nvme rds}
# One lane (run-tests.sh): a KASAN and lockdep guest under emulation is
# heavy enough alone, and its timeouts are set for that.
export SROCE_LANES=${SROCE_LANES:-1}
# 20 teardowns of every kind took 41 minutes on the debug kernel; the
# hundred of make check-deep would take over three hours.
export SROCE_TEARDOWN_ITERS=${SROCE_TEARDOWN_ITERS:-20}
# KASAN and lockdep under emulation: everything is several times slower.
export SROCE_TEST_TIMEOUT=${SROCE_TEST_TIMEOUT:-900}
export SROCE_GUEST_TIMEOUT=${SROCE_GUEST_TIMEOUT:-21600}

rc=0
"$root/scripts/run-tests.sh" "$@" || rc=$?
echo "check-debug: rebuilding sroce.ko for the stock kernel"
make -C "$root" module >/dev/null
exit "$rc"
