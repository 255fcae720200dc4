use super::parser::*;
use super::*;

/// A message: the first byte, then the remaining length as a variable integer, then `body`.
fn msg(first: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![first];
    let mut n = body.len();
    loop {
        let mut b = (n % 128) as u8;
        n /= 128;
        if n > 0 {
            b |= 128;
        }
        v.push(b);
        if n == 0 {
            break;
        }
    }
    v.extend_from_slice(body);
    v
}

fn s(v: &str) -> Vec<u8> {
    let mut o = (v.len() as u16).to_be_bytes().to_vec();
    o.extend_from_slice(v.as_bytes());
    o
}

/// CONNECT, MQTT 3.1.1, with username and password.
fn connect_v4() -> Vec<u8> {
    let mut b = s("MQTT");
    b.extend([4, 0xc2, 0, 60]);
    b.extend(s("client-1"));
    b.extend(s("user"));
    b.extend(s("secret"));
    msg(0x10, &b)
}

/// CONNECT, MQTT 5, with a will (and will properties) and a session expiry property.
fn connect_v5() -> Vec<u8> {
    let mut b = s("MQTT");
    b.extend([5, 0x06, 0, 30]);
    b.extend([5, 17, 0, 0, 0, 10]); // properties: session expiry 10
    b.extend(s("c5"));
    b.extend([2, 1, 1]); // will properties: payload format 1
    b.extend(s("will/t"));
    b.extend(s("bye"));
    msg(0x10, &b)
}

fn publish(qos: u8, id: u16, topic: &str, payload: &[u8]) -> Vec<u8> {
    let mut b = s(topic);
    if qos > 0 {
        b.extend(id.to_be_bytes());
    }
    b.extend_from_slice(payload);
    msg(0x30 | (qos << 1), &b)
}

fn state() -> MqttState {
    MqttState::new(MqttConfig::default())
}

fn feed_all(st: &mut MqttState, dir: Dir, data: &[u8], chunk: usize) {
    for c in data.chunks(chunk.max(1)) {
        assert!(!AppParser::parse(st, dir, c));
    }
}

#[test]
fn probe_as_suricata() {
    assert_eq!(probe(Dir::ToServer, &connect_v4()), Probe::Yes);
    assert_eq!(probe(Dir::ToServer, &[0x10]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, &[0x10, 0x80]), Probe::NeedMore);
    // Type 0 and QoS 3 are refused, so is a length of five bytes.
    assert_eq!(probe(Dir::ToServer, &[0x00, 0x00]), Probe::No);
    assert_eq!(probe(Dir::ToServer, &[0x36, 0x00]), Probe::No);
    assert_eq!(
        probe(Dir::ToServer, &[0x30, 0xff, 0xff, 0xff, 0xff]),
        Probe::No
    );
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n"), Probe::No);
}

#[test]
fn connect_connack_pair_in_every_split() {
    for chunk in [1, 2, 3, 7, 1000] {
        let mut st = state();
        feed_all(&mut st, Dir::ToServer, &connect_v4(), chunk);
        assert_eq!(st.tx_count(), 1);
        assert!(!st.tx(0).unwrap().complete);
        feed_all(&mut st, Dir::ToClient, &msg(0x20, &[1, 0]), chunk);
        let t = st.tx(0).unwrap();
        assert!(t.complete && t.msgs.len() == 2 && t.events == 0);
        let c = t.connect().unwrap();
        assert_eq!(c.client_id, "client-1");
        assert_eq!(c.username.as_deref(), Some("user"));
        assert_eq!(c.password.as_deref(), Some(&b"secret"[..]));
        assert!(c.username_flag && c.password_flag && c.clean_session && !c.will_flag);
        assert_eq!(st.protocol_version, 4);
        let Op::Connack(a) = &t.msgs[1].op else {
            panic!("{t:?}")
        };
        assert!(a.session_present);
    }
}

#[test]
fn v5_properties_and_will() {
    let mut st = state();
    feed_all(&mut st, Dir::ToServer, &connect_v5(), 1000);
    let c = st.tx(0).unwrap().connect().unwrap();
    assert_eq!(c.properties, Some(vec![Property::U32(17, 10)]));
    assert_eq!(c.will_properties, Some(vec![Property::U8(1, 1)]));
    assert_eq!(c.will_topic.as_deref(), Some("will/t"));
    assert_eq!(c.will_message.as_deref(), Some(&b"bye"[..]));
    // A v5 CONNACK with a user property and a reason string.
    let mut b = vec![0, 0x86];
    let mut props = vec![38];
    props.extend(s("k"));
    props.extend(s("v"));
    props.push(31);
    props.extend(s("bad"));
    b.push(props.len() as u8);
    b.extend(props);
    feed_all(&mut st, Dir::ToClient, &msg(0x20, &b), 1000);
    let t = st.tx(0).unwrap();
    let mut w = JsonWriter::new();
    w.start_object();
    eve::write_mqtt(&mut w, t, &eve::MqttLogConfig::default());
    w.close();
    let j: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
    assert_eq!(j["mqtt"]["connack"]["return_code"], 134);
    assert_eq!(j["mqtt"]["connack"]["properties"]["k"], "v");
    assert_eq!(j["mqtt"]["connack"]["properties"]["reason_string"], "bad");
    assert_eq!(j["mqtt"]["connect"]["will"]["topic"], "will/t");
    assert_eq!(
        j["mqtt"]["connect"]["will"]["properties"]["payload_format_indicator"],
        1
    );
    assert_eq!(
        j["mqtt"]["connect"]["properties"]["session_expiry_interval"],
        10
    );
    assert_eq!(j["mqtt"]["connect"]["flags"]["will"], true);
}

#[test]
fn publish_qos_flows_and_pipelining() {
    let mut st = state();
    let mut cli = connect_v4();
    cli.extend(publish(0, 0, "a/b", b"zero"));
    cli.extend(publish(1, 7, "a/c", b"one"));
    cli.extend(publish(2, 8, "a/d", b"two"));
    feed_all(&mut st, Dir::ToServer, &cli, 5);
    // The CONNECT's buffers wait for the CONNACK (Suricata's prefilter progress).
    assert_eq!(
        st.buffer_ready(0, buf::CLIENTID, Dir::ToServer, false),
        None
    );
    feed_all(&mut st, Dir::ToClient, &msg(0x20, &[0, 0]), 1000);
    assert_eq!(
        st.buffer_ready(0, buf::CLIENTID, Dir::ToServer, false),
        Some(true)
    );
    assert_eq!(st.tx_count(), 4);
    // QoS 0 is complete at once; QoS 1 waits for PUBACK; QoS 2 for PUBCOMP.
    assert!(st.tx(1).unwrap().complete);
    assert!(!st.tx(2).unwrap().complete);
    let mut srv = msg(0x40, &[0, 7]);
    srv.extend(msg(0x50, &[0, 8]));
    feed_all(&mut st, Dir::ToClient, &srv, 3);
    assert!(st.tx(2).unwrap().complete);
    assert!(!st.tx(3).unwrap().complete);
    feed_all(&mut st, Dir::ToServer, &msg(0x62, &[0, 8]), 1);
    feed_all(&mut st, Dir::ToClient, &msg(0x70, &[0, 8]), 1);
    let t = st.tx(3).unwrap();
    assert!(t.complete);
    assert_eq!(t.msgs.len(), 4);
    // The messages before the CONNACK were unintroduced.
    assert!(st.tx(1).unwrap().has(MqttEvent::UnintroducedMessage));
    assert_eq!(st.tx_count(), 4);
    // Buffers.
    let mut got = Vec::new();
    st.buffer(2, buf::PUB_TOPIC, Dir::ToServer, &mut |v| {
        got.push(v.to_vec());
        false
    });
    st.buffer(2, buf::PUB_MESSAGE, Dir::ToServer, &mut |v| {
        got.push(v.to_vec());
        false
    });
    assert_eq!(got, vec![b"a/c".to_vec(), b"one".to_vec()]);
}

#[test]
fn events_for_unpaired_and_bad_messages() {
    let mut st = state();
    feed_all(&mut st, Dir::ToClient, &msg(0x20, &[0, 0]), 1000);
    assert!(st.tx(0).unwrap().has(MqttEvent::MissingConnect));
    feed_all(&mut st, Dir::ToClient, &msg(0x40, &[0, 9]), 1000);
    let t = st.tx(1).unwrap();
    assert!(t.has(MqttEvent::MissingPublish) && t.has(MqttEvent::UnintroducedMessage));
    feed_all(&mut st, Dir::ToClient, &msg(0x90, &[0, 9, 0]), 1000);
    assert!(st.tx(2).unwrap().has(MqttEvent::MissingSubscribe));
    feed_all(&mut st, Dir::ToClient, &msg(0xb0, &[0, 9]), 1000);
    assert!(st.tx(3).unwrap().has(MqttEvent::MissingUnsubscribe));
    // QoS 3 publish, type 0.
    feed_all(&mut st, Dir::ToServer, &publish(3, 1, "t", b"x"), 1000);
    assert!(st.tx(4).unwrap().has(MqttEvent::InvalidQosLevel));
    feed_all(&mut st, Dir::ToServer, &msg(0x00, &[]), 1000);
    assert!(st.tx(5).unwrap().has(MqttEvent::UnassignedMsgType));
    // A second CONNECT once connected.
    let mut st = state();
    feed_all(&mut st, Dir::ToServer, &connect_v4(), 1000);
    feed_all(&mut st, Dir::ToClient, &msg(0x20, &[0, 0]), 1000);
    feed_all(&mut st, Dir::ToServer, &connect_v4(), 1000);
    assert!(st.tx(1).unwrap().has(MqttEvent::DoubleConnect));
    // Malformed: a SUBSCRIBE without topics ends parsing with an event-only transaction.
    assert!(AppParser::parse(
        &mut st,
        Dir::ToServer,
        &msg(0x82, &[0, 1])
    ));
    let t = st.tx(2).unwrap();
    assert!(t.has(MqttEvent::MalformedTraffic) && t.msgs.is_empty());
    assert!(!AppParser::parse(&mut st, Dir::ToServer, &connect_v4()));
    assert_eq!(st.tx_count(), 3);
}

#[test]
fn bad_property_lengths_are_malformed() {
    let mut st = state();
    feed_all(&mut st, Dir::ToServer, &connect_v5(), 1000);
    // PUBLISH whose property length runs past the message.
    let mut b = s("t");
    b.push(50);
    b.extend([1, 1]);
    assert!(AppParser::parse(&mut st, Dir::ToServer, &msg(0x30, &b)));
    assert!(st.tx(1).unwrap().has(MqttEvent::MalformedTraffic));
    // A remaining length of five bytes.
    let mut st = state();
    assert!(AppParser::parse(
        &mut st,
        Dir::ToServer,
        &[0x30, 0xff, 0xff, 0xff, 0xff, 0x01]
    ));
}

#[test]
fn long_messages_are_skipped_as_truncated() {
    let mut st = MqttState::new(MqttConfig {
        max_msg_length: 20,
        ..MqttConfig::default()
    });
    let mut cli = connect_v4();
    cli.extend(publish(0, 0, "t", &[b'Y'; 100]));
    cli.extend(publish(0, 0, "t", b"ok"));
    feed_all(&mut st, Dir::ToServer, &cli, 9);
    assert_eq!(st.tx_count(), 3);
    let t = st.tx(1).unwrap();
    // Filed as a to-client transaction, as Suricata does.
    assert_eq!(t.dir, Dir::ToClient);
    let Op::Truncated(tr) = &t.msgs[0].op else {
        panic!("{t:?}")
    };
    assert_eq!(tr.original_message_type, TypeCode::Publish);
    assert_eq!(tr.skipped_length, 100 + 3 + 2);
    let Op::Publish(p) = &st.tx(2).unwrap().msgs[0].op else {
        panic!()
    };
    assert_eq!(p.message, b"ok");
}

#[test]
fn too_many_transactions_closes_the_oldest() {
    let mut st = MqttState::new(MqttConfig {
        max_tx: 3,
        ..MqttConfig::default()
    });
    for i in 0..6u16 {
        feed_all(&mut st, Dir::ToServer, &publish(1, i, "t", b"x"), 1000);
    }
    assert!(st.tx(0).unwrap().has(MqttEvent::TooManyTransactions));
    assert!(st.tx(0).unwrap().complete);
    assert!(!st.tx(5).unwrap().has(MqttEvent::TooManyTransactions));
}

#[test]
fn subscribe_topics_are_a_multi_buffer() {
    let mut st = state();
    let mut b = vec![0, 3];
    b.extend(s("x/1"));
    b.push(1);
    b.extend(s("x/2"));
    b.push(0);
    feed_all(&mut st, Dir::ToServer, &msg(0x82, &b), 1000);
    // Not ready before the SUBACK.
    assert_eq!(
        st.buffer_ready(0, buf::SUB_TOPIC, Dir::ToServer, false),
        None
    );
    feed_all(&mut st, Dir::ToClient, &msg(0x90, &[0, 3, 1, 0]), 1000);
    assert_eq!(
        st.buffer_ready(0, buf::SUB_TOPIC, Dir::ToServer, false),
        Some(true)
    );
    let mut got = Vec::new();
    st.buffer(0, buf::SUB_TOPIC, Dir::ToServer, &mut |v| {
        got.push(v.to_vec());
        false
    });
    assert_eq!(got, vec![b"x/1".to_vec(), b"x/2".to_vec()]);
    let mut live = Vec::new();
    st.live_txs(Dir::ToServer, &mut live);
    assert_eq!(live, vec![0]);
    live.clear();
    st.live_txs(Dir::ToClient, &mut live);
    assert!(live.is_empty());
}

#[test]
fn gap_stops_the_flow() {
    let mut st = state();
    st.gap(Dir::ToServer, 16);
    feed_all(&mut st, Dir::ToClient, &msg(0x20, &[0, 0]), 1000);
    assert_eq!(st.tx_count(), 0);
}

#[test]
fn never_panics_on_noise() {
    let mut seed = 0x1234_5678u32;
    for _ in 0..300 {
        let mut st = state();
        let mut d = Vec::new();
        for _ in 0..64 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            d.push((seed & 0xff) as u8);
        }
        d[0] = 0x10 | (d[0] & 0x0f);
        let _ = AppParser::parse(&mut st, Dir::ToServer, &d);
        let _ = AppParser::parse(&mut st, Dir::ToClient, &d);
    }
}

#[test]
fn string_log_limit_cuts_strings() {
    let mut st = state();
    feed_all(
        &mut st,
        Dir::ToServer,
        &publish(0, 0, "topic/é", &[b'Z'; 100]),
        1000,
    );
    let o = eve::MqttLogConfig {
        string_log_limit: Some(7),
        ..Default::default()
    };
    let mut w = JsonWriter::new();
    w.start_object();
    eve::write_mqtt(&mut w, st.tx(0).unwrap(), &o);
    w.close();
    let j: serde_json::Value = serde_json::from_slice(w.as_bytes()).unwrap();
    assert_eq!(
        j["mqtt"]["publish"]["message"],
        "ZZZZZZZ[truncated 93 additional bytes]"
    );
    // "topic/é" is 8 bytes: the cut falls inside "é" and moves back to a boundary.
    assert_eq!(
        j["mqtt"]["publish"]["topic"],
        "topic/[truncated 1 additional byte]"
    );
}

#[test]
fn large_message_in_many_segments() {
    let mut st = state();
    let mut cli = connect_v4();
    cli.extend(publish(0, 0, "big", &vec![b'x'; 600_000]));
    cli.extend(publish(0, 0, "after", b"y"));
    feed_all(&mut st, Dir::ToServer, &cli, 1460);
    assert_eq!(st.tx_count(), 3);
    let Op::Publish(p) = &st.tx(1).unwrap().msgs[0].op else {
        panic!()
    };
    assert_eq!(p.message.len(), 600_000);
    assert!(st.sides[0].pending.is_empty());
}
