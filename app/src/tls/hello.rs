//! ClientHello / ServerHello decoding and the JA3, JA3S and JA4 fingerprints.
//!
//! Fingerprints follow Suricata 7 (re-implemented from its documented behaviour):
//! * JA3 `version,ciphers,extensions,groups,point_formats` with decimal values joined by `-`,
//!   GREASE values left out, MD5 in lowercase hex;
//! * JA3S `version,cipher,extensions`;
//! * JA4 (FoxIO): `t{ver}{d|i}{nciphers:02}{nexts:02}{alpn first+last}_{sha256(sorted ciphers)[..12]}_{sha256(sorted exts minus SNI/ALPN "_" sigalgs)[..12]}`.

use md5::{Digest as _, Md5};
use sha2::Sha256;

use super::TlsEvent;

/// Whether a 16-bit value is a GREASE value (RFC 8701).
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && (v >> 8) == (v & 0xff)
}

/// What a hello carried.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// Legacy version field.
    pub version: u16,
    /// The 32-byte random.
    pub random: Vec<u8>,
    /// Session id.
    pub session_id: Vec<u8>,
    /// Cipher suites (client: all offered; server: the one chosen).
    pub ciphers: Vec<u16>,
    /// Compression methods.
    pub compression: Vec<u8>,
    /// Extension types in order.
    pub extensions: Vec<u16>,
    /// Server name (first host_name of the first SNI extension).
    pub sni: Option<Vec<u8>>,
    /// supported_versions (client: the list; server: the selected version).
    pub supported_versions: Vec<u16>,
    /// supported_groups (elliptic curves).
    pub groups: Vec<u16>,
    /// ec_point_formats.
    pub point_formats: Vec<u8>,
    /// signature_algorithms.
    pub sig_algs: Vec<u16>,
    /// ALPN protocol names in order.
    pub alpn: Vec<Vec<u8>>,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2)? {
        &[x, y] => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

/// A `len8` or `len16` prefixed vector starting at `at`; returns the body and the next offset.
fn vec_at(b: &[u8], at: usize, len_bytes: usize) -> Option<(&[u8], usize)> {
    let len = match len_bytes {
        1 => *b.get(at)? as usize,
        _ => be16(b, at)? as usize,
    };
    let start = at + len_bytes;
    Some((b.get(start..start + len)?, start + len))
}

fn u16s(b: &[u8]) -> impl Iterator<Item = u16> + '_ {
    b.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]]))
}

/// Cap on items kept per list (ciphers, extensions, …): bounds memory on hostile hellos.
const MAX_ITEMS: usize = 512;

impl Hello {
    /// Decode a ClientHello (`client`) or ServerHello body (after the 4-byte handshake
    /// header). Events for bad SNI data go to `ev`. Returns `None` when the fixed part is
    /// truncated.
    pub fn parse(b: &[u8], client: bool, ev: &mut dyn FnMut(TlsEvent)) -> Option<Hello> {
        let mut h = Hello {
            version: be16(b, 0)?,
            random: b.get(2..34)?.to_vec(),
            ..Hello::default()
        };
        // TLS 1.3 drafts before 22 dropped the session id and compression from ServerHello.
        let early_draft = !client && (0x7f00..0x7f16).contains(&h.version);
        let mut p = 34;
        if !early_draft {
            let (sid, np) = vec_at(b, 34, 1)?;
            h.session_id = sid.to_vec();
            p = np;
        }
        if early_draft {
            h.ciphers.push(be16(b, p)?);
            p += 2;
        } else if client {
            let (cs, np) = vec_at(b, p, 2)?;
            h.ciphers.extend(u16s(cs).take(MAX_ITEMS));
            let (comp, np) = vec_at(b, np, 1)?;
            h.compression = comp.to_vec();
            p = np;
        } else {
            h.ciphers.push(be16(b, p)?);
            h.compression.push(*b.get(p + 2)?);
            p += 3;
        }
        // Extensions are optional; a truncated block keeps what was decoded.
        let Some((exts, _)) = vec_at(b, p, 2) else {
            return Some(h);
        };
        let mut q = 0;
        let mut sni_seen = false;
        while let (Some(t), Some((data, nq))) = (be16(exts, q), vec_at(exts, q + 2, 2)) {
            q = nq;
            if h.extensions.len() < MAX_ITEMS {
                h.extensions.push(t);
            }
            match t {
                0 if client => {
                    if sni_seen {
                        ev(TlsEvent::MultipleSniExtensions);
                        continue;
                    }
                    sni_seen = true;
                    h.parse_sni(data, ev);
                }
                43 if client => {
                    if let Some((list, _)) = vec_at(data, 0, 1) {
                        h.supported_versions.extend(u16s(list).take(MAX_ITEMS));
                    }
                }
                43 => h.supported_versions.extend(be16(data, 0)),
                10 => {
                    if let Some((list, _)) = vec_at(data, 0, 2) {
                        h.groups.extend(u16s(list).take(MAX_ITEMS));
                    }
                }
                11 => {
                    if let Some((list, _)) = vec_at(data, 0, 1) {
                        h.point_formats.extend(list.iter().take(MAX_ITEMS));
                    }
                }
                13 => {
                    if let Some((list, _)) = vec_at(data, 0, 2) {
                        h.sig_algs.extend(u16s(list).take(MAX_ITEMS));
                    }
                }
                16 => {
                    if let Some((list, _)) = vec_at(data, 0, 2) {
                        let mut r = 0;
                        while let Some((name, nr)) = vec_at(list, r, 1) {
                            if h.alpn.len() < 64 {
                                h.alpn.push(name.to_vec());
                            }
                            r = nr;
                        }
                    }
                }
                _ => {}
            }
        }
        Some(h)
    }

    fn parse_sni(&mut self, data: &[u8], ev: &mut dyn FnMut(TlsEvent)) {
        let Some((list, _)) = vec_at(data, 0, 2) else {
            ev(TlsEvent::InvalidSniLength);
            return;
        };
        match list.first() {
            Some(0) => {}
            Some(_) => {
                ev(TlsEvent::InvalidSniType);
                return;
            }
            None => {
                ev(TlsEvent::InvalidSniLength);
                return;
            }
        }
        match vec_at(list, 1, 2) {
            Some((name, _)) => self.sni = Some(name.to_vec()),
            None => ev(TlsEvent::InvalidSniLength),
        }
    }

    /// The version a ServerHello selected: supported_versions when present (TLS 1.3), else
    /// the legacy field.
    pub fn selected_version(&self) -> u16 {
        self.supported_versions
            .first()
            .copied()
            .unwrap_or(self.version)
    }

    /// The JA3 string of a ClientHello.
    pub fn ja3_string(&self) -> String {
        let mut s = String::with_capacity(128);
        push_num(&mut s, self.version);
        s.push(',');
        join_dec(&mut s, self.ciphers.iter().copied());
        s.push(',');
        join_dec(&mut s, self.extensions.iter().copied());
        s.push(',');
        join_dec(&mut s, self.groups.iter().copied());
        s.push(',');
        join_dec(&mut s, self.point_formats.iter().map(|&v| v as u16));
        s
    }

    /// The JA3S string of a ServerHello.
    pub fn ja3s_string(&self) -> String {
        let mut s = String::with_capacity(64);
        push_num(&mut s, self.version);
        s.push(',');
        join_dec(&mut s, self.ciphers.iter().copied());
        s.push(',');
        join_dec(&mut s, self.extensions.iter().copied());
        s
    }

    /// The JA4 fingerprint of a ClientHello over TCP (`quic` selects the `q` prefix).
    pub fn ja4(&self, quic: bool) -> String {
        let version = std::iter::once(self.version)
            .chain(self.supported_versions.iter().copied())
            .filter(|v| !is_grease(*v))
            .max();
        let ver = match version {
            Some(0x0304) => "13",
            Some(0x0303) => "12",
            Some(0x0302) => "11",
            Some(0x0301) => "10",
            Some(0x0300) => "s3",
            _ => "00",
        };
        let mut ciphers: Vec<u16> = self
            .ciphers
            .iter()
            .copied()
            .filter(|v| !is_grease(*v))
            .collect();
        let exts_all = self.extensions.iter().copied().filter(|v| !is_grease(*v));
        let nexts = exts_all.clone().count();
        let sni = self.extensions.contains(&0);
        let mut exts: Vec<u16> = exts_all.filter(|&e| e != 0 && e != 16).collect();
        let mut alpn = ['0', '0'];
        if let Some(first) = self.alpn.first() {
            if let (Some(&a), Some(&z)) = (first.first(), first.last()) {
                let grease2 = first.len() == 2 && is_grease(u16::from_be_bytes([a, z]));
                if first.len() > 1 && !grease2 {
                    alpn = [char::from(a), char::from(z)];
                }
            }
        }
        let mut s = format!(
            "{}{}{}{:02}{:02}{}{}",
            if quic { 'q' } else { 't' },
            ver,
            if sni { 'd' } else { 'i' },
            ciphers.len().min(99),
            nexts.min(99),
            alpn[0],
            alpn[1]
        );
        ciphers.sort_unstable();
        exts.sort_unstable();
        let mut raw = String::with_capacity(256);
        join_hex(&mut raw, ciphers.iter().copied());
        s.push('_');
        push_sha256_12(&mut s, raw.as_bytes());
        raw.clear();
        join_hex(&mut raw, exts.iter().copied());
        raw.push('_');
        join_hex(
            &mut raw,
            self.sig_algs.iter().copied().filter(|v| !is_grease(*v)),
        );
        s.push('_');
        push_sha256_12(&mut s, raw.as_bytes());
        s
    }
}

fn push_num(s: &mut String, v: u16) {
    use std::fmt::Write;
    let _ = write!(s, "{v}");
}

fn join_dec(s: &mut String, it: impl Iterator<Item = u16>) {
    let mut first = true;
    for v in it.filter(|v| !is_grease(*v)) {
        if !first {
            s.push('-');
        }
        first = false;
        push_num(s, v);
    }
}

fn join_hex(s: &mut String, it: impl Iterator<Item = u16>) {
    use std::fmt::Write;
    let mut first = true;
    for v in it {
        if !first {
            s.push(',');
        }
        first = false;
        let _ = write!(s, "{v:04x}");
    }
}

fn push_sha256_12(s: &mut String, data: &[u8]) {
    let d = Sha256::digest(data);
    for b in d.iter().take(6) {
        push_hex_byte(s, *b);
    }
}

fn push_hex_byte(s: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    s.push(HEX[(b >> 4) as usize] as char);
    s.push(HEX[(b & 0xf) as usize] as char);
}

/// Lowercase hex MD5 of `s` (the JA3/JA3S hash).
pub fn md5_hex(s: &str) -> String {
    let d = Md5::digest(s.as_bytes());
    let mut out = String::with_capacity(32);
    for b in d.iter() {
        push_hex_byte(&mut out, *b);
    }
    out
}
