//! Transactions of message-per-transaction protocols (SNMP, DHCP, IKE, Kerberos 5): each
//! parsed message becomes one transaction that belongs to the direction it was seen in, with
//! its app-layer events as a bit set (index into the protocol's `events`).

use std::collections::VecDeque;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::LogCtx;
use crate::Dir;

/// One transaction.
#[derive(Debug)]
pub struct Tx<T> {
    /// Id, from 0 per flow.
    pub id: u64,
    /// The direction of the message.
    pub dir: Dir,
    /// Events raised (bit per event id).
    pub events: u32,
    /// Events in the order raised, repeats included (Suricata logs each occurrence; at most
    /// 255, as its per-transaction event list).
    pub raised: Vec<u8>,
    /// The protocol's data.
    pub data: T,
}

impl<T> Tx<T> {
    /// Raise event `ev` (once more).
    pub fn raise(&mut self, ev: u8) {
        if ev < 32 {
            self.events |= 1 << ev;
        }
        if self.raised.len() < usize::from(u8::MAX) {
            self.raised.push(ev);
        }
    }

    /// Whether event `ev` was raised.
    pub fn has(&self, ev: u16) -> bool {
        ev < 32 && self.events & (1 << ev) != 0
    }
}

/// The live transactions of one flow (bounded: the oldest is dropped past `max`).
#[derive(Debug)]
pub struct TxList<T> {
    txs: VecDeque<Tx<T>>,
    next_id: u64,
    anomaly_next: u64,
    max: usize,
    /// Transactions dropped because `max` were live.
    pub dropped: u64,
}

impl<T> TxList<T> {
    /// An empty list holding at most `max` transactions.
    pub fn new(max: usize) -> Self {
        TxList {
            txs: VecDeque::new(),
            next_id: 0,
            anomaly_next: 0,
            max: max.max(1),
            dropped: 0,
        }
    }

    /// Add a transaction with the events of bit set `events` (each once); returns its id.
    pub fn push(&mut self, dir: Dir, events: u32, data: T) -> u64 {
        let list: Vec<u8> = (0..32u8).filter(|i| events & (1 << i) != 0).collect();
        self.push_raised(dir, &list, data)
    }

    /// Add a transaction with events `raised` (ids, in order, repeats kept); returns its id.
    pub fn push_raised(&mut self, dir: Dir, raised: &[u8], data: T) -> u64 {
        if self.txs.len() >= self.max {
            self.txs.pop_front();
            self.dropped += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut t = Tx {
            id,
            dir,
            events: 0,
            raised: Vec::new(),
            data,
        };
        for &e in raised {
            t.raise(e);
        }
        self.txs.push_back(t);
        id
    }

    /// Transactions created so far.
    pub fn count(&self) -> u64 {
        self.next_id
    }

    /// The transaction `id`, while live.
    pub fn get(&self, id: u64) -> Option<&Tx<T>> {
        let first = self.txs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get(i).filter(|t| t.id == id)
    }

    /// The newest transaction.
    pub fn last_mut(&mut self) -> Option<&mut Tx<T>> {
        self.txs.back_mut()
    }

    /// Live transactions.
    pub fn iter(&self) -> impl Iterator<Item = &Tx<T>> {
        self.txs.iter()
    }

    /// Live transactions from id `from` on.
    pub fn from_id(&self, from: u64) -> impl Iterator<Item = &Tx<T>> {
        self.txs.iter().filter(move |t| t.id >= from)
    }

    /// Ids of the live transactions of direction `dir`.
    pub fn live(&self, dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().filter(|t| t.dir == dir).map(|t| t.id));
    }

    /// Free the transactions below `id`.
    pub fn free_before(&mut self, id: u64) {
        while self.txs.front().is_some_and(|t| t.id < id) {
            self.txs.pop_front();
        }
    }

    /// Report each event of the transactions from `from` on (not reported yet) once.
    pub fn drain_events(
        &mut self,
        from: u64,
        names: &'static [&'static str],
        f: &mut dyn FnMut(AppAnomaly),
    ) {
        let start = from.max(self.anomaly_next);
        for t in self.txs.iter().filter(|t| t.id >= start) {
            for &e in &t.raised {
                if let Some(name) = names.get(usize::from(e)) {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
                    });
                }
            }
        }
        self.anomaly_next = self.anomaly_next.max(self.next_id);
    }
}

/// Log every transaction not logged yet as one `event_type` record each (header from the
/// direction of the packet that completed it, Suricata's `LOG_DIR_PACKET`), the
/// protocol object written by `body`, then free them. `body` returns false to skip a record.
pub fn log_all<T>(
    list: &mut TxList<T>,
    c: &mut LogCtx<'_>,
    event_type: &str,
    mut body: impl FnMut(&Tx<T>, &mut JsonWriter) -> bool,
) {
    let end = list.count();
    for t in list.from_id(*c.next) {
        c.logged += 1;
        if !c.write {
            continue;
        }
        let Some(mut rec) = c.out.record(EventKind::Protocol) else {
            continue;
        };
        // Over TCP a message is parsed on the packet that acknowledges it, which goes the
        // other way: Suricata's packet-direction header then names the receiver as `src`.
        let to_server = (t.dir == Dir::ToServer) != (c.rec.ip_proto == 6);
        write_eve_header(&mut rec, &c.rec.header(event_type, to_server));
        if body(t, &mut rec) {
            rec.close();
            let _ = rec.commit();
        }
    }
    *c.next = end;
    // Over TCP a message is parsed when the other side acknowledges it, so a transaction
    // appears on a packet of the opposite direction; detection inspects it on the next packet
    // of its own direction. Keep the latest logged ones for that (bounded) until the flow ends
    // (as DNS over TCP does).
    let keep_from = if c.closed || c.rec.ip_proto != 6 {
        end
    } else {
        end.saturating_sub(MAX_KEPT_TCP)
    };
    list.free_before(keep_from);
}

/// Logged transactions kept for detection per TCP flow.
const MAX_KEPT_TCP: u64 = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_free_bound_and_events() {
        let mut l = TxList::new(2);
        assert_eq!(l.push(Dir::ToServer, 0, 'a'), 0);
        assert_eq!(l.push(Dir::ToClient, 0b10, 'b'), 1);
        assert_eq!(l.push(Dir::ToServer, 0, 'c'), 2);
        assert_eq!(l.dropped, 1);
        assert!(l.get(0).is_none());
        assert_eq!(l.get(1).map(|t| t.data), Some('b'));
        let mut v = Vec::new();
        l.live(Dir::ToServer, &mut v);
        assert_eq!(v, [2]);
        let mut got = Vec::new();
        l.drain_events(0, &["x", "y"], &mut |a| got.push((a.tx_id, a.name)));
        assert_eq!(got, [(1, "y")]);
        got.clear();
        l.drain_events(0, &["x", "y"], &mut |a| got.push((a.tx_id, a.name)));
        assert!(got.is_empty());
        l.free_before(2);
        assert_eq!(l.iter().count(), 1);
        assert_eq!(l.count(), 3);
    }
}
