#!/usr/bin/env bash
# Alert set of one shrike run, for comparing two builds: the sorted "signature_id pcap_cnt"
# lines of the EVE alerts of a --runmode single run.
# Usage: scripts/bench/alertset.sh BIN PCAP RULES OUTFILE   (then: cmp before.txt after.txt)
set -euo pipefail
o=$(mktemp -d)
trap 'rm -rf "$o"' EXIT
"$1" -q -k none --runmode single -r "$2" -S "$3" -l "$o"
python3 - "$o/eve.json" > "$4" <<'PY'
import json, sys
pairs = sorted((r["alert"]["signature_id"], r.get("pcap_cnt", 0))
               for r in map(json.loads, open(sys.argv[1])) if r.get("event_type") == "alert")
sys.stdout.write("".join(f"{s} {c}\n" for s, c in pairs))
PY
