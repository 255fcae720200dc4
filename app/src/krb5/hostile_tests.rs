//! Hostile Kerberos traffic: huge sequences (etypes, padata, addresses, tickets, name
//! parts), deep DER nesting, 4 GiB record marks and endless partial records over TCP, floods
//! of weak replies. Memory stays within the TCP buffer bound and the transaction bound, and
//! the limits show (the parser giving up: `app_layer.error.krb5_tcp.parser`; dropped
//! transactions; `malformed_data`).

use super::*;

/// A DER element with any length.
fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    let n = body.len();
    if n < 0x80 {
        v.push(n as u8);
    } else {
        let b = (n as u32).to_be_bytes();
        let skip = b.iter().take_while(|&&x| x == 0).count();
        v.push(0x80 | (4 - skip) as u8);
        v.extend_from_slice(&b[skip..]);
    }
    v.extend_from_slice(body);
    v
}

fn ctx(n: u8, body: &[u8]) -> Vec<u8> {
    tlv(0xa0 | n, body)
}

fn int(i: u8) -> Vec<u8> {
    tlv(0x02, &[i])
}

fn gstr(s: &[u8]) -> Vec<u8> {
    tlv(0x1b, s)
}

fn principal(parts: &[&[u8]]) -> Vec<u8> {
    let strings: Vec<u8> = parts.iter().flat_map(|p| gstr(p)).collect();
    tlv(
        0x30,
        &[ctx(0, &int(1)), ctx(1, &tlv(0x30, &strings))].concat(),
    )
}

fn enc_data(etype: u8, cipher_len: usize) -> Vec<u8> {
    tlv(
        0x30,
        &[
            ctx(0, &int(etype)),
            ctx(2, &tlv(0x04, &vec![0xcc; cipher_len])),
        ]
        .concat(),
    )
}

fn ticket(sname: &[&[u8]], etype: u8) -> Vec<u8> {
    tlv(
        0x61,
        &tlv(
            0x30,
            &[
                ctx(0, &int(5)),
                ctx(1, &gstr(b"EXAMPLE.COM")),
                ctx(2, &principal(sname)),
                ctx(3, &enc_data(etype, 16)),
            ]
            .concat(),
        ),
    )
}

/// An AS-REQ with `n_etypes` etypes, `n_padata` PA-DATA, `n_addrs` addresses and
/// `n_tickets` additional tickets.
fn as_req(n_etypes: usize, n_padata: usize, n_addrs: usize, n_tickets: usize) -> Vec<u8> {
    let padata: Vec<u8> = (0..n_padata)
        .flat_map(|_| tlv(0x30, &[ctx(1, &int(2)), ctx(2, &tlv(0x04, b"pa"))].concat()))
        .collect();
    let etypes: Vec<u8> = (0..n_etypes).flat_map(|i| int((i % 100) as u8)).collect();
    let addrs: Vec<u8> = (0..n_addrs)
        .flat_map(|_| {
            tlv(
                0x30,
                &[ctx(0, &int(2)), ctx(1, &tlv(0x04, &[10, 0, 0, 1]))].concat(),
            )
        })
        .collect();
    let tickets: Vec<u8> = (0..n_tickets)
        .flat_map(|_| ticket(&[b"krbtgt", b"EXAMPLE.COM"], 18))
        .collect();
    let mut body = vec![
        ctx(0, &tlv(0x03, &[0, 0x40, 0x81, 0, 0x10])),
        ctx(1, &principal(&[b"alice"])),
        ctx(2, &gstr(b"EXAMPLE.COM")),
        ctx(3, &principal(&[b"krbtgt", b"EXAMPLE.COM"])),
        ctx(5, &tlv(0x18, b"20370913024805Z")),
        ctx(7, &tlv(0x02, &[0x12, 0x34])),
        ctx(8, &tlv(0x30, &etypes)),
    ];
    if n_addrs > 0 {
        body.push(ctx(9, &tlv(0x30, &addrs)));
    }
    if n_tickets > 0 {
        body.push(ctx(11, &tlv(0x30, &tickets)));
    }
    let mut req = vec![ctx(1, &int(5)), ctx(2, &int(10))];
    if n_padata > 0 {
        req.push(ctx(3, &tlv(0x30, &padata)));
    }
    req.push(ctx(4, &tlv(0x30, &body.concat())));
    tlv(0x6a, &tlv(0x30, &req.concat()))
}

/// A TGS-REP whose ticket's sname has `parts` parts, encrypted with `etype`.
fn tgs_rep(parts: usize, etype: u8) -> Vec<u8> {
    let names: Vec<&[u8]> = (0..parts).map(|_| &b"x"[..]).collect();
    tlv(
        0x6d,
        &tlv(
            0x30,
            &[
                ctx(0, &int(5)),
                ctx(1, &int(13)),
                ctx(3, &gstr(b"EXAMPLE.COM")),
                ctx(4, &principal(&[b"alice"])),
                ctx(5, &ticket(&names, etype)),
                ctx(6, &enc_data(etype, 32)),
            ]
            .concat(),
        ),
    )
}

fn udp() -> Krb5State {
    Krb5State::new(false)
}

#[test]
fn as_req_with_huge_sequences_parses_and_keeps_no_sequence() {
    // 20,000 etypes (a 60 KB list) with padata, addresses and tickets: a transaction whose
    // size does not depend on the counts (the sequences are read, not kept).
    let small = as_req(2, 1, 1, 1);
    let mut s = udp();
    assert!(!AppParser::parse(&mut s, Dir::ToServer, &small));
    let base = s.memuse();
    for (e, p, a, t) in [
        (20_000, 0, 0, 0),
        (10, 2000, 0, 0),
        (10, 0, 2000, 0),
        (10, 0, 0, 300),
    ] {
        let m = as_req(e, p, a, t);
        assert!(m.len() < 65_000, "{} bytes", m.len());
        let mut s = udp();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &m));
        assert_eq!(s.tx_count(), 1, "{e} {p} {a} {t}");
        let tx = s.tx(0).unwrap();
        assert_eq!(tx.data.msg_type, 10);
        assert_eq!(tx.data.cname.as_deref(), Some(&["alice".to_string()][..]));
        assert_eq!(s.memuse(), base, "{e} {p} {a} {t}");
    }
}

#[test]
fn huge_name_is_bounded_by_its_message() {
    // A ticket sname of 15,000 parts: kept whole (Suricata logs them all), so held memory
    // follows the message size, within a fixed factor.
    let m = tgs_rep(15_000, 18);
    assert!(m.len() < 65_000);
    let mut s = udp();
    assert!(!AppParser::parse(&mut s, Dir::ToClient, &m));
    let tx = s.tx(0).unwrap();
    assert_eq!(tx.data.sname.as_ref().map(Vec::len), Some(15_000));
    assert!(s.memuse() < 16 * m.len(), "memuse {}", s.memuse());
}

#[test]
fn weak_reply_flood_raises_one_event_each_and_stays_within_max_txs() {
    // 2,000 weak (RC4) replies never logged: one event per transaction, memory of a
    // transaction independent of the flood, at most MAX_TXS live, drops counted.
    let m = tgs_rep(2, 23);
    let mut s = udp();
    assert!(!AppParser::parse(&mut s, Dir::ToClient, &m));
    let one = s.memuse();
    for _ in 1..2000 {
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &m));
    }
    assert_eq!(s.tx_count(), 2000);
    assert_eq!(s.live_tx_count(), MAX_TXS);
    assert_eq!(s.txs_dropped(), 2000 - MAX_TXS as u64);
    let last = s.tx(1999).unwrap();
    assert!(last.has(u16::from(EV_WEAK_ENCRYPTION)));
    assert_eq!(last.raised.len(), 1);
    assert!(
        s.memuse() <= MAX_TXS * one,
        "{} > {MAX_TXS} x {one}",
        s.memuse()
    );
}

#[test]
fn deep_der_nesting_is_refused_without_recursion() {
    // 30,000 nested indefinite-length SEQUENCEs as a message body, as a padata list and as
    // a KRB-ERROR body: no stack overflow, no transaction.
    let mut deep = vec![0x05, 0x00];
    for _ in 0..30_000 {
        deep = [vec![0x30, 0x80], deep, vec![0, 0]].concat();
    }
    for m in [
        tlv(0x6a, &deep),
        tlv(
            0x6a,
            &tlv(
                0x30,
                &[ctx(1, &int(5)), ctx(2, &int(10)), ctx(3, &deep)].concat(),
            ),
        ),
        tlv(0x7e, &deep),
    ] {
        let mut s = udp();
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &m));
        assert_eq!(s.tx_count(), 0);
    }
    // An outer header cut short after a transaction: `malformed_data` on it.
    let mut s = udp();
    assert!(!AppParser::parse(
        &mut s,
        Dir::ToServer,
        &as_req(2, 0, 0, 0)
    ));
    assert!(AppParser::parse(&mut s, Dir::ToServer, &[0x6a, 0x84, 0xff]));
    assert!(s.tx(0).unwrap().has(u16::from(EV_MALFORMED)));
}

#[test]
fn tcp_4gib_record_mark_and_endless_partial_records_are_bounded() {
    // A record mark of 0xffffffff then data: buffered up to 100,000 bytes, then the flow is
    // given up (Suricata's "TCP buffer exploded", a parser error).
    for mark in [u32::MAX, 0x8000_0000, 200_000] {
        let mut s = Krb5State::new(true);
        assert!(!AppParser::parse(
            &mut s,
            Dir::ToServer,
            &mark.to_be_bytes()
        ));
        let seg = [0u8; 1400];
        let mut gave_up = false;
        for _ in 0..200 {
            if AppParser::parse(&mut s, Dir::ToServer, &seg) {
                gave_up = true;
                break;
            }
            assert!(s.memuse() <= 2 * MAX_DEFRAG, "memuse {}", s.memuse());
        }
        assert!(gave_up, "mark {mark:#x}");
        assert_eq!(s.tx_count(), 0);
        // Given up once (one parser error), nothing parsed after, the buffer freed.
        assert!(!AppParser::parse(&mut s, Dir::ToServer, &seg));
        assert!(!AppParser::parse(&mut s, Dir::ToClient, &seg));
        assert_eq!(s.memuse(), 0);
    }
    // Endless 1-3 byte segments between records: bounded the same way.
    let mut s = Krb5State::new(true);
    let mut gave_up = false;
    for i in 0..200_000 {
        if AppParser::parse(&mut s, Dir::ToServer, &[0, 0][..1 + i % 2]) {
            gave_up = true;
            break;
        }
    }
    assert!(gave_up);
    assert!(s.memuse() <= 2 * MAX_DEFRAG);
    // A real message behind a mark, fed byte by byte after it, still parses (a mark split
    // over segments is not: Suricata reads marks only from the start of new data).
    let m = as_req(500, 10, 10, 2);
    let mut s = Krb5State::new(true);
    assert!(!AppParser::parse(
        &mut s,
        Dir::ToServer,
        &(m.len() as u32).to_be_bytes()
    ));
    for b in m.chunks(1) {
        assert!(!AppParser::parse(&mut s, Dir::ToServer, b));
    }
    assert_eq!(s.tx_count(), 1);
}
