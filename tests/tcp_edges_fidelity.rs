//! TCP edge cases against Suricata 7.0.10: the captures `scripts/diff/gen/tcp_edges.py`
//! writes (RST with or before data, FIN with data, data on SYN and SYN/ACK, a missed SYN/ACK,
//! midstream, bad and unseen ACKs, zero and exceeded windows, urgent data, timestamps going
//! back, port reuse, a SYN resent with another ISN, a late retransmission, small
//! out-of-order segments, a server FIN acknowledged late, simultaneous FINs) are kept in `tests/data/tcp_edges/` with what Suricata logged for
//! them (`suricata-7.0.10.json`: stream anomaly events, alerts with their stream flag, flow
//! and TCP states, packets per direction; from `scripts/diff/suricata-diff.py` with the
//! generator's config and rules). shrike must log the same, except for the cases listed in
//! `KNOWN` (documented in `docs/compat.md`).

mod common;

use common::{eve_records, repo, shrike, stderr, TempDir};
use serde_json::Value;

/// Differences left, by capture and record kind, with the reason.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "rst-with-data.pcap",
        "alert",
        "Suricata's prefilter searches only the stream when the packet has stream data to \
         inspect, so a RST's payload is never matched",
    ),
    (
        "ack-unseen-data.pcap",
        "alert",
        "Suricata inspects the raw stream across the unseen gap twice",
    ),
    (
        "ack-unseen-data.pcap",
        "anomaly",
        "shrike reports reassembly_seq_gap on a flow whose protocol is undecided",
    ),
    (
        "data-after-fin.pcap",
        "anomaly",
        "shrike reports reassembly_seq_gap on a flow whose protocol is undecided",
    ),
];

const CONFIG: &str = "%YAML 1.1
---
outputs:
  - eve-log:
      enabled: yes
      filetype: regular
      filename: eve.json
      types:
        - alert:
            payload-printable: yes
        - anomaly:
            enabled: yes
            types:
              decode: yes
              stream: yes
        - flow
";

fn ts(r: &Value) -> String {
    r["timestamp"]
        .as_str()
        .and_then(|t| t.get(11..26))
        .unwrap_or("")
        .to_string()
}

#[test]
fn tcp_edge_cases_as_suricata() {
    let data = repo().join("tests/data/tcp_edges");
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("suricata-7.0.10.json")).unwrap())
            .unwrap();
    let dir = TempDir::new("tcp-edges");
    let cfg = dir.path().join("shrike.yaml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let mut checked = 0;
    let mut diffs = Vec::new();
    for (pcap, exp) in want.as_object().unwrap() {
        let out = dir.path().join(pcap);
        std::fs::create_dir_all(&out).unwrap();
        let o = shrike()
            .arg("-c")
            .arg(&cfg)
            .args(["-k", "none", "-r"])
            .arg(data.join(pcap))
            .arg("-S")
            .arg(data.join("tcp-edges.rules"))
            .arg("-l")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{pcap}: {}", stderr(&o));
        let recs = eve_records(&out);
        let of = |t: &'static str| recs.iter().filter(move |r| r["event_type"] == t);
        let got = serde_json::json!({
            "anomaly": of("anomaly").map(|r| serde_json::json!([ts(r), r["anomaly"]["event"]])).collect::<Vec<_>>(),
            "alert": of("alert").map(|r| serde_json::json!([ts(r), r["alert"]["signature_id"], r["stream"].as_u64().unwrap_or(0)])).collect::<Vec<_>>(),
            "flow": of("flow").map(|r| serde_json::json!([r["flow"]["state"], r["tcp"]["state"], r["flow"]["pkts_toserver"], r["flow"]["pkts_toclient"]])).collect::<Vec<_>>(),
        });
        // Events of one packet in any order (shrike's event set has no raise order).
        let sorted = |v: &Value| {
            let mut a = v.as_array().cloned().unwrap_or_default();
            a.sort_by_key(|x| x.to_string());
            a
        };
        for kind in ["anomaly", "alert", "flow"] {
            if KNOWN.iter().any(|(p, k, _)| p == pcap && *k == kind) {
                continue;
            }
            checked += 1;
            if sorted(&got[kind]) != sorted(&exp[kind]) {
                diffs.push(format!(
                    "{pcap} {kind}:\n  suricata {}\n  shrike   {}",
                    exp[kind], got[kind]
                ));
            }
        }
    }
    assert_eq!(checked, 22 * 3 - KNOWN.len());
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// A RST carrying a TCP MD5 signature option, then data from its sender (suricata-verify
/// security-4710-01): Suricata 7.0.10 accepts the RST but marks its receiver, and the next
/// packet from the same sender raises `stream-event:suspected_rst_inject` and reopens the
/// session: the request is still parsed and its rule alerts.
#[test]
fn md5_signed_rst_then_data_is_suspected_injection() {
    let Some(pcap) = common::shared_file("suricata-verify/tests/security-4710-01/input.pcap")
    else {
        return;
    };
    let dir = TempDir::new("rst-inject");
    let rules = dir.path().join("r.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any any (content:\"ultrasurf\"; http_uri; sid:1;)\n\
         alert tcp any any -> any any (stream-event:suspected_rst_inject; sid:2210058;)\n",
    )
    .unwrap();
    let out = shrike()
        .args(["-k", "none", "-r"])
        .arg(&pcap)
        .arg("-S")
        .arg(&rules)
        .arg("-l")
        .arg(dir.path())
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "{}", stderr(&out));
    let recs = eve_records(dir.path());
    let alerts: Vec<(u64, u64)> = recs
        .iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|r| {
            (
                r["pcap_cnt"].as_u64().unwrap_or(0),
                r["alert"]["signature_id"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // As Suricata 7.0.10: the event on the data packet after the RST (5), the URI rule on
    // the packet whose ACK released the request to the parser (9).
    assert_eq!(alerts, vec![(5, 2210058), (9, 1)]);
    assert!(recs
        .iter()
        .any(|r| r["event_type"] == "http" && r["http"]["url"] == "/ultrasurf.html"));
}
