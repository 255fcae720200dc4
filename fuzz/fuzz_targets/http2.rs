//! The HTTP/2 parser (frames, HPACK, CONTINUATION reassembly, decompression) through the
//! registry trait alone: both directions split where the input says, with gaps and the
//! close. The client preface is given first half of the time so that frames are reached.
//! Every live transaction's buffers, HTTP/1 buffers and events are read, and the alert
//! object must be valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::http::HttpBuffer;
use shrike_app::http2::{Http2State, MAGIC};
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
    let proto = &shrike_app::http2::PROTOCOL;
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&ParserConfig::default(), true);
    if data.first().is_some_and(|b| b & 1 == 1) {
        let _ = st.parse(Dir::ToServer, MAGIC);
    }
    for s in steps(data) {
        match s {
            Step::Data(ts, d) => {
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n.into()),
            Step::Close(_) => st.close(),
        }
    }
    let mut txs = Vec::new();
    st.live_txs(Dir::ToServer, &mut txs);
    for tx in txs {
        for d in [Dir::ToServer, Dir::ToClient] {
            for b in 0..proto.buffers.len() as u16 {
                let _ = st.buffer_ready(tx, b, d, false);
                st.buffer(tx, b, d, &mut |x| x.len() > usize::MAX - 1);
            }
            if let Some(h2) = st.as_any().downcast_ref::<Http2State>() {
                for &h in HttpBuffer::ALL {
                    let _ = h2.http_ready(tx, h, d, false);
                    h2.http_buffer(tx, h, d, &mut |x| x.len() > usize::MAX - 1);
                }
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
