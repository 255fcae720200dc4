//! A compiled signature: header matcher, packet keyword checks, payload/header buffer
//! sections, post-match operations and the fields an alert needs.

use std::sync::Arc;

use shrike_rules::matcher::CompiledSection;
use shrike_rules::parse::{Action, IpSet, PortSet};

use super::hostbits::HostBit;
use super::keywords::Check;
use super::packet::PacketView;
use super::vars::PostOp;

/// How a signature is run (Suricata's signature types that matter for packet rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SigKind {
    /// Addresses, ports and protocol only (plus `flowbits:set`): evaluated once per flow
    /// direction, by the IP-only engine.
    IpOnly,
    /// Like IP-only but with negated addresses: evaluated on every packet, and a `pass`
    /// or `drop` applies to the whole flow.
    LikeIpOnly,
    /// Decoder events only (`decode-event`): also evaluated on packets that did not decode
    /// to IP.
    DecoderEvent,
    /// Everything else.
    Packet,
    /// Inspected per app-layer transaction (see [`super::app_inspect`]).
    App,
    /// Inspected per app-layer frame (`frame:`; see [`super::frames`]).
    Frame,
}

impl SigKind {
    /// A `pass` or `drop` match applies to the flow (Suricata's `SIG_PROP_FLOW_ACTION_FLOW`).
    pub(crate) fn action_applies_to_flow(self) -> bool {
        matches!(self, SigKind::IpOnly | SigKind::LikeIpOnly)
    }
}

/// Bits of [`Sig::mask`] and of a packet's mask (Suricata's `SIG_MASK_REQUIRE_*`): a
/// signature is skipped unless every bit it requires is present in the packet's mask.
pub(crate) mod mask {
    /// The packet has payload.
    pub const PAYLOAD: u8 = 1 << 0;
    /// The packet has no payload.
    pub const NO_PAYLOAD: u8 = 1 << 1;
    /// The packet belongs to a flow.
    pub const FLOW: u8 = 1 << 2;
    /// SYN, RST or FIN set.
    pub const FLAGS_INITDEINIT: u8 = 1 << 3;
    /// URG, ECE or CWR set.
    pub const FLAGS_UNUSUAL: u8 = 1 << 4;
    /// The packet has decoder events.
    pub const ENGINE_EVENT: u8 = 1 << 5;
}

/// IP protocols a signature header accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtoSet {
    /// Any protocol (`ip`, `pkthdr`, `ipv4`, `ipv6`).
    pub any: bool,
    /// Bit per IP protocol number.
    pub bits: [u64; 4],
    /// Only IPv4 packets.
    pub v4_only: bool,
    /// Only IPv6 packets.
    pub v6_only: bool,
}

impl ProtoSet {
    pub(crate) fn any() -> Self {
        ProtoSet {
            any: true,
            bits: [u64::MAX; 4],
            v4_only: false,
            v6_only: false,
        }
    }

    pub(crate) fn of(protos: &[u8]) -> Self {
        let mut bits = [0u64; 4];
        for &p in protos {
            bits[usize::from(p / 64)] |= 1 << (p % 64);
        }
        ProtoSet {
            any: false,
            bits,
            v4_only: false,
            v6_only: false,
        }
    }

    /// Suricata's `DetectProtoContainsProto`.
    #[inline]
    pub(crate) fn contains(&self, p: u8) -> bool {
        self.any || self.bits[usize::from(p / 64)] & (1 << (p % 64)) != 0
    }
}

/// The compiled rule header.
#[derive(Debug, Clone)]
pub(crate) struct Header {
    pub proto: ProtoSet,
    pub src: Arc<IpSet>,
    pub dst: Arc<IpSet>,
    pub sp: Arc<PortSet>,
    pub dp: Arc<PortSet>,
    pub src_any: bool,
    pub dst_any: bool,
    pub sp_any: bool,
    pub dp_any: bool,
    /// `<>`: also matches with source and destination swapped.
    pub bidir: bool,
}

impl Header {
    /// Suricata's `DetectRunInspectRuleHeader` (protocol, ports, addresses), both ways for
    /// bidirectional rules.
    #[inline]
    pub(crate) fn matches(&self, p: &PacketView<'_>) -> bool {
        if (self.proto.v4_only && p.ip_version != 4) || (self.proto.v6_only && p.ip_version != 6) {
            return false;
        }
        if !self.proto.contains(p.ip_proto) {
            return false;
        }
        self.oriented(p, false) || (self.bidir && self.oriented(p, true))
    }

    #[inline]
    fn oriented(&self, p: &PacketView<'_>, swap: bool) -> bool {
        let (sp_any, dp_any, sps, dps, srcs, dsts, src_any, dst_any) = if swap {
            (
                self.dp_any,
                self.sp_any,
                &self.dp,
                &self.sp,
                &self.dst,
                &self.src,
                self.dst_any,
                self.src_any,
            )
        } else {
            (
                self.sp_any,
                self.dp_any,
                &self.sp,
                &self.dp,
                &self.src,
                &self.dst,
                self.src_any,
                self.dst_any,
            )
        };
        if p.has_ports {
            if !dp_any && (p.fragment || !dps.contains(p.dport)) {
                return false;
            }
            if !sp_any && (p.fragment || !sps.contains(p.sport)) {
                return false;
            }
        } else if !(sp_any && dp_any) {
            return false;
        }
        if !dst_any && !addr_in(dsts, p, false) {
            return false;
        }
        if !src_any && !addr_in(srcs, p, true) {
            return false;
        }
        true
    }
}

#[inline]
fn addr_in(set: &IpSet, p: &PacketView<'_>, src: bool) -> bool {
    match p.ip_version {
        4 => set.contains_v4(if src { p.src_v4 } else { p.dst_v4 }),
        6 => set.contains_v6(if src { p.src_v6 } else { p.dst_v6 }),
        // No IP layer: Suricata skips the address test.
        _ => true,
    }
}

/// The buffer a compiled section inspects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PacketBuffer {
    /// `pkt_data`: the transport payload.
    Payload,
    /// `ipv4.hdr`
    Ipv4Hdr,
    /// `ipv6.hdr` (with extension headers)
    Ipv6Hdr,
    /// `tcp.hdr` (with options)
    TcpHdr,
    /// `udp.hdr`
    UdpHdr,
    /// `icmpv4.hdr`
    Icmpv4Hdr,
    /// `icmpv6.hdr`
    Icmpv6Hdr,
}

/// A compiled section with the buffer it reads.
#[derive(Debug)]
pub(crate) struct Section {
    pub buffer: PacketBuffer,
    pub matcher: CompiledSection,
}

/// Where an alert's fields come from.
#[derive(Debug, Clone)]
pub struct SigInfo {
    /// `gid`.
    pub gid: u32,
    /// `sid`.
    pub sid: u32,
    /// `rev`.
    pub rev: u32,
    /// `msg`.
    pub msg: Box<str>,
    /// Rule action.
    pub action: Action,
    /// Classification description (EVE `category`), when the rule has a known classtype.
    pub class_msg: Option<Arc<str>>,
    /// Priority (EVE `severity`): `priority`, else the classtype's, else 3.
    pub priority: u32,
    /// `metadata` as Suricata writes it in EVE (an object of arrays), pre-serialised.
    pub metadata_json: Option<Box<[u8]>>,
    /// `file:line` of the rule.
    pub source: Arc<str>,
    /// Line of the rule in its file.
    pub line: u32,
    /// `target:` (EVE `alert.source`/`alert.target`).
    pub target: Option<shrike_rules::parse::Target>,
}

/// A compiled signature.
#[derive(Debug)]
pub(crate) struct Sig {
    pub info: SigInfo,
    pub kind: SigKind,
    pub header: Header,
    /// Required packet properties (see [`mask`]).
    pub mask: u8,
    /// Packet keywords (`flow`, `flags`, `ttl`, `flowbits:isset` …), in rule order.
    pub checks: Box<[Check]>,
    /// Payload and header-buffer sections, in rule order.
    pub sections: Box<[Section]>,
    /// `flowbits` set/unset/toggle and `flowint` assignments, run on a match.
    pub post: Box<[PostOp]>,
    /// Index into the engine's threshold table (rule `threshold`/`detection_filter`, or
    /// a `threshold.config` entry).
    pub threshold: Option<u32>,
    /// Indexes into the engine's suppress table.
    pub suppress: Box<[u32]>,
    /// `noalert` / `flowbits:noalert` / `suppress` without an address.
    pub noalert: bool,
    /// Needs a flow with variables (has `flowbits:isset`).
    pub require_flowvar: bool,
    /// `hostbits:isset/isnotset` checks.
    pub host_checks: Box<[HostBit]>,
    /// `hostbits:set/unset/toggle`, run on a match.
    pub host_post: Box<[HostBit]>,
    /// `tag` keywords, installed when the rule alerts.
    pub tags: Box<[shrike_rules::parse::keywords::Tag]>,
    /// Packet payload, stream, or both (see [`super::stream_inspect`]).
    pub stream: super::stream_inspect::StreamMode,
    /// App-layer requirements (protocol, transaction buffers), if any.
    pub app: Option<Box<super::app_inspect::AppSig>>,
    /// The frame a `frame:` rule inspects, and its matches.
    pub frame: Option<Box<super::frames::FrameSig>>,
}
