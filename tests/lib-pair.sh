# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for groups that run in two guests at once (header
# "where=pair"; scripts/vm/run-pair.sh boots them), sourced after
# tests/lib.sh and tests/lib-rdma.sh.  Both guests run the same group, the
# same tests in the same order; SROCE_PAIR_ROLE says which end this is:
#
#   guest a: the server end ("1")          guest b: the client end ("2")
#   sroce0 on eth0                         sroce0 on eth0
#   10.8.0.1/24, fd00:8::1/64  ========== 10.8.0.2/24, fd00:8::2/64
#               virtio-net on a QEMU socket netdev (the "wire")
#
# The guests wait for each other through files in /run/pair, a share both
# mount: pair_signal NAME leaves NAME.<role> there, pair_wait NAME waits for
# the other guest's NAME.  Names carry the test's name, so what a test left
# behind cannot satisfy a wait in a later one.

PAIR_DIR=/run/pair
PAIR_ROLE=${SROCE_PAIR_ROLE:-}
: "${PAIR_WAIT_TIMEOUT:=300}"

pair_other() { [ "$PAIR_ROLE" = a ] && echo b || echo a; }

# pair_signal NAME [TEXT]: tell the other guest NAME happened.
pair_signal() {
	echo "${2:-ok}" >"$PAIR_DIR/$SROCE_PAIR_TEST.$1.$PAIR_ROLE.tmp"
	mv "$PAIR_DIR/$SROCE_PAIR_TEST.$1.$PAIR_ROLE.tmp" "$PAIR_DIR/$SROCE_PAIR_TEST.$1.$PAIR_ROLE"
}

# pair_wait NAME: until the other guest signalled NAME; prints its TEXT.
# Fails at once if the other guest's side of the test failed (pair_on_exit).
pair_wait() {
	local other f failed deadline=$((SECONDS + PAIR_WAIT_TIMEOUT))
	other=$(pair_other)
	f=$PAIR_DIR/$SROCE_PAIR_TEST.$1.$other
	failed=$PAIR_DIR/$SROCE_PAIR_TEST.failed.$other
	until [ -e "$f" ]; do
		if [ -e "$failed" ]; then
			fail "guest $other's side of this test failed ($(cat "$failed")) before '$1'"
		fi
		[ $SECONDS -lt $deadline ] || fail "guest $other did not reach '$1' within ${PAIR_WAIT_TIMEOUT}s"
		sleep 0.5
	done
	cat "$f"
}

# pair_sync NAME: both guests reach NAME before either goes on.
pair_sync() { pair_signal "$1"; pair_wait "$1" >/dev/null; }

# A failing test tells the other guest at once (from the EXIT trap), and
# leaves what helps to see why: the device's counters and, if the group
# defines pair_keep_evidence, whatever that keeps (e.g. a capture).
pair_on_exit() {
	local rc=$?
	if [ $rc != 0 ] && [ $rc != 4 ]; then
		echo "exit status $rc" >"$PAIR_DIR/$SROCE_PAIR_TEST.failed.$PAIR_ROLE"
		rdma statistic show link sroce0/1 2>/dev/null
	fi
	# What the group built on the device goes before the device does.
	if declare -F pair_group_cleanup >/dev/null; then
		pair_group_cleanup
	fi
	rdma_cleanup
	if [ $rc != 0 ] && [ $rc != 4 ] && declare -F pair_keep_evidence >/dev/null; then
		pair_keep_evidence
	fi
	return 0
}

# pair_topo MTU [KIND_A KIND_B]: this guest's end of the wire, eth0 at
# MTU, an RDMA device on it: sroce0, or rxe0 where this guest's KIND
# (default sroce) says rxe; describes both ends as rdma_topo does
# (RDMA_DEV1/2, RDMA_GID1/2,
# RDMA_IP1/2, RDMA_IP6_1/2), the GIDs of the IPv4 addresses, and
# RDMA_GID6_1/2, the GIDs of the IPv6 ones.  The other end's GID indexes
# come over /run/pair.
pair_topo() {
	local mtu=$1 kind_a=${2:-sroce} kind_b=${3:-sroce} kind dev n o mac gid gid6 other
	[ -n "$PAIR_ROLE" ] || skip "not in a two-guest run (scripts/vm/run-pair.sh)"
	# The test function (test_*) calling us, however deep: it names the
	# signal files.
	SROCE_PAIR_TEST=
	for n in "${FUNCNAME[@]}"; do
		[[ $n == test_* ]] && SROCE_PAIR_TEST=$n && break
	done
	[ -n "$SROCE_PAIR_TEST" ] || fail "pair_topo must be called from a test_* function"
	trap pair_on_exit EXIT
	[ "$PAIR_ROLE" = a ] && n=1 || n=2
	run modprobe virtio_net
	wait_for 10 ip link show eth0
	run ip addr flush dev eth0
	run ip link set eth0 mtu "$mtu"
	run ip addr add "10.8.0.$n/24" dev eth0
	run ip addr add "fd00:8::$n/64" dev eth0 nodad
	run ip link set eth0 up
	# The other guest as a permanent neighbour (pin_neighbours in lib.sh
	# says why): a stalled guest answers ND late, after the one second
	# ib_core gives ibv_modify_qp to RTR.  MACs as run-pair.sh gives them.
	[ "$PAIR_ROLE" = a ] && o=2 || o=1
	mac=52:54:00:5e:00:0$([ $o = 1 ] && echo a || echo b)
	run ip neigh replace "10.8.0.$o" lladdr "$mac" dev eth0 nud permanent
	run ip neigh replace "fd00:8::$o" lladdr "$mac" dev eth0 nud permanent
	[ "$PAIR_ROLE" = a ] && kind=$kind_a || kind=$kind_b
	if [ "$kind" = rxe ]; then
		# rxe holds UDP 4791 from its loading on: no sroce here.
		sroce_loaded && run rmmod sroce
		RDMA_RXE_USED=1
		run modprobe rdma_rxe
		run rdma link add rxe0 type rxe netdev eth0
		dev=rxe0
	else
		sroce_load
		# Each guest has one emulated CPU on a shared host and stalls for
		# up to a second now and then, longer than the 67 ms ACK timeout
		# ibv_rc_pingpong fixes: a 1 s floor (code 18), 8 s of silence
		# before retry_cnt 7 runs out (Documentation/interop.rst).
		echo 18 >/sys/module/sroce/parameters/min_ack_timeout
		run rdma link add sroce0 type sroce netdev eth0
		dev=sroce0
	fi
	wait_for 10 gid_present "$dev" "::ffff:10.8.0.$n"
	wait_for 10 gid_present "$dev" "fd00:8::$n"
	gid=$(gid_index "$dev" "10.8.0.$n") || fail "no RoCE v2 GID for 10.8.0.$n"
	gid6=$(gid_index "$dev" "fd00:8::$n") || fail "no RoCE v2 GID for fd00:8::$n"
	pair_signal topo "$gid $gid6"
	read -r -a other <<<"$(pair_wait topo)"
	RDMA_DEV1=${kind_a}0 RDMA_DEV2=${kind_b}0 RDMA_NS1=() RDMA_NS2=()
	RDMA_IP1=10.8.0.1 RDMA_IP2=10.8.0.2 RDMA_IP6_1=fd00:8::1 RDMA_IP6_2=fd00:8::2
	if [ $n = 1 ]; then
		RDMA_GID1=$gid RDMA_GID6_1=$gid6 RDMA_GID2=${other[0]} RDMA_GID6_2=${other[1]}
	else
		RDMA_GID2=$gid RDMA_GID6_2=$gid6 RDMA_GID1=${other[0]} RDMA_GID6_1=${other[1]}
	fi
	# The first packets must not wait for neighbour discovery to time out.
	wait_for 30 ping_other
	echo "pair: guest $PAIR_ROLE, eth0 mtu $mtu, GIDs $RDMA_GID1/$RDMA_GID6_1 (a) $RDMA_GID2/$RDMA_GID6_2 (b)"
}

# The image has no ping: a TCP connection attempt (refused is fine) fills
# the neighbour table both ways.
ping_other() {
	local peer
	[ "$PAIR_ROLE" = a ] && peer=10.8.0.2 || peer=10.8.0.1
	timeout 2 bash -c "exec 3<>/dev/tcp/$peer/9" 2>/dev/null || true
	ip neigh show "$peer" dev eth0 | has 'REACHABLE|STALE|DELAY|PERMANENT'
}

# pair_wait_server NAME: pair_wait for the server's end; if the client's
# end failed, show what the server said before failing too.
pair_wait_server() {
	local why
	if ! why=$(pair_wait "$1" 2>&1 >/dev/null); then
		srv_stop
		srv_show
		fail "${why#FAIL: }"
	fi
}

# pair_tool NAME PORT GIDFLAG GID_A GID_B TOOL ARGS...: TOOL as server in
# guest a, as client in guest b (connecting to ADDR=$PAIR_SERVER_ADDR),
# each run through TOOL_WRAP as tool_pair does (lib-rdma.sh).
# Each side checks its own end; both must succeed.
pair_tool() {
	local name=$1 port=$2 gflag=$3 ga=$4 gb=$5 tool=$6
	shift 6
	if [ "$PAIR_ROLE" = a ]; then
		srv_start "$name" "${TOOL_WRAP[@]}" "$tool" -d sroce0 "$gflag" "$ga" "$@"
		srv_wait_tcp "$port"
		pair_signal "$name.listening"
		pair_wait_server "$name.done"
		srv_finish
		PAIR_LOG=$SRV_LOG
	else
		pair_wait "$name.listening" >/dev/null
		cli_run "$name" "${TOOL_WRAP[@]}" "$tool" -d sroce0 "$gflag" "$gb" "$@" \
			"$PAIR_SERVER_ADDR"
		pair_signal "$name.done"
		PAIR_LOG=$CLI_LOG
	fi
}

# pair_cm NAME PORT SERVER_CMD -- CLIENT_CMD: an rdma_cm pair.
pair_cm() {
	local name=$1 port=$2 srv=() cli=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	if [ "$PAIR_ROLE" = a ]; then
		srv_start "$name" "${srv[@]}"
		srv_wait_cm "$port"
		pair_signal "$name.listening"
		pair_wait_server "$name.done"
		srv_finish
		PAIR_LOG=$SRV_LOG
	else
		pair_wait "$name.listening" >/dev/null
		cli_run "$name" "${cli[@]}"
		pair_signal "$name.done"
		PAIR_LOG=$CLI_LOG
	fi
}

# pair_ipv6: from now on the ends' IPv6 addresses and GIDs are the ones
# tools use (RDMA_IP1/2, RDMA_GID1/2), as rdma_ipv6 addrs does in one guest.
pair_ipv6() {
	RDMA_GID1=$RDMA_GID6_1 RDMA_GID2=$RDMA_GID6_2
	RDMA_IP1=$RDMA_IP6_1 RDMA_IP2=$RDMA_IP6_2
	echo "IPv6: GIDs $RDMA_GID1 (a) $RDMA_GID2 (b); tools connect to $RDMA_IP1"
}

# pair_sum NAME "N M ...": each number added to the other guest's for NAME.
pair_sum() {
	local mine other i out=()
	read -r -a mine <<<"$2"
	pair_signal "$1" "$2"
	read -r -a other <<<"$(pair_wait "$1")"
	for i in "${!mine[@]}"; do out+=($((mine[i] + ${other[i]:-0}))); done
	echo "${out[*]}"
}

# --- one program's two ends in two guests --------------------------------
#
# pair_split: for the rest of the test, lib-rdma.sh's server and client
# helpers (srv_start, the srv_wait_* family, cli_run, srv_finish,
# srv_stop) act across the guests, so that a helper written for two ends
# in one guest (tests/lib-apps.sh) runs unchanged with its server in
# guest a and its client in guest b.  Each guest does its own end and
# waits for the other's; the client's log reaches guest a, and the
# server's (at srv_finish) guest b, through /run/pair, so that both guests
# check the same output.  Both guests run the same helpers in the same
# order: the Nth server (client) of the test is the same in both
# (PAIR_SRV_N, PAIR_CLI_N).
PAIR_SPLIT=
pair_split() { PAIR_SPLIT=1 PAIR_SRV_N=0 PAIR_CLI_N=0; }

for _f in srv_start srv_stop _srv_wait cli_run srv_finish; do
	eval "_local_$(declare -f "$_f")"
done
unset _f

# _pair_log_put NAME FILE / _pair_log_get NAME FILE: FILE and FILE.err
# through /run/pair.
_pair_log_put() {
	cp "$2" "$PAIR_DIR/$SROCE_PAIR_TEST.$1.log"
	cp "$2.err" "$PAIR_DIR/$SROCE_PAIR_TEST.$1.log.err"
}
_pair_log_get() {
	cp "$PAIR_DIR/$SROCE_PAIR_TEST.$1.log" "$2"
	cp "$PAIR_DIR/$SROCE_PAIR_TEST.$1.log.err" "$2.err"
}

srv_start() {
	[ -n "$PAIR_SPLIT" ] || { _local_srv_start "$@"; return; }
	PAIR_SRV_N=$((PAIR_SRV_N + 1))
	if [ "$PAIR_ROLE" = a ]; then
		_local_srv_start "$@"
	else
		SRV_NAME=$1 SRV_LOG=/tmp/$1.srv SRV_PID=
	fi
}

_srv_wait() {
	[ -n "$PAIR_SPLIT" ] || { _local__srv_wait "$@"; return; }
	if [ "$PAIR_ROLE" = a ]; then
		_local__srv_wait "$@"
		pair_signal "srv$PAIR_SRV_N.up"
	else
		pair_wait "srv$PAIR_SRV_N.up" >/dev/null
	fi
}

# Guest b has no server to stop: guest a stops its own.
srv_stop() {
	[ -n "$PAIR_SPLIT" ] && [ "$PAIR_ROLE" = b ] && return 0
	_local_srv_stop
}

cli_run() {
	[ -n "$PAIR_SPLIT" ] || { _local_cli_run "$@"; return; }
	PAIR_CLI_N=$((PAIR_CLI_N + 1))
	CLI_LOG=/tmp/$1.cli
	if [ "$PAIR_ROLE" = b ]; then
		_local_cli_run "$@"
		_pair_log_put "cli$PAIR_CLI_N" "$CLI_LOG"
		pair_signal "cli$PAIR_CLI_N"
	else
		pair_wait_server "cli$PAIR_CLI_N"
		_pair_log_get "cli$PAIR_CLI_N" "$CLI_LOG"
		echo "+ [client in guest b] $1: its output is in $CLI_LOG"
	fi
}

srv_finish() {
	[ -n "$PAIR_SPLIT" ] || { _local_srv_finish; return; }
	if [ "$PAIR_ROLE" = a ]; then
		_local_srv_finish
		_pair_log_put "srv$PAIR_SRV_N" "$SRV_LOG"
		pair_signal "srv$PAIR_SRV_N.done"
	else
		pair_wait "srv$PAIR_SRV_N.done" >/dev/null
		_pair_log_get "srv$PAIR_SRV_N" "$SRV_LOG"
	fi
}
