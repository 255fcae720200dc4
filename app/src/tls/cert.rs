//! X.509 certificate fields as Suricata 7 presents them (subject/issuer strings, serial,
//! fingerprint, validity), decoded with `x509-parser`.

use sha1::{Digest as _, Sha1};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate, X509Error};

use super::TlsEvent;

/// Decoded fields of one certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertInfo {
    /// Subject DN as `C=FR, ST=IDF, CN=name` (x509-parser's RFC 4514-like order, as Suricata).
    pub subject: String,
    /// Issuer DN, same format.
    pub issuer: String,
    /// Serial: raw bytes as colon-separated uppercase hex (`00:97:E6:…`).
    pub serial: String,
    /// SHA-1 of the DER, colon-separated lowercase hex.
    pub fingerprint: String,
    /// notBefore, seconds since the epoch.
    pub not_before: i64,
    /// notAfter, seconds since the epoch.
    pub not_after: i64,
    /// DNS names from subjectAltName.
    pub san_dns: Vec<String>,
}

/// Map an x509-parser error to Suricata's certificate event.
fn event_for(e: &X509Error) -> TlsEvent {
    // Suricata's `x509_parse_error_to_errcode` and `TlsDecodeHSCertificateErrSetEvent`.
    match e {
        X509Error::InvalidVersion => TlsEvent::CertificateInvalidVersion,
        X509Error::InvalidSerial => TlsEvent::CertificateInvalidSerial,
        X509Error::InvalidAlgorithmIdentifier => TlsEvent::CertificateInvalidAlgorithmIdentifier,
        X509Error::InvalidX509Name => TlsEvent::CertificateInvalidX509Name,
        X509Error::InvalidDate => TlsEvent::CertificateInvalidDate,
        X509Error::InvalidExtensions => TlsEvent::CertificateInvalidExtensions,
        X509Error::Der(_) => TlsEvent::CertificateInvalidDer,
        _ => TlsEvent::InvalidCertificate,
    }
}

pub use crate::common::hex::colon_hex;

/// SHA-1 fingerprint of a DER certificate in Suricata's format.
pub fn fingerprint(der: &[u8]) -> String {
    colon_hex(&Sha1::digest(der), false)
}

impl CertInfo {
    /// Decode a DER certificate; on failure returns the matching event.
    pub fn parse(der: &[u8]) -> Result<CertInfo, TlsEvent> {
        let (_, c) = X509Certificate::from_der(der).map_err(|e| match e {
            x509_parser::nom::Err::Error(e) | x509_parser::nom::Err::Failure(e) => event_for(&e),
            x509_parser::nom::Err::Incomplete(_) => TlsEvent::CertificateInvalidLength,
        })?;
        let tbs = &c.tbs_certificate;
        let mut san_dns = Vec::new();
        if let Ok(Some(san)) = tbs.subject_alternative_name() {
            for n in &san.value.general_names {
                if let GeneralName::DNSName(d) = n {
                    if san_dns.len() < 256 {
                        san_dns.push((*d).to_string());
                    }
                }
            }
        }
        Ok(CertInfo {
            subject: tbs.subject.to_string(),
            issuer: tbs.issuer.to_string(),
            serial: colon_hex(tbs.raw_serial(), true),
            fingerprint: fingerprint(der),
            not_before: tbs.validity.not_before.timestamp(),
            not_after: tbs.validity.not_after.timestamp(),
            san_dns,
        })
    }
}

/// Format epoch seconds as `YYYY-MM-DDTHH:MM:SS` (UTC), Suricata's EVE certificate date form.
pub fn format_time(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}
