//! scripts/bench/live.sh, the live loss-free-rate benchmark: argument checking, its Python
//! helper (final counters, trafgen configs with per-pass addresses), and a short end-to-end run
//! (a 2-trial search with tiny durations) that is skipped without root, tc, a generator and
//! Suricata.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    repo().join("scripts/bench/live.sh")
}

fn helper() -> PathBuf {
    repo().join("scripts/bench/live/livebench.py")
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
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

fn out_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn bad_arguments_are_usage_errors_before_any_privilege_check() {
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "unknown argument --bogus"),
        (&["--threads", "0"], "--threads"),
        (&["--threads", "x"], "--threads"),
        (&["--engines", "shrike,snort"], "unknown engine 'snort'"),
        (&["--generator", "pktgen"], "--generator"),
        (&["--duration", "soon"], "--duration"),
        (&["--max-trials", "0"], "--max-trials"),
        (&["--rules"], "--rules needs a value"),
        (&["--rules", "/no/such/file.rules"], "cannot read rules"),
    ];
    for (args, want) in cases {
        let o = Command::new("bash")
            .arg(script())
            .args(*args)
            .output()
            .unwrap();
        let text = out_text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(want), "{args:?}: want {want:?} in {text}");
    }
    let o = Command::new("bash")
        .arg(script())
        .arg("--help")
        .output()
        .unwrap();
    let text = out_text(&o);
    assert!(o.status.success(), "{text}");
    for opt in ["--rules FILE", "--threads N", "--ring", "--loss PCT"] {
        assert!(text.contains(opt), "help lacks {opt}: {text}");
    }
}

fn run_helper(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(helper())
        .args(args)
        .output()
        .unwrap()
}

fn stats_line(pkts: u64, kp: u64, kd: u64) -> String {
    format!(
        "{{\"event_type\":\"stats\",\"stats\":{{\"decoder\":{{\"pkts\":{pkts}}},\"capture\":{{\"kernel_packets\":{kp},\"kernel_drops\":{kd}}},\"detect\":{{\"engines\":[{{\"id\":0,\"rules_loaded\":7,\"rules_failed\":0}}],\"alert\":3}}}}}}\n"
    )
}

#[test]
fn counters_come_from_the_last_stats_record_or_the_exit_line() {
    if !have("python3") {
        eprintln!("skipped: needs python3");
        return;
    }
    let d = TempDir::new("lb-counters");
    // An interval record, other events, then the final record written at shutdown.
    let mut eve = stats_line(0, 0, 0);
    eve.push_str("{\"event_type\":\"flow\",\"flow\":{}}\n");
    eve.push_str(&stats_line(900, 1000, 100));
    eve.push_str("{\"event_type\":\"flow\",\"flow\":{}}\n");
    std::fs::write(d.path().join("eve.json"), &eve).unwrap();
    let stdout = d.path().join("stdout");
    std::fs::write(&stdout, "").unwrap();
    let dir = d.path().to_str().unwrap();
    let o = run_helper(&["counters", "suricata", dir, stdout.to_str().unwrap()]);
    assert!(o.status.success(), "{}", out_text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "inspected=900 kernel_packets=1000 kernel_drops=100 rules=7 alerts=3 source=eve-stats"
    );

    // No stats record: Suricata's exit line, then shrike's summary line.
    std::fs::write(d.path().join("eve.json"), "").unwrap();
    std::fs::write(
        d.path().join("suricata.log"),
        "Notice: device: v0: packets: 5000, drops: 12 (0.24%), invalid chksum: 0\n\
         Info: detect: 42 signatures processed. 0 are IP-only rules\n",
    )
    .unwrap();
    let o = run_helper(&["counters", "suricata", dir, stdout.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "inspected=4988 kernel_packets=5000 kernel_drops=12 rules=42 alerts=- source=suricata-log"
    );
    std::fs::remove_file(d.path().join("suricata.log")).unwrap();
    std::fs::write(
        &stdout,
        "shrike: rules: 1 file(s), 10 rule(s): 8 loaded, 1 failed to load, 1 not enforced yet\n\
         shrike: capturing on v0\nshrike: 777 packets, 1000 bytes, 3 flows, 2 alerts, 0 drops\n",
    )
    .unwrap();
    let o = run_helper(&["counters", "shrike", dir, stdout.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "inspected=777 kernel_packets=- kernel_drops=- rules=8 alerts=2 source=shrike-summary"
    );

    // Nothing at all: a failure, not a zero.
    std::fs::write(&stdout, "").unwrap();
    let o = run_helper(&["counters", "shrike", dir, stdout.to_str().unwrap()]);
    assert!(!o.status.success());
}

/// An Ethernet/IPv4/TCP frame from `src` to `dst` (checksums left zero: the helper recomputes
/// them only through trafgen's functions).
fn tcp_frame(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&[
        0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff,
    ]);
    f.extend_from_slice(&[0, 0, 0, 0]);
    f
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut b = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for f in frames {
        for v in [0u32, 0, f.len() as u32, f.len() as u32] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(f);
    }
    std::fs::write(path, b).unwrap();
}

/// The config's elements for frame `n` (0-based).
fn config_frame(cfg: &str, n: usize) -> Vec<String> {
    let line = cfg
        .lines()
        .filter(|l| l.starts_with('{'))
        .nth(n)
        .unwrap_or_else(|| panic!("no frame {n} in {cfg}"));
    // Split on ", " outside parentheses.
    let inner = line.trim_start_matches("{ ").trim_end_matches(" }");
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

#[test]
fn trafgen_config_gives_private_hosts_new_addresses_each_pass() {
    if !have("python3") {
        eprintln!("skipped: needs python3");
        return;
    }
    let d = TempDir::new("lb-trafgen");
    let pcap = d.path().join("in.pcap");
    let cfg = d.path().join("out.cfg");
    let client = [10, 1, 16, 5];
    let server = [198, 51, 100, 7];
    write_pcap(
        &pcap,
        &[
            tcp_frame(client, server),
            tcp_frame(server, client),
            tcp_frame([198, 18, 0, 1], [198, 19, 0, 1]),
        ],
    );
    let o = run_helper(&[
        "trafgen-cfg",
        "--unique",
        pcap.to_str().unwrap(),
        cfg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", out_text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "unique=2/3");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let dinc = "dinc(0, 255, 1)";
    // Client to server: the source's second byte (offset 27) counts passes; the IPv4 header
    // checksum (24..26) and TCP checksum (50..52) are recomputed, one element each.
    let c2s = config_frame(&text, 0);
    assert_eq!(c2s.len(), 54 - 2, "{c2s:?}");
    assert_eq!(c2s[24], "csumip(14, 33)");
    assert_eq!(c2s[25], "0x0a");
    assert_eq!(c2s[26], dinc);
    assert_eq!(c2s[27], "0x10");
    assert_eq!(&c2s[29..33], ["0xc6", "0x33", "0x64", "0x07"]);
    assert_eq!(c2s[49], "csumtcp(14, 34)");
    // Server to client: the destination's second byte gets the same counter.
    let s2c = config_frame(&text, 1);
    assert_eq!(s2c[29], "0x0a");
    assert_eq!(s2c[30], dinc);
    assert_eq!(s2c.iter().filter(|e| *e == dinc).count(), 1);
    // No private host: the frame stays literal.
    let other = config_frame(&text, 2);
    assert_eq!(other.len(), 54);
    assert!(other.iter().all(|e| e.starts_with("0x")), "{other:?}");

    // Hosts that differ only in the second byte would merge: no rewriting at all.
    write_pcap(
        &pcap,
        &[
            tcp_frame([10, 1, 16, 5], server),
            tcp_frame([10, 2, 16, 5], server),
        ],
    );
    let o = run_helper(&[
        "trafgen-cfg",
        "--unique",
        pcap.to_str().unwrap(),
        cfg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", out_text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "unique=0/2");
    assert!(String::from_utf8_lossy(&o.stderr).contains("merge"));
    assert!(!std::fs::read_to_string(&cfg).unwrap().contains("dinc"));
    let o = run_helper(&["pcap-info", pcap.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "2 108 54 0");
}

#[test]
fn two_trial_search_against_suricata_cleans_up_its_namespace() {
    let gen_ok = have("cc") || have("trafgen") || have("tcpreplay");
    if !is_root() || !have("ip") || !gen_ok || !have("suricata") {
        eprintln!("skipped: needs root, ip, cc (or trafgen or tcpreplay), and suricata");
        return;
    }
    let d = TempDir::new("lb-smoke");
    let out = d.path().join("out");
    let o = Command::new("bash")
        .arg(script())
        .args([
            "--inputs",
            "udp64",
            "--duration",
            "0.3",
            "--max-trials",
            "2",
        ])
        .args([
            "--start-timeout",
            "60",
            "--shrike",
            env!("CARGO_BIN_EXE_shrike"),
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = out_text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("| input | engine"),
        "no table on stdout: {text}"
    );
    let md = std::fs::read_to_string(out.join("live.md")).unwrap();
    assert!(md.contains("loss-free pps"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("live.json")).unwrap()).unwrap();
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{json}");
    for (r, engine) in results.iter().zip(["shrike", "suricata"]) {
        assert_eq!(r["engine"], engine);
        assert_eq!(r["input"], "udp64");
        let trials = r["trials"].as_array().unwrap();
        assert!((1..=2).contains(&trials.len()), "{r}");
        // The first trial is at top speed; a second one only after a loss there.
        assert_eq!(trials[0]["asked_pps"], 0);
        assert_eq!(trials.len() == 2, trials[0]["ok"] == false, "{r}");
        for t in trials {
            let sent = t["sent"].as_u64().unwrap();
            let inspected = t["inspected"].as_u64().unwrap();
            assert!(sent >= 1000, "{t}");
            assert_eq!(t["loss"].as_u64().unwrap(), sent.saturating_sub(inspected));
            assert_eq!(t["ok"], t["loss"] == 0, "{t}");
        }
        let pps = r["pps"].as_u64().unwrap();
        match r["limit"].as_str().unwrap() {
            "generator" => assert!(pps > 0, "{r}"),
            "engine" => assert!(pps < r["top_speed_pps"].as_u64().unwrap(), "{r}"),
            other => panic!("limit {other}"),
        }
    }
    // Live shrike may not report a rule count at all (null); never a non-zero one here.
    assert_eq!(
        results[0]["rules_loaded"].as_u64().unwrap_or(0),
        0,
        "shrike ran with no rules"
    );
    assert_eq!(results[1]["rules_loaded"], 0, "Suricata ran with no rules");
    let ratio = &json["ratios"][0];
    assert_eq!(ratio["input"], "udp64");
    if results.iter().all(|r| r["limit"] == "generator") {
        assert_eq!(ratio["ratio"], "n/a", "{ratio}");
    }
    // The namespace is gone.
    let ns = json["meta"]["netns"].as_str().unwrap().to_string();
    assert!(ns.starts_with("shrike-livebench-"));
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&ns),
        "{ns} left behind"
    );
}

#[test]
fn frames_file_marks_the_counter_bytes_and_checksums() {
    if !have("python3") {
        eprintln!("skipped: needs python3");
        return;
    }
    let d = TempDir::new("lb-frames");
    let pcap = d.path().join("in.pcap");
    let bin = d.path().join("out.bin");
    write_pcap(
        &pcap,
        &[
            tcp_frame([10, 1, 16, 5], [198, 51, 100, 7]),
            tcp_frame([198, 18, 0, 1], [198, 19, 0, 1]),
        ],
    );
    let o = run_helper(&[
        "frames",
        "--unique",
        pcap.to_str().unwrap(),
        bin.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", out_text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "unique=1/2");
    let b = std::fs::read(&bin).unwrap();
    assert_eq!(&b[..8], b"SHRKPACE");
    assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 2);
    let u16s = |at: usize, n: usize| -> Vec<u16> {
        (0..n)
            .map(|i| u16::from_le_bytes([b[at + 2 * i], b[at + 2 * i + 1]]))
            .collect()
    };
    // Frame 0: 54 bytes, one counter (source byte 27 in the word at 26), not UDP, IPv4
    // checksum at 24, TCP checksum at 50.
    assert_eq!(u16s(12, 1), [54]);
    assert_eq!((b[14], b[15]), (1, 0));
    assert_eq!(
        u16s(16, 10),
        [27, 0xFFFF, 0xFFFF, 0xFFFF, 26, 0xFFFF, 0xFFFF, 0xFFFF, 24, 50]
    );
    let first = 12 + 4 + 20;
    assert_eq!(
        &b[first..first + 54],
        &tcp_frame([10, 1, 16, 5], [198, 51, 100, 7])[..]
    );
    // Frame 1: no private host, nothing to rewrite.
    let second = first + 54;
    assert_eq!(u16s(second, 1), [54]);
    assert_eq!(b[second + 2], 0);
    assert_eq!(u16s(second + 4, 10)[8..], [0xFFFF, 0xFFFF]);
    assert_eq!(b.len(), second + 24 + 54);
}

/// Captures `n` frames on `iface`, then checks every IPv4 header and TCP/UDP checksum and
/// prints "frames=N bad=B passes=P1,P2,..": the second address byte of the 10/8 hosts seen.
const CAPTURE_CHECK: &str = r#"
import socket, struct, sys, collections
iface, n, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
s.bind((iface, 0)); s.settimeout(15)
open(ready, "w").close()
frames = []
try:
    while len(frames) < n:
        frames.append(s.recv(65535))
except socket.timeout:
    pass
def ok(b):
    if len(b) % 2: b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16: t = (t & 0xffff) + (t >> 16)
    return t == 0xffff
bad, passes = 0, collections.Counter()
for f in frames:
    et = f[12:14]
    if et == b"\x08\x00":
        ip = f[14:]; ihl = (ip[0] & 15) * 4; tot = struct.unpack("!H", ip[2:4])[0]
        bad += not ok(ip[:ihl])
        seg, proto = ip[ihl:tot], ip[9]
        frag = struct.unpack("!H", ip[6:8])[0] & 0x3fff
        if proto in (6, 17) and not frag and not (proto == 17 and seg[6:8] == b"\0\0"):
            bad += not ok(ip[12:20] + struct.pack("!BBH", 0, proto, len(seg)) + seg)
        for a in (ip[12:16], ip[16:20]):
            if a[0] == 10: passes[a[1]] += 1
    elif et == b"\x86\xdd":
        ip = f[14:]; nh = ip[6]; seg = ip[40:40 + struct.unpack("!H", ip[4:6])[0]]
        if nh in (6, 17):
            bad += not ok(ip[8:40] + struct.pack("!IxxxB", len(seg), nh) + seg)
print("frames=%d bad=%d passes=%s" % (len(frames), bad, ",".join("%d" % k for k in sorted(passes))))
"#;

#[test]
fn pace_sends_each_pass_with_fresh_addresses_and_valid_checksums() {
    if !is_root() || !have("ip") || !have("cc") || !have("python3") {
        eprintln!("skipped: needs root, ip, cc and python3");
        return;
    }
    let d = TempDir::new("lb-pace");
    let pace = d.path().join("pace");
    let st = Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&pace)
        .arg(repo().join("scripts/bench/live/pace.c"))
        .status()
        .unwrap();
    assert!(st.success(), "pace.c does not build cleanly");
    // The sample: a gen-traffic mix of 487 frames with valid checksums, every one of them
    // to or from a 10/8 or fd00::/8 host.
    let bin = d.path().join("sample.bin");
    let o = run_helper(&[
        "frames",
        "--unique",
        repo().join("samples/sample.pcap").to_str().unwrap(),
        bin.to_str().unwrap(),
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "unique=487/487");

    let ns = format!("shrk-pace-{}", std::process::id());
    let ip = |args: &[&str]| {
        let ok = Command::new("ip").args(args).status().map(|s| s.success());
        assert!(matches!(ok, Ok(true)), "ip {args:?}");
    };
    ip(&["netns", "add", &ns]);
    struct Del(String);
    impl Drop for Del {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
        }
    }
    let _del = Del(ns.clone());
    ip(&[
        "-n", &ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1",
    ]);
    for dev in ["v0", "v1"] {
        ip(&["-n", &ns, "link", "set", dev, "mtu", "9000"]);
        ip(&["-n", &ns, "link", "set", dev, "up"]);
    }
    let _ = Command::new("ip")
        .args(["netns", "exec", &ns, "sysctl", "-qw"])
        .args([
            "net.ipv6.conf.all.disable_ipv6=1",
            "net.ipv6.conf.default.disable_ipv6=1",
        ])
        .status();
    let ready = d.path().join("ready");
    let want = 3 * 487;
    let cap = Command::new("ip")
        .args(["netns", "exec", &ns, "python3", "-c", CAPTURE_CHECK, "v0"])
        .arg(want.to_string())
        .arg(&ready)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !ready.exists() {
        assert!(t0.elapsed().as_secs() < 20, "capture did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Three passes at 5,000 frames/s (about 0.3 s).
    let o = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(&pace)
        .arg("v1")
        .arg(&bin)
        .arg(want.to_string())
        .arg("5000")
        .output()
        .unwrap();
    let text = out_text(&o);
    assert!(o.status.success(), "{text}");
    let secs: f64 = text
        .trim()
        .strip_prefix(&format!("sent {want} packets in "))
        .and_then(|r| r.strip_suffix(" seconds"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("pace said: {text}"));
    // Paced: 1,461 frames at 5,000/s take about 0.29 s, not the milliseconds of top speed.
    assert!((0.2..2.0).contains(&secs), "{secs} s");
    let got = cap.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&got.stdout).trim().to_string();
    // Every checksum still valid after the rewrites, and three distinct passes: the second
    // byte of every 10/8 host is the pass number.
    assert_eq!(report, format!("frames={want} bad=0 passes=0,1,2"));
}
