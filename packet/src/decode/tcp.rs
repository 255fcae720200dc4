//! TCP: view, options iterator and decoding (Suricata `DecodeTCP` checks).

use super::bytes::{be16, be32, u8_at};
use super::checksum;
use super::events::DecodeEvent as E;
use super::meta::{flags, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// Minimum TCP header length.
pub const TCP_HEADER_LEN: usize = 20;

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const DATA_OFF: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WINDOW: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
}

/// TCP flag bits.
pub mod tcp_flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// RST.
    pub const RST: u8 = 0x04;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// URG.
    pub const URG: u8 = 0x20;
    /// ECE.
    pub const ECE: u8 = 0x40;
    /// CWR.
    pub const CWR: u8 = 0x80;
}

/// Option kinds.
pub mod opt {
    /// End of options.
    pub const EOL: u8 = 0;
    /// No-op.
    pub const NOP: u8 = 1;
    /// Maximum segment size.
    pub const MSS: u8 = 2;
    /// Window scale.
    pub const WS: u8 = 3;
    /// SACK permitted.
    pub const SACKOK: u8 = 4;
    /// SACK blocks.
    pub const SACK: u8 = 5;
    /// Timestamps.
    pub const TS: u8 = 8;
    /// MD5 signature.
    pub const MD5: u8 = 19;
    /// TCP-AO.
    pub const AO: u8 = 29;
    /// Fast open.
    pub const TFO: u8 = 34;
    /// Experimental (TFO draft).
    pub const EXP1: u8 = 0xfd;
    /// Experimental (TFO draft).
    pub const EXP2: u8 = 0xfe;
}

/// Zero-copy view of a TCP header (and its segment).
#[derive(Clone, Copy, Debug)]
pub struct Tcp<'a> {
    buf: &'a [u8],
}

impl<'a> Tcp<'a> {
    /// Wraps `buf` without checks.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Tcp { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Tcp { buf };
        v.check_len().then_some(v)
    }

    /// The segment of a decoded TCP packet (header to the end of the IP payload).
    pub fn from_meta(meta: &PacketMeta, data: &'a [u8]) -> Option<Self> {
        if meta.kind != PacketKind::L4 || meta.proto != proto::TCP {
            return None;
        }
        let end = meta.payload_off as usize + meta.payload_len as usize;
        Self::new_checked(data.get(meta.l4()?..end)?)
    }

    /// Buffer ≥ 20 bytes and ≥ the data offset, which is ≥ 20.
    pub fn check_len(&self) -> bool {
        let hl = self.header_len();
        self.buf.len() >= TCP_HEADER_LEN && hl >= TCP_HEADER_LEN && self.buf.len() >= hl
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buf, field::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buf, field::DST_PORT)
    }

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        be32(self.buf, field::SEQ)
    }

    /// Acknowledgement number.
    pub fn ack(&self) -> u32 {
        be32(self.buf, field::ACK)
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        usize::from(u8_at(self.buf, field::DATA_OFF) >> 4) * 4
    }

    /// Flags byte (FIN..CWR).
    pub fn flags(&self) -> u8 {
        u8_at(self.buf, field::FLAGS)
    }

    /// Window.
    pub fn window(&self) -> u16 {
        be16(self.buf, field::WINDOW)
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buf, field::CHECKSUM)
    }

    /// Urgent pointer.
    pub fn urgent(&self) -> u16 {
        be16(self.buf, field::URGENT)
    }

    /// Iterates the options.
    pub fn options(&self) -> TcpOptions<'a> {
        TcpOptions {
            buf: self
                .buf
                .get(TCP_HEADER_LEN..self.header_len())
                .unwrap_or(&[]),
        }
    }

    /// Segment payload.
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(self.header_len()..).unwrap_or(&[])
    }
}

/// One decoded TCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// No-op.
    Nop,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// SACK blocks (left, right edges): raw bytes, 8 per block.
    Sack(&'a [u8]),
    /// Timestamps (value, echo reply).
    Timestamps(u32, u32),
    /// Any other option, or a known one with a wrong length: kind and data.
    Other(u8, &'a [u8]),
}

impl TcpOption<'_> {
    /// The SACK blocks as (left, right) pairs.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let b: &[u8] = match self {
            TcpOption::Sack(b) => b,
            _ => &[],
        };
        b.chunks_exact(8).map(|c| (be32(c, 0), be32(c, 4)))
    }
}

/// Iterator over TCP options; stops at EOL or at a malformed length.
#[derive(Clone, Debug)]
pub struct TcpOptions<'a> {
    buf: &'a [u8],
}

impl<'a> Iterator for TcpOptions<'a> {
    type Item = TcpOption<'a>;

    fn next(&mut self) -> Option<TcpOption<'a>> {
        let (&kind, rest) = self.buf.split_first()?;
        match kind {
            opt::EOL => {
                self.buf = &[];
                None
            }
            opt::NOP => {
                self.buf = rest;
                Some(TcpOption::Nop)
            }
            _ => {
                let len = usize::from(*rest.first()?);
                if len < 2 || len > self.buf.len() {
                    self.buf = &[];
                    return None;
                }
                let data = self.buf.get(2..len).unwrap_or(&[]);
                self.buf = self.buf.get(len..).unwrap_or(&[]);
                Some(match (kind, len) {
                    (opt::MSS, 4) => TcpOption::Mss(be16(data, 0)),
                    (opt::WS, 3) => TcpOption::WindowScale(u8_at(data, 0)),
                    (opt::SACKOK, 2) => TcpOption::SackPermitted,
                    (opt::SACK, l) if l >= 10 && (l - 2) % 8 == 0 => TcpOption::Sack(data),
                    (opt::TS, 10) => TcpOption::Timestamps(be32(data, 0), be32(data, 4)),
                    _ => TcpOption::Other(kind, data),
                })
            }
        }
    }
}

impl Ctx<'_, '_> {
    /// TCP segment at `off..end`.
    pub(crate) fn tcp(&mut self, off: usize, end: usize) {
        self.stats.tcp += 1;
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < TCP_HEADER_LEN {
            return self.inv(E::TcpPktTooSmall);
        }
        let hlen = usize::from(u8_at(d, off + field::DATA_OFF) >> 4) * 4;
        if len < hlen {
            return self.inv(E::TcpHlenTooSmall);
        }
        if hlen < TCP_HEADER_LEN {
            return self.inv(E::TcpInvalidOptlen);
        }
        if hlen > TCP_HEADER_LEN {
            self.meta.flags |= flags::TCP_OPTS;
            self.tcp_options(off + TCP_HEADER_LEN, off + hlen);
        } else {
            self.meta.flags &= !flags::TCP_OPTS;
        }
        let m = &mut self.meta;
        m.kind = PacketKind::L4;
        m.l4_off = off as u16;
        m.payload_off = (off + hlen) as u16;
        m.payload_len = (len - hlen) as u16;
        m.sport = be16(d, off + field::SRC_PORT);
        m.dport = be16(d, off + field::DST_PORT);
        m.l4_a = be32(d, off + field::SEQ);
        m.l4_b = be32(d, off + field::ACK);
        m.tcp_flags = u8_at(d, off + field::FLAGS);
        m.tcp_win = be16(d, off + field::WINDOW);
        if self.cfg.checksum_validation {
            self.l4_checksum(proto::TCP, off, end);
        }
    }

    /// Validates TCP options (Suricata `DecodeTCPOptions`).
    fn tcp_options(&mut self, off: usize, end: usize) {
        let mut rest = self.data.get(off..end).unwrap_or(&[]);
        let mut seen: u8 = 0; // bits: ws, mss, sackok, ts, sack, tfo
        while let Some(&kind) = rest.first() {
            if kind == opt::EOL {
                break;
            }
            if kind == opt::NOP {
                rest = rest.get(1..).unwrap_or(&[]);
                continue;
            }
            if rest.len() < 2 {
                break;
            }
            let olen = usize::from(u8_at(rest, 1));
            if olen > rest.len() || olen < 2 {
                return self.inv(E::TcpOptInvalidLen);
            }
            let (ok, bit) = match kind {
                opt::WS => (olen == 3, 1),
                opt::MSS => (olen == 4, 2),
                opt::SACKOK => (olen == 2, 4),
                opt::TS => (olen == 10, 8),
                opt::SACK => (
                    olen == 2 || ((10..=34).contains(&olen) && (olen - 2) % 8 == 0),
                    16,
                ),
                opt::TFO => (
                    olen == 2 || ((4..=18).contains(&olen) && (olen - 2) % 2 == 0),
                    32,
                ),
                opt::EXP1 | opt::EXP2 => {
                    if olen == 4 || olen == 12 {
                        if be16(rest, 2) == 0xf989 {
                            (true, 32)
                        } else {
                            (true, 0)
                        }
                    } else {
                        (false, 0)
                    }
                }
                opt::MD5 => {
                    if olen != 18 {
                        self.inv(E::TcpOptInvalidLen);
                    }
                    (true, 0)
                }
                opt::AO => {
                    if olen < 4 {
                        self.inv(E::TcpOptInvalidLen);
                    }
                    (true, 0)
                }
                _ => (true, 0),
            };
            if !ok {
                self.ev(E::TcpOptInvalidLen);
            } else if bit != 0 {
                if seen & bit != 0 {
                    self.ev(E::TcpOptDuplicate);
                }
                seen |= bit;
            }
            rest = rest.get(olen..).unwrap_or(&[]);
        }
    }

    /// Verifies the TCP/UDP/ICMPv6 checksum of `off..end` with the pseudo-header of the
    /// current IP header (or, for ICMPv4, without one).
    pub(crate) fn l4_checksum(&mut self, proto_nr: u8, off: usize, end: usize) {
        let seg = self.data.get(off..end).unwrap_or(&[]);
        let m = &self.meta;
        let ok = if proto_nr == proto::ICMP {
            checksum::verify(seg)
        } else if m.has(flags::IPV6) {
            let acc = checksum::pseudo_v6(&m.src, &m.dst, proto_nr, seg.len());
            checksum::fold(checksum::sum(seg, acc)) == 0xffff
        } else {
            let src = m.src.get(..4).unwrap_or(&[]);
            let dst = m.dst.get(..4).unwrap_or(&[]);
            let acc = checksum::pseudo_v4(src, dst, proto_nr, seg.len());
            checksum::fold(checksum::sum(seg, acc)) == 0xffff
        };
        self.meta.flags |= flags::L4_CSUM_CHECKED;
        if !ok {
            self.meta.flags |= flags::L4_CSUM_BAD;
        }
    }
}
