//! IPv4: view, options iterator, decoding and option validation (RFC 791 and friends,
//! with Suricata's checks and event names).

use super::bytes::{addr16, array, be16, u8_at};
use super::checksum;
use super::events::DecodeEvent as E;
use super::meta::{flags, tunnel_src, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// Minimum IPv4 header length.
pub const IPV4_HEADER_LEN: usize = 20;

mod field {
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LEN: usize = 2;
    pub const ID: usize = 4;
    pub const FLAGS_FRAG: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTO: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
}

/// IPv4 option types with dedicated checks.
pub mod opt {
    /// End of option list.
    pub const EOL: u8 = 0x00;
    /// No operation.
    pub const NOP: u8 = 0x01;
    /// Record route.
    pub const RR: u8 = 0x07;
    /// Quick-start.
    pub const QS: u8 = 0x19;
    /// Timestamp.
    pub const TS: u8 = 0x44;
    /// Security.
    pub const SEC: u8 = 0x82;
    /// Loose source route.
    pub const LSRR: u8 = 0x83;
    /// Commercial IP security.
    pub const CIPSO: u8 = 0x86;
    /// Stream identifier.
    pub const SID: u8 = 0x88;
    /// Strict source route.
    pub const SSRR: u8 = 0x89;
    /// Router alert.
    pub const RTRALT: u8 = 0x94;
}

/// Zero-copy view of an IPv4 header (and what follows).
#[derive(Clone, Copy, Debug)]
pub struct Ipv4<'a> {
    buf: &'a [u8],
}

impl<'a> Ipv4<'a> {
    /// Wraps `buf` without checks.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Ipv4 { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Ipv4 { buf };
        v.check_len().then_some(v)
    }

    /// The view at the meta's L3 offset when the innermost IP header is IPv4.
    pub fn from_meta(meta: &PacketMeta, data: &'a [u8]) -> Option<Self> {
        if meta.ip_version() != 4 {
            return None;
        }
        Self::new_checked(data.get(meta.l3()?..)?)
    }

    /// Version 4, header length ≥ 20, total length ≥ header length, buffer ≥ total length.
    pub fn check_len(&self) -> bool {
        let hl = self.header_len();
        self.buf.len() >= IPV4_HEADER_LEN
            && self.version() == 4
            && hl >= IPV4_HEADER_LEN
            && self.total_len() as usize >= hl
            && self.buf.len() >= self.total_len() as usize
    }

    /// Version nibble.
    pub fn version(&self) -> u8 {
        u8_at(self.buf, field::VER_IHL) >> 4
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.buf, field::VER_IHL) & 0x0f) * 4
    }

    /// Type of service.
    pub fn tos(&self) -> u8 {
        u8_at(self.buf, field::TOS)
    }

    /// Total length.
    pub fn total_len(&self) -> u16 {
        be16(self.buf, field::LEN)
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        be16(self.buf, field::ID)
    }

    /// Reserved flag.
    pub fn rf(&self) -> bool {
        be16(self.buf, field::FLAGS_FRAG) & 0x8000 != 0
    }

    /// Don't-fragment flag.
    pub fn df(&self) -> bool {
        be16(self.buf, field::FLAGS_FRAG) & 0x4000 != 0
    }

    /// More-fragments flag.
    pub fn mf(&self) -> bool {
        be16(self.buf, field::FLAGS_FRAG) & 0x2000 != 0
    }

    /// Fragment offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be16(self.buf, field::FLAGS_FRAG) & 0x1fff
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        u8_at(self.buf, field::TTL)
    }

    /// Protocol.
    pub fn protocol(&self) -> u8 {
        u8_at(self.buf, field::PROTO)
    }

    /// Header checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buf, field::CHECKSUM)
    }

    /// Whether the header checksum is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::verify(self.buf.get(..self.header_len()).unwrap_or(&[]))
    }

    /// Source address.
    pub fn src(&self) -> std::net::Ipv4Addr {
        array::<4>(self.buf, field::SRC).into()
    }

    /// Destination address.
    pub fn dst(&self) -> std::net::Ipv4Addr {
        array::<4>(self.buf, field::DST).into()
    }

    /// The option bytes.
    pub fn options_bytes(&self) -> &'a [u8] {
        self.buf
            .get(IPV4_HEADER_LEN..self.header_len())
            .unwrap_or(&[])
    }

    /// Iterates the options.
    pub fn options(&self) -> Ipv4Options<'a> {
        Ipv4Options {
            buf: self.options_bytes(),
        }
    }

    /// Bytes from the end of the header to the total length.
    pub fn payload(&self) -> &'a [u8] {
        self.buf
            .get(self.header_len()..self.total_len() as usize)
            .unwrap_or(&[])
    }
}

/// One IPv4 option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Option<'a> {
    /// Option type.
    pub kind: u8,
    /// Option data (after type and length; empty for EOL/NOP).
    pub data: &'a [u8],
}

/// Iterator over IPv4 options; stops at EOL or at the first malformed length.
#[derive(Clone, Debug)]
pub struct Ipv4Options<'a> {
    buf: &'a [u8],
}

impl<'a> Iterator for Ipv4Options<'a> {
    type Item = Ipv4Option<'a>;

    fn next(&mut self) -> Option<Ipv4Option<'a>> {
        let (&kind, rest) = self.buf.split_first()?;
        match kind {
            opt::EOL => {
                self.buf = &[];
                Some(Ipv4Option { kind, data: &[] })
            }
            opt::NOP => {
                self.buf = rest;
                Some(Ipv4Option { kind, data: &[] })
            }
            _ => {
                let len = usize::from(*rest.first()?);
                if len < 2 || len > self.buf.len() {
                    self.buf = &[];
                    return None;
                }
                let data = self.buf.get(2..len).unwrap_or(&[]);
                self.buf = self.buf.get(len..).unwrap_or(&[]);
                Some(Ipv4Option { kind, data })
            }
        }
    }
}

/// Which option types were seen (bit per type slot), for duplicate detection.
fn opt_slot(kind: u8) -> Option<u16> {
    Some(match kind {
        opt::TS => 1,
        opt::RR => 1 << 1,
        opt::QS => 1 << 2,
        opt::SEC => 1 << 3,
        opt::LSRR => 1 << 4,
        opt::CIPSO => 1 << 5,
        opt::SID => 1 << 6,
        opt::SSRR => 1 << 7,
        opt::RTRALT => 1 << 8,
        _ => return None,
    })
}

/// Validates one known option (`o` = the whole option: type, len, data).
/// Returns the invalidating event, if any.
fn validate_option(kind: u8, o: &[u8]) -> Option<E> {
    let len = o.len();
    let data = o.get(2..).unwrap_or(&[]);
    match kind {
        opt::QS if len < 8 => Some(E::Ipv4OptInvalidLen),
        opt::SEC if len != 11 => Some(E::Ipv4OptInvalidLen),
        opt::SID | opt::RTRALT if len != 4 => Some(E::Ipv4OptInvalidLen),
        opt::RR | opt::LSRR | opt::SSRR => {
            if len < 3 {
                return Some(E::Ipv4OptInvalidLen);
            }
            let ptr = usize::from(*data.first()?);
            (ptr < 4 || ptr % 4 != 0 || ptr > len + 1).then_some(E::Ipv4OptMalformed)
        }
        opt::TS => {
            if len < 5 {
                return Some(E::Ipv4OptInvalidLen);
            }
            let ptr = usize::from(*data.first()?);
            if ptr < 5 {
                return Some(E::Ipv4OptMalformed);
            }
            // Suricata reads the flag from the 4th data byte (`data + 3`); kept for parity.
            let flag = u8_at(data, 3);
            let rec = if flag == 1 || flag == 3 { 8 } else { 4 };
            ((ptr - 5) % rec != 0 || ptr > len + 1).then_some(E::Ipv4OptMalformed)
        }
        opt::CIPSO => {
            if len < 10 {
                return Some(E::Ipv4OptInvalidLen);
            }
            // Tags after the 4-byte DOI.
            let mut tags = data.get(4..).unwrap_or(&[]);
            while !tags.is_empty() {
                if tags.len() < 2 {
                    return Some(E::Ipv4OptMalformed);
                }
                let ttype = u8_at(tags, 0);
                let tlen = usize::from(u8_at(tags, 1));
                if tlen > tags.len() {
                    return Some(E::Ipv4OptMalformed);
                }
                match ttype {
                    1 | 2 | 5 | 6 | 7 => {
                        if tlen < 4 || (ttype != 7 && u8_at(tags, 2) != 0) {
                            return Some(E::Ipv4OptMalformed);
                        }
                        tags = tags.get(tlen..).unwrap_or(&[]);
                    }
                    _ => return Some(E::Ipv4OptMalformed),
                }
            }
            None
        }
        _ => None,
    }
}

impl Ctx<'_, '_> {
    /// IPv4 packet at `off..end`.
    pub(crate) fn ipv4(&mut self, off: usize, end: usize) {
        self.stats.ipv4 += 1;
        if !self.layer() {
            return;
        }
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < IPV4_HEADER_LEN {
            self.inv(E::Ipv4PktTooSmall);
            return;
        }
        let b0 = u8_at(d, off);
        if b0 >> 4 != 4 {
            self.inv(E::Ipv4WrongIpVersion);
            return;
        }
        let hlen = usize::from(b0 & 0x0f) * 4;
        if hlen < IPV4_HEADER_LEN {
            self.inv(E::Ipv4HlenTooSmall);
            return;
        }
        let iplen = usize::from(be16(d, off + field::LEN));
        if iplen < hlen {
            self.inv(E::Ipv4IplenSmallerThanHlen);
            return;
        }
        if len < iplen {
            self.inv(E::Ipv4TruncPkt);
            return;
        }
        let ff = be16(d, off + field::FLAGS_FRAG);
        let proto = u8_at(d, off + field::PROTO);
        let m = &mut self.meta;
        m.kind = PacketKind::Ip;
        m.l3_off = off as u16;
        m.flags &= !(flags::IPV6
            | flags::DF
            | flags::MF
            | flags::RF
            | flags::FRAGMENT
            | flags::IPV6_FRAG_HDR
            | flags::IPV4_CSUM_BAD
            | flags::IP_OPTS);
        m.src = addr16(d, off + field::SRC, 4);
        m.dst = addr16(d, off + field::DST, 4);
        m.tos = u8_at(d, off + field::TOS);
        m.ttl = u8_at(d, off + field::TTL);
        m.ip_id = u32::from(be16(d, off + field::ID));
        m.proto = proto;
        m.frag_off = ff & 0x1fff;
        if ff & 0x8000 != 0 {
            m.flags |= flags::RF;
        }
        if ff & 0x4000 != 0 {
            m.flags |= flags::DF;
        }
        if ff & 0x2000 != 0 {
            m.flags |= flags::MF;
        }
        if !checksum::verify(d.get(off..off + hlen).unwrap_or(&[])) {
            m.flags |= flags::IPV4_CSUM_BAD;
        }
        if hlen > IPV4_HEADER_LEN {
            m.flags |= flags::IP_OPTS;
            self.ipv4_options(off + IPV4_HEADER_LEN, off + hlen);
        }
        let l4 = off + hlen;
        let l4_end = off + iplen;
        if ff & 0x3fff != 0 {
            // Offset > 0 or MF: a fragment, left to defrag.
            self.meta.flags |= flags::FRAGMENT;
            return;
        }
        match proto {
            proto::TCP => self.tcp(l4, l4_end),
            proto::UDP => self.udp(l4, l4_end),
            proto::ICMP => self.icmpv4(l4, l4_end),
            proto::GRE => self.gre(l4, l4_end),
            proto::SCTP => self.sctp(l4, l4_end),
            proto::ESP => self.esp(l4, l4_end),
            proto::IPIP => {
                self.stats.ipv4_in_ipv4 += 1;
                self.tunnel(tunnel_src::IPV4, |cx| cx.ipv4(l4, l4_end));
            }
            proto::IPV6 => {
                self.stats.ipv6_in_ipv4 += 1;
                self.tunnel(tunnel_src::IPV4, |cx| cx.ipv6(l4, l4_end));
            }
            proto::ICMPV6 => self.inv(E::Ipv4Icmpv6),
            _ => {}
        }
    }

    /// IPv4 options at `off..end` (Suricata `DecodeIPV4Options`).
    fn ipv4_options(&mut self, off: usize, end: usize) {
        let opts = self.data.get(off..end).unwrap_or(&[]);
        if opts.len() % 8 != 0 {
            self.ev(E::Ipv4OptPadRequired);
        }
        let mut seen: u16 = 0;
        let mut rest = opts;
        while let Some(&kind) = rest.first() {
            match kind {
                opt::EOL => break,
                opt::NOP => rest = rest.get(1..).unwrap_or(&[]),
                _ => {
                    if rest.len() < 2 {
                        self.ev(E::Ipv4OptEolRequired);
                        break;
                    }
                    let olen = usize::from(u8_at(rest, 1));
                    if olen > rest.len() || olen < 2 {
                        self.inv(E::Ipv4OptInvalidLen);
                        return;
                    }
                    let o = rest.get(..olen).unwrap_or(&[]);
                    match opt_slot(kind) {
                        Some(bit) if seen & bit != 0 => self.ev(E::Ipv4OptDuplicate),
                        Some(bit) => {
                            if let Some(e) = validate_option(kind, o) {
                                self.inv(e);
                                return;
                            }
                            seen |= bit;
                        }
                        None => self.ev(E::Ipv4OptInvalid),
                    }
                    rest = rest.get(olen..).unwrap_or(&[]);
                }
            }
        }
    }
}
