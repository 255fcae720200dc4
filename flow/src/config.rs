//! Configuration of the flow table (serde, Suricata YAML key names).
//!
//! ```yaml
//! flow:
//!   max-flows: 1000000           # per worker
//!   emergency-recovery: 30       # Suricata `flow.emergency-recovery` (percent)
//!   timeouts:                    # same shape as Suricata's `flow-timeouts:`
//!     default: { new: 30, established: 300, closed: 0 }
//!     tcp: { new: 60, established: 600, closed: 60 }
//!     udp: { new: 30, established: 300 }
//!     icmp: { new: 30, established: 300 }
//! ```
//! The flow hash seed is not configuration: it is random per run.

use serde::{Deserialize, Serialize};

/// Flow table settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FlowConfig {
    /// Maximum number of flows per worker. A new flow finding the table full puts the
    /// table in emergency mode (the `emergency-*` timeouts apply, `flow.emerg_mode_entered`)
    /// and evicts one flow that is no longer alive (reason "forced", `flow.get_used`):
    /// half-open flows first, then closed ones, then established ones, oldest activity
    /// first; when all are still alive the packet has no flow (`flow.get_used_failed`).
    pub max_flows: usize,
    /// Suricata's `flow.emergency-recovery`: emergency mode ends once this percentage of
    /// `max-flows` is free again (1 to 100, default 30).
    pub emergency_recovery: u8,
    /// Idle timeouts (Suricata's `flow-timeouts:` shape).
    pub timeouts: FlowTimeouts,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            max_flows: 1_000_000,
            emergency_recovery: 30,
            timeouts: FlowTimeouts::default(),
        }
    }
}

/// One `flow-timeouts` section, in seconds. Missing values fall back to Suricata's
/// built-in defaults of that protocol. The emergency values apply while the flow table
/// is in emergency mode; the bypass values are accepted for compatibility with
/// `suricata.yaml` and not used.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct TimeoutSection {
    /// Flow seen in one direction only.
    pub new: Option<u32>,
    /// Flow seen in both directions.
    pub established: Option<u32>,
    /// Flow closed (TCP FIN/RST both ways).
    pub closed: Option<u32>,
    /// Bypassed flows.
    pub bypassed: Option<u32>,
    /// Emergency-mode `new`.
    pub emergency_new: Option<u32>,
    /// Emergency-mode `established`.
    pub emergency_established: Option<u32>,
    /// Emergency-mode `closed`.
    pub emergency_closed: Option<u32>,
    /// Emergency-mode `bypassed`.
    pub emergency_bypassed: Option<u32>,
}

/// Suricata's `flow-timeouts:` mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FlowTimeouts {
    /// Protocols without their own section.
    pub default: TimeoutSection,
    /// TCP.
    pub tcp: TimeoutSection,
    /// UDP.
    pub udp: TimeoutSection,
    /// ICMPv4 and ICMPv6.
    pub icmp: TimeoutSection,
    /// SCTP (accepted; falls back to `default`).
    pub sctp: TimeoutSection,
}

/// Resolved timeouts of one protocol, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// `new`.
    pub new: u32,
    /// `established`.
    pub established: u32,
    /// `closed`.
    pub closed: u32,
}

/// Protocol classes with their own timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeoutProto {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// ICMPv4/ICMPv6.
    Icmp,
    /// Everything else.
    Other,
}

impl TimeoutProto {
    /// Class of IP protocol `p`.
    pub fn of(p: u8) -> TimeoutProto {
        match p {
            6 => TimeoutProto::Tcp,
            17 => TimeoutProto::Udp,
            1 | 58 => TimeoutProto::Icmp,
            _ => TimeoutProto::Other,
        }
    }
}

impl FlowTimeouts {
    /// Resolves the timeouts of `p`: the protocol's section, else Suricata 7's built-in
    /// value for that protocol (default 30/300/0, tcp 60/600/60, udp 30/300, icmp 30/300).
    /// Protocols without a section use `default`.
    pub fn resolve(&self, p: TimeoutProto) -> Timeouts {
        let (s, (n, e, c)) = match p {
            TimeoutProto::Tcp => (&self.tcp, (60, 600, 60)),
            TimeoutProto::Udp => (&self.udp, (30, 300, 0)),
            TimeoutProto::Icmp => (&self.icmp, (30, 300, 0)),
            TimeoutProto::Other => (&self.default, (30, 300, 0)),
        };
        Timeouts {
            new: s.new.unwrap_or(n),
            established: s.established.unwrap_or(e),
            closed: s.closed.unwrap_or(c),
        }
    }

    /// The emergency-mode timeouts of `p` (`emergency-new`, `emergency-established`,
    /// `emergency-closed`), else Suricata 7's built-in values (tcp 10/100/5, others
    /// 10/100/0).
    pub fn resolve_emergency(&self, p: TimeoutProto) -> Timeouts {
        let (s, c) = match p {
            TimeoutProto::Tcp => (&self.tcp, 5),
            TimeoutProto::Udp => (&self.udp, 0),
            TimeoutProto::Icmp => (&self.icmp, 0),
            TimeoutProto::Other => (&self.default, 0),
        };
        Timeouts {
            new: s.emergency_new.unwrap_or(10),
            established: s.emergency_established.unwrap_or(100),
            closed: s.emergency_closed.unwrap_or(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shrike_packet::config::{parse_port_list, DecodeConfig, VxlanConfig};

    #[test]
    fn suricata_defaults() {
        let t = FlowTimeouts::default();
        let r = |p| t.resolve(p);
        assert_eq!(
            r(TimeoutProto::Tcp),
            Timeouts {
                new: 60,
                established: 600,
                closed: 60
            }
        );
        assert_eq!(
            r(TimeoutProto::Udp),
            Timeouts {
                new: 30,
                established: 300,
                closed: 0
            }
        );
        assert_eq!(
            r(TimeoutProto::Icmp),
            Timeouts {
                new: 30,
                established: 300,
                closed: 0
            }
        );
        assert_eq!(
            r(TimeoutProto::Other),
            Timeouts {
                new: 30,
                established: 300,
                closed: 0
            }
        );
        let d = DecodeConfig::default();
        assert_eq!(d.max_layers, 16);
        assert_eq!(d.vxlan.ports, vec![4789]);
        assert!(d.vlan.use_for_tracking);
    }

    #[test]
    fn overrides() {
        let mut t = FlowTimeouts::default();
        t.default.new = Some(5);
        t.udp.established = Some(7);
        assert_eq!(
            t.resolve(TimeoutProto::Udp),
            Timeouts {
                new: 30,
                established: 7,
                closed: 0
            }
        );
        assert_eq!(t.resolve(TimeoutProto::Other).new, 5);
        assert_eq!(t.resolve(TimeoutProto::Tcp).new, 60);
    }

    #[test]
    fn port_lists() {
        assert_eq!(parse_port_list("4789"), Ok(vec![4789]));
        assert_eq!(parse_port_list("[8472, 4789]"), Ok(vec![8472, 4789]));
        assert_eq!(parse_port_list("$VXLAN_PORTS"), Ok(vec![4789]));
        assert!(parse_port_list("[x]").is_err());
    }

    #[test]
    fn serde_kebab_and_unknown_fields() {
        let c: DecodeConfig = serde_json::from_str(
            r#"{"checksum-validation": true, "vxlan": {"ports": "[1, 2]"}, "vlan": {"use-for-tracking": false}}"#,
        )
        .unwrap();
        assert!(c.checksum_validation && !c.vlan.use_for_tracking);
        assert_eq!(c.vxlan.ports, vec![1, 2]);
        assert!(c.vxlan.enabled);
        assert!(serde_json::from_str::<DecodeConfig>(r#"{"checksum": true}"#).is_err());
        let f: FlowConfig = serde_json::from_str(
            r#"{"max-flows": 10, "timeouts": {"tcp": {"new": 1, "emergency-new": 2}}}"#,
        )
        .unwrap();
        assert_eq!(f.max_flows, 10);
        assert_eq!(f.timeouts.resolve(TimeoutProto::Tcp).new, 1);
        assert_eq!(f.emergency_recovery, 30);
        let e = f.timeouts.resolve_emergency(TimeoutProto::Tcp);
        assert_eq!((e.new, e.established, e.closed), (2, 100, 5));
        let e = f.timeouts.resolve_emergency(TimeoutProto::Udp);
        assert_eq!((e.new, e.established, e.closed), (10, 100, 0));
        let v: VxlanConfig = serde_json::from_str(r#"{"ports": 8472}"#).unwrap();
        assert_eq!(v.ports, vec![8472]);
    }
}
