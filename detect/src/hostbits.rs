//! `hostbits` and `xbits`: named bits stored per host (source or destination address of the
//! packet) or per IP pair (`xbits ... track ip_pair`), with an expiry time (Suricata 7's
//! `detect-hostbits.c`, `detect-xbits.c`, `host-bit.c`, `ippair-bit.c`).
//!
//! Semantics follow Suricata: `set` on a bit that is already present keeps its old expiry;
//! `isset`/`isnotset` drop a bit whose expiry is before the packet's second; `toggle` removes
//! a present bit (expired or not). An IP pair is unordered: `a -> b` and `b -> a` share bits.
//! Host and pair bit names share one id space but never one key.
//!
//! The table is shared by all workers (`host_state::HostShared`); in file mode the
//! `HostGate` orders the updates by packet, so the result does not depend on the worker count.

use std::collections::HashMap;

use super::compile::SkipReason;
use super::packet::PacketView;

/// Seconds a set hostbit lives (Suricata's fixed `expire` for hostbits).
pub const HOSTBIT_EXPIRE_SECS: u32 = 300;

/// Default `expire` of `xbits` (Suricata's `DETECT_XBITS_EXPIRE_DEFAULT`).
pub const XBITS_EXPIRE_DEFAULT: u32 = 30;

/// Most hosts plus IP pairs holding bits; a `set`/`toggle` that would add one
/// more is dropped (Suricata's `HostGetHostFromHash` failing at `host.memcap`).
pub const MAX_KEYS: usize = 262_144;

/// What a bit is stored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Track {
    /// The packet's source address (`hostbits ...,src`, `xbits ... track ip_src`).
    Src,
    /// The packet's destination address.
    Dst,
    /// The (unordered) address pair (`xbits ... track ip_pair`).
    Pair,
}

/// Hostbit command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostCmd {
    IsSet,
    IsNotSet,
    Set,
    Unset,
    Toggle,
}

/// One `hostbits` or `xbits` keyword (not `noalert`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostBit {
    pub cmd: HostCmd,
    pub id: u32,
    pub track: Track,
    /// Seconds from the setting packet's time to the bit's expiry.
    pub expire: u32,
}

impl HostCmd {
    /// `isset`/`isnotset` (a check, not a post-match operation).
    pub(crate) fn is_check(self) -> bool {
        matches!(self, HostCmd::IsSet | HostCmd::IsNotSet)
    }
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
enum HostKey {
    Host {
        v6: bool,
        addr: u128,
    },
    /// `lo <= hi`: the pair is unordered.
    Pair {
        v6: bool,
        lo: u128,
        hi: u128,
    },
}

/// Host and IP-pair bit table: bit id and expiry second.
#[derive(Debug, Default)]
pub struct HostBits {
    hosts: HashMap<HostKey, Vec<(u32, u64)>>,
    next_gc: u64,
}

/// The packet's address family and addresses (IPv4 in the low 32 bits).
fn addrs(p: &PacketView<'_>) -> Option<(bool, u128, u128)> {
    match p.ip_version {
        4 => Some((false, u128::from(p.src_v4), u128::from(p.dst_v4))),
        6 => Some((true, p.src_v6, p.dst_v6)),
        _ => None,
    }
}

fn key((v6, src, dst): (bool, u128, u128), track: Track) -> HostKey {
    match track {
        Track::Src => HostKey::Host { v6, addr: src },
        Track::Dst => HostKey::Host { v6, addr: dst },
        Track::Pair => HostKey::Pair {
            v6,
            lo: src.min(dst),
            hi: src.max(dst),
        },
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

    /// Present and not expired (Suricata: expired when `expire < now`); an expired bit is
    /// dropped.
    fn is_set(&mut self, k: HostKey, id: u32, now: u64) -> bool {
        let Some(v) = self.hosts.get_mut(&k) else {
            return false;
        };
        let Some(pos) = v.iter().position(|&(i, _)| i == id) else {
            return false;
        };
        if v[pos].1 < now {
            v.swap_remove(pos);
            if v.is_empty() {
                self.hosts.remove(&k);
            }
            return false;
        }
        true
    }

    /// Evaluate an `isset`/`isnotset` check.
    pub(crate) fn check(&mut self, b: &HostBit, p: &PacketView<'_>) -> bool {
        let Some(a) = addrs(p) else {
            return false;
        };
        self.check_at(b, a, p.ts_ns / 1_000_000_000)
    }

    fn check_at(&mut self, b: &HostBit, a: (bool, u128, u128), now: u64) -> bool {
        let k = key(a, b.track);
        match b.cmd {
            HostCmd::IsSet => self.is_set(k, b.id, now),
            HostCmd::IsNotSet => !self.is_set(k, b.id, now),
            _ => true,
        }
    }

    /// The bit list of `k`, created if there is room.
    fn entry(&mut self, k: HostKey, now: u64) -> Option<&mut Vec<(u32, u64)>> {
        if !self.hosts.contains_key(&k) && self.hosts.len() >= MAX_KEYS {
            self.next_gc = 0;
            self.gc(now);
            if self.hosts.len() >= MAX_KEYS {
                return None;
            }
        }
        Some(self.hosts.entry(k).or_default())
    }

    /// Run a `set`/`unset`/`toggle` after a match.
    pub(crate) fn apply(&mut self, b: &HostBit, p: &PacketView<'_>) {
        if let Some(a) = addrs(p) {
            self.apply_at(b, a, p.ts_ns / 1_000_000_000);
        }
    }

    fn apply_at(&mut self, b: &HostBit, a: (bool, u128, u128), now: u64) {
        let k = key(a, b.track);
        self.gc(now);
        let exp = now + u64::from(b.expire);
        match b.cmd {
            HostCmd::Set => {
                if let Some(v) = self.entry(k, now) {
                    if !v.iter().any(|(i, _)| *i == b.id) {
                        v.push((b.id, exp));
                    }
                }
            }
            HostCmd::Unset => {
                if let Some(v) = self.hosts.get_mut(&k) {
                    v.retain(|(i, _)| *i != b.id);
                    if v.is_empty() {
                        self.hosts.remove(&k);
                    }
                }
            }
            HostCmd::Toggle => {
                if let Some(v) = self.entry(k, now) {
                    let before = v.len();
                    v.retain(|(i, _)| *i != b.id);
                    if v.len() == before {
                        v.push((b.id, exp));
                    } else if v.is_empty() {
                        self.hosts.remove(&k);
                    }
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
            v.retain(|&(_, exp)| exp >= now);
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

    fn bit(cmd: HostCmd, track: Track, expire: u32) -> HostBit {
        HostBit {
            cmd,
            id: 1,
            track,
            expire,
        }
    }

    const A: (bool, u128, u128) = (false, 0x0a00_0001, 0x0a00_0002);
    const B: (bool, u128, u128) = (false, 0x0a00_0002, 0x0a00_0001);

    #[test]
    fn pair_is_unordered_and_hosts_are_not() {
        let mut t = HostBits::default();
        let isset = |tr| bit(HostCmd::IsSet, tr, 0);
        t.apply_at(&bit(HostCmd::Set, Track::Pair, 30), A, 100);
        assert!(t.check_at(&isset(Track::Pair), B, 101));
        // A pair bit is not a host bit of either address.
        assert!(!t.check_at(&isset(Track::Src), A, 101));
        t.apply_at(&bit(HostCmd::Set, Track::Src, 30), A, 100);
        assert!(t.check_at(&isset(Track::Src), A, 101));
        assert!(t.check_at(&isset(Track::Dst), B, 101));
        assert!(!t.check_at(&isset(Track::Src), B, 101));
        // Same addresses in the other family: another key.
        assert!(!t.check_at(&isset(Track::Pair), (true, A.1, A.2), 101));
    }

    #[test]
    fn expiry_like_suricata() {
        let mut t = HostBits::default();
        let isset = bit(HostCmd::IsSet, Track::Pair, 0);
        let isnotset = bit(HostCmd::IsNotSet, Track::Pair, 0);
        t.apply_at(&bit(HostCmd::Set, Track::Pair, 10), A, 100);
        // Still set at the expiry second (Suricata expires when `expire < now`).
        assert!(t.check_at(&isset, A, 110));
        // A second set keeps the first expiry.
        t.apply_at(&bit(HostCmd::Set, Track::Pair, 10), A, 105);
        assert!(t.check_at(&isnotset, A, 111));
        assert!(t.is_empty());
        // Set again after it expired: a fresh bit.
        t.apply_at(&bit(HostCmd::Set, Track::Pair, 10), A, 112);
        assert!(t.check_at(&isset, A, 122));
        // Toggle removes, toggles back with the new expiry; unset removes.
        t.apply_at(&bit(HostCmd::Toggle, Track::Pair, 10), A, 113);
        assert!(t.check_at(&isnotset, A, 113));
        t.apply_at(&bit(HostCmd::Toggle, Track::Pair, 5), A, 113);
        assert!(t.check_at(&isset, A, 118) && !t.check_at(&isset, A, 119));
        t.apply_at(&bit(HostCmd::Set, Track::Pair, 5), A, 120);
        t.apply_at(&bit(HostCmd::Unset, Track::Pair, 5), B, 120);
        assert!(t.is_empty());
    }

    #[test]
    fn table_is_bounded() {
        let mut t = HostBits::default();
        let set = bit(HostCmd::Set, Track::Src, 1000);
        for i in 0..(MAX_KEYS as u128 + 10) {
            t.apply_at(&set, (false, i, 0), 1);
        }
        assert_eq!(t.len(), MAX_KEYS);
        // Once the old bits expired, new hosts find room again.
        t.apply_at(&set, (false, u128::MAX, 0), 5000);
        assert_eq!(t.len(), 1);
    }
}
