//! Flow keys: direction symmetry, ICMP error attribution, VLAN masking, hash quality.

#[path = "../../packet/tests/decode_util/mod.rs"]
mod decode_util;

use std::collections::HashSet;

use decode_util::*;
use proptest::prelude::*;
use shrike_capture::LinkType;
use shrike_flow::{Direction, FlowKey};
use shrike_packet::decode::{decode, flags, DecodeConfig, DecodeStats, PacketKind, PacketMeta};

fn meta(v6: bool, src: [u8; 16], dst: [u8; 16], sp: u16, dp: u16, proto: u8) -> PacketMeta {
    let mut m = PacketMeta::EMPTY;
    m.kind = PacketKind::L4;
    if v6 {
        m.flags |= flags::IPV6;
    }
    (m.src, m.dst, m.sport, m.dport, m.proto) = (src, dst, sp, dp, proto);
    m
}

fn addr(v6: bool, a: [u8; 16]) -> [u8; 16] {
    if v6 {
        a
    } else {
        let mut x = [0; 16];
        x[..4].copy_from_slice(&a[..4]);
        x
    }
}

proptest! {
    #[test]
    fn swapping_sides_gives_equal_keys_and_hashes(
        v6 in any::<bool>(), a in any::<[u8; 16]>(), b in any::<[u8; 16]>(),
        sp in any::<u16>(), dp in any::<u16>(), proto in prop::sample::select(vec![6u8, 17, 1, 58, 132]),
        vlan in any::<[u16; 3]>(), depth in 0u8..3, seed in any::<u64>(),
    ) {
        let (a, b) = (addr(v6, a), addr(v6, b));
        let mut m1 = meta(v6, a, b, sp, dp, proto);
        m1.vlan = vlan;
        m1.vlan_count = 3;
        m1.tunnel_depth = depth;
        let mut m2 = m1;
        (m2.src, m2.dst, m2.sport, m2.dport) = (b, a, dp, sp);
        let (k1, d1) = FlowKey::from_meta(&m1);
        let (k2, d2) = FlowKey::from_meta(&m2);
        prop_assert_eq!(k1, k2);
        prop_assert_eq!(k1.hash(seed), k2.hash(seed));
        if (a, sp) != (b, dp) {
            prop_assert_eq!(d1, d2.reverse());
        }
        prop_assert!((k1.lo_addr, k1.lo_port) <= (k1.hi_addr, k1.hi_port));
        // Changing any field of the tuple changes the key.
        let mut m3 = m1;
        m3.sport = sp.wrapping_add(1);
        prop_assert_ne!(FlowKey::from_meta(&m3).0, k1);
        let mut m4 = m1;
        m4.tunnel_depth = depth + 1;
        prop_assert_ne!(FlowKey::from_meta(&m4).0, k1);
    }
}

#[test]
fn different_tuples_rarely_collide() {
    let seed = 0x1234_5678_9abc_def0;
    let mut hashes = HashSet::new();
    let mut buckets = vec![0u32; 1 << 12];
    let n = 200_000u32;
    for i in 0..n {
        // Structured, attacker-style keys: sequential addresses and ports.
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[10, 0, (i >> 8) as u8, i as u8]);
        let b = addr(false, [192, 168, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let m = meta(false, a, b, 1024 + (i % 60000) as u16, 80, 6);
        let h = FlowKey::from_meta(&m).0.hash(seed);
        hashes.insert(h);
        buckets[(h & 0xfff) as usize] += 1;
    }
    assert_eq!(hashes.len(), n as usize, "64-bit collisions");
    // Low bits spread like a uniform hash: Poisson(~49) over 4096 buckets stays within
    // [mean/4, 2*mean], and the chi-square statistic is near the bucket count.
    let mean = f64::from(n) / buckets.len() as f64;
    let (lo, hi) = (buckets.iter().min().unwrap(), buckets.iter().max().unwrap());
    let chi2: f64 = buckets
        .iter()
        .map(|&c| (f64::from(c) - mean).powi(2) / mean)
        .sum();
    println!("buckets min {lo} max {hi} chi2 {chi2:.0}");
    assert!(
        f64::from(*hi) < mean * 2.0 && f64::from(*lo) > mean / 4.0,
        "skewed low bits"
    );
    assert!(chi2 < buckets.len() as f64 * 1.2, "chi2 {chi2}");
    // The seed matters.
    let m = meta(false, [1; 16], [2; 16], 1, 2, 17);
    let k = FlowKey::from_meta(&m).0;
    assert_ne!(k.hash(1), k.hash(2));
}

fn decode_eth(f: &[u8], cfg: &DecodeConfig) -> PacketMeta {
    decode(LinkType::Ethernet, f, cfg, &mut DecodeStats::default())
}

#[test]
fn icmp_unreachable_maps_to_the_quoted_flow() {
    let cfg = DecodeConfig::default();
    let query = decode_eth(&eth_udp4(5000, 53, b"q"), &cfg); // A -> B
    let quoted = ipv4(A4, B4, 17, &udp(&A4, &B4, 5000, 53, b"q"));
    let err = decode_eth(
        &eth(0x0800, &ipv4(B4, A4, 1, &icmp4(3, 3, [0; 4], &quoted))),
        &cfg,
    );
    let (kq, dq) = FlowKey::from_meta(&query);
    let (ke, de) = FlowKey::from_meta(&err);
    assert_eq!(kq, ke);
    assert_eq!(de, dq.reverse());
    assert_eq!(ke.proto, 17);
    // Time exceeded is not mapped (Suricata maps destination unreachable only).
    let te = decode_eth(
        &eth(0x0800, &ipv4(B4, A4, 1, &icmp4(11, 0, [0; 4], &quoted))),
        &cfg,
    );
    assert_eq!(FlowKey::from_meta(&te).0.proto, 1);
    // Echo request and reply share a flow.
    let req = decode_eth(
        &eth(0x0800, &ipv4(A4, B4, 1, &icmp4(8, 0, [0, 1, 0, 1], b""))),
        &cfg,
    );
    let rep = decode_eth(
        &eth(0x0800, &ipv4(B4, A4, 1, &icmp4(0, 0, [0, 1, 0, 1], b""))),
        &cfg,
    );
    let (k1, d1) = FlowKey::from_meta(&req);
    let (k2, d2) = FlowKey::from_meta(&rep);
    assert_eq!((k1, d1), (k2, d2.reverse()));
}

#[test]
fn vlan_ids_follow_use_for_tracking() {
    let inner = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let f10 = eth(0x8100, &vlan(10, 0x0800, &inner));
    let f20 = eth(0x8100, &vlan(20, 0x0800, &inner));
    let on = DecodeConfig::default();
    assert_ne!(
        FlowKey::from_meta(&decode_eth(&f10, &on)).0,
        FlowKey::from_meta(&decode_eth(&f20, &on)).0
    );
    let mut off = DecodeConfig::default();
    off.vlan.use_for_tracking = false;
    let k10 = FlowKey::from_meta(&decode_eth(&f10, &off)).0;
    assert_eq!(k10, FlowKey::from_meta(&decode_eth(&f20, &off)).0);
    assert_eq!(k10.vlan, [0, 0, 0]);
    assert_eq!(k10.addr(true).to_string(), "10.0.0.1");
    assert_eq!(Direction::LoToHi.index(), 0);
}

fn esp4(src: [u8; 4], dst: [u8; 4], spi: u32, seq: u32) -> Vec<u8> {
    let esp = [&spi.to_be_bytes()[..], &seq.to_be_bytes(), b"xy"].concat();
    eth(0x0800, &ipv4(src, dst, 50, &esp))
}

#[test]
fn esp_flows_are_keyed_by_spi_and_one_way() {
    let cfg = DecodeConfig::default();
    let key = |f: &[u8]| FlowKey::from_meta(&decode_eth(f, &cfg));
    let (k1, d1) = key(&esp4(B4, A4, 123, 1));
    // Same SA, next packet: same flow, same direction (the sender is the key's first side
    // even when its address is the higher one).
    assert_eq!(key(&esp4(B4, A4, 123, 2)), (k1, d1));
    assert_eq!(d1, Direction::LoToHi);
    assert_eq!(k1.esp_spi(), Some(123));
    assert_eq!(k1.addr(true).to_string(), "10.0.0.2");
    // Another SPI between the same hosts, or the same SPI to another host: other flows.
    assert_ne!(key(&esp4(B4, A4, 321, 1)).0, k1);
    assert_ne!(key(&esp4(B4, [10, 0, 0, 3], 123, 1)).0, k1);
    // The reverse direction is another security association, so another flow.
    assert_ne!(key(&esp4(A4, B4, 123, 1)).0, k1);
    // SPIs whose halves would sort differently still keep their value.
    let (k, _) = key(&esp4(A4, B4, 0xffff_0001, 1));
    assert_eq!(k.esp_spi(), Some(0xffff_0001));
    assert_eq!(key(&eth_udp4(1, 2, b"")).0.esp_spi(), None);
}

#[test]
fn third_vlan_tag_splits_flows() {
    let inner = ipv4(A4, B4, 17, &udp(&A4, &B4, 1, 2, b""));
    let f = |v3: u16| {
        eth(
            0x8100,
            &vlan(1, 0x8100, &vlan(10, 0x8100, &vlan(v3, 0x0800, &inner))),
        )
    };
    let cfg = DecodeConfig::default();
    let (ka, kb) = (
        FlowKey::from_meta(&decode_eth(&f(100), &cfg)).0,
        FlowKey::from_meta(&decode_eth(&f(200), &cfg)).0,
    );
    assert_eq!(ka.vlan, [1, 10, 100]);
    assert_ne!(ka, kb);
    assert_ne!(ka.hash(7), kb.hash(7));
}
