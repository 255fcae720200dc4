//! DNP3 parse throughput: 500 SELECT requests of a CROB and their responses (the frames of
//! suricata-verify's dnp3-select-operate capture), split in 1460-byte segments, through the
//! registry parser with logging and freeing as the app layer does.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::dnp3::{Dnp3Config, Dnp3State};
use shrike_app::registry::AppParser;
use shrike_app::Dir;

const SELECT: &str = "05641ac40200030040f2c6c7030c0128010001000301640000008fda6400000000005b";
const SELECT_RESP: &str =
    "05641c44030002004b91fcc78100000c0128010001000301640001a400006400000000005b";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

fn bench(c: &mut Criterion) {
    let (req, resp) = (hex(SELECT), hex(SELECT_RESP));
    let cli: Vec<u8> = req.iter().copied().cycle().take(req.len() * 500).collect();
    let srv: Vec<u8> = resp
        .iter()
        .copied()
        .cycle()
        .take(resp.len() * 500)
        .collect();
    let mut g = c.benchmark_group("dnp3");
    g.throughput(Throughput::Bytes((cli.len() + srv.len()) as u64));
    g.bench_function("select_500", |b| {
        b.iter(|| {
            let mut st = Dnp3State::new(Dnp3Config::default());
            for (a, b) in cli.chunks(1460).zip(srv.chunks(1460)) {
                st.parse(Dir::ToServer, std::hint::black_box(a));
                st.parse(Dir::ToClient, std::hint::black_box(b));
            }
            st.tx_count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
