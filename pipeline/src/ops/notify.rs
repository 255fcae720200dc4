//! systemd's notification protocol (`sd_notify(3)`), without libsystemd: newline-separated
//! `KEY=value` assignments in one datagram to the unix socket named by `$NOTIFY_SOCKET`
//! (a path, or `@name` for the abstract namespace).
//!
//! The main loop holds one [`Notifier`]: [`Notifier::ready`] once rules and capture are up,
//! [`Notifier::tick`] on every pass (cheap: a clock comparison; it pings `WATCHDOG=1` at
//! half of `$WATCHDOG_USEC` and refreshes `STATUS=` at most once a second), and
//! [`Notifier::reloading`] / [`Notifier::stopping`] around reloads and shutdown. Without
//! `$NOTIFY_SOCKET` (not under systemd) every call is a no-op.
//!
//! The socket is non-blocking: a message that cannot be sent at once is dropped and counted
//! rather than stalling the packet path.

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the main loop reports in `STATUS=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Packets captured (kernel/NIC count, drops included).
    pub packets: u64,
    /// Packets dropped, all places together.
    pub drops: u64,
    /// Rules loaded in the running engine.
    pub rules: u64,
    /// Alerts raised.
    pub alerts: u64,
}

impl Status {
    /// The `STATUS=` text: `rules 42 loaded; packets 1000, drops 3 (0.30%), alerts 7`.
    pub fn line(&self) -> String {
        let pct = if self.packets > 0 {
            self.drops as f64 * 100.0 / self.packets as f64
        } else {
            0.0
        };
        format!(
            "rules {} loaded; packets {}, drops {} ({pct:.2}%), alerts {}",
            self.rules, self.packets, self.drops, self.alerts
        )
    }
}

/// A connection to systemd's notification socket (or nothing, when not under systemd).
#[derive(Debug)]
pub struct Notifier {
    target: Option<(UnixDatagram, SocketAddr)>,
    watchdog: Option<Duration>,
    last_ping: Instant,
    last_status: Option<Instant>,
    status_every: Duration,
    sent: AtomicU64,
    failed: AtomicU64,
}

impl Notifier {
    /// A notifier that sends nothing.
    pub fn disabled() -> Notifier {
        Notifier {
            target: None,
            watchdog: None,
            last_ping: Instant::now(),
            last_status: None,
            status_every: Duration::from_secs(1),
            sent: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }
    }

    /// From the environment: `NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`. The variables
    /// are left in place (child processes are not expected; systemd's `NotifyAccess=main`
    /// ignores them anyway).
    pub fn from_env() -> Notifier {
        let var = |k| std::env::var(k).ok();
        Notifier::from_vars(
            var("NOTIFY_SOCKET").as_deref(),
            var("WATCHDOG_USEC").as_deref(),
            var("WATCHDOG_PID").as_deref(),
            std::process::id(),
        )
        .unwrap_or_else(|e| {
            eprintln!("shrike: warning: NOTIFY_SOCKET: {e}; not notifying systemd");
            Notifier::disabled()
        })
    }

    /// From explicit values (what [`Notifier::from_env`] reads), for process `pid`. The
    /// watchdog is on when `watchdog_usec` is a positive number and `watchdog_pid` is absent or
    /// equals `pid`.
    pub fn from_vars(
        notify_socket: Option<&str>,
        watchdog_usec: Option<&str>,
        watchdog_pid: Option<&str>,
        pid: u32,
    ) -> io::Result<Notifier> {
        let mut n = Notifier::disabled();
        let Some(sock) = notify_socket.filter(|s| !s.is_empty()) else {
            return Ok(n);
        };
        let addr = if let Some(name) = sock.strip_prefix('@') {
            SocketAddr::from_abstract_name(name.as_bytes())?
        } else if sock.starts_with('/') {
            SocketAddr::from_pathname(sock)?
        } else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("`{sock}`: only unix socket paths and @abstract names are supported"),
            ));
        };
        let dgram = UnixDatagram::unbound()?;
        dgram.set_nonblocking(true)?;
        n.target = Some((dgram, addr));
        let pid_ok = watchdog_pid
            .map(|p| p.trim().parse::<u32>().ok() == Some(pid))
            .unwrap_or(true);
        if let Some(usec) = watchdog_usec.and_then(|u| u.trim().parse::<u64>().ok()) {
            if usec > 0 && pid_ok {
                n.watchdog = Some(Duration::from_micros(usec / 2));
            }
        }
        Ok(n)
    }

    /// True when connected to systemd.
    pub fn is_enabled(&self) -> bool {
        self.target.is_some()
    }

    /// How often [`Notifier::tick`] pings the watchdog (half of `WATCHDOG_USEC`), if at all.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.watchdog
    }

    /// Messages sent and messages that could not be sent.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.sent.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }

    /// Sends raw assignments (`"READY=1\nSTATUS=…"`). A no-op when disabled; errors are
    /// returned (and counted) but callers usually ignore them.
    pub fn send(&self, msg: &str) -> io::Result<()> {
        let Some((sock, addr)) = &self.target else {
            return Ok(());
        };
        match sock.send_to_addr(msg.as_bytes(), addr) {
            Ok(_) => {
                self.sent.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// `READY=1` with the main pid and a first status line.
    pub fn ready(&mut self, status: &str) {
        let _ = self.send(&format!(
            "READY=1\nMAINPID={}\nSTATUS={}",
            std::process::id(),
            one_line(status)
        ));
        self.last_ping = Instant::now();
        self.last_status = Some(self.last_ping);
    }

    /// `STATUS=…` now.
    pub fn status(&mut self, status: &str) {
        let _ = self.send(&format!("STATUS={}", one_line(status)));
        self.last_status = Some(Instant::now());
    }

    /// `WATCHDOG=1` now.
    pub fn watchdog(&mut self) {
        let _ = self.send("WATCHDOG=1");
        self.last_ping = Instant::now();
    }

    /// `RELOADING=1` (and a status line); follow with [`Notifier::ready`] when the new rules
    /// are in place.
    pub fn reloading(&mut self, status: &str) {
        let _ = self.send(&format!("RELOADING=1\nSTATUS={}", one_line(status)));
    }

    /// `STOPPING=1`.
    pub fn stopping(&mut self, status: &str) {
        let _ = self.send(&format!("STOPPING=1\nSTATUS={}", one_line(status)));
    }

    /// `EXTEND_TIMEOUT_USEC=…`: ask for more time during a long start or stop (a big rule
    /// set), so `TimeoutStartSec` does not expire while work is progressing.
    pub fn extend_timeout(&mut self, by: Duration) {
        let _ = self.send(&format!("EXTEND_TIMEOUT_USEC={}", by.as_micros()));
    }

    /// `ERRNO=…` and a status line, before exiting on an error.
    pub fn failed(&mut self, errno: i32, status: &str) {
        let _ = self.send(&format!("ERRNO={errno}\nSTATUS={}", one_line(status)));
    }

    /// Call from the main loop on every pass: pings the watchdog when half its interval has
    /// passed and refreshes the status (built by `status` only when due) at most once per
    /// second. Costs one clock comparison when nothing is due.
    pub fn tick(&mut self, now: Instant, status: impl FnOnce() -> String) {
        if self.target.is_none() {
            return;
        }
        if let Some(iv) = self.watchdog {
            if now.saturating_duration_since(self.last_ping) >= iv {
                let _ = self.send("WATCHDOG=1");
                self.last_ping = now;
            }
        }
        let due = self
            .last_status
            .is_none_or(|t| now.saturating_duration_since(t) >= self.status_every);
        if due {
            let _ = self.send(&format!("STATUS={}", one_line(&status())));
            self.last_status = Some(now);
        }
    }

    /// Sets how often [`Notifier::tick`] refreshes `STATUS=` (default one second).
    pub fn set_status_interval(&mut self, every: Duration) {
        self.status_every = every;
    }
}

/// Status text on one line (a newline would start a new assignment).
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn temp_sock(name: &str) -> (UnixDatagram, PathBuf) {
        let p = std::env::temp_dir().join(format!("shrike-notify-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let s = UnixDatagram::bind(&p).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (s, p)
    }

    fn recv(s: &UnixDatagram) -> String {
        let mut buf = [0u8; 4096];
        let n = s.recv(&mut buf).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    fn assert_empty(s: &UnixDatagram) {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 64];
        let r = s.recv(&mut buf);
        assert!(
            r.is_err(),
            "unexpected message {:?}",
            r.map(|n| buf[..n].to_vec())
        );
        s.set_nonblocking(false).unwrap();
    }

    #[test]
    fn sequence_over_a_path_socket() {
        let (srv, path) = temp_sock("path");
        let mut n =
            Notifier::from_vars(path.to_str(), Some("2000000"), None, std::process::id()).unwrap();
        assert!(n.is_enabled());
        assert_eq!(n.watchdog_interval(), Some(Duration::from_secs(1)));
        let st = Status {
            packets: 1000,
            drops: 3,
            rules: 42,
            alerts: 7,
        };
        n.ready(&st.line());
        let m = recv(&srv);
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines[0], "READY=1");
        assert_eq!(lines[1], format!("MAINPID={}", std::process::id()));
        assert_eq!(
            lines[2],
            "STATUS=rules 42 loaded; packets 1000, drops 3 (0.30%), alerts 7"
        );

        // Nothing due right after READY.
        let t0 = Instant::now();
        n.tick(t0, || unreachable!("status is not due"));
        assert_empty(&srv);
        // Half the watchdog interval later: WATCHDOG=1, then the status refresh.
        n.tick(t0 + Duration::from_millis(1100), || "s2".into());
        assert_eq!(recv(&srv), "WATCHDOG=1");
        assert_eq!(recv(&srv), "STATUS=s2");
        n.tick(t0 + Duration::from_millis(1200), || unreachable!());
        assert_empty(&srv);

        n.reloading("reloading rules\nnow");
        assert_eq!(recv(&srv), "RELOADING=1\nSTATUS=reloading rules now");
        n.stopping("bye");
        assert_eq!(recv(&srv), "STOPPING=1\nSTATUS=bye");
        n.extend_timeout(Duration::from_secs(30));
        assert_eq!(recv(&srv), "EXTEND_TIMEOUT_USEC=30000000");
        n.watchdog();
        assert_eq!(recv(&srv), "WATCHDOG=1");
        assert_eq!(n.counts(), (7, 0));
        std::fs::remove_file(&path).unwrap();
        // The receiver is gone: sends fail and are counted, never panic.
        n.status("lost");
        assert_eq!(n.counts().1, 1);
    }

    #[test]
    fn abstract_namespace() {
        let name = format!("shrike-notify-abstract-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let srv = UnixDatagram::bind_addr(&addr).unwrap();
        srv.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut n = Notifier::from_vars(Some(&format!("@{name}")), None, None, 1).unwrap();
        assert_eq!(n.watchdog_interval(), None);
        n.status("hello");
        assert_eq!(recv(&srv), "STATUS=hello");
    }

    #[test]
    fn watchdog_pid_and_values() {
        let (_srv, path) = temp_sock("pid");
        let p = path.to_str();
        let n = Notifier::from_vars(p, Some("1000000"), Some("77"), 78).unwrap();
        assert_eq!(
            n.watchdog_interval(),
            None,
            "watchdog meant for another pid"
        );
        let n = Notifier::from_vars(p, Some("1000000"), Some("78"), 78).unwrap();
        assert_eq!(n.watchdog_interval(), Some(Duration::from_millis(500)));
        let n = Notifier::from_vars(p, Some("0"), None, 78).unwrap();
        assert_eq!(n.watchdog_interval(), None);
        let n = Notifier::from_vars(p, Some("junk"), None, 78).unwrap();
        assert_eq!(n.watchdog_interval(), None);
        assert!(Notifier::from_vars(Some("vsock:2:1"), None, None, 1).is_err());
        let mut off = Notifier::from_vars(None, Some("1000"), None, 1).unwrap();
        assert!(!off.is_enabled());
        off.ready("x");
        off.tick(Instant::now(), || unreachable!());
        assert_eq!(off.counts(), (0, 0));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn status_line_without_packets() {
        assert_eq!(
            Status::default().line(),
            "rules 0 loaded; packets 0, drops 0 (0.00%), alerts 0"
        );
    }
}
