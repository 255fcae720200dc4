//! Header tables: one arena of bytes per message plus (name, value) ranges, so a transaction
//! holds its headers in two reusable allocations. Duplicate names are merged the libhtp way
//! (values joined with `", "`; a repeated Content-Length keeps the first value).

use super::util::{eq_nocase, eq_nocase_nozero, is_lws, is_token, parse_content_length};

/// Header flags.
pub(crate) const FIELD_REPEATED: u8 = 1;
/// The header was folded over several lines.
pub(crate) const FIELD_FOLDED: u8 = 2;

#[derive(Clone, Copy, Debug)]
struct Entry {
    name: (u32, u32),
    value: (u32, u32),
    flags: u8,
}

/// Ordered headers of one request or response.
#[derive(Clone, Debug, Default)]
pub struct HeaderTable {
    arena: Vec<u8>,
    entries: Vec<Entry>,
    repetitions: u32,
}

/// What adding a header line found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AddOutcome {
    /// Repeated Content-Length with a different value.
    pub cl_mismatch: bool,
    /// More than 64 repetitions: the header was dropped.
    pub excess_repetition: bool,
}

fn slice(arena: &[u8], r: (u32, u32)) -> &[u8] {
    arena.get(r.0 as usize..r.1 as usize).unwrap_or(&[])
}

impl HeaderTable {
    /// Empties the table, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        self.arena.clear();
        self.entries.clear();
        self.repetitions = 0;
    }

    /// Frees the storage when it grew beyond `keep` bytes (for pooled transactions).
    pub(crate) fn trim(&mut self, keep: usize) {
        if self.arena.capacity() > keep {
            self.arena = Vec::new();
        }
        if self.entries.capacity() * std::mem::size_of::<Entry>() > keep {
            self.entries = Vec::new();
        }
    }

    /// Number of distinct headers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no header.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Header `i` as (name, value).
    pub fn get_index(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.entries
            .get(i)
            .map(|e| (slice(&self.arena, e.name), slice(&self.arena, e.value)))
    }

    /// Iterates (name, value) in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.entries
            .iter()
            .map(|e| (slice(&self.arena, e.name), slice(&self.arena, e.value)))
    }

    /// Header names compare case-insensitively, ignoring NUL bytes in the stored name
    /// (libhtp's `htp_table_get_c`).
    fn find(&self, name: &[u8]) -> Option<usize> {
        self.entries.iter().position(|e| {
            let n = slice(&self.arena, e.name);
            if n.contains(&0) {
                eq_nocase_nozero(n, name)
            } else {
                eq_nocase(n, name)
            }
        })
    }

    /// Value of the first header named `name` (case-insensitive, NULs in names ignored).
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.find(name)
            .and_then(|i| self.entries.get(i))
            .map(|e| slice(&self.arena, e.value))
    }

    fn push_bytes(&mut self, b: &[u8]) -> (u32, u32) {
        let s = self.arena.len();
        self.arena.extend_from_slice(b);
        (s as u32, self.arena.len() as u32)
    }

    /// Adds a parsed header, merging with an earlier one of the same name.
    pub(crate) fn add(&mut self, name: &[u8], value: &[u8], flags: u8) -> AddOutcome {
        let mut out = AddOutcome::default();
        if let Some(i) = self.find(name) {
            let Some(e) = self.entries.get(i).copied() else {
                return out;
            };
            if e.flags & FIELD_REPEATED != 0 {
                if self.repetitions < 64 {
                    self.repetitions += 1;
                } else {
                    out.excess_repetition = true;
                    return out;
                }
            }
            let mut ne = e;
            ne.flags |= FIELD_REPEATED;
            if eq_nocase(name, b"content-length") {
                let old = parse_content_length(slice(&self.arena, e.value));
                let new = parse_content_length(value);
                if old.is_none() || new.is_none() || old != new {
                    out.cl_mismatch = true;
                }
            } else {
                // New value = old + ", " + value, appended at the arena's end.
                let s = self.arena.len();
                let (os, oe) = (e.value.0 as usize, e.value.1 as usize);
                self.arena.extend_from_within(os..oe);
                self.arena.extend_from_slice(b", ");
                self.arena.extend_from_slice(value);
                ne.value = (s as u32, self.arena.len() as u32);
            }
            if let Some(slot) = self.entries.get_mut(i) {
                *slot = ne;
            }
        } else {
            let n = self.push_bytes(name);
            let v = self.push_bytes(value);
            self.entries.push(Entry {
                name: n,
                value: v,
                flags,
            });
        }
        out
    }

    /// Bytes held (arena), for memory accounting.
    pub(crate) fn arena_len(&self) -> usize {
        self.arena.len()
    }
}

/// Problems found while splitting one header line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LineFlags {
    /// No colon: the whole line became the value of a nameless header.
    pub missing_colon: bool,
    /// Empty name, LWS before the colon, or a name that is not a token.
    pub invalid: bool,
}

/// Splits one (unfolded, chomped) header line into name and value as libhtp's generic
/// personality does. `response` selects the response rules (whitespace and control bytes
/// before the colon are dropped).
pub(crate) fn split_header(line: &[u8], response: bool) -> (&[u8], &[u8], LineFlags) {
    let mut f = LineFlags::default();
    let Some(colon) = memchr::memchr(b':', line) else {
        f.missing_colon = true;
        if response {
            f.invalid = true;
        }
        let v = trim_lws(line);
        return (&[], if response { v } else { line }, f);
    };
    if colon == 0 {
        f.invalid = true;
    }
    let mut name_end = colon;
    while name_end > 0 {
        let Some(&c) = line.get(name_end - 1) else {
            break;
        };
        let strip = if response { c <= 0x20 } else { is_lws(c) };
        if !strip {
            break;
        }
        name_end -= 1;
        f.invalid = true;
    }
    let name = line.get(..name_end).unwrap_or(&[]);
    if name.iter().any(|&c| !is_token(c)) {
        f.invalid = true;
    }
    let value = trim_lws(line.get(colon + 1..).unwrap_or(&[]));
    (name, value, f)
}

/// Trims spaces and tabs from both ends.
fn trim_lws(v: &[u8]) -> &[u8] {
    let s = v.iter().position(|&c| !is_lws(c)).unwrap_or(v.len());
    let e = v.iter().rposition(|&c| !is_lws(c)).map_or(s, |p| p + 1);
    v.get(s..e).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_lookup() {
        let mut t = HeaderTable::default();
        t.add(b"User-Agent", b"ua1", 0);
        t.add(b"Host", b"h", 0);
        t.add(b"user-agent", b"ua2", 0);
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(b"USER-AGENT"), Some(&b"ua1, ua2"[..]));
        assert_eq!(t.get_index(0), Some((&b"User-Agent"[..], &b"ua1, ua2"[..])));
        t.add(b"Content-Length", b"1", 0);
        assert!(!t.add(b"content-length", b" 1 ", 0).cl_mismatch);
        assert!(t.add(b"content-length", b"2", 0).cl_mismatch);
        assert_eq!(t.get(b"content-length"), Some(&b"1"[..]));
    }

    #[test]
    fn repetition_cap() {
        let mut t = HeaderTable::default();
        for _ in 0..66 {
            t.add(b"A", b"x", 0);
        }
        assert!(t.add(b"A", b"x", 0).excess_repetition);
        assert_eq!(t.get(b"a").map(|v| v.len()), Some(1 + 3 * 65));
    }

    #[test]
    fn split() {
        assert_eq!(
            split_header(b"Host: a b ", false),
            (&b"Host"[..], &b"a b"[..], LineFlags::default())
        );
        let (n, v, f) = split_header(b"NoColon", false);
        assert_eq!((n, v, f.missing_colon), (&b""[..], &b"NoColon"[..], true));
        let (n, v, f) = split_header(b"Ab : v", false);
        assert_eq!((n, v, f.invalid), (&b"Ab"[..], &b"v"[..], true));
        let (n, _, f) = split_header(b"A(b: v", false);
        assert_eq!((n, f.invalid), (&b"A(b"[..], true));
        let (n, v, f) = split_header(b": v", false);
        assert_eq!((n, v, f.invalid), (&b""[..], &b"v"[..], true));
        let (n, v, f) = split_header(b"Bad Line", true);
        assert_eq!((n, v, f.missing_colon), (&b""[..], &b"Bad Line"[..], true));
    }
}
