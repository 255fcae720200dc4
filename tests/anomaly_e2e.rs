//! EVE `anomaly` records end to end: a generated capture with decoder events (ICMP unknown
//! type and code, a truncated IPv4 packet), a stream event (a RST with an old TCP timestamp)
//! and app-layer events (an HTTP/1.1 request without Host, a DNS query with the Z flag),
//! run through the binary with Suricata-style `- anomaly:` settings. The records and their
//! fields are those Suricata 7.0.10 writes for the same capture (`MISSING_HOST_HEADER`
//! twice: Suricata checks libhtp's tx flags when the header data is flushed and when the
//! request completes, adding the event each time); every record validates against the EVE
//! schema.

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{csum, eth, ipv4, udp4, Pcap, ACK, FIN, PSH, RST, SYN};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];
const T0: u64 = 1_700_000_000_000_000;

/// TCP segment with an optional timestamp option (`(tsval, tsecr)`).
fn tcp_ts(
    sp: u16,
    dp: u16,
    seq: u32,
    ack: u32,
    fl: u8,
    ts: Option<(u32, u32)>,
    pl: &[u8],
) -> Vec<u8> {
    let opts: Vec<u8> = match ts {
        Some((v, e)) => {
            let mut o = vec![1, 1, 8, 10];
            o.extend_from_slice(&v.to_be_bytes());
            o.extend_from_slice(&e.to_be_bytes());
            o
        }
        None => Vec::new(),
    };
    let doff = ((20 + opts.len()) / 4) as u8;
    let mut t = Vec::new();
    t.extend_from_slice(&sp.to_be_bytes());
    t.extend_from_slice(&dp.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    t.extend_from_slice(&[doff << 4, fl, 0xff, 0xff, 0, 0, 0, 0]);
    t.extend_from_slice(&opts);
    t.extend_from_slice(pl);
    t
}

fn tcp_frame(src: [u8; 4], dst: [u8; 4], seg: &[u8]) -> Vec<u8> {
    eth(0x0800, &ipv4(src, dst, 1, 0x4000, 6, seg))
}

fn icmp(t: u8, code: u8) -> Vec<u8> {
    let mut m = vec![t, code, 0, 0, 0, 1, 0, 1, b'p', b'i', b'n', b'g'];
    let c = csum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    eth(0x0800, &ipv4(C, S, 7, 0, 1, &m))
}

/// The capture, and the packet numbers (1-based) of the events.
fn capture() -> Pcap {
    let mut cap = Pcap::new(1);
    let mut t = T0;
    let mut push = |cap: &mut Pcap, f: &[u8]| {
        t += 1000;
        cap.push(t, f);
    };
    // 1: ICMP type 250 (unassigned): decoder.icmpv4.unknown_type.
    push(&mut cap, &icmp(250, 0));
    // 2: echo reply with code 5: decoder.icmpv4.unknown_code.
    push(&mut cap, &icmp(0, 5));
    // 3: IPv4 total length past the captured bytes: decoder.ipv4.trunc_pkt.
    let mut trunc = ipv4(C, S, 9, 0, 17, &[0u8; 20]);
    trunc[2..4].copy_from_slice(&200u16.to_be_bytes());
    trunc[10..12].copy_from_slice(&[0, 0]);
    let c = csum(&trunc[..20]);
    trunc[10..12].copy_from_slice(&c.to_be_bytes());
    push(&mut cap, &eth(0x0800, &trunc));
    // 4-7: TCP with timestamps; the server's RST carries an older timestamp:
    // stream.pkt_invalid_timestamp.
    let (cs, ss) = (1000u32, 9000u32);
    push(
        &mut cap,
        &tcp_frame(C, S, &tcp_ts(40000, 2222, cs, 0, SYN, Some((100, 0)), b"")),
    );
    push(
        &mut cap,
        &tcp_frame(
            S,
            C,
            &tcp_ts(2222, 40000, ss, cs + 1, SYN | ACK, Some((500, 100)), b""),
        ),
    );
    push(
        &mut cap,
        &tcp_frame(
            C,
            S,
            &tcp_ts(40000, 2222, cs + 1, ss + 1, ACK, Some((101, 500)), b""),
        ),
    );
    push(
        &mut cap,
        &tcp_frame(
            S,
            C,
            &tcp_ts(
                2222,
                40000,
                ss + 1,
                cs + 1,
                RST | ACK,
                Some((400, 101)),
                b"",
            ),
        ),
    );
    // 8-16: HTTP/1.1 request without Host: MISSING_HOST_HEADER.
    let req = b"GET /a HTTP/1.1\r\nUser-Agent: t\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let (cs, ss) = (5000u32, 7000u32);
    let cseg = |seq: u32, ack: u32, fl: u8, pl: &[u8]| {
        tcp_frame(C, S, &tcp_ts(40001, 80, seq, ack, fl, None, pl))
    };
    let sseg = |seq: u32, ack: u32, fl: u8, pl: &[u8]| {
        tcp_frame(S, C, &tcp_ts(80, 40001, seq, ack, fl, None, pl))
    };
    let (rl, pl) = (req.len() as u32, resp.len() as u32);
    push(&mut cap, &cseg(cs, 0, SYN, b""));
    push(&mut cap, &sseg(ss, cs + 1, SYN | ACK, b""));
    push(&mut cap, &cseg(cs + 1, ss + 1, ACK, b""));
    push(&mut cap, &cseg(cs + 1, ss + 1, PSH | ACK, req));
    push(&mut cap, &sseg(ss + 1, cs + 1 + rl, ACK, b""));
    push(&mut cap, &sseg(ss + 1, cs + 1 + rl, PSH | ACK, resp));
    push(&mut cap, &cseg(cs + 1 + rl, ss + 1 + pl, ACK | FIN, b""));
    push(&mut cap, &sseg(ss + 1 + pl, cs + 2 + rl, ACK | FIN, b""));
    push(&mut cap, &cseg(cs + 2 + rl, ss + 2 + pl, ACK, b""));
    // 17: DNS query with the Z flag: z_flag_set.
    let q = [
        0x12, 0x34, 0x01, 0x40, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'b', b'c', 0, 0, 1, 0, 1,
    ];
    push(&mut cap, &udp4(C, S, 5353, 53, &q));
    cap
}

fn run(yaml: &str, tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("anomalies.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_ANOMALY_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(&pcap)
        .arg("-l")
        .arg(dir.path())
        .args(["-k", "none"])
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs
}

fn yaml(anomaly: &str) -> String {
    format!(
        "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filetype: regular\n      types:\n        - alert\n        - http\n        - dns\n        - flow\n{anomaly}"
    )
}

/// `(type, event)` of every anomaly record, sorted.
fn anomalies(recs: &[serde_json::Value]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = recs
        .iter()
        .filter(|r| r["event_type"] == "anomaly")
        .map(|r| {
            (
                r["anomaly"]["type"].as_str().unwrap_or("").to_string(),
                r["anomaly"]["event"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn find<'a>(recs: &'a [serde_json::Value], event: &str) -> &'a serde_json::Value {
    recs.iter()
        .find(|r| r["event_type"] == "anomaly" && r["anomaly"]["event"] == event)
        .unwrap_or_else(|| panic!("no anomaly {event}"))
}

fn pair(t: &str, e: &str) -> (String, String) {
    (t.to_string(), e.to_string())
}

#[test]
fn every_kind_with_packet_headers() {
    let recs = run(
        &yaml("        - anomaly:\n            types:\n              decode: yes\n              stream: yes\n            packethdr: yes\n"),
        "anomaly-all",
    );
    assert_eq!(
        anomalies(&recs),
        vec![
            pair("applayer", "MISSING_HOST_HEADER"),
            pair("applayer", "MISSING_HOST_HEADER"),
            pair("applayer", "z_flag_set"),
            pair("decode", "decoder.icmpv4.unknown_code"),
            pair("decode", "decoder.icmpv4.unknown_type"),
            pair("decode", "decoder.ipv4.trunc_pkt"),
            pair("stream", "stream.pkt_invalid_timestamp"),
        ]
    );
    // Decoder event on an ICMP flow: addresses, ICMP type/code, flow id, packet header.
    let u = find(&recs, "decoder.icmpv4.unknown_type");
    assert_eq!(u["pcap_cnt"], 1);
    assert_eq!(
        (u["icmp_type"].as_u64(), u["icmp_code"].as_u64()),
        (Some(250), Some(0))
    );
    assert_eq!(u["src_ip"], "10.0.0.1");
    assert!(u["flow_id"].as_u64().is_some());
    let hdr = common_b64_len(u["packet"].as_str().unwrap());
    assert_eq!(hdr, 32, "packethdr logs the first 32 bytes");
    assert_eq!(u["packet_info"]["linktype"], 1);
    // A packet whose IPv4 header did not decode: no addresses, no flow.
    let t = find(&recs, "decoder.ipv4.trunc_pkt");
    assert_eq!(t["pcap_cnt"], 3);
    assert!(t.get("src_ip").is_none() && t.get("flow_id").is_none());
    // The stream event is reported on the server's RST.
    let s = find(&recs, "stream.pkt_invalid_timestamp");
    assert_eq!(
        (s["pcap_cnt"].as_u64(), s["src_port"].as_u64()),
        (Some(7), Some(2222))
    );
    assert!(s["packet"].is_string());
    // App-layer events: protocol, layer and transaction; no packet header.
    let h = find(&recs, "MISSING_HOST_HEADER");
    assert_eq!(h["anomaly"]["app_proto"], "http");
    assert_eq!(h["anomaly"]["layer"], "proto_parser");
    assert_eq!(h["tx_id"], 0);
    // Parsed (and reported) when the server's ACK released the request, on that packet.
    assert_eq!(
        (h["pcap_cnt"].as_u64(), h["src_port"].as_u64()),
        (Some(12), Some(80))
    );
    assert!(h.get("packet").is_none());
    let d = find(&recs, "z_flag_set");
    assert_eq!(d["anomaly"]["app_proto"], "dns");
    assert_eq!(
        (d["tx_id"].as_u64(), d["pcap_cnt"].as_u64()),
        (Some(0), Some(17))
    );
    // Anomaly records share the flow id of their flow's record.
    let http_flow = recs
        .iter()
        .find(|r| r["event_type"] == "flow" && r["dest_port"] == 80)
        .expect("http flow");
    assert_eq!(http_flow["flow_id"], h["flow_id"]);
}

fn common_b64_len(s: &str) -> usize {
    let pad = s.bytes().rev().take_while(|&b| b == b'=').count();
    s.len() / 4 * 3 - pad
}

#[test]
fn defaults_and_disabled() {
    // Listed without options: Suricata's defaults, app-layer events only.
    let recs = run(
        &yaml("        - anomaly:\n            enabled: yes\n"),
        "anomaly-default",
    );
    assert_eq!(
        anomalies(&recs),
        vec![
            pair("applayer", "MISSING_HOST_HEADER"),
            pair("applayer", "MISSING_HOST_HEADER"),
            pair("applayer", "z_flag_set")
        ]
    );
    // Stream only.
    let recs = run(
        &yaml("        - anomaly:\n            types:\n              stream: yes\n              applayer: no\n"),
        "anomaly-stream",
    );
    assert_eq!(
        anomalies(&recs),
        vec![pair("stream", "stream.pkt_invalid_timestamp")]
    );
    // `enabled: no`, or not listed: none.
    for (body, tag) in [
        (
            "        - anomaly:\n            enabled: no\n",
            "anomaly-off",
        ),
        ("", "anomaly-absent"),
    ] {
        let recs = run(&yaml(body), tag);
        assert!(anomalies(&recs).is_empty(), "{tag}");
        assert!(recs.iter().any(|r| r["event_type"] == "http"), "{tag}");
    }
}
