//! Stats aggregation: each worker publishes a snapshot of its counters now and then (at its
//! stats interval and when it finishes); the stats writer sums the latest snapshots. Workers never
//! share a counter on the packet path.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Counter values by dotted name (`decoder.pkts`, `flow.tcp` …).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    values: BTreeMap<String, u64>,
}

impl Snapshot {
    /// Add `v` to counter `name`.
    pub fn add(&mut self, name: &str, v: u64) {
        if let Some(x) = self.values.get_mut(name) {
            *x += v;
        } else {
            self.values.insert(name.to_string(), v);
        }
    }

    /// Keep the larger of the two values (gauges such as `decoder.max_pkt_size`).
    pub fn max(&mut self, name: &str, v: u64) {
        let x = self.values.entry(name.to_string()).or_insert(0);
        *x = (*x).max(v);
    }

    pub fn get(&self, name: &str) -> u64 {
        self.values.get(name).copied().unwrap_or(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Sum another snapshot into this one.
    pub fn merge(&mut self, other: &Snapshot) {
        for (k, v) in other.iter() {
            if is_gauge(k) {
                self.max(k, v);
            } else {
                self.add(k, v);
            }
        }
    }
}

/// Counters that are maxima or averages rather than sums.
fn is_gauge(name: &str) -> bool {
    name.ends_with("max_pkt_size") || name.ends_with("avg_pkt_size")
}

/// The latest snapshot of every worker.
pub struct StatsBoard {
    slots: Vec<Mutex<Snapshot>>,
    last_ts_ns: AtomicU64,
}

impl StatsBoard {
    pub fn new(workers: usize) -> Self {
        StatsBoard {
            slots: (0..workers)
                .map(|_| Mutex::new(Snapshot::default()))
                .collect(),
            last_ts_ns: AtomicU64::new(0),
        }
    }

    /// Replace worker `i`'s snapshot (called at the worker's stats interval, not per packet).
    pub fn publish(&self, i: usize, snap: Snapshot, ts_ns: u64) {
        if let Some(slot) = self.slots.get(i) {
            if let Ok(mut s) = slot.lock() {
                *s = snap;
            }
        }
        self.last_ts_ns.fetch_max(ts_ns, Ordering::Relaxed);
    }

    /// The latest snapshot of every slot, in slot order (metrics per worker).
    pub fn snapshots(&self) -> Vec<Snapshot> {
        self.slots
            .iter()
            .map(|s| s.lock().map(|g| g.clone()).unwrap_or_default())
            .collect()
    }

    /// Newest packet time any worker has reported.
    pub fn last_ts_ns(&self) -> u64 {
        self.last_ts_ns.load(Ordering::Relaxed)
    }

    /// Sum of all workers' snapshots plus `extra` (the reader's counters).
    pub fn total_with(&self, extra: &Snapshot) -> Snapshot {
        let mut total = Snapshot::default();
        for slot in &self.slots {
            if let Ok(s) = slot.lock() {
                total.merge(&s);
            }
        }
        total.merge(extra);
        file_store_counters(&mut total);
        total
    }
}

/// Suricata's file-store (v2) counters, registered only when the file store is on
/// (`output-filestore.c`): `file_store.open_files_max_hit` (a stored file found
/// `max-open-files` files already open), `file_store.fs_errors` (creating, writing,
/// reopening, renaming or removing a stored file failed) and the global
/// `file_store.open_files` (stored files kept open now). Process-wide counts, not per worker.
fn file_store_counters(total: &mut Snapshot) {
    use std::sync::atomic::Ordering;
    let Some(st) = shrike_app::files::store() else {
        return;
    };
    let (open, max_hits) = shrike_app::files::open_files_counters();
    total.add("file_store.open_files_max_hit", max_hits);
    total.add("file_store.fs_errors", st.errors.load(Ordering::Relaxed));
    total.add("file_store.open_files", u64::from(open));
}

/// A per-run random seed for the flow hash (from the OS's randomised hasher keys).
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_sums_workers_and_keeps_gauges_as_max() {
        let board = StatsBoard::new(2);
        let mut a = Snapshot::default();
        a.add("decoder.pkts", 10);
        a.add("decoder.max_pkt_size", 1500);
        let mut b = Snapshot::default();
        b.add("decoder.pkts", 5);
        b.add("decoder.max_pkt_size", 60);
        board.publish(0, a, 7);
        board.publish(1, b, 3);
        let mut reader = Snapshot::default();
        reader.add("decoder.pkts", 1);
        let t = board.total_with(&reader);
        assert_eq!(t.get("decoder.pkts"), 16);
        assert_eq!(t.get("decoder.max_pkt_size"), 1500);
        assert_eq!(board.last_ts_ns(), 7);
    }

    #[test]
    fn seeds_differ() {
        assert_ne!(random_seed(), random_seed());
    }
}
