//! MIME decoding of an SMTP message, line by line, as Suricata 7's MIME decoder
//! (`util-decode-mime.c`) does it: header fields per entity, multipart bodies with their
//! boundaries, `message/` encapsulation, base64 and quoted-printable bodies, attachment names
//! (`filename` / `name` tokens with RFC 2231 sections), URL extraction from text parts, and
//! the parser status Suricata logs (`email.status`).
//!
//! Decoded body data is handed to a callback in chunks, the way Suricata hands it to the
//! SMTP file tracking: a chunk per plain line (with the previous line's end of line in
//! front), per base64 line, and per run of quoted-printable lines; `begin` is set on the
//! first chunk of an entity's body, `end` on the last.
//!
//! Memory is bounded: at most [`MAX_ENTITIES`] entities, [`MAX_FIELDS`] header fields and
//! [`MAX_URLS`] URLs per message, [`MAX_DEPTH`] nested entities, header values cut at the
//! configured depth (`header-value-depth`), one chunk buffer of [`DATA_CHUNK_SIZE`] bytes.

/// Decoded data buffer size (Suricata's `DATA_CHUNK_SIZE`).
pub const DATA_CHUNK_SIZE: usize = 3072;
/// Longest line before `MIME_LONG_LINE` (RFC 2045).
const MAX_LINE_LEN: usize = 998;
/// Longest encoded line before `MIME_LONG_ENC_LINE`.
const MAX_ENC_LINE_LEN: usize = 76;
/// Longest header name before `MIME_LONG_HEADER_NAME`.
const MAX_HEADER_NAME: usize = 75;
/// Longest boundary (Suricata's `BOUNDARY_BUF` less the two dashes).
const MAX_BOUNDARY: usize = 254;
/// Longest file name kept (`MIME_LONG_FILENAME` past it).
pub const MAX_TOKEN_LEN: usize = 255;
/// Most entities per message (shrike's bound).
pub const MAX_ENTITIES: usize = 512;
/// Most header fields per message (shrike's bound).
pub const MAX_FIELDS: usize = 256;
/// Most URLs per message (shrike's bound).
pub const MAX_URLS: usize = 512;
/// Most nested entities (shrike's bound).
pub const MAX_DEPTH: usize = 64;

/// Content flags of an entity.
pub const CTNT_IS_MSG: u32 = 1;
pub const CTNT_IS_ENV: u32 = 2;
pub const CTNT_IS_ENCAP: u32 = 4;
pub const CTNT_IS_BODYPART: u32 = 8;
pub const CTNT_IS_MULTIPART: u32 = 16;
pub const CTNT_IS_ATTACHMENT: u32 = 32;
pub const CTNT_IS_BASE64: u32 = 64;
pub const CTNT_IS_QP: u32 = 128;
pub const CTNT_IS_TEXT: u32 = 256;
pub const CTNT_IS_HTML: u32 = 512;

/// Anomaly flags of a message (Suricata's `ANOM_*`).
pub const ANOM_INVALID_BASE64: u32 = 1;
pub const ANOM_INVALID_QP: u32 = 2;
pub const ANOM_LONG_HEADER_NAME: u32 = 4;
pub const ANOM_LONG_HEADER_VALUE: u32 = 8;
pub const ANOM_LONG_LINE: u32 = 16;
pub const ANOM_LONG_ENC_LINE: u32 = 32;
pub const ANOM_MALFORMED_MSG: u32 = 64;
pub const ANOM_LONG_BOUNDARY: u32 = 128;
pub const ANOM_LONG_FILENAME: u32 = 256;

/// URL flags.
pub const URL_IS_IP4: u8 = 1;
pub const URL_IS_IP6: u8 = 2;
pub const URL_IS_EXE: u8 = 4;

const URL_EXE_EXTS: &[&[u8]] = &[
    b".exe", b".vbs", b".bin", b".cmd", b".bat", b".jar", b".js", b".ps", b".ps1", b".sh", b".run",
    b".hta", b".bin", b".elf",
];

/// The decoder's settings (`app-layer.protocols.smtp.mime.*`).
#[derive(Clone, Debug)]
pub struct MimeConfig {
    /// `decode-base64`.
    pub decode_base64: bool,
    /// `decode-quoted-printable`.
    pub decode_quoted_printable: bool,
    /// `extract-urls`.
    pub extract_urls: bool,
    /// `extract-urls-schemes`, each with `://` appended.
    pub schemes: Vec<Vec<u8>>,
    /// `log-url-scheme`.
    pub log_url_scheme: bool,
    /// `body-md5`.
    pub body_md5: bool,
    /// `header-value-depth` (0: 2000).
    pub header_value_depth: u32,
}

impl Default for MimeConfig {
    fn default() -> Self {
        MimeConfig {
            decode_base64: true,
            decode_quoted_printable: true,
            extract_urls: true,
            schemes: vec![b"http://".to_vec()],
            log_url_scheme: false,
            body_md5: false,
            header_value_depth: 2000,
        }
    }
}

/// Parser status (`email.status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    HeaderReady = 1,
    HeaderStarted = 2,
    HeaderDone = 3,
    BodyStarted = 4,
    BodyDone = 5,
    BodyEndBound = 6,
    ParseDone = 7,
    ParseError = 8,
}

impl Status {
    /// Suricata's name.
    pub fn name(self) -> &'static str {
        match self {
            Status::HeaderReady => "HEADER_READY",
            Status::HeaderStarted => "HEADER_STARTED",
            Status::HeaderDone => "HEADER_DONE",
            Status::BodyStarted => "BODY_STARTED",
            Status::BodyDone => "BODY_DONE",
            Status::BodyEndBound => "BODY_END_BOUND",
            Status::ParseDone => "PARSE_DONE",
            Status::ParseError => "PARSE_ERROR",
        }
    }
}

/// Why a line or the completion failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MimeError {
    /// The parser is in its error state (earlier failure).
    State,
    /// Malformed structure (boundaries, stack).
    Data,
    /// A limit was hit.
    Parse,
}

/// An extracted URL.
#[derive(Clone, Debug)]
pub struct Url {
    /// Lower-cased URL (without scheme unless `log-url-scheme`).
    pub url: Vec<u8>,
    /// `URL_IS_*`.
    pub flags: u8,
}

/// One MIME entity (the message, a body part, an encapsulated message).
#[derive(Clone, Debug, Default)]
pub struct Entity {
    /// Header fields in order of appearance (lower-case names).
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    /// URLs in order of discovery.
    pub urls: Vec<Url>,
    /// `CTNT_IS_*`.
    pub ctnt_flags: u32,
    /// `ANOM_*` of this entity.
    pub anomaly_flags: u32,
    /// Attachment file name.
    pub filename: Option<Vec<u8>>,
    /// Child entities (indexes into the message's entities).
    pub children: Vec<usize>,
}

impl Entity {
    /// The value of the last field named `name` (Suricata keeps its field list newest
    /// first and returns the first match).
    pub fn field(&self, name: &[u8]) -> Option<&[u8]> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Every value of fields named `name`, newest first.
    pub fn fields_named<'a>(&'a self, name: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields
            .iter()
            .rev()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether the entity is an attachment.
    pub fn is_attachment(&self) -> bool {
        self.ctnt_flags & CTNT_IS_ATTACHMENT != 0
    }
}

#[derive(Clone, Debug)]
struct Node {
    ent: usize,
    bdef: Option<Vec<u8>>,
    is_encap: bool,
}

/// What a data chunk belongs to.
#[derive(Clone, Copy, Debug)]
pub struct ChunkInfo<'a> {
    /// The entity.
    pub entity: usize,
    /// The entity is an attachment.
    pub attachment: bool,
    /// Its file name.
    pub filename: &'a [u8],
    /// First chunk of the entity's body.
    pub begin: bool,
    /// Last chunk of the entity's body.
    pub end: bool,
}

/// The chunk callback.
pub type Sink<'s> = dyn FnMut(ChunkInfo<'_>, &[u8]) + 's;

/// The decoder of one message.
#[derive(Clone, Debug)]
pub struct MimeParser {
    /// Entities; 0 is the message.
    pub entities: Vec<Entity>,
    stack: Vec<Node>,
    /// Current status.
    pub status: Status,
    hname: Option<Vec<u8>>,
    hvalue: Vec<u8>,
    has_hvalue: bool,
    bvremain: [u8; 4],
    bvr_len: usize,
    chunk: Vec<u8>,
    found_child: bool,
    body_begin: bool,
    body_end: bool,
    delim_len: usize,
    fields_total: usize,
    urls_total: usize,
    md5: Option<md5::Md5>,
    md5_done: Option<[u8; 16]>,
}

fn find_nocase(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

fn b64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

fn qp_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Splits `buf` into lines as Suricata's `GetLine` does (CR, LF, CRLF or LFCR end a line;
/// a NUL ends the data).
fn for_each_line(buf: &[u8], f: &mut dyn FnMut(&[u8])) {
    let mut pos = 0;
    while pos < buf.len() {
        let rest = &buf[pos..];
        let mut i = 0;
        let mut adv = None;
        while i < rest.len() && rest[i] != 0 {
            if rest[i] == b'\r' || rest[i] == b'\n' {
                let mut a = i + 1;
                if i + 1 < rest.len()
                    && rest[i] != rest[i + 1]
                    && (rest[i + 1] == b'\r' || rest[i + 1] == b'\n')
                {
                    a += 1;
                }
                adv = Some(a);
                break;
            }
            i += 1;
        }
        let adv = adv.unwrap_or(i);
        if adv == 0 {
            break;
        }
        f(&rest[..i]);
        pos += adv;
    }
}

/// The first token of `buf` (delimiters `delims`) and the offset after the delimiter that
/// ends it, as Suricata's `GetToken`: `(token_start, token_len, next)`.
fn get_token(buf: &[u8], delims: &[u8]) -> Option<(usize, usize, usize)> {
    let mut start = None;
    for (i, &c) in buf.iter().enumerate() {
        if c == 0 {
            return start.map(|s| (s, i - s, i));
        }
        let is_delim = delims.contains(&c);
        match start {
            None if !is_delim => start = Some(i),
            Some(s) if is_delim => return Some((s, i - s, i + 1)),
            _ => {}
        }
    }
    start.map(|s| (s, buf.len() - s, buf.len()))
}

/// `name=value` tokens after the first `;` of a header value (Suricata's
/// `mime_parse_header_tokens`); later duplicates win.
fn header_tokens(v: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out: Vec<(&[u8], &[u8])> = Vec::new();
    let Some(semi) = v.iter().position(|&c| c == b';') else {
        return out;
    };
    let mut input = &v[semi + 1..];
    while !input.is_empty() {
        let ws = input
            .iter()
            .position(|&c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
            .unwrap_or(input.len());
        let rest = &input[ws..];
        let Some(eq) = rest.iter().position(|&c| c == b'=') else {
            break;
        };
        let name = &rest[..eq];
        let after = &rest[eq + 1..];
        let (value, rem) = if after.first() == Some(&b'"') {
            let Some(q) = after[1..].iter().position(|&c| c == b'"') else {
                break;
            };
            (&after[1..1 + q], &after[q + 2..])
        } else if after.is_empty() {
            // A streaming tag on empty input is incomplete: the token fails.
            break;
        } else {
            match after.iter().position(|&c| c == b';') {
                Some(s) => (&after[..s], &after[s..]),
                None => (after, &after[after.len()..]),
            }
        };
        let rem = rem.strip_prefix(b";").unwrap_or(rem);
        if let Some(e) = out.iter_mut().find(|(n, _)| *n == name) {
            e.1 = value;
        } else {
            out.push((name, value));
        }
        if rem.len() == input.len() {
            break;
        }
        input = rem;
    }
    out
}

/// The value of token `token` in a header value, joining RFC 2231 sections
/// (`token*0`, `token*1`, ...) as Suricata's `rs_mime_find_header_token` does.
pub fn find_header_token(v: &[u8], token: &[u8]) -> Option<Vec<u8>> {
    let toks = header_tokens(v);
    let get = |n: &[u8]| toks.iter().find(|(k, _)| *k == n).map(|(_, v)| *v);
    if let Some(val) = get(token) {
        return Some(val.to_vec());
    }
    let mut out = Vec::new();
    let mut i = 0u32;
    loop {
        let mut name = token.to_vec();
        name.push(b'*');
        name.extend_from_slice(i.to_string().as_bytes());
        match get(&name) {
            Some(val) => out.extend_from_slice(val),
            None if i == 0 => return None,
            None => return Some(out),
        }
        i += 1;
        if out.len() > 64 * 1024 {
            return Some(out);
        }
    }
}

fn is_exe_url(url: &[u8]) -> bool {
    URL_EXE_EXTS.iter().any(|ext| {
        find_nocase(url, ext)
            .is_some_and(|p| p + ext.len() == url.len() || url.get(p + ext.len()) == Some(&b'?'))
    })
}

fn host_part(h: &[u8]) -> &[u8] {
    let end = h
        .iter()
        .position(|&c| c == b'/' || c == 0)
        .unwrap_or(h.len());
    &h[..end]
}

fn is_ipv4_host(h: &[u8]) -> bool {
    let h = host_part(h);
    h.len() <= 15
        && std::str::from_utf8(h)
            .ok()
            .and_then(|s| s.parse::<std::net::Ipv4Addr>().ok())
            .is_some()
}

fn is_ipv6_host(h: &[u8]) -> bool {
    let h = host_part(h);
    h.len() <= 39
        && std::str::from_utf8(h)
            .ok()
            .and_then(|s| s.parse::<std::net::Ipv6Addr>().ok())
            .is_some()
}

impl Default for MimeParser {
    fn default() -> Self {
        Self::new()
    }
}

impl MimeParser {
    /// A parser for a new message.
    pub fn new() -> Self {
        MimeParser {
            entities: vec![Entity {
                ctnt_flags: CTNT_IS_MSG,
                ..Entity::default()
            }],
            stack: vec![Node {
                ent: 0,
                bdef: None,
                is_encap: false,
            }],
            status: Status::HeaderReady,
            hname: None,
            hvalue: Vec::new(),
            has_hvalue: false,
            bvremain: [0; 4],
            bvr_len: 0,
            chunk: Vec::new(),
            found_child: false,
            body_begin: false,
            body_end: false,
            delim_len: 0,
            fields_total: 0,
            urls_total: 0,
            md5: None,
            md5_done: None,
        }
    }

    /// The body's MD5 once the message is complete (`body-md5`).
    pub fn body_md5(&self) -> Option<[u8; 16]> {
        self.md5_done
    }

    /// The message entity.
    pub fn msg(&self) -> &Entity {
        &self.entities[0]
    }

    /// The entity on top of the stack (what Suricata logs attachments and URLs from).
    pub fn top(&self) -> Option<&Entity> {
        self.stack.last().and_then(|n| self.entities.get(n.ent))
    }

    /// Headers are done (body lines follow).
    pub fn headers_done(&self) -> bool {
        self.status >= Status::HeaderDone
    }

    fn top_ent(&self) -> usize {
        self.stack.last().map_or(0, |n| n.ent)
    }

    fn anomaly(&mut self, flag: u32) {
        let t = self.top_ent();
        if let Some(e) = self.entities.get_mut(t) {
            e.anomaly_flags |= flag;
        }
        self.entities[0].anomaly_flags |= flag;
    }

    fn add_entity(&mut self, parent: usize, flags: u32) -> Result<usize, MimeError> {
        if self.entities.len() >= MAX_ENTITIES || self.stack.len() >= MAX_DEPTH {
            self.anomaly(ANOM_MALFORMED_MSG);
            return Err(MimeError::Parse);
        }
        let id = self.entities.len();
        self.entities.push(Entity {
            ctnt_flags: flags,
            ..Entity::default()
        });
        if let Some(p) = self.entities.get_mut(parent) {
            p.children.push(id);
        }
        Ok(id)
    }

    /// One line of the message without its end of line (`delim_len` bytes: 0, 1 or 2).
    pub fn parse_line(
        &mut self,
        line: &[u8],
        delim_len: usize,
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        if self.status == Status::ParseError {
            return Err(MimeError::State);
        }
        self.delim_len = delim_len;
        let r = self.entity_line(line, cfg, sink);
        if r.is_err() {
            self.status = Status::ParseError;
        }
        r
    }

    fn entity_line(
        &mut self,
        line: &[u8],
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        if line.len() > MAX_LINE_LEN {
            self.anomaly(ANOM_LONG_LINE);
        }
        let top_flags = self
            .entities
            .get(self.top_ent())
            .map_or(0, |e| e.ctnt_flags);
        if cfg.body_md5
            && (!matches!(self.status, Status::HeaderReady | Status::HeaderStarted)
                || top_flags & CTNT_IS_BODYPART != 0)
        {
            use md5::Digest as _;
            if self.body_begin && self.md5.is_none() {
                self.md5 = Some(md5::Md5::new());
            }
            if let Some(h) = self.md5.as_mut() {
                h.update(line);
                h.update(&b"\r\n"[2 - self.delim_len.min(2)..]);
            }
        }
        if matches!(self.status, Status::HeaderReady | Status::HeaderStarted) {
            self.headers(line, cfg, sink)
        } else {
            self.body(line, cfg, sink)
        }
    }

    fn store_header(&mut self) -> Result<(), MimeError> {
        if self.hname.is_none() && !self.has_hvalue {
            return Ok(());
        }
        let name = self.hname.take();
        let value = std::mem::take(&mut self.hvalue);
        self.has_hvalue = false;
        if value.is_empty() {
            return Ok(());
        }
        let Some(mut name) = name else {
            return Err(MimeError::Parse);
        };
        name.make_ascii_lowercase();
        if self.fields_total < MAX_FIELDS {
            self.fields_total += 1;
            let t = self.top_ent();
            if let Some(e) = self.entities.get_mut(t) {
                e.fields.push((name, value));
            }
        }
        Ok(())
    }

    fn push_value(&mut self, v: &[u8], cfg: &MimeConfig) {
        let depth = if cfg.header_value_depth == 0 {
            2000
        } else {
            cfg.header_value_depth as usize
        };
        let mut n = v.len();
        if self.hvalue.len() + n > depth {
            n = depth.saturating_sub(self.hvalue.len());
            self.anomaly(ANOM_LONG_HEADER_VALUE);
        }
        if n > 0 {
            self.hvalue.extend_from_slice(&v[..n]);
            self.has_hvalue = true;
        }
    }

    fn find_header(
        &mut self,
        buf: &[u8],
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        // A header starts with printable characters followed by ':'.
        let mut hlen = 0;
        let mut found = false;
        for &c in buf {
            if c == 0 {
                break;
            }
            if c != b':' && (33..=126).contains(&c) {
                hlen += 1;
            } else if hlen > 0 && c == b':' {
                found = true;
                break;
            } else {
                break;
            }
        }
        if found {
            if hlen > MAX_HEADER_NAME {
                self.anomaly(ANOM_LONG_HEADER_NAME);
            }
            let mut hval = Some(hlen + 1);
            if hlen + 1 >= buf.len() {
                hval = None;
            } else {
                let mut p = hlen + 1;
                while buf[p] == b' ' {
                    if p + 1 >= buf.len() {
                        hval = None;
                        break;
                    }
                    p += 1;
                }
                if hval.is_some() {
                    hval = Some(p);
                }
            }
            if self.status == Status::HeaderStarted {
                self.store_header()?;
            }
            self.status = Status::HeaderStarted;
            self.hname = Some(buf[..hlen].to_vec());
            if let Some(p) = hval {
                self.push_value(&buf[p..], cfg);
            }
        } else if buf.is_empty() {
            self.status = Status::HeaderDone;
            self.store_header()?;
        } else if self.status == Status::HeaderStarted {
            self.push_value(buf, cfg);
        } else {
            self.status = Status::BodyStarted;
            self.body_begin = true;
            self.body_end = false;
            if cfg.body_md5 && self.md5.is_none() {
                use md5::Digest as _;
                let mut h = md5::Md5::new();
                h.update(buf);
                h.update(&b"\r\n"[2 - self.delim_len.min(2)..]);
                self.md5 = Some(h);
            }
            self.body_line(buf, cfg, sink)?;
        }
        Ok(())
    }

    fn headers(
        &mut self,
        buf: &[u8],
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        self.find_header(buf, cfg, sink)?;
        if self.status != Status::HeaderDone {
            return Ok(());
        }
        let t = self.top_ent();
        let ent = &self.entities[t];
        let cte = ent.field(b"content-transfer-encoding").map(<[u8]>::to_vec);
        let disp = ent.field(b"content-disposition").map(<[u8]>::to_vec);
        let ctype = ent.field(b"content-type").map(<[u8]>::to_vec);
        let mut flags = 0;
        let mut filename = None;
        if let Some(v) = cte {
            if find_nocase(&v, b"base64").is_some() {
                flags |= CTNT_IS_BASE64;
            } else if find_nocase(&v, b"quoted-printable").is_some() {
                flags |= CTNT_IS_QP;
            }
        }
        if let Some(v) = disp {
            if let Some(name) = find_header_token(&v, b"filename") {
                flags |= CTNT_IS_ATTACHMENT;
                filename = Some(name);
            }
        }
        let mut encap = false;
        if let Some(v) = ctype {
            if let Some(b) = find_header_token(&v, b"boundary") {
                self.found_child = true;
                flags |= CTNT_IS_MULTIPART;
                if b.len() > MAX_BOUNDARY {
                    self.entities[t].ctnt_flags |= flags;
                    self.entities[t].anomaly_flags |= ANOM_LONG_BOUNDARY;
                    return Err(MimeError::Parse);
                }
                if let Some(n) = self.stack.last_mut() {
                    n.bdef = Some(b);
                }
            }
            if flags & CTNT_IS_ATTACHMENT == 0 {
                if let Some(name) = find_header_token(&v, b"name") {
                    flags |= CTNT_IS_ATTACHMENT;
                    filename = Some(name);
                }
            }
            if let Some((s, l, _)) = get_token(&v, b" \r\n;") {
                let ct = &v[s..s + l];
                if find_nocase(ct, b"message/").is_some() {
                    flags |= CTNT_IS_ENV;
                    encap = true;
                } else if find_nocase(ct, b"multipart/").is_some() {
                    flags |= CTNT_IS_MULTIPART;
                } else if find_nocase(ct, b"text/plain").is_some() {
                    flags |= CTNT_IS_TEXT;
                } else if find_nocase(ct, b"text/html").is_some() {
                    flags |= CTNT_IS_HTML;
                }
            }
        }
        if let Some(mut name) = filename {
            if name.len() > MAX_TOKEN_LEN {
                name.truncate(MAX_TOKEN_LEN);
                self.anomaly(ANOM_LONG_FILENAME);
            }
            self.entities[t].filename = Some(name);
        }
        self.entities[t].ctnt_flags |= flags;
        if encap {
            let child = self.add_entity(t, CTNT_IS_ENCAP | CTNT_IS_MSG)?;
            self.stack.push(Node {
                ent: child,
                bdef: None,
                is_encap: true,
            });
            self.status = Status::HeaderReady;
        }
        self.body_begin = true;
        self.body_end = false;
        Ok(())
    }

    fn body(&mut self, buf: &[u8], cfg: &MimeConfig, sink: &mut Sink<'_>) -> Result<(), MimeError> {
        if buf.is_empty() {
            if self.status == Status::BodyEndBound {
                return Ok(());
            }
            if self.status == Status::HeaderDone {
                let t = self.top_ent();
                if cfg.decode_base64 && self.entities[t].ctnt_flags & CTNT_IS_BASE64 != 0 {
                    return Ok(());
                }
            }
        }
        if self.stack.is_empty() {
            return Err(MimeError::Parse);
        }
        let mut idx = self.stack.len() - 1;
        let mut node = Some(idx);
        if self.status == Status::BodyEndBound || self.stack[idx].bdef.is_none() {
            node = None;
            while idx > 0 {
                idx -= 1;
                if self.stack[idx].bdef.is_some() {
                    node = Some(idx);
                    break;
                }
            }
        }
        let mut body_found = true;
        if let Some(i) = node {
            if buf.len() > 1 && buf[0] == b'-' && buf[1] == b'-' {
                let bdef = self.stack[i].bdef.clone().unwrap_or_default();
                let mut pat = b"--".to_vec();
                pat.extend_from_slice(&bdef);
                if find_nocase(buf, &pat).is_some() {
                    body_found = false;
                    self.boundary(buf, bdef.len(), cfg, sink)?;
                }
            }
        }
        if body_found {
            self.status = Status::BodyStarted;
            self.body_line(buf, cfg, sink)?;
        }
        Ok(())
    }

    fn boundary(
        &mut self,
        buf: &[u8],
        bdef_len: usize,
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        if self.status != Status::BodyEndBound {
            self.body_complete(cfg, sink);
        } else {
            self.status = Status::HeaderReady;
        }
        let r = bdef_len + 2;
        let pop = |s: &mut Self| -> Result<(), MimeError> {
            s.stack.pop();
            if s.stack.is_empty() {
                Err(MimeError::Data)
            } else {
                Ok(())
            }
        };
        let top_is_encap_nob = self
            .stack
            .last()
            .is_some_and(|n| n.is_encap && n.bdef.is_none());
        if top_is_encap_nob {
            let n = self.stack.len();
            if n < 2 {
                return Err(MimeError::Data);
            }
            if self.stack[n - 2].bdef.is_none() {
                pop(self)?;
            }
        }
        if buf.len() > r + 1 && buf[r] == b'-' && buf[r + 1] == b'-' {
            pop(self)?;
            if self
                .stack
                .last()
                .is_some_and(|n| n.is_encap && n.bdef.is_some())
            {
                pop(self)?;
            }
            self.status = Status::BodyEndBound;
        } else if self.found_child {
            let parent = self.top_ent();
            let child = self.add_entity(parent, CTNT_IS_BODYPART)?;
            self.stack.push(Node {
                ent: child,
                bdef: None,
                is_encap: false,
            });
            self.found_child = false;
        } else {
            if self.stack.len() < 2 {
                return Err(MimeError::Data);
            }
            pop(self)?;
            let parent = self.top_ent();
            let child = self.add_entity(parent, CTNT_IS_BODYPART)?;
            self.stack.push(Node {
                ent: child,
                bdef: None,
                is_encap: false,
            });
        }
        if self.status != Status::BodyEndBound {
            self.status = Status::HeaderReady;
        }
        Ok(())
    }

    /// Hands the chunk buffer to URL extraction and the sink, then empties it.
    fn flush(&mut self, cfg: &MimeConfig, sink: &mut Sink<'_>) {
        let t = self.top_ent();
        let chunk = std::mem::take(&mut self.chunk);
        let flags = self.entities.get(t).map_or(0, |e| e.ctnt_flags);
        if cfg.extract_urls
            && flags & (CTNT_IS_TEXT | CTNT_IS_MSG | CTNT_IS_HTML) != 0
            && flags & CTNT_IS_ATTACHMENT == 0
        {
            for_each_line(&chunk, &mut |l| self.find_urls(t, l, cfg));
        }
        if let Some(e) = self.entities.get(t) {
            sink(
                ChunkInfo {
                    entity: t,
                    attachment: e.is_attachment(),
                    filename: e.filename.as_deref().unwrap_or_default(),
                    begin: self.body_begin,
                    end: self.body_end,
                },
                &chunk,
            );
        }
        self.chunk = chunk;
        self.chunk.clear();
        self.body_begin = false;
    }

    fn find_urls(&mut self, ent: usize, line: &[u8], cfg: &MimeConfig) {
        for scheme in &cfg.schemes {
            let mut rem = 0;
            while rem < line.len() {
                let Some(p) = find_nocase(&line[rem..], scheme) else {
                    break;
                };
                let mut f = rem + p;
                if !cfg.log_url_scheme {
                    f += scheme.len();
                }
                match get_token(&line[f..], b" \"'<>]\t") {
                    Some((s, l, next)) => {
                        rem = f + next;
                        if s == 0 && l > 0 {
                            let url: Vec<u8> =
                                line[f..f + l].iter().map(u8::to_ascii_lowercase).collect();
                            self.add_url(ent, url, scheme.len(), cfg);
                        }
                    }
                    None => {
                        if f >= line.len() {
                            break;
                        }
                        rem = f;
                    }
                }
            }
        }
    }

    fn add_url(&mut self, ent: usize, url: Vec<u8>, scheme_len: usize, cfg: &MimeConfig) {
        let Some(e) = self.entities.get(ent) else {
            return;
        };
        if e.urls.iter().any(|u| u.url == url) || self.urls_total >= MAX_URLS {
            return;
        }
        let mut flags = 0;
        if is_exe_url(&url) {
            flags |= URL_IS_EXE;
        }
        let host = if cfg.log_url_scheme {
            url.get(scheme_len..).unwrap_or_default()
        } else {
            &url[..]
        };
        if is_ipv4_host(host) {
            flags |= URL_IS_IP4;
        } else if is_ipv6_host(host) {
            flags |= URL_IS_IP6;
        }
        self.urls_total += 1;
        self.entities[ent].urls.push(Url { url, flags });
    }

    fn room_flush(&mut self, need: usize, cfg: &MimeConfig, sink: &mut Sink<'_>) {
        if DATA_CHUNK_SIZE - self.chunk.len().min(DATA_CHUNK_SIZE) < need {
            self.flush(cfg, sink);
        }
    }

    fn b64_block(&mut self, cfg: &MimeConfig, sink: &mut Sink<'_>) {
        let pad = self.bvremain[..self.bvr_len]
            .iter()
            .filter(|&&c| c == b'=')
            .count();
        let v: Vec<u8> = self.bvremain[..self.bvr_len]
            .iter()
            .map(|&c| b64_value(c).unwrap_or(0))
            .chain(std::iter::repeat(0))
            .take(4)
            .collect();
        let out = [
            (v[0] << 2) | (v[1] >> 4),
            (v[1] << 4) | (v[2] >> 2),
            (v[2] << 6) | v[3],
        ];
        let n = 3 - pad.min(3);
        self.room_flush(3, cfg, sink);
        self.chunk.extend_from_slice(&out[..n]);
        self.bvr_len = 0;
    }

    fn body_line(
        &mut self,
        buf: &[u8],
        cfg: &MimeConfig,
        sink: &mut Sink<'_>,
    ) -> Result<(), MimeError> {
        let t = self.top_ent();
        let flags = self.entities.get(t).map_or(0, |e| e.ctnt_flags);
        if cfg.decode_base64 && flags & CTNT_IS_BASE64 != 0 {
            if buf.len() > MAX_ENC_LINE_LEN {
                self.anomaly(ANOM_LONG_ENC_LINE);
            }
            for &c in buf {
                if b64_value(c).is_some() || c == b'=' {
                    self.bvremain[self.bvr_len] = c;
                    self.bvr_len += 1;
                    if self.bvr_len == 4 {
                        self.b64_block(cfg, sink);
                    }
                }
            }
            if !self.chunk.is_empty() {
                self.flush(cfg, sink);
            }
        } else if cfg.decode_quoted_printable && flags & CTNT_IS_QP != 0 {
            if buf.len() > MAX_ENC_LINE_LEN {
                self.anomaly(ANOM_LONG_ENC_LINE);
            }
            if buf.is_empty() {
                self.chunk
                    .extend_from_slice(&b"\r\n"[2 - self.delim_len.min(2)..]);
                self.flush(cfg, sink);
                return Ok(());
            }
            let mut i = 0;
            while i < buf.len() {
                let remaining = buf.len() - i;
                let c = buf[i];
                if c != b'=' {
                    self.chunk.push(c);
                    if remaining == 1 && self.delim_len > 0 {
                        self.chunk.extend_from_slice(b"\r\n");
                    }
                } else if remaining > 1 {
                    if remaining < 3 {
                        self.anomaly(ANOM_INVALID_QP);
                    } else {
                        match (qp_value(buf[i + 1]), qp_value(buf[i + 2])) {
                            (Some(h1), Some(h2)) => {
                                self.chunk.push((h1 << 4) | h2);
                                if remaining == 3 && self.delim_len > 0 {
                                    self.chunk.extend_from_slice(b"\r\n");
                                }
                                i += 2;
                            }
                            _ => self.anomaly(ANOM_INVALID_QP),
                        }
                    }
                }
                i += 1;
                self.room_flush(3, cfg, sink);
            }
        } else {
            for piece in buf.chunks(DATA_CHUNK_SIZE) {
                let room = DATA_CHUNK_SIZE.saturating_sub(self.chunk.len());
                let (a, b) = piece.split_at(room.min(piece.len()));
                self.chunk.extend_from_slice(a);
                if self.chunk.len() >= DATA_CHUNK_SIZE {
                    self.flush(cfg, sink);
                }
                self.chunk.extend_from_slice(b);
            }
            self.flush(cfg, sink);
            // The end of line goes in front of the next line (and is dropped at the end).
            self.chunk
                .extend_from_slice(&b"\r\n"[2 - self.delim_len.min(2)..]);
        }
        Ok(())
    }

    fn body_complete(&mut self, cfg: &MimeConfig, sink: &mut Sink<'_>) {
        self.body_end = true;
        if self.bvr_len > 0 {
            while self.bvr_len < 4 {
                self.bvremain[self.bvr_len] = b'=';
                self.bvr_len += 1;
            }
            self.b64_block(cfg, sink);
        }
        let t = self.top_ent();
        let flags = self.entities.get(t).map_or(0, |e| e.ctnt_flags);
        if flags & (CTNT_IS_BASE64 | CTNT_IS_QP) == 0 {
            self.chunk.clear();
        }
        self.flush(cfg, sink);
        self.body_begin = false;
        self.body_end = false;
    }

    /// The message ended (the SMTP `.` line).
    pub fn complete(&mut self, cfg: &MimeConfig, sink: &mut Sink<'_>) -> Result<(), MimeError> {
        if self.status == Status::ParseError {
            return Err(MimeError::State);
        }
        self.store_header()?;
        self.body_complete(cfg, sink);
        if let Some(h) = self.md5.take() {
            use md5::Digest as _;
            self.md5_done = Some(h.finalize().into());
        }
        if self.stack.is_empty() {
            self.entities[0].anomaly_flags |= ANOM_MALFORMED_MSG;
            return Err(MimeError::Data);
        }
        if self.stack.last().is_some_and(|n| n.is_encap) {
            self.stack.pop();
            if self.stack.is_empty() {
                self.entities[0].anomaly_flags |= ANOM_MALFORMED_MSG;
                return Err(MimeError::Data);
            }
        }
        if self.stack.len() > 1 {
            self.entities[0].anomaly_flags |= ANOM_MALFORMED_MSG;
        }
        self.status = Status::ParseDone;
        Ok(())
    }

    /// The `url` list Suricata logs: the top entity's URLs, then those of its children,
    /// each newest first.
    pub fn log_urls(&self) -> impl Iterator<Item = &Url> {
        let top = self.top();
        let own = top.into_iter().flat_map(|e| e.urls.iter().rev());
        let kids = top.into_iter().flat_map(move |e| {
            e.children
                .iter()
                .filter_map(move |&c| self.entities.get(c))
                .flat_map(|c| c.urls.iter().rev())
        });
        own.chain(kids)
    }

    /// The attachment names Suricata logs (the top entity's children).
    pub fn log_attachments(&self) -> impl Iterator<Item = &[u8]> {
        self.top().into_iter().flat_map(move |e| {
            e.children
                .iter()
                .filter_map(move |&c| self.entities.get(c))
                .filter(|c| c.is_attachment())
                .map(|c| c.filename.as_deref().unwrap_or_default())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk handed to the sink: entity, data, begin, end.
    type Seen = (usize, Vec<u8>, bool, bool);

    fn run(msg: &[u8]) -> (MimeParser, Vec<Seen>) {
        let cfg = MimeConfig::default();
        let mut p = MimeParser::new();
        let mut chunks = Vec::new();
        let mut sink = |c: ChunkInfo<'_>, d: &[u8]| {
            if c.attachment {
                chunks.push((c.entity, d.to_vec(), c.begin, c.end));
            }
        };
        for l in msg.split_inclusive(|&c| c == b'\n') {
            let (line, dl) = match l {
                [rest @ .., b'\r', b'\n'] => (rest, 2),
                [rest @ .., b'\n'] => (rest, 1),
                _ => (l, 0),
            };
            let _ = p.parse_line(line, dl, &cfg, &mut sink);
        }
        let _ = p.complete(&cfg, &mut sink);
        (p, chunks)
    }

    #[test]
    fn multipart_with_base64_attachment_and_urls() {
        let msg = b"From: a <a@b.c>\r\nTo: x@y, \"q,r\" <z@w>\r\nSubject: hi\r\n\
Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n\
--XX\r\nContent-Type: text/plain\r\n\r\nsee http://Example.com/a and http://google.com\r\n\
--XX\r\nContent-Type: application/octet-stream; name=\"f.bin\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\naGVsbG8g\r\nd29ybGQ=\r\n--XX--\r\n";
        let (p, chunks) = run(msg);
        assert_eq!(p.status, Status::ParseDone);
        assert_eq!(p.msg().field(b"subject"), Some(&b"hi"[..]));
        let att: Vec<_> = p.log_attachments().collect();
        assert_eq!(att, vec![&b"f.bin"[..]]);
        let urls: Vec<_> = p.log_urls().map(|u| u.url.clone()).collect();
        assert_eq!(
            urls,
            vec![b"google.com".to_vec(), b"example.com/a".to_vec()]
        );
        let data: Vec<u8> = chunks.iter().flat_map(|c| c.1.clone()).collect();
        assert_eq!(data, b"hello world");
        assert!(chunks[0].2);
        assert!(chunks.last().unwrap().3);
    }

    #[test]
    fn quoted_printable_and_plain_attachment() {
        let msg = b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\
Content-Disposition: attachment; filename=a.txt\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
caf=C3=A9 soft=\r\nbreak\r\n--b\r\nContent-Disposition: attachment; filename=p.txt\r\n\r\nl1\r\nl2\r\n--b--\r\n";
        let (_, chunks) = run(msg);
        let a: Vec<u8> = chunks
            .iter()
            .filter(|c| c.0 == 1)
            .flat_map(|c| c.1.clone())
            .collect();
        assert_eq!(a, "café softbreak\r\n".as_bytes());
        let p: Vec<u8> = chunks
            .iter()
            .filter(|c| c.0 == 2)
            .flat_map(|c| c.1.clone())
            .collect();
        assert_eq!(p, b"l1\r\nl2");
    }

    #[test]
    fn rfc2231_sections_and_tokens() {
        let v = b"attachment; filename*0=\"abc\"; filename*1=\"def.zip\"";
        assert_eq!(
            find_header_token(v, b"filename"),
            Some(b"abcdef.zip".to_vec())
        );
        assert_eq!(find_header_token(b"text/plain", b"name"), None);
        assert_eq!(
            find_header_token(b"a; name=x; b=y", b"name"),
            Some(b"x".to_vec())
        );
        assert_eq!(find_header_token(b"a; name=", b"name"), None);
    }

    #[test]
    fn bounded_on_hostile_input() {
        let mut msg = Vec::new();
        for i in 0..2000 {
            msg.extend_from_slice(
                format!("Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n")
                    .as_bytes(),
            );
        }
        msg.extend_from_slice(&[b'A'; 10000]);
        let (p, _) = run(&msg);
        assert!(p.entities.len() <= MAX_ENTITIES);
        assert!(p.stack.len() <= MAX_DEPTH);
    }
}
