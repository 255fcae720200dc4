//! Request-side parsing: request line, headers, bodies (Content-Length and chunked),
//! HTTP/0.9, CONNECT.

use super::decompress::Decoder;
use super::events::HttpEvent;
use super::headers::{split_header, FIELD_FOLDED};
use super::parser::{body_data, is_empty_line, read_line, HttpState, LineRead, ReqState};
use super::reqline::{codings, parse_protocol, split_request_line};
use super::tx::{MethodKind, Progress, Protocol, TransferCoding};
use super::uri;
use super::util::{
    chomp, contains_nocase, eq_nocase, is_lws, is_space, parse_chunk_len, parse_content_length,
    ChunkLen,
};

impl HttpState {
    pub(crate) fn parse_request(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let used = match self.req_state {
                ReqState::Error | ReqState::Tunnel | ReqState::Ignore09 => data.len(),
                ReqState::Idle => {
                    self.req_start();
                    0
                }
                ReqState::Line => self.req_line(data),
                ReqState::Probe09 => self.req_probe09(data),
                ReqState::Headers => {
                    self.req_hdr_flush = true;
                    self.req_headers(data)
                }
                ReqState::ConnectWait => {
                    let room = self.field_limit().saturating_sub(self.req.held.len());
                    let n = room.min(data.len());
                    self.req
                        .held
                        .extend_from_slice(data.get(..n).unwrap_or(&[]));
                    if n < data.len() {
                        self.req_fail(HttpEvent::RequestFieldTooLong);
                    }
                    n.max(1).min(data.len())
                }
                ReqState::ConnectProbe => self.req_connect_probe(data),
                ReqState::BodyIdentity { left } => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                    self.req_body(data.get(..n).unwrap_or(&[]), n as u64);
                    let left = left - n as u64;
                    if left == 0 {
                        self.req_complete();
                    } else {
                        self.req_state = ReqState::BodyIdentity { left };
                    }
                    n
                }
                ReqState::Finalize => self.req_finalize(data),
                ReqState::ChunkLen => self.req_chunk_len(data),
                ReqState::ChunkData { left } => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                    self.req_body(data.get(..n).unwrap_or(&[]), n as u64);
                    let left = left - n as u64;
                    self.req_state = if left == 0 {
                        ReqState::ChunkDataEnd
                    } else {
                        ReqState::ChunkData { left }
                    };
                    n
                }
                ReqState::ChunkDataEnd => {
                    let n = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
                    if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
                        tx.req_message_len += n as u64;
                    }
                    if data.get(n - 1) == Some(&b'\n') {
                        self.req_state = ReqState::ChunkLen;
                    }
                    n
                }
            };
            self.frame_step(0, used);
            data = data.get(used..).unwrap_or(&[]);
        }
        // libhtp flushes the request header data read so far when the data at hand ends.
        if std::mem::take(&mut self.req_hdr_flush) && self.req_state == ReqState::Headers {
            if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
                tx.check_request_flags(true);
            }
        }
        // libhtp's REQ_FINALIZE completes the request when no more data is at hand (unless
        // a line is half read) and goes back to REQ_IDLE: the next data starts a new request
        // even when its first word is no method libhtp knows (RTSP's DESCRIBE, ...).
        if self.req_state == ReqState::Finalize && self.req.line.is_empty() {
            self.req_state = ReqState::Idle;
        }
    }

    /// Stops request parsing for good, raising `e` on the current transaction.
    pub(crate) fn req_fail(&mut self, e: HttpEvent) {
        self.event(self.in_tx, e);
        if e == HttpEvent::RequestFieldTooLong {
            self.stats.field_too_long += 1;
        }
        self.stats.parser_errors += 1;
        self.req_state = ReqState::Error;
        self.req.reset();
    }

    fn req_start(&mut self) {
        match self.new_tx() {
            Some(id) => {
                if let Some(tx) = self.tx_mut(id) {
                    tx.req_progress = Progress::Line;
                }
                self.in_tx = Some(id);
                self.req_state = ReqState::Line;
                self.req.reset();
                self.frame_event(0, true, id);
            }
            None => {
                self.stats.parser_errors += 1;
                self.req_state = ReqState::Error;
            }
        }
    }

    fn req_line(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        match read_line(&mut self.req.line, data, limit, 0) {
            LineRead::TooLong => {
                self.req_fail(HttpEvent::RequestFieldTooLong);
                data.len()
            }
            LineRead::Partial(n) => n,
            LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.req.line);
                if !is_empty_line(&line) {
                    self.req_line_complete(&line);
                }
                self.req.line = line;
                self.req.line.clear();
                n
            }
        }
    }

    fn req_line_complete(&mut self, raw: &[u8]) {
        let Some(id) = self.in_tx else { return };
        let line = chomp(raw);
        let (m, u, p, ev) = split_request_line(line);
        let include_all = self.cfg.uri_include_all;
        let double = uri::DoubleDecode {
            path: self.cfg.double_decode_path,
            query: self.cfg.double_decode_query,
        };
        let Some(tx) = self.tx_mut(id) else { return };
        tx.request_line.clear();
        tx.request_line.extend_from_slice(line);
        tx.has_request_line = true;
        tx.method = Some(m);
        tx.uri = u;
        tx.protocol = p;
        let method = line.get(m.0 as usize..m.1 as usize).unwrap_or(&[]);
        tx.method_kind = MethodKind::of(method);
        if ev[0] {
            tx.set_event(HttpEvent::RequestLineLeadingWhitespace);
        }
        if ev[1] {
            tx.set_event(HttpEvent::MethodDelimNonCompliant);
        }
        if ev[2] {
            tx.set_event(HttpEvent::UriDelimNonCompliant);
        }
        match p {
            Some((a, b)) => {
                tx.req_proto = parse_protocol(line.get(a as usize..b as usize).unwrap_or(&[]));
            }
            None => {
                tx.is_09 = true;
                tx.req_proto = Protocol::V09;
            }
        }
        // Normalised URI (libhtp parsed_uri + Suricata's query decoding).
        let connect = tx.method_kind == MethodKind::Connect;
        let raw_uri = u.and_then(|(a, b)| line.get(a as usize..b as usize));
        let mut norm = std::mem::take(&mut tx.uri_norm);
        let info = uri::normalize(
            raw_uri.unwrap_or(&[]),
            connect,
            include_all,
            double,
            &mut norm,
        );
        tx.uri_norm = norm;
        tx.has_uri_norm = true;
        tx.uri_path = info.path;
        if info.host_invalid {
            tx.set_event(HttpEvent::RequestUriHostInvalid);
        }
        if info.double_encoded {
            tx.set_event(HttpEvent::DoubleEncodedUri);
        }
        tx.uri_host = info.hostname;
        tx.uri_port = info.port;
        // Suricata's request line callback.
        tx.check_request_flags(true);
        // Suricata's condition (`HTPErrorCheckTxRequestFlags`): HTTP/0.9, unknown method and
        // an invalid or unknown protocol number. libhtp numbers a request line without a
        // protocol `HTP_PROTOCOL_0_9`, so a bare `GET/` raises nothing.
        if tx.is_09
            && tx.method_kind == MethodKind::Unknown
            && matches!(tx.req_proto, Protocol::Invalid | Protocol::Unknown)
        {
            tx.set_event(HttpEvent::RequestLineInvalid);
        }
        if tx.is_09 {
            self.req_state = ReqState::Probe09;
            self.req.probe_lws = false;
        } else {
            tx.req_progress = Progress::Headers;
            self.req_state = ReqState::Headers;
        }
    }

    /// After a request line without protocol: a header-looking line means the protocol was
    /// just missing; anything else means HTTP/0.9 (libhtp's probe).
    fn req_probe09(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        for (i, &c) in data.iter().enumerate() {
            if c == b':' {
                // Headers follow; the probed bytes start the first header line.
                let id = self.in_tx;
                if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                    tx.is_09 = false;
                    tx.req_progress = Progress::Headers;
                }
                self.req_state = ReqState::Headers;
                return i;
            } else if is_lws(c) {
                self.req.probe_lws = true;
            } else if is_space(c) || self.req.probe_lws {
                self.req_complete();
                return i;
            }
            if self.req.line.len() >= limit {
                self.req_complete();
                return i;
            }
            self.req.line.push(c);
        }
        data.len()
    }

    fn req_headers(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        let extra = self.req.pending.len();
        match read_line(&mut self.req.line, data, limit, extra) {
            LineRead::TooLong => {
                self.req_fail(HttpEvent::RequestFieldTooLong);
                data.len()
            }
            LineRead::Partial(n) => n,
            LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.req.line);
                if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
                    tx.req_headers_raw.extend_from_slice(&line);
                }
                self.req_header_line(&line);
                self.req.line = line;
                self.req.line.clear();
                n
            }
        }
    }

    fn req_header_line(&mut self, line: &[u8]) {
        if is_empty_line(line) {
            self.req_flush_pending();
            if self.req_state == ReqState::Headers {
                self.req_headers_done();
            }
            return;
        }
        let l = chomp(line);
        if l.first().is_some_and(|&c| is_lws(c)) {
            if self.req.has_pending {
                self.req.pending.extend_from_slice(l);
                self.req.pending_folded = true;
            } else {
                self.event(self.in_tx, HttpEvent::InvalidRequestFieldFolding);
                let t = l.iter().position(|&c| !is_lws(c)).unwrap_or(l.len());
                self.req.pending.clear();
                self.req
                    .pending
                    .extend_from_slice(l.get(t..).unwrap_or(&[]));
                self.req.has_pending = true;
            }
        } else {
            self.req_flush_pending();
            self.req.pending.clear();
            self.req.pending.extend_from_slice(l);
            self.req.has_pending = true;
        }
    }

    fn req_flush_pending(&mut self) {
        if !self.req.has_pending || self.req_state == ReqState::Error {
            return;
        }
        let pending = std::mem::take(&mut self.req.pending);
        let folded = self.req.pending_folded;
        self.req.has_pending = false;
        self.req.pending_folded = false;
        let limit = self.cfg.headers_limit;
        let id = self.in_tx;
        let mut fail = false;
        if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
            let (name, value, f) = split_header(&pending, false);
            if f.missing_colon {
                tx.set_event(HttpEvent::RequestFieldMissingColon);
            } else if f.invalid {
                tx.set_event(HttpEvent::RequestHeaderInvalid);
            }
            if tx.req_headers.get(name).is_none() && tx.req_headers.len() >= limit {
                tx.set_event(HttpEvent::RequestTooManyHeaders);
                fail = true;
            } else {
                let o = tx
                    .req_headers
                    .add(name, value, if folded { FIELD_FOLDED } else { 0 });
                if o.cl_mismatch {
                    tx.set_event(HttpEvent::DuplicateContentLengthFieldInRequest);
                }
                if o.excess_repetition {
                    tx.set_event(HttpEvent::RequestHeaderRepetition);
                }
            }
            tx.cache.reset(0);
        }
        self.req.pending = pending;
        self.req.pending.clear();
        if fail {
            self.req_fail(HttpEvent::RequestTooManyHeaders);
        }
    }

    /// End of the request header block (or of the trailer).
    fn req_headers_done(&mut self) {
        let Some(id) = self.in_tx else { return };
        // The header data read so far is flushed below, once the headers are processed.
        self.req_hdr_flush = false;
        let layer_limit = self.cfg.response_body_decompress_layer_limit;
        let Some(tx) = self.tx_mut(id) else { return };
        if tx.req_progress == Progress::Trailer {
            self.req_complete();
            return;
        }
        let mut invalid = false;
        // Body framing.
        let te = tx.req_headers.get(b"transfer-encoding").map(|v| v.to_vec());
        let cl = tx.req_headers.get(b"content-length").map(|v| v.to_vec());
        if let Some(te) = te {
            if !contains_nocase(&te, b"chunked") {
                tx.req_coding = TransferCoding::Invalid;
                tx.set_event(HttpEvent::InvalidTransferEncodingValueInRequest);
                invalid = true;
            } else {
                if tx.req_proto < Protocol::V11 {
                    tx.set_event(HttpEvent::InvalidTransferEncodingValueInRequest);
                }
                tx.req_coding = TransferCoding::Chunked;
            }
        } else if let Some(cl) = cl {
            match parse_content_length(&cl) {
                Some(v) => {
                    tx.req_content_length = Some(v);
                    tx.req_coding = TransferCoding::Identity;
                }
                None => {
                    tx.req_coding = TransferCoding::Invalid;
                    tx.set_event(HttpEvent::InvalidContentLengthFieldInRequest);
                    invalid = true;
                }
            }
        } else {
            tx.req_coding = TransferCoding::NoBody;
        }
        // Hostname and port: from the URI when absolute, else from the Host header.
        tx.port = match tx.uri_port {
            Some(Some(p)) => i32::from(p),
            _ => -1,
        };
        tx.hostname = tx.uri_host.clone();
        let host = tx.req_headers.get(b"host").map(|v| v.to_vec());
        match host.as_deref() {
            None => {
                if tx.req_proto >= Protocol::V11 {
                    tx.set_event(HttpEvent::MissingHostHeader);
                }
            }
            Some(v) => {
                let hp = super::host::parse_hostport(v);
                if hp.invalid {
                    tx.set_event(HttpEvent::RequestHeaderHostInvalid);
                }
                match hp.hostname {
                    Some(h) => {
                        let hport = hp.port_number.map_or(-1, i32::from);
                        if tx.hostname.is_none() {
                            let mut hv = h.to_vec();
                            if hp.lower {
                                hv.make_ascii_lowercase();
                            }
                            tx.hostname = Some(hv);
                            tx.port = hport;
                        } else {
                            let differs = tx.hostname.as_deref().is_some_and(|u| !eq_nocase(u, h));
                            if differs || (tx.port != -1 && hport != -1 && tx.port != hport) {
                                tx.set_event(HttpEvent::HostHeaderAmbiguous);
                            }
                        }
                    }
                    None => {
                        if tx.hostname.is_some() {
                            tx.set_event(HttpEvent::HostHeaderAmbiguous);
                        }
                    }
                }
            }
        }
        if let Some(auth) = tx.req_headers.get(b"authorization").map(|v| v.to_vec()) {
            let a = auth.to_ascii_lowercase();
            if !(a.starts_with(b"basic") || a.starts_with(b"digest") || a.starts_with(b"bearer")) {
                tx.set_event(HttpEvent::RequestAuthUnrecognized);
            }
        }
        // The last flush of request header data (libhtp sends it once the headers are
        // processed).
        tx.check_request_flags(true);
        // Request body decompression (Suricata enables it).
        if let Some(ce) = tx.req_headers.get(b"content-encoding").map(|v| v.to_vec()) {
            let (mut abnormal, mut too_many) = (false, false);
            let c = codings(&ce, layer_limit.max(1), &mut abnormal, &mut too_many);
            if abnormal {
                tx.set_event(HttpEvent::AbnormalCeHeader);
            }
            if too_many {
                tx.set_event(HttpEvent::TooManyEncodingLayers);
            }
            if !c.is_empty() {
                tx.req_decoder = Some(Decoder::new(&c));
            }
        }
        tx.cache.reset(0);
        if invalid {
            tx.req_progress = Progress::Body;
            self.stats.parser_errors += 1;
            self.req_state = ReqState::Error;
            return;
        }
        if tx.method_kind == MethodKind::Connect {
            tx.req_progress = Progress::Complete;
            self.req_state = ReqState::ConnectWait;
            self.req.held.clear();
            return;
        }
        match tx.req_coding {
            TransferCoding::Chunked => {
                tx.req_progress = Progress::Body;
                self.req_state = ReqState::ChunkLen;
            }
            TransferCoding::Identity if tx.req_content_length.unwrap_or(0) > 0 => {
                tx.req_progress = Progress::Body;
                self.req_state = ReqState::BodyIdentity {
                    left: tx.req_content_length.unwrap_or(0),
                };
            }
            _ => {
                tx.req_progress = Progress::Body;
                self.req_complete();
            }
        }
    }

    fn req_body(&mut self, data: &[u8], wire: u64) {
        let limit = self.cfg.request_body_limit;
        let bomb_limit = self.cfg.compression_bomb_limit;
        let Some(id) = self.in_tx else { return };
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
        tx.req_message_len += wire;
        tx.want_request_file();
        let (failed, bomb) = body_data(
            &mut tx.req_body,
            &mut tx.req_decoder,
            tx.req_message_len,
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
        tx.take_multipart_events();
    }

    fn req_chunk_len(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        match read_line(&mut self.req.line, data, limit, 0) {
            LineRead::TooLong => {
                self.req_fail(HttpEvent::RequestFieldTooLong);
                data.len()
            }
            LineRead::Partial(n) => n,
            LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.req.line);
                let id = self.in_tx;
                if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                    tx.req_message_len += line.len() as u64;
                }
                match parse_chunk_len(&line) {
                    ChunkLen::Empty => {}
                    ChunkLen::Invalid => {
                        self.req.line = line;
                        self.req_fail(HttpEvent::InvalidRequestChunkLen);
                        return n;
                    }
                    ChunkLen::Len { len, ext } => {
                        if ext {
                            self.event(id, HttpEvent::RequestChunkExtension);
                        }
                        if len == 0 {
                            if let Some(tx) = id.and_then(|i| self.tx_mut(i)) {
                                tx.req_progress = Progress::Trailer;
                            }
                            self.req_state = ReqState::Headers;
                        } else {
                            self.req_state = ReqState::ChunkData { left: len };
                        }
                    }
                }
                self.req.line = line;
                self.req.line.clear();
                n
            }
        }
    }

    /// The request (of `in_tx`) is complete.
    pub(crate) fn req_complete(&mut self) {
        if let Some(id) = self.in_tx {
            self.frame_event(0, false, id);
        }
        let mut body_done = false;
        let next = match self.in_tx.and_then(|i| self.tx_mut(i)) {
            Some(tx) => {
                // Suricata's request complete callback.
                tx.check_request_flags(false);
                if tx.req_progress == Progress::Trailer && !tx.req_headers_raw.is_empty() {
                    tx.req_has_trailer = true;
                }
                tx.req_progress = Progress::Complete;
                tx.req_body.complete = true;
                tx.req_body.close_file(false);
                tx.req_decoder = None;
                body_done = tx.req_coding == TransferCoding::Identity
                    && tx.req_content_length.unwrap_or(0) > 0
                    && tx.req_message_len >= tx.req_content_length.unwrap_or(0);
                if tx.is_09 {
                    ReqState::Ignore09
                } else {
                    ReqState::Finalize
                }
            }
            None => ReqState::Idle,
        };
        self.req_last = self.in_tx;
        self.req_last_body_done = body_done;
        self.in_tx = None;
        self.req.reset();
        self.req_state = next;
    }

    /// After a request: a following line that does not start with a known method (or is
    /// blank) is more body of that request, as libhtp treats it; otherwise a new request
    /// starts.
    fn req_finalize(&mut self, data: &[u8]) -> usize {
        let limit = self.field_limit();
        match read_line(&mut self.req.line, data, limit, 0) {
            LineRead::TooLong => {
                self.req_fail(HttpEvent::RequestFieldTooLong);
                data.len()
            }
            LineRead::Partial(n) => n,
            LineRead::Complete(n) => {
                let line = std::mem::take(&mut self.req.line);
                let t = line
                    .iter()
                    .position(|&c| !is_space(c))
                    .unwrap_or(line.len());
                let rest = line.get(t..).unwrap_or(&[]);
                let e = rest.iter().position(|&c| is_space(c)).unwrap_or(rest.len());
                let method = rest.get(..e).unwrap_or(&[]);
                if method.is_empty() || MethodKind::of(method) == MethodKind::Unknown {
                    let unexpected = self.req_last_body_done && !method.is_empty();
                    if unexpected {
                        self.req_last_body_done = false;
                    }
                    self.req_late_body(&line, unexpected);
                    self.req.line = line;
                    self.req.line.clear();
                } else {
                    self.req_state = ReqState::Idle;
                    self.req.line.clear();
                    self.parse_request(&line);
                }
                n
            }
        }
    }

    /// Appends bytes that followed a finished request to its body.
    fn req_late_body(&mut self, data: &[u8], unexpected: bool) {
        let limit = self.cfg.request_body_limit;
        let bomb_limit = self.cfg.compression_bomb_limit;
        let Some(id) = self.req_last else { return };
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
        if unexpected {
            tx.set_event(HttpEvent::RequestBodyUnexpected);
        }
        tx.req_message_len += data.len() as u64;
        let mut none = None;
        body_data(
            &mut tx.req_body,
            &mut none,
            0,
            data,
            limit,
            bomb_limit,
            stats,
            &cfg.files,
        );
    }

    /// The CONNECT of the oldest waiting transaction was answered.
    pub(crate) fn req_connect_answered(&mut self, accepted: bool) {
        if self.req_state != ReqState::ConnectWait {
            return;
        }
        let held = std::mem::take(&mut self.req.held);
        // libhtp completes the CONNECT request once answered (Suricata's request complete
        // callback runs then).
        if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
            tx.check_request_flags(false);
        }
        self.in_tx = None;
        if accepted {
            self.req_state = ReqState::ConnectProbe;
        } else {
            self.req_state = ReqState::Idle;
        }
        self.req.reset();
        self.parse_request(&held);
        self.req.held = held;
        self.req.held.clear();
    }

    /// After an accepted CONNECT: HTTP continues if the client speaks HTTP, else tunnel.
    fn req_connect_probe(&mut self, data: &[u8]) -> usize {
        let limit = 64usize;
        let start = self.req.line.len();
        let take = limit.saturating_sub(start).min(data.len());
        self.req
            .line
            .extend_from_slice(data.get(..take).unwrap_or(&[]));
        let buf = &self.req.line;
        let m0 = buf.iter().position(|&c| !is_space(c));
        let decided = m0.and_then(|s| {
            let rest = buf.get(s..)?;
            let e = rest.iter().position(|&c| is_space(c))?;
            Some(MethodKind::of(rest.get(..e)?) != MethodKind::Unknown)
        });
        let decided = match decided {
            Some(d) => Some(d),
            None if buf.len() >= limit => Some(false),
            None => None,
        };
        match decided {
            None => take,
            Some(http) => {
                let buffered = std::mem::take(&mut self.req.line);
                self.req.reset();
                if http {
                    // Replay what was probed; the caller continues with the rest of `data`.
                    self.req_state = ReqState::Idle;
                    self.parse_request(&buffered);
                } else {
                    self.req_state = ReqState::Tunnel;
                    self.resp_state = super::parser::RespState::Tunnel;
                }
                take
            }
        }
    }

    pub(crate) fn request_gap(&mut self, len: u64) {
        let mut left_gap = len;
        while left_gap > 0 {
            match self.req_state {
                ReqState::Tunnel | ReqState::Ignore09 | ReqState::Error => return,
                ReqState::BodyIdentity { left } => {
                    let n = left.min(left_gap);
                    self.req_gap_body(n);
                    left_gap -= n;
                    if left == n {
                        self.req_complete();
                    } else {
                        self.req_state = ReqState::BodyIdentity { left: left - n };
                    }
                }
                ReqState::ChunkData { left } => {
                    let n = left.min(left_gap);
                    self.req_gap_body(n);
                    left_gap -= n;
                    self.req_state = if left == n {
                        ReqState::ChunkDataEnd
                    } else {
                        ReqState::ChunkData { left: left - n }
                    };
                }
                _ => {
                    // libhtp (`htp_connp_req_data`): "Gaps are not allowed during this
                    // state" is logged and the gap skipped; parsing goes on in the same state
                    // with the data after it.
                    self.stats.gap_errors += 1;
                    return;
                }
            }
        }
    }

    fn req_gap_body(&mut self, n: u64) {
        let files = self.cfg.files;
        let limit = self.cfg.request_body_limit;
        if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
            tx.req_message_len += n;
            tx.req_body.gap = true;
            // A PUT/POST body starting with a gap opens its file with the gap, as the
            // response side does.
            tx.want_request_file();
            let b = &mut tx.req_body;
            let within = b.depth_set || limit == 0 || b.total < limit;
            if b.file.is_none() && within {
                if let Some(name) = b.file_name.take() {
                    super::parser::open_body_file(b, &name, &files);
                }
            }
            if let Some(f) = tx.req_body.file.as_deref_mut() {
                f.gap(n);
            }
            if let Some(m) = tx.req_body.multipart.as_deref_mut() {
                m.gap();
            }
            if let Some(d) = tx.req_decoder.as_mut() {
                d.stop();
            }
        }
    }

    pub(crate) fn request_close(&mut self) {
        if self.req.closed {
            return;
        }
        self.req.closed = true;
        match self.req_state {
            ReqState::Probe09 => self.req_complete(),
            ReqState::Line if !self.req.line.is_empty() => {
                self.event(self.in_tx, HttpEvent::RequestLineIncomplete);
            }
            ReqState::Headers => {
                if !self.req.line.is_empty() {
                    let mut line = std::mem::take(&mut self.req.line);
                    if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
                        tx.req_headers_raw.extend_from_slice(&line);
                    }
                    line.push(b'\n');
                    self.req_header_line(&line);
                }
                self.req_flush_pending();
                if self.req_state == ReqState::Headers {
                    self.req_headers_done();
                }
                if self.in_tx.is_some() && self.req_state != ReqState::Error {
                    self.req_complete();
                }
            }
            ReqState::BodyIdentity { .. }
            | ReqState::ChunkLen
            | ReqState::ChunkData { .. }
            | ReqState::ChunkDataEnd => {
                // The body did not end: libhtp leaves the request incomplete and Suricata
                // ends its open files `TRUNCATED` at the end of the stream.
                if let Some(tx) = self.in_tx.and_then(|i| self.tx_mut(i)) {
                    tx.req_body.close_file(true);
                }
                self.req_complete()
            }
            _ => {}
        }
    }
}
