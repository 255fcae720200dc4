//! The sensor configuration: one typed tree whose sections each belong to the crate that
//! uses them. Assembling it from shrike's YAML, a `suricata.yaml` and `--set` overrides is the
//! binary's job (`src/config.rs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use shrike_output::config::OutputConfig;

/// Detection-side settings; each section is owned by the shrike-detect crate.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DetectConfig {
    /// Decoder: checksum validation, VLAN tracking, VXLAN ports, layer limit.
    pub decoder: shrike_packet::config::DecodeConfig,
    /// Flow table size and idle timeouts per protocol and state.
    pub flow: shrike_flow::config::FlowConfig,
    /// Detection engine: alert options, per-packet alert limit, inspection limits.
    pub engine: shrike_detect::EngineConfig,
    /// TCP session tracking and reassembly (Suricata's `stream:`).
    pub stream: shrike_stream::StreamConfig,
    /// OS policy per host group for TCP reassembly and defrag (Suricata's `host-os-policy:`).
    pub host_os_policy: shrike_stream::config::HostOsPolicyConfig,
    /// IP defragmentation on the reader (Suricata's `defrag:`).
    pub defrag: shrike_packet::defrag::DefragConfig,
    /// Options of the EVE `dns` and `tls` records (Suricata's `eve-log.types` entries).
    pub app_log: shrike_app::eve_config::AppLogConfig,
    /// App-layer parser settings (Suricata's `app-layer.protocols.*`).
    pub app_layer: AppLayerSettings,
}

/// App-layer parser settings.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AppLayerSettings {
    /// HTTP parser (Suricata's `app-layer.protocols.http.libhtp.default-config`): body
    /// limits and inspection sizes, decompression layers, URI decoding, field limits.
    pub http: shrike_app::http::HttpConfig,
}

/// The whole sensor configuration. Every section has built-in defaults, so no file at all works.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SensorConfig {
    /// Where logs go when `-l` is not given.
    pub default_log_dir: Option<PathBuf>,
    /// Capture interfaces, one entry per NIC.
    pub interfaces: Vec<InterfaceConfig>,
    /// Detect workers for file reading (live interfaces carry their own thread counts).
    pub workers: WorkersConfig,
    /// Address and port variables used by rules.
    pub vars: VarsConfig,
    /// Rule files and the classification/reference/threshold files.
    pub rules: RulesConfig,
    /// Decoder, flow, stream, app-layer and detection settings.
    pub detect: DetectConfig,
    /// EVE, fast.log and stats.log.
    pub output: OutputConfig,
    /// Periodic stats records.
    pub stats: StatsConfig,
    /// Control socket (Suricata's `unix-command`).
    pub unix_command: crate::ops::UnixCommandConfig,
    /// User and group to switch to once the capture sockets are open (Suricata's `run-as`).
    pub run_as: crate::ops::RunAsConfig,
    /// Prometheus endpoint.
    pub metrics: crate::ops::MetricsConfig,
}

/// One capture interface (a NIC), shaped per NIC: name, capture method, runmode, threads and
/// CPUs, plus the method's own section (`af-packet:` ring and fanout, or `dpdk:` EAL, port and
/// queues) owned by the capture crate.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// Interface name (`eth0`) or DPDK port identifier.
    pub name: String,
    /// `af-packet` (default) or `dpdk`.
    pub capture: Option<String>,
    /// `workers` (each worker owns a ring; default) or `dispatch` (a capture thread hashes
    /// flows to the workers over SPSC queues).
    pub runmode: Option<String>,
    /// Worker threads for this interface (default: every CPU the process may use).
    pub threads: Option<usize>,
    /// CPUs to pin the workers to, in order.
    pub cpus: Vec<usize>,
    /// AF_PACKET ring geometry, fanout, filters.
    pub af_packet: Option<shrike_capture::AfPacketConfig>,
    /// DPDK EAL arguments, port, queues, mempool, RSS.
    pub dpdk: Option<shrike_capture::DpdkConfig>,
}

/// Detect workers used when reading files.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct WorkersConfig {
    /// Number of workers; `None` means every CPU the process may use.
    pub count: Option<usize>,
    /// `dispatch` (default) or `single` (one thread, no queues).
    pub runmode: Runmode,
    /// CPUs to pin the workers to, in order (default: the allowed CPUs in order).
    pub cpus: Vec<usize>,
    /// Batches in flight per reader→worker queue.
    pub queue_depth: usize,
    /// Packets per batch.
    pub batch_packets: usize,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig {
            count: None,
            runmode: Runmode::Dispatch,
            cpus: Vec::new(),
            queue_depth: 8,
            batch_packets: 256,
        }
    }
}

/// How packets reach the detect workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runmode {
    /// A reader thread hashes each flow to one of N pinned workers over SPSC queues.
    #[default]
    Dispatch,
    /// One thread reads, decodes and inspects (Suricata's `--runmode single`).
    Single,
    /// Each worker owns its own capture ring (live capture); for files, the same as dispatch.
    Workers,
}

impl Runmode {
    /// Parse a `--runmode` value, accepting Suricata's names.
    pub fn parse(s: &str) -> Option<Runmode> {
        match s {
            "single" => Some(Runmode::Single),
            "dispatch" | "autofp" => Some(Runmode::Dispatch),
            "workers" => Some(Runmode::Workers),
            _ => None,
        }
    }
}

/// `vars:` as Suricata's.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct VarsConfig {
    pub address_groups: BTreeMap<String, String>,
    pub port_groups: BTreeMap<String, String>,
}

/// Rule files.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RulesConfig {
    /// Directory that relative `rule-files` are resolved against.
    pub default_rule_path: Option<PathBuf>,
    pub rule_files: Vec<PathBuf>,
    pub classification_file: Option<PathBuf>,
    pub reference_config_file: Option<PathBuf>,
    pub threshold_file: Option<PathBuf>,
}

/// Periodic stats.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct StatsConfig {
    pub enabled: bool,
    /// Seconds between stats records.
    pub interval: u64,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            enabled: true,
            interval: 8,
        }
    }
}
