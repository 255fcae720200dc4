//! shrike-detect: decoding, flows, rules and detection, stream reassembly and app-layer parsing.
#![forbid(unsafe_code)]

pub mod app;
