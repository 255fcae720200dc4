//! [`PacketMeta`]: the compact, `Copy` result of decoding one frame.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::events::{DecodeEvent, EventSet};

/// Offset value meaning "this layer is absent".
pub const NO_OFFSET: u16 = u16::MAX;

/// What the decoder made of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// Nothing usable: the link layer or the (innermost) IP header is malformed.
    #[default]
    Invalid = 0,
    /// A well-formed frame that carries no IP packet (ARP, LLDP, PPPoE discovery, unknown
    /// ethertype …).
    NonIp = 1,
    /// A valid IP header whose transport layer was not decoded: a fragment, an unknown
    /// protocol, or a transport header that failed its checks (see [`PacketMeta::events`]).
    Ip = 2,
    /// A valid IP packet with a decoded transport header (TCP, UDP, SCTP, ICMPv4, ICMPv6).
    L4 = 3,
}

/// Bits of [`PacketMeta::flags`].
pub mod flags {
    /// The innermost IP header is IPv6 (else IPv4 when an IP layer exists).
    pub const IPV6: u16 = 1 << 0;
    /// The IPv4 header checksum is wrong (always checked).
    pub const IPV4_CSUM_BAD: u16 = 1 << 1;
    /// The TCP/UDP/ICMP checksum was verified (`checksum-validation` on).
    pub const L4_CSUM_CHECKED: u16 = 1 << 2;
    /// The TCP/UDP/ICMP checksum was verified and is wrong.
    pub const L4_CSUM_BAD: u16 = 1 << 3;
    /// IPv4 "don't fragment".
    pub const DF: u16 = 1 << 4;
    /// IPv4 "more fragments", or the IPv6 fragment header's M flag.
    pub const MF: u16 = 1 << 5;
    /// IPv4 reserved ("evil") bit.
    pub const RF: u16 = 1 << 6;
    /// The packet is a fragment (offset > 0 or MF); its transport layer is not decoded.
    pub const FRAGMENT: u16 = 1 << 7;
    /// The IPv6 packet has a fragment header (`ip_id`, `frag_off` and `MF` come from it).
    pub const IPV6_FRAG_HDR: u16 = 1 << 8;
    /// An ICMP error carried a decodable original IP header (`emb_*` fields are set).
    pub const EMB_IP: u16 = 1 << 9;
    /// The embedded original header is IPv6.
    pub const EMB_IPV6: u16 = 1 << 10;
    /// The embedded original packet's TCP/UDP ports were read (`emb_sport`/`emb_dport`).
    pub const EMB_PORTS: u16 = 1 << 11;
    /// Suricata would flag this packet invalid (`decoder.invalid`): an event that
    /// invalidates the packet was raised somewhere in it.
    pub const INVALID: u16 = 1 << 12;
    /// VLAN ids must not be used for flow tracking (`vlan.use-for-tracking: false`).
    pub const VLAN_NO_TRACK: u16 = 1 << 13;
    /// The TCP header carried options (walk them with `Tcp::options`).
    pub const TCP_OPTS: u16 = 1 << 14;
    /// The IPv4 header carried options or the IPv6 header extension headers.
    pub const IP_OPTS: u16 = 1 << 15;
}

/// Which decoder made a tunnel packet (Suricata's `pkt_src` of tunnel packets), and the
/// mark of a tunnel's root packet. Values of [`PacketMeta::tunnel_src`].
pub mod tunnel_src {
    /// Not a tunnel packet.
    pub const NONE: u8 = 0;
    /// Carried in GRE (IP, PPP, VLAN, TEB, ERSPAN): `gre tunnel`.
    pub const GRE: u8 = 1;
    /// IP in IPv4 (4in4, 6in4): `ipv4 tunnel`.
    pub const IPV4: u8 = 2;
    /// IP in IPv6 (4in6, 6in6): `ipv6 tunnel`.
    pub const IPV6: u8 = 3;
    /// Carried in VXLAN: `vxlan encapsulation`.
    pub const VXLAN: u8 = 4;
    /// Not a tunnel: a datagram rebuilt from IP fragments (outside tunnels): `defrag`.
    pub const DEFRAG: u8 = 5;
    /// IPv6 carried in Teredo (UDP): `teredo tunnel`.
    pub const TEREDO: u8 = 6;
    /// Carried in Geneve (UDP): `geneve encapsulation`.
    pub const GENEVE: u8 = 7;
    /// Bits holding the kind above.
    pub const KIND: u8 = 0x0f;
    /// The packet is the outer (root) packet of a tunnel whose inner packet is handed on
    /// separately (see [`crate::decode::decode_tunnel`]).
    pub const ROOT: u8 = 0x80;

    /// Suricata 7's `pkt_src` text for a tunnel packet of kind `kind`.
    pub fn name(kind: u8) -> Option<&'static str> {
        match kind & KIND {
            GRE => Some("gre tunnel"),
            IPV4 => Some("ipv4 tunnel"),
            IPV6 => Some("ipv6 tunnel"),
            VXLAN => Some("vxlan encapsulation"),
            DEFRAG => Some("defrag"),
            TEREDO => Some("teredo tunnel"),
            GENEVE => Some("geneve encapsulation"),
            _ => None,
        }
    }
}

/// Everything the hot path needs about one frame, without borrowing it.
///
/// Offsets point into the frame bytes given to [`super::decode`] and describe the
/// *innermost* successfully decoded IP packet (for tunnels: the inner one). Absent layers
/// have offset [`NO_OFFSET`]. Addresses are stored as 16 bytes; IPv4 uses the first 4.
///
/// For TCP `l4_a`/`l4_b` are sequence/acknowledgement numbers; for ESP the SPI and the
/// sequence number; for ICMP errors `l4_b` holds the quoted packet's ports
/// (`sport << 16 | dport`, with [`flags::EMB_PORTS`]); for ICMP echo-like messages
/// `l4_a` is `id << 16 | seq`. For ICMP `sport` is `type << 8 | code` and `dport` the
/// counterpart type `<< 8` (Suricata's `icmp_s`/`icmp_d`), so both directions of an echo
/// exchange share a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// Source address (IPv4 in bytes 0..4).
    pub src: [u8; 16],
    /// Destination address (IPv4 in bytes 0..4).
    pub dst: [u8; 16],
    /// ICMP errors: source address of the embedded original packet.
    pub emb_src: [u8; 16],
    /// ICMP errors: destination address of the embedded original packet.
    pub emb_dst: [u8; 16],
    /// Decoder events raised anywhere in the frame.
    pub events: EventSet,
    /// Offset of the innermost Ethernet header (or the link header), if any.
    pub l2_off: u16,
    /// Offset of the innermost IP header.
    pub l3_off: u16,
    /// Offset of the transport header.
    pub l4_off: u16,
    /// Offset of the transport payload.
    pub payload_off: u16,
    /// Length of the transport payload (bounded by the IP/UDP lengths, not padding).
    pub payload_len: u16,
    /// Source port (TCP/UDP/SCTP) or ICMP `type << 8 | code`.
    pub sport: u16,
    /// Destination port (TCP/UDP/SCTP) or ICMP counterpart type `<< 8`.
    pub dport: u16,
    /// TCP window.
    pub tcp_win: u16,
    /// TCP sequence number, or ICMP `id << 16 | seq`.
    pub l4_a: u32,
    /// TCP acknowledgement number, ESP sequence number, or an ICMP error's quoted ports.
    pub l4_b: u32,
    /// IPv4 identification, or the IPv6 fragment header's identification.
    pub ip_id: u32,
    /// Fragment offset in 8-byte units (IPv4 or IPv6 fragment header).
    pub frag_off: u16,
    /// Up to three VLAN ids, outermost first (Suricata keeps three).
    pub vlan: [u16; 3],
    /// Bit set of [`flags`].
    pub flags: u16,
    /// IP protocol / IPv6 upper-layer next header.
    pub proto: u8,
    /// TTL / hop limit.
    pub ttl: u8,
    /// IPv4 TOS / IPv6 traffic class.
    pub tos: u8,
    /// TCP flags (FIN 0x01 … CWR 0x80).
    pub tcp_flags: u8,
    /// Embedded original packet's IP protocol.
    pub emb_proto: u8,
    /// Number of IP-in-X encapsulations crossed to reach the innermost IP header.
    pub tunnel_depth: u8,
    /// Number of VLAN tags seen (may exceed 3; only three ids are kept).
    pub vlan_count: u8,
    /// Tunnel packets: the decoder of the innermost encapsulation (a [`tunnel_src`] kind);
    /// [`tunnel_src::ROOT`] marks a tunnel's outer packet.
    pub tunnel_src: u8,
    /// Tunnel packets: offset of the outermost IP header (the tunnel root's), or `u8::MAX`
    /// when there is none or it lies beyond 254 bytes.
    pub root_l3: u8,
    /// What was decoded.
    pub kind: PacketKind,
}

impl Default for PacketMeta {
    fn default() -> Self {
        PacketMeta::EMPTY
    }
}

fn addr_of(bytes: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(*bytes))
    } else {
        IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))
    }
}

impl PacketMeta {
    /// A meta with no layers, no events, kind [`PacketKind::Invalid`].
    pub const EMPTY: PacketMeta = PacketMeta {
        src: [0; 16],
        dst: [0; 16],
        emb_src: [0; 16],
        emb_dst: [0; 16],
        events: EventSet::EMPTY,
        l2_off: NO_OFFSET,
        l3_off: NO_OFFSET,
        l4_off: NO_OFFSET,
        payload_off: NO_OFFSET,
        payload_len: 0,
        sport: 0,
        dport: 0,
        tcp_win: 0,
        l4_a: 0,
        l4_b: 0,
        ip_id: 0,
        frag_off: 0,
        vlan: [0; 3],
        flags: 0,
        proto: 0,
        ttl: 0,
        tos: 0,
        tcp_flags: 0,
        emb_proto: 0,
        tunnel_depth: 0,
        vlan_count: 0,
        tunnel_src: tunnel_src::NONE,
        root_l3: u8::MAX,
        kind: PacketKind::Invalid,
    };

    /// Whether this is the outer packet of a tunnel, handed on beside its inner packet.
    #[inline]
    pub fn is_tunnel_root(&self) -> bool {
        self.tunnel_src & tunnel_src::ROOT != 0
    }

    /// Whether this is a packet decoded from inside a tunnel.
    #[inline]
    pub fn is_tunnel_inner(&self) -> bool {
        self.tunnel_depth > 0 && self.tunnel_src & tunnel_src::KIND != 0
    }

    /// Where the packet Suricata would make of this frame starts: 0, or for a tunnel's
    /// inner packet its IP header (its Ethernet header for GRE TEB / ERSPAN), so that
    /// `len - packet_start()` is that packet's length.
    pub fn packet_start(&self) -> usize {
        if !self.is_tunnel_inner() {
            return 0;
        }
        let l2 = (self.tunnel_src & tunnel_src::KIND != tunnel_src::VXLAN)
            .then(|| self.l2())
            .flatten();
        l2.or(self.l3()).unwrap_or(0)
    }

    /// Whether a flag of [`flags`] is set.
    #[inline]
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// Whether event `e` was raised.
    #[inline]
    pub fn has_event(&self, e: DecodeEvent) -> bool {
        self.events.contains(e)
    }

    /// Whether an IP layer was decoded (kinds `Ip` and `L4`).
    #[inline]
    pub fn is_ip(&self) -> bool {
        matches!(self.kind, PacketKind::Ip | PacketKind::L4)
    }

    /// IP version of the innermost IP header: 4, 6, or 0 when there is none.
    #[inline]
    pub fn ip_version(&self) -> u8 {
        match (self.is_ip(), self.has(flags::IPV6)) {
            (false, _) => 0,
            (true, false) => 4,
            (true, true) => 6,
        }
    }

    /// Whether Suricata would flag the packet invalid.
    #[inline]
    pub fn is_invalid(&self) -> bool {
        self.has(flags::INVALID)
    }

    /// Source address (allocates nothing, but not for the hot path).
    pub fn src_addr(&self) -> Option<IpAddr> {
        self.is_ip()
            .then(|| addr_of(&self.src, self.has(flags::IPV6)))
    }

    /// Destination address.
    pub fn dst_addr(&self) -> Option<IpAddr> {
        self.is_ip()
            .then(|| addr_of(&self.dst, self.has(flags::IPV6)))
    }

    /// ICMP errors: the embedded original packet's source address.
    pub fn emb_src_addr(&self) -> Option<IpAddr> {
        self.has(flags::EMB_IP)
            .then(|| addr_of(&self.emb_src, self.has(flags::EMB_IPV6)))
    }

    /// ICMP errors: the embedded original packet's destination address.
    pub fn emb_dst_addr(&self) -> Option<IpAddr> {
        self.has(flags::EMB_IP)
            .then(|| addr_of(&self.emb_dst, self.has(flags::EMB_IPV6)))
    }

    /// Whether the transport is ICMPv4 or ICMPv6 and was decoded.
    #[inline]
    pub fn is_icmp(&self) -> bool {
        self.kind == PacketKind::L4 && (self.proto == 1 || self.proto == 58)
    }

    /// ICMP type (ICMP packets only).
    pub fn icmp_type(&self) -> Option<u8> {
        self.is_icmp().then_some((self.sport >> 8) as u8)
    }

    /// ICMP code (ICMP packets only).
    pub fn icmp_code(&self) -> Option<u8> {
        self.is_icmp().then_some((self.sport & 0xff) as u8)
    }

    /// ICMP echo-style identifier (`l4_a >> 16`).
    pub fn icmp_id(&self) -> u16 {
        (self.l4_a >> 16) as u16
    }

    /// ICMP echo-style sequence number (`l4_a & 0xffff`).
    pub fn icmp_seq(&self) -> u16 {
        (self.l4_a & 0xffff) as u16
    }

    /// TCP sequence number.
    pub fn tcp_seq(&self) -> u32 {
        self.l4_a
    }

    /// TCP acknowledgement number.
    pub fn tcp_ack(&self) -> u32 {
        self.l4_b
    }

    /// Embedded original packet's source port.
    pub fn emb_sport(&self) -> u16 {
        (self.l4_b >> 16) as u16
    }

    /// Embedded original packet's destination port.
    pub fn emb_dport(&self) -> u16 {
        (self.l4_b & 0xffff) as u16
    }

    /// The VLAN ids that were kept (at most three).
    pub fn vlan_ids(&self) -> &[u16] {
        let n = (self.vlan_count as usize).min(3);
        self.vlan.get(..n).unwrap_or(&[])
    }

    fn off(v: u16) -> Option<usize> {
        (v != NO_OFFSET).then_some(v as usize)
    }

    /// Offset of the innermost L2 header.
    pub fn l2(&self) -> Option<usize> {
        Self::off(self.l2_off)
    }

    /// Offset of the innermost IP header.
    pub fn l3(&self) -> Option<usize> {
        Self::off(self.l3_off)
    }

    /// Offset of the transport header.
    pub fn l4(&self) -> Option<usize> {
        Self::off(self.l4_off)
    }

    /// The transport payload inside `data` (the frame given to `decode`), empty if none.
    pub fn payload<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        match Self::off(self.payload_off) {
            Some(o) => data.get(o..o + self.payload_len as usize).unwrap_or(&[]),
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_small() {
        assert!(
            std::mem::size_of::<PacketMeta>() <= 128,
            "{}",
            std::mem::size_of::<PacketMeta>()
        );
    }
}
