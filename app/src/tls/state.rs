//! Per-flow TLS state: the streaming record layer, handshake reassembly and what the
//! handshake revealed.

use super::cert::CertInfo;
use super::hello::{md5_hex, Hello};
use super::{TlsConfig, TlsEvent, TlsEvents, TlsStats};
use crate::Dir;

/// Longest legal TLS record payload (2^14 plus the 2,048 bytes of expansion TLS allows).
const MAX_RECORD_LEN: usize = 16_384 + 2_048;
/// Records accepted in one `parse` call before Suricata's `too_many_records_in_packet`.
const MAX_RECORDS_PER_CALL: usize = 255;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum RecKind {
    #[default]
    None,
    Tls(u8),
    Ssl2,
}

/// One direction of the connection.
#[derive(Debug, Default)]
struct Conn {
    hdr: [u8; 5],
    hdr_len: usize,
    kind: RecKind,
    /// The last record header was SSLv2's.
    last_ssl2: bool,
    /// That record was an SSLv2 ClientHello: its version (Suricata's connp version until the
    /// next record).
    ssl2_hello_version: Option<u16>,
    remaining: usize,
    /// Bytes of the current record seen so far (small records like alerts/heartbeats/SSLv2).
    small: Vec<u8>,
    hs_buf: Vec<u8>,
    ccs: bool,
    app_data: bool,
    record_version: u16,
    records: u64,
    rec_len: usize,
    /// Stream offset of the current record's first byte (frames).
    rec_start: u64,
}

/// Suricata's heartbeat bookkeeping (`SSL_AL_FLAG_HB_*`, `hb_record_len`).
#[derive(Debug, Default, Clone, Copy)]
struct Heartbeat {
    inflight: bool,
    /// The heartbeat in flight came from the server (to the client).
    server_init: bool,
    /// ... from the client.
    client_init: bool,
    /// Length of the encrypted request record.
    record_len: usize,
}

/// Per-flow TLS parser state and the flow's single transaction (Suricata's model).
#[derive(Debug, Default)]
pub struct TlsState {
    conn: [Conn; 2],
    hb: Heartbeat,
    cfg: TlsConfig,
    failed: bool,
    /// The ClientHello, once seen.
    pub client_hello: Option<Hello>,
    /// The ServerHello, once seen.
    pub server_hello: Option<Hello>,
    /// Server certificate chain (DER), first is the server's own.
    pub server_certs: Vec<Vec<u8>>,
    /// Client certificate chain (DER), when the client sent one.
    pub client_certs: Vec<Vec<u8>>,
    /// Decoded first server certificate.
    pub cert0: Option<CertInfo>,
    /// Decoded first client certificate.
    pub client_cert0: Option<CertInfo>,
    /// JA3 string and hash of the ClientHello (when enabled).
    pub ja3: Option<(String, String)>,
    /// JA3S string and hash of the ServerHello (when enabled).
    pub ja3s: Option<(String, String)>,
    /// JA4 of the ClientHello (when enabled).
    pub ja4: Option<String>,
    /// SSLv2 client version, when the client spoke SSLv2.
    pub sslv2_client_version: Option<u16>,
    /// The server resumed the client's session (same non-empty session id).
    pub resumed: bool,
    /// The server asked for a client certificate (`CertificateRequest` in clear text,
    /// Suricata's `SSL_AL_FLAG_NEED_CLIENT_CERT`).
    pub need_client_cert: bool,
    /// An application data record was seen (Suricata's `SSL_AL_FLAG_HANDSHAKE_DONE` on
    /// `SSLV3_APPLICATION_PROTOCOL`: the handshake must be over), except TLS 1.3 early data
    /// sent before the ServerHello.
    app_data_done: bool,
    /// Alerts seen (level, description) in clear text, most recent last (bounded).
    pub alerts: Vec<(u8, u8)>,
    /// Events on the transaction.
    pub events: TlsEvents,
    /// Counters.
    pub stats: TlsStats,
    /// The events already reported to EVE `anomaly`.
    pub(crate) events_reported: TlsEvents,
    /// The handshake message state of the data parsed last (Suricata's
    /// `ssl_state->current_flags`, the [`STATE_CLIENT_HELLO`]... bits): cleared when a parse
    /// call starts (but inside application data), set by the last ClientHello, ServerHello,
    /// ClientKeyExchange or ServerKeyExchange of a record once the record is complete
    /// (`ssl_state`).
    current_flags: u8,
    /// The flags the record being read sets once complete (Suricata 7 parses a handshake
    /// record only once it has all of it).
    pending_flags: Option<u8>,
}

/// [`TlsState::current_flags`]: a ClientHello.
pub const STATE_CLIENT_HELLO: u8 = 1;
/// [`TlsState::current_flags`]: a ServerHello.
pub const STATE_SERVER_HELLO: u8 = 2;
/// [`TlsState::current_flags`]: a ClientKeyExchange.
pub const STATE_CLIENT_KEYX: u8 = 4;
/// [`TlsState::current_flags`]: a ServerKeyExchange.
pub const STATE_SERVER_KEYX: u8 = 8;
/// [`TlsState::current_flags`]: Suricata 7 defines it and never sets it.
pub const STATE_UNKNOWN: u8 = 16;

/// Suricata's `TLSVersionValid`: SSLv3 to TLS 1.3 and the TLS 1.3 drafts it knows.
fn version_valid(v: u16) -> bool {
    matches!(v, 0x0300..=0x0304 | 0x7f10..=0x7f1c | 0x7f01 | 0xfb14..=0xfb17 | 0xfb1a)
}

fn di(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl TlsState {
    /// New state.
    pub fn new(cfg: TlsConfig) -> Self {
        TlsState {
            cfg,
            ..TlsState::default()
        }
    }

    /// Whether the parser gave up on the flow (an invalid record header).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The handshake message state of the data parsed last (`ssl_state`).
    pub fn current_flags(&self) -> u8 {
        self.current_flags
    }

    /// The version Suricata keeps for direction `dir` (`client_connp.version` /
    /// `server_connp.version`, `ssl_version`): the record header's until that side's hello,
    /// then the hello's (a legacy 0x0304 or early draft read as TLS 1.3 "pre draft 16";
    /// the client's first valid `supported_versions` entry, the server's selection); SSLv2
    /// records 0x0200 (the client's SSLv2 hello: its version).
    pub fn connp_version(&self, dir: Dir) -> u16 {
        let d = di(dir);
        let c = &self.conn[d];
        if c.last_ssl2 {
            return c.ssl2_hello_version.unwrap_or(0x0200);
        }
        let hello = if d == 0 {
            self.client_hello.as_ref()
        } else {
            self.server_hello.as_ref()
        };
        if let Some(h) = hello {
            let mut v = h.version;
            if (0x7f01..0x7f10).contains(&v) || v == 0x0304 {
                v = 0x7f01;
            }
            let sv = if d == 0 {
                h.supported_versions
                    .iter()
                    .copied()
                    .find(|&x| version_valid(x))
            } else {
                h.supported_versions.first().copied()
            };
            if let Some(x) = sv {
                v = x;
            }
            if v != 0 {
                return v;
            }
        }
        c.record_version
    }

    /// The record-layer version the server last used, if it sent a record.
    pub fn server_record_version(&self) -> Option<u16> {
        Some(self.conn[1].record_version).filter(|&v| v != 0)
    }

    /// Whether `dir` is encrypted (ChangeCipherSpec seen, or TLS 1.3 after the ServerHello,
    /// or application data).
    pub fn encrypted(&self, dir: Dir) -> bool {
        let c = &self.conn[di(dir)];
        c.ccs || c.app_data
    }

    /// Whether the handshake is over in both directions: from here on only encrypted records
    /// follow and, as Suricata's default `encryption-handling`, their content needs no
    /// inspection.
    pub fn handshake_done(&self) -> bool {
        self.encrypted(Dir::ToServer) && self.encrypted(Dir::ToClient)
    }

    /// Whether the record is logged now (Suricata's `SSL_AL_FLAG_HANDSHAKE_DONE` for the
    /// logger): the handshake is over, or the certificate that matters was decoded (the
    /// server's, or the client's when the server asked for one).
    pub fn log_ready(&self) -> bool {
        self.handshake_done()
            || self.app_data_done
            || if self.need_client_cert {
                self.client_cert0.is_some()
            } else {
                self.cert0.is_some()
            }
    }

    fn event(&mut self, e: TlsEvent) {
        if !self.events.has(e) {
            self.stats.events += 1;
        }
        self.events.set(e);
    }

    /// A gap in `dir`: record framing is lost, so the parser stops (as Suricata).
    pub fn gap(&mut self, dir: Dir, len: u32) {
        if len > 0 {
            let c = &mut self.conn[di(dir)];
            c.hs_buf = Vec::new();
            self.failed = true;
        }
    }

    /// Feed the next bytes of the reassembled stream in `dir`. Returns `false` once the parser
    /// has given up on the flow.
    pub fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        self.parse_framed(dir, data, None)
    }

    /// [`TlsState::parse`], marking Suricata's frames in `fc` (record `hdr`, `pdu`, `data`,
    /// `alert`, `heartbeat`; SSLv2 `sslv2.hdr`, `sslv2.pdu`).
    pub fn parse_framed(
        &mut self,
        dir: Dir,
        mut data: &[u8],
        mut fc: Option<&mut crate::frames::FrameCtx<'_>>,
    ) -> bool {
        let d = di(dir);
        if !(self.conn[d].remaining > 0 && self.conn[d].kind == RecKind::Tls(23)) {
            // Suricata clears `current_flags` when a call starts on a new record, which is
            // every call but one inside application data: it leaves a handshake record it
            // does not have all of unconsumed.
            self.current_flags = 0;
        }
        let mut records = 0usize;
        // Stream offset of `data[0]`.
        let mut pos = fc.as_deref().map_or(0, |f| f.offset);
        if let Some(fc) = fc.as_deref_mut() {
            // Suricata re-enters an application record it streams with its data frame made
            // again where the call's data starts (`SSLv3Decode` for a continued record).
            let c = &self.conn[d];
            if c.remaining > 0 && c.kind == RecKind::Tls(23) && !data.is_empty() {
                fc.new_frame(pos, c.rec_len as i64, 2);
            }
        }
        while !data.is_empty() && !self.failed {
            if self.conn[d].remaining == 0 {
                // Record header.
                let c = &mut self.conn[d];
                if c.hdr_len == 0 {
                    c.hdr[0] = data[0];
                    c.hdr_len = 1;
                    c.rec_start = pos;
                    data = &data[1..];
                    pos += 1;
                    // The header frame at the first chance (SSLv2: its own header frame).
                    if let Some(fc) = fc.as_deref_mut() {
                        if c.hdr[0] & 0x80 == 0 {
                            fc.new_frame(c.rec_start, 5, 1);
                        }
                    }
                }
                let need: usize = if c.hdr[0] & 0x80 != 0 { 2 } else { 5 };
                let take = need.saturating_sub(c.hdr_len).min(data.len());
                let (h, rest) = data.split_at(take);
                c.hdr[c.hdr_len..c.hdr_len + take].copy_from_slice(h);
                c.hdr_len += take;
                data = rest;
                pos += take as u64;
                if c.hdr_len < need {
                    continue;
                }
                records += 1;
                if records > MAX_RECORDS_PER_CALL {
                    self.event(TlsEvent::TooManyRecordsInPacket);
                    self.failed = true;
                    break;
                }
                let ok = self.record_header(d);
                if let Some(fc) = fc.as_deref_mut() {
                    self.record_frames(d, fc, !data.is_empty());
                }
                if !ok {
                    self.failed = true;
                    break;
                }
                if self.conn[d].remaining == 0 {
                    self.record_done(d);
                }
                continue;
            }
            let c = &mut self.conn[d];
            let take = c.remaining.min(data.len());
            let (chunk, rest) = data.split_at(take);
            data = rest;
            pos += take as u64;
            c.remaining -= take;
            self.record_payload(d, chunk);
            if self.conn[d].remaining == 0 {
                self.record_done(d);
            }
        }
        !self.failed
    }

    /// The frames of the record whose header was just read (Suricata's
    /// `AppLayerFrameNewByPointer` calls in `SSLv3Decode` / `SSLv2Decode`).
    ///
    /// `body`: some of the record's body is in the same call (an application record's data
    /// frame is made only then; a continued one gets it on the next call).
    fn record_frames(&self, d: usize, fc: &mut crate::frames::FrameCtx<'_>, body: bool) {
        let c = &self.conn[d];
        let at = c.rec_start;
        if c.hdr[0] & 0x80 != 0 {
            // SSLv2: the 2-byte length and the message type, then the whole record.
            fc.new_frame(at, 3, 5);
            fc.new_frame(at, 2 + c.remaining as i64, 6);
            return;
        }
        let RecKind::Tls(ty) = c.kind else {
            return;
        };
        let len = c.rec_len as i64;
        fc.new_frame(at, len + 5, 0);
        if len > 0 && (ty != 23 || body) {
            fc.new_frame(at + 5, len, 2);
            match ty {
                21 => {
                    fc.new_frame(at + 5, len, 3);
                }
                24 => {
                    fc.new_frame(at + 5, len, 4);
                }
                _ => {}
            }
        }
    }

    /// Validate a complete record header; sets `kind` and `remaining`.
    fn record_header(&mut self, d: usize) -> bool {
        let c = &mut self.conn[d];
        let h = c.hdr;
        c.hdr_len = 0;
        c.small.clear();
        c.last_ssl2 = h[0] & 0x80 != 0;
        c.ssl2_hello_version = None;
        if h[0] & 0x80 != 0 {
            c.kind = RecKind::Ssl2;
            c.remaining = (((h[0] & 0x7f) as usize) << 8) | h[1] as usize;
            self.stats.sslv2_records += 1;
            if c.remaining == 0 {
                self.event(TlsEvent::InvalidSslv2Header);
                return false;
            }
            return true;
        }
        let (ty, ver, len) = (
            h[0],
            u16::from_be_bytes([h[1], h[2]]),
            u16::from_be_bytes([h[3], h[4]]) as usize,
        );
        if !(20..=24).contains(&ty) {
            self.event(TlsEvent::InvalidRecordType);
            return false;
        }
        if ver >> 8 != 3 {
            self.event(TlsEvent::InvalidRecordVersion);
            return false;
        }
        if len > MAX_RECORD_LEN {
            self.event(TlsEvent::InvalidTlsHeader);
            return false;
        }
        c.kind = RecKind::Tls(ty);
        c.remaining = len;
        c.rec_len = len;
        c.record_version = ver;
        c.records += 1;
        self.stats.records += 1;
        if ty == 23 {
            c.app_data = true;
            let early = self
                .client_hello
                .as_ref()
                .is_some_and(|h| h.extensions.contains(&42));
            if !early || self.server_hello.is_some() {
                self.app_data_done = true;
            }
        }
        true
    }

    fn record_payload(&mut self, d: usize, chunk: &[u8]) {
        let c = &mut self.conn[d];
        match c.kind {
            RecKind::Tls(22) if !c.ccs => {
                if c.hs_buf.len() + chunk.len() > self.cfg.max_handshake_len {
                    // Oversized handshake message: drop it, keep framing.
                    c.hs_buf.clear();
                    self.event(TlsEvent::HandshakeInvalidLength);
                    self.stats.handshake_too_long += 1;
                    return;
                }
                c.hs_buf.extend_from_slice(chunk);
                // Suricata 7 parses a handshake record once it has all of it (the record is
                // left unconsumed until then): its messages count from the record's end.
                if c.remaining == 0 {
                    self.handshake_messages(d);
                }
            }
            RecKind::Tls(21) | RecKind::Tls(24) | RecKind::Ssl2 => {
                let room = 64usize.saturating_sub(c.small.len());
                c.small.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            _ => {}
        }
    }

    fn record_done(&mut self, d: usize) {
        let kind = self.conn[d].kind;
        self.conn[d].kind = RecKind::None;
        let small = std::mem::take(&mut self.conn[d].small);
        match kind {
            RecKind::Tls(20) => self.conn[d].ccs = true,
            RecKind::Tls(21) if !self.conn[d].ccs => {
                if let [level, desc, ..] = small[..] {
                    if self.alerts.len() < 16 {
                        self.alerts.push((level, desc));
                    }
                }
                self.stats.alerts += 1;
            }
            RecKind::Tls(21) => self.stats.alerts += 1,
            RecKind::Tls(24) => {
                let rl = self.conn[d].rec_len;
                self.heartbeat(d, &small, rl)
            }
            RecKind::Ssl2 => self.sslv2(d, &small),
            _ => {}
        }
        self.conn[d].small = small;
        if let Some(f) = self.pending_flags.take() {
            self.current_flags = f;
        }
    }

    /// Suricata's `SSLv3ParseHeartbeatProtocol` (`d`: 0 to the server, 1 to the client).
    /// Suricata 7 never raises `heartbeat_message` itself.
    fn heartbeat(&mut self, d: usize, p: &[u8], record_len: usize) {
        let (Some(&ty), Some(len)) = (p.first(), p.get(1..3)) else {
            return;
        };
        // Suricata's flag is the session's: a ChangeCipherSpec seen in either direction.
        let ccs = self.conn.iter().any(|c| c.ccs);
        if !ccs && ty != 1 && ty != 2 {
            self.event(TlsEvent::InvalidHeartbeatMessage);
            return;
        }
        let hb = &mut self.hb;
        if !hb.inflight {
            hb.inflight = true;
            if d == 1 {
                hb.server_init = true;
            } else {
                hb.client_init = true;
            }
            if ccs {
                // Encrypted: only its length is known.
                hb.record_len = record_len;
                return;
            }
            let payload_len = usize::from(u16::from_be_bytes([len[0], len[1]]));
            // The requested payload must be in the record (CVE-2014-0160) ...
            if payload_len + 3 > record_len {
                self.event(TlsEvent::OverflowHeartbeatMessage);
                return;
            }
            // ... with at least 16 bytes of padding (RFC 6520).
            if record_len - payload_len - 3 < 16 {
                self.event(TlsEvent::InvalidHeartbeatMessage);
            }
        } else if (d == 1 && hb.server_init) || (d == 0 && hb.client_init) {
            // Another heartbeat in the same direction while one is in flight.
            self.event(TlsEvent::InvalidHeartbeatMessage);
        } else {
            // The answer: an encrypted response longer than the request leaks.
            let req = hb.record_len;
            *hb = Heartbeat::default();
            if ccs && req > 0 && req < record_len {
                self.event(TlsEvent::DataleakHeartbeatMismatch);
            }
        }
    }

    fn sslv2(&mut self, d: usize, p: &[u8]) {
        // `SSLv2Decode`: client and server hellos set the current flags, the client master
        // key replaces them.
        match p.first() {
            Some(1) => self.pending_flags = Some(STATE_CLIENT_HELLO),
            Some(2) => self.pending_flags = Some(0),
            Some(4) => self.pending_flags = Some(STATE_SERVER_HELLO),
            _ => {}
        }
        match p.first() {
            Some(0) => self.event(TlsEvent::ErrorMessageEncountered),
            Some(1) if d == 0 => {
                if let Some(v) = p.get(1..3) {
                    self.sslv2_client_version = Some(u16::from_be_bytes([v[0], v[1]]));
                    self.conn[0].ssl2_hello_version = self.sslv2_client_version;
                    self.stats.sslv2_client_hellos += 1;
                }
            }
            Some(4) if d == 1 => {
                if let Some(v) = p.get(3..5) {
                    self.conn[1].record_version = u16::from_be_bytes([v[0], v[1]]);
                }
                self.conn[0].ccs = true;
                self.conn[1].ccs = true;
            }
            _ => {}
        }
    }

    /// Process every complete handshake message buffered in direction `d`.
    fn handshake_messages(&mut self, d: usize) {
        let mut buf = std::mem::take(&mut self.conn[d].hs_buf);
        let mut off = 0;
        while let Some(h) = buf.get(off..off + 4) {
            // Suricata's `SupportedHandshakeType`: another type is skipped with what is
            // buffered of it, an event unless the direction is past its ChangeCipherSpec.
            if !matches!(
                h[0],
                0 | 1 | 2 | 4 | 11 | 12 | 13 | 14 | 15 | 16 | 20 | 21 | 22
            ) {
                if !self.conn[d].ccs {
                    self.event(TlsEvent::InvalidHandshakeMessage);
                }
                off = buf.len();
                break;
            }
            let len = (h[1] as usize) << 16 | (h[2] as usize) << 8 | h[3] as usize;
            if len > self.cfg.max_handshake_len {
                self.event(TlsEvent::HandshakeInvalidLength);
                self.stats.handshake_too_long += 1;
                off = buf.len();
                break;
            }
            let Some(body) = buf.get(off + 4..off + 4 + len) else {
                break;
            };
            self.handshake(d, h[0], body);
            off += 4 + len;
        }
        buf.drain(..off.min(buf.len()));
        self.conn[d].hs_buf = buf;
    }

    fn handshake(&mut self, d: usize, ty: u8, body: &[u8]) {
        self.stats.handshake_messages += 1;
        // `SSLv3ParseHandshakeType`: the message's state replaces the current flags (a
        // server's CertificateRequest replaces them with a flag that is no state).
        match ty {
            1 => self.pending_flags = Some(STATE_CLIENT_HELLO),
            2 => self.pending_flags = Some(STATE_SERVER_HELLO),
            12 => self.pending_flags = Some(STATE_SERVER_KEYX),
            16 => self.pending_flags = Some(STATE_CLIENT_KEYX),
            13 if d == 1 => self.pending_flags = Some(0),
            _ => {}
        }
        match (ty, d) {
            (1, 0) => {
                let mut evs = Vec::new();
                match Hello::parse(body, true, &mut |e| evs.push(e)) {
                    Some(h) => {
                        // Suricata keeps the first ClientHello's JA3 (`ja3_hash` once set).
                        if (self.cfg.ja3 || super::ja3_enabled()) && self.ja3.is_none() {
                            let s = h.ja3_string();
                            self.ja3 = Some((md5_hex(&s), s));
                        }
                        if self.cfg.ja4 || super::ja4_enabled() {
                            self.ja4 = Some(h.ja4(false));
                        }
                        // Suricata marks the session resumed as soon as the ClientHello
                        // carries a SessionTicket extension ("to be verified later" by a
                        // certificate that then never matters): such flows are logged
                        // without a certificate when `session-resumption` is on.
                        if h.extensions.contains(&35) {
                            self.resumed = true;
                        }
                        self.client_hello = Some(h);
                    }
                    None => evs.push(TlsEvent::InvalidHandshakeMessage),
                }
                for e in evs {
                    self.event(e);
                }
            }
            (2, 1) => match Hello::parse(body, false, &mut |_| {}) {
                Some(h) => {
                    if (self.cfg.ja3 || super::ja3_enabled()) && self.ja3s.is_none() {
                        let s = h.ja3s_string();
                        self.ja3s = Some((md5_hex(&s), s));
                    }
                    if let Some(ch) = &self.client_hello {
                        if !h.session_id.is_empty() && h.session_id == ch.session_id {
                            self.resumed = true;
                        }
                    }
                    if h.selected_version() == 0x0304 || h.selected_version() >> 8 == 0x7f {
                        // TLS 1.3: everything after the ServerHello is encrypted.
                        self.conn[1].ccs = true;
                    }
                    self.server_hello = Some(h);
                }
                None => self.event(TlsEvent::InvalidHandshakeMessage),
            },
            (11, _) => self.certificates(d, body),
            (13, 1) => self.need_client_cert = true,
            _ => {}
        }
    }

    fn certificates(&mut self, d: usize, body: &[u8]) {
        // Suricata's `TlsDecodeHSCertificates`: a chain longer than the message is a bad
        // handshake message; a certificate longer than the chain is an invalid certificate
        // too; the chain stops at the first such error.
        let Some(l) = body.get(..3) else {
            self.event(TlsEvent::InvalidHandshakeMessage);
            return;
        };
        let total = (l[0] as usize) << 16 | (l[1] as usize) << 8 | l[2] as usize;
        let Some(list) = body.get(3..3 + total) else {
            self.event(TlsEvent::InvalidHandshakeMessage);
            return;
        };
        let mut chain = Vec::new();
        let mut p = 0;
        while p < list.len() {
            let len = list
                .get(p..p + 3)
                .map(|l| (l[0] as usize) << 16 | (l[1] as usize) << 8 | l[2] as usize);
            let Some(der) = len.and_then(|len| list.get(p + 3..p + 3 + len)) else {
                self.event(TlsEvent::InvalidCertificate);
                self.event(TlsEvent::InvalidHandshakeMessage);
                break;
            };
            if chain.len() < self.cfg.max_chain {
                chain.push(der.to_vec());
            }
            p += 3 + der.len();
        }
        let info = match chain.first().map(|c| CertInfo::parse(c)) {
            Some(Ok(i)) => Some(i),
            Some(Err(e)) => {
                self.event(e);
                None
            }
            None => None,
        };
        if d == 1 {
            self.server_certs = chain;
            self.cert0 = info;
        } else {
            self.client_certs = chain;
            self.client_cert0 = info;
        }
    }
}
