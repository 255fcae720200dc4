//! Multi-pattern prefilter behind a small trait, so the backend can be swapped (the
//! project's `rules::mpm` backends, Hyperscan) without touching the engine.
//!
//! The built-in backend is an Aho-Corasick automaton over the ASCII-lowercased patterns,
//! searched case-insensitively with overlapping matches; case-sensitive patterns are
//! confirmed on the exact bytes by the caller (see [`super::group`]).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// A multi-pattern matcher over a fixed pattern list.
pub trait Prefilter: Send + Sync + std::fmt::Debug {
    /// Report `(pattern index, start, end)` for every occurrence of every pattern in `hay`,
    /// matching ASCII case-insensitively.
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize));

    /// Number of patterns.
    fn patterns(&self) -> usize;
}

/// The built-in Aho-Corasick backend.
#[derive(Debug)]
pub struct AcPrefilter {
    ac: AhoCorasick,
    n: usize,
}

impl AcPrefilter {
    /// Build over `patterns` (already lowercased; matching ignores ASCII case).
    pub fn new(patterns: &[&[u8]]) -> Option<AcPrefilter> {
        // Contiguous NFA: a DFA scanned no faster on ET-sized groups (measured) and builds
        // much slower.
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(patterns)
            .ok()?;
        Some(AcPrefilter {
            ac,
            n: patterns.len(),
        })
    }
}

impl Prefilter for AcPrefilter {
    #[inline]
    fn scan(&self, hay: &[u8], found: &mut dyn FnMut(u32, usize, usize)) {
        for m in self.ac.find_overlapping_iter(hay) {
            found(m.pattern().as_u32(), m.start(), m.end());
        }
    }

    fn patterns(&self) -> usize {
        self.n
    }
}

/// Build the default prefilter over lowercased patterns.
pub fn build(patterns: &[&[u8]]) -> Option<Box<dyn Prefilter>> {
    AcPrefilter::new(patterns).map(|p| Box::new(p) as Box<dyn Prefilter>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_nocase() {
        let p = build(&[b"abc", b"bc", b"c"]).unwrap();
        let mut hits = Vec::new();
        p.scan(b"xABCx", &mut |i, s, e| hits.push((i, s, e)));
        hits.sort_unstable();
        assert_eq!(hits, vec![(0, 1, 4), (1, 2, 4), (2, 3, 4)]);
        assert_eq!(p.patterns(), 3);
    }
}
