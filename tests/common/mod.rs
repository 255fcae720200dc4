//! Helpers for the binary-level tests: run shrike, read its EVE output, validate records
//! against Suricata's EVE schema.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn shrike() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shrike"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the repository, when present.
pub fn shared() -> Option<PathBuf> {
    let p = repo().join("..").join("shared");
    p.is_dir().then_some(p)
}

/// A file of `../shared` (e.g. `corpus/pcaps/zeek/x.pcap`), when it is there.
#[allow(dead_code)]
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    shared().map(|s| s.join(rel)).filter(|p| p.exists())
}

/// A fresh, empty temporary directory (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "shrike-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The sorted (sid, pcap_cnt) pairs of shrike's alerts on `pcap` with the rules in `rules`
/// (`-k none --runmode single`, logs under `dir/logs`); a flow-end alert has pcap_cnt 0.
pub fn alert_pairs(pcap: &Path, rules: &str, dir: &TempDir) -> Vec<(u64, u64)> {
    let rf = dir.path().join("t.rules");
    std::fs::write(&rf, rules).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let out = shrike()
        .arg("-r")
        .arg(pcap)
        .arg("-S")
        .arg(&rf)
        .args(["-k", "none", "--runmode", "single", "-l"])
        .arg(&logs)
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    let mut v: Vec<(u64, u64)> = eve_records(&logs)
        .iter()
        .filter(|r| r["event_type"] == "alert")
        .map(|a| {
            (
                a["alert"]["signature_id"].as_u64().unwrap(),
                a["pcap_cnt"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    v.sort_unstable();
    v
}

/// Runs shrike on `pcap` with its default settings and `-k none`, logging into `dir`, and
/// returns the EVE records (the run must succeed).
pub fn run_pcap(pcap: &Path, dir: &Path) -> Vec<serde_json::Value> {
    let out = shrike()
        .arg("-r")
        .arg(pcap)
        .arg("-l")
        .arg(dir)
        .args(["-k", "none"])
        .output()
        .expect("run shrike");
    assert!(out.status.success(), "shrike failed: {}", stderr(&out));
    eve_records(dir)
}

/// Every EVE record in `dir/eve.json` (empty when the file is missing).
pub fn eve_records(dir: &Path) -> Vec<serde_json::Value> {
    let Ok(text) = std::fs::read_to_string(dir.join("eve.json")) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad EVE line {l}: {e}")))
        .collect()
}

fn validator() -> Option<&'static jsonschema::Validator> {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        let path = shared()?.join("eve-schema").join("schema.json");
        let mut schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        suricata7_ike(&mut schema);
        Some(jsonschema::draft202012::new(&schema).expect("EVE schema compiles"))
    })
    .as_ref()
}

/// The schema is Suricata 9's, whose `ike` object lists the chosen transform as an
/// `attributes` array (`{key, value, raw}` items). Suricata 7.0.10, which shrike follows (and
/// suricata-verify checks with `lt-version: 9`), writes each attribute as its own member
/// (`alg_enc`, `alg_enc_raw`, `sa_life_duration` ...), adds the IKEv2 `alg_*` of the
/// responder and `server_proposals`, and writes client `proposals` items the same way. Allow
/// exactly those members (names and value types), and its empty `ikev1.server` object;
/// everything else stays as strict. Also
/// allow SNMP's `error`, which Suricata writes and the schema omits.
fn suricata7_ike(schema: &mut serde_json::Value) {
    let attrs = serde_json::json!({
        "type": "object",
        "patternProperties": {
            "^(alg_(enc|hash|auth|dh|prf)|sa_(group_(type|prime|generator_one|generator_two|curve_a|curve_b|order)|life_type|life_duration|key_length|field_size)|unknown)$": {"type": "string"},
            "^(alg_(enc|hash|auth|dh|prf)|sa_(group_(type|prime|generator_one|generator_two|curve_a|curve_b|order)|life_type|life_duration|key_length|field_size)|unknown)_raw$": {"type": ["string", "integer"]}
        },
        "additionalProperties": false
    });
    let Some(ike) = schema.pointer_mut("/properties/ike") else {
        return;
    };
    ike["patternProperties"] = serde_json::json!({
        "^(alg_(enc|hash|auth|dh|prf|esn)|sa_(group_(type|prime|generator_one|generator_two|curve_a|curve_b|order)|life_type|life_duration|key_length|field_size)|unknown)$": {"type": "string"},
        "^(alg_(enc|hash|auth|dh|prf)|sa_(group_(type|prime|generator_one|generator_two|curve_a|curve_b|order)|life_type|life_duration|key_length|field_size)|unknown)_raw$": {"type": ["string", "integer"]}
    });
    ike["properties"]["server_proposals"] = serde_json::json!({"type": "array", "items": attrs});
    if let Some(items) = ike.pointer_mut("/properties/ikev1/properties/client/properties/proposals")
    {
        items["items"] = attrs;
    }
    // Suricata 7 writes an empty `server` object before the responder has answered.
    if let Some(server) = ike.pointer_mut("/properties/ikev1/properties/server") {
        if let Some(o) = server.as_object_mut() {
            o.remove("minProperties");
        }
    }
    // Suricata's SNMP logger (7.0.10 and later) writes `error` (the PDU's error status) when
    // it is not zero; the schema omits it.
    if let Some(snmp) = schema.pointer_mut("/properties/snmp/properties") {
        snmp["error"] = serde_json::json!({"type": "string"});
    }
    // Suricata 7.0.10's SMTP logger writes `has_ipv6_url`, `has_ipv4_url` and `has_exe_url`
    // with the URLs of a message (zeek `http_connect-with-smtp.pcap`, SMTP inside an HTTP
    // CONNECT tunnel); the schema omits them.
    // Suricata 7.0.10's RDP logger (`rust/src/rdp/log.rs`) writes these of an initial request
    // or response and of the TLS hand-off; the schema lists only the client data.
    if let Some(rdp) = schema.pointer_mut("/properties/rdp/properties") {
        let strings = serde_json::json!({"type": "array", "items": {"type": "string"}});
        rdp["protocol"] = serde_json::json!({"type": "string"});
        rdp["reason"] = serde_json::json!({"type": "string"});
        rdp["error_code"] = serde_json::json!({"type": "integer"});
        rdp["server_supports"] = strings.clone();
        rdp["flags"] = strings.clone();
        rdp["x509_serials"] = strings;
        // The client core data's optional fields (`connection_hint`, `physical_width`, ...)
        // are only partly listed.
        if let Some(c) = rdp.pointer_mut("/client").and_then(|c| c.as_object_mut()) {
            c.remove("additionalProperties");
        }
    }
    if let Some(email) = schema.pointer_mut("/properties/email/properties") {
        for k in ["has_ipv6_url", "has_ipv4_url", "has_exe_url"] {
            email[k] = serde_json::json!({"type": "boolean"});
        }
    }
}

/// Assert every record validates against ../shared/eve-schema/schema.json. Returns how many
/// were checked (0 when the schema is not present).
pub fn assert_valid_eve(records: &[serde_json::Value]) -> usize {
    let Some(v) = validator() else {
        eprintln!("EVE schema not present: records not validated");
        return 0;
    };
    for r in records {
        if let Err(e) = v.validate(r) {
            panic!("EVE record does not validate: {e}\nrecord: {r}");
        }
    }
    records.len()
}

/// Count records by `event_type`.
pub fn count_type(records: &[serde_json::Value], t: &str) -> usize {
    records.iter().filter(|r| r["event_type"] == t).count()
}

/// The `N packets` of the summary line.
pub fn summary_packets(err: &str) -> Option<u64> {
    let line = err
        .lines()
        .find(|l| l.starts_with("shrike: ") && l.contains(" packets, "))?;
    line.strip_prefix("shrike: ")?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// Value of `name=V` in the `-v` counters line.
pub fn counter(err: &str, name: &str) -> Option<u64> {
    let line = err.lines().find(|l| l.starts_with("shrike: counters:"))?;
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.parse().ok())
}
