//! YAML for generated resources ([`crate::yaml::emit`]): keys in their own order, strings
//! quoted only when plain style would read back as something else.

use serde_json::Value;

/// The value as a YAML document body (no `---`), ending with a newline.
pub fn to_yaml(v: &Value) -> String {
    let style = crate::yaml::emit::Style {
        sort_keys: false,
        key: &quote,
        scalar: &scalar,
    };
    crate::yaml::emit::block(v, &style)
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            // Integral floats (the CLI's normalised integers) print as integers.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        Value::String(s) => quote(s),
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
    }
}

/// A string, plain when that reads back as the same string, else double-quoted JSON-style.
fn quote(s: &str) -> String {
    if needs_quotes(s) {
        serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
    } else {
        s.to_owned()
    }
}

fn needs_quotes(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return true;
    };
    let unsafe_text = "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || first.is_whitespace()
        || s.ends_with(char::is_whitespace)
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.chars().any(|c| c.is_control());
    // Otherwise: plain only when kpol's own YAML 1.1 reader reads it back as this string
    // (not a number, boolean, null, timestamp-like or sexagesimal value).
    unsafe_text || !reads_back_as_string(s)
}

fn reads_back_as_string(s: &str) -> bool {
    let text = format!("{s}\n");
    match crate::yaml::parse_documents(&text, crate::yaml::Limits::default()) {
        Ok(docs) => {
            docs.len() == 1 && matches!(&docs[0].root.value, crate::yaml::Value::Str(v) if v == s)
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_block_yaml_that_reads_back() {
        let v = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "labels": {"a": "true", "b": ""}},
            "data": {"n": "4", "list": [{"k": 1, "m": {"z": null}}, "- dash", []]},
            "tricky": ["1_000", "1:20", "0x1F", "Yes", "~", "a: b", "x #y", "line\nbreak", "plain text", "0755", "=", "<<"],
            "empty": {}
        });
        let text = to_yaml(&v);
        assert_eq!(
            text,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: \"true\"\n    b: \"\"\ndata:\n  \"n\": \"4\"\n  list:\n  - k: 1\n    m:\n      z: null\n  - \"- dash\"\n  - []\ntricky:\n- \"1_000\"\n- 1:20\n- \"0x1F\"\n- \"Yes\"\n- \"~\"\n- \"a: b\"\n- \"x #y\"\n- \"line\\nbreak\"\n- plain text\n- \"0755\"\n- =\n- <<\nempty: {}\n"
        );
        let docs = crate::yaml::parse_documents(&text, crate::yaml::Limits::default()).unwrap();
        assert_eq!(docs[0].root.to_json(), v);
    }
}
