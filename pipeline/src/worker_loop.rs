//! The one worker loop. Every runmode (single, dispatch, workers; files and live capture)
//! runs a [`Worker`] through [`run`]; they differ only in what feeds it ([`PacketFeed`]):
//!
//! * [`QueueFeed`]: batches from the reader over an SPSC queue (dispatch runmodes, files and
//!   live; with a timeout in live mode so the timers run on an idle link);
//! * the ring feed of the live `workers` runmode (`live.rs`): the worker polls its own
//!   capture ring and decodes inline;
//! * the file reader of the `single` runmode (`run.rs`): decodes inline, a round at a time.

use std::time::Duration;

use shrike_capture::Timestamp;
use shrike_packet::decode::PacketMeta;

use std::sync::Arc;

use crate::dispatch::WorkerQueue;
use crate::host_order::HostOrder;
use crate::worker::Worker;

/// What one round of a feed produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// Packets were handed to the worker (possibly none, e.g. a read error was handled).
    Packets,
    /// Nothing arrived within the feed's timeout (live): the timers run on the wall clock
    /// `now`.
    Idle(Timestamp),
    /// Nothing arrived within the feed's timeout (files: a slow reader, e.g. a pipe): the
    /// packet clock stays, output is still flushed on wall time.
    WallTick,
    /// The input is over (the packets of this round, if any, were handed over).
    Done,
}

/// What feeds a worker.
pub trait PacketFeed {
    /// Hand the next packets to `worker` (through [`Worker::process`]).
    fn next_round(&mut self, worker: &mut Worker) -> Round;
    /// After each round, once the worker finished its batch work (e.g. publish capture
    /// counters).
    fn after_round(&mut self) {}
    /// The input is over; the worker is about to end its flows.
    fn finish(&mut self) {}
}

/// Run `worker` until `feed` is done, then end every flow and close the output.
pub fn run(mut worker: Worker, feed: &mut dyn PacketFeed) {
    loop {
        let r = feed.next_round(&mut worker);
        match r {
            Round::Packets | Round::Done => {}
            Round::Idle(now) => worker.idle(now),
            Round::WallTick => worker.wall_tick(),
        }
        worker.batch_done();
        feed.after_round();
        if r == Round::Done {
            break;
        }
    }
    feed.finish();
    worker.finish();
}

/// How long a queue-fed worker waits for a batch before its timers run on the wall clock.
const QUEUE_IDLE: Duration = Duration::from_millis(100);

/// Batches from the reader over the worker's SPSC queue.
pub struct QueueFeed {
    q: WorkerQueue<PacketMeta>,
    /// Files: time follows the packets (the reader sends ticks); a wait only flushes output.
    file_mode: bool,
    /// Files with several workers and detection: after each batch this worker publishes the
    /// input position it reached, so host-scoped state is decided in input order.
    order: Option<(Arc<HostOrder>, usize)>,
}

impl QueueFeed {
    /// A worker of a file run.
    pub fn file(q: WorkerQueue<PacketMeta>) -> Self {
        QueueFeed {
            q,
            file_mode: true,
            order: None,
        }
    }

    /// Publish this worker's (`worker`) input position to `order` after each batch.
    pub fn with_order(mut self, order: Option<Arc<HostOrder>>, worker: usize) -> Self {
        self.order = order.map(|o| (o, worker));
        self
    }

    /// A worker of a live dispatch runmode.
    pub fn live(q: WorkerQueue<PacketMeta>) -> Self {
        QueueFeed {
            q,
            file_mode: false,
            order: None,
        }
    }
}

impl PacketFeed for QueueFeed {
    fn next_round(&mut self, worker: &mut Worker) -> Round {
        match self.q.next_batch(Some(QUEUE_IDLE)) {
            Some(batch) => {
                let mut last = 0;
                for (e, data) in batch.iter() {
                    worker.process(e, data);
                    last = e.order;
                }
                if let Some((o, i)) = &self.order {
                    o.publish(*i, last);
                }
                self.q.recycle(batch);
                Round::Packets
            }
            None if self.q.is_done() => Round::Done,
            None if self.file_mode && self.q.stopped() => Round::Done,
            None if self.file_mode => Round::WallTick,
            None => Round::Idle(wall_now()),
        }
    }
}

/// The wall clock as a packet timestamp.
pub fn wall_now() -> Timestamp {
    Timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    )
}
