//! TCP stream engine: Suricata 7's session tracking and reassembly (IDS mode), per worker.
//!
//! * [`TcpSession`] lives in the flow table's per-flow data (about 100 bytes inline; the
//!   reassembly buffers are boxed when the first payload arrives).
//! * [`StreamEngine`] holds the configuration, the `host-os-policy` table, the memcaps and
//!   the counters of one worker. No shared state, no locks.
//! * Per packet: [`StreamEngine::on_packet`], then the app layer drains
//!   [`TcpSession::app_next`] / [`TcpSession::app_consume`] per direction and the detection
//!   engine reads [`StreamEngine::raw_window`] / [`TcpSession::raw_consume`]. At flow end:
//!   [`StreamEngine::flow_end`], drain again, then [`StreamEngine::release`].
//!
//! Directions: `on_packet` takes the *flow's* direction of the packet (the flow table's
//! view, first packet = to server). Everything the session returns is in *TCP roles*
//! ([`StreamResult::tcp_dir`]): they differ only when a session was picked up from a
//! SYN/ACK (or a SYN in the "to client" direction), see [`TcpSession::is_swapped`].
//! See `stream/DESIGN.md` for the full contract.

pub mod config;
pub mod events;
mod options;
pub use shrike_packet::policy;
mod reassembly;
pub mod seq;
mod session;
mod state;
pub mod stats;

pub use config::{ReassemblyConfig, StreamConfig};
pub use events::{StreamEvent, StreamEventSet, STREAM_EVENT_COUNT};
pub use policy::{HostOsPolicy, OsPolicy};
pub use session::{AppChunk, FlowTimeoutState, RawWindow, TcpSession, TcpState};
pub use shrike_flow::Dir;
pub use stats::StreamStats;

use reassembly::{sf, StreamBuf};
use session::{idx, ssf, SessionData};
use shrike_packet::decode::{flags, proto, tcp_flags, PacketKind, PacketMeta};

/// What the engine did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not a decoded TCP packet: nothing done.
    NotTcp,
    /// No session exists or was created (e.g. midstream off, RST without session, bad
    /// checksum, memcap): the packet is inspected as a packet only.
    NoSession,
    /// The packet was valid for the session and updated it.
    Accepted,
    /// The session rejected the packet (invalid, out of window, retransmission …): the
    /// session and the stream data are unchanged.
    Rejected,
}

/// Result of [`StreamEngine::on_packet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamResult {
    /// Accepted or not.
    pub verdict: Verdict,
    /// Stream events raised by this packet (Suricata's `stream-event:` names).
    pub events: StreamEventSet,
    /// The packet's direction in TCP roles (to server = sent by the client).
    pub tcp_dir: Dir,
    /// The packet created the session.
    pub new_session: bool,
    /// App-layer data (or a gap) is pending in `[to server, to client]` (TCP roles).
    pub app_pending: [bool; 2],
    /// The packet's payload was handed to reassembly (Suricata's `PKT_STREAM_ADD`): payload
    /// rules then inspect it through the stream, not as packet payload.
    pub added: bool,
}

impl StreamResult {
    fn new(verdict: Verdict, tcp_dir: Dir) -> Self {
        StreamResult {
            verdict,
            events: StreamEventSet::EMPTY,
            tcp_dir,
            new_session: false,
            app_pending: [false; 2],
            added: false,
        }
    }

    /// Whether app-layer data or a gap is pending in TCP direction `dir`.
    pub fn app_pending(&self, dir: Dir) -> bool {
        self.app_pending.get(idx(dir)).copied().unwrap_or(false)
    }
}

/// The other direction.
pub fn flip(d: Dir) -> Dir {
    match d {
        Dir::ToServer => Dir::ToClient,
        Dir::ToClient => Dir::ToServer,
    }
}

/// One worker's stream engine.
#[derive(Debug)]
pub struct StreamEngine {
    pub(crate) cfg: StreamConfig,
    pub(crate) hosts: HostOsPolicy,
    /// Counters (`stats.tcp.*`, `stats.stream.*`).
    pub stats: StreamStats,
    pub(crate) scratch: Vec<u8>,
    /// Set by `handle_data` when the current packet's payload went into a buffer.
    pub(crate) added: bool,
}

/// The fields of one TCP packet the state machine uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pkt<'a> {
    /// Role index of the sender: 0 client, 1 server.
    pub d: usize,
    pub seq: u32,
    pub ack: u32,
    pub win: u32,
    pub flags: u8,
    pub payload: &'a [u8],
    pub opts: options::TcpOpts,
    pub secs: u32,
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub v6: bool,
}

impl Pkt<'_> {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn len(&self) -> u32 {
        self.payload.len() as u32
    }
    #[inline]
    pub fn end(&self) -> u32 {
        self.seq.wrapping_add(self.len())
    }
}

fn role_dir(d: usize) -> Dir {
    if d == 0 {
        Dir::ToServer
    } else {
        Dir::ToClient
    }
}

impl StreamEngine {
    /// An engine with `cfg` and the `host-os-policy` table `hosts`.
    pub fn new(cfg: StreamConfig, hosts: HostOsPolicy) -> Self {
        StreamEngine {
            cfg,
            hosts,
            stats: StreamStats::default(),
            scratch: Vec::with_capacity(65_536),
            added: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StreamConfig {
        &self.cfg
    }

    /// Counts a TCP packet's SYN, SYN/ACK, RST and URG flags (`tcp.syn` …: decoder counters
    /// in Suricata, so also for a packet that has no flow and never reaches a session).
    pub fn count_tcp_flags(&mut self, meta: &PacketMeta) {
        let tf = meta.tcp_flags;
        if tf & tcp_flags::SYN != 0 {
            if tf & tcp_flags::ACK != 0 {
                self.stats.synack += 1;
            } else {
                self.stats.syn += 1;
            }
        }
        if tf & tcp_flags::RST != 0 {
            self.stats.rst += 1;
        }
        if tf & tcp_flags::URG != 0 {
            self.stats.urg += 1;
        }
    }

    /// Processes one packet of the flow owning `s`. `flow_dir` is the flow table's
    /// direction of the packet, `ts_secs` the packet time in seconds (for PAWS).
    pub fn on_packet(
        &mut self,
        s: &mut TcpSession,
        meta: &PacketMeta,
        pkt: &[u8],
        flow_dir: Dir,
        ts_secs: u32,
    ) -> StreamResult {
        if meta.kind != PacketKind::L4 || meta.proto != proto::TCP {
            return StreamResult::new(Verdict::NotTcp, flow_dir);
        }
        self.count_tcp_flags(meta);
        let tf = meta.tcp_flags;
        let mut res = StreamResult::new(Verdict::NoSession, flow_dir);
        if tf & tcp_flags::ACK == 0 && meta.tcp_ack() != 0 {
            res.events.insert(StreamEvent::PktBrokenAck);
        }
        if meta.has(flags::L4_CSUM_BAD) {
            self.stats.invalid_checksum += 1;
            self.count_events(res.events);
            return res;
        }
        self.prune(s);
        let role = if s.is_swapped() {
            flip(flow_dir)
        } else {
            flow_dir
        };
        let p = Pkt {
            d: idx(role),
            seq: meta.tcp_seq(),
            ack: meta.tcp_ack(),
            win: u32::from(meta.tcp_win),
            flags: tf,
            payload: meta.payload(pkt),
            opts: options::read(meta, pkt),
            secs: ts_secs,
            src: meta.src,
            dst: meta.dst,
            v6: meta.has(flags::IPV6),
        };
        self.added = false;
        let had = s.state != TcpState::None;
        let verdict = if !had {
            let v = self.state_none(s, &p, flow_dir, &mut res.events);
            res.new_session = s.state != TcpState::None;
            v
        } else {
            self.dispatch(s, &p, &mut res.events)
        };
        res.verdict = verdict;
        res.added = self.added;
        res.tcp_dir = if s.is_swapped() {
            flip(flow_dir)
        } else {
            flow_dir
        };
        if s.state != TcpState::None {
            self.finalize(s, &mut res);
        }
        self.count_events(res.events);
        res
    }

    fn count_events(&mut self, ev: StreamEventSet) {
        if ev.is_empty() {
            return;
        }
        for e in ev.iter() {
            if let Some(c) = self.stats.events.get_mut(e.index()) {
                *c += 1;
            }
        }
    }

    /// The raw stream window of TCP direction `dir` (Suricata's `StreamReassembleRaw` with
    /// the configured chunk size). In IDS mode Suricata inspects it with packets of the
    /// same direction once `ready`; mark what was inspected with
    /// [`TcpSession::raw_consume`].
    pub fn raw_window<'s>(&self, s: &'s TcpSession, dir: Dir) -> RawWindow<'s> {
        let chunk = match dir {
            Dir::ToServer => self.cfg.reassembly.toserver_chunk_size,
            Dir::ToClient => self.cfg.reassembly.toclient_chunk_size,
        };
        s.raw_window_chunk(dir, chunk)
    }

    /// End of stream (flow timeout or eviction, end of input): releases all buffered
    /// data, acked or not, to the app layer and raw inspection (Suricata's pseudo
    /// packets). Drain `app_next` and `raw_window` afterwards, then call
    /// [`Self::release`].
    pub fn flow_end(&mut self, s: &mut TcpSession) {
        if s.state == TcpState::None || s.flags & ssf::EOF != 0 {
            return;
        }
        s.flags |= ssf::EOF;
        self.stats.pseudo += 1;
        let mut res = StreamResult::new(Verdict::Accepted, Dir::ToServer);
        self.finalize(s, &mut res);
        self.count_events(res.events);
    }

    /// Frees the session's memory and resets it (call when the flow is freed).
    pub fn release(&mut self, s: &mut TcpSession) {
        if let Some(d) = s.data.take() {
            let m = d.bufs.iter().map(StreamBuf::mem).sum::<usize>() + data_cost();
            self.stats.reassembly_memuse = self.stats.reassembly_memuse.saturating_sub(m as u64);
        }
        if s.flags & ssf::ACCOUNTED != 0 {
            self.stats.memuse = self.stats.memuse.saturating_sub(ssn_cost());
            self.stats.active_sessions = self.stats.active_sessions.saturating_sub(1);
        }
        *s = TcpSession::default();
    }

    /// Suricata's `TcpSessionPacketSsnReuse`: whether `meta` starts a new TCP session on
    /// the tuple of a flow whose session `s` (`None`: no session) is done enough, so the
    /// flow table should end the old flow and start a new one with this packet.
    /// `flow_dir` is the packet's direction in the flow. A SYN starts one when the session
    /// is absent or in LAST_ACK or later (CLOSE_WAIT, CLOSING, CLOSED; not TIME_WAIT), and
    /// a client SYN must carry a new ISN; with midstream or async-oneside a SYN/ACK does
    /// too (a server SYN/ACK needs a new ISN and a session).
    pub fn is_session_reuse(
        &self,
        s: Option<&TcpSession>,
        meta: &PacketMeta,
        flow_dir: Dir,
    ) -> bool {
        let tf = meta.tcp_flags;
        if meta.kind != PacketKind::L4 || meta.proto != proto::TCP {
            return false;
        }
        if tf & (tcp_flags::RST | tcp_flags::FIN) != 0 {
            return false;
        }
        let syn_ack = tcp_flags::SYN | tcp_flags::ACK;
        let syn = tf & syn_ack == tcp_flags::SYN;
        let synack = tf & syn_ack == syn_ack && (self.cfg.midstream || self.cfg.async_oneside);
        if !syn && !synack {
            return false;
        }
        let s = s.filter(|s| s.state != TcpState::None);
        // The packet's direction in TCP roles (the flow's when there is no session).
        let to_server = match s {
            Some(s) if s.is_swapped() => flow_dir == Dir::ToClient,
            _ => flow_dir == Dir::ToServer,
        };
        let Some(s) = s else {
            // No session: reuse, except for a SYN/ACK from the server.
            return syn || to_server;
        };
        let done = s.state >= TcpState::LastAck;
        let seq = meta.tcp_seq();
        match (syn, to_server) {
            (true, true) => s.tracks.first().is_some_and(|c| c.isn != seq) && done,
            (false, false) => s.tracks.get(1).is_some_and(|v| v.isn != seq) && done,
            _ => done,
        }
    }

    /// Releases data every live consumer is done with; ends reassembly of a direction
    /// whose depth is consumed or whose consumers are both disabled. `on_packet` runs it
    /// first; call it after draining to free memory sooner.
    pub fn prune(&mut self, s: &mut TcpSession) {
        // Both FINs exchanged (or reset): once everything is consumed the buffers are
        // freed rather than kept for data that is not coming.
        let closing = matches!(s.state, TcpState::TimeWait | TcpState::Closed);
        let Some(data) = s.data.as_mut() else {
            return;
        };
        for b in data.bufs.iter_mut() {
            if b.flags & sf::NOREASSEMBLY != 0 {
                continue;
            }
            let app = b.flags & sf::APP_DISABLED == 0;
            let raw = b.flags & sf::RAW_DISABLED == 0;
            let left = match (app, raw) {
                (true, true) => b.app_progress.min(b.raw_progress),
                (true, false) => b.app_progress,
                (false, true) => b.raw_progress,
                (false, false) => {
                    let before = b.mem();
                    b.clear();
                    self.stats.reassembly_memuse =
                        self.stats.reassembly_memuse.saturating_sub(before as u64);
                    continue;
                }
            };
            let left = b.frame_left.map_or(left, |f| left.min(f));
            let done = b.flags & sf::DEPTH_REACHED != 0 && left >= b.right_edge();
            let shed = closing && b.holds_storage() && left >= b.right_edge();
            if !done && !shed && left <= b.base_off {
                // Nothing new consumed: nothing to release (and no need to walk the
                // buffer's memory accounting on every packet).
                continue;
            }
            let before = b.mem();
            if done {
                b.clear();
                self.stats.reassembly_memuse =
                    self.stats.reassembly_memuse.saturating_sub(before as u64);
                continue;
            }
            b.prune(left);
            if shed {
                b.free_storage();
            }
            let after = b.mem();
            self.stats.reassembly_memuse =
                (self.stats.reassembly_memuse + after as u64).saturating_sub(before as u64);
        }
    }

    /// Updates the consumer limits, reports gaps and skips raw holes after a packet.
    fn finalize(&mut self, s: &mut TcpSession, res: &mut StreamResult) {
        let eof = s.flags & ssf::EOF != 0;
        let asyn = s.flags & ssf::ASYNC != 0;
        let acks = [
            s.tracks.first().map_or(0, |t| t.last_ack),
            s.tracks.get(1).map_or(0, |t| t.last_ack),
        ];
        let inline = self.cfg.inline;
        let pkt_dir = idx(res.tcp_dir);
        let added = res.added;
        let Some(data) = s.data.as_mut() else {
            return;
        };
        for (i, b) in data.bufs.iter_mut().enumerate() {
            if b.flags & sf::NOREASSEMBLY != 0 {
                continue;
            }
            b.limit = if eof || asyn {
                u64::MAX
            } else {
                b.off_of(acks.get(i).copied().unwrap_or(0))
                    .unwrap_or(b.base_off)
                    .max(b.limit)
            };
            if inline && i == pkt_dir && b.limit != u64::MAX {
                // Inline: the packet's direction is released up to the end of its in-order
                // data (Suricata's `UPDATE_DIR_PACKET` without the ack limit), and a packet
                // that added data is inspected raw with it (`StreamReassembleRawInline`).
                let from = b.app_progress.min(b.raw_progress).max(b.base_off);
                let end = from + b.data_at(from, u64::MAX).len() as u64;
                b.limit = b.limit.max(end);
                if added {
                    b.flags |= sf::TRIGGER_RAW;
                }
            }
            // Raw inspection skips acked holes.
            let rp = b.raw_progress.max(b.base_off);
            if rp < b.limit && !b.covered(rp) {
                if let Some(n) = b.next_block_after(rp) {
                    if n <= b.limit {
                        b.raw_progress = n;
                    }
                }
            }
        }
        for d in [Dir::ToServer, Dir::ToClient] {
            let chunk = s.app_next(d);
            let i = idx(d);
            if let Some(slot) = res.app_pending.get_mut(i) {
                *slot = chunk != AppChunk::None;
            }
            // A hole the app layer will reach with this update: acked (or at end of
            // stream) and followed by data.
            if let Some(b) = s.buf_mut(d) {
                if b.flags & (sf::APP_DISABLED | sf::NOREASSEMBLY) != 0 {
                    continue;
                }
                let mut q = b.app_progress.max(b.base_off);
                q += b.data_at(q, b.limit).len() as u64;
                if q < b.limit
                    && !b.covered(q)
                    && b.next_block_after(q).is_some()
                    && b.gap_reported != q
                {
                    b.gap_reported = q;
                    b.flags |= sf::HAS_GAP;
                    res.events.insert(StreamEvent::ReassemblySeqGap);
                    self.stats.reassembly_gap += 1;
                }
            }
        }
    }

    /// Stores the payload of `p` in its direction's buffer.
    pub(crate) fn handle_data(&mut self, s: &mut TcpSession, p: &Pkt<'_>, ev: &mut StreamEventSet) {
        if p.payload.is_empty() {
            return;
        }
        if s.data.is_none() {
            let cost = data_cost() as u64;
            if self.stats.reassembly_memuse + cost > self.cfg.reassembly.memcap {
                self.stats.segment_memcap_drop += 1;
                ev.insert(StreamEvent::ReassemblyInsertMemcap);
                return;
            }
            self.stats.reassembly_memuse += cost;
            let c = s.tracks.first().map_or(0, |t| t.isn.wrapping_add(1));
            let v = s.tracks.get(1).map_or(0, |t| t.isn.wrapping_add(1));
            s.data = Some(Box::new(SessionData {
                bufs: [StreamBuf::new(c), StreamBuf::new(v)],
            }));
        }
        let policy = s.tracks.get(p.d).map_or(OsPolicy::Bsd, |t| t.policy);
        let need = s
            .data
            .as_ref()
            .and_then(|d| d.bufs.get(p.d))
            .map_or(0, |b| b.growth(p.seq, p.payload.len())) as u64;
        if self.stats.reassembly_memuse + need > self.cfg.reassembly.memcap {
            self.stats.segment_memcap_drop += 1;
            ev.insert(StreamEvent::ReassemblyInsertMemcap);
            return;
        }
        let check = self.cfg.reassembly.check_overlap_different_data;
        let Some(b) = s.data.as_mut().and_then(|d| d.bufs.get_mut(p.d)) else {
            return;
        };
        let depth = b.depth.unwrap_or(self.cfg.reassembly.depth);
        let before = b.mem();
        let o = b.insert(p.seq, p.payload, policy, depth, check, &mut self.scratch);
        self.added = !o.before_base;
        let after = b.mem();
        self.stats.reassembly_memuse =
            (self.stats.reassembly_memuse + after as u64).saturating_sub(before as u64);
        if o.before_base {
            ev.insert(StreamEvent::ReassemblySegmentBeforeBaseSeq);
        }
        if o.overlap {
            self.stats.overlap += 1;
        }
        if o.diff {
            self.stats.overlap_diff_data += 1;
            ev.insert(StreamEvent::ReassemblyOverlapDifferentData);
        }
        if o.depth_reached {
            self.stats.stream_depth_reached += 1;
            ev.insert(StreamEvent::ReassemblyDepthReached);
        }
    }

    /// Re-bases buffers that hold no data yet on the (now known) ISNs.
    pub(crate) fn sync_base(s: &mut TcpSession) {
        let isns = [
            s.tracks.first().map_or(0, |t| t.isn),
            s.tracks.get(1).map_or(0, |t| t.isn),
        ];
        if let Some(d) = s.data.as_mut() {
            for (b, isn) in d.bufs.iter_mut().zip(isns) {
                if b.flags & sf::HAS_DATA == 0 {
                    b.base_seq = isn.wrapping_add(1);
                }
            }
        }
    }

    /// Creates the session's accounting; false (and `tcp.ssn_memcap_drop`) over memcap.
    pub(crate) fn create(
        &mut self,
        s: &mut TcpSession,
        p: &Pkt<'_>,
        client_is_sender: bool,
    ) -> bool {
        if self.stats.memuse + ssn_cost() > self.cfg.memcap {
            self.stats.ssn_memcap_drop += 1;
            return false;
        }
        self.stats.memuse += ssn_cost();
        self.stats.sessions += 1;
        self.stats.active_sessions += 1;
        s.flags |= ssf::ACCOUNTED;
        let (client, server) = if client_is_sender {
            (p.src, p.dst)
        } else {
            (p.dst, p.src)
        };
        // Each stream uses the policy of the host receiving its data.
        if let Some(t) = s.tracks.get_mut(0) {
            t.policy = self.hosts.lookup(&server, p.v6);
        }
        if let Some(t) = s.tracks.get_mut(1) {
            t.policy = self.hosts.lookup(&client, p.v6);
        }
        true
    }
}

/// Bytes charged to `tcp.memuse` per session.
pub(crate) fn ssn_cost() -> u64 {
    std::mem::size_of::<TcpSession>() as u64
}

/// Bytes charged to `tcp.reassembly_memuse` for the boxed buffers.
pub(crate) fn data_cost() -> usize {
    std::mem::size_of::<SessionData>()
}

#[allow(dead_code)]
pub(crate) fn dir_of(d: usize) -> Dir {
    role_dir(d)
}
