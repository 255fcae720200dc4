//! Hostile traffic stays within the configured caps; the counters show the refusals.

mod stream_util;

use shrike_stream::Dir::{ToClient as TC, ToServer as TS};
use shrike_stream::{HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, TcpSession};
use stream_util::*;

#[test]
fn syn_flood_respects_session_memcap() {
    let cfg = StreamConfig {
        memcap: 20_000,
        ..StreamConfig::default()
    };
    let mut eng = StreamEngine::new(cfg, HostOsPolicy::new(OsPolicy::Bsd));
    let mut sessions: Vec<TcpSession> = Vec::new();
    for i in 0..5_000u32 {
        let src = [10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
        let p = tcp4(
            src,
            SRV,
            1024 + (i % 60000) as u16,
            80,
            i * 7,
            0,
            SYN,
            1024,
            &[],
            b"",
        );
        let m = meta_of(&p);
        let mut s = TcpSession::new();
        eng.on_packet(&mut s, &m, &p, TS, i);
        sessions.push(s);
        assert!(eng.stats.memuse <= 20_000);
    }
    assert!(eng.stats.ssn_memcap_drop > 0);
    assert_eq!(eng.stats.sessions + eng.stats.ssn_memcap_drop, 5_000);
    assert_eq!(eng.stats.active_sessions, eng.stats.sessions);
    for s in sessions.iter_mut() {
        eng.release(s);
    }
    assert_eq!(eng.stats.memuse, 0);
    assert_eq!(eng.stats.active_sessions, 0);
}

#[test]
fn out_of_order_flood_respects_reassembly_memcap() {
    let mut cfg = StreamConfig::default();
    cfg.reassembly.memcap = 256 * 1024;
    cfg.reassembly.depth = 0;
    cfg.midstream = true;
    let mut c = Conn::new(cfg);
    c.send(TS, ACK, 1001, 5001, b"x");
    let seg = vec![b'z'; 1000];
    // Every other 1000-byte block, never acked: nothing can be released. (Midstream
    // sessions skip the window check, so all of them reach reassembly.)
    for i in 0..2_000u32 {
        c.send(TS, ACK, 1001 + 2_000 * i + 1_000, 5001, &seg);
        assert!(c.eng.stats.reassembly_memuse <= 256 * 1024);
    }
    assert!(c.eng.stats.segment_memcap_drop > 0);
    c.eng.release(&mut c.ssn);
    assert_eq!(c.eng.stats.reassembly_memuse, 0);
}

#[test]
fn tiny_segment_stream_stays_small() {
    let mut c = Conn::new(StreamConfig::default());
    c.handshake();
    let n = 50_000u32;
    let mut peak = 0;
    for i in 0..n {
        c.send(TS, ACK, 1001 + i, 5001, &[b'a' + (i % 26) as u8]);
        if i % 50 == 49 {
            c.send(TC, ACK, 5001, 1002 + i, b"");
        }
        peak = peak.max(c.eng.stats.reassembly_memuse);
    }
    c.send(TC, ACK, 5001, 1001 + n, b"");
    assert_eq!(c.app[0].len(), n as usize);
    assert!(c.app[0]
        .iter()
        .enumerate()
        .all(|(i, &b)| b == b'a' + (i % 26) as u8));
    // Raw inspection consumed in 2560-byte chunks; both consumers release.
    assert!(peak < 200_000, "peak reassembly memory {peak}");
    c.eng.prune(&mut c.ssn);
    assert!(c.eng.stats.reassembly_memuse < 100_000);
}

#[test]
fn far_out_of_window_data_does_not_allocate_the_gap() {
    let mut c = Conn::new(StreamConfig {
        midstream: true,
        ..StreamConfig::default()
    });
    // Midstream sessions skip the window check: a segment 500 MB ahead must not make a
    // 500 MB buffer.
    c.send(TS, ACK, 1000, 2000, b"a");
    c.send(TS, ACK, 1000 + 500_000_000, 2000, b"b");
    assert!(c.eng.stats.reassembly_memuse < 100_000);
}
