//! Which side of a flow is the client when the flow starts with a reply, as Suricata
//! 7.0.10 decides it. TCP: a flow whose first packet is a SYN-ACK keeps that packet's
//! sender as its source unless the stream engine takes the session up (`stream.midstream`,
//! `async-oneside`; stock settings: no session, `tcp_flags` `00`; ndpi `cachefly.pcapng`).
//! UDP flows that start with a reply, as Suricata handles them (its probing parsers
//! are registered for the destination port and say which way the data runs, `rdir`): a
//! DNS response sent *to* port 53 first turns the flow round (`FlowSwap`) and is logged as
//! an answer; a DNS response coming *from* port 53 first is not probed and the flow is
//! `failed`. Records as Suricata writes them for the same datagrams (checked with
//! `suricata -r <pcap> -k none --runmode single` and zeek `dns_max-compression-depth.pcap`).

mod common;
mod hostile_util;

use common::{run_pcap, TempDir};
use hostile_util::{tcp4, udp4, Pcap, ACK, PSH, SYN};

const CLIENT: [u8; 4] = [1, 2, 3, 4];
const SERVER: [u8; 4] = [5, 6, 7, 8];

fn response() -> Vec<u8> {
    let mut r = vec![
        0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 1, b'a', 0, 0, 1, 0, 1,
    ];
    r.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 0x2c, 0, 4, 127, 0, 0, 1]);
    r
}

fn run(tag: &str, frame: Vec<u8>) -> Vec<serde_json::Value> {
    run_all(tag, vec![frame])
}

fn run_all(tag: &str, frames: Vec<Vec<u8>>) -> Vec<serde_json::Value> {
    let dir = TempDir::new(tag);
    let mut cap = Pcap::new(1);
    for (i, f) in frames.iter().enumerate() {
        cap.push(1_700_000_000_000_000 + i as u64 * 1000, f);
    }
    let pcap = dir.path().join("dns.pcap");
    cap.write(&pcap);
    run_pcap(&pcap, dir.path())
}

#[test]
fn response_sent_to_port_53_reverses_the_flow() {
    // The client's port 12345 sends a response to port 53 (the QR bit says it runs the
    // other way).
    let recs = run("udp-rev-to53", udp4(CLIENT, SERVER, 12345, 53, &response()));
    let dns: Vec<_> = recs.iter().filter(|r| r["event_type"] == "dns").collect();
    assert_eq!(dns.len(), 1);
    assert_eq!(dns[0]["dns"]["type"], "answer");
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(flow["app_proto"], "dns");
    assert_eq!(flow["src_ip"], "5.6.7.8");
    assert_eq!(flow["src_port"], 53);
    assert_eq!(flow["flow"]["pkts_toserver"], 0);
    assert_eq!(flow["flow"]["pkts_toclient"], 1);
}

#[test]
fn response_from_port_53_first_is_not_probed() {
    let recs = run(
        "udp-rev-from53",
        udp4(SERVER, CLIENT, 53, 12345, &response()),
    );
    assert!(recs.iter().all(|r| r["event_type"] != "dns"));
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(flow["app_proto"], "failed");
    assert_eq!(flow["src_ip"], "5.6.7.8");
    assert_eq!(flow["flow"]["pkts_toserver"], 1);
}

#[test]
fn tcp_flow_starting_with_a_synack_keeps_its_first_sender_as_source() {
    let recs = run_all(
        "tcp-synack-first",
        vec![
            tcp4(SERVER, CLIENT, 443, 43766, 5000, 1001, SYN | ACK, b""),
            tcp4(CLIENT, SERVER, 43766, 443, 1001, 5001, PSH | ACK, b"hello"),
            tcp4(SERVER, CLIENT, 443, 43766, 5001, 1006, ACK, b""),
        ],
    );
    let flow = recs.iter().find(|r| r["event_type"] == "flow").unwrap();
    assert_eq!(flow["src_ip"], "5.6.7.8");
    assert_eq!(flow["src_port"], 443);
    assert_eq!(flow["flow"]["pkts_toserver"], 2);
    assert_eq!(flow["flow"]["pkts_toclient"], 1);
    assert_eq!(flow["tcp"]["tcp_flags"], "00");
}
