//! NFSv4 (RFC 7530/5661) COMPOUND calls and replies, as Suricata 7 (`rust/src/nfs/nfs4.rs`).

use super::rpc::{Call, Err as RErr, PResult, Reply, Xdr, MAX_CREDS_SIZE};
use super::{keep_head, NfsState, ReadReply, XidMap, EV_MALFORMED};
use crate::Dir;

/// READ op.
pub const OP_READ: u32 = 25;
/// WRITE op.
pub const OP_WRITE: u32 = 38;
/// RENAME op.
pub const OP_RENAME: u32 = 29;

/// EVE `nfs.procedure` of an NFSv4 procedure or op.
pub fn proc_string(p: u32) -> String {
    let s = match p {
        0 => "NULL",
        1 => "COMPOUND",
        3 => "ACCESS",
        4 => "CLOSE",
        5 => "COMMIT",
        6 => "CREATE",
        7 => "DELEGPURGE",
        8 => "DELEGRETURN",
        9 => "GETATTR",
        10 => "GETFH",
        11 => "LINK",
        12 => "LOCK",
        13 => "LOCKT",
        14 => "LOCKU",
        15 => "LOOKUP",
        16 => "LOOKUPP",
        17 => "NVERIFY",
        18 => "OPEN",
        19 => "OPENATTR",
        20 => "OPEN_CONFIRM",
        21 => "OPEN_DOWNGRADE",
        22 => "PUTFH",
        23 => "PUTPUBFH",
        24 => "PUTROOTFH",
        25 => "READ",
        26 => "READDIR",
        27 => "READLINK",
        28 => "REMOVE",
        29 => "RENAME",
        30 => "RENEW",
        31 => "RESTOREFH",
        32 => "SAVEFH",
        33 => "SECINFO",
        34 => "SETATTR",
        35 => "SETCLIENTID",
        36 => "SETCLIENTID_CONFIRM",
        37 => "VERIFY",
        38 => "WRITE",
        39 => "RELEASE_LOCKOWNER",
        10044 => "ILLEGAL",
        n => return n.to_string(),
    };
    s.to_string()
}

/// Ops a COMPOUND holds at most (Suricata's `NFSD_MAX_OPS_PER_COMPOUND`).
const MAX_OPS: u32 = 64;
const OP_CLOSE: u32 = 4;
const OP_COMMIT: u32 = 5;
const OP_CREATE: u32 = 6;
const OP_GETFH: u32 = 10;
const OP_LOOKUP: u32 = 15;
const OP_OPEN: u32 = 18;
const OP_PUTFH: u32 = 22;
const OP_PUTROOTFH: u32 = 24;
const OP_REMOVE: u32 = 28;

/// The call ops shrike acts on (the others are walked over).
enum ReqOp<'a> {
    PutFh(&'a [u8]),
    Read(u64),
    Write {
        offset: u64,
        stable: u32,
        len: u32,
        data: &'a [u8],
    },
    Open(&'a [u8]),
    Lookup(&'a [u8]),
    Commit,
    Close,
    Create(&'a [u8]),
    Remove(&'a [u8]),
    Other,
}

/// The reply ops shrike acts on.
enum ResOp<'a> {
    Remove(u32),
    Create(u32),
    Read {
        status: u32,
        eof: bool,
        data: &'a [u8],
    },
    Open,
    GetFh(&'a [u8]),
    PutRootFh(u32),
    Other,
}

/// An NFSv4 string (length, bytes, padding).
fn nfsstring<'a>(x: &mut Xdr<'a>) -> PResult<&'a [u8]> {
    let n = x.u32()?;
    let v = x.take(n as usize)?;
    x.pad(n)?;
    Ok(v)
}

/// A handle (length and bytes; Suricata takes no padding).
fn handle<'a>(x: &mut Xdr<'a>) -> PResult<&'a [u8]> {
    x.opaque()
}

fn stateid(x: &mut Xdr<'_>) -> PResult<()> {
    x.take(16).map(|_| ())
}

fn attrbits(x: &mut Xdr<'_>) -> PResult<()> {
    let cnt = x.u32()?;
    x.u32()?;
    if cnt >= 2 {
        x.u32()?;
    }
    if cnt == 3 {
        x.u32()?;
    }
    Ok(())
}

fn attrs(x: &mut Xdr<'_>) -> PResult<()> {
    attrbits(x)?;
    x.opaque().map(|_| ())
}

fn req_op<'a>(x: &mut Xdr<'a>) -> PResult<ReqOp<'a>> {
    let op = x.u32()?;
    Ok(match op {
        OP_PUTFH => ReqOp::PutFh(handle(x)?),
        OP_READ => {
            stateid(x)?;
            let off = x.u64()?;
            x.u32()?;
            ReqOp::Read(off)
        }
        OP_WRITE => {
            stateid(x)?;
            let offset = x.u64()?;
            let stable = x.u32()?;
            let len = x.u32()?;
            let data = x.take(len as usize)?;
            x.pad(len)?;
            ReqOp::Write {
                offset,
                stable,
                len,
                data,
            }
        }
        OP_GETFH | 32 | OP_PUTROOTFH => ReqOp::Other,
        OP_OPEN => {
            x.u32()?;
            x.u32()?;
            x.u32()?;
            x.u64()?;
            let owner = x.u32()?;
            x.take(owner as usize)?;
            if x.u32()? == 1 {
                match x.u32()? {
                    0 | 1 => attrs(x)?,
                    2 => {
                        x.take(8)?;
                    }
                    _ => return Err(RErr::Bad),
                }
            }
            x.u32()?;
            ReqOp::Open(nfsstring(x)?)
        }
        OP_CLOSE => {
            x.u32()?;
            stateid(x)?;
            ReqOp::Close
        }
        OP_LOOKUP => ReqOp::Lookup(nfsstring(x)?),
        3 => {
            x.u32()?;
            ReqOp::Other
        }
        OP_COMMIT => {
            x.u64()?;
            x.u32()?;
            ReqOp::Commit
        }
        9 => {
            attrbits(x)?;
            ReqOp::Other
        }
        26 => {
            x.u64()?;
            x.u64()?;
            x.u32()?;
            x.u32()?;
            attrbits(x)?;
            ReqOp::Other
        }
        30 => {
            x.u64()?;
            ReqOp::Other
        }
        20 => {
            x.u32()?;
            stateid(x)?;
            ReqOp::Other
        }
        OP_REMOVE => ReqOp::Remove(nfsstring(x)?),
        29 => {
            nfsstring(x)?;
            nfsstring(x)?;
            ReqOp::Other
        }
        OP_CREATE => {
            let ftype = x.u32()?;
            if ftype == 5 {
                nfsstring(x)?;
            }
            let name = nfsstring(x)?;
            attrs(x)?;
            ReqOp::Create(name)
        }
        8 => {
            stateid(x)?;
            ReqOp::Other
        }
        34 => {
            stateid(x)?;
            attrs(x)?;
            ReqOp::Other
        }
        35 => {
            x.take(8)?;
            nfsstring(x)?;
            x.u32()?;
            nfsstring(x)?;
            nfsstring(x)?;
            x.u32()?;
            ReqOp::Other
        }
        36 => {
            x.take(16)?;
            ReqOp::Other
        }
        53 => {
            x.take(32)?;
            ReqOp::Other
        }
        42 => {
            x.take(8)?;
            nfsstring(x)?;
            x.take(12)?;
            nfsstring(x)?;
            nfsstring(x)?;
            x.take(12)?;
            ReqOp::Other
        }
        43 => {
            x.take(8 + 4 + 4 + 28 + 28 + 4 + 4 + 4 + 4)?;
            nfsstring(x)?;
            x.rest();
            ReqOp::Other
        }
        58 => {
            x.u32_max(1)?;
            ReqOp::Other
        }
        52 => {
            x.u32()?;
            ReqOp::Other
        }
        50 => {
            x.u32_max(1)?;
            x.take(4 + 4 + 8 + 8 + 8)?;
            stateid(x)?;
            x.u32()?;
            ReqOp::Other
        }
        47 => {
            x.take(16 + 4 + 4 + 4 + 4)?;
            ReqOp::Other
        }
        51 => {
            x.u32_max(1)?;
            x.take(4 + 4 + 4 + 8 + 8)?;
            stateid(x)?;
            nfsstring(x)?;
            ReqOp::Other
        }
        44 => {
            x.take(16)?;
            ReqOp::Other
        }
        57 => {
            x.take(8)?;
            ReqOp::Other
        }
        _ => return Err(RErr::Bad),
    })
}

fn req_compound(b: &[u8]) -> PResult<Vec<ReqOp<'_>>> {
    let mut x = Xdr::new(b);
    let tag = x.u32()?;
    x.take(tag as usize)?;
    x.u32()?;
    let n = x.u32()?;
    if n > MAX_OPS {
        return Err(RErr::Bad);
    }
    let mut ops = Vec::with_capacity(n as usize);
    for _ in 0..n {
        ops.push(req_op(&mut x)?);
    }
    Ok(ops)
}

/// A status and, when it is 0, what `ok` reads.
fn status_then(x: &mut Xdr<'_>, ok: impl FnOnce(&mut Xdr<'_>) -> PResult<()>) -> PResult<u32> {
    let s = x.u32()?;
    if s == 0 {
        ok(x)?;
    }
    Ok(s)
}

fn res_op<'a>(x: &mut Xdr<'a>) -> PResult<ResOp<'a>> {
    let op = x.u32()?;
    Ok(match op {
        OP_READ => {
            let status = x.u32()?;
            if status == 0 {
                let eof = x.u32_max(1)? == 1;
                // Suricata reads the data without its padding.
                let data = x.opaque()?;
                ResOp::Read { status, eof, data }
            } else {
                ResOp::Other
            }
        }
        OP_WRITE => {
            status_then(x, |x| x.take(16).map(|_| ()))?;
            ResOp::Other
        }
        3 => {
            status_then(x, |x| x.take(8).map(|_| ()))?;
            ResOp::Other
        }
        OP_COMMIT => {
            status_then(x, |x| x.take(8).map(|_| ()))?;
            ResOp::Other
        }
        OP_GETFH => {
            let s = x.u32()?;
            if s == 0 {
                ResOp::GetFh(handle(x)?)
            } else {
                ResOp::Other
            }
        }
        OP_PUTROOTFH => ResOp::PutRootFh(x.u32()?),
        OP_PUTFH | 32 | 29 | OP_LOOKUP | 30 | 8 | 36 | 44 | 57 | 58 => {
            x.u32()?;
            ResOp::Other
        }
        26 => {
            status_then(x, |x| {
                x.u64()?;
                loop {
                    if x.rest.get(..4) == Some(&[0, 0, 0, 0]) {
                        break;
                    }
                    // An entry that does not parse ends the listing.
                    let save = *x;
                    let r = (|| {
                        x.u32_max(1)?;
                        x.u64()?;
                        nfsstring(x)?;
                        attrs(x)
                    })();
                    if r.is_err() {
                        *x = save;
                        return Err(RErr::Bad);
                    }
                }
                x.u32()?;
                x.u32_max(1)?;
                Ok(())
            })?;
            ResOp::Other
        }
        9 => {
            status_then(x, attrs)?;
            ResOp::Other
        }
        34 => {
            status_then(x, attrbits)?;
            ResOp::Other
        }
        OP_OPEN => {
            let s = status_then(x, |x| {
                stateid(x)?;
                x.take(20)?;
                x.u32()?;
                attrbits(x)?;
                match x.u32()? {
                    0 => {}
                    1 => {
                        stateid(x)?;
                        x.take(16)?;
                        x.opaque()?;
                    }
                    2 => {
                        stateid(x)?;
                        x.take(24)?;
                        nfsstring(x)?;
                    }
                    _ => return Err(RErr::Bad),
                }
                Ok(())
            })?;
            if s == 0 {
                ResOp::Open
            } else {
                ResOp::Other
            }
        }
        20 | OP_CLOSE => {
            status_then(x, stateid)?;
            ResOp::Other
        }
        OP_REMOVE => ResOp::Remove(status_then(x, |x| x.take(20).map(|_| ()))?),
        OP_CREATE => ResOp::Create(status_then(x, |x| {
            x.take(20)?;
            attrbits(x)
        })?),
        35 => {
            x.u32()?;
            x.u64()?;
            x.u32()?;
            ResOp::Other
        }
        42 => {
            status_then(x, |x| {
                x.take(8 + 4 + 4 + 4 + 8)?;
                nfsstring(x)?;
                nfsstring(x)?;
                x.u32()?;
                nfsstring(x)?;
                nfsstring(x)?;
                x.take(12).map(|_| ())
            })?;
            ResOp::Other
        }
        53 => {
            status_then(x, |x| x.take(16 + 4 + 12 + 4).map(|_| ()))?;
            ResOp::Other
        }
        43 => {
            status_then(x, |x| x.take(16 + 4 + 4 + 28 + 28).map(|_| ()))?;
            ResOp::Other
        }
        52 => {
            x.u32()?;
            let n = x.u32()?;
            // Suricata checks the flavours but does not step over them.
            let mut y = *x;
            for _ in 0..n {
                if y.u32()? == 6 {
                    nfsstring(&mut y)?;
                    y.u32()?;
                    y.u32()?;
                }
            }
            ResOp::Other
        }
        50 => {
            status_then(x, |x| {
                x.u32_max(1)?;
                stateid(x)?;
                x.take(4 + 8 + 8 + 4 + 4 + 4 + 16 + 4 + 4 + 8)?;
                let n = x.u32()?;
                for _ in 0..n {
                    handle(x)?;
                }
                Ok(())
            })?;
            ResOp::Other
        }
        47 => {
            status_then(x, |x| {
                x.take(4 + 8 + 4 + 8)?;
                nfsstring(x)?;
                nfsstring(x)?;
                x.u32().map(|_| ())
            })?;
            ResOp::Other
        }
        51 => {
            x.u32()?;
            x.u32_max(1)?;
            ResOp::Other
        }
        _ => return Err(RErr::Bad),
    })
}

fn res_compound(b: &[u8]) -> PResult<Vec<ResOp<'_>>> {
    let mut x = Xdr::new(b);
    x.u32()?;
    let tag = x.u32()?;
    x.take(tag as usize)?;
    let n = x.u32()?;
    if n > MAX_OPS {
        return Err(RErr::Bad);
    }
    let mut ops = Vec::with_capacity(n as usize);
    for _ in 0..n {
        ops.push(res_op(&mut x)?);
    }
    Ok(ops)
}

/// The body inside RPCSEC_GSS integrity protection.
fn gss_integrity(b: &[u8]) -> PResult<&[u8]> {
    let mut x = Xdr::new(b);
    let n = x.u32()?;
    if n >= MAX_CREDS_SIZE {
        return Err(RErr::Bad);
    }
    x.u32()?;
    x.take(n as usize)
}

impl NfsState {
    pub(super) fn request_v4(&mut self, c: &Call<'_>) {
        let mut m = XidMap {
            progver: c.progver,
            procedure: c.procedure,
            ..Default::default()
        };
        if c.procedure == 1 {
            let mut data = c.data;
            if let Some((0, 2)) = c.gss {
                match gss_integrity(c.data) {
                    Ok(d) => {
                        data = d;
                        m.gss_integrity = true;
                    }
                    Err(_) => {
                        self.set_event(EV_MALFORMED);
                        return;
                    }
                }
            }
            match req_compound(data) {
                Ok(ops) => self.compound_request(c, &ops, &mut m),
                Err(_) => self.set_event(EV_MALFORMED),
            }
        }
        self.insert_request(c.hdr.xid, m);
    }

    fn compound_request(&mut self, c: &Call<'_>, ops: &[ReqOp<'_>], m: &mut XidMap) {
        let mut fh: Option<&[u8]> = None;
        let mut main = 0;
        for op in ops {
            match *op {
                ReqOp::PutFh(h) => fh = Some(h),
                ReqOp::Read(off) => {
                    if let Some(h) = fh {
                        m.chunk_offset = off;
                        m.file_handle = h.to_vec();
                        self.handle2name(m);
                    }
                }
                ReqOp::Open(n) | ReqOp::Lookup(n) => m.file_name = n.to_vec(),
                ReqOp::Write {
                    offset,
                    stable,
                    len,
                    data,
                } => {
                    if let Some(h) = fh {
                        self.write_v4(c, h, offset, stable, len, data);
                    }
                }
                ReqOp::Commit | ReqOp::Close => {
                    if let Some(h) = fh {
                        let xid = c.hdr.xid;
                        if let Some(t) = self.file_tx_by_handle(h, Dir::ToServer) {
                            if let Some(f) = t.file.as_mut() {
                                f.tracker.close();
                                f.last_xid = xid;
                                t.is_last = true;
                                t.request_done = true;
                                t.is_file_closed = true;
                            }
                        }
                    }
                }
                ReqOp::Create(n) => {
                    if let Some(h) = fh {
                        m.file_handle = h.to_vec();
                    }
                    m.file_name = n.to_vec();
                    main = OP_CREATE;
                }
                ReqOp::Remove(n) => {
                    m.file_name = n.to_vec();
                    main = OP_REMOVE;
                }
                ReqOp::Other => {}
            }
        }
        if main != 0 {
            let mut t = self.new_tx();
            t.xid = c.hdr.xid;
            t.procedure = main;
            t.request_done = true;
            t.file_name = m.file_name.clone();
            t.nfs_version = c.progver as u16;
            t.file_handle = m.file_handle.clone();
            Self::set_creds(&mut t, c);
            self.push_tx(t);
        }
    }

    fn write_v4(&mut self, c: &Call<'_>, fh: &[u8], off: u64, stable: u32, len: u32, data: &[u8]) {
        let last = stable == 2;
        let fill = super::fill_of(len);
        if len == 0 || len > 16_777_216 {
            return;
        }
        let name = self.namemap.get(fh).cloned().unwrap_or_default();
        let xid = c.hdr.xid;
        let cfg = self.files;
        let found = match self.file_tx_by_handle(fh, Dir::ToServer) {
            Some(t) => {
                if let Some(f) = t.file.as_mut() {
                    f.tracker.new_chunk(&cfg, &name, data, off, len, fill, last);
                    keep_head(f, data);
                    f.chunk_count += 1;
                    if last {
                        f.last_xid = xid;
                        t.is_last = true;
                        t.response_done = true;
                    }
                }
                true
            }
            None => false,
        };
        if !found {
            let t = self.new_file_tx(fh, &name, Dir::ToServer);
            if let Some(f) = t.file.as_mut() {
                f.tracker.new_chunk(&cfg, &name, data, off, len, fill, last);
                keep_head(f, data);
                t.procedure = OP_WRITE;
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
        let d = &mut self.dirs[0];
        d.chunk_xid = xid;
        d.chunk_left = len.saturating_sub(data.len() as u32);
    }

    pub(super) fn reply_v4(&mut self, r: &Reply<'_>, m: &XidMap) {
        if m.procedure != 1 {
            return;
        }
        let mut data = r.data;
        if m.gss_integrity {
            match gss_integrity(r.data) {
                Ok(d) => data = d,
                Err(_) => {
                    self.set_event(EV_MALFORMED);
                    return;
                }
            }
        }
        let ops = match res_compound(data) {
            Ok(o) => o,
            Err(_) => {
                self.set_event(EV_MALFORMED);
                return;
            }
        };
        let mut m = m.clone();
        let mut name_with_getfh = false;
        let mut main_status = None;
        for op in &ops {
            match *op {
                ResOp::Remove(s) | ResOp::Create(s) => main_status = Some(s),
                ResOp::Read { status, eof, data } => {
                    let rd = ReadReply {
                        status,
                        attr: &[],
                        count: data.len() as u32,
                        eof,
                        data,
                    };
                    self.read_record(r, &rd, Some(&m));
                }
                ResOp::Open => name_with_getfh = true,
                ResOp::GetFh(h) => {
                    if name_with_getfh {
                        let n = m.file_name.clone();
                        self.insert_name(h, &n);
                    }
                }
                ResOp::PutRootFh(s) => {
                    if s == 0 && m.file_name.is_empty() {
                        m.file_name = b"<mount_root>".to_vec();
                    }
                }
                ResOp::Other => {}
            }
        }
        if let Some(s) = main_status {
            self.mark_response_done(r.hdr.xid, r.reply_state, s, &[]);
        }
    }
}
