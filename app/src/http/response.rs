//! Response-side parsing: status line, headers, bodies (Content-Length, chunked, until
//! close), 100-continue, HEAD/204/304, CONNECT and protocol upgrades.

use super::decompress::Decoder;
use super::events::HttpEvent;
use super::headers::{split_header, FIELD_FOLDED};
use super::parser::{
    body_data, is_empty_resp_line, read_line, read_resp_line, HttpState, LineRead, ReqState,
    RespLineRead, RespState,
};
use super::reqline::{codings, parse_protocol};
use super::tx::{MethodKind, Progress, Protocol, TransferCoding};
use super::util::{
    chomp_all, contains_nocase, contains_nocase_nozero, eq_nocase, is_lws, is_space, mem_to_pint,
    parse_chunk_len, parse_content_length, ChunkLen,
};

/// libhtp's test for "this is not a status line": no `HTTP` (any case) after leading
/// whitespace and NULs.
fn treat_as_body(line: &[u8]) -> bool {
    let start = line
        .iter()
        .position(|&c| !(is_space(c) || c == 0))
        .unwrap_or(line.len());
    !line
        .get(start..start + 4)
        .is_some_and(|h| eq_nocase(h, b"http"))
}

/// libhtp's `data_probe_chunk_length` failing: at least 8 bytes, and the first one that is
/// not whitespace is not a hex digit.
fn chunk_len_junk(line: &[u8]) -> bool {
    line.len() >= 8
        && line
            .iter()
            .find(|&&c| !matches!(c, b'\r' | b'\n' | b' ' | b'\t' | 0x0b | 0x0c))
            .is_some_and(|c| !c.is_ascii_hexdigit())
}

/// URI libhtp gives a transaction created for a response without request.
pub const URI_NOT_SEEN: &[u8] = b"/libhtp::request_uri_not_seen";

impl HttpState {
    pub(crate) fn parse_response(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let used = match self.resp_state {
                RespState::Error | RespState::Tunnel => data.len(),
                RespState::Idle => {
                    self.resp_start();
                    0
                }
                RespState::Line => self.resp_line(data),
                RespState::Headers => self.resp_headers(data),
                RespState::BodyLength { left } => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                    self.resp_body(data.get(..n).unwrap_or(&[]), n as u64);
                    let left = left - n as u64;
                    if left == 0 {
                        self.resp_complete_deferred();
                    } else {
                        self.resp_state = RespState::BodyLength { left };
                    }
                    n
                }
                RespState::BodyClose => {
                    self.resp_body(data, data.len() as u64);
                    data.len()
                }
                RespState::Finalize => self.resp_finalize(data),
                RespState::ChunkLen => self.resp_chunk_len(data),
                RespState::ChunkData { left } => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                    self.resp_body(data.get(..n).unwrap_or(&[]), n as u64);
                    let left = left - n as u64;
                    self.resp_state = if left == 0 {
                        RespState::ChunkDataEnd
                    } else {
                        RespState::ChunkData { left }
                    };
                    n
                }
                RespState::ChunkDataEnd => {
                    let n = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
                    if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
                        tx.resp_message_len += n as u64;
                    }
                    if data.get(n - 1) == Some(&b'\n') {
                        self.resp_state = RespState::ChunkLen;
                    }
                    n
                }
            };
            self.frame_step(1, used);
            data = data.get(used..).unwrap_or(&[]);
        }
        // libhtp completes a response once no more data is at hand, unless a line that
        // may still turn out to be body is pending.
        // The response is then over: the next data starts the next response (libhtp's
        // RES_FINALIZE completes it and goes back to RES_IDLE), even when that data does not
        // begin with a status line.
        let line_pending = self.resp_state == RespState::Finalize && !self.resp.line.is_empty();
        if self.resp_deferred && !line_pending {
            self.resp_finish_deferred();
        }
        if self.resp_state == RespState::Finalize && !line_pending {
            self.resp_state = RespState::Idle;
        }
    }

    fn resp_fail(&mut self, e: Option<HttpEvent>) {
        if let Some(e) = e {
            self.event(self.out_tx, e);
            if e == HttpEvent::ResponseFieldTooLong {
                self.stats.field_too_long += 1;
            }
        }
        self.stats.parser_errors += 1;
        self.resp_state = RespState::Error;
        self.resp.reset();
    }

    /// Pairs the next response with its request (or a placeholder transaction).
    fn resp_start(&mut self) {
        self.resp_finish_deferred();
        // A request still deciding HTTP/0.9 is decided by the server answering.
        if self.req_state == ReqState::Probe09 && self.in_tx == Some(self.out_next) {
            self.req_complete();
        }
        if self.req_state == ReqState::ConnectProbe {
            // Server talks first inside an accepted tunnel.
            self.req_state = ReqState::Tunnel;
            self.resp_state = RespState::Tunnel;
            return;
        }
        let id = if self.out_next < self.next_id && self.tx(self.out_next).is_some() {
            self.out_next
        } else {
            match self.new_tx() {
                Some(id) => {
                    if let Some(tx) = self.tx_mut(id) {
                        tx.set_event(HttpEvent::UnableToMatchResponseToRequest);
                        tx.uri_override = Some(URI_NOT_SEEN);
                        tx.req_progress = Progress::Complete;
                    }
                    // The request parser must not fill this transaction.
                    if self.in_tx.is_none() && self.req_state == ReqState::Idle {
                        self.req.reset();
                    }
                    id
                }
                None => {
                    self.resp_fail(None);
                    return;
                }
            }
        };
        self.out_next = id + 1;
        self.out_tx = Some(id);
        self.resp.reset();
        self.frame_event(1, true, id);
        let Some(tx) = self.tx_mut(id) else { return };
        if tx.is_09 {
            tx.resp_coding = TransferCoding::Identity;
            tx.resp_progress = Progress::Body;
            self.resp_state = RespState::BodyClose;
        } else {
            tx.resp_progress = Progress::Line;
            self.resp_state = RespState::Line;
        }
    }

    fn resp_line(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        match read_resp_line(&mut self.resp, data, limit, 0, false) {
            RespLineRead::TooLong => {
                self.resp_fail(Some(HttpEvent::ResponseFieldTooLong));
                data.len()
            }
            RespLineRead::Partial(n) => n,
            RespLineRead::Complete { used: n, .. } => {
                let line = std::mem::take(&mut self.resp.line);
                let rest = data.get(n..).unwrap_or(&[]);
                if !is_empty_resp_line(&line)
                    && treat_as_body(&line)
                    && rest.len() > 1
                    && (rest.first() == Some(&b'H') || chomp_all(&line).len() <= 2)
                {
                    // libhtp ignores a line that is no status line when the data at hand
                    // goes on with a line starting with `H` (or the line is that short).
                } else if !is_empty_resp_line(&line) {
                    let as_body = self.resp_line_complete(&line);
                    if as_body && n == data.len() {
                        // libhtp: a line read as body that ends the data at hand ends the
                        // response (RES_FINALIZE), which is complete unless more comes with it.
                        self.resp_complete_deferred();
                    }
                } else if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
                    if tx.seen_100 {
                        tx.resp_headers_raw.extend_from_slice(&line);
                    }
                }
                self.resp.line = line;
                self.resp.line.clear();
                n
            }
        }
    }

    /// Parses a status line; true when it was no status line and went to the body instead.
    fn resp_line_complete(&mut self, raw: &[u8]) -> bool {
        let Some(id) = self.out_tx else { return false };
        let line = chomp_all(raw);
        let Some(tx) = self.tx_mut(id) else {
            return false;
        };
        if tx.seen_100 {
            // libhtp's raw-header receiver stays open across an interim response.
            tx.resp_headers_raw.extend_from_slice(raw);
        }
        tx.response_line.clear();
        tx.response_line.extend_from_slice(line);
        tx.has_response_line = true;
        tx.resp_protocol = None;
        tx.status = None;
        tx.message = None;
        tx.status_number = -1;
        tx.resp_proto = Protocol::Invalid;
        let len = line.len();
        let at = |i: usize| line.get(i).copied().unwrap_or(0);
        let mut pos = 0;
        while pos < len && is_space(at(pos)) {
            pos += 1;
        }
        let start = pos;
        while pos < len && !is_space(at(pos)) {
            pos += 1;
        }
        if pos > start {
            tx.resp_protocol = Some((start as u32, pos as u32));
            tx.resp_proto = parse_protocol(line.get(start..pos).unwrap_or(&[]));
            while pos < len && is_space(at(pos)) {
                pos += 1;
            }
            let s2 = pos;
            while pos < len && !is_space(at(pos)) {
                pos += 1;
            }
            if pos > s2 {
                tx.status = Some((s2 as u32, pos as u32));
                let st = line.get(s2..pos).unwrap_or(&[]);
                tx.status_number = match mem_to_pint(st, 10) {
                    Some((v, _)) => i32::try_from(v).unwrap_or(-1),
                    None => -1,
                };
                while pos < len && is_space(at(pos)) {
                    pos += 1;
                }
                if pos < len {
                    tx.message = Some((pos as u32, len as u32));
                }
            }
        }
        // Not even "HTTP" at the start (after whitespace and NULs): browsers treat this as
        // body, so does libhtp.
        if treat_as_body(line) {
            // Browsers read such lines as body; so does libhtp, still looking for a
            // status line on the next lines.
            tx.has_response_line = false;
            tx.resp_protocol = None;
            tx.status = None;
            tx.message = None;
            tx.status_number = -1;
            tx.resp_coding = TransferCoding::Identity;
            self.resp_body(raw, raw.len() as u64);
            return true;
        }
        if tx.resp_proto == Protocol::Invalid {
            tx.set_event(HttpEvent::ResponseInvalidProtocol);
        }
        let st_ok = tx.status().is_some_and(|s| {
            s.iter().all(|c| c.is_ascii_digit()) && (100..=999).contains(&tx.status_number)
        });
        if !st_ok {
            tx.set_event(HttpEvent::ResponseInvalidStatus);
        }
        tx.resp_progress = Progress::Headers;
        self.resp_state = RespState::Headers;
        false
    }

    fn resp_headers(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        let extra = self.resp.pending.len();
        match read_resp_line(&mut self.resp, data, limit, extra, true) {
            RespLineRead::TooLong => {
                self.resp_fail(Some(HttpEvent::ResponseFieldTooLong));
                data.len()
            }
            RespLineRead::Partial(n) => n,
            RespLineRead::Complete {
                used: n,
                next_no_lf,
            } => {
                let line = std::mem::take(&mut self.resp.line);
                if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
                    tx.resp_headers_raw.extend_from_slice(&line);
                }
                self.resp_header_line(&line, next_no_lf);
                self.resp.line = line;
                self.resp.line.clear();
                n
            }
        }
    }

    /// One response header line (with its terminator). `next_no_lf`: the byte after it is
    /// known and is not LF, which makes a lone "LWS LF" line end the headers (libhtp).
    fn resp_header_line(&mut self, line: &[u8], next_no_lf: bool) {
        let lws_end = line.len() == 2
            && line.first().is_some_and(|&c| is_lws(c))
            && line.get(1) == Some(&b'\n')
            && next_no_lf;
        if is_empty_resp_line(line) || lws_end {
            self.resp_flush_pending();
            if self.resp_state == RespState::Headers {
                self.resp_headers_done();
            }
            return;
        }
        let l = chomp_all(line);
        let folding = |c: u8| is_lws(c) || c == 0;
        if l.is_empty() {
            // Only line terminators (e.g. CR CR LF): nothing to add.
            return;
        }
        if l.first().is_some_and(|&c| folding(c)) {
            let http11 = self
                .out_tx
                .and_then(|i| self.tx(i))
                .is_some_and(|t| t.resp_proto == Protocol::V11);
            if self.resp.has_pending
                && http11
                && l.contains(&b':')
                && self.resp.pending.contains(&b':')
            {
                // A "folded" line that is itself a header starts a new header on
                // HTTP/1.1 (libhtp), minus its first byte.
                self.event(self.out_tx, HttpEvent::InvalidResponseFieldFolding);
                self.resp_flush_pending();
                self.resp.pending.clear();
                self.resp
                    .pending
                    .extend_from_slice(l.get(1..).unwrap_or(&[]));
                self.resp.has_pending = true;
            } else if self.resp.has_pending {
                self.resp.pending.extend_from_slice(l);
                self.resp.pending_folded = true;
            } else {
                self.event(self.out_tx, HttpEvent::InvalidResponseFieldFolding);
                let t = l.iter().position(|&c| !folding(c)).unwrap_or(l.len());
                self.resp.pending.clear();
                self.resp
                    .pending
                    .extend_from_slice(l.get(t..).unwrap_or(&[]));
                self.resp.has_pending = true;
            }
        } else {
            self.resp_flush_pending();
            self.resp.pending.clear();
            self.resp.pending.extend_from_slice(l);
            self.resp.has_pending = true;
        }
    }

    fn resp_flush_pending(&mut self) {
        if !self.resp.has_pending || self.resp_state == RespState::Error {
            return;
        }
        let pending = std::mem::take(&mut self.resp.pending);
        let folded = self.resp.pending_folded;
        self.resp.has_pending = false;
        self.resp.pending_folded = false;
        let limit = self.cfg.headers_limit;
        let mut fail = false;
        if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
            let (name, value, f) = split_header(&pending, true);
            // Suricata 7 raises no event for malformed response header lines.
            let _ = f;
            if tx.resp_headers.get(name).is_none() && tx.resp_headers.len() >= limit {
                tx.set_event(HttpEvent::ResponseTooManyHeaders);
                fail = true;
            } else {
                let o = tx
                    .resp_headers
                    .add(name, value, if folded { FIELD_FOLDED } else { 0 });
                if o.cl_mismatch {
                    tx.set_event(HttpEvent::DuplicateContentLengthFieldInResponse);
                }
                if o.excess_repetition {
                    tx.set_event(HttpEvent::ResponseHeaderRepetition);
                }
            }
            tx.cache.reset(1);
        }
        self.resp.pending = pending;
        self.resp.pending.clear();
        if fail {
            self.resp_fail(Some(HttpEvent::ResponseTooManyHeaders));
        }
    }

    /// End of the response header block (or trailer): decides how the body is delimited.
    fn resp_headers_done(&mut self) {
        let Some(id) = self.out_tx else { return };
        let layer_limit = self.cfg.response_body_decompress_layer_limit;
        let Some(tx) = self.tx_mut(id) else { return };
        tx.cache.reset(1);
        if tx.resp_progress == Progress::Trailer {
            tx.resp_has_trailer = true;
            self.resp_complete_deferred();
            return;
        }
        let status = tx.status_number;
        if tx.method_kind == MethodKind::Connect {
            let ok = (200..=299).contains(&status);
            if ok {
                tx.resp_coding = TransferCoding::NoBody;
                self.resp_complete();
                if self.next_id == 1 {
                    self.proto_change = true;
                }
                self.req_connect_answered(true);
                return;
            }
            if status >= 200 {
                self.req_connect_answered(false);
            }
        }
        let Some(tx) = self.tx_mut(id) else { return };
        // A 100 that announces a body (Transfer-Encoding or Content-Length) is not an
        // interim response for libhtp: its body is read like any 1xx body.
        let announces_body = tx.resp_headers.get(b"transfer-encoding").is_some()
            || tx.resp_headers.get(b"content-length").is_some();
        if status == 100 && !announces_body {
            if tx.seen_100 {
                tx.set_event(HttpEvent::ContinueAlreadySeen);
            }
            tx.seen_100 = true;
            tx.resp_headers.clear();
            tx.resp_progress = Progress::Line;
            self.resp_state = RespState::Line;
            return;
        }
        if status == 101 {
            // Switching protocols: nothing after this is HTTP/1.x.
            tx.resp_coding = TransferCoding::NoBody;
            self.resp_complete();
            self.resp_state = RespState::Tunnel;
            self.req_state = ReqState::Tunnel;
            return;
        }
        let te = tx
            .resp_headers
            .get(b"transfer-encoding")
            .map(|v| v.to_vec());
        let cl = tx.resp_headers.get(b"content-length").map(|v| v.to_vec());
        // HEAD never has a body; 1xx/204/304 have one only if the headers announce it
        // (libhtp then reads it, as browsers do).
        let bodyless_status = (100..=199).contains(&status) || status == 204 || status == 304;
        let cl_zero = cl.as_deref().and_then(parse_content_length) == Some(0);
        if tx.method_kind == MethodKind::Head
            || (bodyless_status && te.is_none() && (cl.is_none() || cl_zero))
        {
            tx.resp_coding = TransferCoding::NoBody;
            self.resp_complete_deferred();
            return;
        }
        let ct_byteranges = tx
            .resp_headers
            .get(b"content-type")
            .is_some_and(|v| contains_nocase(v, b"multipart/byteranges"));
        if let Some(ce) = tx.resp_headers.get(b"content-encoding").map(|v| v.to_vec()) {
            let (mut abnormal, mut too_many) = (false, false);
            let c = codings(&ce, layer_limit, &mut abnormal, &mut too_many);
            if abnormal {
                tx.set_event(HttpEvent::AbnormalCeHeader);
            }
            if too_many {
                tx.set_event(HttpEvent::TooManyEncodingLayers);
            }
            if !c.is_empty() {
                tx.resp_decoder = Some(Decoder::new(&c));
            }
        }
        tx.resp_progress = Progress::Body;
        if bodyless_status && te.is_none() {
            // libhtp reads such a body until the connection closes, whatever its length.
            tx.resp_coding = TransferCoding::Identity;
            self.resp_state = RespState::BodyClose;
            return;
        }
        match (te, cl) {
            (Some(te), cl) if contains_nocase_nozero(&te, b"chunked") => {
                if !eq_nocase(super::util::trim(&te), b"chunked") {
                    tx.set_event(HttpEvent::ResponseAbnormalTransferEncoding);
                }
                if tx.resp_proto < Protocol::V11 {
                    tx.set_event(HttpEvent::ResponseChunkedOldProto);
                }
                let _ = cl;
                tx.resp_coding = TransferCoding::Chunked;
                self.resp_state = RespState::ChunkLen;
            }
            (te, Some(cl)) => {
                if te.is_some() {
                    tx.set_event(HttpEvent::InvalidTransferEncodingValueInResponse);
                }
                match parse_content_length(&cl) {
                    Some(0) => {
                        tx.resp_content_length = Some(0);
                        tx.resp_coding = TransferCoding::Identity;
                        self.resp_complete_deferred();
                    }
                    Some(v) => {
                        tx.resp_content_length = Some(v);
                        tx.resp_coding = TransferCoding::Identity;
                        self.resp_state = RespState::BodyLength { left: v };
                    }
                    None => {
                        // libhtp stops parsing this direction.
                        tx.set_event(HttpEvent::InvalidContentLengthFieldInResponse);
                        tx.resp_coding = TransferCoding::Invalid;
                        self.resp_fail(None);
                    }
                }
            }
            (te, None) => {
                if te.is_some() {
                    tx.set_event(HttpEvent::InvalidTransferEncodingValueInResponse);
                }
                if ct_byteranges {
                    tx.set_event(HttpEvent::ResponseMultipartByteranges);
                }
                tx.resp_coding = TransferCoding::Identity;
                self.resp_state = RespState::BodyClose;
            }
        }
    }

    fn resp_body(&mut self, data: &[u8], wire: u64) {
        let limit = self.cfg.response_body_limit;
        let bomb_limit = self.cfg.compression_bomb_limit;
        let Some(id) = self.out_tx else { return };
        let HttpState {
            txs,
            base,
            stats,
            cfg,
            ..
        } = self;
        let Some(tx) = id
            .checked_sub(*base)
            .and_then(|i| txs.get_mut(usize::try_from(i).ok()?))
        else {
            return;
        };
        tx.resp_message_len += wire;
        if tx.resp_body.total == 0 && !data.is_empty() && tx.has_response_line {
            // Suricata opens the body as a ranged file and checks the range.
            if tx
                .resp_headers
                .get(b"content-range")
                .is_some_and(super::eve::range_invalid)
            {
                tx.set_event(HttpEvent::RangeInvalid);
            }
        }
        // Suricata opens the response file on the first body data, also for a response
        // read as body without a status line (`HTPCallbackResponseBodyData`).
        tx.want_response_file();
        let (failed, bomb) = body_data(
            &mut tx.resp_body,
            &mut tx.resp_decoder,
            tx.resp_message_len,
            data,
            limit,
            bomb_limit,
            stats,
            &cfg.files,
        );
        if failed {
            tx.set_event(HttpEvent::GzipDecompressionFailed);
        }
        if bomb {
            tx.set_event(HttpEvent::CompressionBomb);
        }
    }

    fn resp_chunk_len(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        let read = read_line(&mut self.resp.line, data, limit, 0);
        // libhtp gives up on a chunk-length line as soon as it holds 8 bytes and its first
        // byte that is not whitespace is not a hex digit, without waiting for the LF.
        let junk = matches!(read, LineRead::Partial(_)) && chunk_len_junk(&self.resp.line);
        match read {
            LineRead::TooLong => {
                self.resp_fail(Some(HttpEvent::ResponseFieldTooLong));
                data.len()
            }
            LineRead::Partial(n) if !junk => n,
            LineRead::Partial(n) | LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.resp.line);
                let id = self.out_tx;
                if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                    tx.resp_message_len += line.len() as u64;
                }
                let parsed = if junk {
                    ChunkLen::Invalid
                } else {
                    parse_chunk_len(&line)
                };
                match parsed {
                    ChunkLen::Empty => {}
                    ChunkLen::Invalid => {
                        // libhtp gives up on chunking and reads the rest as body.
                        self.event(id, HttpEvent::InvalidResponseChunkLen);
                        if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                            tx.resp_coding = TransferCoding::Identity;
                            // libhtp counts one byte for the bad line, then the line again
                            // as body.
                            tx.resp_message_len -= line.len() as u64;
                            tx.resp_message_len += 1;
                        }
                        self.resp_state = RespState::BodyClose;
                        self.resp_body(&line, line.len() as u64);
                    }
                    ChunkLen::Len { len, .. } => {
                        if len == 0 {
                            if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                                tx.resp_progress = Progress::Trailer;
                            }
                            self.resp_state = RespState::Headers;
                        } else {
                            self.resp_state = RespState::ChunkData { left: len };
                        }
                    }
                }
                self.resp.line = line;
                self.resp.line.clear();
                n
            }
        }
    }

    /// The response (of `out_tx`) is complete.
    pub(crate) fn resp_complete(&mut self) {
        if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
            // Its file ends with it (Suricata's `HTPFileClose` on response complete).
            tx.resp_body.close_file(false);
        }
        self.resp_complete_keep_file();
    }

    /// [`Self::resp_complete`] leaving the body's file open (a deferred end).
    fn resp_complete_keep_file(&mut self) {
        if let Some(id) = self.out_tx {
            self.frame_event(1, false, id);
        }
        if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
            tx.resp_progress = Progress::Complete;
            tx.resp_body.complete = true;
            // Nothing more to decode: free the inflate state (~43 KB) now, not with the tx.
            tx.resp_decoder = None;
        }
        self.resp_last = self.out_tx;
        self.out_tx = None;
        self.resp.reset();
        self.resp_state = RespState::Finalize;
    }

    /// The response (of `out_tx`) ended; it is marked complete when the parser knows no
    /// more body follows (see [`HttpState::resp_deferred`]).
    fn resp_complete_deferred(&mut self) {
        let id = self.out_tx;
        self.resp_complete_keep_file();
        if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
            tx.resp_progress = Progress::Body;
            tx.resp_body.complete = false;
            self.resp_deferred = true;
        }
    }

    /// Marks a deferred response complete.
    pub(crate) fn resp_finish_deferred(&mut self) {
        if !std::mem::take(&mut self.resp_deferred) {
            return;
        }
        if let Some(tx) = self.resp_last.and_then(|i| self.tx_mut(i)) {
            tx.resp_progress = Progress::Complete;
            tx.resp_body.complete = true;
            tx.resp_body.close_file(false);
        }
    }

    /// After a response: a blank line or one that is not a status line is more body of
    /// that response (libhtp); a status line starts the next response.
    fn resp_finalize(&mut self, data: &[u8]) -> usize {
        if matches!(self.req_state, ReqState::ConnectProbe | ReqState::Tunnel) {
            self.resp_finish_deferred();
            // Server talks first inside an accepted tunnel.
            self.req_state = ReqState::Tunnel;
            self.resp_state = RespState::Tunnel;
            return data.len();
        }
        let limit = self.field_limit();
        match read_line(&mut self.resp.line, data, limit, 0) {
            LineRead::TooLong => {
                self.resp_fail(Some(HttpEvent::ResponseFieldTooLong));
                data.len()
            }
            LineRead::Partial(n) => n,
            LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.resp.line);
                if treat_as_body(&line) {
                    self.out_tx = self.resp_last;
                    self.resp_body(&line, line.len() as u64);
                    self.out_tx = None;
                    self.resp.line = line;
                    self.resp.line.clear();
                } else {
                    self.resp_finish_deferred();
                    self.resp_state = RespState::Idle;
                    self.resp.line.clear();
                    self.parse_response(&line);
                }
                n
            }
        }
    }

    pub(crate) fn response_gap(&mut self, len: u64) {
        self.resp_finish_deferred();
        let mut left_gap = len;
        while left_gap > 0 {
            match self.resp_state {
                RespState::Tunnel | RespState::Error => return,
                RespState::BodyClose => {
                    self.resp_gap_body(left_gap);
                    return;
                }
                RespState::BodyLength { left } => {
                    let n = left.min(left_gap);
                    self.resp_gap_body(n);
                    left_gap -= n;
                    if left == n {
                        self.resp_complete();
                    } else {
                        self.resp_state = RespState::BodyLength { left: left - n };
                    }
                }
                RespState::ChunkData { left } => {
                    let n = left.min(left_gap);
                    self.resp_gap_body(n);
                    left_gap -= n;
                    self.resp_state = if left == n {
                        RespState::ChunkDataEnd
                    } else {
                        RespState::ChunkData { left: left - n }
                    };
                }
                _ => {
                    // libhtp (`htp_connp_res_data`): "Gaps are not allowed during this
                    // state" is logged and the gap skipped; parsing goes on in the same state
                    // with the data after it.
                    self.stats.gap_errors += 1;
                    return;
                }
            }
        }
    }

    fn resp_gap_body(&mut self, n: u64) {
        let files = self.cfg.files;
        let limit = self.cfg.response_body_limit;
        if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
            tx.resp_message_len += n;
            tx.resp_body.gap = true;
            // A gap is body data too (libhtp hands it on without data): the file is opened
            // with it when it is the body's first (Suricata's `FileOpenFile` with no data:
            // the size counts the gap, the file has gaps and ends `TRUNCATED`).
            if tx.has_response_line || tx.is_09 {
                tx.want_response_file();
            }
            let b = &mut tx.resp_body;
            let within = b.depth_set || limit == 0 || b.total < limit;
            if b.file.is_none() && within {
                if let Some(name) = b.file_name.take() {
                    super::parser::open_body_file(b, &name, &files);
                }
            }
            if let Some(r) = b.range.as_deref_mut() {
                if b.file.as_deref().is_some_and(|f| !f.is_done()) {
                    r.gap(n);
                }
            }
            if let Some(f) = tx.resp_body.file.as_deref_mut() {
                f.gap(n);
            }
            if let Some(d) = tx.resp_decoder.as_mut() {
                d.stop();
            }
        }
    }

    pub(crate) fn response_close(&mut self) {
        if self.resp.closed {
            return;
        }
        self.resp.closed = true;
        match self.resp_state {
            RespState::Line => {
                if !self.resp.line.is_empty() {
                    let line = std::mem::take(&mut self.resp.line);
                    self.resp_line_complete(&line);
                }
                if self.out_tx.is_some() && self.resp_state != RespState::Error {
                    self.resp_complete();
                }
            }
            RespState::Headers => {
                if !self.resp.line.is_empty() {
                    let mut line = std::mem::take(&mut self.resp.line);
                    if let Some(tx) = self.out_tx.and_then(|i| self.tx_mut(i)) {
                        tx.resp_headers_raw.extend_from_slice(&line);
                    }
                    line.push(b'\n');
                    self.resp_header_line(&line, false);
                }
                self.resp_flush_pending();
                if self.resp_state == RespState::Headers {
                    self.resp_headers_done();
                }
                if self.out_tx.is_some() && self.resp_state != RespState::Error {
                    self.resp_complete();
                }
            }
            RespState::BodyClose
            | RespState::BodyLength { .. }
            | RespState::ChunkLen
            | RespState::ChunkData { .. }
            | RespState::ChunkDataEnd => self.resp_complete(),
            RespState::Finalize => {
                // An unterminated line after a response that is not a status line is more
                // body of that response (libhtp treats stream closure as end of line).
                let line = std::mem::take(&mut self.resp.line);
                if !line.is_empty() && treat_as_body(&line) && self.resp_last.is_some() {
                    self.out_tx = self.resp_last;
                    self.resp_body(&line, line.len() as u64);
                    self.out_tx = None;
                }
            }
            _ => {}
        }
        self.resp_finish_deferred();
    }
}
