//! Test harness for the detection engine: a flow table like the worker's, packets built
//! with the decoder test builders, alerts collected per packet.
#![allow(dead_code)]

#[path = "../../../packet/tests/decode_util/mod.rs"]
pub mod decode_util;

use shrike_capture::{LinkType, Timestamp};
use shrike_detect::setup::engine_from_str;
use shrike_detect::{DetectThread, Engine, EngineConfig, FlowDetect, FlowInput, Packet};
use shrike_flow::config::FlowConfig;
use shrike_flow::{FlowKey, FlowTable};
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};

pub use decode_util::*;

/// A packet to feed: the Ethernet frame and seconds since the start.
pub struct Frame {
    pub bytes: Vec<u8>,
    pub secs: f64,
}

pub fn at(bytes: Vec<u8>, secs: f64) -> Frame {
    Frame { bytes, secs }
}

/// Engine plus a worker-like flow table.
pub struct Sim {
    pub engine: Engine,
    pub th: DetectThread,
    pub flows: FlowTable<FlowDetect>,
}

pub fn engine(rules: &str) -> Engine {
    engine_with(rules, &EngineConfig::default())
}

pub fn engine_with(rules: &str, cfg: &EngineConfig) -> Engine {
    let l = engine_from_str(rules, cfg);
    assert!(
        l.parse_errors.is_empty(),
        "parse errors: {:?}",
        l.parse_errors
    );
    l.engine
}

impl Sim {
    pub fn new(rules: &str) -> Sim {
        Sim::with(rules, &EngineConfig::default())
    }

    pub fn with(rules: &str, cfg: &EngineConfig) -> Sim {
        let engine = engine_with(rules, cfg);
        let skipped: Vec<String> = engine
            .report()
            .skipped
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(skipped.is_empty(), "skipped: {skipped:?}");
        let th = engine.thread();
        Sim {
            engine,
            th,
            flows: FlowTable::new(&FlowConfig::default(), 0),
        }
    }

    /// Feed one frame; returns the sids of the logged alerts, in order.
    pub fn feed(&mut self, f: &Frame) -> Vec<u32> {
        let ts = Timestamp(1_700_000_000_000_000_000 + (f.secs * 1e9) as u64);
        let m = decode(
            LinkType::Ethernet,
            &f.bytes,
            &DecodeConfig::default(),
            &mut DecodeStats::default(),
        );
        let pkt = Packet {
            meta: &m,
            data: &f.bytes,
            ts,
        };
        let alerts = if m.is_ip() {
            let (k, d) = FlowKey::from_meta(&m);
            let (h, _) = self
                .flows
                .packet(
                    k.hash(1),
                    k,
                    d,
                    ts,
                    f.bytes.len() as u32,
                    if m.proto == 6 { m.tcp_flags } else { 0 },
                    FlowDetect::default,
                    &mut |_, _| {},
                )
                .expect("the default table has room");
            let flow = self.flows.get_mut(h).expect("flow");
            let input = FlowInput {
                to_server: flow.to_server(d),
                pkts_toserver: flow.pkts[0],
                pkts_toclient: flow.pkts[1],
                tcp_established: None,
                app: None,
                age_secs: 0,
                state: &mut flow.data,
            };
            self.engine.inspect(&pkt, Some(input), &mut self.th)
        } else {
            self.engine.inspect(&pkt, None, &mut self.th)
        };
        alerts
            .iter()
            .filter(|a| a.log)
            .map(|a| self.engine.sig_info(a.sig).expect("sig").sid)
            .collect()
    }

    /// Feed all frames; returns every packet's alert sids.
    pub fn run(&mut self, frames: &[Frame]) -> Vec<Vec<u32>> {
        frames.iter().map(|f| self.feed(f)).collect()
    }

    /// Total alerts per sid over a run.
    pub fn count(&mut self, frames: &[Frame], sid: u32) -> usize {
        self.run(frames)
            .iter()
            .map(|v| v.iter().filter(|&&s| s == sid).count())
            .sum()
    }
}

pub const C4: [u8; 4] = [192, 168, 1, 10];
pub const S4: [u8; 4] = [203, 0, 113, 5];

/// Ethernet/IPv4/TCP from `src` to `dst` with seq/ack.
#[allow(clippy::too_many_arguments)]
pub fn tcp4(
    src: [u8; 4],
    dst: [u8; 4],
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4(
            src,
            dst,
            6,
            &tcp_full(&src, &dst, sp, dp, seq, ack, flags, &[], payload),
        ),
    )
}

pub fn udp4(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    eth(
        0x0800,
        &ipv4(src, dst, 17, &udp(&src, &dst, sp, dp, payload)),
    )
}

pub fn icmp4_echo(src: [u8; 4], dst: [u8; 4], t: u8, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut rest = [0u8; 4];
    rest[..2].copy_from_slice(&id.to_be_bytes());
    rest[2..].copy_from_slice(&seq.to_be_bytes());
    eth(0x0800, &ipv4(src, dst, 1, &icmp4(t, 0, rest, data)))
}

pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;
pub const PSH: u8 = 0x08;
pub const FIN: u8 = 0x01;
pub const RST: u8 = 0x04;

/// A TCP session C4:40000 -> S4:port: handshake, then `data` frames (client first, then
/// alternating as given: `(to_server, payload)`).
pub fn session(port: u16, data: &[(bool, &[u8])]) -> Vec<Frame> {
    let mut v = vec![
        at(tcp4(C4, S4, 40000, port, 100, 0, SYN, b""), 0.0),
        at(tcp4(S4, C4, port, 40000, 500, 101, SYN | ACK, b""), 0.1),
        at(tcp4(C4, S4, 40000, port, 101, 501, ACK, b""), 0.2),
    ];
    let (mut cs, mut ss) = (101u32, 501u32);
    for (i, (ts, p)) in data.iter().enumerate() {
        let t = 0.3 + i as f64 * 0.1;
        if *ts {
            v.push(at(tcp4(C4, S4, 40000, port, cs, ss, ACK | PSH, p), t));
            cs += p.len() as u32;
        } else {
            v.push(at(tcp4(S4, C4, port, 40000, ss, cs, ACK | PSH, p), t));
            ss += p.len() as u32;
        }
    }
    v
}

/// Write frames as a pcap file (for side-by-side runs with Suricata).
pub fn write_pcap(path: &std::path::Path, frames: &[Frame]) {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0u8; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    for f in frames {
        let us = (f.secs * 1e6) as u64;
        out.extend_from_slice(&((1_700_000_000 + us / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(f.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&f.bytes);
    }
    std::fs::write(path, out).expect("write pcap");
}

/// When `SHRIKE_DUMP_DIR` is set, save a scenario (rules + pcap) there for comparison with
/// Suricata (`suricata -r NAME.pcap -S NAME.rules`).
pub fn dump(name: &str, rules: &str, frames: &[Frame]) {
    if let Some(d) = std::env::var_os("SHRIKE_DUMP_DIR") {
        let d = std::path::PathBuf::from(d);
        let _ = std::fs::create_dir_all(&d);
        std::fs::write(d.join(format!("{name}.rules")), rules).expect("write rules");
        write_pcap(&d.join(format!("{name}.pcap")), frames);
    }
}
