//! Modbus parse throughput: 400 request/response pairs (read holding registers, write
//! multiple registers, read coils in turn), each direction split in 1460-byte segments,
//! through the registry parser (sawp-modbus decoding, request/response matching).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::modbus::{ModbusConfig, ModbusState};
use shrike_app::registry::AppParser;
use shrike_app::Dir;

fn adu(tid: u16, pdu: &[u8]) -> Vec<u8> {
    let mut v = tid.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&(pdu.len() as u16 + 1).to_be_bytes());
    v.push(1);
    v.extend_from_slice(pdu);
    v
}

fn bench(c: &mut Criterion) {
    let (mut cli, mut srv) = (Vec::new(), Vec::new());
    for i in 0..400u16 {
        let (rq, rs): (&[u8], &[u8]) = match i % 3 {
            0 => (&[0x03, 0, 10, 0, 2], &[0x03, 4, 0, 1, 0, 2]),
            1 => (&[0x10, 0, 30, 0, 2, 4, 0, 5, 0, 6], &[0x10, 0, 30, 0, 2]),
            _ => (&[0x01, 0, 0, 0, 10], &[0x01, 2, 0xff, 0x03]),
        };
        cli.extend(adu(i, rq));
        srv.extend(adu(i, rs));
    }
    let mut g = c.benchmark_group("modbus");
    g.throughput(Throughput::Bytes((cli.len() + srv.len()) as u64));
    g.bench_function("pairs_400", |b| {
        b.iter(|| {
            let mut st = ModbusState::new(ModbusConfig::default());
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
