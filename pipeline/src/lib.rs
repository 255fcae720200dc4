//! shrike-pipeline: the packet path as a library. The per-packet flow-worker stage (decoded
//! packet in; flow state, stream data, transactions, alerts and EVE records out), the worker
//! loop, and the runmodes that drive it over capture files and live sources.
//!
//! * [`worker`]: one worker's state and its per-packet stage ([`worker::Worker::process`]),
//!   with the one flow-end path ([`session`]); [`ingest`] decodes and hashes on the reader.
//! * [`dispatch`]: the batches and SPSC queues between the reader and pinned workers.
//! * [`run`]: file mode (single and dispatch runmodes); [`live`]: live capture (workers and
//!   dispatch runmodes per interface).
//! * [`stats`]: the stats board the workers publish to; [`reload`]: live rule reload;
//!   [`ops`]: systemd notify, the control socket and the Prometheus endpoint.
//! * [`config`]: the sensor configuration tree (assembled by the binary).
//!
//! Owns no parsing of its own: decode, flows, stream, app layer, detection and output are the
//! stage crates'; this crate wires them per worker.
#![forbid(unsafe_code)]

pub mod anomaly;
pub mod config;
pub mod dispatch;
pub mod host_order;
pub mod ingest;
pub mod live;
pub mod ops;
pub mod progress;
pub mod reload;
pub mod run;
pub mod session;
pub mod stats;
pub mod worker;
pub mod worker_loop;
