//! shrike-detect: decoding, flows, rules and detection, stream reassembly and app-layer parsing.
//!
//! * [`decode`]: link layer to transport into a compact `PacketMeta`.
//! * [`flow`]: normalised flow keys, the per-worker flow table and its timer wheel.
//! * [`rules`]: the Suricata rule language: parser, loader, payload matcher, prefilter.
//! * [`engine`]: the packet-level detection engine.
//! * [`app`]: application-layer parsers.
//! * [`config`]: serde configuration.
//! * [`stats`]: per-worker counters with Suricata's EVE stats names.
#![forbid(unsafe_code)]

pub mod app;
pub mod config;
pub mod decode;
pub mod defrag;
pub mod engine;
pub mod flow;
pub mod rules;
pub mod stats;
pub mod stream;
