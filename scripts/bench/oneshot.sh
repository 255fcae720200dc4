#!/usr/bin/env bash
# Issue 11: one-shot run of a tiny capture with the full ET Open ruleset, the way a desktop
# tool (Brimcap/Zui) drives an IDS. Wall time of
#   cat small.pcap | shrike -r - -S et.rules --eve-stdout | wc -l
# next to Suricata's equivalent (it cannot read a pipe: -r on the file, -l tmpdir, count eve
# lines), interleaved, RUNS runs each (default 5), medians printed.
# Usage: scripts/bench/oneshot.sh [SMALL_PCAP] [RULES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SMALL=${1:-/tmp/small.pcap}
RULES=${2:-/tmp/et.rules}
RUNS=${3:-5}
ET=$(realpath ../shared/corpus/rules/et-open)
if [ ! -s "$SMALL" ]; then
    python3 -c "import sys; sys.path.insert(0, 'scripts/bench'); import bench; bench.truncate_pcap('samples/sample.pcap', '$SMALL', 50)"
fi
[ -s "$RULES" ] || cat "$ET"/*.rules > "$RULES"
BIN=target/dist/shrike
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
for i in $(seq "$RUNS"); do
    t0=$(now)
    n=$(cat "$SMALL" | "$BIN" -r - -S "$RULES" --eve-stdout | wc -l)
    t1=$(now)
    echo "shrike $(echo "$t1 - $t0" | bc) $n"
    rm -rf "$tmp/s" && mkdir "$tmp/s"
    t0=$(now)
    suricata -r "$SMALL" -S "$RULES" -l "$tmp/s" \
        --set "classification-file=$ET/classification.config" >/dev/null 2>&1
    n=$(wc -l < "$tmp/s/eve.json")
    t1=$(now)
    grep -h "rules successfully loaded" "$tmp/s/suricata.log" >&2 || true
    echo "suricata $(echo "$t1 - $t0" | bc) $n"
done | tee "$tmp/times"
python3 - "$tmp/times" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for eng in ("shrike", "suricata"):
    ts = [float(r[1]) for r in rows if r[0] == eng]
    lines = [int(r[2]) for r in rows if r[0] == eng]
    med[eng] = statistics.median(ts)
    print(f"{eng}: median wall {med[eng]:.3f} s over {len(ts)} runs "
          f"(runs: {', '.join(f'{t:.3f}' for t in ts)}), eve lines {statistics.median(lines):.0f}")
print(f"suricata / shrike wall: {med['suricata'] / med['shrike']:.1f}x")
PY
