//! DNP3 application objects: the object headers (group, variation, qualifier with its
//! prefix and range codes) and the points of the objects Suricata 7 decodes
//! (`app-layer-dnp3-objects.c`, generated from `dnp3-objects.yaml`; shrike's table is
//! `table.rs`, generated from the same description).

use shrike_output::JsonWriter;

/// A field's wire type.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    /// 8-bit unsigned.
    U8,
    /// 16-bit little-endian unsigned.
    U16,
    /// 24-bit little-endian unsigned.
    U24,
    /// 32-bit little-endian unsigned.
    U32,
    /// 16-bit signed (logged as Suricata: sign-extended to an unsigned 64-bit value).
    I16,
    /// 32-bit signed (logged the same way).
    I32,
    /// IEEE 754 single.
    F32,
    /// IEEE 754 double.
    F64,
    /// 48-bit milliseconds.
    Time,
    /// One octet split into bit fields, least significant first: (name, width).
    Bits(&'static [(&'static str, u8)]),
    /// Four characters (logged up to the first NUL).
    Vstr4,
    /// Bytes of the given length (logged in base64).
    Bytes(Len),
    /// Characters of the given length, at most the size given (logged as a string).
    Chars(Len, u32),
}

/// Where a variable field's length comes from.
#[derive(Clone, Copy, Debug)]
pub enum Len {
    /// An integer field read before.
    Field(&'static str),
    /// The point's size prefix less the bytes read since the prefix.
    Prefix,
}

/// One field of an object.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The EVE key (bit fields: unused, their own names are in [`Ty::Bits`]).
    pub name: &'static str,
    /// The wire type.
    pub ty: Ty,
}

/// One implemented (group, variation).
#[derive(Clone, Copy, Debug)]
pub struct ObjDef {
    /// Group.
    pub group: u8,
    /// Variation.
    pub variation: u8,
    /// Packed points of this many bits each (0: not packed).
    pub packed: u8,
    /// The prefix code must be a size prefix.
    pub size_prefix: bool,
    /// The prefix code must be this one.
    pub prefix_code: Option<u8>,
    /// Fields in wire order.
    pub fields: &'static [Field],
}

/// The definition of (group, variation), if Suricata decodes it.
pub fn lookup(group: u8, variation: u8) -> Option<&'static ObjDef> {
    let t = super::table::OBJECTS;
    t.binary_search_by(|d| (d.group, d.variation).cmp(&(group, variation)))
        .ok()
        .and_then(|i| t.get(i))
}

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// An integer.
    U(u64),
    /// A float.
    F(f64),
    /// A string (bytes as received).
    S(Vec<u8>),
    /// Bytes, logged in base64.
    B(Vec<u8>),
}

/// One point of an object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Point {
    /// The prefix value (0 without a prefix).
    pub prefix: u32,
    /// The index: the prefix when it is an index, else the position from `start`.
    pub index: u32,
    /// The size, when the prefix is a size.
    pub size: u32,
    /// The fields, in logging order.
    pub values: Vec<(&'static str, Val)>,
}

/// One object header and its points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object {
    /// Group.
    pub group: u8,
    /// Variation.
    pub variation: u8,
    /// Qualifier octet.
    pub qualifier: u8,
    /// Prefix code (qualifier bits 4..7).
    pub prefix_code: u8,
    /// Range code (qualifier bits 0..4).
    pub range_code: u8,
    /// Range start.
    pub start: u32,
    /// Range stop.
    pub stop: u32,
    /// Count of points.
    pub count: u32,
    /// Decoded points.
    pub points: Vec<Point>,
}

/// Whether the prefix code gives a size (4, 5, 6).
pub fn prefix_is_size(code: u8) -> bool {
    matches!(code, 4..=6)
}

/// Why decoding stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every object was decoded.
    Complete,
    /// Ran out of data in an object header (no event, not complete).
    Short,
    /// An unknown object or a malformed one (Suricata raises `UNKNOWN_OBJECT` for both).
    Unknown,
    /// More points than `max-points`.
    TooManyPoints,
    /// More objects than `max-objects`.
    TooManyObjects,
}

/// A little reader with Suricata's all-or-nothing reads.
struct Rd<'a> {
    d: &'a [u8],
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.d.len() < n {
            return None;
        }
        let (a, b) = self.d.split_at(n);
        self.d = b;
        Some(a)
    }
    fn uint(&mut self, n: usize) -> Option<u64> {
        let b = self.take(n)?;
        Some(
            b.iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
        )
    }
    fn prefix(&mut self, code: u8) -> Option<u32> {
        let n = match code {
            1 | 4 => 1,
            2 | 5 => 2,
            3 | 6 => 4,
            _ => 0,
        };
        if n == 0 {
            return Some(0);
        }
        self.uint(n).and_then(|v| u32::try_from(v).ok())
    }
}

fn point(code: u8, index: u32, prefix: u32) -> Point {
    let mut p = Point {
        prefix,
        index,
        ..Default::default()
    };
    match code {
        1..=3 => p.index = prefix,
        4..=6 => p.size = prefix,
        _ => {}
    }
    p
}

/// Decode the points of one object (Suricata's `DNP3DecodeObject`): `None` when the data
/// is malformed or short. `points` gets what was decoded before.
fn decode_points(def: &ObjDef, r: &mut Rd<'_>, o: &mut Object) -> Option<()> {
    let code = o.prefix_code;
    let mut count = o.count;
    let mut index = o.start;
    if def.packed > 0 {
        let w = usize::from(def.packed);
        let mask = (1u8 << def.packed) - 1;
        let bytes = count / 8 + 1;
        let prefix = r.prefix(code)?;
        for _ in 0..bytes {
            let octet = r.uint(1)? as u8;
            let mut j = 0;
            while j < 8 && count > 0 {
                let mut p = point(code, index, prefix);
                let name = def.fields.first().map_or("state", |f| f.name);
                p.values
                    .push((name, Val::U(u64::from((octet >> j) & mask))));
                o.points.push(p);
                count -= 1;
                index = index.wrapping_add(1);
                j += w;
            }
        }
        return Some(());
    }
    if def.size_prefix && !prefix_is_size(code) {
        return None;
    }
    if def.prefix_code.is_some_and(|c| c != code) {
        return None;
    }
    if (r.d.len() as u64) < u64::from(count / 8) {
        return None;
    }
    while count > 0 {
        count -= 1;
        let prefix = r.prefix(code)?;
        let start_len = r.d.len();
        let mut p = point(code, index, prefix);
        // Integer fields read so far (lengths refer to them).
        let lookup_int = |p: &Point, n: &str| -> u64 {
            p.values
                .iter()
                .find_map(|(k, v)| match v {
                    Val::U(x) if *k == n => Some(*x),
                    _ => None,
                })
                .unwrap_or(0)
        };
        for f in def.fields {
            let v = match f.ty {
                Ty::U8 => Val::U(r.uint(1)?),
                Ty::U16 => Val::U(r.uint(2)?),
                Ty::U24 => Val::U(r.uint(3)?),
                Ty::U32 => Val::U(r.uint(4)?),
                Ty::I16 => Val::U(i64::from(r.uint(2)? as u16 as i16) as u64),
                Ty::I32 => Val::U(i64::from(r.uint(4)? as u32 as i32) as u64),
                Ty::Time => Val::U(r.uint(6)?),
                Ty::F32 => Val::F(f64::from(f32::from_bits(r.uint(4)? as u32))),
                Ty::F64 => Val::F(f64::from_bits(r.uint(8)?)),
                Ty::Bits(bits) => {
                    let octet = r.uint(1)? as u8;
                    let mut shift = 0u32;
                    for (name, w) in bits {
                        let mask = ((1u16 << w) - 1) as u8;
                        let x = octet.checked_shr(shift).unwrap_or(0) & mask;
                        p.values.push((name, Val::U(u64::from(x))));
                        shift += u32::from(*w);
                    }
                    continue;
                }
                Ty::Vstr4 => {
                    let b = r.take(4)?;
                    let n = b.iter().position(|&c| c == 0).unwrap_or(4);
                    Val::S(b.get(..n).unwrap_or_default().to_vec())
                }
                Ty::Bytes(len) => {
                    let n = match len {
                        Len::Field(n) => lookup_int(&p, n) as usize,
                        Len::Prefix => {
                            let used = (start_len - r.d.len()) as u32;
                            if prefix < used {
                                return None;
                            }
                            usize::from((prefix - used) as u16)
                        }
                    };
                    Val::B(r.take(n)?.to_vec())
                }
                Ty::Chars(len, size) => {
                    let n = match len {
                        Len::Field(n) => lookup_int(&p, n) as usize,
                        Len::Prefix => {
                            let used = (start_len - r.d.len()) as u32;
                            if prefix < used || prefix - used >= size {
                                return None;
                            }
                            (prefix - used) as usize
                        }
                    };
                    Val::S(r.take(n)?.to_vec())
                }
            };
            p.values.push((f.name, v));
        }
        o.points.push(p);
        index = index.wrapping_add(1);
    }
    Some(())
}

/// Decode the object headers and points of an application fragment's body (Suricata's
/// `DNP3DecodeApplicationObjects`), with the point and object limits.
pub fn decode_objects(
    mut buf: &[u8],
    out: &mut Vec<Object>,
    max_points: u64,
    max_objects: u64,
) -> Stop {
    let mut points = 0u64;
    while !buf.is_empty() {
        if buf.len() < 3 {
            return Stop::Short;
        }
        if out.len() as u64 >= max_objects {
            return Stop::TooManyObjects;
        }
        let q = buf[2];
        let mut o = Object {
            group: buf[0],
            variation: buf[1],
            qualifier: q,
            prefix_code: (q >> 4) & 7,
            range_code: q & 0xf,
            ..Default::default()
        };
        let mut r = Rd { d: &buf[3..] };
        let range = |r: &mut Rd<'_>, n: usize, o: &mut Object| -> Option<()> {
            o.start = r.uint(n)? as u32;
            o.stop = r.uint(n)? as u32;
            o.count = o.stop.wrapping_sub(o.start).wrapping_add(1);
            Some(())
        };
        let ok = match o.range_code {
            0 | 3 => range(&mut r, 1, &mut o),
            1 | 4 => range(&mut r, 2, &mut o),
            2 | 5 => range(&mut r, 4, &mut o),
            6 => Some(()),
            7 | 0xb => r.uint(1).map(|c| o.count = c as u32),
            8 => r.uint(2).map(|c| o.count = c as u32),
            9 => r.uint(4).map(|c| o.count = c as u32),
            _ => {
                out.push(o);
                return Stop::Short;
            }
        };
        if ok.is_none() {
            out.push(o);
            return Stop::Short;
        }
        if o.variation == 0 || o.count == 0 {
            buf = r.d;
            out.push(o);
            continue;
        }
        points += u64::from(o.count);
        if points > max_points {
            out.push(o);
            return Stop::TooManyPoints;
        }
        let Some(def) = lookup(o.group, o.variation) else {
            out.push(o);
            return Stop::Unknown;
        };
        let res = decode_points(def, &mut r, &mut o);
        buf = r.d;
        out.push(o);
        if res.is_none() {
            return Stop::Unknown;
        }
    }
    Stop::Complete
}

/// Write an object's points (`OutputJsonDNP3SetItem` and its caller).
pub fn write_points(w: &mut JsonWriter, o: &Object) {
    for p in &o.points {
        w.start_object();
        w.set_u64("prefix", u64::from(p.prefix));
        w.set_u64("index", u64::from(p.index));
        if prefix_is_size(o.prefix_code) {
            w.set_u64("size", u64::from(p.size));
        }
        for (k, v) in &p.values {
            match v {
                Val::U(x) => {
                    w.set_u64(k, *x);
                }
                Val::F(x) => {
                    w.set_f64(k, *x);
                }
                Val::S(s) => {
                    w.set_bytes(k, s);
                }
                Val::B(b) => {
                    w.set_base64(k, b);
                }
            }
        }
        w.close();
    }
}
