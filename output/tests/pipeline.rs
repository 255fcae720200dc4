//! The asynchronous pipeline: layouts, rotation, reopen, stalls with drop/block policies,
//! retried errors, unix sockets.

use std::collections::HashSet;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use shrike_output::config::{EveConfig, FileType, Layout, OverloadPolicy};
use shrike_output::pipeline::policies;
use shrike_output::sinks::{Partial, Sink};
use shrike_output::{EveOutput, EvePipeline, EventKind, OutputStats};

fn write_n(out: &mut EveOutput, wid: u64, kind: EventKind, n: u64, base: u64) -> u64 {
    let mut ok = 0;
    for seq in base..base + n {
        if let Some(mut r) = out.record(kind) {
            r.start_object()
                .set_u64("worker", wid)
                .set_u64("seq", seq)
                .set_str("pad", "0123456789abcdef0123456789abcdef")
                .close();
            r.commit().unwrap();
            ok += 1;
        }
    }
    ok
}

fn parse_all(text: &str, seen: &mut HashSet<(u64, u64)>) {
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line ({e}): {line:?}"));
        let k = (v["worker"].as_u64().unwrap(), v["seq"].as_u64().unwrap());
        assert!(seen.insert(k), "duplicate {k:?}");
    }
}

fn read_dir_all(dir: &Path) -> (HashSet<(u64, u64)>, usize) {
    let mut seen = HashSet::new();
    let mut files = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "{p:?} ends mid-record"
        );
        parse_all(&text, &mut seen);
        files += 1;
    }
    (seen, files)
}

#[test]
fn shared_layout_four_workers() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EveConfig {
        buffer_size: 8192,
        ..EveConfig::default()
    };
    let (pipe, outs) = EvePipeline::start(&cfg, dir.path(), 4).unwrap();
    let per = 20_000;
    std::thread::scope(|s| {
        for (wid, mut out) in outs.into_iter().enumerate() {
            s.spawn(move || {
                // Alerts block when stalled, so nothing may be lost.
                assert_eq!(write_n(&mut out, wid as u64, EventKind::Alert, per, 0), per);
                let st = out.close();
                assert_eq!(st.records_of(EventKind::Alert), per);
            });
        }
    });
    let ws = pipe.join();
    let (seen, files) = read_dir_all(dir.path());
    assert_eq!(files, 1);
    assert_eq!(seen.len() as u64, 4 * per);
    assert_eq!(ws.write_errors, 0);
    let bytes = std::fs::metadata(dir.path().join("eve.json"))
        .unwrap()
        .len();
    assert_eq!(ws.bytes, bytes);
}

#[test]
fn per_worker_segments_rotate_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = EveConfig {
        layout: Layout::PerWorker,
        buffer_size: 4096,
        ..EveConfig::default()
    };
    cfg.rotate.max_size = 64 * 1024;
    let (pipe, outs) = EvePipeline::start(&cfg, dir.path(), 2).unwrap();
    for (wid, mut out) in outs.into_iter().enumerate() {
        write_n(&mut out, wid as u64, EventKind::Alert, 10_000, 0);
        out.close();
    }
    let ws = pipe.join();
    let (seen, files) = read_dir_all(dir.path());
    assert_eq!(seen.len(), 20_000);
    assert!(files > 4, "expected several segments, got {files}");
    assert_eq!(ws.rotations as usize + 2, files);
    assert!(dir.path().join("eve.0.0.json").exists());
    assert!(dir.path().join("eve.1.3.json").exists());
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let len = e.unwrap().metadata().unwrap().len();
        // A segment closes at the first buffer boundary past max-size.
        assert!(len < 64 * 1024 + 4096 + 8192, "segment of {len} bytes");
    }
}

#[test]
fn reopen_after_rename() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EveConfig {
        buffer_size: 1024,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    write_n(&mut out, 0, EventKind::Alert, 500, 0);
    out.flush();
    // Wait until the writer has drained everything.
    // flush() never waits: retry it until the writer has taken everything (a loaded
    // machine may not have recycled a buffer yet on the first try).
    let deadline = Instant::now() + Duration::from_secs(30);
    while pipe.stats().buffers == 0 || out.buffered() > 0 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
        out.flush();
    }
    std::thread::sleep(Duration::from_millis(50));
    std::fs::rename(dir.path().join("eve.json"), dir.path().join("eve.json.1")).unwrap();
    pipe.reopen();
    let deadline = Instant::now() + Duration::from_secs(30);
    while pipe.stats().reopens == 0 {
        assert!(Instant::now() < deadline, "reopen not done");
        std::thread::sleep(Duration::from_millis(5));
    }
    write_n(&mut out, 0, EventKind::Alert, 500, 500);
    out.close();
    let ws = pipe.join();
    assert_eq!(ws.reopens, 1);
    let mut old = HashSet::new();
    parse_all(
        &std::fs::read_to_string(dir.path().join("eve.json.1")).unwrap(),
        &mut old,
    );
    let mut new = HashSet::new();
    parse_all(
        &std::fs::read_to_string(dir.path().join("eve.json")).unwrap(),
        &mut new,
    );
    assert_eq!(old.len() + new.len(), 1000);
    assert!(new.contains(&(0, 999)));
    assert!(old.iter().all(|(_, s)| *s < 500));
}

/// A sink that holds writes while its gate is closed.
#[derive(Debug, Clone)]
struct GateSink {
    open: Arc<AtomicBool>,
    data: Arc<Mutex<Vec<u8>>>,
}

impl Sink for GateSink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        while !self.open.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.data.lock().unwrap().extend_from_slice(data);
        stats.writes += 1;
        stats.bytes += data.len() as u64;
        Ok(())
    }
}

#[test]
fn stalled_sink_drops_flows_and_blocks_alerts() {
    let gate = GateSink {
        open: Arc::new(AtomicBool::new(false)),
        data: Arc::new(Mutex::new(Vec::new())),
    };
    let pol = policies(&EveConfig::default());
    assert_eq!(pol[EventKind::Alert.index()], OverloadPolicy::Block);
    assert_eq!(pol[EventKind::Flow.index()], OverloadPolicy::Drop);
    let (pipe, mut outs) =
        EvePipeline::with_sinks(vec![Box::new(gate.clone())], &[0], 1024, 4, pol);
    let mut out = outs.pop().unwrap();
    // Far more than 4 buffers of flows: the pool runs dry and flows are dropped, fast.
    let t0 = Instant::now();
    let written = write_n(&mut out, 0, EventKind::Flow, 5_000, 0);
    assert!(t0.elapsed() < Duration::from_secs(2));
    let st = out.stats();
    assert!(st.dropped_of(EventKind::Flow) > 0);
    assert_eq!(st.dropped_of(EventKind::Flow) + written, 5_000);
    // An alert now has to wait for the gate.
    let opener = {
        let g = gate.open.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            g.store(true, Ordering::Release);
        })
    };
    let mut alerts = 0;
    for i in 0..200 {
        alerts += write_n(&mut out, 0, EventKind::Alert, 1, 10_000 + i);
    }
    assert_eq!(alerts, 200, "alerts are never dropped");
    let st = out.close();
    opener.join().unwrap();
    assert!(st.blocked >= 1);
    assert!(st.blocked_ns >= 100_000_000, "blocked {} ns", st.blocked_ns);
    pipe.join();
    let text = String::from_utf8(gate.data.lock().unwrap().clone()).unwrap();
    let mut seen = HashSet::new();
    parse_all(&text, &mut seen);
    assert_eq!(seen.len() as u64, written + 200);
}

/// Fails the first attempts with ENOSPC after writing part of the buffer (mid-record).
#[derive(Debug)]
struct FlakySink {
    fails: Arc<AtomicU32>,
    data: Arc<Mutex<Vec<u8>>>,
}

impl Sink for FlakySink {
    fn write_buffer(&mut self, data: &[u8], stats: &mut OutputStats) -> Result<(), Partial> {
        if self.fails.load(Ordering::Acquire) > 0 {
            self.fails.fetch_sub(1, Ordering::AcqRel);
            let part = data.len() / 3;
            self.data.lock().unwrap().extend_from_slice(&data[..part]);
            return Err((part, io::Error::from_raw_os_error(libc::ENOSPC)));
        }
        self.data.lock().unwrap().extend_from_slice(data);
        stats.bytes += data.len() as u64;
        Ok(())
    }
}

#[test]
fn errors_are_retried_without_split_or_duplicate() {
    let fails = Arc::new(AtomicU32::new(5));
    let data = Arc::new(Mutex::new(Vec::new()));
    let sink = FlakySink {
        fails: fails.clone(),
        data: data.clone(),
    };
    let pol = [OverloadPolicy::Block; EventKind::COUNT];
    let (pipe, mut outs) = EvePipeline::with_sinks(vec![Box::new(sink)], &[0], 2048, 4, pol);
    let mut out = outs.pop().unwrap();
    write_n(&mut out, 0, EventKind::Alert, 3_000, 0);
    out.close();
    let ws = pipe.join();
    assert_eq!(ws.write_errors, 5);
    assert_eq!(ws.enospc, 5);
    let mut seen = HashSet::new();
    parse_all(
        std::str::from_utf8(&data.lock().unwrap()).unwrap(),
        &mut seen,
    );
    assert_eq!(seen.len(), 3_000);
}

#[test]
fn shutdown_gives_up_on_a_dead_sink() {
    let fails = Arc::new(AtomicU32::new(u32::MAX));
    let sink = FlakySink {
        fails,
        data: Arc::new(Mutex::new(Vec::new())),
    };
    let pol = [OverloadPolicy::Drop; EventKind::COUNT];
    let (pipe, mut outs) = EvePipeline::with_sinks(vec![Box::new(sink)], &[0], 1024, 2, pol);
    let mut out = outs.pop().unwrap();
    write_n(&mut out, 0, EventKind::Flow, 200, 0);
    drop(out);
    let t0 = Instant::now();
    let ws = pipe.shutdown(Duration::from_millis(300));
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(ws.lost_bytes > 0);
    assert!(ws.write_errors > 0);
}

#[test]
fn unix_dgram_one_record_per_datagram() {
    let dir = tempfile::tempdir().unwrap();
    let sock_path = dir.path().join("eve.sock");
    let rx = std::os::unix::net::UnixDatagram::bind(&sock_path).unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let cfg = EveConfig {
        filetype: FileType::UnixDgram,
        filename: "eve.sock".into(),
        buffer_size: 1024,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = HashSet::new();
        let mut buf = vec![0u8; 65536];
        while seen.len() < 300 {
            let n = rx.recv(&mut buf).unwrap();
            let d = std::str::from_utf8(&buf[..n]).unwrap();
            assert_eq!(d.matches('\n').count(), 1, "one record per datagram: {d:?}");
            parse_all(d, &mut seen);
        }
        seen.len()
    });
    write_n(&mut out, 0, EventKind::Alert, 300, 0);
    out.close();
    assert_eq!(reader.join().unwrap(), 300);
    pipe.join();
}

#[test]
fn unix_stream_delivers_everything() {
    let dir = tempfile::tempdir().unwrap();
    let sock_path = dir.path().join("eve.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let reader = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        let mut seen = HashSet::new();
        parse_all(&s, &mut seen);
        seen.len()
    });
    let cfg = EveConfig {
        filetype: FileType::UnixStream,
        filename: sock_path.to_string_lossy().into_owned(),
        buffer_size: 2048,
        ..EveConfig::default()
    };
    let (pipe, mut outs) = EvePipeline::start(&cfg, Path::new("/nonexistent"), 1).unwrap();
    let mut out = outs.pop().unwrap();
    write_n(&mut out, 0, EventKind::Alert, 2_000, 0);
    out.close();
    pipe.join(); // the writer exits and closes the connection
    assert_eq!(reader.join().unwrap(), 2_000);
}

#[test]
fn segments_rotate_by_age() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = EveConfig {
        layout: Layout::PerWorker,
        buffer_size: 1024,
        ..EveConfig::default()
    };
    cfg.rotate.max_age = 1;
    let (pipe, mut outs) = EvePipeline::start(&cfg, dir.path(), 1).unwrap();
    let mut out = outs.pop().unwrap();
    write_n(&mut out, 0, EventKind::Alert, 100, 0);
    out.flush();
    std::thread::sleep(Duration::from_millis(1300));
    write_n(&mut out, 0, EventKind::Alert, 100, 100);
    out.close();
    let ws = pipe.join();
    assert!(ws.rotations >= 1);
    let (seen, files) = read_dir_all(dir.path());
    assert_eq!(seen.len(), 200);
    assert!(files >= 2);
    let first = std::fs::read_to_string(dir.path().join("eve.0.0.json")).unwrap();
    assert!(first.lines().count() >= 100);
}
