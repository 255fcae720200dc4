//! QUIC (IETF v1/v2 and drafts, Google gQUIC Q0xx) over UDP, equivalent to Suricata 7's
//! `rust/src/quic` parser (re-implemented from its behaviour):
//!
//! * detection: a probing parser on UDP ports 443 and 80 (a datagram whose first header
//!   decodes);
//! * each long-header packet of a datagram is one transaction of its direction, until the
//!   direction's TLS hello is seen; short-header packets end a datagram;
//! * Initial packets are unprotected with the Initial keys of RFC 9001 (derived from the
//!   client's first destination connection id; Q050, drafts 23-34, mvfst, v1 and v2 salts),
//!   CRYPTO frames are reassembled (up to 65535 bytes) into the ClientHello / ServerHello:
//!   SNI, extensions, JA3 / JA3S and JA4 (client);
//! * gQUIC handshake tag messages give SNI, user agent (`UAID`) and the CYU fingerprint;
//! * EVE `quic` records as Suricata's `logger.rs` (JA4 is not logged: Suricata's `quic.ja4`
//!   output option is off by default);
//! * events (Suricata's names): `failed_decrypt`, `error_on_data`, `error_on_header`,
//!   `crypto_frag_too_long`.

pub mod crypto;
pub mod parse;

use std::any::Any;

use shrike_output::JsonWriter;

use crate::anomaly::AppAnomaly;
use crate::common::txlist::{log_all, Tx, TxList};
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::tls::hello::md5_hex;
use crate::Dir;

use crypto::InitialKeys;
use parse::{decode_frames, Frame, Header, PktType, MAX_CRYPTO_FRAG_LEN};

/// Most live transactions per flow.
const MAX_TXS: usize = 256;

/// QUIC events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &[
    "failed_decrypt",
    "error_on_data",
    "error_on_header",
    "crypto_frag_too_long",
];
const EV_FAILED_DECRYPT: u8 = 0;
const EV_ERROR_ON_DATA: u8 = 1;
const EV_CRYPTO_FRAG_TOO_LONG: u8 = 3;

const BUF_VERSION: u16 = 0;
const BUF_SNI: u16 = 1;
const BUF_UA: u16 = 2;
const BUF_CYU_HASH: u16 = 3;
const BUF_CYU_STRING: u16 = 4;
const BUF_JA3_HASH: u16 = 5;
const BUF_JA3_STRING: u16 = 6;
const BUF_JA3S_HASH: u16 = 7;
const BUF_JA3S_STRING: u16 = 8;
const BUF_JA4: u16 = 9;

/// QUIC in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "quic",
    aliases: &[],
    ip_protos: &[17],
    ports: &[443, 80],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "quic.version",
            dir: None,
        },
        BufferDesc {
            name: "quic.sni",
            dir: None,
        },
        BufferDesc {
            name: "quic.ua",
            dir: None,
        },
        BufferDesc {
            name: "quic.cyu.hash",
            dir: None,
        },
        BufferDesc {
            name: "quic.cyu.string",
            dir: None,
        },
        BufferDesc {
            name: "ja3.hash",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ja3.string",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ja3s.hash",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "ja3s.string",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "ja4.hash",
            dir: Some(Dir::ToServer),
        },
    ],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

/// Suricata's QUIC probing parser: the first header decodes.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    if Header::parse(data).is_some() {
        Probe::Yes
    } else {
        Probe::No
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(QuicState::default())
}

/// One TLS extension as logged: type and values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    /// Extension type.
    pub etype: u16,
    /// Values (SNI names, ALPN protocols, signature algorithms, versions).
    pub values: Vec<Vec<u8>>,
}

/// One QUIC transaction (a packet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuicTx {
    /// The packet's header.
    pub header: Option<Header>,
    /// CYU fingerprints: (hash, string).
    pub cyu: Vec<(String, String)>,
    /// Server name.
    pub sni: Option<Vec<u8>>,
    /// gQUIC user agent.
    pub ua: Option<Vec<u8>>,
    /// TLS extensions of the hello.
    pub extv: Vec<Extension>,
    /// JA3 (client) or JA3S (server) string.
    pub ja3: Option<String>,
    /// JA4 (client).
    pub ja4: Option<String>,
    /// Whether the packet went to the server.
    pub client: bool,
}

/// Per-flow QUIC state.
#[derive(Debug)]
pub struct QuicState {
    txs: TxList<QuicTx>,
    keys: Option<InitialKeys>,
    frag: [Vec<u8>; 2],
    frag_len: [u32; 2],
    hello: [bool; 2],
    retried: bool,
}

impl Default for QuicState {
    fn default() -> Self {
        QuicState {
            txs: TxList::new(MAX_TXS),
            keys: None,
            frag: [Vec::new(), Vec::new()],
            frag_len: [0; 2],
            hello: [false; 2],
            retried: false,
        }
    }
}

fn di(dir: Dir) -> usize {
    usize::from(dir == Dir::ToClient)
}

/// tls-parser's name of a TLS version (what Suricata logs in `supported_versions`).
fn tls_version_name(v: u16) -> String {
    match v {
        0x0300 => "Ssl30".into(),
        0x0301 => "Tls10".into(),
        0x0302 => "Tls11".into(),
        0x0303 => "Tls12".into(),
        0x0304 => "Tls13".into(),
        0x7f12..=0x7f17 => format!("Tls13Draft{}", v - 0x7f00),
        0xfeff => "DTls10".into(),
        0xfefd => "DTls12".into(),
        _ => format!("TlsVersion({v} / 0x{v:x})"),
    }
}

fn join_dec(s: &mut String, it: impl Iterator<Item = u16>) {
    for (i, v) in it.enumerate() {
        if i > 0 {
            s.push('-');
        }
        s.push_str(&v.to_string());
    }
}

fn cyu_version(v: u32) -> Option<&'static str> {
    match v {
        0x5130_3433 => Some("43"),
        0x5130_3434 | 0x5130_3435 => Some("44"),
        0x5130_3436 => Some("46"),
        _ => None,
    }
}

impl QuicState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<QuicTx>> {
        self.txs.get(id)
    }

    fn push(&mut self, dir: Dir, tx: QuicTx, ev: Option<u8>) {
        let raised: Vec<u8> = ev.into_iter().collect();
        self.txs.push_raised(dir, &raised, tx);
    }

    /// Remove header protection and decrypt an Initial packet; the plaintext payload.
    fn decrypt(&self, dir: Dir, h: &Header, pkt: &[u8]) -> Option<Vec<u8>> {
        let keys = self.keys.as_ref()?;
        let k = if dir == Dir::ToServer {
            &keys.client
        } else {
            &keys.server
        };
        let end = h.hlen.checked_add(h.length)?;
        let body = pkt.get(h.hlen..end)?;
        if body.len() < 4 + 16 {
            return None;
        }
        let sample: [u8; 16] = body[4..20].try_into().ok()?;
        let mask = k.mask(&sample);
        let first = pkt[0] ^ (mask[0] & if pkt[0] & 0x80 != 0 { 0x0f } else { 0x1f });
        let pn_len = usize::from(first & 3) + 1;
        let mut aad = pkt[..h.hlen + pn_len].to_vec();
        aad[0] = first;
        let mut pn = 0u64;
        for (i, m) in mask[1..=pn_len].iter().enumerate() {
            let b = aad[h.hlen + i] ^ m;
            aad[h.hlen + i] = b;
            pn = (pn << 8) | u64::from(b);
        }
        let mut out = body.get(pn_len..)?.to_vec();
        let n = k.open(pn, &aad, &mut out)?;
        out.truncate(n);
        Some(out)
    }

    fn handle_frames(&mut self, dir: Dir, header: Header, frames: &[Frame]) {
        let d = di(dir);
        let to_server = dir == Dir::ToServer;
        let mut tx = QuicTx {
            client: to_server,
            ..QuicTx::default()
        };
        let mut frag_long = false;
        for f in frames {
            match f {
                Frame::Stream(Some(tags)) => {
                    for (tag, v) in tags {
                        match *tag {
                            "SNI" => tx.sni = Some(v.clone()),
                            "UAID" => tx.ua = Some(v.clone()),
                            _ => {}
                        }
                        if tx.sni.is_some() && tx.ua.is_some() {
                            break;
                        }
                    }
                    if let Some(ver) = cyu_version(header.version) {
                        let names: Vec<&str> = tags.iter().map(|t| t.0).collect();
                        let s = format!("{ver},{}", names.join("-"));
                        tx.cyu.push((md5_hex(&s), s));
                    }
                }
                Frame::CryptoFrag(c) => {
                    if c.length < MAX_CRYPTO_FRAG_LEN {
                        self.frag[d].clone_from(&c.data);
                        self.frag_len[d] = c.offset as u32;
                    } else {
                        frag_long = true;
                    }
                }
                Frame::Crypto(c) => {
                    let h = &c.hello;
                    let mut ja3 = String::with_capacity(128);
                    ja3.push_str(&h.version.to_string());
                    ja3.push(',');
                    join_dec(&mut ja3, h.ciphers.iter().copied());
                    ja3.push(',');
                    join_dec(&mut ja3, h.extensions.iter().copied());
                    if c.client && !h.extensions.is_empty() {
                        ja3.push(',');
                        join_dec(&mut ja3, h.groups.iter().copied());
                        ja3.push(',');
                        join_dec(&mut ja3, h.point_formats.iter().map(|&p| u16::from(p)));
                    }
                    tx.ja3 = Some(ja3);
                    if to_server && c.client {
                        tx.ja4 = Some(h.ja4(true));
                    }
                    for &e in &h.extensions {
                        let values: Vec<Vec<u8>> = match e {
                            0 => h.sni.iter().cloned().collect(),
                            43 => h
                                .supported_versions
                                .iter()
                                .map(|&v| tls_version_name(v).into_bytes())
                                .collect(),
                            13 => h
                                .sig_algs
                                .iter()
                                .map(|v| v.to_string().into_bytes())
                                .collect(),
                            16 => h.alpn.clone(),
                            _ => Vec::new(),
                        };
                        if e == 0 && !values.is_empty() {
                            tx.sni = values.first().cloned();
                        }
                        tx.extv.push(Extension { etype: e, values });
                    }
                    self.hello[d] = true;
                }
                _ => {}
            }
        }
        tx.header = Some(header);
        self.push(dir, tx, frag_long.then_some(EV_CRYPTO_FRAG_TOO_LONG));
    }

    /// One datagram; false when the parser gave up on it (Suricata's error result).
    pub fn parse_datagram(&mut self, dir: Dir, input: &[u8]) -> bool {
        let d = di(dir);
        let mut buf = input;
        while !buf.is_empty() {
            let Some(header) = Header::parse(buf) else {
                return false;
            };
            if self.hello[d] || header.ty == PktType::Short {
                return true;
            }
            if self.keys.is_none() && header.ty == PktType::Initial {
                self.keys = crypto::initial_keys(header.version, &header.dcid);
            } else if dir == Dir::ToClient
                && self.keys.is_some()
                && header.ty == PktType::Retry
                && !self.retried
            {
                self.hello[0] = false;
                self.keys = None;
                self.retried = true;
            }
            let end = header.hlen + header.length;
            let (pkt, next) = buf.split_at(end.min(buf.len()));
            if header.ty != PktType::Initial {
                self.push(
                    dir,
                    QuicTx {
                        header: Some(header),
                        client: dir == Dir::ToServer,
                        ..QuicTx::default()
                    },
                    None,
                );
                buf = next;
                continue;
            }
            let mut payload = &pkt[header.hlen.min(pkt.len())..];
            let plain;
            if self.keys.is_some() && !payload.is_empty() {
                match self.decrypt(dir, &header, pkt) {
                    Some(p) => plain = p,
                    None => {
                        self.push_event(dir, header, EV_FAILED_DECRYPT);
                        return false;
                    }
                }
                payload = &plain;
            }
            buf = next;
            let past = std::mem::take(&mut self.frag[d]);
            let past_len = std::mem::take(&mut self.frag_len[d]);
            match decode_frames(payload, &past, past_len) {
                Some(frames) => self.handle_frames(dir, header, &frames),
                None => {
                    self.push_event(dir, header, EV_ERROR_ON_DATA);
                    return false;
                }
            }
        }
        true
    }

    fn push_event(&mut self, dir: Dir, header: Header, ev: u8) {
        self.push(
            dir,
            QuicTx {
                header: Some(header),
                client: dir == Dir::ToServer,
                ..QuicTx::default()
            },
            Some(ev),
        );
    }
}

/// The TLS extension names Suricata's QUIC logger knows.
fn extension_name(e: u16) -> Option<&'static str> {
    Some(match e {
        0 => "server_name",
        1 => "max_fragment_length",
        2 => "client_certificate_url",
        3 => "trusted_ca_keys",
        4 => "truncated_hmac",
        5 => "status_request",
        6 => "user_mapping",
        7 => "client_authz",
        8 => "server_authz",
        9 => "cert_type",
        10 => "supported_groups",
        11 => "ec_point_formats",
        12 => "srp",
        13 => "signature_algorithms",
        14 => "use_srtp",
        15 => "heartbeat",
        16 => "alpn",
        17 => "status_request_v2",
        18 => "signed_certificate_timestamp",
        19 => "client_certificate_type",
        20 => "server_certificate_type",
        21 => "padding",
        22 => "encrypt_then_mac",
        23 => "extended_master_secret",
        24 => "token_binding",
        25 => "cached_info",
        26 => "tls_lts",
        27 => "compress_certificate",
        28 => "record_size_limit",
        29 => "pwd_protect",
        30 => "pwd_clear",
        31 => "password_salt",
        32 => "ticket_pinning",
        33 => "tls_cert_with_extern_psk",
        34 => "delegated_credentials",
        35 => "session_ticket",
        36 => "tlmsp",
        37 => "tlmsp_proxying",
        38 => "tlmsp_delegate",
        39 => "supported_ekt_ciphers",
        41 => "pre_shared_key",
        42 => "early_data",
        43 => "supported_versions",
        44 => "cookie",
        45 => "psk_key_exchange_modes",
        47 => "certificate_authorities",
        48 => "oid_filters",
        49 => "post_handshake_auth",
        50 => "signature_algorithms_cert",
        51 => "key_share",
        52 => "transparency_info",
        53 => "connection_id_deprecated",
        54 => "connection_id",
        55 => "external_id_hash",
        56 => "external_session_id",
        57 => "quic_transport_parameters",
        58 => "ticket_request",
        59 => "dnssec_chain",
        13172 => "next_protocol_negotiation",
        65281 => "renegotiation_info",
        _ => return None,
    })
}

/// The `quic` object's members (Suricata's `log_template`; `ja4`: the `ja4` option).
pub fn write_quic(t: &QuicTx, ja4: bool, w: &mut JsonWriter) {
    if let Some(h) = t.header.as_ref().filter(|h| h.ty != PktType::Short) {
        w.set_str("version", &parse::version_string(h.version));
        if let Some(s) = &t.sni {
            w.set_str("sni", &String::from_utf8_lossy(s));
        }
        if let Some(s) = &t.ua {
            w.set_str("ua", &String::from_utf8_lossy(s));
        }
    }
    if !t.cyu.is_empty() {
        w.open_array("cyu");
        for (hash, string) in &t.cyu {
            w.start_object();
            w.set_str("hash", hash);
            w.set_str("string", string);
            w.close();
        }
        w.close();
    }
    if let Some(j) = &t.ja3 {
        w.open_object(if t.client { "ja3" } else { "ja3s" });
        w.set_str("hash", &md5_hex(j));
        w.set_str("string", j);
        w.close();
    }
    if let Some(j) = t.ja4.as_ref().filter(|_| ja4) {
        w.set_str("ja4", j);
    }
    if !t.extv.is_empty() {
        w.open_array("extensions");
        for e in &t.extv {
            w.start_object();
            if let Some(n) = extension_name(e.etype) {
                w.set_str("name", n);
            }
            w.set_u64("type", u64::from(e.etype));
            if !e.values.is_empty() {
                w.open_array("values");
                for v in &e.values {
                    w.str(&String::from_utf8_lossy(v));
                }
                w.close();
            }
            w.close();
        }
        w.close();
    }
}

impl AppParser for QuicState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        !self.parse_datagram(dir, data)
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.txs.count()
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.txs.count()
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        self.txs.live(dir, out);
    }

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        let t = &t.data;
        match buf {
            BUF_VERSION => match &t.header {
                Some(h) if h.first & 0x80 != 0 && h.has_version => f(&h.version.to_be_bytes()),
                _ => false,
            },
            BUF_SNI => t.sni.as_deref().is_some_and(&mut *f),
            BUF_UA => t.ua.as_deref().is_some_and(&mut *f),
            BUF_CYU_HASH => t.cyu.iter().any(|c| f(c.0.as_bytes())),
            BUF_CYU_STRING => t.cyu.iter().any(|c| f(c.1.as_bytes())),
            BUF_JA3_HASH | BUF_JA3S_HASH => t
                .ja3
                .as_deref()
                .is_some_and(|j| (t.client == (buf == BUF_JA3_HASH)) && f(md5_hex(j).as_bytes())),
            BUF_JA3_STRING | BUF_JA3S_STRING => t
                .ja3
                .as_deref()
                .is_some_and(|j| (t.client == (buf == BUF_JA3_STRING)) && f(j.as_bytes())),
            BUF_JA4 => t.ja4.as_deref().is_some_and(|j| f(j.as_bytes())),
            _ => false,
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let ja4 = c.opts.quic_ja4;
        log_all(&mut self.txs, c, "quic", |t, w| {
            w.open_object("quic");
            write_quic(&t.data, ja4, w);
            w.close();
            true
        });
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        w.open_object("quic");
        write_quic(&t.data, false, w);
        w.close();
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests;
