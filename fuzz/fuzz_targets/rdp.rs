//! The RDP parser through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, split where the input says (each piece one stream segment), with gaps
//! and the close; every transaction's sticky buffers and events are read, and each alert
//! object must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::registry::{AppParser, ParserConfig};
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

fuzz_target!(|data: &[u8]| {
    let proto = &shrike_app::rdp::PROTOCOL;
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&ParserConfig::default(), true);
    for s in steps(data) {
        match s {
            Step::Data(ts, d) => {
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n.into()),
            Step::Close(_) => st.close(),
        }
    }
    let mut live = Vec::new();
    st.live_txs(Dir::ToServer, &mut live);
    st.live_txs(Dir::ToClient, &mut live);
    for tx in live {
        for b in 0..proto.buffers.len() as u16 {
            for d in [Dir::ToServer, Dir::ToClient] {
                let _ = st.buffer_ready(tx, b, d, false);
                st.buffer(tx, b, d, &mut |x| x.len() > usize::MAX - 1);
            }
        }
        for e in 0..proto.events.len() as u16 {
            let _ = st.has_event(tx, e);
        }
        let mut w = JsonWriter::with_capacity(256);
        w.start_object();
        st.alert_members(tx, &mut w);
        w.close();
        let out = w.into_inner();
        assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
    }
});
