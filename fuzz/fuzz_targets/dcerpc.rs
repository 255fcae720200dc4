//! The DCERPC parsers (TCP when the first input byte is even, UDP otherwise) through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, each step one datagram (or stream chunk), with gaps and the close;
//! every sticky buffer and event of every transaction is read, and the alert objects must be
//! valid JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::registry::{AppParser, Detect, ParserConfig};
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
    let proto = &shrike_app::dcerpc::PROTOCOL;
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    let tcp = first % 2 == 0;
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&ParserConfig::default(), tcp);
    for s in steps(data) {
        match s {
            Step::Data(ts, d) => {
                let detect = if tcp { proto.tcp } else { proto.udp };
                if let Detect::Port(f) | Detect::Pattern(f) = detect {
                    let _ = f(dir(ts), d);
                }
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n.into()),
            Step::Close(_) => st.close(),
        }
        for tx in 0..st.tx_count() {
            for b in 0..proto.buffers.len() as u16 {
                for d in [Dir::ToServer, Dir::ToClient] {
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
    }
});
