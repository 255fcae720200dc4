//! Suricata-compatible rules: parsing ([`parse`]), loading rule files with
//! per-rule error reporting ([`loader`]), and the auxiliary config files
//! ([`config_files`]).

pub mod config_files;
pub mod loader;
pub mod matcher;
pub mod mpm;
pub mod parse;

pub use loader::{
    load_rules, load_rules_from_str, LoadOptions, LoadSummary, RuleLoadError, RuleSet,
};
pub use parse::{parse_rule, Rule, RuleParser, Vars};
