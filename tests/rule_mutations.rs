//! Malformed rules, shrike against Suricata: `tests/data/rule-mutations.tsv` holds ET Open rules
//! mutated by `scripts/rule-mutations.py` (bad quoting, escapes, terminators, unknown options,
//! bad modifiers, headers, pcre, thresholds ...) plus unmutated controls, each with the verdict
//! of Suricata 7.0.10's `suricata -T` on that rule alone. Each rule goes through the loading
//! path of `shrike -T` (parser, loader, engine compile; Suricata's default variables and
//! classifications) and the verdicts must agree on at least 99% of the rules; every
//! disagreement is printed. A rule shrike loads without enforcing a keyword counts as
//! accepted, as Suricata loads it.

use std::collections::BTreeMap;
use std::sync::Arc;

use shrike_detect::setup::{load_texts, DEFAULT_CLASSIFICATION, REPLACED};
use shrike_detect::{EngineConfig, SkipReason};
use shrike_rules::config_files::parse_classification_config;
use shrike_rules::Vars;

const TABLE: &str = include_str!("data/rule-mutations.tsv");

struct Row<'a> {
    id: &'a str,
    operator: &'a str,
    suricata_accepts: bool,
    suricata_message: &'a str,
    rule: &'a str,
}

fn rows() -> Vec<Row<'static>> {
    let mut out = Vec::new();
    for (n, line) in TABLE.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("id\t") || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.splitn(5, '\t').collect();
        let [id, operator, verdict, msg, rule] = f.as_slice() else {
            panic!("rule-mutations.tsv line {}: expected 5 columns", n + 1);
        };
        let suricata_accepts = match *verdict {
            "accept" => true,
            "reject" => false,
            v => panic!("rule-mutations.tsv line {}: verdict `{v}`", n + 1),
        };
        out.push(Row {
            id,
            operator,
            suricata_accepts,
            suricata_message: msg,
            rule,
        });
    }
    out
}

/// shrike's `-T` verdict on one rule: `Ok` when it loads, else the reasons it failed.
fn shrike_verdict(
    rule: &str,
    vars: &Vars,
    classes: &std::collections::HashMap<String, shrike_rules::config_files::Classification>,
) -> Result<(), String> {
    let texts = [(Arc::from("mutation.rules"), Ok(rule.to_string()))];
    let loaded = load_texts(
        &texts,
        vars,
        classes,
        &[],
        &EngineConfig::default(),
        &mut |_, _| {},
        &mut || {},
    );
    let mut why: Vec<String> = loaded
        .parse_errors
        .iter()
        .filter(|e| e.error.kind != REPLACED)
        .map(|e| e.to_string())
        .collect();
    why.extend(
        loaded
            .engine
            .report()
            .skipped
            .iter()
            .filter(|s| matches!(s.reason, SkipReason::Invalid(_)))
            .map(|s| s.reason.to_string()),
    );
    if loaded.load.total != 1 {
        why.push(format!("{} rules found, not 1", loaded.load.total));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

#[test]
fn table_is_big_enough_and_varied() {
    let rows = rows();
    let mutated: Vec<_> = rows.iter().filter(|r| r.operator != "control").collect();
    let ops: std::collections::BTreeSet<_> = mutated.iter().map(|r| r.operator).collect();
    assert!(mutated.len() >= 200, "{} mutated rules", mutated.len());
    assert!(ops.len() >= 50, "{} operators", ops.len());
    assert!(
        rows.iter()
            .filter(|r| r.operator == "control")
            .all(|r| r.suricata_accepts),
        "a control rule is rejected by Suricata"
    );
    // Both verdicts are well represented, so agreement is not reached by always saying one.
    let rejected = mutated.iter().filter(|r| !r.suricata_accepts).count();
    assert!(rejected >= 150 && mutated.len() - rejected >= 50);
}

#[test]
fn shrike_agrees_with_suricata_on_malformed_rules() {
    let vars = Vars::suricata_defaults();
    let (classes, errs) = parse_classification_config(DEFAULT_CLASSIFICATION);
    assert!(errs.is_empty());
    let rows = rows();
    let mut disagree = Vec::new();
    let mut per_op: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in &rows {
        let v = shrike_verdict(r.rule, &vars, &classes);
        let e = per_op.entry(r.operator).or_default();
        e.0 += 1;
        if v.is_ok() != r.suricata_accepts {
            e.1 += 1;
            disagree.push(format!(
                "#{} {}: suricata {} ({}), shrike {}\n    {}",
                r.id,
                r.operator,
                if r.suricata_accepts {
                    "accepts"
                } else {
                    "rejects"
                },
                r.suricata_message,
                match &v {
                    Ok(()) => "accepts".to_string(),
                    Err(why) => format!("rejects: {why}"),
                },
                r.rule.chars().take(300).collect::<String>()
            ));
        }
    }
    for d in &disagree {
        println!("{d}");
    }
    let agree = rows.len() - disagree.len();
    let pct = 100.0 * agree as f64 / rows.len() as f64;
    println!(
        "agreement with suricata -T: {agree}/{} rules ({pct:.1}%), {} operators",
        rows.len(),
        per_op.len()
    );
    assert!(
        agree * 100 >= rows.len() * 99,
        "agreement {pct:.1}% is under 99% ({} disagreements, listed above)",
        disagree.len()
    );
}
