//! Stream reassembly and defrag throughput.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use shrike_capture::LinkType;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, PacketMeta};
use shrike_packet::defrag::{Defrag, DefragConfig};
use shrike_stream::Dir;
use shrike_stream::{AppChunk, HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, TcpSession};

type Pkt = (Vec<u8>, PacketMeta, Dir);

#[allow(clippy::too_many_arguments)]
fn tcp4(
    src: [u8; 4],
    dst: [u8; 4],
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    fl: u8,
    pl: &[u8],
) -> Vec<u8> {
    let total = 40 + pl.len();
    let mut p = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        1,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ];
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(&sp.to_be_bytes());
    p.extend_from_slice(&dp.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(&ack.to_be_bytes());
    p.extend_from_slice(&[0x50, fl, 0xff, 0xff, 0, 0, 0, 0]);
    p.extend_from_slice(pl);
    p
}

fn meta(p: &[u8]) -> PacketMeta {
    decode(
        LinkType::Raw,
        p,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    )
}

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

/// Handshake, `n` data segments of `len` (in order or pairwise swapped), ACKs.
fn packets(n: u32, len: usize, swap: bool) -> Vec<Pkt> {
    let mut v: Vec<Pkt> = Vec::new();
    let mut push = |p: Vec<u8>, d| {
        let m = meta(&p);
        v.push((p, m, d));
    };
    push(tcp4(C, S, 4000, 80, 1000, 0, 0x02, b""), Dir::ToServer);
    push(tcp4(S, C, 80, 4000, 5000, 1001, 0x12, b""), Dir::ToClient);
    push(tcp4(C, S, 4000, 80, 1001, 5001, 0x10, b""), Dir::ToServer);
    let data = vec![b'd'; len];
    let mut i = 0;
    while i < n {
        let order: Vec<u32> = if swap && i + 1 < n {
            vec![i + 1, i]
        } else {
            vec![i]
        };
        for k in &order {
            let seq = 1001 + k * len as u32;
            push(tcp4(C, S, 4000, 80, seq, 5001, 0x10, &data), Dir::ToServer);
        }
        let acked = 1001 + (i + order.len() as u32) * len as u32;
        push(tcp4(S, C, 80, 4000, 5001, acked, 0x10, b""), Dir::ToClient);
        i += order.len() as u32;
    }
    v
}

fn run(pk: &[Pkt]) -> usize {
    let mut cfg = StreamConfig::default();
    cfg.reassembly.depth = 0;
    let mut e = StreamEngine::new(cfg, HostOsPolicy::new(OsPolicy::Bsd));
    let mut s = TcpSession::new();
    let mut got = 0;
    for (p, m, d) in pk {
        e.on_packet(&mut s, m, p, *d, 1);
        while let AppChunk::Data(b) = s.app_next(Dir::ToServer) {
            let n = b.len();
            got += n;
            s.app_consume(Dir::ToServer, n);
        }
        let w = e.raw_window(&s, Dir::ToServer);
        if w.ready {
            let n = w.data.len();
            s.raw_consume(Dir::ToServer, n);
        }
    }
    e.release(&mut s);
    got
}

fn bench_stream(c: &mut Criterion) {
    let mut g = c.benchmark_group("stream");
    for (name, swap) in [("in_order", false), ("out_of_order", true)] {
        let pk = packets(2000, 1400, swap);
        g.throughput(Throughput::Bytes(2000 * 1400));
        g.bench_with_input(BenchmarkId::new(name, 1400), &pk, |b, pk| {
            b.iter(|| assert_eq!(run(pk), 2000 * 1400))
        });
    }
    g.finish();
}

fn frag(id: u16, off: u16, mf: bool, n: usize) -> Vec<u8> {
    let total = 20 + n;
    let fo = (off / 8) | if mf { 0x2000 } else { 0 };
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&fo.to_be_bytes());
    p.extend_from_slice(&[64, 17, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    p.extend(std::iter::repeat_n(0x55u8, n));
    p
}

fn bench_defrag(c: &mut Criterion) {
    let mut g = c.benchmark_group("defrag");
    let pk: Vec<(Vec<u8>, PacketMeta)> = (0..1000u16)
        .flat_map(|id| [frag(id, 0, true, 1480), frag(id, 1480, false, 520)])
        .map(|p| {
            let m = meta(&p);
            (p, m)
        })
        .collect();
    g.throughput(Throughput::Elements(1000));
    g.bench_function("two_fragment_datagrams", |b| {
        let mut d = Defrag::new(DefragConfig::default(), HostOsPolicy::new(OsPolicy::Bsd));
        b.iter(|| {
            let mut done = 0;
            for (p, m) in &pk {
                if d.process(m, p, 1).packet.len() == 2020 {
                    done += 1;
                }
            }
            assert_eq!(done, 1000);
        })
    });
    g.finish();
}

criterion_group!(benches, bench_stream, bench_defrag);
criterion_main!(benches);
