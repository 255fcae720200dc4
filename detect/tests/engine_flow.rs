//! Stateful semantics: flow keyword, flowbits, flowint, IP-only once per direction, pass,
//! signature order, thresholds, suppression, alert limits.

mod engine_common;

use std::collections::HashMap;
use std::sync::Arc;

use engine_common::*;
use shrike_detect::setup::{load_texts, DEFAULT_CLASSIFICATION};
use shrike_detect::EngineConfig;
use shrike_rules::config_files::{parse_classification_config, parse_threshold_config};
use shrike_rules::Vars;

fn sids(v: &[Vec<u32>]) -> Vec<u32> {
    v.iter().flatten().copied().collect()
}

#[test]
fn established_needs_the_handshake() {
    let rules =
        "alert tcp any any -> any 80 (flow:established,to_server; content:\"GET\"; sid:1;)\n\
                 alert tcp any any -> any 80 (flow:not_established; sid:2;)\n\
                 alert tcp any any -> any any (flow:to_client; content:\"200\"; sid:3;)";
    let mut sim = Sim::new(rules);
    let frames = session(80, &[(true, b"GET /"), (false, b"HTTP 200")]);
    dump("established", rules, &frames);
    let r = sim.run(&frames);
    // SYN, SYN/ACK? no: sid 2 only matches packets to port 80 (SYN and the 3rd ACK).
    assert_eq!(r[0], vec![2]);
    assert_eq!(r[1], Vec::<u32>::new());
    // The ACK completing the handshake is not established yet (Suricata).
    assert_eq!(r[2], vec![2]);
    assert_eq!(r[3], vec![1]);
    assert_eq!(r[4], vec![3]);

    // Picked up midstream: never established unless midstream pickup is on.
    let data = at(tcp4(C4, S4, 40000, 80, 1, 1, ACK | PSH, b"GET /"), 0.0);
    let data2 = at(tcp4(C4, S4, 40000, 80, 6, 1, ACK | PSH, b"GET /"), 0.1);
    let mut sim = Sim::new(rules);
    assert_eq!(sim.run(&[data, data2]), vec![vec![2], vec![2]]);
    let cfg = EngineConfig {
        midstream: true,
        ..EngineConfig::default()
    };
    let mut sim = Sim::with(rules, &cfg);
    let data = at(tcp4(C4, S4, 40000, 80, 1, 1, ACK | PSH, b"GET /"), 0.0);
    let data2 = at(tcp4(C4, S4, 40000, 80, 6, 1, ACK | PSH, b"GET /"), 0.1);
    assert_eq!(sim.run(&[data, data2]), vec![vec![2], vec![1]]);
}

#[test]
fn udp_established_after_a_reply() {
    let mut sim = Sim::new("alert udp any any -> any any (flow:established; sid:1;)");
    let r = sim.run(&[
        at(udp4(C4, S4, 1000, 53, b"q"), 0.0),
        at(udp4(C4, S4, 1000, 53, b"q"), 0.1),
        at(udp4(S4, C4, 53, 1000, b"a"), 0.2),
        at(udp4(C4, S4, 1000, 53, b"q"), 0.3),
    ]);
    assert_eq!(r, vec![vec![], vec![], vec![1], vec![1]]);
}

#[test]
fn flowbits_set_isset_same_packet_and_later() {
    // sid 1 reads the bit that sid 2 sets: ordering puts the setter first, so both fire
    // on the same packet.
    let rules = "alert tcp any any -> any any (flowbits:isset,seen; content:\"b\"; sid:1;)\n\
                 alert tcp any any -> any any (flowbits:set,seen; content:\"a\"; sid:2;)\n\
                 alert tcp any any -> any any (flowbits:isnotset,seen; content:\"b\"; sid:3;)";
    let mut sim = Sim::new(rules);
    let frames = session(80, &[(true, b"b"), (true, b"ab"), (false, b"b")]);
    dump("flowbits_order", rules, &frames);
    let r = sim.run(&frames);
    assert_eq!(r[3], vec![3]);
    assert_eq!(r[4], vec![2, 1]);
    assert_eq!(r[5], vec![1]);
}

#[test]
fn flowbits_commands() {
    let rules = "alert tcp any any -> any any (content:\"set\"; flowbits:set,a; flowbits:noalert; sid:1;)\n\
                 alert tcp any any -> any any (content:\"tog\"; flowbits:toggle,a; flowbits:noalert; sid:2;)\n\
                 alert tcp any any -> any any (content:\"uns\"; flowbits:unset,a|b; flowbits:noalert; sid:3;)\n\
                 alert tcp any any -> any any (content:\"setb\"; flowbits:set,b; flowbits:noalert; sid:4;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isset,a; sid:10;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isset,a|b; sid:11;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isset,a&b; sid:12;)";
    let mut sim = Sim::new(rules);
    let frames = session(
        80,
        &[
            (true, b"?"),
            (true, b"set"),
            (true, b"?"),
            (true, b"setb"),
            (true, b"?"),
            (true, b"tog"),
            (true, b"?"),
            (true, b"uns"),
            (true, b"?"),
        ],
    );
    dump("flowbits_cmds", rules, &frames);
    let r = sim.run(&frames);
    let data: Vec<Vec<u32>> = r[3..].to_vec();
    // Suricata 7.0.10 (rules with flow:no_stream): only isset/isnotset split on `|`;
    // `unset,a|b` and `isset,a&b` name one flowbit literally.
    assert_eq!(
        data,
        vec![
            vec![],
            vec![],
            vec![10, 11],
            vec![],
            vec![10, 11],
            vec![],
            vec![11],
            vec![],
            vec![11],
        ]
    );
}

#[test]
fn flowbits_lists_are_literal_names_except_isset_or() {
    let rules = "alert tcp any any -> any any (content:\"s1\"; flowbits:set,x|y; flowbits:noalert; sid:1;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isset,x; sid:10;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isset,x|y; sid:12;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isnotset,x|y; sid:14;)\n\
                 alert tcp any any -> any any (content:\"?\"; flowbits:isnotset,x&y; sid:15;)";
    let mut sim = Sim::new(rules);
    let r = sim.run(&session(80, &[(true, b"?"), (true, b"s1"), (true, b"?")]));
    // Checked against Suricata 7.0.10: `set,x|y` sets the flowbit named "x|y".
    assert_eq!(r[3..].to_vec(), vec![vec![14, 15], vec![], vec![14, 15]]);
}

#[test]
fn flowint_counting() {
    let rules = "alert tcp any any -> any any (content:\"x\"; flowint:cnt,+,1; noalert; sid:1;)\n\
                 alert tcp any any -> any any (content:\"x\"; flowint:cnt,>=,3; sid:2;)\n\
                 alert tcp any any -> any any (content:\"x\"; flowint:cnt,isnotset; sid:3;)";
    let mut sim = Sim::new(rules);
    let frames = session(
        80,
        &[(true, b"x"), (true, b"x"), (true, b"x"), (true, b"x")],
    );
    dump("flowint", rules, &frames);
    let r = sim.run(&frames);
    // The increment (post-match) is ordered before the reads: on the first packet cnt is
    // already 1 when sid 3 looks.
    assert_eq!(sids(&r), vec![2, 2]);
}

#[test]
fn ip_only_once_per_direction() {
    let rules = "alert ip any any -> any any (msg:\"ip-only\"; sid:1;)\n\
                 alert tcp 192.168.1.10 any -> any any (sid:2;)\n\
                 alert ip $EXTERNAL_NET any -> any any (sid:3;)";
    let mut sim = Sim::new(rules);
    let frames = session(80, &[(true, b"a"), (false, b"b"), (true, b"c")]);
    dump("iponly", rules, &frames);
    let r = sim.run(&frames);
    assert_eq!(r.iter().filter(|v| v.contains(&1)).count(), 2);
    assert_eq!(r.iter().filter(|v| v.contains(&2)).count(), 1);
    // Negated addresses: evaluated on every server packet (Suricata's "like IP-only").
    assert_eq!(r.iter().filter(|v| v.contains(&3)).count(), 2);
}

#[test]
fn pass_stops_the_packet_and_ip_only_pass_the_flow() {
    let rules = "pass tcp any any -> any 80 (content:\"ok\"; sid:1;)\n\
                 alert tcp any any -> any 80 (content:\"o\"; sid:2;)";
    let mut sim = Sim::new(rules);
    let r = sim.run(&session(80, &[(true, b"ok"), (true, b"oops")]));
    assert_eq!(sids(&r), vec![2]);

    let rules = "pass ip 203.0.113.5 any <> any any (sid:1;)\n\
                 alert tcp any any -> any any (content:\"o\"; sid:2;)";
    let mut sim = Sim::new(rules);
    let r = sim.run(&session(80, &[(true, b"ok"), (true, b"oops")]));
    // The SYN is not from/to the pass address? It is (S4 is the server): nothing alerts.
    assert_eq!(sids(&r), Vec::<u32>::new());
}

#[test]
fn alerts_follow_suricata_signature_order() {
    let rules = "alert tcp any any -> any any (content:\"x\"; sid:5;)\n\
                 alert tcp any any -> any any (content:\"x\"; priority:1; sid:9;)\n\
                 drop tcp any any -> any any (content:\"x\"; sid:7;)\n\
                 alert tcp any any -> any any (content:\"x\"; classtype:trojan-activity; sid:3;)\n\
                 alert tcp any any -> any any (content:\"x\"; sid:4;)";
    let mut sim = Sim::new(rules);
    dump(
        "order",
        rules,
        &[at(tcp4(C4, S4, 1, 2, 1, 1, ACK, b"x"), 0.0)],
    );
    let r = sim.feed(&at(tcp4(C4, S4, 1, 2, 1, 1, ACK, b"x"), 0.0));
    // drop first, then priority 1 (sid 3 from its classtype, sid 9) by sid, then prio 3.
    assert_eq!(r, vec![7, 3, 9, 4, 5]);
    let order: Vec<u32> = sim.engine.sids_in_order().collect();
    assert_eq!(order, vec![7, 3, 9, 4, 5]);
}

#[test]
fn packet_alert_max_overflows() {
    let rules: String = (1..=20)
        .map(|i| format!("alert udp any any -> any any (content:\"q\"; sid:{i};)\n"))
        .collect();
    let mut sim = Sim::new(&rules);
    let r = sim.feed(&at(udp4(C4, S4, 1, 2, b"q"), 0.0));
    assert_eq!(r.len(), 15);
    assert_eq!(sim.th.stats.alert, 15);
    assert_eq!(sim.th.stats.alert_queue_overflow, 5);
}

fn pings(n: usize, src: [u8; 4]) -> Vec<Frame> {
    (0..n)
        .map(|i| at(icmp4_echo(src, S4, 8, 1, i as u16, b"x"), i as f64 * 0.5))
        .collect()
}

#[test]
fn threshold_types() {
    let cases: &[(&str, usize)] = &[
        (
            "threshold:type limit, track by_src, count 2, seconds 60;",
            2,
        ),
        (
            "threshold:type threshold, track by_src, count 3, seconds 60;",
            3,
        ),
        ("threshold:type both, track by_src, count 3, seconds 60;", 1),
        ("detection_filter:track by_src, count 3, seconds 60;", 7),
        (
            "threshold:type limit, track by_rule, count 1, seconds 60;",
            1,
        ),
        (
            "threshold:type limit, track by_dst, count 4, seconds 60;",
            4,
        ),
        (
            "threshold:type limit, track by_both, count 1, seconds 60;",
            1,
        ),
        // Pings 0.5 s apart: a 1-second window includes its end (t=0 and t=1.0 share one),
        // so it restarts at 1.5, 3.0 and 4.5 (Suricata 7.0.10: packets 1, 4, 7, 10).
        ("threshold:type limit, track by_src, count 1, seconds 1;", 4),
    ];
    for (i, (t, want)) in cases.iter().enumerate() {
        let rule = format!("alert icmp any any -> any any (itype:8; {t} sid:1;)");
        dump(&format!("threshold{i}"), &rule, &pings(10, C4));
        let mut sim = Sim::new(&rule);
        assert_eq!(sim.count(&pings(10, C4), 1), *want, "{t}");
    }
    // by_src counts sources separately.
    let rule = "alert icmp any any -> any any (itype:8; threshold:type limit, track by_src, count 1, seconds 60; sid:1;)";
    let mut sim = Sim::new(rule);
    let mut frames = pings(3, C4);
    frames.extend(pings(3, [192, 168, 1, 11]));
    assert_eq!(sim.count(&frames, 1), 2);
    assert_eq!(sim.th.stats.alerts_suppressed, 4);
}

fn threshold_engine(rules: &str, conf: &str) -> Sim {
    let vars = Vars::suricata_defaults();
    let (classes, _) = parse_classification_config(DEFAULT_CLASSIFICATION);
    let (entries, errs) = parse_threshold_config(conf, &vars);
    assert!(errs.is_empty(), "{errs:?}");
    let l = load_texts(
        &[(Arc::from("t.rules"), Ok(rules.to_string()))],
        &vars,
        &classes,
        &entries,
        &EngineConfig::default(),
        &mut |_, _| {},
        &mut || {},
    );
    let engine = l.engine;
    let th = engine.thread();
    Sim {
        engine,
        th,
        flows: shrike_flow::FlowTable::new(&Default::default(), 0),
    }
}

#[test]
fn threshold_config_suppress_and_override() {
    let rules = "alert icmp any any -> any any (itype:8; sid:1;)\n\
                 alert icmp any any -> any any (itype:8; sid:2;)\n\
                 alert icmp any any -> any any (itype:8; threshold:type limit, track by_src, count 5, seconds 60; sid:3;)\n\
                 alert icmp any any -> any any (itype:8; sid:4;)";
    let conf = "suppress gen_id 1, sig_id 1\n\
                suppress gen_id 1, sig_id 2, track by_src, ip 192.168.1.10\n\
                threshold gen_id 1, sig_id 3, type limit, track by_src, count 1, seconds 60\n\
                event_filter gen_id 0, sig_id 0, type limit, track by_rule, count 2, seconds 60\n";
    let mut sim = threshold_engine(rules, conf);
    let mut frames = pings(4, C4);
    frames.extend(pings(2, [192, 168, 1, 11]));
    let r = sim.run(&frames);
    let count = |sid| sids(&r).iter().filter(|&&s| s == sid).count();
    assert_eq!(count(1), 0);
    // Suppressed for .10, and the global event_filter limits the rest to 2 per rule.
    assert_eq!(count(2), 2);
    assert_eq!(count(3), 2);
    assert_eq!(count(4), 2);
}

#[test]
fn decoder_event_alert_without_flow() {
    let mut sim = Sim::new(
        "alert pkthdr any any -> any any (msg:\"trunc\"; decode-event:ipv4.trunc_pkt; sid:5;)",
    );
    let mut f = udp4(C4, S4, 1, 2, b"abcdef");
    f[16] = 0x05;
    f[17] = 0x00;
    fix_ipv4_csum(&mut f[14..]);
    assert_eq!(sim.feed(&at(f, 0.0)), vec![5]);
}

#[test]
fn skipped_rules_have_reasons() {
    let l = shrike_detect::setup::engine_from_str(
        "alert template any any -> any any (content:\"x\"; sid:1;)\n\
         alert http any any -> any any (frame:http.nope; content:\"x\"; sid:2;)\n\
         alert tcp any any -> any any (flow:only_stream; content:\"x\"; sid:3;)\n\
         alert tcp any any -> any any (stream_size:server,>,5; sid:4;)\n\
         alert tcp-stream any any -> any any (content:\"x\"; sid:5;)\n\
         alert tcp any any -> any any (content:\"x\"; asn1:oversize_length 10; sid:6;)\n\
         alert tcp any any -> any any (content:\"ok\"; sid:7;)\n\
         alert udp any any -> any any (app-layer-event:template.flooded; sid:8;)\n\
         alert http any any -> any any (http.uri; content:\"x\"; sid:9;)\n\
         alert udp any any -> any any (app-layer-event:dns.malformed_data; sid:10;)\n",
        &EngineConfig::default(),
    );
    let r = l.engine.report();
    // Loaded now: only_stream and tcp-stream (stream inspection), stream_size, 7, and the
    // http and dns rules (app layer).
    assert_eq!(r.loaded, 6);
    let reasons: HashMap<u32, String> = r
        .skipped
        .iter()
        .map(|s| (s.sid, s.reason.to_string()))
        .collect();
    assert_eq!(
        reasons[&1],
        "needs app-layer parser: `template` rule header"
    );
    assert!(
        reasons[&2].contains("unknown frame 'nope'"),
        "{}",
        reasons[&2]
    );
    assert!(!reasons.contains_key(&3) && !reasons.contains_key(&4) && !reasons.contains_key(&5));
    assert_eq!(reasons[&6], "keyword not supported yet: asn1");
    assert_eq!(
        reasons[&8],
        "needs app-layer parser: app-layer-event:template.flooded"
    );
    assert!(!reasons.contains_key(&9) && !reasons.contains_key(&10));
    assert!(r
        .skipped
        .iter()
        .all(|s| s.line > 0 && &*s.file == "<rules>"));
}

#[test]
fn hostbits_like_suricata() {
    // suricata-verify detect-hostbits-02 (one packet): Suricata 7.0.10 alerts 4, 10, 2, 11.
    let rules = "alert ip any any -> any any (hostbits:isset,abc,src; content:\"GET \"; sid:1;)\n\
                 alert ip any any -> any any (hostbits:isnotset,abc,dst; content:\"GET \"; sid:2;)\n\
                 alert ip any any -> any any (hostbits:unset,abc,src; content:\"GET \"; sid:4;)\n\
                 alert ip any any -> any any (hostbits:set,myflow2; sid:10;)\n\
                 alert ip any any -> any any (hostbits:isset,myflow2; sid:11;)";
    let mut sim = Sim::new(rules);
    let r = sim.feed(&at(tcp4(C4, S4, 1, 80, 1, 1, ACK | PSH, b"GET /"), 0.0));
    assert_eq!(r, vec![4, 10, 2, 11]);

    // Bits live per host, across flows, and expire after 300 s.
    let rules = "alert tcp any any -> any any (content:\"mark\"; hostbits:set,m,dst; hostbits:noalert; sid:1;)\n\
                 alert udp any any -> any any (hostbits:isset,m,dst; sid:2;)";
    let mut sim = Sim::new(rules);
    let r = sim.run(&[
        at(udp4(C4, S4, 1, 2, b"x"), 0.0),
        at(tcp4(C4, S4, 5, 80, 1, 1, ACK, b"mark"), 1.0),
        at(udp4([10, 9, 9, 9], S4, 1, 2, b"x"), 2.0),
        at(udp4(C4, S4, 1, 2, b"x"), 302.0),
    ]);
    assert_eq!(r, vec![vec![], vec![], vec![2], vec![]]);
}

#[test]
fn xbits_like_suricata() {
    // The alerts Suricata 7.0.10 gives on the same packets (generated UDP capture).
    let rules = "alert udp any any -> any any (content:\"SETPAIR\"; xbits:set,pb,track ip_pair,expire 5; sid:1;)\n\
                 alert udp any any -> any any (content:\"CHKPAIR\"; xbits:isset,pb,track ip_pair; sid:2;)\n\
                 alert udp any any -> any any (content:\"CHKPAIR\"; xbits:isnotset,pb,track ip_pair; sid:3;)\n\
                 alert udp any any -> any any (content:\"SETSRC\"; xbits:set,hb,track ip_src; noalert; sid:4;)\n\
                 alert udp any any -> any any (content:\"CHKSRC\"; xbits:isset,hb,track ip_src; sid:5;)\n\
                 alert udp any any -> any any (content:\"CHKSRC\"; xbits:isset,hb,track ip_dst; sid:6;)\n\
                 alert udp any any -> any any (content:\"CHKSRC\"; hostbits:isset,hb,src; sid:7;)\n\
                 alert udp any any -> any any (content:\"TOGPAIR\"; xbits:toggle,pb,track ip_pair,expire 100; sid:8;)\n\
                 alert udp any any -> any any (content:\"UNSPAIR\"; xbits:unset,pb,track ip_pair; sid:9;)\n\
                 alert udp any any -> any any (content:\"BOTH\"; xbits:isset,ob,track ip_src; sid:10;)\n\
                 alert udp any any -> any any (content:\"BOTH\"; xbits:set,ob,track ip_src; sid:11;)\n\
                 alert udp any any -> any any (content:\"BOTH2\"; hostbits:set,ob2,src; sid:12;)\n\
                 alert udp any any -> any any (content:\"BOTH2\"; xbits:isset,ob2,track ip_src; sid:13;)";
    let (a, b, c) = ([10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 3]);
    type Step = (f64, [u8; 4], [u8; 4], &'static [u8]);
    let seq: [Step; 21] = [
        (0.0, a, b, b"SETPAIR"),
        (1.0, b, a, b"CHKPAIR"),
        (7.0, a, b, b"CHKPAIR"),
        (8.0, a, b, b"SETPAIR"),
        (9.0, b, a, b"TOGPAIR"),
        (9.0, a, b, b"CHKPAIR"),
        (10.0, a, b, b"TOGPAIR"),
        (50.0, b, a, b"CHKPAIR"),
        (51.0, a, b, b"UNSPAIR"),
        (51.0, a, b, b"CHKPAIR"),
        (52.0, a, b, b"SETSRC"),
        (53.0, a, b, b"CHKSRC"),
        (53.0, b, a, b"CHKSRC"),
        (60.0, a, b, b"BOTH"),
        (61.0, a, b, b"BOTH"),
        (62.0, a, b, b"BOTH2"),
        (70.0, a, b, b"SETPAIR"),
        (75.0, b, a, b"CHKPAIR"),
        (76.0, b, a, b"CHKPAIR"),
        (80.0, a, c, b"SETSRC"),
        (81.0, c, a, b"CHKSRC"),
    ];
    let frames: Vec<_> = seq
        .iter()
        .map(|&(t, s, d, p)| {
            let (sp, dp) = if s < d { (1111, 2222) } else { (2222, 1111) };
            at(udp4(s, d, sp, dp, p), t)
        })
        .collect();
    let mut sim = Sim::new(rules);
    let r = sim.run(&frames);
    let want: Vec<Vec<u32>> = vec![
        vec![1],
        vec![2],
        vec![3],
        vec![1],
        vec![8],
        vec![3],
        vec![8],
        vec![2],
        vec![9],
        vec![3],
        vec![],
        vec![5, 7],
        vec![6],
        vec![11],
        vec![10, 11],
        vec![12, 10, 13, 11],
        vec![1],
        vec![2],
        vec![3],
        vec![],
        vec![6],
    ];
    assert_eq!(r, want);
}

#[test]
fn tags_mark_later_packets() {
    // Session tag of 3 packets: the trigger counts, the next two are tagged.
    let rules = "alert tcp any any -> any any (flags:S; tag:session,3,packets; sid:1;)";
    let mut sim = Sim::new(rules);
    let frames = session(80, &[(true, b"a"), (false, b"b"), (true, b"c")]);
    let mut tagged = Vec::new();
    for f in &frames {
        sim.feed(f);
        tagged.push(sim.th.tagged());
    }
    assert_eq!(tagged, vec![false, true, true, false, false, false]);

    // Host tag on the destination: any packet to or from that host, across flows.
    let rules = "alert tcp any any -> any any (flags:S; tag:host,3,packets,dst; sid:1;)";
    let mut sim = Sim::new(rules);
    let frames = [
        at(tcp4(C4, S4, 40000, 80, 1, 0, SYN, b""), 0.0),
        at(udp4([10, 1, 1, 1], S4, 1, 2, b"x"), 0.1),
        at(udp4([10, 1, 1, 1], [10, 1, 1, 2], 1, 2, b"x"), 0.2),
        at(udp4(S4, [10, 1, 1, 2], 1, 2, b"x"), 0.3),
        at(udp4(S4, [10, 1, 1, 2], 1, 2, b"x"), 0.4),
    ];
    let mut tagged = Vec::new();
    for f in &frames {
        sim.feed(f);
        tagged.push(sim.th.tagged());
    }
    assert_eq!(tagged, vec![false, true, false, true, false]);
}
