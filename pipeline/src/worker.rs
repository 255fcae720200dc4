//! A detect worker: owns its flow table (and the table's timer wheel), its EVE output and its
//! counters. Nothing here is shared with other workers on the packet path.

use std::fs::File;
use std::io::Write;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shrike_capture::{LinkType, Timestamp};
use shrike_detect::output::{
    write_eve_alert, write_eve_tagged_packet, write_fast_alert, AlertContext, AlertFlowInfo,
};
use shrike_detect::{DetectThread, Engine, FlowDetect, FlowInput, Packet, StreamData};
use shrike_flow::{Direction, EndReason, Flow, FlowKey, FlowState, FlowTable};
use shrike_output::eve::addr::Ipv6Style;
use shrike_output::eve::community_id::{icmp_ports, CommunityId};
use shrike_output::eve::flow::{
    write_flow_record, FlowEndReason, FlowIcmp, FlowRecord, FlowState as EveFlowState, MetadataFn,
    TcpFlowInfo,
};
use shrike_output::eve::netflow::{netflow_dirs, write_netflow_record, NetflowDir, TtlRange};
use shrike_output::{EveOutput, EventKind};
use shrike_packet::decode::{flags, PacketKind, PacketMeta};

use crate::anomaly::AnomalyLog;
use crate::config::SensorConfig;
use crate::dispatch::Entry;
use crate::session::{flow_ctx, FlowExt, Sessions};
use crate::stats::{Snapshot, StatsBoard};
use shrike_app::layer::AppFlow;
use shrike_app::{AppProto, Dir};
use shrike_stream::{FlowTimeoutState, StreamEventSet, TcpState};

/// Per-flow state the worker keeps beside the table's own fields.
#[derive(Debug, Default)]
pub struct FlowData {
    /// The detection engine's per-flow state (TCP handshake, flowbits, IP-only flags).
    detect: FlowDetect,
    /// TCP session, app-layer state, ICMP codes, alerted mark (boxed: allocated for TCP
    /// flows, flows with app-layer state, ICMP flows and flows that alerted).
    ext: Option<Box<FlowExt>>,
}

impl FlowData {
    fn ext(&mut self) -> &mut FlowExt {
        self.ext.get_or_insert_with(Box::default)
    }

    /// The flow's app-layer state, if any.
    fn app(&self) -> Option<&AppFlow> {
        self.ext.as_ref().and_then(|x| x.app.as_deref())
    }
}

/// Bytes one flow costs in the worker's table (slab slot, index, timer), engine state
/// included: must stay within 256.
#[cfg(test)]
pub fn flow_footprint() -> usize {
    shrike_flow::table::flow_footprint() + std::mem::size_of::<Flow<FlowData>>()
        - std::mem::size_of::<Flow<()>>()
}

/// What a worker needs to run detection.
pub struct WorkerDetect {
    pub engine: Arc<Engine>,
    /// fast.log, opened for appending (each buffer is one write).
    pub fast: Option<File>,
    /// Alerts so far, for the progress reporter (bumped once per batch).
    pub alerts: Arc<AtomicU64>,
}

/// A worker's detection state.
struct Detect {
    engine: Arc<Engine>,
    thread: DetectThread,
    fast: Option<File>,
    fast_buf: Vec<u8>,
    alerts: Arc<AtomicU64>,
    /// Alerts logged since the last progress bump.
    pending: u64,
}

const FAST_FLUSH_BYTES: usize = 64 * 1024;

/// Wheel tag of the worker's EVE/fast.log flush timer (`output.eve.flush-interval`).
const AUX_FLUSH: u32 = 1;

impl Detect {
    fn flush_fast(&mut self) {
        if self.fast_buf.is_empty() {
            return;
        }
        if let Some(f) = self.fast.as_mut() {
            if let Err(e) = f.write_all(&self.fast_buf) {
                eprintln!("shrike: warning: fast.log: {e}");
                self.fast = None;
            }
        }
        self.fast_buf.clear();
    }
}

/// pcap LINKTYPE number of a link type (EVE `packet_info.linktype`).
fn linktype_number(l: LinkType) -> u32 {
    match l {
        LinkType::Null => 0,
        LinkType::Ethernet => 1,
        LinkType::Raw => 12,
        LinkType::Loop => 108,
        LinkType::LinuxSll => 113,
        LinkType::Ipv4 => 228,
        LinkType::Ipv6 => 229,
        LinkType::LinuxSll2 => 276,
        LinkType::Ppp => 9,
        LinkType::CiscoHdlc => 104,
        LinkType::Other(v) => v,
    }
}

/// Worker counters that are not owned by a detect component.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    pkts: u64,
    bytes: u64,
    non_ip: u64,
    flow_records: u64,
}

pub struct Worker {
    id: usize,
    flows: FlowTable<FlowData>,
    out: EveOutput,
    board: Arc<StatsBoard>,
    counters: Counters,
    ipv6: Ipv6Style,
    /// eve-log `community-id`: the seed, when on.
    community_seed: Option<u16>,
    /// Packet time of the newest packet (the clock of file mode).
    now: Timestamp,
    last_expire_ms: u64,
    flush_every_ms: u64,
    next_flush_ms: u64,
    /// File mode: EVE and fast.log are flushed on the wall clock (time of the last flush),
    /// not on packet time, which in a sparse capture passes `flush-interval` on nearly every
    /// packet.
    wall_flush: Option<Instant>,
    last_publish: Instant,
    detect: Option<Detect>,
    /// Live rule reload: the engine slot this worker follows (see [`Worker::check_engine`]).
    engine_watch: Option<crate::reload::SlotWatch>,
    /// TCP stream engine and app layer.
    sess: Sessions,
    /// Which flow-end records are written.
    logs: FlowLogs,
    /// EVE `anomaly` records.
    anomaly: AnomalyLog,
}

/// The flow-end record types the eve-log asks for.
#[derive(Clone, Copy, Debug)]
struct FlowLogs {
    /// `flow` records.
    flow: bool,
    /// `netflow` records (one per direction).
    netflow: bool,
    /// `frame` records (per packet).
    frame: bool,
}

impl Worker {
    pub fn new(
        id: usize,
        cfg: &SensorConfig,
        out: EveOutput,
        board: Arc<StatsBoard>,
        _seed: u64,
    ) -> Worker {
        let flush_every_ms = (cfg.output.eve.flush_interval * 1000.0).max(1.0) as u64;
        let anomaly = AnomalyLog::new(&cfg.output.eve, &out);
        Worker {
            id,
            flows: {
                let mut t = FlowTable::new(&cfg.detect.flow, id as u8);
                t.set_emergency_syn_only(cfg.detect.stream.midstream);
                t.set_synack_client_is_receiver(
                    cfg.detect.stream.midstream || cfg.detect.stream.async_oneside,
                );
                t
            },
            out,
            board,
            counters: Counters::default(),
            ipv6: Ipv6Style::default(),
            community_seed: cfg
                .output
                .eve
                .community_id
                .then_some(cfg.output.eve.community_id_seed),
            now: Timestamp(0),
            last_expire_ms: 0,
            flush_every_ms,
            next_flush_ms: 0,
            wall_flush: None,
            last_publish: Instant::now(),
            detect: None,
            engine_watch: None,
            sess: Sessions::new(cfg, 1),
            logs: FlowLogs {
                flow: cfg.output.eve.logs_flow(),
                netflow: cfg.output.eve.logs_netflow(),
                frame: {
                    let on = cfg.output.eve.logs_frame();
                    if on {
                        // Suricata's `FrameConfigEnableAll`: every frame type is made.
                        shrike_app::frames::enable_all();
                    }
                    on
                },
            },
            anomaly,
        }
    }

    /// File mode: flush outputs by wall clock (see [`Worker::wall_tick`]) instead of packet
    /// time.
    pub fn file_mode(mut self) -> Worker {
        self.wall_flush = Some(Instant::now());
        self
    }

    /// File mode, between packets (end of a batch, an idle wait, every few hundred packets
    /// of the single runmode): hand buffered EVE and fast.log output on once
    /// `flush-interval` of wall-clock time has passed since the last flush. A full buffer
    /// is handed on whenever it fills, so the write size is the buffer size except for this.
    pub fn wall_tick(&mut self) {
        let Some(last) = self.wall_flush else {
            return;
        };
        if last.elapsed() >= Duration::from_millis(self.flush_every_ms) {
            self.wall_flush = Some(Instant::now());
            self.flush_outputs();
        }
    }

    fn flush_outputs(&mut self) {
        self.out.flush();
        if let Some(d) = self.detect.as_mut() {
            d.flush_fast();
            // Single runmode has no batches: report alerts here too.
            if d.pending > 0 {
                d.alerts.fetch_add(d.pending, Ordering::Relaxed);
                d.pending = 0;
            }
        }
    }

    /// This worker is one of `workers`: the stream memcaps are shared between them.
    pub fn with_share(mut self, cfg: &SensorConfig, workers: usize) -> Worker {
        self.sess = Sessions::new(cfg, workers);
        if let Some(d) = self.detect.as_ref() {
            self.sess.add_file_needs(d.engine.file_needs());
        }
        self
    }

    /// Follow `slot` for live rule reloads (checked once per batch, never per packet).
    pub fn with_engine_slot(
        mut self,
        slot: Option<std::sync::Arc<crate::reload::EngineSlot>>,
    ) -> Worker {
        self.engine_watch = slot.map(|slot| crate::reload::SlotWatch { slot, gen: 0 });
        self
    }

    /// Live rule reload: when a newer engine was published, switch to it: a new detection
    /// context continuing this one's counters, and every flow's detection state rebound
    /// (flowbits/flowints by name, IP-only flags cleared; see `shrike_detect::reload`).
    /// One atomic load when nothing changed.
    pub fn check_engine(&mut self) {
        let Some(w) = self.engine_watch.as_mut() else {
            return;
        };
        let Some((gen, engine)) = w.slot.newer_than(w.gen) else {
            return;
        };
        w.gen = gen;
        if let Some(d) = self.detect.as_mut() {
            let remap = shrike_detect::VarRemap::new(&d.engine, &engine);
            let old = std::mem::replace(&mut d.thread, engine.thread());
            d.thread = engine.thread_after_reload(old);
            self.sess.add_file_needs(engine.file_needs());
            d.engine = engine;
            self.flows
                .for_each_mut(&mut |f| f.data.detect.rebind(&remap));
        }
        w.slot.ack(self.id, gen);
    }

    /// File mode with several workers: order host-state decisions with `gate`.
    pub fn with_gate(
        mut self,
        gate: Option<Arc<dyn shrike_detect::host_state::HostGate>>,
    ) -> Worker {
        if let (Some(d), Some(g)) = (self.detect.as_mut(), gate) {
            d.thread.set_gate(g);
        }
        self
    }

    /// Run detection in this worker (`None`: decode and flows only).
    pub fn with_detect(mut self, det: Option<WorkerDetect>) -> Worker {
        if let Some(d) = det.as_ref() {
            self.sess.add_file_needs(d.engine.file_needs());
        }
        self.detect = det.map(|d| Detect {
            thread: d.engine.thread(),
            engine: d.engine,
            fast: d.fast,
            fast_buf: Vec::with_capacity(FAST_FLUSH_BYTES),
            alerts: d.alerts,
            pending: 0,
        });
        self
    }

    /// Process one packet (decoded by the reader).
    #[inline]
    pub fn process(&mut self, e: &Entry<PacketMeta>, data: &[u8]) {
        if let Some(d) = self.detect.as_mut() {
            d.thread.set_order(e.order);
        }
        self.advance_clock(e.ts);
        if e.tick {
            return;
        }
        self.counters.pkts += 1;
        self.counters.bytes += data.len() as u64;
        let m = &e.meta;
        let fragment = m.has(flags::FRAGMENT);
        // A tunnel's outer packet has a flow only when a UDP tunnel (VXLAN) carried the
        // inner one, as in Suricata: GRE and IP-in-IP roots are inspected without one.
        // And as in Suricata, only TCP, UDP, ICMP, ICMPv6 and SCTP packets whose header
        // decoded and ESP get a flow (its decoders call `FlowSetupPacket`): not IGMP, GRE, IPv6
        // without a next header or any other protocol.
        // IPv4 carrying IPv6 (6in4) is the one tunnel whose outer packet has a flow.
        let six_in_four = m.proto == 41 && m.ip_version() == 4;
        let flow_proto = match m.proto {
            6 | 17 | 1 | 58 | 132 => m.kind == PacketKind::L4,
            50 => true,
            _ => six_in_four,
        };
        // An ICMPv4 error message creates no flow (Suricata's `FlowCreateCheck`): it joins
        // the flow it belongs to (the quoted packet's, see `FlowKey::from_meta`) if there is
        // one, else it is inspected without a flow.
        let orphan_icmp_error = flow_proto
            && m.proto == 1
            && m.ip_version() == 4
            && matches!(m.icmp_type(), Some(3 | 4 | 5 | 11 | 12))
            && self.flows.find(e.hash, &FlowKey::from_meta(m).0).is_none();
        let flowless = fragment
            || (m.is_tunnel_root() && m.kind != PacketKind::L4 && !six_in_four)
            || (m.is_ip() && !flow_proto)
            || orphan_icmp_error;
        if !m.is_ip() || flowless {
            // Decoder-event rules still see packets that did not decode to IP; IP fragments
            // are inspected as packets without a flow (their datagram follows once
            // reassembled).
            if !flowless {
                self.counters.non_ip += 1;
            }
            if flowless || !m.events.is_empty() {
                self.inspect_flowless(e, data);
            }
            return;
        }
        let (key, dir) = FlowKey::from_meta(m);
        let tcp = if m.proto == 6 { m.tcp_flags } else { 0 };
        // TCP session reuse: a SYN starting a new session on a finished one's tuple.
        let reuse = (tcp & 0x02 != 0)
            .then(|| self.flows.find(e.hash, &key))
            .flatten()
            .filter(|&h| {
                self.flows.get(h).is_some_and(|f| {
                    let fdir = if f.to_server(dir) {
                        Dir::ToServer
                    } else {
                        Dir::ToClient
                    };
                    let ssn = f.data.ext.as_deref().map(|x| &x.tcp);
                    self.sess.stream.is_session_reuse(ssn, m, fdir)
                })
            });
        let mut end = Ender {
            out: &mut self.out,
            sess: &mut self.sess,
            counters: &mut self.counters,
            ipv6: self.ipv6,
            detect: self.detect.as_mut(),
            logs: self.logs,
            anomaly: self.anomaly,
        };
        if let Some(h) = reuse {
            self.flows.reuse(h, &mut |f, r| end.end(f, r, e.ts));
        }
        let Some((h, created)) = self.flows.packet(
            e.hash,
            key,
            dir,
            e.ts,
            // A tunnel's inner packet counts from its own header, as Suricata's does.
            data.len().saturating_sub(m.packet_start()) as u32,
            tcp,
            FlowData::default,
            &mut |f, r| end.end(f, r, e.ts),
        ) else {
            // A full table with no flow to spare (`flow.get_used_failed`), or emergency mode
            // refusing the packet a flow: inspected as a packet without a flow, as Suricata
            // does. Its TCP flags still count (`tcp.syn` …, decoder counters in Suricata).
            if m.proto == 6 && m.kind == PacketKind::L4 && !m.is_tunnel_root() {
                self.sess.stream.count_tcp_flags(m);
            }
            self.inspect_flowless(e, data);
            return;
        };
        let Some(flow) = self.flows.get_mut(h) else {
            return;
        };
        flow.note_ttl(dir, m.ttl);
        if created {
            flow.vlan = (m.vlan, m.vlan_count.min(3));
            if let Some(seed) = self.community_seed {
                let id = community_id(flow, seed, m.icmp_type());
                flow.data.ext().community_id = id;
            }
        }
        let mut to_server = flow.to_server(dir);
        if m.is_icmp() {
            if let (Some(t), Some(c)) = (m.icmp_type(), m.icmp_code()) {
                let x = flow.data.ext();
                if to_server {
                    x.icmp.get_or_insert((t, c));
                } else {
                    x.icmp_reply.get_or_insert((t, c));
                }
            }
        }
        let fdir = if to_server {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let mut tcp_established = None;
        // The flow state the TCP session asks for (set on the table's lists at the end).
        let mut tcp_flow_state = None;
        // The packet's TCP direction and whether its data went into the stream.
        let mut stream_side: Option<(Dir, bool, StreamEventSet)> = None;
        let mut stream_events = StreamEventSet::EMPTY;
        let mut reversed = false;
        if let Some(a) = flow.data.ext.as_mut().and_then(|x| x.app.as_deref_mut()) {
            a.begin_packet();
        }
        match m.proto {
            // A tunnel root's payload is the tunnel: no stream, no app layer.
            6 if m.kind == PacketKind::L4 && !m.is_tunnel_root() => {
                let ctx = flow_ctx(flow, e.ts.0);
                let x = flow.data.ext.get_or_insert_with(Box::default);
                let was = x.tcp.state();
                let r =
                    self.sess
                        .tcp_packet(x, m, data, fdir, &ctx, (e.ts.0 / 1_000_000_000) as u32);
                let now = x.tcp.state();
                stream_events = r.events;
                reversed = self.sess.take_reversed();
                if now != TcpState::None {
                    tcp_established = Some(was >= TcpState::Established);
                    let added = r.added;
                    stream_side = Some((r.tcp_dir, added, r.events));
                    // State-dependent timeouts: the session's state picks the flow timeout.
                    flow.state = match x.tcp.timeout_state() {
                        FlowTimeoutState::New => FlowState::New,
                        FlowTimeoutState::Established => FlowState::Established,
                        FlowTimeoutState::Closed => FlowState::Closed,
                    };
                    tcp_flow_state = Some(flow.state);
                }
            }
            // A UDP tunnel's root (VXLAN, Geneve, Teredo) still meets protocol detection, which
            // fails on it: Suricata runs its UDP app layer on the outer packet too.
            17 if m.kind == PacketKind::L4 && m.is_tunnel_root() => {
                let ctx = flow_ctx(flow, e.ts.0);
                self.sess.udp_tunnel_root(&mut flow.data.ext, &ctx, fdir);
            }
            17 if m.kind == PacketKind::L4 => {
                let payload = m.payload(data);
                if !payload.is_empty() {
                    let ctx = flow_ctx(flow, e.ts.0);
                    reversed = self
                        .sess
                        .udp_packet(&mut flow.data.ext, &ctx, fdir, payload);
                }
            }
            _ => {}
        }
        if reversed {
            // Protocol detection found the data runs the other way: this packet's direction
            // turns with the flow's.
            reverse_flow(flow);
            to_server = !to_server;
            if let Some(s) = stream_side.as_mut() {
                s.0 = match s.0 {
                    Dir::ToServer => Dir::ToClient,
                    Dir::ToClient => Dir::ToServer,
                };
            }
        }
        if let Some(d) = self.detect.as_mut() {
            let pkt = Packet {
                meta: m,
                data,
                ts: e.ts,
            };
            let FlowData { detect, ext } = &mut flow.data;
            let app = ext.as_ref().and_then(|x| x.app.as_deref());
            let input = FlowInput {
                state: detect,
                to_server,
                pkts_toserver: flow.pkts[0],
                pkts_toclient: flow.pkts[1],
                tcp_established,
                app,
                age_secs: age_secs(flow.first_ts, e.ts),
            };
            let mut consumed = 0;
            let alerted = match (stream_side, ext.as_deref()) {
                (Some((tdir, added, events)), Some(x)) => {
                    let w = self.sess.stream.raw_window(&x.tcp, tdir);
                    let window = if w.ready { w.data } else { &[] };
                    consumed = window.len();
                    let sd = StreamData {
                        window,
                        added,
                        pseudo: false,
                        events,
                        sizes: Some(x.tcp.stream_sizes()),
                        session: Some(&x.tcp),
                        dir: Some(tdir),
                        eof: x.tcp.is_eof(),
                    };
                    !d.engine
                        .inspect_with_stream(&pkt, Some(input), sd, &mut d.thread)
                        .is_empty()
                }
                _ => !d
                    .engine
                    .inspect(&pkt, Some(input), &mut d.thread)
                    .is_empty(),
            };
            if let (Some((tdir, _, _)), Some(x)) = (stream_side, flow.data.ext.as_mut()) {
                if consumed > 0 {
                    x.tcp.raw_consume(tdir, consumed);
                }
            }
            // `filestore` matches ask the flow's parser for files (before they are logged).
            let store = shrike_app::files::store();
            if let (false, Some(store)) = (d.thread.file_stores().is_empty(), store) {
                if let Some(x) = flow.data.ext.as_deref_mut() {
                    // Suricata's `TcpSessionSetReassemblyDepth(FileReassemblyDepth())`: the
                    // file store's `stream-depth` (0: unlimited) when larger.
                    let global = self.sess.stream.config().reassembly.depth;
                    x.tcp.raise_app_depth(store.depth, global);
                    if let Some(a) = x.app.as_deref_mut() {
                        if let Some(p) = a.state.as_deref_mut() {
                            for r in d.thread.file_stores() {
                                shrike_app::files::apply_filestore(p, r.tx, r.dirs, r.scope, r.sid);
                            }
                        }
                        for r in d.thread.file_stores() {
                            if r.scope != shrike_app::files::StoreScope::File {
                                a.store_orders
                                    .get_or_insert_with(Box::default)
                                    .add(r.tx, r.dirs, r.scope);
                            }
                        }
                    }
                }
            }
            if alerted || d.thread.tagged() {
                if alerted {
                    flow.data.ext().alerted = true;
                }
                let app = flow.data.app();
                let ctx = AlertContext {
                    pkt,
                    pcap_cnt: e.seq,
                    linktype: linktype_number(e.link),
                    flow: Some(alert_flow(flow, to_server)),
                    app_proto: app.map(|a| a.proto.name()),
                    app,
                    flow_vars: flow.data.detect.vars(),
                    pkt_vars: &[],
                    ipv6: self.ipv6,
                    tcp: flow.data.ext.as_deref().map(|x| &x.tcp),
                };
                log_alerts(d, &mut self.out, &ctx);
            }
        } else if let Some(x) = flow.data.ext.as_deref_mut() {
            // No rules: nothing inspects the raw stream (Suricata sets
            // STREAMTCP_STREAM_FLAG_DISABLE_RAW when the rule group has no stream rules), so
            // reassembly keeps only what the app layer has not consumed, not the whole stream
            // up to the depth; and no logged transaction is kept for detection.
            if let Some((tdir, _, _)) = stream_side {
                x.tcp.set_raw_disabled(tdir);
            }
            if let Some(a) = x.app.as_deref() {
                a.note_no_rules(Dir::ToServer);
                a.note_no_rules(Dir::ToClient);
            }
        }
        if self.logs.frame && flow.data.app().is_some_and(|a| a.frames.is_some()) {
            let ctx = AlertContext {
                pkt: Packet {
                    meta: m,
                    data,
                    ts: e.ts,
                },
                pcap_cnt: e.seq,
                linktype: linktype_number(e.link),
                flow: Some(alert_flow(flow, to_server)),
                app_proto: None,
                app: flow.data.app(),
                flow_vars: None,
                pkt_vars: &[],
                ipv6: self.ipv6,
                tcp: flow.data.ext.as_deref().map(|x| &x.tcp),
            };
            shrike_detect::output::write_eve_frames(&mut self.out, &ctx, stream_side.map(|s| s.0));
        }
        let packet_anomalies = !(m.events.is_empty() && stream_events.is_empty());
        let app_anomalies = flow.data.app().is_some_and(|a| a.anomalies_pending());
        if (packet_anomalies && self.anomaly.wants_packet())
            || (app_anomalies && self.anomaly.wants_app())
        {
            let ctx = AlertContext {
                pkt: Packet {
                    meta: m,
                    data,
                    ts: e.ts,
                },
                pcap_cnt: e.seq,
                linktype: linktype_number(e.link),
                flow: Some(alert_flow(flow, to_server)),
                app_proto: None,
                app: None,
                flow_vars: flow.data.detect.vars(),
                pkt_vars: &[],
                ipv6: self.ipv6,
                tcp: None,
            };
            let engine = self.detect.as_ref().map(|d| &*d.engine);
            let (a, out) = (&self.anomaly, &mut self.out);
            a.packet(out, &ctx, &m.events, stream_events, engine);
            if let Some(app) = flow.data.ext.as_mut().and_then(|x| x.app.as_deref_mut()) {
                a.app(out, &ctx, app, engine);
            }
        }
        if flow.data.app().is_some() {
            let mut info = alert_flow(flow, to_server);
            // Records written now carry this packet's VLAN ids, as Suricata's header.
            info.vlan = (m.vlan, m.vlan_count.min(3));
            if let Some(x) = flow.data.ext.as_mut() {
                self.sess.app.pcap_cnt = e.seq;
                self.sess.app.pkt_dir = Some(if to_server {
                    shrike_app::Dir::ToServer
                } else {
                    shrike_app::Dir::ToClient
                });
                self.sess
                    .app
                    .log_completed(&mut x.app, &info, e.ts.0, &mut self.out);
            }
        }
        if let Some((tdir, _, _)) = stream_side {
            prune_frames(flow, tdir);
        }
        if let Some(a) = flow.data.app() {
            a.prune_files(if to_server {
                shrike_app::Dir::ToServer
            } else {
                shrike_app::Dir::ToClient
            });
        }
        if let Some(s) = tcp_flow_state {
            self.flows.set_state(h, s);
        }
    }

    /// Detection and packet anomalies of a packet without a flow (not IP, a fragment, a
    /// tunnel root, or no flow to be had in a full table).
    fn inspect_flowless(&mut self, e: &Entry<PacketMeta>, data: &[u8]) {
        let m = &e.meta;
        if let Some(d) = self.detect.as_mut() {
            let pkt = Packet {
                meta: m,
                data,
                ts: e.ts,
            };
            let alerts = d.engine.inspect(&pkt, None, &mut d.thread);
            if !alerts.is_empty() {
                let ctx = AlertContext::flowless(pkt, e.seq, linktype_number(e.link), self.ipv6);
                log_alerts(d, &mut self.out, &ctx);
            }
        }
        if !m.events.is_empty() && self.anomaly.wants_packet() {
            let pkt = Packet {
                meta: m,
                data,
                ts: e.ts,
            };
            let ctx = AlertContext::flowless(pkt, e.seq, linktype_number(e.link), self.ipv6);
            let engine = self.detect.as_ref().map(|d| &*d.engine);
            let none = StreamEventSet::EMPTY;
            self.anomaly
                .packet(&mut self.out, &ctx, &m.events, none, engine);
        }
    }

    /// No packet for a while (live capture): let the timers run on the wall clock.
    pub fn idle(&mut self, now: Timestamp) {
        self.advance_clock(now);
    }

    /// Packet time moves on: run the flow timeouts and the EVE flush timer.
    #[inline]
    fn advance_clock(&mut self, ts: Timestamp) {
        if ts <= self.now {
            return;
        }
        self.now = ts;
        let now_ms = ts.as_millis();
        if now_ms != self.last_expire_ms {
            self.last_expire_ms = now_ms;
            if self.next_flush_ms == 0 && self.wall_flush.is_none() {
                // First packet: arm the EVE flush timer on the wheel.
                self.next_flush_ms = now_ms + self.flush_every_ms;
                self.flows.schedule_aux(self.next_flush_ms, AUX_FLUSH);
            }
            if self.flows.next_deadline_ms().is_some_and(|d| d <= now_ms) {
                let mut end = Ender {
                    out: &mut self.out,
                    sess: &mut self.sess,
                    counters: &mut self.counters,
                    ipv6: self.ipv6,
                    detect: self.detect.as_mut(),
                    logs: self.logs,
                    anomaly: self.anomaly,
                };
                self.flows.expire(ts, &mut |f, r| end.end(f, r, ts));
            }
            let mut flush = false;
            for tag in self.flows.take_aux() {
                flush |= tag == AUX_FLUSH;
            }
            if flush {
                // The wheel fired `flush-interval`: hand partly filled buffers on.
                self.flush_outputs();
                self.next_flush_ms = now_ms + self.flush_every_ms;
                self.flows.schedule_aux(self.next_flush_ms, AUX_FLUSH);
            }
        }
    }

    /// End of a batch: publish stats now and then (wall clock, never per packet).
    pub fn batch_done(&mut self) {
        self.check_engine();
        self.wall_tick();
        if let Some(d) = self.detect.as_mut() {
            if d.pending > 0 {
                d.alerts.fetch_add(d.pending, Ordering::Relaxed);
                d.pending = 0;
            }
        }
        if self.last_publish.elapsed() >= Duration::from_millis(500) {
            self.publish();
        }
    }

    fn publish(&mut self) {
        self.last_publish = Instant::now();
        let mut s = Snapshot::default();
        self.flows.stats.visit(&mut |k, v| s.add(k, v));
        s.add("shrike.worker.pkts", self.counters.pkts);
        s.add("shrike.worker.bytes", self.counters.bytes);
        s.add("shrike.worker.flow_records", self.counters.flow_records);
        // Records written and dropped by type (not EVE stats names: summary and -v only).
        self.out
            .stats()
            .visit(&mut |k, v| s.add(&format!("shrike.{k}"), v));
        if let Some(d) = &self.detect {
            d.thread.visit_stats(&mut |k, v| s.add(k, v));
        }
        self.sess.stream.stats.visit(&mut |k, v| s.add(k, v));
        self.sess.app.stats.visit(&mut |k, v| s.add(k, v));
        self.board.publish(self.id, s, self.now.0);
    }

    /// End of input: every remaining flow is logged (reason "shutdown"), output is closed.
    pub fn finish(mut self) {
        // Off the packet path now: wait for the writer rather than drop flow records.
        self.out.block_all();
        let now = self.now;
        let mut end = Ender {
            out: &mut self.out,
            sess: &mut self.sess,
            counters: &mut self.counters,
            ipv6: self.ipv6,
            detect: self.detect.as_mut(),
            logs: self.logs,
            anomaly: self.anomaly,
        };
        self.flows.drain(&mut |f, r| end.end(f, r, now));
        self.batch_done();
        if let Some(d) = self.detect.as_mut() {
            d.flush_fast();
        }
        self.publish();
        let _ = self.out.close();
    }
}

/// What a flow leaving the table goes through: the stream releases what it holds, the app
/// layer closes and logs, then the flow record is written.
struct Ender<'a> {
    out: &'a mut EveOutput,
    sess: &'a mut Sessions,
    counters: &'a mut Counters,
    ipv6: Ipv6Style,
    /// Detection, for what the final stream flush released (raw stream and transactions).
    detect: Option<&'a mut Detect>,
    logs: FlowLogs,
    /// EVE `anomaly` records.
    anomaly: AnomalyLog,
}

impl Ender<'_> {
    fn end(&mut self, mut f: Flow<FlowData>, reason: EndReason, now: Timestamp) {
        let ts = if reason == EndReason::Shutdown {
            now.max(f.last_ts)
        } else {
            now
        };
        if f.data.ext.is_some() {
            let ctx = flow_ctx(&f, ts.0);
            let info = alert_flow(&f, true);
            let end_infos = [info, alert_flow(&f, false)];
            let (pkts, proto) = (f.pkts, f.key.proto);
            let FlowData { ext, .. } = &mut f.data;
            // The flow-end pseudo packet that carries the app layer's last work: the last
            // TCP direction whose data reached it (Suricata logs the anomalies there).
            let mut app_dir = None;
            if let Some(x) = ext.as_deref_mut() {
                let gen = |x: &FlowExt| x.app.as_deref().map(|a| a.gen);
                let mut seen = gen(x);
                self.sess.end(x, &ctx, &mut |x, tdir| {
                    if gen(x) != seen {
                        seen = gen(x);
                        app_dir = Some((tdir == Dir::ToServer) != x.tcp.is_swapped());
                    }
                });
            }
            if self.sess.take_reversed() {
                reverse_flow(&mut f);
            }
            let flow_age = age_secs(f.first_ts, f.last_ts);
            if let Some(x) = f.data.ext.as_mut() {
                let mut stores = Vec::new();
                if let (Some(d), Some(app)) = (self.detect.as_deref_mut(), x.app.as_deref()) {
                    let st = &f.data.detect;
                    let tcp = (proto == 6).then_some(&x.tcp);
                    let alerted = flow_end_detect(
                        d,
                        self.out,
                        st,
                        app,
                        tcp,
                        end_infos,
                        pkts,
                        proto,
                        ts,
                        flow_age,
                        self.ipv6,
                        self.logs.frame,
                        &mut stores,
                    );
                    // The flow record's `alerted` counts the flow-end pseudo packets' alerts.
                    x.alerted |= alerted;
                }
                // `filestore` matches of the flow-end pseudo packets store files too (before
                // the last records are written).
                if shrike_app::files::store().is_some() {
                    if let Some(p) = x.app.as_deref_mut().and_then(|a| a.state.as_deref_mut()) {
                        for r in &stores {
                            shrike_app::files::apply_filestore(p, r.tx, r.dirs, r.scope, r.sid);
                        }
                    }
                }
            }
            if f.key.proto == 6 {
                self.inspect_rest(&mut f, ts);
            }
            if let Some(to_server) = app_dir.filter(|_| proto == 6 && self.anomaly.wants_app()) {
                self.end_anomalies(&mut f, to_server, ts);
            }
            if let Some(x) = f.data.ext.as_mut() {
                if x.app.is_some() {
                    self.sess.app.pcap_cnt = 0;
                    self.sess.app.pkt_dir = None;
                    self.sess
                        .app
                        .log_completed(&mut x.app, &info, ts.0, self.out);
                }
            }
        }
        self.counters.flow_records += 1;
        let engine = self.detect.as_deref().map(|d| &*d.engine);
        let vars = f
            .data
            .detect
            .vars()
            .zip(engine)
            .filter(|_| self.anomaly.metadata());
        let md = |w: &mut shrike_output::JsonWriter| {
            vars.is_some_and(|(v, e)| shrike_detect::output::write_flow_vars(w, e, v))
        };
        let md = vars.map(|_| MetadataFn(&md));
        write_flow(self.out, &f, reason, now, self.ipv6, self.logs, md);
        if let Some(x) = f.data.ext.as_mut() {
            self.sess.release(x);
        }
    }
}

impl Ender<'_> {
    /// App-layer anomalies raised by what the flow end released, reported on the flow-end
    /// pseudo packet of direction `to_server`.
    fn end_anomalies(&mut self, f: &mut Flow<FlowData>, to_server: bool, ts: Timestamp) {
        let meta = pseudo_meta(f, to_server);
        let info = alert_flow(f, to_server);
        let FlowData { detect, ext } = &mut f.data;
        let Some(app) = ext.as_deref_mut().and_then(|x| x.app.as_deref_mut()) else {
            return;
        };
        let ctx = AlertContext {
            pkt: Packet {
                meta: &meta,
                data: &[],
                ts,
            },
            pcap_cnt: 0,
            linktype: 1,
            flow: Some(info),
            app_proto: None,
            app: None,
            flow_vars: detect.vars(),
            pkt_vars: &[],
            ipv6: self.ipv6,
            tcp: None,
        };
        let engine = self.detect.as_deref().map(|d| &*d.engine);
        self.anomaly.app(self.out, &ctx, app, engine);
    }

    /// Raw stream inspection of what the stream still holds at flow end (Suricata's
    /// flow-timeout pseudo packets, one per direction with data left).
    fn inspect_rest(&mut self, f: &mut Flow<FlowData>, ts: Timestamp) {
        let Some(d) = self.detect.as_deref_mut() else {
            return;
        };
        let swapped = f.data.ext.as_ref().is_some_and(|x| x.tcp.is_swapped());
        let age = age_secs(f.first_ts, f.last_ts);
        for tdir in [Dir::ToServer, Dir::ToClient] {
            // The flow's direction of this TCP direction.
            let to_server = (tdir == Dir::ToServer) != swapped;
            let info = alert_flow(f, to_server);
            let mut meta = pseudo_meta(f, to_server);
            let FlowData { detect, ext } = &mut f.data;
            let Some(x) = ext.as_deref_mut() else {
                return;
            };
            let w = self.sess.stream.raw_window(&x.tcp, tdir);
            if w.data.is_empty() {
                continue;
            }
            let n = w.data.len();
            // The pseudo packet carries the stream data as its payload (EVE `payload`).
            let shown = w.data.get(..n.min(usize::from(u16::MAX))).unwrap_or(&[]);
            meta.payload_off = 0;
            meta.payload_len = shown.len() as u16;
            let pkt = Packet {
                meta: &meta,
                data: shown,
                ts,
            };
            let input = FlowInput {
                state: detect,
                to_server,
                pkts_toserver: info.pkts_toserver,
                pkts_toclient: info.pkts_toclient,
                tcp_established: Some(true),
                // Transactions get their own flow-end pass (flow_end_detect).
                app: None,
                age_secs: age,
            };
            let sd = StreamData {
                window: w.data,
                added: true,
                pseudo: true,
                events: StreamEventSet::EMPTY,
                sizes: Some(x.tcp.stream_sizes()),
                session: None,
                dir: Some(tdir),
                eof: true,
            };
            let alerted = !d
                .engine
                .inspect_with_stream(&pkt, Some(input), sd, &mut d.thread)
                .is_empty();
            if alerted {
                x.alerted = true;
                let ctx = AlertContext {
                    pkt,
                    pcap_cnt: 0,
                    linktype: 1,
                    flow: Some(info),
                    app_proto: x.app.as_deref().map(|a| a.proto.name()),
                    app: x.app.as_deref(),
                    flow_vars: detect.vars(),
                    pkt_vars: &[],
                    ipv6: self.ipv6,
                    tcp: Some(&x.tcp),
                };
                log_alerts(d, self.out, &ctx);
            }
            x.tcp.raw_consume(tdir, n);
        }
    }
}

/// Suricata's `FramesPrune` after a TCP packet in direction `tdir`: the frames whose data
/// is all in are dropped (all of them at the end of the stream), and the stream keeps the
/// data the others still need.
fn prune_frames(flow: &mut Flow<FlowData>, tdir: Dir) {
    let Some(x) = flow.data.ext.as_deref_mut() else {
        return;
    };
    let Some(fr) = x.app.as_deref_mut().and_then(|a| a.frames.as_deref_mut()) else {
        return;
    };
    let usable = x.tcp.app_progress(tdir);
    let d = fr.dir_mut(tdir);
    d.prune(usable, x.tcp.is_eof());
    let left = (!d.list.is_empty()).then(|| d.left_edge(usable));
    x.tcp.set_frame_left(tdir, left);
}

/// The decoded facts of a flow-end pseudo packet in the flow direction `to_server`.
fn pseudo_meta(f: &Flow<FlowData>, to_server: bool) -> PacketMeta {
    let client_lo = f.client == Direction::LoToHi;
    let (c, s, cp, sp) = if client_lo {
        (f.key.lo_addr, f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (f.key.hi_addr, f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    let mut m = PacketMeta {
        kind: PacketKind::L4,
        proto: 6,
        vlan: f.vlan.0,
        vlan_count: f.vlan.1,
        ..PacketMeta::default()
    };
    if f.key.ip_version == 6 {
        m.flags |= flags::IPV6;
    }
    if to_server {
        (m.src, m.dst, m.sport, m.dport) = (c, s, cp, sp);
    } else {
        (m.src, m.dst, m.sport, m.dport) = (s, c, sp, cp);
    }
    m
}

/// Suricata's flow-end pseudo packets, one per direction: the flow's transactions are
/// inspected once more (data the final stream flush released), alerts logged. True when
/// one alerted.
#[allow(clippy::too_many_arguments)]
fn flow_end_detect(
    d: &mut Detect,
    out: &mut EveOutput,
    state: &shrike_detect::FlowDetect,
    app: &AppFlow,
    tcp: Option<&shrike_stream::TcpSession>,
    infos: [AlertFlowInfo; 2],
    pkts: [u64; 2],
    proto: u8,
    ts: Timestamp,
    age_secs: u64,
    ipv6: Ipv6Style,
    log_frames: bool,
    stores: &mut Vec<shrike_detect::FileStoreReq>,
) -> bool {
    let mut state = state.clone();
    let mut alerted = false;
    for info in infos {
        let to_server = info.to_server;
        let meta =
            shrike_detect::pseudo_meta(info.client, info.server, info.ports, proto, to_server);
        let pkt = Packet {
            meta: &meta,
            data: &[],
            ts,
        };
        let input = FlowInput {
            state: &mut state,
            to_server,
            pkts_toserver: pkts[0],
            pkts_toclient: pkts[1],
            tcp_established: Some(true),
            app: Some(app),
            age_secs,
        };
        // The TCP direction of this flow direction (the session may have swapped roles).
        let stream = tcp.map(|t| {
            let tdir = if to_server != t.is_swapped() {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            (t, tdir)
        });
        let quiet = d
            .engine
            .inspect_flow_end(&pkt, input, stream, &mut d.thread)
            .is_empty();
        stores.extend_from_slice(d.thread.file_stores());
        if log_frames && app.frames.is_some() {
            // The last pseudo packet of the direction logs what frames are left.
            let ctx = AlertContext {
                pkt,
                pcap_cnt: 0,
                linktype: 1,
                flow: Some(info),
                app_proto: None,
                app: Some(app),
                flow_vars: None,
                pkt_vars: &[],
                ipv6,
                tcp,
            };
            shrike_detect::output::write_eve_frames(out, &ctx, stream.map(|s| s.1));
        }
        if quiet {
            continue;
        }
        let ctx = AlertContext {
            pkt,
            pcap_cnt: 0,
            linktype: 1,
            flow: Some(info),
            app_proto: Some(app.proto.name()),
            app: Some(app),
            flow_vars: state.vars(),
            pkt_vars: &[],
            ipv6,
            tcp,
        };
        alerted = true;
        log_alerts(d, out, &ctx);
    }
    alerted
}

/// Protocol detection reversed the flow (Suricata's `FlowSwap`): client and server trade
/// places, with their counters.
fn reverse_flow(f: &mut Flow<FlowData>) {
    f.client = f.client.reverse();
    f.pkts.swap(0, 1);
    f.bytes.swap(0, 1);
    f.tcp_flags.swap(0, 1);
}

/// The Community ID of a new flow (its first packet's direction is the client's; for ICMP
/// `icmp_type` is that packet's type).
fn community_id(f: &Flow<FlowData>, seed: u16, icmp_type: Option<u8>) -> Option<CommunityId> {
    let v6 = f.key.ip_version == 6;
    let (c, s, cp, sp) = if f.client == Direction::LoToHi {
        (&f.key.lo_addr, &f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (&f.key.hi_addr, &f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    let proto = f.key.proto;
    let (p1, p2) = match proto {
        6 | 17 | 132 => (cp, sp),
        1 | 58 => icmp_ports(proto, icmp_type.unwrap_or(0)),
        _ => (0, 0),
    };
    CommunityId::new(seed, proto, ip_of(c, v6), ip_of(s, v6), p1, p2)
}

/// The flow part of an alert record.
fn alert_flow(f: &Flow<FlowData>, to_server: bool) -> AlertFlowInfo {
    let v6 = f.key.ip_version == 6;
    let client_lo = f.client == Direction::LoToHi;
    let (c, s, cp, sp) = if client_lo {
        (&f.key.lo_addr, &f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (&f.key.hi_addr, &f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    AlertFlowInfo {
        flow_id: f.id,
        to_server,
        pkts_toserver: f.pkts[0],
        pkts_toclient: f.pkts[1],
        bytes_toserver: f.bytes[0],
        bytes_toclient: f.bytes[1],
        start_ns: f.first_ts.0,
        client: ip_of(c, v6),
        server: ip_of(s, v6),
        ports: matches!(f.key.proto, 6 | 17 | 132).then_some((cp, sp)),
        community_id: f.data.ext.as_ref().and_then(|x| x.community_id),
        vlan: f.vlan,
    }
}

/// Write the logged alerts of the last inspected packet to EVE and fast.log, and the packet
/// itself when a `tag` covers it.
fn log_alerts(d: &mut Detect, out: &mut EveOutput, ctx: &AlertContext<'_>) {
    let ctx = &AlertContext {
        pkt_vars: d.thread.pkt_vars(),
        ..*ctx
    };
    // Flow-end pseudo packets (no packet number) are not logged as tagged packets.
    if d.thread.tagged() && d.engine.config().alert.tagged_packets && ctx.pcap_cnt != 0 {
        if let Some(mut rec) = out.record(EventKind::Alert) {
            write_eve_tagged_packet(&mut rec, ctx);
            let _ = rec.commit();
        }
    }
    for a in d.thread.alerts() {
        if !a.log {
            continue;
        }
        d.pending += 1;
        if let Some(mut rec) = out.record(EventKind::Alert) {
            write_eve_alert(&mut rec, &d.engine, a, ctx);
            let _ = rec.commit();
        }
        if d.fast.is_some() {
            write_fast_alert(&mut d.fast_buf, &d.engine, a, ctx);
        }
    }
    if d.fast_buf.len() >= FAST_FLUSH_BYTES {
        d.flush_fast();
    }
}

fn ip_of(addr: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::from(*addr)
    } else {
        IpAddr::from([addr[0], addr[1], addr[2], addr[3]])
    }
}

/// Write the EVE `flow` record (and the `netflow` records) of a flow leaving the table.
fn write_flow(
    out: &mut EveOutput,
    f: &Flow<FlowData>,
    reason: EndReason,
    now: Timestamp,
    ipv6: Ipv6Style,
    logs: FlowLogs,
    metadata: Option<MetadataFn<'_>>,
) {
    let v6 = f.key.ip_version == 6;
    let client_lo = f.client == Direction::LoToHi;
    let (src, dst, sp, dp) = if client_lo {
        (&f.key.lo_addr, &f.key.hi_addr, f.key.lo_port, f.key.hi_port)
    } else {
        (&f.key.hi_addr, &f.key.lo_addr, f.key.hi_port, f.key.lo_port)
    };
    let proto = f.key.proto;
    let ext = f.data.ext.as_deref();
    // As in Suricata, the flags are the TCP session's: a flow the stream engine never took
    // up (no SYN, midstream pickup off) logs none.
    let session = ext.is_some_and(|x| x.tcp.state() != TcpState::None);
    let flags = if session { f.tcp_flags } else { [0, 0] };
    let tcp = (proto == 6).then(|| TcpFlowInfo {
        flags: flags[0] | flags[1],
        flags_ts: flags[0],
        flags_tc: flags[1],
        state: ext
            .map(|x| x.tcp.state())
            .filter(|s| *s != TcpState::None)
            .map(TcpState::name),
        ts_gap: ext.is_some_and(|x| x.tcp.has_gap(Dir::ToServer)),
        tc_gap: ext.is_some_and(|x| x.tcp.has_gap(Dir::ToClient)),
        ts_max_regions: ext.map_or(1, |x| x.tcp.max_regions(Dir::ToServer)),
        tc_max_regions: ext.map_or(1, |x| x.tcp.max_regions(Dir::ToClient)),
    });
    let icmp = ext.and_then(|x| x.icmp).map(|(t, c)| FlowIcmp {
        icmp_type: t,
        icmp_code: c,
        response: ext.and_then(|x| x.icmp_reply),
    });
    let app_proto = ext
        .and_then(|x| x.app.as_deref())
        .map(|a| a.proto)
        .filter(|p| *p != AppProto::UNKNOWN)
        .map(AppProto::name);
    // The app layer's directions are the session's roles, as the record's.
    let dir_protos = ext
        .and_then(|x| x.app.as_deref())
        .map_or([None, None], |a| a.dir_protos());
    let change_protos = ext
        .and_then(|x| x.app.as_deref())
        .map_or([None, None], |a| a.change_protos());
    let vlan = f.vlan.0.get(..usize::from(f.vlan.1).min(3)).unwrap_or(&[]);
    let rec_ts = if reason == EndReason::Shutdown {
        now.max(f.last_ts)
    } else {
        now
    };
    let r = FlowRecord {
        timestamp_ns: rec_ts.0,
        flow_id: f.id,
        in_iface: None,
        vlan,
        src_ip: ip_of(src, v6),
        dest_ip: ip_of(dst, v6),
        src_port: sp,
        dest_port: dp,
        proto,
        icmp,
        spi: f.key.esp_spi(),
        app_proto,
        app_proto_ts: dir_protos[0],
        app_proto_tc: dir_protos[1],
        app_proto_orig: change_protos[0],
        app_proto_expected: change_protos[1],
        pkts_toserver: f.pkts[0],
        pkts_toclient: f.pkts[1],
        bytes_toserver: f.bytes[0],
        bytes_toclient: f.bytes[1],
        start_ns: f.first_ts.0,
        end_ns: f.last_ts.0,
        // A flow is only forced out of a full table, which is in emergency mode then:
        // Suricata flags those `emergency` (FLOW_END_FLAG_EMERGENCY).
        emergency: reason == EndReason::Forced,
        state: match f.state {
            FlowState::New => EveFlowState::New,
            FlowState::Established => EveFlowState::Established,
            FlowState::Closed => EveFlowState::Closed,
        },
        reason: match reason {
            EndReason::Timeout => FlowEndReason::Timeout,
            EndReason::Forced => FlowEndReason::Forced,
            EndReason::Shutdown => FlowEndReason::Shutdown,
        },
        alerted: ext.is_some_and(|x| x.alerted),
        wrong_thread: false,
        action: None,
        tcp,
        metadata,
        community_id: ext
            .and_then(|x| x.community_id.as_ref())
            .map(CommunityId::as_str),
        ipv6,
    };
    if logs.flow {
        if let Some(mut rec) = out.record(EventKind::Flow) {
            write_flow_record(&mut rec, &r);
            let _ = rec.commit();
        }
    }
    if logs.netflow {
        for &dir in netflow_dirs(&r) {
            let (min, max) = f.ttl_range(dir == NetflowDir::ToServer);
            if let Some(mut rec) = out.record(EventKind::Flow) {
                write_netflow_record(&mut rec, &r, dir, TtlRange { min, max });
                let _ = rec.commit();
            }
        }
    }
}

/// Whole seconds from `first` to `last` (Suricata's `flow.age`: the difference of the two
/// times' seconds).
fn age_secs(first: Timestamp, last: Timestamp) -> u64 {
    (last.0 / 1_000_000_000).saturating_sub(first.0 / 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_flow_fits_budget() {
        let fp = flow_footprint();
        eprintln!(
            "worker flow footprint: {fp} bytes (FlowData {} bytes)",
            std::mem::size_of::<FlowData>()
        );
        assert!(fp <= 256, "flow footprint {fp} bytes");
        // FlowDetect (32) + the boxed extension (TCP session, app state): the rest of a
        // flow's state lives in the box, allocated only for flows that need it.
        assert!(std::mem::size_of::<FlowData>() <= 40);
    }
}
