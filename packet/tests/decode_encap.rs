//! Encapsulations beyond the basic layers: VN-Tag, Cisco DCE, PPP and Cisco HDLC link types,
//! three VLAN tags, and tunnels' root packets ([`decode_tunnel`]).

mod decode_util;

use decode_util::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{
    decode, decode_tunnel, tunnel_src, DecodeConfig, DecodeEvent, DecodeStats, Ethernet,
    PacketKind, PacketMeta,
};

fn run(link: LinkType, f: &[u8]) -> (PacketMeta, DecodeStats) {
    let mut st = DecodeStats::default();
    let m = decode(link, f, &DecodeConfig::default(), &mut st);
    assert!(
        m.events.is_empty() && !m.is_invalid(),
        "unexpected events {:?}",
        m.events.iter().collect::<Vec<_>>()
    );
    (m, st)
}

/// Counters that must be non-zero, by dotted name; every other layer counter must be 0.
fn assert_counts(st: &DecodeStats, want: &[(&str, u64)]) {
    st.visit(&mut |n, v| {
        if n.starts_with("decoder.event") || n.ends_with("pkt_size") || n == "decoder.bytes" {
            return;
        }
        let exp = want
            .iter()
            .find(|(w, _)| *w == n)
            .map(|(_, c)| *c)
            .unwrap_or(0);
        let exp = if n == "decoder.pkts" { 1 } else { exp };
        assert_eq!(v, exp, "counter {n}");
    });
}

#[test]
fn vntag_and_dce() {
    let inner = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b"x"));
    // VN-Tag, then a VLAN tag, then IPv4 (the sv decode-vntag pcap's layout).
    let tag = [&[0u8, 0, 0, 0, 0x81, 0x00][..], &vlan(11, 0x0800, &inner)].concat();
    let f = eth(0x8926, &tag);
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.kind, m.vlan_ids(), m.l3()),
        (PacketKind::L4, &[11u16][..], Some(24))
    );
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.vntag", 1),
            ("decoder.vlan", 1),
            ("decoder.ipv4", 1),
            ("decoder.udp", 1),
        ],
    );
    // VN-Tag straight to IPv6.
    let (a, b) = (v6(1), v6(2));
    let i6 = ipv6(a, b, 17, &udp(&a, &b, 1, 2, b""));
    let f = eth(0x8926, &[&[0u8, 0, 0, 0, 0x86, 0xdd][..], &i6].concat());
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.ip_version(), m.l3(), st.vntag), (6, Some(20), 1));

    // DCE: 2 bytes, then a second Ethernet header whose MACs become the packet's.
    let mut inner_eth = eth(0x86dd, &i6);
    inner_eth[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 5]);
    let f = eth(0x8903, &[&[0x00u8, 0x20][..], &inner_eth].concat());
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.ip_version(), m.l2(), m.l3()), (6, Some(16), Some(30)));
    let e = Ethernet::from_meta(&m, &f).unwrap();
    assert_eq!(e.dst(), [0x33, 0x33, 0, 0, 0, 5]);
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 2),
            ("decoder.ipv6", 1),
            ("decoder.udp", 1),
        ],
    );
}

#[test]
fn ppp_and_chdlc_link_types() {
    let (a, b) = (v6(1), v6(2));
    let i6 = ipv6(a, b, 17, &udp(&a, &b, 1, 2, b""));
    let i4 = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let table: Vec<(LinkType, Vec<u8>, u8, &str, usize)> = vec![
        // Compressed one-byte protocol field (0x57: IPv6), as scapy writes PPP.
        (
            LinkType::Ppp,
            [&[0x57u8][..], &i6].concat(),
            6,
            "decoder.ppp",
            1,
        ),
        // Address/control, then the two-byte protocol (0x0021: IPv4).
        (
            LinkType::Ppp,
            [&[0xffu8, 0x03, 0x00, 0x21][..], &i4].concat(),
            4,
            "decoder.ppp",
            4,
        ),
        (
            LinkType::CiscoHdlc,
            [&[0x0fu8, 0x00, 0x08, 0x00][..], &i4].concat(),
            4,
            "decoder.chdlc",
            4,
        ),
    ];
    for (link, f, ver, counter, l3) in table {
        let (m, st) = run(link, &f);
        assert_eq!((m.ip_version(), m.l3()), (ver, Some(l3)), "{link:?}");
        let ipc = if ver == 4 {
            "decoder.ipv4"
        } else {
            "decoder.ipv6"
        };
        assert_counts(&st, &[(counter, 1), (ipc, 1), ("decoder.udp", 1)]);
    }
}

#[test]
fn three_vlan_tags_are_kept() {
    let inner = ipv4(A4, B4, 1, &icmp4(8, 0, [0, 1, 0, 1], b""));
    let f = eth(
        0x8100,
        &vlan(1, 0x8100, &vlan(10, 0x8100, &vlan(100, 0x0800, &inner))),
    );
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!(m.vlan_ids(), &[1, 10, 100]);
}

fn gre_ip(inner: &[u8]) -> Vec<u8> {
    [&[0u8, 0, 0x08, 0x00][..], inner].concat()
}

#[test]
fn tunnels_keep_their_root_packet_apart() {
    let icmp = ipv4(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        1,
        &icmp4(8, 0, [0, 1, 0, 1], b"ping"),
    );
    let vx = [&[0x08u8, 0, 0, 0, 0, 0, 1, 0][..], &eth(0x0800, &icmp)].concat();
    let udp_outer = udp(&A4, &B4, 45149, 4789, &vx);
    let vxlan = eth(0x8100, &vlan(7, 0x0800, &ipv4(A4, B4, 17, &udp_outer)));
    // (frame, kind, root protocol, root kind, inner packet start)
    let table: Vec<(Vec<u8>, u8, u8, PacketKind, usize)> = vec![
        (
            vxlan.clone(),
            tunnel_src::VXLAN,
            17,
            PacketKind::L4,
            18 + 20 + 8 + 8 + 14,
        ),
        (
            eth(0x0800, &ipv4(A4, B4, 47, &gre_ip(&icmp))),
            tunnel_src::GRE,
            47,
            PacketKind::Ip,
            14 + 20 + 4,
        ),
        (
            eth(0x0800, &ipv4(A4, B4, 4, &icmp)),
            tunnel_src::IPV4,
            4,
            PacketKind::Ip,
            34,
        ),
        (
            eth(0x86dd, &ipv6(v6(9), v6(8), 4, &icmp)),
            tunnel_src::IPV6,
            4,
            PacketKind::Ip,
            54,
        ),
        // GRE TEB: the inner packet starts at its own Ethernet header.
        (
            eth(
                0x0800,
                &ipv4(
                    A4,
                    B4,
                    47,
                    &[&[0u8, 0, 0x65, 0x58][..], &eth(0x0800, &icmp)].concat(),
                ),
            ),
            tunnel_src::GRE,
            47,
            PacketKind::Ip,
            14 + 20 + 4,
        ),
    ];
    for (f, kind, root_proto, root_kind, start) in table {
        let mut st = DecodeStats::default();
        let (m, root) = decode_tunnel(LinkType::Ethernet, &f, &DecodeConfig::default(), &mut st);
        let r = root.expect("root packet");
        assert_eq!((m.proto, m.tunnel_depth, m.tunnel_src), (1, 1, kind));
        assert!(m.is_tunnel_inner() && !m.is_tunnel_root());
        assert_eq!(m.packet_start(), start, "kind {kind}");
        assert!(r.is_tunnel_root() && !r.is_tunnel_inner());
        assert_eq!(
            (r.proto, r.kind, r.tunnel_depth),
            (root_proto, root_kind, 0)
        );
        assert_eq!(r.payload(&f), b"", "a root carries no payload");
        assert_eq!(usize::from(m.root_l3), r.l3().unwrap());
        assert_eq!(r.packet_start(), 0);
        assert_eq!(st.pkts, 1);
    }
    // The VXLAN root keeps the outer ports and VLAN; both packets see the VLAN id.
    let (m, root) = decode_tunnel(
        LinkType::Ethernet,
        &vxlan,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let r = root.unwrap();
    assert_eq!((r.sport, r.dport, r.vlan_ids()), (45149, 4789, &[7u16][..]));
    assert_eq!(m.vlan_ids(), &[7]);

    // Events stay with the packet they were raised in; `decode` joins them again.
    let mut bad_inner = icmp.clone();
    bad_inner[0] = 0x44; // IPv4 header length 16: hlen_too_small in the inner packet
    let outer = ipv4_opts(A4, B4, 47, &[0x99, 0x04, 0, 0, 0, 0, 0, 0], &gre_ip(&icmp));
    for (f, in_root, in_inner) in [
        (
            eth(0x0800, &ipv4(A4, B4, 47, &gre_ip(&bad_inner))),
            None,
            Some(DecodeEvent::Ipv4HlenTooSmall),
        ),
        (eth(0x0800, &outer), Some(DecodeEvent::Ipv4OptInvalid), None),
    ] {
        let mut st = DecodeStats::default();
        let (m, root) = decode_tunnel(LinkType::Ethernet, &f, &DecodeConfig::default(), &mut st);
        let one = decode(
            LinkType::Ethernet,
            &f,
            &DecodeConfig::default(),
            &mut DecodeStats::default(),
        );
        if let Some(e) = in_inner {
            // The inner packet did not decode to IP: one packet, the outer one, with it.
            assert!(root.is_none() && m.has_event(e) && m.tunnel_depth == 0);
            assert!(one.has_event(e));
            assert_eq!(st.event(e), 1);
        }
        if let Some(e) = in_root {
            let r = root.expect("root");
            assert!(
                r.has_event(e) && !m.has_event(e),
                "{:?}",
                m.events.iter().collect::<Vec<_>>()
            );
            assert!(one.has_event(e) && one.tunnel_depth == 1);
            assert_eq!(st.event(e), 1);
        }
    }

    // No tunnel, or a tunnel whose inner frame is not IP: no root.
    let plain = eth_udp4(1, 2, b"x");
    let (_, root) = decode_tunnel(
        LinkType::Ethernet,
        &plain,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    assert!(root.is_none());
    let arp = [&[0x08u8, 0, 0, 0, 0, 0, 1, 0][..], &eth(0x0806, &[0u8; 28])].concat();
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 4789, &arp)));
    let (m, root) = decode_tunnel(
        LinkType::Ethernet,
        &f,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    assert!(root.is_none());
    assert_eq!(
        (m.proto, m.dport, m.tunnel_depth, m.tunnel_src),
        (17, 4789, 0, 0)
    );
}
