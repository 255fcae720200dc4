#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/) for MINUTES minutes each, one after the other, and
# prints executions, executions per second and findings per target.
#
#   scripts/fuzz.sh [MINUTES] [TARGET...]      (default 10 minutes, every target)
#
# Works on stable Rust: cargo-fuzz is built with `-s none` (no sanitizer; shrike-detect and
# the parsers are safe Rust, and libFuzzer still finds panics, overflows (overflow-checks are
# on in fuzz/Cargo.toml), hangs and OOMs). With a nightly toolchain, FUZZ_SANITIZER=address
# FUZZ_TOOLCHAIN=nightly adds AddressSanitizer.
# Needs `cargo install cargo-fuzz`. Seeds come from ../shared/corpus through fuzz/seeds.py
# (regenerated when fuzz/corpus/<target> is missing). Findings land in
# fuzz/artifacts/<target>/ (crash-*, timeout-*, oom-*); reproduce one with
#   fuzz/target/x86_64-unknown-linux-gnu/release/<target> fuzz/artifacts/<target>/crash-...
# A target that crashes is restarted for the rest of its time, so one bug does not hide
# others; the findings column counts distinct artifact files.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
MINUTES=${1:-10}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(decode pcap_reader rules config_yaml stream defrag http dns tls ssh sip rfb tftp snmp dhcp ike krb5 mqtt pgsql smtp ftp http2 smb dcerpc enip quic dnp3 modbus bittorrent_dht rdp nfs nfs_udp)
fi
SAN=${FUZZ_SANITIZER:-none}
TC=${FUZZ_TOOLCHAIN:-stable}
if ! cargo +"$TC" fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is not installed: cargo install cargo-fuzz" >&2
    exit 2
fi
cargo +"$TC" fuzz build -s "$SAN" -O || exit 1
BIN=target/x86_64-unknown-linux-gnu/release
declare -A MAXLEN=([decode]=4096 [pcap_reader]=65536 [rules]=8192 [config_yaml]=16384
    [stream]=16384 [defrag]=16384 [http]=16384 [dns]=16384 [tls]=16384
    [sip]=16384 [rfb]=16384 [tftp]=4096 [smb]=65536 [rdp]=16384 [nfs]=65536 [nfs_udp]=16384)
LOGDIR=${FUZZ_LOG_DIR:-target/fuzz-logs}
mkdir -p "$LOGDIR"
printf '%-12s %12s %8s %10s %9s %s\n' target execs secs execs/s findings corpus >"$LOGDIR/summary.txt"
for t in "${TARGETS[@]}"; do
    [ -d "corpus/$t" ] || python3 seeds.py >/dev/null
    mkdir -p "corpus/$t" "artifacts/$t"
    before=$(ls "artifacts/$t" | wc -l)
    total=$((MINUTES * 60))
    start=$(date +%s)
    execs=0
    : >"$LOGDIR/$t.log"
    while :; do
        left=$((start + total - $(date +%s)))
        [ "$left" -gt 5 ] || break
        "$BIN/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$left" \
            -max_len="${MAXLEN[$t]:-16384}" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 >>"$LOGDIR/$t.log" 2>&1
        n=$(tail -n 200 "$LOGDIR/$t.log" | grep -o 'stat::number_of_executed_units: [0-9]*' | tail -1 | awk '{print $2}')
        execs=$((execs + ${n:-0}))
        echo "--- run ended" >>"$LOGDIR/$t.log"
    done
    secs=$(($(date +%s) - start))
    found=$(($(ls "artifacts/$t" | wc -l) - before))
    printf '%-12s %12d %8d %10d %9d %d\n' "$t" "$execs" "$secs" "$((execs / (secs > 0 ? secs : 1)))" \
        "$found" "$(ls "corpus/$t" | wc -l)" | tee -a "$LOGDIR/summary.txt"
done
echo
cat "$LOGDIR/summary.txt"
echo "artifacts: $(cd artifacts && find . -type f | sort | tr '\n' ' ')"
