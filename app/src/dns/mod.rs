//! DNS over UDP and TCP, equivalent to Suricata 7's DNS parser.
//!
//! * [`probe_udp`] / [`probe_tcp`] recognise DNS and tell which direction the data goes;
//! * [`DnsState`] is the per-flow parser: [`DnsState::parse`] takes a datagram (UDP) or the next
//!   stream bytes (TCP, 2-byte length prefix, messages split or batched anyhow);
//! * each message becomes a [`DnsTx`] (Suricata 7's model: requests and responses are separate
//!   transactions, numbered from 0 per flow);
//! * detection buffers: [`DnsTx::query_names`] (`dns.query` / `dns_query`, a multi-buffer) and
//!   [`DnsTx::opcode`] (`dns.opcode`);
//! * events use Suricata's names ([`DnsEvent::name`], `app-layer-event:dns.<name>`).
//!
//! Memory: a message's names and data are capped by [`DnsConfig::max_message_arena`], a TCP
//! direction buffers at most one pending message (65,537 bytes), and at most
//! [`DnsConfig::max_txs`] transactions are held; every limit hit is counted in [`DnsStats`].

pub mod consts;
pub mod eve;
pub mod message;
mod proto;
mod state;

pub use message::{DnsHeader, DnsMessage, NameFlags, Query, RData, Record, Sections, Soa, Span};
pub use proto::PROTOCOL;
pub use state::{DnsState, DnsTx, ParseResult};

use crate::Dir;

/// Parser limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DnsConfig {
    /// Most bytes of names and record data kept per message; a message that needs more is
    /// treated as malformed and counted.
    pub max_message_arena: usize,
    /// Most transactions held per flow; the oldest is dropped (and counted) past this.
    pub max_txs: usize,
    /// Decode every section of every message. Off (Suricata 7): requests are decoded up to
    /// their questions, responses up to their authorities.
    pub parse_additionals: bool,
}

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig {
            max_message_arena: 256 * 1024,
            max_txs: 512,
            parse_additionals: false,
        }
    }
}

/// DNS app-layer events (Suricata 7 names, see `dns-events.rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DnsEvent {
    /// A message failed to decode.
    MalformedData = 0,
    /// A response seen in the to-server direction.
    NotRequest = 1,
    /// A request seen in the to-client direction.
    NotResponse = 2,
    /// The reserved Z bit was set.
    ZFlagSet = 3,
    /// Opcode 7 or above.
    InvalidOpcode = 4,
    /// A name longer than 1025 bytes was truncated.
    NameTooLong = 5,
    /// A compression pointer pointed at itself.
    InfiniteLoop = 6,
    /// More than 255 labels in a name.
    TooManyLabels = 7,
}

impl DnsEvent {
    /// Every event.
    pub const ALL: [DnsEvent; 8] = [
        DnsEvent::MalformedData,
        DnsEvent::NotRequest,
        DnsEvent::NotResponse,
        DnsEvent::ZFlagSet,
        DnsEvent::InvalidOpcode,
        DnsEvent::NameTooLong,
        DnsEvent::InfiniteLoop,
        DnsEvent::TooManyLabels,
    ];

    /// Suricata's name (`app-layer-event:dns.<name>`).
    pub fn name(self) -> &'static str {
        match self {
            DnsEvent::MalformedData => "malformed_data",
            DnsEvent::NotRequest => "not_request",
            DnsEvent::NotResponse => "not_response",
            DnsEvent::ZFlagSet => "z_flag_set",
            DnsEvent::InvalidOpcode => "invalid_opcode",
            DnsEvent::NameTooLong => "name_too_long",
            DnsEvent::InfiniteLoop => "infinite_loop",
            DnsEvent::TooManyLabels => "too_many_labels",
        }
    }

    /// The event for a name, if any.
    pub fn from_name(n: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == n)
    }
}

/// A set of [`DnsEvent`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnsEvents(u16);

impl DnsEvents {
    /// Add an event.
    pub fn set(&mut self, e: DnsEvent) {
        self.0 |= 1 << (e as u8);
    }
    /// Whether `e` is set.
    pub fn has(self, e: DnsEvent) -> bool {
        self.0 & (1 << (e as u8)) != 0
    }
    /// Whether no event is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The events set, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = DnsEvent> {
        DnsEvent::ALL.into_iter().filter(move |e| self.has(*e))
    }
}

/// DNS parser counters for one flow or one worker (merge to aggregate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnsStats {
    /// Messages that failed to decode.
    pub malformed: u64,
    /// Messages ignored or rejected for an implausible header.
    pub invalid_header: u64,
    /// Messages over the arena limit.
    pub memcap: u64,
    /// Transactions dropped because too many were held.
    pub tx_dropped: u64,
    /// Events raised.
    pub events: u64,
}

impl DnsStats {
    /// Add `o` into `self`.
    pub fn merge(&mut self, o: &Self) {
        self.malformed += o.malformed;
        self.invalid_header += o.invalid_header;
        self.memcap += o.memcap;
        self.tx_dropped += o.tx_dropped;
        self.events += o.events;
    }

    /// Name each counter. The names are shrike's (Suricata has no per-reason DNS counters;
    /// it only counts parser errors under `app_layer.error.dns_*.parser`).
    pub fn visit(&self, f: &mut dyn FnMut(&str, u64)) {
        f("app_layer.dns.malformed", self.malformed);
        f("app_layer.dns.invalid_header", self.invalid_header);
        f("app_layer.dns.memcap", self.memcap);
        f("app_layer.dns.tx_dropped", self.tx_dropped);
        f("app_layer.dns.events", self.events);
    }
}

/// Outcome of protocol probing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// It is DNS; `dir` is the direction the data goes by its content (a request goes to the
    /// server). When it differs from the direction it was seen in, the flow is reversed.
    Yes {
        /// Direction implied by the QR bit.
        dir: Dir,
    },
    /// Not DNS.
    No,
    /// Not enough data to tell yet.
    NeedMore,
}

/// Decide whether `msg` (of declared length `dlen`) is DNS, as Suricata's probe does: a
/// message that parses as a request-shaped message (or whose header is plausible when the data
/// is incomplete), with an assigned opcode and counts that fit.
fn probe_message(msg: &[u8], dlen: usize) -> Probe {
    let msg = msg.get(..dlen).unwrap_or(msg);
    let dir_of = |is_req: bool| {
        if is_req {
            Dir::ToServer
        } else {
            Dir::ToClient
        }
    };
    if msg.len() < dlen {
        return match state::header_valid(msg, dlen) {
            Some(r) => Probe::Yes { dir: dir_of(r) },
            None if msg.len() < message::HEADER_LEN => Probe::NeedMore,
            None => Probe::No,
        };
    }
    // Suricata's probe parses the header and the questions only (`dns_parse_request`), for
    // a response too: what follows (an UPDATE's prerequisites and updates) does not count.
    let mut m = DnsMessage::default();
    match m.decode_sections(msg, 64 * 1024, message::Sections::Questions) {
        Ok(()) | Err(message::DecodeError::Truncated) | Err(message::DecodeError::TooLarge) => {
            match state::header_valid(msg, dlen) {
                Some(r) => Probe::Yes { dir: dir_of(r) },
                None => Probe::No,
            }
        }
        Err(message::DecodeError::Short) => Probe::NeedMore,
        Err(message::DecodeError::Invalid) => Probe::No,
    }
}

/// Probe one UDP payload.
pub fn probe_udp(data: &[u8]) -> Probe {
    if data.len() < message::HEADER_LEN {
        return Probe::No;
    }
    match probe_message(data, data.len()) {
        Probe::NeedMore => Probe::No,
        p => p,
    }
}

/// Probe the start of a TCP stream (2-byte length prefix, then the message).
pub fn probe_tcp(data: &[u8]) -> Probe {
    if data.len() < 2 + message::HEADER_LEN {
        return Probe::NeedMore;
    }
    let dlen = u16::from_be_bytes([data[0], data[1]]) as usize;
    probe_message(&data[2..], dlen)
}

/// Probe with the flow's transport: `tcp` selects [`probe_tcp`], else [`probe_udp`]. The
/// direction the data was seen in does not change the answer; compare it with the returned
/// direction to decide whether to reverse the flow.
pub fn probe(_dir: Dir, data: &[u8], tcp: bool) -> Probe {
    if tcp {
        probe_tcp(data)
    } else {
        probe_udp(data)
    }
}
