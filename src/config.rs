//! Configuration assembly: shrike's own YAML (typed, strict, errors with line and column),
//! Suricata's `suricata.yaml` (the overlapping parts, translated; the rest is reported), and
//! `--set key=value` overrides on either. The types live in `shrike_pipeline::config`.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::suricata_yaml;

pub use shrike_pipeline::config::*;

/// A configuration error, printed as is to the user.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// YAML syntax, unknown key or wrong type; the message carries line and column.
    #[error("{path}: {message}")]
    Yaml { path: PathBuf, message: String },
    #[error("--set {key}: {message}")]
    Set { key: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// A loaded configuration plus what the user should hear about it.
#[derive(Debug, Default)]
pub struct Loaded {
    pub config: SensorConfig,
    /// Settings present in a Suricata config that shrike does not implement.
    pub ignored: Vec<String>,
    /// True when the file was a Suricata `suricata.yaml`.
    pub from_suricata: bool,
    /// Keys of a Suricata config that no Suricata config has (misspellings): each with its
    /// line and column, reported as warnings (Suricata ignores them in silence).
    pub unknown_keys: Vec<crate::suricata_keys::UnknownKey>,
}

/// Load the configuration from an optional file and apply `--set` overrides.
pub fn load(path: Option<&Path>, sets: &[(String, String)]) -> Result<Loaded, ConfigError> {
    let Some(path) = path else {
        let mut config = SensorConfig::default();
        apply_native_sets(&mut config, sets)?;
        return Ok(Loaded {
            config,
            ..Loaded::default()
        });
    };
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if suricata_yaml::looks_like_suricata(&text) {
        let mut tree = suricata_yaml::parse_tree(&text).map_err(|message| ConfigError::Yaml {
            path: path.to_path_buf(),
            message,
        })?;
        for (k, v) in sets {
            set_path(&mut tree, k, v).map_err(|message| ConfigError::Set {
                key: k.clone(),
                message,
            })?;
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let (config, mut ignored) =
            suricata_yaml::translate(&tree, base).map_err(|message| ConfigError::Yaml {
                path: path.to_path_buf(),
                message,
            })?;
        let unknown_keys = crate::suricata_keys::unknown_keys(&text);
        // A misspelled top-level key is reported once, as unknown, not also as unused.
        ignored.retain(|k| {
            !unknown_keys
                .iter()
                .any(|u| u.section.is_empty() && u.key == *k)
        });
        return Ok(Loaded {
            config,
            ignored,
            from_suricata: true,
            unknown_keys,
        });
    }
    let mut config = parse_native(&text).map_err(|message| ConfigError::Yaml {
        path: path.to_path_buf(),
        message,
    })?;
    apply_native_sets(&mut config, sets)?;
    Ok(Loaded {
        config,
        ..Loaded::default()
    })
}

/// Parse shrike's own YAML strictly: unknown keys and wrong types name the key with line and column.
pub fn parse_native(text: &str) -> Result<SensorConfig, String> {
    if text.trim().is_empty() {
        return Ok(SensorConfig::default());
    }
    let options = serde_saphyr::options! { emit_comments: false };
    serde_saphyr::from_str_with_options::<SensorConfig>(text, options).map_err(|e| e.to_string())
}

fn apply_native_sets(
    config: &mut SensorConfig,
    sets: &[(String, String)],
) -> Result<(), ConfigError> {
    if sets.is_empty() {
        return Ok(());
    }
    let mut tree =
        serde_json::to_value(&*config).map_err(|e| ConfigError::Invalid(format!("config: {e}")))?;
    for (k, v) in sets {
        set_path(&mut tree, k, v).map_err(|message| ConfigError::Set {
            key: k.clone(),
            message,
        })?;
        *config = serde_json::from_value(tree.clone()).map_err(|e| ConfigError::Set {
            key: k.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Set `a.b.0.c = value` in a JSON tree. Numeric segments index lists (Suricata's `outputs.1.eve-log`).
/// The value is typed after what it replaces (bool, number, string), or inferred when new.
pub fn set_path(tree: &mut Value, key: &str, value: &str) -> Result<(), String> {
    let segments: Vec<&str> = key.split('.').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err("empty key segment".into());
    }
    let mut cur = tree;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        if cur.is_null() {
            *cur = Value::Object(Default::default());
        }
        let next = match cur {
            Value::Object(map) => {
                // Suricata's `outputs` list holds one-key maps: `outputs.1.eve-log`.
                map.entry(seg.to_string()).or_insert(Value::Null)
            }
            Value::Array(list) => {
                let idx: usize = seg
                    .parse()
                    .map_err(|_| format!("`{seg}` is not a list index"))?;
                if idx >= list.len() {
                    return Err(format!("list index {idx} out of range ({})", list.len()));
                }
                &mut list[idx]
            }
            other => {
                return Err(format!(
                    "`{}` is a {}, not a section",
                    segments[..i].join("."),
                    kind_of(other)
                ))
            }
        };
        if last {
            *next = typed_like(next, value);
            return Ok(());
        }
        cur = next;
    }
    Ok(())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "section",
    }
}

/// Type a `--set` value after the value it replaces.
fn typed_like(old: &Value, s: &str) -> Value {
    match old {
        Value::Bool(_) => match parse_bool(s) {
            Some(b) => Value::Bool(b),
            None => Value::String(s.to_string()),
        },
        Value::Number(_) => parse_number(s).unwrap_or_else(|| Value::String(s.to_string())),
        Value::String(_) => Value::String(s.to_string()),
        _ => infer(s),
    }
}

fn infer(s: &str) -> Value {
    if let Some(b) = parse_bool_strict(s) {
        return Value::Bool(b);
    }
    parse_number(s).unwrap_or_else(|| Value::String(s.to_string()))
}

fn parse_number(s: &str) -> Option<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Some(Value::from(u));
    }
    None
}

fn parse_bool_strict(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" => Some(true),
        "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// Suricata's truth test (`SCConfValIsTrue`): 1, yes, true, on (any case) are true.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_config_is_defaults() {
        let c = parse_native("").unwrap();
        assert_eq!(c.stats.interval, 8);
        assert!(c.interfaces.is_empty());
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let err = parse_native("stats:\n  enabled: true\n  intervall: 5\n").unwrap_err();
        assert!(err.contains("intervall"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("column 3"), "{err}");
    }

    #[test]
    fn wrong_type_names_line_and_column() {
        let err = parse_native("stats:\n  interval: soon\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn set_overrides_typed_values() {
        let mut c = SensorConfig::default();
        apply_native_sets(
            &mut c,
            &[
                ("stats.interval".into(), "30".into()),
                ("stats.enabled".into(), "no".into()),
            ],
        )
        .unwrap();
        assert_eq!(c.stats.interval, 30);
        assert!(!c.stats.enabled);
    }

    #[test]
    fn set_unknown_key_is_an_error() {
        let mut c = SensorConfig::default();
        let err = apply_native_sets(&mut c, &[("stats.bogus".into(), "1".into())]).unwrap_err();
        assert!(err.to_string().contains("stats.bogus"), "{err}");
        let err = apply_native_sets(&mut c, &[("stats.interval".into(), "x".into())]).unwrap_err();
        assert!(err.to_string().contains("stats.interval"), "{err}");
    }

    #[test]
    fn set_path_indexes_lists() {
        let mut v: Value =
            serde_json::json!({"outputs": [{"fast": {}}, {"eve-log": {"enabled": true}}]});
        set_path(&mut v, "outputs.1.eve-log.enabled", "no").unwrap();
        assert_eq!(v["outputs"][1]["eve-log"]["enabled"], Value::Bool(false));
        assert!(set_path(&mut v, "outputs.7.x", "1").is_err());
        set_path(&mut v, "stream.midstream", "true").unwrap();
        assert_eq!(v["stream"]["midstream"], Value::Bool(true));
    }
}
