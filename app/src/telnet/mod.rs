//! Telnet detection, as Suricata 7 (`rust/src/telnet`): a probing parser on port 23 that
//! takes any data of two bytes or more, in either direction. Suricata's parser creates no
//! transaction and logs no record; shrike only marks the flow `telnet` (`app_proto`,
//! `alert telnet`, `app-layer-protocol:telnet`, the `app_layer.flow.telnet` counter).

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
    Box::new(TelnetState)
}

/// Per-flow Telnet state: nothing is kept.
#[derive(Debug, Default)]
pub struct TelnetState;

impl AppParser for TelnetState {
    fn parse(&mut self, _dir: Dir, _data: &[u8]) -> bool {
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

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
        let mut s = TelnetState;
        assert!(!AppParser::parse(&mut s, Dir::ToServer, b"login"));
        assert_eq!(s.tx_count(), 0);
    }
}
