//! Operations: running shrike as a service.
//!
//! * [`notify`]: systemd's `sd_notify` protocol (READY, STATUS, WATCHDOG, RELOADING,
//!   STOPPING) over `$NOTIFY_SOCKET`, without libsystemd.
//! * [`control`]: the control socket (Suricata's `unix-command`, speaking the protocol of
//!   `suricatasc`), its server thread and the `shrike ctl` client ([`control::run_ctl`]).
//! * [`metrics`]: a Prometheus text endpoint (`GET /metrics`) over plain TCP.
//! * [`config`]: the `unix-command:`, `run-as:` and `metrics:` sections.
//!
//! Privilege dropping lives in `shrike_sys::privileges` (the only crate with `unsafe`).
//!
//! Wiring (done by the binary's main loop): see docs/operations.md, "For developers".

// The main loop wires these step by step; until then parts are only used by tests.
#![allow(dead_code, unused_imports)]

pub mod config;
pub mod control;
mod control_proto;
pub mod metrics;
pub mod notify;

pub use config::{MetricsConfig, RunAsConfig, Toggle, UnixCommandConfig};
pub use control::{run_ctl, Command, Control, ControlOptions, ControlServer, Reply, Request};
pub use metrics::{MetricsServer, MetricsSnapshot};
pub use notify::Notifier;
