//! Kubernetes `resource.Quantity` as Kyverno uses it: parsing (`ParseQuantity`), exact
//! comparison, canonical formatting (`Quantity.String()`) and the decimal arithmetic of
//! Kyverno's `add`/`multiply`/`divide`/`modulo` (validate.md §5.3, §12.3).
//!
//! A value is an exact decimal `unscaled × 10^-scale`, with the same scale Kubernetes keeps
//! (it matters for `divide`, which rounds at the larger operand scale). Values with more
//! than nine fractional digits are rounded up to nano precision when parsed, like
//! Kubernetes. Binary-suffixed values beyond 2^63-1 are capped there, as Kubernetes does on
//! its slow path; decimal values are not capped.

use std::cmp::Ordering;

/// How a quantity prints, from the suffix it was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    DecimalExponent,
    BinarySi,
    DecimalSi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    pub unscaled: i128,
    /// value = unscaled × 10^-scale (may be negative: `5k` is 5 at scale -3).
    pub scale: i32,
    pub format: Format,
}

const MAX_ALLOWED: i128 = i64::MAX as i128;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    pub fn new(unscaled: i128, scale: i32, format: Format) -> Self {
        Self {
            unscaled,
            scale,
            format,
        }
    }

    /// `ParseQuantity`: `[+-]?(digits|digits.digits|digits.|.digits)(suffix)?`, suffixes
    /// `Ki Mi Gi Ti Pi Ei`, `n u m k M G T P E`, or `e<int>`/`E<int>`.
    pub fn parse(text: &str) -> Option<Self> {
        let b = text.as_bytes();
        if b.is_empty() {
            return None;
        }
        let mut pos = 0;
        let mut positive = true;
        match b[0] {
            b'-' => {
                positive = false;
                pos = 1;
            }
            b'+' => pos = 1,
            _ => {}
        }
        let num_start = pos;
        while pos < b.len() && b[pos].is_ascii_digit() {
            pos += 1;
        }
        let num = &text[num_start..pos];
        let mut denom = "";
        if pos < b.len() && b[pos] == b'.' {
            pos += 1;
            let ds = pos;
            while pos < b.len() && b[pos].is_ascii_digit() {
                pos += 1;
            }
            denom = &text[ds..pos];
        }
        // No digits at all (`-`, `.`, `Ki`, `e3`) reads as zero, as `parseQuantityString`
        // makes the numerator "0" when it strips every position.
        let suffix = &text[pos..];
        let (base2_exp, exp10, format) = interpret_suffix(suffix)?;
        let num = num.trim_start_matches('0');
        let digits = format!("{num}{denom}");
        let digits = digits.trim_start_matches('0');
        // Kubernetes keeps scale -(exponent) + len(denom) on its fast path and nano (9) on
        // its slow path (fractional binary values, > 18 digits, finer than nano).
        let mut scale: i64 = denom.len() as i64 - i64::from(exp10);
        let fast = match format {
            // Go's precision estimate for `n × 2^e`: 15 - len(n) - ⌊e·3/10⌋ - 1 ≥ 0.
            Format::BinarySi => {
                let precision = 15 - num.len() as i64 - i64::from(base2_exp) * 3 / 10 - 1;
                denom.is_empty() && precision >= 0
            }
            _ => num.len() + denom.len() <= 18 && scale <= 9,
        };
        let mut unscaled: i128 = if digits.len() > 36 {
            MAX_ALLOWED * 1_000_000_000
        } else {
            digits.parse::<i128>().unwrap_or(0)
        };
        if base2_exp > 0 {
            unscaled = unscaled.saturating_mul(1i128 << base2_exp);
        }
        if !fast && unscaled != 0 {
            // Round up (away from zero) to nano precision; the result has scale 9.
            if scale > 9 {
                let drop = (scale - 9) as u32;
                unscaled = match pow10(drop) {
                    // Rounded up without `unscaled + p - 1`, which overflows near i128::MAX.
                    Some(p) => unscaled / p + i128::from(unscaled % p != 0),
                    None => 1,
                };
            } else {
                let grow = (9 - scale) as u32;
                unscaled = pow10(grow)
                    .and_then(|p| unscaled.checked_mul(p))
                    .unwrap_or(i128::MAX);
            }
            scale = 9;
            // Only binary-suffixed values are capped (apimachinery `ParseQuantity`).
            if format == Format::BinarySi && unscaled > MAX_ALLOWED * 1_000_000_000 {
                unscaled = MAX_ALLOWED * 1_000_000_000;
            }
        } else if unscaled == 0 && !fast {
            scale = 0;
        }
        let mut format = format;
        if !fast && format == Format::BinarySi && unscaled > 0 && unscaled < 1_000_000_000 {
            format = Format::DecimalSi;
        }
        if !positive {
            unscaled = -unscaled;
        }
        Some(Self::new(unscaled, scale as i32, format))
    }

    pub fn is_zero(&self) -> bool {
        self.unscaled == 0
    }

    /// Exact comparison (`Quantity.Cmp`).
    pub fn cmp_value(&self, other: &Self) -> Ordering {
        let s = self.scale.max(other.scale);
        let a = rescale(self.unscaled, self.scale, s);
        let b = rescale(other.unscaled, other.scale, s);
        match (a, b) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self
                .as_f64()
                .partial_cmp(&other.as_f64())
                .unwrap_or(Ordering::Equal),
        }
    }

    /// `AsApproximateFloat64`.
    pub fn as_f64(&self) -> f64 {
        self.unscaled as f64 / 10f64.powi(self.scale)
    }

    /// `Quantity.Add`/`Sub`: exact; a zero left operand takes the right one's format.
    pub fn add(&self, other: &Self, negate: bool) -> Option<Self> {
        let s = self.scale.max(other.scale);
        let a = rescale(self.unscaled, self.scale, s)?;
        let mut b = rescale(other.unscaled, other.scale, s)?;
        if negate {
            b = -b;
        }
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        Some(Self::new(a.checked_add(b)?, s, format))
    }

    /// `inf.Dec.Mul`: scales add.
    pub fn mul(&self, other: &Self) -> Option<Self> {
        Some(Self::new(
            self.unscaled.checked_mul(other.unscaled)?,
            self.scale.checked_add(other.scale)?,
            self.format,
        ))
    }

    /// `inf.Dec.QuoRound(self, other, max(scales), RoundDown)`.
    pub fn quo_round_down(&self, other: &Self) -> Option<Self> {
        let s = self.scale.max(other.scale);
        // result = self / other at scale s: (a × 10^(s + sb - sa)) / b, truncated.
        let shift = i64::from(s) + i64::from(other.scale) - i64::from(self.scale);
        let (num, den) = if shift >= 0 {
            (
                self.unscaled
                    .checked_mul(pow10(u32::try_from(shift).ok()?)?)?,
                other.unscaled,
            )
        } else {
            (
                self.unscaled,
                other
                    .unscaled
                    .checked_mul(pow10(u32::try_from(-shift).ok()?)?)?,
            )
        };
        if den == 0 {
            return None;
        }
        Some(Self::new(num / den, s, self.format))
    }

    /// The canonical string, as `Quantity.String()` prints a computed quantity.
    pub fn canonical(&self) -> String {
        if self.unscaled == 0 {
            return "0".to_owned();
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let one_k = Self::new(1024, 0, Format::DecimalSi);
            let minus_k = Self::new(-1024, 0, Format::DecimalSi);
            if self.cmp_value(&minus_k) == Ordering::Greater
                && self.cmp_value(&one_k) == Ordering::Less
            {
                format = Format::DecimalSi;
            } else if let Some(int) = self.exact_integer() {
                let mut v = int;
                let mut e = 0;
                while v % 1024 == 0 && e < 6 {
                    v /= 1024;
                    e += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][e];
                return format!("{v}{suffix}");
            } else {
                format = Format::DecimalSi;
            }
        }
        let mut mantissa = self.unscaled;
        let mut exponent = -i64::from(self.scale);
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        while exponent % 3 != 0 {
            mantissa = mantissa.saturating_mul(10);
            exponent -= 1;
        }
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => match exponent {
                -9 => "n",
                -6 => "u",
                -3 => "m",
                3 => "k",
                6 => "M",
                9 => "G",
                12 => "T",
                15 => "P",
                18 => "E",
                // Kubernetes finds no suffix and prints none (a known oddity).
                _ => "",
            }
            .to_owned(),
        };
        format!("{mantissa}{suffix}")
    }

    fn exact_integer(&self) -> Option<i128> {
        if self.scale <= 0 {
            return self
                .unscaled
                .checked_mul(pow10(u32::try_from(-self.scale).ok()?)?);
        }
        let p = pow10(u32::try_from(self.scale).ok()?)?;
        (self.unscaled % p == 0).then_some(self.unscaled / p)
    }
}

fn rescale(unscaled: i128, from: i32, to: i32) -> Option<i128> {
    let d = u32::try_from(i64::from(to) - i64::from(from)).ok()?;
    unscaled.checked_mul(pow10(d)?)
}

/// (binary exponent, decimal exponent, format) of a suffix.
fn interpret_suffix(s: &str) -> Option<(u32, i32, Format)> {
    let r = match s {
        "" => (0, 0, Format::DecimalSi),
        "Ki" => (10, 0, Format::BinarySi),
        "Mi" => (20, 0, Format::BinarySi),
        "Gi" => (30, 0, Format::BinarySi),
        "Ti" => (40, 0, Format::BinarySi),
        "Pi" => (50, 0, Format::BinarySi),
        "Ei" => (60, 0, Format::BinarySi),
        "n" => (0, -9, Format::DecimalSi),
        "u" => (0, -6, Format::DecimalSi),
        "m" => (0, -3, Format::DecimalSi),
        "k" => (0, 3, Format::DecimalSi),
        "M" => (0, 6, Format::DecimalSi),
        "G" => (0, 9, Format::DecimalSi),
        "T" => (0, 12, Format::DecimalSi),
        "P" => (0, 15, Format::DecimalSi),
        "E" => (0, 18, Format::DecimalSi),
        _ => {
            let rest = s.strip_prefix(['e', 'E'])?;
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let e: i64 = rest.parse().ok()?;
            // Beyond these the value is capped or rounded to nano anyway.
            let e = e.clamp(-60, 60) as i32;
            (0, e, Format::DecimalExponent)
        }
    };
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn parses_and_compares() {
        assert_eq!(q("1Gi").cmp_value(&q("1024Mi")), Ordering::Equal);
        assert_eq!(q("0.2").cmp_value(&q("200m")), Ordering::Equal);
        assert_eq!(q("1G").cmp_value(&q("1Gi")), Ordering::Less);
        assert_eq!(q("10").cmp_value(&q("010")), Ordering::Equal);
        assert_eq!(q("1e3").cmp_value(&q("1000")), Ordering::Equal);
        assert_eq!(q(".5").cmp_value(&q("500m")), Ordering::Equal);
        assert_eq!(q("1.5Ki").cmp_value(&q("1536")), Ordering::Equal);
        assert_eq!(q("-1").cmp_value(&q("0")), Ordering::Less);
        for bad in ["", "K", "1K", "abc", "1.2.3", " 1", "1 ", "1e", "1h", "e"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
        // No digits reads as zero (`parseQuantityString`), as the pattern parser has it.
        for zero in ["-", "+", ".", "Ki", "e3", "m"] {
            assert!(q(zero).is_zero(), "{zero}");
            assert_eq!(
                crate::pattern::parse_quantity(zero),
                Some(0),
                "pattern parser on {zero}"
            );
        }
        // Binary values past Go's fast path are capped at 2^63-1, like the pattern parser.
        let max = q("9223372036854775807");
        assert_eq!(q("9Ei").cmp_value(&max), Ordering::Equal);
        assert_eq!(q("8192Pi").cmp_value(&max), Ordering::Equal);
        assert_eq!(q("8191Pi").cmp_value(&max), Ordering::Less);
        assert_eq!(q("7Ei").cmp_value(&max), Ordering::Less);
        assert_eq!(
            crate::pattern::parse_quantity("9Ei"),
            Some(9_223_372_036_854_775_807 * 1_000_000_000)
        );
        // Finer than nano rounds up.
        assert_eq!(q("1e-12").cmp_value(&q("1n")), Ordering::Equal);
    }

    #[test]
    fn canonical_strings() {
        assert_eq!(
            q("12Ki").add(&q("13Ki"), false).unwrap().canonical(),
            "25Ki"
        );
        assert_eq!(q("12Ki").add(&q("13"), false).unwrap().canonical(), "12301");
        assert_eq!(q("1000m").canonical(), "1");
        assert_eq!(q("1500m").canonical(), "1500m");
        assert_eq!(q("1.5").canonical(), "1500m");
        assert_eq!(q("1e3").canonical(), "1e3");
        assert_eq!(q("100Mi").canonical(), "100Mi");
        assert_eq!(q("0").canonical(), "0");
        assert_eq!(q("512").canonical(), "512");
        assert_eq!(q("2048").canonical(), "2048");
        assert_eq!(q("5k").canonical(), "5k");
    }
}

#[cfg(test)]
mod agreement {
    use super::*;

    /// Nano-units of a parsed quantity, when they fit.
    fn nanos(q: &Quantity) -> Option<i128> {
        let shift = 9 - q.scale;
        if shift >= 0 {
            q.unscaled.checked_mul(pow10(shift as u32)?)
        } else {
            let p = pow10((-shift) as u32)?;
            (q.unscaled % p == 0).then(|| q.unscaled / p)
        }
    }

    /// The JMESPath and pattern parsers read every quantity alike (validate.md §5.3).
    #[test]
    fn jmespath_and_pattern_parsers_agree() {
        let signs = ["", "-", "+"];
        let numbers = [
            "",
            "0",
            "1",
            "007",
            "12",
            ".5",
            "1.",
            "1.5",
            "0.001",
            "123456789012345678",
            "1234567890123456789",
            "99999999999999999999",
            "3.14159265358979",
            "1.0000000001",
            "8",
            "8191",
            "8192",
            "9",
        ];
        let suffixes = [
            "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
            "e3", "E-3", "e+2", "e18", "e-12", "K", "e", "x", "i",
        ];
        let mut compared = 0;
        for sign in signs {
            for num in numbers {
                for suffix in suffixes {
                    let s = format!("{sign}{num}{suffix}");
                    let j = Quantity::parse(&s);
                    let p = crate::pattern::parse_quantity(&s);
                    assert_eq!(j.is_some(), p.is_some(), "{s:?}: {j:?} vs {p:?}");
                    // Past an i128 of nanos (~1.7e29 units) the pattern parser saturates.
                    if let (Some(j), Some(p)) = (j, p)
                        && p.abs() != i128::MAX
                    {
                        assert_eq!(nanos(&j), Some(p), "{s:?}: {j:?}");
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }
}
