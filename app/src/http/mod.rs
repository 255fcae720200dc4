//! HTTP/1.0 and 1.1 parsing, as Suricata 7 (libhtp 0.5, IDS personality) does it, for the
//! `http.*` rule keywords, `app-layer-event:http.*` and EVE `http` records.
//!
//! One [`HttpState`] per flow is fed the reassembled stream of each direction with
//! [`HttpState::parse`] (each call is one chunk of data at hand, as libhtp's), told about missing data
//! with [`HttpState::gap`] and about stream ends with [`HttpState::close`]. Requests and
//! responses pair up in order into transactions ([`HttpTx`], ids from 0); pipelining,
//! HTTP/0.9, folded and repeated headers, Content-Length and chunked bodies (extensions,
//! trailers), bodies delimited by the close, 100-continue, HEAD/204/304, CONNECT and 101
//! upgrades are handled. Bodies are de-chunked and gzip/deflate-decoded (both directions, as
//! Suricata enables request decompression) and kept up to `request-body-limit` /
//! `response-body-limit`; decompression stops at the compression-bomb limit.
//!
//! Rule buffers come from [`HttpState::buffer`] / [`HttpState::for_each_buffer`] with an
//! [`HttpBuffer`]; EVE fields from [`HttpState::write_eve`]; detection on any port from
//! [`probe`].
//!
//! Behaviour matched against Suricata 7.0.10, including its quirks: `http.host` is
//! lower-cased only when the Host header has no port (then neither lower-cased nor stripped
//! of a trailing dot); a host from an absolute URI is lower-cased and loses trailing dots;
//! `http.uri` keeps `+` in the query and folds UTF-8 in the path to single bytes (invalid
//! sequences become `?`); a status token like `2X0` gives status 2 plus
//! `response_invalid_status`; an HTTP/0.9 transaction logs `http_port: 0`.
//!
//! Where libhtp's outcome depends on where its input chunks end, shrike follows it in these
//! cases: a request or response is complete when no more data is at hand (REQ_FINALIZE /
//! RES_FINALIZE), so the next chunk starts a new message even when it does not begin with a
//! method or status line (RTSP over HTTP, text sent to an SSH server); a response read as
//! body without a status line ends with the chunk; a junk line is skipped when a line
//! starting with `H` follows in the same chunk. Known differences, all segmentation
//! dependent: header folding across segments, HTTP/0.9 probing, and the field limit (libhtp
//! checks it only on lines that span segments). Also: the compression-bomb ratio is computed per fed segment, decoding
//! stops quietly once the body is full and 4x `compression-bomb-limit` is decoded,
//! LZMA is not decoded, and only the IDS personality is implemented.
//!
//! Wiring: create one [`HttpState`] per flow once [`probe`] (or a port hint) says HTTP;
//! feed reassembled data with [`HttpState::parse`], report gaps and FINs; inspect
//! transactions `0..tx_count()` by [`Progress`] ([`HttpBuffer::min_progress`] tells when a
//! buffer is final; [`HttpState::body_ready`] implements the minimal inspect sizes and the inspect window);
//! log EVE `http` with [`HttpState::write_eve`] once a transaction is complete (or the flow
//! ends); then [`HttpState::free_txs_before`]. Stop feeding on [`HttpState::is_tunnel`].

mod bestfit;
mod buffers;
mod config;
pub(crate) mod decompress;
mod eve;
mod events;
mod headers;
mod host;
mod multipart;
mod parser;
mod probe;
mod proto;
mod reqline;
mod request;
mod response;
mod tx;
mod uri;
mod util;

pub use buffers::{tx_buffer, HttpBuffer};
pub use config::{parse_size, HttpConfig, Ignored};
pub use eve::{custom_fields, write_eve_http, EveHttpOptions, EveJson, EveOut, CUSTOM_FIELDS};
pub use events::{HttpEvent, HttpEvents};
pub use headers::HeaderTable;
pub use parser::{HttpState, HttpStats};
pub use probe::{probe, ProbeResult};
pub use proto::PROTOCOL;
pub use response::URI_NOT_SEEN;
pub use tx::{Body, HttpTx, MethodKind, Progress, Protocol, TransferCoding};
