//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Where the EVE schema is: `$SHRIKE_EVE_SCHEMA`, `<repo>/../shared/...`, or `/work/shared/...`.
pub fn schema_path() -> Option<PathBuf> {
    let mut c = Vec::new();
    if let Ok(p) = std::env::var("SHRIKE_EVE_SCHEMA") {
        c.push(PathBuf::from(p));
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    c.push(manifest.join("../../shared/eve-schema/schema.json"));
    c.push(manifest.join("../shared/eve-schema/schema.json"));
    c.push(PathBuf::from("/work/shared/eve-schema/schema.json"));
    c.into_iter().find(|p| p.is_file())
}

/// A validator for the EVE schema, or `None` (with a message) when the schema is absent.
pub fn validator() -> Option<jsonschema::Validator> {
    let Some(p) = schema_path() else {
        eprintln!("SKIP: EVE schema not found (set SHRIKE_EVE_SCHEMA)");
        return None;
    };
    let text = std::fs::read_to_string(&p).expect("read schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("parse schema");
    Some(jsonschema::draft202012::new(&schema).expect("compile schema"))
}

/// Assert that one EVE line parses and validates; returns the value.
pub fn check_line(v: Option<&jsonschema::Validator>, line: &[u8]) -> serde_json::Value {
    let text = std::str::from_utf8(line).expect("utf8");
    let value: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    if let Some(v) = v {
        let errs: Vec<String> = v.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errs.is_empty(), "schema errors {errs:?} in {text}");
    }
    value
}

/// Standard base64 decoding for test data.
pub fn b64decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64"),
        }
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= if c == b'=' { 0 } else { val(c) } << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    out
}
