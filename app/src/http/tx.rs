//! One HTTP transaction (a request and its response) and its progress.

use std::cell::OnceCell;

use super::decompress::Decoder;
use super::events::{HttpEvent, HttpEvents};
use super::headers::HeaderTable;

/// Progress of one side of a transaction, numbered as libhtp/Suricata number it
/// (`HTP_REQUEST_*` / `HTP_RESPONSE_*`), so rule inspection can use the same thresholds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Progress {
    /// Nothing seen yet.
    #[default]
    NotStarted = 0,
    /// Reading the request or status line.
    Line = 1,
    /// Reading headers.
    Headers = 2,
    /// Reading the body (headers complete).
    Body = 3,
    /// Reading chunked trailers.
    Trailer = 4,
    /// Done.
    Complete = 5,
}

/// Protocol version on a request or status line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protocol {
    /// Not seen (yet).
    #[default]
    Unknown,
    /// Present but not `HTTP/0.9`, `HTTP/1.0` or `HTTP/1.1` exactly.
    Invalid,
    /// HTTP/0.9 (also: request line without protocol).
    V09,
    /// HTTP/1.0.
    V10,
    /// HTTP/1.1.
    V11,
}

/// Request methods the parser treats specially (libhtp recognises more; those are `Known`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MethodKind {
    /// Not a method libhtp knows.
    #[default]
    Unknown,
    /// GET.
    Get,
    /// HEAD (response has no body).
    Head,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// CONNECT (tunnel).
    Connect,
    /// Another method known to libhtp.
    Known,
}

impl MethodKind {
    /// Classifies a method token (case-sensitive, as libhtp).
    pub fn of(m: &[u8]) -> MethodKind {
        match m {
            b"GET" => MethodKind::Get,
            b"HEAD" => MethodKind::Head,
            b"POST" => MethodKind::Post,
            b"PUT" => MethodKind::Put,
            b"CONNECT" => MethodKind::Connect,
            b"DELETE" | b"OPTIONS" | b"TRACE" | b"PATCH" | b"PROPFIND" | b"PROPPATCH"
            | b"MKCOL" | b"COPY" | b"MOVE" | b"LOCK" | b"UNLOCK" | b"VERSION-CONTROL"
            | b"CHECKOUT" | b"UNCHECKOUT" | b"CHECKIN" | b"UPDATE" | b"LABEL" | b"REPORT"
            | b"MKWORKSPACE" | b"MKACTIVITY" | b"BASELINE-CONTROL" | b"MERGE" | b"INVALID" => {
                MethodKind::Known
            }
            _ => MethodKind::Unknown,
        }
    }
}

/// How a message body is delimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransferCoding {
    /// Not determined yet.
    #[default]
    Unknown,
    /// No body.
    NoBody,
    /// Content-Length or until close.
    Identity,
    /// Chunked.
    Chunked,
    /// Headers made the body length undeterminable.
    Invalid,
}

/// A body kept for inspection: de-chunked and decoded, at most the configured limit. Bytes
/// detection will not look at again (before its inspect window) are released as more
/// arrive, as Suricata prunes its body chunks: `data` starts at body offset `base`.
#[derive(Debug, Default)]
pub struct Body {
    pub(crate) data: Vec<u8>,
    /// Body offset of `data[0]`.
    pub(crate) base: u64,
    /// Detection no longer needs the bytes before this body offset.
    pub(crate) releasable: std::cell::Cell<u64>,
    /// Decoded bytes seen, kept or not.
    pub(crate) total: u64,
    pub(crate) truncated: bool,
    pub(crate) gap: bool,
    pub(crate) complete: bool,
    /// Bytes of `data` detection had when it last inspected this body (Suricata's
    /// `body_inspected`): later rounds inspect the new bytes plus a window before them.
    pub(crate) inspected: std::cell::Cell<u64>,
    /// The body as a file (Suricata's HTTP file tracking): opened on the first decoded
    /// byte when [`Self::file_name`] is set.
    pub(crate) file: Option<Box<crate::files::TrackedFile>>,
    /// The name the body's file gets, set once the transaction is known to carry one.
    pub(crate) file_name: Option<Vec<u8>>,
    /// The files of a `multipart/form-data` request body.
    pub(crate) multipart: Option<Box<super::multipart::Multipart>>,
    /// Whether the body's files were decided (named, multipart, or none).
    pub(crate) files_decided: bool,
    /// A `filestore` rule matched the transaction (Suricata's `HTP_STREAM_DEPTH_SET`): its
    /// files are no longer cut at the body limit.
    pub(crate) depth_set: bool,
    /// The body is a part of a larger file (`Content-Range`): its range and the key of the
    /// file in the byte-range reassembly (none without a host), used when the file opens.
    pub(crate) range_part: Option<(crate::file_range::ContentRange, Option<Vec<u8>>)>,
    /// This part's share in the reassembly of the whole file.
    pub(crate) range: Option<Box<crate::file_range::Block>>,
    /// The whole file, when this part completed it (Suricata adds it to the transaction).
    pub(crate) ranged: Option<Box<crate::files::TrackedFile>>,
}

impl Body {
    /// The kept bytes (from body offset [`Self::kept_from`]).
    pub fn data(&self) -> &[u8] {
        &self.data
    }
    /// Body offset of the first kept byte (earlier ones were inspected and released).
    pub fn kept_from(&self) -> u64 {
        self.base
    }
    /// Body offset just past the last kept byte.
    pub(crate) fn kept_end(&self) -> u64 {
        self.base + self.data.len() as u64
    }
    /// Release what detection no longer needs (called before appending). Small releases
    /// wait, so the kept bytes are not moved on every packet.
    pub(crate) fn release_inspected(&mut self) {
        let to = self.releasable.get().min(self.kept_end());
        if to < self.base + 16 * 1024 {
            return;
        }
        let n = usize::try_from(to - self.base).unwrap_or(0);
        self.data.drain(..n.min(self.data.len()));
        self.base = to;
        if self.data.capacity() > 2 * self.data.len() + 16 * 1024 {
            self.data.shrink_to(self.data.len() + 8 * 1024);
        }
    }
    /// Decoded bytes seen in total (kept or not).
    pub fn total_len(&self) -> u64 {
        self.total
    }
    /// Whether bytes past the limit were dropped.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }
    /// Whether part of the body was lost to a stream gap.
    pub fn had_gap(&self) -> bool {
        self.gap
    }
    /// Whether the body ended.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
    /// The body's file, once opened (the first of a multipart form's files).
    pub fn file(&self) -> Option<&crate::files::TrackedFile> {
        self.files().next()
    }
    /// The body's files: the body itself, or each file of a multipart form.
    pub fn files(&self) -> impl Iterator<Item = &crate::files::TrackedFile> {
        self.file
            .as_deref()
            .into_iter()
            .chain(self.ranged.as_deref())
            .chain(self.multipart.iter().flat_map(|m| m.files()))
    }
    /// Each of the body's files, mutable.
    pub(crate) fn for_each_file_mut(&mut self, f: &mut dyn FnMut(&mut crate::files::TrackedFile)) {
        if let Some(x) = self.file.as_deref_mut() {
            f(x);
        }
        if let Some(x) = self.ranged.as_deref_mut() {
            f(x);
        }
        if let Some(m) = self.multipart.as_deref_mut() {
            for p in m.parts.iter_mut() {
                f(&mut p.file);
            }
        }
    }

    /// Ends the body's files: cut short when `truncated`.
    pub(crate) fn close_file(&mut self, truncated: bool) {
        if let Some(f) = self.file.as_deref_mut() {
            f.close(truncated);
        }
        // The part ended: the whole file when it completed it (Suricata's
        // `HTPFileCloseHandleRange`, after the part's own close).
        if let Some(mut b) = self.range.take() {
            if let Some(w) = b.close(truncated) {
                self.ranged = Some(w);
            }
        }
        if let Some(m) = self.multipart.as_deref_mut() {
            if truncated {
                m.truncate();
            } else {
                m.finish();
            }
        }
    }
    /// The kept bytes at body offsets `start..end` (a multipart file's data).
    pub(crate) fn range(&self, start: u64, end: u64) -> &[u8] {
        let a = start.max(self.base).min(self.kept_end());
        let b = end.max(a).min(self.kept_end());
        let a = usize::try_from(a - self.base).unwrap_or(usize::MAX);
        let b = usize::try_from(b - self.base).unwrap_or(usize::MAX);
        self.data.get(a..b).unwrap_or(&[])
    }
    fn clear(&mut self) {
        self.file = None;
        self.file_name = None;
        self.multipart = None;
        self.files_decided = false;
        self.data.clear();
        self.total = 0;
        self.truncated = false;
        self.gap = false;
        self.complete = false;
        self.inspected.set(0);
        self.base = 0;
        self.releasable.set(0);
    }
}

/// Largest buffer capacity a pooled transaction keeps.
const POOL_BUF_KEEP: usize = 4096;

/// Byte range inside a line buffer.
pub(crate) type Span = (u32, u32);

pub(crate) fn span_of(buf: &[u8], s: Option<Span>) -> Option<&[u8]> {
    s.and_then(|(a, b)| buf.get(a as usize..b as usize))
}

/// Lazily built composite buffers (header blocks), per direction.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    pub header: [OnceCell<Vec<u8>>; 2],
    pub start: [OnceCell<Vec<u8>>; 2],
    pub names: [OnceCell<Vec<u8>>; 2],
}

impl Cache {
    pub(crate) fn reset(&mut self, d: usize) {
        if let Some(c) = self.header.get_mut(d) {
            c.take();
        }
        if let Some(c) = self.start.get_mut(d) {
            c.take();
        }
        if let Some(c) = self.names.get_mut(d) {
            c.take();
        }
    }
}

/// The events Suricata raises from libhtp's request flags and auth type
/// (`HTPErrorCheckTxRequestFlags`), in its order.
pub(crate) const CHECK_EVENTS: [HttpEvent; 7] = [
    HttpEvent::InvalidTransferEncodingValueInRequest,
    HttpEvent::InvalidContentLengthFieldInRequest,
    HttpEvent::MissingHostHeader,
    HttpEvent::HostHeaderAmbiguous,
    HttpEvent::RequestUriHostInvalid,
    HttpEvent::RequestHeaderHostInvalid,
    HttpEvent::RequestAuthUnrecognized,
];

/// One request/response pair.
#[derive(Debug, Default)]
pub struct HttpTx {
    pub(crate) id: u64,
    pub(crate) req_progress: Progress,
    pub(crate) resp_progress: Progress,
    pub(crate) events: HttpEvents,
    /// Events already reported in EVE `anomaly` records.
    pub(crate) events_logged: HttpEvents,
    /// How many times Suricata's `HTPErrorCheckTxRequestFlags` added each of
    /// [`CHECK_EVENTS`] (it runs after the request line, on each flush of request header
    /// data and when the request completes, adding every flag set then: duplicates).
    pub(crate) check_counts: [u8; CHECK_EVENTS.len()],
    /// Of those, how many were reported in `anomaly` records.
    pub(crate) check_logged: [u8; CHECK_EVENTS.len()],

    // Request.
    pub(crate) request_line: Vec<u8>,
    pub(crate) has_request_line: bool,
    pub(crate) method: Option<Span>,
    pub(crate) uri: Option<Span>,
    pub(crate) protocol: Option<Span>,
    pub(crate) method_kind: MethodKind,
    pub(crate) req_proto: Protocol,
    pub(crate) is_09: bool,
    /// Synthetic URI for a response without request.
    pub(crate) uri_override: Option<&'static [u8]>,
    pub(crate) uri_norm: Vec<u8>,
    pub(crate) has_uri_norm: bool,
    /// The decoded path inside `uri_norm`.
    pub(crate) uri_path: Option<Span>,
    pub(crate) uri_host: Option<Vec<u8>>,
    pub(crate) uri_port: Option<Option<u16>>,
    pub(crate) hostname: Option<Vec<u8>>,
    /// libhtp's `request_port_number`: 0 until headers are processed, -1 for none.
    pub(crate) port: i32,
    pub(crate) req_headers: HeaderTable,
    pub(crate) req_headers_raw: Vec<u8>,
    pub(crate) req_coding: TransferCoding,
    pub(crate) req_content_length: Option<u64>,
    pub(crate) req_message_len: u64,
    pub(crate) req_body: Body,
    pub(crate) req_decoder: Option<Decoder>,
    pub(crate) req_has_trailer: bool,

    // Response.
    pub(crate) response_line: Vec<u8>,
    pub(crate) has_response_line: bool,
    pub(crate) resp_protocol: Option<Span>,
    pub(crate) status: Option<Span>,
    pub(crate) message: Option<Span>,
    pub(crate) resp_proto: Protocol,
    /// Parsed status: the leading digits of the status token, -1 when none.
    pub(crate) status_number: i32,
    pub(crate) resp_headers: HeaderTable,
    pub(crate) resp_headers_raw: Vec<u8>,
    pub(crate) resp_coding: TransferCoding,
    pub(crate) resp_content_length: Option<u64>,
    pub(crate) resp_message_len: u64,
    pub(crate) resp_body: Body,
    pub(crate) resp_decoder: Option<Decoder>,
    pub(crate) resp_has_trailer: bool,
    pub(crate) seen_100: bool,

    pub(crate) cache: Cache,
}

impl HttpTx {
    /// Resets for reuse under a new id, keeping allocations.
    pub(crate) fn reset(&mut self, id: u64) {
        let mut keep = std::mem::take(self);
        *self = HttpTx {
            id,
            port: 0,
            status_number: -1,
            ..HttpTx::default()
        };
        keep.request_line.clear();
        keep.uri_norm.clear();
        keep.req_headers.clear();
        keep.req_headers_raw.clear();
        keep.req_body.clear();
        keep.response_line.clear();
        keep.resp_headers.clear();
        keep.resp_headers_raw.clear();
        keep.resp_body.clear();
        self.request_line = keep.request_line;
        self.uri_norm = keep.uri_norm;
        self.req_headers = keep.req_headers;
        self.req_headers_raw = keep.req_headers_raw;
        self.req_body = keep.req_body;
        self.response_line = keep.response_line;
        self.resp_headers = keep.resp_headers;
        self.resp_headers_raw = keep.resp_headers_raw;
        self.resp_body = keep.resp_body;
    }

    /// Releases buffers too large to be worth keeping in the per-flow reuse pool (a body
    /// of a large download would otherwise stay allocated for the life of the flow).
    pub(crate) fn trim_for_pool(&mut self) {
        fn trim(v: &mut Vec<u8>) {
            if v.capacity() > POOL_BUF_KEEP {
                *v = Vec::new();
            }
        }
        trim(&mut self.req_body.data);
        trim(&mut self.resp_body.data);
        trim(&mut self.req_headers_raw);
        trim(&mut self.resp_headers_raw);
        trim(&mut self.request_line);
        trim(&mut self.response_line);
        trim(&mut self.uri_norm);
        self.req_headers.trim(POOL_BUF_KEEP);
        self.resp_headers.trim(POOL_BUF_KEEP);
        self.req_decoder = None;
        self.resp_decoder = None;
        self.cache = Cache::default();
    }

    /// Transaction id (0 for the first on a flow).
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Request progress.
    pub fn request_progress(&self) -> Progress {
        self.req_progress
    }
    /// Response progress.
    pub fn response_progress(&self) -> Progress {
        self.resp_progress
    }
    /// Whether both sides are complete.
    pub fn is_complete(&self) -> bool {
        self.req_progress == Progress::Complete && self.resp_progress == Progress::Complete
    }
    /// Events raised on this transaction.
    pub fn events(&self) -> &HttpEvents {
        &self.events
    }
    pub(crate) fn set_event(&mut self, e: HttpEvent) {
        self.events.set(e);
    }

    /// Suricata's `HTPErrorCheckTxRequestFlags`: each request flag event set now is added
    /// once more; `gated`: the call sites that run only when libhtp's flags are not 0 (the
    /// request line and header data callbacks).
    pub(crate) fn check_request_flags(&mut self, gated: bool) {
        let flags = CHECK_EVENTS[..6].iter().any(|&e| self.events.contains(e));
        if gated && !flags {
            return;
        }
        for (i, &e) in CHECK_EVENTS.iter().enumerate() {
            if self.events.contains(e) {
                if let Some(c) = self.check_counts.get_mut(i) {
                    *c = c.saturating_add(1);
                }
            }
        }
    }
    /// Request method.
    pub fn method(&self) -> Option<&[u8]> {
        span_of(&self.request_line, self.method)
    }
    /// Raw request URI as sent (`http.uri.raw`, EVE `url`).
    pub fn uri_raw(&self) -> Option<&[u8]> {
        self.uri_override
            .or_else(|| span_of(&self.request_line, self.uri))
    }
    /// Normalised URI (`http.uri`).
    pub fn uri_normalized(&self) -> Option<&[u8]> {
        self.has_uri_norm.then_some(self.uri_norm.as_slice())
    }
    /// Request protocol string.
    pub fn request_protocol(&self) -> Option<&[u8]> {
        span_of(&self.request_line, self.protocol)
    }
    /// Request line without its line ending.
    pub fn request_line(&self) -> Option<&[u8]> {
        self.has_request_line
            .then_some(self.request_line.as_slice())
    }
    /// Status line without its line ending.
    pub fn response_line(&self) -> Option<&[u8]> {
        self.has_response_line
            .then_some(self.response_line.as_slice())
    }
    /// Response protocol string.
    pub fn response_protocol(&self) -> Option<&[u8]> {
        span_of(&self.response_line, self.resp_protocol)
    }
    /// Status code token as sent.
    pub fn status(&self) -> Option<&[u8]> {
        span_of(&self.response_line, self.status)
    }
    /// Status code as a number (leading digits of the token), if any.
    pub fn status_number(&self) -> Option<u16> {
        u16::try_from(self.status_number)
            .ok()
            .filter(|_| self.status_number >= 0)
    }
    /// Reason phrase.
    pub fn status_message(&self) -> Option<&[u8]> {
        span_of(&self.response_line, self.message)
    }
    /// Request hostname (`http.host`, EVE `hostname`).
    pub fn hostname(&self) -> Option<&[u8]> {
        self.hostname.as_deref()
    }
    /// Request headers.
    pub fn request_headers(&self) -> &HeaderTable {
        &self.req_headers
    }
    /// Response headers.
    pub fn response_headers(&self) -> &HeaderTable {
        &self.resp_headers
    }
    /// Request header block as sent (`http.header.raw`), trailers appended.
    pub fn request_headers_raw(&self) -> &[u8] {
        &self.req_headers_raw
    }
    /// Response header block as sent, trailers appended.
    pub fn response_headers_raw(&self) -> &[u8] {
        &self.resp_headers_raw
    }
    /// Request body kept for inspection.
    pub fn request_body(&self) -> &Body {
        &self.req_body
    }
    /// Response body kept for inspection.
    pub fn response_body(&self) -> &Body {
        &self.resp_body
    }
    /// Response body bytes on the wire, framing included (EVE `length`).
    pub fn response_message_len(&self) -> u64 {
        self.resp_message_len
    }
    /// Whether the request line had no protocol (HTTP/0.9).
    pub fn is_http09(&self) -> bool {
        self.is_09
    }
}

/// `filename=` of a `Content-Disposition` value (quotes removed).
pub(crate) fn disposition_filename(v: &[u8]) -> Option<&[u8]> {
    let lower = v.to_ascii_lowercase();
    let at = lower.windows(9).position(|w| w == b"filename=")?;
    let rest = v.get(at + 9..)?;
    let rest = rest.strip_prefix(b"\"").map_or(rest, |r| {
        let end = r.iter().position(|&c| c == b'"').unwrap_or(r.len());
        r.get(..end).unwrap_or(r)
    });
    let end = rest.iter().position(|&c| c == b';').unwrap_or(rest.len());
    let name = rest.get(..end)?;
    (!name.is_empty()).then_some(name)
}

impl HttpTx {
    /// The path of the request URI (libhtp's `parsed_uri->path`): the name of files
    /// without a `Content-Disposition` name.
    pub(crate) fn uri_path(&self) -> Option<&[u8]> {
        if self.has_uri_norm {
            return span_of(&self.uri_norm, self.uri_path);
        }
        self.uri_override
    }

    /// Decides the request body's files before its first byte (Suricata 7's
    /// `HTPCallbackRequestBodyData`): a POST whose `Content-Type` names a `boundary=` is a
    /// multipart form (its parts named by `filename=` are files; a boundary of 200 bytes
    /// or more makes no file at all); the body of any other POST, or of a PUT, is a file
    /// named by the URI path.
    pub(crate) fn want_request_file(&mut self) {
        if self.req_body.files_decided {
            return;
        }
        self.req_body.files_decided = true;
        let m = self.method().unwrap_or(b"");
        if m == b"POST" {
            let form = self
                .req_headers
                .get(b"content-type")
                .and_then(super::multipart::Multipart::from_content_type);
            match form {
                Some(Ok(mp)) => self.req_body.multipart = Some(Box::new(mp)),
                Some(Err(())) => {}
                None => self.req_body.file_name = self.uri_path().map(<[u8]>::to_vec),
            }
        } else if m == b"PUT" {
            self.req_body.file_name = self.uri_path().map(<[u8]>::to_vec);
        }
    }

    /// Moves the multipart events raised so far onto the transaction.
    pub(crate) fn take_multipart_events(&mut self) {
        use super::multipart::{EV_GENERIC, EV_INVALID_HEADER, EV_NO_FILEDATA};
        let ev = match self.req_body.multipart.as_deref_mut() {
            Some(m) => std::mem::take(&mut m.events),
            None => return,
        };
        for (bit, e) in [
            (EV_GENERIC, HttpEvent::MultipartGenericError),
            (EV_NO_FILEDATA, HttpEvent::MultipartNoFiledata),
            (EV_INVALID_HEADER, HttpEvent::MultipartInvalidHeader),
        ] {
            if ev & bit != 0 {
                self.set_event(e);
            }
        }
    }

    /// Names the response body's file before its first byte: `Content-Disposition`'s
    /// `filename=`, else the URI path (Suricata's `HtpResponseBodyHandle`).
    pub(crate) fn want_response_file(&mut self) {
        if self.resp_body.file.is_some() || self.resp_body.file_name.is_some() {
            return;
        }
        let name = self
            .resp_headers
            .get(b"content-disposition")
            .and_then(disposition_filename)
            .or_else(|| self.uri_path())
            .map(<[u8]>::to_vec);
        self.resp_body.file_name = name;
        // A part of a larger file (Suricata's `HTPFileOpenWithRange`): reassembled with the
        // other parts under the request's host and the file's name.
        if self.resp_body.file_name.is_some() {
            if let Some(crate::file_range::Check::Part(r)) = self
                .resp_headers
                .get(b"content-range")
                .map(crate::file_range::check)
            {
                let host = self.hostname().map(<[u8]>::to_vec);
                self.resp_body.range_part = Some((r, host));
            }
        }
    }
}
