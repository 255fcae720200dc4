//! Flow records against Suricata 7.0.10's, as a table: each case is a small capture (the
//! same ones `scripts/diff/gen/flow_timeouts.py` writes) and the flow records Suricata wrote
//! for it with the stock suricata.yaml (`scripts/diff/suricata-diff.py` on those captures):
//! start, packets per direction, state, reason and TCP flags.
//!
//! Mechanisms: flows time out by the packet clock in whole seconds (`timeout_at =
//! secs(last) + timeout`, timed out once `timeout_at < secs(now)`), a TCP flow's state is
//! its session's (no session without a handshake while midstream pickup is off: state new,
//! flags `00`, the 60 s `tcp.new` timeout), and only TCP, UDP, ICMP, SCTP and ESP packets
//! get a flow.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::Value;
use shrike_packet::decode::checksum::{fold, sum};
use shrike_pipeline::config::{Runmode, SensorConfig};
use shrike_pipeline::progress::{Progress, ProgressMode};
use shrike_pipeline::run::{run_files, RunOptions};

const T0: u64 = 1_700_000_000;
const A4: [u8; 4] = [10, 0, 0, 1];
const B4: [u8; 4] = [10, 0, 0, 2];

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    h.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = !fold(sum(&h, 0));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// A transport segment with its checksum (at `at`) over the IPv4 pseudo header.
fn with_csum(src: [u8; 4], dst: [u8; 4], proto: u8, mut seg: Vec<u8>, at: usize) -> Vec<u8> {
    let mut ph = Vec::new();
    ph.extend_from_slice(&src);
    ph.extend_from_slice(&dst);
    ph.extend_from_slice(&[0, proto]);
    ph.extend_from_slice(&(seg.len() as u16).to_be_bytes());
    let c = !fold(sum(&seg, sum(&ph, 0)));
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
    seg
}

fn udp(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16, data: &[u8]) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&sp.to_be_bytes());
    u.extend_from_slice(&dp.to_be_bytes());
    u.extend_from_slice(&((8 + data.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(data);
    with_csum(src, dst, 17, u, 6)
}

#[allow(clippy::too_many_arguments)]
fn tcp(
    src: [u8; 4],
    dst: [u8; 4],
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    data: &[u8],
) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sp.to_be_bytes());
    t.extend_from_slice(&dp.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.extend_from_slice(&[5 << 4, flags, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(data);
    with_csum(src, dst, 6, t, 16)
}

/// A classic pcap of `(seconds after T0, frame)`.
fn pcap(pkts: &[(f64, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&4u16.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&65535u32.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    for (t, f) in pkts {
        let us = (t * 1e6).round() as u64;
        b.extend_from_slice(&((T0 + us / 1_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((us % 1_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(f);
    }
    b
}

/// The flow records of `pkts` run through the pipeline (stock settings, one worker).
fn flows(name: &str, pkts: &[(f64, Vec<u8>)]) -> Vec<Value> {
    let dir = std::env::temp_dir().join(format!("shrike-fidelity-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.pcap");
    std::fs::write(&input, pcap(pkts)).unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let opts = RunOptions {
        inputs: vec![input.clone()],
        from_dir: vec![false],
        log_dir: out.clone(),
        workers: 1,
        runmode: Runmode::Single,
        progress: Progress::new(ProgressMode::None, true),
        engine: None,
        rule_counts: None,
        stop: Arc::new(AtomicBool::new(false)),
        bpf: None,
    };
    run_files(&SensorConfig::default(), opts).expect("run");
    let text = std::fs::read_to_string(out.join("eve.json")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut v: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event_type"] == "flow")
        .collect();
    v.sort_by_key(|r| r["flow"]["start"].as_str().unwrap_or("").to_string());
    v
}

fn udp_pkt(t: f64, fwd: bool) -> (f64, Vec<u8>) {
    let (s, d, sp, dp) = if fwd {
        (A4, B4, 40000, 9999)
    } else {
        (B4, A4, 9999, 40000)
    };
    (t, eth(0x0800, &ipv4(s, d, 17, &udp(s, d, sp, dp, b"x"))))
}

fn tcp_pkt(t: f64, fwd: bool, seq: u32, ack: u32, flags: u8, data: &[u8]) -> (f64, Vec<u8>) {
    let (s, d, sp, dp) = if fwd {
        (A4, B4, 40002, 80)
    } else {
        (B4, A4, 80, 40002)
    };
    let seg = tcp(s, d, sp, dp, seq, ack, flags, data);
    (t, eth(0x0800, &ipv4(s, d, 6, &seg)))
}

/// Suricata's record of one flow: start (seconds after T0), packets to server and to
/// client, state, reason, TCP flags (TCP only).
type Expect = (
    f64,
    u64,
    u64,
    &'static str,
    &'static str,
    Option<&'static str>,
);

fn check(name: &str, pkts: Vec<(f64, Vec<u8>)>, want: &[Expect]) {
    let got = flows(name, &pkts);
    let row = |r: &Value| {
        let f = &r["flow"];
        (
            f["start"].as_str().unwrap_or("").to_string(),
            f["pkts_toserver"].as_u64().unwrap_or(0),
            f["pkts_toclient"].as_u64().unwrap_or(0),
            f["state"].as_str().unwrap_or("").to_string(),
            f["reason"].as_str().unwrap_or("").to_string(),
            r["tcp"]["tcp_flags"].as_str().map(String::from),
        )
    };
    let got: Vec<_> = got.iter().map(row).collect();
    let want: Vec<_> = want
        .iter()
        .map(|&(t, ts, tc, st, re, fl)| {
            let us = (t * 1e6).round() as u64;
            let start = chrono_like(T0 + us / 1_000_000, us % 1_000_000);
            (
                start,
                ts,
                tc,
                st.to_string(),
                re.to_string(),
                fl.map(String::from),
            )
        })
        .collect();
    assert_eq!(got, want, "{name}");
}

/// `2023-11-14T22:13:20.100000+0000` for a time after T0 (same day: T0 is 22:13:20 UTC).
fn chrono_like(secs: u64, us: u64) -> String {
    let s = secs - T0 + 22 * 3600 + 13 * 60 + 20;
    let (d, s) = (s / 86_400, s % 86_400);
    format!(
        "2023-11-{:02}T{:02}:{:02}:{:02}.{us:06}+0000",
        14 + d,
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

#[test]
fn flow_records_match_suricata() {
    // Idle 30.8 s, but 0 + 30 is not below 30: the same flow; then 31 s: timed out.
    check(
        "udp-gap-new-30.8",
        vec![udp_pkt(0.1, true), udp_pkt(30.9, true), udp_pkt(61.9, true)],
        &[
            (0.1, 2, 0, "new", "timeout", None),
            (61.9, 1, 0, "new", "shutdown", None),
        ],
    );
    // Both directions: established, 300 s; 299 s idle keeps it, 302 s ends it.
    check(
        "udp-gap-est",
        vec![
            udp_pkt(0.5, true),
            udp_pkt(0.6, false),
            udp_pkt(299.5, true),
            udp_pkt(601.7, false),
        ],
        &[
            (0.5, 2, 1, "established", "timeout", None),
            (601.7, 1, 0, "new", "shutdown", None),
        ],
    );
    // One packet every 45 s one way: each its own flow (udp new: 30 s).
    let keep: Vec<_> = (0..144)
        .map(|i| udp_pkt(45.0 * f64::from(i), true))
        .collect();
    let want: Vec<Expect> = (0..144)
        .map(|i| {
            let reason = if i == 143 { "shutdown" } else { "timeout" };
            (45.0 * f64::from(i), 1, 0, "new", reason, None)
        })
        .collect();
    check("udp-keepalive-144", keep, &want);
    // TCP data without a handshake: no session (midstream off), state new, no flags, the
    // 60 s tcp.new timeout (59.1 s idle keeps it; 90.7 s ends it).
    check(
        "tcp-nosyn-gap",
        vec![
            tcp_pkt(0.2, true, 1000, 1, 0x18, b"a"),
            tcp_pkt(59.3, true, 1001, 1, 0x18, b"b"),
            tcp_pkt(150.0, false, 5000, 1, 0x18, b"c"),
        ],
        &[
            (0.2, 2, 0, "new", "timeout", Some("00")),
            (150.0, 1, 0, "new", "shutdown", Some("00")),
        ],
    );
    // A session: established by its handshake (600 s); idle 700 s ends it, and the late
    // segment alone starts a flow without a session.
    check(
        "tcp-handshake-gap",
        vec![
            tcp_pkt(0.1, true, 100, 0, 0x02, b""),
            tcp_pkt(0.2, false, 500, 101, 0x12, b""),
            tcp_pkt(0.3, true, 101, 501, 0x10, b""),
            tcp_pkt(0.4, true, 101, 501, 0x18, b"hello"),
            tcp_pkt(700.4, true, 106, 501, 0x18, b"again"),
        ],
        &[
            (0.1, 3, 1, "established", "timeout", Some("1a")),
            (700.4, 1, 0, "new", "shutdown", Some("00")),
        ],
    );
    // IGMP and an IP protocol no decoder knows: no flow at all.
    let group = [239, 1, 1, 1];
    let igmp: Vec<_> = (0..3)
        .map(|i| {
            let mut report = vec![0x16, 0, 0, 0, 239, 1, 1, 1];
            let c = !shrike_packet::decode::checksum::fold(shrike_packet::decode::checksum::sum(
                &report, 0,
            ));
            report[2..4].copy_from_slice(&c.to_be_bytes());
            (
                10.0 * f64::from(i),
                eth(0x0800, &ipv4(A4, group, 2, &report)),
            )
        })
        .collect();
    check("igmp", igmp, &[]);
    let unknown: Vec<_> = (0..3)
        .map(|i| (f64::from(i), eth(0x0800, &ipv4(A4, B4, 253, b"data"))))
        .collect();
    check("proto-253", unknown, &[]);
}
