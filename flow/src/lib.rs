//! shrike-flow: flow tracking for one worker. Normalised flow keys ([`FlowKey`], symmetric
//! hash), the flow table with its per-flow user data, the hierarchical timer wheel that
//! drives flow timeouts, flushes and stats, and the flow counters ([`stats::FlowStats`]).
//!
//! Depends on `shrike-packet` only (a flow is keyed from a decoded packet). Owns no stream,
//! app-layer or detection state: those live in the per-flow user data the pipeline stores.
#![forbid(unsafe_code)]

pub mod config;
pub mod key;
pub mod stats;
pub mod table;
pub mod wheel;

pub use key::{Direction, FlowKey};
pub use table::{EndReason, Flow, FlowHandle, FlowState, FlowTable};
pub use wheel::{TimerId, TimerWheel};

/// Direction of data on a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    ToServer,
    ToClient,
}
