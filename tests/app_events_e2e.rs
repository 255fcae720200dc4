//! Suricata's packet app-layer events (`app-layer-event:<name>` without a protocol, as in
//! its `app-layer-events.rules`) end to end: a generated capture with an HTTP request
//! answered by an SSH banner (`applayer_mismatch_protocol_both_directions`) and an SMTP
//! STARTTLS followed by plain HTTP instead of TLS (`applayer_unexpected_protocol`,
//! `applayer_no_tls_after_starttls`). The alerts (sid, packet number), the anomaly records
//! and the flow records' `app_proto_*` fields are those Suricata 7.0.10 writes for the same
//! capture and rules (`suricata -r <pcap> -S <rules> -k none --runmode single`; the capture
//! is kept with SHRIKE_APP_EVENTS_PCAP_OUT=<file>). Rules naming an event shrike does not
//! raise are reported, and an unknown event name fails the rule as in Suricata.

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, run_pcap, shrike, stderr, TempDir};
use hostile_util::{tcp_conversation, Pcap};

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

const RULES: &str = "\
alert ip any any -> any any (msg:\"mismatch\"; flow:established; app-layer-event:applayer_mismatch_protocol_both_directions; sid:1;)
alert ip any any -> any any (msg:\"unexpected\"; flow:established; app-layer-event:applayer_unexpected_protocol; sid:2;)
alert ip any any -> any any (msg:\"no tls\"; flow:established; app-layer-event:APPLAYER_NO_TLS_AFTER_STARTTLS; sid:3;)
alert ip any any -> any any (msg:\"one dir\"; flow:established; app-layer-event:applayer_detect_protocol_only_one_direction; sid:4;)
alert ip any any -> any any (msg:\"wrong dir\"; flow:established; app-layer-event:applayer_wrong_direction_first_data; sid:5;)
";

fn conversation(cap: &mut Pcap, t: &mut u64, sp: u16, dp: u16, msgs: &[(bool, &[u8])]) {
    tcp_conversation(cap, t, (C, S), (sp, dp), msgs);
}

fn capture() -> Pcap {
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    // Packets 1-7: HTTP request, SSH banner back.
    conversation(
        &mut cap,
        &mut t,
        40000,
        8080,
        &[
            (true, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
            (false, b"SSH-2.0-OpenSSH_8.9\r\n"),
        ],
    );
    // Packets 8-22: SMTP, STARTTLS accepted, then HTTP instead of a ClientHello.
    conversation(
        &mut cap,
        &mut t,
        40001,
        25,
        &[
            (false, b"220 mx.example ESMTP\r\n"),
            (true, b"EHLO c.example\r\n"),
            (false, b"250-mx.example\r\n250 STARTTLS\r\n"),
            (true, b"STARTTLS\r\n"),
            (false, b"220 go ahead\r\n"),
            (true, b"GET /x HTTP/1.1\r\nHost: b\r\n\r\n"),
        ],
    );
    cap
}

fn run(rules: &str, tag: &str) -> (Vec<serde_json::Value>, String) {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("events.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_APP_EVENTS_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let rf = dir.path().join("events.rules");
    std::fs::write(&rf, rules).unwrap();
    let cfg = dir.path().join("suricata.yaml");
    std::fs::write(
        &cfg,
        "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      \
         types:\n        - alert\n        - anomaly\n        - flow\n",
    )
    .unwrap();
    let out = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(&pcap)
        .arg("-S")
        .arg(&rf)
        .arg("-l")
        .arg(dir.path())
        .args(["-k", "none"])
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let recs = eve_records(dir.path());
    assert_valid_eve(&recs);
    (recs, stderr(&out))
}

#[test]
fn packet_app_layer_events_alert_as_suricata() {
    let (recs, err) = run(RULES, "app-events");
    let mut alerts: Vec<(u64, u64)> = recs
        .iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|r| {
            (
                r["alert"]["signature_id"].as_u64().unwrap(),
                r["pcap_cnt"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    alerts.sort_unstable();
    assert_eq!(alerts, EXPECTED_ALERTS);
    let mut anomalies: Vec<(String, u64)> = recs
        .iter()
        .filter(|r| r["event_type"] == "anomaly")
        .map(|r| {
            (
                r["anomaly"]["event"].as_str().unwrap().to_string(),
                r["pcap_cnt"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    anomalies.sort();
    let want: Vec<(String, u64)> = EXPECTED_ANOMALIES
        .iter()
        .map(|(e, p)| (e.to_string(), *p))
        .collect();
    assert_eq!(anomalies, want);
    let flows: Vec<&serde_json::Value> =
        recs.iter().filter(|r| r["event_type"] == "flow").collect();
    let http = flows.iter().find(|f| f["dest_port"] == 8080).unwrap();
    assert_eq!(http["app_proto"], "http");
    assert_eq!(http["app_proto_tc"], "ssh");
    let smtp = flows.iter().find(|f| f["dest_port"] == 25).unwrap();
    assert_eq!(smtp["app_proto"], "http");
    assert_eq!(smtp["app_proto_orig"], "smtp");
    assert_eq!(smtp["app_proto_expected"], "tls");
    // The alert carries the same app_proto fields as Suricata's (`EveAddAppProto`).
    let a = recs
        .iter()
        .find(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 1)
        .unwrap();
    assert_eq!(a["app_proto_tc"], "ssh");
    // The wrong-direction event is not raised by shrike: its rule is reported, not loaded.
    assert!(
        err.contains("applayer_wrong_direction_first_data"),
        "stderr: {err}"
    );
}

#[test]
fn unknown_packet_event_fails_the_rule() {
    let (recs, err) = run(
        "alert ip any any -> any any (app-layer-event:applayer_no_such_event; sid:9;)\n",
        "app-events-bad",
    );
    assert!(recs.iter().all(|r| r["event_type"] != "alert"));
    assert!(err.contains("applayer_no_such_event"), "stderr: {err}");
}

/// Suricata 7.0.10's alerts (sid, packet) on the capture.
const EXPECTED_ALERTS: &[(u64, u64)] = &[(1, 7), (2, 22), (3, 22), (4, 14)];
/// Suricata 7.0.10's anomaly records (event, packet) on the capture.
const EXPECTED_ANOMALIES: &[(&str, u64)] = &[
    ("APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION", 14),
    ("APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS", 7),
    ("APPLAYER_NO_TLS_AFTER_STARTTLS", 22),
    ("APPLAYER_UNEXPECTED_PROTOCOL", 22),
];

/// A client that opens with bytes no parser recognises, answered by an RDP server: the
/// server's direction finds RDP and the client's data, parsed then as RDP, is an error.
/// Suricata parses the server's X.224 Connection Confirm in the same step (its
/// `initial_response` is logged) and turns the app layer off afterwards: the client's later
/// X.224 Connection Request is not parsed. Records as Suricata 7.0.10 writes them for this
/// capture (as `rdp_rdp-invalid-length` of its verification suite).
#[test]
fn parser_error_of_the_undetected_direction_keeps_the_detected_side() {
    let dir = TempDir::new("app-events-rdp-error");
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let mut garbage = b"ECODH\r\n".to_vec();
    garbage.extend((0..40u32).map(|i| (i * 7) as u8));
    let confirm = [
        0x03, 0x00, 0x00, 0x13, 0x0e, 0xd0, 0x00, 0x00, 0x12, 0x34, 0x00, 0x02, 0x00, 0x08, 0x00,
        0x00, 0x00, 0x00, 0x00,
    ];
    let request = [
        0x03, 0x00, 0x00, 0x13, 0x0e, 0xe0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00,
        0x03, 0x00, 0x00, 0x00,
    ];
    conversation(
        &mut cap,
        &mut t,
        40000,
        3389,
        &[(true, &garbage), (false, &confirm), (true, &request)],
    );
    let pcap = dir.path().join("rdp.pcap");
    cap.write(&pcap);
    let recs = run_pcap(&pcap, dir.path());
    let got: Vec<(String, u64, String)> = recs
        .iter()
        .filter(|r| r["event_type"] == "rdp" || r["event_type"] == "anomaly")
        .map(|r| {
            let what = if r["event_type"] == "rdp" {
                r["rdp"]["event_type"].as_str().unwrap_or("").to_string()
            } else {
                r["anomaly"]["event"].as_str().unwrap_or("").to_string()
            };
            (
                r["event_type"].as_str().unwrap().to_string(),
                r["pcap_cnt"].as_u64().unwrap_or(0),
                what,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "anomaly".to_string(),
                7,
                "APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION".to_string()
            ),
            ("rdp".to_string(), 7, "initial_response".to_string()),
        ]
    );
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(flow["app_proto"], "rdp");
}
