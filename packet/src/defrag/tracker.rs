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
    /// Byte offset of the stored data (the fragment's offset plus its own trim at insert).
    offset: u32,
    /// Bytes stored.
    data_len: u32,
    /// Bytes later trimmed off the front (another fragment's data is preferred there).
    ltrim: u32,
    /// Dropped by a later fragment.
    skip: bool,
    /// More fragments follow.
    more: bool,
    /// Where the data sits in `Tracker::data`.
    at: u32,
    /// The fragment began the datagram: where its headers sit in `Tracker::hdrs`.
    hdr: Option<(u32, u32)>,
    /// IPv6: [`FragInfo::nh_pos`] and [`FragInfo::nh`].
    nh_pos: u32,
    nh: u8,
}

impl Frag {
    fn end(&self) -> u32 {
        self.offset + self.data_len
    }
}

/// What adding a fragment did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Added {
    /// It overlapped a stored fragment (`ipv4.frag_overlap` / `ipv6.frag_overlap`).
    pub overlap: bool,
    /// It was stored (false: the policy discarded all of it).
    pub stored: bool,
}

/// One datagram being reassembled, as Suricata 7's `DefragInsertFrag` and
/// `Defrag4Reassemble` / `Defrag6Reassemble` do it: fragments kept in offset order (a
/// fragment at an offset already held goes after it), each new one trimmed, or earlier ones
/// trimmed or dropped, by the policy's rules against the stored fragments from the one
/// before its offset on, and the datagram rebuilt by copying the fragments in offset order
/// (later copies overwrite earlier ones where trimming left an overlap).
#[derive(Debug)]
pub(crate) struct Tracker {
    pub policy: DefragPolicy,
    pub v6: bool,
    pub timeout_at: u32,
    /// Fragments in offset order.
    frags: Vec<Frag>,
    data: Vec<u8>,
    hdrs: Vec<u8>,
    seen_last: bool,
}

impl Tracker {
    pub fn new(policy: DefragPolicy, v6: bool) -> Self {
        Tracker {
            policy,
            v6,
            timeout_at: 0,
            frags: Vec::new(),
            data: Vec::new(),
            hdrs: Vec::new(),
            seen_last: false,
        }
    }

    /// Bytes held.
    pub fn mem(&self) -> u64 {
        (self.data.capacity() + self.hdrs.capacity()) as u64
            + self.frags.capacity() as u64 * FRAG_COST
    }

    pub fn frag_count(&self) -> usize {
        self.frags.len()
    }

    /// Stores fragment `f` under the tracker's policy.
    pub fn add(&mut self, f: &FragInfo<'_>) -> Added {
        let frag_offset = f.offset;
        let data_len = f.data.len() as u32;
        let frag_end = frag_offset + data_len;
        let mut ltrim = 0u32;
        let mut overlap = false;
        let mut discard = false;
        if !self.frags.is_empty() {
            // Suricata looks up the first fragment at or after `frag_offset - 1` (a 16-bit
            // value: 0 - 1 wraps) and starts at the one before it.
            let key = (frag_offset as u16).wrapping_sub(1) as u32;
            let n = self.frags.partition_point(|g| g.offset < key);
            // None found, or the first one: start at the first fragment.
            let (mut prev, mut next) = if n == self.frags.len() || n == 0 {
                (0, 1)
            } else {
                (n - 1, n)
            };
            let mut remove = None;
            while prev < self.frags.len() {
                let pf = self.frags[prev];
                if !pf.skip {
                    if frag_offset < pf.end() && pf.offset < frag_end {
                        overlap = true;
                    }
                    match self.step(prev, next, frag_offset, frag_end, &mut ltrim) {
                        Step::Next => {}
                        Step::Insert => {
                            let pf = self.frags[prev];
                            if pf.skip || pf.ltrim >= pf.data_len {
                                remove = Some(prev);
                            }
                            break;
                        }
                        Step::Done => {
                            discard = true;
                            break;
                        }
                    }
                }
                prev = next;
                next += 1;
            }
            if let Some(i) = remove {
                self.frags.remove(i);
            }
        }
        if discard || ltrim >= data_len {
            return Added {
                overlap,
                stored: false,
            };
        }
        // Exact reservations: the memcap charges what a fragment costs, not a doubled Vec.
        let at = self.data.len() as u32;
        let kept = f.data.get(ltrim as usize..).unwrap_or(&[]);
        self.data.reserve_exact(kept.len());
        self.data.extend_from_slice(kept);
        self.frags.reserve_exact(1);
        let hdr = (frag_offset == 0).then(|| {
            let h = self.hdrs.len() as u32;
            self.hdrs.reserve_exact(f.hdr.len());
            self.hdrs.extend_from_slice(f.hdr);
            (h, f.hdr.len() as u32)
        });
        let offset = frag_offset + ltrim;
        let i = self.frags.partition_point(|g| g.offset <= offset);
        self.frags.insert(
            i,
            Frag {
                offset,
                data_len: data_len - ltrim,
                ltrim: 0,
                skip: false,
                more: f.more,
                at,
                hdr,
                nh_pos: f.nh_pos as u32,
                nh: f.nh,
            },
        );
        if !f.more {
            self.seen_last = true;
        }
        Added {
            overlap,
            stored: true,
        }
    }

    /// One policy decision of `DefragInsertFrag` against stored fragment `prev` (`next`:
    /// the one after it).
    fn step(
        &mut self,
        prev: usize,
        next: usize,
        frag_offset: u32,
        frag_end: u32,
        ltrim: &mut u32,
    ) -> Step {
        let p = self.frags[prev];
        let (p_off, p_end) = (p.offset, p.end());
        match self.policy {
            DefragPolicy::Bsd => {
                if frag_offset < p_end {
                    if p_off <= frag_offset {
                        if p_end > frag_end {
                            return Step::Done;
                        }
                        *ltrim = p_end - frag_offset;
                        if let Some(n) = self.frags.get_mut(next) {
                            if frag_end > n.offset {
                                n.ltrim = frag_end - n.offset;
                            }
                        }
                        return Step::Insert;
                    }
                    if frag_offset <= p_off && frag_end > p_off + p.ltrim {
                        let t = frag_end - p_off;
                        if t > p.ltrim {
                            self.frags[prev].ltrim = t;
                        }
                    }
                    if let Some(n) = self.frags.get_mut(next) {
                        if frag_end > n.offset {
                            n.ltrim = frag_end - n.offset;
                        }
                    }
                    return Step::Insert;
                }
                Step::Next
            }
            DefragPolicy::Linux => {
                if p_off + p.ltrim < frag_offset + *ltrim && p_end > frag_offset + *ltrim {
                    *ltrim += p_end - frag_offset;
                }
                if frag_offset + *ltrim < p_off + p.ltrim && frag_end > p_off + p.ltrim {
                    let pp = &mut self.frags[prev];
                    pp.ltrim += frag_end - (p_off + p.ltrim);
                    return Step::Insert;
                }
                if frag_offset + *ltrim <= p_off + p.ltrim && frag_end >= p_end {
                    self.frags[prev].skip = true;
                    return Step::Insert;
                }
                Step::Next
            }
            DefragPolicy::Windows => {
                if frag_offset + *ltrim >= p_off + *ltrim && frag_end <= p_end {
                    return Step::Done;
                }
                if frag_offset + *ltrim < p_off + *ltrim && frag_end > p_end {
                    self.frags[prev].skip = true;
                    return Step::Insert;
                }
                if frag_offset + *ltrim > p_off + p.ltrim && frag_offset + *ltrim < p_end {
                    *ltrim += p_end - frag_offset;
                    return Step::Insert;
                }
                if frag_offset + *ltrim == p_off + *ltrim && frag_end > p_end {
                    *ltrim += p_end - frag_offset;
                    return Step::Insert;
                }
                Step::Next
            }
            DefragPolicy::Solaris => {
                if frag_offset < p_end {
                    if frag_offset >= p_off {
                        *ltrim = p_end - frag_offset;
                    }
                    if frag_offset < p_off && frag_end >= p_end {
                        self.frags[prev].skip = true;
                    }
                    return Step::Insert;
                }
                Step::Next
            }
            DefragPolicy::First => {
                if frag_offset >= p_off && frag_end <= p_end {
                    return Step::Done;
                }
                if frag_offset < p_off {
                    return Step::Insert;
                }
                if frag_offset < p_end {
                    *ltrim = p_end - frag_offset;
                    return Step::Insert;
                }
                Step::Next
            }
            DefragPolicy::Last => {
                if frag_offset <= p_off {
                    if frag_end > p_off {
                        self.frags[prev].ltrim = frag_end - p_off;
                    }
                    return Step::Insert;
                }
                Step::Next
            }
            // No trimming: the copy order decides (the later offset wins).
            DefragPolicy::BsdRight => Step::Next,
        }
    }

    /// The last fragment seen, the first fragment held at offset 0 and no hole in between
    /// (Suricata's check before reassembling).
    pub fn complete(&self) -> bool {
        if !self.seen_last {
            return false;
        }
        match self.frags.first() {
            Some(f) if f.offset == 0 => {}
            _ => return false,
        }
        let mut len = 0u32;
        for f in &self.frags {
            if f.offset > len {
                return false;
            }
            len = len.max(f.end());
        }
        true
    }

    /// Writes the reassembled packet into `out`; false if it would be too large.
    pub fn build(&self, out: &mut Vec<u8>) -> bool {
        // The fragments that are copied, in order (Suricata stops after a fragment without
        // more-fragments at the first one past its offset).
        let mut body: Vec<(u32, &[u8])> = Vec::with_capacity(self.frags.len());
        let mut hdr: Option<&Frag> = None;
        let mut more = true;
        let mut prev_offset = 0u32;
        let mut total = 0u32;
        for f in &self.frags {
            if !more && f.offset > prev_offset {
                break;
            }
            if f.skip || f.ltrim >= f.data_len {
                continue;
            }
            let data = self
                .data
                .get(f.at as usize..(f.at + f.data_len) as usize)
                .unwrap_or(&[]);
            if f.offset == 0 {
                // The first fragment is copied whole, headers included.
                hdr = Some(f);
                body.push((0, data));
                total = total.max(f.data_len);
            } else {
                body.push((
                    f.offset + f.ltrim,
                    data.get(f.ltrim as usize..).unwrap_or(&[]),
                ));
                total = total.max(f.end());
            }
            more = f.more;
            prev_offset = f.offset;
        }
        let Some((h_at, h_len)) = hdr.and_then(|f| f.hdr) else {
            return false;
        };
        let Some(h) = self.hdrs.get(h_at as usize..(h_at + h_len) as usize) else {
            return false;
        };
        let hl = h.len();
        let total = total as usize;
        if (!self.v6 && hl + total > 65_535) || (self.v6 && hl - 40 + total > 65_535) {
            return false;
        }
        out.clear();
        out.extend_from_slice(h);
        out.resize(hl + total, 0);
        for (off, d) in body {
            if let Some(dst) = out.get_mut(hl + off as usize..hl + off as usize + d.len()) {
                dst.copy_from_slice(d);
            }
        }
        let (nh_pos, nh) = hdr.map_or((0, 0), |f| (f.nh_pos as usize, f.nh));
        if self.v6 {
            let plen = (hl - 40 + total) as u16;
            if let Some(d) = out.get_mut(4..6) {
                d.copy_from_slice(&plen.to_be_bytes());
            }
            if let Some(b) = out.get_mut(nh_pos) {
                *b = nh;
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

/// The outcome of one policy decision.
enum Step {
    /// Look at the next stored fragment.
    Next,
    /// Store the new fragment (after dropping the current one if it is used up).
    Insert,
    /// Discard the new fragment.
    Done,
}
