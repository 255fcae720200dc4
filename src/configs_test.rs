//! configs/shrike.yaml documents every key of `SensorConfig` at its default: checked here
//! against the serde types themselves, so a key added to the config without a line in the
//! file (or a file line for a key that does not exist) fails the build.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::config::{parse_native, SensorConfig};
use shrike_pipeline::ops::config::{MetricsConfig, RunAsConfig, UnixCommandConfig};

const BASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/shrike.yaml");

/// Prefix of the ops-section lines kept commented until the binary wires them.
const OPS_PREFIX: &str = "#~ ";

/// Every key path of a JSON tree (`detect.flow.max-flows`); lists are leaves.
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Value::Object(m) = v {
        for (k, child) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(path.clone());
            key_paths(child, &path, out);
        }
    }
}

fn yaml_tree(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).expect("configs/shrike.yaml is valid YAML")
}

/// The ops sections: the `#~ ` lines uncommented.
fn ops_block(text: &str) -> String {
    text.lines()
        .filter_map(|l| l.strip_prefix(OPS_PREFIX))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn base_config_has_every_key_at_its_default() {
    let text = std::fs::read_to_string(BASE).unwrap();
    let defaults = serde_json::to_value(SensorConfig::default()).unwrap();
    let wired = defaults.get("unix-command").is_some();
    // Once SensorConfig has the ops sections, the file must have them uncommented.
    let effective = if wired {
        assert!(
            !text.lines().any(|l| l.starts_with(OPS_PREFIX)),
            "SensorConfig has unix-command/run-as/metrics: remove the `#~ ` prefixes in {BASE}"
        );
        text.clone()
    } else {
        text.clone()
    };
    let file_tree = yaml_tree(&effective);

    let mut want = BTreeSet::new();
    key_paths(&defaults, "", &mut want);
    let mut have = BTreeSet::new();
    key_paths(&file_tree, "", &mut have);
    let missing: Vec<_> = want.difference(&have).collect();
    let unknown: Vec<_> = have.difference(&want).collect();
    assert!(missing.is_empty(), "keys missing from {BASE}: {missing:?}");
    assert!(
        unknown.is_empty(),
        "keys in {BASE} that SensorConfig lacks: {unknown:?}"
    );

    // Values are the defaults. Flow timeouts are written out as the built-in values they
    // resolve to (the serde default is `~`, meaning "built in"): compare them resolved.
    let parsed = parse_native(&effective).expect("shrike parses configs/shrike.yaml");
    let mut got = serde_json::to_value(&parsed).unwrap();
    let mut exp = defaults.clone();
    for p in [&mut got, &mut exp] {
        p["detect"]["flow"]["timeouts"] = Value::Null;
    }
    assert_eq!(got, exp, "configs/shrike.yaml must hold the defaults");
    use shrike_flow::config::TimeoutProto as P;
    let d = SensorConfig::default().detect.flow.timeouts;
    for proto in [P::Tcp, P::Udp, P::Icmp, P::Other] {
        assert_eq!(
            parsed.detect.flow.timeouts.resolve(proto),
            d.resolve(proto),
            "{proto:?}"
        );
    }
    // Every key line carries a comment (on the line, or a comment line just above within
    // its section); spot-check that no section header lacks one.
    let mut prev_comment = false;
    for l in effective.lines() {
        let t = l.trim_start();
        if t.starts_with('#') {
            prev_comment = true;
            continue;
        }
        if t.is_empty() {
            prev_comment = false;
            continue;
        }
        let top_level = !l.starts_with(' ');
        if top_level {
            assert!(
                prev_comment || l.contains('#'),
                "top-level key without a comment: {l}"
            );
        }
        prev_comment = false;
    }
}

#[test]
fn ops_sections_in_base_config_parse_at_defaults() {
    let text = std::fs::read_to_string(BASE).unwrap();
    let block = ops_block(&text);
    if serde_json::to_value(SensorConfig::default())
        .unwrap()
        .get("unix-command")
        .is_some()
    {
        return; // wired: covered by the test above
    }
    let tree = yaml_tree(&block);
    let section = |k: &str| {
        tree.get(k)
            .cloned()
            .unwrap_or_else(|| panic!("no {k} in the #~ block"))
    };
    let u: UnixCommandConfig = serde_json::from_value(section("unix-command")).unwrap();
    assert_eq!(u, UnixCommandConfig::default());
    let r: RunAsConfig = serde_json::from_value(section("run-as")).unwrap();
    assert_eq!(r, RunAsConfig::default());
    let m: MetricsConfig = serde_json::from_value(section("metrics")).unwrap();
    assert_eq!(m, MetricsConfig::default());
    let mut keys = BTreeSet::new();
    key_paths(&tree, "", &mut keys);
    let mut want = BTreeSet::new();
    for (k, v) in [
        (
            "unix-command",
            serde_json::to_value(UnixCommandConfig::default()).unwrap(),
        ),
        (
            "run-as",
            serde_json::to_value(RunAsConfig::default()).unwrap(),
        ),
        (
            "metrics",
            serde_json::to_value(MetricsConfig::default()).unwrap(),
        ),
    ] {
        want.insert(k.to_string());
        key_paths(&v, k, &mut want);
    }
    assert_eq!(keys, want);
}

/// No file in configs/ may be mistaken for a Suricata suricata.yaml (which would be
/// translated leniently instead of checked key by key).
#[test]
fn configs_are_read_as_shrike_yaml() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut files = vec![root.join("shrike.yaml")];
    for e in std::fs::read_dir(root.join("examples")).unwrap() {
        files.push(e.unwrap().path());
    }
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            !crate::suricata_yaml::looks_like_suricata(&text),
            "{} looks like a suricata.yaml",
            p.display()
        );
    }
    assert!(files.len() >= 3);
}
