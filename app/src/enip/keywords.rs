//! `enip_command` and `cip_service` (Suricata 7's `detect-cipservice.c` and
//! `detect-engine-enip.c`), on every ENIP transaction of the inspected direction.

use super::{svc, CipService, EnipState, EnipTx};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// `enip_command:<u16>`: the encapsulation command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnipCommand(pub u16);

impl EnipCommand {
    /// Parse as Suricata: decimal, first character a digit, at most 65535.
    pub fn parse(v: Option<&str>) -> Result<EnipCommand, String> {
        let v = v.ok_or("enip_command needs a value")?.trim();
        if !v.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("invalid ENIP command {v}"));
        }
        v.parse::<u16>()
            .map(EnipCommand)
            .map_err(|_| format!("invalid ENIP command: \"{v}\""))
    }
}

/// `cip_service:<service>[,<class>[,[!]<attribute>]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CipServiceMatch {
    /// Service code.
    pub service: u8,
    /// Class (when `tokens > 1`).
    pub class: u16,
    /// Attribute (when `tokens > 2`).
    pub attribute: u16,
    /// `false` for `!attribute`.
    pub match_attribute: bool,
    /// How many of service, class, attribute the rule gave.
    pub tokens: u8,
}

/// Suricata keeps each value as `sscanf("%2hhu")`: at most its first two digits.
fn two_digits(tok: &str) -> u8 {
    let d: String = tok
        .chars()
        .take(2)
        .take_while(char::is_ascii_digit)
        .collect();
    d.parse().unwrap_or(0)
}

/// `atol`: the leading digits (0 when none).
fn atol(tok: &str) -> u64 {
    let d: String = tok
        .chars()
        .take_while(char::is_ascii_digit)
        .take(20)
        .collect();
    d.parse().unwrap_or(u64::MAX)
}

impl CipServiceMatch {
    /// Parse as Suricata's `DetectCipServiceParse`.
    pub fn parse(v: Option<&str>) -> Result<CipServiceMatch, String> {
        let v = v.ok_or("cip_service needs a value")?.trim();
        let mut input = [0u8; 3];
        let mut m = CipServiceMatch {
            service: 0,
            class: 0,
            attribute: 0,
            match_attribute: true,
            tokens: 0,
        };
        let mut i = 0usize;
        for tok in v.split(',').filter(|t| !t.is_empty()) {
            if i > 2 {
                return Err("too many parameters".into());
            }
            let mut tok = tok;
            if i == 2 {
                if let Some(rest) = tok.strip_prefix('!') {
                    m.match_attribute = false;
                    tok = rest;
                }
            }
            if !tok.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(format!("parameter error {tok}"));
            }
            let num = atol(tok);
            let max = if i == 0 { 0x7f } else { 0xffff };
            if num > max {
                return Err(format!("invalid CIP value {num}"));
            }
            input[i] = two_digits(tok);
            i += 1;
        }
        if i == 0 {
            return Err("no tokens found".into());
        }
        m.service = input[0];
        m.class = u16::from(input[1]);
        m.attribute = u16::from(input[2]);
        m.tokens = i as u8;
        Ok(m)
    }

    /// Suricata's `CIPPathMatch`.
    fn path_matches(&self, s: &CipService) -> bool {
        let mut class = 0u16;
        let mut found_class = false;
        for &(segment, value) in &s.segments {
            match segment {
                super::seg::CLASS_8 | super::seg::CLASS_16 => {
                    class = value;
                    if self.class == class {
                        if self.tokens == 2 {
                            return true;
                        }
                        found_class = true;
                    }
                }
                super::seg::ATTR_8 => {
                    // Suricata stores the class in the attribute segment and compares it.
                    let attrib = value;
                    if self.tokens == 3 && self.class == class {
                        if self.match_attribute && self.attribute == attrib {
                            return true;
                        }
                        if !self.match_attribute {
                            return true;
                        }
                    }
                }
                _ => return false,
            }
        }
        if !found_class {
            return false;
        }
        if s.service == svc::SET_ATTR_LIST || s.service == svc::GET_ATTR_LIST {
            return s.attributes.contains(&self.attribute);
        }
        false
    }

    /// Suricata's `CIPServiceMatch`: the first service of the rule's code decides when it is
    /// a response (no match).
    pub fn matches_tx(&self, t: &EnipTx) -> bool {
        for s in &t.services {
            if s.service != self.service {
                continue;
            }
            if self.tokens > 1 {
                if matches!(
                    s.service,
                    svc::SET_ATTR_LIST
                        | svc::SET_ATTR_SINGLE
                        | svc::GET_ATTR_LIST
                        | svc::GET_ATTR_SINGLE
                ) && self.path_matches(s)
                {
                    return !s.response;
                }
            } else {
                return !s.response;
            }
        }
        false
    }
}

fn state(parser: &dyn AppParser) -> Option<&EnipState> {
    parser.as_any().downcast_ref::<EnipState>()
}

impl TxMatch for EnipCommand {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        Some(
            state(parser)
                .and_then(|s| s.tx(tx))
                .is_some_and(|t| t.command == self.0),
        )
    }
}

impl TxMatch for CipServiceMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        Some(
            state(parser)
                .and_then(|s| s.tx(tx))
                .is_some_and(|t| self.matches_tx(t)),
        )
    }
}

fn setup_command(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    EnipCommand::parse(v).map(|m| Box::new(m) as Box<dyn TxMatch>)
}

fn setup_cip_service(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    CipServiceMatch::parse(v).map(|m| Box::new(m) as Box<dyn TxMatch>)
}

/// The ENIP keywords in the registry.
pub static KEYWORDS: &[KeywordDesc] = &[
    KeywordDesc {
        name: "enip_command",
        dir: None,
        setup: setup_command,
    },
    KeywordDesc {
        name: "cip_service",
        dir: None,
        setup: setup_cip_service,
    },
];
