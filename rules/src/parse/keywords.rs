//! Non-payload keywords: flow state, bits, IP/TCP/ICMP header tests,
//! thresholds, events. Each enforced keyword gets a typed node.

use super::error::{ErrorKind, PResult, ParseError};
use super::lexer::{unescape, unquote};
use super::uint::{parse_u64, UintMatch, UintMode};

/// Every rule keyword Suricata 7.0 registers (canonical names, plus the
/// non-buffer aliases). Sticky-buffer aliases are in
/// [`super::buffers::BUFFERS`].
pub static SURICATA_KEYWORDS: &[&str] = &[
    "alert",
    "app-layer-event",
    "app-layer-protocol",
    "asn1",
    "base64_data",
    "base64_decode",
    "bsize",
    "bypass",
    "byte_extract",
    "byte_jump",
    "byte_math",
    "byte_test",
    "cip_service",
    "classtype",
    "compress_whitespace",
    "config",
    "content",
    "datarep",
    "dataset",
    "dce_iface",
    "dce_opnum",
    "dcerpc.iface",
    "dcerpc.opnum",
    "dcerpc.stub_data",
    "decode-event",
    "depth",
    "detection_filter",
    "dhcp.leasetime",
    "dhcp.rebinding_time",
    "dhcp.renewal_time",
    "distance",
    "dnp3.data",
    "dnp3_func",
    "dnp3_ind",
    "dnp3_obj",
    "dnp3.func",
    "dnp3.ind",
    "dnp3.obj",
    "dns.opcode",
    "dns.query",
    "dotprefix",
    "dsize",
    "endswith",
    "engine-event",
    "enip_command",
    "fast_pattern",
    "file.data",
    "file.magic",
    "file.name",
    "fileext",
    "filemagic",
    "filemd5",
    "filename",
    "filesha1",
    "filesha256",
    "filesize",
    "filestore",
    "flow",
    "flow.age",
    "flowbits",
    "flowint",
    "flowvar",
    "fragbits",
    "fragoffset",
    "frame",
    "ftpbounce",
    "ftpdata_command",
    "geoip",
    "gid",
    "header_lowercase",
    "hostbits",
    "icmp_id",
    "icmp_seq",
    "icmpv4-csum",
    "icmpv4.hdr",
    "icmpv6-csum",
    "icmpv6.hdr",
    "icmpv6.mtu",
    "icode",
    "id",
    "ike.chosen_sa_attribute",
    "ike.exchtype",
    "ike.key_exchange_payload_length",
    "ike.nonce_payload_length",
    "ip.dst",
    "ip.src",
    "ip_proto",
    "ipopts",
    "iprep",
    "ipv4-csum",
    "isdataat",
    "itype",
    "krb5.ticket_encryption",
    "krb5_err_code",
    "krb5_msg_type",
    "l3_proto",
    "lua",
    "luajit",
    "metadata",
    "modbus",
    "mqtt.connack.return_code",
    "mqtt.connack.session_present",
    "mqtt.connect.flags",
    "mqtt.flags",
    "mqtt.protocol_version",
    "mqtt.qos",
    "mqtt.reason_code",
    "mqtt.type",
    "msg",
    "nfq_set_mark",
    "nfs.version",
    "nfs_procedure",
    "nfs_version",
    "noalert",
    "nocase",
    "offset",
    "pcre",
    "pcrexform",
    "pkt_data",
    "pktvar",
    "prefilter",
    "priority",
    "rawbytes",
    "reference",
    "replace",
    "requires",
    "rev",
    "rfb.secresult",
    "rfb.sectype",
    "rpc",
    "sameip",
    "sid",
    "smb.version",
    "snmp.pdu_type",
    "snmp.version",
    "ssh.protoversion",
    "ssh.softwareversion",
    "ssl_state",
    "ssl_version",
    "startswith",
    "stream-event",
    "stream_size",
    "strip_pseudo_headers",
    "strip_whitespace",
    "tag",
    "target",
    "tcp.ack",
    "tcp.flags",
    "tcp.mss",
    "tcp.seq",
    "tcp.window",
    "tcpv4-csum",
    "tcpv6-csum",
    "template2",
    "threshold",
    "tls.cert_chain_len",
    "tls.fingerprint",
    "tls.issuerdn",
    "tls.subject",
    "tls.version",
    "tls_cert_expired",
    "tls_cert_notafter",
    "tls_cert_notbefore",
    "tls_cert_valid",
    "tls_store",
    "to_lowercase",
    "to_md5",
    "to_sha1",
    "to_sha256",
    "to_uppercase",
    "tos",
    "ttl",
    "udpv4-csum",
    "udpv6-csum",
    "uricontent",
    "urilen",
    "url_decode",
    "within",
    "xbits",
    "xor",
    "flags",
    "seq",
    "ack",
    "window",
    "ssh.proto",
    "ssh_proto",
    "ssh.software",
    "ssh_software",
    "smtp.helo",
    "smtp.mail_from",
    "smtp.rcpt_to",
    "email.from",
    "email.subject",
    "email.to",
    "email.cc",
    "email.date",
    "email.message_id",
    "email.x_mailer",
    "email.url",
    "email.received",
    "ftp.command",
    "ftp.command_data",
    "ftp.reply",
    "ftp.completion_code",
    "ftp.dynamic_port",
    "ftp.mode",
    "ftp.reply_received",
    "tls.cert_subject",
    "tls.cert_issuer",
    "tls.cert_serial",
    "tls.cert_fingerprint",
    "ja3.hash",
    "ja3_hash",
    "ja3.string",
    "ja3_string",
    "ja3s.hash",
    "ja3s.string",
    "ja4.hash",
    "tls.sni",
    "dns.query",
    "dns_query",
    "http2.frametype",
    "http2.errorcode",
    "http2.priority",
    "http2.window",
    "http2.size_update",
    "http2.settings",
];

/// True when `name` is a keyword Suricata 7 knows.
pub fn is_suricata_keyword(name: &str) -> bool {
    SURICATA_KEYWORDS.contains(&name)
        || super::buffers::BufferId::from_sticky(name).is_some()
        || super::buffers::BufferId::from_modifier(name).is_some()
}

/// `flow:` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowOpts {
    /// `to_server` / `from_client`
    pub to_server: bool,
    /// `to_client` / `from_server`
    pub to_client: bool,
    /// `established`
    pub established: bool,
    /// `not_established`
    pub not_established: bool,
    /// `stateless`
    pub stateless: bool,
    /// `only_stream`
    pub only_stream: bool,
    /// `no_stream`
    pub no_stream: bool,
    /// `only_frag`
    pub only_frag: bool,
    /// `no_frag`
    pub no_frag: bool,
}

/// `flowbits` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitCmd {
    /// `set`
    Set,
    /// `unset`
    Unset,
    /// `toggle`
    Toggle,
    /// `isset`
    IsSet,
    /// `isnotset`
    IsNotSet,
    /// `noalert`
    NoAlert,
}

/// `flowbits:cmd[,name[|name…|&name…]]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Flowbits {
    /// Command.
    pub cmd: BitCmd,
    /// Bit names (more than one with `|` or `&`).
    pub names: Vec<String>,
    /// `a|b` (any) rather than `a&b` (all).
    pub any: bool,
}

/// `flowint` operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowintOp {
    /// `=`
    Set,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `isset`
    IsSet,
    /// `notset` / `isnotset`
    NotSet,
}

/// Right operand of `flowint`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FlowintValue {
    /// Literal.
    Num(u32),
    /// Another flowint variable.
    Var(String),
}

/// `flowint:name,op[,value]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Flowint {
    /// Variable name.
    pub name: String,
    /// Operator.
    pub op: FlowintOp,
    /// Operand (absent for isset/notset).
    pub value: Option<FlowintValue>,
}

/// xbits tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XbitTrack {
    /// `ip_src`
    IpSrc,
    /// `ip_dst`
    IpDst,
    /// `ip_pair`
    IpPair,
}

/// `xbits:cmd,name,track <t>[,expire <s>]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Xbits {
    /// Command.
    pub cmd: BitCmd,
    /// Bit name.
    pub name: String,
    /// Tracking.
    pub track: XbitTrack,
    /// `expire` seconds.
    pub expire: Option<u32>,
}

/// Modifier of `flags` / `fragbits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitsModifier {
    /// No modifier: exactly these bits (after the ignore mask).
    Exact,
    /// `+`: these bits and maybe others.
    Plus,
    /// `*`: any of these bits.
    Any,
    /// `!`: not all of these bits.
    Not,
}

/// TCP flag bits as on the wire.
pub mod tcp_flag {
    /// FIN
    pub const FIN: u8 = 0x01;
    /// SYN
    pub const SYN: u8 = 0x02;
    /// RST
    pub const RST: u8 = 0x04;
    /// PSH
    pub const PSH: u8 = 0x08;
    /// ACK
    pub const ACK: u8 = 0x10;
    /// URG
    pub const URG: u8 = 0x20;
    /// ECE
    pub const ECE: u8 = 0x40;
    /// CWR
    pub const CWR: u8 = 0x80;
}

/// `flags:[mod]FLAGS[,IGNORE]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcpFlags {
    /// Modifier.
    pub modifier: BitsModifier,
    /// Flags named.
    pub flags: u8,
    /// Flags to ignore (the part after the comma).
    pub ignore: u8,
}

impl TcpFlags {
    /// Evaluates against a packet's TCP flags byte.
    pub fn matches(&self, f: u8) -> bool {
        let f = f & !self.ignore;
        match self.modifier {
            BitsModifier::Exact => f == self.flags,
            BitsModifier::Plus => f & self.flags == self.flags,
            BitsModifier::Any => f & self.flags != 0,
            BitsModifier::Not => f & self.flags != self.flags,
        }
    }
}

/// `fragbits:[mod]MDR` (M=1 more fragments, D=2 don't fragment, R=4 reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fragbits {
    /// Modifier.
    pub modifier: BitsModifier,
    /// Bits: M=1, D=2, R=4.
    pub bits: u8,
}

impl Fragbits {
    /// Evaluates against `bits` (M=1, D=2, R=4).
    pub fn matches(&self, b: u8) -> bool {
        match self.modifier {
            BitsModifier::Exact => b == self.bits,
            BitsModifier::Plus => b & self.bits == self.bits,
            BitsModifier::Any => b & self.bits != 0,
            BitsModifier::Not => b & self.bits != self.bits,
        }
    }
}

/// `ipopts` option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum IpOpt {
    Rr,
    Eol,
    Nop,
    Ts,
    Sec,
    Esec,
    Lsrr,
    Lsrre,
    Ssrr,
    Satid,
    Any,
}

/// Threshold/detection_filter type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThresholdType {
    /// `limit`
    Limit,
    /// `threshold`
    Threshold,
    /// `both`
    Both,
    /// `backoff`
    Backoff,
    /// `detection_filter`
    DetectionFilter,
}

/// Threshold tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Track {
    /// `by_src`
    BySrc,
    /// `by_dst`
    ByDst,
    /// `by_rule`
    ByRule,
    /// `by_both`
    ByBoth,
    /// `by_flow`
    ByFlow,
}

impl Track {
    /// Parses a `track` value.
    pub fn parse(s: &str) -> Option<Track> {
        Some(match s {
            "by_src" => Track::BySrc,
            "by_dst" => Track::ByDst,
            "by_rule" => Track::ByRule,
            "by_both" => Track::ByBoth,
            "by_flow" => Track::ByFlow,
            _ => return None,
        })
    }
}

/// `threshold:` / `detection_filter:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Threshold {
    /// Type.
    pub kind: ThresholdType,
    /// Tracking.
    pub track: Track,
    /// `count`
    pub count: u32,
    /// `seconds` (0 for backoff)
    pub seconds: u32,
    /// `multiplier` (backoff)
    pub multiplier: u32,
}

/// `tag:` kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagKind {
    /// `session`
    Session,
    /// `host`
    Host,
}

/// `tag:` metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagMetric {
    /// `packets`
    Packets,
    /// `seconds`
    Seconds,
    /// `bytes`
    Bytes,
}

/// `tag:session|host[,count,metric[,src|dst]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    /// Kind.
    pub kind: TagKind,
    /// Count (default 256 packets).
    pub count: u32,
    /// Metric.
    pub metric: TagMetric,
    /// For host tags: tag the source (`src`, default) or `dst`.
    pub dst: bool,
}

/// `stream_size` side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamSide {
    /// `server`
    Server,
    /// `client`
    Client,
    /// `both`
    Both,
    /// `either`
    Either,
}

/// A non-payload keyword.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `flow`
    Flow(FlowOpts),
    /// `flowbits`
    Flowbits(Flowbits),
    /// `flowint`
    Flowint(Flowint),
    /// `xbits`
    Xbits(Xbits),
    /// `flags`
    Flags(TcpFlags),
    /// `fragbits`
    Fragbits(Fragbits),
    /// `fragoffset`
    Fragoffset(UintMatch),
    /// `ttl`
    Ttl(UintMatch),
    /// `tos`
    Tos(UintMatch),
    /// `id`
    Id(UintMatch),
    /// `ipopts`
    Ipopts(IpOpt),
    /// `ip_proto`
    IpProto(UintMatch),
    /// `itype`
    Itype(UintMatch),
    /// `icode`
    Icode(UintMatch),
    /// `icmp_id`
    IcmpId(UintMatch),
    /// `icmp_seq`
    IcmpSeq(UintMatch),
    /// `seq`
    Seq(u32),
    /// `ack`
    Ack(u32),
    /// `window`
    Window(UintMatch),
    /// `sameip`
    SameIp,
    /// `tcp.mss`
    TcpMss(UintMatch),
    /// `flow.age`: seconds between the flow's first and last packet.
    FlowAge(UintMatch),
    /// `icmpv6.mtu`: the MTU of an ICMPv6 Packet Too Big message.
    Icmpv6Mtu(UintMatch),
    /// `dsize`
    Dsize(UintMatch),
    /// `urilen` (`raw` selects the raw URI)
    Urilen {
        /// Comparison.
        len: UintMatch,
        /// `,raw`
        raw: bool,
    },
    /// `threshold`
    Threshold(Threshold),
    /// `detection_filter`
    DetectionFilter(Threshold),
    /// `tag`
    Tag(Tag),
    /// `app-layer-protocol`
    AppLayerProtocol {
        /// `!`
        negated: bool,
        /// Protocol name.
        name: String,
    },
    /// `app-layer-event`
    AppLayerEvent(String),
    /// `decode-event`
    DecodeEvent(String),
    /// `stream-event`
    StreamEvent(String),
    /// `engine-event`
    EngineEvent(String),
    /// `stream_size`
    StreamSize {
        /// Side.
        side: StreamSide,
        /// Comparison.
        cmp: UintMatch,
    },
    /// `prefilter` after a non-content keyword: the keyword before it is the rule's
    /// prefilter (a performance choice in Suricata, except that prefilter engines skip
    /// flow-end pseudo packets).
    Prefilter,
    /// A keyword not typed here. `known` says whether Suricata 7 has it.
    Unknown {
        /// Keyword name.
        name: String,
        /// Raw value.
        value: Option<String>,
        /// Suricata 7 knows this keyword.
        known: bool,
    },
}

fn need<'a>(kw: &'static str, v: Option<&'a str>) -> PResult<&'a str> {
    match v.map(str::trim) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(ParseError::bad(kw, "needs a value")),
    }
}

fn num_u32(kw: &'static str, s: &str) -> PResult<u32> {
    parse_u64(s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| ParseError::bad(kw, format!("`{}` is not a 32-bit number", s.trim())))
}

/// Parses a typed non-payload keyword; `Ok(None)` if `name` is not one.
pub fn parse_keyword(name: &str, value: Option<&str>) -> PResult<Option<Keyword>> {
    let k = match name {
        "flow" => Keyword::Flow(parse_flow(need("flow", value)?)?),
        "flowbits" => Keyword::Flowbits(parse_flowbits(need("flowbits", value)?)?),
        "flowint" => Keyword::Flowint(parse_flowint(need("flowint", value)?)?),
        "xbits" => Keyword::Xbits(parse_xbits(need("xbits", value)?)?),
        "flags" | "tcp.flags" => Keyword::Flags(parse_flags(need("flags", value)?)?),
        "fragbits" => Keyword::Fragbits(parse_fragbits(need("fragbits", value)?)?),
        "fragoffset" => {
            Keyword::Fragoffset(simple_cmp("fragoffset", need("fragoffset", value)?, 8191)?)
        }
        "ttl" => Keyword::Ttl(UintMatch::parse(need("ttl", value)?, 255, "ttl")?),
        "tos" => Keyword::Tos(simple_cmp("tos", need("tos", value)?, 255)?),
        "id" => Keyword::Id(UintMatch::parse(unquote(need("id", value)?), 65535, "id")?),
        "ipopts" => Keyword::Ipopts(parse_ipopts(need("ipopts", value)?)?),
        "ip_proto" => Keyword::IpProto(parse_ip_proto(need("ip_proto", value)?)?),
        "itype" => Keyword::Itype(UintMatch::parse(need("itype", value)?, 255, "itype")?),
        "icode" => Keyword::Icode(UintMatch::parse(need("icode", value)?, 255, "icode")?),
        "icmp_id" => Keyword::IcmpId(UintMatch::parse(
            unquote(need("icmp_id", value)?),
            65535,
            "icmp_id",
        )?),
        "icmp_seq" => Keyword::IcmpSeq(UintMatch::parse(
            unquote(need("icmp_seq", value)?),
            65535,
            "icmp_seq",
        )?),
        "seq" | "tcp.seq" => Keyword::Seq(num_u32("seq", need("seq", value)?)?),
        "ack" | "tcp.ack" => Keyword::Ack(num_u32("ack", need("ack", value)?)?),
        "window" | "tcp.window" => {
            Keyword::Window(simple_cmp("window", need("window", value)?, 65535)?)
        }
        "sameip" => Keyword::SameIp,
        "tcp.mss" => Keyword::TcpMss(UintMatch::parse(need("tcp.mss", value)?, 65535, "tcp.mss")?),
        "flow.age" => Keyword::FlowAge(UintMatch::parse(
            need("flow.age", value)?,
            u64::from(u32::MAX),
            "flow.age",
        )?),
        "icmpv6.mtu" => Keyword::Icmpv6Mtu(UintMatch::parse(
            need("icmpv6.mtu", value)?,
            u64::from(u32::MAX),
            "icmpv6.mtu",
        )?),
        "dsize" => Keyword::Dsize(UintMatch::parse(need("dsize", value)?, 65535, "dsize")?),
        "urilen" => {
            let v = need("urilen", value)?;
            let (cmp, raw) = match v.split_once(',') {
                Some((c, k)) => match k.trim() {
                    "raw" => (c, true),
                    "norm" => (c, false),
                    _ => return Err(ParseError::bad("urilen", "expected `raw` or `norm`")),
                },
                None => (v, false),
            };
            Keyword::Urilen {
                len: UintMatch::parse(cmp, 65535, "urilen")?,
                raw,
            }
        }
        "threshold" => Keyword::Threshold(parse_threshold("threshold", need("threshold", value)?)?),
        "detection_filter" => Keyword::DetectionFilter(parse_threshold(
            "detection_filter",
            need("detection_filter", value)?,
        )?),
        "tag" => Keyword::Tag(parse_tag(need("tag", value)?)?),
        "app-layer-protocol" => {
            let v = need("app-layer-protocol", value)?;
            let (negated, n) = match v.strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, v),
            };
            // Suricata 7's `DetectAppLayerProtocolParse`: `failed` or a protocol it knows
            // (Suricata 8's `,final` / `,either` modes are unknown names there).
            if n != "failed" && super::ast::AppProto::parse(n).is_none() {
                return Err(ParseError::bad(
                    "app-layer-protocol",
                    format!("unknown protocol \"{n}\""),
                ));
            }
            Keyword::AppLayerProtocol {
                negated,
                name: n.to_string(),
            }
        }
        "app-layer-event" => Keyword::AppLayerEvent(need("app-layer-event", value)?.to_string()),
        "decode-event" => Keyword::DecodeEvent(need("decode-event", value)?.to_string()),
        "stream-event" => Keyword::StreamEvent(need("stream-event", value)?.to_string()),
        "engine-event" => Keyword::EngineEvent(need("engine-event", value)?.to_string()),
        "stream_size" => parse_stream_size(need("stream_size", value)?)?,
        _ => return Ok(None),
    };
    Ok(Some(k))
}

/// `[!|<|>]N` comparisons (tos, window, fragoffset).
fn simple_cmp(kw: &'static str, s: &str, max: u64) -> PResult<UintMatch> {
    let s = s.trim();
    let (mode, rest) = if let Some(r) = s.strip_prefix('!') {
        (UintMode::Ne, r)
    } else if let Some(r) = s.strip_prefix('<') {
        (UintMode::Lt, r)
    } else if let Some(r) = s.strip_prefix('>') {
        (UintMode::Gt, r)
    } else {
        (UintMode::Eq, s)
    };
    let r = rest.trim();
    let v = parse_u64(r)
        .or_else(|| {
            r.strip_prefix('x')
                .and_then(|h| u64::from_str_radix(h, 16).ok())
        })
        .filter(|&v| v <= max)
        .ok_or_else(|| ParseError::bad(kw, format!("bad number `{s}`")))?;
    Ok(UintMatch { mode, a: v, b: 0 })
}

fn parse_flow(v: &str) -> PResult<FlowOpts> {
    let mut f = FlowOpts::default();
    for opt in v.split(',') {
        let flag = match opt.trim() {
            "to_server" | "from_client" => &mut f.to_server,
            "to_client" | "from_server" => &mut f.to_client,
            "established" => &mut f.established,
            "not_established" => &mut f.not_established,
            "stateless" => &mut f.stateless,
            "only_stream" => &mut f.only_stream,
            "no_stream" => &mut f.no_stream,
            "only_frag" => &mut f.only_frag,
            "no_frag" => &mut f.no_frag,
            o => return Err(ParseError::bad("flow", format!("unknown option `{o}`"))),
        };
        // Suricata refuses a flag given twice (`established,established`, `to_server,from_client`).
        if *flag {
            return Err(ParseError::bad(
                "flow",
                format!("`{}` given twice in `{v}`", opt.trim()),
            ));
        }
        *flag = true;
    }
    if (f.to_server && f.to_client)
        || (f.established && f.not_established)
        || (f.only_stream && f.no_stream)
        || (f.only_frag && f.no_frag)
    {
        return Err(ParseError::bad(
            "flow",
            format!("conflicting options `{v}`"),
        ));
    }
    Ok(f)
}

fn bit_cmd(kw: &'static str, s: &str) -> PResult<BitCmd> {
    Ok(match s.trim() {
        "set" => BitCmd::Set,
        "unset" => BitCmd::Unset,
        "toggle" => BitCmd::Toggle,
        "isset" => BitCmd::IsSet,
        "isnotset" => BitCmd::IsNotSet,
        "noalert" => BitCmd::NoAlert,
        o => return Err(ParseError::bad(kw, format!("unknown command `{o}`"))),
    })
}

fn parse_flowbits(v: &str) -> PResult<Flowbits> {
    let (cmd, names) = match v.split_once(',') {
        Some((c, n)) => (bit_cmd("flowbits", c)?, Some(n.trim())),
        None => (bit_cmd("flowbits", v)?, None),
    };
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        if cmd == BitCmd::NoAlert {
            return Ok(Flowbits {
                cmd,
                names: Vec::new(),
                any: false,
            });
        }
        return Err(ParseError::bad("flowbits", "missing flowbit name"));
    };
    if cmd == BitCmd::NoAlert {
        return Err(ParseError::bad("flowbits", "noalert takes no name"));
    }
    let any = names.contains('|');
    let all = names.contains('&');
    if any && all {
        return Err(ParseError::bad("flowbits", "cannot mix `|` and `&`"));
    }
    if (any || all)
        && !matches!(
            cmd,
            BitCmd::IsSet | BitCmd::IsNotSet | BitCmd::Set | BitCmd::Unset | BitCmd::Toggle
        )
    {
        return Err(ParseError::bad("flowbits", "operators need isset/isnotset"));
    }
    let list: Vec<String> = names
        .split(['|', '&'])
        .map(|n| n.trim().to_string())
        .collect();
    if list
        .iter()
        .any(|n| n.is_empty() || n.contains(char::is_whitespace))
    {
        return Err(ParseError::bad(
            "flowbits",
            format!("bad flowbit name `{names}`"),
        ));
    }
    Ok(Flowbits {
        cmd,
        names: list,
        any,
    })
}

fn parse_flowint(v: &str) -> PResult<Flowint> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let bad = |d: &str| ParseError::bad("flowint", format!("{d}: `{v}`"));
    let name = parts
        .first()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| bad("missing name"))?;
    let op = match parts.get(1).copied() {
        Some("=") => FlowintOp::Set,
        Some("+") => FlowintOp::Add,
        Some("-") => FlowintOp::Sub,
        Some("==") => FlowintOp::Eq,
        Some("!=") => FlowintOp::Ne,
        Some("<") => FlowintOp::Lt,
        Some("<=") => FlowintOp::Le,
        Some(">") => FlowintOp::Gt,
        Some(">=") => FlowintOp::Ge,
        Some("isset") => FlowintOp::IsSet,
        Some("notset") | Some("isnotset") => FlowintOp::NotSet,
        _ => return Err(bad("bad operator")),
    };
    let value = match op {
        FlowintOp::IsSet | FlowintOp::NotSet => {
            if parts.len() > 2 {
                return Err(bad("isset/notset take no value"));
            }
            None
        }
        _ => {
            let val = parts
                .get(2)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| bad("missing value"))?;
            if parts.len() > 3 {
                return Err(bad("too many arguments"));
            }
            Some(match parse_u64(val) {
                Some(n) => FlowintValue::Num(u32::try_from(n).map_err(|_| bad("value too large"))?),
                None => FlowintValue::Var((*val).to_string()),
            })
        }
    };
    Ok(Flowint {
        name: (*name).to_string(),
        op,
        value,
    })
}

fn parse_xbits(v: &str) -> PResult<Xbits> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let bad = |d: &str| ParseError::bad("xbits", format!("{d}: `{v}`"));
    let cmd = bit_cmd("xbits", parts.first().copied().unwrap_or(""))?;
    // Suricata 7.0.10's regex is `cmd[,name],track <t>[,expire <n>]`, but a missing name
    // fails its substring copy and `noalert` refuses a name: `noalert` never loads.
    if cmd == BitCmd::NoAlert {
        return Err(bad("noalert is not accepted"));
    }
    let name = parts
        .get(1)
        .copied()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| bad("missing name"))?;
    let mut track = None;
    let mut expire = None;
    for p in parts.iter().skip(2) {
        if let Some(t) = p.strip_prefix("track") {
            track = Some(match t.trim() {
                "ip_src" => XbitTrack::IpSrc,
                "ip_dst" => XbitTrack::IpDst,
                "ip_pair" => XbitTrack::IpPair,
                _ => return Err(bad("bad track")),
            });
        } else if let Some(e) = p.strip_prefix("expire") {
            expire = Some(num_u32("xbits", e)?);
        } else {
            return Err(bad("unknown option"));
        }
    }
    Ok(Xbits {
        cmd,
        name: name.to_string(),
        track: track.ok_or_else(|| bad("missing track"))?,
        expire,
    })
}

fn modifier(c: u8) -> Option<BitsModifier> {
    match c {
        b'+' => Some(BitsModifier::Plus),
        b'*' => Some(BitsModifier::Any),
        b'!' => Some(BitsModifier::Not),
        _ => None,
    }
}

fn tcp_flag_bit(c: u8) -> Option<u8> {
    use tcp_flag::*;
    Some(match c.to_ascii_uppercase() {
        b'F' => FIN,
        b'S' => SYN,
        b'R' => RST,
        b'P' => PSH,
        b'A' => ACK,
        b'U' => URG,
        b'E' | b'2' => ECE,
        b'C' | b'1' => CWR,
        b'0' => 0,
        _ => return None,
    })
}

fn parse_flags(v: &str) -> PResult<TcpFlags> {
    let (main, ignore) = match v.split_once(',') {
        Some((m, i)) => (m.trim(), Some(i.trim())),
        None => (v.trim(), None),
    };
    let mut m = BitsModifier::Exact;
    let mut flags = 0u8;
    let mut seen_flag = false;
    for &c in main.as_bytes() {
        if let Some(md) = modifier(c) {
            if m != BitsModifier::Exact {
                return Err(ParseError::bad("flags", format!("two modifiers in `{v}`")));
            }
            m = md;
        } else if let Some(b) = tcp_flag_bit(c) {
            flags |= b;
            seen_flag = true;
        } else if !c.is_ascii_whitespace() {
            return Err(ParseError::bad(
                "flags",
                format!("unknown flag `{}`", c as char),
            ));
        }
    }
    if !seen_flag {
        return Err(ParseError::bad("flags", "no flags given"));
    }
    let mut ign = 0u8;
    if let Some(i) = ignore {
        for &c in i.as_bytes() {
            ign |= tcp_flag_bit(c).ok_or_else(|| {
                ParseError::bad("flags", format!("unknown ignore flag `{}`", c as char))
            })?;
        }
    }
    Ok(TcpFlags {
        modifier: m,
        flags,
        ignore: ign,
    })
}

fn parse_fragbits(v: &str) -> PResult<Fragbits> {
    let mut m = BitsModifier::Exact;
    let mut bits = 0u8;
    for &c in v.trim().as_bytes() {
        if let Some(md) = modifier(c) {
            m = md;
        } else {
            bits |= match c.to_ascii_uppercase() {
                b'M' => 1,
                b'D' => 2,
                b'R' => 4,
                _ => {
                    return Err(ParseError::bad(
                        "fragbits",
                        format!("unknown bit `{}`", c as char),
                    ))
                }
            };
        }
    }
    if bits == 0 {
        return Err(ParseError::bad("fragbits", "no bits given"));
    }
    Ok(Fragbits { modifier: m, bits })
}

fn parse_ipopts(v: &str) -> PResult<IpOpt> {
    Ok(match v.trim() {
        "rr" => IpOpt::Rr,
        "eol" => IpOpt::Eol,
        "nop" => IpOpt::Nop,
        "ts" => IpOpt::Ts,
        "sec" => IpOpt::Sec,
        "esec" => IpOpt::Esec,
        "lsrr" => IpOpt::Lsrr,
        "lsrre" => IpOpt::Lsrre,
        "ssrr" => IpOpt::Ssrr,
        "satid" => IpOpt::Satid,
        "any" => IpOpt::Any,
        o => return Err(ParseError::bad("ipopts", format!("unknown option `{o}`"))),
    })
}

fn parse_ip_proto(v: &str) -> PResult<UintMatch> {
    let s = v.trim();
    let (prefix, rest) = match s.as_bytes().first() {
        Some(b'!' | b'<' | b'>') => s.split_at(1),
        _ => ("", s),
    };
    let n = match rest.trim().to_ascii_lowercase().as_str() {
        "ip" | "hopopt" => 0,
        "icmp" => 1,
        "igmp" => 2,
        "ipip" | "ipv4" => 4,
        "tcp" => 6,
        "udp" => 17,
        "ipv6" => 41,
        "ipv6-route" => 43,
        "ipv6-frag" => 44,
        "rsvp" => 46,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "ipv6-icmp" | "icmpv6" => 58,
        "ipv6-nonxt" => 59,
        "ipv6-opts" => 60,
        "pim" => 103,
        "vrrp" => 112,
        "sctp" => 132,
        num => num
            .to_string()
            .parse::<u64>()
            .ok()
            .filter(|&n| n <= 255)
            .ok_or_else(|| ParseError::bad("ip_proto", format!("unknown protocol `{num}`")))?,
    };
    simple_cmp("ip_proto", &format!("{prefix}{n}"), 255)
}

fn parse_threshold(kw: &'static str, v: &str) -> PResult<Threshold> {
    let mut kind = if kw == "detection_filter" {
        Some(ThresholdType::DetectionFilter)
    } else {
        None
    };
    let (mut track, mut count, mut seconds, mut mult) = (None, None, None, None);
    for part in v.split(',') {
        let part = part.trim();
        let (k, val) = part
            .split_once(char::is_whitespace)
            .map(|(a, b)| (a, b.trim()))
            .ok_or_else(|| ParseError::bad(kw, format!("bad option `{part}`")))?;
        match k {
            "type" if kw == "threshold" => {
                kind = Some(match val {
                    "limit" => ThresholdType::Limit,
                    "threshold" => ThresholdType::Threshold,
                    "both" => ThresholdType::Both,
                    "backoff" => ThresholdType::Backoff,
                    _ => return Err(ParseError::bad(kw, format!("bad type `{val}`"))),
                })
            }
            "track" => {
                track = Some(
                    Track::parse(val)
                        .ok_or_else(|| ParseError::bad(kw, format!("bad track `{val}`")))?,
                )
            }
            "count" => count = Some(num_u32(kw, val)?),
            "seconds" => seconds = Some(num_u32(kw, val)?),
            "multiplier" => mult = Some(num_u32(kw, val)?),
            _ => return Err(ParseError::bad(kw, format!("unknown option `{k}`"))),
        }
    }
    let kind = kind.ok_or_else(|| ParseError::bad(kw, "missing type"))?;
    let track = track.ok_or_else(|| ParseError::bad(kw, "missing track"))?;
    let count = count.ok_or_else(|| ParseError::bad(kw, "missing count"))?;
    let seconds = match (kind, seconds) {
        (ThresholdType::Backoff, _) => seconds.unwrap_or(0),
        (_, Some(s)) => s,
        (_, None) => return Err(ParseError::bad(kw, "missing seconds")),
    };
    if kind == ThresholdType::Backoff && (count == 0 || mult.unwrap_or(0) <= 1) {
        return Err(ParseError::bad(
            kw,
            "backoff needs count > 0 and multiplier > 1",
        ));
    }
    Ok(Threshold {
        kind,
        track,
        count,
        seconds,
        multiplier: mult.unwrap_or(1),
    })
}

fn parse_tag(v: &str) -> PResult<Tag> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let kind = match parts.first().copied() {
        Some("session") => TagKind::Session,
        Some("host") => TagKind::Host,
        _ => return Err(ParseError::bad("tag", format!("bad tag type in `{v}`"))),
    };
    let mut t = Tag {
        kind,
        count: 256,
        metric: TagMetric::Packets,
        dst: false,
    };
    if let Some(c) = parts.get(1) {
        t.count = num_u32("tag", c)?;
        t.metric = match parts.get(2).copied() {
            Some("packets") => TagMetric::Packets,
            Some("seconds") => TagMetric::Seconds,
            Some("bytes") => TagMetric::Bytes,
            _ => return Err(ParseError::bad("tag", format!("bad metric in `{v}`"))),
        };
    }
    if let Some(d) = parts.get(3) {
        t.dst = match *d {
            "src" => false,
            "dst" => true,
            _ => return Err(ParseError::bad("tag", format!("bad direction in `{v}`"))),
        };
    }
    if parts.len() > 4 {
        return Err(ParseError::bad("tag", "too many arguments"));
    }
    Ok(t)
}

/// `stream_size:<side>,<op>,<n>` with Suricata 7's grammar: `side` is `server`, `client`,
/// `both` or `either`; `op` one of `>=` `<=` `>` `<` `!=` `!` `=`; `n` decimal digits
/// fitting 32 bits; spaces around each part.
fn parse_stream_size(v: &str) -> PResult<Keyword> {
    let bad = |d: String| ParseError::bad("stream_size", d);
    let parts: Vec<&str> = v.split(',').map(|p| p.trim_matches(' ')).collect();
    let [side, op, n] = parts.as_slice() else {
        return Err(bad(format!("expected side,op,value: `{v}`")));
    };
    let side = match *side {
        "server" => StreamSide::Server,
        "client" => StreamSide::Client,
        "both" => StreamSide::Both,
        "either" => StreamSide::Either,
        _ => return Err(bad(format!("bad side `{side}`"))),
    };
    let mode = match *op {
        ">=" => UintMode::Gte,
        "<=" => UintMode::Lte,
        ">" => UintMode::Gt,
        "<" => UintMode::Lt,
        "!=" | "!" => UintMode::Ne,
        "=" => UintMode::Eq,
        _ => return Err(bad(format!("bad operator `{op}`"))),
    };
    let a = Some(*n)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| bad(format!("bad value `{n}`")))?;
    Ok(Keyword::StreamSize {
        side,
        cmp: UintMatch {
            mode,
            a: u64::from(a),
            b: 0,
        },
    })
}

/// `msg`-style quoted, escaped string.
pub fn parse_msg(v: &str) -> PResult<String> {
    Ok(unescape(
        super::lexer::require_quotes("msg", v).unwrap_or_else(|_| unquote(v)),
    ))
}

/// Error for a keyword that is not a Suricata keyword.
pub fn unknown_keyword(name: &str) -> ParseError {
    ParseError::new(
        ErrorKind::UnknownKeyword(name.to_string()),
        "not a Suricata 7 keyword",
    )
}
