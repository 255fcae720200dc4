//! Hostile RDP traffic: the most channel definitions an MCS Connect Initial can carry, channel
//! counts that lie, huge TPKT length claims, endless partial and endless complete PDUs,
//! floods of connection requests. Memory stays within the 70,000-byte buffer and the
//! transaction bound; the parser gives up on what Suricata's refuses
//! (`app_layer.error.rdp.parser`).

use super::*;

const CR: &[u8] = b"\x03\x00\x00\x25\x20\xe0\x00\x00\x00\x00\x00Cookie: mstshash=user123\r\n";

fn tpkt(body: &[u8]) -> Vec<u8> {
    let mut v = vec![3, 0];
    v.extend_from_slice(&((body.len() + 4) as u16).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// An MCS Connect Initial whose user data (the part after `Duca`, PER length in two bytes,
/// so at most 16383 bytes) is `blocks`.
fn connect_initial(blocks: &[u8]) -> Vec<u8> {
    assert!(blocks.len() < 0x4000);
    let mut b = vec![0x02, 0xf0, 0x80, 0x7f, 0x65, 0x82, 0x01, 0x00];
    b.extend_from_slice(b"Duca");
    b.extend_from_slice(&(0x8000u16 | blocks.len() as u16).to_be_bytes());
    b.extend_from_slice(blocks);
    tpkt(&b)
}

/// A TS_UD_CS_NET block claiming `count` channels and holding `n` definitions.
fn cs_net(count: u32, n: usize) -> Vec<u8> {
    let mut v = 0xc003u16.to_le_bytes().to_vec();
    v.extend_from_slice(&((8 + 12 * n) as u16).to_le_bytes());
    v.extend_from_slice(&count.to_le_bytes());
    for i in 0..n {
        let name = format!("ch{:05}", i % 100_000);
        v.extend_from_slice(&name.as_bytes()[..7]);
        v.push(0);
        v.extend_from_slice(&0x8080_0000u32.to_le_bytes());
    }
    v
}

#[test]
fn most_channel_definitions_a_connect_initial_holds() {
    // 1364 definitions fill the 16383-byte user data: all kept (Suricata logs them all),
    // memory proportional to them.
    let pdu = connect_initial(&cs_net(1364, 1364));
    let mut s = RdpState::default();
    for seg in pdu.chunks(1460) {
        assert!(!s.parse(Dir::ToServer, seg));
    }
    match &s.tx(0).unwrap().item {
        RdpItem::ConnectRequest(b) => match &b[..] {
            [CsBlock::Net(ch)] => assert_eq!(ch.len(), 1364),
            b => panic!("{b:?}"),
        },
        i => panic!("{i:?}"),
    }
    assert!(s.memuse() < 128 * 1024, "memuse {}", s.memuse());
    // Several NET blocks and 4-byte unknown blocks in one PDU: as many as fit, still bounded.
    let mut blocks = Vec::new();
    for _ in 0..20 {
        blocks.extend(cs_net(50, 50));
    }
    while blocks.len() + 4 < 0x3fff {
        blocks.extend_from_slice(&[0x02, 0xc0, 4, 0]);
    }
    let mut s = RdpState::default();
    assert!(!s.parse(Dir::ToServer, &connect_initial(&blocks)));
    assert_eq!(s.tx_count(), 1);
    assert!(s.memuse() < 256 * 1024, "memuse {}", s.memuse());
}

#[test]
fn channel_count_lies_end_the_direction() {
    // A count of 4 billion over 10 definitions: the loop stops at the data's end, the PDU is
    // cut short inside its TPKT (Suricata: incomplete), nothing is kept.
    for count in [u32::MAX, 11, 0x8000_0000] {
        let mut s = RdpState::default();
        assert!(!s.parse(Dir::ToServer, &connect_initial(&cs_net(count, 10))));
        assert_eq!(s.tx_count(), 0);
        assert!(s.stalled[0]);
        assert!(
            !s.parse(Dir::ToServer, CR),
            "a stalled direction takes nothing"
        );
        assert_eq!(s.tx_count(), 0);
        assert!(s.memuse() < 1024);
    }
}

#[test]
fn huge_tpkt_claims_and_endless_partial_pdus_are_bounded() {
    // A TPKT claiming 65535 bytes fed a byte at a time: buffered (at most the claim), then
    // taken whole; no transaction for an unknown PDU.
    let mut big = vec![3, 0, 0xff, 0xff];
    big.resize(65535, 0x41);
    let mut s = RdpState::default();
    for b in &big[..big.len() - 1] {
        assert!(!s.parse(Dir::ToServer, std::slice::from_ref(b)));
    }
    assert!(s.memuse() < 2 * MAX_BUF, "memuse {}", s.memuse());
    assert!(!s.parse(Dir::ToServer, &big[big.len() - 1..]));
    assert_eq!(s.tx_count(), 0);
    assert!(s.bufs[0].is_empty());
    // Endless complete unknown PDUs (6.5 MB): nothing held.
    let other = tpkt(&[0x41; 1000]);
    for _ in 0..6500 {
        assert!(!s.parse(Dir::ToServer, &other));
    }
    assert_eq!(s.tx_count(), 0);
    assert!(s.memuse() < 2 * MAX_BUF);
    // Lengths below the header, or a byte that is not TPKT nor TLS: the parser gives up.
    for bad in [&[3u8, 0, 0, 3][..], &[3, 0, 0, 0], &[0x99]] {
        let mut s = RdpState::default();
        assert!(s.parse(Dir::ToServer, bad));
        assert!(!s.parse(Dir::ToServer, CR), "nothing after giving up");
    }
}

#[test]
fn connection_request_flood_stays_within_max_txs() {
    // 5000 connection requests never logged: at most MAX_TXS live, the newest kept.
    let mut s = RdpState::default();
    let many: Vec<u8> = (0..100).flat_map(|_| CR.iter().copied()).collect();
    for _ in 0..50 {
        assert!(!s.parse(Dir::ToServer, &many));
    }
    assert_eq!(s.tx_count(), 5000);
    assert_eq!(s.live_tx_count(), MAX_TXS);
    assert!(s.tx(4999).is_some() && s.tx(0).is_none());
    assert!(s.memuse() < 64 * 1024, "memuse {}", s.memuse());
}

#[test]
fn tls_records_with_huge_claims_are_bounded() {
    // After the switch to TLS: a record claiming 65535 bytes buffered up to its length, a
    // handshake message claiming 16 MB inside a small record refused (the parser gives up).
    let mut s = RdpState::default();
    assert!(!s.parse(Dir::ToClient, &[0x16, 3, 3, 0xff, 0xff]));
    assert!(s.tls);
    for _ in 0..46 {
        assert!(!s.parse(Dir::ToClient, &[0u8; 1400]));
    }
    assert!(s.memuse() < 2 * MAX_BUF);
    let mut s = RdpState::default();
    assert!(s.parse(
        Dir::ToClient,
        &[0x16, 3, 3, 0, 8, 11, 0xff, 0xff, 0xff, 0, 0, 0, 0]
    ));
}
