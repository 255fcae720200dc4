use super::keywords::{CipServiceMatch, EnipCommand};
use super::*;

fn hdr(command: u16, len: u16, status: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&command.to_le_bytes());
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(&0x1234u32.to_le_bytes());
    v.extend_from_slice(&status.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&0u32.to_le_bytes());
    v
}

/// SendRRData with one unconnected item holding `cip`.
fn rr(cip: &[u8]) -> Vec<u8> {
    let mut body = vec![0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xb2, 0];
    body.extend_from_slice(&(cip.len() as u16).to_le_bytes());
    body.extend_from_slice(cip);
    let mut v = hdr(cmd::SEND_RR_DATA, body.len() as u16, 0);
    v.extend_from_slice(&body);
    v
}

#[test]
fn probe_as_suricata() {
    assert_eq!(
        probe(Dir::ToServer, &hdr(cmd::LIST_IDENTITY, 0, 0)),
        Probe::Yes
    );
    assert_eq!(
        probe(Dir::ToServer, &hdr(cmd::REGISTER_SESSION, 4, 0)),
        Probe::Yes
    );
    assert_eq!(
        probe(Dir::ToServer, &hdr(cmd::REGISTER_SESSION, 5, 0)),
        Probe::No
    );
    assert_eq!(
        probe(Dir::ToServer, &hdr(cmd::LIST_IDENTITY, 0, 7)),
        Probe::No
    );
    assert_eq!(probe(Dir::ToServer, &hdr(0x99, 0, 0)), Probe::No);
    assert_eq!(probe(Dir::ToServer, &[0x63, 0]), Probe::NeedMore);
}

#[test]
fn one_transaction_per_pdu_and_cip_services() {
    let mut st = EnipState::default();
    // Get_Attribute_Single class 1 instance 1 attribute 5.
    let get = [0x0e, 3, 0x20, 1, 0x24, 1, 0x30, 5];
    let mut data = hdr(cmd::LIST_IDENTITY, 0, 0);
    data.extend_from_slice(&rr(&get));
    assert!(!st.parse(Dir::ToServer, &data));
    assert_eq!(st.tx_count(), 2);
    assert_eq!(st.tx(0).map(|t| t.command), Some(cmd::LIST_IDENTITY));
    let t = st.tx(1).expect("tx");
    assert_eq!(t.services.len(), 1);
    assert_eq!(t.services[0].service, 0x0e);
    assert_eq!(t.services[0].segments, vec![(0x20, 1), (0x30, 1)]);

    let m = |v: &str| CipServiceMatch::parse(Some(v)).expect("parse");
    assert!(m("14").matches_tx(t));
    assert!(m("14,1").matches_tx(t));
    assert!(!m("14,2").matches_tx(t));
    // Suricata compares the attribute with the class it stored in the segment.
    assert!(m("14,1,1").matches_tx(t));
    assert!(!m("14,1,5").matches_tx(t));
    assert!(m("14,1,!9").matches_tx(t));
    assert!(!m("10").matches_tx(t));

    // A response does not match.
    let mut st2 = EnipState::default();
    st2.parse(Dir::ToClient, &rr(&[0x8e, 0, 0, 0, 1]));
    let r = st2.tx(0).expect("tx");
    assert!(r.services[0].response);
    assert!(!m("14").matches_tx(r));
}

#[test]
fn multiple_service_packet_and_attribute_list() {
    // MSP to the message router (class 2 instance 1) with two services at offsets 6, 10.
    let cip = [
        0x0a, 2, 0x20, 2, 0x24, 1, // MSP, path
        2, 0, 6, 0, 12, 0, // count, offsets
        0x01, 1, 0x20, 1, 0x24, 1, // Get_Attribute_All class 1
        0x03, 2, 0x20, 4, 0x24, 1, 2, 0, 7, 0, 9, 0, // Get_Attribute_List class 4: 7, 9
    ];
    let mut st = EnipState::default();
    st.parse(Dir::ToServer, &rr(&cip));
    let t = st.tx(0).expect("tx");
    let codes: Vec<u8> = t.services.iter().map(|s| s.service).collect();
    assert_eq!(codes, vec![0x0a, 0x01, 0x03]);
    assert_eq!(t.services[2].attributes, vec![7, 9]);
    let m = |v: &str| CipServiceMatch::parse(Some(v)).expect("parse");
    assert!(m("10").matches_tx(t));
    assert!(m("1").matches_tx(t));
    assert!(m("3,4,9").matches_tx(t));
    assert!(!m("3,4,8").matches_tx(t));
}

#[test]
fn keyword_values_as_suricata() {
    assert_eq!(EnipCommand::parse(Some("99")), Ok(EnipCommand(99)));
    assert!(EnipCommand::parse(Some("x")).is_err());
    assert!(EnipCommand::parse(Some("70000")).is_err());
    assert!(CipServiceMatch::parse(Some("128")).is_err());
    assert!(CipServiceMatch::parse(Some("1,2,3,4")).is_err());
    assert!(CipServiceMatch::parse(Some("a")).is_err());
    assert!(CipServiceMatch::parse(Some("")).is_err());
    let m = CipServiceMatch::parse(Some("14,1,!5")).expect("parse");
    assert_eq!((m.service, m.class, m.attribute, m.tokens), (14, 1, 5, 3));
    assert!(!m.match_attribute);
}

#[test]
fn no_panic_on_truncations() {
    let cip = [0x0a, 2, 0x20, 2, 0x24, 1, 0xff, 0xff, 6, 0, 0xff, 0xff];
    let full = rr(&cip);
    for n in 0..=full.len() {
        let mut st = EnipState::default();
        st.parse(Dir::ToServer, &full[..n]);
        let _ = probe(Dir::ToServer, &full[..n]);
    }
    let mut st = EnipState::default();
    for b in 0..=255u8 {
        let mut d = full.clone();
        for x in d.iter_mut().skip(24) {
            *x ^= b;
        }
        st.parse(Dir::ToClient, &d);
    }
}
