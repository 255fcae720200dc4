//! Worker-side latency of appending EVE records, and write syscalls per MiB.
//!
//! ```text
//! cargo run --release -p shrike-output --example eve_latency -- file  [records]
//! cargo run --release -p shrike-output --example eve_latency -- stall [seconds]
//! strace -c -f -e trace=write target/release/examples/eve_latency syscalls [MiB]
//! ```
//!
//! `file`: a regular file sink. `stall`: a unix stream sink whose reader accepts and then reads
//! nothing for 2 s (the writer blocks in write(2), the pool drains, flows are dropped), then
//! drains. Each sample is the time for one `record()` + build + `commit()` on the worker.

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use shrike_output::config::{EveConfig, FileType};
use shrike_output::eve::*;
use shrike_output::{EveOutput, EvePipeline, EventKind, OutputStats};

fn flow(i: u64) -> FlowRecord<'static> {
    FlowRecord {
        timestamp_ns: 1_706_704_496_000_000_000 + i * 1_000,
        flow_id: 1_000_000 + i,
        in_iface: Some("eth0"),
        vlan: &[],
        src_ip: "10.1.2.3".parse().unwrap(),
        dest_ip: "192.168.100.200".parse().unwrap(),
        src_port: (i % 60_000) as u16,
        dest_port: 443,
        proto: 6,
        icmp: None,
        spi: None,
        app_proto: Some("tls"),
        app_proto_ts: None,
        app_proto_tc: None,
        app_proto_orig: None,
        app_proto_expected: None,
        pkts_toserver: i % 100,
        pkts_toclient: i % 77,
        bytes_toserver: i * 3,
        bytes_toclient: i * 5,
        start_ns: 1_706_704_490_000_000_000,
        end_ns: 1_706_704_496_000_000_000 + i * 1_000,
        emergency: false,
        state: FlowState::Closed,
        reason: FlowEndReason::Timeout,
        alerted: false,
        wrong_thread: false,
        action: None,
        tcp: Some(TcpFlowInfo {
            flags: 0x1b,
            flags_ts: 0x1b,
            flags_tc: 0x1b,
            state: Some("closed"),
            ts_max_regions: 1,
            tc_max_regions: 1,
            ..TcpFlowInfo::default()
        }),
        metadata: None,
        community_id: None,
        ipv6: Ipv6Style::Full,
    }
}

/// Append one flow record; returns the nanoseconds it took on the worker.
fn append(out: &mut EveOutput, i: u64) -> u64 {
    let f = flow(i);
    let t0 = Instant::now();
    if let Some(mut r) = out.record(EventKind::Flow) {
        write_flow_record(&mut r, &f);
        let _ = r.commit();
    }
    t0.elapsed().as_nanos() as u64
}

fn report(name: &str, mut ns: Vec<u64>, st: &OutputStats, ws: &OutputStats) {
    ns.sort_unstable();
    let q = |p: f64| ns[((ns.len() as f64 - 1.0) * p) as usize];
    println!(
        "{name}: samples={} p50={}ns p99={}ns p99.9={}ns max={}ns",
        ns.len(),
        q(0.5),
        q(0.99),
        q(0.999),
        ns.last().copied().unwrap_or(0)
    );
    println!(
        "{name}: samples over 50us: {}",
        ns.iter().filter(|&&x| x > 50_000).count()
    );
    println!(
        "{name}: records={} dropped.flow={} blocked={} | writer: buffers={} writes={} bytes={} write_errors={}",
        st.records_of(EventKind::Flow),
        st.dropped_of(EventKind::Flow),
        st.blocked,
        ws.buffers,
        ws.writes,
        ws.bytes,
        ws.write_errors
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("file");
    let dir = std::env::temp_dir().join(format!("eve-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    match mode {
        "file" => {
            let n: u64 = args
                .get(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            let (pipe, mut outs) = EvePipeline::start(&EveConfig::default(), &dir, 1).unwrap();
            let mut out = outs.pop().unwrap();
            for i in 0..10_000 {
                append(&mut out, i); // warm-up
            }
            let mut ns = Vec::with_capacity(n as usize);
            for i in 0..n {
                ns.push(append(&mut out, i));
                if i % 64 == 0 {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            let st = out.close();
            let ws = pipe.join();
            report("file", ns, &st, &ws);
        }
        "stall" => {
            let secs: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4);
            let sock = dir.join("eve.sock");
            let listener = UnixListener::bind(&sock).unwrap();
            let reader = std::thread::spawn(move || {
                let (mut c, _) = listener.accept().unwrap();
                std::thread::sleep(Duration::from_secs(2)); // the stall
                let mut sink = vec![0u8; 1 << 20];
                let mut total = 0u64;
                while let Ok(n) = c.read(&mut sink) {
                    if n == 0 {
                        break;
                    }
                    total += n as u64;
                }
                total
            });
            let cfg = EveConfig {
                filetype: FileType::UnixStream,
                filename: sock.to_string_lossy().into_owned(),
                ..EveConfig::default()
            };
            let (pipe, mut outs) = EvePipeline::start(&cfg, &dir, 1).unwrap();
            let mut out = outs.pop().unwrap();
            let end = Instant::now() + Duration::from_secs(secs);
            let mut ns = Vec::with_capacity(1 << 24);
            let mut i = 0;
            while Instant::now() < end {
                ns.push(append(&mut out, i));
                i += 1;
                if i % 64 == 0 {
                    // Pace the producer a little (~0.5-1 M records/s), like a busy worker.
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            let st = out.close();
            let ws = pipe.join();
            let got = reader.join().unwrap();
            report("stall", ns, &st, &ws);
            println!("stall: reader received {got} bytes");
        }
        "syscalls" => {
            let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
            let (pipe, mut outs) = EvePipeline::start(&EveConfig::default(), &dir, 1).unwrap();
            let mut out = outs.pop().unwrap();
            let mut i = 0;
            while out.stats().buffers * 64 * 1024 < mib << 20 {
                append(&mut out, i);
                i += 1;
            }
            let st = out.close();
            let ws = pipe.join();
            println!(
                "syscalls: {} MiB in {} records, {} buffers, {} write calls by the writer = {:.2} writes/MiB",
                ws.bytes >> 20,
                st.records_of(EventKind::Flow),
                ws.buffers,
                ws.writes,
                ws.writes as f64 / (ws.bytes as f64 / (1 << 20) as f64)
            );
        }
        "control" => {
            // Same loop and pacing, records formatted into a private buffer with no sink at all:
            // whatever tail this shows is the machine (preemption, interrupts), not the pipeline.
            let n: u64 = args
                .get(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            let mut buf = shrike_output::EveBuffer::new(64 * 1024);
            let mut ns = Vec::with_capacity(n as usize);
            for i in 0..n {
                let f = flow(i);
                let t0 = Instant::now();
                let mut r = buf.record(EventKind::Flow);
                write_flow_record(&mut r, &f);
                let _ = r.commit();
                ns.push(t0.elapsed().as_nanos() as u64);
                if buf.needs_flush() {
                    buf.clear();
                }
                if i % 64 == 0 {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            report(
                "control",
                ns,
                &OutputStats::default(),
                &OutputStats::default(),
            );
        }
        other => eprintln!("unknown mode {other}; use file | stall | syscalls | control"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
