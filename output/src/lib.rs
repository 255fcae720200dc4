//! shrike-output: Suricata-compatible EVE JSON, fast.log and stats output.
//!
//! * [`json::JsonWriter`]: hand-rolled streaming JSON writer (Suricata's escaping rules).
//! * [`eve`]: timestamps, addresses, the common EVE header and `alert`/`flow`/`stats` builders.
//! * [`buffer::EveBuffer`]: a worker's buffer of whole records; [`output::EveOutput`]: the
//!   worker's handle that also moves full buffers to the sink.
//! * [`sink`]: shared (`O_APPEND`) or per-worker EVE files.
//! * [`fast`]: fast.log lines.
//! * [`config`]: serde config types; [`stats::OutputStats`]: counters.

pub mod buffer;
pub mod config;
pub mod error;
pub mod eve;
pub mod fast;
pub mod json;
pub mod output;
pub mod pipeline;
pub mod sink;
pub mod sinks;
pub mod stats;
pub mod statslog;

pub use buffer::{EveBuffer, EventKind, Record, DEFAULT_BUFFER_SIZE};
pub use config::{AnomalyConfig, EveConfig, FastConfig, Layout, OutputConfig, StatsLogConfig};
pub use error::OutputError;
pub use json::{JsonError, JsonWriter, Mark};
pub use output::EveOutput;
pub use pipeline::{EvePipeline, StallWatch};
pub use sink::{EveSink, FileWriter};
pub use stats::OutputStats;
