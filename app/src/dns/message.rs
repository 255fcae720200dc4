//! DNS message decoding: header, questions, resource records and their data, with name
//! decompression.
//!
//! Semantics follow Suricata 7's DNS parser (re-implemented from its behaviour):
//! * a name is at most 255 labels/pointers; past that a name reached through a pointer is
//!   returned truncated, otherwise the message is malformed;
//! * an assembled name longer than 1025 bytes is truncated to 1025 bytes (flag set), parsing
//!   continues to find the end of the name;
//! * a pointer to itself is an infinite loop: after a first pointer the name ends there, before
//!   one the message is malformed;
//! * every record's data must be present (`rdlength` bytes), and its decoder must consume at
//!   least one byte (an empty A record is malformed; an empty OPT is allowed);
//! * TXT records with several strings become one record per string.
//!
//! All names and byte data live in one per-message arena ([`DnsMessage::bytes`]); records hold
//! [`Span`]s into it, so a parsed message costs a handful of allocations that are reused when
//! the message is recycled.

use super::consts::*;

/// Longest assembled name kept, in bytes (as Suricata and dnsmasq).
pub const MAX_NAME_LEN: usize = 1025;
/// Most labels and pointers followed in one name.
pub const MAX_NAME_SEGMENTS: usize = 255;
/// Size of the fixed DNS header.
pub const HEADER_LEN: usize = 12;

/// A range of bytes in a message's arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// Length in bytes.
    pub fn len(self) -> usize {
        self.len as usize
    }

    /// Whether the span is empty.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// The fixed 12-byte header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnsHeader {
    /// Transaction id.
    pub id: u16,
    /// The 16 flag bits (QR, opcode, AA, TC, RD, RA, Z, AD, CD, rcode).
    pub flags: u16,
    /// Question count.
    pub qdcount: u16,
    /// Answer count.
    pub ancount: u16,
    /// Authority count.
    pub nscount: u16,
    /// Additional count.
    pub arcount: u16,
}

impl DnsHeader {
    /// Parse the header at the start of `b`; `None` when shorter than 12 bytes.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h = b.get(..HEADER_LEN)?;
        let u = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        Some(DnsHeader {
            id: u(0),
            flags: u(2),
            qdcount: u(4),
            ancount: u(6),
            nscount: u(8),
            arcount: u(10),
        })
    }

    /// QR bit: the message is a response.
    pub fn is_response(&self) -> bool {
        self.flags & 0x8000 != 0
    }
    /// The 4-bit opcode.
    pub fn opcode(&self) -> u8 {
        ((self.flags >> 11) & 0xf) as u8
    }
    /// The 4-bit response code.
    pub fn rcode(&self) -> u8 {
        (self.flags & 0xf) as u8
    }
    /// Authoritative answer.
    pub fn aa(&self) -> bool {
        self.flags & 0x0400 != 0
    }
    /// Truncated.
    pub fn tc(&self) -> bool {
        self.flags & 0x0200 != 0
    }
    /// Recursion desired.
    pub fn rd(&self) -> bool {
        self.flags & 0x0100 != 0
    }
    /// Recursion available.
    pub fn ra(&self) -> bool {
        self.flags & 0x0080 != 0
    }
    /// The reserved Z bit (0x0040).
    pub fn z(&self) -> bool {
        self.flags & 0x0040 != 0
    }
    /// Sum of the four section counts.
    pub fn record_count(&self) -> usize {
        self.qdcount as usize
            + self.ancount as usize
            + self.nscount as usize
            + self.arcount as usize
    }
}

/// Recoverable problems met while decoding names (Suricata's `DNSNameFlags`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameFlags(u8);

impl NameFlags {
    /// A name was truncated (over 1025 bytes, or cut at the label limit).
    pub const TRUNCATED: NameFlags = NameFlags(1);
    /// A pointer pointed at itself.
    pub const INFINITE_LOOP: NameFlags = NameFlags(2);
    /// More than 255 labels/pointers.
    pub const LABEL_LIMIT: NameFlags = NameFlags(4);

    /// Whether all bits of `o` are set.
    pub fn contains(self, o: NameFlags) -> bool {
        self.0 & o.0 == o.0 && o.0 != 0
    }
    fn insert(&mut self, o: NameFlags) {
        self.0 |= o.0;
    }
    /// Whether no flag is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A question entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    /// Query name.
    pub name: Span,
    /// Query type.
    pub rrtype: u16,
    /// Query class.
    pub rrclass: u16,
}

/// SOA record data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Soa {
    /// Primary name server.
    pub mname: Span,
    /// Responsible mailbox.
    pub rname: Span,
    /// Serial.
    pub serial: u32,
    /// Refresh interval.
    pub refresh: u32,
    /// Retry interval.
    pub retry: u32,
    /// Expire limit.
    pub expire: u32,
    /// Minimum TTL.
    pub minimum: u32,
}

/// Decoded record data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RData {
    /// IPv4 address bytes (as sent; 4 when well formed).
    A(Span),
    /// IPv6 address bytes (16 when well formed).
    Aaaa(Span),
    /// Canonical name.
    Cname(Span),
    /// Name server.
    Ns(Span),
    /// Pointer name.
    Ptr(Span),
    /// Mail exchange.
    Mx {
        /// Preference.
        preference: u16,
        /// Exchange host name.
        exchange: Span,
    },
    /// One TXT character-string (a record with several strings becomes several records).
    Txt(Span),
    /// NULL record bytes.
    Null(Span),
    /// Start of authority.
    Soa(Soa),
    /// Service location.
    Srv {
        /// Priority.
        priority: u16,
        /// Weight.
        weight: u16,
        /// Port.
        port: u16,
        /// Target host.
        target: Span,
    },
    /// SSH fingerprint.
    Sshfp {
        /// Algorithm number.
        algo: u8,
        /// Fingerprint type.
        fp_type: u8,
        /// Fingerprint bytes.
        fingerprint: Span,
    },
    /// EDNS OPT pseudo-record: raw option list (code, length, data)*.
    Opt(Span),
    /// SVCB / HTTPS (basic): priority, target name and the raw SvcParams.
    Svcb {
        /// SvcPriority (0 = alias form).
        priority: u16,
        /// Target name (uncompressed per RFC 9460, but pointers are tolerated).
        target: Span,
        /// Raw SvcParams.
        params: Span,
    },
    /// Any other type: the raw data.
    Unknown(Span),
}

/// A resource record (answer, authority or additional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Owner name.
    pub name: Span,
    /// Record type.
    pub rrtype: u16,
    /// Record class (for OPT: the UDP payload size).
    pub rrclass: u16,
    /// Time to live (for OPT: extended rcode and flags).
    pub ttl: u32,
    /// Decoded data.
    pub data: RData,
}

/// Why a message failed to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Shorter than the header.
    Short,
    /// A field ran past the end of the message or its record.
    Truncated,
    /// An invalid label type, a bad pointer, or a label/loop limit hit before any pointer.
    Invalid,
    /// The arena limit was reached.
    TooLarge,
}

/// Which sections [`DnsMessage::decode_sections`] decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sections {
    /// The question section only.
    Questions,
    /// Questions, answers and authorities.
    NoAdditionals,
    /// Every section.
    All,
}

/// A decoded message. Reusable: [`DnsMessage::decode`] clears it first.
#[derive(Clone, Debug, Default)]
pub struct DnsMessage {
    /// The header.
    pub header: DnsHeader,
    /// Question section.
    pub queries: Vec<Query>,
    /// Answer section.
    pub answers: Vec<Record>,
    /// Authority section.
    pub authorities: Vec<Record>,
    /// Additional section.
    pub additionals: Vec<Record>,
    /// Name problems met while decoding.
    pub name_flags: NameFlags,
    arena: Vec<u8>,
}

/// Decoding context: the whole message and the arena being filled.
struct Ctx<'a> {
    msg: &'a [u8],
    arena: &'a mut Vec<u8>,
    flags: NameFlags,
    max_arena: usize,
}

fn be16(b: &[u8], at: usize) -> Result<u16, DecodeError> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Ok(u16::from_be_bytes([x, y])),
        _ => Err(DecodeError::Truncated),
    }
}

fn be32(b: &[u8], at: usize) -> Result<u32, DecodeError> {
    match b.get(at..at + 4) {
        Some(&[a, b2, c, d]) => Ok(u32::from_be_bytes([a, b2, c, d])),
        _ => Err(DecodeError::Truncated),
    }
}

impl Ctx<'_> {
    fn push(&mut self, bytes: &[u8]) -> Result<Span, DecodeError> {
        let start = self.arena.len();
        if start + bytes.len() > self.max_arena {
            return Err(DecodeError::TooLarge);
        }
        self.arena.extend_from_slice(bytes);
        Ok(Span {
            start: start as u32,
            len: bytes.len() as u32,
        })
    }

    /// Store `msg[from..to]` (bounds already checked by the caller) in the arena.
    fn push_range(&mut self, from: usize, to: usize) -> Result<Span, DecodeError> {
        let msg = self.msg;
        let bytes = msg.get(from..to).ok_or(DecodeError::Truncated)?;
        self.push(bytes)
    }

    /// Decode a name starting at `pos`; labels before the first pointer must end by `end`.
    /// Returns the name and the position after it in the original data.
    fn name(&mut self, mut pos: usize, mut end: usize) -> Result<(Span, usize), DecodeError> {
        let msg = self.msg;
        let start = self.arena.len();
        let mut pivot: Option<usize> = None;
        let mut count = 0usize;
        let mut truncated = false;
        let mut flags = NameFlags::default();
        loop {
            if pos >= end {
                break;
            }
            let Some(&len) = msg.get(pos) else { break };
            if len == 0 {
                pos += 1;
                break;
            } else if len & 0xc0 == 0 {
                let label_end = pos + 1 + len as usize;
                if label_end > end {
                    return Err(DecodeError::Truncated);
                }
                if !truncated {
                    if self.arena.len() > start {
                        self.push(b".")?;
                    }
                    self.push_range(pos + 1, label_end)?;
                }
                pos = label_end;
            } else if len & 0xc0 == 0xc0 {
                if pos + 2 > end {
                    return Err(DecodeError::Truncated);
                }
                let offset = (be16(msg, pos)? & 0x3fff) as usize;
                if offset > msg.len() {
                    return Err(DecodeError::Invalid);
                }
                // Suricata compares the rest of the data at `pos` with the message from
                // `offset`: equal only for a pointer to itself with the data running to the
                // end of the message.
                if offset == pos && end == msg.len() {
                    flags.insert(NameFlags::INFINITE_LOOP);
                    if pivot.is_some() {
                        break;
                    }
                    self.flags.insert(flags);
                    return Err(DecodeError::Invalid);
                }
                if pivot.is_none() {
                    pivot = Some(pos + 2);
                }
                pos = offset;
                end = msg.len();
            } else {
                return Err(DecodeError::Invalid);
            }
            count += 1;
            if count > MAX_NAME_SEGMENTS {
                flags.insert(NameFlags::LABEL_LIMIT);
                if pivot.is_some() {
                    flags.insert(NameFlags::TRUNCATED);
                    break;
                }
                self.flags.insert(flags);
                return Err(DecodeError::Invalid);
            }
            if self.arena.len() - start > MAX_NAME_LEN {
                self.arena.truncate(start + MAX_NAME_LEN);
                truncated = true;
                flags.insert(NameFlags::TRUNCATED);
                if pivot.is_some() {
                    break;
                }
            }
        }
        self.flags.insert(flags);
        let span = Span {
            start: start as u32,
            len: (self.arena.len() - start) as u32,
        };
        Ok((span, pivot.unwrap_or(pos)))
    }

    /// Decode one rdata item of `rrtype` from `data[pos..end]`; returns it and the position
    /// after it. Mirrors Suricata: decoders that consume nothing fail.
    fn rdata_item(
        &mut self,
        rrtype: u16,
        pos: usize,
        end: usize,
    ) -> Result<(RData, usize), DecodeError> {
        let rest = |ctx: &mut Self| ctx.push_range(pos, end);
        let (rd, next) = match rrtype {
            TYPE_A => (RData::A(rest(self)?), end),
            TYPE_AAAA => (RData::Aaaa(rest(self)?), end),
            TYPE_NULL => (RData::Null(rest(self)?), end),
            TYPE_CNAME | TYPE_NS | TYPE_PTR => {
                let (n, next) = self.name(pos, end)?;
                let rd = match rrtype {
                    TYPE_CNAME => RData::Cname(n),
                    TYPE_NS => RData::Ns(n),
                    _ => RData::Ptr(n),
                };
                (rd, next)
            }
            TYPE_MX => {
                let preference = be16(&self.msg[..end], pos)?;
                let (exchange, next) = self.name(pos + 2, end)?;
                (
                    RData::Mx {
                        preference,
                        exchange,
                    },
                    next,
                )
            }
            TYPE_SOA => {
                let (mname, p) = self.name(pos, end)?;
                let (rname, p) = self.name(p, end)?;
                let lim = &self.msg[..end];
                let soa = Soa {
                    mname,
                    rname,
                    serial: be32(lim, p)?,
                    refresh: be32(lim, p + 4)?,
                    retry: be32(lim, p + 8)?,
                    expire: be32(lim, p + 12)?,
                    minimum: be32(lim, p + 16)?,
                };
                (RData::Soa(soa), p + 20)
            }
            TYPE_SRV => {
                let lim = &self.msg[..end];
                let priority = be16(lim, pos)?;
                let weight = be16(lim, pos + 2)?;
                let port = be16(lim, pos + 4)?;
                let (target, next) = self.name(pos + 6, end)?;
                let rd = RData::Srv {
                    priority,
                    weight,
                    port,
                    target,
                };
                (rd, next)
            }
            TYPE_TXT => {
                let len = *self
                    .msg
                    .get(pos)
                    .filter(|_| pos < end)
                    .ok_or(DecodeError::Truncated)?;
                let s_end = pos + 1 + len as usize;
                if s_end > end {
                    return Err(DecodeError::Truncated);
                }
                (RData::Txt(self.push_range(pos + 1, s_end)?), s_end)
            }
            TYPE_SSHFP => {
                let lim = &self.msg[..end];
                let (&algo, &fp_type) = (
                    lim.get(pos).ok_or(DecodeError::Truncated)?,
                    lim.get(pos + 1).ok_or(DecodeError::Truncated)?,
                );
                let fingerprint = self.push_range(pos + 2, end)?;
                let rd = RData::Sshfp {
                    algo,
                    fp_type,
                    fingerprint,
                };
                (rd, end)
            }
            TYPE_OPT => {
                let lim = &self.msg[..end];
                let mut p = pos;
                while p < end {
                    let _code = be16(lim, p)?;
                    let olen = be16(lim, p + 2)? as usize;
                    if p + 4 + olen > end {
                        return Err(DecodeError::Truncated);
                    }
                    p += 4 + olen;
                }
                (RData::Opt(self.push_range(pos, end)?), end)
            }
            TYPE_SVCB | TYPE_HTTPS => {
                // Not decoded by Suricata 7 (logged as unknown); decode the basics here and
                // fall back to raw bytes when they do not parse.
                let mark = self.arena.len();
                let saved = self.flags;
                let svcb = (|| {
                    let priority = be16(&self.msg[..end], pos)?;
                    let (target, p) = self.name(pos + 2, end)?;
                    let params = self.push_range(p.min(end), end)?;
                    Ok::<_, DecodeError>(RData::Svcb {
                        priority,
                        target,
                        params,
                    })
                })();
                match svcb {
                    Ok(rd) => (rd, end),
                    Err(DecodeError::TooLarge) => return Err(DecodeError::TooLarge),
                    Err(_) => {
                        self.arena.truncate(mark);
                        self.flags = saved;
                        (RData::Unknown(rest(self)?), end)
                    }
                }
            }
            _ => (RData::Unknown(rest(self)?), end),
        };
        if next <= pos {
            // Suricata's combinator rejects a decoder that consumed nothing.
            return Err(DecodeError::Invalid);
        }
        Ok((rd, next))
    }

    /// Decode `count` records starting at `pos` into `out`.
    fn records(
        &mut self,
        mut pos: usize,
        count: u16,
        out: &mut Vec<Record>,
    ) -> Result<usize, DecodeError> {
        let msg = self.msg;
        for _ in 0..count {
            let (name, p) = self.name(pos, msg.len())?;
            let rrtype = be16(msg, p)?;
            let rrclass = be16(msg, p + 2)?;
            let ttl = be32(msg, p + 4)?;
            let rdlen = be16(msg, p + 8)? as usize;
            let dstart = p + 10;
            let dend = dstart + rdlen;
            if dend > msg.len() {
                return Err(DecodeError::Truncated);
            }
            let mut rec = Record {
                name,
                rrtype,
                rrclass,
                ttl,
                data: RData::Opt(Span::default()),
            };
            if rdlen == 0 && rrtype == TYPE_OPT {
                out.push(rec);
            } else if rrtype == TYPE_TXT {
                let mut q = dstart;
                let mut n = 0;
                while q < dend {
                    match self.rdata_item(rrtype, q, dend) {
                        Ok((rd, next)) => {
                            rec.data = rd;
                            out.push(rec);
                            q = next;
                            n += 1;
                        }
                        Err(DecodeError::TooLarge) => return Err(DecodeError::TooLarge),
                        Err(_) => break,
                    }
                }
                if n == 0 {
                    return Err(DecodeError::Truncated);
                }
            } else {
                let (rd, _) = self.rdata_item(rrtype, dstart, dend)?;
                rec.data = rd;
                out.push(rec);
            }
            pos = dend;
        }
        Ok(pos)
    }
}

impl DnsMessage {
    /// Decode a complete message (one UDP payload or one TCP length-delimited message),
    /// keeping at most `max_arena` bytes of names and data. Trailing bytes are ignored.
    /// On error the message holds whatever was decoded before the error.
    pub fn decode(&mut self, msg: &[u8], max_arena: usize) -> Result<(), DecodeError> {
        self.decode_sections(msg, max_arena, Sections::All)
    }

    /// Decode only the given sections (Suricata 7 decodes a request's questions only, and a
    /// response's questions, answers and authorities).
    pub fn decode_sections(
        &mut self,
        msg: &[u8],
        max_arena: usize,
        sections: Sections,
    ) -> Result<(), DecodeError> {
        self.clear();
        self.header = DnsHeader::parse(msg).ok_or(DecodeError::Short)?;
        let mut ctx = Ctx {
            msg,
            arena: &mut self.arena,
            flags: NameFlags::default(),
            max_arena,
        };
        let res = (|| {
            let mut pos = HEADER_LEN;
            for _ in 0..self.header.qdcount {
                let (name, p) = ctx.name(pos, msg.len())?;
                let rrtype = be16(msg, p)?;
                let rrclass = be16(msg, p + 2)?;
                self.queries.push(Query {
                    name,
                    rrtype,
                    rrclass,
                });
                pos = p + 4;
            }
            if sections == Sections::Questions {
                return Ok(());
            }
            pos = ctx.records(pos, self.header.ancount, &mut self.answers)?;
            pos = ctx.records(pos, self.header.nscount, &mut self.authorities)?;
            if sections == Sections::All {
                ctx.records(pos, self.header.arcount, &mut self.additionals)?;
            }
            Ok(())
        })();
        self.name_flags = ctx.flags;
        res
    }

    /// Empty the message, keeping its allocations.
    pub fn clear(&mut self) {
        self.header = DnsHeader::default();
        self.queries.clear();
        self.answers.clear();
        self.authorities.clear();
        self.additionals.clear();
        self.name_flags = NameFlags::default();
        self.arena.clear();
    }

    /// The bytes a span refers to (empty for a span of another message).
    pub fn bytes(&self, s: Span) -> &[u8] {
        let start = s.start as usize;
        self.arena
            .get(start..start + s.len as usize)
            .unwrap_or_default()
    }

    /// Bytes held in the arena (memory accounting).
    pub fn arena_len(&self) -> usize {
        self.arena.len()
    }
}
