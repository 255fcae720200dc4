//! `flow` records (`event_type: flow`), in Suricata 7's field order.

use std::net::IpAddr;

use super::addr::{ipproto, proto_has_ports, Ipv6Style};
use super::header::{set_ip, set_proto, set_timestamp, set_vlan};
use crate::json::JsonWriter;

/// Flow state at the end (`flow.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowState {
    /// `new`
    New,
    /// `established`
    Established,
    /// `closed`
    Closed,
    /// `bypassed`
    Bypassed,
}

impl FlowState {
    /// The EVE text.
    pub fn as_str(self) -> &'static str {
        match self {
            FlowState::New => "new",
            FlowState::Established => "established",
            FlowState::Closed => "closed",
            FlowState::Bypassed => "bypassed",
        }
    }
}

/// Why the flow record was written (`flow.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowEndReason {
    /// `timeout`
    Timeout,
    /// `forced`
    Forced,
    /// `shutdown`
    Shutdown,
    /// `unknown`
    Unknown,
}

impl FlowEndReason {
    /// The EVE text.
    pub fn as_str(self) -> &'static str {
        match self {
            FlowEndReason::Timeout => "timeout",
            FlowEndReason::Forced => "forced",
            FlowEndReason::Shutdown => "shutdown",
            FlowEndReason::Unknown => "unknown",
        }
    }
}

/// TCP flag bits as in the TCP header.
pub mod tcp_flags {
    /// FIN
    pub const FIN: u8 = 0x01;
    /// SYN
    pub const SYN: u8 = 0x02;
    /// RST
    pub const RST: u8 = 0x04;
    /// PSH
    pub const PSH: u8 = 0x08;
    /// ACK
    pub const ACK: u8 = 0x10;
    /// URG
    pub const URG: u8 = 0x20;
    /// ECE (Suricata's `ecn`)
    pub const ECN: u8 = 0x40;
    /// CWR
    pub const CWR: u8 = 0x80;
}

/// The `tcp` object of a TCP flow record.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpFlowInfo<'a> {
    /// Union of flags seen in both directions (`tcp_flags`, two hex digits).
    pub flags: u8,
    /// Flags seen to server (`tcp_flags_ts`).
    pub flags_ts: u8,
    /// Flags seen to client (`tcp_flags_tc`).
    pub flags_tc: u8,
    /// TCP session state (`"established"`, `"closed"`, `"syn_sent"`, ...); `None` when the flow
    /// had no TCP session, in which case the session fields below are not written either.
    pub state: Option<&'a str>,
    /// A gap was seen to client.
    pub tc_gap: bool,
    /// A gap was seen to server.
    pub ts_gap: bool,
    /// Most stream regions used to server.
    pub ts_max_regions: u32,
    /// Most stream regions used to client.
    pub tc_max_regions: u32,
}

/// ICMP details of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowIcmp {
    /// Type of the first packet.
    pub icmp_type: u8,
    /// Code of the first packet.
    pub icmp_code: u8,
    /// `(type, code)` of the reply, when packets went to the client.
    pub response: Option<(u8, u8)>,
}

/// Writes the members of a record's top-level `metadata` object (flow variables) and
/// returns whether it wrote any.
#[derive(Clone, Copy)]
pub struct MetadataFn<'a>(pub &'a dyn Fn(&mut JsonWriter) -> bool);

impl std::fmt::Debug for MetadataFn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetadataFn")
    }
}

/// Everything a `flow` record holds.
#[derive(Debug, Clone, Copy)]
pub struct FlowRecord<'a> {
    /// Record time (packet time of the event that ended the flow, or now).
    pub timestamp_ns: u64,
    /// Flow id; omitted when 0.
    pub flow_id: u64,
    /// Capture interface.
    pub in_iface: Option<&'a str>,
    /// VLAN ids.
    pub vlan: &'a [u16],
    /// Client address.
    pub src_ip: IpAddr,
    /// Server address.
    pub dest_ip: IpAddr,
    /// Client port (written for TCP/UDP/SCTP only).
    pub src_port: u16,
    /// Server port (written for TCP/UDP/SCTP only).
    pub dest_port: u16,
    /// IP protocol number.
    pub proto: u8,
    /// ICMP details (ICMP/ICMPv6 flows).
    pub icmp: Option<FlowIcmp>,
    /// ESP SPI (ESP flows).
    pub spi: Option<u32>,
    /// Detected application protocol (`app_proto`), e.g. `"http"` or `"failed"`.
    pub app_proto: Option<&'a str>,
    /// `app_proto_ts` when it differs from `app_proto`.
    pub app_proto_ts: Option<&'a str>,
    /// `app_proto_tc` when it differs from `app_proto`.
    pub app_proto_tc: Option<&'a str>,
    /// `app_proto_orig`: the protocol before a protocol change (STARTTLS, HTTP CONNECT).
    pub app_proto_orig: Option<&'a str>,
    /// `app_proto_expected`: the protocol the change expected, when another was found.
    pub app_proto_expected: Option<&'a str>,
    /// Packets to server.
    pub pkts_toserver: u64,
    /// Packets to client.
    pub pkts_toclient: u64,
    /// Bytes to server.
    pub bytes_toserver: u64,
    /// Bytes to client.
    pub bytes_toclient: u64,
    /// First packet time.
    pub start_ns: u64,
    /// Last packet time.
    pub end_ns: u64,
    /// Ended during emergency mode.
    pub emergency: bool,
    /// Final state.
    pub state: FlowState,
    /// End reason.
    pub reason: FlowEndReason,
    /// Whether any alert fired on the flow.
    pub alerted: bool,
    /// Packets arrived on the wrong thread.
    pub wrong_thread: bool,
    /// `flow.action` (`"drop"` / `"pass"`) in IPS mode.
    pub action: Option<&'a str>,
    /// The `tcp` object (TCP flows).
    pub tcp: Option<TcpFlowInfo<'a>>,
    /// The `metadata` object (flow variables), when eve-log `metadata` is on (Suricata's
    /// `EveAddCommonOptions`: after the `flow` object, before `community_id`).
    pub metadata: Option<MetadataFn<'a>>,
    /// `community_id`, written after the `flow` object as Suricata does.
    pub community_id: Option<&'a str>,
    /// How IPv6 addresses are written.
    pub ipv6: Ipv6Style,
}

fn push_hex2(b: &mut Vec<u8>, v: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    b.push(HEX[(v >> 4) as usize]);
    b.push(HEX[(v & 15) as usize]);
}

/// Write the flag booleans Suricata adds for the set bits (only `true` ones), in its order.
pub fn write_tcp_flag_bools(w: &mut JsonWriter, flags: u8) {
    use tcp_flags::*;
    for (bit, name) in [
        (SYN, "syn"),
        (FIN, "fin"),
        (RST, "rst"),
        (PSH, "psh"),
        (ACK, "ack"),
        (URG, "urg"),
        (ECN, "ecn"),
        (CWR, "cwr"),
    ] {
        if flags & bit != 0 {
            w.set_bool(name, true);
        }
    }
}

/// Opens a `flow` or `netflow` record and writes its common head, from `timestamp` to
/// `proto`, with `src`/`dest` given as (address, port) pairs (a netflow record of the
/// to-client direction swaps them).
pub(crate) fn write_flow_head(
    w: &mut JsonWriter,
    f: &FlowRecord<'_>,
    event_type: &str,
    src: (IpAddr, u16),
    dest: (IpAddr, u16),
) {
    w.start_object();
    set_timestamp(w, "timestamp", f.timestamp_ns);
    if f.flow_id != 0 {
        w.set_u64("flow_id", f.flow_id);
    }
    if let Some(i) = f.in_iface {
        w.set_str("in_iface", i);
    }
    w.set_str("event_type", event_type);
    set_vlan(w, f.vlan);
    let ports = proto_has_ports(f.proto);
    set_ip(w, "src_ip", src.0, f.ipv6);
    if ports {
        w.set_u64("src_port", src.1.into());
    }
    set_ip(w, "dest_ip", dest.0, f.ipv6);
    if ports {
        w.set_u64("dest_port", dest.1.into());
    }
    set_proto(w, f.proto);
}

/// Write a complete `flow` record (one JSON object, no newline).
pub fn write_flow_record(w: &mut JsonWriter, f: &FlowRecord<'_>) {
    write_flow_head(
        w,
        f,
        "flow",
        (f.src_ip, f.src_port),
        (f.dest_ip, f.dest_port),
    );
    if matches!(f.proto, ipproto::ICMP | ipproto::ICMPV6) {
        if let Some(i) = f.icmp {
            w.set_u64("icmp_type", i.icmp_type.into());
            w.set_u64("icmp_code", i.icmp_code.into());
            if let Some((t, c)) = i.response {
                w.set_u64("response_icmp_type", t.into());
                w.set_u64("response_icmp_code", c.into());
            }
        }
    }
    if f.proto == ipproto::ESP {
        if let Some(spi) = f.spi {
            w.set_u64("spi", spi.into());
        }
    }
    if let Some(a) = f.app_proto {
        w.set_str("app_proto", a);
    }
    if let Some(a) = f.app_proto_ts.filter(|a| Some(*a) != f.app_proto) {
        w.set_str("app_proto_ts", a);
    }
    if let Some(a) = f.app_proto_tc.filter(|a| Some(*a) != f.app_proto) {
        w.set_str("app_proto_tc", a);
    }
    if let Some(a) = f.app_proto_orig {
        w.set_str("app_proto_orig", a);
    }
    if let Some(a) = f.app_proto_expected {
        w.set_str("app_proto_expected", a);
    }
    w.open_object("flow");
    w.set_u64("pkts_toserver", f.pkts_toserver)
        .set_u64("pkts_toclient", f.pkts_toclient)
        .set_u64("bytes_toserver", f.bytes_toserver)
        .set_u64("bytes_toclient", f.bytes_toclient);
    set_timestamp(w, "start", f.start_ns);
    set_timestamp(w, "end", f.end_ns);
    let age = (f.end_ns / 1_000_000_000).saturating_sub(f.start_ns / 1_000_000_000);
    w.set_u64("age", age);
    if f.emergency {
        w.set_bool("emergency", true);
    }
    w.set_str("state", f.state.as_str());
    w.set_str("reason", f.reason.as_str());
    w.set_bool("alerted", f.alerted);
    if f.wrong_thread {
        w.set_bool("wrong_thread", true);
    }
    if let Some(a) = f.action {
        w.set_str("action", a);
    }
    w.close();
    if let Some(m) = f.metadata {
        let mark = w.mark();
        w.open_object("metadata");
        if (m.0)(w) {
            w.close();
        } else {
            w.rollback(mark);
        }
    }
    if let Some(c) = f.community_id {
        w.set_str("community_id", c);
    }
    if let Some(t) = &f.tcp {
        w.open_object("tcp");
        w.set_ascii_with("tcp_flags", |b| push_hex2(b, t.flags));
        w.set_ascii_with("tcp_flags_ts", |b| push_hex2(b, t.flags_ts));
        w.set_ascii_with("tcp_flags_tc", |b| push_hex2(b, t.flags_tc));
        write_tcp_flag_bools(w, t.flags);
        if let Some(s) = t.state {
            w.set_str("state", s);
            if t.tc_gap {
                w.set_bool("tc_gap", true);
            }
            if t.ts_gap {
                w.set_bool("ts_gap", true);
            }
            w.set_u64("ts_max_regions", t.ts_max_regions.into());
            w.set_u64("tc_max_regions", t.tc_max_regions.into());
        }
        w.close();
    }
    w.close();
}
