//! RFB (VNC): the handshake, as Suricata 7's RFB parser (`rust/src/rfb`) has it.
//!
//! * Detection: `RFB ` at the start of either direction (content pattern, any port; the
//!   stock detection ports are 5900-5909).
//! * One state machine for both directions (protocol versions, security types, VNC
//!   challenge and response, security result, failure reason, client and server init);
//!   one transaction per flow, complete at the server init or when the parser stops
//!   (unknown security type or result, malformed message, data in the unexpected
//!   direction: Suricata's events). The rest of the session is not parsed.
//! * A message cut across segments waits for the rest, at most [`MAX_PENDING`] bytes per
//!   direction (Suricata has no limit; a longer one is treated as malformed).
//! * EVE `rfb` record as Suricata's; the same object inside alerts.
//! * Rules: `alert rfb`, the `rfb.name` sticky buffer (to the client), `rfb.sectype` (u32
//!   comparison, to the server) and `rfb.secresult` (`ok`/`fail`/`toomany`/`unknown` as
//!   Suricata 7, or Suricata 8's u32 comparison; to the client), decided at the end of the
//!   handshake; `app-layer-event:rfb.<event>`.

use std::any::Any;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;
use shrike_rules::parse::UintMatch;

/// Most bytes of an incomplete handshake message kept per direction.
pub const MAX_PENDING: usize = 64 * 1024;

const BUF_NAME: u16 = 0;

/// Events (Suricata's names), by id.
const EV_UNIMPLEMENTED_SECURITY_TYPE: u8 = 0;
const EV_UNKNOWN_SECURITY_RESULT: u8 = 1;
const EV_MALFORMED_MESSAGE: u8 = 2;
const EV_CONFUSED_STATE: u8 = 3;
const EVENT_NAMES: &[&str] = &[
    "unimplemented_security_type",
    "unknown_security_result",
    "malformed_message",
    "confused_state",
];

/// RFB in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "rfb",
    aliases: &[],
    ip_protos: &[6],
    ports: &[5900, 5901, 5902, 5903, 5904, 5905, 5906, 5907, 5908, 5909],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[BufferDesc {
        name: "rfb.name",
        dir: Some(Dir::ToClient),
    }],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "rfb.sectype",
            dir: Some(Dir::ToServer),
            setup: sectype_setup,
        },
        KeywordDesc {
            name: "rfb.secresult",
            dir: Some(Dir::ToClient),
            setup: secresult_setup,
        },
    ],
    generic_stats: true,
};

/// `rfb.sectype` / `rfb.secresult`: an integer comparison on the chosen security type or
/// the security result.
#[derive(Debug)]
struct SecMatch {
    /// Security result (else security type).
    result: bool,
    m: UintMatch,
}

/// `rfb.sectype:<u32 comparison>` (Suricata's uint syntax).
fn sectype_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("rfb.sectype needs a value")?;
    let m = UintMatch::parse(v.trim(), u64::from(u32::MAX), "rfb.sectype")
        .map_err(|e| format!("invalid rfb.sectype value `{v}`: {e:?}"))?;
    Ok(Box::new(SecMatch { result: false, m }))
}

/// `rfb.secresult`: Suricata 7's names (`ok`, `fail`, `toomany`, any case; `unknown`
/// matches any other code), or Suricata 8's integer comparison.
fn secresult_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("rfb.secresult needs a value")?.trim();
    let m = match v.to_ascii_lowercase().as_str() {
        "ok" => UintMatch::eq(0),
        "fail" => UintMatch::eq(1),
        "toomany" => UintMatch::eq(2),
        "unknown" => UintMatch::parse(">2", u64::from(u32::MAX), "rfb.secresult")
            .map_err(|e| format!("{e:?}"))?,
        _ => UintMatch::parse(v, u64::from(u32::MAX), "rfb.secresult")
            .map_err(|e| format!("unknown rfb.secresult value `{v}`: {e:?}"))?,
    };
    Ok(Box::new(SecMatch { result: true, m }))
}

impl TxMatch for SecMatch {
    /// Decided once the handshake is over (Suricata inspects at the transaction's end).
    fn matches(&self, parser: &dyn AppParser, _tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<RfbState>()?;
        let t = s.tx()?;
        if !t.complete {
            return None;
        }
        let v = if self.result {
            t.security_result
        } else {
            t.chosen_security_type
        };
        Some(v.is_some_and(|v| self.m.matches(u64::from(v))))
    }
}

/// `RFB ` at the start of the direction (case-insensitive, as Suricata's pattern).
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    let n = data.len().min(4);
    if !data[..n].eq_ignore_ascii_case(&b"RFB "[..n]) {
        Probe::No
    } else if n < 4 {
        Probe::NeedMore
    } else {
        Probe::Yes
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(RfbState::default())
}

/// Where the handshake stands (both directions share it, as in Suricata).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    TcServerVersion,
    TcSupportedTypes,
    TcVncChallenge,
    TcServerInit,
    TcFailureReason,
    TsClientVersion,
    TcServerSecType,
    TsSecTypeSelection,
    TsVncResponse,
    TcSecurityResult,
    TsClientInit,
    Skip,
}

/// The pixel format of the server init.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PixelFormat {
    pub bits_per_pixel: u8,
    pub depth: u8,
    pub big_endian: bool,
    pub true_color: bool,
    pub red_max: u16,
    pub green_max: u16,
    pub blue_max: u16,
    pub red_shift: u8,
    pub green_shift: u8,
    pub blue_shift: u8,
}

/// The server init message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerInit {
    pub width: u16,
    pub height: u16,
    pub pixel_format: PixelFormat,
    /// The desktop name.
    pub name: Vec<u8>,
}

/// The flow's one transaction.
#[derive(Debug, Default)]
pub struct RfbTx {
    /// The handshake is over (parsed or given up).
    pub complete: bool,
    /// The security type chosen (by the client, or by the server in 3.3).
    pub chosen_security_type: Option<u32>,
    /// Server protocol version (major, minor).
    pub server_version: Option<([u8; 3], [u8; 3])>,
    /// Client protocol version (major, minor).
    pub client_version: Option<([u8; 3], [u8; 3])>,
    /// VNC authentication challenge.
    pub vnc_challenge: Option<[u8; 16]>,
    /// VNC authentication response.
    pub vnc_response: Option<[u8; 16]>,
    /// Client init: share the desktop.
    pub shared: Option<bool>,
    /// Security result (only `0`, OK, is kept, as Suricata 7).
    pub security_result: Option<u32>,
    /// Failure reason from the server.
    pub failure_reason: Option<Vec<u8>>,
    /// Server init.
    pub server_init: Option<ServerInit>,
    events: u8,
    events_reported: u8,
}

/// Per-flow RFB state.
#[derive(Debug, Default)]
pub struct RfbState {
    tx: Option<RfbTx>,
    stage: Stage,
    /// Incomplete message per direction (to server, to client).
    pending: [Vec<u8>; 2],
    /// The version exchange failed: nothing more is parsed.
    failed: bool,
}

/// Outcome of one message parse.
enum Parsed<T> {
    Done(T, usize),
    Incomplete,
    Error,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn version(i: &[u8]) -> Parsed<([u8; 3], [u8; 3])> {
    // "RFB " major(3) "." minor(3) "\n", each part checked as soon as it is in.
    const TAG: &[u8] = b"RFB ";
    let n = i.len().min(TAG.len());
    if i[..n] != TAG[..n] {
        return Parsed::Error;
    }
    let part = |from: usize, len: usize| i.get(from..from + len);
    let utf8 = |b: &[u8]| std::str::from_utf8(b).is_ok();
    type Check<'a> = (usize, usize, &'a dyn Fn(&[u8]) -> bool);
    let checks: [Check<'_>; 4] = [
        (4, 3, &utf8),
        (7, 1, &|b: &[u8]| b == b"."),
        (8, 3, &utf8),
        (11, 1, &|b: &[u8]| b == b"\n"),
    ];
    if i.len() < TAG.len() {
        return Parsed::Incomplete;
    }
    for (from, len, ok) in checks {
        match part(from, len) {
            None => return Parsed::Incomplete,
            Some(b) if !ok(b) => return Parsed::Error,
            Some(_) => {}
        }
    }
    Parsed::Done(([i[4], i[5], i[6]], [i[8], i[9], i[10]]), 12)
}

fn server_init(i: &[u8]) -> Parsed<ServerInit> {
    if i.len() < 24 {
        return Parsed::Incomplete;
    }
    let len = be32(&i[20..24]) as usize;
    let Some(end) = 24usize.checked_add(len).filter(|&e| e <= i.len()) else {
        return Parsed::Incomplete;
    };
    let p = &i[4..20];
    Parsed::Done(
        ServerInit {
            width: be16(&i[0..2]),
            height: be16(&i[2..4]),
            pixel_format: PixelFormat {
                bits_per_pixel: p[0],
                depth: p[1],
                big_endian: p[2] != 0,
                true_color: p[3] != 0,
                red_max: be16(&p[4..6]),
                green_max: be16(&p[6..8]),
                blue_max: be16(&p[8..10]),
                red_shift: p[10],
                green_shift: p[11],
                blue_shift: p[12],
            },
            name: i[24..end].to_vec(),
        },
        end,
    )
}

impl RfbState {
    /// The flow's transaction, once the server's version is in.
    pub fn tx(&self) -> Option<&RfbTx> {
        self.tx.as_ref()
    }

    fn set_event(&mut self, ev: u8) {
        if let Some(t) = self.tx.as_mut() {
            t.events |= 1 << ev;
        }
    }

    /// Stop mapping the handshake (Suricata's `Skip`), with event `ev`.
    fn give_up(&mut self, ev: u8) {
        if let Some(t) = self.tx.as_mut() {
            t.events |= 1 << ev;
            t.complete = true;
        }
        self.stage = Stage::Skip;
    }

    /// Parse the pending data of `dir`; returns false when the version exchange failed.
    ///
    /// With `fc`, each parsed message gets Suricata's `pdu` frame; `buf_abs` is the stream
    /// offset of the pending data's first byte.
    fn run(
        &mut self,
        dir: Dir,
        mut fc: Option<&mut crate::frames::FrameCtx<'_>>,
        buf_abs: u64,
    ) -> bool {
        let d = usize::from(dir == Dir::ToClient);
        let buf = std::mem::take(&mut self.pending[d]);
        let mut at = 0;
        let ok = loop {
            let cur = &buf[at..];
            if cur.is_empty() || self.stage == Stage::Skip {
                at = buf.len();
                break true;
            }
            match self.step(dir, cur) {
                // Suricata's frame length is what the call consumed so far, this message
                // included (`consumed`), from the message's start.
                Step::Consumed(n) => {
                    if let Some(fc) = fc.as_deref_mut() {
                        fc.new_frame(buf_abs + at as u64, (at + n) as i64, 0);
                    }
                    at += n
                }
                Step::ParsedThenSkip(n) => {
                    if let Some(fc) = fc.as_deref_mut() {
                        fc.new_frame(buf_abs + at as u64, (at + n) as i64, 0);
                    }
                    at = buf.len();
                    break true;
                }
                Step::Incomplete => break true,
                Step::All => {
                    at = buf.len();
                    break true;
                }
                Step::Fatal => {
                    at = buf.len();
                    break false;
                }
            }
        };
        let rest = &buf[at..];
        if rest.len() > MAX_PENDING {
            self.give_up(EV_MALFORMED_MESSAGE);
        } else if !rest.is_empty() {
            self.pending[d] = rest.to_vec();
        }
        ok
    }

    fn step(&mut self, dir: Dir, i: &[u8]) -> Step {
        use Stage::*;
        let stage = self.stage;
        let expected = match stage {
            TsClientVersion | TsSecTypeSelection | TsVncResponse | TsClientInit => Dir::ToServer,
            Skip => return Step::All,
            _ => Dir::ToClient,
        };
        if expected != dir {
            self.give_up(EV_CONFUSED_STATE);
            return Step::All;
        }
        macro_rules! take {
            ($p:expr) => {
                match $p {
                    Parsed::Done(v, n) => (v, n),
                    Parsed::Incomplete => return Step::Incomplete,
                    Parsed::Error => {
                        self.give_up(EV_MALFORMED_MESSAGE);
                        return Step::All;
                    }
                }
            };
        }
        let fixed = |n: usize| {
            if i.len() < n {
                Parsed::Incomplete
            } else {
                Parsed::Done(&i[..n], n)
            }
        };
        match stage {
            TcServerVersion => match version(i) {
                Parsed::Done(v, n) => {
                    self.stage = TsClientVersion;
                    self.tx = Some(RfbTx {
                        server_version: Some(v),
                        ..RfbTx::default()
                    });
                    Step::Consumed(n)
                }
                Parsed::Incomplete => Step::Incomplete,
                Parsed::Error => Step::Fatal,
            },
            TsClientVersion => match version(i) {
                Parsed::Done(v, n) => {
                    self.stage = if v == (*b"003", *b"003") {
                        TcServerSecType
                    } else {
                        TcSupportedTypes
                    };
                    if let Some(t) = self.tx.as_mut() {
                        t.client_version = Some(v);
                    }
                    Step::Consumed(n)
                }
                Parsed::Incomplete => Step::Incomplete,
                Parsed::Error => Step::Fatal,
            },
            TcSupportedTypes => {
                let Some(&count) = i.first() else {
                    return Step::Incomplete;
                };
                let (_, n) = take!(fixed(1 + usize::from(count)));
                self.stage = if count == 0 {
                    TcFailureReason
                } else {
                    TsSecTypeSelection
                };
                Step::Consumed(n)
            }
            TsSecTypeSelection => {
                let (b, n) = take!(fixed(1));
                let t = b[0];
                if let Some(tx) = self.tx.as_mut() {
                    tx.chosen_security_type = Some(u32::from(t));
                }
                match t {
                    2 => self.stage = TcVncChallenge,
                    1 => self.stage = TsClientInit,
                    _ => {
                        // Not an error: an unknown (proprietary) type ends the mapping.
                        self.set_event(EV_UNIMPLEMENTED_SECURITY_TYPE);
                        self.stage = Skip;
                        return Step::ParsedThenSkip(n);
                    }
                }
                Step::Consumed(n)
            }
            TcServerSecType => {
                let (b, n) = take!(fixed(4));
                let t = be32(b);
                match t {
                    0 => self.stage = TcFailureReason,
                    1 => self.stage = TsClientInit,
                    2 => self.stage = TcVncChallenge,
                    _ => {
                        self.give_up(EV_UNIMPLEMENTED_SECURITY_TYPE);
                        return Step::ParsedThenSkip(n);
                    }
                }
                if let Some(tx) = self.tx.as_mut() {
                    tx.chosen_security_type = Some(t);
                }
                Step::Consumed(n)
            }
            TcVncChallenge | TsVncResponse => {
                let (b, n) = take!(fixed(16));
                let mut v = [0u8; 16];
                v.copy_from_slice(b);
                if let Some(tx) = self.tx.as_mut() {
                    if stage == TcVncChallenge {
                        tx.vnc_challenge = Some(v);
                    } else {
                        tx.vnc_response = Some(v);
                    }
                }
                self.stage = if stage == TcVncChallenge {
                    TsVncResponse
                } else {
                    TcSecurityResult
                };
                Step::Consumed(n)
            }
            TcSecurityResult => {
                let (b, n) = take!(fixed(4));
                match be32(b) {
                    0 => {
                        self.stage = TsClientInit;
                        if let Some(tx) = self.tx.as_mut() {
                            tx.security_result = Some(0);
                        }
                    }
                    1 => self.stage = TcFailureReason,
                    _ => {
                        self.give_up(EV_UNKNOWN_SECURITY_RESULT);
                        return Step::All;
                    }
                }
                Step::Consumed(n)
            }
            TcFailureReason => {
                if i.len() < 4 {
                    return Step::Incomplete;
                }
                let len = be32(i) as usize;
                let Some(end) = 4usize.checked_add(len).filter(|&e| e <= i.len()) else {
                    return Step::Incomplete;
                };
                let reason = &i[4..end];
                if std::str::from_utf8(reason).is_err() {
                    self.give_up(EV_MALFORMED_MESSAGE);
                    return Step::All;
                }
                if let Some(tx) = self.tx.as_mut() {
                    tx.failure_reason = Some(reason.to_vec());
                }
                // Suricata takes the rest of the data with it and stays here.
                Step::All
            }
            TsClientInit => {
                let (b, n) = take!(fixed(1));
                self.stage = TcServerInit;
                if let Some(tx) = self.tx.as_mut() {
                    tx.shared = Some(b[0] != 0);
                }
                Step::Consumed(n)
            }
            TcServerInit => {
                let (si, n) = take!(server_init(i));
                self.stage = Skip;
                if let Some(tx) = self.tx.as_mut() {
                    tx.server_init = Some(si);
                    tx.complete = true;
                }
                Step::Consumed(n)
            }
            Skip => Step::All,
        }
    }

    /// The `rfb` object of EVE records and alerts.
    fn write(&self, w: &mut JsonWriter) {
        let Some(tx) = &self.tx else {
            return;
        };
        w.open_object("rfb");
        for (key, v) in [
            ("server_protocol_version", &tx.server_version),
            ("client_protocol_version", &tx.client_version),
        ] {
            if let Some((maj, min)) = v {
                w.open_object(key);
                w.set_bytes("major", maj);
                w.set_bytes("minor", min);
                w.close();
            }
        }
        w.open_object("authentication");
        if let Some(t) = tx.chosen_security_type {
            w.set_u64("security_type", u64::from(t));
            if t == 2 {
                w.open_object("vnc");
                if let Some(c) = &tx.vnc_challenge {
                    w.key("challenge").hex(c);
                }
                if let Some(r) = &tx.vnc_response {
                    w.key("response").hex(r);
                }
                w.close();
            }
        }
        if let Some(r) = tx.security_result {
            let s;
            let v = match r {
                0 => "OK",
                1 => "FAIL",
                2 => "TOOMANY",
                n => {
                    s = format!("UNKNOWN ({n})");
                    &s
                }
            };
            w.set_str("security_result", v);
        }
        w.close();
        if let Some(r) = &tx.failure_reason {
            w.set_bytes("server_security_failure_reason", r);
        }
        if let Some(s) = tx.shared {
            w.key("screen_shared").bool(s);
        }
        if let Some(si) = &tx.server_init {
            w.open_object("framebuffer");
            w.set_u64("width", u64::from(si.width));
            w.set_u64("height", u64::from(si.height));
            w.set_bytes("name", &si.name);
            let p = &si.pixel_format;
            w.open_object("pixel_format");
            w.set_u64("bits_per_pixel", u64::from(p.bits_per_pixel));
            w.set_u64("depth", u64::from(p.depth));
            w.key("big_endian").bool(p.big_endian);
            w.key("true_color").bool(p.true_color);
            w.set_u64("red_max", u64::from(p.red_max));
            w.set_u64("green_max", u64::from(p.green_max));
            w.set_u64("blue_max", u64::from(p.blue_max));
            w.set_u64("red_shift", u64::from(p.red_shift));
            w.set_u64("green_shift", u64::from(p.green_shift));
            w.set_u64("blue_shift", u64::from(p.blue_shift));
            w.close();
            w.close();
        }
        w.close();
    }

    fn complete(&self) -> bool {
        self.tx.as_ref().is_some_and(|t| t.complete)
    }
}

enum Step {
    /// A message of this many bytes was parsed.
    Consumed(usize),
    /// A message of this many bytes was parsed, and the mapping stops (an unknown security
    /// type): the rest is skipped.
    ParsedThenSkip(usize),
    /// More data is needed.
    Incomplete,
    /// The rest of the data is taken (skipped).
    All,
    /// The version exchange failed.
    Fatal,
}

impl AppParser for RfbState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.failed || data.is_empty() {
            return false;
        }
        if self.stage == Stage::Skip {
            self.pending = Default::default();
            return false;
        }
        let d = usize::from(dir == Dir::ToClient);
        self.pending[d].extend_from_slice(data);
        if !self.run(dir, None, 0) {
            self.failed = true;
            self.pending = Default::default();
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
        if self.failed || data.is_empty() {
            return false;
        }
        if self.stage == Stage::Skip {
            self.pending = Default::default();
            return false;
        }
        let d = usize::from(dir == Dir::ToClient);
        let buf_abs = fc.offset.saturating_sub(self.pending[d].len() as u64);
        self.pending[d].extend_from_slice(data);
        if !self.run(dir, Some(fc), buf_abs) {
            self.failed = true;
            self.pending = Default::default();
            return true;
        }
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        let d = usize::from(dir == Dir::ToClient);
        self.pending[d].clear();
        if self.stage != Stage::Skip {
            self.stage = Stage::Skip;
            if let Some(t) = self.tx.as_mut() {
                t.complete = true;
            }
        }
    }

    fn tx_count(&self) -> u64 {
        u64::from(self.tx.is_some())
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        u64::from(self.complete())
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        if self.tx.is_some() {
            out.push(0);
        }
    }

    fn buffer_ready(&self, _tx: u64, _buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        (self.complete() || closed || self.failed).then_some(true)
    }

    fn buffer(&self, _tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match (buf, self.tx.as_ref().and_then(|t| t.server_init.as_ref())) {
            (BUF_NAME, Some(si)) if !si.name.is_empty() => f(&si.name),
            _ => false,
        }
    }

    fn has_event(&self, _tx: u64, ev: u16) -> bool {
        ev < 8 && self.tx.as_ref().is_some_and(|t| t.events & (1 << ev) != 0)
    }

    fn tx_final(&self, _tx: u64, closed: bool) -> bool {
        closed || self.failed || self.complete()
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        if *c.flow_logged || self.tx.is_none() || !(self.complete() || c.closed) {
            return;
        }
        *c.flow_logged = true;
        *c.next = 1;
        c.logged += 1;
        if !c.write || !c.out.wants_type("rfb") {
            return;
        }
        let Some(mut rec) = c.out.record(EventKind::Protocol) else {
            return;
        };
        write_eve_header(&mut rec, &c.rec.header("rfb", true));
        self.write(&mut rec);
        rec.close();
        let _ = rec.commit();
    }

    fn drain_events(&mut self, _from: u64, flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        if flow_logged {
            return;
        }
        let Some(t) = self.tx.as_mut() else {
            return;
        };
        let new = t.events & !t.events_reported;
        t.events_reported = t.events;
        for (i, name) in EVENT_NAMES.iter().enumerate() {
            if new & (1 << i) != 0 {
                f(AppAnomaly {
                    tx_id: 0,
                    name,
                    upper: false,
                });
            }
        }
    }

    fn alert_members(&self, _tx: u64, w: &mut JsonWriter) -> bool {
        if self.tx.is_none() {
            return false;
        }
        self.write(w);
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
    const RANDOM_SEEDS: &[&[u8]] = &[
        b"RFB 003.008\n",
        b"RFB 003.003\n",
        b"\x01\x02",
        b"\x00\x00\x00\x00",
    ];

    #[test]
    fn random_input_never_panics() {
        crate::common::testing::random_input_never_panics(&PROTOCOL, true, RANDOM_SEEDS);
    }

    fn server_init_msg(name: &[u8]) -> Vec<u8> {
        let mut v = vec![
            0x05, 0x00, 0x03, 0x20, 0x20, 0x18, 0x00, 0x01, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff,
            0x10, 0x08, 0x00, 0x00, 0x00, 0x00,
        ];
        v.extend((name.len() as u32).to_be_bytes());
        v.extend(name);
        v
    }

    /// A 3.8 handshake with VNC authentication, each direction fed in `chunk`-byte pieces.
    fn handshake(chunk: usize) -> RfbState {
        let mut s = RfbState::default();
        let steps: Vec<(Dir, Vec<u8>)> = vec![
            (Dir::ToClient, b"RFB 003.008\n".to_vec()),
            (Dir::ToServer, b"RFB 003.008\n".to_vec()),
            (Dir::ToClient, vec![2, 2, 16]),
            (Dir::ToServer, vec![2]),
            (Dir::ToClient, vec![0xaa; 16]),
            (Dir::ToServer, vec![0xbb; 16]),
            (Dir::ToClient, vec![0, 0, 0, 0]),
            (Dir::ToServer, vec![1]),
            (Dir::ToClient, server_init_msg(b"desk.localdomain")),
        ];
        for (dir, msg) in steps {
            for c in msg.chunks(chunk) {
                assert!(!AppParser::parse(&mut s, dir, c));
            }
        }
        s
    }

    #[test]
    fn full_handshake_in_pieces() {
        for chunk in [1, 3, 100] {
            let s = handshake(chunk);
            let t = s.tx().unwrap();
            assert!(t.complete, "chunk {chunk}");
            assert_eq!(t.server_version, Some((*b"003", *b"008")));
            assert_eq!(t.chosen_security_type, Some(2));
            assert_eq!(t.vnc_challenge, Some([0xaa; 16]));
            assert_eq!(t.security_result, Some(0));
            assert_eq!(t.shared, Some(true));
            let si = t.server_init.as_ref().unwrap();
            assert_eq!((si.width, si.height), (1280, 800));
            assert_eq!(si.name, b"desk.localdomain");
            assert_eq!(si.pixel_format.bits_per_pixel, 32);
            assert_eq!(t.events, 0);
            let mut name = Vec::new();
            assert!(s.buffer(0, BUF_NAME, Dir::ToClient, &mut |b| {
                name = b.to_vec();
                true
            }));
            assert_eq!(name, b"desk.localdomain");
        }
    }

    #[test]
    fn eve_object() {
        let s = handshake(7);
        let mut w = JsonWriter::new();
        w.start_object();
        s.write(&mut w);
        w.close();
        let j = String::from_utf8(w.into_inner()).unwrap();
        assert!(j.contains(r#""server_protocol_version":{"major":"003","minor":"008"}"#));
        assert!(j.contains(r#""authentication":{"security_type":2,"vnc":{"challenge":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","response":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},"security_result":"OK"}"#), "{j}");
        assert!(j.contains(r#""screen_shared":true,"framebuffer":{"width":1280"#));
    }

    #[test]
    fn unknown_type_wrong_direction_and_bad_version() {
        let mut s = RfbState::default();
        AppParser::parse(&mut s, Dir::ToClient, b"RFB 003.889\n");
        AppParser::parse(&mut s, Dir::ToServer, b"RFB 003.008\n");
        AppParser::parse(&mut s, Dir::ToClient, &[1, 30]);
        AppParser::parse(&mut s, Dir::ToServer, &[30]);
        let t = s.tx().unwrap();
        assert_eq!(t.chosen_security_type, Some(30));
        assert!(s.has_event(0, u16::from(EV_UNIMPLEMENTED_SECURITY_TYPE)));
        assert!(!s.complete());

        let mut s = RfbState::default();
        AppParser::parse(&mut s, Dir::ToClient, b"RFB 003.008\n");
        AppParser::parse(&mut s, Dir::ToClient, &[1, 2]);
        assert!(s.has_event(0, u16::from(EV_CONFUSED_STATE)));
        assert!(s.complete());

        let mut s = RfbState::default();
        assert!(AppParser::parse(&mut s, Dir::ToClient, b"RFB 3.8.0000\n"));
        assert!(s.tx().is_none());
    }

    #[test]
    fn long_messages_are_bounded() {
        let mut s = RfbState::default();
        AppParser::parse(&mut s, Dir::ToClient, b"RFB 003.003\n");
        AppParser::parse(&mut s, Dir::ToServer, b"RFB 003.003\n");
        AppParser::parse(&mut s, Dir::ToClient, &[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        for _ in 0..100 {
            AppParser::parse(&mut s, Dir::ToClient, &[b'A'; 1000]);
        }
        assert!(s.pending[1].len() <= MAX_PENDING);
        assert!(s.has_event(0, u16::from(EV_MALFORMED_MESSAGE)));
    }

    #[test]
    fn sectype_and_secresult_keywords() {
        let s = handshake(50);
        let m = |setup: crate::registry::KeywordSetup, v: &str| {
            setup(Some(v)).unwrap().matches(&s, 0, Dir::ToServer)
        };
        assert_eq!(m(sectype_setup, "2"), Some(true));
        assert_eq!(m(sectype_setup, ">3"), Some(false));
        assert_eq!(m(secresult_setup, "OK"), Some(true));
        assert_eq!(m(secresult_setup, "unknown"), Some(false));
        assert_eq!(m(secresult_setup, "0"), Some(true));
        assert_eq!(m(secresult_setup, "!0"), Some(false));
        assert!(secresult_setup(Some("maybe")).is_err());
        assert!(sectype_setup(None).is_err());
        // Not decided before the handshake is over.
        let mut p = RfbState::default();
        AppParser::parse(&mut p, Dir::ToClient, b"RFB 003.008\n");
        assert_eq!(
            sectype_setup(Some("2"))
                .unwrap()
                .matches(&p, 0, Dir::ToServer),
            None
        );
    }

    #[test]
    fn probe_rfb() {
        assert_eq!(probe(Dir::ToClient, b"RF"), Probe::NeedMore);
        assert_eq!(probe(Dir::ToClient, b"rfb 003.008\n"), Probe::Yes);
        assert_eq!(probe(Dir::ToClient, b"SSH-"), Probe::No);
    }
}
