//! Sorted, merged inclusive integer range sets: the compiled form of address
//! and port specifications.

/// Integer types usable in a [`RangeSet`].
pub trait RangeInt: Copy + Ord + std::fmt::Debug {
    /// Smallest value.
    const MIN: Self;
    /// Largest value.
    const MAX: Self;
    /// `self + 1` unless at the maximum.
    fn succ(self) -> Option<Self>;
    /// `self - 1` unless at the minimum.
    fn pred(self) -> Option<Self>;
}

macro_rules! impl_range_int {
    ($($t:ty),*) => {$(
        impl RangeInt for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            fn succ(self) -> Option<Self> { self.checked_add(1) }
            fn pred(self) -> Option<Self> { self.checked_sub(1) }
        }
    )*};
}
impl_range_int!(u16, u32, u128);

/// A set of integers stored as sorted, non-overlapping, non-adjacent
/// inclusive ranges. Lookup is a binary search.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RangeSet<T: RangeInt> {
    ranges: Vec<(T, T)>,
}

impl<T: RangeInt> RangeSet<T> {
    /// The empty set.
    pub fn empty() -> Self {
        RangeSet { ranges: Vec::new() }
    }

    /// The set of every value.
    pub fn full() -> Self {
        RangeSet {
            ranges: vec![(T::MIN, T::MAX)],
        }
    }

    /// Builds a normalised set from arbitrary inclusive ranges (`lo > hi`
    /// ranges are dropped).
    pub fn from_ranges(mut v: Vec<(T, T)>) -> Self {
        v.retain(|(a, b)| a <= b);
        v.sort_unstable();
        let mut out: Vec<(T, T)> = Vec::with_capacity(v.len());
        for (a, b) in v {
            if let Some(last) = out.last_mut() {
                let touches = match last.1.succ() {
                    Some(n) => a <= n,
                    None => true,
                };
                if touches {
                    if b > last.1 {
                        last.1 = b;
                    }
                    continue;
                }
            }
            out.push((a, b));
        }
        RangeSet { ranges: out }
    }

    /// The normalised ranges.
    pub fn ranges(&self) -> &[(T, T)] {
        &self.ranges
    }

    /// True when the set holds nothing.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// True when the set holds every value.
    pub fn is_full(&self) -> bool {
        self.ranges.len() == 1 && self.ranges[0] == (T::MIN, T::MAX)
    }

    /// Membership test (binary search).
    #[inline]
    pub fn contains(&self, v: T) -> bool {
        // Index of the first range whose start is > v; the candidate is the one before.
        let idx = self.ranges.partition_point(|&(a, _)| a <= v);
        match idx.checked_sub(1).and_then(|i| self.ranges.get(i)) {
            Some(&(_, b)) => v <= b,
            None => false,
        }
    }

    /// Set union.
    pub fn union(&self, other: &Self) -> Self {
        let mut v = self.ranges.clone();
        v.extend_from_slice(&other.ranges);
        Self::from_ranges(v)
    }

    /// Complement over the whole value space.
    pub fn complement(&self) -> Self {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = Some(T::MIN);
        for &(a, b) in &self.ranges {
            if let Some(n) = next {
                if a > n {
                    if let Some(p) = a.pred() {
                        out.push((n, p));
                    }
                }
            }
            next = b.succ();
        }
        if let Some(n) = next {
            out.push((n, T::MAX));
        }
        RangeSet { ranges: out }
    }

    /// Set difference `self - other`.
    pub fn subtract(&self, other: &Self) -> Self {
        self.intersect(&other.complement())
    }

    /// Set intersection.
    pub fn intersect(&self, other: &Self) -> Self {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while let (Some(&(a1, b1)), Some(&(a2, b2))) = (self.ranges.get(i), other.ranges.get(j)) {
            let lo = a1.max(a2);
            let hi = b1.min(b2);
            if lo <= hi {
                out.push((lo, hi));
            }
            if b1 < b2 {
                i += 1;
            } else {
                j += 1;
            }
        }
        RangeSet { ranges: out }
    }
}
