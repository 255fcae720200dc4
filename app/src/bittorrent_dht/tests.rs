use super::*;

fn parse(d: &[u8]) -> Result<DhtTx, Bad> {
    let mut t = DhtTx::default();
    parse_packet(d, &mut t).map(|_| t)
}

fn json(t: &DhtTx) -> String {
    let mut w = JsonWriter::new();
    w.start_object();
    write_dht(t, &mut w);
    w.close();
    String::from_utf8(w.as_bytes().to_vec()).unwrap()
}

const PING: &[u8] = b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:y1:qe";

#[test]
fn queries_responses_and_errors_as_suricata() {
    assert_eq!(probe(Dir::ToServer, PING), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, b"d1:ad2"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"d1:rd2:id20:"), Probe::No);
    let t = parse(PING).unwrap();
    assert_eq!(
        json(&t),
        r#"{"transaction_id":"6161","request_type":"ping","request":{"id":"6162636465666768696a30313233343536373839"}}"#
    );
    // get_peers response with two peers (IPv4 and IPv6) and a token, client version.
    let mut r = b"d1:rd2:id20:mnopqrstuvwxyz1234565:token8:aoeusnth6:valuesl6:".to_vec();
    r.extend_from_slice(&[1, 2, 3, 4, 0x1a, 0xe1]);
    r.extend_from_slice(b"18:");
    r.extend_from_slice(&[
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80,
    ]);
    r.extend_from_slice(b"ee1:t2:aa1:v4:UT011:y1:re");
    let t = parse(&r).unwrap();
    assert_eq!(
        json(&t),
        r#"{"transaction_id":"6161","client_version":"55543031","response":{"id":"6d6e6f707172737475767778797a313233343536","values":[{"ip":"1.2.3.4","port":6881},{"ip":"2001:0db8:0000:0000:0000:0000:0000:0001","port":80}],"token":"616f6575736e7468"}}"#
    );
    // find_node response: 26-byte compact nodes, a short tail ignored.
    let mut n = b"d1:rd2:id20:mnopqrstuvwxyz1234565:nodes30:".to_vec();
    n.extend_from_slice(b"0123456789abcdefghij");
    n.extend_from_slice(&[10, 0, 0, 1, 0x1f, 0x90, 9, 9, 9, 9]);
    n.extend_from_slice(b"e1:t1:x1:y1:re");
    let t = parse(&n).unwrap();
    let nodes = t.response.as_ref().unwrap().nodes.as_ref().unwrap();
    assert_eq!(
        (nodes.len(), ip_string(&nodes[0].ip), nodes[0].port),
        (1, "10.0.0.1".into(), 8080)
    );
    // An error.
    let t = parse(b"d1:eli201e23:A Generic Error Ocurrede1:t2:aa1:y1:ee").unwrap();
    assert_eq!(
        json(&t),
        r#"{"transaction_id":"6161","error":{"num":201,"msg":"A Generic Error Ocurred"}}"#
    );
}

#[test]
fn strict_bencode_as_bendy() {
    // Keys out of order, repeated, non-canonical integers, too deep, cut short: malformed.
    for bad in [
        &b"d1:y1:q1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aae"[..],
        b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:q4:ping1:t2:aa1:y1:qe",
        b"d1:ad2:id20:abcdefghij01234567894:porti06ee1:q4:ping1:t2:aa1:y1:qe",
        b"d1:ad2:id20:abcdefghij01234567891:xlleee1:q4:ping1:t2:aa1:y1:qe",
        b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:y1:q",
        b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:y1:qe",
        b"d1:ad2:id20:abcdefghij0123456789e1:t2:aa1:y1:qe",
        b"d1:ad2:id20:abcdefghij01234567894:porti70000ee1:q13:announce_peer1:t2:aa1:y1:qe",
    ] {
        assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    // Unknown keys are skipped; a negative zero is not canonical, a plain zero is.
    assert!(
        parse(b"d1:ad2:id20:abcdefghij01234567894:porti0ee1:q4:ping1:t2:aa1:y1:q1:zi-1ee").is_ok()
    );
    assert!(parse(b"d1:ad2:id20:abcdefghij01234567894:porti-0ee1:q4:ping1:t2:aa1:y1:qe").is_err());
}

#[test]
fn transactions_events_and_logging() {
    let mut s = DhtState::default();
    assert!(!s.parse(Dir::ToServer, PING));
    // Not DHT: ignored, no transaction.
    assert!(!s.parse(Dir::ToServer, b"hello"));
    // DHT-looking but malformed: a transaction with the event, never complete.
    assert!(s.parse(Dir::ToClient, b"d1:rd2:id3:abce"));
    assert_eq!(s.tx_count(), 2);
    assert!(s.tx(0).unwrap().complete());
    assert!(!s.tx(1).unwrap().complete());
    assert!(s.has_event(1, 0) && !s.has_event(0, 0));
    let mut got = Vec::new();
    s.drain_events(0, false, &mut |a| got.push((a.tx_id, a.name)));
    assert_eq!(got, [(1, "malformed_packet")]);
}

#[test]
fn random_input_never_panics() {
    crate::common::testing::random_input_never_panics(&PROTOCOL, false, &[PING]);
}
