//! MQTT control packets (3.1, 3.1.1 and 5.0): the fixed header and every packet type's
//! variable header, properties and payload, decoded the way Suricata 7's MQTT parser does.
//!
//! [`parse_message`] takes the bytes at the start of a message: [`Parsed::Incomplete`] while
//! the message is not all in, [`Parsed::Error`] for malformed data (Suricata's
//! `malformed_traffic`), else the message and its length. A message longer than the
//! configured maximum is not decoded: it becomes [`Op::Truncated`] with the length to skip.

/// Message type codes (the high nibble of the first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum TypeCode {
    /// 0: reserved.
    Unassigned = 0,
    /// 1.
    Connect = 1,
    /// 2.
    Connack = 2,
    /// 3.
    Publish = 3,
    /// 4.
    Puback = 4,
    /// 5.
    Pubrec = 5,
    /// 6.
    Pubrel = 6,
    /// 7.
    Pubcomp = 7,
    /// 8.
    Subscribe = 8,
    /// 9.
    Suback = 9,
    /// 10.
    Unsubscribe = 10,
    /// 11.
    Unsuback = 11,
    /// 12.
    Pingreq = 12,
    /// 13.
    Pingresp = 13,
    /// 14.
    Disconnect = 14,
    /// 15 (MQTT 5).
    Auth = 15,
}

impl TypeCode {
    /// Every code, by value.
    pub const ALL: [TypeCode; 16] = [
        TypeCode::Unassigned,
        TypeCode::Connect,
        TypeCode::Connack,
        TypeCode::Publish,
        TypeCode::Puback,
        TypeCode::Pubrec,
        TypeCode::Pubrel,
        TypeCode::Pubcomp,
        TypeCode::Subscribe,
        TypeCode::Suback,
        TypeCode::Unsubscribe,
        TypeCode::Unsuback,
        TypeCode::Pingreq,
        TypeCode::Pingresp,
        TypeCode::Disconnect,
        TypeCode::Auth,
    ];

    /// The code of a 4-bit value.
    pub fn from_u8(v: u8) -> TypeCode {
        TypeCode::ALL[usize::from(v & 15)]
    }

    /// The lower-case name (EVE object key of a truncated message).
    pub fn lower_name(self) -> &'static str {
        match self {
            TypeCode::Unassigned => "unassigned",
            TypeCode::Connect => "connect",
            TypeCode::Connack => "connack",
            TypeCode::Publish => "publish",
            TypeCode::Puback => "puback",
            TypeCode::Pubrec => "pubrec",
            TypeCode::Pubrel => "pubrel",
            TypeCode::Pubcomp => "pubcomp",
            TypeCode::Subscribe => "subscribe",
            TypeCode::Suback => "suback",
            TypeCode::Unsubscribe => "unsubscribe",
            TypeCode::Unsuback => "unsuback",
            TypeCode::Pingreq => "pingreq",
            TypeCode::Pingresp => "pingresp",
            TypeCode::Disconnect => "disconnect",
            TypeCode::Auth => "auth",
        }
    }

    /// The code a rule names (`mqtt.type:PUBLISH`, any case). `UNASSIGNED` is not accepted,
    /// as in Suricata 7.
    pub fn from_rule_name(s: &str) -> Option<TypeCode> {
        TypeCode::ALL[1..]
            .iter()
            .copied()
            .find(|t| t.lower_name().eq_ignore_ascii_case(s.trim()))
    }
}

/// Frame type `pdu` (an index into [`crate::frames::names`]).
pub const FRAME_PDU: u8 = 0;
/// Frame type `header`.
pub const FRAME_HEADER: u8 = 1;
/// Frame type `data`.
pub const FRAME_DATA: u8 = 2;

/// The fixed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedHeader {
    /// Packet type.
    pub message_type: TypeCode,
    /// DUP flag (bit 3).
    pub dup: bool,
    /// QoS bits (bits 2-1), 0..=3.
    pub qos: u8,
    /// RETAIN flag (bit 0).
    pub retain: bool,
    /// Remaining length.
    pub remaining_length: u32,
}

/// An MQTT 5 property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Property {
    /// An identifier shrike (and Suricata) does not know: not logged.
    Unknown,
    /// A one-byte property (id, value).
    U8(u8, u8),
    /// A two-byte property.
    U16(u8, u16),
    /// A four-byte property (or a variable integer).
    U32(u8, u32),
    /// A UTF-8 string property.
    Str(u8, String),
    /// A binary-data property.
    Bin(u8, Vec<u8>),
    /// A user property (name, value).
    User(String, String),
}

/// EVE names of the properties, by identifier.
pub fn property_name(id: u8) -> &'static str {
    match id {
        1 => "payload_format_indicator",
        2 => "message_expiry_interval",
        3 => "content_type",
        8 => "response_topic",
        9 => "correlation_data",
        11 => "subscription_identifier",
        17 => "session_expiry_interval",
        18 => "assigned_client_identifier",
        19 => "server_keep_alive",
        21 => "authentication_method",
        22 => "authentication_data",
        23 => "request_problem_information",
        24 => "will_delay_interval",
        25 => "request_response_information",
        26 => "response_information",
        28 => "server_reference",
        31 => "reason_string",
        33 => "receive_maximum",
        34 => "topic_alias_maximum",
        35 => "topic_alias",
        36 => "maximum_qos",
        37 => "retain_available",
        39 => "maximum_packet_size",
        40 => "wildcard_subscription_available",
        41 => "subscription_identifier_available",
        42 => "shared_subscription_available",
        _ => "",
    }
}

/// CONNECT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connect {
    /// `MQTT` / `MQIsdp`.
    pub protocol_string: String,
    /// 3, 4 or 5.
    pub protocol_version: u8,
    /// Flags.
    pub username_flag: bool,
    /// Password flag.
    pub password_flag: bool,
    /// Will retain flag.
    pub will_retain: bool,
    /// Will QoS.
    pub will_qos: u8,
    /// Will flag.
    pub will_flag: bool,
    /// Clean session flag.
    pub clean_session: bool,
    /// Keep alive seconds.
    pub keepalive: u16,
    /// Client identifier.
    pub client_id: String,
    /// Will topic.
    pub will_topic: Option<String>,
    /// Will message.
    pub will_message: Option<Vec<u8>>,
    /// User name.
    pub username: Option<String>,
    /// Password.
    pub password: Option<Vec<u8>>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
    /// MQTT 5 will properties.
    pub will_properties: Option<Vec<Property>>,
}

/// CONNACK.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Connack {
    /// Return (reason) code.
    pub return_code: u8,
    /// Session present flag.
    pub session_present: bool,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// PUBLISH.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Publish {
    /// Topic name.
    pub topic: String,
    /// Packet identifier (QoS > 0).
    pub message_id: Option<u16>,
    /// Payload.
    pub message: Vec<u8>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// PUBACK, PUBREC, PUBREL, PUBCOMP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MsgIdOnly {
    /// Packet identifier.
    pub message_id: u16,
    /// MQTT 5 reason code.
    pub reason_code: Option<u8>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// One SUBSCRIBE topic filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscribeTopic {
    /// Topic filter.
    pub topic_name: String,
    /// Requested QoS (MQTT 5: the options byte).
    pub qos: u8,
}

/// SUBSCRIBE.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscribe {
    /// Packet identifier.
    pub message_id: u16,
    /// Topic filters.
    pub topics: Vec<SubscribeTopic>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// SUBACK.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suback {
    /// Packet identifier.
    pub message_id: u16,
    /// Granted QoS (reason codes).
    pub qoss: Vec<u8>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// UNSUBSCRIBE.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unsubscribe {
    /// Packet identifier.
    pub message_id: u16,
    /// Topic filters.
    pub topics: Vec<String>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// UNSUBACK.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unsuback {
    /// Packet identifier.
    pub message_id: u16,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
    /// MQTT 5 reason codes.
    pub reason_codes: Vec<u8>,
}

/// AUTH (MQTT 5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Auth {
    /// Reason code.
    pub reason_code: u8,
    /// Properties.
    pub properties: Option<Vec<Property>>,
}

/// DISCONNECT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disconnect {
    /// MQTT 5 reason code.
    pub reason_code: Option<u8>,
    /// MQTT 5 properties.
    pub properties: Option<Vec<Property>>,
}

/// A message longer than the maximum, skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncated {
    /// Its type.
    pub original_message_type: TypeCode,
    /// Bytes skipped (fixed header included).
    pub skipped_length: usize,
}

/// What a message carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Type 0.
    Unassigned,
    /// CONNECT.
    Connect(Box<Connect>),
    /// CONNACK.
    Connack(Connack),
    /// PUBLISH.
    Publish(Publish),
    /// PUBACK.
    Puback(MsgIdOnly),
    /// PUBREC.
    Pubrec(MsgIdOnly),
    /// PUBREL.
    Pubrel(MsgIdOnly),
    /// PUBCOMP.
    Pubcomp(MsgIdOnly),
    /// SUBSCRIBE.
    Subscribe(Subscribe),
    /// SUBACK.
    Suback(Suback),
    /// UNSUBSCRIBE.
    Unsubscribe(Unsubscribe),
    /// UNSUBACK.
    Unsuback(Unsuback),
    /// AUTH.
    Auth(Auth),
    /// PINGREQ.
    Pingreq,
    /// PINGRESP.
    Pingresp,
    /// DISCONNECT.
    Disconnect(Disconnect),
    /// Over the maximum length: not decoded.
    Truncated(Truncated),
}

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Fixed header.
    pub header: FixedHeader,
    /// Content.
    pub op: Op,
}

/// Outcome of [`parse_message`].
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A message and the bytes it took (for [`Op::Truncated`]: the bytes of its header;
    /// the whole message is then skipped by the caller).
    Done(Message, usize),
    /// More bytes are needed.
    Incomplete,
    /// Malformed.
    Error,
}

/// Errors inside a message body: every failure there is malformed data (the body is
/// all in when it is decoded).
#[derive(Debug)]
struct Bad;

type R<T> = Result<T, Bad>;

/// A cursor over a complete message body.
struct Cur<'a>(&'a [u8]);

impl<'a> Cur<'a> {
    fn u8(&mut self) -> R<u8> {
        let (&b, rest) = self.0.split_first().ok_or(Bad)?;
        self.0 = rest;
        Ok(b)
    }
    fn u16(&mut self) -> R<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> R<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        if self.0.len() < n {
            return Err(Bad);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn bin(&mut self) -> R<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
    fn string(&mut self) -> R<String> {
        Ok(String::from_utf8_lossy(self.bin()?).into_owned())
    }
    fn varint(&mut self) -> R<u32> {
        match varint(self.0) {
            VarInt::Done(v, n) => {
                self.0 = &self.0[n..];
                Ok(v)
            }
            _ => Err(Bad),
        }
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

enum VarInt {
    Done(u32, usize),
    Incomplete,
    Error,
}

/// A variable byte integer: up to three bytes with the continuation bit, then one without.
fn varint(b: &[u8]) -> VarInt {
    let mut v = 0u32;
    let mut mult = 1u32;
    for i in 0..4 {
        let Some(&c) = b.get(i) else {
            return VarInt::Incomplete;
        };
        v += u32::from(c & 127) * mult;
        if c & 128 == 0 {
            return VarInt::Done(v, i + 1);
        }
        if i == 3 {
            return VarInt::Error;
        }
        mult *= 128;
    }
    VarInt::Error
}

/// The fixed header at the start of `b` and its length.
pub fn parse_fixed_header(b: &[u8]) -> Result<(FixedHeader, usize), Parsed> {
    let Some(&first) = b.first() else {
        return Err(Parsed::Incomplete);
    };
    match varint(&b[1..]) {
        VarInt::Done(len, n) => Ok((
            FixedHeader {
                message_type: TypeCode::from_u8(first >> 4),
                dup: first & 8 != 0,
                qos: (first >> 1) & 3,
                retain: first & 1 != 0,
                remaining_length: len,
            },
            1 + n,
        )),
        VarInt::Incomplete => Err(Parsed::Incomplete),
        VarInt::Error => Err(Parsed::Error),
    }
}

fn property(c: &mut Cur<'_>) -> R<Property> {
    let id = c.varint()?;
    let Ok(id8) = u8::try_from(id) else {
        return Ok(Property::Unknown);
    };
    Ok(match id8 {
        1 | 23 | 25 | 36 | 37 | 40 | 41 | 42 => Property::U8(id8, c.u8()?),
        19 | 33 | 34 | 35 => Property::U16(id8, c.u16()?),
        2 | 17 | 24 | 39 => Property::U32(id8, c.u32()?),
        11 => Property::U32(id8, c.varint()?),
        3 | 8 | 18 | 21 | 26 | 28 | 31 => Property::Str(id8, c.string()?),
        9 | 22 => Property::Bin(id8, c.bin()?.to_vec()),
        38 => {
            let k = c.string()?;
            let v = c.string()?;
            Property::User(k, v)
        }
        // Unknown: nothing is consumed, the next byte is read as an identifier.
        _ => Property::Unknown,
    })
}

/// The property list (when `present`): a length, then properties filling it exactly.
fn properties(c: &mut Cur<'_>, present: bool) -> R<Option<Vec<Property>>> {
    if !present {
        return Ok(None);
    }
    let len = c.varint()?;
    if len == 0 {
        return Ok(None);
    }
    let body = c.take(usize::try_from(len).map_err(|_| Bad)?)?;
    let mut p = Cur(body);
    let mut out = Vec::new();
    while !p.is_empty() {
        out.push(property(&mut p)?);
    }
    Ok(Some(out))
}

fn connect(c: &mut Cur<'_>) -> R<Connect> {
    let protocol_string = c.string()?;
    let protocol_version = c.u8()?;
    let f = c.u8()?;
    let keepalive = c.u16()?;
    let will = f & 0x04 != 0;
    let v5 = protocol_version == 5;
    let properties = properties(c, v5)?;
    let client_id = c.string()?;
    let will_properties = properties_opt(c, v5 && will)?;
    let will_topic = if will { Some(c.string()?) } else { None };
    let will_message = if will { Some(c.bin()?.to_vec()) } else { None };
    let username = if f & 0x80 != 0 {
        Some(c.string()?)
    } else {
        None
    };
    let password = if f & 0x40 != 0 {
        Some(c.bin()?.to_vec())
    } else {
        None
    };
    Ok(Connect {
        protocol_string,
        protocol_version,
        username_flag: f & 0x80 != 0,
        password_flag: f & 0x40 != 0,
        will_retain: f & 0x20 != 0,
        will_qos: (f >> 3) & 3,
        will_flag: will,
        clean_session: f & 0x02 != 0,
        keepalive,
        client_id,
        will_topic,
        will_message,
        username,
        password,
        properties,
        will_properties,
    })
}

fn properties_opt(c: &mut Cur<'_>, present: bool) -> R<Option<Vec<Property>>> {
    properties(c, present)
}

fn msgidonly(c: &mut Cur<'_>, v: u8) -> R<MsgIdOnly> {
    let message_id = c.u16()?;
    if v < 5 {
        return Ok(MsgIdOnly {
            message_id,
            reason_code: None,
            properties: None,
        });
    }
    if c.is_empty() {
        return Ok(MsgIdOnly {
            message_id,
            reason_code: Some(0),
            properties: None,
        });
    }
    let rc = c.u8()?;
    if c.is_empty() {
        return Ok(MsgIdOnly {
            message_id,
            reason_code: Some(rc),
            properties: None,
        });
    }
    let properties = properties(c, true)?;
    Ok(MsgIdOnly {
        message_id,
        reason_code: Some(rc),
        properties,
    })
}

fn body(h: &FixedHeader, b: &[u8], v: u8) -> R<Op> {
    let c = &mut Cur(b);
    let v5 = v == 5;
    Ok(match h.message_type {
        TypeCode::Connect => Op::Connect(Box::new(connect(c)?)),
        TypeCode::Connack => {
            let f = c.u8()?;
            let return_code = c.u8()?;
            let properties = properties(c, v5)?;
            Op::Connack(Connack {
                return_code,
                session_present: f & 1 != 0,
                properties,
            })
        }
        TypeCode::Publish => {
            let topic = c.string()?;
            let message_id = if h.qos > 0 { Some(c.u16()?) } else { None };
            let properties = properties(c, v5)?;
            Op::Publish(Publish {
                topic,
                message_id,
                message: c.0.to_vec(),
                properties,
            })
        }
        TypeCode::Puback => Op::Puback(msgidonly(c, v)?),
        TypeCode::Pubrec => Op::Pubrec(msgidonly(c, v)?),
        TypeCode::Pubrel => Op::Pubrel(msgidonly(c, v)?),
        TypeCode::Pubcomp => Op::Pubcomp(msgidonly(c, v)?),
        TypeCode::Subscribe => {
            let message_id = c.u16()?;
            let properties = properties(c, v5)?;
            let mut topics = Vec::new();
            // One topic at least; a partial last one is left unread.
            loop {
                let save = c.0;
                let t = (|| -> R<SubscribeTopic> {
                    let topic_name = c.string()?;
                    let qos = c.u8()?;
                    Ok(SubscribeTopic { topic_name, qos })
                })();
                match t {
                    Ok(t) => topics.push(t),
                    Err(_) => {
                        c.0 = save;
                        break;
                    }
                }
            }
            if topics.is_empty() {
                return Err(Bad);
            }
            Op::Subscribe(Subscribe {
                message_id,
                topics,
                properties,
            })
        }
        TypeCode::Suback => {
            let message_id = c.u16()?;
            let properties = properties(c, v5)?;
            Op::Suback(Suback {
                message_id,
                qoss: c.0.to_vec(),
                properties,
            })
        }
        TypeCode::Unsubscribe => {
            let message_id = c.u16()?;
            let properties = properties(c, v5)?;
            let mut topics = Vec::new();
            loop {
                let save = c.0;
                match c.string() {
                    Ok(t) => topics.push(t),
                    Err(_) => {
                        c.0 = save;
                        break;
                    }
                }
            }
            Op::Unsubscribe(Unsubscribe {
                message_id,
                topics,
                properties,
            })
        }
        TypeCode::Unsuback => {
            let message_id = c.u16()?;
            let properties = properties(c, v5)?;
            Op::Unsuback(Unsuback {
                message_id,
                properties,
                reason_codes: c.0.to_vec(),
            })
        }
        TypeCode::Pingreq => Op::Pingreq,
        TypeCode::Pingresp => Op::Pingresp,
        TypeCode::Disconnect => {
            if v < 5 {
                Op::Disconnect(Disconnect::default())
            } else if b.is_empty() {
                Op::Disconnect(Disconnect {
                    reason_code: Some(0),
                    properties: None,
                })
            } else {
                let rc = c.u8()?;
                if b.len() == 1 {
                    // Suricata 7 reports 0 for a lone reason code byte.
                    Op::Disconnect(Disconnect {
                        reason_code: Some(0),
                        properties: None,
                    })
                } else {
                    let properties = properties(c, true)?;
                    Op::Disconnect(Disconnect {
                        reason_code: Some(rc),
                        properties,
                    })
                }
            }
        }
        TypeCode::Auth => {
            let reason_code = c.u8()?;
            let properties = properties(c, true)?;
            Op::Auth(Auth {
                reason_code,
                properties,
            })
        }
        TypeCode::Unassigned => Op::Unassigned,
    })
}

/// Parse the message at the start of `input` with the flow's protocol version (5 enables
/// properties) and maximum message length.
pub fn parse_message(input: &[u8], protocol_version: u8, max_msg_len: usize) -> Parsed {
    let (header, hlen) = match parse_fixed_header(input) {
        Ok(h) => h,
        Err(e) => return e,
    };
    let len = header.remaining_length as usize;
    if len > max_msg_len {
        return Parsed::Done(
            Message {
                header,
                op: Op::Truncated(Truncated {
                    original_message_type: header.message_type,
                    skipped_length: len + hlen,
                }),
            },
            hlen,
        );
    }
    let Some(b) = input.get(hlen..hlen + len) else {
        return Parsed::Incomplete;
    };
    match body(&header, b, protocol_version) {
        Ok(op) => Parsed::Done(Message { header, op }, hlen + len),
        Err(Bad) => Parsed::Error,
    }
}
