//! The HTTP/1 parser (HttpState): requests and responses interleaved, split where the input
//! says, with gaps and closes; every transaction's inspection buffers are read and its EVE
//! `http` object is written, which must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::http::{
    tx_buffer, write_eve_http, EveHttpOptions, HttpBuffer, HttpConfig, HttpState,
};
use shrike_app::Dir;
use shrike_fuzz::{steps, Step};
use shrike_output::JsonWriter;
use std::sync::Arc;

fn dir(ts: bool) -> Dir {
    if ts {
        Dir::ToServer
    } else {
        Dir::ToClient
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&c, rest)) = data.split_first() else {
        return;
    };
    let mut cfg = HttpConfig::default();
    if c & 1 != 0 {
        cfg.request_body_limit = 64;
        cfg.response_body_limit = 64;
    }
    let mut st = HttpState::new(Arc::new(cfg));
    for s in steps(rest) {
        match s {
            Step::Data(ts, d) => st.parse(dir(ts), d),
            Step::Gap(ts, n) => st.gap(dir(ts), u64::from(n)),
            Step::Close(ts) => st.close(dir(ts)),
        }
    }
    st.close(Dir::ToServer);
    st.close(Dir::ToClient);
    let opts = EveHttpOptions {
        extended: c & 2 != 0,
        request_headers: c & 4 != 0,
        response_headers: c & 8 != 0,
        custom: if c & 16 != 0 { u64::MAX } else { 0 },
    };
    let mut w = JsonWriter::new();
    for tx in st.txs() {
        for &b in HttpBuffer::ALL {
            for d in [Dir::ToServer, Dir::ToClient] {
                let _ = tx_buffer(tx, b, d).map(<[u8]>::len);
            }
        }
        w.clear();
        w.start_object();
        write_eve_http(tx, &opts, &mut w);
        w.close();
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(w.as_bytes()) {
            panic!(
                "invalid EVE http JSON ({e}): {}",
                String::from_utf8_lossy(w.as_bytes())
            );
        }
    }
    let last = st.tx_count();
    st.free_txs_before(last, true);
    let _ = st.memuse();
});
