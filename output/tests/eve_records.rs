//! Records built by the EVE helpers: byte-exact against Suricata 7.0.10 output where we have
//! it, and valid against the EVE schema in all cases.

mod common;

use std::net::IpAddr;

use shrike_output::eve::*;
use shrike_output::JsonWriter;

const NS: u64 = 1_000_000_000;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn text(w: &JsonWriter) -> &str {
    std::str::from_utf8(w.as_bytes()).unwrap()
}

/// suricata -r zeek/http-vlan-0.pcap, eve flow record (flow_id taken from that run).
const SURI_FLOW_TCP: &str = r#"{"timestamp":"2013-03-07T21:42:07.080972+0000","flow_id":1763481424524866,"event_type":"flow","vlan":[0],"src_ip":"141.142.228.5","src_port":59856,"dest_ip":"192.150.187.43","dest_port":80,"proto":"TCP","app_proto":"http","flow":{"pkts_toserver":7,"pkts_toclient":7,"bytes_toserver":638,"bytes_toclient":5505,"start":"2013-03-07T21:42:06.869344+0000","end":"2013-03-07T21:42:07.080972+0000","age":1,"state":"closed","reason":"shutdown","alerted":true},"tcp":{"tcp_flags":"1b","tcp_flags_ts":"1b","tcp_flags_tc":"1b","syn":true,"fin":true,"psh":true,"ack":true,"state":"closed","ts_max_regions":1,"tc_max_regions":1}}"#;

/// suricata -r zeek/communityid_icmp6.pcap, first ICMPv6 flow record.
const SURI_FLOW_ICMP6: &str = r#"{"timestamp":"1999-03-11T13:46:06.755968+0000","flow_id":180327163629002,"event_type":"flow","src_ip":"fe80:0000:0000:0000:0260:97ff:fe07:69ea","dest_ip":"fe80:0000:0000:0000:0200:86ff:fe05:80da","proto":"IPv6-ICMP","icmp_type":135,"icmp_code":0,"response_icmp_type":136,"response_icmp_code":0,"flow":{"pkts_toserver":2,"pkts_toclient":2,"bytes_toserver":172,"bytes_toclient":156,"start":"1999-03-11T13:45:12.631809+0000","end":"1999-03-11T13:46:06.755968+0000","age":54,"state":"established","reason":"shutdown","alerted":true}}"#;

/// suricata -r zeek/communityid_icmp6.pcap with payload, payload-printable and packet on.
const SURI_ALERT_ICMP6: &str = r#"{"timestamp":"1999-03-11T13:45:07.494265+0000","flow_id":996955065421258,"pcap_cnt":1,"event_type":"alert","src_ip":"fe80:0000:0000:0000:0200:86ff:fe05:80da","dest_ip":"fe80:0000:0000:0000:0260:97ff:fe07:69ea","proto":"IPv6-ICMP","icmp_type":135,"icmp_code":0,"pkt_src":"wire/pcap","alert":{"action":"allowed","gid":1,"signature_id":2000001,"rev":3,"signature":"ALL \"quoted\" back\\slash","category":"A Network Trojan was detected","severity":1},"direction":"to_server","flow":{"pkts_toserver":1,"pkts_toclient":0,"bytes_toserver":86,"bytes_toclient":0,"start":"1999-03-11T13:45:07.494265+0000","src_ip":"fe80:0000:0000:0000:0200:86ff:fe05:80da","dest_ip":"fe80:0000:0000:0000:0260:97ff:fe07:69ea"},"payload":"AAAAAP6AAAAAAAAAAmCX//4Haeo=","payload_printable":".............`....i.","stream":0,"packet":"AGCXB2nqAACGBYDaht1gAAAAACA6//6AAAAAAAAAAgCG//4FgNr+gAAAAAAAAAJgl//+B2nqhwBovQAAAAD+gAAAAAAAAAJgl//+B2nqAQEAAIYFgNo=","packet_info":{"linktype":1}}"#;

/// suricata -r suricata-verify vxlan-decoder-02/vxlan.pcap: the first alert, on a VXLAN
/// tunnel's inner ICMP packet (no `pcap_cnt` of its own; the root's is in `tunnel`).
const SURI_ALERT_VXLAN: &str = r#"{"timestamp":"2013-05-18T20:21:44.837063+0000","flow_id":217458926015601,"event_type":"alert","src_ip":"192.168.203.3","dest_ip":"192.168.203.5","proto":"ICMP","icmp_type":8,"icmp_code":0,"pkt_src":"vxlan encapsulation","alert":{"action":"allowed","gid":1,"signature_id":1,"rev":0,"signature":"","category":"","severity":3},"tunnel":{"src_ip":"192.168.203.1","src_port":45149,"dest_ip":"192.168.202.1","dest_port":4789,"proto":"UDP","depth":1,"pcap_cnt":1,"pkt_src":"wire/pcap"},"direction":"to_server","flow":{"pkts_toserver":1,"pkts_toclient":0,"bytes_toserver":84,"bytes_toclient":0,"start":"2013-05-18T20:21:44.837063+0000","src_ip":"192.168.203.3","dest_ip":"192.168.203.5"}}"#;

#[test]
fn vxlan_alert_matches_suricata() {
    let v = common::validator();
    let ts = 1_368_908_504 * NS + 837_063_000;
    let mut h = EveHeader::new(ts, "alert");
    h.flow_id = 217458926015601;
    h.src_ip = Some(ip("192.168.203.3"));
    h.dest_ip = Some(ip("192.168.203.5"));
    h.proto = Some(ipproto::ICMP);
    h.icmp = Some((8, 0));
    h.pkt_src = Some("vxlan encapsulation");
    let a = AlertRecord {
        header: h,
        action: "allowed",
        tunnel: Some(AlertTunnel {
            src_ip: ip("192.168.203.1"),
            dest_ip: ip("192.168.202.1"),
            src_port: 45149,
            dest_port: 4789,
            proto: ipproto::UDP,
            depth: 1,
            pcap_cnt: 1,
            pkt_src: "wire/pcap",
        }),
        gid: 1,
        signature_id: 1,
        rev: 0,
        signature: b"",
        category: None,
        severity: 3,
        metadata_json: None,
        app_proto: None,
        app_proto_more: [None; 4],
        direction: Some("to_server"),
        flow: Some(AlertFlow {
            pkts_toserver: 1,
            pkts_toclient: 0,
            bytes_toserver: 84,
            bytes_toclient: 0,
            start_ns: ts,
            src_ip: ip("192.168.203.3"),
            dest_ip: ip("192.168.203.5"),
            ports: None,
        }),
        payload: None,
        payload_base64: false,
        payload_printable: false,
        stream: None,
        packet: None,
        linktype: None,
        frame: None,
    };
    let mut w = JsonWriter::new();
    write_alert_record(&mut w, &a);
    assert_eq!(text(&w), SURI_ALERT_VXLAN);
    common::check_line(v.as_ref(), w.as_bytes());
}

fn tcp_flow() -> FlowRecord<'static> {
    FlowRecord {
        timestamp_ns: 1_362_692_527 * NS + 80_972_000,
        flow_id: 1763481424524866,
        in_iface: None,
        vlan: &[0],
        src_ip: ip("141.142.228.5"),
        dest_ip: ip("192.150.187.43"),
        src_port: 59856,
        dest_port: 80,
        proto: ipproto::TCP,
        icmp: None,
        spi: None,
        app_proto: Some("http"),
        app_proto_ts: Some("http"),
        app_proto_tc: None,
        app_proto_orig: None,
        app_proto_expected: None,
        pkts_toserver: 7,
        pkts_toclient: 7,
        bytes_toserver: 638,
        bytes_toclient: 5505,
        start_ns: 1_362_692_526 * NS + 869_344_000,
        end_ns: 1_362_692_527 * NS + 80_972_000,
        emergency: false,
        state: FlowState::Closed,
        reason: FlowEndReason::Shutdown,
        alerted: true,
        wrong_thread: false,
        action: None,
        tcp: Some(TcpFlowInfo {
            flags: 0x1b,
            flags_ts: 0x1b,
            flags_tc: 0x1b,
            state: Some("closed"),
            tc_gap: false,
            ts_gap: false,
            ts_max_regions: 1,
            tc_max_regions: 1,
        }),
        metadata: None,
        community_id: None,
        ipv6: Ipv6Style::Full,
    }
}

#[test]
fn flow_records_match_suricata() {
    let v = common::validator();
    let mut w = JsonWriter::new();
    write_flow_record(&mut w, &tcp_flow());
    assert_eq!(text(&w), SURI_FLOW_TCP);
    common::check_line(v.as_ref(), w.as_bytes());

    let mut f = tcp_flow();
    f.timestamp_ns = 921_159_966 * NS + 755_968_000;
    f.flow_id = 180327163629002;
    f.vlan = &[];
    f.src_ip = ip("fe80::260:97ff:fe07:69ea");
    f.dest_ip = ip("fe80::200:86ff:fe05:80da");
    f.proto = ipproto::ICMPV6;
    f.icmp = Some(FlowIcmp {
        icmp_type: 135,
        icmp_code: 0,
        response: Some((136, 0)),
    });
    f.app_proto = None;
    f.app_proto_ts = None;
    f.pkts_toserver = 2;
    f.pkts_toclient = 2;
    f.bytes_toserver = 172;
    f.bytes_toclient = 156;
    f.start_ns = 921_159_912 * NS + 631_809_000;
    f.end_ns = f.timestamp_ns;
    f.state = FlowState::Established;
    f.tcp = None;
    let mut w = JsonWriter::new();
    write_flow_record(&mut w, &f);
    assert_eq!(text(&w), SURI_FLOW_ICMP6);
    common::check_line(v.as_ref(), w.as_bytes());
}

#[test]
fn alert_record_matches_suricata() {
    let v = common::validator();
    let golden: serde_json::Value = serde_json::from_str(SURI_ALERT_ICMP6).unwrap();
    let payload = common::b64decode(golden["payload"].as_str().unwrap());
    let packet = common::b64decode(golden["packet"].as_str().unwrap());
    let mut h = EveHeader::new(921_159_907 * NS + 494_265_000, "alert");
    h.flow_id = 996955065421258;
    h.pcap_cnt = 1;
    h.src_ip = Some(ip("fe80::200:86ff:fe05:80da"));
    h.dest_ip = Some(ip("fe80::260:97ff:fe07:69ea"));
    h.proto = Some(ipproto::ICMPV6);
    h.icmp = Some((135, 0));
    h.pkt_src = Some("wire/pcap");
    let a = AlertRecord {
        header: h,
        action: "allowed",
        tunnel: None,
        gid: 1,
        signature_id: 2000001,
        rev: 3,
        signature: br#"ALL "quoted" back\slash"#,
        category: Some("A Network Trojan was detected"),
        severity: 1,
        metadata_json: None,
        app_proto: None,
        app_proto_more: [None; 4],
        direction: Some("to_server"),
        flow: Some(AlertFlow {
            pkts_toserver: 1,
            pkts_toclient: 0,
            bytes_toserver: 86,
            bytes_toclient: 0,
            start_ns: 921_159_907 * NS + 494_265_000,
            src_ip: ip("fe80::200:86ff:fe05:80da"),
            dest_ip: ip("fe80::260:97ff:fe07:69ea"),
            ports: None,
        }),
        payload: Some(&payload),
        payload_base64: true,
        payload_printable: true,
        stream: Some(0),
        packet: Some(&packet),
        linktype: Some(1),
        frame: None,
    };
    let mut w = JsonWriter::new();
    write_alert_record(&mut w, &a);
    assert_eq!(text(&w), SURI_ALERT_ICMP6);
    common::check_line(v.as_ref(), w.as_bytes());
}

#[test]
fn varied_records_validate() {
    let v = common::validator();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut w = JsonWriter::new();

    // Alerts: TCP with vlan, metadata, invalid UTF-8 msg, no category, in_iface, ip_v.
    for (proto, ports, icmp) in [
        (ipproto::TCP, Some((1234, 80)), None),
        (ipproto::UDP, Some((53, 5353)), None),
        (ipproto::SCTP, Some((7, 7)), None),
        (ipproto::ICMP, None, Some((8, 0))),
        (47u8, None, None),
        (250u8, None, None),
    ] {
        let mut h = EveHeader::new(1_706_704_496 * NS, "alert");
        h.flow_id = 42;
        h.in_iface = Some("eth0");
        h.vlan = &[10, 20, 30, 40];
        h.src_ip = Some(ip("10.0.0.1"));
        h.dest_ip = Some(ip("2001:db8::1"));
        h.ports = ports;
        h.proto = Some(proto);
        h.ip_v = Some(4);
        h.icmp = icmp;
        h.pkt_src = Some("wire/pcap");
        let a = AlertRecord {
            header: h,
            action: "blocked",
            tunnel: (proto == ipproto::ICMP).then(|| AlertTunnel {
                src_ip: ip("192.168.203.1"),
                dest_ip: ip("192.168.202.1"),
                src_port: 45149,
                dest_port: 4789,
                proto: ipproto::UDP,
                depth: 1,
                pcap_cnt: 0,
                pkt_src: "wire/pcap",
            }),
            gid: 1,
            signature_id: 9,
            rev: 2,
            signature: b"bad \xff\x00 msg",
            category: None,
            severity: 3,
            metadata_json: Some(br#"{"policy":["balanced"],"created_at":["2024_01_01"]}"#),
            app_proto: Some("dns"),
            app_proto_more: [None; 4],
            direction: Some("to_client"),
            flow: Some(AlertFlow {
                pkts_toserver: 1,
                pkts_toclient: 2,
                bytes_toserver: 3,
                bytes_toclient: 4,
                start_ns: 5,
                src_ip: ip("10.0.0.1"),
                dest_ip: ip("10.0.0.2"),
                ports,
            }),
            payload: Some(b"GET / HTTP/1.1\r\n\t\"\\\x00\xff"),
            payload_base64: true,
            payload_printable: true,
            stream: Some(1),
            packet: Some(b""),
            linktype: Some(1),
            frame: None,
        };
        w.clear();
        write_alert_record(&mut w, &a);
        assert!(w.is_complete(), "{}", text(&w));
        lines.push(w.as_bytes().to_vec());
    }

    // Flows: UDP failed app_proto, ESP spi, ICMP without response, TCP without session,
    // IPv6 compressed, emergency/wrong_thread/action, timeout.
    let mut f = tcp_flow();
    f.tcp = Some(TcpFlowInfo {
        flags: 0xff,
        flags_ts: 0x02,
        flags_tc: 0x00,
        state: None,
        ..TcpFlowInfo::default()
    });
    f.emergency = true;
    f.wrong_thread = true;
    f.action = Some("drop");
    f.reason = FlowEndReason::Timeout;
    f.in_iface = Some("eth1");
    lines.push(build_flow(&mut w, &f));
    f.tcp = Some(TcpFlowInfo {
        state: Some("established"),
        ts_gap: true,
        tc_gap: true,
        ..TcpFlowInfo::default()
    });
    lines.push(build_flow(&mut w, &f));
    let mut u = tcp_flow();
    u.proto = ipproto::UDP;
    u.tcp = None;
    u.app_proto = Some("failed");
    u.src_ip = ip("2001:db8::5");
    u.dest_ip = ip("ff02::1");
    u.ipv6 = Ipv6Style::Compressed;
    u.state = FlowState::New;
    u.reason = FlowEndReason::Forced;
    lines.push(build_flow(&mut w, &u));
    let mut e = u;
    e.proto = ipproto::ESP;
    e.spi = Some(0xdeadbeef);
    e.app_proto = None;
    e.state = FlowState::Bypassed;
    e.reason = FlowEndReason::Unknown;
    lines.push(build_flow(&mut w, &e));
    let mut i = u;
    i.proto = ipproto::ICMP;
    i.icmp = Some(FlowIcmp {
        icmp_type: 3,
        icmp_code: 1,
        response: None,
    });
    lines.push(build_flow(&mut w, &i));

    // Stats: names that exist in the schema, nested.
    let mut t = StatsTree::new();
    for (n, val) in [
        ("decoder.pkts", 100u64),
        ("decoder.bytes", 10_000),
        ("decoder.event.ipv4.trunc_pkt", 2),
        ("decoder.event.ipv6.trunc_pkt", 0),
        ("flow.total", 7),
        ("flow.tcp", 5),
        ("tcp.syn", 3),
        ("detect.alert", 1),
        ("app_layer.flow.http", 1),
        ("capture.kernel_packets", 100),
    ] {
        t.add(n, val);
    }
    w.clear();
    write_stats_record(&mut w, 1_706_704_496 * NS, 12, &mut t);
    let stats_line = w.as_bytes().to_vec();
    lines.push(stats_line.clone());

    for l in &lines {
        common::check_line(v.as_ref(), l);
    }
    let s: serde_json::Value = serde_json::from_slice(&stats_line).unwrap();
    assert_eq!(s["stats"]["uptime"], 12);
    assert_eq!(s["stats"]["decoder"]["event"]["ipv4"]["trunc_pkt"], 2);
    assert_eq!(s["stats"]["app_layer"]["flow"]["http"], 1);
    // Invalid UTF-8 in a message is written like Suricata: `\xff` as text.
    let a: serde_json::Value = serde_json::from_slice(&lines[0]).unwrap();
    assert_eq!(a["alert"]["signature"], "bad \\xff\u{0} msg");
    assert_eq!(a["alert"]["category"], "");
    assert_eq!(a["vlan"], serde_json::json!([10, 20, 30]));
    assert_eq!(a["payload_printable"], "GET / HTTP/1.1\r\n.\"\\..");
    let icmp: serde_json::Value = serde_json::from_slice(&lines[3]).unwrap();
    assert!(icmp.get("src_port").is_none());
    assert_eq!(icmp["proto"], "ICMP");
    let unknown: serde_json::Value = serde_json::from_slice(&lines[5]).unwrap();
    assert_eq!(unknown["proto"], "250");
}

/// The output crate's own counters are not valid EVE stats names: they must stay out of EVE.
#[test]
fn output_counters_are_not_eve_stats() {
    let Some(v) = common::validator() else { return };
    let mut t = StatsTree::new();
    shrike_output::OutputStats::default().visit(&mut |n, val| t.add(n, val));
    let mut w = JsonWriter::new();
    write_stats_record(&mut w, 0, 1, &mut t);
    let value: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
    assert!(!v.is_valid(&value));
}

fn build_flow(w: &mut JsonWriter, f: &FlowRecord<'_>) -> Vec<u8> {
    w.clear();
    write_flow_record(w, f);
    assert!(w.is_complete(), "{}", text(w));
    w.as_bytes().to_vec()
}

/// suricata -r output-eve-anomaly-packethdr/anomaly.pcap, `decode: yes`, `packethdr: yes`.
const SURI_ANOMALY_DECODE: &str = r#"{"timestamp":"1970-01-01T00:00:00.000000+0000","flow_id":3152781851,"pcap_cnt":1,"event_type":"anomaly","src_ip":"204.252.102.11","dest_ip":"206.65.98.18","proto":"ICMP","icmp_type":24,"icmp_code":79,"pkt_src":"wire/pcap","anomaly":{"type":"decode","event":"decoder.icmpv4.unknown_type"},"packet":"////////AQEBAQEBCABFAABUj7NAAP0BipnM/GYLzkE=","packet_info":{"linktype":1}}"#;

/// The same capture: a packet whose IPv4 header did not decode (no addresses, no flow).
const SURI_ANOMALY_TRUNC: &str = r#"{"timestamp":"1970-01-01T00:00:12.000000+0000","pcap_cnt":13,"event_type":"anomaly","pkt_src":"wire/pcap","anomaly":{"type":"decode","event":"decoder.ipv4.trunc_pkt"}}"#;

/// suricata -r output-eve-anomaly-02/input.pcap with output-eve-anomaly-05's rules and
/// config (`stream: yes`; eve `metadata` on).
const SURI_ANOMALY_STREAM: &str = r#"{"timestamp":"2017-01-04T17:42:53.354700+0000","flow_id":1445120213977058,"pcap_cnt":10,"event_type":"anomaly","src_ip":"10.16.1.1","src_port":22,"dest_ip":"10.16.1.11","dest_port":32928,"proto":"TCP","pkt_src":"wire/pcap","metadata":{"flowbits":["ET.Evil","ET.BotccIP"]},"anomaly":{"type":"stream","event":"stream.pkt_invalid_timestamp"}}"#;

/// suricata -k none --set stream.midstream=true -r tcp-stream-after-swap/....pcap.
const SURI_ANOMALY_HTTP: &str = r#"{"timestamp":"2018-07-04T09:35:14.780442+0000","flow_id":718311539625806,"pcap_cnt":3,"event_type":"anomaly","src_ip":"172.16.9.181","src_port":38498,"dest_ip":"172.16.9.189","dest_port":80,"proto":"TCP","pkt_src":"wire/pcap","tx_id":0,"anomaly":{"app_proto":"http","type":"applayer","event":"UNABLE_TO_MATCH_RESPONSE_TO_REQUEST","layer":"proto_parser"}}"#;

/// suricata -r output-eve-anomaly-02/input.pcap (protocol detection event).
const SURI_ANOMALY_DETECT: &str = r#"{"timestamp":"2017-01-04T17:42:53.353882+0000","flow_id":1445122099729289,"pcap_cnt":7,"event_type":"anomaly","src_ip":"10.16.1.11","src_port":32928,"dest_ip":"10.16.1.1","dest_port":22,"proto":"TCP","pkt_src":"wire/pcap","anomaly":{"app_proto":"http","type":"applayer","event":"APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS","layer":"proto_detect"}}"#;

fn anomaly_header(ts_ns: u64, flow_id: u64, pcap_cnt: u64) -> EveHeader<'static> {
    EveHeader {
        flow_id,
        pcap_cnt,
        pkt_src: Some("wire/pcap"),
        ..EveHeader::new(ts_ns, "anomaly")
    }
}

fn tcp_anomaly_header(
    ts_ns: u64,
    flow_id: u64,
    pcap_cnt: u64,
    src: &str,
    dst: &str,
    ports: (u16, u16),
) -> EveHeader<'static> {
    EveHeader {
        src_ip: Some(ip(src)),
        dest_ip: Some(ip(dst)),
        ports: Some(ports),
        proto: Some(ipproto::TCP),
        ..anomaly_header(ts_ns, flow_id, pcap_cnt)
    }
}

#[test]
fn anomaly_records_match_suricata() {
    let v = common::validator();
    let check = |rec: &AnomalyRecord<'_>, want: &str| {
        let mut w = JsonWriter::new();
        write_anomaly_record(&mut w, rec);
        assert_eq!(text(&w), want);
        common::check_line(v.as_ref(), w.as_bytes());
    };

    let golden: serde_json::Value = serde_json::from_str(SURI_ANOMALY_DECODE).unwrap();
    let packet = common::b64decode(golden["packet"].as_str().unwrap());
    // A whole frame is handed over; only its first 32 bytes are logged.
    let mut frame = packet.clone();
    frame.extend_from_slice(&[0xaa; 66]);
    let decode = AnomalyRecord {
        header: EveHeader {
            src_ip: Some(ip("204.252.102.11")),
            dest_ip: Some(ip("206.65.98.18")),
            proto: Some(ipproto::ICMP),
            icmp: Some((24, 79)),
            ..anomaly_header(0, 3152781851, 1)
        },
        metadata: None,
        tx_id: None,
        anomaly: Anomaly::Decode("decoder.icmpv4.unknown_type"),
        packet: Some((&frame, 1)),
    };
    check(&decode, SURI_ANOMALY_DECODE);

    let trunc = AnomalyRecord {
        header: anomaly_header(12 * NS, 0, 13),
        metadata: None,
        tx_id: None,
        anomaly: Anomaly::Decode("decoder.ipv4.trunc_pkt"),
        packet: None,
    };
    check(&trunc, SURI_ANOMALY_TRUNC);

    let bits = |w: &mut JsonWriter| {
        w.open_array("flowbits")
            .str("ET.Evil")
            .str("ET.BotccIP")
            .close();
        true
    };
    let ts = 1_483_551_773 * NS + 354_700_000;
    let stream = AnomalyRecord {
        header: tcp_anomaly_header(
            ts,
            1445120213977058,
            10,
            "10.16.1.1",
            "10.16.1.11",
            (22, 32928),
        ),
        metadata: Some(&bits),
        tx_id: None,
        anomaly: Anomaly::Stream("stream.pkt_invalid_timestamp"),
        packet: None,
    };
    check(&stream, SURI_ANOMALY_STREAM);

    let http = AnomalyRecord {
        header: tcp_anomaly_header(
            1_530_696_914 * NS + 780_442_000,
            718311539625806,
            3,
            "172.16.9.181",
            "172.16.9.189",
            (38498, 80),
        ),
        metadata: None,
        tx_id: Some(0),
        anomaly: Anomaly::AppLayer {
            app_proto: "http",
            event: "UNABLE_TO_MATCH_RESPONSE_TO_REQUEST",
            layer: "proto_parser",
        },
        packet: None,
    };
    check(&http, SURI_ANOMALY_HTTP);

    let detect = AnomalyRecord {
        header: tcp_anomaly_header(
            1_483_551_773 * NS + 353_882_000,
            1445122099729289,
            7,
            "10.16.1.11",
            "10.16.1.1",
            (32928, 22),
        ),
        metadata: None,
        tx_id: None,
        anomaly: Anomaly::AppLayer {
            app_proto: "http",
            event: "APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS",
            layer: "proto_detect",
        },
        packet: None,
    };
    check(&detect, SURI_ANOMALY_DETECT);
}

#[test]
fn anomaly_records_validate_in_every_shape() {
    let v = common::validator();
    let pkt = [0x45u8; 20];
    let meta = |w: &mut JsonWriter| {
        w.open_object("flowints").set_u64("count", 2).close();
        true
    };
    let kinds = [
        Anomaly::Decode("decoder.too_many_layers"),
        Anomaly::Stream("stream.3whs_synack_resend_with_diff_ack"),
        Anomaly::AppLayer {
            app_proto: "dns",
            event: "z_flag_set",
            layer: "proto_parser",
        },
        Anomaly::AppLayer {
            app_proto: "failed",
            event: "x\"y",
            layer: "parser",
        },
    ];
    let headers = [
        anomaly_header(1, 0, 0),
        tcp_anomaly_header(5 * NS, 9, 4, "::1", "fe80::1", (1, 2)),
        EveHeader {
            vlan: &[10, 20],
            ..tcp_anomaly_header(5 * NS, 9, 4, "10.0.0.1", "10.0.0.2", (80, 8080))
        },
    ];
    for h in headers {
        for a in kinds {
            for (md, tx, p) in [
                (false, None, None),
                (true, Some(7u64), Some((&pkt[..], 1u32))),
                (true, None, Some((&pkt[..3], 101))),
            ] {
                let rec = AnomalyRecord {
                    header: h,
                    metadata: md.then_some(&meta as &dyn Fn(&mut JsonWriter) -> bool),
                    tx_id: tx,
                    anomaly: a,
                    packet: p,
                };
                let mut w = JsonWriter::new();
                write_anomaly_record(&mut w, &rec);
                assert!(w.is_complete() && w.error().is_none());
                let val = common::check_line(v.as_ref(), w.as_bytes());
                assert_eq!(val["event_type"], "anomaly");
                assert_eq!(val["anomaly"]["type"], a.type_name());
                assert_eq!(val.get("tx_id").and_then(|t| t.as_u64()), tx);
                assert_eq!(val.get("metadata").is_some(), md);
            }
        }
    }
}
