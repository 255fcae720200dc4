//! Logged transactions are not kept for detection that will never inspect them: with no
//! rule of the protocol (no rules at all, or only other protocols'), each flow's logged transactions are freed at
//! once, so thousands of open MQTT connections with many messages each hold little memory
//! (they held 32 logged transactions each, about 20 KiB per connection: 4,000 connections
//! peaked at about 130 MB where this bound is 64 MiB). Suricata frees a transaction once
//! logged and inspected.

mod hostile_util;

use hostile_util::*;
use std::ffi::OsStr;

fn mqtt_packet(ptype: u8, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![(ptype << 4) | flags];
    let mut n = body.len();
    loop {
        let b = (n % 128) as u8;
        n /= 128;
        p.push(if n > 0 { b | 0x80 } else { b });
        if n == 0 {
            break;
        }
    }
    p.extend_from_slice(body);
    p
}

fn mqtt_str(s: &[u8]) -> Vec<u8> {
    let mut v = (s.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(s);
    v
}

#[test]
fn logged_mqtt_transactions_are_freed_without_rules() {
    run_mqtt_sessions("mqtt-tx-memory", None);
}

/// The same with rules, none of them MQTT's (an HTTP rule): the MQTT transactions are not
/// kept either.
#[test]
fn logged_mqtt_transactions_are_freed_without_mqtt_rules() {
    run_mqtt_sessions(
        "mqtt-tx-memory-http-rule",
        Some("alert http any any -> any any (http.uri; content:\"x\"; sid:1;)\n"),
    );
}

fn run_mqtt_sessions(tag: &str, rules: Option<&str>) {
    let dir = TempDir::new(tag);
    let mut cap = Pcap::new(1);
    let mut t = 1_700_000_000_000_000u64;
    let connect = {
        let mut b = mqtt_str(b"MQTT");
        b.extend_from_slice(&[4, 0x02, 0, 60]);
        b.extend(mqtt_str(b"client"));
        mqtt_packet(1, 0, &b)
    };
    let connack = mqtt_packet(2, 0, &[0, 0]);
    for c in 0..4000u32 {
        let mut msgs: Vec<(bool, Vec<u8>)> =
            vec![(true, connect.clone()), (false, connack.clone())];
        for i in 0..40u16 {
            let mut b = mqtt_str(format!("plant/line{}/sensor{i}", c % 7).as_bytes());
            b.extend_from_slice(&(i + 1).to_be_bytes());
            b.extend_from_slice(format!("{{\"v\":{}}}", u32::from(i) * c).as_bytes());
            msgs.push((true, mqtt_packet(3, 2, &b)));
            msgs.push((false, mqtt_packet(4, 0, &(i + 1).to_be_bytes())));
        }
        let refs: Vec<(bool, &[u8])> = msgs.iter().map(|(d, m)| (*d, m.as_slice())).collect();
        let client = [10, 20, (c >> 8) as u8, c as u8];
        tcp_conversation(
            &mut cap,
            &mut t,
            (client, [10, 30, 0, 1]),
            (40_000, 1883),
            &refs,
        );
    }
    let pcap = dir.path().join("mqtt.pcap");
    cap.write(&pcap);
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let rules_path = dir.path().join("t.rules");
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("-r"),
        pcap.as_os_str(),
        OsStr::new("-l"),
        logs.as_os_str(),
        OsStr::new("-k"),
        OsStr::new("none"),
    ];
    if let Some(r) = rules {
        std::fs::write(&rules_path, r).unwrap();
        args.push(OsStr::new("-S"));
        args.push(rules_path.as_os_str());
    }
    let r = run_measured(&args, dir.path());
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    // Every message was logged (CONNECT with its CONNACK, PUBLISH with its PUBACK).
    let eve = std::fs::read_to_string(logs.join("eve.json")).unwrap();
    let mqtt = eve
        .lines()
        .filter(|l| l.contains("\"event_type\":\"mqtt\""))
        .count();
    assert_eq!(mqtt, 4000 * 41);
    if let Some(kib) = r.peak_rss_kib {
        assert!(kib < 64 * 1024, "peak RSS {kib} KiB");
    }
}
