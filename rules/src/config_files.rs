//! `classification.config`, `reference.config` and `threshold.config`.

use std::collections::HashMap;

use super::parse::keywords::{ThresholdType, Track};
use super::parse::{Action, IpSet, ParseError, Vars};

/// One `config classification: name,description,priority` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// Short name used by `classtype`.
    pub name: String,
    /// Description (EVE `alert.category`).
    pub description: String,
    /// Default priority.
    pub priority: u8,
}

/// A config line that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLineError {
    /// 1-based line.
    pub line: u32,
    /// Why.
    pub reason: String,
}

fn lines(text: &str) -> impl Iterator<Item = (u32, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim();
        (!t.is_empty() && !t.starts_with('#'))
            .then(|| (u32::try_from(i + 1).unwrap_or(u32::MAX), t))
    })
}

/// Parses `classification.config`. Later entries replace earlier ones.
pub fn parse_classification_config(
    text: &str,
) -> (HashMap<String, Classification>, Vec<ConfigLineError>) {
    let mut map = HashMap::new();
    let mut errs = Vec::new();
    for (line, t) in lines(text) {
        let Some(rest) = t.strip_prefix("config classification:") else {
            errs.push(ConfigLineError {
                line,
                reason: "expected `config classification:`".into(),
            });
            continue;
        };
        let parts: Vec<&str> = rest.splitn(3, ',').map(str::trim).collect();
        match parts.as_slice() {
            [name, desc, prio] if !name.is_empty() => match prio.parse::<u8>() {
                Ok(p) => {
                    map.insert(
                        (*name).to_string(),
                        Classification {
                            name: (*name).to_string(),
                            description: (*desc).to_string(),
                            priority: p,
                        },
                    );
                }
                Err(_) => errs.push(ConfigLineError {
                    line,
                    reason: format!("bad priority `{prio}`"),
                }),
            },
            _ => errs.push(ConfigLineError {
                line,
                reason: "expected name,description,priority".into(),
            }),
        }
    }
    (map, errs)
}

/// Parses `reference.config` (`config reference: system url`) into
/// system → URL prefix (system names are matched case-insensitively, so keys
/// are lower-cased).
pub fn parse_reference_config(text: &str) -> (HashMap<String, String>, Vec<ConfigLineError>) {
    let mut map = HashMap::new();
    let mut errs = Vec::new();
    for (line, t) in lines(text) {
        let parsed = t
            .strip_prefix("config reference:")
            .map(str::trim)
            .and_then(|r| r.split_once(char::is_whitespace))
            .map(|(s, u)| (s.trim(), u.trim()))
            .filter(|(s, u)| !s.is_empty() && !u.is_empty());
        match parsed {
            Some((s, u)) => {
                map.insert(s.to_ascii_lowercase(), u.to_string());
            }
            None => errs.push(ConfigLineError {
                line,
                reason: "expected `config reference: system url`".into(),
            }),
        }
    }
    (map, errs)
}

/// `suppress` tracking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuppressTrack {
    /// `by_src`
    BySrc,
    /// `by_dst`
    ByDst,
    /// `by_either`
    ByEither,
}

/// One `threshold.config` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThresholdEntry {
    /// `threshold` / `event_filter` (same semantics).
    Threshold {
        /// `gen_id` (0 = all).
        gid: u32,
        /// `sig_id` (0 = all).
        sid: u32,
        /// `type`.
        kind: ThresholdType,
        /// `track`.
        track: Track,
        /// `count`.
        count: u32,
        /// `seconds`.
        seconds: u32,
        /// Was written as `event_filter`.
        event_filter: bool,
    },
    /// `suppress`.
    Suppress {
        /// `gen_id`.
        gid: u32,
        /// `sig_id`.
        sid: u32,
        /// `track` and `ip` (both or neither).
        target: Option<(SuppressTrack, IpSet)>,
    },
    /// `rate_filter`.
    RateFilter {
        /// `gen_id`.
        gid: u32,
        /// `sig_id`.
        sid: u32,
        /// `track`.
        track: Track,
        /// `count`.
        count: u32,
        /// `seconds`.
        seconds: u32,
        /// `new_action`.
        new_action: Action,
        /// `timeout`.
        timeout: u32,
    },
}

/// Parses `threshold.config`. `vars` resolves `$VAR` in `suppress ... ip`.
pub fn parse_threshold_config(
    text: &str,
    vars: &Vars,
) -> (Vec<ThresholdEntry>, Vec<ConfigLineError>) {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for (line, t) in lines(text) {
        match parse_threshold_line(t, vars) {
            Ok(e) => out.push(e),
            Err(reason) => errs.push(ConfigLineError { line, reason }),
        }
    }
    (out, errs)
}

fn parse_threshold_line(t: &str, vars: &Vars) -> Result<ThresholdEntry, String> {
    let (cmd, rest) = t
        .split_once(char::is_whitespace)
        .ok_or("missing arguments")?;
    let mut kv: HashMap<&str, &str> = HashMap::new();
    // `ip` values may be bracketed lists containing commas.
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = rest.as_bytes();
    let mut items = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&rest[start..]);
    for it in items {
        let it = it.trim();
        let (k, v) = it
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("bad item `{it}`"))?;
        if kv.insert(k, v.trim()).is_some() {
            return Err(format!("`{k}` given twice"));
        }
    }
    let num = |k: &str| -> Result<u32, String> {
        kv.get(k)
            .ok_or_else(|| format!("missing `{k}`"))?
            .parse::<u32>()
            .map_err(|_| format!("bad `{k}`"))
    };
    let gid = num("gen_id")?;
    let sid = num("sig_id")?;
    let track = || -> Result<Track, String> {
        let v = kv.get("track").ok_or("missing `track`")?;
        Track::parse(v).ok_or_else(|| format!("bad track `{v}`"))
    };
    match cmd {
        "threshold" | "event_filter" => {
            let kind = match kv.get("type").copied() {
                Some("limit") => ThresholdType::Limit,
                Some("threshold") => ThresholdType::Threshold,
                Some("both") => ThresholdType::Both,
                Some(o) => return Err(format!("bad type `{o}`")),
                None => return Err("missing `type`".into()),
            };
            Ok(ThresholdEntry::Threshold {
                gid,
                sid,
                kind,
                track: track()?,
                count: num("count")?,
                seconds: num("seconds")?,
                event_filter: cmd == "event_filter",
            })
        }
        "suppress" => {
            let target = match (kv.get("track"), kv.get("ip")) {
                (None, None) => None,
                (Some(tr), Some(ip)) => {
                    let tr = match *tr {
                        "by_src" => SuppressTrack::BySrc,
                        "by_dst" => SuppressTrack::ByDst,
                        "by_either" => SuppressTrack::ByEither,
                        o => return Err(format!("bad suppress track `{o}`")),
                    };
                    Some((tr, IpSet::parse(ip, vars).map_err(|e| e.to_string())?))
                }
                _ => return Err("suppress needs both `track` and `ip`, or neither".into()),
            };
            Ok(ThresholdEntry::Suppress { gid, sid, target })
        }
        "rate_filter" => {
            let new_action = kv
                .get("new_action")
                .and_then(|a| Action::parse(a))
                .ok_or("missing or bad `new_action`")?;
            Ok(ThresholdEntry::RateFilter {
                gid,
                sid,
                track: track()?,
                count: num("count")?,
                seconds: num("seconds")?,
                new_action,
                timeout: num("timeout")?,
            })
        }
        o => Err(format!("unknown directive `{o}`")),
    }
}

impl From<ParseError> for ConfigLineError {
    fn from(e: ParseError) -> Self {
        ConfigLineError {
            line: 0,
            reason: e.to_string(),
        }
    }
}
