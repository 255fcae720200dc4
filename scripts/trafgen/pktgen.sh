#!/usr/bin/env bash
# Fixed-size UDP frames with the kernel's packet generator (pktgen): several Mpps per core,
# generated in the kernel, no user-space copy.
#
#   pktgen.sh IFACE --size 64 [--count N] [--pps N] [--flows N] [--threads N] [--dry-run]
#
#   --size     RFC 2544 frame size including FCS (pktgen's pkt_size excludes the FCS)
#   --count    packets per thread (default 1000000; 0 = until interrupted)
#   --pps      rate limit per thread (default: as fast as possible)
#   --flows    vary the UDP source port over N values (RSS/fanout spread)
#   --threads  kernel sender threads (kpktgend_0..N-1, one per CPU)
#   --dry-run  print the /proc/net/pktgen writes without doing them
#
# pktgen is a kernel module (CONFIG_NET_PKTGEN): this script loads it with modprobe when
# /proc/net/pktgen is missing; in a container, or on a kernel without the module, it explains
# and exits 1 (use trafgen-udp.sh or replay.sh instead). Results: /proc/net/pktgen/IFACE.
set -euo pipefail
usage() { sed -n '2,18p' "$0" >&2; exit 2; }
iface= size= count=1000000 pps=0 flows=256 threads=1 dry=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --pps) pps=$2; shift 2 ;;
    --flows) flows=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage ;;
    -*) echo "pktgen.sh: unknown option $1" >&2; usage ;;
    *) iface=$1; shift ;;
  esac
done
[[ -n $iface ]] || usage
[[ $size =~ ^[0-9]+$ && $size -ge 64 && $size -le 9018 ]] || { echo "pktgen.sh: --size must be 64..9018" >&2; exit 2; }
PG=/proc/net/pktgen

pgset() { # file command
  if [[ $dry == 1 ]]; then
    echo "+ echo \"$2\" > $1"
    return
  fi
  echo "$2" > "$1"
  if ! grep -q "Result: OK" "$1" 2>/dev/null && [[ $1 != "$PG/pgctrl" ]]; then
    echo "pktgen.sh: $1: '$2': $(grep Result: "$1" 2>/dev/null)" >&2
    exit 1
  fi
}

if [[ $dry == 0 && ! -d $PG ]]; then
  modprobe pktgen 2>/dev/null || true
  if [[ ! -d $PG ]]; then
    cat >&2 <<MSG
pktgen.sh: the kernel packet generator is not available ($PG is missing).
  It needs the pktgen module (CONFIG_NET_PKTGEN=m): modprobe pktgen, as root, on the host
  (not inside a container; some distribution kernels ship it in linux-modules-extra).
  Without it, use trafgen-udp.sh (netsniff-ng) or replay.sh (tcpreplay).
MSG
    exit 1
  fi
fi
dst_mac=$(cat "/sys/class/net/$iface/address" 2>/dev/null || echo 02:00:5e:10:00:01)
for ((t = 0; t < threads; t++)); do
  dev=$iface
  [[ $threads -gt 1 ]] && dev=$iface@$t
  pgset "$PG/kpktgend_$t" "rem_device_all"
  pgset "$PG/kpktgend_$t" "add_device $dev"
  f=$PG/$dev
  pgset "$f" "count $count"
  pgset "$f" "pkt_size $(( size - 4 ))"
  pgset "$f" "delay 0"
  [[ $pps -gt 0 ]] && pgset "$f" "ratep $pps"
  pgset "$f" "dst_mac $dst_mac"
  pgset "$f" "src_min 198.18.0.2"
  pgset "$f" "src_max 198.18.0.2"
  pgset "$f" "dst 198.19.0.1"
  pgset "$f" "udp_src_min 1024"
  pgset "$f" "udp_src_max $(( 1024 + flows - 1 ))"
  pgset "$f" "udp_dst_min 9"
  pgset "$f" "udp_dst_max 9"
  pgset "$f" "flag UDPSRC_RND"
  pgset "$f" "burst 32"
done
if [[ $dry == 1 ]]; then
  echo "+ echo start > $PG/pgctrl"
  exit 0
fi
echo "pktgen.sh: sending on $iface ($threads thread(s), ${size}-byte frames) ..."
echo start > "$PG/pgctrl"
for ((t = 0; t < threads; t++)); do
  dev=$iface
  [[ $threads -gt 1 ]] && dev=$iface@$t
  grep -A2 "^Result" "$PG/$dev"
done
