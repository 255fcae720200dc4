//! scripts/install.sh into a DESTDIR: the files, their modes and contents, config
//! preservation on reinstall, and a clean uninstall.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn install(args: &[&str]) -> (bool, String) {
    let o = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_shrike")])
        .args(args)
        .env_remove("DESTDIR")
        .output()
        .unwrap();
    let t = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), t)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shrike-ops-install-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn files_under(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn destdir_install_and_uninstall() {
    let d = scratch("usr");
    let dd = d.to_str().unwrap();
    let (ok, t) = install(&["--destdir", dd]);
    assert!(ok, "{t}");
    let expect = [
        ("usr/bin/shrike", 0o755),
        ("usr/lib/systemd/system/shrike@.service", 0o644),
        ("usr/lib/systemd/system/shrike-nic-tune@.service", 0o644),
        ("usr/lib/sysusers.d/shrike.conf", 0o644),
        ("usr/lib/tmpfiles.d/shrike.conf", 0o644),
        ("usr/share/shrike/shrike.yaml", 0o644),
        ("usr/share/shrike/examples/1g-afpacket.yaml", 0o644),
        ("usr/share/shrike/examples/25g-dpdk.yaml", 0o644),
        ("usr/share/shrike/systemd/dpdk.conf", 0o644),
        ("usr/share/shrike/scripts/nic-tune.sh", 0o755),
        ("usr/share/shrike/scripts/rfc2544.sh", 0o755),
        ("usr/share/shrike/scripts/trafgen/replay.sh", 0o755),
        ("usr/share/shrike/scripts/trafgen/mkpcap.py", 0o755),
        ("usr/share/shrike/scripts/trafgen/trex_udp.py", 0o644),
        ("usr/share/doc/shrike/operations.md", 0o644),
        ("etc/shrike/shrike.yaml", 0o640),
        ("etc/logrotate.d/shrike", 0o644),
    ];
    for (f, m) in expect {
        assert_eq!(mode(&d.join(f)), m, "{f}");
    }
    for dir in ["etc/shrike", "var/log/shrike", "var/lib/shrike"] {
        assert_eq!(mode(&d.join(dir)), 0o750, "{dir}");
    }
    let bin = std::fs::read(d.join("usr/bin/shrike")).unwrap();
    assert_eq!(bin, std::fs::read(env!("CARGO_BIN_EXE_shrike")).unwrap());
    let unit = std::fs::read_to_string(d.join("usr/lib/systemd/system/shrike@.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/bin/shrike -c /etc/shrike/%i.yaml"));

    // The admin's config survives a reinstall; the new default lands next to it.
    let conf = d.join("etc/shrike/shrike.yaml");
    std::fs::write(&conf, "stats:\n  interval: 30\n").unwrap();
    let (ok, t) = install(&["--destdir", dd]);
    assert!(ok, "{t}");
    assert!(t.contains("kept your"), "{t}");
    assert_eq!(
        std::fs::read_to_string(&conf).unwrap(),
        "stats:\n  interval: 30\n"
    );
    assert!(d.join("etc/shrike/shrike.yaml.new").exists());

    // Uninstall keeps configuration, logs and state; --purge removes everything.
    let (ok, t) = install(&["--destdir", dd, "--uninstall"]);
    assert!(ok, "{t}");
    assert!(!d.join("usr/bin/shrike").exists());
    assert!(!d.join("usr/share/shrike").exists());
    assert!(!d.join("etc/logrotate.d/shrike").exists());
    assert!(conf.exists());
    assert!(d.join("var/log/shrike").is_dir());
    let (ok, t) = install(&["--destdir", dd, "--uninstall", "--purge"]);
    assert!(ok, "{t}");
    let left = files_under(&d);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        0,
        "empty directories left"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn prefix_rewrites_the_unit() {
    let d = scratch("local");
    let dd = d.to_str().unwrap();
    let (ok, t) = install(&["--destdir", dd, "--prefix", "/usr/local"]);
    assert!(ok, "{t}");
    let unit =
        std::fs::read_to_string(d.join("usr/local/lib/systemd/system/shrike@.service")).unwrap();
    assert!(
        unit.contains("ExecStart=/usr/local/bin/shrike -c /etc/shrike/%i.yaml"),
        "{unit}"
    );
    assert!(
        unit.contains("ExecStartPre=/usr/local/bin/shrike -T"),
        "{unit}"
    );
    assert!(d.join("usr/local/bin/shrike").exists());
    let tune =
        std::fs::read_to_string(d.join("usr/local/lib/systemd/system/shrike-nic-tune@.service"))
            .unwrap();
    assert!(
        tune.contains("ExecStart=/usr/local/share/shrike/scripts/nic-tune.sh %i"),
        "{tune}"
    );
    let (ok, t) = install(&[
        "--destdir",
        dd,
        "--prefix",
        "/usr/local",
        "--uninstall",
        "--purge",
    ]);
    assert!(ok, "{t}");
    assert!(files_under(&d).is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn usage_errors() {
    let (ok, t) = install(&["--bogus"]);
    assert!(!ok && t.contains("unknown argument"), "{t}");
    let (ok, t) = install(&["--prefix", "relative", "--destdir", "/nonexistent-shrike"]);
    assert!(!ok && t.contains("absolute"), "{t}");
}
