//! Live rule reload under traffic, for real: a private network namespace with a veth pair,
//! shrike capturing on one end with a small rule set, tcpreplay sending the sample capture
//! into the other end at a steady rate the whole time, and three reloads while it runs:
//!
//! 1. SIGUSR2 after the rule file became the full ET Open set plus a new rule (the old rule
//!    removed);
//! 2. `shrike ctl reload` after the file became ET Open plus a third rule;
//! 3. `shrike ctl reload` with a broken rule file: `NOK` with the reason, old rules kept.
//!
//! Checked: no packet dropped (kernel drops 0) and every packet sent counted; the removed rule
//! stops alerting and the added one starts at the swap; the broken reload changes nothing;
//! the reload counters. Prints how long the ET Open build took and the packet rate.
//! Needs root, `ip` and `tcpreplay`; skipped with a message otherwise.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
        let _ = Command::new("ip")
            .args(["netns", "exec", &name, "sysctl", "-qw"])
            .args([
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ])
            .status();
        run(&[
            "-n", &name, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
        ]);
        for dev in ["lo", "v0", "v1"] {
            run(&["-n", &name, "link", "set", dev, "up"]);
        }
        for dev in ["v0", "v1"] {
            run(&["-n", &name, "link", "set", dev, "mtu", "9000"]);
        }
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

/// The sensor; killed on drop unless stopped.
struct Sensor(Option<Child>);

impl Drop for Sensor {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Seconds since the epoch of an EVE timestamp (`2026-11-30T15:50:01.123456+0000`).
fn eve_secs(ts: &str) -> f64 {
    let num = |r: std::ops::Range<usize>| -> i64 { ts[r].parse().unwrap() };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    let (hh, mm) = (num(11..13), num(14..16));
    let ss: f64 = ts[17..26].parse().unwrap();
    let sign = if &ts[26..27] == "-" { -1 } else { 1 };
    let off = sign * (num(27..29) * 3600 + num(29..31) * 60);
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    (days * 86400 + hh * 3600 + mm * 60 - off) as f64 + ss
}

#[test]
fn eve_timestamps_parse() {
    assert_eq!(eve_secs("1970-01-01T00:00:10.500000+0000"), 10.5);
    assert_eq!(eve_secs("2026-11-30T15:50:01.000000+0100"), 1796050201.0);
}

const OLD: &str = concat!(
    "alert tcp any any -> any 443 (msg:\"RELOAD old rule\"; flow:to_server; sid:9100001; rev:1;)\n",
    "alert tcp any any -> any 443 (msg:\"RELOAD sets a flowbit\"; flow:to_server; flowbits:set,rl.seen; flowbits:noalert; sid:9100005; rev:1;)\n",
);
/// The flowbit check: only the old rules set `rl.seen`, so it fires after the reload only if
/// the bit set before it survived (under the new engine's id for that name).
const NEW: &str = concat!(
    "alert tcp any any -> any 80 (msg:\"RELOAD added by SIGUSR2\"; flow:to_server; sid:9100002; rev:1;)\n",
    "alert tcp any 443 -> any any (msg:\"RELOAD flowbit kept\"; flow:to_client; flowbits:isset,rl.seen; sid:9100004; rev:1;)\n",
);
const CTL: &str = "alert tcp any 80 -> any any (msg:\"RELOAD added by ctl\"; flow:to_client; sid:9100003; rev:1;)\n";

/// Replace the rule file's content in one step (readers never see half a file).
fn write_rules(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The binary under test: `SHRIKE_RELOAD_BIN` (e.g. target/release/shrike, for figures
/// that mean something) or the test build's.
fn bin() -> std::path::PathBuf {
    std::env::var_os("SHRIKE_RELOAD_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_shrike").into())
}

fn ctl(ns: &Netns, socket: &Path, cmd: &str) -> Output {
    ns.exec()
        .arg(bin())
        .args(["ctl", "--socket"])
        .arg(socket)
        .arg(cmd)
        .output()
        .unwrap()
}

/// Wait for a stderr line containing `needle`; returns it and when it was read.
fn wait_line(rx: &mpsc::Receiver<(f64, String)>, needle: &str, log: &mut String) -> (f64, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok((t, l)) = rx.recv_timeout(Duration::from_millis(100)) {
            log.push_str(&l);
            log.push('\n');
            if l.contains(needle) {
                return (t, l);
            }
        }
    }
    panic!("no line with {needle:?} in: {log}");
}

/// Start the sensor on `v0` in `ns` with `cfg`, logging to `out`: the sensor, its pid, its
/// stderr lines (with the time each was read) and the thread reading them.
#[allow(clippy::type_complexity)]
fn start_sensor(
    ns: &Netns,
    cfg: &Path,
    out: &Path,
) -> (
    Sensor,
    u32,
    mpsc::Receiver<(f64, String)>,
    std::thread::JoinHandle<()>,
) {
    let mut child = ns
        .exec()
        .arg(bin())
        .arg("-c")
        .arg(cfg)
        .args(["-i", "v0", "-l"])
        .arg(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for l in BufReader::new(err).lines() {
            let Ok(l) = l else { break };
            if tx.send((now_secs(), l)).is_err() {
                break;
            }
        }
    });
    (Sensor(Some(child)), pid, rx, reader)
}

fn alert_times(recs: &[serde_json::Value], sid: u64) -> Vec<f64> {
    recs.iter()
        .filter(|r| r["event_type"] == "alert" && r["alert"]["signature_id"] == sid)
        .map(|r| eve_secs(r["timestamp"].as_str().unwrap()))
        .collect()
}

/// The two scenarios share two CPUs: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn reload_full_et_open_under_traffic_drops_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    scenario("rlw", "workers", 1);
}

#[test]
fn reload_in_dispatch_runmode_with_two_workers_drops_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    scenario("rld", "autofp", 2);
}

/// Run the whole scenario (module doc) with `runmode` and `threads` workers.
fn scenario(tag: &str, runmode: &str, threads: usize) {
    let Some(et_dir) = shared().map(|s| s.join("corpus/rules/et-open")) else {
        eprintln!("skipped: ../shared not found");
        return;
    };
    let Some(ns) = Netns::new(tag) else { return };
    let dir = TempDir::new(tag);
    let mut et = String::new();
    let mut files: Vec<_> = std::fs::read_dir(&et_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rules"))
        .collect();
    files.sort();
    for f in &files {
        et.push_str(&String::from_utf8_lossy(&std::fs::read(f).unwrap()));
        et.push('\n');
    }
    let rules = dir.path().join("live.rules");
    write_rules(&rules, OLD);
    let socket = dir.path().join("ctl.sock");
    let cfg = dir.path().join("shrike.yaml");
    std::fs::write(
        &cfg,
        format!(
            "rules:\n  rule-files: [{}]\n  classification-file: {}\n\
             unix-command:\n  enabled: yes\n  filename: {}\n\
             interfaces:\n  - name: v0\n    runmode: {runmode}\n    threads: {threads}\n    af-packet:\n      block-size: 262144\n      block-count: 256\n      block-timeout: 50\n",
            rules.display(),
            et_dir.join("classification.config").display(),
            socket.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("log");
    std::fs::create_dir_all(&out).unwrap();
    let (mut sensor, pid, rx, reader) = start_sensor(&ns, &cfg, &out);
    let mut log = String::new();
    wait_line(&rx, "capturing on", &mut log);

    // Steady traffic for the whole test: the sample again and again at `pps`.
    let pps: u64 = std::env::var("SHRIKE_RELOAD_PPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let replay = {
        let (stop, sent) = (stop.clone(), sent.clone());
        let mut cmd = ns.exec();
        cmd.args(["tcpreplay", "-q", "-i", "v1", "--loop=4"])
            .arg(format!("--pps={pps}"))
            .arg(repo().join("samples/sample.pcap"));
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let r = cmd.output().unwrap();
                let text = String::from_utf8_lossy(&r.stdout).into_owned();
                let n: u64 = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("Successful packets:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or_else(|| panic!("tcpreplay: {text}{:?}", r.stderr));
                sent.fetch_add(n, Ordering::Relaxed);
            }
            t0.elapsed().as_secs_f64()
        })
    };
    std::thread::sleep(Duration::from_secs(2));

    // 1. SIGUSR2: ET Open plus NEW, OLD removed.
    write_rules(&rules, &format!("{et}\n{NEW}"));
    let t_sig = now_secs();
    let kill = Command::new("kill")
        .args(["-USR2", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let (t_done1, line) = wait_line(&rx, "shrike: reload: ", &mut log);
    let (t_done1, line) = if line.contains("loading rules") {
        wait_line(&rx, "rule(s) enforced", &mut log)
    } else {
        (t_done1, line)
    };
    let build_ms: u64 = line
        .split("built in ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    eprintln!(
        "SIGUSR2 reload of ET Open: {line}; signal to all workers switched {:.2} s",
        t_done1 - t_sig
    );
    std::thread::sleep(Duration::from_secs(2));

    // 2. ctl reload: ET Open plus CTL, NEW removed.
    write_rules(&rules, &format!("{et}\n{CTL}"));
    let t_ctl = now_secs();
    let o = ctl(&ns, &socket, "reload");
    let t_done2 = now_secs();
    assert!(o.status.success(), "{}{}", stderr(&o), log);
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"));
    eprintln!("ctl reload of ET Open: {:.2} s", t_done2 - t_ctl);
    std::thread::sleep(Duration::from_secs(2));

    // 3. A broken rule file: NOK with the reason, the running rules stay.
    write_rules(&rules, "alert tcp any any -> (this is not a rule\n");
    let t_bad = now_secs();
    let o = ctl(&ns, &socket, "reload");
    let bad = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!o.status.success(), "{bad}");
    assert!(bad.contains("running rules kept"), "{bad}");
    assert!(bad.contains("no rule could be enforced"), "{bad}");
    // A missing file is refused too.
    std::fs::remove_file(&rules).unwrap();
    let o = ctl(&ns, &socket, "reload");
    let missing = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        !o.status.success() && missing.contains("not readable"),
        "{missing}"
    );
    let o = ctl(&ns, &socket, "stats");
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    std::thread::sleep(Duration::from_secs(2));

    stop.store(true, Ordering::Relaxed);
    let replay_secs = replay.join().unwrap();
    let sent = sent.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(500));
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let mut child = sensor.0.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "shrike did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    while let Ok((_, l)) = rx.try_recv() {
        log.push_str(&l);
        log.push('\n');
    }
    assert!(status.success(), "{status:?}: {log}");
    eprintln!(
        "{runmode}, {threads} worker(s): sent {sent} packets in {replay_secs:.1} s ({:.0} packets/s); ET Open build {build_ms} ms",
        sent as f64 / replay_secs
    );

    let recs = eve_records(&out);
    let stats = recs
        .iter()
        .rev()
        .find(|r| r["event_type"] == "stats")
        .expect("stats record");
    let s = &stats["stats"];
    assert_eq!(s["capture"]["kernel_drops"], 0, "{log}");
    assert_eq!(s["capture"]["kernel_packets"], sent, "{log}");
    assert_eq!(s["decoder"]["pkts"], sent, "{log}");

    // The removed rule stops at the first swap, the added one starts there.
    let old = alert_times(&recs, 9100001);
    let new = alert_times(&recs, 9100002);
    let by_ctl = alert_times(&recs, 9100003);
    assert!(old.iter().any(|&t| t < t_sig), "the old rule fired first");
    assert!(
        old.iter().all(|&t| t < t_done1),
        "old rule after the swap: {old:?} vs {t_done1}"
    );
    assert!(new.iter().all(|&t| t > t_sig), "new rule before the reload");
    assert!(new.iter().any(|&t| t > t_done1), "new rule never fired");
    assert!(
        new.iter().all(|&t| t < t_done2),
        "removed by the ctl reload"
    );
    let kept = alert_times(&recs, 9100004);
    assert!(
        kept.iter().filter(|&&t| t > t_done1).count() > 10,
        "flowbits set before the reload are still set after it: {kept:?}"
    );
    assert!(by_ctl.iter().all(|&t| t > t_ctl));
    // The broken and missing files changed nothing: the ctl rule keeps firing after them.
    assert!(
        by_ctl.iter().filter(|&&t| t > t_bad + 0.5).count() > 10,
        "running rules kept after a failed reload"
    );
    assert!(
        log.contains("reload failed, keeping the running rules"),
        "{log}"
    );

    // Counters (ctl stats carry the shrike.* extras).
    let eng = &st["shrike"]["detect"]["engine"];
    assert_eq!(eng["reloads"], 2, "{st}");
    assert_eq!(eng["reload_failures"], 2, "{st}");
    let enforced: u64 = line
        .split("reload: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(enforced > 1000, "{line}");
    // The running rules are ET Open plus CTL: one rule fewer than ET Open plus NEW's two.
    let enforced = enforced - 1;
    assert_eq!(eng["rules_loaded"], enforced, "{st}");
    assert!(eng["last_reload"].as_u64().unwrap() as f64 >= t_ctl.floor());
    // EVE stats: Suricata's detect.engines.
    let e0 = &s["detect"]["engines"][0];
    assert_eq!(e0["rules_loaded"], enforced, "{stats}");
    assert_eq!(e0["rules_failed"], 0, "{stats}");
    assert!(e0["rules_skipped"].as_u64().unwrap() > 0, "{stats}");
    let last = eve_secs(e0["last_reload"].as_str().unwrap());
    assert!(last >= t_ctl.floor() && last <= t_done2 + 1.0, "{stats}");
    assert_valid_eve(&recs);
}

/// Hostile rule feeds reach a running sensor (issue 26): deep negation and nesting, a 1 MB
/// rule and 100,000 options, by SIGUSR2 and by `ctl reload`. A file holding only hostile
/// rules is refused with the reason (the running rules kept); one that mixes them with a good
/// rule loads the good one and names each hostile one; the sensor never stops, keeps alerting
/// with the rules in service and exits 0 at the end.
#[test]
fn hostile_rules_on_reload_leave_the_running_sensor_alone() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(ns) = Netns::new("rlh") else { return };
    let dir = TempDir::new("rlh");
    let deep =
        |open: &str, close: &str, n: usize| format!("{}1.2.3.4{}", open.repeat(n), close.repeat(n));
    // (what, rule text, the reason the sensor must give)
    let hostile: Vec<(&str, String, &str)> = vec![
        (
            "13,000 `!`",
            format!(
                "alert tcp {}1.2.3.4 any -> any any (sid:1;)",
                "!".repeat(13_001)
            ),
            "over the limit of 8191 bytes",
        ),
        (
            "16,000 nested `[`",
            format!(
                "alert tcp {} any -> any any (sid:2;)",
                deep("[", "]", 16_000)
            ),
            "over the limit of 8191 bytes",
        ),
        (
            "100 nested negated lists",
            format!("alert tcp {} any -> any any (sid:3;)", deep("[!", "]", 100)),
            "nested deeper than 64",
        ),
        (
            "a 1 MB rule",
            format!(
                "alert tcp any any -> any any (msg:\"{}\"; sid:4;)",
                "x".repeat(1 << 20)
            ),
            "over the limit of 8191 bytes",
        ),
        (
            "100,000 options",
            format!(
                "alert tcp any any -> any any ({} sid:5;)",
                "content:\"a\"; ".repeat(100_000)
            ),
            "over the limit of 8191 bytes",
        ),
    ];
    // Not IP-only rules (those match once per flow and direction): each replay alerts again.
    const FIRST: &str =
        "alert ip any any -> any any (msg:\"RELOAD first\"; dsize:>0; sid:9100101; rev:1;)\n";
    const SECOND: &str =
        "alert ip any any -> any any (msg:\"RELOAD second\"; dsize:>0; sid:9100102; rev:1;)\n";
    let rules = dir.path().join("live.rules");
    write_rules(&rules, FIRST);
    let socket = dir.path().join("ctl.sock");
    let cfg = dir.path().join("shrike.yaml");
    std::fs::write(
        &cfg,
        format!(
            "rules:\n  rule-files: [{}]\n\
             unix-command:\n  enabled: yes\n  filename: {}\n\
             interfaces:\n  - name: v0\n    runmode: workers\n    threads: 1\n",
            rules.display(),
            socket.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("log");
    std::fs::create_dir_all(&out).unwrap();
    let (mut sensor, pid, rx, reader) = start_sensor(&ns, &cfg, &out);
    let mut log = String::new();
    wait_line(&rx, "capturing on", &mut log);
    let replay = || {
        let o = ns
            .exec()
            .args(["tcpreplay", "-q", "-i", "v1", "--pps=2000"])
            .arg(repo().join("samples/sample.pcap"))
            .output()
            .unwrap();
        assert!(o.status.success(), "tcpreplay: {}", stderr(&o));
    };
    replay();

    // Each hostile rule alone: refused with its reason, by ctl and by SIGUSR2.
    for (i, (what, rule, reason)) in hostile.iter().enumerate() {
        write_rules(&rules, &format!("{rule}\n"));
        if i % 2 == 0 {
            let o = ctl(&ns, &socket, "reload");
            let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
            assert!(!o.status.success(), "{what}: {text}");
            assert!(text.contains("running rules kept"), "{what}: {text}");
            assert!(text.contains("no rule could be enforced"), "{what}: {text}");
            assert!(text.contains(reason), "{what}: {text}");
            // The sensor's own line for it: read now, so the next wait sees only its own.
            let (_, line) = wait_line(&rx, "reload failed, keeping the running rules", &mut log);
            assert!(line.contains(reason), "{what}: {line}");
        } else {
            let kill = Command::new("kill")
                .args(["-USR2", &pid.to_string()])
                .status()
                .unwrap();
            assert!(kill.success());
            let (_, line) = wait_line(&rx, "reload failed, keeping the running rules", &mut log);
            assert!(line.contains(reason), "{what}: {line}");
        }
        let o = ctl(&ns, &socket, "stats");
        assert!(
            o.status.success(),
            "the sensor after {what}: {}{log}",
            stderr(&o)
        );
    }
    let t_after = now_secs();
    replay();
    let t_mixed = now_secs();
    // All of them around a good rule: the good one is put in service, each hostile one named.
    let mut mixed = String::new();
    for (_, rule, _) in &hostile {
        mixed.push_str(rule);
        mixed.push('\n');
    }
    mixed.push_str(SECOND);
    write_rules(&rules, &mixed);
    let o = ctl(&ns, &socket, "reload");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{text}{log}");
    let (_, line) = wait_line(&rx, "rule(s) enforced", &mut log);
    assert!(line.contains(" 1 rule(s) enforced"), "{line}");
    std::thread::sleep(Duration::from_millis(300));
    replay();
    std::thread::sleep(Duration::from_millis(500));

    let o = ctl(&ns, &socket, "stats");
    let st: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let eng = &st["shrike"]["detect"]["engine"];
    assert_eq!(eng["reloads"], 1, "{st}");
    assert_eq!(eng["reload_failures"], hostile.len(), "{st}");
    assert_eq!(eng["rules_loaded"], 1, "{st}");
    assert_eq!(eng["rules_failed"], hostile.len(), "{st}");

    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let mut child = sensor.0.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "shrike did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    while let Ok((_, l)) = rx.try_recv() {
        log.push_str(&l);
        log.push('\n');
    }
    assert!(status.success(), "{status:?}: {log}");
    // Every hostile rule of the mixed file is named with its line and reason.
    for (i, (what, _, reason)) in hostile.iter().enumerate() {
        let at = format!("live.rules:{}", i + 1);
        assert!(
            log.lines().any(|l| l.contains(&at) && l.contains(reason)),
            "{what}: no `{at}` line with `{reason}` in {log}"
        );
    }
    let recs = eve_records(&out);
    let first = alert_times(&recs, 9100101);
    let second = alert_times(&recs, 9100102);
    assert!(!first.is_empty(), "the first rules alerted");
    assert!(
        first.iter().any(|&t| t > t_after && t < t_mixed),
        "the first rules kept running through the refused reloads: {first:?}"
    );
    assert!(
        !second.is_empty(),
        "the good rule of the mixed file alerted"
    );
    assert!(second.iter().all(|&t| t > t_mixed));
    assert_valid_eve(&recs);
}
