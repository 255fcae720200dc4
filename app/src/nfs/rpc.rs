//! ONC RPC (RFC 5531) calls and replies as Suricata 7 reads them (`rust/src/nfs/rpc_records.rs`):
//! over TCP each record-marking fragment is taken as one message (its 4-byte marker, last
//! fragment bit and 31-bit length, then the message); over UDP a datagram is one message.
//! AUTH_UNIX credentials are decoded (machine name, uid, gid); the other flavours are kept as
//! their flavour number only.

/// Longest AUTH_UNIX machine name Suricata accepts (Linux defines 64).
pub const MAX_MACHINE_SIZE: u32 = 256;
/// Longest credentials body Suricata accepts.
pub const MAX_CREDS_SIZE: u32 = 4096;
/// Longest verifier Suricata accepts.
pub const MAX_VERIFIER_SIZE: u32 = 4096;

/// Why a parse stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Err {
    /// More bytes are needed.
    Incomplete,
    /// The bytes are not what is expected.
    Bad,
}

/// A parse result.
pub type PResult<T> = Result<T, Err>;

/// A big-endian XDR cursor.
#[derive(Clone, Copy, Debug)]
pub struct Xdr<'a> {
    /// What is left.
    pub rest: &'a [u8],
}

impl<'a> Xdr<'a> {
    /// A cursor over `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Xdr { rest: b }
    }
    /// Bytes consumed since `start` (a cursor this one was copied from).
    pub fn used_since(&self, start: &Xdr<'a>) -> usize {
        start.rest.len() - self.rest.len()
    }
    /// Four bytes.
    pub fn u32(&mut self) -> PResult<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// Eight bytes.
    pub fn u64(&mut self) -> PResult<u64> {
        let hi = u64::from(self.u32()?);
        let lo = u64::from(self.u32()?);
        Ok(hi << 32 | lo)
    }
    /// `n` bytes.
    pub fn take(&mut self, n: usize) -> PResult<&'a [u8]> {
        if self.rest.len() < n {
            return Err(Err::Incomplete);
        }
        let (a, b) = self.rest.split_at(n);
        self.rest = b;
        Ok(a)
    }
    /// A four-byte value that must be at most `max`.
    pub fn u32_max(&mut self, max: u32) -> PResult<u32> {
        let v = self.u32()?;
        if v > max {
            return Err(Err::Bad);
        }
        Ok(v)
    }
    /// Length-prefixed opaque data, without its padding.
    pub fn opaque(&mut self) -> PResult<&'a [u8]> {
        let n = self.u32()?;
        self.take(n as usize)
    }
    /// The padding after `len` bytes of opaque data (taken only if `len` is not a multiple
    /// of 4).
    pub fn pad(&mut self, len: u32) -> PResult<()> {
        if len % 4 != 0 {
            self.take((4 - len % 4) as usize)?;
        }
        Ok(())
    }
    /// `len` bytes of file data: all of them (and their padding) in a complete message,
    /// else those at hand (a record whose data goes on in later segments).
    pub fn file_data(&mut self, len: u32, complete: bool) -> PResult<&'a [u8]> {
        if !complete && self.rest.len() < len as usize {
            return Ok(self.rest());
        }
        let d = self.take(len as usize)?;
        if complete {
            self.pad(len)?;
        }
        Ok(d)
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }
}

/// The record marker and the first two words of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Fragment length (TCP; 0 over UDP).
    pub frag_len: u32,
    /// Transaction id.
    pub xid: u32,
    /// 0: call, 1: reply.
    pub msgtype: u32,
}

/// AUTH_UNIX credentials.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnixCreds {
    /// Machine name.
    pub machine: Vec<u8>,
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
}

/// A call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// Header.
    pub hdr: Header,
    /// RPC version.
    pub rpcver: u32,
    /// Program.
    pub program: u32,
    /// Program version.
    pub progver: u32,
    /// Procedure.
    pub procedure: u32,
    /// Credentials flavour.
    pub creds_flavor: u32,
    /// AUTH_UNIX credentials, when that is the flavour.
    pub unix: Option<UnixCreds>,
    /// RPCSEC_GSS credentials' procedure and service, when that is the flavour.
    pub gss: Option<(u32, u32)>,
    /// The procedure's arguments (all of them, or what is in so far).
    pub data: &'a [u8],
}

/// A reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply<'a> {
    /// Header.
    pub hdr: Header,
    /// 0: accepted, 1: denied.
    pub reply_state: u32,
    /// Accept status.
    pub accept_state: u32,
    /// The procedure's results (all of them, or what is in so far).
    pub data: &'a [u8],
}

/// The TCP record marker, xid and message type (a fragment shorter than 24 bytes or a
/// message type above 1 is refused).
pub fn tcp_header(x: &mut Xdr<'_>) -> PResult<Header> {
    let m = x.u32()?;
    let frag_len = m & 0x7fff_ffff;
    if frag_len < 24 {
        return Err(Err::Bad);
    }
    let xid = x.u32()?;
    let msgtype = x.u32_max(1)?;
    Ok(Header {
        frag_len,
        xid,
        msgtype,
    })
}

fn udp_header(x: &mut Xdr<'_>) -> PResult<Header> {
    let xid = x.u32()?;
    let msgtype = x.u32_max(1)?;
    Ok(Header {
        frag_len: 0,
        xid,
        msgtype,
    })
}

/// The first words of a TCP call (header, RPC version, program, version, procedure).
pub fn tcp_call_head(b: &[u8]) -> PResult<(Header, [u32; 4])> {
    let mut x = Xdr::new(b);
    let h = tcp_header(&mut x)?;
    Ok((h, [x.u32()?, x.u32()?, x.u32()?, x.u32()?]))
}

fn unix_creds(b: &[u8]) -> PResult<UnixCreds> {
    let mut x = Xdr::new(b);
    let _stamp = x.u32()?;
    let n = x.u32()?;
    if n >= MAX_MACHINE_SIZE {
        return Err(Err::Bad);
    }
    let machine = x.take(n as usize)?.to_vec();
    let uid = x.u32()?;
    let gid = x.u32()?;
    Ok(UnixCreds { machine, uid, gid })
}

fn gss_creds(b: &[u8]) -> PResult<(u32, u32)> {
    let mut x = Xdr::new(b);
    let _version = x.u32()?;
    let procedure = x.u32()?;
    let _seq = x.u32()?;
    let service = x.u32()?;
    x.opaque()?;
    Ok((procedure, service))
}

/// Credentials and verifier of a call, after the procedure.
type Auth = (u32, Option<UnixCreds>, Option<(u32, u32)>);

fn call_auth(x: &mut Xdr<'_>) -> PResult<Auth> {
    let creds_flavor = x.u32()?;
    let n = x.u32()?;
    if n >= MAX_CREDS_SIZE {
        return Err(Err::Bad);
    }
    let body = x.take(n as usize)?;
    let (unix, gss) = match creds_flavor {
        1 => (Some(unix_creds(body)?), None),
        6 => (None, Some(gss_creds(body)?)),
        _ => (None, None),
    };
    let _verf_flavor = x.u32()?;
    let vn = x.u32()?;
    if vn >= MAX_VERIFIER_SIZE {
        return Err(Err::Bad);
    }
    x.take(vn as usize)?;
    Ok((creds_flavor, unix, gss))
}

/// A TCP call (marker included). `complete`: the whole fragment is in `b` (its arguments
/// are cut to it); otherwise the arguments are what is in.
pub fn tcp_call(b: &[u8], complete: bool) -> PResult<Call<'_>> {
    let start = Xdr::new(b);
    let mut x = start;
    let hdr = tcp_header(&mut x)?;
    let rec = hdr.frag_len as usize + 4;
    let rpcver = x.u32()?;
    let program = x.u32()?;
    let progver = x.u32()?;
    let procedure = x.u32()?;
    let (creds_flavor, unix, gss) = call_auth(&mut x)?;
    let used = x.used_since(&start);
    if used > rec {
        return Err(Err::Bad);
    }
    let data = if complete {
        x.take(rec - used)?
    } else {
        x.rest()
    };
    Ok(Call {
        hdr,
        rpcver,
        program,
        progver,
        procedure,
        creds_flavor,
        unix,
        gss,
        data,
    })
}

/// A TCP reply (marker included); `complete` as for [`tcp_call`].
pub fn tcp_reply(b: &[u8], complete: bool) -> PResult<Reply<'_>> {
    let start = Xdr::new(b);
    let mut x = start;
    let hdr = tcp_header(&mut x)?;
    let rec = hdr.frag_len as usize + 4;
    let reply_state = x.u32_max(1)?;
    let _verf_flavor = x.u32()?;
    let vn = x.u32()?;
    if vn >= MAX_VERIFIER_SIZE {
        return Err(Err::Bad);
    }
    x.take(vn as usize)?;
    let accept_state = x.u32()?;
    let used = x.used_since(&start);
    if used > rec {
        return Err(Err::Bad);
    }
    let data = if complete {
        x.take(rec - used)?
    } else {
        x.rest()
    };
    Ok(Reply {
        hdr,
        reply_state,
        accept_state,
        data,
    })
}

/// A UDP call (one datagram).
pub fn udp_call(b: &[u8]) -> PResult<Call<'_>> {
    let mut x = Xdr::new(b);
    let hdr = udp_header(&mut x)?;
    let rpcver = x.u32()?;
    let program = x.u32()?;
    let progver = x.u32()?;
    let procedure = x.u32()?;
    let (creds_flavor, unix, gss) = call_auth(&mut x)?;
    Ok(Call {
        hdr,
        rpcver,
        program,
        progver,
        procedure,
        creds_flavor,
        unix,
        gss,
        data: x.rest(),
    })
}

/// A UDP reply (one datagram). As Suricata's `parse_rpc_udp_reply`, the verifier is read
/// before the reply state.
pub fn udp_reply(b: &[u8]) -> PResult<Reply<'_>> {
    let mut x = Xdr::new(b);
    let hdr = udp_header(&mut x)?;
    let _verf_flavor = x.u32()?;
    let vn = x.u32()?;
    if vn >= MAX_VERIFIER_SIZE {
        return Err(Err::Bad);
    }
    x.take(vn as usize)?;
    let reply_state = x.u32_max(1)?;
    let accept_state = x.u32()?;
    Ok(Reply {
        hdr,
        reply_state,
        accept_state,
        data: x.rest(),
    })
}

/// EVE `rpc.status`.
pub fn status_string(s: u32) -> String {
    match s {
        0 => "ACCEPTED".into(),
        1 => "DENIED".into(),
        n => n.to_string(),
    }
}

/// EVE `rpc.auth_type`.
pub fn auth_type_string(a: u32) -> String {
    match a {
        0 => "NULL",
        1 => "UNIX",
        2 => "SHORT",
        3 => "DH",
        4 => "KERB",
        5 => "RSA",
        6 => "GSS",
        n => return n.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn call_bytes(xid: u32, prog: u32, ver: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [xid, 0, 2, prog, ver, proc_, 1] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        let mut creds = Vec::new();
        creds.extend_from_slice(&7u32.to_be_bytes());
        creds.extend_from_slice(&4u32.to_be_bytes());
        creds.extend_from_slice(b"host");
        creds.extend_from_slice(&1000u32.to_be_bytes());
        creds.extend_from_slice(&100u32.to_be_bytes());
        creds.extend_from_slice(&0u32.to_be_bytes());
        v.extend_from_slice(&(creds.len() as u32).to_be_bytes());
        v.extend_from_slice(&creds);
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(args);
        v
    }

    #[test]
    fn udp_call_and_creds() {
        let b = call_bytes(9, 100003, 3, 0, b"");
        let c = udp_call(&b).unwrap();
        assert_eq!(c.hdr.xid, 9);
        assert_eq!((c.program, c.progver, c.procedure), (100003, 3, 0));
        let u = c.unix.unwrap();
        assert_eq!(
            (u.machine.as_slice(), u.uid, u.gid),
            (&b"host"[..], 1000, 100)
        );
        for n in 0..b.len() {
            assert!(udp_call(&b[..n]).is_err());
        }
    }

    #[test]
    fn tcp_call_cut_to_fragment() {
        let body = call_bytes(1, 100003, 3, 1, &[0, 0, 0, 0, 1, 2, 3, 4]);
        let mut b = (0x8000_0000u32 | (body.len() as u32 - 4))
            .to_be_bytes()
            .to_vec();
        b.extend_from_slice(&body);
        let c = tcp_call(&b, true).unwrap();
        assert_eq!(c.data, &[0, 0, 0, 0]);
        assert_eq!(tcp_call(&b[..10], false).unwrap_err(), Err::Incomplete);
        let mut bad = b.clone();
        bad[0..4].copy_from_slice(&8u32.to_be_bytes());
        assert_eq!(tcp_call(&bad, true).unwrap_err(), Err::Bad);
    }
}
