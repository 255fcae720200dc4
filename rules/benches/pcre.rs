//! Catastrophic-backtracking `pcre` against hostile buffers (issue 25): the cost of one
//! inspection with Suricata's default limits (`pcre.match-limit` 3500,
//! `match-limit-recursion` 1500) next to PCRE2's own defaults (match limit 10,000,000), and
//! a benign buffer for scale.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use shrike_rules::matcher::Scratch;
use shrike_rules::matcher::{compile_rule_with, CompiledSection, MatchEnv, PcreLimits};
use shrike_rules::parse::{parse_rule, Vars};

fn section(pcre: &str, limits: PcreLimits) -> CompiledSection {
    let rule = parse_rule(
        &format!("alert udp any any -> any any (pcre:\"{pcre}\"; sid:1;)"),
        &Vars::suricata_defaults(),
    )
    .expect("rule parses");
    compile_rule_with(&rule, limits)
        .expect("rule compiles")
        .remove(0)
}

fn bench(c: &mut Criterion) {
    let mut hostile = vec![b'a'; 63];
    hostile.push(b'!');
    let benign = b"GET /index.html HTTP/1.1\r\nHost: www.example.com\r\n\r\n".to_vec();
    let env = MatchEnv::default();
    let pcre2_default = PcreLimits {
        match_limit: 0,
        match_limit_recursion: 0,
    };
    let mut g = c.benchmark_group("pcre");
    g.sample_size(10);
    for (name, pat) in [
        ("a_plus_plus", "/(a+)+$/"),
        ("word_space", "/(\\w+\\s?)+$/"),
    ] {
        for (lname, limits) in [
            ("suricata_limits", PcreLimits::default()),
            ("pcre2_defaults", pcre2_default),
        ] {
            let s = section(pat, limits);
            let mut sc = Scratch::new();
            g.bench_function(format!("{name}/{lname}/hostile_64"), |b| {
                b.iter(|| s.matches(black_box(&hostile), &mut sc, &env))
            });
            eprintln!("{name}/{lname}: limit hits {}", sc.pcre_limit_hits);
            let mut sc = Scratch::new();
            g.bench_function(format!("{name}/{lname}/benign"), |b| {
                b.iter(|| s.matches(black_box(&benign), &mut sc, &env))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
