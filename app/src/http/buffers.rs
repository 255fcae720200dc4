//! Sticky buffers: what each Suricata HTTP keyword inspects, per transaction and direction.

use super::headers::HeaderTable;
use super::parser::{di, HttpState};
use super::tx::{Body, HttpTx, MethodKind, Progress};
use crate::Dir;

/// The HTTP buffers rules can inspect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpBuffer {
    /// `http.uri`: normalised request URI (path decoded and cleaned, query decoded once).
    Uri,
    /// `http.uri.raw`: request URI as sent.
    UriRaw,
    /// `http.method`.
    Method,
    /// `http.protocol`: protocol of the request or status line (per direction).
    Protocol,
    /// `http.request_line`: request line without CRLF.
    RequestLine,
    /// `http.response_line`: status line without CRLF.
    ResponseLine,
    /// `http.start`: start line + CRLF + every header as `Name: Value\r\n` + CRLF.
    Start,
    /// `http.host`: hostname (from an absolute URI, else the Host header; see module doc).
    Host,
    /// `http.host.raw`: URI hostname if the URI has one, else the raw Host header value.
    HostRaw,
    /// `http.user_agent`.
    UserAgent,
    /// `http.cookie`: Cookie (to server) or Set-Cookie (to client) value.
    Cookie,
    /// `http.header`: headers as `Name: Value\r\n`, Cookie/Set-Cookie left out.
    Header,
    /// `http.header.raw`: header block as sent, line endings and final empty line kept.
    HeaderRaw,
    /// `http.header_names`: `\r\n` + each name + `\r\n` ... + `\r\n`.
    HeaderNames,
    /// `http.request_header`: one `Name: Value` per header (multi-buffer, to server).
    RequestHeader,
    /// `http.response_header`: one `Name: Value` per header (multi-buffer, to client).
    ResponseHeader,
    /// `http.stat_code`: status code token.
    StatCode,
    /// `http.stat_msg`: reason phrase.
    StatMsg,
    /// `http.content_type`: Content-Type value (per direction).
    ContentType,
    /// `http.content_len`: Content-Length value (per direction).
    ContentLen,
    /// `http.server`.
    Server,
    /// `http.location`.
    Location,
    /// `http.referer`.
    Referer,
    /// `http.accept`.
    Accept,
    /// `http.accept_enc`.
    AcceptEnc,
    /// `http.accept_lang`.
    AcceptLang,
    /// `http.connection`.
    Connection,
    /// `http.request_body`: de-chunked, decompressed request body (up to the limit).
    RequestBody,
    /// `http.response_body`: de-chunked, decompressed response body (up to the limit).
    ResponseBody,
    /// `file.data`: the response body to client; a PUT body to server.
    FileData,
    /// `file.name` (and the legacy `filename` / `fileext`): the name of the transaction's
    /// file in the inspected direction, once the file is open.
    FileName,
}

impl HttpBuffer {
    /// Every buffer.
    pub const ALL: &'static [HttpBuffer] = &[
        HttpBuffer::Uri,
        HttpBuffer::UriRaw,
        HttpBuffer::Method,
        HttpBuffer::Protocol,
        HttpBuffer::RequestLine,
        HttpBuffer::ResponseLine,
        HttpBuffer::Start,
        HttpBuffer::Host,
        HttpBuffer::HostRaw,
        HttpBuffer::UserAgent,
        HttpBuffer::Cookie,
        HttpBuffer::Header,
        HttpBuffer::HeaderRaw,
        HttpBuffer::HeaderNames,
        HttpBuffer::RequestHeader,
        HttpBuffer::ResponseHeader,
        HttpBuffer::StatCode,
        HttpBuffer::StatMsg,
        HttpBuffer::ContentType,
        HttpBuffer::ContentLen,
        HttpBuffer::Server,
        HttpBuffer::Location,
        HttpBuffer::Referer,
        HttpBuffer::Accept,
        HttpBuffer::AcceptEnc,
        HttpBuffer::AcceptLang,
        HttpBuffer::Connection,
        HttpBuffer::RequestBody,
        HttpBuffer::ResponseBody,
        HttpBuffer::FileData,
        HttpBuffer::FileName,
    ];

    /// The buffer a rule keyword selects (sticky-buffer names and legacy modifiers).
    pub fn from_keyword(k: &str) -> Option<HttpBuffer> {
        Some(match k {
            "http.uri" | "http_uri" | "uricontent" => HttpBuffer::Uri,
            "http.uri.raw" | "http_raw_uri" => HttpBuffer::UriRaw,
            "http.method" | "http_method" => HttpBuffer::Method,
            "http.protocol" | "http_protocol" => HttpBuffer::Protocol,
            "http.request_line" | "http_request_line" => HttpBuffer::RequestLine,
            "http.response_line" | "http_response_line" => HttpBuffer::ResponseLine,
            "http.start" | "http_start" => HttpBuffer::Start,
            "http.host" | "http_host" => HttpBuffer::Host,
            "http.host.raw" | "http_raw_host" => HttpBuffer::HostRaw,
            "http.user_agent" | "http_user_agent" => HttpBuffer::UserAgent,
            "http.cookie" | "http_cookie" => HttpBuffer::Cookie,
            "http.header" | "http_header" => HttpBuffer::Header,
            "http.header.raw" | "http_raw_header" => HttpBuffer::HeaderRaw,
            "http.header_names" | "http_header_names" => HttpBuffer::HeaderNames,
            "http.request_header" => HttpBuffer::RequestHeader,
            "http.response_header" => HttpBuffer::ResponseHeader,
            "http.stat_code" | "http_stat_code" => HttpBuffer::StatCode,
            "http.stat_msg" | "http_stat_msg" => HttpBuffer::StatMsg,
            "http.content_type" | "http_content_type" => HttpBuffer::ContentType,
            "http.content_len" | "http_content_len" => HttpBuffer::ContentLen,
            "http.server" => HttpBuffer::Server,
            "http.location" => HttpBuffer::Location,
            "http.referer" | "http_referer" => HttpBuffer::Referer,
            "http.accept" | "http_accept" => HttpBuffer::Accept,
            "http.accept_enc" | "http_accept_enc" => HttpBuffer::AcceptEnc,
            "http.accept_lang" | "http_accept_lang" => HttpBuffer::AcceptLang,
            "http.connection" | "http_connection" => HttpBuffer::Connection,
            "http.request_body" | "http_client_body" => HttpBuffer::RequestBody,
            "http.response_body" | "http_server_body" => HttpBuffer::ResponseBody,
            "file.data" | "file_data" => HttpBuffer::FileData,
            "file.name" => HttpBuffer::FileName,
            _ => return None,
        })
    }

    /// Whether the buffer yields several items (iterate with `for_each_buffer`).
    pub fn is_multi(self) -> bool {
        matches!(self, HttpBuffer::RequestHeader | HttpBuffer::ResponseHeader)
    }

    /// The only direction the buffer exists in, if it is one-sided.
    pub fn direction(self) -> Option<Dir> {
        use HttpBuffer::*;
        match self {
            Uri | UriRaw | Method | RequestLine | Host | HostRaw | UserAgent | RequestHeader
            | Referer | Accept | AcceptEnc | AcceptLang | RequestBody => Some(Dir::ToServer),
            ResponseLine | ResponseHeader | StatCode | StatMsg | Server | Location
            | ResponseBody => Some(Dir::ToClient),
            // `http.connection` is both ways in Suricata 7 (`KEYWORD_TOSERVER` and
            // `KEYWORD_TOCLIENT` in detect-http-connection.c), as content type and length.
            Protocol | Start | Cookie | Header | HeaderRaw | HeaderNames | ContentType
            | ContentLen | Connection | FileData | FileName => None,
        }
    }

    /// Transaction progress (of the buffer's direction) from which the buffer is final.
    pub fn min_progress(self) -> Progress {
        use HttpBuffer::*;
        match self {
            Uri | UriRaw | Method | Protocol | RequestLine | ResponseLine | StatCode | StatMsg => {
                Progress::Headers
            }
            RequestBody | ResponseBody | FileData => Progress::Body,
            _ => Progress::Body,
        }
    }
}

fn headers_done(tx: &HttpTx, dir: Dir) -> bool {
    tx.progress(dir) > Progress::Headers
}

fn table(tx: &HttpTx, dir: Dir) -> &HeaderTable {
    match dir {
        Dir::ToServer => &tx.req_headers,
        Dir::ToClient => &tx.resp_headers,
    }
}

fn build_header(t: &HeaderTable, dir: Dir) -> Vec<u8> {
    let skip: &[u8] = match dir {
        Dir::ToServer => b"cookie",
        Dir::ToClient => b"set-cookie",
    };
    let mut out = Vec::new();
    for (n, v) in t.iter() {
        if n.eq_ignore_ascii_case(skip) {
            continue;
        }
        out.extend_from_slice(n);
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn build_start(line: &[u8], t: &HeaderTable) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 2 + t.arena_len() + 4 * t.len() + 2);
    out.extend_from_slice(line);
    out.extend_from_slice(b"\r\n");
    for (n, v) in t.iter() {
        out.extend_from_slice(n);
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    if !t.is_empty() {
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn build_names(t: &HeaderTable) -> Vec<u8> {
    let mut out = Vec::new();
    if t.is_empty() {
        return out;
    }
    out.extend_from_slice(b"\r\n");
    for (n, _) in t.iter() {
        out.extend_from_slice(n);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn nonempty(b: &[u8]) -> Option<&[u8]> {
    (!b.is_empty()).then_some(b)
}

impl HttpState {
    /// The bytes `which` inspects on transaction `tx_id` in direction `dir`, or `None` when
    /// the buffer does not exist (yet). Multi-buffers return their first item.
    pub fn buffer(&self, tx_id: u64, which: HttpBuffer, dir: Dir) -> Option<&[u8]> {
        let tx = self.tx(tx_id)?;
        tx_buffer(tx, which, dir)
    }

    /// Calls `f` with each item of `which` (once for single buffers) until `f` returns true.
    /// Returns whether `f` returned true.
    pub fn for_each_buffer(
        &self,
        tx_id: u64,
        which: HttpBuffer,
        dir: Dir,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> bool {
        let Some(tx) = self.tx(tx_id) else {
            return false;
        };
        match which {
            HttpBuffer::RequestHeader | HttpBuffer::ResponseHeader => {
                let want = if which == HttpBuffer::RequestHeader {
                    Dir::ToServer
                } else {
                    Dir::ToClient
                };
                if dir != want || tx.progress(dir) < Progress::Headers {
                    return false;
                }
                let mut item = Vec::new();
                for (n, v) in table(tx, dir).iter() {
                    item.clear();
                    item.extend_from_slice(n);
                    item.extend_from_slice(b": ");
                    item.extend_from_slice(v);
                    if f(&item) {
                        return true;
                    }
                }
                false
            }
            // Each file of a multipart form is its own `file.data` item, the kept bytes
            // of its part; `file.name` has one item per file.
            HttpBuffer::FileData if dir == Dir::ToServer && tx.req_body.multipart.is_some() => {
                let b = &tx.req_body;
                b.multipart.iter().flat_map(|m| m.parts.iter()).any(|p| {
                    let d = b.range(p.start, p.end);
                    !p.file.is_pruned() && !d.is_empty() && f(d)
                })
            }
            HttpBuffer::FileName => {
                let b = match dir {
                    Dir::ToServer => &tx.req_body,
                    Dir::ToClient => &tx.resp_body,
                };
                b.files().any(|file| !file.is_pruned() && f(file.name()))
            }
            HttpBuffer::RequestBody | HttpBuffer::ResponseBody | HttpBuffer::FileData => self
                .inspect_body(tx, which, dir)
                .map(|(b, min, win)| b.window(min, win))
                .filter(|w| !w.is_empty())
                .is_some_and(f),
            _ => tx_buffer(tx, which, dir).is_some_and(f),
        }
    }

    /// The body a body buffer reads on `tx` in `dir`, with the direction's minimal inspect
    /// size and inspect window.
    fn inspect_body<'a>(
        &self,
        tx: &'a HttpTx,
        which: HttpBuffer,
        dir: Dir,
    ) -> Option<(&'a Body, u64, u64)> {
        use HttpBuffer::*;
        let d = match which {
            RequestBody => Dir::ToServer,
            ResponseBody => Dir::ToClient,
            // To the server, `file.data` is the request's files: the body of a PUT or of a
            // POST that is a file; a multipart form's readiness follows its body.
            FileData
                if dir == Dir::ToServer
                    && tx.method_kind != MethodKind::Put
                    && tx.req_body.file.is_none()
                    && tx.req_body.file_name.is_none()
                    && tx.req_body.multipart.is_none() =>
            {
                return None
            }
            FileData => dir,
            _ => return None,
        };
        Some(self.dir_body(tx, d))
    }

    /// The body of `tx` in direction `d` with that direction's minimal inspect size and
    /// inspect window.
    fn dir_body<'a>(&self, tx: &'a HttpTx, d: Dir) -> (&'a Body, u64, u64) {
        let c = &self.cfg;
        match d {
            Dir::ToServer => (
                &tx.req_body,
                c.request_body_minimal_inspect_size,
                c.request_body_inspect_window,
            ),
            Dir::ToClient => (
                &tx.resp_body,
                c.response_body_minimal_inspect_size,
                c.response_body_inspect_window,
            ),
        }
    }

    /// Whether body buffer `which` of `tx_id` has something to inspect in `dir` now: the
    /// body reached the minimal inspect size (or its limit, or its end) and grew since
    /// detection's last round on it. `complete` bodies always do (their final round).
    pub fn body_ready(&self, tx_id: u64, which: HttpBuffer, dir: Dir, complete: bool) -> bool {
        let Some(tx) = self.tx(tx_id) else {
            return false;
        };
        let Some((b, min, _)) = self.inspect_body(tx, which, dir) else {
            return complete;
        };
        complete || (b.inspectable(min) && b.kept_end() > b.inspected.get())
    }

    /// Detection finished a round on `tx_id` in `dir`: later rounds on its body inspect
    /// what arrives after now (plus the window).
    pub fn note_body_inspected(&self, tx_id: u64, dir: Dir) {
        let Some(tx) = self.tx(tx_id) else {
            return;
        };
        let (b, min, win) = self.dir_body(tx, dir);
        let len = b.kept_end();
        if b.inspectable(min) {
            b.inspected.set(len);
            // Later windows start at most `win` before this point.
            if len > min {
                b.releasable.set(len - win.min(len));
            }
        }
    }
}

impl Body {
    /// Enough is buffered to inspect (the minimal inspect size, the limit or the end).
    fn inspectable(&self, min: u64) -> bool {
        self.complete || self.truncated || self.kept_end() >= min
    }

    /// What a detection round inspects (Suricata's `HttpServerBodyGetDataCallback`): all of
    /// it the first time; afterwards the bytes that arrived since the last round plus
    /// enough before them to make `win` bytes (a quarter window when more than `win` is new).
    pub(crate) fn window(&self, min: u64, win: u64) -> &[u8] {
        let len = self.kept_end();
        let done = self.inspected.get().min(len);
        let mut off = 0;
        if done > min {
            let new = len - done;
            off = if new < win {
                done.saturating_sub(win - new)
            } else {
                done - win / 4
            };
        }
        let rel = usize::try_from(off.saturating_sub(self.base)).unwrap_or(usize::MAX);
        self.data.get(rel..).unwrap_or(&[])
    }
}

/// Buffer lookup on one transaction.
pub fn tx_buffer(tx: &HttpTx, which: HttpBuffer, dir: Dir) -> Option<&[u8]> {
    use HttpBuffer::*;
    if let Some(only) = which.direction() {
        if only != dir {
            return None;
        }
    }
    let req = &tx.req_headers;
    let resp = &tx.resp_headers;
    match which {
        Uri => tx.uri_normalized(),
        UriRaw => tx.uri_raw(),
        Method => tx.method(),
        Protocol => match dir {
            Dir::ToServer => tx.request_protocol(),
            Dir::ToClient => tx.response_protocol(),
        },
        RequestLine => tx.request_line(),
        ResponseLine => tx.response_line(),
        Start => {
            if !headers_done(tx, dir) {
                return None;
            }
            let line = match dir {
                Dir::ToServer => tx.request_line()?,
                Dir::ToClient => tx.response_line()?,
            };
            let cell = tx.cache.start.get(di(dir))?;
            Some(
                cell.get_or_init(|| build_start(line, table(tx, dir)))
                    .as_slice(),
            )
        }
        Host => tx.hostname(),
        HostRaw => match &tx.uri_host {
            Some(h) => Some(h.as_slice()),
            None => req.get(b"host"),
        },
        UserAgent => req.get(b"user-agent"),
        Cookie => match dir {
            Dir::ToServer => req.get(b"cookie"),
            Dir::ToClient => resp.get(b"set-cookie"),
        },
        Header => {
            if !headers_done(tx, dir) {
                return None;
            }
            let cell = tx.cache.header.get(di(dir))?;
            nonempty(cell.get_or_init(|| build_header(table(tx, dir), dir)))
        }
        HeaderRaw => {
            if !headers_done(tx, dir) {
                return None;
            }
            nonempty(match dir {
                Dir::ToServer => &tx.req_headers_raw,
                Dir::ToClient => &tx.resp_headers_raw,
            })
        }
        HeaderNames => {
            if !headers_done(tx, dir) {
                return None;
            }
            let cell = tx.cache.names.get(di(dir))?;
            nonempty(cell.get_or_init(|| build_names(table(tx, dir))))
        }
        RequestHeader | ResponseHeader => None,
        StatCode => tx.status(),
        StatMsg => tx.status_message(),
        ContentType => table(tx, dir).get(b"content-type"),
        ContentLen => table(tx, dir).get(b"content-length"),
        Server => resp.get(b"server"),
        Location => resp.get(b"location"),
        Referer => req.get(b"referer"),
        Accept => req.get(b"accept"),
        AcceptEnc => req.get(b"accept-encoding"),
        AcceptLang => req.get(b"accept-language"),
        Connection => table(tx, dir).get(b"connection"),
        RequestBody => nonempty(&tx.req_body.data),
        ResponseBody => nonempty(&tx.resp_body.data),
        FileName => match dir {
            Dir::ToServer => tx.req_body.file().map(|f| f.name()),
            Dir::ToClient => tx.resp_body.file().map(|f| f.name()),
        },
        FileData => match dir {
            Dir::ToClient => nonempty(&tx.resp_body.data),
            Dir::ToServer => {
                let b = &tx.req_body;
                if let Some(p) = b.multipart.as_deref().and_then(|m| m.parts.first()) {
                    nonempty(b.range(p.start, p.end))
                } else if tx.method_kind == MethodKind::Put
                    || b.file.is_some()
                    || b.file_name.is_some()
                {
                    nonempty(&b.data)
                } else {
                    None
                }
            }
        },
    }
}
