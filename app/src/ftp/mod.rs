//! FTP control channel, as Suricata 7's parser (`app-layer-ftp.c`, `rust/src/ftp`) has it:
//! commands recognised by Suricata's command list, replies (multi-line, `1xx` preliminary
//! replies keep the transaction open), `PORT`/`EPRT`/`PASV`/`EPSV` dynamic ports, `AUTH TLS`
//! (a `234` reply continues the flow as TLS), lines cut at `max-line-length` with
//! Suricata's events, and the `ftp` record.
//!
//! * Detection: `220 (` from the server, `FEAT`, `USER `, `PASS `, `PORT ` from the client
//!   (content patterns, any case, any port; port 21 first).
//! * Transactions: one per recognised command; a reply with no open command opens one
//!   without a command (the server's greeting). At most `max-tx` (1024) transactions
//!   pending per flow.
//! * `RETR`/`STOR` with no dynamic port known (no `PASV`/`PORT` before) end the parse, as
//!   in Suricata (where they set up the data connection's expectation).
//!
//! Not yet: the `ftp-data` flows (expectations, files, `ftp_data` records), `ftpbounce`,
//! `ftpdata_command`, the Suricata 8 `ftp.*` keywords, `app-layer.protocols.ftp.memcap`.

pub mod data;

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::{AppProto, Dir};

/// Longest line (`max-line-length`).
pub const MAX_LINE_LEN: usize = 4096;
/// Pending transactions per flow (`max-tx`).
pub const MAX_TX: u64 = 1024;
/// Replies kept per transaction (shrike's bound).
const MAX_REPLIES: usize = 256;

/// Suricata's command table, in its order (the first pattern to end in a line wins).
const COMMANDS: &[&str] = &[
    "PORT", "EPRT", "AUTH TLS", "PASV", "RETR", "EPSV", "STOR", "ABOR", "ACCT", "ALLO", "APPE",
    "CDUP", "CHMOD", "CWD", "DELE", "HELP", "IDLE", "LIST", "MAIL", "MDTM", "MKD", "MLFL", "MODE",
    "MRCP", "MRSQ", "MSAM", "MSND", "MSOM", "NLST", "NOOP", "PASS", "PWD", "QUIT", "REIN", "REST",
    "RMD", "RNFR", "RNTO", "SITE", "SIZE", "SMNT", "STAT", "STOU", "STRU", "SYST", "TYPE", "UMASK",
    "USER",
];
const C_PORT: usize = 0;
const C_EPRT: usize = 1;
const C_AUTH_TLS: usize = 2;
const C_PASV: usize = 3;
const C_RETR: usize = 4;
const C_EPSV: usize = 5;
const C_STOR: usize = 6;

const EVENT_NAMES: &[&str] = &["request_command_too_long", "response_command_too_long"];

/// FTP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "ftp",
    aliases: &[],
    ip_protos: &[6],
    ports: &[21],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[
        BufferDesc {
            name: "ftp.command",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ftp.command_data",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ftp.reply",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "ftp.completion_code",
            dir: Some(Dir::ToClient),
        },
    ],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "ftp.dynamic_port",
            dir: None,
            setup: dynamic_port_setup,
        },
        KeywordDesc {
            name: "ftp.mode",
            dir: None,
            setup: mode_setup,
        },
        KeywordDesc {
            name: "ftp.reply_received",
            dir: None,
            setup: reply_received_setup,
        },
        KeywordDesc {
            name: "ftpbounce",
            dir: Some(Dir::ToServer),
            setup: bounce_setup,
        },
    ],
    generic_stats: true,
};

const BUF_COMMAND: u16 = 0;
const BUF_COMMAND_DATA: u16 = 1;
const BUF_REPLY: u16 = 2;
const BUF_COMPLETION_CODE: u16 = 3;

/// Suricata 8's `ftp.dynamic_port`, `ftp.mode`, `ftp.reply_received`.
#[derive(Debug)]
enum FtpKw {
    DynPort(shrike_rules::parse::UintMatch),
    Active(bool),
    ReplyReceived(bool),
}

fn dynamic_port_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("ftp.dynamic_port needs a value")?;
    let m = shrike_rules::parse::UintMatch::parse(v, u64::from(u16::MAX), "ftp.dynamic_port")
        .map_err(|e| e.to_string())?;
    Ok(Box::new(FtpKw::DynPort(m)))
}

fn mode_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    match v.map(str::trim) {
        Some("active") => Ok(Box::new(FtpKw::Active(true))),
        Some("passive") => Ok(Box::new(FtpKw::Active(false))),
        _ => Err("ftp.mode takes active or passive".into()),
    }
}

fn reply_received_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    match v.map(str::trim) {
        Some("yes") | Some("true") | Some("on") => Ok(Box::new(FtpKw::ReplyReceived(true))),
        Some("no") | Some("false") | Some("off") => Ok(Box::new(FtpKw::ReplyReceived(false))),
        _ => Err("ftp.reply_received takes yes or no".into()),
    }
}

/// `ftpbounce`: the last command is `PORT` and its address is not the client's.
#[derive(Debug)]
struct Bounce;

fn bounce_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    if v.is_some_and(|v| !v.trim().is_empty()) {
        return Err("ftpbounce takes no value".into());
    }
    Ok(Box::new(Bounce))
}

/// Suricata's `DetectFtpbounceMatchArgs`: the first four numbers of the `PORT` line
/// (after what is not a digit) against the client's IPv4 address.
fn port_line_bounces(line: &[u8], client: [u8; 4]) -> bool {
    if line.len() < 7 || 7 >= line.len() {
        return false;
    }
    let mut i = line
        .iter()
        .position(u8::is_ascii_digit)
        .unwrap_or(line.len());
    let (mut octet, mut digits, mut n) = (0u32, 0, 0);
    let mut ip = [0u8; 4];
    while i < line.len() && digits < 4 {
        let c = line[i];
        if c.is_ascii_digit() {
            octet = octet * 10 + u32::from(c - b'0');
            digits += 1;
        } else {
            if octet > 256 {
                return false;
            }
            while i < line.len() && line[i].is_ascii_whitespace() {
                i += 1;
            }
            if line.get(i) != Some(&b',') {
                return false;
            }
            ip[n] = octet as u8;
            n += 1;
            digits = 0;
            octet = 0;
            if n == 4 {
                return ip != client;
            }
        }
        i += 1;
    }
    false
}

impl TxMatch for Bounce {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<FtpState>()?;
        let t = s.tx(tx)?;
        Some(
            t.command == Some(C_PORT)
                && s.command == Some(C_PORT)
                && port_line_bounces(&s.port_line, s.client),
        )
    }
}

impl TxMatch for FtpKw {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<FtpState>()?;
        let t = s.tx(tx)?;
        let fin = s.final_tx(t);
        match self {
            FtpKw::ReplyReceived(want) => {
                if t.done || fin {
                    Some(t.done == *want)
                } else {
                    None
                }
            }
            _ if !fin => None,
            FtpKw::DynPort(m) => Some(t.dyn_port != 0 && m.matches(u64::from(t.dyn_port))),
            FtpKw::Active(a) => Some(t.dyn_port != 0 && t.active == *a),
        }
    }
}

/// Suricata's FTP patterns at the start of a direction.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    let pats: &[&[u8]] = match dir {
        Dir::ToClient => &[b"220 ("],
        Dir::ToServer => &[b"FEAT", b"USER ", b"PASS ", b"PORT "],
    };
    let mut more = false;
    for p in pats {
        let n = data.len().min(p.len());
        if data[..n].eq_ignore_ascii_case(&p[..n]) {
            if n == p.len() {
                return Probe::Yes;
            }
            more = true;
        }
    }
    if more {
        Probe::NeedMore
    } else {
        Probe::No
    }
}

/// `app-layer.protocols.ftp` as shrike's configuration holds it (`detect.app-layer.ftp`),
/// translated from a `suricata.yaml`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FtpConfig {
    /// `max-tx`: pending transactions per flow before the parser gives up.
    pub max_tx: u64,
    /// `max-line-length`: longer lines are cut (`request_command_too_long`,
    /// `response_command_too_long`).
    pub max_line_length: u32,
}

impl Default for FtpConfig {
    fn default() -> Self {
        FtpConfig {
            max_tx: MAX_TX,
            max_line_length: MAX_LINE_LEN as u32,
        }
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(FtpState {
        cfg: cfg.ftp,
        files: cfg.files,
        ..FtpState::default()
    })
}

/// A reply line.
#[derive(Debug, Clone)]
struct Reply {
    text: Vec<u8>,
    truncated: bool,
}

/// One command and its replies.
#[derive(Debug, Default)]
pub struct FtpTx {
    /// Transaction id.
    pub id: u64,
    /// Index into Suricata's command table (`None`: a reply without a command).
    pub command: Option<usize>,
    /// The command line, trailing blanks removed.
    pub request: Vec<u8>,
    /// The command line was cut.
    pub request_truncated: bool,
    replies: Vec<Reply>,
    /// Dynamic port from `PORT`/`EPRT`/`PASV`/`EPSV`.
    pub dyn_port: u16,
    /// Active mode (`PORT`/`EPRT`).
    pub active: bool,
    /// The final reply came.
    pub done: bool,
    events: Vec<u8>,
    events_logged: usize,
}

/// Per-flow FTP state.
#[derive(Debug, Default)]
pub struct FtpState {
    cfg: FtpConfig,
    files: crate::files::FileConfig,
    txs: VecDeque<FtpTx>,
    tx_cnt: u64,
    /// The last command recognised (`None`: the last line was no command).
    command: Option<usize>,
    port_line: Vec<u8>,
    dyn_port: u16,
    active: bool,
    truncated: [bool; 2],
    pending: [Vec<u8>; 2],
    failed: bool,
    upgrade: bool,
    closed: bool,
    /// Transactions below this id were logged (Suricata frees them: replies no longer
    /// reach them).
    logged_upto: u64,
    /// Data connections announced, not yet taken by the app layer.
    expected: Vec<crate::registry::Expect>,
    /// The client's address (first four bytes).
    client: [u8; 4],
}

fn di(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

/// The command whose pattern ends first in `line` (Suricata's multi-pattern search over
/// the whole line, any case).
fn find_command(line: &[u8]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, c) in COMMANDS.iter().enumerate() {
        let c = c.as_bytes();
        if let Some(p) = line
            .windows(c.len())
            .position(|w| w.eq_ignore_ascii_case(c))
        {
            let end = p + c.len();
            if best.is_none_or(|(e, _)| end < e) {
                best = Some((end, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

fn trim_end(v: &[u8]) -> Vec<u8> {
    let n = v
        .iter()
        .rposition(|c| !c.is_ascii_whitespace() && *c != 0x0b)
        .map_or(0, |p| p + 1);
    v[..n].to_vec()
}

fn digits_u16(v: &[u8]) -> Option<(u16, &[u8])> {
    let n = v.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let x: u16 = std::str::from_utf8(&v[..n]).ok()?.parse().ok()?;
    Some((x, &v[n..]))
}

fn skip_ws(v: &[u8]) -> &[u8] {
    let n = v.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &v[n..]
}

fn skip_digits(v: &[u8]) -> Option<&[u8]> {
    let n = v.iter().take_while(|c| c.is_ascii_digit()).count();
    (n > 0).then(|| &v[n..])
}

/// `PORT h1,h2,h3,h4,p1,p2`: the port.
pub fn active_port(v: &[u8]) -> Option<u16> {
    let v = v.strip_prefix(b"PORT")?;
    let mut v = skip_ws(skip_digits(skip_ws(v))?);
    for _ in 0..3 {
        v = v.strip_prefix(b",")?;
        v = skip_digits(v)?;
    }
    v = v.strip_prefix(b",")?;
    let (p1, v) = digits_u16(v)?;
    let v = v.strip_prefix(b",")?;
    let (p2, _) = digits_u16(v)?;
    (p1 <= 255 && p2 <= 255).then(|| p1 * 256 + p2)
}

/// `227 ... (h1,h2,h3,h4,p1,p2)`: the port.
pub fn pasv_port(v: &[u8]) -> Option<u16> {
    let v = v.strip_prefix(b"227")?;
    let open = v.iter().position(|&c| c == b'(')?;
    let mut v = &v[open + 1..];
    for _ in 0..4 {
        v = skip_digits(v)?;
        v = v.strip_prefix(b",")?;
    }
    let (p1, v) = digits_u16(skip_ws(v))?;
    let v = skip_ws(v).strip_prefix(b",")?;
    let (p2, v) = digits_u16(skip_ws(v))?;
    skip_ws(v).strip_prefix(b")")?;
    (p1 <= 255 && p2 <= 255).then(|| p1 * 256 + p2)
}

/// `229 ... (|||port|)`: the port.
pub fn epsv_port(v: &[u8]) -> Option<u16> {
    let v = v.strip_prefix(b"229")?;
    let at = v.windows(3).position(|w| w == b"|||")?;
    let (p, v) = digits_u16(skip_ws(&v[at + 3..]))?;
    skip_ws(v).strip_prefix(b"|)")?;
    Some(p)
}

/// `EPRT |af|addr|port|`: the port.
pub fn eprt_port(v: &[u8]) -> Option<u16> {
    let mut v = v.strip_prefix(b"EPRT")?;
    for _ in 0..3 {
        let at = v.iter().position(|&c| c == b'|')?;
        v = &v[at + 1..];
    }
    let (p, v) = digits_u16(skip_ws(v))?;
    skip_ws(v).strip_prefix(b"|")?;
    Some(p)
}

impl FtpState {
    /// The transaction with id `id`, if held.
    pub fn tx(&self, id: u64) -> Option<&FtpTx> {
        let first = self.txs.front()?.id;
        self.txs.get(usize::try_from(id.checked_sub(first)?).ok()?)
    }

    fn new_tx(&mut self) -> bool {
        if self
            .txs
            .front()
            .is_some_and(|f| self.tx_cnt - f.id > self.cfg.max_tx)
        {
            return false;
        }
        self.txs.push_back(FtpTx {
            id: self.tx_cnt,
            ..FtpTx::default()
        });
        self.tx_cnt += 1;
        true
    }

    fn feed(&mut self, dir: Dir, mut data: &[u8]) -> bool {
        let d = di(dir);
        let max = (self.cfg.max_line_length as usize).clamp(8, 1 << 20);
        while !data.is_empty() && !self.failed && !self.upgrade {
            let Some(lf) = memchr::memchr(b'\n', data) else {
                if self.truncated[d] {
                    return true;
                }
                let p = &mut self.pending[d];
                let room = max.saturating_sub(p.len());
                p.extend_from_slice(&data[..data.len().min(room)]);
                if p.len() >= max {
                    let line = std::mem::take(&mut self.pending[d]);
                    self.truncated[d] = true;
                    return self.line(dir, &line, true, false);
                }
                return true;
            };
            let chunk = &data[..lf];
            data = &data[lf + 1..];
            if self.truncated[d] {
                // The rest of a cut line.
                self.truncated[d] = false;
                self.pending[d].clear();
                continue;
            }
            let mut owned;
            let full: &[u8] = if self.pending[d].is_empty() {
                chunk
            } else {
                owned = std::mem::take(&mut self.pending[d]);
                owned.extend_from_slice(&chunk[..chunk.len().min(max + 1)]);
                &owned
            };
            if full.len() + 1 >= max {
                if !self.line(dir, &full[..full.len().min(max)], true, true) {
                    return false;
                }
                continue;
            }
            let line = full.strip_suffix(b"\r").unwrap_or(full);
            if !self.line(dir, line, false, true) {
                return false;
            }
        }
        true
    }

    fn line(&mut self, dir: Dir, line: &[u8], truncated: bool, lf: bool) -> bool {
        match dir {
            Dir::ToServer => self.request(line, truncated),
            Dir::ToClient => {
                let _ = lf;
                self.response(line, truncated)
            }
        }
    }

    fn request(&mut self, line: &[u8], truncated: bool) -> bool {
        let Some(cmd) = find_command(line) else {
            self.command = None;
            return true;
        };
        self.command = Some(cmd);
        if !self.new_tx() {
            return false;
        }
        let Some(tx) = self.txs.back_mut() else {
            return false;
        };
        tx.command = Some(cmd);
        tx.request = trim_end(line);
        tx.request_truncated = truncated;
        if truncated {
            tx.events.push(0);
        }
        match cmd {
            C_PORT | C_EPRT => {
                self.port_line = line.to_vec();
            }
            C_RETR | C_STOR => {
                if self.dyn_port == 0 || line.len() < 6 {
                    return false;
                }
                // The data goes to the client of the data connection for a passive RETR
                // and an active STOR, to its server otherwise.
                let retr = cmd == C_RETR;
                let dir = if self.active != retr {
                    Dir::ToClient
                } else {
                    Dir::ToServer
                };
                let name = line[5..line.len().min(5 + 4095)].to_vec();
                if let Some(proto) = AppProto::from_name("ftp-data") {
                    if self.expected.len() < 64 {
                        self.expected.push(crate::registry::Expect {
                            port: self.dyn_port,
                            proto,
                            parser: Box::new(
                                data::FtpDataState::new(retr, name, dir).with_files(self.files),
                            ),
                        });
                    }
                }
                self.dyn_port = 0;
                self.active = false;
            }
            _ => {}
        }
        true
    }

    fn response(&mut self, line: &[u8], truncated: bool) -> bool {
        let upto = self.logged_upto;
        let first = self.txs.iter().position(|t| t.id >= upto);
        let idx = match first {
            Some(f) => match self.txs.iter().skip(f).position(|t| !t.done) {
                Some(i) => f + i,
                None => self.txs.len() - 1,
            },
            None => {
                if !self.new_tx() {
                    return false;
                }
                self.txs.len() - 1
            }
        };
        let command = self.command;
        let mut complete_only = false;
        match command {
            Some(C_AUTH_TLS) if line.starts_with(b"234 ") => self.upgrade = true,
            Some(C_EPRT) | Some(C_PORT) => {
                let p = if command == Some(C_PORT) {
                    active_port(&self.port_line)
                } else {
                    eprt_port(&self.port_line)
                };
                match p.filter(|&p| p != 0) {
                    Some(p) => {
                        self.dyn_port = p;
                        self.active = true;
                        let tx = &mut self.txs[idx];
                        tx.dyn_port = p;
                        tx.active = true;
                    }
                    None => complete_only = true,
                }
            }
            Some(C_PASV) | Some(C_EPSV) => {
                let port = if command == Some(C_PASV) {
                    line.starts_with(b"227 ").then(|| pasv_port(line)).flatten()
                } else {
                    line.starts_with(b"229 ").then(|| epsv_port(line)).flatten()
                };
                {
                    if let Some(p) = port.filter(|&p| p != 0) {
                        self.active = false;
                        self.dyn_port = p;
                        let tx = &mut self.txs[idx];
                        tx.dyn_port = p;
                        tx.active = false;
                    }
                }
            }
            _ => {}
        }
        let tx = &mut self.txs[idx];
        if complete_only {
            tx.done = true;
            return true;
        }
        if !line.is_empty() && tx.replies.len() < MAX_REPLIES {
            tx.replies.push(Reply {
                text: trim_end(line),
                truncated,
            });
            if truncated {
                tx.events.push(1);
            }
        }
        let ppr = line.len() >= 4
            && line[0] == b'1'
            && line[1].is_ascii_digit()
            && line[2].is_ascii_digit()
            && (line[3].is_ascii_whitespace() || line[3] == 0x0b);
        if !ppr {
            tx.done = true;
        }
        true
    }

    fn final_tx(&self, t: &FtpTx) -> bool {
        t.done || self.closed || self.failed || self.upgrade
    }

    fn write_ftp(&self, t: &FtpTx, w: &mut JsonWriter) {
        w.open_object("ftp");
        if let Some(c) = t.command {
            let name = COMMANDS[c];
            w.set_str("command", name);
            let min = name.len() + 1;
            if t.request.len() > name.len() {
                let data = t.request.get(min..).unwrap_or_default();
                if !data.is_empty() {
                    w.set_bytes("command_data", data);
                }
                w.set_bool("command_truncated", t.request_truncated);
            }
        }
        let mut codes = false;
        for r in &t.replies {
            let s = &r.text;
            if s.first() == Some(&0) {
                continue;
            }
            if s.len() >= 3 && s[..3].iter().all(u8::is_ascii_digit) {
                if !codes {
                    w.open_array("completion_code");
                    codes = true;
                }
                w.bytes(&s[..3]);
            }
        }
        if codes {
            w.close();
        }
        let mut any = false;
        for r in &t.replies {
            let s = &r.text;
            if s.first() == Some(&0) {
                continue;
            }
            let off = if s.len() >= 3 && s[..3].iter().all(u8::is_ascii_digit) {
                4
            } else {
                0
            };
            // Suricata appends no empty string. Suricata 7.0.10 still opens the array for a
            // reply with nothing after its code (an empty `reply: []`), which the EVE schema
            // refuses; shrike leaves the member out then, as the schema (Suricata 8) wants.
            if s.len() > off {
                if !any {
                    w.open_array("reply");
                    any = true;
                }
                w.bytes(&s[off..]);
            }
        }
        if any {
            w.close();
        }
        if t.dyn_port != 0 {
            w.set_u64("dynamic_port", u64::from(t.dyn_port));
        }
        if matches!(t.command, Some(C_PORT) | Some(C_EPRT)) {
            w.set_str("mode", if t.active { "active" } else { "passive" });
        }
        w.set_str("reply_received", if t.done { "yes" } else { "no" });
        w.set_bool("reply_truncated", t.replies.iter().any(|r| r.truncated));
        w.close();
    }
}

impl AppParser for FtpState {
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
        self.failed = true;
    }

    fn close(&mut self) {
        self.closed = true;
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

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.tx(tx)
            .is_some_and(|t| t.events.iter().any(|&e| u16::from(e) == ev))
    }

    fn buffer_ready(&self, tx: u64, buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        match buf {
            BUF_COMMAND | BUF_COMMAND_DATA => Some(true),
            _ => Some(closed || self.final_tx(t)),
        }
    }

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        match buf {
            BUF_COMMAND => t.command.is_some_and(|c| f(COMMANDS[c].as_bytes())),
            BUF_COMMAND_DATA => t.command.is_some_and(|c| {
                let d = t.request.get(COMMANDS[c].len() + 1..).unwrap_or_default();
                !d.is_empty() && f(d)
            }),
            BUF_REPLY => t.replies.iter().any(|r| {
                let s = &r.text;
                let off = if s.len() >= 3 && s[..3].iter().all(u8::is_ascii_digit) {
                    4
                } else {
                    0
                };
                s.len() > off && f(&s[off..])
            }),
            BUF_COMPLETION_CODE => t.replies.iter().any(|r| {
                r.text.len() >= 3 && r.text[..3].iter().all(u8::is_ascii_digit) && f(&r.text[..3])
            }),
            _ => false,
        }
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.tx(tx).is_none_or(|t| self.final_tx(t))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let want = c.write && c.out.wants_type("ftp");
        let mut id = *c.next;
        while let Some(t) = self.tx(id) {
            if !(self.final_tx(t) || c.closed) {
                break;
            }
            if want {
                if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                    write_eve_header(&mut rec, &c.rec.header("ftp", true));
                    rec.set_u64("tx_id", id);
                    self.write_ftp(t, &mut rec);
                    rec.close();
                    let _ = rec.commit();
                }
            }
            c.logged += 1;
            id += 1;
        }
        *c.next = id;
        self.logged_upto = id;
        let keep_from = if c.closed {
            id
        } else {
            c.inspected.min(id).max(id.saturating_sub(8))
        };
        while self.txs.front().is_some_and(|t| t.id < keep_from) {
            self.txs.pop_front();
        }
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut().filter(|t| t.id >= from) {
            for &e in t.events.get(t.events_logged..).unwrap_or_default() {
                if let Some(name) = EVENT_NAMES.get(usize::from(e)) {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
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
        self.write_ftp(t, w);
        true
    }

    fn switch_to(&self) -> Option<AppProto> {
        self.upgrade.then_some(AppProto::TLS)
    }

    fn flow_addrs(&mut self, client: &[u8; 16], _server: &[u8; 16]) {
        self.client = [client[0], client[1], client[2], client[3]];
    }

    fn take_expected(&mut self, out: &mut Vec<crate::registry::Expect>) {
        out.append(&mut self.expected);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: &[(Dir, &[u8])], split: usize) -> FtpState {
        let mut s = FtpState::default();
        for (d, data) in steps {
            for c in data.chunks(split) {
                AppParser::parse(&mut s, *d, c);
            }
        }
        s
    }

    fn json(s: &FtpState, id: u64) -> serde_json::Value {
        let mut w = JsonWriter::with_capacity(256);
        w.start_object();
        s.write_ftp(s.tx(id).unwrap(), &mut w);
        w.close();
        serde_json::from_slice(w.as_bytes()).unwrap()
    }

    #[test]
    fn session_with_passive_and_active_ports() {
        for split in [1, 3, 1000] {
            let s = run(
                &[
                    (Dir::ToClient, b"220 (vsFTPd 3.0)\r\n"),
                    (Dir::ToServer, b"USER ftp\r\n"),
                    (Dir::ToClient, b"331 Please specify the password.\r\n"),
                    (Dir::ToServer, b"EPSV\r\n"),
                    (
                        Dir::ToClient,
                        b"229 Entering Extended Passive Mode (|||58612|)\r\n",
                    ),
                    (Dir::ToServer, b"RETR a.txt\r\n"),
                    (Dir::ToClient, b"150 Opening\r\n226 Done\r\n"),
                    (Dir::ToServer, b"PORT 10,0,0,1,232,157\r\n"),
                    (Dir::ToClient, b"200 PORT ok\r\n"),
                ],
                split,
            );
            let mut s = s;
            // What was logged is gone for replies, as in Suricata.
            s.logged_upto = s.tx_cnt;
            for (d, data) in [
                (Dir::ToServer, &b"FEAT\r\n"[..]),
                (Dir::ToClient, b"211-Features:\r\n MDTM\r\n211 End\r\n"),
            ] {
                for c in data.chunks(split) {
                    AppParser::parse(&mut s, d, c);
                }
            }
            let v = json(&s, 0);
            assert!(v["ftp"].get("command").is_none());
            assert_eq!(v["ftp"]["completion_code"][0], "220");
            assert_eq!(v["ftp"]["reply"][0], "(vsFTPd 3.0)");
            let v = json(&s, 1);
            assert_eq!(v["ftp"]["command"], "USER");
            assert_eq!(v["ftp"]["command_data"], "ftp");
            assert_eq!(json(&s, 2)["ftp"]["dynamic_port"], 58612);
            let v = json(&s, 3);
            assert_eq!(
                v["ftp"]["completion_code"],
                serde_json::json!(["150", "226"])
            );
            let v = json(&s, 4);
            assert_eq!(v["ftp"]["mode"], "active");
            assert_eq!(v["ftp"]["dynamic_port"], 59549);
            assert_eq!(v["ftp"]["reply_received"], "yes");
            // FEAT is not in Suricata's command list: its reply opens a transaction.
            let v = json(&s, 5);
            assert!(v["ftp"].get("command").is_none());
            assert_eq!(v["ftp"]["reply"][1], " MDTM");
            assert!(!s.failed);
        }
    }

    #[test]
    fn long_lines_retr_without_port_and_auth_tls() {
        let mut long = b"RETR ".to_vec();
        long.extend(std::iter::repeat_n(b'x', 5000));
        long.extend_from_slice(b"\r\n");
        let s = run(
            &[
                (Dir::ToClient, b"220 (x)\r\n"),
                (Dir::ToServer, b"PASV\r\n"),
                (
                    Dir::ToClient,
                    b"227 Entering Passive Mode (1,2,3,4,5,6).\r\n",
                ),
                (Dir::ToServer, &long),
            ],
            700,
        );
        let t = s.tx(2).unwrap();
        assert!(t.request_truncated);
        assert_eq!(t.request.len(), MAX_LINE_LEN);
        assert!(AppParser::has_event(&s, 2, 0));
        let s = run(&[(Dir::ToServer, b"USER a\r\nRETR b\r\n")], 1000);
        assert!(s.failed);
        let s = run(
            &[
                (Dir::ToServer, b"AUTH TLS\r\n"),
                (Dir::ToClient, b"234 go\r\n"),
            ],
            1000,
        );
        assert_eq!(s.switch_to(), Some(AppProto::TLS));
    }

    #[test]
    fn bounce_compares_the_port_address_with_the_client() {
        assert!(!port_line_bounces(b"PORT 10,0,0,1,4,1", [10, 0, 0, 1]));
        assert!(port_line_bounces(b"PORT 10,0,0,2,0,80", [10, 0, 0, 1]));
        assert!(!port_line_bounces(b"PORT 1000,0,0,2,0,80", [10, 0, 0, 1]));
        assert!(!port_line_bounces(b"PORT", [10, 0, 0, 1]));
    }

    #[test]
    fn port_parsers() {
        assert_eq!(active_port(b"PORT 192,168,0,1,1,2"), Some(258));
        assert_eq!(active_port(b"PORT 192,168,0,1,1,999"), None);
        assert_eq!(
            pasv_port(b"227 Entering Passive Mode (212,27,32,66,221,243)."),
            Some(56819)
        );
        assert_eq!(
            epsv_port(b"229 Entering Extended Passive Mode (|||48758|)."),
            Some(48758)
        );
        assert_eq!(eprt_port(b"EPRT |2|2a01:e34::1|41813|"), Some(41813));
        assert_eq!(find_command(b"xmkd dir"), Some(20));
        assert_eq!(probe(Dir::ToServer, b"USER x"), Probe::Yes);
        assert_eq!(probe(Dir::ToClient, b"220 (v"), Probe::Yes);
        assert_eq!(probe(Dir::ToClient, b"220 x"), Probe::No);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;
        use shrike_output::JsonWriter;

        /// Pieces that steer the parsers into their states.
        const WORDS: &[&[u8]] = &[
            b"EHLO a\r\n",
            b"MAIL FROM:<a>\r\n",
            b"RCPT TO:<b>\r\n",
            b"DATA\r\n",
            b"BDAT 5\r\n",
            b"BDAT -1 LAST\r\n",
            b"RSET\r\n",
            b"STARTTLS\r\n",
            b".\r\n",
            b"220 x\r\n",
            b"250-PIPELINING\r\n",
            b"250 ok\r\n",
            b"354 go\r\n",
            b"Content-Type: multipart/mixed; boundary=b\r\n",
            b"Content-Type: message/rfc822\r\n",
            b"Content-Transfer-Encoding: base64\r\n",
            b"Content-Transfer-Encoding: quoted-printable\r\n",
            b"Content-Disposition: attachment; filename*0=a; filename*1=b\r\n",
            b"\r\n",
            b"--b\r\n",
            b"--b--\r\n",
            b"QUJD=\r\n",
            b"=4\r\n",
            b"http://x.example/a.exe?q\r\n",
            b"\n",
            b"\r",
            b"USER a\r\n",
            b"PASV\r\n",
            b"227 (1,2,3,4,5,6)\r\n",
            b"PORT 1,2,3,4,5,6\r\n",
            b"RETR f\r\n",
            b"150 x\r\n",
            b"AUTH TLS\r\n",
            b"234 go\r\n",
        ];

        fn pieces() -> impl Strategy<Value = Vec<(bool, Vec<u8>)>> {
            let piece = prop_oneof![
                (0..WORDS.len()).prop_map(|i| WORDS[i].to_vec()),
                proptest::collection::vec(any::<u8>(), 0..64),
            ];
            proptest::collection::vec((any::<bool>(), piece), 0..60)
        }

        fn drive(p: &crate::registry::Protocol, steps: &[(bool, Vec<u8>)], split: usize) {
            let mut st = (p.new_parser)(&crate::registry::ParserConfig::default(), true);
            for (ts, d) in steps {
                let dir = if *ts { Dir::ToServer } else { Dir::ToClient };
                for c in d.chunks(split.max(1)) {
                    let _ = st.parse(dir, c);
                }
            }
            st.close();
            let mut txs = Vec::new();
            st.live_txs(Dir::ToServer, &mut txs);
            for &tx in &txs {
                for b in 0..p.buffers.len() as u16 {
                    for d in [Dir::ToServer, Dir::ToClient] {
                        let _ = st.buffer_ready(tx, b, d, true);
                        st.buffer(tx, b, d, &mut |_| false);
                    }
                }
                let mut w = JsonWriter::with_capacity(256);
                w.start_object();
                st.alert_members(tx, &mut w);
                w.close();
                assert!(serde_json::from_slice::<serde_json::Value>(w.as_bytes()).is_ok());
            }
            let mut ev = 0;
            st.drain_events(0, false, &mut |_| ev += 1);
        }

        proptest! {
            #[test]
            fn ftp_takes_any_input(steps in pieces(), split in 1usize..40) {
                drive(&crate::ftp::PROTOCOL, &steps, split);
                drive(&crate::ftp::data::PROTOCOL, &steps, split);
            }
        }
    }
}
