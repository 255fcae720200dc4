use super::detect::{parse, ModbusMatch};
use super::*;
use crate::registry::TxMatch;
use sawp_modbus::FunctionCode;

/// An ADU: MBAP header (transaction id, protocol 0, length) then unit and PDU.
fn adu(tid: u16, unit: u8, pdu: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tid.to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&(pdu.len() as u16 + 1).to_be_bytes());
    v.push(unit);
    v.extend_from_slice(pdu);
    v
}

/// Read Coils, 19 coils from 0x7890 (the specification's example).
fn rd_coils_req() -> Vec<u8> {
    adu(0, 0, &[0x01, 0x78, 0x90, 0x00, 0x13])
}

fn rd_coils_resp() -> Vec<u8> {
    adu(0, 0, &[0x01, 0x03, 0xcd, 0x6b, 0x05])
}

/// Write Multiple Registers: 2 registers from 1.
fn wr_mult_req() -> Vec<u8> {
    adu(
        1,
        0,
        &[0x10, 0x00, 0x01, 0x00, 0x02, 0x04, 0x00, 0x0a, 0x01, 0x02],
    )
}

fn wr_mult_resp() -> Vec<u8> {
    adu(1, 0, &[0x10, 0x00, 0x01, 0x00, 0x02])
}

fn state() -> ModbusState {
    ModbusState::new(ModbusConfig::default())
}

fn json(t: &ModbusTx) -> serde_json::Value {
    let mut w = JsonWriter::new();
    w.start_object();
    write_tx(&mut w, t);
    w.close();
    serde_json::from_slice(w.as_bytes()).unwrap()
}

#[test]
fn probe_as_suricata() {
    assert_eq!(probe(Dir::ToServer, &rd_coils_req()), Probe::Yes);
    assert_eq!(probe(Dir::ToClient, &rd_coils_resp()), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &rd_coils_req()[..5]), Probe::NeedMore);
    // A protocol id other than 0, an unknown function, HTTP.
    let mut bad = rd_coils_req();
    bad[3] = 1;
    assert_eq!(probe(Dir::ToServer, &bad), Probe::No);
    assert_eq!(probe(Dir::ToServer, &adu(0, 0, &[0x41, 0, 0])), Probe::No);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"), Probe::No);
    // Still incomplete after 16 bytes: not Modbus.
    let long = wr_mult_req();
    let mut big = adu(0, 0, &[0x10; 40]);
    big.truncate(20);
    assert_eq!(probe(Dir::ToServer, &big), Probe::No);
    assert_eq!(probe(Dir::ToServer, &long[..12]), Probe::NeedMore);
}

#[test]
fn request_and_response_make_one_transaction() {
    let mut s = state();
    assert!(!s.parse(Dir::ToServer, &rd_coils_req()));
    assert_eq!(s.tx_count(), 1);
    assert!(!s.tx(0).unwrap().complete());
    assert!(!s.parse(Dir::ToClient, &rd_coils_resp()));
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert!(t.complete());
    assert_eq!(t.events, 0);
    let j = json(t);
    assert_eq!(j["modbus"]["id"], 1);
    let rq = &j["modbus"]["request"];
    assert_eq!(rq["function_code"], "RdCoils");
    assert_eq!(rq["function_raw"], 1);
    assert_eq!(rq["access_type"], "READ | COILS");
    assert_eq!(rq["category"], "PUBLIC_ASSIGNED");
    assert_eq!(rq["error_flags"], "NONE");
    assert_eq!(rq["read"]["address"], 0x7890);
    assert_eq!(rq["read"]["quantity"], 19);
    assert_eq!(j["modbus"]["response"]["read"]["data"], "\\xcdk\u{5}");
}

#[test]
fn split_at_every_byte_and_pipelined() {
    let req = [rd_coils_req(), wr_mult_req()].concat();
    let resp = [rd_coils_resp(), wr_mult_resp()].concat();
    for cut in 0..=req.len() {
        let mut s = state();
        s.parse(Dir::ToServer, &req[..cut]);
        s.parse(Dir::ToServer, &req[cut..]);
        assert_eq!(s.tx_count(), 2, "cut {cut}");
        let c2 = cut.min(resp.len());
        s.parse(Dir::ToClient, &resp[..c2]);
        s.parse(Dir::ToClient, &resp[c2..]);
        assert_eq!(s.tx_count(), 2);
        assert!(s.txs().all(|t| t.complete() && t.events == 0));
    }
    let mut s = state();
    s.parse(Dir::ToServer, &wr_mult_req());
    s.parse(Dir::ToClient, &wr_mult_resp());
    let j = json(s.tx(0).unwrap());
    assert_eq!(j["modbus"]["request"]["write"]["quantity"], 2);
    assert_eq!(j["modbus"]["response"]["write"]["data"], 2);
    assert_eq!(
        j["modbus"]["request"]["access_type"],
        "WRITE | HOLDING | MULTIPLE | WRITE_MULTIPLE"
    );
}

#[test]
fn events_from_bad_messages() {
    // Unsolicited response.
    let mut s = state();
    s.parse(Dir::ToClient, &rd_coils_resp());
    assert!(s.has_event(0, u16::from(ev::UNSOLICITED_RESPONSE)));
    // Protocol id.
    let mut s = state();
    let mut bad = rd_coils_req();
    bad[3] = 1;
    s.parse(Dir::ToServer, &bad);
    assert!(s.has_event(0, u16::from(ev::INVALID_PROTOCOL_ID)));
    // Unknown exception code in a response.
    let mut s = state();
    s.parse(Dir::ToServer, &rd_coils_req());
    s.parse(Dir::ToClient, &adu(0, 0, &[0x81, 0xff]));
    assert!(s.has_event(0, u16::from(ev::INVALID_EXCEPTION_CODE)));
    assert_eq!(
        json(s.tx(0).unwrap())["modbus"]["response"]["exception"]["code"],
        "Unknown"
    );
    // Read response of the wrong size: value mismatch.
    let mut s = state();
    s.parse(Dir::ToServer, &rd_coils_req());
    s.parse(Dir::ToClient, &adu(0, 0, &[0x01, 0x02, 0xcd, 0x6b]));
    let t = s.tx(0).unwrap();
    assert!(t.complete() && s.has_event(0, u16::from(ev::VALUE_MISMATCH)));
    // Quantity 0 is an invalid value, a bad write byte count an invalid length.
    let mut s = state();
    s.parse(Dir::ToServer, &adu(3, 0, &[0x01, 0, 0, 0, 0]));
    assert!(s.has_event(0, u16::from(ev::INVALID_VALUE)));
    let mut s = state();
    s.parse(Dir::ToServer, &adu(1, 0, &[0x10, 0, 1, 0, 2, 4, 0, 0x0a]));
    assert!(s.has_event(0, u16::from(ev::INVALID_LENGTH)));
    // Function code with the exception bit in a request.
    let mut s = state();
    s.parse(Dir::ToServer, &adu(1, 0, &[0x90, 0, 1]));
    assert!(s.has_event(0, u16::from(ev::INVALID_FUNCTION_CODE)));
}

#[test]
fn flood_then_parser_error() {
    let cfg = ModbusConfig {
        request_flood: 3,
        ..Default::default()
    };
    let mut s = ModbusState::new(cfg);
    for i in 0..3u16 {
        assert!(!s.parse(Dir::ToServer, &adu(i, 0, &[0x01, 0, 0, 0, 1])));
    }
    assert!(!s.parse(Dir::ToServer, &adu(9, 0, &[0x01, 0, 0, 0, 1])));
    assert!(s.has_event(3, u16::from(ev::FLOODED)));
    assert!(!s.has_event(2, u16::from(ev::FLOODED)));
    // The next one is refused: the flow's parsing ends.
    assert!(s.parse(Dir::ToServer, &adu(10, 0, &[0x01, 0, 0, 0, 1])));
    assert_eq!(s.tx_count(), 4);
    assert!(!s.parse(Dir::ToServer, &adu(11, 0, &[0x01, 0, 0, 0, 1])));
    assert_eq!(s.tx_count(), 4);
}

#[test]
fn no_flood_limit_still_bounded() {
    let cfg = ModbusConfig {
        request_flood: 0,
        ..Default::default()
    };
    let mut s = ModbusState::new(cfg);
    let one = adu(1, 0, &[0x01, 0, 0, 0, 1]);
    let burst: Vec<u8> = one.iter().copied().cycle().take(one.len() * 1000).collect();
    let mut gave_up = false;
    for _ in 0..(MAX_OPEN_TXS / 1000 + 1) {
        gave_up |= s.parse(Dir::ToServer, &burst);
    }
    assert!(gave_up);
    assert_eq!(s.tx_count(), MAX_OPEN_TXS as u64);
    assert!(s.txs().all(|t| t.events == 0));
}

#[test]
fn bad_length_skips_and_gap_stops() {
    let mut s = state();
    // Length 300 (above 254): one message with an invalid length, its bytes skipped.
    let mut v = vec![0, 1, 0, 0, 0x01, 0x2c];
    v.extend_from_slice(&[0u8; 300]);
    v.extend_from_slice(&rd_coils_req());
    assert!(!s.parse(Dir::ToServer, &v));
    assert_eq!(s.tx_count(), 2);
    assert!(s.has_event(0, u16::from(ev::INVALID_LENGTH)));
    s.gap(Dir::ToServer, 10);
    assert!(!s.parse(Dir::ToServer, &rd_coils_req()));
    assert_eq!(s.tx_count(), 2);
}

#[test]
fn no_panic_on_random_input() {
    // A small deterministic generator: every byte pattern around the header fields.
    let mut x: u32 = 0x1234_5678;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    for _ in 0..3000 {
        let mut s = state();
        for _ in 0..4 {
            let n = (next() % 40) as usize;
            let mut d: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            if d.len() > 6 {
                d[2] = 0;
                d[3] = 0;
                d[4] = 0;
                d[5] = (next() % 12) as u8;
            }
            let dir = if next() & 1 == 0 {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            let _ = probe(dir, &d);
            s.parse(dir, &d);
        }
        for t in s.txs() {
            let _ = json(t);
            for m in [&t.request, &t.response].into_iter().flatten() {
                let _ = address_range(m);
                let _ = write_value_at(m, (next() % 65536) as u16);
            }
        }
    }
}

#[test]
fn keyword_forms_parse_as_suricata() {
    let f = parse("function 1").unwrap();
    assert_eq!(f.function, Some(FunctionCode::RdCoils));
    let f = parse("function 8, subfunction 4").unwrap();
    assert_eq!(
        (f.function, f.subfunction),
        (Some(FunctionCode::Diagnostic), Some(4))
    );
    assert!(parse("function reserved").unwrap().category.is_some());
    assert!(parse(" \"function !assigned\" ")
        .unwrap()
        .category
        .is_some());
    assert!(parse("function 0").is_none());
    assert!(parse("function nope").is_none());
    let a = parse("access read discretes").unwrap();
    assert_eq!(
        a.access_type,
        Some(AccessType::READ | AccessType::DISCRETES)
    );
    let a = parse("access write coils, address <500").unwrap();
    assert_eq!(a.address, Some(0..500));
    let a = parse("access write holding, address 100, value 500<>1000").unwrap();
    assert_eq!((a.address, a.value), (Some(100..100), Some(500..1000)));
    assert!(parse("access write holding, address 100, value 500<>").is_none());
    assert!(parse("access write holdin").is_none());
    assert!(parse("access write discretes").is_none());
    assert!(parse("access read, address 1, value 2").is_none());
    assert!(parse("access write, address 1<>5, value 2").is_none());
    let u = parse("unit 10, function 8, subfunction 4").unwrap();
    assert_eq!(u.unit_id, Some(10..10));
    assert_eq!(u.subfunction, Some(4));
    let u = parse("unit >9, access read coils, address 0<>2").unwrap();
    assert_eq!((u.unit_id, u.address), (Some(9..u16::MAX), Some(0..2)));
    assert_eq!(parse("unit 10<>500").unwrap().unit_id, Some(10..500));
    assert!(parse("unit ๖").is_none());
    assert!(parse("unt 10").is_none());
    assert!(parse("unit 10, bogus").is_none());
    assert!(parse("unit 70000").is_none());
}

fn hit(rule: &str, s: &ModbusState, tx: u64) -> bool {
    let m: ModbusMatch = parse(rule).unwrap();
    m.matches(s, tx, Dir::ToServer).unwrap()
}

#[test]
fn keyword_matches_requests() {
    // Read/Write Multiple Registers: read 6 from 3, write 3 from 14 (0x1234 0x5678 0x9abc).
    let mut s = state();
    s.parse(
        Dir::ToServer,
        &adu(
            0x1234,
            10,
            &[
                0x17, 0, 3, 0, 6, 0, 0x0e, 0, 3, 6, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
            ],
        ),
    );
    assert!(hit("function 23", &s, 0));
    assert!(!hit("function 3", &s, 0));
    assert!(hit("function assigned", &s, 0));
    assert!(!hit("function !assigned", &s, 0));
    assert!(hit("unit 10", &s, 0));
    assert!(hit("unit >9, function 23", &s, 0));
    assert!(!hit("unit <10", &s, 0));
    assert!(hit("access write holding", &s, 0));
    assert!(hit("access read", &s, 0));
    assert!(!hit("access read coils", &s, 0));
    assert!(hit("access write holding, address 15, value 4660", &s, 0));
    assert!(!hit("access write holding, address 15, value <4660", &s, 0));
    assert!(!hit("access write holding, address 15, value 4661", &s, 0));
    assert!(hit(
        "access write holding, address 16, value 22135<>22137",
        &s,
        0
    ));
    assert!(!hit(
        "access write holding, address 16, value 20000<>22136",
        &s,
        0
    ));
    assert!(hit("access write holding, address 17, value >39611", &s, 0));
    assert!(!hit("access write holding, address 18, value >0", &s, 0));
    assert!(hit("access write, address 14<>16", &s, 0));
    assert!(!hit("access write, address >17", &s, 0));
    // Diagnostic with a subfunction.
    let mut s = state();
    s.parse(Dir::ToServer, &adu(1, 0, &[0x08, 0x00, 0x04, 0x00, 0x00]));
    assert!(hit("function 8, subfunction 4", &s, 0));
    assert!(!hit("function 8, subfunction 1", &s, 0));
    // Coils written one at a time: the value is 0 or 1.
    let mut s = state();
    s.parse(Dir::ToServer, &adu(1, 0, &[0x05, 0x00, 0x04, 0xff, 0x00]));
    assert!(hit("access write coils, address 5, value 1", &s, 0));
    assert!(!hit("access write coils, address 4, value 1", &s, 0));
    // Address 65535 written: numbered 0 after the wrap, as Suricata's release build.
    let mut s = state();
    s.parse(Dir::ToServer, &adu(1, 0, &[0x06, 0xff, 0xff, 0x00, 0x07]));
    assert!(hit("access write holding, address 0, value 7", &s, 0));
}

#[test]
fn many_pairs_complete() {
    let mut s = state();
    for i in 0..20u16 {
        s.parse(Dir::ToServer, &adu(i, 0, &[0x01, 0, 0, 0, 1]));
        s.parse(Dir::ToClient, &adu(i, 0, &[0x01, 1, 1]));
    }
    assert_eq!(s.tx_count(), 20);
    assert_eq!(s.complete_in(Dir::ToServer), 20);
    assert!(s.txs().all(|t| t.events == 0));
}

#[test]
fn request_after_unsolicited_response_joins_it() {
    let mut s = state();
    s.parse(Dir::ToClient, &rd_coils_resp());
    assert!(s.has_event(0, u16::from(ev::UNSOLICITED_RESPONSE)));
    s.parse(Dir::ToServer, &rd_coils_req());
    assert_eq!(s.tx_count(), 1);
    let t = s.tx(0).unwrap();
    assert!(t.request.is_some() && t.response.is_some());
    // A request of another transaction id opens its own transaction.
    s.parse(Dir::ToServer, &wr_mult_req());
    assert_eq!(s.tx_count(), 2);
    let mut seen = Vec::new();
    s.drain_events(0, false, &mut |a| seen.push((a.tx_id, a.name)));
    assert_eq!(seen, vec![(0, "unsolicited_response")]);
    s.drain_events(0, false, &mut |a| seen.push((a.tx_id, a.name)));
    assert_eq!(seen.len(), 1);
}

#[test]
fn detected_on_502_only_when_enabled() {
    use crate::layer::{AppLayer, FlowCtx};
    let ctx = |port| FlowCtx {
        ip_proto: 6,
        client_port: 40000,
        server_port: port,
        ts_ns: 0,
        midstream: false,
        bail_limits: [0; 2],
        held: [0; 2],
        addrs: [[0; 16]; 2],
    };
    let run = |enabled: bool, port: u16| {
        let mut al = AppLayer::new();
        al.cfg.modbus.enabled = enabled;
        let mut f = None;
        al.on_tcp_data(&mut f, &ctx(port), Dir::ToServer, &rd_coils_req());
        al.on_tcp_data(&mut f, &ctx(port), Dir::ToClient, &rd_coils_resp());
        let f = f.unwrap();
        let n = f.state_as::<ModbusState>().map(|s| s.tx_count());
        (f.proto.name(), n)
    };
    assert_eq!(run(true, 502), ("modbus", Some(1)));
    assert_ne!(run(false, 502).0, "modbus");
    assert_ne!(run(true, 503).0, "modbus");
}
