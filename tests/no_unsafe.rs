//! No `unsafe` outside the capture crate (capture/, which includes capture/dpdk-sys) and the
//! OS-call crate (sys/): every
//! Rust source of the repository is scanned, comments and string literals stripped, for the
//! `unsafe` keyword. The fuzz crate and build outputs are skipped.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if matches!(name.as_str(), "target" | ".git" | "node_modules") || name.starts_with('.')
            {
                continue;
            }
            sources(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// The code of `text` with comments, string and char literals blanked out.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            out.push_str("\"\"");
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == b'\n' {
                    out.push('\n');
                }
                j += 1;
            }
            i = j;
        } else if c == b'"' {
            i += 1;
            out.push_str("\"\"");
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                if b.get(i) == Some(&b'\n') {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push_str("' '");
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// Lines of `code` using the keyword.
fn unsafe_lines(code: &str) -> Vec<usize> {
    let kw = concat!("un", "safe");
    code.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.match_indices(kw).any(|(at, _)| {
                let before = l[..at].chars().next_back();
                let after = l[at + kw.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn scanner_finds_the_keyword_and_ignores_comments_and_strings() {
    let kw = concat!("un", "safe");
    let code = format!(
        "// {kw} in a comment\nlet s = \"{kw} {{\";\nlet r = r#\"{kw}\"#;\n/* {kw} */ let a = 1;\n{kw} {{ x() }}\n#![forbid({kw}_code)]\nfn f<'a>(x: &'a u8) {{ {kw} {{ }} }}\n"
    );
    assert_eq!(unsafe_lines(&code_only(&code)), vec![5, 7]);
    // Line numbers survive multi-line strings and comments.
    let code = format!("let s = \"a\nb\";\n/*\n*/\nlet r = r\"x\ny\";\n{kw} {{ }}\n");
    assert_eq!(unsafe_lines(&code_only(&code)), vec![7]);
}

#[test]
fn no_unsafe_outside_the_capture_and_sys_crates() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 50, "scanned {} files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        if rel.starts_with("capture") || rel.starts_with("sys") || rel.starts_with("fuzz") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for line in unsafe_lines(&code_only(&text)) {
            found.push(format!("{}:{line}", rel.display()));
        }
    }
    assert!(
        found.is_empty(),
        "`unsafe` outside capture/ and sys/: {found:#?}"
    );
}

/// In capture/ and sys/, every `unsafe` block or impl carries a `// SAFETY:` comment on the
/// lines just above it (or on the same line).
#[test]
fn capture_and_sys_unsafe_blocks_have_safety_comments() {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&base.join("capture"), &mut files);
    sources(&base.join("sys"), &mut files);
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let raw: Vec<&str> = text.lines().collect();
        for line in unsafe_lines(&code_only(&text)) {
            let l = raw[line - 1].trim_start();
            // `unsafe fn` / `unsafe extern` declarations document their contract instead.
            let kw = concat!("un", "safe");
            if l.contains(&format!("{kw} fn"))
                || l.contains(&format!("{kw} extern"))
                || l.contains(&format!("pub {kw} fn"))
            {
                continue;
            }
            let lo = line.saturating_sub(8);
            let has = raw[lo..line]
                .iter()
                .any(|r| r.contains("SAFETY:") || r.contains("# Safety"));
            if !has {
                missing.push(format!("{}:{line}", f.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "unsafe without a SAFETY comment: {missing:#?}"
    );
}
