//! Loading an engine from files: rule files (one by one, for progress), Suricata's
//! `classification.config` search order, `threshold.config`, and the header scan that
//! tells IP-only rules from "like IP-only" ones (negated addresses).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shrike_rules::config_files::{
    parse_classification_config, parse_threshold_config, Classification, ThresholdEntry,
};
use shrike_rules::loader::{load_rules_from_str, logical_lines, LoadOptions, RuleSource};
use shrike_rules::parse::{ErrorKind, ParseError, Vars};
use shrike_rules::{LoadSummary, RuleLoadError, RuleSet};

use super::{BuildInput, Engine, EngineConfig};

/// Suricata's standard `classification.config`, used when no file is found.
pub const DEFAULT_CLASSIFICATION: &str = include_str!("default-classification.config");

/// Where Suricata looks for its configuration files by default.
pub const SYSCONF_DIR: &str = "/etc/suricata";

/// Rules whose source or destination address contains a negation (directly or through a
/// variable), by file and line.
#[derive(Debug, Clone, Default)]
pub struct NegatedHeaders(HashSet<(Arc<str>, u32)>);

fn header_tokens(h: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(7);
    let mut depth = 0i32;
    let mut start: Option<usize> = None;
    for (i, c) in h.char_indices() {
        match c {
            '[' => {
                depth += 1;
                start.get_or_insert(i);
            }
            ']' => depth -= 1,
            c if c.is_whitespace() && depth <= 0 => {
                if let Some(s) = start.take() {
                    out.push(&h[s..i]);
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        out.push(&h[s..]);
    }
    out
}

/// Does an address specification contain a negation, following `$VARS`?
pub fn address_has_negation(spec: &str, vars: &Vars) -> bool {
    fn walk(s: &str, vars: &Vars, depth: usize) -> bool {
        if depth > 16 {
            return false;
        }
        if s.contains('!') {
            return true;
        }
        let mut rest = s;
        while let Some(p) = rest.find('$') {
            let name: String = rest[p + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if let Some(v) = vars.address(&name) {
                if walk(v, vars, depth + 1) {
                    return true;
                }
            }
            rest = &rest[p + 1 + name.len()..];
        }
        false
    }
    walk(spec, vars, 0)
}

impl NegatedHeaders {
    /// Scan a rule file's text.
    pub fn scan(&mut self, file: &Arc<str>, text: &str, vars: &Vars) {
        for (line, rule) in logical_lines(text) {
            let header = rule.split('(').next().unwrap_or("");
            let toks = header_tokens(header);
            let neg = [toks.get(2), toks.get(5)]
                .into_iter()
                .flatten()
                .any(|t| address_has_negation(t, vars));
            if neg {
                self.0.insert((Arc::clone(file), line));
            }
        }
    }

    /// Was the rule at `src` written with a negated address?
    pub fn contains(&self, src: &RuleSource) -> bool {
        self.0.contains(&(Arc::clone(&src.file), src.line))
    }
}

/// What to load.
#[derive(Debug, Clone, Default)]
pub struct EngineSetup {
    /// Rule files, in order.
    pub rule_files: Vec<PathBuf>,
    /// Address and port variables.
    pub vars: Vars,
    /// `classification-file` from the configuration, if set.
    pub classification_file: Option<PathBuf>,
    /// `reference-config-file` from the configuration, if set (checked, not used).
    pub reference_file: Option<PathBuf>,
    /// `threshold-file` from the configuration, if set.
    pub threshold_file: Option<PathBuf>,
    /// Engine settings.
    pub config: EngineConfig,
    /// Load rule, classification and threshold files even when world-writable or owned by
    /// another non-root user (`--allow-insecure-files`).
    pub allow_insecure_files: bool,
    /// One more owner trusted besides root and the effective user (the `run-as` user).
    pub trusted_uid: Option<u32>,
}

impl EngineSetup {
    /// `Err(why)` when `path` must not be loaded: world-writable or owned by another user
    /// ([`shrike_sys::privileges::check_trusted`]), unless insecure files are allowed.
    /// A missing file passes (it is reported as missing where it is read).
    pub fn check_trusted(&self, path: &Path) -> Result<(), String> {
        if self.allow_insecure_files || std::fs::metadata(path).is_err() {
            return Ok(());
        }
        shrike_sys::privileges::check_trusted(path, self.trusted_uid).map_err(|e| e.to_string())
    }
}

/// An engine plus what loading it found.
#[derive(Debug)]
pub struct LoadedEngine {
    /// The engine.
    pub engine: Engine,
    /// Parser counts (files, rules found, parse errors per reason).
    pub load: LoadSummary,
    /// Rules that failed to parse (or duplicates), with `file:line`.
    pub parse_errors: Vec<RuleLoadError>,
    /// Rule files that could not be read.
    pub missing_files: Vec<PathBuf>,
    /// Rule, classification or threshold files refused as insecure, with the reason.
    pub refused_files: Vec<String>,
    /// Non-fatal notes (duplicate sids, config-file problems).
    pub warnings: Vec<String>,
    /// Where the classifications came from (a path or "built-in").
    pub classification_source: String,
}

/// `classification.config` per Suricata's search: the configured file, else one next to
/// the first rule file, else [`SYSCONF_DIR`], else the built-in default.
pub fn find_classification(setup: &EngineSetup) -> (String, String, Vec<String>) {
    let mut warnings = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = &setup.classification_file {
        candidates.push(p.clone());
    }
    if let Some(dir) = setup.rule_files.first().and_then(|f| f.parent()) {
        candidates.push(dir.join("classification.config"));
    }
    candidates.push(Path::new(SYSCONF_DIR).join("classification.config"));
    for (i, c) in candidates.iter().enumerate() {
        match std::fs::read_to_string(c) {
            Ok(t) => return (c.display().to_string(), t, warnings),
            Err(e) if i == 0 && setup.classification_file.is_some() => {
                warnings.push(format!("classification-file {}: {e}", c.display()))
            }
            Err(_) => {}
        }
    }
    (
        "built-in".into(),
        DEFAULT_CLASSIFICATION.to_string(),
        warnings,
    )
}

/// Load and build. `on_file(done, total)` is called as rule files are read and
/// `on_compile()` once before the build.
pub fn load(
    setup: &EngineSetup,
    on_file: &mut dyn FnMut(usize, usize),
    on_compile: &mut dyn FnMut(),
) -> LoadedEngine {
    super::prefilter::allow_insecure_cache(setup.allow_insecure_files);
    let mut refused: Vec<String> = Vec::new();
    let mut refuse = |p: &Path| match setup.check_trusted(p) {
        Ok(()) => true,
        Err(e) => {
            refused.push(e);
            false
        }
    };
    let class_ok = setup.classification_file.as_deref().is_none_or(&mut refuse);
    let threshold_ok = setup.threshold_file.as_deref().is_none_or(&mut refuse);
    let rules_ok: Vec<bool> = setup.rule_files.iter().map(|p| refuse(p)).collect();
    let (class_src, class_text, mut warnings) = if class_ok {
        find_classification(setup)
    } else {
        (
            "built-in".into(),
            DEFAULT_CLASSIFICATION.to_string(),
            Vec::new(),
        )
    };
    let (classes, class_errs) = parse_classification_config(&class_text);
    for e in class_errs {
        warnings.push(format!("{class_src}:{}: {}", e.line, e.reason));
    }
    let thresholds = match setup.threshold_file.as_ref().filter(|_| threshold_ok) {
        None => Vec::new(),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => {
                let (entries, errs) = parse_threshold_config(&t, &setup.vars);
                for e in errs {
                    warnings.push(format!("{}:{}: {}", p.display(), e.line, e.reason));
                }
                entries
            }
            Err(e) => {
                warnings.push(format!("threshold-file {}: {e}", p.display()));
                Vec::new()
            }
        },
    };
    if let Some(p) = &setup.reference_file {
        if let Err(e) = std::fs::metadata(p) {
            warnings.push(format!("reference-config-file {}: {e}", p.display()));
        }
    }
    let texts: Vec<(Arc<str>, Result<String, String>)> = setup
        .rule_files
        .iter()
        .zip(&rules_ok)
        .map(|(p, &ok)| {
            let name: Arc<str> = Arc::from(p.display().to_string());
            let text = if ok {
                std::fs::read(p)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .map_err(|e| match e.kind() {
                        std::io::ErrorKind::NotFound => "missing rule file: no such file".into(),
                        _ => format!("cannot read rule file: {e}"),
                    })
            } else {
                Err("refused: insecure rule file (world-writable or owned by another user)".into())
            };
            (name, text)
        })
        .collect();
    let mut loaded = load_texts(
        &texts,
        &setup.vars,
        &classes,
        &thresholds,
        &setup.config,
        on_file,
        on_compile,
    );
    loaded.missing_files = setup
        .rule_files
        .iter()
        .zip(&texts)
        .zip(&rules_ok)
        .filter(|((_, (_, t)), &ok)| ok && t.is_err())
        .map(|((p, _), _)| p.clone())
        .collect();
    loaded.refused_files = refused;
    warnings.append(&mut loaded.warnings);
    loaded.warnings = warnings;
    loaded.classification_source = class_src;
    loaded
}

/// Build from rule texts already in memory (`(name, text or read error)` per file).
pub fn load_texts(
    texts: &[(Arc<str>, Result<String, String>)],
    vars: &Vars,
    classes: &HashMap<String, Classification>,
    thresholds: &[ThresholdEntry],
    config: &EngineConfig,
    on_file: &mut dyn FnMut(usize, usize),
    on_compile: &mut dyn FnMut(),
) -> LoadedEngine {
    let opts = LoadOptions {
        reject_unknown_keywords: true,
        classtypes: Some(classes.keys().cloned().collect()),
        requires: shrike_rules::requires::Provided {
            features: config.features.clone(),
            ignore_unknown: config.ignore_unknown_requirements,
        },
    };
    let mut merged = RuleSet::default();
    let mut negated = NegatedHeaders::default();
    let mut index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut removed: Vec<bool> = Vec::new();
    on_file(0, texts.len());
    for (i, (name, text)) in texts.iter().enumerate() {
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                merged.summary.files += 1;
                merged.summary.skipped += 1;
                *merged
                    .summary
                    .skipped_by_reason
                    .entry(ErrorKind::File.to_string())
                    .or_default() += 1;
                merged.errors.push(RuleLoadError {
                    file: Arc::clone(name),
                    line: 0,
                    sid: None,
                    error: ParseError::new(ErrorKind::File, e.clone()),
                });
                on_file(i + 1, texts.len());
                continue;
            }
        };
        negated.scan(name, text, vars);
        let set = load_rules_from_str(text, name, vars, &opts);
        merge(&mut merged, set, &mut index, &mut removed);
        on_file(i + 1, texts.len());
    }
    if removed.iter().any(|&r| r) {
        let mut it = removed.into_iter();
        merged.rules.retain(|_| !it.next().unwrap_or(false));
    }
    merged.summary.loaded = merged.rules.len();
    on_compile();
    let engine = Engine::build(BuildInput {
        rules: &merged.rules,
        negated: Some(&negated),
        classifications: classes,
        thresholds,
        config,
    });
    LoadedEngine {
        engine,
        load: merged.summary,
        parse_errors: merged.errors,
        missing_files: Vec::new(),
        refused_files: Vec::new(),
        warnings: merged.warnings,
        classification_source: String::new(),
    }
}

/// Append one file's rules, resolving duplicate sids across files as the loader does within
/// one (a higher `rev` replaces, otherwise the first one stays).
/// The kind of the note left where a rule was replaced by a newer revision of the same sid
/// (not an error for `-T`, as in Suricata).
pub const REPLACED: ErrorKind = ErrorKind::Semantic("replaced by a newer revision");

fn merge(
    into: &mut RuleSet,
    set: RuleSet,
    index: &mut HashMap<(u32, u32), usize>,
    removed: &mut Vec<bool>,
) {
    let s = &mut into.summary;
    s.files += set.summary.files;
    s.total += set.summary.total;
    s.skipped += set.summary.skipped;
    for (k, v) in set.summary.skipped_by_reason {
        *s.skipped_by_reason.entry(k).or_default() += v;
    }
    for (k, v) in set.summary.unenforced_keywords {
        *s.unenforced_keywords.entry(k).or_default() += v;
    }
    s.requirements_skipped += set.summary.requirements_skipped;
    into.errors.extend(set.errors);
    into.warnings.extend(set.warnings);
    into.notes.extend(set.notes);
    for r in set.rules {
        let key = (r.rule.gid, r.rule.sid);
        if let Some(&old) = index.get(&key) {
            let old_rev = into.rules.get(old).map_or(0, |o| o.rule.rev);
            let dup = ParseError::new(
                ErrorKind::Semantic("duplicate sid"),
                format!("gid {} sid {}", key.0, key.1),
            );
            into.summary.skipped += 1;
            let kind = if r.rule.rev > old_rev {
                REPLACED
            } else {
                dup.kind.clone()
            };
            *into
                .summary
                .skipped_by_reason
                .entry(kind.to_string())
                .or_default() += 1;
            if r.rule.rev > old_rev {
                if let Some(x) = removed.get_mut(old) {
                    *x = true;
                }
                let (f, l) = into
                    .rules
                    .get(old)
                    .map(|o| (Arc::clone(&o.source.file), o.source.line))
                    .unwrap_or_else(|| (Arc::clone(&r.source.file), 0));
                // Suricata replaces the older revision with a warning, not an error.
                into.errors.push(RuleLoadError {
                    file: f,
                    line: l,
                    sid: Some(key.1),
                    error: ParseError::new(REPLACED, format!("gid {} sid {}", key.0, key.1)),
                });
                index.insert(key, into.rules.len());
                into.rules.push(r);
                removed.push(false);
            } else {
                into.errors.push(RuleLoadError {
                    file: Arc::clone(&r.source.file),
                    line: r.source.line,
                    sid: Some(key.1),
                    error: dup,
                });
            }
            continue;
        }
        index.insert(key, into.rules.len());
        into.rules.push(r);
        removed.push(false);
    }
}

/// Build an engine from rule text (tests and tools): Suricata's default variables unless
/// `vars` is given, the built-in classifications, no thresholds file.
pub fn engine_from_str(text: &str, config: &EngineConfig) -> LoadedEngine {
    let vars = Vars::suricata_defaults();
    let (classes, _) = parse_classification_config(DEFAULT_CLASSIFICATION);
    load_texts(
        &[(Arc::from("<rules>"), Ok(text.to_string()))],
        &vars,
        &classes,
        &[],
        config,
        &mut |_, _| {},
        &mut || {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negation_through_variables() {
        let v = Vars::suricata_defaults();
        assert!(address_has_negation("$EXTERNAL_NET", &v));
        assert!(address_has_negation("[1.2.3.4,!5.6.7.8]", &v));
        assert!(!address_has_negation("$HOME_NET", &v));
        assert!(!address_has_negation("any", &v));
        let mut n = NegatedHeaders::default();
        let f: Arc<str> = Arc::from("x.rules");
        n.scan(
            &f,
            "alert ip $EXTERNAL_NET any -> any any (sid:1;)\n\nalert ip any any -> [10.0.0.0/8] any (sid:2;)\n",
            &v,
        );
        assert!(n.contains(&RuleSource {
            file: Arc::clone(&f),
            line: 1
        }));
        assert!(!n.contains(&RuleSource { file: f, line: 3 }));
    }

    #[test]
    fn default_classification_parses() {
        let (c, errs) = parse_classification_config(DEFAULT_CLASSIFICATION);
        assert!(errs.is_empty());
        assert_eq!(c["trojan-activity"].priority, 1);
        assert_eq!(c["bad-unknown"].description, "Potentially Bad Traffic");
    }
}
