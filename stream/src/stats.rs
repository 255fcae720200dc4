//! Stream counters with the EVE schema's `stats.tcp.*` and `stats.stream.*` names.

use super::events::{StreamEvent, STREAM_EVENT_COUNT};

/// Per-engine (per-worker) TCP counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamStats {
    /// `tcp.sessions`: sessions created.
    pub sessions: u64,
    /// `tcp.active_sessions`: sessions alive now (gauge).
    pub active_sessions: u64,
    /// `tcp.ssn_memcap_drop`: sessions refused by `stream.memcap`.
    pub ssn_memcap_drop: u64,
    /// `tcp.invalid_checksum`: packets with a bad TCP checksum (not tracked).
    pub invalid_checksum: u64,
    /// `tcp.midstream_pickups`.
    pub midstream_pickups: u64,
    /// `tcp.pseudo`: end-of-stream flushes.
    pub pseudo: u64,
    /// `tcp.syn`.
    pub syn: u64,
    /// `tcp.synack`.
    pub synack: u64,
    /// `tcp.rst`.
    pub rst: u64,
    /// `tcp.urg`.
    pub urg: u64,
    /// `tcp.segment_memcap_drop`: segments refused by `stream.reassembly.memcap`.
    pub segment_memcap_drop: u64,
    /// `tcp.stream_depth_reached`.
    pub stream_depth_reached: u64,
    /// `tcp.reassembly_gap`.
    pub reassembly_gap: u64,
    /// `tcp.overlap`: segments that overlapped stored data.
    pub overlap: u64,
    /// `tcp.overlap_diff_data`: overlaps whose bytes differed.
    pub overlap_diff_data: u64,
    /// `tcp.insert_data_normal_fail`.
    pub insert_data_normal_fail: u64,
    /// `tcp.insert_data_overlap_fail`.
    pub insert_data_overlap_fail: u64,
    /// `tcp.ack_unseen_data`.
    pub ack_unseen_data: u64,
    /// `tcp.memuse`: session memory (gauge, bytes).
    pub memuse: u64,
    /// `tcp.reassembly_memuse`: reassembly memory (gauge, bytes).
    pub reassembly_memuse: u64,
    /// `stream.<event>` counts, indexed by [`StreamEvent::index`].
    pub events: [u64; STREAM_EVENT_COUNT],
}

impl Default for StreamStats {
    fn default() -> Self {
        StreamStats {
            sessions: 0,
            active_sessions: 0,
            ssn_memcap_drop: 0,
            invalid_checksum: 0,
            midstream_pickups: 0,
            pseudo: 0,
            syn: 0,
            synack: 0,
            rst: 0,
            urg: 0,
            segment_memcap_drop: 0,
            stream_depth_reached: 0,
            reassembly_gap: 0,
            overlap: 0,
            overlap_diff_data: 0,
            insert_data_normal_fail: 0,
            insert_data_overlap_fail: 0,
            ack_unseen_data: 0,
            memuse: 0,
            reassembly_memuse: 0,
            events: [0; STREAM_EVENT_COUNT],
        }
    }
}

impl StreamStats {
    /// Calls `f` with each counter's dotted EVE name and value.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("tcp.sessions", self.sessions);
        f("tcp.active_sessions", self.active_sessions);
        f("tcp.ssn_memcap_drop", self.ssn_memcap_drop);
        f("tcp.invalid_checksum", self.invalid_checksum);
        f("tcp.midstream_pickups", self.midstream_pickups);
        f("tcp.pseudo", self.pseudo);
        f("tcp.syn", self.syn);
        f("tcp.synack", self.synack);
        f("tcp.rst", self.rst);
        f("tcp.urg", self.urg);
        f("tcp.segment_memcap_drop", self.segment_memcap_drop);
        f("tcp.stream_depth_reached", self.stream_depth_reached);
        f("tcp.reassembly_gap", self.reassembly_gap);
        f("tcp.overlap", self.overlap);
        f("tcp.overlap_diff_data", self.overlap_diff_data);
        f("tcp.insert_data_normal_fail", self.insert_data_normal_fail);
        f(
            "tcp.insert_data_overlap_fail",
            self.insert_data_overlap_fail,
        );
        f("tcp.ack_unseen_data", self.ack_unseen_data);
        f("tcp.memuse", self.memuse);
        f("tcp.reassembly_memuse", self.reassembly_memuse);
        for e in StreamEvent::ALL {
            f(
                e.stats_name(),
                self.events.get(e.index()).copied().unwrap_or(0),
            );
        }
    }

    /// Adds another engine's snapshot (gauges are summed too).
    pub fn merge(&mut self, o: &Self) {
        self.sessions += o.sessions;
        self.active_sessions += o.active_sessions;
        self.ssn_memcap_drop += o.ssn_memcap_drop;
        self.invalid_checksum += o.invalid_checksum;
        self.midstream_pickups += o.midstream_pickups;
        self.pseudo += o.pseudo;
        self.syn += o.syn;
        self.synack += o.synack;
        self.rst += o.rst;
        self.urg += o.urg;
        self.segment_memcap_drop += o.segment_memcap_drop;
        self.stream_depth_reached += o.stream_depth_reached;
        self.reassembly_gap += o.reassembly_gap;
        self.overlap += o.overlap;
        self.overlap_diff_data += o.overlap_diff_data;
        self.insert_data_normal_fail += o.insert_data_normal_fail;
        self.insert_data_overlap_fail += o.insert_data_overlap_fail;
        self.ack_unseen_data += o.ack_unseen_data;
        self.memuse += o.memuse;
        self.reassembly_memuse += o.reassembly_memuse;
        for (a, b) in self.events.iter_mut().zip(o.events.iter()) {
            *a += *b;
        }
    }

    /// Count of `e`.
    pub fn event(&self, e: StreamEvent) -> u64 {
        self.events.get(e.index()).copied().unwrap_or(0)
    }
}
