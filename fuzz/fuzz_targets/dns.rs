//! The DNS parser (DnsState) over UDP (each data step is one datagram) and TCP (a stream
//! split where the input says, with gaps), both directions; every transaction's EVE
//! query and answer objects are written and must be valid JSON. Compression loops and
//! pointer chains must terminate (libFuzzer's timeout catches a hang).
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::dns::eve::{query_count, write_answer, write_query, DnsLogConfig};
use shrike_app::dns::{DnsConfig, DnsState};
use shrike_app::Dir;
use shrike_fuzz::{steps, Step};
use shrike_output::JsonWriter;

fn dir(ts: bool) -> Dir {
    if ts {
        Dir::ToServer
    } else {
        Dir::ToClient
    }
}

fn check(w: &JsonWriter) {
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(w.as_bytes()) {
        panic!(
            "invalid EVE dns JSON ({e}): {}",
            String::from_utf8_lossy(w.as_bytes())
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&c, rest)) = data.split_first() else {
        return;
    };
    let tcp = c & 1 != 0;
    let mut st = DnsState::new(tcp, DnsConfig::default());
    for s in steps(rest) {
        match s {
            Step::Data(ts, d) => {
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n),
            Step::Close(_) => {}
        }
        assert!(
            st.buffered() <= 2 * (65_535 + 2),
            "TCP buffer larger than two messages"
        );
    }
    let cfg = DnsLogConfig::default();
    let mut w = JsonWriter::new();
    for tx in st.txs() {
        for i in 0..query_count(tx) {
            w.clear();
            w.start_object();
            let _ = write_query(&mut w, tx, i, &cfg);
            w.close();
            check(&w);
        }
        w.clear();
        w.start_object();
        let _ = write_answer(&mut w, tx, &cfg, c & 2 == 0);
        w.close();
        check(&w);
        let _ = (tx.query_names().count(), tx.rcode(), tx.opcode());
    }
    let n = st.tx_count();
    st.free_txs_before(n);
});
