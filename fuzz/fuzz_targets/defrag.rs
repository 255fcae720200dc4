//! Defragmentation: IPv4 and IPv6 fragments built from the fuzz bytes (few sources and ids
//! so fragments collide, any offset, length, MF flag and time step), with small caps from
//! the input. Reassembled datagrams are decoded again (as the worker does). Caps are never
//! exceeded and, once every tracker has timed out, nothing is held and memuse is zero.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};
use shrike_packet::defrag::{Defrag, DefragConfig, DefragStatus};
use shrike_stream::{HostOsPolicy, OsPolicy};
use shrike_fuzz::{ipv4, ipv6_frag, Bytes};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let c = b.u8();
    let mut cfg = DefragConfig::default();
    if c & 1 != 0 {
        cfg.trackers = u32::from(b.u8() % 16) + 1;
        cfg.max_frags = u32::from(b.u8()) + 1;
        cfg.memcap = u64::from(b.u16()) * 8;
    }
    cfg.timeout = u32::from(b.u8() % 70) + 1;
    let policy = OsPolicy::ALL[usize::from(b.u8()) % OsPolicy::ALL.len()];
    let mut df = Defrag::new(cfg.clone(), HostOsPolicy::new(policy));
    let dcfg = DecodeConfig::default();
    let mut dstats = DecodeStats::default();
    let mut now = 100u32;
    let mut n = 0;
    while !b.is_empty() && n < 500 {
        n += 1;
        let op = b.u8();
        let v6 = op & 1 != 0;
        let src = 1 + ((op >> 1) & 3);
        let id = u32::from((op >> 3) & 3);
        let off = b.u16() & 0x1fff;
        let mf = op & 0x20 != 0;
        let len = match op >> 6 {
            0 => usize::from(b.u8() % 32),
            1 => usize::from(b.u8()),
            2 => usize::from(b.u16() % 2000),
            _ => 8,
        };
        let body = b.take(len);
        let proto = if b.u8() & 1 == 0 { 17 } else { 6 };
        let pkt = if v6 {
            ipv6_frag(src, id, (off << 3) | u16::from(mf), proto, body)
        } else {
            let frag = off | if mf { 0x2000 } else { 0 };
            ipv4(
                [192, 168, 0, src],
                [10, 0, 0, 9],
                id as u16,
                frag,
                proto,
                body,
            )
        };
        now = now.saturating_add(u32::from(b.u8() % 8));
        let meta = decode(LinkType::Raw, &pkt, &dcfg, &mut dstats);
        let r = df.process(&meta, &pkt, now);
        if r.status == DefragStatus::Reassembled {
            assert!(!r.packet.is_empty());
            assert!(
                r.packet.len() <= 65_535 + 40,
                "reassembled {} bytes",
                r.packet.len()
            );
            let mut st = DecodeStats::default();
            let inner = decode(LinkType::Raw, r.packet, &dcfg, &mut st);
            let _ = inner.payload(r.packet);
        }
        assert!(
            df.tracker_count() <= cfg.trackers as usize,
            "tracker cap exceeded"
        );
        assert!(
            df.fragment_count() <= u64::from(cfg.max_frags),
            "fragment cap exceeded"
        );
    }
    df.expire(now.saturating_add(cfg.timeout + 2));
    assert_eq!(df.tracker_count(), 0, "trackers left after timeout");
    assert_eq!(df.fragment_count(), 0, "fragments left after timeout");
    assert_eq!(df.stats.memuse, 0, "defrag memuse leaks");
});
