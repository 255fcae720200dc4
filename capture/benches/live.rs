//! Ring read throughput on a veth pair in a private network namespace (root only).
//!
//! A sender thread pushes UDP frames into `veth1` as fast as `send()` goes; reader threads
//! drain TPACKET_V3 sockets on `veth0` (one socket, or a 2-socket fanout group). Reported:
//! packets/s received, kernel drops, and the reader's CPU time per packet (the sender, one
//! syscall per frame, is usually the bottleneck on a veth, so CPU/packet is the number that
//! tells the ring's cost).
//!
//! `SHRIKE_BENCH_PACKETS` (default 500000) and `SHRIKE_BENCH_SIZES` (default `64,512,1500`)
//! tune the run. Run with `scripts/bench/live.sh`.

#[path = "../tests/live_util/mod.rs"]
mod live_util;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use live_util::{udp_frame, NetNs};
use shrike_capture::afpacket::{self, Sender};
use shrike_capture::AfPacketConfig;
use shrike_sys::cpu::cpu_time;

struct Run {
    received: u64,
    drops: u64,
    elapsed: Duration,
    reader_cpu: Duration,
}

fn run(ns: &NetNs, sockets: usize, size: usize, packets: u64) -> Run {
    let cfg = AfPacketConfig {
        block_size: 1 << 20,
        block_count: Some(8),
        cluster_id: 7 + sockets as u16 * 100 + size as u16,
        cluster_type: shrike_capture::ClusterType::Lb,
        ..Default::default()
    };
    let socks = ns.run(move || afpacket::open_fanout("veth0", sockets, &cfg).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = socks
        .into_iter()
        .map(|mut s| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let c0 = cpu_time();
                let mut n = 0u64;
                let mut bytes = 0u64;
                loop {
                    match s.next_block(Duration::from_millis(20)).unwrap() {
                        Some(mut b) => {
                            while let Some(p) = b.next_packet() {
                                n += 1;
                                bytes += p.data.len() as u64;
                            }
                        }
                        None if stop.load(Ordering::Acquire) => break,
                        None => {}
                    }
                }
                std::hint::black_box(bytes);
                let st = s.stats();
                (n, st.drops, cpu_time() - c0)
            })
        })
        .collect();
    let frame = udp_frame(
        [10, 0, 0, 1],
        [10, 0, 0, 2],
        1234,
        80,
        &[],
        0,
        size.saturating_sub(42),
    );
    let t0 = Instant::now();
    let sender = ns.spawn(move || {
        let mut tx = Sender::open("veth1").unwrap();
        let mut f = frame;
        for i in 0..packets {
            // Vary the source port so hash/lb see many flows.
            f[34] = (i >> 8) as u8;
            f[35] = i as u8;
            tx.send(&f).unwrap();
        }
    });
    sender.join().unwrap();
    let send_done = t0.elapsed();
    // Let the readers drain (block timeout 10 ms, poll 20 ms), then stop them.
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Release);
    let mut out = Run {
        received: 0,
        drops: 0,
        elapsed: send_done,
        reader_cpu: Duration::ZERO,
    };
    for r in readers {
        let (n, d, c) = r.join().unwrap();
        out.received += n;
        out.drops += d;
        out.reader_cpu += c;
    }
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench -- --list`: nothing to run here.
    }
    let Some(ns) = NetNs::new("bench") else {
        return;
    };
    let packets: u64 = std::env::var("SHRIKE_BENCH_PACKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500_000);
    let sizes: Vec<usize> = std::env::var("SHRIKE_BENCH_SIZES")
        .unwrap_or_else(|_| "64,512,1500".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    println!("afpacket ring read on veth, {packets} packets per run");
    println!(
        "{:>7} {:>6} {:>10} {:>8} {:>12} {:>14}",
        "sockets", "bytes", "received", "drops", "pkts/s", "reader ns/pkt"
    );
    for sockets in [1usize, 2] {
        for &size in &sizes {
            let r = run(&ns, sockets, size, packets);
            let pps = r.received as f64 / r.elapsed.as_secs_f64();
            let ns_per = r.reader_cpu.as_nanos() as f64 / r.received.max(1) as f64;
            println!(
                "{sockets:>7} {size:>6} {:>10} {:>8} {pps:>12.0} {ns_per:>14.1}",
                r.received, r.drops
            );
        }
    }
}
