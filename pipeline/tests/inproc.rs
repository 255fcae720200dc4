//! The pipeline as a library: captures in, EVE records out, in this process (no binary
//! spawned). Covers the file runmodes through the one worker loop (single, dispatch with 1
//! and 2 workers) on corpus captures, and the SSH protocol end to end (detection, record,
//! sticky buffer rule, alert object) as `docs/adding-a-protocol.md` walks it through.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::Value;
use shrike_detect::setup::engine_from_str;
use shrike_detect::EngineConfig;
use shrike_pipeline::config::{Runmode, SensorConfig};
use shrike_pipeline::progress::{Progress, ProgressMode};
use shrike_pipeline::run::{run_files, RunOptions};

fn corpus(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/pcaps")
        .join(rel);
    p.exists().then_some(p)
}

struct Out {
    dir: PathBuf,
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run `inputs` through the pipeline with `rules`; the EVE records, stats left out.
fn run(inputs: &[PathBuf], rules: &str, runmode: Runmode, workers: usize) -> Vec<Value> {
    let out = Out {
        dir: std::env::temp_dir().join(format!(
            "shrike-inproc-{}-{:?}-{workers}-{}",
            std::process::id(),
            runmode,
            inputs.len()
        )),
    };
    std::fs::create_dir_all(&out.dir).unwrap();
    let cfg = SensorConfig::default();
    let loaded = engine_from_str(rules, &EngineConfig::default());
    let skipped = &loaded.engine.report().skipped;
    assert!(skipped.is_empty(), "{skipped:?}");
    let opts = RunOptions {
        inputs: inputs.to_vec(),
        from_dir: vec![false; inputs.len()],
        log_dir: out.dir.clone(),
        workers,
        runmode,
        progress: Progress::new(ProgressMode::None, true),
        engine: Some(Arc::new(loaded.engine)),
        rule_counts: None,
        stop: Arc::new(AtomicBool::new(false)),
        bpf: None,
    };
    let r = run_files(&cfg, opts).expect("run");
    assert_eq!(r.input_errors, 0);
    let text = std::fs::read_to_string(out.dir.join("eve.json")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event_type"] != "stats")
        .collect()
}

/// The records as sorted text, `flow_id` left out (it numbers flows per worker).
fn sorted(mut v: Vec<Value>) -> Vec<String> {
    for r in &mut v {
        if let Some(o) = r.as_object_mut() {
            o.remove("flow_id");
        }
    }
    let mut s: Vec<String> = v.drain(..).map(|r| r.to_string()).collect();
    s.sort();
    s
}

const RULES: &str = r#"alert http any any -> any any (msg:"http get"; http.method; content:"GET"; sid:1;)
alert dns any any -> any any (msg:"dns query"; dns.query; content:"."; sid:2;)
alert tls any any -> any any (msg:"tls sni"; tls.sni; content:"."; sid:3;)
alert ssh any any -> any any (msg:"ssh openssh"; ssh.software; content:"OpenSSH"; sid:4;)
alert tcp any any -> any any (msg:"syn"; flags:S; sid:5;)
"#;

#[test]
fn every_file_runmode_gives_the_same_records() {
    let inputs: Vec<PathBuf> = ["ndpi/ssh.pcap", "ndpi/dns-exf.pcap", "zeek/http_get.pcap"]
        .iter()
        .filter_map(|p| corpus(p))
        .collect();
    if inputs.is_empty() {
        eprintln!("skipped: ../shared/corpus is absent");
        return;
    }
    let single = run(&inputs, RULES, Runmode::Single, 1);
    assert!(single.iter().any(|r| r["event_type"] == "alert"));
    assert!(single.iter().any(|r| r["event_type"] == "flow"));
    let single = sorted(single);
    for workers in [1, 2] {
        let d = sorted(run(&inputs, RULES, Runmode::Dispatch, workers));
        assert_eq!(single.len(), d.len(), "dispatch with {workers} workers");
        assert!(
            single == d,
            "dispatch with {workers} workers differs from single"
        );
    }
}

#[test]
fn ssh_end_to_end_matches_suricata() {
    let Some(pcap) = corpus("ndpi/ssh.pcap") else {
        eprintln!("skipped: ../shared/corpus is absent");
        return;
    };
    let recs = run(&[pcap], RULES, Runmode::Single, 1);
    // Suricata 7.0.10 on the same capture (stock suricata.yaml): two `ssh` records.
    let ssh: Vec<&Value> = recs.iter().filter(|r| r["event_type"] == "ssh").collect();
    let mut seen: Vec<(String, String, String, String)> = ssh
        .iter()
        .map(|r| {
            let s = &r["ssh"];
            (
                s["client"]["proto_version"].as_str().unwrap().to_string(),
                s["client"]["software_version"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                s["server"]["proto_version"].as_str().unwrap().to_string(),
                s["server"]["software_version"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![
            (
                "2.0".into(),
                "OpenSSH_5.6".into(),
                "2.0".into(),
                "OpenSSH_5.3".into()
            ),
            (
                "2.0".into(),
                "OpenSSH_8.2p1".into(),
                "2.0".into(),
                "APACHE-SSHD-2.5.0".into()
            ),
        ]
    );
    for r in &ssh {
        assert_eq!(r["tx_id"], 0);
        assert!(r["dest_port"] == 22 || r["dest_port"] == 8000, "{r}");
    }
    // Both flows are `ssh` in their flow records.
    let flows = recs
        .iter()
        .filter(|r| r["event_type"] == "flow" && r["app_proto"] == "ssh")
        .count();
    assert_eq!(flows, 2);
    // The sticky-buffer rule fires once per direction whose software runs OpenSSH (a
    // two-way buffer: Suricata keeps detect state per direction), on the packets Suricata
    // 7.0.10 alerts on for the same rule, and the alert carries the `ssh` object.
    let alerts: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 4)
        .collect();
    let mut at: Vec<(u64, String)> = alerts
        .iter()
        .map(|a| {
            (
                a["pcap_cnt"].as_u64().unwrap(),
                a["direction"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    at.sort();
    assert_eq!(
        at,
        vec![
            (7, "to_client".to_string()),
            (8, "to_server".to_string()),
            (265, "to_server".to_string())
        ]
    );
    for a in alerts {
        assert_eq!(a["app_proto"], "ssh");
        assert!(a["ssh"]["client"]["software_version"].is_string(), "{a}");
    }
}

#[test]
fn smtp_starttls_end_to_end_matches_suricata() {
    let Some(pcap) = corpus("ndpi/smtp-starttls.pcap") else {
        eprintln!("skipped: ../shared/corpus is absent");
        return;
    };
    let rules = "alert smtp any any -> any any (msg:\"helo\"; smtp.helo; content:\"xxxxxxxxxxxxx\"; sid:6;)\n";
    let recs = run(&[pcap], rules, Runmode::Single, 1);
    // Suricata 7.0.10 on the same capture (stock suricata.yaml): one `smtp` record per flow
    // (the transaction STARTTLS completed, `helo` only), then the flow continues as TLS:
    // one `tls` record each, and both flows end as `tls`.
    let mut helos: Vec<&str> = recs
        .iter()
        .filter(|r| r["event_type"] == "smtp")
        .map(|r| {
            assert_eq!(r["tx_id"], 0);
            assert!(r.get("email").is_none(), "{r}");
            r["smtp"]["helo"].as_str().unwrap()
        })
        .collect();
    helos.sort();
    assert_eq!(
        helos,
        vec![
            "[IPv6:2003:de:2016:125:fc36:8317:4e86:cb72]",
            "xxxxxxxxxxxxx.xxx.com"
        ]
    );
    let mut subjects: Vec<&str> = recs
        .iter()
        .filter(|r| r["event_type"] == "tls")
        .map(|r| r["tls"]["subject"].as_str().unwrap())
        .collect();
    subjects.sort();
    assert_eq!(
        subjects,
        vec![
            "C=US, ST=California, L=Mountain View, O=Google Inc, CN=mx.google.com",
            "CN=jw-vm08-int-dns"
        ]
    );
    let tls_flows = recs
        .iter()
        .filter(|r| r["event_type"] == "flow" && r["app_proto"] == "tls")
        .count();
    assert_eq!(tls_flows, 2);
    // Suricata 8's `smtp.helo` (7.0.10 has no SMTP sticky buffers): one alert, on the
    // transaction, carrying the `smtp` object.
    let alerts: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 6)
        .collect();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0]["app_proto"], "smtp");
    assert_eq!(alerts[0]["smtp"]["helo"], "xxxxxxxxxxxxx.xxx.com");
}

#[test]
fn ftp_and_its_data_connection_match_suricata() {
    let Some(pcap) = corpus("zeek/ftp_retr.pcap") else {
        eprintln!("skipped: ../shared/corpus is absent");
        return;
    };
    let rules = "alert ftp-data any any -> any any (msg:\"retr\"; ftpdata_command:retr; sid:7;)\n";
    let recs = run(&[pcap], rules, Runmode::Single, 1);
    // Suricata 7.0.10 on the same capture (stock suricata.yaml): 11 `ftp` records, the
    // data connection announced by `RETR /README` gets one `ftp_data` record and a
    // `fileinfo` record with the whole file.
    let ftp: Vec<&Value> = recs.iter().filter(|r| r["event_type"] == "ftp").collect();
    assert_eq!(ftp.len(), 11);
    assert!(ftp
        .iter()
        .any(|r| r["ftp"]["command"] == "RETR" && r["ftp"]["command_data"] == "/README"));
    let data: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event_type"] == "ftp_data")
        .collect();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["ftp_data"]["filename"], "/README");
    assert_eq!(data[0]["ftp_data"]["command"], "RETR");
    let files: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event_type"] == "fileinfo" && r["app_proto"] == "ftp-data")
        .collect();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["fileinfo"]["size"], 16557);
    assert_eq!(files[0]["fileinfo"]["state"], "CLOSED");
    let alerts = recs
        .iter()
        .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 7)
        .count();
    assert_eq!(alerts, 1);
}

/// HTTP/2 by prior knowledge (suricata-verify's `http2-keywords` capture, nghttp2): the
/// records and alerts Suricata 7.0.10 writes for it with the stock `suricata.yaml`.
#[test]
fn http2_end_to_end_matches_suricata() {
    let pcap = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/suricata-verify/tests/http2-keywords/input.pcap");
    if !pcap.exists() {
        eprintln!("skipped: ../shared/suricata-verify is absent");
        return;
    }
    let rules = r#"alert http any any -> any any (http.uri; content:"/doc/manual/html/index.html"; sid:10;)
alert http1 any any -> any any (http.uri; content:"/doc/manual/html/index.html"; sid:11;)
alert http2 any any -> any any (http.uri; content:"/doc/manual/html/index.html"; sid:12;)
alert tcp any any -> any any (http.uri; content:"/doc/manual/html/index.html"; sid:13;)
alert http2 any any -> any any (http2.frametype:GOAWAY; sid:2;)
alert http2 any any -> any any (http2.settings:SETTINGS_HEADER_TABLE_SIZE>1000; sid:3;)
"#;
    let recs = run(&[pcap], rules, Runmode::Single, 1);
    let count = |sid: u64| {
        recs.iter()
            .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == sid)
            .count()
    };
    // Suricata: 10, 12, 13 once each (tx 2), never 11; GOAWAY and the table size once.
    assert_eq!(
        (
            count(10),
            count(11),
            count(12),
            count(13),
            count(2),
            count(3)
        ),
        (1, 0, 1, 1, 1, 1)
    );
    let alert = recs
        .iter()
        .find(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == 12)
        .unwrap();
    assert_eq!(alert["tx_id"], 2);
    assert_eq!(alert["app_proto"], "http2");
    assert_eq!(alert["http"]["http2"]["stream_id"], 1);
    let http: Vec<&Value> = recs.iter().filter(|r| r["event_type"] == "http").collect();
    // 6 streams and 4 connection-level transactions with something to log (as Suricata).
    assert_eq!(http.len(), 10);
    let s1 = http
        .iter()
        .find(|r| r["http"]["http2"]["stream_id"] == 1)
        .unwrap();
    assert_eq!(s1["tx_id"], 2);
    assert_eq!(s1["http"]["version"], "2");
    assert_eq!(s1["http"]["url"], "/doc/manual/html/index.html");
    assert_eq!(s1["http"]["status"], 200);
    assert_eq!(s1["http"]["length"], 22617);
    assert_eq!(s1["http"]["http_user_agent"], "nghttp2/0.5.2-DEV");
    assert_eq!(s1["http"]["response_headers"][2]["value"], "22617");
    let settings = http.iter().find(|r| r["tx_id"] == 0).unwrap();
    assert_eq!(
        settings["http"]["http2"]["response"]["settings"][0]["settings_id"],
        "SETTINGSMAXCONCURRENTSTREAMS"
    );
    let files: Vec<u64> = recs
        .iter()
        .filter(|r| r["event_type"] == "fileinfo" && r["app_proto"] == "http2")
        .map(|r| r["fileinfo"]["size"].as_u64().unwrap())
        .collect();
    assert_eq!(files.len(), 6);
    assert!(files.contains(&252879) && files.contains(&22617));
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(flow["app_proto"], "http2");
}
