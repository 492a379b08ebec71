//! A small YAML writer for JSON values, shaped like sigs.k8s.io/yaml output: keys sorted,
//! two-space indent, list items at their parent's indent, strings plain when unambiguous and
//! double-quoted (JSON escapes, valid YAML for any character: `kpol::yaml::double_quoted`)
//! otherwise.

use std::fmt::Write as _;

use serde_json::Value;

/// The value as a YAML document (no `---`).
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for k in keys {
                let Some(child) = m.get(k) else { continue };
                let _ = write!(out, "{pad}{}:", scalar_str(k));
                value_after_key(child, indent, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                let _ = write!(out, "{pad}-");
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first key goes on the dash line, the rest under it.
                        let mut text = String::new();
                        block(item, indent + 2, &mut text);
                        out.push(' ');
                        out.push_str(text.get(indent + 2..).unwrap_or(&text));
                    }
                    Value::Array(b) if !b.is_empty() => {
                        out.push('\n');
                        block(item, indent + 2, out);
                    }
                    _ => {
                        let _ = writeln!(out, " {}", inline(item));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", inline(other));
        }
    }
}

fn value_after_key(child: &Value, indent: usize, out: &mut String) {
    match child {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            block(child, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            block(child, indent, out);
        }
        _ => {
            let _ = writeln!(out, " {}", inline(child));
        }
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_str(s),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}

/// A string as a plain scalar when it reads back as the same string, else double-quoted.
fn scalar_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " -_./'()".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && !s.ends_with(' ')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        s.to_owned()
    } else {
        kpol::yaml::double_quoted(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_keys_and_sigs_yaml_lists() {
        let v = serde_json::json!({
            "b": [{"y": 1, "x": "a: b"}, "on"],
            "a": {"n": null, "e": []},
        });
        assert_eq!(
            to_yaml(&v),
            "a:\n  e: []\n  \"n\": null\nb:\n- x: \"a: b\"\n  \"y\": 1\n- \"on\"\n"
        );
    }
}
