//! DHCP (v4) over UDP ports 67/68, as Suricata 7's DHCP parser (`rust/src/dhcp`).
//!
//! * Detection: a probing parser on ports 67/68: at least 232 bytes and a whole BOOTP header
//!   (240 bytes with the magic cookie).
//! * Each datagram is one transaction (inspected in both directions). Options are read as
//!   Suricata reads them: client id (length above 1), the three time options (a 32-bit value,
//!   whatever the length byte says), the end option, and the rest by length; options that run
//!   past the datagram (or a missing end option) raise `truncated_options`.
//! * EVE `dhcp` record per transaction; without `extended` only acknowledgements are logged
//!   with the basic fields (Suricata's `eve-log.types.dhcp.extended`, default off).
//!   Alerts carry no `dhcp` object (as in Suricata 7).
//! * Rules: `alert dhcp`, `app-layer-event:dhcp.<event>`; `dhcp.leasetime`,
//!   `dhcp.rebinding_time` and `dhcp.renewal_time` read [`DhcpMessage::time_option`].

use std::any::Any;

use shrike_output::JsonWriter;

use crate::anomaly::AppAnomaly;
use crate::common::kw::UintKw;
use crate::common::txlist::{log_all, Tx, TxList};
use crate::registry::{
    AppParser, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Most live transactions per flow (they are freed once logged).
const MAX_TXS: usize = 256;
/// Suricata's minimum datagram for the probe.
const MIN_FRAME_LEN: usize = 232;
/// The fixed BOOTP header with the magic cookie.
const HEADER_LEN: usize = 240;

/// `op` values.
pub const BOOTP_REQUEST: u8 = 1;
/// `op` of a reply.
pub const BOOTP_REPLY: u8 = 2;
/// Option codes Suricata handles.
pub const OPT_SUBNET_MASK: u8 = 1;
/// Routers.
pub const OPT_ROUTERS: u8 = 3;
/// DNS servers.
pub const OPT_DNS_SERVER: u8 = 6;
/// Host name.
pub const OPT_HOSTNAME: u8 = 12;
/// Requested address.
pub const OPT_REQUESTED_IP: u8 = 50;
/// Lease time.
pub const OPT_ADDRESS_TIME: u8 = 51;
/// Message type.
pub const OPT_TYPE: u8 = 53;
/// Parameter request list.
pub const OPT_PARAMETER_LIST: u8 = 55;
/// Renewal (T1) time.
pub const OPT_RENEWAL_TIME: u8 = 58;
/// Rebinding (T2) time.
pub const OPT_REBINDING_TIME: u8 = 59;
/// Vendor class identifier.
pub const OPT_VENDOR_CLASS_ID: u8 = 60;
/// Client identifier.
pub const OPT_CLIENT_ID: u8 = 61;
/// End.
pub const OPT_END: u8 = 255;
/// DHCPACK.
pub const TYPE_ACK: u8 = 5;

/// DHCP events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &["truncated_options", "malformed_options"];
const EV_TRUNCATED: u32 = 1 << 0;

/// EVE options (`eve-log.types.dhcp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DhcpLogConfig {
    /// `extended`: every message with every field (default: acknowledgements, basic fields).
    pub extended: bool,
}

/// DHCP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "dhcp",
    aliases: &[],
    ip_protos: &[17],
    ports: &[67, 68],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "dhcp.leasetime",
            dir: None,
            setup: |v| {
                time_setup(v, "dhcp.leasetime", |p, tx| {
                    time_of(p, tx, OPT_ADDRESS_TIME)
                })
            },
        },
        KeywordDesc {
            name: "dhcp.rebinding_time",
            dir: None,
            setup: |v| {
                time_setup(v, "dhcp.rebinding_time", |p, tx| {
                    time_of(p, tx, OPT_REBINDING_TIME)
                })
            },
        },
        KeywordDesc {
            name: "dhcp.renewal_time",
            dir: None,
            setup: |v| {
                time_setup(v, "dhcp.renewal_time", |p, tx| {
                    time_of(p, tx, OPT_RENEWAL_TIME)
                })
            },
        },
    ],
    generic_stats: true,
};

/// The first time option `code` of transaction `tx`.
fn time_of(p: &dyn AppParser, tx: u64, code: u8) -> Option<u64> {
    let s = p.as_any().downcast_ref::<DhcpState>()?;
    s.tx(tx)?.data.time_option(code).map(u64::from)
}

/// The three time keywords: Suricata's u64 syntax.
fn time_setup(
    v: Option<&str>,
    kw: &'static str,
    get: crate::common::kw::Getter,
) -> Result<Box<dyn TxMatch>, String> {
    UintKw::setup(v, u64::MAX, kw, get)
}

/// Suricata's DHCP probing parser.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    // Suricata: below its minimum frame, or a header cut short, is "unknown" (not yet).
    if data.len() < MIN_FRAME_LEN.max(HEADER_LEN) {
        return Probe::NeedMore;
    }
    Probe::Yes
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(DhcpState::default())
}

/// One option as Suricata decodes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DhcpOption {
    /// Client identifier (without its type byte).
    ClientId(Vec<u8>),
    /// A time option (51, 58, 59) and its value.
    Time(u8, u32),
    /// Another option: code and data.
    Generic(u8, Vec<u8>),
    /// The end option.
    End,
}

/// One DHCP message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DhcpMessage {
    /// BOOTP op.
    pub opcode: u8,
    /// Transaction id (`xid`).
    pub txid: u32,
    /// `ciaddr`.
    pub clientip: [u8; 4],
    /// `yiaddr`.
    pub yourip: [u8; 4],
    /// `siaddr`.
    pub serverip: [u8; 4],
    /// `giaddr`.
    pub giaddr: [u8; 4],
    /// `chaddr`, `hlen` bytes of it (at most 16).
    pub clienthw: Vec<u8>,
    /// Options in order.
    pub options: Vec<DhcpOption>,
}

fn ip4(b: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    for (d, s) in a.iter_mut().zip(b) {
        *d = *s;
    }
    a
}

/// Parse a DHCP message; `None` when the fixed header is cut short. The flag is set when the
/// options were truncated.
pub fn parse_message(d: &[u8]) -> Option<(DhcpMessage, bool)> {
    if d.len() < HEADER_LEN {
        return None;
    }
    let hlen = usize::from(d[2]).min(16);
    let mut m = DhcpMessage {
        opcode: d[0],
        txid: u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
        clientip: ip4(&d[12..16]),
        yourip: ip4(&d[16..20]),
        serverip: ip4(&d[20..24]),
        giaddr: ip4(&d[24..28]),
        clienthw: d[28..28 + hlen].to_vec(),
        options: Vec::new(),
    };
    let mut i = &d[HEADER_LEN..];
    let truncated = loop {
        let Some(&code) = i.first() else {
            break true;
        };
        let opt = match code {
            OPT_END => {
                m.options.push(DhcpOption::End);
                break false;
            }
            OPT_CLIENT_ID => {
                let Some(&len) = i.get(1).filter(|&&l| l > 1) else {
                    break true;
                };
                let n = usize::from(len) - 1;
                let Some(data) = i.get(3..3 + n) else {
                    break true;
                };
                let o = DhcpOption::ClientId(data.to_vec());
                i = &i[3 + n..];
                o
            }
            OPT_ADDRESS_TIME | OPT_RENEWAL_TIME | OPT_REBINDING_TIME => {
                let Some(v) = i.get(2..6) else {
                    break true;
                };
                let o = DhcpOption::Time(code, u32::from_be_bytes([v[0], v[1], v[2], v[3]]));
                i = &i[6..];
                o
            }
            _ => {
                let Some(&len) = i.get(1) else {
                    break true;
                };
                let n = usize::from(len);
                let Some(data) = i.get(2..2 + n) else {
                    break true;
                };
                let o = DhcpOption::Generic(code, data.to_vec());
                i = &i[2 + n..];
                o
            }
        };
        m.options.push(opt);
    };
    Some((m, truncated))
}

impl DhcpMessage {
    /// The value of time option `code` (51 lease, 58 renewal, 59 rebinding), the first one.
    pub fn time_option(&self, code: u8) -> Option<u32> {
        self.options.iter().find_map(|o| match o {
            DhcpOption::Time(c, v) if *c == code => Some(*v),
            _ => None,
        })
    }

    /// The message type (option 53).
    pub fn msg_type(&self) -> Option<u8> {
        self.options.iter().find_map(|o| match o {
            DhcpOption::Generic(OPT_TYPE, d) => d.first().copied(),
            _ => None,
        })
    }
}

/// Per-flow DHCP state.
#[derive(Debug)]
pub struct DhcpState {
    txs: TxList<DhcpMessage>,
}

impl Default for DhcpState {
    fn default() -> Self {
        DhcpState {
            txs: TxList::new(MAX_TXS),
        }
    }
}

impl DhcpState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<DhcpMessage>> {
        self.txs.get(id)
    }
}

fn addr(b: &[u8]) -> String {
    if b.len() == 4 {
        format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
    } else if b.len() == 16 {
        b.chunks(2)
            .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
            .collect::<Vec<_>>()
            .join(":")
    } else {
        String::new()
    }
}

fn hex_colon(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn addr_list(w: &mut JsonWriter, key: &str, data: &[u8]) {
    w.open_array(key);
    for c in data.chunks_exact(4) {
        w.str(&addr(c));
    }
    w.close();
}

/// The `dhcp` object (Suricata's `DHCPLogger::log`).
pub fn write_dhcp(m: &DhcpMessage, extended: bool, w: &mut JsonWriter) {
    w.open_object("dhcp");
    w.set_str(
        "type",
        match m.opcode {
            BOOTP_REQUEST => "request",
            BOOTP_REPLY => "reply",
            _ => "<unknown>",
        },
    );
    w.set_u64("id", u64::from(m.txid));
    w.set_str("client_mac", &hex_colon(&m.clienthw));
    w.set_str("assigned_ip", &addr(&m.yourip));
    if extended {
        w.set_str("client_ip", &addr(&m.clientip));
        if m.opcode == BOOTP_REPLY {
            w.set_str("relay_ip", &addr(&m.giaddr));
            w.set_str("next_server_ip", &addr(&m.serverip));
        }
    }
    for o in &m.options {
        match o {
            DhcpOption::ClientId(d) => {
                w.set_str("client_id", &hex_colon(d));
            }
            DhcpOption::Time(code, v) => match *code {
                OPT_ADDRESS_TIME if extended => {
                    w.set_u64("lease_time", u64::from(*v));
                }
                OPT_REBINDING_TIME if extended => {
                    w.set_u64("rebinding_time", u64::from(*v));
                }
                OPT_RENEWAL_TIME => {
                    w.set_u64("renewal_time", u64::from(*v));
                }
                _ => {}
            },
            DhcpOption::Generic(code, d) => match *code {
                OPT_SUBNET_MASK if extended => {
                    w.set_str("subnet_mask", &addr(d));
                }
                OPT_HOSTNAME if !d.is_empty() => {
                    w.set_bytes("hostname", d);
                }
                OPT_TYPE => {
                    if let Some(t) = d.first() {
                        w.set_str(
                            "dhcp_type",
                            match t {
                                1 => "discover",
                                2 => "offer",
                                3 => "request",
                                4 => "decline",
                                5 => "ack",
                                6 => "nak",
                                7 => "release",
                                8 => "inform",
                                _ => "unknown",
                            },
                        );
                    }
                }
                OPT_REQUESTED_IP if extended => {
                    w.set_str("requested_ip", &addr(d));
                }
                OPT_PARAMETER_LIST if extended => {
                    w.open_array("params");
                    for p in d {
                        let name = match p {
                            1 => "subnet_mask",
                            3 => "router",
                            6 => "dns_server",
                            15 => "domain",
                            35 => "arp_timeout",
                            42 => "ntp_server",
                            66 => "tftp_server_name",
                            150 => "tftp_server_ip",
                            _ => continue,
                        };
                        w.str(name);
                    }
                    w.close();
                }
                OPT_DNS_SERVER if extended => addr_list(w, "dns_servers", d),
                OPT_ROUTERS if extended => addr_list(w, "routers", d),
                OPT_VENDOR_CLASS_ID if extended && !d.is_empty() => {
                    w.set_bytes("vendor_class_identifier", d);
                }
                _ => {}
            },
            DhcpOption::End => {}
        }
    }
    w.close();
}

impl AppParser for DhcpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        let Some((m, truncated)) = parse_message(data) else {
            return true;
        };
        let ev = if truncated { EV_TRUNCATED } else { 0 };
        self.txs.push(dir, ev, m);
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.txs.count()
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.txs.count()
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        // A DHCP transaction is inspected in both directions (Suricata's default tx data).
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let extended = c.opts.dhcp.extended;
        log_all(&mut self.txs, c, "dhcp", |t, w| {
            if !extended && t.data.msg_type() != Some(TYPE_ACK) {
                return false;
            }
            write_dhcp(&t.data, extended, w);
            true
        });
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
    }

    // Suricata 7 puts no `dhcp` object in alerts (its alert logger has no case for it).

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

    fn message(op: u8, options: &[u8]) -> Vec<u8> {
        let mut d = vec![0u8; HEADER_LEN];
        d[0] = op;
        d[1] = 1;
        d[2] = 6;
        d[4..8].copy_from_slice(&0x3d1d_u32.to_be_bytes());
        d[16..20].copy_from_slice(&[192, 168, 0, 10]);
        d[28..34].copy_from_slice(&[0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42]);
        d[236..240].copy_from_slice(&[0x63, 0x82, 0x53, 0x63]);
        d.extend_from_slice(options);
        d
    }

    fn json(m: &DhcpMessage, extended: bool) -> String {
        let mut w = JsonWriter::new();
        w.start_object();
        write_dhcp(m, extended, &mut w);
        w.close();
        String::from_utf8(w.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn ack_with_times_basic_and_extended() {
        let opts = [
            53, 1, 5, 51, 4, 0, 0, 0x0e, 0x10, 58, 4, 0, 0, 7, 8, 59, 4, 0, 0, 0x0c, 0x4e, 1, 4,
            255, 255, 255, 0, 12, 3, b'p', b'c', b'1', 61, 7, 1, 0, 0x0b, 0x82, 0x01, 0xfc, 0x42,
            255,
        ];
        let (m, trunc) = parse_message(&message(BOOTP_REPLY, &opts)).unwrap();
        assert!(!trunc);
        assert_eq!(m.time_option(OPT_ADDRESS_TIME), Some(3600));
        assert_eq!(m.time_option(OPT_RENEWAL_TIME), Some(1800));
        assert_eq!(m.time_option(OPT_REBINDING_TIME), Some(3150));
        assert_eq!(m.msg_type(), Some(TYPE_ACK));
        assert_eq!(
            json(&m, false),
            r#"{"dhcp":{"type":"reply","id":15645,"client_mac":"00:0b:82:01:fc:42","assigned_ip":"192.168.0.10","dhcp_type":"ack","renewal_time":1800,"hostname":"pc1","client_id":"00:0b:82:01:fc:42"}}"#
        );
        let e = json(&m, true);
        assert!(
            e.contains(r#""client_ip":"0.0.0.0","relay_ip":"0.0.0.0","next_server_ip":"0.0.0.0""#),
            "{e}"
        );
        assert!(
            e.contains(r#""lease_time":3600"#) && e.contains(r#""subnet_mask":"255.255.255.0""#),
            "{e}"
        );
    }

    #[test]
    fn time_keywords() {
        let mut s = DhcpState::default();
        let opts = [53, 1, 5, 51, 4, 0, 0, 0x0e, 0x10, 58, 4, 0, 0, 7, 8, 255];
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToClient,
            &message(BOOTP_REPLY, &opts)
        ));
        let p: &dyn AppParser = &s;
        let m = |i: usize, v: &str| {
            (PROTOCOL.keywords[i].setup)(Some(v))
                .unwrap()
                .matches(p, 0, Dir::ToClient)
        };
        assert_eq!(m(0, "3600"), Some(true));
        assert_eq!(m(0, ">3600"), Some(false));
        assert_eq!(m(1, "0"), Some(false), "no rebinding time option");
        assert_eq!(m(2, "1000-2000"), Some(true));
        assert!((PROTOCOL.keywords[0].setup)(Some("abc")).is_err());
    }

    #[test]
    fn truncated_options_and_short_header() {
        let mut s = DhcpState::default();
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToServer,
            &message(BOOTP_REQUEST, &[53, 1, 1, 12, 9, b'x'])
        ));
        assert!(s.tx(0).unwrap().has(0));
        // No end option: truncated too, as Suricata.
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToServer,
            &message(BOOTP_REQUEST, &[53, 1, 1])
        ));
        assert!(s.tx(1).unwrap().has(0));
        assert!(AppParser::parse(&mut s, Dir::ToServer, &[1u8; 100]));
        assert_eq!(s.tx_count(), 2);
        assert_eq!(probe(Dir::ToServer, &[0u8; 100]), Probe::NeedMore);
        assert_eq!(probe(Dir::ToServer, &message(1, &[255])), Probe::Yes);
    }

    #[test]
    fn no_panic_on_cut_or_flipped_options() {
        let d = message(BOOTP_REQUEST, &[61, 1, 51, 2, 0, 58, 0, 255]);
        for n in 0..d.len() {
            let _ = parse_message(&d[..n]);
        }
        for i in HEADER_LEN..d.len() {
            let mut v = d.clone();
            v[i] ^= 0xff;
            let _ = parse_message(&v);
        }
    }
}
