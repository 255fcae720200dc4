//! Parse throughput (bytes/s) of a pipelined keep-alive HTTP/1.1 session: 64 requests with
//! typical browser headers sent back to back, then 64 responses (Content-Length and chunked
//! bodies, one gzip-encoded), fed in 1460-byte segments like a reassembled TCP stream.

use std::io::Write;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use shrike_app::http::{HttpBuffer, HttpConfig, HttpState};
use shrike_app::Dir;

fn session() -> (Vec<u8>, Vec<u8>) {
    let mut req = Vec::new();
    let mut resp = Vec::new();
    let body: Vec<u8> = (0..4000u32)
        .map(|i| b"abcdefghij <html> "[(i % 18) as usize])
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&body).unwrap();
    let gz = gz.finish().unwrap();
    for i in 0..64 {
        write!(
            req,
            "GET /static/js/app.{i}.js?v=1.2.3&x=%41%2Fb HTTP/1.1\r\nHost: www.example.com\r\n\
             User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n\
             Accept: */*\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n\
             Referer: https://www.example.com/index.html\r\nCookie: session=abcdef0123456789; theme=dark\r\n\
             Connection: keep-alive\r\n\r\n"
        )
        .unwrap();
        match i % 3 {
            0 => {
                write!(
                    resp,
                    "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/javascript\r\n\
                     Content-Length: {}\r\nConnection: keep-alive\r\n\r\n",
                    body.len()
                )
                .unwrap();
                resp.extend_from_slice(&body);
            }
            1 => {
                resp.extend_from_slice(
                    b"HTTP/1.1 200 OK\r\nServer: nginx\r\nTransfer-Encoding: chunked\r\n\r\n",
                );
                for c in body.chunks(1000) {
                    write!(resp, "{:x}\r\n", c.len()).unwrap();
                    resp.extend_from_slice(c);
                    resp.extend_from_slice(b"\r\n");
                }
                resp.extend_from_slice(b"0\r\n\r\n");
            }
            _ => {
                write!(
                    resp,
                    "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                    gz.len()
                )
                .unwrap();
                resp.extend_from_slice(&gz);
            }
        }
    }
    (req, resp)
}

fn run(cfg: &Arc<HttpConfig>, req: &[u8], resp: &[u8]) -> usize {
    let mut st = HttpState::new(cfg.clone());
    for c in req.chunks(1460) {
        st.parse(Dir::ToServer, c);
    }
    for c in resp.chunks(1460) {
        st.parse(Dir::ToClient, c);
    }
    let mut n = 0;
    for id in 0..st.tx_count() {
        n += st
            .buffer(id, HttpBuffer::Uri, Dir::ToServer)
            .map_or(0, |b| b.len());
    }
    st.free_txs_before(u64::MAX, true);
    n
}

fn bench(c: &mut Criterion) {
    let (req, resp) = session();
    let cfg = Arc::new(HttpConfig::default());
    let mut g = c.benchmark_group("http");
    g.throughput(Throughput::Bytes((req.len() + resp.len()) as u64));
    g.bench_function("pipelined_keepalive_session", |b| {
        b.iter(|| run(&cfg, &req, &resp))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
