//! Inspection buffers (sticky buffers, legacy content modifiers) and
//! transforms.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::error::{PResult, ParseError};

struct Tables {
    sticky: HashMap<&'static str, BufferId>,
    modifiers: HashMap<&'static str, BufferId>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut sticky = HashMap::new();
        let mut modifiers = HashMap::new();
        for (i, b) in BUFFERS.iter().enumerate() {
            let id = BufferId(u16::try_from(i).unwrap_or(u16::MAX));
            sticky.insert(b.name, id);
            for a in b.aliases {
                sticky.insert(*a, id);
            }
            if let Some(m) = b.modifier {
                modifiers.insert(m, id);
            }
        }
        Tables { sticky, modifiers }
    })
}

/// Index of an inspection buffer in [`BUFFERS`]. Id 0 is the packet/stream
/// payload (`pkt_data`), the default buffer of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u16);

/// Static description of one inspection buffer.
#[derive(Debug)]
pub struct BufferDef {
    /// Canonical Suricata 7 name (the dotted sticky-buffer keyword).
    pub name: &'static str,
    /// Other sticky-buffer keywords that select this buffer.
    pub aliases: &'static [&'static str],
    /// The legacy content modifier that moves the previous content here
    /// (`http_uri` for `http.uri`), if any.
    pub modifier: Option<&'static str>,
}

macro_rules! buffers {
    ($( $name:literal [$($alias:literal),*] $(mod $m:literal)? ;)*) => {
        /// Every inspection buffer Suricata 7 knows, in id order.
        pub static BUFFERS: &[BufferDef] = &[
            $( BufferDef { name: $name, aliases: &[$($alias),*], modifier: buffers!(@m $($m)?) }, )*
        ];
    };
    (@m) => { None };
    (@m $m:literal) => { Some($m) };
}

buffers! {
    "pkt_data" [];
    "file.data" ["file_data"];
    "http.uri" [] mod "http_uri";
    "http.uri.raw" [] mod "http_raw_uri";
    "http.method" [] mod "http_method";
    "http.host" [] mod "http_host";
    "http.host.raw" [] mod "http_raw_host";
    "http.header" [] mod "http_header";
    "http.header.raw" [] mod "http_raw_header";
    "http.cookie" [] mod "http_cookie";
    "http.user_agent" [] mod "http_user_agent";
    "http.request_body" [] mod "http_client_body";
    // Suricata 7 inspects `file_data` here, but only to the client (the sticky buffer's
    // setup clears SIG_FLAG_TOSERVER): a buffer of its own keeps it off request files.
    "http.response_body" [] mod "http_server_body";
    "http.stat_code" [] mod "http_stat_code";
    "http.stat_msg" [] mod "http_stat_msg";
    "http.protocol" ["http_protocol"];
    "http.start" ["http_start"];
    "http.header_names" ["http_header_names"];
    "http.accept" ["http_accept"];
    "http.accept_lang" ["http_accept_lang"];
    "http.accept_enc" ["http_accept_enc"];
    "http.connection" ["http_connection"];
    "http.content_len" ["http_content_len"];
    "http.content_type" ["http_content_type"];
    "http.location" ["http_location"];
    "http.server" ["http_server"];
    "http.referer" ["http_referer"];
    "http.request_line" ["http_request_line"];
    "http.response_line" ["http_response_line"];
    "http.request_header" [];
    "http.response_header" [];
    "http2.header_name" [];
    "dns.query" ["dns_query"];
    "tls.sni" ["tls_sni"];
    "tls.certs" [];
    "tls.cert_issuer" ["tls_cert_issuer"];
    "tls.cert_subject" ["tls_cert_subject"];
    "tls.cert_serial" ["tls_cert_serial"];
    "tls.cert_fingerprint" ["tls_cert_fingerprint"];
    "tls.random" [];
    "tls.random_time" [];
    "tls.random_bytes" [];
    "ja3.hash" ["ja3_hash"];
    "ja3.string" ["ja3_string"];
    "ja3s.hash" ["ja3s_hash"];
    "ja3s.string" ["ja3s_string"];
    "ja4.hash" [];
    "ssh.proto" ["ssh_proto"];
    "ssh.software" ["ssh_software"];
    "ssh.hassh" [];
    "ssh.hassh.server" [];
    "ssh.hassh.string" [];
    "ssh.hassh.server.string" [];
    "smtp.helo" [];
    "smtp.mail_from" [];
    "smtp.rcpt_to" [];
    "email.from" [];
    "email.subject" [];
    "email.to" [];
    "email.cc" [];
    "email.date" [];
    "email.message_id" [];
    "email.x_mailer" [];
    "email.url" [];
    "email.received" [];
    "ftp.command" [];
    "ftp.command_data" [];
    "ftp.reply" [];
    "ftp.completion_code" [];
    "dcerpc.stub_data" ["dce_stub_data"];
    "smb.named_pipe" ["smb_named_pipe"];
    "smb.share" ["smb_share"];
    "smb.ntlmssp_user" [];
    "smb.ntlmssp_domain" [];
    "file.name" [];
    "file.magic" [];
    "dnp3.data" ["dnp3_data"];
    "krb5.cname" ["krb5_cname"];
    "krb5.sname" ["krb5_sname"];
    "sip.method" [];
    "sip.uri" [];
    "sip.protocol" [];
    "sip.stat_code" [];
    "sip.stat_msg" [];
    "sip.request_line" [];
    "sip.response_line" [];
    "sip.from" [];
    "sip.to" [];
    "sip.via" [];
    "sip.user_agent" [];
    "sip.content_type" [];
    "sip.content_length" [];
    "rfb.name" [];
    "tftp.file_name" [];
    "snmp.usm" [];
    "snmp.community" [];
    "mqtt.connect.clientid" [];
    "mqtt.connect.username" [];
    "mqtt.connect.password" [];
    "mqtt.connect.willtopic" [];
    "mqtt.connect.willmessage" [];
    "mqtt.publish.topic" [];
    "mqtt.publish.message" [];
    "mqtt.subscribe.topic" [];
    "mqtt.unsubscribe.topic" [];
    "mqtt.connect.protocol_string" [];
    "pgsql.query" [];
    "quic.version" [];
    "quic.sni" [];
    "quic.ua" [];
    "quic.cyu.hash" [];
    "quic.cyu.string" [];
    "ike.init_spi" [];
    "ike.resp_spi" [];
    "ike.vendor" [];
    "ike.nonce_payload" [];
    "ike.key_exchange_payload" [];
    "ipv4.hdr" [];
    "ipv6.hdr" [];
    "icmpv4.hdr" [];
    "icmpv6.hdr" [];
    "tcp.hdr" [];
    "udp.hdr" [];
    "base64_data" [];
    "frame" [];
}

impl BufferId {
    /// The packet/stream payload buffer (`pkt_data`).
    pub const PAYLOAD: BufferId = BufferId(0);

    /// Looks up a sticky-buffer keyword (canonical name or alias).
    pub fn from_sticky(name: &str) -> Option<BufferId> {
        tables().sticky.get(name).copied()
    }

    /// Looks up a canonical name.
    pub fn by_name(name: &str) -> Option<BufferId> {
        BUFFERS
            .iter()
            .position(|b| b.name == name)
            .and_then(|i| u16::try_from(i).ok())
            .map(BufferId)
    }

    /// Looks up a legacy content modifier (`http_uri`, `http_client_body`…).
    pub fn from_modifier(name: &str) -> Option<BufferId> {
        tables().modifiers.get(name).copied()
    }

    /// Canonical name.
    pub fn name(self) -> &'static str {
        BUFFERS.get(usize::from(self.0)).map_or("?", |b| b.name)
    }

    /// The buffer a pcre modifier letter selects (`U` → `http.uri`, …).
    pub fn from_pcre_flag(c: char) -> Option<BufferId> {
        let name = match c {
            'U' => "http.uri",
            'I' => "http.uri.raw",
            'P' => "http.request_body",
            'Q' => "file.data",
            'H' => "http.header",
            'D' => "http.header.raw",
            'M' => "http.method",
            'C' => "http.cookie",
            'S' => "http.stat_code",
            'Y' => "http.stat_msg",
            'V' => "http.user_agent",
            'W' => "http.host",
            'Z' => "http.host.raw",
            _ => return None,
        };
        Self::by_name(name)
    }
}

/// A transform applied to a sticky buffer before inspection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    /// `compress_whitespace`
    CompressWhitespace,
    /// `strip_whitespace`
    StripWhitespace,
    /// `strip_pseudo_headers`
    StripPseudoHeaders,
    /// `to_md5`
    ToMd5,
    /// `to_sha1`
    ToSha1,
    /// `to_sha256`
    ToSha256,
    /// `dotprefix`
    DotPrefix,
    /// `url_decode`
    UrlDecode,
    /// `header_lowercase`
    HeaderLowercase,
    /// `to_lowercase`
    ToLowercase,
    /// `to_uppercase`
    ToUppercase,
    /// `pcrexform:"<regex>"` (the regex text)
    PcreXform(String),
    /// `xor:"<hex key>"`
    Xor(Vec<u8>),
}

impl Transform {
    /// Parses a transform keyword; `Ok(None)` when `name` is no transform.
    pub fn parse(name: &str, value: Option<&str>) -> PResult<Option<Transform>> {
        let t = match name {
            "compress_whitespace" => Transform::CompressWhitespace,
            "strip_whitespace" => Transform::StripWhitespace,
            "strip_pseudo_headers" => Transform::StripPseudoHeaders,
            "to_md5" => Transform::ToMd5,
            "to_sha1" => Transform::ToSha1,
            "to_sha256" => Transform::ToSha256,
            "dotprefix" => Transform::DotPrefix,
            "url_decode" => Transform::UrlDecode,
            "header_lowercase" => Transform::HeaderLowercase,
            "to_lowercase" => Transform::ToLowercase,
            "to_uppercase" => Transform::ToUppercase,
            "pcrexform" => {
                let v = value
                    .map(super::lexer::unquote)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| ParseError::bad("pcrexform", "needs a regular expression"))?;
                // Suricata's setup: the expression compiles and has exactly one capture.
                let re = pcre2::bytes::Regex::new(v).map_err(|e| {
                    ParseError::bad("pcrexform", format!("pcre2 compile of `{v}` failed: {e}"))
                })?;
                let n = re.captures_len().saturating_sub(1);
                if n != 1 {
                    return Err(ParseError::bad(
                        "pcrexform",
                        format!("needs exactly one substring capture, found {n}"),
                    ));
                }
                Transform::PcreXform(v.to_string())
            }
            "xor" => {
                let v = value
                    .map(super::lexer::unquote)
                    .ok_or_else(|| ParseError::bad("xor", "needs a hex key"))?;
                let key = decode_hex(v)
                    .ok_or_else(|| ParseError::bad("xor", format!("bad hex key `{v}`")))?;
                if key.is_empty() || key.len() > 255 {
                    return Err(ParseError::bad("xor", "key must be 1..255 bytes"));
                }
                Transform::Xor(key)
            }
            _ => return Ok(None),
        };
        Ok(Some(t))
    }
}

/// Decodes an even-length hex string.
pub(crate) fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if s.len() % 2 != 0 {
        return None;
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    for pair in b.chunks_exact(2) {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out.push(u8::try_from(hi * 16 + lo).ok()?);
    }
    Some(out)
}
