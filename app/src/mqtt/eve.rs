//! The `mqtt` object of EVE records and alerts, with Suricata 7's field names and nesting:
//! one member per message of the transaction (`connect`, `connack`, `publish`, `puback`,
//! ...), each with the fixed-header flags and the message's fields.

use serde::{Deserialize, Serialize};
use shrike_output::JsonWriter;

use super::parser::{FixedHeader, MsgIdOnly, Op, Property};
use super::MqttTx;

/// eve-log `- mqtt:` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct MqttLogConfig {
    /// `passwords`: log the CONNECT password (Suricata's default: yes).
    pub passwords: bool,
    /// `string-log-limit` (Suricata 8): longest topic, client id, user name, message and
    /// string property logged, longer ones end in `[truncated N additional bytes]`.
    /// Unset: no limit (Suricata 7).
    pub string_log_limit: Option<u32>,
}

impl Default for MqttLogConfig {
    fn default() -> Self {
        MqttLogConfig {
            passwords: true,
            string_log_limit: None,
        }
    }
}

/// A string value cut at `lim` bytes (at a character boundary), as Suricata 8's
/// `set_string_limited`.
fn str_lim(w: &mut JsonWriter, key: &str, v: &str, lim: usize) {
    if v.len() <= lim {
        w.set_str(key, v);
        return;
    }
    let mut cut = lim;
    while cut > 0 && !v.is_char_boundary(cut) {
        cut -= 1;
    }
    let more = v.len() - lim;
    let s = format!(
        "{}[truncated {more} additional byte{}]",
        &v[..cut],
        if more != 1 { "s" } else { "" }
    );
    w.set_str(key, &s);
}

/// Bytes cut at `lim`, as Suricata 8's `set_string_from_bytes_limited`.
fn bytes_lim(w: &mut JsonWriter, key: &str, v: &[u8], lim: usize) {
    if v.len() <= lim {
        w.set_bytes(key, v);
        return;
    }
    let more = v.len() - lim;
    let mut b = v[..lim].to_vec();
    b.extend_from_slice(
        format!(
            "[truncated {more} additional byte{}]",
            if more != 1 { "s" } else { "" }
        )
        .as_bytes(),
    );
    w.set_bytes(key, &b);
}

fn header(w: &mut JsonWriter, h: &FixedHeader) {
    w.set_u64("qos", u64::from(h.qos));
    w.set_bool("retain", h.retain);
    w.set_bool("dup", h.dup);
}

/// Write one property as Suricata does (user properties as `name: value`).
fn property(w: &mut JsonWriter, p: &Property, lim: usize) {
    match p {
        Property::Unknown => {}
        Property::U8(id, v) => {
            w.set_u64(super::parser::property_name(*id), u64::from(*v));
        }
        Property::U16(id, v) => {
            w.set_u64(super::parser::property_name(*id), u64::from(*v));
        }
        Property::U32(id, v) => {
            w.set_u64(super::parser::property_name(*id), u64::from(*v));
        }
        Property::Str(id, v) => str_lim(w, super::parser::property_name(*id), v, lim),
        Property::Bin(id, v) => bytes_lim(w, super::parser::property_name(*id), v, lim),
        Property::User(k, v) => str_lim(w, k, v, lim),
    }
}

fn properties(w: &mut JsonWriter, key: &str, ps: &Option<Vec<Property>>, lim: usize) {
    if let Some(ps) = ps {
        w.open_object(key);
        for p in ps {
            property(w, p, lim);
        }
        w.close();
    }
}

fn msgidonly(w: &mut JsonWriter, key: &str, h: &FixedHeader, m: &MsgIdOnly, lim: usize) {
    w.open_object(key);
    header(w, h);
    w.set_u64("message_id", u64::from(m.message_id));
    if let Some(rc) = m.reason_code {
        w.set_u64("reason_code", u64::from(rc));
    }
    properties(w, "properties", &m.properties, lim);
    w.close();
}

/// The `"mqtt": {...}` member of transaction `t` with the logger options `o`.
pub fn write_mqtt(w: &mut JsonWriter, t: &MqttTx, o: &MqttLogConfig) {
    let passwords = o.passwords;
    let lim = o.string_log_limit.map_or(usize::MAX, |l| l as usize);
    w.open_object("mqtt");
    for m in &t.msgs {
        let h = &m.header;
        match &m.op {
            Op::Connect(c) => {
                w.open_object("connect");
                header(w, h);
                w.set_str("protocol_string", &c.protocol_string);
                w.set_u64("protocol_version", u64::from(c.protocol_version));
                str_lim(w, "client_id", &c.client_id, lim);
                w.open_object("flags");
                w.set_bool("username", c.username_flag);
                w.set_bool("password", c.password_flag);
                w.set_bool("will_retain", c.will_retain);
                w.set_bool("will", c.will_flag);
                w.set_bool("clean_session", c.clean_session);
                w.close();
                if let Some(u) = &c.username {
                    str_lim(w, "username", u, lim);
                }
                if passwords {
                    if let Some(p) = &c.password {
                        w.set_bytes("password", p);
                    }
                }
                if c.will_flag {
                    w.open_object("will");
                    if let Some(t) = &c.will_topic {
                        str_lim(w, "topic", t, lim);
                    }
                    if let Some(m) = &c.will_message {
                        bytes_lim(w, "message", m, lim);
                    }
                    properties(w, "properties", &c.will_properties, lim);
                    w.close();
                }
                properties(w, "properties", &c.properties, lim);
                w.close();
            }
            Op::Connack(c) => {
                w.open_object("connack");
                header(w, h);
                w.set_bool("session_present", c.session_present);
                w.set_u64("return_code", u64::from(c.return_code));
                properties(w, "properties", &c.properties, lim);
                w.close();
            }
            Op::Publish(p) => {
                w.open_object("publish");
                header(w, h);
                str_lim(w, "topic", &p.topic, lim);
                if let Some(id) = p.message_id {
                    w.set_u64("message_id", u64::from(id));
                }
                bytes_lim(w, "message", &p.message, lim);
                properties(w, "properties", &p.properties, lim);
                w.close();
            }
            Op::Puback(v) => msgidonly(w, "puback", h, v, lim),
            Op::Pubrec(v) => msgidonly(w, "pubrec", h, v, lim),
            Op::Pubrel(v) => msgidonly(w, "pubrel", h, v, lim),
            Op::Pubcomp(v) => msgidonly(w, "pubcomp", h, v, lim),
            Op::Subscribe(s) => {
                w.open_object("subscribe");
                header(w, h);
                w.set_u64("message_id", u64::from(s.message_id));
                w.open_array("topics");
                // Topics until their lengths (each capped) add up past the limit.
                let mut used = 0usize;
                for t in &s.topics {
                    let n = t.topic_name.len().min(lim);
                    let over = used.saturating_add(n) > lim;
                    w.start_object();
                    str_lim(
                        w,
                        "topic",
                        &t.topic_name,
                        if over { lim - used } else { lim },
                    );
                    w.set_u64("qos", u64::from(t.qos));
                    w.close();
                    if over {
                        break;
                    }
                    used += n;
                }
                w.close();
                properties(w, "properties", &s.properties, lim);
                w.close();
            }
            Op::Suback(s) => {
                w.open_object("suback");
                header(w, h);
                w.set_u64("message_id", u64::from(s.message_id));
                w.open_array("qos_granted");
                for q in &s.qoss {
                    w.u64(u64::from(*q));
                }
                w.close();
                w.close();
            }
            Op::Unsubscribe(u) => {
                w.open_object("unsubscribe");
                header(w, h);
                w.set_u64("message_id", u64::from(u.message_id));
                w.open_array("topics");
                for t in &u.topics {
                    w.str(t);
                }
                w.close();
                w.close();
            }
            Op::Unsuback(u) => {
                w.open_object("unsuback");
                header(w, h);
                w.set_u64("message_id", u64::from(u.message_id));
                if !u.reason_codes.is_empty() {
                    w.open_array("reason_codes");
                    for c in &u.reason_codes {
                        w.u64(u64::from(*c));
                    }
                    w.close();
                }
                w.close();
            }
            Op::Pingreq => {
                w.open_object("pingreq");
                header(w, h);
                w.close();
            }
            Op::Pingresp => {
                w.open_object("pingresp");
                header(w, h);
                w.close();
            }
            Op::Auth(a) => {
                w.open_object("auth");
                header(w, h);
                w.set_u64("reason_code", u64::from(a.reason_code));
                properties(w, "properties", &a.properties, lim);
                w.close();
            }
            Op::Disconnect(d) => {
                w.open_object("disconnect");
                header(w, h);
                if let Some(rc) = d.reason_code {
                    w.set_u64("reason_code", u64::from(rc));
                }
                properties(w, "properties", &d.properties, lim);
                w.close();
            }
            Op::Truncated(tr) => {
                w.open_object(tr.original_message_type.lower_name());
                header(w, h);
                w.set_bool("truncated", true);
                w.set_u64("skipped_length", tr.skipped_length as u64);
                w.close();
            }
            Op::Unassigned => {}
        }
    }
    w.close();
}
