//! Protocol detection for HTTP/1.x on any port: a request method followed by a space or tab
//! (to server), or `HTTP/0.9|1.0|1.1` (to client), at the start of the stream, matched
//! case-insensitively like Suricata's HTTP detection patterns.

use crate::Dir;

/// Outcome of probing the first bytes of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeResult {
    /// This is HTTP/1.x.
    Yes,
    /// This is not HTTP/1.x.
    No,
    /// Too few bytes to tell.
    NeedMore,
}

/// Methods Suricata registers detection patterns for.
const METHODS: &[&[u8]] = &[
    b"GET",
    b"PUT",
    b"POST",
    b"HEAD",
    b"TRACE",
    b"OPTIONS",
    b"CONNECT",
    b"DELETE",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
    b"CHECKOUT",
    b"UNCHECKOUT",
    b"CHECKIN",
    b"UPDATE",
    b"LABEL",
    b"REPORT",
    b"MKWORKSPACE",
    b"MKACTIVITY",
    b"MERGE",
    b"INVALID",
    b"VERSION-CONTROL",
    b"BASELINE-CONTROL",
];

const VERSIONS: &[&[u8]] = &[b"HTTP/0.9", b"HTTP/1.0", b"HTTP/1.1"];

/// Compares `data` with `pat` case-insensitively: `Some(true)` full match, `Some(false)`
/// mismatch, `None` when `data` is a proper prefix of `pat`.
fn cmp_prefix(data: &[u8], pat: &[u8]) -> Option<bool> {
    let n = data.len().min(pat.len());
    if !data.get(..n)?.eq_ignore_ascii_case(pat.get(..n)?) {
        return Some(false);
    }
    if data.len() < pat.len() {
        None
    } else {
        Some(true)
    }
}

/// Probes the start of a stream in direction `dir`.
pub fn probe(dir: Dir, data: &[u8]) -> ProbeResult {
    let mut need_more = false;
    match dir {
        Dir::ToServer => {
            for m in METHODS {
                match cmp_prefix(data, m) {
                    Some(false) => {}
                    None => need_more = true,
                    Some(true) => match data.get(m.len()) {
                        Some(b' ') | Some(b'\t') => return ProbeResult::Yes,
                        Some(_) => {}
                        None => need_more = true,
                    },
                }
            }
        }
        Dir::ToClient => {
            for v in VERSIONS {
                match cmp_prefix(data, v) {
                    Some(true) => return ProbeResult::Yes,
                    None => need_more = true,
                    Some(false) => {}
                }
            }
        }
    }
    if need_more {
        ProbeResult::NeedMore
    } else {
        ProbeResult::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(Dir, &[u8], ProbeResult)] = &[
            (Dir::ToServer, b"GET / HTTP/1.1\r\n", ProbeResult::Yes),
            (Dir::ToServer, b"get\t/", ProbeResult::Yes),
            (Dir::ToServer, b"POST", ProbeResult::NeedMore),
            (Dir::ToServer, b"PO", ProbeResult::NeedMore),
            (Dir::ToServer, b"", ProbeResult::NeedMore),
            (Dir::ToServer, b"GETX / HTTP/1.1", ProbeResult::No),
            (Dir::ToServer, b"\x16\x03\x01\x02\x00", ProbeResult::No),
            (Dir::ToServer, b"SSH-2.0-OpenSSH", ProbeResult::No),
            (Dir::ToServer, b"PROPFIND /x", ProbeResult::Yes),
            (Dir::ToClient, b"HTTP/1.1 200 OK", ProbeResult::Yes),
            (Dir::ToClient, b"http/1.0 404", ProbeResult::Yes),
            (Dir::ToClient, b"HTTP/1", ProbeResult::NeedMore),
            (Dir::ToClient, b"HTTP/2.0 200", ProbeResult::No),
            (Dir::ToClient, b"220 smtp", ProbeResult::No),
        ];
        for (d, data, want) in cases {
            assert_eq!(
                probe(*d, data),
                *want,
                "{:?} {:?}",
                d,
                String::from_utf8_lossy(data)
            );
        }
    }
}
