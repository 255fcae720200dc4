//! A hierarchical timing wheel (Varghese & Lauck; tokio's layout): 6 levels × 64 slots at
//! 1 ms resolution (range 2^36 ms ≈ 2.2 years; later deadlines wait in an overflow list
//! and are placed as time advances), a bitmap of occupied slots per level, and slab
//! storage with generation-tagged [`TimerId`]s. No intrusive lists and no `unsafe`.
//!
//! Time is whatever the caller says it is (packet time in file mode, a monotonic clock
//! live), in milliseconds. [`TimerWheel::advance`] fires every timer whose deadline is ≤
//! `now`, in deadline order; timers with equal deadlines fire in insertion order.
//! Cancelled timers leave a stale reference in their slot that is skipped (and dropped)
//! when the slot is processed; when stale references outnumber the live timers (a flow
//! table evicting a flood's flows cancels a timer per packet, all due far ahead) every slot
//! is compacted, so the references stay proportional to the live timers.

const LEVELS: usize = 6;
const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Largest distance between "now" and a slot the wheel can address.
const MAX_SPAN: u64 = 1 << (SLOT_BITS as usize * LEVELS);
/// Largest slot allocation (in references) kept for reuse once the slot is processed. A
/// larger one is freed: otherwise every slot a burst passed through would keep the burst's
/// capacity for good, and the wheel's memory would follow the largest burst each of its
/// 384 slots ever saw (up to `LEVELS * SLOTS * flows` references) instead of the live timers.
const SLOT_RETAIN: usize = 256;

/// Handle of a scheduled timer (slab index + generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerId {
    idx: u32,
    gen: u32,
}

#[derive(Clone, Copy, Debug)]
struct Ref {
    idx: u32,
    gen: u32,
}

#[derive(Debug)]
struct Entry<T> {
    deadline: u64,
    seq: u64,
    gen: u32,
    value: Option<T>,
}

/// Hierarchical timing wheel holding values of type `T`.
#[derive(Debug)]
pub struct TimerWheel<T> {
    elapsed: u64,
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
    len: usize,
    seq: u64,
    slots: Vec<Vec<Ref>>,
    occupied: [u64; LEVELS],
    /// Timers scheduled at or before `elapsed`: due at the next `advance`.
    pending: Vec<Ref>,
    /// Timers beyond the wheel's span.
    overflow: Vec<Ref>,
    batch: Vec<(u64, u64, u32)>,
    /// References held by the slots, `pending` and `overflow`, live or stale.
    refs: usize,
}

/// Stale references tolerated beyond the live timers before a compaction.
const STALE_SLACK: usize = 4096;

impl<T> Default for TimerWheel<T> {
    fn default() -> Self {
        Self::new(0)
    }
}

/// Level a deadline belongs to, relative to `elapsed` (tokio's `level_for`).
fn level_for(elapsed: u64, when: u64) -> usize {
    let mut masked = (elapsed ^ when) | SLOT_MASK;
    if masked >= MAX_SPAN {
        masked = MAX_SPAN - 1;
    }
    let significant = 63 - masked.leading_zeros() as usize;
    significant / SLOT_BITS as usize
}

impl<T> TimerWheel<T> {
    /// An empty wheel whose clock starts at `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        TimerWheel {
            elapsed: now_ms,
            entries: Vec::new(),
            free: Vec::new(),
            len: 0,
            seq: 0,
            slots: (0..LEVELS * SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; LEVELS],
            pending: Vec::new(),
            overflow: Vec::new(),
            batch: Vec::new(),
            refs: 0,
        }
    }

    /// Number of live timers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no timer is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// References the slots can hold without allocating (their total capacity): the wheel's
    /// memory beyond its live timers.
    pub fn slot_capacity(&self) -> usize {
        self.slots.iter().map(Vec::capacity).sum::<usize>()
            + self.pending.capacity()
            + self.overflow.capacity()
    }

    /// The wheel's current time (the last `advance`'s `now`, or the start).
    pub fn now(&self) -> u64 {
        self.elapsed
    }

    /// Schedules `value` to fire at `deadline_ms`. A deadline at or before the wheel's
    /// time fires at the next [`Self::advance`].
    pub fn schedule(&mut self, deadline_ms: u64, value: T) -> TimerId {
        self.seq += 1;
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    deadline: 0,
                    seq: 0,
                    gen: 0,
                    value: None,
                });
                (self.entries.len() - 1) as u32
            }
        };
        let gen = match self.entries.get_mut(idx as usize) {
            Some(e) => {
                e.deadline = deadline_ms;
                e.seq = self.seq;
                e.value = Some(value);
                e.gen
            }
            None => 0,
        };
        self.len += 1;
        self.place(Ref { idx, gen }, deadline_ms);
        TimerId { idx, gen }
    }

    /// Puts a live reference in its slot (or in `pending` when already due).
    fn place(&mut self, r: Ref, deadline: u64) {
        self.refs += 1;
        if deadline <= self.elapsed {
            self.pending.push(r);
            return;
        }
        // Beyond the current top-level slot plus one full rotation, a slot index would
        // alias the current one: keep those aside.
        let top_slot = 1u64 << (SLOT_BITS * (LEVELS as u32 - 1));
        if deadline - (self.elapsed & !(top_slot - 1)) >= MAX_SPAN {
            self.overflow.push(r);
            return;
        }
        let level = level_for(self.elapsed, deadline);
        let slot = ((deadline >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize;
        if let Some(s) = self.slots.get_mut(level * SLOTS + slot) {
            s.push(r);
            self.occupied[level] |= 1 << slot;
        }
    }

    fn live(&self, r: Ref) -> Option<&Entry<T>> {
        self.entries
            .get(r.idx as usize)
            .filter(|e| e.gen == r.gen && e.value.is_some())
    }

    /// Cancels a timer, returning its value if it had not fired or been cancelled.
    pub fn cancel(&mut self, id: TimerId) -> Option<T> {
        let e = self.entries.get_mut(id.idx as usize)?;
        if e.gen != id.gen {
            return None;
        }
        let v = e.value.take()?;
        e.gen = e.gen.wrapping_add(1);
        self.free.push(id.idx);
        self.len -= 1;
        if self.refs > 2 * self.len + STALE_SLACK {
            self.compact();
        }
        Some(v)
    }

    /// Drops every stale reference (O(references); amortised over the cancels that made
    /// them stale).
    fn compact(&mut self) {
        let entries = &self.entries;
        let live = |r: &Ref| {
            entries
                .get(r.idx as usize)
                .is_some_and(|e| e.gen == r.gen && e.value.is_some())
        };
        let mut refs = 0;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if slot.is_empty() {
                continue;
            }
            slot.retain(live);
            if slot.is_empty() {
                if let Some(o) = self.occupied.get_mut(i / SLOTS) {
                    *o &= !(1u64 << (i % SLOTS));
                }
                if slot.capacity() > SLOT_RETAIN {
                    *slot = Vec::new();
                }
            }
            refs += slot.len();
        }
        self.pending.retain(live);
        self.overflow.retain(live);
        self.refs = refs + self.pending.len() + self.overflow.len();
    }

    /// Deadline of a live timer.
    pub fn deadline(&self, id: TimerId) -> Option<u64> {
        self.live(Ref {
            idx: id.idx,
            gen: id.gen,
        })
        .map(|e| e.deadline)
    }

    /// The next occupied slot of `level` at or after the current time: (slot, start).
    fn next_slot(&self, level: usize) -> Option<(usize, u64)> {
        let occ = self.occupied[level];
        if occ == 0 {
            return None;
        }
        let shift = level as u32 * SLOT_BITS;
        let now_slot = (self.elapsed >> shift) & SLOT_MASK;
        let zeros = u64::from(occ.rotate_right(now_slot as u32).trailing_zeros());
        let slot = (zeros + now_slot) & SLOT_MASK;
        let slot_range = 1u64 << shift;
        let level_range = slot_range << SLOT_BITS;
        let level_start = self.elapsed & !(level_range - 1);
        let mut start = level_start + slot * slot_range;
        if slot < now_slot {
            start += level_range;
        }
        Some((slot as usize, start))
    }

    /// Fires every timer with deadline ≤ `now_ms`, in deadline order (ties: insertion
    /// order), calling `fire(id, value)`. The wheel's time becomes `now_ms` (time never
    /// goes backwards: an earlier `now_ms` only fires already-due timers).
    pub fn advance(&mut self, now_ms: u64, fire: &mut impl FnMut(TimerId, T)) {
        let mut batch = std::mem::take(&mut self.batch);
        loop {
            // Due timers first (scheduled in the past, or cascaded to "now").
            if !self.pending.is_empty() {
                self.refs -= self.pending.len();
                for r in std::mem::take(&mut self.pending) {
                    if let Some(e) = self.live(r) {
                        batch.push((e.deadline, e.seq, r.idx));
                    }
                }
                self.fire_batch(&mut batch, fire);
                continue;
            }
            let next = (0..LEVELS).find_map(|l| self.next_slot(l).map(|(s, st)| (l, s, st)));
            if let Some(ov) = self.overflow_min() {
                if ov <= now_ms && next.is_none_or(|(_, _, start)| ov < start) {
                    self.elapsed = self.elapsed.max(ov);
                    let elapsed = self.elapsed;
                    self.refs -= self.overflow.len();
                    let (due, rest): (Vec<Ref>, Vec<Ref>) = std::mem::take(&mut self.overflow)
                        .into_iter()
                        .filter(|r| self.live(*r).is_some())
                        .partition(|r| self.live(*r).is_some_and(|e| e.deadline <= elapsed));
                    self.refs += due.len() + rest.len();
                    self.pending = due;
                    self.overflow = rest;
                    continue;
                }
            }
            let Some((level, slot, start)) = next else {
                break;
            };
            if start > now_ms {
                break;
            }
            self.elapsed = self.elapsed.max(start);
            self.occupied[level] &= !(1u64 << slot);
            let refs = std::mem::take(&mut self.slots[level * SLOTS + slot]);
            self.refs -= refs.len();
            for r in &refs {
                let Some(e) = self.live(*r) else { continue };
                let d = e.deadline;
                if d <= self.elapsed {
                    batch.push((d, e.seq, r.idx));
                } else {
                    self.place(*r, d);
                }
            }
            // Give the (emptied) allocation back to the slot, unless a burst made it large.
            let mut refs = refs;
            refs.clear();
            if refs.capacity() <= SLOT_RETAIN && self.slots[level * SLOTS + slot].is_empty() {
                self.slots[level * SLOTS + slot] = refs;
            }
            self.fire_batch(&mut batch, fire);
        }
        self.elapsed = self.elapsed.max(now_ms);
        self.batch = batch;
        if !self.overflow.is_empty() {
            self.refs -= self.overflow.len();
            for r in std::mem::take(&mut self.overflow) {
                if let Some(d) = self.live(r).map(|e| e.deadline) {
                    self.place(r, d);
                }
            }
        }
    }

    fn overflow_min(&self) -> Option<u64> {
        self.overflow
            .iter()
            .filter_map(|r| self.live(*r).map(|e| e.deadline))
            .min()
    }

    fn fire_batch(&mut self, batch: &mut Vec<(u64, u64, u32)>, fire: &mut impl FnMut(TimerId, T)) {
        batch.sort_unstable();
        for (_, _, idx) in batch.drain(..) {
            let Some(e) = self.entries.get_mut(idx as usize) else {
                continue;
            };
            let Some(v) = e.value.take() else { continue };
            let id = TimerId { idx, gen: e.gen };
            e.gen = e.gen.wrapping_add(1);
            self.free.push(idx);
            self.len -= 1;
            fire(id, v);
        }
    }

    /// The earliest live timer: its id and deadline.
    pub fn peek_earliest(&self) -> Option<(TimerId, u64)> {
        let best = |refs: &mut dyn Iterator<Item = &Ref>| {
            refs.filter_map(|r| self.live(*r).map(|e| (e.deadline, e.seq, *r)))
                .min_by_key(|(d, s, _)| (*d, *s))
        };
        let mut found = best(&mut self.pending.iter());
        let over = best(&mut self.overflow.iter());
        if found.is_none() {
            'levels: for level in 0..LEVELS {
                let occ = self.occupied[level];
                if occ == 0 {
                    continue;
                }
                let shift = level as u32 * SLOT_BITS;
                let now_slot = ((self.elapsed >> shift) & SLOT_MASK) as u32;
                // Visit this level's occupied slots in time order.
                let mut rot = occ.rotate_right(now_slot);
                while rot != 0 {
                    let z = rot.trailing_zeros();
                    rot &= rot - 1;
                    let slot = ((z + now_slot) & SLOT_MASK as u32) as usize;
                    if let Some(s) = self.slots.get(level * SLOTS + slot) {
                        if let Some(b) = best(&mut s.iter()) {
                            found = Some(b);
                            break 'levels;
                        }
                    }
                }
            }
        }
        let found = match (found, over) {
            (Some(a), Some(b)) => Some(if (b.0, b.1) < (a.0, a.1) { b } else { a }),
            (a, b) => a.or(b),
        };
        found.map(|(d, _, r)| {
            (
                TimerId {
                    idx: r.idx,
                    gen: r.gen,
                },
                d,
            )
        })
    }

    /// Deadline of the earliest live timer (exact), so a caller knows how long it may
    /// sleep.
    pub fn next_deadline(&self) -> Option<u64> {
        self.peek_earliest().map(|(_, d)| d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_for_table() {
        for (elapsed, when, level) in [
            (0, 1, 0),
            (0, 63, 0),
            (0, 64, 1),
            (63, 64, 1),
            (0, 4095, 1),
            (0, 4096, 2),
            (0, 1 << 30, 5),
            (0, u64::MAX, 5),
        ] {
            assert_eq!(level_for(elapsed, when), level, "{elapsed} {when}");
        }
    }

    #[test]
    fn fires_in_order_and_cancels() {
        let mut w = TimerWheel::new(1000);
        let a = w.schedule(1500, "a");
        let _b = w.schedule(1200, "b");
        let c = w.schedule(90_000, "c");
        let _d = w.schedule(1200, "d");
        let _e = w.schedule(500, "e"); // already due
        assert_eq!(w.len(), 5);
        assert_eq!(w.next_deadline(), Some(500));
        assert_eq!(w.cancel(a), Some("a"));
        assert_eq!(w.cancel(a), None);
        let mut got = vec![];
        w.advance(2000, &mut |_, v| got.push(v));
        assert_eq!(got, vec!["e", "b", "d"]);
        assert_eq!((w.len(), w.next_deadline()), (1, Some(90_000)));
        w.advance(89_999, &mut |_, v| got.push(v));
        assert_eq!(got.len(), 3);
        w.advance(90_000, &mut |_, v| got.push(v));
        assert_eq!(got.last(), Some(&"c"));
        assert_eq!(w.cancel(c), None);
        assert!(w.is_empty() && w.next_deadline().is_none());
    }

    #[test]
    fn far_deadlines_are_parked_and_fire() {
        let mut w = TimerWheel::new(0);
        w.schedule(MAX_SPAN * 3 + 17, 1u8);
        let mut n = 0;
        w.advance(MAX_SPAN * 3 + 16, &mut |_, _| n += 1);
        assert_eq!(n, 0);
        assert_eq!(w.next_deadline(), Some(MAX_SPAN * 3 + 17));
        w.advance(MAX_SPAN * 3 + 17, &mut |_, _| n += 1);
        assert_eq!(n, 1);
    }

    #[test]
    fn cancelled_references_are_compacted() {
        // A flood: each new timer cancels an older one, all due far ahead of `now`.
        let mut w = TimerWheel::new(0);
        let mut live = std::collections::VecDeque::new();
        for i in 0..200_000u64 {
            live.push_back(w.schedule(60_000 + i / 100, i));
            if live.len() > 1000 {
                let old = live.pop_front().unwrap();
                assert!(w.cancel(old).is_some());
            }
        }
        assert_eq!(w.len(), 1000);
        assert!(w.refs <= 2 * w.len() + STALE_SLACK + 1, "refs {}", w.refs);
        // The survivors still fire, in order, and nothing else does.
        let mut fired = vec![];
        w.advance(1_000_000, &mut |_, v| fired.push(v));
        assert_eq!(fired, (199_000..200_000).collect::<Vec<_>>());
        assert_eq!(w.refs, 0);
    }
}
