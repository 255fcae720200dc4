#!/usr/bin/env bash
# Prepares a NIC for capture with shrike (as Suricata's "high performance" guide does):
#
#   scripts/nic-tune.sh IFACE [--workers N] [--cpus LIST] [--ring N|max] [--dry-run]
#
#   --workers N   RX queues (channels) to configure, one per shrike worker (default: the
#                 number of CPUs in --cpus, else the NIC's current count)
#   --cpus LIST   worker CPUs, e.g. 2-5 or 2,3,4,5: queue i's IRQ goes to the i-th CPU, the
#                 same CPU as worker i (the config's `cpus:`), so a packet stays on one core
#   --ring N|max  RX descriptors per queue (default max)
#   --keep-offloads  leave offloads as they are
#   --dry-run     print the commands (prefixed with +) without changing anything; queries
#                 still run, to pick the values
#
# What it does, each step skipped with a note when the driver lacks it:
#   1. ethtool -L: N combined (or rx) channels
#   2. ethtool -X: symmetric RSS, key 6D:5A repeated (both directions of a flow hash to the
#      same queue; pair with cluster-type: cluster_qm or DPDK), hfunc toeplitz, spread
#      equally over the N queues
#   3. ethtool -N rx-flow-hash {tcp,udp}{4,6} sdfn: hash on addresses and ports
#   4. ethtool -K: gro, lro, tso, gso, sg (and rxvlan, txvlan) off, so the sensor sees
#      packets as they were on the wire, not merged super-frames
#   5. ethtool -G: largest RX ring; ethtool -A: pause frames off (a sensor must not
#      throttle the mirror)
#   6. IRQ affinity: /proc/irq/<n>/smp_affinity_list per queue; irqbalance would undo it
#   7. ip link set IFACE up
# Settings do not survive a reboot: run it from a systemd unit before shrike@IFACE (see
# docs/operations.md). Needs root (CAP_NET_ADMIN) for anything but --dry-run.
set -uo pipefail

usage() { sed -n '2,30p' "$0" >&2; exit 2; }
iface=
workers=
cpus=
ring=max
dry=0
offloads=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --workers) workers=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --ring) ring=$2; shift 2 ;;
    --dry-run|-n) dry=1; shift ;;
    --keep-offloads) offloads=0; shift ;;
    -h|--help) usage ;;
    -*) echo "nic-tune.sh: unknown option $1" >&2; usage ;;
    *) [[ -z $iface ]] || usage; iface=$1; shift ;;
  esac
done
[[ -n $iface ]] || usage
if [[ ! -e /sys/class/net/$iface ]]; then
  echo "nic-tune.sh: no interface $iface" >&2
  exit 1
fi
command -v ethtool >/dev/null || { echo "nic-tune.sh: ethtool is not installed (apt-get install ethtool)" >&2; exit 1; }

changes=0
failures=0
note() { echo "# $*"; }
run() { # the command, printed; executed unless --dry-run
  echo "+ $*"
  changes=$((changes + 1))
  [[ $dry == 1 ]] && return 0
  if ! "$@" 2>/tmp/nic-tune.err.$$; then
    echo "  failed: $(tr '\n' ' ' < /tmp/nic-tune.err.$$)"
    failures=$((failures + 1))
  fi
  rm -f /tmp/nic-tune.err.$$
}

# Expand a CPU list (2-5,8) into words.
expand_cpus() {
  local out=() part a b
  IFS=, read -ra parts <<< "$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then
      a=${part%-*}; b=${part#*-}
      for ((c = a; c <= b; c++)); do out+=("$c"); done
    elif [[ -n $part ]]; then
      out+=("$part")
    fi
  done
  echo "${out[@]}"
}
cpu_list=()
if [[ -n $cpus ]]; then
  read -ra cpu_list <<< "$(expand_cpus "$cpus")"
fi
if [[ -z $workers && ${#cpu_list[@]} -gt 0 ]]; then
  workers=${#cpu_list[@]}
fi

driver=$(ethtool -i "$iface" 2>/dev/null | sed -n 's/^driver: //p')
note "interface $iface, driver ${driver:-unknown}${workers:+, $workers queue(s)}${cpus:+, CPUs ${cpu_list[*]}}"

# 1. Channels.
chan=$(ethtool -l "$iface" 2>/dev/null)
if [[ -z $chan ]]; then
  note "channels: not supported by $iface; skipped"
elif [[ -n $workers ]]; then
  max_comb=$(awk '/Pre-set maximums/{p=1} /Current hardware/{p=0} p && /^Combined:/{print $2}' <<< "$chan")
  max_rx=$(awk '/Pre-set maximums/{p=1} /Current hardware/{p=0} p && /^RX:/{print $2}' <<< "$chan")
  if [[ $max_comb =~ ^[0-9]+$ && $max_comb -gt 0 ]]; then
    n=$(( workers < max_comb ? workers : max_comb ))
    [[ $n -lt $workers ]] && note "channels: $iface has at most $max_comb combined queues"
    run ethtool -L "$iface" combined "$n"
  elif [[ $max_rx =~ ^[0-9]+$ && $max_rx -gt 0 ]]; then
    n=$(( workers < max_rx ? workers : max_rx ))
    [[ $n -lt $workers ]] && note "channels: $iface has at most $max_rx RX queues"
    run ethtool -L "$iface" rx "$n"
  else
    note "channels: no settable RX or combined channels; skipped"
  fi
fi

# 2. Symmetric RSS key, toeplitz, equal spread.
rss=$(ethtool -x "$iface" 2>/dev/null)
if [[ -z $rss ]]; then
  note "RSS: not supported by $iface (virtual or single-queue NIC); skipped"
else
  # The key length the NIC uses (40 bytes on most, 52 on i40e/ice).
  keylen=$(awk '/RSS hash key/{p=1; next} /RSS hash function/{p=0} p' <<< "$rss" | tr -d ' \n' | tr ':' '\n' | grep -c .)
  [[ $keylen -gt 0 ]] || keylen=40
  key=$(for ((i = 0; i < keylen; i++)); do if ((i % 2)); then printf '5a'; else printf '6d'; fi; ((i < keylen - 1)) && printf ':'; done)
  args=(ethtool -X "$iface" hkey "$key" hfunc toeplitz)
  [[ -n $workers ]] && args+=(equal "$workers")
  run "${args[@]}"
fi

# 3. Hash on addresses and ports.
if ethtool -n "$iface" rx-flow-hash tcp4 >/dev/null 2>&1; then
  for proto in tcp4 udp4 tcp6 udp6; do
    run ethtool -N "$iface" rx-flow-hash "$proto" sdfn
  done
else
  note "rx-flow-hash: not supported by $iface; skipped"
fi

# 4. Offloads off (each alone: a fixed feature must not block the others).
if [[ $offloads == 1 ]]; then
  feats=$(ethtool -k "$iface" 2>/dev/null)
  for pair in gro:generic-receive-offload lro:large-receive-offload \
    tso:tcp-segmentation-offload gso:generic-segmentation-offload sg:scatter-gather \
    rxvlan:rx-vlan-offload txvlan:tx-vlan-offload; do
    short=${pair%%:*}; long=${pair#*:}
    line=$(grep "^$long:" <<< "$feats")
    if [[ -z $line ]]; then
      note "offload $short: unknown to $iface; skipped"
    elif [[ $line == *"[fixed]"* ]]; then
      note "offload $short: fixed (${line#*: }); skipped"
    elif [[ $line == *": off"* ]]; then
      note "offload $short: already off"
    else
      run ethtool -K "$iface" "$short" off
    fi
  done
fi

# 5. RX ring size and pause frames.
rings=$(ethtool -g "$iface" 2>/dev/null)
if [[ -z $rings ]]; then
  note "ring sizes: not supported by $iface; skipped"
else
  max_ring=$(awk '/Pre-set maximums/{p=1} /Current hardware/{p=0} p && /^RX:/{print $2}' <<< "$rings")
  cur_ring=$(awk '/Current hardware/{p=1} p && /^RX:/{print $2; exit}' <<< "$rings")
  want=$ring
  [[ $want == max ]] && want=$max_ring
  if [[ $want =~ ^[0-9]+$ && $want != "$cur_ring" ]]; then
    run ethtool -G "$iface" rx "$want"
  else
    note "ring: RX $cur_ring (max $max_ring); unchanged"
  fi
fi
if ethtool -a "$iface" >/dev/null 2>&1; then
  run ethtool -A "$iface" autoneg off rx off tx off
else
  note "pause frames: not supported by $iface; skipped"
fi

# 6. IRQ affinity: queue vectors named after the interface in /proc/interrupts, else the
# device's MSI vectors.
irqs=()
while read -r irq; do irqs+=("$irq"); done < <(
  awk -v ifc="$iface" '$NF ~ "^"ifc"[-@]" || $NF == ifc { sub(":", "", $1); print $1 }' /proc/interrupts 2>/dev/null)
if [[ ${#irqs[@]} -eq 0 && -d /sys/class/net/$iface/device/msi_irqs ]]; then
  while read -r irq; do irqs+=("$irq"); done < <(ls /sys/class/net/"$iface"/device/msi_irqs | sort -n)
fi
if [[ ${#irqs[@]} -eq 0 ]]; then
  note "IRQ affinity: no IRQs for $iface (virtual device); skipped"
elif [[ ${#cpu_list[@]} -eq 0 ]]; then
  note "IRQ affinity: give --cpus to pin the ${#irqs[@]} queue IRQs of $iface"
else
  i=0
  for irq in "${irqs[@]}"; do
    cpu=${cpu_list[$((i % ${#cpu_list[@]}))]}
    echo "+ echo $cpu > /proc/irq/$irq/smp_affinity_list"
    changes=$((changes + 1))
    if [[ $dry == 0 ]] && ! echo "$cpu" > "/proc/irq/$irq/smp_affinity_list" 2>/dev/null; then
      echo "  failed: IRQ $irq"
      failures=$((failures + 1))
    fi
    i=$((i + 1))
  done
  if pgrep -x irqbalance >/dev/null 2>&1; then
    note "irqbalance is running and will move these IRQs again: systemctl disable --now irqbalance,"
    note "or keep it away from the worker CPUs with IRQBALANCE_BANNED_CPULIST=$cpus in /etc/default/irqbalance"
  fi
fi

# 7. Up (shrike sets promiscuous mode itself).
if ! ip link show "$iface" 2>/dev/null | grep -q '[<,]UP[,>]'; then
  run ip link set "$iface" up
fi

if [[ $dry == 1 ]]; then
  note "dry run: $changes command(s) printed, nothing changed"
else
  note "$changes command(s) run, $failures failed"
fi
[[ $failures -eq 0 ]]
