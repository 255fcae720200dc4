//! Network namespaces.

use std::io;

/// Moves the calling thread into the named network namespace (`/run/netns/NAME`, as created by
/// `ip netns add`). Sockets opened afterwards by this thread live in that namespace and keep
/// it when moved to other threads. Used by the tests; also lets a sensor capture inside a
/// container's namespace.
pub fn enter_netns(name: &str) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let path = if name.contains('/') {
        std::path::PathBuf::from(name)
    } else {
        std::path::Path::new("/run/netns").join(name)
    };
    let f = std::fs::File::open(&path)?;
    // SAFETY: `f` is an open namespace file descriptor for the duration of the call; setns
    // only changes the calling thread's network namespace.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
