//! Hex forms shared by protocol records.

/// Colon-separated hex of `b` (`upper` selects the case).
pub fn colon_hex(b: &[u8], upper: bool) -> String {
    let digits: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(':');
        }
        s.push(digits[(x >> 4) as usize] as char);
        s.push(digits[(x & 0xf) as usize] as char);
    }
    s
}
