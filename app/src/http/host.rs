//! Host and authority parsing for `http.host`: libhtp's `htp_parse_hostport` and hostname
//! validation, with the quirks Suricata 7 shows (a Host value with a port is neither
//! lower-cased nor stripped of a trailing dot).

use super::util::{is_space, parse_int_lws, trim};

#[inline]
fn find(data: &[u8], c: u8) -> Option<usize> {
    memchr::memchr(c, data)
}

/// Parses a port string (LWS allowed, 1..=65535).
pub(crate) fn parse_port(p: &[u8]) -> Option<u16> {
    match parse_int_lws(p, 10) {
        Some(v) if (1..=65535).contains(&v) => u16::try_from(v).ok(),
        _ => None,
    }
}

pub(crate) fn normalize_hostname(h: &mut Vec<u8>) {
    h.make_ascii_lowercase();
    while h.last() == Some(&b'.') {
        h.pop();
    }
}

/// libhtp's `htp_validate_hostname`: LDH labels (plus `_`), 1..=63 bytes each, single dots,
/// at most 255 bytes; `[...]` must hold an IPv6 address.
pub(crate) fn validate_hostname(h: &[u8]) -> bool {
    if h.is_empty() || h.len() > 255 {
        return false;
    }
    if h.first() == Some(&b'[') {
        if h.len() < 2 || h.len() - 2 >= 46 {
            return false;
        }
        let inner = h.get(1..h.len() - 1).unwrap_or(&[]);
        return std::str::from_utf8(inner)
            .ok()
            .and_then(|s| s.parse::<std::net::Ipv6Addr>().ok())
            .is_some();
    }
    let mut pos = 0;
    while pos < h.len() {
        let start = pos;
        while let Some(&c) = h.get(pos) {
            if c == b'.' {
                break;
            }
            if !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
                return false;
            }
            pos += 1;
        }
        let l = pos - start;
        if l == 0 || l > 63 {
            return false;
        }
        if pos >= h.len() {
            return true;
        }
        let dots = h
            .get(pos..)
            .unwrap_or(&[])
            .iter()
            .take_while(|&&c| c == b'.')
            .count();
        if dots != 1 {
            return false;
        }
        pos += dots;
    }
    true
}

/// A parsed `host[:port]` authority (Host header value or CONNECT target).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HostPort<'a> {
    /// Host as sent (trimmed); `lower` tells whether libhtp lower-cases it.
    pub hostname: Option<&'a [u8]>,
    /// libhtp lower-cases the host only when no port follows it.
    pub lower: bool,
    /// Port string after the colon, if any.
    pub port: Option<&'a [u8]>,
    /// Valid port number, if a valid one was given.
    pub port_number: Option<u16>,
    /// Some part is invalid (`request_header_host_invalid` for the Host header).
    pub invalid: bool,
}

/// libhtp's `htp_parse_hostport`.
pub(crate) fn parse_hostport(value: &[u8]) -> HostPort<'_> {
    let mut r = HostPort::default();
    let data = trim(value);
    if data.is_empty() {
        r.invalid = true;
        return r;
    }
    let port_part = |r: &mut HostPort<'_>, p: &'_ [u8]| {
        let n = parse_port(p);
        if n.is_none() {
            r.invalid = true;
        }
        n
    };
    if data.first() == Some(&b'[') {
        let Some(rb) = find(data, b']') else {
            r.invalid = true;
            return r;
        };
        r.hostname = data.get(..=rb);
        let rest = data.get(rb + 1..).unwrap_or(&[]);
        match rest.first() {
            None => {}
            Some(b':') => {
                let p = rest.get(1..).unwrap_or(&[]);
                r.port = Some(p);
                r.port_number = port_part(&mut r, p);
            }
            Some(_) => r.invalid = true,
        }
    } else {
        match find(data, b':') {
            None => {
                r.hostname = Some(data);
                r.lower = true;
            }
            Some(colon) => {
                let mut hend = colon;
                while hend > 0 && data.get(hend - 1).is_some_and(|&c| is_space(c)) {
                    hend -= 1;
                }
                r.hostname = data.get(..hend);
                let p = data.get(colon + 1..).unwrap_or(&[]);
                r.port = Some(p);
                r.port_number = port_part(&mut r, p);
            }
        }
    }
    if let Some(h) = r.hostname {
        let ok = if r.lower {
            validate_hostname(&h.to_ascii_lowercase())
        } else {
            validate_hostname(h)
        };
        if !ok {
            r.invalid = true;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostport() {
        let h = parse_hostport(b"WWW.Example.COM.:8080");
        assert_eq!(h.hostname, Some(&b"WWW.Example.COM."[..]));
        assert!(!h.lower);
        assert_eq!(h.port_number, Some(8080));
        assert!(!h.invalid);
        let h = parse_hostport(b"x.com:abc");
        assert!(h.invalid);
        assert_eq!(h.port_number, None);
        let h = parse_hostport(b"[::1]:80");
        assert_eq!(h.hostname, Some(&b"[::1]"[..]));
        assert!(!h.invalid);
        assert!(parse_hostport(b"a b.com").invalid);
        assert!(parse_hostport(b"").invalid);
        assert!(validate_hostname(b"www.example.com."));
        assert!(!validate_hostname(b"a..b"));
    }
}
