//! UDP (with the VXLAN hand-off), plus the small SCTP and ESP decoders.

use super::bytes::{be16, be32};
use super::events::DecodeEvent as E;
use super::meta::{flags, tunnel_src, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// UDP header length.
pub const UDP_HEADER_LEN: usize = 8;
/// VXLAN header length.
pub const VXLAN_HEADER_LEN: usize = 8;

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
        if self.cfg.vxlan.enabled
            && self.cfg.vxlan.ports.contains(&dport)
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
