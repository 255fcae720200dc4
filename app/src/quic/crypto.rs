//! QUIC Initial packet protection (RFC 9001 section 5, RFC 9369 for v2): the keys derived
//! from the client's first destination connection id, header protection removal and
//! AES-128-GCM payload decryption, with RustCrypto's `hkdf`, `aes` and `aes-gcm`.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use aes_gcm::{AeadInOut, Aes128Gcm};
use hkdf::Hkdf;
use sha2::Sha256;

/// QUIC version 2 (RFC 9369).
pub const VERSION_2: u32 = 0x6b33_43cf;

const TAG_LEN: usize = 16;

/// The keys of one direction.
pub struct DirKeys {
    hp: aes::Aes128,
    key: Aes128Gcm,
    iv: [u8; 12],
}

/// Client (to server) and server (to client) Initial keys.
pub struct InitialKeys {
    /// Keys of packets the client sends.
    pub client: DirKeys,
    /// Keys of packets the server sends.
    pub server: DirKeys,
}

impl std::fmt::Debug for InitialKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InitialKeys")
    }
}

fn expand_label(hk: &Hkdf<Sha256>, label: &[u8], out: &mut [u8]) -> Option<()> {
    let len = u16::try_from(out.len()).ok()?.to_be_bytes();
    let label_len = [u8::try_from(6 + label.len()).ok()?];
    hk.expand_multi_info(&[&len, &label_len, b"tls13 ", label, &[0]], out)
        .ok()
}

impl DirKeys {
    fn new(secret: &[u8], version: u32) -> Option<DirKeys> {
        let hk = Hkdf::<Sha256>::from_prk(secret).ok()?;
        let v2 = version == VERSION_2;
        let mut key = [0u8; 16];
        let mut iv = [0u8; 12];
        let mut hp = [0u8; 16];
        expand_label(&hk, if v2 { b"quicv2 key" } else { b"quic key" }, &mut key)?;
        expand_label(&hk, if v2 { b"quicv2 iv" } else { b"quic iv" }, &mut iv)?;
        expand_label(&hk, if v2 { b"quicv2 hp" } else { b"quic hp" }, &mut hp)?;
        Some(DirKeys {
            hp: aes::Aes128::new_from_slice(&hp).ok()?,
            key: Aes128Gcm::new_from_slice(&key).ok()?,
            iv,
        })
    }

    /// The header protection mask of a 16-byte sample.
    pub fn mask(&self, sample: &[u8; 16]) -> [u8; 16] {
        let mut block = aes::Block::from(*sample);
        self.hp.encrypt_block(&mut block);
        block.into()
    }

    /// Decrypt `payload` (ciphertext and tag) in place; returns the plaintext length.
    pub fn open(&self, pn: u64, aad: &[u8], payload: &mut [u8]) -> Option<usize> {
        let n = payload.len().checked_sub(TAG_LEN)?;
        let mut nonce = self.iv;
        for (b, p) in nonce[4..].iter_mut().zip(pn.to_be_bytes()) {
            *b ^= p;
        }
        let (text, tag) = payload.split_at_mut(n);
        let tag = aes_gcm::Tag::try_from(&*tag).ok()?;
        let nonce = aes_gcm::Nonce::from(nonce);
        self.key
            .decrypt_inout_detached(&nonce, aad, text.into(), &tag)
            .ok()?;
        Some(n)
    }
}

/// The Initial keys of `version` for the client's destination connection id `dcid`, when
/// the version's salt is known (Suricata's list: Q050, drafts 23 to 34, mvfst, v1, v2).
pub fn initial_keys(version: u32, dcid: &[u8]) -> Option<InitialKeys> {
    let salt: &[u8] = match version {
        0x5130_3530 => &[
            0x50, 0x45, 0x74, 0xEF, 0xD0, 0x66, 0xFE, 0x2F, 0x9D, 0x94, 0x5C, 0xFC, 0xDB, 0xD3,
            0xA7, 0xF0, 0xD3, 0xB5, 0x6B, 0x45,
        ],
        0xff00_001d..=0xff00_0020 => &[
            0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97, 0x86, 0xf1, 0x9c, 0x61,
            0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99,
        ],
        0xface_b002 | 0xff00_0017..=0xff00_001c => &[
            0xc3, 0xee, 0xf7, 0x12, 0xc7, 0x2e, 0xbb, 0x5a, 0x11, 0xa7, 0xd2, 0x43, 0x2b, 0xb4,
            0x63, 0x65, 0xbe, 0xf9, 0xf5, 0x02,
        ],
        0x0000_0001 | 0xff00_0021..=0xff00_0022 => &[
            0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8,
            0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
        ],
        VERSION_2 => &[
            0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26,
            0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
        ],
        _ => return None,
    };
    let hk = Hkdf::<Sha256>::new(Some(salt), dcid);
    let mut cs = [0u8; 32];
    let mut ss = [0u8; 32];
    expand_label(&hk, b"client in", &mut cs)?;
    expand_label(&hk, b"server in", &mut ss)?;
    Some(InitialKeys {
        client: DirKeys::new(&cs, version)?,
        server: DirKeys::new(&ss, version)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 9001 appendix A.2: the client Initial's header protection mask.
    #[test]
    fn rfc9001_client_mask() {
        let k = initial_keys(1, &hex("8394c8f03e515708")).unwrap();
        let sample: [u8; 16] = hex("d1b1c98dd7689fb8ec11d242b123dc9b").try_into().unwrap();
        assert_eq!(k.client.mask(&sample)[..5], hex("437b9aec36")[..]);
        assert_eq!(k.client.iv[..], hex("fa044b2f42a3fd3b46fb255c")[..]);
    }

    #[test]
    fn unknown_versions_have_no_keys_and_short_payloads_fail() {
        assert!(initial_keys(0x1234_5678, b"abc").is_none());
        let k = initial_keys(1, b"").unwrap();
        assert!(k.client.open(0, b"", &mut [0u8; 5]).is_none());
        assert!(k.client.open(0, b"", &mut [0u8; 40]).is_none());
    }
}
