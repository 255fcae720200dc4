//! Defragmentation: Sturges/Novak overlap pattern for every policy (IPv4 and IPv6),
//! rebuild, timeouts and limits.

use shrike_capture::LinkType;
use shrike_packet::decode::{decode, flags, DecodeConfig, DecodeEvent, DecodeStats, PacketMeta};
use shrike_packet::defrag::{Defrag, DefragConfig, DefragStatus};
use shrike_packet::policy::{HostOsPolicy, OsPolicy};

fn csum(h: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in h.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// IPv4 fragment of ICMP: `off` in bytes, `n` bytes of `ch`.
fn frag4(id: u16, off: u16, mf: bool, ch: u8, n: usize) -> Vec<u8> {
    let total = 20 + n;
    let fo = (off / 8) | if mf { 0x2000 } else { 0 };
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&fo.to_be_bytes());
    p.extend_from_slice(&[64, 1, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    let c = csum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend(std::iter::repeat_n(ch, n));
    p
}

/// IPv6 fragment of ICMPv6 with an optional destination-options header before the
/// fragment header.
fn frag6(id: u32, off: u16, mf: bool, ch: u8, n: usize, dstopts: bool) -> Vec<u8> {
    let ext = if dstopts { 8 } else { 0 };
    let plen = ext + 8 + n;
    let mut p = vec![0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8];
    p.push(if dstopts { 60 } else { 44 });
    p.push(64);
    p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    p.extend_from_slice(&[0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    if dstopts {
        p.extend_from_slice(&[44, 0, 1, 4, 0, 0, 0, 0]);
    }
    let fo = off | u16::from(mf);
    p.extend_from_slice(&[58, 0]);
    p.extend_from_slice(&fo.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend(std::iter::repeat_n(ch, n));
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

fn defrag(policy: OsPolicy) -> Defrag {
    let mut hosts = HostOsPolicy::new(OsPolicy::Bsd);
    hosts.add("0.0.0.0/0", policy).unwrap();
    hosts.add("::/0", policy).unwrap();
    Defrag::new(DefragConfig::default(), hosts)
}

/// The Sturges/Novak fragments: (offset, letter, length); the last one ends the datagram.
const NOVAK: [(u16, u8, usize); 17] = [
    (0, b'A', 24),
    (32, b'B', 16),
    (48, b'C', 24),
    (80, b'D', 8),
    (104, b'E', 16),
    (120, b'F', 24),
    (144, b'G', 16),
    (160, b'H', 16),
    (176, b'I', 8),
    (8, b'J', 32),
    (48, b'K', 24),
    (72, b'L', 24),
    (96, b'M', 24),
    (128, b'N', 8),
    (152, b'O', 8),
    (160, b'P', 8),
    (176, b'Q', 16),
];

/// Expected 8-byte blocks per policy (Suricata's defrag unit tests).
fn expected(policy: OsPolicy) -> &'static str {
    match policy {
        OsPolicy::Bsd => "AAAJJBCCCLLLMMMFFFGGHHIQ",
        OsPolicy::Linux => "AAAJJBKKKLLLMMMFFFGGPHQQ",
        OsPolicy::Windows => "AAAJBBCCCLLLMEEFFFGGHHIQ",
        OsPolicy::Solaris => "AAAJBBCCCLLLMMMFFFGGHHIQ",
        OsPolicy::First => "AAAJBBCCCLDLMEEFFFGGHHIQ",
        OsPolicy::Last => "AJJJJBKKKLLLMMMFNFGOPHQQ",
        _ => unreachable!(),
    }
}

fn novak(policy: OsPolicy, v6: bool) -> Vec<u8> {
    let mut d = defrag(policy);
    let mut overlap = 0;
    for (i, &(off, ch, n)) in NOVAK.iter().enumerate() {
        let last = i == NOVAK.len() - 1;
        let p = if v6 {
            frag6(1, off, !last, ch, n, false)
        } else {
            frag4(1, off, !last, ch, n)
        };
        let m = meta(&p);
        assert!(m.has(flags::FRAGMENT));
        let r = d.process(&m, &p, 100);
        let ev = if v6 {
            DecodeEvent::Ipv6FragOverlap
        } else {
            DecodeEvent::Ipv4FragOverlap
        };
        if r.events.contains(ev) {
            overlap += 1;
            assert!(i >= 9, "original fragments do not overlap");
        }
        if !last {
            assert_eq!(r.status, DefragStatus::Held, "{i}");
            continue;
        }
        assert_eq!(r.status, DefragStatus::Reassembled);
        assert!(overlap > 0);
        let pkt = r.packet.to_vec();
        let m = meta(&pkt);
        assert!(!m.has(flags::FRAGMENT));
        let hl = if v6 { 40 } else { 20 };
        assert_eq!(pkt.len(), hl + 192);
        if !v6 {
            assert!(!m.has(flags::IPV4_CSUM_BAD));
        } else {
            assert_eq!(pkt[6], 58);
        }
        return pkt[hl..].to_vec();
    }
    unreachable!()
}

#[test]
fn sturges_novak_every_policy_ipv4_and_ipv6() {
    for policy in [
        OsPolicy::Bsd,
        OsPolicy::Linux,
        OsPolicy::Windows,
        OsPolicy::Solaris,
        OsPolicy::First,
        OsPolicy::Last,
    ] {
        let want: Vec<u8> = expected(policy)
            .bytes()
            .flat_map(|c| std::iter::repeat_n(c, 8))
            .collect();
        for v6 in [false, true] {
            assert_eq!(
                String::from_utf8_lossy(&novak(policy, v6)),
                String::from_utf8_lossy(&want),
                "{policy:?} v6={v6}"
            );
        }
    }
    // Host OS names map onto the defrag policies as in Suricata.
    let same = |a, b| novak(a, false) == novak(b, false);
    assert!(same(OsPolicy::Hpux10, OsPolicy::Bsd));
    assert!(same(OsPolicy::OldLinux, OsPolicy::Linux));
    assert!(same(OsPolicy::Macos, OsPolicy::First));
    assert!(same(OsPolicy::Vista, OsPolicy::Windows));
}

#[test]
fn in_order_reverse_and_ipv6_ext_headers() {
    let mut d = defrag(OsPolicy::Bsd);
    let a = frag4(7, 0, true, b'A', 8);
    let b = frag4(7, 8, true, b'B', 8);
    let c = frag4(7, 16, false, b'C', 3);
    for p in [&c, &b] {
        assert_eq!(d.process(&meta(p), p, 5).status, DefragStatus::Held);
    }
    let r = d.process(&meta(&a), &a, 5);
    assert_eq!(r.status, DefragStatus::Reassembled);
    assert_eq!(&r.packet[20..], b"AAAAAAAABBBBBBBBCCC");
    assert_eq!(d.stats.ipv4_fragments, 3);
    assert_eq!(d.stats.ipv4_reassembled, 1);
    assert_eq!(d.tracker_count(), 0);
    assert_eq!(d.stats.memuse, 0);

    let x = frag6(9, 0, true, b'X', 16, true);
    let y = frag6(9, 16, false, b'Y', 4, true);
    d.process(&meta(&x), &x, 5);
    let r = d.process(&meta(&y), &y, 5);
    assert_eq!(r.status, DefragStatus::Reassembled);
    let pkt = r.packet.to_vec();
    // Destination options kept, its next header now the fragment's (ICMPv6).
    assert_eq!(pkt[6], 60);
    assert_eq!(pkt[40], 58);
    assert_eq!(u16::from_be_bytes([pkt[4], pkt[5]]), 8 + 20);
    assert_eq!(&pkt[48..], b"XXXXXXXXXXXXXXXXYYYY");
    assert_eq!(d.stats.ipv6_reassembled, 1);
}

#[test]
fn not_a_fragment_and_too_large() {
    let mut d = defrag(OsPolicy::Bsd);
    let whole = frag4(1, 0, false, b'Z', 10);
    assert_eq!(
        d.process(&meta(&whole), &whole, 1).status,
        DefragStatus::NotFragment
    );
    let big = frag4(2, 65_528, false, b'Z', 100);
    let m = meta(&big);
    let r = d.process(&m, &big, 1);
    assert_eq!(r.status, DefragStatus::Dropped);
    assert!(r.events.contains(DecodeEvent::Ipv4FragPktTooLarge));
}

#[test]
fn timeouts_free_trackers() {
    let mut d = defrag(OsPolicy::Bsd);
    for id in 0..10u16 {
        let p = frag4(id, 0, true, b'A', 64);
        d.process(&meta(&p), &p, 1000);
    }
    assert_eq!(d.tracker_count(), 10);
    assert!(d.stats.memuse > 0);
    d.expire(1030);
    assert_eq!(d.tracker_count(), 10);
    d.expire(1061);
    assert_eq!(d.tracker_count(), 0);
    assert_eq!(d.stats.ipv4_timeouts, 10);
    assert_eq!(d.stats.wrk_tracker_timeout, 10);
    assert_eq!(d.stats.memuse, 0);
    assert_eq!(d.fragment_count(), 0);
}

#[test]
fn fragment_flood_stays_within_limits() {
    let cfg = DefragConfig {
        memcap: 200_000,
        trackers: 500,
        max_frags: 1_000,
        ..DefragConfig::default()
    };
    let mut d = Defrag::new(cfg, HostOsPolicy::new(OsPolicy::Bsd));
    for i in 0..20_000u32 {
        let p = frag4(i as u16, 8 * (i % 3) as u16, true, b'F', 400);
        let m = meta(&p);
        let r = d.process(&m, &p, 10 + i / 1000);
        if r.status == DefragStatus::Dropped {
            assert!(r.events.contains(DecodeEvent::Ipv4FragIgnored));
        }
        assert!(d.stats.memuse <= 200_000, "{}", d.stats.memuse);
        assert!(d.tracker_count() <= 500);
        assert!(d.fragment_count() <= 1_000);
    }
    assert!(d.stats.max_trackers_reached + d.stats.max_frags_reached > 0);
    assert!(d.stats.memcap_drop > 0 || d.stats.max_frags_reached > 0);
    d.expire(10_000);
    assert_eq!(d.stats.memuse, 0);
}

/// Every host-os-policy on nine overlap shapes, old fragment first and new first, against
/// Suricata 7.0.10's reassembly of the same fragments (`tests/data/
/// defrag_overlaps_suricata.txt`, made from `scripts/diff/gen/overlaps.py`'s capture): a
/// new fragment overlapping two stored ones is trimmed against them one by one as
/// Suricata's `DefragInsertFrag` does, which a byte-wise "who wins" rule cannot give.
#[test]
fn overlap_shapes_as_suricata_for_every_host_os_policy() {
    let table = include_str!("data/defrag_overlaps_suricata.txt");
    let mut n = 0;
    for (k, line) in table.lines().filter(|l| !l.starts_with('#')).enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [policy, shape, s, e, order, want] = f[..] else {
            panic!("{line}")
        };
        let (s, e): (u16, u16) = (s.parse().unwrap(), e.parse().unwrap());
        let os = OsPolicy::from_name(policy).unwrap();
        let mut d = defrag(os);
        let id = k as u16 + 1;
        let end = e.max(24);
        let first = frag4(id, 0, true, b'f', 64);
        let orig = frag4(id, 64, true, b'o', 128);
        let new = frag4(id, s * 8, true, b'N', usize::from(e - s) * 8);
        let last = frag4(id, end * 8, false, b'z', 8);
        let mut frags = vec![first];
        if order == "new-first" {
            frags.extend([new, orig]);
        } else {
            frags.extend([orig, new]);
        }
        frags.push(last);
        let mut got = None;
        for p in &frags {
            let r = d.process(&meta(p), p, 100);
            if r.status == DefragStatus::Reassembled {
                got = Some(r.packet.to_vec());
            }
        }
        let pkt = got.unwrap_or_else(|| panic!("{line}: not reassembled"));
        let body = &pkt[20..];
        let blocks: String = std::iter::once('f')
            .chain(
                body.chunks(8)
                    .skip(1)
                    .map(|b| if b[7] == b'N' { 'N' } else { 'o' }),
            )
            .collect();
        assert_eq!(blocks, want, "{policy} {shape} {order}");
        n += 1;
    }
    assert_eq!(n, 234);
}
