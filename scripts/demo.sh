#!/usr/bin/env bash
# Set up, build and run shrike on the bundled sample: samples/sample.pcap with
# samples/sample.rules -> out/eve.json (and out/fast.log); prints the run summary.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo build --release --locked --quiet
mkdir -p out
./target/release/shrike -r samples/sample.pcap -S samples/sample.rules -l out "$@"
echo "EVE records by type in out/eve.json:" >&2
grep -o '"event_type":"[a-z_]*"' out/eve.json | sort | uniq -c >&2
