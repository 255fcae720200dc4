//! Live capture end to end, for real: each test creates its own network namespace with a veth
//! pair, runs `shrike -i` inside it, replays a capture into the other end with tcpreplay, stops
//! shrike with SIGTERM and checks what it saw. Traffic never leaves the namespace, and the
//! namespace is removed even when the test fails. Needs root, `ip` and `tcpreplay` (installed by
//! scripts/setup.sh); skipped with a message otherwise.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Option<Netns> {
        let is_root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        let have = |c: &str| {
            Command::new("sh")
                .args(["-c", &format!("command -v {c}")])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !is_root || !have("ip") || !have("tcpreplay") {
            eprintln!("skipped: needs root, ip and tcpreplay");
            return None;
        }
        let name = format!("shrk-{tag}-{}", std::process::id());
        let ns = Netns(name.clone());
        let run = |args: &[&str]| {
            let ok = Command::new("ip").args(args).status().map(|s| s.success());
            assert!(matches!(ok, Ok(true)), "ip {args:?} failed");
        };
        run(&["netns", "add", &name]);
        run(&[
            "-n", &name, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
        ]);
        for dev in ["lo", "v0", "v1"] {
            run(&["-n", &name, "link", "set", dev, "up"]);
        }
        // The sample has a few 1534-byte frames; keep the replay lossless.
        for dev in ["v0", "v1"] {
            run(&["-n", &name, "link", "set", dev, "mtu", "9000"]);
        }
        let _ = Command::new("ip")
            .args([
                "netns",
                "exec",
                &name,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
            ])
            .status();
        Some(ns)
    }

    fn exec(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Run shrike on v0 with `args`, replay `pcap` into v1 at `pps` (0 = top speed), stop it.
/// Returns (packets tcpreplay sent, shrike's stderr, EVE records).
fn capture(
    ns: &Netns,
    out: &Path,
    args: &[&str],
    pcap: &Path,
    pps: u32,
) -> (u64, String, Vec<serde_json::Value>) {
    let mut child = ns
        .exec()
        .arg(env!("CARGO_BIN_EXE_shrike"))
        .args(["-i", "v0", "-l"])
        .arg(out)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("shrike did not start: {first}");
        }
        first.push_str(&line);
        if line.contains("capturing on") {
            break;
        }
    }
    let mut replay = ns.exec();
    replay.args(["tcpreplay", "-i", "v1"]);
    if pps == 0 {
        replay.arg("--topspeed");
    } else {
        replay.arg(format!("--pps={pps}"));
    }
    let r = replay.arg(pcap).output().unwrap();
    let text = String::from_utf8_lossy(&r.stdout);
    let sent: u64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Successful packets:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "tcpreplay output: {text}{}",
                String::from_utf8_lossy(&r.stderr)
            )
        });
    std::thread::sleep(Duration::from_millis(300));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "shrike did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut rest = String::new();
    for l in err.lines() {
        rest.push_str(&l.unwrap());
        rest.push('\n');
    }
    assert!(status.success(), "exit {status:?}: {rest}");
    (sent, first + &rest, eve_records(out))
}

fn last_stats(recs: &[serde_json::Value]) -> serde_json::Value {
    recs.iter()
        .rev()
        .find(|r| r["event_type"] == "stats")
        .cloned()
        .expect("a stats record")
}

/// Both directions of every flow were seen by one worker: no 5-tuple has two flow records,
/// and bidirectional conversations show packets both ways.
fn assert_flows_whole(recs: &[serde_json::Value]) -> usize {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut both_ways = 0;
    for r in recs.iter().filter(|r| r["event_type"] == "flow") {
        let (a, b) = (
            format!("{}:{}", r["src_ip"], r["src_port"]),
            format!("{}:{}", r["dest_ip"], r["dest_port"]),
        );
        let key = if a < b {
            format!("{a} {b} {}", r["proto"])
        } else {
            format!("{b} {a} {}", r["proto"])
        };
        *seen.entry(key).or_default() += 1;
        if r["flow"]["pkts_toclient"].as_u64().unwrap_or(0) > 0 {
            both_ways += 1;
        }
    }
    let split: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(split.is_empty(), "flows split across workers: {split:?}");
    both_ways
}

fn sample() -> std::path::PathBuf {
    repo().join("samples/sample.pcap")
}

#[test]
fn workers_runmode_hash_fanout_exact_count_and_whole_flows() {
    let Some(ns) = Netns::new("wk") else { return };
    let out = TempDir::new("live-wk");
    let rules = repo().join("samples/sample.rules");
    let rules = rules.to_string_lossy();
    let (sent, err, recs) = capture(
        &ns,
        out.path(),
        &["--workers", "2", "-S", &rules],
        &sample(),
        5000,
    );
    assert_eq!(sent, 487);
    // The sample rules fire live exactly as on the file (12 alerts, as Suricata's).
    assert_eq!(count_type(&recs, "alert"), 12, "{err}");
    let st = last_stats(&recs);
    assert_eq!(st["stats"]["decoder"]["pkts"], sent, "{err}");
    assert_eq!(st["stats"]["capture"]["kernel_packets"], sent, "{err}");
    assert_eq!(st["stats"]["capture"]["kernel_drops"], 0, "{err}");
    assert!(assert_flows_whole(&recs) > 10);
    assert_eq!(count_type(&recs, "flow"), 23);
    assert_valid_eve(&recs);
}

#[test]
fn dispatch_runmode_exact_count_and_whole_flows() {
    let Some(ns) = Netns::new("dp") else { return };
    let out = TempDir::new("live-dp");
    let (sent, err, recs) = capture(
        &ns,
        out.path(),
        &["--workers", "3", "--runmode", "autofp"],
        &sample(),
        5000,
    );
    let st = last_stats(&recs);
    assert_eq!(st["stats"]["decoder"]["pkts"], sent, "{err}");
    assert!(assert_flows_whole(&recs) > 10);
    assert_eq!(count_type(&recs, "flow"), 23);
}

#[test]
fn qm_fanout_from_config_keeps_flows_whole() {
    let Some(ns) = Netns::new("qm") else { return };
    let out = TempDir::new("live-qm");
    let cfg = out.path().join("shrike.yaml");
    std::fs::write(
        &cfg,
        "interfaces:\n  - name: v0\n    capture: af-packet\n    runmode: workers\n    threads: 2\n    af-packet:\n      cluster-type: cluster_qm\n      cluster-id: 77\n",
    )
    .unwrap();
    let cfg_s = cfg.to_string_lossy().into_owned();
    let (sent, err, recs) = capture(&ns, out.path(), &["-c", &cfg_s], &sample(), 5000);
    let st = last_stats(&recs);
    assert_eq!(st["stats"]["decoder"]["pkts"], sent, "{err}");
    assert!(assert_flows_whole(&recs) > 10);
}

#[test]
fn tiny_ring_at_top_speed_accounts_for_every_packet() {
    let Some(ns) = Netns::new("drop") else { return };
    let out = TempDir::new("live-drop");
    // A long capture: the sample 20 times over, into a 2-block ring.
    let big = out.path().join("big.pcap");
    let data = std::fs::read(sample()).unwrap();
    let mut b = data.clone();
    for _ in 0..19 {
        b.extend_from_slice(&data[24..]);
    }
    std::fs::write(&big, &b).unwrap();
    let cfg = out.path().join("shrike.yaml");
    std::fs::write(
        &cfg,
        "interfaces:\n  - name: v0\n    threads: 1\n    af-packet:\n      block-size: 16384\n      block-count: 2\n      block-timeout: 1\n",
    )
    .unwrap();
    let cfg_s = cfg.to_string_lossy().into_owned();
    let (sent, err, recs) = capture(&ns, out.path(), &["-c", &cfg_s], &big, 0);
    let st = last_stats(&recs);
    let pkts = st["stats"]["decoder"]["pkts"].as_u64().unwrap();
    let drops = st["stats"]["capture"]["kernel_drops"].as_u64().unwrap();
    eprintln!("sent {sent}, inspected {pkts}, kernel drops {drops}");
    assert_eq!(
        pkts + drops,
        sent,
        "every packet inspected or counted as dropped: {err}"
    );
    assert_eq!(st["stats"]["capture"]["kernel_packets"], sent);
}

#[test]
fn missing_interface_is_a_clear_error_at_start() {
    // A private log directory (a world-writable one such as /tmp is refused).
    let dir = std::env::temp_dir().join(format!("shrike-live-noif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = shrike()
        .args(["-i", "no-such-if0", "-l"])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no-such-if0"), "{err}");
}
