//! SIP message, RFB handshake and TFTP request parse throughput, through the registry trait
//! as the engine drives them.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::registry::{AppParser, ParserConfig, Protocol};
use shrike_app::Dir;

const INVITE: &[u8] = b"INVITE sip:97239287044@voip.brujula.net SIP/2.0\r\n\
Via: SIP/2.0/UDP 192.168.1.2;branch=z9hG4bKnp149505178-438c528b192.168.1.2;rport\r\n\
From: <sip:arik@voip.brujula.net>;tag=6433ef9\r\n\
To: <sip:97239287044@voip.brujula.net>\r\n\
Call-ID: 14ab4b25-1b2ede6b@192.168.1.2\r\n\
CSeq: 1 INVITE\r\n\
Contact: <sip:arik@192.168.1.2:5060>\r\n\
Max-Forwards: 70\r\n\
User-Agent: Nero SIPPS IP Phone Version 2.0.51.16\r\n\
Content-Type: application/sdp\r\n\
Content-Length: 0\r\n\
\r\n";

fn rfb_handshake() -> Vec<(Dir, Vec<u8>)> {
    let mut init = vec![
        0x05, 0x00, 0x03, 0x20, 0x20, 0x18, 0x00, 0x01, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0x10,
        0x08, 0x00, 0x00, 0x00, 0x00,
    ];
    let name = b"root's X desktop (host:1)";
    init.extend((name.len() as u32).to_be_bytes());
    init.extend(name);
    vec![
        (Dir::ToClient, b"RFB 003.008\n".to_vec()),
        (Dir::ToServer, b"RFB 003.008\n".to_vec()),
        (Dir::ToClient, vec![1, 2]),
        (Dir::ToServer, vec![2]),
        (Dir::ToClient, vec![0xaa; 16]),
        (Dir::ToServer, vec![0xbb; 16]),
        (Dir::ToClient, vec![0, 0, 0, 0]),
        (Dir::ToServer, vec![1]),
        (Dir::ToClient, init),
    ]
}

fn run(p: &Protocol, tcp: bool, msgs: &[(Dir, Vec<u8>)]) -> Box<dyn AppParser> {
    let mut st = (p.new_parser)(&ParserConfig::default(), tcp);
    for (d, m) in msgs {
        st.parse(*d, std::hint::black_box(m));
    }
    st
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("remote");
    let sip = vec![(Dir::ToServer, INVITE.to_vec())];
    g.throughput(Throughput::Bytes(INVITE.len() as u64));
    g.bench_function("sip_invite", |b| {
        b.iter(|| run(&shrike_app::sip::PROTOCOL, false, &sip))
    });
    let rfb = rfb_handshake();
    g.throughput(Throughput::Bytes(
        rfb.iter().map(|m| m.1.len() as u64).sum(),
    ));
    g.bench_function("rfb_handshake", |b| {
        b.iter(|| run(&shrike_app::rfb::PROTOCOL, true, &rfb))
    });
    let tftp = vec![(Dir::ToServer, b"\x00\x01rfc1350.txt\x00octet\x00".to_vec())];
    g.throughput(Throughput::Bytes(tftp[0].1.len() as u64));
    g.bench_function("tftp_request", |b| {
        b.iter(|| run(&shrike_app::tftp::PROTOCOL, false, &tftp))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
