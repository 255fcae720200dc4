//! `http2.frametype`, `http2.errorcode`, `http2.priority`, `http2.window`,
//! `http2.size_update` and `http2.settings` (Suricata 7's `detect-http2.c` and
//! `rust/src/http2/detect.rs`): each reads the frames of the inspected direction.

use shrike_rules::parse::UintMatch;

use super::hpack::BlockKind;
use super::{FrameData, Http2State, Tx};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// The keywords, for [`super::PROTOCOL`].
pub static KEYWORDS: &[KeywordDesc] = &[
    KeywordDesc {
        name: "http2.frametype",
        dir: None,
        setup: frametype_setup,
    },
    KeywordDesc {
        name: "http2.errorcode",
        dir: None,
        setup: errorcode_setup,
    },
    KeywordDesc {
        name: "http2.priority",
        dir: None,
        setup: priority_setup,
    },
    KeywordDesc {
        name: "http2.window",
        dir: None,
        setup: window_setup,
    },
    KeywordDesc {
        name: "http2.size_update",
        dir: None,
        setup: size_update_setup,
    },
    KeywordDesc {
        name: "http2.settings",
        dir: None,
        setup: settings_setup,
    },
];

const FRAME_TYPES: [&str; 10] = [
    "DATA",
    "HEADERS",
    "PRIORITY",
    "RSTSTREAM",
    "SETTINGS",
    "PUSHPROMISE",
    "PING",
    "GOAWAY",
    "WINDOWUPDATE",
    "CONTINUATION",
];

const ERROR_CODES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

const SETTINGS: [&str; 6] = [
    "SETTINGS_HEADER_TABLE_SIZE",
    "SETTINGS_ENABLE_PUSH",
    "SETTINGS_MAX_CONCURRENT_STREAMS",
    "SETTINGS_INITIAL_WINDOW_SIZE",
    "SETTINGS_MAX_FRAME_SIZE",
    "SETTINGS_MAX_HEADER_LIST_SIZE",
];

fn tx_of(parser: &dyn AppParser, tx: u64) -> Option<&Tx> {
    parser.as_any().downcast_ref::<Http2State>()?.tx(tx)
}

fn name_or_number(v: Option<&str>, kw: &str, names: &[&str], max: u64) -> Result<u64, String> {
    let v = v.ok_or_else(|| format!("{kw} needs a value"))?.trim();
    if let Ok(n) = v.parse::<u64>() {
        if n <= max {
            return Ok(n);
        }
    }
    names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(v))
        .map(|i| i as u64)
        .ok_or_else(|| format!("invalid {kw} value `{v}`"))
}

fn uint(v: Option<&str>, max: u64, kw: &'static str) -> Result<UintMatch, String> {
    let v = v.ok_or_else(|| format!("{kw} needs a value"))?;
    UintMatch::parse(v, max, kw).map_err(|e| e.to_string())
}

#[derive(Debug)]
struct FrameType(u8);

fn frametype_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let n = name_or_number(v, "http2.frametype", &FRAME_TYPES, 255)?;
    Ok(Box::new(FrameType(n as u8)))
}

impl TxMatch for FrameType {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(|f| f.ftype == self.0))
    }
}

#[derive(Debug)]
struct ErrorCode(u32);

fn errorcode_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let n = name_or_number(v, "http2.errorcode", &ERROR_CODES, u64::from(u32::MAX))?;
    Ok(Box::new(ErrorCode(n as u32)))
}

impl TxMatch for ErrorCode {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(
            |f| matches!(f.data, FrameData::GoAway(c) | FrameData::RstStream(c) if c == self.0),
        ))
    }
}

#[derive(Debug)]
struct Priority(UintMatch);

fn priority_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    Ok(Box::new(Priority(uint(v, 255, "http2.priority")?)))
}

impl TxMatch for Priority {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(|f| match f.data {
            FrameData::Priority(w)
            | FrameData::Headers {
                priority: Some(w), ..
            } => self.0.matches(u64::from(w)),
            _ => false,
        }))
    }
}

#[derive(Debug)]
struct Window(UintMatch);

fn window_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    Ok(Box::new(Window(uint(
        v,
        u64::from(u32::MAX),
        "http2.window",
    )?)))
}

impl TxMatch for Window {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(|f| match f.data {
            FrameData::WindowUpdate(w) => self.0.matches(u64::from(w)),
            _ => false,
        }))
    }
}

#[derive(Debug)]
struct SizeUpdate(UintMatch);

fn size_update_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    Ok(Box::new(SizeUpdate(uint(
        v,
        u64::MAX,
        "http2.size_update",
    )?)))
}

impl TxMatch for SizeUpdate {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(|f| {
            f.data.blocks().iter().any(|b| match b.kind {
                BlockKind::SizeUpdate(n) => self.0.matches(n),
                _ => false,
            })
        }))
    }
}

#[derive(Debug)]
struct Settings {
    id: u16,
    value: Option<UintMatch>,
}

fn settings_setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("http2.settings needs a value")?.trim_start();
    let end = v.find([' ', '<', '>', '=']).unwrap_or(v.len());
    let (name, rest) = v.split_at(end);
    let i = SETTINGS
        .iter()
        .position(|n| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("invalid http2.settings id `{name}`"))?;
    let rest = rest.trim();
    let value = if rest.is_empty() {
        None
    } else {
        Some(uint(Some(rest), u64::from(u32::MAX), "http2.settings")?)
    };
    Ok(Box::new(Settings {
        id: i as u16 + 1,
        value,
    }))
}

impl TxMatch for Settings {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = tx_of(parser, tx)?;
        Some(t.frames(dir).iter().any(|f| match &f.data {
            FrameData::Settings(set) => set.iter().any(|&(id, v)| {
                id == self.id && self.value.as_ref().is_none_or(|m| m.matches(u64::from(v)))
            }),
            _ => false,
        }))
    }
}
