//! The protocol registry: what every application protocol provides, and the one table that
//! lists them.
//!
//! A protocol is a folder under `app/src/` that exports a [`Protocol`] description (a
//! `static`) and a per-flow parser type implementing [`AppParser`]. Registering it is one line
//! in [`PROTOCOLS`]. Everything else in shrike reaches the protocol through these two:
//!
//! * detection ([`crate::layer::AppLayer`]) runs the [`Protocol::tcp`] / [`Protocol::udp`]
//!   probes (content patterns on any port, probing parsers on the protocol's ports);
//! * the stream hands the parser in-order data per direction with gaps
//!   ([`AppParser::parse`], [`AppParser::gap`], [`AppParser::close`]);
//! * detection (`shrike-detect`) resolves the rule header (`alert ssh ...`), the sticky
//!   buffers ([`Protocol::buffers`], read with [`AppParser::buffer`]) and
//!   `app-layer-event:<proto>.<name>` ([`Protocol::events`], [`AppParser::has_event`]) by
//!   name, and inspects each live transaction ([`AppParser::live_txs`]);
//! * the EVE protocol records and the protocol object inside alerts are written by the
//!   parser itself ([`AppParser::log`], [`AppParser::alert_members`]) through the shared
//!   [`crate::log::RecordCtx`]; app-layer events go to `anomaly` records through
//!   [`AppParser::drain_events`].
//!
//! `docs/adding-a-protocol.md` walks through adding one (SSH).

use std::any::Any;

use shrike_output::{EveOutput, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::log::{LogOptions, RecordCtx};
use crate::{AppProto, Dir};

/// Outcome of probing the first bytes of a direction (or one datagram).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// This is the protocol.
    Yes,
    /// This is the protocol, and the data runs the other way (a response seen first on
    /// UDP: Suricata's probing parser sets `rdir` and the flow is reversed).
    YesReversed,
    /// This is not the protocol.
    No,
    /// Too few bytes to tell.
    NeedMore,
}

/// How a protocol is recognised on one transport.
#[derive(Clone, Copy)]
pub enum Detect {
    /// Not on this transport.
    None,
    /// Content patterns (Suricata's pattern-based detection): tried on any port, on the
    /// protocol's own ports before the others.
    Pattern(fn(Dir, &[u8]) -> Probe),
    /// A probing parser, tried only when either port is one of [`Protocol::ports`].
    Port(fn(Dir, &[u8]) -> Probe),
}

impl std::fmt::Debug for Detect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Detect::None => "None",
            Detect::Pattern(_) => "Pattern",
            Detect::Port(_) => "Port",
        })
    }
}

/// A sticky buffer a protocol offers to rules.
#[derive(Clone, Copy, Debug)]
pub struct BufferDesc {
    /// The keyword (`ssh.software`), as the rule parser resolves it.
    pub name: &'static str,
    /// The only direction it is inspected in (`None`: both).
    pub dir: Option<Dir>,
}

/// A protocol keyword that is not a sticky buffer (`mqtt.type`, `snmp.version`,
/// `dhcp.leasetime`): the protocol parses the rule's value and decides on a transaction.
#[derive(Clone, Copy)]
pub struct KeywordDesc {
    /// The keyword as rules write it.
    pub name: &'static str,
    /// The only direction it is inspected in (`None`: both).
    pub dir: Option<Dir>,
    /// Parse the rule's value (`None`: the keyword has none). `Err(reason)` rejects the
    /// rule, as Suricata's setup function does.
    pub setup: KeywordSetup,
}

/// [`KeywordDesc::setup`]: the rule's value (if any) to a matcher, or why it is refused.
pub type KeywordSetup = fn(Option<&str>) -> Result<Box<dyn TxMatch>, String>;

impl std::fmt::Debug for KeywordDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeywordDesc")
            .field("name", &self.name)
            .field("dir", &self.dir)
            .finish()
    }
}

/// A compiled protocol keyword ([`KeywordDesc::setup`]'s result).
pub trait TxMatch: Send + Sync + std::fmt::Debug {
    /// On transaction `tx` of `parser` (the protocol's own parser: downcast it with
    /// [`AppParser::as_any`]) seen going `dir`: `Some(result)` once decided, `None` while the
    /// transaction does not hold what the keyword reads yet (asked again later; at the end
    /// of the flow it counts as no match).
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool>;
}

/// A protocol's `detection-ports` on one transport (Suricata's `dp` and `sp` lists):
/// inclusive port ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DetectPorts {
    /// Matched against the flow's server (destination) port.
    pub dp: Vec<(u16, u16)>,
    /// Matched against the flow's client (source) port.
    pub sp: Vec<(u16, u16)>,
}

impl DetectPorts {
    /// Parses Suricata's `dp`/`sp` values (`53`, `"[80, 8080]"`, `"1024:"`, `"100:200"`,
    /// `any`); `None` when a value is malformed or both are missing.
    pub fn parse(dp: Option<&str>, sp: Option<&str>) -> Option<DetectPorts> {
        if dp.is_none() && sp.is_none() {
            return None;
        }
        Some(DetectPorts {
            dp: dp.map_or(Some(Vec::new()), parse_port_list)?,
            sp: sp.map_or(Some(Vec::new()), parse_port_list)?,
        })
    }

    /// Whether the flow's ports select the protocol's probing parser.
    pub fn matches(&self, server_port: u16, client_port: u16) -> bool {
        let has = |l: &[(u16, u16)], p: u16| l.iter().any(|&(a, b)| (a..=b).contains(&p));
        has(&self.dp, server_port) || has(&self.sp, client_port)
    }
}

/// A Suricata port list without negation: `53`, `[53, 5353]`, `1024:`, `:80`, `10:20`, `any`.
pub fn parse_port_list(s: &str) -> Option<Vec<(u16, u16)>> {
    let s = s.trim();
    let inner = s
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(s);
    let mut out = Vec::new();
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.eq_ignore_ascii_case("any") {
            out.push((0, u16::MAX));
            continue;
        }
        let r = match part.split_once(':') {
            Some((a, b)) => {
                let a = if a.trim().is_empty() {
                    0
                } else {
                    a.trim().parse().ok()?
                };
                let b = if b.trim().is_empty() {
                    u16::MAX
                } else {
                    b.trim().parse().ok()?
                };
                (a, b)
            }
            None => {
                let p = part.parse().ok()?;
                (p, p)
            }
        };
        if r.0 > r.1 {
            return None;
        }
        out.push(r);
    }
    (!out.is_empty()).then_some(out)
}

/// What the parsers are built from (the `app-layer.protocols.*` settings).
#[derive(Clone, Debug, Default)]
pub struct ParserConfig {
    /// HTTP (libhtp's settings).
    pub http: std::sync::Arc<crate::http::HttpConfig>,
    /// DNS.
    pub dns: crate::dns::DnsConfig,
    /// TLS.
    pub tls: crate::tls::TlsConfig,
    /// `app-layer.protocols.<name>.enabled` by registry index: [`MODE_FULL`] (yes),
    /// [`MODE_DETECTION_ONLY`] (detected, not parsed), [`MODE_DISABLED`] (no).
    pub modes: ProtoModes,
    /// `app-layer.protocols.<name>[.tcp|.udp].detection-ports` by registry index, `[tcp,
    /// udp]`: where set, the ports a probing parser runs on instead of
    /// [`Protocol::ports`].
    pub ports: std::sync::Arc<Vec<[Option<DetectPorts>; 2]>>,
    /// MQTT.
    pub mqtt: crate::mqtt::MqttConfig,
    /// PostgreSQL.
    pub pgsql: crate::pgsql::PgsqlConfig,
    /// SMTP (`app-layer.protocols.smtp.*`).
    pub smtp: std::sync::Arc<crate::smtp::SmtpConfig>,
    /// FTP (`app-layer.protocols.ftp.*`).
    pub ftp: crate::ftp::FtpConfig,
    /// SMB (`app-layer.protocols.smb.*`).
    pub smb: crate::smb::SmbConfig,
    /// What the registry protocols' files compute (eve-log `files: force-hash`,
    /// `force-magic`).
    pub files: crate::files::FileConfig,
    /// DNP3 (`app-layer.protocols.dnp3.*`).
    pub dnp3: crate::dnp3::Dnp3Config,
    /// Modbus (`app-layer.protocols.modbus.*`).
    pub modbus: crate::modbus::ModbusConfig,
    /// NFS (`app-layer.protocols.nfs.*`).
    pub nfs: crate::nfs::NfsConfig,
    /// DCERPC (`app-layer.protocols.dcerpc.*`).
    pub dcerpc: crate::dcerpc::DcerpcConfig,
}

impl ParserConfig {
    /// Whether protocol `name` is detected and parsed (`app-layer.protocols.<name>.enabled`,
    /// for MQTT and PostgreSQL so far; only PostgreSQL is off by default, as in Suricata 7's
    /// `suricata.yaml`).
    pub fn enabled(&self, name: &str) -> bool {
        match name {
            "pgsql" => self.pgsql.enabled,
            "mqtt" => self.mqtt.enabled,
            "dnp3" => self.dnp3.enabled,
            "modbus" => self.modbus.enabled,
            _ => true,
        }
    }

    /// The reassembly depth protocol `name` sets for its flows
    /// (`app-layer.protocols.<name>.stream-depth`, 0: unlimited), if it sets one.
    pub fn stream_depth(&self, name: &str) -> Option<u64> {
        match name {
            "pgsql" => Some(self.pgsql.stream_depth),
            "smb" => Some(self.smb.stream_depth),
            "modbus" => self.modbus.stream_depth,
            _ => None,
        }
    }
}

/// Per-protocol modes by registry index ([`MODE_FULL`] by default).
#[derive(Clone, Debug)]
pub struct ProtoModes(pub [u8; MAX_PROTOCOLS]);

impl Default for ProtoModes {
    fn default() -> Self {
        ProtoModes([MODE_FULL; MAX_PROTOCOLS])
    }
}

impl std::ops::Deref for ProtoModes {
    type Target = [u8; MAX_PROTOCOLS];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ProtoModes {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// A protocol detected and parsed (`enabled: yes`, the default).
pub const MODE_FULL: u8 = 0;
/// A protocol detected but not parsed (`enabled: detection-only`).
pub const MODE_DETECTION_ONLY: u8 = 1;
/// A protocol neither detected nor parsed (`enabled: no`).
pub const MODE_DISABLED: u8 = 2;

/// The static description of one application protocol.
#[derive(Debug)]
pub struct Protocol {
    /// The name in EVE (`app_proto`, the record's `event_type`) and in rule headers.
    pub name: &'static str,
    /// Other names rule headers and `app-layer-protocol` accept (`http1`, `ssl`).
    pub aliases: &'static [&'static str],
    /// IP protocols a rule header with this name covers.
    pub ip_protos: &'static [u8],
    /// The protocol's usual ports: its probes run first there, and [`Detect::Port`] probes
    /// run only there.
    pub ports: &'static [u16],
    /// Recognition on TCP streams.
    pub tcp: Detect,
    /// Recognition on UDP datagrams.
    pub udp: Detect,
    /// A new per-flow parser (`tcp`: the flow is TCP).
    pub new_parser: fn(&ParserConfig, bool) -> Box<dyn AppParser>,
    /// Sticky buffers for rules; a buffer's id is its index here.
    pub buffers: &'static [BufferDesc],
    /// `app-layer-event:<name>.<event>` names; an event's id is its index here.
    pub events: &'static [&'static str],
    /// Keywords other than sticky buffers ([`KeywordDesc`]).
    pub keywords: &'static [KeywordDesc],
    /// Count `app_layer.flow.<name>` and `app_layer.tx.<name>` generically (the first
    /// protocols keep their own per-transport counters, as Suricata names them).
    pub generic_stats: bool,
}

/// Where logged and inspected transactions stand, kept per flow by the app layer.
#[derive(Debug)]
pub struct LogCtx<'a> {
    /// Shared parts of every record of the flow.
    pub rec: RecordCtx<'a>,
    /// Where records go.
    pub out: &'a mut EveOutput,
    /// Per-protocol EVE options.
    pub opts: &'a LogOptions,
    /// Write records (false: only account and free).
    pub write: bool,
    /// The flow ended: log everything left.
    pub closed: bool,
    /// Transactions below this id were logged (the parser moves it on).
    pub next: &'a mut u64,
    /// Transactions below this id were inspected by detection in both directions.
    pub inspected: u64,
    /// Set once the flow's single record was written (one-record protocols such as TLS).
    pub flow_logged: &'a mut bool,
    /// Transactions logged by this call (the caller counts them).
    pub logged: u64,
    /// Direction of the packet being logged (`None`: flow end).
    pub pkt_dir: Option<Dir>,
    /// The flow's protocol before a protocol change (unknown when none): TLS records name it
    /// in `from_proto`.
    pub orig_proto: AppProto,
}

/// A connection a flow announced (Suricata's app-layer expectation).
#[derive(Debug)]
pub struct Expect {
    /// The new flow's server port.
    pub port: u16,
    /// Its protocol.
    pub proto: AppProto,
    /// Its parser, set up with what the announcing flow knew.
    pub parser: Box<dyn AppParser>,
}

/// The per-flow parser of one protocol.
pub trait AppParser: std::fmt::Debug + Send + Any {
    /// In-order data in direction `dir`. Returns true when the parser gave up on the flow's
    /// data with this call (Suricata's `app_layer.error.<proto>.parser`).
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool;
    /// [`AppParser::parse`] with frames: a protocol that has frames
    /// ([`crate::frames::names`]) marks them through `fc` (called instead of `parse` while
    /// one of its frame types is enabled).
    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        let _ = fc;
        self.parse(dir, data)
    }
    /// `len` bytes of direction `dir` are missing.
    fn gap(&mut self, dir: Dir, len: u64);
    /// The flow ended: finish what can be finished.
    fn close(&mut self) {}
    /// The stream reached its reassembly depth in `dir` (Suricata's `STREAM_DEPTH`): files
    /// open in that direction end `TRUNCATED` now (`FileTruncateAllOpenFiles` on the
    /// parser's `APP_LAYER_PARSER_TRUNC_*`). Called with each later delivery too, as
    /// Suricata passes the flag on every call.
    fn truncate(&mut self, _dir: Dir) {}
    /// Transactions so far (ids are `0..tx_count()`, some may be freed).
    fn tx_count(&self) -> u64;
    /// Transactions complete in `dir` so far (a monotonic count): the stream engine is asked
    /// for raw inspection when it grows.
    fn complete_in(&self, _dir: Dir) -> u64 {
        0
    }
    /// The live transactions detection inspects on a packet going `dir`.
    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>);
    /// Whether buffer `buf` of transaction `tx` can be inspected now (`Some(final)`), or
    /// not yet (`None`).
    fn buffer_ready(&self, _tx: u64, _buf: u16, _dir: Dir, _closed: bool) -> Option<bool> {
        Some(true)
    }
    /// Call `f` with each item of buffer `buf` of transaction `tx` until it returns true;
    /// returns whether it did.
    fn buffer(&self, _tx: u64, _buf: u16, _dir: Dir, _f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        false
    }
    /// Whether event `ev` (an index into [`Protocol::events`]) was raised on transaction `tx`.
    fn has_event(&self, _tx: u64, _ev: u16) -> bool {
        false
    }
    /// Whether transaction `tx` is final for an event-only rule (no more events can come).
    fn tx_final(&self, _tx: u64, _closed: bool) -> bool {
        true
    }
    /// Write the EVE records of the transactions completed since the last call and free
    /// what detection and logging no longer need.
    fn log(&mut self, c: &mut LogCtx<'_>);
    /// Report the events raised since the last call on transactions not logged yet
    /// (`from`: the first such transaction), each once, for EVE `anomaly` records.
    fn drain_events(&mut self, _from: u64, _flow_logged: bool, _f: &mut dyn FnMut(AppAnomaly)) {}
    /// The members an alert from transaction `tx` carries beside `alert` (`"ssh":{...}`);
    /// returns false when there is nothing to write.
    fn alert_members(&self, _tx: u64, _w: &mut JsonWriter) -> bool {
        false
    }
    /// Connections the flow announced (FTP `PASV`/`PORT` then `RETR`/`STOR`: the data
    /// connection), taken by the app layer; the next flow between the same two addresses
    /// to port [`Expect::port`] gets [`Expect::parser`].
    fn take_expected(&mut self, _out: &mut Vec<Expect>) {}
    /// The flow's client and server addresses (IPv4 in bytes 0..4), told before each
    /// data the parser gets (FTP's `ftpbounce` compares the `PORT` address with the
    /// client's).
    fn flow_addrs(&mut self, _client: &[u8; 16], _server: &[u8; 16]) {}
    /// The protocol the flow changes to (SMTP `STARTTLS` accepted: TLS); the app layer
    /// then hands the flow's next data to a new parser of that protocol.
    fn switch_to(&self) -> Option<AppProto> {
        None
    }
    /// Call `f` with each file of transaction `tx` going `dir` (the `files` array of alerts,
    /// file keywords); protocols without files keep the default.
    fn files(&self, _tx: u64, _dir: Dir, _f: &mut dyn FnMut(&crate::files::TrackedFile)) {}
    /// A `filestore` rule matched transaction `tx` in `dir`: files are no longer cut by the
    /// protocol's body limit (Suricata's `SetStreamDepthFlag`, HTTP's).
    fn lift_file_limit(&mut self, _tx: u64, _dir: Dir) {}
    /// As [`AppParser::files`], mutable (a `filestore` rule asks for the files).
    fn files_mut(
        &mut self,
        _tx: u64,
        _dir: Dir,
        _f: &mut dyn FnMut(&mut crate::files::TrackedFile),
    ) {
    }
    /// DCERPC carried by this flow, for the `dcerpc.*` keywords (DCERPC itself, and SMB for
    /// DCERPC over named pipes); protocols without keep the default.
    fn dce(&self) -> Option<&dyn crate::dcerpc::DceView> {
        None
    }
    /// For the protocol's own keywords in the engine (downcast to the parser's type).
    fn as_any(&self) -> &dyn Any;
    /// Mutable [`AppParser::as_any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// Every protocol shrike parses, in detection order (ties between content patterns go to
/// the earlier one). Adding a protocol: one line here.
pub static PROTOCOLS: &[&Protocol] = &[
    &crate::http::PROTOCOL,
    &crate::dns::PROTOCOL,
    &crate::tls::PROTOCOL,
    &crate::ssh::PROTOCOL,
    &crate::smtp::PROTOCOL,
    &crate::ftp::PROTOCOL,
    &crate::ftp::data::PROTOCOL,
    &crate::sip::PROTOCOL,
    &crate::rfb::PROTOCOL,
    &crate::tftp::PROTOCOL,
    &crate::telnet::PROTOCOL,
    &crate::snmp::PROTOCOL,
    &crate::dhcp::PROTOCOL,
    &crate::ike::PROTOCOL,
    &crate::krb5::PROTOCOL,
    &crate::ntp::PROTOCOL,
    &crate::mqtt::PROTOCOL,
    &crate::pgsql::PROTOCOL,
    &crate::http2::PROTOCOL,
    &crate::dcerpc::PROTOCOL,
    &crate::smb::PROTOCOL,
    &crate::enip::PROTOCOL,
    &crate::quic::PROTOCOL,
    &crate::imap::PROTOCOL,
    &crate::dnp3::PROTOCOL,
    &crate::modbus::PROTOCOL,
    &crate::bittorrent_dht::PROTOCOL,
    &crate::rdp::PROTOCOL,
    &crate::nfs::PROTOCOL,
];

/// Most protocols the registry can hold (the size of per-protocol counter arrays).
pub const MAX_PROTOCOLS: usize = 48;

impl AppProto {
    /// No protocol decided yet.
    pub const UNKNOWN: AppProto = AppProto(0);
    /// Detection ran and gave up (Suricata logs `failed`).
    pub const FAILED: AppProto = AppProto(1);
    /// HTTP/1.x ([`PROTOCOLS`]`[0]`).
    pub const HTTP: AppProto = AppProto(2);
    /// DNS ([`PROTOCOLS`]`[1]`).
    pub const DNS: AppProto = AppProto(3);
    /// TLS ([`PROTOCOLS`]`[2]`).
    pub const TLS: AppProto = AppProto(4);

    /// DCERPC ([`PROTOCOLS`]`[19]`; checked by a test).
    pub const DCERPC: AppProto = AppProto(2 + 19);
    /// SMB ([`PROTOCOLS`]`[20]`; checked by a test).
    pub const SMB: AppProto = AppProto(2 + 20);

    /// Whether a rule of protocol `self` (header or keywords) inspects a flow of protocol
    /// `flow`: the same protocol, or a `dcerpc` rule on an SMB flow (DCERPC over named
    /// pipes; Suricata's `AppProtoEquals`).
    pub fn sig_matches(self, flow: AppProto) -> bool {
        self == flow || (self == AppProto::DCERPC && flow == AppProto::SMB)
    }

    /// The protocol at registry index `i`.
    pub fn from_index(i: usize) -> AppProto {
        AppProto(u8::try_from(i + 2).unwrap_or(u8::MAX))
    }

    /// The registry index, for a registered protocol.
    pub fn index(self) -> Option<usize> {
        let i = usize::from(self.0).checked_sub(2)?;
        (i < PROTOCOLS.len()).then_some(i)
    }

    /// The registry entry, for a registered protocol.
    pub fn protocol(self) -> Option<&'static Protocol> {
        self.index().and_then(|i| PROTOCOLS.get(i).copied())
    }

    /// The name EVE uses in `app_proto`.
    pub fn name(self) -> &'static str {
        match self {
            AppProto::UNKNOWN => "unknown",
            AppProto::FAILED => "failed",
            p => p.protocol().map_or("unknown", |d| d.name),
        }
    }

    /// The protocol a rule names (header or `app-layer-protocol`), aliases included; also
    /// `unknown` and `failed`.
    pub fn from_name(name: &str) -> Option<AppProto> {
        match name {
            "unknown" => return Some(AppProto::UNKNOWN),
            "failed" => return Some(AppProto::FAILED),
            _ => {}
        }
        PROTOCOLS
            .iter()
            .position(|p| p.name == name || p.aliases.contains(&name))
            .map(AppProto::from_index)
    }
}

/// The protocol and buffer id of a sticky buffer keyword, if a registered protocol offers it.
pub fn find_buffer(name: &str) -> Option<(AppProto, u16, &'static BufferDesc)> {
    PROTOCOLS.iter().enumerate().find_map(|(i, p)| {
        p.buffers.iter().position(|b| b.name == name).and_then(|j| {
            Some((
                AppProto::from_index(i),
                u16::try_from(j).ok()?,
                &p.buffers[j],
            ))
        })
    })
}

/// The protocol and description of a protocol keyword ([`Protocol::keywords`]), if a
/// registered protocol offers it.
pub fn find_keyword(name: &str) -> Option<(AppProto, &'static KeywordDesc)> {
    PROTOCOLS.iter().enumerate().find_map(|(i, p)| {
        p.keywords
            .iter()
            .find(|k| k.name == name)
            .map(|k| (AppProto::from_index(i), k))
    })
}

/// The protocol and event id of `<proto>.<event>`, if registered.
pub fn find_event(v: &str) -> Option<(AppProto, u16)> {
    let (p, e) = v.trim().split_once('.')?;
    let proto = AppProto::from_name(p)?;
    let d = proto.protocol()?;
    let j = d.events.iter().position(|n| *n == e)?;
    Some((proto, u16::try_from(j).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_ids_match_the_table_and_names_round_trip() {
        assert_eq!(AppProto::HTTP.name(), "http");
        assert_eq!(AppProto::DNS.name(), "dns");
        assert_eq!(AppProto::TLS.name(), "tls");
        assert!(PROTOCOLS.len() <= MAX_PROTOCOLS);
        for (i, p) in PROTOCOLS.iter().enumerate() {
            assert_eq!(AppProto::from_name(p.name), Some(AppProto::from_index(i)));
            for a in p.aliases {
                assert_eq!(AppProto::from_name(a), Some(AppProto::from_index(i)));
            }
        }
        assert_eq!(AppProto::from_name("ssl"), Some(AppProto::TLS));
        assert_eq!(AppProto::from_name("dcerpc"), Some(AppProto::DCERPC));
        assert_eq!(AppProto::from_name("smb"), Some(AppProto::SMB));
        assert!(AppProto::DCERPC.sig_matches(AppProto::SMB));
        assert!(!AppProto::SMB.sig_matches(AppProto::DCERPC));
        assert_eq!(AppProto::from_name("nope"), None);
        assert_eq!(AppProto::default(), AppProto::UNKNOWN);
    }

    #[test]
    fn keywords_are_unique_and_known_to_the_rule_parser() {
        let mut seen = std::collections::HashSet::new();
        for p in PROTOCOLS {
            for k in p.keywords {
                assert!(seen.insert(k.name), "keyword {} registered twice", k.name);
                assert!(
                    shrike_rules::parse::keywords::is_suricata_keyword(k.name),
                    "{} is not a keyword the rule parser knows",
                    k.name
                );
                assert_eq!(find_keyword(k.name).map(|(_, d)| d.name), Some(k.name));
            }
        }
        assert!(find_keyword("dns.opcode").is_some());
        assert!(find_keyword("nope").is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for p in PROTOCOLS {
            for n in std::iter::once(&p.name).chain(p.aliases) {
                assert!(seen.insert(*n), "{n} registered twice");
            }
        }
    }
}
