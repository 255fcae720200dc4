//! EVE `http` object of a transaction, with Suricata 7's field names and order
//! (output-json-http.c): basic fields always, `extended` ones when configured, header dumps
//! when `dump-all-headers` asks for them.

use super::parser::HttpState;
use super::tx::HttpTx;

/// Receives the fields of an EVE object. Keys are Suricata's; string values are raw bytes
/// (the writer escapes them).
pub trait EveOut {
    /// A string field.
    fn str(&mut self, key: &str, value: &[u8]);
    /// An unsigned integer field.
    fn uint(&mut self, key: &str, value: u64);
    /// Opens a nested object under `key`.
    fn open_object(&mut self, key: &str);
    /// Opens an array under `key`.
    fn open_array(&mut self, key: &str);
    /// Starts an object inside the open array.
    fn start_item(&mut self);
    /// Closes the innermost open object, item or array.
    fn close(&mut self);
}

/// What to log (`outputs.eve-log.types.http` settings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EveHttpOptions {
    /// `extended: yes`.
    pub extended: bool,
    /// `dump-all-headers: request|both`.
    pub request_headers: bool,
    /// `dump-all-headers: response|both`.
    pub response_headers: bool,
    /// `custom`: the headers of [`CUSTOM_FIELDS`] to log (bit `i`: entry `i`) in the
    /// `request_headers` / `response_headers` arrays.
    pub custom: u64,
}

/// Suricata 7's `http_fields` table: the `custom` name, the header it logs, and whether
/// the field is part of `extended` (then not logged twice).
pub const CUSTOM_FIELDS: &[(&str, &str, bool)] = &[
    ("accept", "accept", false),
    ("accept_charset", "accept-charset", false),
    ("accept_encoding", "accept-encoding", false),
    ("accept_language", "accept-language", false),
    ("accept_datetime", "accept-datetime", false),
    ("authorization", "authorization", false),
    ("cache_control", "cache-control", false),
    ("cookie", "cookie", false),
    ("from", "from", false),
    ("max_forwards", "max-forwards", false),
    ("origin", "origin", false),
    ("pragma", "pragma", false),
    ("proxy_authorization", "proxy-authorization", false),
    ("range", "range", false),
    ("te", "te", false),
    ("via", "via", false),
    ("x_requested_with", "x-requested-with", false),
    ("dnt", "dnt", false),
    ("x_forwarded_proto", "x-forwarded-proto", false),
    ("x_authenticated_user", "x-authenticated-user", false),
    ("x_flash_version", "x-flash-version", false),
    ("accept_range", "accept-range", false),
    ("age", "age", false),
    ("allow", "allow", false),
    ("connection", "connection", false),
    ("content_encoding", "content-encoding", false),
    ("content_language", "content-language", false),
    ("content_length", "content-length", false),
    ("content_location", "content-location", false),
    ("content_md5", "content-md5", false),
    ("content_range", "content-range", false),
    ("content_type", "content-type", false),
    ("date", "date", false),
    ("etag", "etags", false),
    ("expires", "expires", false),
    ("last_modified", "last-modified", false),
    ("link", "link", false),
    ("location", "location", false),
    ("proxy_authenticate", "proxy-authenticate", false),
    ("referer", "referer", true),
    ("refresh", "refresh", false),
    ("retry_after", "retry-after", false),
    ("server", "server", false),
    ("set_cookie", "set-cookie", false),
    ("trailer", "trailer", false),
    ("transfer_encoding", "transfer-encoding", false),
    ("upgrade", "upgrade", false),
    ("vary", "vary", false),
    ("warning", "warning", false),
    ("www_authenticate", "www-authenticate", false),
    ("true_client_ip", "true-client-ip", false),
    ("org_src_ip", "org-src-ip", false),
    ("x_bluecoat_via", "x-bluecoat-via", false),
];

/// The `custom` bit set of a configured list: each value names a field by its `custom`
/// name or (any case) its header; unknown values are ignored, as Suricata does.
pub fn custom_fields<'a>(names: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut bits = 0u64;
    for n in names {
        if let Some(i) = CUSTOM_FIELDS
            .iter()
            .position(|(c, h, _)| *c == n || h.eq_ignore_ascii_case(n))
        {
            bits |= 1 << i;
        }
    }
    bits
}

/// Whether `custom` logs header `name` (Suricata's `EveHttpLogJSONHeaders` filter).
fn custom_logs(opts: &EveHttpOptions, name: &[u8]) -> bool {
    CUSTOM_FIELDS.iter().enumerate().any(|(i, (_, h, ext))| {
        opts.custom & (1 << i) != 0
            && !(opts.extended && *ext)
            && name.eq_ignore_ascii_case(h.as_bytes())
    })
}

/// Longest header name and value EVE header dumps keep (Suricata: 256 / 2048 incl. NUL).
const MAX_NAME: usize = 255;
const MAX_VALUE: usize = 2047;

/// Parsed `Content-Range` (Suricata's parser): `bytes */SIZE` or `bytes A-B/(SIZE|*)`;
/// -1 for an unknown part.
pub(crate) fn content_range(v: &[u8]) -> Option<(i64, i64, i64)> {
    let skip_sp = |s: &[u8]| -> usize { s.iter().take_while(|&&c| c == b' ').count() };
    let digits = |s: &[u8]| -> Option<(i64, usize)> {
        let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let v = std::str::from_utf8(s.get(..n)?).ok()?.parse::<i64>().ok()?;
        Some((v, n))
    };
    let mut s = v.get(skip_sp(v)..)?;
    s = s.strip_prefix(b"bytes")?;
    s = s.get(skip_sp(s)..)?;
    if let Some(rest) = s.strip_prefix(b"*/") {
        let (size, _) = digits(rest)?;
        return Some((-1, -1, size));
    }
    let (start, n) = digits(s)?;
    let s = s.get(n..)?.strip_prefix(b"-")?;
    let (end, n) = digits(s)?;
    let s = s.get(n..)?.strip_prefix(b"/")?;
    let size = if s.first() == Some(&b'*') {
        -1
    } else {
        digits(s)?.0
    };
    Some((start, end, size))
}

/// Whether Suricata flags a Content-Range as `range_invalid` when it opens the body as a
/// ranged file: unparsable, or start after end, or end past the size.
pub(crate) fn range_invalid(v: &[u8]) -> bool {
    match content_range(v) {
        None => true,
        Some((start, end, size)) => {
            if end <= 0 || size <= 0 || (end == size - 1 && start == 0) {
                false
            } else {
                start > end || end > size - 1
            }
        }
    }
}

/// C `strtoul(s, NULL, 10)`, which Suricata 7 applies to the status token for `status`.
fn strtoul(s: &[u8]) -> u64 {
    let mut i = 0;
    while s.get(i).is_some_and(|&c| super::util::is_space(c)) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: u64 = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(c - b'0')))
        {
            Some(n) => v = n,
            None => return u64::MAX,
        }
        i += 1;
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// Value truncated at the first NUL (EVE copies into C strings).
fn cstr(v: &[u8], max: usize) -> &[u8] {
    let v = v.get(..max.min(v.len())).unwrap_or(v);
    match memchr::memchr(0, v) {
        Some(i) => v.get(..i).unwrap_or(v),
        None => v,
    }
}

/// Writes the EVE `http` object's fields (without the enclosing `"http": {}`).
pub fn write_eve_http(tx: &HttpTx, opts: &EveHttpOptions, out: &mut dyn EveOut) {
    if let Some(h) = tx.hostname() {
        out.str("hostname", h);
    }
    if tx.port >= 0 {
        out.uint("http_port", tx.port as u64);
    }
    if let Some(u) = tx.uri_raw() {
        out.str("url", u);
    }
    if let Some(ua) = tx.req_headers.get(b"user-agent").filter(|v| !v.is_empty()) {
        out.str("http_user_agent", ua);
    }
    if let Some(x) = tx
        .req_headers
        .get(b"x-forwarded-for")
        .filter(|v| !v.is_empty())
    {
        out.str("xff", x);
    }
    if let Some(ct) = tx
        .resp_headers
        .get(b"content-type")
        .filter(|v| !v.is_empty())
    {
        let ct = cstr(ct, usize::MAX);
        let end = memchr::memchr(b';', ct).unwrap_or(ct.len());
        out.str("http_content_type", ct.get(..end).unwrap_or(ct));
    }
    if let Some(cr) = tx.resp_headers.get(b"content-range") {
        out.open_object("content_range");
        out.str("raw", cr);
        if let Some((s, e, z)) = content_range(cr) {
            if s >= 0 {
                out.uint("start", s as u64);
            }
            if e >= 0 {
                out.uint("end", e as u64);
            }
            if z >= 0 {
                out.uint("size", z as u64);
            }
        }
        out.close();
    }
    if opts.extended {
        if let Some(r) = tx.req_headers.get(b"referer").filter(|v| !v.is_empty()) {
            out.str("http_refer", r);
        }
        if let Some(m) = tx.method() {
            out.str("http_method", m);
        }
        if let Some(p) = tx.request_protocol() {
            out.str("protocol", p);
        }
        if let Some(s) = tx.status() {
            out.uint("status", strtoul(s));
        }
        if let Some(l) = tx.resp_headers.get(b"location").filter(|v| !v.is_empty()) {
            out.str("redirect", l);
        }
        out.uint("length", tx.resp_message_len);
    }
    for (on, key, table) in [
        (opts.request_headers, "request_headers", &tx.req_headers),
        (opts.response_headers, "response_headers", &tx.resp_headers),
    ] {
        // Every header (`dump-all-headers`), or those `custom` names; an empty list is
        // left out.
        if !(on || opts.custom != 0) {
            continue;
        }
        let mut open = false;
        for (n, v) in table.iter() {
            if !on && !custom_logs(opts, n) {
                continue;
            }
            if !open {
                out.open_array(key);
                open = true;
            }
            out.start_item();
            out.str("name", cstr(n, MAX_NAME));
            out.str("value", cstr(v, MAX_VALUE));
            out.close();
        }
        if open {
            out.close();
        }
    }
}

/// Writes straight into the EVE JSON writer (its byte strings are escaped as Suricata's).
impl EveOut for shrike_output::JsonWriter {
    fn str(&mut self, key: &str, value: &[u8]) {
        self.set_bytes(key, value);
    }
    fn uint(&mut self, key: &str, value: u64) {
        self.set_u64(key, value);
    }
    fn open_object(&mut self, key: &str) {
        shrike_output::JsonWriter::open_object(self, key);
    }
    fn open_array(&mut self, key: &str) {
        shrike_output::JsonWriter::open_array(self, key);
    }
    fn start_item(&mut self) {
        self.start_object();
    }
    fn close(&mut self) {
        shrike_output::JsonWriter::close(self);
    }
}

impl HttpState {
    /// Writes the EVE `http` object of transaction `tx_id` as the member `"http"` of the
    /// object `w` is in; false if the transaction does not exist.
    pub fn write_eve_json(
        &self,
        tx_id: u64,
        opts: &EveHttpOptions,
        w: &mut shrike_output::JsonWriter,
    ) -> bool {
        let Some(tx) = self.tx(tx_id) else {
            return false;
        };
        w.open_object("http");
        write_eve_http(tx, opts, w);
        w.close();
        true
    }

    /// Writes the EVE `http` fields of transaction `tx_id`; false if it does not exist.
    pub fn write_eve(&self, tx_id: u64, opts: &EveHttpOptions, out: &mut dyn EveOut) -> bool {
        match self.tx(tx_id) {
            Some(tx) => {
                write_eve_http(tx, opts, out);
                true
            }
            None => false,
        }
    }
}

/// A minimal JSON rendering of [`EveOut`] calls, for tests and debugging (strings are
/// escaped byte-wise: printable ASCII as is, the rest as `\u00XX`).
#[derive(Debug, Default)]
pub struct EveJson {
    /// The JSON text.
    pub out: String,
    first: Vec<bool>,
    closers: Vec<char>,
}

impl EveJson {
    /// Starts an object.
    pub fn new() -> EveJson {
        EveJson {
            out: "{".to_string(),
            first: vec![true],
            closers: vec!['}'],
        }
    }

    /// Closes everything and returns the text.
    pub fn finish(mut self) -> String {
        while let Some(c) = self.closers.pop() {
            self.out.push(c);
        }
        self.out
    }

    fn sep(&mut self) {
        if let Some(f) = self.first.last_mut() {
            if !*f {
                self.out.push(',');
            }
            *f = false;
        }
    }

    fn key(&mut self, k: &str) {
        self.sep();
        self.out.push('"');
        self.out.push_str(k);
        self.out.push_str("\":");
    }

    fn string(&mut self, v: &[u8]) {
        self.out.push('"');
        for chunk in v.utf8_chunks() {
            for ch in chunk.valid().chars() {
                if (ch as u32) >= 0x80 {
                    self.out.push(ch);
                } else {
                    self.byte(ch as u8);
                }
            }
            for &b in chunk.invalid() {
                self.byte(b);
            }
        }
        self.out.push('"');
    }

    fn byte(&mut self, b: u8) {
        {
            match b {
                b'"' => self.out.push_str("\\\""),
                b'\\' => self.out.push_str("\\\\"),
                b'\t' => self.out.push_str("\\t"),
                b'\n' => self.out.push_str("\\n"),
                b'\r' => self.out.push_str("\\r"),
                0x20..=0x7e => self.out.push(b as char),
                0x00..=0x1f => self.out.push_str(&format!("\\u{:04x}", b)),
                // Suricata writes other bytes as the four characters `\xHH`.
                _ => self.out.push_str(&format!("\\\\x{:02x}", b)),
            }
        }
    }
}

impl EveOut for EveJson {
    fn str(&mut self, key: &str, value: &[u8]) {
        self.key(key);
        self.string(value);
    }
    fn uint(&mut self, key: &str, value: u64) {
        self.key(key);
        self.out.push_str(&value.to_string());
    }
    fn open_object(&mut self, key: &str) {
        self.key(key);
        self.out.push('{');
        self.first.push(true);
        self.closers.push('}');
    }
    fn open_array(&mut self, key: &str) {
        self.key(key);
        self.out.push('[');
        self.first.push(true);
        self.closers.push(']');
    }
    fn start_item(&mut self) {
        self.sep();
        self.out.push('{');
        self.first.push(true);
        self.closers.push('}');
    }
    fn close(&mut self) {
        if self.closers.len() > 1 {
            self.first.pop();
            if let Some(c) = self.closers.pop() {
                self.out.push(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(content_range(b"bytes 0-1/10"), Some((0, 1, 10)));
        assert_eq!(content_range(b"bytes */10"), Some((-1, -1, 10)));
        assert_eq!(content_range(b"bytes 5-9/*"), Some((5, 9, -1)));
        assert_eq!(content_range(b"junk"), None);
        assert_eq!(content_range(b"bytes 0--5/*"), None);
        assert!(range_invalid(b"bytes 0--5/*"));
        assert!(range_invalid(b"bytes 9-5/100"));
        assert!(range_invalid(b"bytes 5-100/100"));
        assert!(!range_invalid(b"bytes 5-99/100"));
        assert_eq!(strtoul(b"2X0"), 2);
        assert_eq!(strtoul(b"abc"), 0);
        assert_eq!(strtoul(b" 404"), 404);
    }

    #[test]
    fn custom_names_pick_headers() {
        let c = custom_fields(["content_range", "Server", "referer", "bogus"]);
        assert_eq!(c.count_ones(), 3);
        let mut o = EveHttpOptions {
            custom: c,
            ..EveHttpOptions::default()
        };
        assert!(custom_logs(&o, b"Content-Range"));
        assert!(custom_logs(&o, b"server"));
        assert!(!custom_logs(&o, b"date"));
        // `referer` is an extended field: not logged twice.
        assert!(custom_logs(&o, b"Referer"));
        o.extended = true;
        assert!(!custom_logs(&o, b"Referer"));
    }
}
