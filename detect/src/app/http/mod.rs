//! HTTP/1.0 and 1.1 parsing, as Suricata 7 (libhtp 0.5, IDS personality) does it, for the
//! `http.*` rule keywords, `app-layer-event:http.*` and EVE `http` records.
//!
//! One [`HttpState`] per flow is fed the reassembled stream of each direction with
//! [`HttpState::parse`] (any segmentation gives the same result), told about missing data
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
//! Known differences from libhtp: decisions libhtp takes on where a segment ends (header
//! folding across segments, HTTP/0.9 probing, the field limit only checked when a line spans
//! segments) are taken on the bytes instead; a Content-Length-less request followed by a
//! line that is not a request is parsed as a new request, not as unexpected body; multipart
//! request files are not extracted (`file.data` to server covers PUT bodies only); LZMA is
//! not decoded.

mod bestfit;
mod buffers;
mod config;
mod decompress;
mod eve;
mod events;
mod headers;
mod parser;
mod probe;
mod request;
mod response;
mod tx;
mod uri;
mod util;

pub use buffers::{tx_buffer, HttpBuffer};
pub use config::{parse_size, HttpConfig, Ignored};
pub use eve::{write_eve_http, EveHttpOptions, EveJson, EveSink};
pub use events::{HttpEvent, HttpEvents};
pub use headers::HeaderTable;
pub use parser::{HttpState, HttpStats};
pub use probe::{probe, ProbeResult};
pub use response::URI_NOT_SEEN;
pub use tx::{Body, HttpTx, MethodKind, Progress, Protocol, TransferCoding};
