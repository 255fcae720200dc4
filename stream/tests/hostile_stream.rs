//! Hostile TCP traffic through one worker's `StreamEngine` shared by many sessions, with
//! configured caps: the memory accounting never passes the caps, refusals are counted,
//! and releasing every session brings the accounting back to zero.

mod stream_util;

use shrike_stream::Dir::{ToClient as TC, ToServer as TS};
use shrike_stream::{AppChunk, HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, TcpSession};
use stream_util::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn pkt(c: u32, to_server: bool, seq: u32, ack: u32, flags: u8, pl: &[u8]) -> Vec<u8> {
    let cli = [172, 16, (c >> 8) as u8, c as u8];
    let port = 20_000 + (c % 40_000) as u16;
    if to_server {
        tcp4(cli, SRV, port, 80, seq, ack, flags, 65535, &[], pl)
    } else {
        tcp4(SRV, cli, 80, port, seq, ack, flags, 65535, &[], pl)
    }
}

fn drain(eng: &StreamEngine, s: &mut TcpSession) {
    for d in [TS, TC] {
        while let AppChunk::Data(b) = s.app_next(d) {
            let n = b.len();
            s.app_consume(d, n);
        }
        let w = eng.raw_window(s, d);
        if w.ready {
            let n = w.data.len();
            s.raw_consume(d, n);
        }
    }
}

/// 300 concurrent sessions each leave holes that are never filled (data is held, never
/// acked): the shared reassembly memcap bounds them all together.
#[test]
fn many_sessions_with_holes_share_the_reassembly_memcap() {
    let cap = 512 * 1024;
    let mut cfg = StreamConfig::default();
    cfg.reassembly.memcap = cap;
    let mut eng = StreamEngine::new(cfg, HostOsPolicy::new(OsPolicy::Linux));
    let mut ssn: Vec<TcpSession> = (0..300).map(|_| TcpSession::new()).collect();
    let mut ts = 1_000u32;
    for (c, s) in ssn.iter_mut().enumerate() {
        let c = c as u32;
        for (to_srv, seq, ack, fl) in [
            (true, 1000, 0, SYN),
            (false, 5000, 1001, SYN | ACK),
            (true, 1001, 5001, ACK),
        ] {
            let p = pkt(c, to_srv, seq, ack, fl, b"");
            eng.on_packet(s, &meta_of(&p), &p, if to_srv { TS } else { TC }, ts);
        }
    }
    let seg = vec![b'h'; 1200];
    let mut peak = 0;
    for round in 0..40u32 {
        ts += 1;
        for (c, s) in ssn.iter_mut().enumerate() {
            // Skip the first 1200 bytes: everything after is out of order.
            let seq = 1001 + 1200 + round * 2400;
            let p = pkt(c as u32, true, seq, 5001, ACK, &seg);
            eng.on_packet(s, &meta_of(&p), &p, TS, ts);
            peak = peak.max(eng.stats.reassembly_memuse);
            assert!(
                eng.stats.reassembly_memuse <= cap,
                "reassembly memuse {} over the cap",
                eng.stats.reassembly_memuse
            );
        }
    }
    assert!(eng.stats.segment_memcap_drop > 0, "refusals counted");
    assert!(peak > cap / 2, "the cap was actually reached: peak {peak}");
    assert_eq!(eng.stats.sessions, 300);
    for s in ssn.iter_mut() {
        eng.flow_end(s);
        drain(&eng, s);
        eng.release(s);
    }
    assert_eq!(eng.stats.reassembly_memuse, 0);
    assert_eq!(eng.stats.memuse, 0);
    assert_eq!(eng.stats.active_sessions, 0);
}

/// Random segments (any flags, sequence numbers near or far from the ISNs, random sizes,
/// both directions) over 64 sessions with small caps: the caps hold at every step and the
/// accounting returns to zero.
#[test]
fn random_segment_soup_stays_within_caps() {
    for seed in 1..=6u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut cfg = StreamConfig {
            memcap: 64 * 1024,
            midstream: seed % 2 == 0,
            async_oneside: seed % 3 == 0,
            ..StreamConfig::default()
        };
        cfg.reassembly.memcap = 256 * 1024;
        cfg.reassembly.depth = [0, 4096, 1 << 20][(seed % 3) as usize];
        let mut eng = StreamEngine::new(cfg, HostOsPolicy::new(OsPolicy::ALL[seed as usize]));
        let mut ssn: Vec<TcpSession> = (0..64).map(|_| TcpSession::new()).collect();
        let payload = vec![b'q'; 3000];
        for i in 0..20_000u32 {
            let c = (r.next() % 64) as usize;
            let to_srv = r.next() % 2 == 0;
            let base = if to_srv { 1000u32 } else { 5000 };
            let other = if to_srv { 5000u32 } else { 1000 };
            let seq = if r.next() % 8 == 0 {
                r.next() as u32
            } else {
                base.wrapping_add((r.next() % 20_000) as u32)
            };
            let ack = other.wrapping_add((r.next() % 20_000) as u32);
            let flags =
                [SYN, SYN | ACK, ACK, ACK | PSH, FIN | ACK, RST, ACK, ACK][(r.next() % 8) as usize];
            let len = [0, 1, 10, 536, 1460, 3000][(r.next() % 6) as usize];
            let p = pkt(c as u32, to_srv, seq, ack, flags, &payload[..len]);
            let s = &mut ssn[c];
            eng.on_packet(
                s,
                &meta_of(&p),
                &p,
                if to_srv { TS } else { TC },
                1000 + i / 100,
            );
            if r.next() % 4 != 0 {
                drain(&eng, s);
            }
            assert!(eng.stats.memuse <= 64 * 1024, "seed {seed}: session memuse");
            assert!(
                eng.stats.reassembly_memuse <= 256 * 1024,
                "seed {seed}: reassembly memuse {}",
                eng.stats.reassembly_memuse
            );
        }
        assert!(
            eng.stats.sessions > 0,
            "seed {seed}: no session was ever created"
        );
        for s in ssn.iter_mut() {
            eng.flow_end(s);
            drain(&eng, s);
            eng.release(s);
        }
        assert_eq!(eng.stats.memuse, 0, "seed {seed}");
        assert_eq!(eng.stats.reassembly_memuse, 0, "seed {seed}");
        assert_eq!(eng.stats.active_sessions, 0, "seed {seed}");
    }
}

/// A SYN flood on one session-less engine with a tiny session memcap, followed by legit
/// traffic once the flood sessions are released: the engine recovers.
#[test]
fn engine_recovers_after_a_session_memcap_flood() {
    let cfg = StreamConfig {
        memcap: 10_000,
        ..StreamConfig::default()
    };
    let mut eng = StreamEngine::new(cfg, HostOsPolicy::new(OsPolicy::Bsd));
    let mut flood: Vec<TcpSession> = Vec::new();
    for c in 0..2_000u32 {
        let p = pkt(c, true, c.wrapping_mul(7919), 0, SYN, b"");
        let mut s = TcpSession::new();
        eng.on_packet(&mut s, &meta_of(&p), &p, TS, 1);
        flood.push(s);
    }
    let refused = eng.stats.ssn_memcap_drop;
    assert!(refused > 0);
    for s in flood.iter_mut() {
        eng.release(s);
    }
    assert_eq!(eng.stats.memuse, 0);
    let mut c = Conn::with_policy(
        StreamConfig {
            memcap: 10_000,
            ..StreamConfig::default()
        },
        HostOsPolicy::new(OsPolicy::Bsd),
    );
    c.eng = eng;
    c.handshake();
    c.send(TS, ACK | PSH, 1001, 5001, b"GET / HTTP/1.0\r\n\r\n");
    c.send(TC, ACK, 5001, 1019, b"");
    assert_eq!(&c.app[0][..], b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(c.eng.stats.ssn_memcap_drop, refused, "no new refusals");
}
