#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=59 cost=10
#
# Memory cgroups (issue 19): the queue memory a process makes sroce
# allocate is charged to the process's memory cgroup, so that a cgroup's
# memory.max bounds it.  tests/progs/sroce_limits runs in a cgroup v2
# limited to 64 MiB and creates CQs, SRQs, RC QPs and resized CQs at the
# largest sizes the device reports, each kind until sroce refuses: the
# refusal must be ENOMEM, the memory the objects took must be in the
# cgroup's memory.current and no more than about the limit, the limit
# must be hit (memory.events "max") without the OOM killer, and
# everything comes back when they are destroyed.  The kernel logs nothing
# at warning level or above.  One device on a dummy netdev.
#
#     [ sroce0 ]   sroce_limits in cgroup /sys/fs/cgroup/sroce-memcg
#         |
#     [ st-d0 ]  dummy, 10.5.0.1/24 (topo_loopback)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

LIMITS=$SROCE_PROGS/sroce_limits
CGROOT=/sys/fs/cgroup
CG=$CGROOT/sroce-memcg
MEMCG_LIMIT=$((64 << 20))

# The guest mounts no cgroup file system; the first test mounts cgroup2.
memcg_setup() {
	grep -qw cgroup2 /proc/filesystems || fail "the kernel has no cgroup2 file system"
	if ! grep -q " $CGROOT cgroup2 " /proc/mounts; then
		run mount -t cgroup2 cgroup2 "$CGROOT"
	fi
	grep -qw memory "$CGROOT/cgroup.controllers" ||
		fail "no memory controller in $CGROOT/cgroup.controllers"
	echo +memory >"$CGROOT/cgroup.subtree_control"
	mkdir "$CG"
	echo "$MEMCG_LIMIT" >"$CG/memory.max"
}

# The cgroup goes (and its processes, after a timeout) between tests.
t_group_reset() {
	[ -d "$CG" ] || return 0
	xargs -r kill -9 <"$CG/cgroup.procs" 2>/dev/null
	local deadline=$((SECONDS + 10))
	until rmdir "$CG" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || { echo "cannot remove $CG"; return 1; }
		sleep 0.2
	done
}

# The inline size sroce grants at most (limits.sh says why from sroce.h).
max_inline() {
	sed -n 's/^[[:space:]]*SROCE_MAX_INLINE = \([0-9]*\),.*/\1/p' "$SROCE_ROOT/drivers/sroce/sroce.h"
}

test_queue_memory_charged() {
	local inl rc=0 loud
	inl=$(max_inline)
	[ -n "$inl" ] || fail "SROCE_MAX_INLINE not found in sroce.h"
	topo_loopback
	memcg_setup
	echo "sroce-memcg: mark" >/dev/kmsg
	printf '+ %s\n' "$LIMITS -d sroce0 memcg $CG $inl (in $CG)" >&2
	bash -c 'echo $$ >"$1/cgroup.procs" && exec "$0" -d sroce0 memcg "$1" "$2"' \
		"$LIMITS" "$CG" "$inl" >/tmp/memcg.out 2>&1 || rc=$?
	cat /tmp/memcg.out
	echo "memory.events: $(tr '\n' ' ' <"$CG/memory.events")"
	[ "$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events")" = 0 ] ||
		fail "the OOM killer killed in the cgroup (exit status $rc)"
	[ "$rc" = 0 ] || fail "sroce_limits memcg: exit status $rc"
	[ "$(grep -c ': pass$' /tmp/memcg.out)" = 20 ] || fail "not every case ran"
	loud=$(kmsg_loud_since 'sroce-memcg: mark$')
	[ -z "$loud" ] || fail "the kernel logged at warning level or above: $(head -n 3 <<<"$loud")"
}

t_main
