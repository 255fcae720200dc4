//! NFS over ONC RPC, as Suricata 7 (`rust/src/nfs/`): TCP (record marking) and UDP on port
//! 2049, recognised by Suricata's probes. Calls are matched to replies by xid. Each call
//! opens a transaction, except file transfers: READ replies and WRITE calls on one file
//! handle make one file transaction per direction (its data in a [`TrackedFile`], COMMIT
//! closes a written file). File names come from the calls (LOOKUP, CREATE, REMOVE, RENAME,
//! MKDIR, RMDIR) and from a handle-to-name map filled by LOOKUP, CREATE and READDIRPLUS
//! replies. NFSv2, v3 and v4 (COMPOUND: the ops that name and move files) are parsed; a
//! transaction is logged (`nfs`, always `type: response`) once both its call and reply are
//! in, NFSv2/v3 GETATTR not at all (Suricata filters them).
//!
//! Where Suricata 8 corrected 7.0.10's logging, shrike follows 8: NFSv2 procedures are named
//! by the NFSv2 table, and the `read`/`write`/`rename` objects are written for NFSv2 and v4
//! too.

use std::any::Any;
use std::collections::HashMap;

use shrike_output::eve::header::write_eve_header;
use shrike_output::{EventKind, JsonWriter};

use crate::anomaly::AppAnomaly;
use crate::files::{FileConfig, TrackedFile};
use crate::registry::{AppParser, BufferDesc, Detect, LogCtx, ParserConfig, Probe, Protocol};
use crate::Dir;

pub mod detect;
mod nfs4;
pub mod rpc;
#[cfg(test)]
mod tests;
pub mod tracker;

use rpc::{Call, Err as RErr, Reply, Xdr};
use tracker::Tracker;

/// NFS in the protocol registry.
pub static PROTOCOL: Protocol = Protocol {
    name: "nfs",
    aliases: &[],
    ip_protos: &[6, 17],
    ports: &[2049],
    tcp: Detect::Port(probe_tcp),
    udp: Detect::Port(probe_udp),
    new_parser,
    buffers: &[
        BufferDesc {
            name: "file.data",
            dir: None,
        },
        BufferDesc {
            name: "file.name",
            dir: None,
        },
    ],
    events: EVENTS,
    keywords: detect::KEYWORDS,
    generic_stats: true,
};

/// Suricata's event names (`app-layer-event:nfs.<name>`).
pub const EVENTS: &[&str] = &[
    "malformed_data",
    "non_existing_version",
    "unsupported_version",
    "too_many_transactions",
];
const EV_MALFORMED: u8 = 0;
const EV_NON_EXISTING_VERSION: u8 = 1;
const EV_TOO_MANY_TXS: u8 = 3;

/// Frame types (Suricata 7's `NFSFrameType`, [`crate::frames::names`]).
const FRAME_RPC_PDU: u8 = 0;
const FRAME_RPC_HDR: u8 = 1;
const FRAME_RPC_DATA: u8 = 2;
const FRAME_RPC_CREDS: u8 = 3;
const FRAME_NFS_PDU: u8 = 4;
const FRAME_NFS_STATUS: u8 = 5;
const FRAME_NFS4_PDU: u8 = 6;
const FRAME_NFS4_HDR: u8 = 7;
const FRAME_NFS4_OPS: u8 = 8;
const FRAME_NFS4_STATUS: u8 = 9;

const BUF_FILE_DATA: u16 = 0;
const BUF_FILE_NAME: u16 = 1;

/// `app-layer.protocols.nfs` settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct NfsConfig {
    /// `max-tx`: open transactions before the oldest is forced done
    /// (`too_many_transactions`); Suricata's default 1024.
    pub max_tx: usize,
}

impl Default for NfsConfig {
    fn default() -> Self {
        NfsConfig { max_tx: 1024 }
    }
}

/// RFC 1813 procedure numbers (NFSv3; Suricata 7 uses them for NFSv2 calls too).
pub mod proc3 {
    /// NULL.
    pub const NULL: u32 = 0;
    /// GETATTR.
    pub const GETATTR: u32 = 1;
    /// LOOKUP.
    pub const LOOKUP: u32 = 3;
    /// ACCESS.
    pub const ACCESS: u32 = 4;
    /// READ.
    pub const READ: u32 = 6;
    /// WRITE.
    pub const WRITE: u32 = 7;
    /// CREATE.
    pub const CREATE: u32 = 8;
    /// MKDIR.
    pub const MKDIR: u32 = 9;
    /// REMOVE.
    pub const REMOVE: u32 = 12;
    /// RMDIR.
    pub const RMDIR: u32 = 13;
    /// RENAME.
    pub const RENAME: u32 = 14;
    /// READDIRPLUS.
    pub const READDIRPLUS: u32 = 17;
    /// COMMIT.
    pub const COMMIT: u32 = 21;
}

/// NFSv2 READ, WRITE and RENAME (RFC 1094).
const PROC2_READ: u32 = 6;
const PROC2_WRITE: u32 = 8;
const PROC2_RENAME: u32 = 11;

/// The NFS program.
pub const NFS_PROGRAM: u32 = 100003;
/// Handle-to-name and xid-to-call entries a flow keeps at most.
pub const MAX_MAP: usize = 4096;
/// Name and handle bytes each of those two maps holds at most (shrike's bound; Suricata's
/// maps have none): past it the oldest entries go first.
pub const MAX_MAP_BYTES: usize = 8 << 20;

/// What a flow's limits evicted so far (Suricata has no such counters: its maps and
/// transaction list are unbounded but for `max-tx`, which raises `too_many_transactions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NfsLimits {
    /// Calls forgotten before their reply ([`MAX_MAP`], [`MAX_MAP_BYTES`]).
    pub requests_evicted: u64,
    /// Handle-to-name entries forgotten.
    pub names_evicted: u64,
    /// Transactions dropped unlogged by the hard bound on held transactions (4 x
    /// `max-tx`, at least 1024; reached only when nothing frees them).
    pub txs_evicted: u64,
}

fn xidmap_bytes(m: &XidMap) -> usize {
    m.file_name.len() + m.file_handle.len()
}
/// Bytes of a record a direction buffers at most while it is incomplete (larger READ and
/// WRITE records stream their data instead); past it the parser gives up on the flow.
pub const MAX_RECORD_BUF: usize = 1 << 20;
/// Bytes of a file `file.data` inspects.
const MAX_FILE_INSPECT: usize = 1 << 16;
/// Most bytes Suricata's probing parsers look at on port 2049 before giving up.
const PROBE_MAX_DEPTH: usize = 32;

fn new_parser(cfg: &ParserConfig, tcp: bool) -> Box<dyn AppParser> {
    Box::new(NfsState::new(cfg.nfs, cfg.files, !tcp))
}

/// Suricata's `nfs_probe` on a TCP direction: `1`, `0` (need more) or `-1`.
fn nfs_probe(b: &[u8], dir: Dir) -> i8 {
    match dir {
        Dir::ToClient => match rpc::tcp_reply(b, false) {
            Ok(r) => {
                if (24..=35000).contains(&r.hdr.frag_len)
                    && r.hdr.msgtype == 1
                    && r.reply_state == 0
                    && r.accept_state == 0
                {
                    1
                } else {
                    -1
                }
            }
            Err(RErr::Incomplete) => match rpc::tcp_header(&mut Xdr::new(b)) {
                Ok(h) => {
                    if (24..=35000).contains(&h.frag_len) && h.xid != 0 && h.msgtype == 1 {
                        1
                    } else {
                        -1
                    }
                }
                Err(RErr::Incomplete) => 0,
                Err(RErr::Bad) => -1,
            },
            Err(RErr::Bad) => -1,
        },
        Dir::ToServer => match rpc::tcp_call(b, false) {
            Ok(c) => {
                if c.hdr.frag_len >= 40
                    && c.hdr.msgtype == 0
                    && c.rpcver == 2
                    && (c.progver == 3 || c.progver == 4)
                    && c.program == NFS_PROGRAM
                    && c.procedure <= proc3::COMMIT
                    && c.creds_flavor <= 6
                {
                    1
                } else {
                    -1
                }
            }
            Err(RErr::Incomplete) => 0,
            Err(RErr::Bad) => -1,
        },
    }
}

/// The TCP probe on port 2049 (Suricata's `rs_nfs_probe`, both directions).
pub fn probe_tcp(dir: Dir, b: &[u8]) -> Probe {
    match nfs_probe(b, dir) {
        1 => Probe::Yes,
        0 if b.len() <= PROBE_MAX_DEPTH => Probe::NeedMore,
        _ => Probe::No,
    }
}

/// The UDP probe on port 2049 (Suricata's `nfs_probe_udp`): an NFSv2/v3 call of 48 bytes or
/// more, or an accepted, successful reply of 32 bytes or more.
pub fn probe_udp(dir: Dir, b: &[u8]) -> Probe {
    let yes = match dir {
        Dir::ToClient => rpc::udp_reply(b).is_ok_and(|r| {
            b.len() >= 32 && r.hdr.msgtype == 1 && r.reply_state == 0 && r.accept_state == 0
        }),
        Dir::ToServer => rpc::udp_call(b).is_ok_and(|c| {
            b.len() >= 48
                && c.hdr.msgtype == 0
                && (c.progver == 3 || c.progver == 2)
                && c.program == NFS_PROGRAM
        }),
    };
    if yes {
        Probe::Yes
    } else {
        Probe::No
    }
}

/// CRC-32 (IEEE) of a file handle: EVE `hhash`.
pub fn crc32(b: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &x in b {
        c ^= u32::from(x);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A file transaction's transfer.
#[derive(Debug)]
pub struct FileXfer {
    /// Direction of the data.
    pub dir: Dir,
    /// Procedures after the first (COMMIT after WRITEs).
    pub additional_procs: Vec<u32>,
    /// Chunks seen after the first.
    pub chunk_count: u32,
    /// Xid of the last chunk (or COMMIT).
    pub last_xid: u32,
    /// The file.
    pub tracker: Tracker,
    /// First bytes for `file.data`.
    pub head: Vec<u8>,
    /// Its `fileinfo` record was written.
    logged: bool,
}

/// One transaction.
#[derive(Debug, Default)]
pub struct NfsTx {
    /// Id from 0 (EVE `nfs.id` is this plus 1).
    pub id: u64,
    /// Xid of the call.
    pub xid: u32,
    /// Procedure (NFSv4: the op that names the transaction, or COMPOUND).
    pub procedure: u32,
    /// File name (RENAME: the old name).
    pub file_name: Vec<u8>,
    /// Credentials flavour.
    pub auth_type: u32,
    /// AUTH_UNIX machine name, uid, gid.
    pub machine: Vec<u8>,
    /// uid.
    pub uid: u32,
    /// gid.
    pub gid: u32,
    /// RPC reply state.
    pub rpc_status: u32,
    /// NFS status.
    pub nfs_status: u32,
    /// File transaction: its first chunk was seen.
    pub is_first: bool,
    /// File transaction: its last chunk was seen.
    pub is_last: bool,
    /// Call side complete.
    pub request_done: bool,
    /// Reply side complete.
    pub response_done: bool,
    /// NFS version of the call.
    pub nfs_version: u16,
    /// A file transaction (looked up by handle).
    pub is_file_tx: bool,
    /// The file transaction takes no more chunks.
    pub is_file_closed: bool,
    /// File handle.
    pub file_handle: Vec<u8>,
    /// RENAME: the new name.
    pub rename_to: Option<Vec<u8>>,
    /// File transfer.
    pub file: Option<FileXfer>,
    events: u8,
    /// The anomaly logger saw the transaction (Suricata's logs a transaction's events
    /// once, on the first pass after it was created; later events are not reported).
    anomaly_seen: bool,
    logged: bool,
    seen: u8,
}

/// What a call left for its reply.
#[derive(Debug, Default, Clone)]
struct XidMap {
    progver: u32,
    procedure: u32,
    chunk_offset: u64,
    file_name: Vec<u8>,
    file_handle: Vec<u8>,
    /// NFSv4 COMPOUND under RPCSEC_GSS integrity: the reply is wrapped too.
    gss_integrity: bool,
    seq: u64,
}

/// Per-direction stream state (TCP).
#[derive(Debug, Default)]
struct DirState {
    buf: Vec<u8>,
    chunk_left: u32,
    chunk_xid: u32,
    chunk_fh: Vec<u8>,
    /// The last data was a gap: find a record start by probing.
    gap: bool,
    ssn_gap: bool,
    /// Bytes `buf` must hold before it is parsed again (Suricata's incomplete-result
    /// `needed`: the parser is not called again until the stream has that much).
    need: usize,
}

/// The per-flow NFS state.
#[derive(Debug)]
pub struct NfsState {
    cfg: NfsConfig,
    files: FileConfig,
    is_udp: bool,
    requestmap: HashMap<u32, XidMap>,
    namemap: HashMap<Vec<u8>, Vec<u8>>,
    map_seq: u64,
    /// Bytes held by `requestmap` / `namemap` entries ([`MAX_MAP_BYTES`]).
    request_bytes: usize,
    name_bytes: usize,
    /// What the limits evicted.
    limits: NfsLimits,
    txs: Vec<NfsTx>,
    next_id: u64,
    /// NFS version of the flow (the first call's or reply's).
    pub nfs_version: u16,
    dirs: [DirState; 2],
    failed: bool,
    /// Frames asked for during this call: (start in the parsed input, length, type).
    frames: Option<Vec<(usize, i64, u8)>>,
}

fn di(d: Dir) -> usize {
    match d {
        Dir::ToServer => 0,
        Dir::ToClient => 1,
    }
}

fn fill_of(count: u32) -> u8 {
    if count % 4 != 0 {
        (4 - count % 4) as u8
    } else {
        0
    }
}

/// An NFSv3 handle (length-prefixed).
fn handle3<'a>(x: &mut Xdr<'a>) -> rpc::PResult<&'a [u8]> {
    x.opaque()
}

/// A name followed by its padding.
fn name_padded<'a>(x: &mut Xdr<'a>) -> rpc::PResult<&'a [u8]> {
    let n = x.u32()?;
    let v = x.take(n as usize)?;
    x.pad(n)?;
    Ok(v)
}

/// WRITE arguments (v3): handle, offset, count, stable, data length, data (what is in).
struct Write3<'a> {
    handle: &'a [u8],
    offset: u64,
    count: u32,
    stable: u32,
    file_len: u32,
    data: &'a [u8],
}

fn write3(b: &[u8], complete: bool) -> rpc::PResult<Write3<'_>> {
    let mut x = Xdr::new(b);
    let handle = handle3(&mut x)?;
    let offset = x.u64()?;
    let count = x.u32()?;
    let stable = x.u32_max(2)?;
    let file_len = x.u32_max(count)?;
    let data = x.file_data(file_len, complete)?;
    Ok(Write3 {
        handle,
        offset,
        count,
        stable,
        file_len,
        data,
    })
}

/// READ results (v2/v3).
pub(crate) struct ReadReply<'a> {
    pub status: u32,
    pub attr: &'a [u8],
    pub count: u32,
    pub eof: bool,
    pub data: &'a [u8],
}

fn read3_reply(b: &[u8], complete: bool) -> rpc::PResult<ReadReply<'_>> {
    let mut x = Xdr::new(b);
    let status = x.u32()?;
    let _attr_follows = x.u32_max(1)?;
    let attr = x.take(84)?;
    let count = x.u32()?;
    let eof = x.u32_max(1)? != 0;
    let data_len = x.u32_max(count)?;
    let data = x.file_data(data_len, complete)?;
    Ok(ReadReply {
        status,
        attr,
        count,
        eof,
        data,
    })
}

fn read2_reply(b: &[u8]) -> rpc::PResult<ReadReply<'_>> {
    let mut x = Xdr::new(b);
    let status = x.u32()?;
    let attr = x.take(68)?;
    let n = x.u32()?;
    let data = x.take(n as usize)?;
    // Suricata 7 takes 4 - n % 4 padding bytes (4 when n is a multiple of 4).
    x.take((4 - n % 4) as usize)?;
    Ok(ReadReply {
        status,
        attr,
        count: n,
        eof: false,
        data,
    })
}

impl NfsState {
    /// A new flow's state.
    pub fn new(cfg: NfsConfig, files: FileConfig, is_udp: bool) -> Self {
        NfsState {
            cfg,
            files,
            is_udp,
            requestmap: HashMap::new(),
            namemap: HashMap::new(),
            map_seq: 0,
            request_bytes: 0,
            name_bytes: 0,
            limits: NfsLimits::default(),
            txs: Vec::new(),
            next_id: 0,
            nfs_version: 0,
            dirs: Default::default(),
            failed: false,
            frames: None,
        }
    }

    /// The live transaction `id`.
    pub fn tx(&self, id: u64) -> Option<&NfsTx> {
        // Transactions are kept in id order: a binary search (detection asks for each live
        // one on each packet, and a flood holds thousands), a scan if the order ever breaks.
        match self.txs.binary_search_by_key(&id, |t| t.id) {
            Ok(i) => self.txs.get(i),
            Err(_) => self.txs.iter().find(|t| t.id == id),
        }
    }

    /// What the limits evicted so far.
    pub fn limits(&self) -> NfsLimits {
        self.limits
    }

    /// Bytes held: the record buffers, the call and name maps and the live transactions
    /// (names, handles, machine names, file heads).
    pub fn memuse(&self) -> usize {
        let entry = 64;
        self.dirs
            .iter()
            .map(|d| d.buf.capacity() + d.chunk_fh.capacity())
            .sum::<usize>()
            + self.request_bytes
            + self.name_bytes
            + (self.requestmap.len() + self.namemap.len()) * entry
            + self
                .txs
                .iter()
                .map(|t| {
                    std::mem::size_of::<NfsTx>()
                        + t.file_name.capacity()
                        + t.machine.capacity()
                        + t.file_handle.capacity()
                        + t.rename_to.as_ref().map_or(0, Vec::capacity)
                        + t.file.as_ref().map_or(0, |f| f.head.capacity())
                })
                .sum::<usize>()
    }

    /// Forget the call of `xid` (its reply came, or a file chunk ended).
    fn take_request(&mut self, xid: u32) -> Option<XidMap> {
        let m = self.requestmap.remove(&xid)?;
        self.request_bytes -= xidmap_bytes(&m);
        Some(m)
    }

    /// Live transactions.
    pub fn txs(&self) -> &[NfsTx] {
        &self.txs
    }

    fn set_event(&mut self, ev: u8) {
        // On the newest transaction; none yet: dropped (as Suricata's `set_event`).
        if let Some(t) = self.txs.last_mut() {
            t.events |= 1 << ev;
        }
    }

    fn new_tx(&mut self) -> NfsTx {
        let t = NfsTx {
            id: self.next_id,
            ..Default::default()
        };
        self.next_id += 1;
        if self.txs.len() > self.cfg.max_tx {
            if let Some(old) = self
                .txs
                .iter_mut()
                .find(|o| !o.request_done || !o.response_done)
            {
                old.request_done = true;
                old.response_done = true;
                old.is_file_closed = true;
                old.events |= 1 << EV_TOO_MANY_TXS;
            }
        }
        t
    }

    fn push_tx(&mut self, t: NfsTx) -> &mut NfsTx {
        // A hard bound on memory whatever frees the transactions (they are freed once logged
        // and inspected both ways; a one-way flood may never be): the oldest goes.
        let hard = self.cfg.max_tx.saturating_mul(4).max(1024);
        if self.txs.len() >= hard {
            let n = self.txs.len() + 1 - hard;
            self.txs.drain(..n);
            self.limits.txs_evicted += n as u64;
        }
        self.txs.push(t);
        let n = self.txs.len() - 1;
        &mut self.txs[n]
    }

    fn insert_request(&mut self, xid: u32, mut m: XidMap) {
        self.map_seq += 1;
        m.seq = self.map_seq;
        let _ = self.take_request(xid);
        let size = xidmap_bytes(&m);
        while self.requestmap.len() >= MAX_MAP || self.request_bytes + size > MAX_MAP_BYTES {
            let Some(k) = self
                .requestmap
                .iter()
                .min_by_key(|(_, v)| v.seq)
                .map(|(k, _)| *k)
            else {
                break;
            };
            let _ = self.take_request(k);
            self.limits.requests_evicted += 1;
        }
        self.request_bytes += size;
        self.requestmap.insert(xid, m);
    }

    fn insert_name(&mut self, handle: &[u8], name: &[u8]) {
        if let Some(old) = self.namemap.remove(handle) {
            self.name_bytes -= handle.len() + old.len();
        }
        let size = handle.len() + name.len();
        while self.namemap.len() >= MAX_MAP || self.name_bytes + size > MAX_MAP_BYTES {
            let Some(k) = self.namemap.keys().next().cloned() else {
                break;
            };
            if let Some(v) = self.namemap.remove(&k) {
                self.name_bytes -= k.len() + v.len();
            }
            self.limits.names_evicted += 1;
        }
        self.name_bytes += size;
        self.namemap.insert(handle.to_vec(), name.to_vec());
    }

    fn handle2name(&self, m: &mut XidMap) {
        if let Some(n) = self.namemap.get(&m.file_handle) {
            m.file_name = n.clone();
        }
    }

    fn tx_by_xid(&mut self, xid: u32) -> Option<&mut NfsTx> {
        self.txs.iter_mut().find(|t| !t.is_file_tx && t.xid == xid)
    }

    fn file_tx_by_handle(&mut self, fh: &[u8], dir: Dir) -> Option<&mut NfsTx> {
        self.txs.iter_mut().find(|t| {
            t.is_file_tx
                && !t.is_file_closed
                && t.file.as_ref().is_some_and(|f| f.dir == dir)
                && t.file_handle == fh
        })
    }

    fn new_file_tx(&mut self, fh: &[u8], name: &[u8], dir: Dir) -> &mut NfsTx {
        let mut t = self.new_tx();
        t.file_name = name.to_vec();
        t.file_handle = fh.to_vec();
        t.is_file_tx = true;
        t.file = Some(FileXfer {
            dir,
            additional_procs: Vec::new(),
            chunk_count: 0,
            last_xid: 0,
            tracker: Tracker::default(),
            head: Vec::new(),
            logged: false,
        });
        self.push_tx(t)
    }

    fn mark_response_done(&mut self, xid: u32, rpc_status: u32, nfs_status: u32, fh: &[u8]) {
        if let Some(t) = self.tx_by_xid(xid) {
            t.response_done = true;
            t.rpc_status = rpc_status;
            t.nfs_status = nfs_status;
            if t.file_handle.is_empty() && !fh.is_empty() {
                t.file_handle = fh.to_vec();
            }
        }
    }

    fn set_creds(t: &mut NfsTx, c: &Call<'_>) {
        t.auth_type = c.creds_flavor;
        if let Some(u) = &c.unix {
            t.machine = u.machine.clone();
            t.uid = u.uid;
            t.gid = u.gid;
        }
    }

    // ---- calls ----

    fn request(&mut self, c: &Call<'_>) {
        match c.progver {
            4 => self.request_v4(c),
            3 => self.request_v3(c),
            2 => self.request_v2(c),
            _ => {}
        }
    }

    fn request_v3(&mut self, c: &Call<'_>) {
        let mut m = XidMap {
            progver: c.progver,
            procedure: c.procedure,
            ..Default::default()
        };
        let mut rename_to = None;
        if self.nfs_version == 0 {
            self.nfs_version = c.progver as u16;
        }
        let mut x = Xdr::new(c.data);
        let ok = match c.procedure {
            proc3::LOOKUP => (|| {
                let _h = handle3(&mut x)?;
                m.file_name = x.opaque()?.to_vec();
                Ok::<_, RErr>(())
            })()
            .is_ok(),
            proc3::ACCESS | proc3::GETATTR | proc3::READDIRPLUS => {
                let r = (|| {
                    let h = handle3(&mut x)?;
                    match c.procedure {
                        proc3::ACCESS => {
                            x.u32()?;
                        }
                        proc3::READDIRPLUS => {
                            x.take(24)?;
                        }
                        _ => {}
                    }
                    Ok::<_, RErr>(h)
                })();
                match r {
                    Ok(h) => {
                        m.file_handle = h.to_vec();
                        self.handle2name(&mut m);
                        true
                    }
                    Err(_) => false,
                }
            }
            proc3::READ => {
                let r = (|| {
                    let h = handle3(&mut x)?;
                    let off = x.u64()?;
                    x.u32()?;
                    Ok::<_, RErr>((h, off))
                })();
                match r {
                    Ok((h, off)) => {
                        m.chunk_offset = off;
                        m.file_handle = h.to_vec();
                        self.handle2name(&mut m);
                        true
                    }
                    Err(_) => false,
                }
            }
            proc3::WRITE => match write3(c.data, true) {
                Ok(w) => {
                    self.write_record(c, &w);
                    true
                }
                Err(_) => false,
            },
            proc3::CREATE | proc3::REMOVE | proc3::MKDIR | proc3::RMDIR => {
                let r = (|| {
                    let h = handle3(&mut x)?;
                    let n = x.u32()?;
                    let name = x.take(n as usize)?;
                    if c.procedure != proc3::REMOVE {
                        x.pad(n)?;
                    }
                    if c.procedure == proc3::CREATE {
                        x.u32()?;
                    }
                    Ok::<_, RErr>((h, name))
                })();
                match r {
                    Ok((h, name)) => {
                        m.file_handle = h.to_vec();
                        m.file_name = name.to_vec();
                        true
                    }
                    Err(_) => false,
                }
            }
            proc3::RENAME => {
                let r = (|| {
                    let fh = handle3(&mut x)?;
                    let from = name_padded(&mut x)?;
                    let _th = handle3(&mut x)?;
                    let to = x.opaque()?;
                    Ok::<_, RErr>((fh, from, to))
                })();
                match r {
                    Ok((fh, from, to)) => {
                        m.file_handle = fh.to_vec();
                        m.file_name = from.to_vec();
                        rename_to = Some(to.to_vec());
                        true
                    }
                    Err(_) => false,
                }
            }
            proc3::COMMIT => {
                let r = (|| {
                    let h = handle3(&mut x)?;
                    x.u64()?;
                    x.u32()?;
                    Ok::<_, RErr>(h)
                })();
                match r {
                    Ok(h) => {
                        let xid = c.hdr.xid;
                        if let Some(t) = self.file_tx_by_handle(h, Dir::ToServer) {
                            if let Some(f) = t.file.as_mut() {
                                f.chunk_count += 1;
                                f.additional_procs.push(proc3::COMMIT);
                                f.tracker.close();
                                f.last_xid = xid;
                                t.is_last = true;
                                t.request_done = true;
                                t.is_file_closed = true;
                            }
                        }
                        true
                    }
                    Err(_) => false,
                }
            }
            _ => true,
        };
        if !ok {
            self.set_event(EV_MALFORMED);
        }
        match c.procedure {
            proc3::COMMIT | proc3::WRITE => {}
            proc3::READ => {
                if self
                    .file_tx_by_handle(&m.file_handle.clone(), Dir::ToClient)
                    .is_none()
                {
                    let (fh, name) = (m.file_handle.clone(), m.file_name.clone());
                    let t = self.new_file_tx(&fh, &name, Dir::ToClient);
                    t.procedure = proc3::READ;
                    t.xid = c.hdr.xid;
                    t.is_first = true;
                    t.nfs_version = c.progver as u16;
                    Self::set_creds(t, c);
                }
            }
            _ => {
                let mut t = self.new_tx();
                t.xid = c.hdr.xid;
                t.procedure = c.procedure;
                t.request_done = true;
                t.file_name = m.file_name.clone();
                t.nfs_version = c.progver as u16;
                t.file_handle = m.file_handle.clone();
                if c.procedure == proc3::RENAME {
                    t.rename_to = Some(rename_to.unwrap_or_default());
                }
                Self::set_creds(&mut t, c);
                self.push_tx(t);
            }
        }
        self.insert_request(c.hdr.xid, m);
    }

    fn request_v2(&mut self, c: &Call<'_>) {
        // Suricata 7 compares NFSv2 procedures with the NFSv3 numbers.
        let mut m = XidMap {
            progver: c.progver,
            procedure: c.procedure,
            ..Default::default()
        };
        let mut x = Xdr::new(c.data);
        match c.procedure {
            proc3::LOOKUP => match (|| {
                let h = x.take(32)?;
                x.opaque()?;
                Ok::<_, RErr>(h)
            })() {
                Ok(h) => {
                    m.file_handle = h.to_vec();
                    self.handle2name(&mut m);
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            proc3::READ => match (|| {
                let h = x.take(32)?;
                let off = x.u32()?;
                x.u32()?;
                Ok::<_, RErr>((h, off))
            })() {
                Ok((h, off)) => {
                    m.chunk_offset = u64::from(off);
                    m.file_handle = h.to_vec();
                    self.handle2name(&mut m);
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            _ => {}
        }
        if !matches!(c.procedure, proc3::COMMIT | proc3::WRITE | proc3::READ) {
            let mut t = self.new_tx();
            t.xid = c.hdr.xid;
            t.procedure = c.procedure;
            t.request_done = true;
            t.file_name = m.file_name.clone();
            t.file_handle = m.file_handle.clone();
            t.nfs_version = c.progver as u16;
            if c.procedure == proc3::RENAME {
                t.rename_to = Some(Vec::new());
            }
            Self::set_creds(&mut t, c);
            self.push_tx(t);
        }
        self.insert_request(c.hdr.xid, m);
    }

    /// A WRITE call (whole, or its first part over TCP).
    fn write_record(&mut self, c: &Call<'_>, w: &Write3<'_>) {
        if w.count == 0 || w.count > 16_777_216 {
            return;
        }
        let fill = fill_of(w.count);
        let last = w.stable == 2;
        let fh = w.handle.to_vec();
        let name = self.namemap.get(w.handle).cloned().unwrap_or_default();
        let xid = c.hdr.xid;
        let cfg = self.files;
        let found = match self.file_tx_by_handle(&fh, Dir::ToServer) {
            Some(t) => {
                if let Some(f) = t.file.as_mut() {
                    f.tracker
                        .new_chunk(&cfg, &name, w.data, w.offset, w.file_len, fill, last);
                    keep_head(f, w.data);
                    f.chunk_count += 1;
                    if last {
                        f.last_xid = xid;
                        t.is_last = true;
                        t.response_done = true;
                        t.is_file_closed = true;
                    }
                }
                true
            }
            None => false,
        };
        if !found {
            let t = self.new_file_tx(&fh, &name, Dir::ToServer);
            if let Some(f) = t.file.as_mut() {
                f.tracker
                    .new_chunk(&cfg, &name, w.data, w.offset, w.file_len, fill, last);
                keep_head(f, w.data);
                t.procedure = proc3::WRITE;
                t.xid = xid;
                t.is_first = true;
                t.nfs_version = c.progver as u16;
                if last {
                    f.last_xid = xid;
                    t.is_last = true;
                    t.request_done = true;
                    t.is_file_closed = true;
                }
            }
        }
        if !self.is_udp {
            let d = &mut self.dirs[0];
            d.chunk_xid = xid;
            d.chunk_left = w.count.saturating_sub(w.data.len() as u32);
            d.chunk_fh = fh;
        }
    }

    // ---- replies ----

    fn reply(&mut self, r: &Reply<'_>) {
        let Some(m) = self.take_request(r.hdr.xid) else {
            return;
        };
        if self.nfs_version == 0 {
            self.nfs_version = m.progver as u16;
        }
        match m.progver {
            2 => self.reply_v2(r, &m),
            3 => self.reply_v3(r, &m),
            4 => self.reply_v4(r, &m),
            _ => self.set_event(EV_NON_EXISTING_VERSION),
        }
    }

    fn reply_v3(&mut self, r: &Reply<'_>, m: &XidMap) {
        let mut status = 0;
        let mut resp_handle = Vec::new();
        let mut x = Xdr::new(r.data);
        match m.procedure {
            proc3::LOOKUP => match (|| Ok::<_, RErr>((x.u32()?, handle3(&mut x)?)))() {
                Ok((s, h)) => {
                    status = s;
                    self.insert_name(h, &m.file_name);
                    resp_handle = h.to_vec();
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            proc3::CREATE => match (|| {
                let s = x.u32()?;
                let follows = x.u32_max(1)?;
                let h = if follows == 1 {
                    Some(handle3(&mut x)?)
                } else {
                    None
                };
                Ok::<_, RErr>((s, h))
            })() {
                Ok((s, h)) => {
                    status = s;
                    if let Some(h) = h {
                        self.insert_name(h, &m.file_name);
                        resp_handle = h.to_vec();
                    }
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            proc3::READ => match read3_reply(r.data, true) {
                Ok(rd) => {
                    self.read_record(r, &rd, Some(m));
                    status = rd.status;
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            proc3::READDIRPLUS => match (|| {
                let s = x.u32()?;
                if x.u32_max(1)? == 1 {
                    x.take(84)?;
                }
                x.u64()?;
                Ok::<_, RErr>((s, x.rest()))
            })() {
                Ok((s, data)) => {
                    status = s;
                    let d = if data.len() >= 4 {
                        &data[..data.len() - 4]
                    } else {
                        data
                    };
                    if !self.readdirplus_entries(d) {
                        self.set_event(EV_MALFORMED);
                    }
                }
                Err(_) => self.set_event(EV_MALFORMED),
            },
            _ => status = x.u32().unwrap_or(0),
        }
        if m.procedure != proc3::READ {
            self.mark_response_done(r.hdr.xid, r.reply_state, status, &resp_handle);
        }
    }

    /// READDIRPLUS entries: every handle/name pair goes into the name map. Returns false
    /// when an entry is malformed (a cut last entry ends the list).
    fn readdirplus_entries(&mut self, d: &[u8]) -> bool {
        let mut x = Xdr::new(d);
        loop {
            let save = x;
            let r = (|| {
                let follows = x.u32_max(1)?;
                if follows == 0 {
                    return Ok(None);
                }
                x.u64()?;
                let name = name_padded(&mut x)?;
                x.take(8)?;
                if x.u32_max(1)? == 1 {
                    x.take(84)?;
                }
                let h = if x.u32_max(1)? == 1 {
                    Some(handle3(&mut x)?)
                } else {
                    None
                };
                Ok::<_, RErr>(Some((name, h)))
            })();
            match r {
                Ok(Some((name, Some(h)))) => self.insert_name(h, name),
                Ok(Some((_, None))) | Ok(None) => {}
                Err(RErr::Incomplete) => {
                    x = save;
                    let _ = x;
                    return true;
                }
                Err(RErr::Bad) => return false,
            }
            if x.rest.is_empty() {
                return true;
            }
        }
    }

    fn reply_v2(&mut self, r: &Reply<'_>, m: &XidMap) {
        let status;
        if m.procedure == proc3::READ {
            match read2_reply(r.data) {
                Ok(rd) => {
                    self.read_record(r, &rd, Some(m));
                    status = rd.status;
                }
                Err(_) => {
                    self.set_event(EV_MALFORMED);
                    status = 0;
                }
            }
        } else {
            status = Xdr::new(r.data).u32().unwrap_or(0);
        }
        self.mark_response_done(r.hdr.xid, r.reply_state, status, &[]);
    }

    /// A READ reply (whole, or its first part over TCP).
    fn read_record(&mut self, r: &Reply<'_>, rd: &ReadReply<'_>, m: Option<&XidMap>) {
        if rd.count == 0 || rd.count > 16_777_216 {
            return;
        }
        let fill = fill_of(rd.count);
        let m = match m {
            Some(m) => m.clone(),
            None => match self.requestmap.get(&r.hdr.xid) {
                Some(m) => m.clone(),
                None => return,
            },
        };
        let mut last = rd.eof;
        if m.progver == 2 {
            let mut a = Xdr::new(rd.attr);
            let size = (|| {
                a.u32()?;
                a.take(16)?;
                a.u32()
            })()
            .unwrap_or(0);
            if u64::from(size) == m.chunk_offset + rd.data.len() as u64 {
                last = true;
            }
        }
        let partial = rd.data.len() < rd.count as usize;
        let xid = r.hdr.xid;
        let cfg = self.files;
        let apply = |t: &mut NfsTx, f: &mut FileXfer| {
            if last {
                f.last_xid = xid;
                t.rpc_status = r.reply_state;
                t.nfs_status = rd.status;
                t.is_last = true;
                t.request_done = true;
                if !partial {
                    t.response_done = true;
                }
            }
        };
        let found = match self.file_tx_by_handle(&m.file_handle, Dir::ToClient) {
            Some(t) => {
                if let Some(mut f) = t.file.take() {
                    f.tracker.new_chunk(
                        &cfg,
                        &m.file_name,
                        rd.data,
                        m.chunk_offset,
                        rd.count,
                        fill,
                        last,
                    );
                    keep_head(&mut f, rd.data);
                    f.chunk_count += 1;
                    apply(t, &mut f);
                    t.file = Some(f);
                }
                true
            }
            None => false,
        };
        if !found {
            let t = self.new_file_tx(&m.file_handle, &m.file_name, Dir::ToClient);
            if let Some(mut f) = t.file.take() {
                f.tracker.new_chunk(
                    &cfg,
                    &m.file_name,
                    rd.data,
                    m.chunk_offset,
                    rd.count,
                    fill,
                    last,
                );
                keep_head(&mut f, rd.data);
                t.procedure = if m.progver < 4 {
                    proc3::READ
                } else {
                    nfs4::OP_READ
                };
                t.xid = xid;
                t.is_first = true;
                apply(t, &mut f);
                t.file = Some(f);
            }
        }
        if !self.is_udp {
            let d = &mut self.dirs[1];
            d.chunk_xid = xid;
            d.chunk_left = rd.count.saturating_sub(rd.data.len() as u32);
        }
    }

    // ---- streaming ----

    /// File data still expected in `dir` (Suricata's `filetracker_update`): returns the
    /// bytes of `data` used.
    fn file_update(&mut self, dir: Dir, data: &[u8], gap: u32) -> u32 {
        let d = &mut self.dirs[di(dir)];
        if d.chunk_left == 0 {
            return 0;
        }
        let xid = d.chunk_xid;
        let fh;
        if d.chunk_left as usize <= data.len() {
            d.chunk_left = 0;
            if dir == Dir::ToServer {
                d.chunk_xid = 0;
                fh = std::mem::take(&mut d.chunk_fh);
            } else {
                d.chunk_xid = 0;
                match self.take_request(xid) {
                    Some(m) => fh = m.file_handle,
                    None => return 0,
                }
            }
        } else {
            d.chunk_left -= data.len() as u32;
            if dir == Dir::ToServer {
                fh = d.chunk_fh.clone();
            } else {
                match self.requestmap.get(&xid) {
                    Some(m) => fh = m.file_handle.clone(),
                    None => return 0,
                }
            }
        }
        let ssn_gap = self.dirs[0].ssn_gap || self.dirs[1].ssn_gap;
        let Some(t) = self.file_tx_by_handle(&fh, dir) else {
            return 0;
        };
        let Some(f) = t.file.as_mut() else {
            return 0;
        };
        if ssn_gap && f.tracker.queued() > tracker::MAX_QUEUED {
            f.tracker.trunc();
        }
        f.chunk_count += 1;
        let used = f.tracker.update(data, gap);
        if gap == 0 {
            let n = (used as usize).min(data.len());
            keep_head(f, &data[..n]);
        }
        if f.tracker.is_done() {
            match dir {
                Dir::ToClient => t.response_done = true,
                Dir::ToServer => t.request_done = true,
            }
            t.is_file_closed = true;
        }
        used
    }

    /// After a gap, the transactions waiting on `dir` are done (file transactions, which
    /// can take gaps, are kept).
    fn post_gap(&mut self, dir: Dir) {
        if !self.dirs[di(dir)].ssn_gap {
            return;
        }
        for t in self.txs.iter_mut().filter(|t| t.file.is_none()) {
            t.request_done = true;
            if dir == Dir::ToClient {
                t.response_done = true;
            }
        }
    }

    /// TCP data of `dir`: returns the bytes used (the rest waits for more).
    fn parse_tcp(&mut self, dir: Dir, input: &[u8]) -> Result<usize, ()> {
        let mut i = self.file_update(dir, input, 0) as usize;
        if i > input.len() {
            return Err(());
        }
        if i == input.len() {
            return Ok(i);
        }
        if self.dirs[di(dir)].gap {
            loop {
                if i >= input.len() {
                    return Ok(i);
                }
                match nfs_probe(&input[i..], dir) {
                    1 => {
                        self.dirs[di(dir)].gap = false;
                        break;
                    }
                    0 => {
                        self.dirs[di(dir)].need = input.len() - i + 1;
                        return Ok(i);
                    }
                    _ => i += 1,
                }
            }
        }
        while i < input.len() {
            let cur = &input[i..];
            // Suricata's `rpc.pdu`: from the record's start to the end of the input.
            self.frame(i, cur.len(), FRAME_RPC_PDU);
            let (frag_len, procedure) = match dir {
                Dir::ToServer => match rpc::tcp_call_head(cur) {
                    Ok((h, w)) => (h.frag_len, w[3]),
                    Err(RErr::Incomplete) => {
                        self.dirs[0].need = 28;
                        return Ok(i);
                    }
                    Err(RErr::Bad) => {
                        self.set_event(EV_MALFORMED);
                        return Err(());
                    }
                },
                Dir::ToClient => match rpc::tcp_header(&mut Xdr::new(cur)) {
                    Ok(h) => (
                        h.frag_len,
                        self.requestmap.get(&h.xid).map_or(0, |m| m.procedure),
                    ),
                    Err(RErr::Incomplete) => {
                        self.dirs[1].need = 12;
                        return Ok(i);
                    }
                    Err(RErr::Bad) => {
                        self.set_event(EV_MALFORMED);
                        return Err(());
                    }
                },
            };
            let rec = frag_len as usize + 4;
            if rec > cur.len() {
                return self.partial(dir, cur, rec, procedure).map(|all| {
                    if all {
                        input.len()
                    } else {
                        self.dirs[di(dir)].need = cur.len().max(1024).min(rec);
                        i
                    }
                });
            }
            let whole = &cur[..rec];
            match dir {
                Dir::ToServer => match rpc::tcp_call(whole, true) {
                    Ok(c) => {
                        self.call_frames(input, i + 28, &c);
                        self.request(&c)
                    }
                    Err(_) => self.set_event(EV_MALFORMED),
                },
                Dir::ToClient => match rpc::tcp_reply(whole, true) {
                    Ok(r) => {
                        if cur.len() > 12 {
                            self.frame(i, 12, FRAME_RPC_HDR);
                            self.frame(i + 12, cur.len() - 12, FRAME_RPC_DATA);
                        }
                        self.reply_frames(input, &r);
                        self.reply(&r)
                    }
                    Err(_) => self.set_event(EV_MALFORMED),
                },
            }
            i += rec;
        }
        self.post_gap(dir);
        Ok(i)
    }

    /// An incomplete record at the start of `cur`: a large WRITE call or READ reply is
    /// processed now and its data streamed (returns `Ok(true)`: all input used); anything
    /// else waits for the whole record (`Ok(false)`).
    fn partial(&mut self, dir: Dir, cur: &[u8], rec: usize, procedure: u32) -> Result<bool, ()> {
        match dir {
            Dir::ToServer if rec >= 512 && cur.len() >= 44 && procedure == proc3::WRITE => {
                match rpc::tcp_call(cur, false) {
                    Ok(c) => match write3(c.data, false) {
                        Ok(w) => {
                            let mut m = XidMap {
                                progver: c.progver,
                                procedure: c.procedure,
                                ..Default::default()
                            };
                            m.file_handle = w.handle.to_vec();
                            self.insert_request(c.hdr.xid, m);
                            self.write_record(&c, &w);
                            return Ok(true);
                        }
                        Err(RErr::Bad) => {
                            self.set_event(EV_MALFORMED);
                            return Err(());
                        }
                        Err(RErr::Incomplete) => {}
                    },
                    Err(RErr::Bad) => {
                        self.set_event(EV_MALFORMED);
                        return Err(());
                    }
                    Err(RErr::Incomplete) => {}
                }
            }
            Dir::ToClient if rec >= 512 && cur.len() >= 128 && procedure == proc3::READ => {
                match rpc::tcp_reply(cur, false) {
                    Ok(r) => match read3_reply(r.data, false) {
                        Ok(rd) => {
                            self.read_record(&r, &rd, None);
                            return Ok(true);
                        }
                        Err(RErr::Bad) => {
                            self.set_event(EV_MALFORMED);
                            return Err(());
                        }
                        Err(RErr::Incomplete) => {}
                    },
                    Err(RErr::Bad) => {
                        self.set_event(EV_MALFORMED);
                        return Err(());
                    }
                    Err(RErr::Incomplete) => {}
                }
            }
            _ => {}
        }
        if rec > MAX_RECORD_BUF {
            self.set_event(EV_MALFORMED);
            return Err(());
        }
        Ok(false)
    }

    fn parse_udp(&mut self, dir: Dir, b: &[u8]) {
        match dir {
            Dir::ToServer => {
                self.frame(0, b.len(), FRAME_RPC_PDU);
                if let Ok(c) = rpc::udp_call(b) {
                    // Suricata makes the `nfs.pdu` of an NFSv3 call in its request
                    // handling and of an NFSv2 call here: both, and no NFSv4 ones.
                    if c.progver == 2 || c.progver == 3 {
                        self.call_frames(b, 24, &c);
                    } else {
                        self.frame(24, creds_len(&b[24..]), FRAME_RPC_CREDS);
                    }
                    match c.progver {
                        3 | 2 => self.request(&c),
                        _ => {}
                    }
                }
            }
            Dir::ToClient => {
                self.frame(0, b.len(), FRAME_RPC_PDU);
                if let Ok(r) = rpc::udp_reply(b) {
                    if b.len() > 8 {
                        self.frame(0, 8, FRAME_RPC_HDR);
                        self.frame(8, b.len() - 8, FRAME_RPC_DATA);
                    }
                    self.reply_frames(b, &r);
                    self.reply(&r);
                }
            }
        }
    }

    /// [`AppParser::parse`], also returning how many bytes held from earlier calls came
    /// before `data` in the input parsed (frame positions count from the held bytes).
    fn parse_held(&mut self, dir: Dir, data: &[u8]) -> (bool, usize) {
        if self.failed {
            return (false, 0);
        }
        if self.is_udp {
            self.parse_udp(dir, data);
            return (false, 0);
        }
        let d = di(dir);
        let mut buf = std::mem::take(&mut self.dirs[d].buf);
        let held = buf.len();
        if held > 0 && held + data.len() < self.dirs[d].need {
            // Not yet what the last pass asked for: Suricata does not call its parser.
            buf.extend_from_slice(data);
            if buf.len() > MAX_RECORD_BUF {
                self.set_event(EV_MALFORMED);
                self.failed = true;
                return (true, held);
            }
            self.dirs[d].buf = buf;
            return (false, held);
        }
        self.dirs[d].need = 0;
        let res = if buf.is_empty() {
            let r = self.parse_tcp(dir, data);
            if let Ok(n) = r {
                if n < data.len() {
                    buf.extend_from_slice(&data[n..]);
                }
            }
            r
        } else {
            buf.extend_from_slice(data);
            let r = self.parse_tcp(dir, &buf);
            if let Ok(n) = r {
                buf.drain(..n.min(buf.len()));
            }
            r
        };
        if buf.is_empty() {
            self.dirs[d].need = 0;
            // Give back what a large record took.
            if buf.capacity() > 64 * 1024 {
                buf = Vec::new();
            }
        }
        match res {
            Ok(_) => {
                if buf.len() > MAX_RECORD_BUF {
                    self.set_event(EV_MALFORMED);
                    self.failed = true;
                    return (true, held);
                }
                self.dirs[d].buf = buf;
                (false, held)
            }
            Err(()) => {
                self.failed = true;
                (true, held)
            }
        }
    }

    // ---- frames ----

    /// Asks for a frame of type `ty` at `pos` in the parsed input (when frames are on).
    fn frame(&mut self, pos: usize, len: usize, ty: u8) {
        if let Some(f) = self.frames.as_mut() {
            f.push((pos, len as i64, ty));
        }
    }

    /// A call's `rpc.creds` (flavour, length and body, at `creds` in `input`) and its
    /// `nfs.pdu` (NFSv2/v3) or `nfs4.pdu`, `nfs4.hdr`, `nfs4.ops` (NFSv4).
    fn call_frames(&mut self, input: &[u8], creds: usize, c: &Call<'_>) {
        if self.frames.is_none() {
            return;
        }
        if let Some(rest) = input.get(creds..) {
            self.frame(creds, creds_len(rest), FRAME_RPC_CREDS);
        }
        let pos = offset_in(input, c.data);
        let len = c.data.len();
        match c.progver {
            2 | 3 => self.frame(pos, len, FRAME_NFS_PDU),
            4 => {
                self.frame(pos, len, FRAME_NFS4_PDU);
                if len > 8 {
                    self.frame(pos, 8, FRAME_NFS4_HDR);
                    self.frame(pos + 8, len - 8, FRAME_NFS4_OPS);
                }
            }
            _ => {}
        }
    }

    /// A reply's `nfs.pdu` and `nfs.status` (NFSv2/v3) or `nfs4.*` frames, for a reply to a
    /// known call (as Suricata, before the call is looked up for the reply's processing).
    fn reply_frames(&mut self, input: &[u8], r: &Reply<'_>) {
        if self.frames.is_none() {
            return;
        }
        let Some(v) = self.requestmap.get(&r.hdr.xid).map(|m| m.progver) else {
            return;
        };
        let pos = offset_in(input, r.data);
        let len = r.data.len();
        match v {
            2 | 3 if len > 0 => {
                self.frame(pos, len, FRAME_NFS_PDU);
                self.frame(pos, 4, FRAME_NFS_STATUS);
            }
            4 => {
                if len > 0 {
                    self.frame(pos, len, FRAME_NFS4_PDU);
                    self.frame(pos, 4, FRAME_NFS4_STATUS);
                }
                if len > 8 {
                    self.frame(pos, 8, FRAME_NFS4_HDR);
                    self.frame(pos + 8, len - 8, FRAME_NFS4_OPS);
                }
            }
            _ => {}
        }
    }

    // ---- output ----

    fn write_rpc(t: &NfsTx, w: &mut JsonWriter) {
        w.set_u64("xid", u64::from(t.xid));
        w.set_str("status", &rpc::status_string(t.rpc_status));
        w.set_str("auth_type", &rpc::auth_type_string(t.auth_type));
        if t.auth_type == 1 {
            w.open_object("creds");
            w.set_str("machine_name", &String::from_utf8_lossy(&t.machine));
            w.set_u64("uid", u64::from(t.uid));
            w.set_u64("gid", u64::from(t.gid));
            w.close();
        }
    }

    fn write_nfs(&self, t: &NfsTx, w: &mut JsonWriter) {
        let v = self.nfs_version;
        w.set_u64("version", u64::from(v));
        let name = match v {
            3 => proc3_string(t.procedure),
            0..=2 => proc2_string(t.procedure),
            _ => nfs4::proc_string(t.procedure),
        };
        w.set_str("procedure", &name);
        w.set_str("filename", &String::from_utf8_lossy(&t.file_name));
        if !t.file_handle.is_empty() {
            w.set_str("hhash", &format!("{:x}", crc32(&t.file_handle)));
        }
        w.set_u64("id", t.id + 1);
        w.set_bool("file_tx", t.is_file_tx);
        w.set_str("type", "response");
        w.set_str("status", &status_string(t.nfs_status));
        let (read, write, rename) = match v {
            2 => (PROC2_READ, PROC2_WRITE, PROC2_RENAME),
            3 => (proc3::READ, proc3::WRITE, proc3::RENAME),
            4 => (nfs4::OP_READ, nfs4::OP_WRITE, nfs4::OP_RENAME),
            _ => (u32::MAX, u32::MAX, u32::MAX),
        };
        if t.procedure == read || t.procedure == write {
            w.open_object(if t.procedure == read { "read" } else { "write" });
            w.set_bool("first", t.is_first);
            w.set_bool("last", t.is_last);
            if let Some(f) = &t.file {
                w.set_u64("last_xid", u64::from(f.last_xid));
                w.set_u64("chunks", u64::from(f.chunk_count));
            }
            w.close();
        } else if t.procedure == rename {
            w.open_object("rename");
            w.set_str("from", &String::from_utf8_lossy(&t.file_name));
            let to = t.rename_to.as_deref().unwrap_or(&[]);
            w.set_str("to", &String::from_utf8_lossy(to));
            w.close();
        }
    }

    fn write_fileinfo(&self, c: &mut LogCtx<'_>, t: &NfsTx) {
        let Some(f) = &t.file else {
            return;
        };
        let Some(file) = f.tracker.file.as_ref() else {
            return;
        };
        let emit = c.out.wants_type("files");
        if !(emit || crate::files::wants_fileinfo_file(file)) {
            return;
        }
        let Some(mut rec) = c.out.record(EventKind::Other) else {
            return;
        };
        let hdr = c.rec.header("fileinfo", f.dir == Dir::ToServer);
        write_eve_header(&mut rec, &hdr);
        rec.open_object("rpc");
        Self::write_rpc(t, &mut rec);
        rec.close();
        rec.open_object("nfs");
        self.write_nfs(t, &mut rec);
        rec.close();
        rec.set_str("app_proto", "nfs");
        rec.open_object("fileinfo");
        file.write_eve(&mut rec, t.id, None);
        rec.close();
        rec.close();
        crate::files::finish_fileinfo(rec, file, hdr.timestamp_ns, emit);
    }

    fn filtered(&self, t: &NfsTx) -> bool {
        self.nfs_version <= 3 && t.procedure == proc3::GETATTR
    }
}

/// Where `part` (a subslice of `whole`) starts in `whole`.
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(whole.as_ptr() as usize)
        .min(whole.len())
}

/// Suricata's `rpc.creds` length: the credentials' length word plus 8 (flavour and length).
fn creds_len(b: &[u8]) -> usize {
    b.get(4..8).map_or(0, |w| {
        u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize + 8
    })
}

fn keep_head(f: &mut FileXfer, d: &[u8]) {
    if f.head.len() < MAX_FILE_INSPECT {
        let n = (MAX_FILE_INSPECT - f.head.len()).min(d.len());
        f.head.extend_from_slice(&d[..n]);
    }
}

/// EVE `nfs.procedure` of an NFSv3 procedure.
pub fn proc3_string(p: u32) -> String {
    const N: [&str; 22] = [
        "NULL",
        "GETATTR",
        "SETATTR",
        "LOOKUP",
        "ACCESS",
        "READLINK",
        "READ",
        "WRITE",
        "CREATE",
        "MKDIR",
        "SYMLINK",
        "MKNOD",
        "REMOVE",
        "RMDIR",
        "RENAME",
        "LINK",
        "READDIR",
        "READDIRPLUS",
        "FSSTAT",
        "FSINFO",
        "PATHCONF",
        "COMMIT",
    ];
    N.get(p as usize)
        .map_or_else(|| p.to_string(), |s| (*s).to_string())
}

/// EVE `nfs.procedure` of an NFSv2 procedure (Suricata 8's table).
pub fn proc2_string(p: u32) -> String {
    const N: [&str; 18] = [
        "NULL",
        "GETATTR",
        "SETATTR",
        "ROOT",
        "LOOKUP",
        "READLINK",
        "READ",
        "WRITECACHE",
        "WRITE",
        "CREATE",
        "REMOVE",
        "RENAME",
        "LINK",
        "SYMLINK",
        "MKDIR",
        "RMDIR",
        "READDIR",
        "STATFS",
    ];
    N.get(p as usize)
        .map_or_else(|| p.to_string(), |s| (*s).to_string())
}

/// EVE `nfs.status` (Suricata writes NFSv3's names for every version).
pub fn status_string(s: u32) -> String {
    match s {
        0 => "OK",
        1 => "ERR_PERM",
        2 => "ERR_NOENT",
        5 => "ERR_IO",
        6 => "ERR_NXIO",
        13 => "ERR_ACCES",
        17 => "ERR_EXIST",
        18 => "ERR_XDEV",
        19 => "ERR_NODEV",
        20 => "ERR_NOTDIR",
        21 => "ERR_ISDIR",
        22 => "ERR_INVAL",
        27 => "ERR_FBIG",
        28 => "ERR_NOSPC",
        30 => "ERR_ROFS",
        31 => "ERR_MLINK",
        63 => "ERR_NAMETOOLONG",
        66 => "ERR_NOTEMPTY",
        69 => "ERR_DQUOT",
        70 => "ERR_STALE",
        71 => "ERR_REMOTE",
        10001 => "ERR_BADHANDLE",
        10002 => "ERR_NOT_SYNC",
        10003 => "ERR_BAD_COOKIE",
        10004 => "ERR_NOTSUPP",
        10005 => "ERR_TOOSMALL",
        10006 => "ERR_SERVERFAULT",
        10007 => "ERR_BADTYPE",
        10008 => "ERR_JUKEBOX",
        n => return n.to_string(),
    }
    .into()
}

impl AppParser for NfsState {
    fn parse(&mut self, dir: Dir, data: &[u8]) -> bool {
        self.parse_held(dir, data).0
    }

    fn parse_frames(
        &mut self,
        dir: Dir,
        data: &[u8],
        fc: &mut crate::frames::FrameCtx<'_>,
    ) -> bool {
        self.frames = Some(Vec::new());
        let (r, held) = self.parse_held(dir, data);
        for (pos, len, ty) in self.frames.take().unwrap_or_default() {
            fc.new_rel(pos as i64 - held as i64, len, ty);
        }
        r
    }

    fn gap(&mut self, dir: Dir, len: u64) {
        if self.is_udp || self.failed {
            return;
        }
        let d = di(dir);
        self.dirs[d].buf.clear();
        self.dirs[d].need = 0;
        // The file data in progress takes the gap (Suricata hands it zeros).
        let left = self.dirs[d].chunk_left;
        if left > 0 {
            let n = (u64::from(left)).min(len) as u32;
            let zeros = vec![0u8; n as usize];
            let used = self.file_update(dir, &zeros, n);
            if u64::from(used) >= len {
                return;
            }
        }
        self.dirs[d].ssn_gap = true;
        self.dirs[d].gap = true;
    }

    fn truncate(&mut self, dir: Dir) {
        // Suricata's NFS has no truncate callback, but the parser's `TRUNC` flag has
        // `FileTruncateAllOpenFiles` end the open files of the transactions with files
        // going that way.
        for t in self.txs.iter_mut() {
            if let Some(f) = t.file.as_mut().filter(|f| f.dir == dir) {
                f.tracker.trunc();
            }
        }
    }

    fn close(&mut self) {
        if self.is_udp {
            return;
        }
        for t in self.txs.iter_mut() {
            if let Some(f) = t.file.as_mut() {
                f.tracker.trunc();
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

    fn buffer_ready(&self, tx: u64, buf: u16, _dir: Dir, closed: bool) -> Option<bool> {
        let t = self.tx(tx)?;
        match (&t.file, buf) {
            (Some(f), BUF_FILE_DATA) => {
                let done = closed || f.tracker.is_done() || f.head.len() >= MAX_FILE_INSPECT;
                done.then_some(true)
            }
            _ => Some(true),
        }
    }

    fn buffer(&self, tx: u64, buf: u16, dir: Dir, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        let Some(x) = t.file.as_ref().filter(|x| x.dir == dir) else {
            return false;
        };
        match buf {
            BUF_FILE_DATA if !x.head.is_empty() => f(&x.head),
            BUF_FILE_NAME => match x.tracker.file.as_ref() {
                Some(file) if !file.name().is_empty() => f(file.name()),
                _ => false,
            },
            _ => false,
        }
    }

    fn has_event(&self, tx: u64, ev: u16) -> bool {
        self.tx(tx)
            .is_some_and(|t| ev < 8 && t.events & (1 << ev) != 0)
    }

    fn log(&mut self, c: &mut LogCtx<'_>) {
        let to_server = c.rec.info.to_server;
        // Over UDP nothing ends a flow's transactions: one still open at the end is not
        // logged (Suricata sets no end-of-stream on UDP flows).
        let closed = c.closed && !self.is_udp;
        // A file's `fileinfo` is written once it ended, on a packet going its way (before
        // its transaction's record: Suricata's file logger runs first, on the files of the
        // packet's direction), or at the end of a TCP flow.
        let pkt_dir = c.pkt_dir;
        let ended: Vec<u64> = self
            .txs
            .iter()
            .filter(|t| {
                t.file.as_ref().is_some_and(|f| {
                    !f.logged
                        && (closed || pkt_dir == Some(f.dir))
                        && f.tracker
                            .file
                            .as_ref()
                            .is_some_and(|x| x.is_done() || closed)
                })
            })
            .map(|t| t.id)
            .collect();
        for id in ended {
            if c.write {
                if let Some(t) = self.tx(id) {
                    self.write_fileinfo(c, t);
                }
            }
            if let Some(f) = self
                .txs
                .iter_mut()
                .find(|t| t.id == id)
                .and_then(|t| t.file.as_mut())
            {
                f.logged = true;
            }
        }
        let ready: Vec<u64> = self
            .txs
            .iter()
            .filter(|t| {
                t.id >= *c.next && !t.logged && (closed || (t.request_done && t.response_done))
            })
            .map(|t| t.id)
            .collect();
        for id in ready {
            if let Some(t) = self.tx(id) {
                if c.write && !self.filtered(t) && c.out.wants_type("nfs") {
                    if let Some(mut rec) = c.out.record(EventKind::Protocol) {
                        write_eve_header(&mut rec, &c.rec.header("nfs", to_server));
                        rec.open_object("rpc");
                        Self::write_rpc(t, &mut rec);
                        rec.close();
                        rec.open_object("nfs");
                        self.write_nfs(t, &mut rec);
                        rec.close();
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
        if c.closed && self.is_udp {
            for t in self.txs.iter_mut() {
                t.logged = true;
            }
        }
        let bit = if to_server { 1 } else { 2 };
        for t in self.txs.iter_mut().filter(|t| t.logged) {
            t.seen |= bit;
        }
        let mut next = *c.next;
        while next < self.next_id && self.tx(next).is_none_or(|t| t.logged) {
            next += 1;
        }
        *c.next = next;
        self.txs.retain(|t| {
            !(t.logged && t.id < next && t.seen == 3 && t.file.as_ref().is_none_or(|f| f.logged))
        });
    }

    fn drain_events(&mut self, _from: u64, _flow_logged: bool, f: &mut dyn FnMut(AppAnomaly)) {
        for t in self.txs.iter_mut().filter(|t| !t.anomaly_seen) {
            t.anomaly_seen = true;
            for (i, name) in EVENTS.iter().enumerate() {
                if t.events & (1 << i) != 0 {
                    f(AppAnomaly {
                        tx_id: t.id,
                        name,
                        upper: false,
                    });
                }
            }
        }
    }

    fn alert_members(&self, tx: u64, w: &mut JsonWriter) -> bool {
        let Some(t) = self.tx(tx) else {
            return false;
        };
        w.open_object("rpc");
        Self::write_rpc(t, w);
        w.close();
        w.open_object("nfs");
        self.write_nfs(t, w);
        w.close();
        true
    }

    fn files(&self, tx: u64, dir: Dir, f: &mut dyn FnMut(&TrackedFile)) {
        if let Some(x) = self.tx(tx).and_then(|t| t.file.as_ref()) {
            if x.dir == dir {
                if let Some(file) = x.tracker.file.as_ref() {
                    f(file);
                }
            }
        }
    }

    fn files_mut(&mut self, tx: u64, dir: Dir, f: &mut dyn FnMut(&mut TrackedFile)) {
        let t = self.txs.iter_mut().find(|t| t.id == tx);
        if let Some(x) = t.and_then(|t| t.file.as_mut()) {
            if x.dir == dir {
                if let Some(file) = x.tracker.file.as_mut() {
                    f(file);
                }
            }
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}
