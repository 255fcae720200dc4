//! TLS/SSL, equivalent to Suricata 7's SSL parser (app-layer-ssl.c) for what detection and
//! EVE use.
//!
//! * [`probe`] recognises TLS records and SSLv2 hellos;
//! * [`TlsState::parse`] takes the reassembled stream per direction: records may be split
//!   anywhere or batched, handshake messages may span records;
//! * ClientHello/ServerHello ([`Hello`]), certificate chains ([`CertInfo`] for the first),
//!   JA3/JA3S/JA4, alerts, heartbeats, ChangeCipherSpec; after ChangeCipherSpec (or a TLS 1.3
//!   ServerHello) a direction is encrypted and its records are skipped by length only;
//! * one transaction per flow (Suricata's model); buffers through [`TlsState::buffer`];
//! * events with Suricata's names ([`TlsEvent::name`]).

pub mod cert;
pub mod eve;
pub mod hello;
mod proto;
mod state;

pub use cert::CertInfo;
pub use hello::Hello;
pub use proto::PROTOCOL;
pub use state::{
    TlsState, STATE_CLIENT_HELLO, STATE_CLIENT_KEYX, STATE_SERVER_HELLO, STATE_SERVER_KEYX,
    STATE_UNKNOWN,
};

use crate::Dir;
use std::sync::atomic::{AtomicBool, Ordering};

/// JA3/JA3S computed (Suricata's process-wide `ssl_config.enable_ja3`): turned on by
/// `app-layer.protocols.tls.ja3-fingerprints: yes` or by loading a rule with a ja3 keyword
/// (`auto`, the default), never when the setting is `no`.
static JA3_ENABLED: AtomicBool = AtomicBool::new(false);
static JA3_DISABLED: AtomicBool = AtomicBool::new(false);
/// JA4 likewise (`ja4-fingerprints`, a rule with `ja4.hash`).
static JA4_ENABLED: AtomicBool = AtomicBool::new(false);
static JA4_DISABLED: AtomicBool = AtomicBool::new(false);

/// A rule needs JA3/JA3S (Suricata's `SSLEnableJA3`): on unless configured off.
pub fn enable_ja3() {
    if !JA3_DISABLED.load(Ordering::Relaxed) {
        JA3_ENABLED.store(true, Ordering::Relaxed);
    }
}

/// A rule needs JA4 (Suricata's `SSLEnableJA4`): on unless configured off.
pub fn enable_ja4() {
    if !JA4_DISABLED.load(Ordering::Relaxed) {
        JA4_ENABLED.store(true, Ordering::Relaxed);
    }
}

/// Whether JA3/JA3S are computed.
pub fn ja3_enabled() -> bool {
    JA3_ENABLED.load(Ordering::Relaxed)
}

/// Whether JA4 is computed.
pub fn ja4_enabled() -> bool {
    JA4_ENABLED.load(Ordering::Relaxed)
}

/// `app-layer.protocols.tls` settings shrike applies.
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct TlsSettings {
    /// `ja3-fingerprints`: `yes`, `no` or `auto` (default: on when a rule needs it).
    pub ja3_fingerprints: Option<String>,
    /// `ja4-fingerprints`: `yes`, `no` or `auto` (default: on when a rule needs it).
    pub ja4_fingerprints: Option<String>,
}

impl TlsSettings {
    /// Apply the settings to the process-wide switches (Suricata's `CheckJA3Enabled`,
    /// `CheckJA4Enabled`); an unknown value is `auto`.
    pub fn apply(&self) {
        for (v, on, off) in [
            (&self.ja3_fingerprints, &JA3_ENABLED, &JA3_DISABLED),
            (&self.ja4_fingerprints, &JA4_ENABLED, &JA4_DISABLED),
        ] {
            match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
                Some("yes" | "true" | "on" | "1") => on.store(true, Ordering::Relaxed),
                Some("no" | "false" | "off" | "0") => {
                    off.store(true, Ordering::Relaxed);
                    on.store(false, Ordering::Relaxed);
                }
                _ => {}
            }
        }
    }
}

/// Parser options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsConfig {
    /// Always compute JA3/JA3S (tests; the engine uses [`ja3_enabled`]).
    pub ja3: bool,
    /// Always compute JA4 (tests; the engine uses [`ja4_enabled`]).
    pub ja4: bool,
    /// Largest handshake message reassembled (bytes); larger ones are dropped and counted.
    pub max_handshake_len: usize,
    /// Most certificates kept per chain.
    pub max_chain: usize,
}

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            ja3: false,
            ja4: false,
            max_handshake_len: 256 * 1024,
            max_chain: 16,
        }
    }
}

macro_rules! tls_events {
    ($($v:ident = $n:literal,)*) => {
        /// TLS app-layer events (Suricata 7 names, see `tls-events.rules`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum TlsEvent { $(
            #[doc = concat!("`tls.", $n, "`")]
            $v,
        )* }

        impl TlsEvent {
            /// Every event.
            pub const ALL: &'static [TlsEvent] = &[$(TlsEvent::$v,)*];

            /// Suricata's name (`app-layer-event:tls.<name>`).
            pub fn name(self) -> &'static str {
                match self { $(TlsEvent::$v => $n,)* }
            }
        }
    };
}

tls_events! {
    InvalidSslv2Header = "invalid_sslv2_header",
    InvalidTlsHeader = "invalid_tls_header",
    InvalidRecordVersion = "invalid_record_version",
    InvalidRecordType = "invalid_record_type",
    InvalidHandshakeMessage = "invalid_handshake_message",
    InvalidCertificate = "invalid_certificate",
    CertificateInvalidLength = "certificate_invalid_length",
    ErrorMessageEncountered = "error_message_encountered",
    InvalidSslRecord = "invalid_ssl_record",
    HeartbeatMessage = "heartbeat_message",
    OverflowHeartbeatMessage = "overflow_heartbeat_message",
    InvalidHeartbeatMessage = "invalid_heartbeat_message",
    DataleakHeartbeatMismatch = "dataleak_heartbeat_mismatch",
    MultipleSniExtensions = "multiple_sni_extensions",
    InvalidSniType = "invalid_sni_type",
    InvalidSniLength = "invalid_sni_length",
    HandshakeInvalidLength = "handshake_invalid_length",
    TooManyRecordsInPacket = "too_many_records_in_packet",
    CertificateInvalidVersion = "certificate_invalid_version",
    CertificateInvalidSerial = "certificate_invalid_serial",
    CertificateInvalidAlgorithmIdentifier = "certificate_invalid_algorithmidentifier",
    CertificateInvalidX509Name = "certificate_invalid_x509name",
    CertificateInvalidDate = "certificate_invalid_date",
    CertificateInvalidExtensions = "certificate_invalid_extensions",
    CertificateInvalidDer = "certificate_invalid_der",
    CertificateInvalidSubject = "certificate_invalid_subject",
    CertificateInvalidIssuer = "certificate_invalid_issuer",
    CertificateInvalidValidity = "certificate_invalid_validity",
}

impl TlsEvent {
    /// The event for a name, if any.
    pub fn from_name(n: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|e| e.name() == n)
    }
}

/// A set of [`TlsEvent`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlsEvents(u32);

impl TlsEvents {
    /// Add an event.
    pub fn set(&mut self, e: TlsEvent) {
        self.0 |= 1 << (e as u8);
    }
    /// Whether `e` is set.
    pub fn has(self, e: TlsEvent) -> bool {
        self.0 & (1 << (e as u8)) != 0
    }
    /// Whether none is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The events of `self` that are not in `other`.
    pub fn without(self, other: TlsEvents) -> TlsEvents {
        TlsEvents(self.0 & !other.0)
    }
    /// The events set.
    pub fn iter(self) -> impl Iterator<Item = TlsEvent> {
        TlsEvent::ALL.iter().copied().filter(move |e| self.has(*e))
    }
}

/// TLS parser counters (merge to aggregate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlsStats {
    /// TLS records seen.
    pub records: u64,
    /// SSLv2 records seen.
    pub sslv2_records: u64,
    /// SSLv2 ClientHellos recognised.
    pub sslv2_client_hellos: u64,
    /// Handshake messages decoded.
    pub handshake_messages: u64,
    /// Handshake messages over the size limit.
    pub handshake_too_long: u64,
    /// Alert records.
    pub alerts: u64,
    /// Distinct events raised.
    pub events: u64,
}

impl TlsStats {
    /// Add `o` into `self`.
    pub fn merge(&mut self, o: &Self) {
        self.records += o.records;
        self.sslv2_records += o.sslv2_records;
        self.sslv2_client_hellos += o.sslv2_client_hellos;
        self.handshake_messages += o.handshake_messages;
        self.handshake_too_long += o.handshake_too_long;
        self.alerts += o.alerts;
        self.events += o.events;
    }

    /// Name each counter (shrike's names; Suricata has no per-reason TLS counters).
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("app_layer.tls.records", self.records);
        f("app_layer.tls.sslv2_records", self.sslv2_records);
        f(
            "app_layer.tls.sslv2_client_hellos",
            self.sslv2_client_hellos,
        );
        f("app_layer.tls.handshake_messages", self.handshake_messages);
        f("app_layer.tls.handshake_too_long", self.handshake_too_long);
        f("app_layer.tls.alerts", self.alerts);
        f("app_layer.tls.events", self.events);
    }
}

/// Outcome of protocol probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// It is TLS/SSL.
    Yes,
    /// Not TLS.
    No,
    /// Not enough data yet.
    NeedMore,
}

/// Probe the first bytes of a stream direction: a TLS handshake (or, to the client, alert)
/// record with a 3.x version, or an SSLv2 ClientHello (to the server) / ServerHello.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    let Some(&b0) = data.first() else {
        return Probe::NeedMore;
    };
    if b0 & 0x80 != 0 {
        // SSLv2 2-byte header: length, then message type and version.
        let (Some(&ty), Some(v)) = (data.get(2), data.get(3..5)) else {
            return Probe::NeedMore;
        };
        let len = (((b0 & 0x7f) as usize) << 8) | *data.get(1).unwrap_or(&0) as usize;
        let ok = match (dir, ty) {
            (Dir::ToServer, 1) => matches!(v, [0, 2] | [3, 0..=3]),
            (Dir::ToClient, 4) => true,
            _ => false,
        };
        return if ok && len >= 3 {
            Probe::Yes
        } else {
            Probe::No
        };
    }
    let ok_type = match dir {
        Dir::ToServer => b0 == 22,
        Dir::ToClient => b0 == 22 || b0 == 21,
    };
    if !ok_type {
        return Probe::No;
    }
    match (data.get(1), data.get(2)) {
        (Some(3), Some(&minor)) if minor <= 4 => Probe::Yes,
        (Some(3), None) | (None, _) => Probe::NeedMore,
        _ => Probe::No,
    }
}

/// Suricata's name for a TLS version (`SSLVersionToString`): `TLSv1`, `TLS 1.2`,
/// `TLS 1.3 draft-22`, `UNDETERMINED`, else `0x%04x`.
pub fn version_string(v: u16) -> String {
    let s = match v {
        0 => "UNDETERMINED",
        0x0002 | 0x0200 => "SSLv2",
        0x0300 => "SSLv3",
        0x0301 => "TLSv1",
        0x0302 => "TLS 1.1",
        0x0303 => "TLS 1.2",
        0x0304 => "TLS 1.3",
        0x7f00 => "TLS 1.3 draft-<16",
        0x7f10..=0x7f1c => return format!("TLS 1.3 draft-{}", v & 0xff),
        0xfb14 | 0xfb15 | 0xfb16 | 0xfb17 | 0xfb1a => {
            return format!("TLS 1.3 draft-{}-fb", v & 0xff);
        }
        _ => return format!("0x{v:04x}"),
    };
    s.to_string()
}

/// Buffers the TLS keywords of Suricata 7 inspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlsBuffer {
    /// `tls.sni`.
    Sni,
    /// `tls.cert_subject` (also `tls.subject`).
    CertSubject,
    /// `tls.cert_issuer` (also `tls.issuerdn`).
    CertIssuer,
    /// `tls.cert_serial`.
    CertSerial,
    /// `tls.cert_fingerprint` (also `tls.fingerprint`).
    CertFingerprint,
    /// `tls.certs` (multi: each server certificate's DER).
    Certs,
    /// `tls.random` (client random to the server, server random to the client).
    Random,
    /// `tls.random_time`: the first 4 bytes of the random.
    RandomTime,
    /// `tls.random_bytes`: the last 28 bytes of the random.
    RandomBytes,
    /// `ja3.hash`.
    Ja3Hash,
    /// `ja3.string`.
    Ja3String,
    /// `ja3s.hash`.
    Ja3sHash,
    /// `ja3s.string`.
    Ja3sString,
    /// `ja4.hash`.
    Ja4Hash,
}

impl TlsBuffer {
    /// The buffer for a keyword name, if it is one of these.
    pub fn from_keyword(k: &str) -> Option<Self> {
        Some(match k {
            "tls.sni" | "tls_sni" => TlsBuffer::Sni,
            "tls.cert_subject" | "tls_cert_subject" => TlsBuffer::CertSubject,
            "tls.cert_issuer" | "tls_cert_issuer" => TlsBuffer::CertIssuer,
            "tls.cert_serial" | "tls_cert_serial" => TlsBuffer::CertSerial,
            "tls.cert_fingerprint" | "tls_cert_fingerprint" => TlsBuffer::CertFingerprint,
            "tls.certs" => TlsBuffer::Certs,
            "tls.random" => TlsBuffer::Random,
            "tls.random_time" => TlsBuffer::RandomTime,
            "tls.random_bytes" => TlsBuffer::RandomBytes,
            "ja3.hash" | "ja3_hash" => TlsBuffer::Ja3Hash,
            "ja3.string" => TlsBuffer::Ja3String,
            "ja3s.hash" => TlsBuffer::Ja3sHash,
            "ja3s.string" => TlsBuffer::Ja3sString,
            "ja4.hash" => TlsBuffer::Ja4Hash,
            _ => return None,
        })
    }
}

impl TlsState {
    /// Whether `buf` in `dir` can no longer change: the handshake message that carries it
    /// was parsed (Suricata: the transaction's progress passed the buffer's engine), or it
    /// never exists in that direction.
    pub fn buffer_final(&self, dir: Dir, buf: TlsBuffer) -> bool {
        use TlsBuffer::*;
        let to_client = dir == Dir::ToClient;
        match buf {
            Sni | Ja3Hash | Ja3String | Ja4Hash => to_client || self.client_hello.is_some(),
            Ja3sHash | Ja3sString => !to_client || self.server_hello.is_some(),
            Random | RandomTime | RandomBytes => {
                if to_client {
                    self.server_hello.is_some()
                } else {
                    self.client_hello.is_some()
                }
            }
            CertSubject | CertIssuer | CertSerial | CertFingerprint | Certs => {
                !to_client || !self.server_certs.is_empty()
            }
        }
    }

    /// Call `visit` with each item of `buf` for data going in `dir` (one call for single
    /// buffers, none when absent). Certificate and JA3S buffers are to-client, SNI and
    /// JA3/JA4 to-server; `tls.random*` follow `dir`.
    pub fn buffer(&self, dir: Dir, buf: TlsBuffer, visit: &mut dyn FnMut(&[u8])) {
        let to_client = dir == Dir::ToClient;
        let cert0 = self.cert0.as_ref().filter(|_| to_client);
        match buf {
            TlsBuffer::Sni => {
                if let Some(s) = self.sni().filter(|_| !to_client) {
                    visit(s);
                }
            }
            TlsBuffer::CertSubject => cert0.into_iter().for_each(|c| visit(c.subject.as_bytes())),
            TlsBuffer::CertIssuer => cert0.into_iter().for_each(|c| visit(c.issuer.as_bytes())),
            TlsBuffer::CertSerial => cert0.into_iter().for_each(|c| visit(c.serial.as_bytes())),
            TlsBuffer::CertFingerprint => cert0
                .into_iter()
                .for_each(|c| visit(c.fingerprint.as_bytes())),
            TlsBuffer::Certs => {
                if to_client {
                    self.server_certs.iter().for_each(|c| visit(c));
                }
            }
            TlsBuffer::Random | TlsBuffer::RandomTime | TlsBuffer::RandomBytes => {
                let hello = if to_client {
                    self.server_hello.as_ref()
                } else {
                    self.client_hello.as_ref()
                };
                if let Some(r) = hello.map(|h| h.random.as_slice()) {
                    let part = match buf {
                        TlsBuffer::RandomTime => r.get(..4),
                        TlsBuffer::RandomBytes => r.get(4..),
                        _ => Some(r),
                    };
                    if let Some(p) = part {
                        visit(p);
                    }
                }
            }
            TlsBuffer::Ja3Hash | TlsBuffer::Ja3String => {
                if let Some((h, s)) = self.ja3.as_ref().filter(|_| !to_client) {
                    visit(if buf == TlsBuffer::Ja3Hash { h } else { s }.as_bytes());
                }
            }
            TlsBuffer::Ja3sHash | TlsBuffer::Ja3sString => {
                if let Some((h, s)) = self.ja3s.as_ref().filter(|_| to_client) {
                    visit(if buf == TlsBuffer::Ja3sHash { h } else { s }.as_bytes());
                }
            }
            TlsBuffer::Ja4Hash => {
                if let Some(j) = self.ja4.as_ref().filter(|_| !to_client) {
                    visit(j.as_bytes());
                }
            }
        }
    }

    /// The SNI the client sent.
    pub fn sni(&self) -> Option<&[u8]> {
        self.client_hello.as_ref()?.sni.as_deref()
    }

    /// The negotiated version as Suricata reports it (`tls.version`, EVE `version`): the
    /// ServerHello's selection, else the server's record version, else the SSLv2 client
    /// version, else 0 (`UNDETERMINED`).
    pub fn version(&self) -> u16 {
        if let Some(h) = &self.server_hello {
            return h.selected_version();
        }
        self.server_record_version()
            .or(self.sslv2_client_version)
            .unwrap_or(0)
    }

    /// The first ALPN protocol the client offered.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.client_hello
            .as_ref()?
            .alpn
            .first()
            .map(|a| a.as_slice())
    }

    /// Number of server certificates (`tls.cert_chain_len`).
    pub fn cert_chain_len(&self) -> usize {
        self.server_certs.len()
    }

    /// Whether the server certificate has expired at `now` (epoch seconds;
    /// `tls_cert_expired`).
    pub fn cert_expired(&self, now: i64) -> Option<bool> {
        self.cert0.as_ref().map(|c| now > c.not_after)
    }

    /// Whether the server certificate has not expired at `now` (`tls_cert_valid`: Suricata
    /// checks only `notAfter`).
    pub fn cert_valid(&self, now: i64) -> Option<bool> {
        self.cert0.as_ref().map(|c| now <= c.not_after)
    }

    /// Whether a record should be logged to EVE (Suricata's rule: a server certificate was
    /// seen, or a resumed session when `session_resumption`, or TLS 1.3 (logged without a
    /// certificate, even when its ServerHello echoes the session id as resumptions do)).
    pub fn should_log(&self, session_resumption: bool) -> bool {
        self.cert0.is_some() || (self.resumed && session_resumption) || self.is_tls13()
    }

    /// Whether the ServerHello selected TLS 1.3 (or a draft of it).
    pub fn is_tls13(&self) -> bool {
        self.server_hello.as_ref().is_some_and(|h| {
            let v = h.selected_version();
            v == 0x0304 || v >> 8 == 0x7f || v >> 8 == 0xfb
        })
    }
}
