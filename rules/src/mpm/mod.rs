//! The multi-pattern prefilter ("MPM"): fast-pattern selection and
//! matchers over many fast patterns with per-pattern `nocase`.

pub mod fast_pattern;

pub use fast_pattern::{pattern_strength, select_fast_pattern, FastPatternChoice};
