//! Sending raw Ethernet frames on an interface: used by the tests and the ring benchmark to
//! inject traffic into a veth pair (and usable later for active responses).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::sys;
use crate::live::LiveError;

/// An AF_PACKET socket bound to one interface for sending only (protocol 0: it receives
/// nothing). Frames go out whole, Ethernet header included.
pub struct Sender {
    fd: OwnedFd,
    iface: String,
    /// `ENOBUFS`/`EAGAIN` retries so far.
    pub retries: u64,
}

impl Sender {
    /// Opens a sender on `iface` (in the calling thread's network namespace).
    pub fn open(iface: &str) -> Result<Sender, LiveError> {
        let ifindex = sys::ifindex(iface).ok_or_else(|| LiveError::NoSuchInterface {
            iface: iface.to_string(),
        })?;
        let fd = sys::packet_socket().map_err(|e| LiveError::sys(iface, "socket(AF_PACKET)", e))?;
        sys::bind(fd.as_raw_fd(), ifindex, 0).map_err(|e| LiveError::sys(iface, "bind", e))?;
        Ok(Sender {
            fd,
            iface: iface.to_string(),
            retries: 0,
        })
    }

    /// The interface name.
    pub fn iface(&self) -> &str {
        &self.iface
    }

    /// Sends one frame; retries while the device queue is full (`ENOBUFS`, `EAGAIN`).
    pub fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: `frame` is a valid readable buffer of the length passed.
            let rc =
                unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
            if rc >= 0 {
                return if rc as usize == frame.len() {
                    Ok(())
                } else {
                    Err(io::Error::new(io::ErrorKind::WriteZero, "short send"))
                };
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) => {
                    self.retries += 1;
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                Some(libc::EINTR) => {}
                _ => return Err(e),
            }
        }
    }
}
