#!/usr/bin/env bash
# The whole test suite: set-up (Debian packages), formatting and lint checks, every crate's
# unit and integration tests, and the end-to-end tests against the shared corpus.
# CI (.ci/run) calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
# The DPDK tests (net_pcap and net_af_packet virtual devices, no hugepages, no NIC) run by
# default; SHRIKE_WITH_DPDK=0 skips them and their Debian packages.
export SHRIKE_WITH_DPDK="${SHRIKE_WITH_DPDK:-1}"
./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
./scripts/deny.sh
# Optimised (profile `ci`, Cargo.toml): the end-to-end tests replay the whole corpus and the
# suricata-verify subset.
cargo test --workspace --profile ci --locked
if [[ "$SHRIKE_WITH_DPDK" == 1 ]]; then
  cargo test -p shrike-capture --features dpdk --profile ci --locked --test dpdk_pcap --test dpdk_afpacket
fi
