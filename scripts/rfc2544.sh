#!/usr/bin/env bash
# RFC 2544 throughput: the highest loss-free rate per frame size, found by binary search on
# the replay rate. Runs entirely inside a private network namespace it creates (and removes
# on exit): tcpreplay sends fixed-size UDP frames into veth1, the capture listens on veth0.
#
#   scripts/rfc2544.sh [--sizes "64 128 256 512 1024 1280 1518"] [--duration SECS]
#                      [--shrike PATH] [--workers N] [--capture CMD] [--loss PCT]
#                      [--tolerance FRACTION] [--max-trials N] [--out FILE]
#
#   --shrike PATH   the shrike binary (default target/release/shrike, else `shrike` in PATH);
#                   used as `shrike -i veth0 --workers N -l DIR` when it has live capture
#   --capture CMD   another capture command instead (`{iface}` is replaced by veth0); it is
#                   started per trial and stopped with SIGTERM. Received packets then come
#                   from /sys/class/net/veth0/statistics/rx_packets (the kernel's count), as
#                   they also do when the shrike binary has no live capture
#   --duration      seconds per trial (default 2; RFC 2544 asks for 60 on real hardware)
#   --loss PCT      loss tolerated as "loss-free" (default 0)
#   --tolerance F   stop when the search interval is below F of the upper bound (default 0.05)
#   --max-trials N  trials per frame size at most (default 8)
#   --generator G   tcpreplay (default) or trafgen (netsniff-ng: several times tcpreplay's
#                   rate from one core, so the sensor rather than the sender is the limit)
#   --out FILE      also write the table (markdown) to FILE
# Needs root, iproute2, tcpreplay and python3. The numbers measure shrike's capture and
# decode path on a veth pair on this host (sender and sensor share the CPUs); a hardware
# qualification uses a generator host (scripts/trafgen/trex_udp.py) and a real NIC.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
sizes="64 128 256 512 1024 1280 1518"
duration=2
shrike=
capture_cmd=
workers=1
loss_ok=0
tolerance=0.05
max_trials=8
out=
generator=tcpreplay
while [[ $# -gt 0 ]]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --shrike) shrike=$2; shift 2 ;;
    --capture) capture_cmd=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --loss) loss_ok=$2; shift 2 ;;
    --tolerance) tolerance=$2; shift 2 ;;
    --max-trials) max_trials=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --generator) generator=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "rfc2544.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $generator in
  tcpreplay|trafgen) ;;
  *) echo "rfc2544.sh: --generator must be tcpreplay or trafgen" >&2; exit 2 ;;
esac
for tool in ip "$generator" python3 awk; do
  command -v "$tool" >/dev/null || { echo "rfc2544.sh: $tool is required" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "rfc2544.sh: needs root (network namespaces, raw sockets)" >&2; exit 1; }

if [[ -z $shrike ]]; then
  for b in "$root/target/release/shrike" "$(command -v shrike || true)"; do
    [[ -n $b && -x $b ]] && { shrike=$b; break; }
  done
fi
mode=sysfs
if [[ -n $capture_cmd ]]; then
  mode=custom
elif [[ -n $shrike ]] && "$shrike" --help 2>&1 | grep -q -- '-i <IFACE>'; then
  mode=shrike
fi

ns=shrike-rfc2544-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shrike-rfc2544.XXXXXX")
cap_pid=
cleanup() {
  if [[ -n $cap_pid ]]; then kill -TERM "$cap_pid" 2>/dev/null || true; wait "$cap_pid" 2>/dev/null || true; fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
# No IPv6 (no router solicitations or DAD): only the generator's frames cross the pair.
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$ns" link add veth0 type veth peer name veth1
ip -n "$ns" link set lo up
ip -n "$ns" link set veth0 up
ip -n "$ns" link set veth1 up
ip -n "$ns" link set veth1 txqueuelen 10000

rx_count() { nsx cat /sys/class/net/veth0/statistics/rx_packets; }

# Start the capture for one trial; sets cap_pid.
start_capture() {
  local log=$tmp/cap.out
  : > "$log"
  case $mode in
    shrike)
      rm -rf "$tmp/log"; mkdir -p "$tmp/log"
      # Not through the nsx function: $! must be shrike itself (ip netns exec execs it).
      ip netns exec "$ns" "$shrike" -i veth0 --workers "$workers" -l "$tmp/log" > "$log" 2>&1 &
      cap_pid=$!
      # Ready once it says it is capturing (rings open, workers started).
      for _ in $(seq 100); do
        grep -q "capturing on" "$log" && return 0
        kill -0 "$cap_pid" 2>/dev/null || { cat "$log" >&2; echo "rfc2544.sh: shrike exited" >&2; exit 1; }
        sleep 0.1
      done
      echo "rfc2544.sh: shrike did not start capturing within 10 s" >&2
      cat "$log" >&2
      exit 1
      ;;
    custom)
      ip netns exec "$ns" bash -c "exec ${capture_cmd//\{iface\}/veth0}" > "$log" 2>&1 &
      cap_pid=$!
      sleep 1
      ;;
    sysfs) cap_pid= ;;
  esac
}

# Waits for the capture process to exit (up to 30 s).
reap() {
  for _ in $(seq 300); do
    kill -0 "$cap_pid" 2>/dev/null || break
    sleep 0.1
  done
  wait "$cap_pid" 2>/dev/null || true
  cap_pid=
}

# Stop it; sets cap_recv to the packets it received (shrike's count, or the kernel's).
stop_capture() {
  local before=$1
  sleep 0.3
  case $mode in
    shrike)
      kill -TERM "$cap_pid" 2>/dev/null || true
      reap
      local line
      line=$(grep -E '^shrike: [0-9]+ packets' "$tmp/cap.out" | tail -1 || true)
      [[ -n $line ]] || { cat "$tmp/cap.out" >&2; echo "rfc2544.sh: no summary from shrike" >&2; exit 1; }
      cap_recv=$(awk '{print $2}' <<< "$line")
      ;;
    custom)
      kill -TERM "$cap_pid" 2>/dev/null || true
      reap
      cap_recv=$(( $(rx_count) - before ))
      ;;
    sysfs)
      cap_recv=$(( $(rx_count) - before ))
      ;;
  esac
}

# One trial at RATE pps (0 = topspeed) with frames of SIZE: sets t_sent, t_recv, t_pps.
trial() {
  local size=$1 rate=$2 pcap=$tmp/f$1.pcap
  local want
  local top=200000
  [[ $generator == trafgen ]] && top=1000000
  if [[ $rate == 0 ]]; then want=$(( top * duration )); else want=$(awk -v r="$rate" -v d="$duration" 'BEGIN{printf "%d", r*d}'); fi
  [[ $want -ge 1000 ]] || want=1000
  local loops=$(( (want + 9999) / 10000 ))
  local args=(--intf1=veth1 --limit="$want" --loop="$loops")
  if [[ $rate == 0 ]]; then
    args+=(--topspeed)
  else
    local multi=1
    [[ $rate -ge 10000 ]] && multi=10
    [[ $rate -ge 100000 ]] && multi=50
    args+=(--pps="$rate" --pps-multi="$multi")
  fi
  local before
  before=$(rx_count)
  start_capture
  local rep
  if [[ $generator == tcpreplay ]]; then
    rep=$(nsx tcpreplay "${args[@]}" "$pcap" 2>&1) || { echo "$rep" >&2; exit 1; }
    t_sent=$(sed -n 's/.*Actual: \([0-9]*\) packets.*/\1/p' <<< "$rep" | head -1)
    t_pps=$(sed -n 's/.*Rated: .* \([0-9.]*\) pps.*/\1/p' <<< "$rep" | head -1)
  else
    local targs=(--dev veth1 --conf "$tmp/f$size.cfg" --num "$want" --cpus 1 --no-cpu-stats)
    [[ $rate == 0 ]] || targs+=(--rate "${rate}pps")
    local t0 t1
    t0=$(date +%s%N)
    rep=$(nsx trafgen "${targs[@]}" 2>&1) || { echo "$rep" >&2; exit 1; }
    t1=$(date +%s%N)
    t_sent=$(sed -n 's/^[[:space:]]*\([0-9]*\) packets outgoing.*/\1/p' <<< "$rep" | head -1)
    t_pps=$(awk -v n="$t_sent" -v ns=$((t1 - t0)) 'BEGIN{ printf "%d", (ns > 0) ? n * 1e9 / ns : 0 }')
  fi
  stop_capture "$before"
  t_recv=$cap_recv
  t_pps=${t_pps%.*}
  [[ -n $t_sent && -n $t_pps ]] || { echo "$rep" >&2; echo "rfc2544.sh: cannot read $generator's counts" >&2; exit 1; }
}

loss_pct() { awk -v s="$1" -v r="$2" 'BEGIN{ l = (s > 0) ? (s - r) * 100 / s : 100; if (l < 0) l = 0; printf "%.3f", l }'; }
ok_loss() { awk -v l="$1" -v m="$loss_ok" 'BEGIN{ exit !(l <= m) }'; }

desc=$mode
[[ $mode == shrike ]] && desc="shrike ($shrike)"
[[ $mode == custom ]] && desc="custom ($capture_cmd), counted by the kernel"
[[ $mode == sysfs ]] && desc="none, counted by the kernel (no shrike with live capture)"
echo "# RFC 2544 throughput on a veth pair (namespace $ns), generator: $generator, capture: $desc, workers $workers, ${duration}s trials"
rows=()
for size in $sizes; do
  python3 "$here/trafgen/mkpcap.py" --size "$size" --count 10000 --flows 256 "$tmp/f$size.pcap"
  bash "$here/trafgen/trafgen-udp.sh" --print-config --size "$size" --flows 256 > "$tmp/f$size.cfg"
  trial "$size" 0
  sent=$t_sent recv=$t_recv top=$t_pps
  loss=$(loss_pct "$sent" "$recv")
  trials=1
  echo "  ${size}B topspeed: sent $sent at $top pps, received $recv, loss $loss%"
  if ok_loss "$loss"; then
    best=$top best_loss=$loss limit=generator
  else
    lo=0 hi=$top best=0 best_loss=- limit=sensor
    while (( trials < max_trials )); do
      awk -v lo="$lo" -v hi="$hi" -v t="$tolerance" 'BEGIN{ exit !((hi - lo) > t * hi) }' || break
      mid=$(( (lo + hi) / 2 ))
      [[ $mid -ge 100 ]] || break
      trial "$size" "$mid"
      sent=$t_sent recv=$t_recv got=$t_pps
      trials=$((trials + 1))
      loss=$(loss_pct "$sent" "$recv")
      echo "  ${size}B at $mid pps (achieved $got): sent $sent, received $recv, loss $loss%"
      if ok_loss "$loss"; then
        # The generator may fall short of the asked rate: credit what it achieved.
        lo=$(( got < mid ? got : mid ))
        best=$lo best_loss=$loss
      else
        hi=$mid
      fi
    done
  fi
  mbps=$(awk -v s="$size" -v p="$best" 'BEGIN{ printf "%.1f", s * 8 * p / 1e6 }')
  rows+=("$(printf '| %5s | %10s | %9s | %7s | %6s | %-9s |' "$size" "$best" "$mbps" "$best_loss" "$trials" "$limit")")
done

table=$(
  printf '| %5s | %10s | %9s | %7s | %6s | %-9s |\n' frame "rate (pps)" Mbit/s "loss %" trials limit
  echo "|------:|-----------:|----------:|--------:|-------:|:----------|"
  printf '%s\n' "${rows[@]}"
)
echo
echo "$table"
echo
echo "rate: highest loss-free rate found (frames/s); Mbit/s: frame bits (FCS included, no"
echo "preamble/IFG); limit: 'generator' = $generator's top speed was loss-free (the sensor was"
echo "not saturated), 'sensor' = loss above it, found by binary search."
if [[ -n $out ]]; then
  {
    echo "RFC 2544 throughput, generator: $generator, capture: $mode, workers: $workers, trials of ${duration}s, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs"
    echo
    echo "$table"
  } > "$out"
fi
