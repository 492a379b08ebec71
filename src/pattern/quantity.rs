//! Kubernetes resource quantities (`k8s.io/apimachinery/pkg/api/resource.ParseQuantity`) as
//! Kyverno compares them in patterns (validate.md §5.3).
//!
//! A parsed quantity is reduced to what `Quantity.Cmp` can observe: an exact integer number of
//! nano-units. `ParseQuantity` rounds every value up (away from zero) to a multiple of `1n` and
//! caps binary-suffixed magnitudes at 2^63-1 units (decimal ones are never capped), so a value
//! fits an `i128` of nanos — saturating only beyond ~1.7e29 units, which Go keeps exactly —
//! and comparison is plain integer comparison.

/// `2^63 - 1`: the largest binary-suffixed magnitude `ParseQuantity` keeps (`maxAllowed`).
const MAX_UNITS: u128 = (1 << 63) - 1;
const NANOS_PER_UNIT: u128 = 1_000_000_000;
const MAX_NANOS: u128 = MAX_UNITS * NANOS_PER_UNIT;

/// Parses a quantity; `Some(nanos)` where `ParseQuantity` succeeds.
pub(crate) fn parse_quantity(s: &str) -> Option<i128> {
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(0);
    }
    let parts = split_quantity(s.as_bytes())?;
    let (base, exponent) = interpret_suffix(parts.suffix)?;
    let magnitude = if base == 10 {
        decimal_nanos(parts.num, parts.denom, exponent)
    } else {
        binary_nanos(parts.num, parts.denom, exponent)
    };
    // Decimals are never capped; past ~1.7e29 units they saturate here (Go keeps them exact).
    let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
    Some(if parts.positive {
        magnitude
    } else {
        -magnitude
    })
}

struct Parts<'a> {
    positive: bool,
    /// Integer digits without leading zeros (`"0"` when there are none).
    num: &'a [u8],
    /// Fraction digits, possibly empty.
    denom: &'a [u8],
    suffix: &'a [u8],
}

/// `parseQuantityString`: sign, digits, optional `.digits`, then a suffix made of the letters
/// `eEinumkKMGTP`, optionally followed by a signed exponent.
fn split_quantity(s: &[u8]) -> Option<Parts<'_>> {
    let end = s.len();
    let mut pos = 0;
    let mut positive = true;
    match s.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && s[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        // Only a sign and zeros ("-", "+", "000"): Go returns zero.
        return Some(Parts {
            positive,
            num: b"0",
            denom: b"",
            suffix: b"",
        });
    }
    let num_start = pos;
    while pos < end && s[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &s[num_start..pos];
    if num.is_empty() {
        num = b"0";
    }
    let mut denom: &[u8] = b"";
    if pos < end && s[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && s[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[start..pos];
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&s[pos]) {
        pos += 1;
    }
    if pos < end && (s[pos] == b'-' || s[pos] == b'+') {
        pos += 1;
    }
    while pos < end && s[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return None;
    }
    Some(Parts {
        positive,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// `quantitySuffixer.interpret`: `(base, exponent)`.
fn interpret_suffix(suffix: &[u8]) -> Option<(u32, i64)> {
    let dec = |e| Some((10, e));
    let bin = |e| Some((2, e));
    match suffix {
        b"n" => dec(-9),
        b"u" => dec(-6),
        b"m" => dec(-3),
        b"" => dec(0),
        b"k" => dec(3),
        b"M" => dec(6),
        b"G" => dec(9),
        b"T" => dec(12),
        b"P" => dec(15),
        b"E" => dec(18),
        b"Ki" => bin(10),
        b"Mi" => bin(20),
        b"Gi" => bin(30),
        b"Ti" => bin(40),
        b"Pi" => bin(50),
        b"Ei" => bin(60),
        [b'e' | b'E', rest @ ..] if !rest.is_empty() => {
            let text = std::str::from_utf8(rest).ok()?;
            // Go parses an int64 and then truncates it to int32.
            let parsed: i64 = text.parse().ok()?;
            Some((10, i64::from(parsed as i32)))
        }
        _ => None,
    }
}

/// The digits of `num` then `denom`, leading zeros dropped, without copying them.
#[derive(Clone, Copy)]
struct Digits<'a> {
    num: &'a [u8],
    denom: &'a [u8],
}

impl<'a> Digits<'a> {
    fn new(num: &'a [u8], denom: &'a [u8]) -> Self {
        let nz = num.iter().take_while(|&&c| c == b'0').count();
        let num = &num[nz..];
        let denom = if num.is_empty() {
            let dz = denom.iter().take_while(|&&c| c == b'0').count();
            &denom[dz..]
        } else {
            denom
        };
        Digits { num, denom }
    }

    fn len(self) -> usize {
        self.num.len() + self.denom.len()
    }

    fn iter(self) -> impl Iterator<Item = u8> + 'a {
        self.num.iter().chain(self.denom).copied()
    }

    /// The first `n` digits as a number (callers keep `n` ≤ 38).
    fn prefix_value(self, n: usize) -> u128 {
        self.iter()
            .take(n)
            .fold(0u128, |acc, c| acc * 10 + u128::from(c - b'0'))
    }

    /// Whether any digit after the first `n` is non-zero.
    fn rest_nonzero(self, n: usize) -> bool {
        self.iter().skip(n).any(|c| c != b'0')
    }
}

/// Value × 10^exponent in nanos, rounded up, saturating at `u128::MAX`.
fn decimal_nanos(num: &[u8], denom: &[u8], exponent: i64) -> u128 {
    let d = Digits::new(num, denom);
    if d.len() == 0 {
        return 0;
    }
    let len = d.len() as i64;
    let shift = 9 - denom.len() as i64 + exponent;
    if shift >= 0 {
        if len > 38 {
            return u128::MAX;
        }
        let value = d.prefix_value(d.len());
        return u32::try_from(shift)
            .ok()
            .and_then(|s| 10u128.checked_pow(s))
            .and_then(|p| value.checked_mul(p))
            .unwrap_or(u128::MAX);
    }
    let cut = -shift;
    if cut >= len {
        return 1; // a non-zero value below 1n rounds up to 1n
    }
    let keep = (len - cut) as usize;
    if keep > 38 {
        return u128::MAX;
    }
    d.prefix_value(keep) + u128::from(d.rest_nonzero(keep))
}

/// Value × 2^exponent in nanos, rounded up to a nano, capped at `MAX_NANOS`.
fn binary_nanos(num: &[u8], denom: &[u8], exponent: i64) -> u128 {
    let d = Digits::new(num, denom);
    if d.len() == 0 {
        return 0;
    }
    // Binary suffixes are 10..=60.
    big_ceil(d, exponent as u32, denom.len()).min(MAX_NANOS)
}

/// `ceil(digits · 2^shift · 10^9 / 10^k)`, saturating at `u128::MAX`.
fn big_ceil(digits: Digits<'_>, shift: u32, k: usize) -> u128 {
    let mut big: Vec<u32> = Vec::new();
    for c in digits.iter() {
        mul_add(&mut big, 10, u32::from(c - b'0'));
    }
    let mut left = shift;
    while left > 0 {
        let s = left.min(31);
        mul_add(&mut big, 1 << s, 0);
        left -= s;
    }
    mul_add(&mut big, 1_000_000_000, 0);
    let mut inexact = false;
    for _ in 0..k {
        inexact |= div_small(&mut big, 10) != 0;
    }
    while big.last() == Some(&0) {
        big.pop();
    }
    if big.len() > 4 {
        return u128::MAX;
    }
    let value = big
        .iter()
        .rev()
        .fold(0u128, |acc, &limb| (acc << 32) | u128::from(limb));
    value.saturating_add(u128::from(inexact))
}

fn mul_add(big: &mut Vec<u32>, m: u32, a: u32) {
    let mut carry = u64::from(a);
    for limb in big.iter_mut() {
        let v = u64::from(*limb) * u64::from(m) + carry;
        *limb = v as u32;
        carry = v >> 32;
    }
    if carry != 0 {
        big.push(carry as u32);
    }
}

fn div_small(big: &mut Vec<u32>, d: u32) -> u32 {
    let mut rem: u64 = 0;
    for limb in big.iter_mut().rev() {
        let cur = (rem << 32) | u64::from(*limb);
        *limb = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    while big.last() == Some(&0) {
        big.pop();
    }
    rem as u32
}

#[cfg(test)]
mod tests {
    use super::parse_quantity as q;

    const N: i128 = 1_000_000_000;

    #[test]
    fn plain_and_suffixed() {
        assert_eq!(q("0"), Some(0));
        assert_eq!(q("1"), Some(N));
        assert_eq!(q("010"), q("10"));
        assert_eq!(q("1e3"), q("1000"));
        assert_eq!(q("1E+3"), q("1k"));
        assert_eq!(q("100m"), Some(N / 10));
        assert_eq!(q("0.1"), q("100m"));
        assert_eq!(q("0.2"), q("200m"));
        assert_eq!(q("1Gi"), q("1024Mi"));
        assert_eq!(q("2048Mi"), Some(2 * 1024 * 1024 * 1024 * N));
        assert!(q("1G") < q("1Gi"));
        assert_eq!(q("-1"), Some(-N));
        assert_eq!(q("+0Mi"), Some(0));
        assert_eq!(q(".5"), Some(N / 2));
        assert_eq!(q("5."), Some(5 * N));
        assert_eq!(q("."), Some(0));
        assert_eq!(q("-"), Some(0));
        assert_eq!(q("80.000000"), Some(80 * N));
        assert_eq!(q("1n"), Some(1));
    }

    #[test]
    fn rounding_and_caps() {
        // Below 1n rounds up to 1n, binary fractions too (exact to the nano, not to the unit).
        assert_eq!(q("0.1n"), Some(1));
        assert_eq!(q("-0.1n"), Some(-1));
        assert_eq!(q("0.001Ki"), Some(1_024_000_000));
        assert_eq!(q("1.5Ki"), Some(1536 * N));
        assert_eq!(q("0.5Ki"), Some(512 * N));
        // Binary magnitudes are capped at 2^63-1 units; decimal ones are not (they saturate
        // only past what an i128 of nanos holds).
        let max = ((1i128 << 63) - 1) * N;
        assert_eq!(q("16Ei"), Some(max));
        assert_eq!(q("-16Ei"), Some(-max));
        assert_eq!(q("12E"), Some(12 * 10i128.pow(18) * N));
        assert_eq!(
            q("99999999999999999999"),
            Some(99_999_999_999_999_999_999 * N)
        );
        assert_eq!(q("1e100"), Some(i128::MAX));
        assert_eq!(
            q("100000000000000000000000000000000000000000"),
            Some(i128::MAX)
        );
        assert_eq!(q("1e-100"), Some(1));
        assert_eq!(
            q("1.00000000000000000000000000000000001Ki"),
            Some(1024 * N + 1)
        );
        assert_eq!(q("0.00000000000000000000000000000000000Ki"), Some(0));
    }

    #[test]
    fn invalid() {
        for s in [
            "", "*", "1K", "1h", "5mi", "1e", "1ee3", "1k5", " 5", "5 ", "1.5.5", "1.4.1", "abc",
            "nginx", "1-2",
        ] {
            assert_eq!(q(s), None, "{s:?}");
        }
    }
}
