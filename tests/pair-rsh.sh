#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# An "ssh" for MPI launchers between the two guests of a pair run
# (tests/lib-pair.sh): Open MPI's rsh launcher (--mca plm_rsh_agent) and
# MPICH's Hydra (-launcher ssh -launcher-exec) start their daemons on the
# other guest through it, as they would through ssh.
#
#   pair-rsh.sh [-options] HOST COMMAND...
#
# HOST is an address.  One of this guest's runs the command here; any
# other is the other guest's, where pair_rshd (lib-pair.sh) runs it: the
# command goes there as a file in PAIR_RSH_DIR (the pair share), and its
# output and exit status come back the same way once it has ended.  Either
# way the command runs through sh, as ssh would run it, with a host name
# of the guest's role (pair-a, pair-b): two emulated guests boot with the
# same name, and the launchers tell hosts apart by name.  Options before
# HOST (ssh's, such as -x) are ignored.
set -u

while [ $# -gt 0 ]; do
	case $1 in
	-*) shift ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: pair-rsh.sh [-options] HOST COMMAND..." >&2; exit 255; }
[ -n "${PAIR_RSH_DIR:-}" ] && [ -n "${PAIR_ROLE:-}" ] ||
	{ echo "pair-rsh.sh: PAIR_RSH_DIR and PAIR_ROLE not set (lib-pair.sh's pair_rshd)" >&2; exit 255; }
host=$1
shift

if ip -o addr show | awk '{ sub("/.*", "", $4); print $4 }' | grep -qxF -- "$host"; then
	exec unshare --uts sh -c 'hostname "$1"; exec sh -c "$2"' pair-rsh "pair-$PAIR_ROLE" "$*"
fi

other=$([ "$PAIR_ROLE" = a ] && echo b || echo a)
req=$PAIR_RSH_DIR/$other/$(hostname).$$.$RANDOM
printf '%s\n' "$*" >"$req.tmp"
mv "$req.tmp" "$req.cmd"
deadline=$((SECONDS + ${PAIR_RSH_TIMEOUT:-900}))
until [ -e "$req.rc" ]; do
	[ $SECONDS -lt $deadline ] ||
		{ echo "pair-rsh.sh: guest $other did not finish '$*' in time" >&2; exit 255; }
	sleep 0.2
done
cat "$req.out"
cat "$req.err" >&2
exit "$(cat "$req.rc")"
