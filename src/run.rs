//! Offline run: read capture files, dispatch packets to pinned workers, write EVE, summarise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use shrike_capture::{CaptureError, FileSource, PacketSource};
use shrike_detect::decode::PacketMeta;
use shrike_output::eve::stats::{write_stats_record, StatsTree};
use shrike_output::{EveOutput, EvePipeline, EventKind};

use shrike_detect::engine::Engine;

use crate::config::{Runmode, SensorConfig};
use crate::dispatch::{self, Entry};
use crate::ingest::{Frame, Ingest};
use crate::progress::Progress;
use crate::stats::{Snapshot, StatsBoard};
use crate::worker::{Worker, WorkerDetect};

/// What the run needs besides the config.
pub struct RunOptions {
    pub inputs: Vec<PathBuf>,
    pub log_dir: PathBuf,
    pub workers: usize,
    pub runmode: Runmode,
    pub progress: Progress,
    /// The detection engine (`None` with `--disable-detection`).
    pub engine: Option<Arc<Engine>>,
    /// Set by SIGINT/SIGTERM: stop reading, then finish normally (flows, outputs, stats).
    pub stop: Arc<AtomicBool>,
}

/// Detection hand-out for the workers: the engine plus fast.log.
#[derive(Clone)]
pub(crate) struct DetectSetup {
    engine: Arc<Engine>,
    fast_path: Option<PathBuf>,
    alerts: Arc<std::sync::atomic::AtomicU64>,
}

impl DetectSetup {
    pub(crate) fn for_worker(&self) -> WorkerDetect {
        let fast = self.fast_path.as_ref().and_then(|p| {
            shrike_capture::safefs::open_append(p, shrike_output::sink::LOG_FILE_MODE)
                .map_err(|e| eprintln!("shrike: warning: {}: {e}", p.display()))
                .ok()
        });
        WorkerDetect {
            engine: Arc::clone(&self.engine),
            fast,
            alerts: Arc::clone(&self.alerts),
        }
    }
}

/// Prepare fast.log (created like Suricata does even without rules; truncated once unless
/// `append`) and the per-worker hand-out.
fn detect_setup(cfg: &SensorConfig, opts: &RunOptions) -> Option<DetectSetup> {
    detect_setup_for(
        cfg,
        &opts.log_dir,
        opts.engine.clone(),
        &opts.progress.alerts,
    )
}

/// [`detect_setup`] for any run (files or live).
pub(crate) fn detect_setup_for(
    cfg: &SensorConfig,
    log_dir: &Path,
    engine: Option<Arc<Engine>>,
    alerts: &Arc<std::sync::atomic::AtomicU64>,
) -> Option<DetectSetup> {
    let fast = &cfg.output.fast;
    let fast_path = fast.enabled.then(|| log_dir.join(&fast.filename));
    if let Some(p) = &fast_path {
        // Appended to by default; `append: no` empties it, but only a regular file of ours
        // (never one planted under that name: see shrike_capture::safefs).
        let mode = shrike_output::sink::LOG_FILE_MODE;
        let r = if fast.append {
            shrike_capture::safefs::open_append(p, mode)
        } else {
            shrike_capture::safefs::create_truncate(p, mode)
        };
        if let Err(e) = r {
            eprintln!("shrike: warning: {}: {e}", p.display());
        }
    }
    let engine = engine?;
    Some(DetectSetup {
        engine,
        fast_path,
        alerts: Arc::clone(alerts),
    })
}

/// The outcome of a run, for the summary line and the exit code.
#[derive(Debug, Default)]
pub struct RunResult {
    pub packets: u64,
    pub bytes: u64,
    pub flows: u64,
    pub alerts: u64,
    pub drops: u64,
    pub seconds: f64,
    /// Some input could not be read (corrupt header or record): exit 1.
    pub input_errors: usize,
    /// Every counter at the end of the run (EVE stats names plus `shrike.*` extras).
    pub counters: Snapshot,
}

/// Exit the run early with a message (exit code 1).
#[derive(Debug)]
pub struct RunError(pub String);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Pick a worker for a hash (multiply-shift, unbiased for any N).
#[inline]
pub fn worker_for(hash: u64, workers: usize) -> usize {
    (((hash >> 32) * workers as u64) >> 32) as usize
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    core_affinity::get_core_ids()
        .map(|ids| ids.into_iter().map(|c| c.id).collect())
        .unwrap_or_default()
}

/// Run over capture files.
pub fn run_files(cfg: &SensorConfig, opts: RunOptions) -> Result<RunResult, RunError> {
    let started = Instant::now();
    let workers = opts.workers.max(1);
    let seed = crate::stats::random_seed();

    // Output: one handle per worker plus one for the stats writer.
    let (pipeline, mut outputs) =
        EvePipeline::start(&cfg.output.eve, &opts.log_dir, workers + 1)
            .map_err(|e| RunError(format!("{}: {e}", opts.log_dir.display())))?;
    let stats_out = outputs.pop().expect("stats output handle");
    let board = Arc::new(StatsBoard::new(workers));
    let stop = Arc::new(AtomicBool::new(false));

    let mut result = RunResult::default();
    let det = detect_setup(cfg, &opts);
    let (reader_snapshot, stats_out) = if opts.runmode == Runmode::Single {
        let out = outputs.pop().expect("worker output");
        let mut worker = Worker::new(0, cfg, out, board.clone(), seed)
            .with_detect(det.as_ref().map(DetectSetup::for_worker));
        let mut reader = Reader::new(cfg, seed);
        reader.read_all(&opts, &mut result, |e, data| worker.process(e, data));
        worker.finish();
        (reader.snapshot(), stats_out)
    } else {
        let stats_thread = StatsThread::start(cfg, board.clone(), stats_out, stop.clone());
        let snap = run_dispatch(
            cfg,
            &opts,
            outputs,
            &board,
            &stop,
            seed,
            det.as_ref(),
            &mut result,
        );
        stop.store(true, Ordering::Relaxed);
        (snap, stats_thread.join())
    };
    opts.progress.done(
        result.packets,
        board.total_with(&Snapshot::default()).get("detect.alert"),
    );
    finish(
        cfg,
        pipeline,
        stats_out,
        &board,
        reader_snapshot,
        result,
        started,
    )
}

/// Dispatch runmode: this thread reads and hashes, N pinned workers inspect.
#[allow(clippy::too_many_arguments)]
fn run_dispatch(
    cfg: &SensorConfig,
    opts: &RunOptions,
    outputs: Vec<EveOutput>,
    board: &Arc<StatsBoard>,
    stop: &Arc<AtomicBool>,
    seed: u64,
    det: Option<&DetectSetup>,
    result: &mut RunResult,
) -> Snapshot {
    let workers = outputs.len();
    let cpus = if cfg.workers.cpus.is_empty() {
        allowed_cpus()
    } else {
        cfg.workers.cpus.clone()
    };
    let (mut disp, queues) = dispatch::channel::<PacketMeta>(
        workers,
        cfg.workers.queue_depth,
        cfg.workers.batch_packets,
        stop.clone(),
    );
    let handles: Vec<_> = queues
        .into_iter()
        .zip(outputs)
        .enumerate()
        .map(|(i, (mut q, out))| {
            let cfg = cfg.clone();
            let board = board.clone();
            let wd = det.map(DetectSetup::for_worker);
            let cpu = cpus.get(i % cpus.len().max(1)).copied();
            thread::Builder::new()
                .name(format!("W#{i:02}"))
                .spawn(move || {
                    if let Some(c) = cpu {
                        core_affinity::set_for_current(core_affinity::CoreId { id: c });
                    }
                    let mut worker = Worker::new(i, &cfg, out, board, seed)
                        .with_detect(wd)
                        .with_share(&cfg, workers);
                    while let Some(batch) = q.next_batch(None) {
                        for (e, data) in batch.iter() {
                            worker.process(e, data);
                        }
                        worker.batch_done();
                        q.recycle(batch);
                    }
                    worker.finish();
                })
                .expect("spawn worker")
        })
        .collect();
    let mut reader = Reader::new(cfg, seed);
    reader.read_all(opts, result, |e, data| {
        disp.push(worker_for(e.hash, workers), *e, data);
    });
    disp.flush_all();
    let disp_stats = disp.stats;
    drop(disp);
    for h in handles {
        if h.join().is_err() {
            eprintln!("shrike: error: a worker thread panicked");
        }
    }
    let mut snap = reader.snapshot();
    snap.add(
        "shrike.dispatch.queue_full_waits",
        disp_stats.queue_full_waits,
    );
    snap.add("shrike.dispatch.wait_us", disp_stats.wait_ns / 1000);
    snap
}

pub(crate) fn finish(
    cfg: &SensorConfig,
    pipeline: EvePipeline,
    mut stats_out: EveOutput,
    board: &StatsBoard,
    reader: Snapshot,
    mut result: RunResult,
    started: Instant,
) -> Result<RunResult, RunError> {
    let total = board.total_with(&reader);
    let uptime = started.elapsed().as_secs();
    if cfg.stats.enabled {
        write_stats(&mut stats_out, &total, uptime, board.last_ts_ns());
    }
    let mut total = total;
    // The stats writer's own records, then the writer thread's counters (bytes, writes,
    // write errors, ENOSPC, lost bytes): summary and -v only.
    stats_out
        .close()
        .visit(&mut |k, v| total.add(&format!("shrike.{k}"), v));
    let out_stats = pipeline.shutdown(Duration::from_secs(10));
    out_stats.visit(&mut |k, v| {
        if !k.starts_with("output.eve.records") && !k.starts_with("output.eve.dropped") {
            total.add(&format!("shrike.{k}"), v)
        }
    });
    result.flows = total.get("flow.total");
    result.alerts = total.get("detect.alert");
    let output_drops: u64 = total
        .iter()
        .filter(|(k, _)| k.starts_with("shrike.output.eve.dropped."))
        .map(|(_, v)| v)
        .sum();
    result.drops = output_drops + total.get("capture.kernel_drops");
    result.seconds = started.elapsed().as_secs_f64();
    result.counters = total;
    Ok(result)
}

fn write_stats(out: &mut EveOutput, total: &Snapshot, uptime: u64, ts_ns: u64) {
    let mut tree = StatsTree::new();
    // Live runs publish the running engine's figures (crate::reload): they become Suricata's
    // `detect.engines` array, which a tree of counters cannot hold.
    let engines = total
        .iter()
        .any(|(k, _)| k == "shrike.detect.engine.rules_loaded");
    let mut detect = StatsTree::new();
    for (k, v) in total.iter() {
        if k.starts_with("shrike.") {
            continue;
        }
        match k.strip_prefix("detect.") {
            Some(rest) if engines => detect.add(rest, v),
            _ => tree.add(k, v),
        }
    }
    if let Some(mut rec) = out.record(EventKind::Stats) {
        if engines {
            write_stats_with_engines(&mut rec, ts_ns, uptime, &mut tree, &mut detect, total);
        } else {
            write_stats_record(&mut rec, ts_ns, uptime, &mut tree);
        }
        let _ = rec.commit();
    }
}

/// A `stats` record whose `detect` object carries Suricata's `engines` array (one engine, id
/// 0: `last_reload` is when the running rules were loaded, then their counts).
fn write_stats_with_engines(
    w: &mut shrike_output::JsonWriter,
    ts_ns: u64,
    uptime: u64,
    tree: &mut StatsTree,
    detect: &mut StatsTree,
    total: &Snapshot,
) {
    let get = |k: &str| total.get(&format!("shrike.detect.engine.{k}"));
    w.start_object();
    shrike_output::eve::header::set_timestamp(w, "timestamp", ts_ns);
    w.set_str("event_type", "stats");
    w.open_object("stats");
    w.set_u64("uptime", uptime);
    tree.write_members(w);
    w.open_object("detect");
    detect.write_members(w);
    w.open_array("engines");
    w.start_object();
    w.set_u64("id", 0);
    shrike_output::eve::header::set_timestamp(
        w,
        "last_reload",
        get("last_reload").saturating_mul(1_000_000_000),
    );
    w.set_u64("rules_loaded", get("rules_loaded"));
    w.set_u64("rules_failed", get("rules_failed"));
    w.set_u64("rules_skipped", get("rules_skipped"));
    w.close();
    w.close();
    w.close();
    w.close();
    w.close();
}

/// Periodic stats records on wall-clock time (`stats.interval`).
pub(crate) struct StatsThread {
    handle: thread::JoinHandle<EveOutput>,
}

impl StatsThread {
    pub(crate) fn start(
        cfg: &SensorConfig,
        board: Arc<StatsBoard>,
        mut out: EveOutput,
        stop: Arc<AtomicBool>,
    ) -> StatsThread {
        let interval = Duration::from_secs(cfg.stats.interval.max(1));
        let enabled = cfg.stats.enabled;
        let started = Instant::now();
        let handle = thread::Builder::new()
            .name("stats".into())
            .spawn(move || {
                let mut next = Instant::now() + interval;
                while !stop.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(50));
                    if enabled && Instant::now() >= next {
                        next += interval;
                        let total = board.total_with(&Snapshot::default());
                        write_stats(
                            &mut out,
                            &total,
                            started.elapsed().as_secs(),
                            board.last_ts_ns(),
                        );
                        out.flush();
                    }
                }
                out
            })
            .expect("spawn stats thread");
        StatsThread { handle }
    }

    pub(crate) fn join(self) -> EveOutput {
        self.handle.join().expect("stats thread")
    }
}

/// The reader: opens each input in turn, decodes and hashes every packet.
struct Reader {
    ingest: Ingest,
    pcap_cnt: u64,
    capture: shrike_capture::CaptureStats,
}

impl Reader {
    fn new(cfg: &SensorConfig, seed: u64) -> Self {
        Reader {
            ingest: Ingest::new(cfg, seed),
            pcap_cnt: 0,
            capture: Default::default(),
        }
    }

    fn read_all(
        &mut self,
        opts: &RunOptions,
        result: &mut RunResult,
        mut sink: impl FnMut(&Entry<PacketMeta>, &[u8]),
    ) {
        'inputs: for path in &opts.inputs {
            let mut src = match open_input(path) {
                Ok(s) => s,
                Err(e) => {
                    report_input_error(&e, result);
                    continue;
                }
            };
            opts.progress.start_file(path, src.total_bytes());
            loop {
                if opts.stop.load(Ordering::Relaxed) {
                    eprintln!(
                        "shrike: stopping on signal after {} packets",
                        result.packets
                    );
                    break 'inputs;
                }
                match src.next_packet() {
                    Ok(Some(p)) => {
                        self.pcap_cnt += 1;
                        result.packets += 1;
                        result.bytes += p.data.len() as u64;
                        let f = Frame {
                            link: p.link,
                            data: p.data,
                            orig_len: p.orig_len,
                            ts: p.ts,
                            seq: self.pcap_cnt,
                        };
                        self.ingest.packet(&f, &mut sink);
                        if self.pcap_cnt & 0x3fff == 0 {
                            opts.progress
                                .update(src.bytes_read(), result.packets, result.bytes);
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        report_input_error(&e, result);
                        break;
                    }
                }
            }
            if src.is_truncated() {
                eprintln!(
                    "shrike: warning: {}: truncated capture: the last record is incomplete; every complete record was processed",
                    src.name()
                );
            }
            if !src.unsupported_link_types().is_empty() {
                eprintln!(
                    "shrike: warning: {}: packets on unsupported link types {:?} were skipped",
                    src.name(),
                    src.unsupported_link_types()
                );
            }
            self.capture.merge(src.stats());
            opts.progress
                .update(src.bytes_read(), result.packets, result.bytes);
        }
    }

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        self.ingest.visit(&mut |k, v| s.add(k, v));
        // Capture-file counters have no place in Suricata's EVE stats schema: keep them under
        // `shrike.` (summary and -v only).
        self.capture
            .visit(&mut |k, v| s.add(&format!("shrike.{k}"), v));
        s
    }
}

fn open_input(path: &Path) -> Result<FileSource, CaptureError> {
    if path.as_os_str() == "-" {
        FileSource::stdin()
    } else {
        FileSource::open(path)
    }
}

fn report_input_error(e: &CaptureError, result: &mut RunResult) {
    if e.is_unsupported_link() {
        eprintln!("shrike: warning: {e}; file skipped");
    } else {
        eprintln!("shrike: error: {e}");
        result.input_errors += 1;
    }
}

/// Print the one-line summary on stderr.
pub fn print_summary(r: &RunResult) {
    let pps = if r.seconds > 0.0 {
        r.packets as f64 / r.seconds
    } else {
        0.0
    };
    let _ = writeln!(
        std::io::stderr(),
        "shrike: {} packets, {} bytes, {} flows, {} alerts, {} drops, {:.3} s, {:.0} packets/s",
        r.packets,
        r.bytes,
        r.flows,
        r.alerts,
        r.drops,
        r.seconds,
        pps
    );
}

/// `-v`: the shrike-specific counters (capture files per link type, dispatch waits, output).
pub fn print_counters(r: &RunResult) {
    let mut line = String::from("shrike: counters:");
    for (k, v) in r.counters.iter() {
        if let Some(name) = k.strip_prefix("shrike.") {
            if v > 0 {
                line.push_str(&format!(" {name}={v}"));
            }
        }
    }
    eprintln!("{line}");
}
