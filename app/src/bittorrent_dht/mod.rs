//! BitTorrent DHT (BEP 5) over UDP, as Suricata 7.0.10's `rust/src/bittorrent_dht` has it.
//!
//! * Detection: the pattern `d1:ad2:id20:` at the start of a datagram, either direction, any
//!   port (Suricata registers no port and no probe).
//! * Each datagram starting `d1:ad`, `d1:rd`, `d2:ip` or `d1:el` is one transaction: the
//!   bencoded message is decoded as Suricata's `bendy` decoder does it (strict bencode:
//!   canonical integers, byte-string keys in increasing order, at most 3 levels of nesting)
//!   into a query (`q` with its arguments), a response (`r`: id, nodes, nodes6, values, token)
//!   or an error (`e`: number and message), with the transaction id and client version. A
//!   message that does not decode raises `malformed_packet`; one without a query, response or
//!   error is never logged (Suricata's transaction never completes).
//! * EVE `bittorrent_dht` records (`rust/src/bittorrent_dht/logger.rs`). Suricata 7 has no
//!   rule keywords for it; `alert bittorrent-dht` and the event work.

use std::any::Any;

use shrike_output::JsonWriter;

use crate::anomaly::AppAnomaly;
use crate::common::txlist::{log_all, TxList};
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Suricata's event names.
pub const EVENT_NAMES: &[&str] = &["malformed_packet"];
const EV_MALFORMED: u8 = 0;

/// Transactions kept per flow.
const MAX_TXS: usize = 256;

/// BitTorrent DHT in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "bittorrent-dht",
    aliases: &[],
    ip_protos: &[17],
    ports: &[],
    tcp: Detect::None,
    udp: Detect::Pattern(probe),
    new_parser,
    buffers: &[],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(DhtState::default())
}

/// The detection pattern (`BITTORRENT_DHT_PAYLOAD_PREFIX`).
const PREFIX: &[u8] = b"d1:ad2:id20:";

fn probe(_dir: Dir, d: &[u8]) -> Probe {
    if d.starts_with(PREFIX) {
        Probe::Yes
    } else if PREFIX.starts_with(d) {
        Probe::NeedMore
    } else {
        Probe::No
    }
}

/// A query's arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// Querying node id.
    pub id: Vec<u8>,
    /// `find_node` target.
    pub target: Option<Vec<u8>>,
    /// `get_peers` / `announce_peer` info hash.
    pub info_hash: Option<Vec<u8>>,
    /// `announce_peer` token.
    pub token: Option<Vec<u8>>,
    /// `announce_peer` implied port flag.
    pub implied_port: Option<u8>,
    /// `announce_peer` port.
    pub port: Option<u16>,
}

/// A node of `nodes` / `nodes6`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Node id (20 bytes).
    pub id: Vec<u8>,
    /// Address (4 or 16 bytes).
    pub ip: Vec<u8>,
    /// Port.
    pub port: u16,
}

/// A peer of `values`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Address (4 or 16 bytes).
    pub ip: Vec<u8>,
    /// Port.
    pub port: u16,
}

/// A response's values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Responding node id.
    pub id: Vec<u8>,
    /// IPv4 nodes (left out when none).
    pub nodes: Option<Vec<Node>>,
    /// IPv6 nodes.
    pub nodes6: Option<Vec<Node>>,
    /// Peers.
    pub values: Option<Vec<Peer>>,
    /// Token.
    pub token: Option<Vec<u8>>,
}

/// An error message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DhtError {
    /// Error code.
    pub num: u16,
    /// Message.
    pub msg: String,
}

/// One message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DhtTx {
    /// `q`: the query type.
    pub request_type: Option<String>,
    /// Query arguments.
    pub request: Option<Request>,
    /// Response.
    pub response: Option<Response>,
    /// Error.
    pub error: Option<DhtError>,
    /// `t`.
    pub transaction_id: Vec<u8>,
    /// `v`.
    pub client_version: Option<Vec<u8>>,
}

impl DhtTx {
    /// Suricata's progress: complete once it holds a query, a response or an error.
    fn complete(&self) -> bool {
        self.request.is_some() || self.response.is_some() || self.error.is_some()
    }
}

/// Per-flow state.
#[derive(Debug)]
pub struct DhtState {
    txs: TxList<DhtTx>,
}

impl Default for DhtState {
    fn default() -> Self {
        DhtState {
            txs: TxList::new(MAX_TXS),
        }
    }
}

impl DhtState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&DhtTx> {
        self.txs.get(id).map(|t| &t.data)
    }
}

/// A bencode value, decoded lazily as Suricata's `bendy` objects are.
#[derive(Clone, Copy, Debug)]
enum Obj<'a> {
    Int(&'a [u8]),
    Bytes(&'a [u8]),
    /// The encoded list or dictionary (from its `l`/`d` to its `e`, inclusive).
    List(&'a [u8]),
    Dict(&'a [u8]),
}

/// Why decoding failed (any failure is `malformed_packet`).
#[derive(Debug, PartialEq, Eq)]
struct Bad;

/// Most nesting levels (`Decoder::with_max_depth(3)`).
const MAX_DEPTH: usize = 3;

/// Decode one value at the start of `d` at nesting level `depth` (the value itself counts
/// when it is a list or dictionary): the value and the bytes after it.
fn next_obj(d: &[u8], depth: usize) -> Result<(Obj<'_>, &[u8]), Bad> {
    match d.first().ok_or(Bad)? {
        b'i' => {
            let end = d.iter().position(|&c| c == b'e').ok_or(Bad)?;
            let n = &d[1..end];
            let digits = n.strip_prefix(b"-").unwrap_or(n);
            let canonical = !digits.is_empty()
                && digits.iter().all(u8::is_ascii_digit)
                && (digits == b"0" || digits[0] != b'0')
                && n != b"-0";
            if !canonical {
                return Err(Bad);
            }
            Ok((Obj::Int(n), &d[end + 1..]))
        }
        b'0'..=b'9' => {
            let colon = d.iter().position(|&c| c == b':').ok_or(Bad)?;
            let len = &d[..colon];
            if !len.iter().all(u8::is_ascii_digit) || (len.len() > 1 && len[0] == b'0') {
                return Err(Bad);
            }
            let n: usize = std::str::from_utf8(len)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or(Bad)?;
            let start = colon + 1;
            let bytes = d.get(start..start.checked_add(n).ok_or(Bad)?).ok_or(Bad)?;
            Ok((Obj::Bytes(bytes), &d[start + n..]))
        }
        c @ (b'l' | b'd') => {
            if depth >= MAX_DEPTH {
                return Err(Bad);
            }
            let dict = *c == b'd';
            let mut rest = &d[1..];
            let mut last_key: Option<&[u8]> = None;
            loop {
                if rest.first() == Some(&b'e') {
                    let used = d.len() - rest.len() + 1;
                    let enc = &d[..used];
                    let obj = if dict { Obj::Dict(enc) } else { Obj::List(enc) };
                    return Ok((obj, &rest[1..]));
                }
                if dict {
                    let (k, r) = next_obj(rest, depth + 1)?;
                    let Obj::Bytes(k) = k else {
                        return Err(Bad);
                    };
                    // Strict bencode: keys sorted and unique.
                    if last_key.is_some_and(|l| l >= k) {
                        return Err(Bad);
                    }
                    last_key = Some(k);
                    rest = r;
                }
                let (_, r) = next_obj(rest, depth + 1)?;
                rest = r;
            }
        }
        _ => Err(Bad),
    }
}

/// The items of an encoded list, or the key/value pairs of an encoded dictionary (already
/// validated by [`next_obj`]).
fn items(enc: &[u8], depth: usize) -> Vec<Obj<'_>> {
    let mut out = Vec::new();
    let mut rest = enc.get(1..).unwrap_or_default();
    while rest.first().is_some_and(|&c| c != b'e') {
        match next_obj(rest, depth + 1) {
            Ok((o, r)) => {
                out.push(o);
                rest = r;
            }
            Err(_) => break,
        }
    }
    out
}

fn pairs(enc: &[u8], depth: usize) -> Vec<(&[u8], Obj<'_>)> {
    items(enc, depth)
        .chunks(2)
        .filter_map(|kv| match kv {
            [Obj::Bytes(k), v] => Some((*k, *v)),
            _ => None,
        })
        .collect()
}

fn bytes(o: Obj<'_>) -> Result<&[u8], Bad> {
    match o {
        Obj::Bytes(b) => Ok(b),
        _ => Err(Bad),
    }
}

fn string(o: Obj<'_>) -> Result<String, Bad> {
    String::from_utf8(bytes(o)?.to_vec()).map_err(|_| Bad)
}

fn int<T: std::str::FromStr>(o: Obj<'_>) -> Result<T, Bad> {
    match o {
        Obj::Int(n) => std::str::from_utf8(n)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or(Bad),
        _ => Err(Bad),
    }
}

fn dict(o: Obj<'_>) -> Result<&[u8], Bad> {
    match o {
        Obj::Dict(d) => Ok(d),
        _ => Err(Bad),
    }
}

fn request(o: Obj<'_>) -> Result<Request, Bad> {
    let mut r = Request::default();
    let mut id = None;
    for (k, v) in pairs(dict(o)?, 1) {
        match k {
            b"id" => id = Some(bytes(v)?.to_vec()),
            b"target" => r.target = Some(bytes(v)?.to_vec()),
            b"info_hash" => r.info_hash = Some(bytes(v)?.to_vec()),
            b"token" => r.token = Some(bytes(v)?.to_vec()),
            b"implied_port" => r.implied_port = Some(int(v)?),
            b"port" => r.port = Some(int(v)?),
            _ => {}
        }
    }
    r.id = id.ok_or(Bad)?;
    Ok(r)
}

fn nodes(b: &[u8], ip_len: usize) -> Option<Vec<Node>> {
    let n: Vec<Node> = b
        .chunks_exact(20 + ip_len + 2)
        .map(|c| Node {
            id: c[..20].to_vec(),
            ip: c[20..20 + ip_len].to_vec(),
            port: u16::from_be_bytes([c[20 + ip_len], c[21 + ip_len]]),
        })
        .collect();
    (!n.is_empty()).then_some(n)
}

fn response(o: Obj<'_>) -> Result<Response, Bad> {
    let mut r = Response::default();
    let mut id = None;
    let mut values = Vec::new();
    for (k, v) in pairs(dict(o)?, 1) {
        match k {
            b"id" => id = Some(bytes(v)?.to_vec()),
            b"nodes" => r.nodes = nodes(bytes(v)?, 4),
            b"nodes6" => r.nodes6 = nodes(bytes(v)?, 16),
            b"values" => {
                if let Obj::List(l) = v {
                    for e in items(l, 2) {
                        let e = bytes(e)?;
                        let ip_len = if e.len() < 18 { 4 } else { 16 };
                        let p = e.get(ip_len..ip_len + 2).ok_or(Bad)?;
                        values.push(Peer {
                            ip: e[..ip_len].to_vec(),
                            port: u16::from_be_bytes([p[0], p[1]]),
                        });
                    }
                }
            }
            b"token" => r.token = Some(bytes(v)?.to_vec()),
            _ => {}
        }
    }
    r.id = id.ok_or(Bad)?;
    r.values = (!values.is_empty()).then_some(values);
    Ok(r)
}

fn error(o: Obj<'_>) -> Result<DhtError, Bad> {
    let Obj::List(l) = o else {
        return Err(Bad);
    };
    let (mut num, mut msg) = (None, None);
    for e in items(l, 1) {
        match e {
            Obj::Int(_) => num = Some(int(e)?),
            Obj::Bytes(_) => msg = Some(string(e)?),
            _ => {}
        }
    }
    Ok(DhtError {
        num: num.ok_or(Bad)?,
        msg: msg.ok_or(Bad)?,
    })
}

/// Suricata's `parse_bittorrent_dht_packet`: fills `tx` as far as the message decodes.
fn parse_packet(d: &[u8], tx: &mut DhtTx) -> Result<(), Bad> {
    let (top, _) = next_obj(d, 0)?;
    let (mut ptype, mut qtype, mut args, mut resp, mut err, mut tid) =
        (None, None, None, None, None, None);
    for (k, v) in pairs(dict(top)?, 0) {
        match k {
            b"y" => ptype = Some(string(v)?),
            b"q" => qtype = Some(string(v)?),
            b"a" => args = Some(request(v)?),
            b"r" => resp = Some(response(v)?),
            b"e" => err = Some(error(v)?),
            b"t" => tid = Some(bytes(v)?.to_vec()),
            b"v" => tx.client_version = Some(bytes(v)?.to_vec()),
            _ => {}
        }
    }
    match ptype.as_deref().ok_or(Bad)? {
        "q" => {
            tx.request_type = Some(qtype.ok_or(Bad)?);
            tx.request = Some(args.ok_or(Bad)?);
        }
        "r" => tx.response = Some(resp.ok_or(Bad)?),
        "e" => tx.error = Some(err.ok_or(Bad)?),
        _ => return Err(Bad),
    }
    tx.transaction_id = tid.ok_or(Bad)?;
    Ok(())
}

/// Whether a datagram is DHT for the parser (Suricata's `is_dht`).
fn is_dht(d: &[u8]) -> bool {
    d.len() > 5 && matches!(&d[..5], b"d1:ad" | b"d1:rd" | b"d2:ip" | b"d1:el")
}

/// Suricata's `print_ip_addr`.
fn ip_string(a: &[u8]) -> String {
    match a.len() {
        4 => format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]),
        16 => a
            .chunks(2)
            .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
            .collect::<Vec<_>>()
            .join(":"),
        _ => String::new(),
    }
}

/// The `bittorrent_dht` object's members (Suricata's `log_bittorrent_dht`).
fn write_dht(t: &DhtTx, w: &mut JsonWriter) {
    w.set_hex("transaction_id", &t.transaction_id);
    if let Some(v) = &t.client_version {
        w.set_hex("client_version", v);
    }
    if let Some(q) = &t.request_type {
        w.set_str("request_type", q);
    }
    if let Some(e) = &t.error {
        w.open_object("error");
        w.set_u64("num", u64::from(e.num));
        w.set_str("msg", &e.msg);
        w.close();
    }
    if let Some(r) = &t.request {
        w.open_object("request");
        w.set_hex("id", &r.id);
        for (k, v) in [
            ("target", &r.target),
            ("info_hash", &r.info_hash),
            ("token", &r.token),
        ] {
            if let Some(v) = v {
                w.set_hex(k, v);
            }
        }
        if let Some(p) = r.implied_port {
            w.set_u64("implied_port", u64::from(p));
        }
        if let Some(p) = r.port {
            w.set_u64("port", u64::from(p));
        }
        w.close();
    }
    if let Some(r) = &t.response {
        w.open_object("response");
        w.set_hex("id", &r.id);
        for (k, list) in [("nodes", &r.nodes), ("nodes6", &r.nodes6)] {
            if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
                w.open_array(k);
                for n in list {
                    w.start_object();
                    w.set_hex("id", &n.id);
                    w.set_str("ip", &ip_string(&n.ip));
                    w.set_u64("port", u64::from(n.port));
                    w.close();
                }
                w.close();
            }
        }
        if let Some(values) = &r.values {
            w.open_array("values");
            for p in values {
                w.start_object();
                w.set_str("ip", &ip_string(&p.ip));
                w.set_u64("port", u64::from(p.port));
                w.close();
            }
            w.close();
        }
        if let Some(t) = &r.token {
            w.set_hex("token", t);
        }
        w.close();
    }
}

impl AppParser for DhtState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if !is_dht(data) {
            return false;
        }
        let mut tx = DhtTx::default();
        let bad = parse_packet(data, &mut tx).is_err();
        let events: u32 = if bad { 1 << EV_MALFORMED } else { 0 };
        self.txs.push(dir, events, tx);
        bad
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.txs.count()
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.txs.count()
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        self.txs.live(dir, out);
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // The eve-log type is `bittorrent-dht`, the records' event type `bittorrent_dht`.
        let wanted = c.out.wants_type("bittorrent-dht");
        log_all(&mut self.txs, c, "bittorrent_dht", |t, w| {
            if !wanted || !t.data.complete() {
                return false;
            }
            w.open_object("bittorrent_dht");
            write_dht(&t.data, w);
            w.close();
            true
        });
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        w.open_object("bittorrent_dht");
        write_dht(t, w);
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

#[cfg(test)]
mod tests;
