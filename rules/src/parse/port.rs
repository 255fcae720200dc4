//! Port specifications (`any`, `80`, `!80`, `[80,443]`, `1024:`, `:1023`,
//! `1:5`, `$HTTP_PORTS`, nested lists) compiled into a [`PortSet`].

use super::error::{ErrorKind, PResult, ParseError};
use super::ranges::RangeSet;
use super::vars::{split_top_level, strip_negations, strip_outer_brackets, Nesting, Vars};

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
        let set = parse_group(spec.trim(), vars, &mut Nesting::new(ErrorKind::Port))?;
        if set.is_empty() {
            return Err(port_err(spec, "matches no port"));
        }
        Ok(PortSet { set })
    }
}

fn port_err(spec: &str, why: &str) -> ParseError {
    ParseError::new(ErrorKind::Port, format!("{why}: `{spec}`"))
}

/// Every `[`, `!` and `$VAR` level counts against [`super::vars::MAX_NESTING`].
fn parse_group<'v>(s: &str, vars: &'v Vars, nest: &mut Nesting<'v>) -> PResult<RangeSet<u16>> {
    nest.enter(s)?;
    let r = parse_group_inner(s, vars, nest);
    nest.leave();
    r
}

fn parse_group_inner<'v>(
    s: &str,
    vars: &'v Vars,
    nest: &mut Nesting<'v>,
) -> PResult<RangeSet<u16>> {
    if s.is_empty() {
        return Err(port_err(s, "empty port"));
    }
    if s.starts_with('!') {
        return parse_list(&[s], vars, nest);
    }
    if s.starts_with('[') {
        let inner = strip_outer_brackets(s).ok_or_else(|| port_err(s, "unbalanced brackets"))?;
        let parts = split_top_level(inner).ok_or_else(|| port_err(s, "unbalanced brackets"))?;
        return parse_list(&parts, vars, nest);
    }
    if let Some(name) = s.strip_prefix('$') {
        let (key, val) = vars.port_entry(name).ok_or_else(|| {
            ParseError::new(
                ErrorKind::UndefinedVariable,
                format!("port variable `${name}` is not defined"),
            )
        })?;
        nest.push_var(key)?;
        let r = parse_group(val.trim(), vars, nest);
        nest.pop_var();
        return r;
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

fn parse_list<'v>(
    parts: &[&str],
    vars: &'v Vars,
    nest: &mut Nesting<'v>,
) -> PResult<RangeSet<u16>> {
    let mut pos = RangeSet::empty();
    let mut neg = RangeSet::empty();
    for p in parts {
        let p = p.trim();
        let (negated, p) = strip_negations(p);
        if negated {
            neg = neg.union(&parse_group(p, vars, nest)?);
        } else {
            pos = pos.union(&parse_group(p, vars, nest)?);
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
