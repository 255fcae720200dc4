//! The app-layer entry point the worker calls: protocol detection, parser dispatch and
//! transaction bookkeeping for one worker. This is the contract between the stream engine
//! (which hands over in-order TCP data per direction) and the protocol parsers.
//!
//! Per flow the worker keeps an `Option<Box<AppFlow>>` (boxed: most flows never carry
//! app-layer state, and the flow table's inline budget is small). Per packet:
//! * UDP: [`AppLayer::on_udp`] with the datagram payload;
//! * TCP: for every chunk the stream engine releases (`TcpSession::app_next`),
//!   [`AppLayer::on_tcp_data`] or [`AppLayer::on_tcp_gap`], then `app_consume`;
//!   at flow end [`AppLayer::on_close`].
//!
//! The detection engine then reads transactions and their buffers through the flow's
//! [`AppFlow`]; EVE protocol records are written for completed transactions.

use super::{AppProto, Dir};

/// What the worker tells the app layer about the flow a chunk belongs to.
#[derive(Clone, Copy, Debug)]
pub struct FlowCtx {
    /// IP protocol (6 or 17).
    pub ip_proto: u8,
    /// Client and server ports (port hints for protocol detection).
    pub client_port: u16,
    pub server_port: u16,
    /// Packet time, nanoseconds.
    pub ts_ns: u64,
}

/// App-layer state of one flow.
#[derive(Debug, Default)]
pub struct AppFlow {
    /// Detected protocol (`Unknown` until detection concludes; `Failed` when it gave up).
    pub proto: AppProto,
}

/// Per-worker app-layer context (configuration, scratch, counters).
#[derive(Debug, Default)]
pub struct AppLayer {}

impl AppLayer {
    /// A new per-worker context.
    pub fn new() -> Self {
        AppLayer {}
    }

    /// In-order TCP stream data in direction `dir`.
    pub fn on_tcp_data(
        &mut self,
        _flow: &mut Option<Box<AppFlow>>,
        _ctx: &FlowCtx,
        _dir: Dir,
        _data: &[u8],
    ) {
    }

    /// `len` bytes of the TCP stream in direction `dir` are missing.
    pub fn on_tcp_gap(
        &mut self,
        _flow: &mut Option<Box<AppFlow>>,
        _ctx: &FlowCtx,
        _dir: Dir,
        _len: u64,
    ) {
    }

    /// One UDP datagram's payload in direction `dir`.
    pub fn on_udp(
        &mut self,
        _flow: &mut Option<Box<AppFlow>>,
        _ctx: &FlowCtx,
        _dir: Dir,
        _payload: &[u8],
    ) {
    }

    /// The flow is over (timeout, shutdown, eviction): finish what can be finished.
    pub fn on_close(&mut self, _flow: &mut Option<Box<AppFlow>>, _ctx: &FlowCtx) {}

    /// Write the EVE protocol records (`http`, `dns`, `tls`) of the transactions completed
    /// since the last call, then free what detection and logging no longer need. The worker
    /// calls it after inspecting each packet of a flow with app-layer state, and after
    /// [`AppLayer::on_close`].
    pub fn log_completed(
        &mut self,
        _flow: &mut Option<Box<AppFlow>>,
        _info: &crate::engine::output::AlertFlowInfo,
        _ts_ns: u64,
        _out: &mut shrike_output::EveOutput,
    ) {
    }
}
