//! `hostbits`: named bits stored per host (source or destination address of the packet),
//! expiring 300 seconds after they were last set (Suricata 7's `detect-hostbits.c`).
//!
//! The host table is per worker: with several workers a host's bits are only seen by the
//! worker that set them (flows of one host may land on different workers); with
//! `--workers 1` hostbits behave exactly as in Suricata.

use std::collections::HashMap;

use super::compile::SkipReason;
use super::packet::PacketView;

/// Seconds a set hostbit lives (Suricata's fixed `expire` for hostbits).
pub const HOSTBIT_EXPIRE_SECS: u64 = 300;

/// Hostbit command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostCmd {
    IsSet,
    IsNotSet,
    Set,
    Unset,
    Toggle,
}

/// One `hostbits` keyword (not `noalert`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostBit {
    pub cmd: HostCmd,
    pub id: u32,
    /// Track the destination address (`dst`) instead of the source.
    pub dst: bool,
}

/// Parse `hostbits:cmd[,name[,src|dst]]`: `Ok(None)` for `noalert`.
pub(crate) fn parse(v: &str) -> Result<Option<(HostCmd, String, bool)>, SkipReason> {
    let bad = || SkipReason::Invalid(format!("hostbits:{v}"));
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let cmd = match parts.first().copied() {
        Some("noalert") if parts.len() == 1 => return Ok(None),
        Some("isset") => HostCmd::IsSet,
        Some("isnotset") => HostCmd::IsNotSet,
        Some("set") => HostCmd::Set,
        Some("unset") => HostCmd::Unset,
        Some("toggle") => HostCmd::Toggle,
        _ => return Err(bad()),
    };
    let name = parts.get(1).filter(|n| !n.is_empty()).ok_or_else(bad)?;
    if name.contains(char::is_whitespace) || parts.len() > 3 {
        return Err(bad());
    }
    let dst = match parts.get(2).copied() {
        None | Some("src") => false,
        Some("dst") => true,
        Some("both") => return Err(SkipReason::Keyword("hostbits direction both".into())),
        Some(_) => return Err(bad()),
    };
    Ok(Some((cmd, (*name).to_string(), dst)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct HostKey {
    v6: bool,
    addr: u128,
}

/// Per-worker host bit table.
#[derive(Debug, Default)]
pub struct HostBits {
    hosts: HashMap<HostKey, Vec<(u32, u64)>>,
    next_gc: u64,
}

fn key(p: &PacketView<'_>, dst: bool) -> Option<HostKey> {
    match p.ip_version {
        4 => Some(HostKey {
            v6: false,
            addr: u128::from(if dst { p.dst_v4 } else { p.src_v4 }),
        }),
        6 => Some(HostKey {
            v6: true,
            addr: if dst { p.dst_v6 } else { p.src_v6 },
        }),
        _ => None,
    }
}

impl HostBits {
    /// Hosts with at least one bit.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// No host has bits.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    fn is_set(&self, k: HostKey, id: u32, now: u64) -> bool {
        self.hosts
            .get(&k)
            .is_some_and(|v| v.iter().any(|&(i, exp)| i == id && exp > now))
    }

    /// Evaluate an `isset`/`isnotset` check.
    pub(crate) fn check(&self, b: &HostBit, p: &PacketView<'_>) -> bool {
        let Some(k) = key(p, b.dst) else {
            return false;
        };
        let now = p.ts_ns / 1_000_000_000;
        match b.cmd {
            HostCmd::IsSet => self.is_set(k, b.id, now),
            HostCmd::IsNotSet => !self.is_set(k, b.id, now),
            _ => true,
        }
    }

    /// Run a `set`/`unset`/`toggle` after a match.
    pub(crate) fn apply(&mut self, b: &HostBit, p: &PacketView<'_>) {
        let Some(k) = key(p, b.dst) else {
            return;
        };
        let now = p.ts_ns / 1_000_000_000;
        self.gc(now);
        let exp = now + HOSTBIT_EXPIRE_SECS;
        match b.cmd {
            HostCmd::Set => {
                let v = self.hosts.entry(k).or_default();
                match v.iter_mut().find(|(i, _)| *i == b.id) {
                    Some(e) => e.1 = exp,
                    None => v.push((b.id, exp)),
                }
            }
            HostCmd::Unset => {
                if let Some(v) = self.hosts.get_mut(&k) {
                    v.retain(|(i, _)| *i != b.id);
                }
            }
            HostCmd::Toggle => {
                let set = self.is_set(k, b.id, now);
                let v = self.hosts.entry(k).or_default();
                v.retain(|(i, _)| *i != b.id);
                if !set {
                    v.push((b.id, exp));
                }
            }
            HostCmd::IsSet | HostCmd::IsNotSet => {}
        }
    }

    fn gc(&mut self, now: u64) {
        if now < self.next_gc {
            return;
        }
        self.next_gc = now + 60;
        self.hosts.retain(|_, v| {
            v.retain(|&(_, exp)| exp > now);
            !v.is_empty()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert_eq!(parse("noalert").unwrap(), None);
        assert_eq!(
            parse("isset, name , dst").unwrap(),
            Some((HostCmd::IsSet, "name".to_string(), true))
        );
        assert_eq!(
            parse("set,abc").unwrap(),
            Some((HostCmd::Set, "abc".to_string(), false))
        );
        assert!(parse("isset, name withspace").is_err());
        assert!(parse("!isset,abc,dst").is_err());
        assert!(parse("set,abc,both").is_err());
        assert!(parse("noalert,x").is_err());
    }
}
