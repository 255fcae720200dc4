//! MQTT 3.1, 3.1.1 and 5.0 over TCP, as Suricata 7's MQTT parser has it.
//!
//! * Detection: a probing parser on port 1883 (either side): a complete fixed header whose
//!   type is assigned (1-15) and whose QoS is at most 2.
//! * Parsing ([`parser`]): messages split or batched anyhow across segments; a message over
//!   `app-layer.protocols.mqtt.max-msg-length` (default 1 MiB) is not decoded but skipped and
//!   recorded as truncated; malformed data raises `malformed_traffic` and stops the flow's
//!   parsing (Suricata's parser error).
//! * Transactions as Suricata pairs them: CONNECT/CONNACK, PUBLISH with PUBACK or
//!   PUBREC/PUBREL/PUBCOMP by packet id, SUBSCRIBE/SUBACK, UNSUBSCRIBE/UNSUBACK; every other
//!   message is a transaction of its own. At most `app-layer.protocols.mqtt.max-tx` (default
//!   1024) are open: past that the oldest open one is closed with `too_many_transactions`.
//! * EVE `mqtt` records and the `mqtt` object of alerts ([`eve`]), `passwords` option.
//! * Rules: `alert mqtt`, the `mqtt.connect.*`, `mqtt.publish.*`, `mqtt.subscribe.topic` and
//!   `mqtt.unsubscribe.topic` sticky buffers (the topic lists are multi-buffers; Suricata 8's
//!   `mqtt.connect.protocol_string` too), the keywords of [`keywords`],
//!   `app-layer-event:mqtt.<event>`.

pub mod eve;
pub mod keywords;
pub mod parser;

use std::any::Any;
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;
use parser::{Message, Op, Parsed, TypeCode};

/// Parser limits (Suricata's `app-layer.protocols.mqtt.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct MqttConfig {
    /// `enabled`: detect and parse MQTT (on by default, as Suricata).
    pub enabled: bool,
    /// `max-msg-length`: longer messages are skipped, logged as truncated.
    pub max_msg_length: u32,
    /// `max-tx`: most open transactions per flow.
    pub max_tx: usize,
    /// `subscribe-topic-match-limit`: most SUBSCRIBE topics a rule inspects (0: all).
    pub subscribe_topic_match_limit: u32,
    /// `unsubscribe-topic-match-limit`: the same for UNSUBSCRIBE.
    pub unsubscribe_topic_match_limit: u32,
}

impl Default for MqttConfig {
    fn default() -> Self {
        MqttConfig {
            enabled: true,
            max_msg_length: 1024 * 1024,
            max_tx: 1024,
            subscribe_topic_match_limit: 100,
            unsubscribe_topic_match_limit: 100,
        }
    }
}

/// MQTT events, in Suricata's order (`app-layer-event:mqtt.<name>`).
pub const EVENT_NAMES: &[&str] = &[
    "missing_connect",
    "missing_publish",
    "missing_subscribe",
    "missing_unsubscribe",
    "double_connect",
    "unintroduced_message",
    "invalid_qos_level",
    "missing_msg_id",
    "unassigned_msg_type",
    "too_many_transactions",
    "malformed_traffic",
];

/// Event ids (indexes into [`EVENT_NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum MqttEvent {
    MissingConnect = 0,
    MissingPublish,
    MissingSubscribe,
    MissingUnsubscribe,
    DoubleConnect,
    UnintroducedMessage,
    InvalidQosLevel,
    MissingMsgId,
    UnassignedMsgType,
    TooManyTransactions,
    MalformedTraffic,
}

/// Buffer ids (indexes into [`PROTOCOL`]'s buffers).
pub mod buf {
    /// `mqtt.connect.clientid`.
    pub const CLIENTID: u16 = 0;
    /// `mqtt.connect.username`.
    pub const USERNAME: u16 = 1;
    /// `mqtt.connect.password`.
    pub const PASSWORD: u16 = 2;
    /// `mqtt.connect.willtopic`.
    pub const WILLTOPIC: u16 = 3;
    /// `mqtt.connect.willmessage`.
    pub const WILLMESSAGE: u16 = 4;
    /// `mqtt.publish.topic`.
    pub const PUB_TOPIC: u16 = 5;
    /// `mqtt.publish.message`.
    pub const PUB_MESSAGE: u16 = 6;
    /// `mqtt.subscribe.topic`.
    pub const SUB_TOPIC: u16 = 7;
    /// `mqtt.unsubscribe.topic`.
    pub const UNSUB_TOPIC: u16 = 8;
    /// `mqtt.connect.protocol_string` (Suricata 8).
    pub const PROTOCOL_STRING: u16 = 9;
}

const TS: Option<Dir> = Some(Dir::ToServer);

/// MQTT in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "mqtt",
    aliases: &[],
    ip_protos: &[6],
    ports: &[1883],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[
        BufferDesc {
            name: "mqtt.connect.clientid",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.connect.username",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.connect.password",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.connect.willtopic",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.connect.willmessage",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.publish.topic",
            dir: None,
        },
        BufferDesc {
            name: "mqtt.publish.message",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.subscribe.topic",
            dir: None,
        },
        BufferDesc {
            name: "mqtt.unsubscribe.topic",
            dir: TS,
        },
        BufferDesc {
            name: "mqtt.connect.protocol_string",
            dir: TS,
        },
    ],
    events: EVENT_NAMES,
    keywords: keywords::KEYWORDS,
    generic_stats: true,
};

/// Suricata's probe: a complete fixed header (within the first bytes) of an assigned type
/// with QoS 0-2.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    match parser::parse_fixed_header(data) {
        Ok((h, _)) if h.message_type == TypeCode::Unassigned || h.qos > 2 => Probe::No,
        Ok(_) => Probe::Yes,
        Err(Parsed::Incomplete) if data.len() < 16 => Probe::NeedMore,
        Err(_) => Probe::No,
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(MqttState::new(cfg.mqtt))
}

/// Pseudo packet id of the open CONNECT (real ids are 16 bits).
const CONNECT_PKT_ID: u32 = u32::MAX;
/// Logged transactions kept for detection (a transaction completed by the other side's
/// message is inspected on the next packet of its own direction).
const KEEP_LOGGED: usize = 32;

/// One transaction: the messages paired in it.
#[derive(Debug)]
pub struct MqttTx {
    /// Id, from 0 per flow.
    pub id: u64,
    /// Direction of the message that opened it (detection inspects it in that direction
    /// only, as Suricata).
    pub dir: Dir,
    /// Packet id awaited (CONNECT: [`CONNECT_PKT_ID`]).
    pkt_id: Option<u32>,
    /// Messages.
    pub msgs: Vec<Message>,
    /// No more messages will be added.
    pub complete: bool,
    /// Events (bit per [`MqttEvent`]).
    events: u16,
    /// Events reported to EVE `anomaly`.
    events_reported: u16,
    /// The record was written.
    logged: bool,
    /// Counted in `app_layer.tx.mqtt` (Suricata does not count the transactions of a
    /// parse call that ends in an error).
    counted: bool,
}

impl MqttTx {
    fn new(id: u64, dir: Dir) -> Self {
        MqttTx {
            id,
            dir,
            pkt_id: None,
            msgs: Vec::new(),
            complete: false,
            events: 0,
            events_reported: 0,
            logged: false,
            counted: true,
        }
    }

    fn set(&mut self, e: MqttEvent) {
        self.events |= 1 << (e as u8);
    }

    /// Whether event `e` was raised.
    pub fn has(&self, e: MqttEvent) -> bool {
        self.events & (1 << (e as u8)) != 0
    }

    /// Suricata's progress in direction `d` (1: done): a transaction is done in the
    /// direction it did not come from, and in its own once complete.
    pub fn done_in(&self, d: Dir) -> bool {
        self.complete || self.dir != d
    }

    /// The CONNECT of this transaction.
    pub fn connect(&self) -> Option<&parser::Connect> {
        self.msgs.iter().find_map(|m| match &m.op {
            Op::Connect(c) => Some(&**c),
            _ => None,
        })
    }
}

/// Per-direction stream state.
#[derive(Debug, Default)]
struct Side {
    /// Bytes of a message not yet complete.
    pending: Vec<u8>,
    /// Bytes of a truncated message still to skip.
    skip: usize,
}

/// Per-flow MQTT state.
#[derive(Debug)]
pub struct MqttState {
    cfg: MqttConfig,
    /// The protocol version of the last CONNECT (0 before).
    pub protocol_version: u8,
    txs: VecDeque<MqttTx>,
    next_id: u64,
    connected: bool,
    sides: [Side; 2],
    /// Parsing stopped (malformed data, a gap).
    failed: bool,
    /// The flow ended.
    closed: bool,
    /// A gap stopped parsing (Suricata then takes every transaction as complete).
    gapped: bool,
    /// Transactions held and not logged yet (Suricata's live transactions).
    unlogged: usize,
    /// Transactions complete so far, per direction (monotonic).
    completed: [u64; 2],
    /// Complete transactions freed, per direction.
    freed_complete: [u64; 2],
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl MqttState {
    /// A new flow state.
    pub fn new(cfg: MqttConfig) -> Self {
        MqttState {
            cfg,
            protocol_version: 0,
            txs: VecDeque::new(),
            next_id: 0,
            connected: false,
            sides: Default::default(),
            failed: false,
            closed: false,
            gapped: false,
            unlogged: 0,
            completed: [0; 2],
            freed_complete: [0; 2],
        }
    }

    /// The held transactions.
    pub fn txs(&self) -> impl Iterator<Item = &MqttTx> {
        self.txs.iter()
    }

    /// Transaction `id`, if held.
    pub fn tx(&self, id: u64) -> Option<&MqttTx> {
        let i = self.txs.binary_search_by_key(&id, |t| t.id).ok()?;
        self.txs.get(i)
    }

    fn new_tx(&mut self, dir: Dir) -> MqttTx {
        let tx = MqttTx::new(self.next_id, dir);
        self.next_id += 1;
        if self.unlogged > self.cfg.max_tx {
            if let Some(old) = self.txs.iter_mut().find(|t| !t.complete) {
                old.complete = true;
                old.set(MqttEvent::TooManyTransactions);
            }
        }
        tx
    }

    fn by_pkt_id(&mut self, id: u32) -> Option<&mut MqttTx> {
        self.txs
            .iter_mut()
            .find(|t| !t.complete && t.pkt_id == Some(id))
    }

    fn push(&mut self, tx: MqttTx) {
        self.unlogged += 1;
        self.txs.push_back(tx);
    }

    /// A new transaction holding `msg` alone, complete.
    fn lone(&mut self, msg: Message, dir: Dir, ev: Option<MqttEvent>, introduced: bool) {
        let mut tx = self.new_tx(dir);
        tx.msgs.push(msg);
        tx.complete = true;
        if let Some(e) = ev {
            tx.set(e);
        }
        if introduced && !self.connected {
            tx.set(MqttEvent::UnintroducedMessage);
        }
        self.push(tx);
    }

    /// Pair `msg` with its transaction (Suricata's `handle_msg`).
    fn handle(&mut self, msg: Message, dir: Dir) {
        let qos = msg.header.qos;
        match &msg.op {
            Op::Connect(c) => {
                self.protocol_version = c.protocol_version;
                let mut tx = self.new_tx(dir);
                tx.pkt_id = Some(CONNECT_PKT_ID);
                if self.connected {
                    tx.set(MqttEvent::DoubleConnect);
                }
                tx.msgs.push(msg);
                self.push(tx);
            }
            Op::Publish(_) | Op::Subscribe(_) | Op::Unsubscribe(_) => {
                let id = match &msg.op {
                    Op::Publish(p) => p.message_id.map(u32::from),
                    Op::Subscribe(s) => Some(u32::from(s.message_id)),
                    Op::Unsubscribe(u) => Some(u32::from(u.message_id)),
                    _ => None,
                };
                let is_pub = matches!(msg.op, Op::Publish(_));
                let mut tx = self.new_tx(dir);
                match qos {
                    0 => tx.complete = true,
                    1 | 2 => match id {
                        Some(i) => tx.pkt_id = Some(i),
                        None if is_pub => tx.set(MqttEvent::MissingMsgId),
                        None => {}
                    },
                    _ => tx.set(MqttEvent::InvalidQosLevel),
                }
                if !self.connected {
                    tx.set(MqttEvent::UnintroducedMessage);
                }
                tx.msgs.push(msg);
                self.push(tx);
            }
            Op::Connack(_) => {
                if let Some(tx) = self.by_pkt_id(CONNECT_PKT_ID) {
                    tx.msgs.push(msg);
                    tx.complete = true;
                    tx.pkt_id = None;
                    self.connected = true;
                } else {
                    self.lone(msg, dir, Some(MqttEvent::MissingConnect), false);
                }
            }
            Op::Pubrec(v) | Op::Pubrel(v) => {
                let id = u32::from(v.message_id);
                if let Some(tx) = self.by_pkt_id(id) {
                    tx.msgs.push(msg);
                } else {
                    self.lone(msg, dir, Some(MqttEvent::MissingPublish), true);
                }
            }
            Op::Puback(v) | Op::Pubcomp(v) => {
                self.answer(u32::from(v.message_id), msg, dir, MqttEvent::MissingPublish)
            }
            Op::Suback(v) => self.answer(
                u32::from(v.message_id),
                msg,
                dir,
                MqttEvent::MissingSubscribe,
            ),
            Op::Unsuback(v) => self.answer(
                u32::from(v.message_id),
                msg,
                dir,
                MqttEvent::MissingUnsubscribe,
            ),
            Op::Unassigned => self.lone(msg, dir, Some(MqttEvent::UnassignedMsgType), false),
            Op::Truncated(_) => self.lone(msg, dir, None, false),
            Op::Auth(_) | Op::Disconnect(_) | Op::Pingreq | Op::Pingresp => {
                self.lone(msg, dir, None, true)
            }
        }
    }

    /// A message that completes the transaction waiting for packet id `id`.
    fn answer(&mut self, id: u32, msg: Message, dir: Dir, missing: MqttEvent) {
        if let Some(tx) = self.by_pkt_id(id) {
            tx.msgs.push(msg);
            tx.complete = true;
            tx.pkt_id = None;
        } else {
            self.lone(msg, dir, Some(missing), true);
        }
    }

    /// An event with no message to hold it (Suricata's transaction-less event).
    fn event_notx(&mut self, e: MqttEvent, dir: Dir) {
        let mut tx = MqttTx::new(self.next_id, dir);
        self.next_id += 1;
        tx.complete = true;
        tx.set(e);
        self.push(tx);
    }

    /// Parse `data` of `dir`; false on malformed data. With `fc`, each message gets
    /// Suricata's frames: `pdu` (the message), and `header` (2 bytes) and `data` (the
    /// remaining length) placed, as Suricata 7 places them, from the start of the data the
    /// parse round began with rather than from the message.
    fn feed(
        &mut self,
        dir: Dir,
        mut data: &[u8],
        mut fc: Option<&mut crate::frames::FrameCtx<'_>>,
    ) -> bool {
        let d = di(dir);
        // Where the round's data starts, relative to `data` (held bytes come first).
        let slice_rel = -(self.sides[d].pending.len() as i64);
        let skip = self.sides[d].skip;
        let mut skipped = 0;
        if skip > 0 {
            let n = skip.min(data.len());
            self.sides[d].skip -= n;
            data = &data[n..];
            skipped = n;
        }
        if data.is_empty() {
            return true;
        }
        let first_new = self.next_id;
        let mut pending = std::mem::take(&mut self.sides[d].pending);
        let buffered = !pending.is_empty();
        if buffered {
            pending.extend_from_slice(data);
        }
        let buf: &[u8] = if buffered { &pending } else { data };
        // `buf[0]` relative to the data handed in.
        let buf_rel = if buffered { slice_rel } else { skipped as i64 };
        let mut off = 0;
        let max = self.cfg.max_msg_length as usize;
        // (ok, keep the bytes from `off` for the next data)
        let (ok, keep) = loop {
            let cur = &buf[off..];
            if cur.is_empty() {
                break (true, false);
            }
            match parser::parse_message(cur, self.protocol_version, max) {
                Parsed::Done(msg, used) => {
                    if let Some(fc) = fc.as_deref_mut() {
                        use parser::FRAME_DATA as FD;
                        use parser::FRAME_HEADER as FH;
                        use parser::FRAME_PDU as FP;
                        fc.new_rel(buf_rel + off as i64, used as i64, FP);
                        if !matches!(msg.op, Op::Truncated(_)) {
                            let rem = i64::from(msg.header.remaining_length);
                            fc.new_rel(slice_rel, 2, FH);
                            fc.new_rel(slice_rel + 2, rem, FD);
                        }
                    }
                    if let Op::Truncated(t) = &msg.op {
                        let skip = t.skipped_length;
                        // Suricata files a truncated client message as a to-client one.
                        self.handle(msg, Dir::ToClient);
                        if skip >= cur.len() {
                            self.sides[d].skip = skip - cur.len();
                            off = buf.len();
                        } else {
                            off += skip;
                        }
                        continue;
                    }
                    self.handle(msg, dir);
                    off += used;
                }
                Parsed::Incomplete => break (true, true),
                Parsed::Error => {
                    self.event_notx(MqttEvent::MalformedTraffic, dir);
                    for t in self.txs.iter_mut().rev() {
                        if t.id < first_new {
                            break;
                        }
                        t.counted = false;
                    }
                    break (false, false);
                }
            }
        };
        if ok && keep {
            // A partial message (at most max-msg-length and its header): keep it, without
            // copying again what was buffered already.
            if buffered {
                pending.drain(..off);
                self.sides[d].pending = pending;
            } else {
                self.sides[d].pending = data[off..].to_vec();
            }
        }
        self.count_completed();
        ok
    }

    fn count_completed(&mut self) {
        // complete_in only has to grow when transactions complete; count them.
        let mut c = [0u64; 2];
        for t in &self.txs {
            if t.complete {
                c[di(t.dir)] += 1;
            }
        }
        for (done, (n, freed)) in self
            .completed
            .iter_mut()
            .zip(c.iter().zip(self.freed_complete.iter()))
        {
            *done = (*done).max(n + freed);
        }
    }
}

impl AppParser for MqttState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.failed {
            return false;
        }
        if !self.feed(dir, data, None) {
            self.failed = true;
            self.sides = Default::default();
            return true;
        }
        false
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        if self.failed {
            return false;
        }
        if !self.feed(dir, data, Some(fc)) {
            self.failed = true;
            self.sides = Default::default();
            return true;
        }
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {
        // Suricata's MQTT parser does not accept gaps: the app layer stops on the flow
        // (both directions), without an event.
        self.failed = true;
        self.gapped = true;
        self.sides = Default::default();
    }

    fn close(&mut self) {
        self.closed = true;
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.completed[di(dir)]
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().filter(|t| t.dir == dir).map(|t| t.id));
    }

    fn buffer_ready(&self, tx: u64, _b: u16, dir: Dir, _closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        // Suricata prefilters every MQTT buffer at progress 1 (the topic lists are also
        // inspected there only): a rule on them is evaluated once the transaction is
        // complete in the inspected direction, never on an open one (a gap counts as
        // complete).
        (t.done_in(dir) || self.gapped).then_some(true)
    }

    fn buffer(&self, tx: u64, b: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        let nonempty = |v: &[u8], f: &mut dyn FnMut(&[u8]) -> bool| !v.is_empty() && f(v);
        match b {
            buf::SUB_TOPIC => {
                let lim = self.cfg.subscribe_topic_match_limit as usize;
                let lim = if lim == 0 { usize::MAX } else { lim };
                for m in &t.msgs {
                    if let Op::Subscribe(s) = &m.op {
                        for tp in s.topics.iter().take(lim) {
                            // An empty topic ends the list (Suricata's getter).
                            if tp.topic_name.is_empty() {
                                return false;
                            }
                            if f(tp.topic_name.as_bytes()) {
                                return true;
                            }
                        }
                    }
                }
                false
            }
            buf::UNSUB_TOPIC => {
                let lim = self.cfg.unsubscribe_topic_match_limit as usize;
                let lim = if lim == 0 { usize::MAX } else { lim };
                for m in &t.msgs {
                    if let Op::Unsubscribe(s) = &m.op {
                        for tp in s.topics.iter().take(lim) {
                            if tp.is_empty() {
                                return false;
                            }
                            if f(tp.as_bytes()) {
                                return true;
                            }
                        }
                    }
                }
                false
            }
            buf::PUB_TOPIC | buf::PUB_MESSAGE => {
                let p = t.msgs.iter().find_map(|m| match &m.op {
                    Op::Publish(p) if b == buf::PUB_TOPIC && !p.topic.is_empty() => {
                        Some(p.topic.as_bytes())
                    }
                    Op::Publish(p) if b == buf::PUB_MESSAGE && !p.message.is_empty() => {
                        Some(&p.message[..])
                    }
                    _ => None,
                });
                p.is_some_and(f)
            }
            _ => {
                // The CONNECT fields: the first CONNECT with a non-empty value.
                for m in &t.msgs {
                    let Op::Connect(c) = &m.op else {
                        continue;
                    };
                    let v: Option<&[u8]> = match b {
                        buf::CLIENTID => Some(c.client_id.as_bytes()),
                        buf::PROTOCOL_STRING => Some(c.protocol_string.as_bytes()),
                        buf::USERNAME => c.username.as_deref().map(str::as_bytes),
                        buf::PASSWORD => c.password.as_deref(),
                        buf::WILLTOPIC => c.will_topic.as_deref().map(str::as_bytes),
                        buf::WILLMESSAGE => c.will_message.as_deref(),
                        _ => None,
                    };
                    if let Some(v) = v.filter(|v| !v.is_empty()) {
                        return nonempty(v, f);
                    }
                }
                false
            }
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        ev < 16 && self.tx(tx).is_some_and(|t| t.events & (1 << ev) != 0)
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.failed || self.tx(tx).is_none_or(|t| t.complete)
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        for t in self.txs.iter_mut() {
            if t.logged || !(t.complete || c.closed || self.gapped) {
                continue;
            }
            t.logged = true;
            self.unlogged = self.unlogged.saturating_sub(1);
            if t.counted {
                c.logged += 1;
            }
            if !c.write || !c.out.wants_type("mqtt") {
                continue;
            }
            let Some(mut rec) = c.out.record(EventKind::Protocol) else {
                continue;
            };
            write_eve_header(&mut rec, &c.rec.header("mqtt", t.dir == Dir::ToServer));
            eve::write_mqtt(&mut rec, t, &c.opts.mqtt);
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
        let mut drop_n = logged.saturating_sub(keep);
        if drop_n > 0 || self.txs.iter().any(|t| t.logged && t.id < inspected) {
            let freed = &mut self.freed_complete;
            self.txs.retain(|t| {
                if t.logged && (drop_n > 0 || t.id < inspected) {
                    drop_n = drop_n.saturating_sub(1);
                    if t.complete {
                        freed[di(t.dir)] += 1;
                    }
                    return false;
                }
                true
            });
        }
    }

    fn drain_events(&mut self, _from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut() {
            let new = t.events & !t.events_reported;
            if new == 0 {
                continue;
            }
            t.events_reported = t.events;
            for (i, name) in EVENT_NAMES.iter().enumerate() {
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
        // Alerts log with the defaults (passwords included), as Suricata.
        eve::write_mqtt(w, t, &eve::MqttLogConfig::default());
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
