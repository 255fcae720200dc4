//! The stream engine and defragmentation wired into the binary: their caps hold under
//! floods (counters show the refusals, peak RSS stays bounded), content split across TCP
//! segments alerts through raw stream inspection, and a fragmented datagram alerts once
//! reassembled.

mod hostile_util;

use hostile_util::*;
use std::ffi::OsStr;
use std::path::PathBuf;

/// Peak RSS any capped run may reach (KiB).
const RSS_BOUND_KIB: u64 = 64 * 1024;

const T0: u64 = 1_700_000_000_000_000;

/// Small caps: a flow table large enough that only the stream/defrag caps bite.
const CAPS: &str = "workers:\n  count: 1\n  runmode: single\nstats:\n  enabled: true\n  interval: 1\ndetect:\n  flow:\n    max-flows: 100000\n  stream:\n    memcap: 64kb\n    reassembly:\n      memcap: 256kb\n      depth: 64kb\n  defrag:\n    memcap: 256kb\n    trackers: 200\n    max-frags: 1000\n";

struct Out {
    run: Run,
    logs: PathBuf,
    _dir: TempDir,
}

impl Out {
    fn stat(&self, path: &str) -> u64 {
        eve_stat(&self.logs, path).unwrap_or_else(|| panic!("no stats value {path}"))
    }
    fn eve(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.logs.join("eve.json"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
    fn alerts(&self, sid: u64) -> Vec<serde_json::Value> {
        self.eve()
            .into_iter()
            .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == sid)
            .collect()
    }
}

/// Runs the release binary on `cap` with `cfg` and (optionally) `rules`.
fn run(tag: &str, cap: &Pcap, cfg: &str, rules: Option<&str>) -> Out {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join(format!("{tag}.pcap"));
    cap.write(&pcap);
    // For comparing with Suricata by hand: keep the capture.
    if let Ok(keep) = std::env::var("STREAM_CAPS_KEEP") {
        let _ = std::fs::copy(&pcap, format!("{keep}/{tag}.pcap"));
    }
    let cfg_path = dir.path().join("caps.yaml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let rules_path = dir.path().join("test.rules");
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("-c"),
        cfg_path.as_os_str(),
        OsStr::new("-r"),
        pcap.as_os_str(),
        OsStr::new("-l"),
        logs.as_os_str(),
        OsStr::new("-k"),
        OsStr::new("none"),
    ];
    if let Some(r) = rules {
        std::fs::write(&rules_path, r).unwrap();
        args.push(OsStr::new("-S"));
        args.push(rules_path.as_os_str());
    }
    let r = run_measured(&args, dir.path());
    assert_eq!(r.code(), Some(0), "{tag}: {}", r.stderr());
    if let Some(kib) = r.peak_rss_kib {
        assert!(kib < RSS_BOUND_KIB, "{tag}: peak RSS {kib} KiB");
    }
    Out {
        run: r,
        logs,
        _dir: dir,
    }
}

#[test]
fn syn_flood_hits_the_session_memcap() {
    let mut rng = Rng(0x5eed_1001);
    let mut cap = Pcap::new(1);
    let n = 20_000u64;
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
        cap.push(T0 + i * 5, &f);
    }
    let o = run("synflood", &cap, CAPS, None);
    assert_eq!(o.stat("tcp.syn"), n);
    let sessions = o.stat("tcp.sessions");
    let dropped = o.stat("tcp.ssn_memcap_drop");
    assert!(dropped > 0, "64 KiB of sessions cannot hold {n} SYNs");
    assert_eq!(
        sessions + dropped,
        n,
        "every SYN made a session or hit the memcap"
    );
    assert!(o.stat("tcp.memuse") <= 64 << 10);
}

#[test]
fn fragment_flood_is_bounded_by_defrag_caps() {
    // First fragments with random ids: none completes, every one wants a tracker.
    let mut rng = Rng(0x5eed_1002);
    let mut cap = Pcap::new(1);
    let n = 10_000u64;
    let body = [0x41u8; 256];
    for i in 0..n {
        let ip = ipv4(
            [192, 168, rng.u8(), rng.u8()],
            [10, 0, 0, 9],
            rng.u16(),
            0x2000,
            17,
            &body,
        );
        cap.push(T0 + i * 20, &eth(0x0800, &ip));
    }
    let o = run("fragflood", &cap, CAPS, None);
    assert_eq!(o.stat("defrag.ipv4.fragments"), n);
    assert_eq!(o.stat("defrag.ipv4.reassembled"), 0);
    let refused = o.stat("defrag.max_trackers_reached") + o.stat("defrag.max_frags_reached");
    assert!(refused > 0, "200 trackers cannot hold {n} datagrams");
    assert!(o.stat("defrag.memuse") <= 256 << 10);
}

/// Handshake from `c`:`sport` to 10.0.0.80:`dport`, the client segments each acked by the
/// server, then FIN/FIN/ACK. Returns the pcap numbers (1-based) of the server ACKs.
fn conversation(
    cap: &mut Pcap,
    t: &mut u64,
    c: [u8; 4],
    sport: u16,
    dport: u16,
    segs: &[&[u8]],
) -> Vec<u64> {
    conversation_isn(cap, t, c, sport, dport, segs, (1000, 5000))
}

/// [`conversation`] with the client and server ISNs `(ci, si)`.
fn conversation_isn(
    cap: &mut Pcap,
    t: &mut u64,
    c: [u8; 4],
    sport: u16,
    dport: u16,
    segs: &[&[u8]],
    (ci, si): (u32, u32),
) -> Vec<u64> {
    let s = [10, 0, 0, 80];
    let mut n = cap_len(cap);
    let mut acks = Vec::new();
    let mut push = |cap: &mut Pcap, f: Vec<u8>, n: &mut u64| {
        *t += 3;
        *n += 1;
        cap.push(*t, &f);
    };
    push(cap, tcp4(c, s, sport, dport, ci, 0, SYN, b""), &mut n);
    push(
        cap,
        tcp4(s, c, dport, sport, si, ci + 1, SYN | ACK, b""),
        &mut n,
    );
    push(
        cap,
        tcp4(c, s, sport, dport, ci + 1, si + 1, ACK, b""),
        &mut n,
    );
    let mut seq = ci + 1;
    for p in segs {
        push(
            cap,
            tcp4(c, s, sport, dport, seq, si + 1, ACK | PSH, p),
            &mut n,
        );
        seq = seq.wrapping_add(p.len() as u32);
        push(cap, tcp4(s, c, dport, sport, si + 1, seq, ACK, b""), &mut n);
        acks.push(n);
    }
    push(
        cap,
        tcp4(c, s, sport, dport, seq, si + 1, FIN | ACK, b""),
        &mut n,
    );
    push(
        cap,
        tcp4(s, c, dport, sport, si + 1, seq + 1, FIN | ACK, b""),
        &mut n,
    );
    push(
        cap,
        tcp4(c, s, sport, dport, seq + 1, si + 2, ACK, b""),
        &mut n,
    );
    acks
}

/// Packets already in `cap`.
fn cap_len(cap: &Pcap) -> u64 {
    cap.packets
}

#[test]
fn tiny_segments_stay_within_the_reassembly_memcap() {
    // 300 connections, each sending 600 one-byte segments without closing.
    let mut cap = Pcap::new(1);
    let mut t = T0;
    let payload = [b'x'; 600];
    let segs: Vec<&[u8]> = payload.chunks(1).collect();
    for c in 0..300u16 {
        conversation(
            &mut cap,
            &mut t,
            [172, 16, (c >> 8) as u8, c as u8],
            20_000 + c,
            4444,
            &segs,
        );
    }
    let o = run("tinyseg", &cap, CAPS, None);
    assert_eq!(o.stat("tcp.sessions"), 300);
    assert!(o.stat("tcp.reassembly_memuse") <= 256 << 10);
    let _ = &o.run;
}

#[test]
fn content_split_across_segments_alerts_on_stream() {
    let mut cap = Pcap::new(1);
    let mut t = T0;
    let acks = conversation(
        &mut cap,
        &mut t,
        [172, 16, 0, 1],
        40000,
        4444,
        &[b"hello sha", b"red secret world"],
    );
    assert_eq!(acks.len(), 2);
    let rules = "alert tcp any any -> any any (msg:\"split\"; content:\"shared secret\"; sid:1;)\n\
                 alert tcp any any -> any any (msg:\"packet only\"; flow:no_stream; content:\"shared secret\"; sid:2;)\n";
    let o = run("split", &cap, CAPS, Some(rules));
    let a = o.alerts(1);
    assert_eq!(a.len(), 1, "the stream match alerts once: {a:?}");
    assert!(o.alerts(2).is_empty(), "no single packet holds the content");
}

#[test]
fn fragmented_datagram_alerts_after_reassembly() {
    // One UDP datagram in three fragments; the content spans the fragment boundaries.
    let mut payload = vec![b'.'; 120];
    payload[30..52].copy_from_slice(b"fragmented-needle-here");
    let dgram = {
        let mut u = Vec::new();
        u.extend_from_slice(&5353u16.to_be_bytes());
        u.extend_from_slice(&9999u16.to_be_bytes());
        u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(&payload);
        u
    };
    let mut cap = Pcap::new(1);
    let (src, dst) = ([192, 168, 1, 1], [10, 0, 0, 9]);
    // Offsets in 8-byte units: 0..40, 40..80, 80..128.
    for (i, (a, b)) in [(0usize, 40usize), (40, 80), (80, dgram.len())]
        .into_iter()
        .enumerate()
    {
        let more = if b < dgram.len() { 0x2000 } else { 0 };
        let ip = ipv4(src, dst, 0x4242, more | (a / 8) as u16, 17, &dgram[a..b]);
        cap.push(T0 + i as u64 * 10, &eth(0x0800, &ip));
    }
    let rules = "alert udp any any -> any 9999 (msg:\"reassembled\"; content:\"fragmented-needle-here\"; sid:7;)\n";
    let o = run("frag", &cap, CAPS, Some(rules));
    assert_eq!(o.stat("defrag.ipv4.fragments"), 3);
    assert_eq!(o.stat("defrag.ipv4.reassembled"), 1);
    let a = o.alerts(7);
    assert_eq!(a.len(), 1, "{a:?}");
    // As Suricata's: the rebuilt datagram is a packet of its own (`pkt_src` `defrag`, no
    // capture number), made when the last fragment arrives.
    assert_eq!(a[0]["pkt_src"], "defrag");
    assert!(a[0].get("pcap_cnt").is_none(), "{:?}", a[0]);
    assert!(
        a[0]["timestamp"]
            .as_str()
            .is_some_and(|t| t.contains(":20.000020")),
        "the datagram completes with the last fragment: {}",
        a[0]["timestamp"]
    );
}

#[test]
fn stream_size_follows_the_session_sequence_numbers() {
    // SYN 1, SYN/ACK 2, ACK 3, "hello" 4, ack 5, "world!" 6, ack 7, FIN 8, FIN 9, ACK 10.
    let mut cap = Pcap::new(1);
    let mut t = T0;
    conversation(
        &mut cap,
        &mut t,
        [172, 16, 0, 2],
        40001,
        4444,
        &[b"hello", b"world!"],
    );
    // Sizes are `next_seq - isn` per sender: the SYN counts one, the FIN one once acked
    // (checked against Suricata 7.0.10 on this capture).
    let rules = "alert tcp any any -> any any (flow:to_server; stream_size:client,=,1; sid:1;)\n\
                 alert tcp any any -> any any (stream_size:client,=,13; sid:2;)\n\
                 alert tcp any any -> any any (stream_size:server,=,2; sid:3;)\n\
                 alert tcp any any -> any any (stream_size:both,=,1; sid:4;)\n\
                 alert tcp any any -> any any (stream_size:either,=,0; sid:5;)\n\
                 alert tcp any any -> any any (stream_size:client,=,6; content:\"hello\"; sid:6;)\n\
                 alert tcp any any -> any any (flow:to_server; stream_size:client,>,6; content:\"hello\"; sid:7;)\n\
                 alert tcp any any -> any any (stream_size:client,!=,6; prefilter; content:\"hello\"; sid:8;)\n";
    let o = run("streamsize", &cap, CAPS, Some(rules));
    let pkts = |sid: u64| -> Vec<u64> {
        o.alerts(sid)
            .iter()
            .map(|a| a["pcap_cnt"].as_u64().unwrap_or(0))
            .collect()
    };
    assert_eq!(pkts(1), [1, 3]);
    assert_eq!(pkts(2), [9, 10]);
    assert_eq!(pkts(3), [10]);
    assert_eq!(pkts(4), [2, 3]);
    assert_eq!(pkts(5), [1]);
    // With stream_size the packet payload is inspected too (Suricata's REQUIRE_PACKET).
    assert_eq!(pkts(6), [4]);
    // Later the content is found in the reassembled stream.
    assert_eq!(pkts(7), [8]);
    assert_eq!(pkts(8), [8]);
}

#[test]
fn syn_on_a_closed_session_starts_a_new_flow() {
    // A closed session, then a SYN with a new ISN on the same tuple (Suricata's TCP
    // session reuse), then the same again with the old ISN's retransmitted SYN.
    let mut cap = Pcap::new(1);
    let mut t = T0;
    let c = [172, 16, 0, 3];
    conversation_isn(&mut cap, &mut t, c, 40002, 80, &[b"first"], (1000, 5000));
    conversation_isn(
        &mut cap,
        &mut t,
        c,
        40002,
        80,
        &[b"second"],
        (900_000, 7000),
    );
    let rules = "alert tcp any any -> any any (msg:\"second\"; content:\"second\"; sid:1;)\n";
    let o = run("reuse", &cap, CAPS, Some(rules));
    assert_eq!(o.stat("flow.tcp_reuse"), 1);
    assert_eq!(o.stat("tcp.sessions"), 2);
    let flows: Vec<serde_json::Value> = o
        .eve()
        .into_iter()
        .filter(|r| r["event_type"] == "flow")
        .collect();
    assert_eq!(flows.len(), 2, "{flows:?}");
    let mut pkts: Vec<(u64, u64)> = flows
        .iter()
        .map(|f| {
            (
                f["flow"]["pkts_toserver"].as_u64().unwrap_or(0),
                f["flow"]["pkts_toclient"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    pkts.sort_unstable();
    assert_eq!(pkts, [(5, 3), (5, 3)]);
    assert!(
        flows.iter().all(|f| f["tcp"]["state"] == "closed"),
        "{flows:?}"
    );
    let ids: std::collections::BTreeSet<u64> =
        flows.iter().filter_map(|f| f["flow_id"].as_u64()).collect();
    assert_eq!(ids.len(), 2);
    let a = o.alerts(1);
    assert_eq!(a.len(), 1, "{a:?}");
}

/// Without rules nothing inspects the raw stream, so reassembly keeps only what the app layer
/// has not consumed yet (Suricata sets `STREAMTCP_STREAM_FLAG_DISABLE_RAW` when the flow's rule
/// group has no stream rules): a 4 MiB upload with an unlimited depth fits a 256 KiB
/// reassembly memcap, nothing is dropped and its file is whole. Kept raw, the stream filled
/// the memcap after 256 KiB.
#[test]
fn without_rules_no_raw_stream_is_kept() {
    let mut cap = Pcap::new(1);
    let mut t = T0;
    let len = 4usize << 20;
    let mut req =
        format!("POST /up.bin HTTP/1.1\r\nHost: h\r\nContent-Length: {len}\r\n\r\n").into_bytes();
    req.extend(std::iter::repeat_n(b'u', len));
    let segs: Vec<&[u8]> = req.chunks(1400).collect();
    conversation(&mut cap, &mut t, [172, 16, 9, 9], 33_000, 80, &segs);
    let cfg = CAPS.replace("depth: 64kb", "depth: 0")
        + "  app-layer:\n    http:\n      request-body-limit: 0\n";
    let o = run("noraw", &cap, &cfg, None);
    assert_eq!(o.stat("tcp.segment_memcap_drop"), 0);
    assert_eq!(o.stat("tcp.reassembly_gap"), 0);
    let files: Vec<_> = o
        .eve()
        .into_iter()
        .filter(|r| r["event_type"] == "fileinfo")
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0]["fileinfo"]["size"], len as u64);
    assert_eq!(files[0]["fileinfo"]["state"], "CLOSED");
}
