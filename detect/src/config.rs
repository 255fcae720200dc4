//! Detection-engine settings (serde, kebab-case keys as in Suricata where they overlap).
//!
//! ```yaml
//! engine:
//!   packet-alert-max: 15              # Suricata `packet-alert-max`
//!   inspection-recursion-limit: 3000  # Suricata `detect.inspection-recursion-limit`
//!   midstream: no                     # Suricata `stream.midstream` (TCP sessions without SYN)
//!   mpm-algo: auto                    # Suricata `mpm-algo`: auto | ac | hs
//!   mpm-cache-dir: /var/cache/shrike/mpm   # compiled Hyperscan databases (~: none)
//!   pcre:                             # Suricata's top-level `pcre:` section
//!     match-limit: 3500               # PCRE2 match limit per search
//!     match-limit-recursion: 1500     # PCRE2 depth limit per search
//!   alert:                            # Suricata eve-log `types: - alert:` options
//!     payload: no
//!     payload-printable: no
//!     packet: no
//!     metadata: yes
//!     tagged-packets: no
//!     ethernet: no                    # Suricata eve-log `ethernet:` (the `ether` object)
//!     payload-buffer-size: 4kb        # stream data logged with stream/transaction alerts
//! ```

use serde::{Deserialize, Serialize};

/// What an EVE `alert` record carries besides the always-present fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AlertOutputConfig {
    /// `payload`: the packet payload, base64.
    pub payload: bool,
    /// `payload-printable`: the payload with non-printable bytes as `.`.
    pub payload_printable: bool,
    /// `packet`: the whole packet, base64, with `packet_info.linktype`.
    pub packet: bool,
    /// `metadata`: the rule's `metadata` keyword as an object of arrays (Suricata's default: on).
    pub metadata: bool,
    /// `tagged-packets`: log packets covered by a `tag` as EVE `packet` records.
    pub tagged_packets: bool,
    /// `ethernet` (an eve-log option in Suricata): the `ether` object with the packet's MAC
    /// addresses.
    pub ethernet: bool,
    /// `payload-buffer-size`: most bytes of stream data logged as the payload of a stream
    /// or transaction alert (Suricata's default 4 KiB).
    #[serde(deserialize_with = "shrike_stream::config::de_size")]
    pub payload_buffer_size: u64,
}

impl Default for AlertOutputConfig {
    fn default() -> Self {
        AlertOutputConfig {
            payload: false,
            payload_printable: false,
            packet: false,
            metadata: true,
            tagged_packets: false,
            ethernet: false,
            payload_buffer_size: 4096,
        }
    }
}

/// Detection-engine settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Alerts kept per packet (Suricata's `packet-alert-max`, default 15); more are counted in
    /// `detect.alert_queue_overflow`.
    pub packet_alert_max: usize,
    /// Payload-inspection step limit per buffer (Suricata's
    /// `detect.inspection-recursion-limit`, default 3000).
    pub inspection_recursion_limit: u32,
    /// Treat TCP sessions picked up without a SYN as established after their first packet
    /// (Suricata's `stream.midstream`, default off).
    pub midstream: bool,
    /// Port groups kept apart per protocol and direction before the rest are merged (the
    /// role of Suricata's `detect.profile` group limits).
    pub max_port_groups: usize,
    /// EVE alert record options.
    pub alert: AlertOutputConfig,
    /// Multi-pattern matcher of the prefilter (Suricata's `mpm-algo`): `auto` (= `ac`),
    /// `ac` (Aho-Corasick) or `hs` (Hyperscan, in builds with the `hyperscan` feature).
    pub mpm_algo: super::prefilter::MpmAlgo,
    /// Where compiled Hyperscan databases are kept between runs (`~`: no cache). A cached
    /// database loads in microseconds instead of compiling for tens of milliseconds.
    pub mpm_cache_dir: Option<std::path::PathBuf>,
    /// Bounds of one `pcre` search (Suricata's `pcre.match-limit` and
    /// `pcre.match-limit-recursion`); searches stopped by them are counted.
    pub pcre: shrike_rules::matcher::PcreLimits,
    /// Suricata's `ignore-unknown-requirements`: an unknown `requires` key does not skip
    /// the rule.
    pub ignore_unknown_requirements: bool,
    /// The features `requires` sees (`ja3`, `ja4`, `output::file-store`), set by the
    /// caller from the rest of the configuration.
    #[serde(skip)]
    pub features: Vec<String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            packet_alert_max: 15,
            inspection_recursion_limit: shrike_rules::matcher::DEFAULT_STEP_LIMIT,
            midstream: false,
            max_port_groups: 64,
            alert: AlertOutputConfig::default(),
            mpm_algo: super::prefilter::MpmAlgo::Auto,
            mpm_cache_dir: Some(std::path::PathBuf::from(
                super::prefilter::DEFAULT_CACHE_DIR,
            )),
            pcre: shrike_rules::matcher::PcreLimits::default(),
            ignore_unknown_requirements: false,
            features: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_keys() {
        let c: EngineConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, EngineConfig::default());
        assert_eq!(c.packet_alert_max, 15);
        assert!(c.alert.metadata);
        let c: EngineConfig = serde_json::from_str(
            r#"{"midstream":true,"packet-alert-max":3,"alert":{"payload":true,"payload-printable":true,"packet":true,"metadata":false}}"#,
        )
        .unwrap();
        assert!(c.midstream && c.alert.payload && c.alert.payload_printable && c.alert.packet);
        assert!(!c.alert.metadata);
        assert_eq!(c.alert.payload_buffer_size, 4096);
        let c: EngineConfig =
            serde_json::from_str(r#"{"alert":{"payload-buffer-size":"8kb"}}"#).unwrap();
        assert_eq!(c.alert.payload_buffer_size, 8192);
        assert!(serde_json::from_str::<EngineConfig>(r#"{"bogus":1}"#).is_err());
    }
}
