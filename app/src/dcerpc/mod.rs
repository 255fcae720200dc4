//! DCERPC as its own protocol, over TCP (connection-oriented PDUs, version 5) and UDP
//! (connectionless PDUs, version 4), as Suricata 7.0.10's `rust/src/dcerpc` has it; DCERPC
//! carried in SMB named pipes is SMB's, with the PDU reading of [`pdu`].
//!
//! * Detection: `05 00` at the start of either direction of a TCP flow, any port, then
//!   Suricata's probe (version 5.0, data representation sane); `04 00` to the server over UDP
//!   with the connectionless probe. No default port (Suricata registers none).
//! * TCP ([`TcpState`]): one PDU per call of the parser, buffered until its fragment length
//!   is in (at most 1 MiB per direction, beyond which the flow is given up);
//!   BIND/ALTER_CONTEXT, BINDACK/ALTER_CONTEXT_RESP, REQUEST and RESPONSE PDUs make or complete
//!   transactions matched by call id; stub data is kept per transaction and direction; after
//!   a gap the direction resynchronises on the next `05 00` and the transactions before it
//!   are marked lost. Suricata's quirks are kept where they show in EVE or detection (each
//!   REQUEST fragment completes its transaction, so `frag_cnt` is 1).
//! * UDP ([`UdpState`]): REQUEST and RESPONSE fragments grouped by activity UUID and sequence
//!   number.
//! * EVE `dcerpc` records (`rust/src/dcerpc/log.rs`) and the `dcerpc` object in alerts.
//! * Rules: `alert dcerpc` (which also matches SMB flows, Suricata's `AppProtoEquals`),
//!   `dcerpc.iface` / `dce_iface`, `dcerpc.opnum` / `dce_opnum`, `dcerpc.stub_data` /
//!   `dce_stub_data` (with the stub's byte order for `byte_test`/`byte_jump` `dce`), on DCERPC
//!   and on SMB flows.

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};
use shrike_rules::parse::UintMatch;

use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;
use pdu::{parse_uuid, type_string, uuid_string};

pub mod pdu;

#[cfg(test)]
mod tests;

/// PDU types used here.
const REQUEST: u8 = 0;
const RESPONSE: u8 = 2;
const BIND: u8 = 11;
const BINDACK: u8 = 12;
const ALTER_CONTEXT: u8 = 14;
const ALTER_CONTEXT_RESP: u8 = 15;
/// Suricata's placeholder for "no matching type".
const UNKNOWN_TYPE: u8 = 99;

/// First-fragment flag of a connection-oriented PDU.
const PFC_FIRST_FRAG: u8 = 0x01;
/// Connectionless flags: the PDU is a fragment / the last one.
const PFCL1_LASTFRAG: u8 = 0x02;
const PFCL1_FRAG: u8 = 0x04;

/// Connection-oriented header length.
const HDR_LEN: usize = 16;
/// Connectionless header length.
const UDP_HDR_LEN: usize = 80;
/// Most bytes buffered per direction for one PDU (Suricata: the flow is given up beyond).
const MAX_BUFFER: usize = 1024 * 1024;
/// Transactions kept per flow before the oldest open one is closed: Suricata's default of
/// `app-layer.protocols.dcerpc.max-tx`.
const MAX_TX: usize = 1024;
/// Most stub data bytes kept per transaction and direction (shrike's bound; Suricata keeps a
/// UDP transaction's fragments without one). A TCP transaction holds one fragment (< 64 KiB).
pub const MAX_TX_STUB: usize = 1024 * 1024;
/// Most stub data bytes held by a flow's live transactions together (shrike's bound): what
/// Suricata's TCP parser can hold at most with the default `max-tx`, 1024 open transactions
/// of one 64 KiB fragment each. Beyond it stub bytes are counted and dropped.
pub const MAX_FLOW_STUB: usize = 64 * 1024 * 1024;

/// `app-layer.protocols.dcerpc` settings (one for TCP and UDP, as in Suricata).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DcerpcConfig {
    /// `max-tx`: live transactions per flow; beyond, creating one closes the oldest open one
    /// (marked done both ways, so logged with a `response` and no response fragments, as
    /// Suricata logs it). Suricata's default 1024.
    pub max_tx: usize,
}

impl Default for DcerpcConfig {
    fn default() -> Self {
        DcerpcConfig { max_tx: MAX_TX }
    }
}

/// What a flow's limits refused so far (Suricata has no DCERPC events; these make the limit
/// hits visible to tests and debugging).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DceLimits {
    /// Transactions closed early by `max-tx`.
    pub max_tx_closed: u64,
    /// Transactions dropped without being logged by the hard bound on held transactions
    /// (4 x `max-tx`, at least 1024; reached only when nothing frees them).
    pub txs_evicted: u64,
    /// Stub data bytes not kept ([`MAX_TX_STUB`], [`MAX_FLOW_STUB`]).
    pub stub_dropped: u64,
}

const BUF_STUB: u16 = 0;

/// DCERPC in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "dcerpc",
    aliases: &[],
    ip_protos: &[6, 17],
    ports: &[],
    tcp: Detect::Pattern(probe_tcp),
    udp: Detect::Pattern(probe_udp),
    new_parser,
    buffers: &[BufferDesc {
        name: "dcerpc.stub_data",
        dir: None,
    }],
    events: &[],
    keywords: &[
        KeywordDesc {
            name: "dcerpc.iface",
            dir: None,
            setup: setup_iface,
        },
        KeywordDesc {
            name: "dcerpc.opnum",
            dir: None,
            setup: setup_opnum,
        },
        KeywordDesc {
            name: "dce_iface",
            dir: None,
            setup: setup_iface,
        },
        KeywordDesc {
            name: "dce_opnum",
            dir: None,
            setup: setup_opnum,
        },
    ],
    generic_stats: true,
};

fn new_parser(cfg: &ParserConfig, tcp: bool) -> Box<dyn AppParser> {
    if tcp {
        Box::new(TcpState::new(cfg.dcerpc))
    } else {
        Box::new(UdpState::new(cfg.dcerpc))
    }
}

/// A connection-oriented PDU header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hdr {
    /// Major version (5).
    pub vers: u8,
    /// Minor version (0 or 1).
    pub vers_minor: u8,
    /// PDU type.
    pub ptype: u8,
    /// PFC flags.
    pub flags: u8,
    /// Data representation.
    pub drep: [u8; 4],
    /// Fragment length, header included.
    pub frag_len: u16,
    /// Call id.
    pub call_id: u32,
}

impl Hdr {
    /// Parse the 16-byte header at the start of `d`.
    pub fn parse(d: &[u8]) -> Option<Hdr> {
        let h = d.get(..HDR_LEN)?;
        let drep = [h[4], h[5], h[6], h[7]];
        let le = drep[0] & 0x10 != 0;
        Some(Hdr {
            vers: h[0],
            vers_minor: h[1],
            ptype: h[2],
            flags: h[3],
            drep,
            frag_len: rd16(le, h, 8)?,
            call_id: rd32(le, h, 12)?,
        })
    }

    fn le(&self) -> bool {
        self.drep[0] & 0x10 != 0
    }
}

fn rd16(le: bool, d: &[u8], o: usize) -> Option<u16> {
    let b: [u8; 2] = d.get(o..o + 2)?.try_into().ok()?;
    Some(if le {
        u16::from_le_bytes(b)
    } else {
        u16::from_be_bytes(b)
    })
}

fn rd32(le: bool, d: &[u8], o: usize) -> Option<u32> {
    let b: [u8; 4] = d.get(o..o + 4)?.try_into().ok()?;
    Some(if le {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    })
}

/// UUID wire bytes (time fields little-endian) in text order.
fn uuid_le(u: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&u[..16]);
    out[0..4].reverse();
    out[4..6].reverse();
    out[6..8].reverse();
    out
}

/// Suricata's TCP probe: a header of version 5.0 with a sane data representation.
fn probe_tcp(_dir: Dir, d: &[u8]) -> Probe {
    if d.len() < 2 || d[0] != 5 || d[1] != 0 {
        return Probe::No;
    }
    match Hdr::parse(d) {
        None => Probe::NeedMore,
        Some(h) if h.drep[0] & 0xee == 0 && h.drep[1] <= 3 => Probe::Yes,
        Some(_) => Probe::No,
    }
}

/// Suricata's UDP probe: `04 00` to the server, a whole connectionless header with version
/// 4, reserved flags clear and a sane data representation.
fn probe_udp(dir: Dir, d: &[u8]) -> Probe {
    if dir != Dir::ToServer || d.len() < 2 || d[0] != 4 || d[1] != 0 {
        return Probe::No;
    }
    match UdpHdr::parse(d) {
        Some(h) if h.flags2 & 0xfc == 0 && h.drep[0] & 0xee == 0 && h.drep[1] <= 3 => Probe::Yes,
        _ => Probe::No,
    }
}

/// An interface of a BIND, with what the BINDACK said of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UuidEntry {
    /// Presentation context id.
    pub ctxid: u16,
    /// Position in its BIND.
    pub internal_id: u16,
    /// BINDACK result (0: accepted).
    pub result: u16,
    /// UUID in text order.
    pub uuid: [u8; 16],
    /// Major version.
    pub version: u16,
    /// Minor version.
    pub version_minor: u16,
    /// The BIND carried the first-fragment flag.
    pub first_frag: bool,
}

/// One transaction: a request and its response, or a BIND and its BINDACK.
#[derive(Clone, Debug, Default)]
pub struct DceTx {
    /// Id, from 0 per flow.
    pub id: u64,
    /// Presentation context id of the REQUEST.
    pub ctxid: u16,
    /// Operation number of the REQUEST.
    pub opnum: u16,
    /// A REQUEST was parsed into it.
    pub first_request_seen: bool,
    /// Call id.
    pub call_id: u32,
    /// Fragments to the server.
    pub frag_cnt_ts: u16,
    /// Fragments to the client.
    pub frag_cnt_tc: u16,
    /// Little-endian data representation.
    pub le: bool,
    /// Request stub data.
    pub stub_ts: Vec<u8>,
    /// Response stub data.
    pub stub_tc: Vec<u8>,
    /// Request side complete.
    pub req_done: bool,
    /// Response side complete.
    pub resp_done: bool,
    /// The request was lost in a gap.
    pub req_lost: bool,
    /// The response was lost in a gap.
    pub resp_lost: bool,
    /// Request PDU type.
    pub req_cmd: u8,
    /// Response PDU type.
    pub resp_cmd: u8,
    /// UDP: activity UUID in text order.
    pub activity: [u8; 16],
    /// UDP: sequence number.
    pub seqnum: u32,
    logged: bool,
    /// Directions a packet went in after it was logged (bit 1 to server, 2 to client).
    seen: u8,
}

impl DceTx {
    fn new(id: u64, call_id: u32) -> DceTx {
        DceTx {
            id,
            call_id,
            req_cmd: REQUEST,
            resp_cmd: RESPONSE,
            ..DceTx::default()
        }
    }
}

/// What the TCP and UDP states share: the transaction list and its bookkeeping.
#[derive(Debug)]
struct Txs {
    list: VecDeque<DceTx>,
    next_id: u64,
    /// Where the search for the next transaction to close on overflow resumes.
    index_completed: usize,
    /// Transactions counted in `app_layer.tx` so far (Suricata counts them as created).
    counted: u64,
    /// `max-tx`.
    max_tx: usize,
    /// Stub bytes held by the live transactions.
    stub_bytes: usize,
    /// Most stub bytes held ([`MAX_FLOW_STUB`]; lowered by tests).
    stub_budget: usize,
    limits: DceLimits,
}

impl Default for Txs {
    fn default() -> Self {
        Txs::new(DcerpcConfig::default())
    }
}

impl Txs {
    fn new(cfg: DcerpcConfig) -> Txs {
        Txs {
            list: VecDeque::new(),
            next_id: 0,
            index_completed: 0,
            counted: 0,
            max_tx: cfg.max_tx,
            stub_bytes: 0,
            stub_budget: MAX_FLOW_STUB,
            limits: DceLimits::default(),
        }
    }

    /// Append stub data to transaction `i` within the per-transaction and per-flow bounds.
    fn append_stub(&mut self, i: usize, to_server: bool, d: &[u8]) {
        let flow_room = self.stub_budget.saturating_sub(self.stub_bytes);
        let Some(t) = self.list.get_mut(i) else {
            return;
        };
        let v = if to_server {
            &mut t.stub_ts
        } else {
            &mut t.stub_tc
        };
        let n = d
            .len()
            .min(MAX_TX_STUB.saturating_sub(v.len()))
            .min(flow_room);
        v.extend_from_slice(&d[..n]);
        self.stub_bytes += n;
        self.limits.stub_dropped += (d.len() - n) as u64;
    }

    /// Recount the stub bytes after transactions were freed.
    fn recount(&mut self) {
        self.stub_bytes = self
            .list
            .iter()
            .map(|t| t.stub_ts.len() + t.stub_tc.len())
            .sum();
        self.index_completed = 0;
    }

    /// Bytes held by the transactions (their structures and stub buffers).
    fn memuse(&self) -> usize {
        self.list.capacity() * std::mem::size_of::<DceTx>()
            + self
                .list
                .iter()
                .map(|t| t.stub_ts.capacity() + t.stub_tc.capacity())
                .sum::<usize>()
    }

    /// Transaction `id`: the list is in id order (created in order, freed in place), so a
    /// binary search (detection asks for each live transaction; a flood holds thousands).
    fn get(&self, id: u64) -> Option<&DceTx> {
        self.list
            .binary_search_by_key(&id, |t| t.id)
            .ok()
            .and_then(|i| self.list.get(i))
    }

    /// A new transaction (Suricata's `create_tx`): beyond [`MAX_TX`] live ones, the oldest
    /// open one is closed first.
    fn create(&mut self, call_id: u32, le: bool, req_done: bool, resp_done: bool) -> DceTx {
        let mut tx = DceTx::new(self.next_id, call_id);
        tx.le = le;
        tx.req_done = req_done;
        tx.resp_done = resp_done;
        self.next_id += 1;
        if self.list.len() > self.max_tx {
            let mut index = self.index_completed;
            for old in self
                .list
                .range_mut(self.index_completed.min(self.list.len())..)
            {
                index += 1;
                if !old.req_done || !old.resp_done {
                    old.req_done = true;
                    old.resp_done = true;
                    self.limits.max_tx_closed += 1;
                    break;
                }
            }
            self.index_completed = index;
        }
        // A hard bound on memory whatever frees the transactions (Suricata frees them once
        // inspected and logged; a one-way flood may never be).
        let hard = self.max_tx.saturating_mul(4).max(MAX_TX);
        if self.list.len() >= hard {
            while self.list.len() >= hard {
                self.list.pop_front();
                self.limits.txs_evicted += 1;
            }
            self.recount();
        }
        tx
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.list
            .iter()
            .filter(|t| match dir {
                Dir::ToServer => t.req_done,
                Dir::ToClient => t.resp_done,
            })
            .count() as u64
    }

    /// Log complete transactions and free those detection saw both ways. At the end of a
    /// TCP flow the others are logged too (Suricata's end-of-stream flags); a UDP flow has
    /// no such end, so its unanswered requests are never logged.
    fn log(&mut self, c: &mut LogCtx<'_>, body: &dyn Fn(&DceTx, &mut JsonWriter)) {
        let to_server = c.rec.info.to_server;
        let eof = c.closed && c.rec.ip_proto == 6;
        c.logged += self.next_id - self.counted;
        self.counted = self.next_id;
        for t in self.list.iter_mut() {
            if t.id < *c.next || t.logged || !(eof || (t.req_done && t.resp_done)) {
                continue;
            }
            if c.write && c.out.wants_type("dcerpc") {
                if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                    // Suricata's header for these records follows the flow (`LOG_DIR_FLOW`).
                    write_eve_header(&mut rec, &c.rec.header("dcerpc", true));
                    rec.open_object("dcerpc");
                    body(t, &mut rec);
                    rec.close();
                    rec.close();
                    let _ = rec.commit();
                }
            }
            t.logged = true;
        }
        let bit = if to_server { 1 } else { 2 };
        for t in self.list.iter_mut().filter(|t| t.logged) {
            t.seen |= bit;
        }
        let mut next = *c.next;
        while next < self.next_id && self.get(next).is_none_or(|t| t.logged) {
            next += 1;
        }
        *c.next = next;
        let before = self.list.len();
        self.list
            .retain(|t| !(t.logged && t.id < next && (t.seen == 3 || c.closed)));
        if self.list.len() != before {
            self.recount();
        }
    }
}

/// The interfaces of the flow's last BIND.
#[derive(Debug, Default)]
struct Bind {
    uuids: Vec<UuidEntry>,
}

/// Per-direction reassembly of the TCP parser.
#[derive(Debug, Default)]
struct DirBuf {
    buf: Vec<u8>,
    /// Resynchronise on the next `05 00` (after a gap).
    gap: bool,
    /// A gap was seen in this direction (transactions before it are lost).
    ssn_gap: bool,
    /// The last byte of data searched in vain after a gap (it may start the next record).
    carry: Option<u8>,
}

/// DCERPC over TCP, per flow (Suricata's `DCERPCState`).
#[derive(Debug, Default)]
pub struct TcpState {
    txs: Txs,
    /// The last header parsed.
    header: Option<Hdr>,
    bind: Option<Bind>,
    /// Interfaces the last BINDACK accepted.
    accepted: Option<Vec<UuidEntry>>,
    dirs: [DirBuf; 2],
    /// Header bytes of the PDU being buffered already parsed.
    bytes_consumed: usize,
    /// Bytes of the current fragment's stub left.
    padleft: u16,
    data_needed_to_client: bool,
    prev_to_client: bool,
    query_completed: bool,
    /// The parser gave up on the flow.
    dead: bool,
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

fn resp_type_for_req(t: u8) -> u8 {
    match t {
        REQUEST => RESPONSE,
        BIND => BINDACK,
        ALTER_CONTEXT => ALTER_CONTEXT_RESP,
        _ => UNKNOWN_TYPE,
    }
}

fn req_type_for_resp(t: u8) -> u8 {
    match t {
        RESPONSE => REQUEST,
        BINDACK => BIND,
        ALTER_CONTEXT_RESP => ALTER_CONTEXT,
        _ => UNKNOWN_TYPE,
    }
}

impl TcpState {
    /// A flow's state with `cfg`'s limits.
    pub fn new(cfg: DcerpcConfig) -> TcpState {
        TcpState {
            txs: Txs::new(cfg),
            ..TcpState::default()
        }
    }

    /// Transaction `id`, if live.
    pub fn tx(&self, id: u64) -> Option<&DceTx> {
        self.txs.get(id)
    }

    /// Live transactions.
    pub fn live_tx_count(&self) -> usize {
        self.txs.list.len()
    }

    /// What the limits refused so far.
    pub fn limits(&self) -> DceLimits {
        self.txs.limits
    }

    /// Bytes held: transactions, stub data, the PDU buffers and the last BIND's interfaces.
    pub fn memuse(&self) -> usize {
        self.txs.memuse()
            + self.dirs.iter().map(|d| d.buf.capacity()).sum::<usize>()
            + self
                .bind
                .as_ref()
                .map_or(0, |b| b.uuids.capacity() * std::mem::size_of::<UuidEntry>())
            + self
                .accepted
                .as_ref()
                .map_or(0, |a| a.capacity() * std::mem::size_of::<UuidEntry>())
    }

    fn hdr(&self) -> Hdr {
        self.header.unwrap_or_default()
    }

    fn create_tx(&mut self, call_id: u32) -> DceTx {
        let le = self.hdr().le();
        // A direction cut short by the stream depth finishes new transactions at once
        // (Suricata's `ts_ssn_trunc` / `tc_ssn_trunc`); shrike has no truncation signal yet.
        self.txs.create(call_id, le, false, false)
    }

    /// The open transaction of `call_id` the current PDU belongs to (Suricata's
    /// `get_tx_by_call_id`), by index.
    fn tx_by_call_id(&self, call_id: u32, dir: Dir) -> Option<usize> {
        let cmd = self.hdr().ptype;
        self.txs.list.iter().position(|t| {
            t.call_id == call_id
                && match dir {
                    Dir::ToServer => {
                        !(t.req_done || t.req_lost) && resp_type_for_req(cmd) == t.resp_cmd
                    }
                    Dir::ToClient => {
                        !(t.resp_done || t.resp_lost) && req_type_for_resp(cmd) == t.req_cmd
                    }
                }
        })
    }

    /// The open transaction of `call_id` for the current PDU, or a new one (by index).
    fn tx_for_pdu(&mut self, call_id: u32, dir: Dir) -> usize {
        match self.tx_by_call_id(call_id, dir) {
            Some(i) => i,
            None => {
                let tx = self.create_tx(call_id);
                self.txs.list.push_back(tx);
                self.txs.list.len() - 1
            }
        }
    }

    fn clean_buffer(&mut self, dir: Dir) {
        let b = &mut self.dirs[di(dir)];
        b.buf.clear();
        b.gap = false;
        self.bytes_consumed = 0;
    }

    fn keep(&mut self, buffer: Vec<u8>, dir: Dir) {
        self.dirs[di(dir)].buf = buffer;
        self.data_needed_to_client = dir == Dir::ToClient;
    }

    fn post_gap_housekeeping(&mut self, dir: Dir) {
        let next = self.txs.next_id;
        let to_client = dir == Dir::ToClient;
        if !self.dirs[di(dir)].ssn_gap {
            return;
        }
        for t in self.txs.list.iter_mut() {
            if t.id >= next {
                break;
            }
            if !t.req_done {
                t.req_lost = true;
            }
            t.req_done = true;
            if to_client {
                if !t.resp_done {
                    t.resp_lost = true;
                }
                t.resp_done = true;
            }
        }
    }

    /// BIND / ALTER_CONTEXT body: `None` when cut short (the flow is given up).
    fn process_bind(&mut self, body: &[u8]) -> Option<()> {
        let h = self.hdr();
        let le = h.le();
        let n = *body.get(8)?;
        if body.len() < 12 {
            return None;
        }
        self.bind = Some(Bind::default());
        let mut at = 12;
        for i in 0..n {
            // Suricata reads each context item as 44 bytes: one transfer syntax assumed.
            let item = body.get(at..at + 44)?;
            let entry = UuidEntry {
                ctxid: rd16(le, item, 0)?,
                internal_id: u16::from(i),
                result: 0,
                uuid: if le {
                    uuid_le(&item[4..20])
                } else {
                    item[4..20].try_into().ok()?
                },
                version: rd16(le, item, 20)?,
                version_minor: rd16(le, item, 22)?,
                first_frag: h.flags & PFC_FIRST_FRAG != 0,
            };
            if let Some(b) = self.bind.as_mut() {
                b.uuids.push(entry);
            }
            at += 44;
        }
        let mut tx = self.create_tx(h.call_id);
        tx.req_cmd = h.ptype;
        tx.req_done = true;
        tx.frag_cnt_ts = 1;
        self.txs.list.push_back(tx);
        Some(())
    }

    /// BINDACK / ALTER_CONTEXT_RESP body.
    fn process_bindack(&mut self, body: &[u8]) -> Option<()> {
        // Suricata reads these fields little-endian whatever the data representation.
        let le16 = |o: usize| rd16(true, body, o);
        let sec_len = le16(8)?;
        let mut at = 10 + usize::from(sec_len);
        let pad = (sec_len.wrapping_add(2)) % 4;
        if pad != 0 {
            at += usize::from(4 - pad);
        }
        let n = usize::from(*body.get(at)?);
        at += 4;
        let mut results = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let r = le16(at)?;
            body.get(at..at + 24)?;
            results.push(r);
            at += 24;
        }
        if let Some(bind) = self.bind.as_mut() {
            let mut accepted = Vec::new();
            for (i, r) in results.iter().enumerate() {
                for u in bind.uuids.iter_mut() {
                    if usize::from(u.internal_id) == i {
                        u.result = *r;
                        if u.result != 0 {
                            break;
                        }
                        accepted.push(u.clone());
                    }
                }
            }
            self.accepted = Some(accepted);
        }
        Some(())
    }

    /// Stub bytes of the current fragment from `input` (Suricata's `handle_common_stub`):
    /// returns the bytes taken, `None` when the fragment length is smaller than what was read.
    fn common_stub(&mut self, input: &[u8], consumed: usize, dir: Dir) -> Option<usize> {
        let h = self.hdr();
        let frag_len = usize::from(h.frag_len);
        if frag_len < consumed + HDR_LEN {
            return None;
        }
        self.padleft = u16::try_from(frag_len - HDR_LEN - consumed).unwrap_or(u16::MAX);
        let mut left = input.len().saturating_sub(consumed);
        let mut parsed = consumed as isize;
        while left > 0 && parsed < frag_len as isize {
            let at = usize::try_from(parsed).unwrap_or(0);
            let got = self.stub_data(input.get(at..).unwrap_or_default(), left, dir);
            if got > 0 && got <= left {
                parsed += got as isize;
                left -= got;
            } else {
                parsed -= left as isize;
                left = 0;
            }
        }
        Some(parsed.max(0) as usize)
    }

    fn stub_data(&mut self, input: &[u8], len: usize, dir: Dir) -> usize {
        let h = self.hdr();
        let padleft = self.padleft;
        let Some(i) = self.tx_by_call_id(h.call_id, dir) else {
            return 0;
        };
        let take = usize::from(padleft).min(len).min(input.len());
        if take == 0 || !matches!(h.ptype, REQUEST | RESPONSE) {
            return 0;
        }
        let to_server = h.ptype == REQUEST;
        self.txs.append_stub(i, to_server, &input[..take]);
        let tx = &mut self.txs.list[i];
        if to_server {
            tx.req_done = true;
            tx.frag_cnt_ts = 1;
        } else {
            tx.resp_done = true;
            tx.frag_cnt_tc = 1;
        }
        self.padleft -= take as u16;
        take
    }

    fn process_request(&mut self, body: &[u8]) -> Option<usize> {
        let h = self.hdr();
        let le = h.le();
        let ctxid = rd16(le, body, 4)?;
        let opnum = rd16(le, body, 6)?;
        let consumed = 8;
        let i = self.tx_for_pdu(h.call_id, Dir::ToServer);
        let tx = &mut self.txs.list[i];
        tx.req_cmd = h.ptype;
        tx.ctxid = ctxid;
        tx.opnum = opnum;
        tx.first_request_seen = true;
        self.common_stub(body, consumed, Dir::ToServer)
    }

    /// Suricata's `handle_input_data`: at most one PDU per call. Returns false when the flow
    /// is given up.
    fn input(&mut self, data: &[u8], dir: Dir) -> bool {
        let joined;
        let data = match self.dirs[di(dir)].carry.take() {
            Some(c) => {
                joined = [&[c][..], data].concat();
                &joined[..]
            }
            _ => data,
        };
        self.query_completed = false;
        let d = di(dir);
        let mut cur = data;
        if self.dirs[d].gap {
            match cur.windows(2).position(|w| w == [5, 0]) {
                Some(p) => {
                    cur = &cur[p..];
                    self.dirs[d].gap = false;
                }
                None => {
                    // Suricata consumes all but the last byte: it may start the next record.
                    self.dirs[d].carry = cur.last().copied();
                    return true;
                }
            }
        }
        let to_client = dir == Dir::ToClient;
        if self.prev_to_client == to_client {
            self.data_needed_to_client = to_client;
        }
        if self.dirs[d].buf.len() + data.len() > MAX_BUFFER {
            return false;
        }
        let mut buffer = std::mem::take(&mut self.dirs[d].buf);
        buffer.extend_from_slice(cur);
        if self.data_needed_to_client != to_client && !buffer.is_empty() {
            return false;
        }
        self.data_needed_to_client = to_client;
        if self.bytes_consumed < HDR_LEN && !data.is_empty() {
            match Hdr::parse(&buffer) {
                None => {
                    self.keep(buffer, dir);
                    return true;
                }
                Some(h) if h.vers != 5 || (h.vers_minor != 0 && h.vers_minor != 1) => {
                    self.keep(buffer, dir);
                    return true;
                }
                Some(h) => {
                    self.header = Some(h);
                    self.bytes_consumed += HDR_LEN;
                }
            }
        }
        let frag_len = usize::from(self.hdr().frag_len);
        if buffer.len() < frag_len {
            self.keep(buffer, dir);
            return true;
        }
        self.query_completed = true;
        let body = buffer.get(self.bytes_consumed..).unwrap_or_default();
        let h = self.hdr();
        let retval = match h.ptype {
            BIND | ALTER_CONTEXT => {
                if self.process_bind(body).is_none() {
                    return false;
                }
                0
            }
            BINDACK | ALTER_CONTEXT_RESP => {
                if self.process_bindack(body).is_none() {
                    return false;
                }
                let i = self.tx_for_pdu(h.call_id, Dir::ToClient);
                let tx = &mut self.txs.list[i];
                tx.resp_cmd = h.ptype;
                tx.resp_done = true;
                tx.frag_cnt_tc = 1;
                0
            }
            REQUEST => match self.process_request(body) {
                Some(n) => n,
                None => return false,
            },
            RESPONSE => {
                let i = self.tx_for_pdu(h.call_id, Dir::ToClient);
                self.txs.list[i].resp_cmd = h.ptype;
                match self.common_stub(body, 0, Dir::ToClient) {
                    Some(n) => n,
                    None => return false,
                }
            }
            _ => {
                self.clean_buffer(dir);
                return false;
            }
        };
        self.bytes_consumed += retval;
        if self.query_completed {
            self.clean_buffer(dir);
            self.data_needed_to_client = !to_client;
        }
        self.post_gap_housekeeping(dir);
        self.prev_to_client = to_client;
        true
    }

    /// `dcerpc.iface` on transaction `tx` (Suricata's `rs_dcerpc_iface_match`).
    fn iface_hit(&self, tx: u64, m: &IfaceArg) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        if !t.first_request_seen {
            return false;
        }
        if !matches!(self.header.map(|h| h.ptype), Some(REQUEST | RESPONSE)) {
            return false;
        }
        let Some(acc) = &self.accepted else {
            return false;
        };
        let mut ret = false;
        for u in acc {
            ret = true;
            if !m.any_frag && !u.first_frag {
                continue;
            }
            if u.result != 0 {
                continue;
            }
            ret = u.uuid == m.uuid && u.ctxid == t.ctxid;
            if !ret {
                continue;
            }
            if let Some(v) = &m.version {
                ret = v.matches(u64::from(u.version));
            }
            if ret {
                return true;
            }
        }
        ret
    }

    fn write(&self, t: &DceTx, w: &mut JsonWriter) {
        write_tcp(self.bind.as_ref(), self.header, t, w);
    }
}

/// A TCP transaction's `dcerpc` object: the interfaces are the flow's last BIND's, the RPC
/// version its last header's.
fn write_tcp(bind: Option<&Bind>, header: Option<Hdr>, t: &DceTx, w: &mut JsonWriter) {
    write_req_res(t, w, bind);
    if let Some(h) = header {
        w.set_u64("call_id", u64::from(t.call_id));
        w.set_str("rpc_version", &format!("{}.{}", h.vers, h.vers_minor));
    }
}

/// `request`/`req`/`interfaces`/`response`/`res` as Suricata's loggers write them.
fn write_req_res(t: &DceTx, w: &mut JsonWriter, bind: Option<&Bind>) {
    if t.req_done && !t.req_lost {
        w.set_str("request", &type_string(t.req_cmd));
        match t.req_cmd {
            REQUEST => {
                w.open_object("req");
                w.set_u64("opnum", u64::from(t.opnum));
                w.set_u64("frag_cnt", u64::from(t.frag_cnt_ts));
                w.set_u64("stub_data_size", t.stub_ts.len() as u64);
                w.close();
            }
            BIND => {
                if let Some(b) = bind {
                    w.open_array("interfaces");
                    for u in &b.uuids {
                        w.start_object();
                        w.set_str("uuid", &uuid_string(&u.uuid));
                        w.set_str("version", &format!("{}.{}", u.version, u.version_minor));
                        w.set_u64("ack_result", u64::from(u.result));
                        w.close();
                    }
                    w.close();
                }
            }
            _ => {}
        }
    } else {
        w.set_str("request", "REQUEST_LOST");
    }
    if t.resp_done && !t.resp_lost {
        w.set_str("response", &type_string(t.resp_cmd));
        if t.resp_cmd == RESPONSE {
            w.open_object("res");
            w.set_u64("frag_cnt", u64::from(t.frag_cnt_tc));
            w.set_u64("stub_data_size", t.stub_tc.len() as u64);
            w.close();
        }
    } else {
        w.set_str("response", "UNREPLIED");
    }
}

/// A connectionless PDU header.
#[derive(Clone, Copy, Debug, Default)]
struct UdpHdr {
    vers: u8,
    ptype: u8,
    flags1: u8,
    flags2: u8,
    drep: [u8; 3],
    activity: [u8; 16],
    seqnum: u32,
    frag_len: u16,
}

impl UdpHdr {
    fn parse(d: &[u8]) -> Option<UdpHdr> {
        let h = d.get(..UDP_HDR_LEN)?;
        let drep = [h[4], h[5], h[6]];
        // Suricata reads the integers big-endian only when the first byte is 0.
        let le = drep[0] != 0;
        Some(UdpHdr {
            vers: h[0],
            ptype: h[1],
            flags1: h[2],
            flags2: h[3],
            drep,
            activity: uuid_le(&h[40..56]),
            seqnum: rd32(le, h, 64)?,
            frag_len: rd16(le, h, 74)?,
        })
    }
}

/// DCERPC over UDP, per flow (Suricata's `DCERPCUDPState`).
#[derive(Debug, Default)]
pub struct UdpState {
    txs: Txs,
}

impl UdpState {
    /// A flow's state with `cfg`'s limits.
    pub fn new(cfg: DcerpcConfig) -> UdpState {
        UdpState { txs: Txs::new(cfg) }
    }

    /// Transaction `id`, if live.
    pub fn tx(&self, id: u64) -> Option<&DceTx> {
        self.txs.get(id)
    }

    /// Live transactions.
    pub fn live_tx_count(&self) -> usize {
        self.txs.list.len()
    }

    /// What the limits refused so far.
    pub fn limits(&self) -> DceLimits {
        self.txs.limits
    }

    /// Bytes held by the transactions and their stub data.
    pub fn memuse(&self) -> usize {
        self.txs.memuse()
    }

    /// One datagram; false when it is not a DCERPC PDU Suricata takes.
    fn input(&mut self, d: &[u8]) -> bool {
        let Some(h) = UdpHdr::parse(d) else {
            return false;
        };
        if h.vers != 4 {
            return false;
        }
        let Some(stub) = d.get(UDP_HDR_LEN..UDP_HDR_LEN + usize::from(h.frag_len)) else {
            return false;
        };
        if h.ptype != REQUEST && h.ptype != RESPONSE {
            return false;
        }
        let open = self.txs.list.iter().position(|t| {
            t.seqnum == h.seqnum
                && t.activity == h.activity
                && ((h.ptype == REQUEST && !t.req_done) || (h.ptype == RESPONSE && !t.resp_done))
        });
        let i = match open {
            Some(i) => i,
            None => {
                let mut tx = self.txs.create(0, h.drep[0] & 0x10 != 0, false, false);
                tx.activity = h.activity;
                tx.seqnum = h.seqnum;
                self.txs.list.push_back(tx);
                self.txs.list.len() - 1
            }
        };
        let done = h.flags1 & PFCL1_FRAG == 0 || h.flags1 & PFCL1_LASTFRAG != 0;
        self.txs.append_stub(i, h.ptype == REQUEST, stub);
        let tx = &mut self.txs.list[i];
        // Suricata's 16-bit fragment counts wrap (release build).
        if h.ptype == REQUEST {
            tx.frag_cnt_ts = tx.frag_cnt_ts.wrapping_add(1);
            tx.req_done |= done;
        } else {
            tx.frag_cnt_tc = tx.frag_cnt_tc.wrapping_add(1);
            tx.resp_done |= done;
        }
        true
    }

    fn write(t: &DceTx, w: &mut JsonWriter) {
        // The UDP logger writes no interfaces.
        write_req_res(t, w, None);
        w.set_str("activityuuid", &uuid_string(&t.activity));
        w.set_u64("seqnum", u64::from(t.seqnum));
        w.set_str("rpc_version", "4.0");
    }
}

macro_rules! dce_parser_common {
    () => {
        fn tx_count(&self) -> u64 {
            self.txs.next_id
        }

        fn complete_in(&self, dir: Dir) -> u64 {
            self.txs.complete_in(dir)
        }

        fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
            out.extend(self.txs.list.iter().map(|t| t.id));
        }

        fn buffer(&self, tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
            let Some(t) = self.txs.get(tx) else {
                return false;
            };
            let v = match dir {
                Dir::ToServer => &t.stub_ts,
                Dir::ToClient => &t.stub_tc,
            };
            buf == BUF_STUB && !v.is_empty() && f(v)
        }

        fn buffer_ready(&self, tx: u64, _buf: u16, dir: Dir, closed: bool) -> Option<bool> {
            let t = self.txs.get(tx)?;
            Some(
                closed
                    || match dir {
                        Dir::ToServer => t.req_done,
                        Dir::ToClient => t.resp_done,
                    },
            )
        }

        fn dce(&self) -> Option<&dyn DceView> {
            Some(self)
        }

        fn as_any(&self) -> &dyn Any {
            self
        }

        fn as_any_mut(&mut self) -> &mut dyn Any {
            self
        }
    };
}

impl AppParser for TcpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.dead || data.is_empty() {
            return false;
        }
        if !self.input(data, dir) {
            self.dead = true;
            return true;
        }
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        let b = &mut self.dirs[di(dir)];
        b.gap = true;
        b.ssn_gap = true;
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let (bind, header) = (&self.bind, self.header);
        self.txs
            .log(c, &|t, w| write_tcp(bind.as_ref(), header, t, w));
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        w.open_object("dcerpc");
        self.write(t, w);
        w.close();
        true
    }

    dce_parser_common!();
}

impl AppParser for UdpState {
    fn parse(&mut self, _dir: Dir, data: &[u8]) -> bool {
        !self.input(data)
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn log(&mut self, c: &mut LogCtx<'_>) {
        self.txs.log(c, &UdpState::write);
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        w.open_object("dcerpc");
        UdpState::write(t, w);
        w.close();
        true
    }

    dce_parser_common!();
}

/// What the DCERPC keywords read from a flow carrying DCERPC: DCERPC's own parsers, and SMB
/// for DCERPC over named pipes ([`AppParser::dce`]).
pub trait DceView {
    /// `dcerpc.iface` on transaction `tx` (`None`: no such transaction).
    fn iface_hit(&self, tx: u64, m: &IfaceArg) -> Option<bool>;
    /// The REQUEST opnum of transaction `tx`, if it has one.
    fn opnum(&self, tx: u64) -> Option<u16>;
}

impl DceView for TcpState {
    fn iface_hit(&self, tx: u64, m: &IfaceArg) -> Option<bool> {
        Some(TcpState::iface_hit(self, tx, m))
    }

    fn opnum(&self, tx: u64) -> Option<u16> {
        self.tx(tx)
            .filter(|t| t.first_request_seen)
            .map(|t| t.opnum)
    }
}

impl DceView for UdpState {
    /// Suricata reads a UDP flow's state as the TCP one here; nothing sound to match.
    fn iface_hit(&self, _tx: u64, _m: &IfaceArg) -> Option<bool> {
        Some(false)
    }

    /// Suricata's UDP transactions never mark a request seen.
    fn opnum(&self, tx: u64) -> Option<u16> {
        self.tx(tx)
            .filter(|t| t.first_request_seen)
            .map(|t| t.opnum)
    }
}

/// The stub data's byte order for `byte_test`/`byte_jump` with `dce` on transaction `tx`
/// (little-endian unless the data representation says big-endian; SMB's pipes carry none,
/// which Suricata reads as big-endian).
pub fn stub_little_endian(parser: &dyn AppParser, tx: u64) -> bool {
    if let Some(s) = parser.as_any().downcast_ref::<TcpState>() {
        return s.tx(tx).is_some_and(|t| t.le);
    }
    if let Some(s) = parser.as_any().downcast_ref::<UdpState>() {
        return s.tx(tx).is_some_and(|t| t.le);
    }
    false
}

/// `dcerpc.iface`: `uuid[,<version condition>][,any_frag]`.
#[derive(Debug)]
pub struct IfaceArg {
    /// UUID in text order.
    pub uuid: [u8; 16],
    /// Version condition (Suricata's unsigned-integer syntax).
    pub version: Option<UintMatch>,
    /// Interfaces of a BIND without the first-fragment flag count too.
    pub any_frag: bool,
}

pub(crate) fn setup_iface(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("needs a value")?.trim();
    let parts: Vec<&str> = v.split(',').collect();
    let uuid = parse_uuid(parts[0]).ok_or_else(|| format!("invalid uuid {:?}", parts[0]))?;
    let ver =
        |s: &str| UintMatch::parse(s, u64::from(u16::MAX), "dcerpc.iface").map_err(|e| e.detail);
    let (version, any_frag) = match parts.len() {
        1 => (None, false),
        2 if parts[1] == "any_frag" => (None, true),
        2 => (Some(ver(parts[1])?), false),
        3 if parts[2] == "any_frag" => (Some(ver(parts[1])?), true),
        _ => return Err(format!("invalid value {v:?}")),
    };
    Ok(Box::new(IfaceArg {
        uuid,
        version,
        any_frag,
    }))
}

impl TxMatch for IfaceArg {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        match parser.dce() {
            Some(v) => v.iface_hit(tx, self),
            None => Some(false),
        }
    }
}

/// `dcerpc.opnum`: numbers and `N-M` ranges, comma-separated.
#[derive(Debug)]
struct OpnumArg(Vec<(u32, u32)>);

pub(crate) fn setup_opnum(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("needs a value")?;
    let mut out = Vec::new();
    for p in v.split(',') {
        let num = |s: &str| s.parse::<u32>().map_err(|_| format!("invalid opnum {p:?}"));
        let r: Vec<&str> = p.split('-').collect();
        match r.len() {
            1 => {
                let a = num(r[0])?;
                out.push((a, a));
            }
            2 => {
                let (a, b) = (num(r[0])?, num(r[1])?);
                if b < a {
                    return Err(format!("invalid opnum range {p:?}"));
                }
                out.push((a, b));
            }
            _ => return Err(format!("invalid opnum {p:?}")),
        }
    }
    Ok(Box::new(OpnumArg(out)))
}

impl TxMatch for OpnumArg {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let Some(op) = parser.dce().and_then(|v| v.opnum(tx)).map(u32::from) else {
            return Some(false);
        };
        Some(self.0.iter().any(|&(a, b)| a <= op && op <= b))
    }
}
