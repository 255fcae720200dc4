//! A large read buffer over any `io::Read` that hands out records as slices of itself.
//!
//! Unlike `BufReader` + a record buffer, a record that is already in the buffer is returned
//! without a copy. The buffer refills with one `read` call per ~1 MiB and never seeks, so
//! pipes work. It only grows (rarely, and up to the caller's limit) for a single block that
//! is larger than the buffer.

use std::io::{self, Read};

/// Default buffer size: 1 MiB.
pub(crate) const DEFAULT_CAPACITY: usize = 1 << 20;

pub(crate) struct InputBuf {
    inner: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// First unconsumed byte.
    start: usize,
    /// End of the valid bytes.
    end: usize,
    /// Input offset of `buf[start]`.
    pos: u64,
    /// The reader returned 0 once; never call it again.
    eof: bool,
}

impl InputBuf {
    pub(crate) fn new(inner: Box<dyn Read + Send>, capacity: usize) -> Self {
        InputBuf {
            inner,
            buf: vec![0; capacity.max(64)],
            start: 0,
            end: 0,
            pos: 0,
            eof: false,
        }
    }

    /// Input offset of the first unconsumed byte.
    #[inline]
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// The unconsumed bytes followed by the rest of the input, as one reader (to put a
    /// decompressor in front of an input whose first bytes were already read).
    pub(crate) fn into_reader(self) -> Box<dyn Read + Send> {
        let head = self.data().to_vec();
        Box::new(io::Cursor::new(head).chain(self.inner))
    }

    /// Number of buffered, unconsumed bytes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// The buffered, unconsumed bytes.
    #[inline]
    pub(crate) fn data(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or(&[])
    }

    /// Makes at least `n` bytes available. `Ok(false)` when the input ends first; then
    /// [`InputBuf::len`] tells how many there are.
    #[inline]
    pub(crate) fn fill(&mut self, n: usize) -> io::Result<bool> {
        if self.len() >= n {
            return Ok(true);
        }
        self.fill_slow(n)
    }

    #[cold]
    #[inline(never)]
    fn fill_slow(&mut self, n: usize) -> io::Result<bool> {
        // Move the partial record to the front so the read gets the whole free space:
        // the copy is shorter than `n` and happens once per buffer-full.
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if n > self.buf.len() {
            self.buf.resize(n.next_power_of_two(), 0);
        }
        while self.end < n {
            if self.eof {
                return Ok(false);
            }
            let Some(free) = self.buf.get_mut(self.end..) else {
                return Ok(false);
            };
            match self.inner.read(free) {
                Ok(0) => self.eof = true,
                Ok(r) => self.end += r.min(free.len()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Consumes `n` buffered bytes (at most [`InputBuf::len`]) and returns them. They stay
    /// valid until the next `fill`.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.len());
        let s = self.start;
        self.start += n;
        self.pos += n as u64;
        self.buf.get(s..s + n).unwrap_or(&[])
    }

    /// Consumes `n` bytes of input without keeping them, reading (not seeking) past the
    /// buffer if needed. `Ok(false)` when the input ends first.
    pub(crate) fn skip(&mut self, mut n: u64) -> io::Result<bool> {
        loop {
            let here = (self.len() as u64).min(n) as usize;
            self.take(here);
            n -= here as u64;
            if n == 0 {
                return Ok(true);
            }
            if !self.fill(1)? {
                return Ok(false);
            }
        }
    }
}

/// Reads a `u16` at `off` in the given byte order; 0 when out of range (callers check
/// lengths first, so that never happens on a path that matters).
#[inline]
pub(crate) fn u16_at(b: &[u8], off: usize, be: bool) -> u16 {
    match b.get(off..).and_then(|s| s.first_chunk::<2>()) {
        Some(a) if be => u16::from_be_bytes(*a),
        Some(a) => u16::from_le_bytes(*a),
        None => 0,
    }
}

/// Reads a `u32` at `off` in the given byte order; 0 when out of range.
#[inline]
pub(crate) fn u32_at(b: &[u8], off: usize, be: bool) -> u32 {
    match b.get(off..).and_then(|s| s.first_chunk::<4>()) {
        Some(a) if be => u32::from_be_bytes(*a),
        Some(a) => u32::from_le_bytes(*a),
        None => 0,
    }
}

/// Reads an `i64` at `off` in the given byte order; 0 when out of range.
#[inline]
pub(crate) fn i64_at(b: &[u8], off: usize, be: bool) -> i64 {
    match b.get(off..).and_then(|s| s.first_chunk::<8>()) {
        Some(a) if be => i64::from_be_bytes(*a),
        Some(a) => i64::from_le_bytes(*a),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Returns at most `step` bytes per read.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn fill_take_skip_across_refills_and_growth() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let r = Trickle {
            data: data.clone(),
            at: 0,
            step: 7,
        };
        let mut b = InputBuf::new(Box::new(r), 64);
        assert!(b.fill(10).unwrap());
        assert_eq!(b.take(10), &data[..10]);
        assert_eq!(b.pos(), 10);
        // Larger than the buffer: it grows.
        assert!(b.fill(100).unwrap());
        assert_eq!(b.take(100), &data[10..110]);
        assert!(b.skip(500).unwrap());
        assert_eq!(b.pos(), 610);
        assert!(b.fill(3).unwrap());
        assert_eq!(&b.data()[..3], &data[610..613]);
        assert!(!b.fill(1000).unwrap());
        assert_eq!(b.len(), 390);
        assert!(!b.skip(391).unwrap());
        assert_eq!(b.pos(), 1000);
        assert_eq!(b.len(), 0);
        assert!(!b.fill(1).unwrap());
    }
}
