//! SIP message parsing, with the grammar and acceptance of Suricata 7's SIP parser
//! (`rust/src/sip/parser.rs`): a whole message per call (a UDP datagram), request line or
//! status line, headers up to the empty line, the rest is the body.

/// Why a message was not parsed (Suricata's two events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The message ends before it is complete (`incomplete_data`).
    Incomplete,
    /// The message does not follow the grammar (`invalid_data`).
    Invalid,
}

/// Most headers kept per message (the rest are checked but not stored).
pub const MAX_HEADERS: usize = 64;

/// A parsed request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `INVITE`.
    pub method: Vec<u8>,
    /// The request URI.
    pub uri: Vec<u8>,
    /// `SIP/2.0`.
    pub version: Vec<u8>,
    /// Headers in order (name, value), at most [`MAX_HEADERS`].
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Body length.
    pub body_len: usize,
}

/// A parsed response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// `SIP/2.0`.
    pub version: Vec<u8>,
    /// Three characters: `200`.
    pub code: Vec<u8>,
    /// `OK`.
    pub reason: Vec<u8>,
    /// Headers in order (name, value), at most [`MAX_HEADERS`].
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Body length.
    pub body_len: usize,
}

type PResult<'a, T> = Result<(&'a [u8], T), Error>;

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!%'*+-._`~".contains(&b)
}

fn is_uri_char(b: u8) -> bool {
    is_token_char(b) || b"~#@:;=?+&$,/".contains(&b)
}

fn is_version_char(b: u8) -> bool {
    b.is_ascii_digit() || b == b'.'
}

/// Characters of a reason phrase, and of the line Suricata logs as `request_line` /
/// `response_line`.
pub fn is_reason_char(b: u8) -> bool {
    is_token_char(b) || b"$&(),/:;=?@[\\]^ ".contains(&b)
}

fn is_header_name_char(b: u8) -> bool {
    is_token_char(b)
}

fn is_header_value_char(b: u8) -> bool {
    is_token_char(b) || b"\"#$&(),/;:<=>?@[]{}()^|~\\\t\n\r ".contains(&b)
}

/// Streaming `take_while`: at least `min` matching bytes followed by a non-matching one.
fn take_while(i: &[u8], min: usize, f: impl Fn(u8) -> bool) -> PResult<'_, &[u8]> {
    match i.iter().position(|&b| !f(b)) {
        None => Err(Error::Incomplete),
        Some(n) if n < min => Err(Error::Invalid),
        Some(n) => Ok((&i[n..], &i[..n])),
    }
}

fn char_(i: &[u8], c: u8) -> PResult<'_, ()> {
    match i.first() {
        None => Err(Error::Incomplete),
        Some(&b) if b == c => Ok((&i[1..], ())),
        Some(_) => Err(Error::Invalid),
    }
}

fn crlf(i: &[u8]) -> PResult<'_, ()> {
    match i {
        [] | [b'\r'] => Err(Error::Incomplete),
        [b'\r', b'\n', rest @ ..] => Ok((rest, ())),
        _ => Err(Error::Invalid),
    }
}

fn version(i: &[u8]) -> PResult<'_, Vec<u8>> {
    const TAG: &[u8] = b"SIP/";
    let n = i.len().min(TAG.len());
    if i[..n] != TAG[..n] {
        return Err(Error::Invalid);
    }
    if n < TAG.len() {
        return Err(Error::Incomplete);
    }
    let (rest, v) = take_while(&i[4..], 1, is_version_char)?;
    Ok((rest, i[..4 + v.len()].to_vec()))
}

/// A header value as Suricata takes it: folded lines continue it, trailing blanks are left
/// out, any other character than the allowed ones makes the message incomplete.
fn header_value(buf: &[u8]) -> PResult<'_, &[u8]> {
    let mut end = 0;
    let mut trail = 0;
    let mut idx = 0;
    while idx < buf.len() {
        match buf[idx] {
            b'\n' => {
                idx += 1;
                match buf.get(idx) {
                    None => return Err(Error::Incomplete),
                    Some(b' ' | b'\t') => {
                        idx += 1;
                        continue;
                    }
                    Some(_) => {
                        let from = (end + trail).min(buf.len());
                        return Ok((&buf[from..], &buf[..end]));
                    }
                }
            }
            b' ' | b'\t' => trail += 1,
            b'\r' => {}
            b => {
                trail = 0;
                if !is_header_value_char(b) {
                    return Err(Error::Incomplete);
                }
                end = idx + 1;
            }
        }
        idx += 1;
    }
    Ok((&buf[buf.len()..], buf))
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The full name of a compact header name (RFC 3261 7.3.3), as Suricata 8 stores them.
fn expand_name(n: &[u8]) -> &[u8] {
    match n {
        b"i" => b"Call-ID",
        b"m" => b"Contact",
        b"e" => b"Content-Encoding",
        b"l" => b"Content-Length",
        b"c" => b"Content-Type",
        b"f" => b"From",
        b"s" => b"Subject",
        b"k" => b"Supported",
        b"t" => b"To",
        b"v" => b"Via",
        _ => n,
    }
}

/// Headers up to (not including) the empty line's CRLF.
fn headers(mut i: &[u8]) -> PResult<'_, Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    loop {
        match crlf(i) {
            Ok(_) => break,
            Err(Error::Incomplete) => return Err(Error::Incomplete),
            Err(Error::Invalid) => {}
        }
        let (r, name) = take_while(i, 0, is_header_name_char)?;
        let (r, _) = take_while(r, 0, is_space)?;
        let (r, _) = char_(r, b':')?;
        let (r, _) = take_while(r, 0, is_space)?;
        let (r, value) = header_value(r)?;
        let (r, _) = crlf(r)?;
        if out.len() < MAX_HEADERS {
            out.push((expand_name(name).to_vec(), value.to_vec()));
        }
        i = r;
    }
    Ok((i, out))
}

/// Parse a request message.
pub fn parse_request(i: &[u8]) -> Result<Request, Error> {
    let (r, method) = take_while(i, 0, |b| b.is_ascii_alphabetic())?;
    let (r, _) = char_(r, b' ')?;
    let (r, uri) = take_while(r, 1, is_uri_char)?;
    let (r, _) = char_(r, b' ')?;
    let (r, version) = version(r)?;
    let (r, _) = crlf(r)?;
    let (r, headers) = headers(r)?;
    let (body, _) = crlf(r)?;
    Ok(Request {
        method: method.to_vec(),
        uri: uri.to_vec(),
        version,
        headers,
        body_len: body.len(),
    })
}

/// Parse a response message.
pub fn parse_response(i: &[u8]) -> Result<Response, Error> {
    let (r, version) = version(i)?;
    let (r, _) = char_(r, b' ')?;
    if r.len() < 3 {
        return Err(Error::Incomplete);
    }
    let code = &r[..3];
    if std::str::from_utf8(code).is_err() {
        return Err(Error::Invalid);
    }
    let r = &r[3..];
    let (r, _) = char_(r, b' ')?;
    let (r, reason) = take_while(r, 0, is_reason_char)?;
    let (r, _) = crlf(r)?;
    let (r, headers) = headers(r)?;
    let (body, _) = crlf(r)?;
    Ok(Response {
        version,
        code: code.to_vec(),
        reason: reason.to_vec(),
        headers,
        body_len: body.len(),
    })
}

/// The first line as Suricata logs it (`request_line` / `response_line`): the leading run of
/// reason-phrase characters, when there is one.
pub fn first_line(i: &[u8]) -> Option<&[u8]> {
    let n = i.iter().position(|&b| !is_reason_char(b))?;
    (n > 0).then(|| &i[..n])
}
