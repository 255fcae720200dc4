//! Encapsulations: GRE (v0, v1/PPTP), MPLS, PPPoE (session, discovery) and PPP.

use super::bytes::{be16, be32, u8_at};
use super::ethernet::{ethertype, ETHERNET_HEADER_LEN};
use super::events::DecodeEvent as E;
use super::meta::tunnel_src;
use super::Ctx;

/// GRE base header length.
pub const GRE_HEADER_LEN: usize = 4;
/// MPLS label stack entry length.
pub const MPLS_HEADER_LEN: usize = 4;
/// PPPoE header length (before the PPP protocol field).
pub const PPPOE_HEADER_LEN: usize = 6;

mod gre_bits {
    // First byte.
    pub const CSUM: u8 = 0x80;
    pub const ROUTE: u8 = 0x40;
    pub const KEY: u8 = 0x20;
    pub const SEQ: u8 = 0x10;
    pub const SSR: u8 = 0x08;
    pub const RECUR: u8 = 0x07;
    // Second byte.
    pub const ACK: u8 = 0x80;
    pub const FLAGS: u8 = 0x78;
    pub const VERSION: u8 = 0x07;
}

/// PPP protocol numbers.
pub mod ppp {
    /// IPv4.
    pub const IP: u16 = 0x0021;
    /// IPv6.
    pub const IPV6: u16 = 0x0057;
    /// Van Jacobson uncompressed TCP/IP.
    pub const VJ_UCOMP: u16 = 0x002f;
}

/// Valid PPP protocols Suricata does not decode (`ppp.unsup_proto`).
fn ppp_unsupported(p: u16) -> bool {
    matches!(
        p,
        0x002d
            | 0x002b
            | 0x0023
            | 0x0025
            | 0x0027
            | 0x0029
            | 0x0031
            | 0x0033
            | 0x0035
            | 0x0201
            | 0x0231
            | 0x0233
            | 0x0281
            | 0x0283
            | 0x8021
            | 0x8023
            | 0x8025
            | 0x8027
            | 0x8029
            | 0x802b
            | 0x8033
            | 0x8035
            | 0x8057
            | 0x8281
            | 0xc021
            | 0xc023
            | 0xc025
            | 0xc223
    )
}

impl Ctx<'_, '_> {
    /// GRE packet at `off..end` (Suricata `DecodeGRE`).
    pub(crate) fn gre(&mut self, off: usize, end: usize) {
        self.stats.gre += 1;
        if !self.layer() {
            return;
        }
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < GRE_HEADER_LEN {
            return self.inv(E::GrePktTooSmall);
        }
        let (b0, b1) = (u8_at(d, off), u8_at(d, off + 1));
        let ptype = be16(d, off + 2);
        let mut hlen = GRE_HEADER_LEN;
        match b1 & gre_bits::VERSION {
            0 => {
                if b0 & gre_bits::RECUR != 0 {
                    return self.inv(E::GreVersion0Recur);
                }
                if b1 & gre_bits::FLAGS != 0 {
                    return self.inv(E::GreVersion0Flags);
                }
                if b0 & gre_bits::KEY != 0 {
                    hlen += 4;
                }
                if b0 & gre_bits::SEQ != 0 {
                    hlen += 4;
                }
                if b0 & (gre_bits::CSUM | gre_bits::ROUTE) != 0 {
                    hlen += 4;
                }
                if hlen > len {
                    return self.inv(E::GreVersion0HdrTooBig);
                }
                if b0 & gre_bits::ROUTE != 0 {
                    // Source route entries: af (2), offset (1), length (1), data.
                    loop {
                        if hlen + 4 > len {
                            return self.inv(E::GreVersion0MalformedSreHdr);
                        }
                        let af = be16(d, off + hlen);
                        let sre_len = usize::from(u8_at(d, off + hlen + 3));
                        hlen += 4;
                        if af == 0 && sre_len == 0 {
                            break;
                        }
                        hlen += sre_len;
                        if hlen > len {
                            return self.inv(E::GreVersion0MalformedSreHdr);
                        }
                    }
                }
            }
            1 => {
                let checks = [
                    (b0 & gre_bits::CSUM != 0, E::GreVersion1Chksum),
                    (b0 & gre_bits::ROUTE != 0, E::GreVersion1Route),
                    (b0 & gre_bits::SSR != 0, E::GreVersion1Ssr),
                    (b0 & gre_bits::RECUR != 0, E::GreVersion1Recur),
                    (b1 & gre_bits::FLAGS != 0, E::GreVersion1Flags),
                    (ptype != ethertype::PPP, E::GreVersion1WrongProtocol),
                    (b0 & gre_bits::KEY == 0, E::GreVersion1NoKey),
                ];
                if let Some((_, e)) = checks.iter().find(|(bad, _)| *bad) {
                    return self.inv(*e);
                }
                hlen += 4;
                if b0 & gre_bits::SEQ != 0 {
                    hlen += 4;
                }
                if b1 & gre_bits::ACK != 0 {
                    hlen += 4;
                }
                if hlen > len {
                    return self.inv(E::GreVersion1HdrTooBig);
                }
            }
            _ => return self.inv(E::GreWrongVersion),
        }
        let inner = off + hlen;
        match ptype {
            ethertype::IPV4 => self.tunnel(tunnel_src::GRE, |cx| cx.ipv4(inner, end)),
            ethertype::IPV6 => self.tunnel(tunnel_src::GRE, |cx| cx.ipv6(inner, end)),
            ethertype::PPP => self.tunnel(tunnel_src::GRE, |cx| cx.ppp(inner, end)),
            ethertype::VLAN => self.tunnel(tunnel_src::GRE, |cx| cx.vlan(inner, end)),
            ethertype::TEB => self.tunnel(tunnel_src::GRE, |cx| cx.ethernet(inner, end)),
            // ERSPAN type II has the GRE sequence bit set; type I has no header.
            ethertype::ERSPAN2 if b0 & gre_bits::SEQ != 0 => {
                self.tunnel(tunnel_src::GRE, |cx| cx.erspan2(inner, end))
            }
            ethertype::ERSPAN2 => self.tunnel(tunnel_src::GRE, |cx| {
                cx.stats.erspan += 1;
                cx.ethernet(inner, end)
            }),
            _ => {}
        }
    }

    /// ERSPAN type II header (8 bytes) then the mirrored Ethernet frame.
    fn erspan2(&mut self, off: usize, end: usize) {
        self.stats.erspan += 1;
        if end.saturating_sub(off) < 8 {
            return self.inv(E::ErspanHeaderTooSmall);
        }
        let ver_vlan = be16(self.data, off);
        if ver_vlan >> 12 != 1 {
            return self.inv(E::ErspanUnsupportedVersion);
        }
        let vlan = ver_vlan & 0x0fff;
        if vlan > 0 {
            let idx = self.meta.vlan_count;
            if idx > 2 {
                return self.inv(E::ErspanTooManyVlanLayers);
            }
            if let Some(slot) = self.meta.vlan.get_mut(usize::from(idx)) {
                *slot = vlan;
            }
            self.meta.vlan_count = idx + 1;
        }
        self.ethernet(off + 8, end)
    }

    /// MPLS label stack at `off..end` (Suricata `DecodeMPLS`).
    pub(crate) fn mpls(&mut self, mut off: usize, end: usize) {
        self.stats.mpls += 1;
        if !self.layer() {
            return;
        }
        let d = self.data;
        let mut shim;
        loop {
            if end.saturating_sub(off) < MPLS_HEADER_LEN {
                return self.inv(E::MplsHeaderTooSmall);
            }
            shim = be32(d, off);
            off += MPLS_HEADER_LEN;
            if shim & 0x100 != 0 {
                break;
            }
        }
        match shim >> 12 {
            0 => return self.ipv4(off, end),
            1 => {
                self.non_ip = true;
                return self.ev(E::MplsBadLabelRouterAlert);
            }
            2 => return self.ipv6(off, end),
            3 => {
                self.non_ip = true;
                return self.ev(E::MplsBadLabelImplicitNull);
            }
            l if l < 16 => {
                self.non_ip = true;
                return self.ev(E::MplsBadLabelReserved);
            }
            _ => {}
        }
        if off >= end {
            return self.inv(E::MplsPktTooSmall);
        }
        // Best guess at the payload, as Suricata does.
        match u8_at(d, off) >> 4 {
            4 => self.ipv4(off, end),
            6 => self.ipv6(off, end),
            0 => {
                // Ethernet pseudowire with a 4-byte control word.
                if end - off < 4 + ETHERNET_HEADER_LEN {
                    return self.inv(E::MplsPktTooSmall);
                }
                self.ethernet(off + 4, end)
            }
            _ => self.inv(E::MplsUnknownPayloadType),
        }
    }

    /// PPPoE session frame at `off..end`.
    pub(crate) fn pppoe_session(&mut self, off: usize, end: usize) {
        self.stats.pppoe += 1;
        if !self.layer() {
            return;
        }
        let d = self.data;
        if end.saturating_sub(off) < PPPOE_HEADER_LEN + 1 {
            return self.inv(E::PppoePktTooSmall);
        }
        if u8_at(d, off + 1) != 0 {
            self.ev(E::PppoeWrongCode);
        }
        let plen = usize::from(be16(d, off + 4));
        let body = off + PPPOE_HEADER_LEN;
        let end = end.min(body + plen);
        // Protocol field: 1 byte when compressed (odd first byte), else 2.
        let first = u8_at(d, body);
        let (proto, hl) = if first & 1 == 1 {
            (u16::from(first), 1)
        } else {
            if end.saturating_sub(body) < 2 {
                return self.inv(E::PppoePktTooSmall);
            }
            (be16(d, body), 2)
        };
        self.ppp_payload(proto, body + hl, end);
    }

    /// PPPoE discovery frame: validated and counted, no payload to decode.
    pub(crate) fn pppoe_discovery(&mut self, off: usize, end: usize) {
        self.stats.pppoe += 1;
        self.non_ip = true;
        let d = self.data;
        if end.saturating_sub(off) < PPPOE_HEADER_LEN {
            return self.inv(E::PppoePktTooSmall);
        }
        if !matches!(u8_at(d, off + 1), 0x09 | 0x07 | 0x19 | 0x65 | 0xa7) {
            return self.ev(E::PppoeWrongCode);
        }
        let plen = usize::from(be16(d, off + 4));
        let mut t = off + PPPOE_HEADER_LEN;
        let tend = end.min(t + plen);
        if t + plen > end {
            return self.ev(E::PppoeMalformedTags);
        }
        while t < tend {
            if tend - t < 4 {
                return self.ev(E::PppoeMalformedTags);
            }
            let tl = usize::from(be16(d, t + 2));
            t += 4 + tl;
            if t > tend {
                return self.ev(E::PppoeMalformedTags);
            }
        }
    }

    /// A PPP frame (address/control optional) at `off..end`, as carried by PPTP GRE.
    pub(crate) fn ppp(&mut self, mut off: usize, end: usize) {
        self.stats.ppp += 1;
        let d = self.data;
        if end.saturating_sub(off) >= 2 && u8_at(d, off) == 0xff && u8_at(d, off + 1) == 0x03 {
            off += 2;
        }
        let left = end.saturating_sub(off);
        if left < 1 {
            return self.inv(E::PppPktTooSmall);
        }
        let first = u8_at(d, off);
        let (proto, hl) = if first & 1 == 1 {
            (u16::from(first), 1)
        } else if left < 2 {
            return self.inv(E::PppPktTooSmall);
        } else {
            (be16(d, off), 2)
        };
        self.ppp_payload(proto, off + hl, end);
    }

    /// Dispatches a PPP protocol (Suricata `DecodePPP` checks).
    fn ppp_payload(&mut self, proto: u16, off: usize, end: usize) {
        let left = end.saturating_sub(off);
        match proto {
            ppp::IP => {
                if left < 20 {
                    return self.inv(E::PppIp4PktTooSmall);
                }
                self.ipv4(off, end)
            }
            ppp::IPV6 => {
                if left < 40 {
                    return self.inv(E::PppIp6PktTooSmall);
                }
                self.ipv6(off, end)
            }
            ppp::VJ_UCOMP => {
                if left < 20 {
                    return self.inv(E::PppVjuPktTooSmall);
                }
                // The IPv4 protocol byte carries a VJ slot id: decode the IP header only.
                self.non_ip = true;
            }
            p if ppp_unsupported(p) => {
                self.non_ip = true;
                self.ev(E::PppUnsupProto)
            }
            _ => self.inv(E::PppWrongType),
        }
    }
}
