//! DNS message decode and UDP state parse throughput.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::dns::{DnsConfig, DnsMessage, DnsState};
use shrike_app::Dir;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn fixture(dir: &str) -> Vec<u8> {
    let f = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/dns_fixtures/a-aaaa-mx.fix"
    ))
    .unwrap();
    let line = f
        .lines()
        .find(|l| l.split(' ').nth(2) == Some(dir))
        .unwrap();
    hex(line.split(' ').nth(3).unwrap())
}

fn bench(c: &mut Criterion) {
    let resp = fixture("C");
    let req = fixture("S");
    let mut g = c.benchmark_group("dns");
    g.throughput(Throughput::Elements(1));
    let mut m = DnsMessage::default();
    g.bench_function("decode_response", |b| {
        b.iter(|| m.decode(std::hint::black_box(&resp), 1 << 20))
    });
    g.bench_function("state_request_response", |b| {
        let mut st = DnsState::new(false, DnsConfig::default());
        b.iter(|| {
            st.parse(Dir::ToServer, &req);
            st.parse(Dir::ToClient, &resp);
            let n = st.tx_count();
            st.free_txs_before(n);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
