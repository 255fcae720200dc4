//! Non-Ethernet link layers: Linux cooked (SLL, SLL2), BSD NULL/LOOP, raw IP.

use super::bytes::{be16, be32, le32, u8_at};
use super::ethernet::ethertype;
use super::events::DecodeEvent as E;
use super::Ctx;

/// Linux cooked capture v1 header length.
pub const SLL_HEADER_LEN: usize = 16;
/// Linux cooked capture v2 header length.
pub const SLL2_HEADER_LEN: usize = 20;
/// BSD NULL / LOOP header length.
pub const NULL_HEADER_LEN: usize = 4;

mod field {
    /// SLL: protocol (ethertype) field.
    pub const SLL_PROTO: usize = 14;
    /// SLL2: protocol (ethertype) field.
    pub const SLL2_PROTO: usize = 0;
}

/// BSD address-family values for IPv4 and IPv6 (`AF_INET6` differs per BSD: 24, 28, 30).
fn af_kind(af: u32) -> Option<bool> {
    match af {
        2 => Some(false),
        24 | 28 | 30 => Some(true),
        _ => None,
    }
}

impl Ctx<'_, '_> {
    /// Linux SLL (v1).
    pub(crate) fn sll(&mut self, off: usize, end: usize) {
        self.stats.sll += 1;
        if end.saturating_sub(off) < SLL_HEADER_LEN {
            self.inv(E::SllPktTooSmall);
            return;
        }
        self.meta.l2_off = off as u16;
        let et = be16(self.data, off + field::SLL_PROTO);
        self.network(et, off + SLL_HEADER_LEN, end);
    }

    /// Linux SLL2.
    pub(crate) fn sll2(&mut self, off: usize, end: usize) {
        self.stats.sll2 += 1;
        if end.saturating_sub(off) < SLL2_HEADER_LEN {
            self.inv(E::Sll2PktTooSmall);
            return;
        }
        self.meta.l2_off = off as u16;
        let et = be16(self.data, off + field::SLL2_PROTO);
        self.network(et, off + SLL2_HEADER_LEN, end);
    }

    /// BSD NULL (host-order family: both byte orders are accepted, since the capture host's
    /// order is unknown) or OpenBSD LOOP (`network_order`).
    pub(crate) fn null(&mut self, off: usize, end: usize, network_order: bool) {
        self.stats.null += 1;
        if end.saturating_sub(off) < NULL_HEADER_LEN {
            self.inv(E::LtnullPktTooSmall);
            return;
        }
        let be = be32(self.data, off);
        let kind = if network_order {
            af_kind(be)
        } else {
            af_kind(le32(self.data, off)).or_else(|| af_kind(be))
        };
        let body = off + NULL_HEADER_LEN;
        match kind {
            Some(false) => self.ipv4(body, end),
            Some(true) => self.ipv6(body, end),
            None => {
                self.ev(E::LtnullUnsupportedType);
                self.non_ip = true;
            }
        }
    }

    /// Cisco HDLC: address, control, ethertype.
    pub(crate) fn chdlc(&mut self, off: usize, end: usize) {
        self.stats.chdlc += 1;
        if end.saturating_sub(off) < 4 {
            self.inv(E::ChdlcPktTooSmall);
            return;
        }
        self.meta.l2_off = off as u16;
        let et = be16(self.data, off + 2);
        self.network(et, off + 4, end);
    }

    /// Raw IPv4/IPv6, told apart by the version nibble.
    pub(crate) fn raw(&mut self, off: usize, end: usize) {
        self.stats.raw += 1;
        let len = end.saturating_sub(off);
        if len < 20 {
            self.inv(E::Ipv4PktTooSmall);
            return;
        }
        match u8_at(self.data, off) >> 4 {
            4 => self.ipv4(off, end),
            6 => {
                if len < 40 {
                    self.inv(E::Ipv6PktTooSmall);
                } else {
                    self.ipv6(off, end);
                }
            }
            _ => self.inv(E::IprawInvalidIpVersion),
        }
    }

    /// The inner payload type carried by a VXLAN / TEB tunnel is Ethernet; checks the
    /// inner ethertype is one VXLAN may carry.
    pub(crate) fn vxlan_inner_ok(&self, eth_off: usize) -> bool {
        matches!(
            be16(self.data, eth_off + 12),
            ethertype::IPV4
                | ethertype::IPV6
                | ethertype::ARP
                | ethertype::VLAN
                | ethertype::QINQ
                | ethertype::QINQ_9100
        )
    }
}
