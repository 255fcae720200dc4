//! [`TcpSession`]: the per-flow TCP state the flow table stores, and the data access
//! API the app layer and the detection engine use after [`super::StreamEngine::on_packet`].

use super::reassembly::{sf, StreamBuf};
use shrike_flow::Dir;
use shrike_packet::policy::OsPolicy;

/// TCP session states, in Suricata's order (comparisons such as `>= FinWait1` follow it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum TcpState {
    /// No session (nothing tracked yet).
    #[default]
    None = 0,
    /// Unused by an IDS; kept for Suricata's ordering.
    Listen,
    /// SYN seen.
    SynSent,
    /// SYN/ACK seen.
    SynRecv,
    /// Handshake complete (or picked up midstream).
    Established,
    /// The server sent FIN.
    FinWait1,
    /// The server's FIN was acked.
    FinWait2,
    /// Both FINs exchanged.
    TimeWait,
    /// Last ACK outstanding.
    LastAck,
    /// The client sent FIN.
    CloseWait,
    /// Simultaneous close.
    Closing,
    /// Closed (FIN exchange complete or RST).
    Closed,
}

impl TcpState {
    /// Suricata's name (`established`, `syn_sent` …), as EVE `tcp.state` prints it.
    pub fn name(self) -> &'static str {
        match self {
            TcpState::None => "none",
            TcpState::Listen => "listen",
            TcpState::SynSent => "syn_sent",
            TcpState::SynRecv => "syn_recv",
            TcpState::Established => "established",
            TcpState::FinWait1 => "fin_wait1",
            TcpState::FinWait2 => "fin_wait2",
            TcpState::TimeWait => "time_wait",
            TcpState::LastAck => "last_ack",
            TcpState::CloseWait => "close_wait",
            TcpState::Closing => "closing",
            TcpState::Closed => "closed",
        }
    }
}

/// Which flow timeout applies (Suricata's flow states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowTimeoutState {
    /// `new` timeout: no session or handshake in progress.
    New,
    /// `established` timeout: ESTABLISHED up to CLOSE_WAIT.
    Established,
    /// `closed` timeout: LAST_ACK, TIME_WAIT, CLOSED.
    Closed,
}

/// Session flags.
pub(crate) mod ssf {
    pub const MIDSTREAM: u16 = 1 << 0;
    pub const MIDSTREAM_EST: u16 = 1 << 1;
    pub const MIDSTREAM_SYNACK: u16 = 1 << 2;
    pub const ASYNC: u16 = 1 << 3;
    pub const TIMESTAMP: u16 = 1 << 4;
    pub const SACKOK: u16 = 1 << 5;
    pub const CLIENT_SACKOK: u16 = 1 << 6;
    pub const SERVER_WSCALE: u16 = 1 << 7;
    pub const FOUR_WHS: u16 = 1 << 8;
    pub const TFO: u16 = 1 << 9;
    pub const CLOSED_BY_RST: u16 = 1 << 10;
    /// Roles are reversed relative to the flow's first packet (midstream SYN/ACK pickup).
    pub const SWAPPED: u16 = 1 << 11;
    /// End of stream: all data is released to consumers (flow end, RST).
    pub const EOF: u16 = 1 << 12;
    /// Accounted in the engine (created through it).
    pub const ACCOUNTED: u16 = 1 << 13;
    pub const ZWP_TS: u16 = 1 << 14;
    pub const ZWP_TC: u16 = 1 << 15;
}

/// Per-direction flags.
pub(crate) mod tf {
    pub const RST_RECV: u8 = 1 << 0;
    pub const ZERO_TS: u8 = 1 << 1;
    pub const TS: u8 = 1 << 2;
    /// This sender's FIN was accepted (its sequence number is in `next_seq`).
    pub const FIN: u8 = 1 << 3;
    /// This sender sent a keep-alive (Suricata's `STREAMTCP_STREAM_FLAG_KEEPALIVE`).
    pub const KEEPALIVE: u8 = 1 << 4;
}

/// Sequence tracking of one sender (Suricata's `TcpStream` minus the data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TcpTrack {
    pub isn: u32,
    pub next_seq: u32,
    /// Highest ACK the peer sent for this sender's data.
    pub last_ack: u32,
    /// Right edge of the window this sender may send into.
    pub next_win: u32,
    /// Window (scaled) the peer advertised for this sender's data.
    pub window: u32,
    pub last_ts: u32,
    pub last_pkt_ts: u32,
    /// Shift applied to windows the *peer* of this sender advertises... as Suricata: the
    /// shift for this stream's `window`.
    pub wscale: u8,
    pub flags: u8,
    pub policy: OsPolicy,
}

impl TcpTrack {
    /// This sender's FIN is sent (counted in `next_seq`) and not acknowledged yet.
    pub fn fin_unacked(&self) -> bool {
        self.flags & tf::FIN != 0 && super::seq::lt(self.last_ack, self.next_seq)
    }
}

/// Reassembly state, allocated when the first payload arrives.
#[derive(Debug)]
pub(crate) struct SessionData {
    pub bufs: [StreamBuf; 2],
}

/// Per-flow TCP session. Inline part is small (two sequence trackers and flags); the
/// reassembly buffers are boxed and only exist once data was seen.
#[derive(Debug, Default)]
pub struct TcpSession {
    pub(crate) state: TcpState,
    pub(crate) prev_state: TcpState,
    pub(crate) flags: u16,
    pub(crate) synack_count: u8,
    /// Differing SYNs resent in SYN_SENT (Suricata's SYN queue length).
    pub(crate) syn_queued: u8,
    /// `[client, server]` (TCP roles).
    pub(crate) tracks: [TcpTrack; 2],
    pub(crate) data: Option<Box<SessionData>>,
}

/// What the app layer gets next in one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppChunk<'a> {
    /// In-order data (acked, or any at end of stream). Consume with
    /// [`TcpSession::app_consume`].
    Data(&'a [u8]),
    /// Missing data of this many bytes that was acked (or the stream ended): tell the
    /// parser `gap(len)`, then [`TcpSession::app_consume`] `len`.
    Gap(u32),
    /// Nothing new.
    None,
}

/// The raw stream window of one direction for content inspection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawWindow<'a> {
    /// Stream offset of `data[0]`.
    pub offset: u64,
    /// Contiguous data from the raw progress to the acked limit.
    pub data: &'a [u8],
    /// Suricata would inspect now: at least a chunk of new data is acked, or the stream
    /// ends / closes / reached depth, or a trigger was set.
    pub ready: bool,
}

#[inline]
pub(crate) fn idx(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl TcpSession {
    /// The app-layer protocol of the flow has its own reassembly depth (Suricata's
    /// `app-layer.protocols.<proto>.stream-depth`, 0: unlimited), for both directions.
    pub fn set_app_depth(&mut self, depth: u64) {
        if let Some(d) = self.data.as_mut() {
            for b in d.bufs.iter_mut() {
                b.depth = Some(depth);
            }
        }
    }

    /// Suricata's `TcpSessionSetReassemblyDepth(size)`: the session's depth becomes `size`
    /// when that is larger than its current depth (`current`: the configured one while the
    /// session has none of its own; 0 counts as the smallest) or unlimited (0).
    pub fn raise_app_depth(&mut self, size: u64, current: u64) {
        if let Some(d) = self.data.as_mut() {
            for b in d.bufs.iter_mut() {
                let cur = b.depth.unwrap_or(current);
                if size > cur || size == 0 {
                    b.depth = Some(size);
                }
            }
        }
    }

    /// A fresh (untracked) session.
    pub fn new() -> Self {
        TcpSession::default()
    }

    /// Current TCP state.
    pub fn state(&self) -> TcpState {
        self.state
    }

    /// Which flow timeout applies now.
    pub fn timeout_state(&self) -> FlowTimeoutState {
        match self.state {
            TcpState::None | TcpState::Listen | TcpState::SynSent | TcpState::SynRecv => {
                FlowTimeoutState::New
            }
            TcpState::Established
            | TcpState::FinWait1
            | TcpState::FinWait2
            | TcpState::CloseWait
            | TcpState::Closing => FlowTimeoutState::Established,
            TcpState::LastAck | TcpState::TimeWait | TcpState::Closed => FlowTimeoutState::Closed,
        }
    }

    /// The scaled windows `[client, server]` advertised (Suricata's `ssn->client.window`,
    /// `ssn->server.window`): how much the other side may send before an ACK.
    pub fn advertised_windows(&self) -> [u32; 2] {
        // A track's `window` is what its peer advertised for its data.
        [self.tracks[1].window, self.tracks[0].window]
    }

    /// Whether the session was picked up without a (complete) handshake.
    pub fn is_midstream(&self) -> bool {
        self.flags & ssf::MIDSTREAM != 0
    }

    /// Whether the TCP roles are reversed relative to the flow's first packet (a SYN/ACK
    /// picked up midstream): the flow's "to server" direction carries server data.
    pub fn is_swapped(&self) -> bool {
        self.flags & ssf::SWAPPED != 0
    }

    /// Client and server trade places (Suricata's `TcpStreamFlowSwap`): protocol detection
    /// found that the data of a session picked up midstream runs the other way. The
    /// sequence tracks and the stream data of both directions are exchanged; the state is
    /// kept. The caller reverses the flow's direction too, so packets keep mapping to the
    /// same sender's track.
    pub fn swap_roles(&mut self) {
        self.tracks.swap(0, 1);
        if let Some(d) = self.data.as_mut() {
            d.bufs.swap(0, 1);
        }
        let zwp = self.flags & (ssf::ZWP_TS | ssf::ZWP_TC);
        self.flags &= !(ssf::ZWP_TS | ssf::ZWP_TC);
        if zwp & ssf::ZWP_TS != 0 {
            self.flags |= ssf::ZWP_TC;
        }
        if zwp & ssf::ZWP_TC != 0 {
            self.flags |= ssf::ZWP_TS;
        }
    }

    /// Whether the session was closed by a RST.
    pub fn closed_by_rst(&self) -> bool {
        self.flags & ssf::CLOSED_BY_RST != 0
    }

    /// Whether data was seen (and buffered) in TCP direction `dir`.
    pub fn has_data(&self, dir: Dir) -> bool {
        self.buf(dir).is_some_and(|b| b.flags & sf::HAS_DATA != 0)
    }

    pub(crate) fn buf(&self, dir: Dir) -> Option<&StreamBuf> {
        self.data.as_ref().and_then(|d| d.bufs.get(idx(dir)))
    }

    pub(crate) fn buf_mut(&mut self, dir: Dir) -> Option<&mut StreamBuf> {
        self.data.as_mut().and_then(|d| d.bufs.get_mut(idx(dir)))
    }

    /// Next chunk for the app layer in TCP direction `dir`.
    pub fn app_next(&self, dir: Dir) -> AppChunk<'_> {
        let Some(b) = self.buf(dir) else {
            return AppChunk::None;
        };
        if b.flags & (sf::APP_DISABLED | sf::NOREASSEMBLY) != 0 {
            return AppChunk::None;
        }
        let p = b.app_progress.max(b.base_off);
        let d = b.data_at(p, b.limit);
        if !d.is_empty() {
            return AppChunk::Data(d);
        }
        if p < b.limit && !b.covered(p) {
            if let Some(n) = b.next_block_after(p) {
                let end = n.min(b.limit);
                if end > p {
                    return AppChunk::Gap((end - p).min(u64::from(u32::MAX)) as u32);
                }
            }
        }
        AppChunk::None
    }

    /// Marks `n` bytes (data or gap) of direction `dir` consumed by the app layer.
    pub fn app_consume(&mut self, dir: Dir, n: usize) {
        if let Some(b) = self.buf_mut(dir) {
            b.app_progress = b.app_progress.max(b.base_off) + n as u64;
        }
    }

    /// Calls `f` with each stored block of direction `dir` between stream offsets `from` and
    /// `to` (clipped to what is held), in order, with its offset; stops when `f` returns
    /// true.
    pub fn blocks(&self, dir: Dir, from: u64, to: u64, f: &mut dyn FnMut(u64, &[u8]) -> bool) {
        let Some(b) = self.buf(dir) else {
            return;
        };
        let mut pos = from.max(b.base_off);
        while pos < to {
            let d = b.data_at(pos, to);
            if d.is_empty() {
                match b.next_block_after(pos) {
                    Some(n) if n < to => pos = n,
                    _ => return,
                }
                continue;
            }
            if f(pos, d) {
                return;
            }
            pos += d.len() as u64;
        }
    }

    /// The end of the contiguous data from the start of what direction `dir` holds, acked
    /// or not (Suricata's `StreamTcpGetUsable` at end of stream).
    pub fn contiguous_edge(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| {
            let p = b.app_progress.max(b.base_off);
            let d = b.data_at(p, u64::MAX);
            if d.is_empty() {
                p
            } else {
                p + d.len() as u64
            }
        })
    }

    /// How far data of direction `dir` may be handed out (acked data, or all of it at the
    /// end of the stream).
    pub fn acked_edge(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.limit)
    }

    /// The right edge of the data held in direction `dir`, acked or not (Suricata's
    /// `StreamDataRightEdge` at end of stream).
    pub fn data_right_edge(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.right_edge())
    }

    /// App-layer frames of direction `dir` need the data from `left` on (`None`: no frame
    /// does): pruning keeps it.
    pub fn set_frame_left(&mut self, dir: Dir, left: Option<u64>) {
        if let Some(b) = self.buf_mut(dir) {
            b.frame_left = left;
        }
    }

    /// The stream offset of the next chunk [`TcpSession::app_next`] hands out in direction
    /// `dir`.
    pub fn app_offset(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.app_progress.max(b.base_off))
    }

    /// Whether direction `dir` reached the reassembly depth (data past it was dropped).
    pub fn depth_reached(&self, dir: Dir) -> bool {
        self.buf(dir)
            .is_some_and(|b| b.flags & sf::DEPTH_REACHED != 0)
    }

    /// Stream offset just past the highest byte received in direction `dir`, acked or not
    /// (Suricata's `StreamDataAvailableForProtoDetect` while nothing was consumed).
    pub fn received_end(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.right_edge())
    }

    /// App-layer progress (stream offset) in direction `dir`.
    pub fn app_progress(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.app_progress)
    }

    /// The app layer will not consume direction `dir` (no parser, or detection failed):
    /// data is then kept only for raw inspection.
    pub fn set_app_disabled(&mut self, dir: Dir) {
        if let Some(b) = self.buf_mut(dir) {
            b.flags |= sf::APP_DISABLED;
        }
    }

    /// Raw stream inspection will not consume direction `dir` (no stream rules).
    pub fn set_raw_disabled(&mut self, dir: Dir) {
        if let Some(b) = self.buf_mut(dir) {
            b.flags |= sf::RAW_DISABLED;
        }
    }

    /// Asks for raw inspection of `dir` at the next opportunity regardless of the chunk
    /// size (Suricata: the app layer completed a transaction).
    pub fn trigger_raw(&mut self, dir: Dir) {
        if let Some(b) = self.buf_mut(dir) {
            b.flags |= sf::TRIGGER_RAW;
        }
    }

    /// The raw window of direction `dir` and whether Suricata would inspect it now with
    /// the chunk size `chunk` (see [`super::StreamEngine::raw_window`]).
    pub(crate) fn raw_window_chunk(&self, dir: Dir, chunk: u64) -> RawWindow<'_> {
        let empty = RawWindow {
            offset: 0,
            data: &[],
            ready: false,
        };
        let Some(b) = self.buf(dir) else {
            return empty;
        };
        if b.flags & (sf::RAW_DISABLED | sf::NOREASSEMBLY) != 0 {
            return empty;
        }
        let p = b.raw_progress.max(b.base_off);
        let data = b.data_at(p, b.limit);
        let acked_new = b
            .limit
            .saturating_sub(p)
            .min(b.right_edge().saturating_sub(p));
        let ready = !data.is_empty()
            && (b.flags & (sf::DEPTH_REACHED | sf::TRIGGER_RAW) != 0
                || self.flags & ssf::EOF != 0
                || self.state > TcpState::TimeWait
                || acked_new >= chunk);
        RawWindow {
            offset: p,
            data,
            ready,
        }
    }

    /// Marks `n` raw bytes of direction `dir` inspected (clears the raw trigger).
    pub fn raw_consume(&mut self, dir: Dir, n: usize) {
        if let Some(b) = self.buf_mut(dir) {
            b.raw_progress = b.raw_progress.max(b.base_off) + n as u64;
            b.flags &= !sf::TRIGGER_RAW;
        }
    }

    /// Raw inspection progress (stream offset) in direction `dir`.
    pub fn raw_progress(&self, dir: Dir) -> u64 {
        self.buf(dir).map_or(0, |b| b.raw_progress)
    }

    /// `[client, server]` stream sizes as Suricata's `stream_size` computes them:
    /// `next_seq - isn` of each sender (so the SYN counts as one byte, and a midstream
    /// pickup starts at one). Suricata's `next_seq` takes in a FIN only once the peer
    /// acknowledges it, so a FIN not acked yet is not counted.
    pub fn stream_sizes(&self) -> [u32; 2] {
        let size = |t: &TcpTrack| {
            t.next_seq
                .wrapping_sub(t.isn)
                .wrapping_sub(u32::from(t.fin_unacked()))
        };
        [
            self.tracks.first().map_or(0, size),
            self.tracks.get(1).map_or(0, size),
        ]
    }

    /// Appends Suricata's payload of a stream alert in TCP direction `dir` to `out` (at
    /// most `max` bytes): the data still held from the buffer base up to what the peer
    /// acked (`AlertJsonStreamData`), holes written as `[N bytes missing]`.
    pub fn log_payload(&self, dir: Dir, max: usize, out: &mut Vec<u8>) {
        let Some(b) = self.buf(dir) else {
            return;
        };
        if b.flags & sf::NOREASSEMBLY != 0 {
            return;
        }
        let re = if self.flags & ssf::ASYNC != 0 {
            b.limit
        } else {
            // Suricata's GetAbsLastAck.
            let ack = self.tracks.get(idx(dir)).map_or(0, |t| t.last_ack);
            if super::seq::gt(ack, b.base_seq) {
                b.base_off + u64::from(ack.wrapping_sub(b.base_seq))
            } else {
                b.base_off
            }
        };
        b.log_into(re, max, out);
    }

    /// Most regions Suricata's streaming buffer of TCP direction `dir` would have used
    /// (EVE flow `tcp.ts_max_regions` / `tc_max_regions`; 1 without data).
    pub fn max_regions(&self, dir: Dir) -> u32 {
        self.buf(dir).map_or(1, |b| u32::from(b.max_regions.max(1)))
    }

    /// Whether the app layer met a gap in TCP direction `dir` (EVE flow `tcp.ts_gap` /
    /// `tc_gap`).
    pub fn has_gap(&self, dir: Dir) -> bool {
        self.buf(dir).is_some_and(|b| b.flags & sf::HAS_GAP != 0)
    }

    /// Whether the end of stream was signalled (all data released to consumers).
    pub fn is_eof(&self) -> bool {
        self.flags & ssf::EOF != 0
    }
}
