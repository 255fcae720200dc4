//! Hostile fragments through `Defrag` with configured caps: floods of never-completing
//! datagrams, fragment-count and memory exhaustion, oversize reassembly, overlap storms.
//! The caps hold, refusals are counted, and timeouts free everything.

use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeEvent, DecodeStats, PacketMeta};
use shrike_packet::defrag::{Defrag, DefragConfig, DefragStatus};
use shrike_packet::policy::{HostOsPolicy, OsPolicy};

fn csum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in h.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// IPv4 fragment from 192.168.x.y, id `id`, offset in 8-byte units.
fn frag(src: u16, id: u16, off: u16, mf: bool, body: &[u8]) -> Vec<u8> {
    let total = 20 + body.len();
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&(off | if mf { 0x2000 } else { 0 }).to_be_bytes());
    p.extend_from_slice(&[
        64,
        17,
        0,
        0,
        192,
        168,
        (src >> 8) as u8,
        src as u8,
        10,
        0,
        0,
        9,
    ]);
    let c = csum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend_from_slice(body);
    p
}

fn meta(p: &[u8]) -> PacketMeta {
    decode(
        LinkType::Raw,
        p,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    )
}

fn defrag(cfg: DefragConfig) -> Defrag {
    Defrag::new(cfg, HostOsPolicy::new(OsPolicy::Linux))
}

#[test]
fn never_completing_flood_is_capped_by_trackers_and_freed_by_timeout() {
    let cfg = DefragConfig {
        trackers: 1_000,
        timeout: 30,
        ..DefragConfig::default()
    };
    let mut d = defrag(cfg);
    let body = [0u8; 64];
    let n = 50_000u32;
    let mut refused = 0;
    for i in 0..n {
        let p = frag((i >> 16) as u16, i as u16, 0, true, &body);
        let r = d.process(&meta(&p), &p, 100);
        if r.status == DefragStatus::Dropped {
            refused += 1;
            assert!(r.events.contains(DecodeEvent::Ipv4FragIgnored));
        }
        assert!(d.tracker_count() <= 1_000);
    }
    assert_eq!(d.stats.ipv4_fragments, u64::from(n));
    assert_eq!(d.stats.max_trackers_reached, refused);
    assert_eq!(refused, u64::from(n) - 1_000);
    assert!(d.stats.memuse > 0);
    // Past the timeout, one sweep frees everything.
    d.expire(100 + 31);
    assert_eq!(d.tracker_count(), 0);
    assert_eq!(d.fragment_count(), 0);
    assert_eq!(d.stats.memuse, 0);
    assert_eq!(d.stats.ipv4_timeouts, 1_000);
    // And new datagrams are accepted again.
    let p = frag(1, 1, 0, true, &body);
    assert_eq!(d.process(&meta(&p), &p, 132).status, DefragStatus::Held);
}

#[test]
fn fragment_count_and_memory_caps_hold() {
    let cfg = DefragConfig {
        max_frags: 500,
        memcap: 256 * 1024,
        ..DefragConfig::default()
    };
    let mut d = defrag(cfg);
    let body = vec![0x5a; 1400];
    let mut peak = 0;
    // One datagram per source, each getting many middle fragments (never complete).
    for i in 0..5_000u32 {
        let p = frag(
            (i % 50) as u16,
            7,
            8 + (i / 50 * 175) as u16 % 8000,
            true,
            &body,
        );
        d.process(&meta(&p), &p, 10);
        assert!(d.fragment_count() <= 500);
        peak = peak.max(d.stats.memuse);
    }
    assert!(d.stats.max_frags_reached > 0, "refusals counted");
    // The memcap is checked against each new fragment's cost; capacity growth of a
    // tracker's buffers may add at most one doubling on top.
    assert!(peak <= 2 * 256 * 1024, "defrag memuse peaked at {peak}");
    d.expire(10 + 61);
    assert_eq!(d.stats.memuse, 0);
}

#[test]
fn oversize_datagram_is_refused_with_an_event() {
    let mut d = defrag(DefragConfig::default());
    let body = vec![1u8; 1000];
    // Offset 8190 * 8 = 65520: with 1000 bytes it passes the 65535-byte limit.
    let p = frag(1, 9, 8190, false, &body);
    let r = d.process(&meta(&p), &p, 1);
    assert_eq!(r.status, DefragStatus::Dropped);
    assert!(r.events.contains(DecodeEvent::Ipv4FragPktTooLarge));
    assert_eq!(d.tracker_count(), 0);
    assert_eq!(d.stats.memuse, 0);
}

#[test]
fn overlap_storm_completes_once_and_frees_its_memory() {
    let mut d = defrag(DefragConfig::default());
    // 2,000 overlapping copies of the first 1024 bytes, then the last fragment.
    for i in 0..2_000u32 {
        let body = vec![(i % 251) as u8; 1024];
        let p = frag(3, 77, (i % 4) as u16 * 8, true, &body);
        let r = d.process(&meta(&p), &p, 5);
        assert_ne!(r.status, DefragStatus::Reassembled);
    }
    let held = d.stats.memuse;
    assert!(held > 0);
    let tail = frag(3, 77, 1024 / 8 + 24, false, &[9u8; 8]);
    let r = d.process(&meta(&tail), &tail, 5);
    assert_eq!(r.status, DefragStatus::Reassembled);
    assert_eq!(r.packet.len(), 20 + 1024 + 24 * 8 + 8);
    assert_eq!(d.tracker_count(), 0);
    assert_eq!(d.fragment_count(), 0);
    assert_eq!(d.stats.memuse, 0);
}
