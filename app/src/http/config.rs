//! HTTP parser configuration: the keys of Suricata's
//! `app-layer.protocols.http.libhtp.default-config`, with suricata.yaml's defaults.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Parser settings. Field names follow suricata.yaml (`request-body-limit` ...); sizes accept
/// plain byte counts or Suricata size strings (`100kb`, `1mb`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Server personality. Only `IDS` (Suricata's default) is implemented; others are
    /// accepted and treated as `IDS`.
    pub personality: String,
    /// Bytes of request body kept for inspection (`http.request_body`); 0 = unlimited.
    #[serde(deserialize_with = "de_size")]
    pub request_body_limit: u64,
    /// Bytes of response body kept for inspection (`http.response_body`, `file.data`);
    /// 0 = unlimited.
    #[serde(deserialize_with = "de_size")]
    pub response_body_limit: u64,
    /// Request body is inspected once this much is buffered (or the body ends).
    #[serde(deserialize_with = "de_size")]
    pub request_body_minimal_inspect_size: u64,
    /// Request body inspection window.
    #[serde(deserialize_with = "de_size")]
    pub request_body_inspect_window: u64,
    /// Response body is inspected once this much is buffered (or the body ends).
    #[serde(deserialize_with = "de_size")]
    pub response_body_minimal_inspect_size: u64,
    /// Response body inspection window.
    #[serde(deserialize_with = "de_size")]
    pub response_body_inspect_window: u64,
    /// Most Content-Encoding layers decoded (0 disables decompression).
    pub response_body_decompress_layer_limit: u32,
    /// Accepted for compatibility; inline body mode is not implemented.
    pub http_body_inline: String,
    /// Accepted for compatibility; SWF decompression is not implemented.
    pub swf_decompression: Option<Ignored>,
    /// Accepted for compatibility (inspection sizes are used as given).
    pub randomize_inspection_sizes: bool,
    /// Accepted for compatibility.
    pub randomize_inspection_range: u32,
    /// Decode the URI path a second time (raises `double_encoded_uri`).
    pub double_decode_path: bool,
    /// Decode the query string a second time (raises `double_encoded_uri`).
    pub double_decode_query: bool,
    /// Accepted for compatibility; LZMA is not decoded.
    pub lzma_enabled: bool,
    /// Accepted for compatibility.
    #[serde(deserialize_with = "de_size")]
    pub lzma_memlimit: u64,
    /// Decompressed bytes per body after which a body whose ratio exceeds 2048:1 is
    /// flagged `compression_bomb` and decompression stops.
    #[serde(deserialize_with = "de_size")]
    pub compression_bomb_limit: u64,
    /// Accepted for compatibility (work is bounded by size, not time).
    pub decompression_time_limit: u64,
    /// Most live transactions per flow; past it new requests are not tracked.
    pub max_tx: usize,
    /// Most headers in one request or response.
    pub headers_limit: usize,
    /// Longest line (request line, header incl. folding, chunk line) buffered
    /// (libhtp's hard field limit).
    #[serde(deserialize_with = "de_size")]
    pub meta_field_limit: u64,
    /// Include scheme, credentials, host and port in `http.uri` for absolute URIs.
    pub uri_include_all: bool,
    /// Memory for the byte-range reassembly of files fetched in parts
    /// (`app-layer.protocols.http.byterange.memcap`, default 100 MiB).
    #[serde(deserialize_with = "de_size")]
    pub byterange_memcap: u64,
    /// Seconds a file in byte-range reassembly is kept unchanged
    /// (`app-layer.protocols.http.byterange.timeout`, default 60).
    pub byterange_timeout: u64,
    /// What files compute (hashes, magic): set by the engine from the eve-log `files`
    /// options and the rules, not a suricata.yaml `libhtp` key.
    #[serde(skip)]
    pub files: crate::files::FileConfig,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            personality: "IDS".to_string(),
            request_body_limit: 100 * 1024,
            response_body_limit: 100 * 1024,
            request_body_minimal_inspect_size: 32 * 1024,
            request_body_inspect_window: 4 * 1024,
            response_body_minimal_inspect_size: 40 * 1024,
            response_body_inspect_window: 16 * 1024,
            response_body_decompress_layer_limit: 2,
            http_body_inline: "auto".to_string(),
            swf_decompression: None,
            randomize_inspection_sizes: false,
            randomize_inspection_range: 10,
            double_decode_path: false,
            double_decode_query: false,
            lzma_enabled: false,
            lzma_memlimit: 1024 * 1024,
            compression_bomb_limit: 1024 * 1024,
            decompression_time_limit: 100_000,
            max_tx: 512,
            headers_limit: 1024,
            meta_field_limit: 18_000,
            uri_include_all: false,
            byterange_memcap: crate::file_range::DEFAULT_MEMCAP,
            byterange_timeout: crate::file_range::DEFAULT_TIMEOUT,
            files: crate::files::FileConfig::default(),
        }
    }
}

/// A configuration value that is accepted and ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ignored;

impl Serialize for Ignored {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for Ignored {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Ignored)
    }
}

/// Parses a Suricata size string: a number with an optional `b`, `kb`, `mb`, `gb` suffix
/// (case-insensitive, units of 1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("kb").or_else(|| t.strip_suffix("kib")) {
        (n, 1024)
    } else if let Some(n) = t.strip_suffix("mb").or_else(|| t.strip_suffix("mib")) {
        (n, 1024 * 1024)
    } else if let Some(n) = t.strip_suffix("gb").or_else(|| t.strip_suffix("gib")) {
        (n, 1024 * 1024 * 1024)
    } else if let Some(n) = t.strip_suffix('k') {
        (n, 1024)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1024 * 1024)
    } else if let Some(n) = t.strip_suffix('b') {
        (n, 1)
    } else {
        (t.as_str(), 1)
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn de_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        N(u64),
        S(String),
    }
    match Size::deserialize(d)? {
        Size::N(n) => Ok(n),
        Size::S(s) => {
            parse_size(&s).ok_or_else(|| serde::de::Error::custom(format!("invalid size '{s}'")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100kb"), Some(102_400));
        assert_eq!(parse_size("1MB"), Some(1_048_576));
        assert_eq!(parse_size("18k"), Some(18_432));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn defaults_match_suricata_yaml() {
        let c = HttpConfig::default();
        assert_eq!(c.request_body_limit, 102_400);
        assert_eq!(c.response_body_limit, 102_400);
        assert_eq!(c.meta_field_limit, 18_000);
        assert_eq!(c.headers_limit, 1024);
    }
}
