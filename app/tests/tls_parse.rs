//! TLS parser tests: Suricata 7 EVE output on real captures, streaming equivalence, JA3/JA4
//! vectors, malformed input, probing.

#[path = "dns_fixtures/json.rs"]
mod json;

use std::collections::BTreeMap;

use json::{load_eve, load_fix, schema_check, Json};
use proptest::prelude::*;
use shrike_app::tls::eve::{write_alert, write_tls, TlsLogConfig};
use shrike_app::tls::hello::{is_grease, md5_hex, Hello};
use shrike_app::tls::{probe, version_string, Probe, TlsBuffer, TlsConfig, TlsEvent, TlsState};
use shrike_app::Dir;

/// JA3/JA3S and JA4 on, as Suricata with `ja3-fingerprints`/`ja4-fingerprints: yes` (the
/// fixtures' records were made so).
fn hashes_on() -> TlsConfig {
    TlsConfig {
        ja3: true,
        ja4: true,
        ..TlsConfig::default()
    }
}

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tls_fixtures/");

const FIXTURES: &[&str] = &[
    "ja4-tls",
    "tls13-draft18",
    "tls-random",
    "tls-cert-validity",
    "tls-client-hello-frag-01",
    "tls-glupteba",
    "tls-pre-1970",
    "tls-altname-zero",
];

fn run(name: &str, chunk: usize) -> BTreeMap<i64, TlsState> {
    let mut flows = BTreeMap::new();
    for (flow, _, ts, bytes) in load_fix(&format!("{FIX}{name}.fix")) {
        let st = flows
            .entry(flow)
            .or_insert_with(|| TlsState::new(hashes_on()));
        let dir = if ts { Dir::ToServer } else { Dir::ToClient };
        if chunk == 0 {
            st.parse(dir, &bytes);
        } else {
            for c in bytes.chunks(chunk) {
                st.parse(dir, c);
            }
        }
    }
    flows
}

fn tls_json(st: &TlsState) -> serde_json::Value {
    let mut w = Json::object();
    write_tls(&mut w, st, &TlsLogConfig::new(true, true, None));
    w.finish()
}

#[test]
fn tls_eve_matches_suricata_on_captures() {
    for name in FIXTURES {
        let flows = run(name, 0);
        let want: Vec<_> = load_eve(&format!("{FIX}{name}.eve"))
            .into_iter()
            .filter(|(f, v)| *f >= 0 && v.get("type").is_none())
            .collect();
        assert!(!want.is_empty(), "{name}");
        for (flow, w) in &want {
            let st = flows
                .get(flow)
                .unwrap_or_else(|| panic!("{name} flow {flow}"));
            assert!(
                st.should_log(TlsLogConfig::default().session_resumption),
                "{name} flow {flow} should log"
            );
            let got = tls_json(st);
            assert_eq!(&got, w, "{name} flow {flow}");
            schema_check("tls", &got);
        }
    }
}

#[test]
fn tls_byte_by_byte_equals_whole() {
    for name in [
        "ja4-tls",
        "tls-client-hello-frag-01",
        "tls13-draft18",
        "tls-cert-validity",
    ] {
        let whole = run(name, 0);
        for chunk in [1, 5, 333] {
            let split = run(name, chunk);
            assert_eq!(whole.len(), split.len());
            for (f, st) in &whole {
                assert_eq!(
                    tls_json(st),
                    tls_json(&split[f]),
                    "{name} chunk {chunk} flow {f}"
                );
                assert_eq!(st.events, split[f].events, "{name} chunk {chunk}");
            }
        }
    }
}

#[test]
fn tls_buffers_and_alert_object() {
    let flows = run("ja4-tls", 0);
    let st = &flows[&0];
    let mut got = Vec::new();
    st.buffer(Dir::ToClient, TlsBuffer::CertSubject, &mut |b| {
        got.push(b.to_vec())
    });
    assert_eq!(
        got,
        vec![b"C=FR, ST=IDF, L=Paris, O=Stamus, CN=SELKS".to_vec()]
    );
    let mut n = 0;
    st.buffer(Dir::ToClient, TlsBuffer::Certs, &mut |_| n += 1);
    assert_eq!(n, st.cert_chain_len());
    let mut rt = Vec::new();
    st.buffer(Dir::ToServer, TlsBuffer::RandomTime, &mut |b| {
        rt.push(b.len())
    });
    assert_eq!(rt, vec![4]);
    st.buffer(Dir::ToServer, TlsBuffer::CertSubject, &mut |_| {
        panic!("to-client buffer")
    });
    let mut j = Vec::new();
    st.buffer(Dir::ToServer, TlsBuffer::Ja4Hash, &mut |b| {
        j.push(b.to_vec())
    });
    assert_eq!(j, vec![b"t12i1810s1_27d4652c4487_06a4338d0495".to_vec()]);
    assert_eq!(
        TlsBuffer::from_keyword("ja3s.hash"),
        Some(TlsBuffer::Ja3sHash)
    );
    let mut w = Json::object();
    write_alert(&mut w, st);
    let v = w.finish();
    assert!(v.get("ja4").is_none());
    assert_eq!(v["ja3s"]["string"], "771,49199,65281-11-35");
    schema_check("tls", &v);
    // 2015-02-12 .. 2025-02-09
    assert_eq!(st.cert_valid(1_500_000_000), Some(true));
    assert_eq!(st.cert_expired(1_800_000_000), Some(true));
    assert!(st.handshake_done());
}

#[test]
fn ja4_vectors_from_suricata() {
    // Suricata's ja4.rs unit test sequence, fed through a Hello.
    let mut h = Hello::default();
    assert_eq!(h.ja4(false), "t00i000000_e3b0c44298fc_d2e2adf7177b");
    h.version = 0x0303;
    assert_eq!(h.ja4(false), "t12i000000_e3b0c44298fc_d2e2adf7177b");
    assert_eq!(h.ja4(true), "q12i000000_e3b0c44298fc_d2e2adf7177b");
    h.extensions.push(0x0a0a);
    assert_eq!(h.ja4(true), "q12i000000_e3b0c44298fc_d2e2adf7177b");
    h.extensions.push(0x0000);
    assert_eq!(h.ja4(true), "q12d000100_e3b0c44298fc_d2e2adf7177b");
    h.alpn.push(b"h3-16".to_vec());
    h.extensions.push(0x0010);
    assert_eq!(h.ja4(true), "q12d0002h6_e3b0c44298fc_d2e2adf7177b");
    h.ciphers.extend([0x1111, 0x0a20, 0xbada]);
    assert_eq!(h.ja4(true), "q12d0302h6_f500716053f9_d2e2adf7177b");
    h.extensions.extend([0xface, 0x0121, 0x1234]);
    h.sig_algs.push(0x6666);
    assert_eq!(h.ja4(true), "q12d0305h6_f500716053f9_2debc8880bae");
    // Counts cap at 99; short ALPN is ignored.
    let mut h = Hello::default();
    h.ciphers.extend(1..200);
    h.extensions.extend(1..200);
    h.alpn.push(b"a".to_vec());
    assert_eq!(&h.ja4(false)[..10], "t00i999900");
}

#[test]
fn ja3_grease_and_md5() {
    assert!(is_grease(0x0a0a) && is_grease(0xfafa) && !is_grease(0x0a1a) && !is_grease(0x1301));
    let h = Hello {
        version: 771,
        ciphers: vec![0x0a0a, 4865, 4866],
        extensions: vec![0x2a2a, 0, 10, 11],
        groups: vec![0x3a3a, 29, 23],
        point_formats: vec![0],
        ..Hello::default()
    };
    assert_eq!(h.ja3_string(), "771,4865-4866,0-10-11,29-23,0");
    assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    let h = Hello {
        version: 769,
        ciphers: vec![5, 47],
        ..Hello::default()
    };
    assert_eq!(h.ja3_string(), "769,5-47,,,");
}

#[test]
fn tls_version_strings() {
    for (v, s) in [
        (0u16, "UNDETERMINED"),
        (0x0300, "SSLv3"),
        (0x0301, "TLSv1"),
        (0x0302, "TLS 1.1"),
        (0x0303, "TLS 1.2"),
        (0x0304, "TLS 1.3"),
        (0x7f12, "TLS 1.3 draft-18"),
        (0x7f16, "TLS 1.3 draft-22"),
        (0xfb17, "TLS 1.3 draft-23-fb"),
        (0x1234, "0x1234"),
    ] {
        assert_eq!(version_string(v), s);
    }
}

#[test]
fn tls_probe_table() {
    assert_eq!(probe(Dir::ToServer, &[0x16, 3, 1, 0, 5]), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &[0x16]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, &[0x15, 3, 3]), Probe::No);
    assert_eq!(probe(Dir::ToClient, &[0x15, 3, 3]), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1"), Probe::No);
    assert_eq!(
        probe(Dir::ToServer, &[0x80, 0x2e, 1, 3, 1]),
        Probe::Yes,
        "SSLv2 hello"
    );
    assert_eq!(probe(Dir::ToServer, &[0x80, 0x2e, 1]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, &[0x16, 5, 1]), Probe::No);
}

fn record(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![ty, 3, 3];
    r.extend_from_slice(&(body.len() as u16).to_be_bytes());
    r.extend_from_slice(body);
    r
}

#[test]
fn tls_malformed_table() {
    type Case<'a> = (&'a str, Vec<u8>, Dir, TlsEvent, bool);
    let cases: Vec<Case> = vec![
        (
            "bad record type",
            vec![0x30, 3, 3, 0, 1, 0],
            Dir::ToServer,
            TlsEvent::InvalidRecordType,
            true,
        ),
        (
            "bad record version",
            vec![0x16, 9, 9, 0, 1, 0],
            Dir::ToServer,
            TlsEvent::InvalidRecordVersion,
            true,
        ),
        (
            "oversized record",
            vec![0x17, 3, 3, 0xff, 0xff],
            Dir::ToServer,
            TlsEvent::InvalidTlsHeader,
            true,
        ),
        (
            // Suricata raises no event for a well-formed heartbeat (its HEARTBEAT_MESSAGE
            // is never set); less than 16 bytes of padding is invalid (RFC 6520).
            "heartbeat with short padding",
            record(24, &[&[1u8, 0, 1, 0xaa][..], &[0u8; 8]].concat()),
            Dir::ToServer,
            TlsEvent::InvalidHeartbeatMessage,
            false,
        ),
        (
            "heartbleed",
            record(24, &[1, 0x40, 0x00, 0xaa]),
            Dir::ToServer,
            TlsEvent::OverflowHeartbeatMessage,
            false,
        ),
        (
            "bad heartbeat type",
            record(24, &[9, 0, 0, 0]),
            Dir::ToServer,
            TlsEvent::InvalidHeartbeatMessage,
            false,
        ),
        (
            "truncated client hello",
            record(22, &[1, 0, 0, 4, 3, 3, 0, 0]),
            Dir::ToServer,
            TlsEvent::InvalidHandshakeMessage,
            false,
        ),
        (
            // x509-parser runs out of input: Suricata's `InvalidLength`.
            "garbage certificate",
            record(22, &[11, 0, 0, 9, 0, 0, 6, 0, 0, 3, 0x30, 0x01, 0x00]),
            Dir::ToClient,
            TlsEvent::CertificateInvalidLength,
            false,
        ),
        (
            // A certificate longer than its chain (`TlsDecodeHSCertificate`'s
            // `invalid_cert`).
            "certificate length",
            record(22, &[11, 0, 0, 6, 0, 0, 3, 0, 0, 9]),
            Dir::ToClient,
            TlsEvent::InvalidCertificate,
            false,
        ),
        (
            // Not a type Suricata parses (`SupportedHandshakeType`).
            "unsupported handshake type",
            record(22, &[132, 0xff, 0xff, 0xff, 1, 2, 3]),
            Dir::ToClient,
            TlsEvent::InvalidHandshakeMessage,
            false,
        ),
        (
            "sslv2 error",
            vec![0x80, 3, 0, 0, 1],
            Dir::ToClient,
            TlsEvent::ErrorMessageEncountered,
            false,
        ),
    ];
    for (what, data, dir, ev, fails) in cases {
        let mut st = TlsState::new(hashes_on());
        st.parse(dir, &data);
        assert!(
            st.events.has(ev),
            "{what}: {:?}",
            st.events.iter().collect::<Vec<_>>()
        );
        assert_eq!(st.failed(), fails, "{what}");
        assert_eq!(TlsEvent::from_name(ev.name()), Some(ev));
    }
}

#[test]
fn tls_too_many_records_and_encrypted_skip() {
    let mut st = TlsState::new(hashes_on());
    let many: Vec<u8> = (0..300).flat_map(|_| record(23, &[0])).collect();
    st.parse(Dir::ToServer, &many);
    assert!(st.events.has(TlsEvent::TooManyRecordsInPacket));
    // After ChangeCipherSpec handshake records are not decoded.
    let mut st = TlsState::new(hashes_on());
    st.parse(Dir::ToClient, &record(20, &[1]));
    st.parse(Dir::ToClient, &record(22, &[11, 0, 0, 6, 0, 0, 3, 0, 0, 9]));
    assert!(st.events.is_empty());
    assert!(st.encrypted(Dir::ToClient) && !st.handshake_done());
}

#[test]
fn sslv2_client_hello_recognised() {
    let mut st = TlsState::new(hashes_on());
    // SSLv2 CLIENT-HELLO offering SSLv3.
    let mut h = vec![0x80, 0x0b, 1, 3, 0, 0, 3, 0, 0, 0, 0];
    h.extend_from_slice(&[0, 0, 0]);
    st.parse(Dir::ToServer, &h);
    assert_eq!(st.stats.sslv2_client_hellos, 1);
    assert_eq!(st.version(), 0x0300);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn tls_random_input_never_panics(data in proptest::collection::vec(any::<u8>(), 0..800)) {
        let mut st = TlsState::new(hashes_on());
        st.parse(Dir::ToServer, &data);
        st.parse(Dir::ToClient, &data);
        let _ = tls_json(&st);
        let _ = probe(Dir::ToServer, &data);
    }

    #[test]
    fn tls_mutated_handshake_never_panics(pos in any::<prop::sample::Index>(), val in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let fix = load_fix(&format!("{FIX}ja4-tls.fix"));
        let mut st = TlsState::new(hashes_on());
        for (_, _, ts, mut b) in fix {
            let p = pos.index(b.len());
            b[p] = val;
            let c = cut.index(b.len());
            let dir = if ts { Dir::ToServer } else { Dir::ToClient };
            st.parse(dir, &b[..c]);
            st.parse(dir, &b[c..]);
        }
        let _ = tls_json(&st);
    }
}

#[test]
fn should_log_follows_suricata_rule() {
    // TLS 1.3 logs without a certificate, even when its ServerHello echoes the client's
    // session id (middlebox compatibility) and so looks resumed.
    let mut st = run("tls13-draft18", 0).into_values().next().unwrap();
    assert!(st.is_tls13() && st.cert0.is_none());
    st.resumed = true;
    assert!(st.should_log(false) && st.should_log(true));
    // Pre-1.3 with a certificate: always; resumed without one: per `session-resumption`.
    let mut st = run("tls-pre-1970", 0).into_values().next().unwrap();
    assert!(!st.is_tls13() && st.cert0.is_some());
    assert!(st.should_log(false));
    st.cert0 = None;
    st.resumed = false;
    assert!(!st.should_log(true));
    st.resumed = true;
    assert!(st.should_log(true) && !st.should_log(false));
}

/// A second ClientHello on the same connection (suricata-verify `tls-duplicate-hello`):
/// Suricata keeps the first hello's JA3 (its `ja3_hash` is computed once); an application
/// data record from the server makes the record ready to log (`SSL_AL_FLAG_HANDSHAKE_DONE`).
#[test]
fn duplicate_client_hello_keeps_the_first_ja3() {
    let hello = |ext_43_44: u16| {
        // Version, random, empty session id, two suites, null compression, then the
        // supported-versions (43) or cookie-like (44) extension with two bytes of data.
        let mut b = vec![0x03, 0x03];
        b.extend_from_slice(&[7u8; 32]);
        b.extend_from_slice(&[0, 0, 4, 0x13, 0x01, 0x13, 0x02, 1, 0]);
        b.extend_from_slice(&6u16.to_be_bytes());
        b.extend_from_slice(&ext_43_44.to_be_bytes());
        b.extend_from_slice(&[0, 2, 1, 0]);
        let mut hs = vec![1, 0, 0, b.len() as u8];
        hs.extend_from_slice(&b);
        record(22, &hs)
    };
    let mut st = TlsState::new(hashes_on());
    st.parse(Dir::ToServer, &hello(43));
    let first = st.ja3.clone().expect("ja3");
    assert!(first.1.ends_with(",43,,"), "{}", first.1);
    st.parse(Dir::ToServer, &hello(44));
    assert_eq!(st.ja3.as_ref(), Some(&first));
    assert!(!st.log_ready());
    st.parse(Dir::ToClient, &record(23, &[0u8; 16]));
    assert!(st.log_ready());
}
