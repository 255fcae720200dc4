//! The typed rule AST produced by the parser.

use std::sync::Arc;

use super::address::IpSet;
use super::buffers::{BufferId, Transform};
use super::keywords::Keyword;
use super::port::PortSet;
use super::uint::UintMatch;

/// Rule action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `alert`
    Alert,
    /// `pass`
    Pass,
    /// `drop`
    Drop,
    /// `reject`
    Reject,
    /// `rejectsrc`
    RejectSrc,
    /// `rejectdst`
    RejectDst,
    /// `rejectboth`
    RejectBoth,
}

impl Action {
    /// Parses an action word.
    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "alert" => Action::Alert,
            "pass" => Action::Pass,
            "drop" => Action::Drop,
            "reject" => Action::Reject,
            "rejectsrc" => Action::RejectSrc,
            "rejectdst" => Action::RejectDst,
            "rejectboth" => Action::RejectBoth,
            _ => return None,
        })
    }

    /// The keyword as written in rules and EVE.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Alert => "alert",
            Action::Pass => "pass",
            Action::Drop => "drop",
            Action::Reject => "reject",
            Action::RejectSrc => "rejectsrc",
            Action::RejectDst => "rejectdst",
            Action::RejectBoth => "rejectboth",
        }
    }
}

/// Application-layer protocols usable in a rule header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AppProto {
    Http,
    Http1,
    Http2,
    Ftp,
    FtpData,
    Smtp,
    Tls,
    Ssh,
    Imap,
    Pop3,
    Smb,
    Dcerpc,
    Dns,
    Modbus,
    Enip,
    Dnp3,
    Nfs,
    Ntp,
    Tftp,
    Ike,
    Krb5,
    Dhcp,
    Snmp,
    Sip,
    Rfb,
    Mqtt,
    Pgsql,
    Telnet,
    Rdp,
    BittorrentDht,
    Quic,
    Template,
    Irc,
    Ldap,
}

impl AppProto {
    /// Parses an app-layer protocol name as Suricata 7 accepts it.
    pub fn parse(s: &str) -> Option<AppProto> {
        use AppProto::*;
        Some(match s {
            "http" => Http,
            "http1" => Http1,
            "http2" => Http2,
            "ftp" => Ftp,
            "ftp-data" => FtpData,
            "smtp" => Smtp,
            "tls" | "ssl" => Tls,
            "ssh" => Ssh,
            "imap" => Imap,
            "pop3" => Pop3,
            "smb" => Smb,
            "dcerpc" => Dcerpc,
            "dns" => Dns,
            "modbus" => Modbus,
            "enip" => Enip,
            "dnp3" => Dnp3,
            "nfs" => Nfs,
            "ntp" => Ntp,
            "tftp" => Tftp,
            "ike" | "ikev2" => Ike,
            "krb5" => Krb5,
            "dhcp" => Dhcp,
            "snmp" => Snmp,
            "sip" => Sip,
            "rfb" => Rfb,
            "mqtt" => Mqtt,
            "pgsql" => Pgsql,
            "telnet" => Telnet,
            "rdp" => Rdp,
            "bittorrent-dht" => BittorrentDht,
            "quic" => Quic,
            "template" => Template,
            "irc" => Irc,
            "ldap" => Ldap,
            _ => return None,
        })
    }
}

/// Header protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// `ip` (any IP packet)
    Ip,
    /// `ipv4`
    Ipv4,
    /// `ipv6`
    Ipv6,
    /// `tcp`
    Tcp,
    /// `tcp-pkt` (packet payload only)
    TcpPkt,
    /// `tcp-stream` (reassembled stream only)
    TcpStream,
    /// `udp`
    Udp,
    /// `icmp` (v4 and v6)
    Icmp,
    /// `icmpv4`
    Icmpv4,
    /// `icmpv6`
    Icmpv6,
    /// `sctp`
    Sctp,
    /// `pkthdr` (decoder-event rules)
    Pkthdr,
    /// An application-layer protocol.
    App(AppProto),
}

impl Protocol {
    /// Parses a header protocol (case-insensitive like Suricata).
    pub fn parse(s: &str) -> Option<Protocol> {
        let l = s.to_ascii_lowercase();
        Some(match l.as_str() {
            "ip" => Protocol::Ip,
            "ipv4" | "ip4" => Protocol::Ipv4,
            "ipv6" | "ip6" => Protocol::Ipv6,
            "tcp" => Protocol::Tcp,
            "tcp-pkt" => Protocol::TcpPkt,
            "tcp-stream" => Protocol::TcpStream,
            "udp" => Protocol::Udp,
            "icmp" => Protocol::Icmp,
            "icmpv4" => Protocol::Icmpv4,
            "icmpv6" => Protocol::Icmpv6,
            "sctp" => Protocol::Sctp,
            "pkthdr" => Protocol::Pkthdr,
            other => Protocol::App(AppProto::parse(other)?),
        })
    }
}

/// Traffic direction of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `->`
    ToDst,
    /// `<>`
    Both,
}

/// `target:src_ip|dest_ip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `src_ip`
    SrcIp,
    /// `dest_ip`
    DestIp,
}

/// `reference:system,id`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// Reference system (`url`, `cve`…).
    pub system: String,
    /// Reference id.
    pub id: String,
}

/// A literal or a `byte_extract`/`byte_math` variable (index into
/// [`Rule::byte_vars`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntOrVar {
    /// A literal.
    Lit(i64),
    /// A rule variable slot.
    Var(u8),
}

/// `fast_pattern` settings of a content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FastPattern {
    /// `fast_pattern:only` (legacy; treated as plain `fast_pattern`).
    pub only: bool,
    /// `fast_pattern:offset,length` — only this slice goes to the prefilter.
    pub chop: Option<(u16, u16)>,
}

/// A `content` (or `uricontent`) match with its modifiers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Content {
    /// The bytes to find (hex and escapes decoded).
    pub pattern: Vec<u8>,
    /// `content:!"..."`
    pub negated: bool,
    /// `nocase`
    pub nocase: bool,
    /// `rawbytes` (accepted, no effect, as in Suricata).
    pub rawbytes: bool,
    /// `offset`
    pub offset: Option<IntOrVar>,
    /// `depth`
    pub depth: Option<IntOrVar>,
    /// `distance`
    pub distance: Option<IntOrVar>,
    /// `within`
    pub within: Option<IntOrVar>,
    /// `startswith`
    pub startswith: bool,
    /// `endswith`
    pub endswith: bool,
    /// `fast_pattern`
    pub fast_pattern: Option<FastPattern>,
    /// `replace` (IPS mode).
    pub replace: Option<Vec<u8>>,
}

impl Content {
    /// True when this content is anchored to the previous match
    /// (`distance`/`within`).
    pub fn is_relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }
}

/// pcre option flags (the PCRE-level ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PcreOpts {
    /// `i`
    pub caseless: bool,
    /// `s`
    pub dotall: bool,
    /// `m`
    pub multiline: bool,
    /// `x`
    pub extended: bool,
    /// `A`
    pub anchored: bool,
    /// `E`
    pub dollar_endonly: bool,
    /// `G`
    pub ungreedy: bool,
}

/// Where a pcre capture is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureKind {
    /// `pkt:name`
    Pkt,
    /// `flow:name`
    Flow,
    /// `alert:name`
    Alert,
    /// `pkt:key, pkt:value`: a packet variable named by one capture (the key) holding the
    /// next (the value); the name is empty.
    PktKeyValue,
}

/// A `pcre` match.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pcre {
    /// The regular expression text between the slashes.
    pub pattern: String,
    /// `pcre:!"..."`
    pub negated: bool,
    /// PCRE compile flags.
    pub opts: PcreOpts,
    /// `R`: relative to the previous match.
    pub relative: bool,
    /// `B`: rawbytes (no effect).
    pub rawbytes: bool,
    /// `O`: override the match limit.
    pub match_limit_override: bool,
    /// Capture targets (`,pkt:name` suffix or `(?P<flow_name>…)` groups).
    pub captures: Vec<(CaptureKind, String)>,
}

/// Integer interpretation of bytes in `byte_*` keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumBase {
    /// `string,dec`
    Dec,
    /// `string,hex`
    Hex,
    /// `string,oct`
    Oct,
}

impl NumBase {
    /// Radix.
    pub fn radix(self) -> u32 {
        match self {
            NumBase::Dec => 10,
            NumBase::Hex => 16,
            NumBase::Oct => 8,
        }
    }
}

/// Byte order for binary `byte_*` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    /// `big` (default)
    #[default]
    Big,
    /// `little`
    Little,
    /// `dce` (taken from the DCE/RPC header; big when unknown)
    Dce,
}

/// `byte_test` operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteTestOp {
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `=`
    Eq,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `&`
    And,
    /// `^`
    Or,
}

/// `byte_test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteTest {
    /// Bytes to read (1–8, or up to 23 with `string`), or a `byte_extract` /
    /// `byte_math` variable holding it (Suricata 7).
    pub nbytes: IntOrVar,
    /// `!` before the operator.
    pub negated: bool,
    /// Operator.
    pub op: ByteTestOp,
    /// Value to compare with.
    pub value: IntOrVar,
    /// Offset of the read.
    pub offset: IntOrVar,
    /// `relative`
    pub relative: bool,
    /// Byte order.
    pub endian: Endian,
    /// `string,<base>`
    pub string: Option<NumBase>,
    /// `bitmask`
    pub bitmask: Option<u64>,
}

/// `byte_jump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteJump {
    /// Bytes to read: a literal, or a `byte_extract`/`byte_math` variable checked at match
    /// time (1..=8, 1..=23 with `string`).
    pub nbytes: IntOrVar,
    /// Offset of the read.
    pub offset: IntOrVar,
    /// `relative`
    pub relative: bool,
    /// `multiplier`
    pub multiplier: u32,
    /// Byte order.
    pub endian: Endian,
    /// `string,<base>`
    pub string: Option<NumBase>,
    /// `align` (round up to 4)
    pub align: bool,
    /// `from_beginning`
    pub from_beginning: bool,
    /// `from_end`
    pub from_end: bool,
    /// `post_offset`
    pub post_offset: i32,
    /// `bitmask`
    pub bitmask: Option<u64>,
}

/// `byte_extract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteExtract {
    /// Bytes to read.
    pub nbytes: u8,
    /// Offset of the read.
    pub offset: i32,
    /// Destination variable slot.
    pub var: u8,
    /// `relative`
    pub relative: bool,
    /// `multiplier`
    pub multiplier: u32,
    /// Byte order.
    pub endian: Endian,
    /// `string[,<base>]`
    pub string: Option<NumBase>,
    /// `align 2|4`
    pub align: u8,
}

/// `byte_math` operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// `byte_math`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteMath {
    /// Bytes to read (literal or variable).
    pub nbytes: IntOrVar,
    /// Offset of the read.
    pub offset: i32,
    /// Operator.
    pub op: MathOp,
    /// Right operand.
    pub rvalue: IntOrVar,
    /// Destination variable slot.
    pub result: u8,
    /// `relative`
    pub relative: bool,
    /// Byte order.
    pub endian: Endian,
    /// `string <base>`
    pub string: Option<NumBase>,
    /// `bitmask`
    pub bitmask: Option<u64>,
}

/// `isdataat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IsDataAt {
    /// Position to test.
    pub pos: IntOrVar,
    /// `!`
    pub negated: bool,
    /// `relative`
    pub relative: bool,
}

/// `base64_decode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Base64Decode {
    /// `bytes N` (0 = all)
    pub bytes: u32,
    /// `offset N`
    pub offset: u32,
    /// `relative`
    pub relative: bool,
}

/// One element of a buffer section's ordered match list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Match {
    /// `content`
    Content(Content),
    /// `pcre`
    Pcre(Box<Pcre>),
    /// `byte_test`
    ByteTest(ByteTest),
    /// `byte_jump`
    ByteJump(ByteJump),
    /// `byte_extract`
    ByteExtract(ByteExtract),
    /// `byte_math`
    ByteMath(ByteMath),
    /// `isdataat`
    IsDataAt(IsDataAt),
    /// `bsize`
    Bsize(UintMatch),
    /// `base64_decode`
    Base64Decode(Base64Decode),
}

/// All matches of a rule against one inspection buffer, in rule order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BufferSection {
    /// Which buffer.
    pub buffer: BufferId,
    /// Transforms applied to the buffer first.
    pub transforms: Vec<Transform>,
    /// The ordered match list.
    pub matches: Vec<Match>,
}

/// A parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Action.
    pub action: Action,
    /// Header protocol.
    pub protocol: Protocol,
    /// Source addresses.
    pub src_addr: Arc<IpSet>,
    /// Source ports.
    pub src_ports: Arc<PortSet>,
    /// Direction.
    pub direction: Direction,
    /// Destination addresses.
    pub dst_addr: Arc<IpSet>,
    /// Destination ports.
    pub dst_ports: Arc<PortSet>,
    /// `gid` (default 1).
    pub gid: u32,
    /// `sid`.
    pub sid: u32,
    /// `rev` (default 0).
    pub rev: u32,
    /// `msg` (unescaped).
    pub msg: String,
    /// `classtype`.
    pub classtype: Option<String>,
    /// `priority`.
    pub priority: Option<u32>,
    /// `reference`s.
    pub references: Vec<Reference>,
    /// `metadata` entries as written, comma-separated (several `metadata`
    /// keywords are joined with `, `); see [`Rule::metadata_pairs`].
    pub metadata: String,
    /// `target`.
    pub target: Option<Target>,
    /// `noalert`.
    pub noalert: bool,
    /// Payload/buffer matches grouped by buffer.
    pub sections: Vec<BufferSection>,
    /// Every other keyword, typed (or `Unknown`).
    pub keywords: Vec<Keyword>,
    /// Names of `byte_extract`/`byte_math` variables, by slot.
    pub byte_vars: Vec<String>,
}

impl Rule {
    /// Keywords kept as [`Keyword::Unknown`].
    pub fn unknown_keywords(&self) -> impl Iterator<Item = &str> {
        self.keywords.iter().filter_map(|k| match k {
            Keyword::Unknown { name, .. } => Some(name.as_str()),
            _ => None,
        })
    }

    /// `metadata` as `(key, value)` pairs (value may be empty).
    pub fn metadata_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.metadata
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|kv| match kv.split_once(char::is_whitespace) {
                Some((k, v)) => (k, v.trim()),
                None => (kv, ""),
            })
    }

    /// The section for `buffer`, if the rule inspects it.
    pub fn section(&self, buffer: BufferId) -> Option<&BufferSection> {
        self.sections.iter().find(|s| s.buffer == buffer)
    }
}
