//! Live rule reload (SIGUSR2, `shrike ctl reload`, systemd's `ExecReload`).
//!
//! * The main loop owns a [`Reloader`]. [`Reloader::request`] starts a build of a new
//!   [`Engine`] on its own thread ("reload"), from the running configuration's rule files,
//!   variables, `classification.config` and `threshold.config` (re-read from disk); the main
//!   loop keeps servicing signals, the control socket and systemd while it runs. A request
//!   that arrives while a build is running is coalesced into one follow-up build (rule files
//!   may have changed since the running build read them); its control-socket client waits
//!   for that build's result.
//! * A build that fails (a rule file missing or unreadable, or no rule enforced at all) keeps
//!   the running rules: the clients get `NOK` with the reason, the reason is logged and sent
//!   to systemd as `STATUS=`, and `reload_failures` counts it.
//! * A good engine is published in the [`EngineSlot`]: a generation counter plus the engine
//!   behind a mutex. Each worker reads the counter once per batch or idle tick (one relaxed
//!   atomic load; the mutex is only taken when the generation changed, once per reload) and
//!   swaps its engine, detection context and per-flow state itself (see
//!   `shrike_detect::reload` for what per-flow state is kept). The reload is
//!   complete, and clients get `done`, once every worker reports the new generation.
//! * The old engine is released on the main thread once every worker has moved on, so no
//!   worker pays for freeing it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use shrike_detect::setup::{self, LoadedEngine};
use shrike_detect::{Engine, EngineSetup};

use crate::ops::{Notifier, Reply, Request};
use crate::stats::{Snapshot, StatsBoard};

/// The engine the workers should run, and its generation.
#[derive(Debug)]
pub struct EngineSlot {
    gen: AtomicU64,
    current: Mutex<(u64, Arc<Engine>)>,
    /// The generation each worker runs.
    active: Vec<AtomicU64>,
}

impl EngineSlot {
    /// A slot holding `engine` (generation 0) for `workers` workers.
    pub fn new(engine: Arc<Engine>, workers: usize) -> Arc<EngineSlot> {
        Arc::new(EngineSlot {
            gen: AtomicU64::new(0),
            current: Mutex::new((0, engine)),
            active: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Publish a new engine; returns its generation.
    pub fn publish(&self, engine: Arc<Engine>) -> u64 {
        let mut cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let g = cur.0 + 1;
        *cur = (g, engine);
        self.gen.store(g, Ordering::Release);
        g
    }

    /// The published engine, when its generation is not `have` (cheap when it is).
    #[inline]
    pub fn newer_than(&self, have: u64) -> Option<(u64, Arc<Engine>)> {
        if self.gen.load(Ordering::Acquire) == have {
            return None;
        }
        let cur = self.current.lock().unwrap_or_else(|e| e.into_inner());
        Some((cur.0, Arc::clone(&cur.1)))
    }

    /// Worker `worker` now runs generation `gen`.
    pub fn ack(&self, worker: usize, gen: u64) {
        if let Some(a) = self.active.get(worker) {
            a.store(gen, Ordering::Release);
        }
    }

    /// Every worker runs generation `gen` (or a newer one).
    pub fn all_at(&self, gen: u64) -> bool {
        self.active.iter().all(|a| a.load(Ordering::Acquire) >= gen)
    }
}

/// A worker's view of the slot: which generation it runs.
#[derive(Debug)]
pub struct SlotWatch {
    /// The shared slot.
    pub slot: Arc<EngineSlot>,
    /// Generation this worker runs.
    pub gen: u64,
}

/// Reload counters (published on the stats board; `shrike.*` names are summary, `ctl stats`
/// and metrics only, as EVE `stats` has no such names besides `detect.engines`).
#[derive(Clone, Debug, Default)]
pub struct ReloadStats {
    /// Successful reloads.
    pub reloads: u64,
    /// Failed reloads (old rules kept).
    pub failures: u64,
    /// Unix time the running rules were loaded (start-up, then each successful reload:
    /// Suricata's `last_reload`).
    pub last_reload_secs: u64,
    /// Rules enforced by the running engine.
    pub rules_loaded: u64,
    /// Rules that failed to parse when the running engine was loaded.
    pub rules_failed: u64,
    /// Rules loaded but not enforced by the running engine.
    pub rules_skipped: u64,
    /// Milliseconds the last build took (successful or not).
    pub last_build_ms: u64,
    /// Why the last reload failed (empty after a success).
    pub last_error: String,
}

impl ReloadStats {
    /// The running rule counts of a loaded engine.
    pub fn rules_of(&mut self, l: &LoadedEngine) {
        self.rules_loaded = l.engine.len() as u64;
        self.rules_failed = l.parse_errors.len() as u64;
        self.rules_skipped = (l.engine.report().skipped.len() + l.load.requirements_skipped) as u64;
    }

    /// The counters as a board snapshot.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.add("shrike.detect.engine.reloads", self.reloads);
        s.add("shrike.detect.engine.reload_failures", self.failures);
        s.add("shrike.detect.engine.last_reload", self.last_reload_secs);
        s.add("shrike.detect.engine.rules_loaded", self.rules_loaded);
        s.add("shrike.detect.engine.rules_failed", self.rules_failed);
        s.add("shrike.detect.engine.rules_skipped", self.rules_skipped);
        s.add("shrike.detect.engine.last_build_ms", self.last_build_ms);
        let (hits, misses, rejected) = shrike_detect::mpm_cache_counters();
        s.add("shrike.detect.mpm_cache.hits", hits);
        s.add("shrike.detect.mpm_cache.misses", misses);
        s.add("shrike.detect.mpm_cache.rejected", rejected);
        s
    }
}

/// Why a freshly loaded rule set is not put in service (`None`: it is good). With no rule
/// file configured at all an empty engine is what the configuration asks for (as at start-up).
pub fn reject_reason(l: &LoadedEngine, rule_files: usize) -> Option<String> {
    if let Some(first) = l.refused_files.first() {
        return Some(format!(
            "{} insecure file(s) refused: {first}",
            l.refused_files.len()
        ));
    }
    if !l.missing_files.is_empty() {
        let files: Vec<String> = l
            .missing_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Some(format!("rule file(s) not readable: {}", files.join(", ")));
    }
    if l.engine.is_empty() && rule_files > 0 {
        let first = l
            .parse_errors
            .first()
            .map(|e| format!(" (first error: {}:{}: {})", e.file, e.line, e.error))
            .unwrap_or_default();
        return Some(format!(
            "no rule could be enforced: {} rule(s) found, {} failed to load{first}",
            l.load.total,
            l.parse_errors.len()
        ));
    }
    None
}

pub(crate) fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A finished build: the engine or why not, and how long it took.
type Built = (Result<LoadedEngine, String>, Duration);

/// What builds an engine from a setup ([`setup::load`]; a test can swap in a failing one).
type BuildFn = Arc<dyn Fn(&EngineSetup) -> LoadedEngine + Send + Sync>;

/// Stack of the reload thread: as large as the main thread's, where the same rules were
/// built at start-up (the parser bounds its own depth; this is the margin on top).
const RELOAD_STACK: usize = 8 << 20;

/// The text of a panic payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Build an engine with `build`, turning a panic into an error: a reload that fails in any
/// way leaves the running engine in place.
fn build_guarded(build: &BuildFn, setup: &EngineSetup) -> Result<LoadedEngine, String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(setup)));
    match r {
        Ok(l) => match reject_reason(&l, setup.rule_files.len()) {
            Some(why) => Err(why),
            None => Ok(l),
        },
        Err(p) => Err(format!("the rule build failed: panic: {}", panic_text(&*p))),
    }
}

/// The main loop's side of reloading.
pub struct Reloader {
    setup: EngineSetup,
    build: BuildFn,
    slot: Arc<EngineSlot>,
    /// The build running now.
    building: Option<Receiver<Built>>,
    /// Clients waiting for the running build.
    waiters: Vec<Request>,
    /// Another build was asked for while one was running.
    queued: bool,
    queued_waiters: Vec<Request>,
    /// Published, waiting for every worker: (generation, since, reply text, clients).
    swapping: Option<(u64, Instant, String, Vec<Request>)>,
    /// Engines the workers may still hold; released once they all moved on.
    retired: Vec<Arc<Engine>>,
    running: Arc<Engine>,
    /// Where the counters go (stats board and slot), if anywhere.
    board: Option<(Arc<StatsBoard>, usize)>,
    /// The counters.
    pub stats: ReloadStats,
}

/// How long the main loop waits for workers to pick up a new engine before answering
/// anyway (a worker checks at least every 100 ms poll).
const SWAP_WAIT: Duration = Duration::from_secs(10);

impl Reloader {
    /// A reloader building from `setup`, with `running` the engine the workers start with.
    pub fn new(setup: EngineSetup, slot: Arc<EngineSlot>, running: Arc<Engine>) -> Reloader {
        let stats = ReloadStats {
            rules_loaded: running.len() as u64,
            rules_skipped: running.report().skipped.len() as u64,
            last_reload_secs: unix_secs(),
            ..ReloadStats::default()
        };
        Reloader {
            setup,
            build: Arc::new(|s: &EngineSetup| setup::load(s, &mut |_, _| {}, &mut || {})),
            slot,
            building: None,
            waiters: Vec::new(),
            queued: false,
            queued_waiters: Vec::new(),
            swapping: None,
            retired: Vec::new(),
            running,
            board: None,
            stats,
        }
    }

    /// Build engines with `build` instead of [`setup::load`] (tests: a build that panics).
    #[cfg(test)]
    fn with_build(mut self, build: BuildFn) -> Reloader {
        self.build = build;
        self
    }

    /// Publish the counters in slot `slot` of `board` (now and on every change).
    pub fn with_board(mut self, board: Arc<StatsBoard>, slot: usize) -> Reloader {
        self.board = Some((board, slot));
        self.publish_stats();
        self
    }

    fn publish_stats(&self) {
        if let Some((b, i)) = &self.board {
            b.publish(*i, self.stats.snapshot(), 0);
        }
    }

    /// Set the rule-failure count of the engine the run started with.
    pub fn set_initial_failed(&mut self, n: u64) {
        self.stats.rules_failed = n;
        self.publish_stats();
    }

    /// A reload is building or swapping.
    pub fn busy(&self) -> bool {
        self.building.is_some() || self.swapping.is_some()
    }

    /// Ask for a reload (`client`: a control-socket request to answer when it is done).
    pub fn request(&mut self, client: Option<Request>, notifier: &mut Notifier) {
        if self.busy() {
            self.queued = true;
            self.queued_waiters.extend(client);
            eprintln!("shrike: reload: one is running; another will follow it");
            return;
        }
        self.waiters.extend(client);
        self.start(notifier);
    }

    fn start(&mut self, notifier: &mut Notifier) {
        notifier.reloading("reloading rules");
        eprintln!("shrike: reload: loading rules");
        let (tx, rx) = mpsc::channel();
        let setup = self.setup.clone();
        let build = Arc::clone(&self.build);
        let spawned = thread::Builder::new()
            .name("reload".into())
            .stack_size(RELOAD_STACK)
            .spawn(move || {
                let t0 = Instant::now();
                let r = build_guarded(&build, &setup);
                let _ = tx.send((r, t0.elapsed()));
            });
        match spawned {
            Ok(_) => self.building = Some(rx),
            Err(e) => self.failed(format!("cannot start the reload thread: {e}"), notifier),
        }
    }

    /// Run on every main-loop tick: collect a finished build, publish it, answer clients
    /// once every worker runs it, start a queued build.
    pub fn poll(&mut self, notifier: &mut Notifier, status: &dyn Fn() -> String) {
        if let Some(rx) = &self.building {
            match rx.try_recv() {
                Ok((r, took)) => {
                    self.building = None;
                    self.stats.last_build_ms = took.as_millis() as u64;
                    match r {
                        Ok(l) => self.publish(l, took),
                        Err(why) => self.failed(why, notifier),
                    }
                }
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    self.building = None;
                    self.failed("the reload thread panicked".into(), notifier);
                }
            }
        }
        if let Some((gen, since, _, _)) = &self.swapping {
            let (gen, since) = (*gen, *since);
            let all = self.slot.all_at(gen);
            if all || since.elapsed() >= SWAP_WAIT {
                if let Some((_, _, text, clients)) = self.swapping.take() {
                    let text = if all {
                        text
                    } else {
                        format!("{text} (some worker has not switched yet)")
                    };
                    if all {
                        self.retired.clear();
                    }
                    self.stats.reloads += 1;
                    self.stats.last_reload_secs = unix_secs();
                    self.stats.last_error.clear();
                    self.publish_stats();
                    eprintln!("shrike: reload: {text}");
                    for c in clients {
                        c.reply(Reply::ok_text("done"));
                    }
                    notifier.ready(&status());
                }
            }
        }
        if !self.busy() && self.queued {
            self.queued = false;
            self.waiters = std::mem::take(&mut self.queued_waiters);
            self.start(notifier);
        }
    }

    fn publish(&mut self, l: LoadedEngine, took: Duration) {
        let rules = l.engine.len();
        let failed = l.parse_errors.len();
        // Each rule that failed, as at start-up (file:line and the reason).
        for e in &l.parse_errors {
            eprintln!("shrike: reload: rule failed: {e}");
        }
        self.stats.rules_of(&l);
        let engine = Arc::new(l.engine);
        let old = std::mem::replace(&mut self.running, Arc::clone(&engine));
        self.retired.push(old);
        let gen = self.slot.publish(engine);
        let text = format!(
            "{rules} rule(s) enforced, {failed} failed to load; built in {} ms",
            took.as_millis()
        );
        let clients = std::mem::take(&mut self.waiters);
        self.swapping = Some((gen, Instant::now(), text, clients));
    }

    fn failed(&mut self, why: String, notifier: &mut Notifier) {
        self.stats.failures += 1;
        self.stats.last_error = why.clone();
        self.publish_stats();
        eprintln!("shrike: reload failed, keeping the running rules: {why}");
        for c in std::mem::take(&mut self.waiters) {
            c.reply(Reply::Err(format!(
                "reload failed, running rules kept: {why}"
            )));
        }
        notifier.ready(&format!("reload failed, running rules kept: {why}"));
    }

    /// Stop: answer waiting clients (the build thread is left to finish on its own).
    pub fn shutdown(&mut self) {
        for c in self
            .waiters
            .drain(..)
            .chain(self.queued_waiters.drain(..))
            .chain(self.swapping.take().into_iter().flat_map(|s| s.3))
        {
            c.reply(Reply::Err("shutting down".into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(text: &str, dir: &std::path::Path) -> LoadedEngine {
        let f = dir.join("t.rules");
        std::fs::write(&f, text).unwrap();
        setup::load(
            &EngineSetup {
                rule_files: vec![f],
                ..EngineSetup::default()
            },
            &mut |_, _| {},
            &mut || {},
        )
    }

    #[test]
    fn slot_hands_out_only_newer_engines() {
        let dir = std::env::temp_dir().join(format!("shrike-slot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Arc::new(engine("alert tcp any any -> any any (msg:\"a\"; sid:1;)\n", &dir).engine);
        let slot = EngineSlot::new(a, 2);
        assert!(slot.newer_than(0).is_none());
        assert!(slot.all_at(0));
        let b = engine(
            "alert tcp any any -> any any (msg:\"a\"; sid:1;)\nalert udp any any -> any any (msg:\"b\"; sid:2;)\n",
            &dir,
        );
        let g = slot.publish(Arc::new(b.engine));
        assert_eq!(g, 1);
        let (g2, e) = slot.newer_than(0).expect("newer");
        assert_eq!((g2, e.len()), (1, 2));
        assert!(slot.newer_than(1).is_none());
        slot.ack(0, 1);
        assert!(!slot.all_at(1));
        slot.ack(1, 1);
        assert!(slot.all_at(1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Poll until `done` or 30 s, acknowledging every published generation for both workers.
    fn drive(r: &mut Reloader, n: &mut Notifier, done: impl Fn(&Reloader) -> bool) {
        let t0 = Instant::now();
        while !done(r) {
            assert!(t0.elapsed() < Duration::from_secs(30), "reload stuck");
            r.poll(n, &|| "status".to_string());
            if let Some((g, _)) = r.slot.newer_than(u64::MAX) {
                r.slot.ack(0, g);
                r.slot.ack(1, g);
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn reloader_swaps_coalesces_and_keeps_rules_on_failure() {
        let dir = std::env::temp_dir().join(format!("shrike-rld-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = "alert tcp any any -> any any (msg:\"a\"; sid:1;)\n";
        let first = Arc::new(engine(one, &dir).engine);
        let slot = EngineSlot::new(Arc::clone(&first), 2);
        let setup = EngineSetup {
            rule_files: vec![dir.join("t.rules")],
            ..EngineSetup::default()
        };
        let board = Arc::new(StatsBoard::new(1));
        let mut r = Reloader::new(setup, Arc::clone(&slot), first).with_board(board.clone(), 0);
        let mut n = Notifier::disabled();
        let two = format!("{one}alert udp any any -> any any (msg:\"b\"; sid:2;)\n");
        std::fs::write(dir.join("t.rules"), &two).unwrap();
        r.request(None, &mut n);
        assert!(r.busy());
        // A second request while the first builds is coalesced into one follow-up build.
        r.request(None, &mut n);
        r.request(None, &mut n);
        drive(&mut r, &mut n, |r| r.stats.reloads == 2 && !r.busy());
        assert_eq!(r.stats.reloads, 2, "three requests, two builds");
        assert_eq!(r.stats.rules_loaded, 2);
        let (gen, e) = slot.newer_than(u64::MAX).unwrap();
        assert_eq!((gen, e.len()), (2, 2));
        assert!(slot.all_at(2));
        let snap = board.total_with(&Snapshot::default());
        assert_eq!(snap.get("shrike.detect.engine.reloads"), 2);
        assert_eq!(snap.get("shrike.detect.engine.rules_loaded"), 2);
        assert!(snap.get("shrike.detect.engine.last_reload") > 1_700_000_000);

        // A broken file: counted, reported, nothing published.
        std::fs::write(dir.join("t.rules"), "alert tcp (broken\n").unwrap();
        r.request(None, &mut n);
        drive(&mut r, &mut n, |r| !r.busy());
        assert_eq!(r.stats.failures, 1);
        assert!(r.stats.last_error.contains("no rule could be enforced"));
        assert_eq!(
            slot.newer_than(u64::MAX).unwrap().0,
            2,
            "running rules kept"
        );
        assert_eq!(r.stats.rules_loaded, 2);
        let snap = board.total_with(&Snapshot::default());
        assert_eq!(snap.get("shrike.detect.engine.reload_failures"), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_panicking_or_hostile_build_keeps_the_running_rules() {
        let dir = std::env::temp_dir().join(format!("shrike-rlp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = "alert tcp any any -> any any (msg:\"a\"; sid:1;)\n";
        let first = Arc::new(engine(one, &dir).engine);
        let slot = EngineSlot::new(Arc::clone(&first), 2);
        let setup = EngineSetup {
            rule_files: vec![dir.join("t.rules")],
            ..EngineSetup::default()
        };
        let mut n = Notifier::disabled();
        // A build that panics: reported, counted, nothing published.
        let mut r = Reloader::new(setup.clone(), Arc::clone(&slot), Arc::clone(&first))
            .with_build(Arc::new(|_: &EngineSetup| panic!("planted failure")));
        r.request(None, &mut n);
        drive(&mut r, &mut n, |r| !r.busy());
        assert_eq!(r.stats.failures, 1);
        assert!(
            r.stats.last_error.contains("planted failure"),
            "{}",
            r.stats.last_error
        );
        assert!(slot.newer_than(0).is_none(), "running rules kept");

        // Hostile rules (the depth that overflowed the reload thread's stack): rejected by
        // the parser's limits, the running rules kept.
        let mut r = Reloader::new(setup, Arc::clone(&slot), first);
        for hostile in [
            format!(
                "alert tcp any {}80{} -> any any (sid:2;)\n",
                "[!".repeat(100),
                "]".repeat(100)
            ),
            format!(
                "alert tcp any {}80{} -> any any (sid:3;)\n",
                "[".repeat(4000),
                "]".repeat(4000)
            ),
        ] {
            std::fs::write(dir.join("t.rules"), hostile).unwrap();
            let before = r.stats.failures;
            r.request(None, &mut n);
            drive(&mut r, &mut n, |r| !r.busy());
            assert_eq!(r.stats.failures, before + 1);
            assert!(
                r.stats.last_error.contains("nested deeper than 64"),
                "{}",
                r.stats.last_error
            );
            assert!(slot.newer_than(0).is_none(), "running rules kept");
        }
        // A run of 4,000 `!` (which overflowed the reload thread's stack) is read without
        // recursion; an even run cancels out, as in Suricata, and the reload goes through.
        std::fs::write(
            dir.join("t.rules"),
            format!(
                "alert tcp {}1.2.3.4 any -> any any (sid:4;)\n",
                "!".repeat(4000)
            ),
        )
        .unwrap();
        r.request(None, &mut n);
        drive(&mut r, &mut n, |r| !r.busy());
        assert_eq!(r.stats.reloads, 1, "{}", r.stats.last_error);
        assert_eq!(r.stats.rules_loaded, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_rule_sets_are_rejected_with_a_reason() {
        let dir = std::env::temp_dir().join(format!("shrike-rej-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = engine("alert tcp any any -> any any (msg:\"a\"; sid:1;)\n", &dir);
        assert_eq!(reject_reason(&good, 1), None);
        let garbage = engine("alert tcp any any -> (this is not a rule\n", &dir);
        let why = reject_reason(&garbage, 1).expect("rejected");
        assert!(why.contains("no rule could be enforced"), "{why}");
        assert!(why.contains("1 failed to load"), "{why}");
        let empty = engine("# nothing here\n", &dir);
        assert!(reject_reason(&empty, 1).is_some());
        assert_eq!(reject_reason(&empty, 0), None, "no rule file configured");
        let missing = setup::load(
            &EngineSetup {
                rule_files: vec![dir.join("t.rules"), dir.join("nope.rules")],
                ..EngineSetup::default()
            },
            &mut |_, _| {},
            &mut || {},
        );
        let why = reject_reason(&missing, 2).expect("rejected");
        assert!(why.contains("nope.rules"), "{why}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
