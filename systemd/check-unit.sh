#!/usr/bin/env bash
# Checks the shrike systemd unit: `systemd-analyze verify` must print nothing (no unknown keys,
# no bad values, no missing binaries) and `systemd-analyze security --offline=yes` must rate
# its exposure at most MAX (default 2.0). Also checks the unit with the DPDK drop-in, and
# prints the exposure of Suricata's packaged unit for comparison when it is installed.
#
#   systemd/check-unit.sh [--binary PATH] [--max 2.0] [--unit FILE] [--quiet]
#
# --binary: an executable put in place of /usr/bin/shrike for verify (default: the built
#           target/{release,debug}/shrike, else /bin/true).
# Exit: 0 ok, 1 a check failed, 2 usage, 77 systemd-analyze missing (skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
unit=$here/shrike@.service
max=2.0
bin=
quiet=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --binary) bin=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "check-unit.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! command -v systemd-analyze >/dev/null; then
  echo "check-unit.sh: systemd-analyze not found; skipped" >&2
  exit 77
fi
if [[ -z $bin ]]; then
  for b in "$root/target/release/shrike" "$root/target/debug/shrike" /bin/true; do
    [[ -x $b ]] && { bin=$b; break; }
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=shrike@check.service
sed "s#/usr/bin/shrike#$bin#g" "$unit" > "$tmp/$name"

fail=0
say() { [[ $quiet == 1 ]] || echo "$@"; }

# 1. verify: any message is a failure (unknown keys are only warnings for systemd).
out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1) || { echo "$out"; echo "FAIL: verify exited non-zero"; fail=1; }
if [[ -n $out ]]; then
  echo "$out"
  echo "FAIL: systemd-analyze verify reported problems in $unit"
  fail=1
else
  say "verify: $unit OK"
fi

# 2. security exposure.
exposure() { # unit-file-or-name -> prints the number
  systemd-analyze security --offline=yes "$@" 2>/dev/null |
    sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p'
}
e=$(exposure "$tmp/$name")
if [[ -z $e ]]; then
  echo "FAIL: no exposure level from systemd-analyze security"
  fail=1
else
  echo "exposure shrike@.service: $e (max $max)"
  if awk -v e="$e" -v m="$max" 'BEGIN { exit !(e > m) }'; then
    systemd-analyze security --offline=yes "$tmp/$name" 2>/dev/null | grep '✗' || true
    echo "FAIL: exposure $e is above $max"
    fail=1
  fi
fi

# 3. the DPDK drop-in on top of the unit: must verify cleanly (exposure reported only).
if [[ -f $here/dpdk.conf ]]; then
  mkdir -p "$tmp/$name.d"
  cp "$here/dpdk.conf" "$tmp/$name.d/dpdk.conf"
  out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1) || true
  if [[ -n $out ]]; then
    echo "$out"
    echo "FAIL: the unit with dpdk.conf does not verify"
    fail=1
  else
    say "verify: with dpdk.conf OK"
  fi
  echo "exposure shrike@.service + dpdk.conf: $(exposure "$tmp/$name")"
  rm -rf "${tmp:?}/$name.d"
fi

# 4. The NIC tuning unit (a root oneshot; verified, not rated).
if [[ -f $here/shrike-nic-tune@.service ]]; then
  sed "s#/usr/share/shrike/scripts/nic-tune.sh#$root/scripts/nic-tune.sh#g" \
    "$here/shrike-nic-tune@.service" > "$tmp/shrike-nic-tune@check.service"
  out=$(systemd-analyze verify --man=no "$tmp/shrike-nic-tune@check.service" 2>&1) || true
  if [[ -n $out ]]; then
    echo "$out"
    echo "FAIL: shrike-nic-tune@.service does not verify"
    fail=1
  else
    say "verify: shrike-nic-tune@.service OK"
  fi
fi

# 5. Suricata's packaged unit, measured the same way (informational).
for s in /lib/systemd/system/suricata.service /usr/lib/systemd/system/suricata.service; do
  if [[ -f $s ]]; then
    echo "exposure $s: $(exposure "$s")"
    break
  fi
done
exit $fail
