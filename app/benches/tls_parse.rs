//! TLS ClientHello parse (record layer + hello + JA3/JA4) throughput.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::tls::{TlsConfig, TlsState};
use shrike_app::Dir;

fn client_hello() -> Vec<u8> {
    let f = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/tls_fixtures/ja4-tls.fix"
    ))
    .unwrap();
    let h = f
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .nth(3)
        .unwrap()
        .to_string();
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

fn bench(c: &mut Criterion) {
    let ch = client_hello();
    let mut g = c.benchmark_group("tls");
    g.throughput(Throughput::Bytes(ch.len() as u64));
    for (name, cfg) in [
        ("client_hello_ja3_ja4", TlsConfig::default()),
        (
            "client_hello_plain",
            TlsConfig {
                ja3: false,
                ja4: false,
                ..TlsConfig::default()
            },
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut st = TlsState::new(cfg);
                st.parse(Dir::ToServer, std::hint::black_box(&ch));
                st
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
