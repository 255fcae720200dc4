//! pcapng files: a sequence of sections, each a Section Header Block (which fixes the byte
//! order) followed by Interface Description Blocks, packet blocks and other blocks.
//!
//! Read: SHB, IDB (link type, snaplen, `if_tsresol`, `if_tsoffset`), Enhanced Packet
//! Blocks, Simple Packet Blocks and the obsolete Packet Block. Every other block type is
//! skipped by its length. Each block's trailing length is checked.

use crate::buf::{i64_at, u16_at, u32_at, InputBuf};
use crate::source::{ReadError, Step, MAX_BLOCK_LEN, MAX_CAPLEN};
use crate::{CaptureStats, LinkType, RawPacket, Timestamp};

/// Block type of a Section Header Block; the same bytes in either byte order.
pub(crate) const SHB_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
const BT_SHB: u32 = 0x0A0D_0D0A;
const BT_IDB: u32 = 1;
const BT_PB: u32 = 2;
const BT_SPB: u32 = 3;
const BT_EPB: u32 = 6;

/// Byte-order magic of an SHB, read as little-endian.
const BOM_LE: u32 = 0x1A2B_3C4D;
const BOM_BE: u32 = 0x4D3C_2B1A;

/// Smallest valid length of each block kind.
const MIN_BLOCK: usize = 12;
pub(crate) const MIN_SHB: usize = 28;
const MIN_IDB: usize = 20;
const MIN_EPB: usize = 32;
const MIN_SPB: usize = 16;

const OPT_ENDOFOPT: u16 = 0;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;

/// Converts an interface's raw 64-bit timestamps to nanoseconds since the epoch.
#[derive(Clone, Copy, Debug)]
struct TsConv {
    /// `ns = raw * mul / div` for power-of-10 resolutions.
    mul: u128,
    div: u128,
    /// For power-of-2 resolutions: `ns = (raw * 1e9) >> shift`.
    pow2_shift: Option<u32>,
    /// `if_tsoffset` in nanoseconds.
    offset_ns: i128,
}

impl TsConv {
    /// Microseconds, no offset: the default without `if_tsresol`.
    const DEFAULT: TsConv = TsConv {
        mul: 1000,
        div: 1,
        pow2_shift: None,
        offset_ns: 0,
    };

    /// Sets the resolution from an `if_tsresol` byte.
    fn set_resol(&mut self, v: u8) {
        let exp = u32::from(v & 0x7f);
        if v & 0x80 != 0 {
            self.pow2_shift = Some(exp);
        } else {
            self.pow2_shift = None;
            if exp <= 9 {
                self.mul = 10u128.pow(9 - exp);
                self.div = 1;
            } else {
                self.mul = 1;
                // Beyond 10^38 every u64 count rounds to 0 ns; u128::MAX does that too.
                self.div = 10u128.checked_pow(exp - 9).unwrap_or(u128::MAX);
            }
        }
    }

    #[inline]
    fn convert(&self, raw: u64) -> Timestamp {
        let raw = u128::from(raw);
        let ns = match self.pow2_shift {
            None if self.div == 1 => raw * self.mul,
            None => raw * self.mul / self.div,
            Some(shift) => (raw * 1_000_000_000) >> shift,
        };
        let ns = if self.offset_ns == 0 {
            ns
        } else {
            (ns as i128).saturating_add(self.offset_ns).max(0) as u128
        };
        Timestamp(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// One interface of the current section.
#[derive(Clone, Copy, Debug)]
struct Interface {
    link: LinkType,
    /// `None` when the link type is unsupported: its packets are skipped.
    link_idx: Option<usize>,
    snaplen: u32,
    ts: TsConv,
}

/// Reader state of one pcapng file.
pub(crate) struct NgReader {
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// Timestamp of the last packet delivered, for SPBs (which have none).
    last_ts: Timestamp,
    /// Unsupported LINKTYPE values whose packets were skipped, each listed once.
    unsupported: Vec<u32>,
    sections: u64,
}

/// Checks the first Section Header Block of a file (`h` holds at least its first 28 bytes
/// or the whole file). Returns the reason when it is not one.
pub(crate) fn check_first_shb(h: &[u8]) -> Result<(), String> {
    if h.len() < MIN_SHB {
        return Err(format!(
            "file ends inside the pcapng section header ({} bytes)",
            h.len()
        ));
    }
    let be = match u32_at(h, 8, false) {
        BOM_LE => false,
        BOM_BE => true,
        other => return Err(format!("bad pcapng byte-order magic {other:#010x}")),
    };
    let len = u32_at(h, 4, be) as usize;
    if len % 4 != 0 || !(MIN_SHB..=MAX_BLOCK_LEN as usize).contains(&len) {
        return Err(format!("bad pcapng section header length {len}"));
    }
    let (major, minor) = (u16_at(h, 12, be), u16_at(h, 14, be));
    if major != 1 {
        return Err(format!("unsupported pcapng version {major}.{minor}"));
    }
    Ok(())
}

/// Calls `f(code, value)` for each option in `opts` until `opt_endofopt` or the end.
/// A malformed option list ends the walk; the block itself stays valid.
fn for_each_option(opts: &[u8], be: bool, mut f: impl FnMut(u16, &[u8])) {
    let mut i = 0usize;
    while i + 4 <= opts.len() {
        let code = u16_at(opts, i, be);
        let len = u16_at(opts, i + 2, be) as usize;
        if code == OPT_ENDOFOPT {
            break;
        }
        let Some(value) = opts.get(i + 4..i + 4 + len) else {
            break;
        };
        f(code, value);
        i += 4 + len.next_multiple_of(4);
    }
}

impl NgReader {
    pub(crate) fn new() -> NgReader {
        NgReader {
            big_endian: false,
            interfaces: Vec::new(),
            last_ts: Timestamp(0),
            unsupported: Vec::new(),
            sections: 0,
        }
    }

    /// Unsupported LINKTYPE values whose packets were skipped.
    pub(crate) fn unsupported(&self) -> &[u32] {
        &self.unsupported
    }

    /// Sections seen so far.
    pub(crate) fn sections(&self) -> u64 {
        self.sections
    }

    /// Reads blocks until the next packet on a supported interface.
    pub(crate) fn next<'a>(
        &mut self,
        input: &'a mut InputBuf,
        stats: &mut CaptureStats,
    ) -> Result<Step<'a>, ReadError> {
        loop {
            let offset = input.pos();
            if !input
                .fill(MIN_BLOCK)
                .map_err(|e| ReadError::io(offset, e))?
            {
                return Ok(Step::end_or_truncated(input.len()));
            }
            let h = input.data();
            if h.first_chunk::<4>() == Some(&SHB_MAGIC) {
                self.big_endian = match u32_at(h, 8, false) {
                    BOM_LE => false,
                    BOM_BE => true,
                    other => {
                        return Err(ReadError::corrupt(
                            offset,
                            format!("bad byte-order magic {other:#010x} in section header"),
                        ))
                    }
                };
            }
            let be = self.big_endian;
            let btype = u32_at(h, 0, be);
            let blen = u32_at(h, 4, be);
            let min = match btype {
                BT_SHB => MIN_SHB,
                BT_IDB => MIN_IDB,
                BT_EPB | BT_PB => MIN_EPB,
                BT_SPB => MIN_SPB,
                _ => MIN_BLOCK,
            };
            if blen % 4 != 0 || (blen as usize) < min || blen > MAX_BLOCK_LEN {
                return Err(ReadError::corrupt(
                    offset,
                    format!("bad length {blen} for block type {btype:#x}"),
                ));
            }
            let blen = blen as usize;
            if !matches!(btype, BT_SHB | BT_IDB | BT_EPB | BT_PB | BT_SPB) {
                // Skip by streaming; the block may be larger than the buffer.
                let skipped = input
                    .skip(blen as u64 - 4)
                    .map_err(|e| ReadError::io(offset, e))?;
                if !skipped || !input.fill(4).map_err(|e| ReadError::io(offset, e))? {
                    return Ok(Step::Truncated);
                }
                let trailer = u32_at(input.data(), 0, be) as usize;
                check_trailer(offset, blen, trailer)?;
                input.take(4);
                continue;
            }
            if !input.fill(blen).map_err(|e| ReadError::io(offset, e))? {
                return Ok(Step::Truncated);
            }
            let b = input.data().get(..blen).unwrap_or(&[]);
            check_trailer(offset, blen, u32_at(b, blen - 4, be) as usize)?;
            match btype {
                BT_SHB => {
                    let (major, minor) = (u16_at(b, 12, be), u16_at(b, 14, be));
                    if major != 1 {
                        return Err(ReadError::corrupt(
                            offset,
                            format!("unsupported pcapng version {major}.{minor}"),
                        ));
                    }
                    self.interfaces.clear();
                    self.sections += 1;
                }
                BT_IDB => {
                    let lt = u32::from(u16_at(b, 8, be));
                    let link = LinkType::from_linktype(lt);
                    let mut ts = TsConv::DEFAULT;
                    let opts = b.get(16..blen - 4).unwrap_or(&[]);
                    for_each_option(opts, be, |code, v| match (code, v) {
                        (OPT_IF_TSRESOL, &[r]) => ts.set_resol(r),
                        (OPT_IF_TSOFFSET, v) if v.len() == 8 => {
                            ts.offset_ns = i128::from(i64_at(v, 0, be)) * 1_000_000_000;
                        }
                        _ => {}
                    });
                    self.interfaces.push(Interface {
                        link,
                        link_idx: link.index(),
                        snaplen: u32_at(b, 12, be),
                        ts,
                    });
                }
                _ => {
                    let pkt = self.packet(offset, btype, b)?;
                    let Some(idx) = pkt.link_idx else {
                        stats.skipped_unsupported += 1;
                        let lt = match pkt.link {
                            LinkType::Other(v) => v,
                            _ => 0,
                        };
                        if !self.unsupported.contains(&lt) {
                            self.unsupported.push(lt);
                        }
                        input.take(blen);
                        continue;
                    };
                    // SPBs take the time of the last packet delivered.
                    self.last_ts = pkt.ts;
                    stats.packets += 1;
                    stats.bytes += pkt.caplen as u64;
                    if let Some(n) = stats.link_packets.get_mut(idx) {
                        *n += 1;
                    }
                    let block = input.take(blen);
                    let data = block
                        .get(pkt.data_off..pkt.data_off + pkt.caplen)
                        .unwrap_or(&[]);
                    return Ok(Step::Packet(RawPacket {
                        ts: pkt.ts,
                        link: pkt.link,
                        data,
                        orig_len: pkt.orig_len.max(pkt.caplen as u32),
                    }));
                }
            }
            input.take(blen);
        }
    }

    /// Parses an EPB, SPB or PB `b` (the whole block, trailer checked).
    #[inline]
    fn packet(&mut self, offset: u64, btype: u32, b: &[u8]) -> Result<PacketInfo, ReadError> {
        let be = self.big_endian;
        let body_end = b.len().saturating_sub(4);
        let (iface, data_off) = match btype {
            BT_EPB => (u32_at(b, 8, be), 28),
            BT_PB => (u32::from(u16_at(b, 8, be)), 28),
            _ => (0, 12),
        };
        let Some(ifc) = self.interfaces.get(iface as usize) else {
            return Err(ReadError::corrupt(
                offset,
                format!(
                    "packet on interface {iface}, but the section describes {}",
                    self.interfaces.len()
                ),
            ));
        };
        let space = body_end.saturating_sub(data_off);
        let (ts, caplen, orig_len) = if btype == BT_SPB {
            let orig_len = u32_at(b, 8, be);
            let mut caplen = (orig_len as usize).min(space);
            if ifc.snaplen != 0 {
                caplen = caplen.min(ifc.snaplen as usize);
            }
            (self.last_ts, caplen, orig_len)
        } else {
            let raw = (u64::from(u32_at(b, 12, be)) << 32) | u64::from(u32_at(b, 16, be));
            let caplen = u32_at(b, 20, be) as usize;
            (ifc.ts.convert(raw), caplen, u32_at(b, 24, be))
        };
        if caplen > MAX_CAPLEN as usize {
            return Err(ReadError::corrupt(
                offset,
                format!("packet caplen {caplen} exceeds the maximum {MAX_CAPLEN}"),
            ));
        }
        if caplen > space {
            return Err(ReadError::corrupt(
                offset,
                format!("packet caplen {caplen} is larger than its block ({space} bytes of data)"),
            ));
        }
        Ok(PacketInfo {
            ts,
            link: ifc.link,
            link_idx: ifc.link_idx,
            caplen,
            orig_len,
            data_off,
        })
    }
}

/// What [`NgReader::packet`] found in a packet block.
struct PacketInfo {
    ts: Timestamp,
    link: LinkType,
    link_idx: Option<usize>,
    caplen: usize,
    orig_len: u32,
    data_off: usize,
}

fn check_trailer(offset: u64, blen: usize, trailer: usize) -> Result<(), ReadError> {
    if trailer == blen {
        Ok(())
    } else {
        Err(ReadError::corrupt(
            offset,
            format!("block length {blen} does not match its trailing length {trailer}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_conversions() {
        let mut c = TsConv::DEFAULT;
        assert_eq!(c.convert(1_500_000).0, 1_500_000_000);
        c.set_resol(9);
        assert_eq!(c.convert(123).0, 123);
        c.set_resol(0);
        assert_eq!(c.convert(2).0, 2_000_000_000);
        c.set_resol(12);
        assert_eq!(c.convert(5_000).0, 5);
        c.set_resol(0x80 | 10); // 1/1024 s
        assert_eq!(c.convert(1024 + 512).0, 1_500_000_000);
        c.set_resol(0x80 | 127);
        assert_eq!(c.convert(u64::MAX).0, 0);
        c.set_resol(127);
        assert_eq!(c.convert(u64::MAX).0, 0);
        c.set_resol(6);
        c.offset_ns = -2_000_000_000;
        assert_eq!(c.convert(3_000_000).0, 1_000_000_000);
        assert_eq!(c.convert(1_000_000).0, 0, "clamped at the epoch");
    }

    #[test]
    fn options_walk_stops_on_overrun() {
        // code 9 len 1 value 6 pad; code 14 len 200 (overruns)
        let opts = [9, 0, 1, 0, 6, 0, 0, 0, 14, 0, 200, 0, 1, 2, 3, 4];
        let mut seen = Vec::new();
        for_each_option(&opts, false, |c, v| seen.push((c, v.to_vec())));
        assert_eq!(seen, vec![(9, vec![6])]);
    }
}
