//! PostgreSQL (frontend/backend protocol 3.0) over TCP, as Suricata 7's `rust/src/pgsql`.
//!
//! * Off unless `app-layer.protocols.pgsql.enabled: yes` (Suricata 7's shipped
//!   `suricata.yaml` has it off); then a probing parser on port 5432: a startup packet,
//!   SSLRequest, CancelRequest or query to the server, an authentication request, SSL answer
//!   or other backend message to the client.
//! * Transactions as Suricata builds them: each request opens one (SSLRequest, startup,
//!   password / SASL messages, query, cancel, terminate) and the backend messages up to the
//!   next request are its responses; data rows are consolidated into `data_rows` /
//!   `data_size`. A transaction is complete at ReadyForQuery, an SSL answer, an
//!   authentication request, or at once for cancel and terminate.
//! * EVE `pgsql` records (`tx_id` from 1, `request`, `response`), `passwords` option (off by
//!   default, as Suricata); the `pgsql` object in alerts (with the password, as Suricata).
//! * Rules: `alert pgsql`, Suricata 8's `pgsql.query` sticky buffer.
//!
//! Not done: the hand-off to TLS after an accepted SSLRequest (the rest of the flow is not
//! parsed), the extended query protocol and COPY messages (Suricata 8).

pub mod parser;

use std::any::Any;
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;
use parser::{BeMessage, FeMessage, Parsed};

/// Parser settings (Suricata's `app-layer.protocols.pgsql.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct PgsqlConfig {
    /// `enabled`: detect and parse PostgreSQL (off by default, as Suricata 7's config).
    pub enabled: bool,
    /// `max-tx`: most open transactions per flow.
    pub max_tx: usize,
    /// `stream-depth`: reassembly depth of PostgreSQL flows (0: unlimited, Suricata's
    /// default for PostgreSQL).
    pub stream_depth: u64,
}

impl Default for PgsqlConfig {
    fn default() -> Self {
        PgsqlConfig {
            enabled: false,
            max_tx: 1024,
            stream_depth: 0,
        }
    }
}

/// eve-log `- pgsql:` options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct PgsqlLogConfig {
    /// `passwords`: log PasswordMessage contents (Suricata's default: no).
    pub passwords: bool,
}

/// PostgreSQL in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "pgsql",
    aliases: &[],
    ip_protos: &[6],
    ports: &[5432],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[BufferDesc {
        name: "pgsql.query",
        dir: Some(Dir::ToServer),
    }],
    events: &[],
    keywords: &[],
    generic_stats: true,
};

/// Suricata's probes: a non-"unknown" request to the server; an SSL answer or a
/// non-"unknown" backend message to the client.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if data.is_empty() {
        return Probe::NeedMore;
    }
    // Suricata gives the probing parser 16 bytes at most.
    let need_more = if data.len() < 16 {
        Probe::NeedMore
    } else {
        Probe::No
    };
    match dir {
        Dir::ToServer => match parser::parse_request(data) {
            Parsed::Done(FeMessage::Unknown, _) | Parsed::Error => Probe::No,
            Parsed::Done(..) => Probe::Yes,
            Parsed::Incomplete => need_more,
        },
        Dir::ToClient => {
            if let Parsed::Done(..) = parser::parse_ssl_response(data) {
                return Probe::Yes;
            }
            match parser::parse_response(data) {
                Parsed::Done(BeMessage::Unknown, _) | Parsed::Error => Probe::No,
                Parsed::Done(..) => Probe::Yes,
                Parsed::Incomplete => need_more,
            }
        }
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(PgsqlState::new(cfg.pgsql))
}

/// Where the session stands (Suricata's `PgsqlStateProgress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Idle,
    SslRequestReceived,
    StartupReceived,
    SaslInitialReceived,
    SaslResponseReceived,
    PasswordReceived,
    QueryReceived,
    CancelReceived,
    Terminated,
    SslRejected,
    SaslAuth,
    SaslContinue,
    SaslFinal,
    SimpleAuth,
    AuthOk,
    ParameterSetup,
    BackendKey,
    ReadyForQuery,
    RowDescription,
    DataRow,
    CommandCompleted,
    ErrorMessage,
    Finished,
}

/// Per-direction progress of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Progress {
    Init,
    Received,
    Done,
    FlushedOut,
}

/// One transaction.
#[derive(Debug)]
pub struct PgsqlTx {
    /// Id from 0 (EVE `pgsql.tx_id` is this plus one, as Suricata writes it).
    pub id: u64,
    req: Progress,
    res: Progress,
    /// The request.
    pub request: Option<FeMessage>,
    /// The responses (data rows consolidated).
    pub responses: Vec<BeMessage>,
    rows: u64,
    data_size: u64,
    logged: bool,
}

impl PgsqlTx {
    fn done(&self) -> bool {
        self.req >= Progress::Done && self.res >= Progress::Done
    }
}

/// Per-direction stream state.
#[derive(Debug, Default)]
struct Side {
    pending: Vec<u8>,
    gap: bool,
}

/// Per-flow PostgreSQL state.
#[derive(Debug)]
pub struct PgsqlState {
    cfg: PgsqlConfig,
    txs: VecDeque<PgsqlTx>,
    next_id: u64,
    st: St,
    sides: [Side; 2],
    /// Parsing stopped (an error, or TLS after an accepted SSLRequest).
    stopped: bool,
    unlogged: usize,
    completed: [u64; 2],
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

/// Keep this many logged transactions for detection.
const KEEP_LOGGED: usize = 32;

impl PgsqlState {
    /// A new flow state.
    pub fn new(cfg: PgsqlConfig) -> Self {
        PgsqlState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            st: St::Idle,
            sides: Default::default(),
            stopped: false,
            unlogged: 0,
            completed: [0; 2],
        }
    }

    /// Transaction `id`, if held.
    pub fn tx(&self, id: u64) -> Option<&PgsqlTx> {
        let i = self.txs.binary_search_by_key(&id, |t| t.id).ok()?;
        self.txs.get(i)
    }

    fn new_tx(&mut self) {
        if self.unlogged > self.cfg.max_tx {
            if let Some(old) = self.txs.iter_mut().find(|t| t.res < Progress::Done) {
                old.req = Progress::FlushedOut;
                old.res = Progress::FlushedOut;
            }
        }
        self.txs.push_back(PgsqlTx {
            id: self.next_id,
            req: Progress::Init,
            res: Progress::Init,
            request: None,
            responses: Vec::new(),
            rows: 0,
            data_size: 0,
            logged: false,
        });
        self.next_id += 1;
        self.unlogged += 1;
    }

    /// Suricata's `find_or_create_tx`: a new transaction in the states that start one.
    fn current_tx(&mut self) -> Option<&mut PgsqlTx> {
        if matches!(
            self.st,
            St::Idle
                | St::StartupReceived
                | St::PasswordReceived
                | St::SaslInitialReceived
                | St::SaslResponseReceived
                | St::QueryReceived
                | St::SslRequestReceived
                | St::Terminated
                | St::CancelReceived
        ) {
            self.new_tx();
        }
        self.txs.back_mut()
    }

    fn request_state(m: &FeMessage) -> Option<St> {
        Some(match m {
            FeMessage::SslRequest => St::SslRequestReceived,
            FeMessage::Startup { .. } => St::StartupReceived,
            FeMessage::Password(_) => St::PasswordReceived,
            FeMessage::SaslInitial { .. } => St::SaslInitialReceived,
            FeMessage::SaslResponse(_) => St::SaslResponseReceived,
            FeMessage::SimpleQuery(_) => St::QueryReceived,
            FeMessage::Cancel { .. } => St::CancelReceived,
            FeMessage::Terminate => St::Terminated,
            FeMessage::Unknown => return None,
        })
    }

    fn parse_one_request(&self, i: &[u8]) -> Parsed<FeMessage> {
        match self.st {
            St::SaslAuth => parser::parse_sasl_initial(i),
            St::SaslInitialReceived | St::SaslContinue => parser::parse_sasl_response(i),
            St::SimpleAuth => parser::parse_password(i),
            _ => parser::parse_request(i),
        }
    }

    fn on_request(&mut self, m: FeMessage) {
        let new = Self::request_state(&m);
        if let Some(s) = new {
            self.st = s;
        }
        let Some(tx) = self.current_tx() else {
            return;
        };
        tx.request = Some(m);
        if let Some(s) = new {
            if matches!(
                s,
                St::SslRequestReceived
                    | St::StartupReceived
                    | St::QueryReceived
                    | St::PasswordReceived
                    | St::SaslInitialReceived
                    | St::SaslResponseReceived
                    | St::CancelReceived
                    | St::Terminated
            ) {
                tx.req = Progress::Done;
                if matches!(s, St::Terminated | St::CancelReceived) {
                    tx.res = Progress::Done;
                }
            }
        }
    }

    fn response_state(&mut self, m: &BeMessage) -> Option<St> {
        Some(match m {
            BeMessage::SslResponse(true) => St::Finished,
            BeMessage::SslResponse(false) => St::SslRejected,
            BeMessage::AuthSasl => St::SaslAuth,
            BeMessage::AuthSaslContinue(_) => St::SaslContinue,
            BeMessage::AuthSaslFinal(_) => St::SaslFinal,
            BeMessage::AuthOk => St::AuthOk,
            BeMessage::ParameterStatus(_) => St::ParameterSetup,
            BeMessage::BackendKey { .. } => St::BackendKey,
            BeMessage::ReadyForQuery => St::ReadyForQuery,
            BeMessage::AuthMd5(_) | BeMessage::AuthCleartext => St::SimpleAuth,
            BeMessage::RowDescription(_) => St::RowDescription,
            BeMessage::DataRows { size, .. } => {
                self.txs.back_mut()?.data_size += size;
                St::DataRow
            }
            BeMessage::CommandComplete(_) => St::CommandCompleted,
            BeMessage::Error(_) => St::ErrorMessage,
            _ => return None,
        })
    }

    fn on_response(&mut self, m: BeMessage) {
        let new = self.response_state(&m);
        if let Some(s) = new {
            self.st = s;
        }
        if new == Some(St::Finished) {
            // TLS follows; shrike does not hand the flow to its TLS parser yet.
            self.stopped = true;
        }
        let Some(tx) = self.current_tx() else {
            return;
        };
        if tx.res == Progress::Init {
            tx.res = Progress::Received;
        }
        let Some(s) = new else {
            return;
        };
        if s == St::DataRow {
            tx.rows = tx.rows.saturating_add(1);
        } else if s == St::CommandCompleted && tx.rows > 0 {
            let (rows, size) = (tx.rows, tx.data_size);
            tx.responses.push(BeMessage::DataRows { rows, size });
            tx.responses.push(m);
        } else {
            tx.responses.push(m);
            if matches!(
                s,
                St::ReadyForQuery
                    | St::SslRejected
                    | St::SimpleAuth
                    | St::SaslAuth
                    | St::SaslContinue
                    | St::SaslFinal
                    | St::Finished
            ) {
                tx.req = Progress::Done;
                tx.res = Progress::Done;
            }
        }
    }

    /// Parse `data` of `dir`; false on an error.
    fn feed(&mut self, dir: Dir, data: &[u8]) -> bool {
        let d = di(dir);
        if self.sides[d].gap && self.sides[d].pending.is_empty() {
            // After a gap, Suricata skips data until it looks like a message boundary.
            match dir {
                Dir::ToServer => {
                    if let Parsed::Done(..) = parser::parse_request(data) {
                        return true;
                    }
                }
                Dir::ToClient => {
                    let ok = matches!(parser::parse_response(data), Parsed::Done(..))
                        || matches!(parser::parse_ssl_response(data), Parsed::Done(..));
                    if !ok {
                        return true;
                    }
                }
            }
            self.sides[d].gap = false;
        }
        let mut buf = std::mem::take(&mut self.sides[d].pending);
        buf.extend_from_slice(data);
        let mut off = 0;
        let ok = loop {
            if self.stopped {
                break true;
            }
            let cur = &buf[off..];
            if cur.is_empty() {
                break true;
            }
            match dir {
                Dir::ToServer => match self.parse_one_request(cur) {
                    Parsed::Done(m, n) => {
                        off += n;
                        self.on_request(m);
                    }
                    Parsed::Incomplete => break true,
                    Parsed::Error => break false,
                },
                Dir::ToClient => {
                    let r = if self.st == St::SslRequestReceived {
                        parser::parse_ssl_response(cur)
                    } else {
                        parser::parse_response(cur)
                    };
                    match r {
                        Parsed::Done(m, n) => {
                            off += n;
                            self.on_response(m);
                        }
                        Parsed::Incomplete => break true,
                        Parsed::Error => break false,
                    }
                }
            }
        };
        if ok && !self.stopped && off < buf.len() {
            buf.drain(..off);
            self.sides[d].pending = buf;
        }
        let mut c = [0u64; 2];
        for t in &self.txs {
            c[0] += u64::from(t.req >= Progress::Done);
            c[1] += u64::from(t.res >= Progress::Done);
        }
        self.completed[0] = self.completed[0].max(c[0]);
        self.completed[1] = self.completed[1].max(c[1]);
        ok
    }
}

impl AppParser for PgsqlState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.stopped {
            return false;
        }
        if !self.feed(dir, data) {
            self.stopped = true;
            return true;
        }
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        let s = &mut self.sides[di(dir)];
        s.gap = true;
        s.pending.clear();
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.completed[di(dir)]
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer_ready(&self, tx: u64, _b: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        (t.req >= Progress::Done || closed).then_some(true)
    }

    fn buffer(&self, tx: u64, _b: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match self.tx(tx).and_then(|t| t.request.as_ref()) {
            Some(FeMessage::SimpleQuery(q)) => f(q),
            _ => false,
        }
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        for t in self.txs.iter_mut() {
            if t.logged || !(t.done() || c.closed) {
                continue;
            }
            t.logged = true;
            self.unlogged = self.unlogged.saturating_sub(1);
            c.logged += 1;
            if !c.write || !c.out.wants_type("pgsql") {
                continue;
            }
            let Some(mut rec) = c.out.record(EventKind::Protocol) else {
                continue;
            };
            write_eve_header(&mut rec, &c.rec.header("pgsql", true));
            write_pgsql(&mut rec, t, c.opts.pgsql.passwords);
            rec.close();
            let _ = rec.commit();
        }
        *c.next = self
            .txs
            .iter()
            .find(|t| !t.logged)
            .map_or(self.next_id, |t| t.id);
        // Free logged transactions detection is done with, keeping the latest few for it
        // (until the end) while it may still inspect them.
        let keep = if c.closed { 0 } else { KEEP_LOGGED };
        let inspected = c.inspected;
        let logged = self.txs.iter().filter(|t| t.logged).count();
        let mut n = logged.saturating_sub(keep);
        if n > 0 || self.txs.iter().any(|t| t.logged && t.id < inspected) {
            self.txs.retain(|t| {
                if t.logged && (n > 0 || t.id < inspected) {
                    n = n.saturating_sub(1);
                    return false;
                }
                true
            });
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        write_pgsql(w, t, true);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

fn param(w: &mut JsonWriter, p: &parser::Param) {
    w.start_object();
    let name = String::from_utf8_lossy(&p.name);
    w.set_bytes(&name, &p.value);
    w.close();
}

/// The `"pgsql": {...}` member (Suricata 7's logger).
pub fn write_pgsql(w: &mut JsonWriter, t: &PgsqlTx, passwords: bool) {
    w.open_object("pgsql");
    w.set_u64("tx_id", t.id + 1);
    match &t.request {
        Some(r) => {
            w.open_object("request");
            match r {
                FeMessage::Startup {
                    major,
                    minor,
                    user,
                    params,
                } => {
                    w.set_str("protocol_version", &format!("{major}.{minor}"));
                    w.open_object("startup_parameters");
                    w.set_bytes("user", user);
                    if let Some(ps) = params {
                        w.open_array("optional_parameters");
                        for p in ps {
                            param(w, p);
                        }
                        w.close();
                    }
                    w.close();
                }
                FeMessage::SslRequest => {
                    w.set_str("message", "SSL Request");
                }
                FeMessage::SaslInitial { mechanism, param } => {
                    w.set_str("sasl_authentication_mechanism", mechanism);
                    w.set_bytes("sasl_param", param);
                }
                FeMessage::Password(p) => {
                    if passwords {
                        w.set_bytes("password", p);
                    }
                }
                FeMessage::SaslResponse(p) => {
                    w.set_bytes("sasl_response", p);
                }
                FeMessage::SimpleQuery(q) => {
                    w.set_bytes("simple_query", q);
                }
                FeMessage::Cancel { pid, key } => {
                    w.set_str("message", "cancel_request");
                    w.set_u64("process_id", u64::from(*pid));
                    w.set_u64("secret_key", u64::from(*key));
                }
                FeMessage::Terminate => {
                    w.set_str("message", "termination_message");
                }
                FeMessage::Unknown => {}
            }
            w.close();
        }
        None if t.responses.is_empty() => {
            w.set_bool("request", false);
            w.set_bool("response", false);
            w.close();
            return;
        }
        None => {}
    }
    if !t.responses.is_empty() {
        w.open_object("response");
        let mut in_array = false;
        for r in &t.responses {
            if let BeMessage::ParameterStatus(p) = r {
                if !in_array {
                    w.open_array("parameter_status");
                    in_array = true;
                }
                param(w, p);
                continue;
            }
            if in_array {
                w.close();
                in_array = false;
            }
            match r {
                BeMessage::SslResponse(a) => {
                    w.set_bool("ssl_accepted", *a);
                }
                BeMessage::Error(f) | BeMessage::Notice(f) => {
                    for (k, v) in f {
                        w.set_bytes(k, v);
                    }
                }
                BeMessage::AuthMd5(p) => {
                    w.set_bytes("authentication_md5_password", p);
                }
                BeMessage::AuthSspi(p) => {
                    w.set_bytes("authentication_sspi", p);
                }
                BeMessage::AuthSaslFinal(p) => {
                    w.set_bytes("authentication_sasl_final", p);
                }
                BeMessage::CommandComplete(p) => {
                    w.set_bytes("command_completed", p);
                }
                BeMessage::AuthOk => {
                    w.set_str("message", "authentication_ok");
                }
                BeMessage::AuthCleartext => {
                    w.set_str("message", "authentication_cleartext_password");
                }
                BeMessage::AuthSasl => {
                    w.set_str("message", "authentication_sasl");
                }
                BeMessage::AuthSaslContinue(_) => {
                    w.set_str("message", "authentication_sasl_continue");
                }
                BeMessage::BackendKey { pid, key } => {
                    w.set_u64("process_id", u64::from(*pid));
                    w.set_u64("secret_key", u64::from(*key));
                }
                BeMessage::RowDescription(n) => {
                    w.set_u64("field_count", u64::from(*n));
                }
                BeMessage::DataRows { rows, size } => {
                    w.set_u64("data_rows", *rows);
                    w.set_u64("data_size", *size);
                }
                BeMessage::Notification {
                    pid,
                    channel,
                    payload,
                } => {
                    w.set_u64("pid", u64::from(*pid));
                    w.set_bytes("channel_name", channel);
                    w.set_bytes("payload", payload);
                }
                BeMessage::ParameterStatus(_) | BeMessage::ReadyForQuery | BeMessage::Unknown => {}
            }
        }
        if in_array {
            w.close();
        }
        w.close();
    }
    w.close();
}

#[cfg(test)]
mod tests;
