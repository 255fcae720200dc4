//! Stream events: Suricata's `stream-event:` names (`stream-events.rules`) and the EVE
//! `stats.stream.*` counter names.
//!
//! [`StreamEvent`] is a dense enum; [`StreamEventSet`] holds one bit per event (`Copy`, no
//! allocation). Two events carry a different rule name and stats name in Suricata:
//! `3whs_synack_resend_with_different_ack` (stats `3whs_synack_resend_with_diff_ack`) and
//! `est_synack_resend_with_different_ack` (stats `est_synack_resend_with_diff_ack`);
//! [`StreamEvent::from_name`] accepts both spellings.

macro_rules! stream_events {
    ($($variant:ident => $name:literal, $stat:literal;)*) => {
        /// One stream event (the `stream-event:` name is in each variant's docs).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum StreamEvent {
            $(
                #[doc = $name]
                $variant,
            )*
        }

        impl StreamEvent {
            /// Every event, in table order (`ALL[e as usize] == e`).
            pub const ALL: &'static [StreamEvent] = &[$(StreamEvent::$variant,)*];

            /// The rule-keyword name, e.g. `est_packet_out_of_window`.
            pub const fn name(self) -> &'static str {
                match self { $(StreamEvent::$variant => $name,)* }
            }

            /// The EVE stats counter name, e.g. `stream.est_packet_out_of_window`.
            pub const fn stats_name(self) -> &'static str {
                match self { $(StreamEvent::$variant => concat!("stream.", $stat),)* }
            }
        }
    };
}

stream_events! {
    ThreeWhsAckInWrongDir => "3whs_ack_in_wrong_dir", "3whs_ack_in_wrong_dir";
    ThreeWhsAsyncWrongSeq => "3whs_async_wrong_seq", "3whs_async_wrong_seq";
    ThreeWhsRightSeqWrongAckEvasion => "3whs_right_seq_wrong_ack_evasion", "3whs_right_seq_wrong_ack_evasion";
    ThreeWhsSynackInWrongDirection => "3whs_synack_in_wrong_direction", "3whs_synack_in_wrong_direction";
    ThreeWhsSynackResendWithDiffAck => "3whs_synack_resend_with_different_ack", "3whs_synack_resend_with_diff_ack";
    ThreeWhsSynackResendWithDiffSeq => "3whs_synack_resend_with_diff_seq", "3whs_synack_resend_with_diff_seq";
    ThreeWhsSynackToserverOnSynRecv => "3whs_synack_toserver_on_syn_recv", "3whs_synack_toserver_on_syn_recv";
    ThreeWhsSynackWithWrongAck => "3whs_synack_with_wrong_ack", "3whs_synack_with_wrong_ack";
    ThreeWhsSynackFlood => "3whs_synack_flood", "3whs_synack_flood";
    ThreeWhsSynackTfoDataIgnored => "3whs_synack_tfo_data_ignored", "3whs_synack_tfo_data_ignored";
    ThreeWhsSynFlood => "3whs_syn_flood", "3whs_syn_flood";
    ThreeWhsSynResendDiffSeqOnSynRecv => "3whs_syn_resend_diff_seq_on_syn_recv", "3whs_syn_resend_diff_seq_on_syn_recv";
    ThreeWhsSynToclientOnSynRecv => "3whs_syn_toclient_on_syn_recv", "3whs_syn_toclient_on_syn_recv";
    ThreeWhsWrongSeqWrongAck => "3whs_wrong_seq_wrong_ack", "3whs_wrong_seq_wrong_ack";
    ThreeWhsAckDataInject => "3whs_ack_data_inject", "3whs_ack_data_inject";
    FourWhsSynackWithWrongAck => "4whs_synack_with_wrong_ack", "4whs_synack_with_wrong_ack";
    FourWhsSynackWithWrongSyn => "4whs_synack_with_wrong_syn", "4whs_synack_with_wrong_syn";
    FourWhsWrongSeq => "4whs_wrong_seq", "4whs_wrong_seq";
    FourWhsInvalidAck => "4whs_invalid_ack", "4whs_invalid_ack";
    ClosewaitAckOutOfWindow => "closewait_ack_out_of_window", "closewait_ack_out_of_window";
    ClosewaitFinOutOfWindow => "closewait_fin_out_of_window", "closewait_fin_out_of_window";
    ClosewaitPktBeforeLastAck => "closewait_pkt_before_last_ack", "closewait_pkt_before_last_ack";
    ClosewaitInvalidAck => "closewait_invalid_ack", "closewait_invalid_ack";
    ClosingAckWrongSeq => "closing_ack_wrong_seq", "closing_ack_wrong_seq";
    ClosingInvalidAck => "closing_invalid_ack", "closing_invalid_ack";
    EstPacketOutOfWindow => "est_packet_out_of_window", "est_packet_out_of_window";
    EstPktBeforeLastAck => "est_pkt_before_last_ack", "est_pkt_before_last_ack";
    EstSynackResend => "est_synack_resend", "est_synack_resend";
    EstSynackResendWithDiffAck => "est_synack_resend_with_different_ack", "est_synack_resend_with_diff_ack";
    EstSynackResendWithDiffSeq => "est_synack_resend_with_diff_seq", "est_synack_resend_with_diff_seq";
    EstSynackToserver => "est_synack_toserver", "est_synack_toserver";
    EstSynResend => "est_syn_resend", "est_syn_resend";
    EstSynResendDiffSeq => "est_syn_resend_diff_seq", "est_syn_resend_diff_seq";
    EstSynToclient => "est_syn_toclient", "est_syn_toclient";
    EstInvalidAck => "est_invalid_ack", "est_invalid_ack";
    EstAckZwpData => "est_ack_zwp_data", "est_ack_zwp_data";
    FinInvalidAck => "fin_invalid_ack", "fin_invalid_ack";
    Fin1AckWrongSeq => "fin1_ack_wrong_seq", "fin1_ack_wrong_seq";
    Fin1FinWrongSeq => "fin1_fin_wrong_seq", "fin1_fin_wrong_seq";
    Fin1InvalidAck => "fin1_invalid_ack", "fin1_invalid_ack";
    Fin2AckWrongSeq => "fin2_ack_wrong_seq", "fin2_ack_wrong_seq";
    Fin2FinWrongSeq => "fin2_fin_wrong_seq", "fin2_fin_wrong_seq";
    Fin2InvalidAck => "fin2_invalid_ack", "fin2_invalid_ack";
    FinButNoSession => "fin_but_no_session", "fin_but_no_session";
    FinOutOfWindow => "fin_out_of_window", "fin_out_of_window";
    FinSyn => "fin_syn", "fin_syn";
    LastackAckWrongSeq => "lastack_ack_wrong_seq", "lastack_ack_wrong_seq";
    LastackInvalidAck => "lastack_invalid_ack", "lastack_invalid_ack";
    RstButNoSession => "rst_but_no_session", "rst_but_no_session";
    TimewaitAckWrongSeq => "timewait_ack_wrong_seq", "timewait_ack_wrong_seq";
    TimewaitInvalidAck => "timewait_invalid_ack", "timewait_invalid_ack";
    ShutdownSynResend => "shutdown_syn_resend", "shutdown_syn_resend";
    PktInvalidTimestamp => "pkt_invalid_timestamp", "pkt_invalid_timestamp";
    PktInvalidAck => "pkt_invalid_ack", "pkt_invalid_ack";
    PktBrokenAck => "pkt_broken_ack", "pkt_broken_ack";
    RstInvalidAck => "rst_invalid_ack", "rst_invalid_ack";
    RstWithData => "rst_with_data", "rst_with_data";
    PktRetransmission => "pkt_retransmission", "pkt_retransmission";
    PktSpuriousRetransmission => "pkt_spurious_retransmission", "pkt_spurious_retransmission";
    PktBadWindowUpdate => "pkt_bad_window_update", "pkt_bad_window_update";
    SuspectedRstInject => "suspected_rst_inject", "suspected_rst_inject";
    WrongThread => "wrong_thread", "wrong_thread";
    ReassemblyNoSegment => "reassembly_no_segment", "reassembly_no_segment";
    ReassemblySeqGap => "reassembly_seq_gap", "reassembly_seq_gap";
    ReassemblyOverlapDifferentData => "reassembly_overlap_different_data", "reassembly_overlap_different_data";
    ReassemblySegmentBeforeBaseSeq => "reassembly_segment_before_base_seq", "reassembly_segment_before_base_seq";
    ReassemblyDepthReached => "reassembly_depth_reached", "reassembly_depth_reached";
    ReassemblyInsertMemcap => "reassembly_insert_memcap", "reassembly_insert_memcap";
    ReassemblyInsertLimit => "reassembly_insert_limit", "reassembly_insert_limit";
    ReassemblyInsertInvalid => "reassembly_insert_invalid", "reassembly_insert_invalid";
    ReassemblyUrgentOobLimitReached => "reassembly_urgent_oob_limit_reached", "reassembly_urgent_oob_limit_reached";
}

/// Number of stream events.
pub const STREAM_EVENT_COUNT: usize = StreamEvent::ALL.len();

impl StreamEvent {
    /// Looks an event up by its rule name or stats name, with or without the `stream.`
    /// prefix (`est_packet_out_of_window`, `stream.est_packet_out_of_window`,
    /// `3whs_synack_resend_with_diff_ack`).
    pub fn from_name(name: &str) -> Option<StreamEvent> {
        let name = name.trim();
        let name = name.strip_prefix("stream.").unwrap_or(name);
        StreamEvent::ALL
            .iter()
            .copied()
            .find(|e| e.name() == name || e.stats_name().strip_prefix("stream.") == Some(name))
    }

    /// Dense index (`0..STREAM_EVENT_COUNT`).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for StreamEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`StreamEvent`]s, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StreamEventSet(u128);

impl StreamEventSet {
    /// The empty set.
    pub const EMPTY: StreamEventSet = StreamEventSet(0);

    /// Adds `e`.
    #[inline]
    pub fn insert(&mut self, e: StreamEvent) {
        self.0 |= 1u128 << e.index();
    }

    /// Whether `e` is in the set.
    #[inline]
    pub fn contains(&self, e: StreamEvent) -> bool {
        self.0 & (1u128 << e.index()) != 0
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Number of events in the set.
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// Adds every event of `other`.
    #[inline]
    pub fn union(&mut self, other: StreamEventSet) {
        self.0 |= other.0;
    }

    /// Iterates the events in table order.
    pub fn iter(&self) -> impl Iterator<Item = StreamEvent> + '_ {
        StreamEvent::ALL
            .iter()
            .copied()
            .filter(move |e| self.contains(*e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_fits_and_names_resolve() {
        const { assert!(STREAM_EVENT_COUNT <= 128) };
        for (i, e) in StreamEvent::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
            assert_eq!(StreamEvent::from_name(e.name()), Some(*e));
            assert_eq!(StreamEvent::from_name(e.stats_name()), Some(*e));
        }
        assert_eq!(
            StreamEvent::from_name("3whs_synack_resend_with_diff_ack"),
            Some(StreamEvent::ThreeWhsSynackResendWithDiffAck)
        );
        assert_eq!(StreamEvent::from_name("nope"), None);
        let mut s = StreamEventSet::EMPTY;
        s.insert(StreamEvent::PktInvalidAck);
        s.insert(*StreamEvent::ALL.last().unwrap());
        assert_eq!(s.len(), 2);
        assert!(s.contains(StreamEvent::PktInvalidAck));
        assert!(!s.contains(StreamEvent::FinSyn));
    }
}
