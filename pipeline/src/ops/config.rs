//! Configuration of the operations features, with Suricata's key names where Suricata has
//! the feature (`unix-command:`, `run-as:`) and shrike's own otherwise (`metrics:`).
//!
//! ```yaml
//! unix-command:
//!   enabled: auto            # auto: on for live capture, off when reading files
//!   filename: ~              # default /run/shrike/<instance>.sock; relative to /run/shrike
//! run-as:
//!   user: shrike             # drop to this user after the capture sockets are open
//!   group: shrike
//! metrics:
//!   enabled: no
//!   listen: 127.0.0.1:9571
//! ```

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Directory of control sockets (the systemd unit's `RuntimeDirectory=shrike`).
pub const RUN_DIR: &str = "/run/shrike";

/// Default Prometheus endpoint (loopback only).
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:9571";

/// Suricata's tri-state switch: `yes`, `no` or `auto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Toggle {
    /// Decide from the run mode (on for live capture, off for files).
    #[default]
    Auto,
    /// Always on.
    Yes,
    /// Always off.
    No,
}

impl Toggle {
    /// Whether the feature is on, given whether the sensor captures live.
    pub fn enabled(self, live: bool) -> bool {
        match self {
            Toggle::Auto => live,
            Toggle::Yes => true,
            Toggle::No => false,
        }
    }

    /// Parses `auto` and Suricata's truth words (`yes`/`no`/`true`/`false`/`on`/`off`/`1`/`0`).
    pub fn parse(s: &str) -> Option<Toggle> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Toggle::Auto),
            "yes" | "true" | "on" | "1" => Some(Toggle::Yes),
            "no" | "false" | "off" | "0" => Some(Toggle::No),
            _ => None,
        }
    }
}

impl fmt::Display for Toggle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Toggle::Auto => "auto",
            Toggle::Yes => "yes",
            Toggle::No => "no",
        })
    }
}

impl Serialize for Toggle {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Toggle {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            B(bool),
            S(String),
        }
        match Repr::deserialize(d)? {
            Repr::B(true) => Ok(Toggle::Yes),
            Repr::B(false) => Ok(Toggle::No),
            Repr::S(s) => Toggle::parse(&s).ok_or_else(|| {
                serde::de::Error::custom(format!("expected yes, no or auto, got `{s}`"))
            }),
        }
    }
}

/// `unix-command:`: the control socket.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct UnixCommandConfig {
    /// `auto` (default: on when capturing live), `yes` or `no`.
    pub enabled: Toggle,
    /// Socket path; relative paths are under `/run/shrike`. Default `/run/shrike/<instance>.sock`.
    pub filename: Option<PathBuf>,
}

impl UnixCommandConfig {
    /// The socket path for `instance` (see [`instance_name`]).
    pub fn socket_path(&self, instance: &str) -> PathBuf {
        match &self.filename {
            Some(p) if p.is_absolute() => p.clone(),
            Some(p) => Path::new(RUN_DIR).join(p),
            None => Path::new(RUN_DIR).join(format!("{instance}.sock")),
        }
    }
}

/// `run-as:`: the user and group to switch to once the capture sockets are open.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RunAsConfig {
    /// User name or number; unset: keep the user shrike was started as.
    pub user: Option<String>,
    /// Group name or number; unset: the user's primary group.
    pub group: Option<String>,
}

impl RunAsConfig {
    /// True when a switch is configured.
    pub fn is_set(&self) -> bool {
        self.user.is_some() || self.group.is_some()
    }
}

/// `metrics:`: the Prometheus endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `GET /metrics` (default no).
    pub enabled: bool,
    /// Address and port to listen on (default `127.0.0.1:9571`, loopback only).
    pub listen: String,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: false,
            listen: DEFAULT_METRICS_LISTEN.into(),
        }
    }
}

impl MetricsConfig {
    /// The parsed listen address; the error names the key.
    pub fn listen_addr(&self) -> Result<SocketAddr, String> {
        self.listen.parse().map_err(|e| {
            format!(
                "metrics.listen `{}`: {e} (expected address:port, e.g. 127.0.0.1:9571 or [::1]:9571)",
                self.listen
            )
        })
    }
}

/// The instance name: the stem of the configuration file (`/etc/shrike/eth1.yaml` → `eth1`,
/// as the systemd unit's `%i`), or `shrike` without one.
pub fn instance_name(config: Option<&Path>) -> String {
    config
        .and_then(|p| p.file_stem())
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| "shrike".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggle_words() {
        for (s, want) in [
            ("auto", Some(Toggle::Auto)),
            ("yes", Some(Toggle::Yes)),
            ("On", Some(Toggle::Yes)),
            ("1", Some(Toggle::Yes)),
            ("no", Some(Toggle::No)),
            ("false", Some(Toggle::No)),
            ("maybe", None),
        ] {
            assert_eq!(Toggle::parse(s), want, "{s}");
        }
        assert!(Toggle::Auto.enabled(true) && !Toggle::Auto.enabled(false));
        assert!(Toggle::Yes.enabled(false) && !Toggle::No.enabled(true));
        let t: Toggle = serde_json::from_str("true").unwrap();
        assert_eq!(t, Toggle::Yes);
        let t: Toggle = serde_json::from_str("\"auto\"").unwrap();
        assert_eq!(t, Toggle::Auto);
        assert!(serde_json::from_str::<Toggle>("\"sometimes\"").is_err());
        assert_eq!(serde_json::to_string(&Toggle::No).unwrap(), "\"no\"");
    }

    #[test]
    fn socket_paths() {
        let c = UnixCommandConfig::default();
        assert_eq!(
            c.socket_path("eth1"),
            PathBuf::from("/run/shrike/eth1.sock")
        );
        let c = UnixCommandConfig {
            filename: Some("custom.socket".into()),
            ..Default::default()
        };
        assert_eq!(
            c.socket_path("eth1"),
            PathBuf::from("/run/shrike/custom.socket")
        );
        let c = UnixCommandConfig {
            filename: Some("/tmp/x.sock".into()),
            ..Default::default()
        };
        assert_eq!(c.socket_path("eth1"), PathBuf::from("/tmp/x.sock"));
        assert_eq!(
            instance_name(Some(Path::new("/etc/shrike/eth1.yaml"))),
            "eth1"
        );
        assert_eq!(instance_name(None), "shrike");
    }

    #[test]
    fn sections_parse_strictly() {
        let u: UnixCommandConfig =
            serde_json::from_str(r#"{"enabled": "yes", "filename": "a.sock"}"#).unwrap();
        assert_eq!(u.enabled, Toggle::Yes);
        assert!(serde_json::from_str::<UnixCommandConfig>(r#"{"file": "a"}"#).is_err());
        let r: RunAsConfig = serde_json::from_str(r#"{"user": "shrike"}"#).unwrap();
        assert!(r.is_set() && r.group.is_none());
        assert!(!RunAsConfig::default().is_set());
        let m = MetricsConfig::default();
        assert!(!m.enabled);
        assert!(m.listen_addr().unwrap().ip().is_loopback());
        let bad = MetricsConfig {
            listen: "localhost".into(),
            ..Default::default()
        };
        assert!(bad.listen_addr().unwrap_err().contains("metrics.listen"));
    }
}
