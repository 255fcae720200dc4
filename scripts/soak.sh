#!/usr/bin/env bash
# Soak test: one long-running shrike process fed a growing capture through `-r -` by
# scripts/soak_gen.py (a traffic mix looped with shifted timestamps and new client ports,
# so flows keep starting and timing out). RSS is sampled from /proc/<pid>/status every few
# seconds; after the warm-up, RSS must stay flat within 5%.
#
#   scripts/soak.sh [MINUTES]            (default 30)
#
# Environment: SHRIKE (binary, default target/release/shrike, built if missing),
# SOAK_PPS (packets per second, default 20000), SOAK_INTERVAL (seconds between samples,
# default 5), SOAK_WARMUP (seconds, default: a fifth of the run, at least 60 and at most 300),
# SOAK_DIR (where rss.tsv and logs go; default a fresh temporary directory), SOAK_ARGS
# (extra shrike arguments). EVE goes to /dev/null (the disk would fill otherwise); the
# stats record still goes through the output pipeline.
# Prints the RSS figures and exits 1 when RSS grew more than 5% after the warm-up (or the
# process failed).
set -uo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
PPS=${SOAK_PPS:-20000}
INTERVAL=${SOAK_INTERVAL:-5}
BIN=${SHRIKE:-target/release/shrike}
if [ ! -x "$BIN" ]; then
    cargo build --release || exit 1
fi
DIR=${SOAK_DIR:-$(mktemp -d /tmp/shrike-soak.XXXXXX)}
mkdir -p "$DIR/logs"
SECS=$(awk "BEGIN{print int($MINUTES*60)}")
WARMUP=${SOAK_WARMUP:-$(awk "BEGIN{w=int($SECS/5); if(w<60)w=60; if(w>300)w=300; print w}")}
echo "soak: $MINUTES min at $PPS packets/s, warm-up ${WARMUP}s, samples every ${INTERVAL}s, in $DIR"

python3 scripts/soak_gen.py --minutes "$MINUTES" --pps "$PPS" 2>"$DIR/gen.log" |
    "$BIN" -v -r - -l "$DIR/logs" --set output.eve.filename=/dev/null ${SOAK_ARGS:-} \
        2>"$DIR/shrike.log" &
PID=$!
START=$(date +%s)
echo -e "secs\trss_kib\thwm_kib" >"$DIR/rss.tsv"
while kill -0 "$PID" 2>/dev/null; do
    if st=$(cat "/proc/$PID/status" 2>/dev/null); then
        rss=$(awk '/^VmRSS:/{print $2}' <<<"$st")
        hwm=$(awk '/^VmHWM:/{print $2}' <<<"$st")
        now=$(($(date +%s) - START))
        [ -n "$rss" ] && echo -e "$now\t$rss\t$hwm" >>"$DIR/rss.tsv"
        if [ $((now % 60)) -lt "$INTERVAL" ]; then
            echo "soak: ${now}s rss ${rss} KiB (peak ${hwm} KiB)"
        fi
    fi
    sleep "$INTERVAL"
done
wait "$PID"
RC=$?
echo "soak: shrike exited $RC; $(tail -n 2 "$DIR/shrike.log" | head -n 1)"
cat "$DIR/gen.log"
python3 - "$DIR/rss.tsv" "$WARMUP" "$RC" <<'PY'
import sys
path, warm, rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [l.split("\t") for l in open(path).read().split("\n")[1:] if l.strip()]
rows = [(int(a), int(b), int(c)) for a, b, c in rows]
if not rows:
    print("soak: no RSS samples"); sys.exit(1)
after = [r for r in rows if r[0] >= warm]
peak = max(r[2] for r in rows)
print(f"soak: {len(rows)} samples over {rows[-1][0]}s; overall peak RSS {peak} KiB")
if len(after) < 4:
    print("soak: run too short for a verdict after the warm-up"); sys.exit(1 if rc else 0)
rss = [r[1] for r in after]
q = max(1, len(rss) // 4)
first, last = rss[:q], rss[-q:]
lo, hi = min(rss), max(rss)
print(f"soak: after warm-up ({warm}s): RSS min {lo} KiB, max {hi} KiB, spread {100*(hi-lo)/lo:.1f}%")
print(f"soak: first quarter max {max(first)} KiB, last quarter max {max(last)} KiB, "
      f"growth {100*(max(last)-max(first))/max(first):+.1f}%")
# Per-10-minute peaks, to show the trend.
step = 600
for s in range(0, rows[-1][0] + 1, step):
    seg = [r[1] for r in rows if s <= r[0] < s + step]
    if seg:
        print(f"soak:   {s//60:3d}-{(s+step)//60:3d} min: RSS max {max(seg)} KiB, mean {sum(seg)//len(seg)} KiB")
ok = max(last) <= max(first) * 1.05 and rc == 0
print("soak: PASS (flat within 5%)" if ok else "soak: FAIL")
sys.exit(0 if ok else 1)
PY
