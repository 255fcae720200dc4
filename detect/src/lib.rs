//! shrike-detect: the detection engine. Suricata rules in (parsed by `shrike-rules`),
//! Suricata-ordered alerts out, over packets, reassembled streams and app-layer transactions.
//!
//! * [`Engine::build`] compiles the loaded rules once (immutable, `Send + Sync`, shared by
//!   all workers through an `Arc`), skipping what cannot be enforced yet with a reason.
//! * [`Engine::thread`] gives each worker its [`DetectThread`] (scratch space, threshold
//!   counters, stats).
//! * [`Engine::inspect`] runs one packet: IP-only rules once per flow direction, then the
//!   packet's signature group (port groups, multi-pattern prefilter, non-prefilter list),
//!   then thresholds, suppressions and `pass` in Suricata's signature order.
//! * [`output`] writes EVE `alert` records and fast.log lines for the alerts.
//! * [`setup`] loads rule files, `classification.config` and `threshold.config`.
//!
//! Per-flow state ([`FlowDetect`]) lives in the worker's flow data.

#![forbid(unsafe_code)]

mod app_buffers;
mod app_inspect;
pub use app_inspect::pseudo_meta;
mod build;
mod compile;
pub mod config;
pub mod frames;
mod group;
pub mod host_state;
pub mod hostbits;
mod inspect;
mod iponly;
mod keywords;
pub mod output;
mod packet;
pub mod prefilter;
#[cfg(feature = "hyperscan")]
pub mod prefilter_hs;
pub mod reload;
pub mod setup;
mod xbits;

/// The Hyperscan database cache's counters since the process started: entries loaded,
/// entries compiled and stored, entries discarded (a fingerprint or checksum mismatch, a
/// corrupt or linked file: logged, removed and rebuilt). Zeros without Hyperscan.
pub fn mpm_cache_counters() -> (u64, u64, u64) {
    #[cfg(feature = "hyperscan")]
    {
        let (hits, misses, _) = prefilter_hs::cache_stats();
        (hits, misses, prefilter_hs::cache_rejected())
    }
    #[cfg(not(feature = "hyperscan"))]
    {
        (0, 0, 0)
    }
}
mod sig;
mod stream_inspect;
pub mod tag;
mod threshold;
mod vars;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use build::BuildInput;
pub use compile::SkipReason;
pub use config::{AlertOutputConfig, EngineConfig};
pub use inspect::{Alert, DetectStats, DetectThread, FileStoreReq};
pub use packet::{FlowInput, Packet};
pub use reload::VarRemap;
pub use setup::{EngineSetup, LoadedEngine, NegatedHeaders};
pub use sig::SigInfo;
pub use stream_inspect::StreamData;
pub use threshold::ThresholdState;
pub use vars::{FlowDetect, FlowVars, TcpTrack};

/// A rule that is loaded but not enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRule {
    /// Rule file.
    pub file: Arc<str>,
    /// Line of the rule in the file.
    pub line: u32,
    /// Signature id.
    pub sid: u32,
    /// Why.
    pub reason: SkipReason,
}

impl std::fmt::Display for SkippedRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} sid {}: {}",
            self.file, self.line, self.sid, self.reason
        )
    }
}

/// What [`Engine::build`] did.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    /// Rules given to the build.
    pub rules: usize,
    /// Rules enforced.
    pub loaded: usize,
    /// Rules not enforced, with reasons.
    pub skipped: Vec<SkippedRule>,
    /// Skipped rules per reason.
    pub by_reason: BTreeMap<String, usize>,
    /// IP-only rules (run once per flow direction).
    pub ip_only: usize,
    /// Decoder-event-only rules.
    pub decoder_event: usize,
    /// Rules with a payload fast pattern in the prefilter.
    pub prefiltered: usize,
    /// Signature groups built.
    pub groups: usize,
    /// Rules in the biggest group.
    pub biggest_group: usize,
    /// Distinct TCP/UDP port groups per `[tcp, udp][toclient, toserver]` before merging.
    pub port_groups: [[usize; 2]; 2],
    /// Notes about `threshold.config` entries (unknown sids, `rate_filter`).
    pub warnings: Vec<String>,
    /// Time spent compiling rules.
    pub compile_time: Duration,
    /// Time spent building groups and prefilters.
    pub group_time: Duration,
    /// Part of `group_time` spent building prefilter automatons.
    pub prefilter_time: Duration,
    /// Patterns in all prefilter automatons together.
    pub prefilter_patterns: usize,
}

/// The compiled detection engine (immutable; share it with `Arc`).
#[derive(Debug)]
pub struct Engine {
    sigs: Vec<sig::Sig>,
    iponly: iponly::IpOnlyIndex,
    groups: group::Groups,
    thresholds: Vec<threshold::ThresholdSpec>,
    suppress: Vec<threshold::SuppressSpec>,
    cfg: EngineConfig,
    report: BuildReport,
    /// Some rule has `tag`.
    has_tags: bool,
    /// Some rule has a `tag` on a host (host tags are looked up for every packet).
    has_host_tags: bool,
    /// Some rule checks or sets host bits.
    has_hostbits: bool,
    /// Host-scoped state, shared by every detection context of this engine.
    host: std::sync::Arc<host_state::HostShared>,
    /// Flowbit names by id.
    bit_names: Vec<Box<str>>,
    /// Flowint names by id.
    int_names: Vec<Box<str>>,
    /// Transaction rules.
    app: app_inspect::AppIndex,
    /// `frame:` rules.
    frame_sigs: Box<[u32]>,
}

impl Engine {
    /// What the build did (loaded/skipped counts, groups, timings).
    pub fn report(&self) -> &BuildReport {
        &self.report
    }

    /// Number of enforced signatures.
    pub fn len(&self) -> usize {
        self.sigs.len()
    }

    /// No signature at all.
    pub fn is_empty(&self) -> bool {
        self.sigs.is_empty()
    }

    /// The alert fields of signature `num` (as found in [`Alert::sig`]).
    pub fn sig_info(&self, num: u32) -> Option<&SigInfo> {
        self.sigs.get(num as usize).map(|s| &s.info)
    }

    /// The settings the engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    /// Name of flowbit `id`.
    pub fn flowbit_name(&self, id: u32) -> Option<&str> {
        self.bit_names.get(id as usize).map(|s| &**s)
    }

    /// Name of flowint `id`.
    pub fn flowint_name(&self, id: u32) -> Option<&str> {
        self.int_names.get(id as usize).map(|s| &**s)
    }

    /// Signature ids in engine order (Suricata's internal signature order).
    pub fn sids_in_order(&self) -> impl Iterator<Item = u32> + '_ {
        self.sigs.iter().map(|s| s.info.sid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<Engine>();
        check::<Arc<Engine>>();
    }
}
