//! The slice of Go's `time` package that Kyverno's time functions use: RFC 3339 parsing and
//! formatting (in the time's own offset), `Sub`, `Add`, `Truncate`, weekday (validate.md
//! §12.2). Times are Unix seconds + nanoseconds + a fixed UTC offset.

use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Time {
    pub unix: i64,
    pub nanos: u32,
    /// Offset east of UTC, seconds.
    pub offset: i32,
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Wall-clock fields in the time's own offset.
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Sunday = 0.
    pub weekday: u32,
}

impl Time {
    pub fn now() -> Time {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Time {
            unix: d.as_secs() as i64,
            nanos: d.subsec_nanos(),
            offset: 0,
        }
    }

    /// Go `time.Parse(time.RFC3339, s)` (fractional seconds accepted).
    pub(crate) fn parse_rfc3339(s: &str) -> Result<Time, String> {
        let err =
            || format!("parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {s:?}");
        let b = s.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Result<u32, String> {
            let part = b.get(r).ok_or_else(err)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(err());
            }
            std::str::from_utf8(part)
                .map_err(|_| err())?
                .parse()
                .map_err(|_| err())
        };
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(err());
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let mut i = 19;
        let mut nanos = 0u32;
        if b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &s[start..i];
            if digits.is_empty() || digits.len() > 9 {
                return Err(err());
            }
            nanos = format!("{digits:0<9}").parse().map_err(|_| err())?;
        }
        let offset = match b.get(i) {
            Some(b'Z') if i + 1 == b.len() => 0,
            Some(c @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
                let h = num(i + 1..i + 3)? as i32;
                let m = num(i + 4..i + 6)? as i32;
                if h > 23 || m > 59 {
                    return Err(err());
                }
                let o = h * 3600 + m * 60;
                if *c == b'-' { -o } else { o }
            }
            _ => return Err(err()),
        };
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(i64::from(year), month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(format!("parsing time {s:?}: out of range"));
        }
        let days = days_from_civil(i64::from(year), month, day);
        let local = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
        Ok(Time {
            unix: local - i64::from(offset),
            nanos,
            offset,
        })
    }

    pub(crate) fn civil(&self) -> Civil {
        let local = self.unix + i64::from(self.offset);
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            weekday: (days + 4).rem_euclid(7) as u32,
        }
    }

    /// `Format(time.RFC3339)`: no fractional seconds; `Z` for a zero offset.
    pub(crate) fn format_rfc3339(&self) -> String {
        let c = self.civil();
        let zone = if self.offset == 0 {
            "Z".to_owned()
        } else {
            let sign = if self.offset < 0 { '-' } else { '+' };
            let o = self.offset.unsigned_abs();
            format!("{sign}{:02}:{:02}", o / 3600, o / 60 % 60)
        };
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{zone}",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        )
    }

    fn total_nanos(&self) -> i128 {
        i128::from(self.unix) * 1_000_000_000 + i128::from(self.nanos)
    }

    fn from_nanos(n: i128, offset: i32) -> Time {
        Time {
            unix: n.div_euclid(1_000_000_000) as i64,
            nanos: n.rem_euclid(1_000_000_000) as u32,
            offset,
        }
    }

    /// Go `t.Sub(u)`, saturating like Go.
    pub fn sub(&self, other: &Time) -> i64 {
        let d = self.total_nanos() - other.total_nanos();
        d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    pub fn add(&self, d: i64) -> Time {
        Time::from_nanos(self.total_nanos() + i128::from(d), self.offset)
    }

    /// Go `t.Truncate(d)`: rounds down to a multiple of `d` since the zero time (year 1).
    pub fn truncate(&self, d: i64) -> Time {
        if d <= 0 {
            return *self;
        }
        const ZERO_TO_UNIX: i128 = 62_135_596_800 * 1_000_000_000;
        let abs = self.total_nanos() + ZERO_TO_UNIX;
        let r = abs.rem_euclid(i128::from(d));
        Time::from_nanos(self.total_nanos() - r, self.offset)
    }

    pub(crate) fn cmp_instant(&self, other: &Time) -> Ordering {
        self.total_nanos().cmp(&other.total_nanos())
    }

    pub(crate) fn from_unix_utc(secs: i64) -> Time {
        Time {
            unix: secs,
            nanos: 0,
            offset: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip() {
        let t = Time::parse_rfc3339("2021-01-02T15:04:05+02:00").unwrap();
        assert_eq!(t.format_rfc3339(), "2021-01-02T15:04:05+02:00");
        assert_eq!(t.civil().weekday, 6);
        let u = Time::parse_rfc3339("2021-01-02T13:04:05.5Z").unwrap();
        assert_eq!(t.sub(&u), -500_000_000);
        assert!(Time::parse_rfc3339("2021-02-30T00:00:00Z").is_err());
        assert!(Time::parse_rfc3339("yesterday").is_err());
        let tr = Time::parse_rfc3339("2021-01-02T15:34:05Z")
            .unwrap()
            .truncate(3_600_000_000_000);
        assert_eq!(tr.format_rfc3339(), "2021-01-02T15:00:00Z");
        assert_eq!(
            Time::from_unix_utc(0).format_rfc3339(),
            "1970-01-01T00:00:00Z"
        );
    }
}
