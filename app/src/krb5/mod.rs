//! Kerberos 5 over UDP and TCP port 88, as Suricata 7's KRB5 parser (`rust/src/krb`),
//! decoding with the Rusticata `kerberos-parser` crate Suricata uses.
//!
//! * Detection: a probing parser on port 88: an application-class DER element (tag up to 30)
//!   holding a SEQUENCE whose first field is `pvno 5`; over TCP behind a record mark of at
//!   most 16384.
//! * Transactions: one per AS-REQ, AS-REP, TGS-REQ, TGS-REP and KRB-ERROR (AP-REQ/AP-REP only
//!   remember the request type for a following error), in the direction of the message. A
//!   reply or error carries the request type seen before it (`failed_request`).
//! * Over TCP the record marks are read as Suricata 7.0.10 reads them: after a record is
//!   parsed the next mark is read from the start of that same record (Suricata's offset bug),
//!   so in practice one message per direction is parsed; at most 100,000 bytes are buffered
//!   per direction.
//! * Events (Suricata's names): `malformed_data` (on the flow's last transaction),
//!   `weak_encryption` (a reply encrypted with an algorithm other than AES or Camellia).
//! * EVE `krb5` record per transaction (alerts carry no `krb5` object, as in Suricata 7).
//! * Rules: `alert krb5`, `krb5.cname` / `krb5.sname` (multi-buffers, to client),
//!   `app-layer-event:krb5.<event>`; the integer keywords read [`Krb5Tx`].

use std::any::Any;

use der_parser::ber::Class;
use der_parser::der::der_read_element_header;
use kerberos_parser::krb5::{EncryptionType, PrincipalName};
use kerberos_parser::krb5_parser;
use shrike_output::JsonWriter;

use crate::anomaly::AppAnomaly;
use crate::common::kw::PredKw;
use crate::common::txlist::{log_all, Tx, TxList};
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Most live transactions per flow (shrike's bound; Suricata frees them once logged).
pub const MAX_TXS: usize = 256;
/// Most bytes a TCP direction buffers (Suricata's limit).
pub const MAX_DEFRAG: usize = 100_000;

const BUF_CNAME: u16 = 0;
const BUF_SNAME: u16 = 1;

/// KRB5 events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &["malformed_data", "weak_encryption"];
const EV_MALFORMED: u8 = 0;
const EV_WEAK_ENCRYPTION: u8 = 1;

/// Kerberos 5 in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "krb5",
    aliases: &[],
    ip_protos: &[6, 17],
    ports: &[88],
    tcp: Detect::Port(probe_tcp),
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "krb5.cname",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "krb5.sname",
            dir: Some(Dir::ToClient),
        },
    ],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "krb5_msg_type",
            dir: None,
            setup: msg_type_setup,
        },
        KeywordDesc {
            name: "krb5_err_code",
            dir: None,
            setup: err_code_setup,
        },
        KeywordDesc {
            name: "krb5.ticket_encryption",
            dir: Some(Dir::ToClient),
            setup: ticket_encryption_setup,
        },
    ],
    generic_stats: true,
};

fn krb_tx(p: &dyn AppParser, tx: u64) -> Option<&Krb5Tx> {
    Some(&p.as_any().downcast_ref::<Krb5State>()?.tx(tx)?.data)
}

/// The value of `krb5_msg_type` / `krb5_err_code`: one token (Suricata's regex), optionally
/// quoted.
fn single_token(v: Option<&str>, kw: &str) -> Result<String, String> {
    let v = v.ok_or_else(|| format!("{kw} needs a value"))?.trim();
    let t = v
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(v);
    if t.is_empty()
        || !t
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_'))
    {
        return Err(format!("invalid {kw} value `{v}`"));
    }
    Ok(t.to_string())
}

/// `krb5_msg_type:N`: a decimal u8, equal to the message type (Suricata 7 takes no names).
fn msg_type_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let t = single_token(v, "krb5_msg_type")?;
    let n: u8 = t
        .parse()
        .map_err(|_| format!("invalid krb5_msg_type value `{t}`"))?;
    Ok(Box::new(PredKw {
        arg: u32::from(n),
        pred: |n, p, tx| krb_tx(p, tx).is_some_and(|t| t.msg_type == *n),
    }))
}

/// `krb5_err_code:N`: a decimal i32, equal to a KRB-ERROR's code.
fn err_code_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let t = single_token(v, "krb5_err_code")?;
    let n: i32 = t
        .parse()
        .map_err(|_| format!("invalid krb5_err_code value `{t}`"))?;
    Ok(Box::new(PredKw {
        arg: n,
        pred: |n, p, tx| krb_tx(p, tx).is_some_and(|t| t.error_code == Some(*n)),
    }))
}

/// `krb5.ticket_encryption`: the ticket's encryption type.
#[derive(Debug)]
enum TicketEnc {
    /// `weak` / `!weak`.
    Weak(bool),
    /// A list of types (names as Suricata spells them, or numbers).
    List(Vec<i32>),
}

/// An encryption type name (`aes256-cts-hmac-sha1-96`, `rc4-hmac`, ...) or number.
fn etype_from_name(s: &str) -> Option<i32> {
    if let Ok(n) = s.parse::<i32>() {
        return Some(n);
    }
    // The crate's own names (its Debug form), the names Suricata's parser accepts.
    (-256..=256).find(|&e| format!("{:?}", EncryptionType(e)) == s)
}

fn ticket_encryption_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("krb5.ticket_encryption needs a value")?;
    let bad = || format!("invalid krb5.ticket_encryption value `{v}`");
    let t = v.trim_matches(' ');
    let arg = match t {
        "weak" => TicketEnc::Weak(true),
        "!weak" => TicketEnc::Weak(false),
        _ => {
            let mut list = Vec::new();
            // Items are separated by commas and/or blanks (Suricata's `many1` of
            // `[ ]name[ ][,]`).
            for item in t.split([',', ' ']).filter(|x| !x.is_empty()) {
                if !item.chars().all(|c| c.is_alphanumeric() || c == '-') {
                    return Err(bad());
                }
                list.push(etype_from_name(item).ok_or_else(bad)?);
            }
            if list.is_empty() {
                return Err(bad());
            }
            TicketEnc::List(list)
        }
    };
    Ok(Box::new(PredKw {
        arg,
        pred: |a, p, tx| {
            let Some(e) = krb_tx(p, tx).and_then(|t| t.ticket_etype) else {
                return false;
            };
            match a {
                TicketEnc::Weak(w) => weak_encryption(e) == *w,
                TicketEnc::List(l) => l.contains(&e),
            }
        },
    }))
}

/// Suricata's KRB5 probing parser (UDP, and TCP after the record mark).
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    if data.len() <= 10 {
        return Probe::No;
    }
    match der_read_element_header(data) {
        Ok((rem, hdr)) => {
            if hdr.class() != Class::Application || hdr.tag().0 > 30 {
                return Probe::No;
            }
            if rem.first() != Some(&0x30) {
                return Probe::No;
            }
            if let Ok((rem, _)) = der_read_element_header(rem) {
                if rem.len() > 5 && rem[2..5] == [2, 1, 5] {
                    return Probe::Yes;
                }
            }
            Probe::No
        }
        Err(nom::Err::Incomplete(_)) => Probe::NeedMore,
        Err(_) => Probe::No,
    }
}

/// Over TCP: a record mark of at most 16384, then [`probe`].
pub fn probe_tcp(dir: Dir, data: &[u8]) -> Probe {
    if data.len() <= 14 {
        // Suricata fails the probe here (it sees a whole segment at once).
        return Probe::No;
    }
    let mark = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    if mark > 16384 {
        return Probe::No;
    }
    probe(dir, &data[4..])
}

fn new_parser(_cfg: &ParserConfig, tcp: bool) -> Box<dyn AppParser> {
    Box::new(Krb5State::new(tcp))
}

/// A principal name: its components.
pub type Name = Vec<String>;

/// One Kerberos message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Krb5Tx {
    /// Message type (10 AS-REQ ... 30 KRB-ERROR).
    pub msg_type: u32,
    /// Client name.
    pub cname: Option<Name>,
    /// Realm.
    pub realm: Option<String>,
    /// Server name.
    pub sname: Option<Name>,
    /// Encryption type of the reply's encrypted part.
    pub etype: Option<i32>,
    /// Encryption type of the ticket.
    pub ticket_etype: Option<i32>,
    /// Error code (KRB-ERROR).
    pub error_code: Option<i32>,
    /// The request type this reply answers.
    pub req_type: Option<u32>,
}

/// Whether Suricata calls an encryption type weak (anything but AES and Camellia).
pub fn weak_encryption(e: i32) -> bool {
    !matches!(e, 17 | 18 | 19 | 20 | 25 | 26)
}

fn name(p: &PrincipalName) -> Name {
    p.name_string.clone()
}

/// Per-flow KRB5 state.
#[derive(Debug)]
pub struct Krb5State {
    tcp: bool,
    req_id: u8,
    record: [usize; 2],
    defrag: [Vec<u8>; 2],
    txs: TxList<Krb5Tx>,
    /// The TCP parser gave up: Suricata disables the flow's app layer on a parser error, so
    /// nothing more is parsed (or counted).
    failed: bool,
}

impl Krb5State {
    /// A new flow's state.
    pub fn new(tcp: bool) -> Self {
        Krb5State {
            tcp,
            req_id: 0,
            record: [0, 0],
            defrag: [Vec::new(), Vec::new()],
            txs: TxList::new(MAX_TXS),
            failed: false,
        }
    }

    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<Krb5Tx>> {
        self.txs.get(id)
    }

    /// Live transactions.
    pub fn live_tx_count(&self) -> usize {
        self.txs.iter().count()
    }

    /// Transactions dropped unlogged because [`MAX_TXS`] were live.
    pub fn txs_dropped(&self) -> u64 {
        self.txs.dropped
    }

    /// Bytes held: the TCP buffers and the live transactions (names, realm, events).
    pub fn memuse(&self) -> usize {
        let name = |n: &Option<Name>| {
            n.as_ref().map_or(0, |v| {
                v.capacity() * std::mem::size_of::<String>()
                    + v.iter().map(String::capacity).sum::<usize>()
            })
        };
        self.defrag.iter().map(Vec::capacity).sum::<usize>()
            + self
                .txs
                .iter()
                .map(|t| {
                    std::mem::size_of_val(t)
                        + t.raised.capacity()
                        + name(&t.data.cname)
                        + name(&t.data.sname)
                        + t.data.realm.as_ref().map_or(0, String::capacity)
                })
                .sum::<usize>()
    }

    fn last_event(&mut self, ev: u8) {
        if let Some(t) = self.txs.last_mut() {
            t.raise(ev);
        }
    }

    fn reply(&mut self, dir: Dir, msg_type: u32, rep: kerberos_parser::krb5::KdcRep<'_>) {
        let etype = rep.enc_part.etype.0;
        let tx = Krb5Tx {
            msg_type,
            req_type: (self.req_id > 0).then_some(u32::from(self.req_id)),
            cname: Some(name(&rep.cname)),
            realm: Some(rep.crealm.0),
            sname: Some(name(&rep.ticket.sname)),
            ticket_etype: Some(rep.ticket.enc_part.etype.0),
            etype: Some(etype),
            error_code: None,
        };
        self.txs.push(dir, 0, tx);
        if weak_encryption(etype) {
            self.last_event(EV_WEAK_ENCRYPTION);
        }
    }

    /// One message; false when its outer header does not decode.
    pub fn parse_msg(&mut self, dir: Dir, i: &[u8]) -> bool {
        let hdr = match der_read_element_header(i) {
            Ok((_, h)) => h,
            Err(_) => {
                self.last_event(EV_MALFORMED);
                return false;
            }
        };
        if hdr.class() != Class::Application {
            return true;
        }
        match hdr.tag().0 {
            t @ (10 | 12) => {
                let r = if t == 10 {
                    krb5_parser::parse_as_req(i)
                } else {
                    krb5_parser::parse_tgs_req(i)
                };
                if let Ok((_, req)) = r {
                    let tx = Krb5Tx {
                        msg_type: t,
                        cname: req.req_body.cname.as_ref().map(name),
                        realm: Some(req.req_body.realm.0),
                        sname: req.req_body.sname.as_ref().map(name),
                        ..Krb5Tx::default()
                    };
                    self.txs.push(dir, 0, tx);
                }
                self.req_id = t as u8;
            }
            t @ (11 | 13) => {
                let r = if t == 11 {
                    krb5_parser::parse_as_rep(i)
                } else {
                    krb5_parser::parse_tgs_rep(i)
                };
                if let Ok((_, rep)) = r {
                    self.reply(dir, t, rep);
                }
                self.req_id = 0;
            }
            14 => self.req_id = 14,
            15 => self.req_id = 0,
            30 => {
                // The crate's other parsing functions are the same code as its `FromDer`
                // impls; this one alone is marked deprecated.
                #[allow(deprecated)]
                let r = krb5_parser::parse_krb_error(i);
                if let Ok((_, e)) = r {
                    let tx = Krb5Tx {
                        msg_type: 30,
                        req_type: (self.req_id > 0).then_some(u32::from(self.req_id)),
                        cname: e.cname.as_ref().map(name),
                        realm: e.crealm.map(|r| r.0),
                        sname: Some(name(&e.sname)),
                        error_code: Some(e.error_code.0),
                        ..Krb5Tx::default()
                    };
                    self.txs.push(dir, 0, tx);
                }
                self.req_id = 0;
            }
            _ => {}
        }
        true
    }

    /// TCP stream data of `dir` (record marks, as Suricata 7.0.10 handles them).
    fn parse_tcp(&mut self, dir: Dir, buf: &[u8]) -> bool {
        let d = usize::from(dir == Dir::ToClient);
        let joined;
        let data: &[u8] = if self.record[d] == 0 {
            buf
        } else {
            if self.defrag[d].len() + buf.len() > MAX_DEFRAG {
                return false;
            }
            let mut v = std::mem::take(&mut self.defrag[d]);
            v.extend_from_slice(buf);
            joined = v;
            &joined
        };
        let mut cur = data;
        while !cur.is_empty() {
            if self.record[d] == 0 {
                if cur.len() < 4 {
                    // Suricata keeps these bytes without a bound check (they are only
                    // joined once a record is open): endless 1-3 byte segments would grow
                    // the buffer forever. The same 100,000-byte bound applies.
                    if self.defrag[d].len() + cur.len() > MAX_DEFRAG {
                        return false;
                    }
                    self.defrag[d].extend_from_slice(cur);
                    return true;
                }
                self.record[d] = u32::from_be_bytes([cur[0], cur[1], cur[2], cur[3]]) as usize;
                cur = &cur[4..];
            }
            if cur.len() >= self.record[d] {
                if !self.parse_msg(dir, cur) {
                    return false;
                }
                // Suricata resets the record length before skipping it: the next mark is
                // read from the start of the record just parsed.
                self.record[d] = 0;
            } else {
                if self.defrag[d].len() + cur.len() > MAX_DEFRAG {
                    return false;
                }
                self.defrag[d].extend_from_slice(cur);
                return true;
            }
        }
        true
    }
}

fn etype_name(e: i32) -> String {
    format!("{:?}", EncryptionType(e))
}

fn msg_type_name(t: u32) -> String {
    format!("{:?}", kerberos_parser::krb5::MessageType(t))
}

/// The `krb5` object's members (Suricata's `krb5_log_response`).
pub fn write_krb5(t: &Krb5Tx, w: &mut JsonWriter) {
    w.set_str("msg_type", &msg_type_name(t.msg_type));
    if let Some(c) = t.error_code {
        match t.req_type {
            Some(r) => w.set_str("failed_request", &msg_type_name(r)),
            None => w.set_str("failed_request", "UNKNOWN"),
        };
        w.set_str(
            "error_code",
            &format!("{:?}", kerberos_parser::krb5::ErrorCode(c)),
        );
    }
    let join = |n: &Option<Name>| n.as_ref().map_or("<empty>".to_string(), |v| v.join("/"));
    w.set_str("cname", &join(&t.cname));
    w.set_str("realm", t.realm.as_deref().unwrap_or("<empty>"));
    w.set_str("sname", &join(&t.sname));
    w.set_str(
        "encryption",
        &t.etype.map_or("<none>".to_string(), etype_name),
    );
    w.set_bool("weak_encryption", t.etype.is_some_and(weak_encryption));
    if let Some(x) = t.ticket_etype {
        w.set_str("ticket_encryption", &etype_name(x));
        w.set_bool("ticket_weak_encryption", weak_encryption(x));
    }
}

impl AppParser for Krb5State {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.tcp {
            if self.failed {
                return false;
            }
            if !self.parse_tcp(dir, data) {
                self.failed = true;
                self.defrag = [Vec::new(), Vec::new()];
                return true;
            }
            false
        } else {
            !self.parse_msg(dir, data)
        }
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        let d = usize::from(dir == Dir::ToClient);
        self.record[d] = 0;
        self.defrag[d].clear();
    }

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
        let n = match buf {
            BUF_CNAME => t.data.cname.as_ref(),
            BUF_SNAME => t.data.sname.as_ref(),
            _ => None,
        };
        n.is_some_and(|v| v.iter().any(|s| f(s.as_bytes())))
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        log_all(&mut self.txs, c, "krb5", |t, w| {
            w.open_object("krb5");
            write_krb5(&t.data, w);
            w.close();
            true
        });
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    // Suricata 7 puts no `krb5` object in alerts (its alert logger has no case for it).

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

    /// A KRB-ERROR (KDC_ERR_PREAUTH_REQUIRED) for krbtgt/EXAMPLE.COM.
    fn krb_error() -> Vec<u8> {
        fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
            let mut v = vec![tag];
            if body.len() < 128 {
                v.push(body.len() as u8);
            } else {
                v.push(0x81);
                v.push(body.len() as u8);
            }
            v.extend_from_slice(body);
            v
        }
        let int = |n: u8| tlv(0x02, &[n]);
        let gstr = |s: &str| tlv(0x1b, s.as_bytes());
        let time = tlv(0x18, b"20200101000000Z");
        let pname = tlv(
            0x30,
            &[
                tlv(0xa0, &int(2)),
                tlv(
                    0xa1,
                    &tlv(0x30, &[gstr("krbtgt"), gstr("EXAMPLE.COM")].concat()),
                ),
            ]
            .concat(),
        );
        let body = [
            tlv(0xa0, &int(5)),
            tlv(0xa1, &int(30)),
            tlv(0xa4, &time),
            tlv(0xa5, &int(0)),
            tlv(0xa6, &int(25)),
            tlv(0xa9, &gstr("EXAMPLE.COM")),
            tlv(0xaa, &pname),
        ]
        .concat();
        tlv(0x7e, &tlv(0x30, &body))
    }

    #[test]
    fn krb_error_over_udp_and_tcp() {
        let m = krb_error();
        assert_eq!(probe(Dir::ToClient, &m), Probe::Yes);
        let mut s = Krb5State::new(false);
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &m));
        let t = s.tx(0).unwrap();
        assert_eq!(t.data.msg_type, 30);
        assert_eq!(t.data.error_code, Some(25));
        assert_eq!(
            t.data.sname.as_deref(),
            Some(&["krbtgt".to_string(), "EXAMPLE.COM".to_string()][..])
        );
        let mut w = JsonWriter::new();
        w.start_object();
        write_krb5(&t.data, &mut w);
        w.close();
        let j = String::from_utf8(w.as_bytes().to_vec()).unwrap();
        assert!(j.starts_with(r#"{"msg_type":"KRB_ERROR","failed_request":"UNKNOWN","error_code":"KDC_ERR_PREAUTH_REQUIRED","cname":"<empty>","realm":"<empty>","sname":"krbtgt/EXAMPLE.COM","encryption":"<none>","weak_encryption":false"#), "{j}");

        let mut framed = (m.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&m);
        assert_eq!(probe_tcp(Dir::ToClient, &framed), Probe::Yes);
        let mut s = Krb5State::new(true);
        for c in framed.chunks(7) {
            assert!(!AppParser::parse(&mut s, Dir::ToClient, c));
        }
        assert_eq!(s.tx_count(), 1);
    }

    #[test]
    fn keywords_msg_type_err_code_ticket_encryption() {
        let mut s = Krb5State::new(false);
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &krb_error()));
        let p: &dyn AppParser = &s;
        let m = |kw: crate::registry::KeywordSetup, v: &str| {
            kw(Some(v)).map(|k| k.matches(p, 0, Dir::ToClient))
        };
        assert_eq!(m(msg_type_setup, "30"), Ok(Some(true)));
        assert_eq!(m(msg_type_setup, "\"11\""), Ok(Some(false)));
        assert!(m(msg_type_setup, "KRB_ERROR").is_err());
        assert_eq!(m(err_code_setup, "25"), Ok(Some(true)));
        assert_eq!(m(err_code_setup, "24"), Ok(Some(false)));
        // A KRB-ERROR has no ticket.
        assert_eq!(m(ticket_encryption_setup, "weak"), Ok(Some(false)));
        assert!(ticket_encryption_setup(Some("rc4-hmac, 18 -128")).is_ok());
        assert!(ticket_encryption_setup(Some("no-such-cipher")).is_err());
        assert_eq!(etype_from_name("aes256-cts-hmac-sha1-96"), Some(18));
        assert_eq!(etype_from_name("rc4-hmac"), Some(23));
    }

    #[test]
    fn malformed_and_probe_rejects() {
        let mut s = Krb5State::new(false);
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &krb_error()));
        assert!(AppParser::parse(&mut s, Dir::ToServer, &[0x7e]));
        assert!(s.tx(0).unwrap().has(u16::from(EV_MALFORMED)));
        assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n"), Probe::No);
        assert_eq!(probe_tcp(Dir::ToServer, &[0xff; 20]), Probe::No);
        assert!(weak_encryption(23) && !weak_encryption(18));
    }

    #[test]
    fn no_panic_on_cut_or_flipped() {
        let m = krb_error();
        for n in 0..m.len() {
            let mut s = Krb5State::new(false);
            let _ = AppParser::parse(&mut s, Dir::ToServer, &m[..n]);
            let _ = probe(Dir::ToServer, &m[..n]);
        }
        for i in 0..m.len() {
            let mut v = m.clone();
            v[i] ^= 0xff;
            let mut s = Krb5State::new(true);
            let _ = AppParser::parse(&mut s, Dir::ToServer, &v);
        }
    }
}
