//! Per-direction reassembly buffer: segment list (for overlap policies), coverage blocks
//! (what data is present), sparse data regions, and the app-layer / raw progress marks.
//!
//! Offsets are absolute stream offsets (`u64`, offset 0 = ISN + 1). Data below `base_off`
//! has been released. Every structure is bounded by the depth and by the engine's memcap,
//! which the caller checks with [`StreamBuf::mem`] before and after each change.

use shrike_packet::policy::OsPolicy;

/// One received segment (after depth clipping): `[off, off + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seg {
    pub off: u64,
    pub len: u32,
}

impl Seg {
    #[inline]
    fn end(&self) -> u64 {
        self.off + u64::from(self.len)
    }
}

/// A contiguous run of buffer memory; may contain holes (tracked by the blocks).
#[derive(Clone, Debug, Default)]
struct Region {
    off: u64,
    data: Vec<u8>,
}

impl Region {
    fn end(&self) -> u64 {
        self.off + self.data.len() as u64
    }
}

/// Regions closer than this are merged (the hole is zero-filled until data arrives).
const MERGE_GAP: u64 = 4096;
/// Suricata's streaming-buffer region gap (`STREAMING_BUFFER_REGION_GAP_DEFAULT`): data
/// this far from everything stored opens a new region there (EVE `tcp.*_max_regions`).
const SURICATA_REGION_GAP: u64 = 262_144;
/// Bookkeeping bytes charged per stored segment.
pub(crate) const SEG_COST: usize = std::mem::size_of::<Seg>();

/// Stream flags.
pub(crate) mod sf {
    /// `stream.reassembly.depth` reached: later data is not stored.
    pub const DEPTH_REACHED: u8 = 1 << 0;
    /// Nothing more is reassembled (depth consumed, or app and raw both disabled).
    pub const NOREASSEMBLY: u8 = 1 << 1;
    /// The app layer does not consume this direction.
    pub const APP_DISABLED: u8 = 1 << 2;
    /// Raw (stream) inspection does not consume this direction.
    pub const RAW_DISABLED: u8 = 1 << 3;
    /// Inspect raw data now regardless of the chunk size (Suricata `TRIGGER_RAW`).
    pub const TRIGGER_RAW: u8 = 1 << 4;
    /// Data was seen in this direction.
    pub const HAS_DATA: u8 = 1 << 5;
    /// The app layer met a gap (Suricata `STREAMTCP_STREAM_FLAG_HAS_GAP`).
    pub const HAS_GAP: u8 = 1 << 6;
}

/// Outcome of one insert.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct InsertOutcome {
    /// Bytes stored (after clipping).
    pub stored: u32,
    /// The segment overlapped stored segments.
    pub overlap: bool,
    /// The overlapping bytes differed.
    pub diff: bool,
    /// Entirely before the base: dropped.
    pub before_base: bool,
    /// Depth was reached by this segment (first time).
    pub depth_reached: bool,
}

/// One direction's reassembly state.
#[derive(Debug, Default)]
pub(crate) struct StreamBuf {
    /// Sequence number at `base_off`.
    pub base_seq: u32,
    /// Everything below is released.
    pub base_off: u64,
    regions: Vec<Region>,
    segs: Vec<Seg>,
    /// Coverage: sorted, disjoint, non-adjacent `[start, end)`.
    blocks: Vec<(u64, u64)>,
    /// App-layer consumed up to here.
    pub app_progress: u64,
    /// Raw inspection consumed up to here.
    pub raw_progress: u64,
    /// Data up to here may be handed out (acked data, or everything at end of stream).
    pub limit: u64,
    /// Last app progress at which a gap was reported.
    pub gap_reported: u64,
    /// [`sf`] bits.
    pub flags: u8,
    /// Most regions Suricata's streaming buffer would have used (at least 1).
    pub max_regions: u16,
    /// The flow's app-layer protocol sets its own depth (Suricata's
    /// `app-layer.protocols.<proto>.stream-depth`; 0: unlimited).
    pub depth: Option<u64>,
    /// App-layer frames still need the data from here on (`None`: none does).
    pub frame_left: Option<u64>,
}

impl StreamBuf {
    /// A buffer whose offset 0 is `base_seq` (ISN + 1).
    pub fn new(base_seq: u32) -> Self {
        StreamBuf {
            base_seq,
            gap_reported: u64::MAX,
            max_regions: 1,
            ..StreamBuf::default()
        }
    }

    /// Bytes held (capacities), for memcap accounting.
    pub fn mem(&self) -> usize {
        self.regions
            .iter()
            .map(|r| r.data.capacity())
            .sum::<usize>()
            + self.regions.capacity() * std::mem::size_of::<Region>()
            + self.segs.capacity() * SEG_COST
            + self.blocks.capacity() * 16
    }

    /// Absolute offset of `seq`, or `None` when it lies before the base.
    #[inline]
    pub fn off_of(&self, seq: u32) -> Option<u64> {
        let d = seq.wrapping_sub(self.base_seq) as i32;
        (d >= 0).then(|| self.base_off + d as u64)
    }

    /// Highest offset with data (end of the last block), or the base.
    pub fn right_edge(&self) -> u64 {
        self.blocks.last().map_or(self.base_off, |b| b.1)
    }

    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// Upper bound of the memory an insert of `len` bytes at `seq` adds (capacity
    /// growth included), for the memcap check before inserting.
    pub fn growth(&self, seq: u32, len: usize) -> usize {
        let rel = seq.wrapping_sub(self.base_seq) as i32;
        let off = self.base_off + rel.max(0) as u64;
        let end = off + len as u64;
        let vec_growth = |cap: usize, len: usize, elem: usize| {
            if len < cap {
                0
            } else {
                cap.max(4) * elem
            }
        };
        let mut g = vec_growth(self.segs.capacity(), self.segs.len(), SEG_COST)
            + vec_growth(self.blocks.capacity(), self.blocks.len(), 16);
        if let Some(r) = self.regions.last() {
            if off >= r.off && off <= r.end() + MERGE_GAP {
                let need = (end - r.off) as usize;
                let cap = r.data.capacity();
                if need > cap {
                    g += need.max(cap * 2) - cap;
                }
                return g;
            }
        }
        let i = self.regions.partition_point(|r| r.end() + MERGE_GAP < off);
        let mut j = i;
        let (mut lo, mut hi, mut freed) = (off, end, 0usize);
        while let Some(r) = self.regions.get(j) {
            if r.off > end + MERGE_GAP {
                break;
            }
            lo = lo.min(r.off);
            hi = hi.max(r.end());
            freed += r.data.capacity();
            j += 1;
        }
        g += ((hi - lo) as usize).saturating_sub(freed)
            + vec_growth(
                self.regions.capacity(),
                self.regions.len(),
                std::mem::size_of::<Region>(),
            );
        g
    }

    /// Inserts `data` at sequence `seq` with overlap `policy`; `scratch` is reusable.
    pub fn insert(
        &mut self,
        seq: u32,
        data: &[u8],
        policy: OsPolicy,
        depth: u64,
        check_diff: bool,
        scratch: &mut Vec<u8>,
    ) -> InsertOutcome {
        let mut out = InsertOutcome::default();
        if data.is_empty() || self.has(sf::NOREASSEMBLY) {
            return out;
        }
        self.flags |= sf::HAS_DATA;
        // Position relative to the base.
        let rel = seq.wrapping_sub(self.base_seq) as i32;
        let (off, data) = if rel >= 0 {
            (self.base_off + rel as u64, data)
        } else {
            let skip = rel.unsigned_abs() as usize;
            if skip >= data.len() {
                out.before_base = true;
                return out;
            }
            (self.base_off, data.get(skip..).unwrap_or(&[]))
        };
        if depth != 0 {
            // Once reached, nothing more is accepted, even what would still fit (Suricata's
            // `StreamTcpReassembleCheckDepth`).
            if self.has(sf::DEPTH_REACHED) {
                return out;
            }
            if off >= depth {
                if !self.has(sf::DEPTH_REACHED) {
                    self.flags |= sf::DEPTH_REACHED;
                    out.depth_reached = true;
                }
                return out;
            }
            // A segment whose end is past the depth is not stored at all, as Suricata's
            // `StreamTcpReassembleCheckDepth` rejects it whole.
            if (data.len() as u64) > depth - off {
                if !self.has(sf::DEPTH_REACHED) {
                    self.flags |= sf::DEPTH_REACHED;
                    out.depth_reached = true;
                }
                return out;
            }
        }
        let len = data.len() as u32;
        if len == 0 {
            return out;
        }
        let seg = Seg { off, len };
        let end = seg.end();
        let overlaps_data = self.covers_any(off, end);
        if !overlaps_data {
            self.add_seg(seg);
            self.write(off, data);
            self.add_block(off, end);
            self.note_regions(off, end);
            out.stored = len;
            return out;
        }
        // Overlap: resolve per policy into the scratch copy, then write it.
        out.overlap = true;
        scratch.clear();
        scratch.extend_from_slice(data);
        let lo = self.segs.partition_point(|s| s.off + 65_536 <= off);
        for s in self.segs.get(lo..).unwrap_or(&[]) {
            if s.off >= end {
                break;
            }
            let (s_off, s_end) = (s.off.max(self.base_off), s.end());
            if s_end <= off || s_end <= s_off {
                continue;
            }
            let (a, b) = (off.max(s_off), end.min(s_end));
            if a >= b {
                continue;
            }
            let old = self.read(a, b);
            let range = (a - off) as usize..(b - off) as usize;
            let different = check_diff && scratch.get(range.clone()) != Some(old);
            out.diff |= different;
            if !policy.tcp_new_wins(off, end, s.off, s_end) {
                if let Some(dst) = scratch.get_mut(range) {
                    dst.copy_from_slice(old);
                }
            }
        }
        let exact_dup = self
            .segs
            .binary_search_by(|s| (s.off, s.len).cmp(&(off, len)));
        if exact_dup.is_err() {
            self.add_seg(seg);
        }
        let buf = std::mem::take(scratch);
        self.write(off, &buf);
        *scratch = buf;
        self.add_block(off, end);
        out.stored = len;
        out
    }

    fn add_seg(&mut self, seg: Seg) {
        match self.segs.last() {
            Some(l) if (l.off, l.len) <= (seg.off, seg.len) => self.segs.push(seg),
            None => self.segs.push(seg),
            _ => {
                let i = self
                    .segs
                    .partition_point(|s| (s.off, s.len) < (seg.off, seg.len));
                self.segs.insert(i, seg);
            }
        }
    }

    /// Whether any byte of `[a, b)` is covered.
    fn covers_any(&self, a: u64, b: u64) -> bool {
        let i = self.blocks.partition_point(|bl| bl.1 <= a);
        self.blocks.get(i).is_some_and(|bl| bl.0 < b)
    }

    fn add_block(&mut self, a: u64, b: u64) {
        if let Some(last) = self.blocks.last_mut() {
            if a >= last.0 && a <= last.1 {
                last.1 = last.1.max(b);
                return;
            }
        }
        // First block ending at or after a (adjacent counts).
        let i = self.blocks.partition_point(|bl| bl.1 < a);
        let mut j = i;
        let (mut na, mut nb) = (a, b);
        while let Some(bl) = self.blocks.get(j) {
            if bl.0 > nb {
                break;
            }
            na = na.min(bl.0);
            nb = nb.max(bl.1);
            j += 1;
        }
        self.blocks.splice(i..j, std::iter::once((na, nb)));
    }

    /// Updates `max_regions` after `[a, b)` was stored: only data far from both
    /// neighbours can add a region, so the full count runs only then.
    fn note_regions(&mut self, a: u64, b: u64) {
        let i = self.blocks.partition_point(|bl| bl.1 < a);
        let (a, b) = self.blocks.get(i).copied().unwrap_or((a, b));
        let far_before = i == 0
            || self
                .blocks
                .get(i - 1)
                .is_some_and(|p| a - p.1 > SURICATA_REGION_GAP);
        let far_after = self
            .blocks
            .get(i + 1)
            .is_none_or(|n| n.0 - b > SURICATA_REGION_GAP);
        if self.blocks.len() < 2 || !far_before || !far_after {
            return;
        }
        let n = 1 + self
            .blocks
            .windows(2)
            .filter(|w| w[1].0 - w[0].1 > SURICATA_REGION_GAP)
            .count();
        self.max_regions = self.max_regions.max(u16::try_from(n).unwrap_or(u16::MAX));
    }

    /// Bytes of `[a, b)` from the regions (caller ensures they are stored).
    fn read(&self, a: u64, b: u64) -> &[u8] {
        let i = self.regions.partition_point(|r| r.end() <= a);
        match self.regions.get(i) {
            Some(r) if r.off <= a && b <= r.end() => r
                .data
                .get((a - r.off) as usize..(b - r.off) as usize)
                .unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Writes `data` at `off`, growing or merging regions.
    fn write(&mut self, off: u64, data: &[u8]) {
        let end = off + data.len() as u64;
        // Fast path: append to / overwrite inside the last region.
        if let Some(r) = self.regions.last_mut() {
            if off >= r.off && off <= r.end() + MERGE_GAP {
                let start = (off - r.off) as usize;
                let need = (end - r.off) as usize;
                if start == r.data.len() {
                    // In-order data: append without zero-filling first.
                    r.data.extend_from_slice(data);
                    return;
                }
                if r.data.len() < need {
                    r.data.resize(need, 0);
                }
                if let Some(dst) = r.data.get_mut(start..need) {
                    dst.copy_from_slice(data);
                }
                return;
            }
        }
        // Regions touching [off - gap, end + gap].
        let i = self.regions.partition_point(|r| r.end() + MERGE_GAP < off);
        let mut j = i;
        while let Some(r) = self.regions.get(j) {
            if r.off > end + MERGE_GAP {
                break;
            }
            j += 1;
        }
        if i == j {
            self.regions.insert(
                i,
                Region {
                    off,
                    data: data.to_vec(),
                },
            );
            return;
        }
        let first_off = self.regions.get(i).map_or(off, |r| r.off).min(off);
        let last_end = self.regions.get(j - 1).map_or(end, |r| r.end()).max(end);
        let mut merged = vec![0u8; (last_end - first_off) as usize];
        for r in self.regions.drain(i..j) {
            let s = (r.off - first_off) as usize;
            if let Some(dst) = merged.get_mut(s..s + r.data.len()) {
                dst.copy_from_slice(&r.data);
            }
        }
        let s = (off - first_off) as usize;
        if let Some(dst) = merged.get_mut(s..s + data.len()) {
            dst.copy_from_slice(data);
        }
        self.regions.insert(
            i,
            Region {
                off: first_off,
                data: merged,
            },
        );
    }

    /// Contiguous stored data from `from` up to `limit` (empty if `from` is a hole).
    pub fn data_at(&self, from: u64, limit: u64) -> &[u8] {
        if from < self.base_off || from >= limit {
            return &[];
        }
        let i = self.blocks.partition_point(|bl| bl.1 <= from);
        match self.blocks.get(i) {
            Some(&(a, b)) if a <= from => self.read(from, b.min(limit)),
            _ => &[],
        }
    }

    /// Start of the first block beginning after `from`, if any.
    pub fn next_block_after(&self, from: u64) -> Option<u64> {
        let i = self.blocks.partition_point(|bl| bl.0 <= from);
        self.blocks.get(i).map(|bl| bl.0)
    }

    /// Whether `from` is covered by data.
    pub fn covered(&self, from: u64) -> bool {
        let i = self.blocks.partition_point(|bl| bl.1 <= from);
        self.blocks.get(i).is_some_and(|bl| bl.0 <= from)
    }

    /// Releases everything below `left` (min of the live consumers' progress).
    pub fn prune(&mut self, left: u64) {
        if left <= self.base_off {
            return;
        }
        let delta = left - self.base_off;
        self.base_seq = self.base_seq.wrapping_add(delta as u32);
        self.base_off = left;
        let n = self.segs.iter().take_while(|s| s.end() <= left).count();
        if n > 0 {
            self.segs.drain(..n);
        }
        let n = self.blocks.iter().take_while(|b| b.1 <= left).count();
        if n > 0 {
            self.blocks.drain(..n);
        }
        if let Some(b) = self.blocks.first_mut() {
            b.0 = b.0.max(left);
        }
        let n = self.regions.iter().take_while(|r| r.end() <= left).count();
        if n > 0 {
            self.regions.drain(..n);
        }
        if let Some(r) = self.regions.first_mut() {
            // Slide lazily: only when the released front is large.
            if left > r.off {
                let cut = (left - r.off) as usize;
                if cut >= 16_384 && cut * 2 >= r.data.len() {
                    r.data.drain(..cut);
                    r.off = left;
                    if r.data.capacity() > 4 * r.data.len().max(4096) {
                        r.data.shrink_to(r.data.len().max(4096));
                    }
                }
            }
        }
        if self.segs.is_empty() && self.segs.capacity() > 64 {
            self.segs.shrink_to(16);
        }
    }

    /// Suricata's alert log of this direction (`StreamReassembleLog` from the base offset
    /// with `AlertJsonStreamDataCallback`): the stored blocks from `base_off` on, cut at the
    /// right edge `re` the way Suricata cuts them (measured from its progress mark, which
    /// stays at the start of a block that followed a hole), each hole before a block written
    /// as `[N bytes missing]`. Stops once `max` bytes are written.
    pub fn log_into(&self, re: u64, max: usize, out: &mut Vec<u8>) {
        let mut progress = self.base_off;
        let mut last_re = self.base_off;
        let start = self.blocks.partition_point(|bl| bl.1 <= progress);
        for &(a, b) in self.blocks.get(start..).unwrap_or(&[]) {
            let off = a.max(progress);
            if re < progress || b <= off {
                break;
            }
            let len = (b - off).min(re - progress);
            if len == 0 {
                break;
            }
            if off > last_re {
                let mut m = format!("[{} bytes missing]", off - last_re).into_bytes();
                // Suricata's snprintf into the remaining space keeps one byte for the NUL.
                m.truncate(max.saturating_sub(out.len()).saturating_sub(1));
                out.extend_from_slice(&m);
            }
            let data = self.read(off, off + len);
            let room = max.saturating_sub(out.len());
            out.extend_from_slice(data.get(..room.min(data.len())).unwrap_or(&[]));
            if data.len() > room {
                return;
            }
            last_re = off + len;
            if off == progress {
                progress += len;
            } else if off > progress && off < re {
                progress = off;
            }
        }
    }

    /// Drops all data (no more reassembly in this direction).
    /// Whether any storage is allocated.
    pub fn holds_storage(&self) -> bool {
        self.regions.capacity() != 0 || self.segs.capacity() != 0 || self.blocks.capacity() != 0
    }

    /// Frees the storage of a fully consumed buffer (everything below `base_off` after
    /// [`Self::prune`] up to its right edge); unlike [`Self::clear`], later data is still
    /// reassembled.
    pub fn free_storage(&mut self) {
        if self.base_off >= self.right_edge() {
            self.regions = Vec::new();
            self.segs = Vec::new();
            self.blocks = Vec::new();
        }
    }

    pub fn clear(&mut self) {
        self.regions = Vec::new();
        self.segs = Vec::new();
        self.blocks = Vec::new();
        self.flags |= sf::NOREASSEMBLY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(b: &mut StreamBuf, seq: u32, d: &[u8], p: OsPolicy) -> InsertOutcome {
        let mut s = Vec::new();
        b.insert(seq, d, p, 0, true, &mut s)
    }

    #[test]
    fn in_order_and_holes() {
        let mut b = StreamBuf::new(1000);
        ins(&mut b, 1000, b"abc", OsPolicy::Bsd);
        ins(&mut b, 1003, b"def", OsPolicy::Bsd);
        assert_eq!(b.data_at(0, u64::MAX), b"abcdef");
        ins(&mut b, 1010, b"xyz", OsPolicy::Bsd);
        assert_eq!(b.data_at(0, u64::MAX), b"abcdef");
        assert_eq!(b.next_block_after(6), Some(10));
        assert!(!b.covered(7));
        ins(&mut b, 1006, b"1234", OsPolicy::Bsd);
        assert_eq!(b.data_at(0, u64::MAX), b"abcdef1234xyz");
        assert_eq!(b.data_at(2, 5), b"cde");
        b.prune(4);
        assert_eq!(b.data_at(4, u64::MAX), b"ef1234xyz");
        assert_eq!(b.off_of(1004), Some(4));
        assert_eq!(b.off_of(1003), None);
        let o = ins(&mut b, 1000, b"abc", OsPolicy::Bsd);
        assert!(o.before_base);
    }

    #[test]
    fn free_storage_only_when_fully_consumed() {
        let mut b = StreamBuf::new(1000);
        ins(&mut b, 1000, &[b'a'; 3000], OsPolicy::Bsd);
        b.prune(1000);
        b.free_storage();
        assert!(b.holds_storage(), "2,000 bytes are not consumed yet");
        assert_eq!(b.data_at(1000, u64::MAX).len(), 2000);
        b.prune(3000);
        assert!(b.mem() > 0);
        b.free_storage();
        assert!(!b.holds_storage());
        assert_eq!(b.mem(), 0);
        // Later data is still reassembled (unlike `clear`).
        ins(&mut b, 4000, b"late", OsPolicy::Bsd);
        assert_eq!(b.data_at(3000, u64::MAX), b"late");
    }

    #[test]
    fn log_marks_holes_and_stops_at_the_edge() {
        let mut b = StreamBuf::new(1000);
        ins(&mut b, 1004, b"GOOD", OsPolicy::Bsd);
        ins(&mut b, 1008, b"DATA", OsPolicy::Bsd);
        // (right edge, max bytes, expected log)
        let cases: &[(u64, usize, &[u8])] = &[
            (12, 4096, b"[4 bytes missing]GOODDATA"),
            // Cut at the edge counted from the progress mark (the base, before the hole).
            (6, 4096, b"[4 bytes missing]GOODDA"),
            (0, 4096, b""),
            (12, 20, b"[4 bytes missing]GOO"),
            // The marker keeps a byte for snprintf's NUL, which the data then fills.
            (12, 10, b"[4 bytes G"),
        ];
        for &(re, max, want) in cases {
            let mut out = Vec::new();
            b.log_into(re, max, &mut out);
            assert_eq!(out, want, "re {re} max {max}");
        }
        ins(&mut b, 1020, b"tail", OsPolicy::Bsd);
        let mut out = Vec::new();
        b.log_into(24, 4096, &mut out);
        assert_eq!(out, b"[4 bytes missing]GOODDATA[8 bytes missing]tail");
        // After a prune the log starts at the new base.
        b.prune(8);
        out.clear();
        b.log_into(24, 4096, &mut out);
        assert_eq!(out, b"DATA[8 bytes missing]tail");
    }

    #[test]
    fn far_segments_use_separate_regions() {
        let mut b = StreamBuf::new(0);
        ins(&mut b, 0, b"a", OsPolicy::Bsd);
        ins(&mut b, 10_000_000, b"z", OsPolicy::Bsd);
        assert!(b.mem() < 100_000, "{}", b.mem());
        ins(&mut b, 9_999_999, b"y", OsPolicy::Bsd);
        assert_eq!(b.data_at(9_999_999, u64::MAX), b"yz");
    }

    #[test]
    fn max_regions_counts_far_apart_data() {
        let mut b = StreamBuf::new(0);
        assert_eq!(b.max_regions, 1);
        // (offset of a 1-byte insert, max regions after it)
        let steps: &[(u32, u16)] = &[
            (0, 1),
            (100_000, 1),
            (500_000, 2),
            (2_000_000, 3),
            // Filling in near existing data adds none.
            (1_999_000, 3),
            (250_000, 3),
        ];
        for &(off, want) in steps {
            ins(&mut b, off, b"x", OsPolicy::Bsd);
            assert_eq!(b.max_regions, want, "after {off}");
        }
    }

    #[test]
    fn depth_rejects_the_segment_that_does_not_fit() {
        let mut b = StreamBuf::new(0);
        let mut s = Vec::new();
        let o = b.insert(0, b"0123", OsPolicy::Bsd, 6, true, &mut s);
        assert!(!o.depth_reached);
        assert_eq!(o.stored, 4);
        // Its end is past the depth: not stored at all, as Suricata.
        let o = b.insert(4, b"456789", OsPolicy::Bsd, 6, true, &mut s);
        assert!(o.depth_reached);
        assert_eq!(o.stored, 0);
        assert_eq!(b.data_at(0, u64::MAX), b"0123");
        // Nothing more once reached, even what would fit.
        let o = b.insert(4, b"45", OsPolicy::Bsd, 6, true, &mut s);
        assert_eq!(o.stored, 0);
        assert!(!o.depth_reached);
    }
}
