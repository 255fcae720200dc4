//! Accumulates a rule's options in order and applies Suricata's sticky
//! buffer and content-modifier semantics.

use std::sync::Arc;

use super::ast::*;
use super::buffers::{BufferId, Transform};
use super::error::{ErrorKind, PResult, ParseError};
use super::keywords::{is_suricata_keyword, parse_keyword, parse_msg, Keyword};
use super::lexer::{truncate, unquote};
use super::payload::{
    decode_content, int_or_var, parse_base64_decode, parse_byte_extract, parse_byte_jump,
    parse_byte_math, parse_byte_test, parse_content_value, parse_isdataat, parse_pcre,
};
use super::uint::{parse_u64, UintMatch};
use super::{IpSet, PortSet};

/// The sticky buffer currently selected.
struct Active {
    buffer: BufferId,
    transforms: Vec<Transform>,
    /// Section index once the first match went in.
    section: Option<usize>,
    /// Something (match or buffer keyword) used this buffer.
    used: bool,
    /// A new instance of a multi-instance buffer: its matches go to a section of their own.
    fresh: bool,
}

/// Buffers Suricata 7.0.10 registers as multi-instance (`DetectBufferTypeSupportsMultiInstance`):
/// selecting one again with its sticky keyword starts a new instance, matched on its own
/// (each instance may match a different item, e.g. a different file).
const MULTI_INSTANCE: &[&str] = &[
    "dns.query",
    "file.magic",
    "file.name",
    "file.data",
    "http.response_body",
    "http2.header_name",
    "http.request_header",
    "http.response_header",
    "ike.vendor",
    "krb5.cname",
    "krb5.sname",
    "krb5_cname",
    "krb5_sname",
    "mqtt.subscribe.topic",
    "mqtt.unsubscribe.topic",
    "tls.cert_subject",
    "tls.certs",
    "quic.cyu.hash",
    "quic.cyu.string",
];

/// What the most recent match-creating option was (for `prefilter`).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum LastSm {
    #[default]
    None,
    /// A `content`.
    Content,
    /// Another payload match (`pcre`, `byte_*`, `isdataat` ...).
    Match,
    /// A non-payload keyword.
    Keyword,
}

#[derive(Default)]
pub(super) struct Builder {
    sections: Vec<BufferSection>,
    keywords: Vec<Keyword>,
    byte_vars: Vec<String>,
    active: Option<Active>,
    /// Buffers a sticky keyword selected so far.
    sticky_seen: Vec<BufferId>,
    /// (section, index) of the most recent content.
    last_content: Option<(usize, usize)>,
    /// Section of the most recent match of any kind.
    last_match_section: Option<usize>,
    fast_pattern_seen: bool,
    /// The most recent option that became a match (Suricata's last SigMatch).
    last_sm: LastSm,
    prefilter_seen: bool,
    msg: Option<String>,
    sid: Option<u32>,
    rev: Option<u32>,
    gid: Option<u32>,
    classtype: Option<String>,
    priority: Option<u32>,
    references: Vec<Reference>,
    metadata: String,
    target: Option<Target>,
    noalert: bool,
}

fn need<'a>(kw: &'static str, v: Option<&'a str>) -> PResult<&'a str> {
    match v.map(str::trim) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(ParseError::bad(kw, "needs a value")),
    }
}

fn no_value(kw: &'static str, v: Option<&str>) -> PResult<()> {
    match v.map(str::trim) {
        Some(s) if !s.is_empty() => Err(ParseError::bad(
            kw,
            format!("takes no value, got `{}`", truncate(s, 40)),
        )),
        _ => Ok(()),
    }
}

fn u32_val(kw: &'static str, v: Option<&str>) -> PResult<u32> {
    let s = unquote(need(kw, v)?);
    parse_u64(s)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| ParseError::bad(kw, format!("`{s}` is not a 32-bit number")))
}

impl Builder {
    fn find_or_create(&mut self, buffer: BufferId, transforms: &[Transform]) -> usize {
        if let Some(i) = self
            .sections
            .iter()
            .position(|s| s.buffer == buffer && s.transforms == transforms)
        {
            return i;
        }
        self.sections.push(BufferSection {
            buffer,
            transforms: transforms.to_vec(),
            matches: Vec::new(),
        });
        self.sections.len() - 1
    }

    /// Section that receives the next match under the current sticky buffer.
    fn current_section(&mut self) -> usize {
        match self.active.take() {
            None => self.find_or_create(BufferId::PAYLOAD, &[]),
            Some(mut a) => {
                let i = match a.section {
                    Some(i) => i,
                    None if a.fresh => {
                        self.sections.push(BufferSection {
                            buffer: a.buffer,
                            transforms: a.transforms.clone(),
                            matches: Vec::new(),
                        });
                        self.sections.len() - 1
                    }
                    None => self.find_or_create(a.buffer, &a.transforms),
                };
                a.section = Some(i);
                a.used = true;
                self.active = Some(a);
                i
            }
        }
    }

    fn push(&mut self, section: usize, m: Match) -> (usize, usize) {
        let is_content = matches!(m, Match::Content(_));
        let Some(sec) = self.sections.get_mut(section) else {
            return (section, 0);
        };
        sec.matches.push(m);
        let loc = (section, sec.matches.len() - 1);
        self.last_match_section = Some(section);
        self.last_sm = if is_content {
            LastSm::Content
        } else {
            LastSm::Match
        };
        if is_content {
            self.last_content = Some(loc);
        }
        loc
    }

    fn last_content_mut(&mut self, kw: &'static str) -> PResult<&mut Content> {
        let (s, i) = self.last_content.ok_or_else(|| {
            ParseError::semantic(
                "modifier without content",
                format!("`{kw}` needs a preceding content"),
            )
        })?;
        match self
            .sections
            .get_mut(s)
            .and_then(|sec| sec.matches.get_mut(i))
        {
            Some(Match::Content(c)) => Ok(c),
            _ => Err(ParseError::semantic(
                "modifier without content",
                format!("`{kw}` needs a preceding content"),
            )),
        }
    }

    /// Section for a relative byte_*/isdataat keyword: with no sticky buffer
    /// Suricata puts it in the list of the previous match (which a legacy
    /// modifier may have moved out of the payload).
    fn relative_section(&mut self, relative: bool) -> usize {
        match (relative, &self.active, self.last_match_section) {
            (true, None, Some(s)) => s,
            _ => self.current_section(),
        }
    }

    /// Suricata anchors `/R` on the previous content or pcre only.
    fn has_previous_pattern(&self, section: usize) -> bool {
        self.sections.get(section).is_some_and(|s| {
            s.matches
                .iter()
                .any(|m| matches!(m, Match::Content(_) | Match::Pcre(_)))
        })
    }

    fn set_sticky(&mut self, buffer: BufferId) -> PResult<()> {
        self.check_active_used()?;
        self.active = if buffer == BufferId::PAYLOAD {
            None
        } else {
            // Suricata's `DetectBufferSetActiveList`: the first sticky selection of a buffer
            // takes over what content modifiers put there; a later one of a multi-instance
            // buffer starts a new instance.
            let fresh = if self.sticky_seen.contains(&buffer) {
                MULTI_INSTANCE.contains(&buffer.name())
            } else {
                self.sticky_seen.push(buffer);
                false
            };
            Some(Active {
                buffer,
                transforms: Vec::new(),
                section: None,
                used: false,
                fresh,
            })
        };
        Ok(())
    }

    fn check_active_used(&self) -> PResult<()> {
        match &self.active {
            Some(a) if !a.used => Err(ParseError::semantic(
                "sticky buffer without matches",
                format!(
                    "buffer `{}` was selected but no match follows it",
                    a.buffer.name()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Handles one option.
    pub(super) fn option(&mut self, name: &str, value: Option<&str>) -> PResult<()> {
        match name {
            "msg" => {
                if self.msg.is_some() {
                    return Err(ParseError::bad("msg", "given twice"));
                }
                self.msg = Some(parse_msg(need("msg", value)?)?);
            }
            "sid" => {
                if self.sid.is_some() {
                    return Err(ParseError::bad("sid", "given twice"));
                }
                let s = u32_val("sid", value)?;
                if s == 0 {
                    return Err(ParseError::bad("sid", "must be > 0"));
                }
                self.sid = Some(s);
            }
            "rev" => self.rev = Some(u32_val("rev", value)?),
            "gid" => self.gid = Some(u32_val("gid", value)?),
            "classtype" => {
                let c = need("classtype", value)?;
                if !c
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                {
                    return Err(ParseError::bad("classtype", format!("bad name `{c}`")));
                }
                self.classtype = Some(c.to_string());
            }
            "priority" => {
                // Suricata takes any number (`^\s*(\d+)\s*$`); a second `priority` keeps the
                // highest priority (the lowest number).
                let p = u32_val("priority", value)?;
                self.priority = Some(self.priority.map_or(p, |old| old.min(p)));
            }
            "reference" => {
                let v = need("reference", value)?;
                let (sys, id) = v.split_once(',').ok_or_else(|| {
                    ParseError::bad("reference", format!("expected `system,id`: `{v}`"))
                })?;
                self.references.push(Reference {
                    system: sys.trim().to_string(),
                    id: unquote(id.trim()).to_string(),
                });
            }
            "metadata" => {
                let v = need("metadata", value)?;
                if !self.metadata.is_empty() {
                    self.metadata.push_str(", ");
                }
                self.metadata.push_str(v);
            }
            "target" => {
                self.target = Some(match need("target", value)? {
                    "src_ip" => Target::SrcIp,
                    "dest_ip" => Target::DestIp,
                    t => {
                        return Err(ParseError::bad(
                            "target",
                            format!("`{t}` is not src_ip or dest_ip"),
                        ))
                    }
                })
            }
            "noalert" => {
                no_value("noalert", value)?;
                self.noalert = true;
            }
            "content" => {
                let (pattern, negated) = parse_content_value("content", need("content", value)?)?;
                let s = self.current_section();
                self.push(
                    s,
                    Match::Content(Content {
                        pattern,
                        negated,
                        ..Content::default()
                    }),
                );
            }
            "filename" | "fileext" => {
                // Suricata 7: a nocase content on `file.name` (`fileext`: `.ext` at the
                // end); the sticky buffer in force is reset.
                let v = need(
                    if name == "filename" {
                        "filename"
                    } else {
                        "fileext"
                    },
                    value,
                )?;
                let t = v.trim();
                let (neg, rest) = match t.strip_prefix('!') {
                    Some(r) => ("!", r.trim_start()),
                    None => ("", t),
                };
                let quoted = if rest.len() >= 2 && rest.starts_with('"') && rest.ends_with('"') {
                    format!("{neg}{rest}")
                } else {
                    format!("{neg}\"{rest}\"")
                };
                let kw = if name == "filename" {
                    "filename"
                } else {
                    "fileext"
                };
                let (mut pattern, negated) = parse_content_value(kw, &quoted)?;
                if name == "fileext" {
                    pattern.insert(0, b'.');
                }
                self.check_active_used()?;
                self.active = None;
                let fname = BufferId::by_name("file.name").ok_or_else(|| {
                    ParseError::semantic("unknown buffer", "file.name is not registered")
                })?;
                let s = self.find_or_create(fname, &[]);
                self.push(
                    s,
                    Match::Content(Content {
                        pattern,
                        negated,
                        nocase: true,
                        endswith: name == "fileext",
                        ..Content::default()
                    }),
                );
            }
            "uricontent" => {
                if self.active.is_some() {
                    return Err(ParseError::semantic(
                        "content modifier after sticky buffer",
                        "`uricontent` seen with a sticky buffer still set",
                    ));
                }
                let (pattern, negated) =
                    parse_content_value("uricontent", need("uricontent", value)?)?;
                let uri = BufferId::by_name("http.uri").unwrap_or(BufferId::PAYLOAD);
                let s = self.find_or_create(uri, &[]);
                self.push(
                    s,
                    Match::Content(Content {
                        pattern,
                        negated,
                        ..Content::default()
                    }),
                );
            }
            "nocase" => {
                no_value("nocase", value)?;
                let c = self.last_content_mut("nocase")?;
                if c.nocase {
                    return Err(ParseError::bad("nocase", "given twice for one content"));
                }
                c.nocase = true;
            }
            "rawbytes" => {
                no_value("rawbytes", value)?;
                self.last_content_mut("rawbytes")?.rawbytes = true;
            }
            "depth" | "offset" => self.absolute_modifier(name, value)?,
            "distance" | "within" => self.relative_modifier(name, value)?,
            "startswith" => {
                no_value("startswith", value)?;
                let c = self.last_content_mut("startswith")?;
                if c.depth.is_some() || c.offset.is_some() || c.is_relative() || c.startswith {
                    return Err(ParseError::semantic(
                        "conflicting content modifiers",
                        "startswith can't be mixed with depth, offset, distance or within",
                    ));
                }
                c.startswith = true;
            }
            "endswith" => {
                no_value("endswith", value)?;
                let c = self.last_content_mut("endswith")?;
                if c.endswith {
                    return Err(ParseError::bad("endswith", "given twice for one content"));
                }
                c.endswith = true;
            }
            "fast_pattern" => self.fast_pattern(value)?,
            "prefilter" => self.prefilter(value)?,
            "replace" => {
                let v = super::lexer::require_quotes("replace", need("replace", value)?)?;
                let bytes = decode_content("replace", v)?;
                let c = self.last_content_mut("replace")?;
                if c.negated {
                    return Err(ParseError::bad(
                        "replace",
                        "can't replace a negated content",
                    ));
                }
                if bytes.len() != c.pattern.len() {
                    return Err(ParseError::bad(
                        "replace",
                        "replacement must be as long as the content",
                    ));
                }
                c.replace = Some(bytes);
            }
            "pcre" => {
                let spec = parse_pcre(need("pcre", value)?)?;
                // `/Q` (Suricata's file_data) inside `http.response_body`, which Suricata
                // also inspects as file_data, is that buffer.
                let same = |a: BufferId, b: BufferId| {
                    a == b || (a.name() == "http.response_body" && b.name() == "file.data")
                };
                let section = match (spec.buffer, &self.active) {
                    (Some(b), Some(a)) if !same(a.buffer, b) => {
                        return Err(ParseError::semantic(
                            "pcre buffer modifier conflicts with sticky buffer",
                            format!(
                                "pcre selects `{}` while `{}` is active",
                                b.name(),
                                a.buffer.name()
                            ),
                        ))
                    }
                    (Some(b), None) => self.find_or_create(b, &[]),
                    _ => self.current_section(),
                };
                if spec.pcre.relative
                    && self.active.is_none()
                    && spec.buffer.is_none()
                    && !self.has_previous_pattern(section)
                {
                    return Err(ParseError::semantic(
                        "relative match without previous match",
                        "pcre with /R needs a preceding match in the same buffer",
                    ));
                }
                self.push(section, Match::Pcre(Box::new(spec.pcre)));
            }
            "byte_test" => {
                let m = parse_byte_test(need("byte_test", value)?, &self.byte_vars)?;
                let s = self.relative_section(m.relative);
                self.push(s, Match::ByteTest(m));
            }
            "byte_jump" => {
                let m = parse_byte_jump(need("byte_jump", value)?, &self.byte_vars)?;
                let s = self.relative_section(m.relative);
                self.push(s, Match::ByteJump(m));
            }
            "byte_extract" => {
                let m = parse_byte_extract(need("byte_extract", value)?, &mut self.byte_vars)?;
                let s = self.relative_section(m.relative);
                self.push(s, Match::ByteExtract(m));
            }
            "byte_math" => {
                let m = parse_byte_math(need("byte_math", value)?, &mut self.byte_vars)?;
                let s = self.relative_section(m.relative);
                self.push(s, Match::ByteMath(m));
            }
            "isdataat" => {
                let m = parse_isdataat(need("isdataat", value)?, &self.byte_vars)?;
                let s = self.relative_section(m.relative);
                // Suricata 7 turns `isdataat:!1,relative` right after a
                // content into `endswith` on that content.
                if m.negated && m.relative && m.pos == IntOrVar::Lit(1) {
                    if let Some(Match::Content(c)) = self
                        .sections
                        .get_mut(s)
                        .and_then(|sec| sec.matches.last_mut())
                    {
                        c.endswith = true;
                        return Ok(());
                    }
                }
                self.push(s, Match::IsDataAt(m));
            }
            "bsize" => {
                if self.active.is_none() {
                    return Err(ParseError::semantic(
                        "bsize without sticky buffer",
                        "bsize needs a sticky buffer",
                    ));
                }
                let m = UintMatch::parse(need("bsize", value)?, u64::MAX, "bsize")?;
                let s = self.current_section();
                self.push(s, Match::Bsize(m));
            }
            "base64_decode" => {
                let m = parse_base64_decode(value)?;
                // Without a sticky buffer Suricata appends it to the list of the previous
                // match (a legacy modifier such as `http_uri` may have moved it).
                let s = self.relative_section(true);
                self.push(s, Match::Base64Decode(m));
            }
            "pkt_data" => {
                no_value("pkt_data", value)?;
                self.set_sticky(BufferId::PAYLOAD)?;
            }
            _ => self.other(name, value)?,
        }
        Ok(())
    }

    fn other(&mut self, name: &str, value: Option<&str>) -> PResult<()> {
        if let Some(b) = BufferId::from_modifier(name) {
            no_value("content modifier", value)?;
            return self.legacy_modifier(name, b);
        }
        if let Some(b) = BufferId::from_sticky(name) {
            if name == "frame" {
                // `frame:<proto>.<name>`: keep the frame name for the engine.
                let v = need("frame", value)?;
                self.set_sticky(b)?;
                self.keywords.push(Keyword::Unknown {
                    name: "frame".into(),
                    value: Some(v.to_string()),
                    known: true,
                });
                return Ok(());
            }
            no_value("sticky buffer", value)?;
            return self.set_sticky(b);
        }
        if let Some(t) = Transform::parse(name, value)? {
            let a = self.active.as_mut().ok_or_else(|| {
                ParseError::semantic(
                    "transform without sticky buffer",
                    format!("`{name}` needs a sticky buffer"),
                )
            })?;
            // A transform after matches starts a new (buffer, transforms)
            // section; the earlier matches keep the untransformed buffer.
            a.section = None;
            a.transforms.push(t);
            return Ok(());
        }
        if let Some(k) = parse_keyword(name, value)? {
            self.keywords.push(k);
            self.last_sm = LastSm::Keyword;
            return Ok(());
        }
        let known = is_suricata_keyword(name);
        if known {
            if let Some(a) = self.active.as_mut() {
                // Buffer keywords like `dataset` count as use of the sticky buffer.
                a.used = true;
            }
        }
        self.keywords.push(Keyword::Unknown {
            name: name.to_string(),
            value: value.map(str::to_string),
            known,
        });
        self.last_sm = LastSm::Keyword;
        Ok(())
    }

    /// `prefilter` (Suricata's `DetectPrefilterSetup`): applies to the last match. After a
    /// content it acts as `fast_pattern`; after a keyword it makes that keyword the rule's
    /// prefilter ([`Keyword::Prefilter`]); payload keywords other than content have no
    /// prefilter engine.
    fn prefilter(&mut self, value: Option<&str>) -> PResult<()> {
        no_value("prefilter", value)?;
        if self.prefilter_seen {
            return Err(ParseError::bad("prefilter", "already set"));
        }
        self.prefilter_seen = true;
        match self.last_sm {
            LastSm::None => Err(ParseError::semantic(
                "prefilter without match",
                "prefilter needs a preceding match",
            )),
            LastSm::Match => Err(ParseError::bad(
                "prefilter",
                "not supported for this payload keyword",
            )),
            LastSm::Content => {
                let seen = self.fast_pattern_seen;
                let c = self.last_content_mut("prefilter")?;
                if c.negated && (c.is_relative() || c.depth.is_some() || c.offset.is_some()) {
                    return Err(ParseError::bad(
                        "prefilter",
                        "can't be used on a negated content with relative or absolute modifiers",
                    ));
                }
                if !seen && c.fast_pattern.is_none() {
                    c.fast_pattern = Some(FastPattern::default());
                    self.fast_pattern_seen = true;
                }
                Ok(())
            }
            LastSm::Keyword => {
                self.keywords.push(Keyword::Prefilter);
                Ok(())
            }
        }
    }

    fn legacy_modifier(&mut self, name: &str, target: BufferId) -> PResult<()> {
        if let Some(a) = &self.active {
            return Err(ParseError::semantic(
                "content modifier after sticky buffer",
                format!(
                    "`{name}` seen with sticky buffer `{}` still set; reset it with pkt_data",
                    a.buffer.name()
                ),
            ));
        }
        let (s, i) = self.last_content.ok_or_else(|| {
            ParseError::semantic(
                "modifier without content",
                format!("`{name}` needs a preceding content"),
            )
        })?;
        let sec = self
            .sections
            .get_mut(s)
            .ok_or_else(|| ParseError::semantic("modifier without content", "content vanished"))?;
        if sec.buffer != BufferId::PAYLOAD || !sec.transforms.is_empty() {
            return Err(ParseError::semantic(
                "content modifier on content in another buffer",
                format!(
                    "`{name}` applied to a content already in `{}`",
                    sec.buffer.name()
                ),
            ));
        }
        if i >= sec.matches.len() {
            return Err(ParseError::semantic(
                "modifier without content",
                "content vanished",
            ));
        }
        let m = sec.matches.remove(i);
        if let Match::Content(c) = &m {
            if c.rawbytes {
                return Err(ParseError::semantic(
                    "rawbytes with buffer modifier",
                    format!("`rawbytes` can't be combined with `{name}`"),
                ));
            }
        }
        // Later indices in that section shifted down by one.
        let dst = self.find_or_create(target, &[]);
        self.push(dst, m);
        Ok(())
    }

    fn absolute_modifier(&mut self, name: &str, value: Option<&str>) -> PResult<()> {
        let kw: &'static str = if name == "depth" { "depth" } else { "offset" };
        let v = unquote(need(kw, value)?);
        let min = i64::from(kw == "depth");
        let val = int_or_var(kw, v, &self.byte_vars, min, 65535)?;
        let c = self.last_content_mut(kw)?;
        if c.is_relative() || c.startswith {
            return Err(ParseError::semantic(
                "conflicting content modifiers",
                format!("`{kw}` can't be mixed with distance/within/startswith on one content"),
            ));
        }
        let slot = if kw == "depth" {
            &mut c.depth
        } else {
            &mut c.offset
        };
        if slot.is_some() {
            return Err(ParseError::bad(kw, "given twice for one content"));
        }
        *slot = Some(val);
        if let (Some(IntOrVar::Lit(d)), true) = (c.depth, kw == "depth") {
            if usize::try_from(d).unwrap_or(0) < c.pattern.len() {
                return Err(ParseError::bad(
                    "depth",
                    "depth is smaller than the content length",
                ));
            }
        }
        Ok(())
    }

    fn relative_modifier(&mut self, name: &str, value: Option<&str>) -> PResult<()> {
        let kw: &'static str = if name == "distance" {
            "distance"
        } else {
            "within"
        };
        let v = unquote(need(kw, value)?);
        let val = int_or_var(kw, v, &self.byte_vars, -65535, 65535)?;
        let c = self.last_content_mut(kw)?;
        if c.depth.is_some() || c.offset.is_some() || c.startswith {
            return Err(ParseError::semantic(
                "conflicting content modifiers",
                format!("`{kw}` can't be mixed with depth/offset/startswith on one content"),
            ));
        }
        let slot = if kw == "distance" {
            &mut c.distance
        } else {
            &mut c.within
        };
        if slot.is_some() {
            return Err(ParseError::bad(kw, "given twice for one content"));
        }
        *slot = Some(val);
        if let (Some(IntOrVar::Lit(w)), true) = (c.within, kw == "within") {
            if w < 0 || usize::try_from(w).unwrap_or(0) < c.pattern.len() {
                return Err(ParseError::bad(
                    "within",
                    "within is smaller than the content length",
                ));
            }
        }
        Ok(())
    }

    fn fast_pattern(&mut self, value: Option<&str>) -> PResult<()> {
        if self.fast_pattern_seen {
            return Err(ParseError::bad(
                "fast_pattern",
                "only one content per rule can be the fast_pattern",
            ));
        }
        let mut fp = FastPattern::default();
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            None => {}
            Some("only") => fp.only = true,
            Some(v) => {
                let (o, l) = v
                    .split_once(',')
                    .ok_or_else(|| ParseError::bad("fast_pattern", format!("bad value `{v}`")))?;
                let o = parse_u64(o)
                    .and_then(|n| u16::try_from(n).ok())
                    .ok_or_else(|| ParseError::bad("fast_pattern", format!("bad offset `{o}`")))?;
                let l = parse_u64(l)
                    .and_then(|n| u16::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| ParseError::bad("fast_pattern", format!("bad length `{l}`")))?;
                fp.chop = Some((o, l));
            }
        }
        let c = self.last_content_mut("fast_pattern")?;
        if c.negated && (fp.only || fp.chop.is_some()) {
            return Err(ParseError::bad(
                "fast_pattern",
                "only/chop can't be used on a negated content",
            ));
        }
        if let Some((o, l)) = fp.chop {
            if usize::from(o) + usize::from(l) > c.pattern.len() {
                return Err(ParseError::bad(
                    "fast_pattern",
                    "offset + length exceed the content length",
                ));
            }
        }
        c.fast_pattern = Some(fp);
        self.fast_pattern_seen = true;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        mut self,
        action: Action,
        protocol: Protocol,
        src_addr: Arc<IpSet>,
        src_ports: Arc<PortSet>,
        direction: Direction,
        dst_addr: Arc<IpSet>,
        dst_ports: Arc<PortSet>,
    ) -> PResult<Rule> {
        self.check_active_used()?;
        let sid = self
            .sid
            .ok_or_else(|| ParseError::new(ErrorKind::MissingSid, "rule has no sid"))?;
        self.sections.retain(|s| !s.matches.is_empty());
        validate_hash_buffers(&self.sections)?;
        Ok(Rule {
            action,
            protocol,
            src_addr,
            src_ports,
            direction,
            dst_addr,
            dst_ports,
            gid: self.gid.unwrap_or(1),
            sid,
            rev: self.rev.unwrap_or(0),
            msg: self.msg.unwrap_or_default(),
            classtype: self.classtype,
            priority: self.priority,
            references: self.references,
            metadata: self.metadata,
            target: self.target,
            noalert: self.noalert,
            sections: self.sections,
            keywords: self.keywords,
            byte_vars: self.byte_vars,
        })
    }
}

/// Suricata's validate callbacks of the fingerprint and hash buffers
/// (`DetectTlsFingerprintValidateCallback`, `DetectTlsSerialValidateCallback`,
/// `DetectTlsJa3HashValidateCallback`, `DetectTlsJa3SHashValidateCallback`,
/// `DetectQuicHashValidateCallback`, `DetectSshHassh*HashValidateCallback`): a content that
/// can never match the buffer's format fails the rule. They check the untransformed buffer
/// only (a transform makes another buffer), and with Suricata's early returns.
fn validate_hash_buffers(sections: &[BufferSection]) -> PResult<()> {
    for s in sections.iter().filter(|s| s.transforms.is_empty()) {
        let name = s.buffer.name();
        let mut contents = s.matches.iter().filter_map(|m| match m {
            Match::Content(c) => Some(&c.pattern),
            _ => None,
        });
        match name {
            "tls.cert_fingerprint" => {
                for c in contents {
                    if c.len() != 59 {
                        return Err(ParseError::bad(
                            name,
                            "invalid length of the specified fingerprint (should be 59 characters long)",
                        ));
                    }
                    if !c.contains(&b':') {
                        return Err(ParseError::bad(
                            name,
                            "no colon delimiters ':' in the content",
                        ));
                    }
                }
            }
            "tls.cert_serial" => {
                // The first content decides: short, or with a colon.
                if let Some(c) = contents.next() {
                    if c.len() > 2 && !c.contains(&b':') {
                        return Err(ParseError::bad(
                            name,
                            "no colon delimiters ':' in the content",
                        ));
                    }
                }
            }
            "ja3.hash" | "ja3s.hash" => {
                // The first content decides: an MD5 in hex is 32 characters.
                if let Some(c) = contents.next() {
                    if c.len() != 32 {
                        return Err(ParseError::bad(
                            name,
                            "invalid length of the specified hash (should be 32 characters long)",
                        ));
                    }
                }
            }
            "quic.cyu.hash" | "ssh.hassh" | "ssh.hassh.server" => {
                for c in contents {
                    if c.len() != 32 {
                        return Err(ParseError::bad(
                            name,
                            "invalid length of the specified hash (should be 32 characters long)",
                        ));
                    }
                    if !c.iter().all(u8::is_ascii_hexdigit) {
                        return Err(ParseError::bad(name, "invalid characters in the hash"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
