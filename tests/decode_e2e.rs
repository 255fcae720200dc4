//! End to end: packet-decoding features seen in EVE output, on small generated captures
//! (each checked against Suricata 7.0.10's output for the matching suricata-verify test):
//! ESP flows keyed by SPI with `spi` in `flow` and `netflow` records, three VLAN ids in flow
//! records, the `ether` object of alerts (`ethernet: yes`), PPP link-type captures, and
//! VXLAN tunnels (the outer UDP flow and the alert's `tunnel` object).

mod common;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};

/// A classic pcap file with link type `linktype` holding `frames`, one per second.
fn pcap(linktype: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0u8; 8]);
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&linktype.to_le_bytes());
    for (i, d) in frames.iter().enumerate() {
        f.extend_from_slice(&(1_600_000_000u32 + i as u32).to_le_bytes());
        f.extend_from_slice(&0u32.to_le_bytes());
        f.extend_from_slice(&(d.len() as u32).to_le_bytes());
        f.extend_from_slice(&(d.len() as u32).to_le_bytes());
        f.extend_from_slice(d);
    }
    f
}

const MAC_DST: [u8; 6] = [0x00, 0x25, 0x90, 0xe3, 0xd2, 0xe1];
const MAC_SRC: [u8; 6] = [0x0c, 0x86, 0x10, 0xed, 0xd7, 0xc6];

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    [&MAC_DST[..], &MAC_SRC, &ethertype.to_be_bytes(), payload].concat()
}

fn vlan(id: u16, inner: u16, payload: &[u8]) -> Vec<u8> {
    [&id.to_be_bytes()[..], &inner.to_be_bytes(), payload].concat()
}

fn csum(data: &[u8]) -> u16 {
    let mut s: u32 = data
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
    let len = (20 + payload.len()) as u16;
    let mut h = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 64, proto, 0, 0];
    h[2..4].copy_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    [h, payload.to_vec()].concat()
}

fn ipv6(src: [u8; 16], dst: [u8; 16], nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[nh, 64]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    [h, payload.to_vec()].concat()
}

fn v6(last: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[15] = last;
    a
}

fn esp(spi: u32, seq: u32) -> Vec<u8> {
    [&spi.to_be_bytes()[..], &seq.to_be_bytes(), b"data"].concat()
}

/// UDP with a zero checksum (valid for IPv4).
fn udp(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    [
        &sp.to_be_bytes()[..],
        &dp.to_be_bytes(),
        &len.to_be_bytes(),
        &[0, 0],
        payload,
    ]
    .concat()
}

fn icmp_echo(t: u8, seq: u16) -> Vec<u8> {
    let mut m = vec![t, 0, 0, 0, 0, 7];
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(b"ping");
    let c = csum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// Runs shrike on `frames` (link type `linktype`) with a Suricata-style config holding
/// `eve` as the eve-log body, and `rules`; returns the validated EVE records.
fn run(
    tag: &str,
    linktype: u32,
    frames: &[Vec<u8>],
    eve: &str,
    rules: &str,
) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let p = dir.path().join("in.pcap");
    std::fs::write(&p, pcap(linktype, frames)).unwrap();
    if let Ok(keep) = std::env::var("SHRIKE_DECODE_PCAP_OUT") {
        let _ = std::fs::copy(&p, format!("{keep}-{tag}.pcap"));
    }
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        format!("%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n{eve}"),
    )
    .unwrap();
    let r = dir.path().join("t.rules");
    std::fs::write(&r, rules).unwrap();
    let o = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(&p)
        .arg("-S")
        .arg(&r)
        .arg("-l")
        .arg(dir.path())
        .args(["-k", "none", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    recs
}

fn b64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = u32::from(c[0]) << 16
            | u32::from(*c.get(1).unwrap_or(&0)) << 8
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn of_type<'a>(recs: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    recs.iter().filter(|r| r["event_type"] == t).collect()
}

#[test]
fn esp_flows_by_spi_in_flow_and_netflow_records() {
    let (a, b, c) = ([190, 0, 0, 1], [190, 0, 0, 2], [190, 0, 0, 3]);
    let frames = vec![
        eth(0x0800, &ipv4(a, b, 50, &esp(123, 1))),
        eth(0x0800, &ipv4(a, b, 50, &esp(123, 2))),
        eth(0x0800, &ipv4(a, b, 50, &esp(321, 1))),
        eth(0x0800, &ipv4(a, c, 50, &esp(123, 1))),
        eth(0x86dd, &ipv6(v6(1), v6(2), 50, &esp(123, 1))),
    ];
    let types = "      types:\n        - flow\n        - netflow\n";
    let recs = run("esp", 1, &frames, types, "");
    let flows = of_type(&recs, "flow");
    let netflows = of_type(&recs, "netflow");
    assert_eq!((flows.len(), netflows.len()), (4, 4), "{recs:#?}");
    let find = |v: &[&serde_json::Value], spi: u64, dst: &str| {
        v.iter()
            .find(|r| r["spi"] == spi && r["dest_ip"] == dst)
            .copied()
            .unwrap_or_else(|| panic!("no record spi {spi} to {dst}"))
            .clone()
    };
    let f = find(&flows, 123, "190.0.0.2");
    assert_eq!(
        (f["proto"].as_str(), f["src_ip"].as_str()),
        (Some("ESP"), Some("190.0.0.1"))
    );
    assert_eq!(f["flow"]["pkts_toserver"], 2);
    assert!(f.get("src_port").is_none());
    assert_eq!(find(&flows, 321, "190.0.0.2")["flow"]["pkts_toserver"], 1);
    assert_eq!(find(&flows, 123, "190.0.0.3")["flow"]["pkts_toserver"], 1);
    let n = find(&netflows, 123, "190.0.0.2");
    assert_eq!(n["netflow"]["pkts"], 2);
    assert_eq!(
        (
            n["netflow"]["min_ttl"].as_u64(),
            n["netflow"]["max_ttl"].as_u64()
        ),
        (Some(64), Some(64))
    );
    assert_eq!(n["app_proto"], "unknown");
    assert_eq!(n["flow_id"], f["flow_id"]);
    find(&netflows, 123, "0000:0000:0000:0000:0000:0000:0000:0002");

    // `netflow` alone: no flow records.
    let recs = run(
        "esp-nf",
        1,
        &frames,
        "      types:\n        - netflow\n",
        "",
    );
    assert_eq!(
        (
            of_type(&recs, "flow").len(),
            of_type(&recs, "netflow").len()
        ),
        (0, 4)
    );
}

#[test]
fn three_vlan_ids_in_flow_records() {
    let icmp = ipv4([192, 168, 0, 1], [255, 255, 255, 255], 1, &icmp_echo(8, 1));
    let frames = vec![
        eth(0x8100, &vlan(6, 0x0800, &icmp)),
        eth(0x8100, &vlan(1, 0x8100, &vlan(10, 0x0800, &icmp))),
        eth(
            0x8100,
            &vlan(1, 0x8100, &vlan(10, 0x8100, &vlan(100, 0x0800, &icmp))),
        ),
    ];
    let recs = run("vlan3", 1, &frames, "      types:\n        - flow\n", "");
    let mut vlans: Vec<String> = of_type(&recs, "flow")
        .iter()
        .map(|r| r["vlan"].to_string())
        .collect();
    vlans.sort();
    assert_eq!(vlans, ["[1,10,100]", "[1,10]", "[6]"]);
}

#[test]
fn ether_object_when_ethernet_is_on() {
    let frames = vec![eth(
        0x0800,
        &ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, &udp(1000, 53, b"q")),
    )];
    let rules = "alert ip any any -> any any (msg:\"any\"; sid:1;)\n";
    let on = run(
        "ether-on",
        1,
        &frames,
        "      ethernet: yes\n      types:\n        - alert\n",
        rules,
    );
    let a = of_type(&on, "alert");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["ether"]["src_mac"], "0c:86:10:ed:d7:c6");
    assert_eq!(a[0]["ether"]["dest_mac"], "00:25:90:e3:d2:e1");
    let off = run(
        "ether-off",
        1,
        &frames,
        "      types:\n        - alert\n",
        rules,
    );
    assert!(of_type(&off, "alert")[0].get("ether").is_none());
    // A PPP capture has no Ethernet header: no `ether` even when asked for.
    let ppp = vec![[&[0x00u8, 0x21][..], &frames[0][14..]].concat()];
    let p = run(
        "ether-ppp",
        9,
        &ppp,
        "      ethernet: yes\n      types:\n        - alert\n",
        rules,
    );
    let a = of_type(&p, "alert");
    assert_eq!(a.len(), 1, "the PPP capture is decoded");
    assert!(a[0].get("ether").is_none());
    assert_eq!(a[0]["dest_port"], 53);
}

/// VXLAN (UDP 4789) around `inner` (an IPv4 packet), from `src` to `dst`.
fn vxlan(src: [u8; 4], dst: [u8; 4], sport: u16, inner: &[u8]) -> Vec<u8> {
    let vx = [&[0x08u8, 0, 0, 0, 0, 0, 1, 0][..], &eth(0x0800, inner)].concat();
    eth(0x0800, &ipv4(src, dst, 17, &udp(sport, 4789, &vx)))
}

#[test]
fn tunnel_roots_and_inner_packets() {
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let (x, y) = ([1, 1, 1, 1], [2, 2, 2, 2]);
    let req = ipv4(x, y, 1, &icmp_echo(8, 1));
    let rep = ipv4(y, x, 1, &icmp_echo(0, 1));
    let frames = vec![
        vxlan(a, b, 45149, &req),
        vxlan(b, a, 40000, &rep),
        eth(
            0x0800,
            &ipv4(a, b, 47, &[&[0u8, 0, 0x08, 0x00][..], &req].concat()),
        ),
    ];
    let rules = "alert udp any any -> any 4789 (msg:\"outer\"; sid:1;)\n\
                 alert icmp any any -> any any (msg:\"echo\"; itype:8; sid:2;)\n";
    let types = "      types:\n        - alert:\n            packet: yes\n        - flow\n";
    let recs = run("tunnel", 1, &frames, types, rules);
    // Flows as Suricata 7.0.10 has them: the inner ICMP flow (its bytes those of the inner
    // IP packets) and one per VXLAN direction, whose app layer failed on the VXLAN payload;
    // none for GRE (SHRIKE_DECODE_PCAP_OUT=<prefix> keeps the capture).
    let flows = of_type(&recs, "flow");
    assert_eq!(flows.len(), 3, "{flows:#?}");
    let icmp = flows
        .iter()
        .find(|f| f["proto"] == "ICMP")
        .expect("inner flow");
    assert_eq!(
        (
            icmp["flow"]["pkts_toserver"].as_u64(),
            icmp["flow"]["pkts_toclient"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(
        icmp["flow"]["bytes_toserver"].as_u64(),
        Some(2 * req.len() as u64)
    );
    let outer: Vec<_> = flows.iter().filter(|f| f["dest_port"] == 4789).collect();
    assert_eq!(outer.len(), 2);
    assert!(outer
        .iter()
        .all(|f| f["flow"]["pkts_toserver"] == 1 && f["app_proto"] == "failed"));
    assert!(flows.iter().all(|f| f["proto"] != "GRE"));

    let alerts = of_type(&recs, "alert");
    let outer_alerts: Vec<_> = alerts
        .iter()
        .filter(|r| r["alert"]["signature_id"] == 1)
        .collect();
    assert_eq!(outer_alerts.len(), 2, "the tunnel roots are inspected");
    for r in &outer_alerts {
        assert_eq!(r["pkt_src"], "wire/pcap");
        assert!(r["pcap_cnt"].as_u64().is_some() && r.get("tunnel").is_none());
    }
    let echo: Vec<_> = alerts
        .iter()
        .filter(|r| r["alert"]["signature_id"] == 2)
        .collect();
    assert_eq!(echo.len(), 2);
    let vx = echo
        .iter()
        .find(|r| r["pkt_src"] == "vxlan encapsulation")
        .expect("vxlan alert");
    assert!(
        vx.get("pcap_cnt").is_none(),
        "a tunnel packet has no capture number"
    );
    let t = &vx["tunnel"];
    assert_eq!(
        (t["src_ip"].as_str(), t["src_port"].as_u64()),
        (Some("10.0.0.1"), Some(45149))
    );
    assert_eq!(
        (t["dest_port"].as_u64(), t["proto"].as_str()),
        (Some(4789), Some("UDP"))
    );
    assert_eq!(
        (t["depth"].as_u64(), t["pcap_cnt"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(t["pkt_src"], "wire/pcap");
    // The logged packet is the inner one, as raw IP.
    assert_eq!(vx["packet_info"]["linktype"], 12);
    assert_eq!(vx["packet"].as_str(), Some(b64(&req).as_str()));
    let root = outer_alerts
        .iter()
        .find(|r| r["pcap_cnt"] == 1)
        .expect("first root");
    assert_eq!(root["packet_info"]["linktype"], 1);
    assert_eq!(root["packet"].as_str(), Some(b64(&frames[0]).as_str()));
    let gre = echo
        .iter()
        .find(|r| r["pkt_src"] == "gre tunnel")
        .expect("gre alert");
    let t = &gre["tunnel"];
    assert_eq!(
        (
            t["proto"].as_str(),
            t["src_port"].as_u64(),
            t["pcap_cnt"].as_u64()
        ),
        (Some("GRE"), Some(0), Some(3))
    );
}
