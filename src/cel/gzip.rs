//! Kyverno's CEL `gzip` library (`kyverno/sdk:extensions/cel/libs/gzip`): `gzip.compress(s)`
//! gives the gzip stream of the string's bytes (modification time 0, as Kyverno sets it for
//! determinism) and `gzip.decompress(b)` the string a gzip stream holds.
//!
//! Deliberate difference: kpol's deflate encoder (flate2) is not Go's, so `gzip.compress`
//! bytes differ from Kyverno's for the same input (both decompress to it); compare
//! decompressed strings, not compressed bytes.

use std::io::{Read as _, Write as _};
use std::sync::Arc;

use cel::{Context, ExecutionError, Value};

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("gzip.compress", compress);
    let _ = ctx.add_function("gzip.decompress", decompress);
}

fn compress(v: Value) -> Result<Value, ExecutionError> {
    let Value::String(s) = v else {
        return Err(ExecutionError::function_error(
            "gzip.compress",
            format!("type conversion error from '{}' to 'string'", v.type_of()),
        ));
    };
    let fail = |e: std::io::Error| ExecutionError::function_error("gzip.compress", e);
    let mut w = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    w.write_all(s.as_bytes()).map_err(fail)?;
    Ok(Value::Bytes(Arc::new(w.finish().map_err(fail)?)))
}

fn decompress(v: Value) -> Result<Value, ExecutionError> {
    let Value::Bytes(b) = v else {
        return Err(ExecutionError::function_error(
            "gzip.decompress",
            format!("type conversion error from '{}' to '[]uint8'", v.type_of()),
        ));
    };
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b.as_slice())
        .read_to_end(&mut out)
        .map_err(|e| ExecutionError::function_error("gzip.decompress", format!("gzip: {e}")))?;
    // Go's `string(bytes)` keeps any bytes; a CEL string here must be UTF-8.
    String::from_utf8(out)
        .map(Value::from)
        .map_err(|_| ExecutionError::function_error("gzip.decompress", "content is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr as run;
    use cel::Value;

    #[test]
    fn decompresses_go_output() {
        // kyverno/sdk's case: Go's gzip of "kyverno".
        assert_eq!(
            run("gzip.decompress(base64.decode('H4sIADP4umkAA8uuLEstyssHAOgPnDMHAAAA'))"),
            Ok(Value::from("kyverno"))
        );
        assert_eq!(
            run("gzip.decompress(base64.decode('H4sIAAAAAAAA/8quLEstyssHBAAA///oD5wzBwAAAA=='))"),
            Ok(Value::from("kyverno"))
        );
    }

    #[test]
    fn compress_round_trips_with_a_zero_mtime_header() {
        assert_eq!(
            run("gzip.decompress(gzip.compress('kyverno'))"),
            Ok(Value::from("kyverno"))
        );
        // ID1 ID2 CM FLG, MTIME 0, XFL, OS 255: Go's header.
        assert_eq!(
            run("base64.encode(gzip.compress('x')).startsWith('H4sIAAAAAAAA/')"),
            Ok(Value::Bool(true))
        );
    }

    #[test]
    fn errors_are_go_s() {
        let e = run("gzip.decompress(b'not gzip')").unwrap_err();
        assert!(e.starts_with("gzip: "), "{e}");
        let e = run("gzip.compress(1)").unwrap_err();
        assert!(e.contains("to 'string'"), "{e}");
        assert!(run("gzip.decompress('x')").is_err());
    }
}
