//! Signals as flags the main loop polls (Suricata's meanings): SIGUSR2 reloads the rules
//! (the systemd unit's `ExecReload`), SIGHUP reopens the log files (logrotate), SIGTERM and
//! SIGINT stop the sensor; a second SIGTERM/SIGINT while stopping exits at once with status 1.
//!
//! The handlers only set atomics (async-signal-safe, via `signal-hook`); the main loop calls
//! [`Signals::take_reload`] etc. between batches.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR2};
use signal_hook::flag;

/// Pending signals.
#[derive(Clone, Debug, Default)]
pub struct Signals {
    reload: Arc<AtomicBool>,
    reopen: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Signals {
    /// Installs the handlers for SIGUSR2, SIGHUP, SIGTERM and SIGINT.
    pub fn install() -> io::Result<Signals> {
        let s = Signals::default();
        flag::register(SIGUSR2, s.reload.clone())?;
        flag::register(SIGHUP, s.reopen.clone())?;
        for sig in [SIGTERM, SIGINT] {
            // Registered first: runs on the second signal, when `stop` is already set.
            flag::register_conditional_shutdown(sig, 1, s.stop.clone())?;
            flag::register(sig, s.stop.clone())?;
        }
        Ok(s)
    }

    /// True once if a reload was asked for since the last call.
    pub fn take_reload(&self) -> bool {
        self.reload.swap(false, Ordering::Relaxed)
    }

    /// True once if a log reopen was asked for since the last call.
    pub fn take_reopen(&self) -> bool {
        self.reopen.swap(false, Ordering::Relaxed)
    }

    /// True once SIGTERM or SIGINT arrived (stays true).
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The stop flag itself, to share with threads that poll it.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Asks for a stop as SIGTERM would (used by the control socket's `shutdown`).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Asks for a reload as SIGUSR2 would.
    pub fn request_reload(&self) {
        self.reload.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_signals() {
        let s = Signals::install().unwrap();
        assert!(!s.take_reload() && !s.take_reopen() && !s.stop_requested());
        signal_hook::low_level::raise(SIGUSR2).unwrap();
        assert!(s.take_reload());
        assert!(!s.take_reload(), "taken once");
        signal_hook::low_level::raise(SIGHUP).unwrap();
        assert!(s.take_reopen());
        assert!(!s.take_reload());
        s.request_reload();
        assert!(s.take_reload());
        // SIGTERM is not raised here: a second one would end the test process.
        s.request_stop();
        assert!(s.stop_requested() && s.stop_flag().load(Ordering::Relaxed));
    }
}
