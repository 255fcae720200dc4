//! HTTP/2 (cleartext, by prior knowledge) as Suricata 7.0.10's `rust/src/http2` parses and
//! logs it: frames per direction, one transaction per stream plus one per frame on stream 0
//! (SETTINGS, GOAWAY, PING...), HPACK with a dynamic table per direction
//! ([`hpack`]), header blocks reassembled over CONTINUATION frames, and Suricata's events.
//! Records are written as Suricata 7 writes them: `event_type: http` with `version: "2"`,
//! `request_headers` / `response_headers` and an `http2` object.

pub mod hpack;
mod http1;
mod keywords;

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

use crate::files::{FileConfig, TrackedFile};
use crate::http::decompress::{Coding, Decoder};
use hpack::{Block, BlockKind, DynTable};

/// The client connection preface.
pub const MAGIC: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Suricata's `app-layer.protocols.http2.*` defaults.
pub const DEFAULT_MAX_STREAMS: usize = 4096;
/// `max-table-size`.
pub const DEFAULT_MAX_TABLE_SIZE: usize = 65536;
/// `max-reassembly-size`.
pub const DEFAULT_MAX_REASS: usize = 102_400;

const MAX_HANDLED_FRAME: usize = 65536;
const MIN_HANDLED_FRAME: usize = 256;
/// The HTTP/2 parser limits (`app-layer.protocols.http2`): Suricata's `max-streams`,
/// `max-table-size` and `max-reassembly-size`, process-wide as in Suricata.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Http2Config {
    /// `enabled: no` turns HTTP/2 off: neither detected nor upgraded to.
    pub enabled: bool,
    /// Most transactions (streams) held per flow (`too_many_streams` past it).
    pub max_streams: usize,
    /// Most dynamic table size accepted from a peer's SETTINGS.
    pub max_table_size: usize,
    /// Most bytes of a header block reassembled over CONTINUATION frames.
    pub max_reassembly_size: usize,
}

impl Default for Http2Config {
    fn default() -> Self {
        Http2Config {
            enabled: true,
            max_streams: DEFAULT_MAX_STREAMS,
            max_table_size: DEFAULT_MAX_TABLE_SIZE,
            max_reassembly_size: DEFAULT_MAX_REASS,
        }
    }
}

static ENABLED: AtomicBool = AtomicBool::new(true);

static LIMITS: [AtomicUsize; 3] = [
    AtomicUsize::new(DEFAULT_MAX_STREAMS),
    AtomicUsize::new(DEFAULT_MAX_TABLE_SIZE),
    AtomicUsize::new(DEFAULT_MAX_REASS),
];

impl Http2Config {
    /// Make these the limits of new flows.
    pub fn apply(&self) {
        ENABLED.store(self.enabled, Ordering::Relaxed);
        LIMITS[0].store(self.max_streams, Ordering::Relaxed);
        LIMITS[1].store(self.max_table_size, Ordering::Relaxed);
        LIMITS[2].store(self.max_reassembly_size, Ordering::Relaxed);
    }
}

/// Body bytes kept per transaction and direction for inspection.
pub const BODY_MAX: usize = 100 * 1024;
/// Frames kept per transaction and direction (for logging and keywords).
const MAX_FRAMES_PER_DIR: usize = 1024;

/// Frame types.
pub const FT_DATA: u8 = 0;
/// HEADERS.
pub const FT_HEADERS: u8 = 1;
/// PRIORITY.
pub const FT_PRIORITY: u8 = 2;
/// RST_STREAM.
pub const FT_RST_STREAM: u8 = 3;
/// SETTINGS.
pub const FT_SETTINGS: u8 = 4;
/// PUSH_PROMISE.
pub const FT_PUSH_PROMISE: u8 = 5;
/// PING.
pub const FT_PING: u8 = 6;
/// GOAWAY.
pub const FT_GOAWAY: u8 = 7;
/// WINDOW_UPDATE.
pub const FT_WINDOW_UPDATE: u8 = 8;
/// CONTINUATION.
pub const FT_CONTINUATION: u8 = 9;

const FLAG_EOS: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;

/// Event names (Suricata's `HTTP2Event`, in its order).
pub const EVENT_NAMES: &[&str] = &[
    "invalid_frame_header",
    "invalid_client_magic",
    "invalid_frame_data",
    "invalid_header",
    "invalid_frame_length",
    "extra_header_data",
    "long_frame_data",
    "stream_id_reuse",
    "invalid_http1_settings",
    "failed_decompression",
    "invalid_range",
    "header_integer_overflow",
    "too_many_streams",
    "authority_host_mismatch",
    "userinfo_in_uri",
    "reassembly_limit_reached",
];

#[derive(Clone, Copy)]
#[repr(u8)]
enum Ev {
    _InvalidFrameHeader = 0,
    InvalidClientMagic,
    InvalidFrameData,
    InvalidHeader,
    InvalidFrameLength,
    _ExtraHeaderData,
    LongFrameData,
    StreamIdReuse,
    InvalidHttp1Settings,
    FailedDecompression,
    InvalidRange,
    HeaderIntegerOverflow,
    TooManyStreams,
    AuthorityHostMismatch,
    UserinfoInUri,
    ReassemblyLimitReached,
}

/// Settings names as Suricata logs them (`SETTINGS` + the enum name upper-cased).
pub fn settings_name(id: u16) -> Option<&'static str> {
    Some(match id {
        1 => "SETTINGSHEADERTABLESIZE",
        2 => "SETTINGSENABLEPUSH",
        3 => "SETTINGSMAXCONCURRENTSTREAMS",
        4 => "SETTINGSINITIALWINDOWSIZE",
        5 => "SETTINGSMAXFRAMESIZE",
        6 => "SETTINGSMAXHEADERLISTSIZE",
        _ => return None,
    })
}

/// Error code names as Suricata's `HTTP2ErrorCode` Debug form.
pub fn error_name(code: u32) -> Option<&'static str> {
    Some(match code {
        0 => "NoError",
        1 => "ProtocolError",
        2 => "InternalError",
        3 => "FlowControlError",
        4 => "SettingsTimeout",
        5 => "StreamClosed",
        6 => "FrameSizeError",
        7 => "RefusedStream",
        8 => "Cancel",
        9 => "CompressionError",
        10 => "ConnectError",
        11 => "EnhanceYourCalm",
        12 => "InadequateSecurity",
        13 => "Http11Required",
        _ => return None,
    })
}

/// What a frame carried.
#[derive(Clone, Debug)]
pub enum FrameData {
    /// DATA.
    Data,
    /// HEADERS (blocks empty until END_HEADERS when split).
    Headers {
        /// Weight of the PRIORITY flag's fields.
        priority: Option<u8>,
        /// Decoded header block.
        blocks: Vec<Block>,
    },
    /// PRIORITY (weight).
    Priority(u8),
    /// RST_STREAM (error code).
    RstStream(u32),
    /// SETTINGS (id, value).
    Settings(Vec<(u16, u32)>),
    /// PUSH_PROMISE.
    PushPromise {
        /// Promised stream.
        stream: u32,
        /// Decoded header block.
        blocks: Vec<Block>,
    },
    /// PING.
    Ping,
    /// GOAWAY (error code).
    GoAway(u32),
    /// WINDOW_UPDATE (increment).
    WindowUpdate(u32),
    /// CONTINUATION.
    Continuation(Vec<Block>),
    /// Unknown type, bad length or not parsed.
    Unhandled,
}

impl FrameData {
    /// The header blocks this frame carries.
    pub fn blocks(&self) -> &[Block] {
        match self {
            FrameData::Headers { blocks, .. }
            | FrameData::PushPromise { blocks, .. }
            | FrameData::Continuation(blocks) => blocks,
            _ => &[],
        }
    }
}

/// One frame of a transaction.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Type.
    pub ftype: u8,
    /// Flags.
    pub flags: u8,
    /// Payload.
    pub data: FrameData,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum TxState {
    Open = 1,
    Reserved = 2,
    DataClient = 3,
    HalfClosedClient = 4,
    DataServer = 5,
    HalfClosedServer = 6,
    Closed = 7,
    Global = 8,
    Todrop = 9,
}

/// A stream (or one stream-0 frame): Suricata's HTTP2 transaction.
#[derive(Debug)]
pub struct Tx {
    /// Transaction id (from 0).
    pub id: u64,
    /// Stream id (0: a connection-level frame).
    pub stream_id: u32,
    state: TxState,
    child_stream_id: u32,
    /// Frames to the server.
    pub frames_ts: Vec<Frame>,
    /// Frames to the client.
    pub frames_tc: Vec<Frame>,
    events: u32,
    events_reported: u32,
    logged: bool,
    /// The DATA of each direction as a file (to server, to client).
    files: [Option<Box<TrackedFile>>; 2],
    /// Content-Encoding decoders (gzip, deflate, br) per direction.
    decoders: [Option<Box<BodyDecoder>>; 2],
    /// The response is a part of a larger file (`Content-Range`): its share in the
    /// byte-range reassembly (Suricata's `http2_range_open`).
    range: Option<Box<crate::file_range::Block>>,
    /// The whole file, when this response completed it.
    ranged: Option<Box<TrackedFile>>,
    /// The first [`BODY_MAX`] decoded bytes of each direction, for `file.data` and the
    /// body buffers.
    pub(crate) bodies: [Vec<u8>; 2],
}

impl Tx {
    fn new(id: u64, stream_id: u32, state: TxState) -> Self {
        Tx {
            id,
            stream_id,
            state,
            child_stream_id: 0,
            frames_ts: Vec::new(),
            frames_tc: Vec::new(),
            events: 0,
            events_reported: 0,
            logged: false,
            files: [None, None],
            decoders: [None, None],
            range: None,
            ranged: None,
            bodies: [Vec::new(), Vec::new()],
        }
    }

    /// The frames of direction `dir`.
    pub fn frames(&self, dir: Dir) -> &[Frame] {
        match dir {
            Dir::ToServer => &self.frames_ts,
            Dir::ToClient => &self.frames_tc,
        }
    }

    /// Complete (Suricata's progress at its completion state).
    pub fn complete(&self) -> bool {
        self.state >= TxState::Closed
    }

    /// The decoded headers of direction `dir`, in order.
    pub fn headers(&self, dir: Dir) -> impl Iterator<Item = &Block> {
        self.frames(dir)
            .iter()
            .flat_map(|f| f.data.blocks().iter())
            .filter(|b| b.kind == BlockKind::Header)
    }

    /// The first header named exactly `name` in direction `dir` (Suricata compares names
    /// byte for byte).
    pub fn header(&self, dir: Dir, name: &[u8]) -> Option<&[u8]> {
        self.headers(dir)
            .find(|b| b.name == name)
            .map(|b| &b.value[..])
    }

    fn set_event(&mut self, e: Ev) {
        self.events |= 1 << e as u8;
    }

    /// DATA payload going `dir`: decoded per Content-Encoding, into the file and the kept
    /// body.
    fn data(&mut self, dir: Dir, body: &[u8], eos: bool, cfg: &FileConfig) {
        let d = di(dir);
        if self.files[d].is_none() {
            // Suricata 7 opens HTTP/2 files without a name (no `filename` in fileinfo)
            self.files[d] = Some(Box::new(TrackedFile::open_unnamed(cfg)));
            self.decoders[d] = match self.header(dir, b"content-encoding") {
                Some(b"gzip") => Some(BodyDecoder::Flate(Decoder::new(&[Coding::Gzip]))),
                Some(b"deflate") => Some(BodyDecoder::Flate(Decoder::new(&[Coding::Deflate]))),
                Some(b"br") => Some(BodyDecoder::Brotli(
                    Box::new(brotli_decompressor::DecompressorWriter::new(
                        CapSink::default(),
                        4096,
                    )),
                    false,
                )),
                _ => None,
            }
            .map(Box::new);
            if dir == Dir::ToClient {
                self.open_range(cfg);
            }
        }
        let Tx {
            files,
            decoders,
            bodies,
            range,
            ..
        } = self;
        let Some(f) = files[d].as_deref_mut() else {
            return;
        };
        if f.is_done() {
            return;
        }
        let kept = &mut bodies[d];
        let mut sink = |b: &[u8]| {
            if let Some(r) = range.as_deref_mut() {
                r.append(b);
            }
            f.append(b);
            let n = b.len().min(BODY_MAX - kept.len().min(BODY_MAX));
            kept.extend_from_slice(&b[..n]);
            true
        };
        match decoders[d].as_deref_mut() {
            Some(BodyDecoder::Flate(dec)) => {
                let rep = dec.feed(body, &mut sink);
                if rep.failed {
                    self.events |= 1 << Ev::FailedDecompression as u8;
                }
            }
            Some(BodyDecoder::Brotli(w, failed)) => {
                if !*failed {
                    use std::io::Write;
                    let r = w.write_all(body);
                    let out = std::mem::take(&mut w.get_mut().buf);
                    sink(&out);
                    if r.is_err() {
                        *failed = true;
                        self.events |= 1 << Ev::FailedDecompression as u8;
                    }
                }
            }
            None => {
                sink(body);
            }
        }
        if eos {
            // The part's share first, then the part (Suricata's `http2_range_close` before
            // the file tracker closes the part).
            if let Some(mut r) = self.range.take() {
                self.ranged = r.close(false);
            }
            if let Some(f) = self.files[d].as_deref_mut() {
                f.close(false);
            }
        }
    }

    /// The response's `Content-Range` when its DATA starts (Suricata's
    /// `http2_parse_check_content_range` then `http2_range_open`): a part of a larger file
    /// joins the reassembly keyed by `:authority` (without port) and the last segment of
    /// `:path`.
    fn open_range(&mut self, cfg: &FileConfig) {
        let Some(v) = self.header(Dir::ToClient, b"content-range") else {
            return;
        };
        let r = crate::file_range::parse(v)
            .filter(|r| !(r.start > r.end || (r.end > 0 && r.size > 0 && r.end > r.size - 1)));
        let Some(r) = r else {
            self.set_event(Ev::InvalidRange);
            return;
        };
        if r.end <= 0 || r.size <= 0 || (r.end == r.size - 1 && r.start == 0) {
            return;
        }
        let (Some(auth), Some(path)) = (
            self.header(Dir::ToServer, b":authority"),
            self.header(Dir::ToServer, b":path"),
        ) else {
            return;
        };
        let host = auth.split(|&c| c == b':').next().unwrap_or(auth);
        let path = path.split(|&c| c == b'?').next().unwrap_or(path);
        let name = match path.iter().rposition(|&c| c == b'/') {
            Some(p) => &path[p..],
            None => path,
        };
        let mut key = host.to_vec();
        key.extend_from_slice(name);
        self.range = crate::file_range::open(&key, name, false, r, cfg, &[]).map(Box::new);
    }

    fn handle_headers(&mut self, blocks: &[Block]) {
        let mut authority = None;
        let mut host = None;
        for b in blocks {
            if b.name.eq_ignore_ascii_case(b":authority") {
                authority = Some(&b.value);
                if b.value.contains(&b'@') {
                    self.events |= 1 << Ev::UserinfoInUri as u8;
                }
            } else if b.name.eq_ignore_ascii_case(b"host") {
                host = Some(&b.value);
            }
        }
        if let (Some(a), Some(h)) = (authority, host) {
            if !a.eq_ignore_ascii_case(h) {
                self.set_event(Ev::AuthorityHostMismatch);
            }
        }
    }

    fn handle_frame(&mut self, ftype: u8, flags: u8, data: &FrameData, dir: Dir) {
        match data {
            FrameData::PushPromise { stream, blocks } => {
                if dir == Dir::ToClient {
                    if flags & FLAG_END_HEADERS == 0 {
                        self.child_stream_id = *stream;
                    }
                    self.state = TxState::Reserved;
                }
                self.handle_headers(blocks);
            }
            FrameData::Continuation(blocks) => {
                if dir == Dir::ToClient && flags & FLAG_END_HEADERS != 0 {
                    self.child_stream_id = 0;
                }
                self.handle_headers(blocks);
            }
            FrameData::Headers { blocks, .. } => {
                if dir == Dir::ToClient {
                    self.child_stream_id = 0;
                }
                self.handle_headers(blocks);
            }
            FrameData::RstStream(_) => self.child_stream_id = 0,
            _ => {}
        }
        if ftype == FT_HEADERS || ftype == FT_DATA {
            if flags & FLAG_EOS != 0 {
                match self.state {
                    TxState::HalfClosedClient | TxState::DataServer => {
                        if dir == Dir::ToClient {
                            self.state = TxState::Closed;
                        }
                    }
                    TxState::HalfClosedServer => {
                        if dir == Dir::ToServer {
                            self.state = TxState::Closed;
                        }
                    }
                    TxState::Closed | TxState::Global => {}
                    _ => {
                        self.state = if dir == Dir::ToClient {
                            TxState::HalfClosedServer
                        } else {
                            TxState::HalfClosedClient
                        };
                    }
                }
            } else if ftype == FT_DATA {
                let s = if dir == Dir::ToServer {
                    TxState::DataClient
                } else {
                    TxState::DataServer
                };
                if self.state < s {
                    self.state = s;
                }
            }
        }
    }
}

/// A body decoder (Suricata's http2 `decompression.rs`: gzip, deflate, brotli).
enum BodyDecoder {
    Flate(Decoder),
    /// Brotli into a bounded sink; true once it failed.
    Brotli(Box<brotli_decompressor::DecompressorWriter<CapSink>>, bool),
}

impl std::fmt::Debug for BodyDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BodyDecoder::Flate(_) => "Flate",
            BodyDecoder::Brotli(..) => "Brotli",
        })
    }
}

/// Most decoded bytes one DATA frame may produce (a decompression bomb stops there).
const MAX_DECODED_PER_FRAME: usize = 1 << 20;

/// Output of the brotli decoder, drained after each frame; refuses more than
/// [`MAX_DECODED_PER_FRAME`].
#[derive(Default)]
struct CapSink {
    buf: Vec<u8>,
}

impl std::io::Write for CapSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let room = MAX_DECODED_PER_FRAME.saturating_sub(self.buf.len());
        if room == 0 && !b.is_empty() {
            return Err(std::io::Error::other("decoded data limit"));
        }
        let n = b.len().min(room);
        self.buf.extend_from_slice(&b[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Per-direction framing state.
#[derive(Debug, Default)]
struct Side {
    /// Bytes of an incomplete frame.
    buf: Vec<u8>,
    /// Bytes of a too long frame still to skip.
    skip: u64,
    /// Header block fragments awaiting CONTINUATION.
    reass: Vec<u8>,
    reass_sid: u32,
    /// The direction is given up on.
    dead: bool,
}

/// The per-flow HTTP/2 parser.
#[derive(Debug)]
pub struct Http2State {
    txs: VecDeque<Tx>,
    next_id: u64,
    magic_done: bool,
    dyn_ts: DynTable,
    dyn_tc: DynTable,
    ts: Side,
    tc: Side,
    max_streams: usize,
    max_reass: usize,
    /// Frames seen on the connection (`http2.frametype` may match any).
    completed: u64,
    /// What files compute.
    files: FileConfig,
}

impl Default for Http2State {
    fn default() -> Self {
        Self::new(
            DEFAULT_MAX_STREAMS,
            DEFAULT_MAX_TABLE_SIZE,
            DEFAULT_MAX_REASS,
        )
    }
}

/// TCP content detection: the client preface from the client (prior knowledge). From the
/// server, a SETTINGS frame header as Suricata's `rs_http2_probing_parser_tc` checks it is
/// not decisive on its own: it waits (is kept) for the client's preface.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if !ENABLED.load(Ordering::Relaxed) {
        return Probe::No;
    }
    if dir == Dir::ToClient {
        // each byte seen must fit a SETTINGS header of at most 16384 bytes
        let fits = |i: usize, f: fn(u8) -> bool| data.get(i).is_none_or(|&b| f(b));
        let ok = fits(0, |b| b == 0)
            && fits(1, |b| b <= 0x40)
            && fits(3, |b| b == FT_SETTINGS)
            && fits(4, |b| b & 0xfe == 0)
            && fits(5, |b| b & 0x80 == 0)
            && (data.len() < 3 || u32::from(data[1]) << 8 | u32::from(data[2]) <= 16384);
        return if ok { Probe::NeedMore } else { Probe::No };
    }
    let n = data.len().min(MAGIC.len());
    if data[..n] != MAGIC[..n] {
        Probe::No
    } else if n < MAGIC.len() {
        Probe::NeedMore
    } else {
        Probe::Yes
    }
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    let l = |i: usize| LIMITS[i].load(Ordering::Relaxed);
    Box::new(Http2State {
        files: cfg.http.files,
        ..Http2State::new(l(0), l(1), l(2))
    })
}

/// Buffer ids.
const BUF_HEADER_NAME: u16 = 0;

/// The registry entry.
pub static PROTOCOL: Protocol = Protocol {
    name: "http2",
    aliases: &[],
    ip_protos: &[6],
    ports: &[],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[BufferDesc {
        name: "http2.header_name",
        dir: None,
    }],
    events: EVENT_NAMES,
    keywords: keywords::KEYWORDS,
    generic_stats: true,
};

impl Http2State {
    /// A parser with the given limits (`max-streams`, `max-table-size`,
    /// `max-reassembly-size`).
    pub fn new(max_streams: usize, max_table: usize, max_reass: usize) -> Self {
        Http2State {
            txs: VecDeque::new(),
            next_id: 0,
            magic_done: false,
            dyn_ts: DynTable::new(max_table),
            dyn_tc: DynTable::new(max_table),
            ts: Side::default(),
            tc: Side::default(),
            max_streams: max_streams.max(1),
            max_reass,
            completed: 0,
            files: FileConfig::default(),
        }
    }

    /// Transaction `id` if still held.
    pub fn tx(&self, id: u64) -> Option<&Tx> {
        let first = self.txs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get(i).filter(|t| t.id == id)
    }

    /// Transactions held.
    pub fn txs(&self) -> impl Iterator<Item = &Tx> {
        self.txs.iter()
    }

    fn set_event(&mut self, e: Ev) {
        if let Some(t) = self.txs.back_mut() {
            t.set_event(e);
        }
    }

    fn too_many(&mut self) {
        for t in self.txs.iter_mut() {
            if t.state == TxState::Todrop {
                break;
            }
            t.set_event(Ev::TooManyStreams);
            t.state = TxState::Todrop;
        }
    }

    fn find_tx_index(&self, sid: u32) -> Option<usize> {
        self.txs.iter().rposition(|t| t.stream_id == sid)
    }

    fn find_or_create(
        &mut self,
        sid_hdr: u32,
        ftype: u8,
        data: &FrameData,
        dir: Dir,
    ) -> Option<usize> {
        if sid_hdr == 0 {
            if self.txs.len() >= self.max_streams {
                self.too_many();
                return None;
            }
            self.txs
                .push_back(Tx::new(self.next_id, 0, TxState::Global));
            self.next_id += 1;
            return Some(self.txs.len() - 1);
        }
        let sid = match data {
            FrameData::PushPromise { stream, .. } => *stream,
            FrameData::Continuation(_) if dir == Dir::ToClient => {
                match self.find_tx_index(sid_hdr) {
                    Some(i) if self.txs[i].child_stream_id > 0 => self.txs[i].child_stream_id,
                    _ => sid_hdr,
                }
            }
            _ => sid_hdr,
        };
        if let Some(i) = self.find_tx_index(sid) {
            if self.txs[i].state == TxState::Closed
                && ftype != FT_RST_STREAM
                && ftype != FT_WINDOW_UPDATE
                && ftype != FT_PRIORITY
            {
                self.set_event(Ev::StreamIdReuse);
            }
            return Some(i);
        }
        if self.txs.len() >= self.max_streams {
            self.too_many();
            return None;
        }
        self.txs
            .push_back(Tx::new(self.next_id, sid, TxState::Open));
        self.next_id += 1;
        Some(self.txs.len() - 1)
    }

    fn process_blocks(&mut self, blocks: &[Block], dir: Dir) {
        let mut sizeup = None;
        for b in blocks {
            match b.kind {
                BlockKind::Header => {}
                BlockKind::SizeUpdate(n) => sizeup = Some(sizeup.unwrap_or(0).max(n)),
                BlockKind::IntegerOverflow => {
                    self.set_event(Ev::InvalidHeader);
                    self.set_event(Ev::HeaderIntegerOverflow);
                }
                _ => self.set_event(Ev::InvalidHeader),
            }
        }
        if let Some(n) = sizeup {
            let t = match dir {
                Dir::ToClient => &mut self.dyn_tc,
                Dir::ToServer => &mut self.dyn_ts,
            };
            t.max_size = usize::try_from(n).unwrap_or(usize::MAX);
        }
    }

    fn decode_blocks(&mut self, input: &[u8], dir: Dir, complete: bool) -> Option<Vec<Block>> {
        let table = match dir {
            Dir::ToClient => &mut self.dyn_tc,
            Dir::ToServer => &mut self.dyn_ts,
        };
        let (blocks, truncated) = hpack::decode(input, table);
        if truncated {
            // Suricata's nom parser fails the whole frame on incomplete data
            if complete {
                self.set_event(Ev::InvalidFrameData);
            }
            return None;
        }
        self.process_blocks(&blocks, dir);
        Some(blocks)
    }

    fn side(&mut self, dir: Dir) -> &mut Side {
        match dir {
            Dir::ToServer => &mut self.ts,
            Dir::ToClient => &mut self.tc,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn frame_data(
        &mut self,
        ftype: u8,
        flags: u8,
        sid: u32,
        p: &[u8],
        complete: bool,
        dir: Dir,
        reass_limit: &mut bool,
    ) -> FrameData {
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        match ftype {
            FT_GOAWAY => {
                if p.len() < 4 {
                    self.set_event(Ev::InvalidFrameLength);
                    return FrameData::Unhandled;
                }
                FrameData::GoAway(be32(p))
            }
            FT_SETTINGS => {
                let mut v = Vec::new();
                for c in p.chunks_exact(6) {
                    let id = u16::from_be_bytes([c[0], c[1]]);
                    if settings_name(id).is_none() {
                        break;
                    }
                    v.push((id, be32(&c[2..])));
                }
                for &(id, val) in &v {
                    if id == 1 {
                        // what we accept from the other end
                        match dir {
                            Dir::ToClient => self.dyn_ts.set_peer_size(val),
                            Dir::ToServer => self.dyn_tc.set_peer_size(val),
                        }
                    }
                }
                FrameData::Settings(v)
            }
            FT_RST_STREAM | FT_WINDOW_UPDATE => {
                if p.len() != 4 {
                    self.set_event(Ev::InvalidFrameLength);
                    return FrameData::Unhandled;
                }
                if ftype == FT_RST_STREAM {
                    FrameData::RstStream(be32(p))
                } else {
                    FrameData::WindowUpdate(be32(p) & 0x7fff_ffff)
                }
            }
            FT_PRIORITY => {
                if p.len() != 5 {
                    self.set_event(Ev::InvalidFrameLength);
                    return FrameData::Unhandled;
                }
                FrameData::Priority(p[4])
            }
            FT_PUSH_PROMISE => {
                let mut q = p;
                if flags & FLAG_PADDED != 0 {
                    if q.is_empty() {
                        return self.incomplete(complete);
                    }
                    q = &q[1..];
                }
                if q.len() < 4 {
                    return self.incomplete(complete);
                }
                let stream = be32(q) & 0x7fff_ffff;
                match self.decode_blocks(&q[4..], dir, complete) {
                    Some(blocks) => FrameData::PushPromise { stream, blocks },
                    None => FrameData::Unhandled,
                }
            }
            FT_DATA => FrameData::Data,
            FT_PING => FrameData::Ping,
            FT_CONTINUATION => {
                let max = self.max_reass;
                let s = self.side(dir);
                let same = sid == s.reass_sid;
                if same {
                    if s.reass.len() + p.len() < max {
                        s.reass.extend_from_slice(p);
                    } else if s.reass.len() < max {
                        let n = max - s.reass.len();
                        s.reass.extend_from_slice(&p[..n]);
                        *reass_limit = true;
                    }
                    if flags & FLAG_END_HEADERS == 0 {
                        return FrameData::Continuation(Vec::new());
                    }
                }
                let input = if same {
                    let s = self.side(dir);
                    s.reass_sid = 0;
                    std::mem::take(&mut s.reass)
                } else {
                    p.to_vec()
                };
                match self.decode_blocks(&input, dir, complete) {
                    Some(blocks) => FrameData::Continuation(blocks),
                    None => FrameData::Unhandled,
                }
            }
            FT_HEADERS => {
                if flags & FLAG_END_HEADERS == 0 {
                    let max = self.max_reass;
                    let s = self.side(dir);
                    s.reass.clear();
                    s.reass.extend_from_slice(&p[..p.len().min(max)]);
                    s.reass_sid = sid;
                    return FrameData::Headers {
                        priority: None,
                        blocks: Vec::new(),
                    };
                }
                let mut q = p;
                if flags & FLAG_PADDED != 0 {
                    if q.is_empty() {
                        return self.incomplete(complete);
                    }
                    q = &q[1..];
                }
                let mut priority = None;
                if flags & FLAG_PRIORITY != 0 {
                    if q.len() < 5 {
                        return self.incomplete(complete);
                    }
                    priority = Some(q[4]);
                    q = &q[5..];
                }
                match self.decode_blocks(q, dir, complete) {
                    Some(blocks) => FrameData::Headers { priority, blocks },
                    None => FrameData::Unhandled,
                }
            }
            _ => FrameData::Unhandled,
        }
    }

    fn incomplete(&mut self, complete: bool) -> FrameData {
        if complete {
            self.set_event(Ev::InvalidFrameData);
        }
        FrameData::Unhandled
    }

    /// Parses frames from `input`; returns the bytes consumed, or `Err` when the parser
    /// gives up.
    fn parse_frames(&mut self, input: &[u8], dir: Dir) -> Result<usize, ()> {
        let mut off = 0;
        while input.len() - off >= 9 {
            let h = &input[off..off + 9];
            let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            let ftype = h[3];
            let flags = h[4];
            let sid = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            let rem = &input[off + 9..];
            let mut complete = true;
            let mut avail = len;
            if rem.len() < len {
                if len < MAX_HANDLED_FRAME || rem.len() < MIN_HANDLED_FRAME {
                    return Ok(off);
                }
                self.set_event(Ev::LongFrameData);
                complete = false;
                avail = rem.len();
                self.side(dir).skip = (len - avail) as u64;
            }
            let payload = &rem[..avail];
            off += 9 + avail;
            if len == 0 && ftype == FT_SETTINGS {
                continue;
            }
            let mut reass_limit = false;
            let data = self.frame_data(ftype, flags, sid, payload, complete, dir, &mut reass_limit);
            let Some(i) = self.find_or_create(sid, ftype, &data, dir) else {
                return Err(());
            };
            let tx = &mut self.txs[i];
            if reass_limit {
                tx.set_event(Ev::ReassemblyLimitReached);
            }
            tx.handle_frame(ftype, flags, &data, dir);
            if ftype == FT_DATA {
                let mut body = payload;
                if flags & FLAG_PADDED != 0 {
                    if let Some((&pad, rest)) = body.split_first() {
                        body = &rest[..rest.len().saturating_sub(usize::from(pad))];
                    }
                }
                let cfg = self.files;
                let tx = &mut self.txs[i];
                tx.data(dir, body, flags & FLAG_EOS != 0, &cfg);
            }
            let tx = &mut self.txs[i];
            let frames = match dir {
                Dir::ToServer => &mut tx.frames_ts,
                Dir::ToClient => &mut tx.frames_tc,
            };
            if frames.len() < MAX_FRAMES_PER_DIR || !data.blocks().is_empty() {
                frames.push(Frame { ftype, flags, data });
            }
            self.completed += 1;
            if !complete {
                break;
            }
        }
        Ok(off)
    }

    fn parse_dir(&mut self, dir: Dir, mut data: &[u8]) -> bool {
        if self.side(dir).dead {
            return false;
        }
        if dir == Dir::ToServer && !self.magic_done {
            let have = self.ts.buf.len();
            let need = MAGIC.len() - have;
            let take = need.min(data.len());
            self.ts.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.ts.buf.len() < MAGIC.len() {
                return false;
            }
            self.magic_done = true;
            let magic = std::mem::take(&mut self.ts.buf);
            if magic[..] != MAGIC[..] {
                if std::str::from_utf8(&magic).is_err() {
                    self.ts.dead = true;
                    return true;
                }
                self.set_event(Ev::InvalidClientMagic);
            }
        }
        let s = self.side(dir);
        if s.skip > 0 {
            let n = usize::try_from(s.skip)
                .unwrap_or(usize::MAX)
                .min(data.len());
            s.skip -= n as u64;
            data = &data[n..];
        }
        if data.is_empty() {
            return false;
        }
        let mut buf = std::mem::take(&mut self.side(dir).buf);
        let r = if buf.is_empty() {
            self.parse_frames(data, dir).map(|n| {
                buf.extend_from_slice(&data[n..]);
            })
        } else {
            buf.extend_from_slice(data);
            self.parse_frames(&buf, dir).map(|n| {
                buf.drain(..n);
            })
        };
        match r {
            Ok(()) => {
                // bytes of a frame being skipped may already sit in `buf`
                let s = self.side(dir);
                if s.skip > 0 && !buf.is_empty() {
                    let n = usize::try_from(s.skip).unwrap_or(usize::MAX).min(buf.len());
                    s.skip -= n as u64;
                    buf.drain(..n);
                }
                self.side(dir).buf = buf;
                false
            }
            Err(()) => {
                self.side(dir).dead = true;
                true
            }
        }
    }

    fn write_http(&self, t: &Tx, w: &mut JsonWriter) {
        w.open_object("http");
        w.set_str("version", "2");
        let mut method = None;
        let mut path = None;
        let mut host = None;
        let mut ua = None;
        let mut status = None;
        let mut length = None;
        for (key, frames) in [
            ("request_headers", &t.frames_ts),
            ("response_headers", &t.frames_tc),
        ] {
            let has = frames
                .iter()
                .any(|f| matches!(f.ftype, FT_HEADERS | FT_PUSH_PROMISE | FT_CONTINUATION));
            if !has {
                continue;
            }
            w.open_array(key);
            for f in frames {
                for b in f.data.blocks() {
                    w.start_object();
                    match b.kind {
                        BlockKind::Header => {
                            w.set_bytes("name", &b.name);
                            w.set_bytes("value", &b.value);
                            let v = Some(&b.value[..]);
                            match &b.name.to_ascii_lowercase()[..] {
                                b":method" => method = v,
                                b":path" => path = v,
                                b":status" => status = v,
                                b"user-agent" => ua = v,
                                b"host" => host = v,
                                b"content-length" => length = v,
                                _ => {}
                            }
                        }
                        BlockKind::SizeUpdate(n) => {
                            w.set_u64("table_size_update", n);
                        }
                        ref k => {
                            w.set_str("error", k.error_name());
                        }
                    }
                    w.close();
                }
            }
            w.close();
        }
        let num = |v: Option<&[u8]>| {
            v.and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|s| s.parse::<u64>().ok())
        };
        if let Some(v) = method {
            w.set_bytes("http_method", v);
        }
        if let Some(v) = path {
            w.set_bytes("url", v);
        }
        if let Some(v) = host {
            w.set_bytes("hostname", v);
        }
        if let Some(v) = ua {
            w.set_bytes("http_user_agent", v);
        }
        if let Some(n) = num(length) {
            w.set_u64("length", n);
        }
        if let Some(n) = num(status) {
            w.set_u64("status", n);
        }
        w.open_object("http2");
        w.set_u64("stream_id", u64::from(t.stream_id));
        w.open_object("request");
        write_frames(&t.frames_ts, w);
        w.close();
        w.open_object("response");
        write_frames(&t.frames_tc, w);
        w.close();
        w.close();
        w.close();
    }
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

/// Whether Suricata's `rs_http2_log_json` writes anything for `t` (headers, settings, an
/// error code or a priority).
fn has_log(t: &Tx) -> bool {
    t.frames_ts.iter().chain(&t.frames_tc).any(|f| {
        matches!(
            f.data,
            FrameData::Settings(_)
                | FrameData::GoAway(_)
                | FrameData::RstStream(_)
                | FrameData::Priority(_)
                | FrameData::Headers { .. }
                | FrameData::PushPromise { .. }
                | FrameData::Continuation(_)
        ) || matches!(f.ftype, FT_HEADERS | FT_PUSH_PROMISE | FT_CONTINUATION)
    })
}

fn write_frames(frames: &[Frame], w: &mut JsonWriter) {
    let mut has_settings = false;
    for f in frames {
        if let FrameData::Settings(set) = &f.data {
            if !has_settings {
                w.open_array("settings");
                has_settings = true;
            }
            for &(id, v) in set {
                w.start_object();
                w.set_str("settings_id", settings_name(id).unwrap_or(""));
                w.set_u64("settings_value", u64::from(v));
                w.close();
            }
        }
    }
    if has_settings {
        w.close();
    }
    let mut has_error = false;
    let mut has_priority = false;
    let mut has_multiple = false;
    for f in frames {
        let (err, upper, prio) = match &f.data {
            FrameData::GoAway(c) => (Some(*c), true, None),
            FrameData::RstStream(c) => (Some(*c), false, None),
            FrameData::Priority(p) => (None, false, Some(*p)),
            FrameData::Headers {
                priority: Some(p), ..
            } => (None, false, Some(*p)),
            _ => continue,
        };
        if let Some(c) = err {
            if !has_error {
                match error_name(c) {
                    Some(n) if upper => w.set_str("error_code", &n.to_uppercase()),
                    Some(n) => w.set_str("error_code", n),
                    None => w.set_str("error_code", &c.to_string()),
                };
                has_error = true;
            } else if !has_multiple {
                w.set_str("has_multiple", "error_code");
                has_multiple = true;
            }
        }
        if let Some(p) = prio {
            if !has_priority {
                w.set_u64("priority", u64::from(p));
                has_priority = true;
            } else if !has_multiple {
                w.set_str("has_multiple", "priority");
                has_multiple = true;
            }
        }
    }
}

impl AppParser for Http2State {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        self.parse_dir(dir, data)
    }

    fn gap(&mut self, dir: Dir, _len: u64) {
        // framing is lost in this direction
        let s = self.side(dir);
        s.dead = true;
        s.buf = Vec::new();
        s.reass = Vec::new();
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, _dir: Dir) -> u64 {
        self.completed
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer_ready(&self, tx: u64, _buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        Some(closed || t.complete())
    }

    fn buffer(&self, tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        match buf {
            BUF_HEADER_NAME => t.headers(dir).any(|b| f(&b.name)),
            _ => false,
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.tx(tx)
            .is_some_and(|t| ev < 32 && t.events & (1 << ev) != 0)
    }

    fn files(&self, tx: u64, dir: Dir, f: &mut dyn FnMut(&TrackedFile)) {
        let d = match dir {
            Dir::ToServer => 0,
            Dir::ToClient => 1,
        };
        let Some(t) = self.tx(tx) else {
            return;
        };
        // The whole file a part completed comes first (Suricata adds it before the part).
        if d == 1 {
            if let Some(file) = t.ranged.as_deref() {
                f(file);
            }
        }
        if let Some(file) = t.files[d].as_deref() {
            f(file);
        }
    }

    fn files_mut(&mut self, tx: u64, dir: Dir, f: &mut dyn FnMut(&mut TrackedFile)) {
        let d = match dir {
            Dir::ToServer => 0,
            Dir::ToClient => 1,
        };
        let Some(t) = self.txs.iter_mut().find(|t| t.id == tx) else {
            return;
        };
        if d == 1 {
            if let Some(file) = t.ranged.as_deref_mut() {
                f(file);
            }
        }
        if let Some(file) = t.files[d].as_deref_mut() {
            f(file);
        }
    }

    fn tx_final(&self, tx: u64, closed: bool) -> bool {
        closed || self.tx(tx).is_none_or(|t| t.complete())
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let write = c.write && c.out.wants_type("http2");
        let files = c.write && c.out.wants_type("files");
        for i in 0..self.txs.len() {
            let t = &self.txs[i];
            if t.logged || !(t.complete() || c.closed) || t.state == TxState::Todrop {
                continue;
            }
            for f in self.txs[i].files.iter_mut().flatten() {
                if !f.is_done() {
                    f.close(true);
                }
            }
            let t = &self.txs[i];
            if c.write {
                let all = [
                    (0, t.files[0].as_deref()),
                    (1, t.ranged.as_deref()),
                    (1, t.files[1].as_deref()),
                ];
                for (d, f) in all {
                    let Some(f) = f else { continue };
                    if !(files || crate::files::wants_fileinfo_file(f)) {
                        continue;
                    }
                    if let Some(mut rec) = c.out.record(EventKind::Other) {
                        let hdr = c.rec.header("fileinfo", d == 0);
                        write_eve_header(&mut rec, &hdr);
                        self.write_http(t, &mut rec);
                        rec.set_str("app_proto", "http2");
                        rec.open_object("fileinfo");
                        f.write_eve(&mut rec, t.id, None);
                        rec.close();
                        rec.close();
                        crate::files::finish_fileinfo(rec, f, hdr.timestamp_ns, files);
                    }
                }
            }
            if write && has_log(t) {
                if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                    write_eve_header(&mut rec, &c.rec.header("http", true));
                    rec.set_u64("tx_id", t.id);
                    self.write_http(t, &mut rec);
                    rec.close();
                    let _ = rec.commit();
                }
            }
            c.logged += 1;
            self.txs[i].logged = true;
        }
        // Free what was logged and inspected (in order, as ids index the deque).
        while self.txs.front().is_some_and(|t| {
            (t.logged || (t.state == TxState::Todrop && t.events_reported == t.events))
                && (t.id < c.inspected || c.closed)
        }) {
            self.txs.pop_front();
        }
        *c.next = self
            .txs
            .iter()
            .find(|t| !t.logged)
            .map_or(self.next_id, |t| t.id);
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut().filter(|t| t.id >= from) {
            let new = t.events & !t.events_reported;
            t.events_reported = t.events;
            for (i, name) in EVENT_NAMES.iter().enumerate() {
                if new & (1 << i) != 0 {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
                    });
                }
            }
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        match self.tx(tx) {
            Some(t) => {
                self.write_http(t, w);
                true
            }
            None => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// An HTTP/1 flow upgraded to HTTP/2 (`Upgrade: h2c`, `101`), until its HTTP/1
/// transactions are logged: the upgrade request and the data of each direction since.
#[derive(Debug)]
pub struct H2cPending {
    request: Vec<(Vec<u8>, Vec<u8>)>,
    bufs: [Vec<u8>; 2],
}

/// base64url (RFC 4648 section 5, padding optional) as HTTP2-Settings carries it.
fn base64url(v: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(v.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in v.iter().take_while(|c| **c != b'=') {
        let x = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(x);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Most bytes kept per direction while the switch waits.
const H2C_BUF_MAX: usize = 64 * 1024;

impl H2cPending {
    /// Whether `data` (to the client) completed a `101` answering an `Upgrade: h2c`
    /// request on `h`: the pending switch, with what followed the 101 in `data`.
    pub fn check(h: &crate::http::HttpState, data: &[u8]) -> Option<Box<H2cPending>> {
        if !h.is_tunnel() || !ENABLED.load(Ordering::Relaxed) {
            return None;
        }
        let t = h.tx(h.tx_count().checked_sub(1)?)?;
        if t.status_number() != Some(101) {
            return None;
        }
        let up = t.request_headers().get(b"upgrade")?;
        if !up
            .split(|c| *c == b',')
            .any(|v| v.trim_ascii().eq_ignore_ascii_case(b"h2c"))
        {
            return None;
        }
        let mut request = vec![
            (b":method".to_vec(), t.method().unwrap_or_default().to_vec()),
            (b":path".to_vec(), t.uri_raw().unwrap_or_default().to_vec()),
        ];
        for (n, v) in t.request_headers().iter() {
            let n = if n.eq_ignore_ascii_case(b"host") {
                &b":authority"[..]
            } else {
                n
            };
            request.push((n.to_vec(), v.to_vec()));
        }
        let mut p = Box::new(H2cPending {
            request,
            bufs: [Vec::new(), Vec::new()],
        });
        // what followed the 101's header block in this segment is HTTP/2
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            p.push(Dir::ToClient, &data[i + 4..]);
        }
        Some(p)
    }

    /// Data of `dir` while waiting (bounded).
    pub fn push(&mut self, dir: Dir, data: &[u8]) {
        let b = &mut self.bufs[di(dir)];
        let n = data.len().min(H2C_BUF_MAX.saturating_sub(b.len()));
        b.extend_from_slice(&data[..n]);
    }

    /// The HTTP/2 parser taking over (first transaction id `base`, stream 1 the upgrade
    /// request) and the data to feed it.
    pub fn into_parser(self, base: u64, cfg: &ParserConfig) -> (Box<dyn AppParser>, [Vec<u8>; 2]) {
        let l = |i: usize| LIMITS[i].load(Ordering::Relaxed);
        let mut st = Http2State {
            files: cfg.http.files,
            ..Http2State::new(l(0), l(1), l(2))
        };
        st.next_id = base + 1;
        let settings_header = self
            .request
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(b"http2-settings"))
            .map(|(_, v)| v.clone());
        let mut tx = Tx::new(base, 1, TxState::HalfClosedClient);
        let blocks = self
            .request
            .into_iter()
            .map(|(name, value)| Block {
                name,
                value,
                kind: BlockKind::Header,
            })
            .collect();
        tx.frames_ts.push(Frame {
            ftype: FT_HEADERS,
            flags: FLAG_END_HEADERS | FLAG_EOS,
            data: FrameData::Headers {
                priority: None,
                blocks,
            },
        });
        st.txs.push_back(tx);
        // The request's HTTP2-Settings (base64url SETTINGS payload) as a connection-level
        // transaction of the client, as Suricata does.
        if let Some(v) = settings_header {
            let mut g = Tx::new(st.next_id, 0, TxState::Global);
            st.next_id += 1;
            match base64url(&v) {
                Some(p) if p.len() % 6 == 0 => {
                    let mut set = Vec::new();
                    for c in p.chunks_exact(6) {
                        let id = u16::from_be_bytes([c[0], c[1]]);
                        if settings_name(id).is_none() {
                            break;
                        }
                        let val = u32::from_be_bytes([c[2], c[3], c[4], c[5]]);
                        if id == 1 {
                            st.dyn_tc.set_peer_size(val);
                        }
                        set.push((id, val));
                    }
                    g.frames_ts.push(Frame {
                        ftype: FT_SETTINGS,
                        flags: 0,
                        data: FrameData::Settings(set),
                    });
                }
                _ => g.set_event(Ev::InvalidHttp1Settings),
            }
            st.txs.push_back(g);
        }
        (Box::new(st), self.bufs)
    }
}

#[cfg(test)]
mod tests;
