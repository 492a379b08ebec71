//! Go `time.Duration`: `time.ParseDuration` and `Duration.String()`, which Kyverno uses in
//! conditions (validate.md §8.3), arithmetic (§12.3) and time functions (§12.2).
//!
//! Durations are signed nanosecond counts (`i64`), exactly like Go.

/// Parses like Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0` alone.
/// Units `ns us µs μs ms s m h`; no days. Overflow is an error.
pub fn parse(text: &str) -> Option<i64> {
    let mut s = text;
    let mut neg = false;
    if let Some(c) = s.chars().next()
        && (c == '-' || c == '+')
    {
        neg = c == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    const LIMIT: u128 = 1 << 63;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return None;
        }
        let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let int_part = &s[..int_len];
        s = &s[int_len..];
        let mut frac_part = "";
        if s.starts_with('.') {
            s = &s[1..];
            let n = s.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &s[..n];
            s = &s[n..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return None;
        }
        let unit: u128 = match &s[..unit_len] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        s = &s[unit_len..];
        // leadingInt: overflow of the integer part is an error.
        let mut v: u128 = 0;
        for d in int_part.bytes() {
            v = v * 10 + u128::from(d - b'0');
            if v > LIMIT {
                return None;
            }
        }
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        // leadingFraction: digits beyond what fits are ignored; the fraction is scaled in
        // floating point, as Go does.
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut overflow = false;
        for d in frac_part.bytes() {
            if overflow {
                continue;
            }
            if f > (i64::MAX as u64 - 1) / 10 {
                overflow = true;
                continue;
            }
            let y = f * 10 + u64::from(d - b'0');
            if y > 1 << 63 {
                overflow = true;
                continue;
            }
            f = y;
            scale *= 10.0;
        }
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u128;
            if v > LIMIT {
                return None;
            }
        }
        total += v;
        if total > LIMIT {
            return None;
        }
    }
    if neg {
        Some((total as i128).wrapping_neg() as i64)
    } else if total > i64::MAX as u128 {
        None
    } else {
        Some(total as i64)
    }
}

/// Go's `Duration.String()`: `1h0m0s`, `1m40s`, `1.5s`, `500ms`, `0s`, `-1s`.
pub fn format(d: i64) -> String {
    if d == 0 {
        return "0s".to_owned();
    }
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = if u < 1_000 {
            (0, "ns")
        } else if u < 1_000_000 {
            (3, "µs")
        } else {
            (6, "ms")
        };
        let (frac, int) = frac_digits(u, prec);
        out.push_str(&int.to_string());
        out.push_str(&frac);
        out.push_str(unit);
    } else {
        let (frac, secs) = frac_digits(u, 9);
        u = secs;
        let s = u % 60;
        u /= 60;
        if u > 0 {
            let m = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&u.to_string());
                out.push('h');
            }
            out.push_str(&m.to_string());
            out.push('m');
        }
        out.push_str(&s.to_string());
        out.push_str(&frac);
        out.push('s');
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: the fraction `.ddd` of `v / 10^prec` without trailing zeros, and the
/// integer part.
fn frac_digits(v: u64, prec: u32) -> (String, u64) {
    let div = 10u64.pow(prec);
    let frac = v % div;
    if frac == 0 {
        return (String::new(), v / div);
    }
    let digits = format!("{:0width$}", frac, width = prec as usize);
    (format!(".{}", digits.trim_end_matches('0')), v / div)
}

/// Seconds as Go's `Duration.Seconds()` gives them.
pub fn seconds(d: i64) -> f64 {
    let sec = d / 1_000_000_000;
    let nsec = d % 1_000_000_000;
    sec as f64 + nsec as f64 / 1e9
}

/// Go's `time.Duration(f) * time.Second` for a float64 `f` (truncated to whole seconds,
/// wrapping like Go's integer conversion would not matter for realistic inputs).
pub fn from_seconds_truncated(f: f64) -> i64 {
    (f as i64).saturating_mul(1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn valid_go_durations() {
        assert_eq!(parse("0"), Some(0));
        assert_eq!(parse("-0"), Some(0));
        assert_eq!(parse("+0"), Some(0));
        assert_eq!(parse("1h30m"), Some(5400 * S));
        assert_eq!(parse("90m"), Some(5400 * S));
        assert_eq!(parse("1.5s"), Some(1_500_000_000));
        assert_eq!(parse(".5s"), Some(500_000_000));
        assert_eq!(parse("5.s"), Some(5 * S));
        assert_eq!(parse("-1m"), Some(-60 * S));
        assert_eq!(parse("300ms"), Some(300_000_000));
        assert_eq!(parse("1µs"), Some(1000));
        assert_eq!(parse("1μs"), Some(1000));
        assert_eq!(parse("1us2ns"), Some(1002));
        assert_eq!(parse("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(parse("-2562047h47m16.854775808s"), Some(i64::MIN));
    }

    #[test]
    fn invalid_go_durations() {
        for s in [
            "",
            "-",
            "90",
            "00",
            "1",
            "80.000000",
            "1d",
            ".s",
            "s",
            "1h ",
            " 1h",
            "1Gi",
            "1e3s",
            "9223372036854775808ns",
            "2562047h47m16.854775808s",
            // Two in-range parts whose sum overflows (Go: invalid duration).
            "9223372036854775808ns9223372036854775808ns",
            "2562047h2562047h",
        ] {
            assert_eq!(parse(s), None, "{s:?}");
        }
    }

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("1h"), Some(3_600_000_000_000));
        assert_eq!(parse("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse("1.5s"), Some(1_500_000_000));
        assert_eq!(parse(".5s"), Some(500_000_000));
        assert_eq!(parse("-1m"), Some(-60_000_000_000));
        assert_eq!(parse("0"), Some(0));
        assert_eq!(parse("500m"), Some(30_000_000_000_000));
        assert_eq!(parse("1µs"), Some(1_000));
        assert_eq!(parse("90"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("1d"), None);
        assert_eq!(parse("."), None);
        assert_eq!(parse("s"), None);
        assert_eq!(parse("3000000h"), None);
    }

    #[test]
    fn formats_like_go() {
        assert_eq!(format(0), "0s");
        assert_eq!(format(3_600_000_000_000), "1h0m0s");
        assert_eq!(format(100_000_000_000), "1m40s");
        assert_eq!(format(1_500_000_000), "1.5s");
        assert_eq!(format(500_000_000), "500ms");
        assert_eq!(format(1_200_000), "1.2ms");
        assert_eq!(format(1_500), "1.5µs");
        assert_eq!(format(3), "3ns");
        assert_eq!(format(-1_000_000_000), "-1s");
        assert_eq!(format(648_600_000_000_000), "180h10m0s");
    }
}
