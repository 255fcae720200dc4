//! Rule parse errors.

use std::fmt;

/// Why a rule (or one of its parts) was rejected. The `Display` form is the
/// stable "reason" used to count skipped rules per reason in load summaries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// Structural problem: missing parenthesis, unterminated option, bad quoting.
    Syntax,
    /// Unknown rule action.
    Action,
    /// Unknown protocol in the header.
    Protocol,
    /// Bad direction (only `->` and `<>` exist).
    Direction,
    /// Bad address specification.
    Address,
    /// Bad port specification.
    Port,
    /// A `$VAR` that is not defined in the [`super::Vars`] table.
    UndefinedVariable,
    /// Keyword not known to Suricata 7.
    UnknownKeyword(String),
    /// Known keyword with a value it does not accept.
    BadValue(&'static str),
    /// Keyword combination that Suricata rejects (e.g. `depth` with no content).
    Semantic(&'static str),
    /// The rule has no `sid`.
    MissingSid,
    /// A rule file is missing, unreadable or refused (not a problem of any rule in it).
    File,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Syntax => f.write_str("syntax error"),
            ErrorKind::Action => f.write_str("invalid action"),
            ErrorKind::Protocol => f.write_str("invalid protocol"),
            ErrorKind::Direction => f.write_str("invalid direction"),
            ErrorKind::Address => f.write_str("invalid address"),
            ErrorKind::Port => f.write_str("invalid port"),
            ErrorKind::UndefinedVariable => f.write_str("undefined variable"),
            ErrorKind::UnknownKeyword(k) => write!(f, "unknown keyword `{k}`"),
            ErrorKind::BadValue(k) => write!(f, "invalid `{k}` value"),
            ErrorKind::Semantic(what) => write!(f, "invalid rule: {what}"),
            ErrorKind::MissingSid => f.write_str("missing sid"),
            ErrorKind::File => f.write_str("rule file not loaded"),
        }
    }
}

/// A parse error: a reason category plus human-readable detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct ParseError {
    /// Reason category (counted per reason by the loader).
    pub kind: ErrorKind,
    /// What exactly was wrong.
    pub detail: String,
}

impl ParseError {
    /// Builds an error from a kind and a detail message.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        ParseError {
            kind,
            detail: detail.into(),
        }
    }

    /// Shorthand for [`ErrorKind::BadValue`].
    pub fn bad(keyword: &'static str, detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadValue(keyword), detail)
    }

    /// Shorthand for [`ErrorKind::Syntax`].
    pub fn syntax(detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Syntax, detail)
    }

    /// Shorthand for [`ErrorKind::Semantic`].
    pub fn semantic(what: &'static str, detail: impl Into<String>) -> Self {
        Self::new(ErrorKind::Semantic(what), detail)
    }
}

/// Result alias for the parser.
pub type PResult<T> = Result<T, ParseError>;
