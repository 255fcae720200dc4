//! SMB2/3 (and the SMB1 header) over NetBIOS session framing, as Suricata 7's SMB parser
//! (`rust/src/smb`) has it, in part.
//!
//! * Detection: the content patterns `|ff|SMB`, `|fe|SMB`, `|fd|SMB` after a 4-byte NBSS
//!   session message header (TCP 445 and 139).
//! * NBSS records are reassembled per direction (at most [`MAX_RECORD`] bytes; larger
//!   records are skipped); a stream picked up midway resynchronises on the next
//!   `00 xx xx xx fe 'SMB'`.
//! * SMB2 transactions as Suricata keys them: a generic transaction per request (session,
//!   tree, message id) closed by its response; negotiate (client dialects, client and server
//!   GUID, max read/write size), session setup (NTLMSSP `AUTHENTICATE` user, domain, host,
//!   version), tree connect (share or named pipe, share type), create (file name, disposition,
//!   times, size, file GUID), ioctl (function). READ and WRITE make one file transaction per
//!   file GUID and direction, whose data goes into a [`TrackedFile`] (`fileinfo`); CLOSE ends
//!   them. Encrypted SMB3 records (transform header) are skipped.
//! * SMB1 records are framed and skipped (no transactions yet).
//! * EVE `smb` record per transaction (`rust/src/smb/log.rs` field names and order), the
//!   `smb` object in alerts and in SMB `fileinfo` records.
//! * Rules: `alert smb`, `smb.share`, `smb.named_pipe`, `smb.ntlmssp_user`,
//!   `smb.ntlmssp_domain` sticky buffers.

pub mod krb;

use std::any::Any;
use std::collections::{HashMap, VecDeque};

use crate::dcerpc::pdu as dcerpc;
use dcerpc::Iface;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::files::{FileConfig, TrackedFile};
use crate::registry::{
    AppParser, BufferDesc, Detect, KeywordDesc, LogCtx, ParserConfig, Probe, Protocol, TxMatch,
};
use crate::Dir;

/// Largest NBSS record kept whole (bigger ones are skipped).
pub const MAX_RECORD: usize = 16 * 1024 * 1024 + 4096;
/// Bytes of a file kept for `file.data` inspection.
pub const MAX_FILE_INSPECT: usize = 256 * 1024;
/// Most transactions kept per flow (oldest dropped beyond).
const MAX_TXS: usize = 1024;
/// Most entries in the GUID / tree / read maps.
const MAX_MAP: usize = 4096;

const BUF_SHARE: u16 = 0;
const BUF_PIPE: u16 = 1;
const BUF_USER: u16 = 2;
const BUF_DOMAIN: u16 = 3;
const BUF_FILE_DATA: u16 = 4;
const BUF_FILE_NAME: u16 = 5;
const BUF_STUB: u16 = 6;

/// SMB in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "smb",
    aliases: &[],
    ip_protos: &[6],
    ports: &[445, 139],
    tcp: Detect::Pattern(probe),
    udp: Detect::None,
    new_parser,
    buffers: &[
        BufferDesc {
            name: "smb.share",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "smb.named_pipe",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "smb.ntlmssp_user",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "smb.ntlmssp_domain",
            dir: Some(Dir::ToServer),
        },
        BufferDesc {
            name: "file.data",
            dir: None,
        },
        BufferDesc {
            name: "file.name",
            dir: None,
        },
        BufferDesc {
            name: "dcerpc.stub_data",
            dir: None,
        },
    ],
    events: &[
        "internal_error",
        "malformed_data",
        "record_overflow",
        "malformed_ntlmssp_request",
        "malformed_ntlmssp_response",
        "duplicate_negotiate",
        "negotiate_malformed_dialects",
        "file_overlap",
        "request_to_client",
        "response_to_server",
        "read_response_too_large",
        "read_queue_size_exceeded",
        "read_queue_cnt_exceeded",
        "write_request_too_large",
        "write_queue_size_exceeded",
        "write_queue_cnt_exceeded",
        "negotiate_max_read_size_too_large",
        "negotiate_max_write_size_too_large",
        "read_request_too_large",
        "unusual_ntlmssp_order",
        "too_many_transactions",
    ],
    keywords: &[KeywordDesc {
        name: "smb.version",
        dir: None,
        setup: setup_version,
    }],
    generic_stats: true,
};

const EV_MALFORMED: u8 = 1;
const EV_RECORD_OVERFLOW: u8 = 2;
const EV_FILE_OVERLAP: u8 = 7;
const EV_READ_RESPONSE_TOO_LARGE: u8 = 10;
const EV_READ_QUEUE_SIZE: u8 = 11;
const EV_READ_QUEUE_CNT: u8 = 12;
const EV_WRITE_REQUEST_TOO_LARGE: u8 = 13;
const EV_WRITE_QUEUE_SIZE: u8 = 14;
const EV_WRITE_QUEUE_CNT: u8 = 15;
const EV_NEGOTIATE_MAX_READ: u8 = 16;
const EV_NEGOTIATE_MAX_WRITE: u8 = 17;
const EV_UNUSUAL_NTLMSSP_ORDER: u8 = 19;
const EV_TOO_MANY_TXS: u8 = 20;

/// `app-layer.protocols.smb` as shrike's configuration holds it (`detect.app-layer.smb`),
/// with Suricata 7's names and defaults (`rust/src/smb/smb.rs`). Sizes are bytes; 0 turns a
/// limit off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct SmbConfig {
    /// `max-read-size`: a READ asking for or returning more is not followed
    /// (`read_request_too_large`, `read_response_too_large`); a server offering more in
    /// its NEGOTIATE response raises `negotiate_max_read_size_too_large`.
    pub max_read_size: u32,
    /// `max-write-size`: a WRITE carrying more is not followed (`write_request_too_large`;
    /// `negotiate_max_write_size_too_large` as for reads).
    pub max_write_size: u32,
    /// `max-read-queue-size`: bytes of out-of-order READ data held per file
    /// (`read_queue_size_exceeded` beyond).
    pub max_read_queue_size: u32,
    /// `max-read-queue-cnt`: out-of-order READ chunks held per file
    /// (`read_queue_cnt_exceeded` beyond).
    pub max_read_queue_cnt: u32,
    /// `max-write-queue-size`: as `max-read-queue-size` for WRITE data.
    pub max_write_queue_size: u32,
    /// `max-write-queue-cnt`: as `max-read-queue-cnt` for WRITE data.
    pub max_write_queue_cnt: u32,
    /// `max-tx`: live transactions per flow; beyond, the oldest open one is closed with
    /// `too_many_transactions`.
    pub max_tx: u32,
    /// `stream-depth`: reassembly depth of SMB flows (0: unlimited, Suricata's default for
    /// SMB whatever `stream.reassembly.depth` says).
    pub stream_depth: u64,
}

impl Default for SmbConfig {
    fn default() -> Self {
        SmbConfig {
            max_read_size: 16 * 1024 * 1024,
            max_write_size: 16 * 1024 * 1024,
            max_read_queue_size: 64 * 1024 * 1024,
            max_read_queue_cnt: 64,
            max_write_queue_size: 64 * 1024 * 1024,
            max_write_queue_cnt: 64,
            max_tx: 1024,
            stream_depth: 0,
        }
    }
}

/// An NBSS session message carrying an SMB header (`ff`, `fe` or `fd` `SMB`), after any
/// other NBSS records (session request and response, keep-alive); midstream, the first
/// such header in the data.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    let mut d = data;
    loop {
        if d.len() < 4 {
            return if d.is_empty() || matches!(d[0], 0 | 0x81 | 0x82 | 0x83 | 0x85) {
                Probe::NeedMore
            } else {
                midstream(dir, data)
            };
        }
        match d[0] {
            0 => {
                if d.len() < 8 {
                    return Probe::NeedMore;
                }
                return if is_smb_magic(&d[4..8]) {
                    fits_dir(dir, &d[4..])
                } else {
                    midstream(dir, data)
                };
            }
            0x81 | 0x82 | 0x83 | 0x85 => {
                let len =
                    ((usize::from(d[1]) & 1) << 16) | usize::from(u16::from_be_bytes([d[2], d[3]]));
                if d.len() < 4 + len {
                    return Probe::NeedMore;
                }
                d = &d[4 + len..];
            }
            _ => return midstream(dir, data),
        }
    }
}

/// Midstream: an NBSS session message header followed by an SMB2 header somewhere.
fn midstream(dir: Dir, data: &[u8]) -> Probe {
    match find_sync(data) {
        Some(i) if data.get(i + 4) == Some(&0xfe) && u16le(data, i + 8) == Some(64) => {
            fits_dir(dir, &data[i + 4..])
        }
        _ => Probe::No,
    }
}

/// A request to the server or a response to the client (a response seen first going to
/// the server makes detection reverse a midstream flow, as Suricata's SMB probe does).
fn fits_dir(dir: Dir, smb: &[u8]) -> Probe {
    let response = match smb.first() {
        Some(0xfe) => match smb.get(16) {
            Some(f) => f & 1 != 0,
            None => return Probe::NeedMore,
        },
        Some(0xff) => match smb.get(9) {
            Some(f) => f & 0x80 != 0,
            None => return Probe::NeedMore,
        },
        _ => return Probe::Yes,
    };
    if response == (dir == Dir::ToClient) {
        Probe::Yes
    } else {
        Probe::No
    }
}

fn is_smb_magic(d: &[u8]) -> bool {
    d.len() >= 4 && (0xfd..=0xff).contains(&d[0]) && &d[1..4] == b"SMB"
}

fn new_parser(cfg: &ParserConfig, _tcp: bool) -> Box<dyn AppParser> {
    let mut s = SmbState::new(cfg.files);
    s.cfg = cfg.smb;
    Box::new(s)
}

fn u16le(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(o..o + 2)?.try_into().ok()?))
}
fn u32le(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(o..o + 4)?.try_into().ok()?))
}
fn u64le(d: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(o..o + 8)?.try_into().ok()?))
}

/// Suricata's way with SMB2 UTF-16 names: the NUL bytes dropped.
fn strip_nul(d: &[u8]) -> Vec<u8> {
    d.iter().copied().filter(|&b| b != 0).collect()
}

/// SMB1 UTF-16 strings as Suricata reads them: the low byte of each unit.
fn low_bytes(d: &[u8]) -> Vec<u8> {
    d.chunks_exact(2).map(|c| c[0]).collect()
}

/// UTF-16LE to UTF-8 (lossy).
fn utf16le(d: &[u8]) -> Vec<u8> {
    let u: Vec<u16> = d
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&u).into_bytes()
}

/// Windows FILETIME to Unix seconds (0 stays 0).
fn filetime_unix(ft: u64) -> u64 {
    (ft / 10_000_000).saturating_sub(11_644_473_600)
}

/// SMB2 command names.
pub fn smb2_command_string(c: u16) -> String {
    let s = match c {
        0 => "SMB2_COMMAND_NEGOTIATE_PROTOCOL",
        1 => "SMB2_COMMAND_SESSION_SETUP",
        2 => "SMB2_COMMAND_SESSION_LOGOFF",
        3 => "SMB2_COMMAND_TREE_CONNECT",
        4 => "SMB2_COMMAND_TREE_DISCONNECT",
        5 => "SMB2_COMMAND_CREATE",
        6 => "SMB2_COMMAND_CLOSE",
        7 => "SMB2_COMMAND_FLUSH",
        8 => "SMB2_COMMAND_READ",
        9 => "SMB2_COMMAND_WRITE",
        10 => "SMB2_COMMAND_LOCK",
        11 => "SMB2_COMMAND_IOCTL",
        12 => "SMB2_COMMAND_CANCEL",
        13 => "SMB2_COMMAND_KEEPALIVE",
        14 => "SMB2_COMMAND_FIND",
        15 => "SMB2_COMMAND_CHANGE_NOTIFY",
        16 => "SMB2_COMMAND_GET_INFO",
        17 => "SMB2_COMMAND_SET_INFO",
        18 => "SMB2_COMMAND_OPLOCK_BREAK",
        _ => return c.to_string(),
    };
    s.to_string()
}

/// SMB2 dialect names.
pub fn smb2_dialect_string(d: u16) -> String {
    match d {
        0x0202 => "2.02",
        0x0210 => "2.10",
        0x0222 => "2.22",
        0x0224 => "2.24",
        0x02ff => "2.??",
        0x0300 => "3.00",
        0x0302 => "3.02",
        0x0310 => "3.10",
        0x0311 => "3.11",
        _ => return d.to_string(),
    }
    .to_string()
}

/// NT status names (the common ones; others are written as a number, as Suricata does for
/// codes it does not know).
pub fn ntstatus_string(s: u32) -> Option<&'static str> {
    Some(match s {
        0x0000_0000 => "STATUS_SUCCESS",
        0x0000_0103 => "STATUS_PENDING",
        0x0000_010c => "STATUS_NOTIFY_ENUM_DIR",
        0x8000_0005 => "STATUS_BUFFER_OVERFLOW",
        0x8000_0006 => "STATUS_NO_MORE_FILES",
        0xc000_0001 => "STATUS_UNSUCCESSFUL",
        0xc000_0002 => "STATUS_NOT_IMPLEMENTED",
        0xc000_0003 => "STATUS_INVALID_INFO_CLASS",
        0xc000_0004 => "STATUS_INFO_LENGTH_MISMATCH",
        0xc000_0008 => "STATUS_INVALID_HANDLE",
        0xc000_000d => "STATUS_INVALID_PARAMETER",
        0xc000_000f => "STATUS_NO_SUCH_FILE",
        0xc000_0010 => "STATUS_INVALID_DEVICE_REQUEST",
        0xc000_0011 => "STATUS_END_OF_FILE",
        0xc000_0016 => "STATUS_MORE_PROCESSING_REQUIRED",
        0xc000_0022 => "STATUS_ACCESS_DENIED",
        0xc000_0023 => "STATUS_BUFFER_TOO_SMALL",
        0xc000_0033 => "STATUS_OBJECT_NAME_INVALID",
        0xc000_0034 => "STATUS_OBJECT_NAME_NOT_FOUND",
        0xc000_0035 => "STATUS_OBJECT_NAME_COLLISION",
        0xc000_003a => "STATUS_OBJECT_PATH_NOT_FOUND",
        0xc000_0043 => "STATUS_SHARING_VIOLATION",
        0xc000_0056 => "STATUS_DELETE_PENDING",
        0xc000_006d => "STATUS_LOGON_FAILURE",
        0xc000_00b0 => "STATUS_PIPE_DISCONNECTED",
        0xc000_00ba => "STATUS_FILE_IS_A_DIRECTORY",
        0xc000_00bb => "STATUS_NOT_SUPPORTED",
        0xc000_00c9 => "STATUS_NETWORK_NAME_DELETED",
        0xc000_00cc => "STATUS_BAD_NETWORK_NAME",
        0xc000_0103 => "STATUS_NOT_A_DIRECTORY",
        0xc000_0120 => "STATUS_CANCELLED",
        0xc000_0128 => "STATUS_FILE_CLOSED",
        0xc000_014b => "STATUS_PIPE_BROKEN",
        0xc000_019c => "STATUS_FS_DRIVER_REQUIRED",
        0xc000_0203 => "STATUS_USER_SESSION_DELETED",
        0xc000_0225 => "STATUS_NOT_FOUND",
        _ => return None,
    })
}

/// FSCTL names (common ones; others as a number).
fn fsctl_string(f: u32) -> String {
    match f {
        0x0006_0194 => "FSCTL_DFS_GET_REFERRALS",
        0x0006_01b0 => "FSCTL_DFS_GET_REFERRALS_EX",
        0x0009_00a8 => "FSCTL_GET_REPARSE_POINT",
        0x0009_00c0 => "FSCTL_CREATE_OR_GET_OBJECT_ID",
        0x0009_00c4 => "FSCTL_SET_SPARSE",
        0x0011_0018 => "FSCTL_PIPE_WAIT",
        0x0011_400c => "FSCTL_PIPE_PEEK",
        0x0011_c017 => "FSCTL_PIPE_TRANSCEIVE",
        0x0014_0078 => "FSCTL_SRV_REQUEST_RESUME_KEY",
        0x0014_01d4 => "FSCTL_LMR_REQUEST_RESILIENCY",
        0x0014_01fc => "FSCTL_QUERY_NETWORK_INTERFACE_INFO",
        0x0014_0204 => "FSCTL_VALIDATE_NEGOTIATE_INFO",
        0x0014_4064 => "FSCTL_SRV_ENUMERATE_SNAPSHOTS",
        0x0014_40f2 => "FSCTL_SRV_COPYCHUNK",
        0x0014_41bb => "FSCTL_SRV_READ_HASH",
        0x0014_80f2 => "FSCTL_SRV_COPYCHUNK_WRITE",
        _ => return f.to_string(),
    }
    .to_string()
}

/// A 16-byte GUID as Suricata writes it (first three groups little-endian, then the last
/// eight bytes in Suricata's order).
pub fn guid_to_string(g: &[u8]) -> String {
    if g.len() != 16 {
        return String::new();
    }
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[9], g[8], g[11], g[10], g[15], g[14],
        g[13], g[12]
    )
}

/// A file id as Suricata writes it: a GUID, or an SMB1 FID as 4 hex digits.
pub fn fuid_to_string(f: &[u8]) -> String {
    match f.len() {
        16 => guid_to_string(f),
        2 | 6 => format!("{:02x}{:02x}", f[1], f[0]),
        _ => String::new(),
    }
}

/// NTLMSSP `AUTHENTICATE` fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ntlmssp {
    /// Domain.
    pub domain: Vec<u8>,
    /// User.
    pub user: Vec<u8>,
    /// Workstation.
    pub host: Vec<u8>,
    /// `major.minor build N rev R`, when the version is present.
    pub version: Option<String>,
    /// The user field lies before the end of the domain field, or the host field before
    /// the end of the user field (Suricata's `unusual_ntlmssp_order`).
    pub unusual_order: bool,
}

/// Find an NTLMSSP `AUTHENTICATE` message in a security blob (SPNEGO or raw), read as
/// Suricata's `parse_ntlm_auth_record`: every length and offset of the six fields (LM,
/// NTLM response, domain, user, host, session key) must lie inside the record, or the whole
/// record is refused; domain, user and host offsets below 12 are refused; the version is
/// read only when the flag asks for it and the fields' data starts at or after byte 72.
pub fn parse_ntlmssp_auth(blob: &[u8]) -> Option<Ntlmssp> {
    let pos = blob.windows(8).position(|w| w == b"NTLMSSP\0")?;
    let m = &blob[pos..];
    if u32le(m, 8)? != 3 {
        return None;
    }
    let record_len = m.len();
    let mut data_start = u32::MAX;
    for o in [12, 20, 28, 36, 44, 52] {
        let (len, off) = (usize::from(u16le(m, o)?), u32le(m, o + 4)?);
        if len >= record_len || off as usize >= record_len {
            return None;
        }
        data_start = data_start.min(off);
    }
    let field = |o: usize| -> Option<&[u8]> {
        let len = usize::from(u16le(m, o)?);
        let off = u32le(m, o + 4)? as usize;
        if off < 12 {
            return None;
        }
        m.get(off..off.checked_add(len)?)
    };
    let flags = u32le(m, 60)?;
    let unicode = flags & 1 != 0;
    let conv = |d: &[u8]| if unicode { utf16le(d) } else { d.to_vec() };
    let domain = conv(field(28)?);
    let user = conv(field(36)?);
    let host = conv(field(44)?);
    let span = |o: usize| {
        (
            u32le(m, o + 4).unwrap_or(0),
            u32::from(u16le(m, o).unwrap_or(0)),
        )
    };
    let ((d_off, d_len), (u_off, u_len), (h_off, _)) = (span(28), span(36), span(44));
    let unusual_order = (u_off > 0 && u_off < d_off.saturating_add(d_len))
        || (h_off > 0 && h_off < u_off.saturating_add(u_len));
    let version = if flags & 0x0200_0000 != 0 && data_start >= 72 {
        m.get(64..72).map(|v| {
            format!(
                "{}.{} build {} rev {}",
                v[0],
                v[1],
                u16::from_le_bytes([v[2], v[3]]),
                v[7]
            )
        })
    } else {
        None
    };
    Some(Ntlmssp {
        domain,
        user,
        host,
        version,
        unusual_order,
    })
}

/// What a transaction is about.
#[derive(Debug)]
pub enum TxData {
    /// A request/response pair with nothing more to log.
    Generic,
    /// NEGOTIATE.
    Negotiate {
        /// Dialects offered (names as logged).
        dialects: Vec<String>,
        /// Client GUID.
        client_guid: Option<Vec<u8>>,
        /// Server GUID.
        server_guid: Vec<u8>,
    },
    /// SESSION_SETUP.
    SessionSetup {
        /// The NTLMSSP authentication, if seen.
        ntlmssp: Option<Ntlmssp>,
        /// The Kerberos ticket, if seen.
        krb: Option<krb::Ticket>,
    },
    /// TREE_CONNECT.
    TreeConnect {
        /// `\\server\share`.
        share: Vec<u8>,
        /// 1 disk, 2 pipe, 3 print.
        share_type: u8,
        /// A named pipe (IPC$).
        is_pipe: bool,
    },
    /// CREATE.
    Create {
        /// Name.
        filename: Vec<u8>,
        /// A directory was asked for.
        directory: bool,
        /// Create disposition.
        disposition: u32,
        /// FILE_DELETE_ON_CLOSE.
        delete_on_close: bool,
        /// Times (Unix seconds) and size from the response.
        times: [u64; 4],
        /// End of file.
        size: u64,
        /// File GUID.
        guid: Vec<u8>,
    },
    /// SET_INFO: delete on close.
    SetInfo {
        /// File name.
        filename: Vec<u8>,
        /// Delete pending.
        delete: bool,
        /// File GUID.
        guid: Vec<u8>,
        /// SMB1 TRANS2 sub-command (6 SET_PATH_INFO, 8 SET_FILE_INFO), else 0.
        subcmd: u16,
        /// SMB1 TRANS2 level of interest (1013 disposition), else 0.
        loi: u16,
    },
    /// SET_INFO: rename.
    Rename {
        /// Old name.
        from: Vec<u8>,
        /// New name.
        to: Vec<u8>,
        /// File GUID.
        guid: Vec<u8>,
    },
    /// DCERPC over a named pipe.
    Dcerpc {
        /// Request PDU type.
        req_cmd: Option<u8>,
        /// Response PDU type.
        res_cmd: Option<u8>,
        /// Call id.
        call_id: u32,
        /// Operation number (REQUEST).
        opnum: u16,
        /// Presentation context (REQUEST).
        context_id: u16,
        /// Request fragments.
        frag_req: u32,
        /// Request stub data.
        stub_req: Vec<u8>,
        /// Response fragments.
        frag_res: u32,
        /// Response stub data.
        stub_res: Vec<u8>,
    },
    /// IOCTL.
    Ioctl {
        /// FSCTL code.
        func: u32,
    },
    /// A file read or written.
    File {
        /// Name (from the CREATE of its GUID).
        name: Vec<u8>,
        /// Share it is on.
        share: Vec<u8>,
        /// File GUID.
        fuid: Vec<u8>,
        /// Data direction.
        dir: Dir,
        /// The tracked file.
        file: TrackedFile,
        /// Next expected offset (Suricata's file tracker's `tracked`).
        next_off: u64,
        /// The file's first bytes (up to [`MAX_FILE_INSPECT`]), for `file.data`.
        head: Vec<u8>,
        /// Chunks that came out of order, by offset, until the file reaches them.
        ooo: std::collections::BTreeMap<u64, Vec<u8>>,
        /// Bytes held in `ooo`.
        in_flight: u64,
    },
}

/// One SMB transaction.
#[derive(Debug)]
pub struct SmbTx {
    /// Transaction id.
    pub id: u64,
    /// SMB version (1 or 2).
    pub ver: u8,
    /// Command.
    pub cmd: u16,
    /// NT status, once answered.
    pub status: Option<u32>,
    /// Session id.
    pub session_id: u64,
    /// Tree id.
    pub tree_id: u32,
    /// Message id (the key with session and tree).
    pub msg_id: u64,
    /// Request seen.
    pub request_done: bool,
    /// Response seen.
    pub response_done: bool,
    /// Details.
    pub data: TxData,
    events: u32,
    /// Events already reported in EVE `anomaly` records.
    events_reported: u32,
    logged: bool,
    /// SMB1 SESSION_SETUP_ANDX native OS and LAN manager (request, response).
    hosts: [Option<(Vec<u8>, Vec<u8>)>; 2],
    /// Directions (bit 0 to server, bit 1 to client) that saw a packet once logged.
    seen: u8,
    /// SMB1 TREE_CONNECT_ANDX service (request, response).
    service: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// `Some(class)`: the status is an SMB1 DOS error code.
    dos: Option<u8>,
}

/// Per-direction NBSS reassembly.
#[derive(Debug, Default)]
struct Framer {
    buf: Vec<u8>,
    /// Bytes of an oversized record still to skip.
    skip: u64,
    /// Lost sync (gap or midstream garbage): look for the next header.
    resync: bool,
    /// Data came in this direction.
    started: bool,
    /// Stream offset of the record whose frames were made before it was all in (a write
    /// or read record, as Suricata's partial-record parsing makes them).
    framed: Option<u64>,
    /// An SMB2 WRITE request / READ response taken before it was all in: the rest of its
    /// data streams to its file (Suricata's `file_ts_left` / `file_tc_left`).
    stream: Option<StreamRec>,
}

/// The rest of an SMB2 WRITE / READ record whose start was parsed.
#[derive(Debug)]
struct StreamRec {
    /// Record bytes still to come.
    left: u64,
    /// Of which file data.
    data_left: u64,
    hdr: Smb2Hdr,
    guid: Vec<u8>,
    cmd: u16,
    /// File offset of the next data byte.
    off: u64,
}

/// Suricata parses a partial NBSS record only once this much of it is in.
const PARTIAL_MIN: usize = 512;

/// Per-flow SMB state.
#[derive(Debug)]
pub struct SmbState {
    txs: VecDeque<SmbTx>,
    next_id: u64,
    /// A malformed record ended parsing (Suricata's parser error: the app layer's EOF is
    /// set, so every transaction is logged at once, complete or not).
    failed: bool,
    dialect: u16,
    /// The SMB1 dialect the server chose.
    dialect1: Option<Vec<u8>>,
    max_read_size: u32,
    max_write_size: u32,
    framers: [Framer; 2],
    /// (session, message id) of a CREATE request -> its name.
    create_names: HashMap<(u64, u64), Vec<u8>>,
    /// File GUID -> name.
    guid_names: HashMap<Vec<u8>, Vec<u8>>,
    /// (session, tree) -> (share, is_pipe).
    trees: HashMap<(u64, u32), (Vec<u8>, bool)>,
    /// (session, message id) of a READ request -> (guid, offset).
    reads: HashMap<(u64, u64), (Vec<u8>, u64)>,
    /// SMB1 TRANS requests on a pipe: (uid, tid, mid) -> the pipe's fid.
    trans_fids: HashMap<(u64, u32, u64), Vec<u8>>,
    files: FileConfig,
    pending_events: u32,
    /// Interfaces of the last BIND on a pipe (`None`: no BIND seen).
    ifaces: Option<Vec<Iface>>,
    /// Limits (`app-layer.protocols.smb`).
    cfg: SmbConfig,
    /// Per direction: the stream reached its depth (Suricata's `ts_trunc` / `tc_trunc`).
    trunc: [bool; 2],
    /// DCERPC stub bytes not kept: beyond [`dcerpc::MAX_STUB`] per transaction and
    /// direction or [`dcerpc::MAX_FLOW_STUB`] per flow (shrike's bounds).
    pub(crate) dce_stub_dropped: u64,
    /// [`dcerpc::MAX_FLOW_STUB`] (lowered by tests).
    dce_stub_budget: usize,
}

fn dir_idx(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

fn bounded_insert<K: std::hash::Hash + Eq, V>(m: &mut HashMap<K, V>, k: K, v: V) {
    if m.len() >= MAX_MAP {
        m.clear();
    }
    m.insert(k, v);
}

impl SmbState {
    /// A new state computing what `files` asks for files.
    pub fn new(files: FileConfig) -> SmbState {
        SmbState {
            txs: VecDeque::new(),
            next_id: 0,
            failed: false,
            dialect: 0,
            dialect1: None,
            max_read_size: 0,
            max_write_size: 0,
            framers: Default::default(),
            create_names: HashMap::new(),
            guid_names: HashMap::new(),
            trees: HashMap::new(),
            reads: HashMap::new(),
            trans_fids: HashMap::new(),
            files,
            pending_events: 0,
            ifaces: None,
            cfg: SmbConfig::default(),
            trunc: [false; 2],
            dce_stub_dropped: 0,
            dce_stub_budget: dcerpc::MAX_FLOW_STUB,
        }
    }

    /// Transaction `id`, while kept.
    pub fn tx(&self, id: u64) -> Option<&SmbTx> {
        // Transactions are kept in id order: a binary search (detection asks for each live
        // one on each packet, and a flood holds thousands), a scan if the order ever breaks.
        match self.txs.binary_search_by_key(&id, |t| t.id) {
            Ok(i) => self.txs.get(i),
            Err(_) => self.txs.iter().find(|t| t.id == id),
        }
    }

    fn new_tx(&mut self, ver: u8, cmd: u16, h: &Smb2Hdr, data: TxData) -> &mut SmbTx {
        // Suricata's `max-tx`: beyond it the oldest open transaction is closed with
        // `too_many_transactions` (it is then logged and freed as any other).
        let max = (self.cfg.max_tx as usize).max(1);
        if self.txs.len() > max {
            if let Some(t) = self
                .txs
                .iter_mut()
                .find(|t| !t.request_done || !t.response_done)
            {
                t.request_done = true;
                t.response_done = true;
                t.events |= 1 << EV_TOO_MANY_TXS;
            }
        }
        // A hard bound on memory whatever is logged.
        if self.txs.len() >= max.saturating_mul(4).max(MAX_TXS) {
            self.txs.pop_front();
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(SmbTx {
            id,
            ver,
            cmd,
            status: None,
            session_id: h.session_id,
            tree_id: h.tree_id,
            msg_id: h.message_id,
            request_done: true,
            // No response is expected once the other direction was truncated.
            response_done: self.trunc[1],
            data,
            events: std::mem::take(&mut self.pending_events),
            events_reported: 0,
            logged: false,
            hosts: [None, None],
            seen: 0,
            service: None,
            dos: None,
        });
        self.txs.back_mut().expect("just pushed")
    }

    fn generic_tx(&mut self, cmd: u16, h: &Smb2Hdr) -> Option<&mut SmbTx> {
        self.txs.iter_mut().find(|t| {
            t.ver == 2
                && t.cmd == cmd
                && !t.response_done
                && !matches!(t.data, TxData::File { .. })
                && t.session_id == h.session_id
                && (t.tree_id == h.tree_id || h.is_async())
                && t.msg_id == h.message_id
        })
    }

    fn file_tx(&mut self, guid: &[u8], dir: Dir) -> Option<&mut SmbTx> {
        self.txs.iter_mut().find(|t| {
            matches!(&t.data, TxData::File { fuid, dir: d, .. } if fuid == guid && *d == dir)
                && !t.response_done
        })
    }

    fn event(&mut self, ev: u8) {
        self.pending_events |= 1 << ev;
    }

    /// An event on the most recent transaction, none when there is none (Suricata's
    /// `SMBState::set_event`).
    fn last_event(&mut self, ev: u8) {
        if let Some(t) = self.txs.back_mut() {
            t.events |= 1 << ev;
        }
    }

    fn parse_dir(
        &mut self,
        dir: Dir,
        mut data: &[u8],
        mut fc: Option<&mut crate::frames::FrameCtx<'_>>,
    ) -> bool {
        let mut err = false;
        let i = dir_idx(dir);
        // Stream offset of `data[0]` (frames only).
        let mut data_abs = fc.as_deref().map_or(0, |f| f.offset);
        if !self.framers[i].started && !data.is_empty() {
            self.framers[i].started = true;
            // Picked up midway: the stream does not start on a record.
            if data.len() >= 8 && data[0] == 0 && !is_smb_magic(&data[4..8]) {
                self.framers[i].resync = true;
            }
        }
        loop {
            if self.framers[i].skip > 0 {
                let n = (self.framers[i].skip).min(data.len() as u64) as usize;
                self.framers[i].skip -= n as u64;
                data = &data[n..];
                data_abs += n as u64;
            }
            if let Some(mut sr) = self.framers[i].stream.take() {
                let n = (sr.left).min(data.len() as u64) as usize;
                let fb = (sr.data_left as usize).min(n);
                if fb > 0 {
                    self.file_data(&sr.hdr, &sr.guid, dir, sr.cmd, sr.off, &data[..fb], 2);
                }
                sr.off += fb as u64;
                sr.data_left -= fb as u64;
                sr.left -= n as u64;
                data = &data[n..];
                data_abs += n as u64;
                if sr.left > 0 {
                    self.framers[i].stream = Some(sr);
                }
            }
            if data.is_empty() {
                return err;
            }
            let mut buf = std::mem::take(&mut self.framers[i].buf);
            // Stream offset of `buf[0]`.
            let buf_abs = data_abs.saturating_sub(buf.len() as u64);
            data_abs += data.len() as u64;
            buf.extend_from_slice(data);
            data = &[];
            let mut pos = 0;
            loop {
                let rest = &buf[pos..];
                if self.framers[i].resync {
                    match find_sync(rest) {
                        Some(o) => {
                            pos += o;
                            self.framers[i].resync = false;
                            continue;
                        }
                        None => {
                            // Keep a tail that may start a header.
                            let keep = rest.len().min(7);
                            pos = buf.len() - keep;
                            break;
                        }
                    }
                }
                if rest.len() < 4 {
                    break;
                }
                let kind = rest[0];
                // Direct TCP (445) session messages have a 24-bit length (SMB2/3 large
                // MTU); other NBSS records 17 bits.
                let hi = if kind == 0 {
                    usize::from(rest[1])
                } else {
                    usize::from(rest[1]) & 1
                };
                let len = (hi << 16) | (usize::from(rest[2]) << 8) | usize::from(rest[3]);
                if !matches!(kind, 0x00 | 0x81 | 0x82 | 0x83 | 0x84 | 0x85) {
                    self.framers[i].resync = true;
                    err = true;
                    continue;
                }
                if kind == 0 && len > MAX_RECORD {
                    self.event(EV_RECORD_OVERFLOW);
                    let have = rest.len() - 4;
                    self.framers[i].skip = (len - have) as u64;
                    pos = buf.len();
                    break;
                }
                if rest.len() < 4 + len {
                    if let Some(fc) = fc.as_deref_mut() {
                        let at = buf_abs + pos as u64;
                        if kind == 0
                            && self.framers[i].framed != Some(at)
                            && partial_record(dir, &rest[4..])
                        {
                            self.framers[i].framed = Some(at);
                            smb_frames(fc, at, len, &rest[4..], true);
                        }
                    }
                    if kind == 0 && rest.len() >= PARTIAL_MIN {
                        if let Some(sr) = self.start_partial(dir, &rest[4..], len) {
                            self.framers[i].stream = Some(sr);
                            pos = buf.len();
                        }
                    }
                    break;
                }
                if let Some(fc) = fc.as_deref_mut() {
                    let at = buf_abs + pos as u64;
                    if self.framers[i].framed.take() != Some(at) {
                        smb_frames(fc, at, len, &rest[4..4 + len], kind == 0);
                    }
                }
                let rec = &buf[pos + 4..pos + 4 + len];
                pos += 4 + len;
                if kind == 0 && !rec.is_empty() {
                    if rec.len() >= 4 && is_smb_magic(rec) {
                        let rec = rec.to_vec();
                        if !self.smb_record(dir, &rec) {
                            // A malformed SMB1/SMB2 record inside a complete NBSS record:
                            // Suricata's parser returns an error (the app layer stops).
                            self.framers[i].buf = Vec::new();
                            self.failed = true;
                            return true;
                        }
                    } else {
                        self.framers[i].resync = true;
                        err = true;
                    }
                }
            }
            buf.drain(..pos.min(buf.len()));
            self.framers[i].buf = buf;
            if self.framers[i].skip == 0 {
                return err;
            }
        }
    }

    /// One SMB record; `false` when it is malformed (Suricata's `malformed_data` on the
    /// most recent transaction and a parser error).
    fn smb_record(&mut self, dir: Dir, rec: &[u8]) -> bool {
        match rec[0] {
            0xfe => {
                let mut off = 0usize;
                while let Some(r) = rec.get(off..) {
                    let Some(h) = Smb2Hdr::parse(r) else {
                        self.last_event(EV_MALFORMED);
                        return false;
                    };
                    let end = if h.next_command > 0 {
                        (h.next_command as usize).min(r.len())
                    } else {
                        r.len()
                    };
                    let msg = &r[..end];
                    if h.is_response() {
                        self.smb2_response(&h, msg);
                    } else {
                        self.smb2_request(&h, msg);
                    }
                    let _ = dir;
                    if h.next_command == 0 || (h.next_command as usize) < 64 {
                        break;
                    }
                    off += h.next_command as usize;
                }
            }
            0xff => return self.smb1_record(rec),
            // Encrypted SMB3 records: not parsed.
            _ => {}
        }
        true
    }

    fn smb2_request(&mut self, h: &Smb2Hdr, m: &[u8]) {
        let b = &m[64..];
        match h.command {
            0 => {
                let cnt = usize::from(u16le(b, 2).unwrap_or(0));
                let dialects: Vec<String> = (0..cnt)
                    .filter_map(|k| u16le(b, 36 + 2 * k))
                    .map(smb2_dialect_string)
                    .collect();
                let client_guid = b.get(12..28).map(|g| g.to_vec());
                self.new_tx(
                    2,
                    0,
                    h,
                    TxData::Negotiate {
                        dialects,
                        client_guid,
                        server_guid: Vec::new(),
                    },
                );
            }
            1 => {
                let blob = sec_blob(m, b, 12);
                let ntlmssp = blob.and_then(parse_ntlmssp_auth);
                let krb = blob
                    .filter(|_| ntlmssp.is_none())
                    .and_then(krb::find_ticket);
                let unusual = ntlmssp.as_ref().is_some_and(|n| n.unusual_order);
                let t = self.new_tx(2, 1, h, TxData::SessionSetup { ntlmssp, krb });
                if unusual {
                    t.events |= 1 << EV_UNUSUAL_NTLMSSP_ORDER;
                }
            }
            3 => {
                let share = match (u16le(b, 4), u16le(b, 6)) {
                    (Some(o), Some(l)) => m
                        .get(usize::from(o)..usize::from(o) + usize::from(l))
                        .map(strip_nul)
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                let mut hh = *h;
                hh.tree_id = 0;
                self.new_tx(
                    2,
                    3,
                    &hh,
                    TxData::TreeConnect {
                        share,
                        share_type: 0,
                        is_pipe: false,
                    },
                );
            }
            5 => {
                let opts = u32le(b, 40).unwrap_or(0);
                let disposition = u32le(b, 36).unwrap_or(0);
                let name = match (u16le(b, 44), u16le(b, 46)) {
                    (Some(o), Some(l)) if l > 0 => m
                        .get(usize::from(o)..usize::from(o) + usize::from(l))
                        .unwrap_or_default()
                        .to_vec(),
                    _ => Vec::new(),
                };
                let filename = strip_nul(&name);
                bounded_insert(
                    &mut self.create_names,
                    (h.session_id, h.message_id),
                    filename.clone(),
                );
                self.new_tx(
                    2,
                    5,
                    h,
                    TxData::Create {
                        filename,
                        directory: opts & 1 != 0,
                        disposition,
                        delete_on_close: opts & 0x1000 != 0,
                        times: [0; 4],
                        size: 0,
                        guid: Vec::new(),
                    },
                );
            }
            6 => {
                if let Some(g) = b.get(8..24) {
                    let g = g.to_vec();
                    self.close_files(&g);
                }
                self.new_tx(2, 6, h, TxData::Generic);
            }
            8 => {
                let rd_len = u32le(b, 4).unwrap_or(0);
                if (self.max_read_size != 0 && rd_len > self.max_read_size)
                    || (self.cfg.max_read_size != 0 && rd_len > self.cfg.max_read_size)
                {
                    // Not followed. Suricata 7 queues `read_request_too_large` for the
                    // request's transaction, but a READ request makes none, so the event
                    // is never seen; shrike does the same.
                } else if let (Some(off), Some(g)) = (u64le(b, 8), b.get(16..32)) {
                    bounded_insert(
                        &mut self.reads,
                        (h.session_id, h.message_id),
                        (g.to_vec(), off),
                    );
                }
            }
            9 => {
                let (Some(doff), Some(len), Some(off), Some(g)) =
                    (u16le(b, 2), u32le(b, 4), u64le(b, 8), b.get(16..32))
                else {
                    self.event(EV_MALFORMED);
                    return;
                };
                let g = g.to_vec();
                let start = usize::from(doff);
                // More claimed than the record holds, or more than the negotiated or
                // configured size: not followed (Suricata skips the record).
                if start.saturating_add(len as usize) > m.len()
                    || (self.max_write_size != 0 && len > self.max_write_size)
                    || (self.cfg.max_write_size != 0 && len > self.cfg.max_write_size)
                {
                    self.last_event(EV_WRITE_REQUEST_TOO_LARGE);
                    return;
                }
                let end = start.saturating_add(len as usize).min(m.len());
                let data = m.get(start..end).unwrap_or_default().to_vec();
                self.file_data(h, &g, Dir::ToServer, 9, off, &data, 2);
            }
            11 => {
                let func = u32le(b, 4).unwrap_or(0);
                let dce = func == FSCTL_PIPE_TRANSCEIVE
                    && b.get(8..24).is_some_and(|g| self.dcerpc_service(g));
                if dce {
                    let off = u32le(b, 24).unwrap_or(0) as usize;
                    let len = u32le(b, 28).unwrap_or(0) as usize;
                    let data = m
                        .get(off..off.saturating_add(len).min(m.len()))
                        .unwrap_or_default()
                        .to_vec();
                    if !self.dcerpc_pdus(h, 2, 11, &data) {
                        self.new_tx(2, 11, h, TxData::Ioctl { func });
                    }
                } else {
                    self.new_tx(2, 11, h, TxData::Ioctl { func });
                }
            }
            17 => {
                let (Some(&ty), Some(&class), Some(boff), Some(g)) =
                    (b.get(2), b.get(3), u16le(b, 8), b.get(16..32))
                else {
                    self.event(EV_MALFORMED);
                    return;
                };
                let g = g.to_vec();
                let buf = m.get(usize::from(boff)..).unwrap_or_default();
                let known = self.guid_names.get(&g).cloned();
                if ty == 1 && class == 10 {
                    let nl = u32le(buf, 16).unwrap_or(0) as usize;
                    let to = strip_nul(buf.get(20..20 + nl).unwrap_or_default());
                    let from = known.unwrap_or_else(|| b"<unknown>".to_vec());
                    self.new_tx(2, 17, h, TxData::Rename { from, to, guid: g });
                } else if ty == 1 && class == 13 {
                    let filename = known
                        .or_else(|| {
                            let prev = h.message_id.checked_sub(1)?;
                            self.create_names.get(&(h.session_id, prev)).cloned()
                        })
                        .unwrap_or_else(|| b"<unknown>".to_vec());
                    let delete = buf.first().is_some_and(|&d| d != 0);
                    self.new_tx(
                        2,
                        17,
                        h,
                        TxData::SetInfo {
                            filename,
                            delete,
                            guid: g,
                            subcmd: 0,
                            loi: 0,
                        },
                    );
                }
            }
            16 => {}
            c => {
                self.new_tx(2, c, h, TxData::Generic);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn file_data(
        &mut self,
        h: &Smb2Hdr,
        g: &[u8],
        dir: Dir,
        cmd: u16,
        off: u64,
        data: &[u8],
        ver: u8,
    ) {
        // As Suricata: a pipe when the message's tree is one (an async response has no
        // tree: its data is taken as a file's).
        let key = (h.session_id, h.tree_id);
        let mut pipe = self.trees.get(&key).is_some_and(|t| t.1);
        // The tree connect was missed: DCERPC-looking data makes the tree a pipe (as
        // Suricata's `smb_dcerpc_probe`), and the file a DCERPC one when its name is not
        // a known service.
        if !self.trees.contains_key(&key) && dcerpc::probe(data) {
            bounded_insert(&mut self.trees, key, (b"suricata::dcerpc".to_vec(), true));
            if !self.dcerpc_service(g) {
                bounded_insert(
                    &mut self.guid_names,
                    g.to_vec(),
                    b"suricata::dcerpc".to_vec(),
                );
            }
            pipe = true;
        }
        if pipe {
            // Named pipes carry DCERPC (of the services Suricata knows), not files.
            if self.dcerpc_service(g) {
                match dir {
                    Dir::ToServer => self.dcerpc_request(h, ver, cmd, data),
                    Dir::ToClient => self.dcerpc_response(h.status, data),
                }
            }
            return;
        }
        if self.file_tx(g, dir).is_none() {
            // An unknown name: Suricata's SMB2 READ and SMB1 WRITE say `<unknown>`,
            // its SMB2 WRITE and SMB1 READ leave it empty.
            let name = self
                .guid_names
                .get(g)
                .cloned()
                .unwrap_or_else(|| match (ver, dir) {
                    (2, Dir::ToClient) | (1, Dir::ToServer) => b"<unknown>".to_vec(),
                    _ => Vec::new(),
                });
            // Suricata names the share of SMB2 files read and SMB1 files, not of SMB2
            // files written.
            let share = if ver == 2 && dir == Dir::ToServer {
                Vec::new()
            } else {
                self.trees
                    .get(&(h.session_id, h.tree_id))
                    .map(|t| t.0.clone())
                    .unwrap_or_default()
            };
            let file = TrackedFile::open(&name, &self.files);
            // SMB1 file transactions carry no session or tree (as Suricata's).
            let zero = Smb2Hdr {
                status: 0,
                command: cmd,
                flags: 0,
                next_command: 0,
                message_id: 0,
                tree_id: 0,
                session_id: 0,
            };
            let t = self.new_tx(
                ver,
                cmd,
                if ver == 1 { &zero } else { h },
                TxData::File {
                    name,
                    share,
                    fuid: g.to_vec(),
                    dir,
                    file,
                    // Suricata's tracker starts at offset 0: a file first seen at a
                    // later offset holds its chunks until offset 0 comes.
                    next_off: 0,
                    head: Vec::new(),
                    ooo: Default::default(),
                    in_flight: 0,
                },
            );
            t.request_done = false;
        }
        // SMB2 holds out-of-order chunks within Suricata's queue limits.
        let limits = (ver == 2).then(|| match dir {
            Dir::ToServer => (
                u64::from(self.cfg.max_write_queue_size),
                self.cfg.max_write_queue_cnt as usize,
                EV_WRITE_QUEUE_SIZE,
                EV_WRITE_QUEUE_CNT,
            ),
            Dir::ToClient => (
                u64::from(self.cfg.max_read_queue_size),
                self.cfg.max_read_queue_cnt as usize,
                EV_READ_QUEUE_SIZE,
                EV_READ_QUEUE_CNT,
            ),
        });
        let mut state_ev = None;
        if let Some(t) = self.file_tx(g, dir) {
            if let TxData::File {
                file,
                next_off,
                head,
                ooo,
                in_flight,
                ..
            } = &mut t.data
            {
                // As Suricata's file tracker: a chunk at the tracked offset is appended,
                // with the held chunks it reaches; any other chunk is held at its offset
                // (one before the tracked offset is an overlap and is never appended).
                let overlap = off < *next_off;
                let len = data.len() as u64;
                match limits {
                    Some((size, _, ev, _)) if size != 0 && *in_flight + len > size => {
                        state_ev = Some(ev);
                    }
                    Some((_, cnt, _, ev)) if cnt != 0 && ooo.len() >= cnt => {
                        state_ev = Some(ev);
                    }
                    _ if off == *next_off => {
                        let mut append = |d: &[u8], file: &mut TrackedFile| {
                            file.append(d);
                            if !file.has_gaps() && head.len() < MAX_FILE_INSPECT {
                                let n = (MAX_FILE_INSPECT - head.len()).min(d.len());
                                head.extend_from_slice(&d[..n]);
                            }
                        };
                        append(data, file);
                        *next_off += len;
                        while let Some(c) = ooo.remove(&*next_off) {
                            *in_flight -= c.len() as u64;
                            append(&c, file);
                            *next_off += c.len() as u64;
                        }
                    }
                    _ => {
                        ooo.entry(off).or_default().extend_from_slice(data);
                        *in_flight += len;
                    }
                }
                if overlap {
                    t.events |= 1 << EV_FILE_OVERLAP;
                }
            }
        }
        if let Some(ev) = state_ev {
            self.last_event(ev);
        }
    }

    fn smb2_response(&mut self, h: &Smb2Hdr, m: &[u8]) {
        let b = &m[64..];
        let st = h.status;
        let mut have = false;
        match h.command {
            0 => {
                let dialect = u16le(b, 4);
                if let Some(d) = dialect {
                    if st == 0 {
                        self.dialect = d;
                        self.max_read_size = u32le(b, 32).unwrap_or(0);
                        self.max_write_size = u32le(b, 36).unwrap_or(0);
                        if self.cfg.max_read_size != 0
                            && self.max_read_size > self.cfg.max_read_size
                        {
                            self.last_event(EV_NEGOTIATE_MAX_READ);
                        }
                        if self.cfg.max_write_size != 0
                            && self.max_write_size > self.cfg.max_write_size
                        {
                            self.last_event(EV_NEGOTIATE_MAX_WRITE);
                        }
                    }
                }
                let sg = b.get(8..24).map(|g| g.to_vec()).unwrap_or_default();
                let pending = |t: &&mut SmbTx, v: u8| {
                    t.ver == v && matches!(t.data, TxData::Negotiate { .. }) && !t.response_done
                };
                let i = self
                    .txs
                    .iter_mut()
                    .position(|t| pending(&t, 2))
                    .or_else(|| self.txs.iter_mut().position(|t| pending(&t, 1)));
                if let Some(t) = i.and_then(|i| self.txs.get_mut(i)) {
                    if let TxData::Negotiate { server_guid, .. } = &mut t.data {
                        *server_guid = sg;
                    }
                    t.status = Some(st);
                    t.response_done = true;
                }
                have = true;
            }
            1 => {
                if let Some(t) = self.txs.iter_mut().find(|t| {
                    t.cmd == 1 && t.ver == 2 && !t.response_done && t.msg_id == h.message_id
                }) {
                    t.status = Some(st);
                    t.response_done = true;
                    t.session_id = h.session_id;
                }
                have = true;
            }
            3 => {
                if let Some(t) = self.txs.iter_mut().find(|t| {
                    t.cmd == 3
                        && t.ver == 2
                        && !t.response_done
                        && t.msg_id == h.message_id
                        && t.session_id == h.session_id
                }) {
                    t.status = Some(st);
                    t.response_done = true;
                    t.tree_id = h.tree_id;
                    if let TxData::TreeConnect {
                        share,
                        share_type,
                        is_pipe,
                    } = &mut t.data
                    {
                        if st == 0 {
                            *share_type = b.get(2).copied().unwrap_or(0);
                            *is_pipe = *share_type == 2;
                            let v = (share.clone(), *is_pipe);
                            bounded_insert(&mut self.trees, (h.session_id, h.tree_id), v);
                        }
                    }
                }
                have = true;
            }
            5 => {
                let name = self.create_names.remove(&(h.session_id, h.message_id));
                if st == 0 {
                    if let Some(g) = b.get(64..80) {
                        if let Some(n) = name {
                            bounded_insert(&mut self.guid_names, g.to_vec(), n);
                        }

                        let times =
                            [8, 16, 24, 32].map(|o| filetime_unix(u64le(b, o).unwrap_or(0)));
                        let eof = u64le(b, 48).unwrap_or(0);
                        let g = g.to_vec();
                        if let Some(t) = self.generic_tx(5, h) {
                            t.status = Some(st);
                            t.response_done = true;
                            if let TxData::Create {
                                times: tt,
                                size,
                                guid,
                                ..
                            } = &mut t.data
                            {
                                *tt = times;
                                *size = eof;
                                *guid = g;
                            }
                        }
                        have = true;
                    } else {
                        self.event(EV_MALFORMED);
                    }
                }
            }
            8 => {
                let key = (h.session_id, h.message_id);
                if st == 0 || st == 0x8000_0005 {
                    if let (Some(doff), Some(len)) = (b.get(2), u32le(b, 4)) {
                        let too_large = usize::from(*doff).saturating_add(len as usize) > m.len()
                            || (self.max_read_size != 0 && len > self.max_read_size)
                            || (self.cfg.max_read_size != 0 && len > self.cfg.max_read_size);
                        if too_large {
                            self.last_event(EV_READ_RESPONSE_TOO_LARGE);
                        } else if let Some((g, off)) = self.reads.remove(&key) {
                            let start = usize::from(*doff);
                            let end = start.saturating_add(len as usize).min(m.len());
                            let data = m.get(start..end).unwrap_or_default().to_vec();
                            self.file_data(h, &g, Dir::ToClient, 8, off, &data, 2);
                        }
                    }
                } else if st == 0xc000_0011 {
                    if let Some((g, _)) = self.reads.remove(&key) {
                        if let Some(t) = self.file_tx(&g, Dir::ToClient) {
                            if let TxData::File { file, .. } = &mut t.data {
                                if !file.is_done() {
                                    file.close_tracked(false);
                                }
                            }
                            t.status = Some(st);
                            t.request_done = true;
                        }
                    }
                } else if st != 0x103 {
                    self.reads.remove(&key);
                }
                have = true;
            }
            16 => have = true,
            11 if u32le(b, 4) == Some(FSCTL_PIPE_TRANSCEIVE)
                && b.get(8..24).is_some_and(|g| self.dcerpc_service(g)) =>
            {
                let off = u32le(b, 32).unwrap_or(0) as usize;
                let len = u32le(b, 36).unwrap_or(0) as usize;
                let data = m
                    .get(off..off.saturating_add(len).min(m.len()))
                    .unwrap_or_default()
                    .to_vec();
                self.dcerpc_response(st, &data);
            }
            _ => {}
        }
        if !have {
            let ev = std::mem::take(&mut self.pending_events);
            if let Some(t) = self.generic_tx(h.command, h) {
                // A DCERPC transaction ends with its DCERPC response, not the SMB one.
                let dce_pending =
                    matches!(t.data, TxData::Dcerpc { res_cmd: None, .. }) && h.command == 9;
                if st != 0x103 && !dce_pending {
                    t.response_done = true;
                }
                t.status = Some(st);
                t.events |= ev;
            }
        }
    }

    /// Room left for DCERPC stub data in the flow's live transactions
    /// ([`dcerpc::MAX_FLOW_STUB`]).
    fn dce_stub_room(&self) -> usize {
        let held: usize = self
            .txs
            .iter()
            .map(|t| match &t.data {
                TxData::Dcerpc {
                    stub_req, stub_res, ..
                } => stub_req.len() + stub_res.len(),
                _ => 0,
            })
            .sum();
        self.dce_stub_budget.saturating_sub(held)
    }

    /// DCERPC PDUs written to a pipe; false (and no transaction) when there are none.
    fn dcerpc_pdus(&mut self, h: &Smb2Hdr, ver: u8, cmd: u16, data: &[u8]) -> bool {
        let pdus = dcerpc::pdus(data);
        if pdus.is_empty() {
            return false;
        }
        for p in pdus {
            match p.ptype {
                dcerpc::BIND | dcerpc::ALTER_CONTEXT => {
                    self.ifaces = Some(p.bind_ifaces());
                }
                dcerpc::REQUEST => {
                    let Some((ctx, op, stub)) = p.request() else {
                        self.event(EV_MALFORMED);
                        continue;
                    };
                    let room = self.dce_stub_room();
                    // A later fragment of a request in progress.
                    if p.flags & 1 == 0 {
                        if let Some(t) = self.txs.iter_mut().rev().find(|t| {
                            matches!(&t.data, TxData::Dcerpc { call_id, req_cmd: Some(dcerpc::REQUEST), res_cmd: None, .. } if *call_id == p.call_id)
                        }) {
                            if let TxData::Dcerpc {
                                frag_req, stub_req, ..
                            } = &mut t.data
                            {
                                *frag_req += 1;
                                let n = stub
                                    .len()
                                    .min(dcerpc::MAX_STUB.saturating_sub(stub_req.len()))
                                    .min(room);
                                stub_req.extend_from_slice(&stub[..n]);
                                self.dce_stub_dropped += (stub.len() - n) as u64;
                            }
                            continue;
                        }
                    }
                    let n = stub.len().min(dcerpc::MAX_STUB).min(room);
                    self.dce_stub_dropped += (stub.len() - n) as u64;
                    self.new_tx(
                        ver,
                        cmd,
                        h,
                        TxData::Dcerpc {
                            req_cmd: Some(dcerpc::REQUEST),
                            res_cmd: None,
                            call_id: p.call_id,
                            opnum: op,
                            context_id: ctx,
                            frag_req: 1,
                            stub_req: stub[..n].to_vec(),
                            frag_res: 0,
                            stub_res: Vec::new(),
                        },
                    );
                    continue;
                }
                _ => {}
            }
            self.new_tx(
                ver,
                cmd,
                h,
                TxData::Dcerpc {
                    req_cmd: Some(p.ptype),
                    res_cmd: None,
                    call_id: p.call_id,
                    opnum: 0,
                    context_id: 0,
                    frag_req: 0,
                    stub_req: Vec::new(),
                    frag_res: 0,
                    stub_res: Vec::new(),
                },
            );
        }
        true
    }

    /// Whether the pipe opened as file `g` carries DCERPC: its name is one of the services
    /// Suricata 7.0.10 knows (`get_service_for_guid`, exact names, a leading `\` skipped),
    /// or the tree was found to be DCERPC by probing (`suricata::dcerpc`). Data of other
    /// pipes (`wkssvc`, `PSEXESVC`, ...) is skipped.
    fn dcerpc_service(&self, g: &[u8]) -> bool {
        let Some(n) = self.guid_names.get(g) else {
            return false;
        };
        let n = match n.split_first() {
            Some((b'\\', rest)) if !rest.is_empty() => rest,
            _ => n.as_slice(),
        };
        matches!(
            n,
            b"svcctl"
                | b"srvsvc"
                | b"atsvc"
                | b"lsarpc"
                | b"samr"
                | b"spoolss"
                | b"winreg"
                | b"suricata::dcerpc"
        )
    }

    /// Data written to a pipe: DCERPC, or skipped (no transaction, as Suricata).
    fn dcerpc_request(&mut self, h: &Smb2Hdr, ver: u8, cmd: u16, data: &[u8]) {
        self.dcerpc_pdus(h, ver, cmd, data);
    }

    fn dcerpc_response(&mut self, status: u32, data: &[u8]) {
        for p in dcerpc::pdus(data) {
            let room = self.dce_stub_room();
            if matches!(p.ptype, dcerpc::BINDACK | dcerpc::ALTER_CONTEXT_RESP) {
                let res = p.bindack_results();
                if let Some(ifs) = &mut self.ifaces {
                    for (i, (r, why)) in ifs.iter_mut().zip(res) {
                        i.acked = true;
                        i.ack_result = r;
                        i.ack_reason = why;
                    }
                }
            }
            let Some(t) = self.txs.iter_mut().find(|t| {
                matches!(&t.data, TxData::Dcerpc { call_id, .. } if *call_id == p.call_id)
                    && !t.response_done
            }) else {
                continue;
            };
            t.status = Some(status);
            if let TxData::Dcerpc {
                res_cmd,
                frag_res,
                stub_res,
                ..
            } = &mut t.data
            {
                *res_cmd = Some(p.ptype);
                if p.ptype == dcerpc::RESPONSE {
                    *frag_res += 1;
                    let stub = p.response();
                    let n = stub
                        .len()
                        .min(dcerpc::MAX_STUB.saturating_sub(stub_res.len()))
                        .min(room);
                    stub_res.extend_from_slice(&stub[..n]);
                    self.dce_stub_dropped += (stub.len() - n) as u64;
                    if p.flags & 2 != 0 {
                        t.response_done = true;
                    }
                } else {
                    t.response_done = true;
                }
            }
        }
    }

    fn write_dcerpc(&self, t: &SmbTx, w: &mut JsonWriter) {
        let TxData::Dcerpc {
            req_cmd,
            res_cmd,
            call_id,
            opnum,
            context_id,
            frag_req,
            stub_req,
            frag_res,
            stub_res,
        } = &t.data
        else {
            return;
        };
        w.open_object("dcerpc");
        match req_cmd {
            Some(c) => w.set_str("request", &dcerpc::type_string(*c)),
            None => w.set_str("request", "REQUEST_LOST"),
        };
        match res_cmd {
            Some(c) => w.set_str("response", &dcerpc::type_string(*c)),
            None => w.set_str("response", "UNREPLIED"),
        };
        let iface = |w: &mut JsonWriter, i: &Iface, ack: bool| {
            w.start_object();
            w.set_str("uuid", &dcerpc::uuid_string(&i.uuid));
            w.set_str("version", &format!("{}.{}", i.ver, i.ver_min));
            if ack && i.acked {
                w.set_u64("ack_result", u64::from(i.ack_result));
                w.set_u64("ack_reason", u64::from(i.ack_reason));
            }
            w.close();
        };
        match req_cmd {
            Some(dcerpc::REQUEST) => {
                w.set_u64("opnum", u64::from(*opnum));
                w.open_object("req");
                w.set_u64("frag_cnt", u64::from(*frag_req));
                w.set_u64("stub_data_size", stub_req.len() as u64);
                w.close();
                if let Some(ifs) = &self.ifaces {
                    let mut it = ifs
                        .iter()
                        .filter(|i| i.context_id == *context_id)
                        .peekable();
                    if it.peek().is_some() {
                        w.open_array("interfaces");
                        for i in it {
                            iface(w, i, false);
                        }
                        w.close();
                    }
                }
            }
            Some(dcerpc::BIND) => {
                if let Some(ifs) = &self.ifaces {
                    w.open_array("interfaces");
                    for i in ifs {
                        iface(w, i, true);
                    }
                    w.close();
                }
            }
            _ => {}
        }
        if *res_cmd == Some(dcerpc::RESPONSE) {
            w.open_object("res");
            w.set_u64("frag_cnt", u64::from(*frag_res));
            w.set_u64("stub_data_size", stub_res.len() as u64);
            w.close();
        }
        w.set_u64("call_id", u64::from(*call_id));
        w.close();
    }

    fn write_smb(&self, t: &SmbTx, w: &mut JsonWriter) {
        w.open_object("smb");
        // Suricata numbers SMB transactions from 1 in the record.
        w.set_u64("id", t.id + 1);
        if self.dialect != 0 {
            w.set_str("dialect", &smb2_dialect_string(self.dialect));
        } else if let Some(d) = &self.dialect1 {
            w.set_str("dialect", &String::from_utf8_lossy(d));
        } else {
            w.set_str("dialect", "unknown");
        }
        if t.ver == 2 {
            w.set_str("command", &smb2_command_string(t.cmd));
        } else if t.ver == 1 {
            w.set_str("command", &smb1_command_string(t.cmd as u8));
        }
        if let (Some(s), Some(class)) = (t.status, t.dos) {
            w.set_str("status", &dos_error_string(class, s));
            w.set_str("status_code", &format!("0x{s:04x}"));
        } else if let Some(s) = t.status {
            match ntstatus_string(s) {
                Some(n) => w.set_str("status", n),
                None => w.set_str("status", &s.to_string()),
            };
            w.set_str("status_code", &format!("0x{s:x}"));
        }
        w.set_u64("session_id", t.session_id);
        w.set_u64("tree_id", u64::from(t.tree_id));
        match &t.data {
            TxData::Generic => {}
            TxData::SessionSetup { ntlmssp, krb } => {
                if let Some(n) = ntlmssp {
                    w.open_object("ntlmssp");
                    w.set_str("domain", &String::from_utf8_lossy(&n.domain));
                    w.set_str("user", &String::from_utf8_lossy(&n.user));
                    w.set_str("host", &String::from_utf8_lossy(&n.host));
                    if let Some(v) = &n.version {
                        w.set_str("version", v);
                    }
                    w.close();
                }
                if let Some(k) = krb {
                    w.open_object("kerberos");
                    w.set_str("realm", &k.realm);
                    w.open_array("snames");
                    for n in &k.snames {
                        w.str(n);
                    }
                    w.close();
                    w.close();
                }
                for (k, hst) in ["request", "response"].iter().zip(&t.hosts) {
                    if let Some((os, lm)) = hst {
                        w.open_object(k);
                        w.set_str("native_os", &String::from_utf8_lossy(os));
                        w.set_str("native_lm", &String::from_utf8_lossy(lm));
                        w.close();
                    }
                }
            }
            TxData::Create {
                filename,
                directory,
                disposition,
                delete_on_close,
                times,
                size,
                guid,
            } => {
                if filename.is_empty() {
                    w.set_str("filename", "<share_root>");
                } else {
                    let n = String::from_utf8_lossy(filename);
                    w.set_str(if *directory { "directory" } else { "filename" }, &n);
                }
                w.set_str(
                    "disposition",
                    match disposition {
                        0 => "FILE_SUPERSEDE",
                        1 => "FILE_OPEN",
                        2 => "FILE_CREATE",
                        3 => "FILE_OPEN_IF",
                        4 => "FILE_OVERWRITE",
                        5 => "FILE_OVERWRITE_IF",
                        _ => "UNKNOWN",
                    },
                );
                w.set_str(
                    "access",
                    if *delete_on_close {
                        "delete on close"
                    } else {
                        "normal"
                    },
                );
                w.set_u64("created", times[0]);
                w.set_u64("accessed", times[1]);
                w.set_u64("modified", times[2]);
                w.set_u64("changed", times[3]);
                w.set_u64("size", *size);
                w.set_str("fuid", &fuid_to_string(guid));
            }
            TxData::Negotiate {
                dialects,
                client_guid,
                server_guid,
            } => {
                w.open_array("client_dialects");
                for d in dialects {
                    w.str(d);
                }
                w.close();
                if let Some(g) = client_guid {
                    w.set_str("client_guid", &guid_to_string(g));
                }
                w.set_str("server_guid", &guid_to_string(server_guid));
                if self.max_read_size > 0 {
                    w.set_u64("max_read_size", u64::from(self.max_read_size));
                }
                if self.max_write_size > 0 {
                    w.set_u64("max_write_size", u64::from(self.max_write_size));
                }
            }
            TxData::TreeConnect {
                share,
                share_type,
                is_pipe,
            } => {
                let s = String::from_utf8_lossy(share);
                w.set_str(if *is_pipe { "named_pipe" } else { "share" }, &s);
                if t.ver == 1 {
                    w.open_object("service");
                    if let Some((req, res)) = &t.service {
                        w.set_str("request", &String::from_utf8_lossy(req));
                        if let Some(r) = res {
                            w.set_str("response", &String::from_utf8_lossy(r));
                        }
                    }
                    w.close();
                } else {
                    w.set_str(
                        "share_type",
                        match share_type {
                            1 => "FILE",
                            2 => "PIPE",
                            3 => "PRINT",
                            _ => "UNKNOWN",
                        },
                    );
                }
            }
            TxData::File {
                name, share, fuid, ..
            } => {
                w.set_str("filename", &String::from_utf8_lossy(name));
                w.set_str("share", &String::from_utf8_lossy(share));
                w.set_str("fuid", &fuid_to_string(fuid));
            }
            TxData::SetInfo {
                filename,
                delete,
                guid,
                subcmd,
                loi,
            } => {
                let name: Vec<u8> = filename.iter().copied().filter(|&c| c != 0).collect();
                if name.is_empty() {
                    w.set_str("filename", "<share_root>");
                } else {
                    w.set_str("filename", &String::from_utf8_lossy(&name));
                }
                w.set_str("access", if *delete { "delete on close" } else { "normal" });
                match subcmd {
                    8 => {
                        w.set_str("subcmd", "SET_FILE_INFO");
                    }
                    6 => {
                        w.set_str("subcmd", "SET_PATH_INFO");
                    }
                    _ => {}
                }
                if *loi == 1013 {
                    w.set_str("level_of_interest", "Set Disposition Information");
                }
                w.set_str("fuid", &fuid_to_string(guid));
            }
            TxData::Rename { from, to, guid } => {
                if t.ver == 2 {
                    w.open_object("set_info");
                    w.set_str("class", "FILE_INFO");
                    w.set_str("info_level", "SMB2_FILE_RENAME_INFO");
                    w.close();
                }
                w.open_object("rename");
                w.set_str("from", &String::from_utf8_lossy(from));
                w.set_str("to", &String::from_utf8_lossy(to));
                w.close();
                w.set_str("fuid", &fuid_to_string(guid));
            }
            TxData::Ioctl { func } => {
                w.set_str("function", &fsctl_string(*func));
            }
            TxData::Dcerpc { .. } => self.write_dcerpc(t, w),
        }
        w.close();
    }

    /// Suricata's `parse_tcp_data_ts_partial` / `_tc_partial` for SMB2: a WRITE request
    /// (not to a pipe) or successful READ response of `len` bytes whose first bytes `rec`
    /// are in hands those bytes' data to its file now; the rest of the record then streams
    /// to the file as it comes ([`StreamRec`]). `None`: the record waits to be whole.
    fn start_partial(&mut self, dir: Dir, rec: &[u8], len: usize) -> Option<StreamRec> {
        if rec.len() < 64 + 16 || !rec.starts_with(b"\xfeSMB") {
            return None;
        }
        let h = Smb2Hdr::parse(rec)?;
        if h.next_command != 0 {
            return None;
        }
        let b = &rec[64..];
        let declared = u32le(b, 4)?;
        let (doff, guid, off, max) = match (dir, h.is_response(), h.command) {
            (Dir::ToServer, false, 9) => {
                // Pipes carry DCERPC, parsed from whole records only (a tree not seen
                // connected is one when its data looks like DCERPC, as in `file_data`).
                let doff = usize::from(u16le(b, 2)?);
                let pipe = match self.trees.get(&(h.session_id, h.tree_id)) {
                    Some(t) => t.1,
                    None => dcerpc::probe(rec.get(doff..).unwrap_or_default()),
                };
                if pipe {
                    return None;
                }
                (
                    usize::from(u16le(b, 2)?),
                    b.get(16..32)?.to_vec(),
                    u64le(b, 8)?,
                    [self.max_write_size, self.cfg.max_write_size],
                )
            }
            (Dir::ToClient, true, 8) if h.status == 0 || h.status == 0x8000_0005 => {
                let (g, off) = self.reads.get(&(h.session_id, h.message_id))?.clone();
                let key = (h.session_id, h.tree_id);
                let doff = usize::from(b[2]);
                let pipe = match self.trees.get(&key) {
                    Some(t) => t.1,
                    None => dcerpc::probe(rec.get(doff..).unwrap_or_default()),
                };
                if pipe {
                    return None;
                }
                (
                    usize::from(b[2]),
                    g,
                    off,
                    [self.max_read_size, self.cfg.max_read_size],
                )
            }
            _ => return None,
        };
        let avail = rec.len().checked_sub(doff).filter(|&a| a > 0)?;
        if max.iter().any(|&m| m != 0 && declared > m)
            || doff.saturating_add(declared as usize) > len
            || avail >= declared as usize
        {
            return None;
        }
        let mut part = rec.to_vec();
        part[64 + 4..64 + 8].copy_from_slice(&(avail as u32).to_le_bytes());
        self.smb_record(dir, &part);
        Some(StreamRec {
            left: (len - rec.len()) as u64,
            data_left: u64::from(declared) - avail as u64,
            hdr: h,
            guid,
            cmd: h.command,
            off: off + avail as u64,
        })
    }

    /// The direction's stream ends inside an SMB2 WRITE request or READ response: its file
    /// data so far goes to the file (Suricata's parser hands the data of a partial WRITE /
    /// READ record to the file as it arrives, `handle_nbss_ts_partial` /
    /// `handle_nbss_tc_partial`), as if the record held only that much.
    fn flush_partial(&mut self, dir: Dir) {
        let i = dir_idx(dir);
        if self.framers[i].resync || self.framers[i].skip > 0 {
            return;
        }
        let buf = std::mem::take(&mut self.framers[i].buf);
        let Some(rec) = buf.get(4..).filter(|_| buf[0] == 0) else {
            return;
        };
        if rec.len() < 64 + 16 || !rec.starts_with(b"\xfeSMB") {
            return;
        }
        let Some(h) = Smb2Hdr::parse(rec) else {
            return;
        };
        let b = &rec[64..];
        let (doff, max) = match (dir, h.is_response(), h.command) {
            (Dir::ToServer, false, 9) => (
                usize::from(u16le(b, 2).unwrap_or(0)),
                [self.max_write_size, self.cfg.max_write_size],
            ),
            (Dir::ToClient, true, 8) => (
                usize::from(b[2]),
                [self.max_read_size, self.cfg.max_read_size],
            ),
            _ => return,
        };
        let declared = u32le(b, 4).unwrap_or(0);
        let avail = rec.len().saturating_sub(doff);
        if h.next_command != 0 || avail == 0 || max.iter().any(|&m| m != 0 && declared > m) {
            return;
        }
        let n = (declared as usize).min(avail) as u32;
        let mut part = rec.to_vec();
        part[64 + 4..64 + 8].copy_from_slice(&n.to_le_bytes());
        self.smb_record(dir, &part);
    }

    fn write_fileinfo(&self, c: &mut LogCtx<'_>, t: &SmbTx) {
        let TxData::File { file, dir, .. } = &t.data else {
            return;
        };
        if file.logged() {
            return;
        }
        file.set_logged();
        let emit = c.out.wants_type("files");
        if !(emit || crate::files::wants_fileinfo_file(file)) {
            return;
        }
        let Some(mut rec) = c.out.record(EventKind::Other) else {
            return;
        };
        let hdr = c.rec.header("fileinfo", *dir == Dir::ToServer);
        write_eve_header(&mut rec, &hdr);
        self.write_smb(t, &mut rec);
        rec.set_str("app_proto", "smb");
        rec.open_object("fileinfo");
        file.write_eve(&mut rec, t.id, None);
        rec.close();
        rec.close();
        crate::files::finish_fileinfo(rec, file, hdr.timestamp_ns, emit);
    }
}

impl SmbState {
    /// SMB1: one record, its AndX chain walked.
    fn smb1_record(&mut self, r: &[u8]) -> bool {
        let Some(h) = Smb1Hdr::parse(r) else {
            self.last_event(EV_MALFORMED);
            return false;
        };
        let mut cmd = h.command;
        let mut at = 32usize;
        // A header without a word count is handed over once with empty words and bytes,
        // as Suricata hands its record with empty data to the command's parser.
        while let Some(wc) = r.get(at).copied().or((at == 32).then_some(0)) {
            let wc = usize::from(wc);
            let words = r.get(at + 1..at + 1 + 2 * wc).unwrap_or_default();
            let bc_at = at + 1 + 2 * wc;
            let bc = usize::from(u16le(r, bc_at).unwrap_or(0));
            let bytes_at = bc_at + 2;
            let bytes = r
                .get(bytes_at..)
                .map(|b| &b[..bc.min(b.len())])
                .unwrap_or_default();
            let blk = Smb1Block {
                r,
                cmd,
                words,
                bytes,
                bytes_at,
            };
            if h.response {
                self.smb1_response(&h, &blk);
            } else {
                self.smb1_request(&h, &blk);
            }
            // As Suricata, the chain goes on while each AndX offset moves forward inside
            // the record (which bounds it); no count limit.
            if !is_andx(cmd) || words.len() < 4 || words[0] == 0xff {
                break;
            }
            let next = usize::from(u16le(words, 2).unwrap_or(0));
            if next <= at || next >= r.len() {
                break;
            }
            cmd = words[0];
            at = next;
        }
        true
    }

    fn smb1_hdr2(h: &Smb1Hdr, cmd: u8) -> Smb2Hdr {
        Smb2Hdr {
            status: h.status,
            command: u16::from(cmd),
            flags: 0,
            next_command: 0,
            message_id: u64::from(h.mid),
            tree_id: u32::from(h.tid),
            session_id: u64::from(h.uid),
        }
    }

    fn smb1_request(&mut self, h: &Smb1Hdr, b: &Smb1Block<'_>) {
        let hdr = Self::smb1_hdr2(h, b.cmd);
        let cmd = u16::from(b.cmd);
        match b.cmd {
            0x72 => {
                let dialects: Vec<String> = b
                    .bytes
                    .split(|&x| x == 0)
                    .filter(|d| d.first() == Some(&2))
                    .map(|d| String::from_utf8_lossy(&d[1..]).into_owned())
                    .collect();
                let mut zero = hdr;
                zero.session_id = 0;
                zero.tree_id = 0;
                self.new_tx(
                    1,
                    cmd,
                    &zero,
                    TxData::Negotiate {
                        dialects,
                        client_guid: None,
                        server_guid: Vec::new(),
                    },
                );
            }
            0x73 => {
                let blob_len = usize::from(u16le(b.words, 14).unwrap_or(0));
                let blob = if b.words.len() == 24 {
                    b.bytes.get(..blob_len)
                } else {
                    None
                };
                let ntlmssp = blob.and_then(parse_ntlmssp_auth);
                let krb = blob
                    .filter(|_| ntlmssp.is_none())
                    .and_then(krb::find_ticket);
                // Suricata reads the request with the extended-security layout (12 words)
                // whatever the word count: the strings start 26 bytes after the word count
                // plus the blob length, which for the 13-word (password) form lands 2 bytes
                // before the byte block.
                let words_at = b.bytes_at.saturating_sub(2 + b.words.len());
                let at = words_at + 26 + blob_len;
                let host =
                    b.r.get(at..)
                        .and_then(|d| smb1_strings_in(d, at, h.unicode));
                let unusual = ntlmssp.as_ref().is_some_and(|n| n.unusual_order);
                let t = self.new_tx(1, cmd, &hdr, TxData::SessionSetup { ntlmssp, krb });
                if unusual {
                    t.events |= 1 << EV_UNUSUAL_NTLMSSP_ORDER;
                }
                if let Some(t) = self.txs.back_mut() {
                    t.hosts[0] = host;
                }
            }
            0x75 => {
                let pwlen = usize::from(u16le(b.words, 6).unwrap_or(0));
                let mut o = pwlen;
                let (path, rest) = if h.unicode {
                    if (b.bytes_at + o) % 2 == 1 {
                        o += 1;
                    }
                    let d = b.bytes.get(o..).unwrap_or_default();
                    let end = d
                        .chunks_exact(2)
                        .position(|c| c == [0, 0])
                        .map_or(d.len() & !1, |i| 2 * i);
                    (low_bytes(&d[..end]), d.get(end + 2..).unwrap_or_default())
                } else {
                    let d = b.bytes.get(o..).unwrap_or_default();
                    let end = d.iter().position(|&x| x == 0).unwrap_or(d.len());
                    (d[..end].to_vec(), d.get(end + 1..).unwrap_or_default())
                };
                // As Suricata: the path's first character is dropped.
                let path = if path.len() > 1 {
                    path[1..].to_vec()
                } else {
                    path
                };
                let svc_end = rest.iter().position(|&x| x == 0).unwrap_or(rest.len());
                let svc = rest[..svc_end].to_vec();
                let mut hh = hdr;
                hh.tree_id = 0;
                self.new_tx(
                    1,
                    cmd,
                    &hh,
                    TxData::TreeConnect {
                        share: path,
                        share_type: 0,
                        is_pipe: false,
                    },
                );
                if let Some(t) = self.txs.back_mut() {
                    t.service = Some((svc, None));
                }
            }
            0xa2 => {
                let name_len = usize::from(u16le(b.words, 5).unwrap_or(0));
                let disposition = u32le(b.words, 35).unwrap_or(0);
                let opts = u32le(b.words, 39).unwrap_or(0);
                let mut o = 0;
                if h.unicode && b.bytes_at % 2 == 1 {
                    o = 1;
                }
                let raw = b
                    .bytes
                    .get(o..(o + name_len).min(b.bytes.len()))
                    .unwrap_or_default();
                let filename = strip_nul(raw);
                bounded_insert(
                    &mut self.create_names,
                    (u64::from(h.uid), u64::from(h.mid)),
                    filename.clone(),
                );
                self.new_tx(
                    1,
                    cmd,
                    &hdr,
                    TxData::Create {
                        filename,
                        directory: opts & 1 != 0,
                        disposition,
                        delete_on_close: opts & 0x1000 != 0,
                        times: [0; 4],
                        size: 0,
                        guid: Vec::new(),
                    },
                );
            }
            0x2f => {
                let (Some(fid), Some(off_lo), Some(len_hi), Some(len_lo), Some(doff)) = (
                    b.words.get(4..6),
                    u32le(b.words, 6),
                    u16le(b.words, 18),
                    u16le(b.words, 20),
                    u16le(b.words, 22),
                ) else {
                    self.event(EV_MALFORMED);
                    return;
                };
                let off_hi = if b.words.len() >= 28 {
                    u32le(b.words, 24).unwrap_or(0)
                } else {
                    0
                };
                let off = (u64::from(off_hi) << 32) | u64::from(off_lo);
                let len = ((usize::from(len_hi) & 1) << 16) | usize::from(len_lo);
                let start = usize::from(doff);
                if start.saturating_add(len) > b.r.len() {
                    // More claimed than the record holds: not followed (Suricata).
                    self.last_event(EV_WRITE_REQUEST_TOO_LARGE);
                    return;
                }
                let end = start.saturating_add(len).min(b.r.len());
                let data = b.r.get(start..end).unwrap_or_default().to_vec();
                let fid = fid.to_vec();
                self.file_data(&hdr, &fid, Dir::ToServer, cmd, off, &data, 1);
            }
            0x2e => {
                if let (Some(fid), Some(off)) = (b.words.get(4..6), u32le(b.words, 6)) {
                    bounded_insert(
                        &mut self.reads,
                        (u64::from(h.uid), u64::from(h.mid) | 1 << 63),
                        (fid.to_vec(), u64::from(off)),
                    );
                }
            }
            0x04 => {
                if let Some(fid) = b.words.get(0..2) {
                    let fid = fid.to_vec();
                    self.close_files(&fid);
                }
                self.new_tx(1, cmd, &hdr, TxData::Generic);
            }
            0x25 => {
                // TRANS on a named pipe (Suricata's `parse_smb_trans_request_record`: 16
                // words, two setup words, data): the pipe's fid is the second setup word;
                // its data is DCERPC when the pipe is a service Suricata knows.
                let setup = usize::from(b.words.get(26).copied().unwrap_or(0));
                let cnt = usize::from(u16le(b.words, 22).unwrap_or(0));
                if b.words.len() == 32 && setup == 2 && cnt > 0 {
                    let fid = b.words.get(30..32).unwrap_or_default().to_vec();
                    let off = usize::from(u16le(b.words, 24).unwrap_or(0));
                    let data =
                        b.r.get(off..off.saturating_add(cnt).min(b.r.len()))
                            .unwrap_or_default()
                            .to_vec();
                    let dce = self.dcerpc_service(&fid);
                    bounded_insert(
                        &mut self.trans_fids,
                        (u64::from(h.uid), u32::from(h.tid), u64::from(h.mid)),
                        fid,
                    );
                    if dce {
                        self.dcerpc_pdus(&hdr, 1, cmd, &data);
                    }
                }
            }
            0x32 => self.smb1_trans2(&hdr, b),
            _ => {
                self.new_tx(1, cmd, &hdr, TxData::Generic);
            }
        }
    }

    /// TRANS2 request: SET_PATH_INFO (6) and SET_FILE_INFO (8) with the disposition (1013)
    /// or rename (1010) level become a set-info or rename tx, as Suricata; other
    /// sub-commands make no tx.
    fn smb1_trans2(&mut self, hdr: &Smb2Hdr, b: &Smb1Block<'_>) {
        let Some(rec) = trans2_request(b) else {
            return;
        };
        let (params, data) = (rec.params, rec.data);
        let data = match rec.subcmd {
            6 => {
                // Level of interest, 4 reserved bytes, then the UTF-16 path.
                let loi = u16le(params, 0);
                let name = params.get(6..).and_then(smb_unicode_string);
                let (Some(loi), Some(name)) = (loi, name) else {
                    return;
                };
                match loi {
                    1013 => TxData::SetInfo {
                        filename: name,
                        delete: match trans2_disposition(data) {
                            Some(d) => d,
                            None => {
                                return;
                            }
                        },
                        guid: Vec::new(),
                        subcmd: 6,
                        loi,
                    },
                    1010 => match trans2_rename_target(data) {
                        Some(to) => TxData::Rename {
                            from: name,
                            to,
                            guid: Vec::new(),
                        },
                        None => {
                            return;
                        }
                    },
                    _ => return,
                }
            }
            8 => {
                let (Some(fid), Some(loi)) = (params.get(0..2), u16le(params, 2)) else {
                    return;
                };
                let known = self
                    .guid_names
                    .get(fid)
                    .cloned()
                    .unwrap_or_else(|| b"<unknown>".to_vec());
                match loi {
                    1013 => TxData::SetInfo {
                        filename: known,
                        delete: match trans2_disposition(data) {
                            Some(d) => d,
                            None => {
                                return;
                            }
                        },
                        guid: fid.to_vec(),
                        subcmd: 8,
                        loi,
                    },
                    1010 => match trans2_rename_target(data) {
                        Some(to) => TxData::Rename {
                            from: known,
                            to,
                            guid: fid.to_vec(),
                        },
                        None => {
                            return;
                        }
                    },
                    _ => return,
                }
            }
            _ => return,
        };
        self.new_tx(1, 0x32, hdr, data);
    }

    fn close_files(&mut self, fid: &[u8]) {
        for d in [Dir::ToServer, Dir::ToClient] {
            if let Some(t) = self.file_tx(fid, d) {
                if let TxData::File { file, .. } = &mut t.data {
                    if !file.is_done() {
                        file.close_tracked(false);
                    }
                }
                t.request_done = true;
                t.response_done = true;
                if t.ver == 2 {
                    t.status = Some(0);
                }
            }
        }
    }

    fn smb1_response(&mut self, h: &Smb1Hdr, b: &Smb1Block<'_>) {
        let cmd = u16::from(b.cmd);
        let st = h.status;
        let find = |t: &SmbTx| {
            t.ver == 1
                && t.cmd == cmd
                && !t.response_done
                && !matches!(t.data, TxData::File { .. })
                && t.msg_id == u64::from(h.mid)
        };
        match b.cmd {
            0x72 => {
                // Suricata 7 reads every non-empty reply with the NT LM 0.12 layout (34 bytes
                // of words, then the byte count and, when it is >= 16, 16 bytes taken as the
                // GUID); a shorter reply (LANMAN's 13 words) fails to parse and leaves the
                // negotiate tx open. An empty reply (wct 0) selects dialect 0.
                let body = b.r.get(32..).unwrap_or_default();
                let (idx, sg) = if body.first() == Some(&0) {
                    if body.len() < 3 {
                        return;
                    }
                    (Some(0usize), Vec::new())
                } else {
                    let bcc = u16le(body, 35);
                    let Some(bcc) = bcc else { return };
                    let sg = if bcc >= 16 {
                        match body.get(37..53) {
                            Some(g) => g.to_vec(),
                            None => return,
                        }
                    } else {
                        Vec::new()
                    };
                    (u16le(body, 1).map(usize::from), sg)
                };
                let pos = self.txs.iter().position(|t| {
                    t.ver == 1 && matches!(t.data, TxData::Negotiate { .. }) && !t.response_done
                });
                if let Some(t) = pos.and_then(|i| self.txs.get_mut(i)) {
                    if let TxData::Negotiate {
                        dialects,
                        server_guid,
                        ..
                    } = &mut t.data
                    {
                        if let Some(d) = idx.and_then(|i| dialects.get(i)) {
                            self.dialect1 = Some(d.as_bytes().to_vec());
                        }
                        *server_guid = sg;
                    }
                    t.status = Some(st);
                    t.dos = h.dos;
                    t.response_done = true;
                }
            }
            0x2e => {
                let key = (u64::from(h.uid), u64::from(h.mid) | 1 << 63);
                if let Some((fid, off)) = self.reads.remove(&key) {
                    if st == 0 {
                        let len = usize::from(u16le(b.words, 10).unwrap_or(0));
                        let doff = usize::from(u16le(b.words, 12).unwrap_or(0));
                        let end = doff.saturating_add(len).min(b.r.len());
                        let data = b.r.get(doff..end).unwrap_or_default().to_vec();
                        let hdr = Self::smb1_hdr2(h, b.cmd);
                        self.file_data(&hdr, &fid, Dir::ToClient, cmd, off, &data, 1);
                    }
                }
            }
            0x25 => {
                // The fid its request named (Suricata's `ssn2vec_map`): DCERPC only on a
                // service pipe.
                let fid = self
                    .trans_fids
                    .remove(&(u64::from(h.uid), u32::from(h.tid), u64::from(h.mid)))
                    .unwrap_or_default();
                let cnt = usize::from(u16le(b.words, 12).unwrap_or(0));
                let off = usize::from(u16le(b.words, 14).unwrap_or(0));
                let data =
                    b.r.get(off..off.saturating_add(cnt).min(b.r.len()))
                        .unwrap_or_default()
                        .to_vec();
                if self.dcerpc_service(&fid) {
                    self.dcerpc_response(st, &data);
                }
            }
            0x2f => {}
            _ => {
                let created = if b.cmd == 0xa2 && st == 0 {
                    let name = self
                        .create_names
                        .remove(&(u64::from(h.uid), u64::from(h.mid)));
                    let fid = b.words.get(5..7).map(<[u8]>::to_vec);
                    if let (Some(f), Some(n)) = (&fid, name) {
                        bounded_insert(&mut self.guid_names, f.clone(), n);
                    }

                    let times =
                        [11, 19, 27, 35].map(|o| filetime_unix(u64le(b.words, o).unwrap_or(0)));
                    // Suricata logs the allocation size as `size`.
                    Some((
                        fid.unwrap_or_default(),
                        times,
                        u64le(b.words, 47).unwrap_or(0),
                    ))
                } else {
                    None
                };
                let svc = if b.cmd == 0x75 {
                    let e = b
                        .bytes
                        .iter()
                        .position(|&x| x == 0)
                        .unwrap_or(b.bytes.len());
                    Some(b.bytes[..e].to_vec())
                } else {
                    None
                };
                let mut tree_entry = None;
                if let Some(t) = self.txs.iter_mut().find(|t| find(t)) {
                    t.status = Some(st);
                    t.dos = h.dos;
                    t.response_done = true;
                    if b.cmd == 0x73 {
                        t.session_id = u64::from(h.uid);
                        if b.words.len() == 8 || b.words.len() == 6 {
                            let blob_len = if b.words.len() == 8 {
                                usize::from(u16le(b.words, 6).unwrap_or(0))
                            } else {
                                0
                            };
                            t.hosts[1] = smb1_strings(b, blob_len, h.unicode);
                        }
                    }
                    if let (
                        TxData::Create {
                            times, size, guid, ..
                        },
                        Some((f, ts, eof)),
                    ) = (&mut t.data, created)
                    {
                        *times = ts;
                        *size = eof;
                        *guid = f;
                    }
                    if let (TxData::TreeConnect { share, is_pipe, .. }, Some(sv)) =
                        (&mut t.data, &svc)
                    {
                        t.tree_id = u32::from(h.tid);
                        if st == 0 {
                            *is_pipe = sv.as_slice() == b"IPC";
                            tree_entry = Some((share.clone(), *is_pipe));
                        }
                        if let Some(s) = &mut t.service {
                            s.1 = Some(sv.clone());
                        }
                    }
                }
                if let Some(v) = tree_entry {
                    bounded_insert(&mut self.trees, (u64::from(h.uid), u32::from(h.tid)), v);
                }
            }
        }
    }
}

/// The native OS and LAN manager strings after a SESSION_SETUP_ANDX security blob.
fn smb1_strings(b: &Smb1Block<'_>, blob_len: usize, unicode: bool) -> Option<(Vec<u8>, Vec<u8>)> {
    let d = b.bytes.get(blob_len..)?;
    smb1_strings_in(d, b.bytes_at + blob_len, unicode)
}

/// The two strings at `d` (record offset `at`, UTF-16 aligned to an even offset).
fn smb1_strings_in(d: &[u8], at: usize, unicode: bool) -> Option<(Vec<u8>, Vec<u8>)> {
    let unicode = unicode && d.len() > 1;
    let mut d = if unicode && at % 2 == 1 { &d[1..] } else { d };
    let mut take = || -> Vec<u8> {
        if unicode {
            let end = d
                .chunks_exact(2)
                .position(|c| c == [0, 0])
                .map_or(d.len() & !1, |i| 2 * i);
            let v = low_bytes(&d[..end]);
            d = d.get(end + 2..).unwrap_or_default();
            v
        } else {
            let end = d.iter().position(|&x| x == 0).unwrap_or(d.len());
            let v = d[..end].to_vec();
            d = d.get(end + 1..).unwrap_or_default();
            v
        }
    };
    let os = take();
    let lm = take();
    Some((os, lm))
}

/// The parts of an SMB1 TRANS2 request Suricata reads.
struct Trans2Req<'a> {
    subcmd: u16,
    params: &'a [u8],
    data: &'a [u8],
}

/// Parses a TRANS2 request as Suricata 7 does: the parameters start 3 bytes into the byte
/// block, the data follows them after `data_offset - param_offset - param_count` bytes.
fn trans2_request<'a>(b: &Smb1Block<'a>) -> Option<Trans2Req<'a>> {
    let pcnt = usize::from(u16le(b.words, 18)?);
    let poff = usize::from(u16le(b.words, 20)?);
    let dcnt = usize::from(u16le(b.words, 22)?);
    let doff = usize::from(u16le(b.words, 24)?);
    let subcmd = u16le(b.words, 28)?;
    if poff + pcnt > usize::from(u16::MAX) {
        return None;
    }
    let params = b.bytes.get(3..3 + pcnt)?;
    let pad = doff.saturating_sub(poff + pcnt);
    let start = 3 + pcnt + pad;
    let data = b.bytes.get(start..start.checked_add(dcnt)?)?;
    Some(Trans2Req {
        subcmd,
        params,
        data,
    })
}

/// The delete flag of a FILE_DISPOSITION_INFO block.
fn trans2_disposition(d: &[u8]) -> Option<bool> {
    d.first().map(|&x| x & 1 == 1)
}

/// The target name of a FILE_RENAME_INFO block, NULs removed (as Suricata logs it).
fn trans2_rename_target(d: &[u8]) -> Option<Vec<u8>> {
    let len = usize::try_from(u32le(d, 8)?).ok()?;
    let name = d.get(12..12usize.checked_add(len)?)?;
    Some(name.iter().copied().filter(|&c| c != 0).collect())
}

/// A NUL-terminated UTF-16 string reduced to its low bytes, as Suricata's
/// `smb_get_unicode_string` (None without a terminator).
fn smb_unicode_string(d: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut c = d;
    loop {
        match c {
            [0] | [0, 0, ..] => return Some(out),
            [x, _, rest @ ..] => {
                out.push(*x);
                c = rest;
            }
            _ => return None,
        }
    }
}

/// One block of an SMB1 AndX chain.
struct Smb1Block<'a> {
    r: &'a [u8],
    cmd: u8,
    words: &'a [u8],
    bytes: &'a [u8],
    bytes_at: usize,
}

fn is_andx(cmd: u8) -> bool {
    matches!(cmd, 0x24 | 0x2d | 0x2e | 0x2f | 0x73 | 0x74 | 0x75 | 0xa2)
}

/// The SMB1 header fields shrike uses.
#[derive(Clone, Copy, Debug)]
pub struct Smb1Hdr {
    /// Command.
    pub command: u8,
    /// NT status (or the DOS error code).
    pub status: u32,
    /// `Some(class)` when the status is a DOS error.
    pub dos: Option<u8>,
    /// A response.
    pub response: bool,
    /// Strings are UTF-16.
    pub unicode: bool,
    /// Tree id.
    pub tid: u16,
    /// User id.
    pub uid: u16,
    /// Multiplex id.
    pub mid: u16,
}

impl Smb1Hdr {
    /// Parse the 32-byte header.
    pub fn parse(r: &[u8]) -> Option<Smb1Hdr> {
        // The 32-byte header alone is a record (Suricata's `parse_smb_record`); the word
        // count and what follows may be missing.
        if r.len() < 32 || &r[..4] != b"\xffSMB" {
            return None;
        }
        let flags2 = u16le(r, 10)?;
        let nt = flags2 & 0x4000 != 0;
        let (status, dos) = if nt {
            (u32le(r, 5)?, None)
        } else {
            // DOS error codes, success included (`UNKNOWN_00_0000` as Suricata).
            (u32::from(u16le(r, 7)?), Some(r[5]))
        };
        Some(Smb1Hdr {
            command: r[4],
            status,
            dos,
            response: r[9] & 0x80 != 0,
            unicode: flags2 & 0x8000 != 0,
            tid: u16le(r, 24)?,
            uid: u16le(r, 28)?,
            mid: u16le(r, 30)?,
        })
    }
}

/// SMB1 command names.
pub fn smb1_command_string(c: u8) -> String {
    // Exactly the commands Suricata 7.0.10 names (`smb1_command_string`); others are numbers.
    let n = match c {
        0x00 => "CREATE_DIRECTORY",
        0x01 => "DELETE_DIRECTORY",
        0x02 => "OPEN",
        0x03 => "CREATE",
        0x04 => "CLOSE",
        0x05 => "FLUSH",
        0x06 => "DELETE",
        0x07 => "RENAME",
        0x08 => "QUERY_INFORMATION",
        0x09 => "SET_INFORMATION",
        0x0a => "READ",
        0x0b => "WRITE",
        0x0c => "LOCK_BYTE_RANGE",
        0x0d => "UNLOCK_BYTE_RANGE",
        0x0e => "CREATE_TEMPORARY",
        0x0f => "CREATE_NEW",
        0x10 => "CHECK_DIRECTORY",
        0x11 => "PROCESS_EXIT",
        0x12 => "SEEK",
        0x13 => "LOCK_AND_READ",
        0x14 => "WRITE_AND_UNLOCK",
        0x24 => "LOCKING_ANDX",
        0x25 => "TRANS",
        0x2b => "ECHO",
        0x2c => "WRITE_AND_CLOSE",
        0x2d => "OPEN_ANDX",
        0x2e => "READ_ANDX",
        0x2f => "WRITE_ANDX",
        0x32 => "TRANS2",
        0x33 => "TRANS2_SECONDARY",
        0x34 => "FIND_CLOSE2",
        0x71 => "TREE_DISCONNECT",
        0x72 => "NEGOTIATE_PROTOCOL",
        0x73 => "SESSION_SETUP_ANDX",
        0x74 => "LOGOFF_ANDX",
        0x75 => "TREE_CONNECT_ANDX",
        0x80 => "QUERY_INFO_DISK",
        0xa0 => "NT_TRANS",
        0xa1 => "NT_TRANS_SECONDARY",
        0xa2 => "NT_CREATE_ANDX",
        0xa4 => "NT_CANCEL",
        _ => return c.to_string(),
    };
    format!("SMB1_COMMAND_{n}")
}

/// SMB1 DOS error names (the common ones).
fn dos_error_string(class: u8, code: u32) -> String {
    let n = match (class, code) {
        (1, 1) => "ERRbadfunc",
        (1, 2) => "ERRbadfile",
        (1, 3) => "ERRbadpath",
        (1, 5) => "ERRnoaccess",
        (1, 6) => "ERRbadfid",
        (2, 1) => "SRV_ERROR",
        (2, 2) => "SRV_BADPW",
        (2, 5) => "SRV_BADTYPE",
        (2, 6) => "SRV_ACCESS",
        (2, 7) => "SRV_INVALID_TID",
        (2, 91) => "SRV_BADUID",
        _ => return format!("UNKNOWN_{class:02x}_{code:04x}"),
    };
    n.to_string()
}

const FSCTL_PIPE_TRANSCEIVE: u32 = 0x0011_c017;

/// `smb.version` (Suricata 8): 1 or 2, the transaction's SMB header version.
#[derive(Debug)]
struct VersionMatch(u8);

fn setup_version(v: Option<&str>) -> Result<Box<dyn TxMatch>, String> {
    match v.map(str::trim) {
        Some("1") => Ok(Box::new(VersionMatch(1))),
        Some("2") => Ok(Box::new(VersionMatch(2))),
        other => Err(format!("invalid version {other:?}: 1 or 2")),
    }
}

impl TxMatch for VersionMatch {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        let s = parser.as_any().downcast_ref::<SmbState>()?;
        Some(s.tx(tx)?.ver == self.0)
    }
}

/// The security buffer of a SESSION_SETUP (offset/length at `at` in the body, offset from
/// the header).
fn sec_blob<'a>(m: &'a [u8], b: &[u8], at: usize) -> Option<&'a [u8]> {
    let o = usize::from(u16le(b, at)?);
    let l = usize::from(u16le(b, at + 2)?);
    m.get(o..o + l)
}

/// The next `00 xx xx xx fe|ff 'SMB'` in `d`.
fn find_sync(d: &[u8]) -> Option<usize> {
    (0..d.len().saturating_sub(7))
        .find(|&i| d[i] == 0 && matches!(d[i + 4], 0xfe | 0xff) && &d[i + 5..i + 8] == b"SMB")
}

/// The SMB2 header fields shrike uses.
#[derive(Clone, Copy, Debug)]
pub struct Smb2Hdr {
    /// NT status.
    pub status: u32,
    /// Command.
    pub command: u16,
    /// Flags.
    pub flags: u32,
    /// Offset of the next compounded command.
    pub next_command: u32,
    /// Message id.
    pub message_id: u64,
    /// Tree id (0 in async messages).
    pub tree_id: u32,
    /// Session id.
    pub session_id: u64,
}

impl Smb2Hdr {
    /// Parse the 64-byte header.
    pub fn parse(d: &[u8]) -> Option<Smb2Hdr> {
        if d.len() < 64 || &d[..4] != b"\xfeSMB" {
            return None;
        }
        let flags = u32le(d, 16)?;
        Some(Smb2Hdr {
            status: u32le(d, 8)?,
            command: u16le(d, 12)?,
            flags,
            next_command: u32le(d, 20)?,
            message_id: u64le(d, 24)?,
            tree_id: if flags & 2 != 0 { 0 } else { u32le(d, 36)? },
            session_id: u64le(d, 40)?,
        })
    }
    fn is_response(&self) -> bool {
        self.flags & 1 != 0
    }
    fn is_async(&self) -> bool {
        self.flags & 2 != 0
    }
}

impl crate::dcerpc::DceView for SmbState {
    /// `dcerpc.iface` on transaction `tx`: a DCERPC REQUEST over a pipe whose bound
    /// interfaces include an accepted one of that UUID (and version).
    fn iface_hit(&self, tx: u64, m: &crate::dcerpc::IfaceArg) -> Option<bool> {
        let t = self.tx(tx)?;
        let TxData::Dcerpc { req_cmd, .. } = &t.data else {
            return Some(false);
        };
        if *req_cmd != Some(dcerpc::REQUEST) {
            return Some(false);
        }
        let ifs = self.ifaces.as_deref().unwrap_or_default();
        Some(ifs.iter().any(|i| {
            i.acked
                && i.ack_result == 0
                && i.uuid == m.uuid
                && m.version
                    .as_ref()
                    .is_none_or(|v| v.matches(u64::from(i.ver)))
        }))
    }

    /// The opnum of transaction `tx` when it is a DCERPC REQUEST over a pipe.
    fn opnum(&self, tx: u64) -> Option<u16> {
        match &self.tx(tx)?.data {
            TxData::Dcerpc {
                req_cmd: Some(dcerpc::REQUEST),
                opnum,
                ..
            } => Some(*opnum),
            _ => None,
        }
    }
}

/// Whether the start `d` of an incomplete NBSS session record is one Suricata parses (and
/// frames) before it is all in: a write request to the server (SMB1 `WRITE_ANDX`, SMB2
/// `WRITE`), a read response to the client (SMB1 `READ_ANDX`, SMB2 `READ`).
fn partial_record(dir: Dir, d: &[u8]) -> bool {
    match (d.first(), dir) {
        (Some(0xff), Dir::ToServer) => d.len() > 32 && d.get(4) == Some(&0x2f),
        (Some(0xff), Dir::ToClient) => d.len() > 32 && d.get(4) == Some(&0x2e),
        (Some(0xfe), _) => {
            let Some(h) = Smb2Hdr::parse(d) else {
                return false;
            };
            match dir {
                Dir::ToServer => h.command == 9 && !h.is_response(),
                Dir::ToClient => h.command == 8 && h.is_response(),
            }
        }
        _ => false,
    }
}

/// The frames of an NBSS record at stream offset `at` whose length field says `len` and of
/// the SMB messages in its data `d` (as much of it as is in; `session`: a session message),
/// as Suricata's `add_nbss_*_frames` and `add_smb{1,2,3}_*_frames` make them.
fn smb_frames(fc: &mut crate::frames::FrameCtx<'_>, at: u64, len: usize, d: &[u8], session: bool) {
    let l = len as i64;
    fc.new_frame(at, l + 4, 0);
    fc.new_frame(at, 4, 1);
    fc.new_frame(at + 4, l, 2);
    if !session {
        return;
    }
    let base = at + 4;
    match d.first() {
        Some(0xff) if d.len() >= 4 && is_smb_magic(d) => {
            fc.new_frame(base, l, 3);
            fc.new_frame(base, 32, 4);
            if d.len() > 32 {
                fc.new_frame(base + 32, l - 32, 5);
            }
        }
        Some(0xfe) if d.len() >= 4 && is_smb_magic(d) => {
            let complete = d.len() >= len;
            let mut off = 0usize;
            while off < d.len() {
                let r = &d[off..];
                let Some(h) = Smb2Hdr::parse(r) else {
                    break;
                };
                let rl = if !complete {
                    // A record still coming: its message is the record (Suricata's partial
                    // path frames it with the NBSS length).
                    l
                } else if h.next_command > 0 {
                    i64::from(h.next_command).min(r.len() as i64)
                } else {
                    r.len() as i64
                };
                let o = base + off as u64;
                fc.new_frame(o, rl, 6);
                fc.new_frame(o, 64, 7);
                if r.len() > 64 {
                    fc.new_frame(o + 64, rl - 64, 8);
                }
                if !complete || h.next_command == 0 || (h.next_command as usize) < 64 {
                    break;
                }
                off += h.next_command as usize;
            }
        }
        Some(0xfd) if d.len() >= 52 => {
            let mut off = 0usize;
            while off + 52 <= d.len() {
                let r = &d[off..];
                let size = u32le(r, 36).unwrap_or(0) as usize;
                let rl = (52 + size).min(r.len());
                let o = base + off as u64;
                fc.new_frame(o, rl as i64, 9);
                fc.new_frame(o, 52, 10);
                if r.len() > 52 {
                    fc.new_frame(o + 52, rl as i64 - 52, 11);
                }
                if rl == 0 {
                    break;
                }
                off += rl;
            }
        }
        _ => {}
    }
}

impl AppParser for SmbState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        self.parse_dir(dir, data, None)
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        self.parse_dir(dir, data, Some(fc))
    }

    fn gap(&mut self, dir: Dir, len: u64) {
        let f = &mut self.framers[dir_idx(dir)];
        // A record streaming to its file: the rest of it is skipped (the file misses data
        // and ends truncated).
        if let Some(sr) = f.stream.take() {
            f.skip = f.skip.saturating_add(sr.left);
        }
        if f.skip >= len {
            f.skip -= len;
            return;
        }
        f.skip = 0;
        f.buf.clear();
        f.resync = true;
    }

    fn truncate(&mut self, dir: Dir) {
        if !self.trunc[dir_idx(dir)] {
            self.flush_partial(dir);
        }
        // Suricata's `trunc_ts` / `trunc_tc`: every transaction is done in that direction;
        // then `FileTruncateAllOpenFiles` on the transactions with files going that way.
        self.trunc[dir_idx(dir)] = true;
        for t in self.txs.iter_mut() {
            match dir {
                Dir::ToServer => t.request_done = true,
                Dir::ToClient => t.response_done = true,
            }
            if let TxData::File { file, dir: fd, .. } = &mut t.data {
                if *fd == dir && !file.is_done() {
                    file.close_tracked(true);
                }
            }
        }
    }

    fn close(&mut self) {
        for t in self.txs.iter_mut() {
            if let TxData::File { file, .. } = &mut t.data {
                if !file.is_done() {
                    file.close_tracked(true);
                }
            }
        }
    }

    fn tx_count(&self) -> u64 {
        self.next_id
    }

    fn complete_in(&self, dir: Dir) -> u64 {
        self.txs
            .iter()
            .filter(|t| match dir {
                Dir::ToServer => t.request_done,
                Dir::ToClient => t.response_done,
            })
            .count() as u64
    }

    fn live_txs(&self, _dir: Dir, out: &mut Vec<u64>) {
        out.extend(self.txs.iter().map(|t| t.id));
    }

    fn buffer(&self, tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        match (&t.data, buf) {
            (TxData::TreeConnect { share, is_pipe, .. }, BUF_SHARE) if !is_pipe => f(share),
            (TxData::TreeConnect { share, is_pipe, .. }, BUF_PIPE) if *is_pipe => f(share),
            (
                TxData::SessionSetup {
                    ntlmssp: Some(n), ..
                },
                BUF_USER,
            ) => f(&n.user),
            (
                TxData::SessionSetup {
                    ntlmssp: Some(n), ..
                },
                BUF_DOMAIN,
            ) => f(&n.domain),
            (TxData::File { head, dir: fd, .. }, BUF_FILE_DATA)
                if !head.is_empty() && *fd == dir =>
            {
                f(head)
            }
            // A file's name is inspected in its own direction only, as its data
            // (Suricata's file list is per direction).
            (TxData::File { name, dir: fd, .. }, BUF_FILE_NAME)
                if !name.is_empty() && *fd == dir =>
            {
                f(name)
            }
            (TxData::Dcerpc { stub_req, .. }, BUF_STUB)
                if dir == Dir::ToServer && !stub_req.is_empty() =>
            {
                f(stub_req)
            }
            (TxData::Dcerpc { stub_res, .. }, BUF_STUB)
                if dir == Dir::ToClient && !stub_res.is_empty() =>
            {
                f(stub_res)
            }
            _ => false,
        }
    }

    fn buffer_ready(&self, tx: u64, buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        match (&t.data, buf) {
            (TxData::File { file, head, .. }, BUF_FILE_DATA) => {
                let done = closed || file.is_done() || head.len() >= MAX_FILE_INSPECT;
                done.then_some(true)
            }
            _ => Some(closed || t.response_done),
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.tx(tx)
            .is_some_and(|t| ev < 32 && t.events & (1 << ev) != 0)
    }

    fn drain_events(&mut self, from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        // Suricata's anomaly logger reports a transaction's events until the transaction is
        // logged (`malformed_data`, `file_overlap`, ... as its `smb` events).
        let names = PROTOCOL.events;
        for t in self.txs.iter_mut().filter(|t| t.id >= from && !t.logged) {
            let new = t.events & !t.events_reported;
            if new == 0 {
                continue;
            }
            t.events_reported = t.events;
            for (i, name) in names.iter().enumerate() {
                if new & (1 << i) != 0 {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
                    });
                }
            }
        }
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let to_server = c.rec.info.to_server;
        // A file's `fileinfo` is written once it ended, on a packet going its way (Suricata's
        // file logger runs on the files of the packet's direction: a file closed by a
        // response is logged with the next request), or at the end of the flow; a file cut
        // at the stream depth at once.
        if c.write {
            for t in self.txs.iter() {
                if let TxData::File { file, dir, .. } = &t.data {
                    if file.is_done() && !file.logged() && (c.closed || c.pkt_dir == Some(*dir)) {
                        self.write_fileinfo(c, t);
                    }
                }
            }
        }
        let ready: Vec<u64> = self
            .txs
            .iter()
            .filter(|t| {
                t.id >= *c.next
                    && !t.logged
                    && (c.closed || self.failed || (t.request_done && t.response_done))
            })
            .map(|t| t.id)
            .collect();
        for id in ready {
            if let Some(t) = self.tx(id) {
                if c.write && c.out.wants_type("smb") {
                    if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                        // `LOG_DIR_FLOW`: the client is `src` whatever the packet.
                        write_eve_header(&mut rec, &c.rec.header("smb", true));
                        self.write_smb(t, &mut rec);
                        rec.close();
                        let _ = rec.commit();
                    }
                }
                c.logged += 1;
            }
            if let Some(t) = self.txs.iter_mut().find(|t| t.id == id) {
                t.logged = true;
            }
        }
        // A logged transaction is kept until a packet went each way after it, so that
        // detection saw it in both directions (one-sided data completes on the other
        // side's acknowledgement).
        let bit = if to_server { 1 } else { 2 };
        for t in self.txs.iter_mut().filter(|t| t.logged) {
            t.seen |= bit;
        }
        let mut next = *c.next;
        while next < self.next_id && self.tx(next).is_none_or(|t| t.logged) {
            next += 1;
        }
        *c.next = next;
        self.txs
            .retain(|t| !(t.logged && t.id < next && t.seen == 3));
    }

    fn files(&self, tx: u64, dir: Dir, f: &mut dyn FnMut(&TrackedFile)) {
        if let Some(TxData::File { file, dir: fd, .. }) = self.tx(tx).map(|t| &t.data) {
            if *fd == dir {
                f(file);
            }
        }
    }

    fn files_mut(&mut self, tx: u64, dir: Dir, f: &mut dyn FnMut(&mut TrackedFile)) {
        let t = self.txs.iter_mut().find(|t| t.id == tx);
        if let Some(TxData::File { file, dir: fd, .. }) = t.map(|t| &mut t.data) {
            if *fd == dir {
                f(file);
            }
        }
    }

    fn dce(&self) -> Option<&dyn crate::dcerpc::DceView> {
        Some(self)
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        match self.tx(tx) {
            Some(t) => {
                self.write_smb(t, w);
                true
            }
            None => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[cfg(test)]
mod tests;
