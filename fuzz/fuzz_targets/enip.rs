//! The ENIP parser through the registry trait alone: both directions, split where the input
//! says, with gaps and the close; every transaction through both keywords.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_app::registry::{AppParser, ParserConfig};
use shrike_app::Dir;
use shrike_fuzz::{steps, Step};

fn dir(ts: bool) -> Dir {
    if ts {
        Dir::ToServer
    } else {
        Dir::ToClient
    }
}

fuzz_target!(|data: &[u8]| {
    let proto = &shrike_app::enip::PROTOCOL;
    let cfg = ParserConfig::default();
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&cfg, data.len() % 2 == 0);
    let _ = shrike_app::enip::probe(Dir::ToServer, data);
    let kws: Vec<_> = ["1", "10", "14,1", "3,4,!5", "14,1,5"]
        .iter()
        .filter_map(|v| (proto.keywords[1].setup)(Some(v)).ok())
        .chain((proto.keywords[0].setup)(Some("112")).ok())
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
    }
});
