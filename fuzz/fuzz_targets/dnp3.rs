//! The DNP3 parser through the registry trait alone: both directions, split where the input
//! says, with gaps and the close; every transaction through the keywords, the `dnp3_data`
//! buffer and the alert object.
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
    let proto = &shrike_app::dnp3::PROTOCOL;
    let mut cfg = ParserConfig::default();
    cfg.dnp3.max_points = 64;
    cfg.dnp3.max_tx = 8;
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&cfg, true);
    let _ = shrike_app::dnp3::probe(Dir::ToServer, data);
    let _ = shrike_app::dnp3::probe(Dir::ToClient, data);
    let kws: Vec<Box<dyn TxMatch>> = [(0, "read"), (2, "0x8000"), (4, "12,1"), (4, "60,1")]
        .iter()
        .filter_map(|(i, v)| (proto.keywords[*i].setup)(Some(v)).ok())
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
        for d in [Dir::ToServer, Dir::ToClient] {
            for k in &kws {
                let _ = k.matches(&*st, tx, d);
            }
            let _ = st.buffer(tx, 0, d, &mut |b| b.is_empty());
        }
        let mut w = JsonWriter::new();
        w.start_object();
        let _ = st.alert_members(tx, &mut w);
        w.close();
    }
});
