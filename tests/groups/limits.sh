#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=59 cost=30
#
# Limits (issue 8): every maximum sroce reports in ibv_query_device is
# enforced, exactly, from userspace (tests/progs/sroce_limits): object
# counts, queue and SGE sizes, inline size, RDMA READ/atomic depths, region
# size; the sizes CQs report; a CQ overflow raises IBV_EVENT_CQ_ERR, fails
# the QP feeding the CQ and is counted; RLIMIT_MEMLOCK bounds what a
# process without CAP_IPC_LOCK can register.  One device on a dummy netdev
# (topo_loopback); the QPs of the post cases are connected to themselves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lib-rdma.sh"

LIMITS=$SROCE_PROGS/sroce_limits

# The inline size sroce grants at most: ibv_query_device has no field for
# it, so it comes from where the driver defines it.
max_inline() {
	sed -n 's/^[[:space:]]*SROCE_MAX_INLINE = \([0-9]*\),.*/\1/p' "$SROCE_ROOT/drivers/sroce/sroce.h"
}

# The count maxima default to 65536 QPs, CQs and SRQs and 2^20 MRs, too
# many to create one by one under emulation: the module's parameters lower
# them, and the device must then refuse exactly there, counting the
# objects the kernel holds already (the MAD layer's PDs, CQs, QPs).
test_object_counts() {
	local n=40 in_use k before
	sroce_load max_pd=$n max_cq=$n max_qp=$n max_mr=$n max_srq=$n
	topo_loopback
	in_use=
	for k in pd cq qp mr srq; do
		in_use+="${in_use:+,}$k=$(sroce_object_count $k)"
	done
	before=$(sroce_objects | tr '\n' ' ')
	echo "objects the kernel holds: $in_use"
	run "$LIMITS" -d sroce0 counts "$in_use" | tee /tmp/limits
	has "^max_pd $n max_cq $n max_qp $n max_mr $n max_srq $n " </tmp/limits ||
		fail "the device does not report the lowered maxima"
	[ "$(grep -c ': pass$' /tmp/limits)" = 5 ] || fail "not every count was checked"
	[ "$(sroce_objects | tr '\n' ' ')" = "$before" ] || fail "objects left: $(sroce_objects | tr '\n' ' ')"
}

# Without parameters the device reports sroce's own maxima.
test_default_maxima() {
	topo_loopback
	run ibv_devinfo -v -d sroce0 | tee /tmp/info
	for k in max_qp:65536 max_cq:65536 max_mr:1048576 max_srq:65536 max_pd:65536; do
		grep -Eq "^[[:space:]]*${k%:*}:[[:space:]]*${k#*:}\$" /tmp/info || fail "${k%:*} is not ${k#*:}"
	done
}

test_sizes() {
	local inl
	inl=$(max_inline)
	[ -n "$inl" ] || fail "SROCE_MAX_INLINE not found in sroce.h"
	rdma_loopback
	run "$LIMITS" -d sroce0 sizes "$RDMA_GID1" "$inl" | tee /tmp/limits
	[ "$(grep -c ': pass$' /tmp/limits)" = 35 ] || fail "not every case ran"
}

test_cq_overflow() {
	rdma_loopback
	run "$LIMITS" -d sroce0 overflow "$RDMA_GID1" | tee /tmp/limits
	[ "$(grep -c ': pass$' /tmp/limits)" = 5 ] || fail "not every case ran"
}

# As root the limit does not apply (CAP_IPC_LOCK): the program runs without
# that capability (dropped from the bounding and inheritable sets before
# exec), with RLIMIT_MEMLOCK at 256 KiB.
test_memlock() {
	topo_loopback
	run setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- bash -c \
		'grep CapEff /proc/self/status; ulimit -l 256 && exec "$0" -d sroce0 memlock' "$LIMITS" |
		tee /tmp/limits
	[ "$(grep -c ': pass$' /tmp/limits)" = 7 ] || fail "not every case ran"
}

t_main
