//! Target-based overlap policies and Suricata's `host-os-policy` table.
//!
//! Suricata picks the policy of the host that *receives* the data (the destination
//! address): the client's stream uses the server's policy and vice versa. Addresses not in
//! the table get the default, `bsd`. The same table drives IP defragmentation
//! (see [`crate::defrag::DefragPolicy::from_os`]).

use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// Suricata's OS policies (`host-os-policy` keys, plus the internal `first`/`last`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OsPolicy {
    /// Prefer the first data seen.
    First,
    /// Prefer the last data seen.
    Last,
    /// BSD (Suricata's default).
    #[default]
    Bsd,
    /// BSD-right (HP JetDirect).
    BsdRight,
    /// Linux before 2.4.
    OldLinux,
    /// Linux.
    Linux,
    /// Old Solaris.
    OldSolaris,
    /// Solaris.
    Solaris,
    /// HP-UX 10.
    Hpux10,
    /// HP-UX 11.
    Hpux11,
    /// IRIX.
    Irix,
    /// macOS.
    Macos,
    /// Windows Vista.
    Vista,
    /// Windows.
    Windows,
    /// Windows 2003.
    Windows2k3,
}

impl OsPolicy {
    /// Every policy.
    pub const ALL: [OsPolicy; 15] = [
        OsPolicy::First,
        OsPolicy::Last,
        OsPolicy::Bsd,
        OsPolicy::BsdRight,
        OsPolicy::OldLinux,
        OsPolicy::Linux,
        OsPolicy::OldSolaris,
        OsPolicy::Solaris,
        OsPolicy::Hpux10,
        OsPolicy::Hpux11,
        OsPolicy::Irix,
        OsPolicy::Macos,
        OsPolicy::Vista,
        OsPolicy::Windows,
        OsPolicy::Windows2k3,
    ];

    /// The YAML / Suricata name (`bsd-right`, `windows2k3` …).
    pub const fn name(self) -> &'static str {
        match self {
            OsPolicy::First => "first",
            OsPolicy::Last => "last",
            OsPolicy::Bsd => "bsd",
            OsPolicy::BsdRight => "bsd-right",
            OsPolicy::OldLinux => "old-linux",
            OsPolicy::Linux => "linux",
            OsPolicy::OldSolaris => "old-solaris",
            OsPolicy::Solaris => "solaris",
            OsPolicy::Hpux10 => "hpux10",
            OsPolicy::Hpux11 => "hpux11",
            OsPolicy::Irix => "irix",
            OsPolicy::Macos => "macos",
            OsPolicy::Vista => "vista",
            OsPolicy::Windows => "windows",
            OsPolicy::Windows2k3 => "windows2k3",
        }
    }

    /// Parses a policy name (case-insensitive, `_` accepted for `-`).
    pub fn from_name(s: &str) -> Option<OsPolicy> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        OsPolicy::ALL.iter().copied().find(|p| p.name() == s)
    }

    /// TCP overlap resolution (Suricata IDS mode): for the bytes where a new segment
    /// `[new_seq, new_end)` overlaps an already stored one `[old_seq, old_end)` (relative
    /// stream offsets), whether the new segment's bytes replace the stored ones.
    /// Suricata's stream engine takes `bsd-right` as `bsd` and `old-solaris` as `solaris`
    /// (`StreamTcpSetOSPolicy`).
    pub fn tcp_new_wins(self, new_seq: u64, new_end: u64, old_seq: u64, old_end: u64) -> bool {
        use OsPolicy as P;
        let p = match self {
            P::BsdRight => P::Bsd,
            P::OldSolaris => P::Solaris,
            p => p,
        };
        p.tcp_new_wins_as_is(new_seq, new_end, old_seq, old_end)
    }

    fn tcp_new_wins_as_is(self, new_seq: u64, new_end: u64, old_seq: u64, old_end: u64) -> bool {
        use OsPolicy as P;
        if self == P::Last {
            return true;
        }
        if new_seq == old_seq {
            if new_end < old_end {
                return false;
            }
            (new_end > old_end && self == P::Linux)
                || matches!(self, P::OldLinux | P::Solaris | P::Hpux11)
        } else if new_seq < old_seq {
            (new_end >= old_end && matches!(self, P::Solaris | P::Hpux11))
                || matches!(
                    self,
                    P::Bsd
                        | P::Hpux10
                        | P::Irix
                        | P::Windows
                        | P::Windows2k3
                        | P::OldLinux
                        | P::Linux
                        | P::Macos
                )
        } else {
            new_end > old_end && matches!(self, P::Solaris | P::Hpux11)
        }
    }
}

/// One network of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Net {
    addr: [u8; 16],
    v6: bool,
    prefix: u8,
    policy: OsPolicy,
}

/// Error parsing a `host-os-policy` entry.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PolicyError {
    /// Not an address or CIDR.
    #[error("host-os-policy: invalid address or network {0:?}")]
    BadNet(String),
    /// Unknown policy name.
    #[error("host-os-policy: unknown policy {0:?}")]
    BadPolicy(String),
}

/// Address → policy table (longest prefix wins), Suricata's `host-os-policy`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostOsPolicy {
    nets: Vec<Net>,
    default: OsPolicy,
}

fn mask_eq(a: &[u8; 16], b: &[u8; 16], prefix: u8) -> bool {
    let full = usize::from(prefix / 8);
    let rem = prefix % 8;
    if a.get(..full) != b.get(..full) {
        return false;
    }
    if rem == 0 {
        return true;
    }
    let m = 0xffu8 << (8 - rem);
    match (a.get(full), b.get(full)) {
        (Some(x), Some(y)) => x & m == y & m,
        _ => true,
    }
}

impl HostOsPolicy {
    /// An empty table whose lookups return `default`.
    pub fn new(default: OsPolicy) -> Self {
        HostOsPolicy {
            nets: Vec::new(),
            default,
        }
    }

    /// Builds the table from Suricata's YAML shape: policy name → list of addresses or
    /// CIDRs (`windows: [0.0.0.0/0]`, `bsd: ["10.0.0.0/8", "fe80::/10"]`).
    pub fn from_map<'a, I, L>(entries: I) -> Result<Self, PolicyError>
    where
        I: IntoIterator<Item = (&'a str, L)>,
        L: IntoIterator<Item = &'a str>,
    {
        let mut t = HostOsPolicy::default();
        for (name, nets) in entries {
            let policy =
                OsPolicy::from_name(name).ok_or_else(|| PolicyError::BadPolicy(name.into()))?;
            for n in nets {
                t.add(n, policy)?;
            }
        }
        Ok(t)
    }

    /// Adds one address or CIDR.
    pub fn add(&mut self, net: &str, policy: OsPolicy) -> Result<(), PolicyError> {
        let bad = || PolicyError::BadNet(net.to_string());
        let (a, p) = match net.trim().split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (net.trim(), None),
        };
        let ip: IpAddr = a.parse().map_err(|_| bad())?;
        let (addr, v6, max) = match ip {
            IpAddr::V4(v4) => {
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&v4.octets());
                (b, false, 32)
            }
            IpAddr::V6(v6) => (v6.octets(), true, 128),
        };
        let prefix = p.unwrap_or(max);
        if prefix > max {
            return Err(bad());
        }
        self.nets.push(Net {
            addr,
            v6,
            prefix,
            policy,
        });
        self.nets.sort_by_key(|n| std::cmp::Reverse(n.prefix));
        Ok(())
    }

    /// Policy for `addr` (IPv4 in bytes 0..4 when `!v6`), or the default.
    pub fn lookup(&self, addr: &[u8; 16], v6: bool) -> OsPolicy {
        self.nets
            .iter()
            .find(|n| n.v6 == v6 && mask_eq(&n.addr, addr, n.prefix))
            .map_or(self.default, |n| n.policy)
    }

    /// Whether the table has no networks.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in OsPolicy::ALL {
            assert_eq!(OsPolicy::from_name(p.name()), Some(p));
        }
        assert_eq!(OsPolicy::from_name("Old_Linux"), Some(OsPolicy::OldLinux));
        assert_eq!(OsPolicy::from_name("beos"), None);
    }

    #[test]
    fn longest_prefix_wins() {
        let t = HostOsPolicy::from_map([
            ("windows", vec!["0.0.0.0/0"]),
            ("linux", vec!["10.0.0.0/8", "fe80::/10"]),
            ("solaris", vec!["10.1.2.3"]),
        ])
        .unwrap();
        let v4 = |a: [u8; 4]| {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&a);
            b
        };
        assert_eq!(t.lookup(&v4([10, 1, 2, 3]), false), OsPolicy::Solaris);
        assert_eq!(t.lookup(&v4([10, 9, 9, 9]), false), OsPolicy::Linux);
        assert_eq!(t.lookup(&v4([192, 0, 2, 1]), false), OsPolicy::Windows);
        let ll: std::net::Ipv6Addr = "fe80::1".parse().unwrap();
        assert_eq!(t.lookup(&ll.octets(), true), OsPolicy::Linux);
        let g: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
        assert_eq!(t.lookup(&g.octets(), true), OsPolicy::Bsd);
        assert!(HostOsPolicy::from_map([("bogus", vec!["1.2.3.4"])]).is_err());
        assert!(HostOsPolicy::from_map([("bsd", vec!["1.2.3.4/33"])]).is_err());
    }
}
