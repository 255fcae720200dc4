//! The Suricata 7 rule parser.
//!
//! [`RuleParser::parse`] turns one rule's text into a typed [`Rule`]: the
//! header with compiled address/port matchers, meta keywords, non-payload
//! [`Keyword`]s, and the payload matches grouped into [`BufferSection`]s in
//! the order the matcher walks them.

pub mod address;
pub mod ast;
pub mod buffers;
pub mod error;
pub mod keywords;
pub mod lexer;
pub mod payload;
pub mod port;
pub mod quoting;
pub mod ranges;
pub mod uint;
pub mod vars;

mod builder;

use std::collections::HashMap;
use std::sync::Arc;

pub use address::IpSet;
pub use ast::*;
pub use buffers::{BufferId, Transform, BUFFERS};
pub use error::{ErrorKind, PResult, ParseError};
pub use keywords::Keyword;
pub use port::PortSet;
pub use uint::{UintMatch, UintMode};
pub use vars::Vars;

use builder::Builder;

/// Longest rule accepted, in bytes: Suricata reads rules into an 8192-byte
/// line buffer (`DETECT_MAX_RULE_SIZE`, the terminating NUL included), so a
/// longer rule fails there too. Bounds the work one rule can cause (100,000
/// options, a megabyte of brackets).
pub const MAX_RULE_LEN: usize = 8191;
use lexer::{split_rule, OptionIter};

/// Parses rules against one variable table, caching compiled address and
/// port specifications (the same `$HOME_NET` is compiled once).
pub struct RuleParser<'v> {
    vars: &'v Vars,
    addr_cache: HashMap<String, Arc<IpSet>>,
    port_cache: HashMap<String, Arc<PortSet>>,
}

impl<'v> RuleParser<'v> {
    /// A parser resolving `$VARS` from `vars`.
    pub fn new(vars: &'v Vars) -> Self {
        RuleParser {
            vars,
            addr_cache: HashMap::new(),
            port_cache: HashMap::new(),
        }
    }

    /// Parses one rule (a single logical line, already joined).
    pub fn parse(&mut self, text: &str) -> PResult<Rule> {
        if text.len() > MAX_RULE_LEN {
            return Err(ParseError::syntax(format!(
                "rule is {} bytes long, over the limit of {MAX_RULE_LEN} bytes",
                text.len()
            )));
        }
        // Suricata's `CheckAscii`: no control characters but tab, CR and LF.
        if let Some(c) = text
            .chars()
            .find(|&c| (c < ' ' && !matches!(c, '\t' | '\r' | '\n')) || c == '\x7f')
        {
            return Err(ParseError::syntax(format!(
                "rule contains a control character ({:#04x})",
                u32::from(c)
            )));
        }
        let ([action, proto, src, sport, dir, dst, dport], body) = split_rule(text)?;
        let action = Action::parse(action).ok_or_else(|| {
            ParseError::new(ErrorKind::Action, format!("unknown action `{action}`"))
        })?;
        let protocol = Protocol::parse(proto).ok_or_else(|| {
            ParseError::new(ErrorKind::Protocol, format!("unknown protocol `{proto}`"))
        })?;
        let direction = match dir {
            "->" => Direction::ToDst,
            "<>" => Direction::Both,
            d => {
                return Err(ParseError::new(
                    ErrorKind::Direction,
                    format!("`{d}` is not a direction (use `->` or `<>`)"),
                ))
            }
        };
        let src_addr = self.address(src)?;
        let src_ports = self.port(sport)?;
        let dst_addr = self.address(dst)?;
        let dst_ports = self.port(dport)?;
        let mut b = Builder::default();
        for opt in OptionIter::new(body) {
            let opt = opt?;
            b.option(&opt.name, opt.value)?;
        }
        b.finish(
            action, protocol, src_addr, src_ports, direction, dst_addr, dst_ports,
        )
    }

    fn address(&mut self, s: &str) -> PResult<Arc<IpSet>> {
        if let Some(a) = self.addr_cache.get(s) {
            return Ok(Arc::clone(a));
        }
        let a = Arc::new(IpSet::parse(s, self.vars)?);
        self.addr_cache.insert(s.to_string(), Arc::clone(&a));
        Ok(a)
    }

    fn port(&mut self, s: &str) -> PResult<Arc<PortSet>> {
        if let Some(p) = self.port_cache.get(s) {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(PortSet::parse(s, self.vars)?);
        self.port_cache.insert(s.to_string(), Arc::clone(&p));
        Ok(p)
    }
}

/// The value of the rule's `requires` option, found the way Suricata's first (requires-only)
/// pass finds it: `None` when the rule has none or cannot be split into options (the full
/// parse then reports why).
pub fn requires_value(text: &str) -> Option<&str> {
    // Cheap test first: most rules have no `requires` (option names match in any case).
    if !text
        .as_bytes()
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"requires"))
    {
        return None;
    }
    let (_, body) = split_rule(text).ok()?;
    for opt in OptionIter::new(body) {
        let opt = opt.ok()?;
        if opt.name == "requires" {
            return Some(opt.value.unwrap_or(""));
        }
    }
    None
}

/// Parses one rule with a fresh parser (no cache reuse).
pub fn parse_rule(text: &str, vars: &Vars) -> PResult<Rule> {
    RuleParser::new(vars).parse(text)
}

/// Best-effort `sid` of a rule that failed to parse (for error reports).
pub fn sniff_sid(text: &str) -> Option<u32> {
    let mut rest = text;
    while let Some(p) = rest.find("sid") {
        let before = rest[..p].chars().next_back();
        let after = rest[p + 3..].trim_start();
        if matches!(before, None | Some('(' | ';' | ' ' | '\t')) {
            if let Some(v) = after.strip_prefix(':') {
                let digits: String = v
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(n) = digits.parse() {
                    return Some(n);
                }
            }
        }
        rest = &rest[p + 3..];
    }
    None
}
