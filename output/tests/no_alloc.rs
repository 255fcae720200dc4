//! Once buffers have grown, writing records allocates nothing.

use shrike_output::eve::*;
use shrike_output::{EveBuffer, EventKind};

// Allocations are counted by `allocation-counter`, whose global allocator counts per thread
// (no `unsafe` in this crate's tests).

fn write_some(buf: &mut EveBuffer, spare: &mut Vec<u8>, n: u64) {
    let payload = [0x41u8; 300];
    for i in 0..n {
        let mut h = EveHeader::new(1_706_704_496_000_000_000 + i * 1000, "alert");
        h.flow_id = i + 1;
        h.src_ip = Some("10.1.2.3".parse().unwrap());
        h.dest_ip = Some("2001:db8::7".parse().unwrap());
        h.ports = Some((1234, 80));
        h.proto = Some(6);
        let a = AlertRecord {
            header: h,
            action: "allowed",
            tunnel: None,
            gid: 1,
            signature_id: 2_000_001,
            rev: 3,
            signature: b"ET TEST \"quoted\" message",
            category: Some("Misc activity"),
            severity: 3,
            metadata_json: None,
            app_proto: Some("http"),
            app_proto_more: [None; 4],
            direction: Some("to_server"),
            flow: None,
            payload: Some(&payload),
            payload_base64: true,
            payload_printable: true,
            stream: Some(0),
            packet: None,
            linktype: None,
            frame: None,
        };
        let mut r = buf.record(EventKind::Alert);
        write_alert_record(&mut r, &a);
        r.commit().unwrap();
        if buf.needs_flush() {
            buf.swap(spare);
            spare.clear();
        }
    }
}

#[test]
fn steady_state_allocates_nothing() {
    let mut buf = EveBuffer::new(64 * 1024);
    let mut spare = Vec::with_capacity(buf.capacity());
    write_some(&mut buf, &mut spare, 2_000); // warm-up: buffers reach their working size
    let info = allocation_counter::measure(|| write_some(&mut buf, &mut spare, 20_000));
    assert_eq!(info.count_total, 0, "allocations in steady state: {info:?}");
    // The measurement works: the warm-up itself allocates.
    let mut fresh = EveBuffer::new(1024);
    let mut spare2 = Vec::new();
    let warm = allocation_counter::measure(|| write_some(&mut fresh, &mut spare2, 10));
    assert!(
        warm.count_total > 0,
        "the counter sees allocations: {warm:?}"
    );
}

fn write_anomalies(buf: &mut EveBuffer, spare: &mut Vec<u8>, n: u64) {
    let packet = [0x45u8; 90];
    let bits = |w: &mut shrike_output::JsonWriter| {
        w.open_array("flowbits").str("ET.Evil").close();
        true
    };
    for i in 0..n {
        let mut h = EveHeader::new(1_706_704_496_000_000_000 + i * 1000, "anomaly");
        h.flow_id = i + 1;
        h.pcap_cnt = i + 1;
        h.src_ip = Some(std::net::IpAddr::from([10, 1, 2, 3]));
        h.dest_ip = Some(std::net::IpAddr::from([10, 1, 2, 4]));
        h.ports = Some((1234, 80));
        h.proto = Some(6);
        h.pkt_src = Some("wire/pcap");
        let anomaly = match i % 3 {
            0 => Anomaly::Decode("decoder.ipv4.trunc_pkt"),
            1 => Anomaly::Stream("stream.pkt_invalid_ack"),
            _ => Anomaly::AppLayer {
                app_proto: "http",
                event: "UNABLE_TO_MATCH_RESPONSE_TO_REQUEST",
                layer: "proto_parser",
            },
        };
        let a = AnomalyRecord {
            header: h,
            metadata: Some(&bits),
            tx_id: (i % 3 == 2).then_some(i),
            anomaly,
            packet: (i % 3 != 2).then_some((&packet[..], 1)),
        };
        let mut r = buf.record(EventKind::Anomaly);
        write_anomaly_record(&mut r, &a);
        r.commit().unwrap();
        if buf.needs_flush() {
            buf.swap(spare);
            spare.clear();
        }
    }
}

#[test]
fn anomaly_records_allocate_nothing() {
    let mut buf = EveBuffer::new(64 * 1024);
    let mut spare = Vec::with_capacity(buf.capacity());
    write_anomalies(&mut buf, &mut spare, 2_000);
    let info = allocation_counter::measure(|| write_anomalies(&mut buf, &mut spare, 20_000));
    assert_eq!(info.count_total, 0, "allocations in steady state: {info:?}");
    assert!(buf.counts().records[EventKind::Anomaly.index()] > 0);
}
