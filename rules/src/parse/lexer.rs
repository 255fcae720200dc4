//! Rule text lexing: header/options split, option tokenising with Suricata
//! escaping, and string unescaping.

use super::error::{PResult, ParseError};

/// Splits a rule into its header (before `(`) and its option body (between
/// the first `(` and the final `)`).
pub fn split_rule(text: &str) -> PResult<(&str, &str)> {
    let text = text.trim();
    let open = text
        .find('(')
        .ok_or_else(|| ParseError::syntax("no `(` starting the rule options"))?;
    let body = text[open + 1..]
        .trim_end()
        .strip_suffix(')')
        .ok_or_else(|| ParseError::syntax("rule options do not end with `)`"))?;
    Ok((text[..open].trim(), body))
}

/// One `key` or `key:value` option, value still escaped and quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawOption<'a> {
    /// Keyword name, trimmed.
    pub name: &'a str,
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

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest.trim_start();
        if s.is_empty() {
            return None;
        }
        let bytes = s.as_bytes();
        let mut i = 0;
        let mut end = None;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b';' => {
                    end = Some(i);
                    break;
                }
                _ => i += 1,
            }
        }
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
        // Suricata's quoting check (SigParseOptions): a value opened with `"` must close with
        // `"` (else the `;` that ended it was most likely inside the quotes) and hold
        // something. `msg:"foo; content:"zzz"; sid:1;` fails here as in Suricata.
        if let Some(v) = value.filter(|v| v.starts_with('"')) {
            if v.len() < 2 || !v.ends_with('"') {
                return Some(Err(ParseError::syntax(format!(
                    "bad quoting of `{name}` (possible missing semicolon or quote): {}",
                    truncate(v, 60)
                ))));
            }
            if v.len() == 2 {
                return Some(Err(ParseError::syntax(format!(
                    "empty quoted `{name}` value"
                ))));
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
/// (Suricata loads `msg:"(^IE[\d\s])"`).
pub fn unescape(kw: &'static str, s: &str) -> PResult<String> {
    if !s.contains('\\') {
        return Ok(s.to_string());
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
                None => return Err(ParseError::bad(kw, "trailing backslash")),
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}
