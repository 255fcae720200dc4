//! [`FlowKey`]: the direction-free flow identity, and its seeded hash.

use shrike_packet::decode::{flags, PacketKind, PacketMeta};

/// IP protocol number of ESP.
const ESP: u8 = 50;

/// Which side of the normalised key sent a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the lower (address, port) to the higher one.
    LoToHi,
    /// From the higher (address, port) to the lower one.
    HiToLo,
}

impl Direction {
    /// The other direction.
    #[inline]
    pub fn reverse(self) -> Direction {
        match self {
            Direction::LoToHi => Direction::HiToLo,
            Direction::HiToLo => Direction::LoToHi,
        }
    }

    /// 0 for `LoToHi`, 1 for `HiToLo` (array index).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A flow's identity, normalised so both directions give equal keys.
///
/// The lower (address, port) pair comes first. VLAN ids are part of the key unless the
/// decoder was told `vlan.use-for-tracking: false`; the tunnel depth is always part of it
/// (Suricata's `recursion_level`), so an inner flow never matches its tunnel. ESP flows
/// are one-way and keyed by their SPI (see [`FlowKey::esp_spi`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    /// Lower address (IPv4 in bytes 0..4).
    pub lo_addr: [u8; 16],
    /// Higher address.
    pub hi_addr: [u8; 16],
    /// Port of the lower side (ICMP: `type << 8 | code`).
    pub lo_port: u16,
    /// Port of the higher side.
    pub hi_port: u16,
    /// VLAN ids, outermost first (zero when absent or masked).
    pub vlan: [u16; 3],
    /// IP protocol.
    pub proto: u8,
    /// 4 or 6.
    pub ip_version: u8,
    /// Tunnel depth of the packet.
    pub tunnel_depth: u8,
}

const K: [u64; 6] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
    0x4528_21e6_38d0_1377,
    0xbe54_66cf_34e9_0c6c,
];

/// Folded multiply: the 128-bit product's halves xor-ed (foldhash / wyhash style).
#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

#[inline(always)]
fn words(a: &[u8; 16]) -> (u64, u64) {
    let mut x = [0u8; 8];
    let mut y = [0u8; 8];
    x.copy_from_slice(&a[..8]);
    y.copy_from_slice(&a[8..]);
    (u64::from_le_bytes(x), u64::from_le_bytes(y))
}

impl FlowKey {
    /// Builds the key of a decoded packet and tells which side sent it.
    ///
    /// ICMPv4 destination-unreachable errors that quote a TCP or UDP packet map to the
    /// quoted packet's flow, as Suricata's flow hash does (other ICMP errors, and ICMPv6
    /// ones, stay ICMP flows like in Suricata 7); their direction is the reverse of the
    /// quoted packet's. Meaningful for IP packets only ([`PacketMeta::is_ip`]); anything
    /// else yields an all-zero key.
    #[inline]
    pub fn from_meta(m: &PacketMeta) -> (FlowKey, Direction) {
        let v6 = m.has(flags::IPV6);
        let vlan = if m.has(flags::VLAN_NO_TRACK) {
            [0; 3]
        } else {
            m.vlan
        };
        let icmp_err = m.proto == 1
            && !v6
            && m.has(flags::EMB_PORTS)
            && !m.is_invalid()
            && (m.sport >> 8) == 3
            && matches!(m.emb_proto, 6 | 17);
        let (src, dst, sp, dp, proto, rev) = if icmp_err {
            let (es, ed) = (m.emb_sport(), m.emb_dport());
            (&m.emb_src, &m.emb_dst, es, ed, m.emb_proto, true)
        } else {
            (&m.src, &m.dst, m.sport, m.dport, m.proto, false)
        };
        // ESP: Suricata keys the flow by the SPI and keeps it one-way (a security
        // association has one direction): the SPI takes the port slots, unsorted.
        let esp = proto == ESP && m.kind == PacketKind::L4;
        let (sp, dp) = if esp {
            ((m.l4_a >> 16) as u16, m.l4_a as u16)
        } else {
            (sp, dp)
        };
        let src_lo = esp || (src, sp) <= (dst, dp);
        let (lo_addr, lo_port, hi_addr, hi_port) = if src_lo {
            (*src, sp, *dst, dp)
        } else {
            (*dst, dp, *src, sp)
        };
        let dir = if src_lo {
            Direction::LoToHi
        } else {
            Direction::HiToLo
        };
        let key = FlowKey {
            lo_addr,
            hi_addr,
            lo_port,
            hi_port,
            vlan,
            proto,
            ip_version: if !m.is_ip() {
                0
            } else if v6 {
                6
            } else {
                4
            },
            tunnel_depth: m.tunnel_depth,
        };
        (key, if rev { dir.reverse() } else { dir })
    }

    /// Seeded 64-bit hash (a few folded-multiply rounds). Equal keys hash equally, so both
    /// directions of a flow hash equally; the seed should be random per run.
    #[inline]
    pub fn hash(&self, seed: u64) -> u64 {
        let (a0, a1) = words(&self.lo_addr);
        let (b0, b1) = words(&self.hi_addr);
        let ports = u64::from(self.lo_port)
            | u64::from(self.hi_port) << 16
            | u64::from(self.vlan[0]) << 32
            | u64::from(self.vlan[1]) << 48;
        let misc = u64::from(self.proto)
            | u64::from(self.ip_version) << 8
            | u64::from(self.tunnel_depth) << 16
            | u64::from(self.vlan[2]) << 24;
        let mut h = mix(a0 ^ K[0], a1 ^ seed);
        h = mix(b0 ^ K[1] ^ h, b1 ^ K[2]);
        h = mix(ports ^ K[3] ^ h, misc ^ K[4] ^ seed);
        mix(h ^ K[5], seed ^ K[0] ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// The SPI of an ESP flow (kept in the port slots), `None` for other protocols.
    pub fn esp_spi(&self) -> Option<u32> {
        (self.proto == ESP).then(|| u32::from(self.lo_port) << 16 | u32::from(self.hi_port))
    }

    /// The address of side `lo` (true) or `hi` as an `IpAddr` (not for the hot path).
    pub fn addr(&self, lo: bool) -> std::net::IpAddr {
        let a = if lo { &self.lo_addr } else { &self.hi_addr };
        if self.ip_version == 6 {
            std::net::IpAddr::V6((*a).into())
        } else {
            std::net::IpAddr::V4(std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_small() {
        assert!(std::mem::size_of::<FlowKey>() <= 48);
    }
}
