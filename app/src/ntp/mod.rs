//! NTP (v3, v4) over UDP port 123: detection, transactions and events as Suricata 7's NTP
//! parser (`rust/src/ntp`), decoding with the Rusticata `ntp-parser` crate Suricata uses.
//! Suricata 7 writes no `ntp` EVE record; neither does shrike.
//!
//! * Detection: a probing parser on port 123: a datagram `ntp-parser` decodes (version 3 or 4).
//! * A client or symmetric-active message opens a transaction of its direction; other modes
//!   (server, broadcast, control) open none.
//! * Events (Suricata's names): `malformed_data` (on the flow's last transaction, when a
//!   datagram does not decode; the parser error is counted). `unsolicited_response`,
//!   `not_request` and `not_response` exist for rules but Suricata 7 never raises them.

use std::any::Any;

use ntp_parser::{parse_ntp, NtpMode, NtpPacket};

use crate::anomaly::AppAnomaly;
use crate::common::txlist::{Tx, TxList};
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Most live transactions per flow.
const MAX_TXS: usize = 256;

/// NTP events (Suricata's names), in id order.
pub const EVENT_NAMES: &[&str] = &[
    "unsolicited_response",
    "malformed_data",
    "not_request",
    "not_response",
];
const EV_MALFORMED: u8 = 1;

/// NTP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "ntp",
    aliases: &[],
    ip_protos: &[17],
    ports: &[123],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[],
    events: EVENT_NAMES,
    keywords: &[],
    generic_stats: true,
};

/// Suricata's NTP probing parser.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    match parse_ntp(data) {
        Ok(_) => Probe::Yes,
        Err(nom::Err::Incomplete(_)) => Probe::NeedMore,
        Err(_) => Probe::No,
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(NtpState::default())
}

/// One NTP request: the reference id of the message.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NtpTx {
    /// The message's reference id.
    pub xid: u32,
}

/// Per-flow NTP state.
#[derive(Debug)]
pub struct NtpState {
    txs: TxList<NtpTx>,
}

impl Default for NtpState {
    fn default() -> Self {
        NtpState {
            txs: TxList::new(MAX_TXS),
        }
    }
}

impl NtpState {
    /// Transaction `id`, while live.
    pub fn tx(&self, id: u64) -> Option<&Tx<NtpTx>> {
        self.txs.get(id)
    }

    /// One datagram; false when it does not decode.
    pub fn parse_msg(&mut self, dir: Dir, data: &[u8]) -> bool {
        match parse_ntp(data) {
            Ok((_, msg)) => {
                let (mode, ref_id) = match msg {
                    NtpPacket::V3(p) => (p.mode, p.ref_id),
                    NtpPacket::V4(p) => (p.mode, p.ref_id),
                };
                if mode == NtpMode::SymmetricActive || mode == NtpMode::Client {
                    self.txs.push(dir, 0, NtpTx { xid: ref_id });
                }
                true
            }
            Err(_) => {
                if let Some(t) = self.txs.last_mut() {
                    t.raise(EV_MALFORMED);
                }
                false
            }
        }
    }
}

impl AppParser for NtpState {
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

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.txs.get(tx).is_some_and(|t| t.has(ev))
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // No EVE record (as Suricata 7): count the transactions and free them.
        let end = self.txs.count();
        c.logged += self.txs.from_id(*c.next).count() as u64;
        *c.next = end;
        self.txs.free_before(end);
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        self.txs.drain_events(from, EVENT_NAMES, f);
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

    fn packet(vn: u8, mode: u8) -> Vec<u8> {
        let mut d = vec![0u8; 48];
        d[0] = (vn << 3) | mode;
        d[12..16].copy_from_slice(&0x7f00_0001_u32.to_be_bytes());
        d
    }

    #[test]
    fn client_opens_a_transaction_server_does_not() {
        let mut s = NtpState::default();
        assert_eq!(probe(Dir::ToServer, &packet(4, 3)), Probe::Yes);
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &packet(4, 3)));
        assert_eq!(s.tx(0).unwrap().data.xid, 0x7f00_0001);
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &packet(4, 4)));
        assert_eq!(s.tx_count(), 1);
        // Cut short: malformed, on the last transaction.
        assert!(AppParser::parse(&mut s, Dir::ToClient, &packet(4, 4)[..20]));
        assert!(s.tx(0).unwrap().has(u16::from(EV_MALFORMED)));
    }

    #[test]
    fn other_versions_are_not_ntp_and_nothing_panics() {
        assert_eq!(probe(Dir::ToServer, &packet(2, 3)), Probe::No);
        let p = packet(4, 3);
        let mut s = NtpState::default();
        for n in 0..p.len() {
            let _ = probe(Dir::ToServer, &p[..n]);
            let _ = AppParser::parse(&mut s, Dir::ToServer, &p[..n]);
        }
    }
}
