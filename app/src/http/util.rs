//! Byte-level helpers shared by the HTTP parser: character classes and the lenient number
//! parsers libhtp uses (Content-Length, chunk sizes, ports, status codes).

/// Linear white space: space or horizontal tab.
#[inline]
pub(crate) fn is_lws(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// C `isspace()`: space, `\t`, `\n`, `\v`, `\f`, `\r`.
#[inline]
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// RFC 2616 separators.
#[inline]
fn is_separator(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')'
            | b'<'
            | b'>'
            | b'@'
            | b','
            | b';'
            | b':'
            | b'\\'
            | b'"'
            | b'/'
            | b'['
            | b']'
            | b'?'
            | b'='
            | b'{'
            | b'}'
            | b' '
            | b'\t'
    )
}

/// RFC 2616 token character (printable ASCII that is not a separator).
#[inline]
pub(crate) fn is_token(c: u8) -> bool {
    (32..=126).contains(&c) && !is_separator(c)
}

/// Removes trailing line terminators (any run of LF, each optionally preceded by CR).
pub(crate) fn chomp(mut data: &[u8]) -> &[u8] {
    while let Some((&b'\n', rest)) = data.split_last() {
        data = rest;
        if let Some((&b'\r', rest)) = data.split_last() {
            data = rest;
        }
    }
    data
}

/// Removes every trailing CR and LF (response lines, which a lone CR may end).
pub(crate) fn chomp_all(data: &[u8]) -> &[u8] {
    let end = data
        .iter()
        .rposition(|&c| c != b'\r' && c != b'\n')
        .map_or(0, |p| p + 1);
    data.get(..end).unwrap_or(&[])
}

/// ASCII case-insensitive equality that skips NUL bytes in `a` (libhtp's
/// `bstr_cmp_c_nocasenorzero`).
pub(crate) fn eq_nocase_nozero(a: &[u8], b: &[u8]) -> bool {
    let mut it = a.iter().filter(|&&c| c != 0);
    for &y in b {
        match it.next() {
            Some(&x) if x.eq_ignore_ascii_case(&y) => {}
            _ => return false,
        }
    }
    it.next().is_none()
}

/// ASCII case-insensitive substring search that skips NUL bytes in `hay` (libhtp's
/// `bstr_index_of_c_nocasenorzero`).
pub(crate) fn contains_nocase_nozero(hay: &[u8], needle: &[u8]) -> bool {
    if !hay.contains(&0) {
        return contains_nocase(hay, needle);
    }
    let filtered: Vec<u8> = hay.iter().copied().filter(|&c| c != 0).collect();
    contains_nocase(&filtered, needle)
}

/// Trims C `isspace()` characters from both ends.
pub(crate) fn trim(data: &[u8]) -> &[u8] {
    let start = data
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(data.len());
    let end = data
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |p| p + 1);
    data.get(start..end).unwrap_or(&[])
}

/// Parses digits of `base` from the start of `data` (libhtp's `bstr_util_mem_to_pint`).
/// Returns the value and the number of digit bytes, `None` when there is no digit or on
/// overflow.
pub(crate) fn mem_to_pint(data: &[u8], base: u32) -> Option<(u64, usize)> {
    let mut val: u64 = 0;
    let mut n = 0;
    for &c in data {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' => u32::from(c - b'a') + 10,
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => break,
        };
        if d >= base {
            break;
        }
        val = val
            .checked_mul(u64::from(base))?
            .checked_add(u64::from(d))?;
        if val > i64::MAX as u64 {
            return None;
        }
        n += 1;
    }
    if n == 0 {
        None
    } else {
        Some((val, n))
    }
}

/// A positive integer with optional LWS before and after, nothing else
/// (libhtp's `htp_parse_positive_integer_whitespace`).
pub(crate) fn parse_int_lws(data: &[u8], base: u32) -> Option<u64> {
    let start = data.iter().position(|&c| !is_lws(c))?;
    let rest = data.get(start..)?;
    let (v, n) = mem_to_pint(rest, base)?;
    if rest.get(n..)?.iter().all(|&c| is_lws(c)) {
        Some(v)
    } else {
        None
    }
}

/// Content-Length as libhtp 0.5 reads it: junk before the first digit and after the last is
/// tolerated (`junk` reports whether non-LWS junk was seen).
pub(crate) fn parse_content_length(data: &[u8]) -> Option<u64> {
    let start = data.iter().position(|c| c.is_ascii_digit())?;
    let (v, _) = mem_to_pint(data.get(start..)?, 10)?;
    Some(v)
}

/// Result of parsing a chunk-size line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkLen {
    /// The line holds only CR/LF/whitespace: libhtp skips such lines.
    Empty,
    /// A valid length; `ext` is set when a `;` chunk extension follows.
    Len { len: u64, ext: bool },
    /// No hexadecimal digits or a length above `i32::MAX`.
    Invalid,
}

/// Parses a chunk-size line the lenient libhtp 0.5 way: leading control whitespace skipped,
/// hex digits read, trailing junk (extensions) ignored.
pub(crate) fn parse_chunk_len(line: &[u8]) -> ChunkLen {
    let start = line
        .iter()
        .position(|&c| !matches!(c, b'\r' | b'\n' | b' ' | b'\t' | 0x0b | 0x0c));
    let Some(start) = start else {
        return ChunkLen::Empty;
    };
    let data = line.get(start..).unwrap_or(&[]);
    let digits = data.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let ext = data.get(digits..).is_some_and(|rest| rest.contains(&b';'));
    match mem_to_pint(data.get(..digits).unwrap_or(&[]), 16) {
        Some((v, _)) if v <= i32::MAX as u64 => ChunkLen::Len { len: v, ext },
        _ => ChunkLen::Invalid,
    }
}

/// ASCII case-insensitive equality.
#[inline]
pub(crate) fn eq_nocase(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// ASCII case-insensitive substring search.
pub(crate) fn contains_nocase(hay: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Appends `src` to `dst` but never lets `dst` grow past `limit` bytes; returns how many
/// bytes were dropped.
pub(crate) fn push_bounded(dst: &mut Vec<u8>, src: &[u8], limit: usize) -> usize {
    let room = limit.saturating_sub(dst.len());
    let n = room.min(src.len());
    dst.extend_from_slice(src.get(..n).unwrap_or(&[]));
    src.len() - n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chomp_and_trim() {
        assert_eq!(chomp(b"abc\r\n"), b"abc");
        assert_eq!(chomp(b"abc\n\r\n"), b"abc");
        assert_eq!(chomp(b"abc\r"), b"abc\r");
        assert_eq!(chomp(b"\r\n"), b"");
        assert_eq!(chomp_all(b"abc\r"), b"abc");
        assert_eq!(chomp_all(b"abc\n\r\r\n"), b"abc");
        assert_eq!(chomp_all(b"\r\n"), b"");
        assert!(eq_nocase_nozero(b"gz\0IP", b"gzip"));
        assert!(eq_nocase_nozero(b"\0gzip\0", b"gzip"));
        assert!(!eq_nocase_nozero(b"gzipx", b"gzip"));
        assert!(!eq_nocase_nozero(b"gzi", b"gzip"));
        assert!(contains_nocase_nozero(b"chu\0nked", b"chunked"));
        assert!(!contains_nocase_nozero(b"chu nked", b"chunked"));
        assert_eq!(trim(b"  a b \t"), b"a b");
        assert_eq!(trim(b"   "), b"");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_int_lws(b" 80 ", 10), Some(80));
        assert_eq!(parse_int_lws(b"8 0", 10), None);
        assert_eq!(parse_int_lws(b"", 10), None);
        assert_eq!(parse_content_length(b"  12  "), Some(12));
        assert_eq!(parse_content_length(b"x12y"), Some(12));
        assert_eq!(parse_content_length(b"abc"), None);
        assert_eq!(parse_content_length(b"99999999999999999999999"), None);
        assert_eq!(
            parse_chunk_len(b"1a;ext=1"),
            ChunkLen::Len { len: 26, ext: true }
        );
        assert_eq!(
            parse_chunk_len(b"  0"),
            ChunkLen::Len { len: 0, ext: false }
        );
        assert_eq!(parse_chunk_len(b"\r\n"), ChunkLen::Empty);
        assert_eq!(parse_chunk_len(b"zz"), ChunkLen::Invalid);
        assert_eq!(parse_chunk_len(b"ffffffffff"), ChunkLen::Invalid);
    }

    #[test]
    fn bounded_push() {
        let mut v = b"ab".to_vec();
        assert_eq!(push_bounded(&mut v, b"cdef", 4), 2);
        assert_eq!(v, b"abcd");
    }
}
