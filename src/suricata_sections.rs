//! Translation of the Suricata config sections owned by the crates (detect, output, capture)
//! into shrike's tree. Each function reads Suricata's keys, writes the shrike keys it can honour
//! and lists in `ignored` what it cannot.

use serde_json::{json, Map, Value};

use crate::suricata_yaml::{parse_size, truthy};

/// Translate Suricata's detect/output/capture sections into the shrike tree `out`.
pub fn translate_sections(
    tree: &Value,
    out: &mut Value,
    ignored: &mut Vec<String>,
) -> Result<(), String> {
    outputs(tree, out, ignored)?;
    engine(tree, out);
    stream_defrag(tree, out);
    flow(tree, out, ignored);
    decoder(tree, out);
    af_packet(tree, out, ignored);
    dpdk(tree, out, ignored);
    app_layer(tree, out, ignored);
    threading(tree, out, ignored)?;
    Ok(())
}

/// Suricata's CPU list (`BuildCpusetWithCallback`): items `N`, `N-M` or `all` (every CPU:
/// `None`, shrike's default placement). A malformed item stops the start, as in Suricata.
fn cpu_set(name: &str, v: &Value) -> Result<Option<Vec<usize>>, String> {
    let items: Vec<String> = match v {
        Value::Array(a) => a.iter().filter_map(string).collect(),
        v => string(v).into_iter().collect(),
    };
    let mut cpus = Vec::new();
    for item in items {
        let item = item.trim();
        if item == "all" {
            return Ok(None);
        }
        let bad = |why: &str| format!("{name}: invalid cpu range ({why}): \"{item}\"");
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad("start invalid"))?;
                let b: usize = b.trim().parse().map_err(|_| bad("end invalid"))?;
                if a > b {
                    return Err(bad("bad order"));
                }
                (a, b)
            }
            None => {
                let a: usize = item.parse().map_err(|_| bad("not an integer"))?;
                (a, a)
            }
        };
        if b >= 4096 {
            return Err(bad("beyond 4095"));
        }
        for c in a..=b {
            if !cpus.contains(&c) {
                cpus.push(c);
            }
        }
    }
    Ok(Some(cpus))
}

/// `threading:` with `set-cpu-affinity: yes`: `worker-cpu-set` (or its old name
/// `detect-cpu-set`) pins the workers (`workers.cpus`), `receive-cpu-set` the readers
/// (`workers.receive-cpus`). The other sets and the sets' `mode`, `prio` and `threads` are
/// listed as not used.
fn threading(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) -> Result<(), String> {
    let Some(t) = get(tree, "threading").and_then(Value::as_object) else {
        return Ok(());
    };
    for k in t.keys() {
        if !matches!(k.as_str(), "set-cpu-affinity" | "cpu-affinity") {
            ignored.push(format!("threading.{k}"));
        }
    }
    if !t.get("set-cpu-affinity").is_some_and(truthy) {
        return Ok(());
    }
    let Some(Value::Array(sets)) = t.get("cpu-affinity") else {
        return Ok(());
    };
    for set in sets {
        let Some((name, body)) = set.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        let dst = match name.as_str() {
            "worker-cpu-set" | "detect-cpu-set" => "cpus",
            "receive-cpu-set" => "receive-cpus",
            // Suricata skips these old names.
            "decode-cpu-set" | "stream-cpu-set" | "reject-cpu-set" | "output-cpu-set" => continue,
            other => {
                ignored.push(format!("threading.cpu-affinity.{other}"));
                continue;
            }
        };
        let Some(body) = body.as_object() else {
            continue;
        };
        for k in body.keys().filter(|k| k.as_str() != "cpu") {
            ignored.push(format!("threading.cpu-affinity.{name}.{k}"));
        }
        if let Some(cpu) = body.get("cpu") {
            let what = format!("threading.cpu-affinity.{name}.cpu");
            if let Some(list) = cpu_set(&what, cpu)? {
                out["workers"][dst] = json!(list);
            }
        }
    }
    Ok(())
}

/// `app-layer.protocols.http.libhtp.default-config` keys the HTTP parser knows go to
/// `detect.app-layer.http`; the others (and per-server `server-config`) are listed.
fn app_layer(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) {
    // SSH: `hassh` (the switch is process-wide; a rule with a hassh keyword turns it on too).
    if let Some(v) = get(tree, "app-layer.protocols.ssh.hassh") {
        out["detect"]["app-layer"]["ssh"]["hassh"] = json!(truthy(v));
    }
    // TLS: `ja3-fingerprints` / `ja4-fingerprints` (yes, no, auto; process-wide switches).
    for k in ["ja3-fingerprints", "ja4-fingerprints"] {
        if let Some(v) = get(tree, &format!("app-layer.protocols.tls.{k}")) {
            let s = match v {
                Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out["detect"]["app-layer"]["tls"][k] = json!(s);
        }
    }
    if let Some(v) = get(tree, "app-layer.protocols.http2.enabled") {
        out["detect"]["app-layer"]["http2"]["enabled"] = json!(truthy(v));
    }
    for k in ["max-streams", "max-table-size", "max-reassembly-size"] {
        let n = get(tree, &format!("app-layer.protocols.http2.{k}")).and_then(|v| match v {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        });
        if let Some(n) = n {
            out["detect"]["app-layer"]["http2"][k] = json!(n);
        }
    }
    // The HTTP byte-range reassembly (`byterange.memcap` a size, `byterange.timeout` seconds).
    if let Some(n) = get(tree, "app-layer.protocols.http.byterange.memcap").and_then(parse_size) {
        out["detect"]["app-layer"]["http"]["byterange-memcap"] = json!(n);
    }
    if let Some(n) = get(tree, "app-layer.protocols.http.byterange.timeout").and_then(|v| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }) {
        out["detect"]["app-layer"]["http"]["byterange-timeout"] = json!(n);
    }
    const BASE: &str = "app-layer.protocols.http.libhtp";
    let known =
        serde_json::to_value(shrike_app::http::HttpConfig::default()).unwrap_or(Value::Null);
    // Suricata's compiled-in body limits (`HTP_CONFIG_DEFAULT_*_BODY_LIMIT`, 4 KiB) hold
    // when its configuration does not set them (the stock suricata.yaml sets 100 KiB, as
    // shrike's own defaults).
    for k in ["request-body-limit", "response-body-limit"] {
        if known.get(k).is_some() {
            out["detect"]["app-layer"]["http"][k] = json!(4096);
        }
    }
    if let Some(Value::Object(m)) = get(tree, &format!("{BASE}.default-config")) {
        for (k, v) in m {
            if known.get(k).is_some() {
                out["detect"]["app-layer"]["http"][k] = v.clone();
            } else {
                ignored.push(format!("{BASE}.default-config.{k}"));
            }
        }
    }
    if get(tree, &format!("{BASE}.server-config")).is_some() {
        ignored.push(format!("{BASE}.server-config"));
    }
    // `app-layer.protocols.<name>[.tcp|.udp].detection-ports: {dp, sp}`.
    if let Some(Value::Object(m)) = get(tree, "app-layer.protocols") {
        for (name, node) in m {
            let spots = [
                (name.clone(), node.get("detection-ports")),
                (
                    format!("{name}.tcp"),
                    node.get("tcp").and_then(|t| t.get("detection-ports")),
                ),
                (
                    format!("{name}.udp"),
                    node.get("udp").and_then(|t| t.get("detection-ports")),
                ),
            ];
            for (key, dp) in spots {
                let Some(dp) = dp.filter(|v| v.is_object()) else {
                    continue;
                };
                let port = |k: &str| match dp.get(k)? {
                    Value::Array(l) => {
                        Some(l.iter().filter_map(string).collect::<Vec<_>>().join(","))
                    }
                    v => string(v),
                };
                out["detect"]["app-layer"]["detection-ports"][key] =
                    json!({"dp": port("dp"), "sp": port("sp")});
            }
        }
    }
    // `app-layer.protocols.<name>.enabled: no | detection-only`.
    if let Some(Value::Object(m)) = get(tree, "app-layer.protocols") {
        for (name, node) in m {
            let mode = match node.get("enabled") {
                Some(Value::String(s)) if s == "detection-only" => "detection-only",
                Some(v) if !v.is_null() && !truthy(v) => "no",
                _ => continue,
            };
            out["detect"]["app-layer"]["enabled"][name] = Value::String(mode.into());
        }
    }
    mqtt_settings(tree, out);
    pgsql_settings(tree, out);
    dnp3_settings(tree, out);
    modbus_settings(tree, out);
    if let Some(v) = get(tree, "app-layer.protocols.nfs.max-tx").and_then(string) {
        match v.trim().parse::<u64>() {
            Ok(n) => out["detect"]["app-layer"]["nfs"]["max-tx"] = json!(n),
            Err(_) => eprintln!("shrike: warning: invalid value for nfs.max-tx"),
        }
    }
    // Suricata reads it as a plain integer (`parse::<usize>`), for TCP and UDP alike.
    if let Some(v) = get(tree, "app-layer.protocols.dcerpc.max-tx").and_then(string) {
        match v.trim().parse::<u64>() {
            Ok(n) => out["detect"]["app-layer"]["dcerpc"]["max-tx"] = json!(n),
            Err(_) => eprintln!("shrike: warning: invalid value for dcerpc.max-tx"),
        }
    }
    smtp(tree, out, ignored);
    const FTP: &str = "app-layer.protocols.ftp";
    for k in ["max-tx", "max-line-length"] {
        if let Some(n) = get(tree, &format!("{FTP}.{k}")).and_then(parse_size) {
            out["detect"]["app-layer"]["ftp"][k] = json!(n.min(u64::from(u32::MAX)));
        }
    }
    if get(tree, &format!("{FTP}.memcap")).is_some() {
        ignored.push(format!("{FTP}.memcap"));
    }
    const SMB: &str = "app-layer.protocols.smb";
    for k in [
        "max-read-size",
        "max-write-size",
        "max-read-queue-size",
        "max-read-queue-cnt",
        "max-write-queue-size",
        "max-write-queue-cnt",
        "max-tx",
    ] {
        if let Some(n) = get(tree, &format!("{SMB}.{k}")).and_then(parse_size) {
            out["detect"]["app-layer"]["smb"][k] = json!(n.min(u64::from(u32::MAX)));
        }
    }
    if let Some(n) = get(tree, &format!("{SMB}.stream-depth")).and_then(parse_size) {
        out["detect"]["app-layer"]["smb"]["stream-depth"] = json!(n);
    }
}

/// `app-layer.protocols.smtp`: the MIME decoder's keys and `max-tx` go to
/// `detect.app-layer.smtp`. As in Suricata, URLs are extracted only when a `mime` section
/// exists (with `http` as the default scheme list).
fn smtp(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) {
    const BASE: &str = "app-layer.protocols.smtp";
    let dst = &mut out["detect"]["app-layer"]["smtp"];
    match get(tree, &format!("{BASE}.mime")) {
        Some(Value::Object(m)) => {
            for (k, v) in m {
                match k.as_str() {
                    "decode-mime"
                    | "decode-base64"
                    | "decode-quoted-printable"
                    | "extract-urls"
                    | "body-md5"
                    | "log-url-scheme" => dst[k] = Value::Bool(truthy(v)),
                    "header-value-depth" => {
                        if let Some(n) = parse_size(v) {
                            dst[k] = json!(n.min(u64::from(u32::MAX)));
                        }
                    }
                    "extract-urls-schemes" => {
                        let list: Vec<String> = match v {
                            Value::Array(a) => a.iter().filter_map(string).collect(),
                            v => string(v).into_iter().collect(),
                        };
                        dst[k] = json!(list);
                    }
                    other => ignored.push(format!("{BASE}.mime.{other}")),
                }
            }
        }
        _ => {
            if get(tree, BASE).is_some() {
                dst["extract-urls-schemes"] = json!([]);
            }
        }
    }
    if let Some(n) = get(tree, &format!("{BASE}.max-tx")).and_then(parse_size) {
        out["detect"]["app-layer"]["smtp"]["max-tx"] = json!(n);
    }
    if get(tree, &format!("{BASE}.raw-extraction")).is_some_and(truthy) {
        ignored.push(format!("{BASE}.raw-extraction"));
    }
}

/// `app-layer.protocols.pgsql.enabled` (off unless set: Suricata 7's config has it off) and
/// `max-tx`.
fn pgsql_settings(tree: &Value, out: &mut Value) {
    const BASE: &str = "app-layer.protocols.pgsql";
    if let Some(v) = get(tree, &format!("{BASE}.enabled")) {
        // `detection-only` detects without parsing in Suricata; shrike parses then too.
        let on = truthy(v) || v.as_str() == Some("detection-only");
        out["detect"]["app-layer"]["pgsql"]["enabled"] = Value::Bool(on);
    }
    if let Some(v) = get(tree, &format!("{BASE}.max-tx")).and_then(string) {
        if let Ok(n) = v.trim().parse::<u32>() {
            out["detect"]["app-layer"]["pgsql"]["max-tx"] = json!(n);
        }
    }
    if let Some(n) = get(tree, &format!("{BASE}.stream-depth")).and_then(parse_size) {
        out["detect"]["app-layer"]["pgsql"]["stream-depth"] = json!(n);
    }
}

/// `app-layer.protocols.dnp3`: `enabled` (off unless set, as in Suricata 7), `max-points`,
/// `max-objects` (positive values only) and `max-tx`.
fn dnp3_settings(tree: &Value, out: &mut Value) {
    const BASE: &str = "app-layer.protocols.dnp3";
    if let Some(v) = get(tree, &format!("{BASE}.enabled")) {
        let on = truthy(v) || v.as_str() == Some("detection-only");
        out["detect"]["app-layer"]["dnp3"]["enabled"] = Value::Bool(on);
    }
    for key in ["max-points", "max-objects", "max-tx"] {
        if let Some(v) = get(tree, &format!("{BASE}.{key}")).and_then(string) {
            match v.trim().parse::<u64>() {
                Ok(n) if n > 0 || key == "max-tx" => {
                    out["detect"]["app-layer"]["dnp3"][key] = json!(n)
                }
                _ => eprintln!("shrike: warning: invalid value for dnp3.{key}"),
            }
        }
    }
}

/// `app-layer.protocols.modbus`: `enabled` (off unless set, as in Suricata 7),
/// `request-flood` (open transactions before `flooded`, 0: no limit) and `stream-depth`.
fn modbus_settings(tree: &Value, out: &mut Value) {
    const BASE: &str = "app-layer.protocols.modbus";
    if let Some(v) = get(tree, &format!("{BASE}.enabled")) {
        let on = truthy(v) || v.as_str() == Some("detection-only");
        out["detect"]["app-layer"]["modbus"]["enabled"] = Value::Bool(on);
    }
    if let Some(v) = get(tree, &format!("{BASE}.request-flood")).and_then(string) {
        match v.trim().parse::<u64>() {
            Ok(n) => out["detect"]["app-layer"]["modbus"]["request-flood"] = json!(n),
            Err(_) => eprintln!("shrike: warning: invalid value for modbus.request-flood"),
        }
    }
    if let Some(n) = get(tree, &format!("{BASE}.stream-depth")).and_then(parse_size) {
        out["detect"]["app-layer"]["modbus"]["stream-depth"] = json!(n);
    }
}

/// `app-layer.protocols.mqtt.max-msg-length` (a size, at most 4 GiB - 1) and `max-tx`;
/// invalid values keep the defaults, as Suricata does after its error message.
fn mqtt_settings(tree: &Value, out: &mut Value) {
    const BASE: &str = "app-layer.protocols.mqtt";
    if let Some(v) = get(tree, &format!("{BASE}.enabled")) {
        let on = truthy(v) || v.as_str() == Some("detection-only");
        out["detect"]["app-layer"]["mqtt"]["enabled"] = Value::Bool(on);
    }
    if let Some(v) = get(tree, &format!("{BASE}.max-msg-length")).and_then(parse_size) {
        if let Ok(v) = u32::try_from(v) {
            out["detect"]["app-layer"]["mqtt"]["max-msg-length"] = json!(v);
        } else {
            eprintln!("shrike: warning: invalid value for mqtt max-msg-length");
        }
    }
    for key in [
        "max-tx",
        "subscribe-topic-match-limit",
        "unsubscribe-topic-match-limit",
    ] {
        if let Some(v) = get(tree, &format!("{BASE}.{key}")).and_then(string) {
            match v.trim().parse::<u32>() {
                Ok(n) => out["detect"]["app-layer"]["mqtt"][key] = json!(n),
                Err(_) => eprintln!("shrike: warning: invalid value for mqtt.{key}"),
            }
        }
    }
}

fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = cur.get(seg)?;
    }
    (!cur.is_null()).then_some(cur)
}

fn string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `outputs:` is a list of one-key maps (`- eve-log: {...}`, `- fast: {...}`, `- stats: {...}`).
fn outputs(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) -> Result<(), String> {
    let Some(Value::Array(list)) = get(tree, "outputs") else {
        return Ok(());
    };
    let mut seen_eve = false;
    for item in list {
        let Some((name, body)) = item.as_object().and_then(|m| m.iter().next()) else {
            continue;
        };
        let enabled = body.get("enabled").map(truthy).unwrap_or(true);
        match name.as_str() {
            "eve-log" if !seen_eve => {
                seen_eve = true;
                eve(body, enabled, out, ignored)?;
            }
            "fast" => {
                out["output"]["fast"]["enabled"] = Value::Bool(enabled);
                if let Some(f) = body.get("filename").and_then(string) {
                    out["output"]["fast"]["filename"] = Value::String(f);
                }
                if let Some(a) = body.get("append") {
                    out["output"]["fast"]["append"] = Value::Bool(truthy(a));
                }
            }
            "stats" => {
                let s = &mut out["output"]["stats"];
                s["enabled"] = Value::Bool(enabled);
                if let Some(f) = body.get("filename").and_then(string) {
                    s["filename"] = Value::String(f);
                }
                for (k, dst) in [
                    ("append", "append"),
                    ("totals", "totals"),
                    ("threads", "threads"),
                    ("null-values", "null-values"),
                ] {
                    if let Some(v) = body.get(k) {
                        s[dst] = Value::Bool(truthy(v));
                    }
                }
            }
            "file-store" => {
                let v2 = body
                    .get("version")
                    .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
                    == Some(2);
                if !v2 {
                    if enabled {
                        ignored.push("outputs.file-store (version 1)".into());
                    }
                    continue;
                }
                let s = &mut out["output"]["file-store"];
                s["enabled"] = Value::Bool(enabled);
                if let Some(d) = body.get("dir").and_then(string) {
                    s["dir"] = Value::String(d);
                }
                if let Some(v) = body.get("force-filestore") {
                    s["force-filestore"] = Value::Bool(truthy(v));
                }
                // `force-hash` there adds hashes to every file, as the eve `files` option.
                if let Some(Value::Array(h)) = body.get("force-hash") {
                    let list = &mut out["detect"]["app-log"]["files"]["force-hash"];
                    if !list.is_array() {
                        *list = Value::Array(Vec::new());
                    }
                    if let Some(a) = list.as_array_mut() {
                        a.extend(h.iter().filter_map(string).map(Value::String));
                    }
                }
                if let Some(n) = body.get("stream-depth").and_then(parse_size) {
                    out["output"]["file-store"]["stream-depth"] = json!(n);
                }
                if let Some(v) = body.get("write-fileinfo") {
                    out["output"]["file-store"]["write-fileinfo"] = Value::Bool(truthy(v));
                }
                if let Some(n) = body
                    .get("max-open-files")
                    .and_then(string)
                    .and_then(|v| v.trim().parse::<u32>().ok())
                {
                    out["output"]["file-store"]["max-open-files"] = json!(n);
                }
                for k in ["force-magic"] {
                    if enabled && body.get(k).is_some() {
                        ignored.push(format!("outputs.file-store.{k}"));
                    }
                }
            }
            other if enabled => ignored.push(format!("outputs.{other}")),
            _ => {}
        }
    }
    Ok(())
}

fn eve(
    body: &Value,
    enabled: bool,
    out: &mut Value,
    ignored: &mut Vec<String>,
) -> Result<(), String> {
    eve_alert_options(body, out);
    // `community-id: yes` (+ `community-id-seed`, 0..=65535; Suricata stops on a bad seed).
    if let Some(v) = body.get("community-id").filter(|v| !v.is_null()) {
        out["output"]["eve"]["community-id"] = Value::Bool(truthy(v));
    }
    if let Some(v) = body.get("community-id-seed").filter(|v| !v.is_null()) {
        let seed = string(v)
            .and_then(|s| s.trim().parse::<u16>().ok())
            .ok_or_else(|| {
                format!(
                    "outputs.eve-log.community-id-seed: `{}` is not a number in 0..=65535",
                    string(v).unwrap_or_default()
                )
            })?;
        out["output"]["eve"]["community-id-seed"] = json!(seed);
    }
    // The eve-log's own `sensor-name` (deprecated in Suricata, still honoured).
    if let Some(n) = body.get("sensor-name").and_then(string) {
        out["output"]["eve"]["sensor-name"] = Value::String(n);
    }
    // `ethernet: yes`: packet-based records carry the `ether` object.
    if let Some(v) = body.get("ethernet") {
        out["detect"]["engine"]["alert"]["ethernet"] = Value::Bool(truthy(v));
    }
    let e = &mut out["output"]["eve"];
    e["enabled"] = Value::Bool(enabled);
    if let Some(f) = body.get("filename").and_then(string) {
        e["filename"] = Value::String(f);
    }
    match body.get("filetype").and_then(string).as_deref() {
        None | Some("regular") | Some("file") => {}
        Some(t @ ("unix_dgram" | "unix_stream" | "redis")) => e["filetype"] = json!(t),
        Some(other) => ignored.push(format!("outputs.eve-log.filetype={other}")),
    }
    if let Some(v) = body.get("threaded") {
        if truthy(v) {
            e["layout"] = json!("per-worker");
        }
    }
    if let Some(v) = body.get("metadata").filter(|v| !v.is_null()) {
        e["metadata"] = Value::Bool(truthy(v));
    }
    if let Some(size) = body.get("buffer-size").and_then(parse_size) {
        if size > 0 {
            e["buffer-size"] = json!(size);
        }
    }
    if let Some(r) = body.get("redis").and_then(Value::as_object) {
        let mut m = Map::new();
        if let Some(s) = r.get("server").and_then(string) {
            m.insert("server".into(), Value::String(s));
        }
        if let Some(p) = r.get("port").and_then(parse_size) {
            m.insert("port".into(), json!(p));
        }
        if let Some(s) = r.get("mode").and_then(string) {
            m.insert("mode".into(), Value::String(s));
        }
        if let Some(s) = r.get("key").and_then(string) {
            m.insert("key".into(), Value::String(s));
        }
        e["redis"] = Value::Object(m);
    }
    Ok(())
}

/// `types: - alert: {...}` options of an eve-log go to the engine's alert output settings.
fn eve_alert_options(body: &Value, out: &mut Value) {
    // `types:` is a list of names or one-key maps; the alert options go to the engine.
    if let Some(Value::Array(types)) = body.get("types") {
        // The record types themselves (`- alert`, `- dns: {...}`): only those are written;
        // one whose options say `enabled: no` is not (Suricata skips it).
        let names: Vec<Value> = types
            .iter()
            .filter_map(|t| match t {
                Value::String(n) => Some(Value::String(n.clone())),
                Value::Object(m) => m
                    .iter()
                    .next()
                    .filter(|(_, o)| o.get("enabled").filter(|v| !v.is_null()).is_none_or(truthy))
                    .map(|(k, _)| Value::String(k.clone())),
                _ => None,
            })
            .collect();
        out["output"]["eve"]["types"] = Value::Array(names);
        for t in types {
            if t.as_str() == Some("http") {
                // A bare `- http` logs Suricata's basic field set (no `extended`).
                out["detect"]["app-log"]["http"]["extended"] = Value::Bool(false);
                continue;
            }
            if t.as_str() == Some("tls") {
                // A bare `- tls` logs Suricata's basic field set.
                app_log_options("tls", &Value::Null, out);
                continue;
            }
            let Some((name, opts)) = t.as_object().and_then(|m| m.iter().next()) else {
                continue;
            };
            if name == "dns" || name == "tls" || name == "dhcp" || name == "ike" || name == "quic" {
                app_log_options(name, opts, out);
                continue;
            }
            if name == "pgsql" {
                if let Some(v) = opts.get("passwords").filter(|v| !v.is_null()) {
                    out["detect"]["app-log"]["pgsql"]["passwords"] = Value::Bool(truthy(v));
                }
                continue;
            }
            if name == "mqtt" {
                if let Some(v) = opts.get("passwords").filter(|v| !v.is_null()) {
                    out["detect"]["app-log"]["mqtt"]["passwords"] = Value::Bool(truthy(v));
                }
                if let Some(v) = opts.get("string-log-limit").and_then(parse_size) {
                    if let Ok(v) = u32::try_from(v) {
                        out["detect"]["app-log"]["mqtt"]["string-log-limit"] = json!(v);
                    }
                }
                continue;
            }
            if name == "smtp" {
                smtp_log_options(opts, out);
                continue;
            }
            if name == "http" {
                if let Some(v) = opts.get("dump-all-headers").and_then(string) {
                    out["detect"]["app-log"]["http"]["dump-all-headers"] = Value::String(v);
                }
                // Suricata logs the extended fields only with `extended: yes`.
                let ext = opts.get("extended").is_some_and(truthy);
                out["detect"]["app-log"]["http"]["extended"] = Value::Bool(ext);
                if let Some(Value::Array(c)) = opts.get("custom") {
                    let list: Vec<Value> = c.iter().filter_map(string).map(Value::String).collect();
                    out["detect"]["app-log"]["http"]["custom"] = Value::Array(list);
                }
                continue;
            }
            if name == "anomaly" {
                anomaly_options(opts, out);
                continue;
            }
            if name == "files" {
                files_options(opts, out);
                continue;
            }
            if name != "alert" {
                continue;
            }
            let a = &mut out["detect"]["engine"]["alert"];
            for key in [
                "payload",
                "payload-printable",
                "packet",
                "metadata",
                "tagged-packets",
            ] {
                if let Some(v) = opts.get(key) {
                    a[key] = Value::Bool(truthy(v));
                }
            }
            if let Some(v) = opts.get("payload-buffer-size") {
                a["payload-buffer-size"] = v.clone();
            }
        }
    }
}

/// `- smtp: {extended, custom, md5}` go to `detect.app-log.smtp`.
fn smtp_log_options(opts: &Value, out: &mut Value) {
    let o = &mut out["detect"]["app-log"]["smtp"];
    if let Some(v) = opts.get("extended") {
        o["extended"] = Value::Bool(truthy(v));
    }
    for key in ["custom", "md5"] {
        let list: Option<Vec<String>> = match opts.get(key) {
            Some(Value::Array(a)) => Some(a.iter().filter_map(string).collect()),
            Some(Value::String(s)) => Some(
                s.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect(),
            ),
            _ => None,
        };
        if let Some(l) = list {
            o[key] = json!(l);
        }
    }
}

/// `- anomaly: {types: {decode, stream, applayer}, packethdr}` go to `output.eve.anomaly`
/// (keys left out keep Suricata's defaults: applayer on, the others off).
fn anomaly_options(opts: &Value, out: &mut Value) {
    let a = &mut out["output"]["eve"]["anomaly"];
    if let Some(t) = opts.get("types").filter(|t| t.is_object()) {
        for key in ["decode", "stream", "applayer"] {
            if let Some(v) = t.get(key).filter(|v| !v.is_null()) {
                a["types"][key] = Value::Bool(truthy(v));
            }
        }
    }
    if let Some(v) = opts.get("packethdr").filter(|v| !v.is_null()) {
        a["packethdr"] = Value::Bool(truthy(v));
    }
}

/// `- files: {force-magic, force-hash}` go to `detect.app-log.files`.
fn files_options(opts: &Value, out: &mut Value) {
    let o = &mut out["detect"]["app-log"]["files"];
    if let Some(v) = opts.get("force-magic").filter(|v| !v.is_null()) {
        o["force-magic"] = Value::Bool(truthy(v));
    }
    if let Some(Value::Array(a)) = opts.get("force-hash") {
        o["force-hash"] = Value::Array(a.iter().filter_map(string).map(Value::String).collect());
    }
}

/// `- dns: {...}` / `- tls: {...}` options of an eve-log go to `detect.app-log`.
fn app_log_options(name: &str, opts: &Value, out: &mut Value) {
    let list = |v: &Value| -> Option<Value> {
        match v {
            Value::Array(a) => Some(Value::Array(
                a.iter().filter_map(string).map(Value::String).collect(),
            )),
            // `custom: subject, issuer` (a flow-less scalar list).
            Value::String(s) => Some(Value::Array(
                s.split(',')
                    .map(|x| Value::String(x.trim().to_string()))
                    .filter(|x| x.as_str() != Some(""))
                    .collect(),
            )),
            _ => None,
        }
    };
    let o = &mut out["detect"]["app-log"][name];
    if name == "dns" {
        for key in ["requests", "responses"] {
            if let Some(v) = opts.get(key) {
                o[key] = Value::Bool(truthy(v));
            }
        }
        for key in ["formats", "types"] {
            if let Some(v) = opts.get(key).and_then(list) {
                o[key] = v;
            }
        }
        return;
    }
    if name == "quic" {
        o["ja4"] = Value::Bool(opts.get("ja4").is_some_and(truthy));
        return;
    }
    if name == "dhcp" || name == "ike" {
        o["extended"] = Value::Bool(opts.get("extended").is_some_and(truthy));
        return;
    }
    // tls: without `extended: yes` Suricata logs the basic fields only.
    o["extended"] = Value::Bool(opts.get("extended").is_some_and(truthy));
    if let Some(v) = opts.get("ja4") {
        o["ja4"] = Value::Bool(truthy(v));
    }
    if let Some(v) = opts.get("session-resumption") {
        o["session-resumption"] = Value::Bool(truthy(v));
    }
    if let Some(v) = opts.get("custom").and_then(list) {
        o["custom"] = v;
    }
}

/// Engine settings spread over Suricata's sections.
fn engine(tree: &Value, out: &mut Value) {
    if let Some(v) = get(tree, "stream.midstream") {
        out["detect"]["engine"]["midstream"] = Value::Bool(truthy(v));
    }
    if let Some(Value::String(a)) = get(tree, "mpm-algo") {
        // Suricata: auto, ac, ac-ks, ac-bs, hs; the Aho-Corasick variants map to ac.
        let a = match a.as_str() {
            "hs" => "hs",
            "auto" => "auto",
            _ => "ac",
        };
        out["detect"]["engine"]["mpm-algo"] = json!(a);
    }
    if let Some(n) = get(tree, "packet-alert-max").and_then(parse_size) {
        out["detect"]["engine"]["packet-alert-max"] = json!(n);
    }
    if let Some(v) = get(tree, "ignore-unknown-requirements") {
        out["detect"]["engine"]["ignore-unknown-requirements"] = json!(truthy(v));
    }
    for key in ["match-limit", "match-limit-recursion"] {
        if let Some(n) = get(tree, &format!("pcre.{key}")).and_then(parse_size) {
            out["detect"]["engine"]["pcre"][key] = json!(n);
        }
    }
    if let Some(n) = get(tree, "detect.inspection-recursion-limit").and_then(parse_size) {
        out["detect"]["engine"]["inspection-recursion-limit"] = json!(n);
    }
}

/// `stream:`, `host-os-policy:` and `defrag:` keys shrike's stream engine and defragmenter
/// share with Suricata.
fn stream_defrag(tree: &Value, out: &mut Value) {
    // `inline: auto` means inline in IPS mode only: shrike is an IDS, so it stays off.
    for key in ["midstream", "async-oneside", "inline"] {
        if let Some(v) = get(tree, &format!("stream.{key}")) {
            out["detect"]["stream"][key] = Value::Bool(truthy(v));
        }
    }
    if let Some(n) = get(tree, "stream.memcap").and_then(parse_size) {
        out["detect"]["stream"]["memcap"] = json!(n);
    }
    for key in ["max-synack-queued", "max-syn-queued"] {
        if let Some(n) = get(tree, &format!("stream.{key}")).and_then(parse_size) {
            out["detect"]["stream"][key] = json!(n.min(255));
        }
    }
    for key in [
        "memcap",
        "depth",
        "toserver-chunk-size",
        "toclient-chunk-size",
    ] {
        if let Some(n) = get(tree, &format!("stream.reassembly.{key}")).and_then(parse_size) {
            out["detect"]["stream"]["reassembly"][key] = json!(n);
        }
    }
    if let Some(Value::Object(m)) = get(tree, "host-os-policy") {
        let mut dst = Map::new();
        for (os, nets) in m {
            let list: Vec<Value> = match nets {
                Value::Array(a) => a.iter().filter_map(string).map(Value::String).collect(),
                v => string(v)
                    .map(|t| {
                        t.trim_matches(|c| c == '[' || c == ']')
                            .split(',')
                            .map(|x| Value::String(x.trim().to_string()))
                            .filter(|x| x.as_str() != Some(""))
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            dst.insert(os.clone(), Value::Array(list));
        }
        out["detect"]["host-os-policy"] = Value::Object(dst);
    }
    for key in ["memcap", "trackers", "max-frags", "timeout"] {
        if let Some(n) = get(tree, &format!("defrag.{key}")).and_then(parse_size) {
            out["detect"]["defrag"][key] = json!(n);
        }
    }
}

/// `flow-timeouts` has the same shape in both configs; `flow.memcap` bounds the table.
fn flow(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) {
    if let Some(Value::Object(t)) = get(tree, "flow-timeouts") {
        let mut dst = Map::new();
        for (proto, sec) in t {
            if !matches!(proto.as_str(), "default" | "tcp" | "udp" | "icmp" | "sctp") {
                ignored.push(format!("flow-timeouts.{proto}"));
                continue;
            }
            let Some(sec) = sec.as_object() else { continue };
            let mut s = Map::new();
            for (k, v) in sec {
                if let Some(n) = parse_size(v) {
                    s.insert(k.clone(), json!(n));
                }
            }
            dst.insert(proto.clone(), Value::Object(s));
        }
        out["detect"]["flow"]["timeouts"] = Value::Object(dst);
    }
    if let Some(m) = get(tree, "flow.memcap").and_then(parse_size) {
        // A flow costs at most 256 bytes in shrike's table (a test asserts it).
        out["detect"]["flow"]["max-flows"] = json!((m / 256).max(1024));
    }
    if let Some(n) = get(tree, "flow.emergency-recovery").and_then(parse_size) {
        // Suricata takes 1..=100 and falls back to 30 otherwise.
        let n = if (1..=100).contains(&n) { n } else { 30 };
        out["detect"]["flow"]["emergency-recovery"] = json!(n);
    }
}

fn decoder(tree: &Value, out: &mut Value) {
    // `decoder.geneve` / `decoder.teredo`: `enabled`, `ports` (a port-group variable such
    // as `$GENEVE_PORTS` resolved from `vars.port-groups`).
    for name in ["geneve", "teredo"] {
        if let Some(v) = get(tree, &format!("decoder.{name}.enabled")) {
            out["detect"]["decoder"][name]["enabled"] = Value::Bool(truthy(v));
        }
        if let Some(v) = get(tree, &format!("decoder.{name}.ports")) {
            let v = match string(v) {
                Some(s) if s.starts_with('$') => {
                    get(tree, &format!("vars.port-groups.{}", &s[1..]))
                        .and_then(string)
                        .map(Value::String)
                }
                Some(s) => Some(Value::String(s)),
                None if v.is_array() => Some(v.clone()),
                None => None,
            };
            if let Some(v) = v {
                out["detect"]["decoder"][name]["ports"] = v;
            }
        }
    }
    if let Some(v) = get(tree, "decoder.vxlan.enabled") {
        out["detect"]["decoder"]["vxlan"]["enabled"] = Value::Bool(truthy(v));
    }
    if let Some(v) = get(tree, "decoder.vxlan.ports") {
        if let Some(s) = string(v) {
            out["detect"]["decoder"]["vxlan"]["ports"] = Value::String(s);
        } else if v.is_array() {
            out["detect"]["decoder"]["vxlan"]["ports"] = v.clone();
        }
    }
    if let Some(v) = get(tree, "decoder.max-layers").and_then(parse_size) {
        out["detect"]["decoder"]["max-layers"] = json!(v);
    }
    if let Some(v) = get(tree, "vlan.use-for-tracking") {
        out["detect"]["decoder"]["vlan"]["use-for-tracking"] = Value::Bool(truthy(v));
    }
}

/// AF_PACKET keys shrike's ring understands (the rest, e.g. IPS copy modes, are listed).
const AFP_KEYS: &[&str] = &[
    "cluster-id",
    "cluster-type",
    "defrag",
    "block-size",
    "block-count",
    "ring-size",
    "frame-size",
    "block-timeout",
    "poll-timeout",
    "disable-promisc",
    "promisc",
    "bpf-filter",
    "use-mmap",
    "tpacket-v3",
    "mmap-locked",
];

/// `af-packet:` is a list of per-interface maps; `interface: default` holds the defaults.
fn af_packet(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) {
    let Some(Value::Array(list)) = get(tree, "af-packet") else {
        return;
    };
    let default = list
        .iter()
        .find(|e| e.get("interface").and_then(string).as_deref() == Some("default"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut ifaces = Vec::new();
    for e in list {
        let Some(name) = e.get("interface").and_then(string) else {
            continue;
        };
        if name == "default" {
            continue;
        }
        let mut afp = Map::new();
        let mut entry = Map::new();
        entry.insert("name".into(), Value::String(name.clone()));
        entry.insert("capture".into(), json!("af-packet"));
        for src in [&default, e] {
            let Some(m) = src.as_object() else { continue };
            for (k, v) in m {
                match k.as_str() {
                    "interface" => {}
                    "threads" => {
                        if let Some(n) = parse_size(v).filter(|n| *n > 0) {
                            entry.insert("threads".into(), json!(n));
                        }
                    }
                    k if AFP_KEYS.contains(&k) => {
                        afp.insert(k.to_string(), v.clone());
                    }
                    other => {
                        let key = format!("af-packet.{other}");
                        if !ignored.contains(&key) {
                            ignored.push(key);
                        }
                    }
                }
            }
        }
        entry.insert("af-packet".into(), Value::Object(afp));
        ifaces.push(Value::Object(entry));
    }
    if let Some(arr) = out["interfaces"].as_array_mut() {
        arr.extend(ifaces);
    }
}

/// `dpdk:` has `eal-params` and an `interfaces:` list.
fn dpdk(tree: &Value, out: &mut Value, ignored: &mut Vec<String>) {
    let Some(d) = get(tree, "dpdk") else { return };
    let eal = d.get("eal-params").cloned();
    let Some(Value::Array(list)) = d.get("interfaces") else {
        return;
    };
    const KEYS: &[&str] = &[
        "threads",
        "rx-descriptors",
        "mempool-size",
        "mempool-cache-size",
        "rss-hash-functions",
        "promisc",
        "mtu",
    ];
    let mut ifaces = Vec::new();
    for e in list {
        let Some(name) = e.get("interface").and_then(string) else {
            continue;
        };
        if name == "default" {
            continue;
        }
        let mut dp = Map::new();
        dp.insert("interface".into(), Value::String(name.clone()));
        if let Some(eal) = &eal {
            dp.insert("eal-params".into(), eal.clone());
        }
        let mut entry = Map::new();
        entry.insert("name".into(), Value::String(name));
        entry.insert("capture".into(), json!("dpdk"));
        if let Some(m) = e.as_object() {
            for (k, v) in m {
                match k.as_str() {
                    "interface" => {}
                    "threads" => {
                        if let Some(n) = parse_size(v).filter(|n| *n > 0) {
                            entry.insert("threads".into(), json!(n));
                        }
                    }
                    "promisc" => {
                        dp.insert("promisc".into(), Value::Bool(truthy(v)));
                    }
                    k if KEYS.contains(&k) && k != "rss-hash-functions" => {
                        if let Some(n) = parse_size(v) {
                            dp.insert(k.to_string(), json!(n));
                        }
                    }
                    other => ignored.push(format!("dpdk.interfaces.{other}")),
                }
            }
        }
        entry.insert("dpdk".into(), Value::Object(dp));
        ifaces.push(Value::Object(entry));
    }
    if let Some(arr) = out["interfaces"].as_array_mut() {
        arr.extend(ifaces);
    }
}

#[cfg(test)]
mod tests {
    use crate::suricata_yaml::{parse_tree, translate};
    use std::path::Path;

    const SURI: &str = r#"%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "[10.0.0.0/8]"
outputs:
  - fast:
      enabled: no
      filename: alerts.log
  - eve-log:
      enabled: yes
      filetype: regular
      filename: events.json
      buffer-size: 16kb
      threaded: true
      types:
        - alert:
            payload: yes
            tagged-packets: yes
            metadata: no
        - dns
  - stats:
      enabled: yes
      filename: stats.log
      totals: yes
      threads: no
flow:
  memcap: 64mb
  emergency-recovery: 40
pcre:
  match-limit: 2000
  match-limit-recursion: 900
flow-timeouts:
  tcp:
    new: 10
    established: 100
    closed: 5
    emergency-new: 3
decoder:
  vxlan:
    enabled: false
vlan:
  use-for-tracking: false
af-packet:
  - interface: eth1
    threads: 4
    cluster-id: 98
    cluster-type: cluster_qm
    copy-mode: ips
  - interface: default
    defrag: yes
    block-size: 1mb
"#;

    #[test]
    fn file_store_write_fileinfo_and_max_open_files_are_honoured() {
        let text = "%YAML 1.1\n---\noutputs:\n  - file-store:\n      version: 2\n      enabled: yes\n      write-fileinfo: yes\n      max-open-files: 7\n";
        let (cfg, ignored) = translate(&parse_tree(text).unwrap(), Path::new("/etc")).unwrap();
        let fs = &cfg.output.file_store;
        assert!(fs.enabled && fs.write_fileinfo);
        assert_eq!(fs.max_open_files, 7);
        assert!(!ignored.iter().any(|i| i.contains("write-fileinfo")));
        let text = text.replace("yes\n      max", "no\n      max");
        let (cfg, _) = translate(&parse_tree(&text).unwrap(), Path::new("/etc")).unwrap();
        assert!(!cfg.output.file_store.write_fileinfo);
    }

    #[test]
    fn translates_anomaly_options_and_disabled_types() {
        let yaml = |body: &str| format!("%YAML 1.1\n---\noutputs:\n  - eve-log:\n{body}");
        let cases: &[(&str, [bool; 4], bool)] = &[
            // (eve-log body, [decode, stream, applayer, packethdr], anomaly listed)
            (
                "      types:\n        - anomaly:\n            enabled: yes\n            types:\n",
                [false, false, true, false],
                true,
            ),
            (
                "      types:\n        - anomaly:\n            types:\n              decode: yes\n",
                [true, false, true, false],
                true,
            ),
            (
                "      types:\n        - anomaly:\n            types:\n              stream: yes\n              applayer: no\n            packethdr: yes\n",
                [false, true, false, true],
                true,
            ),
            (
                "      types:\n        - alert\n        - anomaly:\n            enabled: no\n",
                [false, false, true, false],
                false,
            ),
            ("      types:\n        - anomaly\n", [false, false, true, false], true),
        ];
        for (body, [decode, stream, applayer, hdr], listed) in cases {
            let text = yaml(body);
            let (cfg, _) = translate(&parse_tree(&text).unwrap(), Path::new("/etc")).unwrap();
            let a = cfg.output.eve.anomaly;
            assert_eq!(
                (
                    a.types.decode,
                    a.types.stream,
                    a.types.applayer,
                    a.packethdr
                ),
                (*decode, *stream, *applayer, *hdr),
                "{body}"
            );
            let on = cfg.output.eve.enabled_kinds();
            assert_eq!(
                on[shrike_output::EventKind::Anomaly.index()],
                *listed,
                "{body}"
            );
        }
        let (cfg, _) = translate(
            &parse_tree(&yaml(
                "      metadata: no\n      types:\n        - anomaly\n",
            ))
            .unwrap(),
            Path::new("/etc"),
        )
        .unwrap();
        assert!(!cfg.output.eve.metadata);
        let (cfg, _) = translate(
            &parse_tree(&yaml("      types:\n        - alert\n")).unwrap(),
            Path::new("/etc"),
        )
        .unwrap();
        assert!(cfg.output.eve.metadata);
    }

    #[test]
    fn translates_cpu_affinity_to_pin_lists() {
        let yaml = "threading:\n  set-cpu-affinity: yes\n  cpu-affinity:\n    \
                    - management-cpu-set:\n        cpu: [ 0 ]\n    \
                    - receive-cpu-set:\n        cpu: [ \"1\" ]\n    \
                    - worker-cpu-set:\n        cpu: [ \"2-4\", 7, \"3\" ]\n        \
                    mode: \"exclusive\"\n  detect-thread-ratio: 1.0\n";
        let (cfg, ignored) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(cfg.workers.cpus, vec![2, 3, 4, 7]);
        assert_eq!(cfg.workers.receive_cpus, vec![1]);
        for k in [
            "threading.cpu-affinity.management-cpu-set",
            "threading.cpu-affinity.worker-cpu-set.mode",
            "threading.detect-thread-ratio",
        ] {
            assert!(ignored.iter().any(|i| i == k), "{k} not in {ignored:?}");
        }
        // `all` is every CPU: the default placement.
        let all = "threading:\n  set-cpu-affinity: yes\n  cpu-affinity:\n    \
                   - worker-cpu-set:\n        cpu: [ all ]\n";
        let (cfg, _) = translate(&parse_tree(all).unwrap(), Path::new("/etc")).unwrap();
        assert!(cfg.workers.cpus.is_empty());
        // Without set-cpu-affinity nothing is pinned.
        let off = yaml.replace("set-cpu-affinity: yes", "set-cpu-affinity: no");
        let (cfg, _) = translate(&parse_tree(&off).unwrap(), Path::new("/etc")).unwrap();
        assert!(cfg.workers.cpus.is_empty() && cfg.workers.receive_cpus.is_empty());
        // Malformed ranges stop the start, naming the set.
        for bad in ["\"3-1\"", "\"x\"", "\"1-y\""] {
            let text = all.replace("all", bad);
            let err = translate(&parse_tree(&text).unwrap(), Path::new("/etc")).unwrap_err();
            assert!(
                err.contains("worker-cpu-set.cpu: invalid cpu range"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn translates_community_id_and_sensor_name() {
        let yaml = "%YAML 1.1\n---\nsensor-name: probe-7\noutputs:\n  - eve-log:\n      \
                    community-id: yes\n      community-id-seed: 513\n";
        let (cfg, ignored) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        assert!(cfg.output.eve.community_id);
        assert_eq!(cfg.output.eve.community_id_seed, 513);
        assert_eq!(cfg.sensor_name.as_deref(), Some("probe-7"));
        assert_eq!(cfg.eve_config().sensor_name.as_deref(), Some("probe-7"));
        assert!(ignored.is_empty(), "{ignored:?}");
        // Off by default; the eve-log's own (deprecated) sensor-name wins.
        let yaml = "sensor-name: a\noutputs:\n  - eve-log:\n      sensor-name: b\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        assert!(!cfg.output.eve.community_id);
        assert_eq!(cfg.eve_config().sensor_name.as_deref(), Some("b"));
        // A seed out of range stops the start, as in Suricata.
        let yaml = "outputs:\n  - eve-log:\n      community-id-seed: 70000\n";
        let err = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap_err();
        assert!(err.contains("community-id-seed"), "{err}");
    }

    #[test]
    fn translates_dns_and_tls_record_options() {
        let yaml = r#"%YAML 1.1
---
outputs:
  - eve-log:
      enabled: yes
      types:
        - dns:
            requests: yes
            responses: no
            formats: [grouped]
            types: [a, MX]
        - tls:
            ja4: on
            custom: [subject, sni, client, client_chain, subjectaltname]
"#;
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let d = cfg.detect.app_log.dns_log();
        assert!(d.requests && !d.responses && d.grouped && !d.detailed);
        assert_eq!(d.types, Some(vec![1, 15]));
        use shrike_app::tls::eve::TlsField as F;
        let t = cfg.detect.app_log.tls_log();
        assert_eq!(
            t.fields,
            vec![F::Subject, F::Sni, F::Client, F::ClientChain]
        );
        // A bare `- tls` logs the basic fields; the built-in default is extended.
        let bare = "%YAML 1.1\n---\noutputs:\n  - eve-log:\n      types:\n        - tls\n";
        let (cfg, _) = translate(&parse_tree(bare).unwrap(), Path::new("/etc")).unwrap();
        let t = cfg.detect.app_log.tls_log();
        assert_eq!(t.fields, vec![F::Subject, F::Issuer, F::SessionResumed]);
        assert!(crate::config::SensorConfig::default()
            .detect
            .app_log
            .tls_log()
            .fields
            .contains(&F::Ja3));
    }

    #[test]
    fn translates_smb_limits() {
        let yaml = "app-layer:\n  protocols:\n    smb:\n      max-read-size: 64kb\n      \
                    max-write-queue-cnt: 5\n      max-tx: 9\n      stream-depth: 2mb\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let s = cfg.detect.app_layer.smb;
        assert_eq!(s.max_read_size, 64 * 1024);
        assert_eq!(s.max_write_queue_cnt, 5);
        assert_eq!(s.max_tx, 9);
        assert_eq!(s.stream_depth, 2 << 20);
        assert_eq!(s.max_write_size, 16 << 20);
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(
            cfg.detect.app_layer.smb,
            shrike_app::smb::SmbConfig::default()
        );
        assert_eq!(cfg.detect.app_layer.smb.stream_depth, 0);
    }

    #[test]
    fn translates_dnp3_settings() {
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        let d = cfg.detect.app_layer.dnp3;
        assert!(!d.enabled);
        assert_eq!((d.max_points, d.max_objects, d.max_tx), (16384, 2048, 32));
        let yaml = "app-layer:\n  protocols:\n    dnp3:\n      enabled: yes\n      \
                    max-points: 100\n      max-objects: 0\n      max-tx: 32\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let d = cfg.detect.app_layer.dnp3;
        assert!(d.enabled);
        // A zero max-objects is refused, as Suricata (the default stays).
        assert_eq!((d.max_points, d.max_objects, d.max_tx), (100, 2048, 32));
    }

    #[test]
    fn translates_modbus_settings() {
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        let m = cfg.detect.app_layer.modbus;
        assert!(!m.enabled);
        assert_eq!((m.request_flood, m.stream_depth), (500, None));
        let yaml = "app-layer:\n  protocols:\n    modbus:\n      enabled: yes\n      \
                    request-flood: 20\n      stream-depth: 1mb\n      detection-ports:\n        \
                    dp: 502\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let m = cfg.detect.app_layer.modbus;
        assert!(m.enabled);
        assert_eq!((m.request_flood, m.stream_depth), (20, Some(1 << 20)));
        let yaml = "app-layer:\n  protocols:\n    modbus:\n      enabled: no\n      \
                    stream-depth: 0\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let m = cfg.detect.app_layer.modbus;
        assert!(!m.enabled);
        assert_eq!(m.stream_depth, Some(0));
    }

    #[test]
    fn translates_geneve_and_teredo() {
        let yaml = "vars:\n  port-groups:\n    GENEVE_PORTS: \"[6081, 7000]\"\n    TEREDO_PORTS: 3544\n\
                    decoder:\n  geneve:\n    enabled: true\n    ports: $GENEVE_PORTS\n  teredo:\n    \
                    enabled: false\n    ports: any\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let d = &cfg.detect.decoder;
        assert!(d.geneve.enabled && !d.teredo.enabled);
        assert_eq!(d.geneve.ports, vec![6081, 7000]);
        assert!(d.teredo.ports.is_empty());
    }

    #[test]
    fn translates_nfs_max_tx() {
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(cfg.detect.app_layer.nfs.max_tx, 1024);
        let yaml = "app-layer:\n  protocols:\n    nfs:\n      enabled: yes\n      max-tx: 12\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(cfg.detect.app_layer.nfs.max_tx, 12);
    }

    #[test]
    fn translates_dcerpc_max_tx() {
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(cfg.detect.app_layer.dcerpc.max_tx, 1024);
        let yaml = "app-layer:\n  protocols:\n    dcerpc:\n      enabled: yes\n      max-tx: 7\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        assert_eq!(cfg.detect.app_layer.dcerpc.max_tx, 7);
    }

    #[test]
    fn translates_mqtt_settings() {
        let yaml = "app-layer:\n  protocols:\n    mqtt:\n      max-msg-length: 50kb\n      \
                    max-tx: 7\n      subscribe-topic-match-limit: 0\noutputs:\n  - eve-log:\n      \
                    types:\n        - mqtt:\n            passwords: no\n            string-log-limit: 1kb\n";
        let (cfg, _) = translate(&parse_tree(yaml).unwrap(), Path::new("/etc")).unwrap();
        let m = cfg.detect.app_layer.mqtt;
        assert_eq!(m.max_msg_length, 50 * 1024);
        assert_eq!(m.max_tx, 7);
        assert_eq!(m.subscribe_topic_match_limit, 0);
        assert_eq!(m.unsubscribe_topic_match_limit, 100);
        assert!(!cfg.detect.app_log.mqtt.passwords);
        assert_eq!(cfg.detect.app_log.mqtt.string_log_limit, Some(1024));
        let (cfg, _) = translate(&parse_tree("a: 1\n").unwrap(), Path::new("/etc")).unwrap();
        assert!(cfg.detect.app_log.mqtt.passwords);
        assert_eq!(cfg.detect.app_layer.mqtt.max_msg_length, 1 << 20);
        assert!(cfg.detect.app_layer.mqtt.enabled && !cfg.detect.app_layer.pgsql.enabled);
        let off = "app-layer:\n  protocols:\n    mqtt:\n      enabled: no\n    pgsql:\n      \
                   enabled: yes\n";
        let (cfg, _) = translate(&parse_tree(off).unwrap(), Path::new("/etc")).unwrap();
        assert!(!cfg.detect.app_layer.mqtt.enabled && cfg.detect.app_layer.pgsql.enabled);
    }

    #[test]
    fn translates_libhtp_default_config() {
        let tree = parse_tree(
            "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          \
             personality: IDS\n          response-body-limit: 8kb\n          \
             response-body-decompress-layer-limit: 3\n          no-such-key: 1\n        \
             server-config:\n          - apache: {}\n",
        )
        .unwrap();
        let (cfg, ignored) = translate(&tree, Path::new("/etc/suricata")).unwrap();
        let h = &cfg.detect.app_layer.http;
        assert_eq!(h.response_body_limit, 8 * 1024);
        assert_eq!(h.response_body_decompress_layer_limit, 3);
        // Unset keys keep Suricata's compiled-in defaults (`HTP_CONFIG_DEFAULT_*`: 4 KiB
        // body limits, not the stock file's 100 KiB).
        assert_eq!(h.request_body_limit, 4096);
        for k in [
            "app-layer.protocols.http.libhtp.default-config.no-such-key",
            "app-layer.protocols.http.libhtp.server-config",
        ] {
            assert!(ignored.iter().any(|i| i == k), "{k} not in {ignored:?}");
        }
    }

    #[test]
    fn translates_outputs_flow_decoder_and_af_packet() {
        let tree = parse_tree(SURI).unwrap();
        let (cfg, ignored) = translate(&tree, Path::new("/etc/suricata")).unwrap();
        assert!(!cfg.output.fast.enabled);
        assert_eq!(cfg.output.fast.filename, "alerts.log");
        assert_eq!(cfg.output.eve.filename, "events.json");
        assert_eq!(cfg.output.eve.buffer_size, 16 * 1024);
        assert_eq!(cfg.output.eve.layout, shrike_output::Layout::PerWorker);
        assert!(cfg.output.stats.enabled);
        let a = &cfg.detect.engine.alert;
        assert!(a.payload && a.tagged_packets && !a.metadata && !a.packet);
        // Only the listed record types: alert and dns (protocol), no flow, no stats.
        assert_eq!(
            cfg.output.eve.types.as_deref(),
            Some(&["alert".to_string(), "dns".to_string()][..])
        );
        let on = cfg.output.eve.enabled_kinds();
        use shrike_output::EventKind as K;
        assert!(on[K::Alert.index()] && on[K::Protocol.index()]);
        assert!(!on[K::Flow.index()] && !on[K::Stats.index()] && !on[K::Anomaly.index()]);
        assert_eq!(cfg.detect.flow.max_flows, 64 * 1024 * 1024 / 256);
        assert_eq!(cfg.detect.flow.emergency_recovery, 40);
        let p = cfg.detect.engine.pcre;
        assert_eq!((p.match_limit, p.match_limit_recursion), (2000, 900));
        let tcp = shrike_flow::config::TimeoutProto::Tcp;
        assert_eq!(cfg.detect.flow.timeouts.resolve_emergency(tcp).new, 3);
        assert!(!cfg.detect.decoder.vxlan.enabled);
        assert!(!cfg.detect.decoder.vlan.use_for_tracking);
        assert_eq!(cfg.interfaces.len(), 1);
        let i = &cfg.interfaces[0];
        assert_eq!(i.name, "eth1");
        assert_eq!(i.threads, Some(4));
        let afp = i.af_packet.as_ref().unwrap();
        assert_eq!(afp.cluster_id, 98);
        assert_eq!(afp.cluster_type, shrike_capture::ClusterType::Qm);
        assert_eq!(afp.block_size, 1 << 20);
        assert!(
            ignored.iter().any(|k| k == "af-packet.copy-mode"),
            "{ignored:?}"
        );
    }

    #[test]
    fn translates_the_suricata_verify_config_completely() {
        let path = Path::new("../shared/suricata-verify/suricata.yaml");
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        let tree = parse_tree(&text).unwrap();
        let (cfg, _) = translate(&tree, Path::new(".")).unwrap();
        assert!(cfg.output.eve.enabled);
        assert_eq!(cfg.output.eve.filename, "eve.json");
    }
}
