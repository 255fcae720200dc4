#!/usr/bin/env bash
# The whole test suite: set-up (Debian packages), formatting and lint checks, every crate's
# unit and integration tests, and the end-to-end tests against the shared corpus.
# CI (.ci/run) calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
./scripts/deny.sh
# Release mode: the end-to-end tests replay the whole corpus and the suricata-verify subset.
cargo test --workspace --release --locked
