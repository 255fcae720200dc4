//! TFTP, as Suricata 7's TFTP parser (`rust/src/tftp`, `app-layer-tftp.c`) has it.
//!
//! * Detection: a probing parser on port 69, to the server: at least 4 bytes starting with 0.
//! * Each request datagram (read, write; Suricata also accepts the data, ack and error
//!   opcodes with the request layout) is a transaction: opcode, file name, mode (one of
//!   `netascii`, `mail`, `octet`, any case; logged lower-case). Anything else is a parser
//!   error. Datagrams to the client are not parsed.
//! * EVE `tftp` record per transaction (`packet`, `file`, `mode`), no `tx_id`, as Suricata.
//! * Rules: `alert tftp`; the `tftp.file_name` sticky buffer (the file name of a request, to
//!   the server) is named by issue 19: no Suricata release up to 8.0.6 has it.

use std::any::Any;
use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

/// Suricata's `TFTP_MIN_FRAME_LEN`.
const MIN_FRAME_LEN: usize = 4;
/// Most unlogged transactions kept per flow.
const MAX_TXS: usize = 256;
const BUF_FILE_NAME: u16 = 0;

/// TFTP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "tftp",
    aliases: &[],
    ip_protos: &[17],
    ports: &[69],
    tcp: Detect::None,
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[BufferDesc {
        name: "tftp.file_name",
        dir: Some(Dir::ToServer),
    }],
    events: &[],
    keywords: &[],
    generic_stats: true,
};

/// Suricata's probe: to the server, at least 4 bytes, the first one 0.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if dir == Dir::ToServer && data.len() >= MIN_FRAME_LEN && data[0] == 0 {
        Probe::Yes
    } else {
        Probe::No
    }
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(TftpState::default())
}

/// One request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TftpTx {
    /// Transaction id.
    pub id: u64,
    /// The opcode (1 read, 2 write, ...).
    pub opcode: u8,
    /// The file name.
    pub file: Vec<u8>,
    /// The mode, lower-case.
    pub mode: Vec<u8>,
}

/// A request as Suricata parses it: `0, opcode, file NUL, mode NUL`.
pub fn parse_request(i: &[u8]) -> Option<TftpTx> {
    let (&0, rest) = i.split_first()? else {
        return None;
    };
    let (&opcode, rest) = rest.split_first()?;
    let nul = rest.iter().position(|&b| b == 0)?;
    let file = &rest[..nul];
    let rest = &rest[nul + 1..];
    let nul = rest.iter().position(|&b| b == 0)?;
    let mode = rest[..nul].to_ascii_lowercase();
    std::str::from_utf8(file).ok()?;
    std::str::from_utf8(&mode).ok()?;
    if !matches!(&mode[..], b"netascii" | b"mail" | b"octet") || !(1..=5).contains(&opcode) {
        return None;
    }
    Some(TftpTx {
        id: 0,
        opcode,
        file: file.to_vec(),
        mode,
    })
}

/// Per-flow TFTP state.
#[derive(Debug, Default)]
pub struct TftpState {
    txs: VecDeque<TftpTx>,
    next_id: u64,
}

impl TftpState {
    /// Transaction `id`, while kept.
    pub fn tx(&self, id: u64) -> Option<&TftpTx> {
        self.txs.iter().find(|t| t.id == id)
    }
}

fn write_tftp(t: &TftpTx, w: &mut JsonWriter) {
    w.open_object("tftp");
    w.set_str(
        "packet",
        match t.opcode {
            1 => "read",
            2 => "write",
            _ => "error",
        },
    );
    w.set_bytes("file", &t.file);
    w.set_bytes("mode", &t.mode);
    w.close();
}

impl AppParser for TftpState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        if dir == Dir::ToClient || data.is_empty() {
            return false;
        }
        match parse_request(data) {
            Some(mut t) => {
                t.id = self.next_id;
                self.next_id += 1;
                if self.txs.len() >= MAX_TXS {
                    self.txs.pop_front();
                }
                self.txs.push_back(t);
                false
            }
            None => true,
        }
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.next_id
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer(&self, tx: u64, buf: u16, _dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        match (buf, self.tx(tx)) {
            (BUF_FILE_NAME, Some(t)) if !t.file.is_empty() => f(&t.file),
            _ => false,
        }
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let mut id = *c.next;
        let to_server = c.rec.info.to_server;
        while id < self.next_id {
            if let Some(t) = self.tx(id) {
                if c.write && c.out.wants_type("tftp") {
                    if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                        write_eve_header(&mut rec, &c.rec.header("tftp", to_server));
                        write_tftp(t, &mut rec);
                        rec.close();
                        let _ = rec.commit();
                    }
                }
                c.logged += 1;
            }
            id += 1;
        }
        *c.next = id;
        while self.txs.front().is_some_and(|t| t.id < id) {
            self.txs.pop_front();
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        match self.tx(tx) {
            Some(t) => {
                write_tftp(t, w);
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
    const RANDOM_SEEDS: &[&[u8]] = &[b"\x00\x01", b"\x00\x02a\x00octet\x00"];

    #[test]
    fn random_input_never_panics() {
        crate::common::testing::random_input_never_panics(&PROTOCOL, false, RANDOM_SEEDS);
    }

    #[test]
    fn requests_as_suricata() {
        let t = parse_request(b"\x00\x01rfc1350.txt\x00OCTET\x00").unwrap();
        assert_eq!(
            (t.opcode, &t.file[..], &t.mode[..]),
            (1, &b"rfc1350.txt"[..], &b"octet"[..])
        );
        // File name not terminated, garbage, bad opcode, bad mode, mode not terminated.
        assert!(parse_request(b"\x00\x01rfc1350.txtnoctet\x00").is_none());
        assert!(parse_request(b"\xff\xff\xff").is_none());
        assert!(parse_request(b"\x00\x06a\x00octet\x00").is_none());
        assert!(parse_request(b"\x00\x01a\x00ccccc\x00").is_none());
        assert!(parse_request(b"\x00\x01a\x00octet").is_none());
    }

    #[test]
    fn one_transaction_per_request() {
        let mut s = TftpState::default();
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToServer,
            b"\x00\x02up.bin\x00netascii\x00"
        ));
        assert!(AppParser::parse(
            &mut s,
            Dir::ToServer,
            b"\x00\x03\x00\x01data"
        ));
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToClient,
            b"\x00\x03\x00\x01data"
        ));
        assert_eq!(s.tx_count(), 1);
        let mut name = Vec::new();
        assert!(s.buffer(0, BUF_FILE_NAME, Dir::ToServer, &mut |b| {
            name = b.to_vec();
            true
        }));
        assert_eq!(name, b"up.bin");
        assert_eq!(probe(Dir::ToServer, b"\x00\x01a\x00"), Probe::Yes);
        assert_eq!(probe(Dir::ToServer, b"\x01\x01a\x00"), Probe::No);
        assert_eq!(probe(Dir::ToServer, b"\x00\x01"), Probe::No);
    }
}
