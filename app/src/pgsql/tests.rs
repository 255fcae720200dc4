use super::*;

fn typed(t: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![t];
    v.extend(((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn startup() -> Vec<u8> {
    let mut b = vec![0, 3, 0, 0];
    b.extend(b"user\0rules\0database\0rules\0DateStyle\0ISO\0\0");
    let mut v = ((b.len() + 4) as u32).to_be_bytes().to_vec();
    v.extend(b);
    v
}

fn state() -> PgsqlState {
    PgsqlState::new(PgsqlConfig {
        enabled: true,
        ..PgsqlConfig::default()
    })
}

fn json(t: &PgsqlTx, pw: bool) -> serde_json::Value {
    let mut w = JsonWriter::new();
    w.start_object();
    write_pgsql(&mut w, t, pw);
    w.close();
    serde_json::from_slice(w.as_bytes()).unwrap()
}

#[test]
fn probes() {
    assert_eq!(probe(Dir::ToServer, &startup()), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &startup()[..10]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"), Probe::No);
    assert_eq!(probe(Dir::ToClient, b"N"), Probe::Yes);
    assert_eq!(
        probe(Dir::ToClient, &typed(b'R', &[0, 0, 0, 0])),
        Probe::Yes
    );
    let cfg = ParserConfig::default();
    assert!(!cfg.enabled("pgsql") && cfg.enabled("mqtt"));
}

#[test]
fn ssl_rejected_md5_auth_and_query_in_pieces() {
    for chunk in [1, 3, 1000] {
        let mut st = state();
        let feed = |st: &mut PgsqlState, d: Dir, b: &[u8]| {
            for c in b.chunks(chunk) {
                assert!(!AppParser::parse(st, d, c));
            }
        };
        let mut ssl = 8u32.to_be_bytes().to_vec();
        ssl.extend([0x04, 0xd2, 0x16, 0x2f]);
        feed(&mut st, Dir::ToServer, &ssl);
        feed(&mut st, Dir::ToClient, b"N");
        feed(&mut st, Dir::ToServer, &startup());
        feed(
            &mut st,
            Dir::ToClient,
            &typed(b'R', &[0, 0, 0, 5, 1, 2, 3, 4]),
        );
        feed(&mut st, Dir::ToServer, &typed(b'p', b"md5secret\0"));
        let mut r = typed(b'R', &[0, 0, 0, 0]);
        r.extend(typed(b'S', b"application_name\0psql\0"));
        r.extend(typed(b'S', b"TimeZone\0UTC\0"));
        r.extend(typed(b'K', &[0, 0, 0, 7, 0, 0, 0, 9]));
        r.extend(typed(b'Z', b"I"));
        feed(&mut st, Dir::ToClient, &r);
        feed(&mut st, Dir::ToServer, &typed(b'Q', b"select 1;\0"));
        let mut r = typed(
            b'T',
            &[
                0, 1, b'a', 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 23, 0, 4, 0, 0, 0, 0, 0, 0,
            ],
        );
        r.extend(typed(b'D', &[0, 1, 0, 0, 0, 1, b'1']));
        r.extend(typed(b'D', &[0, 1, 0, 0, 0, 2, b'1', b'0']));
        r.extend(typed(b'C', b"SELECT 2\0"));
        r.extend(typed(b'Z', b"I"));
        feed(&mut st, Dir::ToClient, &r);
        assert_eq!(st.tx_count(), 4);
        let j = json(st.tx(0).unwrap(), false);
        assert_eq!(j["pgsql"]["tx_id"], 1);
        assert_eq!(j["pgsql"]["request"]["message"], "SSL Request");
        assert_eq!(j["pgsql"]["response"]["ssl_accepted"], false);
        let j = json(st.tx(1).unwrap(), false);
        assert_eq!(j["pgsql"]["request"]["protocol_version"], "3.0");
        assert_eq!(j["pgsql"]["request"]["startup_parameters"]["user"], "rules");
        assert_eq!(
            j["pgsql"]["request"]["startup_parameters"]["optional_parameters"][1]["date_style"],
            "ISO"
        );
        assert_eq!(
            j["pgsql"]["response"]["authentication_md5_password"],
            "\u{1}\u{2}\u{3}\u{4}"
        );
        let t = st.tx(2).unwrap();
        assert!(json(t, false)["pgsql"]["request"].get("password").is_none());
        let j = json(t, true);
        assert_eq!(j["pgsql"]["request"]["password"], "md5secret");
        assert_eq!(j["pgsql"]["response"]["message"], "authentication_ok");
        assert_eq!(
            j["pgsql"]["response"]["parameter_status"][1]["time_zone"],
            "UTC"
        );
        assert_eq!(j["pgsql"]["response"]["process_id"], 7);
        let j = json(st.tx(3).unwrap(), false);
        assert_eq!(j["pgsql"]["request"]["simple_query"], "select 1;");
        assert_eq!(j["pgsql"]["response"]["field_count"], 1);
        assert_eq!(j["pgsql"]["response"]["data_rows"], 2);
        assert_eq!(j["pgsql"]["response"]["data_size"], 3);
        assert_eq!(j["pgsql"]["response"]["command_completed"], "SELECT 2");
        let mut q = Vec::new();
        st.buffer(3, 0, Dir::ToServer, &mut |v| {
            q.extend_from_slice(v);
            false
        });
        assert_eq!(q, b"select 1;");
    }
}

#[test]
fn errors_and_noise() {
    let mut st = state();
    assert!(!AppParser::parse(
        &mut st,
        Dir::ToServer,
        &typed(b'Q', b"bad\0")
    ));
    let e = typed(b'E', b"SERROR\0VERROR\0C42601\0Msyntax error\0\0");
    assert!(!AppParser::parse(&mut st, Dir::ToClient, &e));
    let j = json(st.tx(0).unwrap(), false);
    assert_eq!(j["pgsql"]["response"]["code"], "42601");
    assert_eq!(j["pgsql"]["response"]["message"], "syntax error");
    assert_eq!(j["pgsql"]["response"]["severity_non_localizable"], "ERROR");
    // A bad length ends parsing.
    assert!(AppParser::parse(
        &mut st,
        Dir::ToClient,
        &[b'Z', 0, 0, 0, 9, b'I']
    ));
    let mut seed = 7u32;
    for _ in 0..200 {
        let mut st = state();
        let mut d = vec![0u8; 48];
        for b in d.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            *b = seed as u8;
        }
        let _ = AppParser::parse(&mut st, Dir::ToServer, &d);
        let _ = AppParser::parse(&mut st, Dir::ToClient, &d);
    }
}
