//! EVE `alert` records and fast.log lines as Suricata 7 writes them.

mod engine_common;

use engine_common::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_detect::output::{write_eve_alert, write_fast_alert, AlertContext, AlertFlowInfo};
use shrike_detect::{AlertOutputConfig, EngineConfig, Packet};
use shrike_output::eve::addr::Ipv6Style;
use shrike_output::JsonWriter;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};

fn validator() -> Option<jsonschema::Validator> {
    let p = [
        std::env::var("SHRIKE_EVE_SCHEMA")
            .ok()
            .map(std::path::PathBuf::from),
        Some(
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/eve-schema/schema.json"),
        ),
        Some(std::path::PathBuf::from(
            "/work/shared/eve-schema/schema.json",
        )),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_file())?;
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
    jsonschema::draft202012::new(&schema).ok()
}

struct Out {
    eve: String,
    fast: String,
}

fn render(rules: &str, cfg: &EngineConfig, frame: &[u8], with_flow: bool) -> Vec<Out> {
    let engine = engine_with(rules, cfg);
    let mut th = engine.thread();
    let m = decode(
        LinkType::Ethernet,
        frame,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let ts = Timestamp(1_705_305_600_000_561_000);
    let pkt = Packet {
        meta: &m,
        data: frame,
        ts,
    };
    let alerts = engine.inspect(&pkt, None, &mut th).to_vec();
    let flow = with_flow.then(|| AlertFlowInfo {
        flow_id: 2412135770887,
        to_server: true,
        pkts_toserver: 1,
        pkts_toclient: 0,
        bytes_toserver: frame.len() as u64,
        bytes_toclient: 0,
        start_ns: ts.0,
        client: m.src_addr().expect("ip"),
        server: m.dst_addr().expect("ip"),
        ports: (m.proto == 17 || m.proto == 6).then_some((m.sport, m.dport)),
        community_id: None,
        vlan: ([0; 3], 0),
    });
    let ctx = AlertContext {
        pkt,
        pcap_cnt: 49,
        linktype: 1,
        flow,
        app_proto: None,
        app: None,
        flow_vars: None,
        pkt_vars: &[],
        ipv6: Ipv6Style::Full,
        tcp: None,
    };
    alerts
        .iter()
        .map(|a| {
            let mut w = JsonWriter::new();
            write_eve_alert(&mut w, &engine, a, &ctx);
            let mut fast = Vec::new();
            write_fast_alert(&mut fast, &engine, a, &ctx);
            Out {
                eve: String::from_utf8(w.into_inner()).expect("utf8"),
                fast: String::from_utf8(fast).expect("utf8"),
            }
        })
        .collect()
}

#[test]
fn icmp_alert_matches_suricata_record() {
    let frame = icmp4_echo([10, 1, 28, 70], [192, 0, 2, 199], 8, 1, 1, &[0u8; 48]);
    let out = render(
        "alert icmp any any -> any any (msg:\"icmp\"; itype:8; sid:6; rev:2;)",
        &EngineConfig::default(),
        &frame,
        true,
    );
    assert_eq!(out.len(), 1);
    // Suricata 7.0.10 on the same packet (flow counters as given).
    let want = format!(
        "{{\"timestamp\":\"2024-01-15T08:00:00.000561+0000\",\"flow_id\":2412135770887,\"pcap_cnt\":49,\"event_type\":\"alert\",\"src_ip\":\"10.1.28.70\",\"dest_ip\":\"192.0.2.199\",\"proto\":\"ICMP\",\"icmp_type\":8,\"icmp_code\":0,\"pkt_src\":\"wire/pcap\",\"alert\":{{\"action\":\"allowed\",\"gid\":1,\"signature_id\":6,\"rev\":2,\"signature\":\"icmp\",\"category\":\"\",\"severity\":3}},\"direction\":\"to_server\",\"flow\":{{\"pkts_toserver\":1,\"pkts_toclient\":0,\"bytes_toserver\":{},\"bytes_toclient\":0,\"start\":\"2024-01-15T08:00:00.000561+0000\",\"src_ip\":\"10.1.28.70\",\"dest_ip\":\"192.0.2.199\"}}}}",
        frame.len()
    );
    assert_eq!(out[0].eve, want);
    assert_eq!(
        out[0].fast,
        "01/15/2024-08:00:00.000561  [**] [1:6:2] icmp [**] [Classification: (null)] [Priority: 3] {ICMP} 10.1.28.70:8 -> 192.0.2.199:0\n"
    );
}

#[test]
fn metadata_classification_and_options() {
    let rules = "alert udp any any -> any 53 (msg:\"meta \\\"q\\\"\"; content:\"tk\"; \
                 metadata: updated_at 2022_05_03, created_at 2011_06_14, created_at 2012; \
                 classtype:attempted-recon; sid:5;)";
    let frame = udp4(C4, S4, 1000, 53, b"\x02tk\x00");
    let cfg = EngineConfig {
        alert: AlertOutputConfig {
            payload: true,
            payload_printable: true,
            packet: true,
            metadata: true,
            tagged_packets: false,
            ethernet: true,
            ..AlertOutputConfig::default()
        },
        ..EngineConfig::default()
    };
    let out = render(rules, &cfg, &frame, true);
    let e = &out[0].eve;
    // Suricata's metadata order: keys sorted, values reversed from the rule text.
    assert!(
        e.contains("\"metadata\":{\"created_at\":[\"2012\",\"2011_06_14\"],\"updated_at\":[\"2022_05_03\"]}"),
        "{e}"
    );
    assert!(
        e.contains("\"category\":\"Attempted Information Leak\",\"severity\":2"),
        "{e}"
    );
    assert!(e.contains("\"signature\":\"meta \\\"q\\\"\""), "{e}");
    let order = [
        "\"timestamp\"",
        "\"flow_id\"",
        "\"pcap_cnt\"",
        "\"event_type\"",
        "\"src_ip\"",
        "\"src_port\"",
        "\"dest_ip\"",
        "\"dest_port\"",
        "\"proto\"",
        "\"pkt_src\"",
        "\"ether\":{\"src_mac\":",
        "\"alert\":{",
        "\"direction\"",
        "\"flow\":{",
        "\"payload\"",
        "\"payload_printable\"",
        "\"stream\":0",
        "\"packet\"",
        "\"packet_info\":{\"linktype\":1}",
    ];
    let pos: Vec<usize> = order
        .iter()
        .map(|k| e.find(k).unwrap_or_else(|| panic!("{k} missing in {e}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{e}");
    assert!(e.contains("\"payload_printable\":\".tk.\""), "{e}");
    let v: serde_json::Value = serde_json::from_str(e).expect("json");
    if let Some(val) = validator() {
        let errs: Vec<String> = val.iter_errors(&v).map(|x| x.to_string()).collect();
        assert!(errs.is_empty(), "{errs:?}");
    }
    assert!(out[0]
        .fast
        .contains("[1:5:0] meta \"q\" [**] [Classification: Attempted Information Leak] [Priority: 2] {UDP} 192.168.1.10:1000 -> 203.0.113.5:53"));

    let cfg = EngineConfig {
        alert: AlertOutputConfig {
            metadata: false,
            ..AlertOutputConfig::default()
        },
        ..EngineConfig::default()
    };
    let out = render(rules, &cfg, &frame, false);
    assert!(!out[0].eve.contains("metadata"));
    assert!(!out[0].eve.contains("\"flow\""));
    assert!(!out[0].eve.contains("direction"));
    assert!(!out[0].eve.contains("payload"));
    assert!(!out[0].eve.contains("ether"));
}

#[test]
fn decoder_event_alert_without_addresses() {
    // Not IPv4 at all after the Ethernet header: an IPv4 ethertype with a bad version.
    let mut frame = udp4(C4, S4, 1, 2, b"x");
    frame[14] = 0x35;
    let out = render(
        "alert pkthdr any any -> any any (msg:\"bad ver\"; decode-event:ipv4.wrong_ip_version; sid:9;)",
        &EngineConfig::default(),
        &frame,
        false,
    );
    assert_eq!(out.len(), 1, "decoder event alert");
    let v: serde_json::Value = serde_json::from_str(&out[0].eve).expect("json");
    assert!(v.get("src_ip").is_none() && v.get("proto").is_none());
    if let Some(val) = validator() {
        assert!(val.is_valid(&v), "{}", out[0].eve);
    }
    assert!(
        out[0].fast.contains("[**] [Raw pkt: 66 77 88 99 AA BB "),
        "{}",
        out[0].fast
    );
    assert!(
        out[0].fast.ends_with("] [pcap file packet: 49]\n"),
        "{}",
        out[0].fast
    );
}

#[test]
fn tagged_packet_record() {
    use shrike_detect::output::write_eve_tagged_packet;
    let frame = tcp4(C4, S4, 40000, 22, 1, 1, ACK, b"SSH-2.0");
    let m = decode(
        LinkType::Ethernet,
        &frame,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let ctx = AlertContext {
        pkt: Packet {
            meta: &m,
            data: &frame,
            ts: Timestamp(1_591_180_157_694_894_000),
        },
        pcap_cnt: 9,
        linktype: 1,
        flow: None,
        app_proto: None,
        app: None,
        flow_vars: None,
        pkt_vars: &[],
        ipv6: Ipv6Style::Full,
        tcp: None,
    };
    let mut w = JsonWriter::new();
    write_eve_tagged_packet(&mut w, &ctx);
    let s = String::from_utf8(w.into_inner()).expect("utf8");
    assert!(s.starts_with("{\"timestamp\":\"2020-06-03T10:29:17.694894+0000\",\"pcap_cnt\":9,\"event_type\":\"packet\",\"src_ip\":\"192.168.1.10\",\"src_port\":40000"), "{s}");
    assert!(s.contains("\"pkt_src\":\"wire/pcap\",\"packet\":\""), "{s}");
    assert!(s.ends_with("\"packet_info\":{\"linktype\":1}}"), "{s}");
    let v: serde_json::Value = serde_json::from_str(&s).expect("json");
    if let Some(val) = validator() {
        let errs: Vec<String> = val.iter_errors(&v).map(|x| x.to_string()).collect();
        assert!(errs.is_empty(), "{errs:?}");
    }
}

#[test]
fn target_and_flow_variables() {
    use shrike_detect::FlowVars;
    let engine = engine_with(
        "alert tcp any any -> any 2404 (msg:\"t\"; flowbits:set,ET.TorIP; target:dest_ip; sid:1;)",
        &EngineConfig::default(),
    );
    let frame = tcp4(
        [172, 27, 248, 109],
        [172, 27, 248, 79],
        1568,
        2404,
        1,
        1,
        ACK | PSH,
        b"x",
    );
    let m = decode(
        LinkType::Ethernet,
        &frame,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let pkt = Packet {
        meta: &m,
        data: &frame,
        ts: Timestamp(1_220_000_000_000_000_000),
    };
    let mut th = engine.thread();
    let alerts = engine.inspect(&pkt, None, &mut th).to_vec();
    assert_eq!(alerts.len(), 1);
    let mut vars = FlowVars::default();
    vars.set_bit(0, true);
    vars.set_int(0, 3);
    let ctx = AlertContext {
        pkt,
        pcap_cnt: 4,
        linktype: 1,
        flow: None,
        app_proto: None,
        app: None,
        flow_vars: Some(&vars),
        pkt_vars: &[],
        ipv6: Ipv6Style::Full,
        tcp: None,
    };
    let mut w = JsonWriter::new();
    write_eve_alert(&mut w, &engine, &alerts[0], &ctx);
    let s = String::from_utf8(w.into_inner()).expect("utf8");
    // As Suricata 7.0.10 writes it (ET SCADA rule with target:dest_ip, ET.TorIP flowbit).
    assert!(
        s.contains(
            "\"pkt_src\":\"wire/pcap\",\"metadata\":{\"flowbits\":[\"ET.TorIP\"]},\"alert\":{"
        ),
        "{s}"
    );
    assert!(s.contains("\"severity\":3,\"source\":{\"ip\":\"172.27.248.109\",\"port\":1568},\"target\":{\"ip\":\"172.27.248.79\",\"port\":2404}}"), "{s}");
    let v: serde_json::Value = serde_json::from_str(&s).expect("json");
    if let Some(val) = validator() {
        let errs: Vec<String> = val.iter_errors(&v).map(|x| x.to_string()).collect();
        assert!(errs.is_empty(), "{errs:?}");
    }
}

fn payload_cfg(payload: bool, printable: bool) -> EngineConfig {
    EngineConfig {
        alert: AlertOutputConfig {
            payload,
            payload_printable: printable,
            ..AlertOutputConfig::default()
        },
        ..EngineConfig::default()
    }
}

#[test]
fn payload_keys_follow_the_options() {
    // (payload, payload-printable, packet payload, expected keys, absent keys), as
    // Suricata 7.0.10 writes them: `stream` with either option, `payload_printable` even
    // for an empty payload, the base64 `payload` only when non-empty.
    type Case<'a> = (bool, bool, &'a [u8], &'a [&'a str], &'a [&'a str]);
    let cases: &[Case] = &[
        (
            true,
            true,
            b"GET /",
            &[
                "\"payload\":\"R0VUIC8=\"",
                "\"payload_printable\":\"GET /\"",
                "\"stream\":0",
            ],
            &[],
        ),
        (
            true,
            true,
            b"",
            &["\"payload_printable\":\"\"", "\"stream\":0"],
            &["\"payload\":"],
        ),
        (
            false,
            true,
            b"GET /",
            &["\"payload_printable\":\"GET /\"", "\"stream\":0"],
            &["\"payload\":"],
        ),
        (
            true,
            false,
            b"GET /",
            &["\"payload\":\"R0VUIC8=\"", "\"stream\":0"],
            &["\"payload_printable\""],
        ),
        (
            false,
            false,
            b"GET /",
            &[],
            &["\"payload\":", "\"payload_printable\"", "\"stream\""],
        ),
    ];
    for (i, &(b64, printable, data, has, lacks)) in cases.iter().enumerate() {
        let frame = tcp4(C4, S4, 40000, 80, 1, 1, ACK | PSH, data);
        let out = render(
            "alert tcp any any -> any any (flags:A+; sid:1;)",
            &payload_cfg(b64, printable),
            &frame,
            true,
        );
        let e = &out[0].eve;
        for k in has {
            assert!(e.contains(k), "case {i}: {k} missing in {e}");
        }
        for k in lacks {
            assert!(!e.contains(k), "case {i}: {k} present in {e}");
        }
    }
}

#[test]
fn stream_alert_logs_the_stream_with_gap_markers() {
    use shrike_app::Dir;
    use shrike_detect::Alert;
    use shrike_stream::{HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, TcpSession};
    // Handshake (client ISN 1), then "GOOD" at seq 6 and "DATA" at seq 10 (4 bytes
    // missing), both acked: sv eve-payload-06-tcp-data-leading-gap.
    let mut eng = StreamEngine::new(StreamConfig::default(), HostOsPolicy::new(OsPolicy::Bsd));
    let mut ssn = TcpSession::new();
    let pkts: [(bool, u8, u32, u32, &[u8]); 7] = [
        (true, SYN, 1, 0, b""),
        (false, SYN | ACK, 1000, 2, b""),
        (true, ACK, 2, 1001, b""),
        (false, ACK, 1001, 2, b""),
        (true, ACK, 6, 1001, b"GOOD"),
        (true, ACK, 10, 1001, b"DATA"),
        (false, ACK, 1001, 14, b""),
    ];
    for (i, &(ts, f, seq, ack, data)) in pkts.iter().enumerate() {
        let frame = if ts {
            tcp4(C4, S4, 12345, 8080, seq, ack, f, data)
        } else {
            tcp4(S4, C4, 8080, 12345, seq, ack, f, data)
        };
        let m = decode(
            LinkType::Ethernet,
            &frame,
            &DecodeConfig::default(),
            &mut DecodeStats::default(),
        );
        let dir = if ts { Dir::ToServer } else { Dir::ToClient };
        eng.on_packet(&mut ssn, &m, &frame, dir, i as u32);
    }
    let engine = engine_with(
        "alert tcp any any -> any any (content:\"GOOD\"; sid:2;)",
        &payload_cfg(true, true),
    );
    let frame = tcp4(C4, S4, 12345, 8080, 10, 1001, ACK, b"DATA");
    let m = decode(
        LinkType::Ethernet,
        &frame,
        &DecodeConfig::default(),
        &mut DecodeStats::default(),
    );
    let info = AlertFlowInfo {
        flow_id: 1,
        to_server: true,
        pkts_toserver: 4,
        pkts_toclient: 3,
        bytes_toserver: 0,
        bytes_toclient: 0,
        start_ns: 0,
        client: m.src_addr().expect("ip"),
        server: m.dst_addr().expect("ip"),
        ports: Some((12345, 8080)),
        community_id: None,
        vlan: ([0; 3], 0),
    };
    // (stream match, session given, pcap_cnt) -> (payload_printable, stream)
    let cases: &[(bool, bool, u64, Option<&str>, u8)] = &[
        (true, true, 6, Some("[4 bytes missing]GOODDATA"), 1),
        (true, true, 0, Some("[4 bytes missing]GOODDATA"), 1),
        // No stream data: the packet payload, still with stream 1; none on pseudo packets.
        (true, false, 6, Some("DATA"), 1),
        (true, false, 0, None, 1),
        (false, true, 6, Some("DATA"), 0),
    ];
    for (i, &(stream, with_ssn, pcap_cnt, want, want_stream)) in cases.iter().enumerate() {
        let ctx = AlertContext {
            pkt: Packet {
                meta: &m,
                data: &frame,
                ts: Timestamp(1),
            },
            pcap_cnt,
            linktype: 1,
            flow: Some(info),
            app_proto: None,
            app: None,
            flow_vars: None,
            pkt_vars: &[],
            ipv6: Ipv6Style::Full,
            tcp: with_ssn.then_some(&ssn),
        };
        let a = Alert {
            sig: 0,
            log: true,
            tx: None,
            stream,
            frame: None,
        };
        let mut w = JsonWriter::new();
        write_eve_alert(&mut w, &engine, &a, &ctx);
        let v: serde_json::Value = serde_json::from_slice(&w.into_inner()).expect("json");
        assert_eq!(v["payload_printable"].as_str(), want, "case {i}: {v}");
        assert_eq!(v["stream"], want_stream, "case {i}: {v}");
    }
}
