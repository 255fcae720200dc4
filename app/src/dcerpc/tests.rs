use super::*;

/// A connection-oriented PDU: header (little-endian) + body.
fn pdu(ptype: u8, flags: u8, call_id: u32, body: &[u8]) -> Vec<u8> {
    let mut v = vec![5, 0, ptype, flags, 0x10, 0, 0, 0];
    v.extend_from_slice(&((16 + body.len()) as u16).to_le_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&call_id.to_le_bytes());
    v.extend_from_slice(body);
    v
}

/// Netlogon's interface UUID as text and on the wire (little-endian time fields).
const NETLOGON: &str = "12345678-1234-abcd-ef00-01234567cffb";

fn bind_body(ctxs: &[(u16, &str, u16)]) -> Vec<u8> {
    let mut b = vec![
        0xb8,
        0x10,
        0xb8,
        0x10,
        0,
        0,
        0,
        0,
        ctxs.len() as u8,
        0,
        0,
        0,
    ];
    for (ctx, uuid, ver) in ctxs {
        b.extend_from_slice(&ctx.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        let u = parse_uuid(uuid).unwrap();
        b.extend_from_slice(&uuid_le(&u));
        b.extend_from_slice(&ver.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&[0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11]);
        b.extend_from_slice(&[0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0]);
    }
    b
}

fn bindack_body(results: &[u16]) -> Vec<u8> {
    // max xmit/recv, assoc group, secondary address "135\0" (4 bytes: 2 + 4 = 6, pad 2).
    let mut b = vec![
        0xb8, 0x10, 0xb8, 0x10, 1, 0, 0, 0, 4, 0, b'1', b'3', b'5', 0, 0, 0,
    ];
    b.extend_from_slice(&[results.len() as u8, 0, 0, 0]);
    for r in results {
        b.extend_from_slice(&r.to_le_bytes());
        b.extend_from_slice(&[0; 22]);
    }
    b
}

fn request_body(ctx: u16, opnum: u16, stub: &[u8]) -> Vec<u8> {
    let mut b = (stub.len() as u32).to_le_bytes().to_vec();
    b.extend_from_slice(&ctx.to_le_bytes());
    b.extend_from_slice(&opnum.to_le_bytes());
    b.extend_from_slice(stub);
    b
}

fn json(f: impl FnOnce(&mut JsonWriter)) -> String {
    let mut w = JsonWriter::new();
    w.start_object();
    f(&mut w);
    w.close();
    String::from_utf8(w.as_bytes().to_vec()).unwrap()
}

fn iface(v: &str) -> Box<dyn TxMatch> {
    setup_iface(Some(v)).unwrap()
}

#[test]
fn probes_follow_suricata() {
    let b = pdu(BIND, 3, 1, &bind_body(&[(0, NETLOGON, 1)]));
    assert_eq!(probe_tcp(Dir::ToServer, &b), Probe::Yes);
    assert_eq!(probe_tcp(Dir::ToServer, &b[..8]), Probe::NeedMore);
    let mut bad = b.clone();
    bad[4] = 0x12; // data representation bits Suricata rejects
    assert_eq!(probe_tcp(Dir::ToServer, &bad), Probe::No);
    let mut minor1 = b.clone();
    minor1[1] = 1;
    assert_eq!(probe_tcp(Dir::ToServer, &minor1), Probe::No);
    assert_eq!(probe_udp(Dir::ToServer, &UDP_REQ[..40]), Probe::No);
    assert_eq!(probe_udp(Dir::ToServer, UDP_REQ), Probe::Yes);
    assert_eq!(probe_udp(Dir::ToClient, UDP_REQ), Probe::No);
}

#[test]
fn bind_request_response_make_transactions_and_records() {
    let mut s = TcpState::default();
    let bind = pdu(
        BIND,
        3,
        1,
        &bind_body(&[(0, NETLOGON, 1), (1, NETLOGON, 2)]),
    );
    assert!(!s.parse(Dir::ToServer, &bind));
    assert!(!s.parse(Dir::ToClient, &pdu(BINDACK, 3, 1, &bindack_body(&[0, 2]))));
    let t = s.tx(0).unwrap();
    assert!(t.req_done && t.resp_done);
    assert_eq!(
        json(|w| s.write(t, w)),
        format!(
            r#"{{"request":"BIND","interfaces":[{{"uuid":"{NETLOGON}","version":"1.0","ack_result":0}},{{"uuid":"{NETLOGON}","version":"2.0","ack_result":2}}],"response":"BINDACK","call_id":1,"rpc_version":"5.0"}}"#
        )
    );
    // A request split over two segments, then its response.
    let req = pdu(REQUEST, 3, 2, &request_body(0, 26, b"stubdata"));
    assert!(!s.parse(Dir::ToServer, &req[..20]));
    assert!(s.tx(1).is_none());
    assert!(!s.parse(Dir::ToServer, &req[20..]));
    let t = s.tx(1).unwrap();
    assert!(t.req_done && !t.resp_done && t.first_request_seen);
    assert_eq!(
        (t.opnum, t.ctxid, &t.stub_ts[..]),
        (26, 0, &b"stubdata"[..])
    );
    // Detection before the response: the last header is a REQUEST.
    assert_eq!(iface(NETLOGON).matches(&s, 1, Dir::ToServer), Some(true));
    assert_eq!(
        iface(&format!("{NETLOGON},>1")).matches(&s, 1, Dir::ToServer),
        Some(false)
    );
    assert_eq!(
        iface("12345678-1234-abcd-ef00-0123456789ab").matches(&s, 1, Dir::ToServer),
        Some(false)
    );
    let op = setup_opnum(Some("1,20-30")).unwrap();
    assert_eq!(op.matches(&s, 1, Dir::ToServer), Some(true));
    assert_eq!(op.matches(&s, 0, Dir::ToServer), Some(false));
    let resp = pdu(RESPONSE, 3, 2, &[0u8; 12]);
    assert!(!s.parse(Dir::ToClient, &resp));
    let t = s.tx(1).unwrap();
    // Suricata counts the response's 8-byte header fields as stub data.
    assert_eq!(t.stub_tc.len(), 12);
    assert_eq!(
        json(|w| s.write(t, w)),
        r#"{"request":"REQUEST","req":{"opnum":26,"frag_cnt":1,"stub_data_size":8},"response":"RESPONSE","res":{"frag_cnt":1,"stub_data_size":12},"call_id":2,"rpc_version":"5.0"}"#
    );
    assert!(stub_little_endian(&s, 1));
    let mut got = Vec::new();
    assert!(s.buffer(1, BUF_STUB, Dir::ToServer, &mut |b| {
        got = b.to_vec();
        true
    }));
    assert_eq!(got, b"stubdata");
}

#[test]
fn one_pdu_per_call_and_wrong_direction_gives_up() {
    let mut s = TcpState::default();
    let mut two = pdu(REQUEST, 3, 1, &request_body(0, 1, b"a"));
    two.extend(pdu(REQUEST, 3, 2, &request_body(0, 2, b"b")));
    assert!(!s.parse(Dir::ToServer, &two));
    // Suricata's parser takes the first PDU of the data it is given.
    assert_eq!(s.tx_count(), 1);
    // A PDU cut short to the server, then data to the client: the flow is given up.
    let req = pdu(REQUEST, 3, 3, &request_body(0, 1, b"abc"));
    assert!(!s.parse(Dir::ToServer, &req[..10]));
    assert!(s.parse(Dir::ToClient, &pdu(RESPONSE, 3, 1, &[0; 8])));
    assert!(!s.parse(Dir::ToServer, &req[10..]));
    assert_eq!(s.tx_count(), 1);
}

#[test]
fn gap_resyncs_and_marks_earlier_requests_lost() {
    let mut s = TcpState::default();
    assert!(!s.parse(
        Dir::ToServer,
        &pdu(REQUEST, 3, 1, &request_body(0, 1, b"a"))
    ));
    s.gap(Dir::ToClient, 100);
    let mut d = b"junk".to_vec();
    d.extend(pdu(RESPONSE, 3, 9, &[0; 8]));
    assert!(!s.parse(Dir::ToClient, &d));
    let t = s.tx(0).unwrap();
    assert!(t.resp_lost && t.resp_done);
    assert_eq!(
        json(|w| write_req_res(t, w, None)),
        r#"{"request":"REQUEST","req":{"opnum":1,"frag_cnt":1,"stub_data_size":1},"response":"UNREPLIED"}"#
    );
}

#[test]
fn iface_any_frag_and_version_syntax() {
    assert!(setup_iface(Some("not-a-uuid")).is_err());
    assert!(setup_iface(Some(&format!("{NETLOGON},>1,any_frag"))).is_ok());
    assert!(setup_iface(Some(&format!("{NETLOGON},any_frag,1"))).is_err());
    assert!(setup_opnum(Some("5-2")).is_err());
    assert!(setup_opnum(Some("x")).is_err());
    // A BIND without the first-fragment flag only matches with `any_frag`.
    let mut s = TcpState::default();
    assert!(!s.parse(
        Dir::ToServer,
        &pdu(BIND, 2, 1, &bind_body(&[(0, NETLOGON, 1)]))
    ));
    assert!(!s.parse(Dir::ToClient, &pdu(BINDACK, 3, 1, &bindack_body(&[0]))));
    assert!(!s.parse(
        Dir::ToServer,
        &pdu(REQUEST, 3, 2, &request_body(0, 4, b"x"))
    ));
    // Suricata's loop ends on the skipped entry with its result still set.
    assert_eq!(iface(NETLOGON).matches(&s, 1, Dir::ToServer), Some(true));
    assert_eq!(
        iface(&format!("{NETLOGON},any_frag")).matches(&s, 1, Dir::ToServer),
        Some(true)
    );
    assert_eq!(
        iface(&format!("{NETLOGON},2,any_frag")).matches(&s, 1, Dir::ToServer),
        Some(false)
    );
}

/// Suricata's connectionless request header from its parser test, with 8 bytes of stub.
const UDP_REQ: &[u8] = &[
    0x04, 0x00, 0x08, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x4a, 0x9f, 0x4d, 0x1c, 0x7d, 0xcf, 0x11,
    0x86, 0x1e, 0x00, 0x20, 0xaf, 0x6e, 0x7c, 0x57, 0x86, 0xc2, 0x37, 0x67, 0xf7, 0x1e, 0xd1, 0x11,
    0xbc, 0xd9, 0x00, 0x60, 0x97, 0x92, 0xd2, 0x6c, 0x79, 0xbe, 0x01, 0x34, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x08, 0x00, 0x00, 0x00, 0x0a, 0x00,
    1, 2, 3, 4, 5, 6, 7, 8,
];

#[test]
fn udp_request_and_response() {
    let mut s = UdpState::default();
    assert!(!s.parse(Dir::ToServer, UDP_REQ));
    let mut resp = UDP_REQ.to_vec();
    resp[1] = RESPONSE;
    resp.truncate(80);
    resp[74] = 0;
    assert!(!s.parse(Dir::ToClient, &resp));
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert_eq!(
        json(|w| UdpState::write(t, w)),
        r#"{"request":"REQUEST","req":{"opnum":0,"frag_cnt":1,"stub_data_size":8},"response":"RESPONSE","res":{"frag_cnt":1,"stub_data_size":0},"activityuuid":"6737c286-1ef7-11d1-bcd9-00609792d26c","seqnum":0,"rpc_version":"4.0"}"#
    );
    // Cut short or another version: not taken.
    assert!(s.parse(Dir::ToServer, &UDP_REQ[..60]));
    let mut v5 = UDP_REQ.to_vec();
    v5[0] = 5;
    assert!(s.parse(Dir::ToServer, &v5));
}

#[test]
fn random_input_never_panics() {
    let b = pdu(BIND, 3, 1, &bind_body(&[(0, NETLOGON, 1)]));
    let r = pdu(REQUEST, 3, 2, &request_body(0, 1, b"abc"));
    crate::common::testing::random_input_never_panics(&PROTOCOL, true, &[&b, &r]);
    crate::common::testing::random_input_never_panics(&PROTOCOL, false, &[UDP_REQ]);
}

// Hostile traffic: fragment floods, huge length claims, huge BINDs. Memory stays within the
// limits (`memuse`, live transactions) and each limit hit shows (`limits()`, the parser
// giving up: `app_layer.error.dcerpc_*.parser`).

/// A connectionless PDU (little-endian): `flags1`, activity byte `act`, `seq`, stub.
fn udp_pdu(ptype: u8, flags1: u8, act: u8, seq: u32, stub: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; UDP_HDR_LEN];
    v[0] = 4;
    v[1] = ptype;
    v[2] = flags1;
    v[4] = 0x10;
    v[40] = act;
    v[64..68].copy_from_slice(&seq.to_le_bytes());
    v[74..76].copy_from_slice(&(stub.len() as u16).to_le_bytes());
    v.extend_from_slice(stub);
    v
}

fn small() -> DcerpcConfig {
    DcerpcConfig { max_tx: 16 }
}

#[test]
fn tcp_endless_request_fragments_stay_within_max_tx() {
    // One call: a first fragment then 5000 middle fragments, never the last. Each fragment
    // completes a transaction (Suricata's quirk), so max-tx closes the unanswered ones and
    // the hard bound (1024 with max-tx 16) caps what is held.
    let mut s = TcpState::new(small());
    let stub = vec![0x41u8; 1000];
    assert!(!s.parse(
        Dir::ToServer,
        &pdu(REQUEST, 1, 7, &request_body(0, 1, &stub))
    ));
    let mid = pdu(REQUEST, 0, 7, &request_body(0, 1, &stub));
    let mut peak = 0;
    for _ in 0..5000 {
        assert!(!s.parse(Dir::ToServer, &mid));
        peak = peak.max(s.memuse());
    }
    assert_eq!(s.tx_count(), 5001);
    assert!(s.live_tx_count() <= 1024, "{} live", s.live_tx_count());
    // Every live transaction is found by id, the evicted ones are not.
    let mut live = Vec::new();
    s.live_txs(Dir::ToServer, &mut live);
    assert!(live.windows(2).all(|w| w[0] < w[1]));
    assert!(live.iter().all(|&id| s.tx(id).is_some_and(|t| t.id == id)));
    assert!(s.tx(0).is_none() && s.tx(5001).is_none());
    let l = s.limits();
    assert!(l.max_tx_closed > 0 && l.txs_evicted > 0, "{l:?}");
    assert!(peak < 2 << 20, "peak memuse {peak}");
    // The closed transactions are complete both ways (logged with no response fragments).
    let oldest = s.txs.list.front().unwrap();
    assert!(oldest.req_done && oldest.resp_done);
}

#[test]
fn tcp_interleaved_call_ids_are_closed_by_max_tx() {
    let mut s = TcpState::new(small());
    for call in 0..40u32 {
        assert!(!s.parse(
            Dir::ToServer,
            &pdu(REQUEST, 3, call, &request_body(0, 1, b"x"))
        ));
    }
    // 17 live (more than max-tx 16) before the 18th: the earliest opens are closed, one per
    // transaction created beyond the limit; the last ones stay open.
    assert_eq!(s.limits().max_tx_closed, 40 - 17);
    assert!(s.tx(0).unwrap().resp_done);
    assert!(!s.tx(39).unwrap().resp_done);
    assert_eq!(s.limits().txs_evicted, 0);
}

#[test]
fn tcp_stub_data_is_bounded_per_flow() {
    // Requests with ~64 KiB of stub each, never answered: the flow's stub budget holds.
    let mut s = TcpState::default();
    s.txs.stub_budget = 1 << 20;
    let stub = vec![0u8; 65000];
    for call in 0..40u32 {
        let r = pdu(REQUEST, 3, call, &request_body(0, 1, &stub));
        for seg in r.chunks(1460) {
            assert!(!s.parse(Dir::ToServer, seg));
        }
    }
    assert_eq!(s.tx_count(), 40);
    assert!(s.txs.stub_bytes <= 1 << 20);
    assert!(s.limits().stub_dropped >= 40 * 65000 - (1 << 20));
    assert!(s.memuse() < 3 << 20, "memuse {}", s.memuse());
}

#[test]
fn tcp_huge_length_claims_and_garbage_are_bounded_by_the_pdu_buffer() {
    // A header claiming 65535 bytes, fed one byte short: buffered, no more than the claim.
    let mut s = TcpState::default();
    let mut big = pdu(REQUEST, 3, 1, &request_body(0, 1, &vec![0u8; 65535 - 24]));
    assert_eq!(big.len(), 65535);
    let last = big.pop().unwrap();
    for seg in big.chunks(1000) {
        assert!(!s.parse(Dir::ToServer, seg));
    }
    assert!(s.memuse() < 256 << 10, "memuse {}", s.memuse());
    assert!(!s.parse(Dir::ToServer, &[last]));
    assert_eq!(s.tx(0).unwrap().stub_ts.len(), 65535 - 24);
    // After a valid start, a header that is not version 5 is kept as it grows: beyond 1 MiB
    // the flow is given up (Suricata's buffer overflow, a parser error).
    let mut s = TcpState::default();
    assert!(!s.parse(
        Dir::ToServer,
        &pdu(REQUEST, 3, 1, &request_body(0, 1, b"a"))
    ));
    let junk = [0x99u8; 1400];
    let mut gave_up = false;
    for _ in 0..2000 {
        if s.parse(Dir::ToServer, &junk) {
            gave_up = true;
            break;
        }
        assert!(s.memuse() < 3 << 20, "memuse {}", s.memuse());
    }
    assert!(gave_up);
    assert!(!s.parse(Dir::ToServer, &junk), "nothing after giving up");
}

#[test]
fn tcp_bind_with_a_full_context_list() {
    // The item count is one byte: 255 items read however many the PDU carries (here 1400,
    // 61,600 bytes); each BIND replaces the last one's list.
    let ctxs: Vec<(u16, &str, u16)> = (0..1400).map(|i| (i as u16, NETLOGON, 1)).collect();
    let mut body = bind_body(&ctxs);
    body[8] = 255;
    let mut s = TcpState::default();
    for call in 0..50 {
        assert!(!s.parse(Dir::ToServer, &pdu(BIND, 3, call, &body)));
    }
    assert_eq!(s.bind.as_ref().unwrap().uuids.len(), 255);
    assert_eq!(s.tx_count(), 50);
    assert!(s.memuse() < 1 << 20, "memuse {}", s.memuse());
}

#[test]
fn udp_endless_fragments_are_bounded_per_transaction() {
    // One request of 200 non-last 60,000-byte fragments: its stub stops at MAX_TX_STUB and
    // the rest is counted.
    let mut s = UdpState::default();
    let stub = vec![0u8; 60000];
    let frag = udp_pdu(REQUEST, PFCL1_FRAG, 1, 9, &stub);
    for _ in 0..200 {
        assert!(!s.parse(Dir::ToServer, &frag));
    }
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert_eq!(t.stub_ts.len(), MAX_TX_STUB);
    assert_eq!(t.frag_cnt_ts, 200);
    assert!(!t.req_done);
    assert_eq!(s.limits().stub_dropped, (200 * 60000 - MAX_TX_STUB) as u64);
    assert!(s.memuse() < 3 << 20, "memuse {}", s.memuse());
}

#[test]
fn udp_sequence_flood_stays_within_max_tx_and_flow_budget() {
    let mut s = UdpState::new(small());
    s.txs.stub_budget = 2 << 20;
    let stub = vec![0u8; 4000];
    let mut peak = 0;
    for seq in 0..3000u32 {
        assert!(!s.parse(Dir::ToServer, &udp_pdu(REQUEST, PFCL1_FRAG, 2, seq, &stub)));
        peak = peak.max(s.memuse());
    }
    assert_eq!(s.tx_count(), 3000);
    assert!(s.live_tx_count() <= 1024);
    let l = s.limits();
    assert!(
        l.max_tx_closed > 0 && l.txs_evicted > 0 && l.stub_dropped > 0,
        "{l:?}"
    );
    assert!(s.txs.stub_bytes <= 2 << 20);
    assert!(peak < 6 << 20, "peak memuse {peak}");
}
