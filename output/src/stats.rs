//! Output counters.
//!
//! These are shrike's own counters; Suricata has no equivalent and the EVE schema's `stats`
//! object has `additionalProperties: false` everywhere, so they must NOT be fed into an EVE
//! `stats` record (it would fail validation). They go to stats.log and the run summary, under
//! the `output.eve.` prefix.

use crate::buffer::EventKind;

/// Counters of one worker's EVE output (worker side) or of the writer (sink side).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputStats {
    /// Records committed, per [`EventKind::index`].
    pub records: [u64; EventKind::COUNT],
    /// Records dropped by the overload policy, per kind.
    pub dropped: [u64; EventKind::COUNT],
    /// Records rolled back because they were not valid JSON (a bug somewhere, never written).
    pub invalid: u64,
    /// Times a worker had to wait for a free buffer (`block` policy).
    pub blocked: u64,
    /// Nanoseconds workers spent waiting for a free buffer.
    pub blocked_ns: u64,
    /// Buffers handed to the sink (full or flushed by timer/close).
    pub buffers: u64,
    /// Bytes written to the sink.
    pub bytes: u64,
    /// Write system calls (or datagrams/pipelines) that succeeded.
    pub writes: u64,
    /// Failed write attempts (all errors, ENOSPC included).
    pub write_errors: u64,
    /// Failed write attempts that were ENOSPC.
    pub enospc: u64,
    /// Bytes given up after an unrecoverable error (e.g. a record larger than a datagram),
    /// or while the writer was stalled (see `stalls`).
    pub lost_bytes: u64,
    /// Bytes of a record cut short by a failed write and taken back from the file when the
    /// rest of its buffer was given up (no half record is left in the file).
    pub truncated_bytes: u64,
    /// Times the writer made no progress for `stall-timeout` and started dropping buffers
    /// (until a write succeeds again).
    pub stalls: u64,
    /// Files reopened on request (logrotate).
    pub reopens: u64,
    /// Segments started by rotation.
    pub rotations: u64,
}

impl OutputStats {
    /// Name every counter (`output.eve.records.alert`, `output.eve.dropped.flow`,
    /// `output.eve.write_errors`, ...).
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        const REC: [&str; EventKind::COUNT] = [
            "output.eve.records.alert",
            "output.eve.records.anomaly",
            "output.eve.records.flow",
            "output.eve.records.stats",
            "output.eve.records.protocol",
            "output.eve.records.other",
        ];
        const DROP: [&str; EventKind::COUNT] = [
            "output.eve.dropped.alert",
            "output.eve.dropped.anomaly",
            "output.eve.dropped.flow",
            "output.eve.dropped.stats",
            "output.eve.dropped.protocol",
            "output.eve.dropped.other",
        ];
        for (n, v) in REC.iter().zip(self.records.iter()) {
            f(n, *v);
        }
        for (n, v) in DROP.iter().zip(self.dropped.iter()) {
            f(n, *v);
        }
        f("output.eve.invalid", self.invalid);
        f("output.eve.blocked", self.blocked);
        f("output.eve.blocked_us", self.blocked_ns / 1000);
        f("output.eve.buffers", self.buffers);
        f("output.eve.bytes", self.bytes);
        f("output.eve.writes", self.writes);
        f("output.eve.write_errors", self.write_errors);
        f("output.eve.enospc", self.enospc);
        f("output.eve.lost_bytes", self.lost_bytes);
        f("output.eve.truncated_bytes", self.truncated_bytes);
        f("output.eve.stalls", self.stalls);
        f("output.eve.reopens", self.reopens);
        f("output.eve.rotations", self.rotations);
    }

    /// Add `other` into `self`.
    pub fn merge(&mut self, other: &OutputStats) {
        for (a, b) in self.records.iter_mut().zip(other.records.iter()) {
            *a += b;
        }
        for (a, b) in self.dropped.iter_mut().zip(other.dropped.iter()) {
            *a += b;
        }
        self.invalid += other.invalid;
        self.blocked += other.blocked;
        self.blocked_ns += other.blocked_ns;
        self.buffers += other.buffers;
        self.bytes += other.bytes;
        self.writes += other.writes;
        self.write_errors += other.write_errors;
        self.enospc += other.enospc;
        self.lost_bytes += other.lost_bytes;
        self.truncated_bytes += other.truncated_bytes;
        self.stalls += other.stalls;
        self.reopens += other.reopens;
        self.rotations += other.rotations;
    }

    /// Total records dropped by policy.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    /// Records dropped of `kind`.
    pub fn dropped_of(&self, kind: EventKind) -> u64 {
        self.dropped.get(kind.index()).copied().unwrap_or(0)
    }

    /// Records committed of `kind`.
    pub fn records_of(&self, kind: EventKind) -> u64 {
        self.records.get(kind.index()).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visit_and_merge() {
        let mut a = OutputStats::default();
        a.records[EventKind::Alert.index()] = 2;
        a.dropped[EventKind::Flow.index()] = 5;
        a.blocked_ns = 3_000;
        let mut b = a.clone();
        b.merge(&a);
        assert_eq!(b.records_of(EventKind::Alert), 4);
        assert_eq!(b.dropped_of(EventKind::Flow), 10);
        let mut names = Vec::new();
        b.visit(&mut |n, v| names.push((n.to_string(), v)));
        assert!(names.contains(&("output.eve.dropped.flow".to_string(), 10)));
        assert!(names.contains(&("output.eve.blocked_us".to_string(), 6)));
        assert!(names.iter().all(|(n, _)| n.starts_with("output.eve.")));
        let mut uniq: Vec<_> = names.iter().map(|(n, _)| n.clone()).collect();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), names.len());
    }
}
