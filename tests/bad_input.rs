//! Bad input end to end: every error a user can cause says what is wrong, names the file
//! (and line/column or byte offset), and exits with the documented code (docs/errors.md):
//! 0 ok, 1 bad input or config, 2 usage. Truncated and corrupt captures (pcap and pcapng,
//! several kinds of damage), bad YAML, missing files, unwritable and full log directories.

mod hostile_util;

use hostile_util::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn shrike() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shrike"))
}

fn err_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run(args: &[&str], extra: &[&Path]) -> Output {
    let mut c = shrike();
    c.args(args);
    for p in extra {
        c.arg(p);
    }
    c.output().unwrap()
}

/// `shrike -r FILE -l DIR`.
fn read(file: &Path, logs: &Path) -> Output {
    shrike()
        .arg("-r")
        .arg(file)
        .arg("-l")
        .arg(logs)
        .output()
        .unwrap()
}

const T0: u64 = 1_700_000_000_000_000;

/// Ten UDP packets; returns the capture and the byte offset where each record starts.
fn ten_packets_pcap() -> (Pcap, Vec<usize>) {
    let mut cap = Pcap::new(1);
    let mut starts = Vec::new();
    for i in 0..10u64 {
        starts.push(cap.buf.len());
        cap.push(
            T0 + i,
            &udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000 + i as u16, 53, b"hello"),
        );
    }
    (cap, starts)
}

fn ten_packets_pcapng() -> (Pcapng, Vec<usize>) {
    let mut cap = Pcapng::new();
    let mut starts = Vec::new();
    for i in 0..10u64 {
        starts.push(cap.buf.len());
        cap.push(
            T0 + i,
            &udp4([10, 0, 0, 1], [10, 0, 0, 2], 1000 + i as u16, 53, b"hello"),
        );
    }
    (cap, starts)
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

/// Truncations: inside a record header and inside record data, pcap and pcapng. Every
/// complete record is processed, the warning names the file, exit 0.
#[test]
fn truncated_captures_keep_complete_records_and_exit_0() {
    let d = TempDir::new("trunc");
    let (pcap, ps) = ten_packets_pcap();
    let (ng, ns) = ten_packets_pcapng();
    let cases: Vec<(&str, Vec<u8>, u64)> = vec![
        ("mid-header.pcap", pcap.buf[..ps[7] + 9].to_vec(), 7),
        ("mid-data.pcap", pcap.buf[..ps[9] + 16 + 20].to_vec(), 9),
        ("mid-block-header.pcapng", ng.buf[..ns[4] + 6].to_vec(), 4),
        ("mid-block-data.pcapng", ng.buf[..ns[9] + 40].to_vec(), 9),
    ];
    for (name, data, complete) in cases {
        let f = write(d.path(), name, &data);
        let o = read(&f, d.path());
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("truncated"),
            "{name}: {err}"
        );
        assert_eq!(summary_packets(&err), Some(complete), "{name}: {err}");
    }
}

/// Corruptions: each is reported with the file name, the byte offset and the reason; the
/// records before it are processed; no panic. A damaged record inside the capture ends it
/// with exit 0, as Suricata's reader does; a file that cannot be read at all exits 1.
#[test]
fn corrupt_captures_name_file_offset_and_reason() {
    let d = TempDir::new("corrupt");
    let (pcap, ps) = ten_packets_pcap();
    let (ng, ns) = ten_packets_pcapng();
    let mut cases: Vec<(&str, Vec<u8>, Option<u64>, &str)> = Vec::new();
    // pcap: a record claiming 2 GiB.
    let mut b = pcap.buf.clone();
    b[ps[5] + 8..ps[5] + 12].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    cases.push(("huge-caplen.pcap", b, Some(5), "caplen"));
    // pcap: bad magic.
    let mut b = pcap.buf.clone();
    b[..4].copy_from_slice(b"\x00\x01\x02\x03");
    cases.push(("bad-magic.pcap", b, None, "not a readable pcap/pcapng file"));
    // pcapng: block length not a multiple of 4.
    let mut b = ng.buf.clone();
    b[ns[3] + 4..ns[3] + 8].copy_from_slice(&61u32.to_le_bytes());
    cases.push(("odd-length.pcapng", b, Some(3), "bad length"));
    // pcapng: trailing length differs from the leading one.
    let mut b = ng.buf.clone();
    let len = u32::from_le_bytes(b[ns[6] + 4..ns[6] + 8].try_into().unwrap()) as usize;
    b[ns[6] + len - 4..ns[6] + len].copy_from_slice(&(len as u32 + 4).to_le_bytes());
    cases.push(("trailer.pcapng", b, Some(6), "trailing length"));
    // pcapng: a packet's caplen larger than its block.
    let mut b = ng.buf.clone();
    b[ns[2] + 20..ns[2] + 24].copy_from_slice(&5000u32.to_le_bytes());
    cases.push(("caplen-block.pcapng", b, Some(2), "larger than its block"));
    // pcapng: bad byte-order magic in the section header.
    let mut b = ng.buf.clone();
    b[8..12].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    cases.push(("bom.pcapng", b, None, "byte-order magic"));
    for (name, data, before, reason) in cases {
        let f = write(d.path(), name, &data);
        let o = read(&f, d.path());
        let err = err_of(&o);
        assert!(!err.contains("panicked"), "{name}: {err}");
        let want = if before.is_some() { 0 } else { 1 };
        assert_eq!(o.status.code(), Some(want), "{name}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains("error") && l.contains(name))
            .unwrap_or_else(|| panic!("{name}: no error line naming the file: {err}"));
        assert!(line.contains(reason), "{name}: `{reason}` missing: {line}");
        if let Some(n) = before {
            assert!(
                line.contains("byte offset"),
                "{name}: offset missing: {line}"
            );
            assert_eq!(summary_packets(&err), Some(n), "{name}: {err}");
        }
    }
}

/// Random damage (bytes overwritten anywhere after the header, random truncation) never
/// crashes the binary: the exit code is 0 or 1 and the summary is printed.
#[test]
fn randomly_damaged_captures_never_crash() {
    let d = TempDir::new("random");
    let mut rng = Rng(0xbad_5eed);
    let (pcap, _) = ten_packets_pcap();
    let (ng, _) = ten_packets_pcapng();
    for i in 0..40 {
        let (mut b, ext) = if i % 2 == 0 {
            (pcap.buf.clone(), "pcap")
        } else {
            (ng.buf.clone(), "pcapng")
        };
        for _ in 0..1 + rng.below(6) {
            let at = 24 + rng.below((b.len() - 24) as u64) as usize;
            b[at] = rng.u8();
        }
        if rng.below(3) == 0 {
            let n = 24 + rng.below((b.len() - 24) as u64) as usize;
            b.truncate(n);
        }
        let f = write(d.path(), &format!("damaged{i}.{ext}"), &b);
        let o = read(&f, d.path());
        let err = err_of(&o);
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "damaged{i}: {:?} {err}",
            o.status
        );
        assert!(!err.contains("panicked"), "damaged{i}: {err}");
        assert!(summary_packets(&err).is_some(), "damaged{i}: {err}");
    }
}

#[test]
fn empty_and_header_only_captures() {
    let d = TempDir::new("empty");
    let empty = write(d.path(), "empty.pcap", b"");
    let o = read(&empty, d.path());
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("empty.pcap: empty capture file"), "{err}");
    let (pcap, ps) = ten_packets_pcap();
    let hdr = write(d.path(), "header-only.pcap", &pcap.buf[..ps[0]]);
    let o = read(&hdr, d.path());
    assert_eq!(o.status.code(), Some(0), "{}", err_of(&o));
    assert_eq!(summary_packets(&err_of(&o)), Some(0));
}

fn config_error(yaml: &str) -> String {
    let d = TempDir::new("cfg");
    let cfg = write(d.path(), "bad.yaml", yaml.as_bytes());
    let o = run(&["-T", "-c"], &[&cfg]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{yaml:?}: {err}");
    assert!(err.contains("bad.yaml"), "{err}");
    err
}

/// Wrong types, unknown keys and syntax errors in shrike's YAML name the key with line and
/// column (checked with `-T`, before any work).
#[test]
fn yaml_errors_name_line_and_column() {
    let cases = [
        // (yaml, text that must appear, line)
        ("detect:\n  flow:\n    max-flows: many\n", "max-flows", 3),
        ("stats:\n  interval: [1, 2]\n", "interval", 2),
        ("workers:\n  count: -3\n", "count", 2),
        ("workers:\n  runmode: sideways\n", "sideways", 2),
        (
            "detect:\n  decoder:\n    checksum-validation: maybe\n",
            "checksum-validation",
            3,
        ),
        ("detect:\n  flow:\n    max-flow: 10\n", "max-flow", 3),
        (
            "output:\n  eve:\n    filename: 3\n    colour: red\n",
            "colour",
            4,
        ),
        (
            "stats:\n  enabled: true\n interval: 5\n",
            "did not find expected key",
            3,
        ),
        ("stats: {enabled: true\n", "unclosed bracket", 1),
        ("stats: [1, 2]\n", "expected mapping", 1),
        (
            "detect:\n  flow:\n    max-flows: 1.5\n",
            "max-flows: 1.5",
            3,
        ),
    ];
    for (yaml, what, line) in cases {
        let err = config_error(yaml);
        assert!(err.contains(what), "{yaml:?}: `{what}` missing: {err}");
        assert!(
            err.contains(&format!("line {line}")),
            "{yaml:?}: line {line} missing: {err}"
        );
        assert!(err.contains("column"), "{yaml:?}: column missing: {err}");
    }
}

/// `--set` with a wrong type or an unknown key names the key; a `--set` without `=` is a
/// usage error (exit 2).
#[test]
fn set_errors() {
    let o = run(&["-T", "--set", "detect.flow.max-flows=lots"], &[]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--set detect.flow.max-flows"), "{err}");
    let o = run(&["-T", "--set", "detect.flow.nonsense=1"], &[]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("nonsense"), "{err}");
    let o = run(&["-T", "--set", "detect.flow.max-flows"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", err_of(&o));
}

/// Missing capture, config and rule files: exit 1, the message names the path.
#[test]
fn missing_files_are_named() {
    let d = TempDir::new("missing");
    let o = run(&["-r", "/nonexistent/x.pcap", "-l"], &[d.path()]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/nonexistent/x.pcap: no such file or directory"),
        "{err}"
    );
    let o = run(&["-T", "-c", "/nonexistent/shrike.yaml"], &[]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("/nonexistent/shrike.yaml"), "{err}");
    // A directory of no captures.
    let empty = d.path().join("nothing-here");
    std::fs::create_dir(&empty).unwrap();
    let o = run(&["-r"], &[&empty, Path::new("-l"), d.path()]);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("holds no capture files"), "{err}");
    // Rules: crate-level (see bad_input_rules.rs for the binary once -S loads rules).
    let set = shrike_detect_rules_missing();
    assert!(
        set.contains("/nonexistent/x.rules:0") && set.contains("missing rule file"),
        "{set}"
    );
}

/// The rule loader's message for a missing file (the binary reports the same once it loads
/// rules).
fn shrike_detect_rules_missing() -> String {
    use shrike_rules::{load_rules, LoadOptions, Vars};
    let set = load_rules(
        &["/nonexistent/x.rules"],
        &Vars::suricata_defaults(),
        &LoadOptions::default(),
    );
    assert_eq!(set.rules.len(), 0);
    set.errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Usage errors exit 2 with a message.
#[test]
fn usage_errors_exit_2_with_a_message() {
    for args in [
        vec!["--no-such-flag"],
        vec!["-r"],
        vec!["--runmode", "sideways", "-r", "x.pcap"],
        vec!["--workers", "0", "-r", "x.pcap"],
        vec![],
    ] {
        let o = run(&args, &[]);
        let err = err_of(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.len() > 10, "{args:?}: says what is wrong: {err}");
    }
}

/// A tmpfs mounted for the test, unmounted on drop (even when the test fails).
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, opts: &str) -> Option<Mount> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            // A log directory must not be world-writable (tmpfs roots default to 1777).
            .args(["-t", "tmpfs", "-o", &format!("{opts},mode=0755"), "tmpfs"])
            .arg(at)
            .status()
            .ok()?
            .success();
        ok.then(|| Mount(at.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/sample.pcap")
}

/// A read-only log directory: exit 1 before any work, naming the directory.
#[test]
fn read_only_log_dir_fails_before_work() {
    let d = TempDir::new("rofs");
    let Some(m) = Mount::tmpfs(&d.path().join("ro"), "ro,size=64k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let o = read(&sample(), &m.0);
    let err = err_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("log directory") && err.contains("not writable"),
        "{err}"
    );
    assert!(summary_packets(&err).is_none(), "no work done: {err}");
}

/// A log directory on a full filesystem: the run survives, every packet is processed, the
/// output stops at the filesystem's size, exit 0. The output crate counts the failed writes
/// (`OutputStats::write_errors`, `enospc`, `lost_bytes`); once the binary reports them in
/// `-v` (`output.write_errors`), they must be non-zero here.
#[test]
fn full_disk_is_survived_and_counted() {
    let d = TempDir::new("full");
    let Some(m) = Mount::tmpfs(&d.path().join("full"), "size=8k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let s = sample();
    let o = shrike()
        .args(["-v", "--runmode", "single"])
        .args(
            [&s, &s, &s]
                .iter()
                .flat_map(|p| [Path::new("-r"), p.as_path()]),
        )
        .arg("-l")
        .arg(&m.0)
        .output()
        .unwrap();
    let err = err_of(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(summary_packets(&err), Some(3 * 487), "{err}");
    let eve = std::fs::metadata(m.0.join("eve.json"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(
        eve > 0 && eve <= 8 * 1024,
        "eve.json {eve} bytes on an 8 KiB filesystem"
    );
    let reported = [
        "output.write_errors",
        "output.eve.write_errors",
        "output.enospc",
    ]
    .iter()
    .find_map(|k| counter(&err, k));
    match reported {
        Some(n) => assert!(n > 0, "write errors counted: {err}"),
        None => eprintln!("note: the binary does not report output write errors yet: {err}"),
    }
}
