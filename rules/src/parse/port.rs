//! Port specifications (`any`, `80`, `!80`, `[80,443]`, `1024:`, `:1023`,
//! `1:5`, `$HTTP_PORTS`, nested lists) compiled into a [`PortSet`].

use super::error::{ErrorKind, PResult, ParseError};
use super::ranges::RangeSet;
use super::vars::{split_top_level, strip_outer_brackets, Vars};

const MAX_VAR_DEPTH: usize = 16;

/// A compiled port matcher: sorted, merged `u16` ranges.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PortSet {
    /// The ports that match.
    pub set: RangeSet<u16>,
}

impl PortSet {
    /// Every port.
    pub fn any() -> Self {
        PortSet {
            set: RangeSet::full(),
        }
    }

    /// True when every port matches.
    pub fn is_any(&self) -> bool {
        self.set.is_full()
    }

    /// Membership test.
    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        self.set.contains(port)
    }

    /// Parses and compiles a port specification, resolving `$VARS`.
    pub fn parse(spec: &str, vars: &Vars) -> PResult<PortSet> {
        let set = parse_group(spec.trim(), vars, 0)?;
        if set.is_empty() {
            return Err(port_err(spec, "matches no port"));
        }
        Ok(PortSet { set })
    }
}

fn port_err(spec: &str, why: &str) -> ParseError {
    ParseError::new(ErrorKind::Port, format!("{why}: `{spec}`"))
}

fn parse_group(s: &str, vars: &Vars, depth: usize) -> PResult<RangeSet<u16>> {
    if depth > MAX_VAR_DEPTH {
        return Err(port_err(s, "variable nesting too deep (loop?)"));
    }
    if s.is_empty() {
        return Err(port_err(s, "empty port"));
    }
    if s.starts_with('!') {
        return parse_list(&[s], vars, depth);
    }
    if s.starts_with('[') {
        let inner = strip_outer_brackets(s).ok_or_else(|| port_err(s, "unbalanced brackets"))?;
        let parts = split_top_level(inner).ok_or_else(|| port_err(s, "unbalanced brackets"))?;
        return parse_list(&parts, vars, depth);
    }
    if let Some(name) = s.strip_prefix('$') {
        let val = vars.port(name).ok_or_else(|| {
            ParseError::new(
                ErrorKind::UndefinedVariable,
                format!("port variable `${name}` is not defined"),
            )
        })?;
        return parse_group(val.trim(), vars, depth + 1);
    }
    if s.eq_ignore_ascii_case("any") {
        return Ok(RangeSet::full());
    }
    let num = |t: &str| -> PResult<u16> {
        let t = t.trim();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(port_err(s, "not a port number"));
        }
        t.parse::<u16>()
            .map_err(|_| port_err(s, "port above 65535"))
    };
    let (lo, hi) = match s.split_once(':') {
        Some((a, b)) => {
            let lo = if a.trim().is_empty() { 0 } else { num(a)? };
            let hi = if b.trim().is_empty() {
                u16::MAX
            } else {
                num(b)?
            };
            if lo > hi {
                return Err(port_err(s, "range start above its end"));
            }
            (lo, hi)
        }
        None => {
            let p = num(s)?;
            (p, p)
        }
    };
    Ok(RangeSet::from_ranges(vec![(lo, hi)]))
}

fn parse_list(parts: &[&str], vars: &Vars, depth: usize) -> PResult<RangeSet<u16>> {
    let mut pos = RangeSet::empty();
    let mut neg = RangeSet::empty();
    for p in parts {
        let p = p.trim();
        if let Some(rest) = p.strip_prefix('!') {
            neg = neg.union(&parse_group(rest.trim(), vars, depth)?);
        } else {
            pos = pos.union(&parse_group(p, vars, depth)?);
        }
    }
    if neg.is_full() {
        return Err(port_err(&parts.join(","), "complete port space negated"));
    }
    if pos.is_empty() {
        pos = RangeSet::full();
    }
    Ok(pos.subtract(&neg))
}
