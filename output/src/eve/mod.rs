//! EVE record helpers: timestamps, addresses, the common header and record builders for
//! `alert`, `anomaly`, `flow`, `netflow` and `stats` records. Builders take plain-data structs
//! defined here, so this
//! crate needs nothing from the others.

pub mod addr;
pub mod alert;
pub mod anomaly;
pub mod community_id;
pub mod flow;
pub mod header;
pub mod netflow;
pub mod stats;
pub mod time;

pub use addr::{ip_string, ipproto, proto_has_ports, proto_name, write_ip, Ipv6Style};
pub use alert::{write_alert_record, AlertFlow, AlertRecord, AlertTunnel};
pub use anomaly::{write_anomaly_record, Anomaly, AnomalyRecord};
pub use community_id::{icmp_ports, CommunityId};
pub use flow::{
    tcp_flags, write_flow_record, FlowEndReason, FlowIcmp, FlowRecord, FlowState, MetadataFn,
    TcpFlowInfo,
};
pub use header::{
    set_ether, set_ip, set_mac, set_timestamp, write_eve_header, AlertFlowInfo, EtherMacs,
    EveHeader,
};
pub use netflow::{netflow_dirs, write_netflow_record, NetflowDir, TtlRange};
pub use stats::{write_stats_record, StatsTree};
pub use time::{iso_string, write_fast, write_iso};
