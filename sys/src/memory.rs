//! Process memory housekeeping around capture start (the OS calls live in this crate, which
//! holds the project's `unsafe` FFI).

/// Returns the heap memory freed so far to the operating system (glibc `malloc_trim`).
///
/// Building the detection engine frees tens of MiB of parse trees and rule texts on the
/// thread that loaded the rules. The packet threads allocate from their own malloc arenas, so
/// that memory would otherwise stay resident for the whole run without being reused. Call it
/// once the engine is built, before capture starts. Returns whether memory was released.
pub fn release_freed_heap() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` takes a plain integer, touches only the allocator's own free
        // lists under the allocator's locks, and is safe to call at any time from any thread.
        unsafe { libc::malloc_trim(0) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn trimming_after_a_large_free_keeps_the_heap_usable() {
        let big: Vec<Vec<u8>> = (0..1024).map(|i| vec![i as u8; 4096]).collect();
        drop(big);
        let _ = super::release_freed_heap();
        let v = vec![7u8; 1 << 20];
        assert_eq!(v.iter().map(|&b| u64::from(b)).sum::<u64>(), 7 << 20);
    }
}
