//! SMTP, as Suricata 7's parser (`app-layer-smtp.c`) has it: commands and replies matched
//! through a command buffer (pipelining), `DATA` with MIME decoding of the message
//! ([`mime`]), `BDAT` chunks, `RSET`, `STARTTLS` (the flow continues as TLS after the
//! server's `220`), `HELO`/`EHLO`, `MAIL FROM`, `RCPT TO`, and Suricata's SMTP and MIME
//! events and limits.
//!
//! * Detection: `EHLO`, `HELO` or `QUIT` at the start of the client's data (content
//!   patterns, any port; port 25 first).
//! * Transactions: one per message envelope; a new one starts with the first command
//!   after the previous one completed (the `.` ending `DATA`, a `250` to `RSET`, a `220` to
//!   `STARTTLS`), except `RSET` / `QUIT` while the completed one is still held. At most
//!   `max-tx` transactions per flow (`app-layer.protocols.smtp.max-tx`, 256): past that the
//!   parser gives up, as Suricata's does.
//! * Lines: at most 4096 bytes (`TRUNCATED_LINE` past it, the rest of the line dropped).
//! * EVE: the `smtp` record (`helo`, `mail_from`, `rcpt_to`) with the `email` object
//!   (`status`, `from`, `to`, `cc`, URLs, attachments) per transaction, `fileinfo` records
//!   for attachments, both objects in alerts.
//! * Rules: `alert smtp`, `app-layer-event:smtp.<event>`, the Suricata 8 sticky buffers
//!   `smtp.helo`, `smtp.mail_from`, `smtp.rcpt_to`, `email.from`, `email.subject`,
//!   `email.to`, `email.cc`, `email.date`, `email.message_id`, `email.x_mailer`,
//!   `email.url`, `email.received`.
//!
//! * Files: each attachment is a [`crate::files::TrackedFile`] (hashes as eve-log
//!   `force-hash` asks, `CLOSED` when its part ends, `TRUNCATED` when the transaction ends
//!   first), listed to the file keywords and alerts' `files` through `AppParser::files`.
//!
//! Not yet: `raw-extraction`, `body-md5`, the eve-log `custom` email fields.

pub mod mime;

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::{AppProto, Dir};

use mime::{ChunkInfo, MimeConfig, MimeParser, Status};

/// Longest line (Suricata's `SMTP_LINE_BUFFER_LIMIT`).
pub const LINE_LIMIT: usize = 4096;
/// Default `max-tx`.
pub const DEFAULT_MAX_TX: u64 = 256;
/// Most attachment bytes kept per transaction for inspection (shrike's bound).
pub const FILE_KEEP: usize = 256 << 10;
/// Most `RCPT TO` kept per transaction (shrike's bound).
pub const MAX_RCPT: usize = 256;

const PS_DATA_MODE: u8 = 0x01;
const PS_FIRST_REPLY_SEEN: u8 = 0x04;
const PS_MULTILINE: u8 = 0x08;
const PS_PIPELINING: u8 = 0x10;

const CMD_STARTTLS: u8 = 1;
const CMD_DATA: u8 = 2;
const CMD_BDAT: u8 = 3;
const CMD_DATA_MODE: u8 = 4;
const CMD_OTHER: u8 = 5;
const CMD_RSET: u8 = 6;

/// Reply codes Suricata's SMTP parser knows; any other is an invalid reply.
const REPLY_CODES: &[&[u8; 3]] = &[
    b"211", b"214", b"220", b"221", b"235", b"250", b"251", b"252", b"334", b"354", b"421", b"450",
    b"451", b"452", b"455", b"500", b"501", b"502", b"503", b"504", b"550", b"551", b"552", b"553",
    b"554", b"555",
];

/// SMTP events, in the order of [`PROTOCOL`]'s `events` (Suricata's names, lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SmtpEvent {
    InvalidReply = 0,
    UnableToMatchReplyWithRequest,
    MaxCommandLineLenExceeded,
    MaxReplyLineLenExceeded,
    InvalidPipelinedSequence,
    BdatChunkLenExceeded,
    NoServerWelcomeMessage,
    TlsRejected,
    DataCommandRejected,
    FailedProtocolChange,
    MimeParseFailed,
    MimeMalformedMsg,
    MimeInvalidBase64,
    MimeInvalidQp,
    MimeLongLine,
    MimeLongEncLine,
    MimeLongHeaderName,
    MimeLongHeaderValue,
    MimeLongBoundary,
    MimeLongFilename,
    DuplicateFields,
    UnparsableContent,
    TruncatedLine,
}

const EVENT_NAMES: &[&str] = &[
    "invalid_reply",
    "unable_to_match_reply_with_request",
    "max_command_line_len_exceeded",
    "max_reply_line_len_exceeded",
    "invalid_pipelined_sequence",
    "bdat_chunk_len_exceeded",
    "no_server_welcome_message",
    "tls_rejected",
    "data_command_rejected",
    "failed_protocol_change",
    "mime_parse_failed",
    "mime_malformed_msg",
    "mime_invalid_base64",
    "mime_invalid_qp",
    "mime_long_line",
    "mime_long_enc_line",
    "mime_long_header_name",
    "mime_long_header_value",
    "mime_long_boundary",
    "mime_long_filename",
    "duplicate_fields",
    "unparsable_content",
    "truncated_line",
];

/// Buffer ids (indexes into [`PROTOCOL`]'s buffers).
const BUF_HELO: u16 = 0;
const BUF_MAIL_FROM: u16 = 1;
const BUF_RCPT_TO: u16 = 2;
const BUF_EMAIL_FROM: u16 = 3;
const BUF_EMAIL_SUBJECT: u16 = 4;
const BUF_EMAIL_TO: u16 = 5;
const BUF_EMAIL_CC: u16 = 6;
const BUF_EMAIL_DATE: u16 = 7;
const BUF_EMAIL_MESSAGE_ID: u16 = 8;
const BUF_EMAIL_X_MAILER: u16 = 9;
const BUF_EMAIL_URL: u16 = 10;
const BUF_EMAIL_RECEIVED: u16 = 11;
const BUF_FILE_DATA: u16 = 12;
const BUF_FILE_NAME: u16 = 13;

const fn ts_buf(name: &'static str) -> BufferDesc {
    BufferDesc {
        name,
        dir: Some(Dir::ToServer),
    }
}

/// SMTP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "smtp",
    aliases: &[],
    ip_protos: &[6],
    ports: &[25],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[
        ts_buf("smtp.helo"),
        ts_buf("smtp.mail_from"),
        ts_buf("smtp.rcpt_to"),
        ts_buf("email.from"),
        ts_buf("email.subject"),
        ts_buf("email.to"),
        ts_buf("email.cc"),
        ts_buf("email.date"),
        ts_buf("email.message_id"),
        ts_buf("email.x_mailer"),
        ts_buf("email.url"),
        ts_buf("email.received"),
        ts_buf("file.data"),
        ts_buf("file.name"),
    ],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

/// `EHLO`, `HELO` or `QUIT` (any case) at the start of the client's data.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if dir != Dir::ToServer {
        return Probe::No;
    }
    let n = data.len().min(4);
    let hit = [b"EHLO", b"HELO", b"QUIT"]
        .iter()
        .any(|p| data[..n].eq_ignore_ascii_case(&p[..n]));
    if !hit {
        Probe::No
    } else if n < 4 {
        Probe::NeedMore
    } else {
        Probe::Yes
    }
}

/// The parser's settings (`app-layer.protocols.smtp.*`).
#[derive(Clone, Debug)]
pub struct SmtpConfig {
    /// `mime.decode-mime`.
    pub decode_mime: bool,
    /// The MIME decoder's settings (`mime.*`).
    pub mime: MimeConfig,
    /// `max-tx`.
    pub max_tx: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        SmtpConfig {
            decode_mime: true,
            mime: MimeConfig::default(),
            max_tx: DEFAULT_MAX_TX,
        }
    }
}

/// `app-layer.protocols.smtp` as shrike's configuration holds it (`detect.app-layer.smtp`),
/// translated from a `suricata.yaml` (`mime.*` and `max-tx`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SmtpSettings {
    /// `mime.decode-mime`.
    pub decode_mime: bool,
    /// `mime.decode-base64`.
    pub decode_base64: bool,
    /// `mime.decode-quoted-printable`.
    pub decode_quoted_printable: bool,
    /// `mime.header-value-depth` (0: 2000).
    pub header_value_depth: u32,
    /// `mime.extract-urls`.
    pub extract_urls: bool,
    /// `mime.extract-urls-schemes` (`http`, `https`...); empty: no URL is extracted (as
    /// Suricata without a `mime` section).
    pub extract_urls_schemes: Vec<String>,
    /// `mime.log-url-scheme`.
    pub log_url_scheme: bool,
    /// `mime.body-md5`: the MD5 of the message body (`email.body_md5` with eve-log
    /// `md5: [body]`).
    pub body_md5: bool,
    /// `max-tx`: transactions per flow before the parser gives up.
    pub max_tx: u64,
}

impl Default for SmtpSettings {
    fn default() -> Self {
        SmtpSettings {
            decode_mime: true,
            decode_base64: true,
            decode_quoted_printable: true,
            header_value_depth: 2000,
            extract_urls: true,
            extract_urls_schemes: vec!["http".into()],
            log_url_scheme: false,
            body_md5: false,
            max_tx: DEFAULT_MAX_TX,
        }
    }
}

impl SmtpSettings {
    /// The parser configuration.
    pub fn parser_config(&self) -> SmtpConfig {
        SmtpConfig {
            decode_mime: self.decode_mime,
            mime: MimeConfig {
                decode_base64: self.decode_base64,
                decode_quoted_printable: self.decode_quoted_printable,
                extract_urls: self.extract_urls,
                schemes: self
                    .extract_urls_schemes
                    .iter()
                    .map(|s| format!("{s}://").into_bytes())
                    .collect(),
                log_url_scheme: self.log_url_scheme,
                body_md5: self.body_md5,
                header_value_depth: self.header_value_depth,
            },
            max_tx: self.max_tx,
        }
    }
}

/// Suricata's optional `email` fields: (eve-log name, header name, kind).
const EMAIL_FIELDS: &[(&str, &[u8], FieldKind)] = &[
    ("reply_to", b"reply-to", FieldKind::One),
    ("bcc", b"bcc", FieldKind::Comma),
    ("message_id", b"message-id", FieldKind::One),
    ("subject", b"subject", FieldKind::One),
    ("x_mailer", b"x-mailer", FieldKind::One),
    ("user_agent", b"user-agent", FieldKind::One),
    ("received", b"received", FieldKind::All),
    ("x_originating_ip", b"x-originating-ip", FieldKind::One),
    ("in_reply_to", b"in-reply-to", FieldKind::One),
    ("references", b"references", FieldKind::One),
    ("importance", b"importance", FieldKind::One),
    ("priority", b"priority", FieldKind::One),
    ("sensitivity", b"sensitivity", FieldKind::One),
    ("organization", b"organization", FieldKind::One),
    ("content_md5", b"content-md5", FieldKind::One),
    ("date", b"date", FieldKind::One),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldKind {
    /// The last header of that name.
    One,
    /// The last header, split on commas.
    Comma,
    /// Every header of that name, newest first.
    All,
}

/// The eve-log `smtp` options as the logger uses them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SmtpLogConfig {
    /// Bits of [`EMAIL_FIELDS`] to log (`custom`).
    fields: u32,
    /// `md5: [subject]`.
    subject_md5: bool,
    /// `md5: [body]`.
    body_md5: bool,
}

impl SmtpLogConfig {
    /// From the `custom` and `md5` lists (names as Suricata accepts them: `x_mailer` or
    /// `X-Mailer`).
    pub fn new(custom: &[String], md5: &[String]) -> Self {
        let mut fields = 0;
        for c in custom {
            let c = c.trim();
            if let Some(i) = EMAIL_FIELDS
                .iter()
                .position(|(n, h, _)| *n == c || c.as_bytes().eq_ignore_ascii_case(h))
            {
                fields |= 1 << i;
            }
        }
        SmtpLogConfig {
            fields,
            subject_md5: md5.iter().any(|m| m.trim() == "subject"),
            body_md5: md5.iter().any(|m| m.trim() == "body"),
        }
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    let mut s = SmtpState::new(std::sync::Arc::clone(&cfg.smtp));
    s.files = cfg.files;
    Box::new(s)
}

/// An attachment of a message.
#[derive(Debug, Default)]
pub struct SmtpFile {
    /// The tracked file (name from the part's `filename` / `name`, size, hashes, state).
    pub file: crate::files::TrackedFile,
    /// The first [`FILE_KEEP`] bytes (shared by the transaction's files).
    pub data: Vec<u8>,
    /// Its `fileinfo` record was written.
    logged: bool,
}

impl SmtpFile {
    /// The part ended (or the file was cut short).
    pub fn closed(&self) -> bool {
        self.file.is_done()
    }
}

/// One SMTP transaction (an envelope and its message).
#[derive(Debug, Default)]
pub struct SmtpTx {
    /// Transaction id.
    pub id: u64,
    /// Complete.
    pub done: bool,
    /// `DATA` was sent.
    pub is_data: bool,
    /// `MAIL FROM` parameter.
    pub mail_from: Option<Vec<u8>>,
    /// `RCPT TO` parameters.
    pub rcpt_to: Vec<Vec<u8>>,
    /// The message's MIME decoder (from `DATA` on).
    pub mime: Option<Box<MimeParser>>,
    /// Attachments.
    pub files: Vec<SmtpFile>,
    kept: usize,
    /// Events raised, in order, repeats included (Suricata's event list, at most 255).
    events: Vec<u8>,
    event_bits: u32,
    events_logged: usize,
}

impl SmtpTx {
    /// Whether event `e` was raised on the transaction.
    pub fn has(&self, e: SmtpEvent) -> bool {
        self.event_bits & (1 << (e as u8)) != 0
    }
}

/// Per-flow SMTP state.
#[derive(Debug)]
pub struct SmtpState {
    cfg: std::sync::Arc<SmtpConfig>,
    files: crate::files::FileConfig,
    /// `HELO` / `EHLO` parameter (one per flow).
    pub helo: Option<Vec<u8>>,
    txs: VecDeque<SmtpTx>,
    tx_cnt: u64,
    /// The newest transaction is Suricata's current one (not freed yet).
    has_curr: bool,
    parser_state: u8,
    current_command: u8,
    cmds: Vec<u8>,
    cmds_idx: usize,
    bdat_chunk_len: u32,
    bdat_chunk_idx: u32,
    discard: [bool; 2],
    pending: [Vec<u8>; 2],
    failed: bool,
    upgrade: bool,
    closed: bool,
}

fn di(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

fn starts_nocase(line: &[u8], p: &[u8]) -> bool {
    line.len() >= p.len() && line[..p.len()].eq_ignore_ascii_case(p)
}

/// The parameter after a command of `prefix_len` bytes and one separator: leading spaces
/// skipped, up to the next space.
fn command_param(line: &[u8], prefix_len: usize) -> Vec<u8> {
    let mut i = prefix_len + 1;
    while i < line.len() && line[i] == b' ' {
        i += 1;
    }
    let mut j = i;
    while j < line.len() && line[j] != b' ' {
        j += 1;
    }
    line.get(i..j).unwrap_or_default().to_vec()
}

impl SmtpState {
    /// A new flow's state.
    pub fn new(cfg: std::sync::Arc<SmtpConfig>) -> Self {
        SmtpState {
            cfg,
            files: crate::files::FileConfig::default(),
            helo: None,
            txs: VecDeque::new(),
            tx_cnt: 0,
            has_curr: false,
            parser_state: 0,
            current_command: 0,
            cmds: Vec::new(),
            cmds_idx: 0,
            bdat_chunk_len: 0,
            bdat_chunk_idx: 0,
            discard: [false; 2],
            pending: [Vec::new(), Vec::new()],
            failed: false,
            upgrade: false,
            closed: false,
        }
    }

    /// The transaction with id `id`, if still held.
    pub fn tx(&self, id: u64) -> Option<&SmtpTx> {
        let first = self.txs.front()?.id;
        self.txs.get(usize::try_from(id.checked_sub(first)?).ok()?)
    }

    /// The transactions held.
    pub fn txs(&self) -> impl Iterator<Item = &SmtpTx> {
        self.txs.iter()
    }

    /// The server accepted `STARTTLS`: the flow continues as TLS.
    pub fn wants_tls(&self) -> bool {
        self.upgrade
    }

    fn curr(&mut self) -> Option<&mut SmtpTx> {
        if self.has_curr {
            self.txs.back_mut()
        } else {
            None
        }
    }

    fn set_event(&mut self, e: SmtpEvent) {
        if let Some(tx) = self.curr() {
            tx.event_bits |= 1 << (e as u8);
            if tx.events.len() < usize::from(u8::MAX) {
                tx.events.push(e as u8);
            }
        }
    }

    fn complete_curr(&mut self) {
        if let Some(tx) = self.curr() {
            tx.done = true;
        }
    }

    fn insert_command(&mut self, cmd: u8) -> bool {
        if matches!(self.cmds.last(), Some(&CMD_STARTTLS) | Some(&CMD_DATA)) {
            self.set_event(SmtpEvent::InvalidPipelinedSequence);
        }
        if self.cmds.len() + 1 > usize::from(u16::MAX) {
            return false;
        }
        self.cmds.push(cmd);
        true
    }

    /// Splits `data` of `dir` into lines and processes them; false when the parser gave up.
    fn feed(&mut self, dir: Dir, mut data: &[u8]) -> bool {
        let d = di(dir);
        while !data.is_empty() && !self.failed && !self.upgrade {
            let Some(lf) = memchr::memchr(b'\n', data) else {
                if self.discard[d] {
                    return true;
                }
                let p = &mut self.pending[d];
                let room = LINE_LIMIT.saturating_sub(p.len());
                p.extend_from_slice(&data[..data.len().min(room)]);
                if p.len() >= LINE_LIMIT {
                    // No end of line within the limit: the line is cut and the rest of it
                    // dropped.
                    let line = std::mem::take(&mut self.pending[d]);
                    self.discard[d] = true;
                    if !self.line(dir, &line, 0) {
                        return false;
                    }
                    self.set_event(SmtpEvent::TruncatedLine);
                }
                return true;
            };
            let (chunk, rest) = (&data[..lf], &data[lf + 1..]);
            data = rest;
            if self.discard[d] {
                self.discard[d] = false;
                self.pending[d].clear();
                continue;
            }
            let mut owned;
            let full: &[u8] = if self.pending[d].is_empty() {
                chunk
            } else {
                owned = std::mem::take(&mut self.pending[d]);
                owned.extend_from_slice(&chunk[..chunk.len().min(LINE_LIMIT + 1)]);
                &owned
            };
            if full.len() + 1 >= LINE_LIMIT {
                let cut = &full[..full.len().min(LINE_LIMIT)];
                if !self.line(dir, cut, 0) {
                    return false;
                }
                self.set_event(SmtpEvent::TruncatedLine);
                continue;
            }
            let (line, dl) = match full.strip_suffix(b"\r") {
                Some(l) => (l, 2),
                None => (full, 1),
            };
            if !self.line(dir, line, dl) {
                return false;
            }
        }
        true
    }

    fn line(&mut self, dir: Dir, line: &[u8], delim: usize) -> bool {
        match dir {
            Dir::ToServer => self.request(line, delim),
            Dir::ToClient => self.reply(line),
        }
    }

    fn no_new_tx(&self, line: &[u8]) -> bool {
        self.parser_state & PS_DATA_MODE == 0
            && (starts_nocase(line, b"rset") || starts_nocase(line, b"quit"))
    }

    fn request(&mut self, line: &[u8], delim: usize) -> bool {
        if line.is_empty() && delim == 0 {
            return true;
        }
        let need_new = match self.curr() {
            None => true,
            Some(t) => t.done,
        } && !(self.has_curr && self.no_new_tx(line));
        if need_new {
            if self.tx_cnt > self.cfg.max_tx {
                return false;
            }
            self.txs.push_back(SmtpTx {
                id: self.tx_cnt,
                ..SmtpTx::default()
            });
            self.tx_cnt += 1;
            self.has_curr = true;
        }
        if self.parser_state & PS_FIRST_REPLY_SEEN == 0 {
            self.set_event(SmtpEvent::NoServerWelcomeMessage);
        }
        if self.parser_state & PS_DATA_MODE == 0 {
            let cmd;
            if starts_nocase(line, b"starttls") {
                cmd = CMD_STARTTLS;
            } else if starts_nocase(line, b"data") {
                cmd = CMD_DATA;
                if self.curr().is_some_and(|t| t.is_data) {
                    self.current_command = cmd;
                    self.set_event(SmtpEvent::UnparsableContent);
                    return true;
                }
                let decode = self.cfg.decode_mime;
                if let Some(t) = self.curr() {
                    if decode {
                        t.mime = Some(Box::new(MimeParser::new()));
                    }
                    t.is_data = true;
                }
                if self.parser_state & PS_PIPELINING != 0 {
                    self.parser_state |= PS_DATA_MODE;
                }
            } else if starts_nocase(line, b"bdat") {
                let Some(n) = bdat_len(line) else {
                    return false;
                };
                self.bdat_chunk_len = n;
                cmd = CMD_BDAT;
                self.parser_state |= PS_DATA_MODE;
            } else if starts_nocase(line, b"helo") || starts_nocase(line, b"ehlo") {
                if self.helo.is_some() {
                    self.set_event(SmtpEvent::DuplicateFields);
                } else {
                    self.helo = Some(command_param(line, 4));
                }
                cmd = CMD_OTHER;
            } else if starts_nocase(line, b"mail from") {
                let v = command_param(line, 9);
                if self.curr().is_some_and(|t| t.mail_from.is_some()) {
                    self.set_event(SmtpEvent::DuplicateFields);
                } else if let Some(t) = self.curr() {
                    t.mail_from = Some(v);
                }
                cmd = CMD_OTHER;
            } else if starts_nocase(line, b"rcpt to") {
                let v = command_param(line, 7);
                if let Some(t) = self.curr() {
                    if t.rcpt_to.len() < MAX_RCPT {
                        t.rcpt_to.push(v);
                    }
                }
                cmd = CMD_OTHER;
            } else if starts_nocase(line, b"rset") {
                self.bdat_chunk_idx = 0;
                cmd = CMD_RSET;
            } else {
                cmd = CMD_OTHER;
            }
            self.current_command = cmd;
            return self.insert_command(cmd);
        }
        match self.current_command {
            CMD_DATA => self.data_line(line, delim),
            CMD_BDAT => {
                let n = u32::try_from(line.len() + delim).unwrap_or(u32::MAX);
                self.bdat_chunk_idx = self.bdat_chunk_idx.wrapping_add(n);
                if self.bdat_chunk_idx > self.bdat_chunk_len {
                    self.parser_state &= !PS_DATA_MODE;
                    self.set_event(SmtpEvent::BdatChunkLenExceeded);
                    return false;
                } else if self.bdat_chunk_idx == self.bdat_chunk_len {
                    self.parser_state &= !PS_DATA_MODE;
                }
                true
            }
            _ => true,
        }
    }

    fn data_line(&mut self, line: &[u8], delim: usize) -> bool {
        let cfg = std::sync::Arc::clone(&self.cfg);
        let files = self.files;
        if line == b"." {
            self.parser_state &= !PS_DATA_MODE;
            self.insert_command(CMD_DATA_MODE);
            let mut failed = false;
            if let Some(t) = self.curr() {
                if let Some(mut m) = t.mime.take() {
                    let r = m.complete(&cfg.mime, &mut |c, d| file_chunk(t, &files, c, d));
                    failed = r.is_err();
                    t.mime = Some(m);
                }
            }
            if failed {
                self.set_event(SmtpEvent::MimeParseFailed);
            }
            self.mime_events();
            self.complete_curr();
            return true;
        }
        let mut err = None;
        if let Some(t) = self.curr() {
            if let Some(mut m) = t.mime.take() {
                let r = m.parse_line(line, delim, &cfg.mime, &mut |c, d| {
                    file_chunk(t, &files, c, d)
                });
                err = r.err();
                t.mime = Some(m);
            }
        }
        if let Some(e) = err {
            if e != mime::MimeError::State {
                self.mime_events();
                self.set_event(SmtpEvent::MimeParseFailed);
            }
        }
        true
    }

    fn mime_events(&mut self) {
        let Some(flags) = self
            .curr()
            .and_then(|t| t.mime.as_ref())
            .map(|m| m.msg().anomaly_flags)
        else {
            return;
        };
        let table = [
            (mime::ANOM_INVALID_BASE64, SmtpEvent::MimeInvalidBase64),
            (mime::ANOM_INVALID_QP, SmtpEvent::MimeInvalidQp),
            (mime::ANOM_LONG_LINE, SmtpEvent::MimeLongLine),
            (mime::ANOM_LONG_ENC_LINE, SmtpEvent::MimeLongEncLine),
            (mime::ANOM_LONG_HEADER_NAME, SmtpEvent::MimeLongHeaderName),
            (mime::ANOM_LONG_HEADER_VALUE, SmtpEvent::MimeLongHeaderValue),
            (mime::ANOM_MALFORMED_MSG, SmtpEvent::MimeMalformedMsg),
            (mime::ANOM_LONG_BOUNDARY, SmtpEvent::MimeLongBoundary),
            (mime::ANOM_LONG_FILENAME, SmtpEvent::MimeLongFilename),
        ];
        for (f, e) in table {
            if flags & f != 0 {
                self.set_event(e);
            }
        }
    }

    fn reply(&mut self, line: &[u8]) -> bool {
        if line.len() < 3 {
            self.set_event(SmtpEvent::InvalidReply);
            return false;
        }
        if line.len() >= 4 {
            if self.parser_state & PS_MULTILINE != 0 {
                if line[3] != b'-' {
                    self.parser_state &= !PS_MULTILINE;
                }
            } else if line[3] == b'-' {
                self.parser_state |= PS_MULTILINE;
            }
        } else {
            self.parser_state &= !PS_MULTILINE;
        }
        let code = &line[..3];
        if !REPLY_CODES.iter().any(|c| &c[..] == code) {
            self.set_event(SmtpEvent::InvalidReply);
            return false;
        }
        let multiline = self.parser_state & PS_MULTILINE != 0;
        if self.cmds_idx == self.cmds.len() {
            if self.parser_state & PS_FIRST_REPLY_SEEN == 0 {
                if !multiline {
                    self.parser_state |= PS_FIRST_REPLY_SEEN;
                }
                if code != b"220" {
                    self.set_event(SmtpEvent::InvalidReply);
                }
            }
            return true;
        }
        match self.cmds.get(self.cmds_idx).copied() {
            Some(CMD_STARTTLS) => {
                if code == b"220" {
                    self.parser_state |= PS_DATA_MODE;
                    self.upgrade = true;
                    self.complete_curr();
                } else {
                    self.set_event(SmtpEvent::TlsRejected);
                }
            }
            Some(CMD_DATA) => {
                if code == b"354" {
                    self.parser_state |= PS_DATA_MODE;
                } else {
                    if self.parser_state & PS_PIPELINING != 0 {
                        self.parser_state &= !PS_DATA_MODE;
                    }
                    self.set_event(SmtpEvent::DataCommandRejected);
                }
            }
            Some(CMD_RSET) if code == b"250" && !multiline => self.complete_curr(),
            _ => {}
        }
        if !multiline {
            self.cmds_idx += 1;
        } else if self.parser_state & PS_FIRST_REPLY_SEEN != 0
            && code == b"250"
            && line.len() == 14
            && line[4..14].eq_ignore_ascii_case(b"pipelining")
        {
            self.parser_state |= PS_PIPELINING;
        }
        if self.cmds_idx == self.cmds.len() {
            self.cmds.clear();
            self.cmds_idx = 0;
        }
        true
    }

    fn final_tx(&self, t: &SmtpTx) -> bool {
        t.done || self.closed || self.failed || self.upgrade
    }
}

/// `BDAT <len>`: the chunk length as Suricata reads it (`strtoul` of what follows the
/// spaces, kept in 32 bits: `-1` is accepted and wraps).
fn bdat_len(line: &[u8]) -> Option<u32> {
    let mut i = 4;
    while i < line.len() && line[i] == b' ' {
        i += 1;
    }
    if i == 4 || i == line.len() {
        return None;
    }
    let s = &line[i..line.len().min(i + 23)];
    let mut j = s
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .unwrap_or(s.len());
    let neg = match s.get(j) {
        Some(b'-') => {
            j += 1;
            true
        }
        Some(b'+') => {
            j += 1;
            false
        }
        _ => false,
    };
    let digits = s[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in &s[j..j + digits] {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(c - b'0')))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    let v = if overflow {
        u64::MAX
    } else if neg {
        v.wrapping_neg()
    } else {
        v
    };
    Some(v as u32)
}

/// Decoded body data of an attachment goes to the transaction's file.
fn file_chunk(t: &mut SmtpTx, files: &crate::files::FileConfig, c: ChunkInfo<'_>, data: &[u8]) {
    if !c.attachment {
        return;
    }
    if c.begin {
        t.files.push(SmtpFile {
            file: crate::files::TrackedFile::open(c.filename, files),
            ..SmtpFile::default()
        });
    }
    let room = FILE_KEEP.saturating_sub(t.kept);
    let Some(f) = t.files.last_mut().filter(|f| !f.closed()) else {
        return;
    };
    let n = room.min(data.len());
    f.data.extend_from_slice(&data[..n]);
    t.kept += n;
    f.file.append(data);
    if c.end {
        f.file.close(false);
    }
}

impl AppParser for SmtpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.failed || self.upgrade {
            return false;
        }
        if !self.feed(dir, data) {
            self.failed = true;
            return true;
        }
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {
        // Suricata's SMTP parser does not accept gaps: parsing ends.
        self.failed = true;
    }

    fn close(&mut self) {
        self.closed = true;
    }

    fn truncate(&mut self, dir: Dir) {
        if dir != Dir::ToServer {
            return;
        }
        // Suricata's parser has already taken the partial message line at the end of the
        // data it got: decode it before the files end.
        if self.parser_state & PS_DATA_MODE != 0 && !self.pending[0].is_empty() && !self.failed {
            let line = std::mem::take(&mut self.pending[0]);
            self.data_line(&line, 0);
        }
        for t in self.txs.iter_mut() {
            for f in t.files.iter_mut() {
                f.file.close(true);
            }
        }
    }

    fn tx_count(&self) -> u64 {
        self.tx_cnt
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.txs.iter().filter(|t| t.done).count() as u64
            + self.txs.front().map_or(self.tx_cnt, |t| t.id)
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer_ready(&self, tx: u64, buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        let fin = closed || self.final_tx(t);
        if buf >= BUF_FILE_DATA {
            return (!t.files.is_empty() || fin)
                .then_some(fin || t.files.iter().all(SmtpFile::closed));
        }
        if buf >= BUF_EMAIL_FROM {
            let headers = t.mime.as_ref().is_some_and(|m| m.headers_done());
            return (headers || fin).then_some(fin);
        }
        Some(fin)
    }

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        match buf {
            BUF_HELO => self.helo.as_deref().is_some_and(f),
            BUF_MAIL_FROM => t.mail_from.as_deref().is_some_and(f),
            BUF_RCPT_TO => t.rcpt_to.iter().any(|r| f(r)),
            BUF_FILE_DATA => t.files.iter().any(|x| f(&x.data)),
            BUF_FILE_NAME => t.files.iter().any(|x| f(x.file.name())),
            _ => {
                let Some(m) = t.mime.as_ref() else {
                    return false;
                };
                let field: &[u8] = match buf {
                    BUF_EMAIL_FROM => b"from",
                    BUF_EMAIL_SUBJECT => b"subject",
                    BUF_EMAIL_TO => b"to",
                    BUF_EMAIL_CC => b"cc",
                    BUF_EMAIL_DATE => b"date",
                    BUF_EMAIL_MESSAGE_ID => b"message-id",
                    BUF_EMAIL_X_MAILER => b"x-mailer",
                    BUF_EMAIL_URL => return m.log_urls().any(|u| f(&u.url)),
                    BUF_EMAIL_RECEIVED => return m.msg().fields_named(b"received").any(&mut *f),
                    _ => return false,
                };
                m.msg().field(field).is_some_and(f)
            }
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        ev < 32 && self.tx(tx).is_some_and(|t| t.event_bits & (1 << ev) != 0)
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.tx(tx).is_none_or(|t| self.final_tx(t))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // Suricata logs a direction's files on packets of that direction (SMTP files go
        // to the server) and at flow end.
        let files_now = c.pkt_dir != Some(Dir::ToClient);
        let want_files = c.write && c.out.wants_type("files");
        let want_smtp = c.write && c.out.wants_type("smtp");
        let closed = c.closed;
        // Attachments are logged when their part ends.
        for i in 0..self.txs.len() {
            let fin = closed || self.final_tx(&self.txs[i]);
            for j in 0..self.txs[i].files.len() {
                let f = &mut self.txs[i].files[j];
                if f.logged || !(f.closed() || fin) || !(files_now || closed) {
                    continue;
                }
                // A file its transaction ended before its part did is cut short.
                f.file.close(true);
                if want_files || (c.write && crate::files::wants_fileinfo_file(&f.file)) {
                    self.write_fileinfo(c, i, j, want_files);
                }
                self.txs[i].files[j].logged = true;
            }
        }
        let mut id = *c.next;
        while let Some(t) = self.tx(id) {
            if !(self.final_tx(t) || closed) {
                break;
            }
            if want_smtp {
                if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                    write_eve_header(&mut rec, &c.rec.header("smtp", true));
                    rec.set_u64("tx_id", id);
                    self.write_objects_with(t, &mut rec, Some(&c.opts.smtp));
                    rec.close();
                    let _ = rec.commit();
                }
            }
            c.logged += 1;
            if self.has_curr && self.txs.back().is_some_and(|b| b.id == id) {
                // Suricata frees a logged transaction: it is no longer the current one.
                self.has_curr = false;
            }
            id += 1;
        }
        *c.next = id;
        let keep_from = if closed {
            id
        } else {
            c.inspected.min(id).max(id.saturating_sub(8))
        };
        // A transaction whose attachments are not logged yet stays.
        while self
            .txs
            .front()
            .is_some_and(|t| t.id < keep_from && t.files.iter().all(|f| f.logged))
        {
            self.txs.pop_front();
        }
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut().filter(|t| t.id >= from) {
            // Every entry of the list once, repeats included, as Suricata's anomaly
            // logger writes them.
            for &e in t.events.get(t.events_logged..).unwrap_or_default() {
                if let Some(name) = EVENT_NAMES.get(usize::from(e)) {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: true,
                    });
                }
            }
            t.events_logged = t.events.len();
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        // The `files` array comes from `files` (the files of the alert's direction).
        self.write_objects(t, w);
        true
    }

    fn switch_to(&self) -> Option<AppProto> {
        self.upgrade.then_some(AppProto::TLS)
    }

    fn files(&self, tx: u64, dir: Dir, f: &mut dyn FnMut(&crate::files::TrackedFile)) {
        if dir != Dir::ToServer {
            return;
        }
        if let Some(t) = self.tx(tx) {
            for x in &t.files {
                f(&x.file);
            }
        }
    }

    fn files_mut(&mut self, tx: u64, dir: Dir, f: &mut dyn FnMut(&mut crate::files::TrackedFile)) {
        if dir != Dir::ToServer {
            return;
        }
        if let Some(t) = self.txs.iter_mut().find(|t| t.id == tx) {
            for x in t.files.iter_mut() {
                f(&mut x.file);
            }
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Appends the comma-separated addresses of `v` (quotes respected, leading blanks
/// skipped) as array items; false when there was none.
fn comma_list(w: &mut JsonWriter, v: &[u8]) -> bool {
    let mut any = false;
    let mut start = 0;
    let mut state = 0;
    for (i, &c) in v.iter().enumerate() {
        match state {
            0 => {
                if c == b' ' || c == b'\t' {
                    start += 1;
                } else if c == b'"' {
                    state = 2;
                } else {
                    state = 1;
                }
            }
            1 => {
                if c == b',' {
                    if i > start {
                        w.bytes(&v[start..i]);
                        any = true;
                    }
                    start = i + 1;
                    state = 0;
                } else if c == b'"' {
                    state = 2;
                }
            }
            _ => {
                if c == b'"' {
                    state = 1;
                }
            }
        }
    }
    if v.len() > start {
        w.bytes(&v[start..]);
        any = true;
    }
    any
}

fn cstr(v: &[u8]) -> &[u8] {
    let end = v.iter().position(|&c| c == 0).unwrap_or(v.len());
    &v[..end]
}

impl SmtpState {
    /// The `smtp` and `email` objects of a transaction (alerts, fileinfo).
    fn write_objects(&self, t: &SmtpTx, w: &mut JsonWriter) {
        self.write_objects_with(t, w, None);
    }

    /// The `smtp` and `email` objects; `log`: the `smtp` record's options (custom fields,
    /// MD5s).
    fn write_objects_with(&self, t: &SmtpTx, w: &mut JsonWriter, log: Option<&SmtpLogConfig>) {
        w.open_object("smtp");
        if let Some(h) = &self.helo {
            w.set_bytes("helo", cstr(h));
        }
        if let Some(m) = &t.mail_from {
            w.set_bytes("mail_from", cstr(m));
        }
        if !t.rcpt_to.is_empty() {
            w.open_array("rcpt_to");
            for r in &t.rcpt_to {
                w.bytes(cstr(r));
            }
            w.close();
        }
        w.close();
        if let Some(m) = &t.mime {
            if m.top().is_some() {
                w.open_object("email");
                write_email(w, m);
                if let Some(l) = log {
                    write_email_extra(w, m, l);
                }
                w.close();
            }
        }
    }

    /// A file's `fileinfo` record: to the eve-log when `emit`, and to the stored file's
    /// metadata file (`write-fileinfo`).
    fn write_fileinfo(&self, c: &mut LogCtx<'_>, i: usize, j: usize, emit: bool) {
        let t = &self.txs[i];
        let f = &t.files[j];
        let Some(mut rec) = c.out.record(EventKind::Other) else {
            return;
        };
        let hdr = c.rec.header("fileinfo", true);
        write_eve_header(&mut rec, &hdr);
        self.write_objects(t, &mut rec);
        rec.set_str("app_proto", "smtp");
        rec.open_object("fileinfo");
        f.file.write_eve(&mut rec, t.id, None);
        rec.close();
        rec.close();
        crate::files::finish_fileinfo(rec, &f.file, hdr.timestamp_ns, emit);
    }
}

/// The `custom` fields and MD5s of the `email` object in `smtp` records.
fn write_email_extra(w: &mut JsonWriter, m: &MimeParser, l: &SmtpLogConfig) {
    let msg = m.msg();
    for (i, (key, name, kind)) in EMAIL_FIELDS.iter().enumerate() {
        if l.fields & (1 << i) == 0 {
            continue;
        }
        match kind {
            FieldKind::All => {
                let mut vals = msg.fields_named(name).peekable();
                if vals.peek().is_some() {
                    w.open_array(key);
                    for v in vals.filter(|v| !v.is_empty()) {
                        w.bytes(v);
                    }
                    w.close();
                }
            }
            FieldKind::Comma => {
                if let Some(v) = msg.field(name) {
                    let mark = w.mark();
                    w.open_array(key);
                    if comma_list(w, v) {
                        w.close();
                    } else {
                        w.rollback(mark);
                    }
                }
            }
            FieldKind::One => {
                if let Some(v) = msg.field(name).filter(|v| !v.is_empty()) {
                    w.set_bytes(key, v);
                }
            }
        }
    }
    if l.subject_md5 {
        if let Some(v) = msg.field(b"subject") {
            w.set_str("subject_md5", &md5_hex(v));
        }
    }
    if l.body_md5 && m.status == Status::ParseDone {
        if let Some(d) = m.body_md5() {
            w.set_str("body_md5", &hex(&d));
        }
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn md5_hex(v: &[u8]) -> String {
    use md5::Digest as _;
    hex(&md5::Md5::digest(v))
}

/// The members of the `email` object.
fn write_email(w: &mut JsonWriter, m: &MimeParser) {
    w.set_str("status", m.status.name());
    let msg = m.msg();
    if let Some(from) = msg.field(b"from") {
        let v = cstr(from);
        let s = v
            .iter()
            .position(|&c| c != b' ' && c != b'\t')
            .unwrap_or(v.len());
        w.set_bytes("from", &v[s..]);
    }
    for (key, name) in [("to", &b"to"[..]), ("cc", &b"cc"[..])] {
        if let Some(v) = msg.field(name) {
            let mark = w.mark();
            w.open_array(key);
            if comma_list(w, v) {
                w.close();
            } else {
                w.rollback(mark);
            }
        }
    }
    let Some(top) = m.top() else {
        return;
    };
    if !top.urls.is_empty() {
        let ipv6 = top
            .urls
            .iter()
            .any(|u| u.flags & (mime::URL_IS_IP6 | mime::URL_IS_IP4) != 0);
        let exe = top.urls.iter().any(|u| u.flags & mime::URL_IS_EXE != 0);
        // Suricata 7 reports an IPv4 URL as `has_ipv6_url` and never sets
        // `has_ipv4_url`.
        w.set_bool("has_ipv6_url", ipv6);
        w.set_bool("has_ipv4_url", false);
        w.set_bool("has_exe_url", exe);
    }
    let mut att = m.log_attachments().peekable();
    if att.peek().is_some() {
        w.open_array("attachment");
        // Suricata appends no empty string.
        for a in att.filter(|a| !a.is_empty()) {
            w.bytes(a);
        }
        w.close();
    }
    let mut urls = m.log_urls().peekable();
    if urls.peek().is_some() {
        w.open_array("url");
        for u in urls {
            w.bytes(&u.url);
        }
        w.close();
    }
}

#[cfg(test)]
mod tests;
