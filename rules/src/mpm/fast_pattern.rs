//! Fast-pattern selection, as Suricata 7's `RetrieveFPForSig` does it:
//!
//! 1. a content with an explicit `fast_pattern` wins;
//! 2. otherwise non-negated contents are preferred; negated ones are only
//!    used when a rule has no other content;
//! 3. among the candidates, the buffers with the highest fast-pattern
//!    priority are kept (the packet payload has priority 3, every
//!    app-layer buffer 2);
//! 4. among those contents the longest ones are kept, and of these the
//!    one with the highest [`pattern_strength`] (first one on ties).
//!
//! `fast_pattern:offset,length` ("chop") feeds only that slice to the
//! prefilter.

use crate::parse::{BufferId, Content, Match, Rule};

/// The content a rule is prefiltered on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastPatternChoice {
    /// Buffer the pattern must be searched in.
    pub buffer: BufferId,
    /// Index of the section in [`Rule::sections`].
    pub section: usize,
    /// Index of the content in that section's match list.
    pub index: usize,
    /// Bytes given to the prefilter (chopped when `fast_pattern:o,l`).
    pub pattern: Vec<u8>,
    /// Case-insensitive.
    pub nocase: bool,
    /// The content is negated.
    pub negated: bool,
    /// Finding the pattern anywhere decides the content on its own (no
    /// offset/depth/distance/within/startswith). A negated fast pattern only
    /// filters the rule out when it is conclusive; otherwise such a rule is
    /// always inspected (Suricata's `DETECT_CONTENT_MPM_IS_CONCLUSIVE`;
    /// checked against suricata 7.0.10: a later relative keyword does not
    /// make it inconclusive).
    pub conclusive: bool,
}

/// Suricata's `PatternStrength`: distinct letters count 3, distinct
/// printable/`00`/`01`/`ff` bytes 4, other distinct bytes 6, repeats 1.
pub fn pattern_strength(pat: &[u8]) -> u32 {
    let mut seen = [false; 256];
    let mut s = 0u32;
    for &b in pat {
        if seen[usize::from(b)] {
            s += 1;
            continue;
        }
        seen[usize::from(b)] = true;
        s += if b.is_ascii_alphabetic() {
            3
        } else if (0x20..0x7f).contains(&b) || b == 0x00 || b == 0x01 || b == 0xff {
            4
        } else {
            6
        };
    }
    s
}

/// Fast-pattern priority of a buffer (higher is preferred).
pub fn buffer_priority(b: BufferId) -> u8 {
    if b == BufferId::PAYLOAD {
        3
    } else {
        2
    }
}

fn choice(rule: &Rule, section: usize, index: usize, c: &Content) -> Option<FastPatternChoice> {
    let sec = rule.sections.get(section)?;
    let conclusive = !c.is_relative() && c.offset.is_none() && c.depth.is_none() && !c.startswith;
    let pattern = match c.fast_pattern.and_then(|f| f.chop) {
        Some((o, l)) => c
            .pattern
            .get(usize::from(o)..usize::from(o) + usize::from(l))?
            .to_vec(),
        None => c.pattern.clone(),
    };
    Some(FastPatternChoice {
        buffer: sec.buffer,
        section,
        index,
        pattern,
        nocase: c.nocase,
        negated: c.negated,
        conclusive,
    })
}

/// Picks the rule's fast pattern; `None` when the rule has no content in
/// any buffer (it is then inspected without prefilter).
pub fn select_fast_pattern(rule: &Rule) -> Option<FastPatternChoice> {
    let contents = || {
        rule.sections.iter().enumerate().flat_map(|(si, s)| {
            s.matches
                .iter()
                .enumerate()
                .filter_map(move |(mi, m)| match m {
                    // base64_data is not a prefilter buffer in Suricata.
                    Match::Content(c) if s.buffer.name() != "base64_data" => {
                        Some((si, mi, s.buffer, c))
                    }
                    _ => None,
                })
        })
    };
    if let Some((si, mi, _, c)) = contents().find(|(_, _, _, c)| c.fast_pattern.is_some()) {
        return choice(rule, si, mi, c);
    }
    let any_positive = contents().any(|(_, _, _, c)| !c.negated);
    let candidates = || contents().filter(move |(_, _, _, c)| c.negated != any_positive);
    let prio = candidates().map(|(_, _, b, _)| buffer_priority(b)).max()?;
    let in_prio = || candidates().filter(move |(_, _, b, _)| buffer_priority(*b) == prio);
    let max_len = in_prio().map(|(_, _, _, c)| c.pattern.len()).max()?;
    let mut best: Option<(usize, usize, &Content, u32)> = None;
    for (si, mi, _, c) in in_prio().filter(|(_, _, _, c)| c.pattern.len() == max_len) {
        let s = pattern_strength(&c.pattern);
        if best.is_none_or(|(_, _, _, bs)| s > bs) {
            best = Some((si, mi, c, s));
        }
    }
    let (si, mi, c, _) = best?;
    choice(rule, si, mi, c)
}
