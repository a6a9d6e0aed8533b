# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/lib-nvme.sh - NVMe over Fabrics on RDMA for the test groups (nvme,
# faults): the kernel's nvmet-rdma target set up through configfs, the
# nvme-rdma host (nvme connect -t rdma), fio with crc32c verification.
# Sourced after tests/lib.sh.

NQN=sroce-nvme-test
NVMET=/sys/kernel/config/nvmet

# --- target and host ---------------------------------------------------------

nvme_modules() {
	run modprobe -a nvmet-rdma nvme-rdma
	run modprobe null_blk nr_devices=0
	mountpoint -q /sys/kernel/config || run mount -t configfs none /sys/kernel/config
}

# target_create PATH ADDR [ADRFAM]: subsystem $NQN with PATH (a block
# device, or a file read and written through the page cache) as namespace
# 1, served on port 1 at ADDR:4420.
target_create() {
	local s=$NVMET/subsystems/$NQN p=$NVMET/ports/1
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo "$1" >"$s/namespaces/1/device_path"
	[ -b "$1" ] || echo 1 >"$s/namespaces/1/buffered_io"
	echo 1 >"$s/namespaces/1/enable"
	mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo "${3:-ipv4}" >"$p/addr_adrfam"
	echo "$2" >"$p/addr_traddr"
	echo 4420 >"$p/addr_trsvcid"
	port_link
}

port_link() { ln -s "$NVMET/subsystems/$NQN" "$NVMET/ports/1/subsystems/$NQN"; }
port_unlink() { rm "$NVMET/ports/1/subsystems/$NQN"; }

# The host's controller for $NQN (nvme0, ...), empty if none.
host_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] &&
			{ basename "$c"; return 0; }
	done
	return 1
}

ctrl_state_is() { [ "$(cat "/sys/class/nvme/$(host_ctrl)/state")" = "$1" ]; }

# The block device of namespace 1 of $NQN on the host: the subsystem's
# disk with native multipath (Debian's default; the per-path nvmeXcYnZ
# are hidden), the controller's without.
host_disk() {
	local d n
	for d in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		for n in "$d"/nvme*n1; do
			case ${n##*/} in nvme*c*n1 | 'nvme*n1') continue ;; esac
			[ -b "/dev/${n##*/}" ] && { echo "/dev/${n##*/}"; return 0; }
		done
	done
	return 1
}

# host_connect ADDR [connect options]: connect and wait for the disk.
host_connect() {
	local addr=$1
	shift
	# A generous keep-alive: the guest is emulated and may share the machine.
	run nvme connect -t rdma -a "$addr" -s 4420 -n "$NQN" --keep-alive-tmo=30 "$@"
	wait_for 30 host_disk
	log "connected: $(host_ctrl) $(host_disk)"
}

host_disconnect() {
	run nvme disconnect -n "$NQN"
	wait_for 30 eval '! host_ctrl'
}

# fio_verify NAME DISK [fio options]: random writes and reads of mixed
# sizes over 24 MiB, every block checked with crc32c.
fio_verify() {
	local name=$1 disk=$2 out
	shift 2
	out=$(fio --name="$name" --filename="$disk" --ioengine=libaio --direct=1 \
		--rw=randrw --bsrange=4k-128k --size=24m --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@" 2>&1) ||
		{ printf '%s\n' "$out"; fail "fio $name failed"; }
	printf '%s\n' "$out" | grep -E 'err=|READ:|WRITE:|verify'
	rdma statistic show | grep -oE '^link [^ ]+|[a-z_]+ [1-9][0-9]*' | tr '\n' ' '
	echo
	printf '%s\n' "$out" | has 'err= 0' || fail "fio $name reported errors"
}

# Everything nvme_* built, torn down before the device goes (a group's
# t_group_reset, which t_reset calls first).
nvme_reset() {
	local l d
	t_in_guest || return 0
	pkill -9 fio 2>/dev/null || true
	nvme disconnect-all >/dev/null 2>&1 || true
	if [ -d "$NVMET" ]; then
		for l in "$NVMET"/ports/*/subsystems/*; do
			[ -L "$l" ] && rm "$l"
		done
		for d in "$NVMET"/ports/*; do
			[ -d "$d" ] && rmdir "$d"
		done
		for d in "$NVMET"/subsystems/*/namespaces/*; do
			[ -d "$d" ] || continue
			echo 0 >"$d/enable"
			rmdir "$d"
		done
		for d in "$NVMET"/subsystems/*; do
			[ -d "$d" ] && rmdir "$d"
		done
	fi
	for d in "$NULLB"/*; do
		[ -d "$d" ] && rmdir "$d"
	done
	modprobe -r nvme-rdma nvmet-rdma null_blk 2>/dev/null || true
	rm -f /tmp/sroce-nvme.img
	return 0
}
