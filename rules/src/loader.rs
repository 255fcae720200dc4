//! Loading rule files: line joining, comments, per-rule errors with
//! `file:line`, duplicate-sid resolution and a per-reason summary.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::parse::{sniff_sid, ErrorKind, Keyword, ParseError, Rule, RuleParser, Vars};

/// Loader settings.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Skip rules using a keyword Suricata 7 does not know (Suricata does).
    pub reject_unknown_keywords: bool,
    /// When set, warn about rules whose `classtype` is not in this list (Suricata 7 loads
    /// them with a warning and priority 3).
    pub classtypes: Option<Vec<String>>,
    /// What `requires` is checked against (features on, `ignore-unknown-requirements`).
    pub requires: crate::requires::Provided,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            reject_unknown_keywords: true,
            classtypes: None,
            requires: crate::requires::Provided::default(),
        }
    }
}

/// Where a rule came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSource {
    /// File name as given.
    pub file: Arc<str>,
    /// 1-based line where the rule starts.
    pub line: u32,
}

/// A parsed rule with its origin.
#[derive(Debug, Clone)]
pub struct LoadedRule {
    /// The rule.
    pub rule: Rule,
    /// Its origin.
    pub source: RuleSource,
}

/// A rule that was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleLoadError {
    /// File name.
    pub file: Arc<str>,
    /// 1-based start line (0 for file-level errors).
    pub line: u32,
    /// The rule's sid, when it could be found.
    pub sid: Option<u32>,
    /// Why.
    pub error: ParseError,
}

impl fmt::Display for RuleLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(s) = self.sid {
            write!(f, " sid {s}")?;
        }
        write!(f, ": {}", self.error)
    }
}

/// Counts from one load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadSummary {
    /// Files read.
    pub files: usize,
    /// Rules found (not counting comments).
    pub total: usize,
    /// Rules kept.
    pub loaded: usize,
    /// Rules skipped, including duplicates.
    pub skipped: usize,
    /// Skipped rules per reason (the [`ErrorKind`] text).
    pub skipped_by_reason: BTreeMap<String, usize>,
    /// Rules loaded that use keywords shrike does not enforce yet, per keyword.
    pub unenforced_keywords: BTreeMap<String, usize>,
    /// Rules skipped because their `requires` is not met (Suricata's `rules_skipped`; not
    /// counted in [`LoadSummary::skipped`]).
    pub requirements_skipped: usize,
}

/// The result of loading rule files.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// Rules kept, in load order (duplicates resolved).
    pub rules: Vec<LoadedRule>,
    /// Rules skipped, with reasons.
    pub errors: Vec<RuleLoadError>,
    /// Non-fatal notes (duplicate sids).
    pub warnings: Vec<String>,
    /// Informational notes (rules skipped for their `requires`).
    pub notes: Vec<String>,
    /// Counts.
    pub summary: LoadSummary,
}

/// Loads rule files. One bad rule never stops the others.
pub fn load_rules<P: AsRef<Path>>(files: &[P], vars: &Vars, opts: &LoadOptions) -> RuleSet {
    let mut st = LoadState::new(vars, opts);
    for f in files {
        let path = f.as_ref();
        let name: Arc<str> = Arc::from(path.display().to_string());
        st.set.summary.files += 1;
        match std::fs::read(path) {
            Ok(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => st.load_text(text, &name),
                Err(_) => st.load_text(&String::from_utf8_lossy(&bytes), &name),
            },
            Err(e) => st.fail(
                &name,
                0,
                None,
                ParseError::new(
                    ErrorKind::File,
                    match e.kind() {
                        std::io::ErrorKind::NotFound => "missing rule file: no such file".into(),
                        _ => format!("cannot read rule file: {e}"),
                    },
                ),
            ),
        }
    }
    st.finish()
}

/// Loads rules from a string (tests, `-S`-style inline rules).
pub fn load_rules_from_str(text: &str, file: &str, vars: &Vars, opts: &LoadOptions) -> RuleSet {
    let mut st = LoadState::new(vars, opts);
    st.set.summary.files = 1;
    st.load_text(text, &Arc::from(file));
    st.finish()
}

/// Iterates the logical rules of a file: `(start_line, text)`, with
/// trailing-backslash continuation lines joined and comments/blank lines
/// dropped.
pub fn logical_lines(text: &str) -> impl Iterator<Item = (u32, std::borrow::Cow<'_, str>)> {
    let mut lines = text.lines().enumerate().peekable();
    std::iter::from_fn(move || loop {
        let (i, first) = lines.next()?;
        let start = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let t = first.trim_end();
        let logical: std::borrow::Cow<'_, str> =
            if let Some(mut acc) = t.strip_suffix('\\').map(str::to_string) {
                for (_, next) in lines.by_ref() {
                    let n = next.trim_end();
                    match n.strip_suffix('\\') {
                        Some(part) => acc.push_str(part),
                        None => {
                            acc.push_str(n);
                            break;
                        }
                    }
                }
                acc.into()
            } else {
                t.into()
            };
        let trimmed = logical.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        return Some((start, logical));
    })
}

struct LoadState<'a> {
    parser: RuleParser<'a>,
    opts: &'a LoadOptions,
    set: RuleSet,
    by_id: HashMap<(u32, u32), usize>,
    removed: Vec<bool>,
}

impl<'a> LoadState<'a> {
    fn new(vars: &'a Vars, opts: &'a LoadOptions) -> Self {
        LoadState {
            parser: RuleParser::new(vars),
            opts,
            set: RuleSet::default(),
            by_id: HashMap::new(),
            removed: Vec::new(),
        }
    }

    fn fail(&mut self, file: &Arc<str>, line: u32, sid: Option<u32>, error: ParseError) {
        *self
            .set
            .summary
            .skipped_by_reason
            .entry(error.kind.to_string())
            .or_default() += 1;
        self.set.summary.skipped += 1;
        self.set.errors.push(RuleLoadError {
            file: Arc::clone(file),
            line,
            sid,
            error,
        });
    }

    fn load_text(&mut self, text: &str, file: &Arc<str>) {
        for (line, rule_text) in logical_lines(text) {
            self.set.summary.total += 1;
            // Suricata's first pass: `requires` decides before anything else is validated.
            if let Some(v) = super::parse::requires_value(&rule_text) {
                let running = crate::requires::SURICATA_VERSION;
                match crate::requires::check(v, running, &self.opts.requires) {
                    Ok(None) => {}
                    Ok(Some(unmet)) => {
                        self.set.summary.requirements_skipped += 1;
                        self.set.notes.push(format!(
                            "{file}:{line}: rule skipped, requirements not met: {unmet}"
                        ));
                        continue;
                    }
                    Err(why) => {
                        let sid = sniff_sid(&rule_text);
                        self.fail(
                            file,
                            line,
                            sid,
                            ParseError::new(
                                ErrorKind::Semantic("bad requires"),
                                format!("{why}: {v}"),
                            ),
                        );
                        continue;
                    }
                }
            }
            match self.parser.parse(&rule_text) {
                Ok(rule) => self.accept(rule, file, line),
                Err(e) => {
                    let sid = sniff_sid(&rule_text);
                    self.fail(file, line, sid, e);
                }
            }
        }
    }

    fn accept(&mut self, rule: Rule, file: &Arc<str>, line: u32) {
        if self.opts.reject_unknown_keywords {
            if let Some(Keyword::Unknown { name, .. }) = rule
                .keywords
                .iter()
                .find(|k| matches!(k, Keyword::Unknown { known: false, .. }))
            {
                let e = ParseError::new(
                    ErrorKind::UnknownKeyword(name.clone()),
                    "not a Suricata 7 keyword",
                );
                return self.fail(file, line, Some(rule.sid), e);
            }
        }
        // Suricata 7 loads a rule with an unknown classtype (default priority 3) and warns.
        if let (Some(list), Some(ct)) = (&self.opts.classtypes, &rule.classtype) {
            if !list.iter().any(|c| c == ct) {
                self.set.warnings.push(format!(
                    "{file}:{line} sid {}: unknown classtype `{ct}`, using priority 3",
                    rule.sid
                ));
            }
        }
        let key = (rule.gid, rule.sid);
        if let Some(&old) = self.by_id.get(&key) {
            let old_rev = self.set.rules.get(old).map_or(0, |r| r.rule.rev);
            let old_src = self
                .set
                .rules
                .get(old)
                .map(|r| format!("{}:{}", r.source.file, r.source.line));
            let dup = ParseError::new(
                ErrorKind::Semantic("duplicate sid"),
                format!("gid {} sid {}", key.0, key.1),
            );
            if rule.rev > old_rev {
                self.set.warnings.push(format!(
                    "{file}:{line}: duplicate sid {} (rev {} replaces rev {old_rev} from {})",
                    key.1,
                    rule.rev,
                    old_src.unwrap_or_default()
                ));
                if let Some(r) = self.removed.get_mut(old) {
                    *r = true;
                }
                let (of, ol) = self
                    .set
                    .rules
                    .get(old)
                    .map(|r| (Arc::clone(&r.source.file), r.source.line))
                    .unwrap_or_else(|| (Arc::clone(file), 0));
                // Suricata replaces the older revision with a warning, not an error.
                let replaced = ParseError::new(
                    ErrorKind::Semantic("replaced by a newer revision"),
                    dup.detail,
                );
                self.fail(&of, ol, Some(key.1), replaced);
            } else {
                self.set.warnings.push(format!(
                    "{file}:{line}: duplicate sid {} (rev {} ignored, rev {old_rev} kept from {})",
                    key.1,
                    rule.rev,
                    old_src.unwrap_or_default()
                ));
                return self.fail(file, line, Some(key.1), dup);
            }
        }
        for name in rule.keywords.iter().filter_map(|k| match k {
            // Checked before the rule was parsed.
            Keyword::Unknown { name, .. } if name == "requires" => None,
            Keyword::Unknown {
                name, known: true, ..
            } => Some(name),
            _ => None,
        }) {
            *self
                .set
                .summary
                .unenforced_keywords
                .entry(name.clone())
                .or_default() += 1;
        }
        self.by_id.insert(key, self.set.rules.len());
        self.set.rules.push(LoadedRule {
            rule,
            source: RuleSource {
                file: Arc::clone(file),
                line,
            },
        });
        self.removed.push(false);
    }

    fn finish(mut self) -> RuleSet {
        if self.removed.iter().any(|&r| r) {
            let removed = std::mem::take(&mut self.removed);
            let mut it = removed.into_iter();
            self.set.rules.retain(|_| !it.next().unwrap_or(false));
        }
        self.set.summary.loaded = self.set.rules.len();
        self.set
    }
}
