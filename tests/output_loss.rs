//! Loss tests of the output path: SIGTERM during heavy output loses no record (records written
//! == records counted); SIGKILL loses at most about one flush interval of records.

mod common;

use common::*;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One UDP frame of `payload` bytes for flow `i`, as a pcap record at time `ts_us`.
fn udp_record(out: &mut Vec<u8>, i: u32, ts_us: u64, payload: usize) {
    let mut f = Vec::with_capacity(42 + payload);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let ip_len = (20 + 8 + payload) as u16;
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 1, 0, 0,
    ];
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[18] = (i >> 8) as u8;
    ip[19] = i as u8;
    let mut sum = 0u32;
    for c in ip.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&(1024 + (i % 1000) as u16).to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&((8 + payload) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend(std::iter::repeat_n(b'x', payload));
    out.extend_from_slice(&((ts_us / 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ts_us % 1_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(f.len() as u32).to_le_bytes());
    out.extend_from_slice(&(f.len() as u32).to_le_bytes());
    out.extend_from_slice(&f);
}

fn pcap_header() -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&0xa1b2c3d4u32.to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&[0u8; 8]);
    h.extend_from_slice(&65535u32.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    h
}

const EVERY_PACKET: &str =
    "alert udp any any -> any any (msg:\"every packet\"; dsize:>0; sid:1; rev:1;)\n";

fn eve_lines(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("eve.json"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn sigterm_during_heavy_output_loses_nothing() {
    let d = TempDir::new("sigterm");
    let pcap = d.path().join("flood.pcap");
    let mut data = pcap_header();
    for i in 0..600_000u32 {
        udp_record(&mut data, i, 1_700_000_000_000_000 + u64::from(i) * 10, 32);
    }
    std::fs::write(&pcap, &data).unwrap();
    let rules = d.path().join("every.rules");
    std::fs::write(&rules, EVERY_PACKET).unwrap();
    let out = d.path().join("out");
    let child = shrike()
        .args(["-v", "-k", "none", "-r"])
        .arg(&pcap)
        .arg("-S")
        .arg(&rules)
        .arg("-l")
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "SIGTERM is a clean stop: {err}");
    let lines = eve_lines(&out);
    for l in &lines {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
    }
    let counted: u64 = ["alert", "flow", "stats"]
        .iter()
        .map(|t| counter(&err, &format!("output.eve.records.{t}")).unwrap_or(0))
        .sum();
    let dropped: u64 = ["alert", "flow", "stats"]
        .iter()
        .map(|t| counter(&err, &format!("output.eve.dropped.{t}")).unwrap_or(0))
        .sum();
    eprintln!(
        "records counted {counted}, written {}, dropped {dropped}",
        lines.len()
    );
    assert!(counted > 1000, "heavy output was under way: {err}");
    assert_eq!(
        lines.len() as u64,
        counted,
        "records written == records counted"
    );
    assert_eq!(
        dropped, 0,
        "alerts block, and the shutdown drain blocks too: {err}"
    );
    let alerts = lines
        .iter()
        .filter(|l| l.contains("\"event_type\":\"alert\""))
        .count() as u64;
    assert_eq!(Some(alerts), counter(&err, "output.eve.records.alert"));
    assert!(err.contains("stopping on signal"), "{err}");
}

#[test]
fn sigkill_loses_at_most_about_one_flush_interval() {
    let d = TempDir::new("sigkill");
    let rules = d.path().join("every.rules");
    std::fs::write(&rules, EVERY_PACKET).unwrap();
    let out = d.path().join("out");
    // flush-interval 1 s (the default) and a buffer large enough that the timer, not a full
    // buffer, decides when records leave the worker.
    let mut child = shrike()
        .args([
            "-q",
            "-k",
            "none",
            "-r",
            "-",
            "--set",
            "output.eve.buffer-size=8000000",
            "-S",
        ])
        .arg(&rules)
        .arg("-l")
        .arg(&out)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pcap_header()).unwrap();
    // 1,000 packets per second of real time, with matching packet timestamps, for 3.5 s.
    let rate = 1000u64;
    let t0 = Instant::now();
    let base_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    let mut fed = 0u64;
    while t0.elapsed() < Duration::from_millis(3500) {
        let due = (t0.elapsed().as_micros() as u64 * rate) / 1_000_000;
        let mut chunk = Vec::new();
        while fed < due {
            udp_record(&mut chunk, fed as u32, base_us + fed * 1_000_000 / rate, 32);
            fed += 1;
        }
        stdin.write_all(&chunk).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let lines = eve_lines(&out);
    for l in &lines {
        serde_json::from_str::<serde_json::Value>(l)
            .unwrap_or_else(|e| panic!("only whole records are written ({e}): {l}"));
    }
    let alerts = lines
        .iter()
        .filter(|l| l.contains("\"event_type\":\"alert\""))
        .count() as u64;
    let lost = fed.saturating_sub(alerts);
    eprintln!("fed {fed} packets (one alert each), {alerts} alerts on disk, {lost} lost");
    assert!(
        alerts > 0,
        "records older than a flush interval were written"
    );
    // One flush interval (1 s) at 1,000 alerts/s, plus what sat in the pipe and in flight.
    assert!(lost <= rate + rate / 2, "lost {lost} > ~one flush interval");
}

/// A tmpfs mounted for the test, unmounted on drop (even when the test fails).
struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(at: &std::path::Path, opts: &str) -> Option<Mount> {
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

/// A full disk in file mode (issue 25): alerts block on the stalled writer; after
/// `stall-timeout` seconds without progress the run ends with exit 1 and a message naming
/// the path and the error, having written what fitted. Needs root to mount the tmpfs.
#[test]
fn full_disk_ends_a_file_run_with_exit_1_and_the_path() {
    let d = TempDir::new("fulldisk");
    let Some(m) = Mount::tmpfs(&d.path().join("full"), "size=2m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let pcap = d.path().join("flood.pcap");
    let mut data = pcap_header();
    // ~60 MB of alerts for a 2 MiB filesystem.
    for i in 0..150_000u32 {
        udp_record(&mut data, i, 1_700_000_000_000_000 + u64::from(i) * 10, 32);
    }
    std::fs::write(&pcap, &data).unwrap();
    let rules = d.path().join("every.rules");
    std::fs::write(&rules, EVERY_PACKET).unwrap();
    let stall_s = 3;
    let t0 = Instant::now();
    let o = shrike()
        .args(["-v", "-k", "none", "--runmode", "single", "-r"])
        .arg(&pcap)
        .arg("-S")
        .arg(&rules)
        .arg("-l")
        .arg(&m.0)
        .args(["--set", &format!("output.eve.stall-timeout={stall_s}")])
        .output()
        .unwrap();
    let took = t0.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let eve = m.0.join("eve.json");
    assert!(
        err.contains(&format!("{}: No space left on device", eve.display())),
        "names the path and the error: {err}"
    );
    assert!(err.contains("no progress"), "{err}");
    // Stall timeout, plus the bounded shutdown (10 s) and slack for a loaded machine.
    assert!(
        took < Duration::from_secs(stall_s + 10 + 20),
        "ended in {took:?}: {err}"
    );
    // What fitted was written: the file is close to the filesystem's size.
    let len = std::fs::metadata(&eve).map(|m| m.len()).unwrap_or(0);
    assert!(len > 1024 * 1024, "eve.json has {len} bytes");
}
