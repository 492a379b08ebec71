//! Run-time CEL errors worded as Kyverno's CLI prints them (cel-go v0.30, the Go libraries of
//! `kyverno/sdk`), checked against the Kyverno v1.19.0 CLI binary (tests/testdata/cel-errors).
//!
//! The `cel` crate words its errors its own way ("Error executing function 'f': …", "No such
//! key: k", "Index out of bounds: Int(5)"); cel-go returns a library function's error as the
//! function's value, with no function name in front, and words its own errors in lower case.
//! [`text`] gives cel-go's wording where the cause is the same, the crate's otherwise. The
//! Go JSON decoder's syntax errors ("invalid character 'b' looking for beginning of object key
//! string") are [`json_syntax_error`]'s.

use cel::{ExecutionError, Value};

/// `e` as cel-go words it.
pub fn text(e: &ExecutionError) -> String {
    match e {
        ExecutionError::FunctionError { function, message } => function_error(function, message),
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::IndexOutOfBounds(v) => format!("index out of bounds: {}", go_value(v)),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(_, Value::UInt(_), _) => "unsigned integer overflow".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::UnsupportedBinaryOperator(..) => "no such overload".to_owned(),
        other => other.to_string(),
    }
}

/// A function's own error: its message alone, as cel-go returns it; the standard conversions'
/// parse failures in cel-go's words.
fn function_error(function: &str, message: &str) -> String {
    match function {
        "int" | "uint" | "double" if message.contains("parse error") => {
            format!("type conversion error from 'string' to '{function}'")
        }
        _ => message.to_owned(),
    }
}

/// A scalar as Go's `%v` prints it; anything else in the crate's debug form.
fn go_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::String(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// Where `text` is not valid JSON, the error Go's `encoding/json` gives for it (its scanner's
/// first complaint); `None` for valid JSON.
pub(crate) fn json_syntax_error(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut i = 0;
    skip_space(b, &mut i);
    if let Err(e) = value(b, &mut i) {
        return Some(e);
    }
    skip_space(b, &mut i);
    b.get(i)
        .map(|&c| format!("invalid character {} after top-level value", quote(c)))
}

const END: &str = "unexpected end of JSON input";

fn skip_space(b: &[u8], i: &mut usize) {
    while matches!(b.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        *i += 1;
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote(c))
}

/// Go's `quoteChar`: `'\''`, `'"'`, else the character as `strconv.Quote` writes it, in single
/// quotes. A byte past ASCII is read as the Latin-1 character of that number, as Go's
/// `string(byte)` reads it.
fn quote(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        b'\n' => r"'\n'".to_owned(),
        b'\r' => r"'\r'".to_owned(),
        b'\t' => r"'\t'".to_owned(),
        0x07 => r"'\a'".to_owned(),
        0x08 => r"'\b'".to_owned(),
        0x0c => r"'\f'".to_owned(),
        0x0b => r"'\v'".to_owned(),
        c if c < 0x20 || c == 0x7f => format!("'\\x{c:02x}'"),
        c if c < 0x80 => format!("'{}'", c as char),
        c if c < 0xa0 || c == 0xad => format!("'\\u{c:04x}'"),
        c => format!("'{}'", char::from(c)),
    }
}

fn value(b: &[u8], i: &mut usize) -> Result<(), String> {
    let Some(&c) = b.get(*i) else {
        return Err(END.to_owned());
    };
    match c {
        b'{' => object(b, i),
        b'[' => array(b, i),
        b'"' => string(b, i),
        b'-' | b'0'..=b'9' => number(b, i),
        b't' => literal(b, i, "true"),
        b'f' => literal(b, i, "false"),
        b'n' => literal(b, i, "null"),
        c => Err(invalid(c, "looking for beginning of value")),
    }
}

fn object(b: &[u8], i: &mut usize) -> Result<(), String> {
    *i += 1;
    skip_space(b, i);
    if b.get(*i) == Some(&b'}') {
        *i += 1;
        return Ok(());
    }
    loop {
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b'"') => string(b, i)?,
            Some(&c) => return Err(invalid(c, "looking for beginning of object key string")),
        }
        skip_space(b, i);
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b':') => *i += 1,
            Some(&c) => return Err(invalid(c, "after object key")),
        }
        skip_space(b, i);
        value(b, i)?;
        skip_space(b, i);
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b',') => {
                *i += 1;
                skip_space(b, i);
            }
            Some(b'}') => {
                *i += 1;
                return Ok(());
            }
            Some(&c) => return Err(invalid(c, "after object key:value pair")),
        }
    }
}

fn array(b: &[u8], i: &mut usize) -> Result<(), String> {
    *i += 1;
    skip_space(b, i);
    if b.get(*i) == Some(&b']') {
        *i += 1;
        return Ok(());
    }
    loop {
        value(b, i)?;
        skip_space(b, i);
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b',') => {
                *i += 1;
                skip_space(b, i);
            }
            Some(b']') => {
                *i += 1;
                return Ok(());
            }
            Some(&c) => return Err(invalid(c, "after array element")),
        }
    }
}

fn string(b: &[u8], i: &mut usize) -> Result<(), String> {
    *i += 1;
    loop {
        let Some(&c) = b.get(*i) else {
            return Err(END.to_owned());
        };
        *i += 1;
        match c {
            b'"' => return Ok(()),
            b'\\' => {
                let Some(&e) = b.get(*i) else {
                    return Err(END.to_owned());
                };
                *i += 1;
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            match b.get(*i) {
                                None => return Err(END.to_owned()),
                                Some(h) if h.is_ascii_hexdigit() => *i += 1,
                                Some(&h) => {
                                    return Err(invalid(h, "in \\u hexadecimal character escape"));
                                }
                            }
                        }
                    }
                    e => return Err(invalid(e, "in string escape code")),
                }
            }
            c if c < 0x20 => return Err(invalid(c, "in string literal")),
            _ => {}
        }
    }
}

fn number(b: &[u8], i: &mut usize) -> Result<(), String> {
    let digits = |i: &mut usize| {
        while matches!(b.get(*i), Some(b'0'..=b'9')) {
            *i += 1;
        }
    };
    if b.get(*i) == Some(&b'-') {
        *i += 1;
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b'0'..=b'9') => {}
            Some(&c) => return Err(invalid(c, "in numeric literal")),
        }
    }
    if b.get(*i) == Some(&b'0') {
        *i += 1;
    } else {
        digits(i);
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b'0'..=b'9') => digits(i),
            Some(&c) => return Err(invalid(c, "after decimal point in numeric literal")),
        }
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(b'0'..=b'9') => digits(i),
            Some(&c) => return Err(invalid(c, "in exponent of numeric literal")),
        }
    }
    Ok(())
}

fn literal(b: &[u8], i: &mut usize, word: &str) -> Result<(), String> {
    // The first letter chose the literal.
    *i += 1;
    for want in word.bytes().skip(1) {
        match b.get(*i) {
            None => return Err(END.to_owned()),
            Some(&c) if c == want => *i += 1,
            Some(&c) => {
                return Err(invalid(
                    c,
                    &format!("in literal {word} (expecting {})", quote(want)),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts from Go 1.25's encoding/json (the Kyverno v1.19.0 binary prints the first).
    #[test]
    fn json_errors_are_go_s() {
        let cases = [
            (
                "{bad",
                "invalid character 'b' looking for beginning of object key string",
            ),
            ("", "unexpected end of JSON input"),
            ("{\"a\": 1", "unexpected end of JSON input"),
            ("[1 2]", "invalid character '2' after array element"),
            ("{\"a\" 1}", "invalid character '1' after object key"),
            (
                "{\"a\": 1 \"b\"}",
                "invalid character '\"' after object key:value pair",
            ),
            ("x", "invalid character 'x' looking for beginning of value"),
            ("1 2", "invalid character '2' after top-level value"),
            ("tru", "unexpected end of JSON input"),
            (
                "trux",
                "invalid character 'x' in literal true (expecting 'e')",
            ),
            ("\"a\\q\"", "invalid character 'q' in string escape code"),
            ("-a", "invalid character 'a' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "'a'",
                r"invalid character '\'' looking for beginning of value",
            ),
            ("\"a\nb\"", r"invalid character '\n' in string literal"),
        ];
        for (input, want) in cases {
            assert_eq!(json_syntax_error(input).as_deref(), Some(want), "{input:?}");
        }
        for ok in [
            "{}",
            "[]",
            " {\"a\": [1, -2.5e+3, true, false, null, \"\\u00e9\\n\"]} ",
            "0",
        ] {
            assert_eq!(json_syntax_error(ok), None, "{ok:?}");
        }
    }

    #[test]
    fn errors_are_worded_as_cel_go_words_them() {
        use std::sync::Arc;
        let f = ExecutionError::function_error("x509.decode", "failed to decode PEM block");
        assert_eq!(text(&f), "failed to decode PEM block");
        let conv = ExecutionError::function_error("int", "string parse error: invalid digit");
        assert_eq!(text(&conv), "type conversion error from 'string' to 'int'");
        assert_eq!(
            text(&ExecutionError::NoSuchKey(Arc::new("nope".to_owned()))),
            "no such key: nope"
        );
        assert_eq!(
            text(&ExecutionError::IndexOutOfBounds(Value::Int(5))),
            "index out of bounds: 5"
        );
        assert_eq!(
            text(&ExecutionError::DivisionByZero(Value::Int(1))),
            "division by zero"
        );
        assert_eq!(
            text(&ExecutionError::RemainderByZero(Value::Int(1))),
            "modulus by zero"
        );
        assert_eq!(
            text(&ExecutionError::Overflow(
                "add",
                Value::Int(1),
                Value::Int(1)
            )),
            "integer overflow"
        );
    }
}
