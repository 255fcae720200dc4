//! Classic pcap (libpcap) files: a 24-byte file header, then 16-byte record headers each
//! followed by `caplen` bytes of packet data.

use crate::buf::{u16_at, u32_at, InputBuf};
use crate::source::{ReadError, Step, MAX_CAPLEN};
use crate::{CaptureStats, LinkType, RawPacket, Timestamp};

/// Size of the file header.
pub(crate) const FILE_HEADER_LEN: usize = 24;
/// Size of a record header.
const RECORD_HEADER_LEN: usize = 16;

/// Magic numbers as the first four bytes appear on disk.
pub(crate) const MAGIC_USEC_LE: [u8; 4] = [0xd4, 0xc3, 0xb2, 0xa1];
pub(crate) const MAGIC_USEC_BE: [u8; 4] = [0xa1, 0xb2, 0xc3, 0xd4];
pub(crate) const MAGIC_NSEC_LE: [u8; 4] = [0x4d, 0x3c, 0xb2, 0xa1];
pub(crate) const MAGIC_NSEC_BE: [u8; 4] = [0xa1, 0xb2, 0x3c, 0x4d];

/// Link type bits of the header's LinkType field; the upper bits carry the FCS length
/// (bits 28–31) and its "present" flag (bit 26), as libpcap's `LT_LINKTYPE` masks them.
const LINKTYPE_MASK: u32 = 0x03FF_FFFF;

/// Why a pcap file header was refused.
pub(crate) enum HeaderError {
    /// Malformed header, with the reason.
    Bad(String),
    /// Well-formed, but the link type is not one shrike decodes.
    Unsupported(u32),
}

/// Reader state of one classic pcap file.
pub(crate) struct PcapReader {
    big_endian: bool,
    nanos: bool,
    link: LinkType,
    link_idx: usize,
}

impl PcapReader {
    /// Parses the 24-byte file header `h` (magic already recognised).
    pub(crate) fn from_header(h: &[u8]) -> Result<PcapReader, HeaderError> {
        let magic = h.first_chunk::<4>().copied().unwrap_or_default();
        let (big_endian, nanos) = match magic {
            MAGIC_USEC_LE => (false, false),
            MAGIC_USEC_BE => (true, false),
            MAGIC_NSEC_LE => (false, true),
            MAGIC_NSEC_BE => (true, true),
            _ => return Err(HeaderError::Bad("not a pcap magic number".into())),
        };
        if h.len() < FILE_HEADER_LEN {
            return Err(HeaderError::Bad(format!(
                "file ends inside the {FILE_HEADER_LEN}-byte pcap header ({} bytes)",
                h.len()
            )));
        }
        let major = u16_at(h, 4, big_endian);
        let minor = u16_at(h, 6, big_endian);
        if major != 2 {
            return Err(HeaderError::Bad(format!(
                "unsupported pcap version {major}.{minor}"
            )));
        }
        let linktype = u32_at(h, 20, big_endian) & LINKTYPE_MASK;
        let link = LinkType::from_linktype(linktype);
        let Some(link_idx) = link.index() else {
            return Err(HeaderError::Unsupported(linktype));
        };
        Ok(PcapReader {
            big_endian,
            nanos,
            link,
            link_idx,
        })
    }

    /// The file's link type.
    pub(crate) fn link(&self) -> LinkType {
        self.link
    }

    /// True for the nanosecond-resolution variant.
    pub(crate) fn nanos(&self) -> bool {
        self.nanos
    }

    /// True when the file is big-endian.
    pub(crate) fn big_endian(&self) -> bool {
        self.big_endian
    }

    /// Reads the next record.
    #[inline]
    pub(crate) fn next<'a>(
        &mut self,
        input: &'a mut InputBuf,
        stats: &mut CaptureStats,
    ) -> Result<Step<'a>, ReadError> {
        let offset = input.pos();
        if !input
            .fill(RECORD_HEADER_LEN)
            .map_err(|e| ReadError::io(offset, e))?
        {
            return Ok(Step::end_or_truncated(input.len()));
        }
        let h = input.data();
        let be = self.big_endian;
        let secs = u32_at(h, 0, be);
        let frac = u32_at(h, 4, be);
        let caplen = u32_at(h, 8, be);
        let orig_len = u32_at(h, 12, be);
        if caplen > MAX_CAPLEN {
            return Err(ReadError::corrupt(
                offset,
                format!("record caplen {caplen} exceeds the maximum {MAX_CAPLEN}"),
            ));
        }
        let total = RECORD_HEADER_LEN + caplen as usize;
        if !input.fill(total).map_err(|e| ReadError::io(offset, e))? {
            return Ok(Step::Truncated);
        }
        let frac_ns = if self.nanos {
            frac as u64
        } else {
            frac as u64 * 1000
        };
        let ts = Timestamp(secs as u64 * 1_000_000_000 + frac_ns);
        stats.packets += 1;
        stats.bytes += caplen as u64;
        if let Some(n) = stats.link_packets.get_mut(self.link_idx) {
            *n += 1;
        }
        let data = input.take(total).get(RECORD_HEADER_LEN..).unwrap_or(&[]);
        Ok(Step::Packet(RawPacket {
            ts,
            link: self.link,
            data,
            orig_len: orig_len.max(caplen),
        }))
    }
}
