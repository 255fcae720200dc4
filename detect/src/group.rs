//! Signature grouping (the idea of Suricata's `detect-engine-build.c`): per IP protocol and
//! flow direction, TCP and UDP rules are split into port groups (destination port to the
//! server, source port to the client); every group gets a multi-pattern prefilter over its
//! rules' fast patterns plus a list of rules without one. A packet looks up its groups and
//! only their candidates are verified.
//!
//! Unlike Suricata, rules that accept any port in a direction are not copied into every
//! port group: they form one base group per protocol and direction, and the port groups
//! hold only port-specific rules. A TCP/UDP packet scans two prefilters (base and port
//! group) instead of one, and each pattern is compiled into far fewer automatons, which
//! keeps start-up fast with large rule sets. The hot ports of Suricata's default port
//! whitelists (TCP 53, 80, 139, 443, 445, 1433, 3306, 3389, 6666, 6667, 8080; UDP 53, 135,
//! 5060) are the exception: their groups include the any-port rules, so their packets scan
//! one prefilter, and they are never merged.
//!
//! Groups with identical rule sets are shared. When a protocol and direction has more
//! distinct port groups than the configured maximum, the smallest are merged into one (a
//! superset: the header check still filters exactly).

use std::collections::HashMap;

use shrike_rules::parse::ranges::RangeSet;

use super::keywords::Check;
use super::packet::PacketView;
use super::prefilter::{self, Prefilter};
use super::sig::{Sig, SigKind};

/// Sigs sharing one fast pattern spelling.
#[derive(Debug)]
pub(crate) struct Variant {
    /// Global id (for per-packet de-duplication).
    pub id: u32,
    /// Case-sensitive patterns: the exact bytes to confirm.
    pub exact: Option<Box<[u8]>>,
    /// Signatures (sorted).
    pub sigs: Box<[u32]>,
}

/// A group's prefilter.
#[derive(Debug)]
pub(crate) struct Mpm {
    pub pf: Box<dyn Prefilter>,
    /// Per prefilter pattern: range in `variants`.
    pub ranges: Box<[(u32, u32)]>,
    pub variants: Box<[Variant]>,
}

/// One signature group.
#[derive(Debug)]
pub(crate) struct Group {
    /// Signatures without a payload fast pattern (sorted).
    pub nonmpm: Box<[u32]>,
    pub mpm: Option<Mpm>,
    /// Total signatures in the group.
    pub size: usize,
}

/// Port → group for one protocol and direction.
#[derive(Debug, Default)]
struct PortMap {
    starts: Box<[u16]>,
    gids: Box<[u32]>,
    /// The group already holds the any-port rules.
    combined: Box<[bool]>,
}

impl PortMap {
    fn get(&self, port: u16) -> Option<(u32, bool)> {
        let i = self.starts.partition_point(|&s| s <= port).checked_sub(1)?;
        Some((
            *self.gids.get(i)?,
            self.combined.get(i).copied().unwrap_or(false),
        ))
    }
}

const NONE: u32 = u32::MAX;

/// All groups of an engine.
#[derive(Debug)]
pub(crate) struct Groups {
    pub groups: Vec<Group>,
    /// `[tcp, udp][toclient, toserver]`: port-specific rules.
    ports: [[PortMap; 2]; 2],
    /// `[tcp, udp][toclient, toserver]`: rules accepting any port in that direction.
    base: [[u32; 2]; 2],
    /// Other IP protocols: `[proto][toclient, toserver]`.
    other: Box<[[u32; 2]]>,
    /// Decoder-event-only rules, for packets that did not decode to a transport.
    deonly: u32,
    /// Number of prefilter variants (size of the per-thread de-duplication table).
    pub variants: u32,
    /// Distinct port groups per `[tcp, udp][toclient, toserver]` before merging.
    pub distinct: [[usize; 2]; 2],
    /// Time spent building prefilters.
    pub prefilter_time: std::time::Duration,
    /// Patterns given to prefilter builds, summed over groups.
    pub prefilter_patterns: usize,
}

/// One spelling of a pattern (exact bytes, or `None` for nocase) and its signatures.
type Spelling = (Option<Vec<u8>>, Vec<u32>);

/// Fast pattern of a signature (payload buffer, not negated): lowercased bytes, and the
/// exact bytes when case matters.
pub(crate) type FastPat = Option<(Vec<u8>, Option<Vec<u8>>)>;

fn sig_dirs(s: &Sig) -> [bool; 2] {
    let (mut ts, mut tc) = (true, true);
    for c in s.checks.iter() {
        if let Check::Flow(f) = c {
            if f.to_server {
                tc = false;
            }
            if f.to_client {
                ts = false;
            }
        }
    }
    [tc, ts]
}

fn dir_ports(s: &Sig, toserver: bool) -> RangeSet<u16> {
    let h = &s.header;
    let (a, b) = if toserver {
        (&h.dp, &h.sp)
    } else {
        (&h.sp, &h.dp)
    };
    if h.bidir {
        a.set.union(&b.set)
    } else {
        a.set.clone()
    }
}

struct Builder<'a> {
    sigs: &'a [Sig],
    fps: &'a [FastPat],
    lists: HashMap<Vec<u32>, u32>,
    groups: Vec<Group>,
    variants: u32,
    pf_time: std::time::Duration,
    pf_patterns: usize,
}

impl<'a> Builder<'a> {
    fn intern(&mut self, list: Vec<u32>) -> u32 {
        if list.is_empty() {
            return NONE;
        }
        if let Some(&g) = self.lists.get(&list) {
            return g;
        }
        let g = self.build_group(&list);
        let id = self.groups.len() as u32;
        self.groups.push(g);
        self.lists.insert(list, id);
        id
    }

    fn build_group(&mut self, list: &[u32]) -> Group {
        let mut nonmpm = Vec::new();
        // lowercased pattern -> (exact spelling or None) -> sigs
        let mut pats: Vec<(Vec<u8>, Vec<Spelling>)> = Vec::new();
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        for &n in list {
            match self.fps.get(n as usize).and_then(|f| f.as_ref()) {
                None => nonmpm.push(n),
                Some((lower, exact)) => {
                    let pi = *index.entry(lower.clone()).or_insert_with(|| {
                        pats.push((lower.clone(), Vec::new()));
                        pats.len() - 1
                    });
                    let vars = &mut pats[pi].1;
                    match vars.iter_mut().find(|(e, _)| e == exact) {
                        Some((_, s)) => s.push(n),
                        None => vars.push((exact.clone(), vec![n])),
                    }
                }
            }
        }
        let mpm = if pats.is_empty() {
            None
        } else {
            let refs: Vec<&[u8]> = pats.iter().map(|(p, _)| p.as_slice()).collect();
            let t = std::time::Instant::now();
            let built = prefilter::build(&refs);
            self.pf_time += t.elapsed();
            self.pf_patterns += refs.len();
            match built {
                Some(pf) => {
                    let mut ranges = Vec::with_capacity(pats.len());
                    let mut variants = Vec::new();
                    for (_, vs) in pats {
                        let start = variants.len() as u32;
                        for (exact, sigs) in vs {
                            variants.push(Variant {
                                id: self.variants,
                                exact: exact.map(Vec::into_boxed_slice),
                                sigs: sigs.into_boxed_slice(),
                            });
                            self.variants += 1;
                        }
                        ranges.push((start, variants.len() as u32));
                    }
                    Some(Mpm {
                        pf,
                        ranges: ranges.into_boxed_slice(),
                        variants: variants.into_boxed_slice(),
                    })
                }
                None => {
                    // Unbuildable automaton: verify every rule instead.
                    nonmpm.extend(
                        pats.into_iter()
                            .flat_map(|(_, vs)| vs.into_iter().flat_map(|(_, s)| s.into_iter())),
                    );
                    nonmpm.sort_unstable();
                    None
                }
            }
        };
        Group {
            nonmpm: nonmpm.into_boxed_slice(),
            mpm,
            size: list.len(),
        }
    }

    /// The any-port group and the port segments of one protocol and direction, capped to
    /// `max` distinct port groups.
    fn port_map(&mut self, proto: u8, toserver: bool, max: usize) -> (u32, PortMap, usize) {
        let dir = usize::from(toserver);
        let mut base = Vec::new();
        let mut members: Vec<(u32, RangeSet<u16>)> = Vec::new();
        for (i, s) in self.sigs.iter().enumerate() {
            if matches!(s.kind, SigKind::IpOnly | SigKind::App | SigKind::Frame)
                || !s.header.proto.contains(proto)
                || !sig_dirs(s)[dir]
            {
                continue;
            }
            let ports = dir_ports(s, toserver);
            if ports.is_full() {
                base.push(i as u32);
            } else {
                members.push((i as u32, ports));
            }
        }
        let whitelist = if proto == 6 {
            TCP_WHITELIST
        } else {
            UDP_WHITELIST
        };
        let mut bounds: Vec<u32> = vec![0];
        for (_, set) in &members {
            for &(lo, hi) in set.ranges() {
                bounds.push(u32::from(lo));
                bounds.push(u32::from(hi) + 1);
            }
        }
        // Hot ports get segments of their own.
        for &p in whitelist {
            bounds.push(u32::from(p));
            bounds.push(u32::from(p) + 1);
        }
        bounds.retain(|&b| b <= 65535);
        bounds.sort_unstable();
        bounds.dedup();
        let mut segs: Vec<Vec<u32>> = vec![Vec::new(); bounds.len()];
        for (n, set) in &members {
            for &(lo, hi) in set.ranges() {
                let a = bounds.partition_point(|&b| b < u32::from(lo));
                let b = bounds.partition_point(|&b| b <= u32::from(hi));
                for seg in segs.iter_mut().take(b).skip(a) {
                    seg.push(*n);
                }
            }
        }
        let hot: Vec<bool> = bounds
            .iter()
            .map(|&b| whitelist.iter().any(|&p| u32::from(p) == b))
            .collect();
        // Distinct lists of the other segments, biggest first; merge the tail beyond `max`.
        let mut distinct: HashMap<&[u32], usize> = HashMap::new();
        for (s, &h) in segs.iter().zip(&hot) {
            if !s.is_empty() && !h {
                *distinct.entry(s.as_slice()).or_default() += 1;
            }
        }
        let n_distinct = distinct.len();
        let mut replace: HashMap<Vec<u32>, Vec<u32>> = HashMap::new();
        if n_distinct > max.max(1) {
            let mut by_size: Vec<&[u32]> = distinct.keys().copied().collect();
            by_size.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            let keep = max.max(1) - 1;
            let mut merged: Vec<u32> = by_size[keep..]
                .iter()
                .flat_map(|l| l.iter().copied())
                .collect();
            merged.sort_unstable();
            merged.dedup();
            for l in &by_size[keep..] {
                replace.insert(l.to_vec(), merged.clone());
            }
        }
        let mut starts = Vec::with_capacity(bounds.len());
        let mut gids = Vec::with_capacity(bounds.len());
        let mut combined = Vec::with_capacity(bounds.len());
        for ((b, list), h) in bounds.iter().zip(segs).zip(hot) {
            let (g, c) = if h {
                // A hot port: one group with the any-port rules too, so its packets scan a
                // single prefilter (Suricata's port whitelist idea).
                let mut all = base.clone();
                all.extend_from_slice(&list);
                all.sort_unstable();
                all.dedup();
                (self.intern(all), true)
            } else {
                let list = replace.get(&list).cloned().unwrap_or(list);
                (self.intern(list), false)
            };
            if gids.last() == Some(&g) && combined.last() == Some(&c) {
                continue;
            }
            starts.push(*b as u16);
            gids.push(g);
            combined.push(c);
        }
        let base = self.intern(base);
        (
            base,
            PortMap {
                starts: starts.into_boxed_slice(),
                gids: gids.into_boxed_slice(),
                combined: combined.into_boxed_slice(),
            },
            n_distinct,
        )
    }
}

/// TCP ports whose groups include the any-port rules (Suricata's default
/// `detect.grouping.tcp-whitelist`).
const TCP_WHITELIST: &[u16] = &[53, 80, 139, 443, 445, 1433, 3306, 3389, 6666, 6667, 8080];
/// UDP ports whose groups include the any-port rules (`detect.grouping.udp-whitelist`).
const UDP_WHITELIST: &[u16] = &[53, 135, 5060];

impl Groups {
    /// Build the groups for `sigs` (in engine order) with their fast patterns.
    pub(crate) fn build(sigs: &[Sig], fps: &[FastPat], max_port_groups: usize) -> Groups {
        let mut b = Builder {
            sigs,
            fps,
            lists: HashMap::new(),
            groups: Vec::new(),
            variants: 0,
            pf_time: std::time::Duration::ZERO,
            pf_patterns: 0,
        };
        let mut ports: [[PortMap; 2]; 2] = Default::default();
        let mut base = [[NONE; 2]; 2];
        let mut distinct = [[0usize; 2]; 2];
        for (pi, proto) in [6u8, 17].into_iter().enumerate() {
            for dir in 0..2 {
                let (bg, m, n) = b.port_map(proto, dir == 1, max_port_groups);
                base[pi][dir] = bg;
                ports[pi][dir] = m;
                distinct[pi][dir] = n;
            }
        }
        let mut other = vec![[NONE; 2]; 256];
        for (proto, slot) in other.iter_mut().enumerate() {
            let proto = proto as u8;
            if proto == 6 || proto == 17 {
                continue;
            }
            for (dir, g) in slot.iter_mut().enumerate() {
                let list: Vec<u32> = sigs
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| {
                        !matches!(s.kind, SigKind::IpOnly | SigKind::App | SigKind::Frame)
                            && s.header.proto.contains(proto)
                            && sig_dirs(s)[dir]
                            && (proto == 132 || (s.header.sp_any && s.header.dp_any))
                    })
                    .map(|(i, _)| i as u32)
                    .collect();
                *g = b.intern(list);
            }
        }
        let deonly: Vec<u32> = sigs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == SigKind::DecoderEvent)
            .map(|(i, _)| i as u32)
            .collect();
        let deonly = b.intern(deonly);
        Groups {
            variants: b.variants,
            groups: b.groups,
            ports,
            base,
            other: other.into_boxed_slice(),
            deonly,
            distinct,
            prefilter_time: b.pf_time,
            prefilter_patterns: b.pf_patterns,
        }
    }

    /// The groups a packet is inspected against (Suricata's `SigMatchSignaturesGetSgh`):
    /// for TCP and UDP the any-port group and the port group, else one group.
    #[inline]
    pub(crate) fn lookup(&self, p: &PacketView<'_>) -> [Option<&Group>; 2] {
        let (a, b) = if p.proto == 0 && !p.meta.events.is_empty() {
            (self.deonly, NONE)
        } else if p.ip_version == 0 {
            (NONE, NONE)
        } else {
            let dir = usize::from(!p.has_flow || p.to_server);
            let port = if dir == 1 { p.dport } else { p.sport };
            let pick = |i: usize| match self.ports[i][dir].get(port) {
                Some((g, true)) => (g, NONE),
                Some((g, false)) => (self.base[i][dir], g),
                None => (self.base[i][dir], NONE),
            };
            match p.ip_proto {
                6 => pick(0),
                17 => pick(1),
                n => (
                    self.other.get(usize::from(n)).map_or(NONE, |d| d[dir]),
                    NONE,
                ),
            }
        };
        [self.groups.get(a as usize), self.groups.get(b as usize)]
    }

    /// Candidate counts, for the start-up report: (groups, biggest group).
    pub(crate) fn stats(&self) -> (usize, usize) {
        (
            self.groups.len(),
            self.groups.iter().map(|g| g.size).max().unwrap_or(0),
        )
    }
}
