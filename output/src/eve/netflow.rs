//! `netflow` records (`event_type: netflow`): one record per direction of a flow, in
//! Suricata 7's field order.
//!
//! Suricata's netflow logger writes a flow as one-way records: the client-to-server one
//! always, the server-to-client one only when packets went that way. Each carries that
//! direction's packet and byte counts, TTL range and TCP flags, with the addresses, ports
//! and ICMP type/code of that direction. The record is built from the same [`FlowRecord`]
//! as the `flow` record plus the per-direction TTLs the flow record has no place for.

use super::addr::ipproto;
use super::flow::{write_flow_head, write_tcp_flag_bools, FlowRecord};
use super::header::set_timestamp;
use crate::json::JsonWriter;

/// The direction a `netflow` record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetflowDir {
    /// Client to server (always written).
    ToServer,
    /// Server to client (written when the flow had packets that way).
    ToClient,
}

/// Lowest and highest TTL (IPv6 hop limit) seen in one direction; `(0, 0)` when unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TtlRange {
    /// `netflow.min_ttl`
    pub min: u8,
    /// `netflow.max_ttl`
    pub max: u8,
}

/// The directions a flow gets `netflow` records for: to server, and to client when packets
/// went that way.
pub fn netflow_dirs(f: &FlowRecord<'_>) -> &'static [NetflowDir] {
    if f.pkts_toclient > 0 {
        &[NetflowDir::ToServer, NetflowDir::ToClient]
    } else {
        &[NetflowDir::ToServer]
    }
}

fn push_hex2(b: &mut Vec<u8>, v: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    b.push(HEX[usize::from(v >> 4)]);
    b.push(HEX[usize::from(v & 15)]);
}

/// Write one `netflow` record (one JSON object, no newline) for direction `dir` of the flow
/// `f`, with that direction's TTL range.
pub fn write_netflow_record(
    w: &mut JsonWriter,
    f: &FlowRecord<'_>,
    dir: NetflowDir,
    ttl: TtlRange,
) {
    let to_server = dir == NetflowDir::ToServer;
    let (src, dst, sp, dp) = if to_server {
        (f.src_ip, f.dest_ip, f.src_port, f.dest_port)
    } else {
        (f.dest_ip, f.src_ip, f.dest_port, f.src_port)
    };
    write_flow_head(w, f, "netflow", (src, sp), (dst, dp));
    match f.proto {
        ipproto::ICMP | ipproto::ICMPV6 => {
            let tc = match (dir, f.icmp) {
                (NetflowDir::ToServer, Some(i)) => Some((i.icmp_type, i.icmp_code)),
                (NetflowDir::ToClient, Some(i)) => i.response,
                (_, None) => None,
            };
            let (t, c) = tc.unwrap_or((0, 0));
            w.set_u64("icmp_type", t.into());
            w.set_u64("icmp_code", c.into());
        }
        ipproto::ESP => {
            if let Some(spi) = f.spi {
                w.set_u64("spi", spi.into());
            }
        }
        _ => {}
    }
    // The direction's own protocol when detected, else the flow's; "unknown" when none.
    let app = if to_server {
        f.app_proto_ts
    } else {
        f.app_proto_tc
    };
    w.set_str("app_proto", app.or(f.app_proto).unwrap_or("unknown"));
    let (pkts, bytes) = if to_server {
        (f.pkts_toserver, f.bytes_toserver)
    } else {
        (f.pkts_toclient, f.bytes_toclient)
    };
    w.open_object("netflow");
    w.set_u64("pkts", pkts).set_u64("bytes", bytes);
    set_timestamp(w, "start", f.start_ns);
    set_timestamp(w, "end", f.end_ns);
    let age = (f.end_ns / 1_000_000_000).saturating_sub(f.start_ns / 1_000_000_000);
    w.set_u64("age", age);
    w.set_u64("min_ttl", ttl.min.into())
        .set_u64("max_ttl", ttl.max.into());
    w.close();
    if f.proto == ipproto::TCP {
        let flags = f
            .tcp
            .map_or(0, |t| if to_server { t.flags_ts } else { t.flags_tc });
        w.open_object("tcp");
        w.set_ascii_with("tcp_flags", |b| push_hex2(b, flags));
        write_tcp_flag_bools(w, flags);
        w.close();
    }
    // Suricata adds its common options (`community_id`) after the netflow fields.
    if let Some(c) = f.community_id {
        w.set_str("community_id", c);
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eve::addr::Ipv6Style;
    use crate::eve::flow::{FlowEndReason, FlowIcmp, FlowState, TcpFlowInfo};

    fn base() -> FlowRecord<'static> {
        FlowRecord {
            timestamp_ns: 1_588_781_447_778_571_000,
            flow_id: 42,
            in_iface: None,
            vlan: &[],
            src_ip: "190.0.0.1".parse().unwrap(),
            dest_ip: "190.0.0.2".parse().unwrap(),
            src_port: 0,
            dest_port: 0,
            proto: ipproto::ESP,
            icmp: None,
            spi: Some(123),
            app_proto: None,
            app_proto_ts: None,
            app_proto_tc: None,
            app_proto_orig: None,
            app_proto_expected: None,
            pkts_toserver: 2,
            pkts_toclient: 0,
            bytes_toserver: 84,
            bytes_toclient: 0,
            start_ns: 1_588_781_447_778_571_000,
            end_ns: 1_588_781_449_781_850_000,
            emergency: false,
            state: FlowState::New,
            reason: FlowEndReason::Shutdown,
            alerted: false,
            wrong_thread: false,
            action: None,
            tcp: None,
            metadata: None,
            community_id: None,
            ipv6: Ipv6Style::Full,
        }
    }

    fn text(f: &FlowRecord<'_>, dir: NetflowDir, ttl: TtlRange) -> String {
        let mut w = JsonWriter::with_capacity(512);
        write_netflow_record(&mut w, f, dir, ttl);
        String::from_utf8(w.into_inner()).unwrap()
    }

    #[test]
    fn esp_record_matches_suricata() {
        let f = base();
        assert_eq!(netflow_dirs(&f), &[NetflowDir::ToServer]);
        assert_eq!(
            text(&f, NetflowDir::ToServer, TtlRange { min: 64, max: 64 }),
            concat!(
                r#"{"timestamp":"2020-05-06T16:10:47.778571+0000","flow_id":42,"#,
                r#""event_type":"netflow","src_ip":"190.0.0.1","dest_ip":"190.0.0.2","#,
                r#""proto":"ESP","spi":123,"app_proto":"unknown","netflow":{"pkts":2,"#,
                r#""bytes":84,"start":"2020-05-06T16:10:47.778571+0000","#,
                r#""end":"2020-05-06T16:10:49.781850+0000","age":2,"min_ttl":64,"max_ttl":64}}"#
            )
        );
    }

    #[test]
    fn reply_direction_swaps_the_tuple_and_counts() {
        let mut f = base();
        f.proto = ipproto::TCP;
        f.spi = None;
        (f.src_port, f.dest_port) = (40000, 80);
        (f.pkts_toclient, f.bytes_toclient) = (3, 300);
        f.app_proto = Some("http");
        f.tcp = Some(TcpFlowInfo {
            flags: 0x1b,
            flags_ts: 0x1b,
            flags_tc: 0x12,
            ..TcpFlowInfo::default()
        });
        assert_eq!(netflow_dirs(&f).len(), 2);
        let tc = text(&f, NetflowDir::ToClient, TtlRange { min: 60, max: 61 });
        let v: serde_json::Value = serde_json::from_str(&tc).unwrap();
        assert_eq!(v["src_ip"], "190.0.0.2");
        assert_eq!(
            (v["src_port"].as_u64(), v["dest_port"].as_u64()),
            (Some(80), Some(40000))
        );
        assert_eq!(v["app_proto"], "http");
        assert_eq!(
            (
                v["netflow"]["pkts"].as_u64(),
                v["netflow"]["bytes"].as_u64()
            ),
            (Some(3), Some(300))
        );
        assert_eq!(
            (
                v["netflow"]["min_ttl"].as_u64(),
                v["netflow"]["max_ttl"].as_u64()
            ),
            (Some(60), Some(61))
        );
        assert_eq!(v["tcp"]["tcp_flags"], "12");
        assert_eq!(
            (v["tcp"]["syn"].as_bool(), v["tcp"]["fin"].as_bool()),
            (Some(true), None)
        );
        assert!(v.get("spi").is_none());
        let ts = text(&f, NetflowDir::ToServer, TtlRange::default());
        let v: serde_json::Value = serde_json::from_str(&ts).unwrap();
        assert_eq!(
            (v["tcp"]["tcp_flags"].as_str(), v["tcp"]["fin"].as_bool()),
            (Some("1b"), Some(true))
        );
    }

    #[test]
    fn icmp_directions_take_their_own_type() {
        let mut f = base();
        f.proto = ipproto::ICMP;
        f.spi = None;
        f.pkts_toclient = 1;
        f.icmp = Some(FlowIcmp {
            icmp_type: 8,
            icmp_code: 0,
            response: Some((0, 0)),
        });
        let v: serde_json::Value =
            serde_json::from_str(&text(&f, NetflowDir::ToServer, TtlRange::default())).unwrap();
        assert_eq!(v["icmp_type"].as_u64(), Some(8));
        assert!(v.get("src_port").is_none());
        let v: serde_json::Value =
            serde_json::from_str(&text(&f, NetflowDir::ToClient, TtlRange::default())).unwrap();
        assert_eq!(
            (v["icmp_type"].as_u64(), v["dest_ip"].as_str()),
            (Some(0), Some("190.0.0.1"))
        );
    }
}
