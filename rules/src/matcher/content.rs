//! `content` evaluation with Suricata's window computation and retries.

use memchr::memmem::Finder;

use super::{eval, MatchEnv, Outcome, Scratch, Step};
use crate::parse::{Content, IntOrVar};

/// ASCII case-insensitive single-pattern search: candidates from `memchr2`
/// on both cases of the first byte, then a case-folded compare.
#[derive(Debug)]
struct NoCase {
    lower: Box<[u8]>,
    first: (u8, u8),
}

impl NoCase {
    fn new(p: &[u8]) -> NoCase {
        let lower: Box<[u8]> = p.to_ascii_lowercase().into();
        let f = lower.first().copied().unwrap_or(0);
        NoCase {
            lower,
            first: (f, f.to_ascii_uppercase()),
        }
    }

    #[inline]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        let n = self.lower.len();
        let last = hay.len().checked_sub(n)?;
        let mut i = 0;
        while i <= last {
            let p = i + memchr::memchr2(self.first.0, self.first.1, hay.get(i..=last)?)?;
            if hay
                .get(p..p + n)
                .is_some_and(|w| w.eq_ignore_ascii_case(&self.lower))
            {
                return Some(p);
            }
            i = p + 1;
        }
        None
    }
}

#[derive(Debug)]
enum Searcher {
    Exact(Box<Finder<'static>>),
    NoCase(NoCase),
}

/// A compiled `content` match.
#[derive(Debug)]
pub struct ContentMatcher {
    len: usize,
    searcher: Searcher,
    negated: bool,
    relative: bool,
    endswith: bool,
    offset: Option<IntOrVar>,
    depth: Option<IntOrVar>,
    distance: Option<IntOrVar>,
    within: Option<IntOrVar>,
    /// No position constraint at all (Suricata's DETECT_CONTENT_IS_SINGLE).
    single: bool,
    /// Lower bound for a relative content's start from Suricata's limit
    /// propagation (see [`propagate_offsets`]).
    pub(crate) min_offset: i64,
}

/// Suricata's `DetectContentPropagateLimits`, offset part: a relative
/// content with `distance >= 0` gets an absolute minimum start computed from
/// the contents before it. The bound is implied by the match semantics
/// except after a negated content without position limits, whose length
/// still counts (a Suricata quirk, checked against 7.0.10).
pub(crate) fn propagate_offsets(contents: &mut [(Option<&mut ContentMatcher>, bool)]) {
    let (mut offset, mut offset_plus_pat) = (0i64, 0i64);
    for (item, relative_pcre) in contents.iter_mut() {
        let Some(c) = item else {
            if !*relative_pcre {
                offset = 0;
                offset_plus_pat = 0;
            }
            continue;
        };
        let has_distance = c.distance.is_some();
        let any_pos = has_distance || c.within.is_some() || c.offset.is_some() || c.depth.is_some();
        if !any_pos {
            offset = 0;
            offset_plus_pat = c.len as i64;
            continue;
        }
        if c.negated {
            offset = 0;
            offset_plus_pat = 0;
            continue;
        }
        if !has_distance {
            offset = 0;
            offset_plus_pat = 0;
        }
        let lit = |v: Option<IntOrVar>| match v {
            Some(IntOrVar::Lit(n)) => Some(n),
            _ => None,
        };
        match (has_distance, lit(c.distance)) {
            (true, Some(d)) if d >= 0 => {
                offset = offset_plus_pat + d;
                c.min_offset = offset;
                if c.offset.is_none() && c.depth.is_none() {
                    offset_plus_pat = offset + c.len as i64;
                }
            }
            (true, _) => {
                // Variable or negative distance: no bound.
            }
            _ => {}
        }
        if let Some(o) = lit(c.offset) {
            offset = o;
            offset_plus_pat = o + c.len as i64;
        }
        if c.depth.is_some() {
            offset_plus_pat = offset + c.len as i64;
        }
    }
}

impl ContentMatcher {
    /// Compiles a content.
    pub fn new(c: &Content) -> ContentMatcher {
        let searcher = if c.nocase {
            Searcher::NoCase(NoCase::new(&c.pattern))
        } else {
            Searcher::Exact(Box::new(Finder::new(&c.pattern).into_owned()))
        };
        let (offset, depth) = if c.startswith {
            (
                Some(IntOrVar::Lit(0)),
                Some(IntOrVar::Lit(c.pattern.len() as i64)),
            )
        } else {
            (c.offset, c.depth)
        };
        ContentMatcher {
            len: c.pattern.len(),
            searcher,
            negated: c.negated,
            relative: c.is_relative(),
            endswith: c.endswith,
            offset,
            depth,
            distance: c.distance,
            within: c.within,
            single: !c.is_relative() && offset.is_none() && depth.is_none(),
            min_offset: 0,
        }
    }

    /// First occurrence in `hay`.
    #[inline]
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        if hay.len() < self.len {
            return None;
        }
        match &self.searcher {
            Searcher::Exact(f) => f.find(hay),
            Searcher::NoCase(nc) => nc.find(hay),
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
        let len = buf.len() as i64;
        let val = |v: IntOrVar, sc: &Scratch| -> i64 {
            match v {
                IntOrVar::Lit(n) => n,
                // Suricata casts extracted values to 32 bits here.
                IntOrVar::Var(s) => {
                    i64::from(sc.vars.get(usize::from(s)).copied().unwrap_or(0) as u32 as i32)
                }
            }
        };
        let mut retry_from: i64 = 0;
        loop {
            let (mut offset, mut depth);
            if self.relative {
                let prev = cursor as i64;
                offset = prev;
                depth = len;
                let distance = self.distance.map_or(0, |d| val(d, sc));
                if self.distance.is_some() {
                    offset = if distance < 0 && -distance > offset {
                        0
                    } else {
                        offset + distance
                    };
                }
                if self.min_offset > offset {
                    offset = self.min_offset;
                }
                if let Some(w) = self.within {
                    // Suricata keeps depth in a u32: a negative limit wraps
                    // to a huge value, i.e. no limit.
                    let lim = prev + val(w, sc) + distance;
                    if lim >= 0 && depth > lim {
                        depth = lim;
                    }
                }
            } else {
                offset = self.offset.map_or(0, |o| val(o, sc));
                depth = match self.depth {
                    Some(d) => val(d, sc) + offset,
                    None => len,
                };
            }
            if retry_from != 0 {
                offset = retry_from;
            }
            if depth > len {
                depth = len;
            }
            if offset > depth || depth <= 0 || offset < 0 {
                return if self.negated {
                    eval(steps, i + 1, buf, cursor, sc, env)
                } else {
                    Outcome::NoMatch
                };
            }
            let (o, d) = (offset as usize, depth as usize);
            let found = if self.endswith && depth < len {
                None
            } else {
                buf.get(o..d).and_then(|w| self.find(w)).map(|p| p + o)
            };
            let Some(start) = found else {
                if self.negated {
                    return eval(steps, i + 1, buf, cursor, sc, env);
                }
                return if self.relative {
                    Outcome::NoMatch
                } else {
                    Outcome::Abort
                };
            };
            let end = start + self.len;
            if self.negated {
                // Suricata compares the window length with the match end: a
                // negated endswith content only fails when its first
                // occurrence in the window ends the window (checked against
                // suricata 7.0.10).
                if self.endswith && (d - o) != end {
                    return eval(steps, i + 1, buf, cursor, sc, env);
                }
                return if self.single && !relative_next {
                    Outcome::Abort
                } else {
                    Outcome::NoMatch
                };
            }
            if !self.endswith || end == buf.len() {
                if i + 1 >= steps.len() {
                    return Outcome::Match;
                }
                match eval(steps, i + 1, buf, end, sc, env) {
                    Outcome::Match => return Outcome::Match,
                    Outcome::Abort => return Outcome::Abort,
                    Outcome::NoMatch if !relative_next => return Outcome::Abort,
                    Outcome::NoMatch => {}
                }
            }
            retry_from = start as i64 + 1;
        }
    }
}
