//! Per-packet inspection ([`Engine::inspect`]) and the per-worker [`DetectThread`].

use shrike_rules::matcher::{MatchEnv, Scratch};
use shrike_rules::parse::Action;

use super::group::Group;
use super::host_state::{HostGate, HostShared};
use super::packet::{FlowInput, Packet, PacketView};
use super::sig::{mask, Sig};
use super::stream_inspect::{stream_view, StreamData};
use super::tag;
use super::threshold::Verdict;
use super::vars::{fflag, FlowVars};
use super::Engine;
use shrike_rules::parse::keywords::TagKind;
use std::sync::Arc;

/// One alert of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alert {
    /// Signature number: look it up with [`Engine::sig_info`].
    pub sig: u32,
    /// Write it to EVE and fast.log. `pass` matches are kept (they count in
    /// `detect.alert`, as in Suricata) but are not logged.
    pub log: bool,
    /// The app-layer transaction the alert comes from (EVE `tx_id`, and the `http`/`dns`/
    /// `tls` object of the alert record).
    pub tx: Option<u64>,
    /// The match came from the reassembled stream or from a transaction (Suricata's
    /// `PACKET_ALERT_FLAG_STREAM_MATCH` / `STATE_MATCH`): on TCP, EVE `stream` is 1 and the
    /// payload is the stream's data.
    pub stream: bool,
    /// The frame a `frame:` rule matched (EVE `frame` object).
    pub frame: Option<super::frames::FrameHit>,
}

/// Queue entry without a transaction.
const NO_TX: u64 = u64::MAX;
/// Queue entry without a transaction, matched on the reassembled stream.
const STREAM_NO_TX: u64 = u64::MAX - 1;
/// Queue entries from `FRAME_BASE` (below [`STREAM_NO_TX`]) are frame matches: the index in
/// [`DetectThread::frame_hits`] added.
const FRAME_BASE: u64 = u64::MAX - 2 - (1 << 20);

/// Detection counters of one worker (Suricata's `detect.*` stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetectStats {
    /// `detect.alert`: alerts kept on packets (including `pass` matches).
    pub alert: u64,
    /// `detect.alert_queue_overflow`: alerts beyond `packet-alert-max`.
    pub alert_queue_overflow: u64,
    /// `detect.alerts_suppressed`: matches not logged (noalert, suppress, threshold).
    pub alerts_suppressed: u64,
}

impl DetectStats {
    /// Visit every counter with its Suricata name.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("detect.alert", self.alert);
        f("detect.alert_queue_overflow", self.alert_queue_overflow);
        f("detect.alerts_suppressed", self.alerts_suppressed);
    }

    /// Add another worker's counters.
    pub fn merge(&mut self, o: &Self) {
        self.alert += o.alert;
        self.alert_queue_overflow += o.alert_queue_overflow;
        self.alerts_suppressed += o.alerts_suppressed;
    }
}

/// A worker's detection context: scratch space, threshold counters and stats. Create one
/// per worker with [`Engine::thread`]; it allocates nothing per packet.
#[derive(Debug)]
pub struct DetectThread {
    pub(crate) scratch: Scratch,
    cand: Vec<u32>,
    ipcand: Vec<u32>,
    stamp: Vec<u32>,
    vstamp: Vec<u32>,
    gen: u32,
    queue: Vec<(u32, u64)>,
    alerts: Vec<Alert>,
    app_sc: super::app_inspect::AppScratch,
    /// Thresholds, detection filters, host bits and host tags: shared by every context of
    /// the engine (see [`super::host_state`]).
    pub host: Arc<HostShared>,
    /// File mode: orders host-state decisions by input position.
    gate: Option<Arc<dyn HostGate>>,
    /// Input position of the entry being processed (for the gate).
    order: u64,
    /// The gate was passed for `order`.
    turn: bool,
    tagged: bool,
    /// `filestore` matches of this packet, applied to the flow's files by the caller.
    stores: Vec<FileStoreReq>,
    /// Frame matches of this packet (queued as [`FRAME_BASE`] + index).
    frame_hits: Vec<super::frames::FrameHit>,
    /// A frame's bytes with the rule's transforms, and scratch for them (reused).
    pub(crate) frame_buf: Vec<u8>,
    pub(crate) frame_tmp: Vec<u8>,
    /// Counters.
    pub stats: DetectStats,
}

/// A `filestore` rule matched (see [`DetectThread::file_stores`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStoreReq {
    /// The transaction it matched.
    pub tx: u64,
    /// Directions whose files are asked for: [to server, to client].
    pub dirs: [bool; 2],
    /// Which transactions' files.
    pub scope: shrike_app::files::StoreScope,
    /// The rule.
    pub sid: u32,
}

impl DetectThread {
    /// Queues a match of signature `n` on a frame.
    pub(crate) fn push_frame_hit(&mut self, n: u32, hit: super::frames::FrameHit) {
        if self.frame_hits.len() < 1 << 20 {
            self.queue
                .push((n, FRAME_BASE + self.frame_hits.len() as u64));
            self.frame_hits.push(hit);
        }
    }

    /// The packet variables the rules matching the last packet captured (`pcre` with
    /// `pkt:` names), for the alerts' `metadata.pktvars`.
    pub fn pkt_vars(&self) -> &[shrike_rules::matcher::Captured] {
        &self.scratch.pkt_vars
    }

    /// The `filestore` matches of the last packet: apply them to the flow's parser with
    /// [`shrike_app::files::apply_filestore`] (noalert and suppressed rules included, as
    /// Suricata's post-match runs before alerting).
    pub fn file_stores(&self) -> &[FileStoreReq] {
        &self.stores
    }

    /// File mode: order host-state decisions with `gate` (see [`super::host_state`]).
    pub fn set_gate(&mut self, gate: Arc<dyn HostGate>) {
        self.gate = Some(gate);
    }

    /// The input position of the entry about to be processed (packet, or clock tick whose
    /// flow timeouts may inspect released data).
    pub fn set_order(&mut self, order: u64) {
        self.order = order;
        self.turn = false;
    }

    /// Wait, once per entry, until host state may be touched (no-op without a gate).
    fn host_turn(&mut self) {
        if !self.turn {
            if let Some(g) = &self.gate {
                g.wait_turn(self.order);
            }
            self.turn = true;
        }
    }

    /// Start a packet: no alerts queued yet.
    pub(crate) fn begin(&mut self) {
        self.scratch.pkt_vars.clear();
        self.scratch.captures.clear();
        self.alerts.clear();
        self.queue.clear();
        self.stores.clear();
        self.frame_hits.clear();
        self.tagged = false;
    }

    fn next_gen(&mut self) -> u32 {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.vstamp.iter_mut().for_each(|s| *s = 0);
            self.gen = 1;
        }
        self.gen
    }

    /// The alerts of the last inspected packet.
    pub fn alerts(&self) -> &[Alert] {
        &self.alerts
    }

    /// The last inspected packet is covered by a `tag` (log it as an EVE `packet` record
    /// when `tagged-packets` is on).
    pub fn tagged(&self) -> bool {
        self.tagged
    }
}

impl DetectThread {
    /// Visits the thread's counters ([`DetectStats`], then shrike's
    /// `shrike.detect.pcre_limit`: `pcre` searches stopped by the PCRE2 match/depth limits).
    pub fn visit_stats(&self, f: &mut dyn FnMut(&str, u64)) {
        self.stats.visit(f);
        f("shrike.detect.pcre_limit", self.scratch.pcre_limit_hits);
    }
}

impl Engine {
    /// What the rules need tracked files to compute, merged into the app layer's file
    /// settings by the pipeline. As Suricata 7.0.10's `SigGroupHeadSetFileHashFlag`, the
    /// first rule (in signature order) using `filemd5`, `filesha1` or `filesha256` decides
    /// the one hash computed: a `filesha1` rule after a `filemd5` one never sees a SHA-1.
    pub fn file_needs(&self) -> shrike_app::files::FileConfig {
        use super::app_inspect::FileHashKind;
        let mut c = shrike_app::files::FileConfig::default();
        let first = self
            .sigs
            .iter()
            .filter_map(|s| s.app.as_deref())
            .find_map(|a| a.filehash.first());
        match first.map(|m| m.kind) {
            Some(FileHashKind::Md5) => c.md5 = true,
            Some(FileHashKind::Sha1) => c.sha1 = true,
            Some(FileHashKind::Sha256) => c.sha256 = true,
            None => {}
        }
        // `filemagic` rules need the first bytes of files for libmagic.
        c.magic = self
            .sigs
            .iter()
            .filter_map(|s| s.app.as_deref())
            .any(|a| !a.filemagic.is_empty() || a.file_magic);
        // A `filestore` rule may ask for a file after its first bytes went by.
        c.keep_for_store = self
            .sigs
            .iter()
            .filter_map(|s| s.app.as_deref())
            .any(|a| a.filestore.is_some());
        c
    }

    /// A detection context for one worker.
    pub fn thread(&self) -> DetectThread {
        DetectThread {
            scratch: Scratch::with_limit(self.cfg.inspection_recursion_limit),
            cand: Vec::with_capacity(256),
            ipcand: Vec::with_capacity(64),
            stamp: vec![0; self.sigs.len()],
            vstamp: vec![0; self.groups.variants as usize],
            gen: 0,
            queue: Vec::with_capacity(32),
            alerts: Vec::with_capacity(self.cfg.packet_alert_max.max(1)),
            app_sc: super::app_inspect::AppScratch::new(self.sigs.len()),
            host: Arc::clone(&self.host),
            gate: None,
            order: 0,
            turn: false,
            tagged: false,
            stores: Vec::new(),
            frame_hits: Vec::new(),
            frame_buf: Vec::new(),
            frame_tmp: Vec::new(),
            stats: DetectStats::default(),
        }
    }

    /// Inspect one packet. `flow` is the packet's flow, if it has one; its detection state
    /// is updated (TCP handshake, flow variables, IP-only flags). Returns the packet's
    /// alerts in Suricata's order.
    pub fn inspect<'t>(
        &self,
        pkt: &Packet<'_>,
        flow: Option<FlowInput<'_>>,
        th: &'t mut DetectThread,
    ) -> &'t [Alert] {
        self.inspect_impl(pkt, flow, None, th)
    }

    /// [`Self::inspect`], with the packet's stream side for TCP sessions.
    pub(crate) fn inspect_impl<'t>(
        &self,
        pkt: &Packet<'_>,
        mut flow: Option<FlowInput<'_>>,
        stream: Option<StreamData<'_>>,
        th: &'t mut DetectThread,
    ) -> &'t [Alert] {
        th.alerts.clear();
        th.queue.clear();
        th.frame_hits.clear();
        th.tagged = false;
        th.scratch.pkt_vars.clear();
        th.scratch.captures.clear();
        let mut p = PacketView::new(pkt);
        if let Some(f) = flow.as_mut() {
            p.has_flow = true;
            p.flow_age = f.age_secs;
            p.app_proto = f.app.map_or(shrike_app::AppProto::UNKNOWN, |a| a.proto);
            p.app_events = f.app.map_or(0, |a| a.packet_events());
            p.dir_proto = f
                .app
                .map_or(shrike_app::AppProto::UNKNOWN, |a| a.dir_proto(f.to_server));
            p.to_server = f.to_server;
            p.mask |= mask::FLOW;
            let tracked = if p.is_tcp {
                Some(f.state.tcp_packet(
                    p.tcp_flags,
                    p.meta.tcp_seq(),
                    p.meta.tcp_ack(),
                    f.to_server,
                    self.cfg.midstream,
                ))
            } else {
                None
            };
            p.established = if let Some(e) = f.tcp_established.filter(|_| p.ip_proto == 6) {
                e
            } else if let Some(t) = tracked {
                t
            } else if p.ip_proto == 6 {
                f.state.tcp >= super::TcpTrack::Established
            } else {
                f.pkts_toserver > 0 && f.pkts_toclient > 0
            };
            if f.state.flags & fflag::NO_INSPECT != 0 {
                return &th.alerts;
            }
        }

        // IP-only rules: once per flow direction (every packet without a flow).
        if p.ip_version != 0 && !self.iponly.is_empty() {
            let due = match flow.as_mut() {
                Some(f) => {
                    let bit = if f.to_server {
                        fflag::IPONLY_TS
                    } else {
                        fflag::IPONLY_TC
                    };
                    let due = f.state.flags & bit == 0;
                    f.state.flags |= bit;
                    due
                }
                None => true,
            };
            if due {
                self.iponly.candidates(&p, &mut th.ipcand);
                let ipcand = std::mem::take(&mut th.ipcand);
                for &n in &ipcand {
                    let Some(s) = self.sigs.get(n as usize) else {
                        continue;
                    };
                    if !s.header.matches(&p) {
                        continue;
                    }
                    let host = !s.host_checks.is_empty() || !s.host_post.is_empty();
                    if host {
                        th.host_turn();
                    }
                    if !host
                        || s.host_checks
                            .iter()
                            .all(|b| th.host.hostbits().check(b, &p))
                    {
                        if let Some(f) = flow.as_mut() {
                            s.post.iter().for_each(|op| op.apply(f.state));
                        }
                        if host {
                            let mut hb = th.host.hostbits();
                            s.host_post.iter().for_each(|b| hb.apply(b, &p));
                        }
                        th.queue.push((n, NO_TX));
                    }
                }
                th.ipcand = ipcand;
            }
        }

        // The packet's groups.
        let groups = self.groups.lookup(&p);
        if let Some(s) = stream {
            p.stream_events = s.events;
            p.tcp_sizes = s.sizes;
            p.pseudo = s.pseudo;
        }
        let sv = stream
            .filter(|s| p.is_tcp && !s.window.is_empty())
            .map(|s| stream_view(&p, s.window));
        if groups.iter().any(Option::is_some) {
            self.collect(groups, &p, th);
            if let Some(sv) = &sv {
                self.collect_more(groups, sv, th);
            }
            let env = MatchEnv::default();
            let cand = std::mem::take(&mut th.cand);
            for &n in &cand {
                let Some(s) = self.sigs.get(n as usize) else {
                    continue;
                };
                th.scratch.captures.clear();
                let vars = flow.as_ref().and_then(|f| f.state.vars());
                let Some(on_stream) = self.sig_matches_stream(
                    s,
                    &p,
                    sv.as_ref(),
                    stream,
                    vars,
                    &mut th.scratch,
                    &env,
                ) else {
                    continue;
                };
                let host = !s.host_checks.is_empty() || !s.host_post.is_empty();
                if host {
                    th.host_turn();
                }
                if !host
                    || s.host_checks
                        .iter()
                        .all(|b| th.host.hostbits().check(b, &p))
                {
                    if let Some(f) = flow.as_mut() {
                        s.post.iter().for_each(|op| op.apply(f.state));
                    }
                    apply_captures(&mut th.scratch, flow.as_mut().map(|f| &mut *f.state));
                    if host {
                        let mut hb = th.host.hostbits();
                        s.host_post.iter().for_each(|b| hb.apply(b, &p));
                    }
                    th.queue
                        .push((n, if on_stream { STREAM_NO_TX } else { NO_TX }));
                }
            }
            th.cand = cand;
        }

        // Transactions of the flow's app layer.
        if let Some(f) = flow.as_mut() {
            self.run_txs(&p, f, sv.as_ref(), stream, th);
            if !self.frame_sigs.is_empty() {
                let to = if f.to_server {
                    shrike_app::Dir::ToServer
                } else {
                    shrike_app::Dir::ToClient
                };
                let tcp = stream.and_then(|s| {
                    s.session
                        .map(|x| (x, s.dir.unwrap_or(to), s.pseudo || s.eof))
                });
                self.run_frames(&p, f, tcp, th);
            }
        }

        self.finalize(&p, flow.as_mut(), th);
        &th.alerts
    }

    /// Transaction inspection of the packet's flow.
    ///
    /// The payload matches of a transaction rule are inspected as a packet rule's: against
    /// the raw stream window `sv` when the packet has one (Suricata's stream engine among the
    /// rule's app-layer engines), else the packet.
    pub(crate) fn run_txs(
        &self,
        p: &PacketView<'_>,
        f: &mut FlowInput<'_>,
        sv: Option<&PacketView<'_>>,
        stream: Option<super::stream_inspect::StreamData<'_>>,
        th: &mut DetectThread,
    ) {
        let Some(app) = f.app else {
            return;
        };
        let d = if f.to_server {
            shrike_app::Dir::ToServer
        } else {
            shrike_app::Dir::ToClient
        };
        if self.app.is_empty() {
            // No transaction rule: nothing needs a logged transaction kept for detection.
            app.note_no_rules(d);
            return;
        }
        // A packet without payload that brought nothing to the app layer (a bare ACK)
        // cannot change what the transactions hold: skip their inspection, unless it brings
        // up a raw stream window for transaction rules with payload matches.
        if p.payload.is_empty()
            && (sv.is_none() || !self.app.payload_rules)
            && f.state
                .app
                .as_deref()
                .is_some_and(|a| a.unchanged(app, f.to_server))
        {
            return;
        }
        let env = MatchEnv::default();
        if self.has_hostbits {
            th.host_turn();
        }
        let queued = th.queue.len();
        let host = &th.host;
        let has_hostbits = self.has_hostbits;
        let mut pkt_ok = |n: u32, st: &super::FlowDetect, sc: &mut Scratch| {
            self.sigs.get(n as usize).is_some_and(|s| {
                self.sig_matches_stream(s, p, sv, stream, st.vars(), sc, &env)
                    .is_some()
                    && (!has_hostbits || {
                        let mut hb = host.hostbits();
                        s.host_checks.iter().all(|b| hb.check(b, p))
                    })
            })
        };
        th.app_sc.now_secs = i64::try_from(p.ts_ns / 1_000_000_000).unwrap_or(i64::MAX);
        self.inspect_txs(
            app,
            p.payload,
            sv.map_or(&[][..], |v| v.payload),
            f.to_server,
            f.state,
            &mut th.app_sc,
            &mut th.scratch,
            &mut pkt_ok,
            &mut th.queue,
        );
        // hostbits/xbits set, unset and toggle of the transaction rules that matched.
        if has_hostbits && th.queue.len() > queued {
            let mut hb = th.host.hostbits();
            for &(n, _) in &th.queue[queued..] {
                if let Some(s) = self.sigs.get(n as usize) {
                    s.host_post.iter().for_each(|b| hb.apply(b, p));
                }
            }
        }
    }

    /// Finish a packet: thresholds, suppressions, order, tags.
    pub(crate) fn finish_packet(
        &self,
        p: &PacketView<'_>,
        flow: Option<&mut FlowInput<'_>>,
        th: &mut DetectThread,
    ) {
        self.finalize(p, flow, th);
    }
}

impl Engine {
    /// Candidates of the packet's groups: their non-prefilter lists plus prefilter hits,
    /// sorted.
    fn collect(&self, groups: [Option<&Group>; 2], p: &PacketView<'_>, th: &mut DetectThread) {
        th.cand.clear();
        let gen = th.next_gen();
        for g in groups.into_iter().flatten() {
            th.cand.extend_from_slice(&g.nonmpm);
            if let Some(mpm) = &g.mpm {
                if !p.payload.is_empty() {
                    Self::scan(mpm, p.payload, gen, th);
                }
            }
        }
        th.cand.sort_unstable();
    }

    /// More prefilter hits from a second buffer (the stream window), same generation.
    fn collect_more(&self, groups: [Option<&Group>; 2], p: &PacketView<'_>, th: &mut DetectThread) {
        let gen = th.gen;
        for g in groups.into_iter().flatten() {
            if let Some(mpm) = &g.mpm {
                Self::scan(mpm, p.payload, gen, th);
            }
        }
        th.cand.sort_unstable();
        th.cand.dedup();
    }

    fn scan(mpm: &super::group::Mpm, hay: &[u8], gen: u32, th: &mut DetectThread) {
        let (cand, stamp, vstamp) = (&mut th.cand, &mut th.stamp, &mut th.vstamp);
        mpm.pf.scan(hay, &mut |pi, s, e| {
            let Some(&(a, b)) = mpm.ranges.get(pi as usize) else {
                return;
            };
            for v in mpm.variants.get(a as usize..b as usize).unwrap_or(&[]) {
                let Some(vs) = vstamp.get_mut(v.id as usize) else {
                    continue;
                };
                if *vs == gen {
                    continue;
                }
                if let Some(exact) = &v.exact {
                    if hay.get(s..e) != Some(&exact[..]) {
                        continue;
                    }
                }
                *vs = gen;
                for &n in v.sigs.iter() {
                    if let Some(st) = stamp.get_mut(n as usize) {
                        if *st != gen {
                            *st = gen;
                            cand.push(n);
                        }
                    }
                }
            }
        });
    }

    #[inline]
    pub(crate) fn sig_matches(
        &self,
        s: &Sig,
        p: &PacketView<'_>,
        vars: Option<&FlowVars>,
        scratch: &mut Scratch,
        env: &MatchEnv,
    ) -> bool {
        if s.mask & p.mask != s.mask {
            return false;
        }
        if s.app
            .as_ref()
            .is_some_and(|a| !a.proto_ok(p.app_proto, p.dir_proto))
        {
            return false;
        }
        if s.require_flowvar && p.has_flow && vars.is_none_or(FlowVars::is_empty) {
            return false;
        }
        if !s.header.matches(p) {
            return false;
        }
        if !s.checks.iter().all(|c| c.matches(p, vars)) {
            return false;
        }
        for sec in s.sections.iter() {
            let buf = p.buffer(sec.buffer);
            if buf.is_empty() || !sec.matcher.matches(buf, scratch, env) {
                return false;
            }
        }
        true
    }

    /// Suricata's `PacketAlertFinalize`: order, thresholds, suppressions, actions, `pass`,
    /// then tag accounting.
    fn finalize(
        &self,
        p: &PacketView<'_>,
        mut flow: Option<&mut FlowInput<'_>>,
        th: &mut DetectThread,
    ) {
        self.alert_queue(p, flow.as_deref_mut(), th);
        if self.has_tags {
            let now = p.ts_ns / 1_000_000_000;
            let len = p.data.len() as u64;
            let mut tagged = false;
            if let Some(v) = flow.and_then(|f| f.state.vars.as_deref_mut()) {
                if !v.tags.is_empty() {
                    tagged |= tag::handle(&mut v.tags, len, now);
                }
            }
            if self.has_host_tags {
                th.host_turn();
                tagged |= th.host.host_tags().handle(p);
            }
            th.tagged = tagged;
        }
    }

    fn alert_queue(
        &self,
        p: &PacketView<'_>,
        mut flow: Option<&mut FlowInput<'_>>,
        th: &mut DetectThread,
    ) {
        if th.queue.is_empty() {
            return;
        }
        th.queue.sort_unstable();
        let max = self.cfg.packet_alert_max;
        for i in 0..th.queue.len() {
            let (n, tx) = th.queue[i];
            let Some(s) = self.sigs.get(n as usize) else {
                continue;
            };
            if s.threshold.is_some() {
                th.host_turn();
            }
            let verdict = self.alert_verdict(s, p, &th.host);
            if verdict == Verdict::Drop {
                continue;
            }
            if let Some(fs) = s.app.as_deref().and_then(|a| a.filestore) {
                if tx < FRAME_BASE {
                    let dirs = fs.dirs.unwrap_or(if p.to_server {
                        [true, false]
                    } else {
                        [false, true]
                    });
                    th.stores.push(FileStoreReq {
                        tx,
                        dirs,
                        scope: fs.scope,
                        sid: s.info.sid,
                    });
                }
            }
            if !s.tags.is_empty() {
                let now = p.ts_ns / 1_000_000_000;
                for t in s.tags.iter() {
                    match t.kind {
                        TagKind::Session => {
                            if let Some(f) = flow.as_deref_mut() {
                                tag::add(
                                    &mut f.state.vars_mut().tags,
                                    t,
                                    s.info.sid,
                                    s.info.gid,
                                    now,
                                );
                            }
                        }
                        TagKind::Host => {
                            th.host_turn();
                            th.host.host_tags().add(t, s.info.sid, s.info.gid, p)
                        }
                    }
                }
            }
            let pass = s.info.action == Action::Pass;
            if pass && s.kind.action_applies_to_flow() {
                if let Some(f) = flow.as_deref_mut() {
                    f.state.flags |= fflag::NO_INSPECT;
                }
            }
            if verdict == Verdict::Silent || s.noalert {
                th.stats.alerts_suppressed += 1;
            } else if th.alerts.len() < max {
                let frame = (FRAME_BASE..STREAM_NO_TX)
                    .contains(&tx)
                    .then(|| th.frame_hits.get((tx - FRAME_BASE) as usize).copied())
                    .flatten();
                th.alerts.push(super::Alert {
                    sig: n,
                    log: !pass,
                    tx: match frame {
                        Some(h) => h.tx,
                        None => (tx < STREAM_NO_TX).then_some(tx),
                    },
                    stream: tx != NO_TX,
                    frame,
                });
                th.stats.alert += 1;
            } else {
                th.stats.alert_queue_overflow += 1;
            }
            if pass {
                break;
            }
        }
    }

    /// Suricata's `PacketAlertHandle`: suppressions first, then the threshold.
    fn alert_verdict(&self, s: &Sig, p: &PacketView<'_>, host: &HostShared) -> Verdict {
        if p.ip_version == 0 {
            return Verdict::Alert;
        }
        for &i in s.suppress.iter() {
            if self.suppress.get(i as usize).is_some_and(|sp| sp.hits(p)) {
                return Verdict::Silent;
            }
        }
        match s.threshold {
            Some(t) => match self.thresholds.get(t as usize) {
                Some(spec) => host.thresholds().handle(t, spec, p),
                None => Verdict::Alert,
            },
            None => Verdict::Alert,
        }
    }
}

/// A matching rule's `pcre` captures take effect (Suricata's post-match
/// `DetectVarProcessList`): flow variables are set on the flow, packet variables join the
/// packet's; the pending captures are cleared.
pub(crate) fn apply_captures(sc: &mut Scratch, mut state: Option<&mut super::FlowDetect>) {
    if sc.captures.is_empty() {
        return;
    }
    let mut caps = std::mem::take(&mut sc.captures);
    for c in caps.drain(..) {
        match c.kind {
            shrike_rules::parse::CaptureKind::Flow => {
                if let Some(st) = state.as_deref_mut() {
                    st.vars_mut().set_str_var(&c.name, &c.value);
                }
            }
            shrike_rules::parse::CaptureKind::Alert => {}
            _ => sc.pkt_vars.push(c),
        }
    }
    sc.captures = caps;
}
