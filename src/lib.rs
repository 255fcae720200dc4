//! shrike's configuration assembly, the one part of the binary with logic of its own: shrike's
//! own YAML (typed, strict, errors with line and column), Suricata's `suricata.yaml` (the
//! overlapping parts translated, the rest reported) and `--set` overrides, into the
//! [`shrike_pipeline::config::SensorConfig`] tree. A library target so the fuzz crate and
//! tests reach it; `src/main.rs` (the CLI) is the rest of the binary.
#![forbid(unsafe_code)]

pub mod config;
pub mod suricata_keys;
pub mod suricata_sections;
pub mod suricata_yaml;

#[cfg(test)]
mod configs_test;
