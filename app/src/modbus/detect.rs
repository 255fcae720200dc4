//! The `modbus` rule keyword, as Suricata 7 (`rust/src/modbus/detect.rs`, its three
//! forms tried in this order):
//!
//! * `unit <n>` (`<n>`, `>n`, `n<>m`), optionally followed by `, <function form>` or
//!   `, <access form>`;
//! * `function <code>` with an optional `, subfunction <n>` (a number, or a category:
//!   `assigned`, `unassigned`, `public`, `user`, `reserved`, `all`, each negatable with `!`);
//! * `access read|write [discretes|coils|input|holding]`, optionally `, address <n>` and
//!   then `, value <n>` (one address and write access only).
//!
//! A transaction is judged on its request (on its response when it has none); Suricata
//! inspects it going to the server from its first message on.

use std::ops::{Range, RangeInclusive};
use std::str::FromStr;

use sawp_modbus::{AccessType, CodeCategory, Data, Flags, FunctionCode, Message};

use super::{address_range, write_value_at, ModbusState};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// The Modbus keywords in the registry.
pub static KEYWORDS: &[KeywordDesc] = &[KeywordDesc {
    name: "modbus",
    dir: Some(Dir::ToServer),
    setup,
}];

fn setup(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("modbus needs a value")?;
    parse(v)
        .map(|m| Box::new(m) as Box<dyn TxMatch>)
        .ok_or_else(|| format!("invalid modbus option: {v}"))
}

/// A parsed `modbus` keyword (Suricata's `DetectModbusRust`). Ranges are Suricata's:
/// `n..n` one value, `0..n` below n, `n..65535` above n, `n..m` between (exclusive).
#[derive(Debug, Default, PartialEq)]
pub struct ModbusMatch {
    /// Function category (`function assigned`, `function !user`).
    pub category: Option<Flags<CodeCategory>>,
    /// Function by number.
    pub function: Option<FunctionCode>,
    /// Diagnostic subfunction.
    pub subfunction: Option<u16>,
    /// `access read|write [kind]`.
    pub access_type: Option<Flags<AccessType>>,
    /// `unit`.
    pub unit_id: Option<Range<u16>>,
    /// `address`.
    pub address: Option<Range<u16>>,
    /// `value`.
    pub value: Option<Range<u16>>,
}

/// Whether the rule's range meets the message's address range.
fn range_hits(sig: &Range<u16>, r: RangeInclusive<u16>) -> bool {
    if sig.start == sig.end {
        sig.start >= *r.start() && sig.start <= *r.end()
    } else if sig.start == u16::MIN {
        sig.end > *r.start()
    } else if sig.end == u16::MAX {
        sig.start < *r.end()
    } else {
        sig.start < *r.end() && *r.start() < sig.end
    }
}

/// Whether the rule's range holds `v`.
fn value_hits(sig: &Range<u16>, v: u16) -> bool {
    if sig.start == sig.end {
        sig.start == v
    } else if sig.start == u16::MIN {
        sig.end > v
    } else if sig.end == u16::MAX {
        sig.start < v
    } else {
        sig.start < v && v < sig.end
    }
}

impl ModbusMatch {
    /// Suricata's `rs_modbus_inspect` on one message.
    pub fn matches_message(&self, msg: &Message) -> bool {
        if let Some(u) = &self.unit_id {
            if !value_hits(u, u16::from(msg.unit_id)) {
                return false;
            }
        }
        if let Some(access) = self.access_type {
            let rw = access & (AccessType::READ | AccessType::WRITE);
            let kind = access & AccessType::FUNC_MASK;
            if rw.is_empty()
                || !msg.access_type.intersects(rw)
                || (!kind.is_empty() && !msg.access_type.intersects(kind))
            {
                return false;
            }
            return self.data_hits(msg);
        }
        if let Some(c) = self.category {
            return msg.category.intersects(c);
        }
        match self.function {
            None => true,
            Some(f) if f == msg.function.code => match self.subfunction {
                None => true,
                Some(sub) => matches!(&msg.data, Data::Diagnostic { func, .. } if func.raw == sub),
            },
            Some(_) => false,
        }
    }

    /// Suricata's `inspect_data`: the address, then the value written there.
    fn data_hits(&self, msg: &Message) -> bool {
        let Some(addr) = &self.address else {
            return true;
        };
        match address_range(msg) {
            Some(r) if range_hits(addr, r.clone()) => {}
            _ => return false,
        }
        let Some(value) = &self.value else {
            return true;
        };
        write_value_at(msg, addr.start).is_some_and(|v| value_hits(value, v))
    }
}

impl TxMatch for ModbusMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<ModbusState>()?;
        let Some(t) = s.tx(tx) else {
            return Some(false);
        };
        let msg = t.request.as_ref().or(t.response.as_ref())?;
        Some(self.matches_message(msg))
    }
}

/// `[[:space:]]`.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A cursor over a keyword value.
struct Cur<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cur<'a> {
    fn new(s: &'a str) -> Self {
        Cur {
            s: s.as_bytes(),
            i: 0,
        }
    }

    fn spaces(&mut self) -> usize {
        let start = self.i;
        while self.s.get(self.i).copied().is_some_and(is_space) {
            self.i += 1;
        }
        self.i - start
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self
            .s
            .get(self.i..)
            .is_some_and(|r| r.starts_with(lit.as_bytes()))
        {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// `^[[:space:]]*"?[[:space:]]*`.
    fn open(&mut self) {
        self.spaces();
        self.eat("\"");
        self.spaces();
    }

    /// `[[:space:]]*"?[[:space:]]*$`.
    fn close(&mut self) -> bool {
        self.spaces();
        self.eat("\"");
        self.spaces();
        self.i == self.s.len()
    }

    /// Bytes while `f` holds (at least one).
    fn take(&mut self, f: impl Fn(u8) -> bool) -> Option<&'a str> {
        let start = self.i;
        while self.s.get(self.i).copied().is_some_and(&f) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        std::str::from_utf8(self.s.get(start..self.i)?).ok()
    }

    fn digits(&mut self) -> Option<&'a str> {
        self.take(|c| c.is_ascii_digit())
    }

    /// `([<>]?[[:digit:]]+)(?:<>([[:digit:]]+))?`: the two texts.
    fn range(&mut self) -> Option<(&'a str, &'a str)> {
        let start = self.i;
        if matches!(self.peek(), Some(b'<' | b'>')) {
            self.i += 1;
        }
        self.digits()?;
        let min = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
        if self.eat("<>") {
            let max = self.digits()?;
            return Some((min, max));
        }
        Some((min, ""))
    }

    fn rest(&self) -> &'a str {
        std::str::from_utf8(self.s.get(self.i..).unwrap_or_default()).unwrap_or("")
    }
}

/// Suricata's `parse_range`: `n`, `<n`, `>n`, or `n<>m`.
fn parse_range(min: &str, max: &str) -> Option<Range<u16>> {
    if max.is_empty() {
        let sign = *min.as_bytes().first()?;
        let n: u16 = min
            .get(usize::from(!sign.is_ascii_digit())..)?
            .parse()
            .ok()?;
        Some(match sign {
            b'>' => n..u16::MAX,
            b'<' => u16::MIN..n,
            _ => n..n,
        })
    } else {
        Some(min.parse().ok()?..max.parse().ok()?)
    }
}

/// The `modbus` keyword's value, or `None` when Suricata refuses it.
pub fn parse(v: &str) -> Option<ModbusMatch> {
    parse_unit(v)
        .or_else(|| parse_function(v))
        .or_else(|| parse_access(v))
}

/// `access read|write [discretes|coils|input|holding][, address A[, value V]]`.
pub fn parse_access(v: &str) -> Option<ModbusMatch> {
    let mut c = Cur::new(v);
    c.open();
    if !c.eat("access") {
        return None;
    }
    c.spaces();
    let rw = if c.eat("read") {
        "read"
    } else if c.eat("write") {
        "write"
    } else {
        return None;
    };
    let mut access: Flags<AccessType> = AccessType::from_str(rw).ok()?.into();
    c.spaces();
    let mut kind = None;
    for k in ["discretes", "coils", "input", "holding"] {
        if c.eat(k) {
            kind = Some(k);
            break;
        }
    }
    let mut addr = None;
    let mut val = None;
    let save = c.i;
    if c.eat(",") {
        c.spaces();
        if c.eat("address") && c.spaces() > 0 {
            addr = Some(c.range()?);
            let save2 = c.i;
            if c.eat(",") {
                c.spaces();
                if c.eat("value") && c.spaces() > 0 {
                    val = Some(c.range()?);
                } else {
                    c.i = save2;
                }
            }
        } else {
            c.i = save;
        }
    }
    if !c.close() {
        return None;
    }
    match kind {
        Some("coils") => access |= AccessType::COILS,
        Some("holding") => access |= AccessType::HOLDING,
        Some("discretes") => {
            if access == AccessType::WRITE {
                return None;
            }
            access |= AccessType::DISCRETES;
        }
        Some("input") => {
            if access == AccessType::WRITE {
                return None;
            }
            access |= AccessType::INPUT;
        }
        _ => {}
    }
    let Some((amin, amax)) = addr else {
        return Some(ModbusMatch {
            access_type: Some(access),
            ..Default::default()
        });
    };
    let address = parse_range(amin, amax)?;
    let Some((vmin, vmax)) = val else {
        return Some(ModbusMatch {
            access_type: Some(access),
            address: Some(address),
            ..Default::default()
        });
    };
    // A value goes with one address, and with write access.
    if address.start != address.end || access == AccessType::READ {
        return None;
    }
    let value = parse_range(vmin, vmax)?;
    Some(ModbusMatch {
        access_type: Some(access),
        address: Some(address),
        value: Some(value),
        ..Default::default()
    })
}

/// `function N[, subfunction S]` or `function [!]category`.
pub fn parse_function(v: &str) -> Option<ModbusMatch> {
    let mut c = Cur::new(v);
    c.open();
    if !c.eat("function") {
        return None;
    }
    c.spaces();
    let start = c.i;
    c.eat("!");
    // `[A-z0-9]+`: the ASCII range from 'A' to 'z' takes `[\]^_` and the backquote too.
    c.take(|b| (b'A'..=b'z').contains(&b) || b.is_ascii_digit())?;
    let word = std::str::from_utf8(c.s.get(start..c.i)?).ok()?;
    let mut sub = None;
    let save = c.i;
    if c.eat(",") {
        c.spaces();
        if c.eat("subfunction") && c.spaces() > 0 {
            sub = Some(c.digits()?);
        } else {
            c.i = save;
        }
    }
    if !c.close() {
        return None;
    }
    let mut m = ModbusMatch::default();
    if let Ok(n) = word.parse::<u8>() {
        if n == 0 {
            return None;
        }
        m.function = Some(FunctionCode::from_raw(n));
        if let Some(s) = sub {
            m.subfunction = Some(s.parse().ok()?);
        }
        return Some(m);
    }
    let neg = word.starts_with('!');
    let cat: Flags<CodeCategory> = match word.get(usize::from(neg)..)? {
        "assigned" => CodeCategory::PUBLIC_ASSIGNED.into(),
        "unassigned" => CodeCategory::PUBLIC_UNASSIGNED.into(),
        "public" => CodeCategory::PUBLIC_ASSIGNED | CodeCategory::PUBLIC_UNASSIGNED,
        "user" => CodeCategory::USER_DEFINED.into(),
        "reserved" => CodeCategory::RESERVED.into(),
        "all" => {
            CodeCategory::PUBLIC_ASSIGNED
                | CodeCategory::PUBLIC_UNASSIGNED
                | CodeCategory::USER_DEFINED
                | CodeCategory::RESERVED
        }
        _ => return None,
    };
    m.category = Some(if neg { !cat } else { cat });
    Some(m)
}

/// `unit U[, <function or access form>]`.
pub fn parse_unit(v: &str) -> Option<ModbusMatch> {
    let mut c = Cur::new(v);
    c.open();
    if !c.eat("unit") || c.spaces() == 0 {
        return None;
    }
    let (min, max) = c.range()?;
    let save = c.i;
    let mut extra = None;
    if c.eat(",") {
        c.spaces();
        // `(.*)`: the rest of the line.
        let rest = c.rest();
        if rest.contains('\n') {
            c.i = save;
        } else {
            extra = Some(rest);
            c.i = c.s.len();
        }
    }
    if extra.is_none() && !c.close() {
        return None;
    }
    let mut m = match extra {
        Some(e) => parse_function(e).or_else(|| parse_access(e))?,
        None => ModbusMatch::default(),
    };
    m.unit_id = Some(parse_range(min, max)?);
    Some(m)
}
