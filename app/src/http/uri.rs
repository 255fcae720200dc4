//! Request URI parsing and the normalisation behind `http.uri`, plus Host/authority parsing
//! for `http.host`. Re-implemented after libhtp 0.5 with Suricata 7's settings: the IDS
//! personality (path `%uHHHH` decoding, `\` to `/`, encoded `/` decoded, `//` compressed,
//! UTF-8 folded to single bytes with a best-fit map) minus lower-casing, query string
//! URL-decoded once with `+` kept, invalid `%` escapes left as they are.

use super::bestfit::{bestfit, REPLACEMENT};
use super::host::{normalize_hostname, parse_hostport, parse_port, validate_hostname};

/// The components of a request URI as sent (libhtp's `parsed_uri_raw`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RawUri<'a> {
    pub scheme: Option<&'a [u8]>,
    pub username: Option<&'a [u8]>,
    pub password: Option<&'a [u8]>,
    pub hostname: Option<&'a [u8]>,
    pub port: Option<&'a [u8]>,
    pub path: Option<&'a [u8]>,
    pub query: Option<&'a [u8]>,
    pub fragment: Option<&'a [u8]>,
}

#[inline]
fn find(data: &[u8], c: u8) -> Option<usize> {
    memchr::memchr(c, data)
}

/// Splits a request URI the way libhtp does (no validation).
pub(crate) fn parse_uri(data: &[u8]) -> RawUri<'_> {
    let mut u = RawUri::default();
    if data.is_empty() {
        return u;
    }
    let mut pos = 0;
    if data.first() != Some(&b'/') {
        if let Some(colon) = find(data, b':') {
            u.scheme = data.get(..colon);
            pos = colon + 1;
        }
    }
    let at = |i: usize| data.get(i).copied();
    if u.scheme.is_some() && at(pos) == Some(b'/') && at(pos + 1) == Some(b'/') {
        if let Some(c) = at(pos + 2) {
            if c != b'/' {
                let start = pos + 2;
                let mut end = start;
                while let Some(c) = at(end) {
                    if c == b'?' || c == b'/' || c == b'#' {
                        break;
                    }
                    end += 1;
                }
                let auth = data.get(start..end).unwrap_or(&[]);
                let hostport = match find(auth, b'@') {
                    Some(atpos) => {
                        let cred = auth.get(..atpos).unwrap_or(&[]);
                        match find(cred, b':') {
                            Some(c) => {
                                u.username = cred.get(..c);
                                u.password = cred.get(c + 1..);
                            }
                            None => u.username = Some(cred),
                        }
                        auth.get(atpos + 1..).unwrap_or(&[])
                    }
                    None => auth,
                };
                if hostport.first() == Some(&b'[') {
                    match find(hostport, b']') {
                        None => u.hostname = Some(hostport),
                        Some(rb) => {
                            u.hostname = hostport.get(..=rb);
                            let rest = hostport.get(rb + 1..).unwrap_or(&[]);
                            if let Some(c) = find(rest, b':') {
                                u.port = rest.get(c + 1..);
                            }
                        }
                    }
                } else {
                    match find(hostport, b':') {
                        Some(c) => {
                            u.hostname = hostport.get(..c);
                            u.port = hostport.get(c + 1..);
                        }
                        None => u.hostname = Some(hostport),
                    }
                }
                pos = end;
            }
        }
    }
    let rest = data.get(pos..).unwrap_or(&[]);
    let pend = rest
        .iter()
        .position(|&c| c == b'?' || c == b'#')
        .unwrap_or(rest.len());
    u.path = rest.get(..pend);
    let rest = rest.get(pend..).unwrap_or(&[]);
    let frag_rest = if rest.first() == Some(&b'?') {
        let q = rest.get(1..).unwrap_or(&[]);
        let qend = find(q, b'#').unwrap_or(q.len());
        u.query = q.get(..qend);
        q.get(qend..).unwrap_or(&[])
    } else {
        rest
    };
    if frag_rest.first() == Some(&b'#') {
        u.fragment = frag_rest.get(1..);
    }
    u
}

#[inline]
fn hexval(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Two hex digits to a byte, when both are hex digits.
#[inline]
fn hex2(a: u8, b: u8) -> Option<u8> {
    Some(hexval(a)? << 4 | hexval(b)?)
}

/// `%uHHHH` at `d[i]` ('%') to a byte via best fit; `None` if not four hex digits.
fn u_escape(d: &[u8], i: usize) -> Option<u8> {
    let hi = hex2(*d.get(i + 2)?, *d.get(i + 3)?)?;
    let lo = hex2(*d.get(i + 4)?, *d.get(i + 5)?)?;
    Some(bestfit(u32::from(hi) << 8 | u32::from(lo)))
}

/// URL-decodes `d` in place and returns the new length. `%HH` is decoded; `%uHHHH` too when
/// `u_decode`; an invalid or truncated escape keeps its `%`. Flags invalid escapes in
/// `invalid`.
pub(crate) fn urldecode_in_place(d: &mut [u8], u_decode: bool, invalid: &mut bool) -> usize {
    let len = d.len();
    let (mut r, mut w) = (0usize, 0usize);
    while r < len {
        let Some(&c0) = d.get(r) else { break };
        let mut c = c0;
        if c0 == b'%' {
            if r + 2 < len {
                let mut handled = false;
                if u_decode && matches!(d.get(r + 1), Some(b'u' | b'U')) {
                    handled = true;
                    match (r + 5 < len).then(|| u_escape(d, r)).flatten() {
                        Some(b) => {
                            c = b;
                            r += 6;
                        }
                        None => {
                            *invalid = true;
                            r += 1;
                        }
                    }
                }
                if !handled {
                    match hex2(
                        d.get(r + 1).copied().unwrap_or(0),
                        d.get(r + 2).copied().unwrap_or(0),
                    ) {
                        Some(b) => {
                            c = b;
                            r += 3;
                        }
                        None => {
                            *invalid = true;
                            r += 1;
                        }
                    }
                }
            } else {
                *invalid = true;
                r += 1;
            }
        } else {
            r += 1;
        }
        if let Some(slot) = d.get_mut(w) {
            *slot = c;
        }
        w += 1;
    }
    w
}

/// Decodes a path in place the IDS way: `%HH` and `%uHHHH` decoded (encoded `/` too),
/// `\` turned into `/`, runs of `/` compressed. Returns the new length.
fn decode_path_in_place(d: &mut [u8], invalid: &mut bool) -> usize {
    let len = d.len();
    let (mut r, mut w) = (0usize, 0usize);
    let mut prev_sep = false;
    while r < len {
        let Some(&c0) = d.get(r) else { break };
        let mut c = c0;
        if c0 == b'%' {
            if r + 2 < len {
                if matches!(d.get(r + 1), Some(b'u' | b'U')) {
                    match (r + 5 < len).then(|| u_escape(d, r)).flatten() {
                        Some(b) => {
                            c = b;
                            r += 6;
                        }
                        None => {
                            *invalid = true;
                            r += 1;
                        }
                    }
                } else {
                    match hex2(
                        d.get(r + 1).copied().unwrap_or(0),
                        d.get(r + 2).copied().unwrap_or(0),
                    ) {
                        Some(b) => {
                            c = b;
                            r += 3;
                        }
                        None => {
                            *invalid = true;
                            r += 1;
                        }
                    }
                }
            } else {
                *invalid = true;
                r += 1;
            }
        } else {
            r += 1;
        }
        if c == b'\\' {
            c = b'/';
        }
        if c == b'/' {
            if prev_sep {
                continue;
            }
            prev_sep = true;
        } else {
            prev_sep = false;
        }
        if let Some(slot) = d.get_mut(w) {
            *slot = c;
        }
        w += 1;
    }
    w
}

/// Folds UTF-8 in place to one byte per character (best fit, overlong forms accepted).
/// Invalid sequences become `?`; an unfinished sequence at the end is dropped, as libhtp
/// does. Returns the new length.
fn utf8_bestfit_in_place(d: &mut [u8]) -> usize {
    let len = d.len();
    let (mut r, mut w) = (0usize, 0usize);
    // Remaining continuation bytes, the allowed range of the next one, the code point.
    let mut need = 0u8;
    let mut lo = 0x80u8;
    let mut hi = 0xbfu8;
    let mut cp = 0u32;
    let mut started = false;
    while r < len {
        let Some(&b) = d.get(r) else { break };
        let out: Option<u8>;
        if !started {
            match b {
                0x00..=0x7f => {
                    out = Some(b);
                    r += 1;
                }
                0xc0..=0xdf => {
                    started = true;
                    need = 1;
                    cp = u32::from(b & 0x1f);
                    (lo, hi) = (0x80, 0xbf);
                    r += 1;
                    out = None;
                }
                0xe0..=0xef => {
                    started = true;
                    need = 2;
                    cp = u32::from(b & 0x0f);
                    (lo, hi) = if b == 0xed {
                        (0x80, 0x9f)
                    } else {
                        (0x80, 0xbf)
                    };
                    r += 1;
                    out = None;
                }
                0xf0..=0xf4 => {
                    started = true;
                    need = 3;
                    cp = u32::from(b & 0x07);
                    (lo, hi) = if b == 0xf4 {
                        (0x80, 0x8f)
                    } else {
                        (0x80, 0xbf)
                    };
                    r += 1;
                    out = None;
                }
                _ => {
                    // Stray continuation byte or F5..FF: one replacement, byte consumed.
                    out = Some(REPLACEMENT);
                    r += 1;
                }
            }
        } else if (lo..=hi).contains(&b) {
            cp = cp << 6 | u32::from(b & 0x3f);
            need -= 1;
            (lo, hi) = (0x80, 0xbf);
            r += 1;
            if need == 0 {
                started = false;
                out = Some(bestfit(cp));
            } else {
                out = None;
            }
        } else {
            // Invalid continuation: one replacement, this byte starts over.
            started = false;
            out = Some(REPLACEMENT);
        }
        if let Some(o) = out {
            if let Some(slot) = d.get_mut(w) {
                *slot = o;
            }
            w += 1;
        }
    }
    w
}

/// RFC 3986 section 5.2.4 remove_dot_segments, in place (libhtp's variant).
fn remove_dot_segments(d: &mut [u8]) -> usize {
    let len = d.len();
    let (mut r, mut w) = (0usize, 0usize);
    let at = |d: &[u8], i: usize| d.get(i).copied();
    let mut c: Option<u8> = None;
    while r < len && w < len {
        let cc = match c {
            Some(x) => x,
            None => {
                let x = at(d, r).unwrap_or(0);
                r += 1;
                x
            }
        };
        c = Some(cc);
        if cc == b'.' {
            if r + 1 < len && at(d, r) == Some(b'.') && at(d, r + 1) == Some(b'/') {
                c = None;
                r += 2;
                continue;
            } else if r < len && at(d, r) == Some(b'/') {
                c = None;
                r += 1;
                continue;
            }
        }
        if cc == b'/' {
            if r + 1 < len && at(d, r) == Some(b'.') && at(d, r + 1) == Some(b'/') {
                r += 2;
                continue;
            } else if r + 1 == len && at(d, r) == Some(b'.') {
                r += 1;
                continue;
            }
            if r + 2 < len
                && at(d, r) == Some(b'.')
                && at(d, r + 1) == Some(b'.')
                && at(d, r + 2) == Some(b'/')
            {
                r += 3;
                while w > 0 && at(d, w - 1) != Some(b'/') {
                    w -= 1;
                }
                w = w.saturating_sub(1);
                continue;
            } else if r + 2 == len && at(d, r) == Some(b'.') && at(d, r + 1) == Some(b'.') {
                r += 2;
                while w > 0 && at(d, w - 1) != Some(b'/') {
                    w -= 1;
                }
                w = w.saturating_sub(1);
                continue;
            }
        }
        if cc == b'.' && r == len {
            r += 1;
            continue;
        }
        if cc == b'.' && r + 1 == len && at(d, r) == Some(b'.') {
            r += 2;
            continue;
        }
        if let Some(slot) = d.get_mut(w) {
            *slot = cc;
        }
        w += 1;
        while r < len && at(d, r) != Some(b'/') && w < len {
            let x = at(d, r).unwrap_or(0);
            if let Some(slot) = d.get_mut(w) {
                *slot = x;
            }
            w += 1;
            r += 1;
        }
        c = None;
    }
    w
}

/// Appends `src` to `out` and applies `f` to the appended part in place.
fn append_with(out: &mut Vec<u8>, src: &[u8], f: impl FnOnce(&mut [u8]) -> usize) {
    let start = out.len();
    out.extend_from_slice(src);
    let n = out.get_mut(start..).map_or(0, f);
    out.truncate(start + n);
}

/// What normalising a request URI learnt besides the `http.uri` bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UriInfo {
    /// Host from the URI, URL-decoded, lower-cased, trailing dots removed.
    pub hostname: Option<Vec<u8>>,
    /// Port from the URI: `Some(Some(p))` valid, `Some(None)` present but invalid.
    pub port: Option<Option<u16>>,
    /// The URI's host or port is invalid (`request_uri_host_invalid`).
    pub host_invalid: bool,
    /// An invalid `%` escape was seen (kept as is).
    pub invalid_encoding: bool,
    /// A second decoding pass (double-decode-path/query) shortened the path or query.
    pub double_encoded: bool,
    /// Where the decoded path lies in the output (libhtp's `parsed_uri->path`), when the
    /// URI has one.
    pub path: Option<(u32, u32)>,
}

/// Optional second decoding passes (Suricata's `double-decode-path` / `double-decode-query`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DoubleDecode {
    pub path: bool,
    pub query: bool,
}

/// Writes Suricata's normalised URI (`http.uri`) for `raw` into `out` (cleared first).
/// `connect` selects authority-form parsing (CONNECT), which yields an empty `http.uri`.
pub(crate) fn normalize(
    raw: &[u8],
    connect: bool,
    include_all: bool,
    double: DoubleDecode,
    out: &mut Vec<u8>,
) -> UriInfo {
    out.clear();
    let mut info = UriInfo::default();
    let parsed = if connect {
        let hp = parse_hostport(raw);
        RawUri {
            hostname: hp.hostname,
            port: hp.port,
            ..RawUri::default()
        }
    } else {
        parse_uri(raw)
    };
    let mut bad = false;
    if let Some(h) = parsed.hostname {
        let mut hv = h.to_vec();
        let n = urldecode_in_place(&mut hv, true, &mut bad);
        hv.truncate(n);
        normalize_hostname(&mut hv);
        if !validate_hostname(&hv) {
            info.host_invalid = true;
        }
        info.hostname = Some(hv);
    }
    if let Some(p) = parsed.port {
        let port = parse_port(p);
        if port.is_none() {
            info.host_invalid = true;
        }
        info.port = Some(port);
    }
    if include_all {
        if let Some(s) = parsed.scheme {
            let start = out.len();
            out.extend_from_slice(s);
            if let Some(t) = out.get_mut(start..) {
                t.make_ascii_lowercase();
            }
            out.extend_from_slice(b"://");
        }
        if parsed.username.is_some() || parsed.password.is_some() {
            if let Some(u) = parsed.username {
                append_with(out, u, |d| urldecode_in_place(d, true, &mut bad));
            }
            out.push(b':');
            if let Some(p) = parsed.password {
                append_with(out, p, |d| urldecode_in_place(d, true, &mut bad));
            }
            out.push(b'@');
        }
        if let Some(h) = &info.hostname {
            out.extend_from_slice(h);
        }
        if let Some(p) = parsed.port {
            out.push(b':');
            out.extend_from_slice(p);
        }
    }
    let mut twice = false;
    if let Some(path) = parsed.path {
        let start = out.len();
        append_with(out, path, |d| {
            let n = decode_path_in_place(d, &mut bad);
            let d = d.get_mut(..n).unwrap_or(&mut []);
            let n = utf8_bestfit_in_place(d);
            let d = d.get_mut(..n).unwrap_or(&mut []);
            let n = remove_dot_segments(d);
            if double.path {
                let d = d.get_mut(..n).unwrap_or(&mut []);
                let m = urldecode_in_place(d, false, &mut bad);
                twice |= m < n;
                return m;
            }
            n
        });
        info.path = Some((
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(out.len()).unwrap_or(u32::MAX),
        ));
    }
    if let Some(q) = parsed.query {
        out.push(b'?');
        append_with(out, q, |d| {
            let len = d.len();
            let mut start_len = len;
            if double.query {
                start_len = urldecode_in_place(d, false, &mut bad);
                twice |= start_len < len;
            }
            let d = d.get_mut(..start_len).unwrap_or(&mut []);
            urldecode_in_place(d, false, &mut bad)
        });
    }
    info.double_encoded = twice;
    if let Some(f) = parsed.fragment {
        out.push(b'#');
        append_with(out, f, |d| urldecode_in_place(d, true, &mut bad));
    }
    info.invalid_encoding = bad;
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        normalize(
            s.as_bytes(),
            false,
            false,
            DoubleDecode::default(),
            &mut out,
        );
        out
    }

    #[test]
    fn double_decoding() {
        let mut out = Vec::new();
        let dd = DoubleDecode {
            path: true,
            query: true,
        };
        let info = normalize(b"/a%2541?q=%2541", false, false, dd, &mut out);
        assert_eq!(out, b"/aA?q=A");
        assert!(info.double_encoded);
        let info = normalize(
            b"/a%2541?q=%2541",
            false,
            false,
            DoubleDecode::default(),
            &mut out,
        );
        assert_eq!(out, b"/a%41?q=%41");
        assert!(!info.double_encoded);
    }

    #[test]
    fn suricata_reference_uris() {
        // Expected values observed from Suricata 7.0.10 (libhtp 0.5.50, IDS personality).
        assert_eq!(
            norm("/a/b/../c/./d//e%41%2f?x=1+2%20&y#frag"),
            b"/a/c/d/eA/?x=1+2 &y#frag"
        );
        assert_eq!(
            norm("http://User:Pw@WWW.Abs.COM.:81/P%41th?q=%41"),
            b"/PAth?q=A"
        );
        assert_eq!(norm("*"), b"*");
        assert_eq!(norm(""), b"");
        assert_eq!(norm("/%zz%4"), b"/%zz%4");
        assert_eq!(norm("/a\\b"), b"/a/b");
        assert_eq!(norm("/%u0041%uff0f"), b"/A/");
        assert_eq!(norm("/caf%C3%A9"), b"/caf\xe9");
        let mut out = Vec::new();
        normalize(
            b"/caf\xe9x",
            false,
            false,
            DoubleDecode::default(),
            &mut out,
        );
        assert_eq!(out, b"/caf?x");
    }

    #[test]
    fn dot_segments() {
        for (i, o) in [
            ("/a/b/c/./../../g", "/a/g"),
            ("mid/content=5/../6", "mid/6"),
            ("/../x", "/x"),
            // libhtp drops a final "/." or "/.." entirely (verified against Suricata 7).
            ("/.", ""),
            ("/..", ""),
            ("/a/..", ""),
            ("/a/.", "/a"),
            ("/a/b/..", "/a"),
            (".", ""),
            ("..", ""),
            ("./a", "a"),
        ] {
            let mut v = i.as_bytes().to_vec();
            let n = remove_dot_segments(&mut v);
            assert_eq!(&v[..n], o.as_bytes(), "{i}");
        }
    }

    #[test]
    fn utf8_fold() {
        let mut v = b"/\xc3\xa9\xe9x\xc3".to_vec();
        let n = utf8_bestfit_in_place(&mut v);
        assert_eq!(&v[..n], b"/\xe9?x");
        let mut v = b"\xc0\xaf".to_vec(); // overlong '/'
        let n = utf8_bestfit_in_place(&mut v);
        assert_eq!(&v[..n], b"/");
    }
}
