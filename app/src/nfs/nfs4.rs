//! NFSv4 (RFC 7530/5661) COMPOUND calls and replies, as Suricata 7 (`rust/src/nfs/nfs4.rs`).

use super::rpc::{Call, Reply};
use super::{NfsState, XidMap};

/// OPEN op.
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

impl NfsState {
    pub(super) fn request_v4(&mut self, _c: &Call<'_>) {}

    pub(super) fn reply_v4(&mut self, _r: &Reply<'_>, _m: &XidMap) {}
}
