//! Shared (`O_APPEND`) and per-worker layouts: many workers, no lost or interleaved records.

use std::collections::HashSet;

use shrike_output::config::Layout;
use shrike_output::{EveOutput, EveSink, EventKind};

fn run_workers(sink: &EveSink, workers: usize, per_worker: u64) -> Vec<shrike_output::OutputStats> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|wid| {
                let writer = sink.writer(wid).unwrap();
                s.spawn(move || {
                    let mut out = EveOutput::direct(4096, writer);
                    let pad = "x".repeat(37 + wid * 13);
                    for seq in 0..per_worker {
                        let mut r = out.record(EventKind::Flow).expect("direct never drops");
                        r.start_object()
                            .set_u64("worker", wid as u64)
                            .set_u64("seq", seq)
                            .set_str("pad", &pad[..(seq as usize % pad.len())])
                            .close();
                        r.commit().unwrap();
                        if seq % 1000 == 999 {
                            out.flush();
                        }
                    }
                    out.close()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn check_lines(text: &str, seen: &mut HashSet<(u64, u64)>) {
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line ({e}): {line}"));
        let key = (v["worker"].as_u64().unwrap(), v["seq"].as_u64().unwrap());
        assert!(seen.insert(key), "duplicate record {key:?}");
    }
}

#[test]
fn shared_file_four_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eve.json");
    let sink = EveSink::open(&path, Layout::Shared).unwrap();
    let per = 20_000;
    let stats = run_workers(&sink, 4, per);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut seen = HashSet::new();
    check_lines(&text, &mut seen);
    assert_eq!(seen.len() as u64, 4 * per);
    for st in &stats {
        assert_eq!(st.records_of(EventKind::Flow), per);
        assert_eq!(st.write_errors, 0);
        // Buffers of ~4 KiB: each write carries many records.
        assert!(st.writes * 20 < per, "writes {}", st.writes);
    }
}

#[test]
fn per_worker_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eve.json");
    let sink = EveSink::open(&path, Layout::PerWorker).unwrap();
    run_workers(&sink, 3, 5_000);
    assert!(!path.exists());
    for wid in 0..3u64 {
        let p = dir.path().join(format!("eve.{wid}.json"));
        let text = std::fs::read_to_string(&p).unwrap();
        let mut seen = HashSet::new();
        check_lines(&text, &mut seen);
        assert_eq!(seen.len(), 5_000);
        assert!(seen.iter().all(|(w, _)| *w == wid));
    }
}
