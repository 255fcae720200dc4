//! Options of the app-layer EVE records, as given under Suricata's
//! `outputs.eve-log.types: - dns: {...}` and `- tls: {...}` (the sensor config carries them
//! under `detect.app-log`), turned into [`DnsLogConfig`] / [`TlsLogConfig`].

use serde::{Deserialize, Serialize};

use super::dns::consts::rrtype_from_name;
use super::dns::eve::DnsLogConfig;
use super::tls::eve::{TlsField, TlsLogConfig};

/// EVE `dns` record options (Suricata 7, version 2 logging).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DnsEveOptions {
    /// Log query records (`requests`).
    pub requests: bool,
    /// Log answer records (`responses`).
    pub responses: bool,
    /// `formats`: `detailed` and/or `grouped`; absent: both.
    pub formats: Option<Vec<String>>,
    /// `types`: record types to log (by query type); absent: all.
    pub types: Option<Vec<String>>,
}

impl Default for DnsEveOptions {
    fn default() -> Self {
        DnsEveOptions {
            requests: true,
            responses: true,
            formats: None,
            types: None,
        }
    }
}

/// EVE `tls` record options.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct TlsEveOptions {
    /// `extended`: log the extended field set.
    pub extended: bool,
    /// `ja4`: add the JA4 fingerprint.
    pub ja4: bool,
    /// `custom`: the exact field list (replaces `extended`); unknown names are ignored.
    pub custom: Option<Vec<String>>,
    /// `session-resumption`: also log resumed sessions (no certificate seen).
    pub session_resumption: bool,
}

impl Default for TlsEveOptions {
    fn default() -> Self {
        // shrike's built-in default matches the suricata.yaml shipped with Suricata 7
        // (`- tls: extended: yes`).
        TlsEveOptions {
            extended: true,
            ja4: false,
            custom: None,
            session_resumption: true,
        }
    }
}

/// EVE `smtp` record options (Suricata's eve-log `- smtp:`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SmtpEveOptions {
    /// `extended`: accepted; Suricata 7 resets it while reading `md5`, so it has no effect.
    pub extended: bool,
    /// `custom`: extra `email` fields (`received`, `x-mailer`, ...); unknown names ignored.
    pub custom: Option<Vec<String>>,
    /// `md5`: `subject` and/or `body` (the body needs `mime.body-md5`).
    pub md5: Option<Vec<String>>,
}

/// EVE `fileinfo` options (`- files: {force-magic, force-hash}`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct FilesEveOptions {
    /// `force-magic`: the file type of every file.
    pub force_magic: bool,
    /// `force-hash`: `md5`, `sha1`, `sha256` of every file.
    pub force_hash: Vec<String>,
}

/// The app-layer EVE options of the sensor.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct AppLogConfig {
    /// `dns` records.
    pub dns: DnsEveOptions,
    /// `tls` records.
    pub tls: TlsEveOptions,
    /// `mqtt` records (`passwords`).
    pub mqtt: crate::mqtt::eve::MqttLogConfig,
    /// `pgsql` records (`passwords`).
    pub pgsql: crate::pgsql::PgsqlLogConfig,
    /// `smtp` records.
    pub smtp: SmtpEveOptions,
    /// `fileinfo` records.
    pub files: FilesEveOptions,
    /// `dhcp` records.
    pub dhcp: DhcpEveOptions,
    /// `ike` records (same options: `extended`).
    pub ike: DhcpEveOptions,
    /// `quic` records (`ja4`).
    pub quic: QuicEveOptions,
    /// `http` records (`dump-all-headers`).
    pub http: HttpEveConfig,
}

/// `http` record options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct HttpEveConfig {
    /// Log every header of the request, the response or both as `request_headers` /
    /// `response_headers` (Suricata's `dump-all-headers: request|response|both`; empty:
    /// none).
    pub dump_all_headers: String,
    /// `extended`: method, protocol, status, referer, redirect and length (Suricata's
    /// default is off; unset here: on).
    pub extended: Option<bool>,
    /// `custom`: headers logged in the header arrays (Suricata's `http_fields` names).
    pub custom: Vec<String>,
}

/// `quic` record options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct QuicEveOptions {
    /// Log the client's JA4 (Suricata's `ja4`, default off).
    pub ja4: bool,
}

/// `dhcp` record options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct DhcpEveOptions {
    /// Log every message with every field (Suricata's `extended`, default off: acknowledgements
    /// only, basic fields).
    pub extended: bool,
}

impl AppLogConfig {
    /// The HTTP logger settings.
    pub fn http_log(&self) -> crate::http::EveHttpOptions {
        let d = self.http.dump_all_headers.trim().to_ascii_lowercase();
        crate::http::EveHttpOptions {
            extended: self.http.extended.unwrap_or(true),
            request_headers: d == "request" || d == "both",
            response_headers: d == "response" || d == "both",
            custom: crate::http::custom_fields(self.http.custom.iter().map(|s| s.trim())),
        }
    }

    /// The DNS logger settings; unknown record type names are left out (Suricata warns and
    /// ignores them).
    pub fn dns_log(&self) -> DnsLogConfig {
        let o = &self.dns;
        let mut c = DnsLogConfig {
            requests: o.requests,
            responses: o.responses,
            ..DnsLogConfig::default()
        };
        if let Some(f) = &o.formats {
            c.detailed = f.iter().any(|x| x.trim().eq_ignore_ascii_case("detailed"));
            c.grouped = f.iter().any(|x| x.trim().eq_ignore_ascii_case("grouped"));
        }
        if let Some(t) = &o.types {
            c.types = Some(
                t.iter()
                    .filter_map(|n| rrtype_from_name(n.trim()))
                    .collect(),
            );
        }
        c
    }

    /// What tracked files compute for the `fileinfo` options (unknown hash names are
    /// left out, as Suricata warns and ignores them).
    pub fn file_config(&self) -> crate::files::FileConfig {
        let mut c = crate::files::FileConfig {
            magic: self.files.force_magic,
            ..Default::default()
        };
        c.force_hash(self.files.force_hash.iter().map(String::as_str));
        c
    }

    /// The DHCP logger settings.
    pub fn dhcp_log(&self) -> crate::dhcp::DhcpLogConfig {
        crate::dhcp::DhcpLogConfig {
            extended: self.dhcp.extended,
        }
    }

    /// The SMTP logger settings (`custom` fields, MD5s).
    pub fn smtp_log(&self) -> crate::smtp::SmtpLogConfig {
        crate::smtp::SmtpLogConfig::new(
            self.smtp.custom.as_deref().unwrap_or_default(),
            self.smtp.md5.as_deref().unwrap_or_default(),
        )
    }

    /// The TLS logger settings.
    pub fn tls_log(&self) -> TlsLogConfig {
        let o = &self.tls;
        let custom: Option<Vec<TlsField>> = o.custom.as_ref().map(|names| {
            names
                .iter()
                .filter_map(|n| TlsField::from_name(n.trim()))
                .collect()
        });
        let mut c = TlsLogConfig::new(o.extended, o.ja4, custom.as_deref());
        c.session_resumption = o.session_resumption;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_log_everything_extended() {
        let c = AppLogConfig::default();
        assert_eq!(c.dns_log(), DnsLogConfig::default());
        assert_eq!(c.tls_log(), TlsLogConfig::new(true, false, None));
    }

    #[test]
    fn dns_options() {
        let mut c = AppLogConfig::default();
        c.dns.responses = false;
        c.dns.formats = Some(vec!["grouped".into()]);
        c.dns.types = Some(vec!["A".into(), "mx".into()]);
        let d = c.dns_log();
        assert!(d.requests && !d.responses && !d.detailed && d.grouped);
        assert_eq!(d.types, Some(vec![1, 15]));
        c.dns.types = Some(vec!["nosuch".into(), "aaaa".into()]);
        assert_eq!(c.dns_log().types, Some(vec![28]));
    }

    #[test]
    fn tls_custom_ignores_unknown_names() {
        let mut c = AppLogConfig::default();
        c.tls.custom = Some(vec![
            "sni".into(),
            "subjectaltname".into(),
            "client".into(),
            "client_chain".into(),
        ]);
        let t = c.tls_log();
        assert_eq!(
            t.fields,
            vec![TlsField::Sni, TlsField::Client, TlsField::ClientChain]
        );
    }
}
