//! Payload keyword values: `content` strings, `pcre`, `byte_test`,
//! `byte_jump`, `byte_extract`, `byte_math`, `isdataat`, `base64_decode`.

use super::ast::{
    Base64Decode, ByteExtract, ByteJump, ByteMath, ByteTest, ByteTestOp, CaptureKind, Endian,
    IntOrVar, IsDataAt, MathOp, NumBase, Pcre, PcreOpts,
};
use super::buffers::BufferId;
use super::error::{PResult, ParseError};
use super::lexer::truncate;
use super::uint::{parse_i64, parse_u64};

/// Parses a content value: `[!]"text|41 42|text"` with `\\`, `\"`, `\;`,
/// `\:` escapes and `|..|` hex. Returns `(bytes, negated)`.
pub fn parse_content_value(kw: &'static str, v: &str) -> PResult<(Vec<u8>, bool)> {
    let v = v.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    let inner = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        return Err(ParseError::bad(
            kw,
            format!("value must be quoted: {}", truncate(v, 60)),
        ));
    };
    let bytes = decode_content(kw, inner)?;
    if bytes.is_empty() {
        return Err(ParseError::bad(kw, "empty content"));
    }
    Ok((bytes, negated))
}

/// Decodes the inside of a content string.
pub fn decode_content(kw: &'static str, s: &str) -> PResult<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut hex = false;
    let mut nib: Option<u8> = None;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        i += 1;
        if hex {
            match c {
                b'|' => {
                    if nib.is_some() {
                        return Err(ParseError::bad(kw, "odd number of hex digits"));
                    }
                    hex = false;
                }
                b' ' | b'\t' => {
                    if nib.is_some() {
                        return Err(ParseError::bad(kw, "space inside a hex byte"));
                    }
                }
                _ => {
                    let d = (c as char)
                        .to_digit(16)
                        .and_then(|d| u8::try_from(d).ok())
                        .ok_or_else(|| {
                            ParseError::bad(kw, format!("bad hex digit `{}`", c as char))
                        })?;
                    match nib.take() {
                        Some(h) => out.push(h << 4 | d),
                        None => nib = Some(d),
                    }
                }
            }
            continue;
        }
        match c {
            b'|' => hex = true,
            b'\\' => {
                let e = b
                    .get(i)
                    .copied()
                    .ok_or_else(|| ParseError::bad(kw, "trailing backslash"))?;
                i += 1;
                match e {
                    b'\\' | b'"' | b';' | b':' | b'|' => out.push(e),
                    _ => return Err(ParseError::bad(kw, format!("can't escape `{}`", e as char))),
                }
            }
            b'"' => return Err(ParseError::bad(kw, "unescaped `\"` inside the string")),
            _ => out.push(c),
        }
    }
    if hex {
        return Err(ParseError::bad(kw, "unterminated `|` hex block"));
    }
    Ok(out)
}

/// Resolves a literal or a variable name against the rule's variables.
pub fn int_or_var(
    kw: &'static str,
    s: &str,
    vars: &[String],
    min: i64,
    max: i64,
) -> PResult<IntOrVar> {
    let s = s.trim();
    if let Some(n) = parse_i64(s) {
        if n < min || n > max {
            return Err(ParseError::bad(
                kw,
                format!("`{s}` out of range {min}..{max}"),
            ));
        }
        return Ok(IntOrVar::Lit(n));
    }
    lookup_var(kw, s, vars).map(IntOrVar::Var)
}

fn lookup_var(kw: &'static str, s: &str, vars: &[String]) -> PResult<u8> {
    vars.iter()
        .position(|v| v == s)
        .and_then(|i| u8::try_from(i).ok())
        .ok_or_else(|| {
            ParseError::bad(
                kw,
                format!("`{s}` is neither a number nor a byte_extract/byte_math variable"),
            )
        })
}

/// A parsed `pcre` plus the buffer its modifier letters select, if any.
pub struct PcreSpec {
    /// The pcre.
    pub pcre: Pcre,
    /// Buffer chosen by `U`, `H`, `P`… letters.
    pub buffer: Option<BufferId>,
}

/// Parses `[!]"/regex/flags[, pkt:name]"`.
pub fn parse_pcre(v: &str) -> PResult<PcreSpec> {
    let bad = |d: &str| ParseError::bad("pcre", format!("{d}: {}", truncate(v, 80)));
    let v = v.trim();
    let (negated, v) = match v.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, v),
    };
    let inner = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        &v[1..v.len() - 1]
    } else {
        v
    };
    let inner = inner.trim();
    let body = inner
        .strip_prefix('/')
        .ok_or_else(|| bad("must start with `/`"))?;
    let last = body.rfind('/').ok_or_else(|| bad("no closing `/`"))?;
    let pattern = &body[..last];
    let tail = &body[last + 1..];
    let (flags, capture) = match tail.split_once(',') {
        Some((f, c)) => (f.trim(), Some(c.trim())),
        None => (tail.trim(), None),
    };
    let mut opts = PcreOpts::default();
    let mut p = Pcre {
        pattern: pattern.to_string(),
        negated,
        opts,
        relative: false,
        rawbytes: false,
        match_limit_override: false,
        captures: Vec::new(),
    };
    let mut buffer: Option<BufferId> = None;
    for c in flags.chars() {
        match c {
            'i' => opts.caseless = true,
            's' => opts.dotall = true,
            'm' => opts.multiline = true,
            'x' => opts.extended = true,
            'A' => opts.anchored = true,
            'E' => opts.dollar_endonly = true,
            'G' => opts.ungreedy = true,
            'R' => p.relative = true,
            'B' => p.rawbytes = true,
            'O' => p.match_limit_override = true,
            _ => {
                let b = BufferId::from_pcre_flag(c)
                    .ok_or_else(|| bad(&format!("unknown modifier `{c}`")))?;
                if buffer.is_some_and(|x| x != b) {
                    return Err(bad("modifiers select two different buffers"));
                }
                buffer = Some(b);
            }
        }
    }
    if buffer == BufferId::by_name("http.host")
        && !opts.caseless
        && pattern.chars().any(|c| c.is_ascii_uppercase())
    {
        // Suricata: the host buffer is lower-cased; an uppercase literal can never match.
        let has_upper_literal = pattern.split('\\').enumerate().any(|(i, seg)| {
            seg.chars()
                .skip(usize::from(i > 0))
                .any(|c| c.is_ascii_uppercase())
        });
        if has_upper_literal {
            return Err(bad("`W` (http.host) pattern has an uppercase character"));
        }
    }
    p.opts = opts;
    // Capture names after the flags, as Suricata 7's `DetectPcreParseCapture`: split on
    // spaces and commas, `pkt:key` then `pkt:value` make a key-value packet variable, other
    // names must start with `pkt:` or `flow:`. Each takes the next capture group in order.
    if let Some(cap) = capture {
        let mut key = false;
        for c in cap.split([' ', ',']).filter(|c| !c.is_empty()) {
            if c == "pkt:key" {
                key = true;
                p.captures.push((CaptureKind::PktKeyValue, String::new()));
            } else if key && c == "pkt:value" {
                key = false;
            } else if key || c == "pkt:value" {
                return Err(bad("`pkt:key` must be followed by `pkt:value`"));
            } else if let Some(n) = c.strip_prefix("flow:") {
                p.captures.push((CaptureKind::Flow, n.to_string()));
            } else if let Some(n) = c.strip_prefix("pkt:") {
                p.captures.push((CaptureKind::Pkt, n.to_string()));
            } else {
                return Err(bad(
                    "pkt/flow var capture names must start with `pkt:` or `flow:`",
                ));
            }
        }
    }
    // Named groups `(?P<flow_name>` / `(?P<pkt_name>` (Suricata 7's
    // `\(\?P\<(pkt|flow)_([A-z0-9_]+)\>`), appended after the listed names.
    let mut rest = pattern;
    while let Some(pos) = rest.find("(?P<") {
        let after = &rest[pos + 4..];
        let Some(end) = after.find('>') else {
            break;
        };
        let name = &after[..end];
        let valid = |n: &str| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| (b'A'..=b'z').contains(&b) || b.is_ascii_digit())
        };
        if let Some((k, n)) = name.split_once('_') {
            match k {
                "flow" if valid(n) => p.captures.push((CaptureKind::Flow, n.to_string())),
                "pkt" if valid(n) => p.captures.push((CaptureKind::Pkt, n.to_string())),
                _ => {}
            }
        }
        rest = &after[end..];
    }
    if p.captures.len() > 8 {
        // Suricata's DETECT_PCRE_CAPTURE_MAX.
        return Err(bad("a rule can have at most 8 pkt/flow var captures"));
    }
    Ok(PcreSpec { pcre: p, buffer })
}

fn parts(v: &str) -> Vec<&str> {
    v.split(',').map(str::trim).collect()
}

fn nbytes(kw: &'static str, s: &str, string: bool) -> PResult<u8> {
    let max = if string { 23 } else { 8 };
    parse_u64(s)
        .filter(|&n| n <= max)
        .and_then(|n| u8::try_from(n).ok())
        .ok_or_else(|| ParseError::bad(kw, format!("number of bytes `{s}` not in 0..{max}")))
}

fn base(kw: &'static str, s: &str) -> PResult<NumBase> {
    match s {
        "dec" => Ok(NumBase::Dec),
        "hex" => Ok(NumBase::Hex),
        "oct" => Ok(NumBase::Oct),
        _ => Err(ParseError::bad(kw, format!("bad string base `{s}`"))),
    }
}

fn u32_of(kw: &'static str, s: &str) -> PResult<u32> {
    parse_u64(s)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| ParseError::bad(kw, format!("bad number `{s}`")))
}

fn i32_offset(kw: &'static str, s: &str) -> PResult<i32> {
    parse_i64(s)
        .filter(|n| (-65535..=65535).contains(n))
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| ParseError::bad(kw, format!("bad offset `{s}`")))
}

/// C `strtoul(s, NULL, 0)` on a whole token: `0x` hex, leading `0`
/// octal, else decimal; parsing stops at the first invalid digit. `None`
/// when no digit at all.
fn strtoul_auto(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.starts_with('0') {
        (s, 8)
    } else {
        (s, 10)
    };
    let mut v: u64 = 0;
    let mut any = false;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
        any = true;
    }
    any.then_some(v)
}

/// Common trailing options of byte_test / byte_jump / byte_extract.
#[derive(Default)]
struct Common {
    relative: bool,
    endian: Option<Endian>,
    string: Option<NumBase>,
    bitmask: Option<u64>,
    multiplier: Option<u32>,
    align: bool,
    align_n: Option<u8>,
    from_beginning: bool,
    from_end: bool,
    post_offset: Option<i32>,
}

fn common(kw: &'static str, opts: &[&str]) -> PResult<Common> {
    let mut c = Common::default();
    let mut i = 0;
    while let Some(&o) = opts.get(i) {
        i += 1;
        let (k, arg) = match o.split_once(char::is_whitespace) {
            Some((k, a)) => (k, Some(a.trim())),
            None => (o, None),
        };
        match (k, arg) {
            ("relative", None) => c.relative = true,
            ("big", None) => set_endian(kw, &mut c, Endian::Big)?,
            ("little", None) => set_endian(kw, &mut c, Endian::Little)?,
            ("dce", None) => set_endian(kw, &mut c, Endian::Dce)?,
            ("string", None) => {
                // The base is the next comma-separated element, when it is one.
                match opts.get(i).copied() {
                    Some(b @ ("dec" | "hex" | "oct")) => {
                        c.string = Some(base(kw, b)?);
                        i += 1;
                    }
                    _ if kw == "byte_extract" => c.string = Some(NumBase::Dec),
                    _ => return Err(ParseError::bad(kw, "`string` needs dec, hex or oct")),
                }
            }
            ("string", Some(b)) => c.string = Some(base(kw, b)?),
            ("bitmask", Some(m)) => {
                // byte_math reads its bitmask as hex; byte_test/byte_jump
                // like strtoul base 0 (`0x` hex, leading `0` octal, else
                // decimal, stopping at the first bad digit: "0ff0" is 0).
                let v = if kw == "byte_math" {
                    let h = m
                        .strip_prefix("0x")
                        .or_else(|| m.strip_prefix("0X"))
                        .unwrap_or(m);
                    u64::from_str_radix(h, 16).ok()
                } else {
                    strtoul_auto(m)
                };
                let m = v.ok_or_else(|| ParseError::bad(kw, format!("bad bitmask `{m}`")))?;
                if m > u64::from(u32::MAX) {
                    return Err(ParseError::bad(kw, "bitmask must fit in 32 bits"));
                }
                c.bitmask = Some(m);
            }
            ("multiplier", Some(m)) => {
                let m = u32_of(kw, m)?;
                if m == 0 || m > 65535 {
                    return Err(ParseError::bad(kw, "multiplier must be 1..65535"));
                }
                c.multiplier = Some(m);
            }
            ("align", None) => c.align = true,
            ("align", Some(a)) => {
                c.align_n = Some(match a {
                    "2" => 2,
                    "4" => 4,
                    _ => return Err(ParseError::bad(kw, "align must be 2 or 4")),
                })
            }
            ("from_beginning", None) => c.from_beginning = true,
            ("from_end", None) => c.from_end = true,
            ("post_offset", Some(p)) => c.post_offset = Some(i32_offset(kw, p)?),
            _ => return Err(ParseError::bad(kw, format!("unknown option `{o}`"))),
        }
    }
    if c.from_beginning && c.from_end {
        return Err(ParseError::bad(kw, "from_beginning and from_end together"));
    }
    Ok(c)
}

fn set_endian(kw: &'static str, c: &mut Common, e: Endian) -> PResult<()> {
    if c.endian.is_some() {
        return Err(ParseError::bad(kw, "endianness given twice"));
    }
    c.endian = Some(e);
    Ok(())
}

/// `byte_test:n,[!]op,value,offset[,options]`.
pub fn parse_byte_test(v: &str, vars: &[String]) -> PResult<ByteTest> {
    const KW: &str = "byte_test";
    let p = parts(v);
    if p.len() < 4 {
        return Err(ParseError::bad(
            KW,
            "needs bytes, operator, value and offset",
        ));
    }
    let c = common(KW, &p[4..])?;
    let (negated, op) = match p[1].strip_prefix('!') {
        Some(o) => (true, o.trim()),
        None => (false, p[1]),
    };
    let (negated, op) = match op {
        "<" => (negated, ByteTestOp::Lt),
        ">" => (negated, ByteTestOp::Gt),
        "=" => (negated, ByteTestOp::Eq),
        "" if negated => (true, ByteTestOp::Eq),
        "<=" => (negated, ByteTestOp::Le),
        ">=" => (negated, ByteTestOp::Ge),
        "&" => (negated, ByteTestOp::And),
        "^" => (negated, ByteTestOp::Or),
        _ => return Err(ParseError::bad(KW, format!("bad operator `{}`", p[1]))),
    };
    if c.multiplier.is_some()
        || c.align
        || c.align_n.is_some()
        || c.from_beginning
        || c.from_end
        || c.post_offset.is_some()
    {
        return Err(ParseError::bad(KW, "byte_jump-only option"));
    }
    // The byte count may be a variable (Suricata 7); it is checked at match time.
    let nb = match nbytes(KW, p[0], c.string.is_some()) {
        Ok(n) => IntOrVar::Lit(i64::from(n)),
        Err(e) if parse_i64(p[0]).is_some() => return Err(e),
        Err(_) => IntOrVar::Var(lookup_var(KW, p[0], vars)?),
    };
    Ok(ByteTest {
        nbytes: nb,
        negated,
        op,
        value: int_or_var(KW, p[2], vars, 0, i64::MAX)?,
        offset: int_or_var(KW, p[3], vars, -65535, 65535)?,
        relative: c.relative,
        endian: c.endian.unwrap_or_default(),
        string: c.string,
        bitmask: c.bitmask,
    })
}

/// `byte_jump:n,offset[,options]`.
pub fn parse_byte_jump(v: &str, vars: &[String]) -> PResult<ByteJump> {
    const KW: &str = "byte_jump";
    let p = parts(v);
    if p.len() < 2 {
        return Err(ParseError::bad(KW, "needs bytes and offset"));
    }
    let c = common(KW, &p[2..])?;
    if c.align_n.is_some() {
        return Err(ParseError::bad(KW, "`align` takes no value"));
    }
    // Suricata 7: a count starting with a letter names a variable, checked at match time.
    let nb = if p[0].starts_with(|c: char| c.is_ascii_alphabetic()) {
        IntOrVar::Var(lookup_var(KW, p[0], vars)?)
    } else {
        IntOrVar::Lit(i64::from(nbytes(KW, p[0], c.string.is_some())?))
    };
    Ok(ByteJump {
        nbytes: nb,
        offset: int_or_var(KW, p[1], vars, -65535, 65535)?,
        relative: c.relative,
        multiplier: c.multiplier.unwrap_or(1),
        endian: c.endian.unwrap_or_default(),
        string: c.string,
        align: c.align,
        from_beginning: c.from_beginning,
        from_end: c.from_end,
        post_offset: c.post_offset.unwrap_or(0),
        bitmask: c.bitmask,
    })
}

/// `byte_extract:n,offset,name[,options]`; `vars` gains the new name.
pub fn parse_byte_extract(v: &str, vars: &mut Vec<String>) -> PResult<ByteExtract> {
    const KW: &str = "byte_extract";
    let p = parts(v);
    if p.len() < 3 {
        return Err(ParseError::bad(
            KW,
            "needs bytes, offset and a variable name",
        ));
    }
    let c = common(KW, &p[3..])?;
    if c.align || c.from_beginning || c.from_end || c.post_offset.is_some() || c.bitmask.is_some() {
        return Err(ParseError::bad(KW, "option not valid for byte_extract"));
    }
    let slot = new_var(KW, p[2], vars)?;
    Ok(ByteExtract {
        nbytes: nbytes(KW, p[0], c.string.is_some())?,
        offset: i32_offset(KW, p[1])?,
        var: slot,
        relative: c.relative,
        multiplier: c.multiplier.unwrap_or(1),
        endian: c.endian.unwrap_or_default(),
        string: c.string,
        align: c.align_n.unwrap_or(0),
    })
}

fn new_var(kw: &'static str, name: &str, vars: &mut Vec<String>) -> PResult<u8> {
    // Suricata's byte_extract/byte_math grammar: any run of characters but whitespace and `,`.
    let valid = !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == ',');
    if !valid {
        return Err(ParseError::bad(kw, format!("bad variable name `{name}`")));
    }
    if let Some(i) = vars.iter().position(|v| v == name) {
        return u8::try_from(i).map_err(|_| ParseError::bad(kw, "too many variables"));
    }
    if vars.len() >= 64 {
        return Err(ParseError::bad(kw, "too many variables"));
    }
    vars.push(name.to_string());
    u8::try_from(vars.len() - 1).map_err(|_| ParseError::bad(kw, "too many variables"))
}

/// `byte_math:bytes N, offset N, oper OP, rvalue V, result NAME[, options]`.
pub fn parse_byte_math(v: &str, vars: &mut Vec<String>) -> PResult<ByteMath> {
    const KW: &str = "byte_math";
    let mut nb = None;
    let mut offset = None;
    let mut op = None;
    let mut rvalue = None;
    let mut result = None;
    let mut rest = Vec::new();
    let p = parts(v);
    let mut i = 0;
    while let Some(&o) = p.get(i) {
        i += 1;
        let (k, a) = match o.split_once(char::is_whitespace) {
            Some((k, a)) => (k, a.trim()),
            None => (o, ""),
        };
        match k {
            "bytes" => nb = Some(int_or_var(KW, a, vars, 1, 10)?),
            "offset" => offset = Some(i32_offset(KW, a)?),
            "oper" => {
                op = Some(match a {
                    "+" => MathOp::Add,
                    "-" => MathOp::Sub,
                    "*" => MathOp::Mul,
                    "/" => MathOp::Div,
                    "<<" => MathOp::Shl,
                    ">>" => MathOp::Shr,
                    _ => return Err(ParseError::bad(KW, format!("bad operator `{a}`"))),
                })
            }
            "rvalue" => rvalue = Some(int_or_var(KW, a, vars, 0, i64::from(u32::MAX))?),
            "result" => result = Some(a),
            "endian" => rest.push(match a {
                "big" => "big",
                "little" => "little",
                "dce" => "dce",
                _ => return Err(ParseError::bad(KW, format!("bad endian `{a}`"))),
            }),
            "string" => {
                rest.push("string");
                rest.push(match a {
                    "dec" => "dec",
                    "hex" => "hex",
                    "oct" => "oct",
                    _ => return Err(ParseError::bad(KW, format!("bad string base `{a}`"))),
                });
            }
            _ => rest.push(o),
        }
    }
    let c = common(KW, &rest)?;
    let missing = |w: &str| ParseError::bad(KW, format!("missing `{w}`"));
    let nbytes = nb.ok_or_else(|| missing("bytes"))?;
    let op = op.ok_or_else(|| missing("oper"))?;
    if let IntOrVar::Lit(n) = nbytes {
        if matches!(op, MathOp::Shl | MathOp::Shr) && n > 4 {
            return Err(ParseError::bad(KW, "bytes must be 1..4 with `<<` or `>>`"));
        }
        if c.endian == Some(Endian::Dce) && ![1, 2, 4].contains(&n) {
            return Err(ParseError::bad(KW, "bytes must be 1, 2 or 4 with `dce`"));
        }
    }
    if let (MathOp::Div, IntOrVar::Lit(0)) = (op, rvalue.unwrap_or(IntOrVar::Lit(1))) {
        return Err(ParseError::bad(KW, "division by zero"));
    }
    let name = result.ok_or_else(|| missing("result"))?;
    let result = new_var(KW, name, vars)?;
    Ok(ByteMath {
        nbytes,
        offset: offset.ok_or_else(|| missing("offset"))?,
        op,
        rvalue: rvalue.ok_or_else(|| missing("rvalue"))?,
        result,
        relative: c.relative,
        endian: c.endian.unwrap_or_default(),
        string: c.string,
        bitmask: c.bitmask,
    })
}

/// `isdataat:[!]N|var[,relative][,rawbytes]`.
pub fn parse_isdataat(v: &str, vars: &[String]) -> PResult<IsDataAt> {
    const KW: &str = "isdataat";
    let p = parts(v);
    let first = p.first().copied().unwrap_or("");
    let (negated, pos) = match first.strip_prefix('!') {
        Some(r) => (true, r.trim()),
        None => (false, first),
    };
    let mut relative = false;
    for o in p.iter().skip(1) {
        match *o {
            "relative" => relative = true,
            "rawbytes" => {}
            _ => return Err(ParseError::bad(KW, format!("unknown option `{o}`"))),
        }
    }
    Ok(IsDataAt {
        pos: int_or_var(KW, pos, vars, 0, 65535)?,
        negated,
        relative,
    })
}

/// `base64_decode[:bytes N][, offset N][, relative]`.
pub fn parse_base64_decode(v: Option<&str>) -> PResult<Base64Decode> {
    const KW: &str = "base64_decode";
    let mut d = Base64Decode::default();
    let Some(v) = v else { return Ok(d) };
    for o in parts(v).into_iter().filter(|o| !o.is_empty()) {
        match o.split_once(char::is_whitespace) {
            Some(("bytes", n)) => {
                d.bytes = u32_of(KW, n.trim())?;
                if d.bytes == 0 {
                    return Err(ParseError::bad(KW, "bytes must be > 0"));
                }
            }
            Some(("offset", n)) => d.offset = u32_of(KW, n.trim())?,
            None if o == "relative" => d.relative = true,
            _ => return Err(ParseError::bad(KW, format!("unknown option `{o}`"))),
        }
    }
    Ok(d)
}
