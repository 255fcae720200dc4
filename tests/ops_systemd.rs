//! The systemd unit: `systemd/check-unit.sh` (systemd-analyze verify, and security exposure at
//! most 2.0) when systemd-analyze exists, and that the check can fail; the logrotate snippet.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn check_unit(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(root().join("systemd/check-unit.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_shrike")])
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shrike-ops-systemd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn unit_verifies_with_exposure_at_most_2() {
    if !have("systemd-analyze") {
        eprintln!("skipped: systemd-analyze not installed");
        return;
    }
    let o = check_unit(&[]);
    let t = text(&o);
    println!("{t}");
    assert!(o.status.success(), "{t}");
    let exposure: f64 = t
        .lines()
        .find_map(|l| l.strip_prefix("exposure shrike@.service: "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure in {t}"));
    assert!(exposure <= 2.0, "exposure {exposure}");
    assert!(t.contains("verify: with dpdk.conf OK"), "{t}");
}

#[test]
fn check_fails_on_bad_units_and_high_exposure() {
    if !have("systemd-analyze") {
        eprintln!("skipped: systemd-analyze not installed");
        return;
    }
    let o = check_unit(&["--max", "0.5"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("above 0.5"));

    let d = scratch("bad");
    let unit = std::fs::read_to_string(root().join("systemd/shrike@.service")).unwrap();
    // An unknown key is only a warning for systemd; the check must still fail.
    let bad = d.join("shrike@.service");
    std::fs::write(
        &bad,
        unit.replace("[Service]\n", "[Service]\nRestartt=always\n"),
    )
    .unwrap();
    let o = check_unit(&["--unit", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("Restartt"), "{}", text(&o));
    // A weaker unit (no sandboxing) is caught by the exposure limit.
    let weak: String = unit
        .lines()
        .filter(|l| {
            !l.starts_with("Protect")
                && !l.starts_with("Private")
                && !l.starts_with("SystemCall")
                && !l.starts_with("Restrict")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&bad, weak).unwrap();
    let o = check_unit(&["--unit", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unit_has_the_required_settings() {
    let unit = std::fs::read_to_string(root().join("systemd/shrike@.service")).unwrap();
    let has = |k: &str| unit.lines().any(|l| l.trim() == k);
    for k in [
        "Type=notify",
        "Restart=on-failure",
        "ExecReload=/bin/kill -USR2 $MAINPID",
        "User=shrike",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "ProtectHome=yes",
        "LimitMEMLOCK=infinity",
        "CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN CAP_IPC_LOCK CAP_SYS_NICE",
        "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN CAP_IPC_LOCK CAP_SYS_NICE",
        "RestrictAddressFamilies=AF_PACKET AF_UNIX AF_INET AF_INET6 AF_NETLINK",
        "ReadWritePaths=/var/log/shrike /run/shrike /var/cache/shrike",
        "CacheDirectory=shrike/mpm",
        "SystemCallFilter=@system-service",
    ] {
        assert!(has(k), "missing {k}");
    }
    assert!(unit.contains("ExecStart=/usr/bin/shrike -c /etc/shrike/%i.yaml"));
    assert!(unit.lines().any(|l| l.starts_with("WatchdogSec=")));
}

#[test]
fn logrotate_snippet() {
    let snippet = std::fs::read_to_string(root().join("systemd/shrike.logrotate")).unwrap();
    assert!(snippet.contains("--signal=HUP 'shrike@*.service'"));
    assert!(snippet.contains("/var/log/shrike/*/*.json"));
    if !have("logrotate") {
        eprintln!("skipped the logrotate -d run: logrotate not installed");
        return;
    }
    // Run it in debug mode (nothing rotated) on a copy aimed at a scratch directory, without
    // the user switch (the shrike user may not exist here).
    let d = scratch("logrotate");
    std::fs::create_dir_all(d.join("log/eth1")).unwrap();
    std::fs::write(d.join("log/eth1/eve.json"), "{}\n").unwrap();
    let conf = snippet
        .replace("/var/log/shrike", d.join("log").to_str().unwrap())
        .lines()
        .filter(|l| !l.trim_start().starts_with("su ") && !l.trim_start().starts_with("create "))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let conf_path = d.join("shrike.logrotate");
    std::fs::write(&conf_path, conf).unwrap();
    let o = Command::new("logrotate")
        .args(["-d", "-s"])
        .arg(d.join("state"))
        .arg(&conf_path)
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("eve.json"), "{t}");
    assert!(!t.to_lowercase().contains("error"), "{t}");
    std::fs::remove_dir_all(&d).unwrap();
    let _ = Path::new("/");
}

/// `shrike-nic-tune@.service` (issue 23): verifies (with the script's path pointed at the
/// repository's copy) and rates an exposure of at most 2.0, like the sensor unit.
#[test]
fn nic_tune_unit_verifies_with_exposure_at_most_2() {
    if !have("systemd-analyze") {
        eprintln!("skipped: systemd-analyze not installed");
        return;
    }
    let d = scratch("nic-tune");
    let unit = std::fs::read_to_string(root().join("systemd/shrike-nic-tune@.service")).unwrap();
    let script = root().join("scripts/nic-tune.sh");
    let unit = unit.replace(
        "/usr/share/shrike/scripts/nic-tune.sh",
        &script.display().to_string(),
    );
    let path = d.join("shrike-nic-tune@check.service");
    std::fs::write(&path, unit).unwrap();
    let o = Command::new("systemd-analyze")
        .args(["security", "--offline=yes"])
        .arg(&path)
        .output()
        .unwrap();
    let t = text(&o);
    let exposure: f64 = t
        .lines()
        .find_map(|l| l.split("Overall exposure level for ").nth(1))
        .and_then(|r| r.split(": ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure in {t}"));
    assert!(exposure <= 2.0, "exposure {exposure}\n{t}");
    let o = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    let t = text(&o);
    // The units it orders itself against are not installed here.
    let problems: Vec<&str> = t
        .lines()
        .filter(|l| !l.contains("Dependency Before=") && !l.trim().is_empty())
        .collect();
    assert!(problems.is_empty(), "{t}");
    let _ = std::fs::remove_dir_all(&d);
}
