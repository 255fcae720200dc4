//! SNMP v1, v2c and v3 over UDP (ports 161 and 162), as Suricata 7's SNMP parser
//! (`rust/src/snmp`) has it, decoding with the Rusticata `snmp-parser` crate Suricata uses.
//!
//! * Detection: a probing parser on ports 161/162 (either side): a BER sequence of three
//!   elements whose first is 0 or 1 (v1, v2c), or of four whose first is 3 (v3).
//! * Each datagram is one transaction of its direction. The flow's version is taken from the
//!   first message; a message of another version raises `version_mismatch`, a v3 message with
//!   a security model other than USM `unknown_security_model`, and one that does not decode
//!   `malformed_data` (on the flow's last transaction, as Suricata; the parser error is counted).
//! * EVE `snmp` record per transaction (`version`, `pdu_type`, `error`, `trap_type`,
//!   `trap_oid`, `trap_address`, `vars`, `community`, `usm`; `pdu_type: encrypted` for an
//!   encrypted v3 PDU), the same object in alerts.
//! * Rules: `alert snmp`, sticky buffers `snmp.community` and `snmp.usm`,
//!   `app-layer-event:snmp.<event>`; `snmp.version` and `snmp.pdu_type` through
//!   [`SnmpState::tx`] (integer keywords).

use std::any::Any;

use der_parser::ber::BerObjectContent;
use shrike_output::JsonWriter;
use snmp_parser::{
    parse_snmp_generic_message, NetworkAddress, ScopedPduData, SecurityParameters,
    SnmpGenericMessage, SnmpPdu,
};

use crate::anomaly::AppAnomaly;
use crate::common::kw::{PredKw, UintKw};
use crate::common::txlist::{log_all, Tx, TxList};
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Most live transactions per flow (they are freed once logged).
const MAX_TXS: usize = 256;

const BUF_COMMUNITY: u16 = 0;
const BUF_USM: u16 = 1;

/// SNMP events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &[
    "malformed_data",
    "unknown_security_model",
    "version_mismatch",
];
const EV_UNKNOWN_SECURITY_MODEL: u32 = 1 << 1;
const EV_VERSION_MISMATCH: u32 = 1 << 2;

/// SNMP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "snmp",
    aliases: &[],
    ip_protos: &[17],
    ports: &[161, 162],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "snmp.community",
            dir: None,
        },
        BufferDesc {
            name: "snmp.usm",
            dir: None,
        },
    ],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "snmp.version",
            dir: None,
            setup: version_setup,
        },
        KeywordDesc {
            name: "snmp.pdu_type",
            dir: None,
            setup: pdu_type_setup,
        },
    ],
    generic_stats: true,
};

fn snmp_tx(p: &dyn AppParser, tx: u64) -> Option<&SnmpTx> {
    Some(&p.as_any().downcast_ref::<SnmpState>()?.tx(tx)?.data)
}

/// `snmp.version`: Suricata's u32 syntax on the transaction's version.
fn version_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    UintKw::setup(v, u64::from(u32::MAX), "snmp.version", |p, tx| {
        snmp_tx(p, tx).map(|t| u64::from(t.version))
    })
}

/// `snmp.pdu_type:N`: a decimal number, equal to the PDU type (Suricata 7: no other
/// operators; an encrypted PDU has none).
fn pdu_type_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("snmp.pdu_type needs a value")?.trim();
    let n: u32 = v
        .parse()
        .ok()
        .filter(|_| v.bytes().all(|c| c.is_ascii_digit()))
        .ok_or_else(|| format!("invalid snmp.pdu_type value `{v}`"))?;
    Ok(Box::new(PredKw {
        arg: n,
        pred: |n, p, tx| snmp_tx(p, tx).is_some_and(|t| t.pdu_type.unwrap_or(u32::MAX) == *n),
    }))
}

/// The SNMP version (1, 2 or 3) an envelope announces, if it looks like SNMP.
fn envelope_version(data: &[u8]) -> Result<u32, bool> {
    match der_parser::der::parse_der_sequence(data) {
        Ok((_, obj)) => {
            if let BerObjectContent::Sequence(ref v) = obj.content {
                if v.len() == 3 {
                    match v[0].as_u32() {
                        Ok(0) => return Ok(1),
                        Ok(1) => return Ok(2),
                        _ => {}
                    }
                } else if v.len() == 4 && v[0].as_u32() == Ok(3) {
                    return Ok(3);
                }
            }
            Err(false)
        }
        Err(nom::Err::Incomplete(_)) => Err(true),
        Err(_) => Err(false),
    }
}

/// Suricata's SNMP probing parser.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    if data.len() < 4 {
        return Probe::No;
    }
    match envelope_version(data) {
        Ok(_) => Probe::Yes,
        Err(true) => Probe::NeedMore,
        Err(false) => Probe::No,
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(SnmpState::default())
}

/// A trap (v1) PDU's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    /// Generic trap type as Suricata writes it (`coldStart`).
    pub trap_type: String,
    /// Enterprise OID.
    pub oid: String,
    /// Agent address.
    pub address: String,
}

/// One SNMP message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SnmpTx {
    /// The flow's version (1, 2 or 3), as Suricata logs it.
    pub version: u32,
    /// PDU type (`None`: encrypted or not decoded).
    pub pdu_type: Option<u32>,
    /// Error status (0: none).
    pub err: u32,
    /// Trap fields (v1 trap).
    pub trap: Option<Trap>,
    /// Variable OIDs, dotted.
    pub vars: Vec<String>,
    /// Community (v1, v2c).
    pub community: Option<String>,
    /// USM user name (v3).
    pub usm: Option<String>,
    /// The v3 scoped PDU is encrypted.
    pub encrypted: bool,
}

/// Per-flow SNMP state.
#[derive(Debug)]
pub struct SnmpState {
    /// The flow's version from its first message (0: not known).
    pub version: u32,
    txs: TxList<SnmpTx>,
}

impl Default for SnmpState {
    fn default() -> Self {
        SnmpState {
            version: 0,
            txs: TxList::new(MAX_TXS),
        }
    }
}

fn pdu_type_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0 => "get_request",
        1 => "get_next_request",
        2 => "response",
        3 => "set_request",
        4 => "trap_v1",
        5 => "get_bulk_request",
        6 => "inform_request",
        7 => "trap_v2",
        8 => "report",
        _ => return None,
    })
}

fn error_name(e: u32) -> String {
    match e {
        0 => "NoError".into(),
        1 => "TooBig".into(),
        2 => "NoSuchName".into(),
        3 => "BadValue".into(),
        4 => "ReadOnly".into(),
        5 => "GenErr".into(),
        n => format!("ErrorStatus({n})"),
    }
}

fn pdu_info(pdu: &SnmpPdu<'_>, tx: &mut SnmpTx) {
    tx.pdu_type = Some(pdu.pdu_type().0);
    match pdu {
        SnmpPdu::Generic(g) => tx.err = g.err.0,
        SnmpPdu::Bulk(_) => {}
        SnmpPdu::TrapV1(t) => {
            let NetworkAddress::IPv4(ip) = t.agent_addr;
            tx.trap = Some(Trap {
                trap_type: format!("{:?}", t.generic_trap),
                oid: t.enterprise.to_id_string(),
                address: ip.to_string(),
            });
        }
    }
    tx.vars = pdu.vars_iter().map(|v| v.oid.to_id_string()).collect();
}

impl SnmpState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<SnmpTx>> {
        self.txs.get(id)
    }

    /// Parse one datagram; false when it does not decode.
    pub fn parse_msg(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.version == 0 {
            if let Ok(v) = envelope_version(data) {
                self.version = v;
            }
        }
        let mut tx = SnmpTx {
            version: self.version,
            ..SnmpTx::default()
        };
        let mut events = 0;
        match parse_snmp_generic_message(data) {
            Ok((_, SnmpGenericMessage::V1(m) | SnmpGenericMessage::V2(m))) => {
                if self.version != m.version + 1 {
                    events |= EV_VERSION_MISMATCH;
                }
                pdu_info(&m.pdu, &mut tx);
                tx.community = Some(m.community);
            }
            Ok((_, SnmpGenericMessage::V3(m))) => {
                if self.version != m.version {
                    events |= EV_VERSION_MISMATCH;
                }
                match &m.data {
                    ScopedPduData::Plaintext(p) => pdu_info(&p.data, &mut tx),
                    ScopedPduData::Encrypted(_) => tx.encrypted = true,
                }
                match m.security_params {
                    SecurityParameters::USM(usm) => tx.usm = Some(usm.msg_user_name),
                    SecurityParameters::Raw(_) => events |= EV_UNKNOWN_SECURITY_MODEL,
                }
            }
            Err(_) => {
                if let Some(t) = self.txs.last_mut() {
                    t.raise(0);
                }
                return false;
            }
        }
        self.txs.push(dir, events, tx);
        true
    }
}

/// The `snmp` object's members (Suricata's `snmp_log_response`).
pub fn write_snmp(t: &SnmpTx, w: &mut JsonWriter) {
    w.set_u64("version", u64::from(t.version));
    if t.encrypted {
        w.set_str("pdu_type", "encrypted");
        return;
    }
    if let Some(p) = t.pdu_type {
        match pdu_type_name(p) {
            Some(n) => w.set_str("pdu_type", n),
            None => w.set_str("pdu_type", &format!("Unknown(0x{p:x})")),
        };
        if t.err != 0 {
            w.set_str("error", &error_name(t.err));
        }
        if let Some(trap) = &t.trap {
            w.set_str("trap_type", &trap.trap_type);
            w.set_str("trap_oid", &trap.oid);
            w.set_str("trap_address", &trap.address);
        }
        if !t.vars.is_empty() {
            w.open_array("vars");
            for v in &t.vars {
                w.str(v);
            }
            w.close();
        }
    }
    if let Some(c) = &t.community {
        w.set_str("community", c);
    }
    if let Some(u) = &t.usm {
        w.set_str("usm", u);
    }
}

impl AppParser for SnmpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        !self.parse_msg(dir, data)
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

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        let v = match buf {
            BUF_COMMUNITY => t.data.community.as_deref(),
            BUF_USM => t.data.usm.as_deref(),
            _ => None,
        };
        v.is_some_and(|v| f(v.as_bytes()))
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        log_all(&mut self.txs, c, "snmp", |t, w| {
            w.open_object("snmp");
            write_snmp(&t.data, w);
            w.close();
            true
        });
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.txs.get(tx) else {
            return false;
        };
        w.open_object("snmp");
        write_snmp(&t.data, w);
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
mod tests {
    use super::*;

    /// An SNMPv1 get-request for 1.3.6.1.2.1.1.5.0 with community `public`.
    const V1_GET: &[u8] = &[
        0x30, 0x26, 0x02, 0x01, 0x00, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0, 0x19,
        0x02, 0x01, 0x01, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30, 0x0c, 0x06, 0x08,
        0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x05, 0x00, 0x05, 0x00,
    ];

    #[test]
    fn v1_get_request_is_parsed_and_logged() {
        assert_eq!(probe(Dir::ToServer, V1_GET), Probe::Yes);
        let mut s = SnmpState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, V1_GET));
        let t = s.tx(0).unwrap();
        assert_eq!(t.data.version, 1);
        assert_eq!(t.data.pdu_type, Some(0));
        assert_eq!(t.data.vars, ["1.3.6.1.2.1.1.5.0"]);
        assert_eq!(t.data.community.as_deref(), Some("public"));
        assert_eq!(t.events, 0);
        let mut w = JsonWriter::new();
        w.start_object();
        write_snmp(&t.data, &mut w);
        w.close();
        assert_eq!(
            std::str::from_utf8(w.as_bytes()).unwrap(),
            r#"{"version":1,"pdu_type":"get_request","vars":["1.3.6.1.2.1.1.5.0"],"community":"public"}"#
        );
        let mut got = false;
        assert!(s.buffer(0, BUF_COMMUNITY, Dir::ToServer, &mut |b| {
            got = b == b"public";
            got
        }));
        assert!(got);
    }

    #[test]
    fn malformed_and_version_mismatch() {
        let mut s = SnmpState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, V1_GET));
        // The same message claiming v2c: a version mismatch on the v1 flow.
        let mut v2 = V1_GET.to_vec();
        v2[4] = 1;
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &v2));
        assert!(s.tx(1).unwrap().has(2));
        // Cut short: malformed, put on the last transaction.
        assert!(AppParser::parse(&mut s, Dir::ToServer, &V1_GET[..20]));
        assert!(s.tx(1).unwrap().has(0));
        assert_eq!(s.tx_count(), 2);
    }

    #[test]
    fn keywords_version_and_pdu_type() {
        let mut s = SnmpState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, V1_GET));
        let p: &dyn AppParser = &s;
        let m = |kw: crate::registry::KeywordSetup, v: &str| {
            kw(Some(v)).unwrap().matches(p, 0, Dir::ToServer)
        };
        assert_eq!(m(version_setup, "<3"), Some(true));
        assert_eq!(m(version_setup, "2"), Some(false));
        assert_eq!(m(pdu_type_setup, "0"), Some(true));
        assert_eq!(m(pdu_type_setup, "1"), Some(false));
        assert!(pdu_type_setup(Some(">1")).is_err());
        assert!(version_setup(Some("x")).is_err());
    }

    #[test]
    fn probe_rejects_non_snmp() {
        assert_eq!(probe(Dir::ToServer, b"\x30\x03"), Probe::No);
        assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.0\r\n"), Probe::No);
        let mut v = V1_GET.to_vec();
        v[4] = 2;
        assert_eq!(probe(Dir::ToServer, &v), Probe::No);
    }

    #[test]
    fn no_panic_on_any_prefix_or_flip() {
        let mut s = SnmpState::default();
        for n in 0..V1_GET.len() {
            let _ = probe(Dir::ToServer, &V1_GET[..n]);
            let _ = AppParser::parse(&mut s, Dir::ToServer, &V1_GET[..n]);
        }
        for i in 0..V1_GET.len() {
            let mut v = V1_GET.to_vec();
            v[i] ^= 0xff;
            let _ = AppParser::parse(&mut s, Dir::ToServer, &v);
        }
    }
}
