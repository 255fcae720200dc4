//! The wire format of the control socket, the same as Suricata's unix socket (so
//! `suricatasc` works against shrike): JSON objects, one per message, replies ending in `\n`.
//!
//! * optional handshake: `{"version": "0.2"}` → `{"return": "OK"}`;
//! * command: `{"command": "reload-rules", "arguments": {...}}` →
//!   `{"return": "OK", "message": ...}` or `{"return": "NOK", "message": "why"}`.
//!
//! Requests may end with a newline or not (`suricatasc` sends its handshake without one):
//! the reader takes each complete JSON value from the front of its buffer.

use serde_json::{json, Map, Value};

/// Largest request accepted (bytes); a longer one closes the connection.
pub const MAX_REQUEST: usize = 64 * 1024;

/// Protocol versions accepted in the handshake (Suricata's).
pub const VERSIONS: [&str; 2] = ["0.1", "0.2"];

/// A command the sensor understands. Names are shrike's, with Suricata's as aliases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Reload the rules (`reload`, `reload-rules`, `ruleset-reload-rules`,
    /// `ruleset-reload-nonblocking`).
    Reload,
    /// Reopen the log files (`reopen-log-files`, `reopen`), as SIGHUP.
    ReopenLogs,
    /// Current counters (`stats`, `dump-counters`).
    Stats,
    /// Build version (`version`).
    Version,
    /// Seconds since start (`uptime`).
    Uptime,
    /// Stop the sensor (`shutdown`).
    Shutdown,
    /// The command names (`command-list`).
    List,
}

/// Every command with its accepted names; the first is the canonical one.
pub const COMMANDS: [(Command, &[&str]); 7] = [
    (
        Command::Reload,
        &[
            "reload",
            "reload-rules",
            "ruleset-reload-rules",
            "ruleset-reload-nonblocking",
        ],
    ),
    (Command::ReopenLogs, &["reopen-log-files", "reopen"]),
    (Command::Stats, &["stats", "dump-counters"]),
    (Command::Version, &["version"]),
    (Command::Uptime, &["uptime"]),
    (Command::Shutdown, &["shutdown"]),
    (Command::List, &["command-list"]),
];

impl Command {
    /// The command called `name` (canonical name or alias).
    pub fn from_name(name: &str) -> Option<Command> {
        COMMANDS
            .iter()
            .find(|(_, names)| names.contains(&name))
            .map(|(c, _)| *c)
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        COMMANDS
            .iter()
            .find(|(c, _)| *c == self)
            .map(|(_, n)| n[0])
            .unwrap_or("?")
    }

    /// Every accepted name (for `command-list`; `suricatasc` checks commands against it).
    pub fn all_names() -> Vec<&'static str> {
        COMMANDS
            .iter()
            .flat_map(|(_, n)| n.iter().copied())
            .collect()
    }
}

/// The answer to a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `{"return": "OK", "message": …}`.
    Ok(Value),
    /// `{"return": "NOK", "message": "…"}`.
    Err(String),
}

impl Reply {
    /// `OK` with a text message.
    pub fn ok_text(s: impl Into<String>) -> Reply {
        Reply::Ok(Value::String(s.into()))
    }

    /// The JSON line sent to the client (with the trailing newline).
    pub fn to_line(&self) -> String {
        let v = match self {
            Reply::Ok(Value::Null) => json!({"return": "OK"}),
            Reply::Ok(m) => json!({"return": "OK", "message": m}),
            Reply::Err(m) => json!({"return": "NOK", "message": m}),
        };
        let mut s = v.to_string();
        s.push('\n');
        s
    }

    /// Parses a reply line (client side).
    pub fn from_value(v: &Value) -> Result<Reply, String> {
        let ret = v
            .get("return")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("reply without `return`: {v}"))?;
        let msg = v.get("message").cloned().unwrap_or(Value::Null);
        match ret {
            "OK" => Ok(Reply::Ok(msg)),
            "NOK" => Ok(Reply::Err(match msg {
                Value::String(s) => s,
                other => other.to_string(),
            })),
            other => Err(format!("reply with return `{other}`")),
        }
    }
}

/// One decoded request.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// The `{"version": …}` handshake.
    Hello(String),
    /// A known command with its arguments (`null` when none).
    Command(Command, Value),
    /// A request that gets a `NOK` reply without reaching the sensor.
    Invalid(String),
}

/// Classifies one JSON request.
pub fn classify(v: &Value) -> Message {
    let Some(obj) = v.as_object() else {
        return Message::Invalid("request is not a JSON object".into());
    };
    if let Some(cmd) = obj.get("command") {
        let Some(name) = cmd.as_str() else {
            return Message::Invalid("`command` is not a string".into());
        };
        let args = obj.get("arguments").cloned().unwrap_or(Value::Null);
        return match Command::from_name(name) {
            Some(c) => Message::Command(c, args),
            None => Message::Invalid(format!("unknown command `{name}`")),
        };
    }
    if let Some(ver) = obj.get("version") {
        let ver = ver.as_str().unwrap_or("").to_string();
        return Message::Hello(ver);
    }
    Message::Invalid("request has neither `command` nor `version`".into())
}

/// Takes complete JSON values off the front of `buf`. Returns the values and leaves an
/// incomplete tail in `buf`; a syntax error yields `Err` (the connection is then answered
/// and closed).
pub fn take_values(buf: &mut Vec<u8>) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut consumed = 0;
    {
        let mut it = serde_json::Deserializer::from_slice(buf).into_iter::<Value>();
        loop {
            match it.next() {
                Some(Ok(v)) => {
                    out.push(v);
                    consumed = it.byte_offset();
                }
                Some(Err(e)) if e.is_eof() => break,
                Some(Err(e)) => return Err(format!("invalid JSON: {e}")),
                None => {
                    consumed = it.byte_offset();
                    break;
                }
            }
        }
    }
    buf.drain(..consumed);
    // Whitespace between messages (the newline after each) is part of the next parse.
    let ws = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
    buf.drain(..ws);
    Ok(out)
}

/// Turns dotted counter names into nested objects (`decoder.pkts` → `{"decoder":{"pkts":…}}`),
/// the shape of Suricata's `dump-counters` and EVE `stats`. When a name is both a counter and
/// a section (`a` and `a.b`), the section wins.
pub fn nest_counters<'a>(counters: impl IntoIterator<Item = (&'a str, u64)>) -> Value {
    let mut root = Map::new();
    for (name, v) in counters {
        let mut cur = &mut root;
        let mut parts = name.split('.').peekable();
        while let Some(p) = parts.next() {
            if parts.peek().is_none() {
                if !matches!(cur.get(p), Some(Value::Object(_))) {
                    cur.insert(p.to_string(), Value::from(v));
                }
                break;
            }
            let entry = cur
                .entry(p.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Value::Object(m) = entry else { break };
            cur = m;
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        for (s, c) in [
            ("reload", Command::Reload),
            ("reload-rules", Command::Reload),
            ("ruleset-reload-rules", Command::Reload),
            ("stats", Command::Stats),
            ("dump-counters", Command::Stats),
            ("version", Command::Version),
            ("uptime", Command::Uptime),
            ("shutdown", Command::Shutdown),
            ("reopen-log-files", Command::ReopenLogs),
            ("command-list", Command::List),
        ] {
            assert_eq!(Command::from_name(s), Some(c), "{s}");
        }
        assert_eq!(Command::from_name("iface-list"), None);
        assert_eq!(Command::Reload.name(), "reload");
        assert!(Command::all_names().contains(&"reload-rules"));
    }

    #[test]
    fn classify_requests() {
        let v: Value = serde_json::from_str(r#"{"version": "0.2"}"#).unwrap();
        assert_eq!(classify(&v), Message::Hello("0.2".into()));
        let v: Value = serde_json::from_str(r#"{"command": "reload-rules"}"#).unwrap();
        assert_eq!(classify(&v), Message::Command(Command::Reload, Value::Null));
        let v: Value =
            serde_json::from_str(r#"{"command": "stats", "arguments": {"x": 1}}"#).unwrap();
        assert!(matches!(
            classify(&v),
            Message::Command(Command::Stats, Value::Object(_))
        ));
        for bad in [
            r#"[1]"#,
            r#"{"command": 5}"#,
            r#"{"command": "x"}"#,
            r#"{}"#,
        ] {
            let v: Value = serde_json::from_str(bad).unwrap();
            assert!(matches!(classify(&v), Message::Invalid(_)), "{bad}");
        }
    }

    #[test]
    fn framing_with_and_without_newlines() {
        let mut buf = br#"{"version": "0.2"}{"command": "stats"}"#.to_vec();
        buf.extend_from_slice(b"\n{\"command\": \"rel");
        let vals = take_values(&mut buf).unwrap();
        assert_eq!(vals.len(), 2);
        assert_eq!(buf, br#"{"command": "rel"#.to_vec());
        buf.extend_from_slice(b"oad\"}\n");
        let vals = take_values(&mut buf).unwrap();
        assert_eq!(vals[0]["command"], "reload");
        assert!(buf.is_empty());
        let mut bad = b"{\"command\": ]\n".to_vec();
        assert!(take_values(&mut bad).is_err());
        let mut ws = b"  \n".to_vec();
        assert!(take_values(&mut ws).unwrap().is_empty());
        assert!(ws.is_empty());
    }

    #[test]
    fn reply_lines() {
        assert_eq!(Reply::Ok(Value::Null).to_line(), "{\"return\":\"OK\"}\n");
        let line = Reply::ok_text("done").to_line();
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v, serde_json::json!({"return": "OK", "message": "done"}));
        let r = Reply::Err("no".into());
        let v: Value = serde_json::from_str(&r.to_line()).unwrap();
        assert_eq!(Reply::from_value(&v).unwrap(), r);
        assert!(Reply::from_value(&serde_json::json!({"x": 1})).is_err());
    }

    #[test]
    fn nesting() {
        let v = nest_counters([
            ("decoder.pkts", 10),
            ("decoder.ipv4", 7),
            ("capture.kernel_drops", 1),
            ("uptime", 5),
            ("a", 1),
            ("a.b", 2),
        ]);
        assert_eq!(v["decoder"]["pkts"], 10);
        assert_eq!(v["decoder"]["ipv4"], 7);
        assert_eq!(v["capture"]["kernel_drops"], 1);
        assert_eq!(v["uptime"], 5);
        assert_eq!(v["a"]["b"], 2);
        let v = nest_counters([("a.b", 2), ("a", 1)]);
        assert_eq!(v["a"]["b"], 2);
    }
}
