//! stats.log in Suricata 7's text format:
//!
//! ```text
//! ------------------------------------------------------------------------------------
//! Date: 11/30/2026 -- 11:41:29 (uptime: 0d, 00h 00m 00s)
//! ------------------------------------------------------------------------------------
//! Counter                                       | TM Name                   | Value
//! ------------------------------------------------------------------------------------
//! decoder.pkts                                  | Total                     | 14
//! ```
//!
//! Rows are `%-45s | %-25s | %-lu`; zero counters are skipped unless `null-values` is on. The
//! date is written in UTC (Suricata uses local time; shrike sensors run in UTC).

use std::io::Write;

use crate::eve::time::write_stats_date;

const RULE: &[u8] =
    b"------------------------------------------------------------------------------------\n";

/// Formats stats.log blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatsLogFormat {
    /// Also write counters whose value is 0.
    pub null_values: bool,
}

impl StatsLogFormat {
    /// Append the block header for time `now_ns` and `uptime_secs`.
    pub fn write_header(&self, out: &mut Vec<u8>, now_ns: u64, uptime_secs: u64) {
        out.extend_from_slice(RULE);
        out.extend_from_slice(b"Date: ");
        write_stats_date(out, now_ns);
        let (d, h, m, s) = (
            uptime_secs / 86_400,
            (uptime_secs / 3600) % 24,
            (uptime_secs / 60) % 60,
            uptime_secs % 60,
        );
        let _ = writeln!(out, " (uptime: {d}d, {h:02}h {m:02}m {s:02}s)");
        out.extend_from_slice(RULE);
        let _ = writeln!(out, "{:<45} | {:<25} | Value", "Counter", "TM Name");
        out.extend_from_slice(RULE);
    }

    /// Append one counter row for thread/module name `tm` (`Total` for totals).
    pub fn write_row(&self, out: &mut Vec<u8>, name: &str, tm: &str, value: u64) {
        if value == 0 && !self.null_values {
            return;
        }
        let _ = writeln!(out, "{name:<45} | {tm:<25} | {value}");
    }

    /// Append a whole block of totals from a visitor over `(name, value)`.
    pub fn write_totals(
        &self,
        out: &mut Vec<u8>,
        now_ns: u64,
        uptime_secs: u64,
        visit: impl FnOnce(&mut dyn FnMut(&str, u64)),
    ) {
        self.write_header(out, now_ns, uptime_secs);
        visit(&mut |name, v| self.write_row(out, name, "Total", v));
    }
}

/// Calls its argument with each `(counter, value)` of the totals.
pub type TotalRows<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&str, u64));
/// Calls its argument with each `(thread, counter, value)`.
pub type ThreadRows<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&str, &str, u64));

/// The stats.log file of a run (`outputs: - stats:`): one block per `stats.interval` and a
/// last one when the run ends, totals and/or one row set per thread.
#[derive(Debug)]
pub struct StatsLog {
    file: std::fs::File,
    path: std::path::PathBuf,
    format: StatsLogFormat,
    totals: bool,
    threads: bool,
    buf: Vec<u8>,
}

impl StatsLog {
    /// Open `filename` in `log_dir` (appended to, or emptied with `append: no`), or `None` when
    /// stats.log is off. Like every log file it is opened relative to the directory, never
    /// through a link ([`shrike_sys::safefs`]).
    pub fn open(
        cfg: &crate::config::StatsLogConfig,
        log_dir: &std::path::Path,
    ) -> Result<Option<StatsLog>, crate::OutputError> {
        if !cfg.enabled {
            return Ok(None);
        }
        let path = log_dir.join(&cfg.filename);
        let mode = crate::sink::LOG_FILE_MODE;
        let file = if cfg.append {
            shrike_sys::safefs::open_append(&path, mode)
        } else {
            shrike_sys::safefs::create_truncate(&path, mode)
        }
        .map_err(|source| crate::OutputError::Open {
            path: path.clone(),
            source,
        })?;
        Ok(Some(StatsLog {
            file,
            path,
            format: StatsLogFormat {
                null_values: cfg.null_values,
            },
            totals: cfg.totals,
            threads: cfg.threads,
            buf: Vec::with_capacity(16 * 1024),
        }))
    }

    /// Write one block: the header for wall-clock time `now_ns`, the `Total` rows (when
    /// `totals`) and each thread's rows under its name (when `threads`).
    pub fn write_block(
        &mut self,
        now_ns: u64,
        uptime_secs: u64,
        total: TotalRows<'_>,
        threads: ThreadRows<'_>,
    ) {
        self.buf.clear();
        self.format.write_header(&mut self.buf, now_ns, uptime_secs);
        let (f, buf) = (self.format, &mut self.buf);
        if self.totals {
            total(&mut |name, v| f.write_row(buf, name, "Total", v));
        }
        if self.threads {
            threads(&mut |tm, name, v| f.write_row(buf, name, tm, v));
        }
        if let Err(e) = self.file.write_all(&self.buf) {
            eprintln!("shrike: warning: {}: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_gets_totals_and_threads_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::config::StatsLogConfig {
            enabled: true,
            threads: true,
            append: false,
            ..Default::default()
        };
        let mut log = StatsLog::open(&cfg, dir.path()).unwrap().unwrap();
        for _ in 0..2 {
            log.write_block(0, 5, &mut |v| v("decoder.pkts", 7), &mut |v| {
                v("W#01", "decoder.pkts", 3);
                v("W#02", "decoder.pkts", 4);
            });
        }
        let text = std::fs::read_to_string(dir.path().join("stats.log")).unwrap();
        assert_eq!(text.matches("Date: ").count(), 2);
        assert!(text.contains(
            "decoder.pkts                                  | Total                     | 7\n"
        ));
        assert!(text.contains(
            "decoder.pkts                                  | W#02                      | 4\n"
        ));
        let off = crate::config::StatsLogConfig::default();
        assert!(StatsLog::open(&off, dir.path()).unwrap().is_none());
    }

    #[test]
    fn matches_suricata_layout() {
        let f = StatsLogFormat::default();
        let mut out = Vec::new();
        f.write_totals(&mut out, 1_796_038_889_000_000_000, 0, |v| {
            v("decoder.pkts", 14);
            v("decoder.invalid", 0);
            v("flow.wrk.spare_sync_avg", 100);
        });
        let want = "\
------------------------------------------------------------------------------------
Date: 11/30/2026 -- 11:41:29 (uptime: 0d, 00h 00m 00s)
------------------------------------------------------------------------------------
Counter                                       | TM Name                   | Value
------------------------------------------------------------------------------------
decoder.pkts                                  | Total                     | 14
flow.wrk.spare_sync_avg                       | Total                     | 100
";
        assert_eq!(std::str::from_utf8(&out).unwrap(), want);

        let f = StatsLogFormat { null_values: true };
        let mut out = Vec::new();
        f.write_header(&mut out, 0, 90_061);
        f.write_row(&mut out, "x", "W#01", 0);
        let s = std::str::from_utf8(&out).unwrap();
        assert!(s.contains("(uptime: 1d, 01h 01m 01s)"));
        assert!(s.ends_with(
            "x                                             | W#01                      | 0\n"
        ));
    }
}
