#!/usr/bin/env bash
# Live capture benchmark: the highest loss-free rate of shrike and of Suricata 7, side by side,
# with the same rules and the same thread count, found by binary search on the replay rate.
# Everything runs in a private network namespace with a veth pair (v1 -> v0, MTU 9000) that
# the script creates and removes on exit, even on failure. Per trial a fresh engine is started
# on v0 (AF_PACKET, workers runmode), the generator replays the input into v1, the engine is
# stopped with SIGTERM and its final EVE stats are read. Loss = packets the generator sent
# minus packets the engine inspected (decoder.pkts; kernel_packets - kernel_drops without it).
#
#   sudo scripts/bench/live.sh [options]
#   sudo scripts/bench/live.sh --ring [cargo bench args]   the AF_PACKET ring-read criterion
#                                                           bench (cargo bench -p shrike-capture
#                                                           --bench live)
# Options:
#   --inputs LIST        comma-separated: udp64 (64-byte UDP frames, 1,024 flows), mix (the
#                        HTTP/TLS/DNS/UDP/ICMP mix of gen-traffic.py, 5 MB) or pcap paths
#                        (default udp64,mix)
#   --engines LIST       shrike,suricata (default both)
#   --threads N          capture/detect threads per engine (default 1): shrike -i v0
#                        --workers N --runmode workers; Suricata --af-packet=v0 --runmode
#                        workers with af-packet threads N, cluster_flow
#   --rules FILE         the same rules for both engines (-S FILE; default: an empty file)
#   --duration SECS      seconds of traffic per trial (default 3)
#   --loss PCT           loss tolerated as "loss-free", in percent (default 0)
#   --precision F        stop when the search interval is below F of its upper end (0.05)
#   --max-trials N       trials per input and engine, the top-speed one included (default 8)
#   --generator G        pace (scripts/bench/live/pace.c, built with cc: sendmmsg batches on
#                        an absolute timeline, exact and smooth), trafgen (netsniff-ng: fast at
#                        top speed; paced through a tc tbf shaper, weaker under CPU contention),
#                        tcpreplay (its own --pps pacing), or auto (default: the first of pace,
#                        trafgen, tcpreplay that is available)
#   --shrike PATH        default target/dist/shrike, else target/release/shrike, else PATH
#   --suricata PATH      default `suricata` in PATH
#   --suricata-yaml F    default /etc/suricata/suricata.yaml
#   --shrike-args S      extra arguments for shrike (word-split)
#   --suricata-args S    extra arguments for Suricata (word-split)
#   --start-timeout S    seconds an engine may take to start (default 180)
#   --out DIR            where live.md, live.json and trials.jsonl go (default bench-out/live)
#   --keep               keep the scratch directory (engine logs of the last trial)
# Needs root, iproute2, python3, a C compiler (for pace) or trafgen or tcpreplay, and Suricata 7
# for the comparison.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmdline="scripts/bench/live.sh${*:+ $*}"

if [[ ${1:-} == --ring ]]; then
  # The former content of this script: ring read throughput of the AF_PACKET source
  # (SHRIKE_BENCH_PACKETS, SHRIKE_BENCH_SIZES tune it; see capture/benches/live.rs).
  shift
  [[ $(id -u) == 0 ]] || { echo "live.sh: needs root (network namespaces, AF_PACKET)" >&2; exit 1; }
  cd "$root"
  exec cargo bench -p shrike-capture --bench live "$@"
fi

inputs=udp64,mix
engines=shrike,suricata
threads=1
rules=
duration=3
loss_ok=0
precision=0.05
max_trials=8
generator=auto
shrike=
suricata=
suricata_yaml=/etc/suricata/suricata.yaml
shrike_args=
suricata_args=
start_timeout=180
out=$root/bench-out/live
keep=0
usage() { sed -n '2,42p' "$0"; }
need() { [[ $# -ge 2 && -n $2 ]] || { echo "live.sh: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --inputs|--engines|--threads|--rules|--duration|--loss|--precision|--max-trials|--generator|\
    --shrike|--suricata|--suricata-yaml|--start-timeout|--out)
      need "$@" ;;&
    --inputs) inputs=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rules) rules=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --loss) loss_ok=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    --max-trials) max_trials=$2; shift 2 ;;
    --generator) generator=$2; shift 2 ;;
    --shrike) shrike=$2; shift 2 ;;
    --suricata) suricata=$2; shift 2 ;;
    --suricata-yaml) suricata_yaml=$2; shift 2 ;;
    --shrike-args) shrike_args=${2:-}; shift 2 ;;
    --suricata-args) suricata_args=${2:-}; shift 2 ;;
    --start-timeout) start_timeout=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "live.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

num() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "live.sh: $1 must be a number, not '$2'" >&2; exit 2; }; }
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "live.sh: --threads must be a positive integer" >&2; exit 2; }
[[ $max_trials =~ ^[1-9][0-9]*$ ]] || { echo "live.sh: --max-trials must be a positive integer" >&2; exit 2; }
num --duration "$duration"; num --loss "$loss_ok"; num --precision "$precision"; num --start-timeout "$start_timeout"
IFS=, read -r -a engine_list <<< "$engines"
for e in "${engine_list[@]}"; do
  [[ $e == shrike || $e == suricata ]] || { echo "live.sh: unknown engine '$e' (shrike, suricata)" >&2; exit 2; }
done
IFS=, read -r -a input_list <<< "$inputs"
[[ ${#input_list[@]} -gt 0 ]] || { echo "live.sh: --inputs is empty" >&2; exit 2; }
if [[ -n $rules && ! -r $rules ]]; then echo "live.sh: cannot read rules $rules" >&2; exit 2; fi
case $generator in
  auto|pace|trafgen|tcpreplay) ;;
  *) echo "live.sh: --generator must be pace, trafgen, tcpreplay or auto" >&2; exit 2 ;;
esac

[[ $(id -u) == 0 ]] || { echo "live.sh: needs root (network namespaces, AF_PACKET)" >&2; exit 1; }
if [[ $generator == auto ]]; then
  if command -v cc >/dev/null; then generator=pace
  elif command -v trafgen >/dev/null; then generator=trafgen
  else generator=tcpreplay; fi
fi
gen_tool=$generator
[[ $generator == pace ]] && gen_tool=cc
tools=(ip python3 awk "$gen_tool")
[[ $generator == trafgen ]] && tools+=(tc)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "live.sh: $tool is required" >&2; exit 1; }
done
for e in "${engine_list[@]}"; do
  if [[ $e == shrike ]]; then
    if [[ -z $shrike ]]; then
      for b in "$root/target/dist/shrike" "$root/target/release/shrike" "$(command -v shrike || true)"; do
        [[ -n $b && -x $b ]] && { shrike=$b; break; }
      done
    fi
    [[ -n $shrike && -x $shrike ]] || { echo "live.sh: no shrike binary (cargo build --profile dist, or --shrike PATH)" >&2; exit 1; }
  else
    [[ -n $suricata ]] || suricata=$(command -v suricata || true)
    [[ -n $suricata && -x $suricata ]] || { echo "live.sh: Suricata not found (../shared/tools/install-suricata.sh, or --suricata PATH)" >&2; exit 1; }
    [[ -r $suricata_yaml ]] || { echo "live.sh: cannot read $suricata_yaml" >&2; exit 1; }
  fi
done

helper=$here/live/livebench.py
ns=shrike-livebench-$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shrike-livebench.XXXXXX")
eng_pid=
gen_pid=
cleanup() {
  local pid
  for pid in $gen_pid $eng_pid; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in $gen_pid $eng_pid; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  ip netns del "$ns" 2>/dev/null || true
  if [[ $keep == 1 ]]; then echo "live.sh: scratch directory kept: $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "live.sh: $*" >&2; exit 1; }

mkdir -p "$out"
if [[ $generator == pace ]]; then
  cc -O2 -Wall -o "$tmp/pace" "$here/live/pace.c" || die "cannot build $here/live/pace.c"
fi
records=$out/trials.jsonl
: > "$records"

# --- inputs ---------------------------------------------------------------------------------
gen_traffic=
for g in "$root/../shared/tools/gen-traffic.py" /work/shared/tools/gen-traffic.py; do
  [[ -r $g ]] && { gen_traffic=$g; break; }
done
declare -A pcap_of pkts_of bytes_of maxlen_of unique_of cfg_of ceiling_of
for input in "${input_list[@]}"; do
  case $input in
    udp64)
      pcap=$tmp/udp64.pcap
      python3 "$root/scripts/trafgen/mkpcap.py" --size 64 --count 10000 --flows 1024 "$pcap" ;;
    mix)
      [[ -n $gen_traffic ]] || die "the mix input needs ../shared/tools/gen-traffic.py"
      pcap=$tmp/mix.pcap
      python3 "$gen_traffic" --mode mix --size-mb 5 --seed 1 -o "$pcap" > /dev/null ;;
    *)
      [[ -r $input ]] || die "input '$input' is neither udp64, mix nor a readable pcap"
      pcap=$input ;;
  esac
  pcap_of[$input]=$pcap
  read -r pkts_of[$input] bytes_of[$input] maxlen_of[$input] unique_of[$input] \
    < <(python3 "$helper" pcap-info "$pcap")
  [[ ${pkts_of[$input]} -gt 0 ]] || die "$input has no packets"
  if [[ $generator == trafgen ]]; then
    cfg_of[$input]=$tmp/$(basename "$input" .pcap).cfg
    python3 "$helper" trafgen-cfg --unique "$pcap" "${cfg_of[$input]}" > /dev/null
  elif [[ $generator == pace ]]; then
    cfg_of[$input]=$tmp/$(basename "$input" .pcap).bin
    python3 "$helper" frames --unique "$pcap" "${cfg_of[$input]}" > /dev/null
  fi
done
rules_file=$rules
if [[ -z $rules_file ]]; then rules_file=$tmp/empty.rules; : > "$rules_file"; fi
rule_lines=$(grep -c '^[[:space:]]*[a-z]' "$rules_file" || true)
if [[ -z $rules ]]; then rules_desc="none (empty rule file)"; else rules_desc="$(basename "$rules") ($rule_lines rules)"; fi

# --- the namespace ----------------------------------------------------------------------------
ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$ns" link add v0 type veth peer name v1
for dev in lo v0 v1; do ip -n "$ns" link set "$dev" up; done
for dev in v0 v1; do ip -n "$ns" link set "$dev" mtu 9000; done
ip -n "$ns" link set v1 txqueuelen 10000
ifindex=$(nsx cat /sys/class/net/v0/ifindex)
stat_of() { nsx cat "/sys/class/net/$1/statistics/$2"; }

# Packet sockets bound to v0 in the namespace (a started engine has one per thread).
v0_sockets() { nsx awk -v i="$ifindex" 'NR > 1 && $5 == i { n++ } END { print n + 0 }' /proc/net/packet; }

# --- engines ------------------------------------------------------------------------------------
run_dir=$tmp/run
start_engine() {
  local engine=$1 ready cmd
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  if [[ $engine == shrike ]]; then
    # shellcheck disable=SC2206
    cmd=("$shrike" -i v0 --workers "$threads" --runmode workers -k none -S "$rules_file"
         -l "$run_dir" $shrike_args)
    ready='capturing on'
  else
    # shellcheck disable=SC2206
    cmd=("$suricata" -c "$suricata_yaml" -k none --runmode workers --af-packet=v0
         --set af-packet.0.interface=v0 --set "af-packet.0.threads=$threads"
         --set af-packet.0.cluster-type=cluster_flow --set af-packet.0.cluster-id=99
         --set af-packet.0.defrag=yes --set af-packet.0.tpacket-v3=yes
         --set unix-command.enabled=no -l "$run_dir" -S "$rules_file" $suricata_args)
    ready='[Ee]ngine started'
  fi
  echo "${cmd[*]}" > "$run_dir/command"
  : > "$run_dir/stdout"
  local t0; t0=$(date +%s%N)
  # Not through nsx: $! must be the engine itself (ip netns exec execs it).
  ip netns exec "$ns" "${cmd[@]}" > "$run_dir/stdout" 2>&1 &
  eng_pid=$!
  local deadline=$(( $(date +%s) + ${start_timeout%.*} ))
  until grep -qE "$ready" "$run_dir/stdout"; do
    if ! kill -0 "$eng_pid" 2>/dev/null; then
      tail -20 "$run_dir/stdout" >&2; die "$engine exited during start-up"
    fi
    (( $(date +%s) < deadline )) || { tail -20 "$run_dir/stdout" >&2; die "$engine did not start within ${start_timeout}s"; }
    sleep 0.1
  done
  # Ready once every capture thread has its socket on v0.
  for _ in $(seq 200); do
    (( $(v0_sockets) >= threads )) && break
    sleep 0.05
  done
  (( $(v0_sockets) >= threads )) || die "$engine: $(v0_sockets) of $threads sockets on v0"
  sleep 0.3
  t_startup=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{ printf "%.1f", (b - a) / 1e9 }')
}

stop_engine() {
  local engine=$1
  kill -TERM "$eng_pid" 2>/dev/null || true
  local deadline=$(( $(date +%s) + 120 ))
  while kill -0 "$eng_pid" 2>/dev/null; do
    (( $(date +%s) < deadline )) || { kill -KILL "$eng_pid" 2>/dev/null || true; die "$engine did not stop within 120 s of SIGTERM"; }
    sleep 0.1
  done
  local rc=0
  wait "$eng_pid" 2>/dev/null || rc=$?
  eng_pid=
  [[ $rc == 0 ]] || { tail -20 "$run_dir/stdout" >&2; die "$engine exited with status $rc"; }
}

# --- generator ------------------------------------------------------------------------------------
# generate INPUT RATE COUNT (RATE 0 = top speed): sets g_sent (frames the generator sent, less
# any a shaper dropped), g_pps (the achieved rate) and g_qdrops.
# Pacing matters: trafgen's own --rate sends a second's worth of frames at top speed and then
# sleeps, which measures ring depth rather than throughput, so it is not used. pace sends
# batches of about 200 us worth of frames on an absolute timeline; tcpreplay paces with --pps
# in bursts of the same size (--pps-multi); trafgen runs flat out into a token bucket (tc tbf)
# on v1 through the qdisc path (--qdisc-path --gap 0: blocking sendto(), so nothing is dropped
# before the wire; the bucket counts bytes: RATE x the mean frame size, burst 64 mean frames).
generate() {
  local input=$1 rate=$2 count=$3 log=$tmp/gen.out shaped=0
  local burst=$(( rate / 5000 ))
  (( burst >= 1 )) || burst=1
  (( burst <= 256 )) || burst=256
  g_qdrops=0
  case $generator in
    pace)
      local args=(v1 "${cfg_of[$input]}" "$count")
      [[ $rate == 0 ]] || args+=("$rate")
      ip netns exec "$ns" "$tmp/pace" "${args[@]}" > "$log" 2>&1 & ;;
    trafgen)
      local args=(--dev v1 --conf "${cfg_of[$input]}" --num "$count" --cpus 1 --no-sock-mem --notouch-irq)
      if [[ $rate != 0 ]]; then
        local bits tb
        bits=$(awk -v r="$rate" -v b="${bytes_of[$input]}" -v p="${pkts_of[$input]}" 'BEGIN{ printf "%d", r * b / p * 8 }')
        tb=$(awk -v b="${bytes_of[$input]}" -v p="${pkts_of[$input]}" -v m="${maxlen_of[$input]}" \
          'BEGIN{ x = int(64 * b / p); if (x < 2 * m) x = 2 * m; print x }')
        nsx tc qdisc replace dev v1 root tbf rate "${bits}bit" burst "$tb" limit 268435456
        shaped=1
        args+=(--qdisc-path --gap 0)
      fi
      ip netns exec "$ns" trafgen "${args[@]}" > "$log" 2>&1 & ;;
    tcpreplay)
      local pkts=${pkts_of[$input]} loops
      loops=$(( (count + pkts - 1) / pkts ))
      local args=(--intf1=v1 --limit="$count" --loop="$loops")
      (( loops > 1 && ${unique_of[$input]} > 0 )) && args+=(--unique-ip)
      if [[ $rate == 0 ]]; then args+=(--topspeed); else args+=(--pps="$rate" --pps-multi="$burst"); fi
      ip netns exec "$ns" tcpreplay "${args[@]}" "${pcap_of[$input]}" > "$log" 2>&1 & ;;
  esac
  gen_pid=$!
  local rc=0
  wait "$gen_pid" || rc=$?
  gen_pid=
  if (( shaped )); then
    g_qdrops=$(nsx tc -s qdisc show dev v1 | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
    nsx tc qdisc del dev v1 root
  fi
  [[ $rc == 0 ]] || { cat "$log" >&2; die "$generator failed ($rc)"; }
  local secs
  case $generator in
    pace)
      g_sent=$(sed -n 's/^sent \([0-9]*\) packets in \([0-9.]*\) seconds.*/\1/p' "$log" | head -1)
      secs=$(sed -n 's/^sent \([0-9]*\) packets in \([0-9.]*\) seconds.*/\2/p' "$log" | head -1) ;;
    trafgen)
      g_sent=$(sed -n 's/^[[:space:]]*\([0-9]*\) packets outgoing.*/\1/p' "$log" | head -1)
      secs=$(sed -n 's/^[[:space:]]*\([0-9]*\) sec, \([0-9]*\) usec on CPU.*/\1 \2/p' "$log" | head -1 |
             awk '{ printf "%.6f", $1 + $2 / 1e6 }') ;;
    tcpreplay)
      g_sent=$(sed -n 's/.*Actual: \([0-9]*\) packets.* in \([0-9.]*\) seconds.*/\1/p' "$log" | head -1)
      secs=$(sed -n 's/.*Actual: \([0-9]*\) packets.* in \([0-9.]*\) seconds.*/\2/p' "$log" | head -1) ;;
  esac
  [[ -n $g_sent && -n $secs ]] || { cat "$log" >&2; die "cannot read $generator's counts"; }
  g_qdrops=${g_qdrops:-0}
  g_sent=$(( g_sent - g_qdrops ))
  g_pps=$(awk -v n="$g_sent" -v s="$secs" 'BEGIN{ printf "%d", (s > 0) ? n / s : 0 }')
}

# The generator's top speed with no engine attached: the ceiling of this host's sender.
calibrate() {
  local input=$1 count
  count=$(awk -v d="$duration" 'BEGIN{ c = int(200000 * d); if (c < 20000) c = 20000; print c }')
  generate "$input" 0 "$count"
  ceiling_of[$input]=$g_pps
}

# --- one trial ------------------------------------------------------------------------------------
jn() { [[ -z $1 || $1 == - ]] && echo null || echo "$1"; }

# trial ENGINE INPUT RATE (0 = top speed): sets t_ok, t_pps (achieved), t_short (the generator
# fell more than 5% short of RATE), t_rules, t_startup.
trial() {
  local engine=$1 input=$2 rate=$3 count
  if [[ $rate == 0 ]]; then
    count=$(awk -v c="${ceiling_of[$input]}" -v d="$duration" 'BEGIN{ printf "%d", c * d }')
  else
    count=$(awk -v c="$rate" -v d="$duration" 'BEGIN{ printf "%d", c * d }')
  fi
  (( count >= 1000 )) || count=1000
  start_engine "$engine"
  local tx0 rx0
  tx0=$(stat_of v1 tx_packets); rx0=$(stat_of v0 rx_packets)
  generate "$input" "$rate" "$count"
  local wire=$(( $(stat_of v1 tx_packets) - tx0 )) delivered=$(( $(stat_of v0 rx_packets) - rx0 ))
  sleep 0.5
  stop_engine "$engine"
  local line inspected='' kernel_packets='' kernel_drops='' rules='' alerts='' source='' kv
  line=$(python3 "$helper" counters "$engine" "$run_dir" "$run_dir/stdout") || {
    tail -20 "$run_dir/stdout" >&2; die "$engine: no final counters ($line)"; }
  for kv in $line; do
    case ${kv%%=*} in
      inspected) inspected=${kv#*=} ;; kernel_packets) kernel_packets=${kv#*=} ;;
      kernel_drops) kernel_drops=${kv#*=} ;; rules) rules=${kv#*=} ;;
      alerts) alerts=${kv#*=} ;; source) source=${kv#*=} ;;
    esac
  done
  local loss=$(( g_sent - inspected ))
  (( loss >= 0 )) || loss=0
  local loss_pct
  loss_pct=$(awk -v l="$loss" -v s="$g_sent" 'BEGIN{ printf "%.4f", (s > 0) ? l * 100 / s : 100 }')
  t_ok=false
  awk -v l="$loss_pct" -v m="$loss_ok" 'BEGIN{ exit !(l <= m) }' && t_ok=true
  t_short=false
  [[ $rate != 0 ]] && awk -v g="$g_pps" -v r="$rate" 'BEGIN{ exit !(g < 0.95 * r) }' && t_short=true
  t_pps=$g_pps
  t_rules=$rules
  printf '{"kind":"trial","input":"%s","engine":"%s","asked_pps":%s,"achieved_pps":%s,"short":%s,"sent":%s,"shaper_drops":%s,"wire":%s,"delivered_v0":%s,"inspected":%s,"kernel_packets":%s,"kernel_drops":%s,"loss":%s,"loss_pct":%s,"ok":%s,"rules_loaded":%s,"alerts":%s,"counters_from":"%s","startup_s":%s}\n' \
    "$input" "$engine" "$rate" "$g_pps" "$t_short" "$g_sent" "$g_qdrops" "$wire" "$delivered" \
    "$(jn "$inspected")" "$(jn "$kernel_packets")" "$(jn "$kernel_drops")" "$loss" "$loss_pct" \
    "$t_ok" "$(jn "$rules")" "$(jn "$alerts")" "$source" "$t_startup" >> "$records"
  local asked="top speed"
  [[ $rate == 0 ]] || asked="$rate pps"
  printf '  %-8s %-8s %-14s achieved %8s pps: sent %9s, inspected %9s (kernel drops %s), loss %s%% %s%s\n' \
    "$input" "$engine" "$asked" "$g_pps" "$g_sent" "$inspected" "$kernel_drops" "$loss_pct" \
    "$([[ $t_ok == true ]] && echo ok || echo LOSS)" "$([[ $t_short == true ]] && echo " (generator short of the rate)" || true)"
}

# --- the search -----------------------------------------------------------------------------------
# A top-speed trial first: loss-free there means the generator, not the engine, is the limit.
# Otherwise binary search between 0 and that rate; a loss-free trial at which the generator
# fell short of the rate asked also ends the search at the generator's limit.
search() {
  local engine=$1 input=$2 trials=1 best limit lowest_failed=0 startup rules_loaded
  trial "$engine" "$input" 0
  startup=$t_startup rules_loaded=${t_rules:--}
  local top=$t_pps
  if [[ $t_ok == true ]]; then
    best=$top limit=generator
  else
    local lo=0 hi=$top mid got
    best=0 limit=engine lowest_failed=$top
    while (( trials < max_trials )); do
      awk -v lo="$lo" -v hi="$hi" -v p="$precision" 'BEGIN{ exit !((hi - lo) > p * hi) }' || break
      mid=$(( (lo + hi) / 2 ))
      (( mid >= 100 )) || break
      trial "$engine" "$input" "$mid"
      trials=$((trials + 1))
      got=$(( t_pps < mid ? t_pps : mid ))
      if [[ $t_ok == true ]]; then
        # Credit what the generator achieved, not what was asked.
        lo=$got best=$got
        if [[ $t_short == true ]]; then limit=generator; break; fi
      else
        (( got > lo )) && hi=$got || hi=$mid
        (( hi < lowest_failed )) && lowest_failed=$hi
      fi
    done
  fi
  [[ $rules_loaded == - || -z $rules_loaded ]] && rules_loaded=null
  printf '{"kind":"result","input":"%s","engine":"%s","pps":%s,"limit":"%s","lowest_failed":%s,"top_speed_pps":%s,"avg_frame_bytes":%s,"rules_loaded":%s,"startup_s":%s}\n' \
    "$input" "$engine" "$best" "$limit" "$lowest_failed" "$top" \
    "$(awk -v b="${bytes_of[$input]}" -v p="${pkts_of[$input]}" 'BEGIN{ printf "%.1f", b / p }')" \
    "$rules_loaded" "$startup" >> "$records"
  if [[ $engine == shrike && -n $rules && $rule_lines -gt 0 && $rules_loaded == null ]]; then
    warnings+=("shrike reported no loaded rules for $input: this build may not load rules")
  fi
}

warnings=()
echo "# loss-free rate, namespace $ns, generator $generator, $threads thread(s), rules: $rules_desc, ${duration}s trials"
for input in "${input_list[@]}"; do
  calibrate "$input"
  echo "  $input: ${pkts_of[$input]} packets, generator ceiling with no engine ${ceiling_of[$input]} pps"
  for e in "${engine_list[@]}"; do
    search "$e" "$input"
  done
done

# --- report ---------------------------------------------------------------------------------------
ceil_json=$(for i in "${input_list[@]}"; do printf '"%s":%s\n' "$i" "${ceiling_of[$i]}"; done | paste -sd, -)
esc() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
warn_json=$( (( ${#warnings[@]} )) && printf '%s\n' "${warnings[@]}" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().splitlines()))' || echo '[]')
suricata_version=null
[[ -n $suricata ]] && suricata_version=$(esc "$("$suricata" -V 2>/dev/null | head -1)")
printf '{"kind":"meta","command":%s,"generator":"%s","threads":%s,"rules_file":%s,"rule_lines":%s,"rules_desc":%s,"duration":%s,"loss_pct":%s,"precision":%s,"max_trials":%s,"cpus":%s,"kernel":%s,"date":"%s","netns":"%s","shrike":%s,"suricata":%s,"ceilings":{%s},"warnings":%s}\n' \
  "$(esc "$cmdline")" "$generator" "$threads" "$(esc "${rules:-}")" "$rule_lines" "$(esc "$rules_desc")" "$duration" \
  "$loss_ok" "$precision" "$max_trials" "$(nproc)" "$(esc "$(uname -r)")" "$(date -u +%Y-%m-%dT%H:%MZ)" "$ns" \
  "$(esc "${shrike:-}")" "$suricata_version" "$ceil_json" "$warn_json" >> "$records"
echo
python3 "$helper" report "$records" "$out/live.md" "$out/live.json"
for w in "${warnings[@]}"; do echo "warning: $w"; done
echo
echo "written: $out/live.md, $out/live.json, $out/trials.jsonl"
