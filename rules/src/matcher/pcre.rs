//! `pcre` evaluation over PCRE2 (JIT when available).

use pcre2::bytes::{Regex, RegexBuilder};

use super::{eval, MatchEnv, Outcome, Scratch, Step};
use crate::parse::{ErrorKind, ParseError, Pcre};

/// A compiled `pcre` match.
#[derive(Debug)]
pub struct PcreMatcher {
    re: Regex,
    negated: bool,
    relative: bool,
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
fn pattern_text(p: &Pcre) -> String {
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
    let mut s = verbs;
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
    /// Compiles with JIT if available.
    pub fn new(p: &Pcre) -> Result<PcreMatcher, ParseError> {
        let re = RegexBuilder::new()
            .caseless(p.opts.caseless)
            .dotall(p.opts.dotall)
            .multi_line(p.opts.multiline)
            .extended(p.opts.extended)
            .jit_if_available(true)
            .build(&pattern_text(p))
            .map_err(|e| {
                ParseError::new(
                    ErrorKind::BadValue("pcre"),
                    format!("pcre compile failed: {e}"),
                )
            })?;
        Ok(PcreMatcher {
            re,
            negated: p.negated,
            relative: p.relative,
        })
    }

    /// Finds the first match in `subject` at or after `start`.
    pub fn find_at(&self, subject: &[u8], start: usize) -> Option<(usize, usize)> {
        self.re
            .find_at(subject, start)
            .ok()
            .flatten()
            .map(|m| (m.start(), m.end()))
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
            match self.find_at(subject, start) {
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
