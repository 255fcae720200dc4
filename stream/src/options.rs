//! TCP options the stream engine needs, read from the packet bytes through the decoder's
//! [`Tcp`] view (the decoder validated lengths; this only extracts values).

use shrike_packet::decode::{flags, PacketMeta, Tcp, TcpOption};

/// TFO option kind and the experimental kind with the TFO magic.
const TFO: u8 = 34;
const EXP: u8 = 254;

/// Option values of one segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TcpOpts {
    /// Window scale shift (capped at 14).
    pub wscale: Option<u8>,
    /// SACK permitted.
    pub sackok: bool,
    /// Timestamps (value, echo reply).
    pub ts: Option<(u32, u32)>,
    /// TCP fast open cookie option.
    pub tfo: bool,
    /// SACK blocks present.
    pub sack: bool,
    /// A TCP MD5 signature (RFC 2385) or TCP-AO (RFC 5925) option: a RST carrying one may
    /// be refused by the receiver, which cannot be known (Suricata's
    /// `md5_option_present` / `ao_option_present`).
    pub auth: bool,
}

/// Reads the options of the TCP segment described by `meta` in `pkt`.
pub(crate) fn read(meta: &PacketMeta, pkt: &[u8]) -> TcpOpts {
    let mut o = TcpOpts::default();
    if !meta.has(flags::TCP_OPTS) {
        return o;
    }
    let Some(tcp) = Tcp::from_meta(meta, pkt) else {
        return o;
    };
    for opt in tcp.options() {
        match opt {
            TcpOption::WindowScale(s) => o.wscale = Some(s.min(14)),
            TcpOption::SackPermitted => o.sackok = true,
            TcpOption::Timestamps(v, e) => o.ts = Some((v, e)),
            TcpOption::Sack(_) => o.sack = true,
            TcpOption::Other(TFO, _) => o.tfo = true,
            TcpOption::Other(19, d) if d.len() == 16 => o.auth = true,
            TcpOption::Other(29, d) if d.len() >= 2 => o.auth = true,
            TcpOption::Other(EXP, d) if d.get(..2) == Some(&[0xf9, 0x89]) => o.tfo = true,
            _ => {}
        }
    }
    o
}
