//! Host-scoped detection state shared by every worker of an engine: thresholds and detection
//! filters (Suricata's `by_src`, `by_dst`, `by_both`, `by_rule` counters), host bits and host
//! tags. Keyed by host (or rule), never by worker, so a count does not depend on which worker
//! saw the packet.
//!
//! Which packet a decision falls on still depends on the order the workers reach the state.
//! Live capture takes them as they come (as Suricata does). File mode installs a
//! [`HostGate`]: before a packet touches this state its worker waits until every packet
//! before it (in input order) has been processed, so the decisions follow packet order and
//! the output is the same whatever the worker count.

use std::sync::{Mutex, MutexGuard};

use super::hostbits::HostBits;
use super::tag::HostTags;
use super::threshold::ThresholdState;

/// Orders host-state decisions across workers (file mode).
pub trait HostGate: Send + Sync + std::fmt::Debug {
    /// Return once every input position before `order` has been processed by every worker
    /// (`order` is the position of the entry the calling worker is processing).
    fn wait_turn(&self, order: u64);
}

/// The state itself.
#[derive(Debug, Default)]
pub struct HostShared {
    thresholds: Mutex<ThresholdState>,
    hostbits: Mutex<HostBits>,
    host_tags: Mutex<HostTags>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked holding the lock left consistent maps (no partial updates that
    // matter): keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HostShared {
    /// Threshold and detection-filter counters.
    pub fn thresholds(&self) -> MutexGuard<'_, ThresholdState> {
        lock(&self.thresholds)
    }

    /// Host bits.
    pub fn hostbits(&self) -> MutexGuard<'_, HostBits> {
        lock(&self.hostbits)
    }

    /// Host tags.
    pub fn host_tags(&self) -> MutexGuard<'_, HostTags> {
        lock(&self.host_tags)
    }
}
