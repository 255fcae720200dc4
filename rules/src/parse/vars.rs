//! Rule variables (`vars.address-groups` / `vars.port-groups`).

use std::collections::HashMap;

use super::error::{ErrorKind, PResult, ParseError};
use super::lexer::truncate;

/// Deepest nesting of `[` lists, `!` negations and `$VAR` references in one
/// address or port specification: Suricata's limit ("address block recursion
/// limit reached (max 64)"). Deeper input is rejected, never recursed into.
pub const MAX_NESTING: usize = 64;

/// Nesting depth and the chain of variables being expanded, for one
/// address or port specification.
pub(crate) struct Nesting<'v> {
    kind: ErrorKind,
    depth: usize,
    vars: Vec<&'v str>,
}

impl<'v> Nesting<'v> {
    /// Errors will carry `kind` ([`ErrorKind::Address`] or [`ErrorKind::Port`]).
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Nesting {
            kind,
            depth: 0,
            vars: Vec::new(),
        }
    }

    /// One level deeper (into `s`); an error past [`MAX_NESTING`].
    pub(crate) fn enter(&mut self, s: &str) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ParseError::new(
                self.kind.clone(),
                format!(
                    "nested deeper than {MAX_NESTING} levels of `[`, `!` or variables (the limit): `{}`",
                    truncate(s, 40)
                ),
            ));
        }
        Ok(())
    }

    /// Back out of a level.
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Start expanding `$name`; an error when it is already being expanded (a loop).
    pub(crate) fn push_var(&mut self, name: &'v str) -> PResult<()> {
        if self.vars.contains(&name) {
            let mut chain: Vec<String> = self.vars.iter().map(|v| format!("${v}")).collect();
            chain.push(format!("${name}"));
            return Err(ParseError::new(
                self.kind.clone(),
                format!("variable loop: {}", chain.join(" -> ")),
            ));
        }
        self.vars.push(name);
        Ok(())
    }

    /// Done expanding the innermost variable.
    pub(crate) fn pop_var(&mut self) {
        self.vars.pop();
    }
}

/// Suricata 7's default `address-groups` from its shipped `suricata.yaml`.
pub const DEFAULT_ADDRESS_GROUPS: &[(&str, &str)] = &[
    ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"),
    ("EXTERNAL_NET", "!$HOME_NET"),
    ("HTTP_SERVERS", "$HOME_NET"),
    ("SMTP_SERVERS", "$HOME_NET"),
    ("SQL_SERVERS", "$HOME_NET"),
    ("DNS_SERVERS", "$HOME_NET"),
    ("TELNET_SERVERS", "$HOME_NET"),
    ("AIM_SERVERS", "$EXTERNAL_NET"),
    ("DC_SERVERS", "$HOME_NET"),
    ("DNP3_SERVER", "$HOME_NET"),
    ("DNP3_CLIENT", "$HOME_NET"),
    ("MODBUS_CLIENT", "$HOME_NET"),
    ("MODBUS_SERVER", "$HOME_NET"),
    ("ENIP_CLIENT", "$HOME_NET"),
    ("ENIP_SERVER", "$HOME_NET"),
];

/// Suricata 7's default `port-groups` from its shipped `suricata.yaml`.
pub const DEFAULT_PORT_GROUPS: &[(&str, &str)] = &[
    ("HTTP_PORTS", "80"),
    ("SHELLCODE_PORTS", "!80"),
    ("ORACLE_PORTS", "1521"),
    ("SSH_PORTS", "22"),
    ("DNP3_PORTS", "20000"),
    ("MODBUS_PORTS", "502"),
    ("FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"),
    ("FTP_PORTS", "21"),
    ("GENEVE_PORTS", "6081"),
    ("VXLAN_PORTS", "4789"),
    ("TEREDO_PORTS", "3544"),
];

/// The variable table used to substitute `$NAME` in rule headers.
///
/// Names are stored without the leading `$`. Address and port groups are
/// separate name spaces, as in Suricata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    /// `vars.address-groups`.
    pub address_groups: HashMap<String, String>,
    /// `vars.port-groups`.
    pub port_groups: HashMap<String, String>,
}

impl Vars {
    /// An empty table (every `$VAR` is undefined).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Suricata's built-in defaults.
    pub fn suricata_defaults() -> Self {
        let mut v = Vars::default();
        for (k, val) in DEFAULT_ADDRESS_GROUPS {
            v.address_groups
                .insert((*k).to_string(), (*val).to_string());
        }
        for (k, val) in DEFAULT_PORT_GROUPS {
            v.port_groups.insert((*k).to_string(), (*val).to_string());
        }
        v
    }

    /// Sets (or replaces) an address group.
    pub fn set_address(&mut self, name: &str, value: &str) -> &mut Self {
        self.address_groups
            .insert(name.trim_start_matches('$').to_string(), value.to_string());
        self
    }

    /// Sets (or replaces) a port group.
    pub fn set_port(&mut self, name: &str, value: &str) -> &mut Self {
        self.port_groups
            .insert(name.trim_start_matches('$').to_string(), value.to_string());
        self
    }

    /// Looks up an address group by name (without `$`).
    pub fn address(&self, name: &str) -> Option<&str> {
        self.address_groups.get(name).map(String::as_str)
    }

    /// Looks up an address group: the stored name and its value.
    pub(crate) fn address_entry(&self, name: &str) -> Option<(&str, &str)> {
        self.address_groups
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Looks up a port group: the stored name and its value.
    pub(crate) fn port_entry(&self, name: &str) -> Option<(&str, &str)> {
        self.port_groups
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Looks up a port group by name (without `$`).
    pub fn port(&self, name: &str) -> Option<&str> {
        self.port_groups.get(name).map(String::as_str)
    }
}

/// Strips a run of `!` (any length, counted without recursion, as Suricata does): whether an
/// odd number negates what follows, and what follows.
pub(crate) fn strip_negations(p: &str) -> (bool, &str) {
    let rest = p.trim_start_matches('!');
    ((p.len() - rest.len()) % 2 == 1, rest.trim())
}

/// Splits a list body (without the outer brackets) at top-level commas.
/// Returns `None` when brackets are unbalanced.
pub(crate) fn split_top_level(s: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            b',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    out.push(s[start..].trim());
    Some(out)
}

/// If `s` is `[ ... ]` with the closing bracket matching the opening one,
/// returns the inside.
pub(crate) fn strip_outer_brackets(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    // The first '[' must close at the very end.
    let mut depth = 1i32;
    for b in inner.bytes() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(inner)
}
