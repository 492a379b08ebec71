//! Kubernetes resource quantities (`k8s.io/apimachinery/pkg/api/resource.ParseQuantity`) as
//! Kyverno compares them in patterns (validate.md §5.3).
//!
//! A parsed quantity is reduced to what `Quantity.Cmp` can observe: an exact integer number of
//! nano-units. `ParseQuantity` rounds every value up (away from zero) to a multiple of `1n`,
//! caps the magnitude at 2^63-1 units and rounds binary-suffixed values up to whole units, so
//! every canonical value fits an `i128` of nanos and comparison is plain integer comparison.

/// `2^63 - 1`: the largest magnitude `ParseQuantity` keeps (`maxAllowed`).
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
    // MAX_NANOS < 2^93, so the conversion cannot fail; keep it checked anyway.
    let magnitude = i128::try_from(magnitude.min(MAX_NANOS)).ok()?;
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

/// Value × 10^exponent in nanos, rounded up, saturated above `MAX_NANOS`.
fn decimal_nanos(num: &[u8], denom: &[u8], exponent: i64) -> u128 {
    let d = Digits::new(num, denom);
    if d.len() == 0 {
        return 0;
    }
    let len = d.len() as i64;
    let shift = 9 - denom.len() as i64 + exponent;
    if shift >= 0 {
        // MAX_NANOS has 28 digits: anything with more is capped.
        if len + shift > 29 {
            return u128::MAX;
        }
        return d
            .prefix_value(d.len())
            .saturating_mul(10u128.pow(shift as u32));
    }
    let cut = -shift;
    if cut >= len {
        return 1; // a non-zero value below 1n rounds up to 1n
    }
    let keep = (len - cut) as usize;
    if keep > 29 {
        return u128::MAX;
    }
    d.prefix_value(keep) + u128::from(d.rest_nonzero(keep))
}

/// Value × 2^exponent, rounded up to whole units, in nanos, saturated above `MAX_NANOS`.
fn binary_nanos(num: &[u8], denom: &[u8], exponent: i64) -> u128 {
    let d = Digits::new(num, denom);
    if d.len() == 0 {
        return 0;
    }
    let e = exponent as u32; // binary suffixes are 10..=60
    let k = denom.len();
    let units = if d.len() <= 19 && k <= 19 {
        let scaled = d.prefix_value(d.len()) << e; // < 10^19 · 2^60 < 2^124
        let div = 10u128.pow(k as u32);
        scaled / div + u128::from(!scaled.is_multiple_of(div))
    } else {
        big_ceil_shift_div(d, e, k)
    };
    units.min(MAX_UNITS + 1).saturating_mul(NANOS_PER_UNIT)
}

/// `ceil(digits · 2^shift / 10^k)` for long digit strings, saturating at `u128::MAX`.
fn big_ceil_shift_div(digits: Digits<'_>, shift: u32, k: usize) -> u128 {
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
    let mut inexact = false;
    for _ in 0..k {
        inexact |= div_small(&mut big, 10) != 0;
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
        // Below 1n rounds up to 1n; binary fractions round up to whole units.
        assert_eq!(q("0.1n"), Some(1));
        assert_eq!(q("-0.1n"), Some(-1));
        assert_eq!(q("0.001Ki"), Some(2 * N));
        assert_eq!(q("1.5Ki"), Some(1536 * N));
        assert_eq!(q("0.5Ki"), Some(512 * N));
        let max = ((1i128 << 63) - 1) * N;
        assert_eq!(q("1e100"), Some(max));
        assert_eq!(q("100000000000000000000000000000000000000000"), Some(max));
        assert_eq!(q("16Ei"), Some(max));
        assert_eq!(q("1e-100"), Some(1));
        assert_eq!(q("1.00000000000000000000000000000000001Ki"), Some(1025 * N));
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
