//! `anomaly` records, as Suricata 7's eve-log `anomaly` logger writes them.
//!
//! Three kinds (Suricata's `anomaly.type`):
//! * `decode`: a decoder event of the packet, `"event":"decoder.ipv4.trunc_pkt"`;
//! * `stream`: a TCP stream event of the packet, `"event":"stream.pkt_invalid_timestamp"`;
//! * `applayer`: an app-layer parser event, with `app_proto` first and `layer` last
//!   (`proto_parser` for transaction events, which also carry a top-level `tx_id`).
//!
//! Field order: the common header, `metadata` (flow variables), `tx_id`, `anomaly`, then with
//! `packethdr` the first 32 bytes of the packet as base64 `packet` and `packet_info`.
//! Nothing here allocates: the caller hands borrowed names and a callback for `metadata`.

use super::header::{write_eve_header, EveHeader};
use crate::json::JsonWriter;

/// Suricata's `packethdr`: at most this many leading packet bytes are logged.
pub const PACKET_HDR_MAX: usize = 32;

/// What one anomaly record reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anomaly<'a> {
    /// `"type":"decode"`; the event's full name (`decoder.icmpv4.unknown_type`).
    Decode(&'a str),
    /// `"type":"stream"`; the event's full name (`stream.pkt_invalid_timestamp`).
    Stream(&'a str),
    /// `"type":"applayer"`.
    AppLayer {
        /// The flow's `app_proto` (`http`, `dns`, `tls`, `failed`, ...).
        app_proto: &'a str,
        /// The parser's event name (`UNABLE_TO_MATCH_RESPONSE_TO_REQUEST`, `z_flag_set`).
        event: &'a str,
        /// Where the event was raised: `proto_parser` (a transaction), `proto_detect`
        /// (protocol detection) or `parser` (the parser state).
        layer: &'a str,
    },
}

impl Anomaly<'_> {
    /// Suricata's `anomaly.type` value.
    pub fn type_name(&self) -> &'static str {
        match self {
            Anomaly::Decode(_) => "decode",
            Anomaly::Stream(_) => "stream",
            Anomaly::AppLayer { .. } => "applayer",
        }
    }
}

/// Everything an `anomaly` record holds. `header.event_type` should be `"anomaly"`.
#[derive(Clone, Copy)]
pub struct AnomalyRecord<'a> {
    /// Common header (the packet's own direction, as Suricata's `LOG_DIR_PACKET`).
    pub header: EveHeader<'a>,
    /// Writes the members of the top-level `metadata` object (flow variables) and returns
    /// whether it wrote any; `None` when metadata is off or the flow has no variables. The
    /// object is removed again when the callback writes nothing.
    pub metadata: Option<&'a dyn Fn(&mut JsonWriter) -> bool>,
    /// Transaction id (app-layer events raised on a transaction).
    pub tx_id: Option<u64>,
    /// The anomaly itself.
    pub anomaly: Anomaly<'a>,
    /// `packethdr`: the packet bytes and pcap link type; at most [`PACKET_HDR_MAX`] bytes are
    /// written.
    pub packet: Option<(&'a [u8], u32)>,
}

impl std::fmt::Debug for AnomalyRecord<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnomalyRecord")
            .field("header", &self.header)
            .field("metadata", &self.metadata.is_some())
            .field("tx_id", &self.tx_id)
            .field("anomaly", &self.anomaly)
            .field("packet", &self.packet)
            .finish()
    }
}

/// Write a complete `anomaly` record (one JSON object, no newline).
pub fn write_anomaly_record(w: &mut JsonWriter, a: &AnomalyRecord<'_>) {
    write_eve_header(w, &a.header);
    if let Some(m) = a.metadata {
        let mark = w.mark();
        w.open_object("metadata");
        if m(w) {
            w.close();
        } else {
            w.rollback(mark);
        }
    }
    if let Some(id) = a.tx_id {
        w.set_u64("tx_id", id);
    }
    w.open_object("anomaly");
    match a.anomaly {
        Anomaly::Decode(event) | Anomaly::Stream(event) => {
            w.set_str("type", a.anomaly.type_name());
            w.set_str("event", event);
        }
        Anomaly::AppLayer {
            app_proto,
            event,
            layer,
        } => {
            w.set_str("app_proto", app_proto);
            w.set_str("type", "applayer");
            w.set_str("event", event);
            w.set_str("layer", layer);
        }
    }
    w.close();
    if let Some((bytes, linktype)) = a.packet {
        let n = bytes.len().min(PACKET_HDR_MAX);
        w.set_base64("packet", bytes.get(..n).unwrap_or(bytes));
        w.open_object("packet_info")
            .set_u64("linktype", linktype.into())
            .close();
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> EveHeader<'static> {
        EveHeader {
            pcap_cnt: 13,
            pkt_src: Some("wire/pcap"),
            ..EveHeader::new(12_000_000_000, "anomaly")
        }
    }

    #[test]
    fn decode_record_without_addresses() {
        let mut w = JsonWriter::new();
        let r = AnomalyRecord {
            header: header(),
            metadata: None,
            tx_id: None,
            anomaly: Anomaly::Decode("decoder.ipv4.trunc_pkt"),
            packet: None,
        };
        write_anomaly_record(&mut w, &r);
        assert_eq!(
            std::str::from_utf8(w.as_bytes()).unwrap(),
            r#"{"timestamp":"1970-01-01T00:00:12.000000+0000","pcap_cnt":13,"event_type":"anomaly","pkt_src":"wire/pcap","anomaly":{"type":"decode","event":"decoder.ipv4.trunc_pkt"}}"#
        );
        assert!(w.is_complete());
    }

    #[test]
    fn empty_metadata_is_left_out_and_packet_is_cut() {
        let none = |_: &mut JsonWriter| false;
        let some = |w: &mut JsonWriter| {
            w.open_array("flowbits").str("a").close();
            true
        };
        let pkt = [7u8; 60];
        for (cb, want) in [
            (&none as &dyn Fn(&mut JsonWriter) -> bool, false),
            (&some, true),
        ] {
            let mut w = JsonWriter::new();
            let r = AnomalyRecord {
                header: header(),
                metadata: Some(cb),
                tx_id: Some(3),
                anomaly: Anomaly::Stream("stream.pkt_invalid_ack"),
                packet: Some((&pkt, 1)),
            };
            write_anomaly_record(&mut w, &r);
            let v: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
            assert_eq!(v.get("metadata").is_some(), want);
            assert_eq!(v["tx_id"], 3);
            // 32 bytes: 44 base64 characters.
            assert_eq!(v["packet"].as_str().unwrap().len(), 44);
            assert_eq!(v["packet_info"]["linktype"], 1);
        }
    }
}
