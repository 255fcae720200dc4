//! EVE `tls` records and the `alert.tls` object, in Suricata 7's field order.

use super::cert::{format_time, CertInfo};
use super::{version_string, TlsState};
pub use crate::common::json::JsonOut;

/// A field of the `tls` record (the `custom` list names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlsField {
    /// `subject`.
    Subject,
    /// `issuer` (logged as `issuerdn`).
    Issuer,
    /// `session_resumed`.
    SessionResumed,
    /// `serial`.
    Serial,
    /// `fingerprint`.
    Fingerprint,
    /// `sni`.
    Sni,
    /// `version`.
    Version,
    /// `not_before` (logged as `notbefore`).
    NotBefore,
    /// `not_after` (logged as `notafter`).
    NotAfter,
    /// `certificate`: base64 of the server certificate.
    Certificate,
    /// `chain`: base64 of each certificate of the chain.
    Chain,
    /// `ja3`.
    Ja3,
    /// `ja3s`.
    Ja3s,
    /// `ja4`.
    Ja4,
    /// `client`: the client certificate's fields.
    Client,
    /// `client_certificate`: base64 of the client certificate (inside `client`).
    ClientCertificate,
    /// `client_chain`: base64 of each client certificate (inside `client`).
    ClientChain,
}

impl TlsField {
    /// Every field, in the order Suricata writes them.
    pub const ORDER: [TlsField; 17] = [
        TlsField::Subject,
        TlsField::Issuer,
        TlsField::SessionResumed,
        TlsField::Serial,
        TlsField::Fingerprint,
        TlsField::Sni,
        TlsField::Version,
        TlsField::NotBefore,
        TlsField::NotAfter,
        TlsField::Certificate,
        TlsField::Chain,
        TlsField::Ja3,
        TlsField::Ja3s,
        TlsField::Ja4,
        TlsField::Client,
        TlsField::ClientCertificate,
        TlsField::ClientChain,
    ];

    /// The field for a `custom:` list entry.
    pub fn from_name(n: &str) -> Option<Self> {
        Some(match n {
            "subject" => TlsField::Subject,
            "issuer" => TlsField::Issuer,
            "session_resumed" => TlsField::SessionResumed,
            "serial" => TlsField::Serial,
            "fingerprint" => TlsField::Fingerprint,
            "sni" => TlsField::Sni,
            "version" => TlsField::Version,
            "not_before" => TlsField::NotBefore,
            "not_after" => TlsField::NotAfter,
            "certificate" => TlsField::Certificate,
            "chain" => TlsField::Chain,
            "ja3" => TlsField::Ja3,
            "ja3s" => TlsField::Ja3s,
            "ja4" => TlsField::Ja4,
            "client" => TlsField::Client,
            "client_certificate" => TlsField::ClientCertificate,
            "client_chain" => TlsField::ClientChain,
            _ => return None,
        })
    }
}

/// `outputs.eve-log.types.tls` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsLogConfig {
    /// Fields written, from `extended` / `custom` (see [`TlsLogConfig::new`]).
    pub fields: Vec<TlsField>,
    /// `session-resumption`: log resumed sessions without a certificate (Suricata's default
    /// when the key is absent is on).
    pub session_resumption: bool,
}

impl Default for TlsLogConfig {
    fn default() -> Self {
        Self::new(false, false, None)
    }
}

impl TlsLogConfig {
    /// Fields for `extended` (`ja4` adds the JA4 field, as the `ja4: on` option); `custom`,
    /// when given, replaces both.
    pub fn new(extended: bool, ja4: bool, custom: Option<&[TlsField]>) -> Self {
        let fields = match custom {
            Some(c) => TlsField::ORDER
                .into_iter()
                .filter(|f| c.contains(f))
                .collect(),
            None => {
                let mut f = vec![
                    TlsField::Subject,
                    TlsField::Issuer,
                    TlsField::SessionResumed,
                ];
                if extended {
                    f.extend([
                        TlsField::Serial,
                        TlsField::Fingerprint,
                        TlsField::Sni,
                        TlsField::Version,
                        TlsField::NotBefore,
                        TlsField::NotAfter,
                        TlsField::Ja3,
                        TlsField::Ja3s,
                    ]);
                }
                if ja4 {
                    f.push(TlsField::Ja4);
                }
                if extended {
                    f.push(TlsField::Client);
                }
                f
            }
        };
        TlsLogConfig {
            fields,
            session_resumption: true,
        }
    }
}

fn cert_fields(w: &mut dyn JsonOut, c: &CertInfo, f: TlsField) {
    match f {
        TlsField::Subject => w.set_str("subject", &c.subject),
        TlsField::Issuer => w.set_str("issuerdn", &c.issuer),
        TlsField::Serial => w.set_str("serial", &c.serial),
        TlsField::Fingerprint => w.set_str("fingerprint", &c.fingerprint),
        TlsField::NotBefore => w.set_str("notbefore", &format_time(c.not_before)),
        TlsField::NotAfter => w.set_str("notafter", &format_time(c.not_after)),
        _ => {}
    }
}

/// Write the members of the `tls` object (the caller opens `"tls":{`) with `cfg`'s fields.
pub fn write_tls(w: &mut dyn JsonOut, s: &TlsState, cfg: &TlsLogConfig) {
    for &f in &cfg.fields {
        match f {
            TlsField::Subject
            | TlsField::Issuer
            | TlsField::Serial
            | TlsField::Fingerprint
            | TlsField::NotBefore
            | TlsField::NotAfter => {
                if let Some(c) = &s.cert0 {
                    cert_fields(w, c, f);
                }
            }
            TlsField::SessionResumed => {
                if s.resumed && s.cert0.is_none() && s.server_hello.is_some() && !s.is_tls13() {
                    w.set_bool("session_resumed", true);
                }
            }
            TlsField::Sni => {
                if let Some(n) = s.sni() {
                    w.set_bytes("sni", n);
                }
            }
            TlsField::Version => w.set_str("version", &version_string(s.version())),
            TlsField::Certificate => {
                if let Some(c) = s.server_certs.first() {
                    w.set_base64("certificate", c);
                }
            }
            TlsField::Chain => {
                if !s.server_certs.is_empty() {
                    w.open_array("chain");
                    for c in &s.server_certs {
                        w.base64(c);
                    }
                    w.close();
                }
            }
            TlsField::Ja3 | TlsField::Ja3s => {
                let (key, v) = if f == TlsField::Ja3 {
                    ("ja3", &s.ja3)
                } else {
                    ("ja3s", &s.ja3s)
                };
                if let Some((hash, string)) = v {
                    w.open_object(key);
                    w.set_str("hash", hash);
                    w.set_str("string", string);
                    w.close();
                }
            }
            TlsField::Ja4 => {
                if let Some(j) = &s.ja4 {
                    w.set_str("ja4", j);
                }
            }
            TlsField::Client => {
                if let Some(c) = &s.client_cert0 {
                    w.open_object("client");
                    for f in [
                        TlsField::Subject,
                        TlsField::Issuer,
                        TlsField::Serial,
                        TlsField::Fingerprint,
                        TlsField::NotBefore,
                        TlsField::NotAfter,
                    ] {
                        cert_fields(w, c, f);
                    }
                    // `client_certificate` / `client_chain` only add to the `client` object.
                    if cfg.fields.contains(&TlsField::ClientCertificate) {
                        if let Some(c) = s.client_certs.first() {
                            w.set_base64("certificate", c);
                        }
                    }
                    if cfg.fields.contains(&TlsField::ClientChain) && !s.client_certs.is_empty() {
                        w.open_array("chain");
                        for c in &s.client_certs {
                            w.base64(c);
                        }
                        w.close();
                    }
                    w.close();
                }
            }
            TlsField::ClientCertificate | TlsField::ClientChain => {}
        }
    }
}

/// Write the members of `alert.tls` (the caller opens `"tls":{`): the extended fields
/// without JA4, as Suricata 7.
pub fn write_alert(w: &mut dyn JsonOut, s: &TlsState) {
    write_tls(w, s, &TlsLogConfig::new(true, false, None));
}
