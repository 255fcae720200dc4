//! Thresholds (`threshold`, `detection_filter`, `threshold.config` entries) and suppressions,
//! with the counting rules of Suricata 7's `detect-engine-threshold.c`.
//!
//! State lives per worker ([`ThresholdState`] inside the worker's detect thread). With several
//! workers a `by_src`/`by_dst`/`by_both`/`by_rule` count is per worker, because flows of one
//! host may land on different workers; with `--workers 1` counts are exact.

use std::collections::HashMap;

use shrike_rules::config_files::SuppressTrack;
use shrike_rules::parse::keywords::{Threshold, ThresholdType, Track};
use shrike_rules::parse::IpSet;

use super::packet::PacketView;

/// Counting type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Limit,
    Threshold,
    Both,
    Detection,
}

/// One compiled threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThresholdSpec {
    pub kind: Kind,
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
}

impl ThresholdSpec {
    pub(crate) fn from_keyword(t: &Threshold) -> ThresholdSpec {
        ThresholdSpec {
            kind: match t.kind {
                ThresholdType::Limit => Kind::Limit,
                ThresholdType::Threshold | ThresholdType::Backoff => Kind::Threshold,
                ThresholdType::Both => Kind::Both,
                ThresholdType::DetectionFilter => Kind::Detection,
            },
            track: t.track,
            count: t.count,
            seconds: t.seconds,
        }
    }
}

/// A `suppress` entry with an address list.
#[derive(Debug, Clone)]
pub(crate) struct SuppressSpec {
    pub track: SuppressTrack,
    pub ips: IpSet,
}

impl SuppressSpec {
    /// Does the suppression hit this packet?
    pub(crate) fn hits(&self, p: &PacketView<'_>) -> bool {
        let has = |src: bool| match p.ip_version {
            4 => self.ips.contains_v4(if src { p.src_v4 } else { p.dst_v4 }),
            6 => self.ips.contains_v6(if src { p.src_v6 } else { p.dst_v6 }),
            _ => false,
        };
        match self.track {
            SuppressTrack::BySrc => has(true),
            SuppressTrack::ByDst => has(false),
            SuppressTrack::ByEither => has(true) || has(false),
        }
    }
}

/// Result of threshold handling (Suricata's return codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not reached: no alert, no action.
    Drop,
    /// Alert.
    Alert,
    /// No alert logged, but the rule's action applies.
    Silent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    spec: u32,
    a: u128,
    b: u128,
    v6: bool,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Start of the current window (ns).
    tv1: u64,
    count: u32,
    seconds: u32,
}

/// Per-worker threshold counters.
#[derive(Debug, Default)]
pub struct ThresholdState {
    map: HashMap<Key, Entry>,
    next_gc_ns: u64,
}

const GC_EVERY_NS: u64 = 30_000_000_000;

impl ThresholdState {
    /// Entries currently tracked.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// No entries tracked.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn gc(&mut self, now: u64) {
        if now < self.next_gc_ns {
            return;
        }
        self.next_gc_ns = now.saturating_add(GC_EVERY_NS);
        // An entry whose window has passed behaves exactly like a missing one.
        self.map
            .retain(|_, e| now.saturating_sub(e.tv1) / 1_000_000_000 < u64::from(e.seconds));
    }

    /// Suricata's `ThresholdHandlePacket` for spec number `spec_id`.
    pub(crate) fn handle(
        &mut self,
        spec_id: u32,
        t: &ThresholdSpec,
        p: &PacketView<'_>,
    ) -> Verdict {
        if p.ip_version == 0 {
            return Verdict::Alert;
        }
        self.gc(p.ts_ns);
        let v6 = p.ip_version == 6;
        let (s, d) = if v6 {
            (p.src_v6, p.dst_v6)
        } else {
            (u128::from(p.src_v4), u128::from(p.dst_v4))
        };
        let (a, b) = match t.track {
            Track::BySrc => (s, 0),
            Track::ByDst => (d, 0),
            Track::ByBoth => (s.min(d), s.max(d)),
            Track::ByRule | Track::ByFlow => (0, 0),
        };
        let key = Key {
            spec: spec_id,
            a,
            b,
            v6,
        };
        let now = p.ts_ns;
        // Inside the window while `now <= start + seconds` (checked against 7.0.10).
        let within = |e: &Entry| now <= e.tv1.saturating_add(u64::from(t.seconds) * 1_000_000_000);
        let fresh = Entry {
            tv1: now,
            count: 1,
            seconds: t.seconds,
        };
        match t.kind {
            Kind::Limit => match self.map.get_mut(&key) {
                Some(e) if within(e) => {
                    e.count = e.count.saturating_add(1);
                    if e.count <= t.count {
                        Verdict::Alert
                    } else {
                        Verdict::Silent
                    }
                }
                Some(e) => {
                    *e = fresh;
                    Verdict::Alert
                }
                None => {
                    self.map.insert(key, fresh);
                    Verdict::Alert
                }
            },
            Kind::Threshold => match self.map.get_mut(&key) {
                Some(e) if within(e) => {
                    e.count = e.count.saturating_add(1);
                    if e.count >= t.count {
                        e.count = 0;
                        Verdict::Alert
                    } else {
                        Verdict::Drop
                    }
                }
                Some(e) => {
                    *e = fresh;
                    Verdict::Drop
                }
                None => {
                    if t.count == 1 {
                        Verdict::Alert
                    } else {
                        self.map.insert(key, fresh);
                        Verdict::Drop
                    }
                }
            },
            Kind::Both => match self.map.get_mut(&key) {
                Some(e) if within(e) => {
                    e.count = e.count.saturating_add(1);
                    if e.count == t.count {
                        Verdict::Alert
                    } else if e.count > t.count {
                        Verdict::Silent
                    } else {
                        Verdict::Drop
                    }
                }
                Some(e) => {
                    *e = fresh;
                    if t.count == 1 {
                        Verdict::Alert
                    } else {
                        Verdict::Drop
                    }
                }
                None => {
                    self.map.insert(key, fresh);
                    if t.count == 1 {
                        Verdict::Alert
                    } else {
                        Verdict::Drop
                    }
                }
            },
            Kind::Detection => match self.map.get_mut(&key) {
                Some(e) if within(e) => {
                    e.count = e.count.saturating_add(1);
                    if e.count > t.count {
                        Verdict::Alert
                    } else {
                        Verdict::Drop
                    }
                }
                Some(e) => {
                    *e = fresh;
                    Verdict::Drop
                }
                None => {
                    self.map.insert(key, fresh);
                    Verdict::Drop
                }
            },
        }
    }
}
