//! PostgreSQL wire protocol messages (frontend and backend), decoded the way Suricata 7's
//! `rust/src/pgsql/parser.rs` does: [`Parsed::Incomplete`] while a message is not all in,
//! [`Parsed::Error`] for data that cannot be PostgreSQL.

/// Outcome of parsing one message at the start of the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed<T> {
    /// A message and the bytes it took.
    Done(T, usize),
    /// More bytes are needed.
    Incomplete,
    /// Not a valid message.
    Error,
}

/// A startup or status parameter (`name`, `value`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Name as logged (Suricata's names: `DateStyle` becomes `date_style`).
    pub name: Vec<u8>,
    /// Value.
    pub value: Vec<u8>,
}

/// The EVE name of a parameter.
fn param_name(raw: &[u8]) -> Vec<u8> {
    let n: &[u8] = match raw {
        b"DateStyle" => b"date_style",
        b"IntervalStyle" => b"interval_style",
        b"TimeZone" => b"time_zone",
        other => other,
    };
    // Suricata logs a name that is not UTF-8 as `unknown_parameter`.
    if std::str::from_utf8(n).is_err() {
        return b"unknown_parameter".to_vec();
    }
    n.to_vec()
}

/// Frontend (client) messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeMessage {
    /// SSLRequest.
    SslRequest,
    /// StartupMessage: protocol version, `user` and the other parameters.
    Startup {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
        /// `user`.
        user: Vec<u8>,
        /// The other parameters, in order (`None` when there are none).
        params: Option<Vec<Param>>,
    },
    /// PasswordMessage.
    Password(Vec<u8>),
    /// SASLInitialResponse.
    SaslInitial {
        /// `scram_SHA256` / `scram_SHA256_plus`.
        mechanism: &'static str,
        /// Client-first message.
        param: Vec<u8>,
    },
    /// SASLResponse.
    SaslResponse(Vec<u8>),
    /// Query.
    SimpleQuery(Vec<u8>),
    /// CancelRequest.
    Cancel {
        /// Backend process id.
        pid: u32,
        /// Secret key.
        key: u32,
    },
    /// Terminate.
    Terminate,
    /// Any other typed message (not logged).
    Unknown,
}

/// Backend (server) messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BeMessage {
    /// `S` or `N` after an SSLRequest.
    SslResponse(bool),
    /// ErrorResponse fields (type name, value).
    Error(Vec<(&'static str, Vec<u8>)>),
    /// NoticeResponse fields.
    Notice(Vec<(&'static str, Vec<u8>)>),
    /// AuthenticationOk.
    AuthOk,
    /// AuthenticationCleartextPassword.
    AuthCleartext,
    /// AuthenticationMD5Password (salt).
    AuthMd5(Vec<u8>),
    /// AuthenticationSSPI.
    AuthSspi(Vec<u8>),
    /// AuthenticationSASL.
    AuthSasl,
    /// AuthenticationSASLContinue.
    AuthSaslContinue(Vec<u8>),
    /// AuthenticationSASLFinal.
    AuthSaslFinal(Vec<u8>),
    /// ParameterStatus.
    ParameterStatus(Param),
    /// BackendKeyData.
    BackendKey {
        /// Process id.
        pid: u32,
        /// Secret key.
        key: u32,
    },
    /// CommandComplete tag.
    CommandComplete(Vec<u8>),
    /// ReadyForQuery.
    ReadyForQuery,
    /// RowDescription field count.
    RowDescription(u16),
    /// DataRow rows and bytes (one row as parsed; consolidated per transaction).
    DataRows {
        /// Rows.
        rows: u64,
        /// Column bytes.
        size: u64,
    },
    /// NotificationResponse.
    Notification {
        /// Process id.
        pid: u32,
        /// Channel.
        channel: Vec<u8>,
        /// Payload.
        payload: Vec<u8>,
    },
    /// Any other message (not logged).
    Unknown,
}

struct Cur<'a>(&'a [u8]);

impl<'a> Cur<'a> {
    fn u8(&mut self) -> Option<u8> {
        let (&b, r) = self.0.split_first()?;
        self.0 = r;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        let b = self.take(4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    /// Bytes up to a NUL, and the NUL.
    fn cstr(&mut self) -> Option<&'a [u8]> {
        let i = self.0.iter().position(|&c| c == 0)?;
        let s = &self.0[..i];
        self.0 = &self.0[i + 1..];
        Some(s)
    }
}

/// A typed message header: (type, length field, whole message length) when `len` is valid.
fn typed(i: &[u8], min_len: u32) -> Result<(u8, u32, usize), Parsed<()>> {
    if i.len() < 5 {
        return Err(Parsed::Incomplete);
    }
    let len = u32::from_be_bytes([i[1], i[2], i[3], i[4]]);
    if len < min_len {
        return Err(Parsed::Error);
    }
    let total = 1 + len as usize;
    if i.len() < total {
        return Err(Parsed::Incomplete);
    }
    Ok((i[0], len, total))
}

macro_rules! hdr {
    ($i:expr, $min:expr) => {
        match typed($i, $min) {
            Ok(h) => h,
            Err(Parsed::Incomplete) => return Parsed::Incomplete,
            Err(_) => return Parsed::Error,
        }
    };
}

fn done<T>(v: Option<T>, n: usize) -> Parsed<T> {
    match v {
        Some(v) => Parsed::Done(v, n),
        None => Parsed::Error,
    }
}

/// Startup parameters: `name\0value\0` pairs then a NUL; `user` is required.
fn startup_params(b: &[u8]) -> Option<(Vec<u8>, Option<Vec<Param>>)> {
    let mut c = Cur(b);
    let mut params = Vec::new();
    loop {
        if c.0.first() == Some(&0) || c.0.is_empty() {
            break;
        }
        let name = c.cstr()?;
        if name.is_empty() {
            return None;
        }
        let value = c.cstr()?;
        params.push((name.to_vec(), value.to_vec()));
    }
    // The list must end with a NUL.
    c.u8().filter(|&z| z == 0)?;
    if params.is_empty() {
        return None;
    }
    let mut user = Vec::new();
    let mut idx = 0;
    for (j, (n, v)) in params.iter().enumerate() {
        if n == b"user" {
            user.extend_from_slice(v);
            idx = j;
        }
    }
    params.remove(idx);
    if user.is_empty() {
        return None;
    }
    let rest: Vec<Param> = params
        .into_iter()
        .map(|(n, v)| Param {
            name: param_name(&n),
            value: v,
        })
        .collect();
    Some((user, (!rest.is_empty()).then_some(rest)))
}

/// An untyped startup-phase packet (StartupMessage, SSLRequest, CancelRequest).
fn startup_packet(i: &[u8]) -> Parsed<FeMessage> {
    if i.len() < 6 {
        return Parsed::Incomplete;
    }
    let len = u32::from_be_bytes([i[0], i[1], i[2], i[3]]);
    if len < 8 {
        return Parsed::Error;
    }
    let major = u16::from_be_bytes([i[4], i[5]]);
    let total = len as usize;
    if i.len() < total {
        return Parsed::Incomplete;
    }
    let mut c = Cur(&i[4..total]);
    match major {
        1..=3 => {
            let (Some(major), Some(minor)) = (c.u16(), c.u16()) else {
                return Parsed::Error;
            };
            match startup_params(c.0) {
                Some((user, params)) => Parsed::Done(
                    FeMessage::Startup {
                        major,
                        minor,
                        user,
                        params,
                    },
                    total,
                ),
                None => Parsed::Error,
            }
        }
        1234 => {
            let _ = c.u16();
            match c.u16() {
                Some(5678) => {
                    let (Some(pid), Some(key)) = (c.u32(), c.u32()) else {
                        return Parsed::Error;
                    };
                    Parsed::Done(FeMessage::Cancel { pid, key }, total)
                }
                Some(5679) => Parsed::Done(FeMessage::SslRequest, total),
                _ => Parsed::Error,
            }
        }
        _ => Parsed::Error,
    }
}

/// A frontend message in the default state (Suricata's `parse_request`).
pub fn parse_request(i: &[u8]) -> Parsed<FeMessage> {
    let Some(&tag) = i.first() else {
        return Parsed::Incomplete;
    };
    match tag {
        0 => startup_packet(i),
        b'Q' => {
            let (_, _, total) = hdr!(i, 4);
            // The query up to its NUL (one at least).
            let body = &i[5..total];
            match body.iter().position(|&c| c == 0) {
                Some(p) if p > 0 => Parsed::Done(FeMessage::SimpleQuery(body[..p].to_vec()), total),
                _ => Parsed::Error,
            }
        }
        b'X' => {
            if i.len() < 5 {
                return Parsed::Incomplete;
            }
            let len = u32::from_be_bytes([i[1], i[2], i[3], i[4]]);
            if len < 4 {
                return Parsed::Error;
            }
            Parsed::Done(FeMessage::Terminate, 5)
        }
        _ => {
            let (_, _, total) = hdr!(i, 5);
            Parsed::Done(FeMessage::Unknown, total)
        }
    }
}

/// PasswordMessage (after an authentication request).
pub fn parse_password(i: &[u8]) -> Parsed<FeMessage> {
    if i.first().is_some_and(|&t| t != b'p') {
        return Parsed::Error;
    }
    let (_, _, total) = hdr!(i, 4);
    let body = &i[5..total];
    match body.iter().position(|&c| c == 0) {
        Some(p) if p > 0 => Parsed::Done(FeMessage::Password(body[..p].to_vec()), total),
        _ => Parsed::Error,
    }
}

/// SASLInitialResponse.
pub fn parse_sasl_initial(i: &[u8]) -> Parsed<FeMessage> {
    if i.first().is_some_and(|&t| t != b'p') {
        return Parsed::Error;
    }
    let (_, _, total) = hdr!(i, 4);
    let mut c = Cur(&i[5..total]);
    let mechanism = match c.cstr() {
        Some(b"SCRAM-SHA-256-PLUS") => "scram_SHA256_plus",
        Some(b"SCRAM-SHA-256") => "scram_SHA256",
        _ => return Parsed::Error,
    };
    let Some(plen) = c.u32() else {
        return Parsed::Error;
    };
    if c.0.len() != plen as usize {
        return Parsed::Error;
    }
    Parsed::Done(
        FeMessage::SaslInitial {
            mechanism,
            param: c.0.to_vec(),
        },
        total,
    )
}

/// SASLResponse.
pub fn parse_sasl_response(i: &[u8]) -> Parsed<FeMessage> {
    if i.first().is_some_and(|&t| t != b'p') {
        return Parsed::Error;
    }
    let (_, _, total) = hdr!(i, 4);
    Parsed::Done(FeMessage::SaslResponse(i[5..total].to_vec()), total)
}

/// The one-byte answer to an SSLRequest.
pub fn parse_ssl_response(i: &[u8]) -> Parsed<BeMessage> {
    match i.first() {
        None => Parsed::Incomplete,
        Some(b'S') => Parsed::Done(BeMessage::SslResponse(true), 1),
        Some(b'N') => Parsed::Done(BeMessage::SslResponse(false), 1),
        Some(_) => Parsed::Error,
    }
}

fn field_name(t: u8) -> &'static str {
    match t {
        b'S' => "severity_localizable",
        b'V' => "severity_non_localizable",
        b'C' => "code",
        b'M' => "message",
        b'D' => "detail",
        b'H' => "hint",
        b'P' => "position",
        b'p' => "internal_position",
        b'q' => "internal_query",
        b'W' => "where",
        b's' => "schema_name",
        b't' => "table_name",
        b'c' => "column_name",
        b'd' => "data_type",
        b'n' => "constraint_name",
        b'F' => "file",
        b'L' => "line",
        b'R' => "routine",
        _ => "unknown_field_type",
    }
}

/// Error/notice fields up to the terminating NUL.
fn error_fields(b: &[u8], is_err: bool) -> Option<Vec<(&'static str, Vec<u8>)>> {
    let mut c = Cur(b);
    let mut out = Vec::new();
    loop {
        let t = *c.0.first()?;
        if t == 0 {
            return Some(out);
        }
        match t {
            b'V' => {
                c.u8();
                let v = c.cstr()?;
                let ok: &[&[u8]] = if is_err {
                    &[b"ERROR", b"FATAL", b"PANIC"]
                } else {
                    &[b"WARNING", b"NOTICE", b"DEBUG", b"INFO", b"LOG"]
                };
                if !ok.contains(&v) {
                    return None;
                }
                out.push(("severity_non_localizable", v.to_vec()));
            }
            b'C' => {
                c.u8();
                let v = c.take(6)?;
                // Five alphanumerics and the NUL (Suricata reads six bytes).
                let code: Vec<u8> = v
                    .iter()
                    .copied()
                    .take_while(u8::is_ascii_alphanumeric)
                    .collect();
                if code.is_empty() {
                    return None;
                }
                out.push(("code", code));
            }
            _ => {
                c.u8();
                let v = c.cstr()?;
                out.push((field_name(t), v.to_vec()));
            }
        }
    }
}

/// A backend message (Suricata's `pgsql_parse_response`).
pub fn parse_response(i: &[u8]) -> Parsed<BeMessage> {
    if i.len() < 5 {
        return Parsed::Incomplete;
    }
    let tag = i[0];
    let min = match tag {
        b'E' | b'N' => 11,
        b'K' => 12,
        b'R' => 8,
        b'Z' => 5,
        b'T' => 7,
        b'D' => 6,
        b'A' => 10,
        _ => 4,
    };
    let len = u32::from_be_bytes([i[1], i[2], i[3], i[4]]);
    if len < min || (tag == b'K' && len != 12) || (tag == b'Z' && len != 5) {
        return Parsed::Error;
    }
    if !matches!(
        tag,
        b'E' | b'N' | b'K' | b'R' | b'S' | b'C' | b'Z' | b'T' | b'A' | b'D'
    ) && len <= 4
    {
        return Parsed::Error;
    }
    let total = 1 + len as usize;
    if i.len() < total {
        return Parsed::Incomplete;
    }
    let body = &i[5..total];
    let mut c = Cur(body);
    let m = match tag {
        b'E' => error_fields(body, true).map(BeMessage::Error),
        b'N' => error_fields(body, false).map(BeMessage::Notice),
        b'K' => match (c.u32(), c.u32()) {
            (Some(pid), Some(key)) => Some(BeMessage::BackendKey { pid, key }),
            _ => None,
        },
        b'R' => {
            let Some(t) = c.u32() else {
                return Parsed::Error;
            };
            match t {
                0 => Some(BeMessage::AuthOk),
                3 => Some(BeMessage::AuthCleartext),
                5 => (c.0.len() == 4).then(|| BeMessage::AuthMd5(c.0.to_vec())),
                9 => Some(BeMessage::AuthSspi(c.0.to_vec())),
                10 => {
                    // Mechanisms, then a NUL.
                    let mut n = 0;
                    loop {
                        match c.cstr() {
                            Some(b"SCRAM-SHA-256") | Some(b"SCRAM-SHA-256-PLUS") => n += 1,
                            Some(b"") if n > 0 => break,
                            _ => return Parsed::Error,
                        }
                    }
                    Some(BeMessage::AuthSasl)
                }
                11 => Some(BeMessage::AuthSaslContinue(c.0.to_vec())),
                12 => Some(BeMessage::AuthSaslFinal(c.0.to_vec())),
                _ => None,
            }
        }
        b'S' => {
            let name = c.cstr();
            let value = c.cstr();
            match (name, value) {
                (Some(n), Some(v)) if !n.is_empty() => Some(BeMessage::ParameterStatus(Param {
                    name: param_name(n),
                    value: v.to_vec(),
                })),
                _ => None,
            }
        }
        b'C' => {
            let p = body.iter().position(|&b| b == 0);
            p.map(|p| BeMessage::CommandComplete(body[..p].to_vec()))
        }
        b'Z' => match c.u8() {
            Some(b'I' | b'T' | b'E') => Some(BeMessage::ReadyForQuery),
            _ => None,
        },
        b'T' => c.u16().map(BeMessage::RowDescription),
        b'D' => {
            let Some(n) = c.u16() else {
                return Parsed::Error;
            };
            let mut size = 0u64;
            for _ in 0..n {
                let Some(l) = c.u32() else { break };
                let l = l as i32;
                if l >= 0 {
                    if c.take(l as usize).is_none() {
                        break;
                    }
                    size += l as u64;
                }
            }
            Some(BeMessage::DataRows { rows: 1, size })
        }
        b'A' => {
            let pid = c.u32();
            let channel = c.cstr();
            let payload = c.cstr();
            match (pid, channel, payload) {
                (Some(pid), Some(ch), Some(p)) => Some(BeMessage::Notification {
                    pid,
                    channel: ch.to_vec(),
                    payload: p.to_vec(),
                }),
                _ => None,
            }
        }
        _ => Some(BeMessage::Unknown),
    };
    done(m, total)
}
