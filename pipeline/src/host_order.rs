//! File mode with several workers: host-scoped detection state (thresholds, detection
//! filters, host bits, host tags; shared by every worker, see
//! `shrike_detect::host_state`) is touched in input order, so which packet a
//! threshold or host bit decision falls on is the same whatever the worker count.
//!
//! Every entry the reader queues has a position (`Entry::order`: packet `n` is `2n + 1`, the
//! clock tick before it `2n`). Each worker publishes a floor: it has processed every entry of
//! its own up to that position. A worker about to touch host state at position `j` publishes
//! `j - 1` (everything of its own before `j` is done) and waits until every other worker's
//! floor is at least `j - 1`. A worker with nothing queued cannot raise its floor on its own:
//! the waiter then asks the reader for markers (an entry that carries only a position), which
//! the reader queues for every lane and sends at once, even while it is itself waiting for a
//! full lane ([`crate::dispatch::Dispatcher::serve_markers`]). The waiter with the lowest
//! position can always proceed, so the scheme cannot deadlock; the reader's end of input
//! (a final tick at the highest position) releases everyone.
//!
//! Only packets that touch host state wait; rule sets without such rules never do.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shrike_detect::host_state::HostGate;

/// One worker's floor, on a cache line of its own.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Floor(AtomicU64);

/// The floors of all workers and the reader's marker request.
#[derive(Debug)]
pub struct HostOrder {
    floors: Vec<Floor>,
    /// Raised by a waiting worker; the reader answers with markers.
    pub want: Arc<AtomicBool>,
    /// Times a worker had to wait, and the total wait (ns), for the counters.
    pub waits: AtomicU64,
    pub wait_ns: AtomicU64,
}

impl HostOrder {
    pub fn new(workers: usize) -> Arc<HostOrder> {
        Arc::new(HostOrder {
            floors: (0..workers).map(|_| Floor::default()).collect(),
            want: Arc::new(AtomicBool::new(false)),
            waits: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
        })
    }

    /// Worker `w` has processed every entry of its own up to `order`.
    #[inline]
    pub fn publish(&self, w: usize, order: u64) {
        if let Some(f) = self.floors.get(w) {
            f.0.fetch_max(order, Ordering::AcqRel);
        }
    }

    fn others_reached(&self, w: usize, order: u64) -> bool {
        self.floors
            .iter()
            .enumerate()
            .all(|(i, f)| i == w || f.0.load(Ordering::Acquire) >= order)
    }

    /// The gate of worker `w`.
    pub fn gate(self: &Arc<Self>, w: usize) -> Arc<dyn HostGate> {
        Arc::new(WorkerGate {
            order: Arc::clone(self),
            worker: w,
        })
    }
}

#[derive(Debug)]
struct WorkerGate {
    order: Arc<HostOrder>,
    worker: usize,
}

impl HostGate for WorkerGate {
    fn wait_turn(&self, order: u64) {
        let o = &self.order;
        let before = order.saturating_sub(1);
        o.publish(self.worker, before);
        if o.others_reached(self.worker, before) {
            return;
        }
        let t0 = std::time::Instant::now();
        o.waits.fetch_add(1, Ordering::Relaxed);
        let mut spins = 0u32;
        while !o.others_reached(self.worker, before) {
            o.want.store(true, Ordering::Release);
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else if spins < 128 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        o.wait_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_every_other_floor() {
        let o = HostOrder::new(3);
        let g = o.gate(0);
        o.publish(1, 10);
        o.publish(2, 3);
        let o2 = Arc::clone(&o);
        let h = std::thread::spawn(move || {
            g.wait_turn(11);
            o2.floors[0].0.load(Ordering::Acquire)
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!h.is_finished(), "worker 2 is behind: must wait");
        assert!(o.want.load(Ordering::Acquire), "markers requested");
        o.publish(2, 12);
        assert_eq!(
            h.join().unwrap(),
            10,
            "published its own floor while waiting"
        );
    }
}
