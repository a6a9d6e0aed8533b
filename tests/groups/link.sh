#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# sroce-test: where=guest order=10 cost=130
#
# The device skeleton: module load and autoload, rdma link add/delete,
# GIDs, the port following its netdev, namespaces, teardown by every route,
# bad input, the provider's view through ibv_devinfo, and the kernel verbs
# that exist so far (queries and PDs), from the kernel and from userspace.
. "$(dirname "$0")/../lib.sh"

devinfo() { ibv_devinfo -v -d "$1"; }
stat_has() { rdma statistic show link "$1" | has "$2"; }

# start_holder [n1|n2] DEV: run sroce_hold in the background, output in
# /tmp/hold, and wait until it holds the device.
start_holder() {
	local pre=()
	[ $# = 2 ] && pre=("$1") && shift
	"${pre[@]}" "$SROCE_PROGS/sroce_hold" "$1" >/tmp/hold 2>&1 &
	HOLDER=$!
	wait_for 30 grep -qx ready /tmp/hold
}

# stop_holder: the holder must exit by itself, successfully, after seeing
# its device removed.
stop_holder() {
	wait "$HOLDER" || { cat /tmp/hold; fail "holder exited with an error"; }
	cat /tmp/hold
	grep -q 'event IBV_EVENT_DEVICE_FATAL' /tmp/hold || fail "no DEVICE_FATAL"
}

test_load_unload() {
	run sroce_load
	grep -q '^sroce ' /proc/modules || fail "sroce not in /proc/modules"
	dmesg | has 'sroce: loaded' || fail "no 'loaded' line"
	sroce_check_no_objects
	run rmmod sroce
	! sroce_loaded || fail "still loaded after rmmod"
}

# mod_files FILE|NAME...: the files of these modules and of every module
# they depend on, built-in ones left out.
mod_files() {
	local -A seen=()
	local todo=("$@") m f d
	while [ ${#todo[@]} -gt 0 ]; do
		m=${todo[0]}
		todo=("${todo[@]:1}")
		[ -z "${seen[$m]:-}" ] || continue
		seen[$m]=1
		case $m in
		/*) f=$m ;;
		*) f=$(modinfo -n "$m") || fail "no module $m" ;;
		esac
		[ -f "$f" ] || continue	# built in
		echo "$f"
		for d in $(modinfo -F depends "$f" | tr ',' ' '); do
			todo+=("$d")
		done
	done
}

# "rdma link add ... type sroce" loads the module by its rdma-link alias.
test_autoload() {
	local k up=/tmp/modules-up wk=/tmp/modules-wk deps
	k=$(uname -r)
	# What depmod indexes: sroce, what it needs, and dummy (the netdev
	# below); all of /lib/modules took over 5 minutes to read over 9p on
	# a loaded machine.
	deps=$(mod_files "$SROCE_KO" dummy | grep -vxF "$SROCE_KO")
	mkdir -p "$up" "$wk"
	run mount -t overlay overlay -o "lowerdir=/lib/modules/$k,upperdir=$up,workdir=$wk" "/lib/modules/$k"
	trap 'umount /lib/modules/'"$k"' 2>/dev/null' EXIT
	mkdir -p "/lib/modules/$k/extra"
	cp "$SROCE_KO" "/lib/modules/$k/extra/sroce.ko"
	# shellcheck disable=SC2086
	run depmod "$k" "/lib/modules/$k/extra/sroce.ko" $deps
	modinfo sroce | has 'alias: *rdma-link-sroce' || fail "no rdma-link-sroce alias"
	! sroce_loaded || fail "loaded too early"
	run ip link add st-d0 type dummy
	run ip link set st-d0 up
	run rdma link add sroce0 type sroce netdev st-d0
	sroce_loaded || fail "not autoloaded"
	run rdma link delete sroce0
	sroce_check_no_objects
	run rmmod sroce
}

test_add_delete() {
	topo_loopback
	run rdma link show sroce0/1 | tee /tmp/link
	grep -q 'state ACTIVE' /tmp/link || fail "port not ACTIVE"
	grep -q 'netdev st-d0' /tmp/link || fail "not bound to st-d0"
	run rdma dev show sroce0 | has 'node_type ca' || fail "not a CA"
	[ "$(sroce_object_count dev)" = 1 ] || fail "dev count $(sroce_object_count dev)"
	[ "$(sroce_object_count netns_sockets)" = 1 ] || fail "no sockets"
	run ss -Huln 'sport = :4791' | tee /tmp/ss
	grep -q '0.0.0.0:4791' /tmp/ss || fail "no IPv4 socket on 4791"
	grep -q '\[::\]:4791' /tmp/ss || fail "no IPv6 socket on 4791"
	run rdma link delete sroce0
	[ -z "$(sroce_links)" ] || fail "device still there: $(sroce_links)"
	[ -z "$(ss -Hulnp 'sport = :4791')" ] || fail "socket still open"
	sroce_check_no_objects
}

test_gids() {
	topo_loopback
	gid_present sroce0 ::ffff:10.5.0.1 || fail "no IPv4 GID"
	gid_present sroce0 fd00:5::1 || fail "no IPv6 GID"
	grep -q '^fe80:' /sys/class/infiniband/sroce0/ports/1/gids/0 || fail "GID 0 not link-local"
	run ip addr add 10.5.1.7/24 dev st-d0
	wait_for 10 gid_present sroce0 ::ffff:10.5.1.7
	run ip addr del 10.5.1.7/24 dev st-d0
	wait_for 10 gid_absent sroce0 ::ffff:10.5.1.7
}

active_mtu() { ibv_devinfo -d sroce0 | awk '/active_mtu/ { print $2 }'; }
active_mtu_is() { [ "$(active_mtu)" = "$1" ]; }

test_port_follows_netdev() {
	local w
	topo_loopback
	stdbuf -oL ibv_asyncwatch -d sroce0 >/tmp/async 2>&1 &
	w=$!
	# It prints its event FD once it listens: a slow guest takes a while.
	wait_for 60 grep -q 'async event FD' /tmp/async
	run ip link set st-d0 down
	wait_for 10 port_state_is sroce0 DOWN
	wait_for 10 grep -q 'IBV_EVENT_PORT_ERR' /tmp/async
	run ip link set st-d0 up
	wait_for 10 port_state_is sroce0 ACTIVE
	wait_for 10 grep -q 'IBV_EVENT_PORT_ACTIVE' /tmp/async
	rdma statistic show link sroce0/1 | has 'link_downed 1' || fail "link_downed not counted"

	for pair in 9000:4096 4192:4096 4191:2048 1500:1024 1100:512 352:256; do
		run ip link set st-d0 mtu "${pair%:*}"
		wait_for 10 active_mtu_is "${pair#*:}"
	done
	# Too small for any IB MTU with headers: the port goes down.
	run ip link set st-d0 mtu 351
	wait_for 10 port_state_is sroce0 DOWN
	run ip link set st-d0 mtu 1500
	wait_for 10 port_state_is sroce0 ACTIVE
	kill "$w"
	cat /tmp/async
}

test_ibv_devinfo() {
	topo_loopback
	run ibv_devices | tee /tmp/devs
	grep -qw sroce0 /tmp/devs || fail "ibv_devices does not list sroce0"
	run devinfo sroce0 | tee /tmp/info
	grep -q 'state:.*PORT_ACTIVE' /tmp/info || fail "not PORT_ACTIVE"
	grep -q 'link_layer:.*Ethernet' /tmp/info || fail "not Ethernet"
	grep -q 'active_mtu:.*1024 (3)' /tmp/info || fail "active_mtu is not 1024"
	grep -q 'max_mtu:.*4096 (5)' /tmp/info || fail "max_mtu is not 4096"
	grep -q 'phys_port_cnt:.*1$' /tmp/info || fail "not one port"
	grep -q 'max_pd:.*65536' /tmp/info || fail "max_pd is not 65536"
	grep -q 'fw_ver:.*0.1.0' /tmp/info || fail "no firmware version"
	grep -Eq 'GID\[ *[0-9]+\]:.*10\.5\.0\.1, RoCE v2' /tmp/info || fail "no IPv4 RoCE v2 GID"
	grep -Eq 'GID\[ *[0-9]+\]:.*fd00:5::1, RoCE v2' /tmp/info || fail "no IPv6 RoCE v2 GID"
	! grep -q 'RoCE v1' /tmp/info || fail "RoCE v1 GIDs present"
}

# The provider installed the way "make install" installs it, found through
# /etc/libibverbs.d instead of RDMAV_DRIVERS.
test_installed_provider() {
	local libdir d
	libdir=/usr/lib/$(gcc -print-multiarch)/libibverbs
	for d in "$libdir" /etc/libibverbs.d; do
		mkdir -p "/tmp/ov$d/up" "/tmp/ov$d/wk"
		run mount -t overlay overlay -o "lowerdir=$d,upperdir=/tmp/ov$d/up,workdir=/tmp/ov$d/wk" "$d"
	done
	trap 'umount '"$libdir"' /etc/libibverbs.d 2>/dev/null' EXIT
	# The build that RDMAV_DRIVERS names (SROCE_PROVIDER's, if set).
	run make -s -C "$(dirname "$RDMAV_DRIVERS")" install
	topo_loopback
	unset RDMAV_DRIVERS
	run ibv_devinfo -d sroce0 | tee /tmp/info
	grep -q 'PORT_ACTIVE' /tmp/info || fail "installed provider did not open sroce0"
}

test_user_pd_limit() {
	local kernel_pds
	sroce_load max_pd=64
	topo_loopback
	# The kernel's own PDs (the MAD layer's) count against the limit too.
	kernel_pds=$(sroce_object_count pd)
	run "$SROCE_PROGS/sroce_pd_limit" sroce0 "$kernel_pds"
	[ "$(sroce_object_count pd)" = "$kernel_pds" ] || fail "PDs left: $(sroce_object_count pd)"
}

test_kernel_verbs() {
	topo_loopback
	run insmod "$SROCE_KVERBS_KO" dev=sroce0 expect_ipv4=10.5.0.1 expect_mtu=1024 expect_max_pd=65536 ||
		{ dmesg | grep sroce_kverbs_test; fail "kernel verbs tests failed"; }
	dmesg | grep 'sroce_kverbs_test:'
	[ "$(dmesg | grep -c 'sroce_kverbs_test: .*: pass')" -ge 5 ] || fail "not every case ran"
	run rmmod sroce_kverbs_test
}

# Each refused "rdma link add" gives a clear error, at most one log line,
# and leaves nothing behind.
test_bad_input() {
	local before after
	sroce_load
	run ip link add st-d0 type dummy
	run ip link set st-d0 up
	before=$(dmesg | grep -c 'sroce')
	expect_fail 'No such device' rdma link add sroce9 type sroce netdev st-none
	expect_fail 'Protocol not supported' rdma link add sroce9 type sroce netdev lo
	run rdma link add sroce0 type sroce netdev st-d0
	run ip link add st-d1 type dummy
	expect_fail 'File exists' rdma link add sroce1 type sroce netdev st-d0
	expect_fail 'File exists' rdma link add sroce0 type sroce netdev st-d1
	after=$(dmesg | grep -c 'sroce')
	# 3 lines for the refusals (not-Ethernet, busy netdev, name in use);
	# created/destroyed debug lines for the two refused after allocation.
	dmesg | grep 'sroce' | tail -n $((after - before))
	[ "$(dmesg | tail -n 40 | grep -c 'sroce: .*not an Ethernet device')" = 1 ] || fail "lo refusal not logged once"
	[ "$(dmesg | tail -n 40 | grep -c 'already carries sroce0')" = 1 ] || fail "busy netdev not logged once"
	[ "$(dmesg | tail -n 40 | grep -c 'sroce0: name already in use')" = 1 ] || fail "name clash not logged once"
	[ "$(sroce_object_count dev)" = 1 ] || fail "refused devices left objects"
	run rdma link delete sroce0
	expect_fail 'Wrong device name' rdma link delete sroce0
	sroce_check_no_objects
}

test_add_delete_100() {
	local i
	sroce_load
	run ip link add st-d0 type dummy
	run ip addr add 10.5.0.1/24 dev st-d0
	run ip link set st-d0 up
	for i in $(seq 100); do
		rdma link add sroce0 type sroce netdev st-d0 || fail "add #$i"
		rdma link delete sroce0 || fail "delete #$i"
	done
	sroce_check_no_objects
	[ "$(dmesg | grep -c 'sroce: dev created')" = "$(dmesg | grep -c 'sroce: dev destroyed')" ] ||
		fail "created/destroyed lines do not pair up"
}

# A device on a netdev inside a second namespace, created from inside it.
test_netns_device() {
	sroce_load
	run ip netns add sroce-h1
	run ip -n sroce-h1 link add st-d1 type dummy
	run ip -n sroce-h1 addr add 10.8.0.1/24 dev st-d1
	run ip -n sroce-h1 link set st-d1 up
	run n1 rdma link add sroce1 type sroce netdev st-d1
	wait_for 10 gid_present sroce1 ::ffff:10.8.0.1
	[ -z "$(ss -Hulnp 'sport = :4791')" ] || fail "socket opened in the initial namespace"
	run n1 ss -Hulnp 'sport = :4791' | has 4791 || fail "no socket in the device's namespace"
	run n1 ibv_devinfo -d sroce1 | has PORT_ACTIVE || fail "sroce1 not usable from its namespace"
	run insmod "$SROCE_KVERBS_KO" dev=sroce1 expect_ipv4=10.8.0.1
	run rmmod sroce_kverbs_test
	run ip netns del sroce-h1
	wait_for 20 no_sroce_links
	sroce_wait_no_objects 10
}

test_two_hosts() {
	topo_two_hosts
	[ "$(sroce_object_count netns_sockets)" = 2 ] || fail "expected sockets in 2 namespaces"
	test "$(port_state sroce1)" = ACTIVE || fail "sroce1 not ACTIVE"
	test "$(port_state sroce2)" = ACTIVE || fail "sroce2 not ACTIVE"
	run n1 ibv_devinfo -d sroce1 | has PORT_ACTIVE || fail "sroce1 unusable"
	run n2 ibv_devinfo -d sroce2 | has PORT_ACTIVE || fail "sroce2 unusable"
	run rdma link delete sroce1
	[ "$(sroce_object_count netns_sockets)" = 1 ] || fail "sroce1's namespace still has sockets"
}

# Datagrams to UDP 4791 reach the device of the netdev they arrive on, and
# malformed ones are dropped and counted by why: zero-filled ones fail the
# ICRC, 8-byte ones are too short to hold a BTH.
test_rx_counted() {
	topo_two_hosts
	run n2 python3 -c "$MALFORMED_PY" 10.6.0.1
	run n2 python3 -c "$MALFORMED_PY" fd00:6::1
	wait_for 10 stat_has sroce1/1 'rx_packets 6 '
	rdma statistic show link sroce1/1 | tee /tmp/stat
	grep -q 'rx_drop_icrc 4 ' /tmp/stat || fail "rx_drop_icrc wrong"
	grep -q 'rx_drop_short 2 ' /tmp/stat || fail "rx_drop_short wrong"
	rdma statistic show link sroce2/1 | has 'rx_packets 0 ' || fail "sroce2 counted foreign packets"
}

test_netdev_delete() {
	topo_loopback
	run ip link del st-d0
	wait_for 10 no_sroce_links
	sroce_check_no_objects
}

# The NIC under a device that shares its parent (topo_nic) unplugged:
# the PCI device removed, which takes the virtio device, the netdev and
# the RDMA device with it, while a process holds the device; the device
# goes (the holder sees DEVICE_FATAL), nothing is left, no WARN (the
# guest panics on one).  A rescan brings the NIC back.
test_nic_hot_remove() {
	local pci
	topo_nic
	[ "$(readlink -f /sys/class/infiniband/sroce0/device)" = "$(readlink -f /sys/class/net/eth0/device)" ] ||
		fail "sroce0's parent is not eth0's"
	pci=$(readlink -f /sys/class/net/eth0/device/..)
	[ -e "$pci/remove" ] || fail "eth0's device has no PCI parent to remove ($pci)"
	start_holder sroce0
	echo 1 >"$pci/remove"
	wait_for 30 no_sroce_links
	stop_holder
	sroce_check_no_objects
	echo 1 >/sys/bus/pci/rescan
	wait_for 30 test -e /sys/class/net/eth0
}

test_netns_move() {
	topo_loopback
	run ip netns add sroce-h1
	run ip link set st-d0 netns sroce-h1
	wait_for 10 no_sroce_links
	sroce_check_no_objects
	# The netdev is intact in its new namespace and takes a new device.
	run ip -n sroce-h1 link set st-d0 up
	run n1 rdma link add sroce1 type sroce netdev st-d0
	test "$(port_state sroce1)" = ACTIVE || fail "new device not ACTIVE"
}

# A process holding a context is disassociated, not waited for.
test_delete_while_open() {
	topo_loopback
	start_holder sroce0
	[ "$(sroce_object_count ucontext)" = 1 ] || fail "no user context"
	run timeout 60 rdma link delete sroce0 || fail "delete hung or failed"
	stop_holder
	sroce_check_no_objects
}

test_rmmod_with_devices() {
	local kind c d
	topo_two_hosts
	run ip link add st-d0 type dummy
	run ip link set st-d0 up
	run rdma link add sroce0 type sroce netdev st-d0
	start_holder n1 sroce1
	run timeout 120 rmmod sroce || fail "rmmod failed or hung"
	[ -z "$(sroce_links)" ] || fail "devices left: $(sroce_links)"
	stop_holder
	for kind in dev pd ucontext netns_sockets; do
		c=$(dmesg | grep -c "sroce: $kind created")
		d=$(dmesg | grep -c "sroce: $kind destroyed")
		[ "$c" = "$d" ] || fail "$kind: $c created, $d destroyed"
	done
}

t_main
