//! Transaction buffers for rule inspection: which app-layer buffer a rule's [`BufferId`]
//! names, fetching it from a flow's transaction, and the Suricata transforms applied before
//! matching.

use md5::Digest;

use shrike_app::http::{HttpBuffer, Progress};
use shrike_app::layer::AppFlow;
use shrike_app::tls::TlsBuffer;
use shrike_app::{AppProto, Dir};
use shrike_rules::parse::{BufferId, Transform};

/// An app-layer inspection buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AppBuf {
    /// An HTTP buffer.
    Http(HttpBuffer),
    /// A TLS buffer.
    Tls(TlsBuffer),
    /// `dns.query` (multi-buffer).
    DnsQuery,
    /// `file.magic` (Suricata 7's sticky buffer): the libmagic type of each file of the
    /// transaction, whatever the protocol carrying it (multi-buffer).
    FileMagic,
    /// A buffer a registered protocol offers ([`shrike_app::registry::Protocol::buffers`]).
    Reg {
        /// The protocol.
        proto: AppProto,
        /// Index into the protocol's buffer table.
        id: u16,
        /// The only direction it is inspected in, if one-sided.
        dir: Option<Dir>,
    },
}

impl AppBuf {
    /// The app buffer a rule buffer names, if shrike inspects it.
    pub(crate) fn of(b: BufferId) -> Option<AppBuf> {
        let n = b.name();
        if n == "dns.query" {
            return Some(AppBuf::DnsQuery);
        }
        if n == "file.magic" {
            return Some(AppBuf::FileMagic);
        }
        if let Some(h) = HttpBuffer::from_keyword(n) {
            return Some(AppBuf::Http(h));
        }
        if let Some(t) = TlsBuffer::from_keyword(n) {
            return Some(AppBuf::Tls(t));
        }
        shrike_app::registry::find_buffer(n).map(|(proto, id, d)| AppBuf::Reg {
            proto,
            id,
            dir: d.dir,
        })
    }

    /// The app buffer a rule buffer names in a rule of protocol `proto`: a registered
    /// protocol's own buffer of that name first (`file.data` of an `alert smtp` rule is
    /// SMTP's), else [`AppBuf::of`].
    pub(crate) fn of_in(b: BufferId, proto: Option<AppProto>) -> Option<AppBuf> {
        if b.name().starts_with("ssh.hassh") {
            // As Suricata's keyword setup: a hassh rule turns HASSH on (process-wide).
            shrike_app::ssh::HASSH_ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // Likewise JA3 and JA4 (Suricata's `SSLEnableJA3` / `SSLEnableJA4` in the keywords'
        // setup), unless configured off.
        if b.name().starts_with("ja3") {
            shrike_app::tls::enable_ja3();
        } else if b.name().starts_with("ja4") {
            shrike_app::tls::enable_ja4();
        }
        let own = proto.and_then(|p| {
            let d = p.protocol()?;
            let id = d.buffers.iter().position(|x| x.name == b.name())?;
            Some(AppBuf::Reg {
                proto: p,
                id: u16::try_from(id).ok()?,
                dir: d.buffers[id].dir,
            })
        });
        own.or_else(|| AppBuf::of(b))
    }

    /// The protocol the buffer belongs to.
    pub(crate) fn proto(self) -> AppProto {
        match self {
            AppBuf::Http(_) => AppProto::HTTP,
            AppBuf::Tls(_) => AppProto::TLS,
            AppBuf::DnsQuery => AppProto::DNS,
            // Not tied to a protocol (the rule keeps its own).
            AppBuf::FileMagic => AppProto::UNKNOWN,
            AppBuf::Reg { proto, .. } => proto,
        }
    }

    /// The only direction the buffer is inspected in, if one-sided.
    pub(crate) fn dir(self) -> Option<Dir> {
        match self {
            AppBuf::Http(h) => h.direction(),
            AppBuf::DnsQuery => Some(Dir::ToServer),
            AppBuf::FileMagic => None,
            AppBuf::Tls(t) => match t {
                TlsBuffer::Sni | TlsBuffer::Ja3Hash | TlsBuffer::Ja3String | TlsBuffer::Ja4Hash => {
                    Some(Dir::ToServer)
                }
                TlsBuffer::Random | TlsBuffer::RandomTime | TlsBuffer::RandomBytes => None,
                _ => Some(Dir::ToClient),
            },
            AppBuf::Reg { dir, .. } => dir,
        }
    }

    /// Whether the buffer is a message body (inspected before the message completes once
    /// enough is buffered).
    fn is_body(self) -> bool {
        matches!(
            self,
            AppBuf::Http(HttpBuffer::RequestBody | HttpBuffer::ResponseBody | HttpBuffer::FileData)
        )
    }
}

/// Whether a buffer of transaction `tx` can be inspected now (`Some(final)`), or not yet
/// (`None`).
pub(crate) fn readiness(app: &AppFlow, tx: u64, b: AppBuf, dir: Dir) -> Option<bool> {
    let closed = app.is_closed();
    match b {
        AppBuf::Http(h) if app.proto != AppProto::HTTP => {
            // HTTP keywords on HTTP/2 transactions (Suricata 7)
            let d = h.direction().unwrap_or(dir);
            http2_of(app)?.http_ready(tx, h, d, closed)
        }
        AppBuf::Http(h) => {
            let st = app.http()?;
            let t = st.tx(tx)?;
            let d = h.direction().unwrap_or(dir);
            let p = t.progress(d);
            let complete = p == Progress::Complete || closed;
            if b.is_body() {
                st.body_ready(tx, h, d, complete).then_some(complete)
            } else if h == HttpBuffer::FileName {
                // Files open while the body arrives: the names are final once it ended.
                (p >= h.min_progress() || complete).then_some(complete)
            } else {
                // A line or header buffer no longer changes once the transaction is past
                // it (Suricata: an engine "can't match" once progress passed its own).
                (p >= h.min_progress() || complete).then_some(true)
            }
        }
        AppBuf::DnsQuery => Some(true),
        AppBuf::FileMagic => {
            // Ready once every file has its type (512 bytes seen, or ended), or none can
            // come any more; final once the transaction is.
            let p = app.parser()?;
            let mut pending = false;
            p.files(tx, dir, &mut |f| {
                pending |= !f.is_pruned() && f.magic().is_none() && !f.is_done()
            });
            let fin = p.tx_final(tx, closed);
            (!pending).then_some(fin)
        }
        AppBuf::Tls(tb) => {
            let t = app.tls()?;
            let d = b.dir().unwrap_or(dir);
            Some(t.handshake_done() || t.failed() || closed || t.buffer_final(d, tb))
        }
        AppBuf::Reg { proto, id, .. } => {
            let id = flow_buffer(app, proto, id)?;
            app.parser()?
                .buffer_ready(tx, id, b.dir().unwrap_or(dir), closed)
        }
    }
}

/// Call `f` with each item of buffer `b` of transaction `tx` (inspected in `dir`) until it
/// returns true; returns whether it did.
pub(crate) fn visit(
    app: &AppFlow,
    tx: u64,
    b: AppBuf,
    dir: Dir,
    f: &mut dyn FnMut(&[u8]) -> bool,
) -> bool {
    let d = b.dir().unwrap_or(dir);
    match b {
        AppBuf::Http(h) if app.proto != AppProto::HTTP => {
            http2_of(app).is_some_and(|s| s.http_buffer(tx, h, d, f))
        }
        AppBuf::Http(h) => app.http().is_some_and(|s| s.for_each_buffer(tx, h, d, f)),
        AppBuf::DnsQuery => app
            .dns()
            .and_then(|s| s.tx(tx))
            .is_some_and(|t| t.query_names().any(&mut *f)),
        AppBuf::FileMagic => {
            let mut hit = false;
            if let Some(p) = app.parser() {
                p.files(tx, d, &mut |file| {
                    if !hit && !file.is_pruned() {
                        if let Some(m) = file.magic() {
                            hit = f(m.as_bytes());
                        }
                    }
                });
            }
            hit
        }
        AppBuf::Tls(t) => {
            let mut hit = false;
            if let Some(s) = app.tls() {
                s.buffer(d, t, &mut |v| {
                    if !hit {
                        hit = f(v);
                    }
                });
            }
            hit
        }
        AppBuf::Reg { proto, id, .. } => flow_buffer(app, proto, id)
            .is_some_and(|id| app.parser().is_some_and(|p| p.buffer(tx, id, d, f))),
    }
}

/// Buffer `id` of protocol `proto` as the flow's parser numbers it: the same id on a flow of
/// that protocol; on a flow a `proto` rule also inspects (`dcerpc.stub_data` on SMB), the
/// flow protocol's buffer of the same name.
fn flow_buffer(app: &AppFlow, proto: AppProto, id: u16) -> Option<u16> {
    if app.proto == proto {
        return Some(id);
    }
    if !proto.sig_matches(app.proto) {
        return None;
    }
    let name = proto.protocol()?.buffers.get(usize::from(id))?.name;
    let own = app.proto.protocol()?.buffers;
    u16::try_from(own.iter().position(|b| b.name == name)?).ok()
}

/// The flow's HTTP/2 parser, if the flow is HTTP/2.
fn http2_of(app: &AppFlow) -> Option<&shrike_app::http2::Http2State> {
    app.parser()?.as_any().downcast_ref()
}

thread_local! {
    /// `pcrexform` expressions compiled once per worker (the rules' transforms hold the
    /// text; the rule parser checked that each compiles with one capture).
    static PCREXFORM: std::cell::RefCell<std::collections::HashMap<String, Option<pcre2::bytes::Regex>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Suricata's `DetectTransformPcrexform`: the first capture of the expression's first match,
/// or the input unchanged when it does not match.
fn pcrexform(pat: &str, input: &[u8], out: &mut Vec<u8>) {
    PCREXFORM.with(|m| {
        let mut m = m.borrow_mut();
        let re = m
            .entry(pat.to_string())
            .or_insert_with(|| pcre2::bytes::Regex::new(pat).ok());
        let cap = re
            .as_ref()
            .and_then(|re| re.captures(input).ok().flatten())
            .and_then(|c| c.get(1).map(|g| (g.start(), g.end())));
        match cap {
            Some((a, b)) => out.extend_from_slice(&input[a..b]),
            None => out.extend_from_slice(input),
        }
    });
}

/// Apply `ts` to `input`; the result is in `out` (left empty when nothing applies).
pub(crate) fn apply_transforms(
    ts: &[Transform],
    input: &[u8],
    out: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
) {
    out.clear();
    out.extend_from_slice(input);
    for t in ts {
        tmp.clear();
        match t {
            Transform::CompressWhitespace => {
                let mut prev_ws = false;
                for &c in out.iter() {
                    let ws = c.is_ascii_whitespace() || c == 0x0b;
                    if !(ws && prev_ws) {
                        tmp.push(if ws { b' ' } else { c });
                    }
                    prev_ws = ws;
                }
            }
            Transform::StripWhitespace => {
                tmp.extend(
                    out.iter()
                        .copied()
                        .filter(|c| !(c.is_ascii_whitespace() || *c == 0x0b)),
                );
            }
            Transform::DotPrefix => {
                tmp.push(b'.');
                tmp.extend_from_slice(out);
            }
            Transform::ToLowercase | Transform::HeaderLowercase => {
                tmp.extend(out.iter().map(u8::to_ascii_lowercase))
            }
            Transform::ToUppercase => tmp.extend(out.iter().map(u8::to_ascii_uppercase)),
            Transform::UrlDecode => {
                let mut i = 0;
                while let Some(&c) = out.get(i) {
                    if c == b'%' {
                        let h = out.get(i + 1..i + 3).and_then(|h| {
                            std::str::from_utf8(h)
                                .ok()
                                .and_then(|s| u8::from_str_radix(s, 16).ok())
                        });
                        if let Some(v) = h {
                            tmp.push(v);
                            i += 3;
                            continue;
                        }
                    }
                    tmp.push(if c == b'+' { b' ' } else { c });
                    i += 1;
                }
            }
            Transform::ToMd5 => tmp.extend_from_slice(&md5::Md5::digest(&out[..])),
            Transform::ToSha1 => tmp.extend_from_slice(&sha1::Sha1::digest(&out[..])),
            Transform::ToSha256 => tmp.extend_from_slice(&sha2::Sha256::digest(&out[..])),
            Transform::Xor(key) => {
                if key.is_empty() {
                    tmp.extend_from_slice(out);
                } else {
                    tmp.extend(out.iter().zip(key.iter().cycle()).map(|(a, k)| a ^ k));
                }
            }
            Transform::PcreXform(p) => pcrexform(p, out, tmp),
            Transform::StripPseudoHeaders => tmp.extend_from_slice(out),
        }
        std::mem::swap(out, tmp);
    }
}

/// Hex of a hash, for tests.
#[cfg(test)]
fn hex_of(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_magic_is_one_buffer_of_every_file_protocol() {
        let b = shrike_rules::parse::BufferId::by_name("file.magic").unwrap();
        for p in [None, Some(AppProto::HTTP), Some(AppProto::SMB)] {
            assert_eq!(AppBuf::of_in(b, p), Some(AppBuf::FileMagic));
        }
        assert_eq!(AppBuf::FileMagic.dir(), None);
    }

    #[test]
    fn transforms_table() {
        let cases: &[(&[Transform], &[u8], &[u8])] = &[
            (&[Transform::DotPrefix], b"a.com", b".a.com"),
            (&[Transform::StripWhitespace], b" a b\t\r\nc ", b"abc"),
            (&[Transform::CompressWhitespace], b"a  \t b", b"a b"),
            (&[Transform::ToLowercase], b"AbC", b"abc"),
            (&[Transform::UrlDecode], b"%41b+%zz", b"Ab %zz"),
            (&[Transform::Xor(vec![1])], b"\x00\x01", b"\x01\x00"),
            (
                &[Transform::ToLowercase, Transform::DotPrefix],
                b"X.COM",
                b".x.com",
            ),
        ];
        let (mut out, mut tmp) = (Vec::new(), Vec::new());
        for (ts, i, want) in cases {
            apply_transforms(ts, i, &mut out, &mut tmp);
            assert_eq!(&out[..], *want, "{ts:?}");
        }
        apply_transforms(&[Transform::ToMd5], b"abc", &mut out, &mut tmp);
        assert_eq!(hex_of(&out), "900150983cd24fb0d6963f7d28e17f72");
        apply_transforms(&[Transform::ToSha256], b"", &mut out, &mut tmp);
        assert_eq!(
            hex_of(&out),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn buffer_mapping() {
        let id = |n| BufferId::by_name(n).unwrap();
        assert_eq!(
            AppBuf::of(id("http.uri")),
            Some(AppBuf::Http(HttpBuffer::Uri))
        );
        assert_eq!(AppBuf::of(id("dns.query")), Some(AppBuf::DnsQuery));
        assert_eq!(AppBuf::of(id("tls.sni")), Some(AppBuf::Tls(TlsBuffer::Sni)));
        assert_eq!(
            AppBuf::of(id("ja4.hash")),
            Some(AppBuf::Tls(TlsBuffer::Ja4Hash))
        );
        assert!(matches!(
            AppBuf::of(id("ssh.proto")),
            Some(AppBuf::Reg { dir: None, .. })
        ));
        assert!(matches!(
            AppBuf::of(id("smb.share")),
            Some(AppBuf::Reg {
                dir: Some(Dir::ToServer),
                ..
            })
        ));
        assert_eq!(
            AppBuf::of(id("file.data")).map(AppBuf::proto),
            Some(AppProto::HTTP)
        );
        // `file.data` in an `alert smb` rule is SMB's own; in an `alert http` rule HTTP's.
        let smb = AppProto::from_name("smb");
        assert_eq!(AppBuf::of_in(id("file.data"), smb).map(AppBuf::proto), smb);
        assert_eq!(
            AppBuf::of_in(id("file.data"), Some(AppProto::HTTP)),
            Some(AppBuf::Http(HttpBuffer::FileData))
        );
    }

    #[test]
    fn pcrexform_keeps_the_capture_as_suricata() {
        use shrike_rules::parse::Transform;
        let t = |pat: &str, input: &[u8]| {
            let (mut out, mut tmp) = (Vec::new(), Vec::new());
            apply_transforms(
                &[Transform::PcreXform(pat.into())],
                input,
                &mut out,
                &mut tmp,
            );
            out
        };
        assert_eq!(t("/get\\?data=(.*)", b"/get?data=abc"), b"abc");
        // No match: the buffer is left as it was.
        assert_eq!(t("^x(y)", b"abc"), b"abc");
        // The parser refuses an expression without exactly one capture.
        assert!(Transform::parse("pcrexform", Some("\"a(b)(c)\"")).is_err());
        assert!(Transform::parse("pcrexform", Some("\"abc\"")).is_err());
        assert!(Transform::parse("pcrexform", Some("\"a(b)\"")).is_ok());
    }
}
