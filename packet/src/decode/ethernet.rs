//! Ethernet II and 802.1Q/802.1ad VLAN tags; the ethertype dispatch.

use super::bytes::{array, be16, Field};
use super::events::DecodeEvent as E;
use super::Ctx;

/// Ethertypes the decoder knows.
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// Transparent Ethernet bridging (GRE).
    pub const TEB: u16 = 0x6558;
    /// 802.1Q VLAN.
    pub const VLAN: u16 = 0x8100;
    /// IPv6.
    pub const IPV6: u16 = 0x86dd;
    /// PPP (GRE v1 / PPTP).
    pub const PPP: u16 = 0x880b;
    /// MPLS unicast.
    pub const MPLS_UC: u16 = 0x8847;
    /// MPLS multicast.
    pub const MPLS_MC: u16 = 0x8848;
    /// PPPoE discovery.
    pub const PPPOE_DISC: u16 = 0x8863;
    /// PPPoE session.
    pub const PPPOE_SESS: u16 = 0x8864;
    /// 802.1ad QinQ.
    pub const QINQ: u16 = 0x88a8;
    /// ERSPAN type II.
    pub const ERSPAN2: u16 = 0x88be;
    /// ERSPAN type III.
    pub const ERSPAN3: u16 = 0x22eb;
    /// Legacy QinQ.
    pub const QINQ_9100: u16 = 0x9100;
    /// Cisco Data Center Ethernet (FabricPath): 2 bytes, then another Ethernet header.
    pub const DCE: u16 = 0x8903;
    /// VN-Tag (802.1Qbh).
    pub const VNTAG: u16 = 0x8926;
}

mod field {
    use super::Field;
    pub const DST: Field = 0..6;
    pub const SRC: Field = 6..12;
    pub const ETHERTYPE: usize = 12;
    pub const TCI: usize = 0;
    pub const VLAN_TYPE: usize = 2;
}

/// Ethernet header length.
pub const ETHERNET_HEADER_LEN: usize = 14;
/// VLAN tag length (after the outer ethertype).
pub const VLAN_HEADER_LEN: usize = 4;
/// VN-Tag length (after the outer ethertype): 4 bytes of tag, then the ethertype.
pub const VNTAG_HEADER_LEN: usize = 6;
/// Bytes a DCE frame needs after the outer ethertype (Suricata's
/// `ETHERNET_DCE_HEADER_LEN`): the 2-byte DCE field and a full inner Ethernet header.
pub const DCE_HEADER_LEN: usize = ETHERNET_HEADER_LEN + 2;

/// Zero-copy view of an Ethernet II header.
#[derive(Clone, Copy, Debug)]
pub struct Ethernet<'a> {
    buf: &'a [u8],
}

impl<'a> Ethernet<'a> {
    /// Wraps `buf` without checking its length.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Ethernet { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Ethernet { buf };
        v.check_len().then_some(v)
    }

    /// The view at the meta's L2 offset, if the innermost L2 layer is Ethernet.
    pub fn from_meta(meta: &super::PacketMeta, data: &'a [u8]) -> Option<Self> {
        Self::new_checked(data.get(meta.l2()?..)?)
    }

    /// Whether the buffer holds a full header.
    pub fn check_len(&self) -> bool {
        self.buf.len() >= ETHERNET_HEADER_LEN
    }

    /// Destination MAC.
    pub fn dst(&self) -> [u8; 6] {
        array(self.buf, field::DST.start)
    }

    /// Source MAC.
    pub fn src(&self) -> [u8; 6] {
        array(self.buf, field::SRC.start)
    }

    /// Ethertype.
    pub fn ethertype(&self) -> u16 {
        be16(self.buf, field::ETHERTYPE)
    }

    /// Bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(ETHERNET_HEADER_LEN..).unwrap_or(&[])
    }
}

/// Zero-copy view of a VLAN tag (the 4 bytes after a 0x8100/0x88a8/0x9100 ethertype).
#[derive(Clone, Copy, Debug)]
pub struct Vlan<'a> {
    buf: &'a [u8],
}

impl<'a> Vlan<'a> {
    /// Wraps `buf` without checking its length.
    pub fn new_unchecked(buf: &'a [u8]) -> Self {
        Vlan { buf }
    }

    /// Wraps `buf` after [`Self::check_len`].
    pub fn new_checked(buf: &'a [u8]) -> Option<Self> {
        let v = Vlan { buf };
        v.check_len().then_some(v)
    }

    /// Whether the buffer holds a full tag.
    pub fn check_len(&self) -> bool {
        self.buf.len() >= VLAN_HEADER_LEN
    }

    /// Tag control information.
    pub fn tci(&self) -> u16 {
        be16(self.buf, field::TCI)
    }

    /// VLAN id (12 bits).
    pub fn id(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// Priority code point.
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Encapsulated ethertype.
    pub fn ethertype(&self) -> u16 {
        be16(self.buf, field::VLAN_TYPE)
    }

    /// Bytes after the tag.
    pub fn payload(&self) -> &'a [u8] {
        self.buf.get(VLAN_HEADER_LEN..).unwrap_or(&[])
    }
}

impl Ctx<'_, '_> {
    /// Ethernet II frame at `off..end`.
    pub(crate) fn ethernet(&mut self, off: usize, end: usize) {
        self.stats.ethernet += 1;
        if !self.layer() {
            return;
        }
        if end.saturating_sub(off) < ETHERNET_HEADER_LEN {
            self.inv(E::EthernetPktTooSmall);
            return;
        }
        self.meta.l2_off = off as u16;
        let et = be16(self.data, off + field::ETHERTYPE);
        self.network(et, off + ETHERNET_HEADER_LEN, end);
    }

    /// Dispatches on an ethertype (Suricata `DecodeNetworkLayer`). Returns false for an
    /// ethertype the decoder does not know (counted as `unknown_ethertype`).
    pub(crate) fn network(&mut self, et: u16, off: usize, end: usize) -> bool {
        match et {
            ethertype::IPV4 => self.ipv4(off, end),
            ethertype::IPV6 => self.ipv6(off, end),
            ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_9100 => self.vlan(off, end),
            ethertype::MPLS_UC | ethertype::MPLS_MC => self.mpls(off, end),
            ethertype::PPPOE_SESS => self.pppoe_session(off, end),
            ethertype::PPPOE_DISC => self.pppoe_discovery(off, end),
            ethertype::VNTAG => self.vntag(off, end),
            ethertype::DCE => {
                if end.saturating_sub(off) < DCE_HEADER_LEN {
                    self.inv(E::DcePktTooSmall);
                } else {
                    self.ethernet(off + 2, end);
                }
            }
            ethertype::ARP => {
                self.stats.arp += 1;
                self.non_ip = true;
            }
            _ => {
                self.stats.unknown_ethertype += 1;
                self.non_ip = true;
                return false;
            }
        }
        true
    }

    /// VLAN tag at `off..end` (Suricata `DecodeVLAN`): three layers at most.
    pub(crate) fn vlan(&mut self, off: usize, end: usize) {
        let idx = self.meta.vlan_count;
        match idx {
            0 => self.stats.vlan += 1,
            1 => self.stats.vlan_qinq += 1,
            2 => self.stats.vlan_qinqinq += 1,
            _ => {}
        }
        if !self.layer() {
            return;
        }
        if end.saturating_sub(off) < VLAN_HEADER_LEN {
            self.inv(E::VlanHeaderTooSmall);
            return;
        }
        if idx > 2 {
            self.inv(E::VlanTooManyLayers);
            return;
        }
        let tag = Vlan::new_unchecked(self.data.get(off..end).unwrap_or(&[]));
        if let Some(slot) = self.meta.vlan.get_mut(idx as usize) {
            *slot = tag.id();
        }
        self.meta.vlan_count = idx + 1;
        if !self.network(tag.ethertype(), off + VLAN_HEADER_LEN, end) {
            self.ev(E::VlanUnknownType);
        }
    }

    /// VN-Tag (802.1Qbh) at `off..end` (Suricata `DecodeVNTag`): 4 bytes of tag, then the
    /// ethertype of what follows.
    pub(crate) fn vntag(&mut self, off: usize, end: usize) {
        self.stats.vntag += 1;
        if end.saturating_sub(off) < VNTAG_HEADER_LEN {
            self.inv(E::VntagHeaderTooSmall);
            return;
        }
        if !self.layer() {
            return;
        }
        let et = be16(self.data, off + 4);
        if !self.network(et, off + VNTAG_HEADER_LEN, end) {
            self.inv(E::VntagUnknownType);
        }
    }
}
