//! SMTP parser tests.

use super::*;

fn state() -> SmtpState {
    SmtpState::new(std::sync::Arc::new(SmtpConfig::default()))
}

fn session(s: &mut SmtpState, steps: &[(Dir, &[u8])], split: usize) {
    for (d, data) in steps {
        for c in data.chunks(split.max(1)) {
            AppParser::parse(s, *d, c);
        }
    }
}

const MSG: &[(Dir, &[u8])] = &[
    (Dir::ToClient, b"220 mx ESMTP\r\n"),
    (Dir::ToServer, b"EHLO client.example\r\n"),
    (Dir::ToClient, b"250-mx\r\n250-PIPELINING\r\n250 8BITMIME\r\n"),
    (Dir::ToServer, b"MAIL FROM:<a@b.c> SIZE=10\r\n"),
    (Dir::ToClient, b"250 ok\r\n"),
    (Dir::ToServer, b"RCPT TO:<x@y.z>\r\nRCPT TO: <w@y.z>\r\n"),
    (Dir::ToClient, b"250 ok\r\n250 ok\r\n"),
    (Dir::ToServer, b"DATA\r\n"),
    (Dir::ToClient, b"354 go\r\n"),
    (
        Dir::ToServer,
        b"From: A <a@b.c>\r\nTo: x@y.z, w@y.z\r\nSubject: s\r\n\r\nhello http://Evil.example/x.exe\r\n.\r\n",
    ),
    (Dir::ToClient, b"250 queued\r\n"),
    (Dir::ToServer, b"QUIT\r\n"),
    (Dir::ToClient, b"221 bye\r\n"),
];

#[test]
fn envelope_message_and_reply_matching_at_any_split() {
    for split in [1, 2, 7, 1000] {
        let mut s = state();
        session(&mut s, MSG, split);
        assert_eq!(s.helo.as_deref(), Some(&b"client.example"[..]));
        let t = s.tx(0).unwrap();
        assert!(t.done);
        assert_eq!(t.mail_from.as_deref(), Some(&b"<a@b.c>"[..]));
        assert_eq!(t.rcpt_to, vec![b"<x@y.z>".to_vec(), b"<w@y.z>".to_vec()]);
        let m = t.mime.as_ref().unwrap();
        assert_eq!(m.status, Status::ParseDone);
        assert_eq!(m.msg().field(b"subject"), Some(&b"s"[..]));
        let urls: Vec<_> = m.log_urls().map(|u| u.url.clone()).collect();
        assert_eq!(urls, vec![b"evil.example/x.exe".to_vec()]);
        assert!(t.events.is_empty(), "split {split}");
        // QUIT after the completed (still held) transaction opens no new one.
        assert_eq!(s.tx_count(), 1);
        assert!(s.parser_state & PS_PIPELINING != 0);
    }
}

#[test]
fn email_object_fields() {
    let mut s = state();
    session(&mut s, MSG, 1000);
    let mut w = JsonWriter::with_capacity(256);
    w.start_object();
    s.write_objects(s.tx(0).unwrap(), &mut w);
    w.close();
    let v: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
    assert_eq!(v["smtp"]["rcpt_to"][1], "<w@y.z>");
    assert_eq!(v["email"]["from"], "A <a@b.c>");
    assert_eq!(v["email"]["to"][1], "w@y.z");
    assert_eq!(v["email"]["status"], "PARSE_DONE");
    assert_eq!(v["email"]["has_exe_url"], true);
    assert_eq!(v["email"]["url"][0], "evil.example/x.exe");
}

#[test]
fn rset_completes_and_starttls_upgrades() {
    let mut s = state();
    session(
        &mut s,
        &[
            (Dir::ToClient, b"220 hi\r\n"),
            (Dir::ToServer, b"HELO a\r\nMAIL FROM:<a>\r\nRSET\r\n"),
            (Dir::ToClient, b"250 a\r\n250 b\r\n250 c\r\n"),
            (Dir::ToServer, b"MAIL FROM:<b>\r\nSTARTTLS\r\n"),
            (Dir::ToClient, b"250 ok\r\n220 go ahead\r\n"),
        ],
        1000,
    );
    assert!(s.tx(0).unwrap().done);
    assert_eq!(s.tx(1).unwrap().mail_from.as_deref(), Some(&b"<b>"[..]));
    assert!(s.tx(1).unwrap().done);
    assert_eq!(s.switch_to(), Some(AppProto::TLS));
}

#[test]
fn bad_replies_and_limits() {
    let mut s = state();
    session(&mut s, &[(Dir::ToServer, b"HELO a\r\n")], 1000);
    assert!(s.tx(0).unwrap().has(SmtpEvent::NoServerWelcomeMessage));
    assert!(AppParser::parse(&mut s, Dir::ToClient, b"99\r\n"));
    assert!(s.tx(0).unwrap().has(SmtpEvent::InvalidReply));
    // A too long command line is cut and flagged.
    let mut s = state();
    let mut long = b"HELO ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 10000));
    long.extend_from_slice(b"\r\nMAIL FROM:<x>\r\n");
    session(
        &mut s,
        &[(Dir::ToClient, b"220 x\r\n"), (Dir::ToServer, &long)],
        100,
    );
    assert!(s.tx(0).unwrap().has(SmtpEvent::TruncatedLine));
    assert_eq!(s.helo.as_ref().map(Vec::len), Some(LINE_LIMIT - 5));
    assert!(s.pending[0].len() <= LINE_LIMIT);
    // BDAT longer than announced.
    let mut s = state();
    session(
        &mut s,
        &[
            (Dir::ToClient, b"220 x\r\n"),
            (Dir::ToServer, b"EHLO a\r\nBDAT 3 LAST\r\nabcdef\r\n"),
        ],
        1000,
    );
    assert!(s.failed);
    assert!(s.tx(0).unwrap().has(SmtpEvent::BdatChunkLenExceeded));
}

#[test]
fn attachment_becomes_a_file() {
    let mut s = state();
    let body: &[u8] = b"Content-Type: multipart/mixed; boundary=zz\r\n\r\n--zz\r\n\
Content-Type: text/plain\r\n\r\nhi\r\n--zz\r\nContent-Type: application/x; name=\"a.bin\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\nQUJD\r\nREVG\r\n--zz--\r\n.\r\n";
    session(
        &mut s,
        &[
            (Dir::ToClient, b"220 x\r\n"),
            (
                Dir::ToServer,
                b"EHLO a\r\nMAIL FROM:<a>\r\nRCPT TO:<b>\r\nDATA\r\n",
            ),
            (Dir::ToClient, b"250 a\r\n250 b\r\n250 c\r\n354 d\r\n"),
            (Dir::ToServer, body),
        ],
        5,
    );
    let t = s.tx(0).unwrap();
    assert_eq!(t.files.len(), 1);
    assert_eq!(t.files[0].file.name(), b"a.bin");
    assert_eq!(t.files[0].data, b"ABCDEF");
    assert!(t.files[0].closed());
    assert_eq!(t.files[0].file.size(), 6);
}

#[test]
fn probe_patterns() {
    assert_eq!(probe(Dir::ToServer, b"ehlo x"), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, b"HE"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"GET /"), Probe::No);
    assert_eq!(probe(Dir::ToClient, b"EHLO"), Probe::No);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that steer the parsers into their states.
    const WORDS: &[&[u8]] = &[
        b"EHLO a\r\n",
        b"MAIL FROM:<a>\r\n",
        b"RCPT TO:<b>\r\n",
        b"DATA\r\n",
        b"BDAT 5\r\n",
        b"BDAT -1 LAST\r\n",
        b"RSET\r\n",
        b"STARTTLS\r\n",
        b".\r\n",
        b"220 x\r\n",
        b"250-PIPELINING\r\n",
        b"250 ok\r\n",
        b"354 go\r\n",
        b"Content-Type: multipart/mixed; boundary=b\r\n",
        b"Content-Type: message/rfc822\r\n",
        b"Content-Transfer-Encoding: base64\r\n",
        b"Content-Transfer-Encoding: quoted-printable\r\n",
        b"Content-Disposition: attachment; filename*0=a; filename*1=b\r\n",
        b"\r\n",
        b"--b\r\n",
        b"--b--\r\n",
        b"QUJD=\r\n",
        b"=4\r\n",
        b"http://x.example/a.exe?q\r\n",
        b"\n",
        b"\r",
        b"USER a\r\n",
        b"PASV\r\n",
        b"227 (1,2,3,4,5,6)\r\n",
        b"PORT 1,2,3,4,5,6\r\n",
        b"RETR f\r\n",
        b"150 x\r\n",
        b"AUTH TLS\r\n",
        b"234 go\r\n",
    ];

    fn pieces() -> impl Strategy<Value = Vec<(bool, Vec<u8>)>> {
        let piece = prop_oneof![
            (0..WORDS.len()).prop_map(|i| WORDS[i].to_vec()),
            proptest::collection::vec(any::<u8>(), 0..64),
        ];
        proptest::collection::vec((any::<bool>(), piece), 0..60)
    }

    fn drive(p: &crate::registry::Protocol, steps: &[(bool, Vec<u8>)], split: usize) {
        let mut st = (p.new_parser)(&crate::registry::ParserConfig::default(), true);
        for (ts, d) in steps {
            let dir = if *ts { Dir::ToServer } else { Dir::ToClient };
            for c in d.chunks(split.max(1)) {
                let _ = st.parse(dir, c);
            }
        }
        st.close();
        let mut txs = Vec::new();
        st.live_txs(Dir::ToServer, &mut txs);
        for &tx in &txs {
            for b in 0..p.buffers.len() as u16 {
                for d in [Dir::ToServer, Dir::ToClient] {
                    let _ = st.buffer_ready(tx, b, d, true);
                    st.buffer(tx, b, d, &mut |_| false);
                }
            }
            let mut w = JsonWriter::with_capacity(256);
            w.start_object();
            st.alert_members(tx, &mut w);
            w.close();
            assert!(serde_json::from_slice::<serde_json::Value>(w.as_bytes()).is_ok());
        }
        let mut ev = 0;
        st.drain_events(0, false, &mut |_| ev += 1);
    }

    proptest! {
        #[test]
        fn smtp_takes_any_input(steps in pieces(), split in 1usize..40) {
            drive(&crate::smtp::PROTOCOL, &steps, split);
        }
    }
}
