//! `pcre` evaluation over PCRE2 (JIT when available), bounded by Suricata's
//! `pcre.match-limit` and `pcre.match-limit-recursion` (PCRE2's match and depth limits,
//! set as the pattern's leading `(*LIMIT_MATCH=…)(*LIMIT_DEPTH=…)`; JIT code ignores the
//! depth limit, as in Suricata). A search that hits a limit is no match, counted in
//! [`Scratch::pcre_limit_hits`].

use std::sync::Arc;

use pcre2::bytes::{CaptureLocations, Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use super::{eval, MatchEnv, Outcome, Scratch, Step};
use crate::parse::{CaptureKind, ErrorKind, ParseError, Pcre};

/// A value a matching `pcre` captured into a packet or flow variable (Suricata's
/// `DetectVarStoreMatch`), kept in [`Scratch::captures`] until the rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Flow variable, packet variable, or key-value packet variable.
    pub kind: CaptureKind,
    /// The variable's name (empty for a key-value packet variable).
    pub name: Arc<str>,
    /// The key of a key-value packet variable (at most 255 bytes).
    pub key: Vec<u8>,
    /// The captured bytes (at most 65535).
    pub value: Vec<u8>,
}

/// PCRE2's `PCRE2_ERROR_MATCHLIMIT`.
const ERROR_MATCHLIMIT: i32 = -47;
/// PCRE2's `PCRE2_ERROR_DEPTHLIMIT`.
const ERROR_DEPTHLIMIT: i32 = -52;
/// PCRE2's `PCRE2_ERROR_HEAPLIMIT`.
const ERROR_HEAPLIMIT: i32 = -63;

/// Limits of one `pcre` search (Suricata's `pcre:` section; 0: PCRE2's own default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct PcreLimits {
    /// `pcre.match-limit`: PCRE2 match limit (backtracking steps), default 3500.
    pub match_limit: u32,
    /// `pcre.match-limit-recursion`: PCRE2 depth limit, default 1500.
    pub match_limit_recursion: u32,
}

impl Default for PcreLimits {
    fn default() -> Self {
        PcreLimits {
            match_limit: 3500,
            match_limit_recursion: 1500,
        }
    }
}

/// A `pcre` search stopped by the match, depth or heap limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcreLimitHit;

/// A compiled `pcre` match.
#[derive(Debug)]
pub struct PcreMatcher {
    re: Regex,
    negated: bool,
    relative: bool,
    /// Capture targets: the n-th takes capture group n + 1 (a key-value one also n + 2).
    caps: Box<[(CaptureKind, Arc<str>)]>,
}

/// Rewrites unescaped `$` outside character classes to `\z` (PCRE's
/// DOLLAR_ENDONLY, which has no inline form).
fn dollar_endonly(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 4);
    let mut class = false;
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '[' if !class => {
                class = true;
                out.push(c);
                // A leading `]` (or `^]`) is literal inside a class.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if class => {
                class = false;
                out.push(c);
            }
            '$' if !class => out.push_str("\\z"),
            _ => out.push(c),
        }
    }
    out
}

/// Builds the pattern text with Suricata's option letters that PCRE2 only
/// offers as compile options (`A`, `E`, `G`) expressed inline.
fn pattern_text(p: &Pcre, limits: PcreLimits) -> String {
    // Leading `(*VERB)` items must stay first.
    let mut rest = p.pattern.as_str();
    let mut verbs = String::new();
    while rest.starts_with("(*") {
        match rest.find(')') {
            Some(e) => {
                verbs.push_str(&rest[..=e]);
                rest = &rest[e + 1..];
            }
            None => break,
        }
    }
    let body = if p.opts.dollar_endonly && !p.opts.multiline {
        dollar_endonly(rest)
    } else {
        rest.to_string()
    };
    let mut s = String::new();
    if limits.match_limit > 0 {
        s.push_str(&format!("(*LIMIT_MATCH={})", limits.match_limit));
    }
    if limits.match_limit_recursion > 0 {
        s.push_str(&format!("(*LIMIT_DEPTH={})", limits.match_limit_recursion));
    }
    s.push_str(&verbs);
    if p.opts.ungreedy {
        s.push_str("(?U)");
    }
    if p.opts.anchored {
        // \G asserts the match starts at the start offset, like PCRE2_ANCHORED.
        s.push_str("\\G(?:");
        s.push_str(&body);
        s.push_str(if p.opts.extended { "\n)" } else { ")" });
    } else {
        s.push_str(&body);
    }
    s
}

impl PcreMatcher {
    /// Compiles with JIT if available, with Suricata's default limits.
    pub fn new(p: &Pcre) -> Result<PcreMatcher, ParseError> {
        Self::with_limits(p, PcreLimits::default())
    }

    /// Compiles with JIT if available and the given match/depth limits.
    pub fn with_limits(p: &Pcre, limits: PcreLimits) -> Result<PcreMatcher, ParseError> {
        let re = RegexBuilder::new()
            .caseless(p.opts.caseless)
            .dotall(p.opts.dotall)
            .multi_line(p.opts.multiline)
            .extended(p.opts.extended)
            .jit_if_available(true)
            .build(&pattern_text(p, limits))
            .map_err(|e| {
                ParseError::new(
                    ErrorKind::BadValue("pcre"),
                    format!("pcre compile failed: {e}"),
                )
            })?;
        // Suricata refuses more capture names than capturing groups.
        let groups = re.captures_len().saturating_sub(1);
        let needed = p
            .captures
            .iter()
            .map(|(k, _)| if *k == CaptureKind::PktKeyValue { 2 } else { 1 })
            .sum::<usize>();
        if needed > groups {
            return Err(ParseError::new(
                ErrorKind::BadValue("pcre"),
                "more pkt/flow var capture names than capturing substrings".to_string(),
            ));
        }
        Ok(PcreMatcher {
            re,
            negated: p.negated,
            relative: p.relative,
            caps: p
                .captures
                .iter()
                .filter(|(k, _)| *k != CaptureKind::Alert)
                .map(|(k, n)| (*k, Arc::from(n.as_str())))
                .collect(),
        })
    }

    /// Stores the capture groups of the match found at `start` in `subject` into the
    /// scratch's captures (a later match of the same variable replaces the value, as
    /// Suricata's `DetectVarStoreMatch`).
    fn capture(&self, subject: &[u8], start: usize, sc: &mut Scratch) {
        let mut locs: CaptureLocations = self.re.capture_locations();
        if !matches!(
            self.re.captures_read_at(&mut locs, subject, start),
            Ok(Some(_))
        ) {
            return;
        }
        let group = |i: usize| locs.get(i).and_then(|(a, b)| subject.get(a..b));
        // Suricata stores nothing unless a group beyond the whole match took part.
        if (1..locs.len()).all(|i| locs.get(i).is_none()) {
            return;
        }
        for (x, (kind, name)) in self.caps.iter().enumerate() {
            let Some(v) = group(x + 1) else {
                continue;
            };
            let v = &v[..v.len().min(0xffff)];
            if *kind == CaptureKind::PktKeyValue {
                let Some(val) = group(x + 2) else {
                    break;
                };
                sc.captures.push(Captured {
                    kind: *kind,
                    name: Arc::clone(name),
                    key: v[..v.len().min(0xff)].to_vec(),
                    value: val[..val.len().min(0xffff)].to_vec(),
                });
                continue;
            }
            if let Some(c) = sc
                .captures
                .iter_mut()
                .find(|c| c.kind == *kind && c.name == *name)
            {
                c.value.clear();
                c.value.extend_from_slice(v);
            } else {
                sc.captures.push(Captured {
                    kind: *kind,
                    name: Arc::clone(name),
                    key: Vec::new(),
                    value: v.to_vec(),
                });
            }
        }
    }

    /// Finds the first match in `subject` at or after `start` (a search stopped by a limit
    /// finds nothing).
    pub fn find_at(&self, subject: &[u8], start: usize) -> Option<(usize, usize)> {
        self.search(subject, start).ok().flatten()
    }

    /// [`Self::find_at`], telling a search stopped by the match, depth or heap limit
    /// (`Err`) from no match.
    pub fn search(
        &self,
        subject: &[u8],
        start: usize,
    ) -> Result<Option<(usize, usize)>, PcreLimitHit> {
        match self.re.find_at(subject, start) {
            Ok(m) => Ok(m.map(|m| (m.start(), m.end()))),
            Err(e)
                if matches!(
                    e.code(),
                    ERROR_MATCHLIMIT | ERROR_DEPTHLIMIT | ERROR_HEAPLIMIT
                ) =>
            {
                Err(PcreLimitHit)
            }
            Err(_) => Ok(None),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn eval(
        &self,
        relative_next: bool,
        steps: &[Step],
        i: usize,
        buf: &[u8],
        cursor: usize,
        sc: &mut Scratch,
        env: &MatchEnv,
    ) -> Outcome {
        let base = if self.relative {
            cursor.min(buf.len())
        } else {
            0
        };
        let subject = buf.get(base..).unwrap_or_default();
        let mut start = 0;
        loop {
            let found = match self.search(subject, start) {
                Ok(m) => m,
                Err(PcreLimitHit) => {
                    sc.pcre_limit_hits += 1;
                    None
                }
            };
            match found {
                None => {
                    return if self.negated {
                        eval(steps, i + 1, buf, cursor, sc, env)
                    } else {
                        Outcome::NoMatch
                    };
                }
                Some((s, e)) => {
                    if self.negated {
                        return Outcome::NoMatch;
                    }
                    if !self.caps.is_empty() {
                        self.capture(subject, s, sc);
                    }
                    if !relative_next {
                        return eval(steps, i + 1, buf, base + e, sc, env);
                    }
                    match eval(steps, i + 1, buf, base + e, sc, env) {
                        Outcome::NoMatch => {}
                        r => return r,
                    }
                    start = s + 1;
                    if start > subject.len() {
                        return Outcome::NoMatch;
                    }
                }
            }
        }
    }
}
