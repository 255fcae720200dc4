//! RFC 1071 internet checksum, with IPv4/IPv6 pseudo-headers.

/// One's-complement sum of `data` (big-endian 16-bit words, odd byte padded) added to `acc`.
/// The result is not folded; call [`fold`].
#[inline]
pub fn sum(data: &[u8], mut acc: u64) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let v = u64::from_be_bytes(w);
        // Add the two 32-bit halves; carries accumulate in the upper bits of `acc`.
        acc += v >> 32;
        acc += v & 0xffff_ffff;
    }
    let rest = chunks.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [b] = pairs.remainder() {
        acc += u64::from(*b) << 8;
    }
    acc
}

/// Folds a sum to 16 bits (one's complement addition of the carries).
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Whether `data` (a header including its checksum field) sums to 0xffff, i.e. is valid.
#[inline]
pub fn verify(data: &[u8]) -> bool {
    fold(sum(data, 0)) == 0xffff
}

/// Pseudo-header sum for IPv4 (src, dst, proto, length).
#[inline]
pub fn pseudo_v4(src: &[u8], dst: &[u8], proto: u8, len: usize) -> u64 {
    let acc = sum(src, 0);
    let acc = sum(dst, acc);
    acc + u64::from(proto) + len as u64
}

/// Pseudo-header sum for IPv6 (src, dst, upper-layer length, next header).
#[inline]
pub fn pseudo_v6(src: &[u8], dst: &[u8], proto: u8, len: usize) -> u64 {
    let acc = sum(src, 0);
    let acc = sum(dst, acc);
    acc + u64::from(proto) + len as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_checksum() {
        // A well-known IPv4 header (checksum 0xb861).
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert!(verify(&h));
        let mut bad = h;
        bad[11] ^= 1;
        assert!(!verify(&bad));
    }

    #[test]
    fn odd_lengths_match_naive() {
        for len in 0..40usize {
            let d: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let mut naive: u64 = 0;
            for (i, b) in d.iter().enumerate() {
                naive += if i % 2 == 0 {
                    u64::from(*b) << 8
                } else {
                    u64::from(*b)
                };
            }
            assert_eq!(fold(sum(&d, 0)), fold(naive), "len {len}");
        }
    }
}
