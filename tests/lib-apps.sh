#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The user-space stacks for the test groups, sourced after tests/lib.sh
# and tests/lib-rdma.sh (apps: one device and two namespaces; twohost: two
# guests, with lib-pair.sh's pair_split): qperf, UCX (ucx_info,
# ucx_perftest over UCT and UCP, io_demo) and libfabric (fi_info,
# fi_pingpong), each run as a server on end 1 and a client on end 2; Open
# MPI and MPICH running tests/progs/sroce_mpi_test, and NetPIPE (apps
# only); and the proof that sroce carried what they moved (apps_moved).
# The settings each needs: Documentation/middleware/.

# Only the verbs transports: no shared memory, CMA, TCP or self.
UCX_VERBS_TLS=rc_verbs,ud_verbs

# Open MPI refuses root without these; mpirun and targetcli write to $HOME.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HOME=/tmp/sroce-apps-home
mkdir -p "$HOME"

MPI_TEST=$SROCE_PROGS/sroce_mpi_test

# --- proof that the device carried it ----------------------------------------

# apps_devices: the test's sroce devices, each once.
apps_devices() {
	echo "$RDMA_DEV1"
	[ "$RDMA_DEV2" = "$RDMA_DEV1" ] || echo "$RDMA_DEV2"
}

# apps_packets: "SENT RECEIVED", sroce's packet counters summed over the
# test's devices.
apps_packets() {
	local d tx=0 rx=0 v
	for d in $(apps_devices); do
		v=$(counter "$d" tx_packets) || fail "$d has no tx_packets counter"
		tx=$((tx + v))
		v=$(counter "$d" rx_packets) || fail "$d has no rx_packets counter"
		rx=$((rx + v))
	done
	echo "$tx $rx"
}

# apps_mark: what apps_moved counts from.
apps_mark() { read -r APPS_TX0 APPS_RX0 <<<"$(apps_packets)"; }

# apps_mtu: the active path MTU of the test's first device, in bytes.
apps_mtu() {
	ibv_devinfo -d "$RDMA_DEV1" | awk '/active_mtu:/ { print $2; exit }'
}

# apps_moved STACK BYTES: since apps_mark, sroce sent and received at least
# one packet per path MTU of BYTES: the payload went through the device,
# not through shared memory or TCP.  Across two guests (pair_split) the
# packets are both guests' devices'.
APPS_MOVED_N=0
apps_moved() {
	local what=$1 bytes=$2 tx rx mtu need
	read -r tx rx <<<"$(apps_packets)"
	tx=$((tx - APPS_TX0)) rx=$((rx - APPS_RX0))
	if [ -n "${PAIR_SPLIT:-}" ]; then
		APPS_MOVED_N=$((APPS_MOVED_N + 1))
		read -r tx rx <<<"$(pair_sum "moved$APPS_MOVED_N" "$tx $rx")"
	fi
	mtu=$(apps_mtu)
	[ -n "$mtu" ] && [ "$mtu" -gt 0 ] || fail "no active MTU for $RDMA_DEV1"
	need=$(((bytes + mtu - 1) / mtu))
	log "$what: $bytes bytes of payload; sroce sent $tx and received $rx packets (at least $need needed at path MTU $mtu)"
	[ "$bytes" -gt 0 ] || fail "$what: no payload to account for"
	[ "$tx" -ge "$need" ] && [ "$rx" -ge "$need" ] ||
		fail "$what: sroce carried $tx/$rx packets, fewer than the $need that $bytes bytes need: the data did not go through the RDMA device"
}

# --- address families ----------------------------------------------------------

# apps_ipv6: from now on both ends use their IPv6 GIDs and addresses
# (rdma_ipv6, or pair_ipv6 in two guests), and the stacks that take a GID
# index are given it.
APPS_IPV6=
apps_ipv6() {
	if [ -n "${PAIR_ROLE:-}" ]; then
		pair_ipv6
	else
		rdma_ipv6 addrs
	fi
	APPS_IPV6=1
}

# ucx_env END: UCX's settings for end 1 or 2: only the verbs transports, on
# the end's device, and on IPv6 the GID index (UCX picks an IPv4 one by
# itself).  Words for env(1) or for the MPI launchers.
ucx_env() {
	local dev gid
	if [ "$1" = 1 ]; then dev=$RDMA_DEV1 gid=$RDMA_GID1; else dev=$RDMA_DEV2 gid=$RDMA_GID2; fi
	echo "UCX_TLS=$UCX_VERBS_TLS UCX_NET_DEVICES=$dev:1${APPS_IPV6:+ UCX_IB_GID_INDEX=$gid}"
}

# --- qperf ---------------------------------------------------------------------

# qperf's RC tests (with the connection manager, -cm1, its only mode on
# RoCE: the CM takes the GID from the server's address), 2 s each, with
# their byte counts (-vvs).  Timed, not counted: with -n, qperf 0.4.11's
# latency tests ignore the count ("-n set but not used") and the client
# then waits forever, over rdma_rxe as over sroce.  Its server's child for each test segfaults when it
# closes (rdma_destroy_qp() on the listening ID, whose QP is NULL; fixed
# upstream after 0.4.11 by "Use the rdma_cm_id from CMINFO rather than
# from the event"), after the results are in: the kernel logs it, the
# test does not depend on it.
#
# Its server also tells the client the port of each test's RDMA CM
# listener before it listens there (fixed upstream after 0.4.11 by "Fix
# rdmacm race"): a client that connects in between has its REQ rejected
# by the server's CM with reason 8, invalid service ID, and fails with
# "unexpected event from RDMA CM: Event rejected" (in December 2026's full
# runs: between namespaces, between guests, and twice in a row at one
# test).  The server runs with libsroce_qperf_listen.so preloaded
# (tests/progs/sroce_qperf_listen.c), which has it listen as soon as it
# has bound.  A failed client's log shows its RDMA CM events.
QPERF_TESTS="rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw rc_rdma_read_lat ver_rc_compare_swap ver_rc_fetch_add"

apps_qperf() {
	local t bytes=0 b
	srv_start qperf env LD_PRELOAD="$SROCE_PROGS/libsroce_qperf_listen.so" qperf
	srv_wait_tcp 19765
	apps_mark
	cma_trace_start
	# shellcheck disable=SC2086
	cli_run qperf qperf -cm1 -vvs -t 2 "$RDMA_IP1" $QPERF_TESTS
	cma_trace_stop
	srv_stop
	for t in $QPERF_TESTS; do
		grep -q "^$t:" "$CLI_LOG" || fail "qperf: no result for $t"
	done
	# The bytes each test delivered, as qperf counts them (-vvs; both
	# ends' for the latency tests).  Not what it sent: a timed bandwidth
	# test counts the messages it posted, and those still in flight when
	# time is up are never received (across two guests, half of them).
	b=$(awk '/^[a-z_]+:$/ { t = $1 } /recv_bytes/ { print t, $0 }' "$CLI_LOG")
	echo "$b"
	bytes=$(awk '$2 ~ /recv_bytes/ { v = $4; u = $5
		if (u == "KB") v *= 1000; else if (u == "MB") v *= 1000000; else if (u == "GB") v *= 1e9
		s += v } END { printf "%d", s * 0.99 }' <<<"$b")
	apps_moved qperf "$bytes"
}

# --- UCX -------------------------------------------------------------------------

# ucx_devices: ucx_info -d on end 1 lists its device with both verbs
# transports, and ud_verbs without put or get (UD has no RDMA).
ucx_devices() {
	run "${RDMA_NS1[@]}" ucx_info -d >/tmp/ucx_info.d 2>&1 || { cat /tmp/ucx_info.d; fail "ucx_info -d failed"; }
	awk -v d="$RDMA_DEV1:1" '/Transport:/ { tl = $3 } /Device:/ { if ($3 == d) print tl }' \
		/tmp/ucx_info.d | sort -u >/tmp/ucx_info.tls
	echo "ucx_info -d: transports on $RDMA_DEV1:1: $(tr '\n' ' ' </tmp/ucx_info.tls)"
	grep -qx rc_verbs /tmp/ucx_info.tls || fail "ucx_info -d does not list rc_verbs on $RDMA_DEV1:1"
	grep -qx ud_verbs /tmp/ucx_info.tls || fail "ucx_info -d does not list ud_verbs on $RDMA_DEV1:1"
}

# perftest_final LOG: the iteration count of ucx_perftest's "Final:" line.
perftest_final() { awk '/^Final:/ { print $2 }' "$1" | tail -n 1; }

# ucx_pair NAME ENV1 ENV2 ARGS...: ucx_perftest server on end 1 with the
# words ENV1 as its environment, client on end 2 with ENV2 and ARGS (which
# hold -n N); the client must report N iterations.
ucx_pair() {
	local name=$1 e1=$2 e2=$3 n got six=()
	shift 3
	n=$(getopt_value -n "$@")
	[ -n "$APPS_IPV6" ] && six=(-6)
	# shellcheck disable=SC2086
	srv_start "$name" env $e1 ucx_perftest "${six[@]}" "${UCT_ARGS1[@]}"
	srv_wait_tcp 13337
	# shellcheck disable=SC2086
	cli_run "$name" env $e2 ucx_perftest "${six[@]}" "$RDMA_IP1" "${UCT_ARGS2[@]}" "$@"
	srv_finish
	got=$(perftest_final "$CLI_LOG")
	[ "$got" = "$n" ] || fail "$name: ucx_perftest reported ${got:-no} iterations, expected $n"
}

# getopt_value OPT ARGS...: the word after OPT in ARGS.
getopt_value() {
	local o=$1
	shift
	while [ $# -gt 1 ]; do
		[ "$1" = "$o" ] && { echo "$2"; return; }
		shift
	done
}

# uct TL TEST SIZE N [LAYOUT]: one UCT test over transport TL between the
# ends' devices; returns (in APPS_BYTES) the payload it moved one way.
uct() {
	local tl=$1 test=$2 size=$3 n=$4 layout=${5:-} lay=()
	[ -n "$layout" ] && lay=(-D "$layout")
	UCT_ARGS1=(-d "$RDMA_DEV1:1" -x "$tl")
	UCT_ARGS2=(-d "$RDMA_DEV2:1" -x "$tl")
	ucx_pair "uct_${tl}_$test" "${APPS_IPV6:+UCX_IB_GID_INDEX=$RDMA_GID1}" \
		"${APPS_IPV6:+UCX_IB_GID_INDEX=$RDMA_GID2}" -t "$test" -s "$size" -n "$n" -w 10 "${lay[@]}"
	APPS_BYTES=$((APPS_BYTES + size * n))
}

apps_ucx_uct() {
	ucx_devices
	APPS_BYTES=0
	apps_mark
	uct rc_verbs am_lat 64 1000
	uct rc_verbs put_bw 65536 200 zcopy
	uct rc_verbs get 65536 200 zcopy
	uct ud_verbs am_lat 64 1000
	uct ud_verbs am_bw 1000 1000 bcopy
	apps_moved "UCT (rc_verbs, ud_verbs)" "$APPS_BYTES"
}

# ucp TEST SIZE N: one UCP test; UCP picks its transports from UCX_TLS.
ucp() {
	UCT_ARGS1=() UCT_ARGS2=()
	ucx_pair "ucp_$1" "$(ucx_env 1)" "$(ucx_env 2)" -t "$1" -s "$2" -n "$3" -w 5
	APPS_BYTES=$((APPS_BYTES + $2 * $3))
}

# The protocol UCP chooses for tagged messages of 1 MiB with these
# settings: rendezvous (ucx_info's endpoint configuration, tag_send line).
ucp_rndv_at_1m() {
	local line
	# shellcheck disable=SC2046
	line=$("${RDMA_NS2[@]}" env $(ucx_env 2) ucx_info -e -u t 2>&1 | grep -m1 'tag_send:' || true)
	echo "UCP tagged send protocols: $line"
	awk -v l="$line" 'BEGIN {
		n = split(l, w, /\.\./)
		for (i = 1; i < n; i++)
			if (w[i] ~ /rndv/ && w[i + 1] + 0 <= 1048576) { print "rndv from " w[i + 1]; exit 0 }
		exit 1 }' || fail "UCP does not use rendezvous for 1 MiB messages: $line"
}

# io_demo -q: UCX's own data and transaction check, reads and writes of
# 1 byte to 256 KiB.
ucx_io_demo() {
	local ops
	# shellcheck disable=SC2086
	# The server refuses (asserts) requests above its own -d maximum.
	srv_start io_demo env $(ucx_env 1) io_demo -q -d 1:262144
	srv_wait_any 1337
	# shellcheck disable=SC2086
	cli_run io_demo env $(ucx_env 2) io_demo -q -i 200 -d 1:262144 -o read,write "$RDMA_IP1"
	srv_stop
	# Its verdict, and all 200 operations done; a receive cancelled as it
	# disconnects at the end is part of its teardown, not an error.
	grep -q "Client exit with status 'OK'" "$CLI_LOG" || fail "io_demo: the client did not exit OK"
	# It reports each print interval's operations (and one last report
	# for the rest): together they must be all 200.
	ops=$(awk '/\[DEMO\] total min:/ { for (i = 1; i <= NF; i++)
		if ($i ~ /^total:/) { sub(/^total:/, "", $i); s += $i; break } }
		END { print s + 0 }' "$CLI_LOG")
	[ "$ops" = 200 ] || fail "io_demo: $ops of 200 operations reported done"
	# Each end checks the data it receives (-q) and reports "data
	# corruption" (then aborts) on a wrong byte.
	! grep -qi 'corruption' "$CLI_LOG" "$CLI_LOG.err" "$SRV_LOG" "$SRV_LOG.err" ||
		fail "io_demo: $(grep -hi 'corruption' "$CLI_LOG" "$CLI_LOG.err" "$SRV_LOG" "$SRV_LOG.err" | head -n 1)"
}

apps_ucx_ucp() {
	APPS_BYTES=0
	ucp_rndv_at_1m
	apps_mark
	ucp tag_lat 8 1000
	ucp tag_bw 1048576 20
	ucp ucp_put_bw 65536 200
	ucp stream_bw 65536 200
	apps_moved "UCP (rc_verbs, ud_verbs)" "$APPS_BYTES"
	# io_demo 1.13 takes its server as IPv4 or IPv6 digits cut at the
	# first ':' (ADDR:PORT), so it cannot name an IPv6 server: over IPv6
	# UCP's data is checked by sroce_mpi_test on Open MPI's and MPICH's
	# pml ucx (test_ompi_ucx_two_hosts_ipv6, test_mpich_ucx_two_hosts_ipv6).
	if [ -z "$APPS_IPV6" ]; then
		ucx_io_demo
	fi
}

# srv_wait_any PORT: until the server listens on PORT, on TCP or rdma_cm.
_any_listening() { _tcp_listening "$1" || _cm_listening "$1"; }
srv_wait_any() { _srv_wait "listening on port $1" _any_listening "$1"; }

# --- libfabric -------------------------------------------------------------------

# fi_domains: fi_info -p verbs lists sroce's msg and dgram domains, and
# the rxm and rxd utility providers give rdm endpoints over them.
fi_domains() {
	local d=$RDMA_DEV1 p
	run "${RDMA_NS1[@]}" fi_info -p verbs >/tmp/fi_info 2>&1 || { cat /tmp/fi_info; fail "fi_info -p verbs failed"; }
	grep -E 'domain:|type:' /tmp/fi_info | paste - - | sort -u
	grep -qE "domain: $d\$" /tmp/fi_info || fail "fi_info -p verbs lists no domain $d"
	grep -qE "domain: $d-dgram\$" /tmp/fi_info || fail "fi_info -p verbs lists no domain $d-dgram"
	for p in 'verbs;ofi_rxm' 'verbs;ofi_rxd'; do
		run "${RDMA_NS1[@]}" fi_info -p "$p" -t FI_EP_RDM >/tmp/fi_info 2>&1 ||
			{ cat /tmp/fi_info; fail "fi_info -p '$p' -t FI_EP_RDM failed"; }
		grep -q "domain: $d" /tmp/fi_info || fail "fi_info -p '$p' offers no rdm endpoint on $d"
	done
}

# fi_pp NAME PROV EP SUFFIX: fi_pingpong -c (the receiver checks every
# byte), each end on its own device's domain (the device's name and
# SUFFIX, "" or "-dgram"), with the default sizes (64 bytes to 1 MiB,
# fewer for datagrams) and 10 iterations each; APPS_BYTES grows by what
# it moved.
fi_pp() {
	local name=$1 prov=$2 ep=$3 sfx=$4 six=() env1=() env2=() b
	[ -n "$APPS_IPV6" ] && six=(-6)
	# Datagrams carry the GID in their address: the index is named (the
	# provider's default, 0, is the link-local one).
	if [ "$ep" != msg ]; then
		env1=(FI_VERBS_GID_IDX="$RDMA_GID1") env2=(FI_VERBS_GID_IDX="$RDMA_GID2")
	fi
	srv_start "$name" env "${env1[@]}" fi_pingpong -p "$prov" -e "$ep" -d "$RDMA_DEV1$sfx" -c "${six[@]}"
	srv_wait_tcp 47592
	cli_run "$name" env "${env2[@]}" fi_pingpong -p "$prov" -e "$ep" -d "$RDMA_DEV2$sfx" -c "${six[@]}" "$RDMA_IP1"
	srv_finish
	! grep -q 'Error at iteration' "$SRV_LOG" "$CLI_LOG" || fail "$name: fi_pingpong found corrupted data"
	# "bytes #sent #ack total time MB/sec ...": per size, sent == acked.
	b=$(awk '$1 ~ /^[0-9.]+[kmg]?$/ && $3 ~ /^=/ { n++; v = $1; m = 1
		if (v ~ /k$/) m = 1024; else if (v ~ /m$/) m = 1048576
		sub(/[kmg]$/, "", v); s += v * m * $2 * 2 } END { printf "%d %d", n, s }' "$CLI_LOG")
	[ "${b% *}" -gt 0 ] || fail "$name: fi_pingpong reported no completed size"
	echo "$name: ${b% *} sizes, every one sent and acknowledged"
	APPS_BYTES=$((APPS_BYTES + ${b#* }))
}

# apps_libfabric [no-rxd]: fi_info, and fi_pingpong on verbs msg and
# dgram, rxm and (unless told not to) rxd.
apps_libfabric() {
	local what="verbs msg and dgram, rxm, rxd"
	fi_domains
	APPS_BYTES=0
	apps_mark
	fi_pp fi_verbs_msg verbs msg ""
	fi_pp fi_verbs_dgram verbs dgram -dgram
	fi_pp fi_verbs_rxm 'verbs;ofi_rxm' rdm ""
	if [ "${1:-}" = no-rxd ]; then
		what="verbs msg and dgram, rxm"
	else
		fi_pp fi_verbs_rxd 'verbs;ofi_rxd' rdm -dgram
	fi
	apps_moved "libfabric ($what)" "$APPS_BYTES"
}

# --- MPI ---------------------------------------------------------------------------
#
# Across two hosts the group names how the launchers reach the other one:
# APPS_RSH (an ssh stand-in), APPS_HOST1 and APPS_HOST2 (the ends' IPv4
# addresses, for the launchers' own TCP, whatever family the RDMA traffic
# uses), APPS_MPI_NET (their subnet) and APPS_MPI_IFACE (end 1's
# interface on it).

# apps_two_hosts: the ends are two hosts (two namespaces), not one device.
apps_two_hosts() { [ "$RDMA_DEV1" != "$RDMA_DEV2" ]; }

# mpi_contexts RANKS CMD...: the MPMD tail of an mpirun command line:
# RANKS ranks of CMD on end 1 (loopback), or half on each end's host (two
# namespaces), each context with its end's settings from MPI_ENV_FN
# (a function: END -> "NAME=VALUE" words) in the launcher's syntax
# (MPI_ENV_FLAG: -x for Open MPI, -env for MPICH).
mpi_contexts() {
	local n=$1 e h w
	shift
	MPI_ARGS=()
	if ! apps_two_hosts; then
		MPI_ARGS+=(-np "$n")
		for w in $($MPI_ENV_FN 1); do mpi_env_arg "$w"; done
		MPI_ARGS+=("$@")
		return
	fi
	for e in 1 2; do
		[ "$e" = 2 ] && MPI_ARGS+=(:)
		h=$([ "$e" = 1 ] && echo "$APPS_HOST1" || echo "$APPS_HOST2")
		MPI_ARGS+=(-np $((n / 2)))
		[ "$MPI_ENV_FLAG" = -x ] && MPI_ARGS+=(-host "$h:$((n / 2))")
		for w in $($MPI_ENV_FN "$e"); do mpi_env_arg "$w"; done
		MPI_ARGS+=("$@")
	done
}

mpi_env_arg() {
	if [ "$MPI_ENV_FLAG" = -x ]; then
		MPI_ARGS+=(-x "$1")
	else
		MPI_ARGS+=(-env "${1%%=*}" "${1#*=}")
	fi
}

# Open MPI's launch settings: across two hosts, the rsh launcher through
# APPS_RSH and its daemons' TCP on APPS_MPI_NET.
ompi_launch() {
	OMPI=(mpirun.openmpi --bind-to none --oversubscribe)
	if apps_two_hosts; then
		OMPI+=(--mca plm_rsh_agent "$APPS_RSH" --mca oob_tcp_if_include "$APPS_MPI_NET")
	fi
}

# mpi_check NAME: sroce_mpi_test's verdict in the client log, and the
# bytes it moved between ranks (APPS_BYTES).
mpi_check() {
	grep -q '^sroce_mpi_test: pass$' "$CLI_LOG" || fail "$1: sroce_mpi_test did not pass"
	APPS_BYTES=$(awk '/^bytes between ranks:/ { print $4 }' "$CLI_LOG")
	[ -n "$APPS_BYTES" ] || fail "$1: sroce_mpi_test reported no byte count"
}

# mpi_run NAME CMD...: the launcher as end 1's client (cli_run runs on end
# 2; MPI starts on end 1's host), then the data check and the counters.
mpi_run() {
	local name=$1
	shift
	apps_mark
	on_end1 cli_run "$name" "$@"
	mpi_check "$name"
	apps_moved "$name" "$APPS_BYTES"
}

# on_end1 CMD...: CMD (cli_run ...) with end 1's namespace as the client's.
on_end1() {
	local ns2=("${RDMA_NS2[@]}") rc=0
	RDMA_NS2=("${RDMA_NS1[@]}")
	"$@" || rc=$?
	RDMA_NS2=("${ns2[@]}")
	return $rc
}

# Open MPI over UCX: pml ucx (and its one-sided osc ucx), btl self only.
ompi_ucx_env() { ucx_env "$1"; }
ompi_ucx() {
	local n=$1
	ompi_launch
	MPI_ENV_FN=ompi_ucx_env MPI_ENV_FLAG=-x
	mpi_contexts "$n" "$MPI_TEST.openmpi"
	mpi_run "ompi_ucx_np$n" "${OMPI[@]}" --mca pml ucx --mca osc ucx --mca btl self "${MPI_ARGS[@]}"
}

# ompi_ofi PROV N [rdma]: Open MPI over libfabric, pml cm with mtl ofi on
# the provider stack PROV; one-sided through osc pt2pt (over the same
# MTL) with btl self only, or with "rdma" through osc rdma on the ofi BTL
# (libfabric's RMA and atomics, on PROV too).
ompi_ofi_env() {
	local dev gid
	if [ "$1" = 1 ]; then dev=$RDMA_DEV1 gid=$RDMA_GID1; else dev=$RDMA_DEV2 gid=$RDMA_GID2; fi
	echo "FI_VERBS_DEVICE_NAME=$dev FI_VERBS_GID_IDX=$gid"
}
ompi_ofi() {
	local prov=$1 n=$2 osc=(--mca osc pt2pt --mca btl self)
	# shellcheck disable=SC2054 # "ofi,self" is one word, the BTL list
	[ "${3:-}" = rdma ] &&
		osc=(--mca osc rdma --mca btl ofi,self --mca btl_ofi_provider_include "$prov")
	ompi_launch
	MPI_ENV_FN=ompi_ofi_env MPI_ENV_FLAG=-x
	mpi_contexts "$n" "$MPI_TEST.openmpi"
	mpi_run "ompi_ofi_${prov#verbs;ofi_}_np$n" "${OMPI[@]}" --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include "$prov" "${osc[@]}" "${MPI_ARGS[@]}"
}

# MPICH (Debian's is built for ch4:ucx only, mpichversion) over UCX, with
# MPIR_CVAR_NOLOCAL=1: ranks on one host talk through the network module
# too, not shared memory.
mpich_ucx() {
	local n=$1 mpx=(mpiexec.mpich)
	if apps_two_hosts; then
		mpx+=(-launcher ssh -launcher-exec "$APPS_RSH" -iface "$APPS_MPI_IFACE"
			-hosts "$APPS_HOST1:$((n / 2)),$APPS_HOST2:$((n / 2))")
	fi
	MPI_ENV_FN=ucx_env MPI_ENV_FLAG=-env
	mpi_contexts "$n" "$MPI_TEST.mpich"
	mpi_run "mpich_ucx_np$n" "${mpx[@]}" -genv MPIR_CVAR_NOLOCAL 1 "${MPI_ARGS[@]}"
}

# NetPIPE on Open MPI over UCX, with its integrity check (-i): sizes up
# to 1 MiB, 3 repeats each.
netpipe() {
	local pass total bytes
	ompi_launch
	MPI_ENV_FN=ompi_ucx_env MPI_ENV_FLAG=-x
	mpi_contexts 2 NPopenmpi -i -n 3 -u 1048576 -o /tmp/np.out
	apps_mark
	on_end1 cli_run netpipe "${OMPI[@]}" --mca pml ucx --mca osc ucx --mca btl self "${MPI_ARGS[@]}"
	# NetPIPE reports each size on stderr.
	cat "$CLI_LOG" "$CLI_LOG.err" >/tmp/np.all
	! grep -q 'Integrity check failed' /tmp/np.all || fail "NetPIPE: $(grep -m1 'Integrity check failed' /tmp/np.all)"
	total=$(grep -cE '^ *[0-9]+: +[0-9]+ bytes' /tmp/np.all || true)
	pass=$(grep -c 'Integrity check passed' /tmp/np.all || true)
	[ "$total" -gt 0 ] && [ "$pass" = "$total" ] || fail "NetPIPE: $pass of $total sizes passed the integrity check"
	# Each size goes there and back 3 times.
	bytes=$(awk '/Integrity check passed/ { s += $2 * $4 * 2 } END { printf "%d", s }' /tmp/np.all)
	apps_moved "NetPIPE (Open MPI, UCX)" "$bytes"
}
