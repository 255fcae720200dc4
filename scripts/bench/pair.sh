#!/usr/bin/env bash
# Interleaved shrike vs Suricata runs, --runmode single, one rules file, ROUNDS rounds.
# Prints "engine input user_cpu sys_cpu max_rss_kb wall" and the alert count of each run.
# Processing time of an input = its CPU seconds minus those of the 20-packet tiny input.
# Usage: scripts/bench/pair.sh SHRIKE_BIN RULES INPUT_DIR [ROUNDS] [INPUTS...]
#   e.g. scripts/bench/pair.sh target/release/shrike et-open-all.rules bench-out/norules/inputs 2 tiny mix udp64
set -euo pipefail
bin=$1 rules=$2 dir=$3 rounds=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
inputs=("$@")
[[ ${#inputs[@]} -gt 0 ]] || inputs=(tiny mix udp64)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
alerts() { grep -c '"event_type":"alert"' "$1/eve.json" || true; }
for ((r = 1; r <= rounds; r++)); do
  for inp in "${inputs[@]}"; do
    rm -rf "$out/s" "$out/r"; mkdir -p "$out/s" "$out/r"
    /usr/bin/time -f "shrike $inp %U %S %M %e" "$bin" -r "$dir/$inp.pcap" -S "$rules" \
      -l "$out/s" -q -k none --runmode single >/dev/null
    echo "shrike $inp alerts $(alerts "$out/s")"
    /usr/bin/time -o "$out/t" -f "suricata $inp %U %S %M %e" suricata -r "$dir/$inp.pcap" \
      -S "$rules" -l "$out/r" -k none --runmode single >/dev/null 2>&1
    cat "$out/t"
    echo "suricata $inp alerts $(alerts "$out/r")"
  done
done
