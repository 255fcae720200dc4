//! Reader → worker hand-off: fixed-capacity packet batches travel over one lock-free SPSC queue
//! per reader→worker pair and come back over a return queue, so steady state allocates nothing.
//!
//! With capture files nothing may be lost: when a worker's queue is full the reader waits, and
//! the waits are counted.

use rtrb::{Consumer, Producer, RingBuffer};
use shrike_capture::{LinkType, Timestamp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One packet inside a batch: where its bytes are, and what the reader learnt decoding it.
/// (`orig_len`, `link` and `seq` are read by the detection engine's alert output.)
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub struct Entry<M> {
    pub off: u32,
    pub len: u32,
    pub orig_len: u32,
    pub ts: Timestamp,
    pub link: LinkType,
    pub hash: u64,
    /// Packet number in the input (Suricata's `pcap_cnt`), 1-based.
    pub seq: u64,
    /// Not a packet: the reader's clock moved on (file mode, see [`Dispatcher::push_tick`]).
    pub tick: bool,
    /// Position in the input (file mode with several workers, see [`crate::host_order`]):
    /// packet `n` is `2n + 1`, the clock tick just before it `2n`; 0 when not numbered.
    pub order: u64,
    pub meta: M,
}

/// A recycled arena of packets for one worker.
pub struct Batch<M> {
    data: Vec<u8>,
    entries: Vec<Entry<M>>,
}

impl<M: Copy> Batch<M> {
    fn new(max_packets: usize, max_bytes: usize) -> Self {
        Batch {
            data: Vec::with_capacity(max_bytes),
            entries: Vec::with_capacity(max_packets),
        }
    }

    fn clear(&mut self) {
        self.data.clear();
        self.entries.clear();
    }

    /// Would this packet fit without growing either buffer?
    fn fits(&self, len: usize) -> bool {
        self.entries.len() < self.entries.capacity()
            && self.data.len() + len <= self.data.capacity()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn push(&mut self, e: Entry<M>, bytes: &[u8]) {
        let off = self.data.len() as u32;
        self.data.extend_from_slice(bytes);
        self.entries.push(Entry { off, ..e });
    }

    /// Iterate over the packets with their bytes.
    pub fn iter(&self) -> impl Iterator<Item = (&Entry<M>, &[u8])> {
        self.entries.iter().map(move |e| {
            let start = e.off as usize;
            let end = start + e.len as usize;
            (e, self.data.get(start..end).unwrap_or(&[]))
        })
    }
}

/// Reader-side counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct DispatchStats {
    /// Times the reader found a worker's queue full and had to wait.
    pub queue_full_waits: u64,
    /// Total time spent waiting on full queues.
    pub wait_ns: u64,
    /// Batches handed to workers.
    pub batches: u64,
}

/// Backoff used by both ends when the other side is behind.
struct Backoff {
    step: u32,
}

impl Backoff {
    fn new() -> Self {
        Backoff { step: 0 }
    }
    fn snooze(&mut self) {
        if self.step < 6 {
            for _ in 0..(1 << self.step) {
                std::hint::spin_loop();
            }
        } else if self.step < 12 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
        self.step = self.step.saturating_add(1);
    }
}

struct Lane<M> {
    to_worker: Producer<Box<Batch<M>>>,
    from_worker: Consumer<Box<Batch<M>>>,
    current: Option<Box<Batch<M>>>,
    allocated: usize,
}

/// The reader's end: one lane per worker.
pub struct Dispatcher<M> {
    lanes: Vec<Lane<M>>,
    max_packets: usize,
    max_bytes: usize,
    pool_per_lane: usize,
    pub stats: DispatchStats,
    /// File mode with a host-state gate: set by a waiting worker (see [`crate::host_order`]).
    want_marks: Option<Arc<AtomicBool>>,
    /// Highest `order` queued so far, and an entry to copy markers from.
    last_order: u64,
    template: Option<Entry<M>>,
    /// Per lane: the highest `order` a marker for it was queued with.
    marked: Vec<u64>,
}

/// A worker's end of its lane.
pub struct WorkerQueue<M> {
    from_reader: Consumer<Box<Batch<M>>>,
    to_reader: Producer<Box<Batch<M>>>,
    stop: Arc<AtomicBool>,
    /// Times the worker found its queue empty and had to wait.
    pub idle_waits: u64,
}

/// Build a dispatcher and its N worker queues.
pub fn channel<M: Copy>(
    workers: usize,
    queue_depth: usize,
    max_packets: usize,
    stop: Arc<AtomicBool>,
) -> (Dispatcher<M>, Vec<WorkerQueue<M>>) {
    let depth = queue_depth.max(2);
    let mut lanes = Vec::with_capacity(workers);
    let mut queues = Vec::with_capacity(workers);
    for _ in 0..workers {
        let (to_worker, from_reader) = RingBuffer::new(depth);
        // The return queue holds every batch of the lane, so returning never blocks.
        let (to_reader, from_worker) = RingBuffer::new(depth + 2);
        lanes.push(Lane {
            to_worker,
            from_worker,
            current: None,
            allocated: 0,
        });
        queues.push(WorkerQueue {
            from_reader,
            to_reader,
            stop: stop.clone(),
            idle_waits: 0,
        });
    }
    let max_packets = max_packets.max(1);
    (
        Dispatcher {
            lanes,
            max_packets,
            // Room for max_packets full-size frames is wasteful; 2 KiB average suffices and
            // a batch is sent early when its bytes run out.
            max_bytes: (max_packets * 2048).max(256 * 1024),
            pool_per_lane: depth + 2,
            stats: DispatchStats::default(),
            want_marks: None,
            last_order: 0,
            template: None,
            marked: vec![0; workers],
        },
        queues,
    )
}

impl<M: Copy> Dispatcher<M> {
    /// Number of workers fed by this dispatcher.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// Serve markers whenever `want` is raised (see [`crate::host_order`]).
    pub fn serve_markers(&mut self, want: Arc<AtomicBool>) {
        self.want_marks = Some(want);
    }

    /// A waiting worker asked for markers: give every lane but `busy` a marker entry at the
    /// highest position queued so far, and send their batches without waiting. Whatever could
    /// not be done now raises the request again for the next call.
    fn marks(&mut self, busy: usize) {
        let Some(want) = self.want_marks.as_ref() else {
            return;
        };
        if !want.swap(false, Ordering::AcqRel) {
            return;
        }
        let (Some(t), order) = (self.template, self.last_order) else {
            return;
        };
        let mut again = false;
        for w in (0..self.lanes.len()).filter(|&w| w != busy) {
            if self.marked[w] < order {
                let lane = &mut self.lanes[w];
                if lane.current.is_none() {
                    if let Ok(mut b) = lane.from_worker.pop() {
                        b.clear();
                        lane.current = Some(b);
                    } else if lane.allocated < self.pool_per_lane {
                        lane.allocated += 1;
                        lane.current = Some(Box::new(Batch::new(self.max_packets, self.max_bytes)));
                    }
                }
                match lane.current.as_mut() {
                    Some(b) if b.fits(0) => {
                        b.push(
                            Entry {
                                len: 0,
                                tick: true,
                                // No clock change: a marker only tells the position.
                                ts: Timestamp(0),
                                order,
                                ..t
                            },
                            &[],
                        );
                        self.marked[w] = order;
                    }
                    _ => again = true,
                }
            }
            let lane = &mut self.lanes[w];
            if let Some(b) = lane.current.take() {
                if b.is_empty() {
                    lane.current = Some(b);
                } else if let Err(rtrb::PushError::Full(b)) = lane.to_worker.push(b) {
                    lane.current = Some(b);
                    again = true;
                } else {
                    self.stats.batches += 1;
                }
            }
        }
        if again {
            want.store(true, Ordering::Release);
        }
    }

    /// Queue one packet for `worker`, sending the worker's batch when it is full.
    pub fn push(&mut self, worker: usize, e: Entry<M>, bytes: &[u8]) {
        if self.want_marks.is_some() {
            self.marks(usize::MAX);
            self.last_order = self.last_order.max(e.order);
            if self.template.is_none() {
                self.template = Some(e);
            }
        }
        let len = bytes.len().min(self.max_bytes);
        let bytes = &bytes[..len];
        let e = Entry {
            len: len as u32,
            ..e
        };
        let fits = self.lanes[worker]
            .current
            .as_ref()
            .is_some_and(|b| b.fits(len));
        if !fits {
            if self.lanes[worker].current.is_some() {
                self.send(worker);
            }
            let batch = self.take_empty(worker);
            self.lanes[worker].current = Some(batch);
        }
        if let Some(b) = self.lanes[worker].current.as_mut() {
            b.push(e, bytes);
        }
    }

    /// Queue a clock tick for `worker`: no packet, only the time `at.ts` of packet `at.seq`.
    ///
    /// File mode keeps one clock for all workers: flow timeouts (and everything else on the
    /// workers' timer wheels) fire at the same packet whatever the worker count, because each
    /// worker sees, in order among its own packets, every moment the reader's clock entered a
    /// new millisecond.
    pub fn push_tick(&mut self, worker: usize, at: &Entry<M>, order: u64) {
        self.push(
            worker,
            Entry {
                len: 0,
                tick: true,
                order,
                ..*at
            },
            &[],
        );
    }

    /// Send every partially filled batch (end of input, or a live idle timeout).
    pub fn flush_all(&mut self) {
        for w in 0..self.lanes.len() {
            if self.lanes[w]
                .current
                .as_ref()
                .is_some_and(|b| !b.is_empty())
            {
                self.send(w);
            }
        }
    }

    fn take_empty(&mut self, worker: usize) -> Box<Batch<M>> {
        let (max_packets, max_bytes, pool) = (self.max_packets, self.max_bytes, self.pool_per_lane);
        let lane = &mut self.lanes[worker];
        if let Ok(mut b) = lane.from_worker.pop() {
            b.clear();
            return b;
        }
        if lane.allocated < pool {
            lane.allocated += 1;
            return Box::new(Batch::new(max_packets, max_bytes));
        }
        // Every batch of this lane is in flight: wait for the worker to return one.
        let start = Instant::now();
        self.stats.queue_full_waits += 1;
        let mut backoff = Backoff::new();
        loop {
            let lane = &mut self.lanes[worker];
            if let Ok(mut b) = lane.from_worker.pop() {
                b.clear();
                self.stats.wait_ns += start.elapsed().as_nanos() as u64;
                return b;
            }
            if lane.to_worker.is_abandoned() {
                // The worker died; keep going with a fresh batch rather than hang.
                return Box::new(Batch::new(max_packets, max_bytes));
            }
            // The worker may be waiting for another one that needs a marker.
            self.marks(worker);
            backoff.snooze();
        }
    }

    fn send(&mut self, worker: usize) {
        let Some(mut batch) = self.lanes[worker].current.take() else {
            return;
        };
        self.stats.batches += 1;
        let mut waited: Option<Instant> = None;
        let mut backoff = Backoff::new();
        loop {
            match self.lanes[worker].to_worker.push(batch) {
                Ok(()) => break,
                Err(rtrb::PushError::Full(b)) => {
                    if self.lanes[worker].to_worker.is_abandoned() {
                        return;
                    }
                    batch = b;
                    if waited.is_none() {
                        waited = Some(Instant::now());
                        self.stats.queue_full_waits += 1;
                    }
                    self.marks(worker);
                    backoff.snooze();
                }
            }
        }
        if let Some(t) = waited {
            self.stats.wait_ns += t.elapsed().as_nanos() as u64;
        }
    }
}

impl<M> WorkerQueue<M> {
    /// The next batch, waiting for one; `None` once the reader is gone and the queue is empty,
    /// or when a stop was requested and `timeout` elapsed.
    pub fn next_batch(&mut self, timeout: Option<Duration>) -> Option<Box<Batch<M>>> {
        let mut backoff = Backoff::new();
        let start = Instant::now();
        let mut counted = false;
        loop {
            if let Ok(b) = self.from_reader.pop() {
                return Some(b);
            }
            if self.from_reader.is_abandoned() {
                return self.from_reader.pop().ok();
            }
            if let Some(t) = timeout {
                if start.elapsed() >= t {
                    return None;
                }
            }
            if self.stop.load(Ordering::Relaxed) && self.from_reader.is_empty() {
                return None;
            }
            if !counted {
                self.idle_waits += 1;
                counted = true;
            }
            backoff.snooze();
        }
    }

    /// A stop was requested (the run is ending).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// True once the reader has gone away and every batch was taken.
    pub fn is_done(&self) -> bool {
        self.from_reader.is_abandoned() && self.from_reader.is_empty()
    }

    /// Give a processed batch back to the reader.
    pub fn recycle(&mut self, batch: Box<Batch<M>>) {
        // The return queue is sized for every batch of the lane; if the reader is gone, drop it.
        let _ = self.to_reader.push(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(hash: u64) -> Entry<u32> {
        Entry {
            off: 0,
            len: 0,
            orig_len: 0,
            ts: Timestamp(hash),
            link: LinkType::Ethernet,
            hash,
            seq: hash,
            tick: false,
            order: 0,
            meta: hash as u32,
        }
    }

    #[test]
    fn every_packet_arrives_in_order_on_its_worker() {
        let stop = Arc::new(AtomicBool::new(false));
        let workers = 3;
        let (mut d, queues) = channel::<u32>(workers, 2, 16, stop);
        let total = 20_000u64;
        let handles: Vec<_> = queues
            .into_iter()
            .enumerate()
            .map(|(w, mut q)| {
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    while let Some(b) = q.next_batch(None) {
                        for (e, bytes) in b.iter() {
                            assert_eq!(e.hash as usize % workers, w);
                            assert_eq!(bytes, &e.hash.to_le_bytes()[..]);
                            seen.push(e.hash);
                        }
                        q.recycle(b);
                        // A slow worker forces the reader to wait.
                        if w == 0 {
                            std::thread::sleep(Duration::from_micros(20));
                        }
                    }
                    seen
                })
            })
            .collect();
        for h in 0..total {
            d.push(h as usize % workers, entry(h), &h.to_le_bytes());
        }
        d.flush_all();
        let waits = d.stats.queue_full_waits;
        drop(d);
        let mut all = Vec::new();
        for h in handles {
            let seen = h.join().unwrap();
            assert!(
                seen.windows(2).all(|w| w[0] < w[1]),
                "order kept per worker"
            );
            all.extend(seen);
        }
        all.sort_unstable();
        assert_eq!(all.len() as u64, total, "nothing lost");
        assert!(all.iter().copied().eq(0..total));
        assert!(waits > 0, "the slow worker made the reader wait");
    }

    #[test]
    fn batches_are_recycled_not_reallocated() {
        let stop = Arc::new(AtomicBool::new(false));
        let (mut d, mut queues) = channel::<u32>(1, 2, 4, stop);
        let mut q = queues.pop().unwrap();
        for round in 0..100u64 {
            for i in 0..4 {
                d.push(0, entry(round * 4 + i), b"x");
            }
            d.flush_all();
            let b = q.next_batch(Some(Duration::from_secs(1))).unwrap();
            assert_eq!(b.len(), 4);
            q.recycle(b);
        }
        assert!(d.lanes[0].allocated <= d.pool_per_lane);
    }
}
