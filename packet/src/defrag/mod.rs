//! IPv4 and IPv6 defragmentation (Suricata semantics), run on the decoding thread before
//! flow hashing.
//!
//! ```ignore
//! let meta = decode(link, frame, &dcfg, &mut dstats);
//! if meta.has(flags::FRAGMENT) {
//!     let r = defrag.process(&meta, frame, ts_secs);
//!     meta.events.union(&r.events);           // frag_overlap, frag_pkt_too_large …
//!     if let DefragStatus::Reassembled = r.status {
//!         // r.packet: a whole IPv4/IPv6 packet without L2; decode with LinkType::Raw and
//!         // keep the fragment's VLAN ids / tunnel depth, then dispatch it as a packet.
//!     }
//! }
//! ```
//! Trackers are keyed by addresses, IP id, protocol (IPv4), VLAN ids and tunnel depth.
//! Memory is bounded by `memcap`, `trackers` and `max-frags`; every refusal is counted.

pub mod config;
pub mod policy;
mod tracker;

pub use config::DefragConfig;
pub use policy::DefragPolicy;

use std::collections::HashMap;

use crate::decode::{flags, DecodeEvent, EventSet, PacketMeta};
use crate::policy::HostOsPolicy;
use tracker::{FragInfo, Tracker};

/// Defrag counters with the EVE schema's `stats.defrag.*` names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefragStats {
    /// `defrag.ipv4.fragments`.
    pub ipv4_fragments: u64,
    /// `defrag.ipv4.reassembled`.
    pub ipv4_reassembled: u64,
    /// `defrag.ipv4.timeouts`.
    pub ipv4_timeouts: u64,
    /// `defrag.ipv6.fragments`.
    pub ipv6_fragments: u64,
    /// `defrag.ipv6.reassembled`.
    pub ipv6_reassembled: u64,
    /// `defrag.ipv6.timeouts`.
    pub ipv6_timeouts: u64,
    /// `defrag.max_frags_reached`: fragments refused by `max-frags` or the memcap.
    pub max_frags_reached: u64,
    /// `defrag.max_trackers_reached`: datagrams refused by `trackers`.
    pub max_trackers_reached: u64,
    /// `defrag.memuse` (gauge, bytes).
    pub memuse: u64,
    /// `defrag.wrk.tracker_timeout`: trackers expired by this defragmenter.
    pub wrk_tracker_timeout: u64,
    /// Fragments refused by the memcap (also counted in `max_frags_reached`; not an EVE
    /// counter of its own).
    pub memcap_drop: u64,
}

impl DefragStats {
    /// Calls `f` with each counter's EVE name and value.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("defrag.ipv4.fragments", self.ipv4_fragments);
        f("defrag.ipv4.reassembled", self.ipv4_reassembled);
        f("defrag.ipv4.timeouts", self.ipv4_timeouts);
        f("defrag.ipv6.fragments", self.ipv6_fragments);
        f("defrag.ipv6.reassembled", self.ipv6_reassembled);
        f("defrag.ipv6.timeouts", self.ipv6_timeouts);
        f("defrag.max_frags_reached", self.max_frags_reached);
        f("defrag.max_trackers_reached", self.max_trackers_reached);
        f("defrag.memuse", self.memuse);
        f("defrag.wrk.tracker_timeout", self.wrk_tracker_timeout);
    }

    /// Adds another snapshot.
    pub fn merge(&mut self, o: &Self) {
        self.ipv4_fragments += o.ipv4_fragments;
        self.ipv4_reassembled += o.ipv4_reassembled;
        self.ipv4_timeouts += o.ipv4_timeouts;
        self.ipv6_fragments += o.ipv6_fragments;
        self.ipv6_reassembled += o.ipv6_reassembled;
        self.ipv6_timeouts += o.ipv6_timeouts;
        self.max_frags_reached += o.max_frags_reached;
        self.max_trackers_reached += o.max_trackers_reached;
        self.memuse += o.memuse;
        self.wrk_tracker_timeout += o.wrk_tracker_timeout;
        self.memcap_drop += o.memcap_drop;
    }
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefragStatus {
    /// Not a fragment: process the packet normally.
    NotFragment,
    /// Fragment stored; the datagram is not complete yet.
    Held,
    /// This fragment completed the datagram: [`DefragResult::packet`] holds it.
    Reassembled,
    /// Fragment refused (too large, limits, or fully discarded by the policy).
    Dropped,
}

/// Result of [`Defrag::process`].
#[derive(Clone, Copy, Debug)]
pub struct DefragResult<'a> {
    /// Outcome.
    pub status: DefragStatus,
    /// Decoder events to add to the fragment's meta (`ipv4.frag_overlap` …).
    pub events: EventSet,
    /// With [`DefragStatus::Reassembled`]: the whole IP packet (no L2), valid until the
    /// next call.
    pub packet: &'a [u8],
}

/// Tracker key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    src: [u8; 16],
    dst: [u8; 16],
    id: u32,
    proto: u8,
    v6: bool,
    vlan: [u16; 3],
    tunnel: u8,
}

/// A per-thread defragmenter.
#[derive(Debug)]
pub struct Defrag {
    cfg: DefragConfig,
    hosts: HostOsPolicy,
    trackers: HashMap<Key, Tracker>,
    frags: u64,
    next_sweep: u32,
    out: Vec<u8>,
    /// Counters.
    pub stats: DefragStats,
}

impl Defrag {
    /// A defragmenter with `cfg`; `hosts` picks the policy by destination address.
    pub fn new(cfg: DefragConfig, hosts: HostOsPolicy) -> Self {
        Defrag {
            cfg,
            hosts,
            trackers: HashMap::new(),
            frags: 0,
            next_sweep: 0,
            out: Vec::with_capacity(65_536),
            stats: DefragStats::default(),
        }
    }

    /// Datagrams currently in reassembly.
    pub fn tracker_count(&self) -> usize {
        self.trackers.len()
    }

    /// Fragments currently held.
    pub fn fragment_count(&self) -> u64 {
        self.frags
    }

    /// Handles one decoded packet at time `now` (seconds).
    pub fn process<'s>(&'s mut self, meta: &PacketMeta, pkt: &[u8], now: u32) -> DefragResult<'s> {
        let mut res = DefragResult {
            status: DefragStatus::NotFragment,
            events: EventSet::EMPTY,
            packet: &[],
        };
        if !meta.is_ip() || !meta.has(flags::FRAGMENT) {
            return res;
        }
        self.expire(now);
        let v6 = meta.has(flags::IPV6);
        let (ev_large, ev_overlap, ev_ignored) = if v6 {
            (
                DecodeEvent::Ipv6FragPktTooLarge,
                DecodeEvent::Ipv6FragOverlap,
                DecodeEvent::Ipv6FragIgnored,
            )
        } else {
            (
                DecodeEvent::Ipv4FragPktTooLarge,
                DecodeEvent::Ipv4FragOverlap,
                DecodeEvent::Ipv4FragIgnored,
            )
        };
        let Some(fi) = FragInfo::parse(meta, pkt) else {
            res.status = DefragStatus::Dropped;
            return res;
        };
        if v6 {
            self.stats.ipv6_fragments += 1;
        } else {
            self.stats.ipv4_fragments += 1;
        }
        let limit = if v6 { 65_535 } else { 65_535 - 20 };
        if fi.offset as usize + fi.data.len() > limit {
            res.events.insert(ev_large);
            res.status = DefragStatus::Dropped;
            return res;
        }
        if fi.data.is_empty() {
            res.status = DefragStatus::Dropped;
            return res;
        }
        let key = Key {
            src: meta.src,
            dst: meta.dst,
            id: meta.ip_id,
            proto: if v6 { 0 } else { meta.proto },
            v6,
            vlan: if meta.has(flags::VLAN_NO_TRACK) {
                [0; 3]
            } else {
                meta.vlan
            },
            tunnel: meta.tunnel_depth,
        };
        if self.frags >= u64::from(self.cfg.max_frags) {
            self.stats.max_frags_reached += 1;
            res.events.insert(ev_ignored);
            res.status = DefragStatus::Dropped;
            return res;
        }
        // A new tracker's own cost counts against the memcap too.
        let new_tracker = !self.trackers.contains_key(&key);
        let cost = tracker::frag_cost(&fi)
            + if new_tracker {
                tracker::TRACKER_COST
            } else {
                0
            };
        if self.stats.memuse + cost > self.cfg.memcap {
            self.stats.max_frags_reached += 1;
            self.stats.memcap_drop += 1;
            res.events.insert(ev_ignored);
            res.status = DefragStatus::Dropped;
            return res;
        }
        if !self.trackers.contains_key(&key) {
            if self.trackers.len() >= self.cfg.trackers as usize {
                self.stats.max_trackers_reached += 1;
                res.events.insert(ev_ignored);
                res.status = DefragStatus::Dropped;
                return res;
            }
            let policy = DefragPolicy::from_os(self.hosts.lookup(&meta.dst, v6));
            self.trackers.insert(key, Tracker::new(policy, v6));
            self.stats.memuse += tracker::TRACKER_COST;
        }
        let Some(t) = self.trackers.get_mut(&key) else {
            res.status = DefragStatus::Dropped;
            return res;
        };
        t.timeout_at = now.saturating_add(self.cfg.timeout);
        let before = t.mem();
        let n_before = t.frag_count() as u64;
        let added = t.add(&fi);
        if added.overlap {
            res.events.insert(ev_overlap);
        }
        self.frags = (self.frags + t.frag_count() as u64).saturating_sub(n_before);
        let after = t.mem();
        self.stats.memuse = (self.stats.memuse + after).saturating_sub(before);
        res.status = DefragStatus::Held;
        if !added.stored {
            // All of it discarded by the policy: nothing changed.
            return res;
        }
        if !t.complete() {
            return res;
        }
        let Some(t) = self.trackers.remove(&key) else {
            return res;
        };
        self.frags = self.frags.saturating_sub(t.frag_count() as u64);
        self.stats.memuse = self
            .stats
            .memuse
            .saturating_sub(t.mem() + tracker::TRACKER_COST);
        if t.build(&mut self.out) {
            if v6 {
                self.stats.ipv6_reassembled += 1;
            } else {
                self.stats.ipv4_reassembled += 1;
            }
            res.status = DefragStatus::Reassembled;
            res.packet = &self.out;
        } else {
            res.events.insert(ev_large);
            res.status = DefragStatus::Dropped;
        }
        res
    }

    /// Drops trackers idle past the timeout (runs at most once per second of packet time;
    /// `process` calls it, callers may call it on idle ticks).
    pub fn expire(&mut self, now: u32) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add(1);
        let mut freed_mem = 0u64;
        let mut freed_frags = 0u64;
        let (mut t4, mut t6) = (0u64, 0u64);
        self.trackers.retain(|_, t| {
            if t.timeout_at >= now {
                return true;
            }
            freed_mem += t.mem() + tracker::TRACKER_COST;
            freed_frags += t.frag_count() as u64;
            if t.v6 {
                t6 += 1;
            } else {
                t4 += 1;
            }
            false
        });
        self.stats.ipv4_timeouts += t4;
        self.stats.ipv6_timeouts += t6;
        self.stats.wrk_tracker_timeout += t4 + t6;
        self.stats.memuse = self.stats.memuse.saturating_sub(freed_mem);
        self.frags = self.frags.saturating_sub(freed_frags);
    }
}
