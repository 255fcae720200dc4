//! A streaming JSON writer that appends to a `Vec<u8>`.
//!
//! Behaviour follows Suricata's `JsonBuilder` (rust/src/jsonbuilder.rs), re-implemented:
//!
//! * no whitespace; commas are inserted automatically from a small state stack;
//! * strings are escaped like serde_json / Suricata: `"` `\\` and the short forms `\b \t \n \f \r`;
//!   any other byte below 0x20 becomes `\u00XX` (lowercase hex); DEL and `/` are left alone;
//! * byte strings that are not valid UTF-8 are written the way Suricata does: every byte >= 0x80
//!   becomes the four characters `\xNN` (lowercase hex, so the JSON text holds `\\xNN`), bytes
//!   below 0x80 are escaped as usual. Valid UTF-8 is written unchanged;
//! * floats use Rust's shortest round-trip `Display`; NaN and infinities are written as `null`;
//! * base64 is the standard alphabet with padding; hex is lowercase.
//!
//! Misuse (a value where a key is required, `close()` at the top level, nesting deeper than
//! [`MAX_DEPTH`]) never panics: it sets a sticky error flag that [`JsonWriter::error`] reports, so
//! a caller can roll the record back instead of emitting broken JSON.
//!
//! Nothing here allocates once the buffer has grown to the working size.

use std::fmt;

/// Deepest nesting accepted; deeper opens set the error flag.
pub const MAX_DEPTH: usize = 32;

/// The error a misused writer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonError {
    /// A write did not fit the current state (e.g. a keyed value inside an array).
    InvalidState,
    /// More than [`MAX_DEPTH`] nested objects/arrays.
    TooDeep,
    /// A "trusted ASCII" writer produced a byte that would need escaping.
    BadAscii,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::InvalidState => f.write_str("JSON write in invalid state"),
            JsonError::TooDeep => f.write_str("JSON nesting too deep"),
            JsonError::BadAscii => f.write_str("trusted ASCII value needed escaping"),
        }
    }
}

impl std::error::Error for JsonError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Top level, nothing written since the last record boundary.
    RootEmpty,
    /// Top level, one complete value written.
    RootDone,
    /// Inside an object, no member yet.
    ObjFirst,
    /// Inside an object, at least one member written.
    ObjNth,
    /// Inside an object, a key was written and its value is due.
    ObjValue,
    /// Inside an array, no element yet.
    ArrFirst,
    /// Inside an array, at least one element written.
    ArrNth,
}

/// A saved writer position for [`JsonWriter::rollback`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    len: usize,
    depth: usize,
    state: State,
    error: Option<JsonError>,
}

impl Mark {
    /// Bytes written before the mark.
    pub fn offset(&self) -> usize {
        self.len
    }
}

/// Streaming JSON writer over a growable byte buffer.
#[derive(Debug, Clone)]
pub struct JsonWriter {
    buf: Vec<u8>,
    stack: [State; MAX_DEPTH + 1],
    /// Index of the current state in `stack` (0 = root).
    depth: usize,
    error: Option<JsonError>,
}

impl Default for JsonWriter {
    fn default() -> Self {
        Self::new()
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Escape class per byte: 0 = verbatim, b'u' = `\u00XX`, else the short escape letter.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

impl JsonWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty writer whose buffer can hold `cap` bytes without growing.
    pub fn with_capacity(cap: usize) -> Self {
        Self::from_vec(Vec::with_capacity(cap))
    }

    /// Wrap an existing buffer; new output is appended after its contents.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        JsonWriter {
            buf,
            stack: [State::RootEmpty; MAX_DEPTH + 1],
            depth: 0,
            error: None,
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Number of bytes in the buffer.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Capacity of the underlying buffer.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Drop all output and state, keeping the capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.depth = 0;
        self.stack[0] = State::RootEmpty;
        self.error = None;
    }

    /// Give back the buffer.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    /// Swap the underlying buffer with `other` and reset the state to the top level.
    ///
    /// Used to hand a full buffer to a writer thread and continue in a recycled one.
    pub fn swap_buffer(&mut self, other: &mut Vec<u8>) {
        std::mem::swap(&mut self.buf, other);
        self.depth = 0;
        self.stack[0] = State::RootEmpty;
        self.error = None;
    }

    /// The first misuse seen since the last [`clear`](Self::clear) / record boundary, if any.
    pub fn error(&self) -> Option<JsonError> {
        self.error
    }

    /// True when the writer is at the top level with one complete value written.
    pub fn is_complete(&self) -> bool {
        self.depth == 0 && self.stack[0] == State::RootDone && self.error.is_none()
    }

    /// Current nesting depth (0 = top level).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Save the current position.
    pub fn mark(&self) -> Mark {
        Mark {
            len: self.buf.len(),
            depth: self.depth,
            state: self.stack[self.depth],
            error: self.error,
        }
    }

    /// Drop everything written since `mark`, restoring the state at that point.
    ///
    /// A mark taken at a deeper level than the current one (its container already closed) or past
    /// the end of the buffer (a `clear` happened since) is ignored and sets the error flag.
    pub fn rollback(&mut self, mark: Mark) {
        if mark.len > self.buf.len() || mark.depth > self.depth {
            self.fail(JsonError::InvalidState);
            return;
        }
        self.buf.truncate(mark.len);
        self.depth = mark.depth;
        self.stack[self.depth] = mark.state;
        self.error = mark.error;
    }

    /// End a top-level value with `\n` and get ready for the next one.
    ///
    /// Sets the error flag (and writes nothing) when a value is still open.
    pub fn newline(&mut self) {
        if self.depth != 0 {
            self.fail(JsonError::InvalidState);
            return;
        }
        self.buf.push(b'\n');
        self.stack[0] = State::RootEmpty;
    }

    /// Add `member` (`"key":value`, already valid JSON) as the last member of the complete
    /// top-level object just written (`{...}` becomes `{...,member}`). Does nothing unless a
    /// complete object ends the buffer. Used for Suricata's `host` field, which closes every
    /// record.
    pub fn append_to_last_object(&mut self, member: &[u8]) {
        if !self.is_complete() || self.buf.last() != Some(&b'}') {
            return;
        }
        self.buf.pop();
        if self.buf.last() != Some(&b'{') {
            self.buf.push(b',');
        }
        self.buf.extend_from_slice(member);
        self.buf.push(b'}');
    }

    /// Append raw bytes outside the JSON state machine (e.g. a line prefix).
    pub fn push_raw_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    #[cold]
    fn fail(&mut self, e: JsonError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Prepare for a value at the current position: emit a comma if needed and move the state on.
    #[inline]
    fn before_value(&mut self) {
        let st = &mut self.stack[self.depth];
        match *st {
            State::ArrFirst => *st = State::ArrNth,
            State::ArrNth => self.buf.push(b','),
            State::ObjValue => *st = State::ObjNth,
            State::RootEmpty => *st = State::RootDone,
            State::RootDone | State::ObjFirst | State::ObjNth => self.fail(JsonError::InvalidState),
        }
    }

    /// Write `"key":` at the current position.
    #[inline]
    fn before_key(&mut self, key: &str) {
        let st = &mut self.stack[self.depth];
        match *st {
            State::ObjFirst => *st = State::ObjValue,
            State::ObjNth => {
                *st = State::ObjValue;
                self.buf.push(b',');
            }
            _ => {
                self.fail(JsonError::InvalidState);
                return;
            }
        }
        self.escape_str(key.as_bytes());
        self.buf.push(b':');
    }

    #[inline]
    fn push_state(&mut self, s: State) {
        if self.depth >= MAX_DEPTH {
            self.fail(JsonError::TooDeep);
            return;
        }
        self.depth += 1;
        self.stack[self.depth] = s;
    }

    /// Write `key` inside an object; the next value written completes the member.
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.before_key(key);
        self
    }

    /// Open an object as a value (top level, array element, or after [`key`](Self::key)).
    pub fn start_object(&mut self) -> &mut Self {
        self.before_value();
        self.buf.push(b'{');
        self.push_state(State::ObjFirst);
        self
    }

    /// Open an array as a value.
    pub fn start_array(&mut self) -> &mut Self {
        self.before_value();
        self.buf.push(b'[');
        self.push_state(State::ArrFirst);
        self
    }

    /// Open an object under `key`.
    pub fn open_object(&mut self, key: &str) -> &mut Self {
        self.before_key(key);
        self.start_object()
    }

    /// Open an array under `key`.
    pub fn open_array(&mut self, key: &str) -> &mut Self {
        self.before_key(key);
        self.start_array()
    }

    /// Close the innermost open object or array.
    pub fn close(&mut self) -> &mut Self {
        match self.stack[self.depth] {
            State::ObjFirst | State::ObjNth => self.buf.push(b'}'),
            State::ArrFirst | State::ArrNth => self.buf.push(b']'),
            State::ObjValue | State::RootEmpty | State::RootDone => {
                self.fail(JsonError::InvalidState);
                return self;
            }
        }
        self.depth -= 1;
        self
    }

    /// Close objects/arrays until `depth` is reached (e.g. 0 to finish a record).
    pub fn close_to(&mut self, depth: usize) -> &mut Self {
        while self.depth > depth && self.error.is_none() {
            self.close();
        }
        self
    }

    /// A string value.
    pub fn str(&mut self, v: &str) -> &mut Self {
        self.before_value();
        self.escape_str(v.as_bytes());
        self
    }

    /// A string value from bytes; invalid UTF-8 is written as Suricata does (`\xNN` text).
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.before_value();
        self.escape_bytes(v);
        self
    }

    /// An unsigned integer value.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.before_value();
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
        self
    }

    /// A signed integer value.
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.before_value();
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
        self
    }

    /// A float value (`null` for NaN and infinities).
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.before_value();
        self.push_f64(v);
        self
    }

    /// A boolean value.
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.before_value();
        self.buf
            .extend_from_slice(if v { b"true" as &[u8] } else { b"false" });
        self
    }

    /// A `null` value.
    pub fn null(&mut self) -> &mut Self {
        self.before_value();
        self.buf.extend_from_slice(b"null");
        self
    }

    /// A pre-serialised JSON value, copied verbatim. The caller vouches that it is valid JSON.
    pub fn raw(&mut self, json: &[u8]) -> &mut Self {
        self.before_value();
        self.buf.extend_from_slice(json);
        self
    }

    /// A string value holding the standard base64 (padded) encoding of `v`.
    pub fn base64(&mut self, v: &[u8]) -> &mut Self {
        self.before_value();
        self.buf.push(b'"');
        encode_base64(&mut self.buf, v);
        self.buf.push(b'"');
        self
    }

    /// A string value holding the lowercase hex encoding of `v`.
    pub fn hex(&mut self, v: &[u8]) -> &mut Self {
        self.before_value();
        self.buf.push(b'"');
        encode_hex(&mut self.buf, v);
        self.buf.push(b'"');
        self
    }

    /// A string value produced by `f` writing ASCII straight into the buffer (no copy).
    ///
    /// For formatted values like timestamps and addresses. If `f` writes a byte that would need
    /// escaping (control, `"`, `\`, or >= 0x80) the error flag is set.
    pub fn ascii_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.before_value();
        self.buf.push(b'"');
        let start = self.buf.len();
        f(&mut self.buf);
        let bad = self
            .buf
            .get(start..)
            .unwrap_or_default()
            .iter()
            .any(|&b| b >= 0x80 || ESCAPE[b as usize] != 0);
        if bad {
            self.fail(JsonError::BadAscii);
        }
        self.buf.push(b'"');
        self
    }

    /// A string value of `v` with every byte that is not printable ASCII, `\n` or `\r` replaced
    /// by `.` (Suricata's `payload_printable`).
    pub fn printable(&mut self, v: &[u8]) -> &mut Self {
        self.before_value();
        self.buf.reserve(v.len() + 2);
        self.buf.push(b'"');
        for &b in v {
            let c = if (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\r' {
                b
            } else {
                b'.'
            };
            match ESCAPE[c as usize] {
                0 => self.buf.push(c),
                e => {
                    self.buf.push(b'\\');
                    self.buf.push(e);
                }
            }
        }
        self.buf.push(b'"');
        self
    }

    /// `"key":"v"`.
    pub fn set_str(&mut self, key: &str, v: &str) -> &mut Self {
        self.before_key(key);
        self.str(v)
    }

    /// `"key":"v"` from bytes (invalid UTF-8 handled as in [`bytes`](Self::bytes)).
    pub fn set_bytes(&mut self, key: &str, v: &[u8]) -> &mut Self {
        self.before_key(key);
        self.bytes(v)
    }

    /// `"key":v` for an unsigned integer.
    pub fn set_u64(&mut self, key: &str, v: u64) -> &mut Self {
        self.before_key(key);
        self.u64(v)
    }

    /// `"key":v` for a signed integer.
    pub fn set_i64(&mut self, key: &str, v: i64) -> &mut Self {
        self.before_key(key);
        self.i64(v)
    }

    /// `"key":v` for a float.
    pub fn set_f64(&mut self, key: &str, v: f64) -> &mut Self {
        self.before_key(key);
        self.f64(v)
    }

    /// `"key":true|false`.
    pub fn set_bool(&mut self, key: &str, v: bool) -> &mut Self {
        self.before_key(key);
        self.bool(v)
    }

    /// `"key":null`.
    pub fn set_null(&mut self, key: &str) -> &mut Self {
        self.before_key(key);
        self.null()
    }

    /// `"key":<raw JSON>`.
    pub fn set_raw(&mut self, key: &str, json: &[u8]) -> &mut Self {
        self.before_key(key);
        self.raw(json)
    }

    /// `"key":"<base64>"`.
    pub fn set_base64(&mut self, key: &str, v: &[u8]) -> &mut Self {
        self.before_key(key);
        self.base64(v)
    }

    /// `"key":"<hex>"`.
    pub fn set_hex(&mut self, key: &str, v: &[u8]) -> &mut Self {
        self.before_key(key);
        self.hex(v)
    }

    /// `"key":"<printable>"`; see [`printable`](Self::printable).
    pub fn set_printable(&mut self, key: &str, v: &[u8]) -> &mut Self {
        self.before_key(key);
        self.printable(v)
    }

    /// `"key":"<ascii written by f>"`; see [`ascii_with`](Self::ascii_with).
    pub fn set_ascii_with(&mut self, key: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.before_key(key);
        self.ascii_with(f)
    }

    fn push_f64(&mut self, v: f64) {
        use std::io::Write;
        if v.is_finite() {
            // Writing into a Vec cannot fail.
            let _ = write!(self.buf, "{v}");
        } else {
            self.buf.extend_from_slice(b"null");
        }
    }

    /// Quote and escape a UTF-8 byte string.
    fn escape_str(&mut self, s: &[u8]) {
        self.buf.reserve(s.len() + 2);
        self.buf.push(b'"');
        escape_into(&mut self.buf, s);
        self.buf.push(b'"');
    }

    /// Quote and escape bytes, applying Suricata's rule for invalid UTF-8.
    fn escape_bytes(&mut self, s: &[u8]) {
        if std::str::from_utf8(s).is_ok() {
            self.escape_str(s);
            return;
        }
        self.buf.reserve(s.len() * 5 + 2);
        self.buf.push(b'"');
        let mut start = 0;
        for (i, &b) in s.iter().enumerate() {
            if b >= 0x80 {
                escape_into(&mut self.buf, s.get(start..i).unwrap_or_default());
                // The text `\xNN`, whose backslash is itself escaped in JSON.
                self.buf.extend_from_slice(b"\\\\x");
                self.buf.push(HEX[(b >> 4) as usize]);
                self.buf.push(HEX[(b & 0xf) as usize]);
                start = i + 1;
            }
        }
        escape_into(&mut self.buf, s.get(start..).unwrap_or_default());
        self.buf.push(b'"');
    }
}

/// Append `s` JSON-escaped (without quotes) to `out`. Bytes >= 0x80 are copied verbatim.
pub fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let e = ESCAPE[b as usize];
        if e == 0 {
            continue;
        }
        out.extend_from_slice(s.get(start..i).unwrap_or_default());
        if e == b'u' {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.push(b'\\');
            out.push(e);
        }
        start = i + 1;
    }
    out.extend_from_slice(s.get(start..).unwrap_or_default());
}

/// Append the standard padded base64 encoding of `v` to `out`.
pub fn encode_base64(out: &mut Vec<u8>, v: &[u8]) {
    out.reserve(v.len().div_ceil(3) * 4);
    let mut chunks = v.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend_from_slice(&[
            B64[(n >> 18) as usize & 63],
            B64[(n >> 12) as usize & 63],
            B64[(n >> 6) as usize & 63],
            B64[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[B64[(n >> 18) as usize & 63], B64[(n >> 12) as usize & 63]]);
            out.extend_from_slice(b"==");
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend_from_slice(&[
                B64[(n >> 18) as usize & 63],
                B64[(n >> 12) as usize & 63],
                B64[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
}

/// Append the lowercase hex encoding of `v` to `out`.
pub fn encode_hex(out: &mut Vec<u8>, v: &[u8]) {
    out.reserve(v.len() * 2);
    for &b in v {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 0xf) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(w: &JsonWriter) -> &str {
        std::str::from_utf8(w.as_bytes()).unwrap()
    }

    #[test]
    fn objects_arrays_and_commas() {
        let mut w = JsonWriter::new();
        w.start_object()
            .set_str("a", "x")
            .set_u64("b", 1)
            .open_array("c")
            .u64(1)
            .str("two")
            .start_object()
            .set_bool("t", true)
            .close()
            .start_array()
            .close()
            .close()
            .open_object("d")
            .close()
            .set_i64("e", -5)
            .set_null("f")
            .close();
        assert!(w.is_complete());
        assert_eq!(
            s(&w),
            r#"{"a":"x","b":1,"c":[1,"two",{"t":true},[]],"d":{},"e":-5,"f":null}"#
        );
    }

    #[test]
    fn escaping_table() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain", r#""plain""#),
            (b"q\"b\\", r#""q\"b\\""#),
            (b"\x08\t\n\x0c\r", r#""\b\t\n\f\r""#),
            (b"\x00\x01\x1f\x7f", "\"\\u0000\\u0001\\u001f\x7f\""),
            ("é/ü".as_bytes(), "\"é/ü\""),
            (b"\xf0\xf1\xf2", r#""\\xf0\\xf1\\xf2""#),
            (b"a\xffb\"", r#""a\\xffb\"""#),
            // Invalid UTF-8 anywhere: every high byte is hex-escaped, as Suricata does.
            (b"\xc3\xa9\xff", r#""\\xc3\\xa9\\xff""#),
        ];
        for (input, want) in cases {
            let mut w = JsonWriter::new();
            w.bytes(input);
            assert_eq!(s(&w), *want, "input {input:?}");
        }
    }

    #[test]
    fn floats_base64_hex() {
        let mut w = JsonWriter::new();
        w.start_array()
            .f64(1.1)
            .f64(2.0)
            .f64(f64::NAN)
            .f64(f64::NEG_INFINITY)
            .base64(b"")
            .base64(b"f")
            .base64(b"fo")
            .base64(b"foo")
            .base64(b"foob")
            .hex(&[0x00, 0xab, 0x1f])
            .close();
        assert_eq!(
            s(&w),
            r#"[1.1,2,null,null,"","Zg==","Zm8=","Zm9v","Zm9vYg==","00ab1f"]"#
        );
    }

    #[test]
    fn misuse_sets_error_not_panic() {
        let mut w = JsonWriter::new();
        w.start_object().u64(1);
        assert_eq!(w.error(), Some(JsonError::InvalidState));

        let mut w = JsonWriter::new();
        w.start_array().set_u64("k", 1);
        assert_eq!(w.error(), Some(JsonError::InvalidState));

        let mut w = JsonWriter::new();
        w.close();
        assert_eq!(w.error(), Some(JsonError::InvalidState));

        let mut w = JsonWriter::new();
        for _ in 0..MAX_DEPTH + 2 {
            w.start_array();
        }
        assert_eq!(w.error(), Some(JsonError::TooDeep));

        let mut w = JsonWriter::new();
        w.start_object()
            .set_ascii_with("k", |b| b.extend_from_slice(b"a\"b"));
        assert_eq!(w.error(), Some(JsonError::BadAscii));
    }

    #[test]
    fn mark_and_rollback() {
        let mut w = JsonWriter::new();
        w.start_object().set_str("foo", "bar");
        let m = w.mark();
        w.open_array("bar").start_object().set_u64("x", 1);
        w.rollback(m);
        assert_eq!(s(&w), r#"{"foo":"bar""#);
        w.set_u64("n", 2).close();
        assert_eq!(s(&w), r#"{"foo":"bar","n":2}"#);
        assert!(w.is_complete());

        // A rollback also forgets a misuse made after the mark.
        let mut w = JsonWriter::new();
        w.start_object();
        let m = w.mark();
        w.u64(3);
        assert!(w.error().is_some());
        w.rollback(m);
        assert!(w.error().is_none());
        w.close();
        assert_eq!(s(&w), "{}");
    }

    #[test]
    fn records_on_lines() {
        let mut w = JsonWriter::new();
        w.start_object().set_u64("a", 1).close().newline();
        w.start_object().set_u64("a", 2).close().newline();
        assert_eq!(s(&w), "{\"a\":1}\n{\"a\":2}\n");
        // A second top-level value without a newline is misuse.
        w.start_object().close().start_object();
        assert!(w.error().is_some());
    }
}
