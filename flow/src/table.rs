//! The per-worker flow table: a slab of [`Flow`]s, a hash index keyed by the precomputed
//! 64-bit hash and the [`FlowKey`], a bounded capacity, and idle timeouts driven by a
//! [`TimerWheel`] with lazy expiry.
//!
//! A packet never touches the wheel: each flow has one timer, set at
//! `last_seen + timeout(state)`. When it fires the flow is checked again; if it saw
//! traffic since, the timer is re-armed at the new due time, otherwise the flow is handed
//! out with reason "timeout".
//!
//! **Full table.** Every flow is also on one of three intrusive lists over the slab, by
//! state: half-open (new), closed, established. A list is kept in order of activity as a
//! clock ("second chance"): a packet only sets the flow's `touched` bit; whoever looks at
//! the front of a list moves a touched flow to the back (clearing the bit) and looks at the
//! next one. A new flow finding the table full puts the table in **emergency mode** as
//! Suricata does (`flow.emerg_mode_entered`) and takes a used flow as Suricata's
//! `FlowGetUsedFlow` does, but in O(1) amortised (at most [`FORCED_TRIES`] moves per list):
//! it looks at the front (least recently active) flow of each list, half-open first, then
//! closed, then established, and evicts the first one that is not *still alive* (Suricata's
//! `StillAlive`: seen in the last 1 s when new, 3 s when closed, 5 s when established, in
//! whole seconds of packet time; `flow.get_used`, each flow looked at `flow.get_used_eval`,
//! each alive one `flow.get_used_eval_reject`). When every front is still alive the packet
//! gets no flow (`flow.get_used_failed`; the caller inspects it as a packet without a flow).
//! In emergency mode a TCP packet other than a bare SYN creates no flow when the caller asks
//! for that (Suricata's `FlowCreateCheck` with `stream.midstream` on). The `emergency-*`
//! timeouts apply, and [`FlowTable::expire`] also ends the flows at the list fronts that are
//! idle past them (the wheel timers, armed with the normal timeouts, stay lazy). Emergency
//! mode ends (`flow.emerg_mode_over`) once `emergency-recovery` percent of the table is free
//! again.

use hashbrown::HashTable;
use shrike_capture::Timestamp;

use super::key::{Direction, FlowKey};
use super::wheel::{TimerId, TimerWheel};
use crate::config::{FlowConfig, TimeoutProto, Timeouts};
use crate::stats::FlowStats;
use shrike_packet::decode::tcp_flags;

/// Flow state (Suricata's `flow.state` in EVE: new, established, closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowState {
    /// Seen in one direction only (or TCP handshake not complete).
    New,
    /// Seen in both directions (TCP: handshake done or both sides talking).
    Established,
    /// TCP: FIN seen from both sides, or a RST.
    Closed,
}

impl FlowState {
    /// EVE name.
    pub fn name(self) -> &'static str {
        match self {
            FlowState::New => "new",
            FlowState::Established => "established",
            FlowState::Closed => "closed",
        }
    }
}

/// Why a flow left the table (EVE `flow.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// Idle timeout.
    Timeout,
    /// Evicted because the table was full (so in emergency mode: EVE adds
    /// `"emergency": true`, as Suricata does).
    Forced,
    /// Engine shutdown.
    Shutdown,
}

impl EndReason {
    /// EVE name.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Timeout => "timeout",
            EndReason::Forced => "forced",
            EndReason::Shutdown => "shutdown",
        }
    }
}

/// Suricata 7's `FlowGetId` (src/flow.h): the start time's seconds (low 16 bits) and
/// microseconds (low 16 bits) above the 32-bit flow hash, cut to 51 bits for JSON readers.
/// Derived from the flow alone, so it is the same whichever worker holds the flow, and, with
/// file mode's fixed hash seed, the same on every run. Never 0 (EVE omits a zero id).
pub fn flow_id(hash: u64, start: Timestamp) -> u64 {
    let secs = start.0 / 1_000_000_000;
    let usecs = (start.0 % 1_000_000_000) / 1_000;
    let id = ((secs & 0xffff) << 48) | ((usecs & 0xffff) << 32) | (hash & 0xffff_ffff);
    match id & 0x7_ffff_ffff_ffff {
        0 => 1,
        v => v,
    }
}

/// Handle of a flow in its table (slab index + generation); stale handles find nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowHandle {
    idx: u32,
    gen: u32,
}

/// One tracked flow.
#[derive(Clone, Debug)]
pub struct Flow<V> {
    /// Normalised key.
    pub key: FlowKey,
    /// EVE `flow_id`: Suricata 7's `FlowGetId` (start time and flow hash, 51 bits), > 0.
    pub id: u64,
    /// First packet time.
    pub first_ts: Timestamp,
    /// Last packet time.
    pub last_ts: Timestamp,
    /// Packets to server / to client.
    pub pkts: [u64; 2],
    /// Bytes to server / to client.
    pub bytes: [u64; 2],
    /// Which key side is the client: the sender of the first packet (TCP: of the SYN).
    pub client: Direction,
    /// State.
    pub state: FlowState,
    /// TCP flags seen to server / to client.
    pub tcp_flags: [u8; 2],
    /// Lowest and highest TTL (IPv6 hop limit) to server, then to client; 0 until a packet
    /// went that way (see [`Flow::note_ttl`]).
    pub ttl: [u8; 4],
    /// VLAN ids of the flow's first packet, outermost first, and how many (Suricata's
    /// `f->vlan_id`, kept when `vlan.use-for-tracking` leaves them out of the key). Set by
    /// the caller that made the flow.
    pub vlan: ([u16; 3], u8),
    hash: u64,
    timer: Option<TimerId>,
    /// The engine's per-flow state (stream, flowbits, app layer …).
    pub data: V,
}

impl<V> Flow<V> {
    /// Whether a packet in `dir` goes to the server.
    #[inline]
    pub fn to_server(&self, dir: Direction) -> bool {
        dir == self.client
    }

    /// Index into `pkts`/`bytes`/`tcp_flags` for a packet in `dir` (0 to server).
    #[inline]
    pub fn side(&self, dir: Direction) -> usize {
        usize::from(!self.to_server(dir))
    }

    /// Widens the TTL range of `dir` with a packet's TTL (Suricata's `FlowUpdateTtl`).
    #[inline]
    pub fn note_ttl(&mut self, dir: Direction, ttl: u8) {
        let i = self.side(dir) * 2;
        if let Some([min, max]) = self
            .ttl
            .get_mut(i..i + 2)
            .and_then(|s| <&mut [u8; 2]>::try_from(s).ok())
        {
            if *min == 0 || ttl < *min {
                *min = ttl;
            }
            *max = (*max).max(ttl);
        }
    }

    /// `(min, max)` TTL seen to server (`to_server`) or to client; `(0, 0)` when none.
    pub fn ttl_range(&self, to_server: bool) -> (u8, u8) {
        let i = usize::from(!to_server) * 2;
        match self.ttl.get(i..i + 2) {
            Some(&[min, max]) => (min, max),
            _ => (0, 0),
        }
    }
}

#[derive(Debug)]
struct Slot<V> {
    gen: u32,
    /// Neighbours on the slot's state list ([`NIL`] at the ends).
    prev: u32,
    next: u32,
    /// Which list ([`LIST_NEW`] …) the slot is on.
    list: u8,
    /// A packet came since the flow was put at the back of its list.
    touched: bool,
    flow: Option<Flow<V>>,
}

/// No slot.
const NIL: u32 = u32::MAX;
/// Half-open flows (state new): the first to be evicted.
const LIST_NEW: u8 = 0;
/// Closed flows.
const LIST_CLOSED: u8 = 1;
/// Established flows: evicted last.
const LIST_ESTABLISHED: u8 = 2;
const LISTS: usize = 3;

fn list_of(state: FlowState) -> u8 {
    match state {
        FlowState::New => LIST_NEW,
        FlowState::Closed => LIST_CLOSED,
        FlowState::Established => LIST_ESTABLISHED,
    }
}

/// Head and tail of one state list.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY_LIST: List = List {
    head: NIL,
    tail: NIL,
};

/// When a flow last seen at `last` with a timeout of `timeout_ms` is timed out, in
/// milliseconds: Suricata compares whole seconds (`flow.timeout_at = secs(lastts) +
/// timeout`, timed out once `timeout_at < secs(now)`), so a flow is due at the first whole
/// second past `secs(last) + timeout`.
fn due_ms(last: Timestamp, timeout_ms: u64) -> u64 {
    (last.secs() * 1000 + timeout_ms).saturating_add(1000)
}

/// Resolved timeouts per protocol class, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct TimeoutsMs {
    tcp: Timeouts,
    udp: Timeouts,
    icmp: Timeouts,
    other: Timeouts,
}

impl TimeoutsMs {
    fn get(&self, proto: u8, state: FlowState) -> u64 {
        let t = match TimeoutProto::of(proto) {
            TimeoutProto::Tcp => &self.tcp,
            TimeoutProto::Udp => &self.udp,
            TimeoutProto::Icmp => &self.icmp,
            TimeoutProto::Other => &self.other,
        };
        let s = match state {
            FlowState::New => t.new,
            FlowState::Established => t.established,
            FlowState::Closed => t.closed,
        };
        u64::from(s) * 1000
    }
}

/// What a timer of the worker's wheel stands for: a flow's idle timeout, or one of the
/// worker's own periodic jobs (EVE flush, stats), identified by a tag the worker chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Flow(FlowHandle),
    Aux(u32),
}

/// Per-worker flow table holding engine state `V` per flow. Its timer wheel is the worker's
/// only wheel: it drives the flow timeouts and, through [`Self::schedule_aux`], the worker's
/// periodic jobs.
pub struct FlowTable<V> {
    slab: Vec<Slot<V>>,
    free: Vec<u32>,
    index: HashTable<u32>,
    wheel: TimerWheel<Timer>,
    lists: [List; LISTS],
    max_flows: usize,
    timeouts: TimeoutsMs,
    emergency_timeouts: TimeoutsMs,
    /// In emergency mode (the table filled up and has not recovered yet).
    emergency: bool,
    /// Flow count at or below which emergency mode ends.
    recovered_len: usize,
    /// In emergency mode, only a bare TCP SYN may create a TCP flow.
    emergency_syn_only: bool,
    /// A TCP flow whose first packet is a SYN-ACK has the receiver as client (Suricata
    /// swaps such a flow only when its stream engine picks it up: `stream.midstream` or
    /// `async-oneside`; otherwise the first packet's sender is the client).
    synack_client_is_receiver: bool,
    fired: Vec<FlowHandle>,
    aux_fired: Vec<u32>,
    /// Counters (`stats.flow`).
    pub stats: FlowStats,
}

/// Touched flows a forced eviction moves to the back of their list before it takes the
/// front flow regardless.
pub const FORCED_TRIES: usize = 8;

/// Flows at the list fronts an emergency-mode [`FlowTable::expire`] call looks at, at most
/// (beyond those it ends): bounds one call's work.
const EMERGENCY_SCAN: usize = 64;

impl<V> FlowTable<V> {
    /// A table for a worker (the number is kept for the callers' sake: flow ids no longer
    /// depend on it), with `cfg.max_flows` capacity. Nothing is allocated up front.
    pub fn new(cfg: &FlowConfig, _worker: u8) -> Self {
        let t = &cfg.timeouts;
        let max_flows = cfg.max_flows.max(1);
        let recovery = usize::from(cfg.emergency_recovery.clamp(1, 100));
        FlowTable {
            slab: Vec::new(),
            free: Vec::new(),
            index: HashTable::new(),
            wheel: TimerWheel::new(0),
            lists: [EMPTY_LIST; LISTS],
            max_flows,
            timeouts: TimeoutsMs {
                tcp: t.resolve(TimeoutProto::Tcp),
                udp: t.resolve(TimeoutProto::Udp),
                icmp: t.resolve(TimeoutProto::Icmp),
                other: t.resolve(TimeoutProto::Other),
            },
            emergency_timeouts: TimeoutsMs {
                tcp: t.resolve_emergency(TimeoutProto::Tcp),
                udp: t.resolve_emergency(TimeoutProto::Udp),
                icmp: t.resolve_emergency(TimeoutProto::Icmp),
                other: t.resolve_emergency(TimeoutProto::Other),
            },
            emergency: false,
            recovered_len: max_flows - (max_flows * recovery).div_ceil(100),
            emergency_syn_only: false,
            synack_client_is_receiver: true,
            fired: Vec::new(),
            aux_fired: Vec::new(),
            stats: FlowStats::default(),
        }
    }

    /// Number of flows in the table.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether the table is in emergency mode.
    pub fn in_emergency(&self) -> bool {
        self.emergency
    }

    /// In emergency mode, create TCP flows for bare SYNs only (Suricata's `FlowCreateCheck`,
    /// which does so when `stream.midstream` is on: without midstream pick-up the other
    /// packets would start no session anyway).
    pub fn set_emergency_syn_only(&mut self, on: bool) {
        self.emergency_syn_only = on;
    }

    /// Whether a SYN-ACK that creates a TCP flow makes its receiver the client (see
    /// `synack_client_is_receiver`; on by default).
    pub fn set_synack_client_is_receiver(&mut self, on: bool) {
        self.synack_client_is_receiver = on;
    }

    /// The timeouts in force (emergency ones in emergency mode).
    #[inline]
    fn current_timeouts(&self) -> &TimeoutsMs {
        if self.emergency {
            &self.emergency_timeouts
        } else {
            &self.timeouts
        }
    }

    /// Takes slot `i` off its list.
    fn unlink(&mut self, i: u32) {
        let Some(s) = self.slab.get(i as usize) else {
            return;
        };
        let (prev, next, list) = (s.prev, s.next, usize::from(s.list));
        match self.slab.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => {
                if let Some(l) = self.lists.get_mut(list) {
                    l.head = next;
                }
            }
        }
        match self.slab.get_mut(next as usize) {
            Some(n) => n.prev = prev,
            None => {
                if let Some(l) = self.lists.get_mut(list) {
                    l.tail = prev;
                }
            }
        }
    }

    /// Puts slot `i` at the back of list `list`, untouched.
    fn push_back(&mut self, i: u32, list: u8) {
        let Some(l) = self.lists.get_mut(usize::from(list)) else {
            return;
        };
        let tail = l.tail;
        if tail == NIL {
            l.head = i;
        }
        l.tail = i;
        if let Some(t) = self.slab.get_mut(tail as usize) {
            t.next = i;
        }
        if let Some(s) = self.slab.get_mut(i as usize) {
            s.prev = tail;
            s.next = NIL;
            s.list = list;
            s.touched = false;
        }
    }

    /// The front of `list` after moving at most `tries` touched flows to the back: an
    /// untouched flow, or the front one once the tries are spent.
    fn clock_front(&mut self, list: u8, tries: usize) -> Option<u32> {
        for _ in 0..tries {
            let head = self.lists.get(usize::from(list))?.head;
            let s = self.slab.get(head as usize)?;
            if !s.touched {
                return Some(head);
            }
            self.unlink(head);
            self.push_back(head, list);
        }
        let head = self.lists.get(usize::from(list))?.head;
        (head != NIL).then_some(head)
    }

    fn handle_of(&self, i: u32) -> Option<FlowHandle> {
        self.slab
            .get(i as usize)
            .filter(|s| s.flow.is_some())
            .map(|s| FlowHandle { idx: i, gen: s.gen })
    }

    /// The flow behind `h`, if it is still in the table.
    #[inline]
    pub fn get(&self, h: FlowHandle) -> Option<&Flow<V>> {
        self.slab
            .get(h.idx as usize)
            .filter(|s| s.gen == h.gen)
            .and_then(|s| s.flow.as_ref())
    }

    /// Mutable access to the flow behind `h`.
    #[inline]
    pub fn get_mut(&mut self, h: FlowHandle) -> Option<&mut Flow<V>> {
        self.slab
            .get_mut(h.idx as usize)
            .filter(|s| s.gen == h.gen)
            .and_then(|s| s.flow.as_mut())
    }

    /// Looks a flow up without creating it.
    #[inline]
    pub fn find(&self, hash: u64, key: &FlowKey) -> Option<FlowHandle> {
        let slab = &self.slab;
        self.index
            .find(hash, |&i| {
                slab.get(i as usize)
                    .and_then(|s| s.flow.as_ref())
                    .is_some_and(|f| f.key == *key)
            })
            .and_then(|&i| {
                slab.get(i as usize)
                    .map(|s| FlowHandle { idx: i, gen: s.gen })
            })
    }

    /// Finds the flow of `key` or creates it (evicting one that is no longer alive when the
    /// table is full, handed to `evicted` with [`EndReason::Forced`]; a found flow already
    /// timed out at `ts` is handed to it with [`EndReason::Timeout`] and replaced); `None`
    /// when the table is full and every candidate is still alive, or in emergency mode for a
    /// TCP packet that may not create a flow (see the module doc): the packet has no flow.
    /// `dir` and `tcp_flags` of the packet decide the client side of a new flow. Per-packet
    /// accounting is [`Self::update`].
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn get_or_insert(
        &mut self,
        hash: u64,
        key: FlowKey,
        dir: Direction,
        ts: Timestamp,
        tcp: u8,
        init: impl FnOnce() -> V,
        evicted: &mut impl FnMut(Flow<V>, EndReason),
    ) -> Option<(FlowHandle, bool)> {
        if let Some(h) = self.find(hash, &key) {
            let due = self.get(h).map_or(u64::MAX, |f| self.due_ms(f));
            if due > ts.as_millis() {
                return Some((h, false));
            }
            // Timed out by this packet's own time (Suricata's `FlowGetFlowFromHash` checks
            // `FlowIsTimedOut` on lookup): the flow ends and the packet starts a new one. The
            // wheel may not have reached it: packet time can go backwards in a capture, and
            // the worker's clock only moves forward.
            if let Some(f) = self.remove(h) {
                self.stats.timeouts += 1;
                evicted(f, EndReason::Timeout);
            }
        }
        let handshake = tcp_flags::SYN | tcp_flags::ACK | tcp_flags::RST | tcp_flags::FIN;
        if self.emergency
            && self.emergency_syn_only
            && key.proto == 6
            && tcp & handshake != tcp_flags::SYN
        {
            return None;
        }
        if self.index.len() >= self.max_flows {
            if !self.emergency {
                self.emergency = true;
                self.stats.emerg_mode_entered += 1;
            }
            if !self.evict_used(ts, evicted) {
                self.stats.get_used_failed += 1;
                return None;
            }
        }
        Some(self.insert_new(hash, key, dir, ts, tcp, init))
    }

    /// Creates the flow of `key` (the table has room).
    fn insert_new(
        &mut self,
        hash: u64,
        key: FlowKey,
        dir: Direction,
        ts: Timestamp,
        tcp: u8,
        init: impl FnOnce() -> V,
    ) -> (FlowHandle, bool) {
        // The SYN sender is the client; a SYN-ACK comes from the server.
        let syn_ack = tcp_flags::SYN | tcp_flags::ACK;
        let client = if key.proto == 6 && tcp & syn_ack == syn_ack && self.synack_client_is_receiver
        {
            dir.reverse()
        } else {
            dir
        };
        let id = flow_id(hash, ts);
        let flow = Flow {
            key,
            id,
            first_ts: ts,
            last_ts: ts,
            pkts: [0; 2],
            bytes: [0; 2],
            client,
            state: FlowState::New,
            tcp_flags: [0; 2],
            ttl: [0; 4],
            vlan: ([0; 3], 0),
            hash,
            timer: None,
            data: init(),
        };
        let h = match self
            .free
            .pop()
            .and_then(|i| Some((i, self.slab.get_mut(i as usize)?)))
        {
            Some((idx, slot)) => {
                slot.flow = Some(flow);
                FlowHandle { idx, gen: slot.gen }
            }
            None => {
                self.slab.push(Slot {
                    gen: 0,
                    prev: NIL,
                    next: NIL,
                    list: LIST_NEW,
                    touched: false,
                    flow: Some(flow),
                });
                FlowHandle {
                    idx: (self.slab.len() - 1) as u32,
                    gen: 0,
                }
            }
        };
        let idx = h.idx;
        self.push_back(idx, LIST_NEW);
        let slab = &self.slab;
        self.index.insert_unique(hash, idx, |&i| {
            slab.get(i as usize)
                .and_then(|s| s.flow.as_ref())
                .map_or(0, |f| f.hash)
        });
        let due = due_ms(ts, self.current_timeouts().get(key.proto, FlowState::New));
        let timer = self.wheel.schedule(due, Timer::Flow(h));
        if let Some(f) = self.get_mut(h) {
            f.timer = Some(timer);
        }
        self.stats.total += 1;
        match key.proto {
            6 => self.stats.tcp += 1,
            17 => self.stats.udp += 1,
            1 => self.stats.icmpv4 += 1,
            58 => self.stats.icmpv6 += 1,
            _ => {}
        }
        self.stats.active = self.index.len() as u64;
        (h, true)
    }

    /// Accounts one packet of `bytes` bytes in `dir` at `ts` with TCP flags `tcp`: counters,
    /// last-seen time, flags seen and state. Touches no timer.
    #[inline]
    pub fn update(&mut self, h: FlowHandle, dir: Direction, ts: Timestamp, bytes: u32, tcp: u8) {
        self.account(h, dir, ts, bytes, tcp, true);
    }

    /// Sets the state of flow `h` (TCP: from the stream engine's session state), which
    /// picks its timeout from the next check on.
    /// A state written straight into the flow (`Flow::state`) is put on its list here too.
    pub fn set_state(&mut self, h: FlowHandle, state: FlowState) {
        let Some(f) = self.get_mut(h) else { return };
        f.state = state;
        let list = list_of(state);
        if self
            .slab
            .get(h.idx as usize)
            .is_some_and(|s| s.list != list)
        {
            self.unlink(h.idx);
            self.push_back(h.idx, list);
        }
    }

    /// [`Self::update`]; `touch` marks the flow active for the eviction clock (not done
    /// for the packet that created it).
    #[inline]
    fn account(
        &mut self,
        h: FlowHandle,
        dir: Direction,
        ts: Timestamp,
        bytes: u32,
        tcp: u8,
        touch: bool,
    ) {
        let Some(slot) = self.slab.get_mut(h.idx as usize).filter(|s| s.gen == h.gen) else {
            return;
        };
        if touch {
            slot.touched = true;
        }
        let Some(f) = slot.flow.as_mut() else { return };
        let old = f.state;
        let side = f.side(dir);
        if let (Some(p), Some(b), Some(fl)) = (
            f.pkts.get_mut(side),
            f.bytes.get_mut(side),
            f.tcp_flags.get_mut(side),
        ) {
            *p += 1;
            *b += u64::from(bytes);
            *fl |= tcp;
        }
        if ts > f.last_ts {
            f.last_ts = ts;
        }
        let both = f.pkts[0] > 0 && f.pkts[1] > 0;
        f.state = match (f.key.proto, f.state) {
            (_, FlowState::Closed) => FlowState::Closed,
            // TCP: the stream engine's session state decides (Suricata's
            // `StreamTcpPacketSetState`, through [`Self::set_state`]); a flow without a session
            // (no SYN and midstream pickup off) stays new.
            (6, s) => s,
            _ if both => FlowState::Established,
            (_, s) => s,
        };
        if f.state != old {
            let list = list_of(f.state);
            self.unlink(h.idx);
            self.push_back(h.idx, list);
        }
    }

    /// Convenience for the packet path: [`Self::get_or_insert`] then [`Self::update`];
    /// `None`: the packet has no flow.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn packet(
        &mut self,
        hash: u64,
        key: FlowKey,
        dir: Direction,
        ts: Timestamp,
        bytes: u32,
        tcp: u8,
        init: impl FnOnce() -> V,
        evicted: &mut impl FnMut(Flow<V>, EndReason),
    ) -> Option<(FlowHandle, bool)> {
        let (h, created) = self.get_or_insert(hash, key, dir, ts, tcp, init, evicted)?;
        self.account(h, dir, ts, bytes, tcp, !created);
        Some((h, created))
    }

    /// Ends flow `h` because a new TCP session reuses its tuple (Suricata's TCP session
    /// reuse: the old flow times out at once, `flow.tcp_reuse`); the next packet of the
    /// key creates a new flow.
    pub fn reuse(&mut self, h: FlowHandle, out: &mut impl FnMut(Flow<V>, EndReason)) {
        if let Some(f) = self.remove(h) {
            self.stats.tcp_reuse += 1;
            out(f, EndReason::Timeout);
        }
    }

    fn due_ms(&self, f: &Flow<V>) -> u64 {
        due_ms(f.last_ts, self.current_timeouts().get(f.key.proto, f.state))
    }

    /// Takes the flow out of the table and the index (its timer is cancelled).
    fn remove(&mut self, h: FlowHandle) -> Option<Flow<V>> {
        let slot = self
            .slab
            .get_mut(h.idx as usize)
            .filter(|s| s.gen == h.gen)?;
        let f = slot.flow.take()?;
        slot.gen = slot.gen.wrapping_add(1);
        self.unlink(h.idx);
        self.free.push(h.idx);
        if let Ok(e) = self.index.find_entry(f.hash, |&i| i == h.idx) {
            e.remove();
        }
        if let Some(t) = f.timer {
            self.wheel.cancel(t);
        }
        match f.state {
            FlowState::New => self.stats.end_new += 1,
            FlowState::Established => self.stats.end_established += 1,
            FlowState::Closed => self.stats.end_closed += 1,
        }
        self.stats.active = self.index.len() as u64;
        Some(f)
    }

    /// Takes a used flow for a new one in a full table (Suricata's `FlowGetUsedFlow`): the
    /// least recently active half-open flow, else closed one, else established one, if it
    /// is not still alive at `now` (see [`still_alive`]); false when none qualifies. O(1)
    /// amortised; the wheel is not searched.
    fn evict_used(&mut self, now: Timestamp, evicted: &mut impl FnMut(Flow<V>, EndReason)) -> bool {
        let now_s = now.0 / 1_000_000_000;
        let mut looked = 0;
        for list in [LIST_NEW, LIST_CLOSED, LIST_ESTABLISHED] {
            let Some(h) = self
                .clock_front(list, FORCED_TRIES)
                .and_then(|i| self.handle_of(i))
            else {
                continue;
            };
            looked += 1;
            if self.get(h).is_some_and(|f| still_alive(f, now_s)) {
                self.stats.get_used_eval_reject += 1;
                continue;
            }
            if let Some(f) = self.remove(h) {
                self.stats.get_used += 1;
                self.stats.get_used_eval += looked;
                evicted(f, EndReason::Forced);
                return true;
            }
        }
        self.stats.get_used_eval += looked;
        false
    }

    /// Emergency mode: ends the flows at the list fronts idle past their emergency timeout
    /// (the wheel still holds their normal-timeout timers), then leaves emergency mode if
    /// enough of the table is free.
    fn expire_emergency(&mut self, now_ms: u64, out: &mut impl FnMut(Flow<V>, EndReason)) {
        for list in [LIST_NEW, LIST_CLOSED, LIST_ESTABLISHED] {
            let mut looked = 0;
            while looked < EMERGENCY_SCAN {
                let Some(i) = self.clock_front(list, 1) else {
                    break;
                };
                let Some(h) = self.handle_of(i) else { break };
                let touched = self.slab.get(i as usize).is_some_and(|s| s.touched);
                // Suricata's emergency check is `secs(now) >= timeout_at - delta`, i.e.
                // `secs(last) + emergency timeout`, without the normal check's extra second.
                let due = self.get(h).map_or(u64::MAX, |f| {
                    f.last_ts.secs() * 1000 + self.current_timeouts().get(f.key.proto, f.state)
                });
                if touched || due > now_ms {
                    // The front is the least recently active flow of the list (a touched
                    // one only when the move budget ran out): nothing behind it is due.
                    if touched {
                        looked += 1;
                        continue;
                    }
                    break;
                }
                self.stats.checked += 1;
                if let Some(f) = self.remove(h) {
                    self.stats.timeouts += 1;
                    out(f, EndReason::Timeout);
                }
            }
        }
    }

    /// Schedules one of the worker's own jobs (`tag`) at `deadline_ms` on the flow wheel; it
    /// comes back from [`Self::take_aux`] after the [`Self::expire`] call that reaches it.
    pub fn schedule_aux(&mut self, deadline_ms: u64, tag: u32) {
        self.wheel.schedule(deadline_ms, Timer::Aux(tag));
    }

    /// The tags of the worker jobs that fired in the last [`Self::expire`] calls (drained).
    pub fn take_aux(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.aux_fired.drain(..)
    }

    /// Hands out every flow idle past its timeout at `now` (reason "timeout").
    pub fn expire(&mut self, now: Timestamp, out: &mut impl FnMut(Flow<V>, EndReason)) {
        let now_ms = now.as_millis();
        if self.emergency {
            self.expire_emergency(now_ms, out);
        }
        let mut fired = std::mem::take(&mut self.fired);
        let aux = &mut self.aux_fired;
        self.wheel.advance(now_ms, &mut |_, t| match t {
            Timer::Flow(h) => fired.push(h),
            Timer::Aux(tag) => aux.push(tag),
        });
        for h in fired.drain(..) {
            self.stats.checked += 1;
            let Some(due) = self.get(h).map(|f| self.due_ms(f)) else {
                continue;
            };
            if due <= now_ms {
                if let Some(f) = self.get_mut(h) {
                    f.timer = None;
                }
                if let Some(f) = self.remove(h) {
                    self.stats.timeouts += 1;
                    out(f, EndReason::Timeout);
                }
            } else {
                self.stats.notimeout += 1;
                let t = self.wheel.schedule(due, Timer::Flow(h));
                if let Some(f) = self.get_mut(h) {
                    f.timer = Some(t);
                }
            }
        }
        self.fired = fired;
        if self.emergency && self.index.len() <= self.recovered_len {
            // `emergency-recovery` percent of the table is free again.
            self.emergency = false;
            self.stats.emerg_mode_over += 1;
        }
    }

    /// Earliest time (ms) at which [`Self::expire`] may have work: in emergency mode, now
    /// (the list fronts are checked against the emergency timeouts at every call).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        if self.emergency {
            return Some(0);
        }
        self.wheel.next_deadline()
    }

    /// Hands out every flow (reason "shutdown") and empties the table.
    pub fn drain(&mut self, out: &mut impl FnMut(Flow<V>, EndReason)) {
        for i in 0..self.slab.len() {
            let h = match self.slab.get(i) {
                Some(s) if s.flow.is_some() => FlowHandle {
                    idx: i as u32,
                    gen: s.gen,
                },
                _ => continue,
            };
            if let Some(f) = self.remove(h) {
                out(f, EndReason::Shutdown);
            }
        }
        self.emergency = false;
    }

    /// Visit every flow in the table (e.g. to rebind per-flow state after a rule reload).
    /// Keys, timers and the index are untouched.
    pub fn for_each_mut(&mut self, f: &mut impl FnMut(&mut Flow<V>)) {
        for s in self.slab.iter_mut() {
            if let Some(flow) = s.flow.as_mut() {
                f(flow);
            }
        }
    }

    /// Approximate bytes held by the table (slab, index, wheel entries); also published
    /// as `flow.memuse`.
    pub fn memuse(&mut self) -> usize {
        let m = self.slab.capacity() * std::mem::size_of::<Slot<V>>()
            + self.index.capacity() * (std::mem::size_of::<u32>() + 1)
            + self.wheel.len() * WHEEL_BYTES_PER_TIMER;
        self.stats.memuse = m as u64;
        m
    }
}

/// Suricata's `StillAlive` (flow-hash.c): a flow seen within the last second (new), three
/// seconds (closed) or five seconds (established), counted in whole seconds of packet time,
/// is not taken for a new flow.
fn still_alive<V>(f: &Flow<V>, now_s: u64) -> bool {
    let idle = now_s.saturating_sub(f.last_ts.0 / 1_000_000_000);
    idle <= match f.state {
        FlowState::New => 1,
        FlowState::Closed => 3,
        FlowState::Established => 5,
    }
}

/// Wheel bytes per live timer: slab entry plus its slot reference.
pub const WHEEL_BYTES_PER_TIMER: usize = 40;

/// Bytes one flow costs with no engine state: slab slot + index bucket (at hashbrown's
/// 7/8 load) + wheel timer.
pub fn flow_footprint() -> usize {
    std::mem::size_of::<Slot<()>>()
        + (std::mem::size_of::<u32>() + 1) * 8 / 7
        + 1
        + WHEEL_BYTES_PER_TIMER
}
