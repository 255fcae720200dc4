//! Packet builders for decoder and flow tests (checksums filled in).
#![allow(dead_code)]

pub mod pcap;

use shrike_packet::decode::checksum;

pub const MAC_A: [u8; 6] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55];
pub const MAC_B: [u8; 6] = [0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb];

pub fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&MAC_B);
    v.extend_from_slice(&MAC_A);
    v.extend_from_slice(&ethertype.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A VLAN tag: TCI then the inner ethertype, then the payload.
pub fn vlan(id: u16, inner_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&(id & 0x0fff).to_be_bytes());
    v.extend_from_slice(&inner_type.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// IPv4 header with options, correct checksum, total length = header + payload.
pub fn ipv4_opts(src: [u8; 4], dst: [u8; 4], proto: u8, opts: &[u8], payload: &[u8]) -> Vec<u8> {
    assert!(opts.len() % 4 == 0);
    let hl = 20 + opts.len();
    let total = hl + payload.len();
    let mut h = vec![
        0x40 | (hl / 4) as u8,
        0,
        (total >> 8) as u8,
        total as u8,
        0x12,
        0x34,
        0x40,
        0,
        64,
        proto,
        0,
        0,
    ];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(opts);
    let c = !checksum::fold(checksum::sum(&h, 0));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

pub fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    ipv4_opts(src, dst, proto, &[], payload)
}

/// Recomputes the IPv4 header checksum in place (after a test edits the header).
pub fn fix_ipv4_csum(p: &mut [u8]) {
    let hl = usize::from(p[0] & 0xf) * 4;
    p[10] = 0;
    p[11] = 0;
    let c = !checksum::fold(checksum::sum(&p[..hl], 0));
    p[10..12].copy_from_slice(&c.to_be_bytes());
}

pub fn ipv6(src: [u8; 16], dst: [u8; 16], nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.push(nh);
    h.push(64);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

pub fn v6(last: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0x20;
    a[1] = 0x01;
    a[2] = 0x0d;
    a[3] = 0xb8;
    a[15] = last;
    a
}

/// Pseudo-header sum for `src`/`dst` (4 or 16 bytes).
fn pseudo(src: &[u8], dst: &[u8], proto: u8, len: usize) -> u64 {
    if src.len() == 4 {
        checksum::pseudo_v4(src, dst, proto, len)
    } else {
        checksum::pseudo_v6(src, dst, proto, len)
    }
}

/// TCP segment with options (padded to 4 bytes) and a correct checksum for src/dst.
#[allow(clippy::too_many_arguments)]
pub fn tcp_full(
    src: &[u8],
    dst: &[u8],
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    opts: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let mut o = opts.to_vec();
    while o.len() % 4 != 0 {
        o.push(0);
    }
    let hl = 20 + o.len();
    let mut t = Vec::new();
    t.extend_from_slice(&sp.to_be_bytes());
    t.extend_from_slice(&dp.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.push(((hl / 4) as u8) << 4);
    t.push(flags);
    t.extend_from_slice(&65535u16.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 0]);
    t.extend_from_slice(&o);
    t.extend_from_slice(payload);
    let c = !checksum::fold(checksum::sum(&t, pseudo(src, dst, 6, t.len())));
    t[16..18].copy_from_slice(&c.to_be_bytes());
    t
}

pub fn tcp(src: &[u8], dst: &[u8], sp: u16, dp: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    tcp_full(src, dst, sp, dp, 1000, 2000, flags, &[], payload)
}

pub fn udp(src: &[u8], dst: &[u8], sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    let len = 8 + payload.len();
    let mut u = Vec::new();
    u.extend_from_slice(&sp.to_be_bytes());
    u.extend_from_slice(&dp.to_be_bytes());
    u.extend_from_slice(&(len as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    let mut c = !checksum::fold(checksum::sum(&u, pseudo(src, dst, 17, u.len())));
    if c == 0 {
        c = 0xffff;
    }
    u[6..8].copy_from_slice(&c.to_be_bytes());
    u
}

/// ICMPv4 message with a correct checksum.
pub fn icmp4(t: u8, code: u8, rest: [u8; 4], data: &[u8]) -> Vec<u8> {
    let mut m = vec![t, code, 0, 0];
    m.extend_from_slice(&rest);
    m.extend_from_slice(data);
    let c = !checksum::fold(checksum::sum(&m, 0));
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// ICMPv6 message with a correct checksum for src/dst.
pub fn icmp6(src: &[u8], dst: &[u8], t: u8, code: u8, rest: [u8; 4], data: &[u8]) -> Vec<u8> {
    let mut m = vec![t, code, 0, 0];
    m.extend_from_slice(&rest);
    m.extend_from_slice(data);
    let c = !checksum::fold(checksum::sum(&m, pseudo(src, dst, 58, m.len())));
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

pub const A4: [u8; 4] = [10, 0, 0, 1];
pub const B4: [u8; 4] = [10, 0, 0, 2];

/// Ethernet / IPv4 / UDP a→b.
pub fn eth_udp4(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    eth(0x0800, &ipv4(A4, B4, 17, &udp(&A4, &B4, sp, dp, payload)))
}

/// Ethernet / IPv4 / TCP a→b.
pub fn eth_tcp4(sp: u16, dp: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4(A4, B4, 6, &tcp(&A4, &B4, sp, dp, flags, payload)),
    )
}
