//! Differential test of the decoder against the `etherparse` crate on generated packets:
//! structured Ethernet / VLAN / QinQ / IPv4 (with options, fragments) / IPv6 (with
//! extension headers) / TCP (with options) / UDP / ICMPv4 / ICMPv6 frames with random
//! fields and lengths, then the same frames mutated (truncated, bytes flipped, length
//! fields rewritten). The corpus variant of this comparison is `decode_corpus.rs`.
//!
//! * Well-formed frames: both decoders must accept them, and addresses, VLAN ids,
//!   protocol, ports and the transport payload must agree with each other and with what
//!   was generated.
//! * Mutated frames: no panic; wherever both decoders still see the same plain IP packet,
//!   addresses, protocol and ports agree.

use std::net::IpAddr;

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use proptest::prelude::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, flags, DecodeConfig, DecodeStats, PacketKind, PacketMeta};

#[derive(Clone, Debug)]
enum L4 {
    Tcp {
        sport: u16,
        dport: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        win: u16,
        /// Option words (4 bytes each) of NOPs ending in EOL.
        opt_words: u8,
    },
    Udp {
        sport: u16,
        dport: u16,
    },
    Icmp {
        ty: u8,
        code: u8,
        rest: u32,
    },
}

#[derive(Clone, Debug)]
struct Spec {
    /// 0, 1 or 2 VLAN tags (ids).
    vlans: Vec<u16>,
    /// QinQ outer TPID 0x88a8 instead of 0x8100.
    qinq: bool,
    v6: bool,
    src: [u8; 16],
    dst: [u8; 16],
    ttl: u8,
    id: u16,
    tos: u8,
    /// IPv4 option words (NOPs + EOL).
    ip_opt_words: u8,
    /// IPv6 extension headers before the transport: 0 hop-by-hop, 60 destination options
    /// (hop-by-hop only first); each with `len` 8-byte units of PadN.
    ext: Vec<(u8, u8)>,
    l4: L4,
    payload: Vec<u8>,
    /// IPv4 only: make it a non-first fragment (offset in 8-byte units).
    frag_off: u16,
}

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

/// Ports a tunnel decoder would follow (VXLAN): kept out of the comparison.
fn avoid_tunnel_port(p: u16) -> u16 {
    if p == 4789 {
        4790
    } else {
        p
    }
}

fn build(s: &Spec) -> Vec<u8> {
    let (proto, l4) = match &s.l4 {
        L4::Tcp {
            sport,
            dport,
            seq,
            ack,
            flags,
            win,
            opt_words,
        } => {
            let olen = usize::from(*opt_words) * 4;
            let mut t = Vec::new();
            t.extend_from_slice(&sport.to_be_bytes());
            t.extend_from_slice(&dport.to_be_bytes());
            t.extend_from_slice(&seq.to_be_bytes());
            t.extend_from_slice(&ack.to_be_bytes());
            t.push((((20 + olen) / 4) as u8) << 4);
            t.push(*flags);
            t.extend_from_slice(&win.to_be_bytes());
            t.extend_from_slice(&[0, 0, 0, 0]);
            t.extend(std::iter::repeat_n(1u8, olen.saturating_sub(1)));
            if olen > 0 {
                t.push(0);
            }
            t.extend_from_slice(&s.payload);
            (6u8, t)
        }
        L4::Udp { sport, dport } => {
            let mut u = Vec::new();
            u.extend_from_slice(&sport.to_be_bytes());
            u.extend_from_slice(&avoid_tunnel_port(*dport).to_be_bytes());
            u.extend_from_slice(&((8 + s.payload.len()) as u16).to_be_bytes());
            u.extend_from_slice(&[0, 0]);
            u.extend_from_slice(&s.payload);
            (17, u)
        }
        L4::Icmp { ty, code, rest } => {
            let mut i = vec![*ty, *code, 0, 0];
            i.extend_from_slice(&rest.to_be_bytes());
            i.extend_from_slice(&s.payload);
            (if s.v6 { 58 } else { 1 }, i)
        }
    };
    let (ethertype, l3) = if s.v6 {
        let mut ext = Vec::new();
        let mut next = proto;
        // Build back to front so each header names the next.
        for (i, &(kind, len)) in s.ext.iter().enumerate().rev() {
            let kind = if i == 0 { kind } else { 60 };
            let body_len = 8 * (usize::from(len) + 1);
            let mut h = vec![next, len, 1, (body_len - 4) as u8];
            h.resize(body_len, 0);
            h.extend_from_slice(&ext);
            ext = h;
            next = kind;
        }
        let mut p = vec![0x60 | (s.tos >> 4), s.tos << 4, 0, 0];
        p.extend_from_slice(&((ext.len() + l4.len()) as u16).to_be_bytes());
        p.push(next);
        p.push(s.ttl.max(1));
        p.extend_from_slice(&s.src);
        p.extend_from_slice(&s.dst);
        p.extend_from_slice(&ext);
        p.extend_from_slice(&l4);
        (0x86ddu16, p)
    } else {
        let olen = usize::from(s.ip_opt_words) * 4;
        let total = 20 + olen + l4.len();
        let mut p = vec![
            0x40 | ((20 + olen) / 4) as u8,
            s.tos,
            (total >> 8) as u8,
            total as u8,
        ];
        p.extend_from_slice(&s.id.to_be_bytes());
        p.extend_from_slice(&s.frag_off.to_be_bytes());
        p.extend_from_slice(&[s.ttl.max(1), proto, 0, 0]);
        p.extend_from_slice(&s.src[..4]);
        p.extend_from_slice(&s.dst[..4]);
        p.extend(std::iter::repeat_n(1u8, olen.saturating_sub(1)));
        if olen > 0 {
            p.push(0);
        }
        let c = csum(&p);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p.extend_from_slice(&l4);
        (0x0800, p)
    };
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
    for (i, v) in s.vlans.iter().enumerate() {
        let tpid: u16 = if i == 0 && s.qinq && s.vlans.len() == 2 {
            0x88a8
        } else {
            0x8100
        };
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&(v & 0x0fff).max(1).to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(&l3);
    f
}

fn addr(s: &Spec, a: &[u8; 16]) -> IpAddr {
    if s.v6 {
        IpAddr::from(*a)
    } else {
        IpAddr::from([a[0], a[1], a[2], a[3]])
    }
}

/// Addresses that route nowhere special for the decoder (unicast; IPv4 not 0.x).
fn ip_bytes() -> impl Strategy<Value = [u8; 16]> {
    any::<[u8; 16]>().prop_map(|mut a| {
        a[0] = a[0].clamp(1, 223);
        a
    })
}

fn l4() -> impl Strategy<Value = L4> {
    prop_oneof![
        (
            any::<u16>(),
            any::<u16>(),
            any::<u32>(),
            any::<u32>(),
            any::<u8>(),
            any::<u16>(),
            0u8..=10
        )
            .prop_map(|(sport, dport, seq, ack, flags, win, opt_words)| L4::Tcp {
                sport,
                dport,
                seq,
                ack,
                flags,
                win,
                opt_words
            }),
        (any::<u16>(), any::<u16>()).prop_map(|(sport, dport)| L4::Udp { sport, dport }),
        // Echo request/reply (types valid in both ICMPv4 and ICMPv6 numbering below).
        (
            prop_oneof![Just(0u8), Just(8u8), Just(128u8), Just(129u8)],
            any::<u32>()
        )
            .prop_map(|(ty, rest)| L4::Icmp { ty, code: 0, rest }),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (
            prop::collection::vec(1u16..4095, 0..=2),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            ip_bytes(),
            ip_bytes(),
            any::<u8>(),
            any::<u16>(),
            any::<u8>(),
            0u8..=10,
        ),
        prop::collection::vec((prop_oneof![Just(0u8), Just(60u8)], 0u8..3), 0..=2),
        l4(),
        prop::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(
            |((vlans, qinq, v6), (src, dst, ttl, id, tos, ip_opt_words), ext, l4, payload)| {
                let l4 = match l4 {
                    // ICMP types follow the IP version.
                    L4::Icmp { ty, code, rest } => {
                        let ty = match (v6, ty) {
                            (true, 0 | 128) => 129,
                            (true, _) => 128,
                            (false, 128 | 0) => 0,
                            (false, _) => 8,
                        };
                        L4::Icmp { ty, code, rest }
                    }
                    other => other,
                };
                Spec {
                    vlans,
                    qinq,
                    v6,
                    src,
                    dst,
                    ttl,
                    id,
                    tos: tos & 0xfc,
                    ip_opt_words,
                    ext,
                    l4,
                    payload,
                    frag_off: 0,
                }
            },
        )
}

struct Ether {
    src: IpAddr,
    dst: IpAddr,
    vlans: Vec<u16>,
    /// (proto, sport, dport, payload) for TCP/UDP.
    l4: Option<(u8, u16, u16, Vec<u8>)>,
    icmp: bool,
}

fn etherparse_view(data: &[u8]) -> Option<Ether> {
    let s = SlicedPacket::from_ethernet(data).ok()?;
    let (src, dst): (IpAddr, IpAddr) = match s.net.as_ref()? {
        NetSlice::Ipv4(v) => (
            v.header().source_addr().into(),
            v.header().destination_addr().into(),
        ),
        NetSlice::Ipv6(v) => (
            v.header().source_addr().into(),
            v.header().destination_addr().into(),
        ),
        NetSlice::Arp(_) => return None,
    };
    let vlans = s.vlan_ids().iter().map(|v| v.value()).collect();
    let (l4, icmp) = match &s.transport {
        Some(TransportSlice::Tcp(t)) => (
            Some((
                6,
                t.source_port(),
                t.destination_port(),
                t.payload().to_vec(),
            )),
            false,
        ),
        Some(TransportSlice::Udp(u)) => (
            Some((
                17,
                u.source_port(),
                u.destination_port(),
                u.payload().to_vec(),
            )),
            false,
        ),
        Some(TransportSlice::Icmpv4(_)) | Some(TransportSlice::Icmpv6(_)) => (None, true),
        _ => (None, false),
    };
    Some(Ether {
        src,
        dst,
        vlans,
        l4,
        icmp,
    })
}

fn ours(data: &[u8]) -> PacketMeta {
    let mut st = DecodeStats::default();
    decode(LinkType::Ethernet, data, &DecodeConfig::default(), &mut st)
}

fn comparable(m: &PacketMeta) -> bool {
    m.is_ip() && m.tunnel_depth == 0 && !m.is_invalid()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    /// Well-formed generated frames: both decoders accept them and agree with each other
    /// and with the generator.
    #[test]
    fn well_formed_frames_agree(s in spec()) {
        let f = build(&s);
        let m = ours(&f);
        let e = etherparse_view(&f).expect("etherparse accepts a well-formed frame");
        prop_assert!(comparable(&m), "decoder rejected a well-formed frame: {m:?}");
        prop_assert_eq!(m.src_addr(), Some(addr(&s, &s.src)));
        prop_assert_eq!(m.dst_addr(), Some(addr(&s, &s.dst)));
        prop_assert_eq!(Some(e.src), m.src_addr());
        prop_assert_eq!(Some(e.dst), m.dst_addr());
        let want_vlans: Vec<u16> = s.vlans.iter().map(|v| (v & 0x0fff).max(1)).collect();
        prop_assert_eq!(&e.vlans, &want_vlans);
        prop_assert_eq!(m.vlan_ids(), &want_vlans[..]);
        prop_assert_eq!(m.kind, PacketKind::L4);
        match &s.l4 {
            L4::Tcp { sport, dport, .. } => {
                let (p, sp, dp, pl) = e.l4.clone().expect("etherparse sees TCP");
                prop_assert_eq!((m.proto, m.sport, m.dport), (p, sp, dp));
                prop_assert_eq!((sp, dp), (*sport, *dport));
                prop_assert_eq!(m.payload(&f), &pl[..]);
                prop_assert_eq!(&pl, &s.payload);
            }
            L4::Udp { sport, .. } => {
                let (p, sp, dp, pl) = e.l4.clone().expect("etherparse sees UDP");
                prop_assert_eq!((m.proto, m.sport, m.dport), (p, sp, dp));
                prop_assert_eq!(sp, *sport);
                prop_assert_eq!(m.payload(&f), &pl[..]);
                prop_assert_eq!(&pl, &s.payload);
            }
            L4::Icmp { ty, .. } => {
                prop_assert!(e.icmp);
                prop_assert!(m.is_icmp());
                prop_assert_eq!(m.icmp_type(), Some(*ty));
            }
        }
    }

    /// Mutated frames (truncated, bytes overwritten, IP/UDP length fields rewritten): no
    /// panic, and where both still see a plain IP packet they agree on addresses, protocol
    /// and ports.
    #[test]
    fn mutated_frames_never_disagree(
        s in spec(),
        cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        len_field in prop::option::of(any::<u16>()),
        mode in 0u8..4,
    ) {
        let mut f = build(&s);
        let l3 = 14 + 4 * s.vlans.len();
        match mode {
            0 => {
                let n = cut.index(f.len() + 1);
                f.truncate(n);
            }
            1 => {
                for (i, b) in &flips {
                    let at = i.index(f.len());
                    f[at] = *b;
                }
            }
            2 => {
                // Rewrite the IP length field (IPv4 total length / IPv6 payload length).
                if let Some(v) = len_field {
                    let at = if s.v6 { l3 + 4 } else { l3 + 2 };
                    if at + 2 <= f.len() {
                        f[at..at + 2].copy_from_slice(&v.to_be_bytes());
                    }
                }
            }
            _ => {
                // Truncate inside the transport header and flip the protocol byte.
                let n = cut.index(f.len() + 1).max(l3);
                f.truncate(n);
                if let Some((_, b)) = flips.first() {
                    let at = if s.v6 { l3 + 6 } else { l3 + 9 };
                    if let Some(p) = f.get_mut(at) {
                        *p = *b;
                    }
                }
            }
        }
        let m = ours(&f);
        if !comparable(&m) {
            return Ok(());
        }
        let Some(e) = etherparse_view(&f) else {
            return Ok(());
        };
        prop_assert_eq!(Some(e.src), m.src_addr());
        prop_assert_eq!(Some(e.dst), m.dst_addr());
        if let Some((p, sp, dp, _)) = e.l4 {
            if m.kind == PacketKind::L4 && !m.has(flags::FRAGMENT) {
                prop_assert_eq!((m.proto, m.sport, m.dport), (p, sp, dp));
            }
        }
    }
}

/// Non-first IPv4 fragments: both see the addresses; neither claims transport ports.
#[test]
fn fragments_agree_on_addresses_and_carry_no_ports() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..500 {
        let mut s = spec().new_tree(&mut runner).unwrap().current();
        s.v6 = false;
        s.frag_off = 1 + (s.id % 100);
        let f = build(&s);
        let m = ours(&f);
        assert!(m.has(flags::FRAGMENT), "{s:?}");
        let e = etherparse_view(&f).expect("etherparse accepts a fragment");
        assert_eq!(m.src_addr(), Some(e.src));
        assert_eq!(m.dst_addr(), Some(e.dst));
        assert!(
            e.l4.is_none(),
            "etherparse does not slice a fragment's transport"
        );
        assert_ne!(
            m.kind,
            PacketKind::L4,
            "a non-first fragment has no transport header"
        );
    }
}
