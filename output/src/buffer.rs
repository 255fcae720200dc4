//! Per-worker EVE buffer: whole records appended straight into the bytes that will be written.
//!
//! A record is written through a [`Record`] guard that derefs to [`JsonWriter`]. `commit()`
//! checks the record is one complete JSON value, appends `\n`, and counts it; a guard dropped
//! without `commit()`, or a misused writer, rolls the buffer back to where the record began, so a
//! buffer only ever holds whole, valid records and is always safe to write out.

use std::ops::{Deref, DerefMut};

use crate::json::{JsonError, JsonWriter, Mark};

/// Default buffer size (64 KiB), Suricata's `buffer-size` default for eve-log.
pub const DEFAULT_BUFFER_SIZE: usize = 64 * 1024;

/// The kinds of EVE record, used for per-type counters and overload policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `alert`
    Alert,
    /// `anomaly`
    Anomaly,
    /// `flow` (and `netflow`)
    Flow,
    /// `stats`
    Stats,
    /// Application-layer protocol records (`dns`, `http`, `tls`, ...).
    Protocol,
    /// Anything else.
    Other,
}

impl EventKind {
    /// Number of kinds.
    pub const COUNT: usize = 6;
    /// All kinds, in index order.
    pub const ALL: [EventKind; Self::COUNT] = [
        EventKind::Alert,
        EventKind::Anomaly,
        EventKind::Flow,
        EventKind::Stats,
        EventKind::Protocol,
        EventKind::Other,
    ];

    /// Dense index (0..COUNT) for counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Lowercase name used in counter names (`alert`, `anomaly`, `flow`, `stats`, `protocol`,
    /// `other`).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Alert => "alert",
            EventKind::Anomaly => "anomaly",
            EventKind::Flow => "flow",
            EventKind::Stats => "stats",
            EventKind::Protocol => "protocol",
            EventKind::Other => "other",
        }
    }

    /// The kind for an EVE `event_type` string.
    pub fn from_event_type(t: &str) -> EventKind {
        match t {
            "alert" => EventKind::Alert,
            "anomaly" => EventKind::Anomaly,
            "flow" | "netflow" => EventKind::Flow,
            "stats" => EventKind::Stats,
            "drop" | "engine" | "fileinfo" | "frame" => EventKind::Other,
            _ => EventKind::Protocol,
        }
    }
}

/// Records committed and rejected by one buffer since its creation, per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferCounts {
    /// Committed records per [`EventKind::index`].
    pub records: [u64; EventKind::COUNT],
    /// Records rolled back because the writer was misused (invalid JSON prevented).
    pub invalid: u64,
}

/// A worker's EVE buffer.
#[derive(Debug)]
pub struct EveBuffer {
    w: JsonWriter,
    buffer_size: usize,
    records_in_buffer: u64,
    counts: BufferCounts,
    /// A member added at the end of every record (`"host":"<sensor-name>"`).
    trailer: Option<Box<[u8]>>,
}

/// Extra capacity beyond `buffer_size` so the record that crosses the limit rarely grows the
/// buffer (growth is kept: buffers are recycled, so it happens once).
pub fn headroom(buffer_size: usize) -> usize {
    (buffer_size / 4).clamp(4096, 64 * 1024)
}

impl EveBuffer {
    /// A buffer that reports [`needs_flush`](Self::needs_flush) once `buffer_size` bytes of
    /// records are in it. `buffer_size` 0 means "flush after every record".
    pub fn new(buffer_size: usize) -> Self {
        Self::from_vec(
            Vec::with_capacity(buffer_size + headroom(buffer_size)),
            buffer_size,
        )
    }

    /// Use `buf` (cleared) as the backing storage.
    pub fn from_vec(mut buf: Vec<u8>, buffer_size: usize) -> Self {
        buf.clear();
        EveBuffer {
            w: JsonWriter::from_vec(buf),
            buffer_size,
            records_in_buffer: 0,
            counts: BufferCounts::default(),
            trailer: None,
        }
    }

    /// End every record with `"host":"<name>"`, as Suricata does when `sensor-name` is set
    /// (`None`: no such field).
    pub fn set_host(&mut self, name: Option<&str>) {
        self.trailer = name.map(|n| {
            let mut w = JsonWriter::with_capacity(n.len() + 16);
            w.start_object().set_str("host", n).close();
            let b = w.as_bytes();
            // `{"host":"..."}` without its braces.
            b[1..b.len() - 1].to_vec().into_boxed_slice()
        });
    }

    /// Start a record of `kind`. Write one JSON object through the guard, then `commit()`.
    pub fn record(&mut self, kind: EventKind) -> Record<'_> {
        let mark = self.w.mark();
        Record {
            buf: self,
            mark,
            kind,
            done: false,
        }
    }

    /// True once the buffered records reach `buffer_size` bytes.
    pub fn needs_flush(&self) -> bool {
        !self.w.is_empty() && self.w.len() >= self.buffer_size
    }

    /// The configured flush threshold.
    pub fn buffer_size(&self) -> usize {
        self.buffer_size
    }

    /// The buffered bytes: zero or more complete records, each ending in `\n`.
    pub fn as_bytes(&self) -> &[u8] {
        self.w.as_bytes()
    }

    /// Bytes buffered.
    pub fn len(&self) -> usize {
        self.w.len()
    }

    /// True when nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.w.is_empty()
    }

    /// Records in the buffer now.
    pub fn records_in_buffer(&self) -> u64 {
        self.records_in_buffer
    }

    /// Counters since creation.
    pub fn counts(&self) -> &BufferCounts {
        &self.counts
    }

    /// Drop the buffered records (after they were written).
    pub fn clear(&mut self) {
        self.w.clear();
        self.records_in_buffer = 0;
    }

    /// Exchange the buffered bytes with `other` (an empty, recycled buffer): `other` receives
    /// the records, this buffer continues empty in `other`'s storage.
    pub fn swap(&mut self, other: &mut Vec<u8>) {
        other.clear();
        self.w.swap_buffer(other);
        self.records_in_buffer = 0;
    }

    /// Capacity of the backing storage.
    pub fn capacity(&self) -> usize {
        self.w.capacity()
    }
}

/// A record being written into an [`EveBuffer`]. Derefs to the [`JsonWriter`].
///
/// Dropping it without [`commit`](Self::commit) removes everything it wrote.
#[derive(Debug)]
pub struct Record<'a> {
    buf: &'a mut EveBuffer,
    mark: Mark,
    kind: EventKind,
    done: bool,
}

impl Record<'_> {
    /// The kind given at start.
    pub fn kind(&self) -> EventKind {
        self.kind
    }

    /// Finish the record: it must be exactly one complete JSON value. On success a newline is
    /// appended and the record counted; on error the record is removed and counted as invalid.
    pub fn commit(mut self) -> Result<(), JsonError> {
        self.done = true;
        let w = &mut self.buf.w;
        if w.is_complete() {
            if let Some(t) = &self.buf.trailer {
                w.append_to_last_object(t);
            }
            w.newline();
            self.buf.records_in_buffer += 1;
            if let Some(c) = self.buf.counts.records.get_mut(self.kind.index()) {
                *c += 1;
            }
            Ok(())
        } else {
            let e = w.error().unwrap_or(JsonError::InvalidState);
            w.rollback(self.mark);
            self.buf.counts.invalid += 1;
            Err(e)
        }
    }

    /// What this record wrote so far.
    pub fn written(&self) -> &[u8] {
        let b = self.buf.w.as_bytes();
        b.get(self.mark.offset()..).unwrap_or_default()
    }

    /// Remove everything written by this record.
    pub fn abort(mut self) {
        self.done = true;
        self.buf.w.rollback(self.mark);
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.buf.w.rollback(self.mark);
        }
    }
}

impl Deref for Record<'_> {
    type Target = JsonWriter;
    fn deref(&self) -> &JsonWriter {
        &self.buf.w
    }
}

impl DerefMut for Record<'_> {
    fn deref_mut(&mut self) -> &mut JsonWriter {
        &mut self.buf.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ends_every_record() {
        let mut b = EveBuffer::new(256);
        b.set_host(Some("sens\"1"));
        let mut r = b.record(EventKind::Flow);
        r.start_object()
            .set_u64("a", 1)
            .open_object("o")
            .close()
            .close();
        r.commit().unwrap();
        let mut r = b.record(EventKind::Stats);
        r.start_object().close();
        r.commit().unwrap();
        assert_eq!(
            b.as_bytes(),
            b"{\"a\":1,\"o\":{},\"host\":\"sens\\\"1\"}\n{\"host\":\"sens\\\"1\"}\n"
        );
        b.set_host(None);
        let mut r = b.record(EventKind::Flow);
        r.start_object().close();
        r.commit().unwrap();
        assert!(b.as_bytes().ends_with(b"\n{}\n"));
    }

    #[test]
    fn commit_abort_and_invalid() {
        let mut b = EveBuffer::new(64);
        let mut r = b.record(EventKind::Flow);
        r.start_object().set_u64("a", 1).close();
        r.commit().unwrap();
        {
            let mut r = b.record(EventKind::Alert);
            r.start_object().set_u64("half", 1);
            // dropped without commit
        }
        let mut r = b.record(EventKind::Alert);
        r.start_object().set_u64("b", 2);
        assert!(r.commit().is_err(), "unclosed object must not commit");
        let mut r = b.record(EventKind::Alert);
        r.start_object().u64(7).close();
        assert_eq!(r.commit(), Err(JsonError::InvalidState));
        let mut r = b.record(EventKind::Alert);
        r.start_object().set_u64("c", 3).close();
        r.abort();
        assert_eq!(b.as_bytes(), b"{\"a\":1}\n");
        assert_eq!(b.records_in_buffer(), 1);
        assert_eq!(b.counts().records[EventKind::Flow.index()], 1);
        assert_eq!(b.counts().invalid, 2);
        assert!(!b.needs_flush());
    }

    #[test]
    fn needs_flush_and_swap_keep_storage() {
        let mut b = EveBuffer::new(100);
        let cap = b.capacity();
        while !b.needs_flush() {
            let mut r = b.record(EventKind::Stats);
            r.start_object().set_str("k", "0123456789").close();
            r.commit().unwrap();
        }
        assert!(b.len() >= 100);
        let mut spare = Vec::with_capacity(cap);
        b.swap(&mut spare);
        assert!(b.is_empty());
        assert_eq!(b.records_in_buffer(), 0);
        assert!(spare.ends_with(b"\n"));
        assert_eq!(spare.iter().filter(|&&c| c == b'\n').count(), 6);
    }

    #[test]
    fn kinds_from_event_types() {
        assert_eq!(EventKind::from_event_type("alert"), EventKind::Alert);
        assert_eq!(EventKind::from_event_type("netflow"), EventKind::Flow);
        assert_eq!(EventKind::from_event_type("dns"), EventKind::Protocol);
        assert_eq!(EventKind::from_event_type("anomaly"), EventKind::Anomaly);
        for (i, k) in EventKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
        }
    }
}
