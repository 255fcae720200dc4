//! End-to-end tests of the offline sensor: capture files in, EVE out, with Suricata's
//! command-line behaviour for good and bad input.

mod common;

use common::*;
use std::collections::BTreeSet;

fn sample() -> std::path::PathBuf {
    repo().join("samples/sample.pcap")
}

#[test]
fn sample_capture_gives_flows_stats_and_a_summary() {
    let out = TempDir::new("sample");
    let o = shrike()
        .args(["-r"])
        .arg(sample())
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(summary_packets(&err), Some(487), "{err}");
    let recs = eve_records(out.path());
    // The generator's 23 flows (TCP, UDP, ICMP), one record each at shutdown.
    assert_eq!(count_type(&recs, "flow"), 23);
    assert_eq!(count_type(&recs, "stats"), 1);
    let stats = recs.iter().find(|r| r["event_type"] == "stats").unwrap();
    assert_eq!(stats["stats"]["decoder"]["pkts"], 487);
    assert_eq!(stats["stats"]["decoder"]["ethernet"], 487);
    assert_eq!(stats["stats"]["flow"]["total"], 23);
    let pkts: u64 = recs
        .iter()
        .filter(|r| r["event_type"] == "flow")
        .map(|r| {
            r["flow"]["pkts_toserver"].as_u64().unwrap()
                + r["flow"]["pkts_toclient"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(pkts, 487, "every packet belongs to exactly one flow");
    assert!(assert_valid_eve(&recs) > 0 || shared().is_none());
}

/// The set of (src, sport, dst, dport, proto, pkts) of the flow records.
fn flow_set(recs: &[serde_json::Value]) -> BTreeSet<String> {
    recs.iter()
        .filter(|r| r["event_type"] == "flow")
        .map(|r| {
            format!(
                "{} {} {} {} {} {}/{} {}/{}",
                r["src_ip"],
                r["src_port"],
                r["dest_ip"],
                r["dest_port"],
                r["proto"],
                r["flow"]["pkts_toserver"],
                r["flow"]["pkts_toclient"],
                r["flow"]["bytes_toserver"],
                r["flow"]["bytes_toclient"]
            )
        })
        .collect()
}

#[test]
fn runmodes_and_worker_counts_agree() {
    let mut sets = Vec::new();
    for args in [
        vec!["--runmode", "single"],
        vec!["--workers", "1"],
        vec!["--workers", "2"],
        vec!["--workers", "5"],
    ] {
        let out = TempDir::new("runmodes");
        let o = shrike()
            .arg("-q")
            .arg("-r")
            .arg(sample())
            .arg("-l")
            .arg(out.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        sets.push((args, flow_set(&eve_records(out.path()))));
    }
    for (args, s) in &sets[1..] {
        assert_eq!(s, &sets[0].1, "{args:?} differs from single");
    }
}

#[test]
fn truncated_capture_processes_complete_records_and_exits_0() {
    let out = TempDir::new("trunc");
    let data = std::fs::read(sample()).unwrap();
    // Find the last record and cut in the middle of its data.
    let mut off = 24;
    let mut last = 24;
    while off + 16 <= data.len() {
        let incl = u32::from_le_bytes(data[off + 8..off + 12].try_into().unwrap()) as usize;
        last = off;
        off += 16 + incl;
    }
    assert_eq!(off, data.len());
    let cut = out.path().join("cut.pcap");
    std::fs::write(&cut, &data[..last + 16 + 10]).unwrap();
    let o = shrike()
        .arg("-r")
        .arg(&cut)
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("truncated"), "{err}");
    assert_eq!(summary_packets(&err), Some(486), "{err}");
}

#[test]
fn corrupt_header_is_an_error_naming_the_file_and_others_still_run() {
    let out = TempDir::new("corrupt");
    let bad = out.path().join("bad.pcap");
    std::fs::write(&bad, b"this is not a capture file at all, just text\n").unwrap();
    let o = shrike()
        .arg("-r")
        .arg(&bad)
        .arg("-r")
        .arg(sample())
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.pcap"), "{err}");
    assert_eq!(
        summary_packets(&err),
        Some(487),
        "the good file still ran: {err}"
    );
}

#[test]
fn missing_file_fails_before_any_work() {
    let out = TempDir::new("missing");
    let o = shrike()
        .args(["-r", "/nonexistent/capture.pcap", "-l"])
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("/nonexistent/capture.pcap"), "{err}");
    assert!(!out.path().join("eve.json").exists(), "no work started");
}

#[test]
fn unwritable_log_dir_fails_before_any_work() {
    let out = TempDir::new("unwritable");
    let file = out.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let o = shrike()
        .arg("-r")
        .arg(sample())
        .arg("-l")
        .arg(file.join("logs"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("log directory"), "{err}");
    assert!(
        summary_packets(&err).is_none(),
        "no packets processed: {err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let o = shrike().args(["--no-such-flag"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = shrike().args(["-k", "sometimes"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = shrike()
        .args(["--set", "novalue", "-r", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bad_config_key_names_line_and_column() {
    let out = TempDir::new("badcfg");
    let cfg = out.path().join("shrike.yaml");
    std::fs::write(&cfg, "stats:\n  enabled: true\n  intervall: 5\n").unwrap();
    let o = shrike()
        .arg("-c")
        .arg(&cfg)
        .arg("-r")
        .arg(sample())
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("intervall") && err.contains("line 3"), "{err}");
}

#[test]
fn set_overrides_config() {
    let out = TempDir::new("set");
    let o = shrike()
        .arg("-r")
        .arg(sample())
        .arg("-l")
        .arg(out.path())
        .args(["--set", "stats.enabled=no"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count_type(&eve_records(out.path()), "stats"), 0);
}

#[test]
fn unsupported_link_type_is_reported_once_and_skipped() {
    let out = TempDir::new("linktype");
    // A pcap header with link type 147 (user 0) and one record.
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0u8; 8]);
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&147u32.to_le_bytes());
    for _ in 0..3 {
        f.extend_from_slice(&[0u8; 8]);
        f.extend_from_slice(&4u32.to_le_bytes());
        f.extend_from_slice(&4u32.to_le_bytes());
        f.extend_from_slice(b"abcd");
    }
    let p = out.path().join("user0.pcap");
    std::fs::write(&p, &f).unwrap();
    let o = shrike()
        .arg("-r")
        .arg(&p)
        .arg("-r")
        .arg(sample())
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.matches("147").count(), 1, "reported once: {err}");
    assert_eq!(summary_packets(&err), Some(487), "{err}");
}

#[test]
fn directory_input_reads_every_file() {
    let out = TempDir::new("dir");
    let dir = out.path().join("caps");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(sample(), dir.join("a.pcap")).unwrap();
    std::fs::copy(sample(), dir.join("b.pcap")).unwrap();
    let o = shrike()
        .arg("-r")
        .arg(&dir)
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(summary_packets(&err), Some(974), "{err}");
}

/// Every capture of the shared corpus (1,343 files, mixed link types and formats), in one run:
/// no crash, per-link-type counts, and every EVE record validates.
#[test]
fn whole_corpus_runs_without_panic_and_validates() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared not present");
        return;
    };
    let pcaps = shared.join("corpus/pcaps");
    let out = TempDir::new("corpus");
    let o = shrike()
        .arg("-v")
        .arg("-r")
        .arg(pcaps.join("ndpi"))
        .arg(pcaps.join("zeek"))
        .arg("-l")
        .arg(out.path())
        .args(["--workers", "2"])
        .output()
        .unwrap();
    let err = stderr(&o);
    // Exit 1 is expected: the corpus holds gzip files and one corrupt fuzzer capture.
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "crashed: {:?}\n{}",
        o.status,
        &err[err.len().saturating_sub(3000)..]
    );
    assert!(!err.contains("panicked"), "{err}");
    let packets = summary_packets(&err).expect("summary");
    assert!(packets > 180_000, "{packets}");
    let mut total_links = 0;
    for link in ["ethernet", "sll", "sll2", "null", "raw", "ipv4", "ipv6"] {
        let n = counter(&err, &format!("pcap.link.{link}")).unwrap_or(0);
        eprintln!("link type {link}: {n} packets");
        assert!(n > 0, "no {link} packets counted");
        total_links += n;
    }
    // PPP and Cisco HDLC captures are read too (fewer of them in the corpus).
    for link in ["ppp", "chdlc"] {
        let n = counter(&err, &format!("pcap.link.{link}")).unwrap_or(0);
        eprintln!("link type {link}: {n} packets");
        total_links += n;
    }
    assert_eq!(
        total_links, packets,
        "every packet counted under its link type"
    );
    let recs = eve_records(out.path());
    assert!(count_type(&recs, "flow") > 5_000);
    let n = assert_valid_eve(&recs);
    eprintln!("validated {n} EVE records");
}
