//! Every counter name `DecodeStats::visit` and `FlowStats::visit` yield is a path of the
//! EVE schema's `stats` object.

use serde_json::Value;
use shrike_flow::stats::FlowStats;
use shrike_packet::stats::DecodeStats;

fn schema() -> Option<Value> {
    let base = match std::env::var_os("SHRIKE_SHARED") {
        Some(s) => std::path::PathBuf::from(s),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    let text = std::fs::read_to_string(base.join("eve-schema/schema.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn has_path(stats: &Value, dotted: &str) -> bool {
    let mut node = stats;
    for part in dotted.split('.') {
        match node.get("properties").and_then(|p| p.get(part)) {
            Some(n) => node = n,
            None => return false,
        }
    }
    node.get("type").and_then(Value::as_str) == Some("integer")
}

#[test]
fn stats_names_validate_against_the_eve_schema() {
    let Some(s) = schema() else {
        eprintln!("schema not found; skipping");
        return;
    };
    let stats = &s["properties"]["stats"];
    let mut names = Vec::new();
    DecodeStats::default().visit(&mut |n, _| names.push(n.to_string()));
    let decoder = names.len();
    FlowStats::default().visit(&mut |n, _| names.push(n.to_string()));
    let bad: Vec<_> = names.iter().filter(|n| !has_path(stats, n)).collect();
    assert!(bad.is_empty(), "names not in the schema: {bad:?}");
    assert!(decoder > 150, "{decoder}");
    // Sanity of the checker itself.
    assert!(!has_path(stats, "decoder.event.ipv4.nope"));
    assert!(!has_path(stats, "decoder.event"));
}
