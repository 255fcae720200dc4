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
//! detection; when both have, the flow's protocol is [`AppProto::FAILED`] (`failed` in EVE).
//! Undecided data is kept (at most [`PROBE_MAX`] bytes per direction) and handed to the
//! parser once the protocol is known.

use shrike_output::eve::AlertFlowInfo;

use crate::dns::{DnsConfig, DnsState};
use crate::http::{HttpConfig, HttpState};
use crate::log::{LogOptions, RecordCtx};
use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, MAX_PROTOCOLS, PROTOCOLS};
use crate::tls::{TlsConfig, TlsState};
use crate::{AppProto, Dir};

/// Most undecided bytes kept per direction while detecting the protocol; past this the
/// direction fails detection.
pub const PROBE_MAX: usize = 4096;

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
    /// TCP, once established: how much undecided data of each direction (to server, to
    /// client) protocol detection holds before it gives up (Suricata's
    /// `TCPProtoDetectCheckBailConditions`: at least 100000 bytes, more when the window
    /// the receiver advertised and the reassembly depth allow); 0: no such limit.
    pub bail_limits: [u64; 2],
    /// TCP: the data each direction (to server, to client) received so far, acked or not
    /// (what Suricata's detection holds while undecided).
    pub held: [u64; 2],
    /// The flow's client and server addresses (IPv4 in bytes 0..4): expected
    /// connections (FTP data) are matched on them, in either order.
    pub addrs: [[u8; 16]; 2],
}

/// Detection progress of one direction.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum DetectDir {
    /// No data yet, or not enough to decide.
    #[default]
    Pending,
    /// Gave up on this direction.
    Failed,
    /// Detection in this direction concluded (a protocol, or the flow's protocol came
    /// from elsewhere: an expectation, a protocol change).
    Done,
}

/// [`AppFlow::take_detect_events`]: the flow's protocol was found in one direction and the
/// other direction's data fits no protocol (Suricata's
/// `APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION`).
pub const DETECT_ONLY_ONE_DIRECTION: u8 = 1;
/// The two directions were detected as different protocols (Suricata's
/// `APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS`).
pub const DETECT_MISMATCH_BOTH_DIRECTIONS: u8 = 2;
/// After a protocol change that expected a protocol (STARTTLS: TLS), detection found
/// another one (Suricata's `APPLAYER_UNEXPECTED_PROTOCOL`).
pub const DETECT_UNEXPECTED_PROTOCOL: u8 = 4;
/// After STARTTLS, detection found a protocol other than TLS (Suricata's
/// `APPLAYER_NO_TLS_AFTER_STARTTLS`).
pub const DETECT_NO_TLS_AFTER_STARTTLS: u8 = 8;
/// Protocol detection gave up on a TCP flow holding too much undecided data (Suricata's
/// `APPLAYER_PROTO_DETECTION_SKIPPED`).
pub const DETECT_SKIPPED: u8 = 16;

/// Suricata's packet app-layer events (`app-layer-events.c`, `app-layer-event:<name>`
/// without a protocol) shrike raises, with their bits; names as Suricata writes them in EVE.
pub const PACKET_EVENTS: &[(u8, &str)] = &[
    (
        DETECT_ONLY_ONE_DIRECTION,
        "APPLAYER_DETECT_PROTOCOL_ONLY_ONE_DIRECTION",
    ),
    (
        DETECT_MISMATCH_BOTH_DIRECTIONS,
        "APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS",
    ),
    (DETECT_UNEXPECTED_PROTOCOL, "APPLAYER_UNEXPECTED_PROTOCOL"),
    (
        DETECT_NO_TLS_AFTER_STARTTLS,
        "APPLAYER_NO_TLS_AFTER_STARTTLS",
    ),
    (DETECT_SKIPPED, "APPLAYER_PROTO_DETECTION_SKIPPED"),
];

/// App-layer state of one flow.
#[derive(Debug, Default)]
pub struct AppFlow {
    /// Detected protocol (`UNKNOWN` until detection concludes; `FAILED` when it gave up).
    pub proto: AppProto,
    /// The protocol's parser, once detected.
    pub state: Option<Box<dyn AppParser>>,
    /// IP protocol of the flow.
    pub ip_proto: u8,
    detect: [DetectDir; 2],
    probe_buf: [Vec<u8>; 2],
    /// Next transaction id to log.
    log_next: u64,
    /// The flow's single record was logged (one-record protocols: TLS).
    flow_logged: bool,
    /// EVE `anomaly` bookkeeping: [`AppFlow::gen`] at the last drain.
    pub(crate) anomaly_gen: u64,
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
    /// An HTTP/1 `Upgrade: h2c` answered by 101: the flow turns HTTP/2 once its HTTP
    /// transactions are logged (Suricata's protocol change).
    h2c: Option<Box<crate::http2::H2cPending>>,
    /// Protocol-detection events ([`DETECT_ONLY_ONE_DIRECTION`] ...) not reported yet.
    pub(crate) detect_events: u8,
    /// The same events raised while the current packet was processed (Suricata's
    /// `p->app_layer_events`), for `app-layer-event:<name>` rules; cleared by
    /// [`AppFlow::begin_packet`].
    pkt_events: u8,
    /// Per direction: the protocol that direction's own detection found when it differs
    /// from the flow's (Suricata's `alproto_ts` / `alproto_tc` after a mismatch).
    dir_other: [AppProto; 2],
    /// The protocol before a protocol change (STARTTLS, HTTP CONNECT; Suricata's
    /// `alproto_orig`), else unknown.
    pub orig: AppProto,
    /// The protocol the change expected (`alproto_expect`; unknown: detect anew).
    pub expect: AppProto,
    /// Frames (to server, to client), once a parser made one ([`crate::frames`]).
    pub frames: Option<Box<FlowFrames>>,
    /// `filestore` matches of `tx` or flow scope: files opened later are stored too.
    pub store_orders: Option<Box<crate::files::StoreOrders>>,
    /// A TCP parser returned an error: the app layer is off for the rest of the flow
    /// (Suricata's `StreamTcpDisableAppLayer` from `AppLayerParserParse`). Data already
    /// handed over in the same step (both directions' data at detection) is still parsed,
    /// as Suricata parses the detected direction after the opposing side's error.
    parse_error: bool,
}

/// The frames of a flow.
#[derive(Debug, Default)]
pub struct FlowFrames {
    /// Per direction (to server, to client).
    pub dirs: [crate::frames::Frames; 2],
    /// Per direction: the `<proto>.stream` frame was opened.
    stream_opened: [bool; 2],
    /// Per direction: the stream offset past the last data or gap handed to the parser.
    seen_end: [u64; 2],
}

impl FlowFrames {
    /// The frames of direction `dir`.
    pub fn dir(&self, dir: Dir) -> &crate::frames::Frames {
        &self.dirs[di(dir)]
    }

    /// The frames of direction `dir`, mutable.
    pub fn dir_mut(&mut self, dir: Dir) -> &mut crate::frames::Frames {
        &mut self.dirs[di(dir)]
    }
}

impl AppFlow {
    /// The protocol-detection events raised since the last call (bits
    /// [`DETECT_ONLY_ONE_DIRECTION`], [`DETECT_MISMATCH_BOTH_DIRECTIONS`]), for EVE
    /// `anomaly` records with `layer` `proto_detect`.
    pub fn take_detect_events(&mut self) -> u8 {
        std::mem::take(&mut self.detect_events)
    }

    /// Detection found the data runs the other way (at most once per flow): the two
    /// directions' detection state trade places, as the caller swaps the flow.
    fn reverse(&mut self) {
        self.reversed = true;
        self.detect.swap(0, 1);
        self.probe_buf.swap(0, 1);
    }

    /// A new packet of the flow: the packet events of the last one are gone.
    pub fn begin_packet(&mut self) {
        self.pkt_events = 0;
    }

    /// The protocol-detection events the current packet raised ([`PACKET_EVENTS`] bits).
    pub fn packet_events(&self) -> u8 {
        self.pkt_events
    }

    /// Raises protocol-detection events: logged by the anomaly record, matched by rules on
    /// this packet.
    pub(crate) fn raise(&mut self, bits: u8) {
        self.detect_events |= bits;
        self.pkt_events |= bits;
    }

    /// Suricata's per-direction protocols as the flow record logs them (`app_proto_ts`,
    /// `app_proto_tc`; `EveAddAppProto` writes each only when it differs from `app_proto`):
    /// `failed` for a TCP direction whose detection gave up while the other one found the
    /// protocol (Suricata sets a direction `failed` only then, in `TCPProtoDetect`), the
    /// flow's protocol for one that found it, nothing otherwise. UDP flows report nothing.
    pub fn dir_protos(&self) -> [Option<&'static str>; 2] {
        let known = self.proto != AppProto::UNKNOWN && self.proto != AppProto::FAILED;
        if self.ip_proto != 6 || !known {
            return [None, None];
        }
        let mut out = [None, None];
        for (i, d) in self.detect.iter().enumerate() {
            out[i] = match d {
                DetectDir::Pending => None,
                DetectDir::Failed => Some(AppProto::FAILED.name()),
                DetectDir::Done if self.dir_other[i] != AppProto::UNKNOWN => {
                    Some(self.dir_other[i].name())
                }
                DetectDir::Done => Some(self.proto.name()),
            };
        }
        out
    }

    /// Suricata's `alproto_ts` (`to_server`) or `alproto_tc` for detection's
    /// `app-layer-protocol`: unknown while that direction's detection has not run (a TCP
    /// direction that saw no data yet), `failed` when it gave up, else what it found. UDP
    /// flows set both at once.
    pub fn dir_proto(&self, to_server: bool) -> AppProto {
        if self.ip_proto != 6 {
            return self.proto;
        }
        let i = usize::from(!to_server);
        match self.detect[i] {
            DetectDir::Pending => AppProto::UNKNOWN,
            DetectDir::Failed => AppProto::FAILED,
            DetectDir::Done if self.dir_other[i] != AppProto::UNKNOWN => self.dir_other[i],
            DetectDir::Done => self.proto,
        }
    }

    /// `app_proto_orig` and `app_proto_expected` of the flow record (Suricata's
    /// `EveAddAppProto`: each only when set and different from `app_proto`).
    pub fn change_protos(&self) -> [Option<&'static str>; 2] {
        let known = |p: AppProto| (p != AppProto::UNKNOWN && p != self.proto).then(|| p.name());
        [known(self.orig), known(self.expect)]
    }

    /// Suricata's detection of the direction that had not found the protocol yet, on the
    /// data it gets once the other direction found it (`TCPProtoDetect` with
    /// `alproto_otherdir` set): the same protocol ends it quietly, another protocol or
    /// none at all raises an event. The data still goes to the parser.
    fn detect_other_dir(&mut self, cfg: &ParserConfig, ctx: &FlowCtx, dir: Dir, data: &[u8]) {
        let d = di(dir);
        if self.detect[d] != DetectDir::Pending || data.is_empty() {
            return;
        }
        let b = &mut self.probe_buf[d];
        b.extend_from_slice(
            data.get(..PROBE_MAX.saturating_sub(b.len()))
                .unwrap_or(data),
        );
        let r = probe(cfg, ctx, dir, b, true);
        let full = b.len() >= PROBE_MAX;
        match r {
            Found::Proto(p) => {
                if p != self.proto {
                    self.raise(DETECT_MISMATCH_BOTH_DIRECTIONS);
                    self.dir_other[d] = p;
                }
                self.detect[d] = DetectDir::Done;
            }
            Found::NeedMore if !full => return,
            Found::No | Found::NeedMore => {
                self.raise(DETECT_ONLY_ONE_DIRECTION);
                self.detect[d] = DetectDir::Failed;
            }
        }
        self.probe_buf[d] = Vec::new();
    }

    /// Transactions complete in direction `dir` so far (a monotonic count). The worker asks
    /// the stream engine for raw inspection when it grows, as Suricata's parsers do on a
    /// completed request or response (`StreamTcpReassembleTriggerRawReassembly`).
    pub fn complete_in(&self, dir: Dir) -> u64 {
        self.state.as_deref().map_or(0, |p| p.complete_in(dir))
    }

    /// The flow's parser, once its protocol is known.
    pub fn parser(&self) -> Option<&dyn AppParser> {
        self.state.as_deref()
    }

    /// The parser as its concrete type (a protocol's own keywords).
    pub fn state_as<T: AppParser>(&self) -> Option<&T> {
        self.state.as_deref()?.as_any().downcast_ref::<T>()
    }

    /// The HTTP state, when the flow is HTTP.
    pub fn http(&self) -> Option<&HttpState> {
        self.state_as()
    }

    /// The DNS state, when the flow is DNS.
    pub fn dns(&self) -> Option<&DnsState> {
        self.state_as()
    }

    /// The TLS state, when the flow is TLS.
    pub fn tls(&self) -> Option<&TlsState> {
        self.state_as()
    }

    /// Whether the flow ended (no more data will come).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the flow's single record was logged (no more events are reported then).
    pub(crate) fn flow_logged(&self) -> bool {
        self.flow_logged
    }

    /// Next transaction id not yet logged; transactions before it may be freed.
    pub fn logged_before(&self) -> u64 {
        self.log_next
    }

    /// Detection tells that transactions below `upto` are complete and were inspected in
    /// direction `dir` (so they need not be kept for it).
    pub fn note_inspected(&self, dir: Dir, upto: u64) {
        let c = &self.inspected[di(dir)];
        c.set(c.get().max(upto));
    }

    /// The packet going `dir` was inspected and logged: the files of that direction that
    /// ended are pruned from detection and alerts (Suricata's `AppLayerParserTransactionsCleanup`
    /// runs `FilesPrune` on every transaction with files in the packet's direction).
    pub fn prune_files(&self, dir: Dir) {
        let Some(p) = self.parser() else {
            return;
        };
        thread_local! {
            static TXS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        TXS.with(|txs| {
            let Ok(mut txs) = txs.try_borrow_mut() else {
                return;
            };
            txs.clear();
            p.live_txs(dir, &mut txs);
            for &t in txs.iter() {
                p.files(t, dir, &mut |f| f.prune());
            }
        });
    }

    /// No rule inspects this flow's protocol in direction `dir`: none of its logged
    /// transactions need be kept for detection. Only once the flow has a protocol (before
    /// detection there are no transactions, and rules of the protocol found later may).
    pub fn note_no_rules(&self, dir: Dir) {
        if self.state.is_some() {
            self.note_inspected(dir, u64::MAX);
        }
    }
}

/// App-layer counters of one worker (Suricata's `app_layer.flow.*` and `app_layer.tx.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Protocols with [`crate::registry::Protocol::generic_stats`], by registry index:
    /// flows detected (`app_layer.flow.<name>`).
    pub flows: [u64; MAX_PROTOCOLS],
    /// ... transactions logged (`app_layer.tx.<name>`).
    pub txs: [u64; MAX_PROTOCOLS],
    /// ... flows whose parser gave up (`app_layer.error.<name>.parser`).
    pub parser_errors: [u64; MAX_PROTOCOLS],
    /// The same three for the UDP flows of protocols detected on both transports (Suricata
    /// names those counters `<name>_tcp` and `<name>_udp`, e.g. `krb5_udp`); the arrays
    /// above then hold their TCP flows.
    pub udp: [[u64; 3]; MAX_PROTOCOLS],
}

impl Default for AppStats {
    fn default() -> Self {
        AppStats {
            flow_http: 0,
            flow_tls: 0,
            flow_dns_tcp: 0,
            flow_dns_udp: 0,
            flow_failed_tcp: 0,
            flow_failed_udp: 0,
            tx_http: 0,
            tx_tls: 0,
            error_tls_parser: 0,
            tx_dns_tcp: 0,
            tx_dns_udp: 0,
            flows: [0; MAX_PROTOCOLS],
            txs: [0; MAX_PROTOCOLS],
            parser_errors: [0; MAX_PROTOCOLS],
            udp: [[0; 3]; MAX_PROTOCOLS],
        }
    }
}

/// Whether protocol `p` is counted per transport (`<name>_tcp` / `<name>_udp`): it is
/// detected on both.
fn per_transport(p: &crate::registry::Protocol) -> bool {
    !matches!(p.tcp, Detect::None) && !matches!(p.udp, Detect::None)
}

/// The name of a registry protocol in the `app_layer.*` counters. SIP's are per transport in
/// Suricata 8 and in the EVE schema (`sip_udp`, `sip_tcp`; 7.0 wrote `sip`, which the schema
/// refuses); shrike parses SIP over UDP.
fn counter_name(p: &crate::registry::Protocol) -> &'static str {
    // `ftp-data` likewise: the schema (and Suricata 8) name it `ftp_data`.
    match p.name {
        "sip" => "sip_udp",
        "ftp-data" => "ftp_data",
        // Likewise BitTorrent DHT (Suricata 7 writes `bittorrent-dht`).
        "bittorrent-dht" => "bittorrent_dht",
        n => n,
    }
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
        f("app_layer.expectations", expectations());
        let mut name = String::new();
        for (i, p) in PROTOCOLS.iter().enumerate() {
            if !p.generic_stats {
                continue;
            }
            let both = per_transport(p);
            for (kind, v, suffix) in [
                ("flow", self.flows[i], "_tcp"),
                ("tx", self.txs[i], "_tcp"),
                ("error", self.parser_errors[i], "_tcp"),
                ("flow", self.udp[i][0], "_udp"),
                ("tx", self.udp[i][1], "_udp"),
                ("error", self.udp[i][2], "_udp"),
            ] {
                if suffix == "_udp" && !both {
                    continue;
                }
                name.clear();
                name.push_str("app_layer.");
                name.push_str(kind);
                name.push('.');
                name.push_str(counter_name(p));
                if both {
                    name.push_str(suffix);
                }
                if kind == "error" {
                    name.push_str(".parser");
                }
                f(&name, v);
            }
        }
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
        for i in 0..MAX_PROTOCOLS {
            self.flows[i] += o.flows[i];
            self.txs[i] += o.txs[i];
            self.parser_errors[i] += o.parser_errors[i];
            for k in 0..3 {
                self.udp[i][k] += o.udp[i][k];
            }
        }
    }

    /// A flow was detected as `p` (`undo`: a flow counted before is taken back).
    fn flow(&mut self, p: AppProto, tcp: bool, undo: bool) {
        let c = match p {
            AppProto::HTTP => &mut self.flow_http,
            AppProto::TLS => &mut self.flow_tls,
            AppProto::DNS if tcp => &mut self.flow_dns_tcp,
            AppProto::DNS => &mut self.flow_dns_udp,
            p => match p.index() {
                Some(i) if !tcp && PROTOCOLS.get(i).is_some_and(|d| per_transport(d)) => {
                    &mut self.udp[i][0]
                }
                Some(i) => &mut self.flows[i],
                None => return,
            },
        };
        *c = if undo { c.saturating_sub(1) } else { *c + 1 };
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
    /// Parser settings.
    pub cfg: ParserConfig,
    /// EVE protocol record options.
    pub log: LogOptions,
    /// Write EVE protocol records in [`AppLayer::log_completed`].
    pub log_records: bool,
    /// Packet number to put in records written next (EVE `pcap_cnt`); set by the worker.
    pub pcap_cnt: u64,
    /// Direction of the packet whose records are written next (`None`: flow end); set by
    /// the worker.
    pub pkt_dir: Option<Dir>,
    /// Stream offsets (to server, to client) of the next data handed to
    /// [`AppLayer::on_tcp_data`] / [`AppLayer::on_tcp_gap`] (the TCP session's app progress);
    /// set by the worker before each call, for frames.
    pub stream_off: [u64; 2],
    /// Counters.
    pub stats: AppStats,
}

/// Most announced connections kept (the oldest goes first).
pub const MAX_EXPECTED: usize = 1024;

/// Most announced connections kept per address pair, the oldest of the pair going first
/// (Suricata's `EXPECTATION_MAX_LEVEL`): a PORT flood on one FTP session cannot push out
/// the other sessions' expectations.
pub const MAX_EXPECTED_PER_PAIR: usize = 10;

/// Connections announced and not yet taken (Suricata's `app_layer.expectations` gauge).
pub fn expectations() -> u64 {
    EXPECTED_LEN.load(std::sync::atomic::Ordering::Relaxed) as u64
}

/// Connections announced by flows (FTP data), oldest first, shared by the workers: the
/// announced flow may hash to another worker (Suricata's expectations are global too).
static EXPECTED: std::sync::Mutex<Vec<([[u8; 16]; 2], crate::registry::Expect)>> =
    std::sync::Mutex::new(Vec::new());
/// Entries in [`EXPECTED`] (read without the lock on every new flow's data).
static EXPECTED_LEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

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

fn on_port(ports: &[u16], ctx: &FlowCtx) -> bool {
    ports.contains(&ctx.server_port) || ports.contains(&ctx.client_port)
}

/// Suricata-style detection: content patterns on any port (the protocols whose ports match
/// the server port first, then the rest, each group in registry order), then the probing
/// parsers of the protocols registered for either port.
fn probe(cfg: &ParserConfig, ctx: &FlowCtx, dir: Dir, data: &[u8], tcp: bool) -> Found {
    probe_rdir(cfg, ctx, dir, data, tcp, &mut false)
}

/// [`probe`], also setting `reversed` when the protocol's probing parser found the data
/// runs the other way (Suricata's `rdir`; UDP reverses the flow on it).
fn probe_rdir(
    cfg: &ParserConfig,
    ctx: &FlowCtx,
    dir: Dir,
    data: &[u8],
    tcp: bool,
    reversed: &mut bool,
) -> Found {
    let modes = &cfg.modes;
    let detect = |i: usize, p: &crate::registry::Protocol| {
        if modes.get(i) == Some(&crate::registry::MODE_DISABLED) || !cfg.enabled(p.name) {
            Detect::None
        } else if tcp {
            p.tcp
        } else {
            p.udp
        }
    };
    let mut need_more = false;
    let mut verdict = |i: usize, r: Probe| match r {
        Probe::Yes => Some(Found::Proto(AppProto::from_index(i))),
        Probe::YesReversed => {
            *reversed = true;
            Some(Found::Proto(AppProto::from_index(i)))
        }
        Probe::NeedMore => {
            need_more = true;
            None
        }
        Probe::No => None,
    };
    let custom = |i: usize| cfg.ports.get(i).and_then(|t| t[usize::from(!tcp)].as_ref());
    for own_port in [true, false] {
        for (i, p) in PROTOCOLS.iter().enumerate() {
            let Detect::Pattern(f) = detect(i, p) else {
                continue;
            };
            let own = match custom(i) {
                Some(c) => c.matches(ctx.server_port, ctx.client_port),
                None => p.ports.contains(&ctx.server_port),
            };
            if own != own_port {
                continue;
            }
            if let Some(found) = verdict(i, f(dir, data)) {
                return found;
            }
        }
    }
    for (i, p) in PROTOCOLS.iter().enumerate() {
        let Detect::Port(f) = detect(i, p) else {
            continue;
        };
        // Suricata registers these probing parsers for the flow's destination port only
        // (`detection-ports: dp`): a UDP flow whose first datagram comes from the service
        // port is not probed (DNS included: a response from port 53 first is `failed`).
        let either = tcp;
        let port_ok = match custom(i) {
            // The configured `detection-ports` replace the protocol's own.
            Some(c) if either => {
                c.matches(ctx.server_port, ctx.client_port)
                    || c.matches(ctx.client_port, ctx.server_port)
            }
            Some(c) => c.matches(ctx.server_port, ctx.client_port),
            None if either => on_port(p.ports, ctx),
            None => p.ports.contains(&ctx.server_port),
        };
        if !port_ok {
            continue;
        }
        if let Some(found) = verdict(i, f(dir, data)) {
            return found;
        }
    }
    // Suricata's pattern matcher concludes a direction without a match only once its
    // data reaches the deepest pattern of that direction (`PMGetProtoInspect`: 17 bytes to
    // the server, 8 to the client with Suricata 7.0.10's patterns, measured): shorter TCP
    // data keeps the direction undecided.
    if need_more || (tcp && data.len() < pm_max_depth(dir)) {
        Found::NeedMore
    } else {
        Found::No
    }
}

/// The data a TCP direction needs before Suricata's pattern-based detection gives up on it
/// (the deepest registered pattern of the direction).
fn pm_max_depth(dir: Dir) -> usize {
    match dir {
        Dir::ToServer => 17,
        Dir::ToClient => 8,
    }
}

impl AppLayer {
    /// A new per-worker context with Suricata's default settings.
    pub fn new() -> Self {
        AppLayer {
            cfg: ParserConfig::default(),
            log: LogOptions::default(),
            log_records: true,
            pcap_cnt: 0,
            pkt_dir: None,
            stream_off: [0; 2],
            stats: AppStats::default(),
        }
    }

    /// A context with the given parser settings.
    pub fn with_config(http: std::sync::Arc<HttpConfig>, dns: DnsConfig, tls: TlsConfig) -> Self {
        AppLayer {
            cfg: ParserConfig {
                http,
                dns,
                tls,
                ..ParserConfig::default()
            },
            ..Self::new()
        }
    }

    fn start(&mut self, f: &mut AppFlow, proto: AppProto, tcp: bool) {
        f.proto = proto;
        let parse = proto
            .index()
            .is_none_or(|i| self.cfg.modes.get(i) != Some(&crate::registry::MODE_DETECTION_ONLY));
        f.state = proto
            .protocol()
            .filter(|_| parse)
            .map(|p| (p.new_parser)(&self.cfg, tcp));
        self.stats.flow(proto, tcp, false);
    }

    fn fail_dir(&mut self, f: &mut AppFlow, dir: Dir, tcp: bool) {
        f.detect[di(dir)] = DetectDir::Failed;
        if !tcp || f.detect.iter().all(|d| *d == DetectDir::Failed) {
            f.probe_buf = Default::default();
        }
        if f.detect.iter().all(|d| *d == DetectDir::Failed) && f.proto == AppProto::UNKNOWN {
            f.proto = AppProto::FAILED;
            if tcp {
                self.stats.flow_failed_tcp += 1;
            } else {
                self.stats.flow_failed_udp += 1;
            }
        }
    }

    /// Suricata's `TCPProtoDetectCheckBailConditions`: on an established TCP flow whose
    /// protocol is still undecided, detection gives up (the flow's protocol is `failed`,
    /// `APPLAYER_PROTO_DETECTION_SKIPPED` raised) when a direction holds more than twice its
    /// limit, or more than its limit while its own detection has concluded and the other
    /// direction has sent nothing or is still undecided on a little data.
    fn check_bail(&mut self, f: &mut AppFlow, ctx: &FlowCtx) {
        let [lim_ts, lim_tc] = ctx.bail_limits;
        if f.proto != AppProto::UNKNOWN || lim_ts == 0 || lim_tc == 0 {
            return;
        }
        let [ts, tc] = ctx.held;
        let [dts, dtc] = f.detect;
        let failed = |x: DetectDir| x == DetectDir::Failed;
        let pending = |x: DetectDir| x == DetectDir::Pending;
        let skip = tc > 2 * lim_tc
            || ts > 2 * lim_ts
            || (failed(dts) && ts > lim_ts && tc == 0)
            || (failed(dtc) && tc > lim_tc && ts == 0)
            || (tc > lim_tc && pending(dts) && ts > 0 && failed(dtc))
            || (ts > lim_ts && pending(dtc) && tc > 0 && failed(dts));
        if !skip {
            return;
        }
        f.raise(DETECT_SKIPPED);
        f.detect = [DetectDir::Failed; 2];
        f.probe_buf = Default::default();
        f.proto = AppProto::FAILED;
        self.stats.flow_failed_tcp += 1;
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
        crate::file_range::set_now(ctx.ts_ns / 1_000_000_000);
        let f = touch(flow, ctx);
        if f.proto == AppProto::UNKNOWN && self.take_expected_flow(f, ctx) {
            // What came before the announcement (kept while undecided) goes first.
            let mut err = false;
            for (i, d) in [Dir::ToServer, Dir::ToClient].into_iter().enumerate() {
                let b = std::mem::take(&mut f.probe_buf[i]);
                if !b.is_empty() {
                    let off = self.buffered_off(d, dir, data.len(), b.len());
                    err |= feed(f, d, &b, Some(off));
                }
            }
            err |= feed(f, dir, data, Some(self.stream_off[di(dir)]));
            self.count_parser_error(f, err);
            return false;
        }
        match f.proto {
            AppProto::FAILED => {}
            AppProto::UNKNOWN => {
                let d = di(dir);
                if f.detect[d] == DetectDir::Failed {
                    // Kept (bounded) for the parser in case the other direction is
                    // recognised: Suricata's stream keeps a direction's data until the
                    // protocol is known (an SMTP server's greeting comes first).
                    let b = &mut f.probe_buf[d];
                    b.extend_from_slice(
                        data.get(..PROBE_MAX.saturating_sub(b.len()))
                            .unwrap_or(data),
                    );
                    self.check_bail(f, ctx);
                    return false;
                }
                let first = f.probe_buf[d].is_empty();
                let found = if f.probe_buf[d].is_empty() {
                    probe(&self.cfg, ctx, dir, data, true)
                } else {
                    let mut b = std::mem::take(&mut f.probe_buf[d]);
                    b.extend_from_slice(
                        data.get(..PROBE_MAX.saturating_sub(b.len()))
                            .unwrap_or(data),
                    );
                    let r = probe(&self.cfg, ctx, dir, &b, true);
                    f.probe_buf[d] = b;
                    r
                };
                match found {
                    // Suricata's `smb3_probe_tcp`: an encrypted SMB3 record on a flow whose
                    // first packet came from port 445 (to another port) runs from the server:
                    // a midstream flow is reversed, as for any data found the other way.
                    Found::Proto(p)
                        if p == AppProto::SMB
                            && first
                            && ctx.midstream
                            && ctx.client_port == 445
                            && ctx.server_port != 445
                            && data.get(4..8) == Some(&b"\xfdSMB"[..])
                            && !f.reversed
                            && f.detect[1 - d] == DetectDir::Pending
                            && f.probe_buf[1 - d].is_empty() =>
                    {
                        f.reverse();
                        return true;
                    }
                    Found::Proto(p) => {
                        Self::check_expected(f, p);
                        self.start(f, p, true);
                        if let Some(s) = f.state.as_deref_mut() {
                            s.flow_addrs(&ctx.addrs[0], &ctx.addrs[1]);
                        }
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
                        f.detect[d] = DetectDir::Done;
                        // The other direction's data, held while undecided, meets its own
                        // detection now (Suricata's `TCPProtoDetectTriggerOpposingSide`).
                        if !ob.is_empty() {
                            if f.detect[other] == DetectDir::Failed {
                                f.raise(DETECT_ONLY_ONE_DIRECTION);
                            } else {
                                f.detect_other_dir(&self.cfg, ctx, odir, &ob);
                            }
                        }
                        let mut err = false;
                        if !ob.is_empty() {
                            let off = self.buffered_off(odir, dir, data.len(), ob.len());
                            err |= feed(f, odir, &ob, Some(off));
                        }
                        if mine.is_empty() {
                            err |= feed(f, dir, data, Some(self.stream_off[d]));
                        } else {
                            let off = self.stream_off[d] + data.len() as u64;
                            err |= feed(f, dir, &mine, Some(off.saturating_sub(mine.len() as u64)));
                        }
                        self.count_parser_error(f, err);
                    }
                    Found::No
                        if first && ctx.midstream && reverse_fits(&self.cfg, f, ctx, dir, data) =>
                    {
                        f.reverse();
                        return true;
                    }
                    Found::No => {
                        if f.probe_buf[d].is_empty() {
                            f.probe_buf[d].extend_from_slice(data.get(..PROBE_MAX).unwrap_or(data));
                        }
                        self.fail_dir(f, dir, true)
                    }
                    Found::NeedMore => {
                        if f.probe_buf[d].is_empty() {
                            f.probe_buf[d].extend_from_slice(data);
                        }
                        if f.probe_buf[d].len() >= PROBE_MAX {
                            self.fail_dir(f, dir, true);
                        }
                    }
                }
                self.check_bail(f, ctx);
            }
            _ => {
                self.switch_proto(f, true);
                f.detect_other_dir(&self.cfg, ctx, dir, data);
                if let Some(h) = f.h2c.as_deref_mut() {
                    h.push(dir, data);
                    return false;
                }
                let err = feed_ctx(f, ctx, dir, data, self.stream_off[di(dir)]);
                self.count_parser_error(f, err);
                if f.proto == AppProto::HTTP && dir == Dir::ToClient {
                    f.h2c = f
                        .http()
                        .and_then(|h| crate::http2::H2cPending::check(h, data));
                }
            }
        }
        self.collect_expected(f, ctx);
        false
    }

    /// Keeps the connections the flow's parser announced.
    fn collect_expected(&mut self, f: &mut AppFlow, ctx: &FlowCtx) {
        let Some(p) = f.state.as_deref_mut() else {
            return;
        };
        let mut new = Vec::new();
        p.take_expected(&mut new);
        if new.is_empty() {
            return;
        }
        let mut g = EXPECTED.lock().unwrap_or_else(|e| e.into_inner());
        let pair = |a: &[[u8; 16]; 2]| *a == ctx.addrs || [a[1], a[0]] == ctx.addrs;
        for e in new {
            if g.iter().filter(|(a, _)| pair(a)).count() >= MAX_EXPECTED_PER_PAIR {
                if let Some(i) = g.iter().position(|(a, _)| pair(a)) {
                    g.remove(i);
                }
            } else if g.len() >= MAX_EXPECTED {
                g.remove(0);
            }
            g.push((ctx.addrs, e));
        }
        EXPECTED_LEN.store(g.len(), std::sync::atomic::Ordering::Relaxed);
    }

    /// A new flow a parser announced (same two addresses, the announced server port): its
    /// parser takes the flow.
    fn take_expected_flow(&mut self, f: &mut AppFlow, ctx: &FlowCtx) -> bool {
        if EXPECTED_LEN.load(std::sync::atomic::Ordering::Relaxed) == 0 {
            return false;
        }
        let mut g = EXPECTED.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = g.iter().position(|(a, e)| {
            (*a == ctx.addrs || [a[1], a[0]] == ctx.addrs) && e.port == ctx.server_port
        }) else {
            return false;
        };
        let (_, e) = g.remove(i);
        EXPECTED_LEN.store(g.len(), std::sync::atomic::Ordering::Relaxed);
        drop(g);
        f.proto = e.proto;
        f.state = Some(e.parser);
        f.detect = [DetectDir::Done; 2];
        self.stats.flow(e.proto, true, false);
        true
    }

    /// The parser asked for a protocol change (SMTP/FTP `STARTTLS`/`AUTH TLS`, HTTP
    /// `CONNECT`): detection runs anew on the data that follows, expecting the protocol the
    /// parser named (Suricata's `AppLayerRequestProtocolChange`: another protocol raises
    /// `APPLAYER_UNEXPECTED_PROTOCOL`, and after STARTTLS `APPLAYER_NO_TLS_AFTER_STARTTLS`),
    /// with fresh transaction bookkeeping.
    fn switch_proto(&mut self, f: &mut AppFlow, tcp: bool) {
        let Some(p) = f.state.as_deref().and_then(|s| s.switch_to()) else {
            return;
        };
        // Suricata's `AppLayerRequestProtocolChange`.
        f.orig = f.proto;
        f.expect = p;
        f.log_next = 0;
        f.flow_logged = false;
        f.inspected = Default::default();
        if !tcp {
            f.detect = [DetectDir::Done; 2];
            self.start(f, p, tcp);
            return;
        }
        f.proto = AppProto::UNKNOWN;
        f.state = None;
        f.detect = [DetectDir::Pending; 2];
        f.probe_buf = Default::default();
        f.dir_other = [AppProto::UNKNOWN; 2];
    }

    /// Detection found `p` after a protocol change that expected another protocol.
    fn check_expected(f: &mut AppFlow, p: AppProto) {
        if f.orig == AppProto::UNKNOWN || f.expect == AppProto::UNKNOWN || p == f.expect {
            return;
        }
        f.raise(DETECT_UNEXPECTED_PROTOCOL);
        if f.expect == AppProto::TLS {
            f.raise(DETECT_NO_TLS_AFTER_STARTTLS);
        }
    }

    /// Suricata's `app_layer.error.<proto>.parser`: the parser gave up on the flow's data.
    fn count_parser_error(&mut self, f: &mut AppFlow, err: bool) {
        if !err {
            return;
        }
        if f.ip_proto == 6 {
            f.parse_error = true;
        }
        match f.proto {
            AppProto::TLS => self.stats.error_tls_parser += 1,
            p => {
                if let Some(i) = p.index() {
                    if f.ip_proto == 17 && PROTOCOLS.get(i).is_some_and(|d| per_transport(d)) {
                        self.stats.udp[i][2] += 1;
                    } else {
                        self.stats.parser_errors[i] += 1;
                    }
                }
            }
        }
    }

    /// The TCP stream of direction `dir` reached its reassembly depth: the parser's files
    /// of that direction end truncated (see [`AppParser::truncate`]).
    pub fn on_tcp_depth(&mut self, flow: &mut Option<Box<AppFlow>>, dir: Dir) {
        if let Some(p) = flow.as_deref_mut().and_then(|f| f.state.as_deref_mut()) {
            p.truncate(dir);
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
        if f.proto == AppProto::UNKNOWN {
            self.fail_dir(f, dir, true);
        } else if let Some(p) = f.state.as_deref_mut() {
            p.gap(dir, len);
            if let Some(fr) = f.frames.as_deref_mut() {
                let d = di(dir);
                fr.seen_end[d] = fr.seen_end[d].max(self.stream_off[d] + len);
            }
        }
    }

    /// The stream offset of `len` bytes of direction `d` held while the protocol was
    /// undecided: they end where the direction's stream was consumed (`dir`, the direction
    /// of the data at hand, `now` bytes long, is consumed up to that data's end).
    fn buffered_off(&self, d: Dir, dir: Dir, now: usize, len: usize) -> u64 {
        let end = if d == dir {
            self.stream_off[di(d)] + now as u64
        } else {
            self.stream_off[di(d)]
        };
        end.saturating_sub(len as u64)
    }

    /// One UDP datagram's payload in direction `dir`. Returns `true` when protocol detection
    /// reversed the flow (the caller swaps the flow's client and server; this datagram runs
    /// the other way).
    pub fn on_udp(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        ctx: &FlowCtx,
        dir: Dir,
        payload: &[u8],
    ) -> bool {
        if payload.is_empty() {
            return false;
        }
        let f = touch(flow, ctx);
        match f.proto {
            // Suricata 7 (AppLayerHandleUdp): each direction gets one detection attempt; when
            // the flow's first datagram is not recognised the flow is `failed` at once, and a
            // protocol recognised later in the other direction still takes over (the flow was
            // already counted, as failed).
            AppProto::UNKNOWN | AppProto::FAILED => {
                if f.detect[di(dir)] == DetectDir::Failed {
                    return false;
                }
                let first = f.proto == AppProto::UNKNOWN;
                let mut rev = false;
                if let Found::Proto(p) = probe_rdir(&self.cfg, ctx, dir, payload, false, &mut rev) {
                    // Suricata's `AppLayerHandleUdp`: `PacketSwap` and `FlowSwap` when the
                    // probing parser says the data runs the other way.
                    let rev = rev && !f.reversed;
                    let pdir = if rev {
                        f.reverse();
                        match dir {
                            Dir::ToServer => Dir::ToClient,
                            Dir::ToClient => Dir::ToServer,
                        }
                    } else {
                        dir
                    };
                    self.start(f, p, false);
                    if !first {
                        self.stats.flow(p, false, true);
                    }
                    self.udp_parse(f, pdir, payload);
                    return rev;
                } else {
                    f.detect[di(dir)] = DetectDir::Failed;
                    if first {
                        f.proto = AppProto::FAILED;
                        self.stats.flow_failed_udp += 1;
                    }
                }
            }
            _ => self.udp_parse(f, dir, payload),
        }
        false
    }

    /// The outer datagram of a UDP tunnel (VXLAN, Geneve, Teredo): Suricata's UDP app layer
    /// runs on it too and recognises nothing, so the flow is `failed` (counted once).
    pub fn on_udp_tunnel(&mut self, flow: &mut Option<Box<AppFlow>>, ctx: &FlowCtx, dir: Dir) {
        let f = touch(flow, ctx);
        if f.proto == AppProto::UNKNOWN {
            f.proto = AppProto::FAILED;
            self.stats.flow_failed_udp += 1;
        }
        f.detect[di(dir)] = DetectDir::Failed;
    }

    fn udp_parse(&mut self, f: &mut AppFlow, dir: Dir, payload: &[u8]) {
        let Some(p) = f.state.as_deref_mut() else {
            return;
        };
        let before = p.tx_count();
        let err = feed(f, dir, payload, None);
        let Some(p) = f.state.as_deref_mut() else {
            return;
        };
        if f.proto == AppProto::DNS {
            self.stats.tx_dns_udp += p.tx_count().saturating_sub(before);
        }
        self.count_parser_error(f, err);
    }

    /// The flow is over (timeout, shutdown, eviction): finish what can be finished.
    pub fn on_close(&mut self, flow: &mut Option<Box<AppFlow>>, _ctx: &FlowCtx) {
        let Some(f) = flow.as_deref_mut() else {
            return;
        };
        f.gen = f.gen.wrapping_add(1);
        f.closed = true;
        if let Some(p) = f.state.as_deref_mut() {
            p.close();
        }
        // The `<proto>.stream` frames end with the stream (Suricata sets their length on
        // `STREAM_EOF`).
        if let Some(fr) = f.frames.as_deref_mut() {
            for d in 0..2 {
                let end = fr.seen_end[d];
                if let Some(x) = fr.dirs[d]
                    .list
                    .iter_mut()
                    .find(|x| x.ty == crate::frames::STREAM_TYPE && x.len < 0)
                {
                    x.len = i64::try_from(end.saturating_sub(x.offset)).unwrap_or(i64::MAX);
                }
            }
        }
    }

    /// Write the EVE protocol records of the transactions completed since the last call,
    /// then free what detection and logging no longer need. The worker calls it after
    /// inspecting each packet of a flow with app-layer state, and after
    /// [`AppLayer::on_close`].
    pub fn log_completed(
        &mut self,
        flow: &mut Option<Box<AppFlow>>,
        info: &AlertFlowInfo,
        ts_ns: u64,
        out: &mut shrike_output::EveOutput,
    ) {
        let Some(f) = flow.as_deref_mut() else {
            return;
        };
        let Some(p) = f.state.as_deref_mut() else {
            return;
        };
        // Files that came after a `tx`/flow-scope `filestore` match are stored too, before
        // they are logged.
        if let Some(o) = f.store_orders.as_deref() {
            o.apply(p);
        }
        let orig_proto = f.orig;
        let mut c = LogCtx {
            rec: RecordCtx {
                info,
                ts_ns,
                ip_proto: f.ip_proto,
                pcap_cnt: self.pcap_cnt,
            },
            out,
            opts: &self.log,
            write: self.log_records,
            closed: f.closed,
            next: &mut f.log_next,
            inspected: f.inspected[0].get().min(f.inspected[1].get()),
            flow_logged: &mut f.flow_logged,
            logged: 0,
            pkt_dir: self.pkt_dir,
            orig_proto,
        };
        p.log(&mut c);
        let n = c.logged;
        let all_logged = f.log_next >= p.tx_count();
        match f.proto {
            AppProto::HTTP => self.stats.tx_http += n,
            AppProto::DNS if f.ip_proto == 6 => self.stats.tx_dns_tcp += n,
            AppProto::DNS | AppProto::TLS => {}
            p => {
                if let Some(i) = p.index() {
                    if f.ip_proto == 17 && PROTOCOLS.get(i).is_some_and(|d| per_transport(d)) {
                        self.stats.udp[i][1] += n;
                    } else {
                        self.stats.txs[i] += n;
                    }
                }
            }
        }
        if f.ip_proto == 6 {
            // What the old protocol had is logged: switch now if it asked to.
            self.switch_proto(f, true);
        }
        if all_logged && f.h2c.is_some() {
            self.switch_h2c(f);
        }
    }

    /// The HTTP/1 transactions of an `Upgrade: h2c` flow are logged: the flow is HTTP/2
    /// from here on, with the upgrade request as stream 1 (Suricata's
    /// `HTTP2MimicHttp1Request`) and the data seen since. Suricata's HTTP/2 state is a new
    /// one: its transaction ids start again from 0 (the upgrade request's stream is
    /// transaction 0, in `http`, `fileinfo` and alerts), so nothing inspected or logged of
    /// HTTP/1 carries over.
    fn switch_h2c(&mut self, f: &mut AppFlow) {
        let Some(h) = f.h2c.take() else {
            return;
        };
        let Some(p2) = AppProto::from_name("http2") else {
            return;
        };
        let base = 0;
        let (st, bufs) = h.into_parser(base, &self.cfg);
        f.proto = p2;
        f.state = Some(st);
        f.log_next = base;
        f.inspected = Default::default();
        self.stats.flow(p2, true, true);
        let mut err = false;
        for (dir, b) in [(Dir::ToServer, &bufs[0]), (Dir::ToClient, &bufs[1])] {
            if !b.is_empty() {
                let off = self.buffered_off(dir, dir, 0, b.len());
                err |= feed(f, dir, b, Some(off));
            }
        }
        self.count_parser_error(f, err);
    }
}

/// Whether `data`, seen first in `dir` of a midstream flow, fits a protocol as the other
/// direction while that direction has seen nothing yet (Suricata's reverse-direction
/// pattern match for midstream sessions).
fn reverse_fits(cfg: &ParserConfig, f: &AppFlow, ctx: &FlowCtx, dir: Dir, data: &[u8]) -> bool {
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
    matches!(probe(cfg, &rctx, other, data, true), Found::Proto(_))
}

/// Feed data to the flow's parser. Returns `true` when the parser gave up on this data
/// (a parser error, counted once per flow as Suricata's parser stops there).
///
/// `off` is the offset of `data` in its TCP stream (for frames); `None` on UDP (the frames
/// of the direction's previous datagram are dropped).
fn feed(f: &mut AppFlow, dir: Dir, data: &[u8], off: Option<u64>) -> bool {
    if f.parse_error {
        return false;
    }
    let AppFlow {
        state,
        frames,
        proto,
        ..
    } = f;
    let Some(p) = state.as_deref_mut() else {
        return false;
    };
    let mask = crate::frames::enabled(*proto);
    if mask == 0 {
        return p.parse(dir, data);
    }
    let fr = frames.get_or_insert_with(Box::default);
    let d = di(dir);
    match off {
        Some(o) => {
            if mask & (1 << crate::frames::STREAM_TYPE) != 0 && !fr.stream_opened[d] {
                fr.stream_opened[d] = true;
                fr.dirs[d].add(crate::frames::STREAM_TYPE, o, -1);
            }
            fr.seen_end[d] = fr.seen_end[d].max(o + data.len() as u64);
        }
        None => fr.dirs[d].clear(),
    }
    let mut fc = crate::frames::FrameCtx {
        offset: off.unwrap_or(0),
        mask,
        frames: &mut fr.dirs[d],
    };
    p.parse_frames(dir, data, &mut fc)
}

/// [`feed`], telling the parser the flow's addresses first.
fn feed_ctx(f: &mut AppFlow, ctx: &FlowCtx, dir: Dir, data: &[u8], off: u64) -> bool {
    if let Some(p) = f.state.as_deref_mut() {
        p.flow_addrs(&ctx.addrs[0], &ctx.addrs[1]);
    }
    feed(f, dir, data, Some(off))
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
            bail_limits: [0; 2],
            held: [0; 2],
            addrs: [[0; 16]; 2],
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
            bail_limits: [0; 2],
            held: [0; 2],
            ..ctx(80, 40000, 6)
        };
        let mut f = None;
        assert!(al.on_tcp_data(&mut f, &c, Dir::ToServer, resp));
        assert_eq!(f.as_ref().unwrap().proto, AppProto::UNKNOWN);
        // The caller swapped the flow: the same data comes again as to-client data.
        let swapped = FlowCtx {
            client_port: 40000,
            server_port: 80,
            ..c
        };
        assert!(!al.on_tcp_data(&mut f, &swapped, Dir::ToClient, resp));
        assert_eq!(f.as_ref().unwrap().proto, AppProto::HTTP);
        assert!(!al.on_tcp_data(&mut f, &swapped, Dir::ToServer, req));
        assert_eq!(f.as_ref().unwrap().http().unwrap().tx_count(), 2);
        // Data that fits neither way, or a second candidate: never reversed.
        let mut g = None;
        assert!(!al.on_tcp_data(&mut g, &c, Dir::ToServer, b"\x00\x01junk"));
        let mut h = None;
        assert!(al.on_tcp_data(&mut h, &c, Dir::ToServer, resp));
        assert!(!al.on_tcp_data(&mut h, &c, Dir::ToServer, b"\x00\x01junk"));
    }

    /// Suricata's `TCPProtoDetectCheckBailConditions`: a direction past its limit while the
    /// other sent nothing, or past twice its limit, ends detection (`failed`, with
    /// `APPLAYER_PROTO_DETECTION_SKIPPED` on that packet); below the limits it goes on.
    #[test]
    fn detection_bails_out_on_unbalanced_undecided_data() {
        let junk = vec![0u8; 60_000];
        let mut al = AppLayer::new();
        let run = |al: &mut AppLayer, f: &mut Option<Box<AppFlow>>, held: [u64; 2], d: Dir| {
            let c = FlowCtx {
                bail_limits: [100_000; 2],
                held,
                ..ctx(40000, 2121, 6)
            };
            if let Some(a) = f.as_deref_mut() {
                a.begin_packet();
            }
            al.on_tcp_data(f, &c, d, &junk);
        };
        // Server data only: 60 000 held, then 120 000 (past the limit, client silent).
        let mut f = None;
        run(&mut al, &mut f, [0, 60_000], Dir::ToClient);
        assert_eq!(f.as_ref().unwrap().proto, AppProto::UNKNOWN);
        run(&mut al, &mut f, [0, 120_000], Dir::ToClient);
        let a = f.as_deref_mut().unwrap();
        assert_eq!(a.proto, AppProto::FAILED);
        assert_eq!(a.packet_events(), DETECT_SKIPPED);
        assert_eq!(a.take_detect_events(), DETECT_SKIPPED);
        // The client still undecided on a little data (a request line not complete yet),
        // the server's past the limit: ends it too.
        let mut g = None;
        let c = FlowCtx {
            bail_limits: [100_000; 2],
            held: [2, 0],
            ..ctx(40000, 2121, 6)
        };
        al.on_tcp_data(&mut g, &c, Dir::ToServer, b"GE");
        run(&mut al, &mut g, [2, 60_000], Dir::ToClient);
        assert_eq!(g.as_ref().unwrap().proto, AppProto::UNKNOWN);
        run(&mut al, &mut g, [2, 120_000], Dir::ToClient);
        assert_eq!(g.as_ref().unwrap().proto, AppProto::FAILED);
        // No limits (not established, or UDP): never.
        let mut h = None;
        let c = ctx(40000, 2121, 6);
        for _ in 0..5 {
            al.on_tcp_data(&mut h, &c, Dir::ToClient, &junk);
        }
        assert_eq!(h.as_ref().unwrap().proto, AppProto::UNKNOWN);
    }

    /// Suricata's `smb3_probe_tcp`: an encrypted SMB3 record first seen from port 445 on a
    /// midstream flow reverses it; from the client's port, or with a SYN seen, it does not.
    #[test]
    fn smb3_transform_from_port_445_reverses_midstream() {
        let mut rec = vec![0u8, 0, 0, 60];
        rec.extend_from_slice(b"\xfdSMB");
        rec.resize(64, 0x41);
        let mut al = AppLayer::new();
        let from_server = FlowCtx {
            midstream: true,
            ..ctx(445, 38166, 6)
        };
        let mut f = None;
        assert!(al.on_tcp_data(&mut f, &from_server, Dir::ToServer, &rec));
        let swapped = FlowCtx {
            midstream: true,
            ..ctx(38166, 445, 6)
        };
        assert!(!al.on_tcp_data(&mut f, &swapped, Dir::ToClient, &rec));
        assert_eq!(f.as_ref().unwrap().proto, AppProto::SMB);
        for c in [swapped, ctx(445, 38166, 6)] {
            let mut g = None;
            assert!(!al.on_tcp_data(&mut g, &c, Dir::ToServer, &rec));
            assert_eq!(g.as_ref().unwrap().proto, AppProto::SMB);
        }
    }

    #[test]
    fn detection_table() {
        let hello = [22u8, 3, 1, 0, 5, 1, 0, 0, 1, 0];
        let cases: &[(u16, &[u8], &[u8], AppProto)] = &[
            (
                8081,
                b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
                b"",
                AppProto::HTTP,
            ),
            (
                80,
                b"GET / HTTP/1.1\r\n\r\n",
                b"HTTP/1.1 200 OK\r\n\r\n",
                AppProto::HTTP,
            ),
            (8443, &hello, b"", AppProto::TLS),
            (443, &hello, b"", AppProto::TLS),
            (
                80,
                b"\x00\x01garbage, long enough",
                b"\x02\x03more bytes",
                AppProto::FAILED,
            ),
            // Shorter than the deepest pattern of its direction: still undecided.
            (80, b"\x00\x01garbage", b"\x02\x03more", AppProto::UNKNOWN),
            (
                2222,
                b"SSH-2.0-x\r\n",
                b"SSH-2.0-y\r\n",
                AppProto::from_index(3),
            ),
            (
                2222,
                b"\x00SSH-2.0-x\r\n and more",
                b"\x01junk and more",
                AppProto::FAILED,
            ),
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
    fn ftp_announces_its_data_connection() {
        let mut al = AppLayer::new();
        let addrs = [[1; 16], [2; 16]];
        let c = FlowCtx {
            addrs,
            ..ctx(40000, 21, 6)
        };
        let mut ctl = None;
        al.on_tcp_data(&mut ctl, &c, Dir::ToClient, b"220 (x)\r\n");
        al.on_tcp_data(&mut ctl, &c, Dir::ToServer, b"USER a\r\nPASV\r\n");
        al.on_tcp_data(
            &mut ctl,
            &c,
            Dir::ToClient,
            b"331 ok\r\n227 Entering Passive Mode (2,2,2,2,4,1).\r\n",
        );
        al.on_tcp_data(&mut ctl, &c, Dir::ToServer, b"RETR f.txt\r\n");
        assert_eq!(ctl.as_ref().unwrap().proto.name(), "ftp");
        // Another pair of addresses, or another port: not the announced connection.
        let mut other = None;
        let o = FlowCtx {
            addrs: [[1; 16], [3; 16]],
            ..ctx(40001, 1025, 6)
        };
        al.on_tcp_data(&mut other, &o, Dir::ToClient, b"data");
        assert_ne!(other.as_ref().unwrap().proto.name(), "ftp-data");
        let d = FlowCtx {
            addrs,
            ..ctx(40001, 1025, 6)
        };
        let mut data = None;
        al.on_tcp_data(&mut data, &d, Dir::ToClient, b"file bytes");
        let f = data.unwrap();
        assert_eq!(f.proto.name(), "ftp-data");
        let st = f.state_as::<crate::ftp::data::FtpDataState>().unwrap();
        assert_eq!(st.filename, b"f.txt");
        assert!(st.retr);
        // Taken once.
        let mut again = None;
        al.on_tcp_data(&mut again, &d, Dir::ToClient, b"\x00\x01");
        assert_ne!(again.unwrap().proto.name(), "ftp-data");
    }

    #[test]
    fn http_split_method_detected() {
        let mut al = AppLayer::new();
        let mut f = None;
        let c = ctx(40000, 9999, 6);
        al.on_tcp_data(&mut f, &c, Dir::ToServer, b"GE");
        assert_eq!(f.as_ref().unwrap().proto, AppProto::UNKNOWN);
        al.on_tcp_data(&mut f, &c, Dir::ToServer, b"T /x HTTP/1.0\r\n\r\n");
        let f = f.unwrap();
        assert_eq!(f.proto, AppProto::HTTP);
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
        assert_eq!(f.unwrap().proto, AppProto::FAILED);
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
        assert_eq!(fl.proto, AppProto::DNS);
        assert_eq!(fl.dns().unwrap().tx_count(), 1);
        let mut f2 = None;
        al.on_udp(&mut f2, &ctx(5555, 5353, 17), Dir::ToServer, &q);
        al.on_udp(&mut f2, &ctx(5555, 5353, 17), Dir::ToClient, &q);
        assert_eq!(f2.unwrap().proto, AppProto::FAILED);
    }

    #[test]
    fn udp_probing_parsers_run_on_the_server_port_only() {
        // SNMPv1 get-request.
        let m = [
            0x30, 0x26, 0x02, 0x01, 0x00, 0x04, 0x06, b'p', b'u', b'b', b'l', b'i', b'c', 0xa0,
            0x19, 0x02, 0x01, 0x01, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30, 0x0c,
            0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x05, 0x00, 0x05, 0x00,
        ];
        let mut al = AppLayer::new();
        let mut f = None;
        al.on_udp(&mut f, &ctx(40000, 161, 17), Dir::ToServer, &m);
        assert_eq!(f.as_ref().unwrap().proto.name(), "snmp");
        // The flow's first datagram comes from port 161: Suricata does not probe it.
        let mut f = None;
        al.on_udp(&mut f, &ctx(161, 40000, 17), Dir::ToServer, &m);
        al.on_udp(&mut f, &ctx(161, 40000, 17), Dir::ToClient, &m);
        assert_eq!(f.unwrap().proto, AppProto::FAILED);
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
        assert_eq!(f.as_ref().unwrap().proto, AppProto::FAILED);
        assert_eq!(al.stats.flow_failed_udp, 1);
        // Junk first towards port 53, then a recognisable datagram the other way: the
        // protocol takes over, the flow stays counted as failed only.
        let mut f = None;
        let c = ctx(5555, 53, 17);
        al.on_udp(&mut f, &c, Dir::ToServer, b"\x01\x02");
        assert_eq!(f.as_ref().unwrap().proto, AppProto::FAILED);
        al.on_udp(&mut f, &c, Dir::ToClient, &q);
        assert_eq!(f.as_ref().unwrap().proto, AppProto::DNS);
        assert_eq!(al.stats.flow_failed_udp, 2);
        assert_eq!(al.stats.flow_dns_udp, 0);
    }
}
