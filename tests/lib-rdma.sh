# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Device-kind helpers for groups that run RDMA traffic, sourced after
# tests/lib.sh.  The same tests aim at sroce or, to prove the tests
# themselves, at Linux's in-tree soft RoCE driver rdma_rxe:
#
#   SROCE_RC_DEV_KIND=sroce (default)  sroce0 (topo_loopback), or sroce1 in
#                                      sroce-h1 and sroce2 in sroce-h2
#                                      (topo_two_hosts)
#   SROCE_RC_DEV_KIND=rxe              rxe0 on the dummy st-d0 in the initial
#                                      namespace, loopback only: rxe on 6.1
#                                      works only in the initial namespace
#
# rdma_loopback [MTU] and rdma_two_hosts [MTU] build a topology, and
# rdma_interop rxe|sroce [MTU] pairs rxe0 with sroce0 across a veth (the
# named one serves; with the default kind, sroce, only); each describes its
# two ends ("1" serves, "2" connects) in:
#
#   RDMA_DEV1 RDMA_DEV2   device names
#   RDMA_GID1 RDMA_GID2   GID index of each device's IPv4 address
#   RDMA_IP1 RDMA_IP2     the IPv4 addresses (rdma_interop: also
#                         RDMA_IP6_1 RDMA_IP6_2, the IPv6 ones; rdma_ipv6
#                         switches the GIDs and these to IPv6)
#   RDMA_NS1 RDMA_NS2     command prefixes (arrays) that run a command where
#                         the end lives: empty, or (ip netns exec NS)
#
# Background tools started here are killed when the test's shell exits, and
# for rxe the device and module are removed then (t_reset knows only sroce).

RDMA_KIND=${SROCE_RC_DEV_KIND:-sroce}
: "${RDMA_TOOL_TIMEOUT:=120}"
RDMA_BG_PIDS=()

case $RDMA_KIND in
sroce|rxe) ;;
*) echo "SROCE_RC_DEV_KIND must be sroce or rxe, not '$RDMA_KIND'" >&2; exit 2 ;;
esac

# rdma_cleanup: kill the background tools; for rxe, remove rxe0 and the
# module.  Runs from the EXIT trap the topologies install: no "local" here
# (bash 5.2 rejects it in a trap run by an errexit inside eval or source),
# and no errexit either, so that every step runs.
rdma_cleanup() {
	set +e
	for _rdma_pid in "${RDMA_BG_PIDS[@]}"; do
		kill "$_rdma_pid" 2>/dev/null
	done
	for _rdma_pid in "${RDMA_BG_PIDS[@]}"; do
		wait "$_rdma_pid" 2>/dev/null
	done
	RDMA_BG_PIDS=()
	if [ "$RDMA_KIND" = rxe ] || [ -n "${RDMA_RXE_USED:-}" ]; then
		rxe_remove
	fi
	return 0
}

rxe_remove() {
	rdma link delete rxe0 2>/dev/null || true
	ip link del st-d0 2>/dev/null || true
	ip link del st-i0 2>/dev/null || true
	for _rdma_i in $(seq 50); do
		[ -d /sys/module/rdma_rxe ] || return 0
		rmmod rdma_rxe 2>/dev/null && return 0
		sleep 0.2
	done
	echo "rmmod rdma_rxe failed" >&2
	return 1
}

#     [ rxe0 ]      (or [ sroce0 ]: topo_loopback)
#         |
#     [ st-d0 ]  dummy, 10.5.0.1/24, fd00:5::1/64, initial namespace
rxe_loopback() {
	local mtu=${1:-1500}
	! sroce_loaded || fail "sroce is loaded: it and rdma_rxe cannot share UDP 4791"
	[ ! -e /sys/class/infiniband/rxe0 ] || echo "warning: rxe0 left behind by an earlier test"
	rxe_remove
	unset RDMAV_DRIVERS	# the system's providers only: rxe needs no sroce provider
	run modprobe rdma_rxe
	run ip link add st-d0 mtu "$mtu" type dummy
	run ip addr add 10.5.0.1/24 dev st-d0
	run ip addr add fd00:5::1/64 dev st-d0 nodad
	run ip link set st-d0 up
	run rdma link add rxe0 type rxe netdev st-d0
	wait_for 10 gid_present rxe0 ::ffff:10.5.0.1
}

# rdma_loopback_vars DEV WHAT: the variables of one device talking to
# itself at 10.5.0.1 / fd00:5::1 (topo_loopback's addresses).
rdma_loopback_vars() {
	RDMA_DEV1=$1 RDMA_DEV2=$1
	RDMA_IP1=10.5.0.1 RDMA_IP2=10.5.0.1
	RDMA_NS1=() RDMA_NS2=()
	RDMA_GID1=$(gid_index "$RDMA_DEV1" "$RDMA_IP1") || fail "$RDMA_DEV1 has no RoCE v2 GID for $RDMA_IP1"
	RDMA_GID2=$RDMA_GID1
	RDMA_IP6_1=fd00:5::1 RDMA_IP6_2=fd00:5::1
	echo "$2: $RDMA_DEV1, GID index $RDMA_GID1 ($RDMA_IP1)"
}

rdma_loopback() {
	trap rdma_cleanup EXIT
	if [ "$RDMA_KIND" = rxe ]; then
		rxe_loopback "$@"
		rdma_loopback_vars rxe0 loopback
	else
		topo_loopback "$@"
		rdma_loopback_vars sroce0 loopback
	fi
}

# rdma_loopback_nic: as rdma_loopback, sroce0 on the guest's virtio NIC
# (topo_nic); rxe as rdma_loopback has it.
rdma_loopback_nic() {
	if [ "$RDMA_KIND" = rxe ]; then
		rdma_loopback "$@"
		return
	fi
	trap rdma_cleanup EXIT
	topo_nic
	rdma_loopback_vars sroce0 "loopback on the NIC (eth0)"
}

rdma_two_hosts() {
	[ "$RDMA_KIND" = sroce ] || skip "rxe on Linux 6.1 works only in the initial namespace"
	trap rdma_cleanup EXIT
	rdma_two_hosts_up "$@"
}

# rdma_two_hosts_up [MTU]: rdma_two_hosts' topology and variables, for a
# caller with an EXIT trap of its own that runs rdma_cleanup.
rdma_two_hosts_up() {
	topo_two_hosts "$@"
	RDMA_DEV1=sroce1 RDMA_DEV2=sroce2
	RDMA_IP1=10.6.0.1 RDMA_IP2=10.6.0.2
	RDMA_NS1=(ip netns exec "$H1") RDMA_NS2=(ip netns exec "$H2")
	RDMA_GID1=$(gid_index sroce1 10.6.0.1) || fail "sroce1 has no RoCE v2 GID for 10.6.0.1"
	RDMA_GID2=$(gid_index sroce2 10.6.0.2) || fail "sroce2 has no RoCE v2 GID for 10.6.0.2"
	RDMA_IP6_1=fd00:6::1 RDMA_IP6_2=fd00:6::2
	echo "two hosts: sroce1 GID $RDMA_GID1 ($RDMA_IP1) in $H1, sroce2 GID $RDMA_GID2 ($RDMA_IP2) in $H2"
}

# rdma_interop SERVER [MTU]: rdma_rxe against sroce across a veth pair;
# SERVER (rxe or sroce) is end 1, the other device end 2.  rxe stays in the
# initial namespace (on 6.1 it works nowhere else) and binds UDP 4791
# there; sroce lives in its own namespace, where it opens its own 4791
# sockets when its device is added.
#
#   initial namespace                    namespace sroce-peer
#   [ rxe0 ]                             [ sroce0 ]
#       |                                    |
#   [ st-i0 ] 10.7.0.1 ========= 10.7.0.2 [ st-i1 ]
#             fd00:7::1          fd00:7::2
#
INTEROP_NS=sroce-peer
rdma_interop() {
	local srv=$1 mtu=${2:-1500} gr gs
	case $srv in rxe|sroce) ;; *) fail "rdma_interop: server must be rxe or sroce, not '$srv'" ;; esac
	[ "$RDMA_KIND" = sroce ] || skip "the interop topology pairs rxe with sroce by itself"
	! sroce_loaded || fail "sroce is loaded: rdma_rxe must bind UDP 4791 in the initial namespace first"
	trap rdma_cleanup EXIT
	RDMA_RXE_USED=1
	rxe_remove
	run modprobe rdma_rxe
	run ip netns add "$INTEROP_NS"
	run ip link add st-i0 mtu "$mtu" type veth peer name st-i1 mtu "$mtu" netns "$INTEROP_NS"
	run ip addr add 10.7.0.1/24 dev st-i0
	run ip addr add fd00:7::1/64 dev st-i0 nodad
	run ip link set st-i0 up
	run ip -n "$INTEROP_NS" addr add 10.7.0.2/24 dev st-i1
	run ip -n "$INTEROP_NS" addr add fd00:7::2/64 dev st-i1 nodad
	run ip -n "$INTEROP_NS" link set lo up
	run ip -n "$INTEROP_NS" link set st-i1 up
	run rdma link add rxe0 type rxe netdev st-i0
	sroce_load
	run ip netns exec "$INTEROP_NS" rdma link add sroce0 type sroce netdev st-i1
	wait_for 10 gid_present rxe0 ::ffff:10.7.0.1
	wait_for 10 gid_present sroce0 ::ffff:10.7.0.2
	gr=$(gid_index rxe0 10.7.0.1) || fail "rxe0 has no RoCE v2 GID for 10.7.0.1"
	gs=$(gid_index sroce0 10.7.0.2) || fail "sroce0 has no RoCE v2 GID for 10.7.0.2"
	if [ "$srv" = rxe ]; then
		RDMA_DEV1=rxe0 RDMA_DEV2=sroce0 RDMA_GID1=$gr RDMA_GID2=$gs
		RDMA_IP1=10.7.0.1 RDMA_IP2=10.7.0.2
		RDMA_IP6_1=fd00:7::1 RDMA_IP6_2=fd00:7::2
		RDMA_NS1=() RDMA_NS2=(ip netns exec "$INTEROP_NS")
	else
		RDMA_DEV1=sroce0 RDMA_DEV2=rxe0 RDMA_GID1=$gs RDMA_GID2=$gr
		RDMA_IP1=10.7.0.2 RDMA_IP2=10.7.0.1
		RDMA_IP6_1=fd00:7::2 RDMA_IP6_2=fd00:7::1
		RDMA_NS1=(ip netns exec "$INTEROP_NS") RDMA_NS2=()
	fi
	echo "interop: server $RDMA_DEV1 GID $RDMA_GID1 ($RDMA_IP1), client $RDMA_DEV2 GID $RDMA_GID2 ($RDMA_IP2)"
}

# rdma_ipv6 [addrs]: from now on the two ends use their IPv6 GIDs; with
# "addrs" RDMA_IP1/RDMA_IP2 become the IPv6 addresses too, for tools that
# pick the GID from the address (rdma_cm).  The pingpongs and perftest keep
# their TCP exchange on IPv4: their servers listen on IPv4 only.
rdma_ipv6() {
	wait_for 10 gid_present "$RDMA_DEV1" "$RDMA_IP6_1"
	wait_for 10 gid_present "$RDMA_DEV2" "$RDMA_IP6_2"
	RDMA_GID1=$(gid_index "$RDMA_DEV1" "$RDMA_IP6_1") || fail "$RDMA_DEV1 has no RoCE v2 GID for $RDMA_IP6_1"
	RDMA_GID2=$(gid_index "$RDMA_DEV2" "$RDMA_IP6_2") || fail "$RDMA_DEV2 has no RoCE v2 GID for $RDMA_IP6_2"
	[ "${1:-}" = addrs ] && RDMA_IP1=$RDMA_IP6_1 RDMA_IP2=$RDMA_IP6_2
	echo "IPv6: $RDMA_DEV1 GID $RDMA_GID1 ($RDMA_IP6_1), $RDMA_DEV2 GID $RDMA_GID2 ($RDMA_IP6_2); tools connect to $RDMA_IP1"
}

# The two hosts of rdma_two_hosts talking over VLAN 100 of their veth pair:
# the VLAN netdevs are sroce's lower devices (topo_two_hosts_vlan).
rdma_two_hosts_vlan() {
	[ "$RDMA_KIND" = sroce ] || skip "rxe on Linux 6.1 works only in the initial namespace"
	trap rdma_cleanup EXIT
	topo_two_hosts_vlan "$@"
	RDMA_DEV1=sroce1 RDMA_DEV2=sroce2
	RDMA_IP1=10.7.0.1 RDMA_IP2=10.7.0.2
	RDMA_IP6_1=fd00:7::1 RDMA_IP6_2=fd00:7::2
	RDMA_NS1=(ip netns exec "$H1") RDMA_NS2=(ip netns exec "$H2")
	RDMA_GID1=$(gid_index sroce1 10.7.0.1) || fail "sroce1 has no RoCE v2 GID for 10.7.0.1"
	RDMA_GID2=$(gid_index sroce2 10.7.0.2) || fail "sroce2 has no RoCE v2 GID for 10.7.0.2"
	echo "two hosts over VLAN 100: sroce1 GID $RDMA_GID1 ($RDMA_IP1), sroce2 GID $RDMA_GID2 ($RDMA_IP2)"
}

# rdma_topo loopback|two_hosts|two_hosts_vlan|interop_rxe_server|
#           interop_sroce_server [MTU]
rdma_topo() {
	case $1 in
	loopback) shift; rdma_loopback "$@" ;;
	loopback_nic) shift; rdma_loopback_nic "$@" ;;
	two_hosts) shift; rdma_two_hosts "$@" ;;
	interop_rxe_server) shift; rdma_interop rxe "$@" ;;
	interop_sroce_server) shift; rdma_interop sroce "$@" ;;
	two_hosts_vlan) shift; rdma_two_hosts_vlan "$@" ;;
	*) fail "no topology '$1'" ;;
	esac
}

# mcast_small_cq_run GROUP: sroce_mcast_cm 20 times in a row, receiver
# on end 1, sender on end 2, each time 4 datagrams into a CQ asked for 2
# entries, all arrived before the receiver's first poll (issue 20: a
# program written for hardware, such as the rdma_verbs manual's multicast
# example, sizes its CQ so; mlx5 and rdma_rxe give 3 entries for 2), while
# two busy loops keep the guest's CPUs loaded.  Every datagram must arrive
# whole, every time.  The cm group runs it, and the twohost group while
# the other guest loads the host too.
mcast_small_cq_run() {
	local group=$1 i pid rc prog=$SROCE_PROGS/sroce_mcast_cm log=/tmp/mcast_cm.recv
	local go=/tmp/mcast_cm.go
	[ -x "$prog" ] || fail "$prog not built (make -C tests/progs)"
	for i in 1 2; do
		(while :; do :; done) &
		RDMA_BG_PIDS+=($!)
	done
	for i in $(seq 20); do
		rm -f "$go"
		mkfifo "$go"
		timeout -k 5 60 "${RDMA_NS1[@]}" "$prog" -b "$RDMA_IP1" -m "$group" \
			<"$go" >"$log" 2>&1 &
		pid=$!
		RDMA_BG_PIDS+=("$pid")
		exec 8>"$go"
		until grep -qx joined "$log"; do
			kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "run $i: the receiver exited before joining"; }
			sleep 0.1
		done
		"${RDMA_NS2[@]}" timeout -k 5 60 "$prog" -b "$RDMA_IP2" -m "$group" -s \
			>/tmp/mcast_cm.send 2>&1 || { cat /tmp/mcast_cm.send; fail "run $i: the sender failed"; }
		echo go >&8
		exec 8>&-
		rc=0
		wait "$pid" || rc=$?
		if [ $rc != 0 ] || ! grep -qx 'received 4 of 4, every byte checked' "$log"; then
			cat "$log"
			fail "run $i: the receiver failed (status $rc)"
		fi
	done
	log "20 runs: 4 of 4 datagrams each, into a CQ of 2 asked entries, under load"
}

# --- server/client pairs --------------------------------------------------
#
# srv_start NAME CMD...     start the server (end 1) in the background under
#                           a timeout; stdout in $SRV_LOG (/tmp/NAME.srv),
#                           stderr in $SRV_LOG.err
# srv_wait_tcp PORT         until it listens on TCP PORT (fails at once if
#                           it exits first)
# srv_wait_cm PORT          until it listens on rdma_cm PORT
# cli_run NAME CMD...       run the client (end 2) under a timeout; on
#                           failure stop the server and fail; stdout in
#                           $CLI_LOG (/tmp/NAME.cli), stderr in $CLI_LOG.err
# srv_finish                the server must exit by itself, successfully,
#                           soon after the client
# Each log is shown prefixed with "server|" / "client|" ("server!" and
# "client!" for stderr: kept apart, they cannot split each other's lines).

srv_show() {
	# Each output ends with a newline, even one cut off mid-line: the
	# runner reads a test's verdict only from a line that begins "FAIL: ".
	sed -e 's/^/  server| /' -e '$a\' "$SRV_LOG" 2>/dev/null || true
	sed -e 's/^/  server! /' -e '$a\' "$SRV_LOG.err" 2>/dev/null || true
}

# last_words LOG: the last two lines with words of LOG's stderr, else of
# LOG, joined by " / ": a verbs tool's last line ("parse WC failed 2") is
# often only the consequence of the one before it (the completion's
# status), and a failure message may be all that is left of a CI run.
last_words() {
	local w
	w=$(grep '[[:alnum:]]' "$1.err" 2>/dev/null | tail -n 2 || true)
	[ -n "$w" ] || w=$(grep '[[:alnum:]]' "$1" 2>/dev/null | tail -n 2 || true)
	echo "${w//$'\n'/ / }"
}

srv_start() {
	SRV_NAME=$1
	shift
	SRV_LOG=/tmp/$SRV_NAME.srv
	printf '+ [server] %s &\n' "${RDMA_NS1[*]} $*" >&2
	timeout -k 5 "$RDMA_TOOL_TIMEOUT" "${RDMA_NS1[@]}" "$@" >"$SRV_LOG" 2>"$SRV_LOG.err" </dev/null &
	SRV_PID=$!
	RDMA_BG_PIDS+=("$SRV_PID")
}

srv_stop() { kill "$SRV_PID" 2>/dev/null || true; wait "$SRV_PID" 2>/dev/null || true; }

# _srv_wait DESC CMD...: poll CMD while the server lives, for
# $RDMA_SRV_WAIT seconds (default 60: a loaded emulated guest can take
# half a minute to start a tool from the 9p root).
: "${RDMA_SRV_WAIT:=60}"
_srv_wait() {
	local desc=$1 deadline=$((SECONDS + RDMA_SRV_WAIT)) st=0
	shift
	until "$@" >/dev/null 2>&1; do
		if ! kill -0 "$SRV_PID" 2>/dev/null; then
			srv_show
			wait "$SRV_PID" || st=$?
			fail "$SRV_NAME: server exited (status $st) before $desc"
		fi
		if [ $SECONDS -ge $deadline ]; then
			srv_stop
			srv_show
			fail "$SRV_NAME: server not $desc after $RDMA_SRV_WAIT s"
		fi
		sleep 0.2
	done
}

_tcp_listening() { "${RDMA_NS1[@]}" ss -Hltn "sport = :$1" | grep -q .; }
_cm_listening() { rdma res show cm_id | grep -E "state LISTEN.*:$1( |$)" | grep -q .; }
srv_wait_tcp() { _srv_wait "listening on TCP port $1" _tcp_listening "$1"; }
srv_wait_cm() { _srv_wait "listening on rdma_cm port $1" _cm_listening "$1"; }

# cli_run NAME CMD...: run the client CMD at end 2, its output in
# $CLI_LOG(.err); its failure fails the test, with the server's output,
# the IB CM's counters and the RDMA CM events (cma_trace_start) shown.
cli_run() {
	local name=$1 rc=0
	shift
	CLI_LOG=/tmp/$name.cli
	printf '+ [client] %s\n' "${RDMA_NS2[*]} $*" >&2
	timeout -k 5 "$RDMA_TOOL_TIMEOUT" "${RDMA_NS2[@]}" "$@" >"$CLI_LOG" 2>"$CLI_LOG.err" </dev/null || rc=$?
	sed -e 's/^/  client| /' -e '$a\' "$CLI_LOG"
	sed -e 's/^/  client! /' -e '$a\' "$CLI_LOG.err"
	if [ $rc != 0 ]; then
		srv_stop
		srv_show
		cm_counters
		cma_trace_show
		[ $rc = 124 ] && fail "$name: client timed out after ${RDMA_TOOL_TIMEOUT}s"
		fail "$name: client failed (exit status $rc): $(last_words "$CLI_LOG")"
	fi
}

# cm_counters: the IB CM's message counters of every device (the port's
# cm_tx_msgs, cm_rx_msgs, cm_tx_retries, cm_rx_duplicates) that are not
# zero: which end sent a REJ, what was resent.  A connection a tool saw
# rejected or never established says no more by itself.
cm_counters() {
	local f
	echo "--- IB CM messages (/sys/class/infiniband/DEV/ports/1/cm_*), those not zero"
	for f in /sys/class/infiniband/*/ports/1/cm_*/*; do
		[ -r "$f" ] && [ "$(cat "$f" 2>/dev/null)" != 0 ] || continue
		echo "  ${f#/sys/class/infiniband/} $(cat "$f")"
	done
	return 0
}

# cma_trace_start: the RDMA CM's events (the kernel's
# rdma_cma:cm_event_handler tracepoint: each event with its status, a
# REJ's reason) recorded from now on, in a trace instance of their own;
# without tracefs or that event, nothing.  cma_trace_stop ends it;
# cma_trace_show prints the events.
CMA_TRACE=
cma_trace_start() {
	local ev=events/rdma_cma/cm_event_handler/enable
	CMA_TRACE=
	modprobe -q rdma_cm 2>/dev/null || true
	tracefs_find >/dev/null 2>&1 && [ -e "$TRACEFS/$ev" ] || return 0
	[ -d "$TRACEFS/instances/sroce-cma" ] || mkdir "$TRACEFS/instances/sroce-cma" || return 0
	CMA_TRACE=$TRACEFS/instances/sroce-cma
	echo 1 >"$CMA_TRACE/$ev"
	: >"$CMA_TRACE/trace"
}
cma_trace_stop() {
	[ -z "$CMA_TRACE" ] || rmdir "$CMA_TRACE" || true
	CMA_TRACE=
}
cma_trace_show() {
	[ -n "$CMA_TRACE" ] || return 0
	echo "--- RDMA CM events (rdma_cma:cm_event_handler: event (number/status))"
	grep -v '^#' "$CMA_TRACE/trace" | sed 's/^ *//' | tail -n 40
	return 0
}

srv_finish() {
	local deadline=$((SECONDS + 30)) rc=0
	while kill -0 "$SRV_PID" 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			# Where each end's connection stands (a server that
			# never saw the disconnect still shows CONNECT).
			echo "--- rdma resource show cm_id"
			rdma res show cm_id 2>&1 || true
			srv_stop
			srv_show
			fail "$SRV_NAME: server still running 30 s after the client finished"
		fi
		sleep 0.2
	done
	wait "$SRV_PID" || rc=$?
	srv_show
	[ $rc = 0 ] || fail "$SRV_NAME: server failed (exit status $rc): $(last_words "$SRV_LOG")"
}

# tool_pair NAME PORT GIDFLAG TOOL ARGS...: TOOL as server on end 1 and as
# client on end 2 (connecting to end 1's address over TCP PORT), each with
# -d DEV and GIDFLAG GIDINDEX, each run through TOOL_WRAP (a command
# prefix, such as env with LD_PRELOAD; none by default).
TOOL_WRAP=()
tool_pair() {
	local name=$1 port=$2 gflag=$3 tool=$4
	shift 4
	srv_start "$name" "${TOOL_WRAP[@]}" "$tool" -d "$RDMA_DEV1" "$gflag" "$RDMA_GID1" "$@"
	srv_wait_tcp "$port"
	cli_run "$name" "${TOOL_WRAP[@]}" "$tool" -d "$RDMA_DEV2" "$gflag" "$RDMA_GID2" "$@" "$RDMA_IP1"
	srv_finish
}

# --- data-verifying traffic shared by the RC groups (rc, faults) ------------------

# counter DEV NAME: the value of DEV's counter NAME ("rdma statistic").
counter() {
	rdma statistic show link "$1/1" |
		awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); f = 1; exit } }
			END { if (!f) exit 1 }'
}

# pingpong NAME TOOL ARGS...: a server/client pair, 100 iterations of 16 KiB,
# with -c: after its last iteration the server checks the first byte of
# each page of its buffer, no more (Documentation/interop.rst); the
# bytes are sroce_rc_test's to check.
# PP_LINGER=MS: each end keeps its QP MS milliseconds after it is done
# (tests/progs/sroce_linger.c), for a wire that loses packets: the tools
# have no closing handshake, and a resend of the other end's last SEND
# must find the QP still there to be acknowledged.
pingpong() {
	local name=$1 tool=$2 n=${PP_ITERS:-100} TOOL_WRAP=()
	shift 2
	[ -z "${PP_LINGER:-}" ] ||
		TOOL_WRAP=(env LD_PRELOAD="$SROCE_PROGS/libsroce_linger.so" SROCE_LINGER_MS="$PP_LINGER")
	tool_pair "$name" 18515 -g "$tool" -c -n "$n" -s 16384 "$@"
	grep -q "^$n iters in" "$CLI_LOG" || fail "$name: the client did not finish $n iterations"
	grep -q "^$n iters in" "$SRV_LOG" || fail "$name: the server did not finish $n iterations"
	! grep -qi 'invalid data' "$SRV_LOG" "$CLI_LOG" || fail "$name: the data arrived corrupted"
}

# pings LOG PREFIX: how many distinct pings 0..999 LOG shows.
pings() { grep -oE "^${2}ping data: rdma-ping-[0-9]+:" "$1" | sort -u | wc -l; }

# rping_env server|client: RPING_ENV, the command prefix (env ...) that
# gives that end of rping RPING_ACK_TIMEOUT and, the client, RPING_LINGER
# (below).
rping_env() {
	local pre=
	[ -z "${RPING_ACK_TIMEOUT:-}" ] || pre=$SROCE_PROGS/libsroce_cm_ack.so
	[ "$1" = server ] || [ -z "${RPING_LINGER:-}" ] ||
		pre="${pre:+$pre }$SROCE_PROGS/libsroce_linger.so"
	RPING_ENV=(env LD_PRELOAD="$pre" SROCE_CM_ACK_TIMEOUT="${RPING_ACK_TIMEOUT:-}"
		SROCE_LINGER_MS="${RPING_LINGER:-}")
}

# rping_pair [N [ADDR]]: N pings (default 1000) to ADDR (default the
# server's address, RDMA_IP1); the client verifies every one (-V: the data
# read back matches) and both ends must have seen them all.
# RPING_LINGER=MS: the client keeps its QP, and so its rdma_cm ID, up to
# MS milliseconds after it disconnects, until the disconnect is complete
# (tests/progs/sroce_linger.c), for a
# wire that loses packets: rping destroys both right after
# rdma_disconnect(), and CM stops resending the DREQ of a destroyed ID, so
# one lost DREQ would leave the server waiting for the disconnect forever.
# CM resends a DREQ after about 5 s (rdma_cm's CM response timeout).
# RPING_ACK_TIMEOUT=T: both ends' QPs get local ACK timeout T
# (tests/progs/sroce_cm_ack.c) instead of rdma_cm's half second.
rping_pair() {
	local n=${1:-1000} addr=${2:-$RDMA_IP1} got
	rping_env server
	srv_start rping "${RPING_ENV[@]}" rping -s -a "$addr" -v -C "$n"
	srv_wait_cm 7174
	rping_env client
	cli_run rping "${RPING_ENV[@]}" rping -c -a "$addr" -v -V -C "$n"
	srv_finish
	got=$(pings "$CLI_LOG" "")
	[ "$got" = "$n" ] || fail "rping $addr: the client saw $got distinct pings, expected $n"
	got=$(pings "$SRV_LOG" "server ")
	[ "$got" = "$n" ] || fail "rping $addr: the server saw $got distinct pings, expected $n"
	! grep -qi 'mismatch' "$CLI_LOG" "$CLI_LOG.err" || fail "rping $addr: data mismatch"
}

# --- captures -------------------------------------------------------------------------

WIRE_CAP=/tmp/wire.pcap

# capture_start NS DEV: dumpcap on DEV in NS into $WIRE_CAP, classic pcap,
# no filter (a RoCEv2 packet with a wrong EtherType must be seen too).
capture_start() {
	rm -f "$WIRE_CAP" /tmp/dumpcap.err
	printf '+ [capture] ip netns exec %s dumpcap -i %s -P &\n' "$1" "$2" >&2
	ip netns exec "$1" dumpcap -q -i "$2" -P -w "$WIRE_CAP" \
		2>/tmp/dumpcap.err </dev/null &
	CAP_PID=$!
	RDMA_BG_PIDS+=("$CAP_PID")
	wait_for 240 grep -q "Capturing on" /tmp/dumpcap.err
}

capture_stop() {
	kill -INT "$CAP_PID"
	wait "$CAP_PID" || { cat /tmp/dumpcap.err; fail "dumpcap failed"; }
	cat /tmp/dumpcap.err
	[ -s "$WIRE_CAP" ] || fail "dumpcap wrote no capture"
}

# rc_cases [-t CASE,...] ARGS...: every case of sroce_rc_test, or those
# named (less rxe's deviations, RXE_RC_TEST_DEVIATIONS, for rxe), each must
# pass or skip, within RC_CASES_TIMEOUT seconds (default 1200) in all.  A
# case skips (in whole or in part) only for a capability the devices do
# not advertise; each skip is a skip_part of the test, which then ends as
# a SKIP, not a PASS.
# SROCE_RC_POLL_MS, if set, is how long the program waits for each
# completion (its -w; 20 s by default), and SROCE_RC_ACK_TIMEOUT the QPs'
# local ACK timeout (its -a; 14, 67 ms, by default): make check-debug
# lengthens both.
# When a completion does not come, the program runs RC_ON_TIMEOUT before
# its QPs go: where every QP's requester and completer stand, the device
# counters, the receive backlogs' drops.
RC_ON_TIMEOUT='echo "--- no completion: rdma -dd res show qp"; rdma -dd res show qp
echo "--- rdma statistic show"; rdma statistic show
echo "--- /proc/net/softnet_stat"; cat /proc/net/softnet_stat'
rc_cases() {
	local prog=$SROCE_PROGS/sroce_rc_test x=() slow=() want=0 rc=0 n c only=
	[ -x "$prog" ] || fail "$prog not built (make -C tests/progs)"
	[ "$RDMA_KIND" = rxe ] && [ -n "${RXE_RC_TEST_DEVIATIONS:-}" ] && x=(-x "$RXE_RC_TEST_DEVIATIONS")
	[ -n "${SROCE_RC_POLL_MS:-}" ] && slow=(-w "$SROCE_RC_POLL_MS")
	[ -n "${SROCE_RC_ACK_TIMEOUT:-}" ] && slow+=(-a "$SROCE_RC_ACK_TIMEOUT")
	[ "${1:-}" = -t ] && only=$2
	for c in $("$prog" -l); do
		[ -z "$only" ] || [[ ",$only," == *",$c,"* ]] || continue
		[[ ",${x[1]:-}," == *",$c,"* ]] || want=$((want + 1))
	done
	printf '+ %s\n' "$prog -d $RDMA_DEV1 -D $RDMA_DEV2 -g $RDMA_GID1 -G $RDMA_GID2 ${x[*]} ${slow[*]} $*" >&2
	SROCE_RC_ON_TIMEOUT=$RC_ON_TIMEOUT timeout -k 5 "${RC_CASES_TIMEOUT:-1200}" \
		"$prog" -d "$RDMA_DEV1" -D "$RDMA_DEV2" -g "$RDMA_GID1" -G "$RDMA_GID2" \
		"${x[@]}" "${slow[@]}" "$@" >/tmp/rc_cases 2>/tmp/rc_cases.err || rc=$?
	cat /tmp/rc_cases
	sed 's/^/  stderr| /' /tmp/rc_cases.err
	[ $rc != 124 ] || fail "sroce_rc_test timed out"
	grep -q '^setup: FAIL' /tmp/rc_cases && fail "sroce_rc_test: $(grep '^setup: FAIL' /tmp/rc_cases)"
	n=$(grep -cE '^[a-z0-9_]+: (pass|skip)' /tmp/rc_cases || true)
	if grep -q ': FAIL' /tmp/rc_cases; then
		fail "sroce_rc_test: $(grep -c ': FAIL' /tmp/rc_cases) failed: $(grep ': FAIL' /tmp/rc_cases | cut -d: -f1 | tr '\n' ' ')(first: $(grep -m 1 ': FAIL' /tmp/rc_cases))"
	fi
	[ $rc = 0 ] || fail "sroce_rc_test exited with status $rc"
	[ "$n" = "$want" ] || fail "sroce_rc_test: $n cases reported, expected $want"
	awk '/^[a-z0-9_]+: skip/' /tmp/rc_cases >/tmp/rc_cases.skipped
	# sroce offers everything the cases use: a case skipped there is a
	# feature lost (the thread and parent domain cases skip on EOPNOTSUPP).
	[ "$RDMA_KIND" != sroce ] || [ ! -s /tmp/rc_cases.skipped ] ||
		fail "sroce_rc_test skipped on sroce: $(tr '\n' ' ' </tmp/rc_cases.skipped)"
	while read -r c; do
		skip_part "sroce_rc_test $c"
	done </tmp/rc_cases.skipped
}
