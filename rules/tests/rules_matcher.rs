//! Table-driven payload matcher tests. Every case is also checked against
//! Suricata 7 itself by `rules_matcher_oracle.rs` (run with `--ignored`
//! where `suricata` is installed).

mod rules_common;

use rules_common::{eval, matcher_cases as cases};
use shrike_rules::matcher::{compile_rule, compile_rule_with, CompiledSection, MatchEnv, Scratch};
use shrike_rules::parse::{parse_rule, Vars};

#[test]
fn table() {
    let mut failures = Vec::new();
    for (i, (opts, payload, want)) in cases::CASES.iter().enumerate() {
        let got = eval(opts, payload);
        if got != *want {
            failures.push(format!(
                "case {i}: `{opts}` on {:?}: want {want}, got {got}",
                String::from_utf8_lossy(payload)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cases::CASES.len() > 150);
}

#[test]
fn compiled_sections_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<shrike_rules::matcher::CompiledSection>();
}

#[test]
fn step_limit_stops_pathological_backtracking() {
    // Many occurrences of each relative content: the retry tree explodes
    // and the step limit must stop it.
    let payload = vec![b'a'; 2000];
    let opts = r#"content:"a"; content:"a"; distance:0; content:"a"; distance:0; content:"a"; distance:0; content:"b"; distance:0;"#;
    let rule = parse_rule(
        &format!("alert udp any any -> any any ({opts} sid:1;)"),
        &Vars::suricata_defaults(),
    )
    .unwrap();
    let secs = compile_rule(&rule).unwrap();
    let mut sc = Scratch::with_limit(3000);
    assert!(!secs[0].matches(&payload, &mut sc, &MatchEnv::default()));
    assert!(sc.steps_used() <= 3000);
}

#[test]
fn dce_endianness_from_env() {
    let rule = parse_rule(
        "alert udp any any -> any any (byte_test:2,=,1,0,dce; sid:1;)",
        &Vars::suricata_defaults(),
    )
    .unwrap();
    let s = &compile_rule(&rule).unwrap()[0];
    let mut sc = Scratch::new();
    assert!(s.matches(
        &[0, 1],
        &mut sc,
        &MatchEnv {
            dce_little_endian: false
        }
    ));
    assert!(!s.matches(
        &[0, 1],
        &mut sc,
        &MatchEnv {
            dce_little_endian: true
        }
    ));
    assert!(s.matches(
        &[1, 0],
        &mut sc,
        &MatchEnv {
            dce_little_endian: true
        }
    ));
}

#[test]
fn base64_decode_runs_base64_data() {
    let opts =
        r#"content:"data="; base64_decode:relative; base64_data; content:"secret"; within:6;"#;
    let rule = parse_rule(
        &format!("alert udp any any -> any any ({opts} sid:1;)"),
        &Vars::suricata_defaults(),
    )
    .unwrap();
    let secs = compile_rule(&rule).unwrap();
    assert_eq!(secs.len(), 1);
    let mut sc = Scratch::new();
    let env = MatchEnv::default();
    assert!(secs[0].matches(b"xx data=c2VjcmV0IHN0dWZm", &mut sc, &env));
    assert!(!secs[0].matches(b"xx data=bm90aGluZyBoZXJl", &mut sc, &env));
    assert!(!secs[0].matches(b"xx c2VjcmV0IHN0dWZm", &mut sc, &env));
}

#[test]
fn string_extraction_matches_strtoull() {
    use shrike_rules::matcher::extract_string;
    use shrike_rules::parse::NumBase::*;
    type Case = (
        &'static [u8],
        shrike_rules::parse::NumBase,
        Option<(u64, usize)>,
    );
    let cases: &[Case] = &[
        (b"123", Dec, Some((123, 3))),
        (b"12a", Dec, Some((12, 2))),
        (b" 42", Dec, Some((42, 3))),
        (b"+7", Dec, Some((7, 2))),
        (b"-1", Dec, Some((u64::MAX, 2))),
        (b"abc", Dec, None),
        (b"", Dec, None),
        (b"ff", Hex, Some((255, 2))),
        (b"0x1F", Hex, Some((31, 4))),
        (b"0xg", Hex, Some((0, 1))),
        (b"777", Oct, Some((511, 3))),
        (b"8", Oct, None),
        (b"99999999999999999999", Dec, None),
        (b"18446744073709551615", Dec, Some((u64::MAX, 20))),
    ];
    for (input, base, want) in cases {
        assert_eq!(
            extract_string(input, *base),
            *want,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// Replays the random cases whose verdicts Suricata 7.0.10 produced
/// (`rules_matcher_oracle.rs` with `SHRIKE_UPDATE_ORACLE=1`).
#[test]
fn random_cases_agree_with_recorded_suricata_verdicts() {
    let text = include_str!("rules_common/random_oracle.tsv");
    let mut n = 0;
    let mut bad = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.splitn(3, '\t');
        let (Some(v), Some(hex), Some(opts)) = (f.next(), f.next(), f.next()) else {
            panic!("bad line {line}");
        };
        let payload: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let got = rules_common::eval(opts, &payload);
        if got != (v == "1") {
            bad.push(format!("{line}: shrike {got}"));
        }
        n += 1;
    }
    assert!(n >= 3000, "{n} cases");
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn pcre_section(pcre: &str, limits: shrike_rules::matcher::PcreLimits) -> CompiledSection {
    let rule = parse_rule(
        &format!("alert udp any any -> any any (pcre:\"{pcre}\"; sid:1;)"),
        &Vars::suricata_defaults(),
    )
    .unwrap();
    compile_rule_with(&rule, limits).unwrap().remove(0)
}

#[test]
fn catastrophic_pcre_is_stopped_by_the_match_limit_and_counted() {
    use shrike_rules::matcher::PcreLimits;
    // `(a+)+$` on a run of a's that does not end the buffer: exponential backtracking.
    let mut hostile = vec![b'a'; 40];
    hostile.push(b'!');
    let env = MatchEnv::default();
    for pat in ["/(a+)+$/", "/(\\w+\\s?)+$/"] {
        let s = pcre_section(pat, PcreLimits::default());
        let mut sc = Scratch::new();
        assert!(!s.matches(&hostile, &mut sc, &env), "{pat}");
        assert!(sc.pcre_limit_hits >= 1, "{pat}: limit hit counted");
        // A buffer it matches quickly still matches, and counts nothing.
        let mut sc = Scratch::new();
        assert!(s.matches(b"aaaa", &mut sc, &env), "{pat}");
        assert_eq!(sc.pcre_limit_hits, 0);
    }
    // A higher limit lets a moderately hostile buffer finish (10 a's: ~2^10 steps).
    let mut moderate = vec![b'a'; 10];
    moderate.push(b'!');
    let tight = pcre_section(
        "/(a+)+$/",
        PcreLimits {
            match_limit: 50,
            match_limit_recursion: 1500,
        },
    );
    let loose = pcre_section(
        "/(a+)+$/",
        PcreLimits {
            match_limit: 1_000_000,
            match_limit_recursion: 1500,
        },
    );
    let mut sc = Scratch::new();
    assert!(!tight.matches(&moderate, &mut sc, &env));
    assert_eq!(sc.pcre_limit_hits, 1);
    let mut sc = Scratch::new();
    assert!(!loose.matches(&moderate, &mut sc, &env));
    assert_eq!(
        sc.pcre_limit_hits, 0,
        "finished within the limit: a real no-match"
    );
}
