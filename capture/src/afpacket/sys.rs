//! Thin wrappers over the system calls of an AF_PACKET socket: options, interface look-ups and
//! the mmap'ed ring. Every `unsafe` block of the AF_PACKET source outside the ring walk is here.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

/// `htons(ETH_P_ALL)`.
pub(crate) const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0)`: protocol 0, so nothing is received
/// until `bind` names the interface and ETH_P_ALL (no packets from other interfaces leak
/// into the ring while it is set up).
pub(crate) fn packet_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain system call with constant arguments.
    let fd = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(fd, level, opt, &val)`.
pub(crate) fn setsockopt<T>(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    val: &T,
) -> io::Result<()> {
    // SAFETY: `val` points to a live `T` of the size passed; the kernel only reads it.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Plain C data that any bit pattern (all zeroes included) makes valid.
pub(crate) trait Pod: Copy {}
impl Pod for libc::c_int {}
impl Pod for libc::tpacket_stats_v3 {}

/// `getsockopt(fd, level, opt)` into a plain-data `T`.
pub(crate) fn getsockopt<T: Pod>(fd: RawFd, level: libc::c_int, opt: libc::c_int) -> io::Result<T> {
    // SAFETY: `T: Pod`, so all-zero is a valid value.
    let mut val: T = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `val` is a writable `T` and `len` its size; the kernel writes at most `len` bytes.
    cvt(unsafe { libc::getsockopt(fd, level, opt, (&mut val as *mut T).cast(), &mut len) })?;
    Ok(val)
}

/// The ifindex of `name` in the calling thread's network namespace, or `None`.
pub(crate) fn ifindex(name: &str) -> Option<i32> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return None;
    }
    let c = CString::new(name).ok()?;
    // SAFETY: `c` is a NUL-terminated string shorter than IFNAMSIZ.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (idx != 0).then_some(idx as i32)
}

/// The interface flags (`IFF_UP`, `IFF_RUNNING` …) via `SIOCGIFFLAGS` on `fd`.
pub(crate) fn if_flags(fd: RawFd, name: &str) -> io::Result<libc::c_int> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq with a NUL-terminated name (checked length above);
    // SIOCGIFFLAGS writes only into it.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req) })?;
    // SAFETY: SIOCGIFFLAGS filled the `ifru_flags` member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_flags } as libc::c_int)
}

/// The interface's hardware type (`ARPHRD_*`) via `SIOCGIFHWADDR` on `fd`.
pub(crate) fn if_hwtype(fd: RawFd, name: &str) -> io::Result<u16> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a valid ifreq with a NUL-terminated name; SIOCGIFHWADDR writes only
    // into it.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR as _, &mut req) })?;
    // SAFETY: SIOCGIFHWADDR filled the `ifru_hwaddr` member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_hwaddr.sa_family })
}

/// `bind(fd, sockaddr_ll { ifindex, protocol })`.
pub(crate) fn bind(fd: RawFd, ifindex: i32, protocol_be: u16) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all-zero is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol_be;
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a valid sockaddr_ll and its size is passed.
    cvt(unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// The pending socket error (`SO_ERROR`), which reading clears.
pub(crate) fn take_socket_error(fd: RawFd) -> Option<io::Error> {
    match getsockopt::<libc::c_int>(fd, libc::SOL_SOCKET, libc::SO_ERROR) {
        Ok(0) => None,
        Ok(e) => Some(io::Error::from_raw_os_error(e)),
        Err(e) => Some(e),
    }
}

/// Outcome of one `poll()`.
pub(crate) enum Polled {
    /// Data readable.
    Data,
    /// Timed out.
    Timeout,
    /// Interrupted by a signal.
    Signal,
    /// POLLERR / POLLHUP / POLLNVAL.
    Error,
}

/// `poll()` one fd for input with a timeout in ms.
pub(crate) fn poll_in(fd: RawFd, timeout_ms: i32) -> io::Result<Polled> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN | libc::POLLERR,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd and the count passed is 1.
    let rc = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EINTR) {
            Ok(Polled::Signal)
        } else {
            Err(e)
        };
    }
    if rc == 0 {
        return Ok(Polled::Timeout);
    }
    if p.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return Ok(Polled::Error);
    }
    if p.revents & libc::POLLIN != 0 {
        Ok(Polled::Data)
    } else {
        Ok(Polled::Timeout)
    }
}

/// The mmap'ed RX ring; unmapped on drop.
pub(crate) struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
    /// True when MAP_LOCKED succeeded.
    pub(crate) locked: bool,
}

impl Mmap {
    /// Maps `len` bytes of the ring of `fd`, locked if `lock` and allowed, else unlocked.
    pub(crate) fn map(fd: &OwnedFd, len: usize, lock: bool) -> io::Result<Mmap> {
        let base = libc::MAP_SHARED | libc::MAP_POPULATE;
        let attempt = |flags: libc::c_int| {
            // SAFETY: a fresh shared mapping of the socket's ring; the kernel checks `len`
            // against the ring it set up. The pointer is only used through `Mmap`.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    fd.as_raw_fd(),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                NonNull::new(p.cast::<u8>())
                    .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))
            }
        };
        if lock {
            match attempt(base | libc::MAP_LOCKED) {
                Ok(ptr) => {
                    return Ok(Mmap {
                        ptr,
                        len,
                        locked: true,
                    })
                }
                // RLIMIT_MEMLOCK too low (EAGAIN), or no CAP_IPC_LOCK (EPERM): map unlocked.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EAGAIN) | Some(libc::EPERM) | Some(libc::ENOMEM)
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        let ptr = attempt(base)?;
        Ok(Mmap {
            ptr,
            len,
            locked: false,
        }
        .no_fork())
    }

    /// Keeps a forked child (a spawned helper) from copying or pinning the ring.
    fn no_fork(self) -> Mmap {
        // SAFETY: advice on a mapping this value owns; failure only loses the advice.
        unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.len, libc::MADV_DONTFORK) };
        self
    }

    /// Start of the mapping.
    pub(crate) fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length of the mapping in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping made by `map` and not unmapped before; no
        // borrow of it outlives `self` (blocks borrow the socket that owns this).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

// SAFETY: the mapping is plain shared memory owned by this value; moving it to another thread
// is fine. Access is synchronised with the kernel through the block status word.
unsafe impl Send for Mmap {}
