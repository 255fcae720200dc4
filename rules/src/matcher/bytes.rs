//! `byte_test`, `byte_jump`, `byte_extract`, `byte_math` and base64.

use super::{MatchEnv, Scratch};
use crate::parse::{
    ByteExtract, ByteJump, ByteMath, ByteTest, ByteTestOp, Endian, IntOrVar, MathOp, NumBase,
};

fn var(sc: &Scratch, slot: u8) -> u64 {
    sc.vars.get(usize::from(slot)).copied().unwrap_or(0)
}

/// A byte count taken from a variable, validated at match time as Suricata does: at most
/// 8 (23 with `string`), at least `min`; anything else is no match.
fn var_nbytes(sc: &Scratch, slot: u8, string: bool, min: u64) -> Option<usize> {
    let max = if string { 23 } else { 8 };
    let n = var(sc, slot) as u32 as i32;
    u64::try_from(n)
        .ok()
        .filter(|&n| n >= min && n <= max)
        .map(|n| n as usize)
}

/// Resolves an offset; variables are truncated to `i32` like Suricata.
fn offset_of(v: IntOrVar, sc: &Scratch) -> i64 {
    match v {
        IntOrVar::Lit(n) => n,
        IntOrVar::Var(s) => i64::from(var(sc, s) as u32 as i32),
    }
}

/// Start of a read of `nbytes` at `offset` (relative to `cursor` when
/// `relative`), with Suricata's bounds rules.
fn locate(buf: &[u8], cursor: usize, offset: i64, relative: bool, nbytes: usize) -> Option<usize> {
    let blen = buf.len() as i64;
    if blen == 0 {
        return None;
    }
    let (pos, left) = if relative {
        let p = cursor as i64 + offset;
        let left = blen - cursor as i64 - offset;
        if left <= 0 {
            return None;
        }
        (p, left)
    } else {
        (offset, blen - offset)
    };
    if pos < 0 || nbytes as i64 > left {
        return None;
    }
    usize::try_from(pos).ok()
}

/// Parses like C `strtoull` on at most `bytes.len()` bytes: leading
/// whitespace, optional sign, `0x` for hex, then digits. Returns the value
/// and the bytes consumed, or `None` when no digit was read or on overflow.
pub fn extract_string(bytes: &[u8], base: NumBase) -> Option<(u64, usize)> {
    let radix = base.radix();
    let mut i = 0;
    while bytes
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
    {
        i += 1;
    }
    let mut neg = false;
    if let Some(&s @ (b'+' | b'-')) = bytes.get(i) {
        neg = s == b'-';
        i += 1;
    }
    if radix == 16
        && bytes.get(i) == Some(&b'0')
        && matches!(bytes.get(i + 1), Some(b'x' | b'X'))
        && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        i += 2;
    }
    let start = i;
    let mut v: u64 = 0;
    while let Some(d) = bytes.get(i).and_then(|&b| (b as char).to_digit(radix)) {
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { v.wrapping_neg() } else { v }, i))
}

fn extract(
    buf: &[u8],
    pos: usize,
    nbytes: usize,
    string: Option<NumBase>,
    little: bool,
) -> Option<(u64, usize)> {
    // `string` with 0 bytes reads the number at `pos` whatever its length
    // (Suricata 7.0.10: `byte_test:0,=,123,0,string,dec` matches "123abc").
    let end = if nbytes == 0 && string.is_some() {
        buf.len()
    } else {
        pos.checked_add(nbytes)?
    };
    let bytes = buf.get(pos..end)?;
    match string {
        Some(base) => extract_string(bytes, base).filter(|&(_, used)| used > 0),
        None => {
            if bytes.is_empty() || bytes.len() > 8 {
                return None;
            }
            let mut v: u64 = 0;
            if little {
                for &b in bytes.iter().rev() {
                    v = (v << 8) | u64::from(b);
                }
            } else {
                for &b in bytes {
                    v = (v << 8) | u64::from(b);
                }
            }
            Some((v, nbytes))
        }
    }
}

fn little(e: Endian, env: &MatchEnv) -> bool {
    match e {
        Endian::Big => false,
        Endian::Little => true,
        Endian::Dce => env.dce_little_endian,
    }
}

fn apply_mask(v: u64, mask: Option<u64>) -> u64 {
    match mask {
        Some(m) => {
            let v = v & m;
            if v != 0 {
                v >> m.trailing_zeros()
            } else {
                v
            }
        }
        None => v,
    }
}

/// `byte_test`: true when the comparison (after negation) holds.
pub(crate) fn byte_test(
    t: &ByteTest,
    buf: &[u8],
    cursor: usize,
    sc: &Scratch,
    env: &MatchEnv,
) -> bool {
    let nbytes = match t.nbytes {
        IntOrVar::Lit(n) => usize::try_from(n).unwrap_or(0),
        IntOrVar::Var(s) => match var_nbytes(sc, s, t.string.is_some(), 1) {
            Some(n) => n,
            None => return false,
        },
    };
    let Some(pos) = locate(buf, cursor, offset_of(t.offset, sc), t.relative, nbytes) else {
        return false;
    };
    let Some((v, _)) = extract(buf, pos, nbytes, t.string, little(t.endian, env)) else {
        return false;
    };
    let v = apply_mask(v, t.bitmask);
    let value = match t.value {
        IntOrVar::Lit(n) => n as u64,
        IntOrVar::Var(s) => var(sc, s),
    };
    let m = match t.op {
        ByteTestOp::Eq => v == value,
        ByteTestOp::Lt => v < value,
        ByteTestOp::Gt => v > value,
        ByteTestOp::Le => v <= value,
        ByteTestOp::Ge => v >= value,
        ByteTestOp::And => v & value != 0,
        ByteTestOp::Or => v ^ value != 0,
    };
    m != t.negated
}

/// `byte_jump`: the new cursor, or `None` for no match.
pub(crate) fn byte_jump(
    j: &ByteJump,
    buf: &[u8],
    cursor: usize,
    sc: &Scratch,
    env: &MatchEnv,
) -> Option<usize> {
    let nbytes = match j.nbytes {
        IntOrVar::Lit(n) => usize::try_from(n).unwrap_or(0),
        IntOrVar::Var(s) => var_nbytes(sc, s, j.string.is_some(), 0)?,
    };
    let offset = offset_of(j.offset, sc);
    if j.relative && nbytes > 0 && buf.len() as i64 - cursor as i64 - offset <= 0 {
        return None;
    }
    let (pos, v, used) = if nbytes == 0 && j.string.is_none() {
        // Suricata extracts nothing (value 0) and jumps from the read position, which may
        // be the end of the buffer.
        let p = if j.relative {
            cursor as i64 + offset
        } else {
            offset
        };
        if buf.is_empty() || p < 0 || p > buf.len() as i64 {
            return None;
        }
        (usize::try_from(p).ok()?, 0, 0)
    } else {
        let pos = locate(buf, cursor, offset, j.relative, nbytes)?;
        let (v, used) = extract(buf, pos, nbytes, j.string, little(j.endian, env))?;
        (pos, v, used)
    };
    let mut v = apply_mask(v, j.bitmask).wrapping_mul(u64::from(j.multiplier));
    if j.align && v % 4 != 0 {
        v = v.wrapping_add(4 - v % 4);
    }
    let v = v.wrapping_add(j.post_offset as i64 as u64) as i64;
    let blen = buf.len() as i64;
    let target = if j.from_beginning {
        v
    } else if j.from_end {
        blen.wrapping_add(v)
    } else {
        (pos as i64).wrapping_add(v).wrapping_add(used as i64)
    };
    if target > blen {
        return None;
    }
    usize::try_from(target.max(0)).ok()
}

/// `byte_extract`: stores the value and returns the new cursor.
pub(crate) fn byte_extract(
    x: &ByteExtract,
    buf: &[u8],
    cursor: usize,
    sc: &mut Scratch,
    env: &MatchEnv,
) -> Option<usize> {
    let nbytes = usize::from(x.nbytes);
    let pos = locate(buf, cursor, i64::from(x.offset), x.relative, nbytes)?;
    let (v, used) = extract(buf, pos, nbytes, x.string, little(x.endian, env))?;
    let mut v = v.wrapping_mul(u64::from(x.multiplier));
    let a = u64::from(x.align);
    if a > 1 && v % a != 0 {
        v = v.wrapping_add(a - v % a);
    }
    *sc.vars.get_mut(usize::from(x.var))? = v;
    Some(pos + used)
}

/// `byte_math`: stores the result and returns the new cursor.
pub(crate) fn byte_math(
    m: &ByteMath,
    buf: &[u8],
    cursor: usize,
    sc: &mut Scratch,
    env: &MatchEnv,
) -> Option<usize> {
    let nbytes = match m.nbytes {
        IntOrVar::Lit(n) => usize::try_from(n).ok()?,
        IntOrVar::Var(s) => usize::from(var(sc, s) as u8),
    };
    let pos = locate(buf, cursor, i64::from(m.offset), m.relative, nbytes)?;
    let (v, used) = extract(buf, pos, nbytes, m.string, little(m.endian, env))?;
    let r = match m.rvalue {
        IntOrVar::Lit(n) => n as u64,
        IntOrVar::Var(s) => var(sc, s),
    };
    let v = match m.op {
        MathOp::Add => v.wrapping_add(r),
        MathOp::Sub => v.wrapping_sub(r),
        MathOp::Mul => v.wrapping_mul(r),
        MathOp::Div => v.checked_div(r)?,
        MathOp::Shl => u32::try_from(r)
            .ok()
            .and_then(|s| v.checked_shl(s))
            .unwrap_or(0),
        MathOp::Shr => u32::try_from(r)
            .ok()
            .and_then(|s| v.checked_shr(s))
            .unwrap_or(0),
    };
    *sc.vars.get_mut(usize::from(m.result))? = apply_mask(v, m.bitmask);
    Some(pos + used)
}

fn b64_value(c: u8) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    })
}

/// Relaxed base64 decoding into `out` (cleared first): characters outside
/// the alphabet are skipped, decoding stops at `=`, a trailing partial
/// group contributes its complete bytes. Reuses `out`'s capacity.
pub(crate) fn base64_decode_relaxed(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut acc: u32 = 0;
    let mut n = 0;
    for &c in input {
        if c == b'=' {
            break;
        }
        let Some(v) = b64_value(c) else { continue };
        acc = (acc << 6) | u32::from(v);
        n += 1;
        if n == 4 {
            out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]);
            acc = 0;
            n = 0;
        }
    }
    match n {
        2 => out.push((acc >> 4) as u8),
        3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
        _ => {}
    }
}
