//! The rule parser and loader: the input is a rules file (any bytes, lossily UTF-8). Every
//! loaded rule is also compiled to its payload matchers and run over the input bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_rules::matcher::{compile_rule, MatchEnv, Scratch};
use shrike_rules::{load_rules_from_str, parse_rule, LoadOptions, Vars};
use std::sync::OnceLock;

fn vars() -> &'static Vars {
    static V: OnceLock<Vars> = OnceLock::new();
    V.get_or_init(Vars::suricata_defaults)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let opts = LoadOptions {
        reject_unknown_keywords: data.first().is_some_and(|b| b & 1 == 0),
        classtypes: None,
        ..LoadOptions::default()
    };
    let set = load_rules_from_str(&text, "fuzz.rules", vars(), &opts);
    assert_eq!(
        set.summary.loaded + set.summary.skipped,
        set.summary.total,
        "every rule is either loaded or skipped"
    );
    for e in &set.errors {
        let msg = e.to_string();
        assert!(
            msg.starts_with("fuzz.rules:"),
            "error names the file: {msg}"
        );
    }
    let mut scratch = Scratch::default();
    for r in set.rules.iter().take(8) {
        if let Ok(sections) = compile_rule(&r.rule) {
            for s in &sections {
                let _ = s.matches(data, &mut scratch, &MatchEnv::default());
            }
        }
    }
    // The single-rule entry point on the first line, with an empty variable table.
    if let Some(line) = text.lines().next() {
        let _ = parse_rule(line, &Vars::empty());
    }
});
