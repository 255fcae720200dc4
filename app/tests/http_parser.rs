//! Behaviour tests of the HTTP/1.x parser: sticky buffers, pipelining, bodies and limits,
//! decompression bombs, gaps, tunnels, transaction lifetime, EVE options, and property
//! tests (segmentation never matters; random input never panics).

use std::io::Write;
use std::sync::Arc;

use proptest::prelude::*;
use shrike_app::http::{
    probe, EveHttpOptions, EveJson, HttpBuffer, HttpConfig, HttpEvent, HttpState, ProbeResult,
    Progress,
};
use shrike_app::Dir;

fn state() -> HttpState {
    HttpState::new(Arc::new(HttpConfig::default()))
}

fn with(cfg: HttpConfig) -> HttpState {
    HttpState::new(Arc::new(cfg))
}

fn feed(st: &mut HttpState, req: &[u8], resp: &[u8]) {
    st.parse(Dir::ToServer, req);
    st.parse(Dir::ToClient, resp);
}

fn buf(st: &HttpState, id: u64, b: HttpBuffer, d: Dir) -> Option<String> {
    st.buffer(id, b, d)
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

const REQ: &[u8] = b"POST /a/./b/../c%2Fd?x=%41+1 HTTP/1.1\r\nHost: Example.com\r\n\
User-Agent: ua/1\r\nCookie: c=1\r\nAccept: text/html\r\nAccept-Encoding: gzip\r\n\
Accept-Language: en\r\nReferer: http://r/\r\nConnection: keep-alive\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2";

const RESP: &[u8] = b"HTTP/1.1 302 Found\r\nServer: nginx\r\nLocation: /new\r\n\
Set-Cookie: s=2\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello";

#[test]
fn sticky_buffers_table() {
    let mut st = state();
    feed(&mut st, REQ, RESP);
    use Dir::{ToClient as C, ToServer as S};
    use HttpBuffer::*;
    let table: &[(HttpBuffer, Dir, Option<&str>)] = &[
        (Uri, S, Some("/a/c/d?x=A+1")),
        (UriRaw, S, Some("/a/./b/../c%2Fd?x=%41+1")),
        (Method, S, Some("POST")),
        (Protocol, S, Some("HTTP/1.1")),
        (Protocol, C, Some("HTTP/1.1")),
        (
            RequestLine,
            S,
            Some("POST /a/./b/../c%2Fd?x=%41+1 HTTP/1.1"),
        ),
        (ResponseLine, C, Some("HTTP/1.1 302 Found")),
        (Host, S, Some("example.com")),
        (HostRaw, S, Some("Example.com")),
        (UserAgent, S, Some("ua/1")),
        (Cookie, S, Some("c=1")),
        (Cookie, C, Some("s=2")),
        (StatCode, C, Some("302")),
        (StatMsg, C, Some("Found")),
        (ContentType, S, Some("application/x-www-form-urlencoded")),
        (ContentType, C, Some("text/html")),
        (ContentLen, S, Some("7")),
        (ContentLen, C, Some("5")),
        (Server, C, Some("nginx")),
        (Location, C, Some("/new")),
        (Referer, S, Some("http://r/")),
        (Accept, S, Some("text/html")),
        (AcceptEnc, S, Some("gzip")),
        (AcceptLang, S, Some("en")),
        (Connection, S, Some("keep-alive")),
        (RequestBody, S, Some("a=1&b=2")),
        (ResponseBody, C, Some("hello")),
        (FileData, C, Some("hello")),
        // A POST body that is not a multipart form is a file in Suricata 7
        // (`HtpRequestBodyHandlePOSTorPUT`), so `file.data` sees it.
        (FileData, S, Some("a=1&b=2")),
        // One-sided buffers do not exist in the other direction.
        (Uri, C, None),
        (StatCode, S, None),
        (Server, S, None),
        (UserAgent, C, None),
    ];
    for (b, d, want) in table {
        assert_eq!(buf(&st, 0, *b, *d).as_deref(), *want, "{b:?} {d:?}");
    }
}

#[test]
fn composite_header_buffers() {
    let mut st = state();
    feed(
        &mut st,
        b"GET / HTTP/1.1\r\nHost: h\r\nCookie: c=1\r\nX-A:  v  \r\n\r\n",
        b"HTTP/1.0 200 OK\r\nSet-Cookie: s\r\nContent-Length: 0\r\n\r\n",
    );
    let h = |b, d| buf(&st, 0, b, d).unwrap();
    // http.header: normalised values, Cookie / Set-Cookie left out, no final CRLF.
    assert_eq!(
        h(HttpBuffer::Header, Dir::ToServer),
        "Host: h\r\nX-A: v\r\n"
    );
    assert_eq!(
        h(HttpBuffer::Header, Dir::ToClient),
        "Content-Length: 0\r\n"
    );
    // http.header.raw: as sent, final empty line included.
    assert_eq!(
        h(HttpBuffer::HeaderRaw, Dir::ToServer),
        "Host: h\r\nCookie: c=1\r\nX-A:  v  \r\n\r\n"
    );
    // http.start: start line, all headers (cookies included), final CRLF.
    assert_eq!(
        h(HttpBuffer::Start, Dir::ToServer),
        "GET / HTTP/1.1\r\nHost: h\r\nCookie: c=1\r\nX-A: v\r\n\r\n"
    );
    assert_eq!(
        h(HttpBuffer::Start, Dir::ToClient),
        "HTTP/1.0 200 OK\r\nSet-Cookie: s\r\nContent-Length: 0\r\n\r\n"
    );
    // http.header_names: CRLF, each name and CRLF, extra CRLF.
    assert_eq!(
        h(HttpBuffer::HeaderNames, Dir::ToServer),
        "\r\nHost\r\nCookie\r\nX-A\r\n\r\n"
    );
    // http.request_header: one "Name: Value" per header.
    let mut items = Vec::new();
    st.for_each_buffer(0, HttpBuffer::RequestHeader, Dir::ToServer, &mut |b| {
        items.push(String::from_utf8_lossy(b).into_owned());
        false
    });
    assert_eq!(items, ["Host: h", "Cookie: c=1", "X-A: v"]);
    let mut n = 0;
    let stopped = st.for_each_buffer(0, HttpBuffer::ResponseHeader, Dir::ToClient, &mut |b| {
        n += 1;
        b.starts_with(b"Content-Length")
    });
    assert!(stopped);
    assert_eq!(n, 2);
}

#[test]
fn header_buffers_wait_for_complete_headers() {
    let mut st = state();
    st.parse(Dir::ToServer, b"GET /x HTTP/1.1\r\nHost: h\r\n");
    assert_eq!(
        buf(&st, 0, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/x")
    );
    assert_eq!(buf(&st, 0, HttpBuffer::Header, Dir::ToServer), None);
    assert_eq!(st.tx(0).unwrap().request_progress(), Progress::Headers);
    st.parse(Dir::ToServer, b"A: b\r\n\r\n");
    assert_eq!(
        buf(&st, 0, HttpBuffer::Header, Dir::ToServer).as_deref(),
        Some("Host: h\r\nA: b\r\n")
    );
    assert_eq!(st.tx(0).unwrap().request_progress(), Progress::Complete);
}

#[test]
fn duplicate_and_folded_headers() {
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"GET / HTTP/1.1\r\nUser-Agent: a\r\nuser-agent: b\r\nX: 1\r\n  2\r\nHost: h\r\n\r\n",
    );
    assert_eq!(
        buf(&st, 0, HttpBuffer::UserAgent, Dir::ToServer).as_deref(),
        Some("a, b")
    );
    assert_eq!(
        st.tx(0).unwrap().request_headers().get(b"x"),
        Some(&b"1  2"[..])
    );
}

#[test]
fn pipelined_requests_pair_in_order() {
    let mut st = state();
    let mut req = Vec::new();
    for i in 0..5 {
        write!(req, "GET /{i} HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
    }
    st.parse(Dir::ToServer, &req);
    assert_eq!(st.tx_count(), 5);
    for i in 0..5u64 {
        let tx = st.tx(i).unwrap();
        assert_eq!(tx.request_progress(), Progress::Complete);
        assert_eq!(tx.response_progress(), Progress::NotStarted);
    }
    for i in 0..5 {
        let body = format!("r{i}");
        let r = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        st.parse(Dir::ToClient, r.as_bytes());
    }
    for i in 0..5u64 {
        assert_eq!(
            buf(&st, i, HttpBuffer::Uri, Dir::ToServer),
            Some(format!("/{i}"))
        );
        assert_eq!(
            buf(&st, i, HttpBuffer::ResponseBody, Dir::ToClient),
            Some(format!("r{i}"))
        );
        assert!(st.tx(i).unwrap().is_complete());
    }
}

#[test]
fn chunked_bodies_extensions_and_trailers() {
    let mut st = state();
    feed(
        &mut st,
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;e=1\r\nabcd\r\n2\r\nef\r\n0\r\nX-T: 1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n",
    );
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.request_body().data(), b"abcdef");
    assert!(tx.events().contains(HttpEvent::RequestChunkExtension));
    assert_eq!(tx.request_headers().get(b"x-t"), Some(&b"1"[..]));
    assert_eq!(tx.response_body().data(), b"xyz");
    assert!(tx.is_complete());
}

#[test]
fn head_304_204_and_until_close() {
    let mut st = state();
    feed(
        &mut st,
        b"HEAD / HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 304 NM\r\n\r\nHTTP/1.0 200 OK\r\n\r\nrest of stream",
    );
    assert!(st.tx(0).unwrap().is_complete());
    assert_eq!(st.tx(0).unwrap().response_body().data(), b"");
    assert!(st.tx(1).unwrap().is_complete());
    let t2 = st.tx(2).unwrap();
    assert_eq!(t2.response_progress(), Progress::Body);
    st.close(Dir::ToClient);
    let t2 = st.tx(2).unwrap();
    assert_eq!(t2.response_progress(), Progress::Complete);
    assert_eq!(t2.response_body().data(), b"rest of stream");
}

#[test]
fn continue_100_then_final_response() {
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
    );
    st.parse(Dir::ToClient, b"HTTP/1.1 100 Continue\r\n\r\n");
    st.parse(Dir::ToServer, b"abc");
    st.parse(
        Dir::ToClient,
        b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
    );
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.status(), Some(&b"201"[..]));
    assert_eq!(
        buf(&st, 0, HttpBuffer::FileData, Dir::ToServer).as_deref(),
        Some("abc")
    );
    assert!(tx.is_complete());
    assert_eq!(st.tx_count(), 1);
}

#[test]
fn http09_request_and_response() {
    let mut st = state();
    feed(&mut st, b"GET /old\r\n", b"<html>raw</html>");
    st.close(Dir::ToClient);
    let tx = st.tx(0).unwrap();
    assert!(tx.is_http09());
    assert_eq!(buf(&st, 0, HttpBuffer::Protocol, Dir::ToServer), None);
    assert_eq!(tx.response_body().data(), b"<html>raw</html>");
    assert!(tx.is_complete());
}

#[test]
fn connect_tunnel_ignores_payload() {
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
    );
    st.parse(Dir::ToClient, b"HTTP/1.1 200 OK\r\n\r\n");
    st.parse(
        Dir::ToServer,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    );
    st.parse(Dir::ToClient, b"\x16\x03\x03\x00\x5a\x02");
    assert!(st.is_tunnel());
    assert_eq!(st.tx_count(), 1);
    // CONNECT has no path: the normalised URI is empty, as in Suricata.
    assert_eq!(
        buf(&st, 0, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("")
    );
    assert_eq!(
        buf(&st, 0, HttpBuffer::UriRaw, Dir::ToServer).as_deref(),
        Some("h:443")
    );
    assert_eq!(
        buf(&st, 0, HttpBuffer::Host, Dir::ToServer).as_deref(),
        Some("h")
    );
    // A refused CONNECT keeps parsing HTTP.
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n",
    );
    assert_eq!(st.tx_count(), 1);
    st.parse(
        Dir::ToClient,
        b"HTTP/1.1 403 No\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(st.tx_count(), 2);
    assert_eq!(
        buf(&st, 1, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/next")
    );
    assert!(!st.is_tunnel());
}

#[test]
fn body_limits_cut_and_count() {
    let cfg = HttpConfig {
        request_body_limit: 1000,
        response_body_limit: 10,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    let body = vec![b'x'; 5000];
    let mut req = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n".to_vec();
    req.extend_from_slice(&body);
    feed(
        &mut st,
        &req,
        b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n01234567890123456789",
    );
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.request_body().data().len(), 1000);
    assert_eq!(tx.request_body().total_len(), 5000);
    assert!(tx.request_body().is_truncated());
    assert_eq!(tx.response_body().data(), b"0123456789");
    assert_eq!(st.stats().body_truncated, 2);
    assert!(tx.is_complete());
}

#[test]
fn gzip_response_decoded() {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b"secret payload inside gzip").unwrap();
    let gz = e.finish().unwrap();
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        gz.len()
    )
    .into_bytes();
    resp.extend_from_slice(&gz);
    for step in [1usize, 7, resp.len()] {
        let mut st = state();
        st.parse(Dir::ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        for c in resp.chunks(step) {
            st.parse(Dir::ToClient, c);
        }
        assert_eq!(
            buf(&st, 0, HttpBuffer::FileData, Dir::ToClient).as_deref(),
            Some("secret payload inside gzip")
        );
        assert_eq!(st.tx(0).unwrap().response_message_len(), gz.len() as u64);
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gzip_response(st: &mut HttpState, encoding: &str, body: &[u8]) {
    st.parse(Dir::ToServer, b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    let hdr = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    st.parse(Dir::ToClient, hdr.as_bytes());
    st.parse(Dir::ToClient, body);
}

#[test]
fn gzip_bomb_is_bounded() {
    let zeros = vec![0u8; 64 << 20];
    // One gzip layer: ratio ~1000:1, below libhtp's 2048:1 bomb ratio. No event, but work
    // stops once the body is full and 4x the bomb limit (1 MiB) is decoded.
    let single = gzip(&zeros);
    let mut st = state();
    let t = std::time::Instant::now();
    gzip_response(&mut st, "gzip", &single);
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.response_body().data().len(), 100 * 1024);
    assert!(tx.response_body().total_len() <= 4 * 1024 * 1024 + 16 * 1024);
    assert!(!tx.events().contains(HttpEvent::CompressionBomb));
    assert!(tx.is_complete());
    assert!(t.elapsed().as_secs() < 5);
    // Two layers reach a far higher ratio: flagged as a bomb, counted, decoding stopped.
    let double = gzip(&single);
    assert!(double.len() * 2048 < 2 * 1024 * 1024);
    let mut st = state();
    gzip_response(&mut st, "gzip, gzip", &double);
    let tx = st.tx(0).unwrap();
    assert!(
        tx.events().contains(HttpEvent::CompressionBomb),
        "{:?}",
        tx.events()
    );
    assert_eq!(st.stats().compression_bombs, 1);
    assert!(tx.response_body().total_len() <= 2 * 1024 * 1024 + 16 * 1024);
    assert_eq!(tx.response_body().data().len(), 100 * 1024);
}

#[test]
fn a_body_that_is_all_gap_still_has_its_file() {
    // Suricata opens the file with the gap (`FileOpenFile` without data): its size counts
    // the missing bytes, it has gaps and ends TRUNCATED; the next transaction is parsed.
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
    );
    st.parse(
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n",
    );
    st.gap(Dir::ToClient, 12);
    st.parse(
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
    );
    let f = st.tx(0).unwrap().response_body().file().unwrap();
    assert_eq!(f.name(), b"/1");
    assert_eq!(f.size(), 12);
    assert!(f.has_gaps());
    assert_eq!(f.state(), shrike_app::files::FileState::Truncated);
    let f = st.tx(1).unwrap().response_body().file().unwrap();
    assert_eq!((f.size(), f.has_gaps()), (3, false));
    assert_eq!(f.state(), shrike_app::files::FileState::Closed);
}

#[test]
fn a_request_body_cut_by_the_close_ends_its_files_truncated() {
    // libhtp leaves a request whose body did not arrive whole incomplete, and Suricata ends
    // its open files TRUNCATED at the end of the stream (zeek `http_putty-upload.pcap`:
    // `putty.exe` TRUNCATED, 81758 bytes); a body that arrived whole closes them.
    for (body, cl, want) in [
        (&b"--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"p.exe\"\r\n\r\nMZ01"[..], 200, shrike_app::files::FileState::Truncated),
        (&b"--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"p.exe\"\r\n\r\nMZ01\r\n--B--\r\n"[..], 0, shrike_app::files::FileState::Closed),
    ] {
        let cl = if cl == 0 { body.len() } else { cl };
        let mut st = state();
        let head = format!(
            "POST /up HTTP/1.1\r\nHost: h\r\nContent-Type: multipart/form-data; boundary=B\r\n\
             Content-Length: {cl}\r\n\r\n"
        );
        st.parse(Dir::ToServer, head.as_bytes());
        st.parse(Dir::ToServer, body);
        st.close(Dir::ToServer);
        st.close(Dir::ToClient);
        let tx = st.tx(0).unwrap();
        let f = tx.request_body().file().unwrap();
        assert_eq!(f.name(), b"p.exe");
        assert_eq!(f.state(), want, "content-length {cl}");
    }
}

#[test]
fn gaps_in_bodies_are_skipped() {
    let mut st = state();
    st.parse(
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc",
    );
    st.gap(Dir::ToServer, 5);
    st.parse(Dir::ToServer, b"ijGET /after HTTP/1.1\r\nHost: h\r\n\r\n");
    let tx = st.tx(0).unwrap();
    assert!(tx.request_body().had_gap());
    assert_eq!(tx.request_body().data(), b"abcij");
    assert_eq!(
        buf(&st, 1, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/after")
    );
    // A gap inside headers is skipped as libhtp skips it ("Gaps are not allowed during this
    // state", counted): parsing goes on in the same state with the data after it, so the
    // partial line continues with it and the next request is parsed.
    let mut st = state();
    st.parse(Dir::ToServer, b"GET / HTTP/1.1\r\nHo");
    st.gap(Dir::ToServer, 100);
    st.parse(Dir::ToServer, b"st: h\r\n\r\nGET /x HTTP/1.1\r\n\r\n");
    assert!(!st.is_error(Dir::ToServer));
    assert_eq!(st.stats().gap_errors, 1);
    assert_eq!(st.tx_count(), 2);
    assert_eq!(
        buf(&st, 1, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/x")
    );
}

#[test]
fn oversized_and_too_many_headers() {
    let mut st = state();
    let mut req = b"GET / HTTP/1.1\r\nX-Big: ".to_vec();
    req.extend(std::iter::repeat_n(b'a', 20_000));
    req.extend_from_slice(b"\r\n\r\n");
    st.parse(Dir::ToServer, &req);
    assert!(st
        .tx(0)
        .unwrap()
        .events()
        .contains(HttpEvent::RequestFieldTooLong));
    assert!(st.is_error(Dir::ToServer));
    assert_eq!(st.stats().field_too_long, 1);
    assert!(st.memuse() < 64 * 1024);

    let cfg = HttpConfig {
        headers_limit: 10,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    let mut req = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..20 {
        write!(req, "H{i}: v\r\n").unwrap();
    }
    req.extend_from_slice(b"\r\n");
    st.parse(Dir::ToServer, &req);
    let tx = st.tx(0).unwrap();
    assert!(tx.events().contains(HttpEvent::RequestTooManyHeaders));
    assert_eq!(tx.request_headers().len(), 10);
}

/// A freed transaction is kept for reuse without the buffers of a large body: a flow that
/// downloaded a big file does not hold its body memory until the flow ends, and the reused
/// transaction still parses correctly.
#[test]
fn pooled_transactions_release_large_buffers() {
    let mut st = state();
    let body = vec![b'x'; 60_000];
    let mut resp =
        format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    resp.extend_from_slice(&body);
    feed(&mut st, b"GET /big HTTP/1.1\r\nHost: h\r\n\r\n", &resp);
    assert!(st.tx(0).unwrap().is_complete());
    let held = st.memuse();
    assert!(held >= 40_000, "the live body is held: {held}");
    st.free_txs_before(1, false);
    assert!(st.tx(0).is_none());
    let pooled = st.memuse();
    assert!(pooled < 8 * 1024, "pooled transaction holds {pooled} bytes");
    feed(
        &mut st,
        b"GET /next HTTP/1.1\r\nHost: h\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    assert_eq!(
        buf(&st, 1, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/next")
    );
    assert_eq!(st.tx(1).unwrap().response_body().data(), b"ok");
    st.free_txs_before(2, false);
    st.release_pool();
    assert_eq!(st.memuse(), 0);
}

#[test]
fn transaction_limit_and_reuse() {
    let cfg = HttpConfig {
        max_tx: 4,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    for _ in 0..4 {
        feed(
            &mut st,
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        );
    }
    assert_eq!(st.tx_count(), 4);
    st.free_txs_before(3, false);
    assert!(st.tx(2).is_none());
    assert!(st.tx(3).is_some());
    feed(
        &mut st,
        b"GET /five HTTP/1.1\r\nHost: h\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    );
    assert_eq!(
        buf(&st, 4, HttpBuffer::Uri, Dir::ToServer).as_deref(),
        Some("/five")
    );
    assert!(st.tx(4).unwrap().is_complete());
    // At the limit new requests are refused and counted.
    let mut st = with(HttpConfig {
        max_tx: 2,
        ..HttpConfig::default()
    });
    st.parse(
        Dir::ToServer,
        b"GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.1\r\n\r\n",
    );
    assert_eq!(st.tx_count(), 2);
    assert_eq!(st.stats().tx_limit, 1);
}

#[test]
fn events_table() {
    let cases: &[(&[u8], &[u8], HttpEvent)] = &[
        (b"GET / HTTP/1.1\r\n\r\n", b"", HttpEvent::MissingHostHeader),
        (
            b"GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n",
            b"",
            HttpEvent::MethodDelimNonCompliant,
        ),
        (
            b" GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            b"",
            HttpEvent::RequestLineLeadingWhitespace,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: h\r\nBad\r\n\r\n",
            b"",
            HttpEvent::RequestFieldMissingColon,
        ),
        (
            b"GET / HTTP/1.1\r\n x: y\r\nHost: h\r\n\r\n",
            b"",
            HttpEvent::InvalidRequestFieldFolding,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
            b"",
            HttpEvent::RequestHeaderHostInvalid,
        ),
        (
            b"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n",
            b"",
            HttpEvent::HostHeaderAmbiguous,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"",
            HttpEvent::InvalidRequestChunkLen,
        ),
        (
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: x\r\n\r\n",
            b"",
            HttpEvent::InvalidTransferEncodingValueInRequest,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            b"HTTP/1.1 2x0 OK\r\n\r\n",
            HttpEvent::ResponseInvalidStatus,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            HttpEvent::InvalidContentLengthFieldInResponse,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope",
            HttpEvent::GzipDecompressionFailed,
        ),
        (
            b"",
            b"HTTP/1.1 200 OK\r\n\r\n",
            HttpEvent::UnableToMatchResponseToRequest,
        ),
    ];
    for (req, resp, ev) in cases {
        let mut st = state();
        feed(&mut st, req, resp);
        let tx = st.tx(0).unwrap_or_else(|| panic!("no tx for {ev:?}"));
        assert!(tx.events().contains(*ev), "{ev:?}: {:?}", tx.events());
    }
}

/// libhtp numbers a request line without protocol HTTP/0.9, so Suricata's
/// `REQUEST_LINE_INVALID` (0.9, unknown method, invalid or unknown protocol) stays quiet on
/// a bare `GET/` (zeek `http_methods.pcap`: 0 in Suricata 7.0.10).
#[test]
fn bare_unknown_method_is_not_an_invalid_request_line() {
    let mut st = state();
    feed(&mut st, b"GET/\r\n\r\n", b"");
    let tx = st.tx(0).expect("a transaction");
    assert!(!tx.events().contains(HttpEvent::RequestLineInvalid));
}

#[test]
fn eve_options() {
    let mut st = state();
    feed(&mut st, REQ, RESP);
    let mut basic = EveJson::new();
    st.write_eve(0, &EveHttpOptions::default(), &mut basic);
    assert_eq!(
        basic.finish(),
        r#"{"hostname":"example.com","url":"/a/./b/../c%2Fd?x=%41+1","http_user_agent":"ua/1","http_content_type":"text/html"}"#
    );
    let mut ext = EveJson::new();
    st.write_eve(
        0,
        &EveHttpOptions {
            extended: true,
            ..EveHttpOptions::default()
        },
        &mut ext,
    );
    let ext = ext.finish();
    assert!(ext.contains(r#""http_refer":"http://r/","http_method":"POST","protocol":"HTTP/1.1","status":302,"redirect":"/new","length":5"#), "{ext}");
    assert!(!ext.contains("request_headers"));
    assert!(!st.write_eve(9, &EveHttpOptions::default(), &mut EveJson::new()));
}

#[test]
fn config_from_suricata_yaml_values() {
    let cfg: HttpConfig = serde_json::from_str(
        r#"{"personality":"IDS","request-body-limit":"100kb","response-body-limit":"1mb",
            "request-body-minimal-inspect-size":"32kb","request-body-inspect-window":"4kb",
            "response-body-minimal-inspect-size":"40kb","response-body-inspect-window":"16kb",
            "response-body-decompress-layer-limit":2,"http-body-inline":"auto",
            "swf-decompression":{"enabled":false,"type":"both"},
            "double-decode-path":false,"double-decode-query":false}"#,
    )
    .unwrap();
    assert_eq!(cfg.request_body_limit, 102_400);
    assert_eq!(cfg.response_body_limit, 1_048_576);
    assert!(serde_json::from_str::<HttpConfig>(r#"{"no-such-key":1}"#).is_err());
    assert!(serde_json::from_str::<HttpConfig>(r#"{"request-body-limit":"lots"}"#).is_err());
}

#[test]
fn probe_directions() {
    assert_eq!(
        probe(Dir::ToServer, b"GET / HTTP/1.1\r\n"),
        ProbeResult::Yes
    );
    assert_eq!(probe(Dir::ToServer, b"GE"), ProbeResult::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"\x16\x03\x01"), ProbeResult::No);
    assert_eq!(
        probe(Dir::ToClient, b"HTTP/1.1 200 OK\r\n"),
        ProbeResult::Yes
    );
    assert_eq!(probe(Dir::ToClient, b"SSH-2.0"), ProbeResult::No);
}

/// Everything observable about a transaction, for comparing two parses.
fn observe(st: &HttpState) -> Vec<String> {
    let mut out = vec![format!("txs={}", st.tx_count())];
    for tx in st.txs() {
        let id = tx.id();
        for b in HttpBuffer::ALL {
            for d in [Dir::ToServer, Dir::ToClient] {
                let mut items = Vec::new();
                st.for_each_buffer(id, *b, d, &mut |v| {
                    items.push(v.to_vec());
                    false
                });
                out.push(format!("{id} {b:?} {d:?} {items:?}"));
            }
        }
        out.push(format!(
            "{id} {:?} {:?} {:?} {} {}",
            tx.request_progress(),
            tx.response_progress(),
            tx.events(),
            tx.response_message_len(),
            tx.request_body().total_len()
        ));
        let mut e = EveJson::new();
        st.write_eve(
            id,
            &EveHttpOptions {
                extended: true,
                request_headers: true,
                response_headers: true,
                custom: 0,
            },
            &mut e,
        );
        out.push(e.finish());
    }
    out
}

fn session() -> (Vec<u8>, Vec<u8>) {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"gzipped body with some text").unwrap();
    let gz = gz.finish().unwrap();
    let mut req = REQ.to_vec();
    req.extend_from_slice(
        b"GET /p%C3%A9/..%2f?q=1 HTTP/1.1\r\nHost: x:81\r\nX-F: a\r\n b\r\n\r\n\
          POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;e\r\nabc\r\n0\r\nT: 1\r\n\r\n\
          HEAD /h HTTP/1.0\r\n\r\n",
    );
    let mut resp = RESP.to_vec();
    resp.extend_from_slice(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
            gz.len()
        )
        .as_bytes(),
    );
    resp.extend_from_slice(&gz);
    resp.extend_from_slice(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\
          HTTP/1.0 200 OK\r\nContent-Length: 10\r\n\r\n",
    );
    (req, resp)
}

fn split_feed(st: &mut HttpState, dir: Dir, data: &[u8], cuts: &[usize]) {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
    points.sort_unstable();
    let mut last = 0;
    for p in points {
        st.parse(dir, &data[last..p]);
        last = p;
    }
    st.parse(dir, &data[last..]);
}

#[test]
fn byte_by_byte_equals_whole() {
    let (req, resp) = session();
    let mut whole = state();
    feed(&mut whole, &req, &resp);
    let mut bytes = state();
    for b in &req {
        bytes.parse(Dir::ToServer, std::slice::from_ref(b));
    }
    for b in &resp {
        bytes.parse(Dir::ToClient, std::slice::from_ref(b));
    }
    assert_eq!(whole.tx_count(), 4);
    assert_eq!(observe(&whole), observe(&bytes));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Any split points give the same transactions as feeding each direction at once.
    #[test]
    fn segmentation_never_matters(
        rc in proptest::collection::vec(any::<usize>(), 0..40),
        sc in proptest::collection::vec(any::<usize>(), 0..40),
    ) {
        let (req, resp) = session();
        let mut whole = state();
        feed(&mut whole, &req, &resp);
        let mut split = state();
        split_feed(&mut split, Dir::ToServer, &req, &rc);
        split_feed(&mut split, Dir::ToClient, &resp, &sc);
        prop_assert_eq!(observe(&whole), observe(&split));
    }

    /// Random bytes, random directions, gaps and closes never panic and stay bounded.
    #[test]
    fn random_input_never_panics(
        ops in proptest::collection::vec(
            (0u8..4, proptest::collection::vec(any::<u8>(), 0..300)), 0..30),
        prefix in 0usize..3,
    ) {
        let mut st = state();
        let prefixes: [&[u8]; 3] = [b"GET / HTTP/1.1\r\n", b"POST /x HTTP/1.0\r\nContent-Length: 5\r\n\r\n", b""];
        st.parse(Dir::ToServer, prefixes[prefix]);
        for (op, data) in &ops {
            match op {
                0 => st.parse(Dir::ToServer, data),
                1 => st.parse(Dir::ToClient, data),
                2 => st.gap(if data.len() % 2 == 0 { Dir::ToServer } else { Dir::ToClient }, data.len() as u64),
                _ => st.close(if data.len() % 2 == 0 { Dir::ToServer } else { Dir::ToClient }),
            }
        }
        let _ = observe(&st);
        prop_assert!(st.memuse() < 4 * 1024 * 1024);
    }

    /// HTTP-looking random lines (the grammar's alphabet) never panic either.
    #[test]
    fn http_alphabet_never_panics(data in proptest::collection::vec(
        prop_oneof![Just(b'\r'), Just(b'\n'), Just(b' '), Just(b':'), Just(b'%'), Just(b'/'),
                    Just(b'G'), Just(b'H'), Just(b'T'), Just(b'P'), Just(b'0'), Just(b'1'),
                    Just(b'a'), Just(b'\t'), Just(b'.'), Just(b'?')], 0..600)) {
        let mut st = state();
        st.parse(Dir::ToServer, b"GET ");
        st.parse(Dir::ToServer, &data);
        st.parse(Dir::ToClient, b"HTTP/1.1 ");
        st.parse(Dir::ToClient, &data);
        st.close(Dir::ToServer);
        st.close(Dir::ToClient);
        let _ = observe(&st);
    }
}

#[test]
fn state_is_send_and_body_inspection_thresholds() {
    fn send<T: Send>() {}
    send::<HttpState>();
    let cfg = HttpConfig {
        request_body_minimal_inspect_size: 10,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    st.parse(
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 30\r\n\r\n12345",
    );
    let rb = HttpBuffer::RequestBody;
    assert!(!st.body_ready(0, rb, Dir::ToServer, false));
    st.parse(Dir::ToServer, b"67890");
    assert!(st.body_ready(0, rb, Dir::ToServer, false));
    assert_eq!(HttpBuffer::RequestBody.min_progress(), Progress::Body);
    // Once inspected, the body is not ready again until more of it arrives.
    st.note_body_inspected(0, Dir::ToServer);
    assert!(!st.body_ready(0, rb, Dir::ToServer, false));
    assert!(st.body_ready(0, rb, Dir::ToServer, true));
    st.parse(Dir::ToServer, b"a");
    assert!(st.body_ready(0, rb, Dir::ToServer, false));
}

/// Later inspection rounds of a growing body see the new bytes plus a window before them
/// (Suricata's `*-body-inspect-window`), not the whole body again.
#[test]
fn body_inspection_window() {
    let cfg = HttpConfig {
        request_body_minimal_inspect_size: 8,
        request_body_inspect_window: 4,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    st.parse(
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 40\r\n\r\n0123456789",
    );
    let items = |st: &HttpState| {
        let mut v = Vec::new();
        st.for_each_buffer(0, HttpBuffer::RequestBody, Dir::ToServer, &mut |b| {
            v.push(b.to_vec());
            false
        });
        v
    };
    // First round: the whole body.
    assert_eq!(items(&st), vec![b"0123456789".to_vec()]);
    st.note_body_inspected(0, Dir::ToServer);
    // Two new bytes: they plus two before them make the 4-byte window.
    st.parse(Dir::ToServer, b"ab");
    assert_eq!(items(&st), vec![b"89ab".to_vec()]);
    st.note_body_inspected(0, Dir::ToServer);
    // More new bytes than the window: they plus a quarter window (1 byte) before them.
    st.parse(Dir::ToServer, b"cdefgh");
    assert_eq!(items(&st), vec![b"bcdefgh".to_vec()]);
    // The whole body stays available to EVE and file logging.
    assert_eq!(st.tx(0).map(|t| t.request_body().data().len()), Some(18));
}

/// Body bytes before the inspect window are released as more arrive (Suricata prunes its
/// body chunks the same way); windows and totals stay right.
#[test]
fn inspected_body_bytes_are_released() {
    let cfg = HttpConfig {
        request_body_minimal_inspect_size: 1000,
        request_body_inspect_window: 100,
        request_body_limit: 0,
        ..HttpConfig::default()
    };
    let mut st = with(cfg);
    st.parse(
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n",
    );
    let chunk = vec![b'a'; 30_000];
    st.parse(Dir::ToServer, &chunk);
    st.note_body_inspected(0, Dir::ToServer);
    let mut tail = vec![b'b'; 30_000];
    tail[29_999] = b'Z';
    st.parse(Dir::ToServer, &tail);
    let body = st.tx(0).unwrap().request_body();
    assert_eq!(body.total_len(), 60_000);
    // Everything up to 100 bytes before the inspected point was released.
    assert_eq!(body.kept_from(), 29_900);
    assert_eq!(body.data().len(), 30_100);
    // The next window: the new bytes plus a quarter window before them.
    let mut seen = Vec::new();
    st.for_each_buffer(0, HttpBuffer::RequestBody, Dir::ToServer, &mut |b| {
        seen = b.to_vec();
        false
    });
    assert_eq!(seen.len(), 30_025);
    assert!(seen.starts_with(&[b'a'; 25]) && seen.ends_with(b"bZ"));
}

// ---- libhtp response-parsing leniencies (http-evader style responses) ----

const EICAR: &[u8] = b"X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";

fn resp_body_of(resp: &[u8]) -> (HttpState, Vec<u8>) {
    let mut st = state();
    feed(&mut st, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", resp);
    st.close(Dir::ToClient);
    let body = st.tx(0).unwrap().response_body().data().to_vec();
    (st, body)
}

#[test]
fn chunk_length_junk_falls_back_to_identity_without_lf() {
    // Chunked on HTTP/1.0 is honoured; a body that does not start with a chunk length is
    // read as identity until close from its first byte, even with no LF in it.
    let mut r =
        b"HTTP/1.0 200 ok\r\nTransfer-Encoding: chunked\r\nContent-length: 68\r\n\r\n".to_vec();
    r.extend_from_slice(EICAR);
    let (st, body) = resp_body_of(&r);
    assert_eq!(body, EICAR);
    assert!(st
        .tx(0)
        .unwrap()
        .events()
        .contains(HttpEvent::InvalidResponseChunkLen));
    // Fewer than 8 bytes of junk: libhtp still waits for the line end.
    let (_, body) = resp_body_of(b"HTTP/1.1 200 ok\r\nTransfer-Encoding: chunked\r\n\r\nXYZ");
    assert_eq!(body, b"");
    // A valid length is not affected by the probe, whatever the segmentation.
    let mut st = state();
    st.parse(Dir::ToServer, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    for b in
        b"HTTP/1.1 200 ok\r\nTransfer-Encoding: chunked\r\n\r\n    0000000005\r\nhello\r\n0\r\n\r\n"
    {
        st.parse(Dir::ToClient, &[*b]);
    }
    assert_eq!(st.tx(0).unwrap().response_body().data(), b"hello");
}

#[test]
fn lone_cr_ends_response_lines() {
    // Status line and header lines ended by a lone CR.
    let mut r = b"HTTP/1.1 200 ok\rContent-type: application/octet-stream\rContent-disposition: attachment; filename=\"eicar.txt\"\rTransfer-Encoding: chunked\rYet-another-header: foo\r\n\r\n".to_vec();
    r.extend_from_slice(b"4\r\nX5O!\r\n3\r\nP%@\r\n0\r\n\r\n");
    let (st, body) = resp_body_of(&r);
    assert_eq!(body, b"X5O!P%@");
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.status(), Some(&b"200"[..]));
    assert_eq!(
        tx.response_headers().get(b"content-type"),
        Some(&b"application/octet-stream"[..])
    );
    // CR inside the status line: the rest is a header.
    let (st, body) = resp_body_of(
        b"HTTP/1.1 200\rTransfer-Encoding:chunked\r\nX: y\r\n\r\n2\r\nab\r\n0\r\n\r\n",
    );
    assert_eq!(body, b"ab");
    assert_eq!(st.tx(0).unwrap().status(), Some(&b"200"[..]));
    // Same when the CR and the byte after it arrive separately.
    let mut st = state();
    st.parse(Dir::ToServer, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    st.parse(Dir::ToClient, b"HTTP/1.1 200 ok\r\nA: b\r");
    st.parse(Dir::ToClient, b"Content-Length: 2\r");
    st.parse(Dir::ToClient, b"\n\r\nxy");
    assert_eq!(st.tx(0).unwrap().response_body().data(), b"xy");
    assert_eq!(
        st.tx(0).unwrap().response_headers().get(b"a"),
        Some(&b"b"[..])
    );
}

#[test]
fn lf_cr_line_endings_and_lws_terminator() {
    // LF CR ends a header line; LF CR CR LF CR LF is two line ends.
    let r = b"HTTP/1.1 200 ok\n\rContent-type: a/b\n\rTransfer-Encoding: chunked\n\rX: foo\r\n\r\n2\r\nab\r\n0\r\n\r\n";
    let (_, body) = resp_body_of(r);
    assert_eq!(body, b"ab");
    let r = b"HTTP/1.1 200 ok\r\nTransfer-Encoding: chunked\r\nX: foo\n\r\r\n2\r\nab\r\n0\r\n\r\n";
    let (_, body) = resp_body_of(r);
    assert_eq!(body, b"ab");
    // "SP LF" or "HT LF" followed by something else than LF ends the headers.
    let (_, body) = resp_body_of(b"HTTP/1.1 200 ok\r\nContent-length: 3\n\t\nabc");
    assert_eq!(body, b"abc");
    let (_, body) = resp_body_of(b"HTTP/1.1 200 ok\r\nContent-length: 3\n \nabc");
    assert_eq!(body, b"abc");
}

#[test]
fn nul_bytes_in_response_header_names_and_values() {
    let chunked = b"2\r\nab\r\n0\r\n\r\n";
    let mut r = b"HTTP/1.1 200 ok\r\nTransfer-Encoding:chu\0nked\r\n\r\n".to_vec();
    r.extend_from_slice(chunked);
    assert_eq!(resp_body_of(&r).1, b"ab");
    let mut r = b"HTTP/1.1 200 ok\r\nTransfer\0-encoding:chunked\r\n\r\n".to_vec();
    r.extend_from_slice(chunked);
    assert_eq!(resp_body_of(&r).1, b"ab");
    let gz = gzip(b"hello");
    for ce in [
        &b"Content-Encoding:gz\0ip"[..],
        b"Content-Encoding:\n\0gzip",
        b"Content\0-encoding:gzip",
    ] {
        let mut r = b"HTTP/1.1 200 ok\r\n".to_vec();
        r.extend_from_slice(ce);
        r.extend_from_slice(format!("\r\nContent-length: {}\r\n\r\n", gz.len()).as_bytes());
        r.extend_from_slice(&gz);
        assert_eq!(
            resp_body_of(&r).1,
            b"hello",
            "{:?}",
            String::from_utf8_lossy(ce)
        );
    }
    // A leading NUL before "HTTP" still makes a status line.
    let mut r = b"\0HTTP/1.1 200 ok\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    r.extend_from_slice(chunked);
    assert_eq!(resp_body_of(&r).1, b"ab");
}

#[test]
fn status_100_with_body_is_a_response() {
    let mut r = b"HTTP/1.1 100 ok\r\nContent-disposition: attachment; filename=\"e.txt\"\r\nContent-length: 68\r\n\r\n".to_vec();
    r.extend_from_slice(EICAR);
    let (st, body) = resp_body_of(&r);
    assert_eq!(body, EICAR);
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.status(), Some(&b"100"[..]));
    assert!(tx.response_headers().get(b"content-disposition").is_some());
}

#[test]
fn unterminated_line_after_response_is_body_at_close() {
    let mut r = b"HTTP/1.1 200 ok\r\nContent-length: 34\r\n 68\r\n\r\n".to_vec();
    r.extend_from_slice(EICAR);
    let (_, body) = resp_body_of(&r);
    assert_eq!(body, EICAR);
    // Until the line ends or the stream closes, the response stays open (libhtp).
    let mut st = state();
    feed(&mut st, b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", &r);
    assert_eq!(st.tx(0).unwrap().response_progress(), Progress::Body);
    st.parse(Dir::ToClient, b"\r\n");
    let tx = st.tx(0).unwrap();
    assert_eq!(tx.response_progress(), Progress::Complete);
    let mut want = EICAR.to_vec();
    want.extend_from_slice(b"\r\n");
    assert_eq!(tx.response_body().data(), &want[..]);
    // Data ending right after the body completes the response at once.
    let mut st = state();
    feed(
        &mut st,
        b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n",
        b"HTTP/1.1 200 ok\r\nContent-length: 2\r\n\r\nab",
    );
    assert_eq!(st.tx(0).unwrap().response_progress(), Progress::Complete);
}

/// A `filestore` match lifts the body limit for the transaction's files (Suricata's
/// `HTP_STREAM_DEPTH_SET`): the response file goes on past `response-body-limit` and ends
/// `CLOSED` with every byte, while the inspection buffer stays at the limit.
#[test]
fn filestore_lifts_the_body_limit_for_files() {
    use shrike_app::files::FileState;
    use shrike_app::registry::AppParser;
    let cfg = HttpConfig {
        response_body_limit: 10,
        ..HttpConfig::default()
    };
    for lifted in [false, true] {
        let mut st = with(cfg.clone());
        st.parse(Dir::ToServer, b"GET /f.bin HTTP/1.1\r\nHost: h\r\n\r\n");
        st.parse(
            Dir::ToClient,
            b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n0123",
        );
        if lifted {
            AppParser::lift_file_limit(&mut st, 0, Dir::ToClient);
        }
        st.parse(Dir::ToClient, b"4567890123");
        st.parse(Dir::ToClient, b"4567890123456789");
        let mut got = None;
        AppParser::files(&st, 0, Dir::ToClient, &mut |f| {
            got = Some((f.state(), f.size()))
        });
        let want = if lifted {
            (FileState::Closed, 30)
        } else {
            (FileState::Truncated, 10)
        };
        assert_eq!(got, Some(want), "lifted {lifted}");
        assert_eq!(st.tx(0).unwrap().response_body().data(), b"0123456789");
    }
}

/// RTSP over the HTTP parser (libhtp): a status line that does not start with `HTTP` is read
/// as body; such a response ends when a body line ends the data at hand (RES_FINALIZE with
/// nothing more to read), a blank line leaves it open; a request ends with the data at hand, so
/// the next one (`DESCRIBE`, no method libhtp knows) is a transaction of its own. Suricata
/// logs an `http` record per RTSP request of ndpi's `rtsp.pcap` this way.
#[test]
fn non_http_status_lines_are_body_ending_with_the_data() {
    let mut st = state();
    let reqs = ["OPTIONS", "DESCRIBE", "SETUP", "PLAY"];
    for (i, m) in reqs.iter().enumerate() {
        let req = format!(
            "{m} rtsp://10.2.2.2:8554/ RTSP/1.0\r\nCSeq: {}\r\n\r\n",
            i + 2
        );
        // Only DESCRIBE's answer has a body (and so ends on a body line).
        let body = if i == 1 { "v=0\r\n" } else { "" };
        let resp = format!(
            "RTSP/1.0 200 OK\r\nContent-Length: {}\r\nCseq: {}\r\n\r\n{body}",
            body.len(),
            i + 2
        );
        feed(&mut st, req.as_bytes(), resp.as_bytes());
        if i == 0 {
            // The blank line that ends the headers is ignored: the response is still open.
            assert_eq!(
                st.tx(0).expect("tx").progress(Dir::ToClient),
                Progress::Line
            );
        }
    }
    assert_eq!(st.tx_count(), 4);
    for (i, m) in reqs.iter().enumerate() {
        assert_eq!(
            buf(&st, i as u64, HttpBuffer::Method, Dir::ToServer).as_deref(),
            Some(*m)
        );
        assert_eq!(
            st.tx(i as u64).expect("tx").progress(Dir::ToServer),
            Progress::Complete
        );
    }
    // The first two answers went to the first transaction, which DESCRIBE's body line ended.
    assert_eq!(
        st.tx(0).expect("tx").progress(Dir::ToClient),
        Progress::Complete
    );
    assert_eq!(
        st.tx(1).expect("tx").progress(Dir::ToClient),
        Progress::Line
    );
    // Suricata opens a file for such a body too, named by the parsed URI's path.
    let f = st
        .tx(0)
        .expect("tx")
        .response_body()
        .file()
        .expect("a response file");
    assert_eq!(f.name(), b"/");
}

/// libhtp skips a line that is no status line when the data at hand goes on with a line
/// starting with `H` (http-evader's whitespace before the status line): the real status line
/// and its headers are parsed, and the file is named by Content-Disposition.
#[test]
fn junk_line_before_a_status_line_is_skipped() {
    let mut st = state();
    feed(
        &mut st,
        b"GET /a/x.txt HTTP/1.1\r\nHost: h\r\n\r\n",
        b" \t\r\nHTTP/1.1 200 ok\r\nContent-Disposition: attachment; filename=\"eicar.txt\"\r\n\
Content-Length: 4\r\n\r\nX5O!",
    );
    let tx = st.tx(0).expect("tx");
    assert_eq!(
        buf(&st, 0, HttpBuffer::StatCode, Dir::ToClient).as_deref(),
        Some("200")
    );
    assert_eq!(tx.progress(Dir::ToClient), Progress::Complete);
    let f = tx.response_body().file().expect("a response file");
    assert_eq!(f.name(), b"eicar.txt");
    assert_eq!(f.size(), 4);
}
