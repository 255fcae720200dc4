#!/usr/bin/env bash
# Installs shrike as a service: binary, systemd unit, configs, logrotate, user and directories.
#
#   scripts/install.sh [options]                 install
#   scripts/install.sh --uninstall [--purge]     remove what was installed (--purge also
#                                                removes /etc/shrike, logs, state and the user)
# Options:
#   --prefix DIR      installation prefix (default /usr)
#   --destdir DIR     stage into DIR instead of / (default $DESTDIR); no user is created and no
#                     ownership is set there (packagers do that), nothing is started
#   --sysconfdir DIR  default /etc
#   --localstatedir DIR  default /var
#   --binary PATH     the shrike binary (default target/release/shrike)
#   --no-user         do not create the shrike user
#
# Nothing is enabled or started: after installing, copy /etc/shrike/shrike.yaml (or an
# example from /usr/share/shrike/examples) to /etc/shrike/<nic>.yaml and run
# `systemctl enable --now shrike@<nic>`. See docs/operations.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=/usr
destdir=${DESTDIR:-}
sysconfdir=/etc
localstatedir=/var
binary=$root/target/release/shrike
mode=install
purge=0
mkuser=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --prefix) prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --destdir) destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    --sysconfdir) sysconfdir=$2; shift 2 ;;
    --localstatedir) localstatedir=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=1; shift ;;
    --no-user) mkuser=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $prefix == /* ]] || { echo "install.sh: --prefix must be absolute" >&2; exit 2; }
destdir=${destdir%/}
D=$destdir
bindir=$prefix/bin
unitdir=$prefix/lib/systemd/system
sysusersdir=$prefix/lib/sysusers.d
tmpfilesdir=$prefix/lib/tmpfiles.d
sharedir=$prefix/share/shrike
docdir=$prefix/share/doc/shrike
confdir=$sysconfdir/shrike
logdir=$localstatedir/log/shrike
statedir=$localstatedir/lib/shrike
manifest=$sharedir/install-manifest

log() { echo "install.sh: $*"; }
have_user() { getent passwd shrike >/dev/null 2>&1; }

installed=()
put() { # mode src dst
  install -D -m "$1" "$2" "$D$3"
  installed+=("$3")
}

do_install() {
  if [[ ! -x $binary ]]; then
    echo "install.sh: no binary at $binary (cargo build --release, or --binary PATH)" >&2
    exit 1
  fi
  put 0755 "$binary" "$bindir/shrike"
  # The unit names the binary by its installed path.
  local tmp
  tmp=$(mktemp)
  sed "s#/usr/bin/shrike#$bindir/shrike#g" "$root/systemd/shrike@.service" > "$tmp"
  put 0644 "$tmp" "$unitdir/shrike@.service"
  sed "s#/usr/share/shrike#$sharedir#g" "$root/systemd/shrike-nic-tune@.service" > "$tmp"
  put 0644 "$tmp" "$unitdir/shrike-nic-tune@.service"
  rm -f "$tmp"
  put 0644 "$root/systemd/shrike.sysusers" "$sysusersdir/shrike.conf"
  put 0644 "$root/systemd/shrike.tmpfiles" "$tmpfilesdir/shrike.conf"
  put 0644 "$root/systemd/dpdk.conf" "$sharedir/systemd/dpdk.conf"
  put 0644 "$root/systemd/shrike.logrotate" "$sysconfdir/logrotate.d/shrike"
  put 0644 "$root/configs/shrike.yaml" "$sharedir/shrike.yaml"
  for f in "$root"/configs/examples/*.yaml; do
    put 0644 "$f" "$sharedir/examples/$(basename "$f")"
  done
  for f in nic-tune.sh rfc2544.sh; do
    put 0755 "$root/scripts/$f" "$sharedir/scripts/$f"
  done
  for f in "$root"/scripts/trafgen/*; do
    local m=0644
    [[ -x $f ]] && m=0755
    put "$m" "$f" "$sharedir/scripts/trafgen/$(basename "$f")"
  done
  put 0644 "$root/docs/operations.md" "$docdir/operations.md"

  # The configuration is the admin's: never overwritten (a new default goes to .new).
  install -d -m 0750 "$D$confdir"
  if [[ -e $D$confdir/shrike.yaml ]] && ! cmp -s "$root/configs/shrike.yaml" "$D$confdir/shrike.yaml"; then
    install -m 0640 "$root/configs/shrike.yaml" "$D$confdir/shrike.yaml.new"
    log "kept your $confdir/shrike.yaml; the new default is $confdir/shrike.yaml.new"
  else
    install -m 0640 "$root/configs/shrike.yaml" "$D$confdir/shrike.yaml"
  fi
  install -d -m 0750 "$D$logdir" "$D$statedir"

  if [[ -z $D && $mkuser == 1 ]] && ! have_user; then
    if command -v systemd-sysusers >/dev/null && [[ -d /run/systemd/system ]]; then
      systemd-sysusers "$sysusersdir/shrike.conf"
    else
      useradd --system --user-group --no-create-home --home-dir "$statedir" \
        --shell /usr/sbin/nologin --comment "shrike IDS sensor" shrike
    fi
    log "created user shrike"
  fi
  if [[ -z $D ]] && have_user; then
    chown root:shrike "$confdir" "$confdir/shrike.yaml"
    chown shrike:shrike "$logdir" "$statedir"
  fi
  mkdir -p "$(dirname "$D$manifest")"
  printf '%s\n' "${installed[@]}" "$manifest" > "$D$manifest"
  if [[ -z $D ]] && [[ -d /run/systemd/system ]]; then
    systemctl daemon-reload || true
  fi
  log "installed into ${D:-/} (prefix $prefix); next: cp $confdir/shrike.yaml $confdir/<nic>.yaml, edit, systemctl enable --now shrike@<nic>"
}

do_uninstall() {
  if [[ -z $D ]] && command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    if systemctl list-units --plain --no-legend 'shrike@*' 2>/dev/null | grep -q .; then
      log "stopping running shrike@ instances"
      systemctl stop 'shrike@*' || true
    fi
  fi
  local files=()
  if [[ -f $D$manifest ]]; then
    mapfile -t files < "$D$manifest"
    for f in "${files[@]}"; do
      [[ -n $f ]] && rm -f "$D$f"
    done
  else
    log "no manifest at $D$manifest; removing the default file set"
    rm -f "$D$bindir/shrike" "$D$unitdir/shrike@.service" "$D$sysusersdir/shrike.conf" \
      "$D$tmpfilesdir/shrike.conf" "$D$sysconfdir/logrotate.d/shrike"
    rm -rf "${D:?}$sharedir" "${D:?}$docdir"
  fi
  # Remove the directories that held installed files, upwards, while they are empty: in a
  # staging tree all of them, on a live system only shrike's own.
  for f in "${files[@]}" "$sharedir/examples/x" "$sharedir/scripts/trafgen/x" \
    "$sharedir/systemd/x" "$docdir/x"; do
    local d
    d=$(dirname "$f")
    while [[ $d != / && $d != . ]]; do
      if [[ -z $D && $d != "$sharedir"* && $d != "$docdir"* ]]; then break; fi
      rmdir "$D$d" 2>/dev/null || break
      d=$(dirname "$d")
    done
  done
  if [[ $purge == 1 ]]; then
    rm -rf "${D:?}$confdir" "${D:?}$logdir" "${D:?}$statedir"
    for d in "$confdir" "$logdir" "$statedir"; do
      d=$(dirname "$d")
      while [[ -n $D && $d != / && $d != . ]] && rmdir "$D$d" 2>/dev/null; do
        d=$(dirname "$d")
      done
    done
    if [[ -z $D ]] && have_user; then
      userdel shrike || true
    fi
    log "purged configuration, logs, state and the shrike user"
  else
    log "kept $confdir, $logdir and $statedir (use --purge to remove them)"
  fi
  if [[ -z $D ]] && [[ -d /run/systemd/system ]]; then
    systemctl daemon-reload || true
  fi
  log "uninstalled from ${D:-/}"
}

if [[ $mode == install ]]; then do_install; else do_uninstall; fi
