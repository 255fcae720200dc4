//! The SSH parser through the registry trait alone (as the engine and the pipeline reach
//! it): both directions, split where the input says, with gaps and the close; every sticky
//! buffer and event is read, and the alert object must be valid JSON.
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
    // HASSH is a process-wide switch (config or a hassh rule): the first byte picks it.
    shrike_app::ssh::HASSH_ENABLED.store(
        data.first().is_some_and(|b| b & 1 == 1),
        std::sync::atomic::Ordering::Relaxed,
    );
    let proto = &shrike_app::ssh::PROTOCOL;
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
    for b in 0..proto.buffers.len() as u16 {
        for d in [Dir::ToServer, Dir::ToClient] {
            let _ = st.buffer_ready(0, b, d, false);
            st.buffer(0, b, d, &mut |x| x.len() > usize::MAX - 1);
        }
    }
    for e in 0..proto.events.len() as u16 {
        let _ = st.has_event(0, e);
    }
    let mut w = JsonWriter::with_capacity(256);
    w.start_object();
    st.alert_members(0, &mut w);
    w.close();
    let out = w.into_inner();
    assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
});
