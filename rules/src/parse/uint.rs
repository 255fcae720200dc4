//! Integer comparisons used by `dsize`, `ttl`, `bsize`, `urilen`, `itype` and
//! friends, with Suricata 7's syntax: `N`, `=N`, `!N`, `!=N`, `<N`, `<=N`,
//! `>N`, `>=N`, `N-M`, `N<>M` (exclusive range), `!N-M`, `&MASK=V`, `&MASK!=V`.

use super::error::{PResult, ParseError};

/// The comparison performed by a [`UintMatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UintMode {
    /// `v == a`
    Eq,
    /// `v != a`
    Ne,
    /// `v < a`
    Lt,
    /// `v <= a`
    Lte,
    /// `v > a`
    Gt,
    /// `v >= a`
    Gte,
    /// `a < v < b`
    Range,
    /// `!(a < v < b)`
    NegRange,
    /// `v & a == b`
    Bitmask,
    /// `v & a != b`
    NegBitmask,
}

/// A parsed integer comparison (values widened to `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UintMatch {
    /// Comparison kind.
    pub mode: UintMode,
    /// First operand.
    pub a: u64,
    /// Second operand (ranges and bitmasks).
    pub b: u64,
}

impl UintMatch {
    /// Equality shorthand.
    pub const fn eq(a: u64) -> Self {
        UintMatch {
            mode: UintMode::Eq,
            a,
            b: 0,
        }
    }

    /// Evaluates the comparison against `v`.
    #[inline]
    pub fn matches(&self, v: u64) -> bool {
        match self.mode {
            UintMode::Eq => v == self.a,
            UintMode::Ne => v != self.a,
            UintMode::Lt => v < self.a,
            UintMode::Lte => v <= self.a,
            UintMode::Gt => v > self.a,
            UintMode::Gte => v >= self.a,
            UintMode::Range => v > self.a && v < self.b,
            UintMode::NegRange => !(v > self.a && v < self.b),
            UintMode::Bitmask => v & self.a == self.b,
            UintMode::NegBitmask => v & self.a != self.b,
        }
    }

    /// Parses `s` for an integer type whose maximum is `max`. `kw` names the
    /// keyword in errors.
    pub fn parse(s: &str, max: u64, kw: &'static str) -> PResult<Self> {
        let s = s.trim();
        let bad = |d: &str| ParseError::bad(kw, format!("{d}: `{s}`"));
        let num = |t: &str| -> PResult<u64> {
            let v = parse_u64(t.trim()).ok_or_else(|| bad("not a number"))?;
            if v > max {
                return Err(bad("value out of range"));
            }
            Ok(v)
        };
        if s.is_empty() {
            return Err(bad("empty"));
        }
        if let Some(rest) = s.strip_prefix('&') {
            let (mask, rest, mode) = if let Some(p) = rest.find("!=") {
                (&rest[..p], &rest[p + 2..], UintMode::NegBitmask)
            } else if let Some(p) = rest.find('=') {
                (&rest[..p], &rest[p + 1..], UintMode::Bitmask)
            } else {
                return Err(bad("bitmask needs `=` or `!=`"));
            };
            return Ok(UintMatch {
                mode,
                a: num(mask)?,
                b: num(rest)?,
            });
        }
        let one = |mode: UintMode, t: &str| -> PResult<Self> {
            Ok(UintMatch {
                mode,
                a: num(t)?,
                b: 0,
            })
        };
        let m = if let Some(t) = s.strip_prefix("<=") {
            one(UintMode::Lte, t)?
        } else if let Some(t) = s.strip_prefix(">=") {
            one(UintMode::Gte, t)?
        } else if let Some(t) = s.strip_prefix("!=") {
            one(UintMode::Ne, t)?
        } else if let Some(t) = s.strip_prefix('<') {
            let m = one(UintMode::Lt, t)?;
            if m.a == 0 {
                return Err(bad("`<0` can never match"));
            }
            m
        } else if let Some(t) = s.strip_prefix('>') {
            let m = one(UintMode::Gt, t)?;
            if m.a >= max {
                return Err(bad("`>` maximum can never match"));
            }
            m
        } else if let Some(t) = s.strip_prefix('=') {
            one(UintMode::Eq, t)?
        } else {
            let (neg, t) = match s.strip_prefix('!') {
                Some(t) => (true, t.trim_start()),
                None => (false, s),
            };
            let split = t
                .find("<>")
                .map(|p| (p, 2))
                .or_else(|| t.get(1..).and_then(|r| r.find('-')).map(|p| (p + 1, 1)));
            match split {
                Some((p, w)) => {
                    let a = num(&t[..p])?;
                    let b = num(&t[p + w..])?;
                    if a >= b {
                        return Err(bad("range start must be below its end"));
                    }
                    UintMatch {
                        mode: if neg {
                            UintMode::NegRange
                        } else {
                            UintMode::Range
                        },
                        a,
                        b,
                    }
                }
                None => one(if neg { UintMode::Ne } else { UintMode::Eq }, t)?,
            }
        };
        Ok(m)
    }
}

/// Parses a decimal or `0x` hexadecimal unsigned integer.
pub fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a decimal or hex signed integer (`-5`, `0x10`).
pub fn parse_i64(s: &str) -> Option<i64> {
    let s = s.trim();
    match s.strip_prefix('-') {
        Some(r) => parse_u64(r).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        None => parse_u64(s.strip_prefix('+').unwrap_or(s)).and_then(|v| i64::try_from(v).ok()),
    }
}
