//! Timestamp formatting for EVE (`2024-01-31T12:34:56.123456+0000`), fast.log
//! (`01/31/2024-12:34:56.123456`) and stats.log (`1/31/2024 -- 12:34:56`), always in UTC.
//!
//! Times are nanoseconds since the Unix epoch (`capture::Timestamp`'s representation);
//! sub-microsecond digits are truncated, as Suricata keeps microseconds.

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    /// Year (e.g. 2024).
    pub year: i64,
    /// Month 1..=12.
    pub month: u32,
    /// Day of month 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub minute: u32,
    /// Second 0..=59.
    pub second: u32,
    /// Microseconds 0..=999_999.
    pub micros: u32,
}

impl Civil {
    /// Split nanoseconds since the epoch into a UTC date and time.
    pub fn from_nanos(ns: u64) -> Civil {
        let secs = ns / 1_000_000_000;
        let micros = ((ns % 1_000_000_000) / 1_000) as u32;
        let days = (secs / 86_400) as i64;
        let sod = (secs % 86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: (sod % 3600) / 60,
            second: sod % 60,
            micros,
        }
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of each 400-year era.
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // 0..=365, from March 1st
    let mp = (5 * doy + 2) / 153; // 0..=11, March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn push_num(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut n = v;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    for _ in len..width {
        out.push(b'0');
    }
    out.extend_from_slice(&digits[i..]);
}

fn push_year(out: &mut Vec<u8>, year: i64) {
    if year < 0 {
        out.push(b'-');
    }
    push_num(out, year.unsigned_abs(), 4);
}

/// Append an EVE timestamp, e.g. `2024-01-31T12:34:56.123456+0000`.
pub fn write_iso(out: &mut Vec<u8>, ns: u64) {
    let c = Civil::from_nanos(ns);
    push_year(out, c.year);
    out.push(b'-');
    push_num(out, c.month.into(), 2);
    out.push(b'-');
    push_num(out, c.day.into(), 2);
    out.push(b'T');
    push_num(out, c.hour.into(), 2);
    out.push(b':');
    push_num(out, c.minute.into(), 2);
    out.push(b':');
    push_num(out, c.second.into(), 2);
    out.push(b'.');
    push_num(out, c.micros.into(), 6);
    out.extend_from_slice(b"+0000");
}

/// Append a fast.log timestamp, e.g. `01/31/2024-12:34:56.123456`.
pub fn write_fast(out: &mut Vec<u8>, ns: u64) {
    let c = Civil::from_nanos(ns);
    push_num(out, c.month.into(), 2);
    out.push(b'/');
    push_num(out, c.day.into(), 2);
    out.push(b'/');
    push_year(out, c.year);
    out.push(b'-');
    push_num(out, c.hour.into(), 2);
    out.push(b':');
    push_num(out, c.minute.into(), 2);
    out.push(b':');
    push_num(out, c.second.into(), 2);
    out.push(b'.');
    push_num(out, c.micros.into(), 6);
}

/// Append a stats.log date, e.g. `1/31/2024 -- 12:34:56` (month and day unpadded, as Suricata).
pub fn write_stats_date(out: &mut Vec<u8>, ns: u64) {
    let c = Civil::from_nanos(ns);
    push_num(out, c.month.into(), 1);
    out.push(b'/');
    push_num(out, c.day.into(), 1);
    out.push(b'/');
    push_year(out, c.year);
    out.extend_from_slice(b" -- ");
    push_num(out, c.hour.into(), 2);
    out.push(b':');
    push_num(out, c.minute.into(), 2);
    out.push(b':');
    push_num(out, c.second.into(), 2);
}

/// The EVE timestamp as a `String` (convenience for tests and cold paths).
pub fn iso_string(ns: u64) -> String {
    let mut v = Vec::with_capacity(32);
    write_iso(&mut v, ns);
    String::from_utf8(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NS: u64 = 1_000_000_000;

    #[test]
    fn known_times() {
        let cases: &[(u64, &str, &str)] = &[
            (
                0,
                "1970-01-01T00:00:00.000000+0000",
                "01/01/1970-00:00:00.000000",
            ),
            (
                1_706_704_496 * NS + 123_456_789,
                "2024-01-31T12:34:56.123456+0000",
                "01/31/2024-12:34:56.123456",
            ),
            // The first alert of zeek/http-vlan-0.pcap as Suricata 7.0.10 prints it.
            (
                1_362_692_526 * NS + 869_344_000,
                "2013-03-07T21:42:06.869344+0000",
                "03/07/2013-21:42:06.869344",
            ),
            (
                951_782_400 * NS,
                "2000-02-29T00:00:00.000000+0000",
                "02/29/2000-00:00:00.000000",
            ),
            (
                4_107_542_399 * NS + 999_999_999,
                "2100-02-28T23:59:59.999999+0000",
                "02/28/2100-23:59:59.999999",
            ),
        ];
        for &(ns, iso, fast) in cases {
            assert_eq!(iso_string(ns), iso);
            let mut v = Vec::new();
            write_fast(&mut v, ns);
            assert_eq!(std::str::from_utf8(&v).unwrap(), fast);
        }
        let mut v = Vec::new();
        write_stats_date(&mut v, 1_796_038_889 * NS);
        assert_eq!(std::str::from_utf8(&v).unwrap(), "11/30/2026 -- 11:41:29");
        v.clear();
        write_stats_date(&mut v, 1_706_704_496 * NS);
        assert_eq!(std::str::from_utf8(&v).unwrap(), "1/31/2024 -- 12:34:56");
    }

    /// Days since the epoch counted one day at a time, as an oracle.
    fn slow_civil(days: i64) -> (i64, u32, u32) {
        let mut y = 1970i64;
        let mut d = days;
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        loop {
            let n = if leap(y) { 366 } else { 365 };
            if d < n {
                break;
            }
            d -= n;
            y += 1;
        }
        let ml = [
            31,
            if leap(y) { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        let mut m = 0;
        while d >= ml[m] {
            d -= ml[m];
            m += 1;
        }
        (y, m as u32 + 1, d as u32 + 1)
    }

    proptest! {
        #[test]
        fn civil_matches_slow_oracle(days in 0i64..200_000) {
            prop_assert_eq!(civil_from_days(days), slow_civil(days));
        }
    }
}
