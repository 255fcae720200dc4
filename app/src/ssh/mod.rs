//! SSH: the version exchange (banner) of both sides and the binary packet framing up to
//! `SSH_MSG_NEWKEYS`, as Suricata 7's SSH parser has it. One transaction per flow.
//!
//! * Detection: `SSH-` at the start of either direction (content pattern, any port).
//! * Banner: `SSH-<protoversion>-<softwareversion>[ comments]` ending in LF or CRLF; a line
//!   over [`MAX_BANNER_LEN`] bytes raises `long_banner` (and is still parsed), one that does
//!   not start `SSH-` raises `invalid_banner` and ends parsing of the flow.
//! * Records: after the banner, `uint32 packet_length, byte padding_length, byte msg_code`,
//!   skipped by length; `SSH_MSG_NEWKEYS` (21) finishes the direction. A length below 2 raises
//!   `invalid_record` and ends parsing. Encrypted records after NEWKEYS are not inspected.
//! * EVE `ssh` record (`client`/`server` with `proto_version` and `software_version`) once
//!   both banners are in, as Suricata logs it with hassh off (its default).
//! * Rules: `alert ssh`, `ssh.proto` and `ssh.software` (per direction),
//!   `app-layer-event:ssh.<event>`.
//!
//! Not yet: HASSH (`ssh.hassh*`, the KEXINIT algorithm lists), `ssh.protoversion` /
//! `ssh.softwareversion` legacy keywords, bypass after NEWKEYS (issue "Protocols II").

use std::any::Any;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Longest banner line Suricata accepts without `long_banner`.
pub const MAX_BANNER_LEN: usize = 256;
/// `SSH_MSG_NEWKEYS`.
const MSG_NEWKEYS: u8 = 21;
/// Record header bytes: length (4), padding length (1), message code (1).
const RECORD_HEADER_LEN: usize = 6;

/// Buffer ids (indexes into [`PROTOCOL`]'s buffers).
const BUF_PROTO: u16 = 0;
const BUF_SOFTWARE: u16 = 1;

/// SSH events, in the order of [`PROTOCOL`]'s `events` (Suricata's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SshEvent {
    /// A banner line that is not `SSH-x-y`.
    InvalidBanner = 0,
    /// A banner line of [`MAX_BANNER_LEN`] bytes or more.
    LongBanner = 1,
    /// A record with a length below 2.
    InvalidRecord = 2,
    /// A key-exchange record too long to reassemble (HASSH only; never raised yet).
    LongKexRecord = 3,
}

const EVENT_NAMES: &[&str] = &[
    "invalid_banner",
    "long_banner",
    "invalid_record",
    "long_kex_record",
];

/// SSH in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "ssh",
    aliases: &[],
    ip_protos: &[6],
    ports: &[22],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[
        BufferDesc {
            name: "ssh.proto",
            dir: None,
        },
        BufferDesc {
            name: "ssh.software",
            dir: None,
        },
    ],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

/// `SSH-` at the start of the direction (Suricata's case-insensitive pattern).
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    let n = data.len().min(4);
    if !data[..n].eq_ignore_ascii_case(&b"SSH-"[..n]) {
        Probe::No
    } else if n < 4 {
        Probe::NeedMore
    } else {
        Probe::Yes
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(SshState::default())
}

/// Where one direction stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Waiting for the banner line.
    #[default]
    Banner,
    /// A long banner was parsed; skipping to its end of line.
    BannerWaitEol,
    /// Banner done; reading records.
    Records,
    /// `SSH_MSG_NEWKEYS` seen: the rest is encrypted.
    Finished,
}

/// One side of the exchange.
#[derive(Debug, Default)]
pub struct SshSide {
    /// Protocol version from the banner (`2.0`).
    pub proto_version: Vec<u8>,
    /// Software version from the banner (`OpenSSH_8.2p1`).
    pub software_version: Vec<u8>,
    /// Where the direction stands.
    pub stage: Stage,
    /// Partial line or record header carried to the next data.
    pending: Vec<u8>,
    /// Bytes of the current record still to skip.
    skip: u64,
}

/// Per-flow SSH state (one transaction).
#[derive(Debug, Default)]
pub struct SshState {
    /// The client's side.
    pub client: SshSide,
    /// The server's side.
    pub server: SshSide,
    /// Events raised (bit per [`SshEvent`]).
    events: u8,
    /// Events already reported to EVE `anomaly`.
    events_reported: u8,
    /// Parsing stopped on invalid data.
    failed: bool,
}

impl SshState {
    fn side(&self, dir: Dir) -> &SshSide {
        match dir {
            Dir::ToServer => &self.client,
            Dir::ToClient => &self.server,
        }
    }

    fn side_mut(&mut self, dir: Dir) -> &mut SshSide {
        match dir {
            Dir::ToServer => &mut self.client,
            Dir::ToClient => &mut self.server,
        }
    }

    fn set_event(&mut self, e: SshEvent) {
        self.events |= 1 << (e as u8);
    }

    /// Whether event `e` was raised.
    pub fn has(&self, e: SshEvent) -> bool {
        self.events & (1 << (e as u8)) != 0
    }

    /// Both banners are in (Suricata's log condition with hassh off).
    pub fn banners_done(&self) -> bool {
        self.client.stage >= Stage::Records && self.server.stage >= Stage::Records
    }

    /// Parse `data` of direction `dir`; false when the flow's data is invalid.
    fn feed(&mut self, dir: Dir, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            let stage = self.side(dir).stage;
            match stage {
                Stage::Banner | Stage::BannerWaitEol => {
                    let side = self.side_mut(dir);
                    let Some(eol) = data.iter().position(|&c| c == b'\n') else {
                        if stage == Stage::Banner {
                            let room = MAX_BANNER_LEN.saturating_sub(side.pending.len());
                            side.pending
                                .extend_from_slice(&data[..data.len().min(room)]);
                            if side.pending.len() >= MAX_BANNER_LEN {
                                // No end of line within the limit: parse what is there.
                                let line = std::mem::take(&mut side.pending);
                                if !self.banner(dir, &line) {
                                    return false;
                                }
                                self.side_mut(dir).stage = Stage::BannerWaitEol;
                                self.set_event(SshEvent::LongBanner);
                            }
                        }
                        return true;
                    };
                    let (line, rest) = (&data[..eol], &data[eol + 1..]);
                    data = rest;
                    if stage == Stage::BannerWaitEol {
                        side.stage = Stage::Records;
                        continue;
                    }
                    let mut full = std::mem::take(&mut side.pending);
                    let room = MAX_BANNER_LEN.saturating_sub(full.len());
                    full.extend_from_slice(&line[..line.len().min(room + 1)]);
                    let long = full.len() >= MAX_BANNER_LEN || line.len() > room;
                    let full = full.strip_suffix(b"\r").unwrap_or(&full);
                    if !self.banner(dir, full) {
                        return false;
                    }
                    if long {
                        self.set_event(SshEvent::LongBanner);
                    }
                    self.side_mut(dir).stage = Stage::Records;
                }
                Stage::Records => {
                    let side = self.side_mut(dir);
                    if side.skip > 0 {
                        let n = usize::try_from(side.skip)
                            .unwrap_or(usize::MAX)
                            .min(data.len());
                        side.skip -= n as u64;
                        data = &data[n..];
                        continue;
                    }
                    let need = RECORD_HEADER_LEN - side.pending.len();
                    let take = need.min(data.len());
                    side.pending.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    if side.pending.len() < RECORD_HEADER_LEN {
                        return true;
                    }
                    let h = std::mem::take(&mut side.pending);
                    let len = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
                    if len < 2 {
                        self.set_event(SshEvent::InvalidRecord);
                        return false;
                    }
                    side.skip = u64::from(len) - 2;
                    if h[5] == MSG_NEWKEYS {
                        side.stage = Stage::Finished;
                    }
                }
                Stage::Finished => return true,
            }
        }
        true
    }

    /// A banner line of `dir` (without its end of line).
    fn banner(&mut self, dir: Dir, line: &[u8]) -> bool {
        let Some(rest) = line.strip_prefix(b"SSH-") else {
            self.set_event(SshEvent::InvalidBanner);
            return false;
        };
        let Some(dash) = rest.iter().position(|&c| c == b'-').filter(|&i| i > 0) else {
            self.set_event(SshEvent::InvalidBanner);
            return false;
        };
        let proto = &rest[..dash];
        let sw = &rest[dash + 1..];
        let end = sw
            .iter()
            .position(|&c| matches!(c, b' ' | b'\r' | b'\n'))
            .unwrap_or(sw.len());
        let side = self.side_mut(dir);
        side.proto_version = proto.to_vec();
        side.software_version = sw[..end].to_vec();
        true
    }
}

impl AppParser for SshState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if self.failed {
            return false;
        }
        if !self.feed(dir, data) {
            self.failed = true;
            return true;
        }
        false
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        // The framing is lost: stop parsing this direction (what was parsed stays).
        let side = self.side_mut(dir);
        if side.stage < Stage::Finished {
            side.stage = Stage::Finished;
            side.pending.clear();
        }
    }

    fn tx_count(&self) -> u64 {
        1
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        u64::from(self.side(dir).stage >= Stage::Records)
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.push(0);
    }

    fn buffer_ready(&self, _tx: u64, _buf: u16, dir: Dir, closed: bool) -> Option<bool> {
        (self.side(dir).stage >= Stage::Records || closed || self.failed).then_some(true)
    }

    fn buffer(&self, _tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let side = self.side(dir);
        if side.stage < Stage::Records {
            return false;
        }
        match buf {
            BUF_PROTO => f(&side.proto_version),
            BUF_SOFTWARE => f(&side.software_version),
            _ => false,
        }
    }

    fn has_event(&self, _tx: u64, ev: u16) -> bool {
        ev < 8 && self.events & (1 << ev) != 0
    }

    fn tx_final(&self, _tx: u64, closed: bool) -> bool {
        closed || self.failed || (self.banners_done())
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        if *c.flow_logged || !self.banners_done() {
            return;
        }
        *c.flow_logged = true;
        *c.next = 1;
        c.logged += 1;
        if !c.write {
            return;
        }
        let Some(mut rec) = c.out.record(EventKind::Protocol) else {
            return;
        };
        write_eve_header(&mut rec, &c.rec.header("ssh", true));
        rec.set_u64("tx_id", 0);
        self.write_ssh(&mut rec);
        rec.close();
        let _ = rec.commit();
    }

    fn drain_events(&mut self, _from: u64, flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        if flow_logged {
            return;
        }
        let new = self.events & !self.events_reported;
        self.events_reported = self.events;
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
        self.write_ssh(w);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl SshState {
    /// The `ssh` object of EVE records and alerts.
    fn write_ssh(&self, w: &mut JsonWriter) {
        w.open_object("ssh");
        for (key, side) in [("client", &self.client), ("server", &self.server)] {
            if side.stage < Stage::Records {
                continue;
            }
            w.open_object(key);
            w.set_bytes("proto_version", &side.proto_version);
            w.set_bytes("software_version", &side.software_version);
            w.close();
        }
        w.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(code: u8, body: usize) -> Vec<u8> {
        let len = (body + 2) as u32;
        let mut v = len.to_be_bytes().to_vec();
        v.push(4);
        v.push(code);
        v.extend(std::iter::repeat_n(0u8, body));
        v
    }

    #[test]
    fn banners_records_and_newkeys_in_pieces() {
        let mut s = SshState::default();
        let mut cli = b"SSH-2.0-OpenSSH_8.2p1 Ubuntu-4\r\n".to_vec();
        cli.extend(record(20, 100));
        cli.extend(record(MSG_NEWKEYS, 10));
        cli.extend(b"encrypted junk");
        for chunk in cli.chunks(3) {
            assert!(!AppParser::parse(&mut s, Dir::ToServer, chunk));
        }
        assert_eq!(s.client.proto_version, b"2.0");
        assert_eq!(s.client.software_version, b"OpenSSH_8.2p1");
        assert_eq!(s.client.stage, Stage::Finished);
        assert!(!s.banners_done());
        AppParser::parse(&mut s, Dir::ToClient, b"SSH-1.99-srv\n");
        assert!(s.banners_done());
        assert_eq!(s.server.software_version, b"srv");
        assert_eq!(s.events, 0);
    }

    #[test]
    fn bad_input_raises_events_and_stops() {
        let mut s = SshState::default();
        assert!(AppParser::parse(&mut s, Dir::ToServer, b"HELLO\n"));
        assert!(s.has(SshEvent::InvalidBanner));
        // Nothing more is parsed, and no second error is reported.
        assert!(!AppParser::parse(&mut s, Dir::ToClient, b"SSH-2.0-x\n"));
        let mut s = SshState::default();
        let mut d = b"SSH-2.0-x\n".to_vec();
        d.extend([0, 0, 0, 1, 0, 0]);
        assert!(AppParser::parse(&mut s, Dir::ToServer, &d));
        assert!(s.has(SshEvent::InvalidRecord));
        let mut s = SshState::default();
        let long = [b"SSH-2.0-".as_slice(), &[b'a'; 400], b"\n"].concat();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &long));
        assert!(s.has(SshEvent::LongBanner));
        assert_eq!(s.client.stage, Stage::Records);
    }

    #[test]
    fn probe_needs_four_bytes() {
        assert_eq!(probe(Dir::ToServer, b"SS"), Probe::NeedMore);
        assert_eq!(probe(Dir::ToServer, b"ssh-2.0"), Probe::Yes);
        assert_eq!(probe(Dir::ToServer, b"GET /"), Probe::No);
    }
}
