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

#[cfg(test)]
mod tests {
    use super::*;

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
