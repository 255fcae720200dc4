//! Rule variables (`vars.address-groups` / `vars.port-groups`).

use std::collections::HashMap;

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

    /// Looks up a port group by name (without `$`).
    pub fn port(&self, name: &str) -> Option<&str> {
        self.port_groups.get(name).map(String::as_str)
    }
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
