//! `alert` records, in Suricata 7's field order.

use std::net::IpAddr;

use super::addr::Ipv6Style;
use super::header::{set_ip, set_proto, set_timestamp, write_eve_header, EveHeader};
use crate::json::JsonWriter;

/// The flow summary inside an alert (`alert.flow`).
#[derive(Debug, Clone, Copy)]
pub struct AlertFlow {
    /// Packets to server so far.
    pub pkts_toserver: u64,
    /// Packets to client so far.
    pub pkts_toclient: u64,
    /// Bytes to server so far.
    pub bytes_toserver: u64,
    /// Bytes to client so far.
    pub bytes_toclient: u64,
    /// First packet time of the flow.
    pub start_ns: u64,
    /// Flow client address.
    pub src_ip: IpAddr,
    /// Flow server address.
    pub dest_ip: IpAddr,
    /// Flow `(src_port, dest_port)`, for TCP/UDP/SCTP.
    pub ports: Option<(u16, u16)>,
}

/// The `tunnel` object of an alert on a tunnel's inner packet: the outer (root) packet.
#[derive(Debug, Clone, Copy)]
pub struct AlertTunnel<'a> {
    /// Root packet's source address.
    pub src_ip: IpAddr,
    /// Root packet's destination address.
    pub dest_ip: IpAddr,
    /// Root packet's source port (0 for protocols without ports).
    pub src_port: u16,
    /// Root packet's destination port (0 for protocols without ports).
    pub dest_port: u16,
    /// Root packet's IP protocol.
    pub proto: u8,
    /// Tunnel depth of the alerted packet.
    pub depth: u8,
    /// Root packet number; omitted when 0.
    pub pcap_cnt: u64,
    /// Root packet source (`"wire/pcap"`).
    pub pkt_src: &'a str,
}

/// Everything an `alert` record holds. `header.event_type` should be `"alert"`.
#[derive(Debug, Clone, Copy)]
pub struct AlertRecord<'a> {
    /// Common header.
    pub header: EveHeader<'a>,
    /// `"allowed"` or `"blocked"`.
    pub action: &'a str,
    /// The `tunnel` object (alerts on a tunnel's inner packet).
    pub tunnel: Option<AlertTunnel<'a>>,
    /// Generator id.
    pub gid: u32,
    /// Signature id.
    pub signature_id: u32,
    /// Revision.
    pub rev: u32,
    /// The rule's `msg` (bytes: invalid UTF-8 is escaped as Suricata does).
    pub signature: &'a [u8],
    /// Classification text (`category`); `None` is written as `""`, as Suricata 7 does.
    pub category: Option<&'a str>,
    /// Priority.
    pub severity: u32,
    /// Pre-serialised `metadata` object (e.g. `{"policy":["balanced"]}`), written verbatim.
    pub metadata_json: Option<&'a [u8]>,
    /// `app_proto` of the flow, when known.
    pub app_proto: Option<&'a str>,
    /// `app_proto_ts`, `app_proto_tc`, `app_proto_orig`, `app_proto_expected` (Suricata's
    /// `EveAddAppProto`: each only where set and different from `app_proto`).
    pub app_proto_more: [Option<&'a str>; 4],
    /// `"to_server"` / `"to_client"`.
    pub direction: Option<&'a str>,
    /// The `flow` object.
    pub flow: Option<AlertFlow>,
    /// Payload bytes: written as base64 `payload` (when `payload_base64` and non-empty)
    /// and as `payload_printable` (when `payload_printable`).
    pub payload: Option<&'a [u8]>,
    /// Write the base64 `payload` (eve-log alert `payload: yes`).
    pub payload_base64: bool,
    /// Write `payload_printable` (non-printable bytes as `.`).
    pub payload_printable: bool,
    /// `stream` (1 when the match was on reassembled stream data).
    pub stream: Option<u8>,
    /// Whole packet bytes, written as base64 `packet`.
    pub packet: Option<&'a [u8]>,
    /// `packet_info.linktype` (written with `packet`).
    pub linktype: Option<u32>,
    /// The `frame` object (an alert of a `frame:` rule), pre-serialised.
    pub frame: Option<&'a [u8]>,
}

/// Write a complete `alert` record (one JSON object, no newline).
pub fn write_alert_record(w: &mut JsonWriter, a: &AlertRecord<'_>) {
    write_eve_header(w, &a.header);
    w.open_object("alert");
    w.set_str("action", a.action)
        .set_u64("gid", a.gid.into())
        .set_u64("signature_id", a.signature_id.into())
        .set_u64("rev", a.rev.into())
        .set_bytes("signature", a.signature);
    // Suricata 7 always writes `category`, as "" when the rule has no classtype.
    w.set_str("category", a.category.unwrap_or(""));
    w.set_u64("severity", a.severity.into());
    if let Some(m) = a.metadata_json {
        w.set_raw("metadata", m);
    }
    w.close();
    if let Some(t) = &a.tunnel {
        write_alert_tunnel(w, t, a.header.ipv6);
    }
    if let Some(p) = a.app_proto {
        w.set_str("app_proto", p);
    }
    for (k, v) in [
        "app_proto_ts",
        "app_proto_tc",
        "app_proto_orig",
        "app_proto_expected",
    ]
    .into_iter()
    .zip(a.app_proto_more)
    {
        if let Some(v) = v {
            w.set_str(k, v);
        }
    }
    if let Some(d) = a.direction {
        w.set_str("direction", d);
    }
    if let Some(f) = &a.flow {
        write_alert_flow(w, f, a.header.ipv6);
    }
    if let Some(p) = a.payload {
        if a.payload_base64 && !p.is_empty() {
            w.set_base64("payload", p);
        }
        if a.payload_printable {
            w.set_printable("payload_printable", p);
        }
    }
    if let Some(s) = a.stream {
        w.set_u64("stream", s.into());
    }
    if let Some(f) = a.frame {
        w.set_raw("frame", f);
    }
    if let Some(p) = a.packet {
        w.set_base64("packet", p);
        if let Some(l) = a.linktype {
            w.open_object("packet_info")
                .set_u64("linktype", l.into())
                .close();
        }
    }
    w.close();
}

fn write_alert_tunnel(w: &mut JsonWriter, t: &AlertTunnel<'_>, style: Ipv6Style) {
    w.open_object("tunnel");
    set_ip(w, "src_ip", t.src_ip, style);
    w.set_u64("src_port", t.src_port.into());
    set_ip(w, "dest_ip", t.dest_ip, style);
    w.set_u64("dest_port", t.dest_port.into());
    set_proto(w, t.proto);
    w.set_u64("depth", t.depth.into());
    if t.pcap_cnt != 0 {
        w.set_u64("pcap_cnt", t.pcap_cnt);
    }
    w.set_str("pkt_src", t.pkt_src);
    w.close();
}

fn write_alert_flow(w: &mut JsonWriter, f: &AlertFlow, style: Ipv6Style) {
    w.open_object("flow");
    w.set_u64("pkts_toserver", f.pkts_toserver)
        .set_u64("pkts_toclient", f.pkts_toclient)
        .set_u64("bytes_toserver", f.bytes_toserver)
        .set_u64("bytes_toclient", f.bytes_toclient);
    set_timestamp(w, "start", f.start_ns);
    set_ip(w, "src_ip", f.src_ip, style);
    set_ip(w, "dest_ip", f.dest_ip, style);
    if let Some((sp, dp)) = f.ports {
        w.set_u64("src_port", sp.into())
            .set_u64("dest_port", dp.into());
    }
    w.close();
}
