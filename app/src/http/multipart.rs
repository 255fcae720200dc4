//! Files in `multipart/form-data` request bodies, found the way Suricata 7 finds them
//! (`HtpRequestBodyHandleMultipart` in `app-layer-htp.c`): each call looks at the body from
//! the first byte not yet parsed (`body_parsed`), finds the boundaries and the part
//! headers, opens a file for every part whose `Content-Disposition` names a `filename=`,
//! and streams the part's bytes into it until the next boundary. Bytes that could still be
//! the start of a boundary are held back until the next call. The quirks of that code are
//! kept on purpose (they decide which bytes end up in a file): a part's data ends before
//! the `\r\n` that precedes the next boundary, and a file the closing boundary never
//! reaches is closed at the end of the request without its held-back bytes. The parse
//! offset moves as in Suricata 7.0.12 and later (ticket 7582): 7.0.10 could move it past
//! bytes it had not parsed when one call found two parts, losing the second file's data.

use crate::files::{FileConfig, TrackedFile};

/// Longest boundary Suricata accepts (`HTP_BOUNDARY_MAX`): a longer one turns the body
/// into neither a multipart form nor a file.
pub(crate) const BOUNDARY_MAX: usize = 200;

/// Multipart events, as bits (`multipart_generic_error`, `multipart_no_filedata`,
/// `multipart_invalid_header`).
pub(crate) const EV_GENERIC: u8 = 1;
pub(crate) const EV_NO_FILEDATA: u8 = 2;
pub(crate) const EV_INVALID_HEADER: u8 = 4;

/// One file of the form: its body offsets `start..end` (what `file.data` inspects).
#[derive(Debug)]
pub(crate) struct Part {
    pub(crate) file: TrackedFile,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// The multipart state of one request body.
#[derive(Debug)]
pub(crate) struct Multipart {
    /// `--` + boundary + `--`; its first `len - 2` bytes are a part's delimiter.
    boundary: Vec<u8>,
    /// Body bytes from offset `parsed` on (what Suricata's next call sees).
    buf: Vec<u8>,
    /// Suricata's `body_parsed`.
    parsed: u64,
    /// Body bytes given so far.
    total: u64,
    /// A file is being filled (`HTP_FILENAME_SET`).
    in_file: bool,
    /// Parsing stopped (a gap).
    stopped: bool,
    pub(crate) parts: Vec<Part>,
    /// Events raised since the transaction last took them.
    pub(crate) events: u8,
}

/// The value of parameter `name` (lower case, with its `=`) in a header value, as
/// Suricata's `HTTPParseContentTypeHeader` / `HTTPParseContentDispositionHeader` find it:
/// tokens split at `;` outside double quotes, a token must start with `name`, one pair of
/// surrounding quotes removed.
pub(crate) fn header_param<'a>(name: &[u8], data: &'a [u8]) -> Option<&'a [u8]> {
    let start = data.iter().position(|c| !c.is_ascii_whitespace())?;
    let line = &data[start..];
    let mut quote = 0u32;
    let mut offset = 0usize;
    let mut x = 1usize;
    while x < line.len() {
        if line[x - 1] != b'\\' && line[x] == b'"' {
            quote += 1;
        }
        let end = x + 1 == line.len();
        if ((line[x - 1] != b'\\' && line[x] == b';') || end) && quote % 2 == 0 {
            let token_end = if end { x + 1 } else { x };
            let token = line.get(offset..token_end).unwrap_or(&[]);
            offset = x + 1;
            while offset < line.len() && line[offset].is_ascii_whitespace() {
                x += 1;
                offset += 1;
            }
            if token.len() > name.len() && token[..name.len()].eq_ignore_ascii_case(name) {
                let mut v = &token[name.len()..];
                if let Some(r) = v.strip_prefix(b"\"") {
                    v = r;
                }
                if let Some(r) = v.strip_suffix(b"\"") {
                    v = r;
                }
                return Some(v);
            }
        }
        x += 1;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

impl Multipart {
    /// The multipart state for a POST whose `Content-Type` is `ct`: `None` when it names no
    /// boundary, `Some(Err(()))` when the boundary is too long (no file at all then).
    pub(crate) fn from_content_type(ct: &[u8]) -> Option<Result<Multipart, ()>> {
        let b = header_param(b"boundary=", ct)?;
        if b.len() >= BOUNDARY_MAX {
            return Some(Err(()));
        }
        let mut boundary = Vec::with_capacity(b.len() + 4);
        boundary.extend_from_slice(b"--");
        boundary.extend_from_slice(b);
        boundary.extend_from_slice(b"--");
        Some(Ok(Multipart {
            boundary,
            buf: Vec::new(),
            parsed: 0,
            total: 0,
            in_file: false,
            stopped: false,
            parts: Vec::new(),
            events: 0,
        }))
    }

    /// The files of the form, in order.
    pub(crate) fn files(&self) -> impl Iterator<Item = &TrackedFile> {
        self.parts.iter().map(|p| &p.file)
    }

    /// More body bytes (already cut at the body limit).
    pub(crate) fn feed(&mut self, data: &[u8], cfg: &FileConfig) {
        if self.stopped || data.is_empty() {
            return;
        }
        // Suricata can move `body_parsed` past the data it has: the bytes up to there are
        // never parsed.
        let skip = usize::try_from(self.parsed.saturating_sub(self.total))
            .unwrap_or(usize::MAX)
            .min(data.len());
        self.total += data.len() as u64;
        self.buf.extend_from_slice(&data[skip..]);
        if self.buf.is_empty() {
            return;
        }
        let before = self.parsed;
        let chunk = std::mem::take(&mut self.buf);
        self.handle(&chunk, cfg);
        let used = usize::try_from(self.parsed - before).unwrap_or(usize::MAX);
        self.buf = chunk;
        self.buf.drain(..used.min(self.buf.len()));
    }

    /// The body ended with the request (`HTPCallbackRequestComplete`): an open file is
    /// closed as it is.
    pub(crate) fn finish(&mut self) {
        self.close_open(false);
    }

    /// The body limit was reached or the flow ended: an open file is cut short.
    pub(crate) fn truncate(&mut self) {
        self.close_open(true);
    }

    /// Part of the body is missing: an open file is cut short and parsing stops.
    pub(crate) fn gap(&mut self) {
        self.close_open(true);
        self.stopped = true;
    }

    fn close_open(&mut self, truncated: bool) {
        if self.in_file {
            if let Some(p) = self.parts.last_mut() {
                if !p.file.is_done() {
                    p.file.close(truncated);
                }
            }
            self.in_file = false;
        }
    }

    /// Appends `data` (at body offset `at`) to the open file.
    fn append(&mut self, data: &[u8], at: u64) {
        if let Some(p) = self.parts.last_mut() {
            if !p.file.is_done() {
                p.file.append(data);
                if p.end == p.start {
                    p.start = at;
                }
                p.end = at + data.len() as u64;
            }
        }
    }

    fn open(&mut self, name: &[u8], data: &[u8], at: u64, cfg: &FileConfig) {
        let mut file = TrackedFile::open(name, cfg);
        file.append(data);
        self.parts.push(Part {
            file,
            start: at,
            end: at + data.len() as u64,
        });
    }

    /// One call of Suricata's multipart handler on `chunk` (the body from `parsed`).
    fn handle(&mut self, chunk: &[u8], cfg: &FileConfig) {
        let base = self.parsed;
        let len = chunk.len();
        let bnd_len = self.boundary.len() - 2;
        let bnd_end_len = self.boundary.len();
        let boundary = std::mem::take(&mut self.boundary);
        let delim = &boundary[..bnd_len];

        let mut header_start = find(chunk, delim);
        let mut header_end = None;
        let mut form_end = None;
        if let Some(hs) = header_start {
            header_end = find(&chunk[hs..], b"\r\n\r\n").map(|e| hs + e);
            form_end = find(&chunk[hs..], &boundary).map(|e| hs + e);
        }

        if self.in_file {
            if let Some(hs) = header_start {
                // The part ends before the `\r\n` ahead of the boundary.
                let n = hs.saturating_sub(2);
                self.append(&chunk[..n], base);
                self.close_open(false);
            } else {
                if len > bnd_end_len {
                    // Everything but what could be the start of a boundary.
                    let mut n = len - bnd_len;
                    while n < len {
                        if chunk[n] == b'\r' && (n + 1 == len || chunk[n + 1] == b'\n') {
                            break;
                        }
                        n += 1;
                    }
                    self.append(&chunk[..n], base);
                    self.parsed += n as u64;
                }
                self.boundary = boundary;
                return;
            }
        }

        let mut ended = false;
        // Where the parse offset stands inside this chunk (the fix of Suricata 7.0.12,
        // ticket 7582: 7.0.10 added each header's end counted from the chunk start, so a
        // second part in one call moved the offset past bytes never parsed).
        let mut pos = 0usize;
        'parts: while let (Some(hs), Some(he)) = (header_start, header_end) {
            if Some(he) == form_end || hs >= len || he >= len || hs >= he {
                break;
            }
            let mut header = &chunk[hs..he];
            if header.len() != bnd_len {
                if bnd_len + 2 <= header.len() {
                    header = &header[bnd_len + 2..];
                }
                if let Some(name) = self.part_filename(header) {
                    let name = name.to_vec();
                    self.in_file = true;
                    let fd = he + 4;
                    if let Some(fe) = form_end {
                        if fe == fd {
                            self.events |= EV_NO_FILEDATA;
                            ended = true;
                            break 'parts;
                        } else if fe < fd {
                            self.events |= EV_GENERIC;
                            ended = true;
                            break 'parts;
                        }
                        // Up to the closing boundary, or to the next part's boundary.
                        let mut n = (fe - fd).wrapping_sub(2);
                        if let Some(next) = chunk
                            .get(fd..fd.saturating_add(n))
                            .and_then(|d| find(d, delim))
                        {
                            n = n.wrapping_sub(fe - (fd + next));
                        }
                        if n > len {
                            self.events |= EV_GENERIC;
                            ended = true;
                            break 'parts;
                        }
                        self.open(&name, &chunk[fd..fd + n], base + fd as u64, cfg);
                        self.close_open(false);
                        self.parsed += he.saturating_sub(pos) as u64;
                        pos = he;
                    } else {
                        let data = &chunk[fd..];
                        match find(data, delim) {
                            None => {
                                // More of the file to come: keep what could start a boundary.
                                self.parsed += fd.saturating_sub(pos) as u64;
                                pos = fd;
                                let mut n = data.len();
                                if n >= bnd_len + 2 {
                                    n -= bnd_len + 1;
                                    for nb in 0..=bnd_len {
                                        if data.get(n) == Some(&b'\r')
                                            && (nb == bnd_len || data.get(n + 1) == Some(&b'\n'))
                                        {
                                            break;
                                        }
                                        n += 1;
                                    }
                                } else {
                                    n = 0;
                                }
                                let n = n.min(data.len());
                                self.open(&name, &data[..n], base + fd as u64, cfg);
                                self.parsed += n as u64;
                            }
                            Some(next) if next > 2 => {
                                self.open(&name, &data[..next - 2], base + fd as u64, cfg);
                                self.close_open(false);
                                self.parsed += he.saturating_sub(pos) as u64;
                                pos = he;
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
            // The next part's boundary and header end, after this header.
            let from = he + 4;
            let rest = chunk.get(from..).unwrap_or(&[]);
            header_start = find(rest, delim).map(|s| from + s);
            if header_start.is_some() {
                header_end = find(rest, b"\r\n\r\n").map(|e| from + e);
            }
        }

        // (Suricata's `goto end` skips this.)
        if !ended
            && form_end.is_none()
            && !self.in_file
            && header_start.is_none()
            && len > bnd_end_len
        {
            self.parsed += (len - bnd_end_len + 1) as u64;
        }
        self.boundary = boundary;
    }

    /// The `filename=` of a part's headers (`HtpRequestBodyMultipartParseHeader`), raising
    /// `multipart_invalid_header` for a line without a value.
    fn part_filename<'a>(&mut self, mut header: &'a [u8]) -> Option<&'a [u8]> {
        const CD: &[u8] = b"content-disposition:";
        let mut name = None;
        while !header.is_empty() {
            let (line, next) = match find(header, b"\r\n") {
                Some(i) => (&header[..i], Some(i + 2)),
                None => (header, None),
            };
            match line.iter().position(|&c| c == b':') {
                None => self.events |= EV_INVALID_HEADER,
                Some(i) if i + 1 == line.len() => self.events |= EV_INVALID_HEADER,
                Some(_) => {
                    if line.len() >= CD.len() && line[..CD.len()].eq_ignore_ascii_case(CD) {
                        name = header_param(b"filename=", &line[CD.len()..]);
                    }
                }
            }
            match next {
                Some(n) => header = &header[n..],
                None => break,
            }
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(parts: &[(&str, Option<&str>, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (name, file, data) in parts {
            b.extend_from_slice(b"--XyZ\r\n");
            match file {
                Some(f) => b.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: text/plain\r\n\r\n").as_bytes(),
                ),
                None => b.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                ),
            }
            b.extend_from_slice(data.as_bytes());
            b.extend_from_slice(b"\r\n");
        }
        b.extend_from_slice(b"--XyZ--\r\n");
        b
    }

    fn run(body: &[u8], step: usize) -> Multipart {
        let mut m = Multipart::from_content_type(b"multipart/form-data; boundary=XyZ")
            .unwrap()
            .unwrap();
        for c in body.chunks(step) {
            m.feed(c, &FileConfig::default());
        }
        m.finish();
        m
    }

    fn summary(m: &Multipart, body: &[u8]) -> Vec<(String, String, u64)> {
        m.parts
            .iter()
            .map(|p| {
                let d = &body[p.start as usize..p.end as usize];
                (
                    String::from_utf8_lossy(p.file.name()).into_owned(),
                    String::from_utf8_lossy(d).into_owned(),
                    p.file.size(),
                )
            })
            .collect()
    }

    #[test]
    fn boundary_and_filename_params_as_suricata_tokenizes() {
        assert_eq!(
            header_param(b"boundary=", b"multipart/form-data; boundary=\"ab;c\""),
            Some(&b"ab;c"[..])
        );
        assert_eq!(header_param(b"boundary=", b"multipart/form-data"), None);
        assert_eq!(
            header_param(b"filename=", b" form-data; name=\"a\"; filename=\"x.txt\""),
            Some(&b"x.txt"[..])
        );
        // `name=` is not `filename=`.
        assert_eq!(header_param(b"filename=", b" form-data; name=\"a\""), None);
        assert!(matches!(
            Multipart::from_content_type(
                format!("multipart/form-data; boundary={}", "a".repeat(200)).as_bytes()
            ),
            Some(Err(()))
        ));
    }

    #[test]
    fn two_files_and_a_field_in_one_chunk() {
        let body = form(&[
            ("upload1", Some("toto.txt"), "bateau"),
            ("field", None, "value"),
            ("upload2", Some("titi.txt"), "Titi minet"),
        ]);
        let m = run(&body, body.len());
        assert_eq!(
            summary(&m, &body),
            [
                ("toto.txt".into(), "bateau".into(), 6),
                ("titi.txt".into(), "Titi minet".into(), 10)
            ]
        );
        assert!(m
            .parts
            .iter()
            .all(|p| p.file.state() == crate::files::FileState::Closed));
    }

    #[test]
    fn a_file_streamed_in_small_chunks_keeps_every_byte() {
        let data = "line one\r\nline two with -- dashes\r\n--XyQ is no boundary\r\nend\r";
        let body = form(&[("f", Some("a.bin"), data)]);
        for step in [1, 3, 7, 64, 1000] {
            let m = run(&body, step);
            assert_eq!(m.parts.len(), 1, "step {step}");
            let p = &m.parts[0];
            assert_eq!(p.file.size(), data.len() as u64, "step {step}");
            assert_eq!(
                &body[p.start as usize..p.end as usize],
                data.as_bytes(),
                "step {step}"
            );
            assert_eq!(p.file.state(), crate::files::FileState::Closed);
        }
    }

    #[test]
    fn second_file_whose_header_ends_a_segment_keeps_its_data() {
        // suricata-verify's file-match-crossed: the first segment ends right after the
        // second part's header (Suricata 7.0.10 lost that file's bytes; 7.0.12 keeps them).
        let body = form(&[
            ("upload1", Some("toto.txt"), "toto est dans un bateau\n"),
            ("upload2", Some("titi.txt"), "Titi a vu un gros minet.\n"),
        ]);
        let cut = memchr::memmem::find(&body, b"Titi a vu").unwrap();
        let mut m = Multipart::from_content_type(b"multipart/form-data; boundary=XyZ")
            .unwrap()
            .unwrap();
        m.feed(&body[..cut], &FileConfig::default());
        m.feed(&body[cut..], &FileConfig::default());
        m.finish();
        assert_eq!(
            summary(&m, &body),
            [
                ("toto.txt".into(), "toto est dans un bateau\n".into(), 24),
                ("titi.txt".into(), "Titi a vu un gros minet.\n".into(), 25)
            ]
        );
    }

    #[test]
    fn no_file_part_and_bad_header_lines() {
        let m = run(&form(&[("a", None, "x")]), 5);
        assert!(m.parts.is_empty());
        let body = b"--XyZ\r\nContent-Disposition: form-data; filename=\"q\"\r\nbroken\r\n\r\nQ\r\n--XyZ--\r\n";
        let m = run(body, body.len());
        assert_eq!(m.events & EV_INVALID_HEADER, EV_INVALID_HEADER);
        assert_eq!(m.parts.len(), 1);
    }

    #[test]
    fn unterminated_file_is_closed_without_its_held_back_tail() {
        // Suricata holds back the bytes from a `\r` near the end (it could start the
        // delimiter's line); a file the closing boundary never reaches keeps the rest.
        let body =
            b"--XyZ\r\nContent-Disposition: form-data; filename=\"q\"\r\n\r\n0123456789ab\r\ncd";
        let m = run(body, body.len());
        assert_eq!(m.parts.len(), 1);
        assert_eq!(m.parts[0].file.size(), 12);
        assert_eq!(m.parts[0].file.state(), crate::files::FileState::Closed);
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u32 = 7;
        for _ in 0..2000 {
            let mut m = Multipart::from_content_type(b"boundary=a")
                .unwrap()
                .unwrap();
            for _ in 0..8 {
                let n = (x % 40) as usize;
                let d: Vec<u8> = (0..n)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        b"-a\r\n:;=\"filename=x"[(x >> 16) as usize % 18]
                    })
                    .collect();
                m.feed(&d, &FileConfig::default());
            }
            m.finish();
        }
    }
}
