//! DNS parser tests: Suricata 7 EVE output on real captures, streaming equivalence,
//! malformed input, events, probing.

#[path = "dns_fixtures/json.rs"]
mod json;

use std::collections::HashMap;

use json::{load_eve, load_fix, schema_check, Json};
use proptest::prelude::*;
use shrike_app::dns::eve::{self, DnsLogConfig};
use shrike_app::dns::{
    probe_tcp, probe_udp, DnsConfig, DnsEvent, DnsMessage, DnsState, NameFlags, Probe, RData,
};
use shrike_app::Dir;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dns_fixtures/");

/// EVE `dns` objects for the transactions with ids >= `from`.
fn eve_records(st: &DnsState, from: u64, cfg: &DnsLogConfig) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for tx in st.txs().filter(|t| t.id >= from) {
        if cfg.requests {
            for i in 0..eve::query_count(tx) {
                let mut w = Json::object();
                json::JsonOut::set_u64(&mut w, "version", 2);
                if eve::write_query(&mut w, tx, i, cfg) {
                    out.push(w.finish());
                }
            }
        }
        if cfg.responses {
            let mut w = Json::object();
            if eve::write_answer(&mut w, tx, cfg, true) {
                out.push(w.finish());
            }
        }
    }
    out
}

/// Feed a fixture (optionally splitting every payload into `chunk`-byte pieces) and collect
/// (flow, record) in output order.
fn run_fixture(
    name: &str,
    chunk: usize,
) -> (Vec<(i64, serde_json::Value)>, HashMap<i64, DnsState>) {
    let cfg = DnsLogConfig::default();
    let mut flows: HashMap<i64, DnsState> = HashMap::new();
    let mut out = Vec::new();
    for (flow, tcp, ts, bytes) in load_fix(&format!("{FIX}{name}.fix")) {
        let st = flows
            .entry(flow)
            .or_insert_with(|| DnsState::new(tcp, DnsConfig::default()));
        let dir = if ts { Dir::ToServer } else { Dir::ToClient };
        let before = st.tx_count();
        if tcp && chunk > 0 {
            for c in bytes.chunks(chunk) {
                st.parse(dir, c);
            }
        } else {
            st.parse(dir, &bytes);
        }
        for r in eve_records(st, before, &cfg) {
            out.push((flow, r));
        }
    }
    (out, flows)
}

const FIXTURES: &[&str] = &[
    "dns-eve",
    "dns-sshfp",
    "dns-tcp-www-google-com",
    "dns-tcp-multirequest-buffer",
    "dns-answer-emptydata",
    "dns-z-bit",
    "dns-corrupt-additionals",
    "cond-log-dns-dig",
    "dns-udp-z-flag-fp",
    "dns-opcode",
    "nxdomain-soa",
    "a-aaaa-mx",
    "srv",
];

#[test]
fn dns_eve_matches_suricata_on_captures() {
    for name in FIXTURES {
        let (got, _) = run_fixture(name, 0);
        let want = load_eve(&format!("{FIX}{name}.eve"));
        // Suricata writes records per flow in order; compare per flow.
        for flow in want.iter().map(|w| w.0).chain(got.iter().map(|g| g.0)) {
            let w: Vec<_> = want.iter().filter(|x| x.0 == flow).map(|x| &x.1).collect();
            let g: Vec<_> = got.iter().filter(|x| x.0 == flow).map(|x| &x.1).collect();
            assert_eq!(g, w, "{name} flow {flow}");
        }
        for (_, r) in &got {
            schema_check("dns", r);
        }
    }
}

#[test]
fn dns_tcp_byte_by_byte_equals_whole() {
    for name in [
        "dns-tcp-www-google-com",
        "dns-tcp-multirequest-buffer",
        "dns-answer-emptydata",
    ] {
        let (whole, _) = run_fixture(name, 0);
        for chunk in [1, 2, 3, 7, 100] {
            let (split, _) = run_fixture(name, chunk);
            assert_eq!(split, whole, "{name} chunk {chunk}");
        }
    }
}

#[test]
fn dns_alert_object_shape() {
    let (_, flows) = run_fixture("dns-eve", 0);
    let st = flows.get(&0).unwrap();
    let req = st.tx(0).unwrap();
    let mut w = Json::object();
    eve::write_alert(&mut w, req);
    let v = w.finish();
    assert_eq!(
        v,
        serde_json::json!({"version":2,"query":[{"type":"query","id":39339,"rrname":"client-cf.dropbox.com","rrtype":"A","tx_id":0,"opcode":0}]})
    );
    let resp = st.tx(1).unwrap();
    let mut w = Json::object();
    eve::write_alert(&mut w, resp);
    let v = w.finish();
    assert_eq!(v["answer"]["rcode"], "NOERROR");
    assert!(
        v["answer"].get("answers").is_none(),
        "alert answers are not logged in 7.0"
    );
    schema_check("dns", &v);
    assert_eq!(st.request_tx_for(39339, 1).map(|t| t.id), Some(0));
}

#[test]
fn dns_query_buffer_and_opcode() {
    let (_, flows) = run_fixture("dns-opcode", 0);
    let mut names = Vec::new();
    let mut opcodes = Vec::new();
    for st in flows.values() {
        for tx in st.txs() {
            names.extend(
                tx.query_names()
                    .map(|n| String::from_utf8_lossy(n).into_owned()),
            );
            opcodes.extend(tx.opcode());
        }
    }
    assert!(!names.is_empty());
    assert!(
        opcodes.iter().any(|&o| o != 0),
        "opcode fixture has a non-query opcode: {opcodes:?}"
    );
}

fn msg(flags: u16, qd: u16, an: u16, body: &[u8]) -> Vec<u8> {
    let mut m = vec![0x12, 0x34];
    m.extend_from_slice(&flags.to_be_bytes());
    m.extend_from_slice(&qd.to_be_bytes());
    m.extend_from_slice(&an.to_be_bytes());
    m.extend_from_slice(&[0, 0, 0, 0]);
    m.extend_from_slice(body);
    m
}

fn events_of(st: &DnsState) -> Vec<DnsEvent> {
    st.txs().flat_map(|t| t.events.iter()).collect()
}

#[test]
fn dns_malformed_table() {
    // (description, message, direction, expected events, expect a message tx)
    let www = b"\x03www\x07example\x03com\x00\x00\x01\x00\x01";
    let mut long = Vec::new();
    for _ in 0..20 {
        long.push(63u8);
        long.extend_from_slice(&[b'a'; 63]);
    }
    long.extend_from_slice(&[0, 0, 1, 0, 1]);
    // Answer whose name points at itself (offset 12 + 21 = 33).
    let mut self_ptr = www.to_vec();
    self_ptr.extend_from_slice(&[0xc0, 33, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4]);
    // Answer name: label then pointer back to itself after one label (a loop).
    let mut loop2 = www.to_vec();
    loop2.extend_from_slice(&[1, b'x', 0xc0, 33, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4]);
    type Case<'a> = (&'a str, Vec<u8>, Dir, Vec<DnsEvent>, bool);
    let cases: Vec<Case> = vec![
        (
            "ok query",
            msg(0x0100, 1, 0, www),
            Dir::ToServer,
            vec![],
            true,
        ),
        (
            "z flag",
            msg(0x0140, 1, 0, www),
            Dir::ToServer,
            vec![DnsEvent::ZFlagSet],
            true,
        ),
        (
            "opcode 9",
            msg(0x4800, 1, 0, www),
            Dir::ToServer,
            vec![DnsEvent::InvalidOpcode],
            true,
        ),
        (
            "response to server",
            msg(0x8180, 1, 0, www),
            Dir::ToServer,
            vec![DnsEvent::NotRequest],
            false,
        ),
        (
            "request to client",
            msg(0x0100, 1, 0, www),
            Dir::ToClient,
            vec![DnsEvent::NotResponse],
            false,
        ),
        (
            "truncated question",
            msg(0x0100, 1, 0, &www[..10]),
            Dir::ToServer,
            vec![DnsEvent::MalformedData],
            false,
        ),
        (
            "bad label type 0x40",
            msg(0x0100, 1, 0, b"\x41abcdefgh\x00\x00\x01\x00\x01"),
            Dir::ToServer,
            vec![DnsEvent::MalformedData],
            false,
        ),
        (
            "name too long",
            msg(0x0100, 1, 0, &long),
            Dir::ToServer,
            vec![DnsEvent::NameTooLong],
            true,
        ),
        (
            "self pointer first",
            msg(0x8180, 1, 1, &self_ptr),
            Dir::ToClient,
            vec![DnsEvent::MalformedData, DnsEvent::InfiniteLoop],
            false,
        ),
        (
            "pointer loop",
            msg(0x8180, 1, 1, &loop2),
            Dir::ToClient,
            vec![DnsEvent::TooManyLabels, DnsEvent::NameTooLong],
            true,
        ),
        (
            "empty A data",
            msg(
                0x8180,
                1,
                1,
                &[&www[..], &[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0]].concat(),
            ),
            Dir::ToClient,
            vec![DnsEvent::MalformedData],
            false,
        ),
    ];
    for (what, m, dir, evs, has_msg) in cases {
        let mut st = DnsState::new(false, DnsConfig::default());
        st.parse(dir, &m);
        let mut got = events_of(&st);
        got.sort_by_key(|e| *e as u8);
        let mut want = evs.clone();
        want.sort_by_key(|e| *e as u8);
        assert_eq!(got, want, "{what}");
        assert_eq!(st.txs().any(|t| t.message().is_some()), has_msg, "{what}");
        for e in &evs {
            assert_eq!(DnsEvent::from_name(e.name()), Some(*e));
        }
    }
}

#[test]
fn dns_name_decompression_and_flags() {
    // Two answers: CNAME via pointer, A via pointer into the CNAME data.
    let body: Vec<u8> = [
        &b"\x03www\x07example\x03com\x00\x00\x01\x00\x01"[..],
        &[
            0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 6, 3, b'c', b'd', b'n', 0xc0, 16,
        ],
        &[0xc0, 45, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1],
    ]
    .concat();
    let m = msg(0x8180, 1, 2, &body);
    let mut d = DnsMessage::default();
    d.decode(&m, 1 << 20).unwrap();
    assert_eq!(d.bytes(d.queries[0].name), b"www.example.com");
    let RData::Cname(c) = d.answers[0].data else {
        panic!()
    };
    assert_eq!(d.bytes(c), b"cdn.example.com");
    assert_eq!(d.bytes(d.answers[1].name), b"cdn.example.com");
    let RData::A(a) = d.answers[1].data else {
        panic!()
    };
    assert_eq!(d.bytes(a), [10, 0, 0, 1]);
    assert!(d.name_flags.is_empty());
    assert!(!d.name_flags.contains(NameFlags::TRUNCATED));
}

#[test]
fn dns_txt_strings_become_records() {
    let body: Vec<u8> = [
        &b"\x01t\x00\x00\x10\x00\x01"[..],
        &[
            0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 1, 0, 8, 3, b'a', b'b', b'c', 3, b'd', b'e', b'f',
        ],
    ]
    .concat();
    let mut d = DnsMessage::default();
    d.decode(&msg(0x8180, 1, 1, &body), 1 << 20).unwrap();
    let txts: Vec<_> = d
        .answers
        .iter()
        .map(|a| match a.data {
            RData::Txt(s) => d.bytes(s).to_vec(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(txts, vec![b"abc".to_vec(), b"def".to_vec()]);
}

#[test]
fn dns_probe_table() {
    let www = b"\x03www\x07example\x03com\x00\x00\x01\x00\x01";
    let q = msg(0x0100, 1, 0, www);
    let r = msg(0x8180, 1, 0, www);
    assert_eq!(probe_udp(&q), Probe::Yes { dir: Dir::ToServer });
    assert_eq!(probe_udp(&r), Probe::Yes { dir: Dir::ToClient });
    assert_eq!(probe_udp(&q[..8]), Probe::No);
    assert_eq!(
        probe_udp(&msg(0x0100, 500, 0, www)),
        Probe::No,
        "counts cannot fit"
    );
    assert_eq!(probe_udp(&msg(0x7800, 1, 0, www)), Probe::No, "opcode 15");
    assert_eq!(probe_udp(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Probe::No);
    let mut t = (q.len() as u16).to_be_bytes().to_vec();
    t.extend_from_slice(&q);
    assert_eq!(probe_tcp(&t), Probe::Yes { dir: Dir::ToServer });
    assert_eq!(probe_tcp(&t[..5]), Probe::NeedMore);
    assert_eq!(
        probe_tcp(&t[..20]),
        Probe::Yes { dir: Dir::ToServer },
        "header only"
    );
    // Suricata's probe reads the header and the questions only: an UPDATE whose
    // prerequisite (a CNAME of class NONE with no data) no full decode accepts is still DNS
    // (zeek `dns_dynamic-update.pcap`).
    let mut upd = msg(0x2800, 1, 1, b"\x01a\x00\x00\x06\x00\x01");
    upd.extend_from_slice(b"\x01b\x00\x00\x05\x00\xfe\x00\x00\x00\x00\x00\x00");
    assert!(DnsMessage::default().decode(&upd, 1 << 16).is_err());
    assert_eq!(probe_udp(&upd), Probe::Yes { dir: Dir::ToServer });
}

#[test]
fn dns_tcp_reject_fails_flow_and_gap_resyncs() {
    let www = b"\x03www\x07example\x03com\x00\x00\x01\x00\x01";
    let q = msg(0x0100, 1, 0, www);
    let mut framed = (q.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(&q);
    let mut st = DnsState::new(true, DnsConfig::default());
    st.parse(Dir::ToServer, &framed[..5]);
    assert_eq!(st.buffered(), 5);
    st.gap(Dir::ToServer, 100);
    assert_eq!(st.buffered(), 0);
    st.parse(Dir::ToServer, &[&[0u8, 32][..], &[b'A'; 32]].concat());
    assert_eq!(st.tx_count(), 0, "non-DNS after a gap is skipped");
    st.parse(Dir::ToServer, &[framed.clone(), framed.clone()].concat());
    assert_eq!(st.tx_count(), 2);
    st.free_txs_before(1);
    assert_eq!(st.txs().count(), 1);
    // A response in the request direction fails the TCP flow.
    let r = msg(0x8180, 1, 0, www);
    let mut fr = (r.len() as u16).to_be_bytes().to_vec();
    fr.extend_from_slice(&r);
    st.parse(Dir::ToServer, &fr);
    assert!(st.failed());
}

#[test]
fn dns_tx_limit_is_counted() {
    let www = b"\x03www\x07example\x03com\x00\x00\x01\x00\x01";
    let q = msg(0x0100, 1, 0, www);
    let mut st = DnsState::new(
        false,
        DnsConfig {
            max_txs: 4,
            ..DnsConfig::default()
        },
    );
    for _ in 0..10 {
        st.parse(Dir::ToServer, &q);
    }
    assert_eq!(st.txs().count(), 4);
    assert_eq!(st.stats.tx_dropped, 6);
    assert_eq!(st.tx(9).map(|t| t.id), Some(9));
    assert!(st.tx(0).is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn dns_random_input_never_panics(data in proptest::collection::vec(any::<u8>(), 0..600), tcp in any::<bool>()) {
        let mut st = DnsState::new(tcp, DnsConfig::default());
        st.parse(Dir::ToServer, &data);
        st.parse(Dir::ToClient, &data);
        let _ = probe_udp(&data);
        let _ = probe_tcp(&data);
        for tx in st.txs() {
            if let Some(m) = tx.message() {
                prop_assert!(m.arena_len() <= DnsConfig::default().max_message_arena);
            }
        }
        prop_assert!(st.buffered() <= 2 * 65_537);
    }

    #[test]
    fn dns_mutated_real_messages_never_panic(idx in 0usize..1000, pos in any::<prop::sample::Index>(), val in any::<u8>()) {
        let fix = load_fix(&format!("{FIX}dns-eve.fix"));
        let (_, _, ts, mut bytes) = fix[idx % fix.len()].clone();
        let p = pos.index(bytes.len());
        bytes[p] = val;
        let mut st = DnsState::new(false, DnsConfig::default());
        st.parse(if ts { Dir::ToServer } else { Dir::ToClient }, &bytes);
        let _ = eve_records(&st, 0, &DnsLogConfig::default());
    }

    #[test]
    fn dns_tcp_random_splits_equal_whole(cuts in proptest::collection::vec(1usize..40, 1..30)) {
        let fix = load_fix(&format!("{FIX}dns-tcp-multirequest-buffer.fix"));
        let stream: Vec<u8> = fix.iter().filter(|f| f.2).flat_map(|f| f.3.clone()).collect();
        let mut whole = DnsState::new(true, DnsConfig::default());
        whole.parse(Dir::ToServer, &stream);
        let mut split = DnsState::new(true, DnsConfig::default());
        let mut rest = &stream[..];
        let mut i = 0;
        while !rest.is_empty() {
            let n = cuts[i % cuts.len()].min(rest.len());
            split.parse(Dir::ToServer, &rest[..n]);
            rest = &rest[n..];
            i += 1;
        }
        let a: Vec<Vec<u8>> = whole.txs().flat_map(|t| t.query_names().map(|n| n.to_vec())).collect();
        let b: Vec<Vec<u8>> = split.txs().flat_map(|t| t.query_names().map(|n| n.to_vec())).collect();
        prop_assert!(!a.is_empty());
        prop_assert_eq!(a, b);
    }
}

#[test]
fn dns_eve_through_output_jsonwriter() {
    let (_, flows) = run_fixture("a-aaaa-mx", 0);
    let st = flows.get(&1).unwrap();
    let tx = st.txs().find(|t| t.response().is_some()).unwrap();
    let mut w = shrike_output::json::JsonWriter::new();
    w.start_object();
    eve::write_answer(&mut w, tx, &DnsLogConfig::default(), true);
    w.close();
    let v: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
    assert_eq!(
        v["grouped"]["AAAA"][0],
        "2607:f8b0:400f:0801:0000:0000:0000:200e"
    );
    schema_check("dns", &v);
}
