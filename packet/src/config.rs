//! Configuration of the decoder (serde, Suricata YAML key names), and the size syntax shared
//! by every section (`64kb`, `1mb`).
//!
//! ```yaml
//! decoder:
//!   checksum-validation: no      # shrike's switch for Suricata's `-k all` / `-k none`
//!   max-layers: 16               # Suricata `decoder.max-layers`
//!   vxlan: { enabled: yes, ports: "[4789]" }
//!   vlan: { use-for-tracking: yes }   # Suricata's top-level `vlan.use-for-tracking`
//! flow:
//!   max-flows: 1000000           # per worker
//!   timeouts:                    # same shape as Suricata's `flow-timeouts:`
//!     default: { new: 30, established: 300, closed: 0 }
//!     tcp: { new: 60, established: 600, closed: 60 }
//!     udp: { new: 30, established: 300 }
//!     icmp: { new: 30, established: 300 }
//! ```
//! The flow hash seed is not configuration: it is random per run.

use serde::{Deserialize, Deserializer, Serialize};

/// Decoder settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DecodeConfig {
    /// Verify TCP/UDP/ICMP checksums (`-k all`); IPv4 header checksums are always checked.
    pub checksum_validation: bool,
    /// Maximum number of decoded layers (Suricata `decoder.max-layers`, default 16).
    pub max_layers: u16,
    /// VXLAN decoding.
    pub vxlan: VxlanConfig,
    /// Geneve decoding (`decoder.geneve`).
    pub geneve: GeneveConfig,
    /// Teredo decoding (`decoder.teredo`).
    pub teredo: TeredoConfig,
    /// VLAN handling.
    pub vlan: VlanConfig,
}

impl Default for DecodeConfig {
    fn default() -> Self {
        DecodeConfig {
            checksum_validation: false,
            max_layers: 16,
            vxlan: VxlanConfig::default(),
            geneve: GeneveConfig::default(),
            teredo: TeredoConfig::default(),
            vlan: VlanConfig::default(),
        }
    }
}

/// `decoder.vxlan`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct VxlanConfig {
    /// Decode VXLAN at all.
    pub enabled: bool,
    /// UDP ports (source or destination, as Suricata's `DecodeVXLANEnabledForPort`)
    /// carrying VXLAN: a number, a list, or Suricata's string form
    /// (`"4789"`, `"[8472, 4789]"`). An unresolved `$VXLAN_PORTS` means the default (4789).
    #[serde(deserialize_with = "de_ports")]
    pub ports: Vec<u16>,
}

impl Default for VxlanConfig {
    fn default() -> Self {
        VxlanConfig {
            enabled: true,
            ports: vec![4789],
        }
    }
}

/// `decoder.geneve`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct GeneveConfig {
    /// Decode Geneve at all.
    pub enabled: bool,
    /// UDP ports (source or destination) carrying Geneve (Suricata's default 6081; at most
    /// 4 are used, as Suricata).
    #[serde(deserialize_with = "de_ports")]
    pub ports: Vec<u16>,
}

impl Default for GeneveConfig {
    fn default() -> Self {
        GeneveConfig {
            enabled: true,
            ports: vec![6081],
        }
    }
}

/// `decoder.teredo`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct TeredoConfig {
    /// Decode Teredo at all.
    pub enabled: bool,
    /// UDP ports (source or destination) carrying Teredo; empty: every port (Suricata
    /// without `ports`, or `any`). Default 3544, as the stock `suricata.yaml`
    /// (`$TEREDO_PORTS`).
    #[serde(deserialize_with = "de_ports_any")]
    pub ports: Vec<u16>,
}

impl Default for TeredoConfig {
    fn default() -> Self {
        TeredoConfig {
            enabled: true,
            ports: vec![3544],
        }
    }
}

fn de_ports_any<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u16>, D::Error> {
    match PortsRepr::deserialize(d)? {
        PortsRepr::One(p) => Ok(vec![p]),
        PortsRepr::List(v) => Ok(v),
        PortsRepr::Text(s) if s.trim().eq_ignore_ascii_case("any") => Ok(Vec::new()),
        PortsRepr::Text(s) => parse_port_list(&s).map_err(serde::de::Error::custom),
    }
}

/// `vlan` (Suricata's top-level key).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct VlanConfig {
    /// Use VLAN ids in the flow key.
    pub use_for_tracking: bool,
}

impl Default for VlanConfig {
    fn default() -> Self {
        VlanConfig {
            use_for_tracking: true,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PortsRepr {
    One(u16),
    List(Vec<u16>),
    Text(String),
}

/// Parses Suricata's port-list strings: `4789`, `[8472, 4789]`, `$VXLAN_PORTS`.
pub fn parse_port_list(s: &str) -> Result<Vec<u16>, String> {
    let s = s.trim();
    if s.starts_with('$') {
        return Ok(vec![4789]);
    }
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s);
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u16>().map_err(|e| format!("bad port {p:?}: {e}")))
        .collect()
}

fn de_ports<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u16>, D::Error> {
    match PortsRepr::deserialize(d)? {
        PortsRepr::One(p) => Ok(vec![p]),
        PortsRepr::List(v) => Ok(v),
        PortsRepr::Text(s) => parse_port_list(&s).map_err(serde::de::Error::custom),
    }
}

/// Reads Suricata sizes: a number or a string such as `64kb`, `1mb`, `2gb`.
pub fn de_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum S {
        N(u64),
        T(String),
    }
    match S::deserialize(d)? {
        S::N(n) => Ok(n),
        S::T(t) => {
            parse_size(&t).ok_or_else(|| serde::de::Error::custom(format!("invalid size {t:?}")))
        }
    }
}

/// Parses `64kb`, `1mb`, `2gb`, `512` (bytes).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mul) = if let Some(n) = s.strip_suffix("kib").or(s.strip_suffix("kb")) {
        (n, 1u64 << 10)
    } else if let Some(n) = s.strip_suffix("mib").or(s.strip_suffix("mb")) {
        (n, 1 << 20)
    } else if let Some(n) = s.strip_suffix("gib").or(s.strip_suffix("gb")) {
        (n, 1 << 30)
    } else if let Some(n) = s.strip_suffix('b') {
        (n, 1)
    } else {
        (s.as_str(), 1)
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mul)
}
