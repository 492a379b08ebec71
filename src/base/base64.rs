//! Base64 read leniently: either alphabet (standard `+/` or URL-safe `-_`), trailing `=`
//! padding optional — the form JWS parts and Go-JSON `[]byte` fields both fit.

/// The decoded bytes, or the position of the first byte outside both alphabets.
pub fn decode_lenient(text: &str) -> Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, c) in text.trim_end_matches('=').bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return Err(i),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode_lenient;

    #[test]
    fn both_alphabets_with_or_without_padding() {
        assert_eq!(decode_lenient("aGk="), Ok(b"hi".to_vec()));
        assert_eq!(decode_lenient("aGk"), Ok(b"hi".to_vec()));
        assert_eq!(decode_lenient("-_-_"), decode_lenient("+/+/"));
        assert_eq!(decode_lenient(""), Ok(Vec::new()));
    }

    #[test]
    fn a_foreign_byte_is_named_by_its_position() {
        assert_eq!(decode_lenient("aG*k"), Err(2));
        assert_eq!(decode_lenient("a=Gk"), Err(1));
    }
}
