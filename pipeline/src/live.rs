//! Live capture: AF_PACKET (and DPDK with feature `dpdk`) in two runmodes.
//!
//! * `workers`: each worker owns one fanout socket (or DPDK RX queue) and its ring, decodes and
//!   inspects in the same pinned thread; the kernel (or NIC RSS) keeps flows on one socket.
//! * `dispatch`: one capture thread per interface reads its ring, decodes, hashes each packet by
//!   its symmetric flow key and hands batches over SPSC queues to N pinned workers.
//!
//! SIGINT/SIGTERM stop capture, drain the queues, flush flows and output and exit 0; SIGHUP
//! reopens the log files (logrotate).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use shrike_capture::afpacket;
use shrike_capture::config::AfPacketConfig;
use shrike_capture::live::{LiveSource, LiveStats};
use shrike_output::{EveOutput, EvePipeline};
use shrike_packet::decode::PacketMeta;

use crate::config::{InterfaceConfig, Runmode, SensorConfig};
use crate::dispatch::{self, WorkerQueue};
use crate::ingest::{Frame, Ingest};
use crate::run::{self, RunError, RunResult, StatsThread};
use crate::stats::{Snapshot, StatsBoard};
use crate::worker::Worker;
use crate::worker_loop::{self, wall_now, PacketFeed, QueueFeed, Round};

/// One interface to capture on, resolved from the CLI and the config.
#[derive(Clone, Debug)]
pub struct LiveInterface {
    pub name: String,
    pub method: Method,
    pub runmode: Runmode,
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub af_packet: Option<AfPacketConfig>,
    #[cfg_attr(not(feature = "dpdk"), allow(dead_code))]
    pub dpdk: Option<shrike_capture::DpdkConfig>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    AfPacket,
    Dpdk,
}

/// Resolve which interfaces to open: `-i X` / `--af-packet=X` name one (its settings come from
/// the matching `interfaces:` entry when there is one); `--af-packet` alone or `--dpdk` take
/// every configured interface of that method.
pub fn resolve(
    cfg: &SensorConfig,
    names: &[String],
    method: Method,
    default_threads: usize,
    cli_runmode: Option<Runmode>,
) -> Result<Vec<LiveInterface>, String> {
    let wanted: Vec<&InterfaceConfig> = if names.is_empty() {
        cfg.interfaces
            .iter()
            .filter(|i| method_of(i) == Some(method))
            .collect()
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    let mut push = |name: &str, ic: Option<&InterfaceConfig>| {
        let runmode = cli_runmode
            .or_else(|| {
                ic.and_then(|i| i.runmode.as_deref())
                    .and_then(Runmode::parse)
            })
            .unwrap_or(Runmode::Workers);
        let threads = ic.and_then(|i| i.threads).unwrap_or(default_threads).max(1);
        out.push(LiveInterface {
            name: name.to_string(),
            method,
            runmode,
            threads,
            cpus: ic.map(|i| i.cpus.clone()).unwrap_or_default(),
            af_packet: ic.and_then(|i| i.af_packet.clone()),
            dpdk: ic.and_then(|i| i.dpdk.clone()),
        });
    };
    for n in names {
        let ic = cfg.interfaces.iter().find(|i| &i.name == n);
        push(n, ic);
    }
    for ic in wanted {
        push(&ic.name, Some(ic));
    }
    if out.is_empty() {
        return Err(match method {
            Method::AfPacket => "no interface: give one with -i IFACE or --af-packet=IFACE, or list it under interfaces: in the config".into(),
            Method::Dpdk => "no DPDK interface configured (interfaces: entries with capture: dpdk)".into(),
        });
    }
    Ok(out)
}

fn method_of(i: &InterfaceConfig) -> Option<Method> {
    match i.capture.as_deref() {
        None | Some("af-packet") | Some("afpacket") => Some(Method::AfPacket),
        Some("dpdk") => Some(Method::Dpdk),
        _ => None,
    }
}

/// The AF_PACKET settings of an interface, validated by the capture crate.
fn afpacket_config(li: &LiveInterface) -> AfPacketConfig {
    let mut c = li.af_packet.clone().unwrap_or_default();
    c.interface = li.name.clone();
    c.threads = Some(li.threads);
    c
}

/// Open the sources of one interface: `n` fanout members (AF_PACKET) or RX queues (DPDK).
fn open_sources(li: &LiveInterface, n: usize) -> Result<Vec<Box<dyn LiveSource>>, String> {
    match li.method {
        Method::AfPacket => {
            let cfg = afpacket_config(li);
            for lint in cfg.lints() {
                eprintln!("shrike: warning: interface {}: {lint}", li.name);
            }
            let socks = afpacket::open_fanout(&li.name, n, &cfg).map_err(|e| e.to_string())?;
            Ok(socks
                .into_iter()
                .map(|s| Box::new(s) as Box<dyn LiveSource>)
                .collect())
        }
        Method::Dpdk => open_dpdk(li, n),
    }
}

#[cfg(feature = "dpdk")]
fn open_dpdk(li: &LiveInterface, n: usize) -> Result<Vec<Box<dyn LiveSource>>, String> {
    let mut cfg = li.dpdk.clone().unwrap_or_default();
    if cfg.interface.is_none() && cfg.port.is_none() {
        cfg.interface = Some(li.name.clone());
    }
    cfg.validate()
        .map_err(|e| format!("interface {}: {e}", li.name))?;
    shrike_capture::dpdk::eal_init(&cfg.eal_params.to_args()).map_err(|e| e.to_string())?;
    let qs = shrike_capture::dpdk::open_port(&cfg, n).map_err(|e| e.to_string())?;
    Ok(qs
        .into_iter()
        .map(|q| Box::new(q) as Box<dyn LiveSource>)
        .collect())
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(li: &LiveInterface, _n: usize) -> Result<Vec<Box<dyn LiveSource>>, String> {
    Err(format!(
        "interface {}: this shrike was built without DPDK support (cargo build --features dpdk)",
        li.name
    ))
}

/// Poll timeout while capturing: short enough for the timers to run on an idle link.
const POLL: Duration = Duration::from_millis(100);
/// Poll timeout while draining the ring after a stop request (longer than a block timeout).
const DRAIN_POLL: Duration = Duration::from_millis(30);

/// Signal flags: stop (SIGINT/SIGTERM) and reopen logs (SIGHUP).
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub hup: Arc<AtomicBool>,
    /// SIGUSR2: reload the rules (the systemd unit's ExecReload).
    pub reload: Arc<AtomicBool>,
}

impl Signals {
    /// File mode: once a stop signal came, the run has `grace` to finish its outputs; past
    /// that the process exits (code 1) with a message, so SIGINT/SIGTERM always end a run
    /// promptly even when its output is stuck (a reader that stopped reading a pipe).
    pub fn exit_after_grace(&self, grace: std::time::Duration) {
        let stop = self.stop.clone();
        let _ = std::thread::Builder::new()
            .name("stop-watch".into())
            .spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                std::thread::sleep(grace);
                eprintln!(
                    "shrike: error: stopping took longer than {} ms (output stuck?); exiting without finishing the outputs",
                    grace.as_millis()
                );
                std::process::exit(1);
            });
    }

    pub fn install() -> Result<Signals, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let hup = Arc::new(AtomicBool::new(false));
        // Set by SIGINT/SIGTERM only (a stop asked over the control socket is not a signal).
        let signalled = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // A second signal while stopping ends the process at once (exit 1).
            signal_hook::flag::register_conditional_shutdown(sig, 1, signalled.clone())
                .map_err(|e| e.to_string())?;
            signal_hook::flag::register(sig, signalled.clone()).map_err(|e| e.to_string())?;
            signal_hook::flag::register(sig, stop.clone()).map_err(|e| e.to_string())?;
        }
        signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone())
            .map_err(|e| e.to_string())?;
        let reload = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGUSR2, reload.clone())
            .map_err(|e| e.to_string())?;
        Ok(Signals { stop, hup, reload })
    }
}

/// Capture-side counters of one thread, published beside the workers'.
struct CaptureCounters {
    ingest: Ingest,
    live: LiveStats,
}

impl CaptureCounters {
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        self.ingest.visit(&mut |k, v| s.add(k, v));
        self.live.visit(&mut |k, v| s.add(k, v));
        self.live
            .visit_extra(&mut |k, v| s.add(&format!("shrike.{k}"), v));
        s
    }
}

/// Detection in a live run: the engine to start with, and what a reload rebuilds it from.
pub struct LiveDetect {
    /// The engine the workers start with (may have no rules: a reload can add them).
    pub engine: Arc<shrike_detect::Engine>,
    /// Rule files, variables and config files (re-read from disk on every reload).
    pub setup: shrike_detect::EngineSetup,
    /// Rules that failed to load at start-up.
    pub rules_failed: u64,
}

/// Run live until a stop signal. Returns the run's totals.
pub fn run_live(
    cfg: &SensorConfig,
    ifaces: Vec<LiveInterface>,
    log_dir: &std::path::Path,
    signals: &Signals,
    detect: Option<LiveDetect>,
    instance: &str,
) -> Result<RunResult, RunError> {
    let started = Instant::now();
    let seed = crate::stats::random_seed();
    // Open every source before any thread starts, so errors (missing interface, missing
    // privileges) stop the start-up cleanly.
    let mut plans = Vec::new();
    for li in &ifaces {
        let n = if li.runmode == Runmode::Dispatch {
            1
        } else {
            li.threads
        };
        let sources = open_sources(li, n).map_err(RunError)?;
        plans.push((li.clone(), sources));
    }
    // Rings are open: drop to the run-as user before any thread starts (threads inherit).
    if cfg.run_as.is_set() {
        use shrike_sys::privileges as privs;
        let spec = privs::DropSpec {
            user: cfg.run_as.user.clone(),
            group: cfg.run_as.group.clone(),
            keep: privs::CapSet::of(&privs::CAPTURE_CAPS),
        };
        let d = privs::drop_privileges(&spec).map_err(|e| RunError(e.to_string()))?;
        if !d.missing.is_empty() {
            eprintln!("shrike: note: running without {}", d.missing);
        }
    }
    let workers_total: usize = plans.iter().map(|(li, _)| li.threads).sum();
    let capture_threads: usize = plans.iter().map(|(_, s)| s.len()).sum();
    run::file_store_setup(cfg, log_dir)?;
    let (pipeline, mut outputs) = EvePipeline::start(&cfg.eve_config(), log_dir, workers_total + 1)
        .map_err(|e| RunError(format!("{}: {e}", log_dir.display())))?;
    let stats_out = outputs.pop().expect("stats output");
    let stats_log = run::open_stats_log(cfg, log_dir)?;
    // Board slots: workers first, then one per capture thread, then the reloader's.
    let board = Arc::new(StatsBoard::new(workers_total + capture_threads + 1));
    let reload_slot = workers_total + capture_threads;
    let engine = detect.as_ref().map(|d| Arc::clone(&d.engine));
    let engine_slot = engine
        .as_ref()
        .map(|e| crate::reload::EngineSlot::new(Arc::clone(e), workers_total));
    let mut reloader = detect.map(|d| {
        let mut r = crate::reload::Reloader::new(
            d.setup,
            Arc::clone(engine_slot.as_ref().expect("slot")),
            d.engine,
        );
        r.set_initial_failed(d.rules_failed);
        r.with_board(board.clone(), reload_slot)
    });
    let stop = signals.stop.clone();
    let stats_stop = Arc::new(AtomicBool::new(false));
    let stats_thread =
        StatsThread::start(cfg, board.clone(), stats_out, stats_log, stats_stop.clone());
    let allowed = run::allowed_cpus();
    let det = run::detect_setup_for(cfg, log_dir, engine, &Arc::new(Default::default()));

    let mut handles = Vec::new();
    let mut outputs = outputs.into_iter();
    let mut next_worker = 0usize;
    let mut next_capture = workers_total;
    for (li, sources) in plans {
        // The interface's own CPUs, else `workers.cpus` (Suricata's worker-cpu-set), else
        // every allowed CPU.
        let cpus = if !li.cpus.is_empty() {
            li.cpus.clone()
        } else if !cfg.workers.cpus.is_empty() {
            cfg.workers.cpus.clone()
        } else {
            allowed.clone()
        };
        let cpu_for = |i: usize| cpus.get(i % cpus.len().max(1)).copied();
        if li.runmode == Runmode::Dispatch {
            let (disp, queues) = dispatch::channel::<PacketMeta>(
                li.threads,
                cfg.workers.queue_depth,
                cfg.workers.batch_packets,
                stop.clone(),
            );
            for (i, q) in queues.into_iter().enumerate() {
                let out = outputs.next().expect("worker output");
                let id = next_worker;
                next_worker += 1;
                let wd = det.as_ref().map(run::DetectSetup::for_worker);
                handles.push(spawn_queue_worker(
                    id,
                    cfg,
                    out,
                    board.clone(),
                    seed,
                    q,
                    (cpu_for(i), workers_total),
                    (wd, engine_slot.clone()),
                ));
            }
            // Dispatch mode opens one source per interface.
            if let Some(src) = sources.into_iter().next() {
                let slot = next_capture;
                next_capture += 1;
                let (ing, board2, stop2) = (Ingest::new(cfg, seed), board.clone(), stop.clone());
                let mut disp = disp;
                // `workers.receive-cpus` (Suricata's receive-cpu-set), one per capture thread
                // in turn.
                let rx = &cfg.workers.receive_cpus;
                let rx_cpu = rx.get((slot - workers_total) % rx.len().max(1)).copied();
                handles.push(
                    thread::Builder::new()
                        .name(format!("RX#{}", li.name))
                        .spawn(move || {
                            if let Some(c) = rx_cpu {
                                if let Err(e) = shrike_sys::cpu::pin_current_thread(c) {
                                    eprintln!(
                                        "shrike: warning: capture: cannot pin to CPU {c}: {e}"
                                    );
                                }
                            }
                            capture_dispatch(src, &mut disp, ing, &board2, slot, &stop2)
                        })
                        .expect("spawn capture thread"),
                );
            }
        } else {
            for (i, src) in sources.into_iter().enumerate() {
                let out = outputs.next().expect("worker output");
                let id = next_worker;
                next_worker += 1;
                let slot = next_capture;
                next_capture += 1;
                let (cfg2, board2, stop2) = (cfg.clone(), board.clone(), stop.clone());
                let cpu = cpu_for(i);
                let wd = det.as_ref().map(run::DetectSetup::for_worker);
                let slot2 = engine_slot.clone();
                handles.push(
                    thread::Builder::new()
                        .name(format!("W#{id:02}-{}", li.name))
                        .spawn(move || {
                            if let Some(c) = cpu {
                                let _ = shrike_sys::cpu::pin_current_thread(c);
                            }
                            let worker = Worker::new(id, &cfg2, out, board2.clone(), seed)
                                .with_share(&cfg2, workers_total)
                                .with_detect(wd)
                                .with_engine_slot(slot2);
                            ring_worker(
                                src,
                                worker,
                                Ingest::new(&cfg2, seed),
                                &board2,
                                slot,
                                &stop2,
                            );
                        })
                        .expect("spawn worker"),
                );
            }
        }
    }
    eprintln!(
        "shrike: capturing on {} with {} worker(s); stop with SIGINT or SIGTERM",
        ifaces
            .iter()
            .map(|i| format!("{} ({:?})", i.name, i.runmode).to_lowercase())
            .collect::<Vec<_>>()
            .join(", "),
        workers_total
    );
    // Operations: systemd notification, control socket, metrics.
    let status = {
        let board = board.clone();
        let stall = pipeline.stall_watch();
        move || {
            let t = board.total_with(&Snapshot::default());
            let line = crate::ops::notify::Status {
                packets: t.get("capture.kernel_packets"),
                drops: t.get("capture.kernel_drops"),
                rules: t.get("shrike.detect.engine.rules_loaded"),
                alerts: t.get("detect.alert"),
            }
            .line();
            match stall.reason() {
                // The writer drops EVE buffers until a write succeeds (output.eve.stalls).
                Some(why) => format!(
                    "{line}; EVE output stalled ({why}), dropping records ({} bytes lost)",
                    stall.stats().lost_bytes
                ),
                None => line,
            }
        }
    };
    let mut notifier = crate::ops::Notifier::from_env();
    let control = if cfg.unix_command.enabled.enabled(true) {
        let board = board.clone();
        let writer = pipeline.stall_watch();
        let opts = crate::ops::ControlOptions {
            // The workers' counters plus the EVE writer's (`shrike.output.eve.lost_bytes`,
            // `stalls`, `enospc`: the worker-side output counters leave those at zero).
            stats: Some(Arc::new(move || {
                let mut w = Snapshot::default();
                writer
                    .stats()
                    .visit(&mut |k, v| w.add(&format!("shrike.{k}"), v));
                board.total_with(&w)
            })),
            ..Default::default()
        };
        let path = cfg.unix_command.socket_path(instance);
        match crate::ops::ControlServer::bind(&path, opts) {
            Ok(sc) => Some(sc),
            Err(e) => {
                eprintln!("shrike: warning: control socket {}: {e}", path.display());
                None
            }
        }
    } else {
        None
    };
    let _metrics = if cfg.metrics.enabled {
        let addr = cfg.metrics.listen_addr().map_err(RunError)?;
        let board = board.clone();
        let (w, c) = (workers_total, capture_threads);
        let source: crate::ops::metrics::MetricsSource = Arc::new(move || {
            let slots = board.snapshots();
            let mut workers: Vec<Snapshot> = slots.iter().take(w).cloned().collect();
            // Workers runmode: capture slot i belongs to worker i.
            if c == w {
                for (i, s) in slots.iter().skip(w).take(c).enumerate() {
                    if let Some(wk) = workers.get_mut(i) {
                        wk.merge(s);
                    }
                }
            }
            crate::ops::MetricsSnapshot {
                workers,
                // The reloader's counters.
                global: slots.get(w + c).cloned().unwrap_or_default(),
            }
        });
        Some(
            crate::ops::MetricsServer::spawn(addr, source)
                .map_err(|e| RunError(format!("metrics.listen {addr}: {e}")))?,
        )
    } else {
        None
    };
    notifier.ready(&status());
    let stall = pipeline.stall_watch();
    let mut was_stalled = false;
    while !stop.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(100));
        notifier.tick(Instant::now(), &status);
        let why = stall.reason();
        if why.is_some() != was_stalled {
            was_stalled = why.is_some();
            match why {
                Some(w) => eprintln!(
                    "shrike: warning: {w}: EVE output stalled, dropping records until it recovers"
                ),
                None => eprintln!("shrike: EVE output recovered"),
            }
        }
        if signals.hup.swap(false, Ordering::Relaxed) {
            pipeline.reopen();
        }
        if signals.reload.swap(false, Ordering::Relaxed) {
            match reloader.as_mut() {
                Some(r) => r.request(None, &mut notifier),
                None => eprintln!("shrike: reload: detection is disabled"),
            }
        }
        if let Some(r) = reloader.as_mut() {
            r.poll(&mut notifier, &status);
        }
        if let Some((_, ctl)) = &control {
            while let Some(req) = ctl.try_recv() {
                use crate::ops::{Command, Reply};
                match req.command {
                    Command::Reload => match reloader.as_mut() {
                        Some(r) => r.request(Some(req), &mut notifier),
                        None => req.reply(Reply::Err("detection is disabled".into())),
                    },
                    Command::ReopenLogs => {
                        pipeline.reopen();
                        req.reply(Reply::ok_text("done"));
                    }
                    Command::Shutdown => {
                        stop.store(true, Ordering::Relaxed);
                        req.reply(Reply::ok_text("Closing shrike"));
                    }
                    _ => req.reply(Reply::Err("not supported".into())),
                }
            }
        }
    }
    notifier.stopping("stopping: flushing flows and logs");
    if let Some(r) = reloader.as_mut() {
        r.shutdown();
    }
    drop(control);
    for h in handles {
        if h.join().is_err() {
            eprintln!("shrike: error: a capture or worker thread panicked");
        }
    }
    stats_stop.store(true, Ordering::Relaxed);
    let (stats_out, stats_log) = stats_thread.join();
    let mut result = RunResult::default();
    let total = board.total_with(&Snapshot::default());
    result.packets = total.get("decoder.pkts");
    result.bytes = total.get("decoder.bytes");
    run::finish(
        cfg,
        pipeline,
        stats_out,
        stats_log,
        &board,
        Snapshot::default(),
        result,
        started,
    )
}

/// Workers runmode: this thread owns one ring and inspects what it reads.
fn ring_worker(
    src: Box<dyn LiveSource>,
    worker: Worker,
    ingest: Ingest,
    board: &StatsBoard,
    slot: usize,
    stop: &AtomicBool,
) {
    let mut feed = RingFeed {
        src,
        cc: CaptureCounters {
            ingest,
            live: LiveStats::default(),
        },
        board,
        slot,
        stop,
        seq: 0,
        last_publish: Instant::now(),
        draining: 0,
    };
    worker_loop::run(worker, &mut feed);
}

/// The workers runmode's feed: the worker polls its own ring and decodes inline.
struct RingFeed<'a> {
    src: Box<dyn LiveSource>,
    cc: CaptureCounters,
    board: &'a StatsBoard,
    slot: usize,
    stop: &'a AtomicBool,
    seq: u64,
    last_publish: Instant,
    /// Empty polls in a row since the stop request.
    draining: u32,
}

impl PacketFeed for RingFeed<'_> {
    fn next_round(&mut self, worker: &mut Worker) -> Round {
        // On stop, keep reading until the ring is empty (partly filled blocks are handed over
        // after the block timeout), so nothing already captured is lost.
        let stopping = self.stop.load(Ordering::Relaxed);
        let timeout = if stopping { DRAIN_POLL } else { POLL };
        let (seq, cc) = (&mut self.seq, &mut self.cc);
        let r = self.src.poll(timeout, &mut |p| {
            *seq += 1;
            let f = Frame {
                link: p.link,
                data: p.data,
                orig_len: p.orig_len,
                ts: p.ts,
                seq: *seq,
            };
            cc.ingest.packet(&f, &mut |e, data| worker.process(e, data));
        });
        if stopping {
            self.draining = if matches!(r, Ok(n) if n > 0) {
                0
            } else {
                self.draining + 1
            };
            return if self.draining >= 2 {
                Round::Done
            } else {
                Round::Packets
            };
        }
        match r {
            Ok(0) => Round::Idle(wall_now()),
            Ok(_) => Round::Packets,
            Err(e) => {
                eprintln!("shrike: warning: {e}");
                thread::sleep(Duration::from_millis(100));
                Round::Packets
            }
        }
    }

    fn after_round(&mut self) {
        if self.last_publish.elapsed() >= Duration::from_millis(500) {
            self.publish();
        }
    }

    fn finish(&mut self) {
        self.publish();
    }
}

impl RingFeed<'_> {
    fn publish(&mut self) {
        self.last_publish = Instant::now();
        self.cc.live = self.src.stats();
        self.board.publish(self.slot, self.cc.snapshot(), 0);
    }
}

/// Dispatch runmode, capture side: read, decode, hash, hand over.
fn capture_dispatch(
    mut src: Box<dyn LiveSource>,
    disp: &mut dispatch::Dispatcher<PacketMeta>,
    ingest: Ingest,
    board: &StatsBoard,
    slot: usize,
    stop: &AtomicBool,
) {
    let workers = disp.lanes();
    let mut cc = CaptureCounters {
        ingest,
        live: LiveStats::default(),
    };
    let mut seq = 0u64;
    let mut last_publish = Instant::now();
    let mut draining = 0;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let timeout = if stopping { DRAIN_POLL } else { POLL };
        let r = src.poll(timeout, &mut |p| {
            seq += 1;
            let f = Frame {
                link: p.link,
                data: p.data,
                orig_len: p.orig_len,
                ts: p.ts,
                seq,
            };
            cc.ingest.packet(&f, &mut |e, data| {
                disp.push(run::worker_of(e, workers), *e, data)
            });
        });
        // Bounded latency: whatever was read goes to the workers now.
        disp.flush_all();
        if stopping {
            draining = if matches!(r, Ok(n) if n > 0) {
                0
            } else {
                draining + 1
            };
            if draining >= 2 {
                break;
            }
            continue;
        }
        if let Err(e) = r {
            eprintln!("shrike: warning: {e}");
            thread::sleep(Duration::from_millis(100));
        }
        if last_publish.elapsed() >= Duration::from_millis(500) {
            last_publish = Instant::now();
            cc.live = src.stats();
            board.publish(slot, cc.snapshot(), 0);
        }
    }
    cc.live = src.stats();
    let mut snap = cc.snapshot();
    snap.add(
        "shrike.dispatch.queue_full_waits",
        disp.stats.queue_full_waits,
    );
    board.publish(slot, snap, 0);
}

/// Dispatch runmode, worker side: inspect batches from the capture thread; run the timers
/// when the queue is idle.
#[allow(clippy::too_many_arguments)]
fn spawn_queue_worker(
    id: usize,
    cfg: &SensorConfig,
    out: EveOutput,
    board: Arc<StatsBoard>,
    seed: u64,
    q: WorkerQueue<PacketMeta>,
    (cpu, share): (Option<usize>, usize),
    (wd, slot): (
        Option<crate::worker::WorkerDetect>,
        Option<Arc<crate::reload::EngineSlot>>,
    ),
) -> thread::JoinHandle<()> {
    let cfg = cfg.clone();
    thread::Builder::new()
        .name(format!("W#{id:02}"))
        .spawn(move || {
            if let Some(c) = cpu {
                let _ = shrike_sys::cpu::pin_current_thread(c);
            }
            let worker = Worker::new(id, &cfg, out, board, seed)
                .with_share(&cfg, share)
                .with_detect(wd)
                .with_engine_slot(slot);
            worker_loop::run(worker, &mut QueueFeed::live(q));
        })
        .expect("spawn worker")
}
