//! VLAN ids in protocol records: Suricata's EVE header takes the `vlan` of the packet a
//! record is written on, and the flow record the ids of the flow's first packet, whether or
//! not `vlan.use-for-tracking` keys flows by them. A generated HTTP exchange on VLAN 100 (the
//! server's packets untagged in the second run, one flow only without tracking) gives the
//! `http` and `flow` records Suricata 7.0.10 writes for it (checked with
//! `suricata -r <pcap> -k none --set vlan.use-for-tracking=false`: `http` and `flow` carry
//! `"vlan":[100]`, written on a tagged packet; SHRIKE_VLAN_PCAP_OUT=<prefix> keeps the
//! captures).

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{ipv4, tcp, Pcap, ACK, PSH, SYN};

const C: [u8; 4] = [10, 1, 0, 1];
const S: [u8; 4] = [10, 1, 0, 2];

fn frame(vlan: Option<u16>, src: [u8; 4], dst: [u8; 4], seg: &[u8]) -> Vec<u8> {
    let mut f = vec![
        0, 0x11, 0x22, 0x33, 0x44, 0x55, 0, 0x66, 0x77, 0x88, 0x99, 0xaa,
    ];
    if let Some(v) = vlan {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&v.to_be_bytes());
    }
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&ipv4(src, dst, 1, 0x4000, 6, seg));
    f
}

/// An HTTP exchange; the client's packets on VLAN 100, the server's on `server_vlan`.
fn capture(server_vlan: Option<u16>) -> Pcap {
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let req = b"GET /v HTTP/1.1\r\nHost: v\r\n\r\n";
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let (cs, ss) = (100u32, 900u32);
    let (rl, pl) = (req.len() as u32, resp.len() as u32);
    let c = Some(100);
    let pkts = [
        (c, true, cs, 0, SYN, &b""[..]),
        (server_vlan, false, ss, cs + 1, SYN | ACK, b""),
        (c, true, cs + 1, ss + 1, ACK, b""),
        (c, true, cs + 1, ss + 1, PSH | ACK, req),
        (server_vlan, false, ss + 1, cs + 1 + rl, PSH | ACK, resp),
        (c, true, cs + 1 + rl, ss + 1 + pl, ACK, b""),
    ];
    for (v, client, seq, ack, fl, pl) in pkts {
        t += 1000;
        let f = if client {
            frame(v, C, S, &tcp(40000, 80, seq, ack, fl, pl))
        } else {
            frame(v, S, C, &tcp(80, 40000, seq, ack, fl, pl))
        };
        cap.push(t, &f);
    }
    cap
}

fn run(cap: Pcap, tracking: bool, tag: &str) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("vlan.pcap");
    cap.write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_VLAN_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, format!("{keep}-{tag}.pcap"));
    }
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        format!(
            "%YAML 1.1\n---\nvlan:\n  use-for-tracking: {tracking}\noutputs:\n  - eve-log:\n      \
             enabled: yes\n      filename: eve.json\n      types:\n        - http\n        - flow\n"
        ),
    )
    .unwrap();
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

fn vlan_of<'a>(recs: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    recs.iter()
        .filter(|r| r["event_type"] == t)
        .map(|r| &r["vlan"])
        .collect()
}

#[test]
fn records_carry_the_vlan_ids_as_suricata() {
    let tagged = run(capture(Some(100)), true, "vlan-tagged");
    assert_eq!(vlan_of(&tagged, "http"), vec![&serde_json::json!([100])]);
    assert_eq!(vlan_of(&tagged, "flow"), vec![&serde_json::json!([100])]);
    // Without tracking the untagged server packets join the client's flow: the flow keeps
    // its first packet's VLAN, the http record the VLAN of the (client's, tagged) packet it
    // is written on.
    let mixed = run(capture(None), false, "vlan-mixed");
    assert_eq!(vlan_of(&mixed, "flow"), vec![&serde_json::json!([100])]);
    assert_eq!(vlan_of(&mixed, "http"), vec![&serde_json::json!([100])]);
}
