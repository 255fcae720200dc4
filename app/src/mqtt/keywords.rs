//! The MQTT rule keywords that are not sticky buffers (Suricata 7's `detect-mqtt-*.c`):
//! `mqtt.type`, `mqtt.flags`, `mqtt.qos`, `mqtt.reason_code` (alias
//! `mqtt.connack.return_code`), `mqtt.connack.session_present`, `mqtt.connect.flags` and
//! `mqtt.protocol_version`. Each matches on a transaction once it is complete in the
//! inspected direction (Suricata registers them at progress 1); an open one never matches.

use shrike_rules::parse::UintMatch;

use super::parser::{Op, TypeCode};
use super::{MqttState, MqttTx};
use crate::registry::{AppParser, KeywordDesc, TxMatch};
use crate::Dir;

/// A flag a rule requires set, requires unset, or does not care about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlagState {
    /// Not named.
    #[default]
    DontCare,
    /// Named.
    MustBeSet,
    /// Named with `!`.
    CantBeSet,
}

impl FlagState {
    fn ok(self, v: bool) -> bool {
        match self {
            FlagState::DontCare => true,
            FlagState::MustBeSet => v,
            FlagState::CantBeSet => !v,
        }
    }
}

/// A parsed MQTT keyword.
#[derive(Clone, Debug)]
pub enum MqttMatch {
    /// `mqtt.type`: some message of the transaction has this type.
    Type(TypeCode),
    /// `mqtt.flags`: some message's fixed-header flags fit (retain, dup).
    Flags(FlagState, FlagState),
    /// `mqtt.qos`: some message has this QoS.
    Qos(u8),
    /// `mqtt.reason_code`.
    ReasonCode(u8),
    /// `mqtt.connack.session_present`.
    SessionPresent(bool),
    /// `mqtt.connect.flags`: username, password, will, will_retain, clean_session.
    ConnectFlags([FlagState; 5]),
    /// `mqtt.protocol_version` (the flow's, from its last CONNECT; Suricata's u8 syntax).
    ProtocolVersion(UintMatch),
}

/// Parse a comma-separated flag list (`dup,!retain`) over `names`, as Suricata: blanks
/// before a flag are skipped, a flag shorter than two characters, unknown or repeated is
/// an error.
fn parse_flags<const N: usize>(v: &str, names: [&str; N]) -> Result<[FlagState; N], String> {
    let mut out = [FlagState::DontCare; N];
    if v.trim().is_empty() {
        return Err(format!("invalid flag definition: {v}"));
    }
    for tok in v.split(',').filter(|t| !t.is_empty()) {
        let tok = tok.trim_start_matches([' ', '\t']);
        if tok.len() < 2 {
            return Err(format!("malformed flag value: {tok}"));
        }
        let (name, st) = match tok.strip_prefix('!') {
            Some(n) => (n, FlagState::CantBeSet),
            None => (tok, FlagState::MustBeSet),
        };
        let Some(i) = names.iter().position(|n| *n == name) else {
            return Err(format!("invalid flag definition: {tok}"));
        };
        if out[i] != FlagState::DontCare {
            return Err(format!("duplicate flag definition: {tok}"));
        }
        out[i] = st;
    }
    Ok(out)
}

fn parse_u8_dec(v: &str) -> Option<u8> {
    let t = v.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

impl MqttMatch {
    /// Parse the value of keyword `name`.
    pub fn parse(name: &str, value: Option<&str>) -> Result<MqttMatch, String> {
        let v = value.ok_or_else(|| format!("{name} needs a value"))?;
        match name {
            "mqtt.protocol_version" => {
                UintMatch::parse(v, u64::from(u8::MAX), "mqtt.protocol_version")
                    .map(MqttMatch::ProtocolVersion)
                    .map_err(|e| format!("{e:?}"))
            }
            "mqtt.type" => TypeCode::from_rule_name(v)
                .map(MqttMatch::Type)
                .ok_or_else(|| format!("unknown mqtt.type value {v}")),
            "mqtt.flags" => {
                let [retain, dup] = parse_flags(v, ["retain", "dup"])?;
                Ok(MqttMatch::Flags(retain, dup))
            }
            "mqtt.qos" => parse_u8_dec(v)
                .filter(|q| *q <= 2)
                .map(MqttMatch::Qos)
                .ok_or_else(|| format!("invalid MQTT QOS level: {v}")),
            "mqtt.reason_code" | "mqtt.connack.return_code" => parse_u8_dec(v)
                .map(MqttMatch::ReasonCode)
                .ok_or_else(|| format!("invalid MQTT reason code: {v}")),
            "mqtt.connack.session_present" => match v {
                "yes" | "true" => Ok(MqttMatch::SessionPresent(true)),
                "no" | "false" => Ok(MqttMatch::SessionPresent(false)),
                _ => Err(format!("invalid session_present flag definition: {v}")),
            },
            "mqtt.connect.flags" => Ok(MqttMatch::ConnectFlags(parse_flags(
                v,
                [
                    "username",
                    "password",
                    "will",
                    "will_retain",
                    "clean_session",
                ],
            )?)),
            _ => Err(format!("unknown MQTT keyword {name}")),
        }
    }

    /// Evaluate on transaction `tx` of `st` inspected in `dir`: `None` while the
    /// transaction is not complete in `dir` (and the flow goes on).
    pub fn eval(&self, st: &MqttState, tx: u64, dir: Dir) -> Option<bool> {
        let Some(t) = st.tx(tx) else {
            return Some(false);
        };
        // Suricata runs these at progress 1 only: an open transaction never matches, not
        // even at the end of the flow (a gap counts as complete, as its disruption flag).
        if !(t.done_in(dir) || st.gapped) {
            return None;
        }
        Some(self.matches_tx(st, t))
    }

    fn matches_tx(&self, st: &MqttState, t: &MqttTx) -> bool {
        match self {
            MqttMatch::Type(c) => t.msgs.iter().any(|m| m.header.message_type == *c),
            MqttMatch::Flags(retain, dup) => t
                .msgs
                .iter()
                .any(|m| retain.ok(m.header.retain) && dup.ok(m.header.dup)),
            MqttMatch::Qos(q) => t.msgs.iter().any(|m| m.header.qos == *q),
            MqttMatch::ReasonCode(code) => match reason_code(t) {
                Some(rc) => rc == *code,
                None => t.msgs.iter().any(|m| match &m.op {
                    Op::Unsuback(u) => u.reason_codes.contains(code),
                    Op::Suback(s) => s.qoss.contains(code),
                    _ => false,
                }),
            },
            MqttMatch::SessionPresent(want) => {
                t.msgs.iter().find_map(|m| match &m.op {
                    Op::Connack(c) => Some(c.session_present == *want),
                    _ => None,
                }) == Some(true)
            }
            MqttMatch::ConnectFlags(f) => t.msgs.iter().any(|m| match &m.op {
                Op::Connect(c) => {
                    f[0].ok(c.username_flag)
                        && f[1].ok(c.password_flag)
                        && f[2].ok(c.will_flag)
                        && f[3].ok(c.will_retain)
                        && f[4].ok(c.clean_session)
                }
                _ => false,
            }),
            MqttMatch::ProtocolVersion(m) => m.matches(u64::from(st.protocol_version)),
        }
    }
}

impl TxMatch for MqttMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, dir: Dir) -> Option<bool> {
        match parser.as_any().downcast_ref::<MqttState>() {
            Some(st) => self.eval(st, tx, dir),
            None => Some(false),
        }
    }
}

macro_rules! setups {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(
            fn $f(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
                MqttMatch::parse($name, v).map(|m| Box::new(m) as Box<dyn TxMatch>)
            }
        )*
        /// The MQTT keywords in the registry.
        pub static KEYWORDS: &[KeywordDesc] = &[
            $(KeywordDesc { name: $name, dir: dir_of($name), setup: $f },)*
        ];
    };
}

/// The direction a keyword is inspected in (`None`: both), as Suricata registers it.
const fn dir_of(name: &str) -> Option<Dir> {
    match name.as_bytes() {
        b"mqtt.type" | b"mqtt.reason_code" | b"mqtt.connack.return_code" => None,
        b"mqtt.connack.session_present" => Some(Dir::ToClient),
        _ => Some(Dir::ToServer),
    }
}

setups! {
    setup_type => "mqtt.type",
    setup_flags => "mqtt.flags",
    setup_qos => "mqtt.qos",
    setup_reason_code => "mqtt.reason_code",
    setup_return_code => "mqtt.connack.return_code",
    setup_session_present => "mqtt.connack.session_present",
    setup_connect_flags => "mqtt.connect.flags",
    setup_protocol_version => "mqtt.protocol_version",
}

/// The first reason code of the transaction's messages (Suricata's getter).
fn reason_code(t: &MqttTx) -> Option<u8> {
    t.msgs.iter().find_map(|m| match &m.op {
        Op::Puback(v) | Op::Pubrel(v) | Op::Pubrec(v) | Op::Pubcomp(v) => v.reason_code,
        Op::Auth(a) => Some(a.reason_code),
        Op::Connack(c) => Some(c.return_code),
        Op::Disconnect(d) => d.reason_code,
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_suricata() {
        let p = |n: &str, v: &str| format!("{:?}", MqttMatch::parse(n, Some(v)));
        let ok = |m: MqttMatch| format!("{:?}", Ok::<_, String>(m));
        assert_eq!(
            p("mqtt.type", "publish"),
            ok(MqttMatch::Type(TypeCode::Publish))
        );
        assert!(MqttMatch::parse("mqtt.type", Some("UNASSIGNED")).is_err());
        assert_eq!(
            p("mqtt.flags", "dup,!retain"),
            ok(MqttMatch::Flags(FlagState::CantBeSet, FlagState::MustBeSet))
        );
        assert!(MqttMatch::parse("mqtt.flags", Some("dup,dup")).is_err());
        assert!(MqttMatch::parse("mqtt.flags", Some("foo")).is_err());
        assert!(MqttMatch::parse("mqtt.qos", Some("3")).is_err());
        assert_eq!(p("mqtt.qos", "2"), ok(MqttMatch::Qos(2)));
        assert_eq!(
            p("mqtt.connack.return_code", " 134 "),
            ok(MqttMatch::ReasonCode(134))
        );
        assert!(MqttMatch::parse("mqtt.reason_code", Some("256")).is_err());
        assert!(MqttMatch::parse("mqtt.connack.session_present", Some("maybe")).is_err());
        assert_eq!(
            p("mqtt.connect.flags", "username, !will"),
            ok(MqttMatch::ConnectFlags([
                FlagState::MustBeSet,
                FlagState::DontCare,
                FlagState::CantBeSet,
                FlagState::DontCare,
                FlagState::DontCare
            ]))
        );
    }
}
