//! Hostile app-layer input through the public parsers with their configured limits: huge
//! HTTP headers and lines, request floods without responses, decompression bombs, DNS
//! compression loops and oversized TCP DNS frames, TLS handshake messages larger than the
//! reassembly limit. Memory stays bounded (`memuse`, `buffered`), the parsers terminate and
//! the refusals are counted.

use shrike_app::dns::{DnsConfig, DnsEvent, DnsState};
use shrike_app::http::{HttpConfig, HttpState};
use shrike_app::tls::{TlsConfig, TlsState};
use shrike_app::Dir::{ToClient as TC, ToServer as TS};
use std::sync::Arc;

fn http() -> HttpState {
    HttpState::new(Arc::new(HttpConfig::default()))
}

#[test]
fn huge_header_line_is_bounded_by_meta_field_limit() {
    let mut h = http();
    let limit = h.config().meta_field_limit as usize;
    h.parse(TS, b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: ");
    let chunk = vec![b'a'; 1400];
    let mut peak = 0;
    // 8 MiB of one header line in 1400-byte segments.
    for _ in 0..(8 << 20) / 1400 {
        h.parse(TS, &chunk);
        peak = peak.max(h.memuse());
    }
    h.parse(TS, b"\r\n\r\n");
    assert!(
        peak < limit + 256 * 1024,
        "memuse {peak} for a line limited to {limit} bytes"
    );
    assert!(h.stats().field_too_long > 0, "counted: {:?}", h.stats());
}

#[test]
fn many_headers_are_bounded_by_headers_limit() {
    let mut h = http();
    let hl = h.config().headers_limit;
    h.parse(TS, b"GET / HTTP/1.1\r\nHost: a\r\n");
    for i in 0..(hl * 4) {
        h.parse(TS, format!("X-{i}: v\r\n").as_bytes());
    }
    h.parse(TS, b"\r\n");
    let tx = h.txs().next().expect("one transaction");
    assert!(
        tx.request_headers().len() <= hl,
        "{} headers kept, limit {hl}",
        tx.request_headers().len()
    );
    assert!(h.memuse() < 4 << 20, "memuse {}", h.memuse());
}

#[test]
fn request_flood_without_responses_is_bounded_by_max_tx() {
    let mut h = http();
    let max_tx = h.config().max_tx;
    for i in 0..(max_tx * 10) {
        h.parse(
            TS,
            format!("GET /{i} HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
        );
    }
    let live = h.txs().count();
    assert!(live <= max_tx, "{live} live transactions, max-tx {max_tx}");
    assert!(h.stats().tx_limit > 0, "refusals counted");
    assert!(h.memuse() < 32 << 20, "memuse {}", h.memuse());
}

#[test]
fn gzip_bomb_is_flagged_and_decompression_stops() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    let body = gz.finish().unwrap();
    let mut h = http();
    h.parse(TS, b"GET /bomb HTTP/1.1\r\nHost: a\r\n\r\n");
    h.parse(
        TC,
        format!(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    let mut peak = 0;
    for c in body.chunks(1400) {
        h.parse(TC, c);
        peak = peak.max(h.memuse());
    }
    assert!(h.stats().compression_bombs > 0 || h.stats().body_truncated > 0);
    assert!(
        peak < 16 << 20,
        "memuse peaked at {peak} for 64 MiB of zeros"
    );
}

fn dns_header(id: u16, flags: u16, qd: u16, an: u16) -> Vec<u8> {
    let mut m = Vec::new();
    for v in [id, flags, qd, an, 0, 0] {
        m.extend_from_slice(&v.to_be_bytes());
    }
    m
}

#[test]
fn dns_compression_loops_terminate_and_raise_events() {
    // Self-pointer, two-pointer cycle, a 255-pointer chain into a loop, and answers whose
    // names loop: every message must finish parsing.
    let mut msgs = Vec::new();
    let mut m = dns_header(1, 0x0100, 1, 0);
    m.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
    msgs.push(m);
    let mut m = dns_header(2, 0x0100, 1, 0);
    m.extend_from_slice(&[1, b'a', 0xc0, 16, 0xc0, 12, 0, 1, 0, 1]);
    msgs.push(m);
    let mut m = dns_header(3, 0x0100, 1, 0);
    for i in 0..300u16 {
        let target = 12 + 2 * (i + 1);
        m.extend_from_slice(&(0xc000 | target).to_be_bytes());
    }
    m.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
    msgs.push(m);
    let mut m = dns_header(4, 0x8180, 1, 200);
    m.extend_from_slice(&[3, b'w', b'w', b'w', 0, 0, 1, 0, 1]);
    for _ in 0..200 {
        // Answer name: pointer to itself.
        let here = m.len() as u16;
        m.extend_from_slice(&(0xc000 | here).to_be_bytes());
        m.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4]);
    }
    msgs.push(m);
    let mut st = DnsState::new(false, DnsConfig::default());
    for (i, m) in msgs.iter().enumerate() {
        let dir = if i == 3 { TC } else { TS };
        let _ = st.parse(dir, m);
    }
    let evs: Vec<_> = st.txs().flat_map(|t| t.events.iter()).collect();
    assert!(
        evs.contains(&DnsEvent::InfiniteLoop) || evs.contains(&DnsEvent::MalformedData),
        "loops flagged: {evs:?}"
    );
    let n = st.tx_count();
    assert!((1..=msgs.len() as u64).contains(&n), "{n} transactions");
}

#[test]
fn dns_tcp_oversized_and_never_completing_frames_stay_bounded() {
    let mut st = DnsState::new(true, DnsConfig::default());
    // A length prefix of 65535 and then data that trickles in: at most one frame buffered.
    let mut frame = vec![0xff, 0xff];
    frame.extend_from_slice(&dns_header(9, 0x0100, 1, 0));
    let _ = st.parse(TS, &frame);
    for _ in 0..1_000 {
        let _ = st.parse(TS, &[b'x'; 100]);
        assert!(st.buffered() <= 65_535 + 2, "buffered {}", st.buffered());
        if st.failed() {
            break;
        }
    }
    // A flood of valid small queries on UDP: transactions capped by max_txs.
    let cfg = DnsConfig::default();
    let mut udp = DnsState::new(false, cfg);
    for i in 0..(cfg.max_txs as u16 * 4) {
        let mut m = dns_header(i, 0x0100, 1, 0);
        m.extend_from_slice(&[1, b'a', 0, 0, 1, 0, 1]);
        let _ = udp.parse(TS, &m);
    }
    assert!(udp.txs().count() <= cfg.max_txs);
}

#[test]
fn tls_handshake_larger_than_the_limit_is_dropped_not_buffered() {
    let cfg = TlsConfig::default();
    let mut st = TlsState::new(cfg);
    // A ClientHello handshake message claiming 16 MiB, sent as full 16 KiB records.
    let mut rec = vec![0x16, 0x03, 0x01, 0x40, 0x00];
    let mut hs = vec![0x01, 0xff, 0xff, 0xff];
    hs.resize(0x4000, 0x41);
    rec.extend_from_slice(&hs);
    let _ = st.parse(TS, &rec);
    let mut more = vec![0x16, 0x03, 0x01, 0x40, 0x00];
    more.resize(5 + 0x4000, 0x42);
    for _ in 0..(2 * cfg.max_handshake_len / 0x4000 + 4) {
        if !st.parse(TS, &more) {
            break;
        }
    }
    // Nothing came of it, and the parser is still alive or gave up cleanly.
    assert!(st.sni().is_none());
    let _ = st.handshake_done();
}
