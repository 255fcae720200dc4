//! Property tests: random bytes and mutated valid frames never panic, for every link type,
//! and the meta's offsets always stay inside the frame.

mod decode_util;

use decode_util::*;
use proptest::prelude::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{
    decode, DecodeConfig, DecodeStats, Ethernet, Icmpv4, Icmpv6, Ipv4, Ipv6, PacketMeta, Tcp, Udp,
};

const LINKS: [LinkType; 11] = [
    LinkType::Ethernet,
    LinkType::Raw,
    LinkType::Ipv4,
    LinkType::Ipv6,
    LinkType::Null,
    LinkType::Loop,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::Ppp,
    LinkType::CiscoHdlc,
    LinkType::Other(147),
];

fn check(m: &PacketMeta, data: &[u8]) {
    for off in [m.l2(), m.l3(), m.l4()].into_iter().flatten() {
        assert!(off <= data.len());
    }
    let p = m.payload(data);
    if m.payload_len > 0 && m.payload_off != u16::MAX {
        assert_eq!(p.len(), m.payload_len as usize, "payload out of the frame");
    }
    // Views built from any meta must not panic.
    if let Some(v) = Ipv4::from_meta(m, data) {
        let _ = (v.options().count(), v.verify_checksum(), v.payload().len());
    }
    if let Some(v) = Ipv6::from_meta(m, data) {
        let _ = v.ext_headers().count();
    }
    if let Some(t) = Tcp::from_meta(m, data) {
        let _ = t.options().count();
    }
    let _ = Udp::from_meta(m, data).map(|u| u.payload().len());
    let _ = Icmpv4::from_meta(m, data).map(|i| i.data().len());
    let _ = Icmpv6::from_meta(m, data).map(|i| i.data().len());
    let _ = Ethernet::from_meta(m, data).map(|e| e.ethertype());
    let _ = (m.src_addr(), m.dst_addr(), m.emb_src_addr(), m.icmp_type());
}

fn seeds() -> Vec<Vec<u8>> {
    let (a, b) = (v6(1), v6(2));
    vec![
        eth_tcp4(1, 80, 0x18, b"GET / HTTP/1.1\r\n"),
        eth_udp4(53, 53, b"dns"),
        eth(
            0x86dd,
            &ipv6(
                a,
                b,
                0,
                &[&[6u8, 0, 1, 4, 0, 0, 0, 0][..], &tcp(&a, &b, 1, 2, 2, b"")].concat(),
            ),
        ),
        eth(
            0x8100,
            &vlan(
                5,
                0x0800,
                &ipv4(
                    A4,
                    B4,
                    47,
                    &[
                        &[0x20u8, 0, 0x65, 0x58, 0, 0, 0, 1][..],
                        &eth_udp4(1, 4789, &[8, 0, 0, 0, 0, 0, 1, 0]),
                    ]
                    .concat(),
                ),
            ),
        ),
        eth(
            0x0800,
            &ipv4(
                A4,
                B4,
                1,
                &icmp4(3, 3, [0; 4], &ipv4(B4, A4, 17, &udp(&B4, &A4, 1, 2, b""))),
            ),
        ),
        eth(
            0x8864,
            &[
                0x11, 0, 0, 1, 0, 30, 0, 0x21, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 1, 1, 1,
                1, 2, 2, 2, 2, 0, 1, 0, 2, 0, 8, 0, 0,
            ],
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300), li in 0usize..LINKS.len(), csum in any::<bool>()) {
        let cfg = DecodeConfig { checksum_validation: csum, max_layers: 8, ..Default::default() };
        let mut st = DecodeStats::default();
        let m = decode(LINKS[li], &data, &cfg, &mut st);
        check(&m, &data);
        prop_assert_eq!(st.pkts, 1);
    }

    #[test]
    fn mutated_frames_never_panic(si in 0usize..6, edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8), cut in any::<u16>()) {
        let mut f = seeds()[si].clone();
        for (pos, val) in edits {
            let n = f.len();
            f[pos as usize % n] = val;
        }
        let n = f.len();
        f.truncate(n - (cut as usize % (n / 2 + 1)));
        let cfg = DecodeConfig { checksum_validation: true, ..Default::default() };
        let mut st = DecodeStats::default();
        let m = decode(LinkType::Ethernet, &f, &cfg, &mut st);
        check(&m, &f);
    }
}
