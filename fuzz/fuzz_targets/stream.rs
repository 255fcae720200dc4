//! TCP reassembly: a sequence of segments built from the fuzz bytes (direction, flags,
//! sequence/ack relative to the two ISNs or absolute, window, options, payload) fed through
//! `StreamEngine::on_packet` with one `TcpSession`, the app layer and raw inspection drained
//! after each packet. At the end the session is released and the engine's memory accounting
//! must return to zero.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_capture::LinkType;
use shrike_app::Dir;
use shrike_packet::decode::{decode, DecodeConfig, DecodeStats};
use shrike_stream::{
    AppChunk, HostOsPolicy, OsPolicy, StreamConfig, StreamEngine, TcpSession,
};
use shrike_fuzz::{ipv4, tcp, Bytes};

const CLI: [u8; 4] = [10, 0, 0, 1];
const SRV: [u8; 4] = [10, 0, 0, 2];

fn drain(eng: &StreamEngine, s: &mut TcpSession, budget: &mut u64) {
    for d in [Dir::ToServer, Dir::ToClient] {
        for _ in 0..64 {
            match s.app_next(d) {
                AppChunk::Data(b) => {
                    let n = b.len();
                    assert!(n > 0, "empty data chunk");
                    *budget += n as u64;
                    s.app_consume(d, n);
                }
                AppChunk::Gap(n) => s.app_consume(d, n as usize),
                AppChunk::None => break,
            }
        }
        let w = eng.raw_window(s, d);
        if w.ready {
            let n = w.data.len();
            s.raw_consume(d, n);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let c0 = b.u8();
    let c1 = b.u8();
    let mut cfg = StreamConfig {
        midstream: c0 & 1 != 0,
        async_oneside: c0 & 2 != 0,
        max_synack_queued: (c0 >> 2) & 7,
        ..StreamConfig::default()
    };
    cfg.reassembly.check_overlap_different_data = c0 & 0x20 != 0;
    if c0 & 0x40 != 0 {
        // Small caps so the memcap paths are reached.
        cfg.memcap = u64::from(c1) * 64;
        cfg.reassembly.memcap = u64::from(b.u16()) * 4;
    }
    cfg.reassembly.depth = [0, 1, 100, 4096, 1 << 20][usize::from(c1 % 5)];
    cfg.reassembly.toserver_chunk_size = u64::from(b.u8()) * 16 + 1;
    cfg.reassembly.toclient_chunk_size = u64::from(b.u8()) * 16 + 1;
    let policy = OsPolicy::ALL[usize::from(b.u8()) % OsPolicy::ALL.len()];
    let mut eng = StreamEngine::new(cfg, HostOsPolicy::new(policy));
    let mut s = TcpSession::new();
    let isn = [b.u32(), b.u32()];
    let dcfg = DecodeConfig::default();
    let mut dstats = DecodeStats::default();
    let mut ts = 1_000u32;
    let mut delivered = 0u64;
    let mut n = 0;
    while !b.is_empty() && n < 400 {
        n += 1;
        let op = b.u8();
        let dir = if op & 1 == 0 {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let i = usize::from(op & 1);
        let flags = b.u8();
        // Sequence numbers mostly near the ISNs so segments land in the window.
        let (seq, ack) = if op & 2 == 0 {
            (
                isn[i].wrapping_add(u32::from(b.u16())),
                isn[1 - i].wrapping_add(u32::from(b.u16())),
            )
        } else {
            (b.u32(), b.u32())
        };
        let win = if op & 4 == 0 { 65_535 } else { b.u16() };
        let opts: &[u8] = if op & 8 != 0 {
            let l = usize::from(b.u8() % 41);
            b.take(l)
        } else {
            &[]
        };
        let plen = match op >> 6 {
            0 => 0,
            1 => usize::from(b.u8() % 16),
            2 => usize::from(b.u8()),
            _ => usize::from(b.u16() % 3000),
        };
        let payload = b.take(plen);
        if op & 0x10 != 0 {
            ts = ts.wrapping_add(u32::from(b.u8()));
        }
        let (src, dst, sp, dp) = match dir {
            Dir::ToServer => (CLI, SRV, 40000, 80),
            Dir::ToClient => (SRV, CLI, 80, 40000),
        };
        let pkt = ipv4(
            src,
            dst,
            n as u16,
            0x4000,
            6,
            &tcp(sp, dp, seq, ack, flags, win, opts, payload),
        );
        let meta = decode(LinkType::Raw, &pkt, &dcfg, &mut dstats);
        if eng.is_session_reuse(Some(&s), &meta, dir) {
            eng.flow_end(&mut s);
            drain(&eng, &mut s, &mut delivered);
            eng.release(&mut s);
        }
        let _ = eng.on_packet(&mut s, &meta, &pkt, dir, ts);
        if op & 0x20 == 0 {
            drain(&eng, &mut s, &mut delivered);
        }
        eng.prune(&mut s);
    }
    eng.flow_end(&mut s);
    for _ in 0..8 {
        drain(&eng, &mut s, &mut delivered);
    }
    eng.release(&mut s);
    let st = &eng.stats;
    assert_eq!(st.active_sessions, 0, "session count leaks");
    assert_eq!(st.memuse, 0, "session memory accounting leaks");
    assert_eq!(
        st.reassembly_memuse, 0,
        "reassembly memory accounting leaks"
    );
});
