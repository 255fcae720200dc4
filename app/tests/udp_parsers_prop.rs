//! Property tests for the SNMP, DHCP, IKE, Kerberos 5 and NTP parsers through the registry
//! trait: arbitrary datagrams (or TCP chunks for Kerberos) in both directions never panic,
//! transaction ids stay below `tx_count`, live transactions are bounded, every buffer, event
//! and keyword of every live transaction can be read, and the alert objects are valid JSON.

use proptest::prelude::*;
use shrike_app::registry::{AppParser, Detect, ParserConfig, Protocol};
use shrike_app::Dir;
use shrike_output::JsonWriter;

/// Keyword values the rules of each protocol could carry (parsed once per case).
fn keyword_values(name: &str) -> &'static [&'static str] {
    match name {
        "ike.chosen_sa_attribute" => &["alg_enc=7", "alg_dh=2"],
        "krb5.ticket_encryption" => &["weak", "rc4-hmac, 18"],
        _ => &["1", ">0", "!3"],
    }
}

fn exercise(proto: &'static Protocol, tcp: bool, steps: &[(bool, Vec<u8>)]) {
    let mut st: Box<dyn AppParser> = (proto.new_parser)(&ParserConfig::default(), tcp);
    let detect = if tcp { proto.tcp } else { proto.udp };
    for (ts, d) in steps {
        let dir = if *ts { Dir::ToServer } else { Dir::ToClient };
        if let Detect::Port(f) | Detect::Pattern(f) = detect {
            let _ = f(dir, d);
        }
        let _ = st.parse(dir, d);
        let mut live = Vec::new();
        st.live_txs(dir, &mut live);
        assert!(live.len() <= 512, "live transactions are bounded");
        for &tx in &live {
            assert!(tx < st.tx_count());
            for b in 0..proto.buffers.len() as u16 {
                st.buffer(tx, b, dir, &mut |x| x.is_empty());
            }
            for e in 0..proto.events.len() as u16 {
                let _ = st.has_event(tx, e);
            }
            for k in proto.keywords {
                for v in keyword_values(k.name) {
                    if let Ok(m) = (k.setup)(Some(v)) {
                        let _ = m.matches(st.as_ref(), tx, dir);
                    }
                }
            }
            let mut w = JsonWriter::with_capacity(256);
            w.start_object();
            st.alert_members(tx, &mut w);
            w.close();
            let out = w.into_inner();
            assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
        }
    }
}

/// A valid message of each protocol, to mutate.
fn seed(name: &str) -> Vec<u8> {
    match name {
        // SNMPv1 get-request, community "public".
        "snmp" => vec![
            0x30, 0x26, 0x02, 0x01, 0x00, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0,
            0x19, 0x02, 0x01, 0x01, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30, 0x0c,
            0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x05, 0x00, 0x05, 0x00,
        ],
        // BOOTP reply with a few options.
        "dhcp" => {
            let mut d = vec![0u8; 240];
            d[0] = 2;
            d[2] = 6;
            d[236..240].copy_from_slice(&[0x63, 0x82, 0x53, 0x63]);
            d.extend_from_slice(&[53, 1, 5, 51, 4, 0, 0, 1, 0, 61, 3, 1, 2, 3, 255]);
            d
        }
        // IKEv1 header + SA/proposal/transform.
        "ike" => {
            let mut d = vec![1u8; 8];
            d.extend_from_slice(&[0; 8]);
            d.extend_from_slice(&[1, 0x10, 2, 0, 0, 0, 0, 0, 0, 0, 0, 60]);
            d.extend_from_slice(&[0, 0, 0, 32, 0, 0, 0, 1, 0, 0, 0, 1]);
            d.extend_from_slice(&[0, 0, 0, 20, 1, 1, 0, 1]);
            d.extend_from_slice(&[0, 0, 0, 12, 1, 1, 0, 0, 0x80, 0x01, 0x00, 0x07]);
            d
        }
        // KRB-ERROR (KDC_ERR_PREAUTH_REQUIRED) for krbtgt/EXAMPLE.COM.
        "krb5" => krb_error(),
        // NTPv4 client.
        _ => {
            let mut d = vec![0u8; 48];
            d[0] = 0x23;
            d
        }
    }
}

fn krb_error() -> Vec<u8> {
    fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag, body.len() as u8];
        v.extend_from_slice(body);
        v
    }
    let int = |n: u8| tlv(0x02, &[n]);
    let gstr = |s: &str| tlv(0x1b, s.as_bytes());
    let pname = tlv(
        0x30,
        &[
            tlv(0xa0, &int(2)),
            tlv(
                0xa1,
                &tlv(0x30, &[gstr("krbtgt"), gstr("EXAMPLE.COM")].concat()),
            ),
        ]
        .concat(),
    );
    let body = [
        tlv(0xa0, &int(5)),
        tlv(0xa1, &int(30)),
        tlv(0xa4, &tlv(0x18, b"20200101000000Z")),
        tlv(0xa5, &int(0)),
        tlv(0xa6, &int(25)),
        tlv(0xa9, &gstr("EXAMPLE.COM")),
        tlv(0xaa, &pname),
    ]
    .concat();
    tlv(0x7e, &tlv(0x30, &body))
}

fn protocols() -> [(&'static Protocol, bool); 6] {
    [
        (&shrike_app::snmp::PROTOCOL, false),
        (&shrike_app::dhcp::PROTOCOL, false),
        (&shrike_app::ike::PROTOCOL, false),
        (&shrike_app::krb5::PROTOCOL, false),
        (&shrike_app::krb5::PROTOCOL, true),
        (&shrike_app::ntp::PROTOCOL, false),
    ]
}

proptest! {
    #[test]
    fn arbitrary_datagrams_never_panic(
        steps in proptest::collection::vec((any::<bool>(), proptest::collection::vec(any::<u8>(), 0..300)), 1..8)
    ) {
        for (p, tcp) in protocols() {
            exercise(p, tcp, &steps);
        }
    }

    #[test]
    fn mutated_messages_never_panic(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
        ts in any::<bool>(),
    ) {
        for (p, tcp) in protocols() {
            let mut m = seed(p.name);
            for (i, v) in &flips {
                let n = m.len();
                m[i % n] ^= v;
            }
            let keep = m.len() - cut % (m.len() / 2 + 1);
            m.truncate(keep);
            let mut framed = m.clone();
            if tcp {
                framed = (m.len() as u32).to_be_bytes().to_vec();
                framed.extend_from_slice(&m);
            }
            exercise(p, tcp, &[(ts, framed.clone()), (!ts, framed)]);
        }
    }
}

#[test]
fn seeds_parse_as_their_protocol() {
    for (p, tcp) in protocols() {
        let mut st: Box<dyn AppParser> = (p.new_parser)(&ParserConfig::default(), tcp);
        let mut m = seed(p.name);
        if tcp {
            let mut f = (m.len() as u32).to_be_bytes().to_vec();
            f.extend_from_slice(&m);
            m = f;
        }
        assert!(!st.parse(Dir::ToServer, &m), "{} seed parses", p.name);
        assert_eq!(st.tx_count(), 1, "{} seed is one transaction", p.name);
    }
}
