#!/usr/bin/env bash
# Replays a capture file onto an interface with tcpreplay, at a fixed rate or flat out, and
# prints what was actually sent (tcpreplay's "Actual" and "Rated" lines).
#
#   replay.sh IFACE PCAP [--pps N | --mbps N | --topspeed] [--loop N] [--count N]
#
#   --pps N       packets per second (tcpreplay --pps, sent in bursts of --pps-multi)
#   --mbps N      megabits per second
#   --topspeed    as fast as the sender can (the default)
#   --loop N      replay the file N times
#   --count N     stop after N packets
# Exit status is tcpreplay's. Needs CAP_NET_RAW on IFACE. For rates above what one CPU can
# send through tcpreplay (a few hundred kpps), use pktgen.sh or a hardware generator (TRex).
set -euo pipefail
usage() { sed -n '2,14p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
iface=$1 pcap=$2
shift 2
rate=(--topspeed)
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --pps)
      # Bursts keep the timer overhead down at high rates.
      multi=$(( $2 >= 100000 ? 100 : ($2 >= 10000 ? 10 : 1) ))
      rate=(--pps="$2" --pps-multi="$multi"); shift 2 ;;
    --mbps) rate=(--mbpsrate="$2"); shift 2 ;;
    --topspeed) rate=(--topspeed); shift ;;
    --loop) extra+=(--loop="$2"); shift 2 ;;
    --count) extra+=(--limit="$2"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "replay.sh: unknown argument $1" >&2; usage ;;
  esac
done
command -v tcpreplay >/dev/null || { echo "replay.sh: tcpreplay is not installed (apt-get install tcpreplay)" >&2; exit 1; }
[[ -r $pcap ]] || { echo "replay.sh: cannot read $pcap" >&2; exit 1; }
exec tcpreplay --intf1="$iface" "${rate[@]}" "${extra[@]}" "$pcap"
