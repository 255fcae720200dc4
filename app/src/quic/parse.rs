//! QUIC and gQUIC headers and frames, as Suricata 7's `rust/src/quic/parser.rs` and
//! `frames.rs` decode them (re-implemented from their behaviour).

use crate::tls::Hello;

/// Largest CRYPTO data reassembled (Suricata's `QUIC_MAX_CRYPTO_FRAG_LEN`).
pub const MAX_CRYPTO_FRAG_LEN: u64 = 65535;

/// Packet types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktType {
    /// Initial (gQUIC: a packet with a version).
    Initial,
    /// Retry.
    Retry,
    /// Handshake.
    Handshake,
    /// 0-RTT.
    ZeroRtt,
    /// Version negotiation (version 0).
    VersionNegotiation,
    /// Short header.
    Short,
}

/// A decoded packet header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// First byte.
    pub first: u8,
    /// Packet type.
    pub ty: PktType,
    /// Version (0 when absent).
    pub version: u32,
    /// Whether the version field was present.
    pub has_version: bool,
    /// Destination connection id.
    pub dcid: Vec<u8>,
    /// Header length (up to the packet number for IETF long headers).
    pub hlen: usize,
    /// Payload length after the header.
    pub length: usize,
}

fn is_gquic(v: u32) -> bool {
    matches!(v, 0x5130_3433..=0x5130_3436)
}

/// The version as Suricata logs it.
pub fn version_string(v: u32) -> String {
    match v {
        0x5130_3339 => "Q039".into(),
        0x5130_3433 => "Q043".into(),
        0x5130_3434 => "Q044".into(),
        0x5130_3435 => "Q045".into(),
        0x5130_3436 => "Q046".into(),
        super::crypto::VERSION_2 => "v2".into(),
        x => format!("{x:x}"),
    }
}

/// A QUIC variable-length integer.
pub fn varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let first = *b.first()?;
    let n = 1usize << (first >> 6);
    let bytes = b.get(..n)?;
    let mut v = u64::from(first & 0x3f);
    for &x in &bytes[1..] {
        v = (v << 8) | u64::from(x);
    }
    Some((v, &b[n..]))
}

fn take(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    (b.len() >= n).then(|| b.split_at(n))
}

fn be32(b: &[u8]) -> Option<(u32, &[u8])> {
    let (v, r) = take(b, 4)?;
    Some((u32::from_be_bytes([v[0], v[1], v[2], v[3]]), r))
}

impl Header {
    /// Decode a header at the start of `b` (Suricata's `QuicHeader::from_bytes`).
    pub fn parse(b: &[u8]) -> Option<Header> {
        let (&first, rest) = b.split_first()?;
        let is_long = first & 0x80 != 0;
        if !is_long && first & 0x40 == 0 {
            // gQUIC public header.
            let (dcid, mut rest) = take(rest, if first & 0x08 != 0 { 8 } else { 0 })?;
            if first & 0x04 != 0 && first & 0x08 == 0 {
                rest = take(rest, 32)?.1;
            }
            let (version, has_version) = if first & 0x01 != 0 {
                let (v, r) = be32(rest)?;
                rest = r;
                (v, true)
            } else {
                (0, false)
            };
            rest = take(rest, usize::from(1 + ((first & 0x30) >> 4)))?.1;
            if first & 0x08 != 0 {
                rest = take(rest, 12)?.1;
            }
            let length = u16::try_from(rest.len()).ok()?.into();
            return Some(Header {
                first,
                ty: if has_version {
                    PktType::Initial
                } else {
                    PktType::Short
                },
                version,
                has_version,
                dcid: dcid.to_vec(),
                hlen: b.len() - rest.len(),
                length,
            });
        }
        if !is_long {
            let length = u16::try_from(rest.len()).ok()?.into();
            return Some(Header {
                first,
                ty: PktType::Short,
                version: 0,
                has_version: false,
                dcid: Vec::new(),
                hlen: 1,
                length,
            });
        }
        let (version, rest) = be32(rest)?;
        let ty = if version == 0 {
            PktType::VersionNegotiation
        } else if is_gquic(version) && version != 0x5130_3436 {
            match first & 0x7f {
                0x7f => PktType::Initial,
                0x7e => PktType::Retry,
                0x7d => PktType::Handshake,
                0x7c => PktType::ZeroRtt,
                _ => return None,
            }
        } else if version == super::crypto::VERSION_2 {
            [
                PktType::Retry,
                PktType::Initial,
                PktType::ZeroRtt,
                PktType::Handshake,
            ][usize::from((first & 0x30) >> 4)]
        } else {
            [
                PktType::Initial,
                PktType::ZeroRtt,
                PktType::Handshake,
                PktType::Retry,
            ][usize::from((first & 0x30) >> 4)]
        };
        let (dcid, rest) = if is_gquic(version) {
            let (&lens, rest) = rest.split_first()?;
            let add = |l: u8| if l != 0 { usize::from(l) + 3 } else { 0 };
            let (dcid, rest) = take(rest, add(lens >> 4))?;
            let (_scid, rest) = take(rest, add(lens & 0x0f))?;
            (dcid, rest)
        } else {
            let (&dl, rest) = rest.split_first()?;
            let (dcid, rest) = take(rest, usize::from(dl))?;
            let (&sl, rest) = rest.split_first()?;
            let (_scid, rest) = take(rest, usize::from(sl))?;
            (dcid, rest)
        };
        let mut has_length = false;
        let rest = match ty {
            PktType::Initial if is_gquic(version) => take(be32(rest)?.1, 12)?.1,
            PktType::Initial => {
                let (tl, r) = varint(rest)?;
                has_length = true;
                take(r, usize::try_from(tl).ok()?)?.1
            }
            PktType::Retry => &rest[rest.len()..],
            _ => rest,
        };
        let (length, rest) = if has_length {
            let (l, r) = varint(rest)?;
            if l > r.len() as u64 {
                return None;
            }
            (usize::from(u16::try_from(l).ok()?), r)
        } else {
            (usize::from(u16::try_from(rest.len()).ok()?), rest)
        };
        Some(Header {
            first,
            ty,
            version,
            has_version: true,
            dcid: dcid.to_vec(),
            hlen: b.len() - rest.len(),
            length,
        })
    }
}

/// gQUIC handshake tags (Suricata's `StreamTag`), by value.
const TAGS: &[(u32, &str)] = &[
    (0x4145_4144, "AEAD"),
    (0x4343_5254, "CCRT"),
    (0x4343_5300, "CCS"),
    (0x4345_5456, "CETV"),
    (0x4346_4357, "CFCW"),
    (0x4348_4c4f, "CHLO"),
    (0x434f_5054, "COPT"),
    (0x4353_4354, "CSCT"),
    (0x4354_494d, "CTIM"),
    (0x4943_534c, "ICSL"),
    (0x4952_5454, "IRTT"),
    (0x4b45_5853, "KEXS"),
    (0x4d49_4453, "MIDS"),
    (0x4d53_5043, "MSPC"),
    (0x4e4f_4e43, "NONC"),
    (0x4e4f_4e50, "NONP"),
    (0x5041_4400, "PAD"),
    (0x5044_4d44, "PDMD"),
    (0x5055_4253, "PUBS"),
    (0x5343_4944, "SCID"),
    (0x5343_4c53, "SCLS"),
    (0x5346_4357, "SFCW"),
    (0x534d_484c, "SMHL"),
    (0x534e_4900, "SNI"),
    (0x534e_4f00, "SNO"),
    (0x5354_4b00, "STK"),
    (0x5443_4944, "TCID"),
    (0x5541_4944, "UAID"),
    (0x5645_5200, "VER"),
    (0x584c_4354, "XLCT"),
];

fn tag_name(v: u32) -> Option<&'static str> {
    TAGS.iter().find(|t| t.0 == v).map(|t| t.1)
}

/// A TLS hello carried in CRYPTO frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CryptoHello {
    /// Whether it is a ClientHello.
    pub client: bool,
    /// The decoded hello.
    pub hello: Hello,
}

/// A CRYPTO fragment kept for reassembly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CryptoFrag {
    /// Offset (or, for a reassembly result, the bytes seen so far).
    pub offset: u64,
    /// Length.
    pub length: u64,
    /// Data.
    pub data: Vec<u8>,
}

/// A frame the parser keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A TLS ClientHello or ServerHello.
    Crypto(Box<CryptoHello>),
    /// CRYPTO data not (yet) a whole hello.
    CryptoFrag(CryptoFrag),
    /// A gQUIC stream frame; its handshake tags when it holds a whole tag message.
    Stream(Option<Vec<(&'static str, Vec<u8>)>>),
    /// Anything else.
    Other,
}

enum Hs {
    Hello(Box<CryptoHello>),
    Incomplete,
    Bad,
}

fn parse_handshake(d: &[u8]) -> Hs {
    let Some(&[ty, a, b, c]) = d.get(..4) else {
        return Hs::Incomplete;
    };
    let len = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
    let Some(body) = d.get(4..4 + len) else {
        return Hs::Incomplete;
    };
    let client = match ty {
        1 => true,
        2 => false,
        _ => return Hs::Bad,
    };
    match Hello::parse(body, client, &mut |_| {}) {
        Some(hello) => Hs::Hello(Box::new(CryptoHello { client, hello })),
        None => Hs::Bad,
    }
}

fn parse_tag_message(d: &[u8]) -> Option<Vec<(&'static str, Vec<u8>)>> {
    let (mt, r) = be32(d)?;
    tag_name(mt)?;
    let (n, r) = take(r, 4)?;
    let n = usize::from(u16::from_le_bytes([n[0], n[1]]));
    let (entries, mut r) = take(r, n.checked_mul(8)?)?;
    let mut tags = Vec::with_capacity(n);
    let mut prev = 0u32;
    for e in entries.chunks_exact(8) {
        let name = tag_name(u32::from_be_bytes([e[0], e[1], e[2], e[3]]))?;
        let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
        let len = off.checked_sub(prev)?;
        let (v, nr) = take(r, usize::try_from(len).ok()?)?;
        tags.push((name, v.to_vec()));
        prev = off;
        r = nr;
    }
    r.is_empty().then_some(tags)
}

fn stream_frame(b: &[u8], ty: u8) -> Option<(Frame, &[u8])> {
    let mut off_len = usize::from((ty & 0x1c) >> 2);
    if off_len != 0 {
        off_len += 1;
    }
    let r = take(b, usize::from((ty & 0x03) + 1))?.1;
    let r = take(r, off_len)?.1;
    let (len, r) = if ty & 0x20 != 0 {
        let (l, r) = take(r, 2)?;
        (usize::from(u16::from_be_bytes([l[0], l[1]])), r)
    } else {
        (r.len(), r)
    };
    let (data, r) = take(r, len)?;
    Some((Frame::Stream(parse_tag_message(data)), r))
}

fn decode_frame(b: &[u8]) -> Option<(Frame, &[u8])> {
    let (&ty, r) = b.split_first()?;
    if ty & 0x80 != 0 {
        return stream_frame(r, ty);
    }
    match ty {
        0x00 => {
            let n = r.iter().take_while(|&&x| x == 0).count();
            Some((Frame::Other, &r[n..]))
        }
        0x01 => Some((Frame::Other, r)),
        0x02 | 0x03 => {
            let (_, r) = varint(r)?;
            let (_, r) = varint(r)?;
            let (count, r) = varint(r)?;
            let (_, mut r) = varint(r)?;
            for _ in 0..count {
                // Each range takes at least two bytes: a huge count fails fast.
                r = varint(varint(r)?.1)?.1;
            }
            if ty == 0x03 {
                r = varint(varint(varint(r)?.1)?.1)?.1;
            }
            Some((Frame::Other, r))
        }
        0x06 => {
            let (offset, r) = varint(r)?;
            let (length, r) = varint(r)?;
            let (data, r) = take(r, usize::try_from(length).ok()?)?;
            let frag = || {
                Frame::CryptoFrag(CryptoFrag {
                    offset,
                    length,
                    data: data.to_vec(),
                })
            };
            if offset > 0 {
                return Some((frag(), r));
            }
            match parse_handshake(data) {
                Hs::Hello(h) => Some((Frame::Crypto(h), r)),
                Hs::Incomplete => Some((frag(), r)),
                Hs::Bad => None,
            }
        }
        0x08 => {
            let (_, r) = varint(r)?;
            let (len, r) = varint(r)?;
            let (data, r) = take(r, usize::try_from(u32::try_from(len).ok()?).ok()?)?;
            Some((Frame::Stream(parse_tag_message(data)), r))
        }
        _ => Some((Frame::Other, &[][..])),
    }
}

/// Decode the frames of a payload; CRYPTO fragments are put together with `past` (the
/// direction's earlier fragment, `past_len` bytes seen) as Suricata's `decode_frames`.
/// `None`: a frame does not decode.
pub fn decode_frames(mut b: &[u8], past: &[u8], past_len: u32) -> Option<Vec<Frame>> {
    let mut frames = Vec::new();
    while !b.is_empty() {
        let (f, r) = decode_frame(b)?;
        frames.push(f);
        b = r;
    }
    let mut max = past.len() as u64;
    let mut total = 0u64;
    for f in &frames {
        if let Frame::CryptoFrag(c) = f {
            max = max.max(c.offset.saturating_add(c.length));
            total = total.saturating_add(c.length);
        }
    }
    if max > 0 && max < MAX_CRYPTO_FRAG_LEN {
        let mut d = vec![0u8; max as usize];
        d[..past.len()].copy_from_slice(past);
        for f in &frames {
            if let Frame::CryptoFrag(c) = f {
                let s = c.offset as usize;
                d[s..s + c.data.len()].copy_from_slice(&c.data);
            }
        }
        let seen = total + u64::from(past_len);
        let keep = |d: Vec<u8>| {
            Frame::CryptoFrag(CryptoFrag {
                offset: seen,
                length: d.len() as u64,
                data: d,
            })
        };
        if seen >= max && total > 0 {
            match parse_handshake(&d) {
                Hs::Hello(h) => frames.push(Frame::Crypto(h)),
                Hs::Incomplete => frames.push(keep(d)),
                Hs::Bad => {}
            }
        } else {
            frames.push(keep(d));
        }
    } else if max >= MAX_CRYPTO_FRAG_LEN {
        frames.push(Frame::CryptoFrag(CryptoFrag {
            offset: 0,
            length: max,
            data: Vec::new(),
        }));
    }
    Some(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        assert_eq!(varint(&[0x25]), Some((0x25, &[][..])));
        assert_eq!(varint(&[0x7b, 0xbd]), Some((0x3bbd, &[][..])));
        assert_eq!(
            varint(&[0x9d, 0x7f, 0x3e, 0x7d]),
            Some((494_878_333, &[][..]))
        );
        assert_eq!(varint(&[0xc0]), None);
    }

    #[test]
    fn long_header_v1_initial() {
        // first, version 1, dcid 8, scid 0, token 0, length 2, pn, 1 byte
        let p = [
            0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x02, 0xaa, 0xbb,
        ];
        let h = Header::parse(&p).unwrap();
        assert_eq!(h.ty, PktType::Initial);
        assert_eq!(h.dcid, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!((h.hlen, h.length), (17, 2));
        // A length beyond the datagram is refused.
        let mut q = p;
        q[16] = 3;
        assert!(Header::parse(&q).is_none());
        for n in 0..p.len() {
            let _ = Header::parse(&p[..n]);
        }
    }

    #[test]
    fn gquic_tags_and_versions() {
        let mut m = Vec::new();
        m.extend_from_slice(b"CHLO");
        m.extend_from_slice(&[2, 0, 0, 0]);
        m.extend_from_slice(b"SNI\0");
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"UAID");
        m.extend_from_slice(&5u32.to_le_bytes());
        m.extend_from_slice(b"a.bxy");
        let tags = parse_tag_message(&m).unwrap();
        assert_eq!(
            tags,
            vec![("SNI", b"a.b".to_vec()), ("UAID", b"xy".to_vec())]
        );
        assert!(parse_tag_message(&m[..m.len() - 1]).is_none());
        assert_eq!(version_string(0x5130_3436), "Q046");
        assert_eq!(version_string(1), "1");
        assert_eq!(version_string(0x6b33_43cf), "v2");
    }

    #[test]
    fn crypto_fragments_are_joined() {
        // A ClientHello-like handshake header split in two CRYPTO frames.
        let hs = [1u8, 0, 0, 40];
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0u8; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        assert_eq!(body.len(), 41);
        let mut all = hs.to_vec();
        all[3] = 41;
        all.extend_from_slice(&body);
        let (a, b) = all.split_at(10);
        let mut p1 = vec![0x06, 0x00, a.len() as u8];
        p1.extend_from_slice(a);
        let f1 = decode_frames(&p1, &[], 0).unwrap();
        let Some(Frame::CryptoFrag(c)) = f1.last() else {
            panic!("{f1:?}")
        };
        let mut p2 = vec![0x06, 10, b.len() as u8];
        p2.extend_from_slice(b);
        let f2 = decode_frames(&p2, &c.data, c.offset as u32).unwrap();
        assert!(
            matches!(f2.last(), Some(Frame::Crypto(h)) if h.client && h.hello.ciphers == [0x1301])
        );
    }
}
