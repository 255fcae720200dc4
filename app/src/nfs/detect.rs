//! NFS rule keywords: `nfs_procedure` (any of a transaction's procedures: a number in
//! Suricata's uint syntax, or, as Suricata 8 accepts, a procedure name of the
//! transaction's version) and `nfs.version` (alias `nfs_version`), both inspected on the
//! request side as Suricata registers them.

use shrike_rules::parse::UintMatch;

use super::{nfs4, proc2_string, proc3_string, NfsState};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// The keywords.
pub static KEYWORDS: &[KeywordDesc] = &[
    KeywordDesc {
        name: "nfs_procedure",
        dir: Some(Dir::ToServer),
        setup: setup_procedure,
    },
    KeywordDesc {
        name: "nfs.version",
        dir: Some(Dir::ToServer),
        setup: setup_version,
    },
    KeywordDesc {
        name: "nfs_version",
        dir: Some(Dir::ToServer),
        setup: setup_version,
    },
];

#[derive(Debug)]
enum ProcMatch {
    Num(UintMatch),
    Name(String),
}

impl TxMatch for ProcMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<NfsState>()?;
        let t = s.tx(tx)?;
        let mut procs = vec![t.procedure];
        if let Some(f) = &t.file {
            procs.extend_from_slice(&f.additional_procs);
        }
        Some(procs.iter().any(|&p| match self {
            ProcMatch::Num(m) => m.matches(u64::from(p)),
            ProcMatch::Name(n) => {
                let name = match t.nfs_version {
                    2 => proc2_string(p),
                    4 => nfs4::proc_string(p),
                    _ => proc3_string(p),
                };
                name.eq_ignore_ascii_case(n)
            }
        }))
    }
}

fn setup_procedure(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("nfs_procedure needs a value")?.trim();
    if v.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(Box::new(ProcMatch::Name(v.to_string())));
    }
    Ok(Box::new(ProcMatch::Num(
        UintMatch::parse(v, u64::from(u32::MAX), "nfs_procedure").map_err(|e| e.to_string())?,
    )))
}

#[derive(Debug)]
struct VersionMatch(UintMatch);

impl TxMatch for VersionMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<NfsState>()?;
        let t = s.tx(tx)?;
        Some(self.0.matches(u64::from(t.nfs_version)))
    }
}

fn setup_version(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    let v = v.ok_or("nfs.version needs a value")?.trim();
    Ok(Box::new(VersionMatch(
        UintMatch::parse(v, u64::from(u32::MAX), "nfs.version").map_err(|e| e.to_string())?,
    )))
}
