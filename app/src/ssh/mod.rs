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
//! * HASSH, when enabled ([`HASSH_ENABLED`]: `app-layer.protocols.ssh.hassh: yes`, or a
//!   rule using an `ssh.hassh*` keyword, as in Suricata): the `SSH_MSG_KEXINIT` record of
//!   each side (reassembled up to [`MAX_KEX_RECORD_LEN`] bytes, `long_kex_record` above)
//!   gives `kex;encryption;mac;compression` (the client's client-to-server lists, the
//!   server's server-to-client lists) and its MD5; logged as `hassh.hash`/`hassh.string`
//!   and offered to `ssh.hassh`, `ssh.hassh.string` (client), `ssh.hassh.server`,
//!   `ssh.hassh.server.string` (server). With it on, the record waits for both NEWKEYS.
//!
//! * Legacy keywords `ssh.protoversion` (exact, or `2_compat`: `2...` or `1.99`) and
//!   `ssh.softwareversion` (exact), on the banner of the inspected direction.
//!
//! Not yet: bypass after NEWKEYS (the encrypted rest is skipped by length, not bypassed).

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};

use md5::{Digest as _, Md5};

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Longest banner line Suricata accepts without `long_banner`.
pub const MAX_BANNER_LEN: usize = 256;
/// The SSH parser settings (`app-layer.protocols.ssh`).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SshConfig {
    /// Compute and log HASSH (`app-layer.protocols.ssh.hassh`, default off). A rule with a
    /// hassh keyword turns it on too, as in Suricata.
    pub hassh: bool,
}

impl SshConfig {
    /// Apply the settings (HASSH is process-wide in Suricata: only ever turned on).
    pub fn apply(&self) {
        if self.hassh {
            HASSH_ENABLED.store(true, Ordering::Relaxed);
        }
    }
}

/// HASSH on (Suricata's process-wide switch: the config or a rule with a hassh keyword).
pub static HASSH_ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether HASSH is on.
pub fn hassh_enabled() -> bool {
    HASSH_ENABLED.load(Ordering::Relaxed)
}

/// Longest KEXINIT record body reassembled for HASSH (Suricata's limit).
pub const MAX_KEX_RECORD_LEN: u32 = 65535;
/// `SSH_MSG_KEXINIT`.
const MSG_KEXINIT: u8 = 20;
/// `SSH_MSG_NEWKEYS`.
const MSG_NEWKEYS: u8 = 21;
/// Record header bytes: length (4), padding length (1), message code (1).
const RECORD_HEADER_LEN: usize = 6;

/// Buffer ids (indexes into [`PROTOCOL`]'s buffers).
const BUF_PROTO: u16 = 0;
const BUF_SOFTWARE: u16 = 1;
const BUF_HASSH: u16 = 2;
const BUF_HASSH_STRING: u16 = 3;
const BUF_HASSH_SERVER: u16 = 4;
const BUF_HASSH_SERVER_STRING: u16 = 5;

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
        BufferDesc {
            name: "ssh.hassh",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ssh.hassh.string",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "ssh.hassh.server",
            dir: Some(Dir::ToClient),
        },
        BufferDesc {
            name: "ssh.hassh.server.string",
            dir: Some(Dir::ToClient),
        },
    ],
    events: EVENT_NAMES,
    keywords: &[
        KeywordDesc {
            name: "ssh.protoversion",
            dir: None,
            setup: protoversion_setup,
        },
        KeywordDesc {
            name: "ssh.softwareversion",
            dir: None,
            setup: softwareversion_setup,
        },
    ],
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
    /// HASSH string (`kex;enc;mac;comp`) from this side's KEXINIT.
    pub hassh_string: Vec<u8>,
    /// MD5 of [`SshSide::hassh_string`], lower-case hex.
    pub hassh: Vec<u8>,
    /// A KEXINIT record body being reassembled (`Some` while collecting).
    kex: Option<Vec<u8>>,
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
                        if let Some(k) = side.kex.as_mut() {
                            k.extend_from_slice(&data[..n]);
                        }
                        side.skip -= n as u64;
                        data = &data[n..];
                        if side.skip == 0 {
                            if let Some(k) = side.kex.take() {
                                if let Some((h, s)) = hassh_of(&k, dir == Dir::ToClient) {
                                    side.hassh_string.extend_from_slice(&s);
                                    side.hassh = h;
                                }
                            }
                        }
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
                    } else if h[5] == MSG_KEXINIT && hassh_enabled() {
                        if len - 2 < MAX_KEX_RECORD_LEN {
                            side.kex = Some(Vec::with_capacity((len - 2) as usize));
                        } else {
                            self.set_event(SshEvent::LongKexRecord);
                        }
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

    fn buffer_ready(&self, _tx: u64, buf: u16, dir: Dir, closed: bool) -> Option<bool> {
        let side = self.side(dir);
        let ready = if buf >= BUF_HASSH {
            // The KEXINIT follows the banner: wait for it (or for the end of the clear part).
            !side.hassh.is_empty() || side.stage == Stage::Finished
        } else {
            side.stage >= Stage::Records
        };
        (ready || closed || self.failed).then_some(true)
    }

    fn buffer(&self, _tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let side = self.side(dir);
        if side.stage < Stage::Records {
            return false;
        }
        let v = match buf {
            BUF_PROTO => &side.proto_version,
            BUF_SOFTWARE => &side.software_version,
            BUF_HASSH | BUF_HASSH_SERVER => &side.hassh,
            BUF_HASSH_STRING | BUF_HASSH_SERVER_STRING => &side.hassh_string,
            _ => return false,
        };
        !v.is_empty() && f(v)
    }

    fn has_event(&self, _tx: u64, ev: u16) -> bool {
        ev < 8 && self.events & (1 << ev) != 0
    }

    fn tx_final(&self, _tx: u64, closed: bool) -> bool {
        closed || self.failed || (self.banners_done())
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // Both banners in, or the flow's end (Suricata logs the transaction then too).
        let any_banner = self.client.stage >= Stage::Records || self.server.stage >= Stage::Records;
        let done = if hassh_enabled() {
            self.client.stage == Stage::Finished && self.server.stage == Stage::Finished
        } else {
            self.banners_done()
        };
        if *c.flow_logged || !(done || (c.closed && any_banner)) {
            return;
        }
        *c.flow_logged = true;
        *c.next = 1;
        // Not counted in `app_layer.tx.ssh`: the flow's one transaction exists from the
        // start, and Suricata 7 counts only transactions a parse call adds (0 for SSH).
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
            if side.stage < Stage::Records || side.proto_version.is_empty() {
                continue;
            }
            w.open_object(key);
            w.set_bytes("proto_version", &side.proto_version);
            if !side.software_version.is_empty() {
                w.set_bytes("software_version", &side.software_version);
            }
            if !side.hassh.is_empty() || !side.hassh_string.is_empty() {
                w.open_object("hassh");
                if !side.hassh.is_empty() {
                    w.set_bytes("hash", &side.hassh);
                }
                if !side.hassh_string.is_empty() {
                    w.set_bytes("string", &side.hassh_string);
                }
                w.close();
            }
            w.close();
        }
        w.close();
    }
}

/// `ssh.protoversion` / `ssh.softwareversion`: the banner field of the inspected direction
/// equals the value (`compat2`: the protocol version starts `2` or is `1.99`).
#[derive(Debug)]
struct VersionMatch {
    software: bool,
    compat2: bool,
    value: Vec<u8>,
}

/// The value inside optional quotes and blanks.
fn unquote(v: &str) -> &str {
    let v = v.trim();
    let v = v.strip_prefix('"').unwrap_or(v);
    let v = v.strip_suffix('"').unwrap_or(v);
    v.trim()
}

/// Suricata's `^[0-9]+([.\-0-9]+)?$` or `2_compat`.
fn protoversion_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let raw = v.ok_or("ssh.protoversion needs a value")?;
    let v = unquote(raw);
    let compat2 = v == "2_compat";
    let ok = compat2
        || (v.starts_with(|c: char| c.is_ascii_digit())
            && v.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-'));
    if !ok {
        return Err(format!("invalid ssh.protoversion value `{raw}`"));
    }
    Ok(Box::new(VersionMatch {
        software: false,
        compat2,
        value: v.as_bytes().to_vec(),
    }))
}

/// Suricata's `[0-9a-zA-Z:.\-_+ ]+`.
fn softwareversion_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let raw = v.ok_or("ssh.softwareversion needs a value")?;
    let v = unquote(raw);
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ":.-_+ \t".contains(c))
    {
        return Err(format!("invalid ssh.softwareversion value `{raw}`"));
    }
    Ok(Box::new(VersionMatch {
        software: true,
        compat2: false,
        value: v.as_bytes().to_vec(),
    }))
}

impl TxMatch for VersionMatch {
    fn matches(&self, parser: &dyn AppParser, _tx: u64, dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<SshState>()?;
        let side = s.side(dir);
        if side.stage < Stage::Records {
            return None;
        }
        let v = if self.software {
            &side.software_version
        } else {
            &side.proto_version
        };
        Some(if v.is_empty() {
            false
        } else if self.compat2 {
            v[0] == b'2' || v.starts_with(b"1.99")
        } else {
            *v == self.value
        })
    }
}

/// HASSH of a KEXINIT record body (after the message code): the MD5 (hex) and the
/// string; `server`: the server's (server-to-client lists). `None` when the body is short.
fn hassh_of(body: &[u8], server: bool) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut i = body.get(16..)?;
    let mut lists: [&[u8]; 10] = [&[]; 10];
    for l in lists.iter_mut() {
        let len = u32::from_be_bytes(i.get(..4)?.try_into().ok()?) as usize;
        *l = i.get(4..4usize.checked_add(len)?)?;
        i = &i[4 + len..];
    }
    // first_kex_packet_follows and reserved must be there too.
    i.get(..5)?;
    let pick = usize::from(server);
    let mut s = Vec::new();
    for (n, idx) in [0, 2 + pick, 4 + pick, 6 + pick].into_iter().enumerate() {
        if n > 0 {
            s.push(b';');
        }
        s.extend_from_slice(lists[idx]);
    }
    let d = Md5::digest(&s);
    let hex: Vec<u8> = d
        .iter()
        .flat_map(|b| {
            let h = b"0123456789abcdef";
            [h[usize::from(b >> 4)], h[usize::from(b & 15)]]
        })
        .collect();
    Some((hex, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    const RANDOM_SEEDS: &[&[u8]] = &[
        b"SSH-2.0-x\r\n",
        b"\x00\x00\x01\x00\x04\x14",
        b"\x00\x00\x00\x0c\x0a\x15",
    ];

    #[test]
    fn random_input_never_panics() {
        crate::common::testing::random_input_never_panics(&PROTOCOL, true, RANDOM_SEEDS);
    }

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

    fn kexinit(lists: [&str; 10]) -> Vec<u8> {
        let mut body = vec![MSG_KEXINIT];
        body.extend([7u8; 16]);
        for l in lists {
            body.extend((l.len() as u32).to_be_bytes());
            body.extend(l.as_bytes());
        }
        body.extend([0, 0, 0, 0, 0]);
        body.extend([0u8; 4]); // padding
        let mut v = ((body.len() + 1) as u32).to_be_bytes().to_vec();
        v.push(4);
        v.extend(body);
        v
    }

    #[test]
    fn hassh_from_kexinit_in_pieces() {
        HASSH_ENABLED.store(true, Ordering::Relaxed);
        let lists = [
            "kx", "hk", "enc-cs", "enc-sc", "mac-cs", "mac-sc", "none", "zlib", "", "",
        ];
        for chunk in [1, 5, 1000] {
            let mut s = SshState::default();
            let mut cli = b"SSH-2.0-c\r\n".to_vec();
            cli.extend(kexinit(lists));
            cli.extend(record(MSG_NEWKEYS, 0));
            for c in cli.chunks(chunk) {
                assert!(!AppParser::parse(&mut s, Dir::ToServer, c));
            }
            let mut srv = b"SSH-2.0-s\r\n".to_vec();
            srv.extend(kexinit(lists));
            AppParser::parse(&mut s, Dir::ToClient, &srv);
            assert_eq!(s.client.hassh_string, b"kx;enc-cs;mac-cs;none");
            assert_eq!(s.server.hassh_string, b"kx;enc-sc;mac-sc;zlib");
            let want: String = Md5::digest(b"kx;enc-cs;mac-cs;none")
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(s.client.hassh, want.as_bytes());
            assert_eq!(s.client.stage, Stage::Finished);
        }
        assert!(hassh_of(&[0; 20], false).is_none());
    }

    #[test]
    fn legacy_version_keywords() {
        let mut s = SshState::default();
        AppParser::parse(&mut s, Dir::ToServer, b"SSH-2.0-OpenSSH_8.2p1 x\r\n");
        AppParser::parse(&mut s, Dir::ToClient, b"SSH-1.99-Cisco-1.25\r\n");
        let m = |setup: crate::registry::KeywordSetup, v: &str, dir| {
            setup(Some(v)).unwrap().matches(&s, 0, dir)
        };
        assert_eq!(m(protoversion_setup, "2.0", Dir::ToServer), Some(true));
        assert_eq!(m(protoversion_setup, "2.0", Dir::ToClient), Some(false));
        assert_eq!(
            m(protoversion_setup, "\"2_compat\"", Dir::ToClient),
            Some(true)
        );
        assert_eq!(
            m(softwareversion_setup, "OpenSSH_8.2p1", Dir::ToServer),
            Some(true)
        );
        assert_eq!(
            m(softwareversion_setup, "OpenSSH", Dir::ToServer),
            Some(false)
        );
        assert_eq!(
            m(softwareversion_setup, "Cisco-1.25", Dir::ToClient),
            Some(true)
        );
        assert!(protoversion_setup(Some("two")).is_err());
        assert!(softwareversion_setup(Some("a/b")).is_err());
        let fresh = SshState::default();
        let k = protoversion_setup(Some("2.0")).unwrap();
        assert_eq!(k.matches(&fresh, 0, Dir::ToServer), None);
    }

    #[test]
    fn probe_needs_four_bytes() {
        assert_eq!(probe(Dir::ToServer, b"SS"), Probe::NeedMore);
        assert_eq!(probe(Dir::ToServer, b"ssh-2.0"), Probe::Yes);
        assert_eq!(probe(Dir::ToServer, b"GET /"), Probe::No);
    }
}
