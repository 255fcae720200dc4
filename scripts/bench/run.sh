#!/usr/bin/env bash
# shrike vs Suricata 7 benchmark suite: builds shrike (release), generates the inputs and
# prints/writes the comparison table (bench-out/results.{md,json}, PNG charts).
# Usage: scripts/bench/run.sh [--quick] [--runs N] [--inputs mix,udp64] [--rules none,etopen] ...
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v suricata >/dev/null || ../shared/tools/install-suricata.sh
cargo build --profile dist --quiet
exec python3 scripts/bench/bench.py "$@"
