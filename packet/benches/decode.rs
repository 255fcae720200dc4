//! Decoder throughput: a 64-byte UDP frame and an HTTP-ish TCP frame.

#[path = "../tests/decode_util/mod.rs"]
mod decode_util;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use decode_util::*;
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};

fn frames() -> (Vec<u8>, Vec<u8>) {
    // 14 + 20 + 8 + 18 = 60 bytes, plus 4 bytes of trailer padding = 64 on the wire.
    let mut udp64 = eth_udp4(5353, 53, &[0xab; 18]);
    udp64.extend_from_slice(&[0; 4]);
    assert_eq!(udp64.len(), 64);
    let http = b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: bench/1.0\r\n\
Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n\r\n";
    let opts = [1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2];
    let t = tcp_full(&A4, &B4, 51234, 80, 1, 1, 0x18, &opts, http);
    let tcp = eth(0x0800, &ipv4(A4, B4, 6, &t));
    (udp64, tcp)
}

fn bench(c: &mut Criterion) {
    let (udp64, tcp) = frames();
    let cfg = DecodeConfig::default();
    let csum = DecodeConfig {
        checksum_validation: true,
        ..Default::default()
    };
    let mut st = DecodeStats::default();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(1));
    g.bench_function("udp_64B", |b| {
        b.iter(|| decode(LinkType::Ethernet, black_box(&udp64), &cfg, &mut st))
    });
    g.bench_function(format!("tcp_http_{}B", tcp.len()), |b| {
        b.iter(|| decode(LinkType::Ethernet, black_box(&tcp), &cfg, &mut st))
    });
    g.bench_function(format!("tcp_http_{}B_checksums", tcp.len()), |b| {
        b.iter(|| decode(LinkType::Ethernet, black_box(&tcp), &csum, &mut st))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
