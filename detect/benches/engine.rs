//! Per-packet inspection cost of the detection engine with all of ET Open loaded (the
//! rules it can enforce: packet-level ones), for an HTTP-ish request packet on an
//! established flow, a 64-byte UDP packet, and a packet whose payload triggers prefilter
//! hits. Also the engine build time. Uses `SHRIKE_ET_RULES` or `../shared/corpus/rules/
//! et-open/*.rules`; falls back to the sample rules when the corpus is absent.

#[path = "../../packet/tests/decode_util/mod.rs"]
mod decode_util;

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use decode_util::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_detect::setup::{load_texts, DEFAULT_CLASSIFICATION};
use shrike_detect::{DetectThread, Engine, EngineConfig, FlowDetect, FlowInput, Packet};
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, PacketMeta};
use shrike_rules::config_files::parse_classification_config;
use shrike_rules::Vars;

fn rule_texts() -> Vec<(Arc<str>, Result<String, String>)> {
    let dir = std::env::var_os("SHRIKE_ET_RULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/rules/et-open")
        });
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rules"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        eprintln!(
            "ET Open not found at {}: using samples/sample.rules",
            dir.display()
        );
        files.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../samples/sample.rules"));
    }
    files
        .iter()
        .map(|p| {
            (
                Arc::from(p.display().to_string()),
                std::fs::read_to_string(p).map_err(|e| e.to_string()),
            )
        })
        .collect()
}

fn build(texts: &[(Arc<str>, Result<String, String>)]) -> Engine {
    let (classes, _) = parse_classification_config(DEFAULT_CLASSIFICATION);
    load_texts(
        texts,
        &Vars::suricata_defaults(),
        &classes,
        &[],
        &EngineConfig::default(),
        &mut |_, _| {},
        &mut || {},
    )
    .engine
}

const CLIENT: [u8; 4] = [192, 168, 7, 20];
const SERVER: [u8; 4] = [93, 184, 216, 34];

fn frame_tcp(seq: u32, ack: u32, flags: u8, to_server: bool, payload: &[u8]) -> Vec<u8> {
    let (s, d, sp, dp) = if to_server {
        (CLIENT, SERVER, 51234, 80)
    } else {
        (SERVER, CLIENT, 80, 51234)
    };
    eth(
        0x0800,
        &ipv4(
            s,
            d,
            6,
            &tcp_full(&s, &d, sp, dp, seq, ack, flags, &[], payload),
        ),
    )
}

fn meta(f: &[u8]) -> PacketMeta {
    decode(
        LinkType::Ethernet,
        f,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    )
}

/// An established HTTP flow's detection state after the handshake.
fn established(engine: &Engine, th: &mut DetectThread) -> FlowDetect {
    let mut st = FlowDetect::default();
    for (f, ts) in [
        (frame_tcp(100, 0, 0x02, true, b""), true),
        (frame_tcp(500, 101, 0x12, false, b""), false),
        (frame_tcp(101, 501, 0x10, true, b""), true),
    ] {
        let m = meta(&f);
        let pkt = Packet {
            meta: &m,
            data: &f,
            ts: Timestamp(1),
        };
        engine.inspect(
            &pkt,
            Some(FlowInput {
                state: &mut st,
                to_server: ts,
                pkts_toserver: 2,
                pkts_toclient: 1,
                tcp_established: None,
                app: None,
                age_secs: 0,
            }),
            th,
        );
    }
    st
}

fn bench(c: &mut Criterion) {
    let texts = rule_texts();
    let t0 = std::time::Instant::now();
    let engine = build(&texts);
    eprintln!(
        "engine: {} rules enforced of {} ({} ip-only), built in {:.0} ms",
        engine.len(),
        engine.report().rules,
        engine.report().ip_only,
        t0.elapsed().as_secs_f64() * 1000.0
    );
    let mut th = engine.thread();
    let mut flow = established(&engine, &mut th);

    let http = b"GET /static/js/app.min.js?v=20240115 HTTP/1.1\r\nHost: www.example.com\r\n\
User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36\r\n\
Accept: */*\r\nAccept-Language: en-US,en;q=0.9\r\nAccept-Encoding: gzip, deflate, br\r\n\
Referer: https://www.example.com/\r\nCookie: session=abcdef0123456789; theme=dark\r\nConnection: keep-alive\r\n\r\n";
    let http_frame = frame_tcp(101, 501, 0x18, true, http);
    let http_meta = meta(&http_frame);
    let udp_frame = eth(
        0x0800,
        &ipv4(
            CLIENT,
            SERVER,
            17,
            &udp(&CLIENT, &SERVER, 40000, 5000, &[0x5a; 22]),
        ),
    );
    assert_eq!(udp_frame.len(), 64);
    let udp_meta = meta(&udp_frame);

    let mut g = c.benchmark_group("engine_inspect_et_open");
    g.throughput(Throughput::Elements(1));
    g.bench_function("http_request_established", |b| {
        b.iter(|| {
            let pkt = Packet {
                meta: &http_meta,
                data: &http_frame,
                ts: Timestamp(2),
            };
            let n = engine
                .inspect(
                    black_box(&pkt),
                    Some(FlowInput {
                        state: &mut flow,
                        to_server: true,
                        pkts_toserver: 3,
                        pkts_toclient: 1,
                        tcp_established: None,
                        app: None,
                        age_secs: 0,
                    }),
                    &mut th,
                )
                .len();
            black_box(n)
        })
    });
    let mut uflow = FlowDetect::default();
    g.bench_function("udp_64_bytes", |b| {
        b.iter(|| {
            let pkt = Packet {
                meta: &udp_meta,
                data: &udp_frame,
                ts: Timestamp(2),
            };
            let n = engine
                .inspect(
                    black_box(&pkt),
                    Some(FlowInput {
                        state: &mut uflow,
                        to_server: true,
                        pkts_toserver: 5,
                        pkts_toclient: 0,
                        tcp_established: None,
                        app: None,
                        age_secs: 0,
                    }),
                    &mut th,
                )
                .len();
            black_box(n)
        })
    });
    g.bench_function("udp_64_bytes_no_flow", |b| {
        b.iter(|| {
            let pkt = Packet {
                meta: &udp_meta,
                data: &udp_frame,
                ts: Timestamp(2),
            };
            black_box(engine.inspect(black_box(&pkt), None, &mut th).len())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("engine_build");
    g.sample_size(10);
    g.bench_function("et_open", |b| b.iter(|| black_box(build(&texts)).len()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
