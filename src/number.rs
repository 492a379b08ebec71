//! Go's ways of printing a float64, which Kyverno's comparisons depend on (validate.md §5.6).
//!
//! All of them start from the shortest decimal digits that round-trip, which Rust's `{:e}`
//! already produces; only the layout differs.

/// Shortest round-trip digits and the decimal exponent of the first digit: `80.0` → ("8", 1).
fn shortest_digits(f: f64) -> (bool, String, i32) {
    digits_of(&format!("{:e}", f.abs()), f.is_sign_negative() && f != 0.0)
}

/// The sign, digits and decimal exponent of a number Rust wrote with `{:e}` (`1.5e3`).
fn digits_of(s: &str, neg: bool) -> (bool, String, i32) {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (neg, digits, exp)
}

fn special(f: f64) -> Option<&'static str> {
    if f.is_nan() {
        Some("NaN")
    } else if f == f64::INFINITY {
        Some("+Inf")
    } else if f == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

fn exp_form(neg: bool, digits: &str, exp: i32, e: char) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push(e);
    out.push(if exp < 0 { '-' } else { '+' });
    let a = exp.unsigned_abs();
    if a < 10 {
        out.push('0');
    }
    out.push_str(&a.to_string());
    out
}

fn plain_form(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
    } else {
        let int_len = (exp + 1) as usize;
        if digits.len() <= int_len {
            out.push_str(digits);
            for _ in 0..(int_len - digits.len()) {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// Go `strconv.FormatFloat(f, 'E', -1, 64)`: `80.0` → `8E+01`, `0` → `0E+00`.
pub fn format_go_e(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    let (neg, digits, exp) = shortest_digits(f);
    exp_form(neg, &digits, exp, 'E')
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64)`, which is also `fmt.Sprint` (`%v`) of a float64:
/// shortest digits, exponent form when the exponent is < -4 or >= 6 (`1e+06`).
pub fn format_go_g(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    let (neg, digits, exp) = shortest_digits(f);
    g_form(neg, &digits, exp)
}

/// Go's `'g'` with the shortest digits: the exponent form when the exponent is < -4 or >= 6.
fn g_form(neg: bool, digits: &str, exp: i32) -> String {
    if (-4..6).contains(&exp) {
        plain_form(neg, digits, exp)
    } else {
        exp_form(neg, digits, exp, 'e')
    }
}

/// Go `strconv.FormatFloat(f, 'g', -1, 32)`: [`format_go_g`] with the shortest digits that
/// read back as the same float32 (`3.14159265358979` → `3.1415927`), as sigs.k8s.io/yaml
/// writes a YAML float into a Go string field.
pub fn format_go_g32(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let narrow = f as f32;
    let (neg, digits, exp) = digits_of(
        &format!("{:e}", narrow.abs()),
        narrow.is_sign_negative() && narrow != 0.0,
    );
    g_form(neg, &digits, exp)
}

/// Go `fmt.Sprintf("%f", f)`: six decimals.
pub fn format_go_f6(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    format!("{f:.6}")
}

/// How `encoding/json` prints a float64 (used when a number is interpolated into a string).
pub fn format_json_float(f: f64) -> String {
    if let Some(s) = special(f) {
        return s.to_owned();
    }
    let (neg, digits, exp) = shortest_digits(f);
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // encoding/json uses 'e' format and trims "e-07" to "e-7".
        let s = exp_form(neg, &digits, exp, 'e');
        if let Some(idx) = s.find("e-0") {
            return format!("{}e-{}", &s[..idx], &s[idx + 3..]);
        }
        if let Some(idx) = s.find("e+0") {
            return format!("{}e+{}", &s[..idx], &s[idx + 3..]);
        }
        return s;
    }
    plain_form(neg, &digits, exp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_e_format() {
        assert_eq!(format_go_e(80.0), "8E+01");
        assert_eq!(format_go_e(8080.0), "8.08E+03");
        assert_eq!(format_go_e(1.5), "1.5E+00");
        assert_eq!(format_go_e(0.0), "0E+00");
        assert_eq!(format_go_e(-0.001), "-1E-03");
    }

    #[test]
    fn go_g_and_v_formats() {
        assert_eq!(format_go_g(1_000_000.0), "1e+06");
        assert_eq!(format_go_g(1_234_567.0), "1.234567e+06");
        assert_eq!(format_go_g(8080.0), "8080");
        assert_eq!(format_go_g(0.5), "0.5");
        assert_eq!(format_go_g(0.00001), "1e-05");
        assert_eq!(format_go_f6(80.0), "80.000000");
        // float32 digits (what sigs.k8s.io/yaml writes for a YAML float in a string field;
        // the Kyverno v1.19.0 CLI reads these context-file values so).
        assert_eq!(format_go_g32(1.234_567_891_2), "1.2345679");
        assert_eq!(format_go_g32(1.10), "1.1");
        assert_eq!(format_go_g32(1_234_567.0), "1.234567e+06");
        assert_eq!(format_go_g32(100_000.0), "100000");
        assert_eq!(format_go_g32(0.00001), "1e-05");
        assert_eq!(format_go_g32(1e30), "1e+30");
        assert_eq!(format_json_float(8080.0), "8080");
        assert_eq!(format_json_float(1e21), "1e+21");
        assert_eq!(format_json_float(1.5), "1.5");
    }
}
