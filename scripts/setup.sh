#!/usr/bin/env bash
# One-time set-up on Debian 12: the packages shrike's build and tests need.
# Safe to run again: it installs only what is missing. Needs root for apt-get.
set -euo pipefail

# prometheus: its promtool checks the metrics endpoint's output (tests/metrics_file_mode.rs).
# libmagic1: loaded at run time for fileinfo.magic and filemagic rules (shrike-sys::magic).
PKGS=(build-essential pkg-config libpcre2-dev python3 iproute2 tcpreplay redis-server
      libhyperscan-dev prometheus libmagic1)
if [[ "${SHRIKE_WITH_DPDK:-0}" == 1 ]]; then
  PKGS+=(dpdk dpdk-dev libdpdk-dev libclang-dev clang libpcap-dev)
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: Rust is missing. Install it with rustup (https://rustup.rs), Rust 1.85 or newer." >&2
  exit 1
fi
