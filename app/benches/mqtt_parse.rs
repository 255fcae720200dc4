//! MQTT parse throughput: a 3.1.1 session (CONNECT, then PUBLISH QoS 0 and QoS 1 with their
//! PUBACKs), pipelined and split in 1460-byte segments, through the registry parser.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::mqtt::{MqttConfig, MqttState};
use shrike_app::registry::AppParser;
use shrike_app::Dir;

fn msg(first: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![first];
    let mut n = body.len();
    loop {
        let mut b = (n % 128) as u8;
        n /= 128;
        if n > 0 {
            b |= 128;
        }
        v.push(b);
        if n == 0 {
            break;
        }
    }
    v.extend_from_slice(body);
    v
}

fn s(v: &[u8]) -> Vec<u8> {
    let mut o = (v.len() as u16).to_be_bytes().to_vec();
    o.extend_from_slice(v);
    o
}

fn session() -> (Vec<u8>, Vec<u8>) {
    let mut c = s(b"MQTT");
    c.extend([4, 0xc2, 0, 60]);
    c.extend(s(b"bench-client"));
    c.extend(s(b"user"));
    c.extend(s(b"password"));
    let mut cli = msg(0x10, &c);
    let mut srv = msg(0x20, &[0, 0]);
    for i in 0..200u16 {
        let mut p = s(b"sensors/building-7/floor-3/temperature");
        if i % 2 == 1 {
            p.extend(i.to_be_bytes());
        }
        p.extend(std::iter::repeat_n(b'x', 100));
        cli.extend(msg(if i % 2 == 1 { 0x32 } else { 0x30 }, &p));
        if i % 2 == 1 {
            srv.extend(msg(0x40, &i.to_be_bytes()));
        }
    }
    (cli, srv)
}

fn bench(c: &mut Criterion) {
    let (cli, srv) = session();
    let mut g = c.benchmark_group("mqtt");
    g.throughput(Throughput::Bytes((cli.len() + srv.len()) as u64));
    g.bench_function("session_200_publish", |b| {
        b.iter(|| {
            let mut st = MqttState::new(MqttConfig::default());
            for seg in cli.chunks(1460) {
                st.parse(Dir::ToServer, std::hint::black_box(seg));
            }
            for seg in srv.chunks(1460) {
                st.parse(Dir::ToClient, std::hint::black_box(seg));
            }
            st
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
