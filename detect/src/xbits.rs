//! `xbits:<cmd>,<name>,track <ip_src|ip_dst|ip_pair>[,expire <secs>]` (Suricata 7's
//! `detect-xbits.c`): host bits (`ip_src`/`ip_dst`, shared with `hostbits`) and IP-pair bits
//! with a per-keyword expiry (default 30 s). The bits live in [`super::hostbits::HostBits`].

use shrike_rules::parse::keywords::{BitCmd, XbitTrack, Xbits};

use super::compile::SkipReason;
use super::hostbits::{HostBit, HostCmd, Track, XBITS_EXPIRE_DEFAULT};

/// Compile one `xbits` keyword: `Ok(None)` for `noalert` (the rule does not alert).
/// `id` maps a bit name to its id (the host-bit name space).
pub(crate) fn compile(
    x: &Xbits,
    id: &mut dyn FnMut(&str) -> u32,
) -> Result<Option<HostBit>, SkipReason> {
    let cmd = match x.cmd {
        BitCmd::NoAlert => return Ok(None),
        BitCmd::Set => HostCmd::Set,
        BitCmd::Unset => HostCmd::Unset,
        BitCmd::Toggle => HostCmd::Toggle,
        BitCmd::IsSet => HostCmd::IsSet,
        BitCmd::IsNotSet => HostCmd::IsNotSet,
    };
    let expire = match x.expire {
        None => XBITS_EXPIRE_DEFAULT,
        // Suricata: "expire must be bigger than 0".
        Some(0) => return Err(SkipReason::Invalid(format!("xbits:{},expire 0", x.name))),
        Some(e) => e,
    };
    let track = match x.track {
        XbitTrack::IpSrc => Track::Src,
        XbitTrack::IpDst => Track::Dst,
        XbitTrack::IpPair => Track::Pair,
    };
    Ok(Some(HostBit {
        cmd,
        id: id(&x.name),
        track,
        expire,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xb(cmd: BitCmd, track: XbitTrack, expire: Option<u32>) -> Xbits {
        Xbits {
            cmd,
            name: "b".into(),
            track,
            expire,
        }
    }

    #[test]
    fn compile_forms() {
        let mut id = |_: &str| 7;
        let b = compile(&xb(BitCmd::Set, XbitTrack::IpPair, Some(60)), &mut id)
            .unwrap()
            .unwrap();
        assert_eq!(
            b,
            HostBit {
                cmd: HostCmd::Set,
                id: 7,
                track: Track::Pair,
                expire: 60
            }
        );
        let b = compile(&xb(BitCmd::IsSet, XbitTrack::IpDst, None), &mut id)
            .unwrap()
            .unwrap();
        assert_eq!((b.track, b.expire), (Track::Dst, XBITS_EXPIRE_DEFAULT));
        assert!(
            compile(&xb(BitCmd::NoAlert, XbitTrack::IpSrc, None), &mut id)
                .unwrap()
                .is_none()
        );
        assert!(compile(&xb(BitCmd::Set, XbitTrack::IpSrc, Some(0)), &mut id).is_err());
    }
}
