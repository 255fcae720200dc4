//! RDP, as Suricata 7.0.10's RDP parser (`rust/src/rdp`) has it.
//!
//! * Detection: a probing parser on port 3389 in both directions: the first byte is 3 (TPKT).
//! * Each PDU of the connection sequence is a transaction: X.224 connection request (to the
//!   server; cookie, negotiation request flags), X.224 connection confirm (to the client;
//!   negotiation response or failure), MCS Connect Initial (to the server; client core and
//!   network data), MCS Connect Response (to the client; parsing stops there). A PDU that is
//!   not a TPKT but starts with a TLS handshake record switches the flow to TLS records
//!   (both directions); the server's Certificate message is a transaction (`x509_serials`)
//!   and parsing stops there.
//! * EVE `rdp` record per transaction as Suricata's `log.rs` writes it, with its own `tx_id`
//!   (Suricata's 1-based transaction id) and `event_type` (`initial_request`,
//!   `initial_response`, `connect_request`, `connect_response`, `tls_handshake`).
//! * Rules: `alert rdp`; Suricata 7 has no RDP keywords and no RDP events.

pub mod parse;
pub mod windows;

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};
use x509_parser::prelude::{FromDer, X509Certificate};

use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;
use parse::{ClientCore, CsBlock, Negotiation, PErr, Pdu};

/// Most unlogged transactions kept per flow.
const MAX_TXS: usize = 64;
/// Most bytes buffered per direction while a PDU or TLS record is incomplete (a TPKT is at
/// most 65535 bytes, a TLS record at most 16 KiB plus overhead).
const MAX_BUF: usize = 70_000;

/// RDP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "rdp",
    aliases: &[],
    ip_protos: &[6],
    ports: &[3389],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[],
    events: &[],
    keywords: &[],
    generic_stats: true,
};

/// Suricata's probe, both directions: the first byte is the TPKT version 3.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    match data.first() {
        None => Probe::NeedMore,
        Some(3) => Probe::Yes,
        Some(_) => Probe::No,
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(RdpState::default())
}

/// What a transaction holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RdpItem {
    /// X.224 connection request.
    InitialRequest {
        /// The `mstshash` cookie.
        cookie: Option<String>,
        /// The negotiation request's flags.
        neg_flags: Option<u8>,
    },
    /// X.224 connection confirm.
    InitialResponse(Option<Negotiation>),
    /// MCS Connect Initial.
    ConnectRequest(Vec<CsBlock>),
    /// MCS Connect Response.
    ConnectResponse,
    /// The server's certificate chain: the serials (hex) of the ones that decode.
    TlsHandshake(Vec<String>),
}

/// One transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdpTx {
    /// Transaction id (0-based; the record's `tx_id` is this plus one, as Suricata's).
    pub id: u64,
    /// What it holds.
    pub item: RdpItem,
    /// The direction of the PDU.
    pub dir: Dir,
}

/// Per-flow RDP state.
#[derive(Debug, Default)]
pub struct RdpState {
    txs: VecDeque<RdpTx>,
    next_id: u64,
    bufs: [Vec<u8>; 2],
    /// Parsing TLS records instead of TPKTs (both directions).
    tls: bool,
    /// Parsing is over (MCS Connect Response or the certificate seen).
    bypass: bool,
    /// Per direction: the parser gave up (Suricata's error result; its `parse_ts` and
    /// `parse_tc` fail independently, the app layer then stops the flow).
    failed: [bool; 2],
    /// The direction waits for bytes that cannot come (a field cut short inside a PDU).
    stalled: [bool; 2],
}

fn di(dir: Dir) -> usize {
    usize::from(dir == Dir::ToClient)
}

impl RdpState {
    /// Transaction `id`, while kept.
    pub fn tx(&self, id: u64) -> Option<&RdpTx> {
        self.txs.iter().find(|t| t.id == id)
    }

    /// Live transactions.
    pub fn live_tx_count(&self) -> usize {
        self.txs.len()
    }

    /// Bytes held: the per-direction buffers and the live transactions (channel names,
    /// cookies, serials).
    pub fn memuse(&self) -> usize {
        let strings = |v: &Vec<String>| {
            v.capacity() * std::mem::size_of::<String>()
                + v.iter().map(String::capacity).sum::<usize>()
        };
        let item = |i: &RdpItem| match i {
            RdpItem::InitialRequest { cookie, .. } => cookie.as_ref().map_or(0, String::capacity),
            RdpItem::ConnectRequest(blocks) => {
                blocks.capacity() * std::mem::size_of::<CsBlock>()
                    + blocks
                        .iter()
                        .map(|b| match b {
                            CsBlock::Core(c) => {
                                std::mem::size_of::<ClientCore>()
                                    + c.client_name.capacity()
                                    + c.ime_file_name.capacity()
                                    + c.client_dig_product_id.as_ref().map_or(0, String::capacity)
                            }
                            CsBlock::Net(n) => strings(n),
                            CsBlock::Unknown => 0,
                        })
                        .sum::<usize>()
            }
            RdpItem::TlsHandshake(v) => strings(v),
            _ => 0,
        };
        self.bufs.iter().map(Vec::capacity).sum::<usize>()
            + self
                .txs
                .iter()
                .map(|t| std::mem::size_of::<RdpTx>() + item(&t.item))
                .sum::<usize>()
    }

    fn push(&mut self, dir: Dir, item: RdpItem) {
        if self.txs.len() >= MAX_TXS {
            self.txs.pop_front();
        }
        self.txs.push_back(RdpTx {
            id: self.next_id,
            item,
            dir,
        });
        self.next_id += 1;
    }

    /// Parse what `buf` holds; returns the bytes consumed and whether the parser failed.
    fn run(&mut self, dir: Dir, buf: &[u8]) -> (usize, bool) {
        let mut off = 0;
        while off < buf.len() && !self.bypass {
            let avail = &buf[off..];
            if self.tls {
                match tls_record(avail) {
                    Ok(None) => break,
                    Ok(Some((n, certs))) => {
                        off += n;
                        if dir == Dir::ToClient {
                            if let Some(chain) = certs {
                                let serials = chain
                                    .iter()
                                    .filter_map(|c| X509Certificate::from_der(c).ok())
                                    .map(|(_, c)| c.tbs_certificate.serial.to_str_radix(16))
                                    .collect();
                                self.push(dir, RdpItem::TlsHandshake(serials));
                                self.bypass = true;
                            }
                        }
                    }
                    Err(()) => return (off, true),
                }
                continue;
            }
            match parse::tpkt(avail) {
                Ok(None) => break,
                Ok(Some((n, pdu))) => {
                    off += n;
                    match (dir, pdu) {
                        (Dir::ToServer, Pdu::ConnectionRequest { cookie, neg_flags }) => {
                            self.push(dir, RdpItem::InitialRequest { cookie, neg_flags })
                        }
                        (Dir::ToServer, Pdu::McsConnectRequest(b)) => {
                            self.push(dir, RdpItem::ConnectRequest(b))
                        }
                        (Dir::ToClient, Pdu::ConnectionConfirm(n)) => {
                            self.push(dir, RdpItem::InitialResponse(n))
                        }
                        (Dir::ToClient, Pdu::McsConnectResponse) => {
                            self.push(dir, RdpItem::ConnectResponse);
                            self.bypass = true;
                        }
                        _ => {}
                    }
                }
                Err(PErr::Incomplete) => {
                    self.stalled[di(dir)] = true;
                    return (buf.len(), false);
                }
                Err(PErr::Error) => {
                    if avail[0] == 0x16 {
                        self.tls = true;
                    } else {
                        return (off, true);
                    }
                }
            }
        }
        (off, false)
    }
}

/// The certificates (DER) of a TLS handshake Certificate message.
type Chain = Vec<Vec<u8>>;

/// One TLS record (`Ok(None)`: incomplete); for a handshake record, the certificate chain of
/// the first Certificate message in it. An unknown record type or a handshake message that
/// does not fit its record is an error, as for Suricata's TLS record parser.
#[allow(clippy::type_complexity)]
fn tls_record(i: &[u8]) -> Result<Option<(usize, Option<Chain>)>, ()> {
    if i.len() < 5 {
        return Ok(None);
    }
    let typ = i[0];
    let len = usize::from(u16::from_be_bytes([i[3], i[4]]));
    if !(20..=24).contains(&typ) {
        return Err(());
    }
    if i.len() < 5 + len {
        return Ok(None);
    }
    let mut body = &i[5..5 + len];
    let mut chain = None;
    if typ == 22 {
        while !body.is_empty() {
            if body.len() < 4 {
                return Err(());
            }
            let mlen = u24(&body[1..4]);
            if body.len() < 4 + mlen {
                return Err(());
            }
            let msg = &body[4..4 + mlen];
            if body[0] == 11 && chain.is_none() {
                chain = Some(cert_chain(msg).ok_or(())?);
            }
            body = &body[4 + mlen..];
        }
    }
    Ok(Some((5 + len, chain)))
}

fn u24(b: &[u8]) -> usize {
    (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2])
}

fn cert_chain(msg: &[u8]) -> Option<Chain> {
    if msg.len() < 3 {
        return None;
    }
    let total = u24(&msg[..3]);
    let mut d = msg.get(3..3 + total)?;
    let mut out = Vec::new();
    while !d.is_empty() {
        if d.len() < 3 {
            return None;
        }
        let n = u24(&d[..3]);
        out.push(d.get(3..3 + n)?.to_vec());
        d = &d[3 + n..];
    }
    Some(out)
}

fn color_depth(c: &ClientCore) -> Option<u64> {
    if let Some(v @ (4 | 8 | 15 | 16 | 24)) = c.high_color_depth {
        return Some(u64::from(v));
    }
    match c.post_beta2_color_depth {
        Some(0xca00) => return Some(4),
        Some(0xca01) => return Some(8),
        Some(0xca02) => return Some(15),
        Some(0xca03) => return Some(16),
        Some(0xca04) => return Some(24),
        _ => {}
    }
    match c.color_depth {
        0xca00 => Some(4),
        0xca01 => Some(8),
        _ => None,
    }
}

fn version_name(v: u32) -> &'static str {
    match v {
        0x80001 => "v4",
        0x80004 => "v5",
        0x80005 => "v10.0",
        0x80006 => "v10.1",
        0x80007 => "v10.2",
        0x80008 => "v10.3",
        0x80009 => "v10.4",
        0x8000a => "v10.5",
        0x8000b => "v10.6",
        0x8000c => "v10.7",
        _ => "unknown",
    }
}

fn flag_names(w: &mut JsonWriter, key: &str, v: u64, names: &[(u64, &str)]) {
    if v == 0 {
        return;
    }
    w.open_array(key);
    for (bit, name) in names {
        if v & bit != 0 {
            w.str(name);
        }
    }
    w.close();
}

fn write_core(c: &ClientCore, w: &mut JsonWriter) {
    w.open_object("client");
    w.set_str("version", version_name(c.version));
    w.set_u64("desktop_width", u64::from(c.desktop_width));
    w.set_u64("desktop_height", u64::from(c.desktop_height));
    if let Some(d) = color_depth(c) {
        w.set_u64("color_depth", d);
    }
    w.set_str(
        "keyboard_layout",
        windows::lcid_name(c.keyboard_layout, "unknown"),
    );
    w.set_str("build", &windows::build_name(c.client_build, "unknown"));
    if !c.client_name.is_empty() {
        w.set_str("client_name", &c.client_name);
    }
    let kb = match c.keyboard_type {
        1 => Some("xt"),
        2 => Some("ico"),
        3 => Some("at"),
        4 => Some("enhanced"),
        5 => Some("1050"),
        6 => Some("9140"),
        7 => Some("jp"),
        _ => None,
    };
    if let Some(kb) = kb {
        w.set_str("keyboard_type", kb);
    }
    if c.keyboard_subtype != 0 {
        w.set_u64("keyboard_subtype", u64::from(c.keyboard_subtype));
    }
    if c.keyboard_function_key != 0 {
        w.set_u64("function_keys", u64::from(c.keyboard_function_key));
    }
    if !c.ime_file_name.is_empty() {
        w.set_str("ime", &c.ime_file_name);
    }
    if let Some(id) = c.client_product_id {
        w.set_u64("product_id", u64::from(id));
    }
    if let Some(s) = c.serial_number.filter(|s| *s != 0) {
        w.set_u64("serial_number", u64::from(s));
    }
    if let Some(f) = c.early_capability_flags {
        flag_names(
            w,
            "capabilities",
            u64::from(f),
            &[
                (0x1, "support_errinfo_pdf"),
                (0x2, "want_32bpp_session"),
                (0x4, "support_statusinfo_pdu"),
                (0x8, "strong_asymmetric_keys"),
                (0x20, "valid_connection_type"),
                (0x40, "support_monitor_layout_pdu"),
                (0x80, "support_netchar_autodetect"),
                (0x100, "support_dynvc_gfx_protocol"),
                (0x200, "support_dynamic_time_zone"),
                (0x400, "support_heartbeat_pdu"),
            ],
        );
    }
    if let Some(id) = c.client_dig_product_id.as_ref().filter(|s| !s.is_empty()) {
        w.set_str("id", id);
    }
    let hint = match c.connection_hint {
        Some(1) => Some("modem"),
        Some(2) => Some("low_broadband"),
        Some(3) => Some("satellite"),
        Some(4) => Some("high_broadband"),
        Some(5) => Some("wan"),
        Some(6) => Some("lan"),
        Some(7) => Some("autodetect"),
        _ => None,
    };
    if let Some(h) = hint {
        w.set_str("connection_hint", h);
    }
    if let Some(v) = c.desktop_physical_width {
        w.set_u64("physical_width", u64::from(v));
    }
    if let Some(v) = c.desktop_physical_height {
        w.set_u64("physical_height", u64::from(v));
    }
    if let Some(v) = c.desktop_orientation {
        w.set_u64("desktop_orientation", u64::from(v));
    }
    if let Some(v) = c.desktop_scale_factor {
        w.set_u64("scale_factor", u64::from(v));
    }
    if let Some(v) = c.device_scale_factor {
        w.set_u64("device_scale_factor", u64::from(v));
    }
    w.close();
}

/// The `rdp` object of transaction `t`, as Suricata's `rs_rdp_to_json`.
pub fn write_rdp(t: &RdpTx, w: &mut JsonWriter) {
    w.open_object("rdp");
    w.set_u64("tx_id", t.id + 1);
    match &t.item {
        RdpItem::InitialRequest { cookie, neg_flags } => {
            w.set_str("event_type", "initial_request");
            if let Some(c) = cookie {
                w.set_str("cookie", c);
            }
            if let Some(f) = neg_flags {
                flag_names(
                    w,
                    "flags",
                    u64::from(*f),
                    &[
                        (0x1, "restricted_admin_mode_required"),
                        (0x2, "redirected_authentication_mode_required"),
                        (0x8, "correlation_info_present"),
                    ],
                );
            }
        }
        RdpItem::InitialResponse(neg) => {
            w.set_str("event_type", "initial_response");
            match neg {
                Some(Negotiation::Response { flags, protocol }) => {
                    // the reserved flag 0x4 is not logged, but counts for "not empty"
                    if *flags != 0 {
                        w.open_array("server_supports");
                        for (bit, name) in [
                            (0x1, "extended_client_data"),
                            (0x2, "dynvc_gfx"),
                            (0x8, "restricted_admin"),
                            (0x10, "redirected_authentication"),
                        ] {
                            if flags & bit != 0 {
                                w.str(name);
                            }
                        }
                        w.close();
                    }
                    let p = match protocol {
                        1 => "ssl",
                        2 => "hybrid",
                        4 => "rds_tls",
                        8 => "hybrid_ex",
                        _ => "rdp",
                    };
                    w.set_str("protocol", p);
                }
                Some(Negotiation::Failure(code)) => {
                    w.set_u64("error_code", u64::from(*code));
                    let reason = match code {
                        1 => "ssl required by server",
                        2 => "ssl not allowed by server",
                        3 => "ssl cert not on server",
                        4 => "inconsistent flags",
                        5 => "hybrid required by server",
                        _ => "ssl with user auth required by server",
                    };
                    w.set_str("reason", reason);
                }
                None => {}
            }
        }
        RdpItem::ConnectRequest(blocks) => {
            w.set_str("event_type", "connect_request");
            for b in blocks {
                match b {
                    CsBlock::Core(c) => write_core(c, w),
                    CsBlock::Net(ch) if !ch.is_empty() => {
                        w.open_array("channels");
                        for c in ch {
                            w.str(c);
                        }
                        w.close();
                    }
                    _ => {}
                }
            }
        }
        RdpItem::ConnectResponse => {
            w.set_str("event_type", "connect_response");
        }
        RdpItem::TlsHandshake(serials) => {
            w.set_str("event_type", "tls_handshake");
            w.open_array("x509_serials");
            for s in serials {
                w.str(s);
            }
            w.close();
        }
    }
    w.close();
}

impl AppParser for RdpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        let d = di(dir);
        if self.bypass || self.failed[d] || self.stalled[d] || data.is_empty() {
            return false;
        }
        let mut buf = std::mem::take(&mut self.bufs[d]);
        buf.extend_from_slice(data);
        let (used, failed) = self.run(dir, &buf);
        if failed {
            self.failed[d] = true;
            return true;
        }
        buf.drain(..used.min(buf.len()));
        if self.bypass || self.stalled[d] {
            buf = Vec::new();
        } else if buf.len() > MAX_BUF {
            self.failed[d] = true;
            return true;
        }
        self.bufs[d] = buf;
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        // Suricata's RDP parser does not accept gaps: the direction's framing is lost.
        let d = di(dir);
        self.stalled[d] = true;
        self.bufs[d] = Vec::new();
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.next_id
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let mut id = *c.next;
        while id < self.next_id {
            if let Some(t) = self.tx(id) {
                // the packet's direction; at the flow's end, the PDU's (Suricata's
                // pseudo-packet of that direction)
                let to_server = c.pkt_dir.unwrap_or(t.dir) == Dir::ToServer;
                if c.write && c.out.wants_type("rdp") {
                    if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                        write_eve_header(&mut rec, &c.rec.header("rdp", to_server));
                        write_rdp(t, &mut rec);
                        rec.close();
                        let _ = rec.commit();
                    }
                }
                c.logged += 1;
            }
            id += 1;
        }
        *c.next = id;
        while self
            .txs
            .front()
            .is_some_and(|t| t.id < id && t.id < c.inspected)
        {
            self.txs.pop_front();
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        match self.tx(tx) {
            Some(t) => {
                write_rdp(t, w);
                true
            }
            None => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod hostile_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(s: &mut RdpState, dir: Dir, data: &[u8], step: usize) -> bool {
        let mut err = false;
        for c in data.chunks(step.max(1)) {
            err |= s.parse(dir, c);
        }
        err
    }

    const CR: &[u8] = b"\x03\x00\x00\x25\x20\xe0\x00\x00\x00\x00\x00Cookie: mstshash=user123\r\n";
    const CC: &[u8] =
        b"\x03\x00\x00\x13\x0e\xd0\x00\x00\x12\x34\x00\x02\x1f\x08\x00\x01\x00\x00\x00";

    #[test]
    fn probe_is_tpkt() {
        assert_eq!(probe(Dir::ToServer, b"\x03\x00"), Probe::Yes);
        assert_eq!(probe(Dir::ToClient, b"\x04\x00"), Probe::No);
        assert_eq!(probe(Dir::ToClient, b""), Probe::NeedMore);
    }

    #[test]
    fn request_and_confirm_at_every_split() {
        for step in 1..CR.len() + 1 {
            let mut s = RdpState::default();
            assert!(!feed(&mut s, Dir::ToServer, CR, step));
            assert!(!feed(&mut s, Dir::ToClient, CC, step));
            assert_eq!(s.tx_count(), 2, "step {step}");
            assert_eq!(
                s.tx(0).map(|t| &t.item),
                Some(&RdpItem::InitialRequest {
                    cookie: Some("user123".into()),
                    neg_flags: None
                })
            );
            let mut w = JsonWriter::new();
            w.start_object();
            write_rdp(s.tx(1).expect("tx"), &mut w);
            w.close();
            let out = String::from_utf8_lossy(w.as_bytes()).to_string();
            assert!(out.contains(r#""rdp":{"tx_id":2,"event_type":"initial_response","server_supports":["extended_client_data","dynvc_gfx","restricted_admin","redirected_authentication"],"protocol":"ssl"}"#), "{out}");
        }
    }

    #[test]
    fn mcs_response_ends_parsing_and_garbage_fails() {
        let mut s = RdpState::default();
        assert!(!s.parse(Dir::ToClient, b"\x03\x00\x00\x09\x02\xf0\x80\x7f\x66"));
        assert_eq!(s.tx(0).map(|t| &t.item), Some(&RdpItem::ConnectResponse));
        assert!(!s.parse(Dir::ToClient, b"garbage"));
        let mut s = RdpState::default();
        assert!(s.parse(Dir::ToServer, b"\x03\x00\x00\x01\x00"));
    }

    #[test]
    fn tls_switch_and_certificate() {
        let mut s = RdpState::default();
        // a handshake record with one Certificate message holding one undecodable cert
        let cert = b"\x30\x00";
        let mut msg = vec![11, 0, 0, 8, 0, 0, 5, 0, 0, 2];
        msg.extend_from_slice(cert);
        let mut rec = vec![0x16, 3, 3, 0, msg.len() as u8];
        rec.extend_from_slice(&msg);
        assert!(!feed(&mut s, Dir::ToClient, &rec, 3));
        assert_eq!(
            s.tx(0).map(|t| &t.item),
            Some(&RdpItem::TlsHandshake(vec![]))
        );
        assert!(s.bypass);
    }

    /// The MCS Connect Initial of the corpus's `zeek/rdp_rdp-unknown-keyboard.pcap`; the
    /// expected object is Suricata 7.0.10's record for it (its `tx_id` there is 3).
    #[test]
    fn connect_initial_matches_suricata() {
        let pdu = include_bytes!("testdata/mcs_connect_initial.bin");
        for step in [1, 7, pdu.len()] {
            let mut s = RdpState::default();
            assert!(!feed(&mut s, Dir::ToServer, pdu, step));
            assert_eq!(s.tx_count(), 1);
            let mut w = JsonWriter::new();
            w.start_object();
            write_rdp(s.tx(0).expect("tx"), &mut w);
            w.close();
            let out = String::from_utf8_lossy(w.as_bytes()).to_string();
            let want = concat!(
                r#"{"rdp":{"tx_id":1,"event_type":"connect_request","client":{"version":"v5","#,
                r#""desktop_width":1920,"desktop_height":1080,"color_depth":16,"#,
                r#""keyboard_layout":"unknown","build":"Windows 8.1","client_name":"JOHN-PC-LAPTOP","#,
                r#""keyboard_type":"enhanced","function_keys":12,"product_id":1,"#,
                r#""capabilities":["support_errinfo_pdf","support_statusinfo_pdu","#,
                r#""strong_asymmetric_keys","valid_connection_type","support_netchar_autodetect","#,
                r#""support_dynvc_gfx_protocol","support_dynamic_time_zone","support_heartbeat_pdu"],"#,
                r#""id":"3c571ed0-3415-474b-ae94-74e151b","connection_hint":"autodetect"},"#,
                r#""channels":["rdpdr","rdpsnd","cliprdr","drdynvc"]}}"#
            );
            assert_eq!(out, want);
        }
        // the same PDU cut short inside its TPKT ends the direction without a transaction
        let mut cut = pdu.to_vec();
        cut.truncate(200);
        let len = u16::try_from(cut.len()).expect("len").to_be_bytes();
        cut[2..4].copy_from_slice(&len);
        let mut s = RdpState::default();
        assert!(!s.parse(Dir::ToServer, &cut));
        assert_eq!(s.tx_count(), 0);
        assert!(s.stalled[0]);
    }

    #[test]
    fn no_panic_on_noise() {
        let mut seed = 0x1234_5678u32;
        for _ in 0..300 {
            let mut s = RdpState::default();
            let mut data = vec![3u8, 0, 0];
            for _ in 0..200 {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                data.push((seed >> 16) as u8);
            }
            s.parse(Dir::ToServer, &data);
            s.parse(Dir::ToClient, &data);
        }
    }
}
