//! Telnet detection, as Suricata 7 (`rust/src/telnet`): a probing parser on port 23 that
//! takes any data of two bytes or more, in either direction. Suricata's parser creates no
//! transaction and logs no record; shrike only marks the flow `telnet` (`app_proto`,
//! `alert telnet`, `app-layer-protocol:telnet`, the `app_layer.flow.telnet` counter), and
//! splits the messages for frames when a rule or the eve-log asks for them.

use std::any::Any;

use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Telnet in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "telnet",
    aliases: &[],
    ip_protos: &[6],
    ports: &[23],
    tcp: Detect::Port(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[],
    events: &[],
    keywords: &[],
    generic_stats: true,
};

/// Any data of two bytes or more (Suricata's probe has no other test).
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    if data.len() > 1 {
        Probe::Yes
    } else {
        Probe::NeedMore
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(TelnetState::default())
}

/// Most bytes held for an incomplete message (Suricata asks for more data without bound;
/// past this the direction stops).
const MAX_HELD: usize = 65_536;

/// Frame types ([`crate::frames::names`]).
const FRAME_PDU: u8 = 0;
const FRAME_CTL: u8 = 1;
const FRAME_DATA: u8 = 2;

/// Suricata's login state machine (`TelnetProtocolState`): it picks how responses split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Idle,
    LoginSent,
    LoginRecv,
    PasswdSent,
    PasswdRecv,
    AuthOk,
    AuthFail,
}

/// One direction: the bytes of an incomplete message and its open frames.
#[derive(Debug, Default)]
struct Side {
    held: Vec<u8>,
    pdu: Option<i64>,
    specific: Option<i64>,
    gap: bool,
    failed: bool,
}

/// Per-flow Telnet state. Suricata's parser creates no transaction and logs no record: the
/// messages are only split for frames (`pdu`, `ctl`, `data`), so nothing runs unless frames
/// are asked for.
#[derive(Debug, Default)]
pub struct TelnetState {
    sides: [Side; 2],
    state: Stage,
}

/// A message at the start of `d`: `Ok(Some((len, data)))` (data: the text of a data
/// message), `Ok(None)` when more bytes are needed, `Err` when it cannot parse (Suricata's
/// `parse_message` / `parse_welcome_message`, whose control messages read 2 or 3 bytes
/// without waiting for them).
/// A parsed message: its length, and the text of a data message.
type Message<'a> = Option<(usize, Option<&'a [u8]>)>;

fn message(d: &[u8], welcome: bool) -> Result<Message<'_>, ()> {
    let Some(&first) = d.first() else {
        return Ok(None);
    };
    if first == 0xff {
        let Some(&cmd) = d.get(1) else {
            return Ok(None);
        };
        let n = match cmd {
            251..=254 => 3,
            250 => {
                // Suboption: up to (not including) IAC SE, which is a message of its own.
                if d.len() < 3 {
                    return Ok(None);
                }
                return Ok(memchr::memmem::find(&d[3..], b"\xff\xf0").map(|i| (3 + i, None)));
            }
            _ => 2,
        };
        return if d.len() >= n {
            Ok(Some((n, None)))
        } else {
            Err(())
        };
    }
    let end: &[u8] = if welcome { b": " } else { b"\n" };
    Ok(memchr::memmem::find(d, end).map(|i| (i + end.len(), Some(&d[..i]))))
}

impl TelnetState {
    fn feed(&mut self, dir: Dir, data: &[u8], fc: &mut crate::frames::FrameCtx<'_>) -> bool {
        let d = usize::from(dir == Dir::ToClient);
        if self.sides[d].failed || data.is_empty() {
            return false;
        }
        if self.sides[d].gap {
            if data.len() < 2 {
                return false;
            }
            self.sides[d].gap = false;
        }
        let mut held = std::mem::take(&mut self.sides[d].held);
        let start_abs = fc.offset.saturating_sub(held.len() as u64);
        held.extend_from_slice(data);
        let mut off = 0usize;
        let mut err = false;
        while off < held.len() {
            let cur = &held[off..];
            let at = start_abs + off as u64;
            let side = &mut self.sides[d];
            if side.pdu.is_none() {
                side.pdu = fc.new_frame(at, -1, FRAME_PDU).or(Some(0));
            }
            if side.specific.is_none() {
                let ty = if cur[0] == 0xff {
                    FRAME_CTL
                } else {
                    FRAME_DATA
                };
                side.specific = fc.new_frame(at, -1, ty).or(Some(0));
            }
            let welcome = dir == Dir::ToClient
                && matches!(self.state, Stage::Idle | Stage::AuthFail | Stage::LoginRecv);
            match message(cur, welcome) {
                Ok(Some((n, text))) => {
                    let side = &mut self.sides[d];
                    fc.set_len(side.pdu.take(), n as i64);
                    fc.set_len(side.specific.take(), n as i64);
                    if let Some(t) = text {
                        self.state = match (dir, self.state) {
                            (Dir::ToServer, Stage::LoginSent) => Stage::LoginRecv,
                            (Dir::ToServer, Stage::PasswdSent) => Stage::PasswdRecv,
                            (Dir::ToClient, Stage::Idle | Stage::AuthFail) => Stage::LoginSent,
                            (Dir::ToClient, Stage::LoginRecv) => Stage::PasswdSent,
                            (Dir::ToClient, Stage::PasswdRecv) => match t {
                                b"Login incorrect" => Stage::AuthFail,
                                b"" => Stage::PasswdRecv,
                                _ if std::str::from_utf8(t).is_ok() => Stage::AuthOk,
                                _ => Stage::PasswdRecv,
                            },
                            (_, s) => s,
                        };
                    }
                    off += n;
                }
                Ok(None) => break,
                Err(()) => {
                    err = true;
                    break;
                }
            }
        }
        let side = &mut self.sides[d];
        if err {
            side.failed = true;
            return true;
        }
        held.drain(..off);
        if held.len() > MAX_HELD {
            side.failed = true;
            return true;
        }
        side.held = held;
        false
    }
}

impl AppParser for TelnetState {
    fn parse(&mut self, _dir: Dir, _data: &[u8]) -> bool {
        false
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        self.feed(dir, data, fc)
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        let s = &mut self.sides[usize::from(dir == Dir::ToClient)];
        // As Suricata, the open frames stay open (their length is set by the next message).
        s.gap = true;
        s.held.clear();
    }

    fn tx_count(&self) -> u64 {
        0
    }

    fn live_txs(&self, _dir: Dir, _out: &mut Vec<u64>) {}

    fn log(&mut self, _c: &mut LogCtx<'_>) {}

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

    #[test]
    fn two_bytes_on_port_23() {
        assert_eq!(probe(Dir::ToClient, b"\xff"), Probe::NeedMore);
        assert_eq!(probe(Dir::ToClient, b"\xff\xfd\x18"), Probe::Yes);
        let mut s = TelnetState::default();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, b"login"));
        assert_eq!(s.tx_count(), 0);
    }
}
