//! SMTP session parse with MIME decoding (a multipart message with a base64 attachment and
//! a text part with URLs) and an FTP control session: throughput through the registry.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::registry::{AppParser, ParserConfig};
use shrike_app::Dir;

fn smtp_session() -> Vec<(Dir, Vec<u8>)> {
    let mut body = b"From: a <a@example.com>\r\nTo: b@example.com, c@example.com\r\n\
Subject: report\r\nContent-Type: multipart/mixed; boundary=\"XYZ\"\r\n\r\n--XYZ\r\n\
Content-Type: text/plain\r\n\r\n"
        .to_vec();
    for i in 0..200 {
        body.extend_from_slice(
            format!("line {i} see http://example.com/page{i}.html for more details\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        b"--XYZ\r\nContent-Type: application/octet-stream; name=\"data.bin\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\n",
    );
    for _ in 0..1000 {
        body.extend_from_slice(
            b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2\r\n",
        );
    }
    body.extend_from_slice(b"--XYZ--\r\n.\r\n");
    vec![
        (Dir::ToClient, b"220 mx ESMTP\r\n".to_vec()),
        (Dir::ToServer, b"EHLO client\r\n".to_vec()),
        (Dir::ToClient, b"250-mx\r\n250 PIPELINING\r\n".to_vec()),
        (
            Dir::ToServer,
            b"MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n".to_vec(),
        ),
        (Dir::ToClient, b"250 ok\r\n250 ok\r\n354 go\r\n".to_vec()),
        (Dir::ToServer, body),
        (Dir::ToClient, b"250 queued\r\n".to_vec()),
    ]
}

fn ftp_session() -> Vec<(Dir, Vec<u8>)> {
    let mut v = vec![(Dir::ToClient, b"220 (vsFTPd)\r\n".to_vec())];
    for i in 0..200 {
        v.push((Dir::ToServer, format!("CWD dir{i}\r\n").into_bytes()));
        v.push((
            Dir::ToClient,
            b"250 Directory successfully changed.\r\n".to_vec(),
        ));
    }
    v
}

fn run(proto: &shrike_app::registry::Protocol, steps: &[(Dir, Vec<u8>)]) -> Box<dyn AppParser> {
    let mut st = (proto.new_parser)(&ParserConfig::default(), true);
    for (d, data) in steps {
        for seg in data.chunks(1460) {
            st.parse(*d, std::hint::black_box(seg));
        }
    }
    st
}

fn bench(c: &mut Criterion) {
    for (name, proto, steps) in [
        (
            "smtp_mime_session",
            &shrike_app::smtp::PROTOCOL,
            smtp_session(),
        ),
        (
            "ftp_control_session",
            &shrike_app::ftp::PROTOCOL,
            ftp_session(),
        ),
    ] {
        let bytes: usize = steps.iter().map(|s| s.1.len()).sum();
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function("parse", |b| b.iter(|| run(proto, &steps)));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
