//! shrike as an engine inside other tools: captures from stdin, EVE on stdout, JSON progress.

mod common;

use common::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

fn sample_bytes() -> Vec<u8> {
    std::fs::read(repo().join("samples/sample.pcap")).unwrap()
}

/// Convert a little-endian µs pcap into a pcapng with one Ethernet interface.
fn to_pcapng(pcap: &[u8]) -> Vec<u8> {
    fn block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
        let pad = (4 - body.len() % 4) % 4;
        let len = (12 + body.len() + pad) as u32;
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(0u8, pad));
        out.extend_from_slice(&len.to_le_bytes());
    }
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, 0x0A0D0D0A, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&1u16.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&65535u32.to_le_bytes());
    block(&mut out, 1, &idb);
    let mut off = 24;
    while off + 16 <= pcap.len() {
        let f = |i: usize| u32::from_le_bytes(pcap[off + i..off + i + 4].try_into().unwrap());
        let (sec, usec, incl, orig) = (f(0), f(4), f(8) as usize, f(12));
        let ts = u64::from(sec) * 1_000_000 + u64::from(usec);
        let mut epb = Vec::new();
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(incl as u32).to_le_bytes());
        epb.extend_from_slice(&orig.to_le_bytes());
        epb.extend_from_slice(&pcap[off + 16..off + 16 + incl]);
        block(&mut out, 6, &epb);
        off += 16 + incl;
    }
    out
}

/// Run shrike with `args`, feeding `input` on stdin (optionally slowly, in chunks).
fn run_piped(args: &[&str], input: Vec<u8>, slow: bool) -> (std::process::Output, String) {
    let mut child = shrike()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        if slow {
            // About 2.5 s of input so several one-second progress lines are written.
            for chunk in input.chunks(input.len() / 10 + 1) {
                let _ = stdin.write_all(chunk);
                std::thread::sleep(Duration::from_millis(250));
            }
        } else {
            let _ = stdin.write_all(&input);
        }
    });
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    let stdout = reader.join().unwrap();
    (
        std::process::Output {
            status,
            stdout,
            stderr: err.clone().into_bytes(),
        },
        err,
    )
}

#[test]
fn pcap_through_a_pipe() {
    let out = TempDir::new("stdin-pcap");
    let dir = out.path().to_string_lossy().into_owned();
    let (o, err) = run_piped(&["-r", "-", "-l", &dir], sample_bytes(), false);
    assert!(o.status.success(), "{err}");
    assert_eq!(summary_packets(&err), Some(487), "{err}");
    assert_eq!(count_type(&eve_records(out.path()), "flow"), 23);
}

#[test]
fn pcapng_through_a_pipe() {
    let out = TempDir::new("stdin-pcapng");
    let dir = out.path().to_string_lossy().into_owned();
    let (o, err) = run_piped(&["-r", "-", "-l", &dir], to_pcapng(&sample_bytes()), false);
    assert!(o.status.success(), "{err}");
    assert_eq!(summary_packets(&err), Some(487), "{err}");
    let recs = eve_records(out.path());
    assert_eq!(count_type(&recs, "flow"), 23);
    assert_valid_eve(&recs);
}

#[test]
fn corrupt_stdin_is_a_clear_error() {
    let (o, err) = run_piped(
        &["-r", "-", "-l", "-"],
        b"garbage, not a capture".to_vec(),
        false,
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("<stdin>"), "{err}");
}

fn stdout_records(o: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn eve_on_stdout_with_dash_l() {
    let cwd = TempDir::new("eve-stdout");
    let o = shrike()
        .current_dir(cwd.path())
        .args(["-q", "-r"])
        .arg(repo().join("samples/sample.pcap"))
        .args(["-l", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = stdout_records(&o);
    assert_eq!(count_type(&recs, "flow"), 23);
    assert_eq!(count_type(&recs, "stats"), 1);
    assert_valid_eve(&recs);
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(left.is_empty(), "-l - writes no files: {left:?}");
}

#[test]
fn eve_stdout_flag_keeps_other_logs_in_the_log_dir() {
    let out = TempDir::new("eve-stdout-flag");
    let o = shrike()
        .args(["-q", "--eve-stdout", "-r"])
        .arg(repo().join("samples/sample.pcap"))
        .arg("-l")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count_type(&stdout_records(&o), "flow"), 23);
    assert!(!out.path().join("eve.json").exists());
}

#[test]
fn cat_capture_into_shrike_into_a_loader() {
    // The runner shape of desktop tools: `cat file | shrike -r - -l - | loader`.
    let (o, err) = run_piped(&["-r", "-", "-l", "-"], sample_bytes(), false);
    assert!(o.status.success(), "{err}");
    let recs = stdout_records(&o);
    assert!(count_type(&recs, "flow") == 23, "{err}");
}

const PHASES: &[&str] = &[
    "starting",
    "loading-rules",
    "compiling",
    "processing",
    "done",
];

#[test]
fn json_progress_lines_are_ordered_monotonic_and_end_with_the_summary() {
    let mut input = sample_bytes();
    let body = input[24..].to_vec();
    for _ in 0..20 {
        input.extend_from_slice(&body);
    }
    let rules = repo().join("samples/sample.rules");
    let rules = rules.to_string_lossy();
    let (o, err) = run_piped(
        &["-r", "-", "-l", "-", "--progress=json", "-S", &rules],
        input,
        true,
    );
    assert!(o.status.success(), "{err}");
    let lines: Vec<serde_json::Value> = err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        lines.len() >= 3,
        "several progress lines over ~2.5 s: {err}"
    );
    let mut last_phase = 0;
    let (mut last_bytes, mut last_pkts, mut last_alerts, mut last_elapsed) = (0, 0, 0, 0.0);
    for l in &lines {
        let phase = PHASES
            .iter()
            .position(|p| l["phase"] == *p)
            .unwrap_or_else(|| panic!("unknown phase {l}"));
        assert!(phase >= last_phase, "phases out of order: {lines:?}");
        last_phase = phase;
        let (b, p, a, e) = (
            l["bytes_read"].as_u64().unwrap(),
            l["packets"].as_u64().unwrap(),
            l["alerts"].as_u64().unwrap(),
            l["elapsed"].as_f64().unwrap(),
        );
        assert!(
            b >= last_bytes && p >= last_pkts && a >= last_alerts && e >= last_elapsed,
            "{lines:?}"
        );
        (last_bytes, last_pkts, last_alerts, last_elapsed) = (b, p, a, e);
        assert!(l["bytes_total"].is_null(), "a pipe has no known size: {l}");
    }
    let fin = lines.last().unwrap();
    assert_eq!(fin["phase"], "done");
    let packets = summary_packets(&err).expect("summary line");
    assert_eq!(fin["packets"].as_u64(), Some(packets));
    assert_eq!(packets, 487 * 21);
    let summary_alerts: u64 = err
        .lines()
        .find(|l| l.contains(" packets, "))
        .and_then(|l| l.split(", ").find(|p| p.ends_with(" alerts")))
        .and_then(|p| p.trim_end_matches(" alerts").parse().ok())
        .unwrap();
    assert_eq!(fin["alerts"].as_u64(), Some(summary_alerts));
}

#[test]
fn progress_is_silent_when_stderr_is_not_a_terminal() {
    let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .args(["-r"])
        .arg(repo().join("samples/sample.pcap"))
        .args(["-l", "-"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "only the summary: {err}");
    let q = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .args(["-q", "--progress=json", "-r"])
        .arg(repo().join("samples/sample.pcap"))
        .args(["-l", "-"])
        .output()
        .unwrap();
    assert!(
        stderr(&q).is_empty(),
        "-q silences progress and summary: {}",
        stderr(&q)
    );
}

#[test]
fn eve_stdout_without_a_log_dir_leaves_no_files() {
    // `cat file | shrike -r - -S rules --eve-stdout | loader` from some working directory:
    // EVE goes to the pipe and nothing (no fast.log, no stats.log) lands in that directory.
    let cwd = TempDir::new("eve-stdout-nodir");
    let o = shrike()
        .current_dir(cwd.path())
        .args(["-q", "--eve-stdout", "-r"])
        .arg(repo().join("samples/sample.pcap"))
        .arg("-S")
        .arg(repo().join("samples/sample.rules"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = stdout_records(&o);
    assert_eq!(count_type(&recs, "flow"), 23);
    assert!(count_type(&recs, "alert") > 0);
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "--eve-stdout without -l writes no files: {left:?}"
    );
}
