//! Modbus/TCP, as Suricata 7 (`rust/src/modbus/`): the MBAP header and the PDU are decoded
//! by the `sawp-modbus` crate (MIT, the version Suricata 7.0.10 pins), whose names are the
//! EVE values. Each request opens a transaction; a response is matched to the oldest open
//! request with the same transaction id, unit id and function (a response without one opens
//! its own transaction, `unsolicited_response`). A transaction is complete once its response
//! is in; the `modbus` record is written then (at flow end for one that stays open).
//! Suricata 7 registers Modbus on TCP only and leaves it off unless
//! `app-layer.protocols.modbus.enabled` says yes.

use std::any::Any;
use std::collections::VecDeque;
use std::ops::RangeInclusive;

use sawp::error::{Error as SawpError, ErrorKind as SawpErrorKind};
use sawp::parser::{Direction, Parse};
use sawp_modbus::{AccessType, Data, ErrorFlags, Flags, Message, Read, Write};
use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

pub mod detect;
#[cfg(test)]
mod tests;

/// Modbus in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "modbus",
    aliases: &[],
    ip_protos: &[6],
    ports: &[502],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[],
    events: EVENTS,
    keywords: detect::KEYWORDS,
    generic_stats: true,
};

/// Suricata's event names (`app-layer-event:modbus.<name>`, EVE writes them as they are).
pub const EVENTS: &[&str] = &[
    "unsolicited_response",
    "invalid_function_code",
    "invalid_length",
    "invalid_value",
    "invalid_exception_code",
    "value_mismatch",
    "flooded",
    "invalid_protocol_id",
];

/// Event ids (indexes into [`EVENTS`]).
pub mod ev {
    /// A response no request matches.
    pub const UNSOLICITED_RESPONSE: u8 = 0;
    /// Function code 0 or with the exception bit in a request.
    pub const INVALID_FUNCTION_CODE: u8 = 1;
    /// A length that does not fit the function.
    pub const INVALID_LENGTH: u8 = 2;
    /// A value out of the function's range.
    pub const INVALID_VALUE: u8 = 3;
    /// An exception code the function cannot raise.
    pub const INVALID_EXCEPTION_CODE: u8 = 4;
    /// A read/write response that does not fit its request.
    pub const VALUE_MISMATCH: u8 = 5;
    /// More open transactions than `request-flood`.
    pub const FLOODED: u8 = 6;
    /// A protocol id other than 0.
    pub const INVALID_PROTOCOL_ID: u8 = 7;
}

/// `app-layer.protocols.modbus` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct ModbusConfig {
    /// `enabled` (off unless set, as in Suricata 7).
    pub enabled: bool,
    /// `request-flood`: open transactions before `flooded` (0: no limit). Suricata 7's
    /// default, 500 (its Rust parser has it fixed at 500).
    pub request_flood: usize,
    /// `stream-depth`: reassembly depth of Modbus flows (0: unlimited), when set.
    pub stream_depth: Option<u64>,
}

impl Default for ModbusConfig {
    fn default() -> Self {
        ModbusConfig {
            enabled: false,
            request_flood: 500,
            stream_depth: None,
        }
    }
}

/// Suricata's strict probe: public assigned function codes only.
const PARSER: sawp_modbus::Modbus = sawp_modbus::Modbus { probe_strict: true };
/// Suricata's probing depth for Modbus: a direction still undecided after this many bytes
/// is not Modbus.
const PROBE_MAX_DEPTH: usize = 16;
/// [`ModbusTx::seen`]: detection saw the transaction going to the server / the client.
const SEEN_TS: u8 = 1;
const SEEN_TC: u8 = 2;
/// Open transactions a flow holds at most whatever `request-flood` says (0 lifts the flood
/// limit, not this one): past it the parser gives up on the flow.
pub const MAX_OPEN_TXS: usize = 4096;
/// Longest Modbus ADU (MBAP header and the longest length Suricata accepts).
const MAX_ADU: usize = 6 + 254;

/// Suricata's probe (`rs_modbus_probe`): one ADU decodes without an error flag and with a
/// public function code; more bytes are awaited up to [`PROBE_MAX_DEPTH`].
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    use sawp::probe::{Probe as _, Status};
    match PARSER.probe(data, Direction::Unknown) {
        Status::Recognized => Probe::Yes,
        Status::Incomplete if data.len() < PROBE_MAX_DEPTH => Probe::NeedMore,
        _ => Probe::No,
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(ModbusState::new(cfg.modbus))
}

/// One request/response pair.
#[derive(Debug)]
pub struct ModbusTx {
    /// Id, from 0 per flow (EVE `modbus.id` is this plus 1, as Suricata's).
    pub id: u64,
    /// The request, once seen.
    pub request: Option<Message>,
    /// The response, once seen.
    pub response: Option<Message>,
    /// Events (bit per [`EVENTS`] index).
    pub events: u8,
    events_reported: u8,
    logged: bool,
    /// Directions detection inspected it in ([`SEEN_TS`], [`SEEN_TC`]).
    seen: u8,
}

impl ModbusTx {
    fn new(id: u64) -> Self {
        ModbusTx {
            id,
            request: None,
            response: None,
            events: 0,
            events_reported: 0,
            logged: false,
            seen: 0,
        }
    }

    fn set_event(&mut self, e: u8) {
        self.events |= 1 << e;
    }

    /// Suricata's `set_events_from_flags`.
    fn set_events_from_flags(&mut self, f: &Flags<ErrorFlags>) {
        if f.intersects(ErrorFlags::FUNC_CODE) {
            self.set_event(ev::INVALID_FUNCTION_CODE);
        }
        if f.intersects(ErrorFlags::DATA_VALUE) {
            self.set_event(ev::INVALID_VALUE);
        }
        if f.intersects(ErrorFlags::DATA_LENGTH) {
            self.set_event(ev::INVALID_LENGTH);
        }
        if f.intersects(ErrorFlags::EXC_CODE) {
            self.set_event(ev::INVALID_EXCEPTION_CODE);
        }
        if f.intersects(ErrorFlags::PROTO_ID) {
            self.set_event(ev::INVALID_PROTOCOL_ID);
        }
    }

    /// The events of a response: a read or write response that does not fit (length or
    /// value) is `value_mismatch` only.
    fn set_response_events(&mut self, m: &Message) {
        if m.access_type
            .intersects(AccessType::READ | AccessType::WRITE)
            && m.error_flags
                .intersects(ErrorFlags::DATA_LENGTH | ErrorFlags::DATA_VALUE)
        {
            self.set_event(ev::VALUE_MISMATCH);
        } else {
            self.set_events_from_flags(&m.error_flags);
        }
    }

    /// Complete (Suricata's progress: the response is in).
    pub fn complete(&self) -> bool {
        self.response.is_some()
    }
}

/// Per-flow Modbus state.
#[derive(Debug)]
pub struct ModbusState {
    cfg: ModbusConfig,
    txs: VecDeque<ModbusTx>,
    next_id: u64,
    /// The flood limit was reached (no new transaction until one is freed).
    givenup: bool,
    /// Kept transactions with a response and no request (a request may still join one).
    response_only: usize,
    /// Whether the `modbus` EVE logger runs (learnt at the first logging call): Suricata
    /// runs no transaction logger, the anomaly one included, on a protocol without its own.
    logger_on: Option<bool>,
    bufs: [Vec<u8>; 2],
    failed: bool,
    done: u64,
    closed: bool,
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl ModbusState {
    /// A new flow's state.
    pub fn new(cfg: ModbusConfig) -> Self {
        ModbusState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            givenup: false,
            response_only: 0,
            logger_on: None,
            bufs: Default::default(),
            failed: false,
            done: 0,
            closed: false,
        }
    }

    /// Transaction `id`, if kept.
    pub fn tx(&self, id: u64) -> Option<&ModbusTx> {
        // Ids grow along the queue (pushed in order, removed anywhere).
        let i = self.txs.binary_search_by_key(&id, |t| t.id).ok()?;
        self.txs.get(i)
    }

    /// The transactions kept.
    pub fn txs(&self) -> impl Iterator<Item = &ModbusTx> {
        self.txs.iter()
    }

    /// Suricata's `new_tx`: `None` once flooded.
    fn new_tx(&mut self) -> Option<ModbusTx> {
        if self.givenup || self.txs.len() >= MAX_OPEN_TXS {
            return None;
        }
        let mut t = ModbusTx::new(self.next_id);
        self.next_id += 1;
        // Suricata counts every transaction not freed yet.
        if self.cfg.request_flood != 0 && self.txs.len() >= self.cfg.request_flood {
            t.set_event(ev::FLOODED);
            self.givenup = true;
        }
        Some(t)
    }

    fn push(&mut self, t: ModbusTx) {
        if t.complete() {
            self.done += 1;
        }
        if t.request.is_none() {
            self.response_only += 1;
        }
        self.txs.push_back(t);
    }

    /// One decoded message; false when no transaction can take it (flooded).
    fn message(&mut self, dir: Dir, mut msg: Message) -> bool {
        match dir {
            Dir::ToServer => {
                // A response seen first (unsolicited) that this request matches; Suricata
                // still holds it (logged or not) until detection saw it going to the
                // server, which is after this request is parsed.
                let found = (self.response_only > 0)
                    .then(|| {
                        self.txs.iter_mut().find(|t| {
                            t.request.is_none()
                                && t.response.as_ref().is_some_and(|r| msg.matches(r))
                        })
                    })
                    .flatten();
                if let Some(t) = found {
                    t.set_events_from_flags(&msg.error_flags);
                    t.request = Some(msg);
                    self.response_only -= 1;
                    return true;
                }
                let Some(mut t) = self.new_tx() else {
                    return false;
                };
                t.set_events_from_flags(&msg.error_flags);
                t.request = Some(msg);
                self.push(t);
            }
            Dir::ToClient => {
                let found = self.txs.iter_mut().find(|t| {
                    t.response.is_none() && t.request.as_ref().is_some_and(|r| msg.matches(r))
                });
                if let Some(t) = found {
                    t.set_response_events(&msg);
                    t.response = Some(msg);
                    self.done += 1;
                    return true;
                }
                let Some(mut t) = self.new_tx() else {
                    return false;
                };
                t.set_response_events(&msg);
                t.response = Some(msg);
                t.set_event(ev::UNSOLICITED_RESPONSE);
                self.push(t);
            }
        }
        true
    }

    /// Decode the ADUs of `input`; returns the bytes used, or `None` on a parser error.
    fn parse_adus(&mut self, dir: Direction, d: Dir, input: &[u8]) -> Option<usize> {
        let mut rest = input;
        while !rest.is_empty() {
            match PARSER.parse(rest, dir.clone()) {
                Ok((inner, Some(msg))) => {
                    if !self.message(d, msg) || inner.len() >= rest.len() {
                        return None;
                    }
                    rest = inner;
                }
                Ok((_, None))
                | Err(SawpError {
                    kind: SawpErrorKind::Incomplete(_),
                }) => break,
                Err(_) => return None,
            }
        }
        Some(input.len() - rest.len())
    }

    fn feed(&mut self, dir: Dir, data: &[u8]) -> bool {
        let sd = match dir {
            Dir::ToServer => Direction::ToServer,
            Dir::ToClient => Direction::ToClient,
        };
        let d = di(dir);
        if self.bufs[d].is_empty() {
            let Some(n) = self.parse_adus(sd, dir, data) else {
                return false;
            };
            if let Some(left) = data.get(n..).filter(|l| !l.is_empty()) {
                self.bufs[d] = left.to_vec();
            }
        } else {
            let mut buf = std::mem::take(&mut self.bufs[d]);
            buf.extend_from_slice(data);
            let Some(n) = self.parse_adus(sd, dir, &buf) else {
                return false;
            };
            buf.drain(..n);
            self.bufs[d] = buf;
        }
        // What is left is less than one ADU (the parser takes any complete one).
        debug_assert!(self.bufs[d].len() < MAX_ADU);
        true
    }
}

impl AppParser for ModbusState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.failed || data.is_empty() {
            return false;
        }
        if !self.feed(dir, data) {
            // Suricata stops the app layer on the flow after a parser error.
            self.failed = true;
            self.bufs = Default::default();
            return true;
        }
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {
        // Suricata's Modbus parser does not accept gaps: the flow's app layer ends.
        self.failed = true;
        self.bufs = Default::default();
    }

    fn close(&mut self) {
        self.closed = true;
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.done
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        ev < 8 && self.tx(tx).is_some_and(|t| t.events & (1 << ev) != 0)
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.failed || self.tx(tx).is_none_or(ModbusTx::complete)
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // After a parser error or a gap Suricata ends the flow's app layer: everything
        // open is logged at once.
        let end = c.closed || self.closed;
        let all = end || self.failed;
        let wanted = c.out.wants_type("modbus");
        self.logger_on = Some(wanted);
        let write = c.write && wanted;
        // Detection ran on this packet before logging: every kept transaction complete now
        // was inspected complete in the packet's direction (Suricata's inspected flag).
        let seen = match c.pkt_dir {
            Some(Dir::ToServer) => SEEN_TS,
            Some(Dir::ToClient) => SEEN_TC,
            None => SEEN_TS | SEEN_TC,
        };
        for i in 0..self.txs.len() {
            let Some(t) = self.txs.get_mut(i) else {
                break;
            };
            if all || t.complete() {
                t.seen |= seen;
            }
            if t.logged || !(all || t.complete()) {
                continue;
            }
            t.logged = true;
            c.logged += 1;
            if !write {
                continue;
            }
            let Some(t) = self.txs.get(i) else {
                break;
            };
            let Some(mut rec) = c.out.record(EventKind::Protocol) else {
                continue;
            };
            write_eve_header(&mut rec, &c.rec.header("modbus", true));
            write_tx(&mut rec, t);
            rec.close();
            let _ = rec.commit();
        }
        *c.next = self
            .txs
            .iter()
            .find(|t| !t.logged)
            .map_or(self.next_id, |t| t.id);
        // Suricata frees a transaction once it is logged and detection saw it in both
        // directions (a request may still join a logged unsolicited response until then).
        let before = self.txs.len();
        let mut response_only = 0;
        self.txs.retain(|t| {
            let freed = t.logged && t.seen == SEEN_TS | SEEN_TC;
            let keep = !(end || freed);
            response_only += usize::from(keep && t.request.is_none());
            keep
        });
        self.response_only = response_only;
        // Below the flood limit again, new transactions are taken.
        if self.txs.len() < before
            && self.givenup
            && self.cfg.request_flood != 0
            && self.txs.len() < self.cfg.request_flood
        {
            self.givenup = false;
        }
    }

    fn drain_events(&mut self, _from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        // Suricata's anomaly logger stops at a transaction once it is logged: events raised
        // on it later (a request matched to a logged response) are not reported; without
        // the `modbus` logger none are.
        let report = self.logger_on != Some(false);
        for t in self.txs.iter_mut().filter(|t| !t.logged) {
            let new = t.events & !t.events_reported;
            if new == 0 {
                continue;
            }
            t.events_reported = t.events;
            if !report {
                continue;
            }
            for (i, name) in EVENTS.iter().enumerate() {
                if new & (1 << i) != 0 {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
                    });
                }
            }
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        write_tx(w, t);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The `modbus` object (Suricata's `rs_modbus_to_json`).
pub fn write_tx(w: &mut JsonWriter, t: &ModbusTx) {
    w.open_object("modbus");
    w.set_u64("id", t.id + 1);
    if let Some(m) = &t.request {
        w.open_object("request");
        write_message(w, m);
        w.close();
    }
    if let Some(m) = &t.response {
        w.open_object("response");
        write_message(w, m);
        w.close();
    }
    w.close();
}

fn write_message(w: &mut JsonWriter, m: &Message) {
    w.set_u64("transaction_id", u64::from(m.transaction_id));
    w.set_u64("protocol_id", u64::from(m.protocol_id));
    w.set_u64("unit_id", u64::from(m.unit_id));
    w.set_u64("function_raw", u64::from(m.function.raw));
    w.set_str("function_code", &m.function.code.to_string());
    w.set_str("access_type", &m.access_type.to_string());
    w.set_str("category", &m.category.to_string());
    w.set_str("error_flags", &m.error_flags.to_string());
    match &m.data {
        Data::Exception(e) => {
            w.open_object("exception");
            w.set_u64("raw", u64::from(e.raw));
            w.set_str("code", &e.code.to_string());
            w.close();
        }
        Data::Diagnostic { func, data } => {
            w.open_object("diagnostic");
            w.set_u64("raw", u64::from(func.raw));
            w.set_str("code", &func.code.to_string());
            w.set_bytes("data", data);
            w.close();
        }
        Data::MEI { mei_type, data } => {
            w.open_object("mei");
            w.set_u64("raw", u64::from(mei_type.raw));
            w.set_str("code", &mei_type.code.to_string());
            w.set_bytes("data", data);
            w.close();
        }
        Data::Read(r) => {
            w.open_object("read");
            write_read(w, r);
            w.close();
        }
        Data::Write(wr) => {
            w.open_object("write");
            write_write(w, wr);
            w.close();
        }
        Data::ReadWrite { read, write } => {
            w.open_object("read");
            write_read(w, read);
            w.close();
            w.open_object("write");
            write_write(w, write);
            w.close();
        }
        Data::ByteVec(d) => {
            w.set_bytes("data", d);
        }
        Data::Empty => {}
    }
}

fn write_read(w: &mut JsonWriter, r: &Read) {
    match r {
        Read::Request { address, quantity } => {
            w.set_u64("address", u64::from(*address));
            w.set_u64("quantity", u64::from(*quantity));
        }
        Read::Response(d) => {
            w.set_bytes("data", d);
        }
    }
}

fn write_write(w: &mut JsonWriter, wr: &Write) {
    match wr {
        Write::MultReq {
            address,
            quantity,
            data,
        } => {
            w.set_u64("address", u64::from(*address));
            w.set_u64("quantity", u64::from(*quantity));
            w.set_bytes("data", data);
        }
        Write::Mask {
            address,
            and_mask,
            or_mask,
        } => {
            w.set_u64("address", u64::from(*address));
            w.set_u64("and_mask", u64::from(*and_mask));
            w.set_u64("or_mask", u64::from(*or_mask));
        }
        Write::Other { address, data } => {
            w.set_u64("address", u64::from(*address));
            w.set_u64("data", u64::from(*data));
        }
    }
}

/// The coils/registers a message reads or writes, numbered from 1 (`sawp-modbus`'s
/// `get_address_range`, with Suricata's release-build wrapping at 65535 instead of an
/// overflow).
pub fn address_range(m: &Message) -> Option<RangeInclusive<u16>> {
    match &m.data {
        Data::Write(Write::Other { address, .. }) | Data::Write(Write::Mask { address, .. }) => {
            let a = address.wrapping_add(1);
            Some(a..=a)
        }
        Data::Read(Read::Request { address, quantity })
        | Data::Write(Write::MultReq {
            address, quantity, ..
        })
        | Data::ReadWrite {
            write: Write::MultReq {
                address, quantity, ..
            },
            ..
        } => {
            if *quantity > 0 && *quantity <= u16::MAX - address {
                Some(address.wrapping_add(1)..=address.wrapping_add(*quantity))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The value a write request puts at coil/register `address` (numbered from 1), if it
/// writes there (`sawp-modbus`'s `get_write_value_at_address`, overflow-free).
pub fn write_value_at(m: &Message, address: u16) -> Option<u16> {
    if let Some(r) = address_range(m) {
        if !r.contains(&address) {
            return None;
        }
    }
    if m.access_type.contains(AccessType::SINGLE) {
        let Data::Write(Write::Other { data, .. }) = &m.data else {
            return None;
        };
        if m.access_type.contains(AccessType::COILS) {
            Some(u16::from(*data != 0))
        } else {
            Some(*data)
        }
    } else if m.access_type.contains(AccessType::MULTIPLE) {
        let (start, data) = match &m.data {
            Data::Write(Write::MultReq { address, data, .. })
            | Data::ReadWrite {
                write: Write::MultReq { address, data, .. },
                ..
            } => (*address, data),
            _ => return None,
        };
        if start == u16::MAX || start >= address {
            return None;
        }
        let index = address - (start + 1);
        let mut offset = usize::from(index) * 2;
        if m.access_type.contains(AccessType::COILS) {
            offset >>= 3;
        }
        let (hi, lo) = (data.get(offset)?, data.get(offset + 1)?);
        let mut v = (u16::from(*hi) << 8) | u16::from(*lo);
        if m.access_type.contains(AccessType::COILS) {
            v = (v >> (index & 0x7)) & 0x1;
        }
        Some(v)
    } else {
        None
    }
}
