//! Test helpers shared by the protocol folders.

use crate::registry::{ParserConfig, Protocol};
use crate::Dir;
use shrike_output::JsonWriter;

/// Feeds `proto`'s parser deterministic pseudo-random data (a small LCG) in both
/// directions, every third round starting with one of `seeds` (the start of a real
/// message), with gaps now and then; then asks every live transaction for each buffer and
/// its alert members. Nothing may panic and the members must be UTF-8 JSON.
pub fn random_input_never_panics(proto: &Protocol, tcp: bool, seeds: &[&[u8]]) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as u32
    };
    for round in 0..300 {
        let mut st = (proto.new_parser)(&ParserConfig::default(), tcp);
        for _ in 0..20 {
            let len = (next() % 300) as usize;
            let mut d: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if round % 3 == 0 && !seeds.is_empty() {
                let seed = seeds[(next() as usize) % seeds.len()];
                d.splice(0..0, seed.iter().copied());
            }
            let dir = if next() % 2 == 0 {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            let _ = st.parse(dir, &d);
            if next() % 50 == 0 {
                st.gap(dir, 10);
            }
        }
        let mut live = Vec::new();
        st.live_txs(Dir::ToServer, &mut live);
        st.live_txs(Dir::ToClient, &mut live);
        for tx in live {
            for b in 0..proto.buffers.len() as u16 {
                for d in [Dir::ToServer, Dir::ToClient] {
                    let _ = st.buffer_ready(tx, b, d, true);
                    st.buffer(tx, b, d, &mut |_| false);
                }
            }
            let mut w = JsonWriter::new();
            w.start_object();
            st.alert_members(tx, &mut w);
            w.close();
            assert!(std::str::from_utf8(w.as_bytes()).is_ok());
        }
    }
}
