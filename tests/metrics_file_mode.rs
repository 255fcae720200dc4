//! The Prometheus endpoint in file mode: `shrike -r -` reads a capture from a pipe that stays
//! open (a long run), `metrics.enabled` serves `/metrics` meanwhile, as in live capture, and
//! the scrape passes `promtool check metrics` (names, types, `_total` suffixes, HELP).
//! promtool comes with Debian's `prometheus` package (scripts/setup.sh installs it); the test
//! installs it when it can and says why it skips otherwise.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn have_promtool() -> bool {
    Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// promtool, installed with apt-get when missing and this runs as root.
fn promtool() -> bool {
    if have_promtool() {
        return true;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        let _ = Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "prometheus",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    have_promtool()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One `GET /metrics`: the status line and the body, or `None` while nothing listens.
fn scrape(port: u16) -> Option<(String, String)> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
    let mut resp = String::new();
    c.read_to_string(&mut resp).ok()?;
    let (head, body) = resp.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

#[test]
fn metrics_served_during_a_file_run_pass_promtool() {
    if !promtool() {
        println!(
            "SKIPPED: promtool is not installed and could not be installed \
             (apt-get install prometheus, or run scripts/setup.sh)"
        );
        return;
    }
    let pcap = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sample.pcap"))
        .expect("samples/sample.pcap");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("metrics-file-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .args(["-r", "-", "-l"])
        .arg(&dir)
        .args(["--set", "metrics.enabled=yes", "--set"])
        .arg(format!("metrics.listen=127.0.0.1:{port}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shrike");
    // A long run: the capture's packets again and again (its 24-byte pcap header once) until
    // the scrape is done, so the worker keeps finishing rounds and publishing its counters.
    let mut stdin = child.stdin.take().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            if stdin.write_all(&pcap).is_err() {
                return;
            }
            let records = pcap.get(24..).unwrap_or_default();
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if stdin
                    .write_all(records)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    return;
                }
            }
        })
    };

    let t0 = Instant::now();
    let mut got = None;
    while t0.elapsed() < Duration::from_secs(30) {
        if let Some((status, body)) = scrape(port) {
            // Wait for the workers' published counters (twice a second).
            let packets: f64 = body
                .lines()
                .filter(|l| l.starts_with("shrike_packets_total{"))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum();
            if packets > 0.0 && body.contains("shrike_flow_memuse{worker=\"0\"}") {
                got = Some((status, body));
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let still_running = child.try_wait().unwrap().is_none();
    // Closing the pipe ends the run.
    stop.store(true, Ordering::Relaxed);
    feeder.join().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (status, body) = got.unwrap_or_else(|| panic!("no counters scraped; shrike: {stderr}"));
    assert!(still_running, "the run ended before it was scraped");
    assert!(status.starts_with("HTTP/1.0 200"), "{status}");
    assert!(body.contains("# TYPE shrike_flow_memuse gauge"), "{body}");
    assert!(
        body.contains("# TYPE shrike_app_layer_flow_dns_udp_total counter"),
        "{body}"
    );
    assert!(out.status.success(), "shrike failed: {stderr}");

    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let res = check.wait_with_output().unwrap();
    let problems = format!(
        "{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(
        res.status.success() && problems.trim().is_empty(),
        "promtool check metrics found {} problem(s):\n{problems}",
        problems.lines().count()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
