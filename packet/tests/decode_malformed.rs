//! Table-driven malformed-packet tests: every decoder event the decoder can raise is driven
//! by a crafted frame, and its counter is checked.

mod decode_util;

use decode_util::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeEvent as E, DecodeStats, PacketMeta};

struct Case {
    name: &'static str,
    link: LinkType,
    frame: Vec<u8>,
    event: E,
    invalid: bool,
}

fn c(name: &'static str, frame: Vec<u8>, event: E, invalid: bool) -> Case {
    Case {
        name,
        link: LinkType::Ethernet,
        frame,
        event,
        invalid,
    }
}

fn cl(name: &'static str, link: LinkType, frame: Vec<u8>, event: E, invalid: bool) -> Case {
    Case {
        name,
        link,
        frame,
        event,
        invalid,
    }
}

fn e4(proto: u8, l4: &[u8]) -> Vec<u8> {
    eth(0x0800, &ipv4(A4, B4, proto, l4))
}

fn e4opts(opts: &[u8]) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4_opts(A4, B4, 17, opts, &udp(&A4, &B4, 1, 2, b"x")),
    )
}

fn e6(nh: u8, payload: &[u8]) -> Vec<u8> {
    eth(0x86dd, &ipv6(v6(1), v6(2), nh, payload))
}

/// An extension header of `len8` 8-byte units (hop/dst/routing style) with `body`.
fn ext(next: u8, body: &[u8]) -> Vec<u8> {
    let mut h = vec![next, 0];
    h.extend_from_slice(body);
    while (h.len()) % 8 != 0 {
        h.push(0);
    }
    h[1] = (h.len() / 8 - 1) as u8;
    h
}

fn frag(next: u8, off8: u16, more: bool, id: u32) -> Vec<u8> {
    let mut h = vec![next, 0];
    h.extend_from_slice(&((off8 << 3) | u16::from(more)).to_be_bytes());
    h.extend_from_slice(&id.to_be_bytes());
    h
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn udp6() -> Vec<u8> {
    udp(&v6(1), &v6(2), 1, 2, b"abc")
}

fn gre(b0: u8, b1: u8, ptype: u16, rest: &[u8]) -> Vec<u8> {
    let mut g = vec![b0, b1];
    g.extend_from_slice(&ptype.to_be_bytes());
    g.extend_from_slice(rest);
    e4(47, &g)
}

fn inner4() -> Vec<u8> {
    ipv4(
        [1, 1, 1, 1],
        [2, 2, 2, 2],
        17,
        &udp(&[1, 1, 1, 1], &[2, 2, 2, 2], 5, 6, b"in"),
    )
}

fn tcp_raw(hl_words: u8, opts: &[u8], total: usize) -> Vec<u8> {
    let mut t = vec![
        0,
        1,
        0,
        2,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        hl_words << 4,
        0x10,
        0xff,
        0xff,
        0,
        0,
        0,
        0,
    ];
    t.extend_from_slice(opts);
    t.resize(total.max(t.len()), 0);
    t
}

fn icmp6_e(t: u8, code: u8, data: &[u8]) -> Vec<u8> {
    e6(58, &icmp6(&v6(1), &v6(2), t, code, [0; 4], data))
}

fn pppoe_sess(proto: &[u8], payload: &[u8]) -> Vec<u8> {
    let body = cat(&[proto, payload]);
    let mut h = vec![0x11, 0x00, 0x00, 0x01];
    h.extend_from_slice(&(body.len() as u16).to_be_bytes());
    h.extend_from_slice(&body);
    eth(0x8864, &h)
}

fn pptp(ppp: &[u8]) -> Vec<u8> {
    // GRE v1, key present (payload len + call id).
    gre(
        0x20,
        0x01,
        0x880b,
        &cat(&[&[0, ppp.len() as u8, 0, 1], ppp]),
    )
}

fn mpls(labels: &[(u32, bool)], payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for (l, bos) in labels {
        let shim = (l << 12) | (u32::from(*bos) << 8) | 64;
        v.extend_from_slice(&shim.to_be_bytes());
    }
    v.extend_from_slice(payload);
    eth(0x8847, &v)
}

fn cases() -> Vec<Case> {
    let u4 = udp(&A4, &B4, 1, 2, b"x");
    let mut v = vec![
        c("eth short", vec![0; 10], E::EthernetPktTooSmall, true),
        c(
            "ipv4 short",
            eth(0x0800, &[0x45; 10]),
            E::Ipv4PktTooSmall,
            true,
        ),
        c(
            "ipv4 version",
            {
                let mut f = e4(17, &u4);
                f[14] = 0x55;
                f
            },
            E::Ipv4WrongIpVersion,
            true,
        ),
        c(
            "ipv4 ihl",
            {
                let mut f = e4(17, &u4);
                f[14] = 0x44;
                f
            },
            E::Ipv4HlenTooSmall,
            true,
        ),
        c(
            "ipv4 len<hlen",
            {
                let mut f = e4(17, &u4);
                f[16] = 0;
                f[17] = 10;
                f
            },
            E::Ipv4IplenSmallerThanHlen,
            true,
        ),
        c(
            "ipv4 trunc",
            {
                let mut f = e4(17, &u4);
                f[16] = 4;
                f
            },
            E::Ipv4TruncPkt,
            true,
        ),
        c(
            "ipv4 opt len",
            e4opts(&[0x07, 0xff, 0, 0, 0, 0, 0, 0]),
            E::Ipv4OptInvalidLen,
            true,
        ),
        c(
            "ipv4 opt len 0",
            e4opts(&[0x44, 0x00, 0, 0, 0, 0, 0, 0]),
            E::Ipv4OptInvalidLen,
            true,
        ),
        c(
            "ipv4 rr ptr",
            e4opts(&[0x07, 0x07, 0x05, 0, 0, 0, 0, 0]),
            E::Ipv4OptMalformed,
            true,
        ),
        c(
            "ipv4 ts ptr",
            e4opts(&[0x44, 0x08, 0x04, 0, 0, 0, 0, 0]),
            E::Ipv4OptMalformed,
            true,
        ),
        c(
            "ipv4 sec len",
            e4opts(&[0x82, 0x04, 0, 0, 0, 0, 0, 0]),
            E::Ipv4OptInvalidLen,
            true,
        ),
        c(
            "ipv4 cipso tag 0",
            e4opts(&[0x86, 0x0a, 0, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0]),
            E::Ipv4OptMalformed,
            true,
        ),
        c(
            "ipv4 opt dup",
            e4opts(&[
                0x07, 0x07, 0x04, 0, 0, 0, 0, 0x07, 0x07, 0x04, 0, 0, 0, 0, 1, 1,
            ]),
            E::Ipv4OptDuplicate,
            false,
        ),
        c(
            "ipv4 opt unknown",
            e4opts(&[0x99, 0x04, 0, 0, 0, 0, 0, 0]),
            E::Ipv4OptInvalid,
            false,
        ),
        c(
            "ipv4 opt pad",
            e4opts(&[1, 1, 1, 0]),
            E::Ipv4OptPadRequired,
            false,
        ),
        c(
            "ipv4 opt eol",
            e4opts(&[1, 1, 1, 1, 1, 1, 1, 0x99]),
            E::Ipv4OptEolRequired,
            false,
        ),
        c("ipv4 icmpv6", e4(58, &[0; 8]), E::Ipv4Icmpv6, true),
        c(
            "ipv6 short",
            eth(0x86dd, &[0x60; 20]),
            E::Ipv6PktTooSmall,
            true,
        ),
        c(
            "ipv6 version",
            {
                let mut f = e6(17, &udp6());
                f[14] = 0x40;
                f
            },
            E::Ipv6WrongIpVersion,
            true,
        ),
        c(
            "ipv6 trunc",
            {
                let mut f = e6(17, &udp6());
                f[19] = 200;
                f
            },
            E::Ipv6TruncPkt,
            true,
        ),
        c(
            "ipv6 trunc exthdr",
            e6(0, &[17, 4, 1, 2, 0, 0, 0, 0]),
            E::Ipv6TruncExthdr,
            true,
        ),
        c(
            "ipv6 dupl fh",
            e6(
                44,
                &cat(&[&frag(44, 0, false, 1), &frag(17, 0, false, 1), &udp6()]),
            ),
            E::Ipv6ExthdrDuplFh,
            false,
        ),
        c(
            "ipv6 useless fh",
            e6(44, &cat(&[&frag(17, 0, false, 1), &udp6()])),
            E::Ipv6ExthdrUselessFh,
            false,
        ),
        c(
            "ipv6 frag len",
            e6(44, &cat(&[&frag(17, 0, true, 1), &[0; 5]])),
            E::Ipv6FragInvalidLength,
            false,
        ),
        c(
            "ipv6 fh reserved",
            e6(
                44,
                &cat(&[
                    &{
                        let mut f = frag(17, 0, false, 1);
                        f[1] = 1;
                        f
                    },
                    &udp6(),
                ]),
            ),
            E::Ipv6FhNonZeroReservedField,
            false,
        ),
        c(
            "ipv6 dupl rh",
            e6(43, &cat(&[&ext(43, &[2, 0]), &ext(17, &[2, 0]), &udp6()])),
            E::Ipv6ExthdrDuplRh,
            false,
        ),
        c(
            "ipv6 rh type 0",
            e6(43, &cat(&[&ext(17, &[0, 0]), &udp6()])),
            E::Ipv6RhType0,
            false,
        ),
        c(
            "ipv6 dupl hh",
            e6(
                0,
                &cat(&[
                    &ext(0, &[1, 4, 0, 0, 0, 0]),
                    &ext(17, &[1, 4, 0, 0, 0, 0]),
                    &udp6(),
                ]),
            ),
            E::Ipv6ExthdrDuplHh,
            false,
        ),
        c(
            "ipv6 dupl dh",
            e6(
                60,
                &cat(&[
                    &ext(60, &[1, 4, 0, 0, 0, 0]),
                    &ext(60, &[1, 4, 0, 0, 0, 0]),
                    &ext(17, &[1, 4, 0, 0, 0, 0]),
                    &udp6(),
                ]),
            ),
            E::Ipv6ExthdrDuplDh,
            false,
        ),
        c(
            "ipv6 dupl ah",
            e6(
                51,
                &cat(&[
                    &[51, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    &[17, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    &udp6(),
                ]),
            ),
            E::Ipv6ExthdrDuplAh,
            false,
        ),
        c(
            "ipv6 ah reserved",
            e6(51, &cat(&[&[17, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0], &udp6()])),
            E::Ipv6ExthdrAhResNotNull,
            false,
        ),
        c(
            "ipv6 optlen",
            e6(0, &cat(&[&ext(17, &[5, 9, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6ExthdrInvalidOptlen,
            true,
        ),
        c(
            "ipv6 hop unknown",
            e6(0, &cat(&[&ext(17, &[0x3e, 4, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6HopoptsUnknownOpt,
            false,
        ),
        c(
            "ipv6 hop padding",
            e6(0, &cat(&[&ext(17, &[1, 4, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6HopoptsOnlyPadding,
            false,
        ),
        c(
            "ipv6 dst unknown",
            e6(60, &cat(&[&ext(17, &[0x3e, 4, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6DstoptsUnknownOpt,
            false,
        ),
        c(
            "ipv6 dst padding",
            e6(60, &cat(&[&ext(17, &[0, 0, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6DstoptsOnlyPadding,
            false,
        ),
        c(
            "ipv6 zero padn",
            e6(60, &cat(&[&ext(17, &[1, 0, 0, 0, 0, 0]), &udp6()])),
            E::Ipv6ZeroLenPadn,
            false,
        ),
        c(
            "ipv6 none data",
            e6(59, &[1, 2, 3]),
            E::Ipv6DataAfterNoneHeader,
            false,
        ),
        c(
            "ipv6 unknown nh",
            e6(200, &[1, 2, 3]),
            E::Ipv6UnknownNextHeader,
            false,
        ),
        c("ipv6 icmpv4", e6(1, &[0; 8]), E::Ipv6Icmpv4, false),
        c(
            "4in6 small",
            e6(4, &[0x45; 10]),
            E::Ipv6Ipv4InIpv6TooSmall,
            true,
        ),
        c(
            "4in6 version",
            e6(4, &[0x65; 20]),
            E::Ipv6Ipv4InIpv6WrongVersion,
            true,
        ),
        c(
            "6in6 small",
            e6(41, &[0x60; 20]),
            E::Ipv6Ipv6InIpv6TooSmall,
            true,
        ),
        c(
            "6in6 version",
            e6(41, &[0x45; 40]),
            E::Ipv6Ipv6InIpv6WrongVersion,
            true,
        ),
        c("tcp short", e4(6, &[0; 10]), E::TcpPktTooSmall, true),
        c(
            "tcp hlen",
            e4(6, &tcp_raw(15, &[], 30)),
            E::TcpHlenTooSmall,
            true,
        ),
        c(
            "tcp optlen",
            e4(6, &tcp_raw(4, &[], 20)),
            E::TcpInvalidOptlen,
            true,
        ),
        c(
            "tcp opt len",
            e4(6, &tcp_raw(6, &[2, 0xff, 0, 0], 24)),
            E::TcpOptInvalidLen,
            true,
        ),
        c(
            "tcp mss len",
            e4(6, &tcp_raw(7, &[2, 5, 0, 0, 0, 1, 1, 1], 28)),
            E::TcpOptInvalidLen,
            false,
        ),
        c(
            "tcp opt dup",
            e4(6, &tcp_raw(7, &[2, 4, 5, 0xb4, 2, 4, 5, 0xb4], 28)),
            E::TcpOptDuplicate,
            false,
        ),
        c("udp short", e4(17, &[0; 4]), E::UdpHlenTooSmall, true),
        c(
            "udp pkt small",
            e4(17, &[0, 1, 0, 2, 0, 100, 0, 0, 1]),
            E::UdpPktTooSmall,
            true,
        ),
        c(
            "udp len",
            e4(17, &[0, 1, 0, 2, 0, 4, 0, 0, 1]),
            E::UdpLenInvalid,
            true,
        ),
        c("icmp4 short", e4(1, &[8, 0, 0]), E::Icmpv4PktTooSmall, true),
        c(
            "icmp4 type",
            e4(1, &icmp4(99, 0, [0; 4], b"")),
            E::Icmpv4UnknownType,
            false,
        ),
        c(
            "icmp4 code",
            e4(1, &icmp4(8, 1, [0; 4], b"")),
            E::Icmpv4UnknownCode,
            false,
        ),
        c(
            "icmp4 emb trunc",
            e4(1, &icmp4(3, 1, [0; 4], &[0x45; 10])),
            E::Icmpv4Ipv4TruncPkt,
            true,
        ),
        c(
            "icmp4 emb ver",
            e4(1, &icmp4(3, 1, [0; 4], &[0x65; 28])),
            E::Icmpv4Ipv4UnknownVer,
            true,
        ),
        c(
            "icmp6 short",
            e6(58, &[128, 0, 0]),
            E::Icmpv6PktTooSmall,
            true,
        ),
        c(
            "icmp6 type 0",
            icmp6_e(0, 0, b""),
            E::Icmpv6UnknownType,
            false,
        ),
        c(
            "icmp6 code",
            icmp6_e(128, 1, b""),
            E::Icmpv6UnknownCode,
            false,
        ),
        c(
            "icmp6 unassigned",
            icmp6_e(50, 0, b""),
            E::Icmpv6UnassignedType,
            false,
        ),
        c(
            "icmp6 experimental",
            icmp6_e(100, 0, b""),
            E::Icmpv6ExperimentationType,
            false,
        ),
        c(
            "icmp6 emb trunc",
            icmp6_e(1, 0, &[0x60; 20]),
            E::Icmpv6Ipv6TruncPkt,
            true,
        ),
        c(
            "icmp6 emb ver",
            icmp6_e(1, 0, &[0x45; 48]),
            E::Icmpv6Ipv6UnknownVersion,
            true,
        ),
        c(
            "icmp6 mld hl",
            icmp6_e(130, 0, &[0; 16]),
            E::Icmpv6MldMessageWithInvalidHl,
            false,
        ),
        c(
            "vlan short",
            eth(0x8100, &[0, 1]),
            E::VlanHeaderTooSmall,
            true,
        ),
        c(
            "vlan layers",
            eth(
                0x8100,
                &vlan(
                    1,
                    0x8100,
                    &vlan(2, 0x8100, &vlan(3, 0x8100, &vlan(4, 0x0800, &inner4()))),
                ),
            ),
            E::VlanTooManyLayers,
            true,
        ),
        c(
            "vlan type",
            eth(0x8100, &vlan(1, 0x1234, &[0; 20])),
            E::VlanUnknownType,
            false,
        ),
        c(
            "mpls short",
            eth(0x8847, &[0, 0, 0x01]),
            E::MplsHeaderTooSmall,
            true,
        ),
        c(
            "mpls no payload",
            mpls(&[(1000, true)], &[]),
            E::MplsPktTooSmall,
            true,
        ),
        c(
            "mpls pw small",
            mpls(&[(1000, true)], &[0; 10]),
            E::MplsPktTooSmall,
            true,
        ),
        c(
            "mpls router alert",
            mpls(&[(1, true)], &inner4()),
            E::MplsBadLabelRouterAlert,
            false,
        ),
        c(
            "mpls implicit null",
            mpls(&[(3, true)], &inner4()),
            E::MplsBadLabelImplicitNull,
            false,
        ),
        c(
            "mpls reserved",
            mpls(&[(7, true)], &inner4()),
            E::MplsBadLabelReserved,
            false,
        ),
        c(
            "mpls payload",
            mpls(&[(1000, true)], &[0x90; 30]),
            E::MplsUnknownPayloadType,
            true,
        ),
        c("ppp short", pptp(&[]), E::PppPktTooSmall, true),
        c(
            "ppp ip4 small",
            pptp(&[0xff, 0x03, 0x00, 0x21, 0x45, 0, 0]),
            E::PppIp4PktTooSmall,
            true,
        ),
        c(
            "ppp ip6 small",
            pptp(&[0xff, 0x03, 0x00, 0x57, 0x60, 0, 0]),
            E::PppIp6PktTooSmall,
            true,
        ),
        c(
            "ppp vju small",
            pptp(&[0xff, 0x03, 0x00, 0x2f, 0x45, 0, 0]),
            E::PppVjuPktTooSmall,
            true,
        ),
        c(
            "ppp wrong",
            pptp(&[0xff, 0x03, 0x12, 0x34, 0, 0]),
            E::PppWrongType,
            true,
        ),
        c(
            "ppp unsup",
            pptp(&[0xff, 0x03, 0xc0, 0x21, 1, 1, 0, 4]),
            E::PppUnsupProto,
            false,
        ),
        c(
            "pppoe short",
            eth(0x8864, &[0x11, 0, 0, 1]),
            E::PppoePktTooSmall,
            true,
        ),
        c(
            "pppoe disc short",
            eth(0x8863, &[0x11, 0x09]),
            E::PppoePktTooSmall,
            true,
        ),
        c(
            "pppoe code",
            eth(0x8863, &[0x11, 0x33, 0, 0, 0, 0]),
            E::PppoeWrongCode,
            false,
        ),
        c(
            "pppoe tags",
            eth(0x8863, &[0x11, 0x09, 0, 0, 0, 6, 1, 1, 0, 9, 0, 0]),
            E::PppoeMalformedTags,
            false,
        ),
        c("gre short", e4(47, &[0, 0]), E::GrePktTooSmall, true),
        c(
            "gre version",
            gre(0, 2, 0x0800, &inner4()),
            E::GreWrongVersion,
            true,
        ),
        c(
            "gre v0 recur",
            gre(0x01, 0, 0x0800, &inner4()),
            E::GreVersion0Recur,
            true,
        ),
        c(
            "gre v0 flags",
            gre(0, 0x08, 0x0800, &inner4()),
            E::GreVersion0Flags,
            true,
        ),
        c(
            "gre v0 big",
            gre(0xb0, 0, 0x0800, &[0; 6]),
            E::GreVersion0HdrTooBig,
            true,
        ),
        c(
            "gre v0 sre",
            gre(0x40, 0, 0x0800, &[0, 0, 0, 0, 0x08, 0x00, 0, 20, 1, 2]),
            E::GreVersion0MalformedSreHdr,
            true,
        ),
        c(
            "gre v1 csum",
            gre(0xa0, 1, 0x880b, &[0; 12]),
            E::GreVersion1Chksum,
            true,
        ),
        c(
            "gre v1 route",
            gre(0x60, 1, 0x880b, &[0; 12]),
            E::GreVersion1Route,
            true,
        ),
        c(
            "gre v1 ssr",
            gre(0x28, 1, 0x880b, &[0; 12]),
            E::GreVersion1Ssr,
            true,
        ),
        c(
            "gre v1 recur",
            gre(0x21, 1, 0x880b, &[0; 12]),
            E::GreVersion1Recur,
            true,
        ),
        c(
            "gre v1 flags",
            gre(0x20, 0x09, 0x880b, &[0; 12]),
            E::GreVersion1Flags,
            true,
        ),
        c(
            "gre v1 proto",
            gre(0x20, 1, 0x0800, &[0; 12]),
            E::GreVersion1WrongProtocol,
            true,
        ),
        c(
            "gre v1 key",
            gre(0x00, 1, 0x880b, &[0; 12]),
            E::GreVersion1NoKey,
            true,
        ),
        c(
            "gre v1 big",
            gre(0x30, 0x81, 0x880b, &[0; 6]),
            E::GreVersion1HdrTooBig,
            true,
        ),
        c("sctp short", e4(132, &[0; 8]), E::SctpPktTooSmall, true),
        c("esp short", e4(50, &[0; 4]), E::EspPktTooSmall, true),
        c(
            "vxlan payload",
            e4(
                17,
                &udp(
                    &A4,
                    &B4,
                    1,
                    4789,
                    &cat(&[&[8, 0, 0, 0, 0, 0, 1, 0], &eth(0x1234, &[0; 30])]),
                ),
            ),
            E::VxlanUnknownPayloadType,
            false,
        ),
        cl(
            "null short",
            LinkType::Null,
            vec![2, 0],
            E::LtnullPktTooSmall,
            true,
        ),
        cl(
            "null type",
            LinkType::Null,
            cat(&[&[7, 0, 0, 0], &inner4()]),
            E::LtnullUnsupportedType,
            false,
        ),
        cl(
            "sll short",
            LinkType::LinuxSll,
            vec![0; 10],
            E::SllPktTooSmall,
            true,
        ),
        cl(
            "sll2 short",
            LinkType::LinuxSll2,
            vec![0; 16],
            E::Sll2PktTooSmall,
            true,
        ),
        cl(
            "chdlc short",
            LinkType::CiscoHdlc,
            vec![0x0f, 0],
            E::ChdlcPktTooSmall,
            true,
        ),
        cl(
            "ppp link short",
            LinkType::Ppp,
            vec![0xff, 0x03],
            E::PppPktTooSmall,
            true,
        ),
        cl(
            "raw version",
            LinkType::Raw,
            vec![0x50; 40],
            E::IprawInvalidIpVersion,
            true,
        ),
    ];
    let erspan = |hdr: &[u8]| {
        gre(
            0x10,
            0,
            0x88be,
            &cat(&[&[0, 0, 0, 1], hdr, &eth(0x0800, &inner4())]),
        )
    };
    v.push(c(
        "erspan short",
        gre(0x10, 0, 0x88be, &[0, 0, 0, 1, 0x10]),
        E::ErspanHeaderTooSmall,
        true,
    ));
    v.push(c(
        "erspan version",
        erspan(&[0x20, 0, 0, 0, 0, 0, 0, 0]),
        E::ErspanUnsupportedVersion,
        true,
    ));
    v.push(c(
        "erspan vlans",
        eth(
            0x8100,
            &vlan(
                1,
                0x8100,
                &vlan(
                    2,
                    0x8100,
                    &vlan(3, 0x0800, &erspan(&[0x10, 9, 0, 0, 0, 0, 0, 0])[14..]),
                ),
            ),
        ),
        E::ErspanTooManyVlanLayers,
        true,
    ));
    // VN-Tag: 4 bytes of tag, then the ethertype (Suricata `DecodeVNTag`).
    v.push(c(
        "vntag too small",
        eth(0x8926, &[0, 0, 0, 0, 0x08]),
        E::VntagHeaderTooSmall,
        true,
    ));
    v.push(c(
        "vntag unknown type",
        eth(0x8926, &cat(&[&[0, 0, 0, 0, 0xff, 0x00], &inner4()])),
        E::VntagUnknownType,
        true,
    ));
    // DCE: 2 bytes then a whole Ethernet header must follow the outer ethertype.
    v.push(c(
        "dce too small",
        eth(
            0x8903,
            &[0x00, 0x20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08],
        ),
        E::DcePktTooSmall,
        true,
    ));
    // After an extension header the next header needs two bytes, even an upper-layer one:
    // a useless fragment header followed by one byte of "TCP".
    v.push(c(
        "ipv6 trunc exthdr after fh",
        e6(44, &cat(&[&frag(6, 0, false, 7), &[0]])),
        E::Ipv6TruncExthdr,
        true,
    ));
    v.push(c(
        "pppoe ppp ip4 small",
        pppoe_sess(&[0x00, 0x21], &[0x45; 5]),
        E::PppIp4PktTooSmall,
        true,
    ));
    v.push(c(
        "ipv6 dupl fh ok",
        e6(44, &cat(&[&frag(17, 0, false, 1), &udp6()])),
        E::Ipv6ExthdrUselessFh,
        false,
    ));
    v
}

fn run(link: LinkType, frame: &[u8], cfg: &DecodeConfig) -> (PacketMeta, DecodeStats) {
    let mut st = DecodeStats::default();
    let m = decode(link, frame, cfg, &mut st);
    (m, st)
}

#[test]
fn every_malformation_is_counted() {
    let cfg = DecodeConfig::default();
    for case in cases() {
        let (m, st) = run(case.link, &case.frame, &cfg);
        assert!(
            m.has_event(case.event),
            "{}: missing {:?}, got {:?}",
            case.name,
            case.event,
            m.events.iter().collect::<Vec<_>>()
        );
        assert_eq!(st.event(case.event), 1, "{}: counter", case.name);
        assert_eq!(
            m.is_invalid(),
            case.invalid,
            "{}: invalid flag (events {:?})",
            case.name,
            m.events.iter().collect::<Vec<_>>()
        );
        assert_eq!(
            st.invalid,
            u64::from(case.invalid),
            "{}: decoder.invalid",
            case.name
        );
        assert_eq!(st.pkts, 1);
    }
}

#[test]
fn too_many_layers() {
    let cfg = DecodeConfig {
        max_layers: 3,
        ..Default::default()
    };
    let f = eth(0x8100, &vlan(1, 0x8100, &vlan(2, 0x0800, &inner4())));
    let (m, st) = run(LinkType::Ethernet, &f, &cfg);
    assert!(m.has_event(E::TooManyLayers) && m.is_invalid());
    assert_eq!(st.event(E::TooManyLayers), 1);
    let mut names = vec![];
    st.visit(&mut |n, v| {
        if v > 0 {
            names.push(n.to_string())
        }
    });
    assert!(
        names.contains(&"decoder.too_many_layers".to_string()),
        "{names:?}"
    );
    // The default limit lets the same frame through.
    let (m, _) = run(LinkType::Ethernet, &f, &DecodeConfig::default());
    assert!(m.events.is_empty());
}

/// Events the decoder itself never raises: capture, defrag, and encapsulations it only
/// counts or does not decode (Suricata also never raises `ipv4.opt_unknown` and
/// `udp.hlen_invalid` in 7.0.10).
const NOT_RAISED: &[E] = &[
    E::AfpacketTruncPkt,
    E::Ipv4OptUnknown,
    E::Ipv4FragPktTooLarge,
    E::Ipv4FragOverlap,
    E::Ipv4FragIgnored,
    E::Ipv6FragPktTooLarge,
    E::Ipv6FragOverlap,
    E::Ipv6FragIgnored,
    E::UdpHlenInvalid,
    E::GreVersion1MalformedSreHdr,
    E::Ieee8021ahHeaderTooSmall,
    E::GeneveUnknownPayloadType,
    E::NshHeaderTooSmall,
    E::NshUnsupportedVersion,
    E::NshBadHeaderLength,
    E::NshReservedType,
    E::NshUnsupportedType,
    E::NshUnknownPayload,
    E::Ipv6ExthdrDuplEh,
    E::TooManyLayers, // covered by `too_many_layers`
];

#[test]
fn table_covers_every_raisable_event() {
    let covered: Vec<E> = cases().iter().map(|c| c.event).collect();
    let missing: Vec<E> = E::ALL
        .iter()
        .copied()
        .filter(|e| !covered.contains(e) && !NOT_RAISED.contains(e))
        .collect();
    assert!(
        missing.is_empty(),
        "events without a test frame: {missing:?}"
    );
}

#[test]
fn truncations_of_valid_frames_never_panic() {
    let cfg = DecodeConfig {
        checksum_validation: true,
        ..Default::default()
    };
    for case in cases() {
        for n in 0..=case.frame.len() {
            let _ = run(case.link, &case.frame[..n], &cfg);
        }
    }
}
