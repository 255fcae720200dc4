//! Flow key + hash, flow table lookups with 100k flows, new flows in a full table (forced
//! eviction), timer wheel schedule + advance.

#[path = "../../packet/tests/decode_util/mod.rs"]
mod decode_util;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use decode_util::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_flow::config::FlowConfig;
use shrike_flow::{Direction, FlowKey, FlowTable, TimerWheel};
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats, PacketMeta};

const SEED: u64 = 0x5eed_5eed_5eed_5eed;
const N: usize = 100_000;

fn metas(n: usize, base_port: u16) -> Vec<PacketMeta> {
    let cfg = DecodeConfig::default();
    let mut st = DecodeStats::default();
    (0..n)
        .map(|i| {
            let src = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
            let f = eth(
                0x0800,
                &ipv4(
                    src,
                    B4,
                    6,
                    &tcp(
                        &src,
                        &B4,
                        base_port.wrapping_add((i % 50_000) as u16),
                        443,
                        0x10,
                        b"",
                    ),
                ),
            );
            decode(LinkType::Ethernet, &f, &cfg, &mut st)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let ms = metas(N, 1024);
    let misses = metas(N, 60_000);
    let mut g = c.benchmark_group("flow");
    g.throughput(Throughput::Elements(1));

    let mut i = 0;
    g.bench_function("key_and_hash", |b| {
        b.iter(|| {
            i = (i + 1) % N;
            let (k, d) = FlowKey::from_meta(black_box(&ms[i]));
            (k.hash(SEED), d)
        })
    });

    let cfg = FlowConfig {
        max_flows: 2 * N,
        ..Default::default()
    };
    let mut table: FlowTable<()> = FlowTable::new(&cfg, 0);
    let keys: Vec<_> = ms
        .iter()
        .map(|m| {
            let (k, d) = FlowKey::from_meta(m);
            (k.hash(SEED), k, d)
        })
        .collect();
    let miss_keys: Vec<_> = misses
        .iter()
        .map(|m| {
            let (k, _) = FlowKey::from_meta(m);
            (k.hash(SEED), k)
        })
        .collect();
    let ts = Timestamp::from_secs_nanos(1_700_000_000, 0);
    for (h, k, d) in &keys {
        table.packet(*h, *k, *d, ts, 60, 0x10, || (), &mut |_, _| {});
    }
    assert_eq!(table.len(), N);
    // A pseudo-random visiting order so lookups miss the cache like real traffic.
    let order: Vec<usize> = (0..N).map(|j| (j * 7919) % N).collect();
    let mut j = 0;
    g.bench_function("table_hit_100k", |b| {
        b.iter(|| {
            j = (j + 1) % N;
            let (h, k, d) = &keys[order[j]];
            table.packet(*h, *k, *d, ts, 60, 0x10, || (), &mut |_, _| {})
        })
    });
    let mut j = 0;
    g.bench_function("table_miss_100k", |b| {
        b.iter(|| {
            j = (j + 1) % N;
            let (h, k) = &miss_keys[order[j]];
            table.find(*h, k)
        })
    });

    // A full table (SYN-flood shape): every packet a new flow evicting the oldest half-open
    // one, in emergency mode. Packets 30 µs apart, so the oldest flow (100,000 packets
    // back) is 3 s old: no longer alive, it is taken.
    let full_cfg = FlowConfig {
        max_flows: N,
        ..Default::default()
    };
    let mut full: FlowTable<()> = FlowTable::new(&full_cfg, 0);
    let fresh: Vec<_> = keys
        .iter()
        .copied()
        .chain(misses.iter().map(|m| {
            let (k, d) = FlowKey::from_meta(m);
            (k.hash(SEED), k, d)
        }))
        .collect();
    let mut j = 0;
    let mut n = 0u64;
    g.bench_function("table_full_new_flow_100k", |b| {
        b.iter(|| {
            j = (j + 1) % fresh.len();
            n += 1;
            let at = Timestamp(ts.0 + n * 30_000);
            let (h, k, d) = &fresh[j];
            full.packet(*h, *k, *d, at, 54, 0x02, || (), &mut |f, r| {
                black_box((f.id, r));
            })
        })
    });
    assert!(full.in_emergency() && full.len() == N);
    // The same table when every flow is still alive (all seen this second): no flow for
    // the packet (Suricata's `flow.get_used_failed`).
    let now = Timestamp(ts.0 + n * 30_000);
    for (h, k, d) in fresh.iter().take(N) {
        full.packet(*h, *k, *d, now, 54, 0x02, || (), &mut |_, _| {});
    }
    let mut j = 0;
    g.bench_function("table_full_no_flow_100k", |b| {
        b.iter(|| {
            j = (j + 1) % miss_keys.len();
            let (h, k) = &miss_keys[j];
            full.packet(
                *h,
                *k,
                Direction::LoToHi,
                now,
                54,
                0x02,
                || (),
                &mut |_, _| {},
            )
        })
    });

    g.bench_function("wheel_schedule_advance_1k", |b| {
        b.iter_batched(
            || TimerWheel::<u32>::new(0),
            |mut w| {
                for t in 0..1000u32 {
                    w.schedule(u64::from(t.wrapping_mul(2_654_435_761) % 600_000), t);
                }
                let mut n = 0;
                w.advance(600_000, &mut |_, _| n += 1);
                n
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
