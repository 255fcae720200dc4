//! Property tests: the parser and loader never panic, and compiled
//! address/port sets agree with a naive evaluation.

use proptest::prelude::*;
use shrike_rules::config_files::{
    parse_classification_config, parse_reference_config, parse_threshold_config, ThresholdEntry,
};
use shrike_rules::parse::*;
use shrike_rules::{load_rules_from_str, LoadOptions};

const FRAGMENTS: &[&str] = &[
    "alert",
    "tcp",
    "http",
    "any",
    "$HOME_NET",
    "!",
    "[",
    "]",
    ",",
    "->",
    "<>",
    "(",
    ")",
    ";",
    ":",
    "\"",
    "\\",
    "|",
    "content",
    "pcre",
    "/",
    "msg",
    "sid:1",
    "nocase",
    "depth",
    "distance",
    "within",
    "http.uri",
    "http_uri",
    "byte_test",
    "byte_jump",
    "byte_extract",
    "byte_math",
    "isdataat",
    "flow",
    "flowbits",
    "fast_pattern",
    "0",
    "1",
    "-1",
    "65536",
    "4294967296",
    "1.2.3.4",
    "::1",
    "/24",
    " ",
    "41 42",
    "relative",
    "string",
    "dec",
    "bsize",
    "dsize",
    "<",
    ">",
    "!=",
    "to_lowercase",
    "xor",
    "threshold",
    "track by_src",
];

fn fragment_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_strings_never_panic(s in any::<String>()) {
        let _ = parse_rule(&s, &Vars::suricata_defaults());
        let _ = load_rules_from_str(&s, "p.rules", &Vars::suricata_defaults(), &LoadOptions::default());
        let _ = parse_classification_config(&s);
        let _ = parse_reference_config(&s);
        let _ = parse_threshold_config(&s, &Vars::suricata_defaults());
    }

    #[test]
    fn rule_shaped_soup_never_panics(body in fragment_soup(), hdr in fragment_soup()) {
        let v = Vars::suricata_defaults();
        let _ = parse_rule(&format!("alert tcp any any -> any any ({body})"), &v);
        let _ = parse_rule(&format!("alert {hdr} ({body} sid:1;)"), &v);
        let _ = IpSet::parse(&hdr, &v);
        let _ = PortSet::parse(&hdr, &v);
        let _ = UintMatch::parse(&hdr, 255, "t");
    }

    #[test]
    fn port_lists_match_naive(items in prop::collection::vec((any::<bool>(), 0u16..200, 0u16..20), 1..6), probe in 0u16..260) {
        // Build "[!a:b, c:d, ...]" and evaluate naively: positives (or all) minus negatives.
        let spec = format!("[{}]", items.iter().map(|(neg, a, w)| format!("{}{}:{}", if *neg { "!" } else { "" }, a, a + w)).collect::<Vec<_>>().join(","));
        let pos: Vec<_> = items.iter().filter(|i| !i.0).collect();
        let in_pos = pos.is_empty() || pos.iter().any(|(_, a, w)| (*a..=a + w).contains(&probe));
        let in_neg = items.iter().filter(|i| i.0).any(|(_, a, w)| (*a..=a + w).contains(&probe));
        match PortSet::parse(&spec, &Vars::empty()) {
            Ok(set) => prop_assert_eq!(set.contains(probe), in_pos && !in_neg, "{}", spec),
            Err(_) => {
                // Only an empty result may fail.
                let any_left = (0..=u16::MAX).any(|p| {
                    let ip = pos.is_empty() || pos.iter().any(|(_, a, w)| (*a..=a + w).contains(&p));
                    let ineg = items.iter().filter(|i| i.0).any(|(_, a, w)| (*a..=a + w).contains(&p));
                    ip && !ineg
                });
                prop_assert!(!any_left, "{} failed but is not empty", spec);
            }
        }
    }

    #[test]
    fn ipv4_lists_match_naive(items in prop::collection::vec((any::<bool>(), any::<u32>(), 16u32..=32), 1..5), probe in any::<u32>()) {
        let spec = format!("[{}]", items.iter().map(|(neg, a, bits)| format!("{}{}/{}", if *neg { "!" } else { "" }, std::net::Ipv4Addr::from(*a), bits)).collect::<Vec<_>>().join(","));
        let inside = |a: u32, bits: u32, p: u32| {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            a & mask == p & mask
        };
        let pos: Vec<_> = items.iter().filter(|i| !i.0).collect();
        let in_pos = pos.is_empty() || pos.iter().any(|(_, a, b)| inside(*a, *b, probe));
        let in_neg = items.iter().filter(|i| i.0).any(|(_, a, b)| inside(*a, *b, probe));
        if let Ok(set) = IpSet::parse(&spec, &Vars::empty()) {
            prop_assert_eq!(set.contains_v4(probe), in_pos && !in_neg, "{}", spec);
        }
    }
}

#[test]
fn classification_and_reference_configs() {
    let text = "# c\nconfig classification: not-suspicious,Not Suspicious Traffic,3\nconfig classification: bad-unknown,Potentially Bad Traffic, 2\nconfig classification: broken\nconfig classification: x,y,z\n";
    let (m, errs) = parse_classification_config(text);
    assert_eq!(m.len(), 2);
    assert_eq!(m["bad-unknown"].priority, 2);
    assert_eq!(m["not-suspicious"].description, "Not Suspicious Traffic");
    assert_eq!(errs.iter().map(|e| e.line).collect::<Vec<_>>(), vec![4, 5]);
    let (r, errs) = parse_reference_config("config reference: bugtraq   http://www.securityfocus.com/bid/\nconfig reference: CVE\thttp://cve.mitre.org/?n=\nbogus\n");
    assert_eq!(r["cve"], "http://cve.mitre.org/?n=");
    assert_eq!(r.len(), 2);
    assert_eq!(errs.len(), 1);
    // The shipped suricata-verify files parse cleanly when present.
    let shared =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/suricata-verify");
    if let Ok(t) = std::fs::read_to_string(shared.join("classification.config")) {
        let (m, errs) = parse_classification_config(&t);
        assert!(errs.is_empty() && m.contains_key("trojan-activity"));
    }
    if let Ok(t) = std::fs::read_to_string(shared.join("reference.config")) {
        let (m, errs) = parse_reference_config(&t);
        assert!(errs.is_empty() && m.contains_key("url"));
    }
}

#[test]
fn threshold_config_lines() {
    let text = "threshold gen_id 1, sig_id 2000, type limit, track by_src, count 1, seconds 60\n\
        event_filter gen_id 1, sig_id 2001, type both, track by_dst, count 2, seconds 30\n\
        suppress gen_id 1, sig_id 2002\n\
        suppress gen_id 1, sig_id 2003, track by_src, ip [10.0.0.0/8,192.168.1.1]\n\
        suppress gen_id 1, sig_id 2004, track by_either, ip $HOME_NET\n\
        rate_filter gen_id 1, sig_id 2005, track by_rule, count 100, seconds 60, new_action drop, timeout 10\n\
        threshold gen_id 1, sig_id 1, type sometimes, track by_src, count 1, seconds 60\n\
        suppress gen_id 1, sig_id 5, track by_src\n\
        frobnicate gen_id 1, sig_id 5\n";
    let (e, errs) = parse_threshold_config(text, &Vars::suricata_defaults());
    assert_eq!(e.len(), 6);
    assert!(matches!(
        e[1],
        ThresholdEntry::Threshold {
            event_filter: true,
            count: 2,
            ..
        }
    ));
    assert!(matches!(
        e[2],
        ThresholdEntry::Suppress {
            target: None,
            sid: 2002,
            ..
        }
    ));
    match &e[3] {
        ThresholdEntry::Suppress {
            target: Some((_, ip)),
            ..
        } => {
            assert!(
                ip.contains("192.168.1.1".parse().unwrap())
                    && !ip.contains("192.168.1.2".parse().unwrap())
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        e[5],
        ThresholdEntry::RateFilter {
            new_action: Action::Drop,
            timeout: 10,
            ..
        }
    ));
    assert_eq!(
        errs.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![7, 8, 9]
    );
}

#[test]
fn duplicate_sids_keep_highest_rev() {
    let text = "alert tcp any any -> any any (msg:\"a\"; sid:1; rev:2;)\n\
        alert tcp any any -> any any (msg:\"b\"; sid:1; rev:5;)\n\
        alert tcp any any -> any any (msg:\"c\"; sid:1; rev:3;)\n\
        alert tcp any any -> any any (msg:\"d\"; sid:1; gid:2;)\n\
        alert tcp any any -> any any (msg:\"bad\"; content:\"x\"; depth:0; sid:7;)\n\
        alert tcp any any -> any any (msg:\"e\"; sid:2;)\n";
    let set = load_rules_from_str(
        text,
        "d.rules",
        &Vars::suricata_defaults(),
        &LoadOptions::default(),
    );
    let msgs: Vec<&str> = set.rules.iter().map(|r| r.rule.msg.as_str()).collect();
    assert_eq!(msgs, ["b", "d", "e"]);
    assert_eq!(set.summary.total, 6);
    assert_eq!(set.summary.loaded, 3);
    assert_eq!(set.summary.skipped, 3);
    assert_eq!(
        set.summary
            .skipped_by_reason
            .get("invalid rule: duplicate sid"),
        // rev 2 is replaced by the later rev 5 (a warning, as in Suricata); rev 3 after
        // rev 5 is the duplicate.
        Some(&1)
    );
    assert_eq!(set.warnings.len(), 2);
    let bad = set
        .errors
        .iter()
        .find(|e| e.sid == Some(7))
        .expect("sid 7 error");
    assert_eq!(bad.line, 5);
    assert_eq!(
        bad.to_string(),
        "d.rules:5 sid 7: invalid `depth` value: `0` out of range 1..65535"
    );
}

#[test]
fn uint_forms() {
    let cases: &[(&str, &[(u64, bool)])] = &[
        ("5", &[(5, true), (4, false)]),
        ("=5", &[(5, true)]),
        ("!5", &[(5, false), (6, true)]),
        ("!=5", &[(5, false)]),
        ("<5", &[(4, true), (5, false)]),
        ("<=5", &[(5, true), (6, false)]),
        (">5", &[(6, true), (5, false)]),
        (">=5", &[(5, true), (4, false)]),
        ("2-5", &[(3, true), (2, false), (5, false)]),
        ("2<>5", &[(4, true), (5, false)]),
        ("!2-5", &[(3, false), (2, true)]),
        ("&0x0f=1", &[(0x11, true), (0x12, false)]),
        ("&0x0f!=1", &[(0x11, false), (0x12, true)]),
        (" 0x10 ", &[(16, true)]),
    ];
    for (s, probes) in cases {
        let m = UintMatch::parse(s, 255, "t").unwrap_or_else(|e| panic!("{s}: {e}"));
        for (v, want) in *probes {
            assert_eq!(m.matches(*v), *want, "{s} on {v}");
        }
    }
    for bad in [
        "", "x", "256", "<0", ">255", "5-5", "6-2", "&1", "1-", "--1",
    ] {
        assert!(UintMatch::parse(bad, 255, "t").is_err(), "`{bad}`");
    }
}
