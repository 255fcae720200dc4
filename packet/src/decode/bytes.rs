//! Panic-free big-endian field reads.
//!
//! Every read returns 0 when the field lies outside the slice. The decoder checks lengths
//! first, so in practice the fallback never triggers; it only guarantees that no input can
//! make an accessor panic.

/// Byte range of a header field, smoltcp style.
pub type Field = std::ops::Range<usize>;

/// Byte at `off`, or 0.
#[inline(always)]
pub fn u8_at(d: &[u8], off: usize) -> u8 {
    d.get(off).copied().unwrap_or(0)
}

/// Big-endian u16 at `off`, or 0.
#[inline(always)]
pub fn be16(d: &[u8], off: usize) -> u16 {
    match d.get(off..off.wrapping_add(2)) {
        Some(&[a, b]) => u16::from_be_bytes([a, b]),
        _ => 0,
    }
}

/// Big-endian u32 at `off`, or 0.
#[inline(always)]
pub fn be32(d: &[u8], off: usize) -> u32 {
    match d.get(off..off.wrapping_add(4)) {
        Some(&[a, b, c, e]) => u32::from_be_bytes([a, b, c, e]),
        _ => 0,
    }
}

/// Little-endian u32 at `off`, or 0.
#[inline(always)]
pub fn le32(d: &[u8], off: usize) -> u32 {
    match d.get(off..off.wrapping_add(4)) {
        Some(&[a, b, c, e]) => u32::from_le_bytes([a, b, c, e]),
        _ => 0,
    }
}

/// Copies `N` bytes at `off` into an array (zeros when out of range).
#[inline(always)]
pub fn array<const N: usize>(d: &[u8], off: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(s) = d.get(off..off.wrapping_add(N)) {
        out.copy_from_slice(s);
    }
    out
}

/// Copies 4 (IPv4) or 16 (IPv6) address bytes at `off` into a 16-byte slot.
#[inline(always)]
pub fn addr16(d: &[u8], off: usize, len: usize) -> [u8; 16] {
    let mut out = [0u8; 16];
    if let (Some(s), Some(dst)) = (d.get(off..off.wrapping_add(len)), out.get_mut(..len)) {
        dst.copy_from_slice(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_never_panic() {
        let d = [1u8, 2, 3];
        assert_eq!(be16(&d, 0), 0x0102);
        assert_eq!(be16(&d, 2), 0);
        assert_eq!(be16(&d, usize::MAX), 0);
        assert_eq!(be32(&d, 0), 0);
        assert_eq!(u8_at(&d, 9), 0);
        assert_eq!(array::<2>(&d, 1), [2, 3]);
        assert_eq!(array::<4>(&d, 1), [0; 4]);
        assert_eq!(addr16(&[9, 8, 7, 6], 0, 4)[..5], [9, 8, 7, 6, 0]);
        assert_eq!(le32(&[1, 0, 0, 0], 0), 1);
    }
}
