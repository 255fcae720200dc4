//! Request-line splitting, protocol tokens and Content-Encoding lists, as libhtp's generic
//! (IDS) personality reads them.

use super::decompress::Coding;
use super::tx::{Protocol, Span};
use super::util::{contains_nocase, eq_nocase, is_space};

/// Parses a protocol token strictly (`HTTP/1.1`, `HTTP/1.0`, `HTTP/0.9`).
pub(crate) fn parse_protocol(p: &[u8]) -> Protocol {
    match p {
        b"HTTP/1.1" => Protocol::V11,
        b"HTTP/1.0" => Protocol::V10,
        b"HTTP/0.9" => Protocol::V09,
        _ => Protocol::Invalid,
    }
}

fn span(start: usize, end: usize) -> Span {
    (start as u32, end as u32)
}

/// Splits a request line the way libhtp's generic parser does (IDS personality).
/// Returns (method, uri, protocol, events).
pub(crate) fn split_request_line(line: &[u8]) -> (Span, Option<Span>, Option<Span>, [bool; 3]) {
    let len = line.len();
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut pos = 0;
    // [leading whitespace, method delimiter, uri delimiter]
    let mut ev = [false; 3];
    while pos < len && is_space(at(pos)) {
        pos += 1;
    }
    if pos > 0 {
        ev[0] = true;
    }
    let mstart = pos;
    while pos < len && !is_space(at(pos)) {
        pos += 1;
    }
    let method = span(mstart, pos);
    while pos < len && is_space(at(pos)) {
        if at(pos) != b' ' {
            ev[1] = true;
        }
        pos += 1;
    }
    if pos == len {
        return (method, None, None, ev);
    }
    let start = pos;
    let mut bad = false;
    while pos < len && at(pos) != b' ' {
        if !bad && is_space(at(pos)) {
            bad = true;
        }
        pos += 1;
    }
    if bad && pos == len {
        pos = start;
        while pos < len && !is_space(at(pos)) {
            pos += 1;
        }
    }
    ev[2] = bad;
    let uri = span(start, pos);
    while pos < len && is_space(at(pos)) {
        pos += 1;
    }
    if pos == len {
        return (method, Some(uri), None, ev);
    }
    (method, Some(uri), Some(span(pos, len)), ev)
}

/// Content-Encoding tokens to decoders, outermost first; `None` when not decodable.
pub(crate) fn codings(
    ce: &[u8],
    layer_limit: u32,
    abnormal: &mut bool,
    too_many: &mut bool,
) -> Vec<Coding> {
    let mut v = Vec::new();
    let trimmed = super::util::trim(ce);
    // libhtp's fast path ignores NUL bytes in the value.
    let eq = super::util::eq_nocase_nozero;
    if eq(trimmed, b"gzip") || eq(trimmed, b"x-gzip") {
        v.push(Coding::Gzip);
    } else if eq(trimmed, b"deflate") || eq(trimmed, b"x-deflate") {
        v.push(Coding::Deflate);
    } else if eq_nocase(trimmed, b"identity")
        || eq_nocase(trimmed, b"inflate")
        || eq_nocase(trimmed, b"none")
    {
    } else {
        let mut layers = 0u32;
        for tok in ce.split(|&c| c == b',' || c == b' ') {
            if tok.is_empty() {
                continue;
            }
            layers += 1;
            if layer_limit != 0 && layers > layer_limit {
                *too_many = true;
                break;
            }
            if contains_nocase(tok, b"gzip") {
                if !(tok == b"gzip" || tok == b"x-gzip") {
                    *abnormal = true;
                }
                v.push(Coding::Gzip);
            } else if contains_nocase(tok, b"deflate") {
                if !(tok == b"deflate" || tok == b"x-deflate") {
                    *abnormal = true;
                }
                v.push(Coding::Deflate);
            } else if !(tok == b"inflate" || tok == b"none" || tok == b"identity") {
                *abnormal = true;
            }
        }
    }
    if layer_limit == 0 {
        v.clear();
    }
    v.truncate(layer_limit.max(1) as usize);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &[u8]) -> (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>) {
        let (m, u, p, _) = split_request_line(line);
        let g = |s: Span| line[s.0 as usize..s.1 as usize].to_vec();
        (g(m), u.map(g), p.map(g))
    }

    #[test]
    fn request_lines() {
        assert_eq!(
            parts(b"GET / HTTP/1.1"),
            (
                b"GET".to_vec(),
                Some(b"/".to_vec()),
                Some(b"HTTP/1.1".to_vec())
            )
        );
        assert_eq!(parts(b"GET /a b HTTP/1.1").2, Some(b"b HTTP/1.1".to_vec()));
        assert_eq!(parts(b"GET /t\tHTTP/1.1").1, Some(b"/t".to_vec()));
        assert_eq!(parts(b"GET /ts HTTP/1.1 ").2, Some(b"HTTP/1.1 ".to_vec()));
        assert_eq!(parts(b"  GET /lw HTTP/1.1").0, b"GET".to_vec());
        assert_eq!(parts(b"GET"), (b"GET".to_vec(), None, None));
        assert_eq!(
            parts(b"GET /nine"),
            (b"GET".to_vec(), Some(b"/nine".to_vec()), None)
        );
        assert_eq!(parts(b""), (b"".to_vec(), None, None));
    }

    #[test]
    fn content_encodings() {
        let (mut a, mut t) = (false, false);
        assert_eq!(codings(b"gzip", 2, &mut a, &mut t), vec![Coding::Gzip]);
        assert_eq!(
            codings(b"gzip, deflate", 2, &mut a, &mut t),
            vec![Coding::Gzip, Coding::Deflate]
        );
        assert!(!a && !t);
        assert_eq!(codings(b"gzip, gzip, gzip", 2, &mut a, &mut t).len(), 2);
        assert!(t);
        codings(b"br", 2, &mut a, &mut t);
        assert!(a);
    }
}
