//! Stream engine configuration (Suricata's `stream:` section, key names as in
//! `suricata.yaml`), plus the `host-os-policy` table.
//!
//! ```yaml
//! stream:
//!   memcap: 64mb                 # sessions (per engine: the binary divides by workers)
//!   midstream: false
//!   async-oneside: false
//!   max-synack-queued: 5
//!   max-syn-queued: 10
//!   inline: false                # stream inline (IPS) mode
//!   reassembly:
//!     memcap: 256mb              # segment data and bookkeeping (per engine)
//!     depth: 1mb                 # 0 = unlimited
//!     toserver-chunk-size: 2560
//!     toclient-chunk-size: 2560
//!     check-overlap-different-data: true
//! host-os-policy:                # separate top-level section in suricata.yaml
//!   windows: [0.0.0.0/0]
//!   linux: ["10.0.0.0/8"]
//! ```

use serde::{Deserialize, Serialize};

pub use shrike_packet::config::{de_size, parse_size};

use shrike_packet::policy::{HostOsPolicy, OsPolicy, PolicyError};

/// `stream:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct StreamConfig {
    /// Session memory cap in bytes (`stream.memcap`, default 64 MiB).
    #[serde(deserialize_with = "de_size")]
    pub memcap: u64,
    /// Pick up sessions without a handshake (`stream.midstream`, default false).
    pub midstream: bool,
    /// Track sessions where only one direction is seen (`stream.async-oneside`).
    pub async_oneside: bool,
    /// SYN/ACKs remembered per session before `3whs_synack_flood` (default 5).
    pub max_synack_queued: u8,
    /// Differing resent SYNs remembered per session before `3whs_syn_flood` (default 10).
    pub max_syn_queued: u8,
    /// Stream inline mode (`stream.inline`, Suricata's IPS stream handling): a packet's data
    /// goes to the app layer and to raw inspection with the packet itself, not once the
    /// other side acknowledges it. Gaps are still declared only when acknowledged.
    pub inline: bool,
    /// `stream.reassembly`.
    pub reassembly: ReassemblyConfig,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            memcap: 64 << 20,
            midstream: false,
            async_oneside: false,
            max_synack_queued: 5,
            max_syn_queued: 10,
            inline: false,
            reassembly: ReassemblyConfig::default(),
        }
    }
}

/// `stream.reassembly`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct ReassemblyConfig {
    /// Segment memory cap in bytes (default 256 MiB).
    #[serde(deserialize_with = "de_size")]
    pub memcap: u64,
    /// Bytes reassembled per direction; 0 = unlimited (default 1 MiB).
    #[serde(deserialize_with = "de_size")]
    pub depth: u64,
    /// Acked to-server bytes that trigger raw inspection (default 2560).
    #[serde(deserialize_with = "de_size")]
    pub toserver_chunk_size: u64,
    /// Acked to-client bytes that trigger raw inspection (default 2560).
    #[serde(deserialize_with = "de_size")]
    pub toclient_chunk_size: u64,
    /// Compare overlapping data and raise `reassembly_overlap_different_data` (Suricata
    /// enables this when a rule uses the event; shrike defaults to on).
    pub check_overlap_different_data: bool,
}

impl Default for ReassemblyConfig {
    fn default() -> Self {
        ReassemblyConfig {
            memcap: 256 << 20,
            depth: 1 << 20,
            toserver_chunk_size: 2560,
            toclient_chunk_size: 2560,
            check_overlap_different_data: true,
        }
    }
}

/// `host-os-policy:` as a map of policy name to addresses/CIDRs.
pub type HostOsPolicyConfig = std::collections::BTreeMap<String, Vec<String>>;

/// Builds the lookup table from the YAML map.
pub fn host_os_policy(cfg: &HostOsPolicyConfig) -> Result<HostOsPolicy, PolicyError> {
    HostOsPolicy::from_map(
        cfg.iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str))),
    )
}

/// The default policy when no table entry matches.
pub const DEFAULT_OS_POLICY: OsPolicy = OsPolicy::Bsd;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1mb"), Some(1 << 20));
        assert_eq!(parse_size("64KiB"), Some(64 << 10));
        assert_eq!(parse_size("2gb"), Some(2 << 30));
        assert_eq!(parse_size("100"), Some(100));
        assert_eq!(parse_size("x"), None);
        let c: StreamConfig = serde_json::from_str(
            r#"{"memcap":"32mb","midstream":true,"reassembly":{"depth":0,"memcap":"1mb"}}"#,
        )
        .unwrap();
        assert_eq!(c.memcap, 32 << 20);
        assert!(c.midstream);
        assert_eq!(c.reassembly.depth, 0);
        assert_eq!(c.reassembly.memcap, 1 << 20);
        assert_eq!(c.reassembly.toserver_chunk_size, 2560);
        assert!(serde_json::from_str::<StreamConfig>(r#"{"bogus":1}"#).is_err());
        let mut m = HostOsPolicyConfig::new();
        m.insert("linux".into(), vec!["10.0.0.0/8".into()]);
        assert!(!host_os_policy(&m).unwrap().is_empty());
    }
}
