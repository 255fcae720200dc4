//! Rule text lexing: header/options split, option tokenising with Suricata
//! escaping, and string unescaping.

use std::borrow::Cow;

use super::error::{PResult, ParseError};

/// Splits a rule as Suricata's `SigParseBasics` does: the seven header fields (action,
/// protocol, source, source ports, direction, destination, destination ports; a field is
/// cut at whitespace outside `[...]`), then the option body: the rest, without leading
/// whitespace and `(`, and without trailing whitespace and `)` (Suricata loads a rule that
/// lacks either parenthesis, and one with `))`).
pub fn split_rule(text: &str) -> PResult<([&str; 7], &str)> {
    let mut fields = [""; 7];
    let mut rest = text.trim_start();
    for (n, field) in fields.iter_mut().enumerate() {
        rest = rest.trim_start();
        let mut depth = 0i32;
        let mut end = None;
        for (i, c) in rest.char_indices() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                c if c.is_whitespace() && depth <= 0 => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Err(ParseError::syntax(if n < 6 || rest.is_empty() {
                format!(
                    "header needs 7 fields (action proto src sport dir dst dport), found {}",
                    n + usize::from(!rest.is_empty())
                )
            } else {
                "no rule options".to_string()
            }));
        };
        *field = &rest[..end];
        rest = &rest[end..];
    }
    let body = rest
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .trim_end_matches(|c: char| c.is_whitespace() || c == ')');
    Ok((fields, body))
}

/// One `key` or `key:value` option, value still escaped and quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawOption<'a> {
    /// Keyword name, trimmed, lower case (Suricata matches keyword names case-insensitively).
    pub name: Cow<'a, str>,
    /// Raw value (trimmed), if a `:` was present.
    pub value: Option<&'a str>,
}

/// Iterates the options of a rule body, splitting at unescaped `;`.
pub struct OptionIter<'a> {
    rest: &'a str,
}

impl<'a> OptionIter<'a> {
    /// Starts iterating `body` (the text between the parentheses).
    pub fn new(body: &'a str) -> Self {
        OptionIter { rest: body }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = PResult<RawOption<'a>>;

    /// One option as Suricata's `SigParseOptions` cuts it: up to the first `;` that does not
    /// follow a backslash, the name before the first `:` (matched case-insensitively), the
    /// value after it; then the keyword's value rule ([`super::quoting::check_value`]).
    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest.trim_start();
        if s.is_empty() {
            return None;
        }
        let bytes = s.as_bytes();
        let end = bytes
            .iter()
            .enumerate()
            .position(|(i, &b)| b == b';' && (i == 0 || bytes.get(i - 1) != Some(&b'\\')));
        let Some(end) = end else {
            self.rest = "";
            return Some(Err(ParseError::syntax(format!(
                "option `{}` has no terminating `;`",
                truncate(s, 60)
            ))));
        };
        let opt = &s[..end];
        self.rest = &s[end + 1..];
        let (name, value) = match opt.find(':') {
            Some(p) => (opt[..p].trim(), Some(opt[p + 1..].trim())),
            None => (opt.trim(), None),
        };
        if name.is_empty() {
            return Some(Err(ParseError::syntax("empty option name")));
        }
        let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        if let Err(e) = super::quoting::check_value(&name, value) {
            return Some(Err(e));
        }
        // A keyword Suricata's tables do not cover: its quoting as Suricata's quoted
        // keywords (`msg:"foo; content:"zzz"; sid:1;` fails here as in Suricata).
        if super::quoting::value_rule(&name).is_none() {
            if let Some(v) = value.filter(|v| v.starts_with('"')) {
                if v.len() < 2 || !v.ends_with('"') {
                    return Some(Err(ParseError::syntax(format!(
                        "bad quoting of `{name}` (possible missing semicolon or quote): {}",
                        truncate(v, 60)
                    ))));
                }
            }
        }
        Some(Ok(RawOption { name, value }))
    }
}

/// Shortens `s` for error messages.
pub fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Strips one pair of surrounding double quotes, if present, after trimming.
pub fn unquote(s: &str) -> &str {
    let s = s.trim();
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Like [`unquote`] but requires the quotes.
pub fn require_quotes<'a>(kw: &'static str, s: &'a str) -> PResult<&'a str> {
    let t = s.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') && !ends_with_escaped_quote(t) {
        Ok(&t[1..t.len() - 1])
    } else {
        Err(ParseError::bad(
            kw,
            format!("value must be quoted: {}", truncate(s, 60)),
        ))
    }
}

/// True when the final `"` of `s` is escaped (odd number of backslashes
/// before it).
fn ends_with_escaped_quote(s: &str) -> bool {
    let b = s.as_bytes();
    let body = &b[..b.len().saturating_sub(1)];
    let n = body.iter().rev().take_while(|&&c| c == b'\\').count();
    n % 2 == 1 && b.len() > 1
}

/// Unescapes a string value (`msg`…): `\;`, `\"`, `\\`, `\:`, `\,`
/// become the character; any other backslash is kept with its character
/// (Suricata loads `msg:"(^IE[\d\s])"`), and so is a final backslash.
pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some(e @ (';' | '"' | '\\' | ':' | ',')) => out.push(e),
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                // Suricata keeps a final backslash (`msg:"foo\\"` loads).
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}
