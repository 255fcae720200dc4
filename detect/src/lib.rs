//! shrike-detect: packet decoding, flow tracking and (later) detection.
//!
//! * [`decode`]: link layer to transport into a compact `PacketMeta`.
//! * [`flow`]: normalised flow keys, the per-worker flow table and its timer wheel.
//! * [`config`]: serde configuration of both.
//! * [`stats`]: per-worker counters with Suricata's EVE stats names.

pub mod config;
pub mod decode;
pub mod flow;
pub mod stats;
