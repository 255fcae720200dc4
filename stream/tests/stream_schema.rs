//! Every counter name `StreamStats::visit` and `DefragStats::visit` yield is a path of the
//! EVE schema's `stats` object.

use serde_json::Value;
use shrike_packet::defrag::DefragStats;
use shrike_stream::StreamStats;

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
fn stream_and_defrag_stats_names_are_in_the_schema() {
    let mut names = Vec::new();
    StreamStats::default().visit(&mut |n, _| names.push(n.to_string()));
    DefragStats::default().visit(&mut |n, _| names.push(n.to_string()));
    assert!(names.len() > 90, "{}", names.len());
    let Some(s) = schema() else {
        eprintln!("schema not found; skipping");
        return;
    };
    let stats = &s["properties"]["stats"];
    let bad: Vec<_> = names.iter().filter(|n| !has_path(stats, n)).collect();
    assert!(bad.is_empty(), "names not in the schema: {bad:?}");
}
