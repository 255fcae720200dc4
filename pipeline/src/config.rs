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
    /// MQTT parser (Suricata's `app-layer.protocols.mqtt`): `max-msg-length`, `max-tx`.
    pub mqtt: shrike_app::mqtt::MqttConfig,
    /// PostgreSQL parser (Suricata's `app-layer.protocols.pgsql`): `enabled`, `max-tx`.
    pub pgsql: shrike_app::pgsql::PgsqlConfig,
    /// SMTP parser and MIME decoder (Suricata's `app-layer.protocols.smtp`).
    pub smtp: shrike_app::smtp::SmtpSettings,
    /// FTP parser (Suricata's `app-layer.protocols.ftp`: `max-tx`, `max-line-length`).
    pub ftp: shrike_app::ftp::FtpConfig,
    /// SMB parser limits (Suricata's `app-layer.protocols.smb`: `max-read-size`,
    /// `max-write-size`, the read and write queue sizes and counts, `max-tx`,
    /// `stream-depth`).
    pub smb: shrike_app::smb::SmbConfig,
    /// SSH parser (Suricata's `app-layer.protocols.ssh`: `hassh`).
    pub ssh: shrike_app::ssh::SshConfig,
    /// TLS (Suricata's `app-layer.protocols.tls`: `ja3-fingerprints`, `ja4-fingerprints`).
    pub tls: shrike_app::tls::TlsSettings,
    /// `app-layer.protocols.<name>.enabled` values other than yes, by protocol name:
    /// `no` (neither detected nor parsed) or `detection-only` (detected, not parsed).
    pub enabled: std::collections::BTreeMap<String, String>,
    /// HTTP/2 parser limits (`app-layer.protocols.http2`).
    pub http2: shrike_app::http2::Http2Config,
    /// DNP3 parser (`app-layer.protocols.dnp3`: `enabled`, `max-points`, `max-objects`,
    /// `max-tx`).
    pub dnp3: shrike_app::dnp3::Dnp3Config,
    /// Modbus parser (`app-layer.protocols.modbus`: `enabled`, `request-flood`,
    /// `stream-depth`).
    pub modbus: shrike_app::modbus::ModbusConfig,
    /// NFS parser (`app-layer.protocols.nfs`: `max-tx`).
    pub nfs: shrike_app::nfs::NfsConfig,
    /// DCERPC parser (`app-layer.protocols.dcerpc`: `max-tx`, TCP and UDP).
    pub dcerpc: shrike_app::dcerpc::DcerpcConfig,
    /// `app-layer.protocols.<name>.detection-ports` (key `<name>`, both transports) and
    /// `app-layer.protocols.<name>.<tcp|udp>.detection-ports` (key `<name>.tcp` /
    /// `<name>.udp`): the ports a protocol's probing parser runs on instead of its own.
    pub detection_ports: std::collections::BTreeMap<String, DetectionPorts>,
}

/// One protocol's `detection-ports`: Suricata port lists (`"53"`, `"[80, 8080]"`, `"1024:"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DetectionPorts {
    /// Destination (server) ports.
    pub dp: Option<String>,
    /// Source (client) ports.
    pub sp: Option<String>,
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
    /// The sensor's name, written as `host` in every EVE record (Suricata's `sensor-name`;
    /// `output.eve.sensor-name` overrides it).
    pub sensor_name: Option<String>,
}

impl SensorConfig {
    /// Drop the configured CPUs (`workers.cpus`, `workers.receive-cpus`, each interface's
    /// `cpus`) that this process may not run on, with one warning each: a thread pinned to
    /// them would fail to pin. An empty `allowed` (unknown) checks nothing.
    pub fn drop_unusable_cpus(&mut self, allowed: &[usize]) -> Vec<String> {
        let mut warnings = Vec::new();
        if allowed.is_empty() {
            return warnings;
        }
        let mut check = |what: &str, list: &mut Vec<usize>| {
            let bad: Vec<usize> = list
                .iter()
                .copied()
                .filter(|c| !allowed.contains(c))
                .collect();
            if bad.is_empty() {
                return;
            }
            list.retain(|c| allowed.contains(c));
            warnings.push(format!(
                "{what}: CPU(s) {bad:?} not available to shrike (allowed: {}); {}",
                cpu_list(allowed),
                if list.is_empty() {
                    "the default placement is used"
                } else {
                    "left out"
                }
            ));
        };
        check("workers.cpus", &mut self.workers.cpus);
        check("workers.receive-cpus", &mut self.workers.receive_cpus);
        for i in &mut self.interfaces {
            let what = format!("interfaces.{}.cpus", i.name);
            check(&what, &mut i.cpus);
        }
        warnings
    }

    /// The EVE settings as the output uses them: `sensor-name` from the top level unless
    /// the eve section names one itself (Suricata's deprecated eve-log `sensor-name`).
    pub fn eve_config(&self) -> shrike_output::config::EveConfig {
        let mut eve = self.output.eve.clone();
        if eve.sensor_name.is_none() {
            eve.sensor_name.clone_from(&self.sensor_name);
        }
        eve
    }
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
    /// CPUs to pin the workers to, in order (default: the allowed CPUs in order). Live
    /// interfaces without `cpus` of their own use these too.
    pub cpus: Vec<usize>,
    /// CPUs to pin the readers to (the file reader, live dispatch capture threads), in order
    /// (default: not pinned). Suricata's `receive-cpu-set`.
    pub receive_cpus: Vec<usize>,
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
            receive_cpus: Vec::new(),
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

/// `0-3,6`: a CPU list in ranges.
fn cpu_list(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod cpu_tests {
    use super::*;

    #[test]
    fn unusable_cpus_are_dropped_with_a_warning() {
        let mut c = SensorConfig::default();
        c.workers.cpus = vec![1, 64, 2];
        c.workers.receive_cpus = vec![99];
        let w = c.drop_unusable_cpus(&[0, 1, 2, 3]);
        assert_eq!(c.workers.cpus, vec![1, 2]);
        assert!(c.workers.receive_cpus.is_empty());
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("workers.cpus") && w[0].contains("[64]") && w[0].contains("0-3"),
            "{w:?}"
        );
        assert!(w[1].contains("default placement"), "{w:?}");
        assert!(c.drop_unusable_cpus(&[0, 1, 2, 3]).is_empty());
    }
}
