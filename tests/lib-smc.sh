#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# net/smc over sroce for the test groups (apps: two namespaces; twohost:
# two guests): a TCP program made to use AF_SMC by libsroce_smc.so, as
# smc-tools' smc_run does, and the settings SMC-R needs
# (Documentation/middleware/smc-r.rst); tests/progs/sroce_smc does what
# smc-tools would (Debian 12 does not package them).

SMC_PORT=5555

# smc_setup PNETID NETDEV RDMADEV [NS]: net/smc loaded, a user EID, and
# PNETID given to NETDEV (in namespace NS, default the initial one) and to
# port 1 of RDMADEV.
#
# A RoCEv2 device carries SMC-Rv2 only (SMC-Rv1 needs RoCE v1 GIDs), and
# Linux proposes SMC-Rv2 only with a user EID defined (af_smc.c,
# smc_find_proposal_devices(): smc_clc_ueid_count()); the table is the
# kernel's, one for every namespace.  The PNET ID pairs the netdev with
# its RDMA device: the netdev's entry goes in its namespace, the RDMA
# device's ID is global and set from the initial namespace only
# (smc_pnet_enter()).
smc_setup() {
	local p=$SROCE_PROGS in=()
	[ -n "${4:-}" ] && in=(ip netns exec "$4")
	run modprobe -a smc smc_diag
	run "$p/sroce_smc" ueid SROCE-APPS
	run "${in[@]}" "$p/sroce_smc" pnet "$1" "$2"
	run "$p/sroce_smc" pnet "$1" - "$3"
}

# smc_server ADDR: sroce_tcp_test's server on ADDR:SMC_PORT over SMC, in
# end 1's namespace (RDMA_NS1), listening (srv_start: SRV_PID, SRV_LOG).
smc_server() {
	srv_start smc env LD_PRELOAD="$SROCE_PROGS/libsroce_smc.so" \
		"$SROCE_PROGS/sroce_tcp_test" -s "$1" "$SMC_PORT"
	srv_wait_tcp "$SMC_PORT"
}

# smc_client_start BYTES ADDR: sroce_tcp_test's client, in end 2's
# namespace (RDMA_NS2), sends BYTES each way to ADDR over SMC, checks
# every byte and keeps the connection open until smc_client_end; returns
# once the bytes are checked.
smc_client_start() {
	rm -f /tmp/smc.hold
	mkfifo /tmp/smc.hold
	"${RDMA_NS2[@]}" env LD_PRELOAD="$SROCE_PROGS/libsroce_smc.so" \
		"$SROCE_PROGS/sroce_tcp_test" -n "$1" -W "$2" "$SMC_PORT" \
		</tmp/smc.hold >/tmp/smc.cli 2>&1 &
	SMC_CLI=$!
	exec 7>/tmp/smc.hold
	wait_for 120 grep -q 'every byte checked' /tmp/smc.cli ||
		{ exec 7>&-; cat /tmp/smc.cli; fail "sroce_tcp_test over SMC did not finish"; }
}

# smc_client_end: the client closes its connection and must exit 0.
smc_client_end() {
	exec 7>&-
	wait "$SMC_CLI" || { cat /tmp/smc.cli; fail "sroce_tcp_test's client failed"; }
	SMC_CLI=
	rm -f /tmp/smc.hold
	cat /tmp/smc.cli
}

# smc_used ADDR RDMADEV: the SMC socket table of end 1's namespace
# (sroce_smc ss, smcss -R's source) shows the connection from
# ADDR:SMC_PORT as SMC-R on port 1 of RDMADEV, not fallen back to TCP.
smc_used() {
	local ss
	ss=$("${RDMA_NS1[@]}" "$SROCE_PROGS/sroce_smc" ss)
	log "SMC sockets: $ss"
	grep -q "^ESTABLISHED SMCR $1:$SMC_PORT .* rdma $2 port 1 " <<<"$ss" ||
		fail "the connection did not use SMC-R over $2: $ss"
}

# smc_reset [NS...]: no SMC program left, every pnet table (the initial
# namespace's and those of NS...) and the user EIDs flushed, net/smc
# unloaded.
smc_reset() {
	local ns
	t_in_guest || return 0
	[ -n "${SMC_CLI:-}" ] && kill "$SMC_CLI" 2>/dev/null
	SMC_CLI=
	rm -f /tmp/smc.hold
	for ns in "$@"; do
		ip netns exec "$ns" "$SROCE_PROGS/sroce_smc" flush >/dev/null 2>&1 || true
	done
	# The initial namespace's flush also clears the RDMA devices' IDs.
	"$SROCE_PROGS/sroce_smc" flush >/dev/null 2>&1 || true
	modprobe -r smc_diag smc 2>/dev/null || true
	return 0
}
