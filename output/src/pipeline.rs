//! The asynchronous EVE pipeline: workers never wait on I/O.
//!
//! ```text
//!  worker i: EveOutput ──full buffers──▶ SPSC ring (rtrb) ──▶ writer thread ──▶ Sink(s)
//!                      ◀──empty buffers── SPSC ring (rtrb) ◀──
//! ```
//!
//! Each worker owns a fixed pool of `pool-size` buffers (one being filled, the rest free or in
//! flight), recycled through two SPSC rings sized to the pool, so pushes never fail and nothing
//! is allocated in steady state. When the sink stalls, in-flight buffers stop coming back; once
//! a worker's pool is empty its [`EveOutput::record`] applies the per-kind overload policy:
//! `drop` (count and skip the record) or `block` (wait for a buffer, counting the time).
//!
//! The writer thread retries failed writes (ENOSPC and any other error) with exponential
//! backoff (1 ms doubling to 1 s), continuing from the first byte not yet written, so a record
//! is never split or duplicated in a file and nothing already handed over is lost. Only
//! [`EvePipeline::shutdown`] with an expired deadline gives up, counting `lost_bytes`.
//!
//! A sink that makes no progress for `stall-timeout` (a full disk) puts the writer in the
//! **stalled** state (`output.eve.stalls`, [`EvePipeline::stalled`] says why): buffers are
//! then tried once and dropped on failure (`lost_bytes`) so no worker waits on the disk,
//! until a write succeeds again. A run over files stops then (see
//! [`EvePipeline::stop_on_stall`]); a live one keeps running with its `STATUS=` saying so.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use rtrb::{Consumer, Producer, RingBuffer};

use crate::buffer::{headroom, EveBuffer, EventKind};
use crate::config::{EveConfig, FileType, Layout, OverloadPolicy};
use crate::error::OutputError;
use crate::output::EveOutput;
use crate::sink::worker_file_name;
use crate::sinks::{FileSink, RedisSink, Sink, UnixDgramSink, UnixStreamSink};
use crate::stats::OutputStats;

/// Longest pause between write retries.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long an idle writer sleeps before looking again (workers also wake it).
const IDLE_PARK: Duration = Duration::from_millis(5);

#[derive(Debug)]
struct Control {
    reopen: AtomicBool,
    give_up: AtomicBool,
    /// A sink's reader went away (EPIPE: `shrike -l - | head`); see [`EvePipeline::closed`].
    closed: AtomicBool,
    /// Raised with `closed` so the run stops reading (see [`EvePipeline::stop_when_closed`]).
    on_close: Mutex<Option<Arc<AtomicBool>>>,
    stats: Mutex<OutputStats>,
    /// No progress for this long: stalled (zero: never).
    stall_after: Duration,
    /// Why the writer is stalled now ("<path>: <error>"), if it is.
    stalled: Mutex<Option<String>>,
    /// Set when the writer stalls.
    on_stall: Mutex<Option<Arc<AtomicBool>>>,
    /// The first stall's reason, kept after recovery.
    first_stall: Mutex<Option<String>>,
}

impl Control {
    fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
        if let Ok(g) = self.on_close.lock() {
            if let Some(f) = g.as_ref() {
                f.store(true, Ordering::Release);
            }
        }
    }
}

/// The longest a worker waiting for a free buffer sleeps between looks (the writer wakes it
/// when it returns a buffer; this bounds a missed wake-up).
const MAX_BLOCK_WAIT: Duration = Duration::from_millis(10);

/// A worker waiting for a free buffer (`block` policy): the writer wakes it when it returns
/// one, so the worker sleeps instead of polling while the sink is slow or stalled.
#[derive(Debug, Default)]
struct Waiter {
    waiting: AtomicBool,
    thread: Mutex<Option<Thread>>,
}

impl Waiter {
    fn arm(&self) {
        if let Ok(mut t) = self.thread.lock() {
            t.get_or_insert_with(thread::current);
        }
        self.waiting.store(true, Ordering::SeqCst);
    }

    fn disarm(&self) {
        self.waiting.store(false, Ordering::SeqCst);
    }

    /// Writer side, after returning a buffer.
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) {
            if let Some(t) = self.thread.lock().ok().and_then(|t| t.clone()) {
                t.unpark();
            }
        }
    }
}

/// The worker's end of its two rings.
#[derive(Debug)]
pub(crate) struct WorkerLink {
    full: Producer<Vec<u8>>,
    free: Consumer<Vec<u8>>,
    writer: Thread,
    waiter: Arc<Waiter>,
}

impl WorkerLink {
    /// Swap the buffer's records out for a free buffer and queue them; false when no free
    /// buffer is available (sink stalled) or the writer is gone.
    pub(crate) fn try_send(&mut self, buf: &mut EveBuffer) -> bool {
        let Ok(mut spare) = self.free.pop() else {
            return false;
        };
        buf.swap(&mut spare);
        // The ring holds the whole pool, so this cannot be full; if it were, keep the data.
        if let Err(rtrb::PushError::Full(back)) = self.full.push(spare) {
            let mut back = back;
            buf.swap(&mut back);
            return false;
        }
        self.writer.unpark();
        true
    }

    /// Wait until a free buffer is available, then send. False if the writer has gone away.
    /// The wait sleeps until the writer returns a buffer (it wakes this thread), looking
    /// again at most every [`MAX_BLOCK_WAIT`]: a stalled sink costs no CPU here.
    pub(crate) fn send_blocking(&mut self, buf: &mut EveBuffer) -> bool {
        let mut wait = Duration::from_micros(50);
        loop {
            if self.try_send(buf) {
                return true;
            }
            if self.free.is_abandoned() && self.free.is_empty() {
                return false;
            }
            self.waiter.arm();
            // Look again once armed: a buffer returned before that woke nobody.
            let sent = self.try_send(buf);
            if !sent {
                self.writer.unpark();
                thread::park_timeout(wait);
                wait = (wait * 2).min(MAX_BLOCK_WAIT);
            }
            self.waiter.disarm();
            if sent {
                return true;
            }
        }
    }

    /// Wake the writer so it notices this worker is done.
    pub(crate) fn close(&mut self) {
        self.writer.unpark();
    }
}

#[derive(Debug)]
struct Slot {
    full: Consumer<Vec<u8>>,
    free: Producer<Vec<u8>>,
    sink: usize,
    waiter: Arc<Waiter>,
}

/// The writer thread and its controls.
#[derive(Debug)]
pub struct EvePipeline {
    handle: Option<JoinHandle<OutputStats>>,
    ctl: Arc<Control>,
    thread: Thread,
}

/// The per-kind policy table from the config.
pub fn policies(cfg: &EveConfig) -> [OverloadPolicy; EventKind::COUNT] {
    let o = &cfg.overload;
    [o.alert, o.anomaly, o.flow, o.stats, o.protocol, o.other]
}

/// Sinks plus, per worker, the index of the sink it writes to.
pub type SinkSet = (Vec<Box<dyn Sink>>, Vec<usize>);

/// Build the sinks for `cfg`: returns the sinks and, per worker, the index of its sink.
pub fn build_sinks(
    cfg: &EveConfig,
    log_dir: &Path,
    workers: usize,
) -> Result<SinkSet, OutputError> {
    let path = log_dir.join(&cfg.filename);
    let r = &cfg.rotate;
    Ok(match (cfg.filetype, cfg.layout) {
        (FileType::Regular, Layout::Shared) => (
            vec![Box::new(FileSink::open(path, r.max_size, r.max_age)?) as Box<dyn Sink>],
            vec![0; workers],
        ),
        (FileType::Regular, Layout::PerWorker) => {
            let mut v: Vec<Box<dyn Sink>> = Vec::with_capacity(workers);
            for w in 0..workers {
                let p = worker_file_name(&path, w);
                v.push(Box::new(FileSink::open(p, r.max_size, r.max_age)?));
            }
            (v, (0..workers).collect())
        }
        (FileType::UnixDgram, _) => (vec![Box::new(UnixDgramSink::open(path)?)], vec![0; workers]),
        (FileType::UnixStream, _) => (vec![Box::new(UnixStreamSink::open(path))], vec![0; workers]),
        (FileType::Redis, _) => (
            vec![Box::new(RedisSink::new(cfg.redis.clone()))],
            vec![0; workers],
        ),
    })
}

impl EvePipeline {
    /// Start the writer thread for `cfg` with `workers` worker handles.
    pub fn start(
        cfg: &EveConfig,
        log_dir: &Path,
        workers: usize,
    ) -> Result<(EvePipeline, Vec<EveOutput>), OutputError> {
        if cfg.pool_size < 2 {
            return Err(OutputError::Config(format!(
                "eve-log.pool-size must be at least 2, got {}",
                cfg.pool_size
            )));
        }
        let (sinks, map) = build_sinks(cfg, log_dir, workers)?;
        let (pipe, mut outs) = Self::with_sinks_stall(
            sinks,
            &map,
            cfg.buffer_size,
            cfg.pool_size,
            policies(cfg),
            Duration::from_secs(cfg.stall_timeout),
        );
        let on = cfg.enabled_kinds();
        for o in &mut outs {
            o.set_enabled(on);
            o.set_types(cfg.types.as_deref());
            o.set_host(cfg.sensor_name.as_deref());
        }
        Ok((pipe, outs))
    }

    /// Start the writer over given sinks; worker `i` writes to `sinks[map[i]]`. The writer
    /// never declares a stall.
    pub fn with_sinks(
        sinks: Vec<Box<dyn Sink>>,
        map: &[usize],
        buffer_size: usize,
        pool_size: usize,
        policies: [OverloadPolicy; EventKind::COUNT],
    ) -> (EvePipeline, Vec<EveOutput>) {
        Self::with_sinks_stall(sinks, map, buffer_size, pool_size, policies, Duration::ZERO)
    }

    /// [`Self::with_sinks`] with a stall timeout (zero: never stalled).
    pub fn with_sinks_stall(
        sinks: Vec<Box<dyn Sink>>,
        map: &[usize],
        buffer_size: usize,
        pool_size: usize,
        policies: [OverloadPolicy; EventKind::COUNT],
        stall_after: Duration,
    ) -> (EvePipeline, Vec<EveOutput>) {
        let pool_size = pool_size.max(2);
        let cap = buffer_size + headroom(buffer_size);
        let ctl = Arc::new(Control {
            reopen: AtomicBool::new(false),
            give_up: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            on_close: Mutex::new(None),
            stats: Mutex::new(OutputStats::default()),
            stall_after,
            stalled: Mutex::new(None),
            on_stall: Mutex::new(None),
            first_stall: Mutex::new(None),
        });
        let mut slots = Vec::with_capacity(map.len());
        let mut ends = Vec::with_capacity(map.len());
        for &sink in map {
            let (full_tx, full_rx) = RingBuffer::new(pool_size);
            let (mut free_tx, free_rx) = RingBuffer::new(pool_size);
            for _ in 1..pool_size {
                let _ = free_tx.push(Vec::with_capacity(cap));
            }
            let waiter = Arc::new(Waiter::default());
            slots.push(Slot {
                full: full_rx,
                free: free_tx,
                sink: sink.min(sinks.len().saturating_sub(1)),
                waiter: Arc::clone(&waiter),
            });
            ends.push((full_tx, free_rx, waiter));
        }
        let ctl2 = Arc::clone(&ctl);
        let handle = thread::Builder::new()
            .name("eve-writer".into())
            .spawn(move || writer_loop(sinks, slots, &ctl2))
            .ok();
        let thread = handle
            .as_ref()
            .map(|h| h.thread().clone())
            .unwrap_or_else(thread::current);
        let outputs = ends
            .into_iter()
            .map(|(full, free, waiter)| {
                let link = WorkerLink {
                    full,
                    free,
                    writer: thread.clone(),
                    waiter,
                };
                EveOutput::pipelined(EveBuffer::new(buffer_size), link, policies)
            })
            .collect();
        (
            EvePipeline {
                handle,
                ctl,
                thread,
            },
            outputs,
        )
    }

    /// Ask the writer to reopen its files/connections (SIGHUP after logrotate).
    pub fn reopen(&self) {
        self.ctl.reopen.store(true, Ordering::Release);
        self.thread.unpark();
    }

    /// Whether a sink's reader went away (a pipe or stream closed: EPIPE). What was for that
    /// sink afterwards is discarded (counted in `lost_bytes`) instead of retried forever.
    pub fn closed(&self) -> bool {
        self.ctl.closed.load(Ordering::Acquire)
    }

    /// Raise `flag` when a sink's reader goes away (the run's stop flag: a filter whose
    /// reader has gone ends, as `grep | head` does).
    pub fn stop_when_closed(&self, flag: Arc<AtomicBool>) {
        if self.closed() {
            flag.store(true, Ordering::Release);
        }
        if let Ok(mut g) = self.ctl.on_close.lock() {
            *g = Some(flag);
        }
    }

    /// Why the writer stalled the first time (`"<path>: <error>"`), even if it recovered.
    pub fn first_stall(&self) -> Option<String> {
        self.ctl.first_stall.lock().ok().and_then(|s| s.clone())
    }

    /// Why the writer is stalled now (`"<path>: <error>"`), or `None` when it is not.
    pub fn stalled(&self) -> Option<String> {
        self.ctl.stalled.lock().ok().and_then(|s| s.clone())
    }

    /// A handle that tells, from any thread, whether the writer is stalled now.
    pub fn stall_watch(&self) -> StallWatch {
        StallWatch(Arc::clone(&self.ctl))
    }

    /// Sets `flag` when the writer stalls (a run over files stops on it).
    pub fn stop_on_stall(&self, flag: Arc<AtomicBool>) {
        if let Ok(mut f) = self.ctl.on_stall.lock() {
            *f = Some(flag);
        }
    }

    /// Writer-side counters so far (bytes, writes, errors, rotations, reopens).
    pub fn stats(&self) -> OutputStats {
        self.ctl.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Wait until every worker handle is closed (or dropped) and everything is written.
    pub fn join(mut self) -> OutputStats {
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_else(|| self.stats())
    }

    /// Like [`join`](Self::join), but stop retrying failed writes after `timeout`; what could
    /// not be written is counted in `lost_bytes`.
    pub fn shutdown(self, timeout: Duration) -> OutputStats {
        let deadline = Instant::now() + timeout;
        while self.handle.as_ref().is_some_and(|h| !h.is_finished()) && Instant::now() < deadline {
            self.thread.unpark();
            thread::sleep(Duration::from_millis(2));
        }
        self.ctl.give_up.store(true, Ordering::Release);
        self.thread.unpark();
        self.join()
    }
}

/// See [`EvePipeline::stall_watch`].
#[derive(Clone, Debug)]
pub struct StallWatch(Arc<Control>);

impl StallWatch {
    /// Why the writer is stalled now (`"<path>: <error>"`), or `None`.
    pub fn reason(&self) -> Option<String> {
        self.0.stalled.lock().ok().and_then(|s| s.clone())
    }

    /// The writer's counters so far (bytes, errors, `lost_bytes`, `stalls`), as
    /// [`EvePipeline::stats`].
    pub fn stats(&self) -> OutputStats {
        self.0.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// A buffer being written, possibly after a failed attempt.
struct Pending {
    slot: usize,
    buf: Vec<u8>,
    offset: usize,
    backoff: Duration,
    retry_at: Instant,
}

/// Enters the stalled state: counts it, records why, raises the stop flag.
fn declare_stall(ctl: &Control, stats: &mut OutputStats, what: String) {
    stats.stalls += 1;
    if let Ok(mut s) = ctl.first_stall.lock() {
        s.get_or_insert_with(|| what.clone());
    }
    if let Ok(mut s) = ctl.stalled.lock() {
        *s = Some(what);
    }
    if let Some(f) = ctl.on_stall.lock().ok().and_then(|f| f.clone()) {
        f.store(true, Ordering::Release);
    }
}

fn writer_loop(mut sinks: Vec<Box<dyn Sink>>, mut slots: Vec<Slot>, ctl: &Control) -> OutputStats {
    let mut stats = OutputStats::default();
    let mut pending: Option<Pending> = None;
    let mut next = 0usize;
    // Sinks whose reader went away (EPIPE): their buffers are discarded, counted.
    let mut gone = vec![false; sinks.len()];
    // Since when writes have failed without progress; whether that made a stall.
    let mut failing_since: Option<Instant> = None;
    let mut stalled = false;
    loop {
        let mut changed = false;
        if ctl.reopen.swap(false, Ordering::AcqRel) {
            changed = true;
            for s in &mut sinks {
                if s.reopen().is_ok() {
                    stats.reopens += 1;
                }
            }
        }
        let now = Instant::now();
        let rotations = stats.rotations;
        for s in &mut sinks {
            s.tick(now, &mut stats);
        }
        changed |= stats.rotations != rotations;
        let mut progressed = false;
        // Take the next buffer round-robin, unless one is being retried.
        if pending.is_none() {
            for k in 0..slots.len() {
                let i = (next + k) % slots.len();
                if let Some(slot) = slots.get_mut(i) {
                    if let Ok(buf) = slot.full.pop() {
                        pending = Some(Pending {
                            slot: i,
                            buf,
                            offset: 0,
                            backoff: Duration::from_millis(1),
                            retry_at: now,
                        });
                        next = i + 1;
                        break;
                    }
                }
            }
        }
        if let Some(mut p) = pending.take() {
            if Instant::now() >= p.retry_at {
                let sink_idx = slots.get(p.slot).map(|s| s.sink).unwrap_or(0);
                let data = p.buf.get(p.offset..).unwrap_or_default();
                // `Err((written, error, reader gone for good))`.
                let res = if gone.get(sink_idx).copied().unwrap_or(false) {
                    Err((0, std::io::Error::from_raw_os_error(libc::EPIPE), true))
                } else {
                    match sinks.get_mut(sink_idx) {
                        Some(s) => s.write_buffer(data, &mut stats).map_err(|(done, e)| {
                            let gone = s.reader_gone(&e);
                            (done, e, gone)
                        }),
                        None => Ok(()),
                    }
                };
                match res {
                    Ok(()) => {
                        stats.buffers += 1;
                        recycle(&mut slots, p.slot, p.buf);
                        progressed = true;
                        failing_since = None;
                        if stalled {
                            stalled = false;
                            if let Ok(mut s) = ctl.stalled.lock() {
                                *s = None;
                            }
                        }
                    }
                    Err((done, _, true)) => {
                        // The reader is gone for good: retrying cannot succeed.
                        if let Some(g) = gone.get_mut(sink_idx) {
                            if !*g {
                                *g = true;
                                stats.write_errors += 1;
                                ctl.mark_closed();
                            }
                        }
                        stats.lost_bytes += (p.buf.len() - p.offset - done) as u64;
                        recycle(&mut slots, p.slot, p.buf);
                        progressed = true;
                    }
                    Err((done, e, false)) => {
                        stats.write_errors += 1;
                        if e.raw_os_error() == Some(libc::ENOSPC) {
                            stats.enospc += 1;
                        }
                        p.offset += done;
                        if done > 0 {
                            failing_since = None;
                        }
                        let since = *failing_since.get_or_insert_with(Instant::now);
                        if !stalled
                            && !ctl.stall_after.is_zero()
                            && since.elapsed() >= ctl.stall_after
                        {
                            stalled = true;
                            let name = sinks
                                .get(sink_idx)
                                .map_or_else(|| "EVE output".into(), |s| s.describe());
                            declare_stall(ctl, &mut stats, format!("{name}: {e}"));
                        }
                        if stalled || ctl.give_up.load(Ordering::Acquire) {
                            give_up(&mut sinks, &mut slots, p, &mut stats);
                            changed = true;
                        } else {
                            p.retry_at = Instant::now() + p.backoff;
                            p.backoff = (p.backoff * 2).min(MAX_BACKOFF);
                            pending = Some(p);
                        }
                    }
                }
            } else if ctl.give_up.load(Ordering::Acquire) {
                give_up(&mut sinks, &mut slots, p, &mut stats);
                changed = true;
            } else {
                pending = Some(p);
            }
        }
        if changed || progressed || pending.is_some() {
            if let Ok(mut s) = ctl.stats.lock() {
                s.clone_from(&stats);
            }
        }
        let all_done = pending.is_none()
            && slots
                .iter()
                .all(|s| s.full.is_abandoned() && s.full.is_empty());
        if all_done {
            break;
        }
        if !progressed {
            let wait = match &pending {
                Some(p) => p
                    .retry_at
                    .saturating_duration_since(Instant::now())
                    .min(IDLE_PARK),
                None => IDLE_PARK,
            };
            thread::park_timeout(wait);
        }
    }
    if let Ok(mut s) = ctl.stats.lock() {
        s.clone_from(&stats);
    }
    stats
}

/// Drops the rest of pending buffer `p` (counted in `lost_bytes`). When a write stopped
/// inside a record, its sink takes the record's delivered start back
/// ([`Sink::drop_partial`]): no half record stays behind to run into the next one.
fn give_up(sinks: &mut [Box<dyn Sink>], slots: &mut [Slot], p: Pending, stats: &mut OutputStats) {
    let done = p.buf.get(..p.offset).unwrap_or_default();
    // Bytes after the last complete record that reached the sink.
    let tail = done.len() - done.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    stats.lost_bytes += (p.buf.len() - p.offset + tail) as u64;
    if tail > 0 {
        if let Some(s) = slots.get(p.slot).and_then(|s| sinks.get_mut(s.sink)) {
            s.drop_partial(tail, stats);
        }
    }
    recycle(slots, p.slot, p.buf);
}

fn recycle(slots: &mut [Slot], slot: usize, mut buf: Vec<u8>) {
    buf.clear();
    if let Some(s) = slots.get_mut(slot) {
        let _ = s.free.push(buf);
        s.waiter.wake();
    }
}
