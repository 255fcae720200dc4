#!/usr/bin/env bash
# Ring read throughput of the AF_PACKET source on a veth pair in a private network namespace
# (needs root; traffic stays inside the namespace, which is removed afterwards).
#   SHRIKE_BENCH_PACKETS  packets per run (default 500000)
#   SHRIKE_BENCH_SIZES    frame sizes, comma-separated (default 64,512,1500)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $(id -u) -ne 0 ]]; then
  echo "live.sh: needs root (network namespaces, AF_PACKET)" >&2
  exit 1
fi
exec cargo bench -p shrike-capture --bench live "$@"
