//! EVE `alert` records and fast.log lines as Suricata 7 writes them.

mod engine_common;

use engine_common::*;
use shrike_capture::{LinkType, Timestamp};
use shrike_detect::decode::{decode, DecodeConfig, DecodeStats};
use shrike_detect::engine::output::{
    write_eve_alert, write_fast_alert, AlertContext, AlertFlowInfo,
};
use shrike_detect::engine::{AlertOutputConfig, EngineConfig, Packet};
use shrike_output::eve::addr::Ipv6Style;
use shrike_output::JsonWriter;

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
    });
    let ctx = AlertContext {
        pkt,
        pcap_cnt: 49,
        linktype: 1,
        flow,
        app_proto: None,
        app: None,
        flow_vars: None,
        ipv6: Ipv6Style::Full,
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
    use shrike_detect::engine::output::write_eve_tagged_packet;
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
        ipv6: Ipv6Style::Full,
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
    use shrike_detect::engine::FlowVars;
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
        ipv6: Ipv6Style::Full,
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
