//! UDP (with the VXLAN hand-off), plus the small SCTP and ESP decoders.

use super::bytes::{be16, be32};
use super::events::DecodeEvent as E;
use super::meta::{flags, tunnel_src, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// UDP header length.
pub const UDP_HEADER_LEN: usize = 8;
/// VXLAN header length.
pub const VXLAN_HEADER_LEN: usize = 8;
/// Geneve fixed header length.
pub const GENEVE_HEADER_LEN: usize = 8;
/// Teredo origin indication length.
const TEREDO_ORIGIN_LEN: usize = 8;
/// IPv6 header length.
const IPV6_HEADER_LEN: usize = 40;

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LEN: usize = 4;
    pub const CHECKSUM: usize = 6;
}

/// Zero-copy view of a UDP header (and its datagram).
#[derive(Clone, Copy, Debug)]
pub struct Udp<'a> {
    buf: &'a [u8],
}

impl<'a> Udp<'a> {
    /// Wraps `buf` without checks.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Udp { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Udp { buf };
        v.check_len().then_some(v)
    }

    /// The datagram of a decoded UDP packet.
    pub fn from_meta(meta: &PacketMeta, data: &'a [u8]) -> Option<Self> {
        if meta.kind != PacketKind::L4 || meta.proto != proto::UDP {
            return None;
        }
        let end = meta.payload_off as usize + meta.payload_len as usize;
        Self::new_checked(data.get(meta.l4()?..end)?)
    }

    /// Buffer ≥ 8 bytes, length field ≥ 8 and ≤ the buffer.
    pub fn check_len(&self) -> bool {
        let l = usize::from(self.len());
        self.buf.len() >= UDP_HEADER_LEN && l >= UDP_HEADER_LEN && l <= self.buf.len()
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buf, field::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buf, field::DST_PORT)
    }

    /// Length field.
    pub fn len(&self) -> u16 {
        be16(self.buf, field::LEN)
    }

    /// Whether the length field says "header only".
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= UDP_HEADER_LEN
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buf, field::CHECKSUM)
    }

    /// Datagram payload (bounded by the length field).
    pub fn payload(&self) -> &'a [u8] {
        self.buf
            .get(UDP_HEADER_LEN..usize::from(self.len()))
            .unwrap_or(&[])
    }
}

impl Ctx<'_, '_> {
    /// UDP datagram at `off..end`.
    pub(crate) fn udp(&mut self, off: usize, end: usize) {
        self.stats.udp += 1;
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < UDP_HEADER_LEN {
            return self.inv(E::UdpHlenTooSmall);
        }
        let ulen = usize::from(be16(d, off + field::LEN));
        if len < ulen {
            return self.inv(E::UdpPktTooSmall);
        }
        if ulen < UDP_HEADER_LEN {
            return self.inv(E::UdpLenInvalid);
        }
        let dport = be16(d, off + field::DST_PORT);
        let m = &mut self.meta;
        m.kind = PacketKind::L4;
        m.l4_off = off as u16;
        m.payload_off = (off + UDP_HEADER_LEN) as u16;
        m.payload_len = (ulen - UDP_HEADER_LEN) as u16;
        m.sport = be16(d, off + field::SRC_PORT);
        m.dport = dport;
        if self.cfg.checksum_validation {
            let zero = be16(d, off + field::CHECKSUM) == 0;
            if zero && !self.meta.has(flags::IPV6) {
                // IPv4: checksum not used.
                self.meta.flags |= flags::L4_CSUM_CHECKED;
            } else {
                self.l4_checksum(proto::UDP, off, off + ulen);
            }
        }
        let vx = off + UDP_HEADER_LEN;
        let sport = be16(d, off + field::SRC_PORT);
        // Suricata's order: Teredo, Geneve, then VXLAN (`DecodeUDP`); each on its ports,
        // source or destination.
        let on = |ports: &[u16]| ports.contains(&sport) || ports.contains(&dport);
        let t = &self.cfg.teredo;
        if t.enabled && (t.ports.is_empty() || on(&t.ports)) && self.teredo(vx, off + ulen) {
            return;
        }
        let g = &self.cfg.geneve;
        if g.enabled && on(&g.ports[..g.ports.len().min(4)]) && self.geneve(vx, off + ulen) {
            return;
        }
        if self.cfg.vxlan.enabled
            && on(&self.cfg.vxlan.ports)
            && ulen >= UDP_HEADER_LEN + VXLAN_HEADER_LEN + 14
            && d.get(vx).is_some_and(|f| f & 0x08 != 0)
        {
            let eth = vx + VXLAN_HEADER_LEN;
            if self.vxlan_inner_ok(eth) {
                self.stats.vxlan += 1;
                let inner_end = off + ulen;
                // Like Suricata, the inner Ethernet header is not counted as a frame:
                // its payload is decoded directly.
                self.tunnel(tunnel_src::VXLAN, |cx| {
                    cx.meta.l2_off = eth as u16;
                    let et = be16(cx.data, eth + 12);
                    cx.network(et, eth + 14, inner_end);
                });
            } else {
                self.ev(E::VxlanUnknownPayloadType);
            }
        }
    }

    /// Suricata's `DecodeTeredo` on the UDP payload at `off..end`: an optional origin
    /// indication, then an IPv6 header whose payload length fills the rest exactly (hop
    /// limit not 0, no bare hop-by-hop header): the IPv6 packet is a tunnel packet. Returns
    /// whether it was one.
    fn teredo(&mut self, off: usize, end: usize) -> bool {
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < IPV6_HEADER_LEN {
            return false;
        }
        let mut start = off;
        if d.get(off) == Some(&0) {
            if d.get(off + 1) != Some(&0) || len < TEREDO_ORIGIN_LEN + IPV6_HEADER_LEN {
                return false;
            }
            start += TEREDO_ORIGIN_LEN;
        }
        if d.get(start).map(|b| b >> 4) != Some(6) {
            return false;
        }
        let plen = usize::from(be16(d, start + 4));
        let (nh, hlim) = (
            d.get(start + 6).copied().unwrap_or(0),
            d.get(start + 7).copied().unwrap_or(0),
        );
        if hlim == 0 || (nh == 0 && plen < 8) || start + IPV6_HEADER_LEN + plen != end {
            return false;
        }
        self.stats.teredo += 1;
        self.tunnel(tunnel_src::TEREDO, |cx| cx.ipv6(start, end));
        true
    }

    /// Suricata's `DecodeGeneve` on the UDP payload at `off..end`: version 0, no reserved
    /// bits, options that add up to the header's option length; IPv4, IPv6 or Ethernet
    /// (transparent bridging) inside. Returns whether it was Geneve.
    fn geneve(&mut self, off: usize, end: usize) -> bool {
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < GENEVE_HEADER_LEN {
            return false;
        }
        let (vl, fl) = (d[off], d[off + 1]);
        let opt_len = usize::from(vl & 0x3f) * 4;
        let hdr = GENEVE_HEADER_LEN + opt_len;
        if len < hdr || vl >> 6 != 0 || fl & 0x3f != 0 || d[off + 7] != 0 {
            return false;
        }
        // The options must add up to the option length exactly.
        let mut rem = opt_len as isize;
        let mut p = off + GENEVE_HEADER_LEN;
        while rem > 0 {
            let one = 4 + usize::from(d.get(p + 3).copied().unwrap_or(0) & 0x1f) * 4;
            p += one;
            rem -= one as isize;
        }
        if rem != 0 {
            return false;
        }
        self.stats.geneve += 1;
        let inner = off + hdr;
        match be16(d, off + 2) {
            0x0800 | 0x86dd => {
                let et = be16(d, off + 2);
                self.tunnel(tunnel_src::GENEVE, |cx| {
                    cx.network(et, inner, end);
                });
            }
            0x6558 => {
                if end.saturating_sub(inner) >= 14 {
                    self.tunnel(tunnel_src::GENEVE, |cx| {
                        cx.meta.l2_off = inner as u16;
                        let et = be16(cx.data, inner + 12);
                        cx.network(et, inner + 14, end);
                    });
                }
            }
            0x0806 => {}
            _ => self.inv(E::GeneveUnknownPayloadType),
        }
        true
    }

    /// SCTP common header at `off..end`: ports only.
    pub(crate) fn sctp(&mut self, off: usize, end: usize) {
        self.stats.sctp += 1;
        let len = end.saturating_sub(off);
        if len < 12 {
            return self.inv(E::SctpPktTooSmall);
        }
        let d = self.data;
        let m = &mut self.meta;
        m.kind = PacketKind::L4;
        m.l4_off = off as u16;
        m.payload_off = (off + 12) as u16;
        m.payload_len = (len - 12) as u16;
        m.sport = be16(d, off);
        m.dport = be16(d, off + 2);
        m.l4_a = be32(d, off + 4); // verification tag
    }

    /// ESP header at `off..end`: SPI and sequence.
    pub(crate) fn esp(&mut self, off: usize, end: usize) {
        self.stats.esp += 1;
        let len = end.saturating_sub(off);
        if len < 8 {
            return self.inv(E::EspPktTooSmall);
        }
        let d = self.data;
        let m = &mut self.meta;
        m.kind = PacketKind::L4;
        m.l4_off = off as u16;
        m.payload_off = (off + 8) as u16;
        m.payload_len = (len - 8) as u16;
        m.l4_a = be32(d, off); // SPI
        m.l4_b = be32(d, off + 4); // sequence
    }
}
