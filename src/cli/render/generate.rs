//! `kpol generate`'s output (its model is in src/cli/generate.rs): the generated resources
//! as one YAML stream, each after a comment naming the policy, rule and trigger, or as JSON;
//! and the YAML of one generated resource, which `-o DIR` writes too. Its findings' lines on
//! standard error are `kpol check`'s concise ones (src/cli/command_report.rs).

use serde_json::Value;

use crate::cli::generate::{Item, Output, Trigger};

/// The YAML stream of every generated resource, in order.
pub fn yaml(out: &Output) -> String {
    let mut text = String::new();
    for item in &out.generated {
        text.push_str("---\n");
        text.push_str(&header(item));
        text.push_str(&resource_yaml(&item.resource));
    }
    text
}

/// The whole output as pretty JSON, with a final newline.
pub fn json(out: &Output) -> std::io::Result<String> {
    let text = serde_json::to_string_pretty(out).map_err(std::io::Error::other)?;
    Ok(text + "\n")
}

/// The comment line before a generated resource.
pub fn header(item: &Item) -> String {
    format!(
        "# policy {}, rule {}, trigger {} {} ({}:{}){}\n",
        item.policy,
        item.rule,
        item.trigger.kind,
        trigger_name(&item.trigger),
        item.trigger.file,
        item.trigger.line,
        if item.synchronize {
            ", synchronize: true"
        } else {
            ""
        }
    )
}

fn trigger_name(t: &Trigger) -> String {
    if t.namespace.is_empty() {
        t.name.clone()
    } else {
        format!("{}/{}", t.namespace, t.name)
    }
}

/// A generated resource as a YAML document body (no `---`), ending with a newline: keys in
/// their own order, strings quoted only when plain style would read back as something else
/// ([`kpol::yaml::emit`]).
pub fn resource_yaml(v: &Value) -> String {
    let style = kpol::yaml::emit::Style {
        sort_keys: false,
        key: &quote,
        scalar: &scalar,
    };
    kpol::yaml::emit::block(v, &style)
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
    match kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()) {
        Ok(docs) => {
            docs.len() == 1 && matches!(&docs[0].root.value, kpol::yaml::Value::Str(v) if v == s)
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
        let text = resource_yaml(&v);
        assert_eq!(
            text,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: \"true\"\n    b: \"\"\ndata:\n  \"n\": \"4\"\n  list:\n  - k: 1\n    m:\n      z: null\n  - \"- dash\"\n  - []\ntricky:\n- \"1_000\"\n- 1:20\n- \"0x1F\"\n- \"Yes\"\n- \"~\"\n- \"a: b\"\n- \"x #y\"\n- \"line\\nbreak\"\n- plain text\n- \"0755\"\n- =\n- <<\nempty: {}\n"
        );
        let docs = kpol::yaml::parse_documents(&text, kpol::yaml::Limits::default()).unwrap();
        assert_eq!(docs[0].root.to_json(), v);
    }
}
