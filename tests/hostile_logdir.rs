//! A hostile log directory: whoever can write it (the `shrike` user in the documented layout,
//! while the sensor may start as root) plants symbolic links, hard links and FIFOs under the
//! names shrike writes, or points `-l` somewhere else. Nothing outside the directory may be
//! created, truncated or appended to.

mod hostile_util;

use hostile_util::TempDir;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RULE: &str = "alert ip any any -> any any (msg:\"every packet\"; sid:1;)\n";

fn pcap() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sample.pcap")
}

fn run(rules: &Path, logs: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shrike"))
        .arg("-S")
        .arg(rules)
        .arg("-r")
        .arg(pcap())
        .arg("-l")
        .arg(logs)
        .args(extra)
        .output()
        .unwrap()
}

/// Every file of `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap_or_default();
            (p, b)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn planted_links_in_the_log_dir_are_not_followed() {
    let d = TempDir::new("logdir-links");
    let rules = d.path().join("r.rules");
    std::fs::write(&rules, RULE).unwrap();
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for n in ["victim-eve", "victim-fast", "victim-stats", "victim-hard"] {
        std::fs::write(outside.join(n), format!("{n} precious\n")).unwrap();
    }
    let logs = d.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o750)).unwrap();
    symlink(outside.join("victim-eve"), logs.join("eve.json")).unwrap();
    symlink(outside.join("victim-fast"), logs.join("fast.log")).unwrap();
    symlink(outside.join("victim-stats"), logs.join("stats.log")).unwrap();
    // Dangling links: following them would create files outside.
    symlink(outside.join("created-eve.0"), logs.join("eve.0.json")).unwrap();
    symlink(
        outside.join("created-probe"),
        logs.join(".shrike-write-test-1"),
    )
    .unwrap();
    let before = snapshot(&outside);

    let o = run(&rules, &logs, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some(), "no crash: {err}");
    assert_eq!(snapshot(&outside), before, "nothing outside changed: {err}");
    assert!(err.contains("eve.json"), "the refused file is named: {err}");

    // fast.log truncation (`append: no`) must not follow the link either.
    let cfg = d.path().join("c.yaml");
    std::fs::write(&cfg, "output:\n  fast:\n    append: false\n").unwrap();
    std::fs::remove_file(logs.join("eve.json")).unwrap();
    let o = run(&rules, &logs, &["-c", cfg.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some(), "no crash: {err}");
    assert_eq!(snapshot(&outside), before, "nothing outside changed: {err}");
    assert!(
        std::fs::read(logs.join("eve.json")).unwrap().len() > 100,
        "EVE is written where it may be: {err}"
    );

    // A hard link to a file outside is refused as well.
    std::fs::remove_file(logs.join("eve.json")).unwrap();
    std::fs::hard_link(outside.join("victim-hard"), logs.join("eve.json")).unwrap();
    let o = run(&rules, &logs, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some(), "no crash: {err}");
    assert_eq!(snapshot(&outside), before, "nothing outside changed: {err}");
    assert!(err.contains("hard links"), "{err}");
}

#[test]
fn untrusted_log_dirs_are_refused() {
    let d = TempDir::new("logdir-trust");
    let rules = d.path().join("r.rules");
    std::fs::write(&rules, RULE).unwrap();
    // World-writable: refused (exit 1, nothing written), unless deliberately allowed.
    let ww = d.path().join("ww");
    std::fs::create_dir(&ww).unwrap();
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let o = run(&rules, &ww, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("world-writable"), "{err}");
    assert_eq!(
        std::fs::read_dir(&ww).unwrap().count(),
        0,
        "nothing created"
    );
    let o = run(&rules, &ww, &["--allow-insecure-files"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(ww.join("eve.json").exists());

    // A symbolic link (and a directory) owned by another user: refused, nothing created.
    // Needs root to hand the link to another user.
    // The effective uid, from /proc/self/status.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0");
    if !root {
        eprintln!("skipped: the other-owner cases need root");
        return;
    }
    let target = d.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = d.path().join("logs-link");
    symlink(&target, &link).unwrap();
    let st = Command::new("chown")
        .args(["-h", "65534:65534"])
        .arg(&link)
        .status()
        .unwrap();
    assert!(st.success());
    let o = run(&rules, &link, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("symbolic link owned by uid 65534"), "{err}");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing created"
    );
    let st = Command::new("chown")
        .arg("65534:65534")
        .arg(&target)
        .status()
        .unwrap();
    assert!(st.success());
    let o = run(&rules, &target, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("owned by uid 65534"), "{err}");
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "nothing created"
    );
}

#[test]
fn insecure_rule_and_config_files_are_refused() {
    let d = TempDir::new("insecure-files");
    let logs = d.path().join("logs");
    let rules = d.path().join("r.rules");
    std::fs::write(&rules, RULE).unwrap();
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o666)).unwrap();
    for args in [vec!["-T"], vec![]] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_shrike"));
        c.args(&args).arg("-S").arg(&rules);
        if args.is_empty() {
            c.arg("-r").arg(pcap()).arg("-l").arg(&logs);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("world-writable"), "{err}");
        assert!(err.contains("r.rules"), "{err}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .args(["-T", "--allow-insecure-files", "-S"])
        .arg(&rules)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A world-writable configuration.
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = d.path().join("c.yaml");
    std::fs::write(&cfg, "vars: {}\n").unwrap();
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o646)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .args(["-T", "-c"])
        .arg(&cfg)
        .arg("-S")
        .arg(&rules)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("c.yaml") && err.contains("world-writable"),
        "{err}"
    );
}
