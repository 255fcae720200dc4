//! The `requires` keyword (Suricata 7.0.3+, `rust/src/detect/requires.rs`): a rule states
//! the Suricata versions and features it needs, and is skipped (not failed) when the running
//! engine does not meet them. Suricata checks it in a first pass over the rule, before any
//! other keyword is validated, so a rule written for a newer version is skipped even when it
//! uses keywords this version does not know.
//!
//! shrike answers as the Suricata release it follows ([`SURICATA_VERSION`]) with the
//! features its configuration provides (`ja3`, `ja4`, `output::file-store`).

use std::cmp::Ordering;

/// The Suricata release shrike's rule language follows.
pub const SURICATA_VERSION: Version = Version {
    major: 7,
    minor: 0,
    patch: 10,
};

/// A Suricata version (`7`, `7.0`, `7.0.3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major.
    pub major: u8,
    /// Minor.
    pub minor: u8,
    /// Patch.
    pub patch: u8,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Why a rule's requirements are not met (the rule is skipped), or why the expression is bad
/// (the rule fails).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unmet {
    /// The running version is older than required.
    VersionLt(Version),
    /// The running version is newer than allowed.
    VersionGt,
    /// A feature the engine does not provide.
    MissingFeature(String),
    /// An unknown requirement (`ignore-unknown-requirements` off).
    Unknown(String),
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmet::VersionLt(v) => write!(f, "Suricata version less than required ({v})"),
            Unmet::VersionGt => f.write_str("Suricata version greater than required"),
            Unmet::MissingFeature(x) => write!(f, "missing a required feature: feature {x}"),
            Unmet::Unknown(x) => write!(f, "Unknown requirements: {x}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Gt,
    Gte,
    Lt,
    Lte,
}

/// What the engine offers to `requires`.
#[derive(Clone, Debug, Default)]
pub struct Provided {
    /// Feature names (`ja3`, `ja4`, `output::file-store`).
    pub features: Vec<String>,
    /// `ignore-unknown-requirements`: unknown requirement keys do not skip the rule.
    pub ignore_unknown: bool,
}

/// Parses the next version part: everything up to `.`, `-`, a space or the end.
fn part(s: &str) -> Option<(u8, &str)> {
    let end = s.find(['.', '-', ' ']).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

fn version(s: &str) -> Option<(Version, &str)> {
    let s = s.trim_start();
    let (major, s) = part(s)?;
    let (minor, s) = if s.is_empty() || s.starts_with(' ') {
        (0, s)
    } else {
        part(s.strip_prefix('.')?)?
    };
    let (patch, s) = if s.is_empty() || s.starts_with(' ') {
        (0, s)
    } else {
        part(s.strip_prefix('.')?)?
    };
    Some((
        Version {
            major,
            minor,
            patch,
        },
        s,
    ))
}

fn op(s: &str) -> Option<(Op, &str)> {
    let s = s.trim_start();
    for (t, o) in [
        (">=", Op::Gte),
        (">", Op::Gt),
        ("<=", Op::Lte),
        ("<", Op::Lt),
    ] {
        if let Some(r) = s.strip_prefix(t) {
            return Some((o, r));
        }
    }
    None
}

/// `>= 7.0.3 < 8 | >= 8.0.3`: alternatives of all-must-hold comparisons.
fn version_expr(mut s: &str) -> Option<Vec<Vec<(Op, Version)>>> {
    let mut out = Vec::new();
    loop {
        let mut all = Vec::new();
        while let Some((o, r)) = op(s) {
            let (v, r) = version(r)?;
            all.push((o, v));
            s = r;
        }
        if all.is_empty() {
            return None;
        }
        out.push(all);
        match s.trim_start().strip_prefix('|') {
            Some(r) => s = r,
            None => return Some(out),
        }
    }
}

/// Checks a `requires` value. `Err(reason)`: the expression is bad (the rule fails, as
/// Suricata's `BadRequires` / `MultipleVersions`); `Ok(Some(unmet))`: the rule is skipped;
/// `Ok(None)`: the rule loads.
pub fn check(value: &str, running: Version, p: &Provided) -> Result<Option<Unmet>, String> {
    let mut features = Vec::new();
    let mut versions: Option<Vec<Vec<(Op, Version)>>> = None;
    let mut unknown = Vec::new();
    let mut s = value;
    while !s.is_empty() {
        let t = s.trim_start();
        let klen = t
            .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(t.len());
        let key = &t[..klen];
        let rest = t[klen..].trim_start();
        let vlen = rest.find(',').unwrap_or(rest.len());
        let val = &rest[..vlen];
        match key {
            "feature" => features.push(val.trim().to_string()),
            "version" => {
                if versions.is_some() {
                    return Err("Version may only be specified once".into());
                }
                versions = Some(
                    version_expr(val)
                        .ok_or_else(|| "Failed to parse requires expression".to_string())?,
                );
            }
            _ => {
                if key.is_empty() && val.trim().is_empty() {
                    return Err("Failed to parse requires expression".into());
                }
                unknown.push(format!("{key} {val}"));
            }
        }
        s = rest[vlen..].trim_start_matches(|c: char| c == ',' || c.is_whitespace());
    }
    if !p.ignore_unknown && !unknown.is_empty() {
        return Ok(Some(Unmet::Unknown(unknown.join(","))));
    }
    if let Some(alts) = versions {
        let mut first_err = None;
        let mut ok = false;
        for all in &alts {
            let err = all.iter().find_map(|&(o, v)| {
                let c = running.cmp(&v);
                match o {
                    Op::Gt if c != Ordering::Greater => Some(Unmet::VersionLt(v)),
                    Op::Gte if c == Ordering::Less => Some(Unmet::VersionLt(v)),
                    Op::Lt if c != Ordering::Less => Some(Unmet::VersionGt),
                    Op::Lte if c == Ordering::Greater => Some(Unmet::VersionGt),
                    _ => None,
                }
            });
            match err {
                Some(e) => {
                    first_err.get_or_insert(e);
                }
                None => ok = true,
            }
        }
        if !ok {
            return Ok(first_err);
        }
    }
    for f in features {
        if !p.features.contains(&f) {
            return Ok(Some(Unmet::MissingFeature(f)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u8, minor: u8, patch: u8) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn versions_and_features_as_suricata() {
        let p = Provided {
            features: vec!["ja3".into()],
            ignore_unknown: false,
        };
        let run = v(7, 0, 10);
        assert_eq!(check("version >= 7", run, &p), Ok(None));
        assert_eq!(check("version >= 7.0.3 < 8", run, &p), Ok(None));
        assert_eq!(
            check("version >= 8", run, &p),
            Ok(Some(Unmet::VersionLt(v(8, 0, 0))))
        );
        assert_eq!(check("version < 7", run, &p), Ok(Some(Unmet::VersionGt)));
        assert_eq!(
            check("version >= 8.0.3 | >= 7.0.10 < 7.1", run, &p),
            Ok(None)
        );
        assert_eq!(check("feature ja3", run, &p), Ok(None));
        assert_eq!(
            check("feature ja4, version >= 7", run, &p),
            Ok(Some(Unmet::MissingFeature("ja4".into())))
        );
        assert!(matches!(
            check("foo bar", run, &p),
            Ok(Some(Unmet::Unknown(_)))
        ));
        let ign = Provided {
            ignore_unknown: true,
            ..p.clone()
        };
        assert_eq!(check("foo bar", run, &ign), Ok(None));
        assert!(check("version >= 7, version >= 6", run, &p).is_err());
        assert!(check("version 7", run, &p).is_err());
        assert!(check("version >= x", run, &p).is_err());
    }
}
