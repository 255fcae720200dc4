//! Helpers shared by the rules test targets.
#![allow(dead_code)]

pub mod matcher_cases;

use shrike_rules::matcher::{compile_rule, MatchEnv, Scratch};
use shrike_rules::mpm::select_fast_pattern;
use shrike_rules::parse::{parse_rule, BufferId, Keyword, Vars};

/// Evaluates a rule's payload keywords (and dsize) on one buffer the way a
/// UDP packet's payload is inspected. `None` when the rule does not parse
/// or compile.
pub fn try_eval(opts: &str, payload: &[u8]) -> Option<bool> {
    let text = format!("alert udp any any -> any any ({opts} sid:1;)");
    let rule = parse_rule(&text, &Vars::suricata_defaults()).ok()?;
    let sections = compile_rule(&rule).ok()?;
    let mut sc = Scratch::new();
    let env = MatchEnv::default();
    for k in &rule.keywords {
        if let Keyword::Dsize(d) = k {
            if !d.matches(payload.len() as u64) {
                return Some(false);
            }
        }
    }
    let has_payload = sections.iter().any(|s| s.buffer == BufferId::PAYLOAD);
    // Engine behaviour: packets without payload skip payload rules, and the
    // fast pattern prefilters the rule (a negated fast pattern found in the
    // buffer means the rule is not inspected at all).
    if has_payload && payload.is_empty() {
        return Some(false);
    }
    if let Some(fp) = select_fast_pattern(&rule) {
        if fp.buffer == BufferId::PAYLOAD && (!fp.negated || fp.conclusive) {
            let found = if fp.nocase {
                payload
                    .windows(fp.pattern.len())
                    .any(|w| w.eq_ignore_ascii_case(&fp.pattern))
            } else {
                payload
                    .windows(fp.pattern.len())
                    .any(|w| w == fp.pattern.as_slice())
            };
            if found == fp.negated {
                return Some(false);
            }
        }
    }
    Some(
        sections
            .iter()
            .filter(|s| s.buffer == BufferId::PAYLOAD)
            .all(|s| s.matches(payload, &mut sc, &env)),
    )
}

/// Like [`try_eval`] but panics on rules that do not parse.
pub fn eval(opts: &str, payload: &[u8]) -> bool {
    try_eval(opts, payload).unwrap_or_else(|| panic!("`{opts}` does not parse/compile"))
}

/// Tiny deterministic PRNG (xorshift64*), so generated cases are stable.
pub struct Rng(pub u64);

impl Rng {
    /// Next raw value.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Picks one element.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// Renders bytes as a content string with `|hex|` for non-printables.
pub fn content_text(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        if c.is_ascii_alphanumeric() {
            s.push(c as char);
        } else {
            s.push_str(&format!("|{c:02x}|"));
        }
    }
    s
}

/// A random rule body over a small alphabet, mixing contents (with
/// nocase/negation/offset/depth/distance/within/startswith/endswith),
/// isdataat, pcre and byte_test — always syntactically valid.
pub fn random_rule(r: &mut Rng) -> String {
    const PATS: &[&[u8]] = &[
        b"a", b"b", b"ab", b"ba", b"abc", b"aB", b"c", b"bb", b"\x01", b"a\x01",
    ];
    let n = 1 + r.below(5);
    let mut parts = Vec::new();
    let mut have_content = false;
    let mut have_var = false;
    for _ in 0..n {
        match r.below(13) {
            0..=5 => {
                let p = *r.pick(PATS);
                let neg = r.below(5) == 0;
                let mut s = format!(
                    "content:{}\"{}\";",
                    if neg { "!" } else { "" },
                    content_text(p)
                );
                if r.below(3) == 0 {
                    s.push_str(" nocase;");
                }
                let len = p.len() as u64;
                match r.below(6) {
                    0 if have_content => {
                        s.push_str(&format!(" distance:{};", r.below(4) as i64 - 1));
                        if r.below(2) == 0 {
                            s.push_str(&format!(" within:{};", len + r.below(4)));
                        }
                    }
                    1 if have_content => s.push_str(&format!(" within:{};", len + r.below(4))),
                    2 => {
                        if r.below(2) == 0 {
                            s.push_str(&format!(" offset:{};", r.below(4)));
                        }
                        if r.below(2) == 0 {
                            s.push_str(&format!(" depth:{};", len + r.below(4)));
                        }
                    }
                    3 => s.push_str(" startswith;"),
                    _ => {}
                }
                if r.below(5) == 0 {
                    s.push_str(" endswith;");
                }
                have_content = true;
                parts.push(s);
            }
            6 => {
                let neg = if r.below(3) == 0 { "!" } else { "" };
                let rel = if have_content && r.below(2) == 0 {
                    ",relative"
                } else {
                    ""
                };
                parts.push(format!("isdataat:{neg}{}{rel};", r.below(5)));
            }
            7 => {
                let pat = r.pick(&["a.b", "^a", "b$", "a+b", "(a|b)c", "[ab]{2}", "\\x01"]);
                let rel = if have_content && r.below(2) == 0 {
                    "R"
                } else {
                    ""
                };
                let ci = if r.below(3) == 0 { "i" } else { "" };
                let neg = if r.below(5) == 0 { "!" } else { "" };
                parts.push(format!("pcre:{neg}\"/{pat}/{rel}{ci}\";"));
            }
            8 | 9 => {
                let rel = if have_content && r.below(2) == 0 {
                    ",relative"
                } else {
                    ""
                };
                let op = r.pick(&["=", "<", ">", "&", "!=", "^", ">=", "<="]);
                let value = if have_var && r.below(3) == 0 {
                    "v".to_string()
                } else {
                    r.pick(&[1u8, 2, 97, 98]).to_string()
                };
                let off = r.below(4) as i64 - i64::from(!rel.is_empty());
                parts.push(format!(
                    "byte_test:{},{op},{value},{off}{rel};",
                    1 + r.below(2)
                ));
            }
            10 => {
                let rel = if have_content && r.below(2) == 0 {
                    ",relative"
                } else {
                    ""
                };
                let extra = *r.pick(&[
                    "",
                    ",little",
                    ",align",
                    ",multiplier 2",
                    ",post_offset -1",
                    ",from_beginning",
                    ",post_offset 1",
                ]);
                parts.push(format!("byte_jump:1,{}{rel}{extra};", r.below(3)));
                have_content = true;
            }
            11 if !have_var => {
                let rel = if have_content && r.below(2) == 0 {
                    ",relative"
                } else {
                    ""
                };
                parts.push(format!("byte_extract:1,{},v{rel};", r.below(3)));
                have_var = true;
                have_content = true;
            }
            _ => {
                let p = *r.pick(PATS);
                if have_var && r.below(2) == 0 {
                    parts.push(format!("content:\"{}\"; distance:v;", content_text(p)));
                } else if have_var {
                    parts.push(format!("content:\"{}\"; offset:v;", content_text(p)));
                } else {
                    parts.push(format!(
                        "content:\"{}\"; distance:-{};",
                        content_text(p),
                        1 + r.below(3)
                    ));
                }
                have_content = true;
            }
        }
    }
    parts.join(" ")
}

/// A random payload over the rule alphabet.
pub fn random_payload(r: &mut Rng) -> Vec<u8> {
    const ALPHA: &[u8] = b"aabbcA\x01\x02\x03";
    let n = r.below(16);
    (0..n).map(|_| *r.pick(ALPHA)).collect()
}
