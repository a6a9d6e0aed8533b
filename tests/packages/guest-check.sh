#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest half of "make check-packages" (scripts/check-packages.sh): run
# in a guest booted from the Debian root the packages were installed into,
# it uses only what they installed -- sroce.ko as DKMS built it for the
# running kernel, loaded by "rdma link add" through its module alias, and
# the provider through /etc/libibverbs.d (no RDMAV_DRIVERS) -- and writes
# one line per check to $SROCE_RESULTS/results.tsv:
#   PASS|FAIL <TAB> packages-<kernel> <TAB> check <TAB> 0 <TAB> message
set -u
unset RDMAV_DRIVERS
k=$(uname -r)
out=$SROCE_RESULTS/results.tsv
log=$SROCE_RESULTS/packages.log
exec >>"$log" 2>&1

result() { # status check message
	printf '%s\tpackages-%s\t%s\t0\t%s\n' "$1" "$k" "$2" "$3" >>"$out"
	echo "$1 $2: $3"
}
check() { # name message command...
	local name=$1 msg=$2
	shift 2
	echo "=== $name: $*"
	if "$@"; then
		result PASS "$name" "$msg"
	else
		result FAIL "$name" "$msg (failed: $*)"
		return 1
	fi
}

# The module DKMS installed for this kernel, nowhere else.
dkms_module() {
	local f
	f=$(modinfo -n sroce) || return 1
	echo "modinfo: $f"
	case $f in
	/lib/modules/"$k"/updates/dkms/sroce.ko*) ;;
	*) echo "not DKMS's module"; return 1 ;;
	esac
	[ "$(modinfo -F vermagic sroce | cut -d' ' -f1)" = "$k" ]
}

link_add() {
	modprobe dummy || return 1
	ip link add d0 type dummy && ip addr add 10.5.0.1/24 dev d0 &&
		ip link set d0 up || return 1
	rdma link add sroce0 type sroce netdev d0 || return 1
	grep -qw sroce /proc/modules && rdma link show | grep -q 'sroce0/1'
}

devinfo() {
	local o
	o=$(ibv_devinfo -d sroce0) || { echo "$o"; return 1; }
	echo "$o"
	grep -q 'hca_id:[[:space:]]*sroce0' <<<"$o" &&
		grep -q 'transport:[[:space:]]*InfiniBand' <<<"$o" &&
		grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$o"
}

# ibv_rc_pingpong over sroce0 by itself (loopback on d0): 100 exchanges
# of 4 KiB, each side reporting them.
pingpong() {
	local srv rc=0 n
	ibv_rc_pingpong -d sroce0 -g 1 -n 100 -s 4096 >/tmp/srv.log 2>&1 &
	srv=$!
	for n in $(seq 50); do
		ss -ltn | grep -q ':18515 ' && break
		sleep 0.2
	done
	timeout 120 ibv_rc_pingpong -d sroce0 -g 1 -n 100 -s 4096 10.5.0.1 >/tmp/cli.log 2>&1 || rc=$?
	wait "$srv" || rc=$?
	cat /tmp/srv.log /tmp/cli.log
	[ "$rc" = 0 ] &&
		grep -q '819200 bytes in .* seconds' /tmp/srv.log &&
		grep -q '819200 bytes in .* seconds' /tmp/cli.log &&
		grep -q '100 iters in' /tmp/cli.log
}

link_delete() {
	rdma link delete sroce0 && rmmod sroce && ! grep -qw sroce /proc/modules
}

# The installed unit template's own commands (no systemd runs in the
# guest), expanded as systemd would for instance d0: the link it makes
# at boot, and its removal.
unit_commands() {
	local unit=/lib/systemd/system/sroce-link@.service name start stop
	name=$(sed -n 's/^Environment=SROCE_NAME=//p' "$unit" | sed 's/%i/d0/g')
	start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s/%i/d0/g; s/\${SROCE_NAME}/$name/g")
	stop=$(sed -n 's/^ExecStop=//p' "$unit" | sed "s/%i/d0/g; s/\${SROCE_NAME}/$name/g")
	echo "name: $name; start: $start; stop: $stop"
	[ -n "$name" ] && [ -n "$start" ] && [ -n "$stop" ] || return 1
	$start && rdma link show | grep -q "link $name/1 .*netdev d0" || return 1
	$stop && ! rdma link show | grep -q "link $name/1" && rmmod sroce
}

check dkms_module "sroce.ko for $k is DKMS's" dkms_module &&
	check link_add "rdma link add loaded sroce.ko by its alias" link_add &&
	check ibv_devinfo "ibv_devinfo through /etc/libibverbs.d, no RDMAV_DRIVERS" devinfo &&
	check rc_pingpong "ibv_rc_pingpong, 100 x 4 KiB" pingpong &&
	check link_delete "rdma link delete, rmmod" link_delete &&
	check link_unit "sroce-link@d0.service's ExecStart and ExecStop" unit_commands
dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace' && result FAIL kernel_log "a WARN/BUG/oops in the kernel log"
exit 0
