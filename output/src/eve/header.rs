//! The common EVE header, written in Suricata 7's field order.

use std::net::IpAddr;

use super::addr::{write_ip, write_proto, Ipv6Style};
use super::time::write_iso;
use crate::json::JsonWriter;

/// Fields shared by packet-based EVE records (alert, anomaly, protocol records).
///
/// Suricata's order: `timestamp`, `flow_id`, `parent_id`, `in_iface`, `pcap_cnt`, `event_type`,
/// `vlan`, `src_ip`, `src_port`, `dest_ip`, `dest_port`, `proto`, `ip_v`, `icmp_type`,
/// `icmp_code`, `pkt_src`, `ether`. Optional fields are left out when unset (zero ids, empty
/// `vlan`).
#[derive(Debug, Clone, Copy)]
pub struct EveHeader<'a> {
    /// Packet time, nanoseconds since the epoch.
    pub timestamp_ns: u64,
    /// Flow id; omitted when 0 (no flow).
    pub flow_id: u64,
    /// Parent flow id; omitted when 0.
    pub parent_id: u64,
    /// Capture interface (live capture only).
    pub in_iface: Option<&'a str>,
    /// Packet number in the pcap file (1-based); omitted when 0.
    pub pcap_cnt: u64,
    /// `alert`, `anomaly`, `flow`, `dns`, ...
    pub event_type: &'a str,
    /// VLAN ids, outermost first; omitted when empty (at most 3 are written, like Suricata).
    pub vlan: &'a [u16],
    /// Source address (omitted when `None`, e.g. non-IP anomalies).
    pub src_ip: Option<IpAddr>,
    /// Destination address.
    pub dest_ip: Option<IpAddr>,
    /// `(src_port, dest_port)`; Suricata logs these for TCP, UDP and SCTP only
    /// (see [`proto_has_ports`](super::addr::proto_has_ports)).
    pub ports: Option<(u16, u16)>,
    /// IP protocol number; omitted when `None`.
    pub proto: Option<u8>,
    /// IP version (`ip_v`). Suricata 8 writes it; Suricata 7 does not, so leave it `None` for
    /// Suricata 7 output.
    pub ip_v: Option<u8>,
    /// `(icmp_type, icmp_code)` for ICMP/ICMPv6 packets.
    pub icmp: Option<(u8, u8)>,
    /// Packet source (`"wire/pcap"`, `"stream (flow timeout)"`, ...); omitted when `None`.
    pub pkt_src: Option<&'a str>,
    /// `ether.src_mac` / `ether.dest_mac` (eve-log `ethernet: yes`, packets with an Ethernet
    /// header); omitted when `None`.
    pub ether: Option<EtherMacs>,
    /// `community_id` of the packet's flow (eve-log `community-id: yes`), written after
    /// `ether`, as Suricata's common options; omitted when `None`.
    pub community_id: Option<&'a str>,
    /// How IPv6 addresses are written.
    pub ipv6: Ipv6Style,
}

impl<'a> EveHeader<'a> {
    /// A header with only the timestamp and event type set.
    pub fn new(timestamp_ns: u64, event_type: &'a str) -> Self {
        EveHeader {
            timestamp_ns,
            flow_id: 0,
            parent_id: 0,
            in_iface: None,
            pcap_cnt: 0,
            event_type,
            vlan: &[],
            src_ip: None,
            dest_ip: None,
            ports: None,
            proto: None,
            ip_v: None,
            icmp: None,
            pkt_src: None,
            ether: None,
            community_id: None,
            ipv6: Ipv6Style::Full,
        }
    }
}

/// The MAC addresses of a packet's Ethernet header, as written in the `ether` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtherMacs {
    /// Source MAC (`src_mac`).
    pub src: [u8; 6],
    /// Destination MAC (`dest_mac`).
    pub dst: [u8; 6],
}

/// Write `"key":"aa:bb:cc:dd:ee:ff"` (lower-case hex, as Suricata).
pub fn set_mac(w: &mut JsonWriter, key: &str, mac: &[u8; 6]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    w.set_ascii_with(key, |b| {
        for (i, x) in mac.iter().enumerate() {
            if i > 0 {
                b.push(b':');
            }
            b.push(HEX[usize::from(x >> 4)]);
            b.push(HEX[usize::from(x & 15)]);
        }
    });
}

/// Write the `ether` object of a packet-based record.
pub fn set_ether(w: &mut JsonWriter, e: &EtherMacs) {
    w.open_object("ether");
    set_mac(w, "src_mac", &e.src);
    set_mac(w, "dest_mac", &e.dst);
    w.close();
}

/// Write `"timestamp":"..."`.
pub fn set_timestamp(w: &mut JsonWriter, key: &str, ns: u64) {
    w.set_ascii_with(key, |b| write_iso(b, ns));
}

/// Write `"key":"<address>"`.
pub fn set_ip(w: &mut JsonWriter, key: &str, a: IpAddr, style: Ipv6Style) {
    w.set_ascii_with(key, |b| write_ip(b, a, style));
}

/// Write `"proto":"<name or number>"`.
pub fn set_proto(w: &mut JsonWriter, proto: u8) {
    w.set_ascii_with("proto", |b| write_proto(b, proto));
}

/// Write `"vlan":[..]` when `vlan` is not empty (at most three ids, as Suricata).
pub fn set_vlan(w: &mut JsonWriter, vlan: &[u16]) {
    if vlan.is_empty() {
        return;
    }
    w.open_array("vlan");
    for &v in vlan.iter().take(3) {
        w.u64(v.into());
    }
    w.close();
}

/// Open a record object and write the header fields. The object is left open for the
/// event-specific fields; the caller closes it.
pub fn write_eve_header(w: &mut JsonWriter, h: &EveHeader<'_>) {
    w.start_object();
    set_timestamp(w, "timestamp", h.timestamp_ns);
    if h.flow_id != 0 {
        w.set_u64("flow_id", h.flow_id);
    }
    if h.parent_id != 0 {
        w.set_u64("parent_id", h.parent_id);
    }
    if let Some(i) = h.in_iface {
        w.set_str("in_iface", i);
    }
    if h.pcap_cnt != 0 {
        w.set_u64("pcap_cnt", h.pcap_cnt);
    }
    w.set_str("event_type", h.event_type);
    set_vlan(w, h.vlan);
    if let Some(a) = h.src_ip {
        set_ip(w, "src_ip", a, h.ipv6);
    }
    if let Some((sp, _)) = h.ports {
        w.set_u64("src_port", sp.into());
    }
    if let Some(a) = h.dest_ip {
        set_ip(w, "dest_ip", a, h.ipv6);
    }
    if let Some((_, dp)) = h.ports {
        w.set_u64("dest_port", dp.into());
    }
    if let Some(p) = h.proto {
        set_proto(w, p);
    }
    if let Some(v) = h.ip_v {
        w.set_u64("ip_v", v.into());
    }
    if let Some((t, c)) = h.icmp {
        w.set_u64("icmp_type", t.into());
        w.set_u64("icmp_code", c.into());
    }
    if let Some(s) = h.pkt_src {
        w.set_str("pkt_src", s);
    }
    if let Some(e) = &h.ether {
        set_ether(w, e);
    }
    if let Some(c) = h.community_id {
        w.set_str("community_id", c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ether_follows_pkt_src() {
        let mut w = JsonWriter::with_capacity(256);
        let h = EveHeader {
            pcap_cnt: 1,
            pkt_src: Some("wire/pcap"),
            ether: Some(EtherMacs {
                src: [0x0c, 0x86, 0x10, 0xed, 0xd7, 0xc6],
                dst: [0x00, 0x25, 0x90, 0xe3, 0xd2, 0xe1],
            }),
            ..EveHeader::new(0, "alert")
        };
        write_eve_header(&mut w, &h);
        w.close();
        let s = String::from_utf8(w.into_inner()).unwrap();
        assert!(
            s.ends_with(concat!(
                r#""pkt_src":"wire/pcap","ether":{"src_mac":"0c:86:10:ed:d7:c6","#,
                r#""dest_mac":"00:25:90:e3:d2:e1"}}"#
            )),
            "{s}"
        );
        let mut w = JsonWriter::with_capacity(256);
        write_eve_header(&mut w, &EveHeader::new(0, "alert"));
        w.close();
        assert!(!String::from_utf8(w.into_inner()).unwrap().contains("ether"));
    }
}

/// The flow of an alerted packet, as the worker's flow table has it.
#[derive(Debug, Clone, Copy)]
pub struct AlertFlowInfo {
    /// EVE `flow_id`.
    pub flow_id: u64,
    /// The packet travels to the server.
    pub to_server: bool,
    /// Counters so far, this packet included.
    pub pkts_toserver: u64,
    /// Counters so far, this packet included.
    pub pkts_toclient: u64,
    /// Counters so far, this packet included.
    pub bytes_toserver: u64,
    /// Counters so far, this packet included.
    pub bytes_toclient: u64,
    /// First packet time.
    pub start_ns: u64,
    /// Client address.
    pub client: IpAddr,
    /// Server address.
    pub server: IpAddr,
    /// Client and server ports (TCP/UDP/SCTP).
    pub ports: Option<(u16, u16)>,
    /// The flow's Community ID, when eve-log `community-id` is on (computed once per flow).
    pub community_id: Option<super::CommunityId>,
    /// VLAN ids of the packet the records are written on (Suricata's header takes the
    /// packet's; a flow-end pseudo packet has the flow's), and how many.
    pub vlan: ([u16; 3], u8),
}

impl AlertFlowInfo {
    /// The VLAN ids for the `vlan` field of records written with this flow.
    pub fn vlan_ids(&self) -> &[u16] {
        let n = usize::from(self.vlan.1).min(3);
        self.vlan.0.get(..n).unwrap_or(&[])
    }
}
