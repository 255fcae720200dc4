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
}

impl Default for MqttLogConfig {
    fn default() -> Self {
        MqttLogConfig { passwords: true }
    }
}

fn header(w: &mut JsonWriter, h: &FixedHeader) {
    w.set_u64("qos", u64::from(h.qos));
    w.set_bool("retain", h.retain);
    w.set_bool("dup", h.dup);
}

/// Write one property as Suricata does (user properties as `name: value`).
fn property(w: &mut JsonWriter, p: &Property) {
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
        Property::Str(id, v) => {
            w.set_str(super::parser::property_name(*id), v);
        }
        Property::Bin(id, v) => {
            w.set_bytes(super::parser::property_name(*id), v);
        }
        Property::User(k, v) => {
            w.set_str(k, v);
        }
    }
}

fn properties(w: &mut JsonWriter, key: &str, ps: &Option<Vec<Property>>) {
    if let Some(ps) = ps {
        w.open_object(key);
        for p in ps {
            property(w, p);
        }
        w.close();
    }
}

fn msgidonly(w: &mut JsonWriter, key: &str, h: &FixedHeader, m: &MsgIdOnly) {
    w.open_object(key);
    header(w, h);
    w.set_u64("message_id", u64::from(m.message_id));
    if let Some(rc) = m.reason_code {
        w.set_u64("reason_code", u64::from(rc));
    }
    properties(w, "properties", &m.properties);
    w.close();
}

/// The `"mqtt": {...}` member of transaction `t` (`passwords`: log the CONNECT password).
pub fn write_mqtt(w: &mut JsonWriter, t: &MqttTx, passwords: bool) {
    w.open_object("mqtt");
    for m in &t.msgs {
        let h = &m.header;
        match &m.op {
            Op::Connect(c) => {
                w.open_object("connect");
                header(w, h);
                w.set_str("protocol_string", &c.protocol_string);
                w.set_u64("protocol_version", u64::from(c.protocol_version));
                w.set_str("client_id", &c.client_id);
                w.open_object("flags");
                w.set_bool("username", c.username_flag);
                w.set_bool("password", c.password_flag);
                w.set_bool("will_retain", c.will_retain);
                w.set_bool("will", c.will_flag);
                w.set_bool("clean_session", c.clean_session);
                w.close();
                if let Some(u) = &c.username {
                    w.set_str("username", u);
                }
                if passwords {
                    if let Some(p) = &c.password {
                        w.set_bytes("password", p);
                    }
                }
                if c.will_flag {
                    w.open_object("will");
                    if let Some(t) = &c.will_topic {
                        w.set_str("topic", t);
                    }
                    if let Some(m) = &c.will_message {
                        w.set_bytes("message", m);
                    }
                    properties(w, "properties", &c.will_properties);
                    w.close();
                }
                properties(w, "properties", &c.properties);
                w.close();
            }
            Op::Connack(c) => {
                w.open_object("connack");
                header(w, h);
                w.set_bool("session_present", c.session_present);
                w.set_u64("return_code", u64::from(c.return_code));
                properties(w, "properties", &c.properties);
                w.close();
            }
            Op::Publish(p) => {
                w.open_object("publish");
                header(w, h);
                w.set_str("topic", &p.topic);
                if let Some(id) = p.message_id {
                    w.set_u64("message_id", u64::from(id));
                }
                w.set_bytes("message", &p.message);
                properties(w, "properties", &p.properties);
                w.close();
            }
            Op::Puback(v) => msgidonly(w, "puback", h, v),
            Op::Pubrec(v) => msgidonly(w, "pubrec", h, v),
            Op::Pubrel(v) => msgidonly(w, "pubrel", h, v),
            Op::Pubcomp(v) => msgidonly(w, "pubcomp", h, v),
            Op::Subscribe(s) => {
                w.open_object("subscribe");
                header(w, h);
                w.set_u64("message_id", u64::from(s.message_id));
                w.open_array("topics");
                for t in &s.topics {
                    w.start_object();
                    w.set_str("topic", &t.topic_name);
                    w.set_u64("qos", u64::from(t.qos));
                    w.close();
                }
                w.close();
                properties(w, "properties", &s.properties);
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
                properties(w, "properties", &a.properties);
                w.close();
            }
            Op::Disconnect(d) => {
                w.open_object("disconnect");
                header(w, h);
                if let Some(rc) = d.reason_code {
                    w.set_u64("reason_code", u64::from(rc));
                }
                properties(w, "properties", &d.properties);
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
