//! shrike-packet: the first stage of the packet path. Raw frames in, a compact decoded
//! [`decode::PacketMeta`] out; IP fragments reassembled ([`defrag`]).
//!
//! * [`decode`]: link layer to transport (tunnels included) into `PacketMeta`, with
//!   Suricata's decoder events and per-reason counters ([`stats::DecodeStats`]).
//! * [`defrag`]: IPv4/IPv6 reassembly with Suricata's per-OS overlap policies.
//! * [`policy`]: the `host-os-policy` table shared by defrag and the stream engine.
//! * [`config`]: decoder settings and the size syntax (`64kb`) every section uses.
//!
//! Owns no flow state and knows nothing of rules, the app layer or output.
#![forbid(unsafe_code)]

pub mod config;
pub mod decode;
pub mod defrag;
pub mod policy;
pub mod stats;
