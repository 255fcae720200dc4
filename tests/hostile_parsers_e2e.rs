//! Hostile traffic against the DCERPC, Kerberos 5, NFS and RDP parsers through the shrike
//! binary on a generated capture (issue 18, "Bad input"): each flow drives its parser into a
//! limit, and the stats and EVE records say so — `app_layer.error.<proto>.parser` for the
//! parsers that give up (DCERPC's 1 MiB PDU buffer, Kerberos' 100,000-byte TCP buffer, NFS's
//! 1 MiB record buffer, RDP's TPKT length below 4), once per flow, and the
//! `app-layer.protocols.dcerpc.max-tx` setting closing unanswered UDP requests, which are
//! then logged as done (`res.frag_cnt` 0, as Suricata's logger writes a forced-done one). The stream depth is unlimited (`stream.reassembly.depth: 0`):
//! at Suricata's default 1 MiB the DCERPC buffer could never pass 1 MiB.

mod common;
mod hostile_util;

use common::{eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp_conversation, udp4, Pcap};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

/// A DER element with any length.
fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    let n = body.len();
    if n < 0x80 {
        v.push(n as u8);
    } else {
        v.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
    }
    v.extend_from_slice(body);
    v
}

/// A minimal AS-REQ for alice@EXAMPLE.COM.
fn as_req() -> Vec<u8> {
    let ctx = |n: u8, b: &[u8]| tlv(0xa0 | n, b);
    let int = |i: u8| tlv(0x02, &[i]);
    let principal = |parts: &[&[u8]]| {
        let s: Vec<u8> = parts.iter().flat_map(|p| tlv(0x1b, p)).collect();
        tlv(0x30, &[ctx(0, &int(1)), ctx(1, &tlv(0x30, &s))].concat())
    };
    let body = [
        ctx(0, &tlv(0x03, &[0, 0x40, 0x81, 0, 0x10])),
        ctx(1, &principal(&[b"alice"])),
        ctx(2, &tlv(0x1b, b"EXAMPLE.COM")),
        ctx(3, &principal(&[b"krbtgt", b"EXAMPLE.COM"])),
        ctx(5, &tlv(0x18, b"20370913024805Z")),
        ctx(7, &tlv(0x02, &[0x12, 0x34])),
        ctx(8, &tlv(0x30, &[int(18), int(23)].concat())),
    ]
    .concat();
    let req = [ctx(1, &int(5)), ctx(2, &int(10)), ctx(4, &tlv(0x30, &body))].concat();
    tlv(0x6a, &tlv(0x30, &req))
}

/// A connection-oriented DCERPC BIND (little-endian) with one context.
fn dce_bind() -> Vec<u8> {
    let mut body = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0];
    body.extend_from_slice(&[0, 0, 1, 0]);
    body.extend_from_slice(&[0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0xcd, 0xab]);
    body.extend_from_slice(&[0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
    body.extend_from_slice(&[1, 0, 0, 0]);
    body.extend_from_slice(&[0u8; 20]);
    let mut v = vec![5, 0, 11, 3, 0x10, 0, 0, 0];
    v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
    v.extend_from_slice(&[0, 0, 1, 0, 0, 0]);
    v.extend_from_slice(&body);
    v
}

/// A connectionless DCERPC REQUEST (one fragment, little-endian), sequence `seq`.
fn dce_udp_request(seq: u32) -> Vec<u8> {
    let mut v = vec![0u8; 80];
    v[0] = 4;
    v[4] = 0x10;
    v[40] = 0x42;
    v[64..68].copy_from_slice(&seq.to_le_bytes());
    v[74..76].copy_from_slice(&8u16.to_le_bytes());
    v.extend_from_slice(b"stubdata");
    v
}

/// An NFSv3 LOOKUP call with AUTH_NULL credentials.
fn nfs_lookup(xid: u32) -> Vec<u8> {
    let mut v = Vec::new();
    for w in [xid, 0, 2, 100_003, 3, 3, 0, 0, 0, 0] {
        v.extend_from_slice(&u32::to_be_bytes(w));
    }
    for opaque in [&b"dir-handle-0001!"[..], b"name"] {
        v.extend_from_slice(&(opaque.len() as u32).to_be_bytes());
        v.extend_from_slice(opaque);
    }
    v
}

fn capture() -> Pcap {
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let junk = vec![0x99u8; 1400];
    // DCERPC over TCP: a BIND, then 1.1 MB that never makes a PDU header.
    let mut msgs: Vec<(bool, &[u8])> = Vec::new();
    let bind = dce_bind();
    msgs.push((true, &bind));
    msgs.extend((0..800).map(|_| (true, &junk[..])));
    tcp_conversation(&mut cap, &mut t, (C, S), (40_000, 49_152), &msgs);
    // Kerberos over TCP: one framed AS-REQ, then 140 kB behind the next (bogus) mark.
    let m = as_req();
    let mut framed = (m.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(&m);
    let mut msgs: Vec<(bool, &[u8])> = vec![(true, &framed)];
    msgs.extend((0..100).map(|_| (true, &junk[..])));
    tcp_conversation(&mut cap, &mut t, (C, S), (40_001, 88), &msgs);
    // NFS over TCP: a LOOKUP, then a record claiming 2 GiB fed 1.1 MB.
    let mut lookup = 0x8000_0000u32.to_be_bytes().to_vec();
    let call = nfs_lookup(1);
    lookup[..4].copy_from_slice(&(0x8000_0000 | call.len() as u32).to_be_bytes());
    lookup.extend_from_slice(&call);
    let mut claim = 0x7fff_ffffu32.to_be_bytes().to_vec();
    claim.extend_from_slice(&nfs_lookup(2));
    let mut msgs: Vec<(bool, &[u8])> = vec![(true, &lookup), (true, &claim)];
    msgs.extend((0..800).map(|_| (true, &junk[..])));
    tcp_conversation(&mut cap, &mut t, (C, S), (40_002, 2049), &msgs);
    // RDP: a connection request, then a TPKT whose length is below its header.
    let cr: &[u8] = b"\x03\x00\x00\x25\x20\xe0\x00\x00\x00\x00\x00Cookie: mstshash=user123\r\n";
    tcp_conversation(
        &mut cap,
        &mut t,
        (C, S),
        (40_003, 3389),
        &[(true, cr), (true, b"\x03\x00\x00\x03\x00")],
    );
    // DCERPC over UDP: 20 requests never answered.
    for seq in 0..20 {
        t += 1000;
        cap.push(t, &udp4(C, S, 40_004, 135, &dce_udp_request(seq)));
    }
    cap
}

fn run(max_tx: Option<u32>, tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("hostile.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_HOSTILE_PARSERS_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let mut yaml = String::from(
        "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      \
         types:\n        - anomaly\n        - dcerpc\n        - flow\n        - stats\n\
         stream:\n  reassembly:\n    depth: 0\n",
    );
    if let Some(n) = max_tx {
        yaml.push_str(&format!(
            "app-layer:\n  protocols:\n    dcerpc:\n      enabled: yes\n      max-tx: {n}\n"
        ));
    }
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .args(["-k", "none", "--runmode", "single", "-r"])
        .arg(&pcap)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    eve_records(dir.path())
}

fn stat(recs: &[serde_json::Value], path: &str) -> u64 {
    let s = recs
        .iter()
        .rfind(|r| r["event_type"] == "stats")
        .expect("a stats record");
    let mut v = &s["stats"];
    for seg in path.split('.') {
        v = &v[seg];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("no {path} in {}", s["stats"]["app_layer"]))
}

/// UDP `dcerpc` records of requests closed by `max-tx` (no response fragment came).
fn closed(recs: &[serde_json::Value]) -> usize {
    recs.iter()
        .filter(|r| {
            r["event_type"] == "dcerpc"
                && r["proto"] == "UDP"
                && r["dcerpc"]["response"] == "RESPONSE"
                && r["dcerpc"]["res"]["frag_cnt"] == 0
        })
        .count()
}

#[test]
fn parser_limits_are_hit_and_counted() {
    let recs = run(Some(4), "parsers-max-tx");
    for (path, what) in [
        (
            "app_layer.error.dcerpc_tcp.parser",
            "DCERPC 1 MiB PDU buffer",
        ),
        (
            "app_layer.error.krb5_tcp.parser",
            "Kerberos 100,000-byte buffer",
        ),
        ("app_layer.error.nfs_tcp.parser", "NFS 1 MiB record buffer"),
        ("app_layer.error.rdp.parser", "RDP TPKT length"),
    ] {
        // Once: a TCP parser that gave up is not called again.
        assert_eq!(stat(&recs, path), 1, "{what}");
    }
    for p in ["dcerpc_tcp", "krb5_tcp", "nfs_tcp", "rdp", "dcerpc_udp"] {
        assert_eq!(stat(&recs, &format!("app_layer.flow.{p}")), 1, "{p} flow");
    }
    // max-tx 4: each request past the fifth closes the oldest open one.
    assert_eq!(closed(&recs), 15);
    assert_eq!(stat(&recs, "app_layer.tx.dcerpc_udp"), 20);
    // Suricata's default (1024): none closed, and unanswered UDP requests are not logged.
    let recs = run(None, "parsers-default");
    assert_eq!(closed(&recs), 0);
    assert_eq!(stat(&recs, "app_layer.error.dcerpc_tcp.parser"), 1);
}

/// A connection-oriented DCERPC REQUEST (little-endian, one fragment) with `stub`.
fn dce_request(call: u32, stub: &[u8]) -> Vec<u8> {
    let mut body = (stub.len() as u32).to_le_bytes().to_vec();
    body.extend_from_slice(&[0, 0, 1, 0]);
    body.extend_from_slice(stub);
    let mut v = vec![5, 0, 0, 3, 0x10, 0, 0, 0];
    v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&call.to_le_bytes());
    v.extend_from_slice(&body);
    v
}

#[test]
fn unanswered_request_flood_is_inspected_once_per_transaction() {
    // 1,500 requests never answered keep about max-tx transactions live; each is inspected
    // (one alert each, as Suricata 7.0.10 on the same flow) and the per-packet work stays
    // linear in the live transactions (the detection progress was a list searched per
    // transaction: 31 s for this flow in a debug build, 2.4 s since).
    let dir = TempDir::new("dce-flood");
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let reqs: Vec<Vec<u8>> = (0..1500).map(|i| dce_request(i, &[0x41; 200])).collect();
    let msgs: Vec<(bool, &[u8])> = reqs.iter().map(|r| (true, r.as_slice())).collect();
    tcp_conversation(&mut cap, &mut t, (C, S), (40_010, 49_153), &msgs);
    let pcap = dir.path().join("flood.pcap");
    cap.write(&pcap);
    let rules = dir.path().join("flood.rules");
    std::fs::write(
        &rules,
        "alert dcerpc any any -> any any (msg:\"stub\"; dcerpc.stub_data; content:\"AAAA\"; sid:2;)\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let out = shrike()
        .args(["-k", "none", "--runmode", "single", "-r"])
        .arg(&pcap)
        .arg("-S")
        .arg(&rules)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    eprintln!("1,500-request flood: {:?}", start.elapsed());
    let recs = eve_records(dir.path());
    let alerts = recs
        .iter()
        .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 2)
        .count();
    assert_eq!(alerts, 1500);
}
