//! SIP over UDP, as Suricata 7's SIP parser (`rust/src/sip`) has it.
//!
//! * Detection: a probing parser on ports 5060 and 5061: the datagram must parse as a whole
//!   request (to the server) or response (to the client).
//! * Each datagram is one message and one transaction: a request to the server, a response
//!   to the client (Suricata 7 does not pair them). A datagram that does not parse raises
//!   `incomplete_data` or `invalid_data` on the flow's last transaction.
//! * EVE `sip` record per transaction (`method`, `uri`, `version`, `request_line` or
//!   `version`, `code`, `reason`, `response_line`), without `tx_id`, as Suricata writes it;
//!   the same object inside alerts.
//! * Rules: `alert sip`, the sticky buffers `sip.method`, `sip.uri`, `sip.request_line`
//!   (requests), `sip.stat_code`, `sip.stat_msg`, `sip.response_line` (responses),
//!   `sip.protocol` (both), `app-layer-event:sip.<event>`.
//!
//! * Suricata 8's header buffers (multi-buffers, each value of the header in the message of
//!   the inspected direction; compact names such as `f` count as their full names):
//!   `sip.from`, `sip.to`, `sip.via`, `sip.user_agent`, `sip.content_type`,
//!   `sip.content_length`.
//!
//! Not yet: SIP over TCP, and Suricata 8's `sdp` object in the record.

pub mod parser;

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

pub use parser::{Request, Response};

/// Buffer ids (indexes into [`PROTOCOL`]'s buffers).
const BUF_METHOD: u16 = 0;
const BUF_URI: u16 = 1;
const BUF_PROTOCOL: u16 = 2;
const BUF_STAT_CODE: u16 = 3;
const BUF_STAT_MSG: u16 = 4;
const BUF_REQUEST_LINE: u16 = 5;
const BUF_RESPONSE_LINE: u16 = 6;
/// The header buffers (Suricata 8), in order from [`BUF_FROM`].
const BUF_FROM: u16 = 7;
const HEADER_BUFFERS: [&[u8]; 6] = [
    b"From",
    b"To",
    b"Via",
    b"User-Agent",
    b"Content-Type",
    b"Content-Length",
];

/// Event ids, in the order of [`PROTOCOL`]'s events (Suricata's names).
const EV_INCOMPLETE: u8 = 0;
const EV_INVALID: u8 = 1;
const EVENT_NAMES: &[&str] = &["incomplete_data", "invalid_data"];

/// Most transactions kept per flow (the oldest, logged, go first): a one-way flow never
/// has its transactions inspected to the other side.
const MAX_TXS: usize = 64;

/// SIP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "sip",
    aliases: &[],
    ip_protos: &[17],
    ports: &[5060, 5061],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "sip.method",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "sip.uri",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "sip.protocol",
            dir: None,
        },
        BufferDesc {
            name: "sip.stat_code",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "sip.stat_msg",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "sip.request_line",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "sip.response_line",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "sip.from",
            dir: None,
        },
        BufferDesc {
            name: "sip.to",
            dir: None,
        },
        BufferDesc {
            name: "sip.via",
            dir: None,
        },
        BufferDesc {
            name: "sip.user_agent",
            dir: None,
        },
        BufferDesc {
            name: "sip.content_type",
            dir: None,
        },
        BufferDesc {
            name: "sip.content_length",
            dir: None,
        },
    ],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

/// A whole request to the server, a whole response to the client.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    let ok = match dir {
        Dir::ToServer => parser::parse_request(data).is_ok(),
        Dir::ToClient => parser::parse_response(data).is_ok(),
    };
    if ok {
        Probe::Yes
    } else {
        Probe::No
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(SipState::default())
}

/// One message.
#[derive(Debug, Default)]
pub struct SipTx {
    /// Transaction id (from 0 per flow).
    pub id: u64,
    /// The request, on a request transaction.
    pub request: Option<Request>,
    /// The response, on a response transaction.
    pub response: Option<Response>,
    /// The first line of a request.
    pub request_line: Option<Vec<u8>>,
    /// The first line of a response.
    pub response_line: Option<Vec<u8>>,
    /// Events raised (bit per event id).
    events: u8,
    /// Events already reported to EVE `anomaly`.
    events_reported: u8,
    /// Directions a datagram went after this transaction was made (bit 0 to the server,
    /// bit 1 to the client): detection inspected it that way.
    seen: u8,
}

impl SipTx {
    /// The `sip` object of EVE records and alerts.
    fn write(&self, w: &mut JsonWriter) {
        w.open_object("sip");
        if let Some(r) = &self.request {
            w.set_bytes("method", &r.method);
            w.set_bytes("uri", &r.uri);
            w.set_bytes("version", &r.version);
        }
        if let Some(l) = &self.request_line {
            w.set_bytes("request_line", l);
        }
        if let Some(r) = &self.response {
            w.set_bytes("version", &r.version);
            w.set_bytes("code", &r.code);
            w.set_bytes("reason", &r.reason);
        }
        if let Some(l) = &self.response_line {
            w.set_bytes("response_line", l);
        }
        w.close();
    }
}

/// Per-flow SIP state.
#[derive(Debug, Default)]
pub struct SipState {
    txs: VecDeque<SipTx>,
    /// Transactions created so far.
    next_id: u64,
}

impl SipState {
    /// The transaction with id `id`, while kept.
    pub fn tx(&self, id: u64) -> Option<&SipTx> {
        let first = self.txs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get(i).filter(|t| t.id == id)
    }

    fn push(&mut self, mut tx: SipTx) {
        tx.id = self.next_id;
        self.next_id += 1;
        if self.txs.len() >= MAX_TXS {
            self.txs.pop_front();
        }
        self.txs.push_back(tx);
    }

    fn set_event(&mut self, ev: u8) {
        if let Some(t) = self.txs.back_mut() {
            t.events |= 1 << ev;
        }
    }

    /// One message in direction `dir`; false when it did not parse.
    fn message(&mut self, dir: Dir, data: &[u8]) -> bool {
        let res = match dir {
            Dir::ToServer => parser::parse_request(data).map(|r| SipTx {
                request: Some(r),
                request_line: parser::first_line(data).map(<[u8]>::to_vec),
                ..SipTx::default()
            }),
            Dir::ToClient => parser::parse_response(data).map(|r| SipTx {
                response: Some(r),
                response_line: parser::first_line(data).map(<[u8]>::to_vec),
                ..SipTx::default()
            }),
        };
        match res {
            Ok(tx) => {
                self.push(tx);
                true
            }
            Err(parser::Error::Incomplete) => {
                self.set_event(EV_INCOMPLETE);
                false
            }
            Err(parser::Error::Invalid) => {
                self.set_event(EV_INVALID);
                false
            }
        }
    }
}

impl AppParser for SipState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        // Detection inspects every kept transaction on this datagram, in its direction.
        let bit = if dir == Dir::ToServer { 1 } else { 2 };
        for t in self.txs.iter_mut() {
            t.seen |= bit;
        }
        let ok = self.message(dir, data);
        if ok {
            if let Some(t) = self.txs.back_mut() {
                t.seen = bit;
            }
        }
        !ok
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        // Suricata's `pdu` (the datagram) first, then on a parsed message its line, headers
        // and body (`sip_frames_ts` / `sip_frames_tc`).
        fc.new_rel(0, data.len() as i64, 0);
        let body = match dir {
            Dir::ToServer => parser::parse_request(data).ok().map(|r| r.body_len),
            Dir::ToClient => parser::parse_response(data).ok().map(|r| r.body_len),
        };
        if let Some(body_len) = body {
            let line = memchr::memmem::find(data, b"\r\n").map_or(0, |i| i + 2);
            let body_off = data.len() - body_len;
            let (tl, th, tb) = match dir {
                Dir::ToServer => (1, 3, 5),
                Dir::ToClient => (2, 4, 6),
            };
            fc.new_rel(0, line as i64, tl);
            let headers = body_off.saturating_sub(2).saturating_sub(line);
            fc.new_rel(line as i64, headers as i64, th);
            if body_len > 0 {
                fc.new_rel(body_off as i64, body_len as i64, tb);
            }
        }
        AppParser::parse(self, dir, data)
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.next_id
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        // As Suricata, every transaction is inspected in both directions (the buffers read
        // the message of the inspected direction: a request has none to the client).
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer(&self, tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        if let Some(name) = buf
            .checked_sub(BUF_FROM)
            .and_then(|i| HEADER_BUFFERS.get(usize::from(i)))
        {
            // A multi-buffer: each value of the header, from the message of `dir`.
            let headers = match dir {
                Dir::ToServer => t.request.as_ref().map(|r| &r.headers),
                Dir::ToClient => t.response.as_ref().map(|r| &r.headers),
            };
            return headers.is_some_and(|h| h.iter().filter(|(n, _)| n == name).any(|(_, v)| f(v)));
        }
        let v: Option<&[u8]> = match (buf, &t.request, &t.response) {
            (BUF_METHOD, Some(r), _) => Some(&r.method),
            (BUF_URI, Some(r), _) => Some(&r.uri),
            (BUF_PROTOCOL, Some(r), _) if dir == Dir::ToServer => Some(&r.version),
            (BUF_PROTOCOL, _, Some(r)) if dir == Dir::ToClient => Some(&r.version),
            (BUF_STAT_CODE, _, Some(r)) => Some(&r.code),
            (BUF_STAT_MSG, _, Some(r)) => Some(&r.reason),
            (BUF_REQUEST_LINE, _, _) => t.request_line.as_deref(),
            (BUF_RESPONSE_LINE, _, _) => t.response_line.as_deref(),
            _ => None,
        };
        match v {
            Some(v) if !v.is_empty() => f(v),
            _ => false,
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        ev < 8 && self.tx(tx).is_some_and(|t| t.events & (1 << ev) != 0)
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let mut id = *c.next;
        let to_server = c.rec.info.to_server;
        while id < self.next_id {
            if let Some(t) = self.tx(id) {
                if c.write && c.out.wants_type("sip") {
                    if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                        write_eve_header(&mut rec, &c.rec.header("sip", to_server));
                        t.write(&mut rec);
                        rec.close();
                        let _ = rec.commit();
                    }
                }
                c.logged += 1;
            }
            id += 1;
        }
        *c.next = id;
        // Freed once logged and inspected in both directions (Suricata's cleanup): until a
        // datagram went the other way, an event a later bad datagram raises on the last
        // transaction can still match.
        while self
            .txs
            .front()
            .is_some_and(|t| t.id < id && (t.seen == 3 || c.closed))
        {
            self.txs.pop_front();
        }
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut().filter(|t| t.id >= from) {
            let new = t.events & !t.events_reported;
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
        match self.tx(tx) {
            Some(t) => {
                t.write(w);
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
mod tests {
    use super::*;
    const RANDOM_SEEDS: &[&[u8]] = &[
        b"REGISTER sip:a SIP/2.0\r\n",
        b"SIP/2.0 200 OK\r\n",
        b"A b SIP/2.0\r\nf: x\r\n\r\n",
    ];

    #[test]
    fn random_input_never_panics() {
        crate::common::testing::random_input_never_panics(&PROTOCOL, false, RANDOM_SEEDS);
    }

    const REGISTER: &[u8] = b"REGISTER sip:sip.cybercity.dk SIP/2.0\r\n\
        Via: SIP/2.0/UDP 192.168.1.2;branch=z9hG4bKnp112903503-43a64480192.168.1.2;rport\r\n\
        From: <sip:voi18063@sip.cybercity.dk>;tag=903df0a\r\n\
        To: <sip:voi18063@sip.cybercity.dk>\r\n\
        Content-Length: 4  \r\n\
        \r\nABCD";

    #[test]
    fn request_and_response_lines() {
        let r = parser::parse_request(REGISTER).unwrap();
        assert_eq!(r.method, b"REGISTER");
        assert_eq!(r.uri, b"sip:sip.cybercity.dk");
        assert_eq!(r.version, b"SIP/2.0");
        assert_eq!(r.headers.len(), 4);
        assert_eq!(r.headers[3], (b"Content-Length".to_vec(), b"4".to_vec()));
        assert_eq!(r.body_len, 4);
        let s = parser::parse_response(b"SIP/2.0 401 Unauthorized\r\n\r\n").unwrap();
        assert_eq!(s.code, b"401");
        assert_eq!(s.reason, b"Unauthorized");
        assert_eq!(
            parser::first_line(REGISTER),
            Some(&b"REGISTER sip:sip.cybercity.dk SIP/2.0"[..])
        );
    }

    #[test]
    fn truncated_and_invalid_messages() {
        for n in 0..REGISTER.len() - 4 {
            assert!(
                parser::parse_request(&REGISTER[..n]).is_err(),
                "prefix of {n} bytes"
            );
        }
        assert_eq!(
            parser::parse_request(b"REGISTER sip:x SIP/2.0\r\nFrom: a\r\n"),
            Err(parser::Error::Incomplete)
        );
        assert_eq!(
            parser::parse_request(b"GET / HTTP/1.1\r\n\r\n"),
            Err(parser::Error::Invalid)
        );
        assert!(parser::parse_response(b"HTTP/1.1 200 OK\r\n\r\n").is_err());
        // A value byte outside the grammar (non-ASCII) makes it incomplete, as Suricata's.
        assert_eq!(
            parser::parse_request(b"A sip:x SIP/2.0\r\nFrom: \xff\r\n\r\n"),
            Err(parser::Error::Incomplete)
        );
        // Folded header lines continue the value.
        let r = parser::parse_request(b"A sip:x SIP/2.0\r\nFrom: a\r\n b\r\n\r\n").unwrap();
        assert_eq!(r.headers[0].1, b"a\r\n b");
    }

    #[test]
    fn one_transaction_per_message_with_buffers_by_direction() {
        let mut s = SipState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, REGISTER));
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToClient,
            b"SIP/2.0 100 Trying\r\nCSeq: 1\r\n\r\n"
        ));
        assert_eq!(s.tx_count(), 2);
        let get = |tx, buf, dir| {
            let mut v = None;
            s.buffer(tx, buf, dir, &mut |b| {
                v = Some(b.to_vec());
                true
            });
            v
        };
        assert_eq!(
            get(0, BUF_METHOD, Dir::ToServer),
            Some(b"REGISTER".to_vec())
        );
        assert_eq!(get(0, BUF_STAT_CODE, Dir::ToServer), None);
        assert_eq!(
            get(1, BUF_STAT_MSG, Dir::ToClient),
            Some(b"Trying".to_vec())
        );
        assert_eq!(
            get(1, BUF_PROTOCOL, Dir::ToClient),
            Some(b"SIP/2.0".to_vec())
        );
        assert_eq!(get(1, BUF_PROTOCOL, Dir::ToServer), None);
        assert_eq!(
            get(1, BUF_RESPONSE_LINE, Dir::ToClient),
            Some(b"SIP/2.0 100 Trying".to_vec())
        );
        // Both transactions are inspected in both directions, as Suricata does.
        let mut live = Vec::new();
        s.live_txs(Dir::ToClient, &mut live);
        assert_eq!(live, vec![0, 1]);
        // A bad datagram raises its event on the last transaction.
        assert!(AppParser::parse(&mut s, Dir::ToClient, b"SIP/2.0 1"));
        assert!(s.has_event(1, u16::from(EV_INCOMPLETE)));
        assert!(AppParser::parse(&mut s, Dir::ToClient, b"XIP/2.0 1"));
        assert!(s.has_event(1, u16::from(EV_INVALID)));
    }

    #[test]
    fn header_buffers_with_compact_names() {
        let mut s = SipState::default();
        let msg = b"INVITE sip:x SIP/2.0\r\nf: <sip:a>\r\nTo: <sip:b>\r\nv: SIP/2.0/UDP h1\r\nVia: SIP/2.0/UDP h2\r\n\r\n";
        assert!(!AppParser::parse(&mut s, Dir::ToServer, msg));
        let all = |buf: u16, dir| {
            let mut v = Vec::new();
            s.buffer(0, buf, dir, &mut |b| {
                v.push(b.to_vec());
                false
            });
            v
        };
        assert_eq!(all(BUF_FROM, Dir::ToServer), vec![b"<sip:a>".to_vec()]);
        assert_eq!(all(BUF_FROM + 1, Dir::ToServer), vec![b"<sip:b>".to_vec()]);
        assert_eq!(
            all(BUF_FROM + 2, Dir::ToServer),
            vec![b"SIP/2.0/UDP h1".to_vec(), b"SIP/2.0/UDP h2".to_vec()]
        );
        assert!(all(BUF_FROM, Dir::ToClient).is_empty());
        assert!(all(BUF_FROM + 3, Dir::ToServer).is_empty());
    }

    #[test]
    fn probe_is_a_whole_message() {
        assert_eq!(probe(Dir::ToServer, REGISTER), Probe::Yes);
        assert_eq!(probe(Dir::ToClient, REGISTER), Probe::No);
        assert_eq!(probe(Dir::ToServer, &REGISTER[..20]), Probe::No);
        assert_eq!(probe(Dir::ToClient, b"SIP/2.0 200 OK\r\n\r\n"), Probe::Yes);
    }
}
