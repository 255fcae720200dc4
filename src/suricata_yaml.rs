//! Reading Suricata's `suricata.yaml`: the parts that overlap with shrike are translated into
//! [`SensorConfig`]; every other setting is listed so the user knows it was not applied.

use serde_json::{Map, Value};
use std::path::Path;

use crate::config::{parse_bool, SensorConfig};

/// Top-level keys of a Suricata config that shrike translates (fully or in part).
const TRANSLATED: &[&str] = &[
    "vars",
    "default-rule-path",
    "rule-files",
    "classification-file",
    "reference-config-file",
    "threshold-file",
    "default-log-dir",
    "stats",
    "outputs",
    "flow-timeouts",
    "flow",
    "stream",
    "decoder",
    "vlan",
    "af-packet",
    "dpdk",
    "app-layer",
    "defrag",
    "host-os-policy",
    "detect",
    "mpm-algo",
    "pcre",
    "sensor-name",
    "threading",
];

/// Keys that have no meaning for shrike and are accepted silently.
const SILENT: &[&str] = &[
    "suricata-version",
    "plugins",
    "logging",
    "pid-file",
    "coredump",
    "run-as",
    "unix-command",
    "legacy",
    "engine-analysis",
    "security",
    "profiling",
    "pcap-file",
    "max-pending-packets",
    "runmode",
    "autofp-scheduler",
    "default-packet-size",
    "asn1-max-frames",
    "datasets",
    "heartbeat",
    "spm-algo",
];

/// Does this text look like a Suricata config rather than a shrike one?
pub fn looks_like_suricata(text: &str) -> bool {
    let head = text.trim_start();
    if head.starts_with("%YAML") {
        return true;
    }
    text.lines().any(|l| {
        let l = l.trim_end();
        !l.starts_with(' ')
            && (l.starts_with("outputs:")
                || l.starts_with("af-packet:")
                || l.starts_with("default-rule-path:")
                || l.starts_with("rule-files:")
                || l.starts_with("suricata-version:")
                || l.starts_with("app-layer:"))
    })
}

/// Parse a Suricata YAML document into a JSON tree (YAML 1.1 booleans accepted).
pub fn parse_tree(text: &str) -> Result<Value, String> {
    let options = serde_saphyr::options! { emit_comments: false };
    let v: Value = serde_saphyr::from_str_with_options(text, options).map_err(|e| e.to_string())?;
    Ok(match v {
        Value::Null => Value::Object(Map::new()),
        v => v,
    })
}

/// Suricata's truth test on a YAML value.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_i64() == Some(1),
        Value::String(s) => parse_bool(s).unwrap_or(false),
        _ => false,
    }
}

/// Suricata size strings: `64kb`, `1mb`, `2gb`, plain numbers.
pub fn parse_size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.trim().to_ascii_lowercase();
            let (num, mul) = if let Some(n) = s.strip_suffix("kib").or(s.strip_suffix("kb")) {
                (n, 1024)
            } else if let Some(n) = s.strip_suffix("mib").or(s.strip_suffix("mb")) {
                (n, 1024 * 1024)
            } else if let Some(n) = s.strip_suffix("gib").or(s.strip_suffix("gb")) {
                (n, 1024 * 1024 * 1024)
            } else if let Some(n) = s.strip_suffix('b') {
                (n, 1)
            } else {
                (s.as_str(), 1)
            };
            let num = num.trim();
            if let Ok(i) = num.parse::<u64>() {
                Some(i * mul)
            } else {
                num.parse::<f64>().ok().map(|f| (f * mul as f64) as u64)
            }
        }
        _ => None,
    }
}

fn get<'a>(tree: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = tree;
    for seg in path.split('.') {
        cur = cur.get(seg)?;
    }
    if cur.is_null() {
        None
    } else {
        Some(cur)
    }
}

fn as_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Translate a Suricata tree into a shrike config. Returns the config and the list of
/// settings that were not applied.
pub fn translate(tree: &Value, base: &Path) -> Result<(SensorConfig, Vec<String>), String> {
    let mut ignored = Vec::new();
    let mut out = serde_json::to_value(SensorConfig::default()).map_err(|e| e.to_string())?;

    if let Some(obj) = tree.as_object() {
        for k in obj.keys() {
            if !TRANSLATED.contains(&k.as_str()) && !SILENT.contains(&k.as_str()) {
                ignored.push(k.clone());
            }
        }
    }

    // vars
    for (group, key) in [
        ("address-groups", "address-groups"),
        ("port-groups", "port-groups"),
    ] {
        if let Some(Value::Object(m)) = get(tree, &format!("vars.{group}")) {
            let mut dst = Map::new();
            for (name, v) in m {
                if let Some(s) = as_string(v) {
                    dst.insert(name.clone(), Value::String(s));
                }
            }
            out["vars"][key] = Value::Object(dst);
        }
    }

    // rules
    let resolve = |v: &Value| -> Option<Value> {
        as_string(v).map(|s| {
            let p = Path::new(&s);
            Value::String(if p.is_absolute() {
                s
            } else {
                base.join(p).to_string_lossy().into_owned()
            })
        })
    };
    if let Some(v) = get(tree, "default-rule-path") {
        if let Some(p) = resolve(v) {
            out["rules"]["default-rule-path"] = p;
        }
    }
    if let Some(Value::Array(files)) = get(tree, "rule-files") {
        out["rules"]["rule-files"] = Value::Array(
            files
                .iter()
                .filter_map(as_string)
                .map(Value::String)
                .collect(),
        );
    }
    for key in [
        "classification-file",
        "reference-config-file",
        "threshold-file",
    ] {
        if let Some(v) = get(tree, key) {
            if let Some(p) = resolve(v) {
                out["rules"][key] = p;
            }
        }
    }
    if let Some(v) = get(tree, "default-log-dir").and_then(as_string) {
        out["default-log-dir"] = Value::String(v);
    }

    // stats
    if let Some(v) = get(tree, "stats.enabled") {
        out["stats"]["enabled"] = Value::Bool(truthy(v));
    }
    if let Some(v) = get(tree, "stats.interval").and_then(parse_size) {
        out["stats"]["interval"] = Value::from(v.max(1));
    }

    // `sensor-name`: the `host` field of every EVE record.
    if let Some(v) = get(tree, "sensor-name").and_then(as_string) {
        out["sensor-name"] = Value::String(v);
    }

    crate::suricata_sections::translate_sections(tree, &mut out, &mut ignored)?;

    let config: SensorConfig = serde_json::from_value(out).map_err(|e| e.to_string())?;
    Ok((config, ignored))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_suricata_configs() {
        assert!(looks_like_suricata("%YAML 1.1\n---\nvars:\n"));
        assert!(looks_like_suricata("vars:\n  x: 1\noutputs:\n  - fast:\n"));
        assert!(!looks_like_suricata("stats:\n  interval: 3\n"));
    }

    #[test]
    fn sizes_parse_like_suricata() {
        assert_eq!(parse_size(&Value::from("64kb")), Some(65536));
        assert_eq!(parse_size(&Value::from("1mb")), Some(1 << 20));
        assert_eq!(parse_size(&Value::from("1gb")), Some(1 << 30));
        assert_eq!(parse_size(&Value::from(0)), Some(0));
        assert_eq!(parse_size(&Value::from("12")), Some(12));
        assert_eq!(parse_size(&Value::from("x")), None);
    }

    #[test]
    fn translates_the_suricata_verify_default_config() {
        let path = Path::new("../shared/suricata-verify/suricata.yaml");
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skipped: {} not present", path.display());
            return;
        };
        assert!(looks_like_suricata(&text));
        let tree = parse_tree(&text).unwrap();
        let (cfg, _ignored) = translate(&tree, Path::new("/x")).unwrap();
        assert_eq!(
            cfg.vars.address_groups.get("HOME_NET").map(String::as_str),
            Some("[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]")
        );
        assert_eq!(
            cfg.vars.port_groups.get("ORACLE_PORTS").map(String::as_str),
            Some("1521")
        );
        assert_eq!(cfg.stats.interval, 8);
    }
}
