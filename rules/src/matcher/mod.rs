//! The payload matcher: evaluates a buffer section's ordered match list
//! against a byte buffer with Suricata's content-inspection semantics
//! (relative matches, retrying an earlier content or pcre at its next
//! occurrence when a later relative match fails, "discontinue" on failures no
//! retry can fix, and the inspection step limit).
//!
//! Compile once ([`compile_rule`]), then call [`CompiledSection::matches`]
//! per buffer with a per-thread [`Scratch`]; matching allocates nothing.

mod bytes;
mod content;
mod pcre;

use super::parse::{
    Base64Decode, BufferId, BufferSection, ErrorKind, IsDataAt, Match, ParseError, Rule, Transform,
    UintMatch,
};
use super::parse::{ByteExtract, ByteJump, ByteMath, ByteTest};

pub use bytes::extract_string;
pub use content::ContentMatcher;
pub use pcre::{Captured, PcreLimitHit, PcreLimits, PcreMatcher};

/// Suricata's default `detect.inspection-recursion-limit`.
pub const DEFAULT_STEP_LIMIT: u32 = 3000;

/// Maximum `byte_extract`/`byte_math` variables per rule (the parser's limit).
pub const MAX_VARS: usize = 64;

/// Per-thread scratch space, allocated once and reused for every call.
#[derive(Debug, Clone)]
pub struct Scratch {
    /// Values of the rule's byte variables (by slot).
    pub vars: [u64; MAX_VARS],
    steps: u32,
    limit: u32,
    b64: Vec<u8>,
    /// `pcre` searches stopped by `pcre.match-limit` / `match-limit-recursion` (counted
    /// as no match), since the scratch was made.
    pub pcre_limit_hits: u64,
    /// Values the `pcre` keywords of the rule being matched captured into packet and flow
    /// variables; the caller applies them when the rule matches and clears them before
    /// the next rule.
    pub captures: Vec<pcre::Captured>,
    /// The packet variables of the rules that matched the current packet (the caller
    /// clears them per packet).
    pub pkt_vars: Vec<pcre::Captured>,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// Scratch with the default step limit and a 64 KiB base64 buffer.
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_STEP_LIMIT)
    }

    /// Scratch with a custom inspection step limit.
    pub fn with_limit(limit: u32) -> Self {
        Scratch {
            vars: [0; MAX_VARS],
            steps: 0,
            limit,
            b64: Vec::with_capacity(64 * 1024),
            pcre_limit_hits: 0,
            captures: Vec::new(),
            pkt_vars: Vec::new(),
        }
    }

    /// Steps used by the last [`CompiledSection::matches`] call.
    pub fn steps_used(&self) -> u32 {
        self.steps
    }
}

/// Per-call facts the matcher cannot know from the bytes alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MatchEnv {
    /// The DCE/RPC data representation is little-endian (`dce` byte ops).
    pub dce_little_endian: bool,
}

/// A compiled element of a match list.
#[derive(Debug)]
pub(crate) enum Item {
    Content(ContentMatcher),
    Pcre(PcreMatcher),
    ByteTest(ByteTest),
    ByteJump(ByteJump),
    ByteExtract(ByteExtract),
    ByteMath(ByteMath),
    IsDataAt(IsDataAt),
    Bsize(UintMatch),
    Base64Decode(Base64Decode, Option<Box<CompiledSection>>),
}

#[derive(Debug)]
pub(crate) struct Step {
    item: Item,
    /// Anchored to the previous match (distance/within, `R`, `relative`).
    relative: bool,
    /// A later relative keyword depends on this content/pcre: retry it at
    /// its next occurrence when the rest fails (Suricata's RELATIVE_NEXT).
    relative_next: bool,
}

/// A compiled buffer section: immutable, `Send + Sync`.
#[derive(Debug)]
pub struct CompiledSection {
    /// Buffer inspected.
    pub buffer: BufferId,
    /// Transforms the engine applies before calling [`Self::matches`].
    pub transforms: Vec<Transform>,
    steps: Box<[Step]>,
}

/// Result of evaluating the rest of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Everything matched.
    Match,
    /// No match; an earlier relative-next element may retry.
    NoMatch,
    /// No match and no retry can help (Suricata's discontinue).
    Abort,
}

impl CompiledSection {
    /// Compiles one section (pcre compile errors are reported).
    pub fn compile(sec: &BufferSection) -> Result<CompiledSection, ParseError> {
        Self::compile_with(sec, PcreLimits::default())
    }

    /// [`Self::compile`] with the given `pcre` limits.
    pub fn compile_with(
        sec: &BufferSection,
        pcre: PcreLimits,
    ) -> Result<CompiledSection, ParseError> {
        let mut steps = Vec::with_capacity(sec.matches.len());
        for m in &sec.matches {
            let (item, relative) = match m {
                Match::Content(c) => (Item::Content(ContentMatcher::new(c)), c.is_relative()),
                Match::Pcre(p) => (Item::Pcre(PcreMatcher::with_limits(p, pcre)?), p.relative),
                Match::ByteTest(b) => (Item::ByteTest(*b), b.relative),
                Match::ByteJump(b) => (Item::ByteJump(*b), b.relative),
                Match::ByteExtract(b) => (Item::ByteExtract(*b), b.relative),
                Match::ByteMath(b) => (Item::ByteMath(*b), b.relative),
                Match::IsDataAt(d) => (Item::IsDataAt(*d), d.relative),
                Match::Bsize(u) => (Item::Bsize(*u), false),
                Match::Base64Decode(d) => (Item::Base64Decode(*d, None), d.relative),
            };
            steps.push(Step {
                item,
                relative,
                relative_next: false,
            });
        }
        for j in 0..steps.len() {
            if !steps[j].relative {
                continue;
            }
            if let Some(prev) = steps[..j]
                .iter()
                .rposition(|s| matches!(s.item, Item::Content(_) | Item::Pcre(_)))
            {
                steps[prev].relative_next = true;
            }
        }
        let mut view: Vec<(Option<&mut ContentMatcher>, bool)> = steps
            .iter_mut()
            .map(|st| match &mut st.item {
                Item::Content(c) => (Some(c), false),
                Item::Pcre(_) => (None, st.relative),
                _ => (None, false),
            })
            .collect();
        content::propagate_offsets(&mut view);
        Ok(CompiledSection {
            buffer: sec.buffer,
            transforms: sec.transforms.clone(),
            steps: steps.into_boxed_slice(),
        })
    }

    /// Number of match elements.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// True when the section has no elements.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Evaluates the section against `buf` (already transformed). Byte
    /// variables extracted by earlier sections of the same rule stay in
    /// `scratch.vars`.
    pub fn matches(&self, buf: &[u8], scratch: &mut Scratch, env: &MatchEnv) -> bool {
        scratch.steps = 0;
        eval(&self.steps, 0, buf, 0, scratch, env) == Outcome::Match
    }
}

/// Compiles all sections of a rule. A `base64_data` section is attached to
/// the rule's `base64_decode`, which runs it on the decoded bytes.
pub fn compile_rule(rule: &Rule) -> Result<Vec<CompiledSection>, ParseError> {
    compile_rule_with(rule, PcreLimits::default())
}

/// [`compile_rule`] with the given `pcre` limits.
pub fn compile_rule_with(
    rule: &Rule,
    pcre: PcreLimits,
) -> Result<Vec<CompiledSection>, ParseError> {
    let b64 = BufferId::by_name("base64_data");
    let mut out = Vec::with_capacity(rule.sections.len());
    let mut data = None;
    for s in &rule.sections {
        if Some(s.buffer) == b64 {
            data = Some(CompiledSection::compile_with(s, pcre)?);
        } else {
            out.push(CompiledSection::compile_with(s, pcre)?);
        }
    }
    if let Some(d) = data {
        let slot = out.iter_mut().rev().find_map(|sec| {
            sec.steps
                .iter_mut()
                .rev()
                .find_map(|st| match &mut st.item {
                    Item::Base64Decode(_, slot) => Some(slot),
                    _ => None,
                })
        });
        match slot {
            Some(slot) => *slot = Some(Box::new(d)),
            None => {
                return Err(ParseError::new(
                    ErrorKind::Semantic("base64_data without base64_decode"),
                    "base64_data needs a preceding base64_decode",
                ))
            }
        }
    }
    Ok(out)
}

/// Evaluates `steps[i..]` with the relative cursor at `cursor`.
pub(crate) fn eval(
    steps: &[Step],
    i: usize,
    buf: &[u8],
    cursor: usize,
    sc: &mut Scratch,
    env: &MatchEnv,
) -> Outcome {
    let Some(step) = steps.get(i) else {
        return Outcome::Match;
    };
    sc.steps += 1;
    if sc.steps >= sc.limit {
        return Outcome::Abort;
    }
    match &step.item {
        Item::Content(c) => c.eval(step.relative_next, steps, i, buf, cursor, sc, env),
        Item::Pcre(p) => p.eval(step.relative_next, steps, i, buf, cursor, sc, env),
        Item::ByteTest(t) => match bytes::byte_test(t, buf, cursor, sc, env) {
            true => eval(steps, i + 1, buf, cursor, sc, env),
            false => Outcome::NoMatch,
        },
        Item::ByteJump(j) => match bytes::byte_jump(j, buf, cursor, sc, env) {
            Some(c) => eval(steps, i + 1, buf, c, sc, env),
            None => Outcome::NoMatch,
        },
        Item::ByteExtract(x) => match bytes::byte_extract(x, buf, cursor, sc, env) {
            Some(c) => eval(steps, i + 1, buf, c, sc, env),
            None => Outcome::NoMatch,
        },
        Item::ByteMath(m) => match bytes::byte_math(m, buf, cursor, sc, env) {
            Some(c) => eval(steps, i + 1, buf, c, sc, env),
            None => Outcome::NoMatch,
        },
        Item::IsDataAt(d) => isdataat(d, steps, i, buf, cursor, sc, env),
        Item::Bsize(b) => match b.matches(buf.len() as u64) {
            true => eval(steps, i + 1, buf, cursor, sc, env),
            false => Outcome::NoMatch,
        },
        Item::Base64Decode(d, data) => base64(d, data.as_deref(), buf, cursor, sc, env),
    }
}

fn isdataat(
    d: &IsDataAt,
    steps: &[Step],
    i: usize,
    buf: &[u8],
    cursor: usize,
    sc: &mut Scratch,
    env: &MatchEnv,
) -> Outcome {
    let (pos, is_var) = match d.pos {
        super::parse::IntOrVar::Lit(n) => (u64::try_from(n).unwrap_or(0), false),
        super::parse::IntOrVar::Var(v) => (sc.vars.get(usize::from(v)).copied().unwrap_or(0), true),
    };
    let next = |sc: &mut Scratch| eval(steps, i + 1, buf, cursor, sc, env);
    let fail = if is_var {
        Outcome::NoMatch
    } else {
        Outcome::Abort
    };
    if is_var && pos >= 100_000_000 {
        return if d.negated {
            next(sc)
        } else {
            Outcome::NoMatch
        };
    }
    let len = buf.len() as u64;
    let present = if d.relative {
        (cursor as u64).saturating_add(pos) <= len
    } else {
        pos < len
    };
    match (present, d.negated) {
        (true, false) | (false, true) => next(sc),
        (true, true) if d.relative => Outcome::NoMatch,
        _ => fail,
    }
}

fn base64(
    d: &Base64Decode,
    data: Option<&CompiledSection>,
    buf: &[u8],
    cursor: usize,
    sc: &mut Scratch,
    env: &MatchEnv,
) -> Outcome {
    let start = if d.relative {
        cursor.saturating_add(d.offset as usize)
    } else {
        d.offset as usize
    };
    let Some(input) = buf.get(start..) else {
        return Outcome::NoMatch;
    };
    let input = match d.bytes {
        0 => input,
        n => input.get(..n as usize).unwrap_or(input),
    };
    let Some(data) = data else {
        return Outcome::NoMatch;
    };
    let mut out = std::mem::take(&mut sc.b64);
    bytes::base64_decode_relaxed(input, &mut out);
    let r = if out.is_empty() {
        Outcome::NoMatch
    } else {
        match eval(&data.steps, 0, &out, 0, sc, env) {
            Outcome::Match => Outcome::Match,
            _ => Outcome::NoMatch,
        }
    };
    sc.b64 = out;
    r
}
