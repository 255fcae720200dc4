//! ENOSPC on a real filesystem: a 256 KiB tmpfs is filled, the writer counts the errors and
//! retries, the worker keeps running (flows dropped by policy), and once space is freed writing
//! resumes with nothing lost that was handed over. Needs root to mount; skipped otherwise.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use shrike_output::config::{EveConfig, Layout};
use shrike_output::{EvePipeline, EventKind};

/// Unmounts on drop, even when the test fails.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn mount_tmpfs(dir: &Path) -> Option<Mount> {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(dir)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        Some(Mount(dir.to_path_buf()))
    } else {
        eprintln!("SKIP: cannot mount tmpfs (needs root)");
        None
    }
}

#[test]
fn enospc_is_counted_survived_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_m) = mount_tmpfs(dir.path()) else {
        return;
    };
    // Fill most of the space with a file we can delete later.
    let filler = dir.path().join("filler");
    std::fs::write(&filler, vec![b'x'; 200 * 1024]).unwrap();

    let cfg = EveConfig {
        layout: Layout::PerWorker,
        buffer_size: 4096,
        pool_size: 4,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    let mut seq = 0u64;
    let mut write = |out: &mut shrike_output::EveOutput, n: u64| {
        for _ in 0..n {
            if let Some(mut r) = out.record(EventKind::Flow) {
                r.start_object()
                    .set_u64("seq", seq)
                    .set_str("pad", "................................................")
                    .close();
                r.commit().unwrap();
            }
            seq += 1;
        }
    };
    // ~100 KiB of records into ~56 KiB of space.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pipe.stats().enospc == 0 {
        assert!(Instant::now() < deadline, "no ENOSPC seen");
        write(&mut out, 500);
        out.flush();
        std::thread::sleep(Duration::from_millis(5));
    }
    let during = pipe.stats();
    assert!(during.write_errors >= during.enospc && during.enospc > 0);
    // The worker is not stuck: flows are dropped while the pool is empty.
    let t0 = Instant::now();
    write(&mut out, 2_000);
    assert!(t0.elapsed() < Duration::from_secs(1));
    assert!(out.stats().dropped_of(EventKind::Flow) > 0);

    // Free space: the writer resumes on its next retry.
    std::fs::remove_file(&filler).unwrap();
    write(&mut out, 1_000);
    let st = out.close();
    let ws = pipe.shutdown(Duration::from_secs(10));
    assert_eq!(ws.lost_bytes, 0, "nothing handed over may be lost");

    let text = std::fs::read_to_string(dir.path().join("eve.0.json")).unwrap();
    assert!(text.ends_with('\n'));
    let mut seen = HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line ({e}): {line:?}"));
        assert!(seen.insert(v["seq"].as_u64().unwrap()), "duplicate");
    }
    assert_eq!(seen.len() as u64, st.records_of(EventKind::Flow));
    assert_eq!(ws.bytes, text.len() as u64);
}

fn assert_whole_lines(path: &Path) -> usize {
    let text = std::fs::read(path).unwrap();
    assert_eq!(text.last(), Some(&b'\n'), "ends with a whole line");
    let mut n = 0;
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("half record ({e}): {}", String::from_utf8_lossy(line)));
        n += 1;
    }
    n
}

/// A write cut short by the full disk leaves the start of a record in the file; when the
/// stalled writer gives that buffer up, the start is taken back (truncated), so the file
/// holds whole lines only, while stalled, after space returns and at exit.
#[test]
fn a_record_cut_by_a_full_disk_is_taken_back() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_m) = mount_tmpfs(dir.path()) else {
        return;
    };
    let filler = dir.path().join("filler");
    std::fs::write(&filler, vec![b'x'; 200 * 1024]).unwrap();
    let cfg = EveConfig {
        layout: Layout::PerWorker,
        buffer_size: 4096,
        pool_size: 4,
        stall_timeout: 1,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    let mut seq = 0u64;
    let mut write = |out: &mut shrike_output::EveOutput, n: u64| {
        for _ in 0..n {
            if let Some(mut r) = out.record(EventKind::Flow) {
                r.start_object()
                    .set_u64("seq", seq)
                    .set_str("pad", "................................................")
                    .close();
                r.commit().unwrap();
            }
            seq += 1;
        }
    };
    let eve = dir.path().join("eve.0.json");
    // Fill the disk until the writer stalls and has given up buffers cut short.
    let deadline = Instant::now() + Duration::from_secs(20);
    while pipe.stats().truncated_bytes == 0 {
        assert!(
            Instant::now() < deadline,
            "no record cut and taken back: {:?}",
            pipe.stats()
        );
        write(&mut out, 200);
        out.flush();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(pipe.stalled().is_some());
    assert!(assert_whole_lines(&eve) > 0);
    // Space returns: writing resumes after whole lines.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while pipe.stalled().is_some() {
        assert!(Instant::now() < deadline, "the writer did not recover");
        write(&mut out, 50);
        out.flush();
        std::thread::sleep(Duration::from_millis(20));
    }
    write(&mut out, 500);
    out.close();
    let ws = pipe.shutdown(Duration::from_secs(10));
    assert!(ws.truncated_bytes > 0 && ws.lost_bytes >= ws.truncated_bytes);
    let len = std::fs::metadata(&eve).unwrap().len();
    assert_eq!(ws.bytes - ws.truncated_bytes, len, "{ws:?}");
    assert_whole_lines(&eve);
}

/// At exit with the disk still full, the buffers given up leave no half record behind.
#[test]
fn exit_on_a_full_disk_leaves_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_m) = mount_tmpfs(dir.path()) else {
        return;
    };
    std::fs::write(dir.path().join("filler"), vec![b'x'; 200 * 1024]).unwrap();
    let cfg = EveConfig {
        layout: Layout::PerWorker,
        buffer_size: 4096,
        pool_size: 4,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    let mut seq = 0u64;
    let deadline = Instant::now() + Duration::from_secs(20);
    while pipe.stats().enospc == 0 {
        assert!(Instant::now() < deadline, "no ENOSPC seen");
        for _ in 0..200 {
            if let Some(mut r) = out.record(EventKind::Flow) {
                r.start_object()
                    .set_u64("seq", seq)
                    .set_str("pad", "................................................")
                    .close();
                r.commit().unwrap();
            }
            seq += 1;
        }
        out.flush();
        std::thread::sleep(Duration::from_millis(5));
    }
    out.close();
    // The writer is still retrying (no stall timeout reached): shutdown gives up.
    let ws = pipe.shutdown(Duration::from_millis(300));
    assert!(ws.enospc > 0 && ws.lost_bytes > 0, "{ws:?}");
    let eve = dir.path().join("eve.0.json");
    assert_whole_lines(&eve);
    let len = std::fs::metadata(&eve).unwrap().len();
    assert_eq!(ws.bytes - ws.truncated_bytes, len, "{ws:?}");
}
