//! Transaction inspection (Suricata's `DetectRunTx`): rules that read app-layer buffers
//! (`http.uri`, `dns.query`, `tls.sni`, `urilen`, `app-layer-event` ...) are matched against
//! the flow's transactions, not the packet. Each such rule is evaluated on a transaction once
//! all the buffers it reads are available at the transaction's progress, alerts at most once
//! per transaction, and is not evaluated again on a transaction once it matched or failed on
//! final data. Packet-level parts of the rule (header, `flow`, `flowbits`, payload content)
//! are checked on the packet that triggers the inspection, as Suricata does.
//!
//! Rules are prefiltered per protocol, buffer and direction on their fast pattern
//! (`fast_pattern` on the rule's buffer, else the engine's choice), the rest are always
//! candidates.

use std::collections::{HashMap, HashSet};

use shrike_app::dns::DnsEvent;
use shrike_app::http::HttpEvent;
use shrike_app::layer::AppFlow;
use shrike_app::tls::TlsEvent;
use shrike_app::{AppProto, Dir};
use shrike_rules::matcher::{CompiledSection, MatchEnv, Scratch};
use shrike_rules::parse::{Transform, UintMatch};

use super::app_buffers::{apply_transforms, readiness, visit, AppBuf};
use super::prefilter::{self, Prefilter};
use super::sig::Sig;

/// A compiled section reading an app-layer buffer.
#[derive(Debug)]
pub(crate) struct AppSection {
    pub buf: AppBuf,
    pub matcher: CompiledSection,
}

/// An `app-layer-event` check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AppEvent {
    Http(HttpEvent),
    Dns(DnsEvent),
    Tls(TlsEvent),
    /// An event of a registered protocol ([`shrike_app::registry::Protocol::events`]).
    Reg(AppProto, u16),
}

impl AppEvent {
    /// Parse `proto.event`.
    pub(crate) fn parse(v: &str) -> Option<AppEvent> {
        let (p, e) = v.trim().split_once('.')?;
        match p {
            "http" => HttpEvent::from_name(e).map(AppEvent::Http),
            "dns" => DnsEvent::from_name(e).map(AppEvent::Dns),
            "tls" => TlsEvent::from_name(e).map(AppEvent::Tls),
            _ => shrike_app::registry::find_event(v).map(|(p, id)| AppEvent::Reg(p, id)),
        }
    }

    pub(crate) fn proto(self) -> AppProto {
        match self {
            AppEvent::Http(_) => AppProto::HTTP,
            AppEvent::Dns(_) => AppProto::DNS,
            AppEvent::Tls(_) => AppProto::TLS,
            AppEvent::Reg(p, _) => p,
        }
    }
}

/// A legacy TLS keyword (`tls.subject`, `tls.issuerdn`, `tls.fingerprint`, `tls.version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TlsCheck {
    /// Substring of the server certificate's subject (negated).
    Subject(Box<str>, bool),
    /// Substring of the server certificate's issuer (negated).
    Issuer(Box<str>, bool),
    /// Substring of the server certificate's SHA-1 fingerprint (negated).
    Fingerprint(Box<str>, bool),
    /// `tls.version` (Suricata's two-way `tls_generic` list): the version Suricata keeps for
    /// the inspected direction (`None`: any), compared raw (`0x....`) or with the TLS 1.3
    /// drafts read as 1.3.
    Version(Option<u16>, bool),
    /// `ssl_version`: per Suricata slot (SSLv2, SSLv3, TLS 1.0 .. 1.3) whether it is listed
    /// and whether negated.
    SslVersion([(bool, bool); 6]),
    /// `ssl_state`: (flags, negated flags), the [`shrike_app::tls::STATE_CLIENT_HELLO`]...
    /// bits.
    SslState(u8, u8),
    /// `tls_cert_notbefore` / `tls_cert_notafter` (`after`): the first server certificate's
    /// date against epoch seconds.
    Validity { after: bool, cmp: ValidityCmp },
    /// `tls_cert_expired` (false) / `tls_cert_valid` (true): the flow's time against the
    /// first server certificate's `notAfter`.
    NotExpired(bool),
    /// `tls.cert_chain_len`: the number of server certificates.
    ChainLen(UintMatch),
}

/// A `tls_cert_notbefore` / `tls_cert_notafter` comparison (Suricata's
/// `DETECT_TLS_VALIDITY_*` modes; `<` and `>` include the date).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValidityCmp {
    Eq(i64),
    Le(i64),
    Ge(i64),
    Range(i64, i64),
}

/// The TLS keywords whose values Suricata rejects when bad (the rule fails to load).
pub(crate) fn strict_tls_keyword(name: &str) -> bool {
    matches!(
        name,
        "ssl_version"
            | "ssl_state"
            | "tls_cert_notbefore"
            | "tls_cert_notafter"
            | "tls_cert_expired"
            | "tls_cert_valid"
            | "tls.cert_chain_len"
    )
}

impl TlsCheck {
    /// Parse a legacy TLS keyword; `None` when it is not one (or its value is bad).
    pub(crate) fn parse(name: &str, value: Option<&str>) -> Option<TlsCheck> {
        let v = value.unwrap_or("").trim();
        let (neg, v) = match v.strip_prefix('!') {
            Some(r) => (true, r.trim()),
            None => (false, v),
        };
        let v = v
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(v);
        Some(match name {
            "tls.subject" => TlsCheck::Subject(v.into(), neg),
            "tls.issuerdn" => TlsCheck::Issuer(v.into(), neg),
            "tls.fingerprint" => TlsCheck::Fingerprint(v.to_ascii_lowercase().into(), neg),
            // `DetectTlsVersionParse`: a `1.0`..`1.3` prefix, or `0x` and four hex digits
            // (compared raw, drafts not folded into 1.3); shrike also takes `any`, `sslv3`.
            "tls.version" => match v {
                "any" => TlsCheck::Version(None, false),
                "sslv3" | "3.0" => TlsCheck::Version(Some(0x0300), false),
                _ if v.starts_with("1.0") => TlsCheck::Version(Some(0x0301), false),
                _ if v.starts_with("1.1") => TlsCheck::Version(Some(0x0302), false),
                _ if v.starts_with("1.2") => TlsCheck::Version(Some(0x0303), false),
                _ if v.starts_with("1.3") => TlsCheck::Version(Some(0x0304), false),
                _ => {
                    let h = v.strip_prefix("0x").filter(|h| h.len() == 4)?;
                    TlsCheck::Version(Some(u16::from_str_radix(h, 16).ok()?), true)
                }
            },
            _ => return None,
        })
    }

    /// Whether the keyword is inspected to the client only.
    pub(crate) fn to_client_only(&self) -> bool {
        !matches!(
            self,
            TlsCheck::SslVersion(_) | TlsCheck::SslState(..) | TlsCheck::Version(..)
        )
    }

    /// Parse one of [`strict_tls_keyword`]'s keywords.
    pub(crate) fn parse_strict(name: &str, value: Option<&str>) -> Result<TlsCheck, String> {
        let v = value.unwrap_or("").trim();
        match name {
            "ssl_version" => parse_ssl_version(v),
            "ssl_state" => parse_ssl_state(v),
            "tls_cert_notbefore" | "tls_cert_notafter" => Ok(TlsCheck::Validity {
                after: name == "tls_cert_notafter",
                cmp: parse_validity(v)?,
            }),
            "tls_cert_expired" | "tls_cert_valid" => {
                if !v.is_empty() {
                    return Err(format!("{name} takes no value"));
                }
                Ok(TlsCheck::NotExpired(name == "tls_cert_valid"))
            }
            _ => Ok(TlsCheck::ChainLen(
                UintMatch::parse(v, u64::from(u32::MAX), "tls.cert_chain_len")
                    .map_err(|e| e.to_string())?,
            )),
        }
    }

    /// `Some(result)` when decidable on `t` now, inspected in direction `d` at `now` (epoch
    /// seconds) with `closed` when the flow ended.
    ///
    /// `tls.version`, `ssl_version` and `ssl_state` are Suricata's `tls_generic` keywords (both
    /// directions, every packet until they match): no match now is `None`, retried. The
    /// certificate keywords are inspected to the client once Suricata's TLS progress reaches
    /// `TLS_STATE_CERT_READY` in that direction, which 7.0.10 reports only from
    /// `SSL_AL_FLAG_HANDSHAKE_DONE` on (`SSLGetAlstateProgress`): application data, or the
    /// certificate that matters decoded.
    fn eval(&self, t: &shrike_app::tls::TlsState, d: Dir, now: i64, closed: bool) -> Option<bool> {
        let cert = |f: &dyn Fn(&shrike_app::tls::cert::CertInfo) -> &str, pat: &str, neg: bool| {
            t.cert0.as_ref().map(|c| f(c).contains(pat) != neg)
        };
        match self {
            TlsCheck::Subject(p, n) => cert(&|c| &c.subject, p, *n),
            TlsCheck::Issuer(p, n) => cert(&|c| &c.issuer, p, *n),
            TlsCheck::Fingerprint(p, n) => cert(&|c| &c.fingerprint, p, *n),
            TlsCheck::Version(want, raw) => {
                let mut v = t.connp_version(d);
                if !raw && v >> 8 == 0x7f {
                    v = 0x0304;
                }
                want.is_none_or(|w| w == v).then_some(true)
            }
            TlsCheck::SslVersion(slots) => {
                // `DetectSslVersionMatch`: the TLS 1.3 drafts count as TLS 1.3; a version
                // outside the six slots never matches; `ret ^ negated` of the version's slot.
                let mut v = t.connp_version(d);
                if (0x7f10..=0x7f1c).contains(&v) || v == 0x7f01 {
                    v = 0x0304;
                }
                let slot = match v {
                    0x0200 => 0,
                    0x0300..=0x0304 => usize::from(v - 0x0300) + 1,
                    _ => return None,
                };
                let (listed, neg) = slots.get(slot).copied().unwrap_or_default();
                (listed != neg).then_some(true)
            }
            TlsCheck::SslState(flags, mask) => {
                ((flags & t.current_flags()) ^ mask != 0).then_some(true)
            }
            TlsCheck::Validity { .. } | TlsCheck::NotExpired(_) | TlsCheck::ChainLen(_) => {
                if d != Dir::ToClient {
                    return Some(false);
                }
                // `SSL_AL_FLAG_HANDSHAKE_DONE` is the logger's readiness.
                if !(t.log_ready() || closed) {
                    return None;
                }
                Some(self.cert_match(t, now))
            }
        }
    }

    /// The certificate keywords on `t` at `now`.
    fn cert_match(&self, t: &shrike_app::tls::TlsState, now: i64) -> bool {
        match self {
            TlsCheck::ChainLen(m) => m.matches(t.cert_chain_len() as u64),
            TlsCheck::NotExpired(valid) => t.cert0.as_ref().is_some_and(|c| {
                c.not_after != 0
                    && if *valid {
                        now <= c.not_after
                    } else {
                        now > c.not_after
                    }
            }),
            TlsCheck::Validity { after, cmp } => t.cert0.as_ref().is_some_and(|c| {
                let e = if *after { c.not_after } else { c.not_before };
                e != 0
                    && match *cmp {
                        ValidityCmp::Eq(x) => e == x,
                        ValidityCmp::Le(x) => e <= x,
                        ValidityCmp::Ge(x) => e >= x,
                        ValidityCmp::Range(a, b) => e >= a && e <= b,
                    }
            }),
            _ => false,
        }
    }
}

/// `ssl_version` (`DetectSslVersionParse`): comma or space separated `sslv2`, `sslv3`,
/// `tls1.0` .. `tls1.3` (any case), each optionally negated; no duplicates, no mix of negated
/// and plain versions.
fn parse_ssl_version(v: &str) -> Result<TlsCheck, String> {
    const WORDS: [&str; 6] = ["sslv2", "sslv3", "tls1.0", "tls1.1", "tls1.2", "tls1.3"];
    if v.is_empty() {
        return Err("ssl_version: invalid empty value".into());
    }
    let mut slots = [(false, false); 6];
    let mut seen_neg: Option<bool> = None;
    let mut rest = v;
    while !rest.is_empty() {
        let (neg, r) = match rest.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let end = r
            .find(|c: char| c.is_ascii_whitespace() || c == ',')
            .unwrap_or(r.len());
        let word = &r[..end];
        let i = WORDS
            .iter()
            .position(|w| w.eq_ignore_ascii_case(word))
            .ok_or_else(|| format!("ssl_version: invalid unknown value `{word}`"))?;
        if slots[i].0 {
            return Err("ssl_version: invalid duplicate value".into());
        }
        slots[i] = (true, neg);
        if seen_neg.is_some_and(|n| n != neg) {
            return Err("ssl_version: invalid value mixing negative and positive forms".into());
        }
        seen_neg = Some(neg);
        rest = r[end..].trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
    }
    Ok(TlsCheck::SslVersion(slots))
}

/// `ssl_state` (`DetectSslStateParse`): states joined by `|` or `,`, each optionally negated.
fn parse_ssl_state(v: &str) -> Result<TlsCheck, String> {
    use shrike_app::tls::{
        STATE_CLIENT_HELLO, STATE_CLIENT_KEYX, STATE_SERVER_HELLO, STATE_SERVER_KEYX, STATE_UNKNOWN,
    };
    let (mut flags, mut mask) = (0u8, 0u8);
    let mut rest = v;
    let mut first = true;
    loop {
        if !first {
            rest = rest.trim_start();
            rest = rest
                .strip_prefix(['|', ','])
                .ok_or_else(|| format!("ssl_state: invalid argument `{v}`"))?
                .trim_start();
        }
        first = false;
        let (neg, r) = match rest.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let end = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        let bit = match &r[..end] {
            "client_hello" => STATE_CLIENT_HELLO,
            "server_hello" => STATE_SERVER_HELLO,
            "client_keyx" => STATE_CLIENT_KEYX,
            "server_keyx" => STATE_SERVER_KEYX,
            "unknown" => STATE_UNKNOWN,
            w => return Err(format!("ssl_state: invalid option `{w}`")),
        };
        flags |= bit;
        if neg {
            mask |= bit;
        }
        rest = &r[end..];
        if rest.is_empty() {
            return Ok(TlsCheck::SslState(flags, mask));
        }
    }
}

/// `tls_cert_notbefore` / `tls_cert_notafter` values (`DetectTlsValidityParse`):
/// `[<|>] date` or `date <> date`, a date being epoch seconds or an ISO 8601 date.
fn parse_validity(v: &str) -> Result<ValidityCmp, String> {
    let bad = || format!("invalid tls validity value `{v}`");
    let in_class = |c: char| matches!(c, ' '..=':' | 'T' | 'W');
    let s = v.trim_start();
    let (mode, s) = match s.chars().next() {
        Some(m @ ('<' | '>')) => (Some(m), s[1..].trim_start()),
        _ => (None, s),
    };
    let end1 = s.find(|c: char| !in_class(c)).unwrap_or(s.len());
    let (v1, rest) = s.split_at(end1);
    let rest = rest.trim_start();
    let (v2, rest) = match rest.strip_prefix("<>") {
        Some(r) => {
            let r = r.trim_start();
            let end2 = r.find(|c: char| !in_class(c)).unwrap_or(r.len());
            (Some(&r[..end2]), &r[end2..])
        }
        None => (None, rest),
    };
    // The captures go through 20-byte buffers.
    if v1.is_empty() || !rest.trim().is_empty() || v1.len() > 19 || v2.is_some_and(|x| x.len() > 19)
    {
        return Err(bad());
    }
    let e1 = date_to_epoch(v1).ok_or_else(bad)?;
    match (mode, v2) {
        (Some(_), Some(_)) => Err(format!("{}: range specified but mode also set", bad())),
        (None, Some(v2)) => {
            let e2 = date_to_epoch(v2).ok_or_else(bad)?;
            if e2 <= e1 {
                return Err(format!("{}: second value smaller than the first", bad()));
            }
            Ok(ValidityCmp::Range(e1, e2))
        }
        (Some('<'), None) => Ok(ValidityCmp::Le(e1)),
        (Some(_), None) => Ok(ValidityCmp::Ge(e1)),
        (None, None) => Ok(ValidityCmp::Eq(e1)),
    }
}

/// Suricata's `DateStringToEpoch`: digits only are epoch seconds; else `%Y-%m`,
/// `%Y-%m-%d`, then an hour, minutes and seconds after a space or `T` (strptime, the first
/// of the month when no day is given), as UTC.
fn date_to_epoch(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return Some(s.parse::<i64>().unwrap_or(i64::MAX));
    }
    // strptime numbers: leading blanks skipped, at most `max` digits, within `lo..=hi`.
    fn num(s: &str, max: usize, lo: i64, hi: i64) -> Option<(i64, &str)> {
        let s = s.trim_start();
        let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        let v: i64 = s[..n].parse().ok()?;
        (lo..=hi).contains(&v).then_some((v, &s[n..]))
    }
    let (y, r) = num(s, 4, 0, 9999)?;
    let r = r.strip_prefix('-')?;
    let (m, r) = num(r, 2, 1, 12)?;
    let (mut d, mut hms) = (1, [0i64; 3]);
    if !r.is_empty() {
        let r = r.strip_prefix('-')?;
        let (dd, mut r) = num(r, 2, 1, 31)?;
        d = dd;
        if !r.is_empty() {
            r = match r.strip_prefix('T') {
                Some(x) => x,
                None => r.trim_start(),
            };
            let limits = [23, 59, 61];
            for (i, lim) in limits.iter().enumerate() {
                if i > 0 {
                    if r.is_empty() {
                        break;
                    }
                    r = r.strip_prefix(':')?;
                }
                let (v, rr) = num(r, 2, 0, *lim)?;
                hms[i] = v;
                r = rr;
            }
            if !r.is_empty() {
                return None;
            }
        }
    }
    // Days from the civil date (proleptic Gregorian), as `SCMkTimeUtc`.
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

/// A protocol keyword of the registry ([`shrike_app::registry::KeywordDesc`]), compiled.
#[derive(Debug)]
pub(crate) struct RegKeyword {
    /// The protocol offering it.
    pub proto: AppProto,
    /// The only direction it is inspected in.
    pub dir: Option<Dir>,
    /// The protocol's matcher.
    pub m: Box<dyn shrike_app::registry::TxMatch>,
}

/// The fast pattern of an app rule: buffer with the transforms of the rule's section on it
/// (Suricata prefilters the transformed buffer), lowercased bytes, exact bytes when case
/// matters.
pub(crate) type AppFastPat = Option<(BufKey, Vec<u8>, Option<Vec<u8>>)>;

/// A payload fast pattern: lowercased bytes, exact bytes when case matters.
pub(crate) type PktFastPat = Option<(Vec<u8>, Option<Vec<u8>>)>;

/// A prefilter buffer: an app buffer and the transforms applied to it.
pub(crate) type BufKey = (AppBuf, Box<[Transform]>);

/// The app-layer part of a signature.
#[derive(Debug, Default)]
pub(crate) struct AppSig {
    /// Protocol the flow must have (rule header, buffers).
    pub proto: Option<AppProto>,
    /// An HTTP rule (`proto` HTTP) that HTTP/2 flows are inspected with too, as Suricata 7
    /// does for `alert http` and protocol-less rules with HTTP keywords (not `http1`).
    pub http2: bool,
    /// `app-layer-protocol` checks: (protocol name, negated).
    pub protocol_checks: Box<[(Box<str>, bool)]>,
    /// Transaction buffer sections, in rule order.
    pub sections: Box<[AppSection]>,
    /// `urilen` (comparison, raw).
    pub urilen: Option<(UintMatch, bool)>,
    /// `app-layer-event` checks.
    pub events: Box<[AppEvent]>,
    /// Legacy TLS keywords.
    pub tls_checks: Box<[TlsCheck]>,
    /// Protocol keywords of the registry.
    pub keywords: Box<[RegKeyword]>,
    /// `filesize` (Suricata's file match list): a file of the transaction whose size
    /// matches.
    pub filesize: Option<UintMatch>,
    /// `filestore`: a file of the transaction (any state) matches, and the match asks the
    /// file store for files.
    pub filestore: Option<FilestoreSpec>,
    /// `filemd5` / `filesha1` / `filesha256`: a closed file of the transaction whose hash
    /// is (or, negated, is not) in the list.
    pub filehash: Box<[std::sync::Arc<FileHashList>]>,
    /// `filemagic` (Suricata's legacy keyword: a `nocase` content on `file.magic`): a file
    /// of the transaction whose libmagic type holds (or, negated, does not hold) the
    /// lowercased pattern.
    pub filemagic: Box<[(Vec<u8>, bool)]>,
    /// A `file.magic` buffer is inspected (files keep their first bytes for libmagic).
    pub file_magic: bool,
    /// Direction the transaction is inspected in (`None`: both).
    pub dir: Option<Dir>,
    /// A match decides only the direction it was found in (Suricata's per-direction detect
    /// state): rules whose buffers are all two-way buffers of registered protocols. The
    /// HTTP/DNS/TLS inspection keeps one alert per transaction.
    pub per_dir: bool,
    /// Prefilter pattern.
    pub fp: AppFastPat,
    /// The rule's fast pattern is packet payload content (lowercased bytes, exact bytes
    /// when case matters): the rule is a transaction candidate only on packets whose
    /// payload holds it (Suricata merges the packet prefilter's hits into the tx candidates).
    pub pkt_fp: PktFastPat,
}

/// The protocols whose files `filesize`, `filemd5` ... inspect in a rule of no protocol.
const FILE_PROTOCOLS: &[&str] = &["http", "smtp", "ftp-data", "smb", "nfs", "http2"];

/// The protocols whose parsers tell detection of a new file in a transaction (Suricata's
/// `FlagDetectStateNewFile` in `app-layer-htp.c` and `app-layer-smtp.c`).
const NEW_FILE_PROTOCOLS: &[&str] = &["http", "smtp"];

impl AppSig {
    /// Whether the transaction part is file keywords only (`filesize`, file hashes).
    pub(crate) fn files_only(&self) -> bool {
        (self.filesize.is_some()
            || !self.filehash.is_empty()
            || self.filestore.is_some()
            || !self.filemagic.is_empty()
            || self.file_magic)
            && self.sections.iter().all(|s| s.buf == AppBuf::FileMagic)
            && self.urilen.is_none()
            && self.events.is_empty()
            && self.tls_checks.is_empty()
            && self.keywords.is_empty()
    }

    /// Whether the rule has Suricata's `files` inspection engine (`filesize`, `filestore`,
    /// `filemd5`/`filesha1`/`filesha256`: the keywords of its `files` match list; `filename`
    /// and `filemagic` are contents on the `file.name` / `file.magic` buffers in 7.0.10).
    /// Such a rule is inspected again on a transaction that gets a new file.
    pub(crate) fn has_files_engine(&self) -> bool {
        self.filesize.is_some() || self.filestore.is_some() || !self.filehash.is_empty()
    }

    /// Whether the rule is inspected per transaction (rather than per packet).
    pub(crate) fn is_tx(&self) -> bool {
        !self.sections.is_empty()
            || self.urilen.is_some()
            || !self.events.is_empty()
            || !self.tls_checks.is_empty()
            || !self.keywords.is_empty()
            || self.filesize.is_some()
            || !self.filehash.is_empty()
            || self.filestore.is_some()
            || !self.filemagic.is_empty()
    }

    /// The flow's protocol `p` fits the rule's header, and the protocol of the direction
    /// inspected (`dir_p`) its `app-layer-protocol` checks (Suricata's
    /// `DetectAppLayerProtocolPacketMatch`: no match while that direction's protocol is
    /// unknown; `http` also names HTTP/2 and `dcerpc` SMB, `AppProtoEquals`).
    pub(crate) fn proto_ok(&self, p: AppProto, dir_p: AppProto) -> bool {
        if self
            .proto
            .is_some_and(|want| !(want.sig_matches(p) || self.http2 && Some(p) == http2_proto()))
        {
            return false;
        }
        if self.protocol_checks.is_empty() {
            return true;
        }
        if dir_p == AppProto::UNKNOWN {
            return false;
        }
        self.protocol_checks.iter().all(|(n, neg)| {
            let is = AppProto::from_name(n).is_some_and(|w| {
                w.sig_matches(dir_p) || (&**n == "http" && Some(dir_p) == http2_proto())
            });
            is != *neg
        })
    }
}

/// Result of evaluating a rule on one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxResult {
    Match,
    /// No match; `true` when the data was final (no need to look again).
    NoMatch(bool),
    /// Some buffer is not available yet.
    NotReady,
}

/// A prefilter pattern's exact bytes (when case-sensitive) and signature.
type PatSig = (Option<Box<[u8]>>, u32);

#[derive(Debug)]
struct BufMpm {
    buf: AppBuf,
    /// Transforms applied to the buffer before the scan.
    transforms: Box<[Transform]>,
    pf: Box<dyn Prefilter>,
    /// Per pattern: (exact bytes when case-sensitive, signature).
    pats: Box<[Box<[PatSig]>]>,
}

#[derive(Debug)]
struct PayMpm {
    pf: Box<dyn Prefilter>,
    pats: Box<[Box<[PatSig]>]>,
}

#[derive(Debug, Default)]
struct ProtoIndex {
    /// Per packet direction (0 to server, 1 to client): rules without a prefilter pattern.
    nonmpm: [Vec<u32>; 2],
    /// Per packet direction: prefilters.
    mpms: [Vec<BufMpm>; 2],
    /// Per packet direction: the prefilter of rules whose fast pattern is payload content.
    pay: [Option<PayMpm>; 2],
    /// A new file on a transaction has the rules with a `files` engine inspected again
    /// (Suricata's `DETECT_ENGINE_STATE_FLAG_FILE_NEW`, which only its HTTP/1 and SMTP
    /// parsers raise).
    new_file_reinspects: bool,
}

type Pats = Vec<(Vec<u8>, Vec<PatSig>)>;

/// A prefilter and, per pattern, its rules.
type CompiledPats = (Box<dyn Prefilter>, Box<[Box<[PatSig]>]>);

impl ProtoIndex {
    /// No rule inspects this protocol's transactions.
    fn is_empty(&self) -> bool {
        self.nonmpm.iter().all(Vec::is_empty)
            && self.mpms.iter().all(Vec::is_empty)
            && self.pay.iter().all(Option::is_none)
    }
}

fn add_pat(pats: &mut Pats, lower: &[u8], exact: &Option<Vec<u8>>, n: u32) {
    let ex = exact.clone().map(Vec::into_boxed_slice);
    match pats.iter_mut().find(|(l, _)| l == lower) {
        Some((_, v)) => v.push((ex, n)),
        None => pats.push((lower.to_vec(), vec![(ex, n)])),
    }
}

/// A prefilter over the patterns of `pats` with, per pattern, its rules; or, when no
/// prefilter can be built, the rules (sorted) to inspect without one.
fn compile_pats(pats: Pats) -> Result<CompiledPats, Vec<u32>> {
    let refs: Vec<&[u8]> = pats.iter().map(|(l, _)| l.as_slice()).collect();
    match prefilter::build(&refs) {
        Some(pf) => Ok((pf, pats.into_iter().map(|(_, v)| v.into()).collect())),
        None => {
            let mut sigs: Vec<u32> = pats
                .into_iter()
                .flat_map(|(_, v)| v.into_iter().map(|x| x.1))
                .collect();
            sigs.sort_unstable();
            Err(sigs)
        }
    }
}

/// Calls `hit(sig)` for each rule of `pats` whose pattern the prefilter found in `hay`.
fn scan_pats(pf: &dyn Prefilter, pats: &[Box<[PatSig]>], hay: &[u8], hit: &mut dyn FnMut(u32)) {
    pf.scan(hay, &mut |i, s, e| {
        for (exact, n) in pats.get(i as usize).map(|v| &v[..]).unwrap_or(&[]) {
            if let Some(ex) = exact {
                if hay.get(s..e) != Some(&ex[..]) {
                    continue;
                }
            }
            hit(*n);
        }
    });
}

/// Transaction rules by protocol, direction and buffer.
#[derive(Debug, Default)]
pub(crate) struct AppIndex {
    /// By registry index.
    per: Vec<ProtoIndex>,
    /// Number of transaction rules.
    pub tx_rules: usize,
    /// Some transaction rule also has payload matches (inspected on the raw stream window).
    pub payload_rules: bool,
}

fn pi(p: AppProto) -> Option<usize> {
    p.index()
}

/// HTTP/2's registry id.
pub(crate) fn http2_proto() -> Option<AppProto> {
    AppProto::from_name("http2")
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl AppIndex {
    /// Index the transaction rules of `sigs`.
    pub(crate) fn build(sigs: &[Sig]) -> AppIndex {
        let n_protos = shrike_app::registry::PROTOCOLS.len();
        let mut idx = AppIndex {
            per: (0..n_protos).map(|_| ProtoIndex::default()).collect(),
            tx_rules: 0,
            payload_rules: false,
        };
        let mut bufs: Vec<[Vec<(BufKey, Pats)>; 2]> =
            (0..n_protos).map(|_| [Vec::new(), Vec::new()]).collect();
        let mut pay: Vec<[Option<Pats>; 2]> = (0..n_protos).map(|_| [None, None]).collect();
        for (n, s) in sigs.iter().enumerate() {
            let Some(a) = s.app.as_deref().filter(|a| a.is_tx()) else {
                continue;
            };
            let mut protos: Vec<usize> = Vec::with_capacity(2);
            match a.proto.and_then(pi) {
                Some(p0) => {
                    protos.push(p0);
                    // HTTP rules also run on HTTP/2 flows, DCERPC rules on SMB flows.
                    if a.http2 {
                        protos.extend(http2_proto().and_then(pi));
                    } else if a.proto == Some(AppProto::DCERPC) {
                        protos.extend(pi(AppProto::SMB));
                    }
                }
                // A rule of no app protocol whose transaction keywords are all file ones
                // (`alert ip ... filemd5:...`) inspects the files of every protocol that
                // carries them (Suricata's `files` engines, registered per protocol).
                None if a.files_only() => protos.extend(
                    FILE_PROTOCOLS
                        .iter()
                        .filter_map(|n| AppProto::from_name(n).and_then(pi)),
                ),
                None => continue,
            }
            idx.tx_rules += 1;
            idx.payload_rules |= !s.sections.is_empty();
            let dirs: &[usize] = match a.dir {
                Some(d) => &[di(d)][..],
                None => &[0, 1][..],
            };
            for (p, &d) in protos
                .iter()
                .copied()
                .flat_map(|p| dirs.iter().map(move |d| (p, d)))
            {
                match &a.fp {
                    Some((buf, lower, exact)) => {
                        let list = &mut bufs[p][d];
                        let bi = match list.iter().position(|(b, _)| b == buf) {
                            Some(i) => i,
                            None => {
                                list.push((buf.clone(), Vec::new()));
                                list.len() - 1
                            }
                        };
                        add_pat(&mut list[bi].1, lower, exact, n as u32);
                    }
                    None => match &a.pkt_fp {
                        Some((lower, exact)) => add_pat(
                            pay[p][d].get_or_insert_with(Vec::new),
                            lower,
                            exact,
                            n as u32,
                        ),
                        None => idx.per[p].nonmpm[d].push(n as u32),
                    },
                }
            }
        }
        for (p, per_dir) in bufs.into_iter().enumerate() {
            for (d, list) in per_dir.into_iter().enumerate() {
                let per = &mut idx.per[p];
                for ((buf, transforms), pats) in list {
                    match compile_pats(pats) {
                        Ok((pf, pats)) => per.mpms[d].push(BufMpm {
                            buf,
                            transforms,
                            pf,
                            pats,
                        }),
                        Err(sigs) => per.nonmpm[d].extend(sigs),
                    }
                }
                if let Some(pats) = pay[p][d].take().filter(|v| !v.is_empty()) {
                    match compile_pats(pats) {
                        Ok((pf, pats)) => per.pay[d] = Some(PayMpm { pf, pats }),
                        Err(sigs) => per.nonmpm[d].extend(sigs),
                    }
                }
                per.nonmpm[d].sort_unstable();
            }
        }
        for n in NEW_FILE_PROTOCOLS {
            if let Some(per) = AppProto::from_name(n)
                .and_then(pi)
                .and_then(|p| idx.per.get_mut(p))
            {
                per.new_file_reinspects = true;
            }
        }
        idx
    }

    /// No transaction rule at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.tx_rules == 0
    }
}

/// Per-worker scratch of transaction inspection.
#[derive(Debug, Default)]
pub(crate) struct AppScratch {
    cand: Vec<u32>,
    /// This packet's payload prefilter hits (rules with a payload fast pattern).
    pay: Vec<u32>,
    stamp: Vec<u32>,
    gen: u32,
    txs: Vec<u64>,
    /// The other direction's live transactions (pruning).
    txs_other: Vec<u64>,
    out: Vec<u8>,
    tmp: Vec<u8>,
    /// The packet's time, epoch seconds (the flow's last time: `tls_cert_expired`).
    pub(crate) now_secs: i64,
}

impl AppScratch {
    pub(crate) fn new(sigs: usize) -> AppScratch {
        AppScratch {
            stamp: vec![0; sigs],
            ..AppScratch::default()
        }
    }

    fn next_gen(&mut self) -> u32 {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.gen = 1;
        }
        self.gen
    }
}

/// Per-flow transaction detection state: the (transaction, rule, direction) triples that
/// are decided (a match decides both directions: one alert per transaction), and each
/// live transaction's inspection progress.
#[derive(Debug, Clone, Default)]
pub struct AppDetect {
    /// The protocol whose transactions the rest is about: a protocol change (STARTTLS)
    /// starts the transactions again from 0, with nothing inspected.
    proto: AppProto,
    done: HashSet<(u64, u32, u8), std::hash::BuildHasherDefault<TxKeyHasher>>,
    /// The decided (transaction, rule, direction) triples whose `files` engine ran to a
    /// verdict (Suricata's `DE_STATE_FLAG_FILE_INSPECT`): a new file of the transaction in
    /// that direction has them inspected again.
    file_reset: Vec<(u64, u32, u8)>,
    /// Per direction: the app generation (+1) last inspected.
    seen_gen: [u64; 2],
    /// Inspection progress per (transaction, direction), by key: a flood holds thousands of
    /// live transactions and each packet looks each one up (a list made that quadratic).
    progs: HashMap<(u64, u8), TxProg, std::hash::BuildHasherDefault<TxKeyHasher>>,
}

/// How far one transaction has been inspected in one direction (Suricata keeps the same
/// in a transaction's detect state): which prefilters already ran on buffers that can no
/// longer change, and the candidates they (and the non-prefilter rules) produced that are
/// not decided yet. A transaction's buffers are prefiltered once, not on every packet.
#[derive(Debug, Clone, Default)]
struct TxProg {
    tx: u64,
    dir: u8,
    /// Bit `j`: prefilter `j` of the direction's list ran on stable data.
    scanned: u64,
    /// The non-prefilter rules were added to the candidates.
    base: bool,
    /// Candidates not decided yet (a buffer not ready, data not final, or the packet-level
    /// part failed on the packet that inspected them).
    pending: Vec<u32>,
    /// Files the transaction had in this direction at the last inspection.
    files: u32,
}

impl AppDetect {
    /// Nothing reached the app layer since this direction's last inspection.
    pub(crate) fn unchanged(&self, app: &AppFlow, to_server: bool) -> bool {
        self.seen_gen[usize::from(!to_server)] == app.gen.wrapping_add(1)
    }
}

/// Multiply-rotate hasher for the small integer keys of [`AppDetect::done`] (looked up for
/// every candidate of every live transaction: SipHash showed up at 5% of a profile). The
/// keys are transaction and signature numbers, not attacker-chosen bytes.
#[derive(Default)]
pub(crate) struct TxKeyHasher(u64);

impl std::hash::Hasher for TxKeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl AppDetect {
    fn prune(&mut self, min_tx: u64) {
        if self.done.len() > 64 {
            self.done.retain(|(t, _, _)| *t >= min_tx);
        }
        self.file_reset.retain(|(t, _, _)| *t >= min_tx);
        self.progs.retain(|&(tx, _), _| tx >= min_tx);
    }

    /// Take the progress of (`tx`, `d`) out (a fresh one when there is none yet).
    fn take_prog(&mut self, tx: u64, d: u8) -> TxProg {
        self.progs.remove(&(tx, d)).unwrap_or(TxProg {
            tx,
            dir: d,
            ..TxProg::default()
        })
    }
}

/// The live transactions of `app` to inspect on a packet going `d`.
fn live_txs(app: &AppFlow, d: Dir, out: &mut Vec<u64>) {
    out.clear();
    if let Some(p) = app.parser() {
        p.live_txs(d, out);
    }
}

/// Add rule `n` to `cand` unless this generation already has it.
fn push_once(cand: &mut Vec<u32>, stamp: &mut [u32], gen: u32, n: u32) {
    if let Some(st) = stamp.get_mut(n as usize) {
        if *st != gen {
            *st = gen;
            cand.push(n);
        }
    }
}

/// Candidates for transaction `tx`: what `prog` left pending, the non-prefilter rules on
/// the first inspection, and the hits of the prefilters whose buffer is ready and not yet
/// scanned on stable data. A buffer that is not ready is not scanned: no rule reading it
/// can be evaluated yet.
fn candidates(
    pidx: &ProtoIndex,
    app: &AppFlow,
    tx: u64,
    d: Dir,
    prog: &mut TxProg,
    sc: &mut AppScratch,
) {
    let gen = sc.next_gen();
    sc.cand.clear();
    {
        let (cand, stamp, pay) = (&mut sc.cand, &mut sc.stamp, &sc.pay);
        let mut add = |n: u32| push_once(cand, stamp, gen, n);
        prog.pending.drain(..).for_each(&mut add);
        pay.iter().copied().for_each(&mut add);
        if !prog.base {
            prog.base = true;
            pidx.nonmpm[di(d)].iter().copied().for_each(&mut add);
        }
    }
    for (j, m) in pidx.mpms[di(d)].iter().enumerate() {
        let bit = 1u64.checked_shl(j as u32).unwrap_or(0);
        if prog.scanned & bit != 0 {
            continue;
        }
        let Some(stable) = readiness(app, tx, m.buf, d) else {
            continue;
        };
        if stable {
            prog.scanned |= bit;
        }
        let (cand, stamp, out, tmp) = (&mut sc.cand, &mut sc.stamp, &mut sc.out, &mut sc.tmp);
        visit(app, tx, m.buf, d, &mut |hay| {
            let hay = if m.transforms.is_empty() {
                hay
            } else {
                apply_transforms(&m.transforms, hay, out, tmp);
                &out[..]
            };
            scan_pats(&*m.pf, &m.pats, hay, &mut |n| {
                push_once(cand, stamp, gen, n)
            });
            false
        });
    }
    sc.cand.sort_unstable();
}

fn events_hit(app: &AppFlow, tx: u64, e: AppEvent) -> bool {
    match e {
        AppEvent::Http(ev) => app
            .http()
            .and_then(|h| h.tx(tx))
            .is_some_and(|t| t.events().contains(ev)),
        AppEvent::Dns(ev) => app
            .dns()
            .and_then(|d| d.tx(tx))
            .is_some_and(|t| t.events.has(ev)),
        AppEvent::Tls(ev) => app.tls().is_some_and(|t| t.events.has(ev)),
        AppEvent::Reg(p, ev) => app.proto == p && app.parser().is_some_and(|s| s.has_event(tx, ev)),
    }
}

/// Suricata's `filemagic` over the files of transaction `tx` going `d`: a file whose type
/// is known (512 bytes seen or ended, libmagic there) matches when it holds `pat`
/// (lowercased; compared without case), or does not when `neg`; a file whose type is not
/// known yet is undecided while it is open.
fn filemagic_hit(app: &AppFlow, tx: u64, d: Dir, pat: &[u8], neg: bool) -> Option<bool> {
    any_file(app, tx, d, &mut |f| match f.magic() {
        Some(m) => {
            let m = m.as_bytes();
            let has =
                m.len() >= pat.len() && m.windows(pat.len()).any(|w| w.eq_ignore_ascii_case(pat));
            Some(has != neg)
        }
        None if f.is_done() => Some(false),
        None => None,
    })
}

/// Whether a file of transaction `tx` going `d` matches by `each` (`Some(true)`), none can
/// (`Some(false)`), or it is not decided yet (`None`: a file `each` leaves open, or no file
/// yet on a transaction that can still get one).
fn any_file(
    app: &AppFlow,
    tx: u64,
    d: Dir,
    each: &mut dyn FnMut(&shrike_app::files::TrackedFile) -> Option<bool>,
) -> Option<bool> {
    let p = app.parser()?;
    let (mut hit, mut open, mut any) = (false, false, false);
    p.files(tx, d, &mut |f| {
        if f.is_pruned() {
            return;
        }
        any = true;
        match each(f) {
            Some(true) => hit = true,
            None => open = true,
            Some(false) => {}
        }
    });
    if hit {
        Some(true)
    } else if open || (!any && !p.tx_final(tx, app.is_closed())) {
        None
    } else {
        Some(false)
    }
}

/// `filestore[:<direction>[,<scope>]]` (Suricata's `DetectFilestoreData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilestoreSpec {
    /// `None`: the direction of the matching packet (Suricata's default); else
    /// [to server, to client].
    pub dirs: Option<[bool; 2]>,
    /// Which transactions' files.
    pub scope: shrike_app::files::StoreScope,
}

impl FilestoreSpec {
    /// Parse the keyword's value (`None`: no value).
    pub fn parse(v: Option<&str>) -> Result<FilestoreSpec, String> {
        use shrike_app::files::StoreScope;
        let mut spec = FilestoreSpec {
            dirs: None,
            scope: StoreScope::File,
        };
        let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(spec);
        };
        let args: Vec<&str> = v.split(',').map(str::trim).collect();
        let word =
            |a: &str| !a.is_empty() && a.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_');
        if args.len() > 3 || !args.iter().all(|a| word(a)) {
            return Err(format!("invalid value {v:?}"));
        }
        match args[0].to_ascii_lowercase().as_str() {
            "request" | "to_server" => spec.dirs = Some([true, false]),
            "response" | "to_client" => spec.dirs = Some([false, true]),
            "both" => spec.dirs = Some([true, true]),
            _ => {}
        }
        if let Some(sc) = args.get(1) {
            match sc.to_ascii_lowercase().as_str() {
                "ssn" | "flow" => spec.scope = StoreScope::Flow,
                "tx" => spec.scope = StoreScope::Tx,
                _ => spec.scope = StoreScope::File,
            }
        }
        Ok(spec)
    }
}

/// Which hash a file hash list holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileHashKind {
    /// `filemd5`.
    Md5,
    /// `filesha1`.
    Sha1,
    /// `filesha256`.
    Sha256,
}

/// The hash list of a `filemd5`/`filesha1`/`filesha256` keyword (Suricata's
/// `DetectFileHashData`).
#[derive(Debug)]
pub struct FileHashList {
    /// Which hash.
    pub kind: FileHashKind,
    /// `!`: a file whose hash is not listed matches.
    pub negated: bool,
    /// The listed hashes.
    pub hashes: std::collections::HashSet<Box<[u8]>>,
}

/// What Suricata's `files` inspection engine (`DetectFileInspect`) says of a rule on a
/// transaction's files in one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FilesResult {
    /// A file matched every keyword of the `files` list, and the last file decided.
    Match,
    /// A file matched but the last one is not decided yet
    /// (`DETECT_ENGINE_INSPECT_SIG_MATCH_MORE_FILES`): the rule matches, but its state does
    /// not record the file engine, so a new file does not inspect it again.
    MatchMoreFiles,
    /// No file decided yet (none, or what a keyword needs is not there yet).
    NoMatch,
    /// The last file cannot match and none did (`..._CANT_MATCH_FILES`).
    CantMatch,
}

/// Suricata's `DetectFilesizeMatch` on one file: a closed file on its size; a truncated or
/// failed one only for `>`/`>=` (the size it reached is known, the final one is not).
fn filesize_match(f: &shrike_app::files::TrackedFile, m: &UintMatch) -> bool {
    use shrike_app::files::FileState;
    use shrike_rules::parse::UintMode;
    match f.state() {
        FileState::Closed => m.matches(f.size()),
        FileState::Opened => false,
        _ => matches!(m.mode, UintMode::Gt | UintMode::Gte) && m.matches(f.size()),
    }
}

/// The hash of kind `k` of `f`, once computed.
fn file_hash(f: &shrike_app::files::TrackedFile, k: FileHashKind) -> Option<&[u8]> {
    match k {
        FileHashKind::Md5 => f.md5().map(|h| &h[..]),
        FileHashKind::Sha1 => f.sha1().map(|h| &h[..]),
        FileHashKind::Sha256 => f.sha256().map(|h| &h[..]),
    }
}

/// Suricata's `DetectFileInspect` for the `files` match list of `a` (`filesize`,
/// `filemd5`/`filesha1`/`filesha256`, `filestore`) over the files of transaction `tx` going
/// `d` not pruned yet: per file, what the rule needs first (`FILE_SIG_NEED_SIZE`: the file
/// ended; `FILE_SIG_NEED_MAGIC`: some data; `FILE_SIG_NEED_MD5` ...: the hash), then every
/// keyword on that same file; the last file's verdict decides unless one matched. `None`: the
/// rule has no `files` engine.
fn files_engine(a: &AppSig, app: &AppFlow, tx: u64, d: Dir) -> Option<FilesResult> {
    use shrike_app::files::FileState;
    if !a.has_files_engine() {
        return None;
    }
    let Some(p) = app.parser() else {
        return Some(FilesResult::CantMatch);
    };
    let need_magic = !a.filemagic.is_empty() || a.file_magic;
    let (mut r, mut matched) = (FilesResult::NoMatch, false);
    p.files(tx, d, &mut |f| {
        if f.is_pruned() {
            return;
        }
        if (need_magic && f.size() == 0)
            || (a.filesize.is_some() && f.state() == FileState::Opened)
            || a.filehash.iter().any(|h| file_hash(f, h.kind).is_none())
        {
            r = FilesResult::NoMatch;
            return;
        }
        let hit = a.filesize.as_ref().is_none_or(|m| filesize_match(f, m))
            && a.filehash.iter().all(|h| {
                f.state() == FileState::Closed
                    && file_hash(f, h.kind).is_some_and(|x| h.hashes.contains(x) != h.negated)
            });
        // `filestore` matches any file.
        r = if hit {
            matched = true;
            FilesResult::Match
        } else {
            FilesResult::CantMatch
        };
    });
    Some(match (matched, r) {
        (true, FilesResult::NoMatch) => FilesResult::MatchMoreFiles,
        (true, _) => FilesResult::Match,
        (false, r) => r,
    })
}

/// Evaluate the transaction part of `a` on transaction `tx`; `file_inspect` tells whether
/// its `files` engine reached a verdict (Suricata's `DE_STATE_FLAG_FILE_INSPECT`).
#[allow(clippy::too_many_arguments)]
fn eval_tx(
    a: &AppSig,
    app: &AppFlow,
    tx: u64,
    d: Dir,
    sc: &mut AppScratch,
    scratch: &mut Scratch,
    env: &MatchEnv,
    file_inspect: &mut bool,
) -> TxResult {
    *file_inspect = false;
    let mut fin = true;
    for s in a.sections.iter() {
        match readiness(app, tx, s.buf, d) {
            None => return TxResult::NotReady,
            Some(f) => fin &= f,
        }
    }
    if a.urilen.is_some() {
        let b = AppBuf::Http(shrike_app::http::HttpBuffer::Uri);
        match readiness(app, tx, b, d) {
            None => return TxResult::NotReady,
            Some(f) => fin &= f,
        }
    }
    if !a.events.is_empty() && a.sections.is_empty() {
        fin = app.parser().is_none_or(|p| p.tx_final(tx, app.is_closed()));
    }
    if !a.tls_checks.is_empty() {
        let Some(t) = app.tls() else {
            return TxResult::NoMatch(true);
        };
        let end = t.handshake_done() || t.failed() || app.is_closed();
        for c in a.tls_checks.iter() {
            match c.eval(t, d, sc.now_secs, app.is_closed()) {
                Some(true) => {}
                Some(false) => return TxResult::NoMatch(true),
                None if end => return TxResult::NoMatch(true),
                None => return TxResult::NotReady,
            }
        }
    }
    if !a.keywords.is_empty() {
        let Some(p) = app.parser() else {
            return TxResult::NoMatch(true);
        };
        // No more data can come: a keyword still undecided does not match.
        let end = app.is_closed();
        for k in a.keywords.iter() {
            if !k.proto.sig_matches(app.proto) || k.dir.is_some_and(|want| want != d) {
                return TxResult::NoMatch(true);
            }
            match k.m.matches(p, tx, d) {
                Some(true) => {}
                Some(false) => return TxResult::NoMatch(fin),
                None if end => return TxResult::NoMatch(true),
                None => return TxResult::NotReady,
            }
        }
    }
    // The `files` engine: a file decides, none yet waits (no match once the flow ended).
    match files_engine(a, app, tx, d) {
        None | Some(FilesResult::MatchMoreFiles) => {}
        Some(FilesResult::Match) => *file_inspect = true,
        Some(FilesResult::CantMatch) => {
            *file_inspect = true;
            return TxResult::NoMatch(true);
        }
        Some(FilesResult::NoMatch) if app.is_closed() => return TxResult::NoMatch(true),
        Some(FilesResult::NoMatch) => {
            let mut any = false;
            if let Some(p) = app.parser() {
                p.files(tx, d, &mut |f| any |= !f.is_pruned());
                // No file, and none can come any more.
                if !any && p.tx_final(tx, false) {
                    return TxResult::NoMatch(fin);
                }
            }
            return TxResult::NotReady;
        }
    }
    for (pat, neg) in a.filemagic.iter() {
        match filemagic_hit(app, tx, d, pat, *neg) {
            Some(true) => {}
            Some(false) => return TxResult::NoMatch(fin),
            None if app.is_closed() => return TxResult::NoMatch(true),
            None => return TxResult::NotReady,
        }
    }
    for &e in a.events.iter() {
        if e.proto() != a.proto.unwrap_or(e.proto()) || !events_hit(app, tx, e) {
            return TxResult::NoMatch(fin);
        }
    }
    if let Some((m, raw)) = &a.urilen {
        use shrike_app::http::HttpBuffer;
        let which = if *raw {
            HttpBuffer::UriRaw
        } else {
            HttpBuffer::Uri
        };
        let len = app.http().and_then(|h| h.buffer(tx, which, Dir::ToServer));
        if !len.is_some_and(|u| m.matches(u.len() as u64)) {
            return TxResult::NoMatch(fin);
        }
    }
    for s in a.sections.iter() {
        let (out, tmp) = (&mut sc.out, &mut sc.tmp);
        let t = &s.matcher.transforms;
        let hit = visit(app, tx, s.buf, d, &mut |v| {
            if t.is_empty() {
                s.matcher.matches(v, scratch, env)
            } else {
                apply_transforms(t, v, out, tmp);
                s.matcher.matches(out, scratch, env)
            }
        });
        if !hit {
            return TxResult::NoMatch(fin);
        }
    }
    TxResult::Match
}

/// A file opened in transaction `tx` going `d` since its last inspection: the rules whose
/// `files` engine reached a verdict on it in that direction are inspected again, on its files
/// (Suricata resets the file part of their stored detect state on
/// `DETECT_ENGINE_STATE_FLAG_FILE_NEW`, so a rule alerts again for a second file of the
/// transaction).
fn reinspect_on_new_file(
    app: &AppFlow,
    tx: u64,
    d: Dir,
    prog: &mut TxProg,
    state: &mut super::FlowDetect,
) {
    let Some(p) = app.parser() else {
        return;
    };
    let mut count = 0u32;
    p.files(tx, d, &mut |_| count = count.saturating_add(1));
    if count <= prog.files {
        return;
    }
    prog.files = count;
    let Some(ad) = state.app.as_deref_mut() else {
        return;
    };
    let dn = di(d) as u8;
    let (done, pending) = (&mut ad.done, &mut prog.pending);
    ad.file_reset.retain(|&(t, n, dd)| {
        let again = t == tx && dd == dn;
        if again {
            done.remove(&(t, n, dd));
            pending.push(n);
        }
        !again
    });
}

impl super::Engine {
    /// Inspect the transactions of the packet's flow; matching rules go to `queue` with
    /// their transaction id. `pkt_ok(n)` runs the packet-level part of rule `n` (header,
    /// keywords, payload) and applies nothing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn inspect_txs(
        &self,
        app: &AppFlow,
        payload: &[u8],
        window: &[u8],
        to_server: bool,
        state: &mut super::FlowDetect,
        sc: &mut AppScratch,
        scratch: &mut Scratch,
        pkt_ok: &mut dyn FnMut(u32, &super::FlowDetect, &mut Scratch) -> bool,
        queue: &mut Vec<(u32, u64)>,
    ) {
        let d = if to_server {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let Some(pidx) = pi(app.proto)
            .and_then(|p| self.app.per.get(p))
            .filter(|x| !x.is_empty())
        else {
            // No rule of this protocol: its logged transactions need not be kept.
            app.note_no_rules(d);
            return;
        };
        let ad = state.app.get_or_insert_with(Box::default);
        if ad.proto != app.proto {
            if ad.proto != AppProto::UNKNOWN {
                ad.done.clear();
                ad.file_reset.clear();
                ad.progs.clear();
            }
            ad.proto = app.proto;
        }
        let mut txs = std::mem::take(&mut sc.txs);
        live_txs(app, d, &mut txs);
        sc.pay.clear();
        if let Some(pm) = pidx.pay[di(d)].as_ref() {
            let out = &mut sc.pay;
            // The packet's payload and the raw stream window it brings up for inspection.
            for data in [payload, window] {
                if !data.is_empty() {
                    scan_pats(&*pm.pf, &pm.pats, data, &mut |n| out.push(n));
                }
            }
            out.sort_unstable();
            out.dedup();
        }
        for &tx in &txs {
            // `byte_test`/`byte_jump` with `dce` read the stub in its data representation.
            let env = MatchEnv {
                dce_little_endian: app.proto == AppProto::DCERPC
                    && app
                        .parser()
                        .is_some_and(|p| shrike_app::dcerpc::stub_little_endian(p, tx)),
            };
            let dn = di(d) as u8;
            let mut prog = state.app.get_or_insert_with(Box::default).take_prog(tx, dn);
            if pidx.new_file_reinspects {
                reinspect_on_new_file(app, tx, d, &mut prog, state);
            }
            candidates(pidx, app, tx, d, &mut prog, sc);
            let cand = std::mem::take(&mut sc.cand);
            for &n in &cand {
                let Some(s) = self.sigs.get(n as usize) else {
                    continue;
                };
                let Some(a) = s.app.as_deref() else {
                    continue;
                };
                if state
                    .app
                    .as_ref()
                    .is_some_and(|ad| ad.done.contains(&(tx, n, dn)))
                {
                    continue;
                }
                if !a.proto_ok(app.proto, app.dir_proto(d == Dir::ToServer)) {
                    continue;
                }
                scratch.captures.clear();
                if !pkt_ok(n, state, scratch) {
                    // A rule found by its payload fast pattern comes back when a packet
                    // holds the pattern again; the others are retried on the next packet.
                    if a.pkt_fp.is_none() {
                        prog.pending.push(n);
                    }
                    continue;
                }
                let mut file_inspect = false;
                match eval_tx(a, app, tx, d, sc, scratch, &env, &mut file_inspect) {
                    TxResult::Match => {
                        let ad = state.app.get_or_insert_with(Box::default);
                        if a.per_dir {
                            ad.done.insert((tx, n, dn));
                        } else {
                            ad.done.insert((tx, n, 0));
                            ad.done.insert((tx, n, 1));
                        }
                        if pidx.new_file_reinspects && a.has_files_engine() {
                            if file_inspect {
                                ad.file_reset.push((tx, n, dn));
                            }
                            if !a.per_dir && a.dir.is_none() {
                                // The other direction's state knows nothing of this match
                                // (Suricata's is per direction): its first file inspects it.
                                ad.file_reset.push((tx, n, dn ^ 1));
                            }
                        }
                        s.post.iter().for_each(|op| op.apply(state));
                        super::inspect::apply_captures(scratch, Some(&mut *state));
                        queue.push((n, tx));
                    }
                    TxResult::NoMatch(true) => {
                        let ad = state.app.get_or_insert_with(Box::default);
                        ad.done.insert((tx, n, dn));
                        if file_inspect && pidx.new_file_reinspects {
                            ad.file_reset.push((tx, n, dn));
                        }
                    }
                    TxResult::NoMatch(false) | TxResult::NotReady => prog.pending.push(n),
                }
            }
            sc.cand = cand;
            state
                .app
                .get_or_insert_with(Box::default)
                .progs
                .insert((prog.tx, prog.dir), prog);
            if let Some(h) = app.http() {
                h.note_body_inspected(tx, d);
            }
        }
        // Prune below the oldest transaction live in either direction: protocols whose
        // transactions belong to one direction (MQTT, DNS) keep older ones for the other.
        if let (Some(ad), Some(&first)) = (state.app.as_deref_mut(), txs.iter().min()) {
            let other = match d {
                Dir::ToServer => Dir::ToClient,
                Dir::ToClient => Dir::ToServer,
            };
            live_txs(app, other, &mut sc.txs_other);
            let min = sc.txs_other.iter().copied().fold(first, u64::min);
            ad.prune(min);
        }
        if !txs.is_empty() {
            state.app.get_or_insert_with(Box::default).seen_gen[usize::from(!to_server)] =
                app.gen.wrapping_add(1);
        }
        if let Some(h) = app.http() {
            let upto = h
                .txs()
                .find(|t| !t.is_complete())
                .map_or(h.tx_count(), |t| t.id());
            app.note_inspected(d, upto);
        }
        sc.txs = txs;
    }
}

/// The packet Suricata's flow-end pseudo packets look like to detection: the flow's
/// addresses and ports in direction `to_server`, no payload, no flags.
pub fn pseudo_meta(
    client: std::net::IpAddr,
    server: std::net::IpAddr,
    ports: Option<(u16, u16)>,
    ip_proto: u8,
    to_server: bool,
) -> shrike_packet::decode::PacketMeta {
    use shrike_packet::decode::{flags, PacketKind, PacketMeta};
    let bytes = |a: std::net::IpAddr| -> [u8; 16] {
        match a {
            std::net::IpAddr::V4(v) => {
                let mut b = [0u8; 16];
                b[..4].copy_from_slice(&v.octets());
                b
            }
            std::net::IpAddr::V6(v) => v.octets(),
        }
    };
    let (cp, sp) = ports.unwrap_or((0, 0));
    let (src, dst, sport, dport) = if to_server {
        (client, server, cp, sp)
    } else {
        (server, client, sp, cp)
    };
    let mut m = PacketMeta::EMPTY;
    m.src = bytes(src);
    m.dst = bytes(dst);
    m.sport = sport;
    m.dport = dport;
    m.proto = ip_proto;
    m.kind = PacketKind::L4;
    if src.is_ipv6() {
        m.flags |= flags::IPV6;
    }
    m
}

impl super::Engine {
    /// Transaction inspection only, for a flow-end pseudo packet (Suricata inspects the
    /// transactions of both directions once more when a flow ends, so data released by
    /// the final stream flush is not missed). Build `pkt` with [`pseudo_meta`] and empty data.
    #[allow(clippy::too_many_arguments)]
    pub fn inspect_flow_end<'t>(
        &self,
        pkt: &super::Packet<'_>,
        mut flow: super::FlowInput<'_>,
        stream: Option<(&shrike_stream::TcpSession, Dir)>,
        th: &'t mut super::DetectThread,
    ) -> &'t [super::Alert] {
        th.begin();
        let mut p = super::packet::PacketView::new(pkt);
        p.has_flow = true;
        p.to_server = flow.to_server;
        p.established = true;
        p.mask |= super::sig::mask::FLOW;
        p.app_proto = flow.app.map_or(AppProto::UNKNOWN, |a| a.proto);
        p.dir_proto = flow
            .app
            .map_or(AppProto::UNKNOWN, |a| a.dir_proto(flow.to_server));
        if flow.state.inspection_stopped() {
            return th.alerts();
        }
        self.run_txs(&p, &mut flow, None, None, th);
        if !self.frame_sigs.is_empty() {
            // The end of the stream: what is left of each frame is inspected.
            let tcp = stream.map(|(s, d)| (s, d, true));
            self.run_frames(&p, &mut flow, tcp, th);
        }
        self.finish_packet(&p, Some(&mut flow), th);
        th.alerts()
    }
}

#[cfg(test)]
mod tls_keyword_tests {
    use super::*;

    #[test]
    fn ssl_version_values_as_suricata() {
        let TlsCheck::SslVersion(s) = parse_ssl_version("tls1.2, TLS1.3").unwrap() else {
            panic!()
        };
        assert_eq!(s[4], (true, false));
        assert_eq!(s[5], (true, false));
        assert!(parse_ssl_version("!tls1.0,!sslv3").is_ok());
        assert!(parse_ssl_version("").is_err());
        assert!(parse_ssl_version("tls1.2,tls1.2").is_err());
        assert!(parse_ssl_version("tls1.2,!tls1.1").is_err());
        assert!(parse_ssl_version("tls1.4").is_err());
    }

    #[test]
    fn ssl_state_values_as_suricata() {
        use shrike_app::tls::{STATE_CLIENT_HELLO, STATE_SERVER_HELLO};
        assert_eq!(
            parse_ssl_state("client_hello | !server_hello").unwrap(),
            TlsCheck::SslState(STATE_CLIENT_HELLO | STATE_SERVER_HELLO, STATE_SERVER_HELLO)
        );
        assert!(parse_ssl_state("client_hello,server_keyx").is_ok());
        assert!(parse_ssl_state("client_hello server_hello").is_err());
        assert!(parse_ssl_state("Client_Hello").is_err());
    }

    #[test]
    fn validity_dates_as_suricata() {
        // Digits only are epoch seconds, even a year.
        assert_eq!(parse_validity(">2015"), Ok(ValidityCmp::Ge(2015)));
        assert_eq!(
            parse_validity("<2018-01"),
            Ok(ValidityCmp::Le(1_514_764_800))
        );
        assert_eq!(
            parse_validity("2015-02-12T18:07:27"),
            Ok(ValidityCmp::Eq(1_423_764_447))
        );
        assert_eq!(
            parse_validity("2015-02-12 18:07 <> 2016-01-01"),
            Ok(ValidityCmp::Range(1_423_764_420, 1_451_606_400))
        );
        assert!(parse_validity("2016-01-01 <> 2015-01-01").is_err());
        assert!(parse_validity("> 2015 <> 2016").is_err());
        assert!(parse_validity("18:07").is_err());
        assert!(parse_validity("2015-13").is_err());
        assert!(parse_validity("yesterday").is_err());
    }
}
