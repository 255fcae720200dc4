//! IPv6: view, extension-header iterator and decoding (Suricata `DecodeIPV6ExtHdrs`
//! semantics and event names).

use super::bytes::{addr16, array, be16, be32, u8_at};
use super::events::DecodeEvent as E;
use super::meta::{flags, tunnel_src, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// IPv6 fixed header length.
pub const IPV6_HEADER_LEN: usize = 40;

mod field {
    pub const VER_TC_FLOW: usize = 0;
    pub const PLEN: usize = 4;
    pub const NH: usize = 6;
    pub const HLIM: usize = 7;
    pub const SRC: usize = 8;
    pub const DST: usize = 24;
}

/// Zero-copy view of an IPv6 header (and what follows).
#[derive(Clone, Copy, Debug)]
pub struct Ipv6<'a> {
    buf: &'a [u8],
}

impl<'a> Ipv6<'a> {
    /// Wraps `buf` without checks.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Ipv6 { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Ipv6 { buf };
        v.check_len().then_some(v)
    }

    /// The view at the meta's L3 offset when the innermost IP header is IPv6.
    pub fn from_meta(meta: &PacketMeta, data: &'a [u8]) -> Option<Self> {
        if meta.ip_version() != 6 {
            return None;
        }
        Self::new_checked(data.get(meta.l3()?..)?)
    }

    /// Version 6 and the buffer holds header + payload length.
    pub fn check_len(&self) -> bool {
        self.buf.len() >= IPV6_HEADER_LEN
            && self.version() == 6
            && self.buf.len() >= IPV6_HEADER_LEN + usize::from(self.payload_len())
    }

    /// Version nibble.
    pub fn version(&self) -> u8 {
        u8_at(self.buf, field::VER_TC_FLOW) >> 4
    }

    /// Traffic class.
    pub fn traffic_class(&self) -> u8 {
        ((be16(self.buf, field::VER_TC_FLOW) >> 4) & 0xff) as u8
    }

    /// Flow label.
    pub fn flow_label(&self) -> u32 {
        be32(self.buf, field::VER_TC_FLOW) & 0x000f_ffff
    }

    /// Payload length.
    pub fn payload_len(&self) -> u16 {
        be16(self.buf, field::PLEN)
    }

    /// Next header of the fixed header.
    pub fn next_header(&self) -> u8 {
        u8_at(self.buf, field::NH)
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        u8_at(self.buf, field::HLIM)
    }

    /// Source address.
    pub fn src(&self) -> std::net::Ipv6Addr {
        array::<16>(self.buf, field::SRC).into()
    }

    /// Destination address.
    pub fn dst(&self) -> std::net::Ipv6Addr {
        array::<16>(self.buf, field::DST).into()
    }

    /// Bytes after the fixed header, bounded by the payload length.
    pub fn payload(&self) -> &'a [u8] {
        let end = IPV6_HEADER_LEN + usize::from(self.payload_len());
        self.buf.get(IPV6_HEADER_LEN..end).unwrap_or(&[])
    }

    /// Iterates the extension-header chain.
    pub fn ext_headers(&self) -> ExtHeaders<'a> {
        ExtHeaders {
            nh: self.next_header(),
            buf: self.payload(),
        }
    }
}

/// One IPv6 extension header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtHeader<'a> {
    /// Its protocol number (0 hop-by-hop, 43 routing, 44 fragment, 51 AH, 60 destination
    /// options, 135/139/140 mobility/HIP/shim6).
    pub kind: u8,
    /// The whole header (next-header byte first).
    pub data: &'a [u8],
}

impl ExtHeader<'_> {
    /// The next header field.
    pub fn next_header(&self) -> u8 {
        u8_at(self.data, 0)
    }

    /// Fragment header: offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be16(self.data, 2) >> 3
    }

    /// Fragment header: M flag.
    pub fn frag_more(&self) -> bool {
        be16(self.data, 2) & 1 != 0
    }

    /// Fragment header: identification.
    pub fn frag_id(&self) -> u32 {
        be32(self.data, 4)
    }

    /// Routing header: routing type.
    pub fn routing_type(&self) -> u8 {
        u8_at(self.data, 2)
    }
}

/// Length of the extension header `kind` starting at `h`, if `kind` is one.
pub(crate) fn ext_len(kind: u8, h: &[u8]) -> Option<usize> {
    let l = usize::from(u8_at(h, 1));
    match kind {
        proto::HOPOPTS
        | proto::DSTOPTS
        | proto::ROUTING
        | proto::MH
        | proto::HIP
        | proto::SHIM6 => Some((l + 1) * 8),
        proto::FRAGMENT => Some(8),
        // AH: payload length in 4-byte units, minus 2.
        proto::AH => Some(12 + l.saturating_sub(1) * 4),
        _ => None,
    }
}

/// Next-header values Suricata's IPv6 decoder hands to its extension-header walk.
fn is_exthdr(nh: u8) -> bool {
    matches!(
        nh,
        proto::HOPOPTS
            | proto::ROUTING
            | proto::FRAGMENT
            | proto::DSTOPTS
            | proto::AH
            | proto::ESP
            | proto::MH
            | proto::HIP
            | proto::SHIM6
    )
}

/// Iterator over the extension headers; stops at the upper layer or a truncated header.
/// [`ExtHeaders::upper`] then tells the upper-layer protocol and its offset.
#[derive(Clone, Debug)]
pub struct ExtHeaders<'a> {
    nh: u8,
    buf: &'a [u8],
}

impl<'a> ExtHeaders<'a> {
    /// Next header after the headers walked so far, and the bytes that follow.
    pub fn upper(&self) -> (u8, &'a [u8]) {
        (self.nh, self.buf)
    }
}

impl<'a> Iterator for ExtHeaders<'a> {
    type Item = ExtHeader<'a>;

    fn next(&mut self) -> Option<ExtHeader<'a>> {
        let kind = self.nh;
        let len = ext_len(kind, self.buf)?;
        if self.buf.len() < 2 || len > self.buf.len() {
            return None;
        }
        let data = self.buf.get(..len)?;
        self.nh = u8_at(data, 0);
        self.buf = self.buf.get(len..).unwrap_or(&[]);
        Some(ExtHeader { kind, data })
    }
}

/// Hop-by-hop / destination option types.
mod opt6 {
    pub const PAD1: u8 = 0x00;
    pub const PADN: u8 = 0x01;
    pub const RA: u8 = 0x05;
    pub const JUMBO: u8 = 0xc2;
    pub const HAO: u8 = 0xc9;
}

impl Ctx<'_, '_> {
    /// IPv6 packet at `off..end`.
    pub(crate) fn ipv6(&mut self, off: usize, end: usize) {
        self.stats.ipv6 += 1;
        if !self.layer() {
            return;
        }
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < IPV6_HEADER_LEN {
            self.inv(E::Ipv6PktTooSmall);
            return;
        }
        if u8_at(d, off) >> 4 != 6 {
            self.inv(E::Ipv6WrongIpVersion);
            return;
        }
        let plen = usize::from(be16(d, off + field::PLEN));
        if len < IPV6_HEADER_LEN + plen {
            self.inv(E::Ipv6TruncPkt);
            return;
        }
        let nh = u8_at(d, off + field::NH);
        let m = &mut self.meta;
        m.kind = PacketKind::Ip;
        m.l3_off = off as u16;
        m.flags &= !(flags::DF
            | flags::MF
            | flags::RF
            | flags::FRAGMENT
            | flags::IPV6_FRAG_HDR
            | flags::IPV4_CSUM_BAD
            | flags::IP_OPTS);
        m.flags |= flags::IPV6;
        m.src = addr16(d, off + field::SRC, 16);
        m.dst = addr16(d, off + field::DST, 16);
        m.tos = ((be16(d, off) >> 4) & 0xff) as u8;
        m.ttl = u8_at(d, off + field::HLIM);
        m.ip_id = 0;
        m.frag_off = 0;
        m.proto = nh;
        self.ipv6_chain(nh, off + IPV6_HEADER_LEN, off + IPV6_HEADER_LEN + plen);
    }

    /// Walks the next-header chain from `nh` at `off..end`.
    fn ipv6_chain(&mut self, mut nh: u8, mut off: usize, end: usize) {
        let d = self.data;
        // Seen: hop-by-hop, routing, AH, fragment; destination options counted (max 2).
        let (mut hh, mut rh, mut ah, mut fh, mut dstopts) = (false, false, false, false, 0u8);
        // The IPv6 header's own next header goes straight to the upper layer; from the
        // first extension header on, Suricata's extension-header walk wants two bytes of
        // whatever comes next (`ipv6.trunc_exthdr`), the upper-layer header included.
        let mut in_exthdrs = false;
        loop {
            let plen = end.saturating_sub(off);
            if nh == proto::NONE {
                self.meta.proto = nh;
                if plen > 0 {
                    self.ev(E::Ipv6DataAfterNoneHeader);
                }
                return;
            }
            in_exthdrs |= is_exthdr(nh);
            if in_exthdrs && plen < 2 {
                // The protocol stays the last extension header's, as in Suricata.
                return self.inv(E::Ipv6TruncExthdr);
            }
            self.meta.proto = nh;
            match nh {
                proto::TCP => return self.tcp(off, end),
                proto::UDP => return self.udp(off, end),
                proto::ICMPV6 => return self.icmpv6(off, end),
                proto::SCTP => return self.sctp(off, end),
                proto::ESP => return self.esp(off, end),
                proto::GRE => return self.gre(off, end),
                proto::IPIP => {
                    if plen < 20 {
                        return self.inv(E::Ipv6Ipv4InIpv6TooSmall);
                    }
                    if u8_at(d, off) >> 4 != 4 {
                        return self.inv(E::Ipv6Ipv4InIpv6WrongVersion);
                    }
                    self.stats.ipv4_in_ipv6 += 1;
                    return self.tunnel(tunnel_src::IPV6, |cx| cx.ipv4(off, end));
                }
                proto::IPV6 => {
                    if plen < IPV6_HEADER_LEN {
                        return self.inv(E::Ipv6Ipv6InIpv6TooSmall);
                    }
                    if u8_at(d, off) >> 4 != 6 {
                        return self.inv(E::Ipv6Ipv6InIpv6WrongVersion);
                    }
                    self.stats.ipv6_in_ipv6 += 1;
                    return self.tunnel(tunnel_src::IPV6, |cx| cx.ipv6(off, end));
                }
                proto::ICMP => return self.ev(E::Ipv6Icmpv4),
                _ => {}
            }
            let Some(hlen) = ext_len(nh, d.get(off..end).unwrap_or(&[])) else {
                return self.ev(E::Ipv6UnknownNextHeader);
            };
            if plen < 2 || hlen > plen {
                return self.inv(E::Ipv6TruncExthdr);
            }
            self.meta.flags |= flags::IP_OPTS;
            let next = u8_at(d, off);
            match nh {
                proto::ROUTING => {
                    if rh {
                        self.ev(E::Ipv6ExthdrDuplRh);
                    } else {
                        rh = true;
                        if u8_at(d, off + 2) == 0 {
                            self.ev(E::Ipv6RhType0);
                        }
                    }
                }
                proto::HOPOPTS | proto::DSTOPTS => {
                    let dup = if nh == proto::HOPOPTS {
                        let dup = hh;
                        hh = true;
                        if dup {
                            self.ev(E::Ipv6ExthdrDuplHh);
                        }
                        dup
                    } else {
                        dstopts += 1;
                        if dstopts > 2 {
                            self.ev(E::Ipv6ExthdrDuplDh);
                        }
                        dstopts > 2
                    };
                    if !dup {
                        self.ipv6_options(nh == proto::HOPOPTS, off + 2, off + hlen);
                    }
                }
                proto::FRAGMENT => {
                    if u8_at(d, off + 1) != 0 {
                        self.ev(E::Ipv6FhNonZeroReservedField);
                    }
                    if fh {
                        self.ev(E::Ipv6ExthdrDuplFh);
                    } else {
                        fh = true;
                        let fo = be16(d, off + 2);
                        let more = fo & 1 != 0;
                        let m = &mut self.meta;
                        m.flags |= flags::IPV6_FRAG_HDR;
                        m.frag_off = fo >> 3;
                        m.ip_id = be32(d, off + 4);
                        if more {
                            m.flags |= flags::MF;
                        }
                        if !more && fo >> 3 == 0 {
                            self.ev(E::Ipv6ExthdrUselessFh);
                        } else {
                            if more && plen % 8 != 0 {
                                self.ev(E::Ipv6FragInvalidLength);
                            }
                            // The rest is parsed after reassembly.
                            self.meta.flags |= flags::FRAGMENT;
                            return;
                        }
                    }
                }
                proto::AH => {
                    if be16(d, off + 2) != 0 {
                        self.ev(E::Ipv6ExthdrAhResNotNull);
                    }
                    if ah {
                        self.ev(E::Ipv6ExthdrDuplAh);
                    }
                    ah = true;
                }
                _ => {} // MH, HIP, SHIM6: skipped.
            }
            nh = next;
            off += hlen;
        }
    }

    /// Hop-by-hop or destination options at `off..end` (after next-header and length).
    fn ipv6_options(&mut self, hop: bool, off: usize, end: usize) {
        let opts = self.data.get(off..end).unwrap_or(&[]);
        let (mut padn, mut other) = (0u16, 0u16);
        let mut i = 0usize;
        while i < opts.len() {
            let t = u8_at(opts, i);
            if t == opt6::PAD1 {
                padn += 1;
                i += 1;
                continue;
            }
            if i + 1 >= opts.len() {
                self.inv(E::Ipv6ExthdrInvalidOptlen);
                break;
            }
            let olen = usize::from(u8_at(opts, i + 1));
            if i + 1 + olen > opts.len() {
                self.inv(E::Ipv6ExthdrInvalidOptlen);
                break;
            }
            match t {
                opt6::PADN => {
                    padn += 1;
                    if olen == 0 {
                        self.ev(E::Ipv6ZeroLenPadn);
                    }
                }
                opt6::RA | opt6::JUMBO | opt6::HAO => {
                    let need = match t {
                        opt6::RA => 2,
                        opt6::JUMBO => 4,
                        _ => 16,
                    };
                    if olen < need {
                        self.inv(E::Ipv6ExthdrInvalidOptlen);
                        break;
                    }
                    if t != opt6::JUMBO {
                        other += 1;
                    }
                }
                _ => {
                    self.ev(if hop {
                        E::Ipv6HopoptsUnknownOpt
                    } else {
                        E::Ipv6DstoptsUnknownOpt
                    });
                    other += 1;
                }
            }
            i += olen + 2;
        }
        if padn > 0 && other == 0 {
            self.ev(if hop {
                E::Ipv6HopoptsOnlyPadding
            } else {
                E::Ipv6DstoptsOnlyPadding
            });
        }
    }
}
