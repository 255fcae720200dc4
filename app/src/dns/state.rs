//! Per-flow DNS state: UDP datagrams and TCP length-prefixed streams into transactions.
//!
//! Transaction model (Suricata 7): every parsed message is its own transaction, numbered from
//! 0 per flow; a request transaction holds the request, a response transaction the response.
//! [`DnsState::request_tx_for`] pairs a response with its request by DNS id when needed.

use std::collections::VecDeque;

use super::message::{DecodeError, DnsMessage, NameFlags, Sections, HEADER_LEN};
use super::{DnsConfig, DnsEvent, DnsEvents, DnsStats};
use crate::Dir;

/// One DNS transaction: one request or one response (or only events, when a message failed
/// before any transaction existed).
#[derive(Debug, Default)]
pub struct DnsTx {
    /// Transaction number on this flow (from 0).
    pub id: u64,
    /// Direction of the message.
    pub dir: Option<Dir>,
    msg: Option<DnsMessage>,
    /// App-layer events set on this transaction.
    pub events: DnsEvents,
}

impl DnsTx {
    /// The request message, if this is a request transaction.
    pub fn request(&self) -> Option<&DnsMessage> {
        self.msg
            .as_ref()
            .filter(|_| self.dir == Some(Dir::ToServer))
    }

    /// The response message, if this is a response transaction.
    pub fn response(&self) -> Option<&DnsMessage> {
        self.msg
            .as_ref()
            .filter(|_| self.dir == Some(Dir::ToClient))
    }

    /// The message, whichever direction.
    pub fn message(&self) -> Option<&DnsMessage> {
        self.msg.as_ref()
    }

    /// DNS id of the message (0 when there is none).
    pub fn dns_id(&self) -> u16 {
        self.msg.as_ref().map_or(0, |m| m.header.id)
    }

    /// `dns.query` multi-buffer: each query name of the request (Suricata skips empty names).
    pub fn query_names(&self) -> impl Iterator<Item = &[u8]> {
        self.request()
            .into_iter()
            .flat_map(|m| m.queries.iter().map(move |q| m.bytes(q.name)))
            .filter(|n| !n.is_empty())
    }

    /// `dns.opcode` value: the opcode of the message (either direction).
    pub fn opcode(&self) -> Option<u8> {
        self.msg.as_ref().map(|m| m.header.opcode())
    }

    /// The response's rcode (the low 4 flag bits), if a response.
    pub fn rcode(&self) -> Option<u8> {
        self.response().map(|m| m.header.rcode())
    }
}

/// Result of feeding data to the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseResult {
    /// Data accepted.
    Ok,
    /// The parser gave up on this flow (Suricata's `AppLayerResult::err`): further data is
    /// ignored.
    Error,
}

/// Per-flow DNS parser state.
#[derive(Debug)]
pub struct DnsState {
    pub(crate) tcp: bool,
    txs: VecDeque<DnsTx>,
    next_tx_id: u64,
    buf: [Vec<u8>; 2],
    gap: bool,
    failed: bool,
    spare: Vec<DnsMessage>,
    cfg: DnsConfig,
    /// Counters (malformed messages, limits hit).
    pub stats: DnsStats,
    /// Transactions below this id had their events reported to EVE `anomaly` (their events
    /// are fixed once the message is parsed, as Suricata's).
    pub(crate) anomaly_next: u64,
    /// While frames are asked for: the (start, length) of each message parsed by the
    /// current call, relative to the data handed in (TCP: after its 2-byte length).
    pub(crate) frame_msgs: Option<Vec<(i64, usize)>>,
}

fn di(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

/// Suricata's header plausibility check: opcode assigned and enough bytes for the counts.
pub(crate) fn header_valid(msg: &[u8], rlen: usize) -> Option<bool> {
    let h = super::message::DnsHeader::parse(msg)?;
    if h.opcode() >= 7 {
        return None;
    }
    if 2 * h.record_count() + HEADER_LEN > rlen {
        return None;
    }
    Some(!h.is_response())
}

impl DnsState {
    /// New state for a UDP (`tcp == false`) or TCP flow.
    pub fn new(tcp: bool, cfg: DnsConfig) -> Self {
        DnsState {
            tcp,
            txs: VecDeque::new(),
            next_tx_id: 0,
            buf: [Vec::new(), Vec::new()],
            gap: false,
            failed: false,
            spare: Vec::new(),
            cfg,
            stats: DnsStats::default(),
            anomaly_next: 0,
            frame_msgs: None,
        }
    }

    /// Whether the parser gave up on the flow.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Feed data: a whole datagram (UDP) or the next bytes of the reassembled stream (TCP).
    pub fn parse(&mut self, dir: Dir, data: &[u8]) -> ParseResult {
        if self.failed {
            return ParseResult::Error;
        }
        let ok = if self.tcp {
            self.parse_tcp(dir, data)
        } else {
            self.parse_message(dir, data)
        };
        if !ok && self.tcp {
            self.failed = true;
            self.buf[0] = Vec::new();
            self.buf[1] = Vec::new();
            return ParseResult::Error;
        }
        ParseResult::Ok
    }

    /// A gap of `len` bytes in `dir` (TCP): buffered data is dropped and parsing resumes at the
    /// first data that looks like DNS again.
    pub fn gap(&mut self, dir: Dir, len: u32) {
        if len > 0 {
            self.buf[di(dir)].clear();
            self.gap = true;
        }
    }

    fn parse_tcp(&mut self, dir: Dir, data: &[u8]) -> bool {
        let d = di(dir);
        if self.gap {
            if !self.buf[d].is_empty() || super::probe_tcp(data) != super::Probe::No {
                self.gap = false;
            } else {
                return true;
            }
        }
        let mut buf = std::mem::take(&mut self.buf[d]);
        // Where the parsed bytes start, relative to `data` (held bytes first).
        let base = -(buf.len() as i64);
        if let Some(m) = self.frame_msgs.as_mut() {
            m.clear();
            m.push((base, 0));
        }
        if buf.is_empty() {
            let Some(consumed) = self.drain_messages(dir, data) else {
                return false;
            };
            buf.extend_from_slice(data.get(consumed..).unwrap_or_default());
        } else {
            buf.extend_from_slice(data);
            let Some(consumed) = self.drain_messages(dir, &buf) else {
                return false;
            };
            buf.drain(..consumed.min(buf.len()));
        }
        // A pending message is at most 65,537 bytes: the buffer is bounded by construction.
        if buf.capacity() > 2 * 65_537 {
            buf.shrink_to(65_537);
        }
        self.buf[d] = buf;
        true
    }

    /// Parse every complete length-prefixed message in `src`; returns the bytes consumed, or
    /// `None` when a message was rejected.
    fn drain_messages(&mut self, dir: Dir, src: &[u8]) -> Option<usize> {
        let mut consumed = 0usize;
        while let Some(&[hi, lo]) = src.get(consumed..consumed + 2) {
            let size = u16::from_be_bytes([hi, lo]) as usize;
            if size == 0 {
                consumed += 2;
                continue;
            }
            let Some(msg) = src.get(consumed + 2..consumed + 2 + size) else {
                break;
            };
            if let Some(m) = self.frame_msgs.as_mut() {
                let base = m.first().map_or(0, |b| b.0);
                m.push((base + consumed as i64 + 2, size));
            }
            if !self.parse_message(dir, msg) {
                return None;
            }
            consumed += 2 + size;
        }
        Some(consumed)
    }

    /// Parse one complete message. Returns `false` when Suricata would report an error.
    fn parse_message(&mut self, dir: Dir, msg: &[u8]) -> bool {
        // Too short, or counts that cannot fit: Suricata ignores such a UDP datagram and fails
        // a TCP stream, without an event.
        let h = match super::message::DnsHeader::parse(msg) {
            Some(h) if 2 * h.record_count() + HEADER_LEN <= msg.len() => h,
            _ => {
                self.stats.invalid_header += 1;
                return !self.tcp;
            }
        };
        if h.is_response() != (dir == Dir::ToClient) {
            self.set_event(if dir == Dir::ToServer {
                DnsEvent::NotRequest
            } else {
                DnsEvent::NotResponse
            });
            return false;
        }
        let mut m = self.spare.pop().unwrap_or_default();
        let sections = match (dir, self.cfg.parse_additionals) {
            (_, true) => Sections::All,
            (Dir::ToServer, false) => Sections::Questions,
            (Dir::ToClient, false) => Sections::NoAdditionals,
        };
        match m.decode_sections(msg, self.cfg.max_message_arena, sections) {
            Ok(()) => {}
            Err(e) => {
                if e == DecodeError::TooLarge {
                    self.stats.memcap += 1;
                }
                self.stats.malformed += 1;
                let flags = m.name_flags;
                self.recycle(m);
                self.set_event(DnsEvent::MalformedData);
                self.name_events(flags);
                return false;
            }
        }
        let flags = m.name_flags;
        let mut tx = DnsTx {
            id: self.next_tx_id,
            dir: Some(dir),
            msg: Some(m),
            events: DnsEvents::default(),
        };
        self.next_tx_id += 1;
        if h.z() {
            tx.events.set(DnsEvent::ZFlagSet);
        }
        if h.opcode() >= 7 {
            tx.events.set(DnsEvent::InvalidOpcode);
        }
        self.push_tx(tx);
        self.name_events(flags);
        true
    }

    fn name_events(&mut self, f: NameFlags) {
        if f.contains(NameFlags::TRUNCATED) {
            self.set_event(DnsEvent::NameTooLong);
        }
        if f.contains(NameFlags::INFINITE_LOOP) {
            self.set_event(DnsEvent::InfiniteLoop);
        }
        if f.contains(NameFlags::LABEL_LIMIT) {
            self.set_event(DnsEvent::TooManyLabels);
        }
    }

    fn push_tx(&mut self, tx: DnsTx) {
        if self.txs.len() >= self.cfg.max_txs {
            self.stats.tx_dropped += 1;
            if let Some(old) = self.txs.pop_front() {
                if let Some(m) = old.msg {
                    self.recycle(m);
                }
            }
        }
        self.txs.push_back(tx);
    }

    fn recycle(&mut self, mut m: DnsMessage) {
        if self.spare.len() < 4 && m.arena_len() <= 64 * 1024 {
            m.clear();
            self.spare.push(m);
        }
    }

    /// Set an event on the newest transaction, creating an event-only one if there is none.
    fn set_event(&mut self, e: DnsEvent) {
        self.stats.events += 1;
        if self.txs.is_empty() {
            let tx = DnsTx {
                id: self.next_tx_id,
                ..DnsTx::default()
            };
            self.next_tx_id += 1;
            self.push_tx(tx);
        }
        if let Some(tx) = self.txs.back_mut() {
            tx.events.set(e);
        }
    }

    /// Live transactions, oldest first.
    pub fn txs(&self) -> impl Iterator<Item = &DnsTx> {
        self.txs.iter()
    }

    /// Transaction by id, if still held.
    pub fn tx(&self, id: u64) -> Option<&DnsTx> {
        let first = self.txs.front()?.id;
        let idx = id.checked_sub(first)? as usize;
        self.txs.get(idx).filter(|t| t.id == id)
    }

    /// Number of transactions created so far on the flow (the next id).
    pub fn tx_count(&self) -> u64 {
        self.next_tx_id
    }

    /// The most recent request transaction with DNS id `dns_id` before transaction `before`
    /// (pairs a response with its request).
    pub fn request_tx_for(&self, dns_id: u16, before: u64) -> Option<&DnsTx> {
        self.txs
            .iter()
            .rev()
            .filter(|t| t.id < before)
            .find(|t| t.request().is_some_and(|m| m.header.id == dns_id))
    }

    /// Free every transaction with an id below `id` (they were inspected and logged).
    pub fn free_txs_before(&mut self, id: u64) {
        while self.txs.front().is_some_and(|t| t.id < id) {
            if let Some(m) = self.txs.pop_front().and_then(|t| t.msg) {
                self.recycle(m);
            }
        }
    }

    /// Bytes buffered for incomplete TCP messages.
    pub fn buffered(&self) -> usize {
        self.buf[0].len() + self.buf[1].len()
    }
}
