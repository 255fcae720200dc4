//! The operations scripts: nic-tune.sh on a veth pair in a private network namespace (dry
//! run changes nothing, a real run does), the traffic-generator wrappers, and a short
//! rfc2544.sh run with shrike capturing (root only for the namespace tests).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A private network namespace with veth0 <-> veth1, removed on drop.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Option<Netns> {
        if !is_root() || !have("ip") {
            return None;
        }
        let name = format!("shrike-ops-{tag}-{}", std::process::id());
        let ok = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        };
        if !ok(&["netns", "add", &name]) {
            return None;
        }
        let ns = Netns(name);
        assert!(ok(&[
            "-n", &ns.0, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"
        ]));
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        Some(ns)
    }

    fn exec(&self, cmd: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.0])
            .args(cmd)
            .output()
            .unwrap()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn feature(ns: &Netns, name: &str) -> String {
    let o = ns.exec(&["ethtool", "-k", "veth0"]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_string))
        .unwrap_or_default()
}

#[test]
fn nic_tune_on_a_veth() {
    if !have("ethtool") {
        eprintln!("skipped: ethtool not installed");
        return;
    }
    let Some(ns) = Netns::new("nictune") else {
        eprintln!("skipped: needs root and ip netns");
        return;
    };
    let script = root().join("scripts/nic-tune.sh");
    let s = script.to_str().unwrap();
    assert!(feature(&ns, "tcp-segmentation-offload").starts_with("on"));

    let o = ns.exec(&[
        "bash",
        s,
        "veth0",
        "--workers",
        "2",
        "--cpus",
        "0-1",
        "--dry-run",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for want in [
        "+ ethtool -L veth0 rx 2",
        "+ ethtool -K veth0 tso off",
        "+ ethtool -K veth0 gso off",
        "+ ethtool -K veth0 rxvlan off",
        "+ ip link set veth0 up",
        "# RSS: not supported by veth0",
        "# IRQ affinity: no IRQs for veth0",
        "# dry run:",
    ] {
        assert!(t.contains(want), "missing {want:?} in\n{t}");
    }
    // Nothing changed.
    assert!(
        feature(&ns, "tcp-segmentation-offload").starts_with("on"),
        "dry run changed tso"
    );
    let link = ns.exec(&["ip", "link", "show", "veth0"]);
    assert!(!text(&link).contains(",UP"), "dry run brought the link up");

    // The real run applies what the veth supports.
    let o = ns.exec(&["bash", s, "veth0", "--workers", "2", "--cpus", "0-1"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("0 failed"), "{t}");
    for f in [
        "tcp-segmentation-offload",
        "generic-segmentation-offload",
        "rx-vlan-offload",
    ] {
        assert!(feature(&ns, f).starts_with("off"), "{f} still on");
    }
    let ch = text(&ns.exec(&["ethtool", "-l", "veth0"]));
    let current = ch.split("Current hardware settings:").nth(1).unwrap_or("");
    assert!(
        current
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["RX:", "2"]),
        "{ch}"
    );
    // A second run has nothing left to do for offloads.
    let t = text(&ns.exec(&["bash", s, "veth0", "--dry-run"]));
    assert!(t.contains("# offload tso: already off"), "{t}");

    let o = ns.exec(&["bash", s, "no-such-nic", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn generator_wrappers() {
    let tg = root().join("scripts/trafgen");
    // trafgen config for 128-byte frames: 128 - 4 (FCS) - 42 (headers) = 82 payload bytes.
    let o = Command::new("bash")
        .arg(tg.join("trafgen-udp.sh"))
        .args(["--print-config", "--size", "128", "--flows", "16"])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("fill(0xa5, 82)"), "{t}");
    assert!(t.contains("udp(sp=dinc(1024, 1039, 1), dp=9)"), "{t}");
    let o = Command::new("bash")
        .arg(tg.join("trafgen-udp.sh"))
        .args(["--print-config", "--size", "32"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));

    // pktgen: the dry run shows the /proc writes; pkt_size excludes the FCS.
    let o = Command::new("bash")
        .arg(tg.join("pktgen.sh"))
        .args([
            "eth9",
            "--size",
            "1518",
            "--count",
            "5",
            "--pps",
            "1000",
            "--dry-run",
        ])
        .output()
        .unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("echo \"pkt_size 1514\" > /proc/net/pktgen/eth9"),
        "{t}"
    );
    assert!(t.contains("echo \"ratep 1000\""), "{t}");
    assert!(t.contains("echo start > /proc/net/pktgen/pgctrl"), "{t}");
    if !Path::new("/proc/net/pktgen").exists() && !have("modprobe") {
        let o = Command::new("bash")
            .arg(tg.join("pktgen.sh"))
            .args(["lo", "--size", "64"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o).contains("pktgen module"), "{}", text(&o));
    }

    let o = Command::new("bash")
        .arg(tg.join("replay.sh"))
        .args(["lo", "/nonexistent.pcap"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));

    if have("python3") {
        let o = Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(tg.join("trex_udp.py"))
            .env(
                "PYTHONPYCACHEPREFIX",
                std::env::temp_dir().join("shrike-ops-pycache"),
            )
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        // mkpcap: every record is size - 4 bytes, the header is a little-endian pcap.
        for size in [64usize, 1518] {
            let out = std::env::temp_dir().join(format!(
                "shrike-ops-mkpcap-{size}-{}.pcap",
                std::process::id()
            ));
            let o = Command::new("python3")
                .arg(tg.join("mkpcap.py"))
                .args([
                    "--size",
                    &size.to_string(),
                    "--count",
                    "100",
                    "--flows",
                    "7",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", text(&o));
            let data = std::fs::read(&out).unwrap();
            assert_eq!(&data[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
            let mut off = 24;
            let mut n = 0;
            while off + 16 <= data.len() {
                let caplen =
                    u32::from_le_bytes(data[off + 8..off + 12].try_into().unwrap()) as usize;
                assert_eq!(caplen, size - 4);
                off += 16 + caplen;
                n += 1;
            }
            assert_eq!((n, off), (100, data.len()));
            // shrike decodes them all as UDP over IPv4.
            let log = out.with_extension("d");
            std::fs::create_dir_all(&log).unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
                .arg("-r")
                .arg(&out)
                .arg("-l")
                .arg(&log)
                .output()
                .unwrap();
            let t = text(&o);
            assert!(t.contains("shrike: 100 packets"), "{t}");
            assert!(t.contains(" 7 flows"), "{t}");
            std::fs::remove_dir_all(&log).unwrap();
            std::fs::remove_file(&out).unwrap();
        }
    }
}

#[test]
fn rfc2544_short_run_with_shrike() {
    if !is_root() || !have("tcpreplay") || !have("python3") {
        eprintln!("skipped: needs root, tcpreplay and python3");
        return;
    }
    let out = std::env::temp_dir().join(format!("shrike-ops-rfc2544-{}.md", std::process::id()));
    let o = Command::new("bash")
        .arg(root().join("scripts/rfc2544.sh"))
        .args(["--sizes", "64 1518", "--duration", "1", "--max-trials", "5"])
        .args(["--shrike", env!("CARGO_BIN_EXE_shrike")])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let t = text(&o);
    println!("{t}");
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("capture: shrike ("),
        "shrike live capture must do the counting: {t}"
    );
    let table = std::fs::read_to_string(&out).unwrap();
    for size in ["64", "1518"] {
        let row = table
            .lines()
            .find(|l| l.split('|').nth(1).map(str::trim) == Some(size))
            .unwrap_or_else(|| panic!("no row for {size}: {table}"));
        let pps: u64 = row.split('|').nth(2).unwrap().trim().parse().unwrap();
        assert!(pps > 0, "no loss-free rate at all for {size}: {row}");
    }
    // A faster sender, when netsniff-ng is installed.
    if have("trafgen") {
        let o = Command::new("bash")
            .arg(root().join("scripts/rfc2544.sh"))
            .args([
                "--generator",
                "trafgen",
                "--sizes",
                "128",
                "--duration",
                "1",
                "--max-trials",
                "3",
            ])
            .args(["--shrike", env!("CARGO_BIN_EXE_shrike")])
            .output()
            .unwrap();
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        assert!(t.contains("generator: trafgen"), "{t}");
        assert!(t.lines().any(|l| l.starts_with("|   128 |")), "{t}");
    }
    // The namespace is gone afterwards.
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !text(&ns).contains("shrike-rfc2544-"),
        "namespace left behind"
    );
    std::fs::remove_file(&out).unwrap();
}
