//! Settings of the live sources: AF_PACKET ([`AfPacketConfig`]) and DPDK ([`DpdkConfig`]).
//!
//! Keys follow Suricata's `af-packet:` and `dpdk:` sections where they overlap (`cluster-id`,
//! `cluster-type`, `defrag`, `block-size`, `ring-size`, `block-timeout`, `disable-promisc`,
//! `bpf-filter`, `mempool-size`, `rx-descriptors` …), plus shrike's own names. Booleans accept
//! YAML 1.1 words (`yes`/`no`/`on`/`off`) and sizes accept Suricata's suffixes (`128kb`, `1mb`).
//!
//! ```yaml
//! interfaces:
//!   - name: eth1
//!     capture: af-packet
//!     threads: 4
//!     cluster-id: 99
//!     cluster-type: cluster_flow   # or hash | qm | cpu | lb | cluster_qm ...
//!     defrag: yes
//!     block-size: 1mb
//!     block-count: 64
//!     block-timeout: 10            # ms
//!     poll-timeout: 100            # ms
//!     bpf-filter: "not port 22"    # needs the `bpf-compile` feature; or bpf-program
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a fanout group spreads packets over its sockets (`cluster-type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClusterType {
    /// `cluster_flow` / `hash`: `PACKET_FANOUT_HASH`, the kernel's symmetric flow hash, so both
    /// directions of a flow reach the same socket. Suricata's default.
    #[default]
    Hash,
    /// `cluster_qm` / `qm`: by the RX queue the NIC recorded (pair with symmetric RSS).
    Qm,
    /// `cluster_cpu` / `cpu`: by the CPU that received the packet.
    Cpu,
    /// `cluster_round_robin` / `lb`: round robin (breaks flows; for tests and benchmarks).
    Lb,
    /// `cluster_random` / `random`: random socket (breaks flows).
    Random,
}

impl ClusterType {
    /// Parses Suricata's `cluster_*` names and shrike's short names. `cluster_rollover`, which
    /// Suricata 7 maps to `cluster_flow` (ticket #6128), is accepted the same way.
    pub fn parse(s: &str) -> Option<ClusterType> {
        Some(match s {
            "cluster_flow" | "hash" | "flow" | "cluster_rollover" => ClusterType::Hash,
            "cluster_qm" | "qm" => ClusterType::Qm,
            "cluster_cpu" | "cpu" => ClusterType::Cpu,
            "cluster_round_robin" | "lb" | "round-robin" => ClusterType::Lb,
            "cluster_random" | "random" => ClusterType::Random,
            _ => return None,
        })
    }

    /// The kernel's `PACKET_FANOUT_*` mode.
    pub fn fanout_mode(self) -> u32 {
        match self {
            ClusterType::Hash => libc::PACKET_FANOUT_HASH,
            ClusterType::Qm => libc::PACKET_FANOUT_QM,
            ClusterType::Cpu => libc::PACKET_FANOUT_CPU,
            ClusterType::Lb => libc::PACKET_FANOUT_LB,
            ClusterType::Random => libc::PACKET_FANOUT_RND,
        }
    }

    /// Suricata's name.
    pub fn name(self) -> &'static str {
        match self {
            ClusterType::Hash => "cluster_flow",
            ClusterType::Qm => "cluster_qm",
            ClusterType::Cpu => "cluster_cpu",
            ClusterType::Lb => "cluster_round_robin",
            ClusterType::Random => "cluster_random",
        }
    }
}

impl Serialize for ClusterType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ClusterType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ClusterType::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown cluster-type `{s}`: expected cluster_flow, cluster_qm, cluster_cpu, \
                 cluster_round_robin, cluster_random (or hash, qm, cpu, lb, random)"
            ))
        })
    }
}

/// One AF_PACKET interface: ring geometry, fanout and filters. Defaults follow Suricata's
/// `af-packet` section except where noted.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AfPacketConfig {
    /// Interface name (Suricata's `interface`). The binary usually passes the name separately.
    #[serde(alias = "name")]
    pub interface: String,
    /// Sockets (worker threads) for this interface; `None` lets the caller decide.
    pub threads: Option<usize>,
    /// Fanout group id, unique per interface within a network namespace (Suricata: 99).
    pub cluster_id: u16,
    /// Fanout mode (Suricata: `cluster_flow`).
    pub cluster_type: ClusterType,
    /// `PACKET_FANOUT_FLAG_DEFRAG`: reassemble IPv4 fragments before hashing so fragments
    /// follow their flow (Suricata: yes for passive capture).
    #[serde(deserialize_with = "de::boolish")]
    pub defrag: bool,
    /// Bytes per ring block: a multiple of the page size (Suricata: 32 pages = 128 KiB).
    /// Keep it at least 65561 with `defrag` so a reassembled datagram fits.
    #[serde(deserialize_with = "de::size")]
    pub block_size: u64,
    /// Blocks per ring. Exclusive with `ring-size`; default 32 when neither is set.
    pub block_count: Option<u32>,
    /// Suricata's `ring-size`: packets (frames) per ring; blocks = frames / frames-per-block + 1.
    pub ring_size: Option<u32>,
    /// Frame size of the ring geometry (multiple of 16). In TPACKET_V3 packets are packed into
    /// blocks by their real size; this only sets `tp_frame_nr`.
    #[serde(deserialize_with = "de::size")]
    pub frame_size: u64,
    /// `tp_retire_blk_tov` in ms: a partly filled block goes to user space after this long
    /// (Suricata: 10). 0 lets the kernel choose from the link speed.
    pub block_timeout: u32,
    /// `poll()` timeout in ms when the ring is empty, so the worker's timers run on an idle
    /// link (Suricata's POLL_TIMEOUT: 100).
    pub poll_timeout: u32,
    /// Promiscuous mode via `PACKET_ADD_MEMBERSHIP` (shrike's name; default on).
    #[serde(deserialize_with = "de::opt_boolish")]
    pub promisc: Option<bool>,
    /// Suricata's inverse of `promisc`.
    #[serde(deserialize_with = "de::opt_boolish")]
    pub disable_promisc: Option<bool>,
    /// A BPF filter expression (tcpdump syntax); compiled with libpcap, which needs the
    /// `bpf-compile` feature. Use `bpf-program` otherwise.
    pub bpf_filter: Option<String>,
    /// A compiled classic BPF program in `tcpdump -ddd` form: the instruction count, then one
    /// `code jt jf k` line per instruction.
    pub bpf_program: Option<String>,
    /// Lock the ring in memory (`MAP_LOCKED`); falls back to an unlocked ring when
    /// RLIMIT_MEMLOCK is too low (see `RingInfo::locked`). Suricata's key, default on here.
    #[serde(deserialize_with = "de::boolish")]
    pub mmap_locked: bool,
    /// Accepted for Suricata compatibility; the ring is always mmap'ed.
    #[serde(deserialize_with = "de::opt_boolish")]
    pub use_mmap: Option<bool>,
    /// Accepted for Suricata compatibility; shrike always uses TPACKET_V3.
    #[serde(deserialize_with = "de::opt_boolish")]
    pub tpacket_v3: Option<bool>,
    /// Milliseconds between reopen attempts after the interface went down (Suricata: 500).
    pub reopen_interval: u32,
}

impl Default for AfPacketConfig {
    fn default() -> Self {
        AfPacketConfig {
            interface: String::new(),
            threads: None,
            cluster_id: 99,
            cluster_type: ClusterType::Hash,
            defrag: true,
            block_size: 32 * 4096,
            block_count: None,
            ring_size: None,
            frame_size: 2048,
            block_timeout: 10,
            poll_timeout: 100,
            promisc: None,
            disable_promisc: None,
            bpf_filter: None,
            bpf_program: None,
            mmap_locked: true,
            use_mmap: None,
            tpacket_v3: None,
            reopen_interval: 500,
        }
    }
}

/// The ring geometry after validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingGeometry {
    /// Bytes per block.
    pub block_size: u32,
    /// Blocks in the ring.
    pub block_count: u32,
    /// Frame size (geometry only in V3).
    pub frame_size: u32,
    /// Block retire timeout in ms.
    pub block_timeout: u32,
}

impl RingGeometry {
    /// Total ring bytes.
    pub fn ring_bytes(&self) -> usize {
        self.block_size as usize * self.block_count as usize
    }
}

/// Default block count when neither `block-count` nor `ring-size` is given.
pub const DEFAULT_BLOCK_COUNT: u32 = 32;

impl AfPacketConfig {
    /// Promiscuous mode after combining `promisc` and `disable-promisc`.
    pub fn promisc_enabled(&self) -> Result<bool, String> {
        match (self.promisc, self.disable_promisc) {
            (Some(p), Some(d)) if p == d => {
                Err("promisc and disable-promisc contradict each other".into())
            }
            (Some(p), _) => Ok(p),
            (None, Some(d)) => Ok(!d),
            (None, None) => Ok(true),
        }
    }

    /// Checks the ring settings against the kernel's rules (packet_mmap.rst) and returns the
    /// geometry. Errors name the key.
    pub fn geometry(&self) -> Result<RingGeometry, String> {
        let page = page_size();
        let bs = self.block_size;
        if bs == 0 || bs % page != 0 {
            return Err(format!(
                "block-size {bs} must be a positive multiple of the page size ({page})"
            ));
        }
        if bs > u32::MAX as u64 / 2 {
            return Err(format!("block-size {bs} is too large"));
        }
        let fs = self.frame_size;
        let min_frame = libc::TPACKET3_HDRLEN as u64;
        if fs % 16 != 0 || fs < min_frame || fs > bs {
            return Err(format!(
                "frame-size {fs} must be a multiple of 16, at least {min_frame} and at most \
                 block-size ({bs})"
            ));
        }
        let frames_per_block = bs / fs;
        let count = match (self.block_count, self.ring_size) {
            (Some(_), Some(_)) => {
                return Err("block-count and ring-size are exclusive: set one".into())
            }
            (Some(c), None) => c,
            (None, Some(r)) => (r as u64 / frames_per_block + 1).min(u32::MAX as u64) as u32,
            (None, None) => DEFAULT_BLOCK_COUNT,
        };
        if count == 0 {
            return Err("block-count must be at least 1".into());
        }
        let total = bs.saturating_mul(count as u64);
        let frames = frames_per_block.saturating_mul(count as u64);
        if frames > u32::MAX as u64 || total > (1u64 << 40) {
            return Err(format!(
                "ring of {count} blocks of {bs} bytes is too large ({total} bytes)"
            ));
        }
        if self.poll_timeout == 0 {
            return Err("poll-timeout must be at least 1 ms".into());
        }
        Ok(RingGeometry {
            block_size: bs as u32,
            block_count: count,
            frame_size: fs as u32,
            block_timeout: self.block_timeout,
        })
    }

    /// Non-fatal advice in Suricata's spirit (each line names the key).
    pub fn lints(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.defrag && self.block_size < 65561 {
            out.push(format!(
                "block-size {} is below 65561: with defrag a reassembled datagram may not fit",
                self.block_size
            ));
        }
        if matches!(self.cluster_type, ClusterType::Lb | ClusterType::Random) {
            out.push(format!(
                "cluster-type {} spreads the packets of a flow over several workers",
                self.cluster_type.name()
            ));
        }
        if self.use_mmap == Some(false) {
            out.push("use-mmap: no is ignored; shrike always uses an mmap'ed ring".into());
        }
        if self.tpacket_v3 == Some(false) {
            out.push("tpacket-v3: no is ignored; shrike always uses TPACKET_V3".into());
        }
        out
    }
}

/// DPDK settings: EAL arguments and one port's queues and mempool.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DpdkConfig {
    /// EAL arguments: a list (`["--no-huge", "-l", "0"]`) or Suricata's map form
    /// (`{ no-huge: true, vdev: [a, b], l: "0" }` → `--no-huge --vdev a --vdev b -l 0`).
    pub eal_params: EalParams,
    /// Port by device name (PCI address `0000:3b:00.0` or vdev `net_pcap0`); Suricata's key.
    #[serde(alias = "name")]
    pub interface: Option<String>,
    /// Port by number (used when `interface` is not given; default 0).
    pub port: Option<u16>,
    /// Worker threads for this port (Suricata's `threads`); `None` lets the caller decide.
    pub threads: Option<usize>,
    /// RX queues; default: one per worker.
    pub rx_queues: Option<u16>,
    /// RX descriptors per queue (Suricata: 1024).
    pub rx_descriptors: u16,
    /// Mbufs in the port's mempool (Suricata: 65535).
    pub mempool_size: u32,
    /// Per-lcore mempool cache (Suricata: "auto"; here 256).
    pub mempool_cache_size: u32,
    /// Symmetric RSS key as hex bytes (`6d:5a:...`); default the 40-byte `6D5A` repeated key.
    pub rss_key: Option<String>,
    /// Promiscuous mode (Suricata: yes).
    #[serde(deserialize_with = "de::boolish")]
    pub promisc: bool,
    /// Packets per `rte_eth_rx_burst` (at most 512).
    pub burst_size: u16,
    /// Microseconds to sleep after an empty burst; 0 spins (the DPDK default).
    pub idle_sleep_us: u32,
    /// MTU to set on the port; `None` leaves the driver's.
    pub mtu: Option<u16>,
}

impl Default for DpdkConfig {
    fn default() -> Self {
        DpdkConfig {
            eal_params: EalParams::default(),
            interface: None,
            port: None,
            threads: None,
            rx_queues: None,
            rx_descriptors: 1024,
            mempool_size: 65535,
            mempool_cache_size: 256,
            rss_key: None,
            promisc: true,
            burst_size: 32,
            idle_sleep_us: 0,
            mtu: None,
        }
    }
}

/// The symmetric Toeplitz key: `0x6D5A` repeated over 40 bytes (both directions of a flow
/// hash alike).
pub const SYMMETRIC_RSS_KEY: [u8; 40] = {
    let mut k = [0u8; 40];
    let mut i = 0;
    while i < 40 {
        k[i] = if i % 2 == 0 { 0x6d } else { 0x5a };
        i += 1;
    }
    k
};

impl DpdkConfig {
    /// The RSS key bytes (parsed `rss-key` or [`SYMMETRIC_RSS_KEY`]).
    pub fn rss_key_bytes(&self) -> Result<Vec<u8>, String> {
        let Some(s) = &self.rss_key else {
            return Ok(SYMMETRIC_RSS_KEY.to_vec());
        };
        let hex: String = s.chars().filter(|c| *c != ':' && *c != ' ').collect();
        if hex.len() % 2 != 0 || hex.is_empty() {
            return Err(format!(
                "rss-key `{s}`: expected hex bytes like 6d:5a:6d:5a"
            ));
        }
        (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
                    .ok_or_else(|| format!("rss-key `{s}`: `{}` is not hex", &hex[i..]))
            })
            .collect()
    }

    /// Validates the numbers and returns the first problem, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.burst_size == 0 || self.burst_size > 512 {
            return Err(format!("burst-size {} must be 1..=512", self.burst_size));
        }
        if self.rx_descriptors == 0 {
            return Err("rx-descriptors must be at least 1".into());
        }
        if self.mempool_size == 0 {
            return Err("mempool-size must be at least 1".into());
        }
        if self.mempool_cache_size > 512 {
            return Err(format!(
                "mempool-cache-size {} exceeds DPDK's limit of 512",
                self.mempool_cache_size
            ));
        }
        if self.rx_queues == Some(0) {
            return Err("rx-queues must be at least 1".into());
        }
        self.rss_key_bytes().map(|_| ())
    }
}

/// EAL arguments in either accepted form.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum EalParams {
    /// No arguments.
    #[default]
    None,
    /// Arguments as given.
    List(Vec<String>),
    /// Suricata's map form.
    Map(std::collections::BTreeMap<String, EalValue>),
}

/// One value of the map form of [`EalParams`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum EalValue {
    /// A flag (`true` adds `--key`, `false` omits it).
    Flag(bool),
    /// A number.
    Num(i64),
    /// A value.
    One(String),
    /// A repeated option.
    Many(Vec<String>),
}

impl EalParams {
    /// The arguments as passed to `rte_eal_init` (without the program name).
    pub fn to_args(&self) -> Vec<String> {
        match self {
            EalParams::None => Vec::new(),
            EalParams::List(v) => v.clone(),
            EalParams::Map(m) => {
                let mut out = Vec::new();
                for (k, v) in m {
                    let key = if k.starts_with('-') {
                        k.clone()
                    } else if k.len() == 1 {
                        format!("-{k}")
                    } else {
                        format!("--{k}")
                    };
                    match v {
                        EalValue::Flag(true) => out.push(key),
                        EalValue::Flag(false) => {}
                        EalValue::Num(n) => out.extend([key, n.to_string()]),
                        EalValue::One(s) => out.extend([key, s.clone()]),
                        EalValue::Many(vs) => {
                            for s in vs {
                                out.extend([key.clone(), s.clone()]);
                            }
                        }
                    }
                }
                out
            }
        }
    }
}

/// The system page size.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Lenient deserializers for Suricata-style values.
mod de {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum BoolLike {
        B(bool),
        N(i64),
        S(String),
    }

    fn to_bool<E: serde::de::Error>(v: BoolLike) -> Result<bool, E> {
        match v {
            BoolLike::B(b) => Ok(b),
            BoolLike::N(0) => Ok(false),
            BoolLike::N(1) => Ok(true),
            BoolLike::N(n) => Err(E::custom(format!("expected a boolean, got {n}"))),
            BoolLike::S(s) => match s.to_ascii_lowercase().as_str() {
                "yes" | "on" | "true" | "1" | "y" => Ok(true),
                "no" | "off" | "false" | "0" | "n" => Ok(false),
                _ => Err(E::custom(format!("expected yes/no, got `{s}`"))),
            },
        }
    }

    /// `yes`/`no`/`on`/`off`/`true`/`false`/`1`/`0`.
    pub fn boolish<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        to_bool(BoolLike::deserialize(d)?)
    }

    /// Like [`boolish`], optional.
    pub fn opt_boolish<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        to_bool(BoolLike::deserialize(d)?).map(Some)
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum SizeLike {
        N(u64),
        S(String),
    }

    /// A byte count: a number or a string with Suricata's suffixes (`kb`, `mb`, `gb`, `kib` …).
    pub fn size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match SizeLike::deserialize(d)? {
            SizeLike::N(n) => Ok(n),
            SizeLike::S(s) => parse_size(&s)
                .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not a size"))),
        }
    }

    pub(super) fn parse_size(s: &str) -> Option<u64> {
        let s = s.trim().to_ascii_lowercase();
        let (num, mul) = [
            ("kib", 1u64 << 10),
            ("kb", 1 << 10),
            ("mib", 1 << 20),
            ("mb", 1 << 20),
            ("gib", 1 << 30),
            ("gb", 1 << 30),
            ("b", 1),
        ]
        .iter()
        .find_map(|(suf, m)| s.strip_suffix(suf).map(|n| (n.trim().to_string(), *m)))
        .unwrap_or((s.clone(), 1));
        num.parse::<u64>().ok()?.checked_mul(mul)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names() {
        let table = [
            ("cluster_flow", ClusterType::Hash),
            ("hash", ClusterType::Hash),
            ("cluster_rollover", ClusterType::Hash),
            ("cluster_qm", ClusterType::Qm),
            ("qm", ClusterType::Qm),
            ("cluster_cpu", ClusterType::Cpu),
            ("cpu", ClusterType::Cpu),
            ("cluster_round_robin", ClusterType::Lb),
            ("lb", ClusterType::Lb),
            ("cluster_random", ClusterType::Random),
        ];
        for (s, want) in table {
            assert_eq!(ClusterType::parse(s), Some(want), "{s}");
        }
        assert_eq!(ClusterType::parse("cluster_ebpf"), None);
        assert_eq!(ClusterType::Hash.fanout_mode(), 0);
        assert_eq!(ClusterType::Qm.fanout_mode(), 5);
    }

    #[test]
    fn sizes() {
        for (s, want) in [
            ("128kb", Some(131072)),
            ("1mb", Some(1 << 20)),
            ("1 MiB", Some(1 << 20)),
            ("4096", Some(4096)),
            ("2gb", Some(2 << 30)),
            ("x", None),
            ("-1", None),
        ] {
            assert_eq!(de::parse_size(s), want, "{s}");
        }
    }

    #[test]
    fn geometry_rules() {
        let ok = AfPacketConfig::default().geometry().unwrap();
        assert_eq!(ok.block_size, 131072);
        assert_eq!(ok.block_count, DEFAULT_BLOCK_COUNT);
        let ring = AfPacketConfig {
            ring_size: Some(1000),
            ..Default::default()
        };
        // 64 frames of 2048 per 128 KiB block: 1000/64 + 1 = 16 blocks.
        assert_eq!(ring.geometry().unwrap().block_count, 16);
        let bad = [
            AfPacketConfig {
                block_size: 5000,
                ..Default::default()
            },
            AfPacketConfig {
                frame_size: 2050,
                ..Default::default()
            },
            AfPacketConfig {
                frame_size: 32,
                ..Default::default()
            },
            AfPacketConfig {
                block_count: Some(4),
                ring_size: Some(4),
                ..Default::default()
            },
            AfPacketConfig {
                block_count: Some(0),
                ..Default::default()
            },
            AfPacketConfig {
                poll_timeout: 0,
                ..Default::default()
            },
        ];
        for c in bad {
            assert!(c.geometry().is_err(), "{c:?}");
        }
    }

    #[test]
    fn promisc_combinations() {
        let mut c = AfPacketConfig::default();
        assert_eq!(c.promisc_enabled(), Ok(true));
        c.disable_promisc = Some(true);
        assert_eq!(c.promisc_enabled(), Ok(false));
        c.promisc = Some(true);
        assert!(c.promisc_enabled().is_err());
        c.disable_promisc = None;
        c.promisc = Some(false);
        assert_eq!(c.promisc_enabled(), Ok(false));
    }

    #[test]
    fn rss_key() {
        let c = DpdkConfig::default();
        let k = c.rss_key_bytes().unwrap();
        assert_eq!(k.len(), 40);
        assert_eq!(&k[..4], &[0x6d, 0x5a, 0x6d, 0x5a]);
        let c = DpdkConfig {
            rss_key: Some("6d:5a:01:FF".into()),
            ..Default::default()
        };
        assert_eq!(c.rss_key_bytes().unwrap(), vec![0x6d, 0x5a, 0x01, 0xff]);
        for bad in ["6d:5", "zz", ""] {
            let c = DpdkConfig {
                rss_key: Some(bad.into()),
                ..Default::default()
            };
            assert!(c.rss_key_bytes().is_err(), "{bad}");
        }
    }

    #[test]
    fn eal_map_form() {
        let mut m = std::collections::BTreeMap::new();
        m.insert("no-huge".to_string(), EalValue::Flag(true));
        m.insert("in-memory".to_string(), EalValue::Flag(false));
        m.insert("l".to_string(), EalValue::One("0".into()));
        m.insert("m".to_string(), EalValue::Num(256));
        m.insert(
            "vdev".to_string(),
            EalValue::Many(vec!["net_pcap0,rx_pcap=a".into(), "net_null0".into()]),
        );
        let args = EalParams::Map(m).to_args();
        assert_eq!(
            args,
            [
                "-l",
                "0",
                "-m",
                "256",
                "--no-huge",
                "--vdev",
                "net_pcap0,rx_pcap=a",
                "--vdev",
                "net_null0"
            ]
        );
    }
}
