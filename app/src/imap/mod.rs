//! IMAP detection, as Suricata 7 (`src/app-layer-parser.c`): one case-sensitive content
//! pattern, `1|20|capability` within the first 12 bytes the client sends, and no parser
//! (the stock `suricata.yaml` says `imap: enabled: detection-only`). Suricata logs no
//! record and creates no transaction; shrike marks the flow `imap` (`app_proto` in flow
//! records, `alert imap`, `app-layer-protocol:imap`, the `app_layer.flow.imap` counter) and
//! the stream stays raw for content rules.

use std::any::Any;

use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// IMAP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "imap",
    aliases: &[],
    ip_protos: &[6],
    ports: &[],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[],
    events: &[],
    keywords: &[],
    generic_stats: true,
};

const PATTERN: &[u8] = b"1 capability";

/// Suricata's pattern: `1|20|capability` at offset 0 (depth 12), to the server only.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if dir != Dir::ToServer {
        return Probe::No;
    }
    let n = data.len().min(PATTERN.len());
    if data[..n] != PATTERN[..n] {
        Probe::No
    } else if n < PATTERN.len() {
        Probe::NeedMore
    } else {
        Probe::Yes
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(ImapState)
}

/// Per-flow IMAP state: nothing is kept (detection only).
#[derive(Debug, Default)]
pub struct ImapState;

impl AppParser for ImapState {
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
    fn pattern_is_case_sensitive_at_offset_zero_to_server_only() {
        assert_eq!(probe(Dir::ToServer, b"1 capa"), Probe::NeedMore);
        assert_eq!(probe(Dir::ToServer, b"1 capability\r\n"), Probe::Yes);
        assert_eq!(probe(Dir::ToServer, b"1 CAPABILITY\r\n"), Probe::No);
        assert_eq!(probe(Dir::ToServer, b"a1 capability\r\n"), Probe::No);
        assert_eq!(probe(Dir::ToClient, b"1 capability\r\n"), Probe::No);
        assert_eq!(probe(Dir::ToClient, b"* OK IMAP4rev1 ready\r\n"), Probe::No);
        let mut s = ImapState;
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToServer,
            b"1 capability\r\n"
        ));
        assert_eq!(s.tx_count(), 0);
    }
}
