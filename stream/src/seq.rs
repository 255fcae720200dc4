//! TCP sequence-space comparisons (RFC 1982 serial arithmetic on u32).

/// `a < b` in sequence space.
#[inline(always)]
pub fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a <= b` in sequence space.
#[inline(always)]
pub fn leq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

/// `a > b` in sequence space.
#[inline(always)]
pub fn gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `a >= b` in sequence space.
#[inline(always)]
pub fn geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// The later of two sequence numbers.
#[inline(always)]
pub fn max(a: u32, b: u32) -> u32 {
    if gt(a, b) {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps() {
        assert!(lt(u32::MAX, 0));
        assert!(gt(5, u32::MAX - 5));
        assert!(leq(7, 7) && geq(7, 7));
        assert_eq!(max(u32::MAX, 3), 3);
    }
}
