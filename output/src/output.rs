//! [`EveOutput`]: what a worker thread holds to write EVE records.
//!
//! ```text
//! if let Some(mut rec) = out.record(EventKind::Flow) {
//!     write_flow_record(&mut rec, &flow);
//!     let _ = rec.commit();
//! }
//! // timer wheel, every flush-interval:
//! out.flush();
//! // shutdown:
//! let stats = out.close();
//! ```
//!
//! Backends: `direct` writes a full buffer to the file synchronously from the worker (stage 1);
//! `pipelined` (see [`crate::pipeline`]) hands it to the writer thread and never waits on I/O.

use std::time::Instant;

use crate::buffer::{EveBuffer, EventKind, Record};
use crate::config::OverloadPolicy;
use crate::pipeline::WorkerLink;
use crate::sink::FileWriter;
use crate::stats::OutputStats;

#[derive(Debug)]
enum Backend {
    Direct(FileWriter),
    Pipelined(WorkerLink),
}

/// A worker's EVE output: its buffer plus the way full buffers leave it.
#[derive(Debug)]
pub struct EveOutput {
    buf: EveBuffer,
    backend: Backend,
    stats: OutputStats,
    policies: [OverloadPolicy; EventKind::COUNT],
    /// Kinds written at all (`eve-log.types`).
    enabled: [bool; EventKind::COUNT],
    /// Suricata's `types:` names, when given: protocol records are filtered by name
    /// (see [`EveOutput::wants_type`]).
    types: Option<std::sync::Arc<[Box<str>]>>,
}

impl EveOutput {
    /// Synchronous output: full buffers are written by the calling thread.
    /// Write errors are counted and the buffer's records are lost (the pipelined backend retries).
    pub fn direct(buffer_size: usize, writer: FileWriter) -> Self {
        EveOutput {
            buf: EveBuffer::new(buffer_size),
            backend: Backend::Direct(writer),
            stats: OutputStats::default(),
            policies: [OverloadPolicy::Block; EventKind::COUNT],
            enabled: [true; EventKind::COUNT],
            types: None,
        }
    }

    pub(crate) fn pipelined(
        buf: EveBuffer,
        link: WorkerLink,
        policies: [OverloadPolicy; EventKind::COUNT],
    ) -> Self {
        EveOutput {
            buf,
            backend: Backend::Pipelined(link),
            stats: OutputStats::default(),
            policies,
            enabled: [true; EventKind::COUNT],
            types: None,
        }
    }

    /// Write only these kinds (`eve-log.types`); the others are skipped without a count.
    pub fn set_enabled(&mut self, enabled: [bool; EventKind::COUNT]) {
        self.enabled = enabled;
    }

    /// Filter records by Suricata's `types:` names (`None`: every type).
    pub fn set_types(&mut self, types: Option<&[String]>) {
        self.types = types.map(|t| t.iter().map(|s| s.as_str().into()).collect());
    }

    /// End every record with `"host":"<name>"` (Suricata's `sensor-name`).
    pub fn set_host(&mut self, name: Option<&str>) {
        self.buf.set_host(name);
    }

    /// Whether records of Suricata type `name` (`http`, `dns`, `tls`, `files` for `fileinfo`
    /// ...) are written: `types:` unset, or it lists `name`. Protocol loggers ask before
    /// building a record, so that dropping `dns` from `types:` removes DNS records even
    /// when other protocols stay.
    pub fn wants_type(&self, name: &str) -> bool {
        self.types
            .as_ref()
            .is_none_or(|t| t.iter().any(|x| &**x == name))
    }

    /// Whether records of `kind` are written at all.
    #[inline]
    pub fn wants(&self, kind: EventKind) -> bool {
        self.enabled.get(kind.index()).copied().unwrap_or(true)
    }

    /// Start a record of `kind`, or `None` when `kind` is not among the configured types, or
    /// when the sink is stalled and `kind`'s policy is `drop` (the drop is counted). Hands a full buffer on first.
    pub fn record(&mut self, kind: EventKind) -> Option<Record<'_>> {
        if !self.wants(kind) {
            return None;
        }
        if self.buf.needs_flush() && !self.hand_off(kind) {
            if let Some(d) = self.stats.dropped.get_mut(kind.index()) {
                *d += 1;
            }
            return None;
        }
        Some(self.buf.record(kind))
    }

    /// Make every event kind wait for a free buffer instead of being dropped. Used for the
    /// shutdown drain: off the packet path, no record should be lost to a busy writer.
    pub fn block_all(&mut self) {
        self.policies = [OverloadPolicy::Block; EventKind::COUNT];
    }

    /// Hand the buffered records on now, even if the buffer is not full (flush-interval timer).
    /// Never waits: if no free buffer is available the records stay buffered for the next try.
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.try_hand_off();
        }
    }

    /// Flush everything and detach from the sink. Returns the worker-side counters.
    /// With the pipelined backend this waits for a free buffer if needed (shutdown may wait).
    pub fn close(mut self) -> OutputStats {
        if !self.buf.is_empty() {
            let _ = self.hand_off(EventKind::Alert);
        }
        if let Backend::Pipelined(link) = &mut self.backend {
            link.close();
        }
        self.stats()
    }

    /// Worker-side counters so far (records, drops, waits).
    pub fn stats(&self) -> OutputStats {
        let mut s = self.stats.clone();
        s.records = self.buf.counts().records;
        s.invalid = self.buf.counts().invalid;
        s
    }

    /// Bytes currently buffered.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Try to pass the buffer on without waiting; false when no free buffer is available.
    fn try_hand_off(&mut self) -> bool {
        match &mut self.backend {
            Backend::Direct(w) => {
                self.stats.buffers += 1;
                match w.write_buffer(self.buf.as_bytes()) {
                    Ok(calls) => {
                        self.stats.writes += calls;
                        self.stats.bytes += self.buf.len() as u64;
                    }
                    Err((done, e)) => {
                        self.stats.write_errors += 1;
                        if e.raw_os_error() == Some(libc::ENOSPC) {
                            self.stats.enospc += 1;
                        }
                        self.stats.bytes += done as u64;
                        self.stats.lost_bytes += (self.buf.len() - done) as u64;
                    }
                }
                self.buf.clear();
                true
            }
            Backend::Pipelined(link) => {
                if link.try_send(&mut self.buf) {
                    self.stats.buffers += 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Pass the buffer on; when none is free apply `kind`'s policy. Returns false if the record
    /// must be dropped.
    fn hand_off(&mut self, kind: EventKind) -> bool {
        if self.try_hand_off() {
            return true;
        }
        let policy = self
            .policies
            .get(kind.index())
            .copied()
            .unwrap_or(OverloadPolicy::Drop);
        match policy {
            OverloadPolicy::Drop => false,
            OverloadPolicy::Block => {
                let t0 = Instant::now();
                self.stats.blocked += 1;
                let ok = match &mut self.backend {
                    Backend::Pipelined(link) => link.send_blocking(&mut self.buf),
                    Backend::Direct(_) => false,
                };
                self.stats.blocked_ns += t0.elapsed().as_nanos() as u64;
                if ok {
                    self.stats.buffers += 1;
                }
                ok
            }
        }
    }
}

impl Drop for EveOutput {
    /// Best effort: hand on buffered records without waiting (use `close()` to be sure).
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.try_hand_off();
        }
    }
}
