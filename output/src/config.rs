//! Output configuration (serde types, kebab-case keys, unknown keys rejected).
//!
//! Key names follow Suricata's `outputs:` section where they overlap: `eve-log.enabled`,
//! `filename`, `filetype` (`regular`, `unix_dgram`, `unix_stream`, `redis`), `buffer-size`,
//! `redis.{server,port,mode,key}`; `fast.{enabled,filename,append}`;
//! `stats.{enabled,filename,append,totals,threads,null-values}`. shrike adds `layout`
//! (`shared` | `per-worker`, Suricata's `threaded: yes` is `per-worker`) and `flush-interval`.

use serde::{Deserialize, Serialize};

use crate::buffer::DEFAULT_BUFFER_SIZE;

/// How workers share EVE files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// One file opened with `O_APPEND` by all workers; each write is one buffer of whole records.
    #[default]
    Shared,
    /// One file per worker: `eve.<worker>.json`.
    PerWorker,
}

/// Where EVE records go (Suricata's `filetype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
pub enum FileType {
    /// A regular file (`regular`; `file` is accepted too).
    #[default]
    #[serde(rename = "regular", alias = "file")]
    Regular,
    /// A unix datagram socket at `filename`; one record per datagram.
    #[serde(rename = "unix_dgram")]
    UnixDgram,
    /// A unix stream socket at `filename`.
    #[serde(rename = "unix_stream")]
    UnixStream,
    /// A Redis server (see [`RedisConfig`]).
    #[serde(rename = "redis")]
    Redis,
}

/// Redis mode (Suricata's `redis.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
pub enum RedisMode {
    /// `LPUSH` onto a list (`list` and `lpush`).
    #[default]
    #[serde(rename = "lpush", alias = "list")]
    Lpush,
    /// `RPUSH` onto a list.
    #[serde(rename = "rpush")]
    Rpush,
    /// `PUBLISH` on a channel (`channel` and `publish`).
    #[serde(rename = "publish", alias = "channel")]
    Publish,
}

/// Redis output settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RedisConfig {
    /// Server address (default `127.0.0.1`).
    pub server: String,
    /// Server port (default 6379).
    pub port: u16,
    /// List or channel mode.
    pub mode: RedisMode,
    /// Key or channel name (default `suricata`).
    pub key: String,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            server: "127.0.0.1".into(),
            port: 6379,
            mode: RedisMode::Lpush,
            key: "suricata".into(),
        }
    }
}

/// What a worker does with a record when the sink is stalled and no free buffer is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverloadPolicy {
    /// Drop the record and count it.
    Drop,
    /// Wait for a free buffer, counting the time waited.
    Block,
}

/// Overload policy per event kind. Defaults: alerts block, everything else drops
/// (see output/DESIGN.md for why).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct OverloadConfig {
    /// `alert` records.
    pub alert: OverloadPolicy,
    /// `anomaly` records.
    pub anomaly: OverloadPolicy,
    /// `flow` / `netflow` records.
    pub flow: OverloadPolicy,
    /// `stats` records.
    pub stats: OverloadPolicy,
    /// Application-layer protocol records.
    pub protocol: OverloadPolicy,
    /// Everything else.
    pub other: OverloadPolicy,
}

impl Default for OverloadConfig {
    fn default() -> Self {
        OverloadConfig {
            alert: OverloadPolicy::Block,
            anomaly: OverloadPolicy::Drop,
            flow: OverloadPolicy::Drop,
            stats: OverloadPolicy::Drop,
            protocol: OverloadPolicy::Drop,
            other: OverloadPolicy::Drop,
        }
    }
}

/// Segment rotation for per-worker files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RotateConfig {
    /// Start a new segment once the current one holds this many bytes (0 = never).
    pub max_size: u64,
    /// Start a new segment once the current one is this many seconds old (0 = never).
    pub max_age: u64,
}

/// Which anomalies `anomaly` records report (Suricata's `- anomaly: types:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AnomalyTypes {
    /// Decoder events of packets (default no).
    pub decode: bool,
    /// TCP stream events of packets (default no).
    pub stream: bool,
    /// App-layer parser and protocol detection events (default yes).
    pub applayer: bool,
}

impl Default for AnomalyTypes {
    fn default() -> Self {
        AnomalyTypes {
            decode: false,
            stream: false,
            applayer: true,
        }
    }
}

/// `anomaly` record settings (Suricata's eve-log `- anomaly:` options). Whether `anomaly`
/// records are written at all is `types` (the record types) of [`EveConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AnomalyConfig {
    /// The anomalies reported.
    pub types: AnomalyTypes,
    /// Add the first 32 bytes of the packet (`packet`, `packet_info`) to decode and stream
    /// anomalies (default no). As in Suricata it needs `types.decode`: without it the option
    /// is off.
    pub packethdr: bool,
}

impl AnomalyConfig {
    /// Whether packet headers are logged (`packethdr` with `types.decode`, as Suricata).
    pub fn packet_header(&self) -> bool {
        self.packethdr && self.types.decode
    }
}

/// `eve-log` settings.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct EveConfig {
    /// Write EVE at all (default yes).
    pub enabled: bool,
    /// Sink type (default `regular`).
    pub filetype: FileType,
    /// File name, relative to the log directory, or the socket path (default `eve.json`).
    pub filename: String,
    /// Shared file or one file per worker (default `shared`).
    pub layout: Layout,
    /// Bytes a worker buffers before handing the buffer to the writer (default 65536).
    pub buffer_size: usize,
    /// Seconds between timer-driven flushes of partly filled buffers (default 1.0).
    pub flush_interval: f64,
    /// Buffers per worker in the recycled pool (default 8).
    pub pool_size: usize,
    /// Seconds of failed writes without progress (a full disk, a dead socket) after which
    /// the writer counts a stall (`output.eve.stalls`) and drops buffers until a write
    /// succeeds; a run over capture files ends then with an error (default 30, 0: never).
    pub stall_timeout: u64,
    /// Per-event-kind overload policy.
    pub overload: OverloadConfig,
    /// Segment rotation (per-worker layout).
    pub rotate: RotateConfig,
    /// Redis settings (`filetype: redis`).
    pub redis: RedisConfig,
    /// Record types to write, by Suricata's `types:` names (`alert`, `anomaly`, `flow`,
    /// `netflow`, `stats`, `http`, `dns`, `tls`, `files`, ...); `~` (default): every type.
    /// Protocol names switch all protocol records together; names shrike does not produce
    /// switch its remaining records (`files`, `packet`, ...).
    pub types: Option<Vec<String>>,
    /// `anomaly` record options.
    pub anomaly: AnomalyConfig,
    /// Log the flow's variables (flowbits, flowints) as a top-level `metadata` object
    /// (Suricata's eve-log `metadata`, default yes). shrike honours it in `anomaly` records;
    /// alerts follow the alert `metadata` option.
    pub metadata: bool,
    /// `host` field at the end of every record (Suricata's `sensor-name`; the top-level
    /// `sensor-name` fills it when unset here).
    pub sensor_name: Option<String>,
    /// `community_id` (Community ID v1) in flow, netflow, alert, anomaly and protocol records
    /// (default no).
    pub community_id: bool,
    /// Seed of the Community ID hash (default 0).
    pub community_id_seed: u16,
}

impl EveConfig {
    /// Which [`crate::EventKind`]s are written, indexed by `EventKind::index`.
    pub fn enabled_kinds(&self) -> [bool; crate::EventKind::COUNT] {
        use crate::EventKind;
        let Some(types) = &self.types else {
            return [true; EventKind::COUNT];
        };
        let mut on = [false; EventKind::COUNT];
        for t in types {
            let k = match t.as_str() {
                "alert" => EventKind::Alert,
                "anomaly" => EventKind::Anomaly,
                "flow" | "netflow" => EventKind::Flow,
                "stats" => EventKind::Stats,
                "http" | "dns" | "tls" | "smtp" | "ssh" | "ftp" | "smb" | "nfs" | "dhcp"
                | "http2" | "quic" | "krb5" | "snmp" | "sip" | "rdp" | "rfb" | "mqtt" | "pgsql"
                | "ike" | "dcerpc" | "tftp" | "bittorrent-dht" | "dnp3" | "modbus" | "enip" => {
                    EventKind::Protocol
                }
                _ => EventKind::Other,
            };
            on[k.index()] = true;
        }
        on
    }
}

impl EveConfig {
    /// Whether `flow` records are written: when `types` is unset or lists `flow`.
    pub fn logs_flow(&self) -> bool {
        self.types
            .as_ref()
            .is_none_or(|t| t.iter().any(|x| x == "flow"))
    }

    /// Whether `frame` records are written: only when `types` lists `frame` (Suricata's
    /// default configuration has it, disabled).
    pub fn logs_frame(&self) -> bool {
        self.types
            .as_ref()
            .is_some_and(|t| t.iter().any(|x| x == "frame"))
    }

    /// Whether `netflow` records are written: only when `types` lists `netflow` (Suricata's
    /// netflow logger is off unless configured).
    pub fn logs_netflow(&self) -> bool {
        self.types
            .as_ref()
            .is_some_and(|t| t.iter().any(|x| x == "netflow"))
    }
}

impl Default for EveConfig {
    fn default() -> Self {
        EveConfig {
            enabled: true,
            filetype: FileType::Regular,
            filename: "eve.json".into(),
            layout: Layout::Shared,
            buffer_size: DEFAULT_BUFFER_SIZE,
            flush_interval: 1.0,
            pool_size: 8,
            stall_timeout: 30,
            overload: OverloadConfig::default(),
            rotate: RotateConfig::default(),
            redis: RedisConfig::default(),
            types: None,
            anomaly: AnomalyConfig::default(),
            metadata: true,
            sensor_name: None,
            community_id: false,
            community_id_seed: 0,
        }
    }
}

/// `fast` (fast.log) settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FastConfig {
    /// Write fast.log (default yes).
    pub enabled: bool,
    /// File name (default `fast.log`).
    pub filename: String,
    /// Append to an existing file instead of truncating it (default yes).
    pub append: bool,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig {
            enabled: true,
            filename: "fast.log".into(),
            append: true,
        }
    }
}

/// `stats` (stats.log) settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct StatsLogConfig {
    /// Write stats.log (default no).
    pub enabled: bool,
    /// File name (default `stats.log`).
    pub filename: String,
    /// Append to an existing file (default yes).
    pub append: bool,
    /// Log totals over all threads (default yes).
    pub totals: bool,
    /// Log per-thread values (default no).
    pub threads: bool,
    /// Also log counters that are zero (default no).
    pub null_values: bool,
}

impl Default for StatsLogConfig {
    fn default() -> Self {
        StatsLogConfig {
            enabled: false,
            filename: "stats.log".into(),
            append: true,
            totals: true,
            threads: false,
            null_values: false,
        }
    }
}

/// Every output of this crate.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct OutputConfig {
    /// EVE JSON.
    pub eve: EveConfig,
    /// fast.log.
    pub fast: FastConfig,
    /// stats.log.
    pub stats: StatsLogConfig,
    /// The file store (Suricata's `file-store` output, version 2).
    pub file_store: FileStoreConfig,
}

/// `file-store` settings (Suricata's `outputs: - file-store:` version 2).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FileStoreConfig {
    /// Store files (default no): those a `filestore` rule asks for, or all of them with
    /// `force-filestore`.
    pub enabled: bool,
    /// Folder, relative to the log folder unless absolute (default `filestore`).
    pub dir: String,
    /// Store every file (default no).
    pub force_filestore: bool,
    /// `stream-depth`: the reassembly depth a `filestore` match gives the flow's TCP
    /// session (Suricata's `FileReassemblyDepth`, applied as `TcpSessionSetReassemblyDepth`:
    /// only a larger depth, or 0 for unlimited, replaces the session's); default 0.
    pub stream_depth: u64,
    /// `write-fileinfo`: write each stored file's `fileinfo` record next to it, as
    /// `<sha256>.<seconds>.<file id>.json` (default no).
    pub write_fileinfo: bool,
    /// `max-open-files`: most stored files kept open at once; past it a file is reopened
    /// for each write (Suricata's `file_store.open_files_max_hit`); 0 (default): none kept.
    pub max_open_files: u32,
}

impl Default for FileStoreConfig {
    fn default() -> Self {
        FileStoreConfig {
            enabled: false,
            dir: "filestore".into(),
            force_filestore: false,
            stream_depth: 0,
            write_fileinfo: false,
            max_open_files: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_kebab_keys() {
        let c: OutputConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, OutputConfig::default());
        assert_eq!(c.eve.buffer_size, 65536);
        assert_eq!(c.eve.overload.alert, OverloadPolicy::Block);
        assert_eq!(c.eve.overload.flow, OverloadPolicy::Drop);
        assert!(c.eve.anomaly.types.applayer && !c.eve.anomaly.types.decode);
        assert!(!c.eve.anomaly.types.stream && !c.eve.anomaly.packet_header());
        assert!(c.eve.metadata);
        let a: AnomalyConfig =
            serde_json::from_str(r#"{"types":{"decode":true,"applayer":false},"packethdr":true}"#)
                .unwrap();
        assert!(a.types.decode && !a.types.stream && !a.types.applayer && a.packet_header());
        let a: AnomalyConfig =
            serde_json::from_str(r#"{"types":{"stream":true},"packethdr":true}"#).unwrap();
        assert!(a.types.stream && a.types.applayer && !a.packet_header());
        let c: OutputConfig = serde_json::from_str(
            r#"{"eve":{"layout":"per-worker","buffer-size":4096,"flush-interval":0.5,
                "filetype":"unix_dgram","redis":{"mode":"channel","key":"k"},
                "overload":{"flow":"block"},"rotate":{"max-size":1000}},
                "fast":{"enabled":false},"stats":{"null-values":true}}"#,
        )
        .unwrap();
        assert_eq!(c.eve.layout, Layout::PerWorker);
        assert_eq!(c.eve.buffer_size, 4096);
        assert_eq!(c.eve.filetype, FileType::UnixDgram);
        assert_eq!(c.eve.redis.mode, RedisMode::Publish);
        assert_eq!(c.eve.overload.flow, OverloadPolicy::Block);
        assert_eq!(c.eve.rotate.max_size, 1000);
        assert!(!c.fast.enabled);
        assert!(c.stats.null_values);
        let list: RedisConfig = serde_json::from_str(r#"{"mode":"list"}"#).unwrap();
        assert_eq!(list.mode, RedisMode::Lpush);
    }

    #[test]
    fn flow_and_netflow_types() {
        let mut c = EveConfig::default();
        assert!(c.logs_flow() && !c.logs_netflow());
        let set = |t: &[&str]| Some(t.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        c.types = set(&["flow", "netflow"]);
        assert!(c.logs_flow() && c.logs_netflow());
        c.types = set(&["netflow"]);
        assert!(!c.logs_flow() && c.logs_netflow());
        assert!(c.enabled_kinds()[crate::EventKind::Flow.index()]);
        c.types = set(&["alert"]);
        assert!(!c.logs_flow() && !c.logs_netflow());
    }

    #[test]
    fn unknown_keys_rejected() {
        assert!(serde_json::from_str::<OutputConfig>(r#"{"eve":{"bufer-size":1}}"#).is_err());
        assert!(serde_json::from_str::<OutputConfig>(r#"{"eve":{"layout":"threaded"}}"#).is_err());
        assert!(serde_json::from_str::<FastConfig>(r#"{"file":"x"}"#).is_err());
        assert!(
            serde_json::from_str::<OutputConfig>(r#"{"eve":{"anomaly":{"types":{"app":1}}}}"#)
                .is_err()
        );
    }
}
