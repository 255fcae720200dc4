//! Packet sources for shrike: capture files (pcap, pcapng) now, live rings later.
//!
//! Every source hands out [`RawPacket`]s that borrow the source's buffer until the next call
//! (a lending iterator), so reading costs no allocation per packet.

#![warn(missing_docs)]

use std::fmt;

pub mod afpacket;
mod buf;
pub mod config;
#[cfg(feature = "dpdk")]
pub mod dpdk;
mod error;
mod inputs;
pub mod live;
pub mod memory;
mod pcap;
mod pcapng;
pub mod privileges;
pub mod safefs;
mod source;
mod stats;

pub use config::{AfPacketConfig, ClusterType, DpdkConfig};
pub use error::CaptureError;
pub use inputs::expand_inputs;
pub use live::{LiveError, LiveStats};
pub use source::{FileFormat, FileSource, MAX_BLOCK_LEN, MAX_CAPLEN};
pub use stats::CaptureStats;

/// A source of packets that lends each one until the next call.
///
/// `Ok(None)` means the source is finished: at the end of the input, after a truncated
/// record (see [`CaptureStats::truncated`]), and on every call after an error.
pub trait PacketSource {
    /// The next packet, borrowed from the source's buffer until the next call.
    fn next_packet(&mut self) -> Result<Option<RawPacket<'_>>, CaptureError>;
    /// Counters of this source so far.
    fn stats(&self) -> &CaptureStats;
}

/// Nanoseconds since the Unix epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Builds a timestamp from whole seconds and nanoseconds.
    pub const fn from_secs_nanos(secs: u64, nanos: u32) -> Self {
        Timestamp(secs * 1_000_000_000 + nanos as u64)
    }
    /// Whole seconds.
    pub const fn secs(self) -> u64 {
        self.0 / 1_000_000_000
    }
    /// Nanoseconds within the second.
    pub const fn subsec_nanos(self) -> u32 {
        (self.0 % 1_000_000_000) as u32
    }
    /// Microseconds within the second.
    pub const fn subsec_micros(self) -> u32 {
        self.subsec_nanos() / 1000
    }
    /// Milliseconds since the epoch.
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
}

/// Link-layer header types shrike decodes (tcpdump.org LINKTYPE_* values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_NULL (0): BSD loopback, 4-byte host-order address family.
    Null,
    /// LINKTYPE_ETHERNET (1).
    Ethernet,
    /// LINKTYPE_RAW (101) and DLT_RAW (12/14): a raw IPv4 or IPv6 packet.
    Raw,
    /// LINKTYPE_LOOP (108): OpenBSD loopback, 4-byte network-order address family.
    Loop,
    /// LINKTYPE_LINUX_SLL (113).
    LinuxSll,
    /// LINKTYPE_IPV4 (228).
    Ipv4,
    /// LINKTYPE_IPV6 (229).
    Ipv6,
    /// LINKTYPE_LINUX_SLL2 (276).
    LinuxSll2,
    /// LINKTYPE_PPP (9): a PPP frame (address/control optional, then the protocol).
    Ppp,
    /// LINKTYPE_C_HDLC (104): Cisco HDLC (address, control, ethertype).
    CiscoHdlc,
    /// Anything else; the value is the raw LINKTYPE number.
    Other(u32),
}

impl LinkType {
    /// Every supported link type, in [`LinkType::index`] order.
    pub const SUPPORTED: [LinkType; 10] = [
        LinkType::Null,
        LinkType::Ethernet,
        LinkType::Raw,
        LinkType::Loop,
        LinkType::LinuxSll,
        LinkType::Ipv4,
        LinkType::Ipv6,
        LinkType::LinuxSll2,
        LinkType::Ppp,
        LinkType::CiscoHdlc,
    ];

    /// Position of a supported link type in [`LinkType::SUPPORTED`]; `None` for `Other`.
    pub const fn index(self) -> Option<usize> {
        match self {
            LinkType::Null => Some(0),
            LinkType::Ethernet => Some(1),
            LinkType::Raw => Some(2),
            LinkType::Loop => Some(3),
            LinkType::LinuxSll => Some(4),
            LinkType::Ipv4 => Some(5),
            LinkType::Ipv6 => Some(6),
            LinkType::LinuxSll2 => Some(7),
            LinkType::Ppp => Some(8),
            LinkType::CiscoHdlc => Some(9),
            LinkType::Other(_) => None,
        }
    }

    /// Maps a LINKTYPE_* number to a link type.
    pub fn from_linktype(v: u32) -> LinkType {
        match v {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            12 | 14 | 101 => LinkType::Raw,
            108 => LinkType::Loop,
            113 => LinkType::LinuxSll,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            276 => LinkType::LinuxSll2,
            9 => LinkType::Ppp,
            104 => LinkType::CiscoHdlc,
            other => LinkType::Other(other),
        }
    }
    /// True unless `Other`.
    pub fn is_supported(self) -> bool {
        !matches!(self, LinkType::Other(_))
    }
    /// Stable short name used in stats and logs.
    pub fn name(self) -> &'static str {
        match self {
            LinkType::Null => "null",
            LinkType::Ethernet => "ethernet",
            LinkType::Raw => "raw",
            LinkType::Loop => "loop",
            LinkType::LinuxSll => "sll",
            LinkType::Ipv4 => "ipv4",
            LinkType::Ipv6 => "ipv6",
            LinkType::LinuxSll2 => "sll2",
            LinkType::Ppp => "ppp",
            LinkType::CiscoHdlc => "chdlc",
            LinkType::Other(_) => "other",
        }
    }
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkType::Other(v) => write!(f, "linktype {v}"),
            t => f.write_str(t.name()),
        }
    }
}

/// One captured frame, borrowed from the source until its next call.
#[derive(Clone, Copy, Debug)]
pub struct RawPacket<'a> {
    /// Capture time.
    pub ts: Timestamp,
    /// Link-layer type of `data`.
    pub link: LinkType,
    /// Captured bytes (caplen).
    pub data: &'a [u8],
    /// Length of the frame on the wire (>= data.len()).
    pub orig_len: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_index_matches_supported_order() {
        for (i, l) in LinkType::SUPPORTED.iter().enumerate() {
            assert_eq!(l.index(), Some(i));
            assert!(l.is_supported());
        }
        assert_eq!(LinkType::Other(105).index(), None);
        assert_eq!(LinkType::from_linktype(1), LinkType::Ethernet);
        assert_eq!(LinkType::from_linktype(12), LinkType::Raw);
        assert_eq!(LinkType::from_linktype(276), LinkType::LinuxSll2);
        assert_eq!(LinkType::from_linktype(9), LinkType::Ppp);
        assert_eq!(LinkType::from_linktype(104), LinkType::CiscoHdlc);
        assert_eq!(LinkType::from_linktype(105), LinkType::Other(105));
    }
}
