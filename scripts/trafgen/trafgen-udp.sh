#!/usr/bin/env bash
# Fixed-size UDP frames with netsniff-ng's trafgen (a zero-copy PF_PACKET generator that
# reaches several Mpps per core, well above tcpreplay).
#
#   trafgen-udp.sh IFACE --size 64 [--rate 1000000pps] [--num N] [--cpus N] [--flows N]
#   trafgen-udp.sh --print-config --size 64 [--flows N]     only print the trafgen config
#
# --size is the RFC 2544 frame size including the FCS (64..1518); --flows varies the UDP
# source port over N values so RSS/fanout spread the load. trafgen comes with the netsniff-ng
# package (apt-get install netsniff-ng); without it this script explains and exits 1, and
# --print-config still works, to run the config elsewhere: trafgen --dev IFACE --conf FILE.
set -euo pipefail
usage() { sed -n '2,12p' "$0" >&2; exit 2; }
iface= size= rate= num=0 cpus=1 flows=256 print=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --num) num=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --flows) flows=$2; shift 2 ;;
    --print-config) print=1; shift ;;
    -h|--help) usage ;;
    -*) echo "trafgen-udp.sh: unknown option $1" >&2; usage ;;
    *) iface=$1; shift ;;
  esac
done
[[ $size =~ ^[0-9]+$ && $size -ge 64 && $size -le 9018 ]] || { echo "trafgen-udp.sh: --size must be 64..9018" >&2; exit 2; }
[[ $flows =~ ^[0-9]+$ && $flows -ge 1 && $flows -le 64511 ]] || { echo "trafgen-udp.sh: --flows must be 1..64511" >&2; exit 2; }
payload=$(( size - 4 - 14 - 20 - 8 ))

config() {
  cat <<CFG
/* shrike trafgen profile: ${size}-byte frames (with FCS), UDP, $flows flows.
   RFC 2544 benchmarking addresses 198.18.0.2 -> 198.19.0.1; source ports 1024.. */
{
  eth(da=02:00:5e:10:00:01, sa=02:00:5e:10:00:02),
  ipv4(saddr=198.18.0.2, daddr=198.19.0.1, ttl=64),
  udp(sp=dinc(1024, $(( 1024 + flows - 1 )), 1), dp=9),
  fill(0xa5, $payload)
}
CFG
}
if [[ $print == 1 ]]; then
  config
  exit 0
fi
[[ -n $iface ]] || usage
if ! command -v trafgen >/dev/null; then
  cat >&2 <<MSG
trafgen-udp.sh: trafgen is not installed. It is part of netsniff-ng:
  apt-get install netsniff-ng
Or write the config and run it on a generator host:
  $0 --print-config --size $size --flows $flows > udp$size.cfg
  trafgen --dev IFACE --conf udp$size.cfg --cpus $cpus ${rate:+--rate $rate}
Meanwhile replay.sh (tcpreplay) or pktgen.sh (kernel pktgen) can drive the test.
MSG
  exit 1
fi
cfg=$(mktemp --suffix=.cfg)
trap 'rm -f "$cfg"' EXIT
config > "$cfg"
args=(--dev "$iface" --conf "$cfg" --cpus "$cpus" --no-cpu-stats)
[[ -n $rate ]] && args+=(--rate "$rate")
[[ $num -gt 0 ]] && args+=(--num "$num")
exec trafgen "${args[@]}"
