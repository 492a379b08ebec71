//! Go `time.ParseDuration`, exactly: Kyverno tries durations before quantities when comparing
//! pattern strings (validate.md §5.4, `kyverno/kyverno:pkg/engine/pattern/pattern.go`
//! `compareDuration`). The result is nanoseconds as Go's `time.Duration` (an `i64`).

/// Parses a Go duration such as `1h30m`, `-1.5s`, `300ms` or `0`. `None` on any error
/// (Kyverno only asks whether it parses).
pub(crate) fn parse_go_duration(s: &str) -> Option<i64> {
    const MAX: u64 = 1 << 63;
    let mut rest = s.as_bytes();
    let mut neg = false;
    if let Some((&c, tail)) = rest.split_first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        rest = tail;
    }
    // "0" (after the sign) is the only number allowed without a unit.
    if rest == b"0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        // The next character must be [0-9.].
        let c = rest[0];
        if !(c == b'.' || c.is_ascii_digit()) {
            return None;
        }
        let before = rest.len();
        let (mut v, tail) = leading_int(rest)?;
        rest = tail;
        let pre = before != rest.len();
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if let Some((&b'.', tail)) = rest.split_first() {
            rest = tail;
            let before = rest.len();
            let (ff, sc, tail) = leading_fraction(rest);
            f = ff;
            scale = sc;
            rest = tail;
            post = before != rest.len();
        }
        if !pre && !post {
            return None;
        }
        let unit_len = rest
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        if unit_len == 0 {
            return None;
        }
        let unit = unit_nanos(&rest[..unit_len])?;
        rest = &rest[unit_len..];
        if v > MAX / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            // Go computes the fraction in float64 and truncates (time/format.go).
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > MAX {
                return None;
            }
        }
        total += v;
        if total > MAX {
            return None;
        }
    }
    if neg {
        // -(1<<63) is representable; Go's conversion wraps the same way.
        return Some((total as i64).wrapping_neg());
    }
    if total > MAX - 1 {
        return None;
    }
    Some(total as i64)
}

fn unit_nanos(u: &[u8]) -> Option<u64> {
    Some(match u {
        b"ns" => 1,
        b"us" => 1_000,
        // U+00B5 micro sign and U+03BC Greek mu, as Go accepts both.
        b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
        b"ms" => 1_000_000,
        b"s" => 1_000_000_000,
        b"m" => 60_000_000_000,
        b"h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Consumes leading digits; errors on overflow past 1<<63 like Go's `leadingInt`.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    const MAX: u64 = 1 << 63;
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > MAX / 10 {
            return None;
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > MAX {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Consumes fraction digits; stops accumulating precision on overflow (Go `leadingFraction`).
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    const MAX: u64 = 1 << 63;
    let mut x: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        let c = s[i];
        i += 1;
        if overflow {
            continue;
        }
        if x > (MAX - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > MAX {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, &s[i..])
}

#[cfg(test)]
mod tests {
    use super::parse_go_duration as p;

    const S: i64 = 1_000_000_000;

    #[test]
    fn valid_durations() {
        assert_eq!(p("0"), Some(0));
        assert_eq!(p("-0"), Some(0));
        assert_eq!(p("+0"), Some(0));
        assert_eq!(p("1h30m"), Some(5400 * S));
        assert_eq!(p("90m"), Some(5400 * S));
        assert_eq!(p("1.5s"), Some(1_500_000_000));
        assert_eq!(p(".5s"), Some(500_000_000));
        assert_eq!(p("5.s"), Some(5 * S));
        assert_eq!(p("-1m"), Some(-60 * S));
        assert_eq!(p("300ms"), Some(300_000_000));
        assert_eq!(p("1µs"), Some(1000));
        assert_eq!(p("1μs"), Some(1000));
        assert_eq!(p("1us2ns"), Some(1002));
        assert_eq!(p("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(p("-2562047h47m16.854775808s"), Some(i64::MIN));
    }

    #[test]
    fn invalid_durations() {
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
        ] {
            assert_eq!(p(s), None, "{s:?}");
        }
    }
}
