#!/usr/bin/env bash
# A private network namespace with a veth pair, for trying live capture by hand. Traffic
# stays inside the namespace. Needs root.
#
#   scripts/netns/veth.sh up   [NAME]   create NAME (default shrike-lab) with veth0 <-> veth1
#   scripts/netns/veth.sh down [NAME]   delete it (and the pair)
#   scripts/netns/veth.sh exec [NAME] -- CMD...   run CMD inside it
#
# Example: capture on veth0 while replaying into veth1:
#   scripts/netns/veth.sh up
#   scripts/netns/veth.sh exec -- shrike --af-packet=veth0 -l /tmp/out &
#   scripts/netns/veth.sh exec -- tcpreplay -i veth1 --topspeed samples/x.pcap
#   scripts/netns/veth.sh down
set -euo pipefail
cmd=${1:-}
shift || true
name=shrike-lab
if [[ $# -gt 0 && $1 != -- ]]; then name=$1; shift; fi
[[ ${1:-} == -- ]] && shift

case "$cmd" in
  up)
    ip netns add "$name"
    # No IPv6 on the new links: the kernel then sends nothing of its own on them.
    ip netns exec "$name" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$name" link add veth0 type veth peer name veth1
    ip -n "$name" link set lo up
    ip -n "$name" link set veth0 up
    ip -n "$name" link set veth1 up
    echo "namespace $name: veth0 <-> veth1 up"
    ;;
  down)
    ip netns del "$name"
    ;;
  exec)
    exec ip netns exec "$name" "$@"
    ;;
  *)
    sed -n '2,13p' "$0" >&2
    exit 2
    ;;
esac
