//! Per-flow HTTP/1.x state: the transactions and the two direction parsers.
//!
//! Data is fed per direction in stream order, in any segmentation: every decision is taken on
//! complete lines or on byte counts, never on where a segment ends, so feeding a stream byte
//! by byte gives the same transactions as feeding it at once.

use std::collections::VecDeque;
use std::sync::Arc;

use super::config::HttpConfig;
use super::decompress::Decoder;
use super::events::HttpEvent;
use super::tx::{Body, HttpTx, Progress};
use crate::Dir;

/// Request-side parser states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReqState {
    Idle,
    Line,
    /// Request line had no protocol: is a header block following (HTTP/1.x without
    /// protocol) or is this HTTP/0.9?
    Probe09,
    Headers,
    /// CONNECT sent; request data is held until the response status is known.
    ConnectWait,
    /// CONNECT accepted; the next client data decides between HTTP and a tunnel.
    ConnectProbe,
    BodyIdentity {
        left: u64,
    },
    /// After a request: lines that are not a request are the previous request's body.
    Finalize,
    ChunkLen,
    ChunkData {
        left: u64,
    },
    ChunkDataEnd,
    Ignore09,
    Tunnel,
    Error,
}

/// Response-side parser states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RespState {
    Idle,
    Line,
    Headers,
    BodyLength {
        left: u64,
    },
    BodyClose,
    /// After a response: lines that are not a status line are the previous body.
    Finalize,
    ChunkLen,
    ChunkData {
        left: u64,
    },
    ChunkDataEnd,
    Tunnel,
    Error,
}

/// Line-assembly and header-folding state of one direction.
#[derive(Debug, Default)]
pub(crate) struct LineState {
    /// Bytes of the line being assembled (with its LF once complete).
    pub line: Vec<u8>,
    /// Logical header being assembled from folded lines.
    pub pending: Vec<u8>,
    pub has_pending: bool,
    pub pending_folded: bool,
    /// Probe09: LWS seen after a name.
    pub probe_lws: bool,
    /// Held data (CONNECT) while waiting for the other side.
    pub held: Vec<u8>,
    /// The direction reached end of stream.
    pub closed: bool,
    /// Response lines: the line ends with a CR whose meaning (end of line or not) depends on
    /// the next byte, not yet seen.
    pub cr_pending: bool,
    /// Response headers: the previous line ended with LF CR.
    pub lfcr: bool,
}

impl LineState {
    fn clear_line_state(&mut self) {
        self.line.clear();
        self.pending.clear();
        self.has_pending = false;
        self.pending_folded = false;
        self.probe_lws = false;
        self.cr_pending = false;
        self.lfcr = false;
    }
}

/// Outcome of [`read_line`].
pub(crate) enum LineRead {
    /// Consumed this many bytes, line incomplete.
    Partial(usize),
    /// Consumed this many bytes; the line (with its LF) is in the buffer.
    Complete(usize),
    /// The line would exceed the field limit.
    TooLong,
}

/// Moves bytes up to and including the next LF into `line`, enforcing the field limit
/// (`extra` counts other buffered bytes, such as a pending folded header).
pub(crate) fn read_line(line: &mut Vec<u8>, data: &[u8], limit: usize, extra: usize) -> LineRead {
    let (n, done) = match memchr::memchr(b'\n', data) {
        Some(i) => (i + 1, true),
        None => (data.len(), false),
    };
    if line.len() + n + extra > limit {
        return LineRead::TooLong;
    }
    line.extend_from_slice(data.get(..n).unwrap_or(&[]));
    if done {
        LineRead::Complete(n)
    } else {
        LineRead::Partial(n)
    }
}

/// Outcome of [`read_resp_line`].
pub(crate) enum RespLineRead {
    /// Consumed this many bytes, line incomplete.
    Partial(usize),
    /// Consumed this many bytes; the line (with its terminator) is in the buffer.
    /// `next_no_lf`: a byte follows the line in the data at hand and it is not LF.
    Complete { used: usize, next_no_lf: bool },
    /// The line would exceed the field limit.
    TooLong,
}

/// Reads one response status or header line the way libhtp 0.5 does: LF ends a line and so
/// does a CR that is not followed by LF. In header mode (`headers`) a CR right after LF
/// belongs to that line ending (LF CR), a lone CR at the start of a line does not end it,
/// and after an LF CR ending a CR LF CR LF sequence counts as one empty line. A CR at the
/// end of the data waits for the next byte (libhtp buffers it the same way).
pub(crate) fn read_resp_line(
    st: &mut LineState,
    data: &[u8],
    limit: usize,
    extra: usize,
    headers: bool,
) -> RespLineRead {
    let mut i = 0;
    let next_no_lf = |i: usize| data.get(i).is_some_and(|&b| b != b'\n');
    loop {
        if st.cr_pending {
            let Some(&n) = data.get(i) else {
                return RespLineRead::Partial(i);
            };
            st.cr_pending = false;
            if n == b'\n' {
                if st.line.len() + 1 + extra > limit {
                    return RespLineRead::TooLong;
                }
                st.line.push(b'\n');
                i += 1;
                if headers && st.lfcr && data.get(i) == Some(&b'\r') {
                    // LF CR, then CR LF CR LF: only two line ends.
                    i += 1;
                    if data.get(i) == Some(&b'\n') {
                        i += 1;
                    }
                }
                st.lfcr = false;
                return RespLineRead::Complete {
                    used: i,
                    next_no_lf: next_no_lf(i),
                };
            }
            st.lfcr = false;
            // CR CR: the first CR is line content, the second one is looked at below.
            // CR + other byte: the CR ends the line, unless it is all the line (headers).
            if n != b'\r' && !(headers && st.line.len() < 2) {
                return RespLineRead::Complete {
                    used: i,
                    next_no_lf: true,
                };
            }
        }
        let rest = data.get(i..).unwrap_or(&[]);
        let (take, end) = match memchr::memchr2(b'\r', b'\n', rest) {
            Some(p) => (p + 1, rest.get(p).copied()),
            None => (rest.len(), None),
        };
        if st.line.len() + take + extra > limit {
            return RespLineRead::TooLong;
        }
        st.line.extend_from_slice(rest.get(..take).unwrap_or(&[]));
        i += take;
        if take > 1 || (end.is_none() && take > 0) {
            st.lfcr = false;
        }
        match end {
            None => return RespLineRead::Partial(i),
            Some(b'\r') => st.cr_pending = true,
            Some(_) => {
                st.lfcr = false;
                if headers && data.get(i) == Some(&b'\r') {
                    if st.line.len() + 1 + extra > limit {
                        return RespLineRead::TooLong;
                    }
                    st.line.push(b'\r');
                    i += 1;
                    st.lfcr = true;
                }
                return RespLineRead::Complete {
                    used: i,
                    next_no_lf: next_no_lf(i),
                };
            }
        }
    }
}

/// libhtp's empty line for responses: a lone CR or LF, or CRLF.
pub(crate) fn is_empty_resp_line(line: &[u8]) -> bool {
    line.len() == 1 || line == b"\r\n"
}

/// Whether a line (with its terminator) is empty: just LF or CRLF.
pub(crate) fn is_empty_line(line: &[u8]) -> bool {
    line == b"\n" || line == b"\r\n"
}

/// Counters of one HTTP parser (summed per worker by the caller).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpStats {
    /// Transactions created (`app_layer.tx.http`).
    pub tx: u64,
    /// Directions that stopped on a parse error (`app_layer.error.http.parser`).
    pub parser_errors: u64,
    /// Gaps that could not be skipped (`app_layer.error.http.gap`).
    pub gap_errors: u64,
    /// Lines over `meta-field-limit` (shrike-internal).
    pub field_too_long: u64,
    /// Bodies cut at the body limit (shrike-internal).
    pub body_truncated: u64,
    /// Decompression stopped as a bomb (shrike-internal).
    pub compression_bombs: u64,
    /// Requests refused because `max-tx` live transactions existed (shrike-internal).
    pub tx_limit: u64,
}

impl HttpStats {
    /// Visits the counters Suricata's `stats` schema names.
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("app_layer.tx.http", self.tx);
        f("app_layer.error.http.parser", self.parser_errors);
        f("app_layer.error.http.gap", self.gap_errors);
    }

    /// Visits shrike's own counters (not part of Suricata's stats schema).
    pub fn visit_internal(&self, f: &mut dyn FnMut(&str, u64)) {
        f("http.field_too_long", self.field_too_long);
        f("http.body_truncated", self.body_truncated);
        f("http.compression_bombs", self.compression_bombs);
        f("http.tx_limit", self.tx_limit);
    }

    /// Adds another set of counters.
    pub fn merge(&mut self, o: &HttpStats) {
        self.tx += o.tx;
        self.parser_errors += o.parser_errors;
        self.gap_errors += o.gap_errors;
        self.field_too_long += o.field_too_long;
        self.body_truncated += o.body_truncated;
        self.compression_bombs += o.compression_bombs;
        self.tx_limit += o.tx_limit;
    }
}

/// HTTP/1.x state of one flow.
#[derive(Debug)]
pub struct HttpState {
    pub(crate) cfg: Arc<HttpConfig>,
    pub(crate) txs: VecDeque<HttpTx>,
    /// Id of `txs[0]`.
    pub(crate) base: u64,
    pub(crate) next_id: u64,
    pool: Vec<HttpTx>,
    pub(crate) req_state: ReqState,
    pub(crate) resp_state: RespState,
    pub(crate) req: LineState,
    pub(crate) resp: LineState,
    /// Transaction the request parser fills.
    pub(crate) in_tx: Option<u64>,
    /// Transaction the response parser fills.
    pub(crate) out_tx: Option<u64>,
    /// Next transaction a response pairs with.
    pub(crate) out_next: u64,
    /// Last completed request (target of unexpected trailing lines).
    pub(crate) req_last: Option<u64>,
    /// The last request's announced body was read whole: a trailing line is unexpected.
    pub(crate) req_last_body_done: bool,
    /// Last completed response.
    pub(crate) resp_last: Option<u64>,
    /// `resp_last` ended but is not marked complete yet: like libhtp, a response whose
    /// body is followed by the start of a line that is not a status line stays open
    /// until that line ends (it is more body) or the stream closes.
    pub(crate) resp_deferred: bool,
    /// Request header data was read in this parse call (libhtp flushes it to Suricata's
    /// header data callback when the call's data ends).
    pub(crate) req_hdr_flush: bool,
    pub(crate) stats: HttpStats,
    /// The flow's first transaction was a CONNECT answered 2xx: the app layer detects the
    /// tunnelled protocol anew (Suricata's `AppLayerRequestProtocolChange` in
    /// `HTPCallbackResponseComplete`).
    pub(crate) proto_change: bool,
    /// Frame bookkeeping, while frames are asked for ([`HttpFrames`]).
    pub(crate) frames: Option<Box<HttpFrames>>,
    /// Logged transactions whose files in one direction wait for a packet of that
    /// direction (Suricata's file logger writes the packet direction's files only):
    /// (transaction, to server).
    pub(crate) files_pending: Vec<(u64, bool)>,
}

/// HTTP's frames (Suricata's `request` / `response`, opened at a message's start with its
/// transaction, given a length when the message completes).
#[derive(Debug, Default)]
pub(crate) struct HttpFrames {
    /// Stream offset of the next byte of each direction.
    pub pos: [u64; 2],
    /// Message starts and ends raised by the step being run: (direction, start?, tx).
    pub step: Vec<(usize, bool, u64)>,
    /// Starts and ends with their stream offsets, for the caller to turn into frames.
    pub out: Vec<(usize, bool, u64, u64)>,
    /// The open frame of each direction.
    pub open: [Option<i64>; 2],
    /// Where the last message of each direction ended (Suricata's
    /// `last_request_data_stamp`).
    pub stamp: [u64; 2],
}

impl HttpState {
    /// A message starts (`start`) or completes in direction `d` (0: requests).
    pub(crate) fn frame_event(&mut self, d: usize, start: bool, tx: u64) {
        if let Some(f) = self.frames.as_deref_mut() {
            f.step.push((d, start, tx));
        }
    }

    /// The step just run used `n` bytes of direction `d`: its events happened there.
    pub(crate) fn frame_step(&mut self, d: usize, n: usize) {
        if let Some(f) = self.frames.as_deref_mut() {
            let before = f.pos[d];
            f.pos[d] += n as u64;
            let HttpFrames { step, out, pos, .. } = f;
            for (ed, start, tx) in step.drain(..) {
                // A start is where the step began (it uses nothing), an end where it ended.
                let at = if start { before } else { pos[ed] };
                out.push((ed, start, at, tx));
            }
        }
    }
}

/// Transactions kept for reuse per flow.
const POOL_MAX: usize = 4;

impl HttpState {
    /// A parser for a new flow.
    pub fn new(cfg: Arc<HttpConfig>) -> HttpState {
        HttpState {
            cfg,
            txs: VecDeque::new(),
            base: 0,
            next_id: 0,
            pool: Vec::new(),
            req_state: ReqState::Idle,
            resp_state: RespState::Idle,
            req: LineState::default(),
            resp: LineState::default(),
            in_tx: None,
            out_tx: None,
            out_next: 0,
            req_last: None,
            req_last_body_done: false,
            resp_last: None,
            resp_deferred: false,
            req_hdr_flush: false,
            stats: HttpStats::default(),
            proto_change: false,
            frames: None,
            files_pending: Vec::new(),
        }
    }

    /// Feeds stream data of one direction (to server: requests; to client: responses).
    pub fn parse(&mut self, dir: Dir, data: &[u8]) {
        match dir {
            Dir::ToServer => self.parse_request(data),
            Dir::ToClient => self.parse_response(data),
        }
    }

    /// Tells the parser `len` bytes of one direction are missing. Body bytes are skipped
    /// (the body is flagged); a gap anywhere else stops parsing that direction.
    pub fn gap(&mut self, dir: Dir, len: u64) {
        match dir {
            Dir::ToServer => self.request_gap(len),
            Dir::ToClient => self.response_gap(len),
        }
    }

    /// The stream of `dir` reached its reassembly depth: every body file still open in that
    /// direction ends `TRUNCATED` with what it has (Suricata's `FileTruncateAllOpenFiles`).
    pub fn truncate_files(&mut self, dir: Dir) {
        for tx in self.txs.iter_mut() {
            let body = match dir {
                Dir::ToServer => &mut tx.req_body,
                Dir::ToClient => &mut tx.resp_body,
            };
            if let Some(f) = body.file.as_deref_mut() {
                f.close(true);
            }
            if let Some(m) = body.multipart.as_deref_mut() {
                m.truncate();
            }
        }
    }

    /// End of stream in one direction: completes what can be completed (a response body
    /// delimited by the close, an HTTP/0.9 request, a truncated message).
    pub fn close(&mut self, dir: Dir) {
        match dir {
            Dir::ToServer => self.request_close(),
            Dir::ToClient => self.response_close(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> &HttpStats {
        &self.stats
    }

    /// The configuration in use.
    pub fn config(&self) -> &HttpConfig {
        &self.cfg
    }

    /// Number of transactions created on the flow so far (ids `0..tx_count()`).
    pub fn tx_count(&self) -> u64 {
        self.next_id
    }

    /// Transaction `id`, unless freed.
    pub fn tx(&self, id: u64) -> Option<&HttpTx> {
        let i = id.checked_sub(self.base)?;
        self.txs.get(usize::try_from(i).ok()?)
    }

    pub(crate) fn tx_mut(&mut self, id: u64) -> Option<&mut HttpTx> {
        let i = id.checked_sub(self.base)?;
        self.txs.get_mut(usize::try_from(i).ok()?)
    }

    /// Live (not freed) transactions, oldest first.
    pub fn txs(&self) -> impl Iterator<Item = &HttpTx> + '_ {
        self.txs.iter()
    }

    /// Frees transactions with id below `id` that are complete in both directions (or all
    /// below `id` when `force`); their memory is reused for later transactions.
    pub fn free_txs_before(&mut self, id: u64, force: bool) {
        while let Some(front) = self.txs.front() {
            if front.id >= id || (!force && !front.is_complete()) {
                break;
            }
            if Some(front.id) == self.in_tx || Some(front.id) == self.out_tx {
                break;
            }
            if let Some(mut tx) = self.txs.pop_front() {
                self.base = tx.id + 1;
                if self.pool.len() < POOL_MAX {
                    tx.trim_for_pool();
                    // Grow one at a time: most flows carry one or two transactions, and a
                    // transaction is several hundred bytes.
                    if self.pool.len() == self.pool.capacity() {
                        self.pool.reserve_exact(1);
                    }
                    self.pool.push(tx);
                }
            }
        }
    }

    /// Drops the transactions kept for reuse (the flow will not start new ones): their
    /// buffers would otherwise stay allocated until the flow is evicted.
    pub fn release_pool(&mut self) {
        self.pool = Vec::new();
        if self.txs.is_empty() {
            self.txs = std::collections::VecDeque::new();
        }
    }

    /// Whether a CONNECT or protocol upgrade turned the flow into an opaque tunnel.
    pub fn is_tunnel(&self) -> bool {
        self.req_state == ReqState::Tunnel || self.resp_state == RespState::Tunnel
    }

    /// Whether parsing stopped in `dir` after an unrecoverable error.
    pub fn is_error(&self, dir: Dir) -> bool {
        match dir {
            Dir::ToServer => self.req_state == ReqState::Error,
            Dir::ToClient => self.resp_state == RespState::Error,
        }
    }

    /// Approximate heap bytes held by the transactions (live ones and those kept for reuse).
    pub fn memuse(&self) -> usize {
        self.txs
            .iter()
            .chain(self.pool.iter())
            .map(|t| {
                t.request_line.capacity()
                    + t.uri_norm.capacity()
                    + t.req_headers.arena_len()
                    + t.req_headers_raw.capacity()
                    + t.req_body.data.capacity()
                    + t.response_line.capacity()
                    + t.resp_headers.arena_len()
                    + t.resp_headers_raw.capacity()
                    + t.resp_body.data.capacity()
            })
            .sum()
    }

    /// Creates the next transaction, or `None` at the `max-tx` limit.
    pub(crate) fn new_tx(&mut self) -> Option<u64> {
        if self.txs.len() >= self.cfg.max_tx {
            self.stats.tx_limit += 1;
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut tx = self.pool.pop().unwrap_or_default();
        tx.reset(id);
        if self.txs.is_empty() {
            self.base = id;
        }
        if self.txs.len() == self.txs.capacity() {
            self.txs.reserve_exact(1);
        }
        self.txs.push_back(tx);
        self.stats.tx += 1;
        Some(id)
    }

    pub(crate) fn field_limit(&self) -> usize {
        usize::try_from(self.cfg.meta_field_limit).unwrap_or(usize::MAX)
    }

    /// Sets an event on transaction `id` (if it exists).
    pub(crate) fn event(&mut self, id: Option<u64>, e: HttpEvent) {
        if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
            tx.set_event(e);
        }
    }
}

/// Stores body bytes, decoding them first when a decoder is set. Returns (decode failed,
/// compression bomb) flags.
#[allow(clippy::too_many_arguments)]
pub(crate) fn body_data(
    body: &mut Body,
    decoder: &mut Option<Decoder>,
    message_len: u64,
    data: &[u8],
    limit: u64,
    bomb_limit: u64,
    stats: &mut HttpStats,
    files: &crate::files::FileConfig,
) -> (bool, bool) {
    let was_truncated = body.truncated;
    let mut bomb = false;
    let mut failed = false;
    match decoder {
        Some(dec) => {
            if !dec.is_stopped() {
                let mut sink = |b: &[u8]| -> bool {
                    store(body, b, limit, files);
                    if body.total > bomb_limit && body.total > message_len.saturating_mul(2048) {
                        bomb = true;
                        return false;
                    }
                    // Nothing more can be kept: decode on only far enough to tell a bomb.
                    !(limit != 0
                        && body.kept_end() >= limit
                        && body.total >= bomb_limit.saturating_mul(4))
                };
                failed = dec.feed(data, &mut sink).failed;
            }
        }
        None => store(body, data, limit, files),
    }
    if body.truncated && !was_truncated {
        stats.body_truncated += 1;
    }
    if bomb {
        stats.compression_bombs += 1;
    }
    (failed, bomb)
}

fn store(body: &mut Body, b: &[u8], limit: u64, files: &crate::files::FileConfig) {
    if !b.is_empty() {
        if body.file.is_none() {
            if let Some(name) = body.file_name.take() {
                open_body_file(body, &name, files);
            }
        }
        // Suricata's `AppLayerHtpCheckDepth`: the chunk reaching the body limit is cut to
        // it, the next one ends the file as truncated; once a `filestore` rule matched, the
        // file reassembly depth applies instead (unlimited: shrike has no
        // `file-store.stream-depth`).
        let flim = if body.depth_set { 0 } else { limit };
        let within = flim == 0 || body.total < flim;
        let n = usize::try_from(flim.saturating_sub(body.total)).unwrap_or(usize::MAX);
        let cut = if flim == 0 { b } else { &b[..n.min(b.len())] };
        if let Some(f) = body.file.as_deref_mut() {
            if within {
                if !f.is_done() {
                    if let Some(r) = body.range.as_deref_mut() {
                        r.append(cut);
                    }
                }
                f.append(cut);
            } else if !f.is_done() {
                f.close(true);
                if let Some(mut r) = body.range.take() {
                    body.ranged = r.close(true);
                }
            }
        }
        if let Some(m) = body.multipart.as_deref_mut() {
            if within {
                m.feed(cut, files);
            } else {
                m.truncate();
            }
        }
    }
    body.total += b.len() as u64;
    body.release_inspected();
    if limit == 0 {
        body.data.extend_from_slice(b);
        return;
    }
    let lim = usize::try_from(limit.saturating_sub(body.base)).unwrap_or(usize::MAX);
    if super::util::push_bounded(&mut body.data, b, lim) > 0 {
        body.truncated = true;
    }
}

/// Open the body's file named `name` (Suricata's `HTPFileOpen`, or `HTPFileOpenWithRange`
/// for a part of a larger file: the file gets the range, and the part joins the byte-range
/// reassembly when the host is known). The caller adds the first bytes.
pub(crate) fn open_body_file(body: &mut Body, name: &[u8], files: &crate::files::FileConfig) {
    let mut f = crate::files::TrackedFile::open(name, files);
    if let Some((r, key)) = body.range_part.take() {
        f.set_range(r.start.max(0) as u64, r.end.max(0) as u64);
        if let Some(mut k) = key {
            let name = &name[..name.len().min(crate::files::FILENAME_MAX)];
            k.extend_from_slice(name);
            body.range = crate::file_range::open(&k, name, false, r, files, &[]).map(Box::new);
        }
    }
    body.file = Some(Box::new(f));
}

/// Direction index for per-direction arrays.
pub(crate) fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl HttpTx {
    /// Progress of one side as libhtp numbers it.
    pub fn progress(&self, dir: Dir) -> Progress {
        match dir {
            Dir::ToServer => self.req_progress,
            Dir::ToClient => self.resp_progress,
        }
    }
}

impl LineState {
    /// Drops all line assembly state (used when a side changes mode).
    pub(crate) fn reset(&mut self) {
        self.clear_line_state();
    }
}
