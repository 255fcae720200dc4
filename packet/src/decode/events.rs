//! Decoder events: the malformed-packet reasons Suricata 7 names in `decoder-events.rules`
//! and in its EVE `stats.decoder.event.*` counters.
//!
//! [`DecodeEvent`] is a dense enum (one bit each in [`EventSet`]); [`DecodeEvent::name`] is the
//! name the `decode-event:` rule keyword uses (`ipv4.trunc_pkt`) and
//! [`DecodeEvent::stats_name`] the dotted counter name (`decoder.event.ipv4.trunc_pkt`).
//! The list is Suricata 7.0.10's, in its order, plus `sll2.pkt_too_small` (a Suricata 8 name
//! that the EVE schema knows). `too_many_layers` is counted as `decoder.too_many_layers`, as
//! Suricata does.

macro_rules! decode_events {
    ($($variant:ident => $name:literal, $stat:literal;)*) => {
        /// One decoder event (Suricata `decode-event:` name in the variant docs).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum DecodeEvent {
            $(
                #[doc = $name]
                $variant,
            )*
        }

        impl DecodeEvent {
            /// Every event, in table order (`ALL[e as usize] == e`).
            pub const ALL: &'static [DecodeEvent] = &[$(DecodeEvent::$variant,)*];

            /// The rule-keyword name, e.g. `ipv4.trunc_pkt`.
            pub const fn name(self) -> &'static str {
                match self { $(DecodeEvent::$variant => $name,)* }
            }

            /// The dotted stats counter name, e.g. `decoder.event.ipv4.trunc_pkt`.
            pub const fn stats_name(self) -> &'static str {
                match self { $(DecodeEvent::$variant => $stat,)* }
            }
        }
    };
}

decode_events! {
    AfpacketTruncPkt => "afpacket.trunc_pkt", "decoder.event.afpacket.trunc_pkt";
    Ipv4PktTooSmall => "ipv4.pkt_too_small", "decoder.event.ipv4.pkt_too_small";
    Ipv4HlenTooSmall => "ipv4.hlen_too_small", "decoder.event.ipv4.hlen_too_small";
    Ipv4IplenSmallerThanHlen => "ipv4.iplen_smaller_than_hlen", "decoder.event.ipv4.iplen_smaller_than_hlen";
    Ipv4TruncPkt => "ipv4.trunc_pkt", "decoder.event.ipv4.trunc_pkt";
    Ipv4OptInvalid => "ipv4.opt_invalid", "decoder.event.ipv4.opt_invalid";
    Ipv4OptInvalidLen => "ipv4.opt_invalid_len", "decoder.event.ipv4.opt_invalid_len";
    Ipv4OptMalformed => "ipv4.opt_malformed", "decoder.event.ipv4.opt_malformed";
    Ipv4OptPadRequired => "ipv4.opt_pad_required", "decoder.event.ipv4.opt_pad_required";
    Ipv4OptEolRequired => "ipv4.opt_eol_required", "decoder.event.ipv4.opt_eol_required";
    Ipv4OptDuplicate => "ipv4.opt_duplicate", "decoder.event.ipv4.opt_duplicate";
    Ipv4OptUnknown => "ipv4.opt_unknown", "decoder.event.ipv4.opt_unknown";
    Ipv4WrongIpVersion => "ipv4.wrong_ip_version", "decoder.event.ipv4.wrong_ip_version";
    Ipv4Icmpv6 => "ipv4.icmpv6", "decoder.event.ipv4.icmpv6";
    Ipv4FragPktTooLarge => "ipv4.frag_pkt_too_large", "decoder.event.ipv4.frag_pkt_too_large";
    Ipv4FragOverlap => "ipv4.frag_overlap", "decoder.event.ipv4.frag_overlap";
    Ipv4FragIgnored => "ipv4.frag_ignored", "decoder.event.ipv4.frag_ignored";
    Icmpv4PktTooSmall => "icmpv4.pkt_too_small", "decoder.event.icmpv4.pkt_too_small";
    Icmpv4UnknownType => "icmpv4.unknown_type", "decoder.event.icmpv4.unknown_type";
    Icmpv4UnknownCode => "icmpv4.unknown_code", "decoder.event.icmpv4.unknown_code";
    Icmpv4Ipv4TruncPkt => "icmpv4.ipv4_trunc_pkt", "decoder.event.icmpv4.ipv4_trunc_pkt";
    Icmpv4Ipv4UnknownVer => "icmpv4.ipv4_unknown_ver", "decoder.event.icmpv4.ipv4_unknown_ver";
    Icmpv6UnknownType => "icmpv6.unknown_type", "decoder.event.icmpv6.unknown_type";
    Icmpv6UnknownCode => "icmpv6.unknown_code", "decoder.event.icmpv6.unknown_code";
    Icmpv6PktTooSmall => "icmpv6.pkt_too_small", "decoder.event.icmpv6.pkt_too_small";
    Icmpv6Ipv6UnknownVersion => "icmpv6.ipv6_unknown_version", "decoder.event.icmpv6.ipv6_unknown_version";
    Icmpv6Ipv6TruncPkt => "icmpv6.ipv6_trunc_pkt", "decoder.event.icmpv6.ipv6_trunc_pkt";
    Icmpv6MldMessageWithInvalidHl => "icmpv6.mld_message_with_invalid_hl", "decoder.event.icmpv6.mld_message_with_invalid_hl";
    Icmpv6UnassignedType => "icmpv6.unassigned_type", "decoder.event.icmpv6.unassigned_type";
    Icmpv6ExperimentationType => "icmpv6.experimentation_type", "decoder.event.icmpv6.experimentation_type";
    Ipv6PktTooSmall => "ipv6.pkt_too_small", "decoder.event.ipv6.pkt_too_small";
    Ipv6TruncPkt => "ipv6.trunc_pkt", "decoder.event.ipv6.trunc_pkt";
    Ipv6TruncExthdr => "ipv6.trunc_exthdr", "decoder.event.ipv6.trunc_exthdr";
    Ipv6ExthdrDuplFh => "ipv6.exthdr_dupl_fh", "decoder.event.ipv6.exthdr_dupl_fh";
    Ipv6ExthdrUselessFh => "ipv6.exthdr_useless_fh", "decoder.event.ipv6.exthdr_useless_fh";
    Ipv6ExthdrDuplRh => "ipv6.exthdr_dupl_rh", "decoder.event.ipv6.exthdr_dupl_rh";
    Ipv6ExthdrDuplHh => "ipv6.exthdr_dupl_hh", "decoder.event.ipv6.exthdr_dupl_hh";
    Ipv6ExthdrDuplDh => "ipv6.exthdr_dupl_dh", "decoder.event.ipv6.exthdr_dupl_dh";
    Ipv6ExthdrDuplAh => "ipv6.exthdr_dupl_ah", "decoder.event.ipv6.exthdr_dupl_ah";
    Ipv6ExthdrDuplEh => "ipv6.exthdr_dupl_eh", "decoder.event.ipv6.exthdr_dupl_eh";
    Ipv6ExthdrInvalidOptlen => "ipv6.exthdr_invalid_optlen", "decoder.event.ipv6.exthdr_invalid_optlen";
    Ipv6WrongIpVersion => "ipv6.wrong_ip_version", "decoder.event.ipv6.wrong_ip_version";
    Ipv6ExthdrAhResNotNull => "ipv6.exthdr_ah_res_not_null", "decoder.event.ipv6.exthdr_ah_res_not_null";
    Ipv6HopoptsUnknownOpt => "ipv6.hopopts_unknown_opt", "decoder.event.ipv6.hopopts_unknown_opt";
    Ipv6HopoptsOnlyPadding => "ipv6.hopopts_only_padding", "decoder.event.ipv6.hopopts_only_padding";
    Ipv6DstoptsUnknownOpt => "ipv6.dstopts_unknown_opt", "decoder.event.ipv6.dstopts_unknown_opt";
    Ipv6DstoptsOnlyPadding => "ipv6.dstopts_only_padding", "decoder.event.ipv6.dstopts_only_padding";
    Ipv6RhType0 => "ipv6.rh_type_0", "decoder.event.ipv6.rh_type_0";
    Ipv6ZeroLenPadn => "ipv6.zero_len_padn", "decoder.event.ipv6.zero_len_padn";
    Ipv6FhNonZeroReservedField => "ipv6.fh_non_zero_reserved_field", "decoder.event.ipv6.fh_non_zero_reserved_field";
    Ipv6DataAfterNoneHeader => "ipv6.data_after_none_header", "decoder.event.ipv6.data_after_none_header";
    Ipv6UnknownNextHeader => "ipv6.unknown_next_header", "decoder.event.ipv6.unknown_next_header";
    Ipv6Icmpv4 => "ipv6.icmpv4", "decoder.event.ipv6.icmpv4";
    Ipv6FragPktTooLarge => "ipv6.frag_pkt_too_large", "decoder.event.ipv6.frag_pkt_too_large";
    Ipv6FragOverlap => "ipv6.frag_overlap", "decoder.event.ipv6.frag_overlap";
    Ipv6FragInvalidLength => "ipv6.frag_invalid_length", "decoder.event.ipv6.frag_invalid_length";
    Ipv6FragIgnored => "ipv6.frag_ignored", "decoder.event.ipv6.frag_ignored";
    Ipv6Ipv4InIpv6TooSmall => "ipv6.ipv4_in_ipv6_too_small", "decoder.event.ipv6.ipv4_in_ipv6_too_small";
    Ipv6Ipv4InIpv6WrongVersion => "ipv6.ipv4_in_ipv6_wrong_version", "decoder.event.ipv6.ipv4_in_ipv6_wrong_version";
    Ipv6Ipv6InIpv6TooSmall => "ipv6.ipv6_in_ipv6_too_small", "decoder.event.ipv6.ipv6_in_ipv6_too_small";
    Ipv6Ipv6InIpv6WrongVersion => "ipv6.ipv6_in_ipv6_wrong_version", "decoder.event.ipv6.ipv6_in_ipv6_wrong_version";
    TcpPktTooSmall => "tcp.pkt_too_small", "decoder.event.tcp.pkt_too_small";
    TcpHlenTooSmall => "tcp.hlen_too_small", "decoder.event.tcp.hlen_too_small";
    TcpInvalidOptlen => "tcp.invalid_optlen", "decoder.event.tcp.invalid_optlen";
    TcpOptInvalidLen => "tcp.opt_invalid_len", "decoder.event.tcp.opt_invalid_len";
    TcpOptDuplicate => "tcp.opt_duplicate", "decoder.event.tcp.opt_duplicate";
    UdpPktTooSmall => "udp.pkt_too_small", "decoder.event.udp.pkt_too_small";
    UdpHlenTooSmall => "udp.hlen_too_small", "decoder.event.udp.hlen_too_small";
    UdpHlenInvalid => "udp.hlen_invalid", "decoder.event.udp.hlen_invalid";
    UdpLenInvalid => "udp.len_invalid", "decoder.event.udp.len_invalid";
    SllPktTooSmall => "sll.pkt_too_small", "decoder.event.sll.pkt_too_small";
    EthernetPktTooSmall => "ethernet.pkt_too_small", "decoder.event.ethernet.pkt_too_small";
    PppPktTooSmall => "ppp.pkt_too_small", "decoder.event.ppp.pkt_too_small";
    PppVjuPktTooSmall => "ppp.vju_pkt_too_small", "decoder.event.ppp.vju_pkt_too_small";
    PppIp4PktTooSmall => "ppp.ip4_pkt_too_small", "decoder.event.ppp.ip4_pkt_too_small";
    PppIp6PktTooSmall => "ppp.ip6_pkt_too_small", "decoder.event.ppp.ip6_pkt_too_small";
    PppWrongType => "ppp.wrong_type", "decoder.event.ppp.wrong_type";
    PppUnsupProto => "ppp.unsup_proto", "decoder.event.ppp.unsup_proto";
    PppoePktTooSmall => "pppoe.pkt_too_small", "decoder.event.pppoe.pkt_too_small";
    PppoeWrongCode => "pppoe.wrong_code", "decoder.event.pppoe.wrong_code";
    PppoeMalformedTags => "pppoe.malformed_tags", "decoder.event.pppoe.malformed_tags";
    GrePktTooSmall => "gre.pkt_too_small", "decoder.event.gre.pkt_too_small";
    GreWrongVersion => "gre.wrong_version", "decoder.event.gre.wrong_version";
    GreVersion0Recur => "gre.version0_recur", "decoder.event.gre.version0_recur";
    GreVersion0Flags => "gre.version0_flags", "decoder.event.gre.version0_flags";
    GreVersion0HdrTooBig => "gre.version0_hdr_too_big", "decoder.event.gre.version0_hdr_too_big";
    GreVersion0MalformedSreHdr => "gre.version0_malformed_sre_hdr", "decoder.event.gre.version0_malformed_sre_hdr";
    GreVersion1Chksum => "gre.version1_chksum", "decoder.event.gre.version1_chksum";
    GreVersion1Route => "gre.version1_route", "decoder.event.gre.version1_route";
    GreVersion1Ssr => "gre.version1_ssr", "decoder.event.gre.version1_ssr";
    GreVersion1Recur => "gre.version1_recur", "decoder.event.gre.version1_recur";
    GreVersion1Flags => "gre.version1_flags", "decoder.event.gre.version1_flags";
    GreVersion1NoKey => "gre.version1_no_key", "decoder.event.gre.version1_no_key";
    GreVersion1WrongProtocol => "gre.version1_wrong_protocol", "decoder.event.gre.version1_wrong_protocol";
    GreVersion1MalformedSreHdr => "gre.version1_malformed_sre_hdr", "decoder.event.gre.version1_malformed_sre_hdr";
    GreVersion1HdrTooBig => "gre.version1_hdr_too_big", "decoder.event.gre.version1_hdr_too_big";
    VlanHeaderTooSmall => "vlan.header_too_small", "decoder.event.vlan.header_too_small";
    VlanUnknownType => "vlan.unknown_type", "decoder.event.vlan.unknown_type";
    VlanTooManyLayers => "vlan.too_many_layers", "decoder.event.vlan.too_many_layers";
    Ieee8021ahHeaderTooSmall => "ieee8021ah.header_too_small", "decoder.event.ieee8021ah.header_too_small";
    VntagHeaderTooSmall => "vntag.header_too_small", "decoder.event.vntag.header_too_small";
    VntagUnknownType => "vntag.unknown_type", "decoder.event.vntag.unknown_type";
    IprawInvalidIpVersion => "ipraw.invalid_ip_version", "decoder.event.ipraw.invalid_ip_version";
    LtnullPktTooSmall => "ltnull.pkt_too_small", "decoder.event.ltnull.pkt_too_small";
    LtnullUnsupportedType => "ltnull.unsupported_type", "decoder.event.ltnull.unsupported_type";
    SctpPktTooSmall => "sctp.pkt_too_small", "decoder.event.sctp.pkt_too_small";
    EspPktTooSmall => "esp.pkt_too_small", "decoder.event.esp.pkt_too_small";
    MplsHeaderTooSmall => "mpls.header_too_small", "decoder.event.mpls.header_too_small";
    MplsPktTooSmall => "mpls.pkt_too_small", "decoder.event.mpls.pkt_too_small";
    MplsBadLabelRouterAlert => "mpls.bad_label_router_alert", "decoder.event.mpls.bad_label_router_alert";
    MplsBadLabelImplicitNull => "mpls.bad_label_implicit_null", "decoder.event.mpls.bad_label_implicit_null";
    MplsBadLabelReserved => "mpls.bad_label_reserved", "decoder.event.mpls.bad_label_reserved";
    MplsUnknownPayloadType => "mpls.unknown_payload_type", "decoder.event.mpls.unknown_payload_type";
    VxlanUnknownPayloadType => "vxlan.unknown_payload_type", "decoder.event.vxlan.unknown_payload_type";
    GeneveUnknownPayloadType => "geneve.unknown_payload_type", "decoder.event.geneve.unknown_payload_type";
    ErspanHeaderTooSmall => "erspan.header_too_small", "decoder.event.erspan.header_too_small";
    ErspanUnsupportedVersion => "erspan.unsupported_version", "decoder.event.erspan.unsupported_version";
    ErspanTooManyVlanLayers => "erspan.too_many_vlan_layers", "decoder.event.erspan.too_many_vlan_layers";
    DcePktTooSmall => "dce.pkt_too_small", "decoder.event.dce.pkt_too_small";
    ChdlcPktTooSmall => "chdlc.pkt_too_small", "decoder.event.chdlc.pkt_too_small";
    NshHeaderTooSmall => "nsh.header_too_small", "decoder.event.nsh.header_too_small";
    NshUnsupportedVersion => "nsh.unsupported_version", "decoder.event.nsh.unsupported_version";
    NshBadHeaderLength => "nsh.bad_header_length", "decoder.event.nsh.bad_header_length";
    NshReservedType => "nsh.reserved_type", "decoder.event.nsh.reserved_type";
    NshUnsupportedType => "nsh.unsupported_type", "decoder.event.nsh.unsupported_type";
    NshUnknownPayload => "nsh.unknown_payload", "decoder.event.nsh.unknown_payload";
    Sll2PktTooSmall => "sll2.pkt_too_small", "decoder.event.sll2.pkt_too_small";
    TooManyLayers => "too_many_layers", "decoder.too_many_layers";
}

/// Number of distinct decoder events.
pub const EVENT_COUNT: usize = DecodeEvent::ALL.len();

const WORDS: usize = EVENT_COUNT.div_ceil(64);

impl DecodeEvent {
    /// Resolves a `decode-event:` keyword value (`ipv4.trunc_pkt`). A leading `decoder.` is
    /// accepted too, as Suricata does. Returns `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<DecodeEvent> {
        let name = name.trim();
        let name = name.strip_prefix("decoder.").unwrap_or(name);
        DecodeEvent::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// Dense index of this event (`0..EVENT_COUNT`).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for DecodeEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fixed-size set of [`DecodeEvent`]s (one bit each); `Copy`, no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventSet([u64; WORDS]);

impl EventSet {
    /// The empty set.
    pub const EMPTY: EventSet = EventSet([0; WORDS]);

    /// Adds `e`.
    #[inline]
    pub fn insert(&mut self, e: DecodeEvent) {
        let i = e.index();
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1u64 << (i % 64);
        }
    }

    /// Whether `e` is in the set.
    #[inline]
    pub fn contains(&self, e: DecodeEvent) -> bool {
        let i = e.index();
        self.0
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// Number of events in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Adds every event of `other`.
    #[inline]
    pub fn union(&mut self, other: &EventSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= *b;
        }
    }

    /// Iterates the events in table order.
    pub fn iter(&self) -> impl Iterator<Item = DecodeEvent> + '_ {
        DecodeEvent::ALL
            .iter()
            .copied()
            .filter(move |e| self.contains(*e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_dense_and_unique() {
        for (i, e) in DecodeEvent::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
            assert_eq!(DecodeEvent::from_name(e.name()), Some(*e));
        }
        let mut names: Vec<_> = DecodeEvent::ALL.iter().map(|e| e.stats_name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EVENT_COUNT);
        assert_eq!(
            DecodeEvent::from_name("decoder.ipv4.trunc_pkt"),
            Some(DecodeEvent::Ipv4TruncPkt)
        );
        assert_eq!(DecodeEvent::from_name("ipv4.nope"), None);
        assert_eq!(
            DecodeEvent::TooManyLayers.stats_name(),
            "decoder.too_many_layers"
        );
    }

    #[test]
    fn event_set_ops() {
        let mut s = EventSet::EMPTY;
        assert!(s.is_empty());
        let last = *DecodeEvent::ALL.last().unwrap();
        s.insert(DecodeEvent::Ipv4TruncPkt);
        s.insert(last);
        assert!(s.contains(last) && s.contains(DecodeEvent::Ipv4TruncPkt));
        assert!(!s.contains(DecodeEvent::TcpPktTooSmall));
        assert_eq!(s.len(), 2);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![DecodeEvent::Ipv4TruncPkt, last]
        );
    }
}
