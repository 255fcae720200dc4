//! Per-flow stream and app-layer state of a worker, and the glue between the TCP stream
//! engine and the app layer: every chunk the stream engine releases goes to the app layer
//! (`on_tcp_data` / `on_tcp_gap`), UDP payloads go to `on_udp`, and a flow's end drains
//! the stream (Suricata's pseudo packets) and closes the app state.

use shrike_app::layer::{AppFlow, AppLayer, FlowCtx};
use shrike_app::Dir;
use shrike_flow::{Direction, Flow};
use shrike_packet::decode::PacketMeta;
use shrike_stream::{
    config::host_os_policy, AppChunk, HostOsPolicy, StreamEngine, StreamResult, TcpSession,
};

use crate::config::SensorConfig;

/// Flow state that only some flows need, boxed so the table's inline flow data stays small:
/// the TCP session, the app-layer state, ICMP type/codes and the alerted mark.
#[derive(Debug, Default)]
pub struct FlowExt {
    /// TCP session (TCP flows; untracked until the stream engine picks it up).
    pub tcp: TcpSession,
    /// App-layer state, once the app layer created it.
    pub app: Option<Box<AppFlow>>,
    /// ICMP type/code of the first packet, and of the first reply.
    pub icmp: Option<(u8, u8)>,
    pub icmp_reply: Option<(u8, u8)>,
    /// Any alert fired on this flow.
    pub alerted: bool,
    /// The flow's Community ID (eve-log `community-id: yes`), computed when the flow starts.
    pub community_id: Option<shrike_output::eve::CommunityId>,
}

/// A worker's stream engine and app layer.
pub struct Sessions {
    /// TCP session tracking and reassembly.
    pub stream: StreamEngine,
    /// App-layer parsers.
    pub app: AppLayer,
    /// Protocol detection reversed the current flow (see [`Sessions::take_reversed`]).
    reversed: bool,
}

/// The protocols whose Suricata 7.0.10 parsers call `AppLayerParserTriggerRawStreamReassembly`
/// (`sc_app_layer_parser_trigger_raw_stream_reassembly`) when a request, response or record
/// completes; the others (SMB, SSH, FTP, MQTT ...) leave raw inspection to the chunk size.
const RAW_TRIGGER: &[&str] = &["http", "smtp", "tls", "dns", "dcerpc", "pgsql"];

/// The `host-os-policy` table of the configuration (an invalid entry is reported once and
/// the table falls back to the default policy).
pub fn host_policy(cfg: &SensorConfig) -> HostOsPolicy {
    match host_os_policy(&cfg.detect.host_os_policy) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("shrike: warning: host-os-policy: {e:?}; using the default policy");
            HostOsPolicy::default()
        }
    }
}

impl Sessions {
    /// A worker's share: the stream memcaps are per worker (divided by `workers`).
    pub fn new(cfg: &SensorConfig, workers: usize) -> Self {
        let mut sc = cfg.detect.stream.clone();
        let n = workers.max(1) as u64;
        sc.memcap = (sc.memcap / n).max(1 << 16);
        sc.reassembly.memcap = (sc.reassembly.memcap / n).max(1 << 16);
        let mut http = cfg.detect.app_layer.http.clone();
        shrike_app::file_range::configure(http.byterange_memcap, http.byterange_timeout);
        http.files = cfg.detect.app_log.file_config();
        let mut app = AppLayer::with_config(
            std::sync::Arc::new(http),
            Default::default(),
            Default::default(),
        );
        app.cfg.smtp = std::sync::Arc::new(cfg.detect.app_layer.smtp.parser_config());
        app.cfg.ftp = cfg.detect.app_layer.ftp;
        app.cfg.smb = cfg.detect.app_layer.smb;
        app.cfg.files = cfg.detect.app_log.file_config();
        cfg.detect.app_layer.ssh.apply();
        cfg.detect.app_layer.tls.apply();
        for (name, mode) in &cfg.detect.app_layer.enabled {
            let Some(i) = shrike_app::AppProto::from_name(name).and_then(|p| p.index()) else {
                continue;
            };
            app.cfg.modes[i] = match mode.as_str() {
                "no" => shrike_app::registry::MODE_DISABLED,
                "detection-only" => shrike_app::registry::MODE_DETECTION_ONLY,
                _ => shrike_app::registry::MODE_FULL,
            };
        }
        let mut ports = vec![[None, None]; shrike_app::registry::MAX_PROTOCOLS];
        for (key, v) in &cfg.detect.app_layer.detection_ports {
            let (name, which) = match key.rsplit_once('.') {
                Some((n, "tcp")) => (n, [true, false]),
                Some((n, "udp")) => (n, [false, true]),
                _ => (key.as_str(), [true, true]),
            };
            let idx = shrike_app::AppProto::from_name(name).and_then(|p| p.index());
            let parsed = shrike_app::registry::DetectPorts::parse(v.dp.as_deref(), v.sp.as_deref());
            match (idx, parsed) {
                (Some(i), Some(dp)) => {
                    if let Some(slot) = ports.get_mut(i) {
                        for (t, on) in which.into_iter().enumerate() {
                            // A transport's own setting wins over the protocol-wide one.
                            if on && (slot[t].is_none() || key.contains('.')) {
                                slot[t] = Some(dp.clone());
                            }
                        }
                    }
                }
                _ => eprintln!("shrike: warning: invalid detection-ports for {key}: ignored"),
            }
        }
        app.cfg.ports = std::sync::Arc::new(ports);
        cfg.detect.app_layer.http2.apply();
        app.log.dns = cfg.detect.app_log.dns_log();
        app.log.http = cfg.detect.app_log.http_log();
        app.log.smtp = cfg.detect.app_log.smtp_log();
        app.log.tls = cfg.detect.app_log.tls_log();
        app.log.dhcp = cfg.detect.app_log.dhcp_log();
        app.log.ike_extended = cfg.detect.app_log.ike.extended;
        app.log.quic_ja4 = cfg.detect.app_log.quic.ja4;
        app.log.mqtt = cfg.detect.app_log.mqtt;
        app.cfg.mqtt = cfg.detect.app_layer.mqtt;
        app.cfg.pgsql = cfg.detect.app_layer.pgsql;
        app.cfg.dnp3 = cfg.detect.app_layer.dnp3;
        app.cfg.modbus = cfg.detect.app_layer.modbus;
        app.cfg.nfs = cfg.detect.app_layer.nfs;
        app.cfg.dcerpc = cfg.detect.app_layer.dcerpc;
        app.log.pgsql = cfg.detect.app_log.pgsql;
        Sessions {
            stream: StreamEngine::new(sc, host_policy(cfg)),
            app,
            reversed: false,
        }
    }

    /// Tracked files also compute what the rules need (`filemd5` rules: MD5).
    pub fn add_file_needs(&mut self, need: shrike_app::files::FileConfig) {
        self.app.cfg.files.merge(need);
        let mut http = (*self.app.cfg.http).clone();
        http.files.merge(need);
        self.app.cfg.http = std::sync::Arc::new(http);
    }

    /// One TCP packet of a flow: session tracking, reassembly, then every released chunk to
    /// the app layer.
    pub fn tcp_packet(
        &mut self,
        ext: &mut FlowExt,
        meta: &PacketMeta,
        data: &[u8],
        flow_dir: Dir,
        ctx: &FlowCtx,
        ts_secs: u32,
    ) -> StreamResult {
        let r = self
            .stream
            .on_packet(&mut ext.tcp, meta, data, flow_dir, ts_secs);
        // Suricata updates the app layer of the packet's own direction at once when the
        // packet takes the stream to its depth (`STREAM_DEPTH`: files truncated now).
        if r.app_pending.iter().any(|&p| p)
            || r.events
                .contains(shrike_stream::StreamEvent::ReassemblyDepthReached)
        {
            self.drain_app(ext, ctx);
        }
        r
    }

    /// Hands every chunk the stream engine released to the app layer, both directions.
    pub fn drain_app(&mut self, ext: &mut FlowExt, ctx: &FlowCtx) {
        let before = self.reversed;
        for d in [Dir::ToServer, Dir::ToClient] {
            self.drain_app_dir(ext, ctx, d);
        }
        if self.reversed != before {
            // The directions traded their data: what the other one released goes on now.
            for d in [Dir::ToServer, Dir::ToClient] {
                self.drain_app_dir(ext, ctx, d);
            }
        }
    }

    /// Whether protocol detection reversed the flow's direction since the last call: the
    /// TCP session already swapped roles, the caller reverses the flow (client and server,
    /// counters) to match.
    pub fn take_reversed(&mut self) -> bool {
        std::mem::take(&mut self.reversed)
    }

    /// Hands every chunk the stream engine released in TCP direction `d` to the app layer.
    pub fn drain_app_dir(&mut self, ext: &mut FlowExt, ctx: &FlowCtx, d: Dir) {
        let FlowExt { tcp, app, .. } = ext;
        // The flow's view with the TCP roles: ports swapped when the roles are (or, after a
        // reversal here, until the caller reverses the flow, become) the other way round.
        let swap = tcp.is_swapped() != self.reversed;
        let mut ctx = FlowCtx {
            midstream: tcp.is_midstream(),
            bail_limits: if tcp.state() >= shrike_stream::TcpState::Established {
                // Suricata: MAX(100000, MIN(<receiver's window>, reassembly depth)).
                let depth = self.stream.config().reassembly.depth;
                let [cw, sw] = tcp.advertised_windows();
                let lim = |w: u32| 100_000u64.max(u64::from(w).min(depth));
                [lim(sw), lim(cw)]
            } else {
                [0; 2]
            },
            held: [0; 2],
            ..*ctx
        };
        if swap {
            (ctx.client_port, ctx.server_port) = (ctx.server_port, ctx.client_port);
            ctx.addrs.swap(0, 1);
        }
        let mut d = d;
        let done_before = app.as_deref().map_or(0, |a| a.complete_in(d));
        // Bounded: each round consumes at least one byte, and a reversal happens once.
        loop {
            self.app.stream_off = [tcp.app_offset(Dir::ToServer), tcp.app_offset(Dir::ToClient)];
            ctx.held = [
                tcp.received_end(Dir::ToServer),
                tcp.received_end(Dir::ToClient),
            ];
            let n = match tcp.app_next(d) {
                AppChunk::Data(x) => {
                    if self.app.on_tcp_data(app, &ctx, d, x) {
                        // The data runs the other way: swap roles and hand it on again.
                        tcp.swap_roles();
                        self.reversed = !self.reversed;
                        (ctx.client_port, ctx.server_port) = (ctx.server_port, ctx.client_port);
                        d = match d {
                            Dir::ToServer => Dir::ToClient,
                            Dir::ToClient => Dir::ToServer,
                        };
                        continue;
                    }
                    x.len()
                }
                AppChunk::Gap(len) => {
                    self.app.on_tcp_gap(app, &ctx, d, u64::from(len));
                    len as usize
                }
                AppChunk::None => break,
            };
            if n == 0 {
                break;
            }
            tcp.app_consume(d, n);
        }
        // Suricata passes `STREAM_DEPTH` with every delivery once the depth is reached: the
        // direction's open files end truncated.
        if tcp.depth_reached(d) {
            self.app.on_tcp_depth(app, d);
        }
        // The detected protocol's own stream depth (PostgreSQL, SMB: unlimited by default),
        // as Suricata's `TcpSessionSetReassemblyDepth`: it only raises the session's depth
        // (a smaller one than `stream.reassembly.depth` leaves that one), 0 lifts it.
        if let Some(dep) = app
            .as_deref()
            .and_then(|a| a.proto.protocol())
            .and_then(|p| self.app.cfg.stream_depth(p.name))
        {
            let global = self.stream.config().reassembly.depth;
            tcp.raise_app_depth(dep, global);
        }
        // A transaction completed in this direction: inspect the raw stream now, not
        // only when a full chunk has accumulated (Suricata's trigger on tx completion),
        // for the protocols whose Suricata 7 parser asks for it.
        let triggers = app
            .as_deref()
            .is_some_and(|a| RAW_TRIGGER.contains(&a.proto.name()));
        if triggers && app.as_deref().map_or(0, |a| a.complete_in(d)) > done_before {
            tcp.trigger_raw(d);
        }
    }

    /// One UDP datagram's payload. The app state is created in the flow's extension only
    /// when the app layer keeps some.
    /// Returns `true` when protocol detection reversed the flow (see
    /// [`shrike_app::layer::AppLayer::on_udp`]).
    pub fn udp_packet(
        &mut self,
        ext: &mut Option<Box<FlowExt>>,
        ctx: &FlowCtx,
        dir: Dir,
        payload: &[u8],
    ) -> bool {
        match ext {
            Some(x) => self.app.on_udp(&mut x.app, ctx, dir, payload),
            None => {
                let mut app = None;
                let rev = self.app.on_udp(&mut app, ctx, dir, payload);
                if app.is_some() {
                    *ext = Some(Box::new(FlowExt {
                        app,
                        ..FlowExt::default()
                    }));
                }
                rev
            }
        }
    }

    /// The outer datagram of a UDP tunnel: its flow's app layer fails (see
    /// [`shrike_app::layer::AppLayer::on_udp_tunnel`]).
    pub fn udp_tunnel_root(&mut self, ext: &mut Option<Box<FlowExt>>, ctx: &FlowCtx, dir: Dir) {
        let x = ext.get_or_insert_with(Box::default);
        self.app.on_udp_tunnel(&mut x.app, ctx, dir);
    }

    /// The flow ends: the stream releases everything it holds (to the app layer first),
    /// then the app layer closes. Call [`Self::release`] once raw inspection is done.
    ///
    /// `after` is called with the TCP direction once each direction's data reached the app
    /// layer (TCP flows), and once more after the app layer closed, with the last direction
    /// that had data (Suricata's flow-end pseudo packets, one per direction, the last one
    /// closing the app layer).
    pub fn end(
        &mut self,
        ext: &mut FlowExt,
        ctx: &FlowCtx,
        after: &mut dyn FnMut(&mut FlowExt, Dir),
    ) {
        let gen = |x: &FlowExt| x.app.as_deref().map(|a| a.gen);
        let mut last = Dir::ToServer;
        if ctx.ip_proto == 6 {
            self.stream.flow_end(&mut ext.tcp);
            for d in [Dir::ToServer, Dir::ToClient] {
                let before = gen(ext);
                self.drain_app_dir(ext, ctx, d);
                if gen(ext) != before {
                    last = d;
                }
                after(ext, d);
            }
        }
        if ext.app.is_some() {
            self.app.on_close(&mut ext.app, ctx);
            after(ext, last);
        }
    }

    /// Frees the flow's TCP session memory.
    pub fn release(&mut self, ext: &mut FlowExt) {
        self.stream.release(&mut ext.tcp);
    }
}

/// The app layer's view of a flow at packet time `ts_ns`.
pub fn flow_ctx<V>(f: &Flow<V>, ts_ns: u64) -> FlowCtx {
    let client_lo = f.client == Direction::LoToHi;
    let (cp, sp) = if client_lo {
        (f.key.lo_port, f.key.hi_port)
    } else {
        (f.key.hi_port, f.key.lo_port)
    };
    FlowCtx {
        ip_proto: f.key.proto,
        client_port: cp,
        server_port: sp,
        ts_ns,
        midstream: false,
        bail_limits: [0; 2],
        held: [0; 2],
        addrs: if client_lo {
            [f.key.lo_addr, f.key.hi_addr]
        } else {
            [f.key.hi_addr, f.key.lo_addr]
        },
    }
}
