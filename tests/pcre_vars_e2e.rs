//! `pcre` captures into flow and packet variables end to end, as Suricata 7.0.10 does them
//! (`DetectPcreParseCapture`, `DetectPcrePayloadMatch`, post-match `DetectVarProcessList`):
//! a generated HTTP connection with two requests; capture names after the flags
//! (`flow:`, `pkt:`, `pkt:key`/`pkt:value`) and named groups (`(?P<flow_x>…)`); the
//! `flowvar` keyword reading a captured value on a later request; the variables in the
//! alerts' and the flow record's `metadata` (`flowvars`, `pktvars`). Alerts and metadata
//! equal Suricata 7.0.10's on the same capture and rules (`suricata -r <pcap> -S <rules>
//! -k none --runmode single`; SHRIKE_PCRE_VARS_PCAP_OUT=<file> keeps the capture). Capture
//! names Suricata 7 refuses (`alert:`, more names than groups) fail the rule.

mod common;
mod hostile_util;

use common::{assert_valid_eve, eve_records, shrike, stderr, TempDir};
use hostile_util::{tcp_conversation, Pcap};
use serde_json::json;

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];

const RULES: &str = r#"alert http any any -> any any (msg:"list"; http.user_agent; pcre:"/^([a-zA-Z]+).*Ubuntu (\d+\.\d).*Firefox\/(.*)/,pkt:name, flow:ubuntu, pkt:firefox"; sid:1;)
alert http any any -> any any (msg:"named"; http.user_agent; pcre:"/(?P<flow_ua>Moz\w+)/"; sid:2;)
alert http any any -> any any (msg:"flowvar"; flowvar:ubuntu,"8.1"; http.method; content:"POST"; sid:3;)
alert tcp any any -> any any (msg:"kv"; flow:to_server; content:"X-Key|3a 20|"; pcre:"/X-Key: (\w+)=(\w+)/,pkt:key,pkt:value"; sid:4;)
alert http any any -> any any (msg:"no match, no capture"; http.user_agent; pcre:"/(?P<flow_never>Moz)/"; content:"nothere"; sid:5;)
alert http any any -> any any (msg:"flowvar not set"; flowvar:never,"Moz"; sid:6;)
"#;

fn conversation(cap: &mut Pcap, t: &mut u64, msgs: &[(bool, &[u8])]) {
    tcp_conversation(cap, t, (C, S), (40000, 80), msgs);
}

fn capture() -> Pcap {
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    conversation(
        &mut cap,
        &mut t,
        &[
            (
                true,
                b"GET /a HTTP/1.1\r\nHost: h\r\nUser-Agent: Mozilla/5.0 (X11; Ubuntu 8.1) Firefox/3.0.13\r\nX-Key: colour=blue\r\n\r\n",
            ),
            (false, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            (
                true,
                b"POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx",
            ),
            (false, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ],
    );
    cap
}

fn run(rules: &str, tag: &str) -> (Vec<serde_json::Value>, String) {
    let dir = TempDir::new(tag);
    let pcap = dir.path().join("vars.pcap");
    capture().write(&pcap);
    if let Ok(keep) = std::env::var("SHRIKE_PCRE_VARS_PCAP_OUT") {
        let _ = std::fs::copy(&pcap, keep);
    }
    let rf = dir.path().join("vars.rules");
    std::fs::write(&rf, rules).unwrap();
    let out = shrike()
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
fn captures_fill_flow_and_packet_variables_as_suricata() {
    let (recs, _) = run(RULES, "pcre-vars");
    let alerts: Vec<(u64, u64, serde_json::Value)> = recs
        .iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|r| {
            (
                r["alert"]["signature_id"].as_u64().unwrap(),
                r["pcap_cnt"].as_u64().unwrap_or(0),
                r["metadata"].clone(),
            )
        })
        .collect();
    let got: Vec<String> = alerts
        .iter()
        .map(|(s, p, m)| format!("{s}@{p} {m}"))
        .collect();
    let want: Vec<String> = EXPECTED_ALERTS.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want);
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(
        flow["metadata"],
        json!({"flowvars": [{"ubuntu": "8.1"}, {"ua": "Mozilla"}]})
    );
}

#[test]
fn capture_names_suricata_refuses_fail_the_rule() {
    for (rule, why) in [
        (
            r#"alert http any any -> any any (http.user_agent; pcre:"/(Moz)/,alert:ua"; sid:7;)"#,
            "pkt:",
        ),
        (
            r#"alert http any any -> any any (http.user_agent; pcre:"/(Moz)/,flow:a,flow:b"; sid:8;)"#,
            "capturing substrings",
        ),
        (
            r#"alert http any any -> any any (http.user_agent; pcre:"/(Moz)(x)/,pkt:value"; sid:9;)"#,
            "pkt:value",
        ),
    ] {
        let (recs, err) = run(&format!("{rule}\n"), "pcre-vars-bad");
        assert!(recs.iter().all(|r| r["event_type"] != "alert"));
        assert!(err.contains(why), "{rule}: {err}");
    }
}

/// Suricata 7.0.10's alerts (`sid@pcap_cnt metadata`) on the capture.
const EXPECTED_ALERTS: &[&str] = &[
    r#"1@7 {"flowvars":[{"ubuntu":"8.1"},{"ua":"Mozilla"}],"pktvars":[{"colour":"blue"},{"name":"Mozilla"},{"firefox":"3.0.13"}]}"#,
    r#"2@7 {"flowvars":[{"ubuntu":"8.1"},{"ua":"Mozilla"}],"pktvars":[{"colour":"blue"},{"name":"Mozilla"},{"firefox":"3.0.13"}]}"#,
    r#"4@7 {"flowvars":[{"ubuntu":"8.1"},{"ua":"Mozilla"}],"pktvars":[{"colour":"blue"},{"name":"Mozilla"},{"firefox":"3.0.13"}]}"#,
    r#"3@11 {"flowvars":[{"ubuntu":"8.1"},{"ua":"Mozilla"}]}"#,
];
