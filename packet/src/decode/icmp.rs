//! ICMPv4 and ICMPv6: views and decoding, including the original packet quoted by ICMP
//! errors (so the error can be attributed to its flow), with Suricata's type/code checks.

use super::bytes::{addr16, be16, be32, u8_at};
use super::events::DecodeEvent as E;
use super::meta::{flags, PacketKind, PacketMeta};
use super::{proto, Ctx};

/// ICMP header length (type, code, checksum, rest-of-header).
pub const ICMP_HEADER_LEN: usize = 8;

mod field {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const ID: usize = 4;
    pub const SEQ: usize = 6;
}

macro_rules! icmp_view {
    ($name:ident, $proto:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a> {
            buf: &'a [u8],
        }

        impl<'a> $name<'a> {
            /// Wraps `buf` without checks.
            pub fn new_unchecked(buf: &'a [u8]) -> Self {
                $name { buf }
            }

            /// Wraps `buf` after [`Self::check_len`].
            pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
                let v = $name { buf };
                v.check_len().then_some(v)
            }

            /// The message of a decoded packet of this protocol.
            pub fn from_meta(meta: &PacketMeta, data: &'a [u8]) -> Option<Self> {
                if meta.kind != PacketKind::L4 || meta.proto != $proto {
                    return None;
                }
                let end = meta.payload_off as usize + meta.payload_len as usize;
                Self::new_checked(data.get(meta.l4()?..end)?)
            }

            /// Buffer holds the 8-byte header.
            pub fn check_len(&self) -> bool {
                self.buf.len() >= ICMP_HEADER_LEN
            }

            /// Message type.
            pub fn msg_type(&self) -> u8 {
                u8_at(self.buf, field::TYPE)
            }

            /// Message code.
            pub fn code(&self) -> u8 {
                u8_at(self.buf, field::CODE)
            }

            /// Checksum field.
            pub fn checksum(&self) -> u16 {
                be16(self.buf, field::CHECKSUM)
            }

            /// Echo-style identifier.
            pub fn ident(&self) -> u16 {
                be16(self.buf, field::ID)
            }

            /// Echo-style sequence number.
            pub fn seq(&self) -> u16 {
                be16(self.buf, field::SEQ)
            }

            /// The 4 bytes after the checksum (MTU, pointer, gateway …).
            pub fn rest_of_header(&self) -> u32 {
                be32(self.buf, field::ID)
            }

            /// Bytes after the 8-byte header (the quoted packet for errors).
            pub fn data(&self) -> &'a [u8] {
                self.buf.get(ICMP_HEADER_LEN..).unwrap_or(&[])
            }
        }
    };
}

icmp_view!(Icmpv4, proto::ICMP, "Zero-copy view of an ICMPv4 message.");
icmp_view!(
    Icmpv6,
    proto::ICMPV6,
    "Zero-copy view of an ICMPv6 message."
);

/// ICMPv4 counterpart type (echo ↔ reply …), Suricata `ICMPv4GetCounterpart`.
pub fn icmpv4_counterpart(t: u8) -> Option<u8> {
    Some(match t {
        8 => 0,
        0 => 8,
        13 => 14,
        14 => 13,
        15 => 16,
        16 => 15,
        10 => 9,
        9 => 10,
        17 => 18,
        18 => 17,
        _ => return None,
    })
}

/// ICMPv6 counterpart type, Suricata `ICMPv6GetCounterpart`.
pub fn icmpv6_counterpart(t: u8) -> Option<u8> {
    Some(match t {
        128 => 129,
        129 => 128,
        135 => 136,
        136 => 135,
        133 => 134,
        134 => 133,
        130 => 131,
        131 => 130,
        139 => 140,
        140 => 139,
        144 => 145,
        145 => 144,
        146 => 147,
        147 => 146,
        148 => 149,
        149 => 148,
        151 => 152,
        152 => 151,
        157 => 158,
        158 => 157,
        _ => return None,
    })
}

impl Ctx<'_, '_> {
    fn icmp_common(&mut self, off: usize, end: usize, t: u8, c: u8, ct: Option<u8>) {
        let m = &mut self.meta;
        m.kind = PacketKind::L4;
        m.l4_off = off as u16;
        m.payload_off = (off + ICMP_HEADER_LEN) as u16;
        m.payload_len = end.saturating_sub(off + ICMP_HEADER_LEN) as u16;
        m.sport = u16::from(t) << 8 | u16::from(c);
        m.dport = u16::from(ct.unwrap_or(0)) << 8;
        m.l4_a = 0;
        m.l4_b = 0;
    }

    fn icmp_echo_ids(&mut self, off: usize) {
        self.meta.l4_a = be32(self.data, off + field::ID);
    }

    /// ICMPv4 message at `off..end` (Suricata `DecodeICMPV4`).
    pub(crate) fn icmpv4(&mut self, off: usize, end: usize) {
        self.stats.icmpv4 += 1;
        let len = end.saturating_sub(off);
        if len < ICMP_HEADER_LEN {
            return self.inv(E::Icmpv4PktTooSmall);
        }
        let d = self.data;
        let (t, c) = (u8_at(d, off), u8_at(d, off + 1));
        self.icmp_common(off, end, t, c, icmpv4_counterpart(t));
        if self.cfg.checksum_validation {
            self.l4_checksum(proto::ICMP, off, end);
        }
        // Maximum valid code per error type; `None` = not an error carrying a packet.
        let err_max = match t {
            3 => Some(15),
            4 => Some(0),
            5 => Some(3),
            11 => Some(1),
            12 => Some(0),
            _ => None,
        };
        if let Some(max) = err_max {
            if c > max {
                self.ev(E::Icmpv4UnknownCode);
            } else if len > ICMP_HEADER_LEN || t == 4 {
                self.icmpv4_embedded(off + ICMP_HEADER_LEN, end);
            }
            return;
        }
        match t {
            0 | 8 | 15 | 16 | 17 | 18 => {
                self.icmp_echo_ids(off);
                if c != 0 {
                    self.ev(E::Icmpv4UnknownCode);
                }
            }
            13 | 14 => {
                self.icmp_echo_ids(off);
                if c != 0 {
                    self.ev(E::Icmpv4UnknownCode);
                }
                if len < ICMP_HEADER_LEN + 12 {
                    self.ev(E::Icmpv4Ipv4TruncPkt);
                } else {
                    self.meta.payload_off += 12;
                    self.meta.payload_len -= 12;
                }
            }
            9 => {
                // Router advertisement: num addrs * addr entry size (in 32-bit words).
                let adv = usize::from(u8_at(d, off + 4)) * usize::from(u8_at(d, off + 5)) * 4;
                if len < adv + ICMP_HEADER_LEN {
                    self.ev(E::Icmpv4Ipv4TruncPkt);
                } else {
                    self.meta.payload_off += adv as u16;
                    self.meta.payload_len -= adv as u16;
                }
            }
            // Like Suricata, router solicitation (10) and unassigned types are "unknown".
            _ => self.ev(E::Icmpv4UnknownType),
        }
    }

    /// The IPv4 header (+ transport ports) quoted by an ICMPv4 error.
    fn icmpv4_embedded(&mut self, off: usize, end: usize) {
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < 20 {
            return self.inv(E::Icmpv4Ipv4TruncPkt);
        }
        if u8_at(d, off) >> 4 != 4 {
            return self.inv(E::Icmpv4Ipv4UnknownVer);
        }
        let p = u8_at(d, off + 9);
        let m = &mut self.meta;
        m.flags |= flags::EMB_IP;
        m.flags &= !flags::EMB_IPV6;
        m.emb_src = addr16(d, off + 12, 4);
        m.emb_dst = addr16(d, off + 16, 4);
        m.emb_proto = p;
        // Suricata reads the quoted transport header right after a 20-byte IP header and
        // wants the full TCP (20) / UDP (8) header.
        let need = match p {
            proto::TCP => 20,
            proto::UDP => 8,
            _ => return,
        };
        if len >= 20 + need {
            m.l4_b = be32(d, off + 20);
            m.flags |= flags::EMB_PORTS;
        }
    }

    /// ICMPv6 message at `off..end` (Suricata `DecodeICMPV6`).
    pub(crate) fn icmpv6(&mut self, off: usize, end: usize) {
        self.stats.icmpv6 += 1;
        let len = end.saturating_sub(off);
        if len < ICMP_HEADER_LEN {
            return self.inv(E::Icmpv6PktTooSmall);
        }
        let d = self.data;
        let (t, c) = (u8_at(d, off), u8_at(d, off + 1));
        self.icmp_common(off, end, t, c, icmpv6_counterpart(t));
        if self.cfg.checksum_validation {
            self.l4_checksum(proto::ICMPV6, off, end);
        }
        let unknown_code = match t {
            1..=4 => {
                let max = [6u8, 0, 1, 2][usize::from(t - 1) & 3];
                if c > max {
                    true
                } else {
                    self.icmpv6_embedded(off + ICMP_HEADER_LEN, end);
                    false
                }
            }
            128 | 129 => {
                if c == 0 {
                    self.icmp_echo_ids(off);
                }
                c != 0
            }
            130..=132 => {
                if self.meta.ttl != 1 {
                    self.ev(E::Icmpv6MldMessageWithInvalidHl);
                }
                c != 0
            }
            138 => c > 2 && c != 255,
            139 | 140 => c > 2,
            155 => (c > 3 && c < 128) || c > 132,
            133..=137 | 141..=149 | 154 | 156..=159 => c != 0,
            150..=153 => false,
            5..=99 | 102..=126 | 160..=199 | 202..=255 => {
                self.ev(E::Icmpv6UnassignedType);
                false
            }
            100 | 101 | 200 | 201 => {
                self.ev(E::Icmpv6ExperimentationType);
                false
            }
            _ => {
                self.ev(E::Icmpv6UnknownType);
                false
            }
        };
        if unknown_code {
            self.ev(E::Icmpv6UnknownCode);
        }
    }

    /// The IPv6 header (+ transport ports) quoted by an ICMPv6 error.
    fn icmpv6_embedded(&mut self, off: usize, end: usize) {
        let d = self.data;
        let len = end.saturating_sub(off);
        if len < 40 {
            return self.inv(E::Icmpv6Ipv6TruncPkt);
        }
        if u8_at(d, off) >> 4 != 6 {
            return self.inv(E::Icmpv6Ipv6UnknownVersion);
        }
        let p = u8_at(d, off + 6);
        let m = &mut self.meta;
        m.flags |= flags::EMB_IP | flags::EMB_IPV6;
        m.emb_src = addr16(d, off + 8, 16);
        m.emb_dst = addr16(d, off + 24, 16);
        m.emb_proto = p;
        let need = match p {
            proto::TCP => 20,
            proto::UDP => 8,
            _ => return,
        };
        if len >= 40 + need {
            m.l4_b = be32(d, off + 40);
            m.flags |= flags::EMB_PORTS;
        }
    }
}
