//! DCERPC (connection-oriented) PDUs carried over SMB named pipes, as Suricata 7's SMB parser
//! reads them (`rust/src/smb/dcerpc.rs`): BIND (interfaces), BINDACK (results), REQUEST
//! (context, opnum, stub data) and RESPONSE (stub data).

/// PDU types.
pub const REQUEST: u8 = 0;
/// RESPONSE.
pub const RESPONSE: u8 = 2;
/// BIND.
pub const BIND: u8 = 11;
/// BINDACK.
pub const BINDACK: u8 = 12;
/// ALTER_CONTEXT.
pub const ALTER_CONTEXT: u8 = 14;
/// ALTER_CONTEXT_RESP.
pub const ALTER_CONTEXT_RESP: u8 = 15;

/// Most stub data bytes kept per transaction and direction.
pub const MAX_STUB: usize = 1024 * 1024;
/// Most stub data bytes the flow's live transactions hold together.
pub use super::MAX_FLOW_STUB;
/// Most interfaces kept per flow.
pub const MAX_IFACES: usize = 64;

/// Suricata's names of the PDU types.
pub fn type_string(t: u8) -> String {
    let s = match t {
        0 => "REQUEST",
        1 => "PING",
        2 => "RESPONSE",
        3 => "FAULT",
        4 => "WORKING",
        5 => "NOCALL",
        6 => "REJECT",
        7 => "ACK",
        8 => "CL_CANCEL",
        9 => "FACK",
        10 => "CANCEL_ACK",
        11 => "BIND",
        12 => "BINDACK",
        13 => "BINDNAK",
        14 => "ALTER_CONTEXT",
        15 => "ALTER_CONTEXT_RESP",
        16 => "AUTH3",
        17 => "SHUTDOWN",
        18 => "CO_CANCEL",
        19 => "ORPHANED",
        20 => "RTS",
        _ => return t.to_string(),
    };
    s.to_string()
}

/// An interface bound on the pipe.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Iface {
    /// UUID bytes in text order.
    pub uuid: [u8; 16],
    /// Major version.
    pub ver: u16,
    /// Minor version.
    pub ver_min: u16,
    /// Presentation context id.
    pub context_id: u16,
    /// The BINDACK answered it.
    pub acked: bool,
    /// BINDACK result (0 accepted).
    pub ack_result: u16,
    /// BINDACK reason.
    pub ack_reason: u16,
}

/// The UUID as text (`8-4-4-4-12` lower-case hex).
pub fn uuid_string(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

/// Parse `12345678-1234-abcd-ef00-0123456789ab` into text-order bytes.
pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = s.bytes().filter(|&c| c != b'-').collect();
    if hex.len() != 32 || s.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(std::str::from_utf8(&hex[2 * i..2 * i + 2]).ok()?, 16).ok()?;
    }
    Some(out)
}

/// Whether `d` starts like a connection-oriented DCERPC PDU (version 5.0, a known type, a
/// fragment length that covers the header).
pub fn probe(d: &[u8]) -> bool {
    if d.len() < 16 || d[0] != 5 || d[1] != 0 || d[2] > 20 {
        return false;
    }
    let fl = if d[4] & 0x10 != 0 {
        u16::from_le_bytes([d[8], d[9]])
    } else {
        u16::from_be_bytes([d[8], d[9]])
    };
    fl >= 16
}

/// One PDU's header and body.
#[derive(Debug)]
pub struct Pdu<'a> {
    /// PDU type.
    pub ptype: u8,
    /// Flags (1 first fragment, 2 last fragment).
    pub flags: u8,
    /// Little-endian integers.
    pub le: bool,
    /// Call id.
    pub call_id: u32,
    /// The body after the 16-byte header (an auth trailer included).
    pub body: &'a [u8],
}

impl Pdu<'_> {
    fn u16(&self, d: &[u8], o: usize) -> Option<u16> {
        let b: [u8; 2] = d.get(o..o + 2)?.try_into().ok()?;
        Some(if self.le {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        })
    }
    /// BIND / ALTER_CONTEXT: the interfaces offered.
    pub fn bind_ifaces(&self) -> Vec<Iface> {
        let b = self.body;
        let n = usize::from(b.get(8).copied().unwrap_or(0));
        let mut at = 12;
        let mut out = Vec::new();
        for _ in 0..n {
            let (Some(ctx), Some(&ntrans), Some(u)) =
                (self.u16(b, at), b.get(at + 2), b.get(at + 4..at + 20))
            else {
                break;
            };
            let mut uuid = [0u8; 16];
            uuid.copy_from_slice(u);
            if self.le {
                uuid[0..4].reverse();
                uuid[4..6].reverse();
                uuid[6..8].reverse();
            }
            let ver = self.u16(b, at + 20).unwrap_or(0);
            let ver_min = self.u16(b, at + 22).unwrap_or(0);
            if out.len() < MAX_IFACES {
                out.push(Iface {
                    uuid,
                    ver,
                    ver_min,
                    context_id: ctx,
                    ..Iface::default()
                });
            }
            at += 24 + 20 * usize::from(ntrans);
        }
        out
    }

    /// BINDACK / ALTER_CONTEXT_RESP: (result, reason) per context, in order.
    pub fn bindack_results(&self) -> Vec<(u16, u16)> {
        let b = self.body;
        let sec_len = usize::from(self.u16(b, 8).unwrap_or(0));
        let mut at = 10 + sec_len;
        at = (at + 3) & !3;
        let n = usize::from(b.get(at).copied().unwrap_or(0));
        at += 4;
        let mut out = Vec::new();
        for _ in 0..n {
            let (Some(r), Some(why)) = (self.u16(b, at), self.u16(b, at + 2)) else {
                break;
            };
            out.push((r, why));
            at += 24;
        }
        out
    }

    /// REQUEST: (context id, opnum, stub data).
    pub fn request(&self) -> Option<(u16, u16, &[u8])> {
        let b = self.body;
        let ctx = self.u16(b, 4)?;
        let opnum = self.u16(b, 6)?;
        let start = if self.flags & 0x80 != 0 { 24 } else { 8 };
        Some((ctx, opnum, b.get(start..).unwrap_or_default()))
    }

    /// RESPONSE: the stub data.
    pub fn response(&self) -> &[u8] {
        self.body.get(8..).unwrap_or_default()
    }
}

/// Split `d` into PDUs (a PDU cut short is taken as far as it goes).
pub fn pdus(mut d: &[u8]) -> Vec<Pdu<'_>> {
    let mut out = Vec::new();
    while d.len() >= 16 && d[0] == 5 && out.len() < 64 {
        let le = d[4] & 0x10 != 0;
        let rd16 = |o: usize| {
            let b = [d[o], d[o + 1]];
            if le {
                u16::from_le_bytes(b)
            } else {
                u16::from_be_bytes(b)
            }
        };
        let frag_len = usize::from(rd16(8)).max(16);
        let auth_len = rd16(10);
        let cid = [d[12], d[13], d[14], d[15]];
        let call_id = if le {
            u32::from_le_bytes(cid)
        } else {
            u32::from_be_bytes(cid)
        };
        // Suricata counts an auth trailer in the stub data: the body runs to the end of
        // the fragment.
        let _ = auth_len;
        let end = frag_len.min(d.len());
        out.push(Pdu {
            ptype: d[2],
            flags: d[3],
            le,
            call_id,
            body: &d[16..end],
        });
        d = &d[end..];
    }
    out
}
