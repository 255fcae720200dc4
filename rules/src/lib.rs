//! shrike-rules: the Suricata rule language. Text in, validated rules out: parsing
//! ([`parse`]), loading rule files with per-rule error reporting ([`loader`]), the auxiliary
//! config files ([`config_files`]: classification, reference, threshold), and the payload
//! matcher primitives the engine runs ([`matcher`], [`mpm`]).
//!
//! Knows nothing of packets, flows, the app layer or the engine: `shrike-detect` compiles
//! what this crate parses.
#![forbid(unsafe_code)]

pub mod config_files;
pub mod loader;
pub mod matcher;
pub mod mpm;
pub mod parse;
pub mod requires;

pub use loader::{
    load_rules, load_rules_from_str, LoadOptions, LoadSummary, RuleLoadError, RuleSet,
};
pub use parse::{parse_rule, Rule, RuleParser, Vars};
