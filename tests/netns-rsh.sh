#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# An "ssh" for MPI launchers whose hosts are network namespaces of this
# machine (tests/groups/apps.sh): Open MPI's rsh launcher
# (--mca plm_rsh_agent) and MPICH's Hydra (-launcher ssh -launcher-exec)
# start their daemons on a remote host through it, as they would through
# ssh.
#
#   netns-rsh.sh [-x ...] HOST COMMAND...
#
# HOST is an address; the command runs, through sh as ssh would run it,
# in the namespace (ip netns) that has that address on one of its
# interfaces, with its own UTS namespace whose host name is the
# namespace's name (so that each "host" has a name of its own, as real
# hosts do).  Options before HOST (ssh's, such as -x) are ignored.
set -u

while [ $# -gt 0 ]; do
	case $1 in
	-*) shift ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: netns-rsh.sh [-options] HOST COMMAND..." >&2; exit 255; }
host=$1
shift

for f in /run/netns/*; do
	ns=${f##*/}
	[ -e "$f" ] || continue
	ip -n "$ns" -o addr show 2>/dev/null | awk '{ sub("/.*", "", $4); print $4 }' |
		grep -qxF -- "$host" || continue
	exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1"; exec sh -c "$2"' \
		netns-rsh "$ns" "$*"
done
echo "netns-rsh.sh: no network namespace has the address $host" >&2
exit 255
