use super::*;
use crate::http::HttpBuffer;
use loona_hpack::Encoder;

fn frame(ftype: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
    let l = payload.len();
    let mut v = vec![(l >> 16) as u8, (l >> 8) as u8, l as u8, ftype, flags];
    v.extend_from_slice(&sid.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn request_stream() -> (Vec<u8>, Vec<u8>) {
    let mut enc = Encoder::new();
    let hdrs = enc.encode(vec![
        (&b":method"[..], &b"GET"[..]),
        (b":path", b"/a/b"),
        (b":authority", b"example.com"),
        (b"user-agent", b"ua/1"),
    ]);
    let mut ts = MAGIC.to_vec();
    ts.extend(frame(FT_SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]));
    ts.extend(frame(FT_HEADERS, FLAG_END_HEADERS | FLAG_EOS, 1, &hdrs));
    let mut enc = Encoder::new();
    let rh = enc.encode(vec![
        (&b":status"[..], &b"200"[..]),
        (b"content-length", b"5"),
    ]);
    let mut tc = frame(FT_SETTINGS, 0, 0, &[0, 4, 0, 0, 0xff, 0xff]);
    tc.extend(frame(FT_HEADERS, FLAG_END_HEADERS, 1, &rh));
    tc.extend(frame(FT_DATA, FLAG_EOS, 1, b"hello"));
    // Suricata 7 reads the error code from the first 4 bytes (the last stream id)
    tc.extend(frame(FT_GOAWAY, 0, 0, &[0, 0, 0, 0, 0, 0, 0, 1]));
    (ts, tc)
}

#[test]
fn probe_wants_the_preface() {
    assert_eq!(probe(Dir::ToServer, b"PRI * HT"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, MAGIC), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1"), Probe::No);
    assert_eq!(probe(Dir::ToClient, MAGIC), Probe::No);
    assert_eq!(
        probe(Dir::ToClient, &[0, 0, 6, 4, 0, 0, 0, 0, 0]),
        Probe::NeedMore
    );
}

#[test]
fn streams_become_transactions_split_at_every_byte() {
    let (ts, tc) = request_stream();
    for cut in [1, 7, 24, 30, ts.len() - 1] {
        let mut s = Http2State::default();
        assert!(!s.parse(Dir::ToServer, &ts[..cut]));
        assert!(!s.parse(Dir::ToServer, &ts[cut..]));
        for chunk in tc.chunks(3) {
            assert!(!s.parse(Dir::ToClient, chunk));
        }
        // settings (ts), stream 1, settings (tc), goaway
        assert_eq!(s.tx_count(), 4);
        let t = s.tx(1).expect("stream tx");
        assert_eq!(t.stream_id, 1);
        assert!(t.complete());
        assert_eq!(t.header(Dir::ToServer, b":path"), Some(&b"/a/b"[..]));
        assert_eq!(t.header(Dir::ToClient, b":status"), Some(&b"200"[..]));
        let mut w = JsonWriter::new();
        w.start_object();
        s.write_http(t, &mut w);
        w.close();
        let j: serde_json::Value = serde_json::from_slice(w.as_bytes()).expect("json");
        assert_eq!(j["http"]["url"], "/a/b");
        assert_eq!(j["http"]["status"], 200);
        assert_eq!(j["http"]["length"], 5);
        assert_eq!(j["http"]["http_user_agent"], "ua/1");
        assert_eq!(j["http"]["http2"]["stream_id"], 1);
        assert_eq!(j["http"]["request_headers"][0]["name"], ":method");
        let g = s.tx(3).expect("goaway tx");
        let mut w = JsonWriter::new();
        w.start_object();
        s.write_http(g, &mut w);
        w.close();
        let j: serde_json::Value = serde_json::from_slice(w.as_bytes()).expect("json");
        assert_eq!(j["http"]["http2"]["response"]["error_code"], "NOERROR");
        let st = s.tx(0).expect("settings tx");
        let mut w = JsonWriter::new();
        w.start_object();
        s.write_http(st, &mut w);
        w.close();
        let j: serde_json::Value = serde_json::from_slice(w.as_bytes()).expect("json");
        assert_eq!(
            j["http"]["http2"]["request"]["settings"][0]["settings_id"],
            "SETTINGSMAXCONCURRENTSTREAMS"
        );
    }
}

#[test]
fn continuation_is_reassembled_and_bad_magic_is_an_event() {
    let mut enc = Encoder::new();
    let hdrs = enc.encode(vec![(&b":method"[..], &b"GET"[..]), (b":path", b"/long")]);
    let (a, b) = hdrs.split_at(2);
    let mut ts = b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".to_vec();
    ts.extend(frame(FT_HEADERS, 0, 1, a));
    ts.extend(frame(FT_PING, 0, 3, &[0; 8]));
    ts.extend(frame(FT_CONTINUATION, FLAG_END_HEADERS, 1, b));
    let mut s = Http2State::default();
    s.parse(Dir::ToServer, &ts);
    // the event is raised before any transaction: Suricata loses it too
    assert!(!s.has_event(0, Ev::InvalidClientMagic as u16));
    assert_eq!(s.tx_count(), 2);
    let t = s.tx(0).expect("tx");
    assert_eq!(t.header(Dir::ToServer, b":path"), Some(&b"/long"[..]));
}

#[test]
fn streams_are_bounded_and_frames_checked() {
    let mut s = Http2State::new(3, 4096, 1000);
    let mut ts = MAGIC.to_vec();
    for sid in [1u32, 3, 5, 7] {
        ts.extend(frame(FT_PRIORITY, 0, sid, &[0, 0, 0, 0, 15]));
    }
    assert!(s.parse(Dir::ToServer, &ts));
    assert!(s.has_event(0, Ev::TooManyStreams as u16));
    let mut s = Http2State::default();
    let mut ts = MAGIC.to_vec();
    ts.extend(frame(FT_PING, 0, 1, &[0; 8]));
    ts.extend(frame(FT_RST_STREAM, 0, 1, &[0, 0]));
    s.parse(Dir::ToServer, &ts);
    assert!(s.has_event(0, Ev::InvalidFrameLength as u16));
}

#[test]
fn long_frames_are_skipped() {
    let mut s = Http2State::default();
    let mut ts = MAGIC.to_vec();
    ts.extend(frame(FT_PING, 0, 1, &[0; 8]));
    let body = vec![b'x'; 70000];
    ts.extend(frame(FT_DATA, 0, 1, &body));
    ts.extend(frame(FT_PRIORITY, 0, 1, &[0, 0, 0, 0, 7]));
    for c in ts.chunks(1500) {
        s.parse(Dir::ToServer, c);
    }
    assert!(s.has_event(0, Ev::LongFrameData as u16));
    let t = s.tx(0).expect("tx");
    assert!(t
        .frames(Dir::ToServer)
        .iter()
        .any(|f| matches!(f.data, FrameData::Priority(7))));
}

#[test]
fn keywords_read_frames() {
    let (ts, tc) = request_stream();
    let mut s = Http2State::default();
    s.parse(Dir::ToServer, &ts);
    s.parse(Dir::ToClient, &tc);
    let find = |n: &str| {
        keywords::KEYWORDS
            .iter()
            .find(|k| k.name == n)
            .expect("keyword")
    };
    let m = (find("http2.frametype").setup)(Some("GOAWAY")).expect("setup");
    assert_eq!(m.matches(&s, 3, Dir::ToClient), Some(true));
    assert_eq!(m.matches(&s, 1, Dir::ToClient), Some(false));
    let m = (find("http2.errorcode").setup)(Some("NO_ERROR")).expect("setup");
    assert_eq!(m.matches(&s, 3, Dir::ToClient), Some(true));
    let m = (find("http2.settings").setup)(Some("SETTINGS_MAX_CONCURRENT_STREAMS > 10"))
        .expect("setup");
    assert_eq!(m.matches(&s, 0, Dir::ToServer), Some(true));
    let m =
        (find("http2.settings").setup)(Some("SETTINGS_MAX_CONCURRENT_STREAMS 10")).expect("setup");
    assert_eq!(m.matches(&s, 0, Dir::ToServer), Some(false));
    assert!((find("http2.frametype").setup)(Some("NOPE")).is_err());
    let mut names = Vec::new();
    s.buffer(1, BUF_HEADER_NAME, Dir::ToServer, &mut |n| {
        names.push(n.to_vec());
        false
    });
    assert!(names.contains(&b":path".to_vec()));
}

#[test]
fn no_panic_on_garbage() {
    let data: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for start in (0..200).step_by(7) {
        let mut s = Http2State::default();
        s.parse(Dir::ToServer, MAGIC);
        s.parse(Dir::ToServer, &data[start..]);
        s.parse(Dir::ToClient, &data[start..]);
        let mut v = Vec::new();
        s.live_txs(Dir::ToServer, &mut v);
        for tx in v {
            let mut w = JsonWriter::new();
            w.start_object();
            s.alert_members(tx, &mut w);
        }
    }
}

#[test]
fn too_many_streams_is_reported_once() {
    let mut s = Http2State::new(2, 4096, 1000);
    let mut ts = MAGIC.to_vec();
    for sid in [1u32, 3, 5] {
        ts.extend(frame(FT_PRIORITY, 0, sid, &[0, 0, 0, 0, 15]));
    }
    assert!(s.parse(Dir::ToServer, &ts));
    let mut names = Vec::new();
    s.drain_events(0, false, &mut |a| names.push((a.tx_id, a.name)));
    assert_eq!(
        names,
        vec![(0, "too_many_streams"), (1, "too_many_streams")]
    );
    names.clear();
    s.drain_events(0, false, &mut |a| names.push((a.tx_id, a.name)));
    assert!(names.is_empty());
}

#[test]
fn gzip_data_is_decoded_into_the_file_and_file_data() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"hello hello hello http2 body").expect("gzip");
    let z = gz.finish().expect("gzip");
    let mut enc = Encoder::new();
    let req = enc.encode(vec![(&b":method"[..], &b"GET"[..]), (b":path", b"/z")]);
    let mut enc = Encoder::new();
    let rh = enc.encode(vec![
        (&b":status"[..], &b"200"[..]),
        (b"content-encoding", b"gzip"),
    ]);
    let mut ts = MAGIC.to_vec();
    ts.extend(frame(FT_HEADERS, FLAG_END_HEADERS | FLAG_EOS, 1, &req));
    let mut tc = frame(FT_HEADERS, FLAG_END_HEADERS, 1, &rh);
    let (a, b) = z.split_at(z.len() / 2);
    tc.extend(frame(FT_DATA, 0, 1, a));
    tc.extend(frame(FT_DATA, FLAG_EOS, 1, b));
    let mut s = Http2State::default();
    s.parse(Dir::ToServer, &ts);
    s.parse(Dir::ToClient, &tc);
    let t = s.tx(0).expect("tx");
    assert!(t.complete());
    let f = t.files[1].as_deref().expect("file");
    assert_eq!(f.size(), 28);
    assert!(f.is_done());
    let mut hit = false;
    s.http_buffer(0, HttpBuffer::FileData, Dir::ToClient, &mut |v| {
        hit = v == b"hello hello hello http2 body";
        hit
    });
    assert!(hit);
    let mut uri = Vec::new();
    s.http_buffer(0, HttpBuffer::Uri, Dir::ToServer, &mut |v| {
        uri = v.to_vec();
        false
    });
    assert_eq!(uri, b"/z");
}

#[test]
fn http2_settings_header_is_base64url() {
    // SETTINGS_MAX_CONCURRENT_STREAMS 100, SETTINGS_INITIAL_WINDOW_SIZE 65535
    assert_eq!(
        base64url(b"AAMAAABkAAQAAP__").as_deref(),
        Some(&[0, 3, 0, 0, 0, 100, 0, 4, 0, 0, 0xff, 0xff][..])
    );
    assert_eq!(base64url(b"AA*"), None);
}

#[test]
fn server_first_bytes_wait_only_when_they_fit_settings() {
    assert_eq!(probe(Dir::ToClient, &[0, 0]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToClient, b"\x02\x03more"), Probe::No);
    assert_eq!(probe(Dir::ToClient, b"HTTP/1.1 200"), Probe::No);
    assert_eq!(
        probe(Dir::ToClient, &[0, 0x50, 0, 4, 0, 0, 0, 0, 0]),
        Probe::No
    );
}
