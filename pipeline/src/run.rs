//! Offline run: read capture files, dispatch packets to pinned workers, write EVE, summarise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use shrike_capture::afpacket::{dlt_of, BpfProgram};
use shrike_capture::{CaptureError, FileSource, PacketSource};
use shrike_output::eve::stats::{write_stats_record, StatsTree};
use shrike_output::statslog::StatsLog;
use shrike_output::{EveOutput, EvePipeline, EventKind};
use shrike_packet::decode::PacketMeta;

use shrike_detect::Engine;

use crate::config::{Runmode, SensorConfig};
use crate::dispatch::{self, Entry};
use crate::host_order::HostOrder;
use crate::ingest::{Frame, Ingest};
use crate::progress::Progress;
use crate::stats::{Snapshot, StatsBoard};
use crate::worker::{Worker, WorkerDetect};
use crate::worker_loop::{self, PacketFeed, QueueFeed, Round};

/// What the run needs besides the config.
pub struct RunOptions {
    pub inputs: Vec<PathBuf>,
    /// Per input: it came from a directory given with `-r` (an unreadable one is skipped
    /// with a warning instead of failing the run).
    pub from_dir: Vec<bool>,
    pub log_dir: PathBuf,
    pub workers: usize,
    pub runmode: Runmode,
    pub progress: Progress,
    /// The detection engine (`None` with `--disable-detection`).
    pub engine: Option<Arc<Engine>>,
    /// The rule counts of the load (Suricata's `detect.engines` stats entry), when rule
    /// files were given.
    pub rule_counts: Option<RuleCounts>,
    /// Set by SIGINT/SIGTERM: stop reading, then finish normally (flows, outputs, stats).
    pub stop: Arc<AtomicBool>,
    /// A BPF filter expression (`shrike -r x.pcap 'udp'`, `-F FILE`): packets it rejects are
    /// not processed at all, as Suricata's (libpcap's) filter; counted in
    /// `shrike.capture.bpf_filtered`.
    pub bpf: Option<String>,
}

/// Rules of a load, as Suricata's `detect.engines` entry counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuleCounts {
    /// Enforced.
    pub loaded: u64,
    /// Failed to load.
    pub failed: u64,
    /// Skipped (not enforced yet, or `requires` not met).
    pub skipped: u64,
}

/// Switch to the `run-as` user and group (file mode: no capability is kept).
fn drop_to_run_as(cfg: &SensorConfig) -> Result<(), RunError> {
    use shrike_sys::privileges as privs;
    let spec = privs::DropSpec {
        user: cfg.run_as.user.clone(),
        group: cfg.run_as.group.clone(),
        keep: privs::CapSet::EMPTY,
    };
    privs::drop_privileges(&spec)
        .map(|_| ())
        .map_err(|e| RunError(format!("run-as: {e}")))
}

/// Detection hand-out for the workers: the engine plus fast.log.
#[derive(Clone)]
pub(crate) struct DetectSetup {
    engine: Arc<Engine>,
    /// fast.log, opened once (before a privilege drop); each worker gets its own handle.
    fast: Option<(PathBuf, Arc<std::fs::File>)>,
    alerts: Arc<std::sync::atomic::AtomicU64>,
}

impl DetectSetup {
    pub(crate) fn for_worker(&self) -> WorkerDetect {
        let fast = self.fast.as_ref().and_then(|(p, f)| {
            f.try_clone()
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

/// Turn the file store on when configured (its folder relative to the log folder).
pub(crate) fn file_store_setup(cfg: &SensorConfig, log_dir: &Path) -> Result<(), RunError> {
    let fs = &cfg.output.file_store;
    if !fs.enabled {
        return Ok(());
    }
    let dir = log_dir.join(&fs.dir);
    shrike_app::files::set_write_fileinfo(fs.write_fileinfo);
    shrike_app::files::set_max_open_files(fs.max_open_files);
    shrike_app::files::enable_store(&dir, fs.force_filestore, fs.stream_depth)
        .map_err(|e| RunError(format!("file-store {}: {e}", dir.display())))
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
    let mut handle = None;
    if let Some(p) = &fast_path {
        // Appended to by default; `append: no` empties it, but only a regular file of ours
        // (never one planted under that name: see shrike_sys::safefs).
        let mode = shrike_output::sink::LOG_FILE_MODE;
        let r = if fast.append {
            Ok(())
        } else {
            shrike_sys::safefs::create_truncate(p, mode).map(drop)
        }
        .and_then(|()| shrike_sys::safefs::open_append(p, mode));
        match r {
            Ok(f) => handle = Some((p.clone(), Arc::new(f))),
            Err(e) => eprintln!("shrike: warning: {}: {e}", p.display()),
        }
    }
    let engine = engine?;
    Some(DetectSetup {
        engine,
        fast: handle,
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
    /// Some input named on the command line could not be read (corrupt header or record):
    /// exit 1.
    pub input_errors: usize,
    /// Files of a directory that could not be read (or not to the end): skipped with a
    /// warning, counted in the summary.
    pub skipped_files: usize,
    /// Inputs that could be opened.
    pub readable_files: usize,
    /// Every counter at the end of the run (EVE stats names plus `shrike.*` extras).
    pub counters: Snapshot,
    /// The EVE output's reader went away (EPIPE on stdout or a FIFO): the run stopped early,
    /// as a filter does (exit 0).
    pub output_closed: bool,
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

/// The worker a packet goes to when the reader hands packets out (file mode, software
/// dispatch): TCP flows by their address pair only, so a connection a flow announces (an
/// FTP data connection, Suricata's app-layer expectation) is handled by the worker that saw
/// the announcement, in input order, whatever the worker count; other packets by flow hash.
#[inline]
pub fn worker_of(e: &Entry<PacketMeta>, workers: usize) -> usize {
    if workers <= 1 {
        return 0;
    }
    if e.hash != 0 && e.meta.is_ip() {
        let (mut k, _) = shrike_flow::FlowKey::from_meta(&e.meta);
        if k.proto == 6 {
            k.lo_port = 0;
            k.hi_port = 0;
            return worker_for(k.hash(FILE_SEED ^ 0x7c9), workers);
        }
    }
    worker_for(e.hash, workers)
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    shrike_sys::cpu::allowed_cpus().unwrap_or_default()
}

/// The flow-hash seed of file mode.
pub const FILE_SEED: u64 = 0x5eed_5eed_0b5e_55ed;

/// The reader's packet clock (file mode): tells when it enters a new millisecond, the moments
/// a worker's timer wheel may fire (see `Worker::advance_clock`).
#[derive(Default)]
struct ReaderClock {
    now: u64,
    last_ms: u64,
}

impl ReaderClock {
    /// Packet time `ts` seen: true when the clock moved into a new millisecond.
    #[inline]
    fn advance(&mut self, ts: u64) -> bool {
        if ts <= self.now {
            return false;
        }
        self.now = ts;
        let ms = ts / 1_000_000;
        if ms == self.last_ms {
            return false;
        }
        self.last_ms = ms;
        true
    }
}

/// Run over capture files.
pub fn run_files(cfg: &SensorConfig, opts: RunOptions) -> Result<RunResult, RunError> {
    let started = Instant::now();
    let workers = opts.workers.max(1);
    // A fixed flow-hash seed: the same capture gives the same flow ids (derived from the
    // hash, as Suricata's) and the same worker for each flow on every run. A random seed
    // protects live capture against crafted hash collisions; a file is not a live attack.
    let seed = FILE_SEED;

    file_store_setup(cfg, &opts.log_dir)?;
    // Output: one handle per worker plus one for the stats writer.
    let (pipeline, mut outputs) = EvePipeline::start(&cfg.eve_config(), &opts.log_dir, workers + 1)
        .map_err(|e| RunError(format!("{}: {e}", opts.log_dir.display())))?;
    let mut stats_out = outputs.pop().expect("stats output handle");
    let stats_log = open_stats_log(cfg, &opts.log_dir)?;
    // File mode loses nothing: every record kind waits for the writer instead of being
    // dropped (the drop policy is for live capture, where packets cannot wait).
    stats_out.block_all();
    for o in &mut outputs {
        o.block_all();
    }
    let output_closed = Arc::new(AtomicBool::new(false));
    pipeline.stop_when_closed(output_closed.clone());
    // One slot per worker, and one for the rule counts (`detect.engines`).
    let board = Arc::new(StatsBoard::new(
        workers + usize::from(opts.rule_counts.is_some()),
    ));
    if let Some(rc) = opts.rule_counts {
        let stats = crate::reload::ReloadStats {
            last_reload_secs: crate::reload::unix_secs(),
            rules_loaded: rc.loaded,
            rules_failed: rc.failed,
            rules_skipped: rc.skipped,
            ..crate::reload::ReloadStats::default()
        };
        board.publish(workers, stats.snapshot(), 0);
    }
    // The Prometheus endpoint (`metrics.enabled`), as in live capture, for as long as the run
    // lasts: the workers publish their counters to the board twice a second.
    let _metrics = if cfg.metrics.enabled {
        let addr = cfg.metrics.listen_addr().map_err(RunError)?;
        let board = board.clone();
        let source: crate::ops::metrics::MetricsSource =
            Arc::new(move || crate::ops::MetricsSnapshot {
                workers: board.snapshots(),
                global: Snapshot::default(),
            });
        Some(
            crate::ops::MetricsServer::spawn(addr, source)
                .map_err(|e| RunError(format!("metrics.listen {addr}: {e}")))?,
        )
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    // A stalled EVE writer (full disk) ends the run: stop reading, finish, exit 1.
    let stalled = Arc::new(AtomicBool::new(false));
    pipeline.stop_on_stall(stalled.clone());

    let mut result = RunResult::default();
    let det = detect_setup(cfg, &opts);
    let mut reader = Reader::new(cfg, seed, output_closed.clone(), stalled.clone())
        .with_bpf(opts.bpf.as_deref());
    // `run-as` (or --user/--group): the log files and the first input are open; switch to
    // that user before any packet is read, keeping no capability. Later inputs (the next
    // files of a directory) are opened as that user, as in Suricata.
    if cfg.run_as.is_set() {
        reader.open_next(&opts, &mut result);
        drop_to_run_as(cfg)?;
    }
    let (reader_snapshot, stats_out) = if opts.runmode == Runmode::Single {
        let out = outputs.pop().expect("worker output");
        let worker = Worker::new(0, cfg, out, board.clone(), seed)
            .with_detect(det.as_ref().map(DetectSetup::for_worker))
            .file_mode();
        worker_loop::run(
            worker,
            &mut SingleFeed {
                reader: &mut reader,
                opts: &opts,
                result: &mut result,
            },
        );
        (reader.snapshot(), (stats_out, stats_log))
    } else {
        let stats_thread =
            StatsThread::start(cfg, board.clone(), stats_out, stats_log, stop.clone());
        let snap = run_dispatch(
            cfg,
            &opts,
            outputs,
            &board,
            &stop,
            seed,
            det.as_ref(),
            &mut result,
            reader,
        );
        stop.store(true, Ordering::Relaxed);
        (snap, stats_thread.join())
    };
    opts.progress.done(
        result.packets,
        board.total_with(&Snapshot::default()).get("detect.alert"),
    );
    let stall_timeout = cfg.output.eve.stall_timeout;
    let stall = stalled
        .load(Ordering::Acquire)
        .then(|| pipeline.first_stall())
        .flatten();
    let (stats_out, stats_log) = stats_out;
    let r = finish(
        cfg,
        pipeline,
        stats_out,
        stats_log,
        &board,
        reader_snapshot,
        result,
        started,
    )?;
    match stall {
        Some(why) => Err(RunError(format!(
            "{why}: EVE output made no progress for {stall_timeout} s; stopped after {} packets",
            r.packets
        ))),
        None => Ok(r),
    }
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
    mut reader: Reader,
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
    // Host-scoped detection state is decided in input order (see crate::host_order).
    let order = (workers > 1 && det.is_some()).then(|| HostOrder::new(workers));
    if let Some(o) = &order {
        disp.serve_markers(o.want.clone());
    }
    let handles: Vec<_> = queues
        .into_iter()
        .zip(outputs)
        .enumerate()
        .map(|(i, (q, out))| {
            let cfg = cfg.clone();
            let board = board.clone();
            let wd = det.map(DetectSetup::for_worker);
            let order = order.clone();
            let cpu = cpus.get(i % cpus.len().max(1)).copied();
            thread::Builder::new()
                .name(format!("W#{i:02}"))
                .spawn(move || {
                    if let Some(c) = cpu {
                        let _ = shrike_sys::cpu::pin_current_thread(c);
                    }
                    let worker = Worker::new(i, &cfg, out, board, seed)
                        .with_detect(wd)
                        .with_gate(order.as_ref().map(|o| o.gate(i)))
                        .with_share(&cfg, workers)
                        .file_mode();
                    // However this thread ends, nobody waits for it any more.
                    let _floor = FloorGuard(order.clone(), i);
                    worker_loop::run(worker, &mut QueueFeed::file(q).with_order(order, i));
                })
                .expect("spawn worker")
        })
        .collect();
    // The reader is this thread: `workers.receive-cpus` (Suricata's receive-cpu-set) pins it.
    if let Some(&c) = cfg.workers.receive_cpus.first() {
        if let Err(e) = shrike_sys::cpu::pin_current_thread(c) {
            eprintln!("shrike: warning: reader: cannot pin to CPU {c}: {e}");
        }
    }
    let mut clock = ReaderClock::default();
    let mut last: Option<Entry<PacketMeta>> = None;
    let mut n = 0u64;
    reader.read_all(opts, result, |e, data| {
        n += 1;
        let w = worker_of(e, workers);
        if clock.advance(e.ts.0) {
            // Every other worker learns the time too, in order among its own packets.
            for o in (0..workers).filter(|&o| o != w) {
                disp.push_tick(o, e, 2 * n);
            }
            last = Some(*e);
        }
        disp.push(
            w,
            Entry {
                order: 2 * n + 1,
                ..*e
            },
            data,
        );
    });
    // The end of input, at the reader's exact clock: every worker ends its flows at the
    // same time whatever the worker count (and, at the highest position, releases any
    // worker waiting for host state).
    if let Some(mut e) = last {
        e.ts = shrike_capture::Timestamp(clock.now);
        for o in 0..workers {
            disp.push_tick(o, &e, 2 * n + 2);
        }
    }
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
    if let Some(o) = &order {
        snap.add("shrike.host_order.waits", o.waits.load(Ordering::Relaxed));
        snap.add(
            "shrike.host_order.wait_us",
            o.wait_ns.load(Ordering::Relaxed) / 1000,
        );
    }
    snap
}

/// Publishes a worker's floor as the highest position when its thread ends (normally or
/// not), so that no other worker waits for it.
struct FloorGuard(Option<Arc<HostOrder>>, usize);

impl Drop for FloorGuard {
    fn drop(&mut self) {
        if let Some(o) = &self.0 {
            o.publish(self.1, u64::MAX);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn finish(
    cfg: &SensorConfig,
    pipeline: EvePipeline,
    mut stats_out: EveOutput,
    stats_log: Option<StatsLog>,
    board: &StatsBoard,
    reader: Snapshot,
    mut result: RunResult,
    started: Instant,
) -> Result<RunResult, RunError> {
    let total = board.total_with(&reader);
    let uptime = started.elapsed().as_secs();
    if cfg.stats.enabled {
        write_stats(&mut stats_out, &total, uptime, board.last_ts_ns());
        // Suricata writes a last stats.log block when the run ends, as the EVE record.
        if let Some(mut log) = stats_log {
            write_stats_log(&mut log, &total, &board.snapshots(), uptime);
        }
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

/// stats.log (`outputs: - stats:`), opened in the log directory when configured (and
/// `stats.enabled`).
pub(crate) fn open_stats_log(
    cfg: &SensorConfig,
    log_dir: &Path,
) -> Result<Option<StatsLog>, RunError> {
    if !cfg.stats.enabled {
        return Ok(None);
    }
    StatsLog::open(&cfg.output.stats, log_dir).map_err(|e| RunError(e.to_string()))
}

/// One stats.log block: the totals (the EVE stats counters) and each stats-board slot's
/// counters as thread `W#NN`.
pub(crate) fn write_stats_log(
    log: &mut StatsLog,
    total: &Snapshot,
    threads: &[Snapshot],
    uptime: u64,
) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    log.write_block(
        now,
        uptime,
        &mut |v| {
            for (k, x) in total.iter().filter(|(k, _)| !k.starts_with("shrike.")) {
                v(k, x);
            }
        },
        &mut |v| {
            for (i, snap) in threads.iter().enumerate() {
                let tm = format!("W#{:02}", i + 1);
                for (k, x) in snap.iter().filter(|(k, _)| !k.starts_with("shrike.")) {
                    v(&tm, k, x);
                }
            }
        },
    );
}

/// Periodic stats records and stats.log blocks on wall-clock time (`stats.interval`).
pub(crate) struct StatsThread {
    handle: thread::JoinHandle<(EveOutput, Option<StatsLog>)>,
}

impl StatsThread {
    pub(crate) fn start(
        cfg: &SensorConfig,
        board: Arc<StatsBoard>,
        mut out: EveOutput,
        mut log: Option<StatsLog>,
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
                        if let Some(l) = log.as_mut() {
                            let snaps = board.snapshots();
                            write_stats_log(l, &total, &snaps, started.elapsed().as_secs());
                        }
                    }
                }
                (out, log)
            })
            .expect("spawn stats thread");
        StatsThread { handle }
    }

    pub(crate) fn join(self) -> (EveOutput, Option<StatsLog>) {
        self.handle.join().expect("stats thread")
    }
}

/// The reader: opens each input in turn, decodes and hashes every packet.
struct Reader {
    ingest: Ingest,
    pcap_cnt: u64,
    capture: shrike_capture::CaptureStats,
    /// The input being read.
    cur: Option<FileSource>,
    /// Index of the next input to open.
    next_input: usize,
    /// The input being read came from a directory (an unreadable one is skipped).
    cur_in_dir: bool,
    /// A stop was requested: no more input is read.
    stopped: bool,
    /// Raised by the EVE writer when the output's reader went away.
    output_closed: Arc<AtomicBool>,
    /// Set when the EVE writer stalls: stop reading.
    stalled: Arc<AtomicBool>,
    /// The BPF filter, when one is given.
    bpf: Option<FileFilter>,
}

/// A BPF expression compiled for each link type met (libpcap compiles per link type).
struct FileFilter {
    expr: String,
    /// `(link type, program)`; `None`: it does not compile for that link type (its packets
    /// are all rejected, reported once).
    progs: Vec<(shrike_capture::LinkType, Option<BpfProgram>)>,
    filtered: u64,
}

impl FileFilter {
    fn accepts(&mut self, link: shrike_capture::LinkType, data: &[u8], wire_len: u32) -> bool {
        let i = match self.progs.iter().position(|(l, _)| *l == link) {
            Some(i) => i,
            None => {
                let p = match BpfProgram::compile_for(&self.expr, dlt_of(link)) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        eprintln!(
                            "shrike: error: {e} (link type {}): its packets are not processed",
                            link.name()
                        );
                        None
                    }
                };
                self.progs.push((link, p));
                self.progs.len() - 1
            }
        };
        let ok = self.progs[i]
            .1
            .as_ref()
            .is_some_and(|p| p.matches(data, wire_len));
        if !ok {
            self.filtered += 1;
        }
        ok
    }
}

/// Packets the single runmode decodes and inspects per round of the worker loop.
const SINGLE_ROUND: usize = 256;

/// The single runmode's feed: the reader decodes inline, a round at a time.
struct SingleFeed<'a> {
    reader: &'a mut Reader,
    opts: &'a RunOptions,
    result: &'a mut RunResult,
}

impl PacketFeed for SingleFeed<'_> {
    fn next_round(&mut self, worker: &mut Worker) -> Round {
        let more = self
            .reader
            .pump(self.opts, self.result, SINGLE_ROUND, &mut |e, data| {
                worker.process(e, data)
            });
        if more {
            Round::Packets
        } else {
            Round::Done
        }
    }
}

impl Reader {
    fn new(
        cfg: &SensorConfig,
        seed: u64,
        output_closed: Arc<AtomicBool>,
        stalled: Arc<AtomicBool>,
    ) -> Self {
        Reader {
            ingest: Ingest::new(cfg, seed),
            pcap_cnt: 0,
            capture: Default::default(),
            cur: None,
            next_input: 0,
            cur_in_dir: false,
            stopped: false,
            output_closed,
            stalled,
            bpf: None,
        }
    }

    /// Open the next input (an unreadable one is reported and counted). False when no input
    /// is left.
    fn open_next(&mut self, opts: &RunOptions, result: &mut RunResult) -> bool {
        let i = self.next_input;
        let Some(path) = opts.inputs.get(i) else {
            return false;
        };
        self.next_input += 1;
        self.cur_in_dir = opts.from_dir.get(i).copied().unwrap_or(false);
        match open_input(path) {
            Ok(s) => {
                result.readable_files += 1;
                opts.progress.start_file(path, s.total_bytes());
                self.cur = Some(s);
            }
            Err(e) => report_input_error(&e, self.cur_in_dir, result),
        }
        true
    }

    /// Filter the packets with a BPF expression.
    fn with_bpf(mut self, expr: Option<&str>) -> Self {
        self.bpf = expr.map(|e| FileFilter {
            expr: e.to_string(),
            progs: Vec::new(),
            filtered: 0,
        });
        self
    }

    fn read_all(
        &mut self,
        opts: &RunOptions,
        result: &mut RunResult,
        mut sink: impl FnMut(&Entry<PacketMeta>, &[u8]),
    ) {
        while self.pump(opts, result, usize::MAX, &mut sink) {}
    }

    /// Read up to `max` packets into `sink`, opening the next input as needed. Returns false
    /// once every input is read (or a stop was requested).
    fn pump<F: FnMut(&Entry<PacketMeta>, &[u8])>(
        &mut self,
        opts: &RunOptions,
        result: &mut RunResult,
        max: usize,
        sink: &mut F,
    ) -> bool {
        let mut n = 0;
        loop {
            if self.stopped {
                return false;
            }
            let Some(src) = self.cur.as_mut() else {
                if !self.open_next(opts, result) {
                    return false;
                }
                continue;
            };
            if self.output_closed.load(Ordering::Relaxed) {
                result.output_closed = true;
                self.stopped = true;
                self.cur = None;
                return false;
            }
            if opts.stop.load(Ordering::Relaxed) {
                eprintln!(
                    "shrike: stopping on signal after {} packets",
                    result.packets
                );
                self.stopped = true;
                self.cur = None;
                return false;
            }
            if self.stalled.load(Ordering::Relaxed) {
                eprintln!(
                    "shrike: EVE output stalled: stopping after {} packets",
                    result.packets
                );
                self.stopped = true;
                self.cur = None;
                return false;
            }
            match src.next_packet() {
                Ok(Some(p)) => {
                    if let Some(f) = self.bpf.as_mut() {
                        if !f.accepts(p.link, p.data, p.orig_len) {
                            continue;
                        }
                    }
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
                    self.ingest.packet(&f, sink);
                    if self.pcap_cnt & 0x3fff == 0 {
                        opts.progress
                            .update(src.bytes_read(), result.packets, result.bytes);
                    }
                    n += 1;
                    if n >= max {
                        return true;
                    }
                }
                Ok(None) => self.end_input(opts, result),
                Err(e) => {
                    report_input_error(&e, self.cur_in_dir, result);
                    self.end_input(opts, result);
                }
            }
        }
    }

    /// The current input is read: report what it skipped, keep its counters.
    fn end_input(&mut self, opts: &RunOptions, result: &RunResult) {
        let Some(src) = self.cur.take() else {
            return;
        };
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

    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        self.ingest.visit(&mut |k, v| s.add(k, v));
        // Capture-file counters have no place in Suricata's EVE stats schema: keep them under
        // `shrike.` (summary and -v only).
        self.capture
            .visit(&mut |k, v| s.add(&format!("shrike.{k}"), v));
        if let Some(f) = &self.bpf {
            s.add("shrike.capture.bpf_filtered", f.filtered);
        }
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

fn report_input_error(e: &CaptureError, in_dir: bool, result: &mut RunResult) {
    if e.is_unsupported_link() {
        eprintln!("shrike: warning: {e}; file skipped");
        result.skipped_files += 1;
    } else if in_dir {
        // A directory is read as a whole: one bad file does not fail the others.
        eprintln!("shrike: warning: {e}; file skipped (the rest of it, if any)");
        result.skipped_files += 1;
    } else if matches!(e, CaptureError::Corrupt { .. }) {
        // A damaged record inside a capture ends that capture like a truncation: the
        // records before it were processed and the run succeeds, as Suricata's pcap reader
        // (an error line, exit 0).
        eprintln!("shrike: error: {e}; the records before it were processed");
        result.skipped_files += 1;
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
    let skipped = if r.skipped_files > 0 {
        format!(", {} file(s) skipped", r.skipped_files)
    } else {
        String::new()
    };
    let _ = writeln!(
        std::io::stderr(),
        "shrike: {} packets, {} bytes, {} flows, {} alerts, {} drops{skipped}, {:.3} s, {:.0} packets/s",
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
