//! The HTTP/1 sticky buffers on HTTP/2 transactions, as Suricata 7 builds them from the
//! decoded headers (`rust/src/http2/detect.rs`: `:path` for `http.uri`, `:authority`
//! normalised for `http.host`, `name: value\r\n` lines for `http.header`, request and
//! response lines rebuilt as `GET /x HTTP/2`...). Message bodies are not kept: `file.data`
//! and the body buffers do not match on HTTP/2 (see docs/compat.md).

use super::hpack::Block;
use super::{Http2State, Tx};
use crate::http::HttpBuffer;
use crate::Dir;

impl Tx {
    /// Every header block (all kinds, as Suricata's `http2_header_blocks`) of `dir`.
    fn all_blocks(&self, dir: Dir) -> impl Iterator<Item = &Block> {
        self.frames(dir).iter().flat_map(|f| f.data.blocks().iter())
    }

    /// The value of header `name` in `dir`; several are joined with `, `.
    fn header_value(&self, dir: Dir, name: &[u8]) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        for b in self.headers(dir).filter(|b| b.name == name) {
            match &mut out {
                None => out = Some(b.value.clone()),
                Some(v) => {
                    v.extend_from_slice(b", ");
                    v.extend_from_slice(&b.value);
                }
            }
        }
        out
    }
}

fn normalize_host(v: &[u8]) -> Vec<u8> {
    let v = match v.iter().position(|&c| c == b'@') {
        Some(i) => &v[i + 1..],
        None => v,
    };
    let v = match v.iter().position(|&c| c == b':') {
        Some(i) => &v[..i],
        None => v,
    };
    v.to_ascii_lowercase()
}

fn trim_spaces(v: &[u8]) -> &[u8] {
    let s = v
        .iter()
        .position(|c| *c != b' ' && *c != b'\t')
        .unwrap_or(v.len());
    let e = v
        .iter()
        .rposition(|c| *c != b' ' && *c != b'\t')
        .map_or(s, |e| e + 1);
    &v[s..e.max(s)]
}

impl Http2State {
    /// Whether HTTP buffer `h` of transaction `tx` can be inspected (`Some(final)`).
    pub fn http_ready(&self, tx: u64, _h: HttpBuffer, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        Some(closed || t.complete())
    }

    /// Call `f` with each item of HTTP buffer `h` of transaction `tx` (inspected going
    /// `dir`) until it returns true; returns whether it did.
    pub fn http_buffer(
        &self,
        tx: u64,
        h: HttpBuffer,
        dir: Dir,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        let first = |d: Dir, n: &[u8]| t.header(d, n).map(<[u8]>::to_vec);
        let ts = Dir::ToServer;
        let tc = Dir::ToClient;
        let one = match h {
            HttpBuffer::Uri | HttpBuffer::UriRaw => first(ts, b":path"),
            HttpBuffer::Method => first(ts, b":method"),
            HttpBuffer::Host => t
                .header_value(ts, b":authority")
                .map(|v| normalize_host(&v)),
            HttpBuffer::HostRaw => t.header_value(ts, b":authority"),
            HttpBuffer::UserAgent => t.header_value(ts, b"user-agent"),
            HttpBuffer::StatCode => first(tc, b":status"),
            // always empty on HTTP/2 (Suricata gives an empty buffer)
            HttpBuffer::StatMsg => Some(Vec::new()),
            HttpBuffer::Protocol => Some(b"HTTP/2".to_vec()),
            HttpBuffer::Cookie => match dir {
                Dir::ToServer => t.header_value(ts, b"cookie"),
                Dir::ToClient => t.header_value(tc, b"set-cookie"),
            },
            HttpBuffer::RequestLine => {
                let mut v = first(ts, b":method").unwrap_or_default();
                v.push(b' ');
                v.extend(first(ts, b":path").unwrap_or_default());
                v.extend_from_slice(b" HTTP/2\r\n");
                Some(v)
            }
            HttpBuffer::ResponseLine => {
                let mut v = b"HTTP/2 ".to_vec();
                v.extend(first(tc, b":status").unwrap_or_default());
                v.extend_from_slice(b"\r\n");
                Some(v)
            }
            HttpBuffer::Header | HttpBuffer::HeaderRaw => {
                let raw = h == HttpBuffer::HeaderRaw;
                let cookie: &[u8] = if dir == ts { b"cookie" } else { b"set-cookie" };
                let mut v = Vec::new();
                for b in t.all_blocks(dir) {
                    if !raw && b.name.eq_ignore_ascii_case(cookie) {
                        continue;
                    }
                    v.extend_from_slice(&b.name);
                    v.extend_from_slice(b": ");
                    v.extend_from_slice(if raw { &b.value } else { trim_spaces(&b.value) });
                    v.extend_from_slice(b"\r\n");
                }
                (!v.is_empty()).then_some(v)
            }
            HttpBuffer::HeaderNames => {
                let mut v = b"\r\n".to_vec();
                for b in t.all_blocks(dir) {
                    v.extend_from_slice(&b.name);
                    v.extend_from_slice(b"\r\n");
                }
                (v.len() > 2).then(|| {
                    v.extend_from_slice(b"\r\n");
                    v
                })
            }
            HttpBuffer::RequestHeader | HttpBuffer::ResponseHeader => {
                let d = if h == HttpBuffer::RequestHeader {
                    ts
                } else {
                    tc
                };
                let mut line = Vec::new();
                return t.all_blocks(d).any(|b| {
                    line.clear();
                    line.extend_from_slice(&b.name);
                    line.extend_from_slice(b": ");
                    line.extend_from_slice(&b.value);
                    f(&line)
                });
            }
            HttpBuffer::ContentType => t.header_value(dir, b"content-type"),
            HttpBuffer::ContentLen => t.header_value(dir, b"content-length"),
            HttpBuffer::Server => t.header_value(tc, b"server"),
            HttpBuffer::Location => t.header_value(tc, b"location"),
            HttpBuffer::Referer => t.header_value(ts, b"referer"),
            HttpBuffer::Accept => t.header_value(ts, b"accept"),
            HttpBuffer::AcceptEnc => t.header_value(ts, b"accept-encoding"),
            HttpBuffer::AcceptLang => t.header_value(ts, b"accept-language"),
            HttpBuffer::Connection => t.header_value(dir, b"connection"),
            HttpBuffer::RequestBody => Some(t.bodies[0].clone()).filter(|b| !b.is_empty()),
            HttpBuffer::ResponseBody => Some(t.bodies[1].clone()).filter(|b| !b.is_empty()),
            HttpBuffer::FileData => {
                let b = &t.bodies[usize::from(dir == Dir::ToClient)];
                Some(b.clone()).filter(|b| !b.is_empty())
            }
            _ => None,
        };
        one.is_some_and(|v| f(&v))
    }
}
