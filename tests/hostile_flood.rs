//! Hostile traffic against the whole binary: captures generated here (random 5-tuple flood,
//! SYN flood, fragment flood, tiny-segment streams, huge HTTP headers, DNS compression
//! loops), run with a small config that caps the flow table. Each run must exit 0, keep its
//! peak RSS under a bound, and count what it saw.
//!
//! The stream, defrag and app-layer stages are being wired into the binary: these captures
//! already carry the traffic that stresses them. The config asks for their caps under
//! `detect.stream` / `detect.defrag` when the binary accepts those keys (checked with `-T`),
//! and counters that do not exist yet (`tcp.syn`, `defrag.ipv4.fragments`, `dns.*` …) are
//! asserted only when the stats record carries them.

mod hostile_util;

use hostile_util::*;
use std::ffi::OsStr;
use std::path::Path;

/// Peak RSS any of these runs may reach (KiB). shrike on the sample capture peaks near
/// 4 MiB (release) to 10 MiB (debug); the floods stay near that whatever their size.
const RSS_BOUND_KIB: u64 = 64 * 1024;

const BASE_CFG: &str = "workers:\n  count: 1\n  runmode: single\nstats:\n  enabled: true\n  interval: 1\ndetect:\n  flow:\n    max-flows: 500\n";

const EXTRA_CFG: &str = "  stream:\n    memcap: 4mb\n    reassembly:\n      memcap: 8mb\n      depth: 64kb\n  defrag:\n    memcap: 2mb\n    trackers: 1000\n    max-frags: 5000\n";

/// Writes the config: the flow cap always, the stream/defrag caps when the binary accepts
/// them. Returns the path and whether the extra caps are in force.
fn write_config(dir: &Path) -> (std::path::PathBuf, bool) {
    let p = dir.join("hostile.yaml");
    std::fs::write(&p, format!("{BASE_CFG}{EXTRA_CFG}")).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_shrike"))
        .arg("-T")
        .arg("-c")
        .arg(&p)
        .output()
        .unwrap();
    if o.status.success() {
        return (p, true);
    }
    eprintln!(
        "note: stream/defrag caps not accepted yet ({}); flow cap only",
        String::from_utf8_lossy(&o.stderr).trim()
    );
    std::fs::write(&p, BASE_CFG).unwrap();
    (p, false)
}

struct Outcome {
    run: Run,
    logs: std::path::PathBuf,
    _dir: TempDir,
}

impl Outcome {
    fn stat(&self, path: &str) -> Option<u64> {
        eve_stat(&self.logs, path)
    }
    fn err(&self) -> String {
        self.run.stderr()
    }
}

/// Writes `cap`, runs shrike on it with the capped config, checks exit 0, the packet count,
/// the RSS bound and the decoder/flow counters every run must have.
fn run_capture(tag: &str, cap: &Pcap) -> Outcome {
    let dir = TempDir::new(tag);
    let path = dir.path().join(format!("{tag}.pcap"));
    cap.write(&path);
    let (cfg, _) = write_config(dir.path());
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let args: Vec<&OsStr> = vec![
        OsStr::new("-v"),
        OsStr::new("-c"),
        cfg.as_os_str(),
        OsStr::new("-r"),
        path.as_os_str(),
        OsStr::new("-l"),
        logs.as_os_str(),
    ];
    let run = run_measured(&args, dir.path());
    let err = run.stderr();
    assert_eq!(run.code(), Some(0), "{tag}: {err}");
    assert!(!err.contains("panicked"), "{tag}: {err}");
    assert_eq!(summary_packets(&err), Some(cap.packets), "{tag}: {err}");
    if let Some(kib) = run.peak_rss_kib {
        eprintln!("{tag}: {} packets, peak RSS {} KiB", cap.packets, kib);
        assert!(
            kib < RSS_BOUND_KIB,
            "{tag}: peak RSS {kib} KiB over the bound"
        );
    }
    let out = Outcome {
        run,
        logs,
        _dir: dir,
    };
    assert_eq!(out.stat("decoder.pkts"), Some(cap.packets), "{tag}");
    // The flow table never holds more than max-flows.
    let active = out.stat("flow.active").unwrap_or(0);
    assert!(active <= 500, "{tag}: flow.active {active}");
    out
}

const T0: u64 = 1_700_000_000_000_000;

#[test]
fn random_five_tuple_flood_is_capped_by_max_flows() {
    let mut rng = Rng(0x5eed_0001);
    let mut cap = Pcap::new(1);
    let n = 60_000u64;
    for i in 0..n {
        let src = rng.u32().to_be_bytes();
        let dst = rng.u32().to_be_bytes();
        let (sp, dp) = (rng.u16(), rng.u16());
        let f = if rng.u8() & 1 == 0 {
            udp4(src, dst, sp, dp, b"flood")
        } else {
            tcp4(src, dst, sp, dp, rng.u32(), 0, ACK | PSH, b"flood")
        };
        cap.push(T0 + i * 10, &f);
    }
    let o = run_capture("flood", &cap);
    let total = o.stat("flow.total").expect("flow.total");
    let failed = o
        .stat("flow.get_used_failed")
        .expect("flow.get_used_failed");
    eprintln!("flood: flow.total {total}, flow.get_used_failed {failed}");
    // The flood lasts 0.6 s of packet time: every flow in the full table is still alive
    // (Suricata's StillAlive), so no flow is taken and each further tuple gets no flow.
    assert_eq!(total, 500, "flow.total");
    assert_eq!(failed, n - 500, "packets without a flow");
    assert_eq!(o.stat("flow.memcap"), Some(0));
}

#[test]
fn flood_memory_does_not_grow_with_flood_size() {
    // The same flood at 10k and 80k packets: the peak RSS may not follow the packet count.
    let mut peaks = Vec::new();
    for n in [10_000u64, 80_000] {
        let mut rng = Rng(0x5eed_0002);
        let mut cap = Pcap::new(1);
        for i in 0..n {
            let f = udp4(
                rng.u32().to_be_bytes(),
                rng.u32().to_be_bytes(),
                rng.u16(),
                53,
                b"x",
            );
            cap.push(T0 + i, &f);
        }
        let o = run_capture(&format!("growth{n}"), &cap);
        peaks.push(o.run.peak_rss_kib);
    }
    if let [Some(small), Some(big)] = peaks[..] {
        eprintln!("peak RSS: 10k flows {small} KiB, 80k flows {big} KiB");
        // 70k more flows at >= 200 bytes each would be 14 MB: allow 4 MiB of noise.
        assert!(
            big < small + 4 * 1024,
            "RSS grows with the flood: {small} -> {big} KiB"
        );
    }
}

#[test]
fn syn_flood_from_random_sources() {
    let mut rng = Rng(0x5eed_0003);
    let mut cap = Pcap::new(1);
    let n = 40_000u64;
    for i in 0..n {
        let f = tcp4(
            rng.u32().to_be_bytes(),
            [10, 0, 0, 80],
            rng.u16() | 1024,
            80,
            rng.u32(),
            0,
            SYN,
            b"",
        );
        // 4 s of packet time: the first flows are no longer alive after 2 s.
        cap.push(T0 + i * 100, &f);
    }
    let o = run_capture("synflood", &cap);
    assert_eq!(o.stat("decoder.tcp"), Some(n));
    // Suricata's used-flow semantics: a SYN takes the oldest half-open flow once that one
    // is idle 2 s, else it gets no flow.
    let total = o.stat("flow.total").unwrap_or(0);
    let used = o.stat("flow.get_used").unwrap_or(0);
    let failed = o.stat("flow.get_used_failed").unwrap_or(0);
    eprintln!("synflood: flow.total {total}, get_used {used}, get_used_failed {failed}");
    assert!(used > 0 && failed > 0, "{used} {failed}");
    assert_eq!(total, 500 + used);
    assert_eq!(used + failed, n - 500);
    // Each flow taken is logged as Suricata logs it: forced, in emergency mode.
    let text = std::fs::read_to_string(o.logs.join("eve.json")).unwrap();
    let forced = text
        .lines()
        .filter(|l| l.contains("\"event_type\":\"flow\""))
        .filter(|l| l.contains("\"reason\":\"forced\"") && l.contains("\"emergency\":true"))
        .count() as u64;
    assert_eq!(forced, used, "forced flow records");
    if let Some(syn) = o.stat("tcp.syn") {
        assert_eq!(syn, n, "every SYN counted");
    }
    if let Some(sessions) = o.stat("tcp.sessions") {
        assert!(sessions <= n);
    }
}

#[test]
fn fragment_flood_never_completing() {
    // First fragments (MF set, offset 0) with random ids and sources: none completes, so
    // every one would hold a defrag tracker until the timeout or the cap.
    let mut rng = Rng(0x5eed_0004);
    let mut cap = Pcap::new(1);
    let n = 30_000u64;
    let body = [0x41u8; 256];
    for i in 0..n {
        let ip = ipv4(
            [192, 168, rng.u8(), rng.u8()],
            [10, 0, 0, 9],
            rng.u16(),
            0x2000 | (rng.below(4) as u16 * 40),
            17,
            &body,
        );
        cap.push(T0 + i * 20, &eth(0x0800, &ip));
    }
    let o = run_capture("fragflood", &cap);
    assert_eq!(o.stat("decoder.ipv4"), Some(n));
    if let Some(frags) = o.stat("defrag.ipv4.fragments") {
        assert!(frags <= n);
        if let Some(m) = o.stat("defrag.memuse") {
            assert!(
                m <= 4 << 20,
                "defrag.memuse {m} over its 2 MiB cap (plus slack)"
            );
        }
    }
}

/// TCP handshake between `c` and `s` on `sport` → 80, then `segments` from the client.
fn conversation(cap: &mut Pcap, t: &mut u64, c: [u8; 4], sport: u16, segs: &[Vec<u8>]) {
    let s = [10, 0, 0, 80];
    let (ci, si) = (1000u32, 5000u32);
    let mut push = |cap: &mut Pcap, f: Vec<u8>| {
        *t += 3;
        cap.push(*t, &f);
    };
    push(cap, tcp4(c, s, sport, 80, ci, 0, SYN, b""));
    push(cap, tcp4(s, c, 80, sport, si, ci + 1, SYN | ACK, b""));
    push(cap, tcp4(c, s, sport, 80, ci + 1, si + 1, ACK, b""));
    let mut seq = ci + 1;
    for p in segs {
        push(cap, tcp4(c, s, sport, 80, seq, si + 1, ACK | PSH, p));
        seq = seq.wrapping_add(p.len() as u32);
        push(cap, tcp4(s, c, 80, sport, si + 1, seq, ACK, b""));
    }
    push(cap, tcp4(c, s, sport, 80, seq, si + 1, FIN | ACK, b""));
    push(cap, tcp4(s, c, 80, sport, si + 1, seq + 1, FIN | ACK, b""));
    push(cap, tcp4(c, s, sport, 80, seq + 1, si + 2, ACK, b""));
}

#[test]
fn tiny_segment_streams() {
    // 100 connections sending an HTTP request one byte per segment.
    let req =
        b"GET /tiny/segments/are/expensive HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n";
    let mut cap = Pcap::new(1);
    let mut t = T0;
    for c in 0..100u16 {
        let segs: Vec<Vec<u8>> = req.iter().map(|&b| vec![b]).collect();
        conversation(
            &mut cap,
            &mut t,
            [172, 16, (c >> 8) as u8, c as u8],
            30000 + c,
            &segs,
        );
    }
    let o = run_capture("tinyseg", &cap);
    assert_eq!(o.stat("flow.total"), Some(100));
    assert_eq!(o.stat("flow.tcp"), Some(100));
    if let Some(segs) = o.stat("tcp.segment_memcap_drop") {
        let _ = segs; // present once the stream engine is wired: memcap drops are counted.
    }
}

#[test]
fn huge_http_headers() {
    // Requests with 256 KiB of headers (one 64 KiB header line and thousands of small ones),
    // in 1400-byte segments.
    let mut req = b"GET / HTTP/1.1\r\nHost: big.example\r\n".to_vec();
    req.extend_from_slice(b"X-Long: ");
    req.extend(std::iter::repeat_n(b'a', 64 * 1024));
    req.extend_from_slice(b"\r\n");
    let mut i = 0;
    while req.len() < 256 * 1024 {
        req.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
        i += 1;
    }
    req.extend_from_slice(b"\r\n");
    let segs: Vec<Vec<u8>> = req.chunks(1400).map(<[u8]>::to_vec).collect();
    let mut cap = Pcap::new(1);
    let mut t = T0;
    for c in 0..20u16 {
        conversation(&mut cap, &mut t, [172, 17, 0, c as u8], 31000 + c, &segs);
    }
    let o = run_capture("bighdr", &cap);
    assert_eq!(o.stat("flow.total"), Some(20));
    if let Some(m) = o.stat("http.memuse") {
        assert!(m < 64 << 20, "http.memuse {m}");
    }
}

/// A DNS message whose question name is a compression pointer loop (`ptr` → itself or a
/// two-pointer cycle), with `an` answers that point into the loop too.
fn dns_loop(id: u16, two: bool, response: bool) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(if response {
        &[0x81, 0x80]
    } else {
        &[0x01, 0x00]
    });
    m.extend_from_slice(&[0, 1, 0, if response { 2 } else { 0 }, 0, 0, 0, 0]);
    if two {
        // 12: label "a" then pointer to 16; 16: pointer to 12.
        m.extend_from_slice(&[1, b'a', 0xc0, 16, 0xc0, 12]);
    } else {
        m.extend_from_slice(&[0xc0, 12]);
    }
    m.extend_from_slice(&[0, 1, 0, 1]);
    if response {
        for _ in 0..2 {
            m.extend_from_slice(&[0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xc0, 12]);
        }
    }
    m
}

#[test]
fn dns_compression_loops() {
    let mut cap = Pcap::new(1);
    let n = 4_000u64;
    for i in 0..n {
        let two = i % 2 == 0;
        let c = [10, 1, (i >> 8) as u8, i as u8];
        let q = dns_loop(i as u16, two, false);
        let r = dns_loop(i as u16, two, true);
        cap.push(T0 + i * 100, &udp4(c, [10, 0, 0, 53], 40000, 53, &q));
        cap.push(T0 + i * 100 + 1, &udp4([10, 0, 0, 53], c, 53, 40000, &r));
    }
    let o = run_capture("dnsloop", &cap);
    assert_eq!(o.stat("decoder.udp"), Some(2 * n));
    assert!(o.stat("flow.udp").unwrap_or(0) >= 500);
    let _ = o.err();
}
