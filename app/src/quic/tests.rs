use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Build a protected v1 client Initial carrying `frames` (RFC 9001 section 5 applied with
/// the same primitives the parser uses to remove it).
fn client_initial(dcid: &[u8], frames: &[u8]) -> Vec<u8> {
    use aes_gcm::{AeadInOut, KeyInit};
    let mut hdr = vec![0xc3, 0, 0, 0, 1, dcid.len() as u8];
    hdr.extend_from_slice(dcid);
    hdr.extend_from_slice(&[0, 0]); // scid, token
    let mut payload = frames.to_vec();
    payload.resize(payload.len().max(40), 0); // padding frames
    let len = 4 + payload.len() + 16;
    hdr.extend_from_slice(&[0x40 | (len >> 8) as u8, len as u8]);
    let hlen = hdr.len();
    hdr.extend_from_slice(&[0, 0, 0, 2]); // packet number 2, 4 bytes
                                          // Derive the keys the way RFC 9001 does, independently of InitialKeys' internals.
    let salt = hex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a");
    let hk = hkdf::Hkdf::<sha2::Sha256>::new(Some(&salt), dcid);
    let label = |hk: &hkdf::Hkdf<sha2::Sha256>, l: &[u8], n: usize| {
        let mut out = vec![0u8; n];
        let info = [
            &(n as u16).to_be_bytes()[..],
            &[(6 + l.len()) as u8],
            b"tls13 ",
            l,
            &[0],
        ];
        hk.expand_multi_info(&info, &mut out).unwrap();
        out
    };
    let cs = label(&hk, b"client in", 32);
    let hk2 = hkdf::Hkdf::<sha2::Sha256>::from_prk(&cs).unwrap();
    let key = label(&hk2, b"quic key", 16);
    let iv = label(&hk2, b"quic iv", 12);
    let mut nonce: [u8; 12] = iv.try_into().unwrap();
    nonce[11] ^= 2;
    let aead = aes_gcm::Aes128Gcm::new_from_slice(&key).unwrap();
    let tag = aead
        .encrypt_inout_detached(
            &aes_gcm::Nonce::from(nonce),
            &hdr,
            payload.as_mut_slice().into(),
        )
        .unwrap();
    let mut pkt = hdr.clone();
    pkt.extend_from_slice(&payload);
    pkt.extend_from_slice(&tag);
    // Header protection.
    let keys = crypto::initial_keys(1, dcid).unwrap();
    let sample: [u8; 16] = pkt[hlen + 4..hlen + 20].try_into().unwrap();
    let mask = keys.client.mask(&sample);
    pkt[0] ^= mask[0] & 0x0f;
    for i in 0..4 {
        pkt[hlen + i] ^= mask[1 + i];
    }
    pkt
}

fn client_hello() -> Vec<u8> {
    let mut exts = Vec::new();
    // server_name "example.org"
    exts.extend_from_slice(&hex("0000 0010 000e 00 000b"));
    exts.extend_from_slice(b"example.org");
    // alpn h3
    exts.extend_from_slice(&hex("0010 0005 0003 02 6833"));
    // supported_groups x25519
    exts.extend_from_slice(&hex("000a 0004 0002 001d"));
    // supported_versions TLS 1.3
    exts.extend_from_slice(&hex("002b 0003 02 0304"));
    let mut body = hex("0303");
    body.extend_from_slice(&[7u8; 32]);
    body.extend_from_slice(&hex("00 0004 1301 1302 01 00"));
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend_from_slice(&exts);
    let mut hs = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
    hs.extend_from_slice(&body);
    hs
}

fn crypto_frame(offset: u8, data: &[u8]) -> Vec<u8> {
    let mut f = vec![
        0x06,
        offset,
        0x40 | (data.len() >> 8) as u8,
        data.len() as u8,
    ];
    f.extend_from_slice(data);
    f
}

fn record(s: &QuicState, id: u64) -> String {
    let mut w = JsonWriter::new();
    w.start_object();
    write_quic(&s.tx(id).unwrap().data, false, &mut w);
    w.close();
    String::from_utf8(w.as_bytes().to_vec()).unwrap()
}

#[test]
fn protected_initial_gives_sni_ja3_and_extensions() {
    let dcid = hex("8394c8f03e515708");
    let pkt = client_initial(&dcid, &crypto_frame(0, &client_hello()));
    assert_eq!(probe(Dir::ToServer, &pkt), Probe::Yes);
    let mut s = QuicState::default();
    assert!(!AppParser::parse(&mut s, Dir::ToServer, &pkt));
    assert_eq!(s.tx_count(), 1);
    let t = &s.tx(0).unwrap().data;
    assert_eq!(t.sni.as_deref(), Some(&b"example.org"[..]));
    assert_eq!(t.ja3.as_deref(), Some("771,4865-4866,0-16-10-43,29,"));
    assert!(t.ja4.as_deref().unwrap().starts_with("q13d0204h3_"));
    let r = record(&s, 0);
    assert!(
        r.starts_with(r#"{"version":"1","sni":"example.org","ja3":{"hash":""#),
        "{r}"
    );
    assert!(
        r.contains(r#"{"name":"alpn","type":16,"values":["h3"]}"#),
        "{r}"
    );
    assert!(r.contains(r#"{"name":"supported_versions","type":43,"values":["Tls13"]}"#));
    let mut hits = Vec::new();
    s.buffer(0, BUF_SNI, Dir::ToServer, &mut |b| {
        hits.push(b.to_vec());
        false
    });
    assert_eq!(hits, [b"example.org".to_vec()]);
    assert!(s.buffer(0, BUF_VERSION, Dir::ToServer, &mut |b| b == [0, 0, 0, 1]));
    assert!(!s.buffer(0, BUF_JA3S_STRING, Dir::ToServer, &mut |_| true));
    // The hello is in: later client packets open no transaction.
    assert!(!AppParser::parse(&mut s, Dir::ToServer, &pkt));
    assert_eq!(s.tx_count(), 1);
}

#[test]
fn hello_split_over_two_packets_is_reassembled() {
    let dcid = hex("0102030405060708");
    let ch = client_hello();
    let (a, b) = ch.split_at(30);
    let mut s = QuicState::default();
    assert!(s.parse_datagram(Dir::ToServer, &client_initial(&dcid, &crypto_frame(0, a))));
    assert!(s.tx(0).unwrap().data.sni.is_none());
    let p2 = client_initial(&dcid, &crypto_frame(30, b));
    assert!(s.parse_datagram(Dir::ToServer, &p2));
    assert_eq!(
        s.tx(1).unwrap().data.sni.as_deref(),
        Some(&b"example.org"[..])
    );
}

#[test]
fn corrupted_initial_fails_decrypt_and_nothing_panics() {
    let dcid = hex("8394c8f03e515708");
    let pkt = client_initial(&dcid, &crypto_frame(0, &client_hello()));
    let mut bad = pkt.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    let mut s = QuicState::default();
    assert!(AppParser::parse(&mut s, Dir::ToServer, &bad));
    assert!(s.has_event(0, u16::from(EV_FAILED_DECRYPT)));
    // Every truncation and single-byte change parses without panicking.
    for i in 0..pkt.len() {
        let mut s = QuicState::default();
        let _ = s.parse_datagram(Dir::ToServer, &pkt[..i]);
        let mut m = pkt.clone();
        m[i] ^= 0x5a;
        let mut s = QuicState::default();
        let _ = s.parse_datagram(Dir::ToServer, &m);
        let _ = s.parse_datagram(Dir::ToClient, &m);
    }
}

#[test]
fn gquic_q046_chlo_gives_sni_ua_and_cyu() {
    // Q046 long header: first 0xc3, version, dcid/scid lengths 0x50 (8 bytes dcid),
    // packet number, message authentication hash, then a stream frame holding a CHLO.
    let mut m = Vec::new();
    m.extend_from_slice(b"CHLO");
    m.extend_from_slice(&[2, 0, 0, 0]);
    m.extend_from_slice(b"SNI\0");
    m.extend_from_slice(&3u32.to_le_bytes());
    m.extend_from_slice(b"UAID");
    m.extend_from_slice(&5u32.to_le_bytes());
    m.extend_from_slice(b"a.bxy");
    let mut p = vec![0xc3];
    p.extend_from_slice(b"Q046");
    p.push(0x50);
    p.extend_from_slice(&[9; 8]);
    p.extend_from_slice(&[0, 0, 0, 1]);
    p.extend_from_slice(&[0; 12]); // message authentication hash
    p.push(0xa0); // stream frame, data length present, 1-byte stream id
    p.push(1);
    p.extend_from_slice(&(m.len() as u16).to_be_bytes());
    p.extend_from_slice(&m);
    let mut s = QuicState::default();
    assert!(s.parse_datagram(Dir::ToServer, &p));
    let t = &s.tx(0).unwrap().data;
    assert_eq!(t.sni.as_deref(), Some(&b"a.b"[..]));
    assert_eq!(t.ua.as_deref(), Some(&b"xy"[..]));
    assert_eq!(t.cyu[0].1, "46,SNI-UAID");
    assert_eq!(t.cyu[0].0, md5_hex("46,SNI-UAID"));
    let r = record(&s, 0);
    assert!(
        r.starts_with(r#"{"version":"Q046","sni":"a.b","ua":"xy","cyu":[{"hash":""#),
        "{r}"
    );
}

#[test]
fn flood_of_transactions_stays_bounded() {
    let mut s = QuicState::default();
    // Handshake packets (not Initial) each open a transaction; the list stays bounded.
    let mut p = vec![0xe0, 0, 0, 0, 1, 4, 1, 2, 3, 4, 0];
    p.extend_from_slice(&[0u8; 20]);
    for _ in 0..2000 {
        let _ = s.parse_datagram(Dir::ToClient, &p);
    }
    assert_eq!(s.tx_count(), 2000);
    assert!(s.txs.iter().count() <= MAX_TXS);
}
