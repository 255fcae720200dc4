//! IKEv1 (ISAKMP) payloads as Suricata 7 decodes them (`rust/src/ike/parser.rs`): the
//! payload chain, security associations with their proposals and transforms (the SA
//! attributes), key exchange, nonce and vendor id payloads.

/// The fixed ISAKMP header (IKEv1 and IKEv2 share it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IsakmpHeader {
    /// Initiator SPI.
    pub init_spi: u64,
    /// Responder SPI.
    pub resp_spi: u64,
    /// First payload type.
    pub next_payload: u8,
    /// Major version.
    pub maj_ver: u8,
    /// Minor version.
    pub min_ver: u8,
    /// Exchange type.
    pub exch_type: u8,
    /// Flags.
    pub flags: u8,
    /// Message id.
    pub msg_id: u32,
    /// Length of the message.
    pub length: u32,
}

fn be16(d: &[u8]) -> u16 {
    u16::from_be_bytes([d[0], d[1]])
}

fn be32(d: &[u8]) -> u32 {
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// The 28-byte header and what follows it.
pub fn parse_header(d: &[u8]) -> Option<(IsakmpHeader, &[u8])> {
    if d.len() < 28 {
        return None;
    }
    let h = IsakmpHeader {
        init_spi: u64::from_be_bytes(d[0..8].try_into().ok()?),
        resp_spi: u64::from_be_bytes(d[8..16].try_into().ok()?),
        next_payload: d[16],
        maj_ver: d[17] >> 4,
        min_ver: d[17] & 0x0f,
        exch_type: d[18],
        flags: d[19],
        msg_id: be32(&d[20..24]),
        length: be32(&d[24..28]),
    };
    Some((h, &d[28..]))
}

/// One generic payload: next payload type and body.
pub struct Payload<'a> {
    /// The type of the payload after this one.
    pub next: u8,
    /// The body (after the 4-byte generic header).
    pub data: &'a [u8],
}

/// Suricata's `parse_ikev1_payload_list`: whole payloads while they fit (a length below 4
/// gives an empty body); returns them and the bytes left over.
pub fn payload_list(mut i: &[u8]) -> (Vec<Payload<'_>>, &[u8]) {
    let mut v = Vec::new();
    while i.len() >= 4 {
        let len = usize::from(be16(&i[2..4]));
        let body_len = len.saturating_sub(4);
        let Some(data) = i.get(4..4 + body_len) else {
            break;
        };
        v.push(Payload { next: i[0], data });
        i = &i[4 + body_len..];
    }
    (v, i)
}

/// One SA attribute of a transform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaAttribute {
    /// Attribute type (15 bits).
    pub atype: u16,
    /// The value's name (`EncAesCbc`, `Unknown`).
    pub value: &'static str,
    /// TV value or a 4-byte TLV value.
    pub numeric: Option<u32>,
    /// Other TLV value, hex.
    pub hex: Option<String>,
}

/// The attribute type's name in EVE and in `ike.chosen_sa_attribute`.
pub fn attribute_name(t: u16) -> &'static str {
    match t {
        1 => "alg_enc",
        2 => "alg_hash",
        3 => "alg_auth",
        4 => "alg_dh",
        5 => "sa_group_type",
        6 => "sa_group_prime",
        7 => "sa_group_generator_one",
        8 => "sa_group_generator_two",
        9 => "sa_group_curve_a",
        10 => "sa_group_curve_b",
        11 => "sa_life_type",
        12 => "sa_life_duration",
        13 => "alg_prf",
        14 => "sa_key_length",
        15 => "sa_field_size",
        16 => "sa_group_order",
        _ => "unknown",
    }
}

fn value_name(t: u16, v: u16) -> &'static str {
    let name = match t {
        1 => match v {
            1 => "EncDesCbc",
            2 => "EncIdeaCbc",
            3 => "EncBlowfishCbc",
            4 => "EncRc5R16B64Cbc",
            5 => "EncTripleDesCbc",
            6 => "EncCastCbc",
            7 => "EncAesCbc",
            8 => "EncCamelliaCbc",
            _ => "",
        },
        2 => match v {
            1 => "HashMd5",
            2 => "HashSha",
            3 => "HashTiger",
            4 => "HashSha2_256",
            5 => "HashSha2_384",
            6 => "HashSha2_512",
            _ => "",
        },
        3 => match v {
            1 => "AuthPreSharedKey",
            2 => "AuthDssSignatures",
            3 => "AuthRsaSignatures",
            4 => "AuthEncryptionWithRsa",
            5 => "AuthRevisedEncryptionWithRsa",
            6..=8 => "AuthReserved",
            9 => "AuthEcdsaSha256",
            10 => "AuthEcdsaSha384",
            11 => "AuthEcdsaSha512",
            _ => "",
        },
        4 => match v {
            1 => "GroupDefault768BitModp",
            2 => "GroupAlternate1024BitModpGroup",
            3 => "GroupEc2nOnGp2p155",
            4 => "GroupEc2nOnGp2p185",
            5 => "GroupModp1536Bit",
            6 | 7 => "GroupEc2nOverGf2p163",
            8 | 9 => "GroupEc2nOverGf2p283",
            10 | 11 => "GroupEc2nOverGf2p409",
            12 | 13 => "GroupEc2nOverGf2p571",
            14 => "GroupModp2048Bit",
            15 => "GroupModp3072Bit",
            16 => "GroupModp4096Bit",
            17 => "GroupModp6144Bit",
            18 => "GroupModp8192Bit",
            19 => "GroupRandomEcp256",
            20 => "GroupRandomEcp384",
            21 => "GroupRandomEcp521",
            22 => "GroupModp1024With160BitPrime",
            23 => "GroupModp2048With224BitPrime",
            24 => "GroupModp2048With256BitPrime",
            25 => "GroupRandomEcp192",
            26 => "GroupRandomEcp224",
            27 => "GroupBrainpoolEcp224",
            28 => "GroupBrainpoolEcp256",
            29 => "GroupBrainpoolEcp384",
            30 => "GroupBrainpoolEcp512",
            _ => "",
        },
        11 => match v {
            1 => "LifeTypeSeconds",
            2 => "LifeTypeKilobytes",
            _ => "",
        },
        _ => "",
    };
    if name.is_empty() {
        "Unknown"
    } else {
        name
    }
}

fn hex(d: &[u8]) -> String {
    let mut s = String::with_capacity(d.len() * 2);
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Suricata's `parse_sa_attribute`: attributes while whole ones are left.
pub fn sa_attributes(mut i: &[u8]) -> Vec<SaAttribute> {
    let mut v = Vec::new();
    while i.len() >= 4 {
        let b = be16(i);
        let tv = b >> 15 == 1;
        let atype = b & 0x7fff;
        let lv = be16(&i[2..4]);
        let rest = &i[4..];
        let (numeric, hex_value, used) = if tv {
            (Some(u32::from(lv)), None, 0)
        } else if lv == 4 {
            let Some(n) = rest.get(..4) else {
                break;
            };
            (Some(be32(n)), None, 4)
        } else {
            let Some(d) = rest.get(..usize::from(lv)) else {
                break;
            };
            (None, Some(hex(d)), usize::from(lv))
        };
        v.push(SaAttribute {
            atype,
            value: value_name(atype, lv),
            numeric,
            hex: hex_value,
        });
        i = &rest[used..];
    }
    v
}

/// What one IKEv1 message carries.
#[derive(Debug, Default)]
pub struct V1Payloads {
    /// Domain of interpretation of the last SA (a flow-level value in Suricata).
    pub doi: Option<u32>,
    /// Key exchange data.
    pub key_exchange: Vec<u8>,
    /// Nonce data.
    pub nonce: Vec<u8>,
    /// Transforms (their attributes).
    pub transforms: Vec<Vec<SaAttribute>>,
    /// Vendor ids, hex.
    pub vendor_ids: Vec<String>,
    /// Payload types seen, first-seen order.
    pub types: Vec<u8>,
}

/// Payload type names (`IsakmpPayloadType`), for the EVE `payload` list.
pub fn payload_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "None",
        1 => "SecurityAssociation",
        2 => "Proposal",
        3 => "Transform",
        4 => "KeyExchange",
        5 => "Identification",
        6 => "Certificate",
        7 => "CertificateRequest",
        8 => "Hash",
        9 => "Signature",
        10 => "Nonce",
        11 => "Notification",
        12 => "Delete",
        13 => "VendorID",
        15 => "SaKekPayload",
        16 => "SaTekPayload",
        17 => "KeyDownload",
        18 => "SequenceNumber",
        19 => "ProofOfPossession",
        20 => "NatDiscovery",
        21 => "NatOriginalAddress",
        22 => "GroupAssociatedPolicy",
        _ => return None,
    })
}

/// Most nested payload levels followed (SA > proposal > transform is 3).
const MAX_DEPTH: u8 = 8;

impl V1Payloads {
    fn note_type(&mut self, t: u8) {
        if !self.types.contains(&t) {
            self.types.push(t);
        }
    }

    /// Suricata's `parse_payload` for payload type `t`; false on an SA or proposal that
    /// does not decode.
    pub fn payload(&mut self, t: u8, data: &[u8], depth: u8) -> bool {
        self.note_type(t);
        if depth > MAX_DEPTH {
            return true;
        }
        match t {
            1 => self.security_association(data, depth),
            2 => self.proposal(data, depth),
            3 => {
                // Transform number, id and reserved, then the attributes.
                if let Some(attrs) = data.get(4..) {
                    self.transforms.push(sa_attributes(attrs));
                }
                true
            }
            4 => {
                self.key_exchange = data.to_vec();
                true
            }
            10 => {
                self.nonce = data.to_vec();
                true
            }
            13 => {
                self.vendor_ids.push(hex(data));
                true
            }
            _ => true,
        }
    }

    fn chain(&mut self, first: u8, data: &[u8], depth: u8) -> bool {
        let (list, _) = payload_list(data);
        let mut cur = first;
        for p in list {
            if !self.payload(cur, p.data, depth + 1) {
                return false;
            }
            cur = p.next;
        }
        true
    }

    fn security_association(&mut self, data: &[u8], depth: u8) -> bool {
        if data.len() < 4 {
            return false;
        }
        let doi = be32(data);
        self.doi = Some(doi);
        if doi != 1 {
            return true;
        }
        if data.len() < 8 {
            return false;
        }
        self.chain(2, &data[8..], depth)
    }

    fn proposal(&mut self, data: &[u8], depth: u8) -> bool {
        if data.len() < 4 {
            return false;
        }
        let spi_size = usize::from(data[2]);
        if data.len() < 4 + spi_size {
            return false;
        }
        self.chain(3, &data[4 + spi_size..], depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_tv_and_tlv() {
        // TV alg_enc=7, TLV life duration 4 bytes, TLV 2 bytes.
        let d = [
            0x80, 0x01, 0x00, 0x07, 0x00, 0x0c, 0x00, 0x04, 0x00, 0x01, 0x51, 0x80, 0x00, 0x06,
            0x00, 0x02, 0xab, 0xcd, 0x80,
        ];
        let a = sa_attributes(&d);
        assert_eq!(a.len(), 3);
        assert_eq!(
            (a[0].atype, a[0].value, a[0].numeric),
            (1, "EncAesCbc", Some(7))
        );
        assert_eq!(
            (attribute_name(a[1].atype), a[1].numeric),
            ("sa_life_duration", Some(86400))
        );
        assert_eq!(a[2].hex.as_deref(), Some("abcd"));
    }

    #[test]
    fn sa_proposal_transform_chain() {
        let transform = [0u8, 0, 0, 12, 1, 1, 0, 0, 0x80, 0x01, 0x00, 0x05];
        let mut proposal = vec![0u8, 0, 0, (8 + transform.len()) as u8, 1, 1, 0, 1];
        proposal.extend_from_slice(&transform);
        let mut sa = vec![0, 0, 0, 1, 0, 0, 0, 1];
        sa.extend_from_slice(&proposal);
        let mut p = V1Payloads::default();
        assert!(p.payload(1, &sa, 0));
        assert_eq!(p.doi, Some(1));
        assert_eq!(p.transforms.len(), 1);
        assert_eq!(p.transforms[0][0].value, "EncTripleDesCbc");
        assert_eq!(p.types, [1, 2, 3]);
        for n in 0..sa.len() {
            let mut q = V1Payloads::default();
            let _ = q.payload(1, &sa[..n], 0);
        }
    }
}
