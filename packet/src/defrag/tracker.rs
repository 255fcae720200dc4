//! One datagram in reassembly: its fragments, the first fragment's headers, and the
//! rebuild of the whole packet.

use super::policy::DefragPolicy;
use crate::decode::{checksum, flags, proto, Ipv4, Ipv6, PacketMeta};

/// Bytes charged per tracker.
pub(crate) const TRACKER_COST: u64 = std::mem::size_of::<Tracker>() as u64 + 64;
const FRAG_COST: u64 = std::mem::size_of::<Frag>() as u64;

/// What a fragment carries, read from the packet bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FragInfo<'a> {
    /// Byte offset of the data in the datagram.
    pub offset: u32,
    pub more: bool,
    pub data: &'a [u8],
    /// Headers to rebuild with (IPv4 header; IPv6 header plus the unfragmentable
    /// extension headers, without the fragment header).
    pub hdr: &'a [u8],
    /// IPv6: position in `hdr` of the next-header byte that must name `nh`.
    pub nh_pos: usize,
    /// IPv6: the fragment header's next header.
    pub nh: u8,
}

impl<'a> FragInfo<'a> {
    /// Reads the fragment fields of `pkt` (decoded as `meta`).
    pub fn parse(meta: &PacketMeta, pkt: &'a [u8]) -> Option<Self> {
        if meta.has(flags::IPV6) {
            let ip = Ipv6::from_meta(meta, pkt)?;
            let l3 = meta.l3()?;
            let end = l3 + 40 + usize::from(ip.payload_len());
            let mut off = l3 + 40;
            let mut nh_pos = 6usize;
            for h in ip.ext_headers() {
                if h.kind == proto::FRAGMENT {
                    let hdr = pkt.get(l3..off)?;
                    let data = pkt.get(off + 8..end)?;
                    return Some(FragInfo {
                        offset: u32::from(h.frag_offset()) * 8,
                        more: h.frag_more(),
                        data,
                        hdr,
                        nh_pos,
                        nh: h.next_header(),
                    });
                }
                nh_pos = off - l3;
                off += h.data.len();
            }
            None
        } else {
            let ip = Ipv4::from_meta(meta, pkt)?;
            let l3 = meta.l3()?;
            let hl = ip.header_len();
            Some(FragInfo {
                offset: u32::from(ip.frag_offset()) * 8,
                more: ip.mf(),
                data: ip.payload(),
                hdr: pkt.get(l3..l3 + hl)?,
                nh_pos: 0,
                nh: 0,
            })
        }
    }
}

/// Bytes a fragment will cost.
pub(crate) fn frag_cost(f: &FragInfo<'_>) -> u64 {
    f.data.len() as u64 + FRAG_COST + if f.offset == 0 { f.hdr.len() as u64 } else { 0 }
}

#[derive(Clone, Copy, Debug)]
struct Frag {
    start: u32,
    end: u32,
    /// Where the data sits in `Tracker::data`.
    at: u32,
}

/// One datagram being reassembled.
#[derive(Debug)]
pub(crate) struct Tracker {
    pub policy: DefragPolicy,
    pub v6: bool,
    pub timeout_at: u32,
    /// Fragments in arrival order.
    frags: Vec<Frag>,
    data: Vec<u8>,
    hdr: Vec<u8>,
    has_first: bool,
    seen_last: bool,
    any_overlap: bool,
    nh_pos: usize,
    nh: u8,
}

impl Tracker {
    pub fn new(policy: DefragPolicy, v6: bool) -> Self {
        Tracker {
            policy,
            v6,
            timeout_at: 0,
            frags: Vec::new(),
            data: Vec::new(),
            hdr: Vec::new(),
            has_first: false,
            seen_last: false,
            any_overlap: false,
            nh_pos: 0,
            nh: 0,
        }
    }

    /// Bytes held.
    pub fn mem(&self) -> u64 {
        (self.data.capacity() + self.hdr.capacity()) as u64
            + self.frags.capacity() as u64 * FRAG_COST
    }

    pub fn frag_count(&self) -> usize {
        self.frags.len()
    }

    /// Whether `f` overlaps a stored fragment.
    pub fn overlaps(&self, f: &FragInfo<'_>) -> bool {
        let (s, e) = (f.offset, f.offset + f.data.len() as u32);
        self.frags.iter().any(|g| s < g.end && g.start < e)
    }

    pub fn add(&mut self, f: &FragInfo<'_>) {
        let (s, e) = (f.offset, f.offset + f.data.len() as u32);
        if self.frags.iter().any(|g| s < g.end && g.start < e) {
            self.any_overlap = true;
        }
        let at = self.data.len() as u32;
        self.data.extend_from_slice(f.data);
        self.frags.push(Frag {
            start: s,
            end: e,
            at,
        });
        if f.offset == 0 && !self.has_first {
            self.has_first = true;
            self.hdr.clear();
            self.hdr.extend_from_slice(f.hdr);
            self.nh_pos = f.nh_pos;
            self.nh = f.nh;
        }
        if !f.more {
            self.seen_last = true;
        }
    }

    fn total(&self) -> u32 {
        self.frags.iter().map(|f| f.end).max().unwrap_or(0)
    }

    /// First and last fragment seen and no hole in between.
    pub fn complete(&self) -> bool {
        if !self.has_first || !self.seen_last {
            return false;
        }
        let mut r: Vec<(u32, u32)> = self.frags.iter().map(|f| (f.start, f.end)).collect();
        r.sort_unstable();
        let mut reach = 0u32;
        for (s, e) in r {
            if s > reach {
                return false;
            }
            reach = reach.max(e);
        }
        reach == self.total()
    }

    /// Writes the reassembled packet into `out`; false if it would be too large.
    pub fn build(&self, out: &mut Vec<u8>, owner: &mut Vec<u32>) -> bool {
        let total = self.total() as usize;
        let hl = self.hdr.len();
        if (!self.v6 && hl + total > 65_535) || (self.v6 && hl - 40 + total > 65_535) {
            return false;
        }
        out.clear();
        out.extend_from_slice(&self.hdr);
        out.resize(hl + total, 0);
        let Some(body) = out.get_mut(hl..) else {
            return false;
        };
        if !self.any_overlap {
            for f in &self.frags {
                let src = self
                    .data
                    .get(f.at as usize..(f.at + f.end - f.start) as usize);
                let dst = body.get_mut(f.start as usize..f.end as usize);
                if let (Some(src), Some(dst)) = (src, dst) {
                    dst.copy_from_slice(src);
                }
            }
        } else {
            owner.clear();
            owner.resize(total, u32::MAX);
            for (k, f) in self.frags.iter().enumerate() {
                for pos in f.start..f.end {
                    let o = owner.get(pos as usize).copied().unwrap_or(u32::MAX);
                    let wins = match self.frags.get(o as usize) {
                        None => true,
                        Some(g) => self.policy.new_wins(f.start, f.end, g.start, g.end),
                    };
                    if wins {
                        let b = self
                            .data
                            .get((f.at + pos - f.start) as usize)
                            .copied()
                            .unwrap_or(0);
                        if let (Some(d), Some(w)) =
                            (body.get_mut(pos as usize), owner.get_mut(pos as usize))
                        {
                            *d = b;
                            *w = k as u32;
                        }
                    }
                }
            }
        }
        if self.v6 {
            let plen = (hl - 40 + total) as u16;
            if let Some(d) = out.get_mut(4..6) {
                d.copy_from_slice(&plen.to_be_bytes());
            }
            if let Some(b) = out.get_mut(self.nh_pos) {
                *b = self.nh;
            }
        } else {
            let tl = (hl + total) as u16;
            if let Some(d) = out.get_mut(2..4) {
                d.copy_from_slice(&tl.to_be_bytes());
            }
            if let Some(d) = out.get_mut(6..8) {
                d.copy_from_slice(&[0, 0]);
            }
            if let Some(d) = out.get_mut(10..12) {
                d.copy_from_slice(&[0, 0]);
            }
            let c = !checksum::fold(checksum::sum(out.get(..hl).unwrap_or(&[]), 0));
            if let Some(d) = out.get_mut(10..12) {
                d.copy_from_slice(&c.to_be_bytes());
            }
        }
        true
    }
}
