//! Suricata's per-keyword value rules (`SigTableElmt.flags` in Suricata 7.0.10), checked on
//! every option before the keyword's own parser runs, as `SigParseOptions` does:
//!
//! * `SIGMATCH_NOOPT` keywords take no value (`nocase:1` fails);
//! * keywords without `SIGMATCH_OPTIONAL_OPT` need one (`rev:` fails);
//! * `SIGMATCH_QUOTES_MANDATORY` values must be double quoted (`content:abc` fails);
//! * `SIGMATCH_QUOTES_MANDATORY`/`_OPTIONAL` values opened with `"` must end with `"` (else
//!   the `;` ending the option was most likely inside the quotes) and hold something;
//! * any other keyword refuses a quoted value (`flow:"established"` fails);
//! * `SIGMATCH_HANDLE_NEGATION` keywords may put `!` before the value.
//!
//! The tables come from Suricata 7.0.10's `src/detect-*.c` registrations and
//! `suricata --list-keywords=csv` (the "No option" feature). A keyword in none of them is
//! left to its own parser.

use super::error::{PResult, ParseError};
use super::lexer::truncate;

/// How a keyword takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRule {
    /// No value (`SIGMATCH_NOOPT`).
    NoValue,
    /// A value is optional (`SIGMATCH_OPTIONAL_OPT`), never quoted.
    Optional,
    /// A value is required and must not be quoted.
    Plain,
    /// A value is required and must be double quoted; `negation`: `!` may come first.
    Quoted { negation: bool },
    /// A value is required, quotes optional; `negation`: `!` may come first.
    MaybeQuoted { negation: bool },
}

const QUOTED: [(&str, bool); 10] = [
    ("msg", false),
    ("content", true),
    ("uricontent", true),
    ("replace", true),
    ("pcrexform", false),
    ("xor", false),
    ("tls.subject", true),
    ("tls.issuerdn", true),
    ("tls.fingerprint", true),
    ("filemagic", true),
];

const MAYBE_QUOTED: [(&str, bool); 8] = [
    ("pcre", true),
    ("app-layer-protocol", true),
    ("filename", true),
    ("fileext", true),
    ("ip_proto", false),
    ("ssh.protoversion", false),
    ("ssh.softwareversion", false),
    ("tos", true),
];

const OPTIONAL: [&str; 3] = ["base64_decode", "fast_pattern", "filestore"];

/// Keywords (and aliases) registered with `SIGMATCH_NOOPT`.
const NO_VALUE: &[&str] = &[
    "alert",
    "base64_data",
    "bypass",
    "compress_whitespace",
    "dce_stub_data",
    "dcerpc.stub_data",
    "dnp3.data",
    "dnp3_data",
    "dns.query",
    "dns_query",
    "dotprefix",
    "endswith",
    "file.data",
    "file.magic",
    "file.name",
    "file_data",
    "ftpbounce",
    "header_lowercase",
    "http.accept",
    "http.accept_enc",
    "http.accept_lang",
    "http.connection",
    "http.content_len",
    "http.content_type",
    "http.cookie",
    "http.header",
    "http.header.raw",
    "http.header_names",
    "http.host",
    "http.host.raw",
    "http.location",
    "http.method",
    "http.protocol",
    "http.referer",
    "http.request_body",
    "http.request_header",
    "http.request_line",
    "http.response_body",
    "http.response_header",
    "http.response_line",
    "http.server",
    "http.start",
    "http.stat_code",
    "http.stat_msg",
    "http.uri",
    "http.uri.normalized",
    "http.uri.raw",
    "http.user_agent",
    "http2.header_name",
    "http_client_body",
    "http_cookie",
    "http_header",
    "http_header_names",
    "http_host",
    "http_method",
    "http_protocol",
    "http_raw_header",
    "http_raw_host",
    "http_raw_uri",
    "http_request_line",
    "http_response_line",
    "http_server_body",
    "http_start",
    "http_stat_code",
    "http_stat_msg",
    "http_uri",
    "http_user_agent",
    "icmpv4.hdr",
    "icmpv6.hdr",
    "ike.init_spi",
    "ike.key_exchange_payload",
    "ike.nonce_payload",
    "ike.resp_spi",
    "ike.vendor",
    "ip.dst",
    "ip.src",
    "ipv4.hdr",
    "ipv6.hdr",
    "ja3.hash",
    "ja3.string",
    "ja3_hash",
    "ja3_string",
    "ja3s.hash",
    "ja3s.string",
    "ja4.hash",
    "ja4_hash",
    "krb5.cname",
    "krb5.sname",
    "krb5_cname",
    "krb5_sname",
    "mqtt.connect.clientid",
    "mqtt.connect.password",
    "mqtt.connect.protocol_string",
    "mqtt.connect.username",
    "mqtt.connect.willmessage",
    "mqtt.connect.willtopic",
    "mqtt.publish.message",
    "mqtt.publish.topic",
    "mqtt.subscribe.topic",
    "mqtt.unsubscribe.topic",
    "pgsql.query",
    "noalert",
    "nocase",
    "pkt_data",
    "prefilter",
    "quic.cyu.hash",
    "quic.cyu.string",
    "quic.sni",
    "quic.ua",
    "quic.version",
    "rawbytes",
    "rfb.name",
    "sameip",
    "sip.method",
    "sip.protocol",
    "sip.request_line",
    "sip.response_line",
    "sip.stat_code",
    "sip.stat_msg",
    "sip.uri",
    "smb.named_pipe",
    "smb.ntlmssp_domain",
    "smb.ntlmssp_user",
    "smb.share",
    "snmp.community",
    "snmp.usm",
    "ssh-
    hassh",
    "ssh-hassh-server",
    "ssh-hassh-server-string",
    "ssh-hassh-string",
    "ssh.hassh",
    "ssh.hassh.server",
    "ssh.hassh.server.string",
    "ssh.hassh.string",
    "ssh.proto",
    "ssh.software",
    "ssh_proto",
    "ssh_software",
    "startswith",
    "strip_pseudo_headers",
    "strip_whitespace",
    "tcp.hdr",
    "tls.cert_fingerprint",
    "tls.cert_issuer",
    "tls.cert_serial",
    "tls.cert_subject",
    "tls.certs",
    "tls.random",
    "tls.random_bytes",
    "tls.random_time",
    "tls.sni",
    "tls.store",
    "tls_cert_expired",
    "tls_cert_fingerprint",
    "tls_cert_issuer",
    "tls_cert_serial",
    "tls_cert_subject",
    "tls_cert_valid",
    "tls_sni",
    "tls_store",
    "to_lowercase",
    "to_md5",
    "to_sha1",
    "to_sha256",
    "to_uppercase",
    "udp.hdr",
    "url_decode",
];

/// Every other keyword (and alias) Suricata 7.0.10 registers: a value, unquoted.
const PLAIN: &[&str] = &[
    "ack",
    "app-layer-event",
    "asn1",
    "bsize",
    "byte_extract",
    "byte_jump",
    "byte_math",
    "byte_test",
    "cip_service",
    "classtype",
    "config",
    "datarep",
    "dataset",
    "dce_iface",
    "dce_opnum",
    "dcerpc.iface",
    "dcerpc.opnum",
    "decode-event",
    "depth",
    "detection_filter",
    "dhcp.leasetime",
    "dhcp.rebinding_time",
    "dhcp.renewal_time",
    "distance",
    "dnp3.func",
    "dnp3.ind",
    "dnp3.obj",
    "dnp3_func",
    "dnp3_ind",
    "dnp3_obj",
    "dns.opcode",
    "dsize",
    "engine-event",
    "enip_command",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesize",
    "flags",
    "flow",
    "flow.age",
    "flowbits",
    "flowint",
    "flowvar",
    "fragbits",
    "fragoffset",
    "frame",
    "ftpdata_command",
    "geoip",
    "gid",
    "hostbits",
    "http2.errorcode",
    "http2.frametype",
    "http2.priority",
    "http2.settings",
    "http2.size_update",
    "http2.window",
    "icmp_id",
    "icmp_seq",
    "icmpv4-csum",
    "icmpv6-csum",
    "icmpv6.mtu",
    "icode",
    "id",
    "ike.chosen_sa_attribute",
    "ike.exchtype",
    "ike.key_exchange_payload_length",
    "ike.nonce_payload_length",
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
    "nfq_set_mark",
    "nfs.version",
    "nfs_procedure",
    "nfs_version",
    "offset",
    "pktvar",
    "priority",
    "reference",
    "requires",
    "rev",
    "rfb.secresult",
    "rfb.sectype",
    "rpc",
    "seq",
    "sid",
    "snmp.pdu_type",
    "snmp.version",
    "ssl_state",
    "ssl_version",
    "stream-event",
    "stream_size",
    "tag",
    "target",
    "tcp.ack",
    "tcp.flags",
    "tcp.mss",
    "tcp.seq",
    "tcp.window",
    "tcpv4-csum",
    "tcpv6-csum",
    "template",
    "template.buffer",
    "template2",
    "threshold",
    "tls.cert_chain_len",
    "tls.version",
    "tls_cert_notafter",
    "tls_cert_notbefore",
    "ttl",
    "udpv4-csum",
    "udpv6-csum",
    "urilen",
    "window",
    "within",
    "xbits",
];

/// The value rule of keyword `name` (lower case), if Suricata 7.0.10 has the keyword.
/// One hash lookup: the tables are indexed once (a linear scan per option doubled the time
/// to load ET Open).
pub fn value_rule(name: &str) -> Option<ValueRule> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<&'static str, ValueRule>> =
        std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m = std::collections::HashMap::new();
        // Inserted from the least to the most specific table: a name in two tables keeps
        // the rule the scan order gave it (quoted first).
        for &k in PLAIN {
            m.insert(k, ValueRule::Plain);
        }
        for &k in NO_VALUE {
            m.insert(k, ValueRule::NoValue);
        }
        for &k in OPTIONAL.iter() {
            m.insert(k, ValueRule::Optional);
        }
        for &(k, negation) in MAYBE_QUOTED.iter() {
            m.insert(k, ValueRule::MaybeQuoted { negation });
        }
        for &(k, negation) in QUOTED.iter() {
            m.insert(k, ValueRule::Quoted { negation });
        }
        m
    });
    index.get(name).copied()
}

/// Checks one option's value against its keyword's rule, as Suricata's `SigParseOptions`
/// does before calling the keyword's setup. `value` is the text after the first `:` (if
/// any), trailing blanks trimmed.
pub fn check_value(name: &str, value: Option<&str>) -> PResult<()> {
    let Some(rule) = value_rule(name) else {
        return Ok(());
    };
    let v = value
        .map(|v| v.trim_start_matches([' ', '\t']))
        .unwrap_or("");
    match rule {
        ValueRule::NoValue if !v.is_empty() => {
            return Err(ParseError::syntax(format!(
                "`{name}` takes no value, got `{}`",
                truncate(v, 60)
            )))
        }
        ValueRule::NoValue | ValueRule::Optional if v.is_empty() => return Ok(()),
        ValueRule::NoValue => {}
        _ if v.is_empty() => {
            return Err(ParseError::syntax(format!("`{name}` needs a value")));
        }
        _ => {}
    }
    let (quotes, negation, mandatory) = match rule {
        ValueRule::Quoted { negation } => (true, negation, true),
        ValueRule::MaybeQuoted { negation } => (true, negation, false),
        _ => (false, false, false),
    };
    let mut p = v;
    if negation {
        if let Some(rest) = p.strip_prefix('!') {
            p = rest.trim_start_matches([' ', '\t']);
            if p.is_empty() {
                return Err(ParseError::syntax(format!(
                    "`{name}` needs a value after `!`"
                )));
            }
        }
    }
    if mandatory && !p.starts_with('"') {
        return Err(ParseError::syntax(format!(
            "`{name}` value must be double quoted: {}",
            truncate(v, 60)
        )));
    }
    if !p.starts_with('"') {
        return Ok(());
    }
    if !quotes {
        return Err(ParseError::syntax(format!(
            "`{name}` does not take a quoted value: {}",
            truncate(v, 60)
        )));
    }
    if p.len() < 2 || !p.ends_with('"') {
        return Err(ParseError::syntax(format!(
            "bad quoting of `{name}` (possible missing semicolon or quote): {}",
            truncate(v, 60)
        )));
    }
    if p.len() == 2 {
        return Err(ParseError::syntax(format!("empty quoted `{name}` value")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_per_keyword() {
        assert!(check_value("nocase", None).is_ok());
        assert!(check_value("nocase", Some("1")).is_err());
        assert!(check_value("fast_pattern", None).is_ok());
        assert!(check_value("fast_pattern", Some("only")).is_ok());
        assert!(check_value("rev", None).is_err());
        assert!(check_value("rev", Some("")).is_err());
        assert!(check_value("content", Some("abc")).is_err());
        assert!(check_value("content", Some("!\"abc\"")).is_ok());
        assert!(check_value("content", Some("!\"\"")).is_err());
        assert!(check_value("content", Some("\"abc")).is_err());
        assert!(check_value("msg", Some("!\"abc\"")).is_err());
        assert!(check_value("pcre", Some("/abc/i")).is_ok());
        assert!(check_value("pcre", Some("\"/abc/i\"")).is_ok());
        assert!(check_value("flow", Some("\"established\"")).is_err());
        assert!(check_value("flow", Some("established")).is_ok());
        assert!(check_value("sid", Some("\"1\"")).is_err());
        assert!(check_value("frobnicate", Some("\"x")).is_ok());
        assert_eq!(value_rule("file_data"), Some(ValueRule::NoValue));
        assert_eq!(value_rule("threshold"), Some(ValueRule::Plain));
    }
}
