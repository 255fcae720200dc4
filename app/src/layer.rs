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
//!
//! Protocol detection follows Suricata's model: content first (HTTP method / version
//! patterns and TLS record headers on any port), then port-based probing (DNS on port 53).
//! A direction whose first bytes fit no protocol, or that starts with a gap, has failed
//! detection; when both have, the flow's protocol is [`AppProto::Failed`] (`failed` in EVE).
//! Undecided data is kept (at most [`PROBE_MAX`] bytes per direction) and handed to the
//! parser once the protocol is known.

use std::sync::Arc;

use super::dns::{self, DnsConfig, DnsState};
use super::http::{self, EveHttpOptions, HttpConfig, HttpState};
use super::tls::{self, eve::TlsLogConfig, TlsConfig, TlsState};
use super::{AppProto, Dir};

/// Most undecided bytes kept per direction while detecting the protocol; past this the
/// direction fails detection.
pub const PROBE_MAX: usize = 4096;

/// Most logged transactions kept for detection per flow.
const MAX_KEPT_TXS: u64 = 32;

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
    /// The TCP session was picked up midstream: protocol detection may find the data runs
    /// the other way and reverse the flow (see [`AppLayer::on_tcp_data`]).
    pub midstream: bool,
}

/// The protocol parser of a flow.
#[derive(Debug)]
pub enum AppState {
    /// HTTP/1.x.
    Http(Box<HttpState>),
    /// DNS (UDP or TCP).
    Dns(Box<DnsState>),
    /// TLS.
    Tls(Box<TlsState>),
}

/// Detection progress of one direction.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum DetectDir {
    /// No data yet, or not enough to decide.
    #[default]
    Pending,
    /// Gave up on this direction.
    Failed,
}

/// App-layer state of one flow.
#[derive(Debug, Default)]
pub struct AppFlow {
    /// Detected protocol (`Unknown` until detection concludes; `Failed` when it gave up).
    pub proto: AppProto,
    /// The protocol's parser, once detected.
    pub state: Option<AppState>,
    /// IP protocol of the flow.
    pub ip_proto: u8,
    detect: [DetectDir; 2],
    probe_buf: [Vec<u8>; 2],
    /// Next transaction id to log (HTTP, DNS).
    log_next: u64,
    /// The TLS record was logged.
    tls_logged: bool,
    /// EVE `anomaly` bookkeeping (see [`super::anomaly`]).
    pub(crate) anomaly: super::anomaly::AnomalyCursor,
    /// Protocol detection reversed the flow's direction once.
    reversed: bool,
    /// The flow ended (everything left is logged).
    closed: bool,
    /// Per direction: transactions below this id are complete and were inspected by
    /// detection in that direction (they may be freed once logged).
    inspected: [std::cell::Cell<u64>; 2],
    /// Bumped whenever data, a gap or the close reaches this flow's app layer: detection
    /// skips transaction inspection on payload-less packets when nothing changed.
    pub gen: u64,
}

impl AppFlow {
    /// Transactions complete in direction `dir` so far (a monotonic count). The worker asks
    /// the stream engine for raw inspection when it grows, as Suricata's parsers do on a
    /// completed request or response (`StreamTcpReassembleTriggerRawReassembly`).
    pub fn complete_in(&self, dir: Dir) -> u64 {
        match &self.state {
            Some(AppState::Http(h)) => {
                use crate::http::Progress;
                let open = h
                    .txs()
                    .filter(|t| {
                        let p = match dir {
                            Dir::ToServer => t.request_progress(),
                            Dir::ToClient => t.response_progress(),
                        };
                        p != Progress::Complete
                    })
                    .count() as u64;
                h.tx_count().saturating_sub(open)
            }
            Some(AppState::Dns(d)) => d.tx_count(),
            _ => 0,
        }
    }

    /// The HTTP state, when the flow is HTTP.
    pub fn http(&self) -> Option<&HttpState> {
        match &self.state {
            Some(AppState::Http(h)) => Some(h),
            _ => None,
        }
    }

    /// The DNS state, when the flow is DNS.
    pub fn dns(&self) -> Option<&DnsState> {
        match &self.state {
            Some(AppState::Dns(d)) => Some(d),
            _ => None,
        }
    }

    /// The TLS state, when the flow is TLS.
    pub fn tls(&self) -> Option<&TlsState> {
        match &self.state {
            Some(AppState::Tls(t)) => Some(t),
            _ => None,
        }
    }

    /// Whether the flow ended (no more data will come).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the flow's TLS record was logged (no more TLS events are reported then).
    pub(crate) fn tls_logged(&self) -> bool {
        self.tls_logged
    }

    /// Next transaction id not yet logged (HTTP/DNS); transactions before it may be freed.
    pub fn logged_before(&self) -> u64 {
        self.log_next
    }

    /// Detection tells that transactions below `upto` are complete and were inspected in
    /// direction `dir` (so they need not be kept for it).
    pub fn note_inspected(&self, dir: Dir, upto: u64) {
        let c = &self.inspected[di(dir)];
        c.set(c.get().max(upto));
    }
}

/// App-layer counters of one worker (Suricata's `app_layer.flow.*` and `app_layer.tx.*`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AppStats {
    /// Flows detected as HTTP.
    pub flow_http: u64,
    /// Flows detected as TLS.
    pub flow_tls: u64,
    /// TCP flows detected as DNS.
    pub flow_dns_tcp: u64,
    /// UDP flows detected as DNS.
    pub flow_dns_udp: u64,
    /// TCP flows whose detection failed.
    pub flow_failed_tcp: u64,
    /// UDP flows whose detection failed.
    pub flow_failed_udp: u64,
    /// HTTP transactions logged.
    pub tx_http: u64,
    /// TLS transactions: Suricata 7 counts none (a TLS flow's state is its single
    /// transaction, there from the start), so this stays 0 like its `app_layer.tx.tls`.
    pub tx_tls: u64,
    /// TLS flows whose parser gave up on malformed data.
    pub error_tls_parser: u64,
    /// DNS-over-TCP transactions.
    pub tx_dns_tcp: u64,
    /// DNS-over-UDP transactions.
    pub tx_dns_udp: u64,
}

impl AppStats {
    /// Visit every counter with its Suricata name.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("app_layer.flow.http", self.flow_http);
        f("app_layer.flow.tls", self.flow_tls);
        f("app_layer.flow.dns_tcp", self.flow_dns_tcp);
        f("app_layer.flow.dns_udp", self.flow_dns_udp);
        f("app_layer.flow.failed_tcp", self.flow_failed_tcp);
        f("app_layer.flow.failed_udp", self.flow_failed_udp);
        f("app_layer.tx.http", self.tx_http);
        f("app_layer.tx.tls", self.tx_tls);
        f("app_layer.error.tls.parser", self.error_tls_parser);
        f("app_layer.tx.dns_tcp", self.tx_dns_tcp);
        f("app_layer.tx.dns_udp", self.tx_dns_udp);
    }

    /// Add another worker's counters.
    pub fn merge(&mut self, o: &Self) {
        self.flow_http += o.flow_http;
        self.flow_tls += o.flow_tls;
        self.flow_dns_tcp += o.flow_dns_tcp;
        self.flow_dns_udp += o.flow_dns_udp;
        self.flow_failed_tcp += o.flow_failed_tcp;
        self.flow_failed_udp += o.flow_failed_udp;
        self.tx_http += o.tx_http;
        self.tx_tls += o.tx_tls;
        self.error_tls_parser += o.error_tls_parser;
        self.tx_dns_tcp += o.tx_dns_tcp;
        self.tx_dns_udp += o.tx_dns_udp;
    }
}

/// The flow's app state, created on first use, with its generation bumped (something
/// reached the app layer).
fn touch<'f>(flow: &'f mut Option<Box<AppFlow>>, ctx: &FlowCtx) -> &'f mut AppFlow {
    let f = flow.get_or_insert_with(|| {
        Box::new(AppFlow {
            ip_proto: ctx.ip_proto,
            ..AppFlow::default()
        })
    });
    f.gen = f.gen.wrapping_add(1);
    f
}

/// Per-worker app-layer context (configuration, scratch, counters).
#[derive(Debug)]
pub struct AppLayer {
    http_cfg: Arc<HttpConfig>,
    dns_cfg: DnsConfig,
    tls_cfg: TlsConfig,
    /// EVE `http` options.
    pub http_log: EveHttpOptions,
    /// EVE `dns` options.
    pub dns_log: dns::eve::DnsLogConfig,
    /// EVE `tls` options.
    pub tls_log: TlsLogConfig,
    /// Write EVE `http`/`dns`/`tls` records in [`AppLayer::log_completed`].
    pub log_records: bool,
    /// Packet number to put in records written next (EVE `pcap_cnt`); set by the worker.
    pub pcap_cnt: u64,
    /// Counters.
    pub stats: AppStats,
}

impl Default for AppLayer {
    fn default() -> Self {
        Self::new()
    }
}

fn di(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

/// Outcome of probing one direction's first bytes.
enum Found {
    Proto(AppProto),
    No,
    NeedMore,
}

/// Suricata-style detection for TCP: content patterns (HTTP, TLS) on any port, the port's
/// usual protocol tried first; DNS by probing when either port is 53.
fn probe_tcp(ctx: &FlowCtx, dir: Dir, data: &[u8]) -> Found {
    let mut need_more = false;
    let tls_first = matches!(ctx.server_port, 443 | 465 | 993 | 995 | 8443);
    let order: [AppProto; 2] = if tls_first {
        [AppProto::Tls, AppProto::Http]
    } else {
        [AppProto::Http, AppProto::Tls]
    };
    for p in order {
        match p {
            AppProto::Http => match http::probe(dir, data) {
                http::ProbeResult::Yes => return Found::Proto(AppProto::Http),
                http::ProbeResult::NeedMore => need_more = true,
                http::ProbeResult::No => {}
            },
            _ => match tls::probe(dir, data) {
                tls::Probe::Yes => return Found::Proto(AppProto::Tls),
                tls::Probe::NeedMore => need_more = true,
                tls::Probe::No => {}
            },
        }
    }
    if ctx.server_port == 53 || ctx.client_port == 53 {
        match dns::probe_tcp(data) {
            dns::Probe::Yes { .. } => return Found::Proto(AppProto::Dns),
            dns::Probe::NeedMore => need_more = true,
            dns::Probe::No => {}
        }
    }
    if need_more {
        Found::NeedMore
    } else {
        Found::No
    }
}

impl AppLayer {
    /// A new per-worker context with Suricata's default settings.
    pub fn new() -> Self {
        AppLayer {
            http_cfg: Arc::new(HttpConfig::default()),
            dns_cfg: DnsConfig::default(),
            tls_cfg: TlsConfig::default(),
            http_log: EveHttpOptions {
                extended: true,
                ..EveHttpOptions::default()
            },
            dns_log: dns::eve::DnsLogConfig::default(),
            tls_log: TlsLogConfig::new(true, false, None),
            log_records: true,
            pcap_cnt: 0,
            stats: AppStats::default(),
        }
    }

    /// A context with the given parser settings.
    pub fn with_config(http: Arc<HttpConfig>, dns: DnsConfig, tls: TlsConfig) -> Self {
        AppLayer {
            http_cfg: http,
            dns_cfg: dns,
            tls_cfg: tls,
            ..Self::new()
        }
    }

    fn start(&mut self, f: &mut AppFlow, proto: AppProto, tcp: bool) {
        f.proto = proto;
        f.state = match proto {
            AppProto::Http => {
                self.stats.flow_http += 1;
                Some(AppState::Http(Box::new(HttpState::new(Arc::clone(
                    &self.http_cfg,
                )))))
            }
            AppProto::Dns => {
                if tcp {
                    self.stats.flow_dns_tcp += 1;
                } else {
                    self.stats.flow_dns_udp += 1;
                }
                Some(AppState::Dns(Box::new(DnsState::new(tcp, self.dns_cfg))))
            }
            AppProto::Tls => {
                self.stats.flow_tls += 1;
                Some(AppState::Tls(Box::new(TlsState::new(self.tls_cfg))))
            }
            _ => None,
        };
    }

    fn fail_dir(&mut self, f: &mut AppFlow, dir: Dir, tcp: bool) {
        f.detect[di(dir)] = DetectDir::Failed;
        f.probe_buf[di(dir)] = Vec::new();
        if f.detect.iter().all(|d| *d == DetectDir::Failed) && f.proto == AppProto::Unknown {
            f.proto = AppProto::Failed;
            if tcp {
                self.stats.flow_failed_tcp += 1;
            } else {
                self.stats.flow_failed_udp += 1;
            }
        }
    }

    /// In-order TCP stream data in direction `dir`.
    ///
    /// Returns `true` when the data was not taken because it runs the other way: on a
    /// session picked up midstream, the first data of a direction that fits no protocol but
    /// fits one as the opposite direction (a response seen first), while the other
    /// direction has seen nothing yet. As Suricata's protocol detection does, the caller
    /// then swaps the flow's direction (client and server) and hands the same data again as
    /// the other direction. This happens at most once per flow.
    pub fn on_tcp_data(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        ctx: &FlowCtx,
        dir: Dir,
        data: &[u8],
    ) -> bool {
        if data.is_empty() {
            return false;
        }
        let f = touch(flow, ctx);
        match f.proto {
            AppProto::Failed => {}
            AppProto::Unknown => {
                if f.detect[di(dir)] == DetectDir::Failed {
                    return false;
                }
                let d = di(dir);
                let first = f.probe_buf[d].is_empty();
                let found = if f.probe_buf[d].is_empty() {
                    probe_tcp(ctx, dir, data)
                } else {
                    let mut b = std::mem::take(&mut f.probe_buf[d]);
                    b.extend_from_slice(
                        data.get(..PROBE_MAX.saturating_sub(b.len()))
                            .unwrap_or(data),
                    );
                    let r = probe_tcp(ctx, dir, &b);
                    f.probe_buf[d] = b;
                    r
                };
                match found {
                    Found::Proto(p) => {
                        self.start(f, p, true);
                        // Earlier undecided data of both directions first, this direction's
                        // (which already holds `data` when it was buffered) last.
                        let other = 1 - d;
                        let ob = std::mem::take(&mut f.probe_buf[other]);
                        let mine = std::mem::take(&mut f.probe_buf[d]);
                        let odir = if other == 0 {
                            Dir::ToServer
                        } else {
                            Dir::ToClient
                        };
                        let mut err = false;
                        if !ob.is_empty() {
                            err |= feed(f, odir, &ob);
                        }
                        if mine.is_empty() {
                            err |= feed(f, dir, data);
                        } else {
                            err |= feed(f, dir, &mine);
                        }
                        self.count_parser_error(f, err);
                    }
                    Found::No if first && ctx.midstream && reverse_fits(f, ctx, dir, data) => {
                        f.reversed = true;
                        f.detect.swap(0, 1);
                        f.probe_buf.swap(0, 1);
                        return true;
                    }
                    Found::No => self.fail_dir(f, dir, true),
                    Found::NeedMore => {
                        if f.probe_buf[d].is_empty() {
                            f.probe_buf[d].extend_from_slice(data);
                        }
                        if f.probe_buf[d].len() >= PROBE_MAX {
                            self.fail_dir(f, dir, true);
                        }
                    }
                }
            }
            _ => {
                let err = feed(f, dir, data);
                self.count_parser_error(f, err);
            }
        }
        false
    }

    /// Suricata's `app_layer.error.<proto>.parser`: the parser gave up on the flow's data.
    fn count_parser_error(&mut self, f: &AppFlow, err: bool) {
        if err && f.proto == AppProto::Tls {
            self.stats.error_tls_parser += 1;
        }
    }

    /// `len` bytes of the TCP stream in direction `dir` are missing.
    pub fn on_tcp_gap(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        ctx: &FlowCtx,
        dir: Dir,
        len: u64,
    ) {
        let f = touch(flow, ctx);
        match (&mut f.state, f.proto) {
            (_, AppProto::Unknown) => self.fail_dir(f, dir, true),
            (Some(AppState::Http(h)), _) => h.gap(dir, len),
            (Some(AppState::Dns(d)), _) => d.gap(dir, u32::try_from(len).unwrap_or(u32::MAX)),
            (Some(AppState::Tls(t)), _) => t.gap(dir, u32::try_from(len).unwrap_or(u32::MAX)),
            _ => {}
        }
    }

    /// One UDP datagram's payload in direction `dir`.
    pub fn on_udp(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        ctx: &FlowCtx,
        dir: Dir,
        payload: &[u8],
    ) {
        if payload.is_empty() {
            return;
        }
        let f = touch(flow, ctx);
        match f.proto {
            // Suricata 7 (AppLayerHandleUdp): each direction gets one detection attempt; when
            // the flow's first datagram is not recognised the flow is `failed` at once, and a
            // protocol recognised later in the other direction still takes over (the flow was
            // already counted, as failed).
            AppProto::Unknown | AppProto::Failed => {
                if f.detect[di(dir)] == DetectDir::Failed {
                    return;
                }
                let first = f.proto == AppProto::Unknown;
                let port53 = ctx.server_port == 53 || ctx.client_port == 53;
                if port53 && matches!(dns::probe_udp(payload), dns::Probe::Yes { .. }) {
                    self.start(f, AppProto::Dns, false);
                    if !first {
                        self.stats.flow_dns_udp = self.stats.flow_dns_udp.saturating_sub(1);
                    }
                    self.udp_parse(f, dir, payload);
                } else {
                    f.detect[di(dir)] = DetectDir::Failed;
                    if first {
                        f.proto = AppProto::Failed;
                        self.stats.flow_failed_udp += 1;
                    }
                }
            }
            _ => self.udp_parse(f, dir, payload),
        }
    }

    fn udp_parse(&mut self, f: &mut AppFlow, dir: Dir, payload: &[u8]) {
        if let Some(AppState::Dns(d)) = &mut f.state {
            let before = d.tx_count();
            d.parse(dir, payload);
            self.stats.tx_dns_udp += d.tx_count().saturating_sub(before);
        }
    }

    /// The flow is over (timeout, shutdown, eviction): finish what can be finished.
    pub fn on_close(&mut self, flow: &mut Option<Box<AppFlow>>, _ctx: &FlowCtx) {
        let Some(f) = flow.as_deref_mut() else {
            return;
        };
        f.gen = f.gen.wrapping_add(1);
        f.closed = true;
        if let Some(AppState::Http(h)) = &mut f.state {
            h.close(Dir::ToServer);
            h.close(Dir::ToClient);
        }
    }

    /// Write the EVE protocol records (`http`, `dns`, `tls`) of the transactions completed
    /// since the last call, then free what detection and logging no longer need. The worker
    /// calls it after inspecting each packet of a flow with app-layer state, and after
    /// [`AppLayer::on_close`].
    pub fn log_completed(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        info: &shrike_output::eve::AlertFlowInfo,
        ts_ns: u64,
        out: &mut shrike_output::EveOutput,
    ) {
        let Some(f) = flow.as_deref_mut() else {
            return;
        };
        let closed = f.closed;
        let log = self.log_records;
        let rec = crate::log::RecordCtx {
            info,
            ts_ns,
            ip_proto: f.ip_proto,
            pcap_cnt: self.pcap_cnt,
        };
        match &mut f.state {
            Some(AppState::Http(h)) => {
                let mut id = f.log_next;
                while id < h.tx_count() {
                    let Some(tx) = h.tx(id) else {
                        id += 1;
                        continue;
                    };
                    if !(tx.is_complete() || closed) {
                        break;
                    }
                    if log {
                        rec.http_files(out, h, id, &self.http_log);
                        rec.http(out, h, id, &self.http_log);
                    }
                    self.stats.tx_http += 1;
                    id += 1;
                }
                f.log_next = id;
                // Keep what detection has not inspected in both directions yet (bounded).
                let seen = f.inspected[0].get().min(f.inspected[1].get());
                let keep_from = if closed {
                    id
                } else {
                    seen.min(id).max(id.saturating_sub(MAX_KEPT_TXS))
                };
                h.free_txs_before(keep_from, false);
                if closed {
                    h.release_pool();
                }
            }
            Some(AppState::Dns(d)) => {
                let mut id = f.log_next;
                while id < d.tx_count() {
                    if let Some(tx) = d.tx(id) {
                        if log {
                            rec.dns(out, tx, &self.dns_log);
                        }
                        if f.ip_proto == 6 {
                            self.stats.tx_dns_tcp += 1;
                        }
                    }
                    id += 1;
                }
                f.log_next = id;
                // Over TCP a message is parsed when the other side acknowledges it, so a
                // transaction can appear on a packet of the opposite direction; detection
                // inspects it on the next packet of its own direction. Keep the latest
                // logged ones for that (bounded) until the flow ends.
                let keep_from = if closed || f.ip_proto != 6 {
                    id
                } else {
                    id.saturating_sub(MAX_KEPT_TXS)
                };
                d.free_txs_before(keep_from);
            }
            Some(AppState::Tls(t)) if !f.tls_logged && (t.handshake_done() || closed) => {
                f.tls_logged = true;
                if log && t.should_log(self.tls_log.session_resumption) {
                    rec.tls(out, t, &self.tls_log);
                }
            }
            _ => {}
        }
    }
}

/// Whether `data`, seen first in `dir` of a midstream flow, fits a protocol as the other
/// direction while that direction has seen nothing yet (Suricata's reverse-direction
/// pattern match for midstream sessions).
fn reverse_fits(f: &AppFlow, ctx: &FlowCtx, dir: Dir, data: &[u8]) -> bool {
    let other = match dir {
        Dir::ToServer => Dir::ToClient,
        Dir::ToClient => Dir::ToServer,
    };
    let o = di(other);
    if f.reversed || f.detect[o] != DetectDir::Pending || !f.probe_buf[o].is_empty() {
        return false;
    }
    let rctx = FlowCtx {
        client_port: ctx.server_port,
        server_port: ctx.client_port,
        ..*ctx
    };
    matches!(probe_tcp(&rctx, other, data), Found::Proto(_))
}

/// Feed data to the flow's parser. Returns `true` when the TLS parser gave up on this data
/// (a parser error, counted once per flow as Suricata's parser stops there).
fn feed(f: &mut AppFlow, dir: Dir, data: &[u8]) -> bool {
    match &mut f.state {
        Some(AppState::Http(h)) if !h.is_tunnel() => h.parse(dir, data),
        Some(AppState::Dns(d)) => {
            d.parse(dir, data);
        }
        Some(AppState::Tls(t)) => {
            let before = t.failed();
            return !t.parse(dir, data) && !before;
        }
        _ => {}
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(sp: u16, dp: u16, proto: u8) -> FlowCtx {
        FlowCtx {
            ip_proto: proto,
            client_port: sp,
            server_port: dp,
            ts_ns: 0,
            midstream: false,
        }
    }

    #[test]
    fn midstream_response_first_reverses_once() {
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        let req = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        // Not midstream: the direction fails detection, nothing is reversed.
        let mut al = AppLayer::new();
        let mut f = None;
        assert!(!al.on_tcp_data(&mut f, &ctx(80, 40000, 6), Dir::ToServer, resp));
        // Midstream: the response belongs to the other direction.
        let c = FlowCtx {
            midstream: true,
            ..ctx(80, 40000, 6)
        };
        let mut f = None;
        assert!(al.on_tcp_data(&mut f, &c, Dir::ToServer, resp));
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Unknown);
        // The caller swapped the flow: the same data comes again as to-client data.
        let swapped = FlowCtx {
            client_port: 40000,
            server_port: 80,
            ..c
        };
        assert!(!al.on_tcp_data(&mut f, &swapped, Dir::ToClient, resp));
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Http);
        assert!(!al.on_tcp_data(&mut f, &swapped, Dir::ToServer, req));
        assert_eq!(f.as_ref().unwrap().http().unwrap().tx_count(), 2);
        // Data that fits neither way, or a second candidate: never reversed.
        let mut g = None;
        assert!(!al.on_tcp_data(&mut g, &c, Dir::ToServer, b"\x00\x01junk"));
        let mut h = None;
        assert!(al.on_tcp_data(&mut h, &c, Dir::ToServer, resp));
        assert!(!al.on_tcp_data(&mut h, &c, Dir::ToServer, b"\x00\x01junk"));
    }

    #[test]
    fn detection_table() {
        let hello = [22u8, 3, 1, 0, 5, 1, 0, 0, 1, 0];
        let cases: &[(u16, &[u8], &[u8], AppProto)] = &[
            (
                8081,
                b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
                b"",
                AppProto::Http,
            ),
            (
                80,
                b"GET / HTTP/1.1\r\n\r\n",
                b"HTTP/1.1 200 OK\r\n\r\n",
                AppProto::Http,
            ),
            (8443, &hello, b"", AppProto::Tls),
            (443, &hello, b"", AppProto::Tls),
            (80, b"\x00\x01garbage", b"\x02\x03more", AppProto::Failed),
            (2222, b"SSH-2.0-x\r\n", b"SSH-2.0-y\r\n", AppProto::Failed),
        ];
        for (port, ts, tc, want) in cases {
            let mut al = AppLayer::new();
            let mut f = None;
            let c = ctx(40000, *port, 6);
            al.on_tcp_data(&mut f, &c, Dir::ToServer, ts);
            al.on_tcp_data(&mut f, &c, Dir::ToClient, tc);
            assert_eq!(f.as_ref().map(|f| f.proto), Some(*want), "port {port}");
        }
    }

    #[test]
    fn http_split_method_detected() {
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(40000, 9999, 6);
        al.on_tcp_data(&mut f, &c, Dir::ToServer, b"GE");
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Unknown);
        al.on_tcp_data(&mut f, &c, Dir::ToServer, b"T /x HTTP/1.0\r\n\r\n");
        let f = f.unwrap();
        assert_eq!(f.proto, AppProto::Http);
        let h = f.http().unwrap();
        assert_eq!(h.tx_count(), 1);
        assert_eq!(h.tx(0).unwrap().uri_raw(), Some(&b"/x"[..]));
        assert_eq!(al.stats.flow_http, 1);
    }

    #[test]
    fn gap_before_detection_fails_direction() {
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(40000, 80, 6);
        al.on_tcp_gap(&mut f, &c, Dir::ToServer, 100);
        al.on_tcp_gap(&mut f, &c, Dir::ToClient, 100);
        assert_eq!(f.unwrap().proto, AppProto::Failed);
        assert_eq!(al.stats.flow_failed_tcp, 1);
    }

    #[test]
    fn udp_dns_on_53_only() {
        // Query for "a.b" type A.
        let q = [
            0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 1, b'b', 0, 0, 1, 0, 1,
        ];
        let mut al = AppLayer::new();
        let mut f = None;
        al.on_udp(&mut f, &ctx(5555, 53, 17), Dir::ToServer, &q);
        let fl = f.as_ref().unwrap();
        assert_eq!(fl.proto, AppProto::Dns);
        assert_eq!(fl.dns().unwrap().tx_count(), 1);
        let mut f2 = None;
        al.on_udp(&mut f2, &ctx(5555, 5353, 17), Dir::ToServer, &q);
        al.on_udp(&mut f2, &ctx(5555, 5353, 17), Dir::ToClient, &q);
        assert_eq!(f2.unwrap().proto, AppProto::Failed);
    }

    #[test]
    fn udp_first_datagram_decides_failed_other_side_may_still_detect() {
        let q = [
            0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 1, b'b', 0, 0, 1, 0, 1,
        ];
        let mut al = AppLayer::new();
        // One-sided flow with an unrecognised datagram: failed at once (Suricata 7).
        let mut f = None;
        al.on_udp(&mut f, &ctx(137, 137, 17), Dir::ToServer, b"\x01\x02junk");
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Failed);
        assert_eq!(al.stats.flow_failed_udp, 1);
        // Junk first towards port 53, then a recognisable datagram the other way: the
        // protocol takes over, the flow stays counted as failed only.
        let mut f = None;
        let c = ctx(5555, 53, 17);
        al.on_udp(&mut f, &c, Dir::ToServer, b"\x01\x02");
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Failed);
        al.on_udp(&mut f, &c, Dir::ToClient, &q);
        assert_eq!(f.as_ref().unwrap().proto, AppProto::Dns);
        assert_eq!(al.stats.flow_failed_udp, 2);
        assert_eq!(al.stats.flow_dns_udp, 0);
    }
}
