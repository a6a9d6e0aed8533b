# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# The test library every group sources (tests/groups/*.sh).
#
# A group is a bash script that defines test_* functions and ends with
# "t_main".  A line that begins "test_NAME()" declares test NAME
# (tests/declared.sh); every runner reads the declarations from the file
# and fails each declared test that recorded no result.  t_main runs each
# declared test in the order of the file, each in its own bash process
# under a timeout, with "set -e" in force (followed in that process by the
# group's t_group_check, if it defines one, with $SROCE_TEST the test's
# name), and then:
#   - resets the machine (t_reset: links, namespaces, netdevs, module),
#   - fails the test if sroce's object counters were not back to zero,
#   - fails the test if the kernel log gained an oops/WARN/BUG/leak line.
# A test passes by returning 0, fails with fail "why" (or any failing
# command), and skips with skip "why" (exit 4, kselftest's convention).
# A test that could run only part of what it checks (skip_part "why") and
# otherwise passed is a SKIP too, never a PASS.
#
# Results go to $SROCE_RESULTS/results.tsv, one line per test:
#   PASS|FAIL|SKIP <TAB> group <TAB> test <TAB> seconds <TAB> message
# and each test's output to $SROCE_RESULTS/<group>.log.

: "${SROCE_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${SROCE_RESULTS:=$SROCE_ROOT/build/test-results}"
: "${SROCE_TEST_TIMEOUT:=300}"
export SROCE_ROOT SROCE_RESULTS
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$SROCE_RESULTS"

# The kernel modules: built in the source tree, or for a second kernel in
# a copy of it (SROCE_KO_TREE: scripts/check-kernel.sh).
SROCE_KO=${SROCE_KO_TREE:-$SROCE_ROOT}/drivers/sroce/sroce.ko
SROCE_KVERBS_KO=${SROCE_KO_TREE:-$SROCE_ROOT}/tests/kmod/sroce_kverbs_test.ko
SROCE_KWR_KO=${SROCE_KO_TREE:-$SROCE_ROOT}/tests/kmod/sroce_kwr_test.ko
SROCE_PROGS=$SROCE_ROOT/tests/progs
SROCE_DEBUGFS=/sys/kernel/debug/sroce
# The uninstalled provider, for every ibverbs program the tests run; one
# built against another rdma-core for a guest booted from another root
# (SROCE_PROVIDER: scripts/check-trixie.sh).
export RDMAV_DRIVERS=${SROCE_PROVIDER:-$SROCE_ROOT/userspace-provider/libsroce}
# Kernel log lines that fail whatever test was running.
SROCE_BAD_KMSG='WARNING:|BUG:|Oops|general protection|Call Trace|RIP:|KASAN|UBSAN|kmemleak|refcount_t|[Ll]eak|hung_task|blocked for more than|soft lockup|hard LOCKUP|rcu.*stall|list_(add|del) corruption|Kernel panic|unreferenced object|Bad page'

# kmsg_drop_known: kernel log on stdin, to stdout less the reports known
# not to be sroce's, each replaced by one line that SROCE_BAD_KMSG does not
# match.  A report is known only if it matches a signature below and none
# of its lines names sroce code (a "[sroce]" frame or an sroce_ function);
# anything else, a truncated report included, passes through.  Known:
#   rds-lockdep: lockdep's "possible circular locking dependency" between
#   RDS's rds_trans_sem and rdma_cm's handler_mutex: RDS checks a local
#   address by creating and destroying an rdma_cm ID under rds_trans_sem,
#   and its handler for an incoming connection, called with the listening
#   ID's handler_mutex held, takes rds_trans_sem.  Both orders are RDS's;
#   RDS over rdma_rxe, without sroce, brings the same report
#   (Documentation/testing.rst, "Known reports").
#   nvmet-lockdep: lockdep's "possible circular locking dependency" between
#   nvmet's nvmet_config_sem and rdma_cm's handler_mutex: removing a port
#   through configfs destroys its rdma_cm ID under nvmet_config_sem, and an
#   I/O queue's connect command, handled under the queue's handler_mutex,
#   looks the subsystem up under nvmet_config_sem.  Both orders are nvmet's.
#   Lockdep turns itself off after any report, so make check-debug runs
#   the nvme and rds groups last.
kmsg_drop_known() {
	awk '
	function flush(name) {
		if (name != "")
			print "sroce-harness: known report, not sroce'"'"'s: " name
		else
			printf "%s", buf
		buf = ""
		inrep = 0
	}
	function known() {
		if (buf ~ /\[sroce\]|sroce_/)
			return ""
		if (buf ~ /circular locking dependency/ && buf ~ /rds_trans_sem/ &&
		    buf ~ /id_priv->handler_mutex/)
			return "rds-lockdep"
		if (buf ~ /circular locking dependency/ && buf ~ /nvmet_config_sem/ &&
		    buf ~ /id_priv->handler_mutex/ && buf ~ /nvmet_rdma_disable_port/)
			return "nvmet-lockdep"
		return ""
	}
	/WARNING: possible circular locking dependency detected/ {
		if (inrep)
			flush("")
		inrep = 1
		buf = $0 "\n"
		next
	}
	inrep {
		buf = buf $0 "\n"
		if ($0 ~ /<\/TASK>/)
			flush(known())
		next
	}
	{ print }
	END { if (inrep) flush("") }'
}

# kmsg_loud_since MARK: the kernel log lines at warning level or above
# logged after the line MARK (a sed pattern), less the emulator's timing
# noise: under software emulation the guest's vCPU can stall for tens of
# milliseconds, and the kernel says so once per boot, from wherever the
# stall lands ("hrtimer: interrupt took N ns", the clocksource watchdog
# marking the TSC unstable, RT throttling).  None of those names a driver;
# sroce's one hrtimer (the pacer) is a soft one, outside hrtimer's measure.
kmsg_loud_since() {
	dmesg -r | sed -n "/$1/,\$p" | grep -E '^<[0-4]>' |
		grep -vE '^<[0-4]>(hrtimer: interrupt took [0-9]+ ns|clocksource: .*(unstable|skew)|tsc: Marking TSC unstable|sched: RT throttling activated)' ||
		true
}

# kmemleak_drop_known: a kmemleak report on stdin, to stdout less the
# objects known not to be sroce's leaks; prints one line naming each kind
# it dropped, on stderr.  Known:
#   ucontext-task: the memory of a process whose task_struct reference
#   ib_core lost: 6.1's ioctl GET_CONTEXT (UVERBS_METHOD_GET_CONTEXT in
#   drivers/infiniband/core/uverbs_std_types_device.c) frees a context the
#   driver refused with kfree() where the write() command's error path
#   calls rdma_restrack_put() first, so the task reference restrack took
#   (rdma_restrack_set_name()) is never dropped and the process's
#   task_struct, signal_struct, creds and taskstats stay allocated and
#   unreferenced.  misuse's ioctl_device case makes sroce refuse such
#   contexts on purpose (a bisection of misuse's cases on the debug kernel
#   found it alone).  An object is of this kind if its allocation's first
#   frame is copy_process, prepare_creds or taskstats_exit and nothing in
#   the report names sroce; sroce itself takes no task reference.
kmemleak_drop_known() {
	awk '
	function flush() {
		if (buf == "")
			return
		if (!sroce && first ~ /^(copy_process|prepare_creds|taskstats_exit)\+/)
			known["ucontext-task"]++
		else
			printf "%s", buf
		buf = ""
		first = ""
	}
	/^unreferenced object/ { flush(); buf = $0 "\n"; inbt = 0; next }
	{ buf = buf $0 "\n" }
	/backtrace:/ { inbt = 1; next }
	inbt && first == "" && /\[<[0-9a-f]+>\]/ { first = $2 }
	/sroce/ { sroce = 1 }
	END {
		flush()
		for (k in known)
			printf "sroce-harness: known kmemleak report, not sroce'"'"'s: %s (%d objects)\n", k, known[k] > "/dev/stderr"
	}'
}

# --- messages and verdicts -------------------------------------------------

log() { printf '[%(%T)T] %s\n' -1 "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'SKIP: %s\n' "$*" >&2; exit 4; }

# skip_part WHY: a part of the running test did not run (WHY: what the
# device does not offer).  The test goes on; if it passes, its result is
# SKIP with every WHY as the message.
skip_part() {
	printf 'SKIP (part): %s\n' "$*" >&2
	printf '%s\n' "$*" >>"${SROCE_T_SKIPS:?skip_part outside a test}"
}

# run CMD...: print the command (to stderr, so it never mixes with what a
# pipe reads), then run it.
run() { printf '+ %s\n' "$*" >&2; "$@"; }

# CMD | has PATTERN: the output contains PATTERN (an extended regexp).  Reads
# all of its input: "grep -q" in a pipe under pipefail can fail the writer
# with SIGPIPE.
has() {
	local in
	in=$(cat)
	grep -Eq -- "$1" <<<"$in"
}

# expect_fail ERRNO_TEXT CMD...: CMD must fail and print ERRNO_TEXT.
expect_fail() {
	local want=$1 out
	shift
	printf '+ (must fail: %s) %s\n' "$want" "$*" >&2
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected '$want'"
	fi
	printf '%s\n' "$out"
	grep -q -- "$want" <<<"$out" || fail "'$*' failed with '$out', expected '$want'"
}

# wait_for SECONDS CMD...: poll CMD until it succeeds.  The caller's shell
# expands CMD's words once, before the first try: CMD itself must read
# what it waits for (a helper such as no_sroce_links or port_state_is,
# not test "$(...)", which would test one reading over and over).  CMD
# must not call fail: that would end the test at the first try, silently.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || fail "timed out waiting for: $*"
		sleep 0.2
	done
}

# MALFORMED_PY: python3 -c "$MALFORMED_PY" ADDR sends three malformed
# datagrams to UDP 4791 of ADDR (IPv4 or IPv6) from an ordinary socket:
# two of 40 zero bytes, which fail the ICRC, and one of 8, too short to
# hold a BTH.
MALFORMED_PY='import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
for n in (40, 40, 8):
    s.sendto(bytes(n), (sys.argv[1], 4791))'

# null_blk's configfs, where nullb_create makes its disks.
NULLB=/sys/kernel/config/nullb

# nullb_create NAME MIB: a memory-backed null_blk disk /dev/NAME.
nullb_create() {
	mkdir "$NULLB/$1"
	echo 1 >"$NULLB/$1/memory_backed"
	echo "$2" >"$NULLB/$1/size"
	echo 1 >"$NULLB/$1/power"
	wait_for 10 test -b "/dev/$1"
}

# --- the module --------------------------------------------------------------

sroce_loaded() { [ -d /sys/module/sroce ]; }

# sroce_load [PARAM=VALUE...]: load sroce.ko and what it depends on, with
# dynamic debug on so created/destroyed pairs land in the kernel log.
sroce_load() {
	sroce_loaded && return 0
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
	insmod "$SROCE_KO" dyndbg=+p "$@"
}

sroce_unload() {
	sroce_loaded || return 0
	rmmod sroce
}

# sroce_objects: "kind count" lines of the module's live objects.
sroce_objects() { cat "$SROCE_DEBUGFS/objects"; }

# sroce_object_count KIND
sroce_object_count() { awk -v k="$1" '$1 == k { print $2 }' "$SROCE_DEBUGFS/objects"; }

# sroce_check_no_objects: every object kind is back to zero.
sroce_check_no_objects() {
	! objects_live || fail "objects left behind: $SROCE_LIVE"
}

# sroce_wait_no_objects SECONDS: every object kind is back to zero within
# SECONDS (a device in a namespace being deleted goes in a work item of
# the kernel's), or the test fails naming what is left.  Not wait_for with
# sroce_check_no_objects: its fail would end the test at the first look,
# its message thrown away with the predicate's output.
sroce_wait_no_objects() {
	local deadline=$((SECONDS + $1))
	while objects_live; do
		[ $SECONDS -lt $deadline ] || fail "objects left behind: $SROCE_LIVE"
		sleep 0.2
	done
}

# sroce_links: names of the RDMA devices named sroce* (every test device).
# "rdma dev show" prints "INDEX: NAME: ..." per device; read by the shell
# (no python: under emulation its start costs more than a second).
sroce_links() {
	local idx name rest
	rdma dev show 2>/dev/null | while read -r idx name rest; do
		name=${name%:}
		case $name in sroce*) echo "$name" ;; esac
	done
}

# no_sroce_links: no sroce device is left.
no_sroce_links() { [ -z "$(sroce_links)" ]; }

# port_state DEV: the port's state as "ACTIVE", "DOWN", ...
port_state() { sed 's/^[0-9]*: //' "/sys/class/infiniband/$1/ports/1/state"; }

# port_state_is DEV STATE: the port's state is STATE now.
port_state_is() { [ "$(port_state "$1")" = "$2" ]; }

# --- topologies --------------------------------------------------------------
#
# topo_loopback: one device on one netdev; both ends of a test use it.
#
#     [ sroce0 ]
#         |
#     [ st-d0 ]  dummy, 10.5.0.1/24, fd00:5::1/64
#
topo_loopback() {
	local mtu=${1:-1500}
	run ip link add st-d0 mtu "$mtu" type dummy
	run ip addr add 10.5.0.1/24 dev st-d0
	run ip addr add fd00:5::1/64 dev st-d0 nodad
	run ip link set st-d0 up
	sroce_load
	run rdma link add sroce0 type sroce netdev st-d0
	wait_for 10 gid_present sroce0 ::ffff:10.5.0.1
}

# topo_nic: sroce0 on the guest's virtio NIC (eth0, scripts/run-tests.sh),
# with topo_loopback's addresses: a device whose netdev has a parent
# device, which sroce's device then shares (device.c), as an RNIC's does.
# The NIC is on no network: traffic stays on the device (loopback).
# t_reset takes it down again (topo_nic_reset).
TOPO_NIC_MARK=/run/sroce-topo-nic
topo_nic() {
	[ -e /sys/class/net/eth0 ] || run modprobe virtio_net
	wait_for 10 test -e /sys/class/net/eth0
	touch "$TOPO_NIC_MARK"
	run ip addr flush dev eth0
	run ip addr add 10.5.0.1/24 dev eth0
	run ip addr add fd00:5::1/64 dev eth0 nodad
	run ip link set eth0 up
	sroce_load
	run rdma link add sroce0 type sroce netdev eth0
	wait_for 10 gid_present sroce0 ::ffff:10.5.0.1
	[ -e /sys/class/infiniband/sroce0/device/net/eth0 ] ||
		fail "sroce0 on eth0: eth0 is not under the device's parent (/sys/class/infiniband/sroce0/device/net/)"
}

# The NIC as topo_nic found it: no addresses, down, its driver unloaded
# (which unregisters a device still on it).
topo_nic_reset() {
	[ -e "$TOPO_NIC_MARK" ] || return 0
	ip addr flush dev eth0 2>/dev/null
	rmmod virtio_net 2>/dev/null
	rm -f "$TOPO_NIC_MARK"
}

# topo_two_hosts: two simulated hosts, one network namespace each, joined
# by a veth pair; one sroce device in each namespace.
#
#   namespace sroce-h1                 namespace sroce-h2
#   [ sroce1 ]                         [ sroce2 ]
#       |                                  |
#   [ st-v1 ] 10.6.0.1 ======= 10.6.0.2 [ st-v2 ]
#             fd00:6::1        fd00:6::2
#
H1=sroce-h1 H2=sroce-h2
n1() { ip netns exec "$H1" "$@"; }
n2() { ip netns exec "$H2" "$@"; }
topo_two_hosts() {
	two_hosts_wire "$@"
	two_hosts_devices 10.6.0.1 10.6.0.2
}

# two_hosts_devices IP1 IP2: sroce1 on st-v1 and sroce2 on st-v2, each
# waited for until IP1 / IP2 is among its GIDs.
two_hosts_devices() {
	sroce_load
	run n1 rdma link add sroce1 type sroce netdev st-v1
	run n2 rdma link add sroce2 type sroce netdev st-v2
	wait_for 10 gid_present sroce1 "::ffff:$1"
	wait_for 10 gid_present sroce2 "::ffff:$2"
}

# two_hosts_wire [MTU]: topo_two_hosts' namespaces, veth and addresses,
# without devices.
two_hosts_wire() {
	local mtu=${1:-1500}
	run ip netns add "$H1"
	run ip netns add "$H2"
	run ip link add st-v1 mtu "$mtu" netns "$H1" type veth peer name st-v2 mtu "$mtu" netns "$H2"
	run ip -n "$H1" addr add 10.6.0.1/24 dev st-v1
	run ip -n "$H2" addr add 10.6.0.2/24 dev st-v2
	run ip -n "$H1" addr add fd00:6::1/64 dev st-v1 nodad
	run ip -n "$H2" addr add fd00:6::2/64 dev st-v2 nodad
	run ip -n "$H1" link set lo up
	run ip -n "$H2" link set lo up
	run ip -n "$H1" link set st-v1 up
	run ip -n "$H2" link set st-v2 up
	wait_for 10 link_ready "$H1" st-v1
	wait_for 10 link_ready "$H2" st-v2
}

# link_ready NS DEV: DEV's operational state is UP and none of its IPv6
# addresses is tentative.  Both wait for the kernel's link watch, up to a
# second after "ip link set up" ("link becomes ready" in the kernel log):
# until then the first end of a veth pair to come up keeps a queueing
# discipline that drops everything, and IPv6 holds even a nodad address
# tentative, which takes no packets.  Traffic started before that is
# lost, and a QP with a short ACK timeout can spend all its retries on it
# (kverbs/two_hosts_ipv6 did once, 67 ms x 7).
link_ready() {
	ip -n "$1" -o link show "$2" | grep -q 'state UP' &&
		[ -z "$(ip -n "$1" -6 addr show dev "$2" tentative)" ]
}

# pin_neighbours DEV NS [PEER PNS]: the other end of DEV's veth
# (topo_two_hosts, topo_wire; NS "-" for the initial namespace), or PEER in
# namespace PNS, entered as a permanent neighbour of DEV, for each of its
# addresses.  For tests where address resolution is not under test:
# ib_core gives a QP's move to RTR one second to find the destination MAC
# (ibv_modify_qp fails with ETIMEDOUT after that), an ARP request lost to
# netem costs the kernel a one-second retransmission (CI saw it at 5%
# loss), and a packet sent while its neighbour is unresolved waits in a
# queue and can come out behind later ones.
pin_neighbours() {
	local dev=$1 ns=$2 peer=${3:-} pns=${4:-} nsexec=() pexec=() mac a
	[ -n "$peer" ] || case $dev in
	st-v1) peer=st-v2 pns=$H2 ;;
	st-v2) peer=st-v1 pns=$H1 ;;
	st-w1) peer=st-w2 pns=- ;;
	st-w2) peer=st-w1 pns=- ;;
	*) fail "pin_neighbours: no peer known for $dev" ;;
	esac
	[ "$ns" = - ] || nsexec=(ip netns exec "$ns")
	[ "$pns" = - ] || pexec=(ip netns exec "$pns")
	mac=$("${pexec[@]}" cat "/sys/class/net/$peer/address")
	for a in $("${pexec[@]}" ip -o addr show dev "$peer" scope global |
		awk '{ sub("/.*", "", $4); print $4 }'); do
		run "${nsexec[@]}" ip neigh replace "$a" lladdr "$mac" dev "$dev" nud permanent
	done
	"${nsexec[@]}" ip neigh show dev "$dev" nud permanent | has . ||
		fail "no neighbour of $dev pinned"
}

# topo_wire: st-w1 (10.7.0.1, sroce1) and st-w2 (10.7.0.2, sroce2), a veth
# pair in the initial namespace, for kernel ULPs that open their rdma_cm
# IDs there only (nvmet-rdma, nvme-rdma, rds_rdma on Linux 6.1).
#
#   sroce1 -- st-w1 10.7.0.1 <== veth ==> 10.7.0.2 st-w2 -- sroce2
#
# Each address is local, so the kernel
# would deliver packets between them without touching the veth; rules
# looked up before the local table send locally generated packets for the
# other end out of the veth instead, and packets arriving on the veth still
# reach the local table.
topo_wire() {
	run ip link add st-w1 type veth peer name st-w2
	run ip addr add 10.7.0.1/24 dev st-w1
	run ip addr add 10.7.0.2/24 dev st-w2
	run ip link set st-w1 up
	run ip link set st-w2 up
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.st-w1.rp_filter=0 \
		net.ipv4.conf.st-w2.rp_filter=0 net.ipv4.conf.st-w1.accept_local=1 \
		net.ipv4.conf.st-w2.accept_local=1
	run ip route add 10.7.0.2 dev st-w1 src 10.7.0.1 table 71
	run ip route add 10.7.0.1 dev st-w2 src 10.7.0.2 table 72
	run ip rule add pref 71 to 10.7.0.2 iif lo lookup 71
	run ip rule add pref 72 to 10.7.0.1 iif lo lookup 72
	run ip rule add pref 73 to 10.7.0.2 oif st-w1 lookup 71
	run ip rule add pref 74 to 10.7.0.1 oif st-w2 lookup 72
	run ip rule add pref 1000 lookup local
	run ip rule del pref 0
	sroce_load
	run rdma link add sroce1 type sroce netdev st-w1
	run rdma link add sroce2 type sroce netdev st-w2
	wait_for 10 gid_present sroce1 ::ffff:10.7.0.1
	wait_for 10 gid_present sroce2 ::ffff:10.7.0.2
}

# topo_two_hosts_vlan: topo_two_hosts' namespaces and veth pair, with the
# addresses on VLAN 100 of each veth end.  The sroce devices sit on the veth
# ends; ib_core makes the VLAN netdevs' addresses their GIDs, and traffic
# from those GIDs leaves tagged through the VLAN netdev.
#
#   namespace sroce-h1                       namespace sroce-h2
#                 10.7.0.1       10.7.0.2
#   [ st-v1.100 ] fd00:7::1     fd00:7::2 [ st-v2.100 ]
#       |                                        |
#   [ st-v1 ] ============================== [ st-v2 ]
#       |                                        |
#   [ sroce1 ]                               [ sroce2 ]
#
topo_two_hosts_vlan() {
	local mtu=${1:-1500} i
	run ip netns add "$H1"
	run ip netns add "$H2"
	run ip link add st-v1 mtu "$mtu" netns "$H1" type veth peer name st-v2 mtu "$mtu" netns "$H2"
	for i in 1 2; do
		run ip -n "sroce-h$i" link set lo up
		run ip -n "sroce-h$i" link set "st-v$i" up
		run ip -n "sroce-h$i" link add link "st-v$i" name "st-v$i.100" type vlan id 100
		run ip -n "sroce-h$i" addr add "10.7.0.$i/24" dev "st-v$i.100"
		run ip -n "sroce-h$i" addr add "fd00:7::$i/64" dev "st-v$i.100" nodad
		run ip -n "sroce-h$i" link set "st-v$i.100" up
	done
	two_hosts_devices 10.7.0.1 10.7.0.2
}

# Undo topo_wire's routing (the links go with t_reset).
topo_wire_reset() {
	local p rules
	rules=$'\n'$(ip rule show)
	[[ $rules == *$'\n1000:'* ]] || return 0
	ip rule add pref 0 lookup local
	ip rule del pref 1000 2>/dev/null || true
	for p in 71 72 73 74; do
		ip rule del pref $p 2>/dev/null || true
	done
	ip route flush table 71 2>/dev/null || true
	ip route flush table 72 2>/dev/null || true
}

# gid_sysfs ADDR: ADDR (IPv6 notation, ::ffff:a.b.c.d for IPv4) as sysfs
# prints GIDs: eight groups of four hex digits.  From the address's bytes:
# Python 3.13 (Debian 13) writes the IPv4 tail of an IPv4-mapped address
# as a dotted quad even when "exploded".
gid_sysfs() {
	python3 -c 'import ipaddress, sys
h = ipaddress.ip_address(sys.argv[1]).packed.hex()
print(":".join(h[i:i + 4] for i in range(0, 32, 4)))' "$1"
}

# gid_index DEV ADDR: the lowest index of DEV's RoCE v2 GIDs holding ADDR
# (IPv4, or IPv6 when it has a colon).
# (Shell builtins but one: every process costs dearly under emulation.)
gid_index() {
	local dir=/sys/class/infiniband/$1/ports/1 want i n=-1 v t
	case $2 in
	*:*) want=$(gid_sysfs "$2") ;;
	*) want=$(gid_sysfs "::ffff:$2") ;;
	esac
	for i in "$dir"/gids/*; do
		i=${i##*/}
		read -r v <"$dir/gids/$i" 2>/dev/null || continue
		[ "$v" = "$want" ] || continue
		read -r t <"$dir/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$t" = "RoCE v2" ] || continue
		if [ "$n" -lt 0 ] || [ "$i" -lt "$n" ]; then
			n=$i
		fi
	done
	[ "$n" -ge 0 ] && echo "$n"
}

# gid_present DEV ADDR: the port's GID table holds ADDR as a RoCE v2 GID.
gid_present() {
	local dir=/sys/class/infiniband/$1/ports/1 want i
	want=$(gid_sysfs "$2")
	for i in $(grep -lx "$want" "$dir"/gids/* 2>/dev/null); do
		[ "$(cat "$dir/gid_attrs/types/${i##*/}" 2>/dev/null)" = "RoCE v2" ] && return 0
	done
	return 1
}

gid_absent() { ! gid_present "$@"; }

# --- transport recovery of the kernel ULPs ---------------------------------
#
# NVMe-oF, NFS and RDS recover from a failed transport by themselves: the
# NVMe host resets its controller and connects again, the NFS client makes
# a new connection and sends its RPCs again, RDS drops the connection,
# makes a new one and resends what was not acknowledged.  The data then
# arrives right in the end, and the transport fault that caused it goes
# unseen.  So a group that runs them defines
# "t_group_check() { ulp_recovery_check; }", which the runner calls in the
# test's own process once the test function has returned: any recovery
# since the test began fails the test, unless the test declared that it
# causes it (ULP_ALLOW).  The NFS client logs none of its reconnects;
# nfs_recovery_check reads them from the mount's statistics before the
# unmount.  (tests/groups/srp.sh counts ib_srp's recoveries itself.)
#
# ULP_ALLOW: "KIND=N ..." (at most N) or "KIND=any", set by a test that
# causes recoveries, with a comment saying why.  The kinds, from the
# messages and counters of Linux 6.1 (drivers/nvme/host/rdma.c and core.c,
# drivers/nvme/target/core.c and rdma.c, net/sunrpc, net/rds,
# drivers/scsi, drivers/infiniband/ulp/iser and isert):
#   nvme_error_recovery   host: "starting error recovery", its queues torn
#                         down after a failed work request, a disconnect,
#                         a bad response or a timeout
#   nvme_timeout          host: "I/O N QID N timeout", a command (the
#                         keep-alive too: QID 0) went unanswered
#   nvme_reset            host: a controller set up again, a "creating N
#                         I/O queues" beyond one per "new ctrl": after an
#                         error recovery, or a reset (reset_controller,
#                         "nvme reset"), which logs nothing else
#   nvme_reconnect_failed host: "Failed reconnect attempt N"
#   nvme_connect_error    host: a queue that did not connect ("Connect
#                         rejected", "rdma connection establishment
#                         failed", "failed to connect queue", ...)
#   nvme_error            host: the rest of what it logs on the way to a
#                         recovery (a work request "failed with status",
#                         a bad command ID or remote invalidation, a failed
#                         keep-alive, failfast expiry, a reset due to AER)
#   nvmet_error           target: a keep-alive timer expired, a
#                         controller's fatal error, a work request failed,
#                         a QP event, a queue that failed to connect
#   nfs_not_responding    client: "server ... not responding" (RPC timeouts)
#   nfs_reconnect         client (nfs_recovery_check): the transport's
#                         connect_count beyond its first connection
#   nfs_retransmit        client (nfs_recovery_check): RPCs sent more than
#                         once (per operation, "trans" beyond "ops")
#   nfs_rpc_timeout       client (nfs_recovery_check): RPC timeouts
#   nfs_bad_reply         client (nfs_recovery_check): replies matching no
#                         request (bad_xids) or malformed
#   rds_conn_reset        RDS's conn_reset counter (sroce_rds_test
#                         --counters), since rds was loaded: connections
#                         shut down after an error (each is made again)
#   rds_error             RDS's lines on a connection it drops ("RDS/IB:
#                         ... disconnecting and reconnecting", "RDS/RDMA:
#                         conn ... rejected, dropping connection", ...)
#   iscsi_conn_error      iSCSI initiator: "connectionN:M: detected conn
#                         error", a connection failed (drivers/scsi/
#                         scsi_transport_iscsi.c; it is then recovered)
#   iser_error            iSER initiator (iscsi_iser) or target
#                         (ib_isert): a line of theirs saying error,
#                         failed or failure (a work completion in error:
#                         "... failure: transport retry counter
#                         exceeded"), or a flush
ULP_ALLOW=

# ulp_causing KIND: what follows, until ulp_caused, is an action of the
# test's own that may cause recoveries of KIND (one of those above); the
# ones it does are logged as caused by the test, not counted.  For races a
# ULP has with itself on a path the test takes on purpose (an iSCSI logout:
# the target drops the connection right after its logout response, and if
# that comes before iscsid has stopped the connection, the initiator reports
# "detected conn error (1011)"), never around data transfer.
ulp_causing() { t_in_guest && echo "sroce-test: causing $1" >/dev/kmsg; return 0; }
ulp_caused() { t_in_guest && echo "sroce-test: caused" >/dev/kmsg; return 0; }

# ulp_kmsg_events: "event KIND N" for each kind above seen in the kernel
# log since this test's begin marker (_t_run_one), and "line TEXT" for each
# line counted; "lost ..." if the log no longer holds the marker (nothing
# could be counted).
ulp_kmsg_events() {
	dmesg | awk -v mark="sroce-test: begin $SROCE_GROUP/$SROCE_TEST" '
	function count(kind) {
		if (kind == causing) {
			print "note kernel log, caused by the test: " $0
			return
		}
		n[kind]++
		print "line " $0
	}
	!on {
		on = length($0) >= length(mark) &&
			substr($0, length($0) - length(mark) + 1) == mark
		next
	}
	/ sroce-test: causing [a-z_]+$/ { causing = $NF; next }
	/ sroce-test: caused$/ { causing = ""; next }
	/ nvme nvme[0-9]+: starting error recovery/ { count("nvme_error_recovery"); next }
	/ nvme nvme[0-9]+: I\/O [0-9]+ QID [0-9]+ timeout/ { count("nvme_timeout"); next }
	/ nvme nvme[0-9]+: creating [0-9]+ I\/O queues/ { setups++; next }
	/ nvme nvme[0-9]+: new ctrl: NQN/ { news++; next }
	/ nvme nvme[0-9]+: Failed reconnect attempt/ { count("nvme_reconnect_failed"); next }
	/ nvme nvme[0-9]+: (Connect rejected|rdma connection establishment failed|failed to connect queue|rdma_resolve_addr failed|rdma_resolve_route failed|rdma_connect_locked failed|failed to create CM ID)/ {
		count("nvme_connect_error"); next
	}
	/ nvme nvme[0-9]+: (.* failed with (status|error code)|got bad command_id|Bogus remote invalidation|Queueing INV WR|Unexpected nvme completion length|Unexpected RDMA CM event|keep-alive failed|failed nvme_keep_alive_end_io|failfast expired|resetting controller due to AER)/ {
		count("nvme_error"); next
	}
	/ nvmet: ctrl [0-9]+ (keep-alive timer .* expired|fatal error occurred)| nvmet_rdma: (.*failed with status|received IB QP event|failed to connect queue|sending cmd response failed|post_recv cmd failed|Ctrl Fatal Error)/ {
		count("nvmet_error"); next
	}
	/: server .* not responding/ { count("nfs_not_responding"); next }
	/ connection[0-9]+:[0-9]+: detected conn error/ { count("iscsi_conn_error"); next }
	/ (iser|isert): .*(error|fail|Fail|flush)/ { count("iser_error"); next }
	/(^|\] )RDS(\/IB|\/RDMA)?: / && !/ conn connected <|: added$/ { count("rds_error"); next }
	END {
		if (!on)
			print "lost the kernel log line \"" mark "\""
		if (setups > news)
			n["nvme_reset"] = setups - news
		split("nvme_error_recovery nvme_timeout nvme_reset nvme_reconnect_failed " \
		      "nvme_connect_error nvme_error nvmet_error nfs_not_responding rds_error " \
		      "iscsi_conn_error iser_error", k)
		for (i = 1; i in k; i++)
			print "event " k[i] " " n[k[i]] + 0
	}'
}

# ulp_rds_events: "event rds_conn_reset N" from RDS's counters, if rds
# is loaded.
ulp_rds_events() {
	[ -d /sys/module/rds ] || return 0
	"$SROCE_PROGS/sroce_rds_test" --counters |
		awk '$1 == "conn_reset" { print "event rds_conn_reset " $2; found = 1 }
			END { if (!found) print "lost RDS'"'"'s counter conn_reset" }'
}

# ulp_allowed KIND: ULP_ALLOWED becomes what ULP_ALLOW allows of KIND (a
# number, or "any").  (Builtins only, as in ulp_judge: under emulation
# every process costs a fifth of a second, after every test.)
ulp_allowed() {
	local a
	ULP_ALLOWED=0
	for a in $ULP_ALLOW; do
		[ "${a%%=*}" = "$1" ] && ULP_ALLOWED=${a#*=}
	done
	return 0
}

# ulp_judge: "event KIND N", "line TEXT" (a kernel log line counted),
# "note TEXT" and "lost WHAT" lines on stdin; every event is logged with
# the lines that counted it, and the test fails if one is beyond what
# ULP_ALLOW allows, or if what had to be read was not there.
ulp_judge() {
	local line kind n lost='' seen='' over=''
	while IFS= read -r line; do
		case $line in
		"line "*) echo "kernel log: ${line#line }" ;;
		"note "*) log "${line#note }" ;;
		"lost "*) lost=${line#lost } ;;
		"event "*)
			read -r kind n <<<"${line#event }"
			[ "${n:-0}" -gt 0 ] || continue
			seen=1
			ulp_allowed "$kind"
			log "transport recovery: $kind $n (the test allows $ULP_ALLOWED)"
			[ "$ULP_ALLOWED" = any ] || [ "$n" -le "$ULP_ALLOWED" ] ||
				over+="${over:+, }$kind $n"
			;;
		esac
	done
	[ -z "$lost" ] || fail "cannot count transport recoveries: $lost is gone"
	[ -n "$seen" ] || log "transport recovery: none"
	[ -z "$over" ] || fail "transport recovery the test did not cause: $over"
}

# ulp_recovery_check: the kernel ULPs' recoveries since the test began
# (kernel log, RDS's counters) against ULP_ALLOW; a group's t_group_check.
ulp_recovery_check() {
	{ ulp_kmsg_events; ulp_rds_events; } | ulp_judge
}

# nfs_recovery_check MOUNTPOINT: the NFS client's transport recoveries on
# the mount, from /proc/self/mountstats (xprtrdma logs none), against
# ULP_ALLOW.  Before the unmount, which takes the statistics away; a
# STATFS first (never cached), so that a connection lost after the last
# RPC must be made again before they are read.
nfs_recovery_check() {
	local stats
	stat -f "$1" >/dev/null
	stats=$(awk -v mnt="$1" '
		$1 == "device" { on = $5 == mnt; ops = 0; next }
		!on { next }
		$1 == "xprt:" && $2 == "rdma" { xprts++; conns += $5; bad += $10 + $22; next }
		/per-op statistics/ { ops = 1; next }
		ops && $1 ~ /:$/ && NF >= 4 { rpcs += $2; retrans += $3 - $2; tmo += $4 }
		END {
			if (!xprts)
				print "lost the RDMA transport in the statistics of " mnt
			print "event nfs_reconnect " conns - xprts
			print "event nfs_retransmit " retrans + 0
			print "event nfs_rpc_timeout " tmo + 0
			print "event nfs_bad_reply " bad + 0
			print "note " mnt ": " xprts + 0 " RDMA transport(s), " rpcs + 0 " RPCs"
		}' /proc/self/mountstats)
	ulp_judge <<<"$stats"
}

# --- reset between tests -----------------------------------------------------

# t_reset: bring the machine back to its state before the first test:
# no sroce devices, no test namespaces or netdevs, module unloaded.  Fails
# (returns non-zero with a message) if sroce leaked objects.
t_reset() {
	local rc=0 ns dev
	t_in_guest || return 0
	# What a group builds on top of the devices (ULP targets, routes).
	if declare -F t_group_reset >/dev/null; then
		t_group_reset || rc=1
	fi
	pkill -9 -f "$SROCE_PROGS/" 2>/dev/null || true
	# Globs and builtins where they do: every process started here costs
	# a fifth of a second under emulation, before every test.
	# Namespaces made by "ip netns add" are files in /run/netns.
	for ns in /run/netns/sroce-*; do
		[ -e "$ns" ] || continue
		ns=${ns##*/}
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 || true
		ip netns del "$ns" || rc=1
	done
	topo_wire_reset
	topo_nic_reset
	for dev in /sys/class/net/st-*; do
		[ -e "$dev" ] && { ip link del "${dev##*/}" 2>/dev/null || true; }
	done
	for dev in /sys/module/sroce_*_test; do
		[ -e "$dev" ] && { rmmod "${dev##*/}" || rc=1; }
	done
	if sroce_loaded; then
		for dev in $(sroce_links); do
			rdma link delete "$dev" 2>/dev/null || true
		done
		# Namespace and netdev removal unregister devices asynchronously.
		local deadline=$((SECONDS + 30))
		while [ $SECONDS -lt $deadline ] && objects_live; do
			sleep 0.5
		done
		if objects_live; then
			echo "objects left behind after teardown: $SROCE_LIVE"
			rc=1
		fi
		rmmod sroce || { echo "rmmod sroce failed"; rc=1; }
	fi
	return $rc
}

# objects_live: some sroce object count (debugfs) is not zero; SROCE_LIVE
# becomes "kind count ..." of those.
objects_live() {
	local k v
	SROCE_LIVE=
	[ -r "$SROCE_DEBUGFS/objects" ] || return 1
	while read -r k v; do
		[ "$v" = 0 ] || SROCE_LIVE+="$k $v "
	done <"$SROCE_DEBUGFS/objects"
	[ -n "$SROCE_LIVE" ]
}

# --- the runner --------------------------------------------------------------

_t_record() {
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$SROCE_GROUP" "$2" "$3" "$4" >>"$SROCE_RESULTS/results.tsv"
	printf '%-4s %s/%s (%ss)%s\n' "$1" "$SROCE_GROUP" "$2" "$3" "${4:+: $4}"
}

# The kernel log lines written since MARK, filtered for bad ones.
_t_bad_kmsg() {
	dmesg 2>/dev/null | sed -n "\#sroce-test: begin $1\$#,\$p" | kmsg_drop_known |
		grep -E -m 5 "$SROCE_BAD_KMSG"
}

# tracefs_find: TRACEFS, mounting tracefs if no mount of it has events.
TRACEFS=
tracefs_find() {
	local d
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		if [ -d "$d/events" ]; then
			TRACEFS=$d
			return 0
		fi
	done
	run mount -t tracefs nodev /sys/kernel/tracing || return 1
	TRACEFS=/sys/kernel/tracing
	[ -d "$TRACEFS/events" ]
}

# sroce_events_off: every sroce trace event off, in whichever tracefs
# mount has them (a test killed with them on leaves them so).
sroce_events_off() {
	local d
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ ! -w "$d/events/sroce/enable" ] || echo 0 >"$d/events/sroce/enable"
	done
	return 0
}

# Host groups (style, provider checks) run where no module can be loaded;
# only guest groups own a kernel to reset and a kernel log to check.
t_in_guest() { [ -e /proc/modules ] && [ -w /dev/kmsg ]; }

# _t_watch WHAT: a watchdog beside a test and its reset (WHAT: the test's
# name), or beside the reset before a group's first test ("reset").  The
# test's timeout kills what can be killed, but a task stuck in the kernel
# (state D) does not die of SIGKILL, and the reset after it (rmmod) then
# waits behind it for ever: on CI (2026-11-29) "rdma link add" stuck so
# left the guest idle until the run's deadline, 25 minutes later, with
# nothing in the output to say where.  If WHAT has not ended
# SROCE_WEDGE_GRACE seconds after the test's timeout, the kernel is
# wedged: the stacks of the blocked tasks go to the kernel log (sysrq w),
# which the console keeps, and the guest powers off, so that the host
# blames WHAT with the console's words (console_death in
# scripts/run-tests.sh) and runs the groups after this one in a fresh
# guest.  _t_unwatch stops it.
#
# A kernel that stops running user space stops this watchdog too: the
# host watches it in turn.  $SROCE_RESULTS/.watch (the host's copy of the
# guest's results) holds its time and WHAT while it runs; if the file
# outlives its time by a margin, scripts/vm/run-guest.sh sends the guest
# an NMI, which panics it with the stack of where it was.
: "${SROCE_WEDGE_GRACE:=180}"
_t_dog=
_t_watch() {
	t_in_guest || return 0
	echo "$((SROCE_TEST_TIMEOUT + SROCE_WEDGE_GRACE)) $SROCE_GROUP/$1" >"$SROCE_RESULTS/.watch"
	_t_watchdog "$1" &
	_t_dog=$!
}
_t_unwatch() {
	[ -n "$_t_dog" ] || return 0
	kill "$_t_dog" 2>/dev/null
	wait "$_t_dog" 2>/dev/null
	_t_dog=
	rm -f "$SROCE_RESULTS/.watch"
	return 0
}
# The wait is the shell's own read on a FIFO: killing the watchdog leaves
# no sleep behind.  Once it fires, it uses only the shell's builtins and
# files of memory (/tmp, /proc, /dev) until the guest is off: what wedged
# may be the host's file shares (9p), which the kernel log and a program
# started from the host's root would need.
_t_watchdog() {
	local fifo=/tmp/.sroce-watchdog secs=$((SROCE_TEST_TIMEOUT + SROCE_WEDGE_GRACE))
	[ -p "$fifo" ] || mkfifo "$fifo" || return 0
	read -r -t "$secs" _ <>"$fifo" && return 0
	# The console of a "quiet" boot shows errors only; the stacks are info.
	echo 8 >/proc/sys/kernel/printk
	echo "<3>sroce-test: wedged: $SROCE_GROUP/$1 (with its reset) did not end in ${secs}s; the blocked tasks follow" >/dev/kmsg
	echo w >/proc/sysrq-trigger
	# The kernel log for the results, if the shares still work.
	(dmesg >"$SROCE_RESULTS/dmesg-wedged.log" 2>&1 &)
	read -r -t 5 _ <>"$fifo"
	echo o >/proc/sysrq-trigger
}

_t_run_one() {
	local fn=$1 name=${1#test_} start rc msg bad reset_msg first
	local glog=$SROCE_RESULTS/$SROCE_GROUP.log skips=$SROCE_RESULTS/.skipped-parts
	start=$EPOCHSECONDS
	: >"$skips"
	first=1
	[ -e "$glog" ] && first=$(($(wc -l <"$glog") + 1))
	t_in_guest && echo "sroce-test: begin $SROCE_GROUP/$name" >/dev/kmsg
	echo "=== $SROCE_GROUP/$name" >>"$glog"
	_t_watch "$name"
	SROCE_T_SKIPS=$skips timeout -k 10 "$SROCE_TEST_TIMEOUT" bash -c \
		'SROCE_T_CHILD=1 SROCE_TEST=${1#test_}; . "$0"; set -eo pipefail; "$1"
		if declare -F t_group_check >/dev/null; then t_group_check; fi' \
		"$SROCE_GROUP_SCRIPT" "$fn" \
		>>"$glog" 2>&1 </dev/null
	rc=$?
	msg=$(tail -n "+$first" "$glog" | grep -E '^(FAIL|SKIP): ')
	msg=${msg##*$'\n'}
	msg=${msg#*: }
	if [ "$rc" = 0 ] && [ -s "$skips" ]; then
		msg=$(<"$skips")
		msg="passed, but not all of it ran: ${msg//$'\n'/; }"
		rc=4
	fi
	reset_msg=$(t_reset 2>&1) || { rc=1; msg="${msg:+$msg; }$reset_msg"; }
	[ -n "$reset_msg" ] && echo "$reset_msg" >>"$glog"
	_t_unwatch
	if t_in_guest; then
		bad=$(_t_bad_kmsg "$SROCE_GROUP/$name")
		if [ -n "$bad" ]; then
			rc=1
			msg="${msg:+$msg; }kernel log: $(echo "$bad" | head -n 1)"
			printf 'kernel log:\n%s\n' "$bad" >>"$glog"
		fi
	fi
	case $rc in
	0) _t_record PASS "$name" $((EPOCHSECONDS - start)) "" ;;
	4) _t_record SKIP "$name" $((EPOCHSECONDS - start)) "$msg" ;;
	124|137) _t_record FAIL "$name" $((EPOCHSECONDS - start)) "timed out after ${SROCE_TEST_TIMEOUT}s" ;;
	*) _t_record FAIL "$name" $((EPOCHSECONDS - start)) "${msg:-exit status $rc}" ;;
	esac
}

# _t_missing GROUP [FILE]: the tests GROUP (FILE, by default
# tests/groups/GROUP.sh) declares, those SROCE_TESTS selects
# (tests/declared.sh), that have no result in results.tsv, one a line.
_t_missing() {
	[ -e "$SROCE_RESULTS/results.tsv" ] || : >"$SROCE_RESULTS/results.tsv"
	"$SROCE_ROOT/tests/declared.sh" "${2:-$1}" |
		awk -F'\t' -v g="$1" 'FILENAME != "-" { if ($2 == g) have[$3] = 1; next }
			!($2 in have) { print $2 }' "$SROCE_RESULTS/results.tsv" -
}

# _t_account GROUP WHY [FILE]: a FAIL for every test of GROUP that has no
# result ("no result recorded (WHY)"), so that a test cannot vanish unseen.
_t_account() {
	local t
	for t in $(_t_missing "$1" "${3:-}"); do
		SROCE_GROUP=$1 _t_record FAIL "$t" 0 "no result recorded ($2)"
	done
}

# _t_check_defined: a FAIL for every test_* function the group defines
# that is not declared by a "test_NAME()" line of its own (no runner would
# run it), and for every name declared twice (the first definition would
# never run).  Builtins but for one declared.sh: under emulation every
# process costs a fifth of a second.
_t_check_defined() {
	local g t fn d=$'\n'
	while IFS=$'\t' read -r g t; do
		[ -n "$t" ] || continue
		[[ $d == *$'\n'"$t"$'\n'* ]] &&
			_t_record FAIL "$t" 0 "test_$t is defined twice in $SROCE_GROUP.sh: the first definition never runs"
		d+=$t$'\n'
	done <<<"$("$SROCE_ROOT/tests/declared.sh" -a "$SROCE_GROUP_SCRIPT")"
	while read -r g t fn; do
		[[ $fn == test_* ]] && [[ $d != *$'\n'"${fn#test_}"$'\n'* ]] &&
			_t_record FAIL "${fn#test_}" 0 "$fn is defined, but no line of $SROCE_GROUP.sh begins '$fn()': no runner would run it"
	done <<<"$(declare -F)"
	return 0
}

# t_main: run the group's tests (all, or those named in $SROCE_TESTS), then
# fail every one of them that recorded no result.
t_main() {
	[ -n "${SROCE_T_CHILD:-}" ] && return 0
	local g t names=()
	SROCE_GROUP_SCRIPT=$(readlink -f "$0")
	SROCE_GROUP=$(basename "$0" .sh)
	export SROCE_GROUP SROCE_GROUP_SCRIPT
	_t_watch reset
	t_reset >/dev/null 2>&1
	_t_unwatch
	_t_check_defined
	# No "< <(...)": the guest has no /dev/fd.
	while IFS=$'\t' read -r g t; do
		[ -z "$t" ] || names+=("$t")
	done <<<"$("$SROCE_ROOT/tests/declared.sh" "$SROCE_GROUP_SCRIPT")"
	for t in "${names[@]}"; do
		_t_run_one "test_$t"
	done
	_t_account "$SROCE_GROUP" "t_main ended without a verdict for it" "$SROCE_GROUP_SCRIPT"
	return 0
}
