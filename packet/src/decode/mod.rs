//! Packet decoder: link layer to transport, with tunnels, into a compact [`PacketMeta`].
//!
//! Tunnels (GRE, IP-in-IP, VXLAN) make two packets in Suricata: the outer (root) packet and
//! the inner one. [`decode_tunnel`] returns both; [`decode`] returns the inner one with the
//! root's events.
//!
//! The hot path is [`decode`]: it walks the frame once, counts every layer and every
//! malformation in [`DecodeStats`] (Suricata's `decoder.*` counter names) and returns a
//! `Copy` [`PacketMeta`] holding offsets, addresses, ports and flags of the innermost IP
//! packet. It allocates nothing and never panics.
//!
//! Zero-copy views ([`Ethernet`], [`Vlan`], [`Ipv4`], [`Ipv6`], [`Tcp`], [`Udp`], [`Icmpv4`],
//! [`Icmpv6`]) give field access afterwards, smoltcp style: each has field-offset constants,
//! `new_checked` (which runs `check_len`) and accessors that cannot panic once `check_len`
//! passed (and do not panic before either: out-of-range reads return 0).
//!
//! Supported: Ethernet, 802.1Q/QinQ (0x8100, 0x88a8, 0x9100, up to 3 tags), VN-Tag (0x8926),
//! Cisco DCE/FabricPath (0x8903), MPLS, PPPoE session and discovery, PPP (in PPPoE and PPTP
//! GRE), IPv4 (options, header checksum),
//! IPv6 (extension-header chain), TCP, UDP, SCTP, ESP, ICMPv4, ICMPv6 (with the original
//! packet of ICMP errors), GRE v0/v1, VXLAN, IP-in-IP (4in4, 6in4, 4in6, 6in6), Linux SLL and
//! SLL2, raw IP, BSD NULL and LOOP, PPP and Cisco HDLC link types. ERSPAN is counted only.

mod bytes;
pub mod checksum;
mod ethernet;
pub mod events;
mod icmp;
mod ipv4;
mod ipv6;
mod link;
mod meta;
mod tcp;
mod tunnel;
mod udp;

pub use crate::config::DecodeConfig;
pub use crate::stats::DecodeStats;
pub use bytes::Field;
pub use ethernet::{ethertype, Ethernet, Vlan};
pub use events::{DecodeEvent, EventSet, EVENT_COUNT};
pub use icmp::{icmpv4_counterpart, icmpv6_counterpart, Icmpv4, Icmpv6};
pub use ipv4::{Ipv4, Ipv4Option, Ipv4Options};
pub use ipv6::{ExtHeader, ExtHeaders, Ipv6};
pub use meta::{flags, tunnel_src, PacketKind, PacketMeta, NO_OFFSET};
pub use tcp::{tcp_flags, Tcp, TcpOption, TcpOptions};
pub use udp::Udp;

use shrike_capture::LinkType;

/// IP protocol numbers used by the decoder.
pub mod proto {
    /// IPv6 hop-by-hop options.
    pub const HOPOPTS: u8 = 0;
    /// ICMPv4.
    pub const ICMP: u8 = 1;
    /// IPv4 in IP.
    pub const IPIP: u8 = 4;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 in IP.
    pub const IPV6: u8 = 41;
    /// IPv6 routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 fragment header.
    pub const FRAGMENT: u8 = 44;
    /// GRE.
    pub const GRE: u8 = 47;
    /// ESP.
    pub const ESP: u8 = 50;
    /// Authentication header.
    pub const AH: u8 = 51;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// IPv6 "no next header".
    pub const NONE: u8 = 59;
    /// IPv6 destination options.
    pub const DSTOPTS: u8 = 60;
    /// Mobility header.
    pub const MH: u8 = 135;
    /// Host identity protocol.
    pub const HIP: u8 = 139;
    /// Shim6.
    pub const SHIM6: u8 = 140;
    /// SCTP.
    pub const SCTP: u8 = 132;
}

/// Frames longer than this are decoded over their first `MAX_FRAME` bytes (offsets are u16).
pub const MAX_FRAME: usize = u16::MAX as usize - 1;

/// Decoding state for one frame.
pub(crate) struct Ctx<'a, 's> {
    pub data: &'a [u8],
    pub cfg: &'s DecodeConfig,
    pub stats: &'s mut DecodeStats,
    pub meta: PacketMeta,
    /// Layers decoded so far (Suricata `PacketIncreaseCheckLayers`).
    pub layers: u8,
    /// The frame carried a well-formed non-IP payload.
    pub non_ip: bool,
    /// The outer packet of the outermost tunnel, once an inner IP packet came out of it.
    pub root: Option<PacketMeta>,
}

impl Ctx<'_, '_> {
    /// Raises an event that does not invalidate the packet.
    #[inline]
    pub fn ev(&mut self, e: DecodeEvent) {
        self.meta.events.insert(e);
    }

    /// Raises an event that makes the packet invalid (`decoder.invalid`).
    #[inline]
    pub fn inv(&mut self, e: DecodeEvent) {
        self.meta.events.insert(e);
        self.meta.flags |= flags::INVALID;
    }

    /// Counts one more decoded layer; false (and `too_many_layers`) past `max-layers`.
    #[inline]
    pub fn layer(&mut self) -> bool {
        self.layers = self.layers.saturating_add(1);
        if u16::from(self.layers) > self.cfg.max_layers {
            self.inv(DecodeEvent::TooManyLayers);
            return false;
        }
        true
    }

    /// Runs `inner` as the inner packet of a tunnel of kind `kind` (a [`tunnel_src`]
    /// value). The meta then describes the inner IP packet; if the inner one yields no IP
    /// packet the outer IP packet is kept (with the inner packet's events).
    ///
    /// Like Suricata's tunnel packets, the inner packet of the outermost tunnel starts with
    /// its own events and validity: the outer packet (the tunnel root) keeps those raised
    /// before the tunnel and is kept in [`Ctx::root`].
    pub fn tunnel(&mut self, kind: u8, inner: impl FnOnce(&mut Self)) {
        let outer = self.meta;
        let top = self.root.is_none() && outer.tunnel_depth == 0;
        let mut fresh = PacketMeta::EMPTY;
        fresh.flags = outer.flags & flags::VLAN_NO_TRACK;
        if !top {
            fresh.events = outer.events;
            fresh.flags |= outer.flags & flags::INVALID;
        }
        fresh.vlan = outer.vlan;
        fresh.vlan_count = outer.vlan_count;
        fresh.tunnel_depth = outer.tunnel_depth.saturating_add(1);
        fresh.tunnel_src = kind;
        fresh.root_l3 = if top {
            u8::try_from(outer.l3_off).unwrap_or(u8::MAX)
        } else {
            outer.root_l3
        };
        self.meta = fresh;
        inner(self);
        if !self.meta.is_ip() {
            let events = self.meta.events;
            let invalid = self.meta.flags & flags::INVALID;
            self.meta = outer;
            self.meta.events.union(&events);
            self.meta.flags |= invalid;
        } else if top {
            self.root = Some(outer);
        }
    }
}

/// Decodes one frame of link type `link`.
///
/// Counts the frame and every layer in `stats`, raises decoder events, and returns the
/// meta of the innermost IP packet. Never panics and never allocates.
pub fn decode(
    link: LinkType,
    data: &[u8],
    cfg: &DecodeConfig,
    stats: &mut DecodeStats,
) -> PacketMeta {
    let (mut meta, root) = decode_tunnel(link, data, cfg, stats);
    if let Some(r) = root {
        // One meta for the whole frame: the root's events and validity join the inner
        // packet's.
        meta.events.union(&r.events);
        meta.flags |= r.flags & flags::INVALID;
    }
    meta
}

/// Decodes one frame like [`decode`], keeping a tunnel's two packets apart as Suricata
/// does: the meta of the innermost IP packet, and for frames whose outermost tunnel
/// (GRE, IP-in-IP, VXLAN) yielded an inner IP packet, the meta of the outer (root) packet.
///
/// The root is marked [`tunnel_src::ROOT`] and carries no payload (Suricata inspects a
/// tunnel root's headers only); each of the two metas has the events raised in its own
/// part of the frame. Counters are those of [`decode`].
pub fn decode_tunnel(
    link: LinkType,
    data: &[u8],
    cfg: &DecodeConfig,
    stats: &mut DecodeStats,
) -> (PacketMeta, Option<PacketMeta>) {
    stats.pkts += 1;
    stats.bytes += data.len() as u64;
    stats.max_pkt_size = stats.max_pkt_size.max(data.len() as u64);
    let data = data.get(..MAX_FRAME).unwrap_or(data);
    let mut meta = PacketMeta::EMPTY;
    if !cfg.vlan.use_for_tracking {
        meta.flags |= flags::VLAN_NO_TRACK;
    }
    let mut cx = Ctx {
        data,
        cfg,
        stats,
        meta,
        layers: 0,
        non_ip: false,
        root: None,
    };
    let end = data.len();
    match link {
        LinkType::Ethernet => cx.ethernet(0, end),
        LinkType::Raw => cx.raw(0, end),
        LinkType::Ipv4 => {
            cx.stats.raw += 1;
            cx.ipv4(0, end);
        }
        LinkType::Ipv6 => {
            cx.stats.raw += 1;
            cx.ipv6(0, end);
        }
        LinkType::Null => cx.null(0, end, false),
        LinkType::Loop => cx.null(0, end, true),
        LinkType::LinuxSll => cx.sll(0, end),
        LinkType::LinuxSll2 => cx.sll2(0, end),
        LinkType::Ppp => cx.ppp(0, end),
        LinkType::CiscoHdlc => cx.chdlc(0, end),
        LinkType::Other(_) => cx.meta.flags |= flags::INVALID,
    }
    finish(cx)
}

fn finish(cx: Ctx<'_, '_>) -> (PacketMeta, Option<PacketMeta>) {
    let Ctx {
        stats,
        mut meta,
        non_ip,
        root,
        ..
    } = cx;
    if !meta.is_ip() && non_ip {
        meta.kind = PacketKind::NonIp;
    }
    let mut events = meta.events;
    let mut invalid = meta.is_invalid();
    let mut csum_bad = meta.has(flags::IPV4_CSUM_BAD);
    let root = root.map(|mut r| {
        events.union(&r.events);
        invalid |= r.is_invalid();
        csum_bad |= r.has(flags::IPV4_CSUM_BAD);
        r.tunnel_src |= tunnel_src::ROOT;
        r.payload_off = NO_OFFSET;
        r.payload_len = 0;
        r
    });
    if !events.is_empty() {
        for e in events.iter() {
            if let Some(c) = stats.events.get_mut(e.index()) {
                *c += 1;
            }
        }
    }
    if invalid {
        stats.invalid += 1;
    }
    if csum_bad {
        stats.ipv4_csum_bad += 1;
    }
    (meta, root)
}
