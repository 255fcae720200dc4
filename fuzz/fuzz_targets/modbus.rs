//! The Modbus parser through the registry trait alone: both directions, split where the input
//! says, with gaps and the close; every transaction through the `modbus` keyword forms, the
//! alert object and the events; the keyword parser on the input as text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::registry::{AppParser, ParserConfig, TxMatch};
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
    let proto = &shrike_app::modbus::PROTOCOL;
    let mut cfg = ParserConfig::default();
    cfg.modbus.request_flood = 8;
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&cfg, true);
    let _ = shrike_app::modbus::probe(Dir::ToServer, data);
    let _ = shrike_app::modbus::probe(Dir::ToClient, data);
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = (proto.keywords[0].setup)(Some(s));
    }
    let kws: Vec<Box<dyn TxMatch>> = [
        "function 8, subfunction 4",
        "function !assigned",
        "unit <5, access read coils, address 0<>100",
        "access write holding, address 65535, value >1",
        "access write coils, address 9, value 1",
    ]
    .iter()
    .filter_map(|v| (proto.keywords[0].setup)(Some(v)).ok())
    .collect();
    for s in steps(data) {
        match s {
            Step::Data(ts, d) => {
                let _ = st.parse(dir(ts), d);
            }
            Step::Gap(ts, n) => st.gap(dir(ts), n.into()),
            Step::Close(_) => st.close(),
        }
    }
    for tx in 0..st.tx_count() {
        for k in &kws {
            let _ = k.matches(&*st, tx, Dir::ToServer);
        }
        for ev in 0..proto.events.len() as u16 {
            let _ = st.has_event(tx, ev);
        }
        let mut w = JsonWriter::new();
        w.start_object();
        let _ = st.alert_members(tx, &mut w);
        w.close();
    }
});
