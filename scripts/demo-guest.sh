#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The demo, inside the guest: two simulated hosts (network namespaces), one
# sroce device each, inspected with the standard RDMA tools through the
# sroce provider.
set -eo pipefail
. "$SROCE_ROOT/tests/lib.sh"

say() { printf '\n### %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

say "Kernel $(uname -r): loading sroce"
sroce_load
show modinfo -F description "$SROCE_KO"

say "Two hosts: namespaces $H1 and $H2 joined by a veth pair, one sroce device each"
topo_two_hosts 2>/dev/null
show rdma link show
show rdma dev show

say "Each namespace has its own RoCEv2 sockets (UDP 4791)"
show n1 ss -Huln 'sport = :4791'
show n2 ss -Huln 'sport = :4791'

say "The devices through libibverbs and the sroce provider"
show n1 ibv_devices
show n1 ibv_devinfo -v -d sroce1
show n2 ibv_devinfo -d sroce2

say "The port follows its netdev: link down, then up"
show n1 ip link set st-v1 down
wait_for 10 port_state_is sroce1 DOWN
show rdma link show sroce1/1
show n1 ip link set st-v1 up
wait_for 10 port_state_is sroce1 ACTIVE
show rdma link show sroce1/1

say "Counters (rdma statistic)"
show rdma statistic show

say "Teardown: delete one device, remove the other host's namespace"
show rdma link delete sroce1
show ip netns del "$H2"
wait_for 20 no_sroce_links
show rdma link show
show cat "$SROCE_DEBUGFS/objects"
t_reset
say "Done: every object released, sroce unloaded"
