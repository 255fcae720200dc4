//! Issue 23 ("trust"): shrike behaves as a filter (a closed stdout ends the run cleanly, a
//! stop signal always ends it promptly, no panic on a closed pipe) and a file run's EVE does
//! not depend on the worker count.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// `samples/sample.pcap` given `n` times: enough EVE to fill any pipe buffer.
fn many_samples(n: usize) -> Vec<PathBuf> {
    vec![repo().join("samples/sample.pcap"); n]
}

/// Wait for `child` up to `limit`; kill it (and fail) past that.
fn wait_within(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An every-packet rule, so that alerts (which block rather than drop) are part of the output.
fn all_rule(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("all.rules");
    std::fs::write(&p, "alert ip any any -> any any (msg:\"all\"; sid:1;)\n").unwrap();
    p
}

#[test]
fn closed_stdout_ends_the_run_like_head() {
    let tmp = TempDir::new("epipe");
    let rules = all_rule(tmp.path());
    for flag in [&["-l", "-"][..], &["--eve-stdout"][..]] {
        let mut child = shrike()
            .arg("-r")
            .args(many_samples(400))
            .arg("-S")
            .arg(&rules)
            .args(flag)
            .arg("-q")
            .current_dir(tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(first.starts_with('{'), "{flag:?}: first line {first:?}");
        // `head -1` exits: the pipe's only reader goes away.
        drop(out);
        let st = wait_within(&mut child, Duration::from_secs(1), "closed stdout");
        let mut err = String::new();
        use std::io::Read;
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!err.contains("panicked"), "{flag:?}: {err}");
        assert_eq!(st.code(), Some(0), "{flag:?}: exit status, stderr: {err}");
    }
}

#[test]
fn sigterm_and_sigint_stop_within_a_second_even_with_a_stuck_reader() {
    let tmp = TempDir::new("sigterm");
    let rules = all_rule(tmp.path());
    for sig in ["TERM", "INT"] {
        // Stdout is a pipe nobody reads: the output stalls once the pipe buffer is full.
        let mut child = shrike()
            .arg("-r")
            .args(many_samples(2000))
            .arg("-S")
            .arg(&rules)
            .args(["-l", "-", "-q"])
            .current_dir(tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let st = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        wait_within(&mut child, Duration::from_secs(1), sig);
    }
}

#[test]
fn ctl_into_a_closed_pipe_does_not_panic() {
    // The left side writes after `true` (the pipe's reader) has exited: EPIPE.
    let bin = env!("CARGO_BIN_EXE_shrike");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "(sleep 0.3; '{bin}' ctl help; echo \"rc=$?\" >&2) | true"
        ))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("rc=0"), "{err}");
}

/// EVE records of a run, normalised for comparison: stats records left out (timing-bound),
/// every record as canonical JSON (sorted keys), sorted.
fn normalised(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = eve_records(dir)
        .into_iter()
        .filter(|r| r["event_type"] != "stats")
        // serde_json's map is ordered by key: the text is canonical.
        .map(|r| serde_json::to_string(&r).unwrap())
        .collect();
    v.sort();
    v
}

/// Run shrike over `inputs` with `rules` and `args` into `dir`; returns stderr.
fn run_into(
    dir: &std::path::Path,
    inputs: &[PathBuf],
    rules: &std::path::Path,
    args: &[&str],
) -> String {
    let o = shrike()
        .arg("-r")
        .args(inputs)
        .arg("-S")
        .arg(rules)
        .arg("-l")
        .arg(dir)
        .arg("-v")
        .args(args)
        .output()
        .unwrap();
    let err = stderr(&o);
    // Corrupt files in a corpus give exit 1; the EVE of the rest is what is compared.
    assert!(o.status.code().is_some(), "{args:?}: {err}");
    assert_eq!(dropped(&err), 0, "{args:?}: {err}");
    err
}

/// Sum of the `output.eve.dropped.*` counters in a `-v` stderr.
fn dropped(err: &str) -> u64 {
    err.lines()
        .filter(|l| l.starts_with("shrike: counters:"))
        .flat_map(|l| l.split_whitespace())
        .filter(|w| w.starts_with("output.eve.dropped."))
        .filter_map(|w| w.split_once('=').and_then(|(_, v)| v.parse::<u64>().ok()))
        .sum()
}

fn first_difference(a: &[String], b: &[String]) -> String {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return format!("\n  {x}\n  {y}");
        }
    }
    format!("lengths {} and {}", a.len(), b.len())
}

fn assert_same(what: &str, eve: &[String], base: &[String]) {
    assert!(
        eve == base,
        "{what}: EVE differs ({} vs {} records): {}",
        eve.len(),
        base.len(),
        first_difference(eve, base)
    );
}

/// The determinism check over `inputs`: `--workers 1, 2, 4` and `--runmode single` give the
/// same sorted EVE, on every run (`repeats` runs per mode), with nothing dropped. Host-scoped
/// state (thresholds `by_src`/`by_dst`, host bits ...) included: ET Open's thresholds decide
/// on the same packets whatever the worker count.
fn check_deterministic(inputs: &[PathBuf], rules: &std::path::Path, repeats: usize) {
    let modes: [&[&str]; 4] = [
        &["--workers", "1"],
        &["--runmode", "single"],
        &["--workers", "2"],
        &["--workers", "4"],
    ];
    let mut base: Option<Vec<String>> = None;
    for m in modes {
        for r in 0..repeats {
            let tmp = TempDir::new("det");
            run_into(tmp.path(), inputs, rules, m);
            let eve = normalised(tmp.path());
            match &base {
                None => {
                    assert!(!eve.is_empty(), "no EVE records");
                    base = Some(eve);
                }
                Some(b) => assert_same(&format!("{m:?}, run {} vs --workers 1", r + 1), &eve, b),
            }
        }
    }
}

#[test]
fn eve_is_the_same_whatever_the_worker_count_samples() {
    // Always runnable: the repository's own captures with an every-packet rule.
    let tmp = TempDir::new("det-samples");
    // An every-packet rule, and host-scoped thresholds: which packet of a host alerts must
    // not depend on which worker saw it.
    let rules = tmp.path().join("det.rules");
    std::fs::write(
        &rules,
        "alert ip any any -> any any (msg:\"all\"; sid:1;)\n\
         alert ip any any -> any any (msg:\"once per source\"; threshold: type limit, track by_src, count 1, seconds 3600; sid:2;)\n\
         alert ip any any -> any any (msg:\"every 3rd per destination\"; threshold: type threshold, track by_dst, count 3, seconds 3600; sid:3;)\n\
         alert ip any any -> any any (msg:\"after 5 per source\"; detection_filter: track by_src, count 5, seconds 3600; sid:4;)\n",
    )
    .unwrap();
    let mut inputs = vec![repo().join("samples/sample.pcap")];
    for f in ["443-curl.pcap", "dns.pcap", "http_on_sip_port.pcap"] {
        inputs.push(repo().join("tests/data/app").join(f));
    }
    check_deterministic(&inputs, &rules, 2);
}

#[test]
fn eve_is_the_same_whatever_the_worker_count_ndpi_et_open() {
    // The shared corpus (nDPI's captures, 543 files) with every ET Open rule, three runs per
    // mode: about 2 s per run on 2 cores, 12 runs.
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared (corpus) not present");
        return;
    };
    let ndpi = shared.join("corpus/pcaps/ndpi");
    let et = shared.join("corpus/rules/et-open");
    if !ndpi.is_dir() || !et.is_dir() {
        eprintln!("skipped: ../shared/corpus/pcaps/ndpi or rules/et-open missing");
        return;
    }
    let tmp = TempDir::new("det-ndpi");
    let mut all = String::new();
    let mut files: Vec<_> = std::fs::read_dir(&et)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    files.sort();
    for f in files {
        all.push_str(&std::fs::read_to_string(f).unwrap());
    }
    let rules = tmp.path().join("et.rules");
    std::fs::write(&rules, all).unwrap();
    check_deterministic(&[ndpi], &rules, 3);
}

/// Packets in a run's summary line.
fn packets_of(o: &std::process::Output) -> u64 {
    summary_packets(&stderr(o)).unwrap_or_else(|| panic!("no summary: {}", stderr(o)))
}

#[test]
fn gzip_captures_read_from_files_directories_and_stdin() {
    let tmp = TempDir::new("gz");
    let plain = repo().join("samples/sample.pcap");
    let gz = tmp.path().join("sample.pcap.gz");
    let st = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "gzip -c '{}' > '{}'",
            plain.display(),
            gz.display()
        ))
        .status()
        .unwrap();
    assert!(st.success());
    let run = |args: &[&str], stdin: Option<&std::path::Path>| {
        let mut c = shrike();
        c.args(args).args(["-l", "-", "--disable-detection"]);
        if let Some(p) = stdin {
            c.stdin(std::fs::File::open(p).unwrap());
        }
        c.stdout(Stdio::null()).output().unwrap()
    };
    let base = run(&["-r", plain.to_str().unwrap()], None);
    assert_eq!(base.status.code(), Some(0), "{}", stderr(&base));
    let want = packets_of(&base);
    assert!(want > 0);
    for (what, o) in [
        ("file", run(&["-r", gz.to_str().unwrap()], None)),
        ("dir", run(&["-r", tmp.path().to_str().unwrap()], None)),
        ("stdin", run(&["-r", "-"], Some(&gz))),
    ] {
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        assert_eq!(packets_of(&o), want, "{what}: {}", stderr(&o));
    }
}

#[test]
fn a_directory_run_skips_unreadable_files_and_counts_them() {
    let tmp = TempDir::new("dirskip");
    let dir = tmp.path().join("in");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(repo().join("samples/sample.pcap"), dir.join("a.pcap")).unwrap();
    std::fs::write(dir.join("b.pcap"), b"GIF89a not a capture at all").unwrap();
    std::fs::write(dir.join("c.pcap.gz"), [0x1f, 0x8b, 8, 0, 0, 0]).unwrap();
    let o = shrike()
        .args(["-l", "-", "--disable-detection", "-r"])
        .arg(&dir)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("b.pcap") && err.contains("file skipped"),
        "{err}"
    );
    assert!(err.contains("2 file(s) skipped"), "{err}");
    assert!(packets_of(&o) > 0);
    // Nothing readable at all: exit 1.
    std::fs::remove_file(dir.join("a.pcap")).unwrap();
    let o = shrike()
        .args(["-l", "-", "--disable-detection", "-r"])
        .arg(&dir)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A file named on the command line is still an error.
    let o = shrike()
        .args(["-l", "-", "--disable-detection", "-r"])
        .arg(dir.join("b.pcap"))
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn eve_types_filter_each_protocol() {
    let tmp = TempDir::new("types");
    let inputs = [
        repo().join("tests/data/app/dns.pcap"),
        repo().join("tests/data/app/443-curl.pcap"),
    ];
    let run = |cfg: Option<&str>| {
        let out = TempDir::new("types-out");
        let mut c = shrike();
        c.arg("-r").args(&inputs).arg("-l").arg(out.path());
        if let Some(text) = cfg {
            let p = tmp.path().join("shrike.yaml");
            std::fs::write(&p, text).unwrap();
            c.arg("-c").arg(&p);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        eve_records(out.path())
    };
    let all = run(None);
    assert!(count_type(&all, "dns") > 0 && count_type(&all, "tls") > 0);
    let some = run(Some("output:\n  eve:\n    types: [alert, flow, tls]\n"));
    assert_eq!(count_type(&some, "dns"), 0, "dns is not among the types");
    assert_eq!(count_type(&some, "tls"), count_type(&all, "tls"));
    assert_eq!(count_type(&some, "flow"), count_type(&all, "flow"));
}

#[test]
fn pidfile_is_written_while_running_and_removed_after() {
    let tmp = TempDir::new("pid");
    let pidfile = tmp.path().join("shrike.pid");
    let mut child = shrike()
        .args(["-r", "-", "-l", "-", "--disable-detection", "--pidfile"])
        .arg(&pidfile)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !pidfile.exists() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = std::fs::read_to_string(&pidfile).expect("pidfile written");
    assert_eq!(text.trim(), child.id().to_string());
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(&std::fs::read(repo().join("samples/sample.pcap")).unwrap())
            .unwrap();
    }
    let st = wait_within(&mut child, Duration::from_secs(10), "pidfile run");
    assert!(st.success());
    assert!(!pidfile.exists(), "pidfile removed at exit");
}

#[test]
fn unused_suricata_yaml_settings_are_reported_at_default_verbosity() {
    let yaml = PathBuf::from("/etc/suricata/suricata.yaml");
    if !yaml.exists() {
        eprintln!("skipped: Suricata's suricata.yaml not installed");
        return;
    }
    let tmp = TempDir::new("suri-yaml");
    let o = shrike()
        .arg("-c")
        .arg(&yaml)
        .args(["--disable-detection", "-r"])
        .arg(repo().join("samples/sample.pcap"))
        .arg("-l")
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        err.contains("suricata.yaml setting(s) not used by shrike (-v lists them)"),
        "{err}"
    );
}
