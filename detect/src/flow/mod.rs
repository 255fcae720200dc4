//! Flow tracking: keys, the per-worker flow table and its timer wheel.

pub mod key;
pub mod table;
pub mod wheel;

pub use key::{Direction, FlowKey};
pub use table::{EndReason, Flow, FlowHandle, FlowState, FlowTable};
pub use wheel::{TimerId, TimerWheel};
