//! RDP connection sequence PDUs as Suricata 7.0.10's `rust/src/rdp/parser.rs` reads them:
//! TPKT (T.123), X.224 connection request/confirm with the cookie and the negotiation
//! request/response/failure, X.224 data carrying the MCS Connect Initial (client core and
//! network data) or the MCS Connect Response.
//!
//! Suricata's parsers are streaming nom parsers: a field cut short inside a complete TPKT is
//! "incomplete" ([`PErr::Incomplete`]), which makes Suricata wait for more data that can
//! never complete it; the caller treats it as the end of the direction.

/// Why a parse did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PErr {
    /// Not this structure.
    Error,
    /// Too few bytes.
    Incomplete,
}

type R<'a, T> = Result<(&'a [u8], T), PErr>;

fn take(i: &[u8], n: usize) -> R<'_, &[u8]> {
    if i.len() < n {
        Err(PErr::Incomplete)
    } else {
        Ok((&i[n..], &i[..n]))
    }
}

fn u8_(i: &[u8]) -> R<'_, u8> {
    take(i, 1).map(|(r, b)| (r, b[0]))
}

fn be16(i: &[u8]) -> R<'_, u16> {
    take(i, 2).map(|(r, b)| (r, u16::from_be_bytes([b[0], b[1]])))
}

fn le16(i: &[u8]) -> R<'_, u16> {
    take(i, 2).map(|(r, b)| (r, u16::from_le_bytes([b[0], b[1]])))
}

fn le32(i: &[u8]) -> R<'_, u32> {
    take(i, 4).map(|(r, b)| (r, u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
}

/// A streaming tag: a shorter input that is a prefix of `t` is incomplete.
fn tag<'a>(i: &'a [u8], t: &[u8]) -> R<'a, ()> {
    let n = i.len().min(t.len());
    if i[..n] != t[..n] {
        Err(PErr::Error)
    } else if n < t.len() {
        Err(PErr::Incomplete)
    } else {
        Ok((&i[n..], ()))
    }
}

/// Bytes up to `t`, and `t` consumed (incomplete when `t` is not there).
fn take_until_consume<'a>(i: &'a [u8], t: &[u8]) -> R<'a, &'a [u8]> {
    let pos = i
        .windows(t.len())
        .position(|w| w == t)
        .ok_or(PErr::Incomplete)?;
    Ok((&i[pos + t.len()..], &i[..pos]))
}

/// `opt`: an error is `None` (input unchanged), incomplete is passed on.
fn opt<'a, T>(i: &'a [u8], r: R<'a, T>) -> R<'a, Option<T>> {
    match r {
        Ok((rest, v)) => Ok((rest, Some(v))),
        Err(PErr::Error) => Ok((i, None)),
        Err(PErr::Incomplete) => Err(PErr::Incomplete),
    }
}

/// Little-endian UTF-16 up to the first NUL (invalid UTF-16: an error).
fn utf16_string(b: &[u8]) -> Result<String, PErr> {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    String::from_utf16(&units).map_err(|_| PErr::Error)
}

/// Bytes up to the first NUL as UTF-8 (invalid: an error).
fn nul_utf8_string(b: &[u8]) -> Result<String, PErr> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    std::str::from_utf8(&b[..end])
        .map(str::to_string)
        .map_err(|_| PErr::Error)
}

/// The server's answer in a connection confirm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Negotiation {
    /// RDP_NEG_RSP: flags and the selected protocol.
    Response {
        /// The flags byte.
        flags: u8,
        /// The selected protocol (0, 1, 2, 4 or 8).
        protocol: u32,
    },
    /// RDP_NEG_FAILURE: the failure code (1 to 6).
    Failure(u32),
}

/// The client core data (TS_UD_CS_CORE) as far as Suricata reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCore {
    pub version: u32,
    pub desktop_width: u16,
    pub desktop_height: u16,
    pub color_depth: u16,
    pub keyboard_layout: u32,
    pub client_build: u32,
    pub client_name: String,
    pub keyboard_type: u32,
    pub keyboard_subtype: u32,
    pub keyboard_function_key: u32,
    pub ime_file_name: String,
    pub post_beta2_color_depth: Option<u16>,
    pub client_product_id: Option<u16>,
    pub serial_number: Option<u32>,
    pub high_color_depth: Option<u16>,
    pub supported_color_depth: Option<u16>,
    pub early_capability_flags: Option<u16>,
    pub client_dig_product_id: Option<String>,
    pub connection_hint: Option<u8>,
    pub desktop_physical_width: Option<u32>,
    pub desktop_physical_height: Option<u32>,
    pub desktop_orientation: Option<u16>,
    pub desktop_scale_factor: Option<u32>,
    pub device_scale_factor: Option<u32>,
}

/// One user data block of the MCS Connect Initial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CsBlock {
    /// TS_UD_CS_CORE.
    Core(Box<ClientCore>),
    /// TS_UD_CS_NET: the channel names.
    Net(Vec<String>),
    /// Any other block (skipped by its length).
    Unknown,
}

/// What one TPKT carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pdu {
    /// X.224 connection request: the `mstshash` cookie, the negotiation request flags.
    ConnectionRequest {
        cookie: Option<String>,
        neg_flags: Option<u8>,
    },
    /// X.224 connection confirm.
    ConnectionConfirm(Option<Negotiation>),
    /// MCS Connect Initial.
    McsConnectRequest(Vec<CsBlock>),
    /// MCS Connect Response.
    McsConnectResponse,
    /// Anything else.
    Other,
}

/// One TPKT: an error when the first byte is not 3 or the length is below 4; incomplete
/// while the whole TPKT is not in (`Ok(None)`); `Err(Incomplete)` when a field inside the
/// complete TPKT is cut short.
pub fn tpkt(i: &[u8]) -> Result<Option<(usize, Pdu)>, PErr> {
    let (r, v) = match u8_(i) {
        Ok(x) => x,
        Err(_) => return Ok(None),
    };
    if v != 3 {
        return Err(PErr::Error);
    }
    let (r, len) = match u8_(r).and_then(|(r, _)| be16(r)) {
        Ok(x) => x,
        Err(_) => return Ok(None),
    };
    let sz = len.checked_sub(4).ok_or(PErr::Error)? as usize;
    if r.len() < sz {
        return Ok(None);
    }
    let data = &r[..sz];
    let total = 4 + sz;
    if let (_, Some(p)) = opt(data, x224_request(data))? {
        return Ok(Some((total, p)));
    }
    if let (_, Some(p)) = opt(data, x224_confirm(data))? {
        return Ok(Some((total, p)));
    }
    if let (_, Some(p)) = opt(data, x223_data(data))? {
        return Ok(Some((total, p)));
    }
    Ok(Some((total, Pdu::Other)))
}

/// The X.224 TPDU header: length indicator, code (`want`), CDT 0 or 1, DST-REF 0, SRC-REF,
/// class 0 and no options; returns the variable part.
fn x224_header(i: &[u8], want: u8) -> R<'_, &[u8]> {
    let (r, length) = u8_(i)?;
    if length == 0xff {
        return Err(PErr::Error);
    }
    let (r, code) = u8_(r)?;
    if code >> 4 != want || code & 0xf > 1 {
        return Err(PErr::Error);
    }
    let (r, dst_ref) = be16(r)?;
    if dst_ref != 0 {
        return Err(PErr::Error);
    }
    let (r, _src_ref) = be16(r)?;
    let (r, co) = u8_(r)?;
    let (class, options) = (co >> 4, co & 0xf);
    if class > 4 || options > 3 || length < 6 {
        return Err(PErr::Error);
    }
    let (r, var) = take(r, usize::from(length - 6))?;
    if class != 0 || options != 0 {
        return Err(PErr::Error);
    }
    Ok((r, var))
}

fn x224_request(i: &[u8]) -> R<'_, Pdu> {
    let (r, data) = x224_header(i, 0xe)?;
    let (j1, cookie) = if data.is_empty() {
        (data, None)
    } else {
        opt(data, rdp_cookie(data))?
    };
    let (_, neg) = if j1.is_empty() {
        (j1, None)
    } else {
        opt(j1, neg_request(j1))?
    };
    Ok((
        r,
        Pdu::ConnectionRequest {
            cookie,
            neg_flags: neg,
        },
    ))
}

fn rdp_cookie(i: &[u8]) -> R<'_, String> {
    let (i, _) = tag(i, b"Cookie: ")?;
    let (i, _) = tag(i, b"mstshash=")?;
    let (i, v) = take_until_consume(i, b"\r\n")?;
    let s = std::str::from_utf8(v).map_err(|_| PErr::Error)?;
    Ok((i, s.to_string()))
}

fn neg_request(i: &[u8]) -> R<'_, u8> {
    let (i, typ) = u8_(i)?;
    if typ != 1 {
        return Err(PErr::Error);
    }
    let (i, flags) = u8_(i)?;
    if flags & !0x0b != 0 {
        return Err(PErr::Error);
    }
    let (i, len) = le16(i)?;
    if len != 8 {
        return Err(PErr::Error);
    }
    let (i, protocols) = le32(i)?;
    if protocols & !0x0f != 0 {
        return Err(PErr::Error);
    }
    Ok((i, flags))
}

fn x224_confirm(i: &[u8]) -> R<'_, Pdu> {
    let (r, data) = x224_header(i, 0xd)?;
    if data.is_empty() {
        return Ok((r, Pdu::ConnectionConfirm(None)));
    }
    let (_, neg) = opt(data, neg_response(data))?;
    let neg = match neg {
        Some(n) => Some(n),
        None => opt(data, neg_failure(data))?.1,
    };
    Ok((r, Pdu::ConnectionConfirm(neg)))
}

fn neg_response(i: &[u8]) -> R<'_, Negotiation> {
    let (i, typ) = u8_(i)?;
    if typ != 2 {
        return Err(PErr::Error);
    }
    let (i, flags) = u8_(i)?;
    if flags & !0x1f != 0 {
        return Err(PErr::Error);
    }
    let (i, len) = le16(i)?;
    if len != 8 {
        return Err(PErr::Error);
    }
    let (i, protocol) = le32(i)?;
    if !matches!(protocol, 0 | 1 | 2 | 4 | 8) {
        return Err(PErr::Error);
    }
    Ok((i, Negotiation::Response { flags, protocol }))
}

fn neg_failure(i: &[u8]) -> R<'_, Negotiation> {
    let (i, typ) = u8_(i)?;
    if typ != 3 {
        return Err(PErr::Error);
    }
    let (i, _flags) = u8_(i)?;
    let (i, len) = le16(i)?;
    if len != 8 {
        return Err(PErr::Error);
    }
    let (i, code) = le32(i)?;
    if !(1..=6).contains(&code) {
        return Err(PErr::Error);
    }
    Ok((i, Negotiation::Failure(code)))
}

/// X.224 data TPDU (length 2, DT 0xf0, EOT 0x80) with MCS inside.
fn x223_data(i: &[u8]) -> R<'_, Pdu> {
    let (r, length) = u8_(i)?;
    if length != 2 {
        return Err(PErr::Error);
    }
    let (r, dt) = u8_(r)?;
    if dt != 0xf0 {
        return Err(PErr::Error);
    }
    let (r, eot) = u8_(r)?;
    if eot != 0x80 {
        return Err(PErr::Error);
    }
    if let (_, Some(blocks)) = opt(r, mcs_connect(r))? {
        return Ok((&[], Pdu::McsConnectRequest(blocks)));
    }
    if let (_, Some(())) = opt(r, mcs_connect_response(r))? {
        return Ok((&[], Pdu::McsConnectResponse));
    }
    Ok((&[], Pdu::Other))
}

/// A PER length determinant (one byte below 0x80, two bytes `10xxxxxx`; longer forms are
/// refused as by Suricata).
fn per_length(i: &[u8]) -> R<'_, usize> {
    let (r, b) = u8_(i)?;
    if b & 0x80 == 0 {
        Ok((r, usize::from(b)))
    } else if b & 0x40 == 0 {
        let (r, b2) = u8_(r)?;
        Ok((r, (usize::from(b & 0x3f) << 8) | usize::from(b2)))
    } else {
        Err(PErr::Error)
    }
}

fn mcs_connect(i: &[u8]) -> R<'_, Vec<CsBlock>> {
    let (i, ber) = u8_(i)?;
    if ber != 0x7f {
        return Err(PErr::Error);
    }
    let (i, t) = u8_(i)?;
    if t != 0x65 {
        return Err(PErr::Error);
    }
    let (i, _) = take_until_consume(i, b"Duca")?;
    let (i, len) = per_length(i)?;
    let (rest, mut data) = take(i, len)?;
    let mut blocks = Vec::new();
    loop {
        let (r, b) = match cs_block(data) {
            Ok(x) => x,
            Err(PErr::Incomplete) => return Err(PErr::Incomplete),
            Err(PErr::Error) => break,
        };
        blocks.push(b);
        data = r;
        if data.is_empty() {
            break;
        }
    }
    Ok((rest, blocks))
}

fn cs_block(i: &[u8]) -> R<'_, CsBlock> {
    if let (r, Some(c)) = opt(i, cs_core(i))? {
        return Ok((r, CsBlock::Core(Box::new(c))));
    }
    if let (r, Some(n)) = opt(i, cs_net(i))? {
        return Ok((r, CsBlock::Net(n)));
    }
    let (r, typ) = le16(i)?;
    if typ == 0xc001 || typ == 0xc003 {
        return Err(PErr::Error);
    }
    let (r, len) = le16(r)?;
    let sz = len.checked_sub(4).ok_or(PErr::Error)?;
    let (r, _) = take(r, usize::from(sz))?;
    Ok((r, CsBlock::Unknown))
}

/// An optional trailing field: absent (or invalid) ends the optional part.
fn trailing<T>(i: &mut &[u8], prev: bool, n: usize, f: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    if !prev || i.len() < n {
        return None;
    }
    let v = f(&i[..n])?;
    *i = &i[n..];
    Some(v)
}

fn cs_core(i: &[u8]) -> R<'_, ClientCore> {
    let (i, typ) = le16(i)?;
    if typ != 0xc001 {
        return Err(PErr::Error);
    }
    let (i, len) = le16(i)?;
    let sz = len.checked_sub(4).ok_or(PErr::Error)?;
    let (rest, d) = take(i, usize::from(sz))?;
    let mut c = ClientCore::default();
    let (d, v) = le32(d)?;
    c.version = v;
    let (d, v) = le16(d)?;
    c.desktop_width = v;
    let (d, v) = le16(d)?;
    c.desktop_height = v;
    let (d, v) = le16(d)?;
    c.color_depth = v;
    let (d, _sas) = le16(d)?;
    let (d, v) = le32(d)?;
    c.keyboard_layout = v;
    let (d, v) = le32(d)?;
    c.client_build = v;
    let (d, v) = take(d, 32)?;
    c.client_name = utf16_string(v)?;
    let (d, v) = le32(d)?;
    c.keyboard_type = v;
    let (d, v) = le32(d)?;
    c.keyboard_subtype = v;
    let (d, v) = le32(d)?;
    c.keyboard_function_key = v;
    let (mut d, v) = take(d, 64)?;
    c.ime_file_name = utf16_string(v)?;
    let u16_of = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    c.post_beta2_color_depth = trailing(&mut d, true, 2, |b| {
        Some(u16_of(b)).filter(|v| matches!(v, 0 | 0xca00..=0xca04))
    });
    c.client_product_id = trailing(&mut d, c.post_beta2_color_depth.is_some(), 2, |b| {
        Some(u16_of(b))
    });
    c.serial_number = trailing(&mut d, c.client_product_id.is_some(), 4, |b| {
        Some(u32_of(b))
    });
    c.high_color_depth = trailing(&mut d, c.serial_number.is_some(), 2, |b| {
        Some(u16_of(b)).filter(|v| matches!(v, 0 | 4 | 8 | 15 | 16 | 24))
    });
    c.supported_color_depth = trailing(&mut d, c.high_color_depth.is_some(), 2, |b| {
        Some(u16_of(b)).filter(|v| v & !0x0f == 0)
    });
    c.early_capability_flags = trailing(&mut d, c.supported_color_depth.is_some(), 2, |b| {
        Some(u16_of(b)).filter(|v| v & !0x07ff == 0)
    });
    c.client_dig_product_id = trailing(&mut d, c.early_capability_flags.is_some(), 64, |b| {
        utf16_string(b).ok()
    });
    c.connection_hint = trailing(&mut d, c.client_dig_product_id.is_some(), 1, |b| {
        Some(b[0]).filter(|v| *v <= 7)
    });
    let pad = trailing(&mut d, c.connection_hint.is_some(), 1, |_| Some(()));
    let selected = trailing(&mut d, pad.is_some(), 4, |b| {
        Some(u32_of(b)).filter(|v| v & !0x0f == 0)
    });
    let mm = |b: &[u8]| Some(u32_of(b)).filter(|v| (10..=10_000).contains(v));
    c.desktop_physical_width = trailing(&mut d, selected.is_some(), 4, mm);
    c.desktop_physical_height = trailing(&mut d, c.desktop_physical_width.is_some(), 4, mm);
    c.desktop_orientation = trailing(&mut d, c.desktop_physical_height.is_some(), 2, |b| {
        Some(u16_of(b)).filter(|v| matches!(v, 0 | 90 | 180 | 270))
    });
    c.desktop_scale_factor = trailing(&mut d, c.desktop_orientation.is_some(), 4, |b| {
        Some(u32_of(b)).filter(|v| (100..=500).contains(v))
    });
    c.device_scale_factor = trailing(&mut d, c.desktop_scale_factor.is_some(), 4, |b| {
        Some(u32_of(b)).filter(|v| matches!(v, 100 | 140 | 180))
    });
    Ok((rest, c))
}

fn cs_net(i: &[u8]) -> R<'_, Vec<String>> {
    let (i, typ) = le16(i)?;
    if typ != 0xc003 {
        return Err(PErr::Error);
    }
    let (i, len) = le16(i)?;
    let sz = len.checked_sub(8).ok_or(PErr::Error)?;
    let (i, count) = le32(i)?;
    let (rest, mut d) = take(i, usize::from(sz))?;
    let mut channels = Vec::new();
    for _ in 0..count {
        let (r, name) = take(d, 8)?;
        channels.push(nul_utf8_string(name)?);
        let (r, _options) = le32(r)?;
        d = r;
    }
    Ok((rest, channels))
}

fn mcs_connect_response(i: &[u8]) -> R<'_, ()> {
    let (i, ber) = u8_(i)?;
    if ber != 0x7f {
        return Err(PErr::Error);
    }
    let (i, t) = u8_(i)?;
    if t != 0x66 {
        return Err(PErr::Error);
    }
    Ok((i, ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_request() {
        let b = b"\x03\x00\x00\x25\x20\xe0\x00\x00\x00\x00\x00Cookie: mstshash=user123\r\n";
        assert_eq!(
            tpkt(b),
            Ok(Some((
                0x25,
                Pdu::ConnectionRequest {
                    cookie: Some("user123".into()),
                    neg_flags: None
                }
            )))
        );
        // cut anywhere: wait for more
        for n in 0..b.len() {
            assert_eq!(tpkt(&b[..n]), Ok(None), "{n}");
        }
        assert_eq!(tpkt(b"\x04\x00"), Err(PErr::Error));
        assert_eq!(tpkt(b"\x03\x00\x00\x01\x00"), Err(PErr::Error));
    }

    #[test]
    fn confirm_and_mcs_response() {
        let b = b"\x03\x00\x00\x13\x0e\xd0\x00\x00\x12\x34\x00\x02\x0f\x08\x00\x08\x00\x00\x00";
        assert_eq!(
            tpkt(b),
            Ok(Some((
                0x13,
                Pdu::ConnectionConfirm(Some(Negotiation::Response {
                    flags: 0x0f,
                    protocol: 8
                }))
            )))
        );
        let b = b"\x03\x00\x00\x09\x02\xf0\x80\x7f\x66";
        assert_eq!(tpkt(b), Ok(Some((9, Pdu::McsConnectResponse))));
        // a cookie without its CRLF inside a complete TPKT: incomplete forever
        let b = b"\x03\x00\x00\x12\x0d\xe0\x00\x00\x00\x00\x00Cookie:";
        assert_eq!(tpkt(b), Err(PErr::Incomplete));
    }

    #[test]
    fn per_lengths() {
        assert_eq!(per_length(b"\x05"), Ok((&b""[..], 5)));
        assert_eq!(per_length(b"\x81\x02"), Ok((&b""[..], 0x102)));
        assert_eq!(per_length(b"\xc0"), Err(PErr::Error));
        assert_eq!(per_length(b"\x81"), Err(PErr::Incomplete));
    }
}
