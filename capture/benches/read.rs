//! Raw read floor: records/s from an in-memory 100k-packet capture, pcap and pcapng.

use std::io::{self, Read};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_capture::{FileSource, PacketSource};

const PACKETS: usize = 100_000;

/// Packet sizes cycling through a typical mix (small ACKs, mid-size, full frames).
fn size(i: usize) -> usize {
    [60, 66, 1514, 590, 74, 1514, 342, 60][i % 8]
}

fn pcap_image() -> Vec<u8> {
    let mut v = Vec::with_capacity(PACKETS * 600);
    v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&65535u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    for i in 0..PACKETS {
        let n = size(i);
        v.extend_from_slice(&(1_700_000_000u32 + (i / 1000) as u32).to_le_bytes());
        v.extend_from_slice(&((i % 1000) as u32 * 1000).to_le_bytes());
        v.extend_from_slice(&(n as u32).to_le_bytes());
        v.extend_from_slice(&(n as u32).to_le_bytes());
        v.extend((0..n).map(|b| b as u8));
    }
    v
}

fn pcapng_image() -> Vec<u8> {
    let mut v = Vec::with_capacity(PACKETS * 620);
    let block = |v: &mut Vec<u8>, t: u32, body: &[u8]| {
        let len = 12 + body.len().next_multiple_of(4);
        v.extend_from_slice(&t.to_le_bytes());
        v.extend_from_slice(&(len as u32).to_le_bytes());
        v.extend_from_slice(body);
        v.resize(v.len() + (len - 12 - body.len()), 0);
        v.extend_from_slice(&(len as u32).to_le_bytes());
    };
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&u64::MAX.to_le_bytes());
    block(&mut v, 0x0a0d_0d0a, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&0u32.to_le_bytes());
    block(&mut v, 1, &idb);
    let mut body = Vec::with_capacity(2048);
    for i in 0..PACKETS {
        let n = size(i);
        let ts = 1_700_000_000_000_000u64 + i as u64 * 1000;
        body.clear();
        body.extend_from_slice(&0u32.to_le_bytes());
        body.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(ts as u32).to_le_bytes());
        body.extend_from_slice(&(n as u32).to_le_bytes());
        body.extend_from_slice(&(n as u32).to_le_bytes());
        body.extend((0..n).map(|b| b as u8));
        block(&mut v, 6, &body);
    }
    v
}

/// A reader over shared bytes, so each iteration does not copy the image first.
struct Shared {
    data: Arc<Vec<u8>>,
    at: usize,
}

impl Read for Shared {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let rest = self.data.get(self.at..).unwrap_or(&[]);
        let n = rest.len().min(out.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

fn read_all(data: &Arc<Vec<u8>>) -> u64 {
    let reader = Shared {
        data: Arc::clone(data),
        at: 0,
    };
    let mut src = FileSource::from_reader("bench", reader).expect("header");
    let mut sum = 0u64;
    while let Some(p) = src.next_packet().expect("record") {
        sum = sum.wrapping_add(p.data.len() as u64 ^ p.ts.0);
    }
    assert_eq!(src.stats().packets, PACKETS as u64);
    sum
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(PACKETS as u64));
    g.sample_size(20);
    let pcap = Arc::new(pcap_image());
    g.bench_function("pcap_100k", |b| b.iter(|| read_all(&pcap)));
    let ng = Arc::new(pcapng_image());
    g.bench_function("pcapng_100k", |b| b.iter(|| read_all(&ng)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
