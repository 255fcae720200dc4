//! HTTP byte-range reassembly (Suricata's `app-layer-htp-range.c`): the parts of one file
//! fetched with `Content-Range` by different transactions, on any flow, HTTP/1 or HTTP/2,
//! are put back together; once every byte from 0 to the announced size was seen, the whole
//! file is handed to the transaction that completed it (an extra `fileinfo`).
//!
//! Files are keyed by host and name (HTTP/1: the request's host name and the file's name;
//! HTTP/2: `:authority` up to its port and the last segment of `:path`). Parts that come out
//! of order are kept until the missing bytes arrive, within
//! `app-layer.protocols.http.byterange.memcap` (default 100 MiB); a file not touched for
//! `app-layer.protocols.http.byterange.timeout` seconds (default 60) is forgotten once no
//! transaction is adding to it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::files::{FileConfig, TrackedFile};

/// Default `byterange.memcap` (Suricata's `HTTP_RANGE_DEFAULT_MEMCAP`).
pub const DEFAULT_MEMCAP: u64 = 100 * 1024 * 1024;
/// Default `byterange.timeout` in seconds.
pub const DEFAULT_TIMEOUT: u64 = 60;
/// Memory charged per tracked file besides its kept parts.
const CONTAINER_COST: u64 = 256;

/// A parsed `Content-Range` value (`-1`: not given, as Suricata's `HTTPContentRange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentRange {
    pub start: i64,
    pub end: i64,
    pub size: i64,
}

/// Suricata's `rs_http_parse_content_range`: spaces, a unit token, spaces, then
/// `*/<size>` or `<start>-<end>/<size|*>`.
pub fn parse(v: &[u8]) -> Option<ContentRange> {
    let num = |s: &[u8]| -> Option<(i64, usize)> {
        let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let x = std::str::from_utf8(s.get(..n)?).ok()?.parse::<i64>().ok()?;
        Some((x, n))
    };
    let sp = |s: &[u8]| s.iter().take_while(|&&c| c == b' ').count();
    let mut s = v.get(sp(v)..)?;
    let tok = s.iter().take_while(|&&c| c != b' ').count();
    s = s.get(tok..)?;
    s = s.get(sp(s)..)?;
    if let Some(rest) = s.strip_prefix(b"*/") {
        let (size, _) = num(rest)?;
        return Some(ContentRange {
            start: -1,
            end: -1,
            size,
        });
    }
    let (start, n) = num(s)?;
    let s = s.get(n..)?.strip_prefix(b"-")?;
    let (end, n) = num(s)?;
    let s = s.get(n..)?.strip_prefix(b"/")?;
    let size = if s.first() == Some(&b'*') {
        -1
    } else {
        num(s)?.0
    };
    Some(ContentRange { start, end, size })
}

/// What a response's `Content-Range` means for its file (Suricata's
/// `HTPParseAndCheckContentRange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// A part of a larger file: the file gets the range and joins the reassembly.
    Part(ContentRange),
    /// Not usable as a part (no end or size, or the whole file): a plain file.
    Plain,
    /// Unparsable or inconsistent: a plain file and the `range_invalid` event.
    Invalid,
}

/// Check an HTTP/1 `Content-Range` value.
pub fn check(v: &[u8]) -> Check {
    let Some(r) = parse(v) else {
        return Check::Invalid;
    };
    if r.end <= 0 || r.size <= 0 || (r.end == r.size - 1 && r.start == 0) {
        Check::Plain
    } else if r.start > r.end || r.end > r.size - 1 {
        Check::Invalid
    } else {
        Check::Part(r)
    }
}

/// A part kept until the bytes before it arrive (Suricata's `HttpRangeContainerBuffer`).
#[derive(Debug)]
struct Frag {
    start: u64,
    buflen: u64,
    data: Vec<u8>,
    gap: u64,
}

/// Where the whole file is.
#[derive(Debug)]
enum Slot {
    /// Not open (first part to come opens it; also after it was handed out).
    Empty,
    /// Held here between parts.
    Held(Box<TrackedFile>),
    /// A transaction is appending to it in order.
    Lent,
}

/// One file being reassembled (Suricata's `HttpRangeContainerFile`).
#[derive(Debug)]
struct Container {
    slot: Slot,
    lastsize: u64,
    totalsize: u64,
    /// Out-of-order parts by (start, length, seq).
    frags: BTreeMap<(u64, u64, u64), Frag>,
    expire: u64,
    users: u32,
    error: bool,
}

#[derive(Debug, Default)]
struct Table {
    map: HashMap<Vec<u8>, Container>,
    memuse: u64,
    seq: u64,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);
static MEMCAP: AtomicU64 = AtomicU64::new(DEFAULT_MEMCAP);
static TIMEOUT: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT);
/// Packet time in seconds, as the app layer last saw it (expiry clock).
static NOW: AtomicU64 = AtomicU64::new(0);

/// Set `byterange.memcap` and `byterange.timeout`.
pub fn configure(memcap: u64, timeout: u64) {
    MEMCAP.store(memcap, Ordering::Relaxed);
    TIMEOUT.store(timeout, Ordering::Relaxed);
}

/// The app layer's packet clock (seconds).
pub fn set_now(secs: u64) {
    NOW.fetch_max(secs, Ordering::Relaxed);
}

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Table::default))
}

impl Table {
    fn fits(&self, n: u64) -> bool {
        self.memuse.saturating_add(n) <= MEMCAP.load(Ordering::Relaxed)
    }

    /// Forget the files that timed out (or failed) and that nobody adds to.
    fn expire(&mut self, now: u64) {
        let mut freed = 0;
        self.map.retain(|_, c| {
            let dead = (now > c.expire || c.error) && c.users == 0;
            if dead {
                freed += CONTAINER_COST + c.frags.values().map(|f| f.buflen).sum::<u64>();
            }
            !dead
        });
        self.memuse = self.memuse.saturating_sub(freed);
    }
}

/// A transaction's share in a file's reassembly (Suricata's `HttpRangeContainerBlock`).
#[derive(Debug)]
pub struct Block {
    key: Vec<u8>,
    /// Holds a reference on the container (`users`).
    attached: bool,
    /// The whole file, while this part appends to it in order.
    file: Option<Box<TrackedFile>>,
    /// Bytes of this part already in the file.
    toskip: u64,
    /// This part, kept for later (out of order).
    current: Option<Frag>,
    done: bool,
}

/// A part `r` of the file `key` (`name`: the whole file's name) starts with `data`
/// (Suricata's `HttpRangeContainerOpenFile`); `None` over the memcap.
pub fn open(
    key: &[u8],
    name: &[u8],
    unnamed: bool,
    r: ContentRange,
    cfg: &FileConfig,
    data: &[u8],
) -> Option<Block> {
    let (start, end, total) = (
        r.start.max(0) as u64,
        r.end.max(0) as u64,
        r.size.max(0) as u64,
    );
    let now = NOW.load(Ordering::Relaxed);
    let timeout = TIMEOUT.load(Ordering::Relaxed);
    let mut b = with_table(|t| {
        t.expire(now);
        if !t.map.contains_key(key) {
            if !t.fits(CONTAINER_COST) {
                return None;
            }
            t.memuse += CONTAINER_COST;
            t.map.insert(
                key.to_vec(),
                Container {
                    slot: Slot::Empty,
                    lastsize: 0,
                    totalsize: 0,
                    frags: BTreeMap::new(),
                    expire: 0,
                    users: 0,
                    error: false,
                },
            );
        }
        let fits_buf = t.fits(end.saturating_sub(start) + 1);
        let c = t.map.get_mut(key)?;
        c.expire = now + timeout;
        if matches!(c.slot, Slot::Empty) {
            let f = TrackedFile::open_deferred(name, cfg, unnamed);
            c.slot = Slot::Held(Box::new(f));
        }
        c.totalsize = c.totalsize.max(total);
        let buflen = end - start + 1;
        let mut b = Block {
            key: key.to_vec(),
            attached: false,
            file: None,
            toskip: 0,
            current: None,
            done: false,
        };
        let held = matches!(c.slot, Slot::Held(_));
        if start == c.lastsize && held {
            if let Slot::Held(f) = std::mem::replace(&mut c.slot, Slot::Lent) {
                b.file = Some(f);
            }
        } else if start < c.lastsize && c.lastsize - start >= buflen {
            // Only bytes the file has already.
            b.toskip = buflen;
            return Some(b);
        } else if start < c.lastsize && held {
            b.toskip = c.lastsize - start;
            if let Slot::Held(f) = std::mem::replace(&mut c.slot, Slot::Lent) {
                b.file = Some(f);
            }
        } else if !fits_buf {
            b.toskip = buflen;
            return Some(b);
        } else {
            t.memuse += buflen;
            b.current = Some(Frag {
                start,
                buflen,
                data: Vec::new(),
                gap: 0,
            });
        }
        c.users += 1;
        b.attached = true;
        Some(b)
    })?;
    b.append(data);
    Some(b)
}

impl Block {
    /// More data of the part (Suricata's `HttpRangeAppendData`).
    pub fn append(&mut self, data: &[u8]) {
        self.add(Some(data), data.len() as u64);
    }

    /// `len` bytes of the part are missing.
    pub fn gap(&mut self, len: u64) {
        self.add(None, len);
    }

    fn add(&mut self, data: Option<&[u8]>, len: u64) {
        if len == 0 || self.done {
            return;
        }
        if self.toskip >= len {
            self.toskip -= len;
            return;
        }
        let skip = std::mem::take(&mut self.toskip);
        if let Some(f) = self.file.as_deref_mut() {
            match data {
                Some(d) => f.append(d.get(skip as usize..).unwrap_or(&[])),
                None => f.gap(len - skip),
            }
            return;
        }
        if skip > 0 {
            return;
        }
        if let Some(cur) = self.current.as_mut() {
            match data {
                None => cur.gap += len,
                Some(d) => {
                    let room = (cur.buflen as usize).saturating_sub(cur.data.len());
                    cur.data.extend_from_slice(&d[..d.len().min(room)]);
                }
            }
        }
    }

    /// The part ended (`truncated`: cut short): the whole file when this completed it
    /// (Suricata's `HTPFileCloseHandleRange` / `HttpRangeClose`).
    pub fn close(&mut self, truncated: bool) -> Option<Box<TrackedFile>> {
        if self.done {
            return None;
        }
        self.done = true;
        if !self.attached {
            return None;
        }
        self.attached = false;
        let key = std::mem::take(&mut self.key);
        let own = self.file.take();
        let cur = self.current.take();
        let toskip = self.toskip;
        with_table(|t| {
            let seq = {
                t.seq += 1;
                t.seq
            };
            let mut freed = 0;
            let r = (|| {
                let c = t.map.get_mut(&key)?;
                c.users = c.users.saturating_sub(1);
                if let Some(cur) = cur {
                    let have = cur.start + cur.data.len() as u64;
                    if c.lastsize >= have {
                        freed += cur.buflen;
                        return None;
                    }
                    let dup = c
                        .frags
                        .keys()
                        .any(|&(s, l, _)| s == cur.start && l == cur.buflen);
                    if dup {
                        freed += cur.buflen;
                        return None;
                    }
                    c.frags.insert((cur.start, cur.buflen, seq), cur);
                    if !matches!(c.slot, Slot::Held(_)) {
                        return None;
                    }
                } else if toskip > 0 {
                    if let Some(f) = own {
                        c.slot = Slot::Held(f);
                    }
                    return None;
                } else if let Some(f) = own {
                    c.slot = Slot::Held(f);
                } else {
                    return None;
                }
                let Slot::Held(f) = &mut c.slot else {
                    return None;
                };
                // Parts kept for later that now follow on.
                while let Some((&k, fr)) = c.frags.iter().next() {
                    if f.size() < fr.start {
                        break;
                    }
                    let over = f.size() - fr.start;
                    if over == 0 || over < fr.data.len() as u64 {
                        if fr.gap > 0 {
                            f.gap(fr.gap);
                        }
                        f.append(fr.data.get(over as usize..).unwrap_or(&[]));
                    }
                    freed += fr.buflen;
                    c.frags.remove(&k);
                }
                c.lastsize = f.size();
                if f.size() >= c.totalsize {
                    if let Slot::Held(mut f) = std::mem::replace(&mut c.slot, Slot::Empty) {
                        f.close(truncated);
                        f.store_if_forced();
                        return Some(f);
                    }
                }
                None
            })();
            t.memuse = t.memuse.saturating_sub(freed);
            r
        })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // A transaction freed before its part ended (Suricata's `HtpTxUserDataFree`):
        // the part is closed and a completed file has no transaction to go to.
        if !self.done && self.attached {
            let _ = self.close(false);
        }
    }
}

/// Forget every file (tests).
pub fn reset() {
    with_table(|t| *t = Table::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cr(start: i64, end: i64, size: i64) -> ContentRange {
        ContentRange { start, end, size }
    }

    #[test]
    fn parse_and_check() {
        assert_eq!(parse(b" bytes */100"), Some(cr(-1, -1, 100)));
        assert_eq!(parse(b"bytes 10-20/200"), Some(cr(10, 20, 200)));
        assert_eq!(parse(b"bytes 30-68/*"), Some(cr(30, 68, -1)));
        assert_eq!(parse(b"bytes x"), None);
        assert_eq!(check(b"bytes 10-20/69"), Check::Part(cr(10, 20, 69)));
        assert_eq!(check(b"bytes 0-68/69"), Check::Plain);
        assert_eq!(check(b"bytes */69"), Check::Plain);
        assert_eq!(check(b"bytes 20-10/69"), Check::Invalid);
        assert_eq!(check(b"bytes 10-80/69"), Check::Invalid);
        assert_eq!(check(b"garbage"), Check::Invalid);
    }

    // One test runs the shared table (tests run in parallel): distinct keys per case.
    #[test]
    fn parts_in_and_out_of_order_make_the_whole_file() {
        let cfg = FileConfig {
            sha256: true,
            ..FileConfig::default()
        };
        let whole: Vec<u8> = (0..30u8).collect();
        // In order: the last part completes the file.
        let mut a = open(b"h/a", b"/a", false, cr(0, 9, 30), &cfg, &whole[..5]).unwrap();
        a.append(&whole[5..10]);
        assert!(a.close(false).is_none());
        let mut b = open(b"h/a", b"/a", false, cr(10, 19, 30), &cfg, &whole[10..20]).unwrap();
        assert!(b.close(false).is_none());
        let mut c = open(b"h/a", b"/a", false, cr(15, 29, 30), &cfg, &whole[15..30]).unwrap();
        let f = c.close(false).unwrap();
        assert_eq!((f.name(), f.size()), (&b"/a"[..], 30));
        assert_eq!(f.state(), crate::files::FileState::Closed);
        let want: [u8; 32] = {
            use sha2::Digest as _;
            sha2::Sha256::digest(&whole).into()
        };
        assert_eq!(f.sha256(), Some(&want));
        // Out of order: the later part waits for the first.
        let mut late = open(b"h/b", b"/b", false, cr(20, 29, 30), &cfg, &whole[20..30]).unwrap();
        assert!(late.close(false).is_none());
        let mut mid = open(b"h/b", b"/b", false, cr(10, 19, 30), &cfg, &whole[10..20]).unwrap();
        assert!(mid.close(false).is_none());
        let mut first = open(b"h/b", b"/b", false, cr(0, 9, 30), &cfg, &whole[..10]).unwrap();
        let f = first.close(false).unwrap();
        assert_eq!(f.size(), 30);
        assert_eq!(f.sha256(), Some(&want));
        // A part never finished (transaction freed) completes nothing and leaks nothing.
        let g = open(b"h/c", b"/c", false, cr(5, 9, 30), &cfg, &whole[5..7]).unwrap();
        drop(g);
        let users = with_table(|t| t.map.get(&b"h/c"[..]).map(|c| c.users));
        assert_eq!(users, Some(0));
    }
}
