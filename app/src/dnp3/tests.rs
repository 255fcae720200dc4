use super::objects::Val;
use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// SELECT of one CROB (g12v1, 2-octet index prefix), from suricata-verify's
/// dnp3-select-operate capture.
const SELECT: &str = "05641ac40200030040f2c6c7030c0128010001000301640000008fda6400000000005b";
/// Its response.
const SELECT_RESP: &str =
    "05641c44030002004b91fcc78100000c0128010001000301640001a400006400000000005b";

fn state() -> Dnp3State {
    Dnp3State::new(Dnp3Config::default())
}

#[test]
fn crc_checks_and_fails() {
    let f = hex(SELECT);
    assert!(check_crc(&f[..LINK_HDR_LEN]));
    let mut bad = f.clone();
    bad[4] ^= 1;
    assert!(!check_crc(&bad[..LINK_HDR_LEN]));
    assert_eq!(link_frame_len(f[2]), f.len());
    assert_eq!(link_frame_len(4), 0);
}

#[test]
fn select_request_decodes_crob_points() {
    let mut s = state();
    assert!(!s.parse(Dir::ToServer, &hex(SELECT)));
    let t = s.tx(0).unwrap();
    assert!(t.is_request && t.done && t.complete);
    assert_eq!((t.lh.src, t.lh.dst), (3, 2));
    assert_eq!(t.function_code, 3);
    assert_eq!(t.app_control & 0x0f, 7);
    assert_eq!(t.objects.len(), 1);
    let o = &t.objects[0];
    assert_eq!((o.group, o.variation, o.qualifier), (12, 1, 0x28));
    assert_eq!((o.prefix_code, o.range_code, o.count), (2, 8, 1));
    let p = &o.points[0];
    assert_eq!((p.prefix, p.index), (1, 1));
    let get = |k: &str| {
        p.values
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("op_type"), Some(Val::U(3)));
    assert_eq!(get("ontime"), Some(Val::U(100)));
    assert_eq!(get("offtime"), Some(Val::U(100)));
    assert_eq!(get("count"), Some(Val::U(1)));
    // The reassembled application data starts with the application header.
    assert_eq!(&t.buffer[..2], &[0xc7, 0x03]);
}

#[test]
fn response_carries_iin_and_every_split_gives_the_same() {
    let whole = hex(SELECT_RESP);
    for cut in 0..whole.len() {
        let mut s = state();
        assert!(!s.parse(Dir::ToClient, &whole[..cut]));
        assert!(!s.parse(Dir::ToClient, &whole[cut..]));
        let t = s.tx(0).unwrap();
        assert!(!t.is_request && t.complete);
        assert_eq!(t.function_code, 0x81);
        assert_eq!(t.iin, 0);
        assert_eq!(t.objects[0].points.len(), 1);
    }
}

#[test]
fn bad_transport_crc_is_an_event_and_bad_link_crc_an_error() {
    let mut s = state();
    s.parse(Dir::ToServer, &hex(SELECT));
    let mut f = hex(SELECT);
    f[15] ^= 0xff;
    assert!(!s.parse(Dir::ToServer, &f));
    assert!(s.has_event(0, ev::BAD_TRANSPORT_CRC));
    assert_eq!(s.tx_count(), 1);
    let mut g = hex(SELECT);
    g[3] ^= 1;
    assert!(s.parse(Dir::ToServer, &g));
    assert!(s.has_event(0, ev::BAD_LINK_CRC));
    // The flow's app layer is over.
    assert!(!s.parse(Dir::ToServer, &hex(SELECT)));
    assert_eq!(s.tx_count(), 1);
}

#[test]
fn unknown_object_is_flagged_and_incomplete() {
    // A READ with object 99/1, range 0 (1-octet start/stop): not decoded.
    let app = [0xc1u8, 0x01, 99, 1, 0x00, 0, 0];
    let f = frame(0xc4, &app);
    let mut s = state();
    s.parse(Dir::ToServer, &f);
    let t = s.tx(0).unwrap();
    assert!(t.done && !t.complete);
    assert!(s.has_event(0, ev::UNKNOWN_OBJECT));
}

/// A link frame (request direction) around one transport segment (FIR|FIN) of `app`.
fn frame(control: u8, app: &[u8]) -> Vec<u8> {
    let mut user = vec![0xc0u8];
    user.extend_from_slice(app);
    let mut f = vec![0x05, 0x64, (5 + user.len()) as u8, control, 1, 0, 2, 0];
    let c = crc(&f);
    f.extend_from_slice(&c.to_le_bytes());
    for b in user.chunks(16) {
        f.extend_from_slice(b);
        f.extend_from_slice(&crc(b).to_le_bytes());
    }
    f
}

#[test]
fn multi_segment_reassembly() {
    // One READ of class 0 split over two transport segments.
    let app = [0xc1u8, 0x01, 60, 1, 0x06];
    let mut s = state();
    let mk = |th: u8, part: &[u8]| {
        let mut f = frame(0xc4, part);
        // Rewrite the transport header and its block CRC.
        f[LINK_HDR_LEN] = th;
        let end = (LINK_HDR_LEN + 1 + part.len()).min(LINK_HDR_LEN + 16);
        let c = crc(&f[LINK_HDR_LEN..end]);
        f[end..end + 2].copy_from_slice(&c.to_le_bytes());
        f
    };
    s.parse(Dir::ToServer, &mk(0x40, &app[..2]));
    assert!(!s.tx(0).unwrap().done);
    s.parse(Dir::ToServer, &mk(0x81, &app[2..]));
    let t = s.tx(0).unwrap();
    assert!(t.done && t.complete);
    assert_eq!(t.buffer, app);
    assert_eq!(t.objects[0].group, 60);
}

#[test]
fn bad_crcs_everywhere_stay_bounded() {
    let mut s = state();
    let mut f = hex(SELECT);
    f[20] ^= 0x55;
    for _ in 0..10_000 {
        s.parse(Dir::ToServer, &f);
    }
    assert_eq!(s.tx_count(), 0);
    assert!(s.bufs[0].len() < 300);
    // Garbage of any shape never panics.
    let mut x = 7u32;
    for n in 0..2000 {
        let mut st = state();
        let mut v = hex(SELECT_RESP);
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let i = (x as usize) % v.len();
        v[i] = (x >> 16) as u8;
        st.parse(
            if n % 2 == 0 {
                Dir::ToServer
            } else {
                Dir::ToClient
            },
            &v,
        );
    }
}

#[test]
fn keywords_parse_as_suricata() {
    use keywords::*;
    assert_eq!(parse_func("unsolicited_response"), Some(130));
    assert_eq!(parse_func("3"), Some(3));
    assert_eq!(parse_func("nope"), None);
    assert_eq!(parse_ind("0x8000"), Some(0x8000));
    assert_eq!(
        parse_ind("device_restart, need_time"),
        Some(0x8000 | 0x1000)
    );
    assert_eq!(parse_ind("bogus"), None);
    assert_eq!(parse_obj("12,1"), Some((12, 1)));
    assert_eq!(parse_obj("0x3c,2"), Some((60, 2)));
    assert_eq!(parse_obj("12"), None);
}

#[test]
fn probe_needs_start_bytes() {
    assert_eq!(probe(Dir::ToServer, &hex(SELECT)), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &[5, 0x64]), Probe::NeedMore);
    // A response frame (direction bit clear) fits the to-client direction only.
    assert_eq!(probe(Dir::ToClient, &hex(SELECT_RESP)), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &hex(SELECT_RESP)), Probe::No);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"), Probe::No);
}

#[test]
fn flood_of_incomplete_transactions_stays_bounded() {
    // WRITEs of 2000 packed binary inputs followed by an unknown object: never complete.
    let mut app = vec![0xc1u8, 0x02, 1, 1, 0x01, 0, 0, 0xcf, 0x07];
    app.extend(std::iter::repeat_n(0xaa, 251));
    app.extend_from_slice(&[99, 1, 0x07, 1]);
    // Split into transport segments of at most 249 octets.
    let chunks: Vec<&[u8]> = app.chunks(200).collect();
    let mut s = state();
    for round in 0..600u32 {
        for (i, c) in chunks.iter().enumerate() {
            let mut th = ((round as u8).wrapping_add(i as u8)) & 0x3f;
            if i == 0 {
                th |= 0x40;
            }
            if i + 1 == chunks.len() {
                th |= 0x80;
            }
            let mut f = frame(0xc4, c);
            f[LINK_HDR_LEN] = th;
            let end = LINK_HDR_LEN + 16;
            let c2 = crc(&f[LINK_HDR_LEN..end]);
            f[end..end + 2].copy_from_slice(&c2.to_le_bytes());
            s.parse(Dir::ToServer, &f);
        }
    }
    assert_eq!(s.tx_count(), 600);
    let t = s.tx(0).unwrap();
    assert!(t.done && !t.complete);
    assert_eq!(t.objects[0].points.len(), 2000);
    assert!(s.has_event(0, ev::UNKNOWN_OBJECT));
    // Past max-tx unanswered requests: flooded.
    assert!(s.txs().any(|t| t.events & (1 << ev::FLOODED) != 0));
    assert!(s.points_kept <= Dnp3Config::default().max_points * POINTS_KEPT_FACTOR);
}

#[test]
fn keywords_match_the_transaction_of_their_direction() {
    use crate::registry::TxMatch;
    let mut s = state();
    s.parse(Dir::ToServer, &hex(SELECT));
    s.parse(Dir::ToClient, &hex(SELECT_RESP));
    let func = keywords::Func(3);
    assert_eq!(func.matches(&s, 0, Dir::ToServer), Some(true));
    assert_eq!(func.matches(&s, 0, Dir::ToClient), Some(false));
    assert_eq!(
        keywords::Func(129).matches(&s, 1, Dir::ToClient),
        Some(true)
    );
    let obj = keywords::Obj { gv: Some((12, 1)) };
    assert_eq!(obj.matches(&s, 0, Dir::ToServer), Some(true));
    assert_eq!(obj.matches(&s, 1, Dir::ToClient), Some(true));
    let other = keywords::Obj { gv: Some((12, 2)) };
    assert_eq!(other.matches(&s, 0, Dir::ToServer), Some(false));
    // The response's IIN is zero: no indication matches.
    assert_eq!(
        keywords::Ind(0xffff).matches(&s, 1, Dir::ToClient),
        Some(false)
    );
    let mut seen = Vec::new();
    assert!(s.buffer(0, 0, Dir::ToServer, &mut |b| {
        seen = b.to_vec();
        true
    }));
    assert_eq!(&seen[..2], &[0xc7, 0x03]);
    assert!(!s.buffer(0, 0, Dir::ToClient, &mut |_| true));
}

#[test]
fn random_objects_in_valid_frames_never_panic() {
    let mut x = 0x1234_5678u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let groups = [
        1u8, 2, 3, 10, 12, 20, 30, 32, 40, 41, 50, 51, 60, 70, 80, 83, 110, 120, 121,
    ];
    for _ in 0..5000 {
        let mut s = state();
        for _ in 0..4 {
            let len = (next() % 200) as usize;
            let mut app = vec![0xc0u8, (next() % 4) as u8];
            for i in 0..len {
                let r = next();
                app.push(match i % 9 {
                    0 => groups[(r as usize) % groups.len()],
                    1 => (r % 8) as u8,
                    _ => r as u8,
                });
            }
            let f = frame(0xc4, &app);
            s.parse(Dir::ToServer, &f);
            // The same as a response (two IIN octets after the function code).
            s.parse(Dir::ToClient, &frame(0x44, &app));
        }
        let mut w = shrike_output::JsonWriter::new();
        for t in s.txs() {
            w.start_object();
            write_tx(&mut w, t);
            w.close();
        }
    }
}
