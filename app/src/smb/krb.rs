//! The Kerberos ticket of an AP-REQ inside a session setup security blob (realm and service
//! name), as Suricata logs it in `smb.kerberos`.

/// One DER element: (tag, content, rest).
fn tlv(d: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, d) = d.split_first()?;
    let (&l0, d) = d.split_first()?;
    let (len, d) = if l0 < 0x80 {
        (usize::from(l0), d)
    } else {
        let n = usize::from(l0 & 0x7f);
        if n == 0 || n > 4 || d.len() < n {
            return None;
        }
        let len = d[..n]
            .iter()
            .fold(0usize, |a, &b| (a << 8) | usize::from(b));
        (len, &d[n..])
    };
    if d.len() < len {
        return None;
    }
    Some((tag, &d[..len], &d[len..]))
}

/// The members of a constructed element, by context tag ([n] -> content).
fn field(d: &[u8], want: u8) -> Option<&[u8]> {
    let mut d = d;
    while let Some((tag, c, rest)) = tlv(d) {
        if tag == 0xa0 | want {
            return Some(c);
        }
        d = rest;
    }
    None
}

/// A ticket's realm and service name parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ticket {
    /// Realm.
    pub realm: String,
    /// Service name components.
    pub snames: Vec<String>,
}

fn string(d: &[u8]) -> Option<String> {
    let (_, c, _) = tlv(d)?;
    Some(String::from_utf8_lossy(c).into_owned())
}

/// Parse an AP-REQ (`[APPLICATION 14]`) at the start of `d`.
fn ap_req(d: &[u8]) -> Option<Ticket> {
    let (0x6e, c, _) = tlv(d)? else {
        return None;
    };
    let (0x30, seq, _) = tlv(c)? else {
        return None;
    };
    let t = field(seq, 3)?;
    let (0x61, t, _) = tlv(t)? else {
        return None;
    };
    let (0x30, t, _) = tlv(t)? else {
        return None;
    };
    let realm = string(field(t, 1)?)?;
    let (0x30, pn, _) = tlv(field(t, 2)?)? else {
        return None;
    };
    let (0x30, mut names, _) = tlv(field(pn, 1)?)? else {
        return None;
    };
    let mut snames = Vec::new();
    while let Some((_, c, rest)) = tlv(names) {
        snames.push(String::from_utf8_lossy(c).into_owned());
        names = rest;
        if snames.len() >= 16 {
            break;
        }
    }
    Some(Ticket { realm, snames })
}

/// The first AP-REQ ticket found in a security blob (SPNEGO wraps it after the Kerberos
/// OID and a 2-byte token id).
pub fn find_ticket(blob: &[u8]) -> Option<Ticket> {
    (0..blob.len().min(4096))
        .filter(|&i| blob[i] == 0x6e)
        .find_map(|i| ap_req(&blob[i..]))
}
