//! DNP3 over TCP, as Suricata 7 (`src/app-layer-dnp3.c`, `src/output-json-dnp3.c`,
//! `src/detect-dnp3.c`): link frames with their CRCs checked and removed, transport
//! segments reassembled per (source, destination) by FIR / FIN / sequence, the application
//! header, the internal indications of responses and the objects (`objects.rs`). Each
//! request or response is one transaction; the `dnp3` record is written once the
//! transaction is complete (at flow end for one whose objects could not all be decoded).
//! Suricata 7 registers DNP3 on TCP only and leaves it off unless
//! `app-layer.protocols.dnp3.enabled` says yes.

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

pub mod keywords;
pub mod objects;
mod table;
#[cfg(test)]
mod tests;

use objects::{Object, Stop};

/// DNP3 in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "dnp3",
    aliases: &[],
    ip_protos: &[6],
    ports: &[20000],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[BufferDesc {
        name: "dnp3.data",
        dir: None,
    }],
    events: EVENTS,
    keywords: keywords::KEYWORDS,
    generic_stats: true,
};

/// Suricata's event names (`app-layer-event:dnp3.<name>`; EVE writes them in upper case).
/// The last three are Suricata 7.0.14's limits.
pub const EVENTS: &[&str] = &[
    "flooded",
    "len_too_small",
    "bad_link_crc",
    "bad_transport_crc",
    "malformed",
    "unknown_object",
    "too_many_points",
    "too_many_objects",
    "too_long_reassembly",
];

/// Event ids (indexes into [`EVENTS`]).
pub mod ev {
    /// More unanswered transactions than the flood limit.
    pub const FLOODED: u16 = 0;
    /// A link length below 5, or too short for the headers.
    pub const LEN_TOO_SMALL: u16 = 1;
    /// Link header CRC mismatch.
    pub const BAD_LINK_CRC: u16 = 2;
    /// User data block CRC mismatch.
    pub const BAD_TRANSPORT_CRC: u16 = 3;
    /// Transport reassembly failed.
    pub const MALFORMED: u16 = 4;
    /// An object that is not decoded, or a malformed one.
    pub const UNKNOWN_OBJECT: u16 = 5;
    /// More points than `max-points`.
    pub const TOO_MANY_POINTS: u16 = 6;
    /// More objects than `max-objects`.
    pub const TOO_MANY_OBJECTS: u16 = 7;
    /// A reassembled fragment over 63 * 255 bytes.
    pub const TOO_LONG_REASSEMBLY: u16 = 8;
}

/// `app-layer.protocols.dnp3` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Dnp3Config {
    /// `enabled` (off unless set, as in Suricata 7).
    pub enabled: bool,
    /// `max-points`: points decoded per message at most.
    pub max_points: u64,
    /// `max-objects`: objects decoded per message at most.
    pub max_objects: u64,
    /// `max-tx`: unlogged transactions before `flooded` (Suricata 7.0.14's default, 32;
    /// 7.0.10 had a fixed 500).
    pub max_tx: u64,
}

impl Default for Dnp3Config {
    fn default() -> Self {
        Dnp3Config {
            enabled: false,
            max_points: 16384,
            max_objects: 2048,
            max_tx: 32,
        }
    }
}

/// Link header length.
pub const LINK_HDR_LEN: usize = 10;
const BLOCK: usize = 16;
const CRC_LEN: usize = 2;
/// Longest reassembled fragment (63 segments of at most 255 bytes).
const MAX_REASSEMBLY: usize = 63 * 255;
/// The flow's kept transactions hold at most this many times `max-points` points.
const POINTS_KEPT_FACTOR: u64 = 4;
/// Logged transactions kept for detection.
const KEEP_LOGGED: usize = 8;

static CRC_TABLE: [u16; 256] = crc_table();

const fn crc_table() -> [u16; 256] {
    // CRC-16/DNP: reflected polynomial 0xA6BC.
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xa6bc
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// The DNP3 CRC of `d`.
pub fn crc(d: &[u8]) -> u16 {
    let mut c: u16 = 0;
    for &b in d {
        c = CRC_TABLE[usize::from((c ^ u16::from(b)) & 0xff)] ^ (c >> 8);
    }
    !c
}

/// Whether `block` (data then a little-endian CRC) checks.
pub fn check_crc(block: &[u8]) -> bool {
    if block.len() < CRC_LEN + 1 {
        return false;
    }
    let (d, c) = block.split_at(block.len() - CRC_LEN);
    crc(d).to_le_bytes() == [c[0], c[1]]
}

fn check_user_crcs(d: &[u8]) -> bool {
    d.chunks(BLOCK + CRC_LEN).all(check_crc)
}

/// Frame length on the wire for link length `len` (0 when below 5).
pub fn link_frame_len(len: u8) -> usize {
    if len < 5 {
        return 0;
    }
    let l = usize::from(len - 5);
    let mut n = (l / BLOCK) * (BLOCK + CRC_LEN);
    if l % BLOCK != 0 {
        n += l % BLOCK + CRC_LEN;
    }
    n + LINK_HDR_LEN
}

/// Suricata's probe: a printable banner containing "DNP3", or a link header with the start
/// bytes and a length of at least 5. Suricata also reverses a midstream flow whose first
/// frame's link direction bit says it goes the other way; shrike's app layer reverses a
/// midstream flow when the first data fits the other direction only, so a first user data
/// frame that is plainly the other direction's (direction bit and application function
/// both saying so: a response from the master side, a request from the outstation side)
/// is refused here.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if data.windows(4).any(|w| w == b"DNP3")
        && data
            .iter()
            .take(256)
            .all(|c| c.is_ascii_graphic() || *c == b' ')
    {
        return Probe::Yes;
    }
    if data.len() < LINK_HDR_LEN {
        return Probe::NeedMore;
    }
    if data[0] != 0x05 || data[1] != 0x64 || data[2] < 5 {
        return Probe::No;
    }
    let user = matches!(data[3] & 0x0f, 3 | 4);
    if let (true, Some(&th), Some(&fc)) = (user, data.get(10), data.get(12)) {
        let from_master = data[3] & 0x80 != 0;
        let response = fc >= 0x81;
        let other_way = match dir {
            Dir::ToServer => !from_master && response,
            Dir::ToClient => from_master && !response,
        };
        if th & 0x40 != 0 && other_way {
            return Probe::No;
        }
    }
    Probe::Yes
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(Dnp3State::new(cfg.dnp3))
}

/// The link header fields logged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkHeader {
    /// Control octet.
    pub control: u8,
    /// Destination address.
    pub dst: u16,
    /// Source address.
    pub src: u16,
}

/// One request or response.
#[derive(Clone, Debug, Default)]
pub struct Dnp3Tx {
    /// Id, from 0 per flow.
    pub id: u64,
    /// A request (to server).
    pub is_request: bool,
    /// Link header of the first frame.
    pub lh: LinkHeader,
    /// Latest transport header.
    pub th: u8,
    /// Application control.
    pub app_control: u8,
    /// Application function code.
    pub function_code: u8,
    /// Internal indications (responses): IIN1 << 8 | IIN2.
    pub iin: u16,
    /// Reassembled application data (headers included), as `dnp3_data` inspects it.
    pub buffer: Vec<u8>,
    /// Decoded objects.
    pub objects: Vec<Object>,
    /// The last segment was seen (or reassembly failed).
    pub done: bool,
    /// Every object was decoded.
    pub complete: bool,
    /// Events (bit per [`EVENTS`] index).
    pub events: u16,
    events_reported: u16,
    logged: bool,
}

impl Dnp3Tx {
    /// The direction the transaction goes.
    pub fn dir(&self) -> Dir {
        if self.is_request {
            Dir::ToServer
        } else {
            Dir::ToClient
        }
    }
}

/// Per-flow DNP3 state.
#[derive(Debug)]
pub struct Dnp3State {
    cfg: Dnp3Config,
    txs: VecDeque<Dnp3Tx>,
    /// Id of the transaction events go to (Suricata's `curr`).
    curr: Option<u64>,
    next_id: u64,
    unreplied: u64,
    flooded: bool,
    bufs: [Vec<u8>; 2],
    failed: [bool; 2],
    done_count: [u64; 2],
    closed: bool,
    /// Points held by the kept transactions.
    points_kept: u64,
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl Dnp3State {
    /// A new flow's state.
    pub fn new(cfg: Dnp3Config) -> Self {
        Dnp3State {
            cfg,
            txs: VecDeque::new(),
            curr: None,
            next_id: 0,
            unreplied: 0,
            flooded: false,
            bufs: Default::default(),
            failed: [false; 2],
            done_count: [0; 2],
            closed: false,
            points_kept: 0,
        }
    }

    /// Transaction `id`, if kept.
    pub fn tx(&self, id: u64) -> Option<&Dnp3Tx> {
        self.txs.iter().find(|t| t.id == id)
    }

    /// The transactions kept.
    pub fn txs(&self) -> impl Iterator<Item = &Dnp3Tx> {
        self.txs.iter()
    }

    fn tx_mut(&mut self, id: u64) -> Option<&mut Dnp3Tx> {
        self.txs.iter_mut().find(|t| t.id == id)
    }

    /// Suricata's `DNP3SetEvent`: on the current transaction, if any.
    fn set_event(&mut self, e: u16) {
        if let Some(id) = self.curr {
            if let Some(t) = self.tx_mut(id) {
                t.events |= 1 << e;
            }
        }
    }

    fn alloc(&mut self, is_request: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.unreplied += 1;
        self.curr = Some(id);
        self.txs.push_back(Dnp3Tx {
            id,
            is_request,
            ..Default::default()
        });
        if self.unreplied > self.cfg.max_tx && !self.flooded {
            self.set_event(ev::FLOODED);
            self.flooded = true;
        }
        id
    }

    /// Whether transaction `t` is complete for logging and detection (Suricata's progress).
    fn progress_done(&self, t: &Dnp3Tx) -> bool {
        (self.flooded && self.next_id.saturating_sub(t.id + 1) >= self.cfg.max_tx) || t.complete
    }

    /// One user data frame (CRCs checked), Suricata's `DNP3HandleUserData{Request,Response}`.
    fn user_data(&mut self, dir: Dir, frame: &[u8]) {
        let req = dir == Dir::ToServer;
        let lh = LinkHeader {
            control: frame[3],
            dst: u16::from_le_bytes([frame[4], frame[5]]),
            src: u16::from_le_bytes([frame[6], frame[7]]),
        };
        let body = &frame[LINK_HDR_LEN..];
        let th = body[0];
        let id = if th & 0x40 == 0 {
            // Not the first segment: the open transaction of the same addresses whose next
            // transport sequence this is.
            let found = self.txs.iter_mut().find(|t| {
                t.lh.src == lh.src
                    && t.lh.dst == lh.dst
                    && t.is_request == req
                    && !t.done
                    && ((t.th & 0x3f) + 1) % 64 == th & 0x3f
            });
            let Some(t) = found else {
                return;
            };
            t.th = th;
            t.id
        } else {
            let ac = body.get(1).copied().unwrap_or(0);
            let fc = body.get(2).copied().unwrap_or(0);
            if req && fc == 0 {
                // Confirms are ignored.
                return;
            }
            let iin = if req {
                0
            } else {
                u16::from_be_bytes([
                    body.get(3).copied().unwrap_or(0),
                    body.get(4).copied().unwrap_or(0),
                ])
            };
            let id = self.alloc(req);
            if let Some(t) = self.tx_mut(id) {
                t.lh = lh;
                t.th = th;
                t.app_control = ac;
                t.function_code = fc;
                t.iin = iin;
            }
            id
        };
        let ok = {
            let Some(t) = self.tx_mut(id) else {
                return;
            };
            reassemble(body, &mut t.buffer)
        };
        if !ok {
            self.set_event(ev::MALFORMED);
            if req {
                if let Some(t) = self.tx_mut(id) {
                    t.done = true;
                }
                self.done_count[di(dir)] += 1;
            }
            return;
        }
        if self.tx(id).is_some_and(|t| t.buffer.len() > MAX_REASSEMBLY) {
            self.set_event(ev::TOO_LONG_REASSEMBLY);
            if let Some(t) = self.tx_mut(id) {
                t.done = true;
                t.buffer.truncate(MAX_REASSEMBLY);
            }
            self.done_count[di(dir)] += 1;
            return;
        }
        if th & 0x80 == 0 {
            return;
        }
        // Points kept by the flow's live transactions are bounded too (a flood of
        // transactions that never complete cannot hold `max-tx` x `max-points` points).
        let budget = (self.cfg.max_points.saturating_mul(POINTS_KEPT_FACTOR))
            .saturating_sub(self.points_kept);
        let (maxp, maxo) = (self.cfg.max_points.min(budget), self.cfg.max_objects);
        let Some(t) = self.tx_mut(id) else {
            return;
        };
        t.done = true;
        let hdr = if req { 2 } else { 4 };
        let body = t.buffer.get(hdr..).unwrap_or_default();
        let mut objs = Vec::new();
        let stop = objects::decode_objects(body, &mut objs, maxp, maxo);
        let n: usize = objs.iter().map(|o| o.points.len()).sum();
        t.objects = objs;
        self.points_kept += n as u64;
        let Some(t) = self.tx_mut(id) else {
            return;
        };
        match stop {
            Stop::Complete => t.complete = true,
            Stop::Short => {}
            Stop::Unknown => t.events |= 1 << ev::UNKNOWN_OBJECT,
            Stop::TooManyPoints => t.events |= 1 << ev::TOO_MANY_POINTS,
            Stop::TooManyObjects => t.events |= 1 << ev::TOO_MANY_OBJECTS,
        }
        self.done_count[di(dir)] += 1;
    }

    /// Suricata's `DNP3Handle{Request,Response}LinkLayer`: the bytes used, or `None` when
    /// the data is not DNP3 (the direction gives up).
    fn link_layer(&mut self, dir: Dir, mut input: &[u8]) -> Option<usize> {
        let mut used = 0;
        while input.len() >= LINK_HDR_LEN {
            if input[0] != 0x05 || input[1] != 0x64 {
                return None;
            }
            if !check_crc(&input[..LINK_HDR_LEN]) {
                self.set_event(ev::BAD_LINK_CRC);
                return None;
            }
            let flen = link_frame_len(input[2]);
            if flen == 0 {
                self.set_event(ev::LEN_TOO_SMALL);
                return None;
            }
            if input.len() < flen {
                break;
            }
            let frame = &input[..flen];
            let fc = frame[3] & 0x0f;
            if fc == 3 || fc == 4 {
                let need = if dir == Dir::ToServer {
                    5 + 1 + 2
                } else {
                    5 + 1 + 2 + 2
                };
                if usize::from(frame[2]) < need {
                    self.set_event(ev::LEN_TOO_SMALL);
                    if dir == Dir::ToClient {
                        return None;
                    }
                } else if !check_user_crcs(&frame[LINK_HDR_LEN..]) {
                    self.set_event(ev::BAD_TRANSPORT_CRC);
                } else {
                    self.user_data(dir, frame);
                }
            }
            input = &input[flen..];
            used += flen;
        }
        Some(used)
    }

    fn feed(&mut self, dir: Dir, data: &[u8]) -> bool {
        let d = di(dir);
        if self.bufs[d].is_empty() {
            if dir == Dir::ToClient && data.windows(4).any(|w| w == b"DNP3") {
                // A banner: ignored.
                return true;
            }
            match self.link_layer(dir, data) {
                Some(n) => {
                    if n < data.len() {
                        self.bufs[d] = data[n..].to_vec();
                    }
                    true
                }
                None => false,
            }
        } else {
            let mut buf = std::mem::take(&mut self.bufs[d]);
            buf.extend_from_slice(data);
            match self.link_layer(dir, &buf) {
                Some(n) => {
                    buf.drain(..n);
                    self.bufs[d] = buf;
                    true
                }
                None => false,
            }
        }
    }
}

/// Remove the transport header and the block CRCs of a frame's user data and append the
/// rest to `out` (Suricata's `DNP3ReassembleApplicationLayer`); false when malformed.
pub fn reassemble(input: &[u8], out: &mut Vec<u8>) -> bool {
    let n = input.len();
    if n < CRC_LEN {
        return false;
    }
    let blocks = n / (BLOCK + CRC_LEN);
    let rem = n % (BLOCK + CRC_LEN);
    let len = if rem != 0 {
        if rem < CRC_LEN {
            return false;
        }
        blocks * BLOCK + rem - CRC_LEN
    } else {
        blocks * BLOCK
    };
    if len < 2 {
        return false;
    }
    let mut left = len - 1;
    let mut off = 0;
    while off < n {
        let mut bs = (n - off).min(BLOCK + CRC_LEN);
        if off == 0 {
            off = 1;
            bs -= 1;
        }
        if bs < CRC_LEN + 1 || bs - CRC_LEN > left {
            return false;
        }
        out.extend_from_slice(&input[off..off + bs - CRC_LEN]);
        left -= bs - CRC_LEN;
        off += bs;
    }
    true
}

impl AppParser for Dnp3State {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        let d = di(dir);
        if self.failed[d] || data.is_empty() {
            return false;
        }
        if !self.feed(dir, data) {
            // Suricata stops the app layer on the flow after a parser error.
            self.failed = [true, true];
            self.bufs = Default::default();
            return true;
        }
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        // Suricata's DNP3 parser does not accept gaps: the flow's app layer ends.
        let _ = dir;
        self.failed = [true, true];
        self.bufs = Default::default();
    }

    fn close(&mut self) {
        self.closed = true;
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.done_count[di(dir)]
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().filter(|t| t.dir() == dir).map(|t| t.id));
    }

    fn buffer_ready(&self, tx: u64, _buf: u16, dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        if t.dir() != dir {
            return Some(true);
        }
        // Suricata inspects a transaction's data once it is complete (its progress), or
        // when the flow ends: one whose objects did not all decode only then.
        (self.progress_done(t) || closed).then_some(true)
    }

    fn buffer(&self, tx: u64, _buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        if t.dir() != dir || t.buffer.is_empty() {
            return false;
        }
        f(&t.buffer)
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        ev < 16 && self.tx(tx).is_some_and(|t| t.events & (1 << ev) != 0)
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.failed[0] || self.tx(tx).is_none_or(|t| self.progress_done(t))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let closed = c.closed || self.closed;
        let mut done_ids = Vec::new();
        for t in self.txs.iter() {
            if !t.logged && (closed || self.progress_done(t)) {
                done_ids.push(t.id);
            }
        }
        for id in done_ids {
            let Some(t) = self.tx_mut(id) else {
                continue;
            };
            t.logged = true;
            c.logged += 1;
            // Suricata frees a transaction once logged and inspected; shrike keeps a few
            // for detection, so the flood count drops at logging.
            self.unreplied = self.unreplied.saturating_sub(1);
            if self.flooded && self.unreplied < self.cfg.max_tx {
                self.flooded = false;
            }
            let Some(t) = self.tx(id) else {
                continue;
            };
            if !t.done || !c.write || !c.out.wants_type("dnp3") {
                continue;
            }
            let Some(mut rec) = c.out.record(EventKind::Protocol) else {
                continue;
            };
            write_eve_header(&mut rec, &c.rec.header("dnp3", true));
            rec.open_object("dnp3");
            write_tx(&mut rec, t);
            rec.close();
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
        let keep = if closed { 0 } else { KEEP_LOGGED };
        let logged = self.txs.iter().filter(|t| t.logged).count();
        let mut drop_n = logged.saturating_sub(keep);
        let done_below = c.inspected;
        drop_n = drop_n.max(
            self.txs
                .iter()
                .filter(|t| t.logged && t.id < done_below)
                .count(),
        );
        while drop_n > 0 {
            let Some(i) = self.txs.iter().position(|t| t.logged) else {
                break;
            };
            if let Some(t) = self.txs.remove(i) {
                if self.curr == Some(t.id) {
                    self.curr = None;
                }
                let n: usize = t.objects.iter().map(|o| o.points.len()).sum();
                self.points_kept = self.points_kept.saturating_sub(n as u64);
            }
            drop_n -= 1;
        }
    }

    fn drain_events(&mut self, _from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut() {
            let new = t.events & !t.events_reported;
            if new == 0 {
                continue;
            }
            t.events_reported = t.events;
            for (i, name) in EVENTS.iter().enumerate() {
                if new & (1 << i) != 0 {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: true,
                    });
                }
            }
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        if !t.done {
            return false;
        }
        w.open_object("dnp3");
        w.open_object(if t.is_request { "request" } else { "response" });
        write_tx(w, t);
        w.close();
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

/// Suricata's IIN names, most significant bit first.
pub static INDICATORS: &[(&str, u16)] = &[
    ("device_restart", 0x8000),
    ("device_trouble", 0x4000),
    ("local_control", 0x2000),
    ("need_time", 0x1000),
    ("class_3_events", 0x0800),
    ("class_2_events", 0x0400),
    ("class_1_events", 0x0200),
    ("all_stations", 0x0100),
    ("reserved_1", 0x0080),
    ("reserved_2", 0x0040),
    ("config_corrupt", 0x0020),
    ("already_executing", 0x0010),
    ("event_buffer_overflow", 0x0008),
    ("parameter_error", 0x0004),
    ("object_unknown", 0x0002),
    ("no_func_code_support", 0x0001),
];

/// The members of the `dnp3` object (Suricata's `JsonDNP3LogRequest` / `...Response`).
pub fn write_tx(w: &mut JsonWriter, t: &Dnp3Tx) {
    let ty = if t.is_request {
        "request"
    } else if t.function_code == 0x82 {
        "unsolicited_response"
    } else {
        "response"
    };
    w.set_str("type", ty);
    let lc = t.lh.control;
    w.open_object("control");
    w.set_bool("dir", lc & 0x80 != 0);
    w.set_bool("pri", lc & 0x40 != 0);
    w.set_bool("fcb", lc & 0x20 != 0);
    w.set_bool("fcv", lc & 0x10 != 0);
    w.set_u64("function_code", u64::from(lc & 0x0f));
    w.close();
    w.set_u64("src", u64::from(t.lh.src));
    w.set_u64("dst", u64::from(t.lh.dst));
    w.open_object("application");
    let ac = t.app_control;
    w.open_object("control");
    w.set_bool("fir", ac & 0x80 != 0);
    w.set_bool("fin", ac & 0x40 != 0);
    w.set_bool("con", ac & 0x20 != 0);
    w.set_bool("uns", ac & 0x10 != 0);
    w.set_u64("sequence", u64::from(ac & 0x0f));
    w.close();
    w.set_u64("function_code", u64::from(t.function_code));
    if !t.objects.is_empty() {
        w.open_array("objects");
        for o in &t.objects {
            w.start_object();
            w.set_u64("group", u64::from(o.group));
            w.set_u64("variation", u64::from(o.variation));
            w.set_u64("qualifier", u64::from(o.qualifier));
            w.set_u64("prefix_code", u64::from(o.prefix_code));
            w.set_u64("range_code", u64::from(o.range_code));
            w.set_u64("start", u64::from(o.start));
            w.set_u64("stop", u64::from(o.stop));
            w.set_u64("count", u64::from(o.count));
            if !o.points.is_empty() {
                w.open_array("points");
                objects::write_points(w, o);
                w.close();
            }
            w.close();
        }
        w.close();
    }
    w.set_bool("complete", t.complete);
    w.close();
    if !t.is_request {
        w.open_object("iin");
        if t.iin != 0 {
            w.open_array("indicators");
            for (name, bit) in INDICATORS {
                if t.iin & bit != 0 {
                    w.str(name);
                }
            }
            w.close();
        }
        w.close();
    }
}
