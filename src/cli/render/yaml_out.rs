//! YAML for JSON values ([`kpol::yaml::emit`]), shaped like sigs.k8s.io/yaml output: keys
//! sorted, two-space indent, list items at their parent's indent, strings plain when unambiguous and
//! double-quoted (JSON escapes, valid YAML for any character: `kpol::yaml::double_quoted`)
//! otherwise.

use serde_json::Value;

/// The value as a YAML document (no `---`).
pub fn to_yaml(v: &Value) -> String {
    let style = kpol::yaml::emit::Style {
        sort_keys: true,
        key: &scalar_str,
        scalar: &inline,
    };
    kpol::yaml::emit::block(v, &style)
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
