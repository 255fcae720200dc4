//! Turning a parsed [`Rule`] into a [`Sig`], or saying why it cannot be enforced yet.

use std::collections::HashMap;
use std::sync::Arc;

use shrike_packet::decode::DecodeEvent;
use shrike_rules::matcher::compile_rule_with;
use shrike_rules::parse::keywords::{
    BitCmd, FlowintOp, FlowintValue, Keyword, ThresholdType, Track,
};
use shrike_rules::parse::{Action, BufferId, Direction, Match, Protocol, Rule, UintMatch};

use shrike_app::{AppProto, Dir};
use shrike_rules::mpm::fast_pattern::select_fast_pattern;

use super::app_buffers::AppBuf;
use super::app_inspect::{
    AppEvent, AppFastPat, AppSection, AppSig, PktFastPat, RegKeyword, TlsCheck,
};
use super::keywords::{Check, Csum, FlowReq, IntCmp};
use super::sig::{mask, Header, PacketBuffer, ProtoSet, Section, Sig, SigInfo, SigKind};
use super::threshold::ThresholdSpec;
use super::vars::{IntOperand, PostOp};

/// Why a loaded rule is not enforced.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Needs an application-layer parser (buffer, keyword or header protocol named).
    AppLayer(String),
    /// Needs TCP stream reassembly (keyword named).
    Stream(String),
    /// A keyword Suricata knows but shrike does not enforce yet.
    Keyword(String),
    /// A transform on a packet buffer.
    Transform(String),
    /// Something Suricata would reject too (detail given).
    Invalid(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::AppLayer(n) => write!(f, "needs app-layer parser: {n}"),
            SkipReason::Stream(n) => write!(f, "needs stream reassembly: {n}"),
            SkipReason::Keyword(n) => write!(f, "keyword not supported yet: {n}"),
            SkipReason::Transform(n) => write!(f, "transform not supported on packet buffers: {n}"),
            SkipReason::Invalid(n) => write!(f, "invalid rule: {n}"),
        }
    }
}

/// Name → id tables for flow variables, shared by all rules of an engine.
#[derive(Debug, Default)]
pub(crate) struct VarNames {
    pub bits: HashMap<String, u32>,
    pub ints: HashMap<String, u32>,
    pub hosts: HashMap<String, u32>,
}

impl VarNames {
    fn bit(&mut self, n: &str) -> u32 {
        let next = self.bits.len() as u32;
        *self.bits.entry(n.to_string()).or_insert(next)
    }
    fn int(&mut self, n: &str) -> u32 {
        let next = self.ints.len() as u32;
        *self.ints.entry(n.to_string()).or_insert(next)
    }
    fn host(&mut self, n: &str) -> u32 {
        let next = self.hosts.len() as u32;
        *self.hosts.entry(n.to_string()).or_insert(next)
    }
}

/// Facts used to order signatures like Suricata (`detect-engine-sigorder.c`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OrderKeys {
    /// 1 not used, 2 read, 3 set and read, 4 set (Suricata's values).
    pub flowbits: u8,
    pub flowint: u8,
    pub flowvar: u8,
    pub pktvar: u8,
    pub hostbits: u8,
    pub ippairbits: u8,
}

fn var_type(read: bool, write: bool) -> u8 {
    match (read, write) {
        (false, false) => 1,
        (true, false) => 2,
        (true, true) => 3,
        (false, true) => 4,
    }
}

/// The result of compiling one rule.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub sig: Sig,
    pub order: OrderKeys,
    /// The rule's own threshold / detection_filter.
    pub threshold: Option<ThresholdSpec>,
}

/// Classification lookups for `classtype`.
pub(crate) type Classes = HashMap<String, (Arc<str>, u8)>;

fn app_keyword(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "http",
        "dns",
        "tls",
        "ssl",
        "ja3",
        "ja4",
        "ssh",
        "smb",
        "dce",
        "krb5",
        "snmp",
        "sip",
        "mqtt",
        "modbus",
        "dnp3",
        "enip",
        "cip",
        "ike",
        "nfs",
        "ftp",
        "rfb",
        "quic",
        "dhcp",
        "file",
        "pgsql",
        "rdp",
        "bittorrent",
        "websocket",
        "template",
        "uricontent",
        "urilen",
        "frame",
        "app-layer",
        "ldap",
        "smtp",
        "pop3",
        "imap",
        "telnet",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// `filesize`'s value: Suricata's 64-bit uint syntax (`100`, `<100`, `>100`, `100<>200`).
/// As Suricata 7.0.10's `DetectU64Parse`, a `KB`, `MB` or `GB` unit (any case, powers of
/// 1024, right after the number) is taken only in the plain equality form (`2kb`, `=2kb`);
/// with an operator or a range it is refused.
pub(crate) fn parse_filesize(v: &str) -> Result<UintMatch, String> {
    let t = v.trim();
    let eq = t.strip_prefix('=').map_or(t, str::trim_start);
    let digits = eq.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let mult: Option<u64> = match eq.get(digits..).map(str::to_ascii_lowercase).as_deref() {
            Some("kb") => Some(1 << 10),
            Some("mb") => Some(1 << 20),
            Some("gb") => Some(1 << 30),
            _ => None,
        };
        if let Some(mult) = mult {
            let n: u64 = eq[..digits]
                .parse()
                .map_err(|_| format!("bad number: `{v}`"))?;
            let n = n
                .checked_mul(mult)
                .ok_or_else(|| format!("too large: `{v}`"))?;
            return Ok(UintMatch::eq(n));
        }
    }
    UintMatch::parse(t, u64::MAX, "filesize").map_err(|e| e.to_string())
}

/// `filemd5` / `filesha1` / `filesha256` (Suricata's `DetectFileHashParse`): `[!]<file>`,
/// the file absolute, or relative to the rule file's folder, else to the working folder.
/// Each line's leading run of hex digits is a hash of the kind's length (a line without one
/// is skipped; another length refuses the rule, with the list's file and line).
pub(crate) fn parse_filehash(
    kind: super::app_inspect::FileHashKind,
    value: &str,
    rule_file: &str,
) -> Result<super::app_inspect::FileHashList, String> {
    use super::app_inspect::FileHashKind;
    let v = value.trim();
    let (negated, name) = match v.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, v),
    };
    if name.is_empty() {
        return Err("needs a file name".into());
    }
    let p = std::path::Path::new(name);
    let path = if p.is_absolute() {
        p.to_path_buf()
    } else {
        let beside = std::path::Path::new(rule_file)
            .parent()
            .map(|d| d.join(p))
            .filter(|c| c.exists());
        beside.unwrap_or_else(|| p.to_path_buf())
    };
    let text =
        std::fs::read(&path).map_err(|e| format!("opening hash file {}: {e}", path.display()))?;
    let len = match kind {
        FileHashKind::Md5 => 16,
        FileHashKind::Sha1 => 20,
        FileHashKind::Sha256 => 32,
    };
    let mut hashes = std::collections::HashSet::new();
    for (i, line) in text.split(|&c| c == b'\n').enumerate() {
        let hex: Vec<u8> = line
            .iter()
            .copied()
            .take_while(u8::is_ascii_hexdigit)
            .collect();
        if hex.is_empty() {
            continue;
        }
        if hex.len() != 2 * len {
            return Err(format!(
                "{}:{}: hash string not {} characters",
                path.display(),
                i + 1,
                2 * len
            ));
        }
        let bytes: Vec<u8> = hex
            .chunks(2)
            .map(|c| {
                let s = std::str::from_utf8(c).unwrap_or("00");
                u8::from_str_radix(s, 16).unwrap_or(0)
            })
            .collect();
        hashes.insert(bytes.into_boxed_slice());
    }
    Ok(super::app_inspect::FileHashList {
        kind,
        negated,
        hashes,
    })
}

fn csum_keyword(name: &str) -> Option<Csum> {
    Some(match name {
        "ipv4-csum" => Csum::Ipv4,
        "tcpv4-csum" => Csum::Tcpv4,
        "tcpv6-csum" => Csum::Tcpv6,
        "udpv4-csum" => Csum::Udpv4,
        "udpv6-csum" => Csum::Udpv6,
        "icmpv4-csum" => Csum::Icmpv4,
        "icmpv6-csum" => Csum::Icmpv6,
        _ => return None,
    })
}

fn packet_buffer(b: BufferId) -> Option<PacketBuffer> {
    Some(match b.name() {
        "pkt_data" => PacketBuffer::Payload,
        "ipv4.hdr" => PacketBuffer::Ipv4Hdr,
        "ipv6.hdr" => PacketBuffer::Ipv6Hdr,
        "tcp.hdr" => PacketBuffer::TcpHdr,
        "udp.hdr" => PacketBuffer::UdpHdr,
        "icmpv4.hdr" => PacketBuffer::Icmpv4Hdr,
        "icmpv6.hdr" => PacketBuffer::Icmpv6Hdr,
        _ => return None,
    })
}

fn header(rule: &Rule) -> Result<(ProtoSet, Option<AppProto>), SkipReason> {
    if let Protocol::App(_) = rule.protocol {
        let name = app_proto_name(rule);
        return match AppProto::from_name(&name).and_then(|p| Some((p, p.protocol()?))) {
            Some((p, d)) => Ok((ProtoSet::of(d.ip_protos), Some(p))),
            None => Err(SkipReason::AppLayer(format!("`{name}` rule header"))),
        };
    }
    Ok((
        match rule.protocol {
            Protocol::Ip | Protocol::Pkthdr => ProtoSet::any(),
            Protocol::Ipv4 => ProtoSet {
                v4_only: true,
                ..ProtoSet::any()
            },
            Protocol::Ipv6 => ProtoSet {
                v6_only: true,
                ..ProtoSet::any()
            },
            Protocol::Tcp | Protocol::TcpPkt => ProtoSet::of(&[6]),
            Protocol::TcpStream => ProtoSet::of(&[6]),
            Protocol::Udp => ProtoSet::of(&[17]),
            Protocol::Icmp => ProtoSet::of(&[1, 58]),
            Protocol::Icmpv4 => ProtoSet::of(&[1]),
            Protocol::Icmpv6 => ProtoSet::of(&[58]),
            Protocol::Sctp => ProtoSet::of(&[132]),
            Protocol::App(_) => {
                return Err(SkipReason::AppLayer(format!(
                    "`{}` rule header",
                    app_proto_name(rule)
                )))
            }
        },
        None,
    ))
}

fn app_proto_name(rule: &Rule) -> String {
    let n = format!("{:?}", rule.protocol);
    let n = n.trim_start_matches("App(").trim_end_matches(')');
    // CamelCase variant names back to Suricata's spelling (FtpData -> ftp-data).
    let mut out = String::with_capacity(n.len() + 2);
    for (i, c) in n.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn metadata_json(rule: &Rule) -> Option<Box<[u8]>> {
    // Suricata 7 writes the keys sorted and each key's values in reverse order of the rule
    // text (its list is built by prepending; checked against 7.0.10 on ET rules).
    let pairs: Vec<(&str, &str)> = rule.metadata_pairs().collect();
    let mut keys: Vec<(&str, Vec<&str>)> = Vec::new();
    for &(k, v) in pairs.iter().rev() {
        if v.is_empty() {
            continue;
        }
        match keys.iter_mut().find(|(kk, _)| *kk == k) {
            Some((_, vals)) => vals.push(v),
            None => keys.push((k, vec![v])),
        }
    }
    keys.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    if keys.is_empty() {
        return None;
    }
    let mut w = shrike_output::JsonWriter::new();
    w.start_object();
    for (k, vals) in &keys {
        w.open_array(k);
        for v in vals {
            w.str(v);
        }
        w.close();
    }
    w.close();
    Some(w.into_inner().into_boxed_slice())
}

fn uint_cmp(op: FlowintOp) -> Option<IntCmp> {
    Some(match op {
        FlowintOp::Eq => IntCmp::Eq,
        FlowintOp::Ne => IntCmp::Ne,
        FlowintOp::Lt => IntCmp::Lt,
        FlowintOp::Le => IntCmp::Le,
        FlowintOp::Gt => IntCmp::Gt,
        FlowintOp::Ge => IntCmp::Ge,
        _ => return None,
    })
}

/// Compile one rule.
pub(crate) fn compile(
    rule: &Rule,
    source: Arc<str>,
    line: u32,
    negated_addr: bool,
    classes: &Classes,
    names: &mut VarNames,
    pcre: shrike_rules::matcher::PcreLimits,
) -> Result<Compiled, SkipReason> {
    let (proto, header_app) = header(rule)?;
    let proto_covers_tcp = proto.contains(6);
    let mut app = AppSig {
        proto: header_app,
        ..AppSig::default()
    };
    let mut app_sections = Vec::new();
    let mut app_keyword_seen = header_app.is_some();

    // Buffers.
    let mut sections = Vec::with_capacity(rule.sections.len());
    let b64 = BufferId::by_name("base64_data");
    let mut has_payload = false;
    let mut anchored = false;
    // Suricata inspects the packet payload too for TCP payload rules using `stream_size`
    // (as for `depth`/`offset` contents).
    let mut stream_size = false;
    let (mut no_stream, mut dsize) = (false, false);
    let mut flow_capture = false;
    let mut flowvar_read = false;
    let mut pkt_capture = false;
    let frame_buf = BufferId::by_name("frame");
    let mut frame_sig: Option<(AppProto, u8)> = None;
    // Variables the rule's `pcre` captures set, in any buffer (signature ordering).
    for m in rule.sections.iter().flat_map(|s| &s.matches) {
        if let Match::Pcre(p) = m {
            for (k, _) in &p.captures {
                use shrike_rules::parse::CaptureKind;
                match k {
                    CaptureKind::Flow => flow_capture = true,
                    CaptureKind::Pkt | CaptureKind::PktKeyValue => pkt_capture = true,
                    CaptureKind::Alert => {}
                }
            }
        }
    }
    for s in &rule.sections {
        if Some(s.buffer) == b64 {
            continue;
        }
        if Some(s.buffer) == frame_buf {
            let (p, ty) = frame_target(rule, proto_covers_tcp, proto.contains(17), header_app)?;
            if frame_sig.is_some_and(|f| f != (p, ty)) {
                return Err(SkipReason::Invalid(
                    "more than one frame in a rule is not supported".to_string(),
                ));
            }
            frame_sig = Some((p, ty));
            continue;
        }
        let Some(pb) = packet_buffer(s.buffer) else {
            let Some(ab) = AppBuf::of_in(s.buffer, header_app) else {
                return Err(SkipReason::AppLayer(s.buffer.name().to_string()));
            };
            if ab == AppBuf::FileMagic {
                // Suricata refuses `file.magic` without libmagic, as `filemagic`.
                if !shrike_sys::magic::available() {
                    return Err(SkipReason::Invalid(
                        "file.magic: no libmagic on this system".into(),
                    ));
                }
                app.file_magic = true;
            } else {
                set_app_proto(&mut app, ab.proto())?;
            }
            app_keyword_seen = true;
            continue;
        };
        if let Some(t) = s.transforms.first() {
            return Err(SkipReason::Transform(format!("{t:?}").to_ascii_lowercase()));
        }
        has_payload |= pb == PacketBuffer::Payload;
        for m in &s.matches {
            if let Match::Content(c) = m {
                anchored |= pb == PacketBuffer::Payload
                    && (c.depth.is_some() || c.offset.is_some() || c.startswith);
            }
        }
    }
    let compiled = compile_rule_with(rule, pcre).map_err(|e| SkipReason::Invalid(e.to_string()))?;
    let mut frame_matcher = None;
    for c in compiled {
        if Some(c.buffer) == b64 {
            continue;
        }
        if Some(c.buffer) == frame_buf {
            frame_matcher = Some(c);
            continue;
        }
        let Some(pb) = packet_buffer(c.buffer) else {
            let ab = AppBuf::of_in(c.buffer, header_app)
                .ok_or_else(|| SkipReason::AppLayer(c.buffer.name().to_string()))?;
            app_sections.push(AppSection {
                buf: ab,
                matcher: c,
            });
            continue;
        };
        sections.push(Section {
            buffer: pb,
            matcher: c,
        });
    }

    // Keywords.
    let mut checks = Vec::new();
    let mut post = Vec::new();
    let mut noalert = rule.noalert;
    let mut has_flow_kw = false;
    let mut threshold: Option<ThresholdSpec> = None;
    let (mut bits_read, mut bits_write, mut int_read, mut int_write) = (false, false, false, false);
    let mut require_flowvar = false;
    let mut host_checks = Vec::new();
    let mut host_post = Vec::new();
    // Suricata's `SCSigGetXbitsType`: reads are xbits checks, writes hostbits operations.
    let mut xbits_host_read = false;
    let mut xbits_pair_read = false;
    let mut hostbits_write = false;
    let mut tags = Vec::new();
    for k in &rule.keywords {
        match k {
            Keyword::Flow(o) => {
                no_stream |= o.no_stream;
                has_flow_kw = true;
                checks.push(Check::Flow(FlowReq::from_opts(o)));
            }
            Keyword::Flowbits(fb) => {
                // Suricata 7.0 only splits `isset`/`isnotset` on `|` (any of them); every
                // other list (`set,a|b`, `isset,a&b`) is one flowbit whose name holds the
                // operator (checked against 7.0.10).
                let split = fb.any && matches!(fb.cmd, BitCmd::IsSet | BitCmd::IsNotSet);
                let ids: Box<[u32]> = if split || fb.names.len() <= 1 {
                    fb.names.iter().map(|n| names.bit(n)).collect()
                } else {
                    let joined = fb.names.join(if fb.any { "|" } else { "&" });
                    Box::new([names.bit(&joined)])
                };
                let fb_any = split;
                match fb.cmd {
                    BitCmd::NoAlert => noalert = true,
                    BitCmd::IsSet => {
                        bits_read = true;
                        require_flowvar = true;
                        checks.push(Check::BitsIsSet { ids, any: fb_any })
                    }
                    BitCmd::IsNotSet => {
                        bits_read = true;
                        checks.push(Check::BitsIsNotSet { ids, any: fb_any })
                    }
                    BitCmd::Set => {
                        bits_write = true;
                        post.push(PostOp::BitsSet(ids))
                    }
                    BitCmd::Unset => {
                        bits_write = true;
                        post.push(PostOp::BitsUnset(ids))
                    }
                    BitCmd::Toggle => {
                        bits_write = true;
                        post.push(PostOp::BitsToggle(ids))
                    }
                }
            }
            Keyword::Flowint(fi) => {
                let id = names.int(&fi.name);
                let rhs = match &fi.value {
                    Some(FlowintValue::Num(n)) => IntOperand::Lit(*n),
                    Some(FlowintValue::Var(v)) => IntOperand::Var(names.int(v)),
                    None => IntOperand::Lit(0),
                };
                match fi.op {
                    FlowintOp::Set => {
                        int_write = true;
                        post.push(PostOp::IntSet(id, rhs))
                    }
                    FlowintOp::Add => {
                        int_write = true;
                        post.push(PostOp::IntAdd(id, rhs))
                    }
                    FlowintOp::Sub => {
                        int_write = true;
                        post.push(PostOp::IntSub(id, rhs))
                    }
                    FlowintOp::IsSet => {
                        int_read = true;
                        checks.push(Check::IntIsSet(id))
                    }
                    FlowintOp::NotSet => {
                        int_read = true;
                        checks.push(Check::IntNotSet(id))
                    }
                    op => {
                        int_read = true;
                        if let Some(op) = uint_cmp(op) {
                            checks.push(Check::IntCmp { id, op, rhs })
                        }
                    }
                }
            }
            Keyword::Xbits(x) => {
                if let Some(b) = super::xbits::compile(x, &mut |n| names.host(n))? {
                    // Suricata's ordering counts xbits only among the checks.
                    if b.cmd.is_check() {
                        match b.track {
                            super::hostbits::Track::Pair => xbits_pair_read = true,
                            _ => xbits_host_read = true,
                        }
                        host_checks.push(b);
                    } else {
                        host_post.push(b);
                    }
                } else {
                    noalert = true;
                }
            }
            Keyword::Flags(f) => checks.push(Check::Flags {
                modifier: f.modifier,
                flags: f.flags,
                keep: !f.ignore,
            }),
            Keyword::Fragbits(f) => checks.push(Check::Fragbits {
                modifier: f.modifier,
                bits: f.bits,
            }),
            Keyword::Fragoffset(u) => checks.push(Check::Fragoffset(*u)),
            Keyword::Ttl(u) => checks.push(Check::Ttl(*u)),
            Keyword::Tos(u) => checks.push(Check::Tos(*u)),
            Keyword::Id(u) => checks.push(Check::Id(*u)),
            Keyword::Ipopts(o) => checks.push(Check::Ipopts(*o)),
            Keyword::IpProto(u) => checks.push(Check::IpProto(*u)),
            Keyword::Itype(u) => checks.push(Check::Itype(*u)),
            Keyword::Icode(u) => checks.push(Check::Icode(*u)),
            Keyword::IcmpId(u) => checks.push(Check::IcmpId(*u)),
            Keyword::IcmpSeq(u) => checks.push(Check::IcmpSeq(*u)),
            Keyword::Seq(s) => checks.push(Check::Seq(*s)),
            Keyword::Ack(a) => checks.push(Check::Ack(*a)),
            Keyword::Window(u) => checks.push(Check::Window(*u)),
            Keyword::SameIp => checks.push(Check::SameIp),
            Keyword::TcpMss(u) => checks.push(Check::TcpMss(*u)),
            Keyword::FlowAge(u) => checks.push(Check::FlowAge(*u)),
            Keyword::Icmpv6Mtu(u) => checks.push(Check::Icmpv6Mtu(*u)),
            Keyword::Dsize(u) => {
                dsize = true;
                checks.push(Check::Dsize(*u))
            }
            Keyword::Urilen { len, raw } => {
                set_app_proto(&mut app, AppProto::HTTP)?;
                app_keyword_seen = true;
                app.urilen = Some((*len, *raw));
            }
            Keyword::Threshold(t) | Keyword::DetectionFilter(t) => {
                if threshold.is_some() {
                    return Err(SkipReason::Invalid(
                        "more than one threshold/detection_filter".into(),
                    ));
                }
                // Suricata 7.0 rejects both (they came with 8.0).
                if t.track == Track::ByFlow {
                    return Err(SkipReason::Invalid(
                        "threshold track by_flow (Suricata 8)".into(),
                    ));
                }
                if t.kind == ThresholdType::Backoff {
                    return Err(SkipReason::Invalid(
                        "threshold type backoff (Suricata 8)".into(),
                    ));
                }
                threshold = Some(ThresholdSpec::from_keyword(t));
            }
            Keyword::Tag(t) => tags.push(*t),
            Keyword::AppLayerProtocol { negated, name } => {
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.protocol_checks).into_vec();
                list.push((name.as_str().into(), *negated));
                app.protocol_checks = list.into_boxed_slice();
            }
            Keyword::AppLayerEvent(v) if !v.contains('.') => {
                // Suricata's packet events (`AppLayerGetPktEventInfo`, names compared
                // without case): a packet check, no app protocol.
                let name = v.trim();
                let known = shrike_app::layer::PACKET_EVENTS
                    .iter()
                    .find(|(_, n)| n.eq_ignore_ascii_case(name));
                match known {
                    Some(&(bit, _)) => checks.push(Check::AppPktEvent(bit)),
                    None if name.eq_ignore_ascii_case("applayer_wrong_direction_first_data") => {
                        return Err(SkipReason::AppLayer(format!(
                            "app-layer-event:{name} (an event shrike does not raise)"
                        )));
                    }
                    None => {
                        return Err(SkipReason::Invalid(format!(
                            "app-layer-event: unknown event \"{name}\""
                        )));
                    }
                }
            }
            Keyword::AppLayerEvent(v) => {
                let Some(e) = AppEvent::parse(v) else {
                    return Err(SkipReason::AppLayer(format!("app-layer-event:{v}")));
                };
                set_app_proto(&mut app, e.proto())?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.events).into_vec();
                list.push(e);
                app.events = list.into_boxed_slice();
            }
            Keyword::DecodeEvent(n) | Keyword::EngineEvent(n) => match DecodeEvent::from_name(n) {
                Some(e) => checks.push(Check::Event(e)),
                // Every Suricata 7 decoder and stream event is known: another name is
                // refused as Suricata refuses it (`unknown decode event`).
                None if n.starts_with("stream.") => {
                    match shrike_stream::StreamEvent::from_name(n) {
                        Some(e) => checks.push(Check::StreamEvent(e)),
                        None => {
                            return Err(SkipReason::Invalid(format!(
                                "unknown decode event \"{n}\""
                            )))
                        }
                    }
                }
                None => {
                    return Err(SkipReason::Invalid(format!("unknown decode event \"{n}\"")));
                }
            },
            Keyword::StreamEvent(n) => match shrike_stream::StreamEvent::from_name(n) {
                Some(e) => checks.push(Check::StreamEvent(e)),
                None => {
                    return Err(SkipReason::Invalid(format!(
                        "unknown decode event \"stream.{n}\""
                    )))
                }
            },
            Keyword::StreamSize { side, cmp } => {
                stream_size = true;
                checks.push(Check::StreamSize {
                    side: *side,
                    cmp: *cmp,
                    prefilter: false,
                })
            }
            Keyword::Prefilter => {
                // Only the packet's view changes: prefilter engines skip flow-end pseudo
                // packets. Other keywords' prefilters change nothing observable.
                if let Some(Check::StreamSize { prefilter, .. }) = checks.last_mut() {
                    *prefilter = true;
                }
            }
            Keyword::Unknown { name, value, .. } if name == "hostbits" => {
                use super::hostbits::{self, HostBit, Track, HOSTBIT_EXPIRE_SECS};
                if let Some((cmd, n, dst)) = hostbits::parse(value.as_deref().unwrap_or(""))? {
                    let b = HostBit {
                        cmd,
                        id: names.host(&n),
                        track: if dst { Track::Dst } else { Track::Src },
                        expire: HOSTBIT_EXPIRE_SECS,
                    };
                    // Suricata's ordering counts hostbits only among the post-match ops.
                    if cmd.is_check() {
                        host_checks.push(b);
                    } else {
                        hostbits_write = true;
                        host_post.push(b);
                    }
                } else {
                    noalert = true;
                }
            }
            Keyword::Unknown { name, value, .. }
                if super::app_inspect::strict_tls_keyword(name) =>
            {
                let c = TlsCheck::parse_strict(name, value.as_deref())
                    .map_err(|e| SkipReason::Invalid(format!("{name}: {e}")))?;
                set_app_proto(&mut app, AppProto::TLS)?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.tls_checks).into_vec();
                list.push(c);
                app.tls_checks = list.into_boxed_slice();
            }
            Keyword::Unknown { name, value, .. }
                if TlsCheck::parse(name, value.as_deref()).is_some() =>
            {
                set_app_proto(&mut app, AppProto::TLS)?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.tls_checks).into_vec();
                list.extend(TlsCheck::parse(name, value.as_deref()));
                app.tls_checks = list.into_boxed_slice();
            }
            Keyword::Unknown { name, value, .. }
                if shrike_app::registry::find_keyword(name).is_some() =>
            {
                let Some((p, d)) = shrike_app::registry::find_keyword(name) else {
                    continue;
                };
                let m = (d.setup)(value.as_deref())
                    .map_err(|e| SkipReason::Invalid(format!("{name}: {e}")))?;
                set_app_proto(&mut app, p)?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.keywords).into_vec();
                list.push(RegKeyword {
                    proto: p,
                    dir: d.dir,
                    m,
                });
                app.keywords = list.into_boxed_slice();
            }
            Keyword::Unknown { name, value, .. }
                if matches!(name.as_str(), "filemd5" | "filesha1" | "filesha256") =>
            {
                use super::app_inspect::FileHashKind;
                let kind = match name.as_str() {
                    "filemd5" => FileHashKind::Md5,
                    "filesha1" => FileHashKind::Sha1,
                    _ => FileHashKind::Sha256,
                };
                let m = parse_filehash(kind, value.as_deref().unwrap_or(""), &source)
                    .map_err(|e| SkipReason::Invalid(format!("{name}: {e}")))?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.filehash).into_vec();
                list.push(Arc::new(m));
                app.filehash = list.into_boxed_slice();
            }
            Keyword::Unknown { name, value, .. } if name == "filestore" => {
                let spec = super::app_inspect::FilestoreSpec::parse(value.as_deref())
                    .map_err(|e| SkipReason::Invalid(format!("filestore: {e}")))?;
                app_keyword_seen = true;
                app.filestore = Some(spec);
            }
            Keyword::Unknown { name, value, .. } if name == "filemagic" => {
                // Suricata without libmagic refuses the keyword (`DetectFilemagicSetupNoSupport`).
                if !shrike_sys::magic::available() {
                    return Err(SkipReason::Invalid(
                        "filemagic: no libmagic on this system".into(),
                    ));
                }
                let (pat, neg) = shrike_rules::parse::payload::parse_content_value(
                    "filemagic",
                    value.as_deref().unwrap_or(""),
                )
                .map_err(|e| SkipReason::Invalid(format!("filemagic: {e}")))?;
                app_keyword_seen = true;
                let mut list = std::mem::take(&mut app.filemagic).into_vec();
                list.push((pat.to_ascii_lowercase(), neg));
                app.filemagic = list.into_boxed_slice();
            }
            Keyword::Unknown { name, value, .. } if name == "filesize" => {
                let m = parse_filesize(value.as_deref().unwrap_or(""))
                    .map_err(|e| SkipReason::Invalid(format!("filesize: {e}")))?;
                app_keyword_seen = true;
                app.filesize = Some(m);
            }
            // The frame was resolved with the buffers; `requires` was checked by the loader.
            Keyword::Unknown { name, .. } if name == "frame" || name == "requires" => {}
            Keyword::Unknown { name, value, .. } if name == "flowvar" => {
                // Suricata's `(.*),(.*)`: the name before the last comma, the content (its
                // quotes stripped, `|hex|` decoded) after it.
                let v = value.as_deref().unwrap_or("");
                let bad = || SkipReason::Invalid(format!("flowvar:{v} is not a valid setting"));
                let (var, c) = v.rsplit_once(',').ok_or_else(bad)?;
                let (var, c) = (var.trim(), c.trim());
                let c = c.strip_prefix('"').unwrap_or(c);
                let c = c.strip_suffix('"').unwrap_or(c);
                if var.is_empty() || var.len() > 63 || c.is_empty() {
                    return Err(bad());
                }
                let content = shrike_rules::parse::payload::decode_content("flowvar", c)
                    .map_err(|e| SkipReason::Invalid(e.to_string()))?;
                flowvar_read = true;
                checks.push(Check::FlowVar {
                    name: var.into(),
                    content: content.into(),
                });
            }
            Keyword::Unknown { name, value, .. } if name == "rpc" => {
                let v = value.as_deref().unwrap_or("");
                let (program, version, procedure) = crate::keywords::parse_rpc(v)
                    .ok_or_else(|| SkipReason::Invalid(format!("rpc:{v}")))?;
                checks.push(Check::Rpc {
                    program,
                    version,
                    procedure,
                });
            }
            Keyword::Unknown { name, .. } if name == "tls.store" || name == "tls_store" => {
                set_app_proto(&mut app, AppProto::TLS)?;
                app_keyword_seen = true;
            }
            Keyword::Unknown { name, value, .. } => {
                if let Some(which) = csum_keyword(name) {
                    let v = value.as_deref().map(str::trim).unwrap_or("");
                    let valid = match v {
                        "valid" => true,
                        "invalid" => false,
                        _ => return Err(SkipReason::Invalid(format!("{name}:{v}"))),
                    };
                    checks.push(Check::Csum { which, valid });
                } else if app_keyword(name) {
                    return Err(SkipReason::AppLayer(name.clone()));
                } else {
                    return Err(SkipReason::Keyword(name.clone()));
                }
            }
        }
    }

    // App layer.
    let app = if app_keyword_seen {
        app.http2 = app.proto == Some(AppProto::HTTP) && app_proto_name(rule) != "http1";
        app.sections = app_sections.into_boxed_slice();
        app.dir = app_dir(&app, &checks);
        // Registered protocols' two-way buffers, keywords and events decide per direction;
        // HTTP/2
        // keeps detect state per direction for the HTTP buffers too (an `http2` rule on a
        // two-way buffer alerts once per direction, as Suricata 7).
        let h2 = app.proto.is_some() && app.proto == super::app_inspect::http2_proto();
        // `ssl_version` / `ssl_state` (Suricata's two-way `tls_generic` list) too.
        let two_way_tls = !app.tls_checks.is_empty()
            && !app
                .tls_checks
                .iter()
                .any(super::app_inspect::TlsCheck::to_client_only);
        app.per_dir = app.dir.is_none()
            && (two_way_tls
                || !(app.sections.is_empty() && app.keywords.is_empty() && app.events.is_empty()))
            && (app.tls_checks.is_empty() || two_way_tls)
            && app.sections.iter().all(|s| match s.buf {
                AppBuf::Reg { dir: None, .. } => true,
                AppBuf::Http(h) => h2 && h.direction().is_none(),
                _ => false,
            })
            && app.keywords.iter().all(|k| k.dir.is_none())
            // ftp-data's one flow-long transaction alerts once, whichever direction (Suricata
            // 7.0.10 on suricata-verify's ftp-download-active/passive and ndpi/ftp.pcap).
            && app.proto != shrike_app::AppProto::from_name("ftp-data")
            && app.events.iter().all(|e| matches!(e, AppEvent::Reg(..)));
        (app.fp, app.pkt_fp) = fast_patterns(rule, &app);
        Some(Box::new(app))
    } else {
        None
    };
    let app_tx = app.as_ref().is_some_and(|a| a.is_tx());
    let frame = match (frame_sig, frame_matcher) {
        (Some((p, ty)), Some(m)) => {
            // Suricata's frame rules inspect frames only: no packet payload, no
            // transaction keyword beside them (`DetectFrameSetup`, `SigValidate`).
            if !sections.is_empty() || app_tx {
                return Err(SkipReason::Invalid(
                    "frame inspection mixed with payload or app-layer keywords".to_string(),
                ));
            }
            shrike_app::frames::enable(p, ty);
            Some(Box::new(super::frames::FrameSig {
                proto: p,
                ty,
                matcher: m,
            }))
        }
        _ => None,
    };

    // Type and mask.
    let only_event_checks =
        !checks.is_empty() && checks.iter().all(|c| matches!(c, Check::Event(_)));
    // hostbits are IP-only compatible, flowbits only with `set` (Suricata 7).
    let iponly_compat = app.is_none()
        && sections.is_empty()
        && !has_flow_kw
        && checks.is_empty()
        && post.iter().all(|p| matches!(p, PostOp::BitsSet(_)));
    let kind = if frame.is_some() {
        SigKind::Frame
    } else if app_tx {
        SigKind::App
    } else if iponly_compat {
        if negated_addr {
            SigKind::LikeIpOnly
        } else {
            SigKind::IpOnly
        }
    } else if sections.is_empty()
        && only_event_checks
        && post.is_empty()
        && host_checks.is_empty()
        && host_post.is_empty()
    {
        SigKind::DecoderEvent
    } else {
        SigKind::Packet
    };
    let mut m = 0u8;
    if has_payload {
        m |= mask::PAYLOAD;
    }
    if has_flow_kw || !post.is_empty() {
        m |= mask::FLOW;
    }
    for c in &checks {
        m |= c.mask();
    }
    if m & mask::PAYLOAD != 0 {
        m &= !mask::NO_PAYLOAD;
    }
    if checks.iter().any(|c| matches!(c, Check::Event(_))) {
        m |= mask::ENGINE_EVENT;
    }

    // Classification and priority.
    let (class_msg, class_prio) = match rule.classtype.as_deref() {
        Some(ct) => match classes.get(ct) {
            Some((msg, prio)) => (Some(Arc::clone(msg)), Some(u32::from(*prio))),
            None => (None, None),
        },
        None => (None, None),
    };
    let priority = rule.priority.or(class_prio).unwrap_or(3);

    let header = Header {
        proto,
        src_any: rule.src_addr.is_any(),
        dst_any: rule.dst_addr.is_any(),
        sp_any: rule.src_ports.is_any(),
        dp_any: rule.dst_ports.is_any(),
        src: Arc::clone(&rule.src_addr),
        dst: Arc::clone(&rule.dst_addr),
        sp: Arc::clone(&rule.src_ports),
        dp: Arc::clone(&rule.dst_ports),
        bidir: rule.direction == Direction::Both,
    };
    let order = OrderKeys {
        flowbits: var_type(bits_read, bits_write),
        flowint: var_type(int_read, int_write),
        flowvar: var_type(flowvar_read, flow_capture),
        pktvar: var_type(false, pkt_capture),
        hostbits: var_type(xbits_host_read, hostbits_write),
        ippairbits: var_type(xbits_pair_read, false),
    };
    // dsize and the other packet-header keywords make a TCP payload rule packet-only
    // (Suricata's SIG_FLAG_REQUIRE_PACKET set before SigValidate would add REQUIRE_STREAM).
    let packet_only = dsize || checks.iter().any(Check::requires_packet);
    let sig = Sig {
        info: SigInfo {
            gid: rule.gid,
            sid: rule.sid,
            rev: rule.rev,
            msg: rule.msg.clone().into_boxed_str(),
            action: rule.action,
            class_msg,
            priority,
            metadata_json: metadata_json(rule),
            source,
            line,
            target: rule.target,
        },
        kind,
        header,
        mask: m,
        checks: checks.into_boxed_slice(),
        sections: sections.into_boxed_slice(),
        post: post.into_boxed_slice(),
        threshold: None,
        suppress: Box::new([]),
        noalert,
        require_flowvar,
        host_checks: host_checks.into_boxed_slice(),
        host_post: host_post.into_boxed_slice(),
        tags: tags.into_boxed_slice(),
        stream: super::stream_inspect::StreamMode::of(
            match rule.protocol {
                Protocol::Tcp
                | Protocol::TcpStream
                | Protocol::Ip
                | Protocol::Ipv4
                | Protocol::Ipv6
                | Protocol::Pkthdr => true,
                // An app-layer rule covers TCP when its protocol runs over TCP.
                Protocol::App(_) => proto_covers_tcp,
                _ => false,
            },
            has_payload,
            no_stream,
            packet_only,
            anchored || stream_size,
            rule.protocol == Protocol::TcpStream,
        ),
        app,
        frame,
    };
    Ok(Compiled {
        sig,
        order,
        threshold,
    })
}

/// The protocol and frame type of the rule's `frame:<proto>.<type>` (or `frame:<type>`
/// in a rule of a protocol), as Suricata's `DetectFrameSetup` resolves it.
fn frame_target(
    rule: &Rule,
    tcp: bool,
    udp: bool,
    header_app: Option<AppProto>,
) -> Result<(AppProto, u8), SkipReason> {
    let value = rule
        .keywords
        .iter()
        .find_map(|k| match k {
            Keyword::Unknown { name, value, .. } if name == "frame" => value.as_deref(),
            _ => None,
        })
        .ok_or_else(|| SkipReason::Invalid("frame without a name".to_string()))?
        .trim();
    if !(tcp || udp) {
        return Err(SkipReason::Invalid(
            "'frame' keyword only supported for TCP and UDP".to_string(),
        ));
    }
    if matches!(rule.protocol, Protocol::TcpPkt | Protocol::TcpStream) {
        // Packet-only and stream-only rules cannot inspect app-layer frames.
        return Err(SkipReason::Invalid(format!(
            "'frame' keyword in a {} rule",
            app_proto_name(rule)
        )));
    }
    let (kw_proto, short) = match value.split_once('.') {
        Some((p, rest)) => match AppProto::from_name(p).filter(|p| p.protocol().is_some()) {
            Some(ap) => (Some(ap), rest),
            None => (None, value),
        },
        None => (None, value),
    };
    let proto = match (kw_proto, header_app) {
        (None, None) => {
            return Err(SkipReason::Invalid(format!(
                "rule protocol unknown, can't use shorthand notation for frame '{value}'"
            )))
        }
        (None, Some(h)) => h,
        (Some(k), None) => k,
        (Some(k), Some(h)) if h.sig_matches(k) || k == h => k,
        (Some(k), Some(h)) => {
            return Err(SkipReason::Invalid(format!(
                "frame '{value}' protocol '{}' mismatch with rule protocol '{}'",
                k.name(),
                h.name()
            )))
        }
    };
    let ty = (tcp
        .then(|| shrike_app::frames::type_of(proto, short, true))
        .flatten())
    .or_else(|| {
        udp.then(|| shrike_app::frames::type_of(proto, short, false))
            .flatten()
    })
    .ok_or_else(|| {
        SkipReason::Invalid(format!(
            "unknown frame '{short}' for protocol '{}'",
            proto.name()
        ))
    })?;
    Ok((proto, ty))
}

/// Record the protocol an app keyword belongs to; a rule mixing protocols is rejected.
fn set_app_proto(app: &mut AppSig, p: AppProto) -> Result<(), SkipReason> {
    match app.proto {
        None => {
            app.proto = Some(p);
            Ok(())
        }
        // Suricata's `DetectSignatureSetAppProto`: an SMB keyword in a DCERPC rule is
        // refused; a DCERPC keyword in an SMB rule keeps the rule SMB.
        Some(q) if q == AppProto::DCERPC && p == AppProto::SMB => Err(SkipReason::Invalid(
            "keywords of smb in a dcerpc rule".to_string(),
        )),
        Some(q) if q.sig_matches(p) || p.sig_matches(q) => Ok(()),
        // HTTP keywords in an `http2` rule (Suricata 7 inspects them on HTTP/2).
        Some(q) if p == AppProto::HTTP && Some(q) == super::app_inspect::http2_proto() => Ok(()),
        Some(q) => Err(SkipReason::Invalid(format!(
            "keywords of {} in a {} rule",
            p.name(),
            q.name()
        ))),
    }
}

/// The direction a transaction rule is inspected in: the `flow` keyword's, else the
/// one-sided buffers' (to-client ones win, as Suricata's mixed rules are to-client), else
/// both.
fn app_dir(app: &AppSig, checks: &[Check]) -> Option<Dir> {
    for c in checks {
        if let Check::Flow(f) = c {
            if f.to_server {
                return Some(Dir::ToServer);
            }
            if f.to_client {
                return Some(Dir::ToClient);
            }
        }
    }
    let dirs = app.sections.iter().filter_map(|s| s.buf.dir());
    let mut out = None;
    for d in dirs {
        if d == Dir::ToClient {
            return Some(Dir::ToClient);
        }
        out = Some(d);
    }
    if app.urilen.is_some() {
        out = out.or(Some(Dir::ToServer));
    }
    // The certificate and version keywords are to-client; `ssl_version` / `ssl_state`
    // (Suricata's `tls_generic`) are inspected both ways.
    if app.tls_checks.iter().any(TlsCheck::to_client_only) {
        return Some(Dir::ToClient);
    }
    for k in app.keywords.iter() {
        if let Some(d) = k.dir {
            if d == Dir::ToClient {
                return Some(Dir::ToClient);
            }
            out = Some(d);
        }
    }
    out
}

/// The rule's fast pattern, selected once: as an app-buffer prefilter pattern (the buffer
/// with its section's transforms, lowercased bytes, exact bytes when case matters), or as
/// packet payload content (lowercased, exact). Negated or empty patterns are neither.
/// Unsupported transforms never get here: the rule was skipped.
fn fast_patterns(rule: &Rule, app: &AppSig) -> (AppFastPat, PktFastPat) {
    let Some(c) = select_fast_pattern(rule).filter(|c| !c.negated && !c.pattern.is_empty()) else {
        return (None, None);
    };
    let lower = c.pattern.to_ascii_lowercase();
    let exact = (!c.nocase).then(|| c.pattern.clone());
    if c.buffer == BufferId::PAYLOAD {
        return (None, Some((lower, exact)));
    }
    // The fast pattern's own section (a buffer can appear in several, with different
    // transforms).
    let key = AppBuf::of_in(c.buffer, app.proto).and_then(|buf| {
        let want = &rule.sections.get(c.section)?.transforms;
        app.sections
            .iter()
            .find(|s| s.buf == buf && &s.matcher.transforms == want)
            .map(|s| (buf, s.matcher.transforms.clone().into()))
    });
    (key.map(|k| (k, lower, exact)), None)
}

/// Suricata's `ActionOrderVal` with the default action order (pass, drop, reject, alert).
pub(crate) fn action_order(a: Action) -> u8 {
    match a {
        Action::Pass => 0,
        Action::Drop => 1,
        Action::Reject | Action::RejectSrc | Action::RejectDst | Action::RejectBoth => 2,
        Action::Alert => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_filehash, parse_filesize};
    use crate::app_inspect::FileHashKind;
    use shrike_rules::parse::UintMode;

    /// Suricata 7.0.10 (`suricata -T`): units only in the plain equality form.
    #[test]
    fn filesize_values_as_suricata() {
        let eq = |v: &str| parse_filesize(v).map(|m| (m.mode, m.a));
        assert_eq!(eq("2KB"), Ok((UintMode::Eq, 2048)));
        assert_eq!(eq("=2kb"), Ok((UintMode::Eq, 2048)));
        assert_eq!(eq(" 2gb "), Ok((UintMode::Eq, 2 << 30)));
        assert_eq!(eq(">100").map(|m| m.0), Ok(UintMode::Gt));
        assert_eq!(eq("100<>200").map(|m| m.0), Ok(UintMode::Range));
        for bad in ["<2kb", ">1mb", "1<>2kb", "2 KB", "2tb", "2k", "abc"] {
            assert!(parse_filesize(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn file_hash_lists_as_suricata() {
        let dir = std::env::temp_dir().join(format!("shrike-filehash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rules = dir.join("x.rules");
        std::fs::write(
            dir.join("ok.md5"),
            "# comment\n6963BEC0dabec7af2996fcab1cd36507 name\n\n6963bec0dabec7af2996fcab1cd36507\n",
        )
        .unwrap();
        std::fs::write(dir.join("short.md5"), "abc\n").unwrap();
        let rf = rules.to_str().unwrap();
        let m = parse_filehash(FileHashKind::Md5, "ok.md5", rf).unwrap();
        assert!(!m.negated);
        assert_eq!(m.hashes.len(), 1);
        assert!(m.hashes.contains(
            &[
                0x69, 0x63, 0xbe, 0xc0, 0xda, 0xbe, 0xc7, 0xaf, 0x29, 0x96, 0xfc, 0xab, 0x1c, 0xd3,
                0x65, 0x07
            ][..]
        ));
        assert!(
            parse_filehash(FileHashKind::Md5, " !ok.md5", rf)
                .unwrap()
                .negated
        );
        // The same list read as SHA-1 has the wrong length; a short line too; a missing file.
        let e = parse_filehash(FileHashKind::Sha1, "ok.md5", rf).unwrap_err();
        assert!(e.contains("ok.md5:2") && e.contains("40"), "{e}");
        assert!(parse_filehash(FileHashKind::Md5, "short.md5", rf).is_err());
        assert!(parse_filehash(FileHashKind::Md5, "missing.md5", rf).is_err());
        assert!(parse_filehash(FileHashKind::Md5, "", rf).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn filestore_values_as_suricata() {
        use crate::app_inspect::FilestoreSpec;
        use shrike_app::files::StoreScope;
        let p = |v: Option<&str>| FilestoreSpec::parse(v).map(|s| (s.dirs, s.scope));
        assert_eq!(p(None), Ok((None, StoreScope::File)));
        assert_eq!(
            p(Some("request")),
            Ok((Some([true, false]), StoreScope::File))
        );
        assert_eq!(
            p(Some("to_client,file")),
            Ok((Some([false, true]), StoreScope::File))
        );
        assert_eq!(
            p(Some("to_server,tx")),
            Ok((Some([true, false]), StoreScope::Tx))
        );
        assert_eq!(
            p(Some("both, flow")),
            Ok((Some([true, true]), StoreScope::Flow))
        );
        assert_eq!(
            p(Some("both,ssn")),
            Ok((Some([true, true]), StoreScope::Flow))
        );
        for bad in ["a,b,c,d", "to_server;tx", "1"] {
            assert!(p(Some(bad)).is_err(), "{bad}");
        }
    }
}
