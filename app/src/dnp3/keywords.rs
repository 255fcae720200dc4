//! `dnp3_func`, `dnp3_ind` and `dnp3_obj` (Suricata 7's `detect-dnp3.c`, with their
//! `dnp3.*` aliases).

use super::{Dnp3State, INDICATORS};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// The keywords in the registry.
pub static KEYWORDS: &[KeywordDesc] = &[
    KeywordDesc {
        name: "dnp3_func",
        dir: None,
        setup: setup_func,
    },
    KeywordDesc {
        name: "dnp3.func",
        dir: None,
        setup: setup_func,
    },
    KeywordDesc {
        name: "dnp3_ind",
        dir: Some(Dir::ToClient),
        setup: setup_ind,
    },
    KeywordDesc {
        name: "dnp3.ind",
        dir: Some(Dir::ToClient),
        setup: setup_ind,
    },
    KeywordDesc {
        name: "dnp3_obj",
        dir: None,
        setup: setup_obj,
    },
    KeywordDesc {
        name: "dnp3.obj",
        dir: None,
        setup: setup_obj,
    },
];

/// Suricata's function code names.
pub static FUNCTION_NAMES: &[(&str, u8)] = &[
    ("confirm", 0),
    ("read", 1),
    ("write", 2),
    ("select", 3),
    ("operate", 4),
    ("direct_operate", 5),
    ("direct_operate_nr", 6),
    ("immed_freeze", 7),
    ("immed_freeze_nr", 8),
    ("freeze_clear", 9),
    ("freeze_clear_nr", 10),
    ("freeze_at_time", 11),
    ("freeze_at_time_nr", 12),
    ("cold_restart", 13),
    ("warm_restart", 14),
    ("initialize_data", 15),
    ("initialize_appl", 16),
    ("start_appl", 17),
    ("stop_appl", 18),
    ("save_config", 19),
    ("enable_unsolicited", 20),
    ("disable_unsolicited", 21),
    ("assign_class", 22),
    ("delay_measure", 23),
    ("record_current_time", 24),
    ("open_file", 25),
    ("close_file", 26),
    ("delete_file", 27),
    ("get_file_info", 28),
    ("authenticate_file", 29),
    ("abort_file", 30),
    ("activate_config", 31),
    ("authenticate_req", 32),
    ("authenticate_err", 33),
    ("response", 129),
    ("unsolicited_response", 130),
    ("authenticate_resp", 131),
];

/// `strtoul`-like parse with Suricata's base (0: `0x` hex, leading `0` octal, else
/// decimal); the whole string must be used.
pub fn parse_num(s: &str, base: u32) -> Option<u64> {
    let s = s.trim_start();
    let (digits, radix) = if base == 0 {
        if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            (h, 16)
        } else if s.len() > 1 && s.starts_with('0') {
            (&s[1..], 8)
        } else {
            (s, 10)
        }
    } else {
        (s, base)
    };
    let digits = digits.strip_prefix('+').unwrap_or(digits);
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn dnp3(parser: &dyn AppParser) -> Option<&Dnp3State> {
    parser.as_any().downcast_ref::<Dnp3State>()
}

/// `dnp3_func`: the application function code of the transaction of the inspected
/// direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Func(pub u8);

/// Parse `dnp3_func`'s value: a decimal number up to 255 or a function name.
pub fn parse_func(v: &str) -> Option<u8> {
    if let Some(n) = parse_num(v, 10) {
        return u8::try_from(n).ok();
    }
    FUNCTION_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(v))
        .map(|(_, c)| *c)
}

fn setup_func(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.unwrap_or("");
    parse_func(v)
        .map(|c| Box::new(Func(c)) as Box<dyn TxMatch>)
        .ok_or_else(|| format!("invalid argument \"{v}\" supplied to dnp3_func keyword"))
}

impl TxMatch for Func {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = dnp3(parser)?.tx(tx)?;
        if t.dir() != dir {
            return Some(false);
        }
        // Suricata inspects the transaction once its last segment is in.
        t.done.then_some(t.function_code == self.0)
    }
}

/// `dnp3_ind`: any of the internal indications of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ind(pub u16);

/// Parse `dnp3_ind`'s value: a number (any base) or a comma-separated list of names.
pub fn parse_ind(v: &str) -> Option<u16> {
    if let Some(n) = parse_num(v, 0) {
        return u16::try_from(n).ok();
    }
    let mut flags = 0u16;
    for p in v.split(',').filter(|p| !p.is_empty()) {
        let p = p.trim();
        let (_, bit) = INDICATORS.iter().find(|(n, _)| n.eq_ignore_ascii_case(p))?;
        flags |= bit;
    }
    Some(flags)
}

fn setup_ind(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.unwrap_or("");
    parse_ind(v)
        .map(|c| Box::new(Ind(c)) as Box<dyn TxMatch>)
        .ok_or_else(|| format!("invalid argument \"{v}\" supplied to dnp3.ind keyword"))
}

impl TxMatch for Ind {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = dnp3(parser)?.tx(tx)?;
        if dir != Dir::ToClient || t.is_request {
            return Some(false);
        }
        if !t.done {
            return None;
        }
        let iin1 = (t.iin >> 8) as u8;
        let iin2 = (t.iin & 0xff) as u8;
        // As Suricata: the second octet is compared with the low four bits only.
        Some(iin1 & (self.0 >> 8) as u8 != 0 || iin2 & (self.0 & 0xf) as u8 != 0)
    }
}

/// `dnp3_obj:<group>,<variation>`: an object of that group and variation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Obj {
    /// Group and variation (`None`: Suricata accepted an invalid value without adding a
    /// condition).
    pub gv: Option<(u8, u8)>,
}

/// Parse `dnp3_obj`'s value.
pub fn parse_obj(v: &str) -> Option<(u8, u8)> {
    let (g, var) = v.split_once(',')?;
    let g = u8::try_from(parse_num(g, 0)?).ok()?;
    let var = u8::try_from(parse_num(var, 0)?).ok()?;
    Some((g, var))
}

fn setup_obj(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    // Suricata's setup reports success either way; an invalid value adds no condition.
    Ok(Box::new(Obj {
        gv: parse_obj(v.unwrap_or("")),
    }))
}

impl TxMatch for Obj {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        let t = dnp3(parser)?.tx(tx)?;
        let Some((g, v)) = self.gv else {
            return Some(true);
        };
        if t.dir() != dir {
            return Some(false);
        }
        if t.objects.iter().any(|o| o.group == g && o.variation == v) {
            return Some(true);
        }
        if !t.done {
            return None;
        }
        Some(false)
    }
}
