//! Well-formed frames of every layer and combination: meta fields, views and counters.

mod decode_util;

use std::net::IpAddr;

use decode_util::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{
    decode, flags, DecodeConfig, DecodeStats, Ethernet, Icmpv4, Icmpv6, Ipv4, Ipv6, PacketKind,
    PacketMeta, Tcp, TcpOption, Udp,
};

fn run(link: LinkType, f: &[u8]) -> (PacketMeta, DecodeStats) {
    run_cfg(link, f, &DecodeConfig::default())
}

fn run_cfg(link: LinkType, f: &[u8], cfg: &DecodeConfig) -> (PacketMeta, DecodeStats) {
    let mut st = DecodeStats::default();
    let m = decode(link, f, cfg, &mut st);
    assert!(
        m.events.is_empty() && !m.is_invalid(),
        "unexpected events {:?}",
        m.events.iter().collect::<Vec<_>>()
    );
    (m, st)
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
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
fn ethernet_ipv4_tcp() {
    let opts = [
        2, 4, 5, 0xb4, 1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2,
    ];
    let t = tcp_full(
        &A4,
        &B4,
        40000,
        80,
        7,
        9,
        0x18,
        &opts,
        b"GET / HTTP/1.1\r\n\r\n",
    );
    let f = eth(0x0800, &ipv4(A4, B4, 6, &t));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(m.kind, PacketKind::L4);
    assert_eq!(m.ip_version(), 4);
    assert_eq!(m.src_addr(), Some(ip("10.0.0.1")));
    assert_eq!(m.dst_addr(), Some(ip("10.0.0.2")));
    assert_eq!((m.sport, m.dport, m.proto, m.ttl), (40000, 80, 6, 64));
    assert_eq!(
        (m.tcp_seq(), m.tcp_ack(), m.tcp_flags, m.tcp_win),
        (7, 9, 0x18, 65535)
    );
    assert_eq!(m.ip_id, 0x1234);
    assert!(m.has(flags::DF) && !m.has(flags::MF) && m.has(flags::TCP_OPTS));
    assert_eq!((m.l2(), m.l3(), m.l4()), (Some(0), Some(14), Some(34)));
    assert_eq!(m.payload(&f), b"GET / HTTP/1.1\r\n\r\n");
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.ipv4", 1),
            ("decoder.tcp", 1),
        ],
    );
    let e = Ethernet::from_meta(&m, &f).unwrap();
    assert_eq!((e.src(), e.dst(), e.ethertype()), (MAC_A, MAC_B, 0x0800));
    let v4 = Ipv4::from_meta(&m, &f).unwrap();
    assert!(v4.verify_checksum());
    assert_eq!(v4.src().to_string(), "10.0.0.1");
    let tv = Tcp::from_meta(&m, &f).unwrap();
    assert_eq!(tv.payload(), m.payload(&f));
    let o: Vec<_> = tv.options().collect();
    assert_eq!(
        o,
        vec![
            TcpOption::Mss(1460),
            TcpOption::Nop,
            TcpOption::WindowScale(7),
            TcpOption::SackPermitted,
            TcpOption::Timestamps(1, 2)
        ]
    );
    assert!(Udp::from_meta(&m, &f).is_none() && Ipv6::from_meta(&m, &f).is_none());
}

#[test]
fn tcp_sack_option() {
    let opts = [1, 1, 5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4];
    let t = tcp_full(&A4, &B4, 1, 2, 0, 0, 0x10, &opts, b"");
    let f = eth(0x0800, &ipv4(A4, B4, 6, &t));
    let (m, _) = run(LinkType::Ethernet, &f);
    let tv = Tcp::from_meta(&m, &f).unwrap();
    let sack = tv
        .options()
        .find(|o| matches!(o, TcpOption::Sack(_)))
        .unwrap();
    assert_eq!(sack.sack_blocks().collect::<Vec<_>>(), vec![(1, 2), (3, 4)]);
}

#[test]
fn udp_icmp_ipv4_and_ipv6() {
    let f = eth_udp4(5353, 53, b"q");
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.kind, m.proto, m.sport, m.dport),
        (PacketKind::L4, 17, 5353, 53)
    );
    assert_eq!(Udp::from_meta(&m, &f).unwrap().payload(), b"q");
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.ipv4", 1),
            ("decoder.udp", 1),
        ],
    );

    let f = eth(
        0x0800,
        &ipv4(A4, B4, 1, &icmp4(8, 0, [0x12, 0x34, 0, 7], b"ping")),
    );
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.icmp_type(), m.icmp_code()), (Some(8), Some(0)));
    assert_eq!((m.icmp_id(), m.icmp_seq(), m.dport), (0x1234, 7, 0));
    assert_eq!(Icmpv4::from_meta(&m, &f).unwrap().ident(), 0x1234);
    assert_eq!(m.payload(&f), b"ping");
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.ipv4", 1),
            ("decoder.icmpv4", 1),
        ],
    );
    // The reply's ports are the mirror image (type/counterpart), so both share a flow.
    let f2 = eth(
        0x0800,
        &ipv4(B4, A4, 1, &icmp4(0, 0, [0x12, 0x34, 0, 7], b"ping")),
    );
    let (r, _) = run(LinkType::Ethernet, &f2);
    assert_eq!((r.sport, r.dport), (m.dport, m.sport));

    let (a, b) = (v6(1), v6(2));
    let f = eth(0x86dd, &ipv6(a, b, 6, &tcp(&a, &b, 1234, 443, 0x02, b"")));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.ip_version(), m.proto, m.sport, m.dport),
        (6, 6, 1234, 443)
    );
    assert_eq!(m.src_addr(), Some(ip("2001:db8::1")));
    assert_eq!(Ipv6::from_meta(&m, &f).unwrap().hop_limit(), 64);
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.ipv6", 1),
            ("decoder.tcp", 1),
        ],
    );

    let f = eth(0x86dd, &ipv6(a, b, 17, &udp(&a, &b, 546, 547, b"dhcp")));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!((m.proto, m.payload(&f)), (17, &b"dhcp"[..]));

    let f = eth(
        0x86dd,
        &ipv6(a, b, 58, &icmp6(&a, &b, 128, 0, [0, 1, 0, 2], b"x")),
    );
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.icmp_type(), m.icmp_id(), m.icmp_seq()),
        (Some(128), 1, 2)
    );
    assert_eq!(m.dport, 129 << 8);
    assert_eq!(Icmpv6::from_meta(&m, &f).unwrap().msg_type(), 128);
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.ipv6", 1),
            ("decoder.icmpv6", 1),
        ],
    );
}

#[test]
fn vlan_qinq_and_9100() {
    let inner = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let f = eth(0x8100, &vlan(100, 0x0800, &inner));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.vlan_ids(), m.l3()), (&[100u16][..], Some(18)));
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.vlan", 1),
            ("decoder.ipv4", 1),
            ("decoder.udp", 1),
        ],
    );

    let f = eth(0x88a8, &vlan(10, 0x8100, &vlan(20, 0x0800, &inner)));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(m.vlan_ids(), &[10, 20]);
    assert_eq!(st.vlan_qinq, 1);

    let f = eth(
        0x9100,
        &vlan(1, 0x8100, &vlan(2, 0x8100, &vlan(3, 0x0800, &inner))),
    );
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.vlan_count, m.vlan_ids()), (3, &[1u16, 2, 3][..]));
    assert_eq!((st.vlan, st.vlan_qinq, st.vlan_qinqinq), (1, 1, 1));
}

fn mpls_frame(labels: &[(u32, bool)], payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for (l, bos) in labels {
        v.extend_from_slice(&((l << 12) | (u32::from(*bos) << 8) | 64).to_be_bytes());
    }
    v.extend_from_slice(payload);
    eth(0x8847, &v)
}

#[test]
fn mpls_variants() {
    let inner4 = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let (a, b) = (v6(1), v6(2));
    let inner6 = ipv6(a, b, 17, &udp(&a, &b, 1, 2, b""));
    for (labels, payload, ver) in [
        (vec![(100, false), (200, true)], inner4.clone(), 4),
        (vec![(0, true)], inner4.clone(), 4),
        (vec![(2, true)], inner6.clone(), 6),
        (vec![(5000, true)], inner6.clone(), 6),
    ] {
        let (m, st) = run(LinkType::Ethernet, &mpls_frame(&labels, &payload));
        assert_eq!((m.kind, m.ip_version()), (PacketKind::L4, ver));
        assert_eq!(st.mpls, 1);
    }
    // Ethernet pseudowire with a control word.
    let pw = [&[0u8, 0, 0, 0][..], &eth(0x0800, &inner4)].concat();
    let f = mpls_frame(&[(5000, true)], &pw);
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.kind, m.l2(), m.l3()),
        (PacketKind::L4, Some(22), Some(36))
    );
    assert_eq!(st.ethernet, 2);
}

#[test]
fn pppoe_and_pptp() {
    let inner = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b"p"));
    let body = [&[0x00u8, 0x21][..], &inner].concat();
    let mut h = vec![0x11, 0x00, 0x00, 0x01];
    h.extend_from_slice(&(body.len() as u16).to_be_bytes());
    h.extend_from_slice(&body);
    let (m, st) = run(LinkType::Ethernet, &eth(0x8864, &h));
    assert_eq!((m.kind, m.l3()), (PacketKind::L4, Some(22)));
    assert_counts(
        &st,
        &[
            ("decoder.ethernet", 1),
            ("decoder.pppoe", 1),
            ("decoder.ipv4", 1),
            ("decoder.udp", 1),
        ],
    );

    // PADI with a service-name tag.
    let (m, st) = run(
        LinkType::Ethernet,
        &eth(0x8863, &[0x11, 0x09, 0, 0, 0, 4, 0x01, 0x01, 0, 0]),
    );
    assert_eq!((m.kind, st.pppoe), (PacketKind::NonIp, 1));

    // PPTP: GRE v1 with key and sequence, PPP with address/control.
    let ppp = [&[0xffu8, 0x03, 0x00, 0x21][..], &inner].concat();
    let mut g = vec![0x30, 0x01, 0x88, 0x0b, 0, ppp.len() as u8, 0, 9, 0, 0, 0, 1];
    g.extend_from_slice(&ppp);
    let f = eth(0x0800, &ipv4([9, 9, 9, 9], [8, 8, 8, 8], 47, &g));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.src_addr(), m.tunnel_depth), (Some(ip("10.0.0.1")), 1));
    assert_eq!((st.gre, st.ppp, st.ipv4), (1, 1, 2));
}

#[test]
fn gre_variants() {
    let inner = ipv4(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        17,
        &udp(&[1, 1, 1, 1], &[2, 2, 2, 2], 7, 8, b"g"),
    );
    let outer = |g: &[u8]| eth(0x0800, &ipv4(A4, B4, 47, g));
    for hdr in [
        vec![0x00, 0x00, 0x08, 0x00],
        vec![0x20, 0x00, 0x08, 0x00, 0, 0, 0, 42],
        vec![0x30, 0x00, 0x08, 0x00, 0, 0, 0, 42, 0, 0, 0, 1],
        vec![0x80, 0x00, 0x08, 0x00, 0, 0, 0, 0],
        // Routing present: checksum/offset word, one SRE, then the null SRE.
        vec![
            0x40, 0x00, 0x08, 0x00, 0, 0, 0, 0, 0x08, 0x00, 0, 4, 1, 2, 3, 4, 0, 0, 0, 0,
        ],
    ] {
        let f = outer(&[&hdr[..], &inner].concat());
        let (m, st) = run(LinkType::Ethernet, &f);
        assert_eq!(m.src_addr(), Some(ip("1.1.1.1")), "{hdr:?}");
        assert_eq!((m.tunnel_depth, m.sport, st.gre, st.ipv4), (1, 7, 1, 2));
        assert_eq!(m.l3(), Some(14 + 20 + hdr.len()));
    }
    // Transparent Ethernet bridging and IPv6 payloads.
    let f = outer(&[&[0u8, 0, 0x65, 0x58][..], &eth(0x0800, &inner)].concat());
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.l2(), m.tunnel_depth, st.ethernet), (Some(38), 1, 2));
    let (a, b) = (v6(1), v6(2));
    let f = outer(
        &[
            &[0u8, 0, 0x86, 0xdd][..],
            &ipv6(a, b, 17, &udp(&a, &b, 1, 2, b"")),
        ]
        .concat(),
    );
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!(m.ip_version(), 6);
    // ERSPAN type II: 8-byte header (version 1, VLAN 5), then the mirrored frame.
    let hdr = [0x10u8, 0, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 5, 0, 0, 0, 0, 0, 0];
    let f = outer(&[&hdr[..], &eth(0x0800, &inner)].concat());
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (st.erspan, m.tunnel_depth, m.src_addr()),
        (1, 1, Some(ip("1.1.1.1")))
    );
    assert_eq!((m.vlan_ids(), st.ethernet), (&[5u16][..], 2));
    // Type I (no sequence bit): the mirrored frame follows the GRE header.
    let f = outer(&[&[0u8, 0, 0x88, 0xbe][..], &eth(0x0800, &inner)].concat());
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (st.erspan, m.tunnel_depth, m.l3()),
        (1, 1, Some(14 + 20 + 4 + 14))
    );
    // An unknown GRE payload leaves the outer packet as the meta.
    let f = outer(&[&[0u8, 0, 0x12, 0x34][..], &[0; 20]].concat());
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!((m.tunnel_depth, m.proto, m.kind), (0, 47, PacketKind::Ip));
}

/// Geneve and Teredo, as Suricata 7's `DecodeGeneve` / `DecodeTeredo` accept and refuse
/// them: on their ports (source or destination), Geneve with options adding up and an
/// Ethernet, IPv4 or IPv6 payload, Teredo an IPv6 packet filling the datagram (after an
/// optional origin indication); anything else stays plain UDP.
#[test]
fn geneve_and_teredo() {
    let (a, b) = (v6(1), v6(2));
    let i4 = ipv4(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        6,
        &tcp(&[1, 1, 1, 1], &[2, 2, 2, 2], 3, 4, 0x02, b""),
    );
    // Geneve: one 8-byte option (length 2 words in the header, 1 word of option data).
    let opt = [0u8, 1, 0x80, 1, 0xde, 0xad, 0xbe, 0xef];
    let gen = |et: u16, payload: &[u8]| {
        let mut g = vec![0x02, 0, 0, 0, 0, 0, 7, 0];
        g[2..4].copy_from_slice(&et.to_be_bytes());
        g.extend_from_slice(&opt);
        g.extend_from_slice(payload);
        g
    };
    let f = eth(
        0x0800,
        &ipv4(A4, B4, 17, &udp(&A4, &B4, 40000, 6081, &gen(0x0800, &i4))),
    );
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!((m.proto, m.sport, m.tunnel_depth), (6, 3, 1));
    assert_eq!(st.geneve, 1);
    // Transparent bridging: an inner Ethernet frame; from port 6081 too.
    let teb = gen(0x6558, &eth(0x0800, &i4));
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 6081, 40000, &teb)));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!((m.proto, m.tunnel_depth), (6, 1));
    // Options that do not add up, a version other than 0, or another port: plain UDP.
    let mut bad = gen(0x0800, &i4);
    bad[0] = 0x03;
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 40000, 6081, &bad)));
    assert_eq!(run(LinkType::Ethernet, &f).0.tunnel_depth, 0);
    let mut bad = gen(0x0800, &i4);
    bad[0] = 0x42;
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 40000, 6081, &bad)));
    assert_eq!(run(LinkType::Ethernet, &f).0.tunnel_depth, 0);
    let f = eth(
        0x0800,
        &ipv4(A4, B4, 17, &udp(&A4, &B4, 40000, 6082, &gen(0x0800, &i4))),
    );
    assert_eq!(run(LinkType::Ethernet, &f).0.tunnel_depth, 0);
    // An unknown payload type: Geneve, with its event.
    let f = eth(
        0x0800,
        &ipv4(A4, B4, 17, &udp(&A4, &B4, 40000, 6081, &gen(0x1234, &i4))),
    );
    let mut st = DecodeStats::default();
    let m = decode(LinkType::Ethernet, &f, &DecodeConfig::default(), &mut st);
    assert_eq!((m.tunnel_depth, st.geneve), (0, 1));
    assert!(m.is_invalid());
    assert_eq!(
        m.events.iter().collect::<Vec<_>>(),
        vec![shrike_packet::decode::DecodeEvent::GeneveUnknownPayloadType]
    );

    // Teredo on 3544: IPv6 with an ICMPv6 echo, with and without an origin indication.
    let echo = [128u8, 0, 0, 0, 0, 1, 0, 1];
    let i6 = ipv6(a, b, 58, &echo);
    for payload in [i6.clone(), [&[0u8, 0, 1, 2, 3, 4, 5, 6][..], &i6].concat()] {
        let f = eth(
            0x0800,
            &ipv4(A4, B4, 17, &udp(&A4, &B4, 3544, 50000, &payload)),
        );
        let (m, st) = run(LinkType::Ethernet, &f);
        assert_eq!((m.proto, m.tunnel_depth, st.teredo), (58, 1, 1));
    }
    // Trailing bytes, a zero hop limit, or another port: plain UDP.
    let mut long = i6.clone();
    long.push(0);
    let mut hlim0 = i6.clone();
    hlim0[7] = 0;
    for (payload, port) in [(long, 3544), (hlim0, 3544), (i6.clone(), 3545)] {
        let f = eth(
            0x0800,
            &ipv4(A4, B4, 17, &udp(&A4, &B4, port, 50000, &payload)),
        );
        let (m, st) = run(LinkType::Ethernet, &f);
        assert_eq!((m.proto, m.tunnel_depth, st.teredo), (17, 0, 0));
    }
    // `ports: any` (an empty list): every UDP port.
    let mut cfg = DecodeConfig::default();
    cfg.teredo.ports.clear();
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 3545, 50000, &i6)));
    assert_eq!(run_cfg(LinkType::Ethernet, &f, &cfg).0.tunnel_depth, 1);
}

#[test]
fn vxlan_and_ip_in_ip() {
    let inner = eth(
        0x0800,
        &ipv4(
            [1, 1, 1, 1],
            [2, 2, 2, 2],
            6,
            &tcp(&[1, 1, 1, 1], &[2, 2, 2, 2], 3, 4, 0x02, b""),
        ),
    );
    let vx = [&[0x08u8, 0, 0, 0, 0, 0, 1, 0][..], &inner].concat();
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 55555, 4789, &vx)));
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(
        (m.proto, m.sport, m.tunnel_depth, m.l2()),
        (6, 3, 1, Some(50))
    );
    assert_eq!((st.vxlan, st.ethernet, st.udp, st.tcp), (1, 1, 1, 1));
    // Another port is plain UDP; a configured one is VXLAN.
    let f = eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 8472, &vx)));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!((m.proto, m.tunnel_depth), (17, 0));
    let mut cfg = DecodeConfig::default();
    cfg.vxlan.ports = vec![8472];
    let (m, _) = run_cfg(LinkType::Ethernet, &f, &cfg);
    assert_eq!((m.proto, m.tunnel_depth), (6, 1));

    let (a, b) = (v6(1), v6(2));
    let i4 = ipv4(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        17,
        &udp(&[1, 1, 1, 1], &[2, 2, 2, 2], 1, 2, b""),
    );
    let i6 = ipv6(a, b, 17, &udp(&a, &b, 1, 2, b""));
    let cases: [(Vec<u8>, &str, u8); 4] = [
        (
            eth(0x0800, &ipv4(A4, B4, 4, &i4)),
            "decoder.ipv4_in_ipv4",
            4,
        ),
        (
            eth(0x0800, &ipv4(A4, B4, 41, &i6)),
            "decoder.ipv6_in_ipv4",
            6,
        ),
        (
            eth(0x86dd, &ipv6(v6(9), v6(8), 4, &i4)),
            "decoder.ipv4_in_ipv6",
            4,
        ),
        (
            eth(0x86dd, &ipv6(v6(9), v6(8), 41, &i6)),
            "decoder.ipv6_in_ipv6",
            6,
        ),
    ];
    for (f, counter, ver) in cases {
        let (m, st) = run(LinkType::Ethernet, &f);
        assert_eq!(
            (m.ip_version(), m.tunnel_depth, m.kind),
            (ver, 1, PacketKind::L4),
            "{counter}"
        );
        let mut seen = 0;
        st.visit(&mut |n, v| {
            if n == counter {
                seen = v
            }
        });
        assert_eq!(seen, 1, "{counter}");
    }
}

#[test]
fn link_types() {
    let i4 = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let (a, b) = (v6(1), v6(2));
    let i6 = ipv6(a, b, 17, &udp(&a, &b, 1, 2, b""));
    let mut sll = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00];
    sll.extend_from_slice(&i4);
    let mut sll2 = vec![
        0x86, 0xdd, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0,
    ];
    sll2.extend_from_slice(&i6);
    let null = |af: [u8; 4], p: &[u8]| [&af[..], p].concat();
    let table: Vec<(LinkType, Vec<u8>, u8, &str, usize)> = vec![
        (LinkType::LinuxSll, sll, 4, "decoder.sll", 16),
        (LinkType::LinuxSll2, sll2, 6, "decoder.sll2", 20),
        (LinkType::Raw, i4.clone(), 4, "decoder.raw", 0),
        (LinkType::Raw, i6.clone(), 6, "decoder.raw", 0),
        (LinkType::Ipv4, i4.clone(), 4, "decoder.raw", 0),
        (LinkType::Ipv6, i6.clone(), 6, "decoder.raw", 0),
        (
            LinkType::Null,
            null([2, 0, 0, 0], &i4),
            4,
            "decoder.null",
            4,
        ),
        (
            LinkType::Null,
            null([0, 0, 0, 2], &i4),
            4,
            "decoder.null",
            4,
        ),
        (
            LinkType::Null,
            null([30, 0, 0, 0], &i6),
            6,
            "decoder.null",
            4,
        ),
        (
            LinkType::Null,
            null([24, 0, 0, 0], &i6),
            6,
            "decoder.null",
            4,
        ),
        (
            LinkType::Loop,
            null([0, 0, 0, 28], &i6),
            6,
            "decoder.null",
            4,
        ),
        (
            LinkType::Loop,
            null([0, 0, 0, 2], &i4),
            4,
            "decoder.null",
            4,
        ),
    ];
    for (link, f, ver, counter, l3) in table {
        let (m, st) = run(link, &f);
        assert_eq!(
            (m.ip_version(), m.kind, m.l3()),
            (ver, PacketKind::L4, Some(l3)),
            "{link:?}"
        );
        let mut seen = 0;
        st.visit(&mut |n, v| {
            if n == counter {
                seen = v
            }
        });
        assert_eq!(seen, 1, "{link:?} {counter}");
    }
    // LOOP is network order only: a little-endian family is unsupported there.
    let mut st = DecodeStats::default();
    let m = decode(
        LinkType::Loop,
        &null([2, 0, 0, 0], &i4),
        &DecodeConfig::default(),
        &mut st,
    );
    assert_eq!(m.kind, PacketKind::NonIp);
    // An unsupported link type is counted invalid.
    let m = decode(LinkType::Other(147), &i4, &DecodeConfig::default(), &mut st);
    assert_eq!((m.kind, m.is_invalid()), (PacketKind::Invalid, true));
}

#[test]
fn non_ip_frames() {
    let (m, st) = run(LinkType::Ethernet, &eth(0x0806, &[0; 28]));
    assert_eq!((m.kind, st.arp), (PacketKind::NonIp, 1));
    let (m, st) = run(LinkType::Ethernet, &eth(0x88cc, &[0; 28]));
    assert_eq!((m.kind, st.unknown_ethertype), (PacketKind::NonIp, 1));
}

#[test]
fn icmp_errors_carry_the_original_flow() {
    // Port unreachable for a UDP datagram 10.0.0.2:5000 -> 10.0.0.1:53, sent by 10.0.0.1.
    let orig = ipv4(B4, A4, 17, &udp(&B4, &A4, 5000, 53, b"query"));
    let f = eth(0x0800, &ipv4(A4, B4, 1, &icmp4(3, 3, [0; 4], &orig)));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert!(m.has(flags::EMB_IP) && m.has(flags::EMB_PORTS) && !m.has(flags::EMB_IPV6));
    assert_eq!(
        (m.emb_src_addr(), m.emb_dst_addr()),
        (Some(ip("10.0.0.2")), Some(ip("10.0.0.1")))
    );
    assert_eq!((m.emb_proto, m.emb_sport(), m.emb_dport()), (17, 5000, 53));
    assert_eq!((m.icmp_type(), m.icmp_code()), (Some(3), Some(3)));

    let (a, b) = (v6(1), v6(2));
    let orig = ipv6(b, a, 6, &tcp(&b, &a, 4000, 22, 0x02, b""));
    let f = eth(0x86dd, &ipv6(a, b, 58, &icmp6(&a, &b, 1, 4, [0; 4], &orig)));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert!(m.has(flags::EMB_IPV6) && m.has(flags::EMB_PORTS));
    assert_eq!(
        (m.emb_src_addr(), m.emb_sport(), m.emb_dport()),
        (Some(ip("2001:db8::2")), 4000, 22)
    );
}

#[test]
fn fragments_are_not_transport_decoded() {
    let mut p = ipv4(A4, B4, 6, &[0u8; 24]);
    p[6] = 0x20; // MF, offset 0
    fix_ipv4_csum(&mut p);
    let (m, st) = run(LinkType::Ethernet, &eth(0x0800, &p));
    assert!(m.has(flags::FRAGMENT) && m.has(flags::MF));
    assert_eq!((m.kind, m.proto, st.tcp), (PacketKind::Ip, 6, 0));
    p[6] = 0x00;
    p[7] = 0x10; // offset 16 * 8
    fix_ipv4_csum(&mut p);
    let (m, _) = run(LinkType::Ethernet, &eth(0x0800, &p));
    assert_eq!(
        (m.frag_off, m.has(flags::FRAGMENT), m.has(flags::MF)),
        (16, true, false)
    );

    let (a, b) = (v6(1), v6(2));
    let mut fh = vec![6, 0];
    fh.extend_from_slice(&((3u16 << 3) | 1).to_be_bytes());
    fh.extend_from_slice(&0xdeadbeefu32.to_be_bytes());
    fh.extend_from_slice(&[0; 16]);
    let (m, st) = run(LinkType::Ethernet, &eth(0x86dd, &ipv6(a, b, 44, &fh)));
    assert!(m.has(flags::IPV6_FRAG_HDR) && m.has(flags::FRAGMENT) && m.has(flags::MF));
    assert_eq!(
        (m.ip_id, m.frag_off, m.proto, st.tcp),
        (0xdeadbeef, 3, 44, 0)
    );
}

#[test]
fn ipv6_extension_chain() {
    let (a, b) = (v6(1), v6(2));
    let t = tcp(&a, &b, 10, 20, 0x02, b"");
    // hop-by-hop (router alert + pad1), destination options (HAO), routing type 2, AH.
    let hop = [60u8, 0, 5, 2, 0, 0, 0, 0];
    let mut dst = vec![43u8, 2, 0xc9, 16];
    dst.extend_from_slice(&[7; 16]);
    dst.extend_from_slice(&[1, 2, 0, 0]);
    let rt = [
        51u8, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let ah = [6u8, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1];
    let payload = [&hop[..], &dst, &rt, &ah, &t].concat();
    let f = eth(0x86dd, &ipv6(a, b, 0, &payload));
    let (m, _) = run(LinkType::Ethernet, &f);
    assert_eq!((m.kind, m.proto, m.sport), (PacketKind::L4, 6, 10));
    assert_eq!(
        m.l4(),
        Some(14 + 40 + hop.len() + dst.len() + rt.len() + ah.len())
    );
    let v = Ipv6::from_meta(&m, &f).unwrap();
    let kinds: Vec<u8> = v.ext_headers().map(|h| h.kind).collect();
    assert_eq!(kinds, vec![0, 60, 43, 51]);
    let mut it = v.ext_headers();
    for _ in it.by_ref() {}
    assert_eq!(it.upper().0, 6);
}

#[test]
fn ipv4_options_view_and_checksums() {
    let rr = [7u8, 7, 4, 0, 0, 0, 0, 1];
    let f = eth(
        0x0800,
        &ipv4_opts(A4, B4, 17, &rr, &udp(&A4, &B4, 1, 2, b"o")),
    );
    let (m, _) = run(LinkType::Ethernet, &f);
    assert!(m.has(flags::IP_OPTS));
    let v = Ipv4::from_meta(&m, &f).unwrap();
    let o: Vec<_> = v.options().map(|o| (o.kind, o.data.len())).collect();
    assert_eq!(o, vec![(7, 5), (1, 0)]);

    // IPv4 header checksum is always checked; L4 only with checksum-validation.
    let mut f = eth_tcp4(1, 2, 0x10, b"data");
    let (m, _) = run(LinkType::Ethernet, &f);
    assert!(!m.has(flags::IPV4_CSUM_BAD) && !m.has(flags::L4_CSUM_CHECKED));
    let cfg = DecodeConfig {
        checksum_validation: true,
        ..Default::default()
    };
    let (m, _) = run_cfg(LinkType::Ethernet, &f, &cfg);
    assert!(m.has(flags::L4_CSUM_CHECKED) && !m.has(flags::L4_CSUM_BAD));
    let last = f.len() - 1;
    f[last] ^= 0xff;
    let (m, _) = run_cfg(LinkType::Ethernet, &f, &cfg);
    assert!(m.has(flags::L4_CSUM_BAD));
    f[24] ^= 1; // IPv4 checksum byte
    let (m, st) = run(LinkType::Ethernet, &f);
    assert!(m.has(flags::IPV4_CSUM_BAD) && !m.has(flags::L4_CSUM_CHECKED));
    assert_eq!(st.ipv4_csum_bad, 1);
    for f in [
        eth_udp4(1, 2, b"abc"),
        eth(0x0800, &ipv4(A4, B4, 1, &icmp4(8, 0, [0; 4], b"x"))),
        eth(
            0x86dd,
            &ipv6(
                v6(1),
                v6(2),
                58,
                &icmp6(&v6(1), &v6(2), 128, 0, [0; 4], b"x"),
            ),
        ),
        eth(
            0x86dd,
            &ipv6(v6(1), v6(2), 17, &udp(&v6(1), &v6(2), 1, 2, b"x")),
        ),
    ] {
        let (m, _) = run_cfg(LinkType::Ethernet, &f, &cfg);
        assert!(
            m.has(flags::L4_CSUM_CHECKED) && !m.has(flags::L4_CSUM_BAD),
            "{f:?}"
        );
    }
}

#[test]
fn sctp_esp_and_padding() {
    let sctp = [0u8, 80, 0, 81, 0, 0, 0, 1, 0, 0, 0, 0, 9, 9];
    let (m, st) = run(LinkType::Ethernet, &eth(0x0800, &ipv4(A4, B4, 132, &sctp)));
    assert_eq!(
        (m.kind, m.sport, m.dport, m.payload_len, st.sctp),
        (PacketKind::L4, 80, 81, 2, 1)
    );
    let (m, st) = run(
        LinkType::Ethernet,
        &eth(0x0800, &ipv4(A4, B4, 50, &[0, 0, 1, 0, 0, 0, 0, 5, 1])),
    );
    assert_eq!(
        (m.kind, m.l4_a, m.l4_b, st.esp),
        (PacketKind::L4, 256, 5, 1)
    );
    // Ethernet padding after the IP packet is not payload.
    let mut f = eth_udp4(1, 2, b"ab");
    f.extend_from_slice(&[0; 12]);
    let (m, st) = run(LinkType::Ethernet, &f);
    assert_eq!(m.payload(&f), b"ab");
    assert_eq!(
        (st.bytes, st.max_pkt_size, st.avg_pkt_size()),
        (f.len() as u64, f.len() as u64, f.len() as u64)
    );
}

#[test]
fn vlan_tracking_flag() {
    let cfg = DecodeConfig {
        vlan: shrike_packet::config::VlanConfig {
            use_for_tracking: false,
        },
        ..Default::default()
    };
    let f = eth(
        0x8100,
        &vlan(7, 0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""))),
    );
    let (m, _) = run_cfg(LinkType::Ethernet, &f, &cfg);
    assert!(m.has(flags::VLAN_NO_TRACK));
    assert_eq!(m.vlan_ids(), &[7]);
}
