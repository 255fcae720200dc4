//! End to end: the shrike binary on samples/sample.pcap with samples/sample.rules. The
//! packet-level SAMPLE rules must alert; the app-layer ET rules are reported as not enforced
//! yet; every EVE line validates against the EVE schema; fast.log and the stats agree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator() -> Option<jsonschema::Validator> {
    let candidates = [
        std::env::var("SHRIKE_EVE_SCHEMA").map(PathBuf::from).ok(),
        Some(repo().join("../shared/eve-schema/schema.json")),
        Some(PathBuf::from("/work/shared/eve-schema/schema.json")),
    ];
    let Some(p) = candidates.into_iter().flatten().find(|p| p.is_file()) else {
        eprintln!("SKIP schema validation: EVE schema not found (set SHRIKE_EVE_SCHEMA)");
        return None;
    };
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).expect("read schema")).expect("json");
    Some(jsonschema::draft202012::new(&schema).expect("compile schema"))
}

struct Run {
    eve: Vec<serde_json::Value>,
    fast: Vec<String>,
    stderr: String,
}

fn run(dir: &Path, extra: &[&str]) -> Run {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("mkdir");
    let out = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .arg("-r")
        .arg(repo().join("samples/sample.pcap"))
        .arg("-S")
        .arg(repo().join("samples/sample.rules"))
        .arg("-l")
        .arg(dir)
        .args(extra)
        .output()
        .expect("run shrike");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "shrike failed: {stderr}");
    let v = validator();
    let text = std::fs::read_to_string(dir.join("eve.json")).expect("eve.json");
    let eve = text
        .lines()
        .map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).expect("EVE line is JSON");
            if let Some(v) = &v {
                let errs: Vec<String> = v.iter_errors(&j).map(|e| e.to_string()).collect();
                assert!(errs.is_empty(), "schema errors {errs:?} in {l}");
            }
            j
        })
        .collect();
    let fast = std::fs::read_to_string(dir.join("fast.log"))
        .expect("fast.log")
        .lines()
        .map(str::to_string)
        .collect();
    Run { eve, fast, stderr }
}

fn alerts(r: &Run) -> BTreeMap<u64, usize> {
    let mut m = BTreeMap::new();
    for j in r.eve.iter().filter(|j| j["event_type"] == "alert") {
        *m.entry(j["alert"]["signature_id"].as_u64().expect("sid"))
            .or_default() += 1;
    }
    m
}

fn check(r: &Run) {
    let a = alerts(r);
    // Exactly what Suricata 7.0.10 logs on this capture with these rules (`suricata -r
    // samples/sample.pcap -S samples/sample.rules -k none`): curl UA in two HTTP requests
    // (raw stream and http.user_agent), one .tk DNS query (payload and dns.query), three
    // ICMP echo requests, the TLS ClientHello (packet and stream) and its SNI.
    let want: BTreeMap<u64, usize> = [
        (1000001, 2),
        (1000002, 1),
        (1000003, 3),
        (1000004, 2),
        (2012811, 1),
        (2013028, 2),
        (2017928, 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(a, want);
    assert!(r.stderr.contains("8 loaded"), "{}", r.stderr);
    assert!(!r.stderr.contains("not enforced:"), "{}", r.stderr);

    let total: usize = a.values().sum();
    assert_eq!(r.fast.len(), total);
    assert!(r.fast.iter().any(|l| l.contains(
        "[1:1000003:1] SAMPLE ICMP echo request [**] [Classification: Misc activity] [Priority: 3] {ICMP}"
    )));
    let stats = r
        .eve
        .iter()
        .rev()
        .find(|j| j["event_type"] == "stats")
        .expect("stats record");
    assert_eq!(
        stats["stats"]["detect"]["alert"].as_u64(),
        Some(total as u64)
    );

    // Alerted flows say so in their flow record; alert records carry the flow.
    for al in r.eve.iter().filter(|j| j["event_type"] == "alert") {
        let id = al["flow_id"].as_u64().expect("flow_id");
        assert!(al["direction"] == "to_server" || al["direction"] == "to_client");
        assert_eq!(al["pkt_src"], "wire/pcap");
        assert!(al["pcap_cnt"].as_u64().is_some());
        let flow = r
            .eve
            .iter()
            .find(|j| j["event_type"] == "flow" && j["flow_id"].as_u64() == Some(id))
            .expect("flow record of an alerted flow");
        assert_eq!(flow["flow"]["alerted"], true);
    }
    let dns = r
        .eve
        .iter()
        .find(|j| j["event_type"] == "alert" && j["alert"]["signature_id"] == 1000002)
        .expect("dns alert");
    assert_eq!(dns["alert"]["category"], "Potentially Bad Traffic");
    assert_eq!(dns["alert"]["severity"], 2);
    assert_eq!(dns["alert"]["action"], "allowed");
    assert_eq!(dns["dest_port"], 53);
    assert_eq!(dns["proto"], "UDP");
}

#[test]
fn sample_alerts_single_worker() {
    let dir = std::env::temp_dir().join(format!("shrike-e2e-1-{}", std::process::id()));
    let r = run(&dir, &["--runmode", "single"]);
    check(&r);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sample_alerts_several_workers() {
    let dir = std::env::temp_dir().join(format!("shrike-e2e-4-{}", std::process::id()));
    let r = run(&dir, &["--workers", "4"]);
    check(&r);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn disable_detection_writes_no_alerts() {
    let dir = std::env::temp_dir().join(format!("shrike-e2e-off-{}", std::process::id()));
    let r = run(&dir, &["--disable-detection"]);
    assert!(alerts(&r).is_empty());
    assert!(r.fast.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_config_exit_codes() {
    let bin = env!("CARGO_BIN_EXE_shrike");
    let ok = Command::new(bin)
        .args(["-T", "-S"])
        .arg(repo().join("samples/sample.rules"))
        .output()
        .expect("run");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let missing = Command::new(bin)
        .args(["-T", "-S", "/nonexistent/x.rules"])
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(1));
    let dir = std::env::temp_dir().join(format!("shrike-e2e-T-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let bad = dir.join("bad.rules");
    std::fs::write(
        &bad,
        "alert tcp any any -> any any (content:\"x\"; sid:1;)\nalert tcp any any -> any any (content:\"x\"; nosuchkeyword; sid:2;)\n",
    )
    .expect("write");
    let out = Command::new(bin)
        .args(["-T", "-v", "-S"])
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.rules:2 sid 2"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rule_files_from_config_and_dash_s() {
    let dir = std::env::temp_dir().join(format!("shrike-e2e-cfg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let cfg = dir.join("shrike.yaml");
    std::fs::write(
        &cfg,
        format!(
            "rules:\n  default-rule-path: {}\n  rule-files:\n    - sample.rules\nvars:\n  address-groups:\n    HOME_NET: \"[10.0.0.0/8]\"\n",
            repo().join("samples").display()
        ),
    )
    .expect("write config");
    let extra = dir.join("extra.rules");
    std::fs::write(
        &extra,
        "alert icmp any any -> any any (msg:\"extra echo\"; itype:8; sid:9000001; rev:1;)\n",
    )
    .expect("write rules");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .arg("-c")
        .arg(&cfg)
        .arg("-s")
        .arg(&extra)
        .arg("-r")
        .arg(repo().join("samples/sample.pcap"))
        .arg("-l")
        .arg(&out)
        .arg("-v")
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // 8 sample rules + 1 extra, all enforced (-v would list any that is not).
    assert!(err.contains("2 file(s), 9 rule(s): 9 loaded"), "{err}");
    assert!(!err.contains("rule not enforced:"), "{err}");
    let eve = std::fs::read_to_string(out.join("eve.json")).expect("eve");
    assert_eq!(eve.matches("\"signature_id\":9000001").count(), 3);
    // HOME_NET narrowed to 10/8: the DNS rule ($HOME_NET source) still fires.
    assert_eq!(eve.matches("\"signature_id\":1000002").count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tag:session` with `tagged-packets: yes` logs the packets after the trigger as `packet`
/// records even when `alert` is the only EVE type listed: Suricata writes them from its alert
/// logger, so a SIEM that enables alerts alone still gets them.
#[test]
fn tagged_packets_follow_the_alert_type() {
    let dir = std::env::temp_dir().join(format!("shrike-tag-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let rules = dir.join("tag.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any any (msg:\"syn\"; flags:S; tag:session; sid:1;)\n",
    )
    .expect("rules");
    let run = |tagged: &str| -> Vec<serde_json::Value> {
        let cfg = dir.join(format!("tag-{tagged}.yaml"));
        std::fs::write(
            &cfg,
            format!(
                "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      types:\n        - alert:\n            tagged-packets: {tagged}\n"
            ),
        )
        .expect("config");
        let out_dir = dir.join(tagged);
        std::fs::create_dir_all(&out_dir).expect("mkdir");
        let out = Command::new(env!("CARGO_BIN_EXE_shrike"))
            .arg("-c")
            .arg(&cfg)
            .arg("-r")
            .arg(repo().join("samples/sample.pcap"))
            .arg("-S")
            .arg(&rules)
            .arg("-l")
            .arg(&out_dir)
            .args(["-k", "none"])
            .output()
            .expect("run shrike");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(out_dir.join("eve.json"))
            .expect("eve.json")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    let on = run("yes");
    let alerts = on.iter().filter(|j| j["event_type"] == "alert").count();
    let packets: Vec<_> = on.iter().filter(|j| j["event_type"] == "packet").collect();
    assert!(alerts > 0, "the SYN rule alerts");
    assert!(
        packets.len() > alerts,
        "{} packet records for {alerts} alerts",
        packets.len()
    );
    for p in &packets {
        assert!(p["packet"].as_str().is_some_and(|s| !s.is_empty()), "{p}");
        assert!(p["pcap_cnt"].as_u64().is_some(), "{p}");
    }
    let off = run("no");
    assert!(off.iter().all(|j| j["event_type"] != "packet"));
    let _ = std::fs::remove_dir_all(&dir);
}
