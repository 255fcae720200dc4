//! Unknown keys in a `suricata.yaml`: Suricata ignores a key it does not know (a misspelled
//! `comunity-id:` turns nothing on, in silence); shrike names each one with its line and column
//! and the known key it most likely meant. The known keys are those of Suricata 7's stock
//! config and of the suricata-verify test configs (`suricata_keys.txt`, made by
//! `scripts/suricata-keys.py`).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::collections::HashSet;
use std::fmt;

/// One key path per line (`outputs[].eve-log.community-id`); `[]` a list item, `*` a name.
const KNOWN: &str = include_str!("suricata_keys.txt");

/// A key that no Suricata config has at its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key as written.
    pub key: String,
    /// The section it sits in (`outputs.eve-log`), empty at the top level.
    pub section: String,
    pub line: u64,
    pub column: u64,
    /// The known key at that place closest in spelling, when one is close.
    pub suggestion: Option<String>,
}

impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown key `{}`", self.key)?;
        if !self.section.is_empty() {
            write!(f, " in `{}`", self.section)?;
        }
        write!(f, " at line {}, column {}", self.line, self.column)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        write!(f, "; Suricata ignores it, and so does shrike")
    }
}

/// The unknown keys of a `suricata.yaml` text, in document order. A text that does not parse
/// gives none (the caller reports the syntax error).
pub fn unknown_keys(text: &str) -> Vec<UnknownKey> {
    let options = serde_saphyr::options! { emit_comments: false };
    let Ok(root) = serde_saphyr::from_str_with_options::<Node>(text, options) else {
        return Vec::new();
    };
    let known = known_set();
    let mut out = Vec::new();
    walk(&root, "", "", &known, &mut out);
    out
}

fn known_set() -> HashSet<&'static str> {
    KNOWN
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `path` is the normalised path (`outputs[].eve-log`), `shown` the one for the user
/// (`outputs.eve-log`).
fn walk(node: &Node, path: &str, shown: &str, known: &HashSet<&str>, out: &mut Vec<UnknownKey>) {
    match node {
        Node::Map(entries) => {
            for (key, child) in entries {
                let name = key.value.0.as_str();
                if name == "<<" {
                    continue;
                }
                let exact = join(path, name);
                let wild = join(path, "*");
                let next = if known.contains(exact.as_str()) {
                    exact
                } else if known.contains(wild.as_str()) {
                    wild
                } else {
                    out.push(UnknownKey {
                        key: name.to_string(),
                        section: shown.to_string(),
                        line: key.referenced.line(),
                        column: key.referenced.column(),
                        suggestion: suggest(name, path, known),
                    });
                    continue;
                };
                walk(child, &next, &join(shown, name), known, out);
            }
        }
        Node::Seq(items) => {
            let path = format!("{path}[]");
            for item in items {
                walk(item, &path, shown, known, out);
            }
        }
        Node::Other => {}
    }
}

/// The known sibling closest to `name` (edit distance at most 2, or a third of its length).
fn suggest(name: &str, parent: &str, known: &HashSet<&str>) -> Option<String> {
    let prefix = if parent.is_empty() {
        String::new()
    } else {
        format!("{parent}.")
    };
    let limit = (name.chars().count() / 3).max(2);
    known
        .iter()
        .filter_map(|k| k.strip_prefix(prefix.as_str()))
        .filter(|rest| !rest.contains('.') && !rest.contains('[') && *rest != "*")
        .map(|cand| (edit_distance(name, cand), cand))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// A YAML document reduced to its shape, map keys with their positions.
enum Node {
    Map(Vec<(Spanned<KeyName>, Node)>),
    Seq(Vec<Node>),
    Other,
}

/// A map key of any scalar type, as text.
struct KeyName(String);

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<KeyName, E> {
                Ok(KeyName(v.to_string()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<KeyName, E> {
                Ok(KeyName("null".into()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a YAML node")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(e) = m.next_entry::<Spanned<KeyName>, Node>()? {
                    entries.push(e);
                }
                Ok(Node::Map(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(n) = s.next_element::<Node>()? {
                    items.push(n);
                }
                Ok(Node::Seq(items))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Other)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_eve_key_is_named_with_position_and_suggestion() {
        let text =
            "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      enabled: yes\n      comunity-id: yes\n";
        let u = unknown_keys(text);
        assert_eq!(u.len(), 1, "{u:?}");
        let k = &u[0];
        assert_eq!(k.key, "comunity-id");
        assert_eq!(k.section, "outputs.eve-log");
        assert_eq!((k.line, k.column), (6, 7));
        assert_eq!(k.suggestion.as_deref(), Some("community-id"));
        let msg = k.to_string();
        assert!(
            msg.contains("unknown key `comunity-id`")
                && msg.contains("line 6, column 7")
                && msg.contains("did you mean `community-id`?"),
            "{msg}"
        );
    }

    #[test]
    fn top_level_nested_and_named_keys() {
        let text = "sensor-nam: x\nvars:\n  address-groups:\n    MY_NET: \"[10.0.0.0/8]\"\n\
                    stream:\n  reassembly:\n    depht: 1mb\n    depth: 1mb\n\
                    threading:\n  cpu-affinity:\n    - worker-cpu-set:\n        cpu: [0]\n        modee: x\n\
                    zzzz-not-a-key: 1\n";
        let u = unknown_keys(text);
        let got: Vec<(&str, &str, u64, Option<&str>)> = u
            .iter()
            .map(|k| {
                (
                    k.key.as_str(),
                    k.section.as_str(),
                    k.line,
                    k.suggestion.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("sensor-nam", "", 1, Some("sensor-name")),
                ("depht", "stream.reassembly", 7, Some("depth")),
                (
                    "modee",
                    "threading.cpu-affinity.worker-cpu-set",
                    13,
                    Some("mode")
                ),
                ("zzzz-not-a-key", "", 14, None),
            ]
        );
    }

    #[test]
    fn stock_and_suricata_verify_configs_have_no_unknown_keys() {
        let mut files = vec![std::path::PathBuf::from("/etc/suricata/suricata.yaml")];
        if let Ok(dir) = std::fs::read_dir("../shared/suricata-verify/tests") {
            for e in dir.flatten() {
                files.push(e.path().join("suricata.yaml"));
            }
        }
        files.push("../shared/suricata-verify/suricata.yaml".into());
        let mut checked = 0;
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            checked += 1;
            let u = unknown_keys(&text);
            assert!(u.is_empty(), "{}: {:?}", f.display(), u);
        }
        eprintln!("{checked} configs checked");
    }
}
