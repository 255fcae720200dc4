//! `tag`: after a rule with `tag` alerts, later packets of the session (`tag:session`) or of
//! a host (`tag:host`) are marked "tagged" for a number of packets, bytes or seconds, and
//! the worker logs them as EVE `packet` records (Suricata's `tagged-packets`). Counting
//! follows Suricata 7's `detect-engine-tag.c`: the triggering packet counts but is not
//! tagged; a packet is tagged once however many tags cover it.
//!
//! Host tags are per worker (see [`super::hostbits`] for the same caveat).

use std::collections::HashMap;

use shrike_rules::parse::keywords::{Tag, TagKind, TagMetric};

use super::packet::PacketView;

/// Tags one flow or host may carry (Suricata's `DETECT_TAG_MAX_TAGS`).
const MAX_TAGS: usize = 50;
/// Re-triggers that still reset a tag (Suricata's `DETECT_TAG_MATCH_LIMIT`).
const MATCH_LIMIT: u32 = 10;

/// An active tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEntry {
    sid: u32,
    gid: u32,
    metric: TagMetric,
    count: u32,
    packets: u32,
    bytes: u64,
    first_secs: u64,
    last_secs: u64,
    skipped_first: bool,
    matches: u32,
}

impl TagEntry {
    fn new(t: &Tag, sid: u32, gid: u32, now: u64) -> TagEntry {
        TagEntry {
            sid,
            gid,
            metric: t.metric,
            count: t.count,
            packets: 0,
            bytes: 0,
            first_secs: now,
            last_secs: now,
            skipped_first: false,
            matches: 0,
        }
    }
}

/// Install a tag in a list (a repeated trigger of the same rule resets it).
pub(crate) fn add(list: &mut Vec<TagEntry>, t: &Tag, sid: u32, gid: u32, now: u64) {
    if let Some(e) = list.iter_mut().find(|e| e.sid == sid && e.gid == gid) {
        e.matches += 1;
        if e.matches < MATCH_LIMIT {
            e.first_secs = now;
            e.last_secs = now;
            e.packets = 0;
            e.bytes = 0;
        }
        return;
    }
    if list.len() < MAX_TAGS {
        list.push(TagEntry::new(t, sid, gid, now));
    }
}

/// Count a packet against a tag list; returns whether it is tagged. Expired tags are removed.
pub(crate) fn handle(list: &mut Vec<TagEntry>, len: u64, now: u64) -> bool {
    let mut tagged = false;
    list.retain_mut(|e| {
        e.last_secs = now;
        match e.metric {
            TagMetric::Packets => e.packets = e.packets.saturating_add(1),
            TagMetric::Bytes => e.bytes += len,
            TagMetric::Seconds => {}
        }
        if !e.skipped_first {
            e.skipped_first = true;
            return true;
        }
        let expired = match e.metric {
            TagMetric::Packets => e.packets > e.count,
            TagMetric::Bytes => e.bytes > u64::from(e.count),
            TagMetric::Seconds => e.last_secs.saturating_sub(e.first_secs) > u64::from(e.count),
        };
        if !expired {
            tagged = true;
        }
        !expired
    });
    tagged
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct HostKey {
    v6: bool,
    addr: u128,
}

fn host(p: &PacketView<'_>, dst: bool) -> Option<HostKey> {
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

/// Per-worker host tags.
#[derive(Debug, Default)]
pub struct HostTags {
    hosts: HashMap<HostKey, Vec<TagEntry>>,
}

impl HostTags {
    /// Hosts with active tags.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// No host is tagged.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Install a `tag:host` for the packet's source or destination.
    pub(crate) fn add(&mut self, t: &Tag, sid: u32, gid: u32, p: &PacketView<'_>) {
        debug_assert_eq!(t.kind, TagKind::Host);
        if let Some(k) = host(p, t.dst) {
            add(
                self.hosts.entry(k).or_default(),
                t,
                sid,
                gid,
                p.ts_ns / 1_000_000_000,
            );
        }
    }

    /// Count a packet against its source's and destination's tags.
    pub(crate) fn handle(&mut self, p: &PacketView<'_>) -> bool {
        if self.hosts.is_empty() {
            return false;
        }
        let now = p.ts_ns / 1_000_000_000;
        let len = p.data.len() as u64;
        let mut tagged = false;
        for dst in [false, true] {
            let Some(k) = host(p, dst) else { continue };
            if let Some(list) = self.hosts.get_mut(&k) {
                tagged |= handle(list, len, now);
                if list.is_empty() {
                    self.hosts.remove(&k);
                }
            }
        }
        tagged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(count: u32, metric: TagMetric) -> Tag {
        Tag {
            kind: TagKind::Session,
            count,
            metric,
            dst: false,
        }
    }

    #[test]
    fn packets_count_includes_the_trigger() {
        let mut l = Vec::new();
        add(&mut l, &tag(3, TagMetric::Packets), 1, 1, 0);
        // Trigger (skipped), then 2 tagged packets, then expired.
        let got: Vec<bool> = (0..5).map(|_| handle(&mut l, 60, 0)).collect();
        assert_eq!(got, vec![false, true, true, false, false]);
        assert!(l.is_empty());
    }

    #[test]
    fn seconds_and_bytes() {
        let mut l = Vec::new();
        add(&mut l, &tag(2, TagMetric::Seconds), 1, 1, 100);
        assert!(!handle(&mut l, 60, 100));
        assert!(handle(&mut l, 60, 102));
        assert!(!handle(&mut l, 60, 103));
        let mut l = Vec::new();
        add(&mut l, &tag(100, TagMetric::Bytes), 1, 1, 0);
        assert!(!handle(&mut l, 60, 0));
        assert!(!handle(&mut l, 60, 0));
    }
}
