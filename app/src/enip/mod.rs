//! EtherNet/IP (ENIP) and CIP, as Suricata 7 (`src/app-layer-enip.c`,
//! `src/app-layer-enip-common.c`, `src/detect-cipservice.c`): a probing parser on TCP and UDP
//! port 44818; every encapsulation PDU of a parse call is one transaction of its own
//! direction (the command, the status, and the CIP services of `SendRRData` /
//! `SendUnitData` with their class / attribute path segments and attribute lists). Suricata 7
//! logs no `enip` record and raises no event: shrike only detects and matches
//! `enip_command` and `cip_service` (`keywords.rs`).

use std::any::Any;
use std::collections::VecDeque;

use crate::registry::{AppParser, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

pub mod keywords;
#[cfg(test)]
mod tests;

/// ENIP in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "enip",
    aliases: &[],
    ip_protos: &[6, 17],
    ports: &[44818],
    tcp: Detect::Port(probe),
    udp: Detect::Port(probe),
    new_parser,
    buffers: &[],
    events: &[],
    keywords: keywords::KEYWORDS,
    generic_stats: true,
};

/// Encapsulation header length.
pub const HDR_LEN: usize = 24;

/// Encapsulation commands.
pub mod cmd {
    /// NOP.
    pub const NOP: u16 = 0x0000;
    /// ListServices.
    pub const LIST_SERVICES: u16 = 0x0004;
    /// ListIdentity.
    pub const LIST_IDENTITY: u16 = 0x0063;
    /// ListInterfaces.
    pub const LIST_INTERFACES: u16 = 0x0064;
    /// RegisterSession.
    pub const REGISTER_SESSION: u16 = 0x0065;
    /// UnRegisterSession.
    pub const UNREGISTER_SESSION: u16 = 0x0066;
    /// SendRRData.
    pub const SEND_RR_DATA: u16 = 0x006f;
    /// SendUnitData.
    pub const SEND_UNIT_DATA: u16 = 0x0070;
    /// IndicateStatus.
    pub const INDICATE_STATUS: u16 = 0x0072;
    /// Cancel.
    pub const CANCEL: u16 = 0x0073;
}

/// CIP services the matcher treats specially.
pub mod svc {
    /// Get_Attribute_List.
    pub const GET_ATTR_LIST: u8 = 0x03;
    /// Set_Attribute_List.
    pub const SET_ATTR_LIST: u8 = 0x04;
    /// Multiple_Service_Packet.
    pub const MSP: u8 = 0x0a;
    /// Get_Attribute_Single.
    pub const GET_ATTR_SINGLE: u8 = 0x0e;
    /// Set_Attribute_Single.
    pub const SET_ATTR_SINGLE: u8 = 0x10;
}

/// Path segment types.
pub mod seg {
    /// 8-bit class.
    pub const CLASS_8: u8 = 0x20;
    /// 16-bit class.
    pub const CLASS_16: u8 = 0x21;
    /// 8-bit instance.
    pub const INSTANCE_8: u8 = 0x24;
    /// 16-bit instance.
    pub const INSTANCE_16: u8 = 0x25;
    /// 8-bit attribute.
    pub const ATTR_8: u8 = 0x30;
}

/// Most CIP services decoded per transaction (Suricata stops past 32).
const MAX_SERVICES: usize = 33;
/// Most path segments kept per service.
const MAX_SEGMENTS: usize = 64;
/// Most attributes kept per attribute list.
const MAX_ATTRS: usize = 256;
/// Transactions kept for detection beyond those not inspected yet.
const KEEP: u64 = 64;
/// Most multiple-service-packet nesting followed.
const MAX_DEPTH: u8 = 4;

/// Suricata's probe: a full header with a known status and a plausible command.
pub fn probe(_dir: Dir, data: &[u8]) -> Probe {
    if data.len() < HDR_LEN {
        return Probe::NeedMore;
    }
    let status = le32(data, 8).unwrap_or(u32::MAX);
    if !matches!(status, 0..=3 | 0x64 | 0x65 | 0x69 | 0x6a) {
        return Probe::No;
    }
    let command = le16(data, 0).unwrap_or(u16::MAX);
    let len = le16(data, 2).unwrap_or(0);
    let option = le32(data, 20).unwrap_or(0);
    let ok = match command {
        cmd::NOP => option == 0,
        cmd::REGISTER_SESSION => len == 4,
        cmd::UNREGISTER_SESSION => len == 4 || len == 0,
        cmd::LIST_SERVICES
        | cmd::LIST_IDENTITY
        | cmd::SEND_RR_DATA
        | cmd::SEND_UNIT_DATA
        | cmd::INDICATE_STATUS
        | cmd::CANCEL => true,
        cmd::LIST_INTERFACES => {
            if data.len() < HDR_LEN + 2 {
                return Probe::NeedMore;
            }
            // Suricata reads the item count at offset 0 (the command itself).
            usize::from(len) >= HDR_LEN + 2 * usize::from(command)
        }
        _ => false,
    };
    if ok {
        Probe::Yes
    } else {
        Probe::No
    }
}

fn le16(d: &[u8], at: usize) -> Option<u16> {
    let b = d.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

fn le32(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn new_parser(_cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    Box::new(EnipState::default())
}

/// One CIP service of a transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CipService {
    /// Service code (the response bit stripped).
    pub service: u8,
    /// A response (the top bit was set).
    pub response: bool,
    /// Class and attribute path segments, in order (`(segment type, value)`; as Suricata,
    /// an 8-bit attribute segment carries the class before it).
    pub segments: Vec<(u8, u16)>,
    /// Get/Set_Attribute_List attribute ids.
    pub attributes: Vec<u16>,
    /// Response status.
    pub status: u16,
}

/// One encapsulation PDU.
#[derive(Debug, Clone)]
pub struct EnipTx {
    /// Id, from 0 per flow.
    pub id: u64,
    /// Direction of the PDU.
    pub dir: Dir,
    /// Encapsulation command (0 when the header was short).
    pub command: u16,
    /// Encapsulation length.
    pub length: u16,
    /// Encapsulation status.
    pub status: u32,
    /// CIP services decoded.
    pub services: Vec<CipService>,
}

/// Per-flow ENIP state.
#[derive(Debug, Default)]
pub struct EnipState {
    txs: VecDeque<EnipTx>,
    next_id: u64,
    completed: [u64; 2],
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

impl EnipState {
    /// Transaction `id`, if still kept.
    pub fn tx(&self, id: u64) -> Option<&EnipTx> {
        let first = self.txs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get(i).filter(|t| t.id == id)
    }

    fn push(&mut self, dir: Dir, data: &[u8]) -> usize {
        let mut t = EnipTx {
            id: self.next_id,
            dir,
            command: 0,
            length: 0,
            status: 0,
            services: Vec::new(),
        };
        self.next_id += 1;
        decode_pdu(data, &mut t);
        let used = usize::from(t.length) + HDR_LEN;
        self.completed[di(dir)] += 1;
        self.txs.push_back(t);
        used
    }
}

/// Decode one PDU at the start of `d` into `t` (Suricata's `DecodeENIPPDU`: the header,
/// then the common packet format of SendRRData / SendUnitData). Reads may run past the
/// PDU into the rest of the data, as Suricata's.
pub fn decode_pdu(d: &[u8], t: &mut EnipTx) {
    let (Some(c), Some(l), Some(s)) = (le16(d, 0), le16(d, 2), le32(d, 8)) else {
        return;
    };
    if d.len() < HDR_LEN {
        return;
    }
    t.command = c;
    t.length = l;
    t.status = s;
    if c == cmd::SEND_RR_DATA || c == cmd::SEND_UNIT_DATA {
        decode_cpf(d, t);
    }
}

fn decode_cpf(d: &[u8], t: &mut EnipTx) -> Option<()> {
    if t.length < 8 {
        return None;
    }
    let mut off = HDR_LEN + 4 + 2; // interface handle, timeout
    let _count = le16(d, off)?;
    off += 2;
    let addr_type = le16(d, off)?;
    le16(d, off + 2)?;
    off += 4;
    match addr_type {
        0xa1 => {
            le32(d, off)?;
            off += 4;
        }
        0x8002 => {
            le32(d, off)?;
            le32(d, off + 4)?;
            off += 8;
        }
        _ => {}
    }
    let data_type = le16(d, off)?;
    let data_len = le16(d, off + 2)?;
    off += 4;
    match data_type {
        0xb1 => {
            le16(d, off)?;
            off += 2;
        }
        0xb2 => {}
        _ => return None,
    }
    decode_cip(d, off, data_len, t, 0);
    Some(())
}

/// Suricata's `DecodeCIPPDU` at `off` (a 16-bit offset, as Suricata keeps it).
fn decode_cip(d: &[u8], off: usize, item_len: u16, t: &mut EnipTx, depth: u8) -> Option<()> {
    if item_len == 0 || depth > MAX_DEPTH {
        return None;
    }
    let service = *d.get(off)?;
    if t.services.len() > 32 || t.services.len() >= MAX_SERVICES {
        return None;
    }
    if service & 0x80 != 0 {
        if item_len < 4 {
            return None;
        }
        let status = le16(d, off + 2)?;
        let code = service & 0x7f;
        t.services.push(CipService {
            service: code,
            response: true,
            status,
            ..Default::default()
        });
        if code == svc::MSP {
            decode_msp(d, off + 4, item_len, t, depth, true);
        }
    } else {
        if item_len < 2 {
            return None;
        }
        let path_size = *d.get(off + 1)?;
        let mut s = CipService {
            service,
            ..Default::default()
        };
        decode_path(d, off + 2, path_size, &mut s);
        t.services.push(s);
        if service == svc::MSP {
            let after = off + 2 + 2 * usize::from(path_size);
            decode_msp(d, after & 0xffff, item_len, t, depth, false);
        }
    }
    Some(())
}

fn decode_path(d: &[u8], mut off: usize, path_size: u8, s: &mut CipService) -> Option<()> {
    if path_size < 1 {
        return None;
    }
    let mut remain = i32::from(path_size);
    let mut class = 0u16;
    while remain > 0 {
        let segment = *d.get(off)?;
        off += 1;
        match segment {
            seg::CLASS_8 => {
                class = u16::from(*d.get(off)?);
                off += 1;
                if s.segments.len() < MAX_SEGMENTS {
                    s.segments.push((segment, class));
                }
                remain -= 1;
            }
            seg::INSTANCE_8 => {
                d.get(off)?;
                off += 1;
                remain -= 1;
            }
            seg::ATTR_8 => {
                d.get(off)?;
                off += 1;
                if s.segments.len() < MAX_SEGMENTS {
                    s.segments.push((segment, class));
                }
                remain -= 1;
            }
            seg::CLASS_16 => {
                class = le16(d, off + 1)?;
                off += 3;
                if s.segments.len() < MAX_SEGMENTS {
                    s.segments.push((segment, class));
                }
                remain = if remain >= 2 { remain - 2 } else { 0 };
            }
            seg::INSTANCE_16 => {
                le16(d, off + 1)?;
                off += 3;
                remain = if remain >= 2 { remain - 2 } else { 0 };
            }
            _ => return None,
        }
    }
    if s.service == svc::SET_ATTR_LIST || s.service == svc::GET_ATTR_LIST {
        let n = le16(d, off)?;
        off += 2;
        for _ in 0..n {
            let a = le16(d, off)?;
            off += 2;
            if s.attributes.len() < MAX_ATTRS {
                s.attributes.push(a);
            }
        }
    }
    Some(())
}

fn decode_msp(
    d: &[u8],
    off: usize,
    item_len: u16,
    t: &mut EnipTx,
    depth: u8,
    response: bool,
) -> Option<()> {
    if off + 2 >= d.len() {
        return None;
    }
    let n = le16(d, off)?;
    let mut at = off + 2;
    for _ in 0..n {
        if at + 2 >= d.len() || t.services.len() > 32 {
            return None;
        }
        let so = le16(d, at)?;
        at += 2;
        let _ = response;
        decode_cip(d, (off + usize::from(so)) & 0xffff, item_len, t, depth + 1);
    }
    Some(())
}

impl AppParser for EnipState {
    fn parse(&mut self, dir: Dir, mut data: &[u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        // Suricata parses each chunk on its own: one transaction per PDU, a PDU cut by the
        // chunk's end is decoded from what is there and the rest of the chunk dropped.
        loop {
            let used = self.push(dir, data);
            if used > data.len() {
                break;
            }
            data = &data[used..];
            if data.len() < HDR_LEN {
                break;
            }
        }
        false
    }

    fn gap(&mut self, _dir: Dir, _len: u64) {}

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.completed[di(dir)]
    }

    fn live_txs(&self, dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().filter(|t| t.dir == dir).map(|t| t.id));
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        // No record in Suricata 7: account the transactions and free what detection saw.
        let id = self.next_id;
        c.logged += id - *c.next;
        *c.next = id;
        let keep_from = if c.closed {
            id
        } else {
            c.inspected.min(id).max(id.saturating_sub(KEEP))
        };
        while self.txs.front().is_some_and(|t| t.id < keep_from) {
            self.txs.pop_front();
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
